#!/usr/bin/env bash
# Starts / stops the virtual rig: two (or more) virtual controllers on one link and the band.
#
#   start_rig.sh start CENTRAL_PORT BAND_PORT [-- band_peripheral options]
#       prints RIG_CONTROLLERS_PID=.. RIG_BAND_PID=.. RIG_DIR=.. (eval-able) once both are ready
#   start_rig.sh stop BAND_PORT        (or: RIG_DIR=... start_rig.sh stop)
#   RIG_CONTROLLER_OPTS="--reject 0x200d" passes options to controllers.py
#
# The host under test attaches to 127.0.0.1:CENTRAL_PORT (H4 over TCP); the band is attached
# to BAND_PORT. Readiness is read from the `READY` lines the processes print, never guessed.
# Both processes exit on their own after RIG_LIFETIME seconds (default 600), or when the process
# RIG_WATCH_PID names is gone, so a crashed test leaves nothing behind for long.
# May also be sourced: functions rig_start and rig_stop.
set -u

RIG_HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
RIG_REPO="$(cd "$RIG_HERE/../.." && pwd)"

rig_python() {
  if [ -x "$RIG_REPO/.venv/bin/python" ]; then echo "$RIG_REPO/.venv/bin/python"
  elif python3 -c 'import bumble' 2>/dev/null; then echo python3
  else echo "start_rig: no Python with bumble; run 'make venv'" >&2; return 1; fi
}

# rig_wait_ready LOGFILE PID SECONDS: waits for a READY line; fails if the process dies first.
rig_wait_ready() {
  local log=$1 pid=$2 deadline=$((SECONDS + $3))
  while [ $SECONDS -le $deadline ]; do
    grep -q '^READY' "$log" 2>/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || { echo "start_rig: process $pid died:" >&2; tail -5 "$log" >&2; return 1; }
    sleep 0.05
  done
  echo "start_rig: $log not ready after $3 s" >&2
  return 1
}

rig_start() {
  local central=$1 band=$2; shift 2
  [ "${1:-}" = "--" ] && shift
  local py; py=$(rig_python) || return 1
  local dir=${RIG_DIR:-/tmp/bluesift-rig-$band}
  local life=${RIG_LIFETIME:-600} watch=()
  [ -n "${RIG_WATCH_PID:-}" ] && watch=(--watch-pid "$RIG_WATCH_PID")
  rig_stop_dir "$dir" 2>/dev/null
  mkdir -p "$dir"
  (cd "$RIG_HERE" && exec "$py" controllers.py "127.0.0.1:$central" "127.0.0.1:$band" \
      --timeout "$life" "${watch[@]}" ${RIG_CONTROLLER_OPTS:-} </dev/null >"$dir/controllers.log" 2>&1) &
  local cpid=$!
  echo "$cpid" >"$dir/controllers.pid"
  rig_wait_ready "$dir/controllers.log" "$cpid" 10 || { rig_stop_dir "$dir"; return 1; }
  (cd "$RIG_HERE" && exec "$py" band_peripheral.py "tcp-client:127.0.0.1:$band" \
      --timeout "$life" "${watch[@]}" "$@" </dev/null >"$dir/band.log" 2>&1) &
  local bpid=$!
  echo "$bpid" >"$dir/band.pid"
  rig_wait_ready "$dir/band.log" "$bpid" 10 || { rig_stop_dir "$dir"; return 1; }
  echo "RIG_CONTROLLERS_PID=$cpid RIG_BAND_PID=$bpid RIG_DIR=$dir"
}

# Stops the processes whose PIDs the state directory holds: TERM, then KILL after 2 s.
rig_stop_dir() {
  local dir=$1 f pid
  for f in "$dir/band.pid" "$dir/controllers.pid"; do
    [ -f "$f" ] || continue
    pid=$(cat "$f"); rm -f "$f"
    kill -TERM "$pid" 2>/dev/null || continue
    for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  return 0
}

rig_stop() {
  rig_stop_dir "${RIG_DIR:-/tmp/bluesift-rig-${1:?usage: stop BAND_PORT}}"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  case "${1:-}" in
    start) shift; [ $# -ge 2 ] || { echo "usage: $0 start CENTRAL_PORT BAND_PORT [-- band options]" >&2; exit 2; }
           rig_start "$@" ;;
    stop)  shift; rig_stop "$@" ;;
    *) echo "usage: $0 start CENTRAL_PORT BAND_PORT [-- band options] | stop BAND_PORT" >&2; exit 2 ;;
  esac
fi
