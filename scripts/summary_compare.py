#!/usr/bin/env python3
"""Every summary claim of `bluesift stats` / `info` checked against tshark (summary_reference.py).

    scripts/summary_compare.py [--bluesift BIN] [--jobs N] [-v] [CAPTURE_OR_DIR ...]

Without arguments: every capture of Captures/, ../shared/captures/public (beside the
repository, or /work/shared) and crackle's test captures. For each capture it runs
summary_reference.py and `bluesift stats --format json`, `bluesift info`, and lists each
disagreement per claim kind:

  connections        count (stats, info) vs tshark's; per connection handle / access
                     address, start (Complete / CONNECT_IND) and end (Disconnection Complete /
                     LL_TERMINATE_IND) frames and end reason; a stats connection tshark has no
                     counterpart for is a phantom
  att_pairs          an `unanswered_request` problem for a request tshark pairs with its
                     response (btatt.request_in_frame, or an Error Response naming it)
  att_errors         Error Responses counted, discovery ends told apart
  rfcomm             per DLCI the service (tshark: SABM "Channel=N (Service)") and profile
  advertisers        devices[] vs distinct advertiser addresses
  failed_connections by outcome (failed / cancelled / never completed)
  span               earliest/latest record (stats first_us/last_us/duration_us, info's time
                     span), PacketLogger notes apart; steps back of 50 ms or more warned by
                     both stats (quality gaps) and info (warnings), as many as tshark counts
  crc                sniffer captures: every frame's link-layer CRC verdict (dump --format jsonl)
                     equal to tshark's "Incorrect CRC" (crc_verdicts.py; frames tshark cannot
                     check, data PDUs whose CRCInit it does not take from CONNECT_IND, are
                     "tshark silent"), and stats' crc_bad count equal to those verdicts
  problems           each remaining problems[] / quality[] entry tshark contradicts
                     (malformed on a frame tshark decodes cleanly, on a vendor handle; gaps
                     that are only clock jitter; Android advice on non-Android captures...)

Disagreements where tshark is the one that is wrong are listed in TSHARK_WRONG with the
reason, as the ATT conformance suite does, and counted apart ("tshark wrong").
Output: per capture the disagreements, then a table of agreements / disagreements per kind.
Exit status 1 when any claim disagrees (tshark-wrong and tshark-silent rows do not count).
"""
import json
import os
import re
import subprocess
import sys
from collections import OrderedDict, defaultdict
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import summary_reference  # noqa: E402
import crc_verdicts  # noqa: E402

KINDS = ["connections", "connection_detail", "att_pairs", "att_errors", "rfcomm", "advertisers",
         "failed_connections", "span", "crc", "problems"]

# (capture base name, kind, key) -> why tshark, not bluesift, is wrong. Filled from measured runs.
TSHARK_WRONG = {
    # Frame 713 is encrypted; tshark 4.0 has no key and shows "Control Opcode: Unknown (0x36)".
    # Decrypted with the STK of the captured Just Works pairing it is LL_TERMINATE_IND 0x13, as
    # crackle's own decrypted output (tests/01_crack/out/expected_output.pcap) shows at 713.
    (n, "connection_detail", "0xAF9A9394/end@516"): "frame 713 is an encrypted LL_TERMINATE_IND (0x13); crackle's decrypted output shows it"
    for n in ("crackle_pairing_and_ltk_exchange.pcap", "pairing_and_ltk_exchange.pcap")
}
TSHARK_WRONG.update({
    (n, "connection_detail", "0xAF9A9394/reason@516"): "frame 713 is an encrypted LL_TERMINATE_IND (0x13); crackle's decrypted output shows it"
    for n in ("crackle_pairing_and_ltk_exchange.pcap", "pairing_and_ltk_exchange.pcap")
})


def shared_dir():
    for d in [os.path.join(os.path.dirname(ROOT), "shared"), "/work/shared"]:
        if os.path.isdir(os.path.join(d, "captures")):
            return os.path.join(d, "captures")
    return None


