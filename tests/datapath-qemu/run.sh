#!/usr/bin/env bash
# Two TCG guests, each with the Debian kernel's unmodified be2net on its own emulated OCe14000
# (`ocetool emulator serve`), cabled together (`--wire`/`--wire-peer`, the cable recorded with
# `--wire-pcap`), 10.0.0.1 (A) and 10.0.0.2 (B); then A's adapter against a guest with QEMU's
# virtio-net on `-netdev dgram` (the same datagram format), whose kernel checks independently every
# checksum and segment the emulated adapter's TX offloads produce.
#
# The guests (files beside this script: init-a.sh, init-b.sh, init-b2.sh, init-pair.sh, with
# common.sh) keep in step through the host: each has a second serial port whose output is a file
# the host reads ("sync ID N", "ask ACTION") and whose input is a FIFO the host answers on ("go
# ID"). Checks, each counted by ID:
#   ping-nooffload-ab/-ba  ping both ways with ethtool -K ... off (the kernel does every checksum)
#   ping-default-ab/-ba    ping both ways with be2net's default offloads
#   counters               `ethtool -S`: A's txq tx_pkts delta = B's rxq rx_pkts delta, and back
#   tcp-ab, tcp-ba         16 MiB each way over TCP (busybox nc), md5 equal on both ends
#   flood                  ping -f: 2000 sent = 2000 received, no `ethtool -S` drop counter moved
#   promisc                a frame to a foreign MAC (a wrong static neighbour on A) is not delivered
#                          to B, and is once B is promiscuous (B's rx_packets)
#   vlan, mtu9000, ipv6    an 802.1Q interface carries ping; MTU 9000 carries ping -M do -s 8000;
#                          IPv6 ping (neighbour discovery through multicast)
#   carrier-lost/-back     B's server killed: A's carrier goes; restarted (B boots again): carrier
#                          back and ping works
#   rmmod-traffic          rmmod be2net on A during a ping flood: rc 0, netdev gone, no error line
#   dmesg-clean-a/-b/-b2   no be2net error or warning line, no splat, in each guest's kernel log
#   virtio-ping-be2net/-virtio, pair-tcp-to-virtio/-from-virtio, dmesg-clean-be2net/-virtio
#                          the mixed pair: ping both ways, 16 MiB each way, md5 equal
# Usage: bash tests/datapath-qemu/run.sh   (KEEP_WORK=DIR keeps the logs and the pcap). Ends with
# "datapath-qemu: N passed, M failed"; exits non-zero on any failure.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../qemu/lib.sh"
CHECKS="ping-nooffload-ab ping-nooffload-ba ping-default-ab ping-default-ba counters tcp-ab tcp-ba flood
  promisc vlan mtu9000 ipv6 carrier-lost carrier-back rmmod-traffic dmesg-clean-a dmesg-clean-b
  dmesg-clean-b2 virtio-ping-be2net virtio-ping-virtio pair-tcp-to-virtio pair-tcp-from-virtio
  dmesg-clean-be2net dmesg-clean-virtio"
qemu_init datapath-qemu "$CHECKS"
QEMU_TIMEOUT=${QEMU_TIMEOUT:-900}

# The guests' tools and their shared libraries: iproute2 (VLAN), ethtool, iputils' ping (-f, -M do).
GUEST_DEBS="ethtool iproute2 iputils-ping libc6 libmnl0 libbpf1 libelf1 libbsd0 libcap2 zlib1g libmd0
  libidn2-0 libunistring2"
qemu_say "building ocetool"
(cd "$REPO" && cargo build --locked -q -p ocetool)
OCETOOL=$HOST_TARGET/debug/ocetool
ROOT=$WORK/root
qemu_debs "$ROOT" $GUEST_DEBS
rm -rf "$ROOT/usr/share" "$ROOT/usr/lib/x86_64-linux-gnu/gconv" "$ROOT/etc/network"
qemu_libs_resolve "$ROOT" sbin/ethtool bin/ip bin/ping || exit 2
for g in a b b2 pair; do
  qemu_initramfs "$WORK/$g.cpio.gz" "$HERE/init-$g.sh" --modules "be2net 8021q virtio_pci virtio_net" --tree "$ROOT" \
    --file "$HERE/common.sh:/lib/common.sh"
