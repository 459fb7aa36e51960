#!/usr/bin/env python3
"""Run advertisement vectors through the independent oracles (Home Assistant's parser
libraries and bleparser, installed from PyPI by requirements.txt), and turn vectors into
btsnoop captures for bluesift.

  .venv-oracles/bin/python Tests/VendorOracles/oracle.py run [VECTORS.json ...]   # default: all
  .venv-oracles/bin/python Tests/VendorOracles/oracle.py captures --out DIR [VECTORS.json ...]
  .venv-oracles/bin/python Tests/VendorOracles/oracle.py selftest [VECTORS.json ...]

run: JSON Lines on stdout, one line per vector:
  {"id":"govee-001","vendor":"govee","oracle":"govee-ble 1.5.2","decoded":true,
   "device":{"manufacturer":"Govee","model":"H5075", ...},
   "values":[{"key":"temperature","device_class":"temperature","device_id":null,
              "value":21.3,"unit":"°C"}, ...],
   "binary":[{"key":"...","device_class":"...","value":true}], "events":[...]}
 `key` is the Home Assistant key (DeviceKey.key: "temperature", "humidity", "battery",
 "pressure", "temperature_probe_1", …); `device_class` the sensor's device class; `value`
 the native value exactly as the library rounds it; `unit` its native unit.
 bleparser's and switchbot's dictionaries are reported with their own keys, normalised
 (lower case, "_" for spaces, "pm2.5" → "pm25"), and units where the key implies one.

captures: DIR/VECTOR-ID.btsnoop per vector (HCI H4, datalink 1002; HCI LE Advertising Report
 events, ADV_IND + SCAN_RSP when the AD structures need both, an LE Extended Advertising Report
 when they fit in neither) and DIR/VENDOR.btsnoop with all of a vendor's vectors in order
 (one record per event, 100 ms apart) plus DIR/manifest.jsonl (frame numbers → vector id).

selftest: builds those captures in a temporary folder and reads them back with tshark; every
 manufacturer data, service data, UUID list, local name, address and RSSI must come back.
"""
from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import enum
import importlib
import importlib.metadata as md
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import advdata  # noqa: E402

HERE = Path(__file__).resolve().parent
VECTORS = HERE / "vectors"

# vendor → (python module, class with update(), PyPI distribution)
HA_LIBS = {
    "bthome": ("bthome_ble", "BTHomeBluetoothDeviceData", "bthome-ble"),
    "xiaomi": ("xiaomi_ble", "XiaomiBluetoothDeviceData", "xiaomi-ble"),
    "govee": ("govee_ble", "GoveeBluetoothDeviceData", "govee-ble"),
    "inkbird": ("inkbird_ble", "INKBIRDBluetoothDeviceData", "inkbird-ble"),
    "sensorpush": ("sensorpush_ble", "SensorPushBluetoothDeviceData", "sensorpush-ble"),
    "thermopro": ("thermopro_ble", "ThermoProBluetoothDeviceData", "thermopro-ble"),
    "qingping": ("qingping_ble", "QingpingBluetoothDeviceData", "qingping-ble"),
    "ruuvitag": ("ruuvitag_ble", "RuuvitagBluetoothDeviceData", "ruuvitag-ble"),
    "oralb": ("oralb_ble", "OralBBluetoothDeviceData", "oralb-ble"),
    "mopeka": ("mopeka_iot_ble", "MopekaIOTBluetoothDeviceData", "mopeka-iot-ble"),
    "thermobeacon": ("thermobeacon_ble", "ThermoBeaconBluetoothDeviceData", "thermobeacon-ble"),
    "bluemaestro": ("bluemaestro_ble", "BlueMaestroBluetoothDeviceData", "bluemaestro-ble"),
    "kegtron": ("kegtron_ble", "KegtronBluetoothDeviceData", "kegtron-ble"),
    "moat": ("moat_ble", "MoatBluetoothDeviceData", "moat-ble"),
    "sensirion": ("sensirion_ble", "SensirionBluetoothDeviceData", "sensirion-ble"),
    "rapt": ("rapt_ble", "RAPTPillBluetoothDeviceData", "rapt-ble"),
    "tilt": ("tilt_ble", "TiltBluetoothDeviceData", "tilt-ble"),
    "leaone": ("leaone_ble", "LeaoneBluetoothDeviceData", "leaone-ble"),
}
OTHER_LIBS = {"switchbot": "PySwitchbot", "ibeacon": "ibeacon-ble", "bleparser": "bleparser", "aranet": "aranet4"}

