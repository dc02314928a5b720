#!/usr/bin/env bash
# The whole card in a real kernel: both NIC functions of one emulated OCe14102 served by one
# `ocetool --device emu:DIR emulator serve --socket S0 --socket S1` (one flash, one profile, one
# POST), attached by QEMU as functions 0 and 1 of one slot, driven by the Debian kernel's be2net,
# with the static ocetool in the guest. Port 0's cable goes to port 1 (a loopback cable). Three
# boots share the adapter's state directory:
#
# Boot 1, the card behind a PCIe-to-PCI bridge (no ACS there: both functions share one IOMMU
# group, as behind a switch without ACS):
#   - `ocetool list` shows one adapter (the slot) with both functions, in one IOMMU group;
#   - be2net drives both ports: two netdevs, each with its port's MAC (the state file's, and what
#     the host's `ocetool query` said while the server held the card);
#   - port 1 in a network namespace, port 0 pings it across the loopback cable;
#   - `--unbind` without `--yes` (no terminal) is refused, naming both functions and both
#     netdevs; with function 0 unbound by hand, a command on it is refused while function 1 on
#     be2net holds the group they share;
#   - `ocetool --unbind --yes query` on function 0 hands over both functions of the group (the
#     sampler sees both on vfio-pci) and gives both back to be2net with their netdevs;
#   - `ocetool --unbind --yes fw update` through function 0 stores the new firmware; function 1,
#     handed back to be2net, reads it from the flash they share (the kernel's answer);
#   - `ocetool --unbind --yes reset` through function 0 is not refused, since the hand-off takes
#     the whole card: be2net probes both functions again on the new firmware (its own line).
# Boot 2, the card behind a PCIe root port, where the kernel's Skyhawk-R quirk
# (drivers/pci/quirks.c, pci_quirk_mf_endpoint_acs for 10df:0720) gives each function its own
# IOMMU group, as on a server's slot:
#   - `ocetool list`: one adapter, two IOMMU groups;
#   - `--unbind --yes query` on function 0 moves function 0 alone; function 1 never leaves be2net
#     and keeps its netdev;
#   - `--unbind --yes fw update` of a second, newer image through function 0 alone (fw update
#     only stores);
#   - `--unbind --yes reset` on function 0 is refused (exit 4) naming function 1 and its netdev,
#     and writes nothing: the image it stored still waits (state file, after the boot).
# Boot 3, no vIOMMU (ocetool's sysfs backend, one function at a time), be2net on both, then
# function 0 unbound by hand:
#   - `ocetool reset` on function 0 is refused (exit 4) naming function 1 and its netdev, with
#     nothing written (the second image still waits; function 1's be2net takes its link down and
#     up without an error, where after a real chip reset it reports one, below);
#   - `ocetool apply` from a configuration naming the card by its serial makes RoCE the next
#     profile and postpones the reset while function 1 is on be2net (its JSON says so); with
#     function 1 unbound too, a second apply resets the chip: RoCE and the second image run, and
#     be2net probes both functions in RoCE mode (function_mode 0x6);
#   - a chip soft reset written through function 0 (config 0x5C bit 7, what be2net's own recovery
#     writes) while function 1 stays on be2net: what be2net on function 1 does is recorded
#     (recovered by its error-recovery path, or reported), and unbinding and binding it again
#     gives back a working port.
# The boots' scripts are init1.sh, init2.sh and init3.sh beside this one, with common.sh.
# The guest's commands and their output (text mode) form a transcript ($TRANSCRIPT, default
# $WORK/transcript.txt), which the README's hand-off section shows.
# Usage: tests/whole-card-qemu/run.sh   (KEEP_WORK=DIR keeps the work folder)
# Ends with "whole-card-qemu: N passed, M failed"; exits non-zero on any failure.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../qemu/lib.sh"
CHECKS="list-one-group two-netdevs loopback-ping unbind-asks other-port-holds unbind-group unbind-group-restores
  fw-visible-f1 reset-whole-card no-oops-1
  list-two-groups unbind-own-group reset-refused-vfio nothing-written-vfio no-oops-2
  reset-refused-sysfs nothing-written-sysfs apply-postpones apply-activates roce-both chip-reset-other
  rebind-recovers no-oops-3 host-macs server-ended"
