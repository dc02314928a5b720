#!/usr/bin/env bash
# The RoCE workflow end to end in a real kernel: the emulated adapter served over vfio-user
# (`ocetool --device emu:DIR emulator serve`), the Debian kernel's own be2net and ocrdma, Debian's
# kmod and rdma-core userspace, and the project's static ocetool with the packaged modprobe hook,
# installed at their real paths. Two boots of one guest (q35 under TCG, 2 vCPUs so be2net gives
# RoCE 2 MSI-X vectors), sharing the adapter's state directory:
#
# Boot 1, no vIOMMU (a host without an IOMMU: ocetool's sysfs backend), a factory-fresh adapter
# (NIC profile) and /etc/ocetool/ocetool.toml asking for `profile = "roce"`, `activate = "reset"`:
#   - `ocetool list` says the function would use the sysfs backend, as it has no IOMMU group;
#   - a plain `modprobe be2net` runs the hook, which runs `ocetool apply` first (set-profile roce,
#     chip reset; /run/ocetool/last-apply.json says changed); be2net then probes in RoCE mode:
#     `FW config: function_mode=0x6` (the RDMA bit 0x4) and `enabled 2 MSI-x vector(s) for RoCE`;
#   - `modprobe ocrdma` registers ocrdma0: `ibv_devices` lists it; with the link up, `ibv_devinfo`
#     shows port 1 PORT_ACTIVE with link_layer Ethernet; be2net's and ocrdma's interrupts are on
#     vectors of their own (no MSI-X request failure);
#   - `ocetool query` while be2net holds the function answers from the kernel (exit 0,
#     "source": "kernel", RoCE running on ocrdma0, the netdev, its link and speed, a note on how
#     to get the rest); the host compares its firmware (running and stored), MAC, link and speed
#     with the state file and the factory values (tests/qemu/lib.sh), not with the handlers;
#   - `ocetool --unbind --yes query` (text, then JSON) takes the function from be2net through the
#     sysfs backend (held unbound by driver_override `ocetool-hold` for the command): the adapter's
#     own answer, `handoff.backend` sysfs, `handoff.moved` naming be2net, the netdev and ocrdma0;
#     a sampler in the guest sees the function unbound and held during the command; then the
#     function is be2net's again, with its netdev and ocrdma0, no driver_override left.
# Boot 2, with the vIOMMU (VFIO), the adapter now in RoCE:
#   - `modprobe be2net` runs the hook again: nothing to change; be2net in RoCE mode, ocrdma0 again;
#   - `ocetool --unbind set-profile nic` without --yes is refused (exit 4), naming the netdev and
#     ocrdma0; with --yes it moves the adapter's IOMMU group to vfio-pci (the sampler sees it
#     there), names both in `handoff.moved`, and gives the function back to be2net (ocrdma0
#     comes back);
#   - `ocetool --unbind --yes reset` activates NIC; with the configuration now asking for `nic`,
#     reloading be2net and ocrdma gives function_mode 0x2, no RoCE vectors, no RDMA device.
# Then on the host: `ocetool --device emu:DIR query` shows the NIC profile active, and the server
# ended with the VM. The guest's commands and their output (text mode) are kept as a transcript
# ($TRANSCRIPT, default $WORK/transcript.txt), which the README's RoCE workflow section shows.
# Usage: tests/seed-workflow/run.sh   (KEEP_WORK=DIR keeps the work folder)
# Ends with "seed-workflow: N passed, M failed"; checks are counted by ID (a missing one fails,
# and so does a guest that never reached its checks); exits non-zero on any failure.
set -euo pipefail
. "$(dirname "$0")/../qemu/lib.sh"
CHECKS="adapter-present list-sysfs-backend hook-applies roce-mode roce-vectors ocrdma-registered ibv-devices
  ibv-devinfo own-vectors query-kernel fw-version mac-equal unbind-sysfs unbind-sysfs-restores no-oops-1
  quiet-drivers-1 hook-unchanged roce-again unbind-refused unbind-names unbind-restores reset-nic back-to-nic
  no-rdma-device no-oops-2 quiet-drivers-2 host-nic server-ended"
qemu_init seed-workflow "$CHECKS"

# The guest's userspace from Debian: kmod (modprobe reads /usr/lib/modprobe.d and runs the hook)
# and rdma-core's ibverbs-utils with the ocrdma provider, and the libraries they load.
GUEST_DEBS="kmod libkmod2 liblzma5 libssl3 libzstd1 libc6 ibverbs-utils ibverbs-providers libibverbs1
  libnl-3-200 libnl-route-3-200"
export QEMU_SMP=${QEMU_SMP:-2}

