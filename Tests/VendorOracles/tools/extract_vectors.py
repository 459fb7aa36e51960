#!/usr/bin/env python3
"""Extract the advertisement inputs of each oracle library's own tests into
Tests/VendorOracles/vectors/VENDOR.json, with provenance (repository, path, commit, licence).

How: the library's tests (from a git mirror of its repository, at a recorded commit) are run
in a child process with the parser entry points wrapped, so every input a test really feeds
to the parser is recorded as the parser received it: BluetoothData.update()/supported()
(the Home Assistant libraries), iBeaconParser.parse(), switchbot's
parse_advertisement_data(), bleparser's BleParser.parse_raw_data(). Expected values are not
recorded (the tests' asserts are ignored); they come from running the oracle (oracle.py).

  .venv-oracles/bin/python Tests/VendorOracles/tools/extract_vectors.py [VENDOR...]

MIRRORS (default /work/.mirror) holds OWNER+NAME/repo bare clones (see SOURCES below).
Only repositories whose LICENSE is MIT, BSD or Apache-2.0 are extracted.
"""
from __future__ import annotations

import asyncio
import enum
import inspect
import json
import re
import os
import shutil
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
MIRRORS = Path(os.environ.get("MIRRORS", "/work/.mirror"))

# vendor -> (repository, python package of the oracle, PyPI name, test files)
SOURCES = {
    "bthome": ("Bluetooth-Devices/bthome-ble", "bthome_ble", "bthome-ble",
               ["tests/test_parser_v1.py", "tests/test_parser_v2.py",
                "tests/test_v1_encryption.py", "tests/test_v2_encryption.py"]),
    "xiaomi": ("Bluetooth-Devices/xiaomi-ble", "xiaomi_ble", "xiaomi-ble", ["tests/test_parser.py"]),
    "govee": ("Bluetooth-Devices/govee-ble", "govee_ble", "govee-ble", ["tests/test_parser.py"]),
    "inkbird": ("Bluetooth-Devices/inkbird-ble", "inkbird_ble", "inkbird-ble",
                ["tests/test_parser.py", "tests/test_idt_34c_b.py"]),
    "sensorpush": ("Bluetooth-Devices/sensorpush-ble", "sensorpush_ble", "sensorpush-ble", ["tests/test_parser.py"]),
    "thermopro": ("Bluetooth-Devices/thermopro-ble", "thermopro_ble", "thermopro-ble", ["tests/test_parser.py"]),
    "qingping": ("Bluetooth-Devices/qingping-ble", "qingping_ble", "qingping-ble", ["tests/test_parser.py"]),
    "ruuvitag": ("Bluetooth-Devices/ruuvitag-ble", "ruuvitag_ble", "ruuvitag-ble",
                 ["tests/test_v3.py", "tests/test_v5.py", "tests/test_v6.py", "tests/test_e1.py", "tests/test_iaqs.py"]),
    "oralb": ("Bluetooth-Devices/oralb-ble", "oralb_ble", "oralb-ble", ["tests/test_parser.py"]),
    "switchbot": ("sblibs/pySwitchbot", "switchbot", "PySwitchbot", ["tests/test_adv_parser.py"]),
    "mopeka": ("Bluetooth-Devices/mopeka-iot-ble", "mopeka_iot_ble", "mopeka-iot-ble", ["tests/test_parser.py"]),
    "thermobeacon": ("Bluetooth-Devices/thermobeacon-ble", "thermobeacon_ble", "thermobeacon-ble", ["tests/test_parser.py"]),
    "ibeacon": ("Bluetooth-Devices/ibeacon-ble", "ibeacon_ble", "ibeacon-ble", ["tests/test_init.py"]),
    "bluemaestro": ("Bluetooth-Devices/bluemaestro-ble", "bluemaestro_ble", "bluemaestro-ble", ["tests/test_parser.py"]),
    "kegtron": ("Bluetooth-Devices/kegtron-ble", "kegtron_ble", "kegtron-ble", ["tests/test_parser.py"]),
    "moat": ("Bluetooth-Devices/moat-ble", "moat_ble", "moat-ble", ["tests/test_parser.py"]),
    "sensirion": ("akx/sensirion-ble", "sensirion_ble", "sensirion-ble", ["tests/test_parser.py"]),
    "rapt": ("sairon/rapt-ble", "rapt_ble", "rapt-ble", ["tests/test_parser.py"]),
    "leaone": ("Bluetooth-Devices/leaone-ble", "leaone_ble", "leaone-ble", ["tests/test_parser.py"]),
    "tilt": ("Bluetooth-Devices/tilt-ble", "tilt_ble", "tilt-ble", ["tests/test_parser.py"]),
    "aranet": ("Anrijs/Aranet4-Python", "aranet4", "aranet4", ["tests/test_advertisements.py"]),
    "bleparser": ("Ernst79/bleparser", "bleparser", "bleparser", ["package/tests/*.py"]),
}

