#!/usr/bin/env python3
"""Captures of the Mesh Protocol v1.1 sample data (chapter 8) for the mesh oracle (issue 40).

Writes, byte for byte from the specification's sample messages (as reproduced in BlueZ's
unit/test-mesh-crypto.c and BTstack's test/mesh/mesh_message_test.cpp):

  Tests/Fixtures/mesh/mesh_sample_adv.btsnoop    HCI LE Advertising Reports (legacy) and LE
      Extended Advertising Reports carrying the 23 sample network PDUs (AD 0x2A), the secure
      network beacon of 8.4.3 (AD 0x2B), and a PB-ADV provisioning session (AD 0x29) of the
      8.7 sample PDUs with link open/ack/close, segmented transactions and their acks.
  Tests/Fixtures/mesh/mesh_sample_gatt.btsnoop   Two LE connections: the Mesh Provisioning
      service (0x1827, Data In 0x2ADB / Data Out 0x2ADC) carrying the 8.7 provisioning PDUs
      (the public keys in SAR segments), then the Mesh Proxy service (0x1828, 0x2ADD/0x2ADE)
      carrying sample network PDUs and the beacon, some split in proxy SAR segments.

  Tests/Fixtures/mesh/mesh_vendor_chat.btsnoop   A vendor model's messages (Nordic's Mesh
      Chat Client, company 0x0059, Plugins/nordic-mesh-chat.yaml) encrypted here with the
      sample NetKey and AppKey: presence and messages over the advertising bearer (one
      segmented), then a GATT proxy connection carrying a message in proxy SAR segments.

Keys (mesh_sample_keys.json beside them): NetKey, AppKey, the DevKey of 0x1201, IV index
0x12345678 and the two label UUIDs of messages 22-24. No dependency beyond the standard
library but for the vendor capture, which encrypts with `cryptography` (AES-CCM, CMAC; skipped
with a line when it is not installed); run from the repository root: python3 scripts/mesh_fixtures.py
"""
import json
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Fixtures", "mesh")

KEYS = {
    "iv_index": "12345678",
    "net_keys": ["7dd7364cd842ad18c17c2b820c84c3d6"],
    "app_keys": ["63964771734fbd76e3b40519d1d94a48"],
    "dev_keys": {"0x1201": "9d6dd0e96eb25dc19a40ed9914f8f03f"},
    "label_uuids": ["0073e7e4d8b9440faf8415df4c56c0e1", "f4a002c7fb1e4ca0a469a021de0db875"],
}

# Mesh Protocol v1.1 §8.3: the network PDUs of messages 1-12, 14, 16, 18-24.
MESSAGES = [
    "68eca487516765b5e5bfdacbaf6cb7fb6bff871f035444ce83a670df",
    "68d4c826296d7979d7dbc0c9b4d43eebec129d20a620d01e",
    "68da062bc96df253273086b8c5ee00bdd9cfcc62a2ddf572",
    "5e84eba092380fb0e5d0ad970d579a4e88051c",
    "5eafd6f53c43db5c39da1792b1fee9ec74b786c56d3a9dee",
    "68cab5c5348a230afba8c63d4e686364979deaf4fd40961145939cda0e",
    "681615b5dd4a846cae0c032bf0746f44f1b8cc8ce5edc57e55beed49c0",
    "68e476b5579c980d0d730f94d7f3509df987bb417eb7c05f",
    "684daa6267c2cf0e2f91add6f06e66006844cec97f973105ae2534f958",
    "68aec467ed4901d85d806bbed248614f938067b0d983bb7b",
    "5e7b786568759f7777ed355afaf66d899c1e3d",
    "5e6ebfc021edf5d5e748a20ecfd98ddfd32de80befb400213d113813b5",
    "5e8a18fc6e4d05ae21466087599c2426ce9a35",
    "5e0bbaf92b5c8f7d3ae62a3c75dff683dce24e",
    "68e80e5da5af0e6b9be7f5a642f2f98680e61c3a8b47f228",
    "6848cba437860e5673728a627fb938535508e21a6baf57",
    "68110edeecd83c3010a05e1b23a926023da75d25ba91793736",
    "e85cca51e2e8998c3dc87344a16c787f6b08cc897c941a5368",
    "e84e8fbe003f58a4d61157bb76352ea6307eebfe0f30b83500e9",
    "e8d85caecef1e3ed31f3fdcf88a411135fea55df730b6b28e255",
    "e877a48dd5fe2d7a9d696d3dd16a75489696f0b70c711b881385",
    "e8624e65bb8c1794e998b4081f47a35251fdd3896d99e4db489b918599",
    "e8a7d0f0a2ea42dc2f4dd6fb4db33a6c088d023b47",
]
BEACON = "01003ecaff672f673370123456788ea261582f364f6f"  # §8.4.3
DEVICE_UUID = "70cfa5e8c3bd4fb5a4d8f3c8e06f9b24"
UNPROV_BEACON = "00" + DEVICE_UUID + "4020" + "d97478b3"  # §8.4.2

