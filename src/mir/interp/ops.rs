//! The value semantics of MIR operations on scalars: integer arithmetic on bit
//! patterns, IEEE-754 arithmetic (f16 computed exactly and rounded once),
//! comparisons and conversions. Everything here is pure; errors (undefined
//! behaviour such as division by zero) are returned as messages.

use crate::abi::Type;
use crate::mir::float::{f16_to_f64, f64_to_f16};
use crate::mir::ir::{BinOp, CastOp, FloatPred, IntPred, TernOp, UnOp};

/// All-ones mask of the low `bits` bits (`bits` in 1..=64).
#[inline]
pub fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Sign-extends the low `bits` bits of `value`.
#[inline]
pub fn sext(value: u64, bits: u32) -> i64 {
    let shift = 64 - bits.clamp(1, 64);
    ((value << shift) as i64) >> shift
}

/// The smallest signed value of a width, as a sign-extended i64.
#[inline]
fn int_min(bits: u32) -> i64 {
    sext(1u64 << (bits.clamp(1, 64) - 1), bits)
}

/// Integer width of a scalar type (pointers: their address width).
#[inline]
pub fn width(ty: &Type) -> u32 {
    ty.bits().clamp(1, 64)
}

/// Integer binary operation on `w`-bit patterns.
pub fn int_binary(op: BinOp, w: u32, a: u64, b: u64) -> Result<u64, String> {
    let m = mask(w);
    let (a, b) = (a & m, b & m);
    let shift = || (b % u64::from(w)) as u32;
    let r = match op {
        BinOp::Add => a.wrapping_add(b),
        BinOp::Sub => a.wrapping_sub(b),
        BinOp::Mul => a.wrapping_mul(b),
        BinOp::MulHiS => {
            let p = i128::from(sext(a, w)) * i128::from(sext(b, w));
            (p >> w) as u64
        }
        BinOp::MulHiU => {
            let p = u128::from(a) * u128::from(b);
            (p >> w) as u64
        }
        BinOp::SDiv | BinOp::SRem => {
            let (x, y) = (sext(a, w), sext(b, w));
            if y == 0 {
                return Err(format!("{}: division by zero", op.mnemonic()));
            }
            if y == -1 && x == int_min(w) {
                return Err(format!("{}: signed overflow ({x} / -1 is not representable in i{w})", op.mnemonic()));
            }
            if op == BinOp::SDiv {
                x.wrapping_div(y) as u64
            } else {
                x.wrapping_rem(y) as u64
            }
        }
        BinOp::UDiv | BinOp::URem => {
            if b == 0 {
                return Err(format!("{}: division by zero", op.mnemonic()));
            }
            if op == BinOp::UDiv {
                a / b
            } else {
                a % b
            }
        }
        BinOp::RotL => a.checked_shl(shift()).unwrap_or(0) & m | a.checked_shr(w - shift()).unwrap_or(0) & m,
        BinOp::RotR => a >> shift() | a.checked_shl(w - shift()).unwrap_or(0) & m,
        BinOp::AddSatU => a.saturating_add(b).min(m),
        BinOp::SubSatU => a.saturating_sub(b),
        BinOp::AddSatS | BinOp::SubSatS => {
            let (x, y) = (i128::from(sext(a, w)), i128::from(sext(b, w)));
            let exact = if op == BinOp::AddSatS { x + y } else { x - y };
            exact.clamp(i128::from(int_min(w)), -i128::from(int_min(w)) - 1) as i64 as u64
        }
        BinOp::Mul24S => ((sext(a & 0xff_ffff, 24)).wrapping_mul(sext(b & 0xff_ffff, 24))) as u64,
        BinOp::Mul24U => (a & 0xff_ffff).wrapping_mul(b & 0xff_ffff),
        BinOp::And => a & b,
        BinOp::Or => a | b,
        BinOp::Xor => a ^ b,
        BinOp::Shl => a << shift(),
        BinOp::LShr => a >> shift(),
        BinOp::AShr => (sext(a, w) >> shift()) as u64,
        BinOp::SMin => {
            if sext(a, w) <= sext(b, w) {
                a
            } else {
                b
            }
        }
        BinOp::SMax => {
            if sext(a, w) >= sext(b, w) {
                a
            } else {
                b
            }
        }
        BinOp::UMin => a.min(b),
        BinOp::UMax => a.max(b),
        BinOp::FAdd | BinOp::FSub | BinOp::FMul | BinOp::FDiv | BinOp::FMin | BinOp::FMax | BinOp::CopySign | BinOp::Ldexp => {
            return Err(format!("'{}' is not an integer operation", op.mnemonic()))
        }
    };
    Ok(r & m)
}

