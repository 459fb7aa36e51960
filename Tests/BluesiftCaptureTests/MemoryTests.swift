import Testing
import Foundation
@testable import BluesiftCapture
import CPcap

extension CaptureTests {
    /// Reading must not grow the heap with the file: records borrow one buffer (or the map).
    @Suite struct MemoryTests {
        static func heapInUse() -> Int { Int(bluesift_heap_in_use()) }

        /// Heap growth while reading all records after the first 100.
        static func growth(_ file: String) throws -> (records: Int, growth: Int) {
            let reader = try CaptureFile.open(path: Corpus.path(file))
            var n = 0, sum = 0
            while n < 100, let r = reader.next() { n += 1; sum &+= r.bytes.count }
            let before = heapInUse()
            while let r = reader.next() { n += 1; sum &+= r.bytes.count }
            return (n, heapInUse() - before + (sum < 0 ? 1 : 0))
        }

        static let files = [
            "lightctl_btsnoop_hci.log", "bafang_bluetoothd-hci-latest.pklg", "tesible_Lv4_passkey.pcapng",
            "btsnooprs_btsnoop_btmon.log"
        ]
        static let limit = 16 * 1024

        @Test(.enabled(if: Corpus.available, "needs ../shared/captures/public")) func heapDoesNotGrowWhileReading() throws {
            var noisy: [String] = []
            for file in Self.files {
                // Best of three: the counter is process-wide and other suites run in parallel.
                var best = Int.max
                for _ in 0..<3 {
                    let (n, g) = try Self.growth(file)
                    #expect(n == Corpus.summaries[file]?.packets)
                    best = min(best, g)
                }
                if best >= Self.limit { noisy.append("\(file): heap grew by \(best) bytes") }
            }
            guard !noisy.isEmpty else { return }
            if ProcessInfo.processInfo.environment["BLUESIFT_HEAP_CHILD"] != nil {
                Issue.record("\(noisy)")
                return
            }
            // Growth seen under load: settle it in a process that runs this test alone.
            let p = Process()
            p.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
            p.arguments = ["--testing-library", "swift-testing", "--filter", "heapDoesNotGrowWhileReading"]
            p.environment = ProcessInfo.processInfo.environment.merging(["BLUESIFT_HEAP_CHILD": "1"]) { $1 }
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            p.waitUntilExit()
            #expect(p.terminationStatus == 0, "heap grew while reading, alone too: \(noisy)")
        }
    }
}
