#!/usr/bin/env bash
# NFS between two TCG guests (-smp 1, no vIOMMU): A (10.0.0.1) exports a tmpfs with the kernel's
# NFS server (nfs-kernel-server's exportfs, rpc.mountd, rpc.nfsd; rpcbind), B (10.0.0.2) mounts it
# with mount.nfs, NFSv3, and writes, then reads back, NFS_MB MiB (default 4) of random data:
#   --stack ocrdma (default)  NFS over RDMA (proto=rdma, port 20049: xprtrdma on B, svcrdma on A) on
#                          ocrdma on be2net on each guest's emulated OCe14000 (served by `ocetool
#                          emulator serve`, switched to the RoCE profile in the guest by the hook,
#                          the two ports cabled), with Debian's ocrdma rebuilt with its user-PD fix
#                          (tests/roce-qemu/ocrdma-fix.sh); rdma_cm over the IPv4-mapped RoCE v1 GID
#   --stack tcp            NFS over TCP (2049) on be2net on the same emulated adapters
#   --stack rxe            NFS over RDMA on rdma_rxe over QEMU's virtio-net joined by -netdev
#                          dgram: the software peer, which proves the recipe and the guests without
#                          the emulator
#   --stack tcp-virtio     NFS over TCP on that virtio-net link
# The guests share tests/roce-qemu's root (rdma-core, perftest) plus the NFS user space and rping,
# and its host barriers (tests/datapath-qemu/ctl.sh). On the emulated adapters (ocrdma, tcp) each
# guest runs the seed workflow: the adapters leave the factory in the NIC profile, and kmod's
# `modprobe be2net` runs ocetool's packaged hook with /etc/ocetool/ocetool.toml asking for RoCE.
# Checks, each counted by ID:
#   hook-a/-b        (emulated adapters) modprobe be2net and ocrdma exit 0, the hook's
#                    last-apply.json says changed, be2net probed with RDMA in its function mode
#   doctor-a/-b      (emulated adapters) `ocetool --unbind --yes doctor` before the netdev is
#                    configured: pfc passes (the adapter's DCBX); `ocetool doctor` once B has
#                    mounted: roce passes (the port up) and, over RDMA, nfs_rdma
#   stack-a/-b       the netdev up (and, over RDMA, the RDMA device registered)
#   ud-pingpong      (RDMA) ibv_ud_pingpong -n 20, both ends exit 0 (UD sends, the GRH received)
#   rping            (RDMA) rping -C 10 -V: rdma_cm resolves A's address (ARP) and connects over
#                    QP1, then 10 verified RC rounds; both ends exit 0
#   nfs-server       A: exportfs, rpcbind, mountd and nfsd started; /proc/fs/nfsd/portlist has the
#                    transport (rdma 20049, or tcp 2049)
#   nfs-mount        B: mount.nfs exits 0 and /proc/mounts says proto=rdma (or tcp)
#   write-read       the md5 of the data B wrote equals the md5 of A's file and of B's read-back
#                    after its page cache was dropped
#   mountstats       B's /proc/self/mountstats: the transport line is "xprt: rdma" with non-zero
#                    read and write chunk counts (NFS WRITEs larger than the inline threshold move
#                    by RDMA READ, READs by RDMA WRITE: RFC 8166), or "xprt: tcp"
#   umount           B: umount exits 0
#   dmesg-clean-a/-b no error line from the drivers, NFS or RPC-over-RDMA, no splat (ocrdma's two
#                    drain warnings and its PFC lines allowed, as in tests/roce-qemu)
#   kill-server      (emulated adapters, last) A's `ocetool emulator serve` SIGKILLed under B's
#                    48 MiB write to a soft mount: the write ends or hangs, `umount -f` (then -l)
#                    leaves no mount, B's server still serves then, the host stays up
# Usage: bash tests/nfs-rdma-qemu/run.sh [--stack ocrdma|tcp|rxe|tcp-virtio]
#   KEEP_WORK=DIR keeps the logs and, on the emulated adapters, the wire's pcap; NFS_MB sets the
#   size; NFS_OCETOOL=PATH serves the adapters with that ocetool instead of a debug build.
# Ends with "nfs-rdma-qemu: N passed, M failed"; exits non-zero on any failure.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
STACK=ocrdma
while [ $# -gt 0 ]; do
  case $1 in
    --stack) STACK=${2:-}; shift 2 || { echo "nfs-rdma-qemu: --stack needs ocrdma, tcp, rxe or tcp-virtio"; exit 2; } ;;
    *) echo "nfs-rdma-qemu: unknown argument '$1' (usage: run.sh [--stack ocrdma|tcp|rxe|tcp-virtio])"; exit 2 ;;
  esac
