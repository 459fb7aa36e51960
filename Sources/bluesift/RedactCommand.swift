import ArgumentParser
import BluesiftSession
import Foundation
import BluesiftWire
import BluesiftCapture
import BluesiftDissect
import BluesiftSecurity

struct Redact: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "redact",
        abstract: "Copy a capture with device addresses pseudonymised and key material zeroed, for sharing.",
        discussion: """
            Addresses become keyed pseudonyms (HMAC-SHA-256; the same address gets the same pseudonym \
            within the file, and across files given the same --salt; the two random-address type bits \
            are kept) wherever they occur: HCI parameters, advertising reports and AD data, LL \
            advertising PDUs and CONNECT_IND, SMP Identity Address Information, monitor New Index, \
            vendor payloads (either byte order), and as text in log lines, names and pcapng packet \
            comments (separated by : or -, or 12 hex digits of a known address; either case and byte \
            order). Zeroed, same \
            length: SMP Encryption/Identity/Signing Information and Pairing Confirm/Random/DHKey Check \
            values, LE Long Term Key Request Reply, LE Enable Encryption, LE Encrypt (key, plaintext, \
            result), LE Rand results, LE DHKey, Link Key Notification, Link Key Request Reply, \
            Return/Write Stored Link Keys, PIN Code Request Reply, resolving-list IRKs; Bluetooth Mesh, \
            with --mesh-keys: the keys of Config AppKey/NetKey Add/Update and, with provisioning_secrets, \
            the NetKey of Provisioning Data, zeroed and sealed again (MICs valid with the same keys; \
            what no given key opens is left as it was and counted in the report); on a sniffed LE \
            link decrypted with --ltk/--keys, key material in its ATT values (an LE Audio \
            Broadcast_Code written to BASS) and --mask values are zeroed in the plaintext and the \
            PDU sealed again with the link's key (same length, new MIC, CRC fixed). OUT keeps IN's \
            format byte for byte otherwise (link type, headers, timestamps), written under a \
            temporary name and renamed when complete. The report (what was replaced, how many \
            times) goes to stderr, or as JSON to --report FILE.
            Exit codes: 0 written; 2 unusable input, an input it cannot rewrite in place (compressed, \
            a bug report), or OUT is IN.
            """)

    @Argument(help: "Input capture.") var input: String
    @Argument(help: "Output file (same format as the input).") var output: String
    @Option(help: "Pseudonym key: the same salt gives the same pseudonyms across files (default: random, never written).")
    var salt: String?
    @Option(help: "Keep only this device (address): its connections and its advertising.") var peer: String?
    @Option(name: .customLong("mask-characteristic"), help: ArgumentHelp("Zero the values of this characteristic (UUID; repeatable).", valueName: "UUID"))
    var maskCharacteristic: [String] = []
    @Flag(help: "Drop advertising reports (all, or all but --peer's).") var dropAdvertising = false
    @Option(help: "Write the report as JSON to FILE instead of text on stderr.") var report: String?
    @OptionGroup var decode: DecodeOptions

    func run() throws {
        try OutputGuard.refuseSameFile(output: output, inputs: [input])
        if let report { try OutputGuard.refuseSameFile(output: report, inputs: [input]) }
        var options = Redactor.Options(salt: salt.map { Array($0.utf8) } ?? AddressPseudonyms.randomSalt())
        if let peer {
            guard let a = BDAddr(string: peer) else { throw ValidationError("--peer: not an address: \(peer)") }
            options.peer = (0..<6).map { UInt8(truncatingIfNeeded: a.value >> UInt64(8 * $0)) }
        }
        for u in maskCharacteristic {
            guard let uuid = BluetoothUUID(string: u) else { throw ValidationError("--mask-characteristic: not a UUID: \(u)") }
            options.maskCharacteristics.insert(uuid)
        }
        options.dropAdvertising = dropAdvertising
        let settings = try decode.settings(plugins: !options.maskCharacteristics.isEmpty)
        let redactor = Redactor(options: options, analyzer: AnalysisSession.analyzer(settings))
        // Pass 1 learns the addresses (and what to mask), pass 2 rewrites: two reads.
        try openSessionOrExit(input, decode: settings).forEachRecord { redactor.learn($0) }
        let session = try openSessionOrExit(input, decode: settings)
        do {
            let patcher = try CapturePatcher(input: input, output: output)
            var n = 0
            try session.forEachRecord { r in
                let (bytes, drop) = redactor.redact(r)
                try patcher.copyNext(
                    expected: r.bytes, replacement: bytes, drop: drop, raw: { redactor.redactStored($0) },
                    comment: { redactor.redactComment($0) })
                n += 1
            }
            try patcher.finish()
            printWarnings(session.reader, path: input)
            let rows = redactor.report
            if let report {
                var w = JSONFieldWriter(capacity: 1024)
                w.beginTopLevel()
                w.string("input", input)
                w.string("output", output)
                w.int("records", n - patcher.dropped)
                w.beginObject("replaced")
                for (k, v) in rows { w.int(.dynamic(k), v) }
                w.endObject()
                w.endTopLevel()
                try OutputGuard.write(Data(w.out + [0x0A]), to: report)
            } else {
                stderrLine("bluesift: wrote \(n - patcher.dropped) records to \(output)")
                for (k, v) in rows { stderrLine("bluesift: replaced \(k): \(v)") }
            }
        } catch let e as CaptureError {
            stderrLine("bluesift: \(e.description)")
            throw Exit.unusableInput
        }
    }
}
