#!/usr/bin/env bash
# The per-record commands against a build of another commit, in one run on one input:
#   scripts/bench_compare.sh BASE_REV [INPUT]
# Builds BASE_REV in a worktree (.bench-base, its own .build) with the release flags of
# `make release`, then times info, dump --format jsonl, dump (text) and stats --format json
# with each binary, alternating, best of ROUNDS (default 3), and prints this build's time as
# a ratio of the base's (1.00 = the same; the redesign's target is at most 1.03).
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:?usage: scripts/bench_compare.sh BASE_REV [INPUT]}
input=${2:-bench-out/big-100MB.btsnoop}
rounds=${ROUNDS:-3}
flags=(-c release -Xswiftc -cross-module-optimization -Xswiftc -enforce-exclusivity=unchecked)
[ -f "$input" ] || { echo "bench_compare: no input $input (make bench makes it)" >&2; exit 2; }
wt=.bench-base
if [ -d "$wt" ]; then git -C "$wt" checkout -q --detach "$base"; else git worktree add -q --detach "$wt" "$base"; fi
(cd "$wt" && swift build "${flags[@]}" --product bluesift >/dev/null)
swift build "${flags[@]}" --product bluesift >/dev/null
ours=.build/release/bluesift theirs=$wt/.build/release/bluesift
echo "against $(git -C "$wt" rev-parse --short=12 HEAD), input $input, best of $rounds"
printf "%-32s %10s %10s %8s\n" command base this ratio
best() {  # binary, args... → the best wall time of one run
    /usr/bin/time -f %e -o bench-out/cmp-time.txt "$@" >/dev/null 2>&1 || true
    tail -1 bench-out/cmp-time.txt
}
for args in "info" "dump --format jsonl" "dump --no-color" "stats --format json"; do
    b=999999; t=999999
    for _ in $(seq "$rounds"); do
        x=$(best $theirs $args "$input"); b=$(python3 -c "print(min($b, $x))")
        y=$(best $ours $args "$input"); t=$(python3 -c "print(min($t, $y))")
    done
    printf "%-32s %9.2fs %9.2fs %8.3f\n" "$args" "$b" "$t" "$(python3 -c "print($t / max($b, 0.01))")"
done
