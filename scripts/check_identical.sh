#!/usr/bin/env bash
# Output-identity guard for performance work: md5 of every renderer's output on every capture.
#   scripts/check_identical.sh record BASELINE.txt [BIN]   save the reference (from an unmodified build)
#   scripts/check_identical.sh check  BASELINE.txt [BIN]   compare; exit 1 and list what differs
# Covers dump (jsonl, text, -v text, csv; with and without plugins), info, stats (text, json,
# csv and its classic and sensors tables), gatt (tree, json), frames (text, csv, jsonl), report,
# script, convert (each output format, and --decrypt) and redact (the file and its report), over
# Captures/ and ../shared/captures (the public corpus, crackle's and mesh captures) when present.
# Written files are compared by their bytes, messages with the temporary folder's name replaced.
# JOBS=N runs N captures at once.
set -uo pipefail
# Swift seeds hashing per process: outputs that follow a dictionary's order would differ run to run.
export SWIFT_DETERMINISTIC_HASHING=1
cd "$(dirname "$0")/.."
mode=${1:?record|check}; ref=${2:?baseline file}; bin=${3:-.build/release/bluesift}
files=$( (ls -d Captures/* 2>/dev/null; find ../shared/captures -type f 2>/dev/null) \
        | grep -Ev '(\.(md|txt|json)|/LICENSE|/out/expected_output\.pcap)$' | sort)
out=$(mktemp)
one() {
    local f=$1
    for args in "dump --format jsonl" "dump --no-color" "dump -v --no-color" "info" \
                "dump --format jsonl --plugins Plugins" "dump --no-color --plugins Plugins" \
                "dump --format csv" "stats" "stats --format json" "gatt" "gatt --format json" \
                "stats --format csv" "stats --format csv --table classic" "stats --format csv --table sensors" \
                "frames" "frames --format csv" "frames --format jsonl" "script" "report -o /dev/stdout"; do
        sum=$($bin $args "$f" 2>&1 | md5sum | cut -d' ' -f1)
        echo "$f  $args  $sum"
    done
    # Commands that write a file: its bytes, and what they said with the folder named T.
    local t; t=$(mktemp -d)
    for args in "convert --to pcapng" "convert --to pcap" "convert --to btsnoop" "convert --to btsnoop-monitor" \
                "convert --decrypt --to pcapng" "redact --salt check" "redact --salt check --drop-advertising"; do
        said=$($bin $args "$f" "$t/out" 2>&1 | sed "s#$t#T#g" | md5sum | cut -d' ' -f1)
        wrote=$( [ -f "$t/out" ] && md5sum < "$t/out" | cut -d' ' -f1 || echo none)
        echo "$f  $args  $said $wrote"
        rm -f "$t/out"
    done
    rm -rf "$t"
}
export -f one; export bin
printf '%s\n' $files | while read -r f; do [ -f "$f" ] && echo "$f"; done \
    | xargs -P "${JOBS:-1}" -I{} bash -c 'one "$1"' _ {} | LC_ALL=C sort > "$out"
if [ "$mode" = record ]; then
    mv "$out" "$ref"; echo "recorded $(wc -l < "$ref") outputs in $ref"
else
    if diff "$ref" "$out" > "$out.diff"; then
        echo "identical: $(wc -l < "$out") outputs"; rm -f "$out" "$out.diff"
    else
        echo "DIFFERENT:"; cat "$out.diff"; rm -f "$out" "$out.diff"; exit 1
    fi
fi
