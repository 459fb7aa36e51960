import BluesiftWire
import BluesiftPlugins

/// Field-aware answers through the declarative plugins: frames reassembled and split,
/// volatile fields known, frames rebuilt from field values.
public final class PluginInterpreter: VendorInterpreter, Sendable {
    public let plugins: [Plugin]

    public init(plugins: [Plugin]) { self.plugins = plugins }

    public func messages(service: String?, characteristic: String?, notify: Bool, values: [[UInt8]]) -> [VendorMessageView]? {
        guard let c = characteristic.flatMap(BluetoothUUID.init(string:)) else { return nil }
        let s = service.flatMap(BluetoothUUID.init(string:))
        let dir: PluginDirection = notify ? .notify : .write
        // Fresh reassembly state for each comparison.
        let set = PluginSet(plugins)
        // Plugins load as stubs (compiled on first use): the set compiles its own copy, the
        // volatile fields are read off the compiled plugin.
        guard let (i, _, _) = set.match(service: s, characteristic: c, handle: 0, direction: dir), let plugin = plugins[i].resolved else { return nil }
        var out: [VendorMessageView] = []
        for v in values {
            let r = v.withUnsafeBytes {
                set.process(service: s, characteristic: c, handle: 0, direction: dir, device: 0, value: $0, timeMicroseconds: 0)
            }
            for m in r?.messages ?? [] {
                out.append(
                    VendorMessageView(
                        plugin: m.plugin, message: m.message,
                        fields: m.fields.map { ($0.name, $0.value.description) },
                        volatile: plugin.volatileFields(message: m.message),
                        checksum: m.checksum?.rawValue, bytes: m.bytes))
            }
        }
        return out
    }

    public func encode(plugin id: String?, service: String?, characteristic: String?, message: String, fields: [String: String]) throws -> [UInt8] {
        let plugin: Plugin?
        if let id {
            plugin = plugins.first { $0.id == id }?.resolved
        } else {
            let set = PluginSet(plugins)
            let c = characteristic.flatMap(BluetoothUUID.init(string:))
            plugin = set.match(service: service.flatMap(BluetoothUUID.init(string:)), characteristic: c, handle: 0, direction: .write)
                .flatMap { plugins[$0.plugin].resolved }
        }
        guard let plugin else { throw ReplayFault(.init(rawValue: "refused"), "no plugin \(id ?? "for characteristic \(characteristic ?? "?")")") }
        do { return try plugin.encode(message: message, fields: fields.mapValues(PluginValue.init(fieldText:))) } catch {
            throw ReplayFault(.init(rawValue: "refused"), "\(plugin.id): cannot build \(message): \(error)")
        }
    }
}
