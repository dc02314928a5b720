#!/usr/bin/env bash
# bench/nfs.sh — NFS between two TCG guests over three stacks, in one run (docs/performance.md,
# "NFS between two guests"):
#   ocrdma  NFSv3 over RDMA (proto=rdma, port 20049) on ocrdma on be2net on the emulated OCe14000s
#           (a release `ocetool emulator serve` per guest, the two ports cabled)
#   tcp     NFSv3 over TCP on be2net on the same emulated adapters
#   rxe     NFSv3 over RDMA on rdma_rxe over QEMU's virtio-net joined by -netdev dgram
# Each stack is one run of tests/nfs-rdma-qemu/run.sh (-smp 1, no vIOMMU) with NFS_MB=BENCH_MB
# (default 32): B writes BENCH_MB MiB of random data to A's export (cp, then sync) and reads it
# back after dropping its page cache (md5sum). The table gives the write and read throughput in
# MB/s (MiB / the guest's own elapsed seconds, /proc/uptime) when the data came back whole (the
# write-read check; otherwise "-"), and which of the run's checks failed.
# While the ocrdma pair runs, `perf record -a -e cpu-clock` (999 Hz, every CPU) profiles the
# machine; its samples per program and the emulated adapters' hottest functions follow the table
# (perf missing: installed with apt-get, linux-perf).
# Usage: bash bench/nfs.sh   (KEEP_WORK=DIR keeps the logs and perf.data; BENCH_MB)
set -euo pipefail
. "$(dirname "$0")/../tests/qemu/lib.sh"
qemu_init nfs-bench
MB=${BENCH_MB:-32}

. "$REPO/bench/perf.sh"
qemu_say "building ocetool (release)"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$REPO/target/bench}
(cd "$REPO" && cargo build --release --locked -q -p ocetool)
export NFS_OCETOOL=$CARGO_TARGET_DIR/release/ocetool NFS_MB=$MB

# value STACK NAME: a GUEST-VALUE of B's in STACK's run; mbps SECONDS: $MB MiB in SECONDS, in MB/s.
value() { sed -n "s/^GUEST-VALUE $2=//p" "$WORK/$1/serial-b.log" 2>/dev/null | tr -d '\r' | tail -1; }
mbps() { awk -v mb="$MB" -v s="$1" 'BEGIN { if (s > 0) printf "%.2f", mb * 1.048576 / s }'; }
STACKS="ocrdma tcp rxe"
declare -A WRITE=() READ=() STATUS=()
for stack in $STACKS; do
  qemu_say "stack $stack: $MB MiB"
  [ "$stack" != ocrdma ] || perf_start
  rc=0
  KEEP_WORK=$WORK/$stack bash "$REPO/tests/nfs-rdma-qemu/run.sh" --stack "$stack" >"$WORK/$stack.log" 2>&1 || rc=$?
  [ "$stack" != ocrdma ] || perf_stop
  tail -1 "$WORK/$stack.log"
  # The figures stand when the data came back whole (the harness's write-read check); the other
  # checks' outcome is printed beside them.
  failed=$(grep -o 'check [^ ]* failed' "$WORK/$stack.log" | cut -d' ' -f2 | tr '\n' ' ' || true)
  grep -q 'did not finish its checks' "$WORK/$stack.log" && failed="${failed}a guest did not finish"
  STATUS[$stack]="all passed"; [ "$rc" = 0 ] || STATUS[$stack]="failed: ${failed:-rc $rc}"
  if grep -q '^GUEST-CHECK PASS write-read' "$WORK/$stack/checks.log" 2>/dev/null; then
    WRITE[$stack]=$(mbps "$(value "$stack" write_seconds)") READ[$stack]=$(mbps "$(value "$stack" read_seconds)")
  else
    WRITE[$stack]=- READ[$stack]=-
  fi
done

echo
printf '%-8s %-18s %-18s %s\n' stack "write (MB/s)" "read (MB/s)" "the harness's checks"
for stack in $STACKS; do
  printf '%-8s %-18s %-18s %s\n' "$stack" "${WRITE[$stack]}" "${READ[$stack]}" "${STATUS[$stack]}"
done
num() { [[ ${1:-} =~ ^[0-9.]+$ ]]; }
if num "${WRITE[ocrdma]}" && num "${WRITE[tcp]}"; then
  echo "ocrdma / tcp: write $(awk "BEGIN{printf \"%.2f\", ${WRITE[ocrdma]} / ${WRITE[tcp]}}"), read $(awk "BEGIN{printf \"%.2f\", ${READ[ocrdma]} / ${READ[tcp]}}")"
fi
echo "(NFSv3, $MB MiB, MB = 10^6 bytes; ocrdma and tcp: the emulated OCe14000s; rxe: rdma_rxe over virtio-net)"
perf_summary "the ocrdma run, boots included"
