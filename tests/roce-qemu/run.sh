#!/usr/bin/env bash
# Two TCG guests (-smp 1, no vIOMMU) with rdma-core (libibverbs and its providers, ibverbs-utils,
# perftest, iproute2's `rdma`) move data over RDMA RC, A (10.0.0.1) serving, B (10.0.0.2) the client:
#   --stack ocrdma (default)  the Debian kernel's ocrdma on be2net on each guest's emulated OCe14000
#                             (`ocetool emulator serve`, the adapter switched to the RoCE profile on
#                             the host first: set-profile roce, reset), the two ports cabled with
#                             --wire/--wire-peer and recorded with --wire-pcap; RoCE v1, GID 0
#   --stack rxe               the same guests on QEMU's virtio-net joined by -netdev dgram, with
#                             rdma_rxe (`rdma link add rxe0 type rxe netdev IF`), recorded by QEMU's
#                             filter-dump on A's side; RoCE v2, the IPv4-mapped GID
# The guests (init.sh, with roce.sh and tests/datapath-qemu/common.sh) keep in step through the
# host's barriers (tests/datapath-qemu/ctl.sh). Checks, each counted by ID:
#   modprobe-a/-b      the stack's device registered (ocrdma0 at be2net's probe, rxe0 after `rdma
#                      link add`), no ib_mad error (QP1's CQ and QP created)
#   devinfo-a/-b       `ibv_devinfo -v`: port PORT_ACTIVE, link_layer Ethernet; for ocrdma its
#                      fw_ver is the adapter's running firmware and its node_guid the EUI-64 of port
#                      0's MAC, as the emulator's state file holds them, and `ocetool query` (run
#                      on the host before the guests) agrees
#   pingpong-default   ibv_rc_pingpong -n 50 (4096 B SEND/RECV), both ends exit 0
#   pingpong-inline    -s 64 (within the QP's inline size: inline sends)
#   pingpong-events    -e (completion events instead of polling)
#   pingpong-64k       -s 65536 -n 10 (64 packets per message at MTU 1024)
#   write-bw, read-bw  ib_write_bw / ib_read_bw, 300 iterations of 4096 B, both ends exit 0, the
#                      client's bandwidth line
#   bad-rkey           bad_rkey.c (no distribution tool posts a wrong key): B's RDMA WRITE with a
#                      key A never registered completes with IBV_WC_REM_ACCESS_ERR, A's buffer is
#                      untouched, both exit 0 (and the kernels stay clean: dmesg-clean)
#   destroy-under-traffic
#                      B's pingpong client SIGKILLed mid-run (its port's sent-packet counter moving
#                      when killed); both sides then pass a second pingpong
#   pcap-decodes       tshark decodes the recorded wire's frames as InfiniBand (BTH opcodes)
#   dmesg-clean-a/-b   no ocrdma/be2net/rxe/ib error line, no splat, but for ocrdma's two drain
#                      WARN_ONCEs (spec/datapath.md §3.3) and its PFC lines (§4.4)
# The ocrdma the guests load: by default the guest kernel's own, rebuilt from Debian's source with
# the one-line fix ocrdma-fix.sh explains (without it, Debian 6.1's ocrdma gives user space's first
# PD of a context id 0 and then dereferences NULL creating a QP: no user-space verbs run on it);
# --ocrdma stock loads the kernel's module unchanged, to see that failure.
# Usage: bash tests/roce-qemu/run.sh [--stack ocrdma|rxe] [--ocrdma fixed|stock]   (KEEP_WORK=DIR
# keeps the logs and the pcap). Ends with "roce-qemu: N passed, M failed"; exits non-zero on any
# failure.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
STACK=ocrdma
OCRDMA=fixed
while [ $# -gt 0 ]; do
  case $1 in
    --stack) STACK=${2:-}; shift 2 || { echo "roce-qemu: --stack needs ocrdma or rxe"; exit 2; } ;;
    --ocrdma) OCRDMA=${2:-}; shift 2 || { echo "roce-qemu: --ocrdma needs fixed or stock"; exit 2; } ;;
    *) echo "roce-qemu: unknown argument '$1' (usage: run.sh [--stack ocrdma|rxe] [--ocrdma fixed|stock])"; exit 2 ;;
  esac
