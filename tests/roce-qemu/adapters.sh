# Sourced by the two-guest RoCE harnesses (tests/roce-qemu, tests/nfs-rdma-qemu, bench/roce.sh)
# after tests/qemu/lib.sh: one guest's emulated OCe14000, its two ports' worth of cabling being
# one wire to the peer's adapter; the software pair's NIC; the pair's boot and its end.
#
# roce_adapter [--factory] OCETOOL G PEER [SERVE-ARGS...]: makes the adapter $WORK/emu-G (factory
# state, then the RoCE profile made active on the host: set-profile roce, reset; with --factory it
# stays as it leaves the factory, in the NIC profile, for the guest to switch), saves its `--json query` as
# $WORK/query-G.json, and serves it on $WORK/G.sock cabled to PEER's port by the datagram sockets
# $WORK/oce-G.wire and $WORK/oce-PEER.wire (SERVE-ARGS go to `emulator serve`, e.g. --wire-pcap).
# Sets SERVED_PID (the server) and ROCE_DEV (QEMU's arguments for the device).
roce_adapter() {
  local factory=
  [ "$1" != --factory ] || { factory=1; shift; }
  local ocetool=$1 g=$2 peer=$3
  shift 3
  "$ocetool" --device "emu:$WORK/emu-$g" emulator init >/dev/null
  if [ -z "$factory" ]; then
    "$ocetool" --device "emu:$WORK/emu-$g" --yes set-profile roce >/dev/null
    "$ocetool" --device "emu:$WORK/emu-$g" --yes reset >/dev/null
  fi
  "$ocetool" --device "emu:$WORK/emu-$g" --json query >"$WORK/query-$g.json"
  qemu_serve_at "$WORK/$g.sock" "$WORK/server-$g.log" "$ocetool" --device "emu:$WORK/emu-$g" emulator serve \
    --socket "$WORK/$g.sock" --wire "$WORK/oce-$g.wire" --wire-peer "$WORK/oce-$peer.wire" "$@"
  mapfile -t ROCE_DEV < <(qemu_vfu_args "$WORK/$g.sock")
}

# roce_nic LOCAL REMOTE MAC: QEMU's arguments (one a line) of a virtio-net NIC with MAC on
# `-netdev dgram` from the datagram socket LOCAL to REMOTE: the software pair's link.
roce_nic() {
  printf '%s\n' -netdev "dgram,id=n0,local.type=unix,local.path=$1,remote.type=unix,remote.path=$2" \
    -device "virtio-net-pci,netdev=n0,mac=$3"
}

# roce_pair_start INITRD APPEND [PREFIX]: boots the pair's guests on INITRD, A (10.0.0.1) with
# the QEMU arguments in ROCE_DEV_A and B (10.0.0.2) with ROCE_DEV_B, each with the kernel
# arguments "dp.me=ME dp.peer=PEER APPEND" and a control channel (tests/datapath-qemu/ctl.sh,
# sourced before) named PREFIXa and PREFIXb; their serial logs are $WORK/PREFIXa.log and
# PREFIXb.log (PREFIX "serial-" when none is given, channels then "a" and "b").
roce_pair_start() {
  local initrd=$1 append=$2 prefix=${3:-} g me peer
  for g in a b; do
    me=10.0.0.1 peer=10.0.0.2
    [ "$g" = a ] || { me=10.0.0.2; peer=10.0.0.1; }
    local -n dev=ROCE_DEV_${g^^}
    ctl_channel "$prefix$g"
    qemu_start "$WORK/${prefix:-serial-}$g.log" "$initrd" "dp.me=$me dp.peer=$peer $append" -- "${dev[@]}" "${CTL_ARGS[@]}"
  done
}

# roce_pair_finish [PREFIX]: answers the pair's barriers and requests (ctl_run, the script's
# host_action; its log $WORK/ctl.log) until both guests have ended, sets QRC_A and QRC_B, and
# stops the adapters' servers listed in ROCE_SERVERS.
roce_pair_finish() {
  local log=$WORK/${1:-serial-} pid
  ctl_run >>"$WORK/ctl.log" 2>&1
  qemu_wait "${log}a.log"; QRC_A=$QRC
  qemu_wait "${log}b.log"; QRC_B=$QRC
  for pid in ${ROCE_SERVERS[@]+"${ROCE_SERVERS[@]}"}; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
}
