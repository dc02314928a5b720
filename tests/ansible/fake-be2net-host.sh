#!/usr/bin/env bash
# Writes a fake sysfs + /dev + /proc tree into DIR: a two-port OCe14102 whose ports 0000:03:00.0
# and 0000:03:00.1 share IOMMU group 7 and are both bound to be2net, each with a network interface
# (ocefake0 up at 10 Gb/s, ocefake1 down), ocrdma loaded with its RDMA device ocrdma0 on port 0,
# and vfio-pci loaded. The layout is the one oce_pci::fake_sysfs::FakeTree writes for the CLI tests
# (pci/src/fake_sysfs.rs; this card is two_port_card() of cli/tests/driver_handoff.rs), so ocetool
# reads it through its hidden --sysfs-root/--dev-root/--proc-root flags. Nothing here acts on a
# write: a driver moved or an override set would stay in the files for the caller to see.
# Usage: fake-be2net-host.sh DIR
set -euo pipefail

root=$1
sys=$root/sys
mkdir -p "$root/proc" "$root/dev/vfio" "$sys/bus/pci/devices" "$sys/bus/pci/drivers" "$sys/kernel/iommu_groups" \
    "$sys/kernel/security" "$sys/devices/pci0000:00"
: >"$sys/bus/pci/drivers_probe"
: >"$root/dev/vfio/vfio"

driver() {
    mkdir -p "$sys/bus/pci/drivers/$1"
    : >"$sys/bus/pci/drivers/$1/bind"
    : >"$sys/bus/pci/drivers/$1/unbind"
}
driver vfio-pci
driver be2net
mkdir -p "$sys/module/be2net" "$sys/module/ocrdma"

# port ADDRESS GROUP DRIVER NETDEV MAC OPERSTATE [SPEED]
port() {
    local address=$1 group=$2 drv=$3 netdev=$4 mac=$5 operstate=$6 speed=${7:-}
    local real=$sys/devices/pci0000:00/$address
    mkdir -p "$real/net/$netdev"
    echo 0x10df >"$real/vendor"
    echo 0x0720 >"$real/device"
    echo 0x020000 >"$real/class"
    echo 0x10df >"$real/subsystem_vendor"
    echo 0xe702 >"$real/subsystem_device"
    echo "(null)" >"$real/driver_override"
    ln -s "../../../devices/pci0000:00/$address" "$sys/bus/pci/devices/$address"
    mkdir -p "$sys/kernel/iommu_groups/$group/devices"
    ln -s "../../../kernel/iommu_groups/$group" "$real/iommu_group"
    ln -s "../../../../devices/pci0000:00/$address" "$sys/kernel/iommu_groups/$group/devices/$address"
    ln -s "../../../bus/pci/drivers/$drv" "$real/driver"
    echo "$mac" >"$real/net/$netdev/address"
    echo "$operstate" >"$real/net/$netdev/operstate"
    if [ -n "$speed" ]; then
        echo 1 >"$real/net/$netdev/carrier"
        echo "$speed" >"$real/net/$netdev/speed"
    fi
}
port 0000:03:00.0 7 be2net ocefake0 00:00:c9:00:00:01 up 10000
port 0000:03:00.1 7 be2net ocefake1 00:00:c9:00:00:02 down

# ocrdma's device on port 0, as /sys/class/infiniband/ocrdma0 with one active Ethernet port.
ib=$sys/class/infiniband/ocrdma0
mkdir -p "$ib/ports/1" "$sys/devices/pci0000:00/0000:03:00.0/infiniband/ocrdma0"
ln -s ../../../devices/pci0000:00/0000:03:00.0 "$ib/device"
echo "4: ACTIVE" >"$ib/ports/1/state"
echo Ethernet >"$ib/ports/1/link_layer"
