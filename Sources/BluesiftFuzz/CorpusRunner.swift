#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The fuzz executables' `main` when built without `-D FUZZING`: runs the target once over
/// each file given (folders: every file inside, sorted), so regression inputs replay
/// without libFuzzer. A run over `seconds` per input is reported as a hang (exit 3).
public enum CorpusRunner {
    public static func main(
        _ arguments: [String], name: String,
        _ target: (UnsafeRawBufferPointer) -> Void
    ) -> Int32 {
        let args = Array(arguments.dropFirst())
        if args.isEmpty || args.contains("-h") || args.contains("--help") {
            print("usage: \(name) FILE|DIR...   run the \(name) fuzz target once over each input")
            print("(build with `make fuzz` for the libFuzzer version)")
            return args.isEmpty ? 1 : 0
        }
        var files: [String] = []
        for a in args {
            guard let list = inputs(a) else {
                err("\(name): cannot read \(a)")
                return 2
            }
            files += list
        }
        signal(SIGALRM) { _ in
            let msg = "hang: input took longer than the time limit\n"
            _ = write(2, msg, msg.utf8.count)
            _exit(3)
        }
        let verbose = getenv("FUZZ_VERBOSE") != nil
        for f in files {
            guard let bytes = readFile(f) else { err("\(name): cannot read \(f)"); return 2 }
            if verbose { err("\(name): \(f)") }
            alarm(20)
            bytes.withUnsafeBytes { target($0) }
            alarm(0)
        }
        print("\(name): \(files.count) input(s) ok")
        return 0
    }

    static func err(_ line: String) {
        let s = line + "\n"
        _ = s.withCString { write(2, $0, strlen($0)) }
    }

    /// Regular files: itself; folders: every regular file below, sorted, hidden ones skipped.
    public static func inputs(_ path: String) -> [String]? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        if st.st_mode & S_IFMT != S_IFDIR { return [path] }
        guard let dir = opendir(path) else { return nil }
        defer { closedir(dir) }
        var out: [String] = []
        while let e = readdir(dir) {
            let name = withUnsafeBytes(of: e.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            if name.hasPrefix(".") { continue }
            if let sub = inputs(path + "/" + name) { out += sub }
        }
        return out.sorted()
    }

    public static func readFile(_ path: String) -> [UInt8]? {
        guard let f = fopen(path, "rb") else { return nil }
        defer { fclose(f) }
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = buf.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, f) }
            if n <= 0 { break }
            out += buf[0..<n]
        }
        return out
    }
}
