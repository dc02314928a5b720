#!/usr/bin/env bash
# bench/roce.sh — RDMA between two TCG guests, next to TCP, in one run (docs/performance.md,
# "RoCE between two guests"):
#   rxe          rdma_rxe (RoCE v2 in the guest kernel) over QEMU's virtio-net, the two joined by
#                -netdev dgram
#   ocrdma       the Debian kernel's ocrdma (rebuilt with the user-PD fix of
#                tests/roce-qemu/ocrdma-fix.sh, without which no user-space verbs run) on be2net on
#                each guest's emulated OCe14000 (`ocetool emulator serve`, release build, the RoCE
#                profile), cabled with --wire/--wire-peer
#   tcp-oce14000 TCP over the same emulated adapters (be2net, in the ocrdma guests), measured as
#                bench/datapath.sh does: 50 pings, BENCH_MB MiB (default 32) with busybox nc
# Each pair boots tests/roce-qemu's initramfs with init-bench.sh, -smp 1, no vIOMMU. From B to A
# (A serves): ib_write_bw -s BENCH_SIZE (default 65536) -n BENCH_ITERS (default 200), its average
# in Mbit/s; ib_send_lat -s 64 -I 64 -n BENCH_ITERS, its average one-way latency (perftest's half round
# trip), doubled to a round trip; ibv_rc_pingpong -s 64 -n BENCH_ITERS, its usec/iter (one send
# each way per iteration: a round trip, timed with gettimeofday, a check on perftest's cycle
# counter under TCG). A stack whose tool failed prints "not available: " and the tool's own last
# error line, never a number. While the ocrdma pair runs, `perf record -a -e cpu-clock` (software
# clock samples of every CPU, 999 Hz) profiles the whole machine: the table is followed by the
# share of the samples per program (the two QEMUs, the two servers, the rest) and the servers'
# hottest functions (perf missing: installed with apt-get, linux-perf).
# Usage: bash bench/roce.sh   (KEEP_WORK=DIR keeps the logs and perf.data; BENCH_MB, BENCH_SIZE,
# BENCH_ITERS)
set -euo pipefail
. "$(dirname "$0")/../tests/qemu/lib.sh"
qemu_init roce-bench
QEMU_TIMEOUT=${QEMU_TIMEOUT:-900}
export QEMU_VIOMMU=off
MB=${BENCH_MB:-32} SIZE=${BENCH_SIZE:-65536} ITERS=${BENCH_ITERS:-200}
HERE=$REPO/tests/roce-qemu
. "$REPO/tests/datapath-qemu/ctl.sh"
. "$HERE/guest-root.sh"
. "$HERE/adapters.sh"

. "$REPO/bench/perf.sh"
qemu_say "building ocetool (release)"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$REPO/target/bench}
(cd "$REPO" && cargo build --release --locked -q -p ocetool)
OCETOOL=$CARGO_TARGET_DIR/release/ocetool
. "$HERE/ocrdma-fix.sh"
ocrdma_fixed
roce_initramfs "$WORK/bench.cpio.gz" "$HERE/init-bench.sh" --module-file "ocrdma.ko:$OCRDMA_KO"
host_action() { return 2; }

# pair STACK: boots the two guests of STACK, answers their barriers until both end; their logs
# are $WORK/STACK-a.log and -b.log.
pair() {
  local stack=$1
  SYNC_WHO=() ROCE_SERVERS=()
  case $stack in
    ocrdma)
      roce_adapter "$OCETOOL" a b; ROCE_SERVERS+=("$SERVED_PID"); ROCE_DEV_A=("${ROCE_DEV[@]}")
      roce_adapter "$OCETOOL" b a; ROCE_SERVERS+=("$SERVED_PID"); ROCE_DEV_B=("${ROCE_DEV[@]}") ;;
    rxe)
      mapfile -t ROCE_DEV_A < <(roce_nic "$WORK/rxe-a.wire" "$WORK/rxe-b.wire" 52:54:00:0d:00:01)
      mapfile -t ROCE_DEV_B < <(roce_nic "$WORK/rxe-b.wire" "$WORK/rxe-a.wire" 52:54:00:0d:00:02) ;;
  esac
  roce_pair_start "$WORK/bench.cpio.gz" "roce.stack=$stack rc.mb=$MB rc.size=$SIZE rc.iters=$ITERS" "$stack-"
  [ "$stack" != ocrdma ] || perf_start
  roce_pair_finish "$stack-"
  [ "$stack" != ocrdma ] || perf_stop
}

