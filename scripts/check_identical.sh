#!/usr/bin/env bash
# Optimisations must not change output: compares dump (JSON Lines and -v text) of every corpus
# and in-repo capture with a baseline made before the change.
#   scripts/check_identical.sh save DIR    (before)     scripts/check_identical.sh check DIR   (after)
set -euo pipefail
cd "$(dirname "$0")/.."
mode=$1 dir=$2 bin=${BIN:-.build/release/bluesift}
mkdir -p "$dir"
bad=0
for f in ../shared/captures/public/* Captures/*.btsnoop Captures/*.log Captures/*.pcap* Captures/*.pklg Captures/*.cfa; do
  [ -f "$f" ] || continue
  b=$(basename "$f")
  for kind in jsonl v; do
    if [ $kind = jsonl ]; then out=$({ "$bin" dump --format jsonl "$f" 2>/dev/null || true; } | md5sum); else out=$({ "$bin" dump --no-color -v "$f" 2>/dev/null || true; } | md5sum); fi
    if [ "$mode" = save ]; then echo "$out" > "$dir/$b.$kind"
    elif [ "$out" != "$(cat "$dir/$b.$kind")" ]; then echo "DIFFERS: $b ($kind)"; bad=1; fi
  done
done
[ "$mode" = check ] && { [ $bad = 0 ] && echo "identical" || exit 1; }
exit 0
