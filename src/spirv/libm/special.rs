//! The math functions with algorithms of their own (part of the library in
//! `libm.rs`): the error function, the gamma function, and the exact
//! remainders.

use super::{Fx, D};
use crate::abi::Type;
use crate::mir::{BinOp, CastOp, FloatPred, IntPred, Op as MOp, Operand, UnOp};

use std::f64::consts::PI;

/// ζ(k) - 1 for k >= 2: the first terms summed, the tail by Euler-Maclaurin
/// (for the coefficients of the lgamma series; computed once per use).
pub(super) fn zeta_minus_one(k: i32) -> f64 {
    let n = 12.0f64;
    let mut s = 0.0;
    for j in (2..12).rev() {
        s += f64::from(j).powi(-k);
    }
    let kf = f64::from(k);
    // ∫ from n, half the term at n, and the first three Bernoulli corrections.
    let tail = n.powf(1.0 - kf) / (kf - 1.0) + 0.5 * n.powf(-kf) + kf / 12.0 * n.powf(-kf - 1.0) - kf * (kf + 1.0) * (kf + 2.0) / 720.0 * n.powf(-kf - 3.0)
        + kf * (kf + 1.0) * (kf + 2.0) * (kf + 3.0) * (kf + 4.0) / 30240.0 * n.powf(-kf - 5.0);
    s + tail
}

/// The Euler-Mascheroni constant γ (Γ'(1) = -γ).
pub(super) const EULER_GAMMA: f64 = 0.577_215_664_901_532_9;

/// (ln |Γ(x)|, the sign of Γ(x) as ±1.0): Stirling's series from 10 up (below,
/// shifted by 10 through the product x (x+1) ... (x+9)), the series of lgamma
/// around 1 and 2 where it crosses zero, and the reflection Γ(x) Γ(1-x) =
/// π / sin(πx) below ½.
pub(super) fn lgamma(d: &mut D, x: Operand) -> (Operand, Operand) {
    let half = d.cmpk(FloatPred::Olt, x.clone(), 0.5);
    let one = d.k(1.0);
    let reflected = d.sub(one.clone(), x.clone());
    let z = d.sel(half.clone(), reflected, x.clone());
    // Stirling on s = z (+ 10).
    let low = d.cmpk(FloatPred::Olt, z.clone(), 10.0);
    let mut prod = z.clone();
    for j in 1..10 {
        let k = d.k(f64::from(j));
        let t = d.add(z.clone(), k);
        prod = d.mul(prod, t);
    }
    let prod = d.sel(low.clone(), prod, one.clone());
    let ten = d.k(10.0);
    let shifted = d.add(z.clone(), ten);
    let s = d.sel(low, shifted, z.clone());
    let ls = d.ln(s.clone());
    let h = d.k(0.5);
    let sm = d.sub(s.clone(), h);
    let main = d.mul(sm, ls);
    let main = d.sub(main, s.clone());
    let c = d.k(0.5 * (2.0 * PI).ln());
    let main = d.add(main, c);
    let inv = d.div(one.clone(), s);
    let w = d.mul(inv.clone(), inv.clone());
    let p = d.poly(&w, &[1.0 / 12.0, -1.0 / 360.0, 1.0 / 1260.0, -1.0 / 1680.0, 1.0 / 1188.0, -691.0 / 360_360.0, 1.0 / 156.0]);
    let corr = d.mul(inv, p);
    let stirling = d.add(main, corr);
    let lp = d.ln(prod);
    let g = d.sub(stirling, lp);
    // Around 1: lgamma(1 + t) = -γ t + Σ (-1)^k ζ(k)/k t^k; around 2:
    // lgamma(2 + t) = (1 - γ) t + Σ (-1)^k (ζ(k) - 1)/k t^k.
    let series = |d: &mut D, centre: f64, minus_one: bool| {
        let c = d.k(centre);
        let t = d.sub(z.clone(), c);
        let mut coeffs = vec![if minus_one { 1.0 - EULER_GAMMA } else { -EULER_GAMMA }];
        for k in 2..32 {
            let zk = zeta_minus_one(k) + if minus_one { 0.0 } else { 1.0 };
            coeffs.push(if k % 2 == 0 { zk } else { -zk } / f64::from(k));
        }
        let p = d.poly(&t, &coeffs);
        let v = d.mul(t, p);
        // lgamma(1) = lgamma(2) = +0: the product is -0 there.
        let zero = d.k(0.0);
        d.add(v, zero)
    };
    let near1 = series(d, 1.0, false);
    let near2 = series(d, 2.0, true);
    let lo1 = d.cmpk(FloatPred::Oge, z.clone(), 0.75);
    let hi1 = d.cmpk(FloatPred::Ole, z.clone(), 1.25);
    let in1 = d.and(lo1, hi1);
    let g = d.sel(in1, near1, g);
    let lo2 = d.cmpk(FloatPred::Oge, z.clone(), 1.5);
    let hi2 = d.cmpk(FloatPred::Ole, z.clone(), 2.5);
    let in2 = d.and(lo2, hi2);
    let g = d.sel(in2, near2, g);
    // Reflection: ln(π / |sin πx|) - lgamma(1 - x); the poles (sin πx = 0)
    // come out +inf.
    let (sin, _) = d.sincospi(x.clone());
    let sa = d.abs(sin.clone());
    let pi = d.k(PI);
    let q = d.div(pi, sa);
    let lq = d.ln(q);
    let refl = d.sub(lq, g.clone());
    let r = d.sel(half.clone(), refl, g);
    let inf = d.is_inf(&x);
    let r = d.selk(inf, f64::INFINITY, r);
    // The sign: + for x > 0 (and +0), that of sin πx below 0 (-0 gives -).
    let neg_sin = d.cmpk(FloatPred::Olt, sin, 0.0);
    let xneg = d.cmpk(FloatPred::Olt, x.clone(), 0.0);
    let neg = d.and(neg_sin, xneg);
    let m1 = d.k(-1.0);
    let sign = d.sel(neg, m1.clone(), one.clone());
    let zero = d.cmpk(FloatPred::Oeq, x.clone(), 0.0);
    let signed = d.copysign(one, x);
    let sign = d.sel(zero, signed, sign);
    (r, sign)
}

