// Fuzz target for layer 2 (capture readers); the work is in BluesiftFuzz/CaptureFuzz.swift.
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
            CaptureFuzz.run(UnsafeRawBufferPointer(start: data, count: size))
            return 0
        })
#else
    exit(CorpusRunner.main(CommandLine.arguments, name: "FuzzCapture", CaptureFuzz.run))
#endif
