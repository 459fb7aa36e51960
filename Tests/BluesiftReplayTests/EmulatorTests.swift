import Testing
import Foundation
import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftGATT
import BluesiftDissect
import BluesiftPlugins
import BluesiftHost
@testable import BluesiftReplay

/// The emulation model of the recorded band (Captures/band_mtu23.btsnoop, recorded by
/// Tests/VirtualDevice/record_session.py) and the answers the emulator gives from it.
@Suite struct EmulatorTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func build(_ capture: String) throws -> (EmulationModelBuilder, GATTTracker) {
        let reader = try CaptureFile.open(path: root.appendingPathComponent("Captures/\(capture)").path)
        let analyzer = Analyzer()
        let builder = EmulationModelBuilder(capture: capture)
        while let r = try reader.next() {
            let a = analyzer.analyze(r)
            builder.observe(a, decoder: analyzer.decoder)
        }
        return (builder, analyzer.gatt)
    }

    static let band: EmulationModel = {
        let (b, t) = try! build("band_mtu23.btsnoop")
        return try! b.model(tracker: t)
    }()

    static func link(encrypted: Bool = false) -> ServerLinkState { ServerLinkState(mtu: 23, encrypted: encrypted, authenticated: false) }

    @Test func modelOfTheBand() throws {
        let m = Self.band
        #expect(m.address == BDAddr(string: "c0:ba:0d:00:00:01"))
        #expect(m.addressType == .random)
        #expect(m.name == "bluesift-band")
        #expect(m.database.services.map(\.uuid.description) == ["1800", "1801", "180f", "180a", "fee7"])
        #expect(m.mtu == 517) // the band's Server Rx MTU; the central asked 23
        #expect(m.reads[0x0016]?.map(\.value) == [Array("BAND-1".utf8)])
        #expect(m.readCount == 5 && m.writeCount == 10 && m.notificationCount == 9)
        let vendor = try #require(m.writes[0x001d])
        #expect(vendor.count == 8)
        #expect(vendor[0].value == [0xa5, 0x04, 0x01, 0xa0] && vendor[0].op == .writeRequest && vendor[0].frame == 122)
        #expect(vendor[0].notifications.map(\.value) == [[0xa5, 0x07, 0x81, 0x01, 0x04, 0x57, 0x71]])
        #expect(vendor[0].notifications.first?.handle == 0x001f)
        // sport_data_reply over two notifications at MTU 23, both after the one write.
        #expect(vendor[3].notifications.count == 2)
        #expect(!m.secured && m.securityErrors.isEmpty && m.connections == 1)
    }

    @Test func attributesRebuildTheDatabase() {
        let attrs = Emulator.attributes(of: Self.band.database)
        #expect(attrs.count == 32)
        let decl = attrs.first { $0.handle == 0x001c }
        #expect(decl?.type == BluetoothUUID(0x2803))
        #expect(decl?.value == [0x0c, 0x1d, 0x00, 0xf5, 0x36]) // write, write without response; value 0x001d; 36f5
        #expect(attrs.first { $0.handle == 0x0020 }?.type == BluetoothUUID(0x2902))
    }

    @Test func readsAreServedInRecordedOrderThenTheLastAgain() {
        let e = Emulator(model: Self.band)
        e.sessionStarted()
        #expect(e.read(handle: 0x0016, first: true, link: Self.link()) == .value(Array("BAND-1".utf8)))
        #expect(e.read(handle: 0x0016, first: true, link: Self.link()) == .value(Array("BAND-1".utf8)))
        #expect(e.report.steps.map(\.reason) == ["recorded read 1 of 1", "the last recorded value again (1 recorded)"])
        #expect(e.report.steps.map(\.matchedBy) == ["order", "order"])
        // A handle the recording never read: reported, answered Read Not Permitted.
        #expect(e.read(handle: 0x001d, first: true, link: Self.link()) == .error(.readNotPermitted))
        #expect(e.report.summary.unexpected == 1 && e.report.summary.matched == 2)
    }

    @Test func writesMatchByBytesAndNotificationsKeepTheirSpacing() {
        let e = Emulator(model: Self.band)
        e.sessionStarted()
        let a = e.write(handle: 0x001d, value: [0xa5, 0x06, 0x03, 0x06, 0x14, 0xb2], op: .writeRequest, link: Self.link())
        #expect(a.error == nil)
        #expect(a.then.map(\.handle) == [0x001f])
        #expect(a.then.first?.value == [0xa5, 0x06, 0x83, 0x09, 0x00, 0x29])
        #expect(a.then.first.map { $0.delay > .zero && $0.delay < .milliseconds(50) } == true)
        #expect(e.report.steps.last?.matchedBy == "bytes" && e.report.steps.last?.frame == 129)
        e.timing = .asap
        let sportData = Self.band.writes[0x001d]![3]
        #expect(sportData.value == [0xa5, 0x08, 0x04, 0x06, 0x14, 0x00, 0x00, 0xbb]) // sport_data 6/20 index 0
        let b = e.write(handle: 0x001d, value: sportData.value, op: .writeCommand, link: Self.link())
        #expect(b.then.map(\.delay) == [.microseconds(0), .microseconds(1)])
    }

    @Test func aVolatileFieldIsMatchedByFieldsWithThePlugin() throws {
        let plugin = try PluginLoader.load(file: Self.root.appendingPathComponent("Plugins/band.yaml").path)
        let e = Emulator(model: Self.band, interpreter: PluginInterpreter(plugins: [plugin]))
        e.sessionStarted()
        // set_time 2027-06-20 09:30:00, checksum recomputed.
        let frame = try plugin.encode(
            message: "set_time",
            fields: [
                "year": .init(fieldText: "2027"), "month": .init(fieldText: "6"),
                "day": .init(fieldText: "20"), "hour": .init(fieldText: "9"),
                "minute": .init(fieldText: "30"), "second": .init(fieldText: "0")
            ])
        let a = e.write(handle: 0x001d, value: frame, op: .writeCommand, link: Self.link())
        #expect(a.then.first?.value == [0xa5, 0x05, 0x82, 0x00, 0x22])
        let s = try #require(e.report.steps.last)
        #expect(s.matchedBy == "fields" && s.status == "match" && s.frame == 126)
        #expect(s.reason?.contains("set_time.year 2026 → 2027") == true)
        // A non-volatile field differs: no answer recorded, the field named.
        let other = try plugin.encode(message: "sport_count", fields: ["month": .init(fieldText: "6"), "day": .init(fieldText: "21")])
        let b = e.write(handle: 0x001d, value: other, op: .writeRequest, link: Self.link())
        #expect(b.error == nil && b.then.isEmpty)
        let u = try #require(e.report.steps.last)
        #expect(u.status == "unexpected")
        #expect(u.differences.map(\.field) == ["day"] && u.differences.first?.expected == "20" && u.differences.first?.got == "21")
    }

    @Test func securityErrorsComeBackUntilTheLinkIsEncrypted() {
        var m = Self.band
        m.securityErrors[0x001a] = .insufficientAuthentication
        m.reads[0x001a]!.insert(.init(value: [], error: .insufficientAuthentication, frame: 90), at: 0)
        let e = Emulator(model: m)
        e.sessionStarted()
        #expect(e.read(handle: 0x001a, first: true, link: Self.link()) == .error(.insufficientAuthentication))
        #expect(e.read(handle: 0x001a, first: true, link: Self.link(encrypted: true)) == .value(Self.band.reads[0x001a]![0].value))
        #expect(e.write(handle: 0x001a, value: [1], op: .writeRequest, link: Self.link()).error == .insufficientAuthentication)
    }

    /// One security-error set for replay and emulation (ATTErrorCode.securityErrors): a read
    /// refused for a short key is not served once the link is encrypted; Insufficient
    /// Authorization, the application's, is an ordinary recorded answer.
    @Test func securityErrorSetIsTheATTLayers() {
        var m = Self.band
        m.reads[0x001a]!.insert(.init(value: [], error: .encryptionKeySizeTooShort, frame: 90), at: 0)
        let e = Emulator(model: m)
        e.sessionStarted()
        #expect(e.read(handle: 0x001a, first: true, link: Self.link(encrypted: true)) == .value(Self.band.reads[0x001a]![0].value))
        #expect(Emulator.isSecurity(.encryptionKeySizeTooShort) && !Emulator.isSecurity(.insufficientAuthorization))
        #expect(ATTErrorCode.securityErrors.map(\.rawValue).sorted() == [0x05, 0x0C, 0x0F])
    }

    @Test func deviceChoiceByNameAndErrors() throws {
        let (b, t) = try Self.build("band_mtu23.btsnoop")
        #expect(try b.model(name: "bluesift-band", tracker: t).address == BDAddr(string: "c0:ba:0d:00:00:01"))
        #expect(throws: EmulationError.self) { try b.model(name: "nobody", tracker: t) }
        #expect(throws: EmulationError.self) { try b.model(address: BDAddr(string: "11:22:33:44:55:66"), tracker: t) }
        // The database from --gatt replaces the discovered one.
        let one = GATTDatabase(services: [GATTDatabase.Service(start: 1, end: 5, uuid: BluetoothUUID(0x180F), primary: true)])
        #expect(try b.model(gatt: one, tracker: t).database == one)
    }
}
