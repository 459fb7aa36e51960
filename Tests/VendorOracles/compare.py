#!/usr/bin/env python3
"""Compare bluesift's decoding of the vector captures with the oracles' (skeleton for issue 29).

  oracle.py run > oracle.jsonl
  oracle.py captures --out caps/
  bluesift dump caps/*.btsnoop --plugins Plugins --format jsonl > bluesift.jsonl   # one file per vector
  compare.py oracle.jsonl bluesift.jsonl [--manifest caps/manifest.jsonl] [--plugin-map map.json] [-v]
  compare.py --selftest oracle.jsonl      # the comparison finds exactly the values it altered
  survey.py --oracle-jsonl corpus-oracle.jsonl; bluesift dump CAPTURES --with-file --plugins Plugins --format jsonl > b.jsonl
  compare.py corpus-oracle.jsonl b.jsonl  # real captures: matched by file name and frame number

Prints per plugin `PLUGIN: N vectors, N agree` (then each disagreement), exit 1 when any
disagree.

Matching records to vectors: a bluesift record carries `"file"` (several files dumped: the
per-vector captures are named VECTOR-ID.btsnoop) or, with --manifest and the per-vendor
captures (VENDOR.btsnoop), its frame number; all vendor objects of a vector's records (an
ADV_IND and its SCAN_RSP may both decode) are merged.

bluesift's `vendor` object (README "JSON Lines", VendorRendering.swift, PluginValue.describe):
  {"plugin":"govee-h5075","message":"h5075","fields":{...},"checksum":null}
 A field is a plain JSON value today. With units, docs/plugin-advertising-design.md §9 proposes
 a sibling "units": {"temperature": "°C"} next to "fields" (fields stay plain numbers); the
 alternative {"value":21.3,"unit":"°C"} per field is read too.
 Nested objects and lists (BTHome's keyed objects) are flattened; a name seen several times is
 numbered like bthome-ble does (temperature_1, temperature_2) when the oracle does so.

Agreement, value by value, for every key both sides have (the oracle's key names are Home
Assistant's; a plugin field of the same name, or one named by --plugin-map, is compared):
 - numbers: the plugin value rounded to the oracle value's decimal places (as printed by
   Python's repr, e.g. 21.3 → 1 place, 21 → 0) must equal the oracle value; a unit, when both
   give one, must be equal after normalising (°C/C, %/percent, hPa/mbar, …);
 - booleans and strings: equal (case-insensitive for strings);
 - keys only one side has are listed with -v, never counted as disagreement.
A vector the oracle decodes and the plugin does not (or the reverse) is a disagreement.
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import io
import json
import math
import re
import sys
from decimal import Decimal
from pathlib import Path

UNIT_ALIASES = {"c": "°C", "°c": "°C", "celsius": "°C", "percent": "%", "mbar": "hPa", "hpa": "hPa",
                "lux": "lx", "lx": "lx", "v": "V", "mv": "mV", "dbm": "dBm", "ppm": "ppm", "kg": "kg",
                "µs/cm": "µS/cm", "us/cm": "µS/cm", "µg/m³": "µg/m³", "ug/m3": "µg/m³", "s": "s", "m": "m"}

# Keys an oracle reports that no plugin should be asked to reproduce from the payload.
IGNORED_KEYS = {"signal_strength", "rssi"}  # context values; compare them only with --rssi
# ibeacon-ble's distance is its own path-loss estimate from RSSI and power, not payload.
IGNORED_PER_VENDOR = {"ibeacon": {"distance"}}


def norm_unit(u):
    if u is None:
        return None
    return UNIT_ALIASES.get(str(u).strip().lower(), str(u).strip())


def decimals(x) -> int:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return 0
    if isinstance(x, int):
        return 0
    e = Decimal(repr(x)).as_tuple().exponent
    return max(0, -e) if isinstance(e, int) else 0


def flatten(fields: dict, prefix: str = "") -> list[tuple[str, object, str | None]]:
    """(leaf name, value, unit) in order; {"value","unit"} objects are leaves."""
    out = []
    for k, v in fields.items():
        if isinstance(v, dict) and "value" in v and set(v) <= {"value", "unit", "raw", "text"}:
            out.append((k, v["value"], v.get("unit")))
        elif isinstance(v, dict):
            out += flatten(v, k)
        elif isinstance(v, list):
            for item in v:
                if isinstance(item, dict):
                    out += flatten(item, k)
                else:
                    out.append((k, item, None))
        else:
            out.append((k, v, None))
    return out


def find_vendor_objects(rec) -> list[dict]:
    """Every {"plugin","message","fields"} object in a bluesift record (top-level `vendor`,
    `vendor_more`, or per advertising report)."""
    found = []
    if isinstance(rec, dict):
        if "plugin" in rec and "fields" in rec and isinstance(rec["fields"], dict):
            found.append(rec)
        for v in rec.values():
            found += find_vendor_objects(v)
    elif isinstance(rec, list):
        for v in rec:
            found += find_vendor_objects(v)
    return found


def plugin_values(vobjs: list[dict], oracle_keys: set[str], key_map: dict[str, str]) -> dict[str, tuple]:
    seen = collections.Counter()
    leaves = []
    for vo in vobjs:
        units = vo.get("units") or {}  # the proposed sibling object {"temperature": "°C"}
        for name, value, unit in flatten(vo["fields"]):
            unit = unit if unit is not None else units.get(name)
            name = key_map.get(name, name)
            seen[name] += 1
            leaves.append((name, seen[name], value, unit))
    out = {}
    for name, n, value, unit in leaves:
        numbered = f"{name}_{n}"
        if seen[name] > 1 and numbered in oracle_keys:
            out[numbered] = (value, unit)
        elif name not in out:
            out[name] = (value, unit)
    return out


def agree(o, p) -> bool:
    ov, ou = o
    pv, pu = p
    if ov in (None, "error") or pv is None:  # n/a: the oracle's None / "error", the plugin's null
        return ov in (None, "error") and pv is None
    if isinstance(ov, bool) or isinstance(pv, bool):
        return bool(ov) == bool(pv) if isinstance(pv, (bool, int)) else str(pv).lower() == str(ov).lower()
    if isinstance(ov, (int, float)) and isinstance(pv, (int, float)):
        if isinstance(ov, float) and math.isnan(ov):
            return isinstance(pv, float) and math.isnan(pv)
        d = decimals(ov)
        if round(float(pv), d) != round(float(ov), d) and abs(float(pv) - float(ov)) > 10 ** -d / 2 + 1e-9:
            return False
        if ou is not None and pu is not None and norm_unit(ou) != norm_unit(pu):
            return False
        return True
    return str(ov).strip().lower() == str(pv).strip().lower()


def vector_of_record(rec: dict, manifest: dict) -> str | None:
    """The vector a bluesift record comes from: a per-vector capture (VECTOR-ID.btsnoop) by
    its file name, else (file, frame) in the manifest; a record without "file" (one capture
    dumped) is looked up by frame in the only file the manifest names, if it names one."""
    f = rec.get("file")
    if f:
        name = Path(f).name
        stem = re.sub(r"\.(btsnoop|log|pcap|pcapng)$", "", name)
        if stem in manifest["ids"]:
            return stem
        return manifest["frames"].get((name, rec.get("frame")))
    files = manifest["files"]
    if len(files) == 1:
        return manifest["frames"].get((next(iter(files)), rec.get("frame")))
    return None


def selftest(oracle_path: str) -> int:
    """Builds bluesift-shaped records from the oracle's own values (fields plain, units in the
    sibling object, n/a as null; one vector in ten with a value off by one unit in its last
    place) and checks that compare finds exactly the altered ones."""
    import os
    import tempfile
    altered = set()
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as tf:
        for n, line in enumerate(open(oracle_path)):
            r = json.loads(line)
            if not r.get("decoded"):
                continue
            fields, units = {}, {}
            for v in r["values"] + r["binary"]:
                val = None if v["value"] in (None, "error") else v["value"]
                fields[v["key"]] = val
                if v.get("unit"):
                    units[v["key"]] = v["unit"]
            for e in r.get("events", []):
                fields.setdefault(e["key"], e["event_type"])
            if n % 10 == 0:
                for k, val in fields.items():
                    if k not in IGNORED_KEYS and isinstance(val, (int, float)) and not isinstance(val, bool):
                        fields[k] = val + 10 ** -decimals(val)
                        altered.add(r["id"])
                        break
            rec = {"frame": 1, "file": f"{r['id']}.btsnoop",
                   "adv": {"reports": [{"data": [{"vendor": {"plugin": r["vendor"], "message": "m", "fields": fields,
                                                              "units": units, "checksum": None}}]}]}}
            tf.write(json.dumps(rec) + "\n")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main([oracle_path, tf.name])
    os.unlink(tf.name)
    flagged = set(re.findall(r"^  ([a-z]+-\d+):", out.getvalue(), re.M))
    ok = flagged == altered
    print(f"compare selftest: {len(altered)} vectors altered, {len(flagged)} flagged, "
          + ("exactly those" if ok else f"differences: missed {sorted(altered - flagged)[:5]}, extra {sorted(flagged - altered)[:5]}"))
    return 0 if ok else 1


def main(argv=None) -> int:
    if argv is None and len(sys.argv) > 1 and sys.argv[1] == "--selftest":
        return selftest(sys.argv[2])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("oracle")
    ap.add_argument("bluesift")
    ap.add_argument("--manifest")
    ap.add_argument("--plugin-map", help="JSON {plugin field name: oracle key} per plugin or global")
    ap.add_argument("--rssi", action="store_true", help="also compare the RSSI context value (signal_strength)")
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args(argv)

    oracle = {}
    for line in open(a.oracle):
        r = json.loads(line)
        oracle[r["id"]] = r
    manifest = {"ids": set(oracle), "frames": {}, "files": set()}
    if a.manifest:
        for line in open(a.manifest):
            m = json.loads(line)
            manifest["files"].add(m["file"])
            for n in m["frames"]:
                manifest["frames"][(m["file"], n)] = m["id"]
    key_map_all = json.loads(Path(a.plugin_map).read_text()) if a.plugin_map else {}

    per_vector: dict[str, list[dict]] = collections.defaultdict(list)
    by_frame: dict[tuple, list[dict]] = collections.defaultdict(list)  # real captures (survey.py --oracle-jsonl)
    corpus = any("file" in o and "frame" in o for o in oracle.values())
    for line in open(a.bluesift):
        rec = json.loads(line)
        if corpus and rec.get("file"):
            by_frame[(Path(rec["file"]).name, rec.get("frame"))] += find_vendor_objects(rec)
        vid = vector_of_record(rec, manifest)
        if vid:
            per_vector[vid] += find_vendor_objects(rec)
    for vid, o in oracle.items():
        if "file" in o and "frame" in o:
            # the report's own structures only, when bluesift gives per-report objects
            objs = by_frame.get((Path(o["file"]).name, o["frame"]), [])
            per_vector[vid] = objs

    stats = collections.defaultdict(lambda: [0, 0])
    problems = collections.defaultdict(list)
    for vid, o in oracle.items():
        vobjs = per_vector.get(vid, [])
        plugin = vobjs[0]["plugin"] if vobjs else f"(none: {o['vendor']})"
        if not o.get("decoded") and not vobjs:
            continue  # neither decodes: not a vector for any plugin
        st = stats[plugin]
        st[0] += 1
        if o.get("decoded") and not vobjs:
            problems[plugin].append(f"{vid}: oracle decodes ({len(o['values'])} values), no plugin does")
            continue
        if vobjs and not o.get("decoded"):
            problems[plugin].append(f"{vid}: plugin decodes, oracle does not ({o.get('error', 'no values')})")
            continue
        ovals = {v["key"]: (v["value"], v.get("unit")) for v in o.get("values", []) + o.get("binary", [])
                 if (a.rssi or v["key"] not in IGNORED_KEYS)
                 and v["key"] not in IGNORED_PER_VENDOR.get(o["vendor"], ())}
        for e in o.get("events", []):  # BTHome/Xiaomi buttons and dimmers: the event type is the value
            ovals.setdefault(e["key"], (e["event_type"], None))
        key_map = key_map_all.get(plugin, key_map_all if all(isinstance(x, str) for x in key_map_all.values()) else {})
        pvals = plugin_values(vobjs, set(ovals), key_map)
        if a.rssi and "signal_strength" in ovals and "rssi" in pvals:
            pvals["signal_strength"] = pvals["rssi"]
        shared = sorted(set(ovals) & set(pvals))
        bad = [f"{k}: oracle {ovals[k][0]!r} {ovals[k][1] or ''} / plugin {pvals[k][0]!r} {pvals[k][1] or ''}".rstrip()
               for k in shared if not agree(ovals[k], pvals[k])]
        if not shared:
            bad.append(f"no shared keys (oracle {sorted(ovals)}, plugin {sorted(pvals)})")
        if bad:
            problems[plugin].append(f"{vid}: " + "; ".join(bad))
        else:
            st[1] += 1
        if a.v:
            only_o, only_p = sorted(set(ovals) - set(pvals)), sorted(set(pvals) - set(ovals))
            if only_o or only_p:
                print(f"  {vid}: only oracle {only_o}, only plugin {only_p}")
    failed = False
    for plugin in sorted(stats):
        n, ok = stats[plugin]
        print(f"{plugin}: {n} vectors, {ok} agree")
        for p in problems[plugin]:
            print(f"  {p}")
        failed |= ok != n
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
