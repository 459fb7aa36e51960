#!/usr/bin/env python3
"""Corpus survey: which vendor advertising payloads the public captures hold, and which the
oracles decode.

  .venv-oracles/bin/python Tests/VendorOracles/survey.py [CAPTURE_DIR] [--md CORPUS.md] [--jsonl out.jsonl]
        [--oracle-jsonl corpus-oracle.jsonl] [--bluesift PATH/TO/bluesift]

--oracle-jsonl writes, for every report an oracle decodes, oracle.py's JSON line plus "file"
and "frame" (and an id ORACLE@CAPTURE:FRAME:ADDRESS), which compare.py matches with
`bluesift dump CAPTURES --with-file --format jsonl` records by file name and frame number.

Every advertising report is read with tshark (`-T json -x`, the `bthci_evt` layer's bytes for
HCI captures: LE Advertising Report 0x02 and LE Extended Advertising Report 0x0D; the `btle`
layer's bytes for sniffer captures: ADV_IND, ADV_NONCONN_IND, ADV_SCAN_IND, SCAN_RSP), its AD
structures parsed (advdata.py), and classified by company id (first bytes where a vendor puts
its format type), service data UUID and local name. Each distinct advertisement (address +
AD bytes) is then given to every oracle: the Home Assistant libraries get a
BluetoothServiceInfo built from the AD structures, bleparser the HCI event (rebuilt as a legacy
report when the capture is a sniffer's or the report is extended).
"""
from __future__ import annotations

import collections
import contextlib
import io
import json
import logging
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import advdata  # noqa: E402
import oracle as orc  # noqa: E402

logging.disable(logging.CRITICAL)

COMPANY_NAMES: dict[int, str] = {}


def company_name(cid: int) -> str:
    if not COMPANY_NAMES:
        cp = subprocess.run(["tshark", "-G", "values"], capture_output=True, text=True)
        for line in cp.stdout.splitlines():
            p = line.split("\t")
            if len(p) >= 4 and p[0] == "V" and p[1] == "btcommon.eir_ad.entry.company_id":
                COMPANY_NAMES[int(p[2])] = p[3]
    return COMPANY_NAMES.get(cid, "unassigned")


# 16-bit service data UUIDs of advertising formats (Assigned Numbers "Member UUIDs" and GATT services)
SERVICE_DATA_FORMATS = {
    0xFE95: "Xiaomi MiBeacon", 0xFCD2: "BTHome v2", 0x181C: "BTHome v1 (plain)", 0x181E: "BTHome v1 (encrypted)",
    0x181A: "pvvx/ATC custom (Environmental Sensing)", 0x181B: "Xiaomi scale v2 (Body Composition)",
    0x181D: "Xiaomi scale v1 (Weight Scale)", 0xFDCD: "Qingping", 0xFEAA: "Eddystone", 0xFE2C: "Google Fast Pair",
    0xFD3D: "SwitchBot", 0x0D00: "SwitchBot (old)", 0xFEF3: "Google", 0xFE9F: "Google", 0xFEED: "Tile",
    0xFEEC: "Tile", 0xFD5A: "Samsung SmartTag", 0xFD69: "Samsung", 0xFE03: "Amazon", 0xFE59: "Nordic DFU",
    0xFD6F: "Exposure Notification", 0xFCF1: "Google", 0xFE07: "Sonos", 0xFEBE: "Bose", 0xFDAB: "Xiaomi (MiHome)",
    0x1000: "Moat?", 0xFE0F: "Signify (Philips Hue)", 0xFE78: "HP", 0xFE9A: "Estimote", 0xFEAF: "Nest",
    0xFFF0: "vendor (FFF0)",
}

APPLE_TYPES = {0x01: "overflow area", 0x02: "iBeacon", 0x03: "AirPrint", 0x05: "AirDrop", 0x06: "HomeKit",
               0x07: "Proximity Pairing", 0x08: "Hey Siri", 0x09: "AirPlay Target", 0x0A: "AirPlay Source",
               0x0B: "Magic Switch", 0x0C: "Handoff", 0x0D: "Tethering Target (Instant Hotspot)",
               0x0E: "Tethering Source", 0x0F: "Nearby Action", 0x10: "Nearby Info", 0x12: "Find My",
               0x16: "Nearby Action (2)"}


