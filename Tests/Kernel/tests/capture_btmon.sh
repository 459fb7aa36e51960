# capture during a replay over hci:0 writes what btmon -w writes beside it (the two files'
# JSON Lines equal, from the first HCI packet on: before it each socket gets its own replay of
# the adapters, stamped when it bound), and its live text equals dump of its own file.
source "$REPO/Tests/Kernel/lib.sh"
band
"$BLUESIFT" capture -w "$TDIR/capture.btsnoop" >"$TDIR/live.txt" 2>"$TDIR/capture.err" &
cpid=$!
btmon -w "$TDIR/btmon.btsnoop" >/dev/null 2>&1 &
bpid=$!
for _ in {1..200}; do has "$TDIR/capture.err" "reading the monitor channel" && [ -s "$TDIR/btmon.btsnoop" ] && break; nap 0.05; done
nap 0.5
replay during --transport hci:0
expect_eq "replay exit" 0 "$RC"
nap 0.5
kill -INT $cpid $bpid
wait $cpid; crc=$?
wait $bpid
show "$TDIR/capture.err"
expect_eq "capture exit after SIGINT" 0 "$crc"
expect_grep "stop line" "^bluesift: capture: stopped: [0-9]* records, recorded [0-9]* in $TDIR/capture.btsnoop" "$TDIR/capture.err"
"$BLUESIFT" dump --format jsonl "$TDIR/capture.btsnoop" >"$TDIR/capture.jsonl" || fail "dump of the capture failed"
"$BLUESIFT" dump --format jsonl "$TDIR/btmon.btsnoop" >"$TDIR/btmon.jsonl" || fail "dump of btmon's file failed"
python3 - "$TDIR/capture.jsonl" "$TDIR/btmon.jsonl" <<'PY' || fail "the two recordings differ"
import json, sys
def load(path):
    recs = [json.loads(l) for l in open(path)]
    first = next(i for i, r in enumerate(recs) if r.get("kind") in ("command", "event", "acl"))
    for r in recs: r.pop("frame", None)
    return recs[first:]
a, b = load(sys.argv[1]), load(sys.argv[2])
print(f"capture: {len(a)} records from the first HCI packet, btmon: {len(b)}")
n = min(len(a), len(b))
for i in range(n):
    if a[i] != b[i]:
        print("first difference at", i, "\n  capture:", a[i], "\n  btmon:  ", b[i]); sys.exit(1)
if len(a) != len(b):
    print("one has more records:", (a if len(a) > n else b)[n:][:3]); sys.exit(1)
hci = sum(1 for r in a if r.get("kind") in ("command", "event", "acl"))
print(f"equal: {len(a)} records, {hci} HCI packets")
PY
"$BLUESIFT" dump "$TDIR/capture.btsnoop" >"$TDIR/dump.txt"
cmp "$TDIR/live.txt" "$TDIR/dump.txt" || { diff "$TDIR/live.txt" "$TDIR/dump.txt" | head; fail "live text differs from dump of the file"; }
echo "ok: live text = dump of the file ($(nlines "$TDIR/live.txt") lines)"
# What the terminal showed (docs/transport.md, README): the start, the take-over, the link.
head -9 "$TDIR/live.txt"
grep -m1 -B1 -A3 "Close Index" "$TDIR/live.txt"
grep -m12 -E "LE Create Connection|LE Connection Complete|ATT Exchange MTU|ATT Read (Request|Response)" "$TDIR/live.txt"