# Units implied by bleparser's / switchbot's dictionary keys (their values carry none).
IMPLIED_UNITS = {
    "temperature": "°C", "temperature_probe_1": "°C", "temperature_probe_2": "°C",
    "temperature_probe_3": "°C", "temperature_probe_4": "°C", "humidity": "%", "battery": "%",
    "pressure": "hPa", "illuminance": "lx", "moisture": "%", "conductivity": "µS/cm", "carbon_dioxide": "ppm",
    "weight": "kg", "non-stabilized_weight": "kg", "voltage": "V", "co2": "ppm", "pm25": "µg/m³",
    "pm10": "µg/m³", "tvoc": "µg/m³", "rssi": "dBm", "dewpoint": "°C", "uptime": "s",
}


def version_of(dist: str) -> str:
    try:
        return f"{dist} {md.version(dist)}"
    except md.PackageNotFoundError:
        return f"{dist} (not installed)"


def norm_key(k: str) -> str:
    k = str(k).lower().replace(" ", "_").replace("pm2.5", "pm25").replace("pm10", "pm10")
    return k


# bleparser's names where Home Assistant's differ (the plugins use Home Assistant's).
BLEPARSER_KEYS = {"co2": "carbon_dioxide", "gravity": "specific_gravity"}


def plain(v):
    if isinstance(v, enum.Enum):
        return plain(v.value)
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).hex()
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return str(v)
    if isinstance(v, (int, float, str, bool)) or v is None:
        return v
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return str(v)


def load(paths: list[str]) -> list[dict]:
    files = [Path(p) for p in paths] if paths else sorted(VECTORS.glob("*.json"))
    return [json.loads(f.read_text()) for f in files]


# ------------------------------------------------------------------ service info

def service_info(adv: dict):
    from bleak.backends.device import BLEDevice
    from habluetooth import BluetoothServiceInfoBleak
    md_ = {int(k): bytes.fromhex(v) for k, v in adv.get("manufacturer_data", {}).items()}
    sd = {k: bytes.fromhex(v) for k, v in adv.get("service_data", {}).items()}
    name = adv.get("local_name") or adv["address"]
    return BluetoothServiceInfoBleak(
        name=name, address=adv["address"], rssi=adv.get("rssi", -60), manufacturer_data=md_,
        service_data=sd, service_uuids=list(adv.get("service_uuids", [])), source="local",
        device=BLEDevice(adv["address"], name, None), advertisement=None, connectable=False,
        time=time.monotonic(), tx_power=None)


def ctor_value(key: str, v):
    if isinstance(v, str) and ("key" in key.lower()):
        try:
            return bytes.fromhex(v)
        except ValueError:
            return v
    return v


# ------------------------------------------------------------------ oracles

def key_of(dk) -> tuple[str, str | None]:
    """(key, device_id) of a DeviceKey, or of the (device_id, key) tuples some libraries use."""
    if hasattr(dk, "key"):
        return str(plain(dk.key)), dk.device_id
    if isinstance(dk, tuple) and len(dk) == 2:
        return str(plain(dk[1])), dk[0]
    return str(plain(dk)), None


