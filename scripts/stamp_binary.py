#!/usr/bin/env python3
"""Writes the git commit into a built bluesift binary (Sources/CBuildStamp): the text after
the marker, NUL-terminated, within the 64-byte stamp. Usage: stamp_binary.py BINARY COMMIT"""
import sys

MARKER = b"@(#)BLUESIFT-COMMIT:"
SIZE = 64

path, commit = sys.argv[1], sys.argv[2].encode()
if len(commit) > SIZE - len(MARKER) - 1:
    sys.exit(f"stamp_binary: commit text too long: {commit!r}")
data = bytearray(open(path, "rb").read())
at = data.find(MARKER)
if at < 0 or data.find(MARKER, at + 1) >= 0:
    sys.exit(f"stamp_binary: {path}: expected exactly one build stamp")
start = at + len(MARKER)
data[start:at + SIZE] = commit + bytes(SIZE - len(MARKER) - len(commit))
open(path + ".stamp-tmp", "wb").write(data)
import os
os.chmod(path + ".stamp-tmp", os.stat(path).st_mode)
os.replace(path + ".stamp-tmp", path)
print(f"stamped {path}: commit {commit.decode()}")
