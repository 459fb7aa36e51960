import BluesiftCapture

extension ProtocolDecoder {
    /// A decrypted PDU as the air would carry it in clear: access address (and Coded PHY
    /// Coding Indicator), header with the plaintext's length, plaintext, CRC recomputed with
    /// the connection's CRCInit (Core 5.4 Vol 6 Part B §3.1.1), marked decrypted and CRC-valid.
    /// Nil for anything else (written as read), and for PDUs the sniffer itself decrypted.
    public func plaintextRecord(_ r: CaptureRecord, _ f: DecodedFrame, into out: inout [UInt8]) -> CaptureRecord? {
        guard f.layers.contains(.ll), let ll = f.ll, ll.decrypted, r.sniffer?.encrypted != false,
            let conn = f.connection
        else { return nil }
        let head = 4 + (ll.codingIndicator == nil ? 0 : 1)
        guard r.bytes.count >= head + 2 else { return nil }
        out.removeAll(keepingCapacity: true)
        out.append(contentsOf: r.bytes[0..<head + 1])
        out.append(UInt8(ll.payload.count))
        out.append(contentsOf: ll.payload)
        let crcInit = connection(adapter: r.adapter, handle: conn)?.air?.crcInit
        let crc =
            crcInit.map { i in out.withUnsafeBytes { LLCRC.compute(UnsafeRawBufferPointer(rebasing: $0[head...]), crcInit: i) } }
            ?? ll.crc ?? 0
        out.append(UInt8(crc & 0xFF)); out.append(UInt8(crc >> 8 & 0xFF)); out.append(UInt8(crc >> 16 & 0xFF))
        return r.markedDecrypted(fromCentral: ll.fromCentral)
    }
}

extension CaptureRecord {
    /// This record's sniffer header saying decrypted and CRC-valid (the bytes are the caller's).
    /// Never the bare DLT 251 form: only the RF header can say "decrypted".
    public func markedDecrypted(fromCentral: Bool?) -> CaptureRecord {
        var p = self
        var s = sniffer ?? SnifferInfo()
        s.encrypted = false; s.crcOK = true; s.hasCRC = true
        if s.fromCentral == nil { s.fromCentral = fromCentral }
        p.sniffer = s
        if p.sourceType == UInt16(LinkType.leLL) { p.sourceType = UInt16(LinkType.leLLWithPHDR) }
        return p
    }
}