qemu_init whole-card-qemu "$CHECKS"

# iproute2 (network namespaces) and the libraries it loads.
GUEST_DEBS="iproute2 libc6 libmnl0 libbpf1 libelf1 libbsd0 libcap2 zlib1g libmd0"

qemu_say "building ocetool (host and static guest build)"
(cd "$REPO" && cargo build --locked -q -p ocetool)
OCETOOL=$HOST_TARGET/debug/ocetool
GUEST_OCETOOL=$(qemu_guest_build -p ocetool --bin ocetool | awk '$1=="ocetool"{print $2}' | tail -1)
[ -x "$GUEST_OCETOOL" ] || { echo "whole-card-qemu: no guest ocetool built"; exit 2; }

STATE=$WORK/emu
TRANSCRIPT=${TRANSCRIPT:-$WORK/transcript.txt}
host() { "$OCETOOL" --device "emu:$STATE" "$@"; }
qemu_emulated_adapter "$OCETOOL" "$STATE" "$WORK/image.ufi"
SERIAL=$(qemu_state "$STATE" .identity.serial)
# A second image, one above $NEW, for boot 2 to store and boot 3 to activate.
NEW2=$(echo "$NEW" | awk -F. '{printf "%d.%d.%d.%d", $1, $2, $3, $4 + 1}')
"$OCETOOL" fw build --version "$NEW2" -o "$WORK/image2.ufi" >/dev/null

ROOT=$WORK/root
qemu_debs "$ROOT" $GUEST_DEBS
rm -rf "$ROOT/usr/share" "$ROOT/etc/network"
qemu_libs_resolve "$ROOT" bin/ip || exit 2
cp "$KROOT/lib/modules/$KVER/kernel/drivers/net/ethernet/emulex/benet/be2net.ko" "$ROOT/be2net.ko"
install -D -m 0755 "$GUEST_OCETOOL" "$ROOT/usr/bin/ocetool"
strip "$ROOT/usr/bin/ocetool" 2>/dev/null || true
install -D -m 0644 "$WORK/image.ufi" "$ROOT/lib/firmware/image.ufi"
install -D -m 0644 "$WORK/image2.ufi" "$ROOT/lib/firmware/image2.ufi"
mkdir -p "$ROOT/etc/ocetool" "$ROOT/run"
# The card, named by its serial: RoCE, activated by a chip reset when nothing holds the card.
cat >"$ROOT/etc/ocetool/ocetool.toml" <<TOML
[[adapter]]
match = { serial = "$SERIAL" }
profile = "roce"
activate = "reset"
TOML

for i in 1 2 3; do
  qemu_initramfs "$WORK/initramfs$i.cpio.gz" "$HERE/init$i.sh" --modules vfio-pci --tree "$ROOT" \
    --file "$HERE/common.sh:/lib/common.sh"
done

S0=$WORK/f0.sock S1=$WORK/f1.sock
# serve N PARENT: the whole card (port 0 cabled to port 1), then boot N with the card behind PARENT.
serve_and_boot() {
  local n=$1 parent=$2 dev
  qemu_serve_at "$S0" "$WORK/server$n.log" "$OCETOOL" --device "emu:$STATE" --json emulator serve \
    --socket "$S0" --socket "$S1" --wire "$WORK/w0" --wire-peer "$WORK/w1" --wire "$WORK/w1" --wire-peer "$WORK/w0"
  # The host's view while the server holds the card: what it says each port's MAC is.
  host --json query >"$WORK/host-query$n.json" 2>&1 || true
  mapfile -t dev < <(qemu_vfu_card_args "$parent" "$S0" "$S1")
  qemu_start "$WORK/serial$n.log" "$WORK/initramfs$n.cpio.gz" "" -- "${dev[@]}"
  qemu_wait "$WORK/serial$n.log"
  SERVER_RC[$n]=0; wait "$SERVED_PID" || SERVER_RC[$n]=$?
  QRCS[$n]=$QRC
}
declare -a SERVER_RC QRCS
qemu_say "boot 1: the card behind a PCIe-to-PCI bridge (one IOMMU group)"
serve_and_boot 1 pci-bridge
STATE_RUNNING1=$(qemu_state "$STATE" .runtime.running_version)
qemu_say "boot 2: the card behind a PCIe root port (an IOMMU group per function)"
serve_and_boot 2 root-port
STATE_RUNNING2=$(qemu_state "$STATE" .runtime.running_version)
qemu_say "boot 3: no vIOMMU (sysfs backend): refusals, apply, a chip reset under be2net"
QEMU_VIOMMU=off serve_and_boot 3 root-port
set +e

