import Foundation
import Testing
import BluesiftWire
@testable import BluesiftSecurity

@Suite struct BondStoreTests {
    static let sample = """
        {"version":1,"bonds":[{"address":"c0:ba:0d:00:00:01","address_type":"random",
         "identity_address":"c0:ba:0d:00:00:02","identity_address_type":"random",
         "ltk":"00112233445566778899aabbccddeeff","ediv":4660,"rand":"0102030405060708",
         "key_size":16,"authenticated":true,"secure_connections":false,
         "irk":"9b7d390aa610103405adc857a33402ec","csrk":"ffeeddccbbaa99887766554433221100","created":"2026-11-24T14:00:00Z"}]}
        """

    @Test func decodesAgreedFormat() throws {
        let s = try BondStore.decode(Array(Self.sample.utf8))
        #expect(s.bonds.count == 1)
        let b = s.bonds[0]
        #expect(b.address.description == "c0:ba:0d:00:00:01")
        #expect(b.addressType == "random")
        #expect(b.identityAddress?.description == "c0:ba:0d:00:00:02")
        #expect(b.ltk == Hex.parse("00112233445566778899aabbccddeeff"))
        #expect(b.ediv == 0x1234)
        #expect(b.rand == [1, 2, 3, 4, 5, 6, 7, 8])
        #expect(b.authenticated && !b.secureConnections)
        #expect(b.csrk?.first == 0xFF)
        #expect(b.created == "2026-11-24T14:00:00Z")
    }

    @Test func roundTrip() throws {
        let s = try BondStore.decode(Array(Self.sample.utf8))
        let text = s.encode()
        #expect(try BondStore.decode(text) == s)
        #expect(String(decoding: text, as: UTF8.self).hasPrefix("{\"version\":1,\"bonds\":[\n  {\"address\":\"c0:ba:0d:00:00:01\",\"address_type\":\"random\""))
    }

    // Lookup by address, by identity address, and by a resolvable private address made with
    // the IRK (Appendix D.7's IRK and RPA; the store holds the IRK little-endian).
    @Test func lookup() throws {
        let s = try BondStore.decode(Array(Self.sample.utf8))
        #expect(s.bond(for: BDAddr(string: "c0:ba:0d:00:00:01")!) != nil)
        #expect(s.bond(for: BDAddr(string: "c0:ba:0d:00:00:02")!) != nil)
        #expect(s.bond(for: BDAddr(string: "70:81:94:0d:fb:aa")!) != nil)
        #expect(s.bond(for: BDAddr(string: "70:81:94:0d:fb:ab")!) == nil)
    }

    @Test func errorsNameTheBondAndField() {
        func err(_ t: String) -> BondStoreError? {
            do { _ = try BondStore.decode(Array(t.utf8)); return nil } catch { return error }
        }
        #expect(err("{")?.code == .syntax)
        #expect(err(#"{"version":2,"bonds":[]}"#)?.code == .version)
        let e = err(#"{"version":1,"bonds":[{"address":"c0:ba:0d:00:00:01","ltk":"0011"}]}"#)
        #expect(e?.bond == 0)
        #expect(e?.description == "bond 0: \"ltk\" is not 32 hex digits")
    }

    @Test func savesAtomicallyWithMode0600() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bondstore-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("keys.json").path
        #expect(try BondStore.load(path: path).bonds.isEmpty) // missing: empty
        var s = BondStore()
        s.put(
            Bond(
                address: BDAddr(0xC0BA_0D00_0001), addressType: "random", ltk: [UInt8](repeating: 7, count: 16),
                authenticated: false, secureConnections: true, created: "2026-11-24T14:00:00Z"))
        s.put(
            Bond(
                address: BDAddr(0xC0BA_0D00_0001), addressType: "random", ltk: [UInt8](repeating: 9, count: 16),
                authenticated: true, secureConnections: true, created: "2026-11-24T14:00:01Z"))
        #expect(s.bonds.count == 1) // same device replaced
        // An existing world-readable file is replaced by a 0600 one.
        FileManager.default.createFile(atPath: path, contents: Data("{}".utf8), attributes: [.posixPermissions: 0o644])
        try s.save(path: path)
        let attrs = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attrs[.posixPermissions] as? Int) == 0o600)
        #expect(try BondStore.load(path: path) == s)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["keys.json"])
    }

    /// A FIFO (like /dev/null, not a regular file) stays what it is and gets the store: a
    /// rename over /dev/null had replaced it with a file of keys.
    @Test func savingToAFIFOWritesThroughIt() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bluesift-fifo-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let fifo = dir + "/keys", out = dir + "/read"
        #expect(mkfifo(fifo, 0o600) == 0)
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/bin/sh")
        reader.arguments = ["-c", "cat \"$0\" > \"$1\"", fifo, out]
        try reader.run()
        var store = BondStore()
        store.put(
            Bond(
                address: BDAddr(string: "c0:ba:0d:00:00:01")!, addressType: "random",
                ltk: Array(repeating: 0x11, count: 16), authenticated: false, secureConnections: true))
        try store.save(path: fifo)
        reader.waitUntilExit()
        var st = stat()
        #expect(stat(fifo, &st) == 0 && (st.st_mode & S_IFMT) == S_IFIFO)
        #expect((try? String(contentsOfFile: out, encoding: .utf8))?.contains("c0:ba:0d:00:00:01") == true)
    }
}
