#!/usr/bin/env bash
# bench/profile.sh — where a short ocetool process spends its time (docs/performance.md):
# for the process-start floor (noop), ocetool's own start-up (ocetool --version), query, raw CRC
# and fw inspect of a 16 MiB image, it prints
#   - instructions (valgrind callgrind), and those spent in clap's argument parsing and in the
#     command's own work;
#   - page faults and CPU time (perf stat, software events: this machine has no hardware counters);
#   - the heap's peak (valgrind dhat), the bytes that cost anonymous page faults.
# and then the CPU time of crc and fw inspect on a small (1.4 MiB) and the full (16 MiB) image,
# which splits each into a fixed part and a part that grows with the image.
# Usage: bash bench/profile.sh   (after bench/run.sh, whose release binaries it uses)
# Needs: valgrind and perf (linux-perf), installed with apt-get if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

need=()
command -v valgrind >/dev/null || need+=(valgrind)
command -v perf >/dev/null || need+=(linux-perf)
command -v jq >/dev/null || need+=(jq)
if [ ${#need[@]} -gt 0 ]; then
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get install -y -q --no-install-recommends "${need[@]}" >&2 ||
    { "${sudo[@]}" apt-get update -q >&2 && "${sudo[@]}" apt-get install -y -q --no-install-recommends "${need[@]}" >&2; }
fi

export CARGO_TARGET_DIR="$ROOT/target/bench"
cargo build --release --locked -q -p ocetool -p oce-bench-baselines
BIN="$CARGO_TARGET_DIR/release"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
"$BIN/ocetool" --device "emu:$W/emu" emulator init --yes >/dev/null
"$BIN/ocetool" fw build --layout full --version 12.0.0.1 --output "$W/full.ufi" >/dev/null
"$BIN/ocetool" fw build --layout small --version 12.0.0.1 --output "$W/small.ufi" >/dev/null

# Inclusive instructions of the first function matching $2 in callgrind_annotate output $1.
inclusive() {
  awk -v re="$2" '$0 ~ re {gsub(",", "", $1); print $1 + 0; exit}' "$1"
}
mi() { awk -v n="$1" 'BEGIN {printf "%.2f M", n / 1e6}'; }

printf "%-34s %10s %10s %10s %8s %9s %10s\n" "process" "instr" "clap" "work" "faults" "CPU" "heap peak"
profile() { # label work-function-regex cmd...
  local label=$1 work=$2
  shift 2
  valgrind --tool=callgrind --callgrind-out-file="$W/cg" "$@" >/dev/null 2>"$W/cg.log"
  local total clap job
  total=$(awk '/Collected :/ {print $NF; exit}' "$W/cg.log")
  callgrind_annotate --inclusive=yes "$W/cg" >"$W/cg.txt" 2>/dev/null
  clap=$(inclusive "$W/cg.txt" 'ocetool::parse::parse \[')
  job=0
  [ "$work" = - ] || job=$(inclusive "$W/cg.txt" "$work")
  valgrind --tool=dhat --dhat-out-file="$W/dhat.json" "$@" >/dev/null 2>"$W/dhat.log"
  local heap
  heap=$(awk '/At t-gmax:/ {gsub(",", "", $4); print $4; exit}' "$W/dhat.log")
  perf stat -r 200 -x, -e page-faults,task-clock "$@" >/dev/null 2>"$W/perf.csv"
  local faults cpu
  faults=$(awk -F, '$3 == "page-faults" {printf "%.0f", $1}' "$W/perf.csv")
  cpu=$(awk -F, '$3 == "task-clock" {printf "%.2f ms", $1}' "$W/perf.csv")
  printf "%-34s %10s %10s %10s %8s %9s %7s KiB\n" "$label" "$(mi "$total")" "$(mi "${clap:-0}")" "$(mi "${job:-0}")" \
    "$faults" "$cpu" "$(( ${heap:-0} / 1024 ))"
}
profile "noop" - "$BIN/noop"
profile "ocetool --version" - "$BIN/ocetool" --version
profile "ocetool --json query" 'oce_mailbox::adapter::info::read_info \[' \
  "$BIN/ocetool" --device "emu:$W/emu" --json query
profile "crc FILE (16 MiB)" 'crc32fast::hash \[|crc32fast::specialized::pclmulqdq::calculate \[' "$BIN/crc" "$W/full.ufi"
profile "ocetool fw inspect FILE (16 MiB)" 'oce_firmware::inspect::inspect_file \[' "$BIN/ocetool" fw inspect "$W/full.ufi"
echo
echo "instr: all user-space instructions (callgrind; valgrind runs crc32fast's SSE path, not AVX-512);"
echo "clap: inclusive in ocetool::parse::parse (building the clap command, parsing); work: inclusive in the command's own function"
echo "(read_info, the CRC, inspect_file); faults and CPU: perf stat, mean of 200 runs; heap peak: dhat."

# --- fixed cost and cost per byte: crc and fw inspect on a small and the full image ------------
echo
echo "CPU time (perf stat task-clock): median of 8 batches of 40 runs, the commands taking turns"
declare -A CPU
cmds=("noop|$BIN/noop" "version|$BIN/ocetool --version" "crc-small|$BIN/crc $W/small.ufi"
  "inspect-small|$BIN/ocetool fw inspect $W/small.ufi" "crc-full|$BIN/crc $W/full.ufi"
  "inspect-full|$BIN/ocetool fw inspect $W/full.ufi")
for _ in 1 2 3 4 5 6 7 8; do
  for c in "${cmds[@]}"; do
    # shellcheck disable=SC2086 # the command is split into words on purpose
    CPU[${c%%|*}]+=" $(perf stat -r 40 -x, -e task-clock ${c#*|} 2>&1 >/dev/null | awk -F, '$3 == "task-clock" {print $1}')"
  done
done
cpu() { tr ' ' '\n' <<<"${CPU[$1]}" | grep . | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
small=$(stat -c %s "$W/small.ufi") full=$(stat -c %s "$W/full.ufi")
printf "%-16s %12s %12s %26s\n" "" "small image" "16 MiB image" "per MiB (the difference)"
for what in crc inspect; do
  a=$(cpu "$what-small") b=$(cpu "$what-full")
  printf "%-16s %9.3f ms %9.3f ms %20.3f ms/MiB\n" "$what" "$a" "$b" \
    "$(awk -v a="$a" -v b="$b" -v s="$small" -v f="$full" 'BEGIN {print (b - a) / ((f - s) / 2^20)}')"
done
printf "%-16s %9.3f ms   (ocetool --version %.3f ms)\n" "noop" "$(cpu noop)" "$(cpu version)"
