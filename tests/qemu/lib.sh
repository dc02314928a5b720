# Shared guest tooling for the QEMU tests that attach a vfio-user device (source it from bash):
# the sid QEMU (get-qemu.sh), the Debian generic kernel, a busybox initramfs with chosen modules,
# programs and files, a run of server + guest, and the PASS/FAIL summary.
#
#   . tests/qemu/lib.sh
#   qemu_init NAME "ID..."               work dir in $WORK (kept if $KEEP_WORK=DIR), host packages,
#                                        $QEMU (sid wrapper), $KVER/$VMLINUZ (kernel, cached); the
#                                        IDs are the checks qemu_summary will count (qemu_expect),
#                                        and the EXIT trap is qemu_exit
#   qemu_expect NAME "ID..."             from here on, an exit before qemu_summary has printed its
#                                        line (a setup step failing under set -e, an explicit
#                                        exit) prints "NAME: 0 passed, N failed", every expected
#                                        check failed, and exits non-zero (qemu_exit, the EXIT trap
#                                        a script without qemu_init sets itself)
#   qemu_guest_build ARGS...             cargo build of static guest programs (--target x86_64 gnu,
#                                        +crt-static); prints "name path" lines
#   qemu_debs DIR PKG...                 Debian packages (bookworm, this machine's apt sources)
#                                        downloaded once into the cache and unpacked into DIR, for
#                                        guest programs that need their shared libraries
#   qemu_libs_resolve DIR PROG...        each program (a path inside DIR) finds its shared
#                                        libraries inside DIR (ld.so --list); returns 2 if not
#   qemu_initramfs OUT INIT [--modules "m1 m2"] [--module-file NAME.ko:PATH]... [--bin PATH[:NAME]]...
#                  [--file SRC:DEST]... [--tree DIR]...
#                                        busybox + modules (with their dependencies, in load order,
#                                        decompressed; --module-file puts PATH in place of the
#                                        kernel's NAME.ko, e.g. a module rebuilt from patched
#                                        source) + programs in /bin + files + trees (copied onto
#                                        the root) + INIT as /init + tests/qemu/guest.sh as
#                                        /lib/guest.sh
#   qemu_serve_at SOCK LOG CMD...        starts a vfio-user server (CMD must create SOCK), waits for
#                                        the socket; its PID is $SERVED_PID and joins
#                                        $QEMU_SERVER_PIDS (all stopped on exit, as is every PID a
#                                        script adds to $QEMU_HELPER_PIDS); several may run at once
#   qemu_serve LOG CMD...                the one-adapter form: qemu_serve_at $SOCK, the PID also
#                                        in $SERVER_PID
#   qemu_start LOG INITRD APPEND [-- ARGS...]
#                                        boots a guest in the background, as qemu_boot does but with
#                                        ARGS (the devices: qemu_vfu_args SOCK, a NIC, more serial
#                                        ports) instead of the device at $SOCK; several may run at
#                                        once; qemu_wait LOG waits for it and sets $QRC, qemu_kill
#                                        LOG stops its QEMU (by the PID QEMU wrote; also on exit)
#   qemu_boot INITRD LOG [APPEND]        boots q35/TCG with intel-iommu,caching-mode=on, RAM from a
#                                        memfd (share=on), the device at $SOCK as vfio-user-pci;
#                                        serial to LOG; sets $QRC; the kernel command line is
#                                        qemu_cmdline's (no_timer_check: a busy host must not make
#                                        the guest panic). QEMU_VIOMMU=off boots without the vIOMMU
#                                        (no intel-iommu, intel_iommu=off): no groups
#   qemu_vfu_args SOCK [ID]              the QEMU arguments of a vfio-user-pci device at SOCK behind
#                                        its own root port, one a line (mapfile them)
#   qemu_vfu_card_args PARENT SOCK...    one card: the N-th socket as function N of one slot, each
#                                        with "multifunction" on (QEMU sets the header bit only
#                                        where told, and the guest's kernel reads it per function);
#                                        PARENT is `root-port` (a PCIe root port, which has ACS) or
#                                        `pci-bridge` (a PCIe-to-PCI bridge: every function behind
#                                        it shares one requester ID, so one IOMMU group)
#   qemu_summary NAME LOG "ID..."        counts GUEST-CHECK lines by ID (a missing or unexpected one
#                                        fails), fails a guest that never said GUEST-DONE or a QEMU
#                                        that did not exit 0, prints each failed check with its
#                                        evidence, and "NAME: N passed, M failed"; a guest kernel
#                                        that panicked in any boot fails every check, its panic
#                                        line printed
#
#   qemu_emulated_adapter OCETOOL STATE IMAGE
#                                        a factory-fresh emulated adapter in STATE and, in IMAGE, a
#                                        firmware image one version above its factory firmware;
#                                        sets $FACTORY (the documented factory version), $NEW,
#                                        $RUNNING and $MAC/$MAC1 (ports 0 and 1) from the state file
#   qemu_state STATE FILTER, qemu_state_function_mode STATE, qemu_assumption NAME
#                                        the emulator's state file read with jq, the function mode
#                                        its active profile stands for (design.md §6), a constant
#                                        of emulator/src/assumptions/: values a check compares with
#                                        that do not pass through the handlers the guest drives;
#                                        $FACTORY_LINK_UP, $FACTORY_SPEED_MBPS: the factory link
#   qemu_json LOG NAME, qemu_rc LOG NAME the JSON document the guest printed with `doc NAME ...`,
#                                        and its exit code
#   qemu_ok LOG "ID TEXT" COMMAND...     a host check from a command's exit code; what the command
#                                        printed is its evidence when it fails
#
# Inside the guest, /lib/guest.sh gives check, find_dev, doc and finish (see that file); a check's
# name starts with its ID (`check "bar0-size BAR0 is 16 KiB" $? "evidence"`). host_check LOG
# "ID TEXT" RC [EVIDENCE] adds one from the host to LOG the same way. Host checks run under
# `set +e` (each script turns errexit off once its guests have run): a grep that finds nothing
# fails its check, not the script.
# $HOST_TARGET is cargo's target folder for the host builds (CARGO_TARGET_DIR when set, relative
# to the repository as cargo takes it, else target/): host programs are $HOST_TARGET/debug/NAME.
# Environment: OCETOOL_CACHE (default /var/tmp/ocetool-cache), KERNEL_META (linux-image-amd64),
# QEMU_TIMEOUT (seconds, default 240), QEMU_SMP (1), QEMU_MEM (512M), QEMU_VIOMMU (on), QEMU_EXTRA
# (more QEMU arguments, split on spaces), QEMU_APPEND (more kernel arguments).

