#!/usr/bin/env python3
"""Sniffed captures of encrypted LE Audio streams (issue 39), built from bytes and encrypted
with the `cryptography` package (AES-ECB, AES-CMAC, AES-CCM), following Core 6.0 Vol 6 Part E
§1-§2 as written there, apart from bluesift's Swift code:

  Tests/Fixtures/le-audio-air/encrypted_cis.pcap   (pcap, LINKTYPE 256 with direction)
      An LE connection encrypted with LTK_CIS (LL_ENC_REQ/RSP in plaintext, then AES-CCM with
      the session key e(LTK, SKDs||SKDm) and IV = IVs||IVm, counters per direction), carrying
      LL_CIS_REQ/RSP/IND of CIG 1 CIS 2 (ISO_Interval 10 ms, BN 2 C->P, 1 P->C, FT 1, NSE 2,
      unframed). Then the CIS: session key of the ACL, IV with its low 32 bits XORed with the
      CIS access address, nonce = cisPayloadCounter (39 bits) | direction bit (1 from the
      central), AAD = header & 0xA3. Each event e: C->P payloads 2e (LLID 0b01, an SDU's first
      40 octets) and 2e+1 (LLID 0b00, its last 40), P->C payload e (LLID 0b00, a 20-octet SDU)
      and a null PDU. Events 0, 1, 2, 7, 8 are in the capture (3-6 missed); in event 7 the
      C->P start fragment (payload 14) is missed; in event 8 the P->C PDU has a damaged MIC.

  Tests/Fixtures/le-audio-air/encrypted_bis.pcap
      AUX_ADV_IND (SyncInfo, Broadcast Audio Announcement), AUX_SYNC_IND with an encrypted
      BIGInfo (2 BIS, ISO_Interval 10 ms, BN 1, IRC 2, bisPayloadCount 1000 for the BIG event
      BIG_Offset after it, GIV, GSKD), then BIS PDUs: GSK = h8(h6(h7("BIG1", code), "BIG2"),
      GSKD, "BIG3"), IV = GIV with its low 32 bits XORed with the BIS access address, nonce =
      bisPayloadCounter | direction bit 1, AAD = header & 0xC3. BIS 1 in events 0-2 (event 0
      twice: IRC) and 6, BIS 2 in events 0 and 6.

The keys are in the module docstring's constants (LTK_CIS, BROADCAST_CODE); the Swift tests
give them on the command line. Run from the repository root:
python3 scripts/le_audio_air_crypto_fixtures.py
"""
import os
import struct
import sys

from cryptography.hazmat.primitives import cmac
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESCCM

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from summary_fixtures import ble_crc  # noqa: E402  (CRC-24, Vol 6 Part B §3.1.1)

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Fixtures", "le-audio-air")

LTK_CIS = bytes.fromhex("4c68384139f574d836bcf34e9dfb01bf")    # most significant octet first
BROADCAST_CODE = b"Auracast1234".ljust(16, b"\0")               # as HCI/BASS carry it

ACL_AA, ACL_CRC = 0x50654A27, 0x123456
CIS_AA = 0x6B7D2C19
TRAIN_AA, TRAIN_CRC = 0x2F8E3D4C, 0x5AA55A
SEED_AA, BASE_CRC = 0x4D2A1C3B, 0xA5C3
ADV_AA, ADV_CRC = 0x8E89BED6, 0x555555