# §8.7 PB-ADV provisioning sample (CMAC-AES128, no OOB): (from provisioner?, PDU).
PROV_KEY = ("2c31a47b5779809ef44cb5eaaf5c3e43d5f8faad4a8794cb987e9b03745c78dd"
            "919512183898dfbecd52e2408e43871fd021109117bd3ed4eaf8437743715d4f")
DEV_KEY = ("f465e43ff23d3f1b9dc7dfc04da8758184dbc966204796eccf0d6cf5e16500cc"
           "0201d048bcbbd899eeefc424164e33c201c2b010ca6b4d43a8a155cad8ecb279")
PROVISIONING = [
    (True, "0000"),
    (False, "010100010000000000000000"),
    (True, "020000000000"),
    (True, "03" + PROV_KEY),
    (False, "03" + DEV_KEY),
    (True, "05b38a114dfdca1fe153bd2c1e0dc46ac2"),
    (False, "05eeba521c196b52cc2e37aa40329f554e"),
    (True, "068b19ac31d58b124c946209b5db1021b9"),
    (False, "0655a2a2bca04cd32ff6f346bd0a0c1a3a"),
    (True, "07d0bd7f4a89a2ff6222af59a90a60ad58acfe3123356f5cec2973e0ec50783b10c7"),
    (False, "08"),
]


def fcs(data):
    """3GPP TS 27.010 FCS over a provisioning PDU (Mesh Protocol v1.1 §5.3.2)."""
    crc = 0xFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0xE0 if crc & 1 else crc >> 1
    return 0xFF - crc


class BTSnoop:
    """btsnoop version 1, datalink 1002 (H4)."""
    def __init__(self):
        self.records = []
        self.t = 0x00E03AB44A676000 + 1_700_000_000_000_000

    def add(self, h4, received, command_or_event=False):
        self.t += 10_000
        flags = (1 if received else 0) | (2 if command_or_event else 0)
        self.records.append(struct.pack(">IIIIQ", len(h4), len(h4), flags, 0, self.t) + h4)

    def event(self, code, params):
        self.add(bytes([0x04, code, len(params)]) + params, True, True)

    def acl(self, handle, payload, received):
        l2 = struct.pack("<HH", len(payload), 0x0004) + payload
        self.add(bytes([0x02]) + struct.pack("<HH", handle | 0x2000, len(l2)) + l2, received)

    def write(self, path):
        with open(path, "wb") as f:
            f.write(b"btsnoop\0" + struct.pack(">II", 1, 1002) + b"".join(self.records))


ADDR = bytes.fromhex("c0ffee000001")[::-1]


def adv_report(snoop, ad_type, data, extended=False):
    ad = bytes([len(data) + 1, ad_type]) + data
    if extended:
        # LE Extended Advertising Report (subevent 0x0D), legacy ADV_NONCONN_IND event type.
        p = bytes([0x0D, 1]) + struct.pack("<H", 0x0010) + bytes([1]) + ADDR + bytes([1, 0, 0xFF, 0x7F, 0xC4]) \
            + struct.pack("<H", 0) + bytes([0]) + bytes(6) + bytes([len(ad)]) + ad
    else:
        p = bytes([0x02, 1, 0x03, 1]) + ADDR + bytes([len(ad)]) + ad + bytes([0xC4])
    snoop.event(0x3E, p)


