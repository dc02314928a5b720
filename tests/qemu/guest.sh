# Sourced by a guest's /init (copied to /lib/guest.sh by qemu_initramfs): busybox applets, the
# pseudo file systems, the modules in /lib/modules in their numbered order, and helpers:
#   check "ID TEXT" RC [EVIDENCE]
#                        prints GUEST-CHECK PASS|FAIL ID TEXT (the host counts these by ID); a failed
#                        check also prints EVIDENCE (what was expected, what was seen) as
#                        GUEST-EVIDENCE ID lines, which the host's summary shows under it
#   find_dev VEN DEV     the address of the first PCI function with these IDs (0x1234 0x0ce0)
#   pci_ids              every PCI function's address and IDs on one line (a check's evidence)
#   drv BDF              the driver bound to BDF, or none
#   to_vfio BDF          binds BDF to vfio-pci (driver_override + drivers_probe)
#   doc NAME ARGS...     runs `ocetool --json ARGS` and prints its document between markers, with
#                        its exit code (qemu_json / qemu_rc read them on the host)
#   t COMMAND...         runs a shell command line (after $T_PRELUDE, shell definitions a script
#                        sets, e.g. functions naming Debian's tools where busybox's shell would
#                        run its own applets) and puts it and its output in the transcript
#                        ("GUEST-T # COMMAND", then "GUEST-T " lines, then "(exit N)" if it
#                        failed); returns its status
#   note TEXT            a blank line and "# TEXT" in the transcript
#   finish               prints GUEST-DONE and powers off
/bin/busybox mkdir -p /sbin /usr/bin /usr/sbin
/bin/busybox --install -s
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for m in /lib/modules/*.ko; do [ -e "$m" ] && { insmod "$m" || echo "GUEST: insmod $m failed"; }; done
check() {
  if [ "$2" = 0 ]; then
    echo "GUEST-CHECK PASS $1"
  else
    echo "GUEST-CHECK FAIL $1"
    [ -z "$3" ] || printf '%s\n' "$3" | head -12 | cut -c1-300 | sed "s/^/GUEST-EVIDENCE ${1%% *} /"
  fi
}
find_dev() {
  for d in /sys/bus/pci/devices/*; do
    [ "$(cat "$d/vendor")" = "$1" ] && [ "$(cat "$d/device")" = "$2" ] && { echo "${d##*/}"; return; }
  done
}
pci_ids() { for d in /sys/bus/pci/devices/*; do printf '%s=%s:%s ' "${d##*/}" "$(cat "$d/vendor")" "$(cat "$d/device")"; done; }
drv() { if [ -e "/sys/bus/pci/devices/$1/driver" ]; then basename "$(readlink "/sys/bus/pci/devices/$1/driver")"; else echo none; fi; }
to_vfio() {
  echo vfio-pci >"/sys/bus/pci/devices/$1/driver_override"
  echo "$1" >/sys/bus/pci/drivers_probe
  [ "$(drv "$1")" = vfio-pci ]
}
doc() {
  name=$1; shift
  echo "GUEST-JSON-BEGIN $name"; ocetool --json "$@"; rc=$?; echo; echo "GUEST-JSON-END $name rc=$rc"
}
t() {
  echo "GUEST-T # $*"
  sh -c "${T_PRELUDE:-:}; $*" </dev/null >/tmp/t.out 2>&1; rc=$?
  sed 's/^/GUEST-T /' /tmp/t.out
  [ "$rc" = 0 ] || echo "GUEST-T (exit $rc)"
  return $rc
}
note() { echo "GUEST-T"; echo "GUEST-T # $*"; }
finish() { echo "GUEST-DONE"; poweroff -f; }
