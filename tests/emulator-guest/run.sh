#!/usr/bin/env bash
# ocetool inside a guest, through the real kernel, against the emulated adapter served over
# vfio-user: `ocetool --device emu:DIR emulator serve --socket S` on the host, the Debian generic
# kernel under TCG (q35, intel-iommu with caching-mode, RAM from a memfd), and in the guest:
#   - the device as the guest's PCI core sees it (sysfs): 10df:0720, a PCI Express endpoint (4 KiB
#     config space, the Express capability with device/port type 0), MSI-X with 32 vectors, BAR0
#     16 KiB and BAR4 64 KiB;
#   - the project's own static ocetool through its VFIO backend: `list --json` shows the adapter
#     usable; `query --json` works; `set-profile roce --yes`, then `reset --yes`, gives
#     `roce_enabled: true`; `fw update` of an image from `ocetool fw build` flashes it
#     (`changed: true`) and a second run is `changed: false`; before them, guest-bar-read times a
#     register read (SLI_INTF) as the guest sees it.
# On the host, after the guest is gone: `ocetool --device emu:DIR query --json` equals the guest's
# last query field by field (but `device`, the PCI address in the guest and the directory on the
# host, and `handoff`, which only a real PCI function has), and shows the new firmware stored and
# RoCE on; the server ended because the VM went.
# The image's version is the factory one with its last number raised, and ocetool's own plan
# (`fw update --dry-run` on the fresh state) must call it an upgrade before the guest boots.
# Every JSON document goes out on the serial console between markers and is checked here with jq.
# Usage: tests/emulator-guest/run.sh   (KEEP_WORK=DIR keeps the work folder)
# Ends with "emulator-guest: N passed, M failed"; checks are counted by ID (a missing one fails,
# and so does a guest that never reached its checks); exits non-zero on any failure.
set -euo pipefail
. "$(dirname "$0")/../qemu/lib.sh"
CHECKS="version-newer adapter-present pcie-endpoint msix-32 bar-sizes bar-read-timed list-usable query-ok set-profile-roce
  fw-update-flashes fw-update-unchanged host-query-equals host-state-agrees server-ended"
qemu_init emulator-guest "$CHECKS"

qemu_say "building ocetool (host and static guest build)"
(cd "$REPO" && cargo build --locked -q -p ocetool)
HOST_OCETOOL=$HOST_TARGET/debug/ocetool
qemu_guest_build -p ocetool --bin ocetool -p oce-bench-baselines --bin guest-bar-read >"$WORK/bins"
GUEST_OCETOOL=$(awk '$1=="ocetool"{print $2}' "$WORK/bins" | tail -1)
PROBE=$(awk '$1=="guest-bar-read"{print $2}' "$WORK/bins" | tail -1)
[ -x "$GUEST_OCETOOL" ] && [ -x "$PROBE" ] || { echo "emulator-guest: no guest programs built"; exit 2; }

LOG=$WORK/serial.log
STATE=$WORK/emu
IMAGE=$WORK/new.ufi
: >"$LOG"
host() { "$HOST_OCETOOL" --device "emu:$STATE" "$@"; }
qemu_emulated_adapter "$HOST_OCETOOL" "$STATE" "$IMAGE"
R=0; host --json fw update "$IMAGE" --dry-run | jq -e '.version_change == "upgrade"' >/dev/null || R=1
host_check "$LOG.host" "version-newer ocetool's plan calls $NEW an upgrade of the factory $FACTORY" $R

