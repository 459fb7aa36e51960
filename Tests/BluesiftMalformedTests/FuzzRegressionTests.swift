import Testing
import Foundation
import BluesiftFuzz

/// Replays Tests/FuzzRegressions/<target>/ through the fuzz targets in process: each file
/// once crashed or hung a target (or is a seed worth keeping). `pending/` is not replayed:
/// it holds inputs that still crash code owned elsewhere (see docs/fuzzing.md).
@Suite struct FuzzRegressionTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("FuzzRegressions")

    static func inputs(_ target: String) -> [String] {
        CorpusRunner.inputs(root.appendingPathComponent(target).path) ?? []
    }

    @Test func captureRegressions() {
        let files = Self.inputs("capture")
        #expect(!files.isEmpty)
        for f in files { CorpusRunner.readFile(f)!.withUnsafeBytes { CaptureFuzz.run($0) } }
    }

    @Test func stackRegressions() {
        let files = Self.inputs("stack")
        #expect(!files.isEmpty)
        for f in files { CorpusRunner.readFile(f)!.withUnsafeBytes { StackFuzz.run($0) } }
    }

    /// Mutants of StructuredCaptureFuzz that once failed, as plain capture files: read with
    /// the reader contract checked, in bounded time.
    @Test func structuredCaptureRegressions() {
        let files = Self.inputs("structured")
        #expect(!files.isEmpty)
        for f in files {
            let r = StructuredCaptureFuzz.read(CorpusRunner.readFile(f)!, plain: 1 << 20, pipeline: StackFuzz.Pipeline())
            #expect(r.contract == nil, "\(f): \(r.contract ?? "")")
        }
    }

    @Test func pluginRegressions() {
        let files = Self.inputs("plugins")
        #expect(!files.isEmpty)
        #expect(!BundledPlugins.all.isEmpty)
        for f in files { CorpusRunner.readFile(f)!.withUnsafeBytes { PluginFuzz.run($0) } }
    }
}
