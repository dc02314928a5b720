#!/usr/bin/env bash
# ocetool inside a guest, through the real kernel, against the emulated adapter served over
# vfio-user: `ocetool --device emu:DIR emulator serve --socket S` on the host, the Debian generic
# kernel under TCG (q35, intel-iommu with caching-mode, RAM from a memfd), and in the guest:
#   - the device as the guest's PCI core sees it (sysfs): 10df:0720, a PCI Express endpoint (4 KiB
#     config space, the Express capability with device/port type 0), MSI-X with 32 vectors, BAR0
#     16 KiB and BAR4 64 KiB; the VPD as the guest kernel reads it (sysfs vpd);
#   - the project's own static ocetool through its VFIO backend: `list --json` shows the adapter
#     usable; `query --json` works; `set-profile roce --yes`, then `reset --yes`, gives
#     `roce_enabled: true`; `fw update` of an image from `ocetool fw build` flashes it
#     (`changed: true`) and a second run is `changed: false`; before them, guest-bar-read times a
#     register read (SLI_INTF) as the guest sees it, and the value it read must be the
#     documented SLI_INTF (emulator/src/assumptions/, design.md §6), as config space 0x58 says.
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
CHECKS="version-newer adapter-present pcie-endpoint msix-32 bar-sizes vpd-kernel bar-read-timed list-usable query-ok set-profile-roce
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
host_check "$LOG.host" "version-newer ocetool's plan calls $NEW an upgrade of the factory $FACTORY" $R \
  "expected version_change upgrade; the plan: $(host --json fw update "$IMAGE" --dry-run 2>&1 | jq -c '{version_change}' 2>&1)"

