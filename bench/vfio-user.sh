#!/usr/bin/env bash
# The vfio-user transport's speed, host side: a 4-byte region read of the served adapter's
# SLI_INTF (the emulated OneConnect device, as `ocetool emulator serve` serves it) from a host-side
# client, against a bare Unix-socket ping-pong of the same message sizes, in one run, first
# unpinned, then with both threads pinned to one CPU (taskset -c 0), as the prototype measured
# (recipes/vfio-user-qemu.md §4); the transport's test device is read too. The guest side (a
# register read of the adapter as the guest sees it) is the guest-bar-read line of
# tests/emulator-guest/run.sh.
# Usage: bench/vfio-user.sh        prints criterion's estimates and the ratios
set -euo pipefail
cd "$(dirname "$0")/.."
cargo bench --locked -p oce-emulator-serve --bench region_read --no-run -q 2>/dev/null
run() {
  "$@" cargo bench --locked -q -p oce-emulator-serve --bench region_read -- --noplot 2>/dev/null |
    awk '/^[a-z_0-9]+ +time:/ {print $1, $3, $4} /^[a-z_0-9]+$/ {name=$1} /^ +time:/ {print name, $2, $3}' |
    tr -d '['
}
ratio() {
  awk '{v=$2; if ($3=="ns") v/=1000; if ($3=="ms") v*=1000; t[$1]=v}
       END {p=t["unix_socket_ping_pong_32_36_bytes"]; r=t["region_read_4_bytes_adapter_sli_intf"];
            printf "  ping-pong %.1f us, adapter region read %.1f us: %.2fx\n", p, r, r/p}'
}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
echo "vfio-user transport, $(nproc) CPUs, $(uname -r), $(rustc --version)"
echo "unpinned:"; run env | tee "$W/unpinned" | sed 's/^/  /'; ratio <"$W/unpinned"
echo "pinned to CPU 0:"; run taskset -c 0 | tee "$W/pinned" | sed 's/^/  /'; ratio <"$W/pinned"
