import BluesiftWire

/// Advertising data that comes in pieces, put back together so the LE Audio values in it (the
/// BASE, the announcements, Broadcast_Name) are decoded from the whole:
/// - a broadcast source's host sets it in fragments: LE Set Extended Advertising Data and LE Set
///   Periodic Advertising Data (Core 6.0 Vol 4 Part E §7.8.54, §7.8.62), Operation 0x01 first,
///   0x00 intermediate, 0x02 last fragment (0x03 complete data), per advertising handle;
/// - a sink's controller reports periodic advertising data in several LE Periodic Advertising
///   Reports (§7.7.65.15): Data_Status 0x01 "incomplete, more data to come" until 0x00
///   "complete" or 0x02 "incomplete, data truncated, no more to come", per sync handle.
/// Bounded: at most 1650 octets per key (the largest advertising data, §7.8.57) and 32 keys.
final class LEAudioAdvertisingAssembly {
    enum Key: Hashable {
        /// A command's opcode and advertising handle.
        case set(UInt16, UInt8)
        case sync(UInt16)
    }
    /// What a piece gave: nothing yet, the whole data (`pieces` > 1 when it was put together),
    /// or data with damage to note (the values of its whole AD structures are still decoded).
    enum Outcome {
        case pending
        case whole([UInt8], pieces: Int)
        case damaged([UInt8], pieces: Int, DecodeError)
    }
    static let maxLength = 1650, maxKeys = 32
    /// `since`: when the first piece came (a Dictionary's order is seeded per process, so the
    /// oldest is found by it, not by `keys.first`).
    var pending: [Key: (data: [UInt8], pieces: Int, since: Int)] = [:]
    private var started = 0

    /// One fragment of LE Set Extended/Periodic Advertising Data (`operation` as sent).
    func command(_ key: Key, operation: UInt64, _ bytes: [UInt8]) -> Outcome {
        switch operation {
        case 3:
            pending[key] = nil
            return .whole(bytes, pieces: 1)
        case 1:
            pending[key] = nil
            return add(key, bytes, more: true)
        case 0, 2:
            guard pending[key] != nil else {
                let which = operation == 0 ? "intermediate" : "last"
                return .damaged(bytes, pieces: 1, LEAudioError.make(.reassembly, 0, "\(which) fragment of advertising data without its first fragment"))
            }
            return add(key, bytes, more: operation == 0)
        default:
            return .pending // 0x04 unchanged data: nothing new
        }
    }

    /// One LE Periodic Advertising Report's data (`status`: Data_Status).
    func report(sync: UInt16, status: UInt64, _ bytes: [UInt8]) -> Outcome {
        let key = Key.sync(sync)
        switch status {
        case 0 where pending[key] == nil: return .whole(bytes, pieces: 1)
        case 0: return add(key, bytes, more: false)
        case 1: return add(key, bytes, more: true)
        default:
            let (data, pieces) = pending[key].map { ($0.data + bytes, $0.pieces + 1) } ?? (bytes, 1)
            pending[key] = nil
            return .damaged(
                data, pieces: pieces,
                LEAudioError.make(.truncated, 0, "periodic advertising data truncated by the controller (Data_Status 2) after \(data.count) octets"))
        }
    }

    func add(_ key: Key, _ bytes: [UInt8], more: Bool) -> Outcome {
        var p = pending[key] ?? ([], 0, started)
        if p.pieces == 0 { started &+= 1 }
        pending[key] = nil
        p.data += bytes; p.pieces += 1
        guard p.data.count <= Self.maxLength else {
            return .damaged([], pieces: p.pieces, LEAudioError.make(.invalidLength, 0, "advertising data over \(Self.maxLength) octets in \(p.pieces) pieces: dropped"))
        }
        guard more else { return .whole(p.data, pieces: p.pieces) }
        if pending.count >= Self.maxKeys, let oldest = pending.min(by: { $0.value.since < $1.value.since }) {
            pending[oldest.key] = nil
        }
        pending[key] = p
        return .pending
    }
}

extension LEAudio {
    /// The layer of a piece of advertising data: the LE Audio values of the whole data on the
    /// piece that completes it (with the number of pieces); nil for a piece that does not
    /// complete anything (it stays HCI's, or the plain isochronous message for a report).
    static func assembled(_ outcome: LEAudioAdvertisingAssembly.Outcome, _ m: LEAudioHCIMessage) -> LEAudioMessageLayer? {
        var v = LEAudioMessageLayer(hci: m)
        switch outcome {
        case .pending: return nil
        case .whole(let d, let pieces):
            v.advertising = d.withUnsafeBytes(LEAudioMessageLayer.values(inAdvertisingData:))
            if pieces > 1 { v.assembled = (pieces, d.count) }
        case .damaged(let d, let pieces, let e):
            v.advertising = d.withUnsafeBytes(LEAudioMessageLayer.values(inAdvertisingData:))
            if pieces > 1 { v.assembled = (pieces, d.count) }
            v.note = DecodeError.Box(e)
        }
        return v
    }
}
