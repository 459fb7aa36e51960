#!/usr/bin/env python3
"""Access messages parsed by Silvair's bluetooth-mesh-messages (PyPI, GPL-2.0), the second
decoder of Tests/BluesiftProtocolsTests/MeshSilvairOracleTests.swift.

    .venv-mesh/bin/python scripts/mesh_messages_oracle.py < payloads

One access payload (opcode and parameters, hex) a line in; one JSON object a line out:
{"opcode": N, "fields": {leaf name: value, ...}} with enums as their numbers, bytes as hex,
lists as lists, or {"error": "..."} when the package rejects the payload.
"""
import enum
import json
import sys

from bluetooth_mesh.messages import AccessMessage


def leaves(obj, out, name=None):
    if isinstance(obj, dict):
        for k, v in obj.items():
            if not str(k).startswith("_"):
                leaves(v, out, k)
    elif isinstance(obj, (list, tuple)):
        if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in obj):
            out[name] = [int(x) if isinstance(x, enum.Enum) else x for x in obj]
        else:
            for x in obj:
                leaves(x, out, name)
    elif isinstance(obj, enum.Enum):
        out[name] = obj.value
    elif isinstance(obj, (bytes, bytearray)):
        out[name] = bytes(obj).hex()
    elif isinstance(obj, (int, float, str)) and name is not None:
        out[name] = obj


def main():
    for line in sys.stdin:
        h = line.strip()
        if not h:
            continue
        try:
            m = AccessMessage.parse(bytes.fromhex(h))
            fields = {}
            leaves({k: v for k, v in dict(m).items() if k != "opcode"}, fields)
            print(json.dumps({"opcode": int(m["opcode"]), "fields": fields}))
        except Exception as e:  # the package's validation: reported, not fatal
            print(json.dumps({"error": type(e).__name__ + ": " + str(e)[:120]}))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