done
# PROTO: NFS's transport; LINK: the guests' adapters (the emulated OCe14000s or virtio-net).
case $STACK in
  ocrdma) PROTO=rdma LINK=oce ;;
  tcp) PROTO=tcp LINK=oce ;;
  rxe) PROTO=rdma LINK=virtio ;;
  tcp-virtio) PROTO=tcp LINK=virtio ;;
  *) echo "nfs-rdma-qemu: unknown stack '$STACK' (ocrdma, tcp, rxe or tcp-virtio)"; exit 2 ;;
esac
. "$HERE/../qemu/lib.sh"
CHECKS="stack-a stack-b nfs-server nfs-mount write-read mountstats umount dmesg-clean-a dmesg-clean-b"
[ "$LINK" != oce ] || CHECKS="hook-a hook-b doctor-a doctor-b $CHECKS kill-server"
[ "$PROTO" != rdma ] || CHECKS="$CHECKS ud-pingpong rping"
qemu_init nfs-rdma-qemu "$CHECKS"
QEMU_TIMEOUT=${QEMU_TIMEOUT:-900}
export QEMU_VIOMMU=off
MB=${NFS_MB:-4}
qemu_say "stack $STACK, NFSv3 over $PROTO, $MB MiB"
if [ "$LINK" = oce ] && [ -z "${NFS_OCETOOL:-}" ]; then
  qemu_say "building ocetool"
  (cd "$REPO" && cargo build --locked -q -p ocetool)
fi
OCETOOL=${NFS_OCETOOL:-$HOST_TARGET/debug/ocetool}
if [ "$LINK" = oce ]; then
  qemu_say "building the guests' static ocetool"
  GUEST_OCETOOL=$(qemu_guest_build -q -p ocetool --bin ocetool | awk '$1=="ocetool"{print $2}' | tail -1)
  [ -x "$GUEST_OCETOOL" ] || { echo "nfs-rdma-qemu: no guest ocetool built"; exit 2; }
fi

# The NFS user space and what it links, rping (rdmacm-utils; glibc loads libgcc_s for its
# threads' exit); the server and client modules
# (rpcrdma is both RPC-over-RDMA ends; nfsv3 the client's version; rdma_ucm rdma_cm's user space).
ROCE_EXTRA_DEBS="nfs-kernel-server nfs-common rpcbind libtirpc3 libtirpc-common libwrap0 libevent-core-2.1-7
  libblkid1 libmount1 libselinux1 libpcre2-8-0 libkeyutils1 libnfsidmap1 libsqlite3-0 libcom-err2
  libgssapi-krb5-2 libkrb5-3 libk5crypto3 libkrb5support0 libuuid1 libdevmapper1.02.1 libsystemd0
  liblzma5 libzstd1 liblz4-1 libgcrypt20 libgpg-error0 libcap2 libnsl2 netbase rdmacm-utils libgcc-s1"
ROCE_EXTRA_PROGS="usr/sbin/rpc.nfsd usr/sbin/rpc.mountd usr/sbin/exportfs sbin/mount.nfs sbin/rpcbind usr/bin/rping
  usr/bin/ibv_ud_pingpong"
