import BluesiftWire

extension Plugin {
    /// Decodes one complete frame. Never traps: malformed frames set `error` and keep the
    /// fields decoded so far; a checksum mismatch is a verdict, not an error.
    public func decode(_ bytes: UnsafeRawBufferPointer) -> DecodedMessage {
        let run = DecodeRun(plugin: self, frame: bytes)
        return run.run()
    }

    public func decode(_ bytes: [UInt8]) -> DecodedMessage { bytes.withUnsafeBytes { decode($0) } }
}

struct DecodeFailure: Error { var message: String }

/// One decode: a scope stack of integer values for expressions, checksum jobs done at the end.
final class DecodeRun {
    let plugin: Plugin
    let frame: UnsafeRawBufferPointer
    var scopeNames: [String] = []
    var scopeValues: [Int64] = []
    var header: [String: Int64] = [:]
    var message: String?
    var messageFields: [PluginField] = []
    var checksums: [(spec: ChecksumSpec, offset: Int, found: UInt64)] = []
    var depth = 0
    var elements = 0
    var index: Int64 = 0
    var pos = 0
    var end = 0
    /// `FIELD._length` (bytes) and `FIELD._count` (list items) of fields decoded so far.
    var lengths: [String: Int64] = [:]
    var counts: [String: Int64] = [:]

    static let maxDepth = 16
    static let maxElements = 65_536

    init(plugin: Plugin, frame: UnsafeRawBufferPointer) {
        self.plugin = plugin; self.frame = frame
    }

    func lookup(_ name: String) -> Int64? {
        switch name {
        case "_remaining": return Int64(end - pos)
        case "_size": return Int64(frame.count)
        case "_offset": return Int64(pos)
        case "_index": return index
        default:
            var i = scopeNames.count - 1
            while i >= 0 { if scopeNames[i] == name { return scopeValues[i] }; i -= 1 }
            if name.hasSuffix("._length") { return lengths[String(name.dropLast(8))] }
            if name.hasSuffix("._count") { return counts[String(name.dropLast(7))] }
            return nil
        }
    }

    func eval(_ e: Expr) throws(DecodeFailure) -> Int64 {
        do { return try e.evaluate(lookup) } catch { throw DecodeFailure(message: error.message) }
    }

    func run() -> DecodedMessage {
        var fields: [PluginField] = []
        var error: String?
        pos = 0; end = frame.count
        do {
            fields = try decodeType(plugin.frameType, top: true)
            if pos < frame.count { error = "\(frame.count - pos) bytes after the end of the frame" }
        } catch let e {
            error = e.message
            fields = partial
        }
        if error != nil && checksums.isEmpty { checksumsFromFraming() }
        var verdict: ChecksumVerdict?
        var expected: UInt64?, found: UInt64?
        for c in checksums {
            scopeNames = Array(header.keys); scopeValues = scopeNames.map { header[$0]! }
            pos = c.offset; end = frame.count
            do throws(DecodeFailure) {
                var from: Int64 = 0, to = Int64(c.offset)
                if let e = c.spec.from { from = try eval(e) }
                if let e = c.spec.to { to = try eval(e) }
                guard from >= 0, from <= to, to <= Int64(frame.count) else {
                    throw DecodeFailure(message: "checksum range \(from)..<\(to) is outside the frame")
                }
                let v = c.spec.algorithm.compute(UnsafeRawBufferPointer(rebasing: frame[Int(from)..<Int(to)]))
                if v == c.found { if verdict == nil { verdict = .ok } } else {
                    verdict = .bad; expected = v; found = c.found
                }
            } catch let e {
                if error == nil { error = e.message }
            }
        }
        var msg = message ?? (error == nil ? plugin.defaultMessage : "malformed")
        if message == nil, error == nil, hasTopSwitch { msg = "unknown" }
        return DecodedMessage(plugin: plugin.id, message: msg, fields: fields + messageFields,
                              checksum: verdict, checksumExpected: expected, checksumFound: found, header: header,
                              error: error, bytes: Array(frame))
    }

