#!/usr/bin/env python3
"""Makes a large btsnoop (datalink 1002) by repeating a corpus capture with increasing
timestamps, for benchmarks: make_big_capture.py SOURCE OUT SIZE_MB"""
import struct
import sys

src, out, size_mb = sys.argv[1], sys.argv[2], float(sys.argv[3])
data = open(src, "rb").read()
assert data[:8] == b"btsnoop\0", "source must be a btsnoop file"
header, body = data[:16], data[16:]
records = []
off = 0
while off + 24 <= len(body):
    orig, incl, flags, drops, ts = struct.unpack(">IIIIq", body[off:off + 24])
    if off + 24 + incl > len(body):
        break
    records.append((orig, incl, flags, drops, ts, body[off + 24:off + 24 + incl]))
    off += 24 + incl
first, last = records[0][4], records[-1][4]
span = last - first + 1_000_000
target = int(size_mb * 1024 * 1024)
written = 16
rounds = 0
with open(out, "wb") as f:
    f.write(header)
    while written < target:
        shift = rounds * span
        chunk = bytearray()
        for orig, incl, flags, drops, ts, payload in records:
            chunk += struct.pack(">IIIIq", orig, incl, flags, drops, ts + shift) + payload
        f.write(chunk)
        written += len(chunk)
        rounds += 1
print(f"{out}: {written / 1e6:.1f} MB, {rounds} copies of {len(records)} records = {rounds * len(records)} records")
