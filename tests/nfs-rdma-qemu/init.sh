#!/bin/busybox sh
# A guest of tests/nfs-rdma-qemu: A (10.0.0.1) exports /srv (a tmpfs) with the kernel's NFS server,
# B (10.0.0.2) mounts it, NFSv3, over RDMA (proto=rdma, port 20049: the NFS/RDMA port, RFC 5667)
# or, for nfs.proto=tcp, over TCP (2049). Each guest checks its side and prints its values as
# GUEST-VALUE lines; the pair keeps in step through the host's barriers (common.sh), and every step
# runs under a timeout so a stack that cannot do one fails its check and goes on.
. /lib/guest.sh
. /lib/common.sh
. /lib/roce.sh
# A guest short of memory says where it went, once, before the kernel's OOM handling (whose
# report the quiet console does not show) takes it: meminfo, the largest slab caches, the log.
(
  while sleep 2; do
    avail=$(awk '$1 == "MemAvailable:" {print int($2 / 1024)}' /proc/meminfo)
    [ "${avail:-999}" -lt 80 ] || continue
    echo "GUEST: memory low (${avail} MiB available): $(grep -E '^(MemFree|Slab|SUnreclaim|Shmem|KernelStack|PageTables|Percpu):' /proc/meminfo | tr -s ' ' | tr '\n' ' ')"
    sort -k3 -n -r /proc/slabinfo 2>/dev/null | awk 'NR <= 8 {printf "GUEST: slab %s %d objects of %d bytes\n", $1, $3, $4}'
    dmesg | tail -25 | sed 's/^/GUEST: kmsg /'
    break
  done
) &
PROTO=$(sed -n 's/.*nfs\.proto=\([^ ]*\).*/\1/p' /proc/cmdline)
MB=$(sed -n 's/.*nfs\.mb=\([0-9]*\).*/\1/p' /proc/cmdline)
NFS_PORT=20049; [ "$PROTO" = rdma ] || NFS_PORT=2049
# doctor N [ARGS...]: `ocetool doctor --json` (ARGS before it), its exit code and its report on one
# line, as GUEST-VALUE doctorN_SIDE_rc and doctorN_SIDE.
doctor() {
  n=$1; shift
  timeout 120 ocetool "$@" --json doctor >/tmp/doctor.json 2>/tmp/doctor.err
  echo "GUEST-VALUE doctor${n}_${SIDE}_rc=$?"
  echo "GUEST-VALUE doctor${n}_${SIDE}=$(tr -d '\n' </tmp/doctor.json)"
  head -3 /tmp/doctor.err | sed "s/^/GUEST: doctor $n: /"
}
if [ "$STACK" = ocrdma ]; then
  echo   # the console's first line starts with the firmware's escape sequences: no value on it
  # The seed workflow: kmod's modprobe loads be2net through the install line of ocetool's
  # modprobe.d file, so the hook applies /etc/ocetool/ocetool.toml (RoCE, then a chip reset) first;
  # be2net probes the adapter in RoCE, and ocrdma registers on it. ocetool's sysfs backend (no
  # vIOMMU here) keeps its DMA memory in a huge page.
  echo 4 >/proc/sys/vm/nr_hugepages
  timeout 200 /sbin/modprobe be2net >/tmp/hook.out 2>&1
  echo "GUEST-VALUE hook_${SIDE}_rc=$?"
  timeout 60 /sbin/modprobe ocrdma >>/tmp/hook.out 2>&1
  echo "GUEST-VALUE ocrdma_${SIDE}_rc=$?"
  echo "GUEST-VALUE apply_${SIDE}=$(tr -d '\n' </run/ocetool/last-apply.json 2>/dev/null)"
  echo "GUEST-VALUE mode_${SIDE}=$(dmesg | sed -n 's/.*FW config: function_mode=\(0x[0-9a-f]*\).*/\1/p' | tail -1)"
  sed 's/^/GUEST: modprobe: /' /tmp/hook.out | head -5
  wait_for 60 [ -e /sys/class/infiniband/ocrdma0 ]
  # The adapter's own view (the profile, RoCE in the function mode, DCBX and PFC): the function
  # taken from be2net for the command and given back, before its netdev is configured.
  doctor 1 --unbind --yes
fi
stack_up
R=$DEV_RC; [ "$PROTO" = rdma ] || R=0
check "stack-$SIDE $STACK: ${IF:-no netdev} up with $ME${DEV:+, RDMA device $DEV}" "$R" \
  "expected the netdev up and, for RDMA, its device registered; device rc $DEV_RC; $(rdma_lines | tail -3)"