    /// When the body failed before the checksum was reached (a newer firmware's layout), the
    /// framing still places it: trailing fixed-size, unconditional integer fields of the frame
    /// sit at known offsets from its end, so their checksums are checked from there.
    func checksumsFromFraming() {
        var offset = frame.count
        for f in plugin.types[plugin.frameType].fields.reversed() {
            guard f.condition == nil, case .none = f.repeatSpec, f.bits.isEmpty,
                  case .integer(.fixed(let size, _, let endian)) = f.kind, offset >= size else { return }
            offset -= size
            guard let c = f.checksum else { continue }
            let r = ByteReader(UnsafeRawBufferPointer(rebasing: frame[offset..<(offset + size)]))
            guard let u = r.getUInt(at: 0, size: size, endianness: endian) else { return }
            checksums.append((c, offset, u))
        }
    }

    var hasTopSwitch: Bool {
        plugin.types[plugin.frameType].fields.contains { if case .switchOn = $0.kind { true } else { false } }
    }

    /// Top-level visible fields decoded before a failure.
    var partial: [PluginField] = []

    func decodeType(_ t: Int, top: Bool) throws(DecodeFailure) -> [PluginField] {
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maxDepth else { throw DecodeFailure(message: "types nested deeper than \(Self.maxDepth)") }
        let mark = scopeNames.count
        defer { scopeNames.removeSubrange(mark...); scopeValues.removeSubrange(mark...) }
        var out: [PluginField] = []
        for f in plugin.types[t].fields {
            if top { partial = out }
            if let c = f.condition, try eval(c) == 0 { continue }
            let start = pos
            defer { lengths[f.id] = Int64(pos - start) }
            switch f.repeatSpec {
            case .none:
                let v = try decodeOne(f, top: top)
                if let v, !f.hidden { out.append(PluginField(name: f.id, value: v)) }
            case .count(let e):
                let n = try eval(e)
                guard n >= 0, n <= Int64(Self.maxElements) else { throw DecodeFailure(message: "\(f.id): repeat count \(n) out of range") }
                var list: [PluginValue] = []
                for i in 0..<n {
                    index = i
                    if let v = try decodeOne(f, top: false) { list.append(v) }
                }
                counts[f.id] = Int64(list.count)
                if !f.hidden { out.append(PluginField(name: f.id, value: .list(list))) }
            case .eos:
                var list: [PluginValue] = []
                var i: Int64 = 0
                while pos < end {
                    index = i; i += 1
                    let before = pos
                    if let v = try decodeOne(f, top: false) { list.append(v) }
                    if pos == before { break }   // zero-width element: stop, never spin
                }
                counts[f.id] = Int64(list.count)
                if !f.hidden { out.append(PluginField(name: f.id, value: .list(list))) }
            }
        }
        if top { partial = out }
        return out
    }

    func push(_ name: String, _ v: Int64) { scopeNames.append(name); scopeValues.append(v) }

    func size(_ s: SizeSpec, _ f: FieldDef) throws(DecodeFailure) -> Int {
        let n: Int64
        switch s {
        case .fixed(let v): n = Int64(v)
        case .expr(let e): n = try eval(e)
        case .eos: n = Int64(end - pos)
        case .terminator(let b):
            var i = pos
            while i < end, frame[i] != b { i += 1 }
            guard i < end else { throw DecodeFailure(message: "\(f.id): no terminator 0x\(Hex.string([b])) before offset \(end)") }
            return i - pos
        }
        guard n >= 0, n <= Int64(end - pos) else {
            throw DecodeFailure(message: "\(f.id): size \(n) at offset \(pos) but \(end - pos) bytes left")
        }
        return Int(n)
    }