class HAOracle:
    """A Home Assistant BluetoothData parser: update(BluetoothServiceInfo) → SensorUpdate."""

    def __init__(self, vendor: str):
        mod, cls, dist = HA_LIBS[vendor]
        self.cls = getattr(importlib.import_module(mod), cls)
        self.name = version_of(dist)

    def new(self, parser_args: dict | None):
        args = (parser_args or {}).get("args", [])
        kwargs = {k: ctor_value(k, v) for k, v in (parser_args or {}).get("kwargs", {}).items()}
        return self.cls(*args, **kwargs)

    def run(self, parser, adv: dict) -> dict:
        upd = parser.update(service_info(adv))
        values = []
        for dk, sv in upd.entity_values.items():
            desc = upd.entity_descriptions.get(dk)
            k, dev = key_of(dk)
            values.append({"key": k, "device_id": dev,
                           "device_class": plain(desc.device_class) if desc else None,
                           "value": plain(sv.native_value),
                           "unit": plain(desc.native_unit_of_measurement) if desc else None})
        binary = []
        for dk, bv in getattr(upd, "binary_entity_values", {}).items():
            desc = upd.binary_entity_descriptions.get(dk)
            k, dev = key_of(dk)
            binary.append({"key": k, "device_id": dev,
                           "device_class": plain(desc.device_class) if desc else None,
                           "value": plain(bv.native_value)})
        events = [{"key": key_of(dk)[0], "device_id": key_of(dk)[1], "event_type": ev.event_type,
                   "properties": plain(ev.event_properties)}
                  for dk, ev in getattr(upd, "events", {}).items()]
        devices = {str(k): {f: plain(getattr(d, f, None)) for f in ("name", "model", "manufacturer", "sw_version", "hw_version")}
                   for k, d in upd.devices.items()}
        # every update carries signal_strength (the RSSI): not a decoding of the payload
        payload_values = [v for v in values if v["key"] != "signal_strength"]
        out = {"decoded": bool(payload_values or binary or events), "devices": devices, "values": values,
               "binary": binary, "events": events, "title": upd.title}
        for attr in ("bindkey_verified", "encryption_scheme"):
            if hasattr(parser, attr):
                out[attr] = plain(getattr(parser, attr))
        return out


class BleParserOracle:
    """bleparser: BleParser(...).parse_raw_data(HCI LE advertising report event)."""

    def __init__(self):
        self.mod = importlib.import_module("bleparser")
        self.name = version_of("bleparser")

    def new(self, parser_args: dict | None):
        kwargs = dict((parser_args or {}).get("kwargs", {}))
        if "aeskeys" in kwargs:
            kwargs["aeskeys"] = {bytes.fromhex(k): bytes.fromhex(v) for k, v in kwargs["aeskeys"].items()}
        for k in ("sensor_whitelist", "tracker_whitelist", "report_unknown_whitelist"):
            if isinstance(kwargs.get(k), list):
                kwargs[k] = [bytes.fromhex(x) for x in kwargs[k]]
        return self.mod.BleParser(*(parser_args or {}).get("args", []), **kwargs)

    def run(self, parser, adv: dict) -> dict:
        events = [bytes.fromhex(adv["hci_event"])] if "hci_event" in adv else advdata.hci_events_for(adv)
        values, meta = [], {}
        for ev in events:
            sensor, tracker = parser.parse_raw_data(ev)
            for k, v in (sensor or {}).items():
                if k in ("firmware", "type", "mac", "packet", "data", "rssi", "local_name"):
                    meta[k] = plain(v)
                    continue
                key = BLEPARSER_KEYS.get(norm_key(k), norm_key(k))
                values.append({"key": key, "device_id": None, "device_class": None, "value": plain(v),
                               "unit": IMPLIED_UNITS.get(key)})
            if tracker:
                meta["tracker"] = plain(tracker)
        return {"decoded": bool(values), "devices": {"": {"model": meta.get("type"), "manufacturer": meta.get("firmware")}},
                "values": values, "binary": [], "events": [], "meta": meta}


class SwitchbotOracle:
    """PySwitchbot: parse_advertisement_data(BLEDevice, AdvertisementData, model)."""

    def __init__(self):
        self.ap = importlib.import_module("switchbot.adv_parser")
        self.models = importlib.import_module("switchbot").SwitchbotModel
        self.name = version_of("PySwitchbot")

    def new(self, parser_args):
        return parser_args

    def run(self, parser_args, adv: dict) -> dict:
        from bleak.backends.device import BLEDevice
        from bleak.backends.scanner import AdvertisementData
        ad = AdvertisementData(
            local_name=adv.get("local_name") or None,
            manufacturer_data={int(k): bytes.fromhex(v) for k, v in adv.get("manufacturer_data", {}).items()},
            service_data={k: bytes.fromhex(v) for k, v in adv.get("service_data", {}).items()},
            service_uuids=list(adv.get("service_uuids", [])), rssi=adv.get("rssi", -60), tx_power=-127,
            platform_data=((),))
        model = (parser_args or {}).get("model")
        model = self.models(model) if model else None
        res = self.ap.parse_advertisement_data(BLEDevice(adv["address"], adv.get("local_name"), None), ad, model)
        if res is None:
            return {"decoded": False, "devices": {}, "values": [], "binary": [], "events": []}
        data = res.data or {}
        values, binary = [], []
        for k, v in (data.get("data") or {}).items():
            key = norm_key(k)
            if isinstance(v, bool):
                binary.append({"key": key, "device_id": None, "device_class": None, "value": v})
            else:
                values.append({"key": key, "device_id": None, "device_class": None, "value": plain(v),
                               "unit": IMPLIED_UNITS.get(key)})
        return {"decoded": bool(values or binary), "values": values, "binary": binary, "events": [],
                "devices": {"": {"model": plain(data.get("modelName")), "name": data.get("modelFriendlyName"),
                                 "manufacturer": "SwitchBot"}},
                "encrypted": data.get("isEncrypted")}


