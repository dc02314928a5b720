#!/usr/bin/env bash
# The shared guest tooling, end to end, on the transport's own test device
# (oce_emulator_serve::testing, 1234:0ce0): sid QEMU with vfio-user-pci, the Debian generic kernel,
# intel-iommu with caching-mode, RAM from a memfd. In the guest:
#   - the device is in sysfs with its IDs and BAR0 at 4 KiB, in an IOMMU group of its own;
#   - its config space reads back through sysfs; a BAR0 register round trip through /dev/mem;
#   - bound to vfio-pci, ocetool's VFIO backend opens it and reads BAR0 (guest-bar-read: the
#     register read as the guest sees it, timed);
#   - the server logs the session's end when the guest powers off.
# Usage: tests/qemu/smoke.sh     (KEEP_WORK=DIR keeps the work folder)
# Ends with "qemu-smoke: N passed, M failed"; exits non-zero on any failure.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
CHECKS="device-present bar0-size iommu-group config-read bar0-round-trip vfio-bar-read server-saw-client-go"
qemu_init qemu-smoke "$CHECKS"

qemu_say "building the test device server and the guest probe"
(cd "$REPO" && cargo build --locked -q -p oce-emulator-serve --example test-device)
SERVER=$HOST_TARGET/debug/examples/test-device
PROBE=$(qemu_guest_build -p oce-bench-baselines --bin guest-bar-read | awk '$1=="guest-bar-read"{print $2}' | tail -1)
[ -x "$PROBE" ] || { echo "qemu-smoke: no guest probe built"; exit 2; }

cat >"$WORK/init" <<'INIT'
#!/bin/busybox sh
. /lib/guest.sh
BDF=$(find_dev 0x1234 0x0ce0)
echo "GUEST: kernel $(uname -r), test device at ${BDF:-nowhere}"
[ -n "$BDF" ]; check "device-present the served device is on the guest's PCI bus (1234:0ce0)" $? "expected 0x1234:0x0ce0; saw $(pci_ids)"
if [ -n "$BDF" ]; then
  D=/sys/bus/pci/devices/$BDF
  set -- $(head -1 "$D/resource")
  [ $(( $2 - $1 + 1 )) = 4096 ]; check "bar0-size BAR0 is 4 KiB ($1..$2)" $? "expected 4096 bytes; saw $(( $2 - $1 + 1 ))"
  [ -e "$D/iommu_group" ]
  check "iommu-group it has an IOMMU group ($(basename "$(readlink "$D/iommu_group")"))" $? "expected $D/iommu_group; groups: $(ls /sys/kernel/iommu_groups | tr '\n' ' ')"
  ID=$(od -An -tx4 -N4 "$D/config" | tr -d ' ')
  [ "$ID" = 0ce01234 ]; check "config-read config space reads through sysfs" $? "expected dword 0 0ce01234; read '$ID'"
  echo 1 >"$D/enable"
  devmem $(( $1 )) 32 0x5a5aa5a5; V=$(devmem $(( $1 )) 32)
  [ "$V" = 0x5A5AA5A5 ]; check "bar0-round-trip BAR0 register round trip through /dev/mem (read $V)" $? "expected 0x5A5AA5A5; read $V"
  echo 0 >"$D/enable"
  # (vfio-pci resets the function when it opens it, which clears ECHO: the value is not checked.)
  OUT=$(to_vfio "$BDF" && guest-bar-read "$BDF" 0 2000 2>&1); rc=$?; echo "$OUT"
  check "vfio-bar-read ocetool's VFIO backend reads BAR0 through vfio-pci" $rc \
    "expected exit 0; driver $(drv "$BDF"), exit $rc: $OUT"
fi
finish
INIT
qemu_initramfs "$WORK/initramfs.cpio.gz" "$WORK/init" --modules "vfio-pci vfio_iommu_type1" --bin "$PROBE"
qemu_serve "$WORK/server.log" "$SERVER" "$SOCK"
qemu_say "kernel $KVER; booting"
qemu_boot "$WORK/initramfs.cpio.gz" "$WORK/serial.log"
set +e   # the host's checks: a grep that finds nothing fails its check, not the script
grep -E '^(GUEST|guest-bar-read)' "$WORK/serial.log"
wait "$SERVER_PID"
cat "$WORK/server.log"
R=0; grep -q 'the client disconnected' "$WORK/server.log" || R=1
host_check "$WORK/serial.log" "server-saw-client-go the server saw the client go" $R \
  "expected 'the client disconnected'; its last lines: $(tail -3 "$WORK/server.log" | tr '\n' '|')"
qemu_summary qemu-smoke "$WORK/serial.log" "$CHECKS"
