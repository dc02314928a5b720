#!/bin/busybox sh
# One end of the mixed pair: be2net on the emulated adapter (10.0.0.1) or QEMU's virtio-net
# (10.0.0.2, dp.nic=virtio), joined by -netdev dgram: ping both ways, 16 MiB each way over TCP.
. /lib/guest.sh
. /lib/common.sh
case $(cat /proc/cmdline) in
  *dp.nic=virtio*) NIC=virtio; BDF=$(find_dev 0x1af4 0x1000) ;;
  *) NIC=be2net; BDF=$(find_dev 0x10df 0x0720) ;;
esac
IF=$(netdev_of "$BDF")
# virtio-net's netdev hangs below its virtio device, below the PCI function.
[ -n "$IF" ] || IF=$(ls "/sys/bus/pci/devices/$BDF"/virtio*/net 2>/dev/null | head -1)
echo "GUEST: $NIC at ${BDF:-none}, netdev ${IF:-none}, $ME -> $PEER"
up "$ME"
barrier pair-up
ping_check "virtio-ping-$NIC ping $ME -> $PEER ($NIC's side)" -c 3 -w 30 "$PEER"
barrier pair-ping-done
if [ "$NIC" = be2net ]; then
  barrier pair-tcp-1; tcp_send 5001 pair_to_virtio; barrier pair-tcp-1-done
  tcp_listen 5002; barrier pair-tcp-2; tcp_received pair_from_virtio; barrier pair-tcp-2-done
else
  tcp_listen 5001; barrier pair-tcp-1; tcp_received pair_to_virtio; barrier pair-tcp-1-done
  barrier pair-tcp-2; tcp_send 5002 pair_from_virtio; barrier pair-tcp-2-done
fi
dmesg_check "dmesg-clean-$NIC"
barrier pair-end
finish
