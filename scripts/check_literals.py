#!/usr/bin/env python3
"""Finds protocol literals outside their protocol's folder (issue 38: a protocol's facts live once).

    scripts/check_literals.py [--allowlist FILE] [--root DIR]   exit 1 and list what it found
    scripts/check_literals.py --self-test                       the rules against known snippets

A protocol's folder is any folder of Sources/BluesiftProtocols but Pipeline (ATT, SMP, L2CAP,
LinkLayer, HCI, Advertising, Classic, and each family that came in through the registry: LEAudio, Mesh).
Everywhere else under Sources/ (the pipeline, the host, replay, dissect, ...) names opcodes,
event codes, PSMs and CIDs by the typed constants those folders declare. A hex literal is
reported when, with comments and strings stripped, it is
  - on a line that names a PSM or a CID (`psm`, `cid`, `channelID`);
  - on a line that names an opcode, event or command code (`opcode`, `op`, `event`, `evt`,
    `subevent`, `code`, `command`, `ocf`, `ogf`), or in a `case` of a `switch` over such a name;
  - an LE controller command opcode (0x2001-0x20FF, OGF 0x08) anywhere: nothing else uses
    that range (GATT UUIDs start at 0x2800).
A literal after a bit operator (`cid & 0xFF`, `op >> 2`) is a width, not a code, and is not reported.
Entries of the allowlist (scripts/check_literals.allow) are `path:substring-of-the-line  # reason`
(`path:*`: the whole file, for a file another branch is rewriting); every entry needs a reason
and must still match something (a stale entry fails the check, so the list only shrinks).
"""
import argparse
import os
import re
import sys

# The engine's own folder: dispatch names codes by the protocols' constants.
ENGINE_DIRS = {"Pipeline"}
HEX = re.compile(r"\b0[xX][0-9A-Fa-f_]+\b")
PSM_CID = re.compile(r"psm|\bcid\b|cid\b|\bcid|channelid", re.I)
# A name says what a literal on its line is; `.command`/`.event` (a packet kind) and a call
# `command(...)` (a host sending a typed command) are not such names.
CODE_WORDS = re.compile(
    r"opcode|\bop\b|\bops\b|ocf|ogf|\bevent|\bevt\b|subevent|eventcode|\bcode\b|\bcommand\b(?!\s*\()|\bcmd\b", re.I)
# `.command`, `.event` with nothing before the dot: an enum case (PacketKind), not a name.
IMPLICIT_MEMBER = re.compile(r"(?<![\w)\]])\.(?:command|event)\b")
# A literal right after a bit operator is a mask or a shift (a field's width), not a code.
MASK = re.compile(r"(?:&|\||<<|>>)\s*$")
SWITCH = re.compile(r"\bswitch\s+(.+?)\s*\{\s*$")
CASE = re.compile(r"^\s*case\b")


def strip(line, in_block):
    """The line without comments and string literal contents; whether a block comment stays open."""
    out, i, n = [], 0, len(line)
    while i < n:
        if in_block:
            j = line.find("*/", i)
            if j < 0:
                return "".join(out), True
            i, in_block = j + 2, False
            continue
        c = line[i]
        if line.startswith("//", i):
            break
        if line.startswith("/*", i):
            in_block, i = True, i + 2
            continue
        if c == '"':
            j = i + 1
            while j < n and line[j] != '"':
                j += 2 if line[j] == "\\" else 1
            out.append('""')
            i = j + 1
            continue
        out.append(c)
        i += 1
    return "".join(out), in_block


def findings(path, text):
    """(line number, line, kind) for each suspicious line of one Swift file."""
    out, in_block, switches, depth = [], False, [], 0
    for no, raw in enumerate(text.splitlines(), 1):
        line, in_block = strip(raw, in_block)
        m = SWITCH.search(line)
        if m:
            switches.append((depth, m.group(1)))
        depth += line.count("{") - line.count("}")
        while switches and depth <= switches[-1][0]:
            switches.pop()
        lits = [m.group(0) for m in HEX.finditer(line) if not MASK.search(line[:m.start()])]
        if not lits:
            continue
        kind = None
        named = IMPLICIT_MEMBER.sub(".kind", line)
        if PSM_CID.search(line):
            kind = "PSM/CID"
        elif CODE_WORDS.search(named):
            kind = "opcode"
        elif CASE.match(line) and switches and CODE_WORDS.search(switches[-1][1]):
            kind = "opcode (case of switch " + switches[-1][1] + ")"
        elif CASE.match(line) and switches and PSM_CID.search(switches[-1][1]):
            kind = "PSM/CID (case of switch " + switches[-1][1] + ")"
        elif any(0x2001 <= int(x.replace("_", ""), 16) <= 0x20FF and len(x) == 6 for x in lits):
            kind = "LE command opcode"
        if kind:
            out.append((no, raw.rstrip(), kind))
    return out


