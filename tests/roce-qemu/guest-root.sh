# Sourced by tests/roce-qemu/run.sh and bench/roce.sh (after tests/qemu/lib.sh's qemu_init): the
# initramfs of an RDMA guest.
#   roce_initramfs OUT INIT [ARGS...]
#                             busybox, the modules of both stacks (be2net and ocrdma; virtio-net
#                             and rdma_rxe, with crc32_generic: the "crc32" hash rxe asks the
#                             crypto API for, its ICRC; ib_uverbs for user space), Debian's rdma-core user
#                             space and perftest with their libraries, tests/datapath-qemu/common.sh
#                             as /lib/common.sh and tests/roce-qemu/roce.sh as /lib/roce.sh,
#                             bad_rkey.c built against the root's libibverbs (the headers from
#                             libibverbs-dev, unpacked aside, never installed) as /usr/bin/bad_rkey; ARGS
#                             go to qemu_initramfs (--module-file ocrdma.ko:PATH: ocrdma-fix.sh's)
# A harness that needs more sets, before the call: ROCE_EXTRA_DEBS (packages unpacked into the same
# root), ROCE_EXTRA_PROGS (paths inside the root that must find their libraries) and
# ROCE_EXTRA_MODULES (more modules, their dependencies included); ROCE_MODULES replaces the modules
# loaded at boot (a harness whose guests load be2net with kmod's modprobe leaves it out).
ROCE_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# libibverbs finds its providers through /etc/libibverbs.d (ibverbs-providers: ocrdma, rxe);
# perftest links librdmacm, libibumad and libpci; iproute2 has `rdma`, ethtool and ping the NIC.
ROCE_DEBS="libc6 libibverbs1 ibverbs-providers ibverbs-utils libnl-3-200 libnl-route-3-200 perftest librdmacm1
  libibumad3 libpci3 libudev1 iproute2 libmnl0 libbpf1 libelf1 libbsd0 libcap2 zlib1g libmd0 ethtool
  iputils-ping libidn2-0 libunistring2"
ROCE_MODULES=${ROCE_MODULES:-"crc32_generic be2net ocrdma ib_uverbs rdma_rxe virtio_pci virtio_net"}

roce_initramfs() {
  local root=$WORK/root
  if [ ! -d "$root" ]; then
    qemu_debs "$root" $ROCE_DEBS ${ROCE_EXTRA_DEBS:-}
    rm -rf "$root/usr/share" "$root/usr/include" "$root/usr/lib/x86_64-linux-gnu/gconv" "$root/etc/network"
    qemu_libs_resolve "$root" usr/bin/ibv_devinfo usr/bin/ibv_rc_pingpong usr/bin/ib_write_bw usr/bin/ib_read_bw \
      usr/bin/ib_send_lat usr/bin/rdma sbin/ethtool bin/ping ${ROCE_EXTRA_PROGS:-} ||
      return 2
    local dev=$WORK/ibverbs-dev lib=$root/usr/lib/x86_64-linux-gnu
    qemu_debs "$dev" libibverbs-dev
    gcc -O2 -Wall -Wextra -Werror -o "$root/usr/bin/bad_rkey" "$ROCE_HERE/bad_rkey.c" -I"$dev/usr/include" \
      "$lib/libibverbs.so.1" -Wl,-rpath-link,"$lib:$root/lib/x86_64-linux-gnu" ||
      { echo "$QEMU_NAME: bad_rkey.c does not build"; return 2; }
  fi
  qemu_initramfs "$1" "$2" --modules "$ROCE_MODULES ${ROCE_EXTRA_MODULES:-}" --tree "$root" \
    --file "$REPO/tests/datapath-qemu/common.sh:/lib/common.sh" --file "$ROCE_HERE/roce.sh:/lib/roce.sh" "${@:3}"
}
