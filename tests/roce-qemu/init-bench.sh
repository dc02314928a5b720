#!/bin/busybox sh
# A guest of bench/roce.sh: the stack's RDMA device (roce.sh's stack_up), then, A serving and B the
# client: ib_write_bw (bandwidth), ib_send_lat and ibv_rc_pingpong (latency); on the emulated
# adapters (roce.stack=ocrdma) also TCP over be2net as bench/datapath.sh measures it: 50 pings
# from A, then rc.mb MiB from A to B with busybox nc, timed by A, counted by B.
. /lib/guest.sh
. /lib/common.sh
. /lib/roce.sh
stack_up
barrier up
MB=$(sed -n 's/.*rc\.mb=\([0-9]*\).*/\1/p' /proc/cmdline)
SIZE=$(sed -n 's/.*rc\.size=\([0-9]*\).*/\1/p' /proc/cmdline)
ITERS=$(sed -n 's/.*rc\.iters=\([0-9]*\).*/\1/p' /proc/cmdline)
pair write_bw ib_write_bw -d "$DEV" -x "$GIDX" -s "$SIZE" -n "$ITERS" -F --report_gbits
# -I 64: the 64-byte messages sent inline, as perftest does by default, but asking for no more
# inline room than they need: perftest's default request, 236 bytes (DEF_INLINE_SEND_RC_UC in
# perftest_parameters.h), is more than ocrdma allows with the adapter's 256-byte send entries
# (max_inline_data = wqe_size - 32, ocrdma_hw.c), so its CREATE_QP would fail in the driver.
pair send_lat ib_send_lat -d "$DEV" -x "$GIDX" -s 64 -I 64 -n "$ITERS" -F
pair pingpong ibv_rc_pingpong -d "$DEV" -g "$GIDX" -s 64 -n "$ITERS"
if [ "$STACK" = ocrdma ]; then
  now() { cut -d' ' -f1 /proc/uptime; }
  if [ "$SIDE" = a ]; then
    OUT=$($PING -q -c 50 -i 0.1 -w 60 "$PEER")
    echo "GUEST-VALUE ping=$(echo "$OUT" | grep -E 'transmitted|rtt' | tr '\n' ' ')"
    barrier tcp
    T0=$(now)
    dd if=/dev/zero bs=1M count="$MB" 2>/dev/null | timeout 300 nc "$PEER" 5001
    T1=$(now)
    echo "GUEST-VALUE tcp_seconds=$(awk "BEGIN{print $T1 - $T0}")"
  else
    rm -f /tmp/hold; mkfifo /tmp/hold
    (timeout 300 nc -l -p 5001 <>/tmp/hold | wc -c >/tmp/bytes) &
    RECV=$!
    barrier tcp
    wait "$RECV"
    echo "GUEST-VALUE tcp_bytes=$(cat /tmp/bytes)"
  fi
fi
barrier end
finish
