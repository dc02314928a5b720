#!/usr/bin/env bash
# The Ansible collection (ansible/, ocetool.oneconnect) run by ansible-core against an emulated
# adapter on localhost: facts, check mode changes nothing, the first run changes, the second does
# not, a bad image fails with ocetool's message.
# ansible-core comes from PyPI into a venv kept in /var/tmp/ocetool-cache (rebuilt when missing).
# Ends with "ansible: N passed, M failed"; exits non-zero on a failure.
set -uo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${OCETOOL_CACHE:-/var/tmp/ocetool-cache}
ANSIBLE_CORE=ansible-core==2.18.19
VENV=$CACHE/ansible-venv
T0=$(date +%s)
say() { echo "ansible: $* ($(( $(date +%s) - T0 ))s)"; }

if ! "$VENV/bin/ansible-playbook" --version 2>/dev/null | grep -q "core ${ANSIBLE_CORE#*==}"; then
    say "installing $ANSIBLE_CORE into $VENV"
    rm -rf "$VENV"
    python3 -m venv "$VENV" && "$VENV/bin/pip" install -q "$ANSIBLE_CORE" || { echo "ansible: 0 passed, 1 failed"; exit 1; }
fi

say "building ocetool"
cargo build --locked -q -p ocetool --manifest-path "$REPO/Cargo.toml" || { echo "ansible: 0 passed, 1 failed"; exit 1; }
# cargo's target folder: CARGO_TARGET_DIR when set (relative to where cargo ran), else the workspace's.
TARGET=${CARGO_TARGET_DIR:-$REPO/target}
case $TARGET in /*) ;; *) TARGET=$PWD/$TARGET ;; esac
BIN=$TARGET/debug/ocetool

WORK=$(mktemp -d /tmp/ocetool-ansible.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/collections/ansible_collections/ocetool"
ln -s "$REPO/ansible" "$WORK/collections/ansible_collections/ocetool/oneconnect"
"$BIN" fw build --version 11.2.0.0 -o "$WORK/new.ufi" >/dev/null
"$BIN" fw build --version 10.0.0.0 -o "$WORK/old.ufi" >/dev/null
head -c 8192 /dev/zero | tr '\0' 'Z' >"$WORK/bad.ufi"

playbook=$REPO/tests/ansible/playbook.yml
expected=$(grep -c 'name: "check: ' "$playbook")
say "running the playbook ($expected checks)"
ANSIBLE_COLLECTIONS_PATH=$WORK/collections ANSIBLE_NOCOLOR=1 ANSIBLE_LOCALHOST_WARNING=false \
ANSIBLE_INVENTORY_UNPARSED_WARNING=false ANSIBLE_PYTHON_INTERPRETER=$VENV/bin/python \
    "$VENV/bin/ansible-playbook" -i localhost, "$playbook" \
    -e "ocetool_bin=$BIN emu=$WORK/emu new_image=$WORK/new.ufi old_image=$WORK/old.ufi bad_image=$WORK/bad.ufi" \
    >"$WORK/out.log" 2>&1
rc=$?
# A check passed when its task printed "ok:"; anything else (failed, or never reached) fails.
passed=$(awk '/^TASK \[check: /{c=1; next} c && /^ok: /{n++; c=0} c && /^(fatal|failed):/{c=0} END{print n+0}' "$WORK/out.log")
failed=$((expected - passed))

# Each module's documentation parses (what ansible-test's doc checks start from; ansible-test
# sanity itself needs a bootstrap download from outside the package registries).
for module in ocetool_facts ocetool_profile ocetool_firmware; do
    if ANSIBLE_NOCOLOR=1 ANSIBLE_COLLECTIONS_PATH=$WORK/collections "$VENV/bin/ansible-doc" -t module "ocetool.oneconnect.$module" \
        >"$WORK/doc.log" 2>&1 && grep -q "OPTIONS" "$WORK/doc.log"; then
        passed=$((passed + 1)); echo "  check: ansible-doc $module"
    else
        failed=$((failed + 1)); echo "  FAILED: ansible-doc $module"; sed 's/^/  | /' "$WORK/doc.log" | tail -20
    fi
done
if [ "$failed" -ne 0 ] || [ "$rc" -ne 0 ]; then
    sed 's/^/  | /' "$WORK/out.log" | tail -60
fi
grep -E '^TASK \[check: ' "$WORK/out.log" | sed 's/^TASK \[\(.*\)\].*/  \1/'
say "done (ansible-playbook exit $rc)"
echo "ansible: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$rc" -eq 0 ]
