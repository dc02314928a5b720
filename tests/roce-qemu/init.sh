#!/bin/busybox sh
# A guest of tests/roce-qemu: A (10.0.0.1) runs every server, B (10.0.0.2) every client, in step
# through the host's barriers. Each guest checks its own device and kernel log; the pair's results
# (both sides' exit codes and outputs) go to the host as GUEST-VALUE lines, which run.sh checks.
# Every tool runs under a timeout and both guests pass every barrier whatever failed before, so a
# stack that cannot do a step fails its check and goes on to the next.
. /lib/guest.sh
. /lib/common.sh
. /lib/roce.sh
stack_up
MAD=$(mad_errors)
[ "$DEV_RC" = 0 ] && [ -z "$MAD" ]
check "modprobe-$SIDE $STACK: $DEV registered, no ib_mad error" $? \
  "expected /sys/class/infiniband/$DEV and no ib_mad error line; device rc $DEV_RC ${LINK:+(rdma link: $LINK)}; ib_mad: ${MAD:-none}; last RDMA lines: $(rdma_lines | tail -4)"

# The port as ibv_devinfo sees it; the host compares it with the adapter (ocetool query).
timeout 60 ibv_devinfo -v -d "$DEV" >/tmp/devinfo 2>&1
echo "GUEST-VALUE devinfo_${SIDE}_rc=$?"
for f in state fw_ver node_guid link_layer active_mtu; do
  echo "GUEST-VALUE devinfo_${SIDE}_$f=$(sed -n "s/^[[:space:]]*$f:[[:space:]]*//p" /tmp/devinfo | head -1)"
done
echo "GUEST-VALUE devinfo_${SIDE}_out=$(head -30 /tmp/devinfo | tr '\n' '|' | tr -s ' \t' ' ' | cut -c1-600)"
barrier up

PP="ibv_rc_pingpong -d $DEV -g $GIDX"
pair pp_default $PP -n 50
pair pp_inline $PP -n 50 -s 64
pair pp_events $PP -n 50 -e
pair pp_64k $PP -n 10 -s 65536
# perftest: -F, since a TCG guest's cpufreq values differ (only a warning then).
pair write_bw ib_write_bw -d "$DEV" -x "$GIDX" -n 300 -s 4096 -F
pair read_bw ib_read_bw -d "$DEV" -x "$GIDX" -n 300 -s 4096 -F
# A wrong rkey: B's RDMA WRITE completes with a remote access error, A's buffer stays untouched.
pair bad_rkey bad_rkey -d "$DEV" -g "$GIDX"

# Destroy under traffic: B's client is killed (SIGKILL: the kernel destroys its QP, CQs and MRs)
# while the pair ping-pongs; A's server, left waiting for receives that never come, is killed 2 s
# later the same way; then a second run.
# The RDMA packets B's port sent, from the counter the stack keeps (rxe: hw_counters/sent_pkts;
# ocrdma: the PMA counter port_xmit_packets); "none" if neither exists.
sent() {
  for c in hw_counters/sent_pkts counters/port_xmit_packets; do
    [ -r "/sys/class/infiniband/$DEV/ports/1/$c" ] && { cat "/sys/class/infiniband/$DEV/ports/1/$c"; return; }
  done
  echo none
}
if [ "$SIDE" = a ]; then
  serve dut $PP -n 1000000 || echo "GUEST: the dut server did not listen: $(tail -n 3 /tmp/dut.out | tr '\n' '|')"
  barrier dut
  barrier dut-killed
  served dut 2
else
  barrier dut
  timeout $TOOL_TIMEOUT $PP -n 1000000 "$PEER" >/tmp/dut.out 2>&1 &
  CLIENT=$!
  sleep 5
  S1=$(sent); sleep 2; S2=$(sent)
  ALIVE=no; kill -0 "$CLIENT" 2>/dev/null && ALIVE=yes
  kill -KILL "$CLIENT" 2>/dev/null
  wait "$CLIENT" 2>/dev/null
  result dut $? /tmp/dut.out
  echo "GUEST-VALUE dut_b_alive=$ALIVE"
  echo "GUEST-VALUE dut_b_sent=$S1 $S2"
  barrier dut-killed
fi
pair dut_after $PP -n 50

# The kernel log (roce.sh says what is allowed).
bad_lines() { roce_bad_lines; }
dmesg_check "dmesg-clean-$SIDE"
barrier end
finish
