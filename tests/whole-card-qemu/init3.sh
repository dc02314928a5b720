#!/bin/busybox sh
# Boot 3 of tests/whole-card-qemu/run.sh, whose header says what each boot checks:
# no vIOMMU (the sysfs backend).
. /lib/guest.sh
. /lib/common.sh
echo "GUEST: boot 3 (no IOMMU), functions ${F0:-none} ${F1:-none}"
echo "GUEST-VALUE fns=$F0 $F1"
echo 1 >/proc/sys/vm/nr_hugepages
t "insmod /be2net.ko"
wait_for 30 both_netdevs
N0=$(nd "$F0") N1=$(nd "$F1")
echo "GUEST-VALUE netdevs3=$N0 $N1"
t "ip link set $N1 up"
wait_for 20 carrier "$N1"
note "Port 0 given up by hand, port 1 on be2net; no IOMMU: ocetool's sysfs backend."
t "echo $F0 > /sys/bus/pci/drivers/be2net/unbind"
mark refused
t "ocetool --device $F0 --yes reset"
doc reset_refused --device "$F0" --yes reset
doc after_refused --device "$F0" query
ip link set "$N1" down; ip link set "$N1" up; wait_for 20 carrier "$N1"
errors_since refused "$F1" | sed 's/^/GUEST-REFUSED-ERR /'
echo "GUEST-VALUE refused_port1=$(cat /sys/class/net/$N1/carrier) $(errors_since refused "$F1" | wc -l)"
note "The configuration names the card; port 1 still on be2net."
t "cat /etc/ocetool/ocetool.toml"
t "ocetool --json apply"
note "Port 1 given up too."
t "echo $F1 > /sys/bus/pci/drivers/be2net/unbind"
t "ocetool --json apply"
mark roce
bind "$F0"; bind "$F1"
wait_for 60 both_netdevs
N0=$(nd "$F0") N1=$(nd "$F1")
since roce | grep -E 'function_mode' | sed 's/^/GUEST-ROCE /'
t "ip link set $N1 up"
wait_for 20 carrier "$N1"
note "A chip reset through port 0, written by hand, while port 1 stays on be2net."
unbind "$F0"
mark chip-reset
v=$(od -An -tu4 -j92 -N4 "/sys/bus/pci/devices/$F0/config" | tr -d ' ')
v=$((v | 0x80))
printf "$(printf '\\%03o\\%03o\\%03o\\%03o' $((v & 255)) $((v >> 8 & 255)) $((v >> 16 & 255)) $((v >> 24 & 255)))" |
  dd of="/sys/bus/pci/devices/$F0/config" bs=4 seek=23 count=1 conv=notrunc 2>/dev/null
echo "GUEST-VALUE reset_written=$? $(printf 0x%08x $v)"
sleep 5
timeout 120 ip link set "$N1" down; timeout 120 ip link set "$N1" up
sleep 5
echo "GUEST-VALUE after_chip_reset=$(cat /sys/class/net/$N1/carrier 2>&1) $(cat /sys/class/net/$N1/operstate 2>&1)"
since chip-reset | grep -E "$F1" | sed 's/^/GUEST-AFTER-RESET /'
mark rebind
unbind "$F1"; bind "$F1"
wait_for 60 sh -c "[ -n \"\$(ls /sys/bus/pci/devices/$F1/net 2>/dev/null)\" ]"
N1=$(nd "$F1")
ip link set "$N1" up; wait_for 20 carrier "$N1"
echo "GUEST-VALUE rebound=$(drv "$F1") $N1 $(cat /sys/class/net/$N1/carrier 2>&1)"
since rebind | grep -E "$F1" | sed 's/^/GUEST-REBIND /'
splats
be2net_lines 3
finish
