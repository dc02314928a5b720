#!/usr/bin/env bash
# The unmodified be2net of the Debian generic kernel against the emulated adapter served over
# vfio-user (`ocetool --device emu:DIR emulator serve`), under TCG (q35, intel-iommu with
# caching-mode, RAM from a memfd, the adapter behind a PCIe root port as function 0).
#
# Boot 1, in the guest, with ethtool and iproute2 from Debian packages:
#   - `modprobe be2net` probes with no error or warning line from be2net in the kernel log, and
#     registers a netdev; `ethtool -i` says driver be2net; its firmware-version and the netdev's
#     MAC go to the host, which compares them with the emulator's state file (state.json:
#     runtime.running_version, the documented factory version; identity.macs[0]), not with an
#     answer of the same mailbox handlers be2net reads;
#   - be2net's log of its probe names the function mode the state file's active profile stands
#     for (its pf_type, design.md §6) and that profile's ID (runtime.active_profile);
#   - `ip link set up`: operstate up and carrier 1, the factory link (emulator/src/assumptions/:
#     every port up); then the host sets the `link-down` fault through the server's control
#     socket (the guest asks for it on a second serial port) and the guest sees the carrier it
#     had go, and come back when it is cleared;
#   - `ethtool -S` answers (statistics from the driver's asynchronous GET_STATISTICS);
#   - `rmmod be2net` and `modprobe be2net` probe again cleanly, three times;
#   - `ethtool -f IF image.ufi` with an image from `ocetool fw build` in /lib/firmware succeeds:
#     be2net's own walk writes the flash over the MCC, each chunk completed by an interrupt.
# Then on the host: `ocetool --device emu:DIR query` shows the image's version stored, flash.bin
# holds the image's version string (the factory flash did not), and
# `ocetool fw update` of the same image reports `changed: false` (both walks agree on flash).
# Boot 2: with the `no-valid=1:50` fault (NTWK_INTERFACE_CREATE gets no valid completion, as a
# firmware that withholds it), be2net's probe fails with an error — "invalid mailbox completion",
# error -1 — leaving the function unbound, and nothing oopses, then or at power-off.
# The time `modprobe be2net` takes (probe to registered netdev) is printed for each probe.
# Usage: tests/be2net-qemu/run.sh   (KEEP_WORK=DIR keeps the work folder, with shell.cpio.gz: the
# same guest with a shell on the console instead of the checks, for driving be2net by hand)
# Ends with "be2net-qemu: N passed, M failed"; checks are counted by ID (a missing one fails);
# exits non-zero on any failure.
set -euo pipefail
. "$(dirname "$0")/../qemu/lib.sh"
CHECKS="adapter-present probe-clean netdev-registered drvinfo-driver fw-version mac-equal function-mode
  active-profile link-up link-down-event link-up-event ethtool-stats reload-1 reload-2 reload-3 flash-ok
  flash-stored fw-update-unchanged probe-failure no-oops"
qemu_init be2net-qemu "$CHECKS"

# The guest's tools and the shared libraries they load (ld.so --list checks they resolve).
GUEST_DEBS="ethtool iproute2 libc6 libmnl0 libbpf1 libelf1 libbsd0 libcap2 zlib1g libmd0"

qemu_say "building ocetool"
(cd "$REPO" && cargo build --locked -q -p ocetool)
OCETOOL=$HOST_TARGET/debug/ocetool
STATE=$WORK/emu
IMAGE=$WORK/image.ufi
LOG=$WORK/serial.log
REQ=$WORK/requests
: >"$LOG"
host() { "$OCETOOL" --device "emu:$STATE" "$@"; }
qemu_emulated_adapter "$OCETOOL" "$STATE" "$IMAGE"
FACTORY_FLASHED=$(grep -c -a -F "$NEW" "$STATE/flash.bin" || true)   # the new version's string: none yet
# What be2net must find, from the state file and the documented factory values (lib.sh's
# qemu_state, qemu_assumption): the function mode and the active profile; the link is the
# factory's (up), which the state file must not contradict (no link-down fault stored).
FUNCTION_MODE=$(qemu_state_function_mode "$STATE")
PROFILE_ID=$(qemu_state "$STATE" .runtime.active_profile)
[ "$FACTORY_LINK_UP" = true ] && [ "$(qemu_state "$STATE" .faults.link_down)" = false ] ||
  { echo "be2net-qemu: the fresh adapter's link is not the factory's up"; exit 2; }

