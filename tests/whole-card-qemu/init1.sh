#!/bin/busybox sh
# Boot 1 of tests/whole-card-qemu/run.sh, whose header says what each boot checks:
# the card behind a PCIe-to-PCI bridge, one IOMMU group.
. /lib/guest.sh
. /lib/common.sh
echo "GUEST: boot 1, functions ${F0:-none} ${F1:-none}, IOMMU groups $(ls /sys/kernel/iommu_groups | tr '\n' ' ')"
echo "GUEST-VALUE fns=$F0 $F1"
note "One card, two functions behind a PCIe-to-PCI bridge: one IOMMU group."
t "ocetool list"
doc list list
t "insmod /be2net.ko"
wait_for 30 both_netdevs
N0=$(nd "$F0") N1=$(nd "$F1")
echo "GUEST-VALUE netdevs=$N0 $(cat /sys/class/net/$N0/address) $N1 $(cat /sys/class/net/$N1/address)"
note "Port 0 cabled to port 1: port 1 in its own network namespace."
t "ip netns add p1 && ip link set $N1 netns p1 && ip -n p1 addr add 10.77.0.2/24 dev $N1 && ip -n p1 link set $N1 up"
t "ip addr add 10.77.0.1/24 dev $N0 && ip link set $N0 up"
wait_for 20 carrier "$N0"
wait_for 20 sh -c "/bin/ip -n p1 link show $N1 | grep -q LOWER_UP"
t "ping -c 3 -W 5 10.77.0.2"
echo "GUEST-VALUE ping_rc=$?"
echo "GUEST-VALUE neighbour=$(ip neigh show 10.77.0.2 dev $N0 | awk '{for (i = 1; i < NF; i++) if ($i == "lladdr") print $(i + 1)}')"
t "ip netns del p1"
wait_for 20 both_netdevs
N1=$(nd "$F1")
note "Without --yes (and no terminal to ask on) the hand-off is refused, naming what would go down."
t "ocetool --device $F0 --unbind query"
note "Port 0 given up by hand: port 1 on be2net still holds the IOMMU group they share."
t "echo $F0 > /sys/bus/pci/drivers/be2net/unbind"
t "ocetool --device $F0 query"
t "echo $F0 > /sys/bus/pci/drivers_probe"
wait_for 30 both_netdevs
N0=$(nd "$F0")
echo "GUEST-VALUE netdevs_now=$N0 $N1"
note "The hand-off takes the IOMMU group: both functions of the card."
t "ocetool --device $F0 --unbind --yes query"
wait_for 30 both_netdevs
during unbind doc unbind_query --device "$F0" --unbind --yes query
wait_for 30 both_netdevs
echo "GUEST-VALUE after_unbind=$(where)"
note "New firmware through port 0; port 1, given back to be2net, reads the flash they share."
t "ocetool --device $F0 --unbind --yes fw update /lib/firmware/image.ufi"
wait_for 30 both_netdevs
doc fw_f1 --device "$F1" query
note "A reset through port 0: the hand-off takes the whole card, so nothing holds it."
mark reset-whole
t "ocetool --device $F0 --unbind --yes reset"
wait_for 30 both_netdevs
echo "GUEST-VALUE after_reset=$(where)"
since reset-whole | grep -E 'FW version is' | sed 's/^/GUEST-RESET-WHOLE /'
splats
be2net_lines 1
finish
