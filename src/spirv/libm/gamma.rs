//! ln Γ and Γ of a double (lgamma, lgamma_r, tgamma). For y > 0:
//!
//! | y | ln Γ(y) | Γ(y) |
//! | --- | --- | --- |
//! | below 1 | base(1 + y) - ln y | e^base / y |
//! | 1 to 3 | base(y) | e^base |
//! | 3 to 10 | base(y - k) + ln P | P e^base |
//! | from 10 | Stirling's series as a base-2 pair | 2^pair |
//!
//! base(z) = (z - 1)(z - 2) g(z) with g = ln Γ(z) / ((z - 1)(z - 2)) a
//! Chebyshev series on [1, 3] (scripts/chebyshev_tables.py): dividing out the
//! zeros at 1 and 2 keeps the relative accuracy next to them, and below 1 the
//! factors are y and y - 1 themselves. k = ⌊y⌋ - 2 and P = (y - 1) ... (y - k)
//! (exact factors). Stirling's (y - ½) log2 y - y log2 e + ½ log2 2π +
//! series/ln 2 is carried as an exact pair (log2 y as a pair, products by
//! fma, sums by two-sum), so that Γ up to 2^1024 keeps its bits. Negative x:
//! Γ(x) = π / (sin(πx) · y Γ(y)) with y = -x (exact), and ln|Γ(x)| =
//! ln(π / (|sin πx| y)) - ln Γ(y); where Γ(y) would overflow, the pair's
//! negation plus 600 gives 2^600 / Γ(y), scaled back at the end with one
//! rounding (results down to the subnormals).

use super::double::log2_pair;
use super::special::EULER_GAMMA;
use super::{D, LN_2_LO, LOG2_E_LO};
use crate::mir::{FloatPred, Operand, UnOp};

use std::f64::consts::{LN_2, LOG2_E, PI};

/// g(z) = ln Γ(z) / ((z - 1)(z - 2)) on [1, 3], as Chebyshev coefficients
/// in u = z - 2: 30 terms, the rest below 2^-60 of the first
/// (scripts/chebyshev_tables.py, 60 digits).
const LGAMMA_SCALED: [f64; 30] = [
    f64::from_bits(0x3fdc415b2f77d216), // 0.44148902545501420802
    f64::from_bits(0xbfbc775402458f9a), // -0.11119580321752522305
    f64::from_bits(0x3f93fa8c04d6ff67), // 0.019510448260688840516
    f64::from_bits(0xbf7010ffbb4197b6), // -0.0039224614630252639868
    f64::from_bits(0x3f4bc8b1371eaccb), // 0.00084789898959538574021
    f64::from_bits(0xbf291af7a54a9a64), // -0.00019153855341365592266
    f64::from_bits(0x3f075ab04d1df215), // 0.000044544701849756063756
    f64::from_bits(0xbee62c44ca024f08), // -0.000010572874373594299644
    f64::from_bits(0x3ec55e927ae8795f), // 2.5474336873408414892e-6
    f64::from_bits(0xbea4d5177a7d60b9), // -6.2085358807763160364e-7
    f64::from_bits(0x3e847e471139787b), // 1.5268677399071546601e-7
    f64::from_bits(0xbe644ed14f25b644), // -3.7826376602913261471e-8
    f64::from_bits(0x3e443f273ad94382), // 9.4281008236242844044e-9
    f64::from_bits(0xbe244a179f50c1b4), // -2.3619997021846449367e-9
    f64::from_bits(0x3e046bfea7d6632a), // 5.9435419058175460746e-10
    f64::from_bits(0xbde4a246834853af), // -1.5013129770728669448e-10
    f64::from_bits(0x3dc4eb16ce023178), // 3.8050196458110536946e-11
    f64::from_bits(0xbda5452009c24af3), // -9.6724852996563246068e-12
    f64::from_bits(0x3d85af787a242489), // 2.4653481983556609269e-12
    f64::from_bits(0xbd6629841b59e381), // -6.2988681407917114834e-13
    f64::from_bits(0x3d46b2e3df5629bf), // 1.6128460030283786455e-13
    f64::from_bits(0xbd274b69ccd76d6b), // -4.1379492068140420876e-14
    f64::from_bits(0x3d07f31077ff8c5c), // 1.0635701227757898417e-14
    f64::from_bits(0xbce8a9f4d3a81e40), // -2.7382420786652824822e-15
    f64::from_bits(0x3cc97051afff88bc), // 7.0606705072148924822e-16
    f64::from_bits(0xbcaa467c71e3093c), // -1.8232177141662118691e-16
    f64::from_bits(0x3c8b2ce2b26c6f85), // 4.7141690067562715939e-17
    f64::from_bits(0xbc6c24088e35be62), // -1.2204107319639855371e-17
    f64::from_bits(0x3c4d2c877c28febb), // 3.1630451661790253768e-18
    f64::from_bits(0xbc2e470d8ef6ec7b), // -8.2067465441667277299e-19
];
/// ½ log2 2π (Stirling's constant in base 2) as a pair (the same script).
const HALF_LOG2_2PI: f64 = f64::from_bits(0x3ff536439a4c6efc); // 1.32574806473615939902164
const HALF_LOG2_2PI_LO: f64 = f64::from_bits(0xbc949e49a361efeb);

