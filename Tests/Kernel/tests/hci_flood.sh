# A notification flood over hci:0, as ReplayAgainstHostileParts.notificationFlood over H4
# (Tests/BluesiftE2ETests/ReplayHostileTests.swift): the band with --hostile flood at
# 10,000 notifications/s; exit 1, every notification the device sent counted (received +
# dropped in the report), at most 100 differences listed per step and the rest counted as
# unlisted, peak RSS bounded (GNU time); hci0 up again after. The kernel queues the flood in
# the user channel socket's receive buffer: bluesift sets it to 8 MB (16 MiB as the kernel
# reports it) and counts what the kernel drops past it into `dropped` (`kernel_dropped`).
# With the default buffer (212,992 bytes, ~100 ACL packets) a whole harness run lost 125 of
# 1,009 silently.
#
# 0.1 s of flood (1,000 notifications, ten times the per-step listing limit) where the H4
# test floods 10 s: the rate is the H4 test's, the duration is what this rig carries within
# the harness's 3 minutes (with the default buffer, 0.5 s lost step 9's Write Response: exit
# 3). All 1,009 were read by the end of step 9, 482 ms after it was sent, so 250 ms between
# steps is enough.
source "$REPO/Tests/Kernel/lib.sh"
adapter_up 0 || fail "hci0 should start up"
[ -x /usr/bin/time ] || skip "no /usr/bin/time (GNU time) for the peak RSS"

RATE=10000
FLOOD_MS=100
SENT=$((RATE * FLOOD_MS / 1000))
# last_line FILE PATTERN: the last line matching (a glob) in LINE, how many in COUNT; a last
# line without its newline yet is not read. Read by bash itself (every process started costs
# a few tenths of a second under TCG), at once (a `read` a line costs a 9p round trip each).
last_line() {
  LINE="" COUNT=0
  local l lines
  mapfile lines <"$1"
  for l in "${lines[@]}"; do
    [[ $l == *$'\n' ]] || continue
    l=${l%$'\n'}
    [[ $l == $2 ]] && { LINE=$l; COUNT=$((COUNT + 1)); }
  done
}
band --hostile flood --flood-rate $RATE --flood-seconds 0.1
last_line "$KWORK/controllers.log" "*FLOOD sent*"; floods=$COUNT
t0=$SECONDS
# The flood starts at step 8 (the subscription).
/usr/bin/time -f %M -o "$TDIR/rss" "$BLUESIFT" replay "$CAPTURE" --transport hci:0 --timing fixed:250 \
  --window 300 --timeout 3 --no-plugins --report "$TDIR/flood.json" >"$TDIR/flood.out" 2>"$TDIR/flood.err"
RC=$?
took=$((SECONDS - t0))
echo "== replay (exit $RC, $took s)"; grep -v "unexpected notification" "$TDIR/flood.out"; show "$TDIR/flood.err"
expect_eq "exit" 1 "$RC"
[ "$took" -lt 45 ] || fail "the replay took $took s"
echo "ok: replay in $took s"
adapter_up 0 || fail "hci0 is not up again after the flood"
echo "ok: hci0 up again"

# The device's counts: the controller's FLOOD line once the flood ends, the band's own
# notifications (NOTIFIED) once the link is gone.
for _ in {1..50}; do
  last_line "$KWORK/band.log" "*NOTIFIED*"; own=${LINE##* }
  last_line "$KWORK/controllers.log" "*FLOOD sent*"
  [ "$COUNT" -gt "$floods" ] && [ -n "$own" ] && break
  nap 0.1
done
# "FLOOD sent 1000 notifications in 0.10 s (9684/s), asked 10000/s for 0.1 s"
flood=$LINE
echo "device: ${flood#*WARNING }; band's own notifications: $own"
[[ $flood =~ FLOOD\ sent\ ([0-9]+)\ notifications\ in\ ([0-9.]+)\ s ]] || fail "no FLOOD line: '$flood'"
sent=${BASH_REMATCH[1]} secs=${BASH_REMATCH[2]}
expect_eq "notifications the controller sent" "$SENT" "$sent"
# The rate reached: the whole flood within its duration and half a second.
awk -v s="$secs" -v d="$FLOOD_MS" 'BEGIN { exit !(s > 0 && s < d / 1000 + 0.5) }' || fail "flood took $secs s"
echo "ok: flood in $secs s"
[ "${own:-0}" -gt 0 ] || fail "the band's own notifications: '$own'"

R=$TDIR/flood.json
# One jq (each process start is slow under TCG); a here-string: the guest has no /dev/fd.
read -r received dropped kernel buffer steps overfull listed unlisted <<<"$(jq -r '[.notifications.received, .notifications.dropped,
  .notifications.kernel_dropped, .notifications.receive_buffer, (.steps | length),
  ([.steps[] | select((.differences // []) | length > 100)] | length),
  ([.steps[] | (.differences // []) | length] | add), ([.steps[] | .unlisted // 0] | add)] | @tsv' "$R")"
echo "report: received $received, dropped $dropped (by the kernel $kernel), receive buffer $buffer bytes"
expect_eq "receive buffer (8 MB set, doubled by the kernel)" 16777216 "$buffer"
expect_eq "dropped by the kernel" 0 "$kernel"
expect_eq "received + dropped = sent + own" $((sent + own)) $((received + dropped))
expect_eq "steps" 16 "$steps"
expect_eq "steps listing over 100 differences" 0 "$overfull"
[ "$unlisted" -gt 0 ] && [ $((listed + unlisted)) -ge "$received" ] || fail "listed $listed, unlisted $unlisted, received $received"
echo "ok: listed $listed, unlisted $unlisted"
# Bounded: the H4 test's limit (a debug build peaks at ~31 MB here, with or without the flood).
last_line "$TDIR/rss" "*"; rss=$LINE
[ "$rss" -gt 0 ] && [ "$rss" -lt 80000 ] || fail "peak RSS $rss KiB"
echo "ok: peak RSS $rss KiB"
