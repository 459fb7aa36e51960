"""vectors/victron.json from victron-ble's own tests: every encrypted advertisement an
end-to-end test hands to a parser, with the key it gives (the tests' expected values are not
copied: oracle.py runs the installed victron-ble on them).

  .venv-oracles/bin/python Tests/VendorOracles/tools/victron_vectors.py victron_ble-0.9.3.tar.gz

victron-ble's repository is not in the git mirrors extract_vectors.py reads; its PyPI sdist
carries the tests (pip download --no-deps --no-binary :all: victron-ble==0.9.3).
"""
import json
import re
import sys
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def main(sdist: str) -> int:
    vectors = []
    with tarfile.open(sdist) as t:
        names = sorted(n for n in t.getnames() if re.search(r"/tests/test_[a-z_]+\.py$", n))
        for n in names:
            text = t.extractfile(n).read().decode()
            # a test: data = "…" (or bytes.fromhex("…")) and the key given to the parser class
            for m in re.finditer(r"def (test_\w+)\(self\)[^\n]*\n(.*?)(?=\n    def |\Z)", text, re.S):
                body = m.group(2)
                data = re.search(r'data = (?:bytes\.fromhex\()?"([0-9a-f]{16,})"', body)
                key = re.search(r'key = "([0-9a-f]{32})"', body) or re.search(r'\w+\("([0-9a-f]{32})"\)', body)
                if not data or not key:
                    continue
                vectors.append({"id": f"victron-{len(vectors) + 1:03d}",
                                "source_tests": [f"tests/{Path(n).name}::{m.group(1)}"], "call": "parse",
                                "parser_args": {"args": [], "kwargs": {"advertisement_key": key.group(1)}},
                                "input": {"address": f"C0:FF:EE:00:00:{len(vectors) + 1:02X}", "local_name": "",
                                          "manufacturer_data": {str(0x02E1): data.group(1)}, "service_data": {},
                                          "service_uuids": [], "rssi": -60}})
    doc = {"vendor": "victron", "oracle": {"pypi": "victron-ble", "module": "victron_ble"},
           "provenance": {"sdist": "victron-ble 0.9.3 (PyPI), " + Path(sdist).name,
                          "repository": "https://github.com/keshavdv/victron-ble", "licence": "Unlicense",
                          "paths": sorted({v["source_tests"][0].split("::")[0] for v in vectors}),
                          "how": "data/key pairs of the sdist's tests (tools/victron_vectors.py); addresses are made up "
                                 "(the tests have none); the tests' expected values are not copied"},
           "vectors": vectors}
    (HERE / "vectors" / "victron.json").write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{len(vectors)} vectors")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
