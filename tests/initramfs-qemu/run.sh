#!/usr/bin/env bash
# The boot hook where be2net really loads: in Debian's own initramfs. The package built by
# packaging/build-deb.sh is installed with dpkg into a minimal Debian 12 root (debootstrap, cached
# in $OCETOOL_CACHE/initramfs-root), whose initramfs-tools builds the initramfs (MODULES=most, the
# default) through the package's own trigger; the guest boots the harness' Debian kernel
# (tests/qemu/lib.sh) from that initramfs alone, with the emulated adapter served over vfio-user
# (`ocetool emulator serve`). A test-only init-premount script (premount.sh) prints what udev and
# the hook did once udev's coldplug and /conf/modules are done, and powers the guest off: no root
# is ever mounted, so what loaded be2net is the initramfs' udev through the modprobe.d line.
#
#   1. RoCE configuration, factory-fresh adapter: the hook ran in the initramfs (/run/ocetool/
#      last-run says so, its line in the kernel log before be2net's first), be2net probed once,
#      already in RoCE mode (function_mode=0x6), ocrdma0 registered, last-apply.json says what it
#      did (the profile, then the reset);
#   2. the same initramfs again: nothing to change (changed: false), RoCE at probe again;
#   3. no adapter on the bus, the same initramfs: be2net (listed in /etc/initramfs-tools/modules)
#      still loads, the console says why nothing was applied;
#   4. a broken configuration and `update-initramfs -u`: the builder refuses it and says why; at
#      boot be2net still loads, the console says why it is unconfigured.
#   5. dracut (dracut-core in the same root): an image built with the package's dracut module
#      holds the same; booted, its udev loads be2net through the hook in RoCE mode.
# The expected function modes are design.md §6's, not read from the code under test: 0x2 for the
# factory NIC profile, 0x6 (NIC + the RDMA bit 0x4) for RoCE; the emulator's state file
# (qemu_state_function_mode) says which profile the adapter ran before and after each boot.
#
# Usage: tests/initramfs-qemu/run.sh (as root: debootstrap, chroot, dpkg). KEEP_WORK=DIR keeps
# the work folder; DEBIAN_MIRROR (default http://deb.debian.org/debian) for debootstrap.
# Ends with "initramfs-qemu: N passed, M failed"; checks are counted by ID (a missing one fails);
# exits non-zero on any failure; a failed check prints its evidence, and a guest kernel panic
# fails every check with its panic line (tests/README.md).
set -euo pipefail
. "$(dirname "$0")/../qemu/lib.sh"
CHECKS="deb-trigger initramfs-holds boot1-clean hook-in-initramfs roce-at-probe ocrdma0 report-applied
  boot2-clean second-boot-unchanged boot3-clean no-adapter-console no-adapter-loads broken-refused
  boot4-clean broken-console broken-loads dracut-holds boot5-clean dracut-roce"
qemu_init initramfs-qemu "$CHECKS"
HERE=$(cd "$(dirname "$0")" && pwd)
LOG=$WORK/checks.log
: >"$LOG"
CONFIG=/etc/ocetool/ocetool.toml
NIC_MODE=0x2    # design.md §6: the factory NIC profile's function_mode
ROCE_MODE=0x6   # design.md §6: NIC + RDMA
check() { host_check "$LOG" "$1" "$2" "${3:-}"; }

# 1. Tools: debootstrap, and cargo-deb as tests/packaging/run.sh installs it.
if ! command -v debootstrap >/dev/null; then
  qemu_say "installing debootstrap"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi
CARGO_DEB_VERSION=3.8.0
export PATH="$OCETOOL_CACHE/cargo-deb/bin:$PATH"
if ! cargo-deb --version 2>/dev/null | grep -q "$CARGO_DEB_VERSION"; then
  qemu_say "installing cargo-deb $CARGO_DEB_VERSION into $OCETOOL_CACHE/cargo-deb"
  cargo install --locked --quiet cargo-deb --version "$CARGO_DEB_VERSION" --root "$OCETOOL_CACHE/cargo-deb"
fi

# 2. The package, and the host's ocetool (the release build the package holds) for the emulator.
qemu_say "building the package (packaging/build-deb.sh)"
(cd "$REPO" && bash packaging/build-deb.sh >"$WORK/build-deb.log" 2>&1) ||
  { tail -20 "$WORK/build-deb.log"; echo "initramfs-qemu: the package did not build"; exit 2; }
DEB=$(ls -t "$HOST_TARGET"/debian/ocetool_*.deb | head -n 1)
HOST_OCETOOL=$HOST_TARGET/release/ocetool