ROCE_EXTRA_MODULES="nfsd nfsv3 rpcrdma rdma_ucm"
. "$REPO/tests/roce-qemu/guest-root.sh"
MODULE_ARGS=()
if [ "$LINK" = oce ]; then
  # The seed workflow in each guest: the adapters leave the factory in the NIC profile, and kmod's
  # modprobe loads be2net through the install line of ocetool's modprobe.d file, so ocetool's hook
  # applies /etc/ocetool/ocetool.toml (RoCE, activated by a chip reset) before be2net binds. So
  # be2net and ocrdma are not among the modules loaded at boot but in a module tree of their own,
  # with Debian's kmod, the packaged hook and modprobe.d file, the static ocetool and the
  # configuration; ocrdma is Debian's rebuilt with its user-PD fix (tests/roce-qemu/ocrdma-fix.sh).
  . "$REPO/tests/roce-qemu/ocrdma-fix.sh"
  ocrdma_fixed
  ROCE_MODULES="crc32_generic ib_uverbs rdma_rxe virtio_pci virtio_net"
  ROCE_EXTRA_DEBS="$ROCE_EXTRA_DEBS kmod libkmod2 libssl3 util-linux"
  ROCE_EXTRA_PROGS="$ROCE_EXTRA_PROGS bin/kmod usr/bin/flock"
  HOOK_ROOT=$WORK/hook-root
  MODDIR=lib/modules/$KVER
  for m in $(for m in be2net ocrdma; do modprobe -d "$KROOT" -S "$KVER" --show-depends "$m"; done |
    awk '$1=="insmod"{print $2}' | sort -u); do
    rel=${m#"$KROOT/"}
    mkdir -p "$HOOK_ROOT/$(dirname "$rel")"
    case $m in */ocrdma.ko*) cp "$OCRDMA_KO" "$HOOK_ROOT/${rel%.ko*}.ko" ;; *) cp "$m" "$HOOK_ROOT/$rel" ;; esac
  done
  cp "$KROOT/$MODDIR"/modules.{builtin,builtin.modinfo,order} "$HOOK_ROOT/$MODDIR/"
  depmod -b "$HOOK_ROOT" "$KVER"
  install -D -m 0755 "$REPO/packaging/be2net-hook" "$HOOK_ROOT/usr/lib/ocetool/be2net-hook"
  install -D -m 0644 "$REPO/packaging/modprobe.d/ocetool.conf" "$HOOK_ROOT/lib/modprobe.d/ocetool.conf"
  install -D -m 0755 "$GUEST_OCETOOL" "$HOOK_ROOT/usr/bin/ocetool"
  strip "$HOOK_ROOT/usr/bin/ocetool" 2>/dev/null || true
  mkdir -p "$HOOK_ROOT/etc/ocetool"
  printf '%s\n' '# Every adapter: the RoCE profile, active before be2net binds it.' '[[adapter]]' \
    'match = { all = true }' 'profile = "roce"' 'activate = "reset"' >"$HOOK_ROOT/etc/ocetool/ocetool.toml"
  MODULE_ARGS=(--tree "$HOOK_ROOT")
fi
roce_initramfs "$WORK/nfs.cpio.gz" "$HERE/init.sh" "${MODULE_ARGS[@]}"
. "$REPO/tests/datapath-qemu/ctl.sh"
# The guests' requests: kill-a kills A's adapter (its server, SIGKILL) under B's traffic; end-a
# stops A's guest, its device gone, once B is done (rc 0: it was still running, 1: it had
# ended); end-b stops B, its checks done, whose shutdown the dead mount holds up.
host_action() {
  case $1 in
    kill-a) kill -KILL "${ROCE_SERVERS[0]}" ;;
    end-b) kill "$(cat "$WORK/serial-b.log.pid")" ;;
    end-a)
      local pid
      # B's adapter must still serve now, A's killed under it (it ends with B's QEMU later).
      B_ALIVE=no; ! kill -0 "${ROCE_SERVERS[1]}" 2>/dev/null || B_ALIVE=yes
      pid=$(cat "$WORK/serial-a.log.pid" 2>/dev/null) || return 1
      kill -0 "$pid" 2>/dev/null || return 1
      kill "$pid" ;;
    *) echo "unknown action $1"; return 2 ;;
  esac
}

# The guests' stack (roce.sh's stack_up): ocrdma0 on be2net, or rxe over the virtio-net (which NFS
# over TCP on virtio-net does not use).
GUEST_STACK=ocrdma; [ "$LINK" = oce ] || GUEST_STACK=rxe
. "$REPO/tests/roce-qemu/adapters.sh"
T0=$(date +%s)
ROCE_SERVERS=() B_ALIVE=none
if [ "$LINK" = oce ]; then
  # A's port records the wire (--wire-pcap), for tshark or tcpdump -r after the run.
  roce_adapter --factory "$OCETOOL" a b --wire-pcap "$WORK/wire.pcap"; ROCE_SERVERS+=("$SERVED_PID")
  ROCE_DEV_A=("${ROCE_DEV[@]}")
  roce_adapter --factory "$OCETOOL" b a; ROCE_SERVERS+=("$SERVED_PID"); ROCE_DEV_B=("${ROCE_DEV[@]}")
