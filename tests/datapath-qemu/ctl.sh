# The host's side of the guests' control channels (sourced by tests/datapath-qemu/run.sh and
# bench/datapath.sh, after tests/qemu/lib.sh). Each guest's second serial port is a channel: what
# the guest writes goes to $CTL/NAME.req, which the host reads line by line; what the host answers
# goes into the FIFO $CTL/NAME.in, the port's input. The guest's side is common.sh (barrier, ask).
#   ctl_channel NAME     creates the channel; its QEMU arguments in $CTL_ARGS (the port is ttyS1
#                        when they follow qemu_start's own console)
#   ctl_run              answers every channel until every guest qemu_start started has ended:
#                        "sync ID N" is answered "go ID" to each guest that said it once N have;
#                        "ask ACTION" runs host_action ACTION (the script defines it) and answers
#                        "go ACTION RC"
# The FIFOs are held open by this shell, read and write: QEMU's open of the input and the host's
# writes never block, whether or not the other end is there yet.
CTL=${CTL:-$WORK/ctl}
mkdir -p "$CTL"
declare -A CTL_DONE=() SYNC_WHO=()

ctl_channel() {
  local fd
  mkfifo "$CTL/$1.in"
  : >"$CTL/$1.req"
  exec {fd}<>"$CTL/$1.in"
  CTL_DONE[$1]=0
  CTL_ARGS=(-chardev "file,id=ctl,path=$CTL/$1.req,input-path=$CTL/$1.in" -serial chardev:ctl)
}

# One pass over every channel's new complete lines.
ctl_step() {
  local name n line id want who rc
  for name in "${!CTL_DONE[@]}"; do
    n=$(tr -cd '\n' <"$CTL/$name.req" | wc -c)
    while [ "${CTL_DONE[$name]}" -lt "$n" ]; do
      CTL_DONE[$name]=$((CTL_DONE[$name] + 1))
      line=$(sed -n "${CTL_DONE[$name]}p" "$CTL/$name.req" | tr -d '\r')
      echo "$(date +%T) $name: $line"
      case $line in
        "sync "*)
          read -r _ id want <<<"$line"
          SYNC_WHO[$id]="${SYNC_WHO[$id]:-} $name"
          if [ "$(echo ${SYNC_WHO[$id]} | wc -w)" -ge "${want:-2}" ]; then
            for who in ${SYNC_WHO[$id]}; do echo "go $id" >"$CTL/$who.in"; done
          fi ;;
        "ask "*)
          id=${line#ask }
          rc=0; host_action "$id" || rc=$?
          echo "go $id $rc" >"$CTL/$name.in" ;;
      esac
    done
  done
}

ctl_run() {
  local log alive
  while :; do
    ctl_step
    alive=0
    for log in "${!QEMU_GUEST_JOBS[@]}"; do
      if kill -0 "${QEMU_GUEST_JOBS[$log]}" 2>/dev/null; then alive=1; fi
    done
    [ "$alive" = 1 ] || break
    sleep 0.2
  done
  ctl_step
}
