#!/usr/bin/env python3
"""Repeats a classic-pcap sniffer capture N times (timestamps shifted past the previous copy):
each copy is a whole connection again (CONNECT_IND to LL_TERMINATE_IND), so a decoder sets up,
encrypts and decrypts it anew. For benchmarks of over-the-air decoding.
    make_big_sniffer_capture.py IN.pcap OUT.pcap COPIES"""
import struct, sys

src, dst, copies = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = open(src, "rb").read()
assert struct.unpack("<I", data[:4])[0] == 0xA1B2C3D4, "classic little-endian pcap (µs) only"
header, records, o = data[:24], [], 24
while o + 16 <= len(data):
    sec, usec, incl, orig = struct.unpack("<IIII", data[o:o + 16])
    records.append((sec * 1_000_000 + usec, data[o + 8:o + 16], data[o + 16:o + 16 + incl]))
    o += 16 + incl
span = records[-1][0] - records[0][0] + 1_000_000
with open(dst, "wb") as out:
    out.write(header)
    for c in range(copies):
        for t, lens, body in records:
            t += c * span
            out.write(struct.pack("<II", t // 1_000_000, t % 1_000_000) + lens + body)
