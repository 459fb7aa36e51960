#!/usr/bin/env python3
"""`make test-vendors`: bluesift's advertising plugins against the vendor oracles (issue 29).

  .venv-oracles/bin/python Tests/VendorOracles/test_vendors.py --bluesift .build/debug/bluesift
      [--plugins Plugins] [--maps Tests/VendorOracles/map] [--corpus ../shared/captures/public] [-v]

1. The oracles' test vectors (vectors/*.json): `oracle.py run` → oracle values, and one
   btsnoop capture per vector (oracle.py's write_captures) in a temporary folder under $TMPDIR.
2. One `bluesift dump --plugins Plugins --format jsonl` over all those captures, with
   `--vendor-keys` built from the vectors' bindkeys (bthome, xiaomi) and aeskeys (bleparser) by
   address. Where two vectors give one address different keys, or one a key and the other
   none (the oracles' wrong-key and no-key tests), they go to separate runs; every capture
   is dumped once.
3. compare.py: per plugin `PLUGIN: N vectors, N agree, N known differences` and each
   unexplained difference; which plugin covers which vectors and the known differences come
   from map/PLUGIN_ID.yaml.
4. Real captures (--corpus, default ../shared/captures/public when it exists): survey.py's
   oracle values of every report an oracle decodes there (file, frame, address) against one
   `bluesift dump` of each capture; per plugin the same counts, and how many reports each
   plugin decodes in which captures.
Last line: `vendor oracles: N passed, N failed` (N = vectors), with `, real captures not read (reason)`
when they could not be read. Exit 1 on an unexplained
difference (vectors or captures), 2 when a step cannot run.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import advdata  # noqa: E402
import compare  # noqa: E402
import oracle as orc  # noqa: E402  (heavy imports happen only in oracle_for: not used here)

ROOT = HERE.parent.parent


def norm_addr(a: str) -> str:
    """A vector's address as bluesift prints it; the captures write a placeholder for the
    macOS-style device ids some tests use (advdata.address_bytes)."""
    h = re.sub(r"[^0-9a-fA-F]", "", a or "")
    if len(h) != 12:
        h = "0" * 12
    return ":".join(h[i:i + 2] for i in range(0, 12, 2)).lower()


def vector_keys(v: dict) -> dict[str, str | None]:
    """address → key (hex) the vector's oracle was given, None for its advertiser when it was
    given none (that address must then have no key in the run). bluesift takes 12- or 16-byte
    keys (MiBeacon legacy, AES-128): a test's key of another length counts as none."""
    kw = (v.get("parser_args") or {}).get("kwargs") or {}
    inp = v["input"]
    if "hci_event" in inp:
        addrs = [r["address"] for r in advdata.parse_hci_event(bytes.fromhex(inp["hci_event"]))]
    else:
        addrs = [inp.get("address", "")]
    out: dict[str, str | None] = {norm_addr(a): None for a in addrs}
    if isinstance(kw.get("advertisement_key"), str):  # victron-ble
        out[norm_addr(inp.get("address", ""))] = kw["advertisement_key"].lower()
    if isinstance(kw.get("bindkey"), str):  # bthome-ble, xiaomi-ble
        out[norm_addr(inp.get("address", ""))] = kw["bindkey"].lower()
    if isinstance(kw.get("aeskeys"), dict):  # bleparser: {"a4c1388d18b2": key}
        for mac, key in kw["aeskeys"].items():
            if len(re.sub(r"[^0-9a-fA-F]", "", mac)) == 12:
                out[norm_addr(mac)] = key.lower()
    return {a: (k if k and re.fullmatch(r"[0-9a-f]{24}|[0-9a-f]{32}", k) else None) for a, k in out.items()}


def key_batches(vectors: list[dict]) -> list[tuple[dict, list[str]]]:
    """Vector ids grouped so that each address has one key (or none) in a group: [(keys, ids)]."""
    batches: list[tuple[dict, list[str]]] = []
    for v in vectors:
        keys = vector_keys(v)
        for bk, ids in batches:
            if all(bk.get(a, k) == k for a, k in keys.items()):
                bk.update(keys)
                ids.append(v["id"])
                break
        else:
            batches.append((dict(keys), [v["id"]]))
    return [({a: k for a, k in bk.items() if k}, ids) for bk, ids in batches]