# 3. The Debian root: debootstrap once (cached as a tarball named for what it holds), unpacked
# afresh for every run. dracut-core coexists with initramfs-tools (the `dracut` package does not).
PKGS=initramfs-tools,busybox,udev,kmod,zstd,dracut-core
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
TARBALL=$OCETOOL_CACHE/initramfs-root/bookworm-minbase-$(echo "$PKGS" | sha256sum | cut -c1-12).tar.zst
if [ ! -s "$TARBALL" ]; then
  qemu_say "debootstrap bookworm (minbase + $PKGS) into the cache"
  mkdir -p "$(dirname "$TARBALL")"
  tmp=$(mktemp -d "$OCETOOL_CACHE/initramfs-root/build.XXXXXX")
  if ! debootstrap --variant=minbase --include="$PKGS" bookworm "$tmp/root" "$MIRROR" >"$tmp/log" 2>&1; then
    tail -20 "$tmp/log"; rm -rf "$tmp"; echo "initramfs-qemu: debootstrap failed"; exit 2
  fi
  # What a test root never reads: documentation, translations, apt's lists and archives.
  rm -rf "$tmp"/root/usr/share/{doc,man,locale,info} "$tmp"/root/var/lib/apt/lists/* "$tmp"/root/var/cache/apt/*
  tar -C "$tmp/root" --zstd -cf "$tmp/root.tar.zst" .
  mv "$tmp/root.tar.zst" "$TARBALL"
  rm -rf "$tmp"
fi
ROOT=$WORK/root
rm -rf "$ROOT"   # a kept work folder (KEEP_WORK) holds the last run's
mkdir "$ROOT"
tar -C "$ROOT" --zstd -xf "$TARBALL"
inroot() { chroot "$ROOT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"; }

# The harness' kernel, as if installed: its modules (hard links into the cache when the file
# system allows), vmlinuz and config in /boot, and an empty initrd.img that registers it with
# update-initramfs, whose -u (the package's trigger) only updates an image that exists.
mkdir -p "$ROOT/usr/lib/modules"
cp -al "$KROOT/lib/modules/$KVER" "$ROOT/usr/lib/modules/" 2>/dev/null || cp -a "$KROOT/lib/modules/$KVER" "$ROOT/usr/lib/modules/"
cp "$VMLINUZ" "$ROOT/boot/vmlinuz-$KVER"
cp "$KROOT/boot/config-$KVER" "$ROOT/boot/"
: >"$ROOT/boot/initrd.img-$KVER"

# The operator's steps: the configuration, be2net and ocrdma in the initramfs' module list (be2net
# so that it loads with no adapter on the bus too, ocrdma so that RoCE registers there), then the
# package. The test's premount script, and nothing else, is the test's own.
mkdir -p "$ROOT/etc/ocetool"
cat >"$ROOT$CONFIG" <<'TOML'
# Every adapter: the RoCE profile, active before be2net binds it.
[[adapter]]
match = { all = true }
profile = "roce"
activate = "reset"
TOML
printf 'be2net\nocrdma\n' >>"$ROOT/etc/initramfs-tools/modules"
install -D -m 0755 "$HERE/premount.sh" "$ROOT/etc/initramfs-tools/scripts/init-premount/ocetool-test"
cp "$DEB" "$ROOT/tmp/ocetool.deb"
# From here on a failing step fails its check, not the script.
set +e
qemu_say "dpkg -i $(basename "$DEB") in the root; its trigger runs update-initramfs"
R=0; inroot dpkg -i /tmp/ocetool.deb >"$WORK/dpkg.log" 2>&1 || R=1
grep -q "^Processing triggers for initramfs-tools" "$WORK/dpkg.log" &&
  grep -q "^update-initramfs: Generating /boot/initrd.img-$KVER\$" "$WORK/dpkg.log" &&
  [ -s "$ROOT/boot/initrd.img-$KVER" ] || R=1
check "deb-trigger dpkg -i installs the package and its trigger rebuilds /boot/initrd.img-$KVER" $R \
  "expected dpkg to process the initramfs-tools trigger and update-initramfs to generate the image; dpkg printed: $(tail -n 8 "$WORK/dpkg.log")"
inroot lsinitramfs "/boot/initrd.img-$KVER" >"$WORK/contents" 2>/dev/null
R=0; missing=
for f in usr/bin/ocetool usr/lib/ocetool/be2net-hook usr/lib/ocetool/initramfs-manifest etc/ocetool/ocetool.toml \
  usr/lib/modprobe.d/ocetool.conf usr/bin/flock usr/bin/timeout "usr/lib/modules/$KVER/kernel/drivers/net/ethernet/emulex/benet/be2net.ko" \
  "usr/lib/modules/$KVER/kernel/drivers/vfio/pci/vfio-pci.ko"; do
  grep -qx "$f" "$WORK/contents" || { missing="$missing $f"; R=1; }
done
check "initramfs-holds the initramfs holds be2net, the modprobe.d line, the hook, ocetool, flock, vfio-pci, the configuration and the manifest" $R \
  "missing from lsinitramfs' list ($(wc -l <"$WORK/contents") entries):${missing:- nothing}"
cp "$ROOT/boot/initrd.img-$KVER" "$WORK/initrd-roce.img"

# Boots. Each boot's serial log is $WORK/bootN.log; the checks go to $LOG.
STATE=$WORK/emu
"$HOST_OCETOOL" --device "emu:$STATE" emulator init >/dev/null
QRCS=0
# boot N INITRD [adapter|none]: one guest, the served adapter attached unless "none"; then
# bootN-clean: QEMU exited 0 and the premount script finished.
boot() {
  local n=$1 initrd=$2 adapter=${3:-adapter} log=$WORK/boot$1.log qemu=$QEMU p why
  if [ "$adapter" = adapter ]; then
    qemu_serve "$WORK/server$n.log" "$HOST_OCETOOL" --device "emu:$STATE" emulator serve --socket "$SOCK"
  else
    # QEMU as qemu_boot runs it, less the vfio-user device: no adapter on the bus.
    QEMU=$WORK/qemu-without-adapter
    cat >"$QEMU" <<EOF
#!/usr/bin/env bash
args=()
for a in "\$@"; do
  if [[ \$a == *'"vfio-user-pci"'* ]]; then unset 'args[\${#args[@]}-1]'; continue; fi
  args+=("\$a")
done
exec "$qemu" "\${args[@]}"
EOF
    chmod +x "$QEMU"
  fi
  qemu_say "boot $n: $(basename "$initrd"), $adapter"
  qemu_boot "$initrd" "$log"
  QEMU=$qemu
  [ "$adapter" = adapter ] && { wait "$SERVER_PID" || true; }
  QRCS=$((QRCS | QRC))
  local R=0
  why="qemu rc $QRC"
  if p=$(qemu_panic_line "$log"); then why="the guest kernel panicked: $p"; R=1; fi
  [ "$QRC" = 0 ] && grep -q '^GUEST-DONE$' "$log" || R=1
  check "boot$n-clean boot $n ran the initramfs to the test's premount script ($why)" $R \
    "expected qemu rc 0 and GUEST-DONE; seen: $why, $(grep -c '^GUEST-DONE$' "$log") GUEST-DONE; the log ends: $(tail -n 4 "$log")"
}
json() { qemu_json "$WORK/boot$1.log" "$2"; }
# jtrue FILTER: stdin holds a JSON document and FILTER is true of it (`jq -e` alone passes an empty
# input: a missing report must fail).
jtrue() { jq -e -n "input | ($1)" >/dev/null 2>&1; }
# The kernel log lines the premount script printed (GUEST-DMESG), without their timestamps.
dmesg_lines() { sed -n 's/^GUEST-DMESG \(\[ *[0-9.]*\] \)\{0,1\}//p' "$WORK/boot$1.log"; }
# The function_mode values of be2net's probes in boot N, one a line.
modes() { dmesg_lines "$1" | sed -n 's/^be2net [0-9a-f:.]*: FW config: function_mode=\(0x[0-9a-f]*\),.*/\1/p'; }
value() { sed -n "s/^GUEST-VALUE $2=//p" "$WORK/boot$1.log" | tail -n 1; }
# console N TEXT: the lines the kernel itself printed on the serial console (not the premount
# script's GUEST lines) that start with TEXT after their timestamp, without the timestamp.
console() { grep -v '^GUEST' "$WORK/boot$1.log" | sed -n 's/^.*\[ *[0-9.]*\] //p' | grep -F -- "$2"; }
# The function mode the emulator's state file says the adapter runs (design.md §6), as 0xN.
state_mode() { echo "0x$(qemu_state_function_mode "$STATE")"; }
hook_lines() { dmesg_lines "$1" | grep '^ocetool-apply: '; }