/// erf and erfc: the Taylor series of erf below 3 (erfc = 1 - erf below 2,
/// where no more than 8 bits cancel), and Laplace's continued fraction for
/// erfc above (40 levels, evaluated forward as numerator and denominator).
pub(super) fn erf(d: &mut D, complement: bool, x: Operand) -> Operand {
    let ax = d.abs(x.clone());
    let z = d.mul(x.clone(), x.clone());
    let mut f = 1.0f64;
    let coeffs: Vec<f64> = (0..60)
        .map(|k| {
            if k > 0 {
                f *= f64::from(k);
            }
            let c = 2.0 / PI.sqrt() / (f * f64::from(2 * k + 1));
            if k % 2 == 0 {
                c
            } else {
                -c
            }
        })
        .collect();
    let p = d.poly(&z, &coeffs);
    let series = d.mul(x.clone(), p);
    // erfc(|x|) = e^(-x²)/√π / (a + ½/(a + 1/(a + 3/2/(a + ...)))), with a
    // clamped (the fraction's terms grow like a^40; beyond 27 erfc is 0 in f32
    // anyway).
    let cap = d.k(27.0);
    let a = d.bin(BinOp::FMin, ax.clone(), cap);
    let (mut h_prev, mut h) = (d.k(1.0), a.clone());
    let (mut k_prev, mut k) = (d.k(0.0), d.k(1.0));
    for n in 1..=40 {
        let an = d.k(f64::from(n) / 2.0);
        let hn = d.mul(a.clone(), h.clone());
        let hn = d.fma(an.clone(), h_prev, hn);
        let kn = d.mul(a.clone(), k.clone());
        let kn = d.fma(an, k_prev, kn);
        (h_prev, h, k_prev, k) = (h, hn, k, kn);
    }
    let nz = d.un(UnOp::FNeg, z.clone());
    let e = d.exp(nz);
    let sp = d.k(PI.sqrt());
    let num = d.mul(e, k);
    let den = d.mul(sp, h);
    let tail = d.div(num, den); // erfc(|x|) above 2
    let one = d.k(1.0);
    if complement {
        // erfc(x) = 1 - erf(x) below 2 (x negative included), the fraction
        // above 2, and 2 - erfc(-x) below -2.
        let from_series = d.sub(one, series);
        let two = d.k(2.0);
        let other = d.sub(two, tail.clone());
        let neg = d.cmpk(FloatPred::Olt, x.clone(), 0.0);
        let far = d.sel(neg, other, tail);
        let near = d.cmpk(FloatPred::Olt, ax, 2.0);
        let r = d.sel(near, from_series, far);
        let nan = d.is_nan(&x);
        d.sel(nan, x, r)
    } else {
        let rest = d.sub(one, tail);
        let rest = d.copysign(rest, x.clone());
        let near = d.cmpk(FloatPred::Olt, ax, 3.0);
        let r = d.sel(near, series, rest);
        let nan = d.is_nan(&x);
        d.sel(nan, x, r)
    }
}

