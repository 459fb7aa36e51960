import Testing
import Foundation
import BluesiftSecurity

/// `bluesift redact` on every corpus capture: the redacted file decodes to the same records
/// with only addresses (consistently renamed) and key material (zeroed) changed, holds none of
/// the original addresses or keys, and tshark reads as many records from it.
@Suite struct RedactTests {
    static let tshark = "/usr/bin/tshark"

    /// Every capture of the corpus and Captures/; BLUESIFT_REDACT_ONLY=substring narrows it
    /// while debugging one file.
    static var corpus: [String] {
        let only = ProcessInfo.processInfo.environment["BLUESIFT_REDACT_ONLY"]
        var out: [String] = []
        for dir in [CLI.corpus, CLI.captures] {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
            for n in names.sorted() where !n.hasSuffix(".md") && !n.hasSuffix(".json") && !n.hasSuffix(".txt") {
                if dir == CLI.captures, FileManager.default.fileExists(atPath: CLI.corpus.appendingPathComponent(n).path) { continue }
                if let only, !n.contains(only) { continue }
                out.append(dir.appendingPathComponent(n).path)
            }
        }
        return out
    }

    static func isAddress(_ s: String) -> Bool {
        let u = Array(s.utf8)
        guard u.count == 17 else { return false }
        for (i, c) in u.enumerated() {
            if i % 3 == 2 { if c != UInt8(ascii: ":") { return false } } else if !(c >= 48 && c <= 57 || c >= 97 && c <= 102) { return false }
        }
        return true
    }

    /// Wire bytes (little-endian) of "aa:bb:cc:dd:ee:ff".
    static func wire(_ a: String) -> [UInt8] { a.split(separator: ":").reversed().map { UInt8($0, radix: 16)! } }
    static func hexBytes(_ s: String) -> [UInt8]? {
        let u = Array(s.utf8)
        guard u.count % 2 == 0, !u.isEmpty else { return nil }
        var out: [UInt8] = []
        for i in stride(from: 0, to: u.count, by: 2) {
            guard let b = UInt8(String(decoding: u[i..<i + 2], as: UTF8.self), radix: 16) else { return nil }
            out.append(b)
        }
        return out
    }

    static func distinctive(_ a: [UInt8]) -> Bool { Set(a).count >= 4 }

    static func isUUID(_ s: String) -> Bool {
        let u = Array(s.utf8)
        return u.count == 36 && [8, 13, 18, 23].allSatisfy { u[$0] == UInt8(ascii: "-") }
    }

    static func hexDigit(_ c: UInt8) -> Bool { c >= 48 && c <= 57 || c >= 65 && c <= 70 || c >= 97 && c <= 102 }

    /// Addresses written as text ("73:C9:68:5E:12:18", either case) in a log line: (range, text).
    static func textAddresses(_ s: String) -> [(Range<Int>, String)] {
        let u = Array(s.utf8)
        var out: [(Range<Int>, String)] = []
        var i = 0
        while i + 17 <= u.count {
            // Not inside a longer colon-separated hex run; "P(0):44:09:…" is an address.
            let before = i == 0 || !hexDigit(u[i - 1]) && (u[i - 1] != 58 || i < 2 || !hexDigit(u[i - 2]))
            let after = i + 17 == u.count || !hexDigit(u[i + 17]) && (u[i + 17] != 58 || i + 18 == u.count || !hexDigit(u[i + 18]))
            let edgeOK = before && after
            if edgeOK, (0..<17).allSatisfy({ $0 % 3 == 2 ? u[i + $0] == 58 : hexDigit(u[i + $0]) }) {
                out.append((i..<i + 17, String(decoding: u[i..<i + 17], as: UTF8.self)))
                i += 17
            } else {
                i += 1
            }
        }
        return out
    }

    static let keyNames: Set<String> = ["ltk", "irk", "csrk", "link_key", "key", "pin", "pin_code", "confirm", "random", "long_term_key"]

