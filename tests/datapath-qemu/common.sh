# Sourced by every guest of tests/datapath-qemu (as /lib/common.sh, after /lib/guest.sh): the
# tools, the interface, the host channel and the measurements the checks compare.
IP=/bin/ip ETHTOOL=/sbin/ethtool PING=/bin/ping
# The peer's address and ours come from the kernel command line: dp.me=10.0.0.1 dp.peer=10.0.0.2.
ME=$(sed -n 's/.*dp\.me=\([^ ]*\).*/\1/p' /proc/cmdline)
PEER=$(sed -n 's/.*dp\.peer=\([^ ]*\).*/\1/p' /proc/cmdline)
ME6=fd00::${ME##*.} PEER6=fd00::${PEER##*.}
ME_VLAN=10.0.100.${ME##*.} PEER_VLAN=10.0.100.${PEER##*.}
# No IPv6 until its own check: its multicast reports to groups the peer never joined would be
# counted by this side's TX and filtered by the peer's RX (the counters check needs them equal).
echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6
echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6

# The host channel is the second serial port: "sync ID N" waits until N guests said ID, "ask
# ACTION" has the host do ACTION (kill-peer, restart-peer); the host answers "go ID [RC]".
stty -F /dev/ttyS1 raw -echo
exec 3<>/dev/ttyS1
GO=
await() {
  while read -r -t 900 line <&3; do
    line=$(echo "$line" | tr -d '\r')
    case $line in "go $1" | "go $1 "*) GO=$line; return 0 ;; esac
  done
  echo "GUEST: no answer from the host for $1"
  return 1
}
barrier() { echo "sync $1 ${2:-2}" >&3; await "$1"; }
ask() { echo "ask $1" >&3; await "$1"; }

# wait_for SECONDS COMMAND...: until COMMAND succeeds, polled every 0.1 s.
wait_for() {
  n=$(($1 * 10)); shift
  while [ "$n" -gt 0 ]; do "$@" && return 0; sleep 0.1; n=$((n - 1)); done
  return 1
}
carrier() { cat "/sys/class/net/$IF/carrier" 2>/dev/null || echo none; }
carrier_is() { [ "$(carrier)" = "$1" ]; }
# The netdev of the first PCI function with these IDs, or the first ethN.
netdev_of() { ls "/sys/bus/pci/devices/$1/net" 2>/dev/null | head -1; }
# be2net_up: IF is the netdev of the emulated OCe14000's function, up with $ME/24 (its carrier
# awaited); the guest's log names both.
be2net_up() {
  BDF=$(find_dev 0x10df 0x0720)
  IF=$(netdev_of "$BDF")
  echo "GUEST: adapter ${BDF:-none}, netdev ${IF:-none}, $ME -> $PEER"
  up "$ME"
}
# offloads on|off: every checksum, scatter-gather and segmentation offload of IF on or off.
offloads() { $ETHTOOL -K "$IF" rx "$1" tx "$1" sg "$1" tso "$1" gso "$1" gro "$1" 2>/dev/null; }
# up ADDR: the interface up with ADDR/24, at most 60 s for the carrier.
up() {
  $IP addr add "$1/24" dev "$IF"
  $IP link set dev "$IF" up
  wait_for 60 carrier_is 1
}
# stat_sum PATTERN: the sum of the `ethtool -S` values whose name matches PATTERN (an ERE).
stat_sum() {
  $ETHTOOL -S "$IF" | awk -v p="$1" '{k = $0; sub(/^[ \t]+/, "", k); sub(/: *[0-9]+$/, "", k)} k ~ p {s += $NF} END {print s + 0}'
}
# ping_check "ID TEXT" ARGS...: a ping (iputils) whose exit code and summary line are the check.
ping_check() {
  id=$1; shift
  out=$($PING "$@" 2>&1); rc=$?
  sum=$(echo "$out" | grep -E 'transmitted' | head -1)
  check "$id: $sum" $rc "expected replies (rc 0) from ping $*; rc $rc: $(echo "$out" | tail -3 | tr '\n' '|')"
}
# Error and warning lines (priority 0-4) from be2net or virtio, and kernel splats.
bad_lines() { dmesg -r | grep -E '^<[0-4]>' | grep -E 'be2net|virtio|Call Trace|WARNING:|BUG:|Oops|NETDEV WATCHDOG'; }
dmesg_check() {
  BAD=$(bad_lines)
  [ -z "$BAD" ]
  check "$1 no error or warning line from the driver, no splat, in this guest's kernel log" $? \
    "expected none; saw: $BAD"
}
# tcp_send PORT: 16 MiB of random data to the peer's PORT; prints its md5 as GUEST-VALUE NAME.
DATA=/tmp/data
make_data() { [ -s $DATA ] || dd if=/dev/urandom of=$DATA bs=1M count=16 2>/dev/null; }
tcp_send() {
  make_data
  echo "GUEST-VALUE $2_sent=$(md5sum <$DATA | cut -d' ' -f1) $(wc -c <$DATA)"
  timeout 300 nc "$PEER" "$1" <$DATA
  echo "GUEST-VALUE $2_send_rc=$?"
}
# tcp_listen PORT: a listener in the background whose stdin never ends (a FIFO opened both ways,
# so it never closes the connection first); tcp_received NAME waits for it and prints the md5.
tcp_listen() {
  rm -f /tmp/recv /tmp/hold; mkfifo /tmp/hold
  nc -l -p "$1" <>/tmp/hold >/tmp/recv &
  LISTENER=$!
}
tcp_received() {
  n=3000
  while [ "$n" -gt 0 ] && kill -0 "$LISTENER" 2>/dev/null; do sleep 0.1; n=$((n - 1)); done
  kill "$LISTENER" 2>/dev/null
  echo "GUEST-VALUE $1_recv=$(md5sum </tmp/recv | cut -d' ' -f1) $(wc -c </tmp/recv)"
  rm -f /tmp/recv
}
