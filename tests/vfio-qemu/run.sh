#!/usr/bin/env bash
# Real-kernel test of ocetool's VFIO layer (recipes/vfio-qemu.md, design.md §5 and §8).
#
# Boots a Debian generic kernel under QEMU (TCG, q35, an emulated Intel IOMMU) with QEMU's `edu`
# device and an `e1000`, and runs the project's own code inside the guest:
#   - oce-pci's guest tests (pci/tests/vfio_guest.rs): edu through VfioFunction (config space, the
#     mapped BAR, DMA through the IOMMU), e1000 handed from the e1000 driver to vfio-pci and back,
#     and a SIGTERM in the middle of a command;
#   - sysfs afterwards: e1000 bound to e1000 again, edu unbound as it was found;
#   - `ocetool list --all --json`: sees both devices with the right drivers;
#   - `ocetool --device <e1000> profiles`: refused without --unbind (exit 4); `query` without
#     --unbind answers from the kernel (the ethtool ioctl on the real driver); with --unbind it
#     reaches the mailbox through VfioFunction, fails there (an e1000 is no OneConnect), and gives
#     the e1000 back to its driver.
# QEMU is the sid build every guest test uses (tests/qemu/get-qemu.sh); the guest helpers come from
# tests/qemu/guest.sh. Nothing touches the host's PCI devices; only apt-get needs root.
#
# Usage: tests/vfio-qemu/run.sh            (env: VFIO_QEMU_WORK=DIR keeps the work folder,
#                                           KERNEL_META=linux-image-amd64, QEMU_TIMEOUT=150)
# Ends with "vfio-qemu: N passed, M failed"; exits non-zero on any failure. Every check has an ID
# the host expects: a check that is missing from the guest's output (a guest that crashed, hung or
# never got that far) counts as failed, and a guest test counts as passed only when its own
# harness reports exactly one test run by that exact name, and passed.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
# host_check and qemu_summary (counting by ID) from the shared guest tooling.
. "$REPO/tests/qemu/lib.sh"
KERNEL_META=${KERNEL_META:-linux-image-amd64}   # generic: the cloud kernel has no e1000 module
QEMU_TIMEOUT=${QEMU_TIMEOUT:-150}
TARGET=x86_64-unknown-linux-gnu
T0=$(date +%s)
say() { echo "vfio-qemu: $* ($(( $(date +%s) - T0 ))s)"; }

# The guest tests of pci/tests/vfio_guest.rs, each run by its exact name.
GUEST_TESTS="edu_config_bar_and_dma_through_vfio e1000_hand_off_and_back sigterm_mid_command_restores_e1000"
# Every check ID the run must report as passed: the guest tests, then the guest's own checks, then
# the host's checks of the guest's `ocetool list` output. Armed at once (qemu_expect, qemu_exit):
# a setup step that fails from here on still ends with the summary line, every check failed.
EXPECTED_CHECKS="$GUEST_TESTS sysfs-e1000-rebound sysfs-edu-unbound cli-not-oneconnect cli-no-unbind \
  cli-kernel-query cli-unbind list-edu list-e1000"
qemu_expect vfio-qemu "$EXPECTED_CHECKS"
if [ -n "${VFIO_QEMU_WORK:-}" ]; then
  WORK=$VFIO_QEMU_WORK; mkdir -p "$WORK"
  trap qemu_exit EXIT
else
  WORK=$(mktemp -d /tmp/ocetool-vfio-qemu.XXXXXX)
  trap 'qemu_exit "$WORK"' EXIT
fi

# 1. Host packages.
need=()
for p in busybox-static cpio kmod xz-utils zstd jq; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  say "installing ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# QEMU: the same sid build every guest test uses (tests/qemu/get-qemu.sh, cached).
QEMU=$(bash "$REPO/tests/qemu/get-qemu.sh")