    struct Check {
        /// The pseudonyms `--salt corpus` must give (recomputed here from the salt).
        let pseudonyms = AddressPseudonyms(salt: Array("corpus".utf8))
        var cache: [[UInt8]: [UInt8]] = [:]
        var map: [String: String] = [:] // original address text → pseudonym text
        var textOriginals: Set<String> = [] // addresses met inside log text, as written
        var nameOriginals: Set<String> = [] // device names that ended in their address's last bytes
        var keys: [[UInt8]] = []
        var problems: [String] = []
        var undecryptable = 0
        var changedLeaves = 0

        mutating func learn(_ a: Any, _ b: Any) {
            switch (a, b) {
            case let (x as [String: Any], y as [String: Any]):
                for (k, v) in x { if let w = y[k] { learn(v, w) } }
            case let (x as [Any], y as [Any]):
                for (v, w) in zip(x, y) { learn(v, w) }
            case let (x as String, y as String) where isAddress(x) && isAddress(y) && x != y:
                if map[x] == nil { map[x] = y }
            default: break
            }
        }

        mutating func collectKeys(_ a: Any, key: String = "") {
            switch a {
            case let x as [String: Any]: for (k, v) in x { collectKeys(v, key: k) }
            case let x as [Any]: for v in x { collectKeys(v, key: key) }
            case let s as String where RedactTests.keyNames.contains(key):
                if let b = hexBytes(s), b.count >= 8, b.contains(where: { $0 != 0 }) { keys.append(b) }
            default: break
            }
        }

        /// Equal, or changed only where the redactor may change things.
        mutating func compare(_ a: Any, _ b: Any, path: String, frame: Int) {
            switch (a, b) {
            case let (x as [String: Any], y as [String: Any]):
                // A sniffed packet bluesift decrypted with keys derived from the pairing it saw
                // stays encrypted once the pairing values are zeroed: nothing more to compare.
                if path.isEmpty, let l = x["ll"] as? [String: Any], l["decrypted"] != nil,
                    let m = y["ll"] as? [String: Any], m["encrypted"] != nil
                {
                    undecryptable += 1
                    return
                }
                if Set(x.keys) != Set(y.keys) { problems.append("frame \(frame) \(path): keys \(x.keys.sorted()) → \(y.keys.sorted())"); return }
                // Manufacturer Specific Data: company identifier and data are one run of bytes,
                // which may hold an address (ix7's advertising carries its own).
                if x["type"] as? Int == 255, let ci = x["company_id"] as? Int, let cd = x["data"] as? String,
                    let di = y["company_id"] as? Int, let dd = y["data"] as? String, ci != di || cd != dd
                {
                    let ob = [UInt8(ci & 0xFF), UInt8(ci >> 8)] + (hexBytes(cd) ?? [])
                    let nb = [UInt8(di & 0xFF), UInt8(di >> 8)] + (hexBytes(dd) ?? [])
                    changedLeaves += 1
                    if ob.count != nb.count || !hexExplained(ob, nb) { problems.append("frame \(frame) \(path): manufacturer data \(ob) → \(nb)") }
                    for (k, v) in x where k != "company_id" && k != "data" && k != "company_name" { compare(v, y[k]!, path: path + "." + k, frame: frame) }
                    return
                }
                for (k, v) in x { compare(v, y[k]!, path: path + "." + k, frame: frame) }
            case let (x as [Any], y as [Any]):
                if x.count != y.count { problems.append("frame \(frame) \(path): \(x.count) → \(y.count) items"); return }
                for (i, (v, w)) in zip(x, y).enumerated() { compare(v, w, path: path + "[\(i)]", frame: frame) }
            case let (x as String, y as String):
                if x == y { return }
                changedLeaves += 1
                if isAddress(x) {
                    let want = pseudo(wire(x))
                    if wire(y) != want { problems.append("frame \(frame) \(path): \(x) → \(y), not its pseudonym") }
                    return
                }
                if path.hasSuffix(".crc") { return } // a sniffed packet's CRC follows its bytes
                // A vendor UUID that embeds a device address (the band's 8e7f…-c0ba0d000001).
                if isUUID(x), isUUID(y), let ob = hexBytes(x.replacingOccurrences(of: "-", with: "")),
                    let nb = hexBytes(y.replacingOccurrences(of: "-", with: ""))
                {
                    if !hexExplained(ob, nb) { problems.append("frame \(frame) \(path): \(x) → \(y)") }
                    return
                }
                if let ob = hexBytes(x), let nb = hexBytes(y), ob.count == nb.count {
                    if !hexExplained(ob, nb) { problems.append("frame \(frame) \(path): \(x) → \(y)") }
                    return
                }
                // A name ending in the last 2 or 3 bytes of a device's address ("MODEL_6FAB"):
                // those digits become the pseudonym's, in the same case.
                if nameSuffixExplained(x, y) || hexRunsExplained(x, y) { nameOriginals.insert(x); return }
                // Log text: each address written in it becomes its pseudonym, in the same case.
                var t = Array(x.utf8)
                for (r, a) in textAddresses(x) {
                    textOriginals.insert(a)
                    let p = pseudo(wire(a.lowercased()))
                    let upper = a.contains { "ABCDEF".contains($0) }
                    let text = p.reversed().map { String(format: upper ? "%02X" : "%02x", $0) }.joined(separator: ":")
                    t.replaceSubrange(r, with: Array(text.utf8))
                }
                if t != Array(y.utf8) { problems.append("frame \(frame) \(path): \(x) → \(y)") }
            default:
                if "\(a)" != "\(b)" { problems.append("frame \(frame) \(path): \(a) → \(b)") }
            }
        }

