//! Floating-point helpers with the hardware's definitions (AMD ISA manuals):
//! the division helpers LLVM uses for correctly rounded division, frexp/ldexp,
//! min/max with the hardware's signed-zero order, class tests.

/// Biased exponent of an f32.
fn exp32(x: f32) -> i32 {
    ((x.to_bits() >> 23) & 0xff) as i32
}

fn exp64(x: f64) -> i32 {
    ((x.to_bits() >> 52) & 0x7ff) as i32
}

fn is_denorm32(x: f32) -> bool {
    x != 0.0 && x.is_subnormal()
}

fn is_denorm64(x: f64) -> bool {
    x != 0.0 && x.is_subnormal()
}

pub fn ldexp32(x: f32, e: i32) -> f32 {
    // Exact scaling in f64 then one rounding to f32 (correct for every f32 input).
    let r = ldexp64(x as f64, e);
    r as f32
}

/// V_LDEXP_F64: x · 2^e rounded once. Large scalings are split so that
/// every step but the last is exact: a factor of 2^-969 (= 2^-1022 · 2^53)
/// keeps a result that will not round to zero normal, and one that will
/// round to zero gets there either way; upward steps are exact until they
/// overflow, which is the answer then.
pub fn ldexp64(x: f64, e: i32) -> f64 {
    let pow2 = |k: i32| f64::from_bits(((k + 1023) as u64) << 52);
    let (mut x, mut e) = (x, e);
    for _ in 0..2 {
        if e > 1023 {
            x *= pow2(1023);
            e -= 1023;
        } else if e < -1022 {
            x *= pow2(-969);
            e += 969;
        }
    }
    x * pow2(e.clamp(-1022, 1023))
}

/// V_DIV_SCALE_F32: `s0` the value to scale, `s1` the denominator, `s2` the numerator.
/// Returns (result, vcc bit). The manual's case list, except that a huge
/// denominator with a denormal quotient scales the denominator *down* (the manual's
/// `ldexp(S0, 64)` there would overflow it and make LLVM's sequence return NaN).
/// Validated by `tests/sim_reference.rs::division_edge_cases` (clang's correctly
/// rounded f32/f64 division over zeros, denormals, huge values, infinities, NaN).
pub fn div_scale32(s0: f32, s1: f32, s2: f32) -> (f32, bool) {
    let mut d = s0;
    let mut vcc = false;
    if s2 == 0.0 || s1 == 0.0 {
        d = f32::NAN;
    } else if exp32(s2) - exp32(s1) >= 96 {
        vcc = true;
        if s0 == s1 {
            d = ldexp32(s0, 64);
        }
    } else if is_denorm32(s1) {
        d = ldexp32(s0, 64);
    } else if is_denorm32(1.0 / s1) && is_denorm32(s2 / s1) {
        // A huge denominator and a denormal quotient: scale the denominator down
        // (the quotient estimate becomes normal; v_div_fmas scales it back).
        vcc = true;
        if s0 == s1 {
            d = ldexp32(s0, -64);
        }
    } else if is_denorm32(1.0 / s1) {
        d = ldexp32(s0, -64);
    } else if is_denorm32(s2 / s1) {
        vcc = true;
        if s0 == s2 {
            d = ldexp32(s0, 64);
        }
    } else if exp32(s2) <= 23 {
        d = ldexp32(s0, 64);
    }
    (d, vcc)
}

/// V_DIV_SCALE_F64.
pub fn div_scale64(s0: f64, s1: f64, s2: f64) -> (f64, bool) {
    let mut d = s0;
    let mut vcc = false;
    if s2 == 0.0 || s1 == 0.0 {
        d = f64::NAN;
    } else if exp64(s2) - exp64(s1) >= 768 {
        vcc = true;
        if s0 == s1 {
            d = ldexp64(s0, 128);
        }
    } else if is_denorm64(s1) {
        d = ldexp64(s0, 128);
    } else if is_denorm64(1.0 / s1) && is_denorm64(s2 / s1) {
        vcc = true;
        if s0 == s1 {
            d = ldexp64(s0, -128);
        }
    } else if is_denorm64(1.0 / s1) {
        d = ldexp64(s0, -128);
    } else if is_denorm64(s2 / s1) {
        vcc = true;
        if s0 == s2 {
            d = ldexp64(s0, 128);
        }
    } else if exp64(s2) <= 53 {
        d = ldexp64(s0, 128);
    }
    (d, vcc)
}