def pbadv_session(snoop):
    link = 0x0A0B0C0D
    def send(txn, gp):
        adv_report(snoop, 0x29, struct.pack(">IB", link, txn) + gp)
    send(0, bytes([0x03]) + bytes.fromhex(DEVICE_UUID))  # Link Open
    send(0, bytes([0x07]))  # Link ACK
    tp, td = 0x00, 0x80
    for from_prov, h in PROVISIONING:
        pdu = bytes.fromhex(h)
        txn = tp if from_prov else td
        first, rest = pdu[:20], pdu[20:]
        segs = [rest[i:i + 23] for i in range(0, len(rest), 23)]
        start = bytes([len(segs) << 2 | 0]) + struct.pack(">H", len(pdu)) + bytes([fcs(pdu)]) + first
        send(txn, start)
        for i, s in enumerate(segs):
            send(txn, bytes([(i + 1) << 2 | 2]) + s)
        send(txn, bytes([0x01]))  # Transaction Acknowledgment from the peer
        if from_prov:
            tp += 1
        else:
            td += 1
    send(tp, bytes([0x0B, 0x00]))  # Link Close, Success


def adv_capture():
    s = BTSnoop()
    adv_report(s, 0x2B, bytes.fromhex(UNPROV_BEACON))
    pbadv_session(s)
    adv_report(s, 0x2B, bytes.fromhex(BEACON))
    for i, m in enumerate(MESSAGES):
        adv_report(s, 0x2A, bytes.fromhex(m), extended=(i % 4 == 3))
    return s


def le_connection(s, handle):
    s.event(0x3E, bytes([0x01, 0x00]) + struct.pack("<H", handle) + bytes([0x00, 0x01]) + ADDR
            + struct.pack("<HHH", 24, 0, 400) + bytes([0]))


def discovery(s, h, service, data_in, data_out):
    """Primary service at 1..7: Data In value 3 (write without response), Data Out value 5
    (notify) with its CCCD at 6, discovered the way a phone does."""
    s.acl(h, bytes([0x10]) + struct.pack("<HHH", 1, 0xFFFF, 0x2800), False)
    s.acl(h, bytes([0x11, 6]) + struct.pack("<HHH", 1, 7, service), True)
    s.acl(h, bytes([0x08]) + struct.pack("<HHH", 1, 7, 0x2803), False)
    s.acl(h, bytes([0x09, 7]) + struct.pack("<HBHH", 2, 0x04, 3, data_in) + struct.pack("<HBHH", 4, 0x10, 5, data_out), True)
    s.acl(h, bytes([0x04]) + struct.pack("<HH", 6, 7), False)
    s.acl(h, bytes([0x05, 1]) + struct.pack("<HH", 6, 0x2902), True)
    s.acl(h, bytes([0x12]) + struct.pack("<HH", 6, 1), False)
    s.acl(h, bytes([0x13]), True)


def proxy_pdus(msg_type, data, mtu_payload=19):
    """A message as Proxy PDUs of at most 1 + mtu_payload octets (§6.3.2)."""
    if len(data) <= mtu_payload:
        return [bytes([msg_type]) + data]
    parts = [data[i:i + mtu_payload] for i in range(0, len(data), mtu_payload)]
    out = []
    for i, p in enumerate(parts):
        sar = 1 if i == 0 else 3 if i == len(parts) - 1 else 2
        out.append(bytes([sar << 6 | msg_type]) + p)
    return out