class IBeaconOracle:
    """ibeacon-ble: iBeaconParser().parse(BluetoothServiceInfo) → iBeaconAdvertisement."""

    def __init__(self):
        self.mod = importlib.import_module("ibeacon_ble")
        self.name = version_of("ibeacon-ble")

    def new(self, parser_args):
        p = self.mod.iBeaconParser()
        asyncio.run(p.async_setup())
        return p

    def run(self, parser, adv: dict) -> dict:
        r = parser.parse(service_info(adv))
        if r is None:
            return {"decoded": False, "devices": {}, "values": [], "binary": [], "events": []}
        units = {"power": "dBm", "rssi": "dBm", "distance": "m", "cypress_temperature": "°C", "cypress_humidity": "%"}
        values = [{"key": f.name, "device_id": None, "device_class": None, "value": plain(getattr(r, f.name)),
                   "unit": units.get(f.name)}
                  for f in dataclasses.fields(r) if f.name not in ("name", "source", "transient")]
        return {"decoded": True, "devices": {"": {"name": r.name, "manufacturer": r.vendor}}, "values": values,
                "binary": [], "events": [], "transient": r.transient}


class VictronOracle:
    """victron-ble: detect_device_type(manufacturer data)(advertisement_key).parse(data) → DeviceData;
    the values are its parsed dictionary (enums by lower-case name, a Kelvin temperature in °C too)."""

    def __init__(self):
        self.mod = importlib.import_module("victron_ble.devices")
        self.name = version_of("victron-ble")

    def new(self, parser_args: dict | None):
        return (parser_args or {}).get("kwargs", {}).get("advertisement_key")

    def run(self, key, adv: dict) -> dict:
        data = bytes.fromhex(adv.get("manufacturer_data", {}).get(str(0x02E1), ""))
        kind = self.mod.detect_device_type(data)
        if kind is None or key is None:
            return {"decoded": False, "values": [], "binary": [], "events": []}
        try:
            parsed = kind(key).parse(data)
        except Exception as e:  # noqa: BLE001 - victron-ble raises on a wrong key (key check byte)
            return {"decoded": False, "values": [], "binary": [], "events": [], "error": f"{type(e).__name__}: {e}"}
        values = []
        for k, v in parsed._data.items():
            if hasattr(v, "name") and hasattr(v, "value"):
                v = v.name.lower()
            values.append({"key": k, "device_id": None, "device_class": None, "value": plain(v), "unit": None})
            if k == "temperature_kelvin" and v is not None:
                values.append({"key": "temperature", "device_id": None, "device_class": None,
                               "value": round(v - 273.15, 2), "unit": "°C"})
        return {"decoded": bool(values), "devices": {"": {"model": kind.__name__, "manufacturer": "Victron"}},
                "values": values, "binary": [], "events": []}