        mutating func nameSuffixExplained(_ x: String, _ y: String) -> Bool {
            let (o, n) = (Array(x.utf8), Array(y.utf8))
            guard o.count == n.count else { return false }
            for k in [3, 2] where o.count > 2 * k && o.dropLast(2 * k) == n.dropLast(2 * k) {
                let tail = String(decoding: o.suffix(2 * k), as: UTF8.self)
                for a in map.keys where a.replacingOccurrences(of: ":", with: "").hasSuffix(tail.lowercased()) {
                    let p = pseudo(wire(a))
                    let upper = tail.contains { "ABCDEF".contains($0) }
                    if Array(n.suffix(2 * k)) == Array(p[0..<k].reversed().map { String(format: upper ? "%02X" : "%02x", $0) }.joined().utf8) { return true }
                }
            }
            return false
        }

        /// A known address written as 12 hex digits (either byte order and case, inside a longer
        /// run too: novax's "Venus_2C4CC63D9E4F"): those digits become the pseudonym's, in the
        /// same order and case; nothing else changed.
        mutating func hexRunsExplained(_ x: String, _ y: String) -> Bool {
            let (o, n) = (Array(x.utf8), Array(y.utf8))
            guard o.count == n.count, o.count >= 12 else { return false }
            var ok = zip(o, n).map { $0 == $1 }
            for i in 0...(o.count - 12) where !ok[i..<i + 12].allSatisfy({ $0 }) {
                guard o[i..<i + 12].allSatisfy(RedactTests.hexDigit), let b = hexBytes(String(decoding: o[i..<i + 12], as: UTF8.self)) else { continue }
                let upper = o[i..<i + 12].contains { $0 >= 65 && $0 <= 70 }
                for w in [Array(b.reversed()), b] { // written most significant byte first, or as on the wire
                    let printed = w.reversed().map { String(format: "%02x", $0) }.joined(separator: ":")
                    guard map[printed] != nil else { continue }
                    let p = pseudo(w)
                    let digits = (w == b ? p : Array(p.reversed())).map { String(format: upper ? "%02X" : "%02x", $0) }.joined()
                    if Array(n[i..<i + 12]) == Array(digits.utf8) { for k in i..<i + 12 { ok[k] = true } }
                }
            }
            return !ok.contains(false)
        }

        mutating func pseudo(_ a: [UInt8]) -> [UInt8] {
            if let p = cache[a] { return p }
            let p = pseudonyms.pseudonym(a)
            cache[a] = p
            return p
        }

