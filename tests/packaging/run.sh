#!/usr/bin/env bash
# The boot integration and the Debian package, checked with the real tools:
#   - the unit with `systemd-analyze verify`, the modprobe.d hook with `modprobe -n -v -C`;
#   - the package built by `cargo deb` (packaging/build-deb.sh) with CARGO_TARGET_DIR set (a
#     relative target/deb-build, kept between runs), checked by lintian (errors and warnings fail;
#     overrides carry their reason in packaging/lintian/ocetool); its files under /usr, none
#     under /lib; its copyright file naming every crate linked into the binary (as `cargo tree`
#     lists them) with a licence paragraph for every licence named;
#   - installed with `dpkg -i`: `ocetool --version`, `man -w ocetool`, the completion files, the
#     unit installed disabled and verified in place, the installed hook run on an emulated adapter;
#   - the unit enabled, then the package purged (`dpkg --purge`): none of its files, no link to
#     the unit and no deb-systemd-helper state left; the machine left as it was found (the
#     ocetool group and runtime directories the package created are removed, pre-existing ones
#     restored).
# Needs root (apt-get, dpkg). cargo-deb is installed once into /var/tmp/ocetool-cache/cargo-deb
# (rebuilt when missing). Ends with "packaging: N passed, M failed"; exits non-zero on a failure.
set -uo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
cd "$REPO"
CACHE=${OCETOOL_CACHE:-/var/tmp/ocetool-cache}
CARGO_DEB_VERSION=3.8.0
T0=$(date +%s)
passed=0
failed=0
say() { echo "packaging: $* ($(( $(date +%s) - T0 ))s)"; }
check() {
    local name=$1; shift
    if "$@" >"$WORK/check.log" 2>&1; then
        passed=$((passed + 1)); echo "ok   $name"
    else
        failed=$((failed + 1)); echo "FAIL $name"; sed 's/^/     /' "$WORK/check.log" | tail -20
    fi
}
WORK=$(mktemp -d /tmp/ocetool-packaging.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# 1. Tools: Debian packages, and cargo-deb from crates.io.
need=()
command -v lintian >/dev/null || need+=(lintian)
command -v systemd-analyze >/dev/null || need+=(systemd)
command -v modprobe >/dev/null || need+=(kmod)
command -v man >/dev/null || need+=(man-db)
if [ ${#need[@]} -gt 0 ]; then
    say "installing ${need[*]}"
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null
fi
export PATH="$CACHE/cargo-deb/bin:$PATH"
if ! cargo-deb --version 2>/dev/null | grep -q "$CARGO_DEB_VERSION"; then
    say "installing cargo-deb $CARGO_DEB_VERSION into $CACHE/cargo-deb"
    cargo install --locked --quiet cargo-deb --version "$CARGO_DEB_VERSION" --root "$CACHE/cargo-deb"
fi

# 2. The unit and the hook, from the source tree.
stage=$WORK/root
mkdir -p "$stage/usr/lib/ocetool" "$stage/etc/systemd/system"
install -m 755 packaging/be2net-hook "$stage/usr/lib/ocetool/"
install -m 644 packaging/systemd/ocetool-apply.service "$stage/etc/systemd/system/"
check "systemd-analyze verify ocetool-apply.service (source tree)" \
    systemd-analyze verify --man=no --root="$stage" ocetool-apply.service
check "modprobe -n -v -C packaging/modprobe.d be2net prints the install command" \
    sh -c 'modprobe -n -v -C packaging/modprobe.d be2net | grep -qx "install /usr/lib/ocetool/be2net-hook; /sbin/modprobe --ignore-install be2net \$CMDLINE_OPTS *"'
check "the hook is POSIX sh" sh -n packaging/be2net-hook
check "the initramfs builder and the initramfs-tools hook are POSIX sh, the dracut module bash" \
    sh -c 'sh -n packaging/initramfs-files && sh -n packaging/initramfs-tools/ocetool && bash -n packaging/dracut/90ocetool/module-setup.sh'

# 3. The package, built where CARGO_TARGET_DIR says (relative: the caller's directory).
say "building the package"
rm -f target/deb-build/debian/ocetool_*.deb
check "cargo deb builds the package (CARGO_TARGET_DIR=target/deb-build)" \
    env CARGO_TARGET_DIR=target/deb-build bash packaging/build-deb.sh
deb=$(ls target/deb-build/debian/ocetool_*.deb 2>/dev/null | tail -n 1)
say "package: ${deb:-none}"
check "lintian: no errors or warnings" lintian --fail-on error,warning "$deb"
check "every file under /usr (or /etc), none under /lib" \
    sh -c "dpkg-deb -c '$deb' | awk '{print \$6}' | grep -v -e '^\./\$' -e '^\./usr/' -e '^\./etc/' | { ! grep .; }"
# The crates linked into the binary, as cargo tree lists them (normal dependencies, no
# procedural macros), each a "crate NAME VERSION" comment of the copyright file; and every
# licence named in it has its own paragraph.
dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/share/doc/ocetool/copyright >"$WORK/copyright" 2>/dev/null
cargo tree --locked -p ocetool -e normal,no-proc-macro --prefix none --format '{p}' \
    --target "$(rustc -vV | sed -n 's/^host: //p')" 2>/dev/null |
    grep -v ' (/' | sed 's/ (\*)$//; s/ v\([^ ]*\)$/ \1/' | sort -u >"$WORK/crates"
check "the copyright file names every crate linked into the binary ($(wc -l <"$WORK/crates") crates)" \
    sh -c "[ -s '$WORK/crates' ] && grep '^Comment: crate ' '$WORK/copyright' | cut -d' ' -f3- | sort -u | diff '$WORK/crates' -"
# Independently of cargo: the crates whose sources the binary's line tables name (the registry
# paths of panic locations and debug info, before --strip) are all in it.
check "the copyright file names every crate whose code is in the binary" sh -c "
    strings -n 8 target/deb-build/release/ocetool | grep -o 'registry/src/[^/]*/[^/]*/' | cut -d/ -f4 | sort -u |
        sed -E 's/^([A-Za-z0-9_]+(-[A-Za-z_][A-Za-z0-9_]*)*)-([0-9].*)\$/\\1 \\3/' >'$WORK/inbin' &&
    grep -q . '$WORK/inbin' &&
    grep '^Comment: crate ' '$WORK/copyright' | cut -d' ' -f3- | sort -u | comm -23 '$WORK/inbin' - | { ! grep .; }"
check "the copyright file has a paragraph for every licence it names" sh -c "
    grep -E '^License: ' '$WORK/copyright' | sed 's/^License: //' | sed 's/ or /\n/g; s/ and /\n/g' | sort -u >'$WORK/named' &&
    awk '/^\$/ {p = 1; next} p && /^License: / {print substr(\$0, 10)} {p = 0}' '$WORK/copyright' | sort -u >'$WORK/paragraphs' &&
    grep -q . '$WORK/paragraphs' && comm -23 '$WORK/named' '$WORK/paragraphs' | { ! grep .; }"

# 4. Installed, checked, removed; the machine left as found.
had_group=$(getent group ocetool >/dev/null && echo yes || echo no)
lock_state=$(stat -c '%a %U %G' /run/lock/ocetool 2>/dev/null || echo absent)
run_state=$(stat -c '%a %U %G' /run/ocetool 2>/dev/null || echo absent)
if dpkg -s ocetool >/dev/null 2>&1; then
    echo "packaging: an ocetool package is already installed; not touching it"
    failed=$((failed + 1))
elif [ -n "$deb" ]; then
    check "dpkg -i" dpkg -i "$deb"
    check "ocetool --version" sh -c 'ocetool --version | grep -qx "ocetool [0-9.]*"'
    check "man -w ocetool (and a subcommand page, and the configuration's)" \
        sh -c 'man -w ocetool && man -w ocetool-apply && man -w 5 ocetool.toml'
    check "the JSON Schemas and reliability.md are installed" \
        sh -c 'test -s /usr/share/ocetool/schemas/error.json && test -s /usr/share/doc/ocetool/reliability.md'
    check "completion files" test -s /usr/share/bash-completion/completions/ocetool \
        -a -s /usr/share/zsh/vendor-completions/_ocetool -a -s /usr/share/fish/vendor_completions.d/ocetool.fish
    check "bash completion loads and completes subcommands" \
        bash -c 'source /usr/share/bash-completion/completions/ocetool && COMP_WORDS=(ocetool set-) COMP_CWORD=1 && _ocetool ocetool set- ocetool && [[ " ${COMPREPLY[*]} " == *" set-profile "* ]]'
    check "the unit is installed disabled" sh -c '[ "$(systemctl is-enabled ocetool-apply.service 2>&1)" = disabled ]'
    check "systemd-analyze verify ocetool-apply.service (installed)" systemd-analyze verify ocetool-apply.service
    check "modprobe -n -v be2net runs the installed hook" \
        sh -c 'modprobe -n -v be2net | grep -q "^install /usr/lib/ocetool/be2net-hook;"'
    check "the initramfs-tools hook, the dracut module, the builder and the trigger are installed" \
        sh -c 'test -x /usr/share/initramfs-tools/hooks/ocetool -a -x /usr/lib/dracut/modules.d/90ocetool/module-setup.sh \
            -a -x /usr/lib/ocetool/initramfs-files && grep -qx "activate-noawait update-initramfs" /var/lib/dpkg/info/ocetool.triggers'
    check "the ocetool group and the lock directory exist" \
        sh -c 'getent group ocetool && [ "$(stat -c %G /run/lock/ocetool)" = ocetool ]'
    emu=$WORK/emu
    printf '[[adapter]]\nmatch = { all = true }\nprofile = "roce"\nactivate = "reset"\n' >"$WORK/ocetool.toml"
    check "the installed hook applies the configuration to an emulated adapter" sh -c "
        ocetool --device emu:$emu emulator init >/dev/null &&
        OCETOOL_CONFIG=$WORK/ocetool.toml OCETOOL_DEVICE=emu:$emu OCETOOL_RUN_DIR=$WORK/run \
            /usr/lib/ocetool/be2net-hook &&
        grep -q '\"roce_enabled\": true' $WORK/run/last-apply.json"
    check "the installed builder puts an accepted configuration into the initramfs" sh -c "
        mkdir $WORK/stage && OCETOOL_CONFIG=$WORK/ocetool.toml /usr/lib/ocetool/initramfs-files $WORK/stage &&
        grep -qx 'config-state included' $WORK/stage/manifest && cmp -s $WORK/ocetool.toml $WORK/stage/ocetool.toml"
    dpkg -L ocetool >"$WORK/files"
    check "systemctl enable ocetool-apply.service" sh -c '
        systemctl enable ocetool-apply.service && [ -L /etc/systemd/system/sysinit.target.wants/ocetool-apply.service ]'
    check "dpkg --purge" dpkg --purge ocetool
    check "nothing of the package is left (of $(wc -l <"$WORK/files") paths)" sh -c "
        ! command -v ocetool &&
        while read -r f; do [ -d \"\$f\" ] || [ ! -e \"\$f\" ] || { echo \"left: \$f\"; exit 1; }; done <'$WORK/files'"
    check "no link to the unit or deb-systemd-helper state is left" sh -c '
        ! find /etc/systemd/system /var/lib/systemd/deb-systemd-helper-enabled \
            /var/lib/systemd/deb-systemd-helper-masked -name "*ocetool*" 2>/dev/null | grep .'
fi
[ "$had_group" = no ] && getent group ocetool >/dev/null && groupdel ocetool
restore() { # DIR STATE
    if [ "$2" = absent ]; then
        rmdir "$1" 2>/dev/null || true
    else
        set -- "$1" $2
        chmod "$2" "$1" && chown "$3:$4" "$1"
    fi
}
restore /run/lock/ocetool "$lock_state"
restore /run/ocetool "$run_state"
check "the machine is as it was found" sh -c "
    [ \"\$(getent group ocetool >/dev/null && echo yes || echo no)\" = $had_group ] &&
    [ \"\$(stat -c '%a %U %G' /run/lock/ocetool 2>/dev/null || echo absent)\" = '$lock_state' ] &&
    [ \"\$(stat -c '%a %U %G' /run/ocetool 2>/dev/null || echo absent)\" = '$run_state' ]"

say "done"
echo "packaging: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
