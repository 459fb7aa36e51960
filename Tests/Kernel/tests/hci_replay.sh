# replay over hci:0 with the adapter up: bluesift powers it down itself (one line), the steps
# match the recording as over H4 (same, moved-handle, regression bands), and hci0 is up after.
source "$REPO/Tests/Kernel/lib.sh"
band
adapter_up 0 || fail "hci0 should start up"

replay same --transport hci:0
expect_eq "exit, same band" 0 "$RC"
expect_eq "take-over line" "bluesift: replay: hci0 is up: powered it down for the run (it is powered up again afterwards)" "$(IFS= read -r l <"$TDIR/same.err"; echo "$l")"
expect_grep "summary" "summary: 16 steps, 16 matched, 0 mismatched, 0 missing, 0 unexpected" "$TDIR/same.out"
adapter_up 0 || fail "hci0 is not up again after the replay"
echo "ok: hci0 up again"

band --layout moved
replay moved --transport hci:0
expect_eq "exit, moved band" 0 "$RC"
expect_grep "remapped" "^remapped " "$TDIR/moved.out"
expect_grep "moved summary" "16 matched, 0 mismatched" "$TDIR/moved.out"
adapter_up 0 || fail "hci0 is not up again after the moved replay"

# Last: l2cap_replay, next in run.sh's order, starts with this band.
band --regression 03
replay regression --transport hci:0
expect_eq "exit, regressed band" 1 "$RC"
expect_grep "regressed field" "sport_count_reply.count expected 9, got 10" "$TDIR/regression.out"
expect_grep "regressed version" "expected 312e342e32, got 312e342e33" "$TDIR/regression.out"
adapter_up 0 || fail "hci0 is not up again after the regression replay"