# The guest's root: be2net where modprobe finds it (not loaded at boot), the tools, the image.
ROOT=$WORK/root
qemu_debs "$ROOT" $GUEST_DEBS
rm -rf "$ROOT/usr/share" "$ROOT/usr/lib/x86_64-linux-gnu/gconv" "$ROOT/etc/network"
qemu_libs_resolve "$ROOT" sbin/ethtool bin/ip || exit 2
KO=kernel/drivers/net/ethernet/emulex/benet/be2net.ko
mkdir -p "$ROOT/lib/modules/$KVER/$(dirname "$KO")" "$ROOT/lib/firmware"
cp "$KROOT/lib/modules/$KVER/$KO" "$ROOT/lib/modules/$KVER/$KO"
echo "$KO:" >"$ROOT/lib/modules/$KVER/modules.dep"
cp "$IMAGE" "$ROOT/lib/firmware/image.ufi"

cat >"$WORK/common.sh" <<'COMMON'
IP=/bin/ip ETHTOOL=/sbin/ethtool
BDF=$(find_dev 0x10df 0x0720)
# Error and warning lines (priority 0-4) from be2net or naming the adapter, and kernel splats;
# shown on the console as GUEST-BAD lines.
bad_lines() {
  dmesg -r | grep -E '^<[0-4]>' | grep -E "be2net|$BDF|Call Trace|WARNING:|BUG:|Oops" | tee /tmp/bad |
    sed 's/^/GUEST-BAD /' >/dev/console
  cat /tmp/bad
}
now() { cut -d' ' -f1 /proc/uptime; }
# probe: modprobe be2net, timed; sets IF to the netdev it registered.
probe() {
  t0=$(now); modprobe be2net; PROBE_RC=$?; t1=$(now)
  echo "GUEST-VALUE probe_seconds=$(awk "BEGIN{print $t1 - $t0}")"
  IF=$(ls "/sys/bus/pci/devices/$BDF/net" 2>/dev/null | head -1)
}
# wait_for SECONDS COMMAND...: until COMMAND succeeds, polled every 0.1 s.
wait_for() {
  n=$(($1 * 10)); shift
  while [ "$n" -gt 0 ]; do "$@" && return 0; sleep 0.1; n=$((n - 1)); done
  return 1
}
link_is() { [ "$(cat "/sys/class/net/$IF/operstate")" = "$1" ] && [ "$(cat "/sys/class/net/$IF/carrier")" = "$2" ]; }
link_now() { echo "$(cat "/sys/class/net/$IF/operstate" 2>&1), $(cat "/sys/class/net/$IF/carrier" 2>&1)"; }
COMMON

cat >"$WORK/init" <<'INIT'
#!/bin/busybox sh
. /lib/guest.sh
. /lib/common.sh
echo "GUEST: kernel $(uname -r), adapter at ${BDF:-nowhere}"
[ -n "$BDF" ]; check "adapter-present the served adapter is on the guest's PCI bus (10df:0720)" $? \
  "expected 0x10df:0x0720; saw $(pci_ids)"
