#!/bin/sh
# Test only: installed by tests/initramfs-qemu/run.sh as
# /etc/initramfs-tools/scripts/init-premount/ocetool-test of the Debian root it builds an initramfs
# from, and as a pre-mount hook of a test-only dracut module. initramfs-tools runs it after
# init-top/udev (udev's coldplug, which loads be2net through the modprobe.d install line, and
# `udevadm settle`) and after /conf/modules; dracut after its udev's coldplug, so it waits for
# udev's queue first. It prints what the initramfs' own udev and ocetool's boot hook did, then
# powers the guest off before any root is mounted, so nothing but the initramfs ever ran.
PREREQ=""
prereqs() { echo "$PREREQ"; }
case ${1:-} in
    prereqs)
        prereqs
        exit 0
        ;;
esac

udevadm settle --timeout=170 >/dev/null 2>&1
echo "GUEST: in the initramfs, kernel $(uname -r)"
dmesg | grep -E 'be2net|ocrdma|ocetool-apply' | sed 's/^/GUEST-DMESG /'
if [ -d /sys/module/be2net ]; then loaded=yes; else loaded=no; fi
echo "GUEST-VALUE be2net_loaded=$loaded"
echo "GUEST-VALUE infiniband=$(ls /sys/class/infiniband 2>/dev/null | tr '\n' ' ')"
for f in last-apply.json last-run initramfs-manifest; do
    echo "GUEST-JSON-BEGIN $f"
    cat "/run/ocetool/$f" 2>/dev/null
    rc=$?
    echo
    echo "GUEST-JSON-END $f rc=$rc"
done
echo "GUEST-DONE"
echo o >/proc/sysrq-trigger
sleep 60
