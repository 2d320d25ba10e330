//! The double forms of the exponential family's relatives (expm1, log1p,
//! the hyperbolic functions and their inverses, cbrt). The single-precision
//! methods compute these in f64 and round once to f32, so they may lose a
//! few bits to cancellation (e^x - 1 near 0, (e - 1/e)/2) that f32 never
//! sees; on double those bits are the result's. Here every cancellation is
//! avoided by the choice of formula (expm1 from its own series after an exact
//! reduction, log1p with the rounding of 1 + x corrected, sinh and tanh from
//! expm1), and cbrt's first estimate is refined by one Newton step with its
//! residual computed exactly. Bounds and measurements: docs/spirv.md.

use rspirv::spirv::CLOp;

use super::{D, LN_2_LO};
use crate::abi::Type;
use crate::mir::{BinOp, CastOp, FloatPred, Operand, UnOp};

use std::f64::consts::{LN_2, LOG2_E};

/// Whether [`translate`] computes `op` on double.
pub fn handles(op: CLOp) -> bool {
    use CLOp::*;
    matches!(op, expm1 | log1p | sinh | cosh | tanh | asinh | acosh | atanh | cbrt)
}

/// `op` of the double (lanes) `x`.
pub fn translate(d: &mut D, op: CLOp, x: Operand) -> Operand {
    match op {
        CLOp::expm1 => expm1(d, x),
        CLOp::log1p => log1p(d, x),
        CLOp::sinh | CLOp::cosh | CLOp::tanh => hyperbolic(d, op, x),
        CLOp::asinh => asinh(d, x),
        CLOp::acosh => acosh(d, x),
        CLOp::atanh => atanh(d, x),
        _ => cbrt(d, x),
    }
}

/// e^x - 1. x = n ln 2 + r with |r| <= ln 2 / 2 (n ln 2 taken off in two
/// parts, the first by one fma), e^r - 1 by its Taylor series (r + r² q(r),
/// the leading term exact), then 2^n (1 + p) - 1 as 2^n p + (2^n - 1): both
/// terms exact for |n| <= 53, one rounding. Beyond, 2^n (1 + p) (the -1 is
/// below half an ulp), scaled in two steps.
fn expm1(d: &mut D, x: Operand) -> Operand {
    let lo = d.k(-40.0);
    let hi = d.k(710.0);
    let xc = d.bin(BinOp::FMax, x.clone(), lo);
    let xc = d.bin(BinOp::FMin, xc, hi);
    let l2e = d.k(LOG2_E);
    let t = d.mul(xc.clone(), l2e);
    let n = d.un(UnOp::RoundEven, t);
    let nn = d.un(UnOp::FNeg, n.clone());
    let ln2 = d.k(LN_2);
    let r = d.fma(nn.clone(), ln2, xc);
    let ln2lo = d.k(LN_2_LO);
    let r = d.fma(nn, ln2lo, r);
    // 1/2 + r/6 + r²/24 + ... : |r| <= 0.347, 18 terms leave < 2^-70.
    let coeffs: Vec<f64> = (2..20).scan(1.0f64, |f, k| {
        *f /= f64::from(k);
        Some(*f)
    }).collect();
    let q = d.poly(&r, &coeffs);
    let rr = d.mul(r.clone(), r.clone());
    let p = d.fma(rr, q, r);
    let w = d.t(Type::I32);
    let ni = d.fx.cast(CastOp::FpToSi, &d.f(), n.clone(), &w);
    let scaled = d.ldexp(p.clone(), ni.clone());
    let one = d.k(1.0);
    let pow = d.ldexp(one.clone(), ni.clone());
    let pm1 = d.sub(pow, one.clone());
    let near = d.add(scaled, pm1);
    let onep = d.add(one, p);
    let two = d.fx.splat(&w, 2);
    let half = d.fx.bin(BinOp::SDiv, &w, ni.clone(), two);
    let rest = d.fx.bin(BinOp::Sub, &w, ni, half.clone());
    let far = d.ldexp(onep, half);
    let far = d.ldexp(far, rest);
    let big = d.cmpk(FloatPred::Ogt, n, 53.0);
    let r = d.sel(big, far, near);
    // ±0 stay themselves; NaN passes; above 710 it is +inf anyway.
    let zero = d.cmpk(FloatPred::Oeq, x.clone(), 0.0);
    let r = d.sel(zero, x.clone(), r);
    let nan = d.is_nan(&x);
    d.sel(nan, x, r)
}

