#!/usr/bin/env python3
"""The summary facts tshark states about one capture, independently of bluesift, as JSON.

    scripts/summary_reference.py CAPTURE [--tshark PATH] [--pretty]

One `tshark -r CAPTURE -T fields` pass (no display filter, so frame numbers are tshark's
and equal bluesift's), read the way Tests/BluesiftConformanceTests/TsharkConformanceTests
reads it: `-E separator=|`, several occurrences of a field joined by ",", the first value
taken where one is expected, hex fields as `0x…`. What comes out (all frame numbers 1-based):

  span          first/last record time, the earliest/latest (min_s/max_s) and the steps back
                of 50 ms or more (backward_steps_50ms); for PacketLogger also the span of the HCI records
                (types 0x00-0x09) apart from note/config records (0xfb-0xfd...), and how
                often, and by how much at most, time steps backwards (clock jitter)
  connections   HCI: one per (handle, Connection Complete ... Disconnection Complete);
                handles with traffic and no Complete are "before_capture" when tshark decodes
                a protocol above L2CAP on them (ATT, SMP, signalling, RFCOMM...), else
                "unowned" (vendor diagnostics such as Android's 0x0EDC, and any reserved
                handle, 0x0F00 and above).
                Sniffer: one per access address (CONNECT_IND or a CRC-valid data PDU),
                ended by LL_TERMINATE_IND (the acknowledgement after it stays in the same
                connection).
  att           request -> response pairs (btatt.response_in_frame / request_in_frame),
                requests and indications tshark found no answer for (with whether the
                capture holds a CRC-bad ATT frame after it on that link, for sniffers),
                error responses (discovery-ending Attribute Not Found told apart)
  rfcomm        per (link, DLCI): channel, direction, the service tshark names on SABM
                ("Channel=2 (Handsfree)"), the profile protocol tshark dissects (bthfp...),
                the side that opened the multiplexer, the side that serves the channel (the
                DLCI's direction bit) and the service class of that side's SDP record
  sdp           SDP responses: who sent them, RFCOMM channels and service class UUIDs
  advertisers   distinct advertiser addresses (LE Advertising Reports, ADV_* PDUs)
  peers         addresses of connected peers (Connection Complete, CONNECT_IND)
  failed_connections  Create Connection / LE (Extended) Create Connection followed by a
                failing Connection Complete, a Command Status error, or a Create Connection
                Cancel (outcome "cancelled")
  smp           Pairing Request/Response key sizes (max_enc_key_size), flagged when < 7 or > 16
  connect_ind   CONNECT_IND parameters in ms (interval x 1.25 ms, timeout x 10 ms)
  malformed     frames tshark marks malformed (_ws.malformed), with the protocols

tshark's known errors are not repaired here; summary_compare.py explains them.
"""
import json
import os
import subprocess
import sys
from collections import OrderedDict, defaultdict

FIELDS = [
    "frame.number", "frame.time_epoch", "frame.protocols", "packetlogger.type",
    "bthci_cmd.opcode", "bthci_cmd.bd_addr",
    "bthci_evt.code", "bthci_evt.le_meta_subevent", "bthci_evt.status", "bthci_evt.opcode",
    "bthci_evt.connection_handle", "bthci_evt.reason", "bthci_evt.bd_addr", "bthci_evt.link_type",
    "bthci_acl.chandle", "bthci_sco.chandle",
    "btatt.opcode", "btatt.handle", "btatt.error_code", "btatt.req_opcode_in_error",
    "btatt.response_in_frame", "btatt.request_in_frame",
    "btle.access_address", "btle.advertising_header.pdu_type", "btle.advertising_address",
    "btle.initiator_address", "btle.link_layer_data.access_address",
    "btle.link_layer_data.interval", "btle.link_layer_data.timeout",
    "btle.control_opcode", "btle.control.error_code", "btle.crc.incorrect",
    "nordic_ble.crcok", "btle_rf.flags.crc_checked", "btle_rf.flags.crc_valid", "btle.data_header.llid", "btle.data_header.length",
    "btle.master_bd_addr", "btle.slave_bd_addr",
    "btl2cap.cid", "btrfcomm.dlci", "btrfcomm.channel", "btrfcomm.direction", "btrfcomm.frame_type",
    "btsmp.opcode", "btsmp.max_enc_key_size", "_ws.malformed",
    "hci_h4.direction", "btsdp.pdu", "btsdp.protocol.channel", "btsdp.data_element.value.uuid_16",
    "_ws.col.Info",   # last: may contain the separator
]
IX = {f: i for i, f in enumerate(FIELDS)}