L1=$WORK/serial1.log L2=$WORK/serial2.log L3=$WORK/serial3.log
LOG=$WORK/checks.log
: >"$LOG"
check() { host_check "$LOG" "$1" "$2" "${3:-}"; }
value() { sed -n "s/^GUEST-VALUE $1=//p" "$2" | tail -1; }
json() { qemu_json "$2" "$1"; }
rc() { qemu_rc "$2" "$1"; }
short() { tr -d '\n' | tr -s ' ' | cut -c1-280; }
section() { sed -n 's/^GUEST-T \{0,1\}//p' "$1"; }
# output LOG COMMAND [N]: what the N-th run (default 1) of COMMAND printed in the transcript.
output() {
  section "$1" | awk -v c="# $2" -v n="${3:-1}" 'on && /^# /{on = 0} on{print} $0 == c{k++; if (k == n) on = 1}'
}
# The card's two functions as a boot saw them (the slot differs behind a bridge).
functions_of() { set -- $(value fns "$1"); F0=${1:-none} F1=${2:-none}; }
MAC0=$MAC MAC1=$MAC1   # the state file's identity.macs (lib.sh), not an answer of the handlers

# --- boot 1 ---
functions_of "$L1"
R=0; json list "$L1" | jq -e '(.adapters | length) == 1 and (.adapters[0].functions | length) == 2 and
  ([.adapters[0].functions[].iommu_group] | unique | length == 1 and .[0] != null)' >/dev/null || R=1
check "list-one-group list behind a bridge without ACS: one adapter, both functions ($F0, $F1), one IOMMU group" $R \
  "expected one adapter with two functions in one group; saw $(json list "$L1" | jq -c '[.adapters[] | {slot, functions: [.functions[] | {address, iommu_group}]}]' 2>&1 | short)"
set -- $(value netdevs "$L1")
R=0; [ -n "${1:-}" ] && [ -n "${3:-}" ] && [ "${2:-}" = "$MAC0" ] && [ "${4:-}" = "$MAC1" ] || R=1
check "two-netdevs be2net drives both ports: ${1:-none} ${2:-} and ${3:-none} ${4:-}, the state file's MACs of ports 0 and 1" $R \
  "expected two netdevs with $MAC0 and $MAC1 (state.json identity.macs); saw: $*"
PING=$(output "$L1" "ping -c 3 -W 5 10.77.0.2")
NEIGH=$(value neighbour "$L1")
R=0; [ "$(value ping_rc "$L1")" = 0 ] && echo "$PING" | grep -q '3 packets received' && [ "$NEIGH" = "$MAC1" ] || R=1
check "loopback-ping port 0 pings port 1 (in its own namespace) across the loopback cable: 3 of 3, answered from $MAC1" $R \
  "expected 3 replies and the neighbour's MAC $MAC1; ping: $(echo "$PING" | tail -2 | tr '\n' '|'); neighbour: ${NEIGH:-none}"
set -- $(value netdevs_now "$L1")
ASKED=$(output "$L1" "ocetool --device $F0 --unbind query")
R=0; echo "$ASKED" | grep -qx '(exit 4)' && echo "$ASKED" | grep -qF "$F0" && echo "$ASKED" | grep -qF "$F1" &&
  echo "$ASKED" | grep -qw "${1:-none}" && echo "$ASKED" | grep -qw "${2:-none}" || R=1
