import ArgumentParser
import Foundation
import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftGATT
import BluesiftDissect
import BluesiftSession

struct GATT: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gatt",
        abstract: "Rebuild each device's GATT database from the discovery traffic in a capture.",
        discussion: """
            Devices are keyed by their address (or by connection when the capture never says it) \
            and kept across reconnections. When a device's database changes (a Service Changed \
            indication, a changed Database Hash, or a connection whose discovery contradicts what \
            was learnt), each generation is listed apart, oldest first; --generation N shows one. \
            --format json writes the schema that --gatt FILE reads back (the last generation, \
            unless --generation picks another).

            The filters choose what is shown, not what is learnt (the databases are always rebuilt \
            from the whole capture): --service, --characteristic and --handle keep the matching \
            services and characteristics; the others (--peer, --connection, --since, --until, \
            --frames, --errors, --protocol, --att-opcode) keep the devices that the records they \
            pass belong to.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case tree, json }

    @Argument(help: "Capture file.") var file: String
    @Option(help: "Output format: tree or json.") var format: Format = .tree
    @OptionGroup var decode: DecodeOptions
    @OptionGroup var filter: FilterOptions

    func run() throws {
        let full = try filter.make()
        // Attribute options narrow the tree; the others choose devices by their records.
        let session = try openSessionOrExit(
            file, decode: try decode.settings(plugins: !full.isEmpty, generationOfCapture: true),
            filter: GATTSelection.byRecord(full))
        let reader = session.reader
        var devices = GATTSelection.chosen(session, filter: full)
        try decode.keyOptions.save(session.decoder)
        if let g = decode.generation, decode.gatt == nil {
            // One generation: a device that never changed has only the first.
            devices = devices.compactMap { d in d.generation(g).map { GATTJSON.Device(address: d.address, database: $0) } }
            if devices.isEmpty {
                stderrLine("bluesift: \(file): no device's database has a generation \(g)")
                throw Exit.unusableInput
            }
        }
        devices = GATTSelection.narrowed(devices, filter: full)
        if devices.isEmpty && !full.isEmpty {
            filter.reportNoMatch(file)
            if format == .json { var o = Output(); o.buffer.append(contentsOf: GATTJSON.encode([]).utf8); o.flush() }
            printWarnings(reader, path: file)
            return
        }
        var out = Output()
        switch format {
        case .json:
            out.buffer.append(contentsOf: GATTJSON.encode(devices).utf8)
        case .tree:
            if devices.isEmpty { out.line("no GATT discovery in this capture") }
            for d in devices {
                out.line(d.address)
                if d.generations.count > 1 {
                    for (i, g) in d.generations.enumerated() {
                        out.line(
                            "  generation \(i + 1) of \(d.generations.count)" + (g.firstFrame.map { ", from frame \($0)" } ?? "")
                                + (g.reason.map { " (\($0))" } ?? ""))
                        tree(g.database, indent: "    ", &out)
                    }
                } else {
                    tree(d.database, indent: "  ", &out)
                }
            }
        }
        out.flush()
        printWarnings(reader, path: file)
    }

    func tree(_ db: GATTDatabase, indent i: String, _ out: inout Output) {
        for s in db.services {
            out.line(i + "\(s.primary ? "service" : "secondary service") \(s.uuid)\(label(s.uuid))  [\(Hex.fixed(UInt64(s.start), width: 4))–\(Hex.fixed(UInt64(s.end), width: 4))]")
            tree(s.characteristics, indent: i + "  ", &out)
        }
        // Declarations read without primary service discovery: their service is unknown.
        if !db.undiscovered.isEmpty {
            out.line(i + "(service not discovered)")
            tree(db.undiscovered, indent: i + "  ", &out)
        }
    }

    func tree(_ chars: [GATTDatabase.Characteristic], indent i: String, _ out: inout Output) {
        for c in chars {
            let props = GATTDatabase.propertyNames.filter { c.properties & $0.bit != 0 }.map(\.name)
            out.line(i + "characteristic \(c.uuid)\(label(c.uuid))  value \(Hex.fixed(UInt64(c.valueHandle), width: 4))  (\(props.joined(separator: ", ")))")
            for x in c.descriptors {
                out.line(i + "  descriptor \(x.uuid)\(label(x.uuid))  \(Hex.fixed(UInt64(x.handle), width: 4))")
            }
        }
    }

    func label(_ uuid: BluetoothUUID) -> String {
        GATTNames.name(uuid).map { " \"\($0)\"" } ?? ""
    }
}

/// Reads a GATT database JSON file (the first device's database; with `generation`, that
/// generation of it, else the last), or exits 2 with a one-line message.
func loadGATT(_ path: String, generation: Int? = nil) throws -> GATTDatabase {
    guard let data = FileManager.default.contents(atPath: path) else {
        stderrLine("bluesift: \(path): cannot read the GATT file")
        throw Exit.unusableInput
    }
    do {
        let devices = try GATTJSON.decode(data)
        guard let first = devices.first else {
            stderrLine("bluesift: \(path): no device in the GATT file")
            throw Exit.unusableInput
        }
        guard let g = generation else { return first.database }
        guard let db = first.generation(g) else {
            stderrLine(
                "bluesift: \(path): no generation \(g) of \(first.address)'s database in the GATT file (it has "
                    + (first.generationCount == 1 ? "one" : "1–\(first.generationCount)") + ")")
            throw Exit.unusableInput
        }
        return db
    } catch let e as GATTJSON.ImportError {
        stderrLine("bluesift: " + jsonErrorLine(file: path, data: data, error: e))
        throw Exit.unusableInput
    }
}