class AranetOracle:
    """aranet4 (what Home Assistant's aranet integration runs): Aranet4Advertisement(BLEDevice,
    AdvertisementData).readings. Values as the integration shows them: the reading's fields
    (-1 = invalid → None), radiation rate nSv/h × 0.001 → µSv/h, total nSv × 0.000001 → mSv."""

    UNITS = {"temperature": "°C", "humidity": "%", "pressure": "hPa", "co2": "ppm", "battery": "%",
             "interval": "s", "radiation_rate": "µSv/h", "radiation_total": "mSv", "radiation_duration": "s",
             "radon_concentration": "Bq/m³"}

    def __init__(self):
        self.mod = importlib.import_module("aranet4.client")
        self.name = version_of("aranet4")

    def new(self, parser_args):
        return None

    def run(self, parser, adv: dict) -> dict:
        from bleak.backends.device import BLEDevice
        from bleak.backends.scanner import AdvertisementData
        ad = AdvertisementData(
            local_name=adv.get("local_name") or None,
            manufacturer_data={int(k): bytes.fromhex(v) for k, v in adv.get("manufacturer_data", {}).items()},
            service_data={k: bytes.fromhex(v) for k, v in adv.get("service_data", {}).items()},
            service_uuids=list(adv.get("service_uuids", [])), rssi=adv.get("rssi", -60), tx_power=-127,
            platform_data=())
        r = self.mod.Aranet4Advertisement(BLEDevice(adv["address"], adv.get("local_name"), None), ad).readings
        if r is None:
            return {"decoded": False, "devices": {}, "values": [], "binary": [], "events": []}
        r.name = r.name or ""  # toDict() reads the name (None in a passive scan's report)
        d = r.toDict()
        model = d.pop("type")
        d["interval"] = r.interval
        if "radiation_rate" in d:
            d["radiation_rate"] = round(d["radiation_rate"] * 0.001, 3) if d["radiation_rate"] != -1 else -1
            d["radiation_total"] = round(d["radiation_total"] * 0.000001, 6) if d["radiation_total"] != -1 else -1
        values = [{"key": k, "device_id": None, "device_class": None, "value": None if v == -1 else plain(v),
                   "unit": self.UNITS.get(k)} for k, v in d.items()]
        return {"decoded": True, "devices": {"": {"model": model, "manufacturer": "SAF Tehnika"}},
                "values": values, "binary": [], "events": []}


def oracle_for(vendor: str):
    if vendor in HA_LIBS:
        return HAOracle(vendor)
    return {"bleparser": BleParserOracle, "switchbot": SwitchbotOracle, "ibeacon": IBeaconOracle,
            "victron": VictronOracle, "aranet": AranetOracle}[vendor]()


def run_vectors(doc: dict, out=None, oracle_vendor: str | None = None) -> list[dict]:
    """Feeds every vector of a vectors document to its oracle, writes JSON Lines."""
    out = sys.stdout if out is None else out
    vendor = doc["vendor"]
    # a vectors file of inputs from elsewhere names the oracle that reads them ("oracle_vendor")
    oracle = oracle_for(oracle_vendor or doc.get("oracle_vendor") or vendor)
    results, parsers = [], {}
    for v in doc["vectors"]:
        rec = {"id": v["id"], "vendor": vendor, "oracle": oracle.name}
        try:
            seq = v.get("sequence")
            if seq and seq in parsers:
                parser = parsers[seq]
            else:
                with contextlib.redirect_stdout(sys.stderr):
                    parser = oracle.new(v.get("parser_args"))
                if seq:
                    parsers[seq] = parser
            with contextlib.redirect_stdout(sys.stderr):  # some libraries print
                rec.update(oracle.run(parser, v["input"]))
        except Exception as e:  # noqa: BLE001 - an oracle that throws is a result too
            rec.update({"decoded": False, "error": f"{type(e).__name__}: {e}"})
        if v.get("sequence"):
            rec["sequence"] = v["sequence"]
        results.append(rec)
        if out:
            out.write(json.dumps(rec, ensure_ascii=False) + "\n")
    return results


# ------------------------------------------------------------------ captures

def vector_events(v: dict) -> list[bytes]:
    inp = v["input"]
    if "hci_event" in inp:
        return [bytes.fromhex(inp["hci_event"])]
    return advdata.hci_events_for(inp)


def write_captures(docs: list[dict], out_dir: Path) -> list[dict]:
    out_dir.mkdir(parents=True, exist_ok=True)
    manifest = []
    for doc in docs:
        all_events = []
        for v in doc["vectors"]:
            evs = vector_events(v)
            (out_dir / f"{v['id']}.btsnoop").write_bytes(advdata.btsnoop(evs))
            first = len(all_events) + 1
            all_events += evs
            manifest.append({"vendor": doc["vendor"], "id": v["id"], "file": f"{doc['vendor']}.btsnoop",
                             "frames": list(range(first, first + len(evs))),
                             "subevents": [e[3] for e in evs]})
        (out_dir / f"{doc['vendor']}.btsnoop").write_bytes(advdata.btsnoop(all_events))
    with open(out_dir / "manifest.jsonl", "w") as f:
        for m in manifest:
            f.write(json.dumps(m) + "\n")
    return manifest


