#!/usr/bin/env bash
# ocetool inside a guest, through the real kernel, against the emulated adapter served over
# vfio-user: `ocetool --device emu:DIR emulator serve --socket S` on the host, the Debian generic
# kernel under TCG (q35, intel-iommu with caching-mode, RAM from a memfd), and in the guest the
# project's own static ocetool through its VFIO backend:
#   - `list --json` shows the adapter usable;
#   - `query --json` is recorded; on the host, after the guest is gone, `ocetool --device emu:DIR
#     query --json` must equal the guest's last one field by field (but `device`, which names
#     the PCI address in the guest and the directory on the host);
#   - `set-profile roce --yes`, then `reset --yes`, gives `roce_enabled: true`;
#   - `fw update` of an image from `ocetool fw build` flashes it (`changed: true`), a second run
#     is `changed: false`; the host's query afterwards shows the new firmware stored.
# Every JSON document goes out on the serial console between markers and is checked here with jq.
# Ends with "emulator-guest: N passed, M failed"; a guest that never reached its checks fails.
#
# It needs `ocetool emulator serve`, which serves the emulator's reshaped device (its DMA and
# interrupt seams). An ocetool without that subcommand stops this script with exit 2, saying so.
set -euo pipefail
. "$(dirname "$0")/../qemu/lib.sh"
qemu_init emulator-guest

qemu_say "building ocetool (host and static guest build)"
(cd "$REPO" && cargo build --locked -q -p ocetool)
HOST_OCETOOL=$REPO/target/debug/ocetool
if ! "$HOST_OCETOOL" emulator serve --help >/dev/null 2>&1; then
  echo "emulator-guest: this ocetool has no \`emulator serve\`: nothing to attach (needs the emulator's device seams)"
  exit 2
fi
GUEST_OCETOOL=$(qemu_guest_build -p ocetool --bin ocetool | awk '$1=="ocetool"{print $2}' | tail -1)

STATE=$WORK/emu
IMAGE=$WORK/new.ufi
"$HOST_OCETOOL" --device "emu:$STATE" emulator init >/dev/null
"$HOST_OCETOOL" fw build --version 11.9.300.7 -o "$IMAGE" >/dev/null

cat >"$WORK/init" <<'INIT'
#!/bin/busybox sh
. /lib/guest.sh
BDF=$(find_dev 0x10df 0x0720)
echo "GUEST: kernel $(uname -r), adapter at ${BDF:-nowhere}"
[ -n "$BDF" ]; check "the served adapter is on the guest's PCI bus (10df:0720)" $?
export OCETOOL_DEVICE=$BDF
doc() { # NAME ARGS...: one JSON document between markers, with the exit code
  name=$1; shift
  echo "GUEST-JSON-BEGIN $name"; ocetool --json "$@"; rc=$?; echo; echo "GUEST-JSON-END $name rc=$rc"
}
if [ -n "$BDF" ]; then
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
  --bin "$GUEST_OCETOOL:ocetool" --file "$IMAGE:/new.ufi"
qemu_serve "$WORK/server.log" "$HOST_OCETOOL" --device "emu:$STATE" emulator serve --socket "$SOCK"
qemu_say "kernel $KVER; booting"
qemu_boot "$WORK/initramfs.cpio.gz" "$WORK/serial.log"
wait "$SERVER_PID" || echo "emulator-guest: the server exited with $?"
cat "$WORK/server.log"

LOG=$WORK/serial.log
json() { sed -n "/^GUEST-JSON-BEGIN $1\$/,/^GUEST-JSON-END $1 /{/^GUEST-JSON-/d;p}" "$LOG"; }
rc() { sed -n "s/^GUEST-JSON-END $1 rc=//p" "$LOG"; }
host_check() { if [ "$2" = 0 ]; then echo "GUEST-CHECK PASS $1"; else echo "GUEST-CHECK FAIL $1"; fi >>"$LOG"; }
ok() { local name=$1; shift; set +e; "$@" >/dev/null 2>&1; local r=$?; set -e; host_check "$name" $r; }

ok "list: the adapter is usable" sh -c "[ '$(rc list)' = 0 ] && json list | jq -e '[.adapters[].functions[] | select(.device_id == \"0x0720\") | .usable] == [true]'"
ok "query in the guest succeeds" sh -c "[ '$(rc query1)' = 0 ] && json query1 | jq -e '.chip' "
ok "set-profile roce, then reset: roce_enabled" sh -c "[ '$(rc set_profile)' = 0 ] && [ '$(rc reset)' = 0 ] && json query2 | jq -e '.roce_enabled == true'"
ok "fw update flashes the image" sh -c "[ '$(rc fw_update1)' = 0 ] && json fw_update1 | jq -e '.changed == true'"
ok "a second fw update changes nothing" sh -c "[ '$(rc fw_update2)' = 0 ] && json fw_update2 | jq -e '.changed == false'"
# The host's view of the same state directory, after the guest is gone.
"$HOST_OCETOOL" --device "emu:$STATE" --json query >"$WORK/host-query.json" || true
json query3 >"$WORK/guest-query.json"
ok "host query equals the guest's last query field by field (but device)" \
  sh -c "jq -S 'del(.device)' '$WORK/host-query.json' >'$WORK/h' && jq -S 'del(.device)' '$WORK/guest-query.json' >'$WORK/g' && diff -u '$WORK/g' '$WORK/h'"
ok "the host sees the new firmware stored" jq -e '.firmware.stored == "11.9.300.7"' "$WORK/host-query.json"
grep -E '^GUEST-CHECK' "$LOG" || true
qemu_summary emulator-guest "$LOG" 8
