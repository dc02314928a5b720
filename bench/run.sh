#!/usr/bin/env bash
# bench/run.sh — ocetool's hot paths against their physical limits, in one run, on this
# machine. Prints a table of wall-time medians, peak RSS and the ratios against the targets, and
# exits 0 whatever the ratios are (a measurement, not a test; docs/performance.md explains it).
#
# Usage: bash bench/run.sh [--quick] [--no-criterion]
#   --quick         fewer runs per measurement (a rough table in about half the time)
#   --no-criterion  skip the in-process criterion benches (saves their build on a fresh clone)
# Environment:
#   BENCH_DIR       where the emulator state directories and the image go (default: a new
#                   temporary directory, removed at the end); its file system is in the table
#   BENCH_ROUNDS    rounds (default 5): each round times every command next to its baselines,
#                   so the comparisons spread over the whole run and load from elsewhere hits a
#                   command and its baseline alike
#
# Needs: cargo; hyperfine, lspci (pciutils), GNU time and jq — installed with apt-get if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

QUICK=0
CRITERION=1
for arg in "$@"; do
  case $arg in
    --quick) QUICK=1 ;;
    --no-criterion) CRITERION=0 ;;
    -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/run.sh: unknown argument $arg (see --help)" >&2; exit 2 ;;
  esac
done
ROUNDS=${BENCH_ROUNDS:-5}
if [ "$QUICK" = 1 ]; then SCALE=3; else SCALE=1; fi
runs() { echo $(( ($1 + SCALE - 1) / SCALE )); }

say() { echo "== $*" >&2; }