/// erf and erfc of a double. Below ½ in magnitude erf is its Taylor series
/// (terms fall by 4x at least, 22 of them) and erfc is 1 - erf. From ½ up,
/// erfc(x) = e^(-x²) f(1/x) / x with f a 49-term Chebyshev series (below),
/// e^(-x²) from x² as an exact pair, and erf = 1 - erfc (erfc(½) < 0.48: no
/// bits cancel that matter); erf is odd and erfc(-x) = 2 - erfc(x). Beyond
/// 28 erfc is 0, beyond 6 erf is ±1.
pub(super) fn erf_double(d: &mut D, complement: bool, x: Operand) -> Operand {
    let ax = d.abs(x.clone());
    // Taylor: erf(x) = 2/√π Σ (-1)^k x^(2k+1) / (k! (2k+1)).
    let mut f = 1.0f64;
    let coeffs: Vec<f64> = (0..22)
        .map(|k| {
            if k > 0 {
                f *= f64::from(k);
            }
            let c = std::f64::consts::FRAC_2_SQRT_PI / (f * f64::from(2 * k + 1));
            if k % 2 == 0 {
                c
            } else {
                -c
            }
        })
        .collect();
    let z = d.mul(x.clone(), x.clone());
    let p = d.poly(&z, &coeffs);
    let series = d.mul(x.clone(), p);
    // erfc(|x|) for |x| in [½, 28] (clamped there).
    let (lo, hi) = (d.k(0.5), d.k(28.0));
    let a = d.bin(BinOp::FMax, ax.clone(), lo);
    let a = d.bin(BinOp::FMin, a, hi);
    let one = d.k(1.0);
    let t = d.div(one.clone(), a.clone());
    let (ta, tb) = (1.0 / 28.0, 2.0);
    let scale = d.k(2.0 / (tb - ta));
    let shift = d.k(-(ta + tb) / (tb - ta));
    let u = d.fma(t, scale, shift);
    let scaled = d.chebyshev(u, &ERFC_SCALED);
    let scaled = d.div(scaled, a.clone());
    // e^(-a²) = 2^(-(p + q) log2 e) with a² = p + q exactly.
    let sq = d.mul(a.clone(), a.clone());
    let nsq = d.un(UnOp::FNeg, sq.clone());
    let q = d.fma(a.clone(), a, nsq.clone());
    let l2e = d.k(std::f64::consts::LOG2_E);
    let eh = d.mul(nsq.clone(), l2e.clone());
    let neh = d.un(UnOp::FNeg, eh.clone());
    let err = d.fma(nsq.clone(), l2e.clone(), neh);
    let l2e_lo = d.k(super::LOG2_E_LO);
    let el = d.fma(nsq, l2e_lo, err);
    let nq = d.un(UnOp::FNeg, q);
    let el = d.fma(nq, l2e, el);
    let e = d.exp2_parts(eh, el);
    let tail = d.mul(e, scaled);
    let far = d.cmpk(FloatPred::Ogt, ax.clone(), 28.0);
    let tail = d.selk(far, 0.0, tail);
    let near = d.cmpk(FloatPred::Olt, ax.clone(), 0.5);
    let r = if complement {
        let from_series = d.sub(one, series);
        let two = d.k(2.0);
        let other = d.sub(two, tail.clone());
        let neg = d.cmpk(FloatPred::Olt, x.clone(), 0.0);
        let far = d.sel(neg, other, tail);
        d.sel(near, from_series, far)
    } else {
        let rest = d.sub(one, tail);
        let rest = d.copysign(rest, x.clone());
        d.sel(near, series, rest)
    };
    let nan = d.is_nan(&x);
    d.sel(nan, x, r)
}

