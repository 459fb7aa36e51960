# replay over l2cap:0 (the kernel's LE L2CAP socket on the ATT channel): the adapter stays up
# and in BlueZ's hands, the step results are those of hci:0, the report names the transport.
source "$REPO/Tests/Kernel/lib.sh"
# First the band hci_replay (before this test in run.sh's order) leaves running.
band --regression 03
replay l2cap-regression --transport l2cap:0
expect_eq "exit over l2cap:0, regressed band" 1 "$RC"
expect_grep "regressed field" "sport_count_reply.count expected 9, got 10" "$TDIR/l2cap-regression.out"

band
# hci_replay's run against the same band, else one here.
if [ -f "$KWORK/t-hci_replay/same.out" ]; then show "$KWORK/t-hci_replay/same.out" >"$TDIR/hci.out"; else
  replay hci --transport hci:0
  expect_eq "exit over hci:0" 0 "$RC"
fi
replay l2cap --transport l2cap:0
expect_eq "exit over l2cap:0" 0 "$RC"
has "$TDIR/l2cap.err" "powered it down" && fail "l2cap:0 took the adapter over"
steps() { local l lines; mapfile -t lines <"$1"; for l in "${lines[@]}"; do [[ $l == "step "* ]] && printf '%s\n' "$l"; done; }
steps "$TDIR/hci.out" >"$TDIR/hci.steps"
steps "$TDIR/l2cap.out" >"$TDIR/l2cap.steps"
cmp "$TDIR/hci.steps" "$TDIR/l2cap.steps" || { diff "$TDIR/hci.steps" "$TDIR/l2cap.steps"; fail "step results differ between hci:0 and l2cap:0"; }
echo "ok: the same $(nlines "$TDIR/l2cap.steps") step lines over hci:0 and l2cap:0"
expect_grep "report names the transport" '"transport" : "l2cap:0"' "$TDIR/l2cap.json"
adapter_up 0 || fail "hci0 should have stayed up"

# Security over l2cap:N is the kernel's SMP: it asks user space to confirm Just Works (mgmt
# User Confirmation Request), which bluetoothd's agent answers; mgmt_agent.py plays that part.
# It starts while the host restarts the band (Python takes seconds to start under TCG).
python3 "$REPO/Tests/Kernel/mgmt_agent.py" >"$TDIR/agent.log" 2>&1 &
agent=$!
band --security encryption
for _ in {1..100}; do has "$TDIR/agent.log" READY && break; nap 0.05; done
replay l2cap-secure --transport l2cap:0 --pair always
kill $agent; wait $agent 2>/dev/null
show "$TDIR/agent.log"
expect_eq "exit over l2cap:0, kernel pairing" 0 "$RC"
expect_grep "kernel security" "^security: level 2 (encrypted unauthenticated), paired, kernel, key size 16" "$TDIR/l2cap-secure.out"
expect_grep "all matched" "16 matched, 0 mismatched" "$TDIR/l2cap-secure.out"
expect_grep "the agent confirmed Just Works" "^confirmed hci0 c0:ba:0d:00:00:01 hint 1" "$TDIR/agent.log"