ask() { echo "$1" >/dev/ttyS1; }
if [ -n "$BDF" ]; then
  probe
  dmesg | grep -E 'be2net' | sed 's/^/GUEST-DMESG /'
  BAD=$(bad_lines)
  [ "$PROBE_RC" = 0 ] && [ -z "$BAD" ]
  check "probe-clean modprobe be2net (rc $PROBE_RC) with no error or warning line from be2net" $? \
    "expected rc 0 and no line of priority 0-4; rc $PROBE_RC, lines: ${BAD:-none}"
  NETDRV=$(basename "$(readlink "/sys/class/net/$IF/device/driver")")
  [ -n "$IF" ] && [ "$NETDRV" = be2net ]
  check "netdev-registered be2net registered ${IF:-no netdev}" $? \
    "expected a netdev under $BDF whose device's driver is be2net; netdev '${IF}', driver '$NETDRV'"
  $ETHTOOL -i "$IF" | sed 's/^/GUEST-ETHTOOL-I /'
  $ETHTOOL -i "$IF" | grep -qx 'driver: be2net'
  check "drvinfo-driver ethtool -i says driver be2net" $? "expected 'driver: be2net'; ethtool -i: $($ETHTOOL -i "$IF" 2>&1 | head -1)"
  echo "GUEST-VALUE fw_version=$($ETHTOOL -i "$IF" | sed -n 's/^firmware-version: //p')"
  echo "GUEST-VALUE mac=$(cat "/sys/class/net/$IF/address")"
  $IP link set dev "$IF" up
  # The factory link is up (emulator/src/assumptions/): carrier 1 within 15 s of ifup.
  wait_for 15 link_is up 1; rc=$?
  check "link-up ip link set up: operstate $(link_now), the factory link (up, 1)" $rc \
    "expected operstate up, carrier 1; saw $(link_now) after 15 s"
  UP_BEFORE=0; link_is up 1 && UP_BEFORE=1
  ask link-down
  wait_for 20 link_is down 0; rc=$?
  [ "$UP_BEFORE" = 1 ] && [ "$rc" = 0 ]
  check "link-down-event the host's link-down fault drops the carrier the guest had (carrier 1 before: $UP_BEFORE)" $? \
    "expected carrier 1 before the fault, then down, 0 within 20 s; before: $UP_BEFORE, then $(link_now)"
  DOWN_SEEN=0; link_is down 0 && DOWN_SEEN=1
  ask link-up
  wait_for 20 link_is up 1; rc=$?
  [ "$DOWN_SEEN" = 1 ] && [ "$rc" = 0 ]
  check "link-up-event clearing it brings the carrier back (carrier 0 before: $DOWN_SEEN)" $? \
    "expected down, 0 before clearing the fault, then up, 1 within 20 s; before: $DOWN_SEEN, then $(link_now)"
  sleep 2   # the driver's worker asks for statistics every second while up
  $ETHTOOL -S "$IF" >/tmp/stats; rc=$?
  head -4 /tmp/stats | sed 's/^/GUEST-ETHTOOL-S /'
  [ "$rc" = 0 ] && [ "$(wc -l </tmp/stats)" -gt 10 ]
  check "ethtool-stats ethtool -S answers ($(wc -l </tmp/stats) lines)" $? \
    "expected rc 0 and more than 10 lines; rc $rc, $(wc -l </tmp/stats) lines"
  echo "GUEST-VALUE tx_packets=$(cat "/sys/class/net/$IF/statistics/tx_packets")"
  for n in 1 2 3; do
    rmmod be2net; rc=$?
    gone=0; [ -e "/sys/class/net/$IF" ] && gone=1
    probe
    BAD=$(bad_lines)
    [ "$rc" = 0 ] && [ "$gone" = 0 ] && [ "$PROBE_RC" = 0 ] && [ -n "$IF" ] && [ -z "$BAD" ]
    check "reload-$n rmmod be2net (rc $rc) and modprobe again: ${IF:-no netdev}, no error or warning" $? \
      "expected rmmod rc 0, the netdev gone, modprobe rc 0, a netdev, no bad line; rmmod rc $rc, netdev left $gone, modprobe rc $PROBE_RC, netdev '${IF}', lines: ${BAD:-none}"
  done
  $IP link set dev "$IF" up
  wait_for 15 link_is up 1
  $ETHTOOL -f "$IF" image.ufi; rc=$?
  dmesg | grep -E 'Flashing|flashed|Flash' | sed 's/^/GUEST-DMESG /'
  BAD=$(bad_lines)
  [ "$rc" = 0 ] && dmesg | grep -q 'Firmware flashed successfully' && [ -z "$BAD" ]
  check "flash-ok ethtool -f $IF image.ufi (rc $rc): be2net's walk flashed it" $? \
    "expected rc 0, 'Firmware flashed successfully', no bad line; rc $rc, flash lines: $(dmesg | grep -E 'Flash|flash' | tail -3 | tr '\n' '|'), bad: ${BAD:-none}"
  echo "GUEST-VALUE fw_version_after=$($ETHTOOL -i "$IF" | sed -n 's/^firmware-version: //p')"
fi
finish
INIT