BEFORE=$(state_mode)
boot 1 "$WORK/initrd-roce.img"
R=0; json 1 last-run | grep -qx 'where=initramfs' && json 1 last-run | grep -qx 'state=done' &&
  json 1 last-run | grep -qx 'rc=0' || R=1
first_hook=$(dmesg_lines 1 | grep -n "^ocetool-apply: applied $CONFIG: exit 0 changed=true" | head -n 1 | cut -d: -f1)
first_probe=$(dmesg_lines 1 | grep -n '^be2net .*: FW config: function_mode=' | head -n 1 | cut -d: -f1)
[ -n "$first_hook" ] && [ -n "$first_probe" ] && [ "$first_hook" -lt "$first_probe" ] || R=1
check "hook-in-initramfs the hook ran in the initramfs (last-run where=initramfs, done, rc 0), its line before be2net's first probe" $R \
  "expected the hook's 'applied ... changed=true' line (kernel log line ${first_hook:-none}) before be2net's probe (${first_probe:-none}); last-run: $(json 1 last-run | tr '\n' ' '); hook lines: $(hook_lines 1)"
R=0; [ "$BEFORE" = "$NIC_MODE" ] && [ "$(modes 1 | tr '\n' ' ')" = "$ROCE_MODE " ] && [ "$(state_mode)" = "$ROCE_MODE" ] || R=1
check "roce-at-probe a factory NIC adapter, and be2net probed it once, already in RoCE mode (function_mode $(modes 1 | tr '\n' ' '))" $R \
  "expected the state file's mode $NIC_MODE before the boot and $ROCE_MODE after, be2net's one probe at $ROCE_MODE (design.md §6); seen: before $BEFORE, after $(state_mode), probes: $(modes 1 | tr '\n' ' ')"