QEMU_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$QEMU_LIB_DIR/../.." && pwd)
HOST_TARGET=${CARGO_TARGET_DIR:-target}
case $HOST_TARGET in /*) ;; *) HOST_TARGET=$REPO/$HOST_TARGET ;; esac
OCETOOL_CACHE=${OCETOOL_CACHE:-/var/tmp/ocetool-cache}
GUEST_TARGET=x86_64-unknown-linux-gnu

qemu_say() { echo "$QEMU_NAME: $* ($(($(date +%s) - QEMU_T0))s)"; }

qemu_init() {
  QEMU_NAME=$1
  [ $# -lt 2 ] || qemu_expect "$1" "$2"
  QEMU_T0=$(date +%s)
  if [ -n "${KEEP_WORK:-}" ]; then
    WORK=$KEEP_WORK; mkdir -p "$WORK"
    trap qemu_exit EXIT
  else
    WORK=$(mktemp -d "/tmp/ocetool-$QEMU_NAME.XXXXXX")
    trap 'qemu_exit "$WORK"' EXIT
  fi
  SOCK=$WORK/vfu.sock
  local need=() p
  for p in busybox-static cpio kmod xz-utils zstd jq; do dpkg -s "$p" >/dev/null 2>&1 || need+=("$p"); done
  if [ ${#need[@]} -gt 0 ]; then
    qemu_say "installing ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  fi
  QEMU=$(bash "$QEMU_LIB_DIR/get-qemu.sh")
  qemu_kernel
}

# The kernel: the meta package resolved to today's concrete package, downloaded and unpacked once
# into the cache (names change with every ABI bump; never installed).
qemu_kernel() {
  local meta=${KERNEL_META:-linux-image-amd64} pkg dir
  resolve() { apt-cache depends "$meta" 2>/dev/null | awk '/Depends: linux-image-/{print $2; exit}'; }
  pkg=$(resolve)
  if [ -z "$pkg" ] || [ ! -d "$OCETOOL_CACHE/kernel/$pkg/lib/modules" ]; then
    [ -n "$pkg" ] || { apt-get update -qq; pkg=$(resolve); }
    [ -n "$pkg" ] || { echo "$QEMU_NAME: cannot resolve $meta"; exit 2; }
    dir=$OCETOOL_CACHE/kernel/$pkg
    if [ ! -d "$dir/lib/modules" ]; then
      local tmp; tmp=$(mktemp -d "$OCETOOL_CACHE/kernel-dl.XXXXXX")
      if ! (cd "$tmp" && apt-get download -qq "$pkg" 2>apt.err); then
        apt-get update -qq
        (cd "$tmp" && apt-get download -qq "$pkg" 2>apt.err) || { cat "$tmp/apt.err"; exit 2; }
      fi
      qemu_say "unpacking $pkg"
      rm -rf "$dir"; mkdir -p "$dir"
      dpkg -x "$tmp/${pkg}"_*.deb "$dir"
      rm -rf "$tmp"
    fi
  fi
  KROOT=$OCETOOL_CACHE/kernel/$pkg
  KVER=$(ls "$KROOT/lib/modules")
  VMLINUZ=$KROOT/boot/vmlinuz-$KVER
  [ -f "$KROOT/lib/modules/$KVER/modules.dep" ] || depmod -b "$KROOT" "$KVER"
}

# Static guest programs: one cargo invocation (dependencies built once), dev profile without debug
# info. Arguments as for cargo build (-p, --bin, --test, --example). Prints "name path" lines.
qemu_guest_build() {
  (cd "$REPO" && RUSTFLAGS="-C target-feature=+crt-static" CARGO_PROFILE_DEV_DEBUG=0 \
    cargo build --locked --target "$GUEST_TARGET" "$@" --message-format=json-render-diagnostics |
    jq -r 'select(.reason=="compiler-artifact" and .executable!=null) | .target.name + " " + .executable')
}

# qemu_debs DIR PKG...: each package's .deb, downloaded once into the cache, unpacked into DIR.
qemu_debs() {
  local dir=$1 cache=$OCETOOL_CACHE/guest-debs p deb
  shift
  mkdir -p "$dir" "$cache"
  for p in "$@"; do
    deb=$(ls "$cache/${p}"_*.deb 2>/dev/null | head -1 || true)   # none yet: ls fails under pipefail
    if [ -z "$deb" ]; then
      (cd "$cache" && apt-get download -qq "$p" 2>/dev/null) ||
        { apt-get update -qq; (cd "$cache" && apt-get download -qq "$p"); }
      deb=$(ls "$cache/${p}"_*.deb | head -1)
    fi
    dpkg -x "$deb" "$dir"
  done
}

qemu_libs_resolve() {
  local root=$1 b out outside
  shift
  for b in "$@"; do
    out=$("$root/lib64/ld-linux-x86-64.so.2" --library-path "$root/lib/x86_64-linux-gnu:$root/usr/lib/x86_64-linux-gnu" \
      --list "$root/$b") || { echo "$QEMU_NAME: $b does not resolve its libraries"; return 2; }
    # ld.so falls back to this machine's own directories: a library found there is missing inside.
    outside=$(echo "$out" | awk -v r="$root/" '$2 == "=>" && index($3, r) != 1 && $3 ~ /^\// {print $1}')
    [ -z "$outside" ] || { echo "$QEMU_NAME: $b needs $(echo $outside) from outside $root"; return 2; }
  done
}

qemu_initramfs() {
  local out=$1 init=$2 root mods="" bins=() files=() trees=() m i=0 base dest
  local -A swap=()
  shift 2
  while [ $# -gt 0 ]; do
    case $1 in
      --modules) mods="$mods $2"; shift 2 ;;
      --module-file) swap[${2%%:*}]=${2#*:}; shift 2 ;;
      --bin) bins+=("$2"); shift 2 ;;
      --file) files+=("$2"); shift 2 ;;
      --tree) trees+=("$2"); shift 2 ;;
      *) echo "qemu_initramfs: unknown option $1"; return 2 ;;
    esac
  done
  root=$(mktemp -d "$WORK/rootfs.XXXXXX")
  mkdir -p "$root"/{bin,proc,sys,dev,tmp,lib/modules}
  cp /bin/busybox "$root/bin/busybox"
  # Each module after the ones it depends on, as modprobe orders them; numbered for /init.
  for m in $(for m in $mods; do modprobe -d "$KROOT" -S "$KVER" --show-depends "$m"; done |
    awk '$1=="insmod"{print $2}' | awk '!seen[$0]++'); do
    i=$((i + 1)); base=$(basename "$m"); base=${base%.xz}; base=${base%.zst}
    dest=$root/lib/modules/$(printf %02d "$i")-$base
    if [ -n "${swap[$base]:-}" ]; then cp "${swap[$base]}" "$dest"; unset "swap[$base]"; continue; fi
    case $m in
      *.xz) xz -dc "$m" >"$dest" ;;
      *.zst) zstd -dcq "$m" >"$dest" ;;
      *) cp "$m" "$dest" ;;
    esac
  done
  [ ${#swap[@]} -eq 0 ] || { echo "qemu_initramfs: no module ${!swap[*]} among $mods"; return 2; }
  for b in "${bins[@]}"; do
    dest=$root/bin/$(basename "${b#*:}")
    [ "${b#*:}" = "$b" ] && dest=$root/bin/$(basename "$b")
    cp "${b%%:*}" "$dest" && strip "$dest" 2>/dev/null || true
  done
  for f in "${files[@]}"; do mkdir -p "$root/$(dirname "${f#*:}")"; cp "${f%%:*}" "$root/${f#*:}"; done
  for f in "${trees[@]}"; do cp -a "$f/." "$root/"; done
  cp "$QEMU_LIB_DIR/guest.sh" "$root/lib/guest.sh"
  cp "$init" "$root/init"; chmod +x "$root/init"
  (cd "$root" && find . | cpio -o -H newc --quiet | gzip -1 >"$out")
  rm -rf "$root"
}

qemu_serve_at() {
  local sock=$1 log=$2 n
  shift 2
  rm -f "$sock"
  "$@" >"$log" 2>&1 &
  SERVED_PID=$!
  QEMU_SERVER_PIDS="${QEMU_SERVER_PIDS:-} $SERVED_PID"
  for n in $(seq 1 300); do
    [ -S "$sock" ] && return 0
    kill -0 "$SERVED_PID" 2>/dev/null || break
    sleep 0.05
  done
  echo "$QEMU_NAME: the server did not create $sock:"; cat "$log"
  return 1
}

qemu_serve() {
  local r=0
  qemu_serve_at "$SOCK" "$@" || r=$?
  SERVER_PID=$SERVED_PID
  return $r
}

qemu_vfu_args() {
  local id=${2:-vfu0}
  printf '%s\n' -device "pcie-root-port,id=rp-$id,chassis=1,slot=1" -device \
    "{\"driver\":\"vfio-user-pci\",\"id\":\"$id\",\"bus\":\"rp-$id\",\"socket\":{\"type\":\"unix\",\"path\":\"$1\"}}"
}

qemu_vfu_card_args() {
  local parent=$1 bus addr n=0 sock
  shift
  case $parent in
    root-port) printf '%s\n' -device "pcie-root-port,id=card-bus,chassis=2,slot=2"; addr=0 ;;
    pci-bridge) printf '%s\n' -device "pcie-pci-bridge,id=card-bus,bus=pcie.0"; addr=1 ;;
    *) echo "qemu_vfu_card_args: no parent $parent" >&2; return 2 ;;
  esac
  for sock in "$@"; do
    printf '%s\n' -device "{\"driver\":\"vfio-user-pci\",\"id\":\"card-f$n\",\"bus\":\"card-bus\",\"addr\":\"$addr.$n\",\"multifunction\":true,\"socket\":{\"type\":\"unix\",\"path\":\"$sock\"}}"
    n=$((n + 1))
  done
}

qemu_boot() {
  local initrd=$1 log=$2 append=${3:-} dev
  mapfile -t dev < <(qemu_vfu_args "$SOCK")
  qemu_start "$log" "$initrd" "$append" -- "${dev[@]}"
  qemu_wait "$log"
}

# Each guest qemu_start ran: its log -> the PID of the background job that runs it (the job writes
# QEMU's status to LOG.rc; QEMU writes its own PID to LOG.pid).
declare -gA QEMU_GUEST_JOBS=()

qemu_start() {
  local log=$1 initrd=$2 append=$3
  local mem=${QEMU_MEM:-512M} viommu=(-device intel-iommu,caching-mode=on) iommu_arg=intel_iommu=on
  shift 3
  [ "${1:-}" != -- ] || shift
  if [ "${QEMU_VIOMMU:-on}" = off ]; then viommu=(); iommu_arg=intel_iommu=off; fi
  QEMU_BOOT_LOGS="${QEMU_BOOT_LOGS:-} $log"
  rm -f "$log.rc" "$log.pid"
  date +%s >"$log.t0"
  (
    set +e
    timeout "${QEMU_TIMEOUT:-240}" "$QEMU" -accel tcg -machine q35,memory-backend=mem -cpu max \
      -smp "${QEMU_SMP:-1}" -m "$mem" -object "memory-backend-memfd,id=mem,size=$mem,share=on" \
      "${viommu[@]}" -pidfile "$log.pid" \
      -nographic -nodefaults -no-reboot -serial stdio -display none ${QEMU_EXTRA:-} "$@" \
      -kernel "$VMLINUZ" -initrd "$initrd" \
      -append "$(qemu_cmdline "$iommu_arg" $append)" </dev/null 2>&1 |
      tr -d '\r' >"$log"
    echo "${PIPESTATUS[0]}" >"$log.rc"
  ) &
  QEMU_GUEST_JOBS[$log]=$!
}

qemu_wait() {
  local log=$1 t1
  t1=$(cat "$log.t0")
  wait "${QEMU_GUEST_JOBS[$log]}" 2>/dev/null || true
  QRC=$(cat "$log.rc" 2>/dev/null || echo 255)
  echo >>"$log"   # a guest cut off mid-line must not swallow the host's first check line
  qemu_say "qemu ($(basename "$log")) exited with $QRC after $(($(date +%s) - t1))s"
  qemu_panic_line "$log" >/dev/null && qemu_say "the guest kernel panicked: $(qemu_panic_line "$log")"
  return 0
}

# qemu_kill LOG: stops the QEMU qemu_start started with LOG, by the PID it wrote (QEMU removes the
# file when it exits), and waits for its job.
qemu_kill() {
  local pid
  pid=$(cat "$1.pid" 2>/dev/null) || pid=
  [ -z "$pid" ] || kill "$pid" 2>/dev/null || true
  wait "${QEMU_GUEST_JOBS[$1]}" 2>/dev/null || true
}

# The guest kernel's command line: the serial console, the IOMMU argument, then
#   panic=-1        a panic reboots at once, and -no-reboot turns that into QEMU's exit (status 0:
#                   qemu_summary reads the panic line from the log, qemu_panic_line);
#   no_timer_check  the kernel skips its check that the IO-APIC timer ticks: under TCG on a busy
#                   host the few ticks it waits for arrive late, and with intel-iommu's interrupt
#                   remapping the kernel then panics before /init ("timer doesn't work through
#                   Interrupt-remapped IO-APIC"); the timer works, it was only slow;
#   quiet loglevel=4 edd=off, and $QEMU_APPEND (more arguments, for a test of this library).
qemu_cmdline() {
  local iommu_arg=$1
  shift
  echo "console=ttyS0 $iommu_arg panic=-1 no_timer_check quiet loglevel=4 edd=off $* ${QEMU_APPEND:-}"
}

# qemu_panic_line LOG: the kernel's panic line in a serial log ("Kernel panic - not syncing: ..."),
# printed, status 0; status 1 when the guest did not panic.
qemu_panic_line() {
  # One awk over the file, no pipeline: under pipefail a reader that stops early fails it.
  awk '!/^GUEST-/ && match($0, /(\[ *[0-9.]+\] )?Kernel panic - not syncing.*/) {
    print substr($0, RSTART); found = 1; exit
  } END { exit !found }' "$1" 2>/dev/null
}