def gatt_capture():
    s = BTSnoop()
    # PB-GATT: the provisioner (this host) writes Data In, the device notifies Data Out.
    le_connection(s, 0x0040)
    discovery(s, 0x0040, 0x1827, 0x2ADB, 0x2ADC)
    for from_prov, h in PROVISIONING:
        for p in proxy_pdus(0x03, bytes.fromhex(h)):
            s.acl(0x0040, (bytes([0x52]) + struct.pack("<H", 3) if from_prov else bytes([0x1B]) + struct.pack("<H", 5)) + p, not from_prov)
    s.event(0x05, bytes([0x00]) + struct.pack("<H", 0x0040) + bytes([0x13]))
    # GATT proxy: messages 16, 18, 19 and segment 0 of 6 written; the beacon and messages 20-23 notified.
    le_connection(s, 0x0041)
    discovery(s, 0x0041, 0x1828, 0x2ADD, 0x2ADE)
    for p in proxy_pdus(0x01, bytes.fromhex(BEACON)):
        s.acl(0x0041, bytes([0x1B]) + struct.pack("<H", 5) + p, True)
    for m in [MESSAGES[5], MESSAGES[6], MESSAGES[14], MESSAGES[15], MESSAGES[16]]:
        for p in proxy_pdus(0x00, bytes.fromhex(m)):
            s.acl(0x0041, bytes([0x52]) + struct.pack("<H", 3) + p, False)
    for m in MESSAGES[17:21]:
        for p in proxy_pdus(0x00, bytes.fromhex(m)):
            s.acl(0x0041, bytes([0x1B]) + struct.pack("<H", 5) + p, True)
    return s


class MeshCrypto:
    """The Mesh Protocol v1.1 §3.9 toolbox for the vendor capture: k2 (NID, EncryptionKey,
    PrivacyKey), k4 (AID), the network and application nonces, AES-CCM and the obfuscation."""
    def __init__(self, net_key, app_key, iv_index):
        from cryptography.hazmat.primitives import cmac
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
        from cryptography.hazmat.primitives.ciphers.aead import AESCCM

        def aes_cmac(k, m):
            c = cmac.CMAC(algorithms.AES(k))
            c.update(m)
            return c.finalize()

        def s1(m):
            return aes_cmac(bytes(16), m)

        self.ccm = lambda k, n, p, mic: AESCCM(k, tag_length=mic).encrypt(n, p, None)
        self.ecb = lambda k, b: Cipher(algorithms.AES(k), modes.ECB()).encryptor().update(b)
        t = aes_cmac(s1(b"smk2"), net_key)
        t1 = aes_cmac(t, b"\x00" + b"\x01")
        t2 = aes_cmac(t, t1 + b"\x00" + b"\x02")
        t3 = aes_cmac(t, t2 + b"\x00" + b"\x03")
        self.nid, self.enc, self.privacy = t1[15] & 0x7F, t2, t3
        # Friendship credentials of the sample data's LPN 0x1201 and Friend 0x2345 (§8.1.4, §3.9.6.3.1).
        p = b"\x01" + struct.pack(">HHHH", 0x1201, 0x2345, 0x0000, 0x072F)
        f1 = aes_cmac(t, p + b"\x01")
        f2 = aes_cmac(t, f1 + p + b"\x02")
        f3 = aes_cmac(t, f2 + p + b"\x03")
        self.friend_nid, self.friend_enc, self.friend_privacy = f1[15] & 0x7F, f2, f3
        self.aid = aes_cmac(aes_cmac(s1(b"smk4"), app_key), b"id6\x01")[15] & 0x3F
        self.app_key, self.iv = app_key, iv_index

    def upper(self, access, seq, src, dst):
        """§3.9.7.1: the access payload under the AppKey, TransMIC 32 bits (SZMIC 0)."""
        nonce = bytes([0x01, 0x00]) + seq.to_bytes(3, "big") + struct.pack(">HHI", src, dst, self.iv)
        return self.ccm(self.app_key, nonce, access, 4)

    def network(self, transport, seq, src, dst, ttl=4):
        """§3.9.7.2-§3.9.7.3: encrypted with the EncryptionKey (NetMIC 32 bits), then obfuscated."""
        nonce = bytes([0x00, ttl]) + seq.to_bytes(3, "big") + struct.pack(">H", src) + bytes(2) + struct.pack(">I", self.iv)
        sealed = self.ccm(self.enc, nonce, struct.pack(">H", dst) + transport, 4)
        pecb = self.ecb(self.privacy, bytes(5) + struct.pack(">I", self.iv) + sealed[:7])
        header = bytes([ttl]) + seq.to_bytes(3, "big") + struct.pack(">H", src)
        return bytes([(self.iv & 1) << 7 | self.nid]) + bytes(a ^ b for a, b in zip(header, pecb)) + sealed

    def access_pdus(self, access, seq, src, dst):
        """The network PDUs of one access message (§3.5.2): unsegmented up to 11 octets, else
        segments of 12 octets of the upper transport PDU; returns them and the next SEQ."""
        upper = self.upper(access, seq, src, dst)
        if len(access) <= 11:
            return [self.network(bytes([0x40 | self.aid]) + upper, seq, src, dst)], seq + 1
        parts = [upper[i:i + 12] for i in range(0, len(upper), 12)]
        zero, n, out = seq & 0x1FFF, len(parts) - 1, []
        for o, part in enumerate(parts):
            header = bytes([0xC0 | self.aid, zero >> 6, (zero & 0x3F) << 2 | o >> 3, (o & 7) << 5 | n])
            out.append(self.network(header + part, seq + o, src, dst))
        return out, seq + len(parts)