done
for g in a b; do "$OCETOOL" --device "emu:$WORK/emu-$g" emulator init >/dev/null; done

. "$HERE/ctl.sh"

serve() {   # serve NAME PEER [more serve options]: adapter NAME's server, its port cabled to PEER's
  local name=$1 peer=$2
  shift 2
  qemu_serve_at "$WORK/$name.sock" "$WORK/server-$name.log" "$OCETOOL" --device "emu:$WORK/emu-${name%%[0-9]*}" \
    emulator serve --socket "$WORK/$name.sock" --wire "$WORK/$name.wire" --wire-peer "$WORK/$peer.wire" "$@"
  SERVER[$name]=$SERVED_PID
}
boot() {    # boot NAME INITRD SOCK ME PEER: a guest with the adapter at SOCK and its channel
  local dev
  ctl_channel "$1"
  mapfile -t dev < <(qemu_vfu_args "$3")
  qemu_start "$WORK/serial-$1.log" "$WORK/$2.cpio.gz" "dp.me=$4 dp.peer=$5" -- "${dev[@]}" "${CTL_ARGS[@]}"
}
declare -A SERVER=()
host_action() {
  case $1 in
    kill-peer)
      kill "${SERVER[b]}"; wait "${SERVER[b]}" 2>/dev/null
      qemu_kill "$WORK/serial-b.log" ;;
    restart-peer)
      serve b a && boot b2 b2 "$WORK/b.sock" 10.0.0.2 10.0.0.1 ;;
    *) echo "unknown action $1"; return 2 ;;
  esac
}

# DATAPATH_PHASES (default "cable virtio") runs only some phases, while working on one: the
# checks of a phase left out fail as never run.
PHASES=${DATAPATH_PHASES:-cable virtio}
QRC_A=0 QRC_B2=0 QRC_A3=0 QRC_V=0
T0=$(date +%s)
if [[ " $PHASES " == *" cable "* ]]; then
  qemu_say "phase 1: A and B, be2net on both ends of the cable"
  serve a b --wire-pcap "$WORK/wire.pcap"
  serve b a
  boot a a "$WORK/a.sock" 10.0.0.1 10.0.0.2
  boot b b "$WORK/b.sock" 10.0.0.2 10.0.0.1
  ctl_run >"$WORK/ctl.log" 2>&1
  qemu_wait "$WORK/serial-a.log"; QRC_A=$QRC
  QRC_B2="B2 never booted"
  if [ -n "${QEMU_GUEST_JOBS[$WORK/serial-b2.log]+set}" ]; then qemu_wait "$WORK/serial-b2.log"; QRC_B2=$QRC; fi
  for pid in "${SERVER[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  qemu_say "phase 1 took $(($(date +%s) - T0))s; the cable's pcap: $(stat -c %s "$WORK/wire.pcap" 2>/dev/null || echo no) bytes"
fi

if [[ " $PHASES " == *" virtio "* ]]; then
  T1=$(date +%s)
  qemu_say "phase 2: A's adapter and a virtio-net guest on -netdev dgram"
  SYNC_WHO=()
  serve a3 v
  boot a3 pair "$WORK/a3.sock" 10.0.0.1 10.0.0.2
  ctl_channel v
  QEMU_VIOMMU=off qemu_start "$WORK/serial-v.log" "$WORK/pair.cpio.gz" "dp.me=10.0.0.2 dp.peer=10.0.0.1 dp.nic=virtio" -- \
    -netdev "dgram,id=n0,local.type=unix,local.path=$WORK/v.wire,remote.type=unix,remote.path=$WORK/a3.wire" \
    -device virtio-net-pci,netdev=n0,mac=52:54:00:0a:00:02 "${CTL_ARGS[@]}"
  ctl_run >>"$WORK/ctl.log" 2>&1
  qemu_wait "$WORK/serial-a3.log"; QRC_A3=$QRC
  qemu_wait "$WORK/serial-v.log"; QRC_V=$QRC
  kill "${SERVER[a3]}" 2>/dev/null || true; wait "${SERVER[a3]}" 2>/dev/null || true
  qemu_say "phase 2 took $(($(date +%s) - T1))s"
