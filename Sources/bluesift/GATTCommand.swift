import ArgumentParser
import Foundation
import BluesiftWire
import BluesiftCapture
import BluesiftGATT
import BluesiftDissect

struct GATT: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gatt",
        abstract: "Rebuild each device's GATT database from the discovery traffic in a capture.",
        discussion: """
        Devices are keyed by their address (or by connection when the capture never says it) \
        and kept across reconnections. A Service Changed indication or a changed Database Hash \
        invalidates what was learnt. --format json writes the schema that --gatt FILE reads back.
        """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case tree, json }

    @Argument(help: "Capture file.") var file: String
    @Option(help: "Output format: tree or json.") var format: Format = .tree
    @OptionGroup var keyOptions: KeyOptions

    func run() throws {
        let reader = try openOrExit(file)
        let analyzer = Analyzer(naming: true)
        keyOptions.configure(analyzer.decoder, keys: try keyOptions.keys())
        while let record = reader.next() { _ = analyzer.analyze(record) }
        let devices = analyzer.gatt.devices
        var out = Output()
        switch format {
        case .json:
            out.buffer.append(contentsOf: GATTJSON.encode(devices).utf8)
        case .tree:
            if devices.isEmpty { out.line("no GATT discovery in this capture") }
            for d in devices {
                out.line(d.address)
                for s in d.database.services {
                    out.line("  \(s.primary ? "service" : "secondary service") \(s.uuid)\(label(s.uuid))  [\(Hex.fixed(UInt64(s.start), width: 4))–\(Hex.fixed(UInt64(s.end), width: 4))]")
                    for c in s.characteristics {
                        let props = GATTDatabase.propertyNames.filter { c.properties & $0.bit != 0 }.map(\.name)
                        out.line("    characteristic \(c.uuid)\(label(c.uuid))  value \(Hex.fixed(UInt64(c.valueHandle), width: 4))  (\(props.joined(separator: ", ")))")
                        for x in c.descriptors {
                            out.line("      descriptor \(x.uuid)\(label(x.uuid))  \(Hex.fixed(UInt64(x.handle), width: 4))")
                        }
                    }
                }
            }
        }
        out.flush()
        printWarnings(reader, path: file)
    }

    func label(_ uuid: BluetoothUUID) -> String {
        GATTNames.name(uuid).map { " \"\($0)\"" } ?? ""
    }
}

/// Reads `--gatt FILE` or exits 2 with one line.
func importGATT(_ path: String, into analyzer: Analyzer) throws {
    analyzer.gatt.importDatabase(try loadGATT(path))
}

/// Reads a GATT database JSON file, or exits 2 with a one-line message.
func loadGATT(_ path: String) throws -> GATTDatabase {
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
        return first.database
    } catch let e as GATTJSON.ImportError {
        stderrLine("bluesift: " + jsonErrorLine(file: path, data: data, error: e))
        throw Exit.unusableInput
    }
}
