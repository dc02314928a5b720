# Sourced by tests/roce-qemu/run.sh and bench/roce.sh (after qemu_init: $KVER, $OCETOOL_CACHE):
# the guest kernel's own ocrdma, rebuilt from Debian's source of that kernel with one fix, for
# user-space verbs.
#
# Why: since ib_core allocates the ib_pd (Linux 5.2), `ocrdma_alloc_pd` with udata answers the
# first PD of a user context with the context's private PD (`ocrdma_get_ucontext_pd`, then `goto
# pd_mapping`): user space is told that PD's id, but the ib_pd the core keeps is never set up. Every
# later verb on it (reg_mr, create_qp) reads a zeroed `struct ocrdma_pd`: PD id 0 in
# REGISTER_NSMR and CREATE_QP, and a NULL `uctx` that `ocrdma_copy_qp_uresp` passes to
# `ocrdma_add_mmap`, a NULL dereference in the guest kernel (seen on Debian's 6.1.0-57;
# emulator/src/assumptions/rdma.rs records it). No adapter answer avoids it: the driver
# never sends the PD it told user space. The fix makes that shortcut never taken (the lookup
# answers NULL), so every user PD is a PD of its own, allocated by `_ocrdma_alloc_pd` as kernel
# PDs are; the context's PD stays allocated and unused until the context goes.
#
#   ocrdma_fixed   sets $OCRDMA_KO to ocrdma.ko for $KVER, built once into
#                  $OCETOOL_CACHE/ocrdma-fixed/$KVER: linux-headers-$KVER installed with apt-get
#                  if missing (it brings kbuild and gcc-12), the ocrdma sources (and be2net's
#                  be_roce.h) taken from the linux-source package of the kernel's version, the
#                  one-line change checked to apply, `make M=` against the headers (vermagic and
#                  symbol versions are the kernel's), debug info stripped. Returns 2 with a
#                  one-line reason when any step fails.
ocrdma_fixed() {
  local dir=$OCETOOL_CACHE/ocrdma-fixed/$KVER series ver tmp headers=/usr/src/linux-headers-$KVER r=0
  OCRDMA_KO=$dir/ocrdma.ko
  [ -f "$OCRDMA_KO" ] && return 0
  series=$(echo "$KVER" | cut -d. -f1,2)   # 6.1.0-57-amd64 -> 6.1: linux-source-6.1
  ver=$(apt-cache policy "linux-image-$KVER" 2>/dev/null | awk '/Candidate:/ {print $2}')
  [ -n "$ver" ] && [ "$ver" != "(none)" ] || { echo "ocrdma-fix: no version of linux-image-$KVER in apt"; return 2; }
  if [ ! -f "$headers/Makefile" ]; then
    qemu_say "installing linux-headers-$KVER (to rebuild ocrdma)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "linux-headers-$KVER" >/dev/null 2>&1 ||
      { apt-get update -qq; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "linux-headers-$KVER" >/dev/null; } ||
      { echo "ocrdma-fix: cannot install linux-headers-$KVER"; return 2; }
  fi
  tmp=$(mktemp -d "$OCETOOL_CACHE/ocrdma-build.XXXXXX")
  qemu_say "rebuilding ocrdma from linux-source-$series $ver with the user-PD fix"
  (
    set -e
    cd "$tmp"
    apt-get download -qq "linux-source-$series=$ver" 2>/dev/null || apt-get download -qq "linux-source-$series"
    dpkg-deb --fsys-tarfile linux-source-"$series"_*.deb | tar -xO "./usr/src/linux-source-$series.tar.xz" |
      tar -xJ --wildcards "linux-source-$series/drivers/infiniband/hw/ocrdma/*" \
        "linux-source-$series/drivers/net/ethernet/emulex/benet/be_roce.h"
    mkdir build
    cp "linux-source-$series"/drivers/infiniband/hw/ocrdma/* "linux-source-$series"/drivers/net/ethernet/emulex/benet/be_roce.h build/
    # The fix: in ocrdma_alloc_pd, the user context's PD is never looked up.
    perl -0pi -e 's/(\n\tif \(udata\) \{\n\t\tpd = )ocrdma_get_ucontext_pd\(uctx\);/$1NULL;/ or die "ocrdma-fix: the user-PD shortcut of ocrdma_alloc_pd is not in this source\n"' \
      build/ocrdma_verbs.c
    make -s -C "$headers" M="$tmp/build" CONFIG_INFINIBAND_OCRDMA=m "ccflags-y=-I$tmp/build" modules >build.log 2>&1 ||
      { tail -5 build.log; exit 1; }
    strip --strip-debug build/ocrdma.ko
    mkdir -p "$dir"
    cp build/ocrdma.ko "$dir/ocrdma.ko.new"
    mv "$dir/ocrdma.ko.new" "$OCRDMA_KO"
    echo "linux-source-$series $(dpkg-deb -f linux-source-"$series"_*.deb Version), headers $KVER" >"$dir/SOURCE"
  ) || r=$?
  rm -rf "$tmp"
  [ "$r" = 0 ] || { echo "ocrdma-fix: the rebuild of ocrdma failed (above)"; return 2; }
  modinfo -F vermagic "$OCRDMA_KO" | grep -q "^$KVER " ||
    { echo "ocrdma-fix: $OCRDMA_KO is not built for $KVER"; return 2; }
}
