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

/// 2/π in binary, 64 bits a word from the first bit after the point
/// (0.a2f9836e...: 1280 bits, enough for the largest double's reduction).
const TWO_OVER_PI: [u64; 20] = [
    0xa2f9_836e_4e44_1529, 0xfc27_57d1_f534_ddc0, 0xdb62_9599_3c43_9041, 0xfe51_63ab_debb_c561, 0xb724_6e3a_424d_d2e0,
    0x0649_2eea_09d1_921c, 0xfe1d_eb1c_b129_a73e, 0xe882_35f5_2ebb_4484, 0xe99c_7026_b45f_7e41, 0x3991_d639_8353_39f4,
    0x9c84_5f8b_bdf9_283b, 0x1ff8_97ff_de05_980f, 0xef2f_118b_5a0a_6d1f, 0x6d36_7ecf_27cb_09b7, 0x4f46_3f66_9e5f_ea2d,
    0x7527_bac7_ebe5_f17b, 0x3d07_39f7_8a52_92ea, 0x6bfb_5fb1_1f8d_5d08, 0x5603_3046_fc7b_6bab, 0xf0cf_bc20_9af4_361d,
];

/// π/2 in three parts: 33 bits, 33 more, then the next 53 (so k · part is
/// exact for the first two while k < 2^20), and π/2 as a double pair.
const PIO2_1: f64 = f64::from_bits(0x3ff9_21fb_5440_0000);
const PIO2_2: f64 = f64::from_bits(0x3dd0_b461_1a60_0000);
const PIO2_3: f64 = f64::from_bits(0x3ba3_198a_2e03_7073);
const PIO2_LO: f64 = 6.123_233_995_736_766e-17;

/// Below this |x|, k = round(x · 2/π) is under 2^20 and the three-part
/// reduction is exact enough; above it, Payne and Hanek's.
const CODY_WAITE_LIMIT: f64 = 1_572_864.0;

/// (sin x, cos x) of a double: x = k π/2 + r with |r| <= π/4, then the
/// series of `sincos_small` and the quadrant k mod 4. Below 2^20·1.5 r comes
/// from three parts of π/2 (fma by fma); above (rare: a branch taken only
/// when some lane needs it), from Payne and Hanek's reduction by the bits of
/// 2/π the exponent selects. Infinities and NaN give NaN; sin keeps ±0.
pub fn sin_cos(d: &mut D, x: Operand) -> (Operand, Operand) {
    let ft = d.f();
    let ax = d.abs(x.clone());
    let two_over_pi = d.k(std::f64::consts::FRAC_2_PI);
    let t = d.mul(ax.clone(), two_over_pi);
    let k = d.un(UnOp::RoundEven, t);
    let nk = d.un(UnOp::FNeg, k.clone());
    let (p1, p2, p3) = (d.k(PIO2_1), d.k(PIO2_2), d.k(PIO2_3));
    let r = d.fma(nk.clone(), p1, ax.clone());
    let r = d.fma(nk.clone(), p2, r);
    let r = d.fma(nk, p3, r);
    let large = d.cmpk(FloatPred::Oge, ax.clone(), CODY_WAITE_LIMIT);
    let any = any_lane(d, large.clone());
    let slow = d.fx.new_block("sin.reduce_large");
    let join = d.fx.new_block("sin.reduced");
    let r_param = d.fx.b.block_param(join, "r", ft.clone());
    let k_param = d.fx.b.block_param(join, "k", ft.clone());
    d.fx.b.brif(any, slow, vec![], join, vec![r.clone(), k.clone()]);
    d.fx.enter(slow);
    let (r_big, k_big) = payne_hanek(d, ax.clone());
    let r2 = d.sel(large.clone(), r_big, r);
    let k2 = d.sel(large, k_big, k);
    d.fx.b.br(join, vec![r2, k2]);
    d.fx.enter(join);
    let (r, k) = (Operand::Value(r_param), Operand::Value(k_param));
    let (s, c) = d.sincos_small(r);
    let w = d.t(Type::I32);
    let ki = d.fx.cast(CastOp::FpToSi, &ft, k, &w);
    let three = d.fx.splat(&w, 3);
    let q = d.fx.bin(BinOp::And, &w, ki, three);
    let is = |d: &mut D, v: u64| {
        let kv = d.fx.splat(&w, v);
        d.fx.value(crate::mir::Op::Icmp { pred: crate::mir::IntPred::Eq, ty: w.clone(), lhs: q.clone(), rhs: kv })
    };
    let (q1, q2, q3) = (is(d, 1), is(d, 2), is(d, 3));
    let ns = d.un(UnOp::FNeg, s.clone());
    let nc = d.un(UnOp::FNeg, c.clone());
    let sin = d.sel(q1.clone(), c.clone(), s.clone());
    let sin = d.sel(q2.clone(), ns.clone(), sin);
    let sin = d.sel(q3.clone(), nc.clone(), sin);
    let cos = d.sel(q1, ns, c);
    let cos = d.sel(q2, nc, cos);
    let cos = d.sel(q3, s, cos);
    // sin is odd: the sign of x (an exact negation, -0 for -0).
    let neg = d.cmpk(FloatPred::Olt, x.clone(), 0.0);
    let nsin = d.un(UnOp::FNeg, sin.clone());
    let sin = d.sel(neg, nsin, sin);
    let zero = d.cmpk(FloatPred::Oeq, x.clone(), 0.0);
    let sin = d.sel(zero, x.clone(), sin);
    let finite = d.cmpk(FloatPred::Olt, ax, f64::INFINITY);
    let not_finite = d.not(finite);
    let sin = d.selk(not_finite.clone(), f64::NAN, sin);
    let cos = d.selk(not_finite, f64::NAN, cos);
    (sin, cos)
}