value() { sed -n "s/^GUEST-VALUE $2=//p" "$WORK/$1.log" | tail -1; }
# row STACK NAME FIELD: field FIELD of the result row (the line after perftest's header that
# starts with the message size) in B's output of NAME, when both ends exited 0.
row() {
  [ "$(value "$1-a" "$2_a_rc")" = 0 ] && [ "$(value "$1-b" "$2_b_rc")" = 0 ] || return 0
  value "$1-b" "$2_b_out" | tr '|' '\n' | awk -v f="$3" '$1 ~ /^[0-9]+$/ && NF >= f && $2 ~ /^[0-9]+$/ {v = $f} END {if (v != "") print v}'
}
# why STACK NAME: the reason a measurement is missing: the last line of either end that reads as
# an error, else the exit codes.
why() {
  local line
  line=$( (value "$1-a" "$2_a_out"; value "$1-b" "$2_b_out") | tr '|' '\n' |
    grep -iE "fail|couldn|unable|error|not found|refused|can't|cannot" | head -1 | sed 's/^ *//' | cut -c1-120)
  echo "not available: ${line:-server rc $(value "$1-a" "$2_a_rc"), client rc $(value "$1-b" "$2_b_rc")} ($2)"
}
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
declare -A BW=() LAT=() PP=()
for stack in rxe ocrdma; do
  qemu_say "pair $stack"
  pair "$stack"
  g=$(row "$stack" write_bw 4)
  BW[$stack]=${g:+$(awk "BEGIN{printf \"%.1f\", $g * 1000}")}
  [ -n "${BW[$stack]}" ] || BW[$stack]=$(why "$stack" write_bw)
  t=$(row "$stack" send_lat 6)
  LAT[$stack]=${t:+$(awk "BEGIN{printf \"%.0f\", $t * 2}")}
  [ -n "${LAT[$stack]}" ] || LAT[$stack]=$(why "$stack" send_lat)
  u=$(value "$stack-b" pingpong_b_out | tr '|' '\n' | sed -n 's/.* iters in .* = \([0-9.]*\) usec\/iter.*/\1/p' | tail -1)
  [ "$(value "$stack-a" pingpong_a_rc)" = 0 ] && [ "$(value "$stack-b" pingpong_b_rc)" = 0 ] || u=
  PP[$stack]=${u:+$(awk "BEGIN{printf \"%.0f\", $u}")}
  [ -n "${PP[$stack]}" ] || PP[$stack]=$(why "$stack" pingpong)
done
secs=$(value ocrdma-a tcp_seconds); bytes=$(value ocrdma-b tcp_bytes)
RTT=$(value ocrdma-a ping | sed -n 's|.*rtt min/avg/max/mdev = [0-9.]*/\([0-9.]*\)/.*|\1|p')
if [ "${bytes:-0}" = $((MB * 1048576)) ] && [ -n "$secs" ]; then
  BW[tcp]=$(awk "BEGIN{printf \"%.1f\", $MB * 1.048576 * 8 / $secs}")
else
  BW[tcp]="not available: $MB MiB not received whole (bytes ${bytes:-none}, ${secs:-no} s)"
fi
LAT[tcp]=${RTT:+$(awk "BEGIN{printf \"%.0f\", $RTT * 1000}")}
[ -n "${LAT[tcp]}" ] || LAT[tcp]="not available: no ping summary"
PP[tcp]=-
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)

echo
echo "roce-bench: B -> A, TCG -smp 1 guests; RDMA WRITE $SIZE B x $ITERS (ib_write_bw), 64 B x $ITERS (ib_send_lat, ibv_rc_pingpong); TCP $MB MiB (nc) and 50 pings; load average $LOAD0 before, $LOAD1 after"
# The table, each column as wide as its widest cell (a cell is a figure or "not available: ...").
{
  printf '%s\t%s\t%s\t%s\n' stack "bandwidth (Mbit/s)" "round trip (us)" "ibv_rc_pingpong (us/iter)"
  for s in rxe ocrdma tcp; do
    name=$s; [ "$s" = tcp ] && name=tcp-oce14000
    printf '%s\t%s\t%s\t%s\n' "$name" "${BW[$s]}" "${LAT[$s]}" "${PP[$s]}"
  done
} | awk -F'\t' '{for (i = 1; i <= NF; i++) {c[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i)}; n = NF}
  END {for (r = 1; r <= NR; r++) {l = ""; for (i = 1; i <= n; i++) l = l sprintf("%-" w[i] + 2 "s", c[r, i]); sub(/ +$/, "", l); print l}}'
num() { [[ $1 =~ ^[0-9.]+$ ]]; }
if num "${BW[ocrdma]}" && num "${BW[rxe]}"; then
  echo "ocrdma / rxe: bandwidth $(awk "BEGIN{printf \"%.2f\", ${BW[ocrdma]} / ${BW[rxe]}}"), round trip $(num "${LAT[ocrdma]}" && num "${LAT[rxe]}" && awk "BEGIN{printf \"%.2f\", ${LAT[ocrdma]} / ${LAT[rxe]}}")"
fi
echo "(rxe: rdma_rxe over virtio-net -netdev dgram; ocrdma: the emulated OCe14000s; round trip: 2 x ib_send_lat's t_avg, for TCP the ping average; - : no such tool over TCP)"
perf_summary "the ocrdma pair"