/// The canonical quiet NaN of a float type.
pub fn canonical_nan(ty: &Type) -> u64 {
    match ty {
        Type::F16 => 0x7e00,
        Type::F32 => 0x7fc0_0000,
        _ => 0x7ff8_0000_0000_0000,
    }
}

/// Exact value of a float bit pattern as f64.
#[inline]
pub fn to_f64(ty: &Type, bits: u64) -> f64 {
    match ty {
        Type::F16 => f16_to_f64(bits as u16),
        Type::F32 => f64::from(f32::from_bits(bits as u32)),
        _ => f64::from_bits(bits),
    }
}

/// Rounds an f64 to the float type (nearest, ties to even) and gives its bits.
#[inline]
pub fn from_f64(ty: &Type, value: f64) -> u64 {
    match ty {
        Type::F16 => u64::from(f64_to_f16(value)),
        Type::F32 => u64::from((value as f32).to_bits()),
        _ => value.to_bits(),
    }
}

fn sign_bit(ty: &Type) -> u64 {
    1u64 << (width(ty) - 1)
}

/// IEEE-754-2008 minNum / maxNum: a NaN operand is ignored if the other is a
/// number; -0.0 is less than +0.0. Returns one of the operands' bits (or the
/// canonical NaN when both are NaN).
fn min_max(ty: &Type, is_min: bool, a: u64, b: u64) -> u64 {
    let (x, y) = (to_f64(ty, a), to_f64(ty, b));
    match (x.is_nan(), y.is_nan()) {
        (true, true) => canonical_nan(ty),
        (true, false) => b,
        (false, true) => a,
        _ => {
            let a_first = if x != y {
                (x < y) == is_min
            } else {
                // Equal: only zeros of different signs can differ.
                let a_neg = a & sign_bit(ty) != 0;
                a_neg == is_min
            };
            if a_first {
                a
            } else {
                b
            }
        }
    }
}

/// Floating-point binary operation on the bit patterns of type `ty`.
pub fn float_binary(op: BinOp, ty: &Type, a: u64, b: u64) -> Result<u64, String> {
    match op {
        BinOp::FMin => return Ok(min_max(ty, true, a, b)),
        BinOp::FMax => return Ok(min_max(ty, false, a, b)),
        // Bits only: a NaN keeps its payload.
        BinOp::CopySign => return Ok(a & !sign_bit(ty) & mask(width(ty)) | b & sign_bit(ty)),
        BinOp::Ldexp => {
            let e = b as u32 as i32;
            return Ok(match ty {
                Type::F64 => ldexp_f64(f64::from_bits(a), e).to_bits(),
                // Exact in f64 (an f32 or f16 times 2^e within ±400 stays
                // normal there; beyond, the result is 0 or inf either way),
                // then rounded once.
                _ => from_f64(ty, ldexp_f64(to_f64(ty, a), e.clamp(-400, 400))),
            });
        }
        _ => {}
    }
    Ok(match ty {
        Type::F32 => {
            let (x, y) = (f32::from_bits(a as u32), f32::from_bits(b as u32));
            let r = match op {
                BinOp::FAdd => x + y,
                BinOp::FSub => x - y,
                BinOp::FMul => x * y,
                BinOp::FDiv => x / y,
                _ => return Err(format!("'{}' is not a float operation", op.mnemonic())),
            };
            u64::from(r.to_bits())
        }
        Type::F64 | Type::F16 => {
            // f16: the exact operands in f64; +, -, * are exact there and / is
            // rounded twice harmlessly (53 >= 2*11 + 2), so one rounding to f16.
            let (x, y) = (to_f64(ty, a), to_f64(ty, b));
            let r = match op {
                BinOp::FAdd => x + y,
                BinOp::FSub => x - y,
                BinOp::FMul => x * y,
                BinOp::FDiv => x / y,
                _ => return Err(format!("'{}' is not a float operation", op.mnemonic())),
            };
            from_f64(ty, r)
        }
        other => return Err(format!("'{}' on non-float type {other}", op.mnemonic())),
    })
}