/// Below this |x| (2^-27) the reflection's sin πx · y may underflow; the
/// first terms of the expansions at 0 are exact enough there.
const TINY: f64 = 7.450_580_596_923_828e-9;

/// Γ(y) = factor · 2^(hi + lo), and ln Γ(y), for a finite y > 0.
struct Positive {
    ln_gamma: Operand,
    hi: Operand,
    lo: Operand,
    factor: Operand,
    /// y >= 10 (the pair is Stirling's).
    stirling: Operand,
}

/// (h + l) · ln 2 for a base-2 pair: natural logarithm units, one rounding.
fn natural(d: &mut D, h: Operand, l: Operand) -> Operand {
    let ln2 = d.k(LN_2);
    let ln2_lo = d.k(LN_2_LO);
    let a = d.mul(h.clone(), ln2_lo);
    let a = d.fma(l, ln2.clone(), a);
    d.fma(h, ln2, a)
}

fn positive(d: &mut D, y: Operand) -> Positive {
    let small = d.cmpk(FloatPred::Olt, y.clone(), 1.0);
    let mid = d.cmpk(FloatPred::Olt, y.clone(), 3.0);
    let stirling = d.cmpk(FloatPred::Oge, y.clone(), 10.0);
    let not_mid = d.not(mid.clone());
    let not_big = d.not(stirling.clone());
    let up = d.and(not_mid, not_big);
    let one = d.k(1.0);
    let two = d.k(2.0);
    // The argument of g, in [1, 3].
    let fl = d.un(UnOp::Floor, y.clone());
    let k = d.sub(fl, two.clone());
    let reduced = d.sub(y.clone(), k.clone());
    let shifted = d.add(y.clone(), one.clone());
    let z = d.sel(mid.clone(), y.clone(), reduced);
    let z = d.sel(small.clone(), shifted, z);
    let z = d.sel(stirling.clone(), two.clone(), z);
    let zm1 = d.sub(z.clone(), one.clone());
    let zm2 = d.sub(z.clone(), two);
    let ym1 = d.sub(y.clone(), one.clone());
    let f1 = d.sel(small.clone(), y.clone(), zm1);
    let f2 = d.sel(small.clone(), ym1, zm2.clone());
    let g = d.chebyshev(zm2, &LGAMMA_SCALED);
    let base = d.mul(f1, f2);
    let base = d.mul(base, g);
    // P = (y - 1) ... (y - k) for k up to 7.
    let mut p = one.clone();
    for j in 1..=7 {
        let jk = d.k(f64::from(j));
        let term = d.sub(y.clone(), jk.clone());
        let used = d.cmp(FloatPred::Oge, k.clone(), jk);
        let term = d.sel(used, term, one.clone());
        p = d.mul(p, term);
    }
    let larg = d.sel(up.clone(), p.clone(), y.clone());
    let (lh, ll) = log2_pair(d, larg);
    // Stirling in base 2: (y - ½) log2 y - y log2 e + ½ log2 2π + series.
    let h = d.k(0.5);
    let a = d.sub(y.clone(), h);
    let mh = d.mul(a.clone(), lh.clone());
    let nmh = d.un(UnOp::FNeg, mh.clone());
    let ml = d.fma(a.clone(), lh.clone(), nmh);
    let ml = d.fma(a, ll.clone(), ml);
    let l2e = d.k(LOG2_E);
    let yh = d.mul(y.clone(), l2e.clone());
    let nyh = d.un(UnOp::FNeg, yh.clone());
    let yl = d.fma(y.clone(), l2e.clone(), nyh.clone());
    let l2e_lo = d.k(LOG2_E_LO);
    let yl = d.fma(y.clone(), l2e_lo, yl);
    let (s, e1) = d.two_sum(mh, nyh);
    let c = d.k(HALF_LOG2_2PI);
    let (t, e2) = d.two_sum(s, c);
    let inv = d.div(one.clone(), y.clone());
    let w = d.mul(inv.clone(), inv.clone());
    let series = d.poly(&w, &[1.0 / 12.0, -1.0 / 360.0, 1.0 / 1260.0, -1.0 / 1680.0, 1.0 / 1188.0, -691.0 / 360_360.0, 1.0 / 156.0, -3617.0 / 122_400.0]);
    let series = d.mul(series, inv.clone());
    let series = d.mul(series, l2e.clone());
    let c_lo = d.k(HALF_LOG2_2PI_LO);
    let lo = d.add(e1, e2);
    let lo = d.add(lo, ml);
    let lo = d.sub(lo, yl);
    let lo = d.add(lo, c_lo);
    let lo = d.add(lo, series);
    let (sh, sl) = d.two_sum(t, lo);
    // base (natural) in base 2 as a pair.
    let bh = d.mul(base.clone(), l2e.clone());
    let nbh = d.un(UnOp::FNeg, bh.clone());
    let bl = d.fma(base.clone(), l2e, nbh);
    let l2e_lo = d.k(LOG2_E_LO);
    let bl = d.fma(base.clone(), l2e_lo, bl);
    let hi = d.sel(stirling.clone(), sh.clone(), bh);
    let lo = d.sel(stirling.clone(), sl.clone(), bl);
    let factor = d.sel(up.clone(), p, one);
    let factor = d.sel(small.clone(), inv, factor);
    // ln Γ.
    let ln_arg = natural(d, lh, ll);
    let minus = d.sub(base.clone(), ln_arg.clone());
    let plus = d.add(base.clone(), ln_arg);
    let big = natural(d, sh, sl);
    // + 0: ln Γ(1) is +0, not the -0 of 0 · -1 · g(1).
    let zero = d.k(0.0);
    let base = d.add(base, zero);
    let ln_gamma = d.sel(up, plus, base);
    let ln_gamma = d.sel(small, minus, ln_gamma);
    let ln_gamma = d.sel(stirling.clone(), big, ln_gamma);
    // Beyond 2^1000, ln Γ overflows (and Stirling's products would too).
    let huge = d.cmpk(FloatPred::Ogt, y, 2f64.powi(1000));
    let ln_gamma = d.selk(huge.clone(), f64::INFINITY, ln_gamma);
    let hi = d.selk(huge.clone(), f64::INFINITY, hi);
    let lo = d.selk(huge, 0.0, lo);
    Positive { ln_gamma, hi, lo, factor, stirling }
}