/// ln(1 + x): u = 1 + x rounded, ln u with ln 2 in two parts, plus the
/// rounding error of u relative to u, (x - (u - 1)) / u, which is exact
/// enough: ln(u + e) = ln u + e/u - ... . Where u is 1 (|x| below half an
/// ulp of 1), x itself.
fn log1p(d: &mut D, x: Operand) -> Operand {
    let one = d.k(1.0);
    let u = d.add(x.clone(), one.clone());
    let ln_u = d.log_with_parts(u.clone(), CLOp::log);
    let um1 = d.sub(u.clone(), one.clone());
    let err = d.sub(x.clone(), um1);
    let c = d.div(err, u.clone());
    // Only for finite u above 0 (the specials come from ln u).
    let fine = d.cmpk(FloatPred::Olt, u.clone(), f64::INFINITY);
    let pos = d.cmpk(FloatPred::Ogt, u.clone(), 0.0);
    let fine = d.and(fine, pos);
    let corrected = d.add(ln_u.clone(), c);
    let r = d.sel(fine, corrected, ln_u);
    let unit = d.cmp(FloatPred::Oeq, u, one);
    d.sel(unit, x, r)
}

/// sinh, cosh and tanh. Below 22, sinh = (E + E / (E + 1)) / 2 and tanh =
/// E₂ / (E₂ + 2) with E = e^|x| - 1 and E₂ = e^2|x| - 1 (sums of positive
/// terms: no cancellation), cosh = (e + 1/e) / 2. From 22 on (where e^-|x|
/// is below 2^-63 of e^|x|), sinh and cosh are e^(|x|/2) / 2 · e^(|x|/2),
/// which stays finite up to ln(2 · MAX) like the result, and tanh is 1.
fn hyperbolic(d: &mut D, op: CLOp, x: Operand) -> Operand {
    let ax = d.abs(x.clone());
    let far = d.cmpk(FloatPred::Oge, ax.clone(), 22.0);
    let h = d.k(0.5);
    let big = if op == CLOp::tanh {
        d.k(1.0)
    } else {
        let half_x = d.mul(ax.clone(), h.clone());
        let t = d.exp_double(half_x);
        let th = d.mul(t.clone(), h.clone());
        d.mul(th, t)
    };
    let near = match op {
        CLOp::sinh => {
            let e = expm1(d, ax.clone());
            let one = d.k(1.0);
            let e1 = d.add(e.clone(), one);
            let q = d.div(e.clone(), e1);
            let s = d.add(e, q);
            d.mul(s, h)
        }
        CLOp::cosh => {
            let e = d.exp_double(ax.clone());
            let one = d.k(1.0);
            let inv = d.div(one, e.clone());
            let s = d.add(e, inv);
            d.mul(s, h)
        }
        _ => {
            let two = d.k(2.0);
            let t = d.mul(ax.clone(), two.clone());
            let e = expm1(d, t);
            let den = d.add(e.clone(), two);
            d.div(e, den)
        }
    };
    let r = d.sel(far, big, near);
    let nan = d.is_nan(&x);
    let r = d.sel(nan, x.clone(), r);
    if op == CLOp::cosh {
        r
    } else {
        d.copysign(r, x)
    }
}

/// ln(2a) for a large a: ln a + ln 2 (with ln a from its parts).
fn ln_twice(d: &mut D, a: Operand) -> Operand {
    let l = d.log_with_parts(a, CLOp::log);
    let ln2 = d.k(LN_2);
    d.add(l, ln2)
}

/// asinh: x itself below 2^-28; ln 2|x| above 2^28; ln(2a + 1/(√(a² + 1) +
/// a)) from 2; below, log1p(a + a²/(1 + √(1 + a²))).
fn asinh(d: &mut D, x: Operand) -> Operand {
    let a = d.abs(x.clone());
    let one = d.k(1.0);
    let aa = d.mul(a.clone(), a.clone());
    let s = d.add(aa.clone(), one.clone());
    let s = d.un(UnOp::Sqrt, s);
    // From 2 up.
    let sa = d.add(s.clone(), a.clone());
    let inv = d.div(one.clone(), sa);
    let two = d.k(2.0);
    let arg = d.fma(a.clone(), two, inv);
    let mid = d.log_with_parts(arg, CLOp::log);
    // Below 2.
    let s1 = d.add(s, one);
    let q = d.div(aa, s1);
    let arg = d.add(a.clone(), q);
    let low = log1p(d, arg);
    let above2 = d.cmpk(FloatPred::Oge, a.clone(), 2.0);
    let r = d.sel(above2, mid, low);
    let large = ln_twice(d, a.clone());
    let huge = d.cmpk(FloatPred::Ogt, a.clone(), 2f64.powi(28));
    let r = d.sel(huge, large, r);
    let tiny = d.cmpk(FloatPred::Olt, a, 2f64.powi(-28));
    let r = d.sel(tiny, x.clone(), r);
    let nan = d.is_nan(&x);
    let r = d.sel(nan, x.clone(), r);
    d.copysign(r, x)
}