/// Ternary integer operation on scalars of width `w`.
pub fn ternary(op: TernOp, w: u32, a: u64, b: u64, c: u64) -> u64 {
    let m = mask(w);
    let (a, b) = (a & m, b & m);
    let s = ((c & m) % u64::from(w)) as u32;
    match op {
        TernOp::FshL if s == 0 => a,
        TernOp::FshL => (a << s | b >> (w - s)) & m,
        TernOp::FshR if s == 0 => b,
        TernOp::FshR => (b >> s | a << (w - s)) & m,
        TernOp::Mad24S => (sext(a & 0xff_ffff, 24).wrapping_mul(sext(b & 0xff_ffff, 24)) as u64).wrapping_add(c) & m,
        TernOp::Mad24U => ((a & 0xff_ffff) * (b & 0xff_ffff)).wrapping_add(c) & m,
    }
}

/// Unary operation on a scalar of type `ty`.
pub fn unary(op: UnOp, ty: &Type, a: u64) -> Result<u64, String> {
    let w = width(ty);
    let m = mask(w);
    let a = a & m;
    Ok(match op {
        UnOp::Not => !a & m,
        UnOp::Popcount => u64::from(a.count_ones()),
        UnOp::Clz => {
            if a == 0 {
                u64::from(w)
            } else {
                u64::from(a.leading_zeros() - (64 - w))
            }
        }
        UnOp::Ctz => {
            if a == 0 {
                u64::from(w)
            } else {
                u64::from(a.trailing_zeros())
            }
        }
        UnOp::Abs => sext(a, w).unsigned_abs() & m,
        UnOp::BitReverse => a.reverse_bits() >> (64 - w),
        UnOp::Bswap => a.swap_bytes() >> (64 - w),
        UnOp::FNeg => a ^ sign_bit(ty),
        UnOp::FAbs => a & !sign_bit(ty),
        UnOp::Exp2
        | UnOp::Exp2Approx
        | UnOp::Log2
        | UnOp::Log2Approx
        | UnOp::Exp
        | UnOp::ExpApprox
        | UnOp::Log
        | UnOp::LogApprox
        | UnOp::SinApprox
        | UnOp::CosApprox
        | UnOp::Sin
        | UnOp::Cos
        | UnOp::Rcp
        | UnOp::RcpApprox
        | UnOp::Rsqrt
        | UnOp::RsqrtApprox => {
            // The reference value: the function in f64, rounded once to the
            // type (the accurate and .approx forms alike; results are compared
            // within a tolerance, see transcendental_acceptable).
            let x = to_f64(ty, a);
            from_f64(ty, transcendental_reference(op, x))
        }
        UnOp::Sqrt | UnOp::Floor | UnOp::Ceil | UnOp::Trunc | UnOp::RoundEven => match ty {
            Type::F32 => {
                let x = f32::from_bits(a as u32);
                let r = match op {
                    UnOp::Sqrt => x.sqrt(),
                    UnOp::Floor => x.floor(),
                    UnOp::Ceil => x.ceil(),
                    UnOp::RoundEven => x.round_ties_even(),
                    _ => x.trunc(),
                };
                u64::from(r.to_bits())
            }
            Type::F16 | Type::F64 => {
                // f16 sqrt in f64 then to f16: double rounding is harmless (53 >= 2*11+2);
                // floor/ceil/trunc/roundeven of an f16 are exact f16 values.
                let x = to_f64(ty, a);
                let r = match op {
                    UnOp::Sqrt => x.sqrt(),
                    UnOp::Floor => x.floor(),
                    UnOp::Ceil => x.ceil(),
                    UnOp::RoundEven => x.round_ties_even(),
                    _ => x.trunc(),
                };
                from_f64(ty, r)
            }
            other => return Err(format!("'{}' on non-float type {other}", op.mnemonic())),
        },
    })
}

