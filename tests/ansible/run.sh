#!/usr/bin/env bash
# The Ansible collection (ansible/, ocetool.oneconnect) as its users get it:
# - built with ansible-galaxy; the tarball holds LICENSE and the changelog; installed from it;
# - the playbook (playbook.yml) run by ansible-core against an emulated adapter on localhost
#   (facts, check and diff mode, idempotence, ocetool's errors), and against a fake sysfs of a
#   card bound to be2net (check mode with unbind: true moves no driver and writes nothing);
# - ansible-doc, ansible-lint and ansible-test sanity on the collection.
# ansible-core and ansible-lint come from PyPI into a venv kept in /var/tmp/ocetool-cache, rebuilt
# when requirements.txt changes; ansible-test keeps its per-test venvs there too.
# Ends with "ansible: N passed, M failed"; exits non-zero on a failure.
set -uo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$REPO/tests/ansible
CACHE=${OCETOOL_CACHE:-/var/tmp/ocetool-cache}
VENV=$CACHE/ansible-venv
# ansible-test keeps its sanity venvs and its pip bootstrap script under $HOME/.ansible/test.
TEST_HOME=$CACHE/ansible-test-home
T0=$(date +%s)
say() { echo "ansible: $* ($(( $(date +%s) - T0 ))s)"; }
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "  check: $1"; }
# not_ok NAME [LOG]: a failed check, with the end of its log.
not_ok() {
    failed=$((failed + 1)); echo "  FAILED: $1"
    if [ -n "${2:-}" ]; then sed 's/^/  | /' "$2" | tail -40; fi
}
# A step everything after it needs failed: count it and stop.
abort() { say "$1"; echo "ansible: $passed passed, $((failed + 1)) failed"; exit 1; }

if ! cmp -s "$HERE/requirements.txt" "$VENV/ocetool-requirements.txt"; then
    say "installing $HERE/requirements.txt into $VENV"
    rm -rf "$VENV"
    { python3 -m venv "$VENV" && "$VENV/bin/pip" install -q -r "$HERE/requirements.txt" \
        && cp "$HERE/requirements.txt" "$VENV/ocetool-requirements.txt"; } || abort "cannot install the venv"
fi

say "building ocetool"
cargo build --locked -q -p ocetool --manifest-path "$REPO/Cargo.toml" || abort "cannot build ocetool"
# cargo's target folder: CARGO_TARGET_DIR when set (relative to where cargo ran), else the workspace's.
TARGET=${CARGO_TARGET_DIR:-$REPO/target}
case $TARGET in /*) ;; *) TARGET=$PWD/$TARGET ;; esac
BIN=$TARGET/debug/ocetool

WORK=$(mktemp -d /tmp/ocetool-ansible.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
# A copy of the collection at ansible_collections/ocetool/oneconnect under DIR, where ansible-test
# and ansible-galaxy want it; each tool gets its own, so none sees another's output files.
collection() {
    mkdir -p "$1/ansible_collections/ocetool"
    cp -r "$REPO/ansible" "$1/ansible_collections/ocetool/oneconnect"
    echo "$1/ansible_collections/ocetool/oneconnect"
}

say "building the collection"
version=$(sed -n 's/^version: *//p' "$REPO/ansible/galaxy.yml")
tarball=$WORK/dist/ocetool-oneconnect-$version.tar.gz
"$VENV/bin/ansible-galaxy" collection build "$(collection "$WORK/build")" --output-path "$WORK/dist" \
    >"$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; abort "ansible-galaxy collection build failed"; }
tar -tzf "$tarball" >"$WORK/contents" || abort "cannot read $tarball"
for member in LICENSE changelogs/changelog.yaml changelogs/config.yaml; do
    if grep -qx "$member" "$WORK/contents"; then ok "the built collection holds $member"
    else not_ok "the built collection holds $member" "$WORK/contents"; fi
done
if tar -xzOf "$tarball" LICENSE 2>/dev/null | cmp -s - "$REPO/ansible/LICENSE" \
    && grep -q "MIT OR Apache-2.0" "$REPO/ansible/LICENSE" \
    && grep -q '"MIT OR Apache-2.0"' "$REPO/Cargo.toml"; then
    ok "its LICENSE is the project's licence (the workspace's MIT OR Apache-2.0)"
else
    not_ok "its LICENSE is the project's licence (the workspace's MIT OR Apache-2.0)"