def default_captures():
    out = []
    cap = os.path.join(ROOT, "Captures")
    out += [os.path.join(cap, f) for f in sorted(os.listdir(cap)) if not f.endswith((".json", ".md"))]
    sh = shared_dir()
    if sh:
        pub = os.path.join(sh, "public")
        if os.path.isdir(pub):
            out += [os.path.join(pub, f) for f in sorted(os.listdir(pub)) if not f.endswith((".md", ".txt"))]
        mesh = os.path.join(sh, "mesh")   # WHAD's over-the-air capture (the others: not sniffers)
        if os.path.isdir(mesh):
            out += [os.path.join(mesh, f) for f in sorted(os.listdir(mesh)) if f.endswith(".pcap")]
        cr = os.path.join(sh, "crackle")
        if os.path.isdir(cr):
            for d in sorted(os.listdir(cr)):
                p = os.path.join(cr, d)
                if os.path.isdir(p):
                    out += [os.path.join(p, f) for f in sorted(os.listdir(p)) if f.endswith((".pcap", ".pcapng"))]
    return out


def run(args):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def bluesift_stats(bin_, path):
    rc, out, err = run([bin_, "stats", "--format", "json", path])
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("{"):
            return json.loads(line), rc, err
    return None, rc, err


def bluesift_info(bin_, path):
    rc, out, err = run([bin_, "info", path])
    return out, rc, err


def hexnum(v):
    if v is None:
        return None
    if isinstance(v, int):
        return v
    try:
        return int(v, 16) if str(v).lower().startswith("0x") else int(v)
    except ValueError:
        return None


def origin(path):
    """What wrote the capture, for advice that must fit it."""
    with open(path, "rb") as f:
        head = f.read(16)
    if head.startswith(b"btsnoop"):
        return "btsnoop"
    if path.endswith(".pklg"):
        return "packetlogger"
    return "pcap"


class Result:
    def __init__(self, name):
        self.name = name
        self.agree = defaultdict(int)
        self.disagree = defaultdict(list)
        self.tshark_wrong = defaultdict(list)
        self.silent = defaultdict(list)   # claims tshark cannot check (it decodes nothing there)
        self.notes = []

    def check(self, kind, ok, key, text):
        if ok:
            self.agree[kind] += 1
            return
        why = TSHARK_WRONG.get((self.name, kind, key))
        if why:
            self.tshark_wrong[kind].append("%s  [tshark wrong: %s]" % (text, why))
        else:
            self.disagree[kind].append(text)


