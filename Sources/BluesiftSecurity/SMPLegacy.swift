import Dispatch
import Synchronization
import BluesiftWire

/// Recovery of a legacy pairing's TK from a capture, as crackle does (Core 5.4 Vol 3 Part H
/// §2.3.5.5): the TK is 0 (Just Works) or a passkey of at most 999999, so trying every value
/// against the captured Mconfirm with c1 finds it. Values in the cipher's order (most
/// significant octet first), as SMPCrypto takes them, unless a parameter says "as sent".
public enum SMPLegacy {
    /// The TK of a passkey (or 0 for Just Works), most significant octet first.
    public static func tk(_ passkey: UInt32) -> [UInt8] {
        var k = [UInt8](repeating: 0, count: 16)
        k[12] = UInt8(passkey >> 24); k[13] = UInt8(truncatingIfNeeded: passkey >> 16)
        k[14] = UInt8(truncatingIfNeeded: passkey >> 8); k[15] = UInt8(truncatingIfNeeded: passkey)
        return k
    }
}

/// What a passive capture of a legacy pairing holds (Vol 3 Part H §2.3.5.5, §3.5), as sent.
public struct LegacyPairingCapture: Sendable, Hashable {
    /// Pairing Request / Response PDUs, 7 octets each, opcode first.
    public var preq: [UInt8]
    public var pres: [UInt8]
    public var initiator: BDAddr, initiatorRandom: Bool
    public var responder: BDAddr, responderRandom: Bool
    /// Confirm and random values, 16 octets each as sent: the initiator's first.
    public var mconfirm: [UInt8]?
    public var sconfirm: [UInt8]?
    public var mrand: [UInt8]
    public var srand: [UInt8]

    public init(
        preq: [UInt8], pres: [UInt8], initiator: BDAddr, initiatorRandom: Bool, responder: BDAddr,
        responderRandom: Bool, mconfirm: [UInt8]?, sconfirm: [UInt8]?, mrand: [UInt8], srand: [UInt8]
    ) {
        self.preq = preq; self.pres = pres; self.initiator = initiator; self.initiatorRandom = initiatorRandom
        self.responder = responder; self.responderRandom = responderRandom
        self.mconfirm = mconfirm; self.sconfirm = sconfirm; self.mrand = mrand; self.srand = srand
    }

    /// p1 and p2 of c1, most significant first.
    var p1: [UInt8] {
        Array(pres.reversed()) + Array(preq.reversed()) + [responderRandom ? 1 : 0, initiatorRandom ? 1 : 0]
    }
    var p2: [UInt8] {
        [0, 0, 0, 0] + Array(initiator.littleEndianBytes.reversed()) + Array(responder.littleEndianBytes.reversed())
    }

