import BluesiftWire

/// One HFP/HSP AT command or result line (HFP 1.8 §4.34, HSP 1.2 §4.7; V.250 §5): the hands-free
/// unit sends commands ("AT+BRSF=155\r"), the audio gateway answers with result codes
/// ("\r\n+BRSF: 615\r\n", "\r\nOK\r\n"). Owned: lines are reassembled across RFCOMM frames.
public struct ATLine: Sendable, Hashable {
    /// How a line uses its command (V.250 §5.3): `=` set, `?` read, `=?` test, `:` result.
    public struct Kind: RawRepresentable, Hashable, Sendable {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let action = Kind(rawValue: 0)
        public static let set = Kind(rawValue: 1)
        public static let read = Kind(rawValue: 2)
        public static let test = Kind(rawValue: 3)
        public static let result = Kind(rawValue: 4)
        public static let basicResult = Kind(rawValue: 5)
        public var name: String {
            switch rawValue {
            case 0: "action"
            case 1: "set"
            case 2: "read"
            case 3: "test"
            case 4: "result"
            case 5: "final"
            default: "Unknown"
            }
        }
    }

    /// The line without AT prefix and line ends: "+BRSF=155", "+CIEV: 2,1", "OK".
    public var text: String
    public var isCommand: Bool
    /// "+BRSF", "D", "A", "OK", "RING".
    public var command: String
    public var kind: Kind
    public var arguments: String
    /// +CIEV: the indicator's name from the connection's +CIND list (set by the decoder).
    public var indicator: String?

    public init(line: String, isCommand: Bool) {
        text = line; self.isCommand = isCommand
        var body = Substring(line)
        if isCommand { body = body.dropFirst(2) } // "AT" / "at"
        let nameEnd = body.firstIndex(where: { $0 == "=" || $0 == "?" || $0 == ":" }) ?? body.endIndex
        var name = String(body[..<nameEnd]).trimmingSpaces
        var rest = body[nameEnd...]
        if isCommand {
            if rest.hasPrefix("=?") {
                kind = .test; rest = rest.dropFirst(2)
            } else if rest.hasPrefix("=") {
                kind = .set; rest = rest.dropFirst()
            } else if rest.hasPrefix("?") {
                kind = .read; rest = rest.dropFirst()
            } else {
                kind = .action
                // Basic commands carry their argument straight after the letter: ATD123; ATA.
                if !name.hasPrefix("+"), let first = name.first {
                    rest = Substring(name.dropFirst()); name = String(first)
                }
            }
        } else if rest.hasPrefix(":") {
            kind = .result; rest = rest.dropFirst()
        } else {
            kind = .basicResult
        }
        command = name.uppercased()
        arguments = String(rest).trimmingSpaces
    }

    /// Codec ids of +BAC/+BCS (HFP 1.8 §5.7.8 / Assigned Numbers "Hands-Free Profile").
    public static func codecName(_ id: Int) -> String {
        switch id {
        case 1: "CVSD"
        case 2: "mSBC"
        case 3: "LC3-SWB"
        default: "codec \(id)"
        }
    }

    /// HF supported features, AT+BRSF (HFP 1.8 §4.34.2).
    static let hfFeatures = [
        "EC/NR", "three-way calling", "CLI presentation", "voice recognition",
        "remote volume control", "enhanced call status", "enhanced call control",
        "codec negotiation", "HF indicators", "eSCO S4", "enhanced voice recognition status",
        "voice recognition text"
    ]
    /// AG supported features, +BRSF (HFP 1.8 §4.34.2).
    static let agFeatures = [
        "three-way calling", "EC/NR", "voice recognition", "in-band ring tone",
        "voice tag", "reject call", "enhanced call status", "enhanced call control",
        "extended error codes", "codec negotiation", "HF indicators", "eSCO S4",
        "enhanced voice recognition status", "voice recognition text"
    ]

    /// The named features of a +BRSF bitmap.
    public var features: [String]? {
        guard command == "+BRSF", let v = Int(arguments) else { return nil }
        let names = isCommand ? Self.hfFeatures : Self.agFeatures
        return names.indices.filter { v & (1 << $0) != 0 }.map { names[$0] }
    }

    /// Codec names of AT+BAC / +BCS / AT+BCS.
    public var codecs: [String]? {
        guard command == "+BAC" || command == "+BCS" else { return nil }
        return arguments.split(separator: ",").compactMap { Int($0.trimmingSpaces) }.map(Self.codecName)
    }

    /// Indicator names of a `+CIND: ("call",(0,1)),…` test result.
    public var indicatorNames: [String]? {
        guard command == "+CIND", kind == .result, arguments.hasPrefix("(") else { return nil }
        var names: [String] = []
        var inQuote = false, cur = ""
        for ch in arguments {
            if ch == "\"" {
                if inQuote { names.append(cur); cur = "" }
                inQuote.toggle()
            } else if inQuote {
                cur.append(ch)
            }
        }
        return names
    }

    /// +CIEV index (1-based into the +CIND list).
    public var indicatorIndex: Int? {
        guard command == "+CIEV" else { return nil }
        return arguments.split(separator: ",").first.flatMap { Int($0.trimmingSpaces) }
    }

    public func describe<S: FieldSink>(into sink: inout S) {
        sink.string("command", command)
        sink.string("type", kind.name)
        sink.string("direction", isCommand ? "HF→AG" : "AG→HF")
        if !arguments.isEmpty { sink.string("arguments", arguments) }
        if let f = features { sink.beginArray("features"); for n in f { sink.string("", n) }; sink.endArray() }
        if let c = codecs { sink.beginArray("codecs"); for n in c { sink.string("", n) }; sink.endArray() }
        if let n = indicatorNames { sink.beginArray("indicators"); for x in n { sink.string("", x) }; sink.endArray() }
        if let n = indicator { sink.string("indicator", n) }
    }
}

/// Splits an RFCOMM data stream into AT lines: the HF ends commands with CR, the AG wraps
/// results in CR LF (HFP 1.8 §4.34.1). Keeps at most 512 bytes of an unfinished line.
struct ATLineSplitter {
    var pending: [UInt8] = []

    /// Appends `data`; returns the lines it completed.
    mutating func feed(_ data: UnsafeRawBufferPointer) -> [String] {
        var out: [String] = []
        for b in data {
            if b == 0x0D || b == 0x0A {
                if !pending.isEmpty { out.append(String(decoding: pending, as: UTF8.self)); pending.removeAll(keepingCapacity: true) }
            } else if pending.count < 512 {
                pending.append(b)
            }
        }
        return out
    }

    /// Looks like AT text: printable ASCII and line ends only.
    static func isText(_ d: UnsafeRawBufferPointer) -> Bool {
        !d.isEmpty && d.allSatisfy { ($0 >= 0x20 && $0 < 0x7F) || $0 == 0x0D || $0 == 0x0A }
    }
}

extension StringProtocol {
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first == " " { s = s.dropFirst() }
        while s.last == " " { s = s.dropLast() }
        return String(s)
    }
}