fi

set +e
LOG=$WORK/checks.log
cat "$WORK"/serial-{a,b,b2,a3,v}.log 2>/dev/null | grep -E '^GUEST-(CHECK|EVIDENCE|VALUE)' >"$LOG"
value() { sed -n "s/^GUEST-VALUE $1=//p" "$LOG" | tail -1; }
num() { value "$1" | awk '{v = $1} END {print v + 0}'; }

# Counters: each side's frames sent in the window are the other side's frames received.
ATX=$(( $(num a_tx_after) - $(num a_tx_before) )); BRX=$(( $(num b_rx_after) - $(num b_rx_before) ))
BTX=$(( $(num b_tx_after) - $(num b_tx_before) )); ARX=$(( $(num a_rx_after) - $(num a_rx_before) ))
R=0; [ "$ATX" -ge 200 ] && [ "$ATX" = "$BRX" ] && [ "$BTX" = "$ARX" ] || R=1
host_check "$LOG" "counters ethtool -S: A sent $ATX, B received $BRX; B sent $BTX, A received $ARX" $R \
  "expected A's txq tx_pkts delta (>= 200, the pings) = B's rxq rx_pkts delta, and B's tx = A's rx; ping: $(value counters_ping)"
tcp() {   # tcp ID NAME: the md5 and size the sender printed equal the receiver's
  local sent recv
  sent=$(value "$2_sent"); recv=$(value "$2_recv")
  R=0; [ -n "$sent" ] && [ "$sent" = "$recv" ] && [ "${sent#* }" = 16777216 ] || R=1
  host_check "$LOG" "$1 16 MiB over TCP ($2): md5 and size sent ${sent:-none}, received ${recv:-none}" $R \
    "expected equal md5 and 16777216 bytes; sent '${sent}', received '${recv}', sender's nc rc $(value "$2_send_rc")"
}
tcp tcp-ab tcp_ab
tcp tcp-ba tcp_ba
tcp pair-tcp-to-virtio pair_to_virtio
tcp pair-tcp-from-virtio pair_from_virtio
FLOOD=$(value flood)
FS=$(echo "$FLOOD" | sed -n 's/^\([0-9]*\) packets transmitted.*/\1/p')
FR=$(echo "$FLOOD" | sed -n 's/.* \([0-9]*\) received.*/\1/p')
AD=$(( $(num a_drops_after) - $(num a_drops_before) )); BD=$(( $(num b_drops_after) - $(num b_drops_before) ))
R=0; [ "${FS:-0}" = 2000 ] && [ "$FR" = "$FS" ] && [ "$AD" = 0 ] && [ "$BD" = 0 ] || R=1
host_check "$LOG" "flood ping -f: ${FS:-?} sent, ${FR:-?} received; drop counters moved by $AD (A), $BD (B)" $R \
  "expected 2000 sent = received and no drop; ping: ${FLOOD:-none}, rc $(value flood_rc)"
F1=$(( $(num foreign_rx_2) - $(num foreign_rx_1) )); F2=$(( $(num foreign_rx_3) - $(num foreign_rx_2) ))
R=0; [ -n "$(value foreign_rx_3)" ] && [ "$F1" -lt 5 ] && [ "$F2" -ge 20 ] || R=1
host_check "$LOG" "promisc 20 frames to a foreign MAC: B received $F1 while not promiscuous, $F2 once promiscuous" $R \
  "expected fewer than 5 (background only) and then at least 20; rx_packets $(value foreign_rx_1) $(value foreign_rx_2) $(value foreign_rx_3)"
QRC=0; for r in "$QRC_A" "$QRC_B2" "$QRC_A3" "$QRC_V"; do [ "$r" = 0 ] || QRC=$r; done
echo "GUEST-DONE" >>"$LOG"
grep -q '^GUEST-DONE' "$WORK/serial-a.log" && grep -q '^GUEST-DONE' "$WORK/serial-v.log" || sed -i '$d' "$LOG"
qemu_say "the whole scenario took $(($(date +%s) - QEMU_T0))s"
tail -5 "$WORK/ctl.log"
qemu_summary datapath-qemu "$LOG" "$CHECKS"
