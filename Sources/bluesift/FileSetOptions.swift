import ArgumentParser

/// `--jobs`: how many captures are decoded at once. Declared once for every command that
/// reads several captures.
struct JobsOption: ParsableArguments {
    @Option(help: "Files decoded in parallel (default: the number of cores); each file's output stays whole and in order.")
    var jobs: Int? // optional: ArgumentParser would print the machine's count after our "(default: …)"

    var count: Int { jobs ?? FileJobs.defaultJobs }

    func validate() throws {
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1") }
    }
}

/// `--merge`: the files are one session (rotated logs), read in time order.
struct MergeOption: ParsableArguments {
    @Flag(help: "Read the files as one session (rotated logs: btsnoop_hci.log.last and btsnoop_hci.log, numbered PacketLogger files), merged in time order; connection state carries across.")
    var merge = false
}

/// `--output-dir`: one output file per capture instead of stdout.
struct OutputDirOption: ParsableArguments {
    @Option(name: .customLong("output-dir"), help: ArgumentHelp("Write each capture's output to DIR/NAME.EXT (the format's extension: .jsonl, .json, .csv, .txt), atomically, instead of stdout.", valueName: "DIR"))
    var outputDir: String?

    /// Runs `body` per input: into DIR/NAME.`ext` with --output-dir, else to stdout in order.
    func run(_ inputs: [String], ext: String, jobs: JobsOption, body: @escaping (String, Int32) -> Int32) throws -> Int32 {
        if let outputDir {
            return try FileJobs.runToDirectory(inputs, dir: outputDir, ext: ext, jobs: jobs.count, body: body)
        }
        return FileJobs.run(inputs, jobs: jobs.count, body: body)
    }
}