def classify(adv: dict, structs: list[tuple[int, bytes]]) -> list[str]:
    """Vendor format labels for one advertisement."""
    out = []
    name = adv.get("local_name", "")
    for cid_s, hexdata in adv["manufacturer_data"].items():
        cid, data = int(cid_s), bytes.fromhex(hexdata)
        if cid == 0x004C:
            t = data[0] if data else None
            if t == 0x02 and len(data) >= 2 and data[1] == 0x15:
                out.append("Apple iBeacon")
            else:
                out.append(f"Apple Continuity: {APPLE_TYPES.get(t, f'type 0x{t:02x}' if t is not None else 'empty')}")
        elif cid == 0x0006:
            if data[:1] == b"\x03":
                out.append("Microsoft Swift Pair")
            elif data[:1] == b"\x01":
                out.append("Microsoft CDP beacon")
            else:
                out.append(f"Microsoft (0x{data[:1].hex()})")
        elif len(data) >= 2 and data[0] == 0xBE and data[1] == 0xAC:
            out.append(f"AltBeacon (company 0x{cid:04x})")
        elif cid == 0xEC88:
            out.append("Govee (0xEC88: H5075/H5072 kin)")
        elif cid == 0x0499:
            out.append("Ruuvi")
        elif cid == 0x0969:
            out.append("SwitchBot (Woan)")
        elif cid == 0x00DC:
            out.append("Oral-B (Procter & Gamble)")
        elif cid == 0x094F:
            out.append("MikroTik")
        elif cid == 0x089A:
            out.append("Teltonika")
        elif cid == 0x0133:
            out.append("BlueMaestro")
        elif cid == 0x0059 and re.match(r"^(M|Mopeka)", name or ""):
            out.append("Mopeka")
        else:
            out.append(f"company 0x{cid:04x} {company_name(cid)}")
    for u in adv["service_data"]:
        s = advdata.uuid_short(u)
        if s is not None and s <= 0xFFFF:
            out.append(f"service data 0x{s:04x} {SERVICE_DATA_FORMATS.get(s, '')}".rstrip())
        else:
            out.append(f"service data {u}")
    if name and re.match(r"^(GVH5|Govee_|ihoment_|GV)", name):
        out.append("Govee (by name)")
    if name and re.match(r"^(ATC_|LYWSD03|MJ_HT|Qingping|CGG)", name):
        out.append(f"Xiaomi/Qingping/ATC (by name {name[:8]})")
    if name and re.match(r"^(Ruuvi)", name):
        out.append("Ruuvi (by name)")
    if name and re.match(r"^(TP3|TP9)", name):
        out.append("ThermoPro (by name)")
    if name and re.match(r"^(sps|tps|ibbq|iBBQ)$", name):
        out.append("Inkbird (by name)")
    if any(t in (0x03, 0x02) and b"\x9e\xca" in d for t, d in structs) or any(
            u.startswith("6e400001-b5a3-f393-e0a9-e50e24dcca9e") for u in adv["service_uuids"]):
        out.append("Nordic UART service (UUID advertised)")
    return out


# ------------------------------------------------------------------ reading captures

