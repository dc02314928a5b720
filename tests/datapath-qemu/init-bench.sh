#!/bin/busybox sh
# A guest of bench/datapath.sh: its first NIC (whichever driver) at dp.me; 10.0.0.1 measures the
# ping round trip to 10.0.0.2, then sends it dp.mb MiB over TCP (busybox nc) and times it.
. /lib/guest.sh
. /lib/common.sh
IF=$(ls /sys/class/net | grep -v '^lo$' | head -1)
MB=$(sed -n 's/.*dp\.mb=\([0-9]*\).*/\1/p' /proc/cmdline)
now() { cut -d' ' -f1 /proc/uptime; }
echo "GUEST: $IF ($(basename "$(readlink "/sys/class/net/$IF/device/driver")")), $ME -> $PEER"
up "$ME"
barrier up
if [ "$ME" = 10.0.0.1 ]; then
  $PING -c 3 -w 30 "$PEER" >/dev/null
  OUT=$($PING -q -c 50 -i 0.1 -w 60 "$PEER")
  echo "GUEST-VALUE ping=$(echo "$OUT" | grep -E 'transmitted|rtt' | tr '\n' ' ')"
  barrier tcp
  T0=$(now)
  dd if=/dev/zero bs=1M count="$MB" 2>/dev/null | nc "$PEER" 5001
  T1=$(now)
  echo "GUEST-VALUE tcp_seconds=$(awk "BEGIN{print $T1 - $T0}")"
else
  rm -f /tmp/hold; mkfifo /tmp/hold
  (nc -l -p 5001 <>/tmp/hold | wc -c >/tmp/bytes) &
  RECV=$!
  barrier tcp
  wait "$RECV"
  echo "GUEST-VALUE tcp_bytes=$(cat /tmp/bytes)"
fi
barrier end
finish
