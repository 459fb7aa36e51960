#!/usr/bin/env python3
"""Check the draft plugins' examples against the oracles (no bluesift engine involved).

  .venv-oracles/bin/python Tests/VendorOracles/drafts_check.py [drafts/*.yaml | Plugins/*.yaml]

Which oracle reads a plugin's examples, and the documented differences, come from
`map/PLUGIN_ID.yaml` (`oracle: govee`, `expected: [{example: 2, key: humidity, why: ...}]`,
example numbers from 1) when it exists, else from ORACLE_OF below. A plugin with neither
(no oracle decodes that vendor) is listed as `no oracle` and not counted as a failure.

Each example of a draft (Tests/VendorOracles/drafts/, syntax of
docs/plugin-advertising-design.md) is an advertisement: `company` + `hex` (manufacturer
data) or `service_data` + `hex`, with optional `name`, `address`, `rssi`, `key`. It is fed to
the oracle of that vendor; every expected field the oracle also reports must agree
(compare.agree: the example's value rounded to the oracle's decimals). `product_id` is
compared with the oracle's device model. Prints per draft `N examples, N agree` and each
difference; differences listed in EXPECTED (documented oracle behaviour) are shown but not
counted. Exit 1 on an unexpected difference.
"""
from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import advdata  # noqa: E402
import compare  # noqa: E402
import oracle as orc  # noqa: E402

HERE = Path(__file__).resolve().parent
ORACLE_OF = {"bthome-v2": "bthome", "govee-h5075": "govee", "ibeacon": "ibeacon",
             "xiaomi-mibeacon": "xiaomi", "ruuvitag-rawv2": "ruuvitag"}

# (plugin, example index, key): why the oracle differs from the document-following draft.
EXPECTED = {
    ("ruuvitag-rawv2", 1, "acceleration_y"): "ruuvitag-ble drops all three axes when one is n/a; the document marks each axis",
}


def example_adv(ex: dict) -> dict:
    hexs = str(ex["hex"]).replace(" ", "")
    adv = {"address": ex.get("address", "00:00:00:00:00:00"), "local_name": ex.get("name", ""),
           "manufacturer_data": {}, "service_data": {}, "service_uuids": [], "rssi": ex.get("rssi", -60)}
    # `uuids:` (advertised service UUID list; quote 16-bit ones: ["fee5"]) for plugins that match on `uuid:`
    adv["service_uuids"] = [advdata.uuid_full(str(u)) for u in ex.get("uuids", [])]
    if "company" in ex:
        adv["manufacturer_data"][str(int(ex["company"]))] = hexs
    else:
        u = advdata.uuid_full(str(ex["service_data"]))
        adv["service_data"][u] = hexs
    return adv


def main(argv: list[str]) -> int:
    files = [Path(a) for a in argv] or sorted((HERE / "drafts").glob("*.yaml"))
    failed = False
    for f in files:
        doc = yaml.safe_load(f.read_text())
        pid = doc["id"]
        mapping = HERE / "map" / f"{pid}.yaml"
        extra = {}
        if mapping.exists():
            m = yaml.safe_load(mapping.read_text()) or {}
            vendor = m.get("oracle")
            if isinstance(vendor, list):   # several oracles: the examples are checked with the first
                vendor = vendor[0] if vendor else None
            for e in m.get("expected") or []:
                extra[(pid, int(e["example"]) - 1, e["key"])] = e["why"]
        else:
            vendor = ORACLE_OF.get(pid)
        if not vendor:
            print(f"{pid}: no oracle")
            continue
        o = orc.oracle_for(vendor)
        n = ok = 0
        lines = []
        for i, ex in enumerate(doc.get("examples", [])):
            n += 1
            adv = example_adv(ex)
            args = {"args": [], "kwargs": {"bindkey": ex["key"]}} if ex.get("key") else None
            with contextlib.redirect_stdout(io.StringIO()):
                parser = o.new(args)
                r = o.run(parser, adv)
            ovals = {v["key"]: (v["value"], v.get("unit")) for v in r.get("values", []) + r.get("binary", [])}
            for e in r.get("events", []):
                ovals.setdefault(e["key"], (e["event_type"], None))
            model = next(iter(r.get("devices", {}).values()), {}).get("model") if r.get("devices") else None
            if model:
                ovals.setdefault("product_id", (model, None))
            bad, shared, expected = [], 0, []
            for k, want in (ex.get("fields") or {}).items():
                if k not in ovals:
                    continue
                shared += 1
                got = ovals[k]
                if want is None and got[0] in (None, "error"):
                    continue
                if not compare.agree(got, (want, None)):
                    why = EXPECTED.get((pid, i, k)) or extra.get((pid, i, k))
                    (expected if why else bad).append(f"{k}: example {want!r}, oracle {got[0]!r}" + (f" ({why})" if why else ""))
            if not r.get("decoded") and (ex.get("fields") or {}):
                # an example with only header fields (no objects) is fine if the oracle
                # recognises the device
                if not model:
                    bad.append(f"oracle does not decode it ({r.get('error', 'no values')})")
            if bad:
                lines.append(f"  example {i + 1} ({ex.get('doc', '')[:60]}): " + "; ".join(bad))
                failed = True
            else:
                ok += 1
                if expected:
                    lines.append(f"  example {i + 1}: expected difference: " + "; ".join(expected))
            lines.append(f"    {shared} shared fields" if shared == 0 else "")
        print(f"{pid} ({o.name}): {n} examples, {ok} agree")
        for line in lines:
            if line.strip():
                print(line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
