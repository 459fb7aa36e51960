// Fuzz target for plugin loader/interpreter (TODO until the plugin engine is on main); the work is in BluesiftFuzz/PluginFuzz.swift.
// Built with -D FUZZING (make fuzz): libFuzzer drives the target. Otherwise: replays files.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import BluesiftFuzz
#if FUZZING
    import CFuzzer

    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(
        LLVMFuzzerRunDriver(&argc, &argv) { data, size in
            PluginFuzz.run(UnsafeRawBufferPointer(start: data, count: size))
            return 0
        })
#else
    exit(CorpusRunner.main(CommandLine.arguments, name: "FuzzPlugins", PluginFuzz.run))
#endif
