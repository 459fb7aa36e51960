#!/usr/bin/env python3
"""Makes an ISO-dense btsnoop (datalink 1002, H4) for `make bench`: one CIS set up by HCI
(Core 6.0 Vol 4 Part E: LE Set CIG Parameters §7.8.97, LE Create CIS §7.8.99, LE CIS
Established §7.7.65.25) on ACL 0x0040, then SDUS SDUs each way on CIS 0x0060, 10 ms apart:
sent ones as one complete packet (PB 0b10), received ones with a time stamp and every fourth
in two fragments (PB 0b00 first, 0b11 last), one in 500 received flagged lost (Packet_Status_Flag 0b10).
  make_iso_capture.py OUT [SDUS]   (default 200000 each way)"""
import struct
import sys

out = sys.argv[1]
sdus = int(sys.argv[2]) if len(sys.argv) > 2 else 200_000
EPOCH = 0x00DCDDB30F2F8000 + 1_796_601_600_000_000  # 2026-12-07 00:00 UTC in btsnoop µs
ACL, CIS = 0x0040, 0x0060


def record(f, us, sent, pkt):
    flags = (0 if sent else 1) | (2 if pkt[0] in (1, 4) else 0)
    f.write(struct.pack(">IIIIq", len(pkt), len(pkt), flags, 0, EPOCH + us) + pkt)


def command(op, p):
    return bytes([1, op & 0xFF, op >> 8, len(p)]) + p


def le_meta(sub, p):
    return bytes([4, 0x3E, len(p) + 1, sub]) + p


def iso(handle, pb, ts, load):
    h = handle | pb << 12 | (0x4000 if ts is not None else 0)
    return bytes([5]) + struct.pack("<HH", h, len(load)) + load


with open(out, "wb") as f:
    f.write(b"btsnoop\0" + struct.pack(">II", 1, 1002))
    # CIG 1, SDU interval 10 ms both ways, one CIS (CIS_ID 1, max SDU 100, 2M PHY, RTN 2).
    record(f, 0, True, command(0x2062, bytes([1]) + (10000).to_bytes(3, "little") * 2 + bytes([0, 0, 0, 10, 0, 10, 0, 1, 1, 100, 0, 100, 0, 2, 2, 2, 2])))
    record(f, 100, False, bytes([4, 0x0E, 8, 1, 0x62, 0x20, 0, 1, 1]) + struct.pack("<H", CIS))
    record(f, 200, True, command(0x2064, bytes([1]) + struct.pack("<HH", CIS, ACL)))
    record(f, 300, False, bytes([4, 0x0F, 4, 0, 1, 0x64, 0x20]))
    est = bytes([0]) + struct.pack("<H", CIS) + bytes(3 + 3 + 3 + 3) + bytes([2, 2, 2, 1, 1, 1, 1]) + struct.pack("<HHH", 100, 100, 8)
    record(f, 400, False, le_meta(0x19, est))
    sdu = bytes(range(100))
    us = 10_000
    for n in range(sdus):
        seq = n & 0xFFFF
        record(f, us, True, iso(CIS, 2, None, struct.pack("<HH", seq, len(sdu)) + sdu))
        status = 2 if n % 500 == 499 else 0
        head = struct.pack("<IHH", us & 0xFFFFFFFF, seq, len(sdu) | status << 14)
        if status == 2:
            record(f, us + 500, False, iso(CIS, 2, us, head))
        elif n % 4 == 3:
            record(f, us + 500, False, iso(CIS, 0, us, head + sdu[:60]))
            record(f, us + 600, False, iso(CIS, 3, None, sdu[60:]))
        else:
            record(f, us + 500, False, iso(CIS, 2, us, head + sdu))
        us += 10_000
