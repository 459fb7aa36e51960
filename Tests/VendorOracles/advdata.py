"""Advertisements as bytes: AD structures, HCI LE Advertising Report events, btsnoop files.

Shared by oracle.py (vectors → captures for bluesift, captures → oracle inputs) and
survey.py. Standard library only.

An advertisement here is the dict the vectors carry (the shape of Home Assistant's
BluetoothServiceInfo):
  {"address": "A4:C1:38:8D:18:B2", "local_name": "ATC_8D18B2",
   "manufacturer_data": {"60552": "00e1..."},          # company id (decimal string) → hex
   "service_data": {"0000181a-0000-1000-8000-00805f9b34fb": "a4c1..."},
   "service_uuids": ["0000181a-0000-1000-8000-00805f9b34fb"], "rssi": -60}
"""
from __future__ import annotations

import struct
import uuid as uuidlib

BASE_UUID_TAIL = "-0000-1000-8000-00805f9b34fb"

# AD types (Assigned Numbers §2.3)
AD_FLAGS = 0x01
AD_UUID16_INCOMPLETE, AD_UUID16_COMPLETE = 0x02, 0x03
AD_UUID32_INCOMPLETE, AD_UUID32_COMPLETE = 0x04, 0x05
AD_UUID128_INCOMPLETE, AD_UUID128_COMPLETE = 0x06, 0x07
AD_NAME_SHORT, AD_NAME_COMPLETE = 0x08, 0x09
AD_TX_POWER = 0x0A
AD_SERVICE_DATA16, AD_SERVICE_DATA32, AD_SERVICE_DATA128 = 0x16, 0x20, 0x21
AD_MANUFACTURER = 0xFF

# btsnoop: "btsnoop\0", version 1, datalink 1002 (HCI H4); timestamps in µs since 0000-01-01
BTSNOOP_EPOCH_DELTA = 0x00DCDDB30F2F8000


def uuid_full(u: str | int) -> str:
    """A 16/32-bit UUID (int or hex) or a 128-bit string → 128-bit lower-case string."""
    if isinstance(u, int):
        return f"{u:08x}{BASE_UUID_TAIL}"
    u = u.lower()
    if len(u) <= 8 and all(c in "0123456789abcdef" for c in u):
        return f"{int(u, 16):08x}{BASE_UUID_TAIL}"
    return str(uuidlib.UUID(u))


def uuid_short(u: str) -> int | None:
    """The 16- or 32-bit alias of a UUID on the Bluetooth base, else None."""
    u = uuid_full(u)
    if u.endswith(BASE_UUID_TAIL):
        return int(u[:8], 16)
    return None


def ad_structures(adv: dict, flags: int | None = 0x06) -> list[tuple[int, bytes]]:
    """The advertisement as (AD type, data) pairs, in the order a device usually sends them."""
    out: list[tuple[int, bytes]] = []
    if flags is not None:
        out.append((AD_FLAGS, bytes([flags])))
    u16, u32, u128 = [], [], []
    for u in adv.get("service_uuids") or []:
        s = uuid_short(u)
        if s is not None and s <= 0xFFFF:
            u16.append(struct.pack("<H", s))
        elif s is not None:
            u32.append(struct.pack("<I", s))
        else:
            u128.append(uuidlib.UUID(uuid_full(u)).bytes[::-1])
    if u16:
        out.append((AD_UUID16_COMPLETE, b"".join(u16)))
    if u32:
        out.append((AD_UUID32_COMPLETE, b"".join(u32)))
    if u128:
        out.append((AD_UUID128_COMPLETE, b"".join(u128)))
    for u, data in (adv.get("service_data") or {}).items():
        data = bytes.fromhex(data)
        s = uuid_short(u)
        if s is not None and s <= 0xFFFF:
            out.append((AD_SERVICE_DATA16, struct.pack("<H", s) + data))
        elif s is not None:
            out.append((AD_SERVICE_DATA32, struct.pack("<I", s) + data))
        else:
            out.append((AD_SERVICE_DATA128, uuidlib.UUID(uuid_full(u)).bytes[::-1] + data))
    for cid, data in (adv.get("manufacturer_data") or {}).items():
        out.append((AD_MANUFACTURER, struct.pack("<H", int(cid)) + bytes.fromhex(data)))
    name = adv.get("local_name")
    if name and not _is_address_like(name, adv.get("address", "")):
        out.append((AD_NAME_COMPLETE, name.encode("utf-8")))
    return out


def _is_address_like(name: str, address: str) -> bool:
    # Home Assistant fills a missing name with the address ("AA:BB:..." or "AA-BB-..."): not sent.
    return name.replace("-", ":").upper() == address.upper()


def encode_ad(structs: list[tuple[int, bytes]]) -> bytes:
    return b"".join(bytes([len(d) + 1, t]) + d for t, d in structs)