/// `fma`: a*b+c rounded once.
pub fn fma(ty: &Type, a: u64, b: u64, c: u64) -> Result<u64, String> {
    Ok(match ty {
        Type::F32 => {
            let r = f32::from_bits(a as u32).mul_add(f32::from_bits(b as u32), f32::from_bits(c as u32));
            u64::from(r.to_bits())
        }
        Type::F64 => f64::from_bits(a).mul_add(f64::from_bits(b), f64::from_bits(c)).to_bits(),
        Type::F16 => u64::from(fma_f16(a as u16, b as u16, c as u16)),
        other => return Err(format!("'fma' on non-float type {other}")),
    })
}

/// f16 fma with a single rounding: finite f16 values are integer multiples of
/// 2^-24, so a*b+c is an integer multiple of 2^-48 that fits in an i128. If the
/// exact result fits in 53 bits, f64's fma is exact; otherwise it is rounded to
/// 53 bits with round-to-odd, which makes the final rounding to f16 correct.
fn fma_f16(a: u16, b: u16, c: u16) -> u16 {
    let (x, y, z) = (f16_to_f64(a), f16_to_f64(b), f16_to_f64(c));
    if !(x.is_finite() && y.is_finite() && z.is_finite()) {
        return f64_to_f16(x.mul_add(y, z));
    }
    let scale = 16_777_216.0; // 2^24
    let (ix, iy, iz) = ((x * scale) as i64, (y * scale) as i64, (z * scale) as i64);
    let n: i128 = i128::from(ix) * i128::from(iy) + (i128::from(iz) << 24);
    let magnitude = n.unsigned_abs();
    if magnitude < (1u128 << 53) {
        return f64_to_f16(x.mul_add(y, z)); // exact in f64 (including the sign of zero)
    }
    let bits = 128 - magnitude.leading_zeros(); // > 53
    let s = bits - 53;
    let mut m = (magnitude >> s) as u64;
    if magnitude & ((1u128 << s) - 1) != 0 {
        m |= 1; // round to odd
    }
    let value = m as f64 * 2f64.powi(s as i32 - 48);
    f64_to_f16(if n < 0 { -value } else { value })
}

/// Integer comparison of `w`-bit patterns.
pub fn icmp(pred: IntPred, w: u32, a: u64, b: u64) -> bool {
    let m = mask(w);
    let (a, b) = (a & m, b & m);
    let (sa, sb) = (sext(a, w), sext(b, w));
    match pred {
        IntPred::Eq => a == b,
        IntPred::Ne => a != b,
        IntPred::Slt => sa < sb,
        IntPred::Sle => sa <= sb,
        IntPred::Sgt => sa > sb,
        IntPred::Sge => sa >= sb,
        IntPred::Ult => a < b,
        IntPred::Ule => a <= b,
        IntPred::Ugt => a > b,
        IntPred::Uge => a >= b,
    }
}

/// Float comparison (LLVM's ordered/unordered predicates).
pub fn fcmp(pred: FloatPred, ty: &Type, a: u64, b: u64) -> bool {
    let (x, y) = (to_f64(ty, a), to_f64(ty, b));
    let unordered = x.is_nan() || y.is_nan();
    match pred {
        FloatPred::Oeq => !unordered && x == y,
        FloatPred::One => !unordered && x != y,
        FloatPred::Olt => !unordered && x < y,
        FloatPred::Ole => !unordered && x <= y,
        FloatPred::Ogt => !unordered && x > y,
        FloatPred::Oge => !unordered && x >= y,
        FloatPred::Ord => !unordered,
        FloatPred::Ueq => unordered || x == y,
        FloatPred::Une => unordered || x != y,
        FloatPred::Ult => unordered || x < y,
        FloatPred::Ule => unordered || x <= y,
        FloatPred::Ugt => unordered || x > y,
        FloatPred::Uge => unordered || x >= y,
        FloatPred::Uno => unordered,
    }
}