/// Whether any lane of the boolean `c` is set (c itself for scalars).
pub(super) fn any_lane(d: &mut D, c: Operand) -> Operand {
    if d.lanes == 0 {
        return c;
    }
    let mut acc = d.fx.value(crate::mir::Op::Extract { agg: c.clone(), index: 0 });
    for j in 1..u32::from(d.lanes) {
        let lane = d.fx.value(crate::mir::Op::Extract { agg: c.clone(), index: j });
        acc = d.fx.bin(BinOp::Or, &Type::I1, acc, lane);
    }
    acc
}

/// Payne and Hanek's reduction of a finite a >= 2^20 (a = m · 2^E, m a
/// 53-bit integer): the bits of 2/π below weight 4 / 2^E (the others make
/// multiples of 4 in a · 2/π) as a 192-bit window W from bit i0 = max(1,
/// E - 1), the 245-bit product m · W in four words, and from it the two
/// integer bits (k mod 4) and 126 bits of fraction at the binary point p =
/// i0 + 191 - E. The fraction, rounded to the nearest k, is at most ½ in
/// magnitude; r = f · π/2 (π/2 as a pair). Returns (r, k mod 4).
fn payne_hanek(d: &mut D, a: Operand) -> (Operand, Operand) {
    let it = d.t(Type::I64);
    let b = d.bits(a);
    let e = d.ibink(BinOp::LShr, b.clone(), 52);
    let e = d.ibink(BinOp::And, e, 0x7ff);
    let big_e = d.ibink(BinOp::Sub, e, 1075);
    let m = d.ibink(BinOp::And, b, 0x000f_ffff_ffff_ffff);
    let m = d.ibink(BinOp::Or, m, 1 << 52);
    let em1 = d.ibink(BinOp::Sub, big_e.clone(), 1);
    let one = d.ki(Type::I64, 1);
    let icmp = |d: &mut D, pred: crate::mir::IntPred, l: Operand, r: Operand| d.fx.value(crate::mir::Op::Icmp { pred, ty: it.clone(), lhs: l, rhs: r });
    let above = icmp(d, crate::mir::IntPred::Sgt, em1.clone(), one.clone());
    let i0 = d.fx.select(&it, above, em1, one);
    let from = d.ibink(BinOp::Sub, i0.clone(), 1);
    let q = d.ibink(BinOp::LShr, from.clone(), 6);
    let s = d.ibink(BinOp::And, from, 63);
    // Words q .. q + 3 of the table (q <= 15 for every double).
    let mut words = Vec::new();
    for j in 0..4 {
        let mut w = d.ki(Type::I64, TWO_OVER_PI[j] as i64);
        for idx in 1..16usize {
            let kq = d.ki(Type::I64, idx as i64);
            let hit = icmp(d, crate::mir::IntPred::Eq, q.clone(), kq);
            let v = d.ki(Type::I64, TWO_OVER_PI[idx + j] as i64);
            w = d.fx.select(&it, hit, v, w);
        }
        words.push(w);
    }
    // The window, s bits in: w_j = T_j << s | T_{j+1} >> (64 - s), the
    // second shift in two steps so that s = 0 shifts nothing in.
    let k63 = d.ki(Type::I64, 63);
    let s63 = d.ibin(BinOp::Sub, k63, s.clone());
    let mut w = Vec::new();
    for j in 0..3 {
        let hi = d.ibin(BinOp::Shl, words[j].clone(), s.clone());
        let lo = d.ibink(BinOp::LShr, words[j + 1].clone(), 1);
        let lo = d.ibin(BinOp::LShr, lo, s63.clone());
        w.push(d.ibin(BinOp::Or, hi, lo));
    }
    // m · (w0 w1 w2): four words P3 P2 P1 P0.
    // (P0, m · w2's low word, lies below the 126 fraction bits taken.)
    let hi2 = d.ibin(BinOp::MulHiU, m.clone(), w[2].clone());
    let lo1 = d.ibin(BinOp::Mul, m.clone(), w[1].clone());
    let hi1 = d.ibin(BinOp::MulHiU, m.clone(), w[1].clone());
    let lo0 = d.ibin(BinOp::Mul, m.clone(), w[0].clone());
    let hi0 = d.ibin(BinOp::MulHiU, m, w[0].clone());
    let zero = d.ki(Type::I64, 0);
    let carry = |d: &mut D, sum: &Operand, part: &Operand| {
        let c = icmp(d, crate::mir::IntPred::Ult, sum.clone(), part.clone());
        let one = d.ki(Type::I64, 1);
        d.fx.select(&it, c, one, zero.clone())
    };
    let p1 = d.ibin(BinOp::Add, hi2.clone(), lo1);
    let c1 = carry(d, &p1, &hi2);
    let p2a = d.ibin(BinOp::Add, hi1.clone(), lo0);
    let c2a = carry(d, &p2a, &hi1);
    let p2 = d.ibin(BinOp::Add, p2a.clone(), c1);
    let c2b = carry(d, &p2, &p2a);
    let p3 = d.ibin(BinOp::Add, hi0, c2a);
    let p3 = d.ibin(BinOp::Add, p3, c2b);
    // The point p = i0 + 191 - E (190 from E = 2 on); 128 bits from p - 126:
    // F = P >> (p - 126), a shift of 64 + t with t = p - 190 in 0..=34.
    let p = d.ibink(BinOp::Add, i0, 191);
    let p = d.ibin(BinOp::Sub, p, big_e);
    let t = d.ibink(BinOp::Sub, p, 190);
    let k63 = d.ki(Type::I64, 63);
    let t63 = d.ibin(BinOp::Sub, k63, t.clone());
    let join = |d: &mut D, low: &Operand, high: &Operand| {
        let a = d.ibin(BinOp::LShr, low.clone(), t.clone());
        let b = d.ibink(BinOp::Shl, high.clone(), 1);
        let b = d.ibin(BinOp::Shl, b, t63.clone());
        d.ibin(BinOp::Or, a, b)
    };
    let f_hi = join(d, &p2, &p3);
    let f_lo = join(d, &p1, &p2);
    // k mod 4 from the top two bits; the fraction as a signed 128-bit value
    // G = F << 2 (so a fraction from ½ up is negative: the nearer k above).
    let k4 = d.ibink(BinOp::LShr, f_hi.clone(), 62);
    let g_hi = d.ibink(BinOp::Shl, f_hi, 2);
    let top = d.ibink(BinOp::LShr, f_lo.clone(), 62);
    let g_hi = d.ibin(BinOp::Or, g_hi, top);
    let g_lo = d.ibink(BinOp::Shl, f_lo, 2);
    let up = icmp(d, crate::mir::IntPred::Slt, g_hi.clone(), zero.clone());
    let one = d.ki(Type::I64, 1);
    let inc = d.ibin(BinOp::Add, k4.clone(), one);
    let k4 = d.fx.select(&it, up, inc, k4);
    let k4 = d.ibink(BinOp::And, k4, 3);
    let ft = d.f();
    let fh = d.fx.cast(CastOp::SiToFp, &it, g_hi, &ft);
    let fl = d.fx.cast(CastOp::UiToFp, &it, g_lo, &ft);
    let s64 = d.k(2f64.powi(-64));
    let fl = d.mul(fl, s64.clone());
    let f = d.add(fh, fl);
    let f = d.mul(f, s64);
    let (hi, lo) = (d.k(std::f64::consts::FRAC_PI_2), d.k(PIO2_LO));
    let flo = d.mul(f.clone(), lo);
    let r = d.fma(f, hi, flo);
    let k = d.fx.cast(CastOp::SiToFp, &it, k4, &ft);
    (r, k)
}

