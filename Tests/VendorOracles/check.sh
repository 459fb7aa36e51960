#!/bin/sh
# Everything in Tests/VendorOracles that can be checked without the Swift engine:
#   the vector captures read back by tshark and by the oracles, the comparison's own
#   selftest, and the draft plugins' examples against the oracles.
# Usage: Tests/VendorOracles/check.sh   (from the repository root, after the venv setup in README.md)
set -eu
PY=${PY:-.venv-oracles/bin/python}
D=Tests/VendorOracles
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$PY" "$D/oracle.py" run > "$tmp/oracle.jsonl" 2> "$tmp/oracle.err"
echo "oracle.py run: $(wc -l < "$tmp/oracle.jsonl") vectors"
"$PY" "$D/oracle.py" selftest 2>/dev/null | grep -E "^(selftest:|oracle round trip)" | sed 's/^/  /'
"$PY" "$D/compare.py" --selftest "$tmp/oracle.jsonl"
"$PY" "$D/drafts_check.py"
