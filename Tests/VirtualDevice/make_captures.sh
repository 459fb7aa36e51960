#!/usr/bin/env bash
# Regenerates Captures/band_*.btsnoop and band_*.gatt.json with the virtual rig.
#   Tests/VirtualDevice/make_captures.sh [BASE_PORT]     (default 9301; uses BASE_PORT..+5)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
OUT="$REPO/Captures"
BASE=${1:-9301}
source "$HERE/start_rig.sh"
PY=$(rig_python)
export RIG_LIFETIME=60 RIG_WATCH_PID=$$

# name mtu band-options...
captures=(
  "band_mtu23 23"
  "band_mtu185 185"
  "band_moved_mtu517 517 --layout moved"
)

port=$BASE
for spec in "${captures[@]}"; do
  read -r name mtu opts <<<"$spec"
  central=$port band=$((port + 1)); port=$((port + 2))
  export RIG_DIR="/tmp/bluesift-rig-captures-$band"
  # shellcheck disable=SC2086
  (cd "$HERE" && "$PY" band_peripheral.py ${opts:-} --dump-gatt "$OUT/$name.gatt.json")
  # shellcheck disable=SC2086
  rig_start "$central" "$band" -- ${opts:-} >/dev/null
  trap 'rig_stop_dir "$RIG_DIR"' EXIT
  rm -f "$OUT/$name.btsnoop"
  status=0
  (cd "$HERE" && timeout 15 "$PY" record_session.py "tcp-client:127.0.0.1:$central" \
      --mtu "$mtu" --snoop "$OUT/$name.btsnoop" --log-level WARNING) || status=$?
  rig_stop_dir "$RIG_DIR"
  [ $status -eq 0 ] || { echo "recording $name failed ($status); logs in $RIG_DIR" >&2; exit 1; }
  records=$( (tshark -r "$OUT/$name.btsnoop" 2>/dev/null || true) | wc -l)
  echo "$name: $(stat -c %s "$OUT/$name.btsnoop") bytes, $records records (mtu $mtu${opts:+, $opts})"
done