ADV_AA = 0x8E89BED6
USER_DLT = 'uat:user_dlts:"User 0 (DLT=147)","btle","0","","0",""'
# ATT requests (and the indication) that expect an answer, Core Vol 3 Part F 3.4.
ATT_REQUESTS = {0x02, 0x04, 0x06, 0x08, 0x0A, 0x0C, 0x0E, 0x10, 0x12, 0x16, 0x18, 0x1D, 0x20}
ATT_DISCOVERY = {0x04, 0x06, 0x08, 0x10}
ATT_NAMES = {0x02: "Exchange MTU Request", 0x04: "Find Information Request", 0x06: "Find By Type Value Request",
             0x08: "Read By Type Request", 0x0A: "Read Request", 0x0C: "Read Blob Request",
             0x0E: "Read Multiple Request", 0x10: "Read By Group Type Request", 0x12: "Write Request",
             0x16: "Prepare Write Request", 0x18: "Execute Write Request", 0x1D: "Handle Value Indication",
             0x20: "Read Multiple Variable Request"}
# Protocols above L2CAP that show a handle carries a real link (frame.protocols names).
LINK_PROTOCOLS = {"btatt", "btsmp", "btrfcomm", "btsdp", "btavdtp", "btavctp", "bthfp", "bthsp",
                  "btobex", "btbnep", "bthid", "btspp", "btsap", "btgatt", "btl2cap_signalling"}
# frame.protocols entries that name what runs on an RFCOMM channel.
RFCOMM_PROFILES = {"bthfp": "HFP", "bthsp": "HSP", "btspp": "SPP", "btsap": "SAP", "btobex": "OBEX",
                   "btdun": "DUN", "btpbap": "PBAP", "btmap": "MAP", "ppp": "DUN"}
# Service class UUIDs an RFCOMM server record names (Assigned Numbers, Service Class).
SERVICE_CLASSES = {0x1101: ("Serial Port", "SPP"), 0x1103: ("Dialup Networking", "DUN"),
                   0x1105: ("OBEX Object Push", "OPP"), 0x1106: ("OBEX File Transfer", "FTP"),
                   0x1108: ("Headset", "HSP"), 0x1112: ("Headset Audio Gateway", "HSP"),
                   0x1131: ("Headset - HS", "HSP"), 0x111E: ("Handsfree", "HFP"),
                   0x111F: ("Handsfree Audio Gateway", "HFP"), 0x112D: ("SIM Access", "SAP"),
                   0x112F: ("Phonebook Access - PSE", "PBAP"), 0x1132: ("Message Access Server", "MAP")}
NOT_A_SERVICE = {0x0001, 0x0003, 0x0100, 0x0017, 0x0019, 0x000F, 0x1002, 0x1203, 0x1204}
CREATE_OPCODES = {0x0405: "Create Connection", 0x200D: "LE Create Connection",
                  0x2043: "LE Extended Create Connection"}
CANCEL_OPCODES = {0x0408: 0x0405, 0x200E: 0x200D}   # cancel -> what it cancels (LE cancel covers 0x2043 too)
HCI_ERRORS = {0x02: "Unknown Connection Identifier", 0x04: "Page Timeout", 0x05: "Authentication Failure",
              0x08: "Connection Timeout", 0x09: "Connection Limit Exceeded", 0x0B: "Connection Already Exists",
              0x0C: "Command Disallowed", 0x0D: "Connection Rejected due to Limited Resources",
              0x13: "Remote User Terminated Connection", 0x14: "Remote Device Terminated due to Low Resources",
              0x15: "Remote Device Terminated due to Power Off", 0x16: "Connection Terminated By Local Host",
              0x1A: "Unsupported Remote Feature", 0x1F: "Unspecified Error", 0x22: "LL Response Timeout",
              0x28: "Instant Passed", 0x3B: "Unacceptable Connection Parameters",
              0x3D: "Connection Terminated due to MIC Failure", 0x3E: "Connection Failed to be Established",
              0x3F: "MAC Connection Failed"}


def tshark_path(given=None):
    for p in [given, os.environ.get("TSHARK"), "/usr/bin/tshark", "/usr/local/bin/tshark"]:
        if p and os.access(p, os.X_OK):
            return p
    sys.exit("summary_reference: tshark not found (apt-get install -y tshark)")


