#!/usr/bin/env bash
# Output-identity guard for performance work: md5 of every renderer's output on every capture.
#   scripts/check_identical.sh record BASELINE.txt [BIN]   save the reference (from an unmodified build)
#   scripts/check_identical.sh check  BASELINE.txt [BIN]   compare; exit 1 and list what differs
# Covers dump (jsonl, text, -v text; each with and without plugins) and info, over Captures/ and
# the public corpus (../shared/captures/public) when present.
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${1:?record|check}; ref=${2:?baseline file}; bin=${3:-.build/release/bluesift}
files=$(ls -d Captures/* ../shared/captures/public/* 2>/dev/null \
        | grep -Ev '\.(md|txt|json)$' | sort)
out=$(mktemp)
for f in $files; do
    [ -f "$f" ] || continue
    for args in "dump --format jsonl" "dump --no-color" "dump -v --no-color" "info" \
                "dump --format jsonl --plugins Plugins" "dump --no-color --plugins Plugins"; do
        sum=$($bin $args "$f" 2>&1 | md5sum | cut -d' ' -f1)
        echo "$sum  $args  $(basename "$f")" >> "$out"
    done
done
if [ "$mode" = record ]; then
    mv "$out" "$ref"; echo "recorded $(wc -l < "$ref") outputs in $ref"
else
    if diff "$ref" "$out" > /tmp/check_identical.diff; then
        echo "identical: $(wc -l < "$out") outputs"; rm -f "$out"
    else
        echo "DIFFERENT:"; cat /tmp/check_identical.diff; rm -f "$out"; exit 1
    fi
fi