    /// The TK whose confirm values match, searched over 0…999999 on `threads` threads
    /// (TK 0 first: Just Works), and how many candidates were tried. `progress(done)` is
    /// called now and then from a worker. Nil TK when no passkey matches (out-of-band data,
    /// or values captured wrongly).
    public func crackTK(
        threads: Int = ProcessInfoCores.count,
        progress: (@Sendable (Int) -> Void)? = nil
    ) -> (tk: UInt32?, tried: Int) {
        guard mrand.count == 16, srand.count == 16, preq.count == 7, pres.count == 7 else { return (nil, 0) }
        let targets: [(rand: [UInt8], confirm: [UInt8])] =
            [(mrand, mconfirm), (srand, sconfirm)].compactMap { r, c in c.map { (Array(r.reversed()), Array($0.reversed())) } }
        guard let first = targets.first else { return (nil, 0) }
        // r XOR p1 does not depend on the TK: computed once.
        let rp1 = zip(first.rand, p1).map { $0 ^ $1 }, p2 = p2, confirm = first.confirm
        /// SMPCrypto.c1 unrolled for the search: r XOR p1 made once, buffers reused, one key
        /// per candidate, two blocks.
        @Sendable func matches(_ tk: UInt32, _ k: inout [UInt8], _ x: inout [UInt8]) -> Bool {
            k[12] = UInt8(tk >> 24); k[13] = UInt8(truncatingIfNeeded: tk >> 16)
            k[14] = UInt8(truncatingIfNeeded: tk >> 8); k[15] = UInt8(truncatingIfNeeded: tk)
            let key = AES128Key(k)
            for i in 0..<16 { x[i] = rp1[i] }
            key.encrypt(&x)
            for i in 0..<16 { x[i] ^= p2[i] }
            key.encrypt(&x)
            return x == confirm
        }
        var k0 = [UInt8](repeating: 0, count: 16), x0 = k0
        if matches(0, &k0, &x0) { return (0, 1) }
        let found = Atomic<Int>(-1), done = Atomic<Int>(1)
        let chunk = 4096, total = 1_000_000
        let chunks = (total + chunk - 1) / chunk
        let next = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: max(1, threads)) { _ in
            var k = [UInt8](repeating: 0, count: 16), x = k
            while found.load(ordering: .relaxed) < 0 {
                let c = next.add(1, ordering: .relaxed).oldValue
                guard c < chunks else { return }
                let lo = max(1, c * chunk), hi = min(total, c * chunk + chunk)
                for tk in lo..<hi where matches(UInt32(tk), &k, &x) {
                    found.store(tk, ordering: .relaxed)
                    done.add(tk - lo + 1, ordering: .relaxed)
                    return
                }
                let d = done.add(hi - lo, ordering: .relaxed).newValue
                if c % 16 == 0 { progress?(d) }
            }
        }
        let tk = found.load(ordering: .relaxed)
        return (tk >= 0 ? UInt32(tk) : nil, done.load(ordering: .relaxed))
    }

    /// Without confirm values (a sniffer that missed them), the TK is still found from the
    /// first encrypted packet: each candidate's STK is derived and `verify` (the packet's MIC
    /// under that STK's session key) tells the right one (crackle's fallback). Needs only the
    /// randoms; about a million STK derivations and MIC checks.
    public func searchTK(threads: Int = ProcessInfoCores.count, verify: @Sendable @escaping ([UInt8]) -> Bool) -> (tk: UInt32?, tried: Int) {
        guard mrand.count == 16, srand.count == 16 else { return (nil, 0) }
        if verify(stk(tk: 0)) { return (0, 1) }
        let found = Atomic<Int>(-1), done = Atomic<Int>(1)
        let chunk = 4096, total = 1_000_000
        let chunks = (total + chunk - 1) / chunk
        let next = Atomic<Int>(0)
        let me = self
        DispatchQueue.concurrentPerform(iterations: max(1, threads)) { _ in
            while found.load(ordering: .relaxed) < 0 {
                let c = next.add(1, ordering: .relaxed).oldValue
                guard c < chunks else { return }
                let lo = max(1, c * chunk), hi = min(total, c * chunk + chunk)
                for tk in lo..<hi where found.load(ordering: .relaxed) < 0 && verify(me.stk(tk: UInt32(tk))) {
                    found.store(tk, ordering: .relaxed)
                    done.add(tk - lo + 1, ordering: .relaxed)
                    return
                }
                done.add(hi - lo, ordering: .relaxed)
            }
        }
        let tk = found.load(ordering: .relaxed)
        return (tk >= 0 ? UInt32(tk) : nil, done.load(ordering: .relaxed))
    }

    /// STK = s1(TK, Srand, Mrand), most significant first (§2.4.4.1).
    public func stk(tk: UInt32) -> [UInt8] {
        SMPCrypto.s1(k: SMPLegacy.tk(tk), r1: Array(srand.reversed()), r2: Array(mrand.reversed()))
    }
}

/// Cores to use by default.
public enum ProcessInfoCores {
    public static var count: Int {
        #if canImport(Glibc)
            return max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        #else
            return 4
        #endif
    }
}

#if canImport(Glibc)
    import Glibc
#endif