# --- tools -----------------------------------------------------------------------------------
need=()
command -v hyperfine >/dev/null || need+=(hyperfine)
command -v lspci >/dev/null || need+=(pciutils)
[ -x /usr/bin/time ] || need+=(time)
command -v jq >/dev/null || need+=(jq)
if [ ${#need[@]} -gt 0 ]; then
  say "installing ${need[*]} with apt-get"
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get install -y -q --no-install-recommends "${need[@]}" >&2 ||
    { "${sudo[@]}" apt-get update -q >&2 && "${sudo[@]}" apt-get install -y -q --no-install-recommends "${need[@]}" >&2; }
fi

# --- build -----------------------------------------------------------------------------------
# Its own target directory under the repository's target/, so the script never waits on (or
# disturbs) other builds, and a fresh clone needs nothing else.
export CARGO_TARGET_DIR="$ROOT/target/bench"
say "building release binaries (ocetool, the baselines) in $CARGO_TARGET_DIR"
cargo build --release --locked -q -p ocetool -p oce-bench-baselines
if [ "$CRITERION" = 1 ]; then
  say "building the criterion benches (oce-tests hot_paths, oce-firmware inspect)"
  cargo bench --locked -q --no-run -p oce-tests --bench hot_paths -p oce-firmware --bench inspect
fi
BIN="$CARGO_TARGET_DIR/release"
OCETOOL="$BIN/ocetool"

# --- fixtures --------------------------------------------------------------------------------
if [ -n "${BENCH_DIR:-}" ]; then
  W=$BENCH_DIR
  mkdir -p "$W"
  rm -rf "$W"/fresh "$W"/query "$W"/flash "$W"/reflash "$W"/check "$W"/*.json "$W"/*.rss "$W"/.*.lock
else
  W=$(mktemp -d)
  trap 'rm -rf "$W"' EXIT
fi
IMG="$W/full.ufi"
say "fixtures in $W: an emulated adapter and a 16 MiB image"
"$OCETOOL" --device "emu:$W/fresh" emulator init --yes >/dev/null
"$OCETOOL" fw build --layout full --version 12.0.0.1 --output "$IMG" >/dev/null
cp -a "$W/fresh" "$W/query"
cp -a "$W/fresh" "$W/reflash"
"$OCETOOL" --device "emu:$W/reflash" --json fw update "$IMG" --yes >/dev/null
IMG_BYTES=$(stat -c %s "$IMG")
PAYLOAD_BYTES=$(( 16 << 20 ))

# --- checks outside the timed runs -------------------------------------------------------------
say "checking what the timed commands do"
"$OCETOOL" --device "emu:$W/query" --json query | jq -e '.model and .firmware.running' >/dev/null
"$BIN/crc" "$IMG" >/dev/null
"$OCETOOL" --json fw inspect "$IMG" | jq -e '.flashable == true and ([.sections[].crc_ok] | all)' >/dev/null
cp -a "$W/fresh" "$W/check"
"$OCETOOL" --device "emu:$W/check" --json fw update "$IMG" --yes >"$W/full.json"
jq -e --argjson n "$PAYLOAD_BYTES" '.changed == true and .bytes_written == $n
  and ([.sections[].action] | all(. == "flashed"))' "$W/full.json" >/dev/null ||
  { echo "bench/run.sh: the full flash did not write every section:" >&2; cat "$W/full.json" >&2; exit 1; }
# The re-flash: nothing changed, every section found equal by its CRC...
"$OCETOOL" --device "emu:$W/reflash" --json fw update "$IMG" --yes >"$W/reflash.json"
jq -e '.changed == false and .bytes_written == 0
  and ([.sections[].action] | all(. == "skipped_same"))' "$W/reflash.json" >/dev/null ||
  { echo "bench/run.sh: the re-flash was not a no-op:" >&2; cat "$W/reflash.json" >&2; exit 1; }
# ...and no WRITE_FLASHROM sent: with every WRITE_FLASHROM (COMMON 7) made to fail, the re-flash
# still succeeds, while a full flash under the same fault fails (so the fault does bite).
fault="status=1:7:1"
"$OCETOOL" --device "emu:$W/reflash" emulator fault set "$fault" >/dev/null
"$OCETOOL" --device "emu:$W/reflash" --json fw update "$IMG" --yes >/dev/null ||
  { echo "bench/run.sh: the re-flash sent WRITE_FLASHROM" >&2; exit 1; }
"$OCETOOL" --device "emu:$W/reflash" emulator fault clear --all >/dev/null
rm -rf "$W/check" && cp -a "$W/fresh" "$W/check"
"$OCETOOL" --device "emu:$W/check" emulator fault set "$fault" >/dev/null
if "$OCETOOL" --device "emu:$W/check" --json fw update "$IMG" --yes >/dev/null; then
  echo "bench/run.sh: a full flash succeeded with WRITE_FLASHROM failing: the check proves nothing" >&2
  exit 1
fi
rm -rf "$W/check"
REFLASH_PROOF="changed=false, all sections skipped_same, 0 bytes; succeeds with WRITE_FLASHROM forced to fail"

# --- wall time -------------------------------------------------------------------------------
# ROUNDS rounds; each round times every comparison once, a command and its baselines back to back
# (hyperfine, no shell), so a comparison is spread over the whole run and load from elsewhere hits
# a command and its baseline alike. Medians are over all rounds' runs.
declare -A TIMES
measure() { # group round runs warmup prepare(or -) cmd1 name1 [cmd2 name2 ...]
  local group=$1 r=$2 n=$3 warm=$4 prep=$5
  shift 5
  local cmds=() names=() args=()
  while [ $# -gt 0 ]; do cmds+=("$1"); names+=("$2"); shift 2; done
  [ "$prep" = - ] || args+=(--prepare "$prep")
  hyperfine -N --style none --warmup "$warm" --runs "$n" "${args[@]}" \
    --export-json "$W/$group.$r.json" "${cmds[@]}" >/dev/null 2>&1
  for i in "${!names[@]}"; do
    TIMES[${names[$i]}]+=" $(jq -r ".results[$i].times[]" "$W/$group.$r.json" | tr '\n' ' ')"
  done
}
median() { tr ' ' '\n' <<<"${TIMES[$1]}" | grep . | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
minimum() { tr ' ' '\n' <<<"${TIMES[$1]}" | grep . | sort -g | head -1; }
count() { tr ' ' '\n' <<<"${TIMES[$1]}" | grep -c .; }

FRESH_COPY="bash -c 'rm -rf $W/flash && cp -a $W/fresh $W/flash'"
for r in $(seq "$ROUNDS"); do
  say "round $r of $ROUNDS: query vs noop, lspci -n, ocetool --version; fw inspect vs crc;" \
    "full fw update (fresh adapter each run) vs memcpy; re-flash vs fw inspect"
  measure query "$r" "$(runs 40)" 5 - "$OCETOOL --device emu:$W/query --json query" query "$BIN/noop" noop \
    "lspci -n" lspci "$OCETOOL --version" version
  measure inspect "$r" "$(runs 30)" 3 - "$OCETOOL fw inspect $IMG" inspect "$BIN/crc $IMG" crc
  measure flash "$r" "$(runs 6)" 1 "$FRESH_COPY" \
    "$OCETOOL --device emu:$W/flash --json fw update $IMG --yes" update "$BIN/memcpy $IMG" memcpy
  measure reflash "$r" "$(runs 30)" 3 - \
    "$OCETOOL --device emu:$W/reflash --json fw update $IMG --yes" reflash "$OCETOOL fw inspect $IMG" inspect2
done

# --- peak RSS --------------------------------------------------------------------------------
declare -A RSS
peak_rss() { # name prepare(or -) cmd...: the largest %M (KiB) over a few runs
  local name=$1 prep=$2 best=0 kib
  shift 2
  for _ in 1 2 3 4 5; do
    [ "$prep" = - ] || bash -c "$prep"
    /usr/bin/time -f %M -o "$W/$name.rss" "$@" >/dev/null 2>&1
    kib=$(tail -1 "$W/$name.rss")
    [ "$kib" -gt "$best" ] && best=$kib
  done
  RSS[$name]=$best
}
say "peak RSS (GNU time %M)"
peak_rss query - "$OCETOOL" --device "emu:$W/query" --json query
peak_rss noop - "$BIN/noop"
peak_rss lspci - lspci -n
peak_rss inspect - "$OCETOOL" fw inspect "$IMG"
peak_rss crc - "$BIN/crc" "$IMG"
peak_rss update "rm -rf $W/flash && cp -a $W/fresh $W/flash" "$OCETOOL" --device "emu:$W/flash" --json fw update "$IMG" --yes
peak_rss memcpy - "$BIN/memcpy" "$IMG"
peak_rss reflash - "$OCETOOL" --device "emu:$W/reflash" --json fw update "$IMG" --yes

# --- in process (criterion) ------------------------------------------------------------------
declare -A CRIT
if [ "$CRITERION" = 1 ]; then
  say "in-process criterion benches (oce-tests hot_paths, oce-firmware inspect)"
  crit_time=2
  [ "$QUICK" = 1 ] && crit_time=1
  rm -rf "$CARGO_TARGET_DIR/criterion"
  cargo bench --locked -q -p oce-tests --bench hot_paths -p oce-firmware --bench inspect -- \
    --noplot --warm-up-time 1 --measurement-time "$crit_time" >"$W/criterion.txt" 2>&1 ||
    { cat "$W/criterion.txt" >&2; echo "bench/run.sh: the criterion benches failed" >&2; exit 1; }
  for id in mailbox_round_trip/embedded_get_fw_version mailbox_round_trip/non_embedded_get_cntl_attributes \
    mailbox_round_trip/non_embedded_get_func_config flash_16mib/memcpy flash_16mib/full_flash \
    flash_16mib/reflash_unchanged 16MiB/crc32fast_raw 16MiB/parse_and_crc 16MiB/inspect; do
    CRIT[$id]=$(jq -r '.median.point_estimate' "$CARGO_TARGET_DIR/criterion/$id/new/estimates.json")
  done
fi

# --- table -----------------------------------------------------------------------------------
ms() { awk -v s="$1" 'BEGIN {printf "%.2f ms", s * 1000}'; }
us() { awk -v ns="$1" 'BEGIN {printf (ns < 1e6) ? "%.2f µs" : "%.3f ms", (ns < 1e6) ? ns / 1e3 : ns / 1e6}'; }
mib() { awk -v k="$1" 'BEGIN {printf "%.1f MiB", k / 1024}'; }
gibs() { awk -v b="$1" -v s="$2" 'BEGIN {printf "%.2f GiB/s", b / s / 2^30}'; }
verdict() { awk -v r="$1" -v op="$2" -v lim="$3" 'BEGIN {ok = (op == "<=") ? r <= lim : r >= lim; print ok ? "PASS" : "FAIL"}'; }
row() { printf "%-44s %12s %10s %7s %s\n" "$@"; }

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
fs="$(stat -f -c %T "$W") ($(df -P "$W" | awk 'NR == 2 {print $1}'))"
echo
commit=$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)
echo "ocetool bench/run.sh — $(date -u +%Y-%m-%dT%H:%MZ), commit $commit"
echo "machine: $(nproc) CPUs, $cpu; kernel $(uname -r); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "state directory and image: $W on $fs; image $IMG_BYTES bytes, payload $PAYLOAD_BYTES bytes"
echo "tools: $(hyperfine --version), GNU time %M, $(rustc --version | cut -d' ' -f1-2)"
echo "wall time: median (min) over $ROUNDS rounds, each timing every command next to its baselines;"
echo "peak RSS: largest of 5 runs"
echo
row "process" "median" "min" "runs" "   peak RSS"
for entry in "query:ocetool --device emu:DIR --json query" "noop:noop (process-start floor)" "lspci:lspci -n" \
  "version:ocetool --version (its own start-up)" "inspect:ocetool fw inspect FILE (16 MiB)" "crc:crc FILE (crc32fast, 16 MiB)" \
  "update:ocetool fw update FILE --yes (full)" "memcpy:memcpy FILE (16 MiB)" \
  "reflash:ocetool fw update FILE --yes (unchanged)" "inspect2:ocetool fw inspect FILE (same round)"; do
  name=${entry%%:*}
  rss=${RSS[$name]:-}
  row "${entry#*:}" "$(ms "$(median "$name")")" "$(ms "$(minimum "$name")")" "$(count "$name")" \
    "   ${rss:+$(mib "$rss")}"
done

q=$(median query) n=$(median noop) l=$(median lspci) v=$(median version)
i=$(median inspect) c=$(median crc) u=$(median update) m=$(median memcpy)
rf=$(median reflash) i2=$(median inspect2)
r_query=$(awk -v a="$q" -v b="$n" 'BEGIN {print a / b}')
r_lspci=$(awk -v a="$q" -v b="$l" 'BEGIN {print a / b}')
r_inspect=$(awk -v a="$i" -v b="$c" 'BEGIN {print b / a}')
r_flash=$(awk -v u="$u" -v m="$m" -v p="$PAYLOAD_BYTES" -v f="$IMG_BYTES" 'BEGIN {print (p / u) / (f / m)}')
r_reflash=$(awk -v a="$rf" -v b="$i2" 'BEGIN {print a / b}')
# ocetool's own start-up (ocetool --version: load, clap) taken out of ocetool's times, and the
# floor out of the baselines': what each command does beyond starting (info, not a target).
startup=$(awk -v a="$v" -v b="$n" 'BEGIN {printf "%.2f ms", (a - b) * 1000}')
work_query=$(awk -v a="$q" -v b="$v" 'BEGIN {printf "%.2f ms", (a - b) * 1000}')
r_inspect_work=$(awk -v i="$i" -v c="$c" -v v="$v" -v n="$n" 'BEGIN {print (c - n) / (i - v)}')
rss_update_mib=$(awk -v k="${RSS[update]}" 'BEGIN {print k / 1024}')

pct() { awk -v r="$1" 'BEGIN {printf "%.0f%%", r * 100}'; }
times() { awk -v r="$1" 'BEGIN {printf "%.2fx", r}'; }
target() { # label measured op limit-shown ratio limit
  printf "%-58s %10s %12s  %s\n" "$1" "$2" "$3 $4" "$(verdict "$5" "$3" "$6")"
}
header() { printf "%-58s %10s %12s  %s\n" "$1" "measured" "target" "result"; }

echo
header "target (process level, wall-time medians)"
target "query / noop (process-start floor)" "$(times "$r_query")" "<=" "2x" "$r_query" 2
info() { printf "%-58s %10s %12s  %s\n" "$1" "$2" "" "info"; }
info "query / lspci -n (for scale)" "$(times "$r_lspci")"
info "  ocetool start-up: ocetool --version - noop" "$startup"
info "  query's own work: query - ocetool --version" "$work_query"
target "fw inspect throughput / crc throughput" "$(pct "$r_inspect")" ">=" "70%" "$r_inspect" 0.70
info "  beyond start-up: (crc - noop) / (inspect - --version)" "$(pct "$r_inspect_work")"
target "full fw update throughput / memcpy throughput" "$(pct "$r_flash")" ">=" "15%" "$r_flash" 0.15
target "re-flash (unchanged) time / fw inspect time" "$(times "$r_reflash")" "<=" "1.2x" "$r_reflash" 1.2
printf "%-58s %10s %12s  %s\n" "re-flash sends no WRITE_FLASHROM" "proved" "none" "PASS"
echo "    ($REFLASH_PROOF)"
target "peak RSS of fw update, 16 MiB image" "$(mib "${RSS[update]}")" "<=" "48 MiB" "$rss_update_mib" 48

if [ "$CRITERION" = 1 ]; then
  echo
  printf "%-58s %10s  %s\n" "in process (criterion medians)" "median" "throughput"
  for id in mailbox_round_trip/embedded_get_fw_version mailbox_round_trip/non_embedded_get_cntl_attributes \
    mailbox_round_trip/non_embedded_get_func_config; do
    printf "%-58s %10s\n" "$id" "$(us "${CRIT[$id]}")"
  done
  for id in 16MiB/crc32fast_raw 16MiB/parse_and_crc 16MiB/inspect flash_16mib/memcpy flash_16mib/full_flash \
    flash_16mib/reflash_unchanged; do
    printf "%-58s %10s  %s\n" "$id" "$(us "${CRIT[$id]}")" \
      "$(gibs "$IMG_BYTES" "$(awk -v ns="${CRIT[$id]}" 'BEGIN {print ns / 1e9}')")"
  done
  ci=$(awk -v a="${CRIT[16MiB/crc32fast_raw]}" -v b="${CRIT[16MiB/inspect]}" 'BEGIN {print a / b}')
  cf=$(awk -v a="${CRIT[flash_16mib/memcpy]}" -v b="${CRIT[flash_16mib/full_flash]}" 'BEGIN {print a / b}')
  cr=$(awk -v a="${CRIT[flash_16mib/reflash_unchanged]}" -v b="${CRIT[16MiB/inspect]}" 'BEGIN {print a / b}')
  echo
  header "the same targets in process (criterion medians, for reference)"
  target "inspect throughput / crc32fast throughput" "$(pct "$ci")" ">=" "70%" "$ci" 0.70
  target "full flash throughput / memcpy throughput" "$(pct "$cf")" ">=" "15%" "$cf" 0.15
  target "re-flash (unchanged) time / inspect time" "$(times "$cr")" "<=" "1.2x" "$cr" 1.2
fi
exit 0