/// A scalar conversion (not `bitcast` of vectors and not `addrspacecast`, which
/// the executor handles).
pub fn cast(op: CastOp, from: &Type, to: &Type, a: u64) -> Result<u64, String> {
    let (fw, tw) = (width(from), width(to));
    let a = a & mask(fw);
    Ok(match op {
        CastOp::Trunc => a & mask(tw),
        CastOp::ZExt => a,
        CastOp::SExt => sext(a, fw) as u64 & mask(tw),
        CastOp::FpTrunc | CastOp::FpExt => {
            // f64 -> f16 rounds once (from_f64 rounds directly); f32 -> f16 is
            // exact to f64 first; extensions are exact.
            let x = to_f64(from, a);
            if x.is_nan() {
                // Keep NaN-ness (payload unspecified): quiet NaN of the target.
                canonical_nan(to) | if a & sign_bit(from) != 0 { sign_bit(to) } else { 0 }
            } else {
                from_f64(to, x)
            }
        }
        CastOp::FpToSi => {
            let x = to_f64(from, a);
            let v: i64 = if x.is_nan() { 0 } else { x as i64 }; // truncates, saturates to i64
            let (lo, hi) = (int_min(tw), sext(mask(tw - 1), 64));
            let v = if tw >= 64 { v } else { v.clamp(lo, hi) };
            v as u64 & mask(tw)
        }
        CastOp::FpToUi => {
            let x = to_f64(from, a);
            let v: u64 = if x.is_nan() { 0 } else { x as u64 }; // negatives give 0
            v.min(mask(tw))
        }
        CastOp::SiToFp => {
            let v = sext(a, fw);
            match to {
                Type::F32 => u64::from((v as f32).to_bits()),
                Type::F64 => (v as f64).to_bits(),
                // Beyond 2^53 the f16 result is infinite anyway, so f64 is exact enough.
                _ => from_f64(to, v as f64),
            }
        }
        CastOp::UiToFp => match to {
            Type::F32 => u64::from((a as f32).to_bits()),
            Type::F64 => (a as f64).to_bits(),
            _ => from_f64(to, a as f64),
        },
        CastOp::Bitcast | CastOp::PtrToInt | CastOp::IntToPtr => a & mask(tw),
        CastOp::AddrSpaceCast => return Err("addrspacecast is handled by the executor".into()),
    })
}

/// Whether two results of type `ty` count as the same when comparing the
/// interpreter with another implementation: equal bits, or (for floats) both
/// NaN, since NaN payloads are unspecified.
pub fn equivalent(ty: &Type, a: u64, b: u64) -> bool {
    let m = mask(width(ty));
    if (a ^ b) & m == 0 {
        return true;
    }
    ty.is_float() && to_f64(ty, a & m).is_nan() && to_f64(ty, b & m).is_nan()
}

/// The mathematical function of a transcendental, in f64.
fn transcendental_reference(op: UnOp, x: f64) -> f64 {
    match op {
        UnOp::Exp2 | UnOp::Exp2Approx => x.exp2(),
        UnOp::Log2 | UnOp::Log2Approx => x.log2(),
        UnOp::Exp | UnOp::ExpApprox => x.exp(),
        UnOp::Log | UnOp::LogApprox => x.ln(),
        UnOp::SinApprox | UnOp::Sin => x.sin(),
        UnOp::CosApprox | UnOp::Cos => x.cos(),
        UnOp::Rcp | UnOp::RcpApprox => 1.0 / x,
        _ => 1.0 / x.sqrt(),
    }
}

/// Distance in units in the last place between two finite values of a float
/// type (the count of representable values between them).
fn ulp_distance(ty: &Type, a: u64, b: u64) -> u64 {
    let w = width(ty);
    let key = |v: u64| -> i64 {
        let sign = v >> (w - 1) & 1;
        let magnitude = (v & (mask(w) >> 1)) as i64;
        if sign == 1 { -magnitude } else { magnitude }
    };
    key(a).abs_diff(key(b))
}

