#!/usr/bin/env bash
# Checks that a bluesift binary runs without Swift installed (make check-static):
#   scripts/check_static.sh BINARY CAPTURE
# 1. ldd/readelf: no Swift runtime, Foundation or dispatch library, no /opt/swift run path;
# 2. in an empty environment (no LD_LIBRARY_PATH): --version, and `info` and
#    `dump --format jsonl` of CAPTURE agree on the record count;
# 3. where a private mount namespace is allowed (root): the same with /opt/swift hidden
#    under an empty tmpfs, as on a Debian machine without Swift.
set -euo pipefail
bin=${1:?binary}; capture=${2:?capture}
fail() { echo "check-static: $bin: $*" >&2; exit 1; }
[ -x "$bin" ] || fail "not an executable"
swiftlibs=$(ldd "$bin" | grep -oE '(libswift[A-Za-z_]*|lib_?Foundation[A-Za-z]*|libdispatch|libBlocksRuntime)\.so[^ ]*' | sort -u | tr '\n' ' ' || true)
[ -z "$swiftlibs" ] || fail "links Swift libraries dynamically: $swiftlibs"
if readelf -d "$bin" | grep -E 'R(UN)?PATH' | grep -q /opt/swift; then fail "has /opt/swift in its run path"; fi

run_checks() {  # prefix command (may be empty)
    local v records lines
    v=$("$@" env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH= "$bin" --version) || fail "--version failed"
    [[ "$v" =~ ^[0-9]+\.[0-9]+\.[0-9]+\ \(commit\ .+\)$ ]] || fail "--version printed '$v'"
    records=$("$@" env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH= "$bin" info "$capture" | awk '/^records:/ {print $2}') || fail "info failed"
    lines=$("$@" env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH= "$bin" dump --format jsonl "$capture" | grep -c '^{"frame":') || fail "dump failed"
    [ -n "$records" ] && [ "$records" -gt 0 ] && [ "$records" = "$lines" ] || fail "info says ${records:-nothing} records, dump wrote $lines"
    echo "$v; $capture: $records records decoded"
}
run_checks
if [ -d /opt/swift ] && unshare -m true 2>/dev/null; then
    # The same inside a mount namespace where /opt/swift is an empty folder.
    hide() { unshare -m sh -c 'mount -t tmpfs none /opt/swift && exec "$@"' hide "$@"; }
    run_checks hide >/dev/null
    echo "check-static: runs with /opt/swift hidden ($(du -h "$bin" | cut -f1) binary)"
else
    echo "check-static: ran with an empty environment (no private mount namespace here to hide /opt/swift)"
fi