fi
missing=$(cd "$REPO/ansible" && for f in changelogs/fragments/*.yml; do
    [ -e "$f" ] && ! grep -qxF "$f" "$WORK/contents" && echo "$f"; done)
if [ -z "$missing" ]; then ok "the built collection holds every changelog fragment"
else echo "$missing" >"$WORK/missing"; not_ok "the built collection holds every changelog fragment" "$WORK/missing"; fi
"$VENV/bin/ansible-galaxy" collection install "$tarball" -p "$WORK/collections" >"$WORK/install.log" 2>&1 \
    || { cat "$WORK/install.log"; abort "cannot install $tarball"; }

"$BIN" fw build --version 11.2.0.0 -o "$WORK/new.ufi" >/dev/null
"$BIN" fw build --version 10.0.0.0 -o "$WORK/old.ufi" >/dev/null
head -c 8192 /dev/zero | tr '\0' 'Z' >"$WORK/bad.ufi"

# The fake be2net host: a sysfs tree, an untouched copy to compare it with afterwards, and ocetool
# pointed at it (its hidden --sysfs-root/--dev-root/--proc-root flags), each call's arguments logged.
FAKE=$WORK/fake
bash "$HERE/fake-be2net-host.sh" "$FAKE/host" || abort "cannot write the fake sysfs tree"
cp -a "$FAKE/host" "$FAKE/pristine"
mkdir -p "$FAKE/locks"
: >"$FAKE/calls.log"
cat >"$FAKE/ocetool" <<EOF
#!/bin/sh
printf '%s\n' "\$*" >>"$FAKE/calls.log"
OCETOOL_LOCK_DIR="$FAKE/locks" exec "$BIN" --sysfs-root "$FAKE/host/sys" --dev-root "$FAKE/host/dev" \
    --proc-root "$FAKE/host/proc" "\$@"
EOF
chmod +x "$FAKE/ocetool"

playbook=$HERE/playbook.yml
expected=$(grep -c 'name: "check: ' "$playbook")
say "running the playbook ($expected checks) with the built collection"
ANSIBLE_COLLECTIONS_PATH=$WORK/collections ANSIBLE_NOCOLOR=1 ANSIBLE_LOCALHOST_WARNING=false \
ANSIBLE_INVENTORY_UNPARSED_WARNING=false ANSIBLE_PYTHON_INTERPRETER=$VENV/bin/python \
    "$VENV/bin/ansible-playbook" -i localhost, "$playbook" \
    -e "ocetool_bin=$BIN emu=$WORK/emu new_image=$WORK/new.ufi old_image=$WORK/old.ufi bad_image=$WORK/bad.ufi" \
    -e "fake_bin=$FAKE/ocetool fake_host=$FAKE/host fake_pristine=$FAKE/pristine fake_calls=$FAKE/calls.log" \
    >"$WORK/out.log" 2>&1
rc=$?
# A check passed when its task printed "ok:"; anything else (failed, or never reached) fails.
played=$(awk '/^TASK \[check: /{c=1; next} c && /^ok: /{n++; c=0} c && /^(fatal|failed):/{c=0} END{print n+0}' "$WORK/out.log")
passed=$((passed + played))
failed=$((failed + expected - played))
if [ "$played" -ne "$expected" ] || [ "$rc" -ne 0 ]; then
    [ "$rc" -ne 0 ] && failed=$((failed + 1)) && echo "  FAILED: ansible-playbook exited $rc"
    sed 's/^/  | /' "$WORK/out.log" | tail -60
fi
grep -E '^TASK \[check: ' "$WORK/out.log" | sed 's/^TASK \[\(.*\)\].*/  \1/'

# Each module's documentation parses and renders.
for module in ocetool_facts ocetool_profile ocetool_firmware; do
    if ANSIBLE_NOCOLOR=1 ANSIBLE_COLLECTIONS_PATH=$WORK/collections "$VENV/bin/ansible-doc" -t module \
        "ocetool.oneconnect.$module" >"$WORK/doc.log" 2>&1 && grep -q "OPTIONS" "$WORK/doc.log"; then
        ok "ansible-doc $module"
    else
        not_ok "ansible-doc $module" "$WORK/doc.log"
    fi
done

say "ansible-lint"
lint=$(collection "$WORK/lint")
if (cd "$lint" && HOME=$TEST_HOME NO_COLOR=1 "$VENV/bin/ansible-lint" --offline) >"$WORK/lint.log" 2>&1; then
    ok "ansible-lint passes"
else
    not_ok "ansible-lint passes" "$WORK/lint.log"
fi

say "ansible-test sanity"
# ansible-test bootstraps pip in each sanity venv with a get-pip.py from a host outside the package
# registries; get-pip-standin.py does it from PyPI (see there). The version it wants is in
# ansible_test/_internal/python_requirements.py (get_venv_packages).
python=$("$VENV/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
site=$("$VENV/bin/python" -c 'import ansible_test, os; print(os.path.dirname(ansible_test.__file__))')
pip_version=$(sed -n "s/^ *pip='\([0-9.]*\)',\$/\1/p" "$site/_internal/python_requirements.py")
[ -n "$pip_version" ] || abort "cannot find the pip version ansible-test bootstraps in $site"
mkdir -p "$TEST_HOME/.ansible/test/cache"
cp "$HERE/get-pip-standin.py" "$TEST_HOME/.ansible/test/cache/get_pip_${pip_version//./_}.py"
sanity=$(collection "$WORK/sanity")
if (cd "$sanity" && HOME=$TEST_HOME "$VENV/bin/ansible-test" sanity --local --python "$python" --color no) \
    >"$WORK/sanity.log" 2>&1; then
    ok "ansible-test sanity passes ($(grep -c '^Running sanity test' "$WORK/sanity.log") tests)"
else
    not_ok "ansible-test sanity passes" "$WORK/sanity.log"
fi

say "done (ansible-playbook exit $rc)"
echo "ansible: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