/// (ln |Γ(x)|, the sign of Γ(x) as ±1.0) of a double: +inf at the poles
/// and the infinities, the sign of -0 negative (as OpenCL's lgamma_r).
pub fn lgamma(d: &mut D, x: Operand) -> (Operand, Operand) {
    let neg = d.cmpk(FloatPred::Olt, x.clone(), 0.0);
    let y = d.abs(x.clone());
    let pos = positive(d, y.clone());
    // ln(π / (|sin πx| y)) - ln Γ(y).
    let (sin, _) = d.sincospi(x.clone());
    let sa = d.abs(sin.clone());
    let sy = d.mul(sa, y.clone());
    let pi = d.k(PI);
    let q = d.div(pi, sy);
    // Where sin πx · y would underflow (|x| below 2^-27): -ln y + γ y, the
    // next term (π²/12 y²) below 2^-54 of it.
    let tiny = d.cmpk(FloatPred::Olt, y.clone(), TINY);
    let q = d.sel(tiny.clone(), y.clone(), q);
    let (qh, ql) = log2_pair(d, q);
    let lq = natural(d, qh, ql);
    let refl = d.sub(lq.clone(), pos.ln_gamma.clone());
    let g = d.k(EULER_GAMMA);
    let nlq = d.un(UnOp::FNeg, lq);
    let near = d.fma(g, y.clone(), nlq);
    let refl = d.sel(tiny, near, refl);
    let r = d.sel(neg.clone(), refl, pos.ln_gamma);
    let pole = d.is_int(&x);
    let pole = d.and(pole, neg.clone());
    let zero = d.cmpk(FloatPred::Oeq, x.clone(), 0.0);
    let inf = d.is_inf(&x);
    let pole = d.or(pole, zero.clone());
    let pole = d.or(pole, inf);
    let r = d.selk(pole, f64::INFINITY, r);
    let nan = d.is_nan(&x);
    let r = d.sel(nan, x.clone(), r);
    // The sign: that of sin πx below 0, + above (-0: -).
    let neg_sin = d.cmpk(FloatPred::Olt, sin, 0.0);
    let neg_sin = d.and(neg_sin, neg);
    let (one, m1) = (d.k(1.0), d.k(-1.0));
    let sign = d.sel(neg_sin, m1, one.clone());
    let signed = d.copysign(one, x);
    let sign = d.sel(zero, signed, sign);
    (r, sign)
}