/// log2 a for a double a > 0 as a pair hi + lo good to about 2^-100
/// relative (subnormals scaled by 2^54): a = m · 2^e, ln m = 2s + 2s·z·q(z)
/// with s = (m - 1)/(m + 1) as an exact pair (m + 1 by two-sum, the quotient's
/// residual by fma), times log2 e as a pair, plus e by two-sum. Zero gives
/// -inf, +inf +inf, anything else not positive NaN (lo 0 whenever hi is not
/// finite).
pub fn log2_pair(d: &mut D, a: Operand) -> (Operand, Operand) {
    let sub = d.cmpk(FloatPred::Olt, a.clone(), f64::MIN_POSITIVE);
    let big = d.k(2f64.powi(54));
    let scaled = d.mul(a.clone(), big);
    let xs = d.sel(sub.clone(), scaled, a.clone());
    let ok = d.cmpk(FloatPred::Ogt, xs.clone(), 0.0);
    let fin = d.cmpk(FloatPred::Olt, xs.clone(), f64::INFINITY);
    let ok = d.and(ok, fin);
    let one = d.k(1.0);
    let safe = d.sel(ok.clone(), xs, one.clone());
    let (m, ef) = d.mantissa_exponent(safe);
    let k54 = d.k(54.0);
    let ef_sub = d.sub(ef.clone(), k54);
    let ef = d.sel(sub, ef_sub, ef);
    // s = num / (dh + dl) as sh + sl.
    let num = d.sub(m.clone(), one.clone());
    let dh = d.add(m.clone(), one.clone());
    let back = d.sub(dh.clone(), one);
    let dl = d.sub(m, back);
    let sh = d.div(num.clone(), dh.clone());
    let nsh = d.un(UnOp::FNeg, sh.clone());
    let res = d.fma(nsh.clone(), dh.clone(), num);
    let res = d.fma(nsh, dl, res);
    let sl = d.div(res, dh);
    let z = d.mul(sh.clone(), sh.clone());
    let coeffs: Vec<f64> = (1..14).map(|k| 1.0 / (2 * k + 1) as f64).collect();
    let q = d.poly(&z, &coeffs);
    let two = d.k(2.0);
    let hi = d.mul(sh.clone(), two.clone());
    let slt = d.mul(sl, two.clone());
    let zq = d.mul(z, q);
    let tail = d.mul(hi.clone(), zq);
    let lo = d.add(slt, tail);
    // Renormalised (|lo| is at most a hundredth of hi): hi + lo exactly as
    // a rounded sum and what it lost.
    let sum = d.add(hi.clone(), lo.clone());
    let took = d.sub(sum.clone(), hi);
    let lo = d.sub(lo, took);
    let hi = sum;
    // (hi + lo) · (log2 e as a pair).
    let (l, ll) = (d.k(LOG2_E), d.k(super::LOG2_E_LO));
    let ph = d.mul(hi.clone(), l.clone());
    let nph = d.un(UnOp::FNeg, ph.clone());
    let pe = d.fma(hi.clone(), l.clone(), nph);
    let c1 = d.mul(hi, ll);
    let c2 = d.fma(lo, l, c1);
    let pl = d.add(pe, c2);
    // e + ph by two-sum, then the low parts.
    let (th, tl) = d.two_sum(ef, ph);
    let tl = d.add(tl, pl);
    let th = d.log_specials(a, th);
    let zero = d.k(0.0);
    let tl = d.sel(ok, tl, zero);
    (th, tl)
}

