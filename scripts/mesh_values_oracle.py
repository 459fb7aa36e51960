#!/usr/bin/env python3
"""Composition Data pages and Mesh Device Property values parsed by Silvair's
bluetooth-mesh-messages (PyPI, GPL-2.0), run as a separate process by
Tests/BluesiftProtocolsTests/MeshSilvairValueTests.swift.

    .venv-mesh/bin/python scripts/mesh_values_oracle.py < requests

One request a line in: "access HEX" (an access payload, opcode first) or "property ID HEX" (a
property's raw value). One JSON object a line out: the package's parse as nested objects and
lists (enums as numbers, bytes as hex, "unknown" values as null), or {"error": "..."}.
"""
import enum
import json
import sys

from bluetooth_mesh.messages import AccessMessage
from bluetooth_mesh.messages.properties import PropertyDict, PropertyID


def plain(obj):
    if isinstance(obj, dict):
        return {str(k): plain(v) for k, v in obj.items() if not str(k).startswith("_")}
    if isinstance(obj, (list, tuple)):
        return [plain(x) for x in obj]
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, (bytes, bytearray)):
        return bytes(obj).hex()
    if isinstance(obj, float) and obj == sys.float_info.max:
        return None
    if isinstance(obj, (int, float, str, bool)) or obj is None:
        return obj
    return str(obj)


def main():
    for line in sys.stdin:
        parts = line.split()
        if not parts:
            continue
        try:
            if parts[0] == "access":
                out = plain(dict(AccessMessage.parse(bytes.fromhex(parts[1]))))
            else:
                out = plain(PropertyDict[PropertyID(int(parts[1]))].parse(bytes.fromhex(parts[2])))
            print(json.dumps(out))
        except Exception as e:  # the package's validation: reported, not fatal
            print(json.dumps({"error": type(e).__name__ + ": " + str(e)[:120]}))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