R=0; case " $(value 1 infiniband) " in *" ocrdma0 "*) ;; *) R=1 ;; esac
dmesg_lines 1 | grep -q ' ocrdma0 driver loaded successfully$' || R=1
check "ocrdma0 ocrdma registered ocrdma0 in the initramfs ($(value 1 infiniband))" $R \
  "expected ocrdma0 in /sys/class/infiniband and 'ocrdma0 driver loaded successfully'; seen: infiniband '$(value 1 infiniband)'; $(dmesg_lines 1 | grep ocrdma | tail -n 3)"
R=0; json 1 last-apply.json | jtrue '.changed == true and .error == null and (.adapters | length) == 1 and
  (.adapters[0] | .error == null and .roce_enabled == true and (.actions | length) == 2 and
   (.actions[0] | test("the next-boot profile$")) and (.actions[1] | test("^reset the chip: ")))' || R=1
check "report-applied last-apply.json: changed, the profile made next, then the chip reset, RoCE enabled" $R \
  "seen: $(json 1 last-apply.json | jq -c '{changed, adapters: [.adapters[] | {actions, roce_enabled, error}]}' 2>&1)"

boot 2 "$WORK/initrd-roce.img"
R=0; json 2 last-apply.json | jtrue '.changed == false and .adapters[0].error == null and
  .adapters[0].roce_enabled == true' || R=1
[ "$(modes 2 | tr '\n' ' ')" = "$ROCE_MODE " ] && json 2 last-run | grep -qx 'where=initramfs' || R=1
check "second-boot-unchanged boot 2: the hook in the initramfs changed nothing (changed: false); be2net probed in RoCE mode" $R \
  "seen: $(json 2 last-apply.json | jq -c '{changed, adapters: [.adapters[] | {actions, error}]}' 2>&1); probes: $(modes 2 | tr '\n' ' '); hook lines: $(hook_lines 2)"

boot 3 "$WORK/initrd-roce.img" none
WANT="ocetool-apply: no OCe14000 adapter found: $CONFIG was applied to none (exit 0)"
R=0; [ -n "$(console 3 "$WANT")" ] || R=1
check "no-adapter-console no adapter: the console says the hook found none to apply the configuration to" $R \
  "expected a console line starting '$WANT'; the hook's kernel log lines: $(hook_lines 3)"
R=0; [ "$(value 3 be2net_loaded)" = yes ] || R=1
check "no-adapter-loads no adapter: be2net loaded all the same (/sys/module/be2net)" $R \
  "seen: be2net_loaded=$(value 3 be2net_loaded)"

# A broken configuration, and the documented step after editing it.
sed -i 's/^profile = "roce"/profile = "rocee"/' "$ROOT$CONFIG"
R=0; inroot update-initramfs -u -k "$KVER" >"$WORK/update.log" 2>&1 || R=1
WANT="ocetool: $CONFIG stays out of the initramfs, where be2net then loads with the adapters as they are: ocetool apply refuses it (exit 2): $CONFIG:"
grep -F -- "$WANT" "$WORK/update.log" | grep -qF 'key `profile`: "rocee" is not a profile' || R=1
check "broken-refused update-initramfs -u: the builder leaves the broken configuration out and says why" $R \
  "expected '$WANT ... \"rocee\" is not a profile'; update-initramfs printed: $(tail -n 6 "$WORK/update.log")"
