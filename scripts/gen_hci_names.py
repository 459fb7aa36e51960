#!/usr/bin/env python3
"""Generate the HCI name tables (switch functions returning string literals).

Sources (both public, spec-derived):
  - Bumble  bumble/hci.py  (github.com/google/bumble, commit f534657891fa6a824cc071e17834a2b1995c45e7):
      command opcodes  HCI_*_COMMAND = hci_command_op_code(ogf, ocf)
      event codes      HCI_*_EVENT = 0x..   (block "# HCI Event Codes")
      LE subevents     HCI_LE_*_EVENT = 0x.. (block "# HCI Subevent Codes")
  - BlueZ   monitor/packet.c (github.com/bluez/bluez, commit 690c16df606733626a0a7d6bc2b83a3244d4ced1):
      error2str_table  (HCI error codes, Core Vol 1 Part F §1.3)

Usage: scripts/gen_hci_names.py path/to/bumble/hci.py [path/to/bluez/monitor/packet.c]
Writes Sources/BluesiftProtocols/HCI/{HCICommandNames,HCIEventNames,HCIStatusNames}.swift and
the named constants HCICodes.swift (HCICommandOpcode, HCIEventCode, HCILESubeventCode: the
numbers the host sends and matches, written once). Without packet.c the status table is kept.
"""
import os
import re
import sys

ACRONYMS = {
    "LE", "CS", "ISO", "MWS", "CTE", "OOB", "BIG", "AFH", "PIN", "CIS", "CIG", "IAC", "LAP",
    "UTP", "TX", "RX", "RF", "LT", "IO", "FAE", "RSSI", "SCA", "IQ", "OTA", "LMP", "PHY", "BD",
    "ADDR", "HCI", "ACL", "SCO", "SAM", "EIR", "AMP", "RPA", "PA", "PAWR", "BR", "EDR", "NOP",
}
SPECIAL = {"QOS": "QoS", "DHKEY": "DHKey", "BIGINFO": "BIGInfo", "V2": "v2", "V3": "v3", "V4": "v4"}
SMALL = {"OF", "TO", "FROM", "WITH", "BY", "AND", "OR", "FOR", "THE", "ON", "IN"}


def title(symbol: str) -> str:
    """HCI_LE_SET_SCAN_ENABLE -> 'LE Set Scan Enable'."""
    s = symbol.replace("P_256", "P-256").replace("BD_ADDR", "BD_ADDR_").replace("LT_ADDR", "LT_ADDR_")
    words = [w for w in s.split("_") if w]
    out = []
    for i, w in enumerate(words):
        if w in SPECIAL:
            out.append(SPECIAL[w])
        elif w in ACRONYMS or w.startswith("P-"):
            out.append(w)
        elif w in SMALL and i > 0:
            out.append(w.lower())
        else:
            out.append(w[:1] + w[1:].lower())
    return " ".join(out).replace("BD ADDR", "BD_ADDR").replace("LT ADDR", "LT_ADDR")


def camel(symbol: str) -> str:
    """LE_SET_RANDOM_ADDRESS -> 'leSetRandomAddress', READ_BD_ADDR -> 'readBDAddr'."""
    s = symbol.replace("BD_ADDR", "BDADDR").replace("P_256", "P256")
    out = []
    for i, w in enumerate(x for x in s.split("_") if x):
        if w == "BDADDR":
            w = "bdAddr" if i == 0 else "BDAddr"
        elif w in SPECIAL:
            w = SPECIAL[w].replace("-", "")
            w = w[:1].lower() + w[1:] if i == 0 else w[:1].upper() + w[1:]
        elif w in ACRONYMS:
            w = w.lower() if i == 0 else w
        else:
            w = w.lower() if i == 0 else w[:1] + w[1:].lower()
        out.append(w)
    return "".join(out)


