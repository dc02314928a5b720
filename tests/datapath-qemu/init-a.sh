#!/bin/busybox sh
# Guest A (10.0.0.1) of the be2net pair: drives every check, in step with guest B through the
# host's barriers; then asks the host to kill B's server, to restart it (B boots again as B2), and
# unloads be2net while it sends to B2.
. /lib/guest.sh
. /lib/common.sh
be2net_up

# Offloads off: checksums, scatter-gather, segmentation all done by the kernel.
offloads off
barrier nooffload
ping_check "ping-nooffload-ab ping 10.0.0.1 -> 10.0.0.2, offloads off" -c 3 -w 30 "$PEER"
barrier nooffload-done
offloads on
echo "GUEST-VALUE offloads=$($ETHTOOL -k "$IF" | grep -E '^(tx-checksumming|scatter-gather|tcp-segmentation-offload|rx-checksumming):' | tr '\n' ' ')"
barrier default
ping_check "ping-default-ab ping 10.0.0.1 -> 10.0.0.2, be2net's default offloads" -c 3 -w 30 "$PEER"
barrier default-done

# Counters: the frames A's queues sent are the frames B's queues received, and back.
barrier counters-before
echo "GUEST-VALUE a_tx_before=$(stat_sum '^txq[0-9]+: tx_pkts$')"
echo "GUEST-VALUE a_rx_before=$(stat_sum '^rxq[0-9]+: rx_pkts$')"
# Both sides counted before the first ping leaves: else it may reach B before B counts.
barrier counters-ready
$PING -q -c 200 -i 0.01 -w 60 "$PEER" | grep transmitted | sed 's/^/GUEST-VALUE counters_ping=/'
sleep 1
barrier counters-after
$ETHTOOL -S "$IF" | grep -E 'xq0: (rx|tx)_pkts' | sed 's/^ */GUEST-ETHTOOL-S /'
echo "GUEST-VALUE a_tx_after=$(stat_sum '^txq[0-9]+: tx_pkts$')"
echo "GUEST-VALUE a_rx_after=$(stat_sum '^rxq[0-9]+: rx_pkts$')"

# 16 MiB each way over TCP, with TSO and checksum offload on.
barrier tcp-ab
tcp_send 5001 tcp_ab
barrier tcp-ab-done
tcp_listen 5002
barrier tcp-ba
tcp_received tcp_ba
barrier tcp-ba-done

# A flood: sent = received, and no drop counted on either side.
echo "GUEST-VALUE a_drops_before=$(stat_sum 'drop')"
barrier flood
OUT=$($PING -f -q -c 2000 -s 1000 -w 120 "$PEER" 2>&1); rc=$?
echo "GUEST-VALUE flood=$(echo "$OUT" | grep transmitted)"
sleep 1
barrier flood-done
echo "GUEST-VALUE a_drops_after=$(stat_sum 'drop')"
echo "GUEST-VALUE flood_rc=$rc"

# A frame to a foreign MAC: B's filter refuses it until B is promiscuous.
$IP neigh replace "$PEER" lladdr 02:00:00:00:00:99 nud permanent dev "$IF"
barrier foreign-1
$PING -q -c 20 -i 0.05 -w 5 "$PEER" >/dev/null 2>&1
barrier foreign-2
barrier foreign-3
$PING -q -c 20 -i 0.05 -w 5 "$PEER" >/dev/null 2>&1
barrier foreign-4
$IP neigh del "$PEER" dev "$IF"

# 802.1Q: a VLAN interface on both ends.
$IP link add link "$IF" name "$IF.100" type vlan id 100 && $IP addr add "$ME_VLAN/24" dev "$IF.100" &&
  $IP link set "$IF.100" up
barrier vlan
ping_check "vlan ping over VLAN 100 ($ME_VLAN -> $PEER_VLAN)" -c 3 -w 30 "$PEER_VLAN"
barrier vlan-done
$IP link del "$IF.100"

# Jumbo frames: MTU 9000 on both ends, 8000 bytes with DF set (no fragmentation).
$IP link set "$IF" mtu 9000
barrier mtu
ping_check "mtu9000 ping -M do -s 8000 at MTU 9000" -M do -s 8000 -c 3 -w 30 "$PEER"
barrier mtu-done
$IP link set "$IF" mtu 1500

# IPv6: addresses without duplicate detection, neighbours through solicited-node multicast.
echo 0 >/proc/sys/net/ipv6/conf/"$IF"/disable_ipv6
$IP -6 addr add "$ME6/64" dev "$IF" nodad
barrier ipv6
ping_check "ipv6 ping $ME6 -> $PEER6" -6 -c 3 -w 30 "$PEER6"
barrier ipv6-done
echo 1 >/proc/sys/net/ipv6/conf/"$IF"/disable_ipv6

# The peer's server dies: carrier lost; it comes back (B boots again as B2): carrier back, ping.
barrier kill
BEFORE=$(carrier)
ask kill-peer
wait_for 30 carrier_is 0; rc=$?
LOST=$(carrier)
[ "$BEFORE" = 1 ] && [ "$rc" = 0 ]
check "carrier-lost B's server killed: carrier $BEFORE -> $LOST" $? \
  "expected carrier 1 then 0 within 30 s of the kill; before $BEFORE, after $LOST"
ask restart-peer
wait_for 60 carrier_is 1; rc=$?
barrier b2-up
OUT=$($PING -c 3 -w 60 "$PEER" 2>&1); prc=$?
[ "$LOST" = 0 ] && [ "$rc" = 0 ] && [ "$prc" = 0 ]
check "carrier-back B's server restarted: carrier $LOST -> $(carrier), ping $(echo "$OUT" | grep transmitted)" $? \
  "expected carrier 0 -> 1 within 60 s and replies; carrier lost seen: $LOST, back: rc $rc ($(carrier)), ping rc $prc: $(echo "$OUT" | tail -2 | tr '\n' '|')"

# Unload be2net while it sends: clean (rmmod succeeds, the netdev goes, no error line).
$PING -f -w 20 "$PEER" >/dev/null 2>&1 &
FLOOD=$!
sleep 2
rmmod be2net; rc=$?
kill "$FLOOD" 2>/dev/null; wait "$FLOOD" 2>/dev/null
GONE=1; [ -e "/sys/class/net/$IF" ] && GONE=0
BAD=$(bad_lines)
[ "$rc" = 0 ] && [ "$GONE" = 1 ] && [ -z "$BAD" ]
check "rmmod-traffic rmmod be2net during a ping flood: rc $rc, netdev gone $GONE" $? \
  "expected rc 0, the netdev gone, no error line; rc $rc, gone $GONE, lines: ${BAD:-none}"
dmesg_check dmesg-clean-a
barrier end
finish