def run_fields(path, tshark):
    # -2: two passes, so btatt.response_in_frame is known on the request. The user DLT
    # mapping lets tshark read PPI-wrapped DLT_USER0 Ubertooth captures (crackle's) as btle.
    args = [tshark, "-2", "-o", USER_DLT, "-r", path, "-T", "fields",
            "-E", "separator=|", "-E", "occurrence=a", "-E", "aggregator=,"]
    for f in FIELDS:
        args += ["-e", f]
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    rows = []
    for line in p.stdout.decode("utf-8", "replace").split("\n"):
        if not line:
            continue
        parts = line.split("|", len(FIELDS) - 1)
        if len(parts) < len(FIELDS) or not parts[0].isdigit():
            continue
        rows.append(parts)
    err = "\n".join(l for l in p.stderr.decode("utf-8", "replace").splitlines() if "Running as user" not in l)
    return rows, p.returncode, err.strip()


def values(row, field):
    v = row[IX[field]]
    return [x for x in v.split(",") if x != ""] if v else []


def first(row, field):
    v = values(row, field)
    return v[0] if v else None


def num(s):
    if s is None or s == "":
        return None
    try:
        return int(s, 16) if s.startswith("0x") else int(s)
    except ValueError:
        return None


def first_num(row, field):
    return num(first(row, field))


def hexs(v, width=4):
    return None if v is None else "0x%0*X" % (width, v)