def parse_symbols(text: str):
    """The Bumble symbols (without HCI_ and _COMMAND/_EVENT) by code, first one kept."""
    commands = {}
    for m in re.finditer(r"^HCI_([A-Z0-9_]+)_COMMAND\s*=\s*hci_command_op_code\((0x[0-9A-Fa-f]+),\s*(0x[0-9A-Fa-f]+)\)",
                         text, re.M):
        commands.setdefault(int(m.group(2), 16) << 10 | int(m.group(3), 16), m.group(1))
    ev_block = text.split("# HCI Event Codes", 1)[1].split("# HCI Subevent Codes", 1)
    events = {}
    for m in re.finditer(r"^HCI_([A-Z0-9_]+)_EVENT\s*=\s*(0[xX][0-9A-Fa-f]+)", ev_block[0], re.M):
        events.setdefault(int(m.group(2), 16), m.group(1))
    subevents = {}
    for m in re.finditer(r"^HCI_([A-Z0-9_]+)_EVENT\s*=\s*(0[xX][0-9A-Fa-f]+)", ev_block[1].split("# HCI Command", 1)[0], re.M):
        subevents.setdefault(int(m.group(2), 16), m.group(1))
    return commands, events, subevents


def constants(type_name, doc, raw, table, width, strip=""):
    lines = [f"/// {doc}", f"public struct {type_name}: RawRepresentable, Hashable, Sendable, CustomStringConvertible {{",
             f"    public var rawValue: {raw}", f"    public init(rawValue: {raw}) {{ self.rawValue = rawValue }}",
             f"    public init(_ rawValue: {raw}) {{ self.rawValue = rawValue }}", ""]
    seen = set()
    for k in sorted(table):
        sym = table[k]
        if strip and sym.startswith(strip):
            sym = sym[len(strip):]
        name = camel(sym)
        if name in seen:
            continue
        seen.add(name)
        lines.append(f"    public static let {name} = {type_name}(0x{k:0{width}X})")
    return "\n".join(lines)


def parse_bumble(text: str):
    commands = {}
    for m in re.finditer(r"^HCI_([A-Z0-9_]+)_COMMAND\s*=\s*hci_command_op_code\((0x[0-9A-Fa-f]+),\s*(0x[0-9A-Fa-f]+)\)",
                         text, re.M):
        op = int(m.group(2), 16) << 10 | int(m.group(3), 16)
        commands.setdefault(op, title(m.group(1)))
    ev_block = text.split("# HCI Event Codes", 1)[1].split("# HCI Subevent Codes", 1)
    events = {}
    for m in re.finditer(r"^HCI_([A-Z0-9_]+)_EVENT\s*=\s*(0[xX][0-9A-Fa-f]+)", ev_block[0], re.M):
        events.setdefault(int(m.group(2), 16), title(m.group(1)))
    sub_block = ev_block[1].split("# HCI Command", 1)[0]
    subevents = {}
    for m in re.finditer(r"^HCI_([A-Z0-9_]+)_EVENT\s*=\s*(0[xX][0-9A-Fa-f]+)", sub_block, re.M):
        subevents.setdefault(int(m.group(2), 16), title(m.group(1)))
    return commands, events, subevents


def parse_bluez_errors(text: str):
    block = text.split("error2str_table[] = {", 1)[1].split("};", 1)[0]
    # Join string literals split over lines: "a " \n "b"
    block = re.sub(r'"\s*\n\s*"', "", block)
    errors = {}
    for m in re.finditer(r'\{\s*(0x[0-9a-fA-F]+),\s*"([^"]*)"', block):
        name = m.group(2).strip().replace("Manadatory", "Mandatory")
        errors[int(m.group(1), 16)] = name
    return errors


HEADER = "// GENERATED by scripts/gen_hci_names.py from {src}. Do not edit.\n\n"