class Bluesift:
    def __init__(self, binary: str, plugins: str):
        self.binary, self.plugins = binary, plugins
        self.warnings: list[str] = []
        self.env = {k: v for k, v in os.environ.items() if k != "BLUESIFT_PLUGINS"}
        h = subprocess.run([binary, "dump", "--help"], capture_output=True, text=True, env=self.env)
        self.has_vendor_keys = "--vendor-keys" in h.stdout

    def dump(self, files: list[str], out: Path, extra: list[str]) -> None:
        cmd = [self.binary, "dump", *files, "--with-file", "--plugins", self.plugins, "--format", "jsonl", *extra]
        with open(out, "w") as f:
            cp = subprocess.run(cmd, stdout=f, stderr=subprocess.PIPE, text=True, env=self.env)
        for line in cp.stderr.splitlines():
            if line not in self.warnings and "not captures" not in line and "no records match" not in line:
                self.warnings.append(line)
        if cp.returncode != 0:
            raise RuntimeError(f"bluesift dump exited {cp.returncode}: {cp.stderr.strip()[-400:]}")


def plugin_ids(plugins: Path) -> set[str]:
    files = sorted(plugins.glob("*.yaml")) if plugins.is_dir() else [plugins]
    ids = set()
    for f in files:
        m = re.search(r"^id:\s*['\"]?([^'\"\s#]+)", f.read_text(errors="replace"), re.M)
        if m:
            ids.add(m.group(1))
    return ids


