#!/usr/bin/env bash
# `make fuzz`: builds the libFuzzer targets and runs each for FUZZ_SECONDS (docs/fuzzing.md).
#   FUZZ_SECONDS=60  FUZZ_TARGETS="FuzzCapture FuzzStack FuzzPlugins"  FUZZ_SANITIZE=fuzzer[,address]
#   HOSTILE_SCALE=10: then the hostile-input campaign (CaptureHostileTests, PluginHostileTests,
#   OutputSafetyTests) runs at that scale (0 skips it): more fragments, loops and plugins; with
#   it the replay against hostile devices, its notification flood FLOOD_SECONDS (default 60)
#   long at FLOOD_RATE (default 10000) notifications/s: the host's pending-notification cap fills.
#   MUTATION_ITERATIONS=100000 MUTATION_SEED=random: structure-aware mutants of every capture
#   format (BluesiftFuzz/StructuredCaptureFuzz.swift), checked against the records they must give.
#   FUZZ_FORK=1 (default): libFuzzer's fork mode, which keeps going after a crash so one known
#   bug does not hide the next; FUZZ_FORK=0 stops at the first crash (classic mode).
# -detect_leaks=0: process-lifetime caches (compiled plugins, metadata) are not leaks.
# Exit status 1 when any target found a crash, hang or OOM (artifacts in .build-fuzz/artifacts/).
set -uo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
SECS=${FUZZ_SECONDS:-60}
TARGETS=${FUZZ_TARGETS:-"FuzzCapture FuzzStack FuzzPlugins"}
SANITIZE=${FUZZ_SANITIZE:-fuzzer}
DIR=.build-fuzz
SCRATCH=$DIR/build-${SANITIZE//,/-}
PUBLIC=../shared/captures/public

rm -rf "$DIR/seeds"
python3 scripts/fuzz-seeds.py "$DIR/seeds" Captures Plugins $([ -d "$PUBLIC" ] && echo "$PUBLIC") || exit 2
for t in $TARGETS; do
  # gold crashes linking libFuzzer into Swift executables; lld ships with the toolchain.
  "$SWIFT" build -c release --product "$t" --scratch-path "$SCRATCH" \
    -Xswiftc -sanitize="$SANITIZE" -Xswiftc -DFUZZING -Xswiftc -use-ld=lld || exit 2
done

status=0
summary=""
for t in $TARGETS; do
  case $t in
    FuzzCapture) seeds="$DIR/seeds/capture Tests/FuzzRegressions/capture"; maxlen=16500 ;;
    FuzzStack)   seeds="$DIR/seeds/stack Tests/FuzzRegressions/stack"; maxlen=4096 ;;
    FuzzPlugins) seeds="$DIR/seeds/plugins Tests/FuzzRegressions/plugins"; maxlen=8192 ;;
    *) seeds=""; maxlen=4096 ;;
  esac
  corpus=$DIR/corpus/$t; art=$DIR/artifacts/$t; log=$DIR/logs/$t.log
  mkdir -p "$corpus" "$art" "$DIR/logs"
  before=$(ls "$art" | wc -l)
  fork=""; [ "${FUZZ_FORK:-1}" = 1 ] && fork="-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1"
  existing=""; for s in $seeds; do [ -d "$s" ] && existing="$existing $s"; done
  echo "== $t: ${SECS}s, corpus $corpus, seeds:$existing"
  # Swift's own backtracer would fight libFuzzer's signal handlers and slow every crash.
  SWIFT_BACKTRACE=enable=no "$SCRATCH/release/$t" "$corpus" $existing \
    -max_total_time="$SECS" -timeout=10 -rss_limit_mb=1024 -detect_leaks=0 -max_len="$maxlen" \
    -artifact_prefix="$art/" -print_final_stats=1 $fork >"$log" 2>&1
  rc=$?
  # Classic mode prints stat:: lines; fork mode "#N: cov: C ft: F ... exec/s: R".
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
  [ -z "$execs" ] && execs=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#')
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$')
  [ -z "$rate" ] && rate=$(grep -oE 'exec/s: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+')
  # Fork mode's exec/s is per job: use runs over wall time instead.
  if [ -n "$fork" ] && [ -n "$execs" ]; then rate=$(( execs / SECS )); fi
  cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1)
  found=$(( $(ls "$art" | wc -l) - before ))
  line="$t: ${execs:-?} runs, ${rate:-?} exec/s, $cov, $found new artifact(s), exit $rc"
  if [ $found -gt 0 ] || [ $rc -ne 0 ]; then
    status=1
    line="$line  FINDING: $(grep -m1 -E 'Fatal error|ERROR: libFuzzer' "$log")"
    line="$line (newest: $art/$(ls -t "$art" | head -1); replay with .build/debug/$t FILE for file:line)"
  fi
  echo "$line"; summary="$summary$line"$'\n'
done

# Structure-aware mutation of every capture format (StructuredMutationTests; `make test` runs
# 2,200 mutants of seed 1): MUTATION_ITERATIONS (default 100000) with a new seed each run.
# Failing inputs land in .build-fuzz/artifacts/structured; keep them in Tests/FuzzRegressions/structured.
iters=${MUTATION_ITERATIONS:-100000}
if [ "$iters" != 0 ]; then
  mseed=${MUTATION_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
  echo "== structured capture mutation: $iters mutants, seed $mseed"
  mkdir -p "$DIR/artifacts/structured"
  if "$SWIFT" build --build-tests >"$DIR/logs/structured-build.log" 2>&1 &&
     BLUESIFT_MUTATION_ITERATIONS=$iters BLUESIFT_MUTATION_SEED=$mseed BLUESIFT_MUTATION_ARTIFACTS="$DIR/artifacts/structured" \
       "$SWIFT" test --skip-build --filter 'StructuredMutationTests' >"$DIR/logs/structured.log" 2>&1; then
    line="structured mutation (seed $mseed): $(grep -oE '[0-9]+ inputs, [0-9]+ with predicted records' "$DIR/logs/structured.log" | tail -1), no failure"
  else
    status=1
    line="structured mutation (seed $mseed): FAILED (see $DIR/logs/structured.log; inputs in $DIR/artifacts/structured; the last input run is last-input)"
  fi
  echo "$line"; summary="$summary$line"$'\n'
fi

# The hand-made nasties of the test suite, scaled up (a debug build, as `make test` uses).
scale=${HOSTILE_SCALE:-10}
if [ "$scale" != 0 ]; then
  echo "== hostile-input campaign at scale $scale"
  if "$SWIFT" build --build-tests >"$DIR/logs/hostile-build.log" 2>&1 &&
     BLUESIFT_HOSTILE_SCALE=$scale BLUESIFT_FLOOD_SECONDS=${FLOOD_SECONDS:-60} BLUESIFT_FLOOD_RATE=${FLOOD_RATE:-10000} \
       "$SWIFT" test --skip-build \
       --filter 'CaptureHostileTests|PluginHostileTests|OutputSafetyTests|ReplayAgainstHostileParts' >"$DIR/logs/hostile.log" 2>&1; then
    line="hostile campaign x$scale: $(grep -oE 'Test run with [0-9]+ tests.*' "$DIR/logs/hostile.log" | tail -1)"
  else
    status=1
    line="hostile campaign x$scale: FAILED (see $DIR/logs/hostile.log): $(grep -m1 '✘' "$DIR/logs/hostile.log")"
  fi
  echo "$line"; summary="$summary$line"$'\n'
fi
echo; echo "== fuzz summary"; printf "%s" "$summary"
exit $status