ALLOWED = ("MIT", "BSD", "Apache-2.0")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def licence_of(text: str) -> str:
    t = text[:3000]
    if "Apache License" in t and "Version 2.0" in t:
        return "Apache-2.0"
    if "MIT License" in t or "Permission is hereby granted, free of charge" in t:
        return "MIT"
    if "Redistribution and use in source and binary forms" in t:
        return "BSD"
    return "unknown"


# ---------------------------------------------------------------- child: run the tests

def jsonable(v):
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).hex()
    if isinstance(v, enum.Enum):
        return v.value if isinstance(v.value, (int, str)) else str(v.value)
    if isinstance(v, (list, tuple, set, frozenset)) or type(v).__name__ in ("dict_keys", "dict_values"):
        return [jsonable(x) for x in v]
    if isinstance(v, dict):
        return {(bytes(k).hex() if isinstance(k, (bytes, bytearray)) else str(k)): jsonable(x) for k, x in v.items()}
    if v is None or isinstance(v, (int, float, str, bool)):
        return v
    if callable(v):
        return None  # GATT notify callbacks some constructors take: irrelevant to advertisements
    return re.sub(r" at 0x[0-9a-f]+", "", repr(v))  # no addresses: the files must be reproducible


def service_info_dict(si) -> dict:
    return {
        "address": si.address,
        "local_name": si.name,
        "manufacturer_data": {str(k): bytes(v).hex() for k, v in (si.manufacturer_data or {}).items()},
        "service_data": {str(k): bytes(v).hex() for k, v in (si.service_data or {}).items()},
        "service_uuids": [str(u) for u in (si.service_uuids or [])],
        "rssi": si.rssi,
    }