def reference(path, tshark=None):
    tshark = tshark_path(tshark)
    rows, rc, err = run_fields(path, tshark)
    out = OrderedDict()
    out["file"] = path
    out["tshark_exit"] = rc
    if err:
        out["tshark_stderr"] = err.splitlines()[-1][:300]
    out["records"] = len(rows)

    # ---- span -------------------------------------------------------------------------
    times = [(int(r[0]), float(r[IX["frame.time_epoch"]])) for r in rows if r[IX["frame.time_epoch"]]]
    span = OrderedDict()
    if times:
        span["first_frame"], span["first_s"] = times[0]
        span["last_frame"], span["last_s"] = times[-1]
        span["duration_s"] = round(times[-1][1] - times[0][1], 6)
        span["min_s"] = min(t for _, t in times)
        span["max_s"] = max(t for _, t in times)
    pl = [(int(r[0]), float(r[IX["frame.time_epoch"]]), first_num(r, "packetlogger.type")) for r in rows
          if r[IX["packetlogger.type"]]]
    if pl:
        hci = [(f, t) for f, t, ty in pl if ty is not None and ty <= 0x09]
        notes = [(f, t, ty) for f, t, ty in pl if ty is None or ty > 0x09]
        if hci:
            span["hci_first_frame"], span["hci_first_s"] = hci[0]
            span["hci_last_frame"], span["hci_last_s"] = hci[-1]
            span["hci_duration_s"] = round(hci[-1][1] - hci[0][1], 6)
        span["other_records"] = OrderedDict(sorted(((("0x%02X" % ty) if ty is not None else "?"), sum(1 for _, _, t in notes if t == ty))
                                                   for ty in {t for _, _, t in notes}))
        early = [(f, t, ty) for f, t, ty in notes if hci and t < hci[0][1] - 60]
        if early:
            span["notes_before_hci_s"] = round(hci[0][1] - min(t for _, t, _ in early), 3)
            span["notes_before_hci_first_frame"] = early[0][0]
    back = [(times[i][0], times[i - 1][1] - times[i][1]) for i in range(1, len(times)) if times[i][1] < times[i - 1][1]]
    span["backward_steps"] = len(back)
    span["backward_steps_50ms"] = sum(1 for _, d in back if d >= 0.05 - 1e-9)
    if back:
        worst = max(back, key=lambda x: x[1])
        span["max_backward_s"] = round(worst[1], 6)
        span["max_backward_frame"] = worst[0]
    out["span"] = span

    # ---- HCI connections and failed attempts ------------------------------------------
    conns = []             # dicts
    open_by_handle = {}    # handle -> conn dict
    seen_handles = OrderedDict()   # handle -> {first, last, protocols:set, frames}
    pending_create = []    # [frame, opcode, peer, cancelled_frame]
    failed = []
    peers = set()
    advertisers = OrderedDict()
    sniffer = False
    aa_conns = OrderedDict()   # aa -> dict
    aa_terminated = {}
    att_frames = {}        # frame -> (opcode, handle, link)
    att_requests = []      # requests and indications (CRC-valid)
    att_answered = {}      # request frame -> (response frame, how paired)
    att_errors = []
    crc_bad_att = defaultdict(list)   # link -> frames of ATT PDUs tshark saw with bad CRC
    rfcomm = OrderedDict()
    sdp = []
    served = {}            # (link, serving side, channel) -> (service class UUID, frame)
    mux_initiator = {}     # link -> side that sent SABM on DLCI 0
    sdp_services = []
    smp = []
    connect_ind = []
    malformed = []
    hci_failed = []        # Command Complete / Command Status frames with an error status
    vendor_returns = []    # Command Complete of vendor commands: tshark shows no status
    smp_failed = []        # SMP Pairing Failed frames

    def link_of(r):
        h = first_num(r, "bthci_acl.chandle")
        if h is not None:
            return "h%s" % hexs(h)
        aa = first_num(r, "btle.access_address")
        if aa is not None and aa != ADV_AA:
            return "aa0x%08X" % aa
        return None

    def sender(r):
        """'host' or 'remote' for HCI captures (H4 direction, PacketLogger type), else None."""
        d = first_num(r, "hci_h4.direction")
        if d is not None:
            return "host" if d == 0 else "remote"
        t = first_num(r, "packetlogger.type")
        if t in (0x02, 0x03):
            return "host" if t == 0x02 else "remote"
        return None

    def crc_bad(r):
        if r[IX["btle.crc.incorrect"]]:
            return True
        ok = first(r, "nordic_ble.crcok")
        if ok is not None and ok in ("0", "False"):
            return True
        # DLT 256: crc_valid means something only when the sniffer says it checked the CRC.
        checked = first(r, "btle_rf.flags.crc_checked")
        v = first(r, "btle_rf.flags.crc_valid")
        return checked in ("1", "True") and v in ("0", "False")

    for r in rows:
        fr = int(r[0])
        t = float(r[IX["frame.time_epoch"]] or 0)
        protos = set(r[IX["frame.protocols"]].split(":"))
        info = r[IX["_ws.col.Info"]]
        if r[IX["_ws.malformed"]] or "_ws.malformed" in protos:
            malformed.append({"frame": fr, "protocols": r[IX["frame.protocols"]]})
        code = first_num(r, "bthci_evt.code")
        # --- commands: connection attempts
        cop = first_num(r, "bthci_cmd.opcode")
        if cop in CREATE_OPCODES:
            pending_create.append({"frame": fr, "us": int(t * 1e6), "opcode": cop, "command": CREATE_OPCODES[cop],
                                   "peer": first(r, "bthci_cmd.bd_addr"), "cancel_frame": None})
        if cop in CANCEL_OPCODES:
            for p in reversed(pending_create):
                if p["opcode"] == CANCEL_OPCODES[cop] or (cop == 0x200E and p["opcode"] == 0x2043):
                    p["cancel_frame"] = fr
                    break
        # --- events
        if code is not None:
            sub = first_num(r, "bthci_evt.le_meta_subevent")
            status = first_num(r, "bthci_evt.status")
            handle = first_num(r, "bthci_evt.connection_handle")
            complete = (code in (0x03, 0x2C)) or (code == 0x3E and sub in (0x01, 0x0A, 0x29))
            if code in (0x0E, 0x0F) and status and first_num(r, "bthci_evt.opcode"):
                hci_failed.append(fr)
            if code == 0x0E and status is None and (first_num(r, "bthci_evt.opcode") or 0) >= 0xFC00:
                vendor_returns.append(fr)   # tshark does not decode vendor return parameters
            if code == 0x0F:   # Command Status
                eop = first_num(r, "bthci_evt.opcode")
                if eop in CREATE_OPCODES and status:
                    for p in reversed(pending_create):
                        if p["opcode"] == eop:
                            pending_create.remove(p)
                            failed.append({"frame": fr, "us": int(t * 1e6), "command_frame": p["frame"],
                                           "command": p["command"], "peer": p["peer"], "outcome": "failed",
                                           "status": status, "status_name": HCI_ERRORS.get(status)})
                            break
            if complete:
                kind = "SCO" if code == 0x2C or (code == 0x03 and first_num(r, "bthci_evt.link_type") in (0, 2)) else (
                    "ACL" if code == 0x03 else "LE")
                peer = first(r, "bthci_evt.bd_addr")
                match = None
                if kind != "SCO":
                    for p in pending_create:
                        if (kind == "LE") == (p["opcode"] != 0x0405):
                            match = p
                            break
                if status:
                    if match is not None:
                        pending_create.remove(match)
                    failed.append({"frame": fr, "us": int(t * 1e6), "command_frame": match["frame"] if match else None,
                                   "command": match["command"] if match else None, "peer": peer or (match or {}).get("peer"),
                                   "outcome": "cancelled" if (match and match["cancel_frame"]) or status == 0x02 else "failed",
                                   "cancel_frame": match["cancel_frame"] if match else None,
                                   "status": status, "status_name": HCI_ERRORS.get(status)})
                else:
                    if match is not None:
                        pending_create.remove(match)
                    if peer:
                        peers.add(peer)
                    c = OrderedDict([("handle", hexs(handle)), ("transport", kind), ("peer", peer),
                                     ("start_frame", fr), ("start_s", t), ("first_frame", fr), ("first_s", t),
                                     ("last_frame", fr), ("last_s", t), ("end_frame", None), ("end_reason", None),
                                     ("end_reason_name", None), ("origin", "complete")])
                    conns.append(c)
                    open_by_handle[handle] = c
            elif code == 0x05 and status == 0 and handle is not None:
                c = open_by_handle.pop(handle, None)
                if c is None:
                    c = next((x for x in conns if x["handle"] == hexs(handle) and x["origin"] != "complete"
                              and x["end_frame"] is None), None)
                if c is None:
                    c = OrderedDict([("handle", hexs(handle)), ("transport", None), ("peer", None),
                                     ("start_frame", None), ("start_s", None), ("first_frame", fr), ("first_s", t),
                                     ("last_frame", fr), ("last_s", t), ("end_frame", None), ("end_reason", None),
                                     ("end_reason_name", None), ("origin", "before_capture")])
                    conns.append(c)
                c["end_frame"], c["last_frame"], c["last_s"] = fr, fr, t
                c["end_reason"] = first_num(r, "bthci_evt.reason")
                c["end_reason_name"] = HCI_ERRORS.get(c["end_reason"])
            if code == 0x3E and sub in (0x02, 0x0B, 0x0D):   # advertising reports
                for a in values(r, "bthci_evt.bd_addr"):
                    d = advertisers.setdefault(a, {"first_frame": fr, "last_frame": fr, "reports": 0})
                    d["last_frame"] = fr
                    d["reports"] += 1
        # --- ACL / SCO traffic by handle
        h = first_num(r, "bthci_acl.chandle")
        if h is None:
            h = first_num(r, "bthci_sco.chandle")
        if h is not None:
            sh = seen_handles.setdefault(h, {"first_frame": fr, "first_s": t, "frames": 0, "protocols": set()})
            sh["frames"] += 1
            sh.setdefault("frame_list", []).append(fr)
            sh["protocols"] |= protos & LINK_PROTOCOLS
            sh.setdefault("cids", set()).add(first_num(r, "btl2cap.cid"))
            if "btl2cap" in protos and first_num(r, "btl2cap.cid") in (0x0001, 0x0005):
                sh["protocols"].add("btl2cap_signalling")
            c = open_by_handle.get(h)
            if c is None:
                # traffic on a handle no Complete opened: a connection from before the capture
                c = next((x for x in conns if x["handle"] == hexs(h) and x["origin"] != "complete" and x["end_frame"] is None), None)
                if c is None and not any(x["handle"] == hexs(h) for x in conns):
                    c = OrderedDict([("handle", hexs(h)), ("transport", None), ("peer", None),
                                     ("start_frame", None), ("start_s", None), ("first_frame", fr), ("first_s", t),
                                     ("last_frame", fr), ("last_s", t), ("end_frame", None), ("end_reason", None),
                                     ("end_reason_name", None), ("origin", "before_capture")])
                    conns.append(c)
            if c is not None:
                c["last_frame"], c["last_s"] = fr, t
        # --- sniffer
        aa = first_num(r, "btle.access_address")
        if aa is not None:
            sniffer = True
            pdu = first_num(r, "btle.advertising_header.pdu_type")
            if aa == ADV_AA:
                if crc_bad(r):
                    continue   # a corrupt advertising PDU names no device
                if pdu in (0x00, 0x01, 0x02, 0x04, 0x06, 0x07):
                    for a in values(r, "btle.advertising_address")[:1]:
                        d = advertisers.setdefault(a, {"first_frame": fr, "last_frame": fr, "reports": 0})
                        d["last_frame"] = fr
                        d["reports"] += 1
                if pdu == 0x05:   # CONNECT_IND
                    caa = first_num(r, "btle.link_layer_data.access_address")
                    iv, to = first_num(r, "btle.link_layer_data.interval"), first_num(r, "btle.link_layer_data.timeout")
                    adv = first(r, "btle.advertising_address")
                    connect_ind.append({"frame": fr, "access_address": "0x%08X" % caa if caa is not None else None,
                                        "interval": iv, "interval_ms": iv * 1.25 if iv is not None else None,
                                        "timeout": to, "timeout_ms": to * 10 if to is not None else None,
                                        "initiator": first(r, "btle.initiator_address"), "advertiser": adv})
                    if adv:
                        peers.add(adv)
                    if caa is not None:
                        key = "0x%08X" % caa
                        if key in aa_conns:   # a new CONNECT_IND is a new connection, even on an access address
                            key = "0x%08X#%d" % (caa, fr)   # seen before (SweynTooth's tools reuse 0x9A328370)
                        aa_conns.setdefault(key, OrderedDict([("access_address", "0x%08X" % caa), ("connect_ind_frame", fr),
                                                              ("first_frame", fr), ("first_s", t), ("last_frame", fr), ("last_s", t),
                                                              ("end_frame", None), ("end_reason", None), ("end_reason_name", None),
                                                              ("data_pdus", 0), ("crc_bad", 0), ("after_terminate", 0),
                                                              ("central", first(r, "btle.initiator_address")), ("peripheral", adv)]))
            else:
                key = "0x%08X" % aa
                c = aa_conns.get(key)
                # the latest connection on this access address
                cands = [k for k in aa_conns if aa_conns[k]["access_address"] == key]
                if cands:
                    c = aa_conns[cands[-1]]
                bad = crc_bad(r)
                if c is None:
                    if bad:
                        continue   # a corrupt PDU does not open a connection
                    c = aa_conns.setdefault(key, OrderedDict([("access_address", key), ("connect_ind_frame", None),
                                                              ("first_frame", fr), ("first_s", t), ("last_frame", fr), ("last_s", t),
                                                              ("end_frame", None), ("end_reason", None), ("end_reason_name", None),
                                                              ("data_pdus", 0), ("crc_bad", 0), ("after_terminate", 0),
                                                              ("central", first(r, "btle.master_bd_addr")),
                                                              ("peripheral", first(r, "btle.slave_bd_addr"))]))
                c["data_pdus"] += 1
                c["crc_bad"] += 1 if bad else 0
                if c["end_frame"] is not None:
                    c["after_terminate"] += 1
                c["last_frame"], c["last_s"] = fr, t
                if first_num(r, "btle.data_header.llid") == 3 and first_num(r, "btle.control_opcode") == 0x02 and not bad:
                    if c["end_frame"] is None:
                        c["end_frame"] = fr
                        c["end_reason"] = first_num(r, "btle.control.error_code")
                        c["end_reason_name"] = HCI_ERRORS.get(c["end_reason"])
        # --- ATT
        op = first_num(r, "btatt.opcode")
        if op is not None:
            link = link_of(r)
            bad = crc_bad(r)
            if bad and link:
                crc_bad_att[link].append(fr)
            att_frames[fr] = (op, first_num(r, "btatt.handle"), link)
            if op in ATT_REQUESTS and not bad:
                att_requests.append({"frame": fr, "us": int(t * 1e6), "opcode": hexs(op, 2),
                                     "name": ATT_NAMES.get(op), "handle": hexs(first_num(r, "btatt.handle")), "link": link})
            rq = num(first(r, "btatt.request_in_frame")) or num(first(r, "btatt.response_in_frame"))
            if rq is not None and op not in ATT_REQUESTS:
                att_answered[rq] = (fr, "tshark_crc_bad" if bad else "tshark")
            if op == 0x01:
                req = first_num(r, "btatt.req_opcode_in_error")
                ec = first_num(r, "btatt.error_code")
                att_errors.append({"frame": fr, "request_opcode": hexs(req, 2), "error_code": hexs(ec, 2),
                                   "handle": hexs(first_num(r, "btatt.handle")),
                                   "request_frame": num(first(r, "btatt.request_in_frame")),
                                   "discovery_end": ec == 0x0A and req in ATT_DISCOVERY, "link": link})
        # --- SDP responses: which side serves which RFCOMM channel, and its service class
        side = sender(r)
        if first_num(r, "btsdp.pdu") in (0x05, 0x07):
            chans = [num(v) for v in values(r, "btsdp.protocol.channel")]
            uuids = [num(v) for v in values(r, "btsdp.data_element.value.uuid_16")]
            classes = [u for u in uuids if u is not None and u not in NOT_A_SERVICE]
            sdp.append({"frame": fr, "from": side, "link": link_of(r), "rfcomm_channels": chans,
                        "service_classes": ["0x%04X" % u for u in classes]})
            for ch in chans:
                # the first service class of the response: one record per response in practice
                if classes and ch is not None:
                    served[(link_of(r), side, ch)] = (classes[0], fr)
        # --- RFCOMM
        dlci = first_num(r, "btrfcomm.dlci")
        if dlci == 0 and first_num(r, "btrfcomm.frame_type") in (0x2F, 0x3F):   # SABM on DLCI 0
            mux_initiator.setdefault(link_of(r), side)
        if dlci is not None and dlci != 0:
            link = link_of(r)
            key = "%s/dlci%d" % (link, dlci)
            e = rfcomm.setdefault(key, OrderedDict([("link", link), ("dlci", dlci), ("channel", dlci >> 1),
                                                    ("direction", dlci & 1), ("service", None), ("profiles", []),
                                                    ("frames", 0), ("first_frame", fr), ("last_frame", fr)]))
            e["frames"] += 1
            e["last_frame"] = fr
            if "SABM" in info and "(" in info and e["service"] is None:
                e["service"] = info[info.index("(") + 1:info.rindex(")")].strip()
            for p in protos:
                if p in RFCOMM_PROFILES and RFCOMM_PROFILES[p] not in e["profiles"]:
                    e["profiles"].append(RFCOMM_PROFILES[p])
        # --- SMP key sizes
        sop = first_num(r, "btsmp.opcode")
        if sop == 0x05:
            smp_failed.append(fr)
        if sop in (0x01, 0x02):
            ks = first_num(r, "btsmp.max_enc_key_size")
            smp.append({"frame": fr, "opcode": hexs(sop, 2), "max_key_size": ks,
                        "invalid": ks is not None and (ks < 7 or ks > 16), "link": link_of(r)})

    # close-out of HCI connections
    for c in conns:
        if c["origin"] == "before_capture":
            h = num(c["handle"])
            sh = seen_handles.get(h, {})
            # No Complete and no Disconnection, and the "L2CAP header" is noise: most frames
            # name a channel of their own (Android's vendor diagnostics on 0x0EDC)
            # (a link with only proprietary channels, as Apple's on 0x001D, stays a connection).
            noise = sh.get("frames", 0) >= 10 and len(sh.get("cids", ())) > sh["frames"] // 2
            # Handles 0x0F00 and above are reserved (Core Vol 4 Part E 5.4.2): no link has one.
            if c["end_frame"] is None and (noise or h >= 0x0F00):
                c["origin"] = "unowned"
        c["duration_s"] = round(c["last_s"] - (c["start_s"] if c["start_s"] is not None else c["first_s"]), 6)
        c["open_at_end"] = c["end_frame"] is None
    for p in pending_create:
        failed.append({"frame": p["frame"], "us": p["us"], "command_frame": p["frame"], "command": p["command"],
                       "peer": p["peer"], "outcome": "cancelled" if p["cancel_frame"] else "never_completed",
                       "cancel_frame": p["cancel_frame"], "status": None, "status_name": None})
    failed.sort(key=lambda x: x["frame"])

    # tshark 4.0 pairs responses with requests (btatt.request_in_frame on the response;
    # btatt.response_in_frame stays empty even with -2) but not Error Responses. An Error
    # Response answers the latest open request on its link with the opcode it names
    # (btatt.req_opcode_in_error): one request outstanding per direction, Vol 3 Part F 3.3.2.
    by_frame = {q["frame"]: q for q in att_requests}
    for e in att_errors:
        if e["request_frame"] is not None:
            continue
        cands = [q for q in att_requests if q["link"] == e["link"] and q["opcode"] == e["request_opcode"]
                 and q["frame"] < e["frame"] and q["frame"] not in att_answered]
        if cands:
            e["request_frame"] = cands[-1]["frame"]
            att_answered[cands[-1]["frame"]] = (e["frame"], "error_response")
    att_unanswered = [dict(q) for q in att_requests if q["frame"] not in att_answered]
    att_pairs = sum(1 for k in att_answered if k in by_frame)
    # RFCOMM: the DLCI's direction bit names the side holding the server channel (D = 1:
    # the side that opened the multiplexer, D = 0: the other; checked on chsmartbulb and
    # manoj), and that side's SDP record names the service.
    for e in rfcomm.values():
        init = mux_initiator.get(e["link"])
        if init is None:
            continue
        other = "remote" if init == "host" else "host"
        e["mux_initiator"] = init
        e["server_side"] = init if e["direction"] == 1 else other
        hit = served.get((e["link"], e["server_side"], e["channel"]))
        if hit:
            name, prof = SERVICE_CLASSES.get(hit[0], ("0x%04X" % hit[0], None))
            e["sdp_service"] = name
            e["sdp_profile"] = prof
            e["sdp_frame"] = hit[1]
        wrong = served.get((e["link"], other if e["server_side"] == init else init, e["channel"]))
        if wrong:
            e["other_side_record"] = SERVICE_CLASSES.get(wrong[0], ("0x%04X" % wrong[0], None))[0]
    for u in att_unanswered:   # sniffer: was a CRC-bad ATT PDU seen after it on the link?
        later = [f for f in crc_bad_att.get(u["link"], []) if f > u["frame"]]
        u["crc_bad_att_after"] = later[0] if later else None

    real = [c for c in conns if c["origin"] != "unowned"]
    unowned_frames = sorted(f for c in conns if c["origin"] == "unowned"
                            for f in seen_handles.get(num(c["handle"]), {}).get("frame_list", []))
    out["connections"] = OrderedDict([
        ("kind", "sniffer" if sniffer and not conns else "hci"),
        ("count", len(aa_conns) if sniffer and not conns else len(real)),
        ("hci", conns),
        ("sniffer", list(aa_conns.values())),
        ("unowned_handles", [c["handle"] for c in conns if c["origin"] == "unowned"]),
        ("unowned_frames", unowned_frames),
    ])
    out["failed_connections"] = OrderedDict([
        ("count", len(failed)),
        ("by_outcome", dict(sorted({o: sum(1 for f in failed if f["outcome"] == o) for o in {f["outcome"] for f in failed}}.items()))),
        ("list", failed),
    ])
    out["att"] = OrderedDict([
        ("pdus", len(att_frames)),
        ("pairs", att_pairs),
        ("pairs_by_tshark", sum(1 for v in att_answered.values() if v[1].startswith("tshark"))),
        ("pairs_with_crc_bad_response", sorted([k, v[0]] for k, v in att_answered.items() if v[1] == "tshark_crc_bad")),
        ("pair_list", sorted([k, v[0]] for k, v in att_answered.items())),
        ("unanswered", att_unanswered),
        ("errors", att_errors),
        ("errors_count", len(att_errors)),
        ("errors_discovery_end", sum(1 for e in att_errors if e["discovery_end"])),
        ("crc_bad_att_frames", sum(len(v) for v in crc_bad_att.values())),
    ])
    out["rfcomm"] = list(rfcomm.values())
    out["sdp"] = sdp
    out["advertisers"] = OrderedDict([("count", len(advertisers)), ("addresses", list(advertisers.keys()))])
    out["peers"] = sorted(peers)
    out["smp"] = smp
    out["connect_ind"] = connect_ind
    out["malformed"] = OrderedDict([("count", len(malformed)), ("frames", [m["frame"] for m in malformed])])
    out["hci_failed_commands"] = hci_failed
    out["hci_vendor_complete_without_status"] = vendor_returns
    out["smp_pairing_failed"] = smp_failed
    return out


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("capture")
    ap.add_argument("--tshark")
    ap.add_argument("--pretty", action="store_true")
    a = ap.parse_args(argv)
    ref = reference(a.capture, a.tshark)
    json.dump(ref, sys.stdout, indent=2 if a.pretty else None)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
