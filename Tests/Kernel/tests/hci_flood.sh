# A notification flood over hci:0 (band --hostile flood at 10,000/s, as the H4 test
# ReplayAgainstHostileParts.notificationFlood): exit 1, every notification the device sent
# counted (received + dropped in the report), at most 100 differences listed per step, the
# rest counted as unlisted, peak RSS bounded; hci0 up again after.
source "$REPO/Tests/Kernel/lib.sh"
adapter_up 0 || fail "hci0 should start up"

RATE=10000
SECONDS_FLOOD=2
band --hostile flood --flood-rate $RATE --flood-seconds $SECONDS_FLOOD
# The flood starts at step 8 (the subscription); the 8 steps after it outlast it by 2 s.
PACE=$(( (SECONDS_FLOOD + 2) * 1000 / 8 ))
t0=$(date +%s%N)
/usr/bin/time -f %M -o "$TDIR/rss" "$BLUESIFT" replay "$CAPTURE" --transport hci:0 --timing fixed:$PACE \
  --window 300 --timeout 3 --no-plugins --report "$TDIR/flood.json" >"$TDIR/flood.out" 2>"$TDIR/flood.err"
RC=$?
took=$(( ($(date +%s%N) - t0) / 1000000 ))
echo "== replay (exit $RC, $took ms)"; head -40 "$TDIR/flood.out"; cat "$TDIR/flood.err"
for _ in $(seq 50); do grep -q NOTIFIED "$KWORK/band.log" && break; sleep 0.1; done
flood=$(grep 'FLOOD sent' "$KWORK/controllers.log" | tail -1)
own=$(grep NOTIFIED "$KWORK/band.log" | tail -1 | awk '{print $NF}')
echo "device: $flood; band: $own"
jq -c '.notifications' "$TDIR/flood.json"
jq -c '[.steps[] | {d: (.differences // [] | length), u: (.unlisted // 0)}]' "$TDIR/flood.json"
cat "$TDIR/rss"
adapter_up 0 || fail "hci0 is not up again after the flood"
band
