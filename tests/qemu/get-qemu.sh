#!/usr/bin/env bash
# QEMU with a vfio-user client (`vfio-user-pci`, QEMU >= 10.1) on a Debian bookworm host, whose own
# QEMU (7.2) has none: Debian sid's qemu-system-x86 unpacked into a private sysroot, never installed,
# without touching the system's apt sources (recipes/vfio-user-qemu.md §1).
#
#   tests/qemu/get-qemu.sh        prints the path of a wrapper that runs that QEMU
#
# Cached in $OCETOOL_CACHE (default /var/tmp/ocetool-cache)/qemu-sid and rebuilt when missing or
# broken. The packages are the Depends/Pre-Depends closure of qemu-system-x86 as sid's package
# metadata states it (apt-cache depends --recurse), not a fixed list; afterwards every shared
# library the binary needs must resolve inside the sysroot, or the script fails naming what is
# missing (sid moves: a soname bump shows here first).
#
# The qemu-bundle trap: run through the sysroot's ld.so, QEMU's /proc/self/exe is the loader, so its
# compiled-in firmware and module paths would point at the HOST's /usr/share/qemu (silently booting
# another SeaBIOS) and /usr/lib/x86_64-linux-gnu/qemu (aborting on foreign modules). A `qemu-bundle`
# link beside the loader, pointing at the sysroot root, makes QEMU resolve them inside the sysroot.
set -euo pipefail

CACHE=${OCETOOL_CACHE:-/var/tmp/ocetool-cache}
W=$CACHE/qemu-sid
WRAP=$W/qemu-system-x86_64
say() { echo "get-qemu: $*" >&2; }

works() {
  [ -x "$WRAP" ] && "$WRAP" --version >/dev/null 2>&1 &&
    "$WRAP" -nodefaults -device help 2>/dev/null | grep -q '"vfio-user-pci"'
}
if works; then echo "$WRAP"; exit 0; fi

for tool in apt-get apt-cache dpkg; do command -v $tool >/dev/null || { say "needs $tool (a Debian host)"; exit 2; }; done
say "building the sid QEMU sysroot in $W"
rm -rf "$W.new"
A=$W.new/apt
mkdir -p "$A"/etc/sources.list.d "$A"/etc/preferences.d "$A"/state/lists/partial "$A"/cache/archives/partial \
  "$W.new/debs"
# The mirror the system already uses, suite sid; only this private apt state sees it.
URI=$(apt-get indextargets --format '$(REPO_URI)' 2>/dev/null | grep -v -- -security | head -1)
[ -n "$URI" ] || { say "cannot find the system's Debian mirror (apt-get indextargets printed nothing; run apt-get update)"; exit 2; }
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${URI} sid main" >"$A/etc/sources.list"
O=(-o Dir::State="$A/state" -o Dir::Cache="$A/cache" -o Dir::Etc::sourcelist="$A/etc/sources.list"
   -o Dir::Etc::sourceparts="$A/etc/sources.list.d" -o Dir::Etc::preferencesparts="$A/etc/preferences.d"
   -o Dir::Etc::Preferences=/dev/null -o APT::Sandbox::User=root -o Acquire::Languages=none)
apt-get "${O[@]}" -qq update

# The closure from the package metadata: Depends and Pre-Depends, recursively; virtual packages
# (<name>) are provided by a real one that is also in the list.
mapfile -t PKGS < <(apt-cache "${O[@]}" depends --recurse --no-recommends --no-suggests --no-conflicts \
  --no-breaks --no-replaces --no-enhances qemu-system-x86 | grep -v '^ ' | grep -v '^<' | sort -u)
[ ${#PKGS[@]} -gt 0 ] || { say "sid has no qemu-system-x86 any more"; exit 1; }
# Packages that are only there for maintainer scripts or the running system, never for running the
# binary from a sysroot: kept out to save downloads. Anything the binary needs fails the check below.
SKIP='^(debconf|adduser|passwd|perl-base|dpkg|init-system-helpers|systemd|systemd-sysv|sysvinit-utils|base-files|tar|coreutils|debianutils|mount|util-linux|login|bash|dash|diffutils|grep|sed|findutils|gzip|ncurses-bin|hostname|libpam.*|libaudit.*|libcap-ng0|libsemanage.*|libsepol2|libbz2-1.0|libcrypt1|libmd0|libacl1|libattr1|acl|ucf|procps|libproc2-0|cdebconf|debconf-2.0|sensible-utils|usrmerge|usr-is-merged|libdebconfclient0|libxxhash0|liblzma5|libsmartcols1|libtinfo6)$'
mapfile -t GET < <(printf '%s\n' "${PKGS[@]}" | grep -Ev "$SKIP")
say "${#PKGS[@]} packages in the Depends closure of qemu-system-x86, downloading ${#GET[@]}"
(cd "$W.new/debs" && apt-get "${O[@]}" -qq download "${GET[@]}" 2>"$W.new/download.err") ||
  { cat "$W.new/download.err" >&2; say "download failed"; exit 1; }

SR=$W.new/sysroot
mkdir -p "$SR"
for d in "$W.new"/debs/*.deb; do dpkg -x "$d" "$SR"; done
LP=$SR/usr/lib/x86_64-linux-gnu
BIN=$SR/usr/bin/qemu-system-x86_64
[ -x "$BIN" ] && [ -x "$LP/ld-linux-x86-64.so.2" ] || { say "the packages did not provide qemu-system-x86_64 and its loader"; exit 1; }
# Every library must resolve inside the sysroot (the loader says "not found" or a host path otherwise).
missing=$("$LP/ld-linux-x86-64.so.2" --library-path "$LP" --list "$BIN" 2>&1 |
  awk -v sr="$SR" '/not found/ {print $1; next} /=>/ && index($3, sr) != 1 {print $1}') || true
if [ -n "$missing" ]; then
  say "libraries of qemu-system-x86_64 not provided by its Depends closure in sid: $(echo $missing)"
  say "(sid moved on: add the packages that ship them, or drop them from SKIP in $0)"
  exit 1
fi
ln -sfn ../../.. "$LP/qemu-bundle"
rm -rf "$W.new/apt" "$W.new/debs"
# Final paths: move the finished sysroot into place, then write the wrapper pointing at it.
rm -rf "$W"
mv "$W.new" "$W"
SR=$W/sysroot
LP=$SR/usr/lib/x86_64-linux-gnu
cat >"$WRAP" <<WRAPPER
#!/bin/sh
exec $LP/ld-linux-x86-64.so.2 --library-path $LP $SR/usr/bin/qemu-system-x86_64 "\$@"
WRAPPER
chmod +x "$WRAP"
works || { say "the sysroot QEMU does not start or has no vfio-user-pci: $("$WRAP" --version 2>&1 | head -3)"; exit 1; }
say "$("$WRAP" --version | head -1), sysroot $(du -sh "$SR" | cut -f1)"
echo "$WRAP"
