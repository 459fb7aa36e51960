#!/usr/bin/env python3
"""Minimal captures that reproduce the issue-27 defects no shippable capture shows.

    scripts/summary_fixtures.py OUTDIR

Writes, built from bytes only (no third-party data; stdlib only):

  hfp_sdp_both_sides.btsnoop     1   car kit: both sides' SDP records name server channel 2
                                     (car: Handsfree, phone: Headset AG); the phone opens
                                     DLCI 4 (channel 2, D=0: the car's) and HFP AT commands run
  indication_beside_request.btsnoop 2a host sends a Read By Type Request, then an Indication;
                                     both are answered
  sniffed_crc_bad_response.pcap  2b  Read Request; its response seen with a bad CRC, acknowledged
  sniffed_terminate_ack.pcap     3   LL_TERMINATE_IND, then the peer's Empty PDU acknowledging it
  sniffed_supervision_timeout.pcap 8a data PDUs stop; advertising goes on for 3 s (timeout 1 s)
  gatt_no_primary_discovery.btsnoop 8c characteristic declarations and Find Information, no
                                     Read By Group Type
  fira_member_uuids.btsnoop      9a  service 0xFFF0 with characteristics 0xFFF3 and 0xFFF4
  smp_keysize_253.btsnoop        9c  Pairing Request / Response with Maximum Encryption Key Size 253
  sc_with_ltk.pcap               8b  LE Secure Connections pairing, then a link encrypted with the
                                     LTK 00112233445566778899aabbccddeeff (for `info --ltk`)
  pklg_old_notes.pklg            10  a PacketLogger note 6 days before 9 s of HCI records
  pklg_mid_connection.pklg       6a  a PacketLogger capture that starts during a connection
  android_appended_back.cfa    36.5  an Android snoop log (.cfa) whose last records go back in
                                     time: a connection from 10 s to 5 min, then records of it
                                     dated 20 s…80 s appended at the end
  reserved_handle_diagnostics.btsnoop 36.6 an LE connection on 0x0040 beside a Broadcom-style
                                     diagnostic stream on reserved ACL handle 0x0ff1
  mesh_two_databases.btsnoop   36.7  one mesh node, two connections: the Provisioning service
                                     (0x1827) in the first, the Proxy service (0x1828) in the
                                     second (its database changed), each discovered and used
  mesh_no_discovery.btsnoop    36.7  the same node, a write and no discovery (for --gatt)
  sniffed_crc_unchecked.pcap   36/1 a HackRF-style capture: CRCs unchecked by the sniffer, corrupted
                                     advertisements, noise on unknown access addresses, a bit-flipped
                                     access address, a link whose CONNECT_IND was missed
  sniffed_all_crc_bad.pcap     36/2 every packet CRC-bad
  whad_decrypted.pcap          36/3 WHAD: payloads decrypted by the sniffer, no flag says so
  sniffed_direction_unspecified.pcap 36/4 the peripheral's PDUs with direction unspecified
  sniffed_connect_ind_only.pcap 36/8 a CONNECT_IND and no data PDU
  missing_confirms.pcap          11  crackle's test 01 without its two Pairing Confirms (records
                                     569 and 572): byte for byte crackle's tests/03_stk_brute/
                                     missing_confirms.pcap (BSD-2-Clause); written only when
                                     ../shared/captures/crackle/01_crack is there

Sniffer captures are pcap DLT 256 (LE link layer with RF header) with the direction in the
header's PDU type and correct CRCs (checked against crackle's DLT 256 capture), except the
one CRC-bad PDU. Each file's expected facts are in docs/summary-defects.md.
"""
import os
import struct
import sys

BTSNOOP_EPOCH_US = 0x00DCDDB30F2F8000   # 0000-01-01 → 1970-01-01 in µs
T0 = 1_790_000_000_000_000              # 2026-09-21, µs since 1970

HOST = bytes.fromhex("a0b1c2d3e4f5")     # phone (little-endian on the wire: reversed below)
PEER = bytes.fromhex("112233445566")     # car kit / peripheral


def addr(a):   # BD_ADDR as sent: least significant octet first
    return a[::-1]


# ---------------------------------------------------------------- btsnoop (H4, 1002)
class BTSnoop:
    def __init__(self):
        self.recs = []

    def add(self, t_us, h4, received, command_or_event):
        flags = (1 if received else 0) | (2 if command_or_event else 0)
        self.recs.append((t_us, flags, h4))

    def cmd(self, t, opcode, params):
        self.add(t, bytes([1]) + struct.pack("<HB", opcode, len(params)) + params, False, True)

    def evt(self, t, code, params):
        self.add(t, bytes([4, code, len(params)]) + params, True, True)

    def acl(self, t, handle, cid, payload, received, start=True):
        l2 = struct.pack("<HH", len(payload), cid) + payload
        hdr = struct.pack("<HH", handle | ((0x2 if start else 0x1) << 12), len(l2))
        self.add(t, bytes([2]) + hdr + l2, received, False)

    def raw_acl(self, t, handle, data, received):
        """An ACL packet whose payload is not L2CAP (vendor diagnostics)."""
        self.add(t, bytes([2]) + struct.pack("<HH", handle | (0x2 << 12), len(data)) + data, received, False)

    def write(self, path):
        with open(path, "wb") as f:
            f.write(b"btsnoop\0" + struct.pack(">II", 1, 1002))
            for t, flags, data in self.recs:
                f.write(struct.pack(">IIIIq", len(data), len(data), flags, 0, t + BTSNOOP_EPOCH_US) + data)