CHAT_NODE, CHAT_GROUP = 0x0003, 0xC000


def chat(op, payload=b""):
    """A Mesh Chat Client access message: opcode 0xC0|op, company 0x0059 (little-endian)."""
    return bytes([op, 0x59, 0x00]) + payload


def vendor_capture():
    c = MeshCrypto(bytes.fromhex(KEYS["net_keys"][0]), bytes.fromhex(KEYS["app_keys"][0]), int(KEYS["iv_index"], 16))
    assert c.nid == 0x68 and c.aid == 0x26  # the sample data's NID and AID (§8.1.3, §8.1.6)
    s = BTSnoop()
    seq = 0x000100
    for access, src, dst in [
        (chat(0xCD, bytes([0x01])), CHAT_NODE, CHAT_GROUP),  # presence: away
        (chat(0xCA, b"Hi!\0"), CHAT_NODE, CHAT_GROUP),
        (chat(0xCB, b"Lunch at noon?\0"), CHAT_NODE, 0x0004),  # segmented: 18 octets
        (chat(0xCC), 0x0004, CHAT_NODE),
        (chat(0xCE), 0x0004, CHAT_NODE),
    ]:
        pdus, seq = c.access_pdus(access, seq, src, dst)
        for i, p in enumerate(pdus):
            adv_report(s, 0x2A, p, extended=(i % 2 == 1))
    # A phone on the GATT proxy (connection 0x0042): a message written in two proxy segments.
    le_connection(s, 0x0042)
    discovery(s, 0x0042, 0x1828, 0x2ADD, 0x2ADE)
    pdus, seq = c.access_pdus(chat(0xCA, b"hello\0"), seq, 0x0005, CHAT_GROUP)
    for p in proxy_pdus(0x00, pdus[0], mtu_payload=12):
        s.acl(0x0042, bytes([0x52]) + struct.pack("<H", 3) + p, False)
    return s


