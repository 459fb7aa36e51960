import Crypto

/// Keyed, consistent pseudonyms for device addresses (`bluesift redact`): HMAC-SHA-256 of the
/// address under a salt, so the same address gets the same pseudonym within a run (and across
/// runs that share `--salt`), and nobody without the salt can test a guess (an address space
/// of 2^24 per manufacturer is small enough to try in full against an unkeyed hash).
public struct AddressPseudonyms: Sendable {
    /// The HMAC key: SHA-256 of the salt.
    let key: [UInt8]

    /// `salt`: any bytes; a random one when the user gives none.
    public init(salt: [UInt8]) { key = Array(SHA256.hash(data: salt)) }

    /// Random 32-byte salt from the system generator.
    public static func randomSalt() -> [UInt8] {
        SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
    }

    /// Pseudonym for a 6-byte address in wire (little-endian) order. The two most significant
    /// bits (random address sub-type, Core 5.4 Vol 6 Part B §1.3.2) are kept; never returns
    /// the input, 00:00:00:00:00:00 or ff:ff:ff:ff:ff:ff.
    public func pseudonym(_ address: [UInt8]) -> [UInt8] {
        precondition(address.count == 6, "a device address has 6 bytes")
        var counter: UInt8 = 0
        while true {
            let mac = HMAC<SHA256>.authenticationCode(for: address + [counter], using: SymmetricKey(data: key))
            var out = Array(mac.prefix(6))
            out[5] = (out[5] & 0x3F) | (address[5] & 0xC0)
            if out != address, out.contains(where: { $0 != 0 }), out.contains(where: { $0 != 0xFF }),
                (out[5] & 0x3F) != 0 || out[0...4].contains(where: { $0 != 0 })
            {
                return out
            }
            counter &+= 1
        }
    }
}