    func readInt(_ k: IntKind, _ f: FieldDef) throws(DecodeFailure) -> Int64 {
        let r = ByteReader(UnsafeRawBufferPointer(rebasing: frame[pos..<end]))
        switch k {
        case .fixed(let size, let signed, let endian):
            guard let u = r.getUInt(at: 0, size: size, endianness: endian) else {
                throw DecodeFailure(message: "\(f.id): needs \(size) bytes at offset \(pos), \(end - pos) left")
            }
            pos += size
            if signed && size < 8 {
                let shift = UInt64(64 - size * 8)
                return Int64(bitPattern: u << shift) >> Int64(shift)
            }
            return Int64(bitPattern: u)
        case .vlq:
            var v: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                guard pos < end else { throw DecodeFailure(message: "\(f.id): truncated variable-length integer") }
                let b = frame[pos]; pos += 1
                v |= UInt64(b & 0x7F) << shift
                if b & 0x80 == 0 { return Int64(bitPattern: v) }
                shift += 7
                guard shift < 63 else { throw DecodeFailure(message: "\(f.id): variable-length integer too long") }
            }
        }
    }

    /// One element; nil for fields that produce no value (never, today, but kept for `if`).
    func decodeOne(_ f: FieldDef, top: Bool) throws(DecodeFailure) -> PluginValue? {
        elements += 1
        guard elements <= Self.maxElements else { throw DecodeFailure(message: "more than \(Self.maxElements) elements") }
        switch f.kind {
        case .integer(let k):
            let start = pos
            let v = try readInt(k, f)
            push(f.id, v)
            if top { header[f.id] = v }
            if let c = f.checksum { checksums.append((c, start, UInt64(bitPattern: v))) }
            if !f.bits.isEmpty {
                var sub: [PluginField] = []
                for b in f.bits {
                    let x = (v >> Int64(b.shift)) & ((1 << Int64(b.width)) - 1)
                    push(b.id, x)
                    sub.append(PluginField(name: b.id, value: named(x, b.enumIndex) ?? .int(x)))
                }
                return .object(sub)
            }
            if let e = named(v, f.enumIndex) { return e }
            if case .fixed(let size, let signed, _) = k, !signed, size == 8 { return .uint(UInt64(bitPattern: v)) }
            return .int(v)
        case .contents(let magic):
            guard end - pos >= magic.count else { throw DecodeFailure(message: "\(f.id): truncated magic at offset \(pos)") }
            for (i, b) in magic.enumerated() where frame[pos + i] != b {
                throw DecodeFailure(message: "bad magic at offset \(pos + i): 0x\(Hex.string([frame[pos + i]])), expected 0x\(Hex.string([b]))")
            }
            pos += magic.count
            return .bytes(magic)
        case .bytes(let s):
            let n = try size(s, f)
            let v = Array(frame[pos..<pos + n])
            pos += n
            if case .terminator = s { pos += 1 }
            return .bytes(v)
        case .string(let s):
            let n = try size(s, f)
            var slice = frame[pos..<pos + n]
            pos += n
            if case .terminator = s { pos += 1 } else {
                while let l = slice.last, l == 0 { slice = slice.dropLast() }   // NUL padding
            }
            return .string(String(decoding: slice, as: UTF8.self))
        case .type(let t, let s):
            return .object(try sub(t, s, f, top: false))
        case .switchOn(let on, let cases, let def, let s):
            let key = try eval(on)
            let chosen = cases.first { $0.0 == key }?.1 ?? def
            let isMessage = top && message == nil
            guard let t = chosen else {
                let n = try s.map { x throws(DecodeFailure) in try size(x, f) } ?? (end - pos)
                let payload = Array(frame[pos..<pos + n])
                pos += n
                if isMessage {
                    message = "unknown"
                    if case .ref(let sel) = on { messageFields.append(PluginField(name: sel, value: .int(key))) }
                    messageFields.append(PluginField(name: "payload", value: .bytes(payload)))
                    return nil
                }
                return .bytes(payload)
            }
            if isMessage { message = plugin.types[t].name }
            let fields = try sub(t, s, f, top: false)
            if isMessage { messageFields.append(contentsOf: fields); return nil }
            return .object(fields)
        }
    }

    /// Decodes a nested type, in a sub-range when sized.
    func sub(_ t: Int, _ s: SizeSpec?, _ f: FieldDef, top: Bool) throws(DecodeFailure) -> [PluginField] {
        guard let s else { return try decodeType(t, top: top) }
        let n = try size(s, f)
        let savedEnd = end
        end = pos + n
        defer { pos = end; end = savedEnd }
        return try decodeType(t, top: top)
    }

    func named(_ v: Int64, _ e: Int?) -> PluginValue? {
        guard let e, let n = plugin.enums[e].name(of: v) else { return nil }
        return .named(v, n)
    }
}