check "unbind-asks --unbind without --yes on $F0: refused (exit 4), naming both functions of the group and ${1:-?} and ${2:-?}" $R \
  "expected exit 4 naming $F0, $F1, ${1:-} and ${2:-}; it printed: $(echo "$ASKED" | tr '\n' '|' | cut -c1-280)"
HELD=$(output "$L1" "ocetool --device $F0 query")
R=0; echo "$HELD" | grep -qx '(exit 4)' && echo "$HELD" | grep -qF "$F1" && echo "$HELD" | grep -qw be2net &&
  echo "$HELD" | grep -q -- '--unbind' || R=1
check "other-port-holds query on $F0, unbound by hand, while $F1 on be2net holds their IOMMU group: refused (exit 4), naming $F1 and --unbind" $R \
  "expected exit 4 naming $F1, be2net and --unbind; it printed: $(echo "$HELD" | tr '\n' '|' | cut -c1-280)"
DRV=$(value drv_unbind "$L1")
R=0; [ "$(rc unbind_query "$L1")" = 0 ] && json unbind_query "$L1" | jq -e --arg a "$F0" --arg b "$F1" '
  .source == "adapter" and .handoff.backend == "vfio" and
  ([.handoff.moved[] | select(.driver == "be2net") | .address] | sort) == ([$a, $b] | sort) and
  ([.handoff.moved[] | .netdevs | length] | all(. == 1))' >/dev/null &&
  echo "|$DRV" | grep -q '|vfio-pci/vfio-pci vfio-pci/vfio-pci|' || R=1
check "unbind-group query --unbind --yes on $F0 hands over both functions of the group (both seen on vfio-pci), each with its netdev" $R \
  "expected handoff vfio moving $F0 and $F1 from be2net, each with a netdev, and both on vfio-pci at once; rc $(rc unbind_query "$L1"): $(json unbind_query "$L1" | jq -c '{source, handoff}' 2>&1 | short); seen: $DRV"
set -- $(value after_unbind "$L1")
R=0; [ "${1:-}" = "be2net/(null)" ] && [ "${2:-}" = "be2net/(null)" ] && [ -n "${3:-}" ] && [ -n "${4:-}" ] &&
  [ "$(echo "$DRV" | awk -F'|' '{print $(NF-1)}')" = "be2net/(null) be2net/(null)" ] || R=1
check "unbind-group-restores both functions are be2net's again, no driver_override, with netdevs ($*)" $R \
  "expected be2net/(null) on both and two netdevs; after: $*; seen: $DRV"
KSTORED=$(json fw_f1 "$L1" | jq -r .firmware.stored) KRUN=$(json fw_f1 "$L1" | jq -r .firmware.running)
FWUP=$(output "$L1" "ocetool --device $F0 --unbind --yes fw update /lib/firmware/image.ufi")
R=0; [ "$(rc fw_f1 "$L1")" = 0 ] && json fw_f1 "$L1" | jq -e '.source == "kernel"' >/dev/null && [ "$KSTORED" = "$NEW" ] &&
  [ "$KRUN" = "$FACTORY" ] && [ -n "$FWUP" ] && ! echo "$FWUP" | grep -q '^(exit' || R=1
check "fw-visible-f1 fw update through $F0 stored $NEW; be2net on $F1 reads it from the shared flash (stored ${KSTORED:-?}, running ${KRUN:-?})" $R \
  "expected the kernel's answer for $F1: stored $NEW (one above the factory), running $FACTORY; rc $(rc fw_f1 "$L1"): $(json fw_f1 "$L1" | jq -c '{source, firmware}' 2>&1 | short); fw update said: $(echo "$FWUP" | tail -2 | tr '\n' '|')"
# be2net's own line at each function's probe after the reset, and the state file after the boot.
set -- $(value after_reset "$L1")
R=0; [ "$(grep -c "^GUEST-RESET-WHOLE .*be2net $F0: FW version is $NEW\$" "$L1")" = 1 ] &&
  [ "$(grep -c "^GUEST-RESET-WHOLE .*be2net $F1: FW version is $NEW\$" "$L1")" = 1 ] &&
  [ "$STATE_RUNNING1" = "$NEW" ] && [ "${1:-}" = "be2net/(null)" ] && [ "${2:-}" = "be2net/(null)" ] || R=1