cat >"$WORK/init" <<'INIT'
#!/bin/busybox sh
. /lib/guest.sh
BDF=$(find_dev 0x10df 0x0720)
echo "GUEST: kernel $(uname -r), adapter at ${BDF:-nowhere}"
[ -n "$BDF" ]; check "adapter-present the served adapter is on the guest's PCI bus (10df:0720)" $? \
  "expected 0x10df:0x0720; saw $(pci_ids)"
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
  check "pcie-endpoint a PCI Express endpoint: config space $SIZE bytes, Express capability at ${EXP:-none}, type $TYPE" $? \
    "expected 4096 bytes, an Express capability (ID 16), type 0; saw $SIZE bytes, capability at ${EXP:-none}, type $TYPE"
  VECTORS=0; [ -n "$MSIX" ] && VECTORS=$(( (($(byte $((MSIX + 3))) << 8 | $(byte $((MSIX + 2)))) & 0x7ff) + 1 ))
  [ -n "$MSIX" ] && [ "$VECTORS" = 32 ]
  check "msix-32 MSI-X capability at ${MSIX:-none} with $VECTORS vectors" $? \
    "expected an MSI-X capability (ID 17) with 32 vectors; saw ${MSIX:-none}, $VECTORS vectors"
  set -- $(sed -n 1p "$D/resource"); B0=$(( $2 - $1 + 1 ))
  set -- $(sed -n 5p "$D/resource"); B4=$(( $2 - $1 + 1 ))
  [ "$B0" = 16384 ] && [ "$B4" = 65536 ]
  check "bar-sizes BAR0 $B0 bytes, BAR4 $B4 bytes" $? "expected BAR0 16384 and BAR4 65536 bytes; saw $B0 and $B4"
  # The VPD through the guest kernel's own reader (sysfs vpd: drivers/pci/vpd.c drives the
  # capability's address, F flag and data registers), the documented contents
  # (emulator/src/assumptions/vpd.rs); every byte but letters and digits (a keyword's length
  # byte included) becomes a space.
  VPD=$(tr -c 'A-Za-z0-9' ' ' <"$D/vpd" 2>&1)
  case "$VPD" in *"PN OCe14102"*"EC A"*"SN EMU"*"V0 emulated VPD"*) true ;; *) false ;; esac
  check "vpd-kernel the guest kernel reads the documented VPD through the capability" $? \
    "expected PN OCe14102, EC A, SN EMU..., V0 emulated VPD; saw: $(echo "$VPD" | cut -c1-200)"
  # A register read as the guest sees it (SLI_INTF, BAR0 + 0x58, through ocetool's VFIO backend):
  # guest load -> QEMU -> REGION_READ -> server -> reply (docs/performance.md). The value must be
  # the documented SLI_INTF (/etc/sli-intf, design.md §6) and what the guest kernel reads at
  # configuration space 0x58 (spec/protocol.md §1.3), a path that does not go through BAR0.
  SLI=$(cat /etc/sli-intf)
  CFG=0x$(od -An -tx4 -j88 -N4 "$D/config" | tr -d ' ')
  OUT=$(guest-bar-read "$BDF" 88 2000); rc=$?; echo "$OUT"
  BAR=$(echo "$OUT" | sed -n 's/.* reads \(0x[0-9a-f]*\);.*/\1/p')
  [ "$rc" = 0 ] && [ -n "$BAR" ] && [ ${#CFG} = 10 ] && [ $((BAR)) = $((SLI)) ] && [ $((CFG)) = $((SLI)) ]
  check "bar-read-timed SLI_INTF read through vfio-pci, timed: ${BAR:-nothing} (config space $CFG), the documented $SLI" $? \
    "expected $SLI through BAR0 and config space 0x58; guest-bar-read rc $rc read ${BAR:-nothing}, config space $CFG"
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
qemu_assumption SLI_INTF_PF >"$WORK/sli-intf"
qemu_initramfs "$WORK/initramfs.cpio.gz" "$WORK/init" --modules "vfio-pci vfio_iommu_type1" \
  --bin "$GUEST_OCETOOL:ocetool" --bin "$PROBE" --file "$IMAGE:/new.ufi" --file "$WORK/sli-intf:/etc/sli-intf"
qemu_serve "$WORK/server.log" "$HOST_OCETOOL" -vv --device "emu:$STATE" emulator serve --socket "$SOCK"
qemu_say "kernel $KVER; booting"
qemu_boot "$WORK/initramfs.cpio.gz" "$LOG"
cat "$LOG.host" >>"$LOG"
SERVER_RC=0; wait "$SERVER_PID" || SERVER_RC=$?
grep -v '^ocetool: emulator event: ' "$WORK/server.log" || true
echo "emulator-guest: the server logged $(grep -c '^ocetool: emulator event: Command' "$WORK/server.log" || true) commands"

# The host's checks: a grep that finds nothing fails its check, not the script.
set +e
json() { qemu_json "$LOG" "$1"; }
rc() { qemu_rc "$LOG" "$1"; }
ok() { local check="$1 $2"; shift 2; qemu_ok "$LOG" "$check" "$@"; }
# is_json NAME FILTER: the guest's document NAME exited 0 and FILTER holds; else prints the exit
# code and the document (the check's evidence).
is_json() {
  [ "$(rc "$1")" = 0 ] && json "$1" | jq -e "$2" >/dev/null 2>&1 ||
    { echo "$1: exit $(rc "$1"), wanted $2; got: $(json "$1" | tr -d '\n' | tr -s ' ' | cut -c1-400)"; return 1; }
}

ok list-usable "list: the adapter is usable" \
  is_json list '[.adapters[].functions[] | select(.device_id == "0x0720") | .usable] == [true]'
ok query-ok "query in the guest succeeds, the VPD read through vfio-pci" \
  is_json query1 '.chip == "skyhawk" and .vpd.part_number == "OCe14102" and .vpd.error == null'
R=0; E=$({ [ "$(rc set_profile)" = 0 ] && [ "$(rc reset)" = 0 ] && is_json query2 '.roce_enabled == true'; }) || R=1
host_check "$LOG" "set-profile-roce set-profile roce, then reset: roce_enabled" $R \
  "expected both to exit 0 and roce_enabled true; set-profile exit $(rc set_profile), reset exit $(rc reset); $E"
ok fw-update-flashes "fw update flashes the image" is_json fw_update1 '.changed == true'
ok fw-update-unchanged "a second fw update changes nothing" is_json fw_update2 '.changed == false'
# The host's view of the same state directory, after the guest is gone.
R=0; host --json query >"$WORK/host-query.json" || R=1
json query3 >"$WORK/guest-query.json"
[ "$R" = 0 ] && [ "$(rc query3)" = 0 ] && jq -S 'del(.device, .handoff)' "$WORK/host-query.json" >"$WORK/h" &&
  jq -S 'del(.device, .handoff)' "$WORK/guest-query.json" >"$WORK/g" && [ -s "$WORK/h" ] && diff -u "$WORK/g" "$WORK/h" >"$WORK/diff" || R=1
host_check "$LOG" "host-query-equals the host's query equals the guest's last one field by field (but device, handoff)" $R \
  "expected no difference; guest exit $(rc query3), diff (guest, host): $(grep '^[-+][^-+]' "$WORK/diff" | head -6 | tr '\n' '|')"
# Beside the host's query, the state file and flash.bin themselves: the RoCE profile active and
# next (its pf_type: function mode 0x6, design.md §6) and the image's version string on flash.
R=0; jq -e --arg v "$NEW" '.firmware.stored == $v and .roce_enabled == true and .profile.next.roce == true' \
  "$WORK/host-query.json" >/dev/null && [ "$(qemu_state_function_mode "$STATE")" = 6 ] &&
  [ "$(jq -r '.nvram.next_profile' "$STATE/state.json")" = "$(jq -r '.runtime.active_profile' "$STATE/state.json")" ] &&
  [ "$(grep -c -a -F "$NEW" "$STATE/flash.bin")" -gt 0 ] || R=1
host_check "$LOG" "host-state-agrees the host sees $NEW stored and RoCE on, and so do state.json and flash.bin" $R \
  "expected $NEW stored, RoCE active and next; query: $(jq -c '{stored: .firmware.stored, roce_enabled, next: .profile.next}' "$WORK/host-query.json" 2>&1 | cut -c1-200); state.json mode 0x$(qemu_state_function_mode "$STATE" 2>&1), next/active $(jq -r '"\(.nvram.next_profile)/\(.runtime.active_profile)"' "$STATE/state.json"); $NEW in flash.bin: $(grep -c -a -F "$NEW" "$STATE/flash.bin")"
R=0; [ "$SERVER_RC" = 0 ] && grep -q 'until the VM disconnected' "$WORK/server.log" || R=1
host_check "$LOG" "server-ended the server ended with the VM (exit $SERVER_RC)" $R \
  "expected exit 0 and 'until the VM disconnected'; its last lines: $(grep -v 'emulator event' "$WORK/server.log" | tail -3 | tr '\n' '|')"
grep -E '^(GUEST-CHECK|guest-bar-read)' "$LOG"
qemu_summary emulator-guest "$LOG" "$CHECKS"