# The verbs under NFS, over RDMA: UD sends (ibv_ud_pingpong, the GID exchange over TCP 18515) and
# rdma_cm's connection (rping: the address resolved through ARP, the CM exchange over QP1, then
# RC with its data verified: -V), A the server, B the client; each side's rc and output.
if [ "$PROTO" = rdma ]; then
  pair ud ibv_ud_pingpong -d "$DEV" -g "$GIDX" -n 20
  RPING="rping -v -V -C 10 -S 64"
  if [ "$SIDE" = a ]; then
    timeout $TOOL_TIMEOUT $RPING -s -a "$ME" >/tmp/rping.out 2>&1 &
    SERVER=$!
    sleep 2   # rdma_listen has no TCP port to wait for
    barrier rping
    barrier rping-done
    served rping
  else
    barrier rping
    client rping $RPING -c -a "$PEER"
    barrier rping-done
  fi
fi

# The user space NFS needs: its users (rpcbind drops to _rpc), statd's state directory.
mkdir -p /etc /srv /mnt /run/rpcbind /var/lib/nfs/sm /var/lib/nfs/v4recovery /var/lib/nfs/rpc_pipefs
printf 'root:x:0:0:root:/root:/bin/sh\n_rpc:x:100:65534::/run/rpcbind:/bin/false\nstatd:x:101:65534::/var/lib/nfs:/bin/false\n' >/etc/passwd
printf 'root:x:0:\nnogroup:x:65534:\n' >/etc/group
echo "127.0.0.1 localhost" >/etc/hosts
ln -sf /proc/mounts /etc/mtab
# The kernel's RPC services register with rpcbind through /var/run/rpcbind.sock or, failing that,
# over loopback (net/sunrpc/rpcb_clnt.c): both must be there.
ln -sfn /run /var/run
ip link set lo up

if [ "$SIDE" = a ]; then
  # The server: an export, rpcbind and mountd for NFSv3's MOUNT protocol, nfsd's threads, then the
  # transport (RDMA: a listener on 20049 added through /proc/fs/nfsd/portlist, svcrdma's way).
  mount -t tmpfs -o size=192m tmpfs /srv
  mount -t nfsd nfsd /proc/fs/nfsd
  echo "/srv *(rw,no_root_squash,insecure,no_subtree_check,fsid=1)" >/etc/exports
  {
    rpcbind -w && exportfs -ra && rpc.mountd -N 4 && rpc.nfsd -N 4 2 &&
      if [ "$PROTO" = rdma ]; then echo "rdma $NFS_PORT" >/proc/fs/nfsd/portlist; fi
  } >/tmp/server.out 2>&1
  RC=$?
  PORTS=$(tr '\n' ' ' </proc/fs/nfsd/portlist 2>/dev/null)
  case " $PORTS" in *" $PROTO $NFS_PORT "*) ;; *) RC=1 ;; esac
  check "nfs-server exportfs, rpcbind, mountd, nfsd; listening on: $PORTS" "$RC" \
    "expected '$PROTO $NFS_PORT' in /proc/fs/nfsd/portlist; saw '$PORTS'; $(tr '\n' '|' </tmp/server.out)"
  barrier served
  barrier mounted
  [ "$STACK" != ocrdma ] || doctor 2
  barrier written
  echo "GUEST-VALUE server_md5=$(md5sum /srv/data 2>/dev/null | cut -d' ' -f1)"
  barrier checked
  barrier unmounted