def outside_files(root):
    src = os.path.join(root, "Sources")
    base = os.path.join(src, "BluesiftProtocols")
    dirs = sorted(d for d in os.listdir(base) if os.path.isdir(os.path.join(base, d)) and d not in ENGINE_DIRS) if os.path.isdir(base) else []
    proto = [os.path.join(base, d) + os.sep for d in dirs]
    for dirpath, _, names in os.walk(src):
        for name in sorted(names):
            p = os.path.join(dirpath, name)
            if name.endswith(".swift") and not any(p.startswith(d) for d in proto):
                yield p


def load_allowlist(path):
    entries = []
    if not os.path.exists(path):
        return entries
    with open(path) as f:
        for no, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            entry, _, reason = line.partition("  # ")
            if ":" not in entry or not reason.strip():
                sys.exit(f"{path}:{no}: an entry is `path:substring  # reason`: {line}")
            file, _, sub = entry.partition(":")
            entries.append([file.strip(), sub.strip(), reason.strip(), 0, no])
    return entries


def run(root, allowlist):
    entries = load_allowlist(allowlist)
    found = []
    for p in sorted(outside_files(root)):
        rel = os.path.relpath(p, root)
        with open(p, encoding="utf-8") as f:
            text = f.read()
        for no, line, kind in findings(rel, text):
            hit = next((e for e in entries if e[0] == rel and (e[1] == "*" or e[1] in line)), None)
            if hit:
                hit[3] += 1
            else:
                found.append(f"{rel}:{no}: {kind}: {line.strip()}")
    stale = [f"{allowlist}:{e[4]}: matches nothing now, remove it: {e[0]}:{e[1]}" for e in entries if e[3] == 0]
    allowed = sum(e[3] for e in entries)
    for s in found + stale:
        print(s)
    print(f"literal check: {len(found)} opcode/PSM literals outside their protocol's folder"
          f" ({allowed} allowlisted in {len(entries)} entries)")
    return 1 if found or stale else 0


SELF_TEST = [
    # (snippet, reported?)
    ("if ch.psm == 0x001F { }", True),
    ("let isATT = psm == 0x0027", True),
    ("guard cid == 0x0006 else { return }", True),
    ("if opcode == 0x200E { }", True),
    ("case 0x2019: x()", True),                      # LE command range, any context
    ("switch op {\ncase 0x01 where p.count == 7: a()\n}", True),
    ("switch b[0] {\ncase 0x3E: a()\n}", False),    # no name says what b[0] is: not caught by rule 2
    ("let evt = b[0] == 0x3E", True),
    ("let uuid: UInt16 = 0x2A37", False),
    ("let mask = 0xFF // opcode 0x01 in a comment", False),
    ("log(\"opcode 0x01\")", False),
    ("if opcode == .leSetScanEnable { }", False),
    ("let company = 0x004C", False),
    ("b[10] = UInt8(cid & 0xFF)", False),            # a mask, not a CID
    ("case .command: return 0x20", False),          # a packet kind, not a command code
    ("try command(HCILESetScanParameters(interval: 0x0030))", False),
    ("if h.opcode == 0x05 && x & 0xFF == 0 { }", True),
    ("if smp.code == 0x01 {", True),
    ("let isATT = ch.psm == L2CAPPSM.att", False),
]


def self_test():
    bad = 0
    for snippet, want in SELF_TEST:
        got = bool(findings("t.swift", snippet))
        if got != want:
            bad += 1
            print(f"self-test: {'missed' if want else 'false alarm'}: {snippet!r}")
    print(f"self-test: {len(SELF_TEST) - bad}/{len(SELF_TEST)} rules behave")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--root", default=os.path.dirname(here))
    ap.add_argument("--allowlist", default=os.path.join(here, "check_literals.allow"))
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    sys.exit(self_test() if a.self_test else run(a.root, a.allowlist))


if __name__ == "__main__":
    main()