cat >"$WORK/init" <<'INIT'
#!/bin/busybox sh
. /lib/guest.sh
BDF=$(find_dev 0x10df 0x0720)
echo "GUEST: kernel $(uname -r), adapter at ${BDF:-nowhere}"
[ -n "$BDF" ]; check "adapter-present the served adapter is on the guest's PCI bus (10df:0720)" $?
if [ -n "$BDF" ]; then
  D=/sys/bus/pci/devices/$BDF
  dmesg | grep "$BDF" | head -5
  byte() { od -An -tu1 -j "$1" -N1 "$D/config" | tr -d ' '; }
  cap() { # the offset of capability $1 in the list (PCI Local Bus 3.0 §6.7), or nothing
    at=$(byte 52); n=0
    while [ "${at:-0}" != 0 ] && [ $n -lt 16 ]; do
      [ "$(byte "$at")" = "$1" ] && { echo "$at"; return; }
      at=$(byte $((at + 1))); n=$((n + 1))
    done
  }
  EXP=$(cap 16); MSIX=$(cap 17); SIZE=$(wc -c <"$D/config")
  TYPE=none; [ -n "$EXP" ] && TYPE=$(( $(byte $((EXP + 2))) >> 4 ))
  [ "$SIZE" = 4096 ] && [ -n "$EXP" ] && [ "$TYPE" = 0 ]
  check "pcie-endpoint a PCI Express endpoint: config space $SIZE bytes, Express capability at ${EXP:-none}, type $TYPE" $?
  VECTORS=0; [ -n "$MSIX" ] && VECTORS=$(( (($(byte $((MSIX + 3))) << 8 | $(byte $((MSIX + 2)))) & 0x7ff) + 1 ))
  [ -n "$MSIX" ] && [ "$VECTORS" = 32 ]
  check "msix-32 MSI-X capability at ${MSIX:-none} with $VECTORS vectors" $?
  set -- $(sed -n 1p "$D/resource"); B0=$(( $2 - $1 + 1 ))
  set -- $(sed -n 5p "$D/resource"); B4=$(( $2 - $1 + 1 ))
  [ "$B0" = 16384 ] && [ "$B4" = 65536 ]; check "bar-sizes BAR0 $B0 bytes, BAR4 $B4 bytes" $?
  # A register read as the guest sees it (SLI_INTF, BAR0 + 0x58, through ocetool's VFIO backend):
  # guest load -> QEMU -> REGION_READ -> server -> reply (docs/performance.md).
  guest-bar-read "$BDF" 88 2000; check "bar-read-timed SLI_INTF read through vfio-pci, timed" $?
  export OCETOOL_DEVICE=$BDF
  doc list list
  doc query1 query
  doc set_profile set-profile roce --yes
  doc reset reset --yes
  doc query2 query
  doc fw_update1 fw update /new.ufi --yes
  doc fw_update2 fw update /new.ufi --yes
  doc query3 query
fi
finish
INIT
qemu_initramfs "$WORK/initramfs.cpio.gz" "$WORK/init" --modules "vfio-pci vfio_iommu_type1" \
  --bin "$GUEST_OCETOOL:ocetool" --bin "$PROBE" --file "$IMAGE:/new.ufi"
qemu_serve "$WORK/server.log" "$HOST_OCETOOL" -vv --device "emu:$STATE" emulator serve --socket "$SOCK"
qemu_say "kernel $KVER; booting"
qemu_boot "$WORK/initramfs.cpio.gz" "$LOG"
cat "$LOG.host" >>"$LOG"
SERVER_RC=0; wait "$SERVER_PID" || SERVER_RC=$?
grep -v '^ocetool: emulator event: ' "$WORK/server.log" || true
echo "emulator-guest: the server logged $(grep -c '^ocetool: emulator event: Command' "$WORK/server.log" || true) commands"

json() { qemu_json "$LOG" "$1"; }
rc() { qemu_rc "$LOG" "$1"; }
ok() { local check="$1 $2"; shift 2; qemu_ok "$LOG" "$check" "$@"; }
is_json() { [ "$(rc "$1")" = 0 ] && json "$1" | jq -e "$2"; }

ok list-usable "list: the adapter is usable" \
  is_json list '[.adapters[].functions[] | select(.device_id == "0x0720") | .usable] == [true]'
ok query-ok "query in the guest succeeds" is_json query1 '.chip == "skyhawk"'
R=0; { [ "$(rc set_profile)" = 0 ] && [ "$(rc reset)" = 0 ] && is_json query2 '.roce_enabled == true'; } >/dev/null || R=1
host_check "$LOG" "set-profile-roce set-profile roce, then reset: roce_enabled" $R
ok fw-update-flashes "fw update flashes the image" is_json fw_update1 '.changed == true'
ok fw-update-unchanged "a second fw update changes nothing" is_json fw_update2 '.changed == false'
# The host's view of the same state directory, after the guest is gone.
R=0; host --json query >"$WORK/host-query.json" || R=1
json query3 >"$WORK/guest-query.json"
[ "$R" = 0 ] && [ "$(rc query3)" = 0 ] && jq -S 'del(.device, .handoff)' "$WORK/host-query.json" >"$WORK/h" &&
  jq -S 'del(.device, .handoff)' "$WORK/guest-query.json" >"$WORK/g" && [ -s "$WORK/h" ] && diff -u "$WORK/g" "$WORK/h" || R=1
host_check "$LOG" "host-query-equals the host's query equals the guest's last one field by field (but device, handoff)" $R
ok host-state-agrees "the host sees $NEW stored and RoCE on" \
  jq -e --arg v "$NEW" '.firmware.stored == $v and .roce_enabled == true and .profile.next.roce == true' \
  "$WORK/host-query.json"
R=0; [ "$SERVER_RC" = 0 ] && grep -q 'until the VM disconnected' "$WORK/server.log" || R=1
host_check "$LOG" "server-ended the server ended with the VM (exit $SERVER_RC)" $R
grep -E '^(GUEST-CHECK|guest-bar-read)' "$LOG" || true
qemu_summary emulator-guest "$LOG" "$CHECKS"
