# fuzz over hci:0 with the adapter up: a short run against the plain band completes (each
# variant on a fresh connection through the kernel's user channel), writes its summary and
# findings.json, and leaves hci0 up.
source "$REPO/Tests/Kernel/lib.sh"
band
adapter_up 0 || fail "hci0 should start up"

t0=$SECONDS
"$BLUESIFT" fuzz "$CAPTURE" --transport hci:0 --characteristic 36f5 --steps 4 --seed 1 --rate 0 \
  --timeout 3 --window 150 --reruns 2 -o "$TDIR/out" >"$TDIR/fuzz.out" 2>"$TDIR/fuzz.err"
RC=$?
echo "== fuzz --transport hci:0 --steps 4 (exit $RC, $((SECONDS - t0)) s)"; show "$TDIR/fuzz.out" "$TDIR/fuzz.err"
adapter_up 0 || fail "hci0 is not up again after the fuzz run"
echo "ok: hci0 up again"
expect_eq "exit" 0 "$RC"
expect_eq "summary" "fuzz: band_mtu23.btsnoop, seed 1: 4 variants (first round 100), 7 connections, 0 findings" "$(IFS= read -r l <"$TDIR/fuzz.out"; echo "$l")"
expect_grep "findings.json: variants" '^  "variants" : 4$' "$TDIR/out/findings.json"
expect_grep "findings.json: connections" '^  "connections" : 7,$' "$TDIR/out/findings.json"
expect_grep "findings.json: not interrupted" '^  "interrupted" : false,$' "$TDIR/out/findings.json"
expect_grep "progress: done" 'fuzz: variant 4/4, 0 findings, 7 connections, .* (done)$' "$TDIR/fuzz.err"