def run(a) -> int:
    t0 = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix="vendor-oracles."))  # under $TMPDIR
    survey = None
    try:
        corpus = Path(a.corpus) if a.corpus else None
        corpus_skip = None
        if corpus is None or not corpus.is_dir():
            corpus_skip = f"{a.corpus or '../shared/captures/public'} is absent"
        elif not shutil.which("tshark"):
            corpus_skip = "tshark is not installed (make deps-test), survey.py reads the captures with it"
        if corpus_skip is None:  # the longest step (tshark over every capture): started first
            survey = subprocess.Popen([sys.executable, str(HERE / "survey.py"), str(corpus),
                                       "--oracle-jsonl", str(tmp / "corpus-oracle.jsonl")],
                                      stdout=subprocess.DEVNULL, stderr=open(tmp / "survey.err", "w"))
        with open(tmp / "oracle.jsonl", "w") as out, open(tmp / "oracle.err", "w") as err:
            oracle_run = subprocess.Popen([sys.executable, str(HERE / "oracle.py"), "run"], stdout=out, stderr=err)
        docs = orc.load([])
        vectors = [v for d in docs for v in d["vectors"]]
        orc.write_captures(docs, tmp / "caps")
        maps = compare.load_maps(Path(a.maps))
        bs = Bluesift(a.bluesift, a.plugins)
        if bs.has_vendor_keys:
            batches = key_batches(vectors)
        else:
            batches = [({}, [v["id"] for v in vectors])]
        index: dict = collections.defaultdict(list)
        for i, (keys, ids) in enumerate(batches):
            extra = []
            if keys:
                kf = tmp / f"keys-{i}.json"
                kf.write_text(json.dumps(keys))
                extra = ["--vendor-keys", str(kf)]
            out = tmp / f"vectors-{i}.jsonl"
            bs.dump([str(tmp / "caps" / f"{vid}.btsnoop") for vid in ids], out, extra)
            with open(out) as f:
                compare.read_bluesift(f, index, lambda rec, addr: [Path(rec.get("file", "")).stem])
        if oracle_run.wait() != 0:
            print(f"oracle.py run failed: {(tmp / 'oracle.err').read_text().strip()[-400:]}")
            return 2
        oracle = [json.loads(line) for line in open(tmp / "oracle.jsonl")]
        for w in bs.warnings:
            print(w)
        if not maps:
            print(f"no map files in {a.maps}: no plugin is compared")
        present = plugin_ids(Path(a.plugins))
        for p in sorted(set(maps) - present):
            print(f"{Path(a.maps).name}/{p}.yaml: no plugin with id {p} in {a.plugins}")
        if not bs.has_vendor_keys:
            print("this bluesift has no --vendor-keys: encrypted vectors are dumped without their keys")
        res = compare.compare(oracle, lambda o: index.get(o["id"], []), maps)
        print(f"== test vectors ({len(oracle)} vectors of {len(docs)} oracles, {len(batches)} bluesift run"
              f"{'s' if len(batches) > 1 else ''} over {len(vectors)} captures)")
        compare.report(res, "vectors", a.v)

        corpus_failed = 0
        print(f"== real captures ({a.corpus or '../shared/captures/public'})")
        if corpus_skip:
            print(f"real captures not read: {corpus_skip}")
        else:
            cindex: dict = collections.defaultdict(list)
            decoded: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
            cout = tmp / "corpus.jsonl"
            n_warnings = len(bs.warnings)
            bs.dump([str(corpus)], cout, ["--protocol", "adv"])
            for w in bs.warnings[n_warnings:]:  # the plugins' load warnings were printed above
                print(w)
            with open(cout) as f:
                for line in f:
                    if '"plugin"' not in line:
                        continue
                    rec = json.loads(line)
                    seen = set()
                    for addr, vo in compare.record_objects(rec):
                        keys = compare.corpus_keys(rec, addr)
                        for k in keys:
                            cindex[k].append(vo)
                        if (vo.get("plugin"), addr) not in seen:
                            seen.add((vo.get("plugin"), addr))
                            decoded[vo.get("plugin")][keys[0][0]] += 1
            if survey.wait() != 0:
                print(f"survey.py failed: {(tmp / 'survey.err').read_text().strip()[-400:]}")
                return 2
            survey = None
            coracle = [json.loads(line) for line in open(tmp / "corpus-oracle.jsonl")]
            cres = compare.compare(coracle, lambda o: compare.corpus_objects(cindex, o), maps)
            compare.report(cres, "reports", a.v)
            n_caps = len([p for p in corpus.iterdir() if p.is_file() and p.suffix not in (".md", ".txt")])
            if decoded:
                print(f"reports each plugin decodes in the {n_caps} captures:")
                for p, caps in sorted(decoded.items(), key=lambda kv: (-sum(kv[1].values()), kv[0])):
                    print(f"  {p}: {sum(caps.values())} (" + ", ".join(f"{c} {n}" for c, n in caps.most_common()) + ")")
            else:
                print(f"no plugin decodes a report in the {n_caps} captures")
            print(f"real captures: {len(coracle)} oracle-decoded reports, {cres.passed} passed, {cres.failed} failed")
            corpus_failed = cres.failed
        print(f"({time.monotonic() - t0:.0f} s)")
        # Real captures that could not be read are named in the count line with the reason,
        # so a run without them never reads as a full pass.
        unread = f", real captures not read ({corpus_skip})" if corpus_skip else ""
        print(f"vendor oracles: {res.passed} passed, {res.failed} failed{unread}")
        return 1 if res.failed or corpus_failed else 0
    except RuntimeError as e:
        print(str(e))
        return 2
    finally:
        if survey is not None:
            survey.kill()
            survey.wait()
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bluesift", default=str(ROOT / ".build/debug/bluesift"))
    ap.add_argument("--plugins", default="Plugins")
    ap.add_argument("--maps", default=str(HERE / "map"))
    default_corpus = ROOT.parent / "shared/captures/public"
    ap.add_argument("--corpus", default=str(default_corpus), help="real captures (default ../shared/captures/public)")
    ap.add_argument("-v", action="store_true", help="also list the known differences")
    a = ap.parse_args(argv)
    if not os.access(a.bluesift, os.X_OK):
        print(f"test-vendors: no bluesift at {a.bluesift} (make build first)")
        return 2
    return run(a)


if __name__ == "__main__":
    sys.exit(main())
