#!/usr/bin/env python3
"""Random Bluetooth Mesh security cases computed by Silvair's bluetooth-mesh-network 0.9.5
(PyPI), one JSON object a line, for Tests/BluesiftSecurityTests/MeshOracleTests.swift.

    .venv-mesh/bin/python scripts/mesh_oracle.py COUNT SEED

Each case: random NetKey/AppKey/DevKey/IV index/addresses/payloads and what the package makes
of them: k2 (flooding and friendship), k3, k4, the beacon/identity/private beacon keys, an
access message (AppKey or DevKey) and a control message as network PDUs, a proxy
configuration message (proxy nonce), a solicitation PDU (solicitation nonce), a secure
network beacon and a Mesh Private beacon. Values in hex, MSB first.
"""
import json
import random
import sys

from bluetooth_mesh.network.crypto import (ApplicationKey, DeviceKey, NetworkKey, aes_ccm_encrypt, k2)
from bluetooth_mesh.network.mesh import (AccessMessage, ControlMessage, MeshPrivateBeacon, NetworkMessage, Nonce,
                                         ProxyConfigMessage, SecureNetworkBeacon, SolicitationMessage)


def main():
    count, seed = int(sys.argv[1]), int(sys.argv[2])
    rng = random.Random(seed)
    rb = lambda n: bytes(rng.getrandbits(8) for _ in range(n))
    for _ in range(count):
        net, app, dev = NetworkKey(rb(16)), ApplicationKey(rb(16)), DeviceKey(rb(16))
        iv = rng.getrandbits(32)
        src, dst = rng.randrange(1, 0x8000), rng.randrange(1, 0x10000)
        ttl, seq = rng.randrange(0, 128), rng.getrandbits(24)
        nid, enc, priv = net.encryption_keys
        lpn, fr, lc, fc = (rng.getrandbits(16) for _ in range(4))
        p = b"\x01" + lpn.to_bytes(2, "big") + fr.to_bytes(2, "big") + lc.to_bytes(2, "big") + fc.to_bytes(2, "big")
        fnid, fenc, fpriv = k2(net.bytes, p)
        c = dict(net_key=net.bytes.hex(), app_key=app.bytes.hex(), dev_key=dev.bytes.hex(), iv_index=iv,
                 nid=nid, encryption_key=enc.hex(), privacy_key=priv.hex(), network_id=net.network_id.hex(),
                 aid=app.aid, beacon_key=net.beacon_key.hex(), identity_key=net.identity_key.hex(),
                 private_beacon_key=net.private_beacon_key.hex(),
                 lpn=lpn, friend=fr, lpn_counter=lc, friend_counter=fc,
                 friend_nid=fnid, friend_encryption_key=fenc.hex(), friend_privacy_key=fpriv.hex())
        # Unsegmented access message: at most 11 octets of payload with a 32-bit TransMIC.
        use_dev = rng.random() < 0.3
        payload = rb(rng.randrange(1, 12))
        key = dev if use_dev else app
        msg = AccessMessage(src=src, dst=dst, ttl=ttl, payload=payload)
        (s, pdu), = NetworkMessage(msg).pack(key, net, seq=seq, iv_index=iv)
        upper = next(msg.segments(key, seq, iv))
        c.update(src=src, dst=dst, ttl=ttl, seq=seq, access_payload=payload.hex(), use_dev_key=use_dev,
                 access_network_pdu=pdu.hex(), access_lower_pdu=upper.hex())
        # A virtual destination: the Label UUID as CCM additional data (the package's AES-CCM
        # helper; its AccessMessage has no label).
        label = rb(16)
        vseq = rng.getrandbits(24)
        nonce = Nonce(src, 0x8000 | rng.getrandbits(14), ttl, False)
        c.update(label=label.hex(), virtual_dst=nonce.dst, virtual_seq=vseq,
                 virtual_upper_pdu=aes_ccm_encrypt(app.bytes, nonce.application(vseq, iv), payload, label, 4).hex(),
                 virtual_upper_pdu_64=aes_ccm_encrypt(app.bytes, nonce.application(vseq, iv, True), payload, label, 8).hex())
        # Control message: 64-bit NetMIC.
        opcode, cpay = rng.randrange(1, 0x0b), rb(rng.randrange(0, 11))
        cseq = rng.getrandbits(24)
        (s, cpdu), = NetworkMessage(ControlMessage(src=src, dst=dst, ttl=ttl, opcode=opcode, payload=cpay)).pack(
            app, net, seq=cseq, iv_index=iv)
        c.update(control_seq=cseq, control_lower_pdu=(bytes([opcode]) + cpay).hex(), control_network_pdu=cpdu.hex())
        # Proxy configuration message (proxy nonce, DST 0x0000, TTL 0).
        pseq, popcode, ppay = rng.getrandbits(24), rng.randrange(0, 4), rb(rng.randrange(0, 6))
        (s, ppdu), = NetworkMessage(ProxyConfigMessage(src=src, opcode=popcode, payload=ppay)).pack(
            app, net, seq=pseq, iv_index=iv)
        c.update(proxy_seq=pseq, proxy_lower_pdu=(bytes([popcode]) + ppay).hex(), proxy_network_pdu=ppdu.hex())
        # Solicitation PDU (proxy solicitation nonce, IV index 0).
        sseq = rng.getrandbits(24)
        (s, spdu), = NetworkMessage(SolicitationMessage(src=src)).pack(app, net, seq=sseq, iv_index=0)
        c.update(solicitation_seq=sseq, solicitation_network_pdu=spdu.hex())
        # Beacons.
        flags = rng.randrange(0, 4)
        beacon, auth = SecureNetworkBeacon(bool(flags & 1), bool(flags & 2), iv, net.network_id).pack(net)
        rnd = rb(13)
        obf, tag = MeshPrivateBeacon(net.private_beacon_key, rnd, bool(flags & 1), bool(flags & 2), iv).pack(
            net.private_beacon_key)
        c.update(flags=flags, secure_beacon=(b"\x01" + beacon + auth).hex(),
                 private_beacon=(b"\x02" + rnd + obf + tag).hex())
        print(json.dumps(c, sort_keys=True))


if __name__ == "__main__":
    main()
