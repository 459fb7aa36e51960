# Helpers for the tests in Tests/Kernel/tests (sourced inside the guest; see run.sh).
# Environment from guest.sh: BLUESIFT, REPO, KWORK, PUBLIC (copies of the binary and the capture
# that nobody can read, for hci_nonroot).
#
# Every process started costs a few tenths of a second under TCG (a grep 0.2–0.4 s, a
# `sleep 0.1` 0.3–0.5 s): the helpers below are bash builtins only, and a test prefers them
# to grep, cat, sleep, seq, wc and head.
set -u
TNAME=${0##*/}; TNAME=${TNAME%.sh}
TDIR=$KWORK/t-$TNAME
[ -d "$TDIR" ] || mkdir -p "$TDIR"  # guest.sh makes them all with one mkdir
CAPTURE=$REPO/Captures/band_mtu23.btsnoop

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "$*"; exit 77; }
# nap SECONDS: sleep without a process: read's timeout on a FIFO nobody writes to (guest.sh
# makes it); sleep(1) where there is none.
if [ -p "${NAP_FIFO:-}" ] && exec {NAP_FD}<>"$NAP_FIFO"; then
  nap() { read -r -t "$1" -u "$NAP_FD" _; return 0; }
else
  nap() { sleep "$1"; }
fi
# has FILE PATTERN: a line of FILE matches PATTERN (a grep basic regular expression without
# backslashes), as `grep -q -- PATTERN FILE` says: BRE's literal ( ) { } + ? | and its ^ and $
# anywhere but at the start and the end escaped make it the extended expression bash matches
# each line against. The file is read whole (mapfile): `while read` costs a 9p round trip a
# line in the work directory.
has() {
  local re=$2 head="" tail="" l lines
  [[ $re == ^* ]] && head=^ re=${re#^}
  [[ $re == *\$ ]] && tail=\$ re=${re%\$}
  re=${re//\(/\\(}; re=${re//\)/\\)}; re=${re//\{/\\\{}; re=${re//\}/\\\}}
  re=${re//+/\\+}; re=${re//\?/\\?}; re=${re//|/\\|}; re=${re//^/\\^}; re=${re//\$/\\\$}
  re=$head$re$tail
  [ -r "$1" ] && mapfile -t lines <"$1" || return 2
  for l in "${lines[@]}"; do [[ $l =~ $re ]] && return 0; done
  return 1
}
# show FILE...: the files' bytes on stdout (cat).
show() { local f lines; for f; do mapfile lines <"$f" && printf '%s' "${lines[@]}"; done; }
# nlines FILE: how many lines end in a newline (wc -l).
nlines() {
  local lines n
  mapfile lines <"$1"; n=${#lines[@]}
  [ "$n" -gt 0 ] && [[ ${lines[n - 1]} != *$'\n' ]] && n=$((n - 1))
  echo "$n"
}
# expect_eq WHAT EXPECTED GOT
expect_eq() { [ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"; echo "ok: $1 = $3"; }
expect_grep() { has "$3" "$2" || { show "$3"; fail "$1: no '$2' in $3"; }; echo "ok: $1"; }
adapter_up() { [[ $(hciconfig "hci$1" 2>/dev/null) == *"UP RUNNING"* ]]; }

# band OPTIONS...: the host restarts the band with these options (run.sh's band loop). Each
# test asks at its start for the band it needs and none restores it after: a band already
# running with those options is not restarted (a restart costs seconds).
band() {
  if [ ! -f "$KWORK/band.want" ] && [ -f "$KWORK/band.ready" ] && [ "$(<"$KWORK/band.ready")" = "$*" ]; then return 0; fi
  echo "$*" >"$KWORK/band.want.tmp" && mv "$KWORK/band.want.tmp" "$KWORK/band.want"
  for _ in {1..600}; do
    if [ -f "$KWORK/band.ready" ] && [ ! -f "$KWORK/band.want" ]; then
      has "$KWORK/band.ready" '^FAILED' && fail "the host could not start the band with: $*"
      return 0
    fi
    nap 0.05
  done
  fail "the host did not restart the band within 30 s"
}

# replay OUT-PREFIX ARGS...: replay, stdout/stderr/report under TDIR; sets RC.
replay() {
  local out=$1 t0=$SECONDS; shift
  "$BLUESIFT" replay "$CAPTURE" --timing asap --window 150 --timeout 3 --report "$TDIR/$out.json" "$@" \
    >"$TDIR/$out.out" 2>"$TDIR/$out.err"
  RC=$?
  echo "== replay $* (exit $RC, $((SECONDS - t0)) s)"; show "$TDIR/$out.out" "$TDIR/$out.err"
}
