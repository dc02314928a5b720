#!/usr/bin/env bash
# bench/datapath.sh — two TCG guests talking over three kinds of wire, in one run
# (docs/performance.md, "The datapath between two guests"):
#   oce14000    the Debian kernel's be2net in each guest on its own emulated OCe14000 (vfio-user,
#               `ocetool emulator serve`, release build), the two ports cabled with --wire/--wire-peer
#   e1000       QEMU's e1000 in each guest, the two joined by -netdev dgram (unix datagrams)
#   virtio-net  QEMU's virtio-net-pci in each guest, joined the same way
# Each pair boots the same kernel and initramfs (tests/datapath-qemu/init-bench.sh), -smp 1, no
# vIOMMU, and measures, from 10.0.0.1: the ping round trip (50 pings, 0.1 s apart; the average)
# and the time to send BENCH_MB MiB (default 32) over TCP to 10.0.0.2 (busybox nc; the receiver
# counts the bytes). Prints the three pairs side by side, then the emulated pair's ratios to the
# other two.
# Usage: bash bench/datapath.sh   (KEEP_WORK=DIR keeps the logs; BENCH_MB=N)
set -euo pipefail
. "$(dirname "$0")/../tests/qemu/lib.sh"
qemu_init datapath-bench
QEMU_TIMEOUT=${QEMU_TIMEOUT:-600}
export QEMU_VIOMMU=off
MB=${BENCH_MB:-32}
HERE=$REPO/tests/datapath-qemu
. "$HERE/ctl.sh"

qemu_say "building ocetool (release)"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$REPO/target/bench}
(cd "$REPO" && cargo build --release --locked -q -p ocetool)
OCETOOL=$CARGO_TARGET_DIR/release/ocetool
ROOT=$WORK/root
qemu_debs "$ROOT" ethtool iproute2 iputils-ping libc6 libmnl0 libbpf1 libelf1 libbsd0 libcap2 zlib1g libmd0 \
  libidn2-0 libunistring2
rm -rf "$ROOT/usr/share" "$ROOT/usr/lib/x86_64-linux-gnu/gconv" "$ROOT/etc/network"
qemu_libs_resolve "$ROOT" sbin/ethtool bin/ip bin/ping || exit 2
qemu_initramfs "$WORK/bench.cpio.gz" "$HERE/init-bench.sh" --modules "be2net e1000 virtio_pci virtio_net" --tree "$ROOT" \
  --file "$HERE/common.sh:/lib/common.sh"
host_action() { return 2; }

# pair KIND: boots the two guests of KIND, answers their barriers until both end; the sender's
# log is $WORK/KIND-1.log.
pair() {
  local kind=$1 n me peer dev servers=()
  SYNC_WHO=()
  for n in 1 2; do
    me=10.0.0.$n; peer=10.0.0.$((3 - n))
    case $kind in
      oce14000)
        "$OCETOOL" --device "emu:$WORK/emu-$n" emulator init >/dev/null
        qemu_serve_at "$WORK/oce-$n.sock" "$WORK/server-$n.log" "$OCETOOL" --device "emu:$WORK/emu-$n" \
          emulator serve --socket "$WORK/oce-$n.sock" --wire "$WORK/oce-$n.wire" --wire-peer "$WORK/oce-$((3 - n)).wire"
        servers+=("$SERVED_PID")
        mapfile -t dev < <(qemu_vfu_args "$WORK/oce-$n.sock") ;;
      e1000 | virtio-net)
        local model=e1000; [ "$kind" = e1000 ] || model=virtio-net-pci
        dev=(-netdev "dgram,id=n0,local.type=unix,local.path=$WORK/$kind-$n.wire,remote.type=unix,remote.path=$WORK/$kind-$((3 - n)).wire"
          -device "$model,netdev=n0,mac=52:54:00:0b:00:0$n") ;;
    esac
    ctl_channel "$kind-$n"
    qemu_start "$WORK/$kind-$n.log" "$WORK/bench.cpio.gz" "dp.me=$me dp.peer=$peer dp.mb=$MB" -- "${dev[@]}" "${CTL_ARGS[@]}"
  done
  ctl_run >>"$WORK/ctl.log" 2>&1
  qemu_wait "$WORK/$kind-1.log"; qemu_wait "$WORK/$kind-2.log"
  for n in "${servers[@]}"; do wait "$n" 2>/dev/null || true; done
}

value() { sed -n "s/^GUEST-VALUE $2=//p" "$WORK/$1.log" | tail -1; }
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
declare -A MBPS=() RTT=()
for kind in oce14000 e1000 virtio-net; do
  qemu_say "pair $kind"
  pair "$kind"
  secs=$(value "$kind-1" tcp_seconds); bytes=$(value "$kind-2" tcp_bytes)
  RTT[$kind]=$(value "$kind-1" ping | sed -n 's|.*rtt min/avg/max/mdev = [0-9.]*/\([0-9.]*\)/.*|\1|p')
  if [ "${bytes:-0}" = $((MB * 1048576)) ] && [ -n "$secs" ]; then
    MBPS[$kind]=$(awk "BEGIN{printf \"%.3f\", $MB * 1.048576 / $secs}")
  else
    MBPS[$kind]=; echo "datapath-bench: $kind: $MB MiB not received whole (bytes ${bytes:-none}, ${secs:-no} s)"
  fi
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "n/a"; else printf "%.2f", a / b }'; }
echo
echo "datapath-bench: $MB MiB over TCP and 50 pings, 10.0.0.1 -> 10.0.0.2, TCG -smp 1 guests; load average $LOAD0 before, $LOAD1 after"
printf '%-12s %14s %16s\n' pair "TCP (MB/s)" "ping avg (ms)"
for kind in oce14000 e1000 virtio-net; do
  printf '%-12s %14s %16s\n' "$kind" "${MBPS[$kind]:-failed}" "${RTT[$kind]:-failed}"
done
echo "oce14000 / e1000:      throughput $(ratio "${MBPS[oce14000]}" "${MBPS[e1000]}"), round trip $(ratio "${RTT[oce14000]}" "${RTT[e1000]}")"
echo "oce14000 / virtio-net: throughput $(ratio "${MBPS[oce14000]}" "${MBPS[virtio-net]}"), round trip $(ratio "${RTT[oce14000]}" "${RTT[virtio-net]}")"
[ -n "${MBPS[oce14000]}" ] && [ -n "${MBPS[e1000]}" ] && [ -n "${MBPS[virtio-net]}" ]
