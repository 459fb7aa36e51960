import Testing
import Foundation
import BluesiftWire
import BluesiftCapture
@testable import BluesiftProtocols

/// The two ATT decoders, the streaming `ATTPDU` (every record) and the typed `ATTMessage`
/// (replay, the host's GATT client, encoding), agree on every ATT PDU of the corpus and of
/// Captures/: the same opcode, the same verdict (decodes or is malformed), the same handle,
/// value and error fields; and what ATTMessage decodes encodes back to the same bytes.
@Suite struct ATTDecodersAgreeTests {
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static var captures: [String] {
        [Corpus.dir, repo.appendingPathComponent("Captures")].flatMap { d in
            ((try? FileManager.default.contentsOfDirectory(atPath: d.path)) ?? [])
                .filter { !$0.hasSuffix(".md") && !$0.hasSuffix(".txt") && !$0.hasSuffix(".json") }
                .sorted().map { d.appendingPathComponent($0).path }
        }
    }

    /// (handle, value, error handle, error code) as ATTMessage has them, where it has them.
    static func fields(_ m: ATTMessage) -> (UInt16?, [UInt8]?, UInt16?, UInt8?) {
        switch m {
        case .readRequest(let x): (x.handle, nil, nil, nil)
        case .writeRequest(let x): (x.handle, x.value, nil, nil)
        case .writeCommand(let x): (x.handle, x.value, nil, nil)
        case .handleValueNotification(let x): (x.handle, x.value, nil, nil)
        case .handleValueIndication(let x): (x.handle, x.value, nil, nil)
        case .readResponse(let x): (nil, x.value, nil, nil)
        case .errorResponse(let x): (nil, nil, x.handle, x.error.rawValue)
        default: (nil, nil, nil, nil)
        }
    }

    @Test func everyATTPDUDecodesAlikeInBoth() throws {
        var pdus = 0, malformed = 0, problems: [String] = []
        for path in Self.captures {
            guard let reader = try? CaptureFile.open(path: path) else { continue }
            let decoder = ProtocolDecoder()
            var f = DecodedFrame(record: .empty)
            while let r = reader.next() {
                decoder.decode(r, into: &f)
                guard f.layers.contains(.att), !f.attStorage.bytes.isEmpty else { continue }
                pdus += 1
                let p = f.attStorage
                let name = "\(URL(fileURLWithPath: path).lastPathComponent) #\(r.frame)"
                let m: ATTMessage?
                do throws(DecodeError) { m = try ATTMessage.decode(p.bytes) } catch { m = nil }
                if p.error != nil { malformed += 1 }
                guard problems.count < 20 else { continue }
                guard let m else {
                    if p.error == nil { problems.append("\(name): ATTPDU decodes, ATTMessage refuses \(Hex.string(p.bytes))") }
                    continue
                }
                if p.error != nil { problems.append("\(name): ATTMessage decodes, ATTPDU says \(p.error!)"); continue }
                if m.opcode != p.opcode { problems.append("\(name): opcode \(m.opcode) vs \(p.opcode)") }
                if m.encode() != Array(p.bytes) { problems.append("\(name): encodes to other bytes") }
                let (h, v, eh, ec) = Self.fields(m)
                if let h, h != p.handle { problems.append("\(name): handle \(h) vs \(String(describing: p.handle))") }
                if let v, p.value.map(Array.init) != v { problems.append("\(name): value differs") }
                if let eh, eh != p.errorHandle { problems.append("\(name): error handle") }
                if let ec, ec != p.errorCode { problems.append("\(name): error code") }
            }
        }
        print("ATT decoders: \(pdus) PDUs, \(malformed) malformed, \(problems.count) disagreements")
        #expect(problems.isEmpty, "\(problems.joined(separator: "; "))")
        #expect(pdus > (Corpus.path("bafang_bluetoothd-hci-latest.pklg") == nil ? 100 : 20_000))
    }
}