/// V_DIV_FMAS_F32: fma; when VCC is set the result is scaled back by 2^64 or
/// 2^-64, up when the quotient estimate `s2` is at least 1.0 (biased exponent >
/// 127), down otherwise. (The manual's pseudocode says 2^32; that does not undo
/// `v_div_scale`'s 2^64 scaling, and the hardware follows the direction rule.)
pub fn div_fmas32(a: f32, b: f32, c: f32, vcc: bool) -> f32 {
    if !vcc {
        return a.mul_add(b, c);
    }
    // Exact fma in f64 (the product of two f32 is exact), then one rounding.
    let r = (a as f64).mul_add(b as f64, c as f64);
    let e = if exp32(c) > 127 { 64 } else { -64 };
    ldexp64(r, e) as f32
}

/// V_DIV_FMAS_F64: as [`div_fmas32`] with 2^±128 and the f64 exponent bias.
pub fn div_fmas64(a: f64, b: f64, c: f64, vcc: bool) -> f64 {
    let r = a.mul_add(b, c);
    if !vcc {
        return r;
    }
    let e = if exp64(c) > 1023 { 128 } else { -128 };
    let scaled = ldexp64(r, e);
    // The hardware scales the exact a·b + c and rounds once. Scaling the f64
    // result is that unless it lands among the subnormals, where it would round
    // a second time: there the exact value (hi + lo, error-free transforms) is
    // rounded to the subnormal grid directly.
    if !r.is_finite() || scaled.abs() > f64::MIN_POSITIVE || r == 0.0 {
        return scaled;
    }
    let two_sum = |x: f64, y: f64| {
        let s = x + y;
        let v = s - x;
        (s, (x - (s - v)) + (y - v))
    };
    let p = a * b;
    let pe = a.mul_add(b, -p);
    let (s, se) = two_sum(p, c);
    let (hi, lo) = two_sum(s, se + pe);
    // hi rounded to the grid (one subnormal step, unscaled); a tie on hi alone
    // is decided by the sign of lo.
    let step = ldexp64(f64::from_bits(1), -e);
    let on_grid = ldexp64(ldexp64(hi, e), -e);
    let d = hi - on_grid;
    let rounded = if d.abs() == step / 2.0 && lo != 0.0 && (lo > 0.0) == (d > 0.0) { on_grid + 2.0 * d } else { on_grid };
    ldexp64(rounded, e)
}

/// V_DIV_FIXUP_F32 (the manual's case list, kept in its order): `s0` the quotient,
/// `s1` the denominator, `s2` the numerator.
#[allow(clippy::if_same_then_else)]
pub fn div_fixup32(s0: f32, s1: f32, s2: f32) -> f32 {
    let neg = s1.is_sign_negative() != s2.is_sign_negative();
    let sgn = |x: f32| if neg { -x } else { x };
    if s2.is_nan() {
        f32::from_bits(s2.to_bits() | 0x0040_0000)
    } else if s1.is_nan() {
        f32::from_bits(s1.to_bits() | 0x0040_0000)
    } else if s1 == 0.0 && s2 == 0.0 {
        f32::from_bits(0xffc0_0000)
    } else if s1.is_infinite() && s2.is_infinite() {
        f32::from_bits(0xffc0_0000)
    } else if s1 == 0.0 || s2.is_infinite() {
        sgn(f32::INFINITY)
    } else if s1.is_infinite() || s2 == 0.0 {
        sgn(0.0)
    } else if exp32(s2) - exp32(s1) < -150 {
        sgn(0.0)
    } else if exp32(s1) == 255 || s0.is_nan() {
        // A NaN quotient estimate here means the scaled quotient overflowed: the
        // hardware returns a signed infinity.
        sgn(f32::INFINITY)
    } else {
        sgn(s0.abs())
    }
}

#[allow(clippy::if_same_then_else)]
/// V_DIV_FIXUP_F64.
pub fn div_fixup64(s0: f64, s1: f64, s2: f64) -> f64 {
    let neg = s1.is_sign_negative() != s2.is_sign_negative();
    let sgn = |x: f64| if neg { -x } else { x };
    if s2.is_nan() {
        f64::from_bits(s2.to_bits() | 0x0008_0000_0000_0000)
    } else if s1.is_nan() {
        f64::from_bits(s1.to_bits() | 0x0008_0000_0000_0000)
    } else if s1 == 0.0 && s2 == 0.0 {
        f64::from_bits(0xfff8_0000_0000_0000)
    } else if s1.is_infinite() && s2.is_infinite() {
        f64::from_bits(0xfff8_0000_0000_0000)
    } else if s1 == 0.0 || s2.is_infinite() {
        sgn(f64::INFINITY)
    } else if s1.is_infinite() || s2 == 0.0 {
        sgn(0.0)
    } else if exp64(s2) - exp64(s1) < -1075 {
        sgn(0.0)
    } else if exp64(s1) == 2047 || s0.is_nan() {
        sgn(f64::INFINITY)
    } else {
        sgn(s0.abs())
    }
}