check "reset-whole-card reset --unbind --yes on $F0 with the whole card in its group: not refused; be2net probes both functions on $NEW" $R \
  "expected be2net's 'FW version is $NEW' once per function, both back on be2net, state.json running $NEW; be2net: $(grep '^GUEST-RESET-WHOLE' "$L1" | tr '\n' '|' | cut -c1-200); after: $*; state running $STATE_RUNNING1; reset said: $(output "$L1" "ocetool --device $F0 --unbind --yes reset" | tail -2 | tr '\n' '|')"
no_oops() {
  local n=$1 log=$2 splats
  splats=$(grep '^GUEST-BAD' "$log")
  R=0; [ -z "$splats" ] && [ "${QRCS[$n]}" = 0 ] && grep -q '^GUEST-DONE' "$log" || R=1
  check "no-oops-$n boot $n finished (qemu rc ${QRCS[$n]}), no oops, BUG or panic" $R \
    "expected qemu rc 0, GUEST-DONE, no splat; GUEST-DONE $(grep -c '^GUEST-DONE' "$log"), splats: ${splats:-none}"
}
no_oops 1 "$L1"

# --- boot 2 ---
functions_of "$L2"
section "$L2" >"$WORK/transcript2"
R=0; json list "$L2" | jq -e '(.adapters | length) == 1 and (.adapters[0].functions | length) == 2 and
  ([.adapters[0].functions[].iommu_group] | unique | length == 2 and all(. != null))' >/dev/null || R=1
check "list-two-groups list behind a root port: one adapter, both functions, an IOMMU group each (the kernel's ACS quirk for 10df:0720)" $R \
  "expected one adapter, two functions, two groups; saw $(json list "$L2" | jq -c '[.adapters[] | {slot, functions: [.functions[] | {address, iommu_group}]}]' 2>&1 | short)"
set -- $(value before "$L2"); N1_2=${4:-}; IFX=${5:-}
DRV=$(value drv_own "$L2")
set -- $(value after_unbind "$L2")
R=0; [ "$(rc unbind_query "$L2")" = 0 ] && json unbind_query "$L2" | jq -e --arg a "$F0" '
  [.handoff.moved[].address] == [$a]' >/dev/null && echo "|$DRV" | grep -q '|vfio-pci/vfio-pci be2net/(null)|' &&
  ! echo "$DRV" | tr '|' '\n' | awk 'NF {print $2}' | grep -qv 'be2net/(null)' &&
  [ "${1:-}" = "be2net/(null)" ] && [ "${4:-}" = "$N1_2" ] && [ "${5:-}" = "$IFX" ] || R=1
check "unbind-own-group query --unbind --yes on $F0 moves $F0 alone; $F1 never leaves be2net and keeps $N1_2 (ifindex $IFX)" $R \
  "expected handoff.moved [$F0], $F1 on be2net throughout, and after: both on be2net, $N1_2 ifindex $IFX; moved: $(json unbind_query "$L2" | jq -c '[.handoff.moved[].address]' 2>&1); seen: $DRV; after: $*"
MSG=$(json reset_refused "$L2" | jq -r '.error.message // .error // empty' 2>/dev/null)
set -- $(value after_refused "$L2")
R=0; [ "$(rc reset_refused "$L2")" = 4 ] && echo "$MSG" | grep -qF "$F1" && echo "$MSG" | grep -qwF "$N1_2" &&
  [ "${1:-}" = "be2net/(null)" ] && [ "${2:-}" = "be2net/(null)" ] || R=1
check "reset-refused-vfio reset --unbind --yes on $F0 is refused (exit 4), naming $F1 and $N1_2, both left on be2net" $R \
  "expected exit 4 naming $F1 and $N1_2; rc $(rc reset_refused "$L2"): $(echo "$MSG" | short); after: $*"