cp "$ROOT/boot/initrd.img-$KVER" "$WORK/initrd-broken.img"
boot 4 "$WORK/initrd-broken.img"
WANT="ocetool-apply: this initramfs holds no configuration: $CONFIG was refused when it was built ("
R=0; console 4 "$WANT" | grep -qF 'key `profile`: "rocee" is not a profile' || R=1
check "broken-console broken configuration: the console says why be2net loads unconfigured" $R \
  "expected a console line starting '$WANT' naming \"rocee\"; the hook's kernel log lines: $(hook_lines 4)"
R=0; [ "$(value 4 be2net_loaded)" = yes ] && [ "$(modes 4 | tr '\n' ' ')" = "$(state_mode) " ] || R=1
check "broken-loads broken configuration: be2net loaded and probed the adapter as it was (function_mode $(modes 4 | tr '\n' ' '))" $R \
  "expected one probe at the state file's mode $(state_mode); seen: be2net_loaded=$(value 4 be2net_loaded), probes: $(modes 4 | tr '\n' ' ')"

# dracut: the package's module in an image of dracut's, with the configuration fixed again, and a
# test-only module: premount.sh as a pre-mount hook, and a root that dracut's init accepts and
# that is never mounted (the guest powers off first).
sed -i 's/^profile = "rocee"/profile = "roce"/' "$ROOT$CONFIG"
TESTMOD=$ROOT/usr/lib/dracut/modules.d/99ocetool-test
mkdir -p "$TESTMOD"
install -m 0755 "$HERE/premount.sh" "$TESTMOD/premount.sh"
printf 'root=ocetool-test\nrootok=1\n' >"$TESTMOD/no-root.sh"
cat >"$TESTMOD/module-setup.sh" <<'EOF'
#!/bin/bash
check() { return 255; }
depends() { return 0; }
install() {
    inst_hook cmdline 99 "$moddir/no-root.sh"
    inst_hook pre-mount 99 "$moddir/premount.sh"
    inst_multiple dmesg grep sed tr ls cat
}
EOF
# The adapter back to its factory profile, so that the hook in dracut's image has work to do.
"$HOST_OCETOOL" --device "emu:$STATE" set-profile --yes nic >/dev/null
"$HOST_OCETOOL" --device "emu:$STATE" reset --yes >/dev/null
BEFORE=$(state_mode)
R=0; inroot dracut --no-hostonly -m "base udev-rules ocetool ocetool-test" --add-drivers "be2net" \
  -f /tmp/dracut.img "$KVER" >"$WORK/dracut.log" 2>&1 || R=1
inroot lsinitrd /tmp/dracut.img 2>/dev/null | awk '{print $NF}' >"$WORK/dracut-contents"
missing=
for f in usr/bin/ocetool usr/lib/ocetool/be2net-hook usr/lib/ocetool/initramfs-manifest etc/ocetool/ocetool.toml \
  usr/lib/modprobe.d/ocetool.conf usr/bin/flock usr/bin/timeout; do
  grep -qx "$f" "$WORK/dracut-contents" || { missing="$missing $f"; R=1; }
done
check "dracut-holds dracut with the package's module: the hook, ocetool, flock, the configuration, the manifest" $R \
  "missing:${missing:- nothing}; dracut printed: $(tail -n 4 "$WORK/dracut.log")"
boot 5 "$ROOT/tmp/dracut.img"
R=0; [ "$BEFORE" = "$NIC_MODE" ] && [ "$(modes 5 | tr '\n' ' ')" = "$ROCE_MODE " ] && json 5 last-run | grep -qx 'where=initramfs' &&
  json 5 last-apply.json | jtrue '.changed == true and .adapters[0].roce_enabled == true' || R=1
check "dracut-roce dracut's udev loaded be2net through the hook: applied in the initramfs, a NIC adapter probed in RoCE mode" $R \
  "expected the state file's mode $NIC_MODE before, one probe at $ROCE_MODE; seen: before $BEFORE, probes: $(modes 5 | tr '\n' ' '); hook lines: $(hook_lines 5)"

grep -hE '^(GUEST-VALUE|GUEST-DMESG .*(ocetool-apply|function_mode))' "$WORK"/boot*.log
# The guests finished: every boot reached the premount script's end.
all=1
for n in 1 2 3 4 5; do grep -q '^GUEST-DONE$' "$WORK/boot$n.log" 2>/dev/null || all=; done
[ -z "$all" ] || echo "GUEST-DONE" >>"$LOG"
QRC=$QRCS
qemu_summary initramfs-qemu "$LOG" "$CHECKS"
