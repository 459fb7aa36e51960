// Fuzz target for layers 3-5 (protocols, GATT, dissect renderers); the work is in BluesiftFuzz/StackFuzz.swift.
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
            StackFuzz.run(UnsafeRawBufferPointer(start: data, count: size))
            return 0
        })
#else
    exit(CorpusRunner.main(CommandLine.arguments, name: "FuzzStack", StackFuzz.run))
#endif