STORED2=$(sed -n '/^# ocetool --device .* --unbind --yes fw update \/lib\/firmware\/image2.ufi$/,/^# /p' "$WORK/transcript2" | grep -c "^Flashed $NEW2:")
R=0; [ "$STATE_RUNNING2" = "$NEW" ] && [ "$STORED2" = 1 ] || R=1
check "nothing-written-vfio $NEW2, stored through $F0 alone, still waits: the state file runs $STATE_RUNNING2 ($NEW), as before the refused reset" $R \
  "expected 'Flashed $NEW2' in boot 2 and state.json running $NEW after it (a reset would have started $NEW2); flashed: $STORED2; running $STATE_RUNNING2"
no_oops 2 "$L2"

# --- boot 3 ---
functions_of "$L3"
APPLY1=$(output "$L3" "ocetool --json apply" 1)
APPLY2=$(output "$L3" "ocetool --json apply" 2)
MSG=$(json reset_refused "$L3" | jq -r '.error.message // .error // empty' 2>/dev/null)
set -- $(value refused_port1 "$L3")
IF1=$(value netdevs3 "$L3" | awk '{print $2}')
R=0; [ "$(rc reset_refused "$L3")" = 4 ] && echo "$MSG" | grep -qF "$F1" && echo "$MSG" | grep -qwF "$IF1" &&
  echo "$MSG" | grep -qF 'sysfs backend' || R=1
check "reset-refused-sysfs reset on $F0 (sysfs backend) while $F1 stays on be2net: refused (exit 4), naming $F1 and $IF1" $R \
  "expected exit 4 naming $F1 and $IF1 and the sysfs backend; rc $(rc reset_refused "$L3"): $(echo "$MSG" | short)"
R=0; [ "$(rc after_refused "$L3")" = 0 ] && json after_refused "$L3" | jq -e --arg r "$NEW" --arg s "$NEW2" '
  .firmware.running == $r and .firmware.stored == $s and .profile.active.roce == false' >/dev/null &&
  [ "${1:-}" = 1 ] && [ "${2:-}" = 0 ] || R=1
check "nothing-written-sysfs after the refusal $NEW and NIC still run ($NEW2 waits), and be2net on $F1 takes $IF1 down and up again without an error" $R \
  "expected running $NEW, stored $NEW2, NIC active, carrier 1 and no be2net error for $F1; query: $(json after_refused "$L3" | jq -c '{firmware, active: .profile.active.id}' 2>&1 | short); port 1: carrier ${1:-?}, ${2:-?} errors: $(grep '^GUEST-REFUSED-ERR' "$L3" | head -2 | tr '\n' '|')"
R=0; echo "$APPLY1" | jq -e --arg b "$F1" '[.adapters[].actions[]] | any(test("^made .*the next-boot profile")) and
  any(test("^reset postponed: " + $b + " \\(be2net"))' >/dev/null || R=1
check "apply-postpones apply with $F1 on be2net: RoCE made the next profile, the reset postponed naming $F1 (be2net)" $R \
  "expected an action 'made ... the next-boot profile' and 'reset postponed: $F1 (be2net...'; the report: $(echo "$APPLY1" | jq -c '[.adapters[] | {device, actions}]' 2>&1 | short)"
STATE_MODE=$(qemu_state_function_mode "$STATE")
STATE_RUNNING3=$(qemu_state "$STATE" .runtime.running_version)
R=0; echo "$APPLY2" | jq -e '[.adapters[].actions[]] | any(test("^reset the chip: "))' >/dev/null &&
  [ "$STATE_MODE" = 6 ] && [ "$STATE_RUNNING3" = "$NEW2" ] || R=1
check "apply-activates with both functions free, apply resets the chip: RoCE (function mode 0x$STATE_MODE) and $STATE_RUNNING3 run (state file)" $R \
  "expected 'reset the chip: ...' and state.json RoCE (0x6) running $NEW2; the report: $(echo "$APPLY2" | jq -c '[.adapters[] | {device, actions}]' 2>&1 | short); state: 0x$STATE_MODE $STATE_RUNNING3"