cat >"$WORK/init2" <<'INIT'
#!/bin/busybox sh
. /lib/guest.sh
. /lib/common.sh
if [ -n "$BDF" ]; then
  probe
  dmesg | grep -E 'be2net' | sed 's/^/GUEST-DMESG /'
  drv=$(drv "$BDF")
  dmesg | grep -q 'invalid mailbox completion' && dmesg | grep -q "probe of $BDF failed with error -1" &&
    [ "$drv" = none ] && [ -z "$IF" ] && ! dmesg | grep -qE 'Call Trace|BUG:|Oops' && rmmod be2net
  check "probe-failure a withheld completion fails the probe with error -1, the function unbound ($drv), rmmod works" $? \
    "expected 'invalid mailbox completion', 'probe of $BDF failed with error -1', no driver, no netdev, no splat; driver $drv, netdev '${IF}', be2net lines: $(dmesg | grep -E 'be2net|failed with' | tail -4 | tr '\n' '|')"
fi
finish
INIT

cat >"$WORK/init-shell" <<'INIT'
#!/bin/busybox sh
. /lib/guest.sh
echo "be2net guest: modprobe be2net; ip and ethtool are Debian's; ethtool -f eth0 image.ufi flashes"
echo "/lib/firmware/image.ufi; poweroff -f ends the session"
command -v cttyhack >/dev/null && exec setsid cttyhack sh
exec sh
INIT

qemu_initramfs "$WORK/initramfs.cpio.gz" "$WORK/init" --tree "$ROOT" --file "$WORK/common.sh:/lib/common.sh"
qemu_initramfs "$WORK/shell.cpio.gz" "$WORK/init-shell" --tree "$ROOT"
qemu_initramfs "$WORK/initramfs2.cpio.gz" "$WORK/init2" --tree "$ROOT" --file "$WORK/common.sh:/lib/common.sh"

# The guest's requests arrive on its second serial port (a file here): each complete line is
# carried out once, by ocetool through the server's control socket.
watch_requests() {
  local done=0 lines line
  while :; do
    lines=$(tr -cd '\n' <"$REQ" 2>/dev/null | wc -c)
    while [ "$done" -lt "$lines" ]; do
      done=$((done + 1))
      line=$(sed -n "${done}p" "$REQ" | tr -d '\r')
      echo "request: $line"
      case $line in
        link-down) host emulator fault set link-down ;;
        link-up) host emulator fault clear link-down ;;
        *) echo "unknown request" ;;
      esac
    done
    sleep 0.1
  done
}

qemu_serve "$WORK/server.log" "$OCETOOL" -vv --device "emu:$STATE" emulator serve --socket "$SOCK"
qemu_say "kernel $KVER; boot 1: probe, link, reload, flash"
: >"$REQ"
watch_requests >"$WORK/requests.log" 2>&1 &
WATCH_PID=$!
QEMU_HELPER_PIDS=$WATCH_PID
QEMU_EXTRA="-serial file:$REQ" qemu_boot "$WORK/initramfs.cpio.gz" "$LOG"
kill "$WATCH_PID" 2>/dev/null || true
wait "$WATCH_PID" 2>/dev/null || true
wait "$SERVER_PID" || true
cat "$WORK/requests.log"
grep -E '^ocetool: emulator event: (.*Failed|.*Illegal|QueueMiss|DmaFault|InterruptSuppressed)' "$WORK/server.log" | sort | uniq -c | head -20 || true

# The host's checks: a grep that finds nothing fails its check, not the script.
set +e
value() { sed -n "s/^GUEST-VALUE $1=//p" "$LOG" | tail -1; }
# Each compares with the state file or a documented factory value (lib.sh), never with an answer
# of the handlers be2net itself read: a handler that answers wrongly fails here.
R=0; [ "$(value fw_version)" = "$RUNNING" ] || R=1
host_check "$LOG" "fw-version ethtool -i's firmware-version ($(value fw_version)) is the state file's running version ($RUNNING, the factory $FACTORY)" $R \
  "expected $RUNNING (state.json runtime.running_version); ethtool -i said '$(value fw_version)'"
R=0; [ "$(value mac)" = "$MAC" ] || R=1
host_check "$LOG" "mac-equal the netdev's MAC ($(value mac)) is the state file's identity.macs[0] ($MAC)" $R \
  "expected $MAC (state.json identity.macs[0]; port 1's is $MAC1); the netdev has '$(value mac)'"