def le_conn_complete(s, t, handle, peer=PEER, interval=24, timeout=72):
    s.evt(t, 0x3E, bytes([0x01, 0x00]) + struct.pack("<H", handle) + bytes([0x00, 0x00]) + addr(peer)
          + struct.pack("<HHHB", interval, 0, timeout, 0))


def conn_complete(s, t, handle, peer=PEER):
    s.evt(t, 0x03, bytes([0x00]) + struct.pack("<H", handle) + addr(peer) + bytes([0x01, 0x00]))


def disconnect(s, t, handle, reason=0x13):
    s.evt(t, 0x05, bytes([0x00]) + struct.pack("<HB", handle, reason))


# ---------------------------------------------------------------- 1: HFP car kit
def de_seq(*items):
    body = b"".join(items)
    return bytes([0x35, len(body)]) + body


def uuid16(u):
    return bytes([0x19]) + struct.pack(">H", u)


def u16(v):
    return bytes([0x09]) + struct.pack(">H", v)


def u8(v):
    return bytes([0x08, v])


def sdp_record(service_class, channel):
    return de_seq(u16(0x0001), de_seq(uuid16(service_class), uuid16(0x1203)),
                  u16(0x0004), de_seq(de_seq(uuid16(0x0100)), de_seq(uuid16(0x0003), u8(channel))),
                  u16(0x0009), de_seq(de_seq(uuid16(0x111E if service_class in (0x111E, 0x111F) else 0x1108), u16(0x0107))))


def sdp_ssa_request(tid, uuid):
    params = de_seq(uuid16(uuid)) + struct.pack(">H", 0xFFFF) + de_seq(bytes([0x0A]) + struct.pack(">HH", 0x0000, 0xFFFF)) + b"\x00"
    return bytes([0x06]) + struct.pack(">HH", tid, len(params)) + params


def sdp_ssa_response(tid, record):
    lists = de_seq(record)
    params = struct.pack(">H", len(lists)) + lists + b"\x00"
    return bytes([0x07]) + struct.pack(">HH", tid, len(params)) + params


def rfcomm_fcs(data):
    crc = 0xFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0xE0 if crc & 1 else crc >> 1
    return 0xFF - crc


def rfcomm(dlci, cr, control, info=b""):
    a = (dlci << 2) | (cr << 1) | 1
    length = bytes([(len(info) << 1) | 1])
    fcs = rfcomm_fcs(bytes([a, control]) + (length if control != 0xEF else b""))
    return bytes([a, control]) + length + info + bytes([fcs])


def l2cap_signal(code, ident, data):
    return bytes([code, ident]) + struct.pack("<H", len(data)) + data


def fixture_hfp(path):
    s, h, t = BTSnoop(), 0x000B, T0
    conn_complete(s, t, h)
    # phone → car: SDP channel (PSM 1): phone CID 0x0040, car CID 0x0041
    s.acl(t + 1000, h, 1, l2cap_signal(0x02, 1, struct.pack("<HH", 0x0001, 0x0040)), False)
    s.acl(t + 2000, h, 1, l2cap_signal(0x03, 1, struct.pack("<HHHH", 0x0041, 0x0040, 0, 0)), True)
    s.acl(t + 3000, h, 0x0041, sdp_ssa_request(1, 0x111E), False)
    s.acl(t + 4000, h, 0x0040, sdp_ssa_response(1, sdp_record(0x111E, 2)), True)   # car: Handsfree on ch 2
    # car → phone: SDP (car CID 0x0050, phone CID 0x0060); the phone answers with its HSP AG on ch 2
    s.acl(t + 5000, h, 1, l2cap_signal(0x02, 2, struct.pack("<HH", 0x0001, 0x0050)), True)
    s.acl(t + 6000, h, 1, l2cap_signal(0x03, 2, struct.pack("<HHHH", 0x0060, 0x0050, 0, 0)), False)
    s.acl(t + 7000, h, 0x0060, sdp_ssa_request(1, 0x1112), True)
    s.acl(t + 8000, h, 0x0050, sdp_ssa_response(1, sdp_record(0x1112, 2)), False)  # phone: Headset AG on ch 2
    # phone → car: RFCOMM (PSM 3): phone CID 0x0042, car CID 0x0043
    s.acl(t + 9000, h, 1, l2cap_signal(0x02, 3, struct.pack("<HH", 0x0003, 0x0042)), False)
    s.acl(t + 10000, h, 1, l2cap_signal(0x03, 3, struct.pack("<HHHH", 0x0043, 0x0042, 0, 0)), True)
    s.acl(t + 11000, h, 0x0043, rfcomm(0, 1, 0x3F), False)    # SABM DLCI 0 (phone opens the mux)
    s.acl(t + 12000, h, 0x0042, rfcomm(0, 1, 0x73), True)     # UA
    s.acl(t + 13000, h, 0x0043, rfcomm(4, 1, 0x3F), False)    # SABM DLCI 4: channel 2, D=0 → the car's
    s.acl(t + 14000, h, 0x0042, rfcomm(4, 1, 0x73), True)     # UA
    lines = [(True, b"AT+BRSF=191\r"), (False, b"\r\n+BRSF: 871\r\n\r\nOK\r\n"),
             (True, b"AT+CIND=?\r"), (False, b'\r\n+CIND: ("service",(0,1)),("call",(0,1))\r\n\r\nOK\r\n'),
             (True, b"AT+CIND?\r"), (False, b"\r\n+CIND: 1,0\r\n\r\nOK\r\n"),
             (True, b"AT+BIA=0,0,1,1\r"), (False, b"\r\nOK\r\n")]
    for i, (from_car, text) in enumerate(lines):
        if from_car:
            s.acl(t + 20000 + i * 1000, h, 0x0042, rfcomm(4, 0, 0xEF, text), True)
        else:
            s.acl(t + 20000 + i * 1000, h, 0x0043, rfcomm(4, 1, 0xEF, text), False)
    disconnect(s, t + 40000, h)
    s.write(path)


