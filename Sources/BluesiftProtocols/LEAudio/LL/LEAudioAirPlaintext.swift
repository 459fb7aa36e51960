import BluesiftCapture

extension LEAudioAirLayer {
    /// A decrypted CIS or BIS PDU as the air would carry it in clear (`convert --decrypt`), as
    /// `ProtocolDecoder.plaintextRecord` writes an ACL's: access address, the header with the
    /// plaintext's length (LLID and the other bits as sent), the plaintext (MIC removed), the
    /// CRC recomputed (Core 6.0 Vol 6 Part B §3.1.1) with the CRCInit the captured PDU and its
    /// CRC give (a CIS's is its ACL's, a BIS's the BIGInfo's BaseCRCInit and the BIS number;
    /// running the CRC backwards finds it without tracking either), marked decrypted and
    /// CRC-valid. Nil for any other record (written as read).
    public static func plaintextRecord(_ r: CaptureRecord, _ f: DecodedFrame, into out: inout [UInt8]) -> CaptureRecord? {
        guard let v = f.moduleLayer(LEAudioAirLayer.self), v.decryption?.counter != nil, let p = v.isochronous, let ll = f.ll,
            let crc = ll.crc, r.sniffer?.encrypted != false
        else { return nil }
        let head = 4 + (ll.codingIndicator == nil ? 0 : 1)
        guard r.bytes.count >= head + 2 + 3 else { return nil }
        let crcInit = LLCRC.crcInit(of: UnsafeRawBufferPointer(rebasing: r.bytes[head..<(r.bytes.count - 3)]), crc: crc)
        out.removeAll(keepingCapacity: true)
        out.append(contentsOf: r.bytes[0..<head])
        out.append(p.header)
        out.append(UInt8(truncatingIfNeeded: p.payload.count))
        out.append(contentsOf: p.payload)
        let c = out.withUnsafeBytes { LLCRC.compute(UnsafeRawBufferPointer(rebasing: $0[head...]), crcInit: crcInit) }
        out.append(UInt8(c & 0xFF)); out.append(UInt8(c >> 8 & 0xFF)); out.append(UInt8(c >> 16 & 0xFF))
        return r.markedDecrypted(fromCentral: v.fromCentral)
    }
}
