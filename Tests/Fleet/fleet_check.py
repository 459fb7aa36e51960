#!/usr/bin/env python3
"""Runs the DuckDB queries of docs/fleet.md over the JSON Lines of captures and checks their
results against `bluesift stats` of the same captures.

    fleet_check.py BLUESIFT DOCS/fleet.md WORKDIR CAPTURE_DIR...

The queries are read from the document (```sql blocks starting with `-- name: X`), so the
document and the test cannot drift apart. Prints one line per check and a closing
"fleet checks: N ok, N failing" line; exit 1 on any failure.
"""
import json
import re
import subprocess
import sys
import time
from collections import Counter, defaultdict


class Checks:
    """Counts checks; prints each failure, and at the end `NAME checks: N ok, N failing`."""

    def __init__(self, name):
        self.name, self.passed, self.failures = name, 0, []

    def __call__(self, ok, what):
        if ok:
            self.passed += 1
        else:
            self.failures.append(what)
            print("FAIL", what)

    def close(self):
        print(f"{self.name} checks: {self.passed} ok, {len(self.failures)} failing")
        return 1 if self.failures else 0


def doc_blocks(path, lang, marker):
    text = open(path, encoding="utf-8").read()
    out = {}
    for body in re.findall(r"```" + lang + r"\n(.*?)```", text, re.S):
        m = re.match(marker + r" name: (\w+)\n", body)
        if m:
            out[m.group(1)] = body[m.end():]
    return out