done
case $STACK in ocrdma | rxe) ;; *) echo "roce-qemu: unknown stack '$STACK' (ocrdma or rxe)"; exit 2 ;; esac
case $OCRDMA in fixed | stock) ;; *) echo "roce-qemu: unknown ocrdma '$OCRDMA' (fixed or stock)"; exit 2 ;; esac
. "$HERE/../qemu/lib.sh"
CHECKS="modprobe-a modprobe-b devinfo-a devinfo-b pingpong-default pingpong-inline pingpong-events
  pingpong-64k write-bw read-bw bad-rkey destroy-under-traffic pcap-decodes dmesg-clean-a dmesg-clean-b"
qemu_init roce-qemu "$CHECKS"
QEMU_TIMEOUT=${QEMU_TIMEOUT:-900}
export QEMU_VIOMMU=off
qemu_say "stack $STACK$([ "$STACK" = ocrdma ] && echo ", $OCRDMA ocrdma")"
if ! command -v tshark >/dev/null; then
  qemu_say "installing tshark"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends tshark >/dev/null ||
    { apt-get update -qq; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends tshark >/dev/null; }
fi

qemu_say "building ocetool"
(cd "$REPO" && cargo build --locked -q -p ocetool)
OCETOOL=$HOST_TARGET/debug/ocetool
. "$HERE/guest-root.sh"
MODULE_ARGS=()
if [ "$OCRDMA" = fixed ]; then
  . "$HERE/ocrdma-fix.sh"
  ocrdma_fixed
  MODULE_ARGS=(--module-file "ocrdma.ko:$OCRDMA_KO")
fi
roce_initramfs "$WORK/roce.cpio.gz" "$HERE/init.sh" "${MODULE_ARGS[@]}"
. "$REPO/tests/datapath-qemu/ctl.sh"
host_action() { echo "unknown action $1"; return 2; }

. "$HERE/adapters.sh"
T0=$(date +%s)
PCAP=$WORK/wire.pcap
ROCE_SERVERS=()
if [ "$STACK" = ocrdma ]; then
  roce_adapter "$OCETOOL" a b --wire-pcap "$PCAP"; ROCE_SERVERS+=("$SERVED_PID"); ROCE_DEV_A=("${ROCE_DEV[@]}")
  roce_adapter "$OCETOOL" b a; ROCE_SERVERS+=("$SERVED_PID"); ROCE_DEV_B=("${ROCE_DEV[@]}")
else
  mapfile -t ROCE_DEV_A < <(roce_nic "$WORK/a.wire" "$WORK/b.wire" 52:54:00:0c:00:01
    printf '%s\n' -object "filter-dump,id=dump0,netdev=n0,file=$PCAP")
  mapfile -t ROCE_DEV_B < <(roce_nic "$WORK/b.wire" "$WORK/a.wire" 52:54:00:0c:00:02)
fi
roce_pair_start "$WORK/roce.cpio.gz" "roce.stack=$STACK"
roce_pair_finish
qemu_say "the guests took $(($(date +%s) - T0))s; the wire's pcap: $(stat -c %s "$PCAP" 2>/dev/null || echo no) bytes"

set +e
LOG=$WORK/checks.log
cat "$WORK"/serial-{a,b}.log 2>/dev/null | grep -E '^GUEST-(CHECK|EVIDENCE|VALUE)' >"$LOG"
. "$HERE/checks.sh"
QRC=$QRC_A; [ "$QRC_B" = 0 ] || QRC=$QRC_B
echo "GUEST-DONE" >>"$LOG"
grep -q '^GUEST-DONE' "$WORK/serial-a.log" && grep -q '^GUEST-DONE' "$WORK/serial-b.log" || sed -i '$d' "$LOG"
qemu_say "the whole scenario took $(($(date +%s) - QEMU_T0))s"
tail -3 "$WORK/ctl.log"
qemu_summary roce-qemu "$LOG" "$CHECKS"
