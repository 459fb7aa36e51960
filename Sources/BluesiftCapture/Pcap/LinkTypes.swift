/// pcap LINKTYPE values this reader understands (tcpdump.org/linktypes.html).
public enum LinkType {
    public static let ppi: UInt32 = 192
    public static let h4: UInt32 = 187
    public static let h4WithPHDR: UInt32 = 201
    public static let leLL: UInt32 = 251
    public static let linuxMonitor: UInt32 = 254
    public static let leLLWithPHDR: UInt32 = 256
    public static let nordicBLE: UInt32 = 272
    public static let user0: UInt32 = 147

    /// Link types this tool decodes; records of any other are kept as unknown records.
    public static func isSupported(_ dlt: UInt32) -> Bool {
        [h4, h4WithPHDR, linuxMonitor, leLL, leLLWithPHDR, nordicBLE, ppi].contains(dlt)
    }

    public static func name(_ dlt: UInt32) -> String {
        switch dlt {
        case 1: "LINKTYPE 1, Ethernet"
        case 105: "LINKTYPE 105, IEEE 802.11"
        case 113: "LINKTYPE 113, Linux cooked"
        case 127: "LINKTYPE 127, IEEE 802.11 radiotap"
        case 187: "Bluetooth HCI H4"
        case 192: "PPI"
        case 201: "Bluetooth HCI H4 with pseudo-header"
        case 251: "Bluetooth LE link layer"
        case 254: "Bluetooth Linux monitor"
        case 256: "Bluetooth LE link layer with RF header"
        case 272: "nRF Sniffer for Bluetooth LE"
        default: "LINKTYPE \(dlt)"
        }
    }
}

/// Turns one pcap/pcapng packet of a given link type into a `CaptureRecord`: strips the
/// pseudo-headers and decodes sniffer metadata. Never traps: short packets become `.unknown`.
struct LinkDecoder {
    let linktype: UInt32
    let scratch = Scratch()

    func record(frame: Int, timestamp: Timestamp, data d: UnsafeRawBufferPointer, originalLength: Int) -> CaptureRecord {
        let cut = max(originalLength - d.count, 0) // bytes the capture dropped at the end
        func make(
            _ kind: PacketKind, _ bytes: UnsafeRawBufferPointer, dir: Direction? = nil, adapter: UInt16 = 0,
            type: UInt16, sniffer: SnifferInfo? = nil
        ) -> CaptureRecord {
            CaptureRecord(
                frame: frame, timestamp: timestamp, direction: dir, adapter: adapter, kind: kind, bytes: bytes,
                originalLength: bytes.count + cut, sourceType: type, sniffer: sniffer)
        }
        let raw = make(.unknown, d, type: CaptureRecord.noType) // too short for the link type's header

        switch linktype {
        case LinkType.h4:
            guard d.count >= 1 else { return raw }
            let k = H4.kind(d[0])
            return make(k, d.dropping(1), dir: H4.impliedDirection(k), type: UInt16(d[0]))
        case LinkType.h4WithPHDR:
            // 4-byte big-endian direction: 0 sent (host→controller), 1 received.
            guard d.count >= 5 else { return raw }
            let dirWord = UInt32(d[0]) << 24 | UInt32(d[1]) << 16 | UInt32(d[2]) << 8 | UInt32(d[3])
            return make(H4.kind(d[4]), d.dropping(5), dir: dirWord & 1 == 1 ? .received : .sent, type: UInt16(d[4]))
        case LinkType.linuxMonitor:
            // adapter BE16, opcode BE16 (pcap/bluetooth.h pcap_bluetooth_linux_monitor_header).
            guard d.count >= 4 else { return raw }
            let adapter = UInt16(d[0]) << 8 | UInt16(d[1]), op = UInt16(d[2]) << 8 | UInt16(d[3])
            let (kind, dir) = LinuxMonitorOpcode.classify(op)
            let body = d.dropping(4)
            let bytes = kind == .note ? LinuxMonitorOpcode.payload(op, body, scratch: scratch) : body
            return CaptureRecord(
                frame: frame, timestamp: timestamp, direction: dir, adapter: adapter, kind: kind,
                bytes: bytes, originalLength: bytes.count + (kind == .note ? 0 : cut), sourceType: op)
        case LinkType.leLL:
            return make(.ll, d, type: UInt16(linktype), sniffer: SnifferInfo(hasCRC: true))
        case LinkType.leLLWithPHDR:
            guard let (info, body) = Sniffers.btleRF(d) else { return raw }
            return make(.ll, body, type: UInt16(linktype), sniffer: info)
        case LinkType.nordicBLE:
            guard let (info, body) = Sniffers.nordic(d) else { return raw }
            return make(.ll, body, type: UInt16(linktype), sniffer: info)
        case LinkType.ppi:
            guard let (info, body) = Sniffers.ppi(d) else { return raw }
            return make(.ll, body, type: UInt16(linktype), sniffer: info)
        default:
            return raw
        }
    }
}