# ---------------------------------------------------------------- LE over HCI
def fixture_indication(path):
    s, h, t = BTSnoop(), 0x0040, T0
    le_conn_complete(s, t, h)
    s.acl(t + 10_000, h, 4, bytes.fromhex("080100ffff0328"), False)           # Read By Type Request (host = client)
    s.acl(t + 11_000, h, 4, bytes.fromhex("1d03000100ffff"), False)           # Indication (host = server)
    s.acl(t + 30_000, h, 4, bytes.fromhex("090702002003000" "52a"), True)      # Read By Type Response
    s.acl(t + 35_000, h, 4, bytes.fromhex("1e"), True)                         # Confirmation
    disconnect(s, t + 100_000, h)
    s.write(path)


def fixture_gatt_no_primary(path):
    s, h, t = BTSnoop(), 0x0040, T0
    le_conn_complete(s, t, h)
    s.acl(t + 10_000, h, 4, bytes.fromhex("080100ffff0328"), False)           # Read By Type 0x2803
    s.acl(t + 20_000, h, 4, bytes.fromhex("0907100010110037" "2a"), True)     # 0x0010: props 0x10, value 0x0011, 0x2A37
    s.acl(t + 30_000, h, 4, bytes.fromhex("0812001200" "0328"), False)
    s.acl(t + 40_000, h, 4, bytes.fromhex("010812000a"), True)                 # Attribute Not Found
    s.acl(t + 50_000, h, 4, bytes.fromhex("0412001200"), False)               # Find Information 0x0012
    s.acl(t + 60_000, h, 4, bytes.fromhex("050112000229"), True)               # 0x0012 = CCCD
    s.acl(t + 70_000, h, 4, bytes.fromhex("1212000100"), False)               # write CCCD
    s.acl(t + 80_000, h, 4, bytes.fromhex("13"), True)
    s.acl(t + 90_000, h, 4, bytes.fromhex("1b1100" "0648"), True)              # notification
    disconnect(s, t + 200_000, h)
    s.write(path)


def fixture_fira(path):
    s, h, t = BTSnoop(), 0x0040, T0
    le_conn_complete(s, t, h)
    s.acl(t + 10_000, h, 4, bytes.fromhex("100100ffff0028"), False)
    s.acl(t + 20_000, h, 4, bytes.fromhex("1106100016" "00f0ff"), True)       # service 0xFFF0 [0x0010-0x0016]
    s.acl(t + 30_000, h, 4, bytes.fromhex("101700ffff0028"), False)
    s.acl(t + 40_000, h, 4, bytes.fromhex("011017000a"), True)
    s.acl(t + 50_000, h, 4, bytes.fromhex("081000160003" "28"), False)
    s.acl(t + 60_000, h, 4, bytes.fromhex("0907" "1100041200f3ff" "1300101400f4ff"), True)
    s.acl(t + 70_000, h, 4, bytes.fromhex("081500160003" "28"), False)
    s.acl(t + 80_000, h, 4, bytes.fromhex("010815000a"), True)
    s.acl(t + 90_000, h, 4, bytes.fromhex("52120001"), False)                  # Write Command 0xFFF3
    s.acl(t + 100_000, h, 4, bytes.fromhex("1b140002"), True)                  # Notification 0xFFF4
    disconnect(s, t + 200_000, h)
    s.write(path)


def fixture_smp253(path):
    s, h, t = BTSnoop(), 0x0040, T0
    le_conn_complete(s, t, h)
    s.acl(t + 10_000, h, 6, bytes.fromhex("01030001fd0707"), False)           # Pairing Request, key size 253
    s.acl(t + 20_000, h, 6, bytes.fromhex("02030001fd0707"), True)            # Pairing Response, key size 253
    disconnect(s, t + 100_000, h)
    s.write(path)