else
  mapfile -t ROCE_DEV_A < <(roce_nic "$WORK/a.wire" "$WORK/b.wire" 52:54:00:0e:00:01)
  mapfile -t ROCE_DEV_B < <(roce_nic "$WORK/b.wire" "$WORK/a.wire" 52:54:00:0e:00:02)
fi
roce_pair_start "$WORK/nfs.cpio.gz" "roce.stack=$GUEST_STACK nfs.proto=$PROTO nfs.mb=$MB"
roce_pair_finish
qemu_say "the guests took $(($(date +%s) - T0))s"

set +e
LOG=$WORK/checks.log
cat "$WORK"/serial-{a,b}.log 2>/dev/null | grep -E '^GUEST-(CHECK|EVIDENCE|VALUE)' >"$LOG"
value() { sed -n "s/^GUEST-VALUE $1=//p" "$LOG" | tail -1; }
SENT=$(value sent_md5) SERVER=$(value server_md5) READ=$(value read_md5)
R=0; [ -n "$SENT" ] && [ "$(value write_rc)" = 0 ] && [ "$SERVER" = "$SENT" ] && [ "$READ" = "$SENT" ] || R=1
host_check "$LOG" "write-read $MB MiB: written in $(value write_seconds) s, read back in $(value read_seconds) s; md5 ${SENT:-none} on B, ${SERVER:-none} on A, ${READ:-none} read back" $R \
  "expected the three md5s equal and the write's rc 0 (rc $(value write_rc))"
# xprt_rdma_print_stats (net/sunrpc/xprtrdma/transport.c): after "rdma", 10 fields of the generic
# transport (port, bind count, connect count, connect time, idle time, sends, receives, bad xids,
# request and backlog queue sums), then read_chunk_count and write_chunk_count.
XPRT=$(value xprt)
if [ "$PROTO" = rdma ]; then
  read -r _ kind _ _ _ _ _ _ _ _ _ _ reads writes _ <<<"$XPRT"
  R=0; [ "$kind" = rdma ] && [ "${reads:-0}" -gt 0 ] 2>/dev/null && [ "${writes:-0}" -gt 0 ] 2>/dev/null || R=1
  host_check "$LOG" "mountstats xprt ${kind:-none}: read chunks ${reads:-none}, write chunks ${writes:-none}" $R \
    "expected xprt: rdma with non-zero read and write chunk counts; saw: ${XPRT:-no xprt line}"
else
  R=0; [[ $XPRT == *xprt:*tcp* ]] || R=1
  host_check "$LOG" "mountstats ${XPRT:-no xprt line}" $R "expected xprt: tcp"
