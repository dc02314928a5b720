#!/usr/bin/env bash
# ocetool's sysfs backend in a real kernel without an IOMMU: the emulated adapter served over
# vfio-user (`ocetool --device emu:DIR emulator serve`) to a guest booted WITHOUT a vIOMMU (plain
# q35 under TCG, no intel-iommu, intel_iommu=off, RAM from a memfd), so the adapter has no IOMMU
# group. In the guest, the project's own static ocetool:
#   - `list --json` says the function would use the sysfs backend, because it has no IOMMU group;
#     with no huge page reserved it is not usable and says how to reserve one, and `query` is
#     refused with that advice (exit 3);
#   - once one huge page is reserved: `query` (automatic choice) runs through the sysfs backend
#     (`handoff.backend == "sysfs"`); `set-profile roce` + `reset`, then `fw update` (32 KiB
#     non-embedded chunks: DMA across pages of the huge page) work through it; `--backend sysfs
#     query` gives the last answer;
#   - `--backend vfio` on the group-less function fails with a clear message (exit 3);
#   - afterwards the function is as found: unbound, no driver_override, the command register
#     (bus mastering) as before. `(null)` in driver_override reads the same for no override and
#     for a literal "(null)" one (which no driver matches), so pci-stub, given the adapter's ID
#     (new_id), must then take the function: only a function with no override binds.
# On the host, after the guest is gone: `ocetool --device emu:DIR query --json` equals the guest's
# `--backend sysfs query` field by field (but `device` and `handoff`), with the new firmware stored
# and RoCE on, as flash.bin (the image's version string) and state.json (the active profile's
# pf_type) say too; and the server ended with the VM.
# Usage: tests/sysfs-backend/run.sh   (KEEP_WORK=DIR keeps the work folder)
# Ends with "sysfs-backend: N passed, M failed"; checks are counted by ID (a missing one fails);
# exits non-zero on any failure.
set -euo pipefail
. "$(dirname "$0")/../qemu/lib.sh"
CHECKS="adapter-present no-iommu-group list-sysfs-backend no-huge-page-refused list-usable query-auto
  set-profile-roce fw-update-flashes query-forced backend-vfio-refused function-as-found host-query-equals
  server-ended"
qemu_init sysfs-backend "$CHECKS"

qemu_say "building ocetool (host and static guest build)"
(cd "$REPO" && cargo build --locked -q -p ocetool)
HOST_OCETOOL=$HOST_TARGET/debug/ocetool
GUEST_OCETOOL=$(qemu_guest_build -p ocetool --bin ocetool | awk '$1=="ocetool"{print $2}' | tail -1)
[ -x "$GUEST_OCETOOL" ] || { echo "sysfs-backend: no guest ocetool built"; exit 2; }

LOG=$WORK/serial.log
STATE=$WORK/emu
IMAGE=$WORK/new.ufi
host() { "$HOST_OCETOOL" --device "emu:$STATE" "$@"; }
qemu_emulated_adapter "$HOST_OCETOOL" "$STATE" "$IMAGE"

cat >"$WORK/init" <<'INIT'
#!/bin/busybox sh
. /lib/guest.sh
BDF=$(find_dev 0x10df 0x0720)
echo "GUEST: kernel $(uname -r), adapter at ${BDF:-nowhere}, $(ls /sys/kernel/iommu_groups | wc -l) IOMMU groups"
[ -n "$BDF" ]; check "adapter-present the served adapter is on the guest's PCI bus (10df:0720)" $? \
  "expected 0x10df:0x0720; saw $(pci_ids)"
if [ -n "$BDF" ]; then
  D=/sys/bus/pci/devices/$BDF
  command_word() { od -An -tx2 -j4 -N2 "$D/config" | tr -d ' '; }
  [ ! -e "$D/iommu_group" ] && [ -z "$(ls /sys/kernel/iommu_groups)" ]
  check "no-iommu-group the function has no IOMMU group (no vIOMMU)" $? \
    "expected no iommu_group link and no group; link: $(readlink "$D/iommu_group"), groups: $(ls /sys/kernel/iommu_groups | tr '\n' ' ')"
  BEFORE=$(command_word)
  export OCETOOL_DEVICE=$BDF
  echo 0 >/proc/sys/vm/nr_hugepages
  doc list_before list
  doc query_refused query
  echo 1 >/proc/sys/vm/nr_hugepages
  echo "GUEST: huge pages: $(grep -E 'HugePages_(Total|Free)' /proc/meminfo | tr -s ' ' | tr '\n' ' ')"
  doc list list
  doc query_auto query
  doc set_profile set-profile roce --yes
  doc reset reset --yes
  doc fw_update fw update /new.ufi --yes
  doc query_forced --backend sysfs query
  doc backend_vfio --backend vfio query
  AFTER=$(command_word)
  OV=$(cat "$D/driver_override")
  echo "GUEST: command register $BEFORE before, $AFTER after; driver $(drv "$BDF"); driver_override $OV"
  DRV_AFTER=$(drv "$BDF")
  echo "10df 0720" >/sys/bus/pci/drivers/pci-stub/new_id
  STUB=$(drv "$BDF")
  echo "$BDF" >/sys/bus/pci/drivers/pci-stub/unbind 2>/dev/null
  echo "10df 0720" >/sys/bus/pci/drivers/pci-stub/remove_id 2>/dev/null
  echo "GUEST: given the adapter's ID, pci-stub took it: driver $STUB"
  [ "$BEFORE" = "$AFTER" ] && [ "$DRV_AFTER" = none ] && [ "$OV" = "(null)" ] && [ "$STUB" = pci-stub ]
  check "function-as-found unbound, no driver_override (pci-stub binds it when given its ID), command register $AFTER as found ($BEFORE)" $? \
    "expected driver none, override (null), pci-stub binding it, command $BEFORE; saw driver $DRV_AFTER, override $OV, then $STUB, command $AFTER"