/// f(t) = x e^(x²) erfc(x) with t = 1/x in [1/28, 2], as Chebyshev
/// coefficients in u = (2t - 2 - 1/28) / (2 - 1/28): 49 terms, the rest below
/// 2^-60 of the first (scripts/chebyshev_tables.py, 60 digits).
const ERFC_SCALED: [f64; 49] = [
    f64::from_bits(0x3fdbc19000aa4351), // 0.43368911805105364409
    f64::from_bits(0xbfc15a7d37815197), // -0.13557400903904401541
    f64::from_bits(0x3f772589c073c82f), // 0.0056510334900270870667
    f64::from_bits(0x3f7b25e0b1717c29), // 0.0066279198718737573525
    f64::from_bits(0xbf6bc418f65486f0), // -0.0033894050162793717118
    f64::from_bits(0x3f507810db1ff020), // 0.0010051884278246063019
    f64::from_bits(0xbf24a1a31c233e5f), // -0.00015740505302240783101
    f64::from_bits(0xbf00c54ebee288d1), // -0.000031987634302470287341
    f64::from_bits(0x3f04323f1e7c957c), // 0.000038521338693346473198
    f64::from_bits(0xbef3cc625194e839), // -0.000018881201957678309782
    f64::from_bits(0x3eda69b65c372af6), // 6.2973353495792033198e-6
    f64::from_bits(0xbeb4df71664bd13d), // -1.2441172653728979634e-6
    f64::from_bits(0xbe83e71833fc7b15), // -1.4828676774769759313e-7
    f64::from_bits(0x3e93e79a72f68b6d), // 2.9660315000784806788e-7
    f64::from_bits(0xbe8803a83f7afc8c), // -1.7892037339724712922e-7
    f64::from_bits(0x3e74251906454ab5), // 7.5045649310528079976e-8
    f64::from_bits(0xbe581e8436e35f84), // -2.2462760034712491505e-8
    f64::from_bits(0x3e2996bd2a13b984), // 2.9789311717171690176e-9
    f64::from_bits(0x3e1fea2be80f0841), // 1.8576819251586706727e-9
    f64::from_bits(0xbe207d97bf23e9e8), // -1.9197581242766928317e-9
    f64::from_bits(0x3e12c05e33f842ef), // 1.091477311205330499e-9
    f64::from_bits(0xbdffce726132e728), // -4.6284451375621482726e-10
    f64::from_bits(0x3de3cf70233f2709), // 1.4413893830526941496e-10
    f64::from_bits(0xbdb7128f384a56c2), // -2.098431456216023231e-11
    f64::from_bits(0xbdaad0fde666360e), // -1.219467513078552558e-11
    f64::from_bits(0x3dae64bb7b015ceb), // 1.3821357117759969054e-11
    f64::from_bits(0xbda2b0124e337338), // -8.4982181394227925092e-12
    f64::from_bits(0x3d9169d0412c97ca), // 3.9593337448444596127e-12
    f64::from_bits(0xbd7911b62187657b), // -1.4250182032405454114e-12
    f64::from_bits(0x3d56d91daa56f6aa), // 3.2469115620756668771e-13
    f64::from_bits(0x3d250e68faab2b7d), // 3.7403483608282229251e-14
    f64::from_bits(0xbd3c5068ce0c1373), // -1.0059188751452189717e-13
    f64::from_bits(0x3d353272f4034dda), // 7.5307108269327280916e-14
    f64::from_bits(0xbd26f9cce97a7b1d), // -4.0813189200449589612e-14
    f64::from_bits(0x3d13d7515b1ea904), // 1.7622423647512318516e-14
    f64::from_bits(0xbcfa0c453e8f37d9), // -5.7838026779674898515e-15
    f64::from_bits(0x3cd12296570c3c05), // 9.5118948866335240503e-16
    f64::from_bits(0x3cc1edc4271d062e), // 4.9762345089008081106e-16
    f64::from_bits(0xbcc730b0523fbcaf), // -6.4365708455626529196e-16
    f64::from_bits(0x3cbfba6e18a6554c), // 4.4031781604219907268e-16
    f64::from_bits(0xbcb0bd05e56b28f6), // -2.3229156401681633411e-16
    f64::from_bits(0x3c9caa59c67d53ec), // 9.9453196938681327026e-17
    f64::from_bits(0xbc82adf8e9119bbd), // -3.2403904770670999187e-17
    f64::from_bits(0x3c56d8dbb29660ff), // 4.9541755939480173328e-18
    f64::from_bits(0x3c4ebc4a57302b2d), // 3.3323506006693456928e-18
    f64::from_bits(0xbc530e060d0cfb69), // -4.1318467377176669598e-18
    f64::from_bits(0x3c4a74b9b66f763a), // 2.8683607951908311413e-18
    f64::from_bits(0xbc3cbdca9a2d572c), // -1.5580729368943225827e-18
    f64::from_bits(0x3c29b48143a62911), // 6.9673806155912928978e-19
];