# host_check LOG "ID description" RC [EVIDENCE]: a check made on the host, counted like the
# guest's; a failed one also leaves its evidence (what was expected, what was seen) for the summary.
host_check() {
  if [ "$3" = 0 ]; then
    echo "GUEST-CHECK PASS $2"
  else
    echo "GUEST-CHECK FAIL $2"
    [ -z "${4:-}" ] || qemu_evidence_lines "${2%% *}" "$4"
  fi >>"$1"
}

# qemu_evidence_lines ID TEXT: TEXT as "GUEST-EVIDENCE ID ..." lines (at most 12, each cut at 300
# characters), which qemu_summary prints under the failed check.
qemu_evidence_lines() {
  printf '%s\n' "$2" | head -12 | cut -c1-300 | sed "s/^/GUEST-EVIDENCE $1 /"
}

qemu_emulated_adapter() {
  local ocetool=$1 state=$2 image=$3
  "$ocetool" --device "emu:$state" emulator init >/dev/null
  FACTORY=$(qemu_assumption FACTORY_FIRMWARE_VERSION)
  RUNNING=$(qemu_state "$state" .runtime.running_version)
  MAC=$(qemu_state "$state" '.identity.macs[0]')
  MAC1=$(qemu_state "$state" '.identity.macs[1]')
  [ "$RUNNING" = "$FACTORY" ] ||
    { echo "$QEMU_NAME: a fresh adapter runs $RUNNING, not the documented factory $FACTORY"; return 2; }
  NEW=$(echo "$FACTORY" | awk -F. 'NF == 4 {printf "%d.%d.%d.%d", $1, $2, $3, $4 + 1}')
  "$ocetool" fw build --version "$NEW" -o "$image" >/dev/null
}

