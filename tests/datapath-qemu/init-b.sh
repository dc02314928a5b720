#!/bin/busybox sh
# Guest B (10.0.0.2) of the be2net pair: answers guest A's checks in step with it, reads its own
# counters where A needs them, and waits to be killed (with its server) after its last check.
. /lib/guest.sh
. /lib/common.sh
be2net_up

offloads off
barrier nooffload
ping_check "ping-nooffload-ba ping 10.0.0.2 -> 10.0.0.1, offloads off" -c 3 -w 30 "$PEER"
barrier nooffload-done
offloads on
barrier default
ping_check "ping-default-ba ping 10.0.0.2 -> 10.0.0.1, be2net's default offloads" -c 3 -w 30 "$PEER"
barrier default-done

barrier counters-before
echo "GUEST-VALUE b_tx_before=$(stat_sum '^txq[0-9]+: tx_pkts$')"
echo "GUEST-VALUE b_rx_before=$(stat_sum '^rxq[0-9]+: rx_pkts$')"
barrier counters-ready
barrier counters-after
echo "GUEST-VALUE b_tx_after=$(stat_sum '^txq[0-9]+: tx_pkts$')"
echo "GUEST-VALUE b_rx_after=$(stat_sum '^rxq[0-9]+: rx_pkts$')"

tcp_listen 5001
barrier tcp-ab
tcp_received tcp_ab
barrier tcp-ab-done
barrier tcp-ba
tcp_send 5002 tcp_ba
barrier tcp-ba-done

echo "GUEST-VALUE b_drops_before=$(stat_sum 'drop')"
barrier flood
barrier flood-done
echo "GUEST-VALUE b_drops_after=$(stat_sum 'drop')"

barrier foreign-1
echo "GUEST-VALUE foreign_rx_1=$(cat /sys/class/net/$IF/statistics/rx_packets)"
barrier foreign-2
echo "GUEST-VALUE foreign_rx_2=$(cat /sys/class/net/$IF/statistics/rx_packets)"
$IP link set "$IF" promisc on
barrier foreign-3
barrier foreign-4
echo "GUEST-VALUE foreign_rx_3=$(cat /sys/class/net/$IF/statistics/rx_packets)"
$IP link set "$IF" promisc off

$IP link add link "$IF" name "$IF.100" type vlan id 100 && $IP addr add "$ME_VLAN/24" dev "$IF.100" &&
  $IP link set "$IF.100" up
barrier vlan
barrier vlan-done
$IP link del "$IF.100"

$IP link set "$IF" mtu 9000
barrier mtu
barrier mtu-done
$IP link set "$IF" mtu 1500

echo 0 >/proc/sys/net/ipv6/conf/"$IF"/disable_ipv6
$IP -6 addr add "$ME6/64" dev "$IF" nodad
barrier ipv6
barrier ipv6-done

dmesg_check dmesg-clean-b
echo "GUEST: waiting to be killed"
barrier kill
await never
finish