qemu_say "building ocetool (host and static guest build)"
(cd "$REPO" && cargo build --locked -q -p ocetool)
HOST_OCETOOL=$HOST_TARGET/debug/ocetool
GUEST_OCETOOL=$(qemu_guest_build -p ocetool --bin ocetool | awk '$1=="ocetool"{print $2}' | tail -1)
[ -x "$GUEST_OCETOOL" ] || { echo "seed-workflow: no guest ocetool built"; exit 2; }

LOG=$WORK/serial.log
LOG2=$WORK/serial2.log
STATE=$WORK/emu
TRANSCRIPT=${TRANSCRIPT:-$WORK/transcript.txt}
host() { "$HOST_OCETOOL" --device "emu:$STATE" "$@"; }
qemu_emulated_adapter "$HOST_OCETOOL" "$STATE" "$WORK/image.ufi"   # the image is not used here
# Port 0's link, which the kernel's answer in the guest must repeat: the factory link (lib.sh,
# from emulator/src/assumptions/), not an answer of the handlers be2net reads.
LINK_UP=$FACTORY_LINK_UP
SPEED=$FACTORY_SPEED_MBPS
# The function mode of the RoCE profile the configuration asks for: NIC+RDMA (design.md §6).
ROCE_MODE=6

# The guest's root: Debian's userspace, the modules where modprobe finds them (none loaded at
# boot), the packaged hook and modprobe.d file, ocetool, and the configuration.
ROOT=$WORK/root
qemu_debs "$ROOT" $GUEST_DEBS
rm -rf "$ROOT/usr/share" "$ROOT/usr/include" "$ROOT/etc/modprobe.d"
qemu_libs_resolve "$ROOT" bin/kmod usr/bin/ibv_devices usr/bin/ibv_devinfo || exit 2
MODDIR=lib/modules/$KVER
for m in $(for m in be2net ocrdma vfio-pci; do modprobe -d "$KROOT" -S "$KVER" --show-depends "$m"; done |
  awk '$1=="insmod"{print $2}' | sort -u); do
  rel=${m#"$KROOT/"}
  mkdir -p "$ROOT/$(dirname "$rel")"
  cp "$m" "$ROOT/$rel"
done
cp "$KROOT/$MODDIR"/modules.{builtin,builtin.modinfo,order} "$ROOT/$MODDIR/"
depmod -b "$ROOT" "$KVER"
install -D -m 0755 "$REPO/packaging/be2net-hook" "$ROOT/usr/lib/ocetool/be2net-hook"
install -D -m 0644 "$REPO/packaging/modprobe.d/ocetool.conf" "$ROOT/usr/lib/modprobe.d/ocetool.conf"
# Debian's merged /usr: /lib/modprobe.d, where kmod looks, is /usr/lib/modprobe.d.
cp -a "$ROOT/lib/modprobe.d/." "$ROOT/usr/lib/modprobe.d/" 2>/dev/null || true
rm -rf "$ROOT/lib/modprobe.d"
ln -s ../usr/lib/modprobe.d "$ROOT/lib/modprobe.d"
install -D -m 0755 "$GUEST_OCETOOL" "$ROOT/usr/bin/ocetool"
strip "$ROOT/usr/bin/ocetool" 2>/dev/null || true
mkdir -p "$ROOT/etc/ocetool"
cat >"$ROOT/etc/ocetool/ocetool.toml" <<'TOML'
# Every adapter: the RoCE profile, active before be2net binds it.
[[adapter]]
match = { all = true }
profile = "roce"
activate = "reset"
TOML

cat >"$WORK/common.sh" <<'COMMON'
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
dmesg -n 1   # the console carries the checks; kernel lines are read with dmesg
BDF=$(find_dev 0x10df 0x0720)
D=/sys/bus/pci/devices/$BDF
# The transcript's commands (guest.sh's t): Debian's kmod is the modprobe, rmmod and lsmod
# (busybox's shell would run its own applets by those names).
T_PRELUDE='modprobe() { /sbin/modprobe "$@"; }; rmmod() { /sbin/rmmod "$@"; }; lsmod() { /sbin/lsmod; }'
mark() { echo "seed-workflow: $1" >/dev/kmsg; }
since() { dmesg | sed -n "/seed-workflow: $1\$/,\$p"; }
netdev() { ls "$D/net" 2>/dev/null | head -1; }
wait_for() {
  n=$(($1 * 10)); shift
  while [ "$n" -gt 0 ]; do "$@" && return 0; sleep 0.1; n=$((n - 1)); done
  return 1
}
carrier() { [ "$(cat "/sys/class/net/$1/carrier" 2>/dev/null)" = 1 ]; }
# watch_drv FILE: the function's driver and driver_override, every change appended to FILE as
# "driver/override", sampled every 0.05 s until killed: where the function was during a command.
watch_drv() {
  last=
  while :; do
    now="$(drv "$BDF")/$(cat "$D/driver_override" 2>/dev/null)"
    [ "$now" = "$last" ] || { echo "$now" >>"$1"; last=$now; }
    sleep 0.05
  done
}
# during NAME COMMAND...: runs COMMAND with watch_drv on, then prints GUEST-VALUE drv_NAME=, the
# drivers the function had, in order.
during() {
  name=$1; shift
  : >/tmp/drv.$name
  watch_drv /tmp/drv.$name & w=$!
  "$@"; r=$?
  sleep 0.2; kill $w; wait $w 2>/dev/null
  echo "GUEST-VALUE drv_$name=$(tr '\n' ' ' </tmp/drv.$name)"
  return $r
}
splats() { dmesg | grep -E 'BUG:|Oops|Call Trace|general protection|Kernel panic' | sed 's/^/GUEST-BAD /'; }
# Error and warning lines (priority 0-4) of the drivers.
driver_errors() { dmesg -r | grep -E '^<[0-4]>' | grep -E "be2net|ocrdma|infiniband|$BDF"; }
COMMON

cat >"$WORK/init1" <<'INIT'
#!/bin/busybox sh
. /lib/guest.sh
. /lib/common.sh
echo "GUEST: kernel $(uname -r), $(nproc) CPUs, adapter at ${BDF:-nowhere}, $(ls /sys/kernel/iommu_groups | wc -l) IOMMU groups"
[ -n "$BDF" ]; check "adapter-present the served adapter is on the guest's PCI bus (10df:0720)" $? \
  "expected 0x10df:0x0720; saw $(pci_ids)"
if [ -n "$BDF" ]; then
  note "A host without an IOMMU, be2net not loaded; the adapter is factory-fresh (NIC profile)."
  t "cat /etc/ocetool/ocetool.toml"
  t "echo 1 > /proc/sys/vm/nr_hugepages"
  doc list list
  mark probe-roce
  t "modprobe be2net"
  t "cat /run/ocetool/last-apply.json"
  t "dmesg | grep -E 'function_mode|MSI-x'"
  IF=$(netdev)
  echo "GUEST-VALUE netdev=$IF"
  t "modprobe ocrdma"
  t "ibv_devices"
  t "ip link set dev $IF up"
  wait_for 20 carrier "$IF"
  t "ibv_devinfo -d ocrdma0"
  t "grep -E '$IF-q|ocrdma' /proc/interrupts"
  t "ocetool query"
  doc query query
  note "The rest is the firmware's to say: --unbind takes the function from be2net for the command."
  t "ocetool --unbind --yes query"
  during unbind_query doc unbind_query --unbind --yes query
  echo "GUEST-VALUE after_unbind=$(drv "$BDF") $(cat "$D/driver_override") $(netdev) $(ls /sys/class/infiniband | tr '\n' ' ')"
  splats
  since probe-roce | grep -E 'be2net|ocrdma|infiniband' | sed 's/^/GUEST-DMESG /'
  driver_errors | sed 's/^/GUEST-ERR /'
fi
finish
INIT

cat >"$WORK/init2" <<'INIT'
#!/bin/busybox sh
. /lib/guest.sh
. /lib/common.sh
echo "GUEST: kernel $(uname -r), $(nproc) CPUs, adapter at ${BDF:-nowhere} in IOMMU group $(basename "$(readlink "$D/iommu_group")")"
if [ -n "$BDF" ]; then
  note "Next boot, with an IOMMU: the adapter runs RoCE; be2net and ocrdma load as usual."
  mark probe-again
  t "modprobe be2net"
  cp /run/ocetool/last-apply.json /tmp/apply2.json
  t "modprobe ocrdma"
  t "ibv_devices"
  IF=$(netdev)
  echo "GUEST-VALUE netdev_before=$IF"
  note "Back to NIC: the profile, then a reset, each taking the adapter from be2net for the command."
  t "ocetool --unbind set-profile nic"
  during set_profile t "ocetool --json --unbind --yes set-profile nic"
  echo "GUEST-VALUE after_set_profile=$(drv "$BDF") $(netdev) $(ls /sys/class/infiniband | tr '\n' ' ')"
  mark reset
  t "ocetool --unbind --yes reset"
  echo "GUEST-VALUE after_reset=$(drv "$BDF") $(netdev) $(ls /sys/class/infiniband | tr '\n' ' ')"
  note "The configuration follows (or be2net's next load would switch back), then reload."
  t "sed -i 's/^profile = \"roce\"/profile = \"nic\"/' /etc/ocetool/ocetool.toml"
  mark reload-nic
  t "rmmod ocrdma be2net"
  t "modprobe be2net"
  cp /run/ocetool/last-apply.json /tmp/apply3.json
  t "modprobe ocrdma"
  t "dmesg | grep -E 'function_mode|MSI-x' | tail -2"
  since reload-nic | grep -E 'function_mode|MSI-x' | sed 's/^/GUEST-RELOAD /'
  t "ibv_devices"
  t "ls /sys/class/infiniband | wc -l"
  doc query_nic query
  for f in apply2 apply3; do echo "GUEST-JSON-BEGIN $f"; cat /tmp/$f.json; echo; echo "GUEST-JSON-END $f rc=0"; done
  since probe-again | grep -E 'function_mode|MSI-x|ocrdma0|MSIX|INTx' | sed 's/^/GUEST-DMESG /'
  driver_errors | sed 's/^/GUEST-ERR /'
  splats
fi
finish
INIT

qemu_initramfs "$WORK/initramfs1.cpio.gz" "$WORK/init1" --tree "$ROOT" --file "$WORK/common.sh:/lib/common.sh"
qemu_initramfs "$WORK/initramfs2.cpio.gz" "$WORK/init2" --tree "$ROOT" --file "$WORK/common.sh:/lib/common.sh"

qemu_serve "$WORK/server1.log" "$HOST_OCETOOL" --device "emu:$STATE" emulator serve --socket "$SOCK"
qemu_say "kernel $KVER; boot 1: no IOMMU, the hook switches to RoCE, ocrdma, ibv_devinfo"
QEMU_VIOMMU=off qemu_boot "$WORK/initramfs1.cpio.gz" "$LOG"
wait "$SERVER_PID" || true
QRC1=$QRC
# The host's checks: a grep that finds nothing fails its check, not the script (and not every
# check with it).
set +e
# The state the emulator saved when boot 1 ended: the profile the hook activated (design.md §6).
STATE_MODE1=$(qemu_state_function_mode "$STATE")

json() { qemu_json "$LOG" "$1"; }
rc() { qemu_rc "$LOG" "$1"; }
value() { sed -n "s/^GUEST-VALUE $1=//p" "$2" | tail -1; }
section() { sed -n 's/^GUEST-T \{0,1\}//p' "$1"; }
# output LOG COMMAND: what COMMAND printed in the transcript (up to the next "# " line);
# ran LOG COMMAND: COMMAND is in the transcript and exited 0 (`t` adds "(exit N)" otherwise).
# Both read all their input: a reader that stops early fails the pipeline under pipefail.
output() { section "$1" | awk -v c="# $2" 'on && /^# /{on = 0; done = 1} on{print} !done && $0 == c{on = 1}'; }
ran() {
  [ "$(section "$1" | grep -cxF "# $2")" -ge 1 ] && [ "$(output "$1" "$2" | grep -c '^(exit [0-9]*)$')" = 0 ]
}
# The kernel's lines the guest tagged (GUEST-DMESG: be2net, ocrdma and infiniband lines since the
# boot's mark), never the whole serial log.
dmesg_has() { grep -qE "^GUEST-DMESG .*$2" "$1"; }
dmesg_of() { grep -E "^GUEST-DMESG .*$2" "$1" | head -${3:-3}; }
# short DOC: a JSON document on one line, cut, as evidence.
short() { tr -d '\n' | tr -s ' ' | cut -c1-280; }
check1() { host_check "$LOG" "$1" "$2" "${3:-}"; }
FUNCTION='.adapters[].functions[] | select(.device_id == "0x0720")'
# An emulator gap, allowed but not required: the RDMA core's MAD agent needs a completion queue
# and QP1, which an emulator without CQ_CREATE version 3 and CREATE_QP refused
# (emulator/src/assumptions/rdma.rs, tests/README.md): up to three error lines per registration,
# which ibv_devices and ibv_devinfo do not depend on. Any other error or warning line of be2net or
# ocrdma fails.
MAD="Couldn't create ib_mad CQ|Couldn't open port 1|ocrdma_mbx_cmd\(\) cqe_status=0x2, ext_status=0x0,"
mad() { grep '^GUEST-ERR' "$1" | grep -cE "$MAD"; }
others() { grep '^GUEST-ERR' "$1" | grep -vE "$MAD"; }
# moved_and_back SEEN AWAY: the drivers the function had during a command (watch_drv's
# "driver/override" list, in order) include AWAY (vfio-pci, or unbound and held by
# driver_override ocetool-hold) and end on be2net with no override: the hand-off happened.
moved_and_back() {
  local seq=$1 away=$2
  echo " $seq" | grep -qE " $away" && [ "$(echo "$seq" | awk '{print $NF}')" = "be2net/(null)" ]
}

R=0; [ "$(rc list)" = 0 ] && json list |
  jq -e "[$FUNCTION | .backend == \"sysfs\" and (.backend_reason | test(\"no IOMMU group\"))] == [true]" >/dev/null || R=1
check1 "list-sysfs-backend list: the sysfs backend, because the function has no IOMMU group" $R \
  "expected backend sysfs, reason no IOMMU group; rc $(rc list): $(json list | jq -c "[$FUNCTION | {backend, backend_reason}]" 2>&1 | short)"
# The hook's report: one adapter, changed, with both actions the configuration asks for (the
# profile made next, then the chip reset that activates it) and nothing else.
APPLY=$(output "$LOG" "cat /run/ocetool/last-apply.json")
R=0; echo "$APPLY" | jq -e '.changed == true and (.adapters | length) == 1 and
  .adapters[0].error == null and (.adapters[0].actions | length == 2 and
  (.[0] | test("the next-boot profile$")) and (.[1] | test("^reset the chip: ")))' >/dev/null 2>&1 || R=1
ran "$LOG" "modprobe be2net" && output "$LOG" "modprobe be2net" |
  grep '^ocetool-apply: applied /etc/ocetool/ocetool.toml: exit 0 changed=true' >/dev/null || R=1
check1 "hook-applies a plain modprobe be2net ran the hook: ocetool apply set RoCE and reset the adapter first" $R \
  "expected the hook's line 'applied ... exit 0 changed=true' and a report with the profile and reset actions; modprobe printed: $(output "$LOG" "modprobe be2net" | head -3 | tr '\n' '|'); report: $(echo "$APPLY" | short)"
# be2net's own line from its probe after the hook (tagged GUEST-DMESG, since the probe-roce mark).
MODE=$(sed -n 's/^GUEST-DMESG .*FW config: function_mode=\(0x[0-9a-f]*\),.*/\1/p' "$LOG" | head -1)
R=0; [ -n "$MODE" ] && [ "$((MODE))" = "$ROCE_MODE" ] && [ "$STATE_MODE1" = "$ROCE_MODE" ] || R=1
check1 "roce-mode be2net probed with function_mode=${MODE:-none}: NIC+RDMA (0x$ROCE_MODE), the state file's active profile too" $R \
  "expected 0x$ROCE_MODE (design.md §6, the RoCE profile) in be2net's FW config line and from state.json's active pf_type; be2net: $(dmesg_of "$LOG" 'FW config' 1 || true); state.json: 0x$STATE_MODE1"
VEC=$(sed -n 's/^GUEST-DMESG .*enabled \([0-9]*\) MSI-x vector(s) for RoCE.*/\1/p' "$LOG" | head -1)
R=0; [ "${VEC:-0}" -ge 2 ] || R=1
check1 "roce-vectors be2net enabled ${VEC:-no} MSI-X vectors for RoCE (at least 2)" $R \
  "expected 'enabled N MSI-x vector(s) for RoCE' with N >= 2; be2net: $(dmesg_of "$LOG" 'MSI-x' 2 | tr '\n' '|')"
R=0; dmesg_has "$LOG" 'ocrdma0 driver loaded successfully' && ran "$LOG" "modprobe ocrdma" || R=1
check1 "ocrdma-registered modprobe ocrdma registered ocrdma0" $R \
  "expected 'ocrdma0 driver loaded successfully' and modprobe ocrdma exit 0; ocrdma: $(dmesg_of "$LOG" ocrdma 2 | tr '\n' '|'); modprobe: $(output "$LOG" "modprobe ocrdma" | head -2 | tr '\n' '|')"
DEVICES=$(section "$LOG" | sed -n '/^# ibv_devices$/,/^# /p')
R=0; echo "$DEVICES" | grep -qE '^[[:space:]]+ocrdma0[[:space:]]+[0-9a-f]{16}$' || R=1
check1 "ibv-devices ibv_devices lists ocrdma0" $R "expected a line 'ocrdma0 <16 hex digits>'; ibv_devices: $(echo "$DEVICES" | tr '\n' '|' | cut -c1-280)"
DEVINFO=$(section "$LOG" | sed -n '/^# ibv_devinfo -d ocrdma0$/,/^# /p')
R=0; echo "$DEVINFO" | grep -qE 'state:[[:space:]]+PORT_ACTIVE' && echo "$DEVINFO" | grep -qE 'link_layer:[[:space:]]+Ethernet' || R=1
check1 "ibv-devinfo ibv_devinfo opens ocrdma0: port PORT_ACTIVE, link_layer Ethernet" $R \
  "expected state PORT_ACTIVE, link_layer Ethernet; ibv_devinfo: $(echo "$DEVINFO" | grep -E 'state|link_layer|exit|rror' | tr -s ' ' | tr '\n' '|')"
IRQS=$(section "$LOG" | sed -n '/^# grep .* \/proc\/interrupts$/,/^# /p' | grep -E 'PCI-MSI')
VECTORS=$(echo "$IRQS" | grep -oE 'PCI-MSI [0-9]+' | sort -u | wc -l)
R=0; echo "$IRQS" | grep -q -- '-q0$' && echo "$IRQS" | grep -q 'ocrdma0-0$' && [ "$VECTORS" = "$(echo "$IRQS" | wc -l)" ] &&
  ! grep -qE '^GUEST-DMESG .*(MSIX Request IRQ failed|INTx)' "$LOG" || R=1
check1 "own-vectors be2net's and ocrdma's interrupts each on a vector of its own ($VECTORS MSI-X vectors in /proc/interrupts)" $R \
  "expected a -q0 and an ocrdma0-0 line, each on its own vector, no MSI-X failure; /proc/interrupts: $(echo "$IRQS" | awk '{print $(NF-2), $(NF-1), $NF}' | tr '\n' '|'); failures: $(dmesg_of "$LOG" 'MSIX Request IRQ failed|INTx' 2 | tr '\n' '|')"
# The kernel's answer: port 0 as be2net and sysfs have it (the netdev the guest saw, the factory
# link and speed), the firmware's fields null, and the note naming the way to them.
IF1=$(value netdev "$LOG")
R=0; [ -n "$IF1" ] && [ "$(rc query)" = 0 ] && json query | jq -e --arg n "$IF1" --argjson up "$LINK_UP" \
  --argjson speed "$SPEED" '.source == "kernel" and .roce_enabled == true and .driver.name == "be2net" and
  .driver.rdma_devices[0].name == "ocrdma0" and .profile == null and .function_mode == null and
  .ports[0].netdev == $n and .ports[0].link_up == $up and .ports[0].speed_mbps == $speed and
  (.note | test("`ocetool --unbind query` reads them through the mailbox") and
    test("taking \($n) down") and (test("no firmware version") | not))' >/dev/null || R=1
check1 "query-kernel query while be2net holds the function: exit 0 from the kernel, RoCE on ocrdma0, ${IF1:-no netdev} link $LINK_UP at $SPEED Mb/s, the note" $R \
  "expected source kernel, RoCE on ocrdma0, port 0 $IF1 link $LINK_UP $SPEED Mb/s (the factory link); rc $(rc query): $(json query | jq -c '{source, roce_enabled, driver: .driver.name, rdma: .driver.rdma_devices, port: .ports[0], function_mode}' 2>&1 | short)"
KRUN=$(json query | jq -r .firmware.running); KSTORED=$(json query | jq -r .firmware.stored)
R=0; [ "$KRUN" = "$RUNNING" ] && [ "$KSTORED" = "$FACTORY" ] || R=1
check1 "fw-version the kernel's firmware running $KRUN, stored $KSTORED are the state file's running and the factory version ($RUNNING, $FACTORY)" $R \
  "expected running $RUNNING (state.json) and stored $FACTORY (FACTORY_FIRMWARE_VERSION); the kernel said $KRUN, $KSTORED"
KMAC=$(json query | jq -r '.ports[0].mac')
R=0; [ "$KMAC" = "$MAC" ] || R=1
check1 "mac-equal the kernel's ports[0].mac ($KMAC) is the state file's identity.macs[0] ($MAC)" $R \
  "expected $MAC (state.json identity.macs[0]; port 1's is $MAC1); the kernel said $KMAC"
# The sysfs backend's hand-off from a live be2net: the function held unbound for the command
# (driver_override ocetool-hold, which no driver matches, seen by the guest's sampler), then given
# back; ocetool's report of it must name what moved.
DRV1=$(value drv_unbind_query "$LOG")
R=0; ran "$LOG" "ocetool --unbind --yes query" && output "$LOG" "ocetool --unbind --yes query" |
  grep -F "Driver hand-off (sysfs backend): $(json unbind_query | jq -r .device) (be2net) given back" >/dev/null &&
  [ "$(rc unbind_query)" = 0 ] && json unbind_query | jq -e --arg n "$IF1" --argjson mode "$ROCE_MODE" '
  .source == "adapter" and .function_mode == $mode and .profile.active.roce == true and
  .handoff.backend == "sysfs" and (.handoff.moved | length) == 1 and
  (.handoff.moved[0] | .driver == "be2net" and .netdevs[0].name == $n and .rdma == ["ocrdma0"])' >/dev/null || R=1
check1 "unbind-sysfs query --unbind --yes (twice: text, JSON) through the sysfs backend: the adapter's answer (function mode 0x$ROCE_MODE), handoff.moved names be2net, ${IF1:-no netdev} and ocrdma0" $R \
  "expected the text's hand-off line and JSON source adapter, function_mode $ROCE_MODE, handoff sysfs moving be2net, $IF1, ocrdma0; rc $(rc unbind_query): $(json unbind_query | jq -c '{source, function_mode, handoff}' 2>&1 | short)"
R=0; set -- $(value after_unbind "$LOG")
MOVED1=$(json unbind_query | jq -r '.handoff.moved | length' 2>/dev/null)
[ "${MOVED1:-0}" -ge 1 ] && moved_and_back "$DRV1" 'none/ocetool-hold' &&
  [ "${1:-}" = be2net ] && [ "${2:-}" = "(null)" ] && [ -n "$IF1" ] && [ "${3:-}" = "$IF1" ] && [ "${4:-}" = ocrdma0 ] || R=1
check1 "unbind-sysfs-restores the function left be2net for the command (held by ocetool-hold) and is be2net's again, no driver_override, with ${IF1:-its netdev} and ocrdma0 ($*)" $R \
  "expected handoff.moved non-empty, the function seen unbound with override ocetool-hold then be2net/(null), and after: be2net (null) $IF1 ocrdma0; moved ${MOVED1:-none}, seen: ${DRV1:-nothing}; after: $*"
SPLATS1=$(grep '^GUEST-BAD' "$LOG")
R=0; [ -n "$SPLATS1" ] && R=1
[ "$QRC1" = 0 ] && grep -q '^GUEST-DONE' "$LOG" || R=1
check1 "no-oops-1 boot 1 finished (qemu rc $QRC1), no oops, BUG or panic" $R \
  "expected qemu rc 0, GUEST-DONE, no splat; qemu rc $QRC1, GUEST-DONE $(grep -c '^GUEST-DONE' "$LOG"), splats: ${SPLATS1:-none}"
OTHERS1=$(others "$LOG")
R=0; [ -z "$OTHERS1" ] || R=1
check1 "quiet-drivers-1 no error or warning from be2net or ocrdma but the MAD agent's, an emulator gap allowed ($(mad "$LOG") of its lines; no RDMA data path, tests/README.md)" $R \
  "expected no other error or warning line; saw: $(echo "$OTHERS1" | head -4 | tr '\n' '|')"

qemu_serve "$WORK/server2.log" "$HOST_OCETOOL" --device "emu:$STATE" emulator serve --socket "$SOCK"
qemu_say "boot 2: vIOMMU; the hook changes nothing; --unbind set-profile nic and reset; back to NIC"
qemu_boot "$WORK/initramfs2.cpio.gz" "$LOG2"
SERVER_RC=0; wait "$SERVER_PID" || SERVER_RC=$?
json2() { qemu_json "$LOG2" "$1"; }
check2() { host_check "$LOG" "$1" "$2" "${3:-}"; }

R=0; json2 apply2 | jq -e '.changed == false and .adapters[0].error == null' >/dev/null || R=1
check2 "hook-unchanged the hook's apply at the next boot: nothing to change (changed false)" $R \
  "expected changed false, no error; the report: $(json2 apply2 | short)"
R=0; grep -q "^GUEST-DMESG .*function_mode=0x$ROCE_MODE," "$LOG2" && grep -q '^GUEST-DMESG .*ocrdma0 driver loaded successfully' "$LOG2" || R=1
check2 "roce-again be2net in RoCE mode (0x$ROCE_MODE) and ocrdma0 registered again" $R \
  "expected function_mode=0x$ROCE_MODE and 'ocrdma0 driver loaded successfully'; saw: $(dmesg_of "$LOG2" 'function_mode|ocrdma0 driver' 3 | tr '\n' '|')"
REFUSAL=$(output "$LOG2" "ocetool --unbind set-profile nic")
IF2=$(value netdev_before "$LOG2")
R=0; [ -n "$IF2" ] && echo "$REFUSAL" | grep -qx '(exit 4)' && echo "$REFUSAL" | grep -qwF -- "$IF2" &&
  echo "$REFUSAL" | grep -qw ocrdma0 || R=1
check2 "unbind-refused --unbind without --yes: refused (exit 4), naming ${IF2:-no netdev} and ocrdma0" $R \
  "expected exit 4 naming $IF2 and ocrdma0; it printed: $(echo "$REFUSAL" | tr '\n' '|' | cut -c1-280)"
SET_PROFILE=$(section "$LOG2" | sed -n '/^# ocetool --json --unbind --yes set-profile nic$/,/^# /{/^#/d;p}')
R=0; echo "$SET_PROFILE" | jq -e --arg n "$IF2" '
  .changed == true and .handoff.backend == "vfio" and
  (.handoff.moved[0] | .driver == "be2net" and .netdevs[0].name == $n and .rdma == ["ocrdma0"])' >/dev/null 2>&1 || R=1
check2 "unbind-names set-profile nic --unbind --yes through VFIO: handoff.moved names be2net, the netdev and ocrdma0" $R \
  "expected changed true, handoff vfio moving be2net, $IF2, ocrdma0; saw: $(echo "$SET_PROFILE" | jq -c '{changed, handoff}' 2>&1 | short)"
DRV2=$(value drv_set_profile "$LOG2")
MOVED2=$(echo "$SET_PROFILE" | jq -r '.handoff.moved | length' 2>/dev/null)
R=0; set -- $(value after_set_profile "$LOG2")
[ "${MOVED2:-0}" -ge 1 ] && moved_and_back "$DRV2" 'vfio-pci/' && [ "${1:-}" = be2net ] && [ -n "${2:-}" ] &&
  [ "${3:-}" = ocrdma0 ] || R=1
check2 "unbind-restores the function was vfio-pci's for the command and is be2net's again, with its netdev and ocrdma0 ($*)" $R \
  "expected handoff.moved non-empty, the function seen on vfio-pci then be2net/(null), and after: be2net, a netdev, ocrdma0; moved ${MOVED2:-none}, seen: ${DRV2:-nothing}; after: $*"
RESET=$(section "$LOG2" | sed -n '/^# ocetool --unbind --yes reset$/,/^# /p')
R=0; set -- $(value after_reset "$LOG2")
echo "$RESET" | grep -q 'Function mode *0x2' && [ "${1:-}" = be2net ] || R=1
check2 "reset-nic reset --unbind --yes: NIC running (function mode 0x2), be2net bound again ($*)" $R \
  "expected 'Function mode 0x2' and be2net bound after; reset printed: $(echo "$RESET" | grep -iE 'function mode|exit|error' | tr '\n' '|'); after: $*"
R=0; grep -q '^GUEST-RELOAD .*function_mode=0x2,' "$LOG2" && ! grep -q '^GUEST-RELOAD .*for RoCE' "$LOG2" &&
  json2 apply3 | jq -e '.changed == false' >/dev/null || R=1
check2 "back-to-nic reloaded with the configuration on nic: function_mode 0x2, no RoCE vectors, the hook changed nothing" $R \
  "expected function_mode=0x2, no RoCE vectors, changed false; reload: $(grep '^GUEST-RELOAD' "$LOG2" | tr '\n' '|' | cut -c1-200); hook: $(json2 apply3 | jq -c '{changed}' 2>&1)"
IB=$(section "$LOG2" | sed -n '/^# ls \/sys\/class\/infiniband | wc -l$/{n;p}')
R=0; echo "$IB" | grep -qx 0 && json2 query_nic | jq -e '.source == "kernel" and .roce_enabled == false' >/dev/null || R=1
check2 "no-rdma-device ocrdma loaded, no RDMA device; query says RoCE not running" $R \
  "expected 0 RDMA devices and roce_enabled false from the kernel; devices: ${IB:-?}; query: $(json2 query_nic | jq -c '{source, roce_enabled}' 2>&1)"
SPLATS2=$(grep '^GUEST-BAD' "$LOG2")
R=0; [ -n "$SPLATS2" ] && R=1
[ "$QRC" = 0 ] && grep -q '^GUEST-DONE' "$LOG2" || R=1
check2 "no-oops-2 boot 2 finished (qemu rc $QRC), no oops, BUG or panic" $R \
  "expected qemu rc 0, GUEST-DONE, no splat; qemu rc $QRC, GUEST-DONE $(grep -c '^GUEST-DONE' "$LOG2"), splats: ${SPLATS2:-none}"
OTHERS2=$(others "$LOG2")
R=0; [ -z "$OTHERS2" ] || R=1
check2 "quiet-drivers-2 no error or warning from be2net or ocrdma through unbinds and reloads but the MAD agent's, an emulator gap allowed ($(mad "$LOG2") of its lines)" $R \
  "expected no other error or warning line; saw: $(echo "$OTHERS2" | head -4 | tr '\n' '|')"
R=0; host --json query >"$WORK/after.json" && jq -e '.roce_enabled == false and .profile.active.roce == false and
  .profile.next.roce == false' "$WORK/after.json" >/dev/null && [ "$(qemu_state_function_mode "$STATE")" = 2 ] || R=1
check2 "host-nic the host's query and the state file: NIC active and next" $R \
  "expected RoCE off, NIC active and next, state.json's active pf_type NIC; query: $(jq -c '{roce_enabled, active: .profile.active.id, next: .profile.next.id}' "$WORK/after.json" 2>&1); state.json: 0x$(qemu_state_function_mode "$STATE" 2>&1)"
R=0; [ "$SERVER_RC" = 0 ] && grep -q 'until the VM disconnected' "$WORK/server2.log" || R=1
check2 "server-ended the server ended with the VM (exit $SERVER_RC)" $R \
  "expected exit 0 and 'until the VM disconnected'; its last lines: $(tail -3 "$WORK/server2.log" | tr '\n' '|')"

{ section "$LOG"; section "$LOG2"; } >"$TRANSCRIPT"
qemu_say "transcript: $TRANSCRIPT"
grep -hE '^GUEST-(CHECK|EVIDENCE)' "$LOG2" >>"$LOG"
grep -hE '^(GUEST-CHECK|GUEST-VALUE|GUEST-BAD|GUEST-ERR)' "$LOG" "$LOG2" | grep -vE "$MAD" | sort -u
QRC=$((QRC1 | QRC))
qemu_summary seed-workflow "$LOG" "$CHECKS"
