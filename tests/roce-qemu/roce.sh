# Sourced by the guests of tests/roce-qemu and bench/roce.sh (as /lib/roce.sh, after /lib/guest.sh
# and tests/datapath-qemu/common.sh as /lib/common.sh: barrier, up, wait_for, be2net_up): the RDMA
# device of the chosen stack, and the verbs tools run under a bound so no wait can hang a guest.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
# The console carries the checks only: the kernel's lines are read with dmesg. (A guest whose
# ocrdma printed its errors on the console while a barrier's answer arrived on the second serial
# port once never read that answer.)
dmesg -n 1
# A barrier's answer is awaited at most 240 s (common.sh's await waits 900): a guest left behind
# goes on, and its checks fail, well within the run's bound.
await() {
  while read -r -t 240 line <&3; do
    line=$(echo "$line" | tr -d '\r')
    case $line in "go $1" | "go $1 "*) GO=$line; return 0 ;; esac
  done
  echo "GUEST: no answer from the host for $1"
  return 1
}
# A (10.0.0.1) runs the servers, B the clients (pair).
SIDE=a; [ "$ME" = 10.0.0.1 ] || SIDE=b
STACK=$(sed -n 's/.*roce\.stack=\([^ ]*\).*/\1/p' /proc/cmdline)
# Every verbs tool (ibv_rc_pingpong, perftest) runs at most this long; a server waits at most
# LISTEN_WAIT s to listen on its TCP exchange port (18515, the default of both tools).
TOOL_TIMEOUT=180 LISTEN_WAIT=60 PORT_HEX=4853
# The kernel's RDMA lines (ib_core, ib_mad, ocrdma, be2net, rxe) and its splats.
rdma_lines() { dmesg | grep -E 'ib_mad|ocrdma|be2net|rdma_rxe|rxe0|infiniband|ib_core|Call Trace|WARNING:|BUG:|Oops'; }
# The errors the MAD agent logs when it cannot create QP1's CQ or QP (ib_mad.c): the port then has
# no GSI, so a device that prints them is not fully registered.
mad_errors() { dmesg | grep -E "ib_mad|Couldn't (create|open) (ib_mad|port)"; }

# stack_up: IF up with $ME, DEV the RDMA device over it, GIDX the GID index the tools use:
#   ocrdma  the emulated OCe14000 (be2net's netdev; ocrdma registers ocrdma0 at be2net's probe);
#           GID 0, the RoCE v1 link-local GID, which carries the peer's MAC (spec §4.1)
#   rxe     QEMU's virtio-net; rxe0 linked to it with `rdma link add`; the IPv4-mapped GID (RoCE v2
#           over UDP; IPv6 is off on these guests, so the link-local GID has no route)
# Prints GUEST-VALUE modprobe_rc (0: the device appeared) and its evidence.
stack_up() {
  DEV_RC=1
  case $STACK in
    ocrdma)
      be2net_up
      DEV=ocrdma0
      wait_for 60 [ -e /sys/class/infiniband/$DEV ] && DEV_RC=0 ;;
    rxe)
      BDF=$(find_dev 0x1af4 0x1000)
      IF=$(ls "/sys/bus/pci/devices/$BDF"/virtio*/net 2>/dev/null | head -1)
      echo "GUEST: virtio-net at ${BDF:-none}, netdev ${IF:-none}, $ME -> $PEER"
      up "$ME"
      DEV=rxe0
      LINK=$(timeout 30 rdma link add $DEV type rxe netdev "$IF" 2>&1) &&
        wait_for 30 [ -e /sys/class/infiniband/$DEV ] && DEV_RC=0 ;;
    *) echo "GUEST: unknown stack '$STACK' (roce.stack=ocrdma|rxe)"; DEV=none ;;
  esac
  GIDX=0
  if [ "$STACK" = rxe ]; then
    # The IPv4-mapped GID of $ME: ::ffff:a.b.c.d as sysfs spells it.
    want=$(echo "$ME" | awk -F. '{printf "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x", $1, $2, $3, $4}')
    wait_for 30 grep -lx "$want" /sys/class/infiniband/$DEV/ports/1/gids/* >/dev/null 2>&1
    GIDX=$(grep -lx "$want" /sys/class/infiniband/$DEV/ports/1/gids/* 2>/dev/null | head -1)
    GIDX=${GIDX##*/}
  fi
  echo "GUEST: RDMA device $DEV (rc $DEV_RC), GID index ${GIDX:-none}; ${LINK:-}"
}