class Pcap:
    """pcap LINKTYPE 256 (LE LL with PHDR): channel, signal, noise, AA offenses, reference AA,
    flags (dewhitened, signal valid, ref AA valid, CRC checked and valid, PDU type << 7)."""
    def __init__(self):
        self.pkts = []

    def add(self, t, aa, pdu, crc_init, pdu_type, channel=5):
        flags = 0x0001 | 0x0002 | 0x0010 | 0x0400 | 0x0800 | (pdu_type << 7)
        rec = struct.pack("<BbbBIH", channel, -50, -90, 0, aa, flags) + struct.pack("<I", aa) + pdu + ble_crc(pdu, crc_init)
        self.pkts.append((t, rec))

    def write(self, path):
        with open(path, "wb") as f:
            f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 256))
            for t, d in sorted(self.pkts, key=lambda x: x[0]):
                f.write(struct.pack("<IIII", t // 1_000_000, t % 1_000_000, len(d), len(d)) + d)


def aes(key, block):
    e = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    return e.update(block) + e.finalize()


def aes_cmac(key, msg):
    c = cmac.CMAC(algorithms.AES(key))
    c.update(msg)
    return c.finalize()


def nonce(counter, direction, iv):
    """Vol 6 Part E §2.1: 39-bit counter and the direction bit, least significant first, then the IV."""
    c = counter.to_bytes(5, "little")
    return c[:4] + bytes([(c[4] & 0x7F) | (0x80 if direction else 0)]) + iv


def ccm(key, n, aad, plain):
    return AESCCM(key, tag_length=4).encrypt(n, plain, bytes([aad]))


def xor_aa(iv, aa):
    return bytes(a ^ b for a, b in zip(iv[:4], struct.pack("<I", aa))) + iv[4:]


def payload(seed, n):
    return bytes((seed * 7 + i) & 0xFF for i in range(n))


# ------------------------------------------------------------------ CIS
def encrypted_cis(path):
    p = Pcap()
    connect = bytes.fromhex("010203040506" "111213141516") + struct.pack("<I", ACL_AA) + ACL_CRC.to_bytes(3, "little") \
        + bytes([2]) + struct.pack("<HHHH", 0, 24, 0, 100) + bytes.fromhex("ffffffff1f05")
    p.add(1_000, ADV_AA, bytes([0xC5, len(connect)]) + connect, ADV_CRC, 0, channel=0)
    sn = {True: 0, False: 0}

    def acl(t, central, llid, body, encrypt=None):
        hdr = llid | (sn[central] << 3)
        sn[central] ^= 1
        if encrypt is not None:
            sk, iv, counter = encrypt
            body = ccm(sk, nonce(counter, central, iv), hdr & 0xE3, body)
        p.add(t, ACL_AA, bytes([hdr, len(body)]) + body, ACL_CRC, 2 if central else 3)

    rand, ediv = bytes(range(1, 9)), 0x1234
    skdm, ivm = bytes.fromhex("acbdcedfe0f10213"), bytes.fromhex("badcab24")
    skds, ivs = bytes.fromhex("0213243546576879"), bytes.fromhex("deafbabe")
    acl(10_000, True, 3, bytes([0x03]) + rand + struct.pack("<H", ediv) + skdm + ivm)    # LL_ENC_REQ
    acl(10_150, False, 3, bytes([0x04]) + skds + ivs)                                    # LL_ENC_RSP
    acl(40_000, False, 3, bytes([0x05]))                                                 # LL_START_ENC_REQ
    sk = aes(LTK_CIS, skds[::-1] + skdm[::-1])    # SKD = SKDs || SKDm, most significant first
    iv = ivm + ivs                                # IV = IVs || IVm, least significant first
    ctr = {True: 0, False: 0}

    def enc(t, central, body):
        acl(t, central, 3, body, (sk, iv, ctr[central]))
        ctr[central] += 1

    enc(70_000, True, bytes([0x06]))     # LL_START_ENC_RSP
    enc(70_150, False, bytes([0x06]))
    # LL_CIS_REQ (§2.4.2.29): CIG 1, CIS 2, PHY 2M both, Max_SDU 80/20 unframed, SDU interval
    # 10 ms, Max_PDU 40/20, NSE 2, sub-interval 2500 µs, BN 2/1, FT 1/1, ISO_Interval 8.
    req = bytes([0x1F, 1, 2, 2, 2]) + struct.pack("<HH", 80, 20) + (10_000).to_bytes(3, "little") * 2 \
        + struct.pack("<HH", 40, 20) + bytes([2]) + (2500).to_bytes(3, "little") + bytes([0x12, 1, 1]) \
        + struct.pack("<H", 8) + (500).to_bytes(3, "little") + (1500).to_bytes(3, "little") + struct.pack("<H", 10)
    enc(100_000, True, req)
    enc(100_150, False, bytes([0x20]) + (500).to_bytes(3, "little") + (1500).to_bytes(3, "little") + struct.pack("<H", 10))
    ind = bytes([0x21]) + struct.pack("<I", CIS_AA) + (1000).to_bytes(3, "little") + (5000).to_bytes(3, "little") \
        + (5000).to_bytes(3, "little") + struct.pack("<H", 12)
    t_ind = 130_000
    enc(t_ind, True, ind)

    cis_iv = xor_aa(iv, CIS_AA)

    def cis(t, central, counter, llid, body, seq, cie=False, damage=False):
        # NESN/SN/CIE vary: the AAD masks them.
        hdr = llid | ((seq & 1) << 2) | (((seq >> 1) & 1) << 3) | (0x10 if cie else 0)
        sealed = ccm(sk, nonce(counter, central, cis_iv), hdr & 0xA3, body)
        if damage:
            sealed = sealed[:-1] + bytes([sealed[-1] ^ 0x01])
        p.add(t, CIS_AA, bytes([hdr, len(sealed)]) + sealed, ACL_CRC, 4 if central else 5)

    def null(t, central, seq):
        p.add(t, CIS_AA, bytes([0x40 | ((seq & 1) << 2), 0]), ACL_CRC, 4 if central else 5)

    first = t_ind + 3 * 30_000 + 1000     # the instant's connection event, plus CIS_Offset
    for e in [0, 1, 2, 7, 8]:
        t0 = first + e * 10_000
        sdu = payload(e, 80)
        if e != 7:
            cis(t0, True, 2 * e, 1, sdu[:40], e)
        cis(t0 + 150, False, e, 0, payload(100 + e, 20), e + 1, damage=(e == 8))
        cis(t0 + 2500, True, 2 * e + 1, 0, sdu[40:], e + 2, cie=True)
        null(t0 + 2650, False, e)
    p.write(path)


# ------------------------------------------------------------------ BIS
def bis_access_address(seed, n):
    """Vol 6 Part B §2.1.2 (the same construction tshark prints)."""
    d = (35 * n + 42) & 0x7F
    dw = 0xFC000000 if d & 1 else 0
    dw |= ((d >> 1) & 1) << 25 | ((d >> 6) & 1) << 24 | ((d >> 1) & 1) << 23
    dw |= ((d >> 5) & 1) << 21 | ((d >> 4) & 1) << 20 | ((d >> 3) & 1) << 18 | ((d >> 2) & 1) << 17
    return seed ^ dw


def gsk(code, gskd):
    """Vol 6 Part B §4.4.6.10, the functions of Vol 3 Part H §2.2 / Vol 6 Part E §1.1.1 on
    128-bit values written most significant octet first (HCI carries them least first)."""
    igltk = aes_cmac(bytes(12) + b"BIG1", code[::-1])      # h7(SALT, W) = AES-CMAC_SALT(W)
    gltk = aes_cmac(igltk, b"BIG2")                        # h6(W, keyID) = AES-CMAC_W(keyID)
    ik = aes_cmac(gskd[::-1], gltk)                        # h8(K, S, keyID): IK = AES-CMAC_S(K)
    return aes_cmac(ik, b"BIG3")                           #                  AES-CMAC_IK(keyID)


def bis_announcement(p):
    """The broadcast's AUX_ADV_IND (SyncInfo to the train, Broadcast_ID 0x123456, name "Aura")."""
    sync = struct.pack("<HH", 0x2A | 1 << 13, 8) + (0x1FFFFFFFFF | 5 << 37).to_bytes(5, "little") \
        + struct.pack("<I", TRAIN_AA) + TRAIN_CRC.to_bytes(3, "little") + struct.pack("<H", 3)
    ext = bytes([0x01 | 0x08 | 0x20]) + bytes.fromhex("665544332211") + struct.pack("<H", 0x1001) + sync
    adv = bytes.fromhex("06165218563412" "053041757261")   # Broadcast_ID 0x123456, Broadcast_Name "Aura"
    body = bytes([len(ext)]) + ext + adv
    p.add(200_000, ADV_AA, bytes([0x47, len(body)]) + body, ADV_CRC, 1, channel=10)


def biginfo_acad(count, bn, iso, octets, giv, gskd):
    """The train's ACAD with BIGInfo (Vol 6 Part B §4.4.6.4): 2 BISes, NSE 2, IRC 2, encrypted."""
    big = struct.pack("<I", 100 | 0 << 14 | iso << 15 | 2 << 27)                 # BIG_Offset 100 × 30 µs
    big += struct.pack("<I", 2 | bn << 5 | 3000 << 8 | 0 << 28)                   # NSE 2, BN 1, sub-interval, PTO 0
    big += (1500 | 2 << 20).to_bytes(3, "little") + bytes([octets, 0]) + struct.pack("<I", SEED_AA)   # spacing, IRC 2
    big += struct.pack("<I", 10_000 | octets << 20) + struct.pack("<H", BASE_CRC)
    big += (0x1FFFFFFFFF | 1 << 37).to_bytes(5, "little") + count.to_bytes(5, "little") + giv + gskd
    return bytes([len(big) + 1, 0x2C]) + big


def encrypted_bis(path):
    p = Pcap()
    bis_announcement(p)
    giv = bytes.fromhex("a1b2c3d4e5f60718")
    gskd = bytes.fromhex("0f1e2d3c4b5a69788796a5b4c3d2e1f0")
    count, bn, iso = 1000, 1, 8
    ext = bytes([0x00]) + biginfo_acad(count, bn, iso, 40, giv, gskd)
    body = bytes([len(ext)]) + ext
    t_big = 300_000
    p.add(t_big, TRAIN_AA, bytes([0x07, len(body)]) + body, TRAIN_CRC, 1, channel=13)

    key = gsk(BROADCAST_CODE, gskd)
    anchor = t_big + 100 * 30

    def bis(t, n, counter, data, cssn, cstf=False):
        aa = bis_access_address(SEED_AA, n)
        hdr = 0x00 | (cssn & 7) << 2 | (0x20 if cstf else 0)
        sealed = ccm(key, nonce(counter, True, xor_aa(giv, aa)), hdr & 0xC3, data)
        p.add(t, aa, bytes([hdr, len(sealed)]) + sealed, BASE_CRC << 8 | n, 6)

    for e in [0, 1, 2, 6]:
        t0 = anchor + e * 10_000
        bis(t0, 1, count + e, payload(200 + e, 40), e, cstf=(e == 1))
        if e == 0:
            bis(t0 + 3000, 1, count + e, payload(200 + e, 40), e)     # IRC: the same payload again
        if e in (0, 6):
            bis(t0 + 1500, 2, count + e, payload(300 + e, 40), e)
    p.write(path)


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    encrypted_cis(os.path.join(OUT, "encrypted_cis.pcap"))
    encrypted_bis(os.path.join(OUT, "encrypted_bis.pcap"))
    print("wrote encrypted_cis.pcap, encrypted_bis.pcap to", os.path.normpath(OUT))