# ---------------------------------------------------------------- PacketLogger (big-endian)
def fixture_pklg(path):
    recs = []

    def rec(t_us, typ, payload):
        recs.append(struct.pack(">IIIB", 9 + len(payload), t_us // 1_000_000, t_us % 1_000_000, typ) + payload)

    t = T0
    rec(t, 0xFC, b"PacketLogger note: logging configured\x00")
    t1 = t + 6 * 86_400_000_000
    h = 0x0040
    rec(t1, 0x01, bytes([0x3E, 19, 0x01, 0x00]) + struct.pack("<H", h) + bytes([0, 0]) + addr(PEER) + struct.pack("<HHHB", 24, 0, 72, 0))
    for i in range(3):
        att = bytes.fromhex("0a0300") if i % 2 == 0 else bytes.fromhex("0b4142")
        l2 = struct.pack("<HH", len(att), 4) + att
        rec(t1 + (i + 1) * 3_000_000, 0x02 if i % 2 == 0 else 0x03, struct.pack("<HH", h | 0x2000, len(l2)) + l2)
    rec(t1 + 9_000_000, 0x01, bytes([0x05, 4, 0x00]) + struct.pack("<HB", h, 0x13))
    with open(path, "wb") as f:
        f.write(b"".join(recs))


def fixture_pklg_mid_connection(path):
    """PacketLogger (iOS) capture that starts during a connection: ATT on handle 0x0040
    with no LE Connection Complete."""
    recs = []

    def rec(t_us, typ, payload):
        recs.append(struct.pack(">IIIB", 9 + len(payload), t_us // 1_000_000, t_us % 1_000_000, typ) + payload)

    h = 0x0040
    # An HCI event too (Number of Completed Packets): a log of ACL data only is told that it
    # holds no HCI commands or events instead (issue 36).
    rec(T0 - 50_000, 0x01, bytes.fromhex("13050140000100"))
    for i in range(4):
        att = bytes.fromhex("1b2a0001") if i % 2 else bytes.fromhex("52280001")
        l2 = struct.pack("<HH", len(att), 4) + att
        rec(T0 + i * 100_000, 0x03 if i % 2 else 0x02, struct.pack("<HH", h | 0x2000, len(l2)) + l2)
    with open(path, "wb") as f:
        f.write(b"".join(recs))


# ---------------------------------------------------------------- AES-128 and LE AES-CCM (for 8b)
# AES-128, encryption only (FIPS-197): tk_mic_reference.py's, beside this script.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tk_mic_reference import encrypt, expand  # noqa: E402


def ccm_seal(key, nonce, aad, plain):
    """LE AES-CCM (M = 4, L = 2): ciphertext || MIC (Vol 6 Part E §1)."""
    rk = expand(key)

    def a(i):
        return encrypt(key, bytes([0x01]) + nonce + struct.pack(">H", i), rk)

    x = encrypt(key, bytes([0x49]) + nonce + struct.pack(">H", len(plain)), rk)
    x = encrypt(key, bytes(p ^ q for p, q in zip(x, bytes([0x00, 0x01, aad]) + bytes(13))), rk)
    for i in range(0, len(plain), 16):
        x = encrypt(key, bytes(p ^ q for p, q in zip(x, plain[i:i + 16].ljust(16, b"\0"))), rk)
    out = bytearray()
    for i in range(0, len(plain), 16):
        out += bytes(p ^ q for p, q in zip(plain[i:i + 16], a(i // 16 + 1)))
    return bytes(out) + bytes(p ^ q for p, q in zip(x[:4], a(0)[:4]))


# ---------------------------------------------------------------- sniffer, pcap DLT 256
def rev24(x):
    return int("{:024b}".format(x)[::-1], 2)


def ble_crc(pdu, crc_init):
    """CRC-24 of an LE PDU (header + payload) as sent (Vol 6 Part B §3.1.1)."""
    state, mask = rev24(crc_init), 0x5A6000
    for b in pdu:
        for _ in range(8):
            nb = (state ^ b) & 1
            b >>= 1
            state >>= 1
            if nb:
                state |= 1 << 23
                state ^= mask
    return bytes([state & 0xFF, (state >> 8) & 0xFF, (state >> 16) & 0xFF])


class Sniffer:
    ADV_AA = 0x8E89BED6

    def __init__(self, aa=0x50656517, crc_init=0x123456):
        self.aa, self.crc_init, self.pkts = aa, crc_init, []
        self.sn = {True: 0, False: 0}
        self.nesn = {True: 0, False: 0}

    # what the RF header says: the CRC checked (nRF Sniffer, WHAD), the direction given
    checked = True
    directions = True

    def raw(self, t, aa, pdu, crc_init, direction, crc_ok=True, channel=1, checked=None, claim_ok=None):
        crc = ble_crc(pdu, crc_init)
        if not crc_ok:
            crc = bytes([crc[0] ^ 0x5A, crc[1], crc[2]])
        checked = self.checked if checked is None else checked
        said_ok = crc_ok if claim_ok is None else claim_ok
        if not self.directions:
            direction = 0   # "unspecified"
        # flags: dewhitened, signal valid, ref AA valid, CRC checked (+ valid), PDU type
        flags = 0x0001 | 0x0002 | 0x0010 | (0x0400 | (0x0800 if said_ok else 0) if checked else 0) | (direction << 7)
        hdr = struct.pack("<BbbBIH", channel, -50, -90, 0, aa, flags)
        self.pkts.append((t, hdr + struct.pack("<I", aa) + pdu + crc))

    def adv_ind(self, t, adv=PEER, name=None, sent=None, sent_name=None, **kw):
        """ADV_IND, TxAdd random; `sent`/`sent_name`: the address/name the CRC was computed
        over when the sniffer received other bits (a corrupted copy)."""
        def pdu(a, n):
            ad = (bytes([len(n) + 1, 0x09]) + n.encode()) if n else b""
            return bytes([0x40, 6 + len(ad)]) + addr(a) + ad
        good = pdu(sent or adv, sent_name or name)
        crc = ble_crc(good, 0x555555)
        got = pdu(adv, name)
        if got != good:
            # the CRC of what was sent, over what was received (a bit error in flight)
            self.raw(t, self.ADV_AA, got, 0x555555, 0, channel=0, **kw)
            self.pkts[-1] = (t, self.pkts[-1][1][:-3] + crc)
            return
        self.raw(t, self.ADV_AA, got, 0x555555, 0, channel=0, **kw)   # RF channel 0 = advertising channel 37

    def connect_ind(self, t, interval=24, timeout=100, **kw):
        ll = struct.pack("<I", self.aa) + self.crc_init.to_bytes(3, "little") + bytes([2]) + struct.pack("<HHHH", 0, interval, 0, timeout) \
            + bytes.fromhex("ffffffff1f") + bytes([0x05 | (0 << 5)])
        payload = addr(HOST) + addr(PEER) + ll
        self.raw(t, self.ADV_AA, bytes([0x05 | 0x40, len(payload)]) + payload, 0x555555, 0, channel=0, **kw)

    def data(self, t, from_central, llid, payload, crc_ok=True, ack=True):
        """A data PDU; the sender's SN, and NESN acknowledging the other side's last PDU."""
        sn, nesn = self.sn[from_central], self.nesn[from_central]
        hdr = llid | (nesn << 2) | (sn << 3)
        self.raw(t, self.aa, bytes([hdr, len(payload)]) + payload, self.crc_init, 2 if from_central else 3, crc_ok)
        if crc_ok or ack:
            # the receiver got it (for a CRC-bad PDU the sniffer's copy is what is bad)
            self.sn[from_central] ^= 1
            self.nesn[not from_central] ^= 1

    def empty(self, t, from_central):
        self.data(t, from_central, 1, b"")

    def write(self, path):
        with open(path, "wb") as f:
            f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 256))
            for t, d in self.pkts:
                f.write(struct.pack("<IIII", t // 1_000_000, t % 1_000_000, len(d), len(d)) + d)


def att_l2cap(att):
    return struct.pack("<HH", len(att), 4) + att


def fixture_terminate(path):
    s, t = Sniffer(), T0
    s.adv_ind(t)
    s.connect_ind(t + 1000)
    t += 3000
    for i in range(2):
        s.empty(t, True); s.empty(t + 150, False); t += 30_000
    s.data(t, True, 3, bytes([0x02, 0x13]))    # LL_TERMINATE_IND, Remote User Terminated
    s.empty(t + 150, False)                    # the peripheral's acknowledgement
    s.adv_ind(t + 100_000)
    s.write(path)


def fixture_supervision_timeout(path):
    s, t = Sniffer(), T0
    s.adv_ind(t)
    s.connect_ind(t + 1000, timeout=100)       # 1 s
    t += 3000
    for i in range(5):
        s.empty(t, True); s.empty(t + 150, False); t += 30_000
    for i in range(30):                          # 3 s of advertising, no data PDU
        s.adv_ind(t + i * 100_000)
    s.write(path)


def fixture_crc_bad_response(path):
    s, t = Sniffer(), T0
    s.adv_ind(t)
    s.connect_ind(t + 1000)
    t += 3000
    s.empty(t, True); s.empty(t + 150, False); t += 30_000
    s.data(t, True, 2, att_l2cap(bytes.fromhex("0a0300")))                 # Read Request 0x0003
    s.data(t + 150, False, 2, att_l2cap(bytes.fromhex("0b4142")), crc_ok=False)   # its response, CRC bad here
    t += 30_000
    s.empty(t, True)                             # NESN flipped: the central got the response
    s.empty(t + 150, False)
    for i in range(40):                          # the link goes on, no other ATT, for 40 s
        t += 1_000_000
        s.empty(t, True); s.empty(t + 150, False)
    s.write(path)


def crackle_dir():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for d in [os.path.join(os.path.dirname(here), "shared/captures/crackle"), "/work/shared/captures/crackle"]:
        if os.path.isdir(d):
            return d
    return None


def fixture_missing_confirms(path):
    """crackle's test 03 input, derived from its test 01 input: the same pcap without the
    two Pairing Confirm records (569, 572). sha-identical to crackle's missing_confirms.pcap."""
    d = crackle_dir()
    if d is None:
        return False
    data = open(os.path.join(d, "01_crack/pairing_and_ltk_exchange.pcap"), "rb").read()
    out, o, n = [data[:24]], 24, 0
    while o + 16 <= len(data):
        incl = struct.unpack_from("<I", data, o + 8)[0]
        n += 1
        if n not in (569, 572):
            out.append(data[o:o + 16 + incl])
        o += 16 + incl
    with open(path, "wb") as f:
        f.write(b"".join(out))
    return True


SC_LTK = bytes.fromhex("00112233445566778899aabbccddeeff")   # the LTK `info --ltk` is given


def fixture_sc_with_ltk(path):
    """LE Secure Connections pairing, then encryption with SC_LTK (EDIV 0, Rand 0): decoded
    with `--ltk 00112233445566778899aabbccddeeff` every encrypted PDU opens."""
    s, t = Sniffer(), T0
    s.adv_ind(t)
    s.connect_ind(t + 1000)
    t += 3000
    s.data(t, True, 2, struct.pack("<HH", 7, 6) + bytes.fromhex("01030009100d0d")); s.empty(t + 150, False); t += 30_000
    s.empty(t, True); s.data(t + 150, False, 2, struct.pack("<HH", 7, 6) + bytes.fromhex("02030009100d0d")); t += 30_000
    skdm, ivm = bytes.fromhex("0102030405060708"), bytes.fromhex("a1a2a3a4")
    skds, ivs = bytes.fromhex("1112131415161718"), bytes.fromhex("b1b2b3b4")
    s.data(t, True, 3, bytes([0x03]) + bytes(8) + bytes(2) + skdm + ivm); s.empty(t + 150, False); t += 30_000
    s.empty(t, True); s.data(t + 150, False, 3, bytes([0x04]) + skds + ivs); t += 30_000
    s.empty(t, True); s.data(t + 150, False, 3, bytes([0x05])); t += 30_000     # LL_START_ENC_REQ
    sk = encrypt(SC_LTK, (skdm + skds)[::-1])
    iv = ivm + ivs
    counter = {True: 0, False: 0}

    def enc(t, from_central, llid, plain):
        sn, nesn = s.sn[from_central], s.nesn[from_central]
        hdr = llid | (nesn << 2) | (sn << 3)
        nonce = struct.pack("<I", counter[from_central] & 0xFFFFFFFF) + bytes([(counter[from_central] >> 32) & 0x7F | (0x80 if from_central else 0)]) + iv
        counter[from_central] += 1
        sealed = ccm_seal(sk, nonce, hdr & 0xE3, plain)
        s.raw(t, s.aa, bytes([hdr, len(sealed)]) + sealed, s.crc_init, 2 if from_central else 3)
        s.sn[from_central] ^= 1
        s.nesn[not from_central] ^= 1

    enc(t, True, 3, bytes([0x06])); s.empty(t + 150, False); t += 30_000            # LL_START_ENC_RSP (central)
    s.empty(t, True); enc(t + 150, False, 3, bytes([0x06])); t += 30_000            # LL_START_ENC_RSP (peripheral)
    enc(t, True, 2, att_l2cap(bytes.fromhex("0a0300"))); s.empty(t + 150, False); t += 30_000
    s.empty(t, True); enc(t + 150, False, 2, att_l2cap(bytes.fromhex("0b4142"))); t += 30_000
    s.write(path)


# ---------------------------------------------------------------- issue 36: time, handles, databases
def fixture_appended_back(path):
    """36.5: records run from T0 to T0 + 5 min; the file's last records, appended, are dated
    T0 + 20 s … T0 + 80 s and belong to the connection open then (0x0040, T0 + 10 s … 5 min)."""
    s, h, t = BTSnoop(), 0x0040, T0
    s.cmd(t, 0x0C03, b"")                                                       # Reset
    s.evt(t + 1000, 0x0E, bytes([0x01]) + struct.pack("<H", 0x0C03) + b"\x00")
    le_conn_complete(s, t + 10_000_000, h)
    for i in range(1, 29):                                                      # a notification every 10 s
        s.acl(t + 10_000_000 + i * 10_000_000, h, 4, bytes.fromhex("1b2a00") + bytes([i]), True)
    disconnect(s, t + 300_000_000, h)
    for i in range(7):                                                          # appended: 20 s … 80 s
        s.acl(t + 20_000_000 + i * 10_000_000, h, 4, bytes.fromhex("1b2a00") + bytes([0x80 + i]), True)
    s.write(path)


def fixture_reserved_handle(path):
    """36.6: an LE link on 0x0040 and Broadcom-style diagnostics on reserved handle 0x0ff1 (its
    "L2CAP" lengths and channels are noise), never opened by a connection event."""
    s, h, t = BTSnoop(), 0x0040, T0
    le_conn_complete(s, t, h)
    for i in range(12):
        s.raw_acl(t + 1000 + i * 10_000, 0x0FF1, bytes([0x07 + i, 0x1F, 0x30 + i, 0xF0]) + bytes(range(i, i + 9)), True)
        s.acl(t + 5000 + i * 10_000, h, 4, bytes.fromhex("1b2a00") + bytes([i]), True)
    disconnect(s, t + 200_000, h)
    s.write(path)


MESH_NODE = bytes.fromhex("d0c1b2a39485")


def fixture_mesh_two_databases(path):
    """36.7: a mesh node (Core + Mesh Profile §7.1–7.2): first connection unprovisioned,
    Mesh Provisioning service 0x1827 at 0x000a–0x000f (Data In 0x2adb value 0x000c, Data Out
    0x2adc value 0x000e + CCCD 0x000f); second connection provisioned: GATT service grown to
    0x0006–0x000c (Service Changed), Mesh Proxy 0x1828 at 0x000d–0x0012 (Data In 0x2add value
    0x000f, Data Out 0x2ade value 0x0011 + CCCD 0x0012). Handles overlap across the two."""
    s, t = BTSnoop(), T0

    def att(t, h, pdu, received):
        s.acl(t, h, 4, bytes.fromhex(pdu), received)

    # first connection: Provisioning
    h = 0x0040
    le_conn_complete(s, t, h, peer=MESH_NODE)
    att(t + 10_000, h, "100100ffff0028", False)
    att(t + 20_000, h, "1106" "01000500" "0018" "06000900" "0118" "0a000f00" "2718", True)
    att(t + 30_000, h, "101000ffff0028", False)
    att(t + 40_000, h, "011010000a", True)
    att(t + 50_000, h, "080a000f000328", False)
    att(t + 60_000, h, "0907" "0b00040c00db2a" "0d00100e00dc2a", True)
    att(t + 70_000, h, "0810000f000328", False)
    att(t + 80_000, h, "010810000a", True)
    att(t + 90_000, h, "040f000f00", False)
    att(t + 100_000, h, "05010f000229", True)
    att(t + 110_000, h, "120f000100", False)                                  # CCCD on
    att(t + 120_000, h, "13", True)
    att(t + 130_000, h, "520c00" "030005", False)                             # Proxy PDU: Provisioning Invite
    att(t + 140_000, h, "1b0e00" "0301" "0101000000000000000000", True)       # Provisioning Capabilities
    disconnect(s, t + 200_000, h)
    # second connection: Proxy (the database changed)
    t += 1_000_000
    h = 0x0041
    le_conn_complete(s, t, h, peer=MESH_NODE)
    att(t + 10_000, h, "100100ffff0028", False)
    att(t + 20_000, h, "1106" "01000500" "0018" "06000c00" "0118" "0d001200" "2818", True)
    att(t + 30_000, h, "101300ffff0028", False)
    att(t + 40_000, h, "011013000a", True)
    att(t + 50_000, h, "080d00120003" "28", False)
    att(t + 60_000, h, "0907" "0e00040f00dd2a" "1000101100de2a", True)
    att(t + 70_000, h, "0813001200" "0328", False)
    att(t + 80_000, h, "010813000a", True)
    att(t + 90_000, h, "0412001200", False)
    att(t + 100_000, h, "050112000229", True)
    att(t + 110_000, h, "1212000100", False)                                  # CCCD on
    att(t + 120_000, h, "13", True)
    beacon = "0101" "00" "0102030405060708" "00000000" "1112131415161718"      # Proxy PDU: Secure Network beacon
    att(t + 130_000, h, "520f00" + beacon, False)
    att(t + 140_000, h, "1b1100" + beacon, True)
    disconnect(s, t + 200_000, h)
    s.write(path)


def fixture_mesh_no_discovery(path):
    """36.7: the same node without discovery: a Write Command on 0x000f, named only by an
    imported database (Mesh Proxy Data In in generation 2, a CCCD in generation 1)."""
    s, h, t = BTSnoop(), 0x0042, T0
    le_conn_complete(s, t, h, peer=MESH_NODE)
    s.acl(t + 10_000, h, 4, bytes.fromhex("520f00" "0101" "00" "0102030405060708" "00000000" "1112131415161718"), False)
    disconnect(s, t + 100_000, h)
    s.write(path)


# ---------------------------------------------------------------- issue 36: field sniffer captures
QUEST = bytes.fromhex("c81e2f4a5b6c")     # an advertiser near the sniffer


def fixture_crc_unchecked(path):
    """A HackRF-style capture (issue 36 #1/#2): the RF header never says the CRC was checked.
    Frames: 1 ADV_IND PEER "Quest 3"; 2 the same received as "Suest 3" (CRC of "Quest 3");
    3 ADV_IND from PEER with one address bit flipped (CRC of PEER's); 4 ADV_IND QUEST;
    5 CONNECT_IND HOST → PEER (CRCInit 0x123456); 6-9 Empty, Empty, Read Request, Read
    Response; 10 frame 8 again on an access address one bit off (CRC valid under 0x123456);
    11-12 data PDUs on two random access addresses (noise); 13 an Empty PDU of the link with a
    bad CRC; 14-15 a link whose CONNECT_IND was missed (access address 0x6AB1C2D3, CRCInit
    0x0A0B0C): two Empty PDUs; 16 ADV_IND QUEST that the header calls CRC-valid, CRC wrong;
    17 LL_TERMINATE_IND. tshark: 2 Incorrect CRC (2, 3; it checks advertising CRCs only),
    2 advertisers, a CONNECT_IND."""
    s, t = Sniffer(), T0
    s.checked, s.directions = False, False
    s.adv_ind(t, name="Quest 3")
    s.adv_ind(t + 100, name="Suest 3", sent_name="Quest 3")
    s.adv_ind(t + 200, adv=bytes.fromhex("132233445566"), sent=PEER)
    s.adv_ind(t + 300, adv=QUEST)
    s.connect_ind(t + 1000)
    t += 3000
    s.empty(t, True); s.empty(t + 150, False); t += 30_000
    s.data(t, True, 2, att_l2cap(bytes.fromhex("0a0300")))
    copy = s.pkts[-1][1]
    s.data(t + 150, False, 2, att_l2cap(bytes.fromhex("0b4142"))); t += 30_000
    flipped = s.aa ^ 0x0000_0400
    s.pkts.append((t, copy[:10] + struct.pack("<I", flipped) + copy[14:]))          # 10
    s.raw(t + 100, 0x1234_5678, bytes.fromhex("0e05a1b2c3d4e5"), 0x777777, 0)      # 11
    s.raw(t + 200, 0x2BAD_F00D, bytes.fromhex("0100"), 0x424242, 0)              # 12
    t += 30_000
    s.data(t, True, 1, b"", crc_ok=False); t += 30_000                             # 13
    s.raw(t, 0x6AB1_C2D3, bytes.fromhex("0100"), 0x0A0B0C, 0)                     # 14
    s.raw(t + 150, 0x6AB1_C2D3, bytes.fromhex("0500"), 0x0A0B0C, 0)               # 15
    s.adv_ind(t + 300, adv=QUEST, crc_ok=False, checked=True, claim_ok=True)      # 16
    t += 30_000
    s.data(t, True, 3, bytes([0x02, 0x13]))                                       # 17
    s.write(path)


def fixture_all_crc_bad(path):
    """nRF-Sniffer-style (CRC checked): 12 packets, every one with a bad CRC (issue 36 #2)."""
    s, t = Sniffer(), T0
    for i in range(12):
        s.adv_ind(t + i * 100_000, adv=QUEST if i % 2 else PEER, crc_ok=False)
    s.write(path)


def fixture_whad_decrypted(path):
    """WHAD-style (issue 36 #3/#4): CRC checked, no direction, no "decrypted" flag; the link
    is encrypted (LL_ENC_REQ/RSP, LL_START_ENC_REQ) and WHAD wrote the payloads it decrypted,
    without MIC. Frames: 1 ADV_IND, 2 CONNECT_IND, 3-4 LL_ENC_REQ/RSP, 5 LL_START_ENC_REQ,
    6-7 LL_START_ENC_RSP both ways, 8 Read By Group Type Request, 9 its response (service
    0x180F, handles 1-3), 10 Read Request 0x0003, 11 Read Response, 12 Write Request 0x0003,
    13 Error Response (Write Not Permitted), 14 Notification 0x0003, 15 LL_TERMINATE_IND."""
    s, t = Sniffer(), T0
    s.directions = False
    s.adv_ind(t)
    s.connect_ind(t + 1000)
    t += 3000
    s.data(t, True, 3, bytes([0x03]) + bytes(8) + bytes(2) + bytes.fromhex("0102030405060708a1a2a3a4"))
    s.data(t + 150, False, 3, bytes([0x04]) + bytes.fromhex("1112131415161718b1b2b3b4")); t += 30_000
    s.data(t, True, 3, bytes([0x05])); t += 30_000
    s.data(t, True, 3, bytes([0x06])); s.data(t + 150, False, 3, bytes([0x06])); t += 30_000
    for c, p in [("10010" "0ffff0028", "1106010003000f18"), ("0a0300", "0b64"), ("12030001", "011203000" "3")]:
        s.data(t, True, 2, att_l2cap(bytes.fromhex(c))); s.data(t + 150, False, 2, att_l2cap(bytes.fromhex(p))); t += 30_000
    s.data(t, False, 2, att_l2cap(bytes.fromhex("1b030063"))); t += 30_000
    s.data(t, True, 3, bytes([0x02, 0x13]))
    s.write(path)


def fixture_direction_unspecified(path):
    """A sniffer that gives the central's direction and leaves the peripheral's unspecified
    (issue 36 #4). Frames: 1 ADV_IND, 2 CONNECT_IND, 3 Read Request 0x0003 (C→P), 4 Error
    Response (Read Not Permitted, direction unspecified), 5 Write Request 0x0005 (C→P), 6 Write
    Response (unspecified), 7 Empty PDU (C→P), 8 Notification 0x0005 (unspecified),
    9 LL_TERMINATE_IND (C→P).
    tshark: request_in_frame 3 on #4 (by opcode), 5 on #6."""
    s, t = Sniffer(), T0
    s.adv_ind(t)
    s.connect_ind(t + 1000)
    t += 3000

    def peripheral(t, llid, payload):
        s.raw(t, s.aa, bytes([llid | (s.nesn[False] << 2) | (s.sn[False] << 3), len(payload)]) + payload, s.crc_init, 0)
        s.sn[False] ^= 1
        s.nesn[True] ^= 1

    s.data(t, True, 2, att_l2cap(bytes.fromhex("0a0300"))); peripheral(t + 150, 2, att_l2cap(bytes.fromhex("010a030002"))); t += 30_000
    s.data(t, True, 2, att_l2cap(bytes.fromhex("12050001"))); peripheral(t + 150, 2, att_l2cap(bytes.fromhex("13"))); t += 30_000
    s.empty(t, True); peripheral(t + 150, 2, att_l2cap(bytes.fromhex("1b050002"))); t += 30_000
    s.data(t, True, 3, bytes([0x02, 0x13]))
    s.write(path)


def fixture_connect_ind_only(path):
    """A CONNECT_IND and no data PDU after it (issue 36 #8): 1 ADV_IND, 2 CONNECT_IND, 3-4
    ADV_IND of another advertiser. tshark: one CONNECT_IND, access address 0x50656517."""
    s, t = Sniffer(), T0
    s.adv_ind(t)
    s.connect_ind(t + 1000)
    s.adv_ind(t + 100_000, adv=QUEST); s.adv_ind(t + 200_000, adv=QUEST)
    s.write(path)


def noise_aa(i):
    """Access address and CRCInit i of the noise in fixture_unconfirmed_bound (each its own: a
    CRCInit shared with a confirmed link would make the packet that link's, corrupted)."""
    return (0x9E3779B1 * (i + 1)) & 0xFFFFFFFF, (0x0A0B0C + i * 0x010101) & 0xFFFFFF


def fixture_unconfirmed_bound(path):
    """More access addresses heard once than the decoder keeps (1024, `maxSniffedConnections`):
    frames 1-1025 one Empty PDU each on noise_aa(0..1024) (CRC not checked by the sniffer), the 1025th dropping the oldest, noise_aa(0); 1026 a second on noise_aa(1):
    confirmed, one connection; 1027 a second on noise_aa(0): its first was dropped, so it is
    unconfirmed again (not decoded)."""
    s, t = Sniffer(), T0
    s.checked, s.directions = False, False
    for i in range(1025):
        aa, crc_init = noise_aa(i)
        s.raw(t + i * 100, aa, bytes.fromhex("0100"), crc_init, 0)
    t += 1025 * 100
    s.raw(t, noise_aa(1)[0], bytes.fromhex("0500"), noise_aa(1)[1], 0)
    s.raw(t + 100, noise_aa(0)[0], bytes.fromhex("0500"), noise_aa(0)[1], 0)
    s.write(path)


FIXTURES = {
    "sniffed_unconfirmed_bound.pcap": fixture_unconfirmed_bound,
    "android_appended_back.cfa": fixture_appended_back,
    "mesh_no_discovery.btsnoop": fixture_mesh_no_discovery,
    "reserved_handle_diagnostics.btsnoop": fixture_reserved_handle,
    "mesh_two_databases.btsnoop": fixture_mesh_two_databases,
    "hfp_sdp_both_sides.btsnoop": fixture_hfp,
    "indication_beside_request.btsnoop": fixture_indication,
    "sniffed_crc_bad_response.pcap": fixture_crc_bad_response,
    "sniffed_terminate_ack.pcap": fixture_terminate,
    "sniffed_supervision_timeout.pcap": fixture_supervision_timeout,
    "gatt_no_primary_discovery.btsnoop": fixture_gatt_no_primary,
    "fira_member_uuids.btsnoop": fixture_fira,
    "smp_keysize_253.btsnoop": fixture_smp253,
    "pklg_old_notes.pklg": fixture_pklg,
    "pklg_mid_connection.pklg": fixture_pklg_mid_connection,
    "missing_confirms.pcap": fixture_missing_confirms,
    "sc_with_ltk.pcap": fixture_sc_with_ltk,
    "sniffed_crc_unchecked.pcap": fixture_crc_unchecked,
    "sniffed_all_crc_bad.pcap": fixture_all_crc_bad,
    "whad_decrypted.pcap": fixture_whad_decrypted,
    "sniffed_direction_unspecified.pcap": fixture_direction_unspecified,
    "sniffed_connect_ind_only.pcap": fixture_connect_ind_only,
}


def main(argv):
    out = argv[0] if argv else "fixtures"
    os.makedirs(out, exist_ok=True)
    for name, make in FIXTURES.items():
        if make(os.path.join(out, name)) is not False:
            print(os.path.join(out, name))


if __name__ == "__main__":
    main(sys.argv[1:])