/// Whether `got` is an acceptable result of the transcendental `op` on the
/// input `x` (bits of `ty`) when the reference is `want`: the error bounds
/// docs/mir.md states. NaN must give NaN and infinities/zeros must match, except
/// where the `.approx` hardware instruction flushes subnormal inputs or
/// results.
pub fn transcendental_acceptable(op: UnOp, ty: &Type, x: u64, want: u64, got: u64) -> bool {
    let (wv, gv, xv) = (to_f64(ty, want), to_f64(ty, got), to_f64(ty, x));
    let approx = matches!(op, UnOp::Exp2Approx | UnOp::Log2Approx | UnOp::ExpApprox | UnOp::LogApprox | UnOp::SinApprox | UnOp::CosApprox | UnOp::RcpApprox | UnOp::RsqrtApprox);
    let smallest_normal = match ty {
        Type::F16 => 6.103515625e-05,
        Type::F32 => f64::from(f32::MIN_POSITIVE),
        _ => f64::MIN_POSITIVE,
    };
    // The hardware instructions may flush subnormal inputs and results (to
    // zero of either sign): any result of the input read as ±0 is accepted.
    if approx && (wv.abs() < smallest_normal && gv == 0.0 || xv != 0.0 && xv.abs() < smallest_normal) {
        return true;
    }
    if wv.is_nan() || gv.is_nan() {
        return wv.is_nan() && gv.is_nan();
    }
    if wv.is_infinite() || gv.is_infinite() || wv == 0.0 || gv == 0.0 {
        if wv == gv {
            return true;
        }
    }
    if !gv.is_finite() || !wv.is_finite() {
        return false;
    }
    match op {
        // Absolute error: the phase error of x / 2π in f32 grows with |x|.
        // (plus an ulp of the type for the rounding to f16).
        UnOp::SinApprox | UnOp::CosApprox => (gv - wv).abs() <= 2f64.powi(-20) + xv.abs() * 2f64.powi(-22) || ulp_distance(ty, want, got) <= 1,
        // Near x = 1 the logarithm is small: v_log_f32's error is absolute there.
        UnOp::Log2Approx | UnOp::LogApprox if (gv - wv).abs() <= 2f64.powi(-21) => true,
        _ => {
            let ulps = match op {
                UnOp::Rcp => 0,
                UnOp::Sin | UnOp::Cos | UnOp::Exp2 | UnOp::Log2 | UnOp::Rsqrt | UnOp::Exp2Approx | UnOp::Log2Approx | UnOp::RcpApprox | UnOp::RsqrtApprox => 1,
                UnOp::Exp | UnOp::Log => 2,
                // exp.approx: x·log2(e) in f32 (the product and the constant
                // each rounded) moves the result by up to 1.5·|x| ulps.
                UnOp::ExpApprox => 2 + (xv.abs() * 1.5) as u64,
                _ => 3,
            };
            ulp_distance(ty, want, got) <= ulps
        }
    }
}

/// x · 2^e rounded once to f64 (to nearest, ties to even), by integer
/// arithmetic on the significand: x = m · 2^t exactly, and the result keeps
/// the bits of m above its ulp, 2^max(top - 52, -1074).
pub fn ldexp_f64(x: f64, e: i32) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let bits = x.to_bits();
    let sign = bits & (1 << 63);
    let (exp, frac) = ((bits >> 52) & 0x7ff, bits & ((1 << 52) - 1));
    let (m, t) = if exp == 0 { (frac, -1074i64) } else { (frac | 1 << 52, exp as i64 - 1075) };
    let t = t + i64::from(e);
    let top = t + i64::from(63 - m.leading_zeros());
    let infinity = f64::from_bits(sign | 0x7ff0_0000_0000_0000);
    if top > 1023 {
        return infinity;
    }
    let ulp = (top - 52).max(-1074);
    let shift = ulp - t;
    let mut n = if shift <= 0 {
        m << -shift
    } else if shift > 54 {
        0 // below half the smallest subnormal
    } else {
        let (q, rest, half) = (m >> shift, m & ((1 << shift) - 1), 1u64 << (shift - 1));
        q + u64::from(rest > half || (rest == half && q & 1 == 1))
    };
    let mut ulp = ulp;
    if n == 1 << 53 {
        n >>= 1;
        ulp += 1;
    }
    if n < 1 << 52 {
        // Subnormal (ulp = -1074) or zero; rounding up to 2^52 lands on the
        // smallest normal, whose bits are the same integer.
        return f64::from_bits(sign | n);
    }
    let biased = ulp + 1075;
    if biased >= 0x7ff {
        return infinity;
    }
    f64::from_bits(sign | (biased as u64) << 52 | (n - (1 << 52)))
}

