#!/usr/bin/env python3
"""Builds the fuzz seed corpora from capture files (docs/fuzzing.md).

usage: fuzz-seeds.py OUTDIR CAPTURE_OR_DIR...

OUTDIR/capture/  two seeds per capture: selector byte (BluesiftFuzz/CaptureFuzz.swift) + the
                 first 16 KiB of the file (readers must cope with the cut), and the same with
                 bit 7 set (records also analysed and rendered) + the first 4 KiB.
OUTDIR/plugins/  for each *.yaml given (or found in a folder given): the YAML + 0x00 + one example,
                 and bundled-plugin streams (BluesiftFuzz/PluginFuzz.swift): 0x80 + index,
                 direction, then the examples as length-prefixed ATT values.
OUTDIR/stack/    raw H4 packets in the FuzzStack framing (BluesiftFuzz/H4Framing.swift):
                 indicator | 0x80 when received, then the HCI packet; sniffer packets as 0x10.
                 Packets are grouped into seeds of about 1 KiB, at most 60 seeds per capture.
"""
import hashlib, os, struct, sys

CUT = 16 * 1024
GROUP = 1024
PER_CAPTURE = 60


def captures(args):
    for a in args:
        if os.path.isdir(a):
            for n in sorted(os.listdir(a)):
                p = os.path.join(a, n)
                if os.path.isfile(p) and not n.endswith((".md", ".txt", ".json", ".yaml", ".yml")):
                    yield p
        elif os.path.isfile(a) and not a.endswith((".yaml", ".yml")):
            yield a


def h4(indicator, received, pkt):
    return bytes([indicator | (0x80 if received else 0)]) + pkt


def ll(pkt, from_central=True):
    flags = (1 if from_central else 0) | 4 | (37 << 3 & 0xF8)
    return bytes([0x10]) + struct.pack("<HB", len(pkt), flags) + pkt


def btsnoop(d):
    dl = struct.unpack(">I", d[12:16])[0]
    off = 16
    while off + 24 <= len(d):
        orig, incl, flags, _drops, _ts = struct.unpack(">IIIIq", d[off:off + 24])
        pkt = d[off + 24:off + 24 + incl]
        off += 24 + incl
        if dl == 1002 and pkt:
            yield h4(pkt[0], flags & 1, pkt[1:])
        elif dl == 1001:
            ind = (4 if flags & 1 else 1) if flags & 2 else 2
            yield h4(ind, flags & 1, pkt)
        elif dl == 2001:
            op = flags & 0xFFFF
            table = {2: (1, 0), 3: (4, 1), 4: (2, 0), 5: (2, 1), 6: (3, 0), 7: (3, 1), 18: (5, 0), 19: (5, 1)}
            if op in table:
                yield h4(table[op][0], table[op][1], pkt)


def pklg(d):
    # Big-endian length unless that runs past the file (iOS writes little-endian).
    le = struct.unpack(">I", d[0:4])[0] > len(d)
    off = 0
    while off + 13 <= len(d):
        n = struct.unpack("<I" if le else ">I", d[off:off + 4])[0]
        if n < 9 or off + 4 + n > len(d):
            return
        t = d[off + 12]
        pkt = d[off + 13:off + 4 + n]
        off += 4 + n
        table = {0: (1, 0), 1: (4, 1), 2: (2, 0), 3: (2, 1), 8: (3, 0), 9: (3, 1)}
        if t in table:
            yield h4(table[t][0], table[t][1], pkt)


def linktype_packets(dl, pkt):
    if dl == 201 and len(pkt) > 5:  # H4 with 4-byte direction header
        yield h4(pkt[4], struct.unpack(">I", pkt[:4])[0] & 1, pkt[5:])
    elif dl == 187 and pkt:
        yield h4(pkt[0], 0, pkt[1:])
    elif dl == 251:
        yield ll(pkt)
    elif dl == 256 and len(pkt) > 10:
        yield ll(pkt[10:])
    elif dl == 192 and len(pkt) > 8:  # PPI; BTLE inside
        hlen, inner = struct.unpack("<HI", pkt[2:8])
        if inner in (147, 251):  # crackle writes BTLE as USER0
            yield ll(pkt[hlen:])
    elif dl == 272 and len(pkt) > 17:  # Nordic BLE: header then access address
        yield ll(pkt[17:])


