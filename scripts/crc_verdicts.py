#!/usr/bin/env python3
"""Link-layer CRC verdicts of bluesift against tshark's, frame by frame.

    scripts/crc_verdicts.py [--bluesift BIN] [--tshark PATH] CAPTURE...

tshark's verdict per frame (btle): "bad" when it shows the expert info "Incorrect CRC"
(btle.crc.incorrect: it computed the CRC, or the sniffer's header says it failed), "unchecked"
when it says "CRC unchecked, not all data available" (a data PDU whose CRCInit it does not
know: tshark 4.0 takes it from no CONNECT_IND), else "ok". bluesift's: the `ll` object of
`dump --format jsonl` (crc_ok true/false, absent when it could not check). A frame agrees
when both have a verdict and it is the same; where tshark has none, bluesift's is counted as
"tshark silent". summary_compare.py runs this on every sniffer capture.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import summary_reference  # noqa: E402


def tshark_verdicts(path, tshark):
    fields = ["frame.number", "btle.access_address", "btle.crc", "btle.crc.incorrect", "nordic_ble.crcok",
              "btle_rf.flags.crc_checked", "btle_rf.flags.crc_valid", "_ws.expert.message"]
    args = [tshark, "-o", summary_reference.USER_DLT, "-r", path, "-T", "fields", "-E", "separator=|",
            "-E", "occurrence=a", "-E", "aggregator=;"]
    for f in fields:
        args += ["-e", f]
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = {}
    for line in p.stdout.decode("utf-8", "replace").splitlines():
        parts = line.split("|", len(fields) - 1)
        if len(parts) < len(fields) or not parts[0].isdigit() or not parts[1]:
            continue   # no btle layer
        fr, _, crc, incorrect, nordic_ok, checked, valid, expert = parts
        true = ("1", "True")
        if incorrect or nordic_ok in ("0", "False") or (checked in true and valid not in true):
            v = "bad"
        elif "CRC unchecked" in expert:
            v = "unchecked"
        elif crc or nordic_ok in true or checked in true:
            # Checked by the sniffer, or computed (advertising); a PDU tshark stopped
            # dissecting before its CRC has the sniffer's verdict only.
            v = "ok"
        else:
            continue
        out[int(fr)] = v
    return out


def bluesift_verdicts(path, bin_):
    p = subprocess.run([bin_, "dump", "--format", "jsonl", path], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = {}
    for line in p.stdout.decode("utf-8", "replace").splitlines():
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        ll = r.get("ll")
        if not ll or "crc" not in ll:
            continue
        ok = ll.get("crc_ok")
        out[r["frame"]] = "unchecked" if ok is None else "ok" if ok else "bad"
    return out


def compare(path, bin_, tshark=None):
    """(agree, disagreements, silent, counts): disagreements and silent rows are texts.
    CRC values are not compared: tshark takes the CRC after what it parsed, so an encrypted
    control PDU it reads as plaintext (crackle LE SC #170) moves it."""
    tshark = summary_reference.tshark_path(tshark)
    theirs, mine = tshark_verdicts(path, tshark), bluesift_verdicts(path, bin_)
    agree, disagree, silent = 0, [], []
    counts = {"tshark_bad": 0, "bluesift_bad": 0, "bluesift_bad_tshark_silent": 0}
    for fr in sorted(set(theirs) | set(mine)):
        t, m = theirs.get(fr), mine.get(fr)
        counts["tshark_bad"] += t == "bad"
        counts["bluesift_bad"] += m == "bad"
        if m is None:
            disagree.append("#%d: tshark's CRC verdict %s, none from bluesift" % (fr, t))
        elif t is None or t == "unchecked":
            if m != "unchecked":
                silent.append("#%d: tshark did not check the CRC (%s), bluesift: %s"
                              % (fr, "no CRCInit" if t else "it stopped dissecting before it", m))
                counts["bluesift_bad_tshark_silent"] += m == "bad"
        elif m == t:
            agree += 1
        else:
            disagree.append("#%d: CRC bluesift %s, tshark %s" % (fr, m, t))
    return agree, disagree, silent, counts


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("captures", nargs="+")
    ap.add_argument("--bluesift", default=os.path.join(os.path.dirname(HERE), ".build/debug/bluesift"))
    ap.add_argument("--tshark")
    a = ap.parse_args(argv)
    bad = 0
    for c in a.captures:
        agree, disagree, silent, counts = compare(c, a.bluesift, a.tshark)
        print("== %s: %d agree, %d disagree, %d tshark silent; bad CRCs: tshark %d, bluesift %d (%d where tshark is silent)"
              % (c, agree, len(disagree), len(silent), counts["tshark_bad"], counts["bluesift_bad"], counts["bluesift_bad_tshark_silent"]))
        for d in disagree[:20]:
            print("  " + d)
        bad += len(disagree)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