/// 2^(y · (hi + lo)), or 2^((hi + lo) / y) with `divide`, the exponent as a
/// pair (what pow, powr, pown and rootn need on double: an error δ in the
/// exponent is a relative error δ ln 2 in the result, up to 1075 · 2^-53
/// without the pair).
pub fn exp2_of_product(d: &mut D, y: Operand, hi: Operand, lo: Operand, divide: bool) -> Operand {
    let (uh, ul) = if divide {
        let uh = d.div(hi.clone(), y.clone());
        let nuh = d.un(UnOp::FNeg, uh.clone());
        let r = d.fma(nuh, y.clone(), hi);
        let r = d.add(r, lo);
        let ul = d.div(r, y);
        (uh, ul)
    } else {
        let uh = d.mul(y.clone(), hi.clone());
        let nuh = d.un(UnOp::FNeg, uh.clone());
        let e = d.fma(y.clone(), hi, nuh);
        let c = d.mul(y, lo);
        (uh.clone(), d.add(e, c))
    };
    // Only an exponent in range has a low part (inf - inf would be NaN, and
    // beyond ±2200 the result is 0 or inf whatever the low part).
    let ax = d.abs(uh.clone());
    let fin = d.cmpk(FloatPred::Olt, ax, 4096.0);
    let zero = d.k(0.0);
    let ul = d.sel(fin, ul, zero);
    d.exp2_parts(uh, ul)
}
