#!/bin/busybox sh
# Guest B again (10.0.0.2), booted on the restarted server: brings be2net up, tells A, answers
# A's pings and its flood, and checks its own kernel log at the end.
. /lib/guest.sh
. /lib/common.sh
be2net_up
barrier b2-up
barrier end
dmesg_check dmesg-clean-b2
finish
