import BluesiftWire

extension Plugin {
    /// Decodes one complete frame. Never traps: malformed frames set `error` and keep the
    /// fields decoded so far; a checksum mismatch is a verdict, not an error.
    public func decode(_ bytes: UnsafeRawBufferPointer) -> DecodedMessage {
        let run = DecodeRun(plugin: self, frame: bytes)
        return run.run()
    }

    public func decode(_ bytes: [UInt8]) -> DecodedMessage { bytes.withUnsafeBytes { decode($0) } }

    /// Decodes an advertising payload: `context` answers `_rssi`, `_address`...; `key` gives the
    /// key of a `decrypt:` field for an address (nil: none known).
    public func decode(
        _ bytes: UnsafeRawBufferPointer, context: AdvertisingContext,
        keys: [UInt64: [UInt8]] = [:]
    ) -> DecodedMessage {
        let run = DecodeRun(plugin: self, frame: bytes)
        run.context = context
        run.keys = keys
        return run.run()
    }
}

struct DecodeFailure: Error { var message: String }

/// One decode: a scope stack of integer values for expressions, checksum jobs done at the end.
final class DecodeRun {
    let plugin: Plugin
    var frame: UnsafeRawBufferPointer
    var context: AdvertisingContext?
    var keys: [UInt64: [UInt8]] = [:]
    var mic: MICVerdict?
    var rawNote: String?
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
        case "_rssi", "_address", "_address_type", "_company", "_pdu", "_rule": return context?.value(of: name)
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
                if v == c.found {
                    if verdict == nil { verdict = .ok }
                } else {
                    verdict = .bad; expected = v; found = c.found
                }
            } catch let e {
                if error == nil { error = e.message }
            }
        }
        var msg = message ?? (error == nil ? plugin.defaultMessage : "malformed")
        if message == nil, error == nil, hasTopSwitch { msg = "unknown" }
        var d = DecodedMessage(
            plugin: plugin.id, message: msg, fields: Self.numberRepeats(fields + messageFields),
            checksum: verdict, checksumExpected: expected, checksumFound: found, header: header,
            error: error, bytes: Array(frame))
        d.mic = mic
        d.raw = rawNote
        return d
    }

    /// A name standing more than once in a message (flattened objects: two buttons) is
    /// numbered by occurrence, every occurrence: `button_1`, `button_2`, as bthome-ble does.
    static func numberRepeats(_ fields: [PluginField]) -> [PluginField] {
        guard fields.count > 1 else { return fields }
        var repeated = false
        outer: for i in 1..<fields.count {
            for j in 0..<i where fields[j].name == fields[i].name { repeated = true; break outer }
        }
        guard repeated else { return fields }
        var total: [String: Int] = [:]
        for f in fields { total[f.name, default: 0] += 1 }
        var seen: [String: Int] = [:]
        return fields.map { f in
            guard total[f.name, default: 0] > 1 else { return f }
            let n = seen[f.name, default: 0] + 1
            seen[f.name] = n
            var g = f
            g.name = f.name + "_" + String(n)
            return g
        }
    }

    /// When the body failed before the checksum was reached (a newer firmware's layout), the
    /// framing still places it: trailing fixed-size, unconditional integer fields of the frame
    /// sit at known offsets from its end, so their checksums are checked from there.
    func checksumsFromFraming() {
        var offset = frame.count
        for f in plugin.types[plugin.frameType].fields.reversed() {
            guard f.condition == nil, case .none = f.repeatSpec, f.bits.isEmpty,
                case .integer(.fixed(let size, _, let endian)) = f.kind, offset >= size
            else { return }
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
        var hasValid = false
        for f in plugin.types[t].fields {
            if top { partial = out }
            if let c = f.condition {
                if try eval(c) == 0 { continue }
                // A repeated id (each with `if`): the first whose condition holds.
                if scopeNames[mark...].contains(f.id) { continue }
            }
            if f.valid != nil { hasValid = true }
            let start = pos
            defer { lengths[f.id] = Int64(pos - start) }
            switch f.repeatSpec {
            case .none:
                let v = try decodeOne(f, top: top)
                guard let v else { continue }
                if f.flatten || f.decrypt != nil || f.encoding != nil {
                    if case .object(let fs) = v { out.append(contentsOf: fs); continue }
                }
                if !f.hidden { out.append(PluginField(name: f.id, value: v, unit: f.number?.unit, notReading: f.notReading)) }
            case .count(let e):
                let n = try eval(e)
                guard n >= 0, n <= Int64(Self.maxElements) else { throw DecodeFailure(message: "\(f.id): repeat count \(n) out of range") }
                var list: [PluginValue] = []
                for i in 0..<n {
                    index = i
                    let itemStart = pos
                    if let v = try decodeOne(f, top: false) {
                        if f.flatten { flatten(v, f, itemStart, into: &out) } else { list.append(v) }
                    }
                }
                counts[f.id] = Int64(n)
                if !f.hidden && !f.flatten { out.append(PluginField(name: f.id, value: .list(list))) }
            case .eos:
                var list: [PluginValue] = []
                var i: Int64 = 0
                while pos < end {
                    index = i; i += 1
                    let before = pos
                    let item: PluginValue?
                    if f.flatten {
                        // A flattened list is a device's object list: an item that does not
                        // fit (a trailing byte) ends it, its bytes kept as unknown_objects.
                        let savedEnd = end, mark = scopeNames.count
                        do { item = try decodeOne(f, top: false) } catch {
                            end = savedEnd
                            scopeNames.removeSubrange(mark...); scopeValues.removeSubrange(mark...)
                            out.append(PluginField(name: "unknown_objects", value: .bytes(Array(frame[before..<end]))))
                            pos = end
                            break
                        }
                    } else {
                        item = try decodeOne(f, top: false)
                    }
                    if let v = item {
                        if f.flatten { if !flatten(v, f, before, into: &out) { break } } else { list.append(v) }
                    }
                    if pos == before { break } // zero-width element: stop, never spin
                }
                counts[f.id] = Int64(i)
                if !f.hidden && !f.flatten { out.append(PluginField(name: f.id, value: .list(list))) }
            }
        }
        if hasValid {
            // Validity is judged once the type is whole (it may name later fields).
            for f in plugin.types[t].fields {
                guard let e = f.valid, scopeNames[mark...].contains(f.id) else { continue }
                if (try? eval(e)) ?? 1 == 0, let i = out.lastIndex(where: { $0.name == f.id }) {
                    out[i].value = .null
                    // The raw value stays with the message, so it re-encodes byte for byte.
                    if let raw = lookup(f.id) { header[f.id] = raw }
                }
            }
        }
        if top { partial = out }
        return out
    }

    /// Lifts one item of a flattened list into `out`: its visible fields, the fields of the
    /// case its switch chose, never its selector. An item whose id has no case ends the list:
    /// its bytes and the rest become `unknown_objects` (false: stop).
    @discardableResult
    func flatten(_ v: PluginValue, _ f: FieldDef, _ itemStart: Int, into out: inout [PluginField]) -> Bool {
        guard case .object(let fs) = v, case .type(let it, _) = f.kind else {
            out.append(PluginField(name: f.id, value: v)); return true
        }
        let defs = plugin.types[it].fields
        var selectors = Set<String>()
        for d in defs { if case .switchOn(.ref(let s), _, _, _) = d.kind { selectors.insert(s) } }
        for x in fs {
            if selectors.contains(x.name) { continue }
            guard let d = defs.first(where: { $0.id == x.name }), case .switchOn = d.kind else { out.append(x); continue }
            switch x.value {
            case .object(let inner): out.append(contentsOf: inner)
            case .bytes:
                out.append(PluginField(name: "unknown_objects", value: .bytes(Array(frame[itemStart..<end]))))
                pos = end
                return false
            default: out.append(x)
            }
        }
        return true
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
            // Hidden values of a message's own fields stay with it, so it re-encodes; so does
            // which of several `na` sentinels a null came from.
            if top || (f.keepsRaw && header[f.id] == nil) { header[f.id] = v }
            if let c = f.checksum { checksums.append((c, start, UInt64(bitPattern: v))) }
            if !f.bits.isEmpty {
                var sub: [PluginField] = []
                for b in f.bits {
                    let x = (v >> Int64(b.shift)) & ((1 << Int64(b.width)) - 1)
                    push(b.id, x)
                    sub.append(PluginField(name: b.id, value: named(x, b.enumIndex) ?? Self.number(x, b.number), unit: b.number?.unit))
                }
                return .object(sub)
            }
            if let e = named(v, f.enumIndex) {
                if plugin.joins, case .named(_, let n) = e { joined[f.id] = n }
                return e
            }
            if f.number != nil { return Self.number(v, f.number) }
            if case .fixed(let size, let signed, _) = k, !signed, size == 8 { return .uint(UInt64(bitPattern: v)) }
            return .int(v)
        case .computed(let e):
            let v = try eval(e)
            push(f.id, v)
            if top { header[f.id] = v }
            return named(v, f.enumIndex) ?? Self.number(v, f.number)
        case .context(let name):
            if name == "_name" { return context?.name.map { .string($0) } ?? .null }
            guard let v = lookup(name) else { return .null }
            push(f.id, v)
            if name == "_address" { return .string(BDAddr(UInt64(bitPattern: v)).description) }
            return Self.number(v, f.number)
        case .real(let kind, let endian):
            let n = kind.size
            guard end - pos >= n else { throw DecodeFailure(message: "\(f.id): needs \(n) bytes at offset \(pos), \(end - pos) left") }
            let r = ByteReader(UnsafeRawBufferPointer(rebasing: frame[pos..<end]))
            let u = r.getUInt(at: 0, size: n, endianness: endian) ?? 0
            pos += n
            push(f.id, Int64(bitPattern: u))
            return Self.real(kind, u, f.number)
        case .mac(let endian):
            guard end - pos >= 6 else { throw DecodeFailure(message: "\(f.id): needs 6 bytes at offset \(pos), \(end - pos) left") }
            var v: UInt64 = 0
            for i in 0..<6 { v = v << 8 | UInt64(frame[pos + (endian == .big ? i : 5 - i)]) }
            pos += 6
            push(f.id, Int64(v))
            return .string(BDAddr(v).description)
        case .uuid(let endian):
            guard end - pos >= 16 else { throw DecodeFailure(message: "\(f.id): needs 16 bytes at offset \(pos), \(end - pos) left") }
            var b = Array(frame[pos..<pos + 16])
            if endian == .big { b.reverse() }
            pos += 16
            return .string(BluetoothUUID(littleEndian: b)?.longDescription ?? Hex.string(b))
        case .join(let parts):
            var s = ""
            for p in parts { s += joined[p] ?? "" }
            return .string(s)
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
            if let d = f.decrypt, d.hasPrefix("unsupported:") { rawNote = "unsupported encryption: " + d.dropFirst(12) }
            pos += n
            if case .terminator = s { pos += 1 }
            return .bytes(v)
        case .string(let s):
            let n = try size(s, f)
            var slice = frame[pos..<pos + n]
            pos += n
            if case .terminator = s {
                pos += 1
            } else if f.expand == nil {
                while let l = slice.last, l == 0 { slice = slice.dropLast() } // NUL padding (0 is a code when expanded)
            }
            var text: String
            if let x = f.expand {
                text = ""
                for b in slice {
                    if let label = plugin.enums[x].name(of: Int64(b)) { text += label } else { text.unicodeScalars.append(Unicode.Scalar(b)) }
                }
            } else {
                text = String(decoding: slice, as: UTF8.self)
            }
            if plugin.joins { joined[f.id] = text }
            return .string(text)
        case .type(let t, let s):
            if let preset = f.decrypt { return try decrypted(preset, t, s, f) }
            if let e = f.encoding { return try textDecoded(e, t, s, f) }
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
            var fields = try sub(t, s, f, top: false)
            if isMessage { messageFields.append(contentsOf: fields); return nil }
            if f.flatten || plugin.flattens { for i in fields.indices where fields[i].origin == nil { fields[i].origin = key } }
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

    /// Text of earlier string and enum fields, for `join:` (kept only by plugins that join).
    var joined: [String: String] = [:]

    /// raw × scale + offset (interpolated, when a table is given); a sentinel is null.
    static func number(_ raw: Int64, _ n: NumberFormat?) -> PluginValue {
        guard let n else { return .int(raw) }
        if n.na.contains(raw) { return .null }
        if n.isPlain { return .int(raw) }
        return .decimal(raw: raw, value: n.value(Double(raw)), decimals: n.decimals)
    }

    /// IEEE 754 and IEEE 11073 values from their bits.
    static func real(_ kind: RealKind, _ u: UInt64, _ n: NumberFormat?) -> PluginValue {
        if let n, n.na.contains(Int64(bitPattern: u)) { return .null }
        switch kind {
        case .ieee(let width):
            var v: Double
            switch width {
            case 2: v = Double(RealCoding.halfToFloat(UInt16(truncatingIfNeeded: u)))
            case 4: v = Double(Float(bitPattern: UInt32(truncatingIfNeeded: u)))
            default: v = Double(bitPattern: u)
            }
            guard v.isFinite else { return .null }
            if let n, !n.isPlain { return .decimal(raw: Int64(bitPattern: u), value: n.value(v), decimals: n.decimals) }
            if width < 8 { v = Double(Float(v).description) ?? v } // the binary32's own shortest text
            return .real(v)
        case .sfloat, .float11073:
            guard let (m, e) = RealCoding.ieee11073(u, sfloat: kind == .sfloat) else { return .null }
            var v = Double(m)
            var p = e
            while p > 0 { v *= 10; p -= 1 }
            while p < 0 { v /= 10; p += 1 }
            if let n, !n.isPlain { return .decimal(raw: Int64(bitPattern: u), value: n.value(v), decimals: n.decimals) }
            return .decimal(raw: Int64(bitPattern: u), value: v, decimals: max(0, -e))
        }
    }
}
