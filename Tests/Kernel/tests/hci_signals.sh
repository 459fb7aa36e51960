# SIGINT and SIGTERM mid-replay over hci:0: the adapter is powered up again all the same.
source "$REPO/Tests/Kernel/lib.sh"
band
set -m  # background jobs of a script without job control ignore SIGINT (and bluesift keeps that)
for sig in INT TERM; do
  adapter_up 0 || fail "hci0 should be up before the SIG$sig run"
  "$BLUESIFT" replay "$CAPTURE" --transport hci:0 --timing fixed:1000 --timeout 3 >"$TDIR/$sig.out" 2>"$TDIR/$sig.err" &
  pid=$!
  # Interrupt once the run holds the adapter (it said so), mid-steps. (hciconfig shows the
  # adapter UP while a user channel holds it: the line is the sign.)
  for _ in {1..600}; do has "$TDIR/$sig.err" "powered it down" && break; nap 0.05; done
  has "$TDIR/$sig.err" "powered it down" || fail "hci0 was never taken over"
  nap 1  # mid-steps: 16 steps 1 s apart
  kill -$sig $pid
  wait $pid; rc=$?
  show "$TDIR/$sig.err"
  expect_eq "exit status after SIG$sig" $((128 + $(kill -l $sig))) "$rc"
  adapter_up 0 || fail "hci0 is not up again after SIG$sig"
  echo "ok: hci0 up again after SIG$sig"
done
