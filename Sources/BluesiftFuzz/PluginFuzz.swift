/// Plugin loader and interpreter target.
///
/// TODO(plugins): the YAML plugin engine is being written on branch `plugins`; when it is on
/// main, split the input into a plugin document and a frame payload (e.g. at the first 0x00
/// byte), load the plugin, and decode the payload with it, asserting that loading fails with
/// an error (never a trap) and decoding is bounded (length fields past the end, division by
/// zero, deep nesting). Until then this target only exercises its own input plumbing.
public enum PluginFuzz {
    public static func run(_ input: UnsafeRawBufferPointer) {
        let cut = input.firstIndex(of: 0) ?? input.count
        Sink.touch(UnsafeRawBufferPointer(rebasing: input[..<cut]))
    }
}