def main():
    import duckdb  # here: spark_check.py imports this module from a venv without it
    bluesift, doc, work, *dirs = sys.argv[1:]
    jsonl = f"{work}/jsonl"
    t0 = time.time()
    subprocess.run([bluesift, "dump", *dirs, "--format", "jsonl", "--output-dir", jsonl],
                   check=True, stderr=subprocess.DEVNULL)
    stats_out = subprocess.run([bluesift, "stats", *dirs, "--format", "json"], check=True,
                               capture_output=True, text=True).stdout
    stats = [json.loads(l) for l in stats_out.splitlines() if l]
    t_bluesift = time.time() - t0

    sql = doc_blocks(doc, "sql", "--")
    con = duckdb.connect()
    t1 = time.time()
    con.execute(sql["records"].replace("fleet/*.jsonl", f"{jsonl}/*.jsonl"))
    con.execute(sql["devices"])

    def rows(name):
        cur = con.execute(sql[name])
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, r)) for r in cur.fetchall()]

    results = {n: rows(n) for n in ("att_error_rate", "latency_by_model", "disconnect_reasons")}
    t_duckdb = time.time() - t1
    check = Checks("fleet")

    # The devices view, from stats' side: files → (model, firmware).
    dev = {r[0]: (r[1], r[2]) for r in con.execute("SELECT file, model, firmware FROM devices").fetchall()}
    files = {s["file"] for s in stats}
    record_files = {r[0] for r in con.execute("SELECT DISTINCT file FROM records").fetchall()}
    check(record_files == {s["file"] for s in stats if s["records"] > 0},
          f"files with records: duckdb {len(record_files)}, stats {len(files)}")
    total = con.execute("SELECT count(*) FROM records").fetchone()[0]
    check(total == sum(s["records"] for s in stats), f"records: duckdb {total}, stats {sum(s['records'] for s in stats)}")

    # att_error_rate against stats' characteristics[]: requests = reads + write_requests,
    # errors = errors, summed per (firmware, characteristic UUID).
    want = defaultdict(lambda: [0, 0])
    for s in stats:
        fw = dev.get(s["file"], ("unknown", "unknown"))[1]
        for c in s["characteristics"]:
            if c.get("characteristic"):
                w = want[(fw, c["characteristic"])]
                w[0] += c["reads"] + c["write_requests"]
                w[1] += c["errors"]
    expected = {k: v for k, v in want.items() if v[1] > 0}
    got = {(r["firmware"], r["characteristic"]): [r["requests"], r["errors"]] for r in results["att_error_rate"]}
    check(got == expected, f"att_error_rate: {len(got)} rows; differs from stats: "
          + str({k: (got.get(k), expected.get(k)) for k in set(got) | set(expected) if got.get(k) != expected.get(k)}))
    check(sum(v[1] for v in got.values()) > 0, "att_error_rate finds errors on the corpus")

    # latency_by_model against stats' latency: count, min and max exact per model.
    lat = defaultdict(lambda: [0, None, None])
    for s in stats:
        model = dev.get(s["file"], ("unknown", "unknown"))[0]
        for c in s["characteristics"]:
            l = c.get("latency")
            if c.get("characteristic") and l and l["count"] > 0:
                x = lat[model]
                x[0] += l["count"]
                x[1] = l["min_us"] if x[1] is None else min(x[1], l["min_us"])
                x[2] = l["max_us"] if x[2] is None else max(x[2], l["max_us"])
    got = {r["model"]: [r["responses"], r["min_us"], r["max_us"]] for r in results["latency_by_model"]}
    check(got == dict(lat), f"latency_by_model differs from stats: "
          + str({k: (got.get(k), lat.get(k)) for k in set(got) | set(lat) if got.get(k) != lat.get(k)}))
    check("BAND-1" in got, "latency_by_model names the band (Model Number String BAND-1)")
    # Percentiles: each characteristic's median within stats' ±4.5 % buckets (or 100 µs).
    medians = 0
    for s in stats:
        for c in s["characteristics"]:
            l = c.get("latency")
            if not (c.get("characteristic") and l and l["count"] >= 5):
                continue
            # Controllers reuse handles: the connection is its handle within its frames.
            k = s["connections"][c["connection"]]
            lo, hi = k.get("start_frame") or k.get("first_frame") or 0, k.get("end_frame") or k.get("last_frame") or 1 << 40
            q = con.execute("SELECT quantile_disc((att->>'latency_us')::BIGINT, 0.5) FROM records WHERE file = ? "
                            "AND conn = ? AND frame BETWEEN ? AND ? AND (att->>'characteristic') = ? "
                            "AND (att->>'descriptor') IS NOT DISTINCT FROM ? "
                            "AND (att->>'latency_us') IS NOT NULL AND ((att->>'opcode')::INT IN (11, 13, 19, 23) OR ((att->>'opcode')::INT = 1 "
                            "AND NOT ((att->>'error')::INT = 10 AND (att->>'request_opcode')::INT IN (4, 6, 8, 16))))",
                            [s["file"], k["handle"], lo, hi, c["characteristic"], c.get("descriptor")]).fetchone()[0]
            medians += 1
            check(q is not None and abs(q - l["median_us"]) <= max(0.05 * q, 100),
                  f"{s['file']} {c['characteristic']}: p50 duckdb {q}, stats {l['median_us']}")
    check(medians >= 10, f"medians compared: {medians}")

    # disconnect_reasons against stats' connections[].disconnect_reason_name.
    want = Counter()
    for s in stats:
        for c in s["connections"]:
            if c.get("disconnect_reason_name"):
                want[c["disconnect_reason_name"]] += 1
    got = Counter()
    for r in results["disconnect_reasons"]:
        got[r["reason"]] += r["disconnections"]
    check(got == want, f"disconnect_reasons: duckdb {dict(got)}, stats {dict(want)}")
    check(len({r['month'] for r in results['disconnect_reasons']}) > 1, "disconnect_reasons spans several months")

    # temperature_by_device against stats' sensor table: rows of field `temperature`, readings
    # summed and extremes taken per advertiser address (empty on both sides when no shipped
    # plugin decodes a temperature in these captures).
    con.execute(sql["readings"].replace("fleet/*.jsonl", f"{jsonl}/*.jsonl"))
    results["temperature_by_device"] = rows("temperature_by_device")
    want = {}
    for s in stats:
        for r in s.get("sensors") or []:
            if r["field"] == "temperature" and r["count"] > 0:
                w = want.setdefault(r["address"], [0, r["min"], r["max"]])
                w[0] += r["count"]
                w[1], w[2] = min(w[1], r["min"]), max(w[2], r["max"])
    got = {r["device"]: [r["readings"], r["min_c"], r["max_c"]] for r in results["temperature_by_device"]}
    check(got == want, f"temperature_by_device differs from stats' sensors: "
          + str({k: (got.get(k), want.get(k)) for k in set(got) | set(want) if got.get(k) != want.get(k)}))

    # Parquet conversion of docs/fleet.md, read back with the same record count.
    copy = re.search(r"```sql\n(COPY .*?;)\n```", open(doc, encoding="utf-8").read(), re.S).group(1)
    con.execute(copy.replace("fleet/*.jsonl", f"{jsonl}/*.jsonl").replace("'fleet.parquet'", f"'{work}/fleet.parquet'"))
    n = con.execute(f"SELECT count(*) FROM '{work}/fleet.parquet'").fetchone()[0]
    check(n == total, f"parquet: {n} rows, {total} records")

    print(f"fleet: {len(files)} captures, {total} records; bluesift {t_bluesift:.1f} s, "
          f"duckdb (read + 3 queries) {t_duckdb:.2f} s; rows: "
          + ", ".join(f"{k} {len(v)}" for k, v in results.items()))
    for name, rs in results.items():
        for r in rs[:3]:
            print(f"  {name}: {r}")
    return check.close()


if __name__ == "__main__":
    sys.exit(main())
