#!/usr/bin/env bash
# End-to-end check of the virtual rig (about 15 s). Ports BASE..BASE+1 (default 9351).
# Prints one line per check and "N passed, N failed"; exit 1 on any failure.
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/start_rig.sh"
PY=$(rig_python) || exit 1
BASE=${1:-9351}
C=$BASE B=$((BASE + 1))
export RIG_LIFETIME=60 RIG_WATCH_PID=$$ RIG_DIR=/tmp/bluesift-rig-selftest-$B
TMP=$(mktemp -d)
trap 'rig_stop_dir "$RIG_DIR"; rm -rf "$TMP"' EXIT
passed=0 failed=0

result() {  # result NAME STATUS
  if [ "$2" -eq 0 ]; then passed=$((passed + 1)); echo "ok   $1"
  else failed=$((failed + 1)); echo "FAIL $1"; fi
}
session() {  # session LOG [record_session options]
  local log=$1; shift
  (cd "$HERE" && timeout 15 "$PY" record_session.py "tcp-client:127.0.0.1:$C" --log-level INFO "$@") >"$log" 2>&1
}
rig() { rig_start "$C" "$B" -- "$@" >/dev/null; }

rig
(cd "$HERE" && timeout 10 python3 raw_h4_smoke.py "127.0.0.1:$C" --scan --cancel) >"$TMP/raw.log" 2>&1
result "raw H4 host: reset, legacy reports, create-connection cancel, unknown-handle disconnect" $?

session "$TMP/s23.log" --mtu 23 --snoop "$TMP/s23.btsnoop"
result "session at MTU 23 gets every reply" $?
if command -v tshark >/dev/null; then
  n=$(tshark -r "$TMP/s23.btsnoop" -Y 'btatt.opcode == 0x1b && btatt.handle == 0x001f' 2>/dev/null | wc -l)
  [ "$n" -eq 9 ]; result "MTU 23: 9 notifications on 0x001f (0x84 reply split in two), got $n" $?
  n=$(tshark -r "$TMP/s23.btsnoop" -Y 'btatt.opcode == 0x52 && btatt.handle == 0x001d' 2>/dev/null | wc -l)
  [ "$n" -eq 5 ]; result "MTU 23: 5 Write Commands on 0x001d (name frame in two), got $n" $?
fi

session "$TMP/s185.log" --mtu 185 --snoop "$TMP/s185.btsnoop"
result "session at MTU 185" $?
if command -v tshark >/dev/null; then
  n=$(tshark -r "$TMP/s185.btsnoop" -Y 'bthci_acl.pb_flag == 0x1' 2>/dev/null | wc -l)
  [ "$n" -ge 1 ]; result "MTU 185: ACL towards the host fragmented ($n continuation fragments)" $?
fi

session "$TMP/public.log" --public
result "central with its public address: LE data routed" $?

timeout --foreground -s KILL 1 bash -c 'cd "$1" && exec "$2" record_session.py "tcp-client:127.0.0.1:$3" --delay 2' _ "$HERE" "$PY" "$C" >/dev/null 2>&1
session "$TMP/again.log"
result "host killed mid-session: links dropped, band advertises again" $?
rig_stop_dir "$RIG_DIR"

rig --regression 03
session "$TMP/regr.log"
grep -q "2A26 = b'1.4.3'" "$TMP/regr.log" && grep -q 'reply a506830a002a' "$TMP/regr.log"
result "--regression 03: firmware 1.4.3, sport_count 10 instead of 9" $?
rig_stop_dir "$RIG_DIR"

rig --vanish-after 2
start=$SECONDS; session "$TMP/vanish.log"; status=$?
[ $status -eq 1 ] && grep -q 'reason 0x08' "$TMP/vanish.log" && [ $((SECONDS - start)) -le 4 ]
result "--vanish-after 2: central sees disconnection 0x08 at once" $?
rig_stop_dir "$RIG_DIR"

rig --silent-after 3
session "$TMP/silent.log"; status=$?
[ $status -eq 1 ] && grep -q 'reply a50683' "$TMP/silent.log" && ! grep -q 'reply a51e84' "$TMP/silent.log"
result "--silent-after 3: answers stop after the third write" $?
rig_stop_dir "$RIG_DIR"

(cd "$HERE" && "$PY" band_peripheral.py --layout moved --dump-gatt "$TMP/moved.json") &&
  "$PY" - "$TMP/moved.json" <<'EOF'
import json, sys
chars = {c['uuid']: c for d in json.load(open(sys.argv[1]))['devices'] for s in d['services'] for c in s['characteristics']}
assert chars['36f5']['value_handle'] == 35 and chars['36f6']['value_handle'] == 37, chars
assert chars['36f6']['descriptors'][0]['handle'] == 38
EOF
result "--layout moved: 0x36F5 at 35, 0x36F6 at 37, CCCD at 38" $?

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