# listening: something listens on TCP port 18515 (IPv4 or IPv6 socket, state 0A).
listening() { cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk -v p=":$PORT_HEX" '$2 ~ p"$" && $4 == "0A" {f = 1} END {exit !f}'; }
# serve NAME TOOL ARGS...: the server side in the background (its output in /tmp/NAME.out),
# awaited until it listens; rc 1 if it ended first or never listened. Busybox's timeout execs the
# tool in its own process, so $SERVER is the tool's PID.
serve() {
  name=$1; shift
  timeout $TOOL_TIMEOUT "$@" >"/tmp/$name.out" 2>&1 &
  SERVER=$!
  wait_for $LISTEN_WAIT server_ready && kill -0 "$SERVER" 2>/dev/null
}
server_ready() { ! kill -0 "$SERVER" 2>/dev/null || listening; }
# served NAME [GRACE]: waits for the server, at most GRACE s (default 30: the client has ended, so
# should the server), stops it then (SIGKILL), and prints its result.
served() {
  wait_for "${2:-30}" server_gone || kill -KILL "$SERVER" 2>/dev/null
  wait "$SERVER" 2>/dev/null
  result "$1" $? "/tmp/$1.out"
}
server_gone() { ! kill -0 "$SERVER" 2>/dev/null; }
# client NAME TOOL ARGS...: the client side, in the foreground, bounded; prints its result.
client() {
  name=$1; shift
  timeout $TOOL_TIMEOUT "$@" >"/tmp/$name.out" 2>&1
  result "$name" $? "/tmp/$name.out"
}
# result NAME RC OUT: GUEST-VALUE NAME_SIDE_rc and NAME_SIDE_out (the output's last 14 lines on
# one line, cut: the tools print their result last).
result() {
  echo "GUEST-VALUE $1_${SIDE}_rc=$2"
  echo "GUEST-VALUE $1_${SIDE}_out=$(tail -n 14 "$3" | tr '\n' '|' | tr -s ' \t' ' ' | cut -c1-900)"
}
# pair NAME TOOL ARGS...: TOOL as server on A and as client of A on B; A's server has 30 s after
# B's client ended to end too (served stops it then).
pair() {
  name=$1; shift
  if [ "$SIDE" = a ]; then
    serve "$name" "$@" || echo "GUEST: the $name server did not listen: $(tr '\n' '|' <"/tmp/$name.out")"
    barrier "$name"
    barrier "$name-done"
    served "$name"
  else
    barrier "$name"
    client "$name" "$@" "$PEER"
    barrier "$name-done"
  fi
}

# The kernel log: no RDMA or NIC error line, no splat, except what ocrdma logs on every host: the
# drain WARN_ONCEs of ib_drain_qp (spec/datapath.md §3.3, each with its trace) and the PFC lines
# of every connection (§4.4); and the kernel's taint notes for the rebuilt ocrdma
# (ocrdma-fix.sh), which is neither in-tree nor signed.
ROCE_ALLOWED='Using VLAN with PFC is recommended|Using VLAN 0 for this connection'
ROCE_ALLOWED="$ROCE_ALLOWED|ocrdma: loading out-of-tree module taints kernel|ocrdma: module verification failed: signature and/or required key missing"
# roce_bad_lines [PATTERN]: the kernel's error and warning lines from the RDMA stack, the NICs and
# splats (and from what PATTERN, an ERE, names), less the allowed ones: dmesg_check's bad_lines.
roce_bad_lines() {
  dmesg -r | awk '/failed to drain (send|recv) queue/ {skip = 1} !skip {print} skip && /---\[ end trace/ {skip = 0}' |
    grep -E '^<[0-4]>' | grep -E "ocrdma|be2net|rxe|ib_|infiniband|virtio|${1:+$1|}Call Trace|WARNING:|BUG:|Oops" |
    grep -vE "$ROCE_ALLOWED"
}
