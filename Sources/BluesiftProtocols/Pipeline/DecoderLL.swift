import BluesiftWire
import BluesiftCapture

extension ProtocolDecoder {
    static let maxSniffedConnections = 1024

    /// Over-the-air LE packets (Core 5.4 Vol 6 Part B §2): advertising → `adv`, data channel
    /// LLID 1/2 → L2CAP reassembly per access address and direction, unless encrypted.
    func decodeLL(_ record: CaptureRecord, _ f: inout DecodedFrame) {
        let ll = LLPacket(bytes: record.bytes, sniffer: record.sniffer)
        if let e = ll.error { f.errors.append(e.inLayer("ll")) }
        if ll.isAdvertising {
            if let adv = ll.advertising {
                if let e = adv.error { f.errors.append(e.inLayer("adv")) }
                f.set(adv)
            }
        } else if let llid = ll.llid {
            decodeLLData(llid: llid, payload: ll.payload, accessAddress: ll.accessAddress,
                         fromCentral: record.sniffer?.fromCentral, encrypted: ll.encrypted, record, &f)
        }
        f.set(ll)
    }

    /// Stable small number of a sniffed connection (1, 2, …), with its ConnectionInfo.
    func sniffedConnection(_ aa: UInt32, _ record: CaptureRecord) -> UInt16 {
        if let n = sniffed[aa] { return n }
        if sniffed.count >= Self.maxSniffedConnections, let victim = sniffed.first {
            sniffed[victim.key] = nil
            release(StateKey(adapter: record.adapter, connection: 0x1_0000 | UInt32(victim.value)))
        }
        let n = nextSniffedNumber
        nextSniffedNumber = nextSniffedNumber == .max ? 1 : nextSniffedNumber + 1
        sniffed[aa] = n
        var c = ConnectionInfo(adapter: record.adapter, handle: n)
        c.transport = .le; c.accessAddress = aa
        c.start = record.timestamp; c.startFrame = record.frame
        _ = table.open(c)
        return n
    }

    /// LLID 2 starts an L2CAP PDU, LLID 1 continues it (empty LLID 1 PDUs carry nothing).
    func decodeLLData(llid: UInt8, payload: UnsafeRawBufferPointer, accessAddress: UInt32, fromCentral: Bool?,
                      encrypted: Bool, _ record: CaptureRecord, _ f: inout DecodedFrame) {
        let n = sniffedConnection(accessAddress, record)
        f.connection = n
        guard llid == 1 || llid == 2, !encrypted, !(llid == 1 && payload.isEmpty) else { return }
        let side: UInt8 = fromCentral.map { $0 ? 0 : 1 } ?? 2
        let s = state(StateKey(adapter: record.adapter, connection: 0x1_0000 | UInt32(n)))
        reassemble(payload, declared: payload.count, starts: llid == 2, state: s, side: side, record, &f)
    }
}