def child(vendor: str, srcdir: str, out: str) -> None:
    repo, pkg, _, tests = SOURCES[vendor]
    if vendor == "bleparser":
        tests = ["tests/*.py"]  # package/tests moved to tests/ by the parent
    sys.path.insert(0, srcdir)
    records: list[dict] = []
    state = {"test": None, "groups": {}, "counter": 0}

    def group_of(parser) -> str:
        k = id(parser)
        if k not in state["groups"]:
            state["groups"][k] = (f"g{len(state['groups'])}", parser)
        return state["groups"][k][0]

    def record(kind, parser, payload, ctor=None):
        records.append({"test": state["test"], "call": kind,
                        "group": group_of(parser) if parser is not None else None,
                        "parser_args": ctor, **payload})

    if vendor == "bleparser":
        import bleparser
        orig_init = bleparser.BleParser.__init__
        orig_parse = bleparser.BleParser.parse_raw_data

        def init(self, *a, **kw):
            self._oracle_ctor = {"args": jsonable(list(a)), "kwargs": jsonable(kw)}
            orig_init(self, *a, **kw)

        def parse_raw_data(self, data):
            record("parse_raw_data", self, {"hci_event": bytes(data).hex()}, getattr(self, "_oracle_ctor", None))
            return orig_parse(self, data)
        bleparser.BleParser.__init__ = init
        bleparser.BleParser.parse_raw_data = parse_raw_data
    elif vendor == "switchbot":
        import switchbot.adv_parser as ap
        orig = ap.parse_advertisement_data

        def parse_advertisement_data(device, adv, model=None, *a, **kw):
            payload = {
                "address": device.address, "local_name": adv.local_name or device.name,
                "manufacturer_data": {str(k): bytes(v).hex() for k, v in adv.manufacturer_data.items()},
                "service_data": {str(k): bytes(v).hex() for k, v in adv.service_data.items()},
                "service_uuids": list(adv.service_uuids), "rssi": adv.rssi,
            }
            record("parse_advertisement_data", None, payload, {"model": jsonable(model)} if model is not None else None)
            return orig(device, adv, model, *a, **kw)
        ap.parse_advertisement_data = parse_advertisement_data
        import switchbot
        switchbot.parse_advertisement_data = parse_advertisement_data
    elif vendor == "aranet":
        import aranet4.client as ac
        orig_ad = ac.Aranet4Advertisement.__init__

        def ad_init(self, device=None, ad_data=None):
            if device is not None and ad_data is not None:
                record("advertisement", None, {
                    "address": device.address, "local_name": device.name or ad_data.local_name,
                    "manufacturer_data": {str(k): bytes(v).hex() for k, v in ad_data.manufacturer_data.items()},
                    "service_data": {str(k): bytes(v).hex() for k, v in ad_data.service_data.items()},
                    "service_uuids": list(ad_data.service_uuids), "rssi": ad_data.rssi})
            orig_ad(self, device, ad_data)
        ac.Aranet4Advertisement.__init__ = ad_init
        import aranet4
        aranet4.client.Aranet4Advertisement = ac.Aranet4Advertisement
    elif vendor == "ibeacon":
        import ibeacon_ble
        orig = ibeacon_ble.iBeaconParser.parse

        def parse(self, si):
            record("parse", self, service_info_dict(si))
            return orig(self, si)
        ibeacon_ble.iBeaconParser.parse = parse
    else:
        import importlib
        from bluetooth_sensor_state_data import BluetoothData
        importlib.import_module(pkg)
        orig_update, orig_supported = BluetoothData.update, BluetoothData.supported

        def subclasses(c):
            for s in c.__subclasses__():
                yield s
                yield from subclasses(s)
        for cls in subclasses(BluetoothData):
            if not cls.__module__.startswith(pkg):
                continue
            oi = cls.__init__

            def make(oi):
                def init(self, *a, **kw):
                    if not hasattr(self, "_oracle_ctor"):
                        self._oracle_ctor = {"args": jsonable(list(a)), "kwargs": jsonable(kw)}
                    oi(self, *a, **kw)
                return init
            cls.__init__ = make(oi)

        def update(self, data):
            record("update", self, service_info_dict(data), getattr(self, "_oracle_ctor", None))
            return orig_update(self, data)

        def supported(self, data):
            record("supported", self, service_info_dict(data), getattr(self, "_oracle_ctor", None))
            return orig_supported(self, data)
        BluetoothData.update, BluetoothData.supported = update, supported

    import glob

    import pytest
    files = []
    for t in tests:
        files += sorted(glob.glob(os.path.join(srcdir, t)))
    summary = {"tests_run": 0, "tests_failed": 0, "import_errors": []}

    class Recorder:
        """Names each recorded input after the test running it; counts outcomes."""

        @pytest.hookimpl(tryfirst=True)
        def pytest_runtest_setup(self, item):
            state["test"] = item.nodeid

        def pytest_runtest_logreport(self, report):
            if report.when == "call":
                summary["tests_run"] += 1
                if report.failed:
                    summary["tests_failed"] += 1
            elif report.failed:
                summary["import_errors"].append(f"{report.nodeid} ({report.when})")

        def pytest_collectreport(self, report):
            if report.failed:
                summary["import_errors"].append(f"{report.nodeid}: {str(report.longrepr)[-300:]}")

    pytest.main(["-q", "-p", "no:cacheprovider", "-o", "asyncio_mode=auto", "--rootdir", srcdir,
                 "-o", "timeout=60", "--tb=no", "-W", "ignore", *files], plugins=[Recorder()])
    Path(out).write_text(json.dumps({"records": records, "summary": summary}))


# ---------------------------------------------------------------- parent