# be2net's own log of its first probe: "FW config: function_mode=0x%x, ..." (QUERY_FIRMWARE_CONFIG)
# and "Using profile 0x%x" (GET_ACTIVE_PROFILE): spec/be2net-driver.md §0.2 (log strings), §2.
GUEST_MODE=$(sed -n 's/^GUEST-DMESG .*FW config: function_mode=\(0x[0-9a-f]*\),.*/\1/p' "$LOG" | head -1)
R=0; [ -n "$GUEST_MODE" ] && [ "$((GUEST_MODE))" = "$FUNCTION_MODE" ] || R=1
host_check "$LOG" "function-mode be2net's FW config function_mode (${GUEST_MODE:-not logged}) is the state file's active profile's (0x$FUNCTION_MODE)" $R \
  "expected 0x$FUNCTION_MODE (state.json runtime.active.pf_type, design.md §6); be2net logged: $(grep -m1 '^GUEST-DMESG .*FW config' "$LOG" || echo nothing)"
GUEST_PROFILE=$(sed -n 's/^GUEST-DMESG .*Using profile \(0x[0-9a-f]*\)$/\1/p' "$LOG" | head -1)
R=0; [ -n "$GUEST_PROFILE" ] && [ "$((GUEST_PROFILE))" = "$PROFILE_ID" ] || R=1
host_check "$LOG" "active-profile be2net's active profile (${GUEST_PROFILE:-not logged}) is the state file's runtime.active_profile ($PROFILE_ID)" $R \
  "expected $PROFILE_ID; be2net logged: $(grep -m1 '^GUEST-DMESG .*Using profile' "$LOG" || echo nothing)"
# The image reached flash.bin: its version string is there, which the factory flash lacked, and
# ocetool's query (the adapter's own answer) says it is stored.
R=0; FLASHED=$(grep -c -a -F "$NEW" "$STATE/flash.bin")
host --json query >"$WORK/after.json" && jq -e --arg v "$NEW" '.firmware.stored == $v' "$WORK/after.json" >/dev/null &&
  [ "$FLASHED" -gt 0 ] && [ "$FACTORY_FLASHED" = 0 ] || R=1
host_check "$LOG" "flash-stored ocetool query on the host shows $NEW stored, and flash.bin holds it" $R \
  "expected $NEW stored and in flash.bin (not there before: $FACTORY_FLASHED); query: $(jq -c .firmware "$WORK/after.json" 2>&1), flash.bin lines with it: $FLASHED"
R=0; host --json fw update "$IMAGE" --yes >"$WORK/update.json" && jq -e '.changed == false' "$WORK/update.json" >/dev/null || R=1
host_check "$LOG" "fw-update-unchanged ocetool fw update of the same image: changed false" $R \
  "expected changed false; fw update said: $(jq -c '{changed, error}' "$WORK/update.json" 2>&1 | head -3)"
QRC1=$QRC

qemu_say "boot 2: a withheld completion fails the probe"
host emulator fault set no-valid=1:50 >/dev/null
qemu_serve "$WORK/server2.log" "$OCETOOL" --device "emu:$STATE" emulator serve --socket "$SOCK"
qemu_boot "$WORK/initramfs2.cpio.gz" "$WORK/serial2.log"
wait "$SERVER_PID" || true
host emulator fault clear --all >/dev/null
grep -E '^GUEST-(CHECK|EVIDENCE|DMESG)' "$WORK/serial2.log" >>"$LOG" || true
# The kernel's own console lines (not the guest's or the host's tagged lines).
SPLATS=$(cat "$LOG" "$WORK/serial2.log" | grep -v '^GUEST-' | grep -E 'BUG:|Oops|Call Trace|Kernel panic|general protection')
R=0; [ -n "$SPLATS" ] && R=1
[ "$QRC" = 0 ] && grep -q '^GUEST-DONE' "$WORK/serial2.log" || R=1
host_check "$LOG" "no-oops no oops, BUG or panic in either boot (power-off included); boot 2 finished (qemu rc $QRC)" $R \
  "expected no splat and boot 2 done with qemu rc 0; qemu rc $QRC, GUEST-DONE $(grep -c '^GUEST-DONE' "$WORK/serial2.log"), splats: ${SPLATS:-none}"
QRC=$QRC1

grep -E '^(GUEST-CHECK|GUEST-VALUE)' "$LOG" || true
qemu_summary be2net-qemu "$LOG" "$CHECKS"
