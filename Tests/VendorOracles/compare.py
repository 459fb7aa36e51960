#!/usr/bin/env python3
"""Compare bluesift's decoding of advertisements with the oracles' (issue 29).

  oracle.py run > oracle.jsonl; oracle.py captures --out caps/
  bluesift dump caps/ID.btsnoop … --plugins Plugins --format jsonl > bluesift.jsonl
  compare.py oracle.jsonl bluesift.jsonl [--maps DIR] [--manifest caps/manifest.jsonl] [--rssi] [-v]
  compare.py corpus-oracle.jsonl corpus-bluesift.jsonl     # survey.py --oracle-jsonl: real captures
  compare.py --selftest oracle.jsonl      # finds exactly the differences it planted
  (test_vendors.py runs all of it: `make test-vendors`)

Which plugin covers which oracle records: map/PLUGIN_ID.yaml (default DIR: map/ here)
  oracle: govee                 # a vendor of oracle.py (or a list of them)
  models: ["H5072|H5075"]       # optional: regexes, whole oracle device model or manufacturer
  vectors: ["bleparser-01*"]    # optional: record ids (fnmatch); for oracles covering many vendors
  expected: [{example: 2, key: humidity, why: "..."}]   # drafts_check.py: the plugin's examples
  known: [{vector: govee-017, key: humidity, why: "..."}]  # differences explained here
A record of a vendor some map names is covered when a plugin mapped to that vendor decodes it
or a map's filters take it (no filter: all of that vendor's records); one no plugin decodes is
counted for the one map that takes it, else on a line `VENDOR (no plugin)`. `known:` keys are the oracle's keys, or `decoded` (one side
decodes, the other not), `keys` (no key in common), `*` (any); `vector` may be a pattern.
Vendors no map names are only counted.

Records ↔ vectors: a record's "file" (a per-vector capture is VECTOR-ID.btsnoop) or, with
--manifest and the per-vendor captures, its frame; real captures (records of survey.py
--oracle-jsonl) by file name, frame and advertiser address. All vendor objects of a vector
(ADV_IND and SCAN_RSP) are merged; `adv.reports[i].data[j].vendor` objects are used, the
record's top-level `vendor`/`vendor_more` only when no report carries one.

bluesift's `vendor` object: {"plugin","message","fields","units","checksum"} (fields plain
values, units a sibling object, docs/plugin-advertising-design.md §9; {"value","unit"} per
field is read too). Nested objects are flattened; a name seen several times is numbered like
bthome-ble does (temperature_1, temperature_2) when the oracle does so.

Agreement, for every key both sides have: numbers after rounding the plugin's value to the
oracle value's decimal places (Python's repr: 21.3 → 1 place; an oracle value with more than
6, an unrounded float, is rounded to the plugin's places instead), units when both give one
(°C/C, %/percent, hPa/mbar…); n/a (null) equals the oracle's None/"error"; strings
case-insensitive (UUIDs and addresses without separators), an ISO time equal to Unix seconds; RSSI (`signal_strength`) only with
--rssi; ibeacon-ble's `distance` (its estimate from RSSI) never. The plugin "decodes" a record
when it gives a value for a key the oracle reports for that vendor; one side decoding and
not the other is a difference (key `decoded`). Exit 1 on an unexplained difference.
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import dataclasses
import fnmatch
import io
import json
import math
import re
import sys
from decimal import Decimal
from pathlib import Path

HERE = Path(__file__).resolve().parent

UNIT_ALIASES = {"c": "°C", "°c": "°C", "celsius": "°C", "percent": "%", "mbar": "hPa", "hpa": "hPa",
                "lux": "lx", "lx": "lx", "v": "V", "mv": "mV", "dbm": "dBm", "ppm": "ppm", "kg": "kg",
                "µs/cm": "µS/cm", "us/cm": "µS/cm", "µg/m³": "µg/m³", "ug/m3": "µg/m³", "s": "s", "m": "m",
                "ohm": "Ω", "ω": "Ω"}

# Keys an oracle reports that no plugin should be asked to reproduce from the payload.
IGNORED_KEYS = {"signal_strength", "rssi"}  # context values; compare them only with --rssi
# ibeacon-ble's distance is its own path-loss estimate from RSSI and power, not payload.
IGNORED_PER_VENDOR = {"ibeacon": {"distance"}}
HEX = re.compile(r"[0-9a-f]+")


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
        if d > 6:  # an unrounded float (22.22222222222222, from °F): at the plugin's places
            d = min(decimals(pv), d)
        if round(float(pv), d) != round(float(ov), d) and abs(float(pv) - float(ov)) > 10 ** -d / 2 + 1e-9:
            return False
        if ou is not None and pu is not None and norm_unit(ou) != norm_unit(pu):
            return False
        return True
    if isinstance(ov, str) and isinstance(pv, (int, float)) and re.match(r"\d{4}-\d\d-\d\dT", ov):
        # a timestamp: Home Assistant gives a datetime, the payload (and a plugin) Unix seconds
        from datetime import datetime
        with contextlib.suppress(ValueError):
            return datetime.fromisoformat(ov).timestamp() == float(pv)
    a, b = str(ov).strip().lower(), str(pv).strip().lower()
    if a == b or a.replace(" ", "_") == b:  # bleparser's labels: "single press", a plugin's single_press
        return True
    # UUIDs and addresses: ibeacon-ble writes 8-4-4-4-12, bleparser plain hex, a plugin either
    sa, sb = re.sub(r"[-: ]", "", a), re.sub(r"[-: ]", "", b)
    return bool(HEX.fullmatch(sa)) and sa == sb


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


# ------------------------------------------------------------------ maps

@dataclasses.dataclass
class Map:
    plugin: str
    oracles: list[str]
    models: list[str]
    vectors: list[str]
    known: list[tuple[str, str, str]]  # (record id pattern, key, why)
    keys: dict = dataclasses.field(default_factory=dict)  # plugin field → the oracle's key


def load_maps(d: Path) -> dict[str, Map]:
    """map/PLUGIN_ID.yaml → Map per plugin id (the file name)."""
    files = sorted(Path(d).glob("*.yaml")) if Path(d).is_dir() else []
    if not files:
        return {}
    import yaml  # PyYAML: in .venv-oracles (requirements.txt)
    maps = {}
    for f in files:
        doc = yaml.safe_load(f.read_text()) or {}
        oracles = doc.get("oracle") or []
        oracles = [oracles] if isinstance(oracles, str) else list(oracles)
        known = []
        for e in doc.get("known") or []:
            vid = e.get("vector", e.get("id"))
            if vid is None or "key" not in e or not e.get("why"):
                raise ValueError(f"{f}: a known entry needs vector, key and why: {e}")
            known.append((str(vid), str(e["key"]), str(e["why"])))
        as_list = lambda x: [str(i) for i in ([x] if isinstance(x, str) else (x or []))]  # noqa: E731
        keys = {str(k): str(v) for k, v in (doc.get("keys") or {}).items()}
        maps[f.stem] = Map(f.stem, oracles, as_list(doc.get("models")), as_list(doc.get("vectors")), known, keys)
    return maps


def device_names(o: dict) -> list[str]:
    out = []
    for d in (o.get("devices") or {}).values():
        for k in ("model", "manufacturer"):
            if isinstance(d, dict) and d.get(k):
                out.append(str(d[k]))
    return out


def covers(m: Map, o: dict) -> bool:
    if o.get("vendor") not in m.oracles:
        return False
    if m.vectors and not any(fnmatch.fnmatchcase(o["id"], p) for p in m.vectors):
        return False
    if m.models and not any(re.fullmatch(p, n) for p in m.models for n in device_names(o)):
        return False
    return True


def known_why(maps: list[Map], rid: str, key: str) -> str | None:
    for m in maps:
        for pat, k, why in m.known:
            if (k == key or k == "*") and fnmatch.fnmatchcase(rid, pat):
                return why
    return None


# ------------------------------------------------------------------ bluesift records

def record_objects(rec: dict) -> list[tuple[str | None, dict]]:
    """(advertiser address or None, vendor object) of a bluesift record: the per-report
    objects when there are any (the top-level `vendor` repeats the first), else all."""
    out = []
    adv = rec.get("adv")
    reports = adv.get("reports") if isinstance(adv, dict) and isinstance(adv.get("reports"), list) else []
    for r in reports:
        addr = str(r.get("address") or "").lower() or None
        out += [(addr, vo) for vo in find_vendor_objects(r)]
    if out:
        return out
    # the record's own vendor/vendor_more: the report's address when it holds one report
    addr = str(reports[0].get("address") or "").lower() or None if len(reports) == 1 else None
    return [(addr, vo) for vo in find_vendor_objects(rec)]


def read_bluesift(lines, index: dict, key_of) -> int:
    """Adds each record's vendor objects to index[key] for key in key_of(rec, address);
    only lines naming a plugin are parsed. Returns the number of vendor objects."""
    n = 0
    for line in lines:
        if '"plugin"' not in line:
            continue
        rec = json.loads(line)
        for addr, vo in record_objects(rec):
            for k in key_of(rec, addr):
                index[k].append(vo)
            n += 1
    return n


# ------------------------------------------------------------------ comparison

@dataclasses.dataclass
class Tally:
    n: int = 0
    agree: int = 0
    known: int = 0
    failed: int = 0
    lines: list = dataclasses.field(default_factory=list)
    known_lines: list = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Result:
    per_plugin: dict
    negatives: collections.Counter      # vendor → records neither side decodes
    uncovered: collections.Counter      # vendor → records no map covers
    uncovered_decoded: collections.Counter
    passed: int = 0
    failed: int = 0


def oracle_values(o: dict, rssi: bool) -> dict[str, tuple]:
    ovals = {v["key"]: (v["value"], v.get("unit")) for v in o.get("values", []) + o.get("binary", [])
             if (rssi or v["key"] not in IGNORED_KEYS) and v["key"] not in IGNORED_PER_VENDOR.get(o["vendor"], ())}
    for e in o.get("events", []):  # BTHome/Xiaomi buttons and dimmers: the event type is the value
        ovals.setdefault(e["key"], (e["event_type"], None))
    return ovals


def compare(oracle_recs: list[dict], objects_for, maps: dict[str, Map], rssi: bool = False,
            key_map: dict | None = None) -> Result:
    """objects_for(oracle record) → the vendor objects bluesift gave for the same advertisement."""
    key_map = key_map or {}
    by_vendor: dict[str, list[Map]] = collections.defaultdict(list)
    for m in maps.values():
        for v in m.oracles:
            by_vendor[v].append(m)
    vocab: dict[str, set] = collections.defaultdict(set)
    for o in oracle_recs:
        vocab[o["vendor"]] |= set(oracle_values(o, rssi))
    res = Result(collections.defaultdict(Tally), collections.Counter(), collections.Counter(), collections.Counter())
    for o in oracle_recs:
        vendor, rid = o["vendor"], o["id"]
        mapped = by_vendor.get(vendor)
        if not mapped:
            res.uncovered[vendor] += 1
            res.uncovered_decoded[vendor] += bool(o.get("decoded"))
            continue
        names = {m.plugin for m in mapped}
        mine = [vo for vo in objects_for(o) if vo.get("plugin") in names]
        covering = [m for m in mapped if covers(m, o)]
        if not mine and not covering:
            res.uncovered[vendor] += 1
            res.uncovered_decoded[vendor] += bool(o.get("decoded"))
            continue
        if mine:
            plugin = mine[0]["plugin"]
        else:  # no plugin decodes it: the one map that takes it, else the vendor's line
            filtered = [m for m in covering if m.models or m.vectors]
            one = filtered if len(filtered) == 1 else covering if len(covering) == 1 else []
            plugin = one[0].plugin if one else f"{vendor} (no plugin)"
        ovals = oracle_values(o, rssi)
        km = {**(maps[plugin].keys if plugin in maps else {}), **key_map.get(plugin, {})}
        pvals = plugin_values(mine, set(ovals) | vocab[vendor], km)
        if rssi and "signal_strength" in ovals and "rssi" in pvals:
            pvals["signal_strength"] = pvals["rssi"]
        p_dec = any(v[0] is not None for k, v in pvals.items() if k in vocab[vendor])
        o_dec = bool(o.get("decoded"))
        diffs: list[tuple[str, str]] = []
        if o_dec and not mine:
            shown = ", ".join(f"{k}={v[0]!r}" for k, v in list(ovals.items())[:4])
            diffs.append(("decoded", f"oracle decodes ({shown}), no plugin does"))
        elif o_dec:
            shared = sorted(set(ovals) & set(pvals))
            diffs += [(k, f"{k}: oracle {ovals[k][0]!r} {ovals[k][1] or ''} / plugin {pvals[k][0]!r} {pvals[k][1] or ''}"
                       .replace("  /", " /").rstrip()) for k in shared if not agree(ovals[k], pvals[k])]
            if not shared:
                diffs.append(("keys", f"no key in common (oracle {sorted(ovals)}, plugin {sorted(pvals)})"))
        elif p_dec:
            shown = ", ".join(f"{k}={v[0]!r}" for k, v in pvals.items() if k in vocab[vendor] and v[0] is not None)
            diffs.append(("decoded", f"plugin decodes ({shown[:120]}), oracle does not ({o.get('error', 'no values')})"))
        elif not mine:
            res.negatives[vendor] += 1  # neither decodes: the oracle's negative tests
            res.passed += 1
            continue
        t = res.per_plugin[plugin]
        t.n += 1
        unexplained = [(k, s) for k, s in diffs if not known_why(mapped, rid, k)]
        if unexplained:
            t.failed += 1
            res.failed += 1
            t.lines.append(f"{rid}: " + "; ".join(s for _, s in unexplained))
        else:
            res.passed += 1
            if diffs:
                t.known += 1
                t.known_lines.append(f"{rid}: " + "; ".join(f"{s} ({known_why(mapped, rid, k)})" for k, s in diffs))
            else:
                t.agree += 1
    return res


def report(res: Result, what: str = "vectors", verbose: bool = False, out=None) -> None:
    out = out or sys.stdout
    for plugin in sorted(res.per_plugin):
        t = res.per_plugin[plugin]
        print(f"{plugin}: {t.n} {what}, {t.agree} agree, {t.known} known differences", file=out)
        for line in t.lines:
            print(f"  {line}", file=out)
        if verbose:
            for line in t.known_lines:
                print(f"  known: {line}", file=out)
    if res.negatives:
        print(f"decoded by neither side (the oracles' negative tests): "
              + ", ".join(f"{v} {n}" for v, n in sorted(res.negatives.items())), file=out)
    if res.uncovered:
        print(f"no plugin's map covers: "
              + ", ".join(f"{v} {n} ({res.uncovered_decoded[v]} decoded by the oracle)" for v, n in sorted(res.uncovered.items())),
              file=out)


def selftest(oracle_path: str) -> int:
    """Bluesift-shaped records made from the oracle's own values (plain fields, units in the
    sibling object, n/a as null), one map per vendor; one vector in ten gets a value off by
    one unit in its last place, one in 37 loses its vendor object, and one altered vector
    in three is listed as `known`. Compare must flag exactly the altered and dropped
    vectors, and count the known ones as known."""
    import tempfile
    oracle = [json.loads(line) for line in open(oracle_path)]
    altered, dropped, known = set(), set(), set()
    index: dict[str, list] = collections.defaultdict(list)
    with tempfile.TemporaryDirectory() as tmp:
        known_of: dict[str, list] = collections.defaultdict(list)
        for n, r in enumerate(oracle):
            if not r.get("decoded"):
                continue
            if n % 37 == 5:
                dropped.add(r["id"])
                continue
            fields, units = {}, {}
            for v in r["values"] + r["binary"]:
                fields[v["key"]] = None if v["value"] in (None, "error") else v["value"]
                if v.get("unit"):
                    units[v["key"]] = v["unit"]
            for e in r.get("events", []):
                fields.setdefault(e["key"], e["event_type"])
            if n % 10 == 0:
                for k, val in fields.items():
                    if k not in IGNORED_KEYS and isinstance(val, (int, float)) and not isinstance(val, bool):
                        fields[k] = val + 10 ** -decimals(val)
                        if len(altered) % 3 == 0:
                            known.add(r["id"])
                            known_of[r["vendor"]].append({"vector": r["id"], "key": k, "why": "selftest"})
                        altered.add(r["id"])
                        break
            rec = {"frame": 1, "file": f"{r['id']}.btsnoop",
                   "adv": {"reports": [{"address": "00:00:00:00:00:00", "data": [
                       {"vendor": {"plugin": f"{r['vendor']}-selftest", "message": "m", "fields": fields,
                                   "units": units, "checksum": None}}]}]}}
            read_bluesift([json.dumps(rec)], index, lambda rec, addr: [Path(rec["file"]).stem])
        for vendor in {r["vendor"] for r in oracle}:
            Path(tmp, f"{vendor}-selftest.yaml").write_text(json.dumps({"oracle": vendor, "known": known_of[vendor]}))
        maps = load_maps(Path(tmp))
    res = compare(oracle, lambda o: index.get(o["id"], []), maps)
    out = io.StringIO()
    report(res, verbose=True, out=out)
    flagged = set(re.findall(r"^  ([a-z]+-\d+):", out.getvalue(), re.M))
    n_known = sum(t.known for t in res.per_plugin.values())
    want = (altered - known) | dropped
    ok = flagged == want and n_known == len(known)
    print(f"compare selftest: {len(altered)} vectors altered ({len(known)} listed as known), {len(dropped)} dropped; "
          f"{len(flagged)} flagged, {n_known} known: "
          + ("exactly those" if ok else f"missed {sorted(want - flagged)[:5]}, extra {sorted(flagged - want)[:5]}"))
    return 0 if ok else 1


def corpus_key(file: str, frame, addr: str | None) -> tuple:
    return (Path(str(file)).name, frame, (addr or "").lower() or None)


def corpus_keys(rec: dict, addr: str | None) -> list[tuple]:
    """Index keys of a vendor object in a capture: (file, frame, address) and (file, frame, None)."""
    k = corpus_key(rec.get("file", ""), rec.get("frame"), addr)
    return [k, k[:2] + (None,)] if k[2] else [k]


def corpus_objects(index: dict, o: dict) -> list[dict]:
    """The vendor objects of a survey.py record's report: by its address, else (an object
    bluesift did not place in a report) every object of that frame."""
    return index.get(corpus_key(o["file"], o["frame"], o.get("address"))) \
        or index.get(corpus_key(o["file"], o["frame"], None), [])


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--selftest"]:
        return selftest(argv[1])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("oracle")
    ap.add_argument("bluesift")
    ap.add_argument("--maps", default=str(HERE / "map"), help="the map/PLUGIN_ID.yaml folder")
    ap.add_argument("--manifest")
    ap.add_argument("--plugin-map", help="JSON {plugin: {plugin field name: oracle key}}")
    ap.add_argument("--rssi", action="store_true", help="also compare the RSSI context value (signal_strength)")
    ap.add_argument("-v", action="store_true", help="also list the known differences")
    a = ap.parse_args(argv)

    oracle = [json.loads(line) for line in open(a.oracle)]
    ids = {o["id"] for o in oracle}
    manifest = {"ids": ids, "frames": {}, "files": set()}
    if a.manifest:
        for line in open(a.manifest):
            m = json.loads(line)
            manifest["files"].add(m["file"])
            for n in m["frames"]:
                manifest["frames"][(m["file"], n)] = m["id"]
    corpus = any("file" in o and "frame" in o for o in oracle)
    index: dict = collections.defaultdict(list)
    if corpus:
        def key_of(rec, addr):
            return corpus_keys(rec, addr)

        def objects_for(o):
            return corpus_objects(index, o)
    else:
        def key_of(rec, addr):
            vid = vector_of_record(rec, manifest)
            return [vid] if vid else []

        def objects_for(o):
            return index.get(o["id"], [])
    with open(a.bluesift) as f:
        read_bluesift(f, index, key_of)
    maps = load_maps(Path(a.maps))
    if not maps:
        print(f"no map files in {a.maps}: no plugin is compared")
    key_map = json.loads(Path(a.plugin_map).read_text()) if a.plugin_map else {}
    res = compare(oracle, objects_for, maps, a.rssi, key_map)
    report(res, "reports" if corpus else "vectors", a.v)
    print(f"vendor oracles: {res.passed} passed, {res.failed} failed")
    return 1 if res.failed else 0


if __name__ == "__main__":
    sys.exit(main())