class Resealer:
    """The sample network PDUs opened with the sample keys (obfuscation, NetMIC, segments,
    TransMIC; Mesh Protocol v1.1 §3.9) and sealed again with their SEQs moved by a delta, so
    that a bench of many copies holds no two equal PDUs. Everything else (addresses, TTL, keys,
    payloads) stays; SeqZero and a segment acknowledgment's SeqZero move with the SEQs."""
    def __init__(self):
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
        from cryptography.hazmat.primitives.ciphers.aead import AESCCM
        iv = int(KEYS["iv_index"], 16)
        c = MeshCrypto(bytes.fromhex(KEYS["net_keys"][0]), bytes.fromhex(KEYS["app_keys"][0]), iv)
        self.aid, self.iv = c.aid, iv
        # NID -> (PrivacyKey's ECB, EncryptionKey's CCM by NetMIC size): master and friendship credentials.
        self.creds = {
            nid: (Cipher(algorithms.AES(privacy), modes.ECB()).encryptor(), {m: AESCCM(enc, tag_length=m) for m in (4, 8)})
            for nid, enc, privacy in [(c.nid, c.enc, c.privacy), (c.friend_nid, c.friend_enc, c.friend_privacy)]
        }
        app, dev = bytes.fromhex(KEYS["app_keys"][0]), bytes.fromhex(KEYS["dev_keys"]["0x1201"])
        self.upper_keys = {True: [{m: AESCCM(app, tag_length=m) for m in (4, 8)}],
                           False: [{m: AESCCM(dev, tag_length=m) for m in (4, 8)}]}
        self.labels = [bytes.fromhex(u) for u in KEYS["label_uuids"]]
        self.pdus = [self.open(bytes.fromhex(m)) for m in MESSAGES]
        # Segmented access messages: the upper transport PDU of all segments, opened once.
        groups = {}
        for p in self.pdus:
            if p["seg"] and not p["ctl"]:
                groups.setdefault((p["src"], p["seq_zero"]), []).append(p)
        self.messages = {}
        for key, copies in groups.items():
            segs = list({p["seg_o"]: p for p in reversed(copies)}.values())  # first copy of each
            if len(segs) != segs[0]["seg_n"] + 1:
                continue  # not all segments among the samples: its upper PDU stays as it is
            segs.sort(key=lambda p: p["seg_o"])
            upper = b"".join(p["segment"] for p in segs)
            self.messages[key] = self.open_upper(segs[0], upper, self.seq_auth(segs[0]))
        for p in self.pdus:
            if not p["ctl"] and not p["seg"]:
                p["upper"] = self.open_upper(p, p["segment"], p["seq"])
        for i, m in enumerate(MESSAGES):  # sealing with no delta gives the samples back
            assert self.seal(self.pdus[i], 0) == bytes.fromhex(m), i

    def iv_of(self, ivi):
        return self.iv if ivi == self.iv & 1 else self.iv - 1

    @staticmethod
    def seq_auth(p):
        return p["seq"] - ((p["seq"] - p["seq_zero"]) & 0x1FFF)

    def obfuscation(self, nid, iv, enc):
        return self.creds[nid][0].update(bytes(5) + struct.pack(">I", iv) + enc[:7])

    def net_nonce(self, ctl, ttl, seq, src, iv):
        return bytes([0x00, ctl << 7 | ttl]) + seq.to_bytes(3, "big") + struct.pack(">H", src) + bytes(2) + struct.pack(">I", iv)

    def open(self, pdu):
        ivi, iv, nid = pdu[0] >> 7, self.iv_of(pdu[0] >> 7), pdu[0] & 0x7F
        h = bytes(a ^ b for a, b in zip(pdu[1:7], self.obfuscation(nid, iv, pdu[7:])))
        ctl, ttl, seq, src = h[0] >> 7, h[0] & 0x7F, int.from_bytes(h[1:4], "big"), struct.unpack(">H", h[4:6])[0]
        plain = self.creds[nid][1][8 if ctl else 4].decrypt(self.net_nonce(ctl, ttl, seq, src, iv), pdu[7:], None)
        dst, t = struct.unpack(">H", plain[:2])[0], plain[2:]
        p = dict(nid=nid, ivi=ivi, iv=iv, ctl=ctl, ttl=ttl, seq=seq, src=src, dst=dst, head=t[0], seg=t[0] >> 7)
        if p["seg"]:
            w = int.from_bytes(t[1:4], "big")
            p.update(szmic=w >> 23, seq_zero=(w >> 10) & 0x1FFF, seg_o=(w >> 5) & 0x1F, seg_n=w & 0x1F, segment=t[4:])
        else:
            p["segment"] = t[1:]
        return p

    @staticmethod
    def upper_nonce(kind, p, seq, szmic):
        return bytes([kind, szmic << 7]) + seq.to_bytes(3, "big") + struct.pack(">HHI", p["src"], p["dst"], p["iv"])

    def open_upper(self, p, upper, seq):
        szmic = p.get("szmic", 0) if p["seg"] else 0
        mic = 8 if szmic else 4
        labels = self.labels if 0x8000 <= p["dst"] < 0xC000 else [None]
        kind = 0x01 if p["head"] & 0x40 else 0x02  # application or device nonce
        for keys in self.upper_keys[kind == 0x01]:
            for label in labels:
                try:
                    return keys[mic].decrypt(self.upper_nonce(kind, p, seq, szmic), upper, label), keys, label, kind
                except Exception:
                    pass
        raise ValueError("sample upper transport PDU not opened")

    def seal(self, p, delta):
        seq = p["seq"] + delta
        if p["seg"]:
            zero = (p["seq_zero"] + delta) & 0x1FFF
            segment = p["segment"]
            m = self.messages.get((p["src"], p["seq_zero"]))
            if m is not None:
                # Message 11 repeats message 6's segment 0 with AKF set: sealed as the message was.
                access, keys, label, kind = m
                upper = keys[8 if p["szmic"] else 4].encrypt(
                    self.upper_nonce(kind, p, self.seq_auth(p) + delta, p["szmic"]), access, label)
                segment = upper[p["seg_o"] * 12:p["seg_o"] * 12 + len(p["segment"])]
            w = p["szmic"] << 23 | zero << 10 | p["seg_o"] << 5 | p["seg_n"]
            t = bytes([p["head"]]) + w.to_bytes(3, "big") + segment
        elif not p["ctl"]:
            access, keys, label, kind = p["upper"]
            t = bytes([p["head"]]) + keys[4].encrypt(self.upper_nonce(kind, p, seq, 0), access, label)
        elif p["head"] == 0x00:  # Segment Acknowledgment: the SeqZero it acknowledges moves too
            w = struct.unpack(">H", p["segment"][:2])[0]
            w = (w & 0x8003) | (((w >> 2) + delta) & 0x1FFF) << 2
            t = bytes([p["head"]]) + struct.pack(">H", w) + p["segment"][2:]
        else:
            t = bytes([p["head"]]) + p["segment"]
        sealed = self.creds[p["nid"]][1][8 if p["ctl"] else 4].encrypt(
            self.net_nonce(p["ctl"], p["ttl"], seq, p["src"], p["iv"]), struct.pack(">H", p["dst"]) + t, None)
        h = bytes([p["ctl"] << 7 | p["ttl"]]) + seq.to_bytes(3, "big") + struct.pack(">H", p["src"])
        return bytes([p["ivi"] << 7 | p["nid"]]) + bytes(a ^ b for a, b in zip(h, self.obfuscation(p["nid"], p["iv"], sealed))) + sealed