R=0; [ "$(grep -c "^GUEST-ROCE .*be2net $F0: FW config: function_mode=0x6," "$L3")" = 1 ] &&
  [ "$(grep -c "^GUEST-ROCE .*be2net $F1: FW config: function_mode=0x6," "$L3")" = 1 ] || R=1
check "roce-both bound again, be2net probes both functions in RoCE mode (function_mode=0x6)" $R \
  "expected one 'FW config: function_mode=0x6' line per function; saw: $(grep '^GUEST-ROCE' "$L3" | tr '\n' '|' | cut -c1-280)"
# What be2net on port 1 did after a chip reset it did not start: recovered (its recovery path's
# lines) or reported (an error line of its own); silence, or a port that kept working as if
# nothing happened, fails: the reset took its queues.
AFTER=$(grep '^GUEST-AFTER-RESET' "$L3" | sed 's/^GUEST-AFTER-RESET //')
set -- $(value reset_written "$L3")
if echo "$AFTER" | grep -qiE 'recover(y|ed) (successful|done)|Adapter recovered'; then HOW=recovered; else HOW=reported; fi
FIRST=$(echo "$AFTER" | grep -vE 'whole-card' | head -1 | sed 's/^\[ *[0-9.]*\] //')
R=0; [ "${1:-}" = 0 ] && [ -n "$FIRST" ] || R=1
check "chip-reset-other a chip reset through $F0 under be2net on $F1: $HOW by be2net (${FIRST:-nothing})" $R \
  "expected be2net on $F1 to recover or report the reset written through $F0 (${2:-?}); its lines after the reset: $(echo "$AFTER" | head -6 | tr '\n' '|')"
set -- $(value rebound "$L3")
R=0; [ "${1:-}" = be2net ] && [ -n "${2:-}" ] && [ "${3:-}" = 1 ] || R=1
check "rebind-recovers unbinding and binding $F1 again gives be2net a working port (${2:-no netdev}, carrier ${3:-?})" $R \
  "expected be2net, a netdev with carrier 1; saw: $*; be2net: $(grep '^GUEST-REBIND' "$L3" | tail -3 | tr '\n' '|')"
no_oops 3 "$L3"

# --- host ---
# The host's query while the server held the card (before boot 1): each served port's MAC.
set -- $(value netdevs "$L1")
HOSTMACS=$(jq -r '[.ports[].mac] | join(" ")' "$WORK/host-query1.json" 2>/dev/null)
R=0; jq -e '.source == "server"' "$WORK/host-query1.json" >/dev/null 2>&1 && [ "$HOSTMACS" = "${2:-} ${4:-}" ] || R=1
check "host-macs the host's ocetool query, served, names each port's MAC as be2net has it ($HOSTMACS)" $R \
  "expected source server and ports' MACs '${2:-} ${4:-}' (be2net's on both functions); saw source $(jq -r .source "$WORK/host-query1.json" 2>&1 | head -1), MACs '$HOSTMACS'"
R=0; for n in 1 2 3; do
  [ "${SERVER_RC[$n]}" = 0 ] && grep -q '"outcome": "disconnected"' "$WORK/server$n.log" || R=1
done
check "server-ended each boot's server ended with its VM (exit ${SERVER_RC[*]})" $R \
  "expected exit 0 and outcome disconnected three times; the last lines: $(tail -3 "$WORK/server3.log" | tr '\n' '|')"

{ section "$L1"; section "$L2"; section "$L3"; } >"$TRANSCRIPT"
qemu_say "transcript: $TRANSCRIPT"
grep -hE '^GUEST-(CHECK|EVIDENCE)' "$L1" "$L2" "$L3" >>"$LOG"
grep -hE '^(GUEST-CHECK|GUEST-VALUE|GUEST-BAD|GUEST-AFTER-RESET)' "$L1" "$L2" "$L3" "$LOG" | sort -u
QRC=$((QRCS[1] | QRCS[2] | QRCS[3]))
echo "GUEST-DONE" >>"$LOG"
qemu_summary whole-card-qemu "$LOG" "$CHECKS"