/// OpenCL's fmod of `x` by `y` (type `ty`), for OpFRem and OpFMod.
pub fn fmod(fx: &mut Fx, ty: &Type, x: Operand, y: Operand) -> Result<Operand, String> {
    if !ty.element().is_float() {
        return Err(format!("floating-point remainder (OpFRem/OpFMod) of {ty}"));
    }
    let lanes = if ty.lanes() > 1 { ty.lanes() as u8 } else { 0 };
    let mut d = D { fx, lanes };
    let (r, _) = remainder(&mut d, Remainder::Truncated, ty, x, y);
    if ty.element() == &Type::F64 {
        return Ok(r);
    }
    let dt = d.f();
    Ok(d.fx.cast(CastOp::FpTrunc, &dt, r, ty))
}

/// Which remainder: x - k y with k = trunc(x / y) (fmod, OpFRem), the
/// nearest integer, ties to even (remainder), and that with k's low seven
/// bits and the quotient's sign (remquo).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Remainder {
    Truncated,
    Nearest,
    NearestWithQuotient,
}

/// Bits of the exponent difference one step of [`remainder`] takes: the
/// quotient of a step is below 2^49, so the product by 1/my that estimates
/// it is off by at most 2^-3 and rounding it is never two away.
const REMAINDER_STEP: u64 = 48;

