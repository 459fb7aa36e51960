#!/usr/bin/env python3
"""Sniffed LE Audio captures whose CIS and BIS PDUs carry real LC3 audio (issue 39): a sine
sweep encoded with lc3py (PyPI, a liblc3 binding), then encrypted as
scripts/le_audio_air_crypto_fixtures.py does (Python's `cryptography`, after Core 6.0 Vol 6
Part E §1-§2), a few PDUs left out on purpose. `bluesift audio` must give the sweep back.

  Tests/Fixtures/le-audio-air/audio_cis.pcap
      The encrypted ACL of encrypted_cis.pcap (LTK_CIS) carrying, before the CIS, ATT over
      L2CAP (PDUs longer than 27 octets split into LL fragments): characteristic discovery
      (services ASCS and BASS; Sink ASE 0x0003, ASE Control Point 0x0005, Broadcast Audio Scan
      Control Point 0x0008),
      Config Codec of ASE 1 (LC3 16 kHz, 10 ms, 80 octets, Front Left) and its Codec
      Configured notification, Config QoS (CIG 1 CIS 2) and QoS Configured, a BASS Set
      Broadcast_Code (BROADCAST_CODE, for `redact`), Enable and Enabling; LL_CIS_REQ/RSP/IND
      of CIG 1 CIS 2 (BN 2 C->P, Max_PDU 40, Max_SDU 80, unframed, ISO_Interval 10 ms). Then
      CIS_EVENTS events: C->P payloads 2e (LLID 0b01, the SDU's first 40 octets) and 2e+1
      (LLID 0b00, its last 40), one LC3 frame of the sweep per SDU; P->C a null PDU. Left out:
      events 10 and 11 whole, the start fragment of event 25, the end fragment of event 40
      (CIS_LOST SDUs lost); the end fragment of event 5 is sent twice (a retransmission).

  Tests/Fixtures/le-audio-air/audio_bis.pcap
      A Broadcast Audio Announcement (Broadcast_ID 0x123456, "Aura") whose train carries an
      encrypted BIGInfo (2 BIS, BN 1, IRC 2, Max_PDU/Max_SDU 155, bisPayloadCount 1000,
      BROADCAST_CODE) and a BASE (LC3 48 kHz, 10 ms, 155 octets: 48_6; BIS 1 Front Left, BIS 2
      Front Right). Then BIS_EVENTS events of one LC3 frame per BIS (BIS 1 the sweep, BIS 2 a
      second sweep), each payload sent twice (IRC 2) in even events. Left out: BIS 1 events 7
      and 20, BIS 2 event 30.

The sweep: sweep(rate, n, f0, f1) below (a logarithmic sine sweep, amplitude 0.5 of full
scale), which AirAudioTests rebuilds in Swift to measure the SNR. Run from the repository
root (needs lc3py and liblc3): python3 scripts/le_audio_air_audio_fixtures.py
"""
import array
import math
import os
import struct
import sys

import lc3

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from le_audio_air_crypto_fixtures import (  # noqa: E402
    ACL_AA, ACL_CRC, ADV_AA, ADV_CRC, BASE_CRC, BROADCAST_CODE, CIS_AA, LTK_CIS, OUT, SEED_AA,
    TRAIN_AA, TRAIN_CRC, Pcap, aes, bis_access_address, bis_announcement, biginfo_acad, ccm, gsk, nonce,
    xor_aa)

CIS_EVENTS, BIS_EVENTS = 50, 40
CIS_DROPPED_EVENTS = [10, 11]                 # both fragments
CIS_DROPPED_START, CIS_DROPPED_END = 25, 40   # one fragment: the SDU is lost all the same
BIS_DROPPED = {1: [7, 20], 2: [30]}


