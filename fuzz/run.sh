#!/usr/bin/env bash
# Runs every cargo-fuzz target (`cargo fuzz list`, so a new target is picked up without editing
# this file) for a bounded time each, seeded from its checked-in corpus `fuzz/corpus/<target>/`
# when there is one, and fails on the first crash, hang or out-of-memory of any target.
#
# Usage: bash fuzz/run.sh            (env: FUZZ_SECONDS=45 per target)
# Prints one line per target: "fuzz <target>: N runs in S s, no crash"; on a crash, the
# libFuzzer report, the crashing input as hex and how to reproduce it. New corpus entries and
# crash inputs go to a temporary folder: the checked-in corpus is never changed.
set -euo pipefail
cd "$(dirname "$0")"
SECONDS_EACH=${FUZZ_SECONDS:-45}

command -v cargo-fuzz >/dev/null || cargo install --locked cargo-fuzz
# cargo-fuzz needs nightly compiler flags; a stable toolchain allows them with RUSTC_BOOTSTRAP.
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  fuzz() { cargo +nightly fuzz "$@"; }
else
  fuzz() { RUSTC_BOOTSTRAP=1 cargo fuzz "$@"; }
fi

fuzz build -O
WORK=$(mktemp -d /tmp/ocetool-fuzz.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

targets=$(fuzz list)
[ -n "$targets" ] || { echo "fuzz: cargo fuzz list found no target"; exit 1; }
failed=0
for t in $targets; do
  mkdir -p "$WORK/$t/corpus" "$WORK/$t/artifacts"
  seeds=()
  [ -d "corpus/$t" ] && seeds=("corpus/$t")
  # The first corpus folder takes new inputs; the seed folder is only read.
  if fuzz run -O "$t" "$WORK/$t/corpus" "${seeds[@]}" -- \
    -max_total_time="$SECONDS_EACH" -timeout=10 -artifact_prefix="$WORK/$t/artifacts/" >"$WORK/$t.log" 2>&1; then
    done_line=$(grep -E '^Done [0-9]+ runs in [0-9]+ second' "$WORK/$t.log" | tail -1)
    runs=$(echo "$done_line" | awk '{print $2}')
    secs=$(echo "$done_line" | awk '{print $5}')
    [ -n "$runs" ] || { echo "fuzz $t: finished without libFuzzer's summary"; tail -20 "$WORK/$t.log"; failed=1; continue; }
    echo "fuzz $t: $runs runs in $secs s, no crash (${#seeds[@]} seed folder(s), corpus now $(ls "$WORK/$t/corpus" | wc -l) inputs)"
  else
    failed=1
    echo "fuzz $t: FAILED"
    tail -40 "$WORK/$t.log"
    for a in "$WORK/$t/artifacts"/*; do
      [ -f "$a" ] || continue
      echo "fuzz $t: input $(basename "$a") ($(stat -c %s "$a") bytes), as hex:"
      od -An -v -tx1 "$a" | head -64
      echo "fuzz $t: reproduce with: cd fuzz && cargo fuzz run $t FILE (FILE: those bytes)"
    done
  fi
done
exit $failed
