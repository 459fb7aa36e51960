import Testing
import Foundation
import BluesiftCapture
import BluesiftProtocols
import BluesiftGATT

/// Over-the-air captures of the corpus: for every data PDU whose sender tshark knows (the
/// nRF Sniffer's direction flag, the RF header's PDU type), our `from` says the same, and our
/// central/peripheral are tshark's btle.master_bd_addr/btle.slave_bd_addr. The GATT database
/// rebuilt for each side holds only handles that side's own discovery responses named.
@Suite(.serialized) struct AirRoleConformanceTests {
    static var sniffed: [String] {
        TsharkConformanceTests.corpusFiles.filter { f in
            guard let r = try? CaptureFile.open(path: TsharkConformanceTests.corpus.appendingPathComponent(f).path) else { return false }
            for _ in 0..<50 { guard let rec = r.next() else { break }; if rec.kind == .ll { return true } }
            return false
        }
    }

    struct Row { var fromCentral: Bool?; var master: String; var slave: String; var opcode: Int?; var handles: [Int] }

    static func tsharkRows(_ path: String) throws -> [Int: Row] {
        var rows: [Int: Row] = [:]
        let fields = [
            "frame.number", "nordic_ble.direction", "btle_rf.flags",
            "btle.master_bd_addr", "btle.slave_bd_addr", "btatt.opcode", "btatt.handle"
        ]
        for f in try TsharkConformanceTests.fieldLines(path, filter: "btle.data_header.llid", fields: fields) {
            guard f.count >= 7, let frame = Int(f[0]) else { continue }
            var from: Bool?
            if let d = Int(f[1]) { from = d == 1 }
            if from == nil, let flags = Int(f[2].dropFirst(2), radix: 16) {
                switch (flags >> 7) & 7 {
                case 2: from = true;
                case 3: from = false;
                default: break
                }
            }
            let op = f[5].split(separator: ",").first.flatMap { Int($0.dropFirst(2), radix: 16) }
            let hs = f[6].split(separator: ",").compactMap { Int($0.dropFirst(2), radix: 16) }
            rows[frame] = Row(fromCentral: from, master: f[3], slave: f[4], opcode: op, handles: hs)
        }
        return rows
    }

    @Test(.enabled(if: TsharkConformanceTests.tshark != nil, "needs tshark")) func fromAgreesWithTsharkAndGATTSidesStayApart() throws {
        let files = Self.sniffed
        #expect(files.count >= 8, "sniffer captures in the corpus: \(files)")
        var compared = 0
        for file in files {
            let path = TsharkConformanceTests.corpus.appendingPathComponent(file).path
            let want = try Self.tsharkRows(path)
            let reader = try CaptureFile.open(path: path)
            let decoder = ProtocolDecoder(), gatt = GATTTracker()
            var attributed = 0, agree = 0, addrAgree = 0, withAddr = 0
            var handlesBy: [Bool: Set<Int>] = [true: [], false: []]
            while let r = reader.next() {
                let f = decoder.decode(r)
                if f.layers.contains(.att), let conn = f.connection {
                    gatt.observe(f, peer: decoder.connection(adapter: 0, handle: conn)?.peer)
                }
                guard let ll = f.ll, !ll.isAdvertising, ll.crcOK != false, let row = want[r.frame] else { continue }
                if let t = row.fromCentral {
                    attributed += 1
                    if ll.fromCentral == t { agree += 1 } else { Issue.record("\(file) #\(r.frame): from \(String(describing: ll.fromCentral)), tshark \(t)") }
                    // Handles named by discovery responses, by the side that sent them.
                    if let op = row.opcode, [0x05, 0x07, 0x09, 0x11].contains(op) { handlesBy[t, default: []].formUnion(row.handles) }
                }
                if !row.master.isEmpty, let c = ll.central, let p = ll.peripheral {
                    withAddr += 1
                    if c.description == row.master && p.description == row.slave { addrAgree += 1 }
                }
            }
            compared += attributed
            #expect(agree == attributed, "\(file): \(agree)/\(attributed) directions agree")
            #expect(addrAgree == withAddr, "\(file): \(addrAgree)/\(withAddr) address pairs agree")
            // Each rebuilt database: only handles its own side's responses named.
            for d in gatt.devices {
                let conns = decoder.connections.compactMap(\.air)
                let isCentral = conns.contains { $0.central?.description == d.address }
                let isPeripheral = conns.contains { $0.peripheral?.description == d.address }
                // Only where tshark knows who sent the responses (not DLT 256 without flags, PPI).
                guard isCentral != isPeripheral, attributed > 0 else { continue }
                let own = handlesBy[isCentral] ?? []
                for s in d.database.services {
                    #expect(own.contains(Int(s.start)), "\(file): \(d.address) service 0x\(String(s.start, radix: 16)) not from its side")
                    for c in s.characteristics {
                        #expect(own.contains(Int(c.handle)), "\(file): \(d.address) characteristic 0x\(String(c.handle, radix: 16)) not from its side")
                    }
                }
            }
            print("air roles \(file): \(agree)/\(attributed) directions, \(addrAgree)/\(withAddr) addresses, \(gatt.devices.count) GATT databases")
        }
        #expect(compared > 1000)
    }
}
