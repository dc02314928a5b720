# Sourced by each boot's /init (tests/whole-card-qemu/init*.sh) after /lib/guest.sh: the card's two
# functions in $F0 and $F1, and the helpers the boots share.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
# Debian's iproute2 (network namespaces), never busybox's applet of that name (busybox's shell
# runs its own applets before anything on PATH, functions before both).
T_PRELUDE='ip() { /bin/ip "$@"; }'
eval "$T_PRELUDE"
dmesg -n 1
# The card's functions in address order: port 0, port 1.
set -- $(for d in /sys/bus/pci/devices/*; do
  [ "$(cat "$d/vendor")/$(cat "$d/device")" = 0x10df/0x0720 ] && echo "${d##*/}"; done | sort)
F0=${1:-} F1=${2:-}
nd() { ls "/sys/bus/pci/devices/$1/net" 2>/dev/null | head -1; }
ovr() { cat "/sys/bus/pci/devices/$1/driver_override" 2>/dev/null; }
mark() { echo "whole-card: $1" >/dev/kmsg; }
since() { dmesg | sed -n "/whole-card: $1\$/,\$p"; }
# errors_since MARK BDF: the error and warning lines (priority 0-4) naming BDF since MARK.
errors_since() { dmesg -r | sed -n "/whole-card: $1\$/,\$p" | grep -E '^<[0-4]>' | grep -F "$2"; }
wait_for() {
  n=$(($1 * 10)); shift
  while [ "$n" -gt 0 ]; do "$@" && return 0; sleep 0.1; n=$((n - 1)); done
  return 1
}
both_netdevs() { [ -n "$(nd "$F0")" ] && [ -n "$(nd "$F1")" ]; }
carrier() { [ "$(cat "/sys/class/net/$1/carrier" 2>/dev/null)" = 1 ]; }
# Where both functions are: "driver/override driver/override netdev0 netdev1".
where() { echo "$(drv "$F0")/$(ovr "$F0") $(drv "$F1")/$(ovr "$F1") $(nd "$F0") $(nd "$F1")"; }
# during NAME COMMAND...: runs COMMAND while a sampler records every change of both functions'
# drivers (every 0.05 s), then prints GUEST-VALUE drv_NAME=, the states in order, "|"-separated.
during() {
  seen=$1; shift
  (last=; while :; do now="$(drv "$F0")/$(ovr "$F0") $(drv "$F1")/$(ovr "$F1")"
    [ "$now" = "$last" ] || { echo "$now" >>"/tmp/drv.$seen"; last=$now; }; sleep 0.05; done) & w=$!
  "$@"; r=$?
  sleep 0.2; kill $w; wait $w 2>/dev/null
  echo "GUEST-VALUE drv_$seen=$(tr '\n' '|' <"/tmp/drv.$seen")"
  return $r
}
be2net_lines() { dmesg | grep -E 'be2net' | sed "s/^/GUEST-DMESG$1 /"; }
splats() { dmesg | grep -E 'BUG:|Oops|Call Trace|general protection|Kernel panic' | sed 's/^/GUEST-BAD /'; }
unbind() { echo "$1" >/sys/bus/pci/drivers/be2net/unbind; }
bind() { echo "$1" >/sys/bus/pci/drivers_probe; }