# qemu_state STATE FILTER: a value of the emulator's state file (STATE/state.json, the adapter's
# identity and NVRAM as the emulator stores them), read with jq: what a guest check compares with
# does not pass through the mailbox handlers the guest drives. Fails, saying so, if it is missing.
qemu_state() {
  local v
  v=$(jq -r "$2 | select(. != null)" "$1/state.json" 2>/dev/null)
  [ -n "$v" ] || { echo "$QEMU_NAME: $1/state.json has no $2" >&2; return 2; }
  echo "$v"
}

# qemu_state_function_mode STATE: the QUERY_FIRMWARE_CONFIG function_mode the active profile's
# pf_type stands for (design.md §6: MISSION_NIC 1 is 0x2 NIC, MISSION_RDMA 8 is 0x6 NIC+RDMA).
qemu_state_function_mode() {
  local t
  t=$(qemu_state "$1" .runtime.active.pf_type) || return 2
  case $t in
    1) echo 2 ;;
    8) echo 6 ;;
    *) echo "$QEMU_NAME: $1/state.json: active pf_type $t is neither NIC (1) nor RDMA (8)" >&2; return 2 ;;
  esac
}

# qemu_assumption NAME: the value of `pub const NAME` in emulator/src/assumptions/ (the emulator's
# documented factory facts, design.md §6), quotes and digit separators removed.
qemu_assumption() {
  local v
  v=$(sed -n "s/^pub const $1: [^=]* = \(.*\);\$/\1/p" "$REPO"/emulator/src/assumptions/*.rs | head -1 | tr -d '"_')
  [ -n "$v" ] || { echo "$QEMU_NAME: emulator/src/assumptions/ defines no $1" >&2; return 2; }
  echo "$v"
}

# The link every port of a factory-fresh adapter has: up at 10 Gb/s (emulator/src/assumptions/,
# "Link state of every port: up", LINK_SPEED_CODE and LINK_SPEED_10MBPS).
FACTORY_LINK_UP=true
FACTORY_SPEED_MBPS=$(( $(REPO=$REPO QEMU_NAME=lib qemu_assumption LINK_SPEED_10MBPS) * 10 ))

qemu_json() { sed -n "/^GUEST-JSON-BEGIN $2\$/,/^GUEST-JSON-END $2 /{/^GUEST-JSON-/d;p}" "$1"; }
qemu_rc() { sed -n "s/^GUEST-JSON-END $2 rc=//p" "$1"; }
qemu_ok() {
  local log=$1 check=$2 r=0 out
  shift 2
  out=$("$@" 2>&1) || r=1
  host_check "$log" "$check" $r "${out:-(the check printed nothing)}"
}

qemu_expect() { QEMU_NAME=$1; QEMU_CHECKS=$2; }

# The EXIT trap (qemu_exit [DIR]): stops the server and helpers (qemu_cleanup), prints the summary
# line with every expected check failed if the script ends before qemu_summary printed its own,
# removes DIR (the work folder, unless kept) and exits with the script's status, non-zero then.
# A trap runs under the script's set -e, where one failing step would skip the rest: set +e.
qemu_exit() {
  local rc=$? at=$BASH_COMMAND n
  set +e
  qemu_cleanup
  if [ -n "${QEMU_CHECKS+set}" ] && [ -z "${QEMU_SUMMARY_DONE:-}" ]; then
    n=$(echo $QEMU_CHECKS | wc -w)
    echo "$QEMU_NAME: stopped before its checks were counted (exit $rc at: $at)"
    echo "$QEMU_NAME: 0 passed, $n failed"
    [ "$rc" != 0 ] || rc=1
  fi
  [ -z "${1:-}" ] || rm -rf "$1"
  exit "$rc"
}

# Stops, by PID, the guests and servers this library started and the helpers a script started in the
# background and listed in $QEMU_HELPER_PIDS, those that still run (on every exit, failures too).
qemu_cleanup() {
  local pid log
  for log in "${!QEMU_GUEST_JOBS[@]}"; do
    if kill -0 "${QEMU_GUEST_JOBS[$log]}" 2>/dev/null; then qemu_kill "$log"; fi
  done
  for pid in ${QEMU_HELPER_PIDS:-} ${QEMU_SERVER_PIDS:-}; do
    if kill -0 "$pid" 2>/dev/null; then
      kill "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
    fi
  done
}

# Counts the checks by ID: each expected ID passes only with exactly one PASS line and no FAIL
# line ("GUEST-CHECK PASS|FAIL ID description"); an ID the log lacks (the guest died, hung or never
# got that far) is a failure, and so is a FAIL line whose ID is not expected (a setup failure), and
# a guest that never said GUEST-DONE or a QEMU that did not exit 0 ($QRC). Each failed check is
# printed with its line and its evidence (GUEST-EVIDENCE lines: what was expected, what was seen).
# A guest kernel that panicked in any boot (LOG or a serial log qemu_boot wrote) fails every check
# with that reason, its panic line printed: nothing after the panic ran as the checks assume.
qemu_summary() {
  local name=$1 log=$2 expected=$3 passed=0 failed=0 id pass fail l panic="" n
  for l in $(printf '%s\n' "$log" ${QEMU_BOOT_LOGS:-} | awk '!seen[$0]++'); do
    panic=$(qemu_panic_line "$l") && { panic="$panic (in $(basename "$l"))"; break; }
  done
  if [ -n "$panic" ]; then
    n=$(echo $expected | wc -w)
    echo "$name: the guest kernel panicked: $panic"
    echo "$name: every check fails with that reason ($n checks)"
    echo "$name: 0 passed, $n failed"
    QEMU_SUMMARY_DONE=1
    return 1
  fi
  for id in $expected; do
    pass=$(grep -cE "^GUEST-CHECK PASS $id( |\$)" "$log" || true)
    fail=$(grep -cE "^GUEST-CHECK FAIL $id( |\$)" "$log" || true)
    if [ "$pass" = 1 ] && [ "$fail" = 0 ]; then
      passed=$((passed + 1))
    else
      failed=$((failed + 1))
      if [ "$pass" = 0 ] && [ "$fail" = 0 ]; then
        echo "$name: check $id never ran"
      else
        echo "$name: check $id failed ($pass PASS and $fail FAIL lines; it passes with exactly one PASS):"
        grep -E "^GUEST-CHECK (PASS|FAIL) $id( |\$)" "$log" | sed 's/^/  /'
        qemu_evidence_of "$log" "$id"
      fi
    fi
  done
  for id in $(sed -n 's/^GUEST-CHECK FAIL \([^ ]*\).*/\1/p' "$log"); do
    case " $(echo $expected) " in
      *" $id "*) ;;
      *) failed=$((failed + 1))
        echo "$name: unexpected failed check $id:"
        grep -E "^GUEST-CHECK FAIL $id( |\$)" "$log" | sed 's/^/  /'
        qemu_evidence_of "$log" "$id" ;;
    esac
  done
  if ! grep -q '^GUEST-DONE' "$log" || [ "${QRC:-1}" != 0 ]; then
    echo "$name: the guest did not finish its checks (qemu rc ${QRC:-?}; 124 = timeout)"
    failed=$((failed + 1))
  fi
  echo "$name: $passed passed, $failed failed"
  QEMU_SUMMARY_DONE=1
  [ "$failed" = 0 ]
}

# qemu_evidence_of LOG ID: the evidence a failed check left, indented, or a note that it left none
# (its line then says what it saw).
qemu_evidence_of() {
  if grep -q "^GUEST-EVIDENCE $2 " "$1"; then
    sed -n "s/^GUEST-EVIDENCE $2 /  evidence: /p" "$1"
  else
    echo "  evidence: (none beyond the check's line)"
  fi
}
