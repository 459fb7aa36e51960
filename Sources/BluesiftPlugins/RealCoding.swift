/// Bit layouts of the non-integer number types plugins read and write.
enum RealCoding {
    /// IEEE 754-2008 binary16 → binary32 (subnormals, infinities and NaN kept).
    static func halfToFloat(_ h: UInt16) -> Float {
        let sign: UInt32 = UInt32(h >> 15) << 31
        let exp = Int((h >> 10) & 0x1F), mant = UInt32(h & 0x3FF)
        if exp == 0 {
            if mant == 0 { return Float(bitPattern: sign) }
            let v = Float(mant) / 1024 / 16384 // 2^-14 × mant/2^10
            return sign != 0 ? -v : v
        }
        if exp == 31 { return Float(bitPattern: sign | 0x7F80_0000 | (mant << 13)) }
        return Float(bitPattern: sign | UInt32(exp - 15 + 127) << 23 | (mant << 13))
    }

    /// binary32 → binary16, rounding to nearest even; out of range becomes infinity.
    static func floatToHalf(_ f: Float) -> UInt16 {
        let b = f.bitPattern
        let sign = UInt16((b >> 16) & 0x8000)
        let exp = Int((b >> 23) & 0xFF), mant = b & 0x7F_FFFF
        if exp == 255 { return sign | 0x7C00 | (mant != 0 ? 0x200 : 0) }
        let e = exp - 127 + 15
        if e >= 31 { return sign | 0x7C00 }
        if e <= 0 {
            guard e > -11 else { return sign }
            let m = (mant | 0x80_0000) >> UInt32(1 - e)
            let r = (m >> 13) + (((m >> 12) & 1) != 0 && ((m & 0x1FFF) != 0x1000 || (m >> 13) & 1 != 0) ? 1 : 0)
            return sign | UInt16(r)
        }
        var h = UInt32(sign) | UInt32(e) << 10 | (mant >> 13)
        let rest = mant & 0x1FFF
        if rest > 0x1000 || (rest == 0x1000 && h & 1 != 0) { h += 1 }
        return UInt16(h)
    }

    /// IEEE 11073-20601 §A.2.2 / §A.2.3: (mantissa, exponent), nil for the reserved specials
    /// (NaN, NRes, ±INF, reserved).
    static func ieee11073(_ u: UInt64, sfloat: Bool) -> (Int64, Int)? {
        if sfloat {
            let v = UInt16(truncatingIfNeeded: u)
            let m = Int64(v & 0x0FFF)
            if (0x07FE...0x0802).contains(m) { return nil }
            let mant = m >= 0x0800 ? m - 0x1000 : m
            let e = Int(v >> 12)
            return (mant, e >= 8 ? e - 16 : e)
        }
        let v = UInt32(truncatingIfNeeded: u)
        let m = Int64(v & 0xFF_FFFF)
        if (0x7F_FFFE...0x80_0002).contains(m) { return nil }
        let mant = m >= 0x80_0000 ? m - 0x100_0000 : m
        let e = Int(Int8(bitPattern: UInt8(v >> 24)))
        return (mant, e)
    }

    /// The inverse: a value shown with `decimals` places as mantissa × 10^-decimals (the
    /// exponent raised while the mantissa does not fit).
    static func encode11073(_ value: Double, decimals: Int, sfloat: Bool) -> UInt64? {
        var e = -decimals
        var m = value
        for _ in 0..<decimals { m *= 10 }
        var mant = Int64(m.rounded(.toNearestOrAwayFromZero))
        let limit: Int64 = sfloat ? 2045 : 8_388_605
        while abs(mant) > limit { mant /= 10; e += 1 }
        if sfloat {
            guard (-8...7).contains(e) else { return nil }
            return UInt64(UInt16(truncatingIfNeeded: e) << 12 | UInt16(truncatingIfNeeded: mant) & 0x0FFF)
        }
        guard (-128...127).contains(e) else { return nil }
        return UInt64(UInt32(UInt8(truncatingIfNeeded: e)) << 24 | UInt32(truncatingIfNeeded: mant) & 0xFF_FFFF)
    }
}

extension NumberFormat {
    /// raw × scale + offset, through the interpolation table when there is one.
    func value(_ raw: Double) -> Double {
        let x = raw * scale + offset
        guard let first = interpolate.first, let last = interpolate.last else { return x }
        if x <= first.0 { return first.1 }
        if x >= last.0 { return last.1 }
        for i in 1..<interpolate.count where x <= interpolate[i].0 {
            let (x0, y0) = interpolate[i - 1], (x1, y1) = interpolate[i]
            return y0 + (y1 - y0) * (x - x0) / (x1 - x0)
        }
        return last.1
    }

    /// The raw integer whose value is `v` (not through an interpolation table).
    func raw(_ v: Double) -> Int64? {
        guard interpolate.isEmpty, scale != 0 else { return nil }
        let r = ((v - offset) / scale).rounded(.toNearestOrAwayFromZero)
        guard r.isFinite, abs(r) < 9e18 else { return nil }
        return Int64(r)
    }
}