else
  barrier served
  OPTS="vers=3,proto=$PROTO,port=$NFS_PORT,nolock,mountproto=tcp"
  timeout 120 mount.nfs 10.0.0.1:/srv /mnt -o "$OPTS" >/tmp/mount.out 2>&1
  RC=$?
  LINE=$(grep ' /mnt ' /proc/mounts)
  case $LINE in *"proto=$PROTO"*) ;; *) [ "$RC" != 0 ] || RC=1 ;; esac
  check "nfs-mount mount.nfs -o $OPTS: ${LINE:-not mounted}" "$RC" \
    "expected rc 0 and proto=$PROTO in /proc/mounts; rc $RC: $(tr '\n' '|' </tmp/mount.out); $(rdma_lines | tail -3)"
  barrier mounted
  [ "$STACK" != ocrdma ] || doctor 2
  # MB MiB of random data written through the mount, its md5 compared with the server's file; then
  # read back once the client's page cache is dropped (the read crosses the wire again).
  dd if=/dev/urandom of=/tmp/data bs=1M count="$MB" 2>/dev/null
  SENT=$(md5sum </tmp/data | cut -d' ' -f1)
  T0=$(cut -d' ' -f1 /proc/uptime)
  WRC=1
  [ -z "$LINE" ] || { timeout 300 cp /tmp/data /mnt/data && timeout 120 sync; WRC=$?; }
  T1=$(cut -d' ' -f1 /proc/uptime)
  echo "GUEST-VALUE sent_md5=$SENT"
  echo "GUEST-VALUE write_rc=$WRC"
  echo "GUEST-VALUE write_seconds=$(awk "BEGIN{print $T1 - $T0}")"
  barrier written
  echo 3 >/proc/sys/vm/drop_caches
  T0=$(cut -d' ' -f1 /proc/uptime)
  READ=$(timeout 300 md5sum </mnt/data | cut -d' ' -f1)
  T1=$(cut -d' ' -f1 /proc/uptime)
  echo "GUEST-VALUE read_md5=$READ"
  echo "GUEST-VALUE read_seconds=$(awk "BEGIN{print $T1 - $T0}")"
  # The transport's counters (xprt_rdma_print_stats in net/sunrpc/xprtrdma/transport.c for rdma).
  echo "GUEST-VALUE xprt=$(awk '$1 == "device" {m = ($5 == "/mnt")} m && $1 == "xprt:" {print; exit}' /proc/self/mountstats)"
  barrier checked
  timeout 60 umount /mnt >/tmp/umount.out 2>&1
  RC=$?
  grep -q ' /mnt ' /proc/mounts && RC=1
  check "umount /mnt: rc $RC" "$RC" "expected rc 0 and /mnt gone; $(tr '\n' '|' </tmp/umount.out)"
  barrier unmounted
fi

# The kernel log: as tests/roce-qemu's (roce.sh), plus the NFS and RPC-over-RDMA modules' lines.
bad_lines() { roce_bad_lines 'rpcrdma|svcrdma|nfs|NFS'; }
dmesg_check "dmesg-clean-$SIDE"
barrier end

# On the emulated adapters, last: A's adapter dies under traffic. B mounts again and writes; the
# host kills A's `ocetool emulator serve` (SIGKILL) mid-write. B's write must end in an I/O error
# or hang until `umount -f` (then -l) ends it, the host must stay up and B's own adapter serve on;
# A's guest, its device gone, is stopped by the host once B is done.
if [ "$STACK" = ocrdma ]; then
  if [ "$SIDE" = a ]; then
    echo "GUEST-DONE"   # its checks are done; it serves on until the host stops it
    barrier remounted
    sleep 3600
    finish
  fi
  OPTS="vers=3,proto=$PROTO,port=$NFS_PORT,nolock,mountproto=tcp,soft,timeo=50,retrans=2"
  timeout 120 mount.nfs 10.0.0.1:/srv /mnt -o "$OPTS" >/tmp/mount.out 2>&1
  echo "GUEST-VALUE remount_rc=$?"
  barrier remounted
  dd if=/dev/urandom of=/tmp/big bs=1M count=48 2>/dev/null
  timeout 300 sh -c 'cp /tmp/big /mnt/big && sync' >/tmp/kill-write.out 2>&1 &
  WRITER=$!
  sleep 1
  ask kill-a
  echo "GUEST-VALUE kill_rc=${GO##* }"
  # The write's end: an error, or still waiting on the dead server after 60 s.
  wait_for 60 sh -c "! kill -0 $WRITER 2>/dev/null"
  if kill -0 "$WRITER" 2>/dev/null; then WRC=hung; else wait "$WRITER"; WRC=$?; fi
  echo "GUEST-VALUE kill_write=$WRC"
  T0=$(cut -d' ' -f1 /proc/uptime)
  timeout 60 umount -f /mnt >/tmp/umount-f.out 2>&1
  URC=$?
  grep -q ' /mnt ' /proc/mounts && { timeout 30 umount -l /mnt >>/tmp/umount-f.out 2>&1; URC="$URC, then -l: $?"; }
  echo "GUEST-VALUE kill_umount=$URC in $(awk "BEGIN{print $(cut -d' ' -f1 /proc/uptime) - $T0}") s"
  echo "GUEST-VALUE kill_mounted=$(grep -c ' /mnt ' /proc/mounts)"
  kill -KILL "$WRITER" 2>/dev/null
  ask end-a
  echo "GUEST-VALUE end_a=${GO##* }"
  # The host stops this guest too: with the dead mount's pages and RPCs still about, even
  # `poweroff -n -f` does not end (seen: the kernel's shutdown waits on them).
  echo "GUEST-DONE"
  ask end-b
  sleep 3600
fi
finish