# 2. The guest kernel: resolve the meta package to today's concrete package (names change with
#    every ABI bump), download and unpack it; never installed.
resolve_kernel() { apt-cache depends "$KERNEL_META" 2>/dev/null | awk '/Depends: linux-image-/{print $2; exit}'; }
# (As root, apt warns that its _apt user cannot write here: harmless, so shown only on failure.)
download_kernel() { (cd "$WORK" && apt-get download -qq "$KPKG" 2>"$WORK/apt.err") || { cat "$WORK/apt.err"; false; }; }
KPKG=$(resolve_kernel)
if [ ! -d "$WORK/kpkg/lib/modules" ]; then
  # Fresh package lists when the meta package is unknown or the concrete package left the mirror.
  if [ -z "$KPKG" ] || ! download_kernel; then
    apt-get update -qq
    KPKG=$(resolve_kernel)
    [ -n "$KPKG" ] || { echo "vfio-qemu: cannot resolve $KERNEL_META"; exit 2; }
    download_kernel
  fi
  say "unpacking $KPKG"
  (cd "$WORK" && dpkg -x "${KPKG}"_*.deb kpkg && rm -f "${KPKG}"_*.deb)
fi
KVER=$(ls "$WORK/kpkg/lib/modules")
VMLINUZ=$WORK/kpkg/boot/vmlinuz-$KVER
depmod -b "$WORK/kpkg" "$KVER"
# vfio stack, then e1000 (order from modprobe, as the module sets differ between kernels).
MODS=$(for m in vfio-pci vfio_iommu_type1 e1000; do modprobe -d "$WORK/kpkg" -S "$KVER" --show-depends "$m"; done \
  | awk '$1=="insmod"{print $2}' | awk '!seen[$0]++')

# 3. The guest programs, static glibc binaries (pci-driver does not build for musl). ocetool is
#    built with the test feature `unsafe-any-device`, so it honours OCETOOL_UNSAFE_ANY_DEVICE=1
#    (below: the e1000 stands in for an adapter); no other build does.
say "building the guest test and ocetool"
export RUSTFLAGS="-C target-feature=+crt-static"
cd "$REPO"
# One cargo invocation for both, so dependencies are built once; dev profile without debug info
# (the binaries are stripped anyway): the least CPU on a 2-core machine.
CARGO_PROFILE_DEV_DEBUG=0 cargo build --locked -p oce-pci --test vfio_guest -p ocetool --bin ocetool \
  --features ocetool/unsafe-any-device --target $TARGET \
  --message-format=json-render-diagnostics \
  | jq -r 'select(.reason=="compiler-artifact" and .executable!=null) | .target.name + " " + .executable' \
  >"$WORK/bins"
TEST_BIN=$(awk '$1=="vfio_guest"{print $2}' "$WORK/bins" | tail -1)
OCETOOL_BIN=$(awk '$1=="ocetool"{print $2}' "$WORK/bins" | tail -1)
unset RUSTFLAGS
[ -x "$TEST_BIN" ] && [ -x "$OCETOOL_BIN" ] || { echo "vfio-qemu: build produced no binaries"; exit 2; }

# 4. The initramfs: busybox, the modules, the two programs and /init.
ROOT=$WORK/rootfs
rm -rf "$ROOT" && mkdir -p "$ROOT"/{bin,proc,sys,dev,tmp,lib/modules}
cp /bin/busybox "$ROOT/bin/busybox"
i=0
for m in $MODS; do
  i=$((i + 1)); base=$(basename "$m"); base=${base%.xz}; base=${base%.zst}
  out=$ROOT/lib/modules/$(printf %02d "$i")-$base
  case $m in
    *.xz) xz -dc "$m" >"$out" ;;
    *.zst) zstd -dcq "$m" >"$out" ;;
    *) cp "$m" "$out" ;;
  esac
done
cp "$REPO/tests/qemu/guest.sh" "$ROOT/lib/guest.sh"
cp "$TEST_BIN" "$ROOT/bin/vfio_guest"
cp "$OCETOOL_BIN" "$ROOT/bin/ocetool"
strip "$ROOT/bin/vfio_guest" "$ROOT/bin/ocetool"
echo "$GUEST_TESTS" >"$ROOT/guest-tests"
cat >"$ROOT/init" <<'EOF'
#!/bin/busybox sh
. /lib/guest.sh
EDU=$(find_dev 0x1234 0x11e8); E1000=$(find_dev 0x8086 0x100e)
echo "GUEST: kernel $(uname -r); edu=$EDU ($(drv "$EDU")), e1000=$E1000 ($(drv "$E1000"))"
if [ -z "$EDU" ] || [ -z "$E1000" ] || [ "$(drv "$E1000")" != e1000 ]; then
  check "setup guest setup: edu and e1000 present, e1000 on its driver" 1
