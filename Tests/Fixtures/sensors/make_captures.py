#!/usr/bin/env python3
"""Captures for the sensor table and the report's Sensors view (issue 29).

  python3 Tests/Fixtures/sensors/make_captures.py            # writes bthome_vectors.btsnoop here
  python3 Tests/Fixtures/sensors/make_captures.py --demo OUT  # a synthetic 2-hour capture (not committed)

bthome_vectors.btsnoop: ten advertisements of bthome-ble's own tests (vectors/bthome.json,
MIT, provenance in Tests/VendorOracles/README.md), written one per record 100 ms apart as
oracle.py's captures are (advdata.py): the unencrypted BTHome v2 vectors of two test addresses
on which bthome-ble 3.25.0 and the bthome-v2 plugin give the same temperatures.

--demo: two BTHome v2 sensors (temperature, humidity, battery) every 10 s and a Govee H5075
every 30 s for two hours, with a daily-cycle-like curve, a door opened at 45 min (a 3 °C dip)
and one reading the Govee flags as an error; payloads built as bthome.io/format and
govee-ble's parser read them.
"""
from __future__ import annotations

import json
import math
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ORACLES = HERE.parent.parent / "VendorOracles"
sys.path.insert(0, str(ORACLES))
import advdata  # noqa: E402

VECTORS = ["bthome-050", "bthome-051", "bthome-081", "bthome-082", "bthome-115",
           "bthome-135", "bthome-136", "bthome-137", "bthome-138", "bthome-155"]


def vectors_capture() -> bytes:
    doc = json.loads((ORACLES / "vectors" / "bthome.json").read_text())
    by_id = {v["id"]: v for v in doc["vectors"]}
    events = []
    for i in VECTORS:
        evs = advdata.hci_events_for(by_id[i]["input"])
        assert len(evs) == 1, i
        events += evs
    return advdata.btsnoop(events)


def bthome(temp: float, hum: float, battery: int, packet: int) -> bytes:
    return (bytes([0x40, 0x00, packet & 0xFF, 0x01, battery]) + b"\x02" + round(temp * 100).to_bytes(2, "little", signed=True)
            + b"\x03" + round(hum * 100).to_bytes(2, "little"))


def govee(temp: float, hum: float, battery: int, error: bool = False) -> bytes:
    t = round(temp * 10)
    packed = (abs(t) * 1000 + round(hum * 10)) | (0x800000 if t < 0 else 0)
    return bytes([0x88, 0xEC, 0x00]) + packed.to_bytes(3, "big") + bytes([battery | (0x80 if error else 0), 0x00])


def demo_capture() -> bytes:
    start = 1_764_115_200_000_000 + 6 * 3600 * 1_000_000   # 2025-11-26 06:00 UTC
    recs: list[tuple[int, bytes]] = []
    rnd = random.Random(29)
    for k in range(0, 7200, 10):
        m = k / 60
        for n, (addr, name, base, phase) in enumerate([("A4:C1:38:8D:18:B2", "Kitchen", 19.0, 0.0),
                                                       ("A4:C1:38:5A:20:11", "Bedroom", 17.5, 1.3)]):
            temp = base + 2.5 * math.sin(m / 35 + phase) + rnd.gauss(0, 0.05)
            if n == 0 and 45 <= m < 52:
                temp -= 3 * math.exp(-(m - 45) / 3)
            hum = 55 - 6 * math.sin(m / 35 + phase) + rnd.gauss(0, 0.3)
            battery = 93 - int(m // 50) - n * 20
            adv = {"address": addr, "local_name": name, "rssi": -60 - n * 9 + int(3 * math.sin(k)),
                   "manufacturer_data": {}, "service_uuids": [],
                   "service_data": {"0000fcd2-0000-1000-8000-00805f9b34fb": bthome(temp, hum, battery, k // 10).hex()}}
            for e in advdata.hci_events_for(adv):
                recs.append((start + k * 1_000_000 + n * 3000, e))
        if k % 30 == 0:
            temp = 21.0 + 1.2 * math.sin(m / 20) + rnd.gauss(0, 0.05)
            hum = 48 + 4 * math.cos(m / 20)
            data = advdata.encode_ad([(0x01, b"\x06"), (0x09, b"GVH5075_2762"), (0xFF, govee(temp, hum, 71, error=k == 3600))])
            recs.append((start + k * 1_000_000 + 7000, advdata.hci_le_adv_report("A4:C1:38:12:27:62", data, -71)))
    out = bytearray(b"btsnoop\x00" + (1).to_bytes(4, "big") + (1002).to_bytes(4, "big"))
    for ts, p in recs:
        out += len(p).to_bytes(4, "big") * 2 + (3).to_bytes(4, "big") + bytes(4) + (ts + advdata.BTSNOOP_EPOCH_DELTA).to_bytes(8, "big", signed=True) + p
    return bytes(out)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--demo":
        Path(sys.argv[2]).write_bytes(demo_capture())
    else:
        (HERE / "bthome_vectors.btsnoop").write_bytes(vectors_capture())
