# emulate over hci:0 (the kernel's HCI user channel; bluesift powers the adapter down itself and
# up again after): the recorded band is served to a replay over hci:1, whose every step matches
# as it does against the band itself; the live band steps aside from the recorded address first.
source "$REPO/Tests/Kernel/lib.sh"
adapter_up 0 || fail "hci0 should start up"
band --address C0:BA:0D:00:00:99

t0=$SECONDS
"$BLUESIFT" emulate "$CAPTURE" --transport hci:0 --sessions 1 --timing asap --report "$TDIR/emulate.json" \
  >"$TDIR/emulate.out" 2>"$TDIR/emulate.err" &
EPID=$!
for _ in {1..600}; do has "$TDIR/emulate.err" "emulate: advertising as" && break; nap 0.05; done
expect_grep "take-over line" "hci0 is up: powered it down for the run" "$TDIR/emulate.err"
expect_grep "advertising" "advertising as c0:ba:0d:00:00:01 (random) \"bluesift-band\"" "$TDIR/emulate.err"

# Two bluesift processes under TCG: a notification can take longer than lib.sh's 150 ms window.
replay through-emulation --transport hci:1 --window 1000
for _ in {1..200}; do kill -0 $EPID 2>/dev/null || break; nap 0.05; done
kill -0 $EPID 2>/dev/null && { kill -TERM $EPID; echo "emulate still running after the replay: stopped"; }
wait $EPID; ERC=$?
echo "== emulate (exit $ERC, $((SECONDS - t0)) s)"; show "$TDIR/emulate.out" "$TDIR/emulate.err"
expect_eq "replay exit" 0 "$RC"
expect_grep "replay summary" "summary: 16 steps, 16 matched, 0 mismatched, 0 missing, 0 unexpected" "$TDIR/through-emulation.out"
expect_eq "emulate exit" 0 "$ERC"
expect_grep "emulate summary" "summary: 16 requests, 16 answered as recorded, 0 without a recorded answer, 9 notifications sent" "$TDIR/emulate.out"
adapter_up 0 || fail "hci0 is not up again after the emulation"
echo "ok: hci0 up again"