def reports_of(capture: Path):
    """Yields (frame, source, address, ad bytes, rssi, hci event or None) for each advertising
    report tshark finds."""
    cmd = ["tshark", "-r", str(capture), "-Y",
           "bthci_evt.le_meta_subevent == 0x02 || bthci_evt.le_meta_subevent == 0x0d || "
           "(btle.advertising_header && !btle.data_header && !(nordic_ble.crcok == 0) && !(btle_rf.flags.crc_checked == 1 && btle_rf.flags.crc_valid == 0))",
           "-T", "json", "-x", "-j", "frame bthci_evt btle"]
    cp = subprocess.run(cmd, capture_output=True, text=True)
    if not cp.stdout.strip():
        return
    for pkt in json.loads(cp.stdout):
        layers = pkt["_source"]["layers"]
        try:
            frame = int(layers["frame"]["frame.number"])
        except (KeyError, TypeError, ValueError):
            frame = None
        if "bthci_evt_raw" in layers:
            ev = bytes.fromhex(layers["bthci_evt_raw"][0])
            for i, r in enumerate(advdata.parse_hci_event(ev)):
                yield frame, f"hci 0x{r['subevent']:02x}", r["address"], r["data"], r["rssi"], \
                    (b"\x04" + ev if r["subevent"] == 0x02 else None), r["event_type"]
        elif "btle_raw" in layers:
            pdu = bytes.fromhex(layers["btle_raw"][0])
            if len(pdu) < 6 + 6:
                continue
            hdr, ln = pdu[4], pdu[5]
            ptype = hdr & 0x0F
            if ptype not in (0x00, 0x02, 0x04, 0x06):  # ADV_IND, ADV_NONCONN_IND, SCAN_RSP, ADV_SCAN_IND
                continue
            body = pdu[6:6 + ln]
            addr = ":".join(f"{x:02X}" for x in body[:6][::-1])
            rssi = -60  # the sniffer's RSSI is in its pseudo-header; only signal_strength depends on it
            yield frame, f"ll {['ADV_IND', '', 'ADV_NONCONN_IND', '', 'SCAN_RSP', '', 'ADV_SCAN_IND'][ptype]}", \
                addr, body[6:], rssi, None, ptype


def bluesift_reports(binary: str, capture: Path) -> int | None:
    """Advertising reports `bluesift dump --protocol adv` finds (read-only use of a built binary)."""
    cp = subprocess.run([binary, "dump", str(capture), "--format", "jsonl", "--protocol", "adv"],
                        capture_output=True, text=True, timeout=600)
    if cp.returncode != 0:
        return None
    n = 0
    for line in cp.stdout.splitlines():
        a = json.loads(line).get("adv") or {}
        n += len(a.get("reports") or [])
    return n


# ------------------------------------------------------------------ oracles over the corpus

class CorpusOracles:
    def __init__(self):
        self.ha = {v: orc.HAOracle(v) for v in orc.HA_LIBS}
        self.ble = orc.BleParserOracle()
        self.sb = orc.SwitchbotOracle()
        self.ib = orc.IBeaconOracle()
        self.parsers: dict[tuple, object] = {}
        self.ble_parser = self.ble.new(None)
        self.ib_parser = self.ib.new(None)

    def run(self, adv: dict, hci_event: bytes) -> dict[str, dict]:
        """oracle name → its result, for the oracles that decode this advertisement."""
        out = {}
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            for v, o in self.ha.items():
                key = (v, adv["address"])
                p = self.parsers.get(key) or self.parsers.setdefault(key, o.new(None))
                try:
                    r = o.run(p, adv)
                except Exception as e:  # noqa: BLE001
                    r = {"decoded": False, "error": repr(e)}
                if r.get("decoded"):
                    out[v] = r
            for name, fn in (("bleparser", lambda: self.ble.run(self.ble_parser, {"hci_event": hci_event.hex()})),
                             ("switchbot", lambda: self.sb.run(None, adv)),
                             ("ibeacon", lambda: self.ib.run(self.ib_parser, adv))):
                try:
                    r = fn()
                except Exception as e:  # noqa: BLE001
                    r = {"decoded": False, "error": repr(e)}
                if r.get("decoded"):
                    out[name] = r
        return out