BENCH_SEQ_STEP = 0x100  # SEQ advance per round: above any one source's span among the samples


def bench_capture(records):
    """A mesh-dense advertising capture for `make bench`: the sample network PDUs and the
    secure network beacon, round after round (legacy and extended reports), decrypted with the
    sample keys. Each round's network PDUs are sealed again with SEQs BENCH_SEQ_STEP higher
    than the round before, so no network PDU repeats (a cache of decoded PDUs gains nothing
    here) and no SEQ goes backwards."""
    r = Resealer()
    assert max(p["seq"] for p in r.pdus) + (records // len(MESSAGES) + 1) * BENCH_SEQ_STEP < 1 << 24
    s = BTSnoop()
    beacon = bytes.fromhex(BEACON)
    i = 0
    while len(s.records) < records:
        n, k = divmod(i, len(MESSAGES) + 1)
        if k < len(MESSAGES):
            adv_report(s, 0x2A, r.seal(r.pdus[k], n * BENCH_SEQ_STEP), extended=(i % 4 == 3))
        else:
            adv_report(s, 0x2B, beacon, extended=(i % 4 == 3))
        i += 1
    return s


def main():
    import sys
    if len(sys.argv) == 3 and sys.argv[1].startswith("--bench="):
        # python3 scripts/mesh_fixtures.py --bench=RECORDS OUT.btsnoop
        bench_capture(int(sys.argv[1].split("=", 1)[1])).write(sys.argv[2])
        return
    os.makedirs(OUT, exist_ok=True)
    adv_capture().write(os.path.join(OUT, "mesh_sample_adv.btsnoop"))
    gatt_capture().write(os.path.join(OUT, "mesh_sample_gatt.btsnoop"))
    try:
        vendor_capture().write(os.path.join(OUT, "mesh_vendor_chat.btsnoop"))
    except ImportError:
        print("mesh_vendor_chat.btsnoop not written: it needs the cryptography package")
    with open(os.path.join(OUT, "mesh_sample_keys.json"), "w") as f:
        json.dump(KEYS, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
