# Helpers for the tests in Tests/Kernel/tests (sourced inside the guest; see run.sh).
# Environment from guest.sh: BLUESIFT, REPO, KWORK.
set -u
TNAME=$(basename "$0" .sh)
TDIR=$KWORK/t-$TNAME
mkdir -p "$TDIR"
CAPTURE=$REPO/Captures/band_mtu23.btsnoop

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "$*"; exit 77; }
# expect_eq WHAT EXPECTED GOT
expect_eq() { [ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"; echo "ok: $1 = $3"; }
expect_grep() { grep -q -- "$2" "$3" || { cat "$3"; fail "$1: no '$2' in $3"; }; echo "ok: $1"; }
adapter_up() { hciconfig "hci$1" 2>/dev/null | grep -q 'UP RUNNING'; }

# band OPTIONS...: the host restarts the band with these options (run.sh's band loop). Each
# test asks at its start for the band it needs and none restores it after: a band already
# running with those options is not restarted (a restart costs seconds).
band() {
  if [ ! -f "$KWORK/band.want" ] && [ -f "$KWORK/band.ready" ] && [ "$(<"$KWORK/band.ready")" = "$*" ]; then return 0; fi
  echo "$*" >"$KWORK/band.want.tmp" && mv "$KWORK/band.want.tmp" "$KWORK/band.want"
  for _ in $(seq 300); do
    if [ -f "$KWORK/band.ready" ] && [ ! -f "$KWORK/band.want" ]; then
      grep -q '^FAILED' "$KWORK/band.ready" && fail "the host could not start the band with: $*"
      return 0
    fi
    sleep 0.1
  done
  fail "the host did not restart the band within 30 s"
}

# replay_hci OUT-PREFIX ARGS...: replay over hci:0, stdout/stderr/report under TDIR; sets RC.
replay() {
  local out=$1 t0=$SECONDS; shift
  "$BLUESIFT" replay "$CAPTURE" --timing asap --window 150 --timeout 3 --report "$TDIR/$out.json" "$@" \
    >"$TDIR/$out.out" 2>"$TDIR/$out.err"
  RC=$?
  echo "== replay $* (exit $RC, $((SECONDS - t0)) s)"; cat "$TDIR/$out.out" "$TDIR/$out.err"
}
