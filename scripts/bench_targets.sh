#!/usr/bin/env bash
# Issue 41's targets, each a ratio of two timings taken in this run (this machine's speed drifts
# by 2x within an hour, so only same-run ratios mean anything): every command is run REPS times
# (default 3), alternating with what it is compared to, and the best time of each is kept.
#   scripts/bench_targets.sh BIN BIG_CAPTURE [SMALL_CAPTURE]
# CLOCK=cpu takes user + system time instead of wall time (steadier on a machine running builds;
# a pipe's `cat` is then counted too).
# BASE=OTHER_BIN also times another build in the same run, alternating with BIN, and each row
# shows its ratio beside ("[base: 2.21 (…)]"): a change measured against main in one machine state.
# Plugins: the repository's Plugins/ (--plugins), against --no-plugins. Output to /dev/null
# unless the row says pipe. Exit status 0 whether or not targets are met (it reports).
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${1:?binary}; big=${2:?capture}; small=${3:-Captures/band_mtu23.btsnoop}
reps=${REPS:-3}
records=$($bin info "$big" | awk '/^records:/ {print $2}')
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
# best NAME CMD...: best time (s) and the largest peak RSS (MB) over the reps, kept in $t.
best() {
    local name=$1; shift
    if [ -n "${BASE:-}" ] && [ "${in_base:-}" != 1 ]; then
        in_base=1 best "b_$name" "${*//$bin/$BASE}"
    fi
    /usr/bin/time -f "%e %M %U %S" -o "$t/one" bash -c "$*" >/dev/null 2>&1
    read -r s m u k < "$t/one"
    [ "${CLOCK:-wall}" = cpu ] && s=$(awk -v u="$u" -v k="$k" 'BEGIN { printf "%.2f", u + k }')
    echo "$s $m" >> "$t/$name"
}
P="--plugins Plugins"
# Short commands are timed as loops of runs (their ratio unchanged): /usr/bin/time's clock ticks
# in 10 ms, which a single dd of the page cache or a single start-up does not reach.
loop() { echo "for _ in \$(seq $1); do $2; done"; }
ninfo=10; nstart=30
for _ in $(seq "$reps"); do
    best jsonl_np   "$bin dump --format jsonl --no-plugins $big > /dev/null"
    best jsonl_p    "$bin dump --format jsonl $P $big > /dev/null"
    best jsonl_pipe "$bin dump --format jsonl $P $big | cat > /dev/null"
    best text_np    "$bin dump --no-color --no-plugins $big > /dev/null"
    best text_p     "$bin dump --no-color $P $big > /dev/null"
    best stats_p    "$bin stats $P $big > /dev/null"
    best info       "$(loop $ninfo "$bin info $big > /dev/null")"
    best dd         "$(loop $ninfo "dd if=$big of=/dev/null bs=1M 2>/dev/null")"
done
# Issue 40: a mesh-dense advertising capture (the spec's sample network PDUs and beacon,
# 1 M records; each round's PDUs sealed again with higher SEQs, so none repeats) decoded with
# its keys, in JSON Lines.
python3 scripts/mesh_fixtures.py --bench=1000000 "$t/mesh.btsnoop"
for _ in $(seq "$reps"); do
    best mesh_jsonl "$bin dump --format jsonl --no-plugins --mesh-keys Tests/Fixtures/mesh/mesh_sample_keys.json $t/mesh.btsnoop > /dev/null"
done
# Start-up: loops of short runs, best of each.
for _ in $(seq "$reps"); do
    best start_np "$(loop $nstart "$bin dump --no-plugins $small > /dev/null")"
    best start_p  "$(loop $nstart "$bin dump $P $small > /dev/null")"
done
sec() { sort -n "$t/$1" | head -1 | awk '{print $1}'; }
# Seconds of one run of a looped command.
per() { awk -v s="$(sec "$1")" -v n="$2" 'BEGIN { printf "%.4f", s / n }'; }
rss() { sort -n -k2 "$t/$1" | tail -1 | awk '{printf "%.0f", $2 / 1024}'; }
bytes=$(stat -c %s "$big")
printf "issue 41 targets (best of %s, same run; %s records, %s MB):\n" "$reps" "$records" "$((bytes / 1000000))"
row() {  # text, measured ratio, comparison (le|ge), target, detail[, the base build's ratio]
    local verdict
    verdict=$(awk -v r="$2" -v c="$3" -v g="$4" 'BEGIN { ok = (c == "le") ? (r <= g) : (r >= g); print ok ? "met" : "NOT met" }')
    printf "  %-58s %6.2f  (target %s %s: %s)  %s%s\n" "$1" "$2" "$([ "$3" = le ] && echo '<=' || echo '>=')" "$4" "$verdict" "$5" \
        "${6:+  [base: $6]}"
}
r() { awk -v a="$(sec "$1")" -v b="$(sec "$2")" 'BEGIN { if (b < 0.001) b = 0.001; printf "%.3f", a / b }'; }
# The base build's ratio of the same pair, when BASE is set.
b() { [ -n "${BASE:-}" ] && echo "$(r "b_$1" "b_$2") ($(sec "b_$1") s / $(sec "b_$2") s)"; }
row "jsonl, every plugin / no plugins" "$(r jsonl_p jsonl_np)" le 1.25 "$(sec jsonl_p) s / $(sec jsonl_np) s" "$(b jsonl_p jsonl_np)"
rate() { awk -v n="$records" -v s="$(sec "$1")" 'BEGIN { printf "%.2f", n / s / 1e6 }'; }
row "jsonl with every plugin, M records/s" "$(rate jsonl_p)" ge 2 "" "$([ -n "${BASE:-}" ] && rate b_jsonl_p)"
row "text without plugins / jsonl without plugins" "$(r text_np jsonl_np)" le 1.3 "$(sec text_np) s" "$(b text_np jsonl_np)"
row "text with every plugin / text without" "$(r text_p text_np)" le 1.35 "$(sec text_p) s" "$(b text_p text_np)"
row "stats with every plugin / jsonl with every plugin" "$(r stats_p jsonl_p)" le 0.75 "$(sec stats_p) s" "$(b stats_p jsonl_p)"
row "info speed / dd from the page cache" "$(r dd info)" ge 0.28 "info $(per info $ninfo) s, dd $(per dd $ninfo) s (each of $ninfo runs)" "$(b dd info)"
row "jsonl through a pipe (| cat) / to /dev/null" "$(r jsonl_pipe jsonl_p)" le 1.1 "$(sec jsonl_pipe) s" "$(b jsonl_pipe jsonl_p)"
row "start-up (bundled capture) with every plugin / without" "$(r start_p start_np)" le 1.6 "$(per start_p $nstart) s / $(per start_np $nstart) s (each of $nstart runs)" "$(b start_p start_np)"
row "mesh jsonl with --mesh-keys (1 M mesh records), M records/s" "$(awk -v s="$(sec mesh_jsonl)" 'BEGIN { printf "%.2f", 1 / s }')" ge 1 "$(sec mesh_jsonl) s"
peak=0; for f in jsonl_np jsonl_p text_np text_p stats_p info; do m=$(rss $f); [ "$m" -gt "$peak" ] && peak=$m; done
row "peak RSS of these commands, MB" "$peak" le 64 ""