        /// Every changed byte is zero now, or inside a 6-byte window now that window's
        /// pseudonym (in either byte order).
        mutating func hexExplained(_ o: [UInt8], _ n: [UInt8]) -> Bool {
            var ok = [Bool](repeating: false, count: o.count)
            for i in o.indices where o[i] == n[i] || n[i] == 0 { ok[i] = true }
            // Addresses written as text inside binary data (a device name).
            let ot = String(decoding: o.map { $0 < 0x80 ? $0 : 0x20 }, as: UTF8.self)
            for (r, a) in textAddresses(ot) where !ok[r].allSatisfy({ $0 }) {
                let p = pseudo(wire(a.lowercased()))
                let upper = a.contains { "ABCDEF".contains($0) }
                let text = Array(p.reversed().map { String(format: upper ? "%02X" : "%02x", $0) }.joined(separator: ":").utf8)
                if Array(n[r]) == text { for k in r { ok[k] = true } }
            }
            guard o.count >= 6 else { return !ok.contains(false) }
            for j in o.indices where !ok[j] {
                for i in max(0, j - 5)...min(j, o.count - 6) {
                    let w = Array(o[i..<i + 6]), v = Array(n[i..<i + 6])
                    if v == pseudo(w) || Array(v.reversed()) == pseudo(w.reversed()) { for k in i..<i + 6 { ok[k] = true } }
                }
            }
            return !ok.contains(false)
        }
    }

    static func object(_ line: Substring) -> [String: Any] {
        try! JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
    }

