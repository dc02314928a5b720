# Sourced by the two-guest benches (bench/roce.sh, bench/nfs.sh): a whole-machine profile of one
# stack's run. perf works with software events only on these machines (docs/performance.md, "The
# machine"), so it samples the cpu-clock of every CPU at 999 Hz.
command -v perf >/dev/null || { apt-get update -qq; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq linux-perf >/dev/null; }

# perf_start: records into $WORK/perf.data until perf_stop; PERF_PID is the recorder.
perf_start() {
  perf record -q -a -e cpu-clock -F 999 -o "$WORK/perf.data" >"$WORK/perf.log" 2>&1 &
  PERF_PID=$!
}
perf_stop() { kill -INT "$PERF_PID"; wait "$PERF_PID" 2>/dev/null || true; }

# perf_summary WHAT: the share of the samples per program (QEMU's vCPU threads are "CPU 0/TCG"),
# then the functions of the emulated adapters' servers (ocetool), each as a share of all samples;
# or why there is no profile.
perf_summary() {
  if [ -s "$WORK/perf.data" ]; then
    echo
    echo "profile of $1 (perf record -a -e cpu-clock, every CPU): samples per program"
    perf report -i "$WORK/perf.data" --stdio --sort comm --percent-limit 1 2>/dev/null | grep -E '^ +[0-9]' | head -8
    echo "the emulated adapters' (ocetool's) hottest functions (share of all samples)"
    perf report -i "$WORK/perf.data" --stdio --comms ocetool --sort sym --percent-limit 0.02 2>/dev/null |
      grep -E '^ +[0-9]' | head -15
  else
    echo "profile: not available ($(tail -1 "$WORK/perf.log" 2>/dev/null || echo 'no perf.data'))"
  fi
}
