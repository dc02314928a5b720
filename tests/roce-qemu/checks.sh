# Sourced by tests/roce-qemu/run.sh once the guests have ended (under set +e): the checks made on
# the host from the guests' GUEST-VALUE lines in $LOG, the emulated adapters' state files
# ($WORK/emu-a, -b) and `ocetool query` documents ($WORK/query-a.json, -b), and the recorded wire
# ($PCAP).
value() { sed -n "s/^GUEST-VALUE $1=//p" "$LOG" | tail -1; }

# devinfo SIDE: the port is active on Ethernet; for ocrdma, the firmware version and the node GUID
# are the adapter's: its running firmware and port 0's MAC as the emulator's state file holds them
# (qemu_state: values that do not pass through the mailbox handlers the driver read), the GUID
# being the MAC's EUI-64 (the first byte's local bit flipped, ff:fe in the middle; ocrdma_get_guid
# in ocrdma_main.c); and `ocetool query`, read on the host before the guests ran, says the same.
devinfo() {
  local s=$1 state fw guid want_fw="" want_guid="" q_fw="" q_mac="" m r=0
  state=$(value "devinfo_${s}_state"); fw=$(value "devinfo_${s}_fw_ver"); guid=$(value "devinfo_${s}_node_guid")
  [ "$(value "devinfo_${s}_rc")" = 0 ] && [[ $state == PORT_ACTIVE* ]] && [ "$(value "devinfo_${s}_link_layer")" = Ethernet ] || r=1
  if [ "$STACK" = ocrdma ]; then
    want_fw=$(qemu_state "$WORK/emu-$s" .runtime.running_version)
    IFS=: read -r -a m <<<"$(qemu_state "$WORK/emu-$s" '.identity.macs[0]')"
    [ "${#m[@]}" = 6 ] && want_guid=$(printf '%02x%s:%sff:fe%s:%s%s' $((0x${m[0]} ^ 2)) "${m[1]}" "${m[2]}" "${m[3]}" "${m[4]}" "${m[5]}")
    q_fw=$(jq -r '.firmware.running' "$WORK/query-$s.json"); q_mac=$(jq -r '.ports[0].mac' "$WORK/query-$s.json")
    [ -n "$want_fw" ] && [ "$fw" = "$want_fw" ] && [ -n "$want_guid" ] && [ "$guid" = "$want_guid" ] &&
      [ "$q_fw" = "$want_fw" ] && [ "$q_mac" = "$(IFS=:; echo "${m[*]}")" ] || r=1
  fi
  host_check "$LOG" "devinfo-$s ibv_devinfo -v: port ${state:-none}, link_layer $(value "devinfo_${s}_link_layer"), fw_ver ${fw:-none}, node_guid ${guid:-none}" $r \
    "expected rc 0, PORT_ACTIVE, Ethernet${want_fw:+, fw_ver $want_fw and node_guid $want_guid (the state file), the same firmware and MAC from ocetool query (it said $q_fw, $q_mac)}; rc $(value "devinfo_${s}_rc"): $(value "devinfo_${s}_out")"
}
devinfo a
devinfo b

# pair ID NAME PATTERN: both ends of NAME exited 0 and the client printed PATTERN (its result).
pair() {
  local id=$1 name=$2 pat=$3 ra rb line r=0
  ra=$(value "${name}_a_rc"); rb=$(value "${name}_b_rc")
  line=$(value "${name}_b_out" | tr '|' '\n' | grep -E "$pat" | head -2 | tr '\n' ' ')
  [ "$ra" = 0 ] && [ "$rb" = 0 ] && [ -n "$line" ] || r=1
  host_check "$LOG" "$id server rc ${ra:-none}, client rc ${rb:-none}: ${line:-no result}" $r \
    "expected both ends rc 0 and a client line matching '$pat'
server (A): $(value "${name}_a_out" | cut -c1-280)
client (B): $(value "${name}_b_out" | cut -c1-280)"
}
PP_RESULT='iters in [0-9.]+ seconds'
pair pingpong-default pp_default "$PP_RESULT"
pair pingpong-inline pp_inline "$PP_RESULT"
pair pingpong-events pp_events "$PP_RESULT"
pair pingpong-64k pp_64k "$PP_RESULT"
# perftest's result row: #bytes #iterations BW peak BW average MsgRate.
BW_RESULT='^ *4096 +300 +[0-9.]+ +[0-9.]+'
pair write-bw write_bw "$BW_RESULT"
pair read-bw read_bw "$BW_RESULT"
# bad_rkey.c's client line names the completion status (ibv_wc_status_str); its server exits 0
# only when its buffer is untouched.
pair bad-rkey bad_rkey 'completion status remote access error \(10\)'

# destroy-under-traffic: B's client was alive, and its port sending, when killed (it ended by the
# SIGKILL: status 128 + 9); the second run passes on both ends.
read -r S1 S2 <<<"$(value dut_b_sent)"
ALIVE=$(value dut_b_alive)
RA=$(value dut_after_a_rc); RB=$(value dut_after_b_rc)
KRC=$(value dut_b_rc)
R=0; [ "$ALIVE" = yes ] && [ "$KRC" = 137 ] && [[ ${S1:-x} =~ ^[0-9]+$ ]] && [[ ${S2:-x} =~ ^[0-9]+$ ]] && [ "$S2" -gt "$S1" ] &&
  [ "$RA" = 0 ] && [ "$RB" = 0 ] || R=1
host_check "$LOG" "destroy-under-traffic client killed mid-run (alive $ALIVE, rc ${KRC:-none}, sent packets ${S1:-?} -> ${S2:-?}); the next run: server rc ${RA:-none}, client rc ${RB:-none}" $R \
  "expected the client alive, its packet counter moving and rc 137 (SIGKILL), then rc 0 on both ends
killed run, server (A): rc $(value dut_a_rc): $(value dut_a_out | cut -c1-200)
killed run, client (B): $(value dut_b_out | cut -c1-200)
second run, server (A): $(value dut_after_a_out | cut -c1-200)
second run, client (B): $(value dut_after_b_out | cut -c1-200)"

# pcap-decodes: tshark's InfiniBand dissector reads the recorded frames (RoCE v1: ethertype
# 0x8915; RoCE v2: UDP port 4791) and names their BTH opcodes.
OPS=$(timeout 120 tshark -r "$PCAP" -Y infiniband -T fields -e infiniband.bth.opcode 2>"$WORK/tshark.err")
N=$(echo "$OPS" | grep -c '[0-9]')
R=0; [ "$N" -gt 0 ] || R=1
host_check "$LOG" "pcap-decodes tshark: $N InfiniBand frames in the wire's pcap; BTH opcodes $(echo "$OPS" | grep '[0-9]' | sort -n | uniq -c | awk '{printf "%s%sx%s", s, $1, $2; s = " "}')" $R \
  "expected InfiniBand frames; pcap $(stat -c %s "$PCAP" 2>/dev/null || echo missing) bytes; tshark: $(timeout 60 tshark -r "$PCAP" 2>&1 | tail -3 | tr '\n' '|'); $(head -2 "$WORK/tshark.err" | tr '\n' ' ')"