#[cfg(test)]
mod tests {
    use super::{ldexp_f64, ternary};
    use crate::mir::ir::TernOp;

    /// The examples of LLVM's LangRef for llvm.fshl / llvm.fshr (i8).
    #[test]
    fn funnel_shifts_match_llvms_definition() {
        assert_eq!(ternary(TernOp::FshL, 8, 255, 0, 15), 128);
        assert_eq!(ternary(TernOp::FshL, 8, 15, 15, 11), 120);
        assert_eq!(ternary(TernOp::FshL, 8, 0, 255, 8), 0);
        assert_eq!(ternary(TernOp::FshR, 8, 255, 0, 15), 254);
        assert_eq!(ternary(TernOp::FshR, 8, 15, 15, 11), 225);
        assert_eq!(ternary(TernOp::FshR, 8, 0, 255, 8), 255);
        // OpenCL mad24: the low 24 bits, sign-extended for the signed form.
        assert_eq!(ternary(TernOp::Mad24S, 32, 0x00ff_ffff, 2, 5), 3); // -1 * 2 + 5
        assert_eq!(ternary(TernOp::Mad24U, 32, 0x01ff_ffff, 2, 5), 0x0200_0003);
    }

    #[test]
    fn ldexp_rounds_once_at_the_edges() {
        let b = |x: f64| x.to_bits();
        // Hand-worked: the smallest subnormal is 2^-1074; half of it ties to even (0).
        assert_eq!(b(ldexp_f64(1.0, -1074)), 1);
        assert_eq!(b(ldexp_f64(1.0, -1075)), 0);
        assert_eq!(b(ldexp_f64(1.5, -1075)), 1); // 0.75 ulp
        assert_eq!(b(ldexp_f64(3.0, -1075)), 2); // 1.5 ulp, to even
        assert_eq!(b(ldexp_f64(5.0, -1076)), 1); // 1.25 ulp
        assert_eq!(b(ldexp_f64(f64::from_bits(0x3ff0_0000_0000_0001) / 2.0, -1022)), 1 << 51); // a tie, to even
        assert_eq!(b(ldexp_f64(f64::from_bits(0x3ff0_0000_0000_0003) / 2.0, -1022)), (1 << 51) + 2); // a tie, up to even
        assert_eq!(b(ldexp_f64(f64::from_bits(0x001f_ffff_ffff_ffff), -1)), 1 << 52); // rounds up to the smallest normal
        assert_eq!(ldexp_f64(f64::MIN_POSITIVE, -1).to_bits(), 1 << 51);
        assert_eq!(ldexp_f64(f64::MAX, 1), f64::INFINITY);
        assert_eq!(ldexp_f64(-1.0, i32::MAX), f64::NEG_INFINITY);
        assert_eq!(b(ldexp_f64(-3.0, i32::MIN)), b(-0.0));
        assert_eq!(b(ldexp_f64(-0.0, 5)), b(-0.0));
        assert_eq!(ldexp_f64(f64::from_bits(1), 2097), 2f64.powi(1023));
        assert!(ldexp_f64(f64::NAN, 3).is_nan());
        assert_eq!(ldexp_f64(0.75, 3), 6.0);
    }

    /// The interpreter's integer method against the simulator's stepwise
    /// scaling (two different constructions of the same rounding).
    #[test]
    fn ldexp_agrees_with_the_simulators_scaling() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..200_000 {
            let x = f64::from_bits(next());
            let e = match next() % 4 {
                0 => (next() % 64) as i32 - 32,
                1 => (next() % 4400) as i32 - 2200,
                2 => next() as i32,
                _ => -1074 - (next() % 60) as i32 + (next() % 2100) as i32,
            };
            let (ours, sims) = (ldexp_f64(x, e), crate::sim::float::ldexp64(x, e));
            assert!(ours.to_bits() == sims.to_bits() || ours.is_nan() && sims.is_nan(), "ldexp({x:e} = {:#x}, {e}): {ours:e} vs {sims:e}", x.to_bits());
        }
    }
}