else
  export OCE_EDU=$EDU OCE_E1000=$E1000
  # A name that matches no test exits 0 with "0 passed": only the harness's own count of exactly
  # one test run and passed proves that this test ran.
  for t in $(cat /guest-tests); do
    /bin/vfio_guest --ignored --exact "$t" --test-threads=1 --nocapture >/tmp/test.out 2>&1; RC=$?; cat /tmp/test.out
    [ "$RC" = 0 ] && grep -q '^test result: ok\. 1 passed; 0 failed;' /tmp/test.out
    check "$t (exit $RC; the harness must report it as the 1 test run and passed)" $? \
      "expected exit 0 and 'test result: ok. 1 passed; 0 failed;'; exit $RC, last lines: $(tail -4 /tmp/test.out | tr '\n' '|')"
  done
  [ "$(drv "$E1000")" = e1000 ]
  check "sysfs-e1000-rebound sysfs afterwards: $E1000 bound to e1000" $? "expected e1000; saw $(drv "$E1000")"
  [ "$(drv "$EDU")" = none ]
  check "sysfs-edu-unbound sysfs afterwards: $EDU unbound, as found" $? "expected none; saw $(drv "$EDU")"
  # Checked on the host with jq: the JSON goes out on the serial console between markers.
  echo "GUEST-LIST-BEGIN"; ocetool list --all --json; RC=$?; echo; echo "GUEST-LIST-END rc=$RC"
  echo "GUEST-ADDRESSES edu=$EDU e1000=$E1000"
  # The CLI's --device path. By default ocetool refuses a function that is not OneConnect before
  # touching its binding (exit 3, e1000 untouched). With the test escape OCETOOL_UNSAFE_ANY_DEVICE=1
  # it goes through the hand-off: refused without --unbind (exit 4); with it, the function moves to
  # vfio-pci, VfioFunction opens it, the mailbox layer rejects it (SLI_INTF, exit 1), and e1000 gets
  # it back.
  ocetool --device "$E1000" --unbind --yes query 2>/tmp/err; RC=$?; cat /tmp/err
  [ "$RC" = 3 ] && grep -q "not an Emulex OneConnect function" /tmp/err && [ "$(drv "$E1000")" = e1000 ]
  check "cli-not-oneconnect ocetool --device e1000 --unbind query: refused as not OneConnect, exit 3 (was $RC), e1000 untouched" $? \
    "expected exit 3, 'not an Emulex OneConnect function', e1000 bound; exit $RC, driver $(drv "$E1000"), stderr: $(head -2 /tmp/err | tr '\n' '|')"
  OCETOOL_UNSAFE_ANY_DEVICE=1 ocetool --device "$E1000" profiles; RC=$?
  [ "$RC" = 4 ] && [ "$(drv "$E1000")" = e1000 ]
  check "cli-no-unbind ocetool --device e1000 profiles without --unbind: exit 4 (was $RC)" $? \
    "expected exit 4 and e1000 bound; exit $RC, driver $(drv "$E1000")"
  # query without --unbind answers from the kernel while the driver holds the function: the
  # ETHTOOL_GDRVINFO ioctl reaches the real e1000 driver (which reports no firmware version).
  OCETOOL_UNSAFE_ANY_DEVICE=1 ocetool --device "$E1000" --json query >/tmp/kq.json; RC=$?; cat /tmp/kq.json
  [ "$RC" = 0 ] && grep -q '"source": "kernel"' /tmp/kq.json && grep -q 'reports no firmware version' /tmp/kq.json \
    && [ "$(drv "$E1000")" = e1000 ]
  check "cli-kernel-query ocetool --device e1000 query: answered from the kernel (source kernel, the driver asked), exit 0 (was $RC)" $? \
    "expected exit 0, source kernel, 'reports no firmware version', e1000 bound; exit $RC, driver $(drv "$E1000"), output: $(tr -d '\n' </tmp/kq.json | tr -s ' ' | cut -c1-250)"
  OCETOOL_UNSAFE_ANY_DEVICE=1 ocetool --device "$E1000" --unbind --yes query 2>/tmp/err; RC=$?; cat /tmp/err
  [ "$RC" = 1 ] && grep -q SLI_INTF /tmp/err && [ "$(drv "$E1000")" = e1000 ]
  check "cli-unbind ocetool --device e1000 --unbind query: reached the mailbox (SLI_INTF), exit 1 (was $RC), e1000 bound again" $? \
    "expected exit 1 naming SLI_INTF, e1000 bound again; exit $RC, driver $(drv "$E1000"), stderr: $(head -2 /tmp/err | tr '\n' '|')"
