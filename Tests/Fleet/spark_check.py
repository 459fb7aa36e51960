#!/usr/bin/env python3
"""`make test-spark`: runs the Spark section of docs/fleet.md in local mode and checks it
against `bluesift stats` of the same captures.

    spark_check.py BLUESIFT DOCS/fleet.md WORKDIR CAPTURE_DIR...

The ```python blocks starting with `# name: X` are executed as written, with FLEET (the
JSON Lines folder bluesift wrote), BLUESIFT and CAPTURE_PATHS set. Closing line:
"spark checks: N ok, N failing"; exit 1 on any failure.
"""
import glob
import json
import os
import subprocess
import sys
import time
from collections import defaultdict

from fleet_check import Checks, doc_blocks


def main():
    bluesift, doc, work, *dirs = sys.argv[1:]
    bluesift = os.path.abspath(bluesift)
    fleet = f"{work}/jsonl"
    subprocess.run([bluesift, "dump", *dirs, "--format", "jsonl", "--output-dir", fleet], check=True, stderr=subprocess.DEVNULL)
    stats = [json.loads(l) for l in subprocess.run([bluesift, "stats", *dirs, "--format", "json"], check=True,
                                                    capture_output=True, text=True).stdout.splitlines() if l]
    blocks = doc_blocks(doc, "python", "#")
    check = Checks("spark")

    t0 = time.time()
    os.environ.setdefault("PYSPARK_SUBMIT_ARGS", "--conf spark.ui.showConsoleProgress=false pyspark-shell")
    scope = {"FLEET": f"{fleet}/*.jsonl", "BLUESIFT": bluesift}
    exec(blocks["spark_queries"], scope)
    spark = scope["spark"]
    spark.sparkContext.setLogLevel("ERROR")
    dev = {r["file"]: (r["model"], r["firmware"]) for r in spark.sql("SELECT * FROM devices").collect()}

    want = defaultdict(lambda: [0, 0])
    lat = defaultdict(lambda: [0, None, None])
    for s in stats:
        model, fw = dev.get(s["file"], ("unknown", "unknown"))
        for c in s["characteristics"]:
            if not c.get("characteristic"):
                continue
            w = want[(fw, c["characteristic"])]
            w[0] += c["reads"] + c["write_requests"]
            w[1] += c["errors"]
            l = c.get("latency")
            if l and l["count"] > 0:
                x = lat[model]
                x[0] += l["count"]
                x[1] = l["min_us"] if x[1] is None else min(x[1], l["min_us"])
                x[2] = l["max_us"] if x[2] is None else max(x[2], l["max_us"])
    expected = {k: v for k, v in want.items() if v[1] > 0}
    got = {(r["firmware"], r["characteristic"]): [r["requests"], r["att_errors"]] for r in scope["att_error_rate"].collect()}
    check(got == expected and len(got) > 0, f"att_error_rate: spark {got}, stats {expected}")
    got = {r["model"]: [r["responses"], r["min_us"], r["max_us"]] for r in scope["latency_by_model"].collect()}
    check(got == dict(lat) and "BAND-1" in got, f"latency_by_model: spark {got}, stats {dict(lat)}")

    # bluesift inside the job: one capture per task through RDD.pipe.
    paths = sorted(p for p in glob.glob(os.path.join(dirs[-1], "*.btsnoop")))
    scope["CAPTURE_PATHS"] = paths
    exec(blocks["spark_pipe"], scope)
    piped = scope["piped"]
    by_file = {r["file"]: r["count"] for r in piped.groupBy("file").count().collect()}
    want_records = {s["file"]: s["records"] for s in stats if s["file"] in paths}
    check(by_file == want_records and len(by_file) == len(paths) > 1,
          f"spark_pipe: records per file {by_file}, stats {want_records}")
    print(f"spark: {len(stats)} captures; local mode, queries and pipe {time.time() - t0:.1f} s; "
          f"{len(paths)} captures piped, {sum(by_file.values())} records")
    spark.stop()
    return check.close()


if __name__ == "__main__":
    sys.exit(main())