fi
if [ "$LINK" = oce ]; then
  # status JSON ID: the status of doctor check ID in the report JSON.
  status() { echo "$1" | jq -r --arg id "$2" '.checks[]? | select(.id == $id) | .status' 2>/dev/null; }
  for s in a b; do
    APPLY=$(value "apply_$s") MODE=$(value "mode_$s")
    # RDMA in the function mode be2net printed: bit 0x4 (design.md §6, be_cmds.h RDMA_ENABLED).
    R=0; [ "$(value "hook_${s}_rc")" = 0 ] && [ "$(value "ocrdma_${s}_rc")" = 0 ] &&
      echo "$APPLY" | jq -e '.changed == true' >/dev/null 2>&1 && [ $((${MODE:-0} & 4)) -ne 0 ] || R=1
    host_check "$LOG" "hook-$s modprobe be2net ran ocetool's hook (report: changed $(echo "$APPLY" | jq -c '.changed' 2>/dev/null)), be2net probed with function_mode ${MODE:-none}, ocrdma loaded" $R \
      "expected modprobe be2net and ocrdma rc 0 ($(value "hook_${s}_rc"), $(value "ocrdma_${s}_rc")), last-apply.json changed true and the RDMA bit; report: ${APPLY:0:300}"
    D1=$(value "doctor1_$s") D2=$(value "doctor2_$s")
    # pfc needs the adapter's own answer (DCBX), so the function taken from be2net; roce needs the
    # port up, so after the netdev is, as nfs_rdma needs the server listening or the mount made.
    PFC=$(status "$D1" pfc) ROCE=$(status "$D2" roce) NFS=$(status "$D2" nfs_rdma)
    R=0; [ "$PFC" = pass ] && [ "$ROCE" = pass ] && { [ "$PROTO" != rdma ] || [ "$NFS" = pass ]; } || R=1
    host_check "$LOG" "doctor-$s ocetool --unbind --yes doctor: pfc ${PFC:-none}; after the mount, ocetool doctor: roce ${ROCE:-none}, nfs_rdma ${NFS:-none}" $R \
      "expected pfc and roce pass$([ "$PROTO" != rdma ] || echo ', nfs_rdma pass'); rc $(value "doctor1_${s}_rc") and $(value "doctor2_${s}_rc"); $(echo "$D1" | jq -c '[.checks[]? | select(.id == "pfc")]' 2>/dev/null | cut -c1-300); $(echo "$D2" | jq -c '[.checks[]? | select(.id == "roce" or .id == "nfs_rdma")]' 2>/dev/null | cut -c1-600)"
  done
fi
if [ "$LINK" = oce ]; then
  # A's QEMU was stopped by the harness (end-a rc 0: it was still running), or ended on its own
  # with the device gone: either way a clean end; what fails is B's write not ending.
  W=$(value kill_write) U=$(value kill_umount) M=$(value kill_mounted)
  R=0; [ "$(value remount_rc)" = 0 ] && [ "$(value kill_rc)" = 0 ] && [ "$M" = 0 ] && [ "$B_ALIVE" = yes ] || R=1
  host_check "$LOG" "kill-server A's adapter killed under B's write: the write ${W:-none} (hung = still waiting after 60 s), umount -f: ${U:-none}, $M mounts left; B's adapter still serving: $B_ALIVE; A's guest at the end: $( [ "$(value end_a)" = 0 ] && echo 'running, stopped' || echo "ended by itself, QEMU's exit code $QRC_A")" $R \
    "expected the remount and the kill done (rc $(value remount_rc), $(value kill_rc)), /mnt gone and B's server alive; $(grep -h 'nfs\|rpcrdma' "$WORK/serial-b.log" | tail -3)"
fi
if [ "$PROTO" = rdma ]; then
  for t in ud rping; do
    # ibv_ud_pingpong prints "N bytes in S seconds"; rping -v the ping data of its last round.
    want='bytes in'; [ "$t" = ud ] || want='rdma-ping-9'
    R=0; [ "$(value "${t}_a_rc")" = 0 ] && [ "$(value "${t}_b_rc")" = 0 ] && [[ $(value "${t}_b_out") == *"$want"* ]] || R=1
    id=ud-pingpong; [ "$t" = ud ] || id=rping
    host_check "$LOG" "$id both ends rc 0: server $(value "${t}_a_rc"), client $(value "${t}_b_rc"); client: $(value "${t}_b_out" | tr '|' '\n' | grep -m1 "$want")" $R \
      "server: $(value "${t}_a_out")"$'\n'"client: $(value "${t}_b_out")"
  done
fi
# A's QEMU, whose adapter was killed under it, ends as QEMU's vfio-user device makes it (it may
# abort) or is stopped by the harness (end-a): it is judged by its checks, and kill-server says
# how it ended.
QRC=$QRC_A; [ "$LINK" != oce ] || [ -z "$(value end_a)" ] || QRC=0
[ "$QRC_B" = 0 ] || QRC=$QRC_B
echo "GUEST-DONE" >>"$LOG"
grep -q '^GUEST-DONE' "$WORK/serial-a.log" && grep -q '^GUEST-DONE' "$WORK/serial-b.log" || sed -i '$d' "$LOG"
qemu_say "the whole scenario took $(($(date +%s) - QEMU_T0))s"
tail -3 "$WORK/ctl.log"
qemu_summary nfs-rdma-qemu "$LOG" "$CHECKS"
