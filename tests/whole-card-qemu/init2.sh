#!/bin/busybox sh
# Boot 2 of tests/whole-card-qemu/run.sh, whose header says what each boot checks:
# the card behind a PCIe root port, an IOMMU group per function.
. /lib/guest.sh
. /lib/common.sh
echo "GUEST: boot 2, functions ${F0:-none} ${F1:-none}, IOMMU groups $(ls /sys/kernel/iommu_groups | tr '\n' ' ')"
echo "GUEST-VALUE fns=$F0 $F1"
note "The card behind a PCIe root port: the kernel gives each Skyhawk-R function its own IOMMU group."
doc list list
t "insmod /be2net.ko"
wait_for 30 both_netdevs
N1=$(nd "$F1")
echo "GUEST-VALUE before=$(where) $(cat /sys/class/net/$N1/ifindex)"
during own doc unbind_query --device "$F0" --unbind --yes query
wait_for 30 both_netdevs
echo "GUEST-VALUE after_unbind=$(where) $(cat /sys/class/net/$N1/ifindex)"
note "Newer firmware through port 0 alone: fw update only stores, so port 1 may stay on be2net."
t "ocetool --device $F0 --unbind --yes fw update /lib/firmware/image2.ufi"
wait_for 30 both_netdevs
note "A reset through port 0 while port 1 stays on be2net."
t "ocetool --device $F0 --unbind --yes reset"
during refused doc reset_refused --device "$F0" --unbind --yes reset
echo "GUEST-VALUE after_refused=$(where) $(cat /sys/class/net/$N1/ifindex)"
splats
be2net_lines 2
finish