def compare(path, bin_, tshark=None):
    name = os.path.basename(path)
    res = Result(name)
    ref = summary_reference.reference(path, tshark)
    st, rc, err = bluesift_stats(bin_, path)
    info, irc, ierr = bluesift_info(bin_, path)
    if st is None:
        res.notes.append("bluesift stats gave no JSON (exit %d): %s" % (rc, err.strip().splitlines()[-1] if err.strip() else ""))
        return res, ref, st
    kind_of = origin(path)
    if kind_of == "pcap":
        # A pcap of HCI (H4) may be an Android log converted, or Linux: no verdict. A sniffer's
        # pcap (link layer) never comes from Android's snoop log.
        kind_of = "sniffer pcap" if ref["connections"]["kind"] == "sniffer" or "link layer" in st.get("format", "") \
            or "Sniffer" in st.get("format", "") else "hci pcap"

    # ---- connections ------------------------------------------------------------------
    rc_ = ref["connections"]
    sniffer = rc_["kind"] == "sniffer"
    sconns = st.get("connections", [])
    res.check("connections", len(sconns) == rc_["count"], "count",
              "connections: stats %d, tshark %d%s" % (len(sconns), rc_["count"],
                                                      (" (tshark: %s not a connection: no Complete, no Disconnection, L2CAP header is noise)"
                                                       % ", ".join(rc_["unowned_handles"])) if rc_["unowned_handles"] else ""))
    m = re.search(r"^connections: (\d+)", info, re.M)
    if m:
        res.check("connections", int(m.group(1)) == rc_["count"], "info_count",
                  "connections: info %s, tshark %d (stats %d)" % (m.group(1), rc_["count"], len(sconns)))
    if sniffer:
        # One connection per CONNECT_IND: several may share an access address (SweynTooth's
        # tools use 0x9A328370 every time), so they are matched in order per address.
        by_aa = defaultdict(list)
        for c in sconns:
            by_aa[hexnum(c.get("access_address"))].append(c)
        theirs_by_aa = defaultdict(list)
        for t in rc_["sniffer"]:
            theirs_by_aa[hexnum(t["access_address"])].append(t)
        for aa, ts in theirs_by_aa.items():
            mine = by_aa.get(aa, [])
            key = "0x%08X" % aa
            if len(mine) != len(ts):
                extra = ["#%d %s-%s" % (c["index"], c.get("start_frame", c.get("first_frame")), c.get("end_frame", "open"))
                         for c in mine]
                res.check("connection_detail", False, key + "/count",
                          "access address %s: stats %d connection(s) (%s), tshark %d (CONNECT_IND %s; LL_TERMINATE_IND %s; %s PDUs after it on the same link)"
                          % (key, len(mine), "; ".join(extra), len(ts), [t["connect_ind_frame"] for t in ts],
                             [t["end_frame"] for t in ts], [t["after_terminate"] for t in ts]))
            for t, c in zip(ts, mine):
                if t["connect_ind_frame"] is not None or c.get("start_frame") is not None:
                    res.check("connection_detail", c.get("start_frame") == t["connect_ind_frame"], key + "/start@%s" % t["first_frame"],
                              "access address %s: start frame stats %s, tshark CONNECT_IND %s" % (key, c.get("start_frame"), t["connect_ind_frame"]))
                res.check("connection_detail", c.get("end_frame") == t["end_frame"], key + "/end@%s" % t["first_frame"],
                          "access address %s: end frame stats %s, tshark LL_TERMINATE_IND %s" % (key, c.get("end_frame"), t["end_frame"]))
                if t["end_reason"] is not None or c.get("disconnect_reason") is not None:
                    res.check("connection_detail", c.get("disconnect_reason") == t["end_reason"], key + "/reason@%s" % t["first_frame"],
                              "access address %s: end reason stats %s, tshark %s" % (key, c.get("disconnect_reason"), t["end_reason"]))
    else:
        used = set()
        for t in [x for x in rc_["hci"] if x["origin"] != "unowned"]:
            h = hexnum(t["handle"])
            cands = [c for c in sconns if c["handle"] == h and c["index"] not in used]
            if t["start_frame"] is not None:
                exact = [c for c in cands if c.get("start_frame") == t["start_frame"]]
            else:
                exact = [c for c in cands if c.get("start_frame") is None]
            c = (exact or [c for c in cands if c.get("first_frame", 0) <= (t["end_frame"] or 1 << 40)
                           and (c.get("end_frame") or 1 << 40) >= t["first_frame"]] or [None])[0]
            key = "%s@%s" % (t["handle"], t["start_frame"] or t["first_frame"])
            if c is None:
                res.check("connection_detail", False, key, "handle %s (%s, frames %s-%s): tshark has it, stats none"
                          % (t["handle"], t["origin"], t["start_frame"] or t["first_frame"], t["end_frame"]))
                continue
            used.add(c["index"])
            res.check("connection_detail", c.get("start_frame") == t["start_frame"], key + "/start",
                      "handle %s: start frame stats %s (%s), tshark %s (%s)"
                      % (t["handle"], c.get("start_frame"), "before the capture" if c.get("start_frame") is None else "Complete",
                         t["start_frame"], "before the capture" if t["start_frame"] is None else "Complete"))
            res.check("connection_detail", c.get("end_frame") == t["end_frame"], key + "/end",
                      "handle %s: end frame stats %s, tshark Disconnection Complete %s" % (t["handle"], c.get("end_frame"), t["end_frame"]))
            if t["peer"] and c.get("peer"):
                res.check("connection_detail", c["peer"].lower() == t["peer"].lower(), key + "/peer",
                          "handle %s: peer stats %s, tshark %s" % (t["handle"], c["peer"], t["peer"]))
            if t["end_reason"] is not None:
                res.check("connection_detail", c.get("disconnect_reason") == t["end_reason"], key + "/reason",
                          "handle %s: end reason stats %s, tshark 0x%02X" % (t["handle"], c.get("disconnect_reason"), t["end_reason"]))
        for c in sconns:
            if c["index"] not in used:
                unowned = "0x%04X" % c["handle"] in rc_["unowned_handles"]
                res.check("connection_detail", False, "phantom/0x%04X" % c["handle"],
                          "stats connection #%d handle 0x%04X (frames %s-%s) has no tshark counterpart%s"
                          % (c["index"], c["handle"], c.get("start_frame") or c.get("first_frame"), c.get("end_frame"),
                             ": the handle carries vendor diagnostics (no Complete/Disconnection, L2CAP noise)" if unowned else ""))
    # info: one connection both "open at end" and "ended: …"
    for line in info.splitlines():
        if "open at end of capture" in line or ("started before the capture" in line and "ended" not in line):
            pass
    for i, line in enumerate(info.splitlines()):
        if "ended: supervision timeout" in line:
            # the connection line is the nearest line above starting with two spaces and a hex handle
            above = [l for l in info.splitlines()[:i] if re.match(r"^  0x[0-9A-F]{4}", l)]
            if above and "open at end of capture" in above[-1]:
                res.check("connections", False, "info_open_and_ended",
                          "info says \"open at end of capture\" and \"ended: supervision timeout\" for %s" % above[-1].split()[0])

    # ---- ATT pairs / unanswered ----------------------------------------------------------
    ra = ref["att"]
    answered = {q: r for q, r in ra["pair_list"]}
    crc_bad_answer = {q: r for q, r in ra.get("pairs_with_crc_bad_response", [])}
    tshark_unans = {u["frame"]: u for u in ra["unanswered"]}
    for p in st.get("problems", []):
        if p["kind"] != "unanswered_request":
            continue
        f = p["frame"]
        if f in answered:
            if f in crc_bad_answer and "CRC" in p["message"]:
                res.check("att_pairs", True, "unanswered/%d" % f, "")   # says the response was CRC-bad
            else:
                res.check("att_pairs", False, "unanswered/%d" % f,
                          "#%d unanswered_request (%s), tshark: answered by #%d%s" % (
                              f, p["message"], answered[f],
                              " (received with a bad CRC; the peer acknowledged it)" if f in crc_bad_answer else ""))
        elif f in tshark_unans:
            u = tshark_unans[f]
            note = ""
            if u.get("crc_bad_att_after"):
                note = " (a CRC-bad ATT PDU at #%d may be its response)" % u["crc_bad_att_after"]
            res.check("att_pairs", True, "unanswered/%d" % f, "")
            if note:
                res.notes.append("#%d unanswered_request agrees with tshark%s" % (f, note))
        else:
            res.check("att_pairs", False, "unanswered/%d" % f,
                      "#%d unanswered_request (%s): tshark has no ATT request there" % (f, p["message"]))
    # pairs agree: requests tshark answered that stats does not call unanswered
    flagged = {p["frame"] for p in st.get("problems", []) if p["kind"] == "unanswered_request"}
    res.agree["att_pairs"] += sum(1 for q in answered if q not in flagged)

    # ---- ATT errors ------------------------------------------------------------------------
    cnt = st.get("counts", {})
    res.check("att_errors", cnt.get("att_errors") == ra["errors_count"], "count",
              "ATT Error Responses: stats %s, tshark %d" % (cnt.get("att_errors"), ra["errors_count"]))
    if "discovery_ends" in cnt:
        res.check("att_errors", cnt.get("discovery_ends") == ra["errors_discovery_end"], "discovery",
                  "discovery-ending Attribute Not Found: stats %s, tshark %d" % (cnt.get("discovery_ends"), ra["errors_discovery_end"]))
    att_err_problems = [p for p in st.get("problems", []) if p["kind"] == "att_error"]
    real = ra["errors_count"] - ra["errors_discovery_end"]
    res.check("att_errors", len(att_err_problems) == real, "problems",
              "att_error problems: stats %d, tshark %d errors that are not discovery ends" % (len(att_err_problems), real))

    # ---- RFCOMM --------------------------------------------------------------------------
    rows = [r for r in st.get("classic", []) if r.get("profile") == "RFCOMM" and r.get("dlci")]
    for t in ref["rfcomm"]:
        mine = [r for r in rows if r["dlci"] == t["dlci"] and r["first_frame"] <= t["last_frame"] and r["last_frame"] >= t["first_frame"]]
        key = "dlci%d" % t["dlci"]
        if not mine:
            res.check("rfcomm", False, key, "DLCI %d (channel %d): tshark has it, stats no RFCOMM row" % (t["dlci"], t["channel"]))
            continue
        svc = mine[0].get("service")
        if t.get("sdp_service") and t.get("server_side"):
            # the record of the side that serves the channel (the DLCI's direction bit)
            res.check("rfcomm", (svc or "").lower() == t["sdp_service"].lower(), key + "/sdp_service",
                      "DLCI %d (channel %d, served by the %s) service: stats \"%s\", that side's SDP record (#%d) \"%s\""
                      % (t["dlci"], t["channel"], t["server_side"], svc, t["sdp_frame"], t["sdp_service"]))
        if t["service"] and t["service"] not in ("Unknown",) and not t["service"].startswith("UUID128"):
            res.check("rfcomm", (svc or "").lower() == t["service"].lower(), key + "/service",
                      "DLCI %d (channel %d) service: stats \"%s\", tshark \"%s\"" % (t["dlci"], t["channel"], svc, t["service"]))
        for prof in t["profiles"]:
            # info prints "profiles: HFP (HF), …" per connection
            ok = re.search(r"profiles:.*\b%s\b" % prof, info) is not None
            wrong = re.findall(r"profiles:.*", info)
            res.check("rfcomm", ok, key + "/profile",
                      "DLCI %d profile: info \"%s\", tshark %s" % (t["dlci"], "; ".join(wrong) or "-", prof))

    # ---- advertisers --------------------------------------------------------------------
    # devices[] holds the advertisers and the connected peers that never advertised
    # (advertising_reports 0, issue 27 #8f): the first are tshark's advertisers, and every
    # peer tshark names must be among them all.
    devs = st.get("devices", [])
    ndev = sum(1 for d in devs if d.get("advertising_reports", 0) > 0) + st.get("devices_not_listed", 0)
    res.check("advertisers", ndev == ref["advertisers"]["count"], "count",
              "advertisers: stats %d, tshark %d distinct advertisers" % (ndev, ref["advertisers"]["count"]))
    known = {d["address"] for d in devs}
    missing = [p for p in ref["peers"] if p not in known and p != "00:00:00:00:00:00"]
    if ref["peers"]:
        res.check("advertisers", not missing, "peers",
                  "devices: %d connected peer(s) tshark names are not devices (%s)" % (len(missing), ", ".join(missing[:4])))

    # ---- failed connections -----------------------------------------------------------------
    mine = defaultdict(int)
    for f in st.get("failed_connections", []):
        mine[f["outcome"]] += 1
    theirs = ref["failed_connections"]["by_outcome"]
    for o in sorted(set(mine) | set(theirs)):
        res.check("failed_connections", mine.get(o, 0) == theirs.get(o, 0), o,
                  "failed connection attempts \"%s\": stats %d, tshark %d" % (o, mine.get(o, 0), theirs.get(o, 0)))
    if not mine and not theirs:
        res.agree["failed_connections"] += 1

    # ---- span ------------------------------------------------------------------------------
    sp = ref["span"]
    if "first_s" in sp:
        dur = st.get("duration_us", 0) / 1e6
        # The span is earliest -> latest record (issue 36 #5: a file's last records may go back
        # in time). PacketLogger notes dated more than a minute before the HCI records are not
        # the session (issue 27 #10): the span to compare is then the HCI records'.
        full = round(sp["max_s"] - sp["min_s"], 6)
        notes_apart = "hci_duration_s" in sp and full - sp["hci_duration_s"] > 60
        want = sp["hci_duration_s"] if notes_apart else full
        # (bluesift counts notes within a minute of the traffic as the session's.)
        res.check("span", abs(dur - want) < (60 if notes_apart else 0.001), "duration",
                  "span: stats %.3f s, tshark %.3f s (earliest to latest record)" % (dur, want))
        if not notes_apart:
            for key, t in (("first_us", sp["min_s"]), ("last_us", sp["max_s"])):
                res.check("span", abs(st.get(key, 0) / 1e6 - t) < 0.001, key,
                          "span: stats %s %.6f, tshark's %s record %.6f" % (key, st.get(key, 0) / 1e6, "earliest" if key == "first_us" else "latest", t))
            m = re.search(r"^time span: .*\((.*)\)$", info, re.M)
            res.check("span", m is not None and m.group(1) == human_span(st.get("duration_us", 0)), "info",
                      "span: info \"%s\", stats %s" % (m.group(1) if m else "-", human_span(st.get("duration_us", 0))))
        # Steps back of 50 ms or more: both commands say so, as many as tshark counts.
        n = sp.get("backward_steps_50ms", 0)
        gaps = [q for q in st.get("quality", []) if q["code"] == "gaps"]
        mine = int(re.match(r"(\d+)", gaps[0]["message"]).group(1)) if gaps else 0
        res.check("span", mine == n, "backwards_stats", "span: stats warns of %d step(s) back of 50 ms or more, tshark counts %d" % (mine, n))
        m = re.search(r"^warnings: .*?(\d+) timestamp\(s\) going backwards", info, re.M)
        res.check("span", (int(m.group(1)) if m else 0) == n, "backwards_info",
                  "span: info warns of %s step(s) back of 50 ms or more, tshark counts %d" % (m.group(1) if m else "no", n))
        if "hci_duration_s" in sp and abs(sp["hci_duration_s"] - dur) > 60:
            res.check("span", False, "notes",
                      "span: stats %.0f s (%s), HCI records span %.3f s; PacketLogger records of other types (notes, config) %s stretch it"
                      % (dur, human(dur), sp["hci_duration_s"], dict(sp.get("other_records") or {})))
        elif "hci_duration_s" in sp:
            res.agree["span"] += 1

    # ---- CRC verdicts (sniffers) ----------------------------------------------------------
    if sniffer or kind_of == "sniffer pcap":
        agree, disagree, silent, counts = crc_verdicts.compare(path, bin_, tshark)
        res.agree["crc"] += agree
        for d in disagree:
            res.check("crc", False, "frame/" + d.split(":")[0], d)
        if silent:
            bad = [x.split(":")[0] for x in silent if x.endswith(": bad")]
            res.silent["crc"].append("%d frames tshark did not check (data PDUs: it takes no CRCInit from CONNECT_IND); bluesift: %d ok, %d bad%s"
                                     % (len(silent), len(silent) - len(bad), len(bad), " (%s)" % ", ".join(bad[:8]) if bad else ""))
        mine = st.get("counts", {}).get("crc_bad")
        res.check("crc", mine == counts["bluesift_bad"] and counts["bluesift_bad"] - counts["bluesift_bad_tshark_silent"] == counts["tshark_bad"],
                  "count", "bad CRCs: stats %s, tshark %d (+%d tshark did not check)" % (mine, counts["tshark_bad"], counts["bluesift_bad_tshark_silent"]))

    # ---- problems / quality that tshark contradicts -----------------------------------------------
    tmal = set(ref["malformed"]["frames"])
    unowned = set(hexnum(h) for h in rc_["unowned_handles"])
    unowned_conns = {c["index"] for c in sconns if c["handle"] in unowned}
    unowned_frames = set(rc_.get("unowned_frames", []))
    vendor_returns = set(ref.get("hci_vendor_complete_without_status", []))
    for p in st.get("problems", []):
        k = p["kind"]
        if k == "malformed" or k == "l2cap_reassembly":
            if p.get("connection") in unowned_conns or p["frame"] in unowned_frames:
                res.check("problems", False, "%s/%d" % (k, p["frame"]),
                          "#%d %s (%s): on a vendor diagnostic handle (%s), not a link" % (p["frame"], k, p["message"], ", ".join(rc_["unowned_handles"])))
            else:
                res.check("problems", True, "", "")
        elif k == "hci_command_failed" and p["frame"] in vendor_returns:
            res.silent["problems"].append("#%d hci_command_failed (%s): tshark does not decode the return parameters of vendor commands"
                                          % (p["frame"], p["message"]))
        elif k == "hci_command_failed":
            res.check("problems", p["frame"] in set(ref["hci_failed_commands"]), "hci/%d" % p["frame"],
                      "#%d hci_command_failed: tshark shows no error status there" % p["frame"])
        elif k == "smp_pairing_failed":
            res.check("problems", p["frame"] in set(ref["smp_pairing_failed"]), "smp/%d" % p["frame"],
                      "#%d smp_pairing_failed: tshark shows no Pairing Failed there" % p["frame"])
        elif k == "att_error":
            errs = {e["frame"]: e for e in ra["errors"]}
            e = errs.get(p["frame"])
            res.check("problems", e is not None and not e["discovery_end"], "att_error/%d" % p["frame"],
                      "#%d att_error: tshark %s" % (p["frame"], "has no Error Response there" if e is None else "discovery-ending Attribute Not Found"))
        elif k == "unanswered_request":
            u = tshark_unans.get(p["frame"])
            if u is not None and p.get("connection") in unowned_conns:
                res.check("problems", False, "unanswered_vendor/%d" % p["frame"],
                          "#%d unanswered_request on vendor diagnostic handle (%s): not an ATT request" % (p["frame"], p["message"]))
    vchars = [c for c in st.get("characteristics", []) if c.get("connection") in unowned_conns]
    if vchars:
        res.check("problems", False, "vendor_chars",
                  "%d characteristics[] rows on the vendor diagnostic handle (%s): handles %s" % (
                      len(vchars), ", ".join(rc_["unowned_handles"]), ", ".join("0x%04X" % c["handle"] for c in vchars[:6])))
    for q in st.get("quality", []):
        code, msg, adv = q["code"], q["message"], q.get("advice", "")
        if "Android" in adv and kind_of in ("packetlogger", "sniffer pcap"):
            res.check("problems", False, "advice/" + code,
                      "quality %s advises \"%s\" on a %s capture" % (code, adv[:70], kind_of))
        if code == "gaps":
            # Timestamps stepping back by a few ms are clock jitter (PacketLogger's ms clock,
            # btmon's interleaved sources), not a wrapped buffer: that jumps back by its span.
            if "going backwards" in msg and sp.get("max_backward_s", 1) < 0.05:
                res.check("problems", False, "gaps",
                          "quality gaps \"%s\": tshark: %d backward steps, the largest %.1f ms (clock jitter, no record missing)"
                          % (msg[:110], sp["backward_steps"], sp["max_backward_s"] * 1000))
            else:
                res.check("problems", True, "", "")
        if code == "starts_mid_connection":
            n = int(re.search(r"during (\d+)", msg).group(1))
            t = sum(1 for c in rc_["hci"] if c["origin"] == "before_capture")
            res.check("problems", n == t, "mid",
                      "quality starts_mid_connection: stats %d connection(s), tshark %d (%s)"
                      % (n, t, "unowned vendor handle " + ", ".join(rc_["unowned_handles"]) if rc_["unowned_handles"] else "handles with traffic and no Complete"))
        if code == "sniffer_missed_connect":
            n = int(re.search(r"CONNECT_IND of (\d+)", msg).group(1))
            t = sum(1 for c in rc_["sniffer"] if c["connect_ind_frame"] is None)
            res.check("problems", n == t, "missed", "quality sniffer_missed_connect: stats %d, tshark %d connections without CONNECT_IND" % (n, t))
    # SMP key size outside 7..16 (Vol 3 Part H 3.5.1): must be a problem
    for s in ref["smp"]:
        if s["invalid"]:
            flagged = any(p["frame"] == s["frame"] for p in st.get("problems", []))
            res.check("problems", flagged, "smp_key/%d" % s["frame"],
                      "#%d SMP %s Maximum Encryption Key Size %d (valid 7-16): no problem reported" % (s["frame"], s["opcode"], s["max_key_size"]))
    return res, ref, st