    static func jsonLines(_ s: String) -> [[String: Any]] {
        s.split(separator: "\n").map { try! JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
    }

    static func tsharkCount(_ path: String) throws -> Int {
        try CLI.process(tshark, ["-r", path, "-T", "fields", "-e", "frame.number"]).stdout.split(separator: "\n").count
    }

    /// The needles (6 bytes or longer) that occur in `hay`, in one pass: windows of 6 bytes
    /// are looked up by value (a needle per address or key would rescan a 4 MB file each).
    static func found(_ needles: [[UInt8]], in hay: [UInt8]) -> Set<[UInt8]> {
        var byPrefix: [UInt64: [[UInt8]]] = [:]
        for n in needles where n.count >= 6 { byPrefix[n.prefix(6).reduce(0) { $0 << 8 | UInt64($1) }, default: []].append(n) }
        var out = Set<[UInt8]>()
        guard hay.count >= 6 else { return out }
        hay.withUnsafeBufferPointer { h in
            var w: UInt64 = 0
            for i in 0..<h.count {
                w = (w << 8 | UInt64(h[i])) & 0xFFFF_FFFF_FFFF
                guard i >= 5, let cands = byPrefix[w] else { continue }
                let start = i - 5
                for c in cands where start + c.count <= h.count && h[start..<start + c.count].elementsEqual(c) { out.insert(c) }
            }
        }
        return out
    }

    static func find(_ needle: [UInt8], in hay: [UInt8]) -> Bool {
        guard needle.count <= hay.count, let f = needle.first else { return false }
        var i = 0
        while i + needle.count <= hay.count {
            if hay[i] == f, hay[i..<i + needle.count].elementsEqual(needle) { return true }
            i += 1
        }
        return false
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: CLI.binary))) func everyCorpusCaptureRedactsCleanly() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-redact-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var totals = (files: 0, addresses: 0, keys: 0, leaves: 0, undecryptable: 0, names: 0)
        for input in Self.corpus {
            let name = URL(fileURLWithPath: input).lastPathComponent
            let output = dir.appendingPathComponent(name).path
            let r = try CLI.run(["redact", input, output, "--salt", "corpus", "--report", output + ".report.json"])
            #expect(r.status == 0, "\(name): \(r.stderr)")
            guard r.status == 0 else { continue }
            let before = try CLI.run(["dump", input, "--format", "jsonl"]).stdout.split(separator: "\n")
            let after = try CLI.run(["dump", output, "--format", "jsonl"]).stdout.split(separator: "\n")
            #expect(before.count == after.count, "\(name): \(before.count) → \(after.count) records")
            var c = Check()
            // Equal lines need no field-by-field look (most of them), only their keys collected.
            var pairs: [([String: Any], [String: Any])] = []
            for (x, y) in zip(before, after) {
                if x == y {
                    if Self.keyNames.contains(where: { x.contains("\"\($0)\":\"") }) { c.collectKeys(Self.object(x)) }
                    for (_, a) in Self.textAddresses(String(x)) where !["00:00:00:00:00:00", "ff:ff:ff:ff:ff:ff"].contains(a.lowercased()) {
                        c.problems.append("\(x.prefix(20)): address \(a) unchanged")
                    }
                    continue
                }
                let (px, py) = (Self.object(x), Self.object(y))
                c.learn(px, py); c.collectKeys(px)
                pairs.append((px, py))
            }
            for (x, y) in pairs { c.compare(x, y, path: "", frame: x["frame"] as? Int ?? 0) }
            #expect(c.problems.isEmpty, "\(name): \(c.problems.prefix(5).joined(separator: "; "))")
            // Byte search: no original address (those distinctive enough to search for) or key.
            let bytes = Array(FileManager.default.contents(atPath: output) ?? Data())
            let addresses = c.map.keys.map(Self.wire).filter(Self.distinctive)
            let hits = Self.found(addresses + addresses.map { $0.reversed() } + c.textOriginals.map { Array($0.utf8) } + c.keys, in: bytes)
            for a in c.map.keys.sorted() where hits.contains(Self.wire(a)) || hits.contains(Self.wire(a).reversed()) {
                Issue.record("\(name): address \(a) still in the file")
            }
            for a in c.textOriginals.sorted() where hits.contains(Array(a.utf8)) { Issue.record("\(name): address text \(a) still in the file") }
            for n in c.nameOriginals.sorted() where Self.find(Array(n.utf8), in: bytes) { Issue.record("\(name): device name \(n) (ends in its address) still in the file") }
            totals.names += c.nameOriginals.count
            for k in c.keys where hits.contains(k) {
                Issue.record("\(name): key bytes \(k.map { String(format: "%02x", $0) }.joined()) still in the file")
            }
            #expect(try Self.tsharkCount(output) == Self.tsharkCount(input), "\(name): tshark record count")
            totals.files += 1; totals.addresses += c.map.count; totals.keys += c.keys.count; totals.leaves += c.changedLeaves
            totals.undecryptable += c.undecryptable
        }
        print(
            "redact: \(totals.files) captures, \(totals.addresses) addresses renamed, \(totals.names) names ending in their address renamed, \(totals.keys) keys zeroed, \(totals.leaves) JSON values changed, \(totals.undecryptable) sniffed packets no longer decryptable"
        )
        // Without the corpus (../shared absent) only Captures/ is redacted.
        guard ProcessInfo.processInfo.environment["BLUESIFT_REDACT_ONLY"] == nil,
            FileManager.default.fileExists(atPath: CLI.corpus.path)
        else { return }
        #expect(totals.files >= 36)
        #expect(totals.addresses > 100)
        #expect(totals.keys > 0)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: CLI.binary))) func refusesToOverwriteTheInput() throws {
        let cap = CLI.capture("band_mtu23.btsnoop")
        let r = try CLI.run(["redact", cap, cap])
        #expect(r.status == 2)
        #expect(r.stderr == "bluesift: \(cap): is the input; refusing to overwrite it\n")
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: CLI.binary))) func saltGivesTheSamePseudonymsAcrossFiles() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-redact-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        func peers(_ path: String) throws -> Set<String> {
            var out = Set<String>()
            func walk(_ v: Any) {
                if let d = v as? [String: Any] { d.values.forEach(walk) } else if let a = v as? [Any] { a.forEach(walk) } else if let s = v as? String, Self.isAddress(s) { out.insert(s) }
            }
            Self.jsonLines(try CLI.run(["dump", path, "--format", "jsonl"]).stdout).forEach(walk)
            return out
        }
        let a = dir.appendingPathComponent("a.btsnoop").path, b = dir.appendingPathComponent("b.btsnoop").path
        let c = dir.appendingPathComponent("c.btsnoop").path
        #expect(try CLI.run(["redact", CLI.capture("band_mtu23.btsnoop"), a, "--salt", "s1"]).status == 0)
        #expect(try CLI.run(["redact", CLI.capture("band_mtu185.btsnoop"), b, "--salt", "s1"]).status == 0)
        #expect(try CLI.run(["redact", CLI.capture("band_mtu23.btsnoop"), c]).status == 0)
        let original = try peers(CLI.capture("band_mtu23.btsnoop"))
        #expect(!original.isEmpty)
        #expect(try peers(a) == peers(b)) // the same band, the same salt
        #expect(try peers(a).isDisjoint(with: original))
        #expect(try peers(c) != peers(a)) // no salt: a random one
    }
}