fi
echo "GUEST-DONE"
poweroff -f
EOF
chmod +x "$ROOT/init"
(cd "$ROOT" && find . | cpio -o -H newc --quiet | gzip -1 >"$WORK/initramfs.cpio.gz")
say "kernel $KPKG, initramfs $(( $(stat -c %s "$WORK/initramfs.cpio.gz") / 1024 )) KiB; booting"

# 5. Boot. TCG always: /dev/kvm may exist but be unusable (recipe pitfall 2). Each device on the
#    root bus gets its own IOMMU group.
T1=$(date +%s)
QEMU_BOOT_LOGS=$WORK/serial.log   # qemu_summary reads a kernel panic from it
set +e
timeout "$QEMU_TIMEOUT" "$QEMU" -accel tcg -machine q35 -cpu max -smp 1 -m 512M \
  -device intel-iommu -device edu -device e1000,romfile= \
  -nographic -nodefaults -no-reboot -serial stdio -display none \
  -kernel "$VMLINUZ" -initrd "$WORK/initramfs.cpio.gz" \
  -append "$(qemu_cmdline intel_iommu=on)" </dev/null \
  | tr -d '\r' | tee "$WORK/serial.log"
QRC=${PIPESTATUS[0]}
echo >>"$WORK/serial.log"   # a guest cut off mid-line must not swallow the host's first check line
say "qemu exited with $QRC after $(( $(date +%s) - T1 ))s"
# The host's checks run under set +e: a grep that finds nothing fails its check, not the script.

# 6. `ocetool list --all --json` from the guest: both devices, each with the right driver.
read -r EDU E1000 < <(sed -n 's/^GUEST-ADDRESSES edu=\(\S*\) e1000=\(\S*\)$/\1 \2/p' "$WORK/serial.log") || true
sed -n '/^GUEST-LIST-BEGIN$/,/^GUEST-LIST-END/{/^GUEST-LIST/d;p}' "$WORK/serial.log" >"$WORK/list.json"
LIST_RC=$(sed -n 's/^GUEST-LIST-END rc=//p' "$WORK/serial.log")
driver_in_list() {
  jq -e --arg a "$1" --arg d "$2" \
    '[.other_functions[] | select(.address == $a) | .driver] == [if $d == "none" then null else $d end]' \
    "$WORK/list.json" >/dev/null 2>&1
}
listed() { jq -c --arg a "$1" '[.other_functions[] | select(.address == $a) | {address, driver}]' "$WORK/list.json" 2>&1 | cut -c1-200; }
R=0; { [ "$LIST_RC" = 0 ] && [ -n "${EDU:-}" ] && driver_in_list "$EDU" none; } || R=1
host_check "$WORK/serial.log" "list-edu ocetool list --all --json: edu ${EDU:-?}, no driver" $R \
  "expected exit 0 and edu ${EDU:-?} with driver null; exit ${LIST_RC:-?}, listed: $(listed "${EDU:-}")"
R=0; { [ "$LIST_RC" = 0 ] && [ -n "${E1000:-}" ] && driver_in_list "$E1000" e1000; } || R=1
host_check "$WORK/serial.log" "list-e1000 ocetool list --all --json: e1000 ${E1000:-?} on e1000" $R \
  "expected exit 0 and e1000 ${E1000:-?} with driver e1000; exit ${LIST_RC:-?}, listed: $(listed "${E1000:-}")"
grep '^GUEST-CHECK [A-Z]* list-' "$WORK/serial.log"

# 7. Count, by ID (qemu_summary, tests/qemu/lib.sh): each expected check passes only with exactly
#    one PASS line and no FAIL line; a check the output lacks (the guest died, hung, or never
#    reached it) is a failure, and so is any FAIL line outside the expected list (a guest setup
#    failure) and a guest that did not finish.
say "done"
qemu_summary vfio-qemu "$WORK/serial.log" "$EXPECTED_CHECKS"