def split_legacy(structs: list[tuple[int, bytes]]) -> list[bytes] | None:
    """Pack AD structures into an ADV_IND payload and a SCAN_RSP payload (31 bytes each);
    None when they do not fit (then an extended report carries them)."""
    parts: list[list[tuple[int, bytes]]] = [[], []]
    for s in structs:
        size = len(s[1]) + 2
        for p in parts:
            if len(encode_ad(p)) + size <= 31:
                p.append(s)
                break
        else:
            return None
    return [encode_ad(p) for p in parts if p]


def address_bytes(address: str) -> bytes:
    """"A4:C1:38:8D:18:B2" → the 6 bytes as HCI carries them (least significant first)."""
    h = address.replace(":", "").replace("-", "")
    if len(h) != 12:  # e.g. a macOS UUID in the tests: a fixed placeholder
        h = "000000000000"
    return bytes.fromhex(h)[::-1]


def address_type(address: str) -> int:
    """0 public, 1 random: random static addresses have the two top bits set."""
    h = address.replace(":", "").replace("-", "")
    return 1 if len(h) == 12 and (int(h[:2], 16) & 0xC0) == 0xC0 else 0


def hci_le_adv_report(address: str, data: bytes, rssi: int, event_type: int = 0x00,
                      addr_type: int | None = None) -> bytes:
    """H4 HCI LE Meta event, LE Advertising Report (subevent 0x02), one report.
    event_type: 0x00 ADV_IND, 0x02 ADV_SCAN_IND, 0x03 ADV_NONCONN_IND, 0x04 SCAN_RSP."""
    if len(data) > 31:
        raise ValueError("legacy advertising data is at most 31 bytes")
    at = address_type(address) if addr_type is None else addr_type
    params = bytes([0x02, 1, event_type, at]) + address_bytes(address) + bytes([len(data)]) + data \
        + struct.pack("b", max(-127, min(20, rssi)))
    return bytes([0x04, 0x3E, len(params)]) + params


def hci_le_ext_adv_report(address: str, data: bytes, rssi: int, addr_type: int | None = None,
                          more: bool = False) -> bytes:
    """H4 HCI LE Meta event, LE Extended Advertising Report (subevent 0x0D), one
    non-connectable, non-scannable, non-legacy report on LE 1M; `more`: data status
    "incomplete, more data to come" (event type bits 5-6 = 01)."""
    if len(data) > 229:
        raise ValueError("one extended report carries at most 229 bytes")
    at = address_type(address) if addr_type is None else addr_type
    params = bytes([0x0D, 1]) + struct.pack("<H", 0x0020 if more else 0x0000) + bytes([at]) + address_bytes(address) \
        + bytes([1, 0, 0xFF, 0x7F]) + struct.pack("b", max(-127, min(20, rssi))) \
        + struct.pack("<H", 0) + bytes([0]) + bytes(6) + bytes([len(data)]) + data
    return bytes([0x04, 0x3E, len(params)]) + params


def hci_events_for(adv: dict) -> list[bytes]:
    """The HCI events a controller would deliver for this advertisement: ADV_IND (+ SCAN_RSP)
    when the AD structures fit in legacy PDUs, else one extended report."""
    structs = ad_structures(adv)
    rssi = adv.get("rssi") if adv.get("rssi") is not None else -60
    parts = split_legacy(structs)
    if parts is None:
        # Too much for one report: fragments (data status "more to come"), cut between AD
        # structures so each report stays readable on its own (a controller may cut anywhere).
        chunks, cur = [], b""
        for st in structs:
            e = encode_ad([st])
            if cur and len(cur) + len(e) > 229:
                chunks.append(cur)
                cur = b""
            cur += e
        chunks.append(cur)
        return [hci_le_ext_adv_report(adv["address"], c, rssi, more=i < len(chunks) - 1) for i, c in enumerate(chunks)]
    events = [hci_le_adv_report(adv["address"], parts[0], rssi, 0x00)]
    if len(parts) > 1:
        events.append(hci_le_adv_report(adv["address"], parts[1], rssi, 0x04))
    return events


def btsnoop(events: list[bytes], start_us: int = 1_764_115_200_000_000, step_us: int = 100_000) -> bytes:
    """A btsnoop file (datalink 1002, H4) holding these H4 packets, received by the host."""
    out = bytearray(b"btsnoop\x00" + struct.pack(">II", 1, 1002))
    for i, p in enumerate(events):
        flags = 0x01 | (0x02 if p[0] in (0x01, 0x04) else 0)  # received; command/event
        ts = start_us + i * step_us + BTSNOOP_EPOCH_DELTA
        out += struct.pack(">IIIIq", len(p), len(p), flags, 0, ts) + p
    return bytes(out)


# ------------------------------------------------------------------ parsing

