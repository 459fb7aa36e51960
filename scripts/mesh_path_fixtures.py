#!/usr/bin/env python3
"""Directed forwarding control messages (Mesh Protocol v1.1 §3.6.5.11-§3.6.5.17) built by hand
from the specification's field tables, apart from the Swift decoder: neither tshark 4.0 nor
Silvair's bluetooth-mesh decodes them, so these are the reference of
Tests/BluesiftProtocolsTests/MeshPathMessageTests.swift.

    python3 scripts/mesh_path_fixtures.py

One JSON object a line: {"opcode": N, "parameters": hex, "fields": {...}} where fields are the
specification's field names in snake case and address ranges are objects. Each message is a
list of (field name, width in bits, value) written most significant bit first, as the
transport control PDUs are (big-endian, §3.6.5).
"""
import json
import random


def pack(fields):
    bits = "".join(format(v, "0%db" % w) for _, w, v in fields)
    assert len(bits) % 8 == 0, fields
    return bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits), 8))


def addr_range(name, start, length=None):
    """§3.6.5.11.1 unicast address range: Length_Present (1) ‖ Range_Start (15) [‖ Range_Length (8)]."""
    f = [(name + ".length_present", 1, 0 if length is None else 1), (name + ".range_start", 15, start)]
    if length is not None:
        f.append((name + ".range_length", 8, length))
    return f


def as_fields(fields):
    out = {}
    for name, _, v in fields:
        if "." in name:
            outer, inner = name.split(".")
            out.setdefault(outer, {})[inner] = v
        else:
            out[name] = v
    return out


def path_request(rng):
    obo = rng.randrange(2)
    f = [("on_behalf_of_dependent_origin", 1, obo), ("path_origin_path_metric_type", 3, rng.randrange(8)),
         ("path_origin_path_lifetime", 2, rng.randrange(4)), ("path_discovery_interval", 1, rng.randrange(2)),
         ("prohibited", 1, rng.randrange(2)), ("path_origin_forwarding_number", 8, rng.randrange(256)),
         ("path_origin_path_metric", 8, rng.randrange(256)), ("destination", 16, rng.randrange(1 << 16))]
    f += addr_range("path_origin_unicast_addr_range", rng.randrange(1, 1 << 15), rng.choice([None, rng.randrange(2, 256)]))
    if obo:
        f += addr_range("dependent_origin_unicast_addr_range", rng.randrange(1, 1 << 15), rng.choice([None, rng.randrange(2, 256)]))
    return 0x0B, f


def path_reply(rng):
    ud = rng.randrange(2)
    obo = rng.randrange(2) if ud else 0
    f = [("unicast_destination", 1, ud), ("on_behalf_of_dependent_target", 1, obo), ("confirmation_request", 1, rng.randrange(2)),
         ("prohibited", 5, rng.choice([0, rng.randrange(32)])), ("path_origin", 16, rng.randrange(1, 1 << 15)),
         ("path_origin_forwarding_number", 8, rng.randrange(256))]
    if ud:
        f += addr_range("path_target_unicast_addr_range", rng.randrange(1, 1 << 15), rng.choice([None, rng.randrange(2, 256)]))
    if obo:
        f += addr_range("dependent_target_unicast_addr_range", rng.randrange(1, 1 << 15), rng.choice([None, rng.randrange(2, 256)]))
    return 0x0C, f


def path_confirmation(rng):
    return 0x0D, [("path_origin", 16, rng.randrange(1, 1 << 15)), ("path_target", 16, rng.randrange(1, 1 << 15))]


def path_echo_request(rng):
    return 0x0E, []


def path_echo_reply(rng):
    return 0x0F, [("destination", 16, rng.randrange(1, 1 << 15))]


def dependent_node_update(rng):
    f = [("type", 1, rng.randrange(2)), ("prohibited", 7, rng.choice([0, rng.randrange(128)])),
         ("path_endpoint", 16, rng.randrange(1, 1 << 15))]
    return 0x10, f + addr_range("dependent_node_unicast_addr_range", rng.randrange(1, 1 << 15), rng.choice([None, rng.randrange(2, 256)]))


def path_request_solicitation(rng):
    return 0x11, [("addr_list", 16, rng.randrange(1 << 16)) for _ in range(rng.randrange(0, 6))]


def main():
    rng = random.Random(40)
    for make in (path_request, path_reply, path_confirmation, path_echo_request, path_echo_reply,
                 dependent_node_update, path_request_solicitation):
        for _ in range(8):
            opcode, f = make(rng)
            fields = as_fields(f) if opcode != 0x11 else {"addr_list": [v for _, _, v in f]}
            print(json.dumps({"opcode": opcode, "parameters": pack(f).hex(), "fields": fields}, sort_keys=True))


if __name__ == "__main__":
    main()
