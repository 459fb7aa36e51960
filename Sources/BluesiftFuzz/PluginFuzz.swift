#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import BluesiftWire
import BluesiftPlugins

/// Plugin engine target (loader, compiler, expression interpreter, decoder, encoder, framing).
///
/// Byte 0 < 0x80: the input is `plugin YAML` 0x00 `payload`; the YAML is compiled and, when it
/// compiles, the payload decoded, re-encoded and streamed through the framing.
/// Byte 0 >= 0x80: the bundled plugins (Plugins/*.yaml, compiled once); byte 0 picks one,
/// byte 1 the ATT direction and the rest is a stream of ATT values, each a length byte then
/// the value, fed to a `PluginSet` (framing, reassembly, decode, response rules).
public enum PluginFuzz {
    public static func run(_ input: UnsafeRawBufferPointer) {
        guard let first = input.first else { return }
        if first >= 0x80 {
            let bundled = BundledPlugins.all
            guard !bundled.isEmpty, input.count >= 2 else { return }
            let p = bundled[Int(first & 0x7F) % bundled.count]
            stream(p, direction: input[1], UnsafeRawBufferPointer(rebasing: input[2...]))
            return
        }
        let cut = input.firstIndex(of: 0) ?? input.count
        let yaml = String(decoding: UnsafeRawBufferPointer(rebasing: input[..<cut]), as: UTF8.self)
        let payload = UnsafeRawBufferPointer(rebasing: input[min(cut + 1, input.count)...])
        guard let p = try? PluginLoader.compile(yaml: yaml, path: "fuzz.yaml") else { return }
        check(p.decode(payload), plugin: p)
        for e in p.examples { check(p.decode(e.bytes), plugin: p) }
        stream(p, direction: 0, payload)
    }

    /// Decodes `payload` as ATT values (length-prefixed) through a one-plugin `PluginSet`.
    static func stream(_ p: Plugin, direction: UInt8, _ payload: UnsafeRawBufferPointer) {
        guard let m = p.matches.first else { return }
        let dirs = PluginDirection.allCases
        let dir =
            m.directions.isEmpty
            ? dirs[Int(direction) % dirs.count]
            : m.directions.sorted { $0.rawValue < $1.rawValue }[Int(direction) % m.directions.count]
        let set = PluginSet([p])
        var i = 0, t: Int64 = 0
        var previous: DecodedMessage?
        while i < payload.count {
            let n = min(Int(payload[i]), payload.count - i - 1)
            let value = UnsafeRawBufferPointer(rebasing: payload[(i + 1)..<(i + 1 + n)])
            i += 1 + n
            t += Int64(n) * 1000
            guard
                let r = set.process(
                    service: m.service, characteristic: m.characteristic, handle: m.handle ?? 0x2A,
                    direction: dir, device: 1, value: value, timeMicroseconds: t)
            else { continue }
            for msg in r.messages {
                check(msg, plugin: p)
                if let prev = previous {
                    _ = p.isResponse(msg, direction: dir, to: prev, direction: dir, elapsedMicroseconds: 1000)
                    _ = p.responseTimeout(for: prev, direction: dir)
                }
                previous = msg
            }
        }
    }

    /// Renders a decoded message (output must be valid JSON) and encodes it back.
    static func check(_ m: DecodedMessage, plugin p: Plugin) {
        var w = JSONFieldWriter(capacity: 1024)
        w.beginTopLevel()
        for f in m.fields { f.value.describe(.dynamic(f.name), into: &w) }
        w.endTopLevel()
        if let bad = JSONCheck.firstError(w.out) {
            preconditionFailure("plugin fields render invalid JSON at byte \(bad): \(String(decoding: w.out, as: UTF8.self))")
        }
        if m.error == nil { _ = try? p.encode(m) }
        Sink.value &+= m.fields.count
    }
}

/// Plugins/*.yaml of this repository (or $BLUESIFT_PLUGINS), compiled once per process.
public enum BundledPlugins {
    public static let directory: String = {
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3) // Sources/BluesiftFuzz/PluginFuzz.swift
        return parts.joined(separator: "/") + "/Plugins"
    }()

    nonisolated(unsafe) public static let all: [Plugin] = {
        var dirs = [directory]
        if let env = getenv("BLUESIFT_PLUGINS") { dirs.insert(String(cString: env), at: 0) }
        return PluginLoader.load(directories: dirs).plugins
    }()
}
