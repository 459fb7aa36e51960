#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import BluesiftWire
import BluesiftCapture

/// Layer 2 target: every capture reader, reached through `CaptureFile.open(path:)` exactly as
/// the CLI reaches it, then drained record by record.
///
/// Input layout: byte 0 selects the container (bits 0-6, mod 5); bit 7 also runs every record
/// through the whole analyzer and renderers (`StackFuzz.Pipeline`); the rest is the file. For btsnoop, pcap and
/// pcapng the selector writes a valid magic over the start of the file, so mutations explore
/// record parsing instead of dying in format sniffing. Selectors 0 and 4 keep the bytes as they
/// are (sniffing itself, and PacketLogger, which has no magic).
public enum CaptureFuzz {
    public enum Selector: UInt8, CaseIterable, Sendable {
        case raw = 0, btsnoop = 1, pcap = 2, pcapng = 3, packetLogger = 4
        public init(byte: UInt8) { self = Selector(rawValue: (byte & 0x7F) % 5)! }
    }

    /// Runs one input. Traps (a finding) only when a reader breaks its own contract.
    public static func run(_ input: UnsafeRawBufferPointer) {
        guard let first = input.first else { return }
        var file = Array(input.dropFirst())
        forceMagic(Selector(byte: first), into: &file)
        let path = ScratchFile.store(file)
        drain(path: path, fileSize: file.count, pipeline: first & 0x80 != 0 ? StackFuzz.Pipeline() : nil)
    }

    /// Opens and reads a capture to the end, checking the reader contract on every record.
    public static func drain(path: String, fileSize: Int, pipeline: StackFuzz.Pipeline? = nil) {
        let reader: any CaptureReader
        do { reader = try CaptureFile.open(path: path) } catch { return } // unusable file: exit 2 in the CLI
        var records = 0
        var lastFrame = 0
        while let r = reader.next() {
            records += 1
            // Every record consumes at least one byte of the file: more records than bytes
            // means a reader that stopped advancing.
            precondition(records <= fileSize + 1, "reader returned more records than the file has bytes")
            precondition(r.frame > lastFrame, "frame numbers must increase: \(r.frame) after \(lastFrame)")
            lastFrame = r.frame
            precondition(r.bytes.count <= fileSize, "record claims \(r.bytes.count) bytes, file has \(fileSize)")
            // CaptureRecord.swift: nanoseconds 0..<1_000_000_000; renderers rely on it.
            precondition(
                r.timestamp.nanoseconds >= 0 && r.timestamp.nanoseconds < 1_000_000_000,
                "timestamp nanoseconds \(r.timestamp.nanoseconds) out of range")
            Sink.touch(r.bytes)
            pipeline?.add(r)
        }
        pipeline?.finish()
        precondition(reader.bytesRead <= reader.fileSize, "bytesRead \(reader.bytesRead) > fileSize \(reader.fileSize)")
        Sink.value &+= reader.warnings.count
    }

    /// Overwrites the magic of the selected container, keeping an existing valid one
    /// (so byte order and timestamp precision variants stay reachable).
    static func forceMagic(_ s: Selector, into f: inout [UInt8]) {
        switch s {
        case .raw, .packetLogger:
            return
        case .btsnoop:
            overwrite(&f, at: 0, Array("btsnoop".utf8) + [0])
        case .pcap:
            let m = f.count >= 4 ? Array(f[0..<4]) : []
            let valid: [[UInt8]] = [
                [0xD4, 0xC3, 0xB2, 0xA1], [0xA1, 0xB2, 0xC3, 0xD4],
                [0x4D, 0x3C, 0xB2, 0xA1], [0xA1, 0xB2, 0x3C, 0x4D]
            ]
            if !valid.contains(m) { overwrite(&f, at: 0, valid[0]) }
        case .pcapng:
            overwrite(&f, at: 0, [0x0A, 0x0D, 0x0D, 0x0A])
            let bom = f.count >= 12 ? Array(f[8..<12]) : []
            if bom != [0x4D, 0x3C, 0x2B, 0x1A] && bom != [0x1A, 0x2B, 0x3C, 0x4D] {
                overwrite(&f, at: 8, [0x4D, 0x3C, 0x2B, 0x1A])
            }
        }
    }

    static func overwrite(_ f: inout [UInt8], at offset: Int, _ bytes: [UInt8]) {
        if f.count < offset + bytes.count { f += [UInt8](repeating: 0, count: offset + bytes.count - f.count) }
        f.replaceSubrange(offset..<offset + bytes.count, with: bytes)
    }
}

/// Keeps reads from being optimised away (and lets AddressSanitizer see every byte of a view).
public enum Sink {
    nonisolated(unsafe) public static var value = 0
    @inline(never)
    public static func touch(_ bytes: UnsafeRawBufferPointer) {
        var h = value
        for b in bytes { h = h &* 31 &+ Int(b) }
        value = h
    }
}

/// One scratch file per process, rewritten for every input (in /dev/shm when there is one).
enum ScratchFile {
    nonisolated(unsafe) static var path: String = {
        let dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
        return "\(dir)/bluesift-fuzz-\(getpid()).bin"
    }()
    nonisolated(unsafe) static var registered = false

    static func store(_ bytes: [UInt8]) -> String {
        if !registered {
            registered = true
            atexit { unlink(ScratchFile.path) }
        }
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        precondition(fd >= 0, "cannot create \(path)")
        defer { close(fd) }
        bytes.withUnsafeBytes { buf in
            var done = 0
            while done < buf.count {
                let n = write(fd, buf.baseAddress! + done, buf.count - done)
                precondition(n > 0, "cannot write \(path)")
                done += n
            }
        }
        return path
    }
}
