#!/usr/bin/env python3
"""Minimal captures that reproduce the issue-36 defects of what users copy (items 9-14).

    scripts/copy_fixtures.py OUTDIR

Built from bytes only (stdlib; the helpers of scripts/summary_fixtures.py). Each file holds
the shape of the field capture that showed the defect:

  name_with_address.btsnoop   9   a device 30:ae:7b:e5:96:f1 advertising the name
                                  "ROBAM_DB62030AE7BE596F1_0" (its address in hex, no separators,
                                  inside a longer run), manufacturer data with the address as text
                                  LSB first ("F196E57BAE30") and as "30-ae-7b-e5-96-f1"
  packet_comments.pcapng      10  DLT 201, 3 records, 2 with opt_comment (one naming the
                                  advertiser by its address, one by its name)
  h4_unknown_indicators.pcap  11  DLT 201, 2 records of H4 indicators no spec names (0x07, 0x0e)
  sniffed_retransmission.pcap 12  a Read Request sent twice (same SN, same CRC), then its response
  before_1970_fraction.btsnoop 14 first record at 1969-12-31T23:59:59.846582Z
  no_att_a.btsnoop, no_att_b.btsnoop 14 an HCI Reset each: nothing for diff to compare
  acl_only.btsnoop            14  ATT discovery on ACL handle 0x0040, no HCI command or event
  ibeacon.btsnoop             14  three iBeacon advertising reports (power -59 dBm, RSSI -60..-62)
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from summary_fixtures import BTSnoop, Sniffer, BTSNOOP_EPOCH_US, T0, HOST, PEER, addr, att_l2cap  # noqa: E402

ROBAM = bytes.fromhex("30ae7be596f1")


def ad(t, data):
    return bytes([len(data) + 1, t]) + data


def adv_report(s, t, address, data, rssi=-60, evt_type=0x00):
    """LE Advertising Report (Vol 4 Part E §7.7.65.2), one report, public address."""
    rep = bytes([0x02, 0x01, evt_type, 0x00]) + addr(address) + bytes([len(data)]) + data + struct.pack("<b", rssi)
    s.evt(t, 0x3E, rep)


def fixture_name_with_address(path):
    s = BTSnoop()
    s.cmd(T0, 0x0C03, b"")
    name = b"ROBAM_DB62030AE7BE596F1_0"
    for i in range(3):
        adv_report(s, T0 + 1000 + i * 100_000, ROBAM, ad(0x01, b"\x06") + ad(0x09, name))
    # Manufacturer data (company 0xFFFF) with the address as text, LSB first and dash-separated.
    adv_report(s, T0 + 400_000, ROBAM, ad(0xFF, b"\xff\xffid=F196E57BAE30"), evt_type=0x04)
    adv_report(s, T0 + 500_000, ROBAM, ad(0xFF, b"\xff\xffmac 30-ae-7b-e5-96-f1"), evt_type=0x04)
    s.write(path)


class Pcapng:
    """Little-endian pcapng: SHB, one IDB, EPBs with optional opt_comment options."""

    def __init__(self, dlt):
        self.blocks = [self.block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1)),
                       self.block(1, struct.pack("<HHI", dlt, 0, 0))]

    @staticmethod
    def block(btype, body):
        total = 12 + len(body)
        return struct.pack("<II", btype, total) + body + struct.pack("<I", total)

    @staticmethod
    def pad(b):
        return b + b"\0" * ((4 - len(b) % 4) % 4)

    def epb(self, t_us, data, comments=()):
        opts = b""
        for c in comments:
            opts += struct.pack("<HH", 1, len(c)) + self.pad(c)
        if opts:
            opts += struct.pack("<HH", 0, 0)
        body = struct.pack("<IIIII", 0, t_us >> 32, t_us & 0xFFFFFFFF, len(data), len(data)) + self.pad(data) + opts
        self.blocks.append(self.block(6, body))

    def write(self, path):
        with open(path, "wb") as f:
            f.write(b"".join(self.blocks))


def h4_phdr(received, h4):
    return struct.pack(">I", 1 if received else 0) + h4


def fixture_packet_comments(path):
    ng = Pcapng(201)
    ng.epb(T0, h4_phdr(False, bytes.fromhex("01030c00")), [b"reset before pairing"])
    rep = bytes([0x02, 0x01, 0x00, 0x00]) + addr(ROBAM)
    data = ad(0x09, b"ROBAM_DB62030AE7BE596F1_0")
    rep += bytes([len(data)]) + data + b"\xc4"
    ng.epb(T0 + 1000, h4_phdr(True, bytes([0x04, 0x3E, len(rep)]) + rep),
           [b"hood 30:AE:7B:E5:96:F1 seen", b"name ROBAM_DB62030AE7BE596F1_0"])
    ng.epb(T0 + 2000, h4_phdr(True, bytes.fromhex("040e0401030c00")))
    ng.write(path)


def fixture_h4_unknown(path):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 201))
        for i, d in enumerate([h4_phdr(False, bytes.fromhex("0701020304")), h4_phdr(True, bytes.fromhex("0e0a0b"))]):
            t = T0 + i * 1000
            f.write(struct.pack("<IIII", t // 1_000_000, t % 1_000_000, len(d), len(d)) + d)


def fixture_retransmission(path):
    s = Sniffer()
    s.adv_ind(T0)
    s.connect_ind(T0 + 1000)
    s.data(T0 + 3000, True, 2, att_l2cap(bytes([0x0A, 0x03, 0x00])))    # Read Request 0x0003
    t, pkt = s.pkts[-1]
    s.pkts.append((T0 + 33000, pkt))                                      # sent again, unacknowledged
    s.data(T0 + 33150, False, 2, att_l2cap(bytes([0x0B, 0x64])))          # Read Response
    s.empty(T0 + 63000, True)
    s.write(path)


def fixture_before_1970(path):
    s = BTSnoop()
    first = -1_000_000 + 846_582   # 1969-12-31T23:59:59.846582Z
    s.cmd(first, 0x0C03, b"")
    s.evt(first + 500, 0x0E, bytes.fromhex("01030c00"))
    s.write(path)


def fixture_no_att(path):
    s = BTSnoop()
    s.cmd(T0, 0x0C03, b"")
    s.evt(T0 + 500, 0x0E, bytes.fromhex("01030c00"))
    s.write(path)


def fixture_acl_only(path):
    s = BTSnoop()
    h = 0x0040
    t = T0
    # Primary service discovery, then the characteristic declaration of Battery Level.
    s.acl(t, h, 4, bytes([0x10]) + struct.pack("<HHH", 1, 0xFFFF, 0x2800), False)
    s.acl(t + 1000, h, 4, bytes([0x11, 6]) + struct.pack("<HHH", 1, 3, 0x180F), True)
    s.acl(t + 2000, h, 4, bytes([0x08]) + struct.pack("<HHH", 1, 3, 0x2803), False)
    s.acl(t + 3000, h, 4, bytes([0x09, 7]) + struct.pack("<HBHH", 2, 0x12, 3, 0x2A19), True)
    s.acl(t + 4000, h, 4, bytes([0x0A]) + struct.pack("<H", 3), False)
    s.acl(t + 5000, h, 4, bytes([0x0B, 0x57]), True)
    s.write(path)


def fixture_ibeacon(path):
    s = BTSnoop()
    s.cmd(T0, 0x0C03, b"")
    mfg = b"\x4c\x00" + bytes.fromhex("0215") + bytes.fromhex("e2c56db5dffb48d2b060d0f5a71096e0") + struct.pack(">HHb", 100, 0, -59)
    for i, rssi in enumerate([-60, -61, -62]):
        adv_report(s, T0 + 1000 + i * 100_000, PEER, ad(0x01, b"\x06") + ad(0xFF, mfg), rssi=rssi, evt_type=0x03)
    s.write(path)


FIXTURES = {
    "name_with_address.btsnoop": fixture_name_with_address,
    "packet_comments.pcapng": fixture_packet_comments,
    "h4_unknown_indicators.pcap": fixture_h4_unknown,
    "sniffed_retransmission.pcap": fixture_retransmission,
    "before_1970_fraction.btsnoop": fixture_before_1970,
    "no_att_a.btsnoop": fixture_no_att,
    "no_att_b.btsnoop": fixture_no_att,
    "acl_only.btsnoop": fixture_acl_only,
    "ibeacon.btsnoop": fixture_ibeacon,
}


def main(argv):
    out = argv[0] if argv else "fixtures"
    os.makedirs(out, exist_ok=True)
    for name, make in FIXTURES.items():
        make(os.path.join(out, name))
        print(os.path.join(out, name))


if __name__ == "__main__":
    main(sys.argv[1:])