def human_span(us):
    """A duration as `TimeFormat.duration` writes it (info's time span)."""
    if us < 60_000_000:
        ms = int(us / 1000 + 0.5) if us >= 0 else -int(-us / 1000 + 0.5)
        return "%d.%03d s" % (ms // 1000, ms % 1000)
    total = us // 1_000_000
    if total < 3600:
        return "%d min %02d s" % (total // 60, total % 60)
    return "%d h %02d min" % (total // 3600, total // 60 % 60)


def human(s):
    s = int(s)
    if s >= 3600:
        return "%d h %d min" % (s // 3600, s % 3600 // 60)
    if s >= 60:
        return "%d min %d s" % (s // 60, s % 60)
    return "%d s" % s


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--bluesift", default=os.environ.get("BLUESIFT") or next(
        (p for p in [os.path.join(ROOT, ".build/debug/bluesift"), "/work/bin-main/bluesift"] if os.access(p, os.X_OK)), "bluesift"))
    ap.add_argument("--tshark")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args(argv)
    paths = []
    for p in a.paths or default_captures():
        if os.path.isdir(p):
            paths += [os.path.join(p, f) for f in sorted(os.listdir(p)) if not f.endswith((".md", ".txt", ".json"))]
        else:
            paths.append(p)
    with ThreadPoolExecutor(max_workers=a.jobs) as ex:
        results = list(ex.map(lambda p: (p, compare(p, a.bluesift, a.tshark)), paths))
    total_a, total_d, total_w, total_s = defaultdict(int), defaultdict(int), defaultdict(int), defaultdict(int)
    files_d = defaultdict(set)
    ver = run([a.bluesift, "--version"])[1].strip()
    print("summary conformance: bluesift %s (%s) vs %s" % (os.path.basename(a.bluesift), ver,
          run([summary_reference.tshark_path(a.tshark), "--version"])[1].splitlines()[0]))
    print()
    for p, (res, ref, st) in results:
        ap_ = os.path.abspath(p)
        if ap_.startswith(ROOT + os.sep):
            rel = os.path.relpath(ap_, ROOT)
        elif shared_dir() and ap_.startswith(os.path.dirname(shared_dir()) + os.sep):
            rel = "../" + os.path.relpath(ap_, os.path.dirname(os.path.dirname(shared_dir())))
        else:
            rel = p
        nd = sum(len(v) for v in res.disagree.values())
        na = sum(res.agree.values())
        extra = ""
        if res.tshark_wrong:
            extra += ", %d tshark wrong" % sum(len(v) for v in res.tshark_wrong.values())
        if res.silent:
            extra += ", %d tshark silent" % sum(len(v) for v in res.silent.values())
        print("== %s: %d agree, %d disagree%s" % (rel, na, nd, extra))
        for k in KINDS:
            total_a[k] += res.agree.get(k, 0)
            total_d[k] += len(res.disagree.get(k, []))
            total_w[k] += len(res.tshark_wrong.get(k, []))
            total_s[k] += len(res.silent.get(k, []))
            if res.disagree.get(k):
                files_d[k].add(res.name)
            for line in res.disagree.get(k, [])[: (10**6 if a.verbose else 12)]:
                print("  %-18s %s" % (k, line))
            if not a.verbose and len(res.disagree.get(k, [])) > 12:
                print("  %-18s … %d more (-v lists all)" % (k, len(res.disagree[k]) - 12))
            for line in res.tshark_wrong.get(k, []):
                print("  %-18s %s" % (k, line))
            for line in res.silent.get(k, []):
                print("  %-18s %s" % (k, "[tshark silent] " + line))
        for n in res.notes:
            print("  %-18s %s" % ("note", n))
    print()
    print("%-20s %8s %10s %13s %14s %17s" % ("claim kind", "agree", "disagree", "tshark wrong", "tshark silent", "files disagreeing"))
    for k in KINDS:
        print("%-20s %8d %10d %13d %14d %17d" % (k, total_a[k], total_d[k], total_w[k], total_s[k], len(files_d[k])))
    print("%-20s %8d %10d %13d %14d %17d" % ("total", sum(total_a.values()), sum(total_d.values()), sum(total_w.values()),
                                             sum(total_s.values()), len(set().union(*files_d.values())) if files_d else 0))
    print("captures: %d" % len(results))
    return 1 if sum(total_d.values()) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