/// IEEE-mode minimum: a quiet NaN operand is ignored; -0 < +0. The f32 forms
/// widen exactly to f64 (the result is an operand or the canonical NaN).
pub fn min32(a: f32, b: f32) -> f32 {
    min64(f64::from(a), f64::from(b)) as f32
}

pub fn max32(a: f32, b: f32) -> f32 {
    max64(f64::from(a), f64::from(b)) as f32
}

pub fn min64(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        return if b.is_nan() { f64::NAN } else { b };
    }
    if b.is_nan() {
        return a;
    }
    if a < b || (a == b && a.is_sign_negative()) {
        a
    } else {
        b
    }
}

pub fn max64(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        return if b.is_nan() { f64::NAN } else { b };
    }
    if b.is_nan() {
        return a;
    }
    if a > b || (a == b && b.is_sign_negative()) {
        a
    } else {
        b
    }
}

/// Median of three (IEEE mode: NaN handling as min(max)).
pub fn med3_32(a: f32, b: f32, c: f32) -> f32 {
    if a.is_nan() || b.is_nan() || c.is_nan() {
        return min32(min32(a, b), c);
    }
    let mx = max32(max32(a, b), c);
    if mx == a {
        max32(b, c)
    } else if mx == b {
        max32(a, c)
    } else {
        max32(a, b)
    }
}

/// frexp mantissa in [0.5, 1) with the sign; NaN/inf/0 unchanged.
pub fn frexp_mant64(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let e = frexp_exp64(x);
    ldexp64(x, -e)
}

pub fn frexp_exp64(x: f64) -> i32 {
    if x == 0.0 || !x.is_finite() {
        return 0;
    }
    let b = x.to_bits();
    let e = ((b >> 52) & 0x7ff) as i32;
    if e == 0 {
        // Subnormal: normalise.
        let m = b & ((1u64 << 52) - 1);
        return -1010 - m.leading_zeros() as i32;
    }
    e - 1022
}

/// Class test mask (bit 0 sNaN, 1 qNaN, 2 -inf, 3 -normal, 4 -denormal, 5 -0, 6 +0,
/// 7 +denormal, 8 +normal, 9 +inf).
pub fn class64(x: f64, quiet_bit: bool) -> u32 {
    let neg = x.is_sign_negative();
    if x.is_nan() {
        return if quiet_bit { 1 << 1 } else { 1 };
    }
    let k = if x.is_infinite() {
        if neg { 2 } else { 9 }
    } else if x == 0.0 {
        if neg { 5 } else { 6 }
    } else if x.is_subnormal() {
        if neg { 4 } else { 7 }
    } else if neg {
        3
    } else {
        8
    };
    1 << k
}

/// Class test of an f32 (same bits as [`class64`]).
pub fn class32(x: f32) -> u32 {
    let quiet = x.to_bits() & 0x0040_0000 != 0;
    if x.is_nan() {
        return if quiet { 1 << 1 } else { 1 };
    }
    let neg = x.is_sign_negative();
    let k = if x.is_infinite() {
        if neg { 2 } else { 9 }
    } else if x == 0.0 {
        if neg { 5 } else { 6 }
    } else if x.is_subnormal() {
        if neg { 4 } else { 7 }
    } else if neg {
        3
    } else {
        8
    };
    1 << k
}

/// a · b + c for f16 operands (given as their exact f64 values), before the
/// one rounding to f16. The product is exact (22 significant bits). The sum
/// is exact unless it spans more than 53 bits: with c's lowest bit at least
/// 2^-24 that needs |a · b| > 2^29, which overflows f16 whichever way it
/// rounds; with the product's lowest bit at least 2^-48 it needs
/// |a · b| < |c| · 2^-31, far inside half an f16 ulp of c (|c| · 2^-12), so
/// c is the f16 result either way.
pub fn fma16(a: f64, b: f64, c: f64) -> f64 {
    a * b + c
}
