import Crypto
import Testing
import _CryptoExtras

@testable import BluesiftSecurity

/// `AES128Key` keeps its key schedule (`AESRounds`): the same blocks as swift-crypto's AES.
@Suite struct AESRoundsTests {
    /// FIPS-197 Appendix C.1: AES-128 of 00112233…ff under 00010203…0f.
    @Test func fips197AppendixC1() {
        var block: [UInt8] = (0..<16).map { UInt8($0 * 0x11) }
        AES128Key((0..<16).map { UInt8($0) }).encrypt(&block)
        #expect(block == [0x69, 0xC4, 0xE0, 0xD8, 0x6A, 0x7B, 0x04, 0x30, 0xD8, 0xCD, 0xB7, 0x80, 0x70, 0xB4, 0xC5, 0x5A])
    }

    /// 2000 pseudo-random keys and blocks (SplitMix64), each block encrypted 3 times in a row.
    @Test func sameAsSwiftCrypto() throws {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        func bytes() -> [UInt8] { (0..<2).flatMap { _ in withUnsafeBytes(of: next()) { Array($0) } } }
        var differ = 0
        for _ in 0..<2000 {
            let k = bytes()
            var mine = bytes(), theirs = mine
            let key = AES128Key(k)
            for _ in 0..<3 {
                key.encrypt(&mine)
                try AES.permute(&theirs, key: SymmetricKey(data: k))
            }
            if mine != theirs { differ += 1 }
        }
        #expect(differ == 0)
    }
}
