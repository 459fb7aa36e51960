import BluesiftWire

/// An LTK the decoder may use on sniffed links (`--ltk`, `--keys`, or found in the capture).
public struct KnownLTK: Sendable, Hashable {
    /// Most significant octet first (as crackle prints it; SMP sends it reversed).
    public var ltk: [UInt8]
    /// The device it belongs to, when known: only its connections try it.
    public var address: BDAddr?
    public var ediv: UInt16?
    /// As sent (8 octets).
    public var rand: [UInt8]?
    public var source: String

    public init(ltk: [UInt8], address: BDAddr? = nil, ediv: UInt16? = nil, rand: [UInt8]? = nil, source: String) {
        self.ltk = ltk; self.address = address; self.ediv = ediv; self.rand = rand; self.source = source
    }
}

/// A key recovered from the capture: a cracked legacy pairing (TK, STK) or an LTK seen in
/// the (decrypted) key distribution.
public struct RecoveredKey: Sendable, Hashable {
    public var connection: UInt16
    public var frame: Int
    public var central: BDAddr?
    public var centralRandom = false
    public var peripheral: BDAddr?
    public var peripheralRandom = false
    public var tk: UInt32?
    public var stk: [UInt8]?
    /// Most significant octet first.
    public var ltk: [UInt8]?
    public var ediv: UInt16?
    public var rand: [UInt8]?
    /// True when the central distributed it.
    public var distributedBy: Bool?

    public init(
        connection: UInt16, frame: Int, central: BDAddr?, centralRandom: Bool, peripheral: BDAddr?,
        peripheralRandom: Bool, tk: UInt32? = nil, stk: [UInt8]? = nil, ltk: [UInt8]? = nil,
        ediv: UInt16? = nil, rand: [UInt8]? = nil, distributedBy: Bool? = nil
    ) {
        self.connection = connection; self.frame = frame; self.central = central; self.centralRandom = centralRandom
        self.peripheral = peripheral; self.peripheralRandom = peripheralRandom; self.tk = tk; self.stk = stk
        self.ltk = ltk; self.ediv = ediv; self.rand = rand; self.distributedBy = distributedBy
    }
}

extension KnownLTK {
    /// A bond's LTK as the decoder tries it. A device with an IRK may appear under any
    /// resolvable address: tried everywhere (the MIC tells). An LE Secure Connections LTK has
    /// EDIV and Rand zero: any session may use it.
    public init(bond b: Bond, source: String) {
        self.init(
            ltk: b.ltk.reversed(), address: b.irk == nil ? (b.identityAddress ?? b.address) : nil,
            ediv: b.secureConnections ? nil : b.ediv, rand: b.secureConnections ? nil : b.rand, source: source)
    }
}

extension Bond {
    /// The bond a recovered key makes: it belongs to the device that distributed it; an STK
    /// to the pair, kept under the peripheral's address. Nil without a key or that address.
    public init?(recovered k: RecoveredKey) {
        guard let key = k.ltk ?? k.stk else { return nil }
        let central = k.distributedBy ?? false
        guard let addr = central ? k.central : k.peripheral else { return nil }
        self.init(
            address: addr, addressType: (central ? k.centralRandom : k.peripheralRandom) ? "random" : "public",
            ltk: key.reversed(), ediv: k.ediv ?? 0, rand: k.rand ?? [UInt8](repeating: 0, count: 8),
            authenticated: (k.tk ?? 0) != 0, secureConnections: false)
    }
}