TSHARK_FIELDS = ["frame.number", "bthci_evt.le_meta_subevent", "bthci_evt.bd_addr", "bthci_evt.rssi",
                 "btcommon.eir_ad.entry.type", "btcommon.eir_ad.entry.company_id", "btcommon.eir_ad.entry.data",
                 "btcommon.eir_ad.entry.uuid_16", "btcommon.eir_ad.entry.uuid_32", "btcommon.eir_ad.entry.uuid_128",
                 "btcommon.eir_ad.entry.custom_uuid_128", "btcommon.eir_ad.entry.service_data",
                 "btcommon.eir_ad.entry.device_name"]


def tshark_rows(path: Path) -> dict[int, dict]:
    cmd = ["tshark", "-r", str(path), "-T", "fields", "-E", "separator=\t", "-E", "occurrence=a",
           "-E", "aggregator=|"]
    for f in TSHARK_FIELDS:
        cmd += ["-e", f]
    cp = subprocess.run(cmd, capture_output=True, text=True, check=True)
    rows = {}
    for line in cp.stdout.splitlines():
        parts = line.split("\t")
        parts += [""] * (len(TSHARK_FIELDS) - len(parts))
        r = dict(zip(TSHARK_FIELDS, parts))
        rows[int(r["frame.number"])] = r
    return rows


def selftest(docs: list[dict]) -> int:
    """Every vector's capture read back by tshark gives the vector's advertisement again."""
    if not shutil_which("tshark"):
        print("selftest: tshark not found (apt-get install tshark)", file=sys.stderr)
        return 2
    bad = total = 0
    with tempfile.TemporaryDirectory() as tmp:
        manifest = write_captures(docs, Path(tmp))
        by_vendor: dict[str, list[dict]] = {}
        for m in manifest:
            by_vendor.setdefault(m["vendor"], []).append(m)
        vec = {v["id"]: v for d in docs for v in d["vectors"]}
        for vendor, ms in by_vendor.items():
            rows = tshark_rows(Path(tmp) / f"{vendor}.btsnoop")
            vbad = 0
            for m in ms:
                total += 1
                problems = check_roundtrip(vec[m["id"]], [rows.get(n) for n in m["frames"]])
                if problems:
                    vbad += 1
                    print(f"{m['id']}: {'; '.join(p[:300] for p in problems)}")
            bad += vbad
            print(f"selftest {vendor}: {len(ms)} vectors, {len(ms) - vbad} read back by tshark as built")
    print(f"selftest: {total} vectors, {total - bad} round-trip")
    obad = oracle_roundtrip(docs)
    return 1 if bad or obad else 0


def adv_from_events(events: list[bytes]) -> dict | None:
    """The advertisement a scanner would assemble from these events (ADV_IND + SCAN_RSP, or
    extended fragments): AD structures of all reports, in order, merged."""
    reps = [r for ev in events for r in advdata.parse_hci_event(ev)]
    if not reps:
        return None
    structs = [s for r in reps for s in advdata.parse_ad(r["data"])]
    return advdata.adv_from_structs(reps[0]["address"], structs, reps[0]["rssi"])


def oracle_roundtrip(docs: list[dict]) -> int:
    """Each vector's oracle result equals the oracle's result on the advertisement read back
    from the capture's bytes (so the captures carry everything the oracle used)."""
    bad_total = 0
    for doc in docs:
        if doc["vendor"] == "bleparser":
            continue  # raw events: the capture holds the very bytes
        back = {"vendor": doc["vendor"], "vectors": []}
        for v in doc["vectors"]:
            adv = adv_from_events(vector_events(v))
            inp = dict(adv, address=v["input"]["address"]) if adv else v["input"]
            if len(v["input"]["address"]) != 17:
                inp["address"] = v["input"]["address"]  # macOS-style ids in tests: kept as given
            # a name equal to the address is not sent; HA fills it back in the same way
            back["vectors"].append(dict(v, input=inp))
        a = run_vectors(doc, out=False)
        b = run_vectors(back, out=False)
        bad = 0
        for x, y in zip(a, b):
            kx = sorted((v["key"], str(v["value"])) for v in x.get("values", []) + x.get("binary", []))
            ky = sorted((v["key"], str(v["value"])) for v in y.get("values", []) + y.get("binary", []))
            if kx != ky or x.get("decoded") != y.get("decoded"):
                bad += 1
                print(f"{x['id']}: oracle from the vector {kx[:6]} / from the capture {ky[:6]}")
        print(f"oracle round trip {doc['vendor']}: {len(a)} vectors, {len(a) - bad} same values from the capture's bytes")
        bad_total += bad
    return bad_total


