# Sourced by the two-guest RoCE harnesses (tests/roce-qemu, tests/nfs-rdma-qemu, bench/roce.sh)
# after tests/qemu/lib.sh: one guest's emulated OCe14000, its two ports' worth of cabling being
# one wire to the peer's adapter.
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
