import ArgumentParser
import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftDissect

/// The record filters every command that reads captures takes, with the same meaning
/// everywhere (`@OptionGroup var filter: FilterOptions`, then `try filter.make()`, given to
/// each capture's `AnalysisSession`, which resolves advertised names; `reportNoMatch` says
/// when nothing matched).
struct FilterOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Only this connection handle (e.g. 0x0040). Controllers reuse handles: --peer follows a device.", valueName: "HANDLE"))
    var connection: String?

    @Option(help: ArgumentHelp("Only records of connections to this device, and its advertising: an address (c0:ba:0d:00:00:01) or an advertised name (repeatable).", valueName: "ADDR|NAME"))
    var peer: [String] = []

    @Option(help: ArgumentHelp("Only ATT records of this characteristic: a UUID (2a19, 128-bit) or a name (\"Battery Level\").", valueName: "UUID|NAME"))
    var characteristic: String?

    @Option(help: ArgumentHelp("Only ATT records inside this service: a UUID or a name.", valueName: "UUID|NAME"))
    var service: String?

    @Option(
        help: ArgumentHelp(
            "Only records at or after this time: RFC 3339 (2026-07-19T11:01:49Z; without a zone, UTC as dump prints times), a time of day as dump prints it (11:01:49.5, on the capture's date; the next day past midnight) or an offset after the first record (+12.5s, +250ms, +5min, +1h).",
            valueName: "TIME"))
    var since: String?

    @Option(help: ArgumentHelp("Only records at or before this time (same forms as --since).", valueName: "TIME"))
    var until: String?

    @Flag(help: "Only records with errors: decode errors, ATT Error Responses, SMP Pairing Failed, failed commands, non-success disconnections.")
    var errors = false

    @Option(name: .customLong("protocol"), help: ArgumentHelp("Only records with this layer: " + FrameLayer.helpList + " (repeatable).", valueName: "LAYER"))
    var protocols: [String] = []

    @Option(name: .customLong("att-opcode"), help: ArgumentHelp("Only ATT PDUs with this opcode: 0x12, or a name: write, read, notify, indicate, error, mtu, write-request… (repeatable).", valueName: "OPCODE"))
    var attOpcodes: [String] = []

    @Option(name: .customLong("handle"), help: ArgumentHelp("Only ATT PDUs addressing this attribute handle (repeatable).", valueName: "HANDLE"))
    var handles: [String] = []

    @Option(help: ArgumentHelp("Frames: N, N-M, N- or -M, or a list of them as tshark takes it (347,431-435; use --frames=-M).", valueName: "RANGES"))
    var frames: String?

    @Option(name: .customLong("module-filter"), help: ArgumentHelp(ModuleOptionArguments.help(.filter), valueName: "NAME=VALUE"))
    var moduleFilters: [String] = []

    /// Every command says a malformed filter before it reads anything.
    func validate() throws { _ = try make() }

    /// The filter, or a usage error (exit 64) naming the option and the forms it accepts.
    func make() throws -> FrameFilter {
        var filter = FrameFilter()
        if let c = connection {
            guard let v = parseInteger(c), v >= 0, v <= 0xFFFF else {
                throw usage("--connection", "a connection handle such as 0x0040 or 64", c)
            }
            filter.connection = UInt16(v)
        }
        for p in protocols {
            guard FrameFilter.protocolNames.contains(p.lowercased()) else {
                throw usage("--protocol", "one of " + FrameFilter.protocolNames.sorted().joined(separator: ", "), p)
            }
            filter.protocols.insert(p.lowercased())
        }
        for o in attOpcodes {
            if let v = parseInteger(o), v >= 0, v <= 0xFF { filter.attOpcodes.insert(UInt8(v)); continue }
            guard let ops = FrameFilter.attOpcodes(named: o) else {
                throw usage(
                    "--att-opcode",
                    "an opcode such as 0x12, or a name: write, read, notify, indicate, error, mtu, "
                        + "or a spec name like write-request or read-by-type-response", o)
            }
            filter.attOpcodes.formUnion(ops)
        }
        for h in handles {
            guard let v = parseInteger(h), v >= 0, v <= 0xFFFF else {
                throw usage("--handle", "an attribute handle such as 0x002a or 42", h)
            }
            filter.handles.insert(UInt16(v))
        }
        if let f = frames {
            let parts = f.split(separator: ",", omittingEmptySubsequences: false).map { Self.frameRange(String($0)) }
            guard !parts.contains(where: { $0 == nil }) else {
                throw usage("--frames", "N, N-M, N- or -M, or a comma-separated list of them such as 347,431-435", f)
            }
            filter.frames = FrameFilter.FrameSet(parts.compactMap { $0 })
        }
        if let c = characteristic { filter.characteristic = .init(c) }
        if let s = service { filter.service = .init(s) }
        for p in peer {
            if let a = BDAddr(string: p) { filter.peerAddresses.insert(a) } else if Self.looksLikeAddress(p) { throw usage("--peer", "an address such as c0:ba:0d:00:00:01 or an advertised name", p) } else { filter.peerNames.append(p) }
        }
        let timeForms = "an RFC 3339 time (2026-07-19T11:01:49.5Z, UTC without a zone), a time of day as dump prints it (11:01:49.5) or an offset from the first record (+12.5s, +250ms, +5min, +1h)"
        if let s = since {
            guard let t = FrameFilter.TimeBound(s) else { throw usage("--since", timeForms, s) }
            filter.since = t
        }
        if let u = until {
            guard let t = FrameFilter.TimeBound(u) else { throw usage("--until", timeForms, u) }
            filter.until = t
        }
        filter.errorsOnly = errors
        do { filter.modules = try ProtocolRegistry.shared.filters(ModuleOptionArguments.split(moduleFilters)) } catch { throw ModuleOptionArguments.fail(error) }
        return filter
    }

    /// "42", "100-200", "100-", "-50" (frames are numbered from 1).
    static func frameRange(_ f: String) -> ClosedRange<Int>? {
        let parts = f.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
        if parts.count == 1, let a = Int(parts[0]), a >= 0 { return a...a }
        guard parts.count == 2, !(parts[0].isEmpty && parts[1].isEmpty) else { return nil }
        guard let a = parts[0].isEmpty ? 0 : Int(parts[0]), let b = parts[1].isEmpty ? Int.max : Int(parts[1]),
            a >= 0, b >= a
        else { return nil }
        return a...b
    }

    /// Hex pairs joined by colons or dashes: meant as an address, not a name.
    static func looksLikeAddress(_ s: String) -> Bool {
        let parts = s.split(omittingEmptySubsequences: false, whereSeparator: { $0 == ":" || $0 == "-" })
        return parts.count >= 3 && parts.allSatisfy { !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isHexDigit) }
    }

    /// The options given, as typed: for "no records match …".
    var summary: String {
        var parts: [String] = []
        if let c = connection { parts.append("--connection \(c)") }
        for p in peer { parts.append("--peer \(p)") }
        if let s = service { parts.append("--service \(s)") }
        if let c = characteristic { parts.append("--characteristic \(c)") }
        if let s = since { parts.append("--since \(s)") }
        if let u = until { parts.append("--until \(u)") }
        if errors { parts.append("--errors") }
        for p in protocols { parts.append("--protocol \(p)") }
        for o in attOpcodes { parts.append("--att-opcode \(o)") }
        for h in handles { parts.append("--handle \(h)") }
        if let f = frames { parts.append("--frames \(f)") }
        for (name, value) in ModuleOptionArguments.split(moduleFilters) { parts.append("--\(name) \(value)") }
        return parts.joined(separator: " ")
    }

    /// Says on stderr that nothing in `file` passed the filter.
    func reportNoMatch(_ file: String) {
        stderrLine("bluesift: \(file): no records match \(summary)")
    }
}

/// A usage error: `bluesift: OPTION: expected FORMS (got "VALUE")`, exit 64.
func usage(_ option: String, _ expected: String, _ got: String) -> ExitCode {
    stderrLine("bluesift: \(option): expected \(expected) (got \"\(got)\")")
    return Exit.usage
}