fi
finish
INIT
qemu_initramfs "$WORK/initramfs.cpio.gz" "$WORK/init" --modules pci-stub --bin "$GUEST_OCETOOL:ocetool" \
  --file "$IMAGE:/new.ufi"
qemu_serve "$WORK/server.log" "$HOST_OCETOOL" --device "emu:$STATE" emulator serve --socket "$SOCK"
qemu_say "kernel $KVER; booting without a vIOMMU"
QEMU_VIOMMU=off qemu_boot "$WORK/initramfs.cpio.gz" "$LOG"
SERVER_RC=0; wait "$SERVER_PID" || SERVER_RC=$?
cat "$WORK/server.log"

# The host's checks: a grep that finds nothing fails its check, not the script.
set +e
json() { qemu_json "$LOG" "$1"; }
rc() { qemu_rc "$LOG" "$1"; }
ok() { local check="$1 $2"; shift 2; qemu_ok "$LOG" "$check" "$@"; }
# has NAME RC FILTER: the guest's document NAME exited RC and FILTER holds; else prints the exit
# code and the document (the check's evidence).
has() {
  [ "$(rc "$1")" = "$2" ] && json "$1" | jq -e "$3" >/dev/null 2>&1 ||
    { echo "$1: exit $(rc "$1") (wanted $2), wanted $3; got: $(json "$1" | tr -d '\n' | tr -s ' ' | cut -c1-400)"; return 1; }
}
FUNCTION='.adapters[].functions[] | select(.device_id == "0x0720")'

ok list-sysfs-backend "list: the sysfs backend, because there is no IOMMU group" \
  has list_before 0 "[$FUNCTION | .backend == \"sysfs\" and (.backend_reason | test(\"no IOMMU group\"))] == [true]"
R=0
E=$(has list_before 0 "[$FUNCTION | .usable == false and (.reason | test(\"nr_hugepages\"))] == [true]" &&
  has query_refused 3 '.error.message | test("huge page") and test("/proc/sys/vm/nr_hugepages")') || R=1
host_check "$LOG" "no-huge-page-refused without a huge page: list says not usable and query is refused (exit 3), both saying how to reserve one" $R "$E"
ok list-usable "list: usable once a huge page is reserved" has list 0 "[$FUNCTION | .usable] == [true]"
ok query-auto "query chooses the sysfs backend by itself and reads the adapter" \
  has query_auto 0 '.handoff.backend == "sysfs" and .source == "adapter" and .chip == "skyhawk"'
R=0; E=$(has set_profile 0 '.changed == true' && has reset 0 '.roce_enabled == true') || R=1
host_check "$LOG" "set-profile-roce set-profile roce, then reset, through the sysfs backend" $R "$E"
ok fw-update-flashes "fw update (32 KiB non-embedded chunks) flashes the image" \
  has fw_update 0 '.changed == true and .handoff.backend == "sysfs"'
ok query-forced "--backend sysfs query answers" has query_forced 0 '.handoff.reason | test("--backend sysfs")'
ok backend-vfio-refused "--backend vfio on the group-less function: exit 3, saying why" \
  has backend_vfio 3 '.error.message | test("has no IOMMU group, so VFIO cannot reach it")'
# The host's view of the same state directory, after the guest is gone.
R=0; host --json query >"$WORK/host-query.json" || R=1
json query_forced >"$WORK/guest-query.json"
[ "$R" = 0 ] && jq -S 'del(.device, .handoff)' "$WORK/host-query.json" >"$WORK/h" &&
  jq -S 'del(.device, .handoff)' "$WORK/guest-query.json" >"$WORK/g" && [ -s "$WORK/g" ] &&
  jq -e --arg v "$NEW" '.firmware.stored == $v and .roce_enabled == true' "$WORK/h" >/dev/null &&
  [ "$(grep -c -a -F "$NEW" "$STATE/flash.bin")" -gt 0 ] && [ "$(qemu_state_function_mode "$STATE")" = 6 ] &&
  diff -u "$WORK/g" "$WORK/h" >"$WORK/diff" || R=1
host_check "$LOG" "host-query-equals the host's query equals the guest's sysfs-backend query (but device, handoff); $NEW stored and RoCE on, as flash.bin and state.json say" $R \
  "expected equal documents with $NEW stored, RoCE on; host: $(jq -c '{stored: .firmware.stored, roce_enabled}' "$WORK/h" 2>&1); $NEW in flash.bin: $(grep -c -a -F "$NEW" "$STATE/flash.bin"), state.json mode 0x$(qemu_state_function_mode "$STATE" 2>&1); diff (guest, host): $(grep '^[-+][^-+]' "$WORK/diff" | head -6 | tr '\n' '|')"
R=0; [ "$SERVER_RC" = 0 ] && grep -q 'until the VM disconnected' "$WORK/server.log" || R=1
host_check "$LOG" "server-ended the server ended with the VM (exit $SERVER_RC)" $R \
  "expected exit 0 and 'until the VM disconnected'; its last lines: $(tail -3 "$WORK/server.log" | tr '\n' '|')"
grep -E '^(GUEST|GUEST-CHECK)' "$LOG" | grep -v '^GUEST-JSON' 
qemu_summary sysfs-backend "$LOG" "$CHECKS"