def parse_ad(data: bytes) -> list[tuple[int, bytes]]:
    out, i = [], 0
    while i < len(data):
        n = data[i]
        if n == 0:
            break
        if i + 1 + n > len(data):
            break  # truncated structure: stop, as receivers do
        out.append((data[i + 1], bytes(data[i + 2:i + 1 + n])))
        i += 1 + n
    return out


def adv_from_structs(address: str, structs: list[tuple[int, bytes]], rssi: int) -> dict:
    """AD structures → the BluetoothServiceInfo-shaped dict (as BlueZ/HA merge them)."""
    adv = {"address": address, "local_name": "", "manufacturer_data": {}, "service_data": {},
           "service_uuids": [], "rssi": rssi}
    for t, d in structs:
        if t in (AD_NAME_COMPLETE, AD_NAME_SHORT):
            if t == AD_NAME_COMPLETE or not adv["local_name"]:
                adv["local_name"] = d.decode("utf-8", "replace")
        elif t == AD_MANUFACTURER and len(d) >= 2:
            adv["manufacturer_data"][str(d[0] | d[1] << 8)] = d[2:].hex()
        elif t in (AD_UUID16_COMPLETE, AD_UUID16_INCOMPLETE):
            adv["service_uuids"] += [uuid_full(int.from_bytes(d[i:i + 2], "little")) for i in range(0, len(d) - 1, 2)]
        elif t in (AD_UUID32_COMPLETE, AD_UUID32_INCOMPLETE):
            adv["service_uuids"] += [uuid_full(int.from_bytes(d[i:i + 4], "little")) for i in range(0, len(d) - 3, 4)]
        elif t in (AD_UUID128_COMPLETE, AD_UUID128_INCOMPLETE):
            adv["service_uuids"] += [str(uuidlib.UUID(bytes=d[i:i + 16][::-1])) for i in range(0, len(d) - 15, 16)]
        elif t == AD_SERVICE_DATA16 and len(d) >= 2:
            adv["service_data"][uuid_full(int.from_bytes(d[:2], "little"))] = d[2:].hex()
        elif t == AD_SERVICE_DATA32 and len(d) >= 4:
            adv["service_data"][uuid_full(int.from_bytes(d[:4], "little"))] = d[4:].hex()
        elif t == AD_SERVICE_DATA128 and len(d) >= 16:
            adv["service_data"][str(uuidlib.UUID(bytes=d[:16][::-1]))] = d[16:].hex()
    if not adv["local_name"]:
        adv["local_name"] = address  # as Home Assistant names a device without a name
    return adv


def _fmt_addr(b: bytes) -> str:
    return ":".join(f"{x:02X}" for x in b[::-1])


def parse_hci_event(ev: bytes) -> list[dict]:
    """An H4 (leading 0x04) or bare HCI event → the advertising reports it holds:
    [{"address", "address_type", "event_type", "rssi", "data" (bytes), "subevent"}]."""
    if ev and ev[0] == 0x04 and len(ev) > 2 and ev[1] == 0x3E:
        ev = ev[1:]
    if len(ev) < 4 or ev[0] != 0x3E:
        return []
    p = ev[2:2 + ev[1]]
    sub, out = p[0], []
    if sub == 0x02 and len(p) >= 2:
        n, i = p[1], 2
        for _ in range(n):
            if i + 9 > len(p):
                break
            et, at, addr, dl = p[i], p[i + 1], p[i + 2:i + 8], p[i + 8]
            data = p[i + 9:i + 9 + dl]
            rssi = struct.unpack("b", p[i + 9 + dl:i + 10 + dl])[0] if i + 10 + dl <= len(p) else 127
            out.append({"subevent": sub, "event_type": et, "address_type": at, "address": _fmt_addr(addr),
                        "data": bytes(data), "rssi": rssi})
            i += 10 + dl
    elif sub == 0x0D and len(p) >= 2:
        n, i = p[1], 2
        for _ in range(n):
            if i + 24 > len(p):
                break
            et = int.from_bytes(p[i:i + 2], "little")
            at, addr = p[i + 2], p[i + 3:i + 9]
            rssi = struct.unpack("b", p[i + 13:i + 14])[0]
            dl = p[i + 23]
            data = p[i + 24:i + 24 + dl]
            out.append({"subevent": sub, "event_type": et, "address_type": at, "address": _fmt_addr(addr),
                        "data": bytes(data), "rssi": rssi})
            i += 24 + dl
    return out


def read_btsnoop(blob: bytes) -> list[bytes]:
    assert blob[:8] == b"btsnoop\x00", "not a btsnoop file"
    i, out = 16, []
    while i + 24 <= len(blob):
        _, incl, _, _, _ = struct.unpack(">IIIIq", blob[i:i + 24])
        out.append(blob[i + 24:i + 24 + incl])
        i += 24 + incl
    return out