def shutil_which(x):
    import shutil
    return shutil.which(x)


def check_roundtrip(v: dict, rows: list[dict | None]) -> list[str]:
    """Compares what tshark dissected with the advertisement the events were built from
    (for bleparser's raw events: with what advdata.parse_hci_event reads from them)."""
    if any(r is None for r in rows):
        return ["tshark did not read every frame"]
    inp = v["input"]
    if "hci_event" in inp:
        reps = advdata.parse_hci_event(bytes.fromhex(inp["hci_event"]))
        if not reps:
            return ["not an advertising report"]
        want = advdata.adv_from_structs(reps[0]["address"], advdata.parse_ad(reps[0]["data"]), reps[0]["rssi"])
    else:
        want = inp
    got_types, got_cids, got_data, got_u16, got_u128, got_sd, names, addrs, rssis = [], [], [], [], [], [], [], [], []
    for r in rows:
        sp = lambda k: [x for x in r[k].split("|") if x != ""]  # noqa: E731
        got_types += [int(x, 16) if x.startswith("0x") else int(x) for x in sp("btcommon.eir_ad.entry.type")]
        got_cids += [int(x, 16) if x.startswith("0x") else int(x) for x in sp("btcommon.eir_ad.entry.company_id")]
        got_data += sp("btcommon.eir_ad.entry.data")
        got_u16 += [int(x, 16) for x in sp("btcommon.eir_ad.entry.uuid_16")]
        got_u128 += sp("btcommon.eir_ad.entry.uuid_128") + sp("btcommon.eir_ad.entry.custom_uuid_128")
        got_sd += sp("btcommon.eir_ad.entry.service_data")
        names += sp("btcommon.eir_ad.entry.device_name")
        addrs += sp("bthci_evt.bd_addr")
        rssis += sp("bthci_evt.rssi")
    problems = []
    if not addrs or (addrs[0].upper() != want["address"].upper() and len(want["address"]) == 17):
        problems.append(f"address {addrs} != {want['address']}")
    if rssis and want.get("rssi") is not None and int(rssis[0]) != max(-127, min(20, want["rssi"])):
        problems.append(f"rssi {rssis} != {want['rssi']}")
    want_cids = sorted(int(k) for k in want.get("manufacturer_data", {}))
    if sorted(got_cids) != want_cids:
        problems.append(f"company ids {got_cids} != {want_cids}")
    # Wireshark hands some manufacturer data to sub-dissectors (Apple, Microsoft…): then there
    # is no entry.data to compare, only the company id; the rest is compared when present.
    for cid, data in want.get("manufacturer_data", {}).items():
        if data and got_data and data.lower() not in [d.lower() for d in got_data]:
            if not any(data.lower().startswith(d.lower()) or d.lower().startswith(data.lower()) for d in got_data):
                problems.append(f"manufacturer data {cid}: {data} not among {got_data}")
    want_sd = want.get("service_data", {})
    n_sd_types = sum(1 for t in got_types if t in (0x16, 0x20, 0x21))
    if n_sd_types != len(want_sd):
        problems.append(f"{n_sd_types} service data structures, want {len(want_sd)}")
    name = (want.get("local_name") or "").rstrip("\x00")
    if name and not advdata._is_address_like(name, want["address"]) and name != want["address"]:
        if names != [name]:
            problems.append(f"name {names} != {name!r}")
    return problems


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    cmd, rest = argv[0], argv[1:]
    if cmd == "run":
        for doc in load(rest):
            run_vectors(doc)
        return 0
    if cmd == "captures":
        if "--out" not in rest:
            print("captures needs --out DIR", file=sys.stderr)
            return 2
        i = rest.index("--out")
        out = Path(rest[i + 1])
        del rest[i:i + 2]
        m = write_captures(load(rest), out)
        print(f"{len(m)} vectors → {out}")
        return 0
    if cmd == "selftest":
        return selftest(load(rest))
    print(f"unknown command {cmd}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
