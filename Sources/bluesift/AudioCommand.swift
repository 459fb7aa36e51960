import ArgumentParser
import Foundation
#if canImport(Glibc)
    import Glibc
#endif
import BluesiftCapture
import BluesiftSession
import BluesiftAudio

struct Audio: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audio",
        abstract: "Decode each LE Audio (LC3) and A2DP (SBC) stream of a capture to a WAV file.",
        discussion: """
            LE Audio: every CIS and BIS direction whose codec configuration the capture shows (the \
            ASE's Config Codec for a CIS, the BASE for a BIS) is decoded with liblc3, one file per \
            stream, channels in audio channel allocation order; a lost SDU (a sequence number gap, \
            Packet_Status_Flag lost, an empty SDU) is filled by LC3's packet loss concealment and \
            counted. A sniffer's capture: every CIS direction and BIS read off the air (decrypted \
            with the ACL's key, --ltk/--keys, or --broadcast-code), unframed SDUs rebuilt from their \
            fragments by payload counter (an SDU missing a fragment is concealed and counted), named \
            by access address, CIG/CIS and direction (aa6b7d2c19-cig1-cis2-c2p) or BIG seed access \
            address and BIS (big4d2a1c3b-bis1). A2DP: every AVDTP media channel carrying SBC is decoded with libsbc; missing \
            media packets are counted and filled with silence as long as their RTP time stamps \
            say. Other codecs (AAC, aptX, vendor LE Audio codecs) are listed with the reason they \
            were skipped. One line per stream on stdout: name, codec and parameters, frames, lost, \
            duration, file. Exit codes: 0 done (streams skipped say why), 2 unusable input, or an \
            output folder that cannot be created or a file that cannot be written.
            """)

    @Argument(help: "Capture file.") var file: String

    @Option(name: .shortAndLong, help: "Folder for the WAV files (created if missing; default: the current folder).")
    var output: String = "."

    @Option(name: .customLong("stream"), help: "Only this stream: its name as listed (conn0040-ase1-sink, big1-bis1, a2dp-conn000b-cid0041) or its CIS/BIS/ACL handle (0x0060). Repeatable.")
    var streams: [String] = []

    @OptionGroup var decode: DecodeOptions

    func run() throws {
        try refuseFolder(file, hint: "give one capture")
        var isDir: ObjCBool = false
        if !FileManager.default.fileExists(atPath: output, isDirectory: &isDir) {
            do { try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true) } catch {
                // FileManager's message names no cause; mkdir(2)'s errno does.
                if mkdir(output, 0o755) != 0 {
                    stderrLine("bluesift: \(output): cannot create the folder: \(String(cString: strerror(errno)))")
                    throw Exit.unusableInput
                }
            }
        } else if !isDir.boolValue {
            stderrLine("bluesift: \(output) is not a folder")
            throw Exit.unusableInput
        }
        let wanted = streams
        let handles = Set(wanted.compactMap { parseInteger($0) }.map { UInt16(truncatingIfNeeded: $0) })
        let extractor = AudioExtractor(directory: output) { name, handle in
            wanted.isEmpty || wanted.contains(name) || handles.contains(handle)
        }
        let session = try openSessionOrExit(file, decode: try decode.settings())
        var summaries: [AudioStreamSummary] = []
        do {
            try session.forEach { frame in try extractor.add(frame) }
            summaries = try extractor.finish()
        } catch {
            stderrLine("bluesift: \(error)")
            throw Exit.unusableInput
        }
        printWarnings(session.reader, path: file)
        var out = Output()
        if summaries.isEmpty { out.line(wanted.isEmpty ? "no LE Audio or A2DP stream in this capture" : "no stream matches --stream " + wanted.joined(separator: ", ")) }
        for s in summaries { out.line(s.line) }
        out.flush()
    }
}