def main(argv: list[str]) -> int:
    args = list(argv)
    md_out = jsonl_out = None
    if "--md" in args:
        i = args.index("--md"); md_out = args[i + 1]; del args[i:i + 2]
    if "--jsonl" in args:
        i = args.index("--jsonl"); jsonl_out = args[i + 1]; del args[i:i + 2]
    oracle_out = None
    if "--oracle-jsonl" in args:  # oracle results per decoded corpus report, for compare.py
        i = args.index("--oracle-jsonl"); oracle_out = open(args[i + 1], "w"); del args[i:i + 2]
    bluesift = None
    if "--bluesift" in args:  # cross-check the report counts with bluesift's own reader
        i = args.index("--bluesift"); bluesift = args[i + 1]; del args[i:i + 2]
    cdir = Path(args[0] if args else "/work/shared/captures/public")
    captures = sorted(p for p in cdir.iterdir() if p.is_file() and p.suffix not in (".md", ".txt"))
    oracles = CorpusOracles()
    fmt_caps: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    per_capture = {}
    decoded: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    examples: dict[str, dict] = {}
    cache: dict[tuple, dict] = {}
    mibeacon: collections.Counter = collections.Counter()
    jl = open(jsonl_out, "w") if jsonl_out else None
    for cap in captures:
        n_reports = n_with_ad = 0
        for frame, source, addr, data, rssi, hci, et in reports_of(cap):
            n_reports += 1
            structs = advdata.parse_ad(data)
            if not structs:
                continue
            n_with_ad += 1
            adv = advdata.adv_from_structs(addr, structs, rssi)
            labels = classify(adv, structs)
            for u, d in adv["service_data"].items():
                if u.startswith("0000fe95-"):
                    b = bytes.fromhex(d)
                    if len(b) >= 5:
                        fc = int.from_bytes(b[:2], "little")
                        mibeacon[(cap.name, fc, int.from_bytes(b[2:4], "little"), len(b))] += 1
            for lab in labels:
                fmt_caps[lab][cap.name] += 1
            key = (addr, data)
            if key not in cache:
                if hci is None:
                    hci = advdata.hci_le_adv_report(addr, data[:31], rssi, 0x00)
                cache[key] = oracles.run(adv, hci)
            res = cache[key]
            if oracle_out is not None:
                for o, r in res.items():
                    oracle_out.write(json.dumps(dict(r, id=f"{o}@{cap.name}:{frame}:{addr}", vendor=o,
                                                     file=cap.name, frame=frame, address=addr),
                                                ensure_ascii=False) + "\n")
            for o, r in res.items():
                decoded[o][cap.name] += 1
                ex_key = f"{o}|{cap.name}"
                if ex_key not in examples:
                    examples[ex_key] = {"capture": cap.name, "oracle": o, "frame": frame, "source": source,
                                        "ad_len": len(data), "labels": labels,
                                        "model": next(iter(r.get("devices", {}).values()), {}).get("model"),
                                        "values": {v["key"]: v["value"] for v in r.get("values", [])
                                                   if v["key"] != "signal_strength"}}
            if jl and (res or labels):
                jl.write(json.dumps({"capture": cap.name, "source": source, "address": addr, "ad": data.hex(),
                                     "labels": labels, "decoded_by": sorted(res)}) + "\n")
        per_capture[cap.name] = (n_reports, n_with_ad, bluesift_reports(bluesift, cap) if bluesift and n_reports else None)
        print(f"{cap.name}: {n_reports} advertising reports, {n_with_ad} with AD data", file=sys.stderr)
    if jl:
        jl.close()
    if oracle_out is not None:
        oracle_out.close()
    if md_out:
        write_md(Path(md_out), per_capture, fmt_caps, decoded, examples, mibeacon)
    return 0


