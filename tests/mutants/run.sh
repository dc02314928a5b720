#!/usr/bin/env bash
# Planted bugs, each caught by the narrowest test that claims to catch it: proof that a check can
# fail for the reason its name says. Each tests/mutants/*.patch is a small change to the code
# under test (a git diff) after a header:
#
#   mutant: what the bug is
#   test: the command that must catch it (run from the repository's root)
#   expect: the check IDs whose failure must be printed (a guest script's "check ID failed"
#           line), or the names of `cargo test` tests that must fail ("NAME --- FAILED")
#   expect-text: a text the test's output must hold (a fuzz target's assertion message)
#   (without either, a non-zero exit suffices; with them, a test that fails for another reason,
#   such as a patch that does not build, leaves the mutant surviving)
#
# For each: the patch is applied to the working tree, the test runs, the patch is reverted (also
# when this script is interrupted). A mutant is caught when the test exits non-zero and prints
# every expected failure; one that survives is listed. The working tree must have no change in the
# files a patch touches, so nothing of yours is reverted with it.
# Usage: tests/mutants/run.sh [PATCH...]   (default: every tests/mutants/*.patch; not part of
# .ci/run: each guest script it runs takes minutes)
# Ends with "mutants: N caught, M survived"; exits non-zero when any survived or did not apply.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
cd "$REPO"
PATCHES=("$@")
[ ${#PATCHES[@]} -gt 0 ] || PATCHES=(tests/mutants/*.patch)
OUT=$(mktemp -d /tmp/ocetool-mutants.XXXXXX)
APPLIED=""
revert() {
  [ -z "$APPLIED" ] || git apply -R "$APPLIED" || echo "mutants: could not revert $APPLIED: revert it by hand"
  APPLIED=""
}
trap 'revert; rm -rf "$OUT"' EXIT
trap 'exit 130' INT TERM

caught=0 survived=0 broken=0 names=()
for p in "${PATCHES[@]}"; do
  name=$(basename "$p" .patch)
  what=$(sed -n 's/^mutant: //p' "$p" | head -1)
  cmd=$(sed -n 's/^test: //p' "$p" | head -1)
  expect=$(sed -n 's/^expect: //p' "$p" | head -1)
  text=$(sed -n 's/^expect-text: //p' "$p" | head -1)
  if [ -z "$cmd" ]; then
    echo "mutants: $name: no 'test:' line"; broken=$((broken + 1)); names+=("$name (no test)"); continue
  fi
  files=$(git apply --numstat "$p" | awk '{print $3}')
  if ! git diff --quiet HEAD -- $files || ! git apply --check "$p" 2>"$OUT/$name.apply"; then
    echo "mutants: $name: does not apply to a clean tree ($(tr '\n' ' ' <"$OUT/$name.apply")changed: $(git diff --name-only HEAD -- $files | tr '\n' ' '))"
    broken=$((broken + 1)); names+=("$name (does not apply)"); continue
  fi
  git apply "$p" && APPLIED=$p
  t0=$(date +%s)
  bash -c "$cmd" >"$OUT/$name.log" 2>&1
  rc=$?
  revert
  missing=""
  for id in $expect; do
    grep -qE "(: check $id (failed|never ran)|^test $id \.\.\. FAILED$|^$id --- FAILED$|^---- $id stdout ----$)" "$OUT/$name.log" ||
      missing="$missing $id"
  done
  [ -z "$text" ] || grep -qF -- "$text" "$OUT/$name.log" || missing="$missing '$text'"
  secs=$(($(date +%s) - t0))
  if [ "$rc" != 0 ] && [ -z "$missing" ]; then
    caught=$((caught + 1))
    echo "mutants: $name caught in ${secs}s ($what): $cmd exited $rc; failed as expected: ${expect:-}${text:+ "$text"}"
    grep -E ': check [^ ]+ (failed|never ran)|^  evidence: |: [0-9]+ passed, [0-9]+ failed$|^test .* FAILED$' "$OUT/$name.log" |
      head -12 | sed 's/^/    /'
  else
    survived=$((survived + 1)); names+=("$name")
    echo "mutants: $name SURVIVED in ${secs}s ($what): $cmd exited $rc; not seen failing:${missing:- (it passed)}"
    tail -15 "$OUT/$name.log" | sed 's/^/    /'
  fi
done
if [ "$broken" = 0 ]; then
  echo "mutants: $caught caught, $survived survived"
else
  echo "mutants: $caught caught, $survived survived, $broken did not apply"
fi
[ ${#names[@]} = 0 ] || echo "mutants: not caught: ${names[*]}"
[ "$survived" = 0 ] && [ "$broken" = 0 ]
