#!/usr/bin/env bash
# Checks oce-roce's RoCE v1 frames against two references that share no code with it:
#  1. Wireshark (tshark) must dissect each frame of examples/roce_pcap.rs as RoCE with the
#     opcode, destination QP, PSN and extended-header fields listed below (written out by hand
#     from the example's frame list), and report no malformed packet;
#  2. the ICRC of each frame must equal CRC-32 (Python's zlib) over IBTA Annex A16's masked bytes:
#     8 bytes of ones for the LRH, the GRH with traffic class, flow label and hop limit set to
#     ones, the BTH with byte 4 set to ones, then the rest up to the ICRC, stored least
#     significant byte first. Wireshark 4.0 shows the ICRC field but does not verify it.
# Needs tshark (apt-get install tshark) and python3. Usage: bash emulator/roce/tshark-check.sh
# Prints "tshark-check: N frames OK" or the first difference, and exits non-zero on any.
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v tshark >/dev/null || { echo "tshark-check: tshark not found (apt-get install tshark)"; exit 2; }
WORK=$(mktemp -d /tmp/oce-roce-tshark.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cargo run -q -p oce-roce --example roce_pcap -- "$WORK/roce.pcap"

# RPC-over-RDMA's heuristic would take the SEND payloads for RPC messages.
tshark -r "$WORK/roce.pcap" --disable-protocol rpcordma -T fields -E separator=' ' -E occurrence=f \
  -e _ws.col.Protocol -e vlan.id -e infiniband.bth.opcode -e infiniband.bth.destqp -e infiniband.bth.psn \
  -e infiniband.bth.se -e infiniband.bth.a -e infiniband.bth.padcnt -e infiniband.aeth.syndrome \
  -e infiniband.aeth.msn -e infiniband.reth.va -e infiniband.reth.r_key -e infiniband.reth.dmalen \
  -e infiniband.immdt -e infiniband.ieth -e infiniband.deth.q_key -e infiniband.deth.srcqp \
  -e infiniband.grh.tclass -e infiniband.grh.flowlabel -e _ws.expert 2>/dev/null \
  | sed 's/  */ /g; s/ *$//' >"$WORK/got"

# protocol vlan opcode destqp psn se a pad syndrome msn va rkey dmalen immdt ieth qkey srcqp tclass flow
cat >"$WORK/want" <<'WANT'
RoCE 0 0x000012 16777214 0 0 0 0 0
RoCE 1 0x000012 16777215 0 0 0 0 0
RoCE 3 0x000012 0 1 1 3 cafef00d 0 0
RoCE 6 0x000012 1 0 0 0 0x00007f0012345000 0x00000a5a 3000 0 0
RoCE 11 0x000012 2 0 1 1 0x00007f0012345000 0x00000a5a 3000 00000007 0 0
RoCE 12 0x000012 3 0 1 0 0x00007f0012345000 0x00000a5a 3000 0 0
RoCE 13 0x000034 3 0 0 0 31 5 0 0
RoCE 17 0x000034 2 0 1 0 46 4 0 0
RoCE 17 0x000034 2 0 1 0 98 4 0 0
RoCE 100 23 0x000012 4 0 1 1 00000b01 96 703710
RoCE 100 0x000020 66 0 1 0 0x0000000080010000 0x00000021 0 0
WANT
if ! diff -u "$WORK/want" "$WORK/got"; then
  echo "tshark-check: Wireshark reads the frames differently (- expected, + tshark)"
  exit 1
fi

tshark -r "$WORK/roce.pcap" -T fields -e infiniband.invariant.crc 2>/dev/null >"$WORK/crc"
python3 - "$WORK/roce.pcap" "$WORK/crc" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
# One line per frame; empty where tshark shows no ICRC field (it shows none behind 802.1Q).
shown = [int(l, 16) if l.strip() else None for l in open(sys.argv[2]).read().splitlines()]
off, n = 24, 0
while off < len(data):
    incl = struct.unpack_from("<I", data, off + 8)[0]
    frame = data[off + 16: off + 16 + incl]
    off += 16 + incl
    eth = 18 if frame[12:14] == b"\x81\x00" else 14
    pkt = frame[eth:]
    m = bytearray(pkt[:52])
    m[0] |= 0x0F; m[1:4] = b"\xff\xff\xff"; m[7] = 0xFF; m[44] = 0xFF
    want = zlib.crc32(b"\xff" * 8 + bytes(m) + pkt[52:-4])
    got = struct.unpack("<I", pkt[-4:])[0]
    if got != want or shown[n] not in (None, int.from_bytes(pkt[-4:], "big")):
        sys.exit(f"tshark-check: frame {n + 1}: ICRC {got:#010x}, Annex A16 gives {want:#010x}, tshark shows {shown[n]}")
    n += 1
print(f"tshark-check: {n} frames OK (Wireshark's dissection and the Annex A16 ICRC)")
PY