def write_md(path: Path, per_capture, fmt_caps, decoded, examples, mibeacon):
    L = []
    L.append("# Vendor advertising payloads in the public corpus")
    L.append("")
    L.append("Made by `Tests/VendorOracles/survey.py` over `/work/shared/captures/public` (36 captures, see its "
             "SOURCES.md; the captures themselves are not in this repository) with tshark 4.0.17 and the oracles of "
             "`requirements.txt`. Counts are advertising reports (HCI LE Advertising Report / LE Extended Advertising "
             "Report entries, or sniffed ADV_IND / ADV_NONCONN_IND / ADV_SCAN_IND / SCAN_RSP PDUs) carrying that "
             "format; one report can carry several formats (an Apple type and a name, say).")
    L.append("")
    L.append("## Advertising reports per capture")
    L.append("")
    cross = any(b is not None for _, _, b in per_capture.values())
    L.append("| capture | reports | with AD data |" + (" bluesift main: reports |" if cross else ""))
    L.append("|---|---:|---:|" + ("---:|" if cross else ""))
    for c, (n, a, b) in sorted(per_capture.items()):
        if n:
            L.append(f"| {c} | {n} | {a} |" + (f" {b if b is not None else '?'} |" if cross else ""))
    if cross:
        L.append("")
        L.append("The last column is today's bluesift (`dump --format jsonl --protocol adv`, the main-branch "
                 "binary, read-only) counting the same reports independently; it lists each report's AD "
                 "structures (company id, UUID, data as hex) and decodes no vendor payload yet. The counts agree "
                 "once sniffer PDUs with a failed CRC are left out here (survey.py filters on the sniffer's CRC flag).")
    none = [c for c, (n, a, b) in sorted(per_capture.items()) if not n]
    L.append("")
    L.append(f"No advertising reports in: {', '.join(none)}.")
    L.append("")
    L.append("## Formats → captures → reports")
    L.append("")
    L.append("Classified by `survey.py classify()`: company id (Apple and Microsoft by their type byte, AltBeacon by its "
             "0xBEAC code), 16-bit service data UUID, and a few local-name patterns. \"company 0x…\" rows are "
             "manufacturer data whose format no listed plugin targets (names from Wireshark's company table).")
    L.append("")
    L.append("| format | reports | captures (reports) |")
    L.append("|---|---:|---|")
    for lab, caps in sorted(fmt_caps.items(), key=lambda kv: -sum(kv[1].values())):
        L.append(f"| {lab} | {sum(caps.values())} | " + ", ".join(f"{c} ({n})" for c, n in caps.most_common()) + " |")
    L.append("")
    L.append("## What the oracles decode")
    L.append("")
    if not decoded:
        L.append("No oracle decodes any advertisement of the corpus.")
    else:
        L.append("Reports an oracle decodes to at least one value besides the RSSI (same address and AD bytes are "
                 "decoded once and counted every time).")
        L.append("")
        L.append("| oracle | reports | captures (reports) |")
        L.append("|---|---:|---|")
        for o, caps in sorted(decoded.items(), key=lambda kv: -sum(kv[1].values())):
            L.append(f"| {o} | {sum(caps.values())} | " + ", ".join(f"{c} ({n})" for c, n in caps.most_common()) + " |")
        L.append("")
        L.append("First decoded report per oracle and capture:")
        L.append("")
        for k, ex in sorted(examples.items()):
            vals = ", ".join(f"{a}={b}" for a, b in list(ex["values"].items())[:8])
            L.append(f"- **{ex['oracle']}** on {ex['capture']} frame {ex['frame']} ({ex['source']}, {ex['ad_len']} bytes "
                     f"of AD data): model {ex['model']!s}; {vals}")
    if mibeacon:
        L.append("")
        L.append("## Xiaomi MiBeacon (service data 0xFE95) frames")
        L.append("")
        L.append("Frame control (bit 3 encrypted, bit 4 MAC included, bit 5 capability included, bit 6 object "
                 "included, bits 12-15 version) and product id of each MiBeacon frame:")
        L.append("")
        L.append("| capture | frame control | version | encrypted | MAC | capability | object | product id | bytes | reports |")
        L.append("|---|---|---:|---|---|---|---|---|---:|---:|")
        for (c, fc, pid, n), cnt in mibeacon.most_common():
            L.append(f"| {c} | 0x{fc:04x} | {fc >> 12} | {'yes' if fc & 0x08 else 'no'} | {'yes' if fc & 0x10 else 'no'} | "
                     f"{'yes' if fc & 0x20 else 'no'} | {'yes' if fc & 0x40 else 'no'} | 0x{pid:04x} | {n} | {cnt} |")
    L.append("")
    path.write_text("\n".join(L) + "\n")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