/// Γ(x) of a double: ±inf at ±0, NaN at the negative integers and -inf.
pub fn tgamma(d: &mut D, x: Operand) -> Operand {
    let neg = d.cmpk(FloatPred::Olt, x.clone(), 0.0);
    let y = d.abs(x.clone());
    let pos = positive(d, y.clone());
    // 2^600 / Γ(y) where x < 0 and Γ(y) may overflow.
    let flip = d.and(neg.clone(), pos.stirling);
    let nh = d.un(UnOp::FNeg, pos.hi.clone());
    let k600 = d.k(600.0);
    let (nh, carried) = d.two_sum(nh, k600);
    let nl = d.sub(carried, pos.lo.clone());
    let hi = d.sel(flip.clone(), nh, pos.hi);
    let lo = d.sel(flip.clone(), nl, pos.lo);
    let e = d.exp2_parts(hi, lo);
    let gamma = d.mul(pos.factor, e.clone());
    // x < 0: π / (sin πx · y Γ(y)).
    let (sin, _) = d.sincospi(x.clone());
    let sy = d.mul(sin, y.clone());
    let pi = d.k(PI);
    let direct = d.mul(sy.clone(), gamma.clone());
    let direct = d.div(pi.clone(), direct);
    let scaled = d.div(pi, sy);
    let scaled = d.mul(scaled, e);
    let w = d.t(crate::abi::Type::I32);
    let m600 = d.fx.splat(&w, (-600i32) as u32 as u64);
    let scaled = d.ldexp(scaled, m600);
    let reflected = d.sel(flip, scaled, direct);
    // Where sin πx · y would underflow: 1/x - γ, the next term (γ²/2 +
    // π²/12) x below 2^-53 of it.
    let tiny = d.cmpk(FloatPred::Olt, y, TINY);
    let one = d.k(1.0);
    let inv = d.div(one, x.clone());
    let g = d.k(EULER_GAMMA);
    let near = d.sub(inv, g);
    let reflected = d.sel(tiny, near, reflected);
    let r = d.sel(neg.clone(), reflected, gamma);
    // Poles and infinities.
    let int = d.is_int(&x);
    let bad = d.and(int, neg);
    let r = d.selk(bad, f64::NAN, r);
    let inf = d.k(f64::INFINITY);
    let signed_inf = d.copysign(inf, x.clone());
    let zero = d.cmpk(FloatPred::Oeq, x.clone(), 0.0);
    let r = d.sel(zero, signed_inf, r);
    let pinf = d.cmpk(FloatPred::Oeq, x.clone(), f64::INFINITY);
    let r = d.selk(pinf, f64::INFINITY, r);
    let nan = d.is_nan(&x);
    d.sel(nan, x, r)
}