def pcap(d):
    magic = d[:4]
    e = "<" if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    dl = struct.unpack(e + "I", d[20:24])[0]
    off = 24
    while off + 16 <= len(d):
        _s, _u, incl, _orig = struct.unpack(e + "IIII", d[off:off + 16])
        pkt = d[off + 16:off + 16 + incl]
        off += 16 + incl
        yield from linktype_packets(dl, pkt)


def pcapng(d):
    off, e, links = 0, "<", []
    while off + 12 <= len(d):
        btype = struct.unpack(e + "I", d[off:off + 4])[0]
        if btype == 0x0A0D0D0A:
            e = "<" if d[off + 8:off + 12] == b"\x4d\x3c\x2b\x1a" else ">"
            links = []
        blen = struct.unpack(e + "I", d[off + 4:off + 8])[0]
        if blen < 12 or off + blen > len(d):
            return
        body = d[off + 8:off + blen - 4]
        if btype == 1:
            links.append(struct.unpack(e + "H", body[:2])[0])
        elif btype == 6 and len(body) >= 20:
            iface, _th, _tl, cap, _orig = struct.unpack(e + "IIIII", body[:20])
            if iface < len(links):
                yield from linktype_packets(links[iface], body[20:20 + cap])
        off += blen


def container(d):
    if d[:8] == b"btsnoop\0":
        return 1, btsnoop
    if d[:4] in (b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4", b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d"):
        return 2, pcap
    if d[:4] == b"\x0a\x0d\x0d\x0a":
        return 3, pcapng
    return 4, pklg


def write(folder, data):
    os.makedirs(folder, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def plugin_seeds(out, yamls):
    import re
    n = 0
    for i, path in enumerate(sorted(yamls, key=os.path.basename)):
        text = open(path, "rb").read()
        examples = [bytes.fromhex(h.decode().replace(" ", "")) for h in re.findall(rb"hex:\s*([0-9a-fA-F ]+)", text)]
        for e in examples[:8] or [b""]:
            write(os.path.join(out, "plugins"), text + b"\0" + e)
            n += 1
        for d in range(2):
            stream = b"".join(bytes([len(e[k:k + 20])]) + e[k:k + 20] for e in examples for k in range(0, len(e), 20))
            write(os.path.join(out, "plugins"), bytes([0x80 + i, d]) + stream)
            n += 1
    return n


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out = sys.argv[1]
    counts = {"capture": 0, "stack": 0}
    yamls = [p for a in sys.argv[2:] for p in ([os.path.join(a, n) for n in os.listdir(a)] if os.path.isdir(a) else [a])
             if p.endswith((".yaml", ".yml"))]
    counts["plugins"] = plugin_seeds(out, yamls)
    for path in captures(sys.argv[2:]):
        d = open(path, "rb").read()
        if not d:
            continue
        sel, packets = container(d)
        write(os.path.join(out, "capture"), bytes([sel]) + d[:CUT])
        write(os.path.join(out, "capture"), bytes([0x80 | sel]) + d[:CUT // 4])  # + analyzer
        counts["capture"] += 2
        group, seeds = b"", 0
        try:
            for p in packets(d):
                group += p
                if len(group) >= GROUP:
                    write(os.path.join(out, "stack"), group)
                    counts["stack"] += 1
                    group, seeds = b"", seeds + 1
                    if seeds >= PER_CAPTURE:
                        break
        except (struct.error, IndexError):
            pass  # damaged capture: keep what was read
        if group and seeds < PER_CAPTURE:
            write(os.path.join(out, "stack"), group)
            counts["stack"] += 1
    print(f"seeds: {counts['capture']} capture, {counts['stack']} stack, {counts['plugins']} plugins in {out}")


if __name__ == "__main__":
    main()