/// The exact remainder of `x` by `y` (f16, f32 or f64, computed in f64), and
/// for remquo the quotient's low bits. |x| = mx 2^ex and |y| = my 2^ey with
/// integer mantissas in [2^52, 2^53) (subnormals scaled first). The
/// remainder of mx 2^(ex-ey) by my is found 48 bits of the exponent
/// difference at a time in a loop (at most 46 rounds for doubles, 6 for
/// f32): t = r 2^k is exact, q = rint(t / my) is the quotient or one more,
/// and t - q my, in (-my, my), is exact by fma; a negative one takes my
/// back. The loop runs while any lane has bits left; the others' rounds
/// (k = 0) change nothing. That remainder times 2^ey is fmod; the
/// quotient's low seven bits, kept mod 128 in every round, give the
/// parity for remainder and the bits for remquo.
pub(super) fn remainder(d: &mut D, kind: Remainder, ft: &Type, x: Operand, y: Operand) -> (Operand, Option<Operand>) {
    let w = d.t(Type::I32);
    let it = d.t(Type::I64);
    let dt = d.f();
    let widen = |d: &mut D, v: Operand| if ft.element() == &Type::F64 { v } else { d.fx.cast(CastOp::FpExt, ft, v, &dt) };
    let (x, y) = (widen(d, x), widen(d, y));
    let (xa, ya) = (d.abs(x.clone()), d.abs(y.clone()));
    // The integer mantissa (as a double) and the i32 exponent of |v|.
    let parts = |d: &mut D, a: Operand| -> (Operand, Operand) {
        let (s, adj) = super::unsubnormal(d, a);
        let b = d.bits(s);
        let field = d.ibink(BinOp::LShr, b.clone(), 52);
        let e = d.ibink(BinOp::Sub, field, 1075);
        let e = d.ibin(BinOp::Sub, e, adj);
        let frac = d.ibink(BinOp::And, b, 0x000f_ffff_ffff_ffff);
        let mb = d.ibink(BinOp::Or, frac, 1075 << 52);
        (d.int_to_float(mb), d.fx.cast(CastOp::Trunc, &it, e, &w))
    };
    let (mx, ex) = parts(d, xa.clone());
    let (my, ey) = parts(d, ya.clone());
    let diff = d.fx.bin(BinOp::Sub, &w, ex, ey.clone());
    let zero_i = d.fx.splat(&w, 0);
    let left = d.fx.bin(BinOp::SMax, &w, diff.clone(), zero_i.clone());
    // mx < 2 my: the first remainder is one subtraction away.
    let over = d.cmp(FloatPred::Oge, mx.clone(), my.clone());
    let less = d.sub(mx.clone(), my.clone());
    let r0 = d.sel(over.clone(), less, mx);
    let (one, zero) = (d.k(1.0), d.k(0.0));
    let q0 = d.sel(over, one.clone(), zero.clone());
    let inv = d.div(one.clone(), my.clone());
    let header = d.fx.new_block("rem.round");
    let body = d.fx.new_block("rem.step");
    let exit = d.fx.new_block("rem.done");
    let r_now = Operand::Value(d.fx.b.block_param(header, "r", dt.clone()));
    let q_now = Operand::Value(d.fx.b.block_param(header, "q", dt.clone()));
    let left_now = Operand::Value(d.fx.b.block_param(header, "left", w.clone()));
    d.fx.b.br(header, vec![r0, q0, left]);
    d.fx.enter(header);
    let active = d.fx.value(MOp::Icmp { pred: IntPred::Sgt, ty: w.clone(), lhs: left_now.clone(), rhs: zero_i.clone() });
    let any = super::double::any_lane(d, active);
    d.fx.b.brif(any, body, vec![], exit, vec![]);
    d.fx.enter(body);
    let step = d.fx.splat(&w, REMAINDER_STEP);
    let k = d.fx.bin(BinOp::SMin, &w, left_now.clone(), step);
    let t = d.ldexp(r_now.clone(), k.clone());
    let p = d.mul(t.clone(), inv.clone());
    let qs = d.un(UnOp::RoundEven, p);
    let nq = d.un(UnOp::FNeg, qs.clone());
    let r = d.fma(nq, my.clone(), t);
    let neg = d.cmpk(FloatPred::Olt, r.clone(), 0.0);
    let back = d.add(r.clone(), my.clone());
    let r = d.sel(neg.clone(), back, r);
    let q = if kind == Remainder::Truncated {
        q_now.clone()
    } else {
        // (q 2^k + qs) mod 128, each term reduced first (all exact).
        let fewer = d.sub(qs.clone(), one.clone());
        let qs = d.sel(neg, fewer, qs);
        let shifted = d.ldexp(q_now.clone(), k.clone());
        let a = mod128(d, shifted);
        let b = mod128(d, qs);
        let s = d.add(a, b);
        mod128(d, s)
    };
    let left_after = d.fx.bin(BinOp::Sub, &w, left_now.clone(), k);
    d.fx.b.br(header, vec![r, q, left_after]);
    d.fx.enter(exit);
    let rem = r_now;
    let mut q = q_now;
    // |x| < |y| (ex < ey) and x = 0: the remainder is |x| itself.
    let small = d.fx.value(MOp::Icmp { pred: IntPred::Slt, ty: w.clone(), lhs: diff, rhs: zero_i });
    let x0 = d.cmpk(FloatPred::Oeq, xa.clone(), 0.0);
    let small = d.or(small, x0);
    let scaled = d.ldexp(rem.clone(), ey.clone());
    let mut mag = d.sel(small.clone(), xa.clone(), scaled);
    let zero_q = d.k(0.0);
    q = d.sel(small, zero_q, q);
    if kind != Remainder::Truncated {
        // To the nearest multiple, ties to an even quotient.
        let twice = d.add(mag.clone(), mag.clone());
        let above = d.cmp(FloatPred::Ogt, twice.clone(), ya.clone());
        let tie = d.cmp(FloatPred::Oeq, twice, ya.clone());
        let odd = d.is_odd_int(&q);
        let tie_odd = d.and(tie, odd);
        let round_up = d.or(above, tie_odd);
        let lowered = d.sub(mag.clone(), ya.clone());
        mag = d.sel(round_up.clone(), lowered, mag);
        let q1 = d.add(q.clone(), one);
        q = d.sel(round_up, q1, q);
    }
    // The sign of x; NaN for y = 0, x infinite and NaN operands; x itself for
    // an infinite y.
    let (xf, yf) = (x, y);
    let r = d.copysign(mag, xf.clone());
    let yi = d.is_inf(&yf);
    let r = d.sel(yi.clone(), xf.clone(), r);
    let y0 = d.cmpk(FloatPred::Oeq, yf.clone(), 0.0);
    let xi = d.is_inf(&xf);
    let bad = d.or(y0, xi);
    let xn = d.is_nan(&xf);
    let yn = d.is_nan(&yf);
    let nan = d.or(xn, yn);
    let bad = d.or(bad, nan);
    let r = d.selk(bad.clone(), f64::NAN, r);
    if kind != Remainder::NearestWithQuotient {
        return (r, None);
    }
    // quo: k mod 128 with the sign of x / y; 0 where the result is NaN or y is
    // infinite.
    let qi = d.fx.cast(CastOp::FpToSi, &dt, q, &w);
    let m127 = d.fx.splat(&w, 127);
    let qi = d.fx.bin(BinOp::And, &w, qi, m127);
    let xb = d.bits(xf);
    let yb = d.bits(yf);
    let sb = d.ibin(BinOp::Xor, xb, yb);
    let zero64 = d.ki(Type::I64, 0);
    let negative = d.fx.value(MOp::Icmp { pred: IntPred::Slt, ty: it, lhs: sb, rhs: zero64 });
    let zero = d.fx.splat(&w, 0);
    let nqi = d.fx.bin(BinOp::Sub, &w, zero.clone(), qi.clone());
    let qi = d.fx.select(&w, negative, nqi, qi);
    let none = d.or(bad, yi);
    let qi = d.fx.select(&w, none, zero, qi);
    (r, Some(qi))
}

/// v mod 128 for a non-negative integer v below 2^53 (exact).
fn mod128(d: &mut D, v: Operand) -> Operand {
    let inv = d.k(1.0 / 128.0);
    let t = d.mul(v.clone(), inv);
    let t = d.un(UnOp::Floor, t);
    let nt = d.un(UnOp::FNeg, t);
    let m = d.k(128.0);
    d.fma(nt, m, v)
}