/// acosh: NaN below 1; ln 2x above 2^28; ln(2x - 1/(x + √(x² - 1))) above
/// 2; below, with t = x - 1 (exact there), log1p(t + √(2t + t²)).
fn acosh(d: &mut D, x: Operand) -> Operand {
    let one = d.k(1.0);
    let xx = d.mul(x.clone(), x.clone());
    let s = d.sub(xx, one.clone());
    let s = d.un(UnOp::Sqrt, s);
    let xs = d.add(x.clone(), s);
    let inv = d.div(one.clone(), xs);
    let two = d.k(2.0);
    let twice = d.mul(x.clone(), two.clone());
    let arg = d.sub(twice, inv);
    let mid = d.log_with_parts(arg, CLOp::log);
    let t = d.sub(x.clone(), one);
    let tt = d.mul(t.clone(), t.clone());
    let w = d.fma(t.clone(), two, tt);
    let w = d.un(UnOp::Sqrt, w);
    let arg = d.add(t, w);
    let low = log1p(d, arg);
    let above2 = d.cmpk(FloatPred::Ogt, x.clone(), 2.0);
    let r = d.sel(above2, mid, low);
    let large = ln_twice(d, x.clone());
    let huge = d.cmpk(FloatPred::Ogt, x.clone(), 2f64.powi(28));
    let r = d.sel(huge, large, r);
    let below = d.cmpk(FloatPred::Ult, x, 1.0);
    d.selk(below, f64::NAN, r)
}

/// atanh: ½ log1p(2a + 2a·a/(1 - a)) below ½, ½ log1p(2a/(1 - a)) from ½
/// (a = |x|; 1 - a exact there); ±inf at ±1 and NaN beyond by log1p.
fn atanh(d: &mut D, x: Operand) -> Operand {
    let a = d.abs(x.clone());
    let one = d.k(1.0);
    let den = d.sub(one, a.clone());
    let two_a = d.add(a.clone(), a.clone());
    let q = d.div(two_a.clone(), den.clone());
    let high = log1p(d, q);
    let t = d.mul(two_a.clone(), a.clone());
    let t = d.div(t, den);
    let arg = d.add(two_a, t);
    let low = log1p(d, arg);
    let half = d.cmpk(FloatPred::Olt, a.clone(), 0.5);
    let r = d.sel(half, low, high);
    let h = d.k(0.5);
    let r = d.mul(r, h);
    let beyond = d.cmpk(FloatPred::Ogt, a, 1.0);
    let r = d.selk(beyond, f64::NAN, r);
    let nan = d.is_nan(&x);
    let r = d.sel(nan, x.clone(), r);
    d.copysign(r, x)
}

/// cbrt: y = 2^(log2 a / 3) (a = |x|, subnormals scaled by 2^54 and the
/// result by 2^-18), good to about 2^-43; then one Newton step y - (y³ - a)
/// / (3y²) with y³ - a from y² as an exact pair (h + l), so the step leaves
/// the rounding of its last subtraction.
fn cbrt(d: &mut D, x: Operand) -> Operand {
    let a = d.abs(x.clone());
    let sub = d.cmpk(FloatPred::Olt, a.clone(), f64::MIN_POSITIVE);
    let big = d.k(2f64.powi(54));
    let scaled = d.mul(a.clone(), big);
    let a = d.sel(sub.clone(), scaled, a);
    let one = d.k(1.0);
    let fine = d.cmpk(FloatPred::Ogt, a.clone(), 0.0);
    let fin = d.cmpk(FloatPred::Olt, a.clone(), f64::INFINITY);
    let fine = d.and(fine, fin);
    let safe = d.sel(fine.clone(), a.clone(), one);
    let (lnm, e) = d.log_parts(safe.clone());
    let l2e = d.k(LOG2_E);
    let l = d.fma(lnm, l2e, e);
    let third = d.k(1.0 / 3.0);
    let t = d.mul(l, third);
    let y = d.exp2(t);
    let h = d.mul(y.clone(), y.clone());
    let nh = d.un(UnOp::FNeg, h.clone());
    let lo = d.fma(y.clone(), y.clone(), nh);
    let na = d.un(UnOp::FNeg, safe);
    let res = d.fma(h.clone(), y.clone(), na);
    let res = d.fma(lo, y.clone(), res);
    let three = d.k(3.0);
    let den = d.mul(h, three);
    let step = d.div(res, den);
    let y = d.sub(y, step);
    let w = d.t(Type::I32);
    let m18 = d.fx.splat(&w, (-18i32) as u32 as u64);
    let unscaled = d.ldexp(y.clone(), m18);
    let y = d.sel(sub, unscaled, y);
    // 0, infinities and NaN are their own cube roots.
    let r = d.sel(fine, y, x.clone());
    let zero = d.cmpk(FloatPred::Oeq, x.clone(), 0.0);
    let r = d.sel(zero, x.clone(), r);
    d.copysign(r, x)
}