/// `redact`'s options and report, with the values they give on known captures.
@Suite struct RedactOptionsTests {
    static let enabled = FileManager.default.isExecutableFile(atPath: CLI.binary)

    static func tempDir() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-redact-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    static func lines(_ path: String) throws -> [[String: Any]] { RedactTests.jsonLines(try CLI.run(["dump", path, "--format", "jsonl"]).stdout) }

    @Test(.enabled(if: enabled)) func maskedCharacteristicAndJSONReport() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("b.btsnoop").path, rep = dir.appendingPathComponent("r.json").path
        let r = try CLI.run(["redact", CLI.capture("band_mtu23.btsnoop"), out, "--salt", "demo", "--mask-characteristic", "2a19", "--report", rep])
        #expect(r.status == 0 && r.stderr.isEmpty, "\(r.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: rep))) as! [String: Any]
        #expect(report["records"] as? Int == 151)
        #expect(report["replaced"] as? [String: Int] == ["distinct addresses": 3, "addresses": 6, "masked values of 2a19": 2])
        // Battery Level read at frame 108: 0x57 (87 %) before, zero after.
        let before = try RedactTests.jsonLines(CLI.run(["dump", CLI.capture("band_mtu23.btsnoop"), "--format", "jsonl"]).stdout)[107]
        let after = try Self.lines(out)[107]
        #expect((before["att"] as? [String: Any])?["value"] as? String == "57")
        #expect((after["att"] as? [String: Any])?["value"] as? String == "00")
        #expect((after["att"] as? [String: Any])?["characteristic"] as? String == "2a19")
    }

    @Test(.enabled(if: enabled)) func textReportOnStderr() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("b.btsnoop").path
        let r = try CLI.run(["redact", CLI.capture("band_mtu23.btsnoop"), out, "--salt", "demo"])
        #expect(r.status == 0)
        #expect(r.stderr == "bluesift: wrote 151 records to \(out)\nbluesift: replaced distinct addresses: 3\nbluesift: replaced addresses: 6\n")
    }

    /// blefun: one peripheral (ea:76:52:b8:3b:e4, 286 advertising reports, 12 connections)
    /// among five advertisers.
    @Test(.enabled(if: enabled), .enabled(if: FileManager.default.fileExists(atPath: CLI.corpus.appendingPathComponent("blefun_btsnoop_hci.log").path), "needs ../shared/captures/public")) func peerAndDropAdvertising() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = CLI.corpus.appendingPathComponent("blefun_btsnoop_hci.log").path
        let peer = dir.appendingPathComponent("peer.log").path, rep = dir.appendingPathComponent("r.json").path
        #expect(try CLI.run(["redact", input, peer, "--salt", "s", "--peer", "ea:76:52:b8:3b:e4", "--report", rep]).status == 0)
        let report = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: rep))) as! [String: Any]
        #expect(report["records"] as? Int == 29221)
        #expect((report["replaced"] as? [String: Int])?["records dropped"] == 96)
        let pseudonym = AddressPseudonyms(salt: Array("s".utf8)).pseudonym(RedactTests.wire("ea:76:52:b8:3b:e4"))
        let expected = pseudonym.reversed().map { String(format: "%02x", $0) }.joined(separator: ":")
        #expect(expected == "e2:b2:7d:21:ac:cb") // random static: the top two bits (11) kept
        var advertisers = Set<String>(), reports = 0
        for l in try Self.lines(peer) {
            guard let adv = l["adv"] as? [String: Any], let rs = adv["reports"] as? [[String: Any]] else { continue }
            for x in rs { advertisers.insert(x["address"] as? String ?? "?"); reports += 1 }
        }
        #expect(advertisers == [expected])
        #expect(reports == 286)

        let dropped = dir.appendingPathComponent("noadv.log").path
        #expect(try CLI.run(["redact", input, dropped, "--salt", "s", "--drop-advertising"]).status == 0)
        let all = try Self.lines(dropped)
        #expect(all.count == 29317 - 382)
        #expect(!all.contains { $0["adv"] != nil })
    }
}