def switch(fn_doc, signature, table, width, default):
    lines = [f"    /// {fn_doc}", f"    public static func {signature} -> String {{", "        switch code {"]
    for k in sorted(table):
        lines.append(f'        case 0x{k:0{width}X}: "{table[k]}"')
    lines += [f'        default: "{default}"', "        }", "    }"]
    return "\n".join(lines)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    bumble = open(sys.argv[1], encoding="utf-8").read()
    bluez = open(sys.argv[2], encoding="utf-8").read() if len(sys.argv) == 3 else None
    commands, events, subevents = parse_bumble(bumble)
    commands[0x0000] = "NOP"  # opcode 0 in Command Complete/Status: credits only (§7.7.14)
    events[0x3E] = "LE Meta"
    events[0xFF] = "Vendor"
    errors = parse_bluez_errors(bluez) if bluez else {}
    outdir = os.path.join(os.path.dirname(__file__), "..", "Sources", "BluesiftProtocols", "HCI")

    with open(os.path.join(outdir, "HCICommandNames.swift"), "w") as f:
        f.write(HEADER.format(src="Bumble bumble/hci.py"))
        f.write("/// HCI command names (Core 5.4 Vol 4 Part E §7.1-§7.8), opcode = OGF << 10 | OCF.\n")
        f.write("public enum HCICommandNames {\n")
        f.write(switch("Command name; \"Vendor\" for OGF 0x3F, \"Unknown\" otherwise.",
                       "name(_ code: UInt16)", commands, 4, "Unknown").replace(
            '        default: "Unknown"', '        case 0xFC00...0xFFFF: "Vendor"\n        default: "Unknown"'))
        f.write("\n}\n")
    with open(os.path.join(outdir, "HCIEventNames.swift"), "w") as f:
        f.write(HEADER.format(src="Bumble bumble/hci.py"))
        f.write("/// HCI event and LE Meta subevent names (Core 5.4 Vol 4 Part E §7.7).\n")
        f.write("public enum HCIEventNames {\n")
        f.write(switch("Event name; \"Unknown\" for undefined codes.", "name(_ code: UInt8)", events, 2, "Unknown"))
        f.write("\n\n")
        f.write(switch("LE Meta subevent name (§7.7.65); \"Unknown\" for undefined codes.",
                       "leSubeventName(_ code: UInt8)", subevents, 2, "Unknown"))
        f.write("\n}\n")
    sym_commands, sym_events, sym_subevents = parse_symbols(bumble)
    sym_events[0x3E] = "LE_META"
    with open(os.path.join(outdir, "HCICodes.swift"), "w") as f:
        f.write(HEADER.format(src="Bumble bumble/hci.py"))
        f.write(constants("HCICommandOpcode", "An HCI command opcode (Core 6.0 Vol 4 Part E §5.4.1: OGF << 10 | OCF), named as Bumble names it.",
                          "UInt16", sym_commands, 4))
        f.write("\n\n    public var name: String { HCICommandNames.name(rawValue) }\n")
        f.write("    public var description: String { name }\n}\n\n")
        f.write(constants("HCIEventCode", "An HCI event code (Core 6.0 Vol 4 Part E §7.7).", "UInt8", sym_events, 2))
        f.write("\n\n    public var name: String { HCIEventNames.name(rawValue) }\n")
        f.write("    public var description: String { name }\n}\n\n")
        f.write(constants("HCILESubeventCode", "An LE Meta subevent code (Core 6.0 Vol 4 Part E §7.7.65).", "UInt8", sym_subevents, 2,
                          strip="LE_"))
        f.write("\n\n    public var name: String { HCIEventNames.leSubeventName(rawValue) }\n")
        f.write("    public var description: String { name }\n}\n")
    if not errors:
        print(f"{len(commands)} commands, {len(events)} events, {len(subevents)} LE subevents (status names kept)")
        return
    with open(os.path.join(outdir, "HCIStatusNames.swift"), "w") as f:
        f.write(HEADER.format(src="BlueZ monitor/packet.c error2str_table"))
        f.write("/// HCI error code names (Core 5.4 Vol 1 Part F §1.3).\n")
        f.write("public enum HCIStatusNames {\n")
        f.write(switch("Error code name; \"Unknown\" for undefined codes.", "name(_ code: UInt8)", errors, 2, "Unknown"))
        f.write("\n}\n")
    print(f"{len(commands)} commands, {len(events)} events, {len(subevents)} LE subevents, {len(errors)} error codes")


if __name__ == "__main__":
    main()
