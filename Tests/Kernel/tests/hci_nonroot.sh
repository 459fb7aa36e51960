# Without capabilities: one line saying what is missing and how to grant it, exit 2; a missing
# adapter: one line listing those there are, exit 2.
source "$REPO/Tests/Kernel/lib.sh"
asnobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all --bounding-set=-all "$@"; }
# nobody's copies (run.sh: a clone in a private folder is out of nobody's reach).
asnobody "$PUBLIC/bluesift" replay "$PUBLIC/band_mtu23.btsnoop" --transport hci:0 --timing asap >"$TDIR/replay.out" 2>"$TDIR/replay.err"
rc=$?
show "$TDIR/replay.err"
expect_eq "replay exit without CAP_NET_ADMIN" 2 "$rc"
expect_eq "replay stderr lines" 1 "$(nlines "$TDIR/replay.err")"
expect_grep "names the capability" "CAP_NET_ADMIN" "$TDIR/replay.err"
expect_grep "says how to grant it" "setcap cap_net_admin,cap_net_raw+ep" "$TDIR/replay.err"
adapter_up 0 || fail "hci0 should be untouched"
# A missing adapter: the user's to name, as a capability is the user's to grant (exit 2).
"$BLUESIFT" replay "$CAPTURE" --transport hci:7 --timing asap >"$TDIR/missing.out" 2>"$TDIR/missing.err"
rc=$?
show "$TDIR/missing.err"
expect_eq "replay exit for a missing adapter" 2 "$rc"
expect_eq "missing adapter stderr" "bluesift: replay: hci:7: no Bluetooth adapter hci7: adapters here: hci0 (up), hci1 (up)" "$(<"$TDIR/missing.err")"
asnobody "$PUBLIC/bluesift" capture -w "$TDIR/c.btsnoop" >"$TDIR/capture.out" 2>"$TDIR/capture.err"
rc=$?
show "$TDIR/capture.err"
expect_eq "capture exit without CAP_NET_RAW" 2 "$rc"
expect_eq "capture stderr lines" 1 "$(nlines "$TDIR/capture.err")"
expect_grep "names the capability" "CAP_NET_RAW" "$TDIR/capture.err"
