//! IEEE half precision (f16) conversions, done by hand because Rust's `f16` type is
//! not available on stable. Every conversion rounds to nearest, ties to even, and
//! keeps subnormals, as the hardware does with denormals enabled.

/// The canonical quiet NaN of f16.
pub const F16_QNAN: u64 = 0x7e00;

/// Exact conversion of an f16 bit pattern to f32 (every f16 is an f32).
pub fn f16_to_f32(bits: u16) -> f32 {
    let sign = u32::from(bits >> 15) << 31;
    let exp = u32::from((bits >> 10) & 0x1f);
    let mant = u32::from(bits & 0x3ff);
    let magnitude = match (exp, mant) {
        (0, 0) => 0,
        (0, _) => {
            // Subnormal: value = mant * 2^-24, exactly representable in f32.
            let value = mant as f32 * f32::from_bits(0x3380_0000); // 2^-24
            return if sign != 0 { -value } else { value };
        }
        (0x1f, 0) => 0x7f80_0000,
        (0x1f, _) => 0x7f80_0000 | (mant << 13) | 0x0040_0000,
        _ => ((exp + 127 - 15) << 23) | (mant << 13),
    };
    f32::from_bits(sign | magnitude)
}

/// f16 bits to f64 (exact).
pub fn f16_to_f64(bits: u16) -> f64 {
    f64::from(f16_to_f32(bits))
}

/// Rounds an f64 to the nearest f16 (ties to even), giving its bit pattern. NaNs
/// become quiet NaNs keeping the top payload bits.
pub fn f64_to_f16(value: f64) -> u16 {
    let bits = value.to_bits();
    let sign = ((bits >> 63) as u16) << 15;
    if value.is_nan() {
        return sign | 0x7e00 | ((bits >> 42) as u16 & 0x1ff);
    }
    let abs = value.abs();
    if abs.is_infinite() {
        return sign | 0x7c00;
    }
    // Scale into units of the smallest subnormal (2^-24) or of the value's ulp and
    // round with ties to even; f64 holds every intermediate exactly.
    if abs < f64::from_bits(0x3f10_0000_0000_0000) {
        // Below 2^-14: subnormal range, ulp = 2^-24.
        let scaled = abs * 16_777_216.0; // 2^24
        let rounded = round_ties_even(scaled);
        return sign | rounded as u16; // 1024 rounds up into the smallest normal, as wanted
    }
    let exp = ((bits >> 52) & 0x7ff) as i32 - 1023; // -14..
    if exp > 15 {
        return sign | 0x7c00;
    }
    let mant_scaled = abs / 2f64.powi(exp - 10); // in [1024, 2048)
    let rounded = round_ties_even(mant_scaled) as u32;
    let (exp, mant) = if rounded == 2048 { (exp + 1, 1024) } else { (exp, rounded) };
    if exp > 15 {
        return sign | 0x7c00;
    }
    sign | (((exp + 15) as u16) << 10) | (mant as u16 & 0x3ff)
}

/// Rounds an f32 to the nearest f16 (ties to even).
pub fn f32_to_f16(value: f32) -> u16 {
    f64_to_f16(f64::from(value))
}

fn round_ties_even(x: f64) -> f64 {
    let floor = x.floor();
    let diff = x - floor;
    if diff > 0.5 || (diff == 0.5 && floor % 2.0 != 0.0) {
        floor + 1.0
    } else {
        floor
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_f16_round_trips_through_f32_and_f64() {
        for bits in 0..=u16::MAX {
            let wide = f16_to_f32(bits);
            if wide.is_nan() {
                assert!(f16_to_f32(f32_to_f16(wide)).is_nan());
                continue;
            }
            assert_eq!(f32_to_f16(wide), bits, "{bits:#x}");
            assert_eq!(f64_to_f16(f16_to_f64(bits)), bits, "{bits:#x}");
        }
    }

    #[test]
    fn rounding_is_to_nearest_even() {
        // 1 + 2^-11 is halfway between 1.0 and the next f16 (1 + 2^-10): ties to even.
        assert_eq!(f64_to_f16(1.0 + 2f64.powi(-11)), 0x3c00);
        assert_eq!(f64_to_f16(1.0 + 3.0 * 2f64.powi(-11)), 0x3c02);
        assert_eq!(f64_to_f16(65520.0), 0x7c00); // rounds to infinity
        assert_eq!(f64_to_f16(65519.0), 0x7bff);
        assert_eq!(f64_to_f16(2f64.powi(-25)), 0); // halfway to the smallest subnormal: even
        assert_eq!(f64_to_f16(2f64.powi(-25) * 1.5), 1);
        assert_eq!(f64_to_f16(-0.0), 0x8000);
    }
}