def sweep(rate, n, f0, f1):
    """A logarithmic sine sweep from f0 to f1 Hz over n samples, amplitude 16383."""
    t_end = n / rate
    k = math.log(f1 / f0)
    out = []
    for i in range(n):
        t = i / rate
        phase = 2 * math.pi * f0 * t_end / k * (math.exp(t / t_end * k) - 1)
        out.append(int(round(math.sin(phase) * 16383)))
    return out


def lc3_frames(signal, rate, octets):
    enc = lc3.Encoder(10000, rate)
    n = rate // 100
    return [enc.encode(array.array("h", signal[i * n:(i + 1) * n]).tobytes(), octets, 16) for i in range(len(signal) // n)]


# ------------------------------------------------------------------ CIS
def audio_cis(path):
    p = Pcap()
    connect = bytes.fromhex("010203040506" "111213141516") + struct.pack("<I", ACL_AA) + ACL_CRC.to_bytes(3, "little") \
        + bytes([2]) + struct.pack("<HHHH", 0, 24, 0, 100) + bytes.fromhex("ffffffff1f05")
    p.add(1_000, ADV_AA, bytes([0xC5, len(connect)]) + connect, ADV_CRC, 0, channel=0)
    sn = {True: 0, False: 0}
    ctr = {True: 0, False: 0}
    keys = {}

    def acl(t, central, llid, body):
        hdr = llid | (sn[central] << 3)
        sn[central] ^= 1
        if keys:
            body = ccm(keys["sk"], nonce(ctr[central], central, keys["iv"]), hdr & 0xE3, body)
            ctr[central] += 1
        p.add(t, ACL_AA, bytes([hdr, len(body)]) + body, ACL_CRC, 2 if central else 3)

    rand, ediv = bytes(range(1, 9)), 0x1234
    skdm, ivm = bytes.fromhex("acbdcedfe0f10213"), bytes.fromhex("badcab24")
    skds, ivs = bytes.fromhex("0213243546576879"), bytes.fromhex("deafbabe")
    acl(10_000, True, 3, bytes([0x03]) + rand + struct.pack("<H", ediv) + skdm + ivm)    # LL_ENC_REQ
    acl(10_150, False, 3, bytes([0x04]) + skds + ivs)                                    # LL_ENC_RSP
    acl(40_000, False, 3, bytes([0x05]))                                                 # LL_START_ENC_REQ
    keys["sk"] = aes(LTK_CIS, skds[::-1] + skdm[::-1])
    keys["iv"] = ivm + ivs
    acl(70_000, True, 3, bytes([0x06]))     # LL_START_ENC_RSP
    acl(70_150, False, 3, bytes([0x06]))

    t = [72_000]

    def att(central, pdu):
        """ATT over L2CAP (CID 4) in LL data PDUs of at most 27 octets (Vol 6 Part B §2.4)."""
        l2 = struct.pack("<HH", len(pdu), 4) + pdu
        for i in range(0, len(l2), 27):
            acl(t[0], central, 2 if i == 0 else 1, l2[i:i + 27])
            t[0] += 150
        t[0] += 1_000

    # ATT Read By Group Type (Vol 3 Part F §3.4.4.9): primary services ASCS 0x0001-0x0005,
    # BASS 0x0006-0x0008; Read By Type (§3.4.4.1): characteristic declarations (Vol 3 Part G §3.3.1).
    att(True, bytes([0x10]) + struct.pack("<HHH", 0x0001, 0xFFFF, 0x2800))
    att(False, bytes([0x11, 6]) + struct.pack("<HHH", 0x0001, 0x0005, 0x184E) + struct.pack("<HHH", 0x0006, 0x0008, 0x184F))
    att(True, bytes([0x08]) + struct.pack("<HHH", 0x0001, 0xFFFF, 0x2803))
    att(False, bytes([0x09, 7]) + struct.pack("<HBHH", 0x0002, 0x12, 0x0003, 0x2BC4)
        + struct.pack("<HBHH", 0x0004, 0x0C, 0x0005, 0x2BC6) + struct.pack("<HBHH", 0x0007, 0x0C, 0x0008, 0x2BC7))
    # ASCS 1.0 §5.1 Config Codec: ASE 1, target latency 2, target PHY 2, LC3, BAP §4.3.2 LTVs.
    cc = bytes.fromhex("020103" "020201" "050301000000") + bytes([3, 4]) + struct.pack("<H", 80)
    lc3_id = bytes.fromhex("0600000000")
    att(True, bytes([0x12]) + struct.pack("<H", 0x0005) + bytes([0x01, 1, 1, 2, 2]) + lc3_id + bytes([len(cc)]) + cc)
    att(False, bytes([0x13]))
    # ASCS §4.1: Codec Configured (framing, PHY, RTN, latency, presentation delays, codec).
    att(False, bytes([0x1B]) + struct.pack("<H", 0x0003) + bytes([1, 1, 0, 2, 2]) + struct.pack("<H", 10)
        + (20_000).to_bytes(3, "little") + (40_000).to_bytes(3, "little") + bytes(6) + lc3_id + bytes([len(cc)]) + cc)
    # §5.2 Config QoS: CIG 1 CIS 2, SDU interval 10 ms, unframed, 2M, Max_SDU 80, RTN 2, 10 ms, 40 ms.
    qos = bytes([1, 2]) + (10_000).to_bytes(3, "little") + bytes([0, 2]) + struct.pack("<H", 80) + bytes([2]) \
        + struct.pack("<H", 10) + (40_000).to_bytes(3, "little")
    att(True, bytes([0x12]) + struct.pack("<H", 0x0005) + bytes([0x02, 1, 1]) + qos)
    att(False, bytes([0x13]))
    att(False, bytes([0x1B]) + struct.pack("<H", 0x0003) + bytes([1, 2]) + qos)
    # BASS 1.0 §3.1.1.5 Set Broadcast_Code: Source_ID 0, the code (a key: `redact` removes it).
    att(True, bytes([0x12]) + struct.pack("<H", 0x0008) + bytes([0x04, 0]) + BROADCAST_CODE)
    att(False, bytes([0x13]))
    # §5.3 Enable (no metadata) and Enabling.
    att(True, bytes([0x12]) + struct.pack("<H", 0x0005) + bytes([0x03, 1, 1, 0]))
    att(False, bytes([0x13]))
    att(False, bytes([0x1B]) + struct.pack("<H", 0x0003) + bytes([1, 3, 1, 2, 0]))

    req = bytes([0x1F, 1, 2, 2, 2]) + struct.pack("<HH", 80, 20) + (10_000).to_bytes(3, "little") * 2 \
        + struct.pack("<HH", 40, 20) + bytes([2]) + (2500).to_bytes(3, "little") + bytes([0x12, 1, 1]) \
        + struct.pack("<H", 8) + (500).to_bytes(3, "little") + (1500).to_bytes(3, "little") + struct.pack("<H", 10)
    acl(100_000, True, 3, req)
    acl(100_150, False, 3, bytes([0x20]) + (500).to_bytes(3, "little") + (1500).to_bytes(3, "little") + struct.pack("<H", 10))
    ind = bytes([0x21]) + struct.pack("<I", CIS_AA) + (1000).to_bytes(3, "little") + (5000).to_bytes(3, "little") \
        + (5000).to_bytes(3, "little") + struct.pack("<H", 12)
    t_ind = 130_000
    acl(t_ind, True, 3, ind)

    cis_iv = xor_aa(keys["iv"], CIS_AA)
    frames = lc3_frames(sweep(16000, CIS_EVENTS * 160, 200, 4000), 16000, 80)

    def cis(t, central, counter, llid, body, seq, cie=False):
        hdr = llid | ((seq & 1) << 2) | (((seq >> 1) & 1) << 3) | (0x10 if cie else 0)
        sealed = ccm(keys["sk"], nonce(counter, central, cis_iv), hdr & 0xA3, body)
        p.add(t, CIS_AA, bytes([hdr, len(sealed)]) + sealed, ACL_CRC, 4 if central else 5)

    def null(t, central, seq):
        p.add(t, CIS_AA, bytes([0x40 | ((seq & 1) << 2), 0]), ACL_CRC, 4 if central else 5)

    first = t_ind + 3 * 30_000 + 1000
    for e in range(CIS_EVENTS):
        t0 = first + e * 10_000
        sdu = frames[e]
        if e not in CIS_DROPPED_EVENTS and e != CIS_DROPPED_START:
            cis(t0, True, 2 * e, 1, sdu[:40], 2 * e)
        null(t0 + 150, False, e)
        if e not in CIS_DROPPED_EVENTS and e != CIS_DROPPED_END:
            cis(t0 + 2500, True, 2 * e + 1, 0, sdu[40:], 2 * e + 1, cie=True)
            if e == 5:
                cis(t0 + 2800, True, 2 * e + 1, 0, sdu[40:], 2 * e + 1, cie=True)
        null(t0 + 2650, False, e)
    p.write(path)


# ------------------------------------------------------------------ BIS
def audio_bis(path):
    p = Pcap()
    bis_announcement(p)
    giv = bytes.fromhex("a1b2c3d4e5f60718")
    gskd = bytes.fromhex("0f1e2d3c4b5a69788796a5b4c3d2e1f0")
    count, bn, iso, octets = 1000, 1, 8, 155
    ext = bytes([0x00]) + biginfo_acad(count, bn, iso, octets, giv, gskd)
    # BAP 1.0.1 §3.7.2.2 BASE: presentation delay 40 ms, one subgroup of two BISes, LC3
    # 48 kHz 10 ms 155 octets, BIS 1 Front Left, BIS 2 Front Right.
    cc = bytes.fromhex("020108" "020201") + bytes([3, 4]) + struct.pack("<H", octets)
    base = struct.pack("<H", 0x1851) + (40_000).to_bytes(3, "little") + bytes([1, 2]) + bytes.fromhex("0600000000") \
        + bytes([len(cc)]) + cc + bytes([0]) + bytes([1, 6]) + bytes.fromhex("050301000000") + bytes([2, 6]) + bytes.fromhex("050302000000")
    adv = bytes([len(base) + 1, 0x16]) + base
    body = bytes([len(ext)]) + ext + adv
    t_big = 300_000
    p.add(t_big, TRAIN_AA, bytes([0x07, len(body)]) + body, TRAIN_CRC, 1, channel=13)

    key = gsk(BROADCAST_CODE, gskd)
    anchor = t_big + 100 * 30
    n = BIS_EVENTS * 480
    frames = {1: lc3_frames(sweep(48000, n, 200, 4000), 48000, octets), 2: lc3_frames(sweep(48000, n, 300, 3000), 48000, octets)}

    def bis(t, b, counter, data, cssn):
        aa = bis_access_address(SEED_AA, b)
        hdr = 0x00 | (cssn & 7) << 2
        sealed = ccm(key, nonce(counter, True, xor_aa(giv, aa)), hdr & 0xC3, data)
        p.add(t, aa, bytes([hdr, len(sealed)]) + sealed, BASE_CRC << 8 | b, 6)

    for e in range(BIS_EVENTS):
        t0 = anchor + e * 10_000
        for b in (1, 2):
            if e in BIS_DROPPED[b]:
                continue
            bis(t0 + (b - 1) * 1500, b, count + e, frames[b][e], e)
            if e % 2 == 0:
                bis(t0 + 3000 + (b - 1) * 1500, b, count + e, frames[b][e], e)    # IRC: again
    p.write(path)


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    audio_cis(os.path.join(OUT, "audio_cis.pcap"))
    audio_bis(os.path.join(OUT, "audio_bis.pcap"))
    print("wrote audio_cis.pcap, audio_bis.pcap to", os.path.normpath(OUT))