def mirror(repo: str) -> Path:
    return MIRRORS / repo.replace("/", "+") / "repo"


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "--child":
        child(argv[1], argv[2], argv[3])
        return 0
    vendors = argv or list(SOURCES)
    for vendor in vendors:
        repo, pkg, pypi, tests = SOURCES[vendor]
        m = mirror(repo)
        commit = git(m, "rev-parse", "HEAD").strip()
        commit_date = git(m, "log", "-1", "--format=%cI").strip()
        lic = licence_of(git(m, "show", "HEAD:LICENSE"))
        if lic not in ALLOWED:
            print(f"{vendor}: licence {lic}: not copied", file=sys.stderr)
            continue
        tmp = tempfile.mkdtemp(prefix=f"vec-{vendor}-")
        try:
            subprocess.run(f"git -C {m} archive HEAD | tar -x -C {tmp}", shell=True, check=True)
            # keep only the tests, so that the installed oracle is imported, not the repository's copy
            for entry in os.listdir(tmp):
                if entry not in ("tests", "package"):
                    p = os.path.join(tmp, entry)
                    shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
            if vendor == "bleparser":
                shutil.rmtree(os.path.join(tmp, "package", "bleparser"))
                shutil.move(os.path.join(tmp, "package", "tests"), os.path.join(tmp, "tests"))
                tests_rel = ["tests/*.py"]
            else:
                tests_rel = tests
            outj = os.path.join(tmp, "out.json")
            SOURCES[vendor] = (repo, pkg, pypi, tests_rel)
            env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
            cp = subprocess.run([sys.executable, __file__, "--child", vendor, tmp, outj], env=env,
                                capture_output=True, text=True, cwd=tmp, timeout=900)
            if cp.returncode != 0 or not os.path.exists(outj):
                print(f"{vendor}: child failed\n{cp.stderr[-3000:]}", file=sys.stderr)
                continue
            res = json.loads(Path(outj).read_text())
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        recs = res["records"]
        # groups with several inputs fed to one parser instance are kept in order (stateful
        # parsers); other identical inputs are merged, keeping every test that used them.
        group_sizes: dict[tuple, int] = {}
        for r in recs:
            group_sizes[(r["test"], r["group"])] = group_sizes.get((r["test"], r["group"]), 0) + 1
        vectors, seen = [], {}
        for r in recs:
            inp = {k: r[k] for k in ("hci_event", "address", "local_name", "manufacturer_data",
                                     "service_data", "service_uuids", "rssi") if k in r}
            seq = group_sizes[(r["test"], r["group"])] > 1 and r["group"] is not None
            key = json.dumps([inp, r["parser_args"], r["call"]], sort_keys=True)
            if not seq and key in seen:
                v = seen[key]
                test = ("package/" + r["test"]) if vendor == "bleparser" and r["test"] else r["test"]
                if test not in v["source_tests"]:
                    v["source_tests"].append(test)
                continue
            test = ("package/" + r["test"]) if vendor == "bleparser" and r["test"] else r["test"]
            v = {"id": f"{vendor}-{len(vectors) + 1:03d}", "source_tests": [test], "call": r["call"]}
            if r["parser_args"] and (r["parser_args"].get("args") or r["parser_args"].get("kwargs")
                                     or "model" in r["parser_args"]):
                v["parser_args"] = r["parser_args"]
            if seq:
                v["sequence"] = f"{r['test']}#{r['group']}"
            v["input"] = inp
            vectors.append(v)
            if not seq:
                seen[key] = v
        test_paths = sorted({t["test"].split("::")[0] for t in recs if t["test"]})
        if vendor == "bleparser":
            test_paths = ["package/" + p for p in test_paths]
        doc = {
            "vendor": vendor,
            "oracle": {"pypi": pypi, "module": pkg},
            "provenance": {
                "repository": f"https://github.com/{repo}",
                "commit": commit,
                "commit_date": commit_date,
                "licence": lic,
                "licence_file": f"https://github.com/{repo}/blob/{commit}/LICENSE",
                "paths": test_paths,
                "how": "inputs recorded while running the repository's own tests against the installed "
                       "oracle (tools/extract_vectors.py); the tests' expected values are not copied",
                "tests_run": res["summary"]["tests_run"],
                "tests_failed_against_installed_oracle": res["summary"]["tests_failed"],
                "import_errors": res["summary"]["import_errors"],
            },
            "vectors": vectors,
        }
        (HERE / "vectors" / f"{vendor}.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        print(f"{vendor}: {len(vectors)} vectors from {res['summary']['tests_run']} tests "
              f"({res['summary']['tests_failed']} failed), {lic}, {repo}@{commit[:10]}"
              + (f" import errors: {res['summary']['import_errors']}" if res["summary"]["import_errors"] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
