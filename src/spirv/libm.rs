//! The rest of OpenCL's single- and half-precision math library, as MIR
//! expansions: the argument is widened to f64, the function is computed there
//! from exact reductions and polynomials (f64 has 29 bits more than f32 needs,
//! so one rounding at the end leaves the result within a fraction of an ulp
//! over one of f32, far inside OpenCL's bounds), and the result is rounded once
//! to the argument's type. Every step is an f64 operation MIR defines exactly
//! (add, multiply, fma, correctly rounded division and square root, ldexp,
//! bit operations), so the interpreter and the generated code agree to the bit;
//! `tests/spirv_math.rs` checks the results against Rust's f64 library.
//!
//! Vectors work lane by lane through MIR's element-wise operations. double
//! arguments are refused by the caller (MIR has no f64 transcendentals).

use rspirv::spirv::CLOp;

use super::function::Fx;
use crate::abi::Type;
use crate::mir::{BinOp, CastOp, FloatPred, IntPred, Op as MOp, Operand, UnOp};

use std::f64::consts::{FRAC_PI_2, FRAC_PI_6, LN_2, LOG2_E, PI};

mod double;
mod gamma;
mod special;
pub use special::fmod;
use special::{erf, erf_double, lgamma, remainder, Remainder};

/// f64 arithmetic on scalars or vectors of `lanes` (0: a scalar).
struct D<'x, 'a> {
    fx: &'x mut Fx<'a>,
    lanes: u8,
}

impl D<'_, '_> {
    fn t(&self, e: Type) -> Type {
        if self.lanes == 0 {
            e
        } else {
            Type::Vector(Box::new(e), self.lanes)
        }
    }
    fn f(&self) -> Type {
        self.t(Type::F64)
    }
    fn k(&mut self, v: f64) -> Operand {
        let t = self.f();
        self.fx.splat(&t, v.to_bits())
    }
    fn ki(&mut self, ty: Type, v: i64) -> Operand {
        let t = self.t(ty);
        self.fx.splat(&t, v as u64)
    }
    fn bin(&mut self, op: BinOp, a: Operand, b: Operand) -> Operand {
        let t = self.f();
        self.fx.bin(op, &t, a, b)
    }
    fn add(&mut self, a: Operand, b: Operand) -> Operand {
        self.bin(BinOp::FAdd, a, b)
    }
    fn sub(&mut self, a: Operand, b: Operand) -> Operand {
        self.bin(BinOp::FSub, a, b)
    }
    fn mul(&mut self, a: Operand, b: Operand) -> Operand {
        self.bin(BinOp::FMul, a, b)
    }
    fn div(&mut self, a: Operand, b: Operand) -> Operand {
        self.bin(BinOp::FDiv, a, b)
    }
    fn fma(&mut self, a: Operand, b: Operand, c: Operand) -> Operand {
        let ty = self.f();
        self.fx.value(MOp::Fma { ty, a, b, c })
    }
    fn un(&mut self, op: UnOp, a: Operand) -> Operand {
        let t = self.f();
        self.fx.un(op, &t, a)
    }
    fn abs(&mut self, a: Operand) -> Operand {
        self.un(UnOp::FAbs, a)
    }
    fn copysign(&mut self, mag: Operand, sign: Operand) -> Operand {
        self.bin(BinOp::CopySign, mag, sign)
    }
    fn cmp(&mut self, pred: FloatPred, a: Operand, b: Operand) -> Operand {
        let ty = self.f();
        self.fx.value(MOp::Fcmp { pred, ty, lhs: a, rhs: b })
    }
    fn cmpk(&mut self, pred: FloatPred, a: Operand, k: f64) -> Operand {
        let k = self.k(k);
        self.cmp(pred, a, k)
    }
    fn sel(&mut self, c: Operand, a: Operand, b: Operand) -> Operand {
        let t = self.f();
        self.fx.select(&t, c, a, b)
    }
    fn selk(&mut self, c: Operand, k: f64, b: Operand) -> Operand {
        let k = self.k(k);
        self.sel(c, k, b)
    }
    fn or(&mut self, a: Operand, b: Operand) -> Operand {
        let t = self.t(Type::I1);
        self.fx.bin(BinOp::Or, &t, a, b)
    }
    fn and(&mut self, a: Operand, b: Operand) -> Operand {
        let t = self.t(Type::I1);
        self.fx.bin(BinOp::And, &t, a, b)
    }
    fn not(&mut self, a: Operand) -> Operand {
        let t = self.t(Type::I1);
        self.fx.un(UnOp::Not, &t, a)
    }
    fn bits(&mut self, a: Operand) -> Operand {
        let (f, i) = (self.f(), self.t(Type::I64));
        self.fx.cast(CastOp::Bitcast, &f, a, &i)
    }
    fn int_to_float(&mut self, a: Operand) -> Operand {
        let (f, i) = (self.f(), self.t(Type::I64));
        self.fx.cast(CastOp::Bitcast, &i, a, &f)
    }
    fn ibin(&mut self, op: BinOp, a: Operand, b: Operand) -> Operand {
        let t = self.t(Type::I64);
        self.fx.bin(op, &t, a, b)
    }
    fn ibink(&mut self, op: BinOp, a: Operand, k: i64) -> Operand {
        let k = self.ki(Type::I64, k);
        self.ibin(op, a, k)
    }
    /// `a · 2^n` for an i32 `n`.
    fn ldexp(&mut self, a: Operand, n: Operand) -> Operand {
        self.bin(BinOp::Ldexp, a, n)
    }
    /// c0 + x (c1 + x (c2 + ...)), by fma.
    fn poly(&mut self, x: &Operand, coeffs: &[f64]) -> Operand {
        let mut acc = self.k(*coeffs.last().expect("a polynomial has coefficients"));
        for &c in coeffs.iter().rev().skip(1) {
            let c = self.k(c);
            acc = self.fma(acc, x.clone(), c);
        }
        acc
    }
    /// Two-sum: (s, e) with s + e = a + b exactly (s = a + b rounded).
    fn two_sum(&mut self, a: Operand, b: Operand) -> (Operand, Operand) {
        let s = self.add(a.clone(), b.clone());
        let bv = self.sub(s.clone(), a.clone());
        let av = self.sub(s.clone(), bv.clone());
        let eb = self.sub(b, bv);
        let ea = self.sub(a, av);
        (s, self.add(ea, eb))
    }
    /// Σ c_k T_k(u) by Clenshaw's recurrence: b_k = 2u b_(k+1) - b_(k+2) +
    /// c_k, the sum u b_1 - b_2 + c_0 (stable for |u| <= 1).
    fn chebyshev(&mut self, u: Operand, coeffs: &[f64]) -> Operand {
        let u2 = self.add(u.clone(), u.clone());
        let (mut b1, mut b2) = (self.k(0.0), self.k(0.0));
        for &c in coeffs[1..].iter().rev() {
            let ck = self.k(c);
            let rest = self.sub(ck, b2);
            let b0 = self.fma(u2.clone(), b1.clone(), rest);
            (b2, b1) = (b1, b0);
        }
        let c0 = self.k(coeffs[0]);
        let rest = self.sub(c0, b2);
        self.fma(u, b1, rest)
    }
    fn is_nan(&mut self, a: &Operand) -> Operand {
        self.cmp(FloatPred::Uno, a.clone(), a.clone())
    }
    fn is_inf(&mut self, a: &Operand) -> Operand {
        let m = self.abs(a.clone());
        self.cmpk(FloatPred::Oeq, m, f64::INFINITY)
    }
    fn is_int(&mut self, a: &Operand) -> Operand {
        let t = self.un(UnOp::Trunc, a.clone());
        self.cmp(FloatPred::Oeq, t, a.clone())
    }
    /// An integer (finite or not) whose half is not one: odd.
    fn is_odd_int(&mut self, a: &Operand) -> Operand {
        let int = self.is_int(a);
        let h = self.k(0.5);
        let half = self.mul(a.clone(), h);
        let half_int = self.is_int(&half);
        let not_half = self.not(half_int);
        self.and(int, not_half)
    }

    // ---- cores: finite, in range -----------------------------------------

    /// (m, e) with x = m · 2^e, m in [√½, √2) and e as a double, for a
    /// positive normal x.
    fn mantissa_exponent(&mut self, x: Operand) -> (Operand, Operand) {
        let b = self.bits(x);
        let e = self.ibink(BinOp::LShr, b.clone(), 52);
        let e = self.ibink(BinOp::Sub, e, 1023);
        let frac = self.ibink(BinOp::And, b, 0x000f_ffff_ffff_ffff);
        let mb = self.ibink(BinOp::Or, frac, 0x3ff0_0000_0000_0000);
        let m = self.int_to_float(mb);
        let big = self.cmpk(FloatPred::Ogt, m.clone(), std::f64::consts::SQRT_2);
        let half = self.k(0.5);
        let mh = self.mul(m.clone(), half);
        let m = self.sel(big.clone(), mh, m);
        let e1 = self.ibink(BinOp::Add, e.clone(), 1);
        let it = self.t(Type::I64);
        let e = self.fx.select(&it, big, e1, e);
        (m, self.fx.cast(CastOp::SiToFp, &it, e, &self.f()))
    }

    /// (ln m, e) with x = m · 2^e, m in [√½, √2), for a positive normal x.
    fn log_parts(&mut self, x: Operand) -> (Operand, Operand) {
        let (m, ef) = self.mantissa_exponent(x);
        // ln m = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.1716: the odd
        // series to s^23 leaves less than 2^-56.
        let one = self.k(1.0);
        let num = self.sub(m.clone(), one.clone());
        let den = self.add(m, one);
        let s = self.div(num, den);
        let z = self.mul(s.clone(), s.clone());
        let coeffs: Vec<f64> = (0..12).map(|k| 1.0 / (2 * k + 1) as f64).collect();
        // 2s + 2s z (1/3 + z/5 + ...): the leading term exact, so only s's
        // rounding reaches the result.
        let q = self.poly(&z, &coeffs[1..]);
        let two_s = self.add(s.clone(), s);
        let zq = self.mul(z, q);
        (self.fma(two_s.clone(), zq, two_s), ef)
    }

    /// 2^(hi + lo) for any hi and a small lo: the fraction (hi - n) + lo keeps
    /// lo's bits (double results).
    fn exp2_parts(&mut self, hi: Operand, lo: Operand) -> Operand {
        let lim_lo = self.k(-2200.0);
        let lim_hi = self.k(2200.0);
        let c = self.bin(BinOp::FMax, hi.clone(), lim_lo);
        let c = self.bin(BinOp::FMin, c, lim_hi);
        let n = self.un(UnOp::RoundEven, c.clone());
        let f = self.sub(c, n.clone());
        let f = self.add(f, lo);
        // 2^f = Σ (f ln 2)^k / k!, |f| <= ½: 15 terms leave less than 2^-62.
        let mut coeffs = Vec::new();
        let mut c = 1.0f64;
        for k in 0..15 {
            coeffs.push(c);
            c *= LN_2 / f64::from(k + 1);
        }
        let p = self.poly(&f, &coeffs);
        // ldexp in two steps, so that 2^n below 2^-1022 does not flush p.
        let w = self.t(Type::I32);
        let ni = self.fx.cast(CastOp::FpToSi, &self.f(), n, &w);
        let two = self.fx.splat(&w, 2);
        let half = self.fx.bin(BinOp::SDiv, &w, ni.clone(), two);
        let rest = self.fx.bin(BinOp::Sub, &w, ni, half.clone());
        let r = self.ldexp(p, half);
        let r = self.ldexp(r, rest);
        let nan = self.is_nan(&hi);
        self.sel(nan, hi, r)
    }

    /// log, log2 or log10 of a double: subnormals scaled by 2^54 first, e ln 2
    /// with ln 2 in two parts.
    fn log_with_parts(&mut self, x: Operand, op: CLOp) -> Operand {
        let sub = self.cmpk(FloatPred::Olt, x.clone(), f64::MIN_POSITIVE);
        let big = self.k(2f64.powi(54));
        let scaled = self.mul(x.clone(), big);
        let xs = self.sel(sub.clone(), scaled, x.clone());
        let ok = self.cmpk(FloatPred::Ogt, xs.clone(), 0.0);
        let fin = self.cmpk(FloatPred::Olt, xs.clone(), f64::INFINITY);
        let ok = self.and(ok, fin);
        let one = self.k(1.0);
        let safe = self.sel(ok, xs, one);
        let (lnm, e) = self.log_parts(safe);
        let adj = self.k(54.0);
        let e_sub = self.sub(e.clone(), adj);
        let e = self.sel(sub, e_sub, e);
        let r = if op == CLOp::log2 {
            let lo = self.k(LOG2_E_LO);
            let t = self.fma(lnm.clone(), lo, e);
            let hi = self.k(LOG2_E);
            self.fma(lnm, hi, t)
        } else {
            let lo = self.k(LN_2_LO);
            let t = self.fma(e.clone(), lo, lnm);
            let hi = self.k(LN_2);
            let ln = self.fma(e, hi, t);
            if op == CLOp::log10 {
                let k = self.k(std::f64::consts::LOG10_E);
                self.mul(ln, k)
            } else {
                ln
            }
        };
        self.log_specials(x, r)
    }

    /// e^x (or 10^x) of a double: x log2 e (log2 10) as an exact pair, then
    /// 2^(hi + lo).
    fn exp_scaled(&mut self, x: Operand, ten: bool) -> Operand {
        let (hi_c, lo_c, lim) = if ten { (std::f64::consts::LOG2_10, LOG2_10_LO, 400.0) } else { (LOG2_E, LOG2_E_LO, 800.0) };
        // Beyond ±lim the result is 0 or inf anyway; x log2 e must not
        // overflow.
        let (lo_k, hi_k) = (self.k(-lim), self.k(lim));
        let xc = self.bin(BinOp::FMax, x.clone(), lo_k);
        let xc = self.bin(BinOp::FMin, xc, hi_k);
        let h = self.k(hi_c);
        let hi = self.mul(xc.clone(), h.clone());
        let nhi = self.un(UnOp::FNeg, hi.clone());
        let err = self.fma(xc.clone(), h, nhi);
        let l = self.k(lo_c);
        let lo = self.fma(xc, l, err);
        let r = self.exp2_parts(hi, lo);
        let nan = self.is_nan(&x);
        self.sel(nan, x, r)
    }
    /// e^x of a double.
    fn exp_double(&mut self, x: Operand) -> Operand {
        self.exp_scaled(x, false)
    }

    /// IEEE's special cases of a logarithm of `x` around its core's result
    /// `r`: -inf at ±0, +inf at +inf, NaN below 0 and at NaN.
    fn log_specials(&mut self, x: Operand, r: Operand) -> Operand {
        let zero = self.cmpk(FloatPred::Oeq, x.clone(), 0.0);
        let r = self.selk(zero, f64::NEG_INFINITY, r);
        let inf = self.cmpk(FloatPred::Oeq, x.clone(), f64::INFINITY);
        let r = self.selk(inf, f64::INFINITY, r);
        let bad = self.cmpk(FloatPred::Ult, x, 0.0);
        self.selk(bad, f64::NAN, r)
    }

    /// A logarithm with IEEE's special cases around the core: -inf at ±0,
    /// +inf at +inf, NaN below 0 and at NaN.
    fn log_with(&mut self, x: Operand, base2: bool) -> Operand {
        let ok = self.cmpk(FloatPred::Ogt, x.clone(), 0.0);
        let fin = self.cmpk(FloatPred::Olt, x.clone(), f64::INFINITY);
        let ok = self.and(ok, fin);
        let one = self.k(1.0);
        let safe = self.sel(ok, x.clone(), one);
        let (lnm, e) = self.log_parts(safe);
        let r = if base2 {
            let l2 = self.k(LOG2_E);
            self.fma(lnm, l2, e)
        } else {
            let l = self.k(LN_2);
            self.fma(e, l, lnm)
        };
        self.log_specials(x, r)
    }
    fn log2(&mut self, x: Operand) -> Operand {
        self.log_with(x, true)
    }
    fn ln(&mut self, x: Operand) -> Operand {
        self.log_with(x, false)
    }

    /// 2^t for any t (NaN, infinities and overflow included).
    fn exp2(&mut self, t: Operand) -> Operand {
        let zero = self.k(0.0);
        self.exp2_parts(t, zero)
    }
    fn exp(&mut self, x: Operand) -> Operand {
        let l = self.k(LOG2_E);
        let t = self.mul(x, l);
        self.exp2(t)
    }

    /// atan for any x: the odd series on [-tan π/12, tan π/12] after x -> 1/x
    /// (above 1) and atan y = π/6 + atan((y√3 - 1)/(y + √3)).
    fn atan(&mut self, x: Operand) -> Operand {
        let ax = self.abs(x.clone());
        let inv = self.cmpk(FloatPred::Ogt, ax.clone(), 1.0);
        let one = self.k(1.0);
        let r = self.div(one.clone(), ax.clone());
        let y = self.sel(inv.clone(), r, ax);
        let red = self.cmpk(FloatPred::Ogt, y.clone(), 0.267_949_192_431_122_7);
        let s3 = self.k(3f64.sqrt());
        let neg1 = self.k(-1.0);
        let num = self.fma(y.clone(), s3.clone(), neg1);
        let den = self.add(y.clone(), s3);
        let q = self.div(num, den);
        let z = self.sel(red.clone(), q, y);
        let z2 = self.mul(z.clone(), z.clone());
        let coeffs: Vec<f64> = (0..16).map(|k| if k % 2 == 0 { 1.0 } else { -1.0 } / (2 * k + 1) as f64).collect();
        let p = self.poly(&z2, &coeffs);
        let a = self.mul(z, p);
        let p6 = self.k(FRAC_PI_6);
        let a6 = self.add(a.clone(), p6);
        let a = self.sel(red, a6, a);
        let p2 = self.k(FRAC_PI_2);
        let a2 = self.sub(p2, a.clone());
        let a = self.sel(inv, a2, a);
        self.copysign(a, x)
    }

    /// (sin u, cos u) for |u| <= π/4 (Taylor series to u^17 and u^18).
    fn sincos_small(&mut self, u: Operand) -> (Operand, Operand) {
        let z = self.mul(u.clone(), u.clone());
        let (mut sc, mut cc) = (Vec::new(), Vec::new());
        let mut f = 1.0f64;
        for k in 1..=18 {
            f *= f64::from(k);
            let term = if (k / 2) % 2 == 1 { -1.0 / f } else { 1.0 / f };
            if k % 2 == 1 {
                sc.push(term);
            } else {
                cc.push(term);
            }
        }
        // sin: u (1 + z (s3 + z (s5 + ...))), cos: 1 + z (c2 + z (c4 + ...)).
        let ps = self.poly(&z, &[&[1.0][..], &sc[1..]].concat());
        let s = self.mul(u, ps);
        let pc = self.poly(&z, &[&[1.0][..], &cc[..]].concat());
        (s, pc)
    }

    /// (sin πx, cos πx) for an f64 x that came from f32 or f16: x reduced
    /// exactly modulo 2, then to a quarter turn.
    fn sincospi(&mut self, x: Operand) -> (Operand, Operand) {
        let h = self.k(0.5);
        let xh = self.mul(x.clone(), h.clone());
        let n = self.un(UnOp::RoundEven, xh);
        let two = self.k(2.0);
        let n2 = self.mul(n, two.clone());
        let r = self.sub(x.clone(), n2); // [-1, 1]
        let r2 = self.mul(r.clone(), two);
        let q = self.un(UnOp::RoundEven, r2); // -2..2
        let qh = self.mul(q.clone(), h);
        let f = self.sub(r, qh); // [-¼, ¼]
        let pi = self.k(PI);
        let u = self.mul(f, pi);
        let (s, c) = self.sincos_small(u);
        // Quadrant q mod 4: sin(u + qπ/2) = s, c, -s, -c; cos = c, -s, -c, s.
        let w = self.t(Type::I32);
        let qi = self.fx.cast(CastOp::FpToSi, &self.f(), q, &w);
        let three = self.fx.splat(&w, 3);
        let qi = self.fx.bin(BinOp::And, &w, qi, three);
        let is = |d: &mut Self, v: u64| {
            let k = d.fx.splat(&w, v);
            d.fx.value(MOp::Icmp { pred: IntPred::Eq, ty: w.clone(), lhs: qi.clone(), rhs: k })
        };
        let (q1, q2, q3) = (is(self, 1), is(self, 2), is(self, 3));
        let ns = self.un(UnOp::FNeg, s.clone());
        let nc = self.un(UnOp::FNeg, c.clone());
        let sin = self.sel(q1.clone(), c.clone(), s.clone());
        let sin = self.sel(q2.clone(), ns.clone(), sin);
        let sin = self.sel(q3.clone(), nc.clone(), sin);
        let cos = self.sel(q1, ns, c);
        let cos = self.sel(q2, nc, cos);
        let cos = self.sel(q3, s, cos);
        // sinpi(±n) = ±0 (zero takes x's sign); cospi(n + ½) = +0.
        let zs = self.cmpk(FloatPred::Oeq, sin.clone(), 0.0);
        let zero = self.k(0.0);
        let signed_zero = self.copysign(zero.clone(), x.clone());
        let sin = self.sel(zs, signed_zero, sin);
        let zc = self.cmpk(FloatPred::Oeq, cos.clone(), 0.0);
        let cos = self.sel(zc, zero, cos);
        // Infinities and NaN give NaN (x - 2n is NaN for them).
        (sin, cos)
    }
}

/// (sin x, cos x) of double (lanes) `x`: `double::sin_cos`.
pub fn double_sin_cos(fx: &mut Fx, ty: &Type, x: Operand) -> (Operand, Operand) {
    let lanes = if ty.lanes() > 1 { ty.lanes() as u8 } else { 0 };
    let mut d = D { fx, lanes };
    double::sin_cos(&mut d, x)
}

/// Whether `op` is one of this module's functions.
pub fn handles(op: CLOp) -> bool {
    use CLOp::*;
    matches!(
        op,
        pow | pown
            | powr
            | rootn
            | cbrt
            | exp10
            | expm1
            | log10
            | log1p
            | hypot
            | sinh
            | cosh
            | tanh
            | asinh
            | acosh
            | atanh
            | atan
            | atan2
            | asin
            | acos
            | atanpi
            | atan2pi
            | asinpi
            | acospi
            | sinpi
            | cospi
            | tanpi
            | logb
            | ilogb
            | frexp
            | modf
            | fract
            | nan
            | nextafter
            | maxmag
            | minmag
            | fmod
            | remainder
            | remquo
            | erf
            | erfc
            | lgamma
            | lgamma_r
            | tgamma
    )
}

/// The functions of [`translate`] that take double too: computed in f64
/// without a wider type to round from, so only those whose method keeps
/// OpenCL's double bounds (measured by `double_library_is_within_opencl_bounds`
/// in tests/spirv_math.rs).
fn on_double(op: CLOp) -> bool {
    use CLOp::*;
    matches!(op, logb | ilogb | frexp | modf | fract | nan | nextafter | maxmag | minmag | fmod | remainder | remquo | erf | erfc | lgamma | lgamma_r | tgamma | hypot | sinpi | cospi | tanpi | atan | atanpi | atan2 | atan2pi | asin | asinpi | acos | acospi | pow | pown | powr | rootn) || double::handles(op)
}

/// `x` scaled into the normal range when it is a double subnormal: (x ·
/// 2^54 or x, and 54 or 0 to take off its exponent). f32 and f16 widened
/// to f64 are never subnormal there.
fn unsubnormal(d: &mut D, x: Operand) -> (Operand, Operand) {
    let ax = d.abs(x.clone());
    let zero = d.cmpk(FloatPred::Oeq, ax.clone(), 0.0);
    let tiny = d.cmpk(FloatPred::Olt, ax, f64::MIN_POSITIVE);
    let not_zero = d.not(zero);
    let sub = d.and(tiny, not_zero);
    let big = d.k(2f64.powi(54));
    let scaled = d.mul(x.clone(), big);
    let xs = d.sel(sub.clone(), scaled, x);
    let it = d.t(Type::I64);
    let (k, z) = (d.ki(Type::I64, 54), d.ki(Type::I64, 0));
    let adj = d.fx.select(&it, sub, k, z);
    (xs, adj)
}

/// The low parts of constants (the exact value minus the f64 one), for
/// products that must keep more than 53 bits.
const LOG2_E_LO: f64 = 2.035_527_374_093_103_3e-17;
const LN_2_LO: f64 = 2.319_046_813_846_299_6e-17;
const LOG2_10_LO: f64 = 1.661_617_516_973_592e-16;

/// The double forms of exp, exp2, exp10, log, log2 and log10 (OpenCL bound: 3
/// ulp). The same cores as the single-precision library, without its margin,
/// so the products that scale by log2 e, log2 10 and ln 2 keep their low parts:
/// 2^(hi + lo) with the fraction (hi - n) + lo, and e ln 2 + ln m with ln 2 in
/// two parts.
pub fn double(fx: &mut Fx, op: CLOp, ty: &Type, x: Operand) -> Result<Operand, String> {
    let lanes = if ty.lanes() > 1 { ty.lanes() as u8 } else { 0 };
    let mut d = D { fx, lanes };
    Ok(match op {
        CLOp::exp2 => {
            let zero = d.k(0.0);
            d.exp2_parts(x, zero)
        }
        CLOp::exp | CLOp::exp10 => d.exp_scaled(x, op == CLOp::exp10),
        CLOp::log | CLOp::log2 | CLOp::log10 => {
            d.log_with_parts(x, op)
        }
        other => return Err(format!("OpenCL.std {other:?} on double is not supported (exp, exp2, exp10, log, log2 and log10 are)")),
    })
}

/// Stores a second result through a pointer operand (frexp, modf, fract).
fn store(fx: &mut Fx, value: Operand, ptr: Operand, ty: &Type) {
    fx.b.push(MOp::Store { ty: ty.clone(), value, ptr, align: ty.align(), volatile: false }, None);
}

/// `OpenCL.std op` on arguments `a` (their MIR types `at`) with result type
/// `ty`.
pub fn translate(fx: &mut Fx, op: CLOp, ty: &Type, a: &[Operand], at: &[Type]) -> Result<Operand, String> {
    let arg = |k: usize| a.get(k).cloned().ok_or_else(|| format!("OpenCL.std {op:?} with {} operands", a.len()));
    // The float operand's type (ilogb returns an integer; nan takes one).
    let ft = match op {
        CLOp::ilogb => at.first().cloned().ok_or("OpenCL.std ilogb without an operand")?,
        _ => ty.clone(),
    };
    if op != CLOp::nan && !ft.element().is_float() {
        return Err(format!("OpenCL.std {op:?} of {ft}"));
    }
    let double = ft.element() == &Type::F64;
    if double && !on_double(op) {
        return Err(format!("OpenCL.std {op:?} on double is not supported (docs/spirv.md lists the double functions)"));
    }
    let lanes = if ft.lanes() > 1 { ft.lanes() as u8 } else { 0 };
    let mut d = D { fx, lanes };
    let dt = d.f();
    let wide = |d: &mut D, x: Operand, from: &Type| d.fx.cast(CastOp::FpExt, from, x, &dt);
    let narrow = |d: &mut D, x: Operand| d.fx.cast(CastOp::FpTrunc, &dt, x, &ft);
    // Widened for the functions computed in f64 (the others work in the
    // argument's type or on its bits).
    let x = match op {
        CLOp::nan | CLOp::nextafter | CLOp::maxmag | CLOp::minmag | CLOp::modf | CLOp::fract => Operand::Const(crate::mir::Const::int(Type::I32, 0)),
        _ => {
            let x = arg(0)?;
            wide(&mut d, x, &ft)
        }
    };
    let y = || -> Result<Operand, String> { arg(1) };
    let r = match op {
        op if double && double::handles(op) => double::translate(&mut d, op, x),
        CLOp::pow | CLOp::pown | CLOp::powr | CLOp::rootn => {
            let yv = match op {
                CLOp::pown | CLOp::rootn => {
                    let it = at.get(1).cloned().ok_or("OpenCL.std pown without an exponent")?;
                    let v = y()?;
                    d.fx.cast(CastOp::SiToFp, &it, v, &dt)
                }
                _ => {
                    let v = y()?;
                    wide(&mut d, v, &ft)
                }
            };
            pow_like(&mut d, op, x, yv, double)
        }
        CLOp::cbrt => {
            let ax = d.abs(x.clone());
            let l = d.log2(ax);
            let third = d.k(1.0 / 3.0);
            let t = d.mul(l, third);
            let r = d.exp2(t);
            // Exact at zero, infinity and NaN; the sign is x's.
            let zero = d.cmpk(FloatPred::Oeq, x.clone(), 0.0);
            let r = d.sel(zero, x.clone(), r);
            d.copysign(r, x)
        }
        CLOp::exp10 => {
            let l = d.k(std::f64::consts::LOG2_10);
            let t = d.mul(x, l);
            d.exp2(t)
        }
        CLOp::expm1 => {
            // Near 0 the Taylor series keeps the relative accuracy exp - 1 loses.
            let coeffs: Vec<f64> = (0..12).scan(1.0f64, |f, k| {
                *f /= f64::from(k + 1);
                Some(*f)
            }).collect();
            let p = d.poly(&x, &coeffs);
            let small = d.mul(x.clone(), p);
            let e = d.exp(x.clone());
            let one = d.k(1.0);
            let big = d.sub(e, one);
            let ax = d.abs(x.clone());
            let near = d.cmpk(FloatPred::Olt, ax, 1.0 / 32.0);
            let r = d.sel(near, small, big);
            let zero = d.cmpk(FloatPred::Oeq, x.clone(), 0.0);
            d.sel(zero, x, r)
        }
        CLOp::log10 => {
            let l = d.log2(x);
            let k = d.k(std::f64::consts::LOG10_2);
            d.mul(l, k)
        }
        CLOp::log1p => {
            // 1 + x is exact in f64 from 2^-29 up; below, x - x²/2 is exact
            // enough (the next term is under 2^-58 of x).
            let one = d.k(1.0);
            let s = d.add(x.clone(), one);
            let big = d.ln(s);
            let h = d.k(-0.5);
            let xx = d.mul(x.clone(), x.clone());
            let small = d.fma(xx, h, x.clone());
            let ax = d.abs(x.clone());
            let near = d.cmpk(FloatPred::Olt, ax, 2f64.powi(-29));
            d.sel(near, small, big)
        }
        CLOp::hypot => {
            let yv = y()?;
            let yv = wide(&mut d, yv, &ft);
            // Doubles: both scaled by the larger one's power of two, so the
            // squares neither overflow nor underflow (exact scaling; what the
            // smaller loses to subnormals is below the larger's ulp).
            let (xs, ys, scale) = if double {
                let (ax, ay) = (d.abs(x.clone()), d.abs(yv.clone()));
                let m = d.bin(BinOp::FMax, ax, ay);
                let (ms, adj) = unsubnormal(&mut d, m);
                let b = d.bits(ms);
                let e = d.ibink(BinOp::LShr, b, 52);
                let e = d.ibink(BinOp::And, e, 0x7ff);
                let e = d.ibink(BinOp::Sub, e, 1023);
                let e = d.ibin(BinOp::Sub, e, adj);
                let (it, w) = (d.t(Type::I64), d.t(Type::I32));
                let e = d.fx.cast(CastOp::Trunc, &it, e, &w);
                let zero = d.fx.splat(&w, 0);
                let ne = d.fx.bin(BinOp::Sub, &w, zero, e.clone());
                (d.ldexp(x.clone(), ne.clone()), d.ldexp(yv.clone(), ne), Some(e))
            } else {
                (x.clone(), yv.clone(), None)
            };
            let xx = d.mul(xs.clone(), xs);
            let s = d.fma(ys.clone(), ys, xx);
            let r = d.un(UnOp::Sqrt, s);
            let r = match scale {
                Some(e) => d.ldexp(r, e),
                None => r,
            };
            let xi = d.is_inf(&x);
            let yi = d.is_inf(&yv);
            let inf = d.or(xi, yi);
            d.selk(inf, f64::INFINITY, r)
        }
        CLOp::sinh | CLOp::cosh | CLOp::tanh => hyperbolic(&mut d, op, x),
        CLOp::asinh => {
            let ax = d.abs(x.clone());
            let one = d.k(1.0);
            let s = d.fma(ax.clone(), ax.clone(), one);
            let s = d.un(UnOp::Sqrt, s);
            let s = d.add(ax.clone(), s);
            let big = d.ln(s);
            // x - x³/6 + 3x⁵/40 - 15x⁷/336 below 2^-5.
            let z = d.mul(x.clone(), x.clone());
            let p = d.poly(&z, &[1.0, -1.0 / 6.0, 3.0 / 40.0, -15.0 / 336.0, 105.0 / 3456.0, -945.0 / 42240.0]);
            let small = d.mul(ax.clone(), p);
            let near = d.cmpk(FloatPred::Olt, ax, 1.0 / 32.0);
            let r = d.sel(near, small, big);
            d.copysign(r, x)
        }
        CLOp::acosh => {
            let one = d.k(1.0);
            let m = d.sub(x.clone(), one.clone());
            let p = d.add(x.clone(), one);
            let q = d.mul(m, p);
            let s = d.un(UnOp::Sqrt, q);
            let s = d.add(x.clone(), s);
            let r = d.ln(s);
            // Below 1 (where x + sqrt(x² - 1) may still be positive): NaN.
            let below = d.cmpk(FloatPred::Ult, x, 1.0);
            d.selk(below, f64::NAN, r)
        }
        CLOp::atanh => {
            let one = d.k(1.0);
            let num = d.add(one.clone(), x.clone());
            let den = d.sub(one, x.clone());
            let q = d.div(num, den);
            let l = d.ln(q);
            let h = d.k(0.5);
            let big = d.mul(l, h);
            let z = d.mul(x.clone(), x.clone());
            let coeffs: Vec<f64> = (0..8).map(|k| 1.0 / (2 * k + 1) as f64).collect();
            let p = d.poly(&z, &coeffs);
            let small = d.mul(x.clone(), p);
            let ax = d.abs(x);
            let near = d.cmpk(FloatPred::Olt, ax, 1.0 / 32.0);
            d.sel(near, small, big)
        }
        CLOp::atan | CLOp::atanpi => {
            let r = d.atan(x);
            per_pi(&mut d, op == CLOp::atanpi, r)
        }
        CLOp::atan2 | CLOp::atan2pi => {
            let yv = x; // atan2(y, x): the first operand is y
            let xv = y()?;
            let xv = wide(&mut d, xv, &ft);
            let (ay, ax) = (d.abs(yv.clone()), d.abs(xv.clone()));
            let q = d.div(ay.clone(), ax.clone());
            let base = d.atan(q);
            let yi = d.is_inf(&yv);
            let xi = d.is_inf(&xv);
            let both_inf = d.and(yi, xi);
            let base = d.selk(both_inf, std::f64::consts::FRAC_PI_4, base);
            let yz = d.cmpk(FloatPred::Oeq, ay, 0.0);
            let xz = d.cmpk(FloatPred::Oeq, ax, 0.0);
            let both_zero = d.and(yz, xz);
            let base = d.selk(both_zero, 0.0, base);
            // x negative (-0 included): the angle from the other side.
            let xb = d.bits(xv);
            let zero = d.ki(Type::I64, 0);
            let it = d.t(Type::I64);
            let neg = d.fx.value(MOp::Icmp { pred: IntPred::Slt, ty: it, lhs: xb, rhs: zero });
            let pi = d.k(PI);
            let other = d.sub(pi, base.clone());
            let base = d.sel(neg, other, base);
            let r = d.copysign(base, yv);
            per_pi(&mut d, op == CLOp::atan2pi, r)
        }
        CLOp::asin | CLOp::asinpi => {
            let one = d.k(1.0);
            let m = d.sub(one.clone(), x.clone());
            let p = d.add(one, x.clone());
            let q = d.mul(m, p);
            let s = d.un(UnOp::Sqrt, q);
            let t = d.div(x.clone(), s);
            let r = d.atan(t);
            // asin(±0) = ±0 (0/1 keeps the sign already); |x| > 1 is NaN by
            // the square root.
            per_pi(&mut d, op == CLOp::asinpi, r)
        }
        CLOp::acos | CLOp::acospi => {
            let one = d.k(1.0);
            let m = d.sub(one.clone(), x.clone());
            let p = d.add(one, x);
            let q = d.div(m, p);
            let s = d.un(UnOp::Sqrt, q);
            let a = d.atan(s);
            let r = d.add(a.clone(), a);
            per_pi(&mut d, op == CLOp::acospi, r)
        }
        CLOp::sinpi => d.sincospi(x).0,
        CLOp::cospi => d.sincospi(x).1,
        // tanpi(±n) = ±0 for even n and ∓0 for odd n: the quotient's sign
        // already is sin's over cos's.
        CLOp::tanpi => {
            let (s, c) = d.sincospi(x);
            d.div(s, c)
        }
        CLOp::logb | CLOp::ilogb => {
            // The unbiased exponent of the f64 value (f32 and f16 subnormals
            // are normal there; double ones are scaled first).
            let (xs, adj) = unsubnormal(&mut d, x.clone());
            let b = d.bits(xs);
            let e = d.ibink(BinOp::LShr, b, 52);
            let e = d.ibink(BinOp::And, e, 0x7ff);
            let e = d.ibink(BinOp::Sub, e, 1023);
            let e = d.ibin(BinOp::Sub, e, adj);
            let it = d.t(Type::I64);
            if op == CLOp::logb {
                let ef = d.fx.cast(CastOp::SiToFp, &it, e, &dt);
                let zero = d.cmpk(FloatPred::Oeq, x.clone(), 0.0);
                let r = d.selk(zero, f64::NEG_INFINITY, ef);
                let inf = d.is_inf(&x);
                let r = d.selk(inf, f64::INFINITY, r);
                let nan = d.is_nan(&x);
                d.sel(nan, x, r)
            } else {
                let w = d.t(Type::I32);
                let e = d.fx.cast(CastOp::Trunc, &it, e, &w);
                let pick = |d: &mut D, c: Operand, v: i32, e: Operand| {
                    let k = d.fx.splat(&w, v as u32 as u64);
                    d.fx.select(&w, c, k, e)
                };
                let zero = d.cmpk(FloatPred::Oeq, x.clone(), 0.0);
                let e = pick(&mut d, zero, i32::MIN, e);
                let inf = d.is_inf(&x);
                let e = pick(&mut d, inf, i32::MAX, e);
                let nan = d.is_nan(&x);
                let e = pick(&mut d, nan, i32::MAX, e);
                return Ok(d.fx.cast(CastOp::Trunc, &w, e, ty));
            }
        }
        CLOp::frexp => {
            // x = m · 2^e with |m| in [½, 1); 0, infinities and NaN keep x
            // with exponent 0.
            let (xs, adj) = unsubnormal(&mut d, x.clone());
            let b = d.bits(xs);
            let e = d.ibink(BinOp::LShr, b, 52);
            let e = d.ibink(BinOp::And, e, 0x7ff);
            let e = d.ibink(BinOp::Sub, e, 1022);
            let e = d.ibin(BinOp::Sub, e, adj);
            let it = d.t(Type::I64);
            let w = d.t(Type::I32);
            let e = d.fx.cast(CastOp::Trunc, &it, e, &w);
            let ne = d.fx.un(UnOp::Not, &w, e.clone());
            let one = d.fx.splat(&w, 1);
            let ne = d.fx.bin(BinOp::Add, &w, ne, one);
            let m = d.ldexp(x.clone(), ne);
            let zero = d.cmpk(FloatPred::Oeq, x.clone(), 0.0);
            let inf = d.is_inf(&x);
            let nan = d.is_nan(&x);
            let keep = d.or(zero, inf);
            let keep = d.or(keep, nan);
            let m = d.sel(keep.clone(), x, m);
            let z = d.fx.splat(&w, 0);
            let e = d.fx.select(&w, keep, z, e);
            let ptr = arg(1)?;
            store(d.fx, e, ptr, &w);
            m
        }
        CLOp::modf | CLOp::fract => {
            // In the argument's type: x - trunc x and x - floor x are exact
            // there, and fract's cap (the largest value below 1) is its own.
            let xv = arg(0)?;
            let fx = &mut *d.fx;
            let whole = fx.un(if op == CLOp::modf { UnOp::Trunc } else { UnOp::Floor }, &ft, xv.clone());
            let part = fx.bin(BinOp::FSub, &ft, xv.clone(), whole.clone());
            let part = if op == CLOp::fract {
                let cap = match ft.element() {
                    Type::F16 => 0x3bffu64,
                    Type::F64 => 0x3fef_ffff_ffff_ffff,
                    _ => 0x3f7f_ffff,
                };
                let cap = fx.splat(&ft, cap);
                fx.bin(BinOp::FMin, &ft, part, cap)
            } else {
                fx.bin(BinOp::CopySign, &ft, part, xv.clone())
            };
            // ±inf: ±0 (and the whole part ±inf); NaN: NaN in both.
            let mag = fx.un(UnOp::FAbs, &ft, xv.clone());
            let inf_bits = match ft.element() {
                Type::F16 => 0x7c00u64,
                Type::F64 => 0x7ff0_0000_0000_0000,
                _ => 0x7f80_0000,
            };
            let inf = fx.splat(&ft, inf_bits);
            let is_inf = fx.value(MOp::Fcmp { pred: FloatPred::Oeq, ty: ft.clone(), lhs: mag, rhs: inf });
            let zero = fx.splat(&ft, 0);
            let signed_zero = fx.bin(BinOp::CopySign, &ft, zero, xv.clone());
            let part = fx.select(&ft, is_inf, signed_zero, part);
            let is_nan = fx.value(MOp::Fcmp { pred: FloatPred::Uno, ty: ft.clone(), lhs: xv.clone(), rhs: xv.clone() });
            let part = fx.select(&ft, is_nan, xv, part);
            let ptr = arg(1)?;
            store(fx, whole, ptr, &ft);
            return Ok(part);
        }
        CLOp::nan => {
            // A quiet NaN carrying the code in its significand, as clang's
            // library writes it.
            let code = arg(0)?;
            let ct = at.first().cloned().ok_or("OpenCL.std nan without an operand")?;
            let it = super::opencl::int_like(ty);
            let code = d.fx.resize(&ct, code, &it, false);
            let (quiet, mask) = match ty.element() {
                Type::F16 => (0x7e00u64, 0x01ffu64),
                Type::F64 => (0x7ff8_0000_0000_0000, 0x0007_ffff_ffff_ffff),
                _ => (0x7fc0_0000, 0x003f_ffff),
            };
            let m = d.fx.splat(&it, mask);
            let code = d.fx.bin(BinOp::And, &it, code, m);
            let q = d.fx.splat(&it, quiet);
            let bits = d.fx.bin(BinOp::Or, &it, code, q);
            return Ok(d.fx.cast(CastOp::Bitcast, &it, bits, ty));
        }
        CLOp::nextafter => {
            // On the bits of the argument type: one step toward y.
            let xv = arg(0)?;
            let yv = y()?;
            let it = super::opencl::int_like(&ft);
            let bt = d.t(Type::I1);
            let fx = &mut *d.fx;
            let xb = fx.cast(CastOp::Bitcast, &ft, xv.clone(), &it);
            let yb = fx.cast(CastOp::Bitcast, &ft, yv.clone(), &it);
            let fc = |fx: &mut Fx, pred: FloatPred, a: Operand, b: Operand| fx.value(MOp::Fcmp { pred, ty: ft.clone(), lhs: a, rhs: b });
            let ic = |fx: &mut Fx, pred: IntPred, a: Operand, b: Operand| fx.value(MOp::Icmp { pred, ty: it.clone(), lhs: a, rhs: b });
            let zero_i = fx.splat(&it, 0);
            let one_i = fx.splat(&it, 1);
            // Away from zero when y is beyond x on x's side.
            let up = fc(fx, FloatPred::Ogt, yv.clone(), xv.clone());
            let xneg = ic(fx, IntPred::Slt, xb.clone(), zero_i.clone());
            let away = fx.bin(BinOp::Xor, &bt, up, xneg);
            let inc = fx.bin(BinOp::Add, &it, xb.clone(), one_i.clone());
            let dec = fx.bin(BinOp::Sub, &it, xb.clone(), one_i.clone());
            let stepped = fx.select(&it, away, inc, dec);
            // From ±0: the smallest subnormal with y's sign.
            let sign = match ft.element() {
                Type::F16 => 0x8000u64,
                Type::F64 => 0x8000_0000_0000_0000,
                _ => 0x8000_0000,
            };
            let sm = fx.splat(&it, sign);
            let ysign = fx.bin(BinOp::And, &it, yb, sm);
            let tiny = fx.bin(BinOp::Or, &it, ysign, one_i);
            let zf = fx.splat(&ft, 0);
            let xzero = fc(fx, FloatPred::Oeq, xv.clone(), zf);
            let stepped = fx.select(&it, xzero, tiny, stepped);
            let r = fx.cast(CastOp::Bitcast, &it, stepped, &ft);
            let same = fc(fx, FloatPred::Oeq, xv.clone(), yv.clone());
            let r = fx.select(&ft, same, yv.clone(), r);
            let nan = fc(fx, FloatPred::Uno, xv.clone(), yv.clone());
            let sum = fx.bin(BinOp::FAdd, &ft, xv, yv);
            return Ok(fx.select(&ft, nan, sum, r));
        }
        CLOp::maxmag | CLOp::minmag => {
            let xv = arg(0)?;
            let yv = y()?;
            let fx = &mut *d.fx;
            let (ax, ay) = (fx.un(UnOp::FAbs, &ft, xv.clone()), fx.un(UnOp::FAbs, &ft, yv.clone()));
            let (first, second) = if op == CLOp::maxmag { (FloatPred::Ogt, FloatPred::Olt) } else { (FloatPred::Olt, FloatPred::Ogt) };
            let c1 = fx.value(MOp::Fcmp { pred: first, ty: ft.clone(), lhs: ax.clone(), rhs: ay.clone() });
            let c2 = fx.value(MOp::Fcmp { pred: second, ty: ft.clone(), lhs: ax, rhs: ay });
            let tie = fx.bin(if op == CLOp::maxmag { BinOp::FMax } else { BinOp::FMin }, &ft, xv.clone(), yv.clone());
            let r = fx.select(&ft, c2, yv, tie);
            return Ok(fx.select(&ft, c1, xv, r));
        }
        CLOp::fmod | CLOp::remainder | CLOp::remquo => {
            let kind = match op {
                CLOp::fmod => Remainder::Truncated,
                CLOp::remainder => Remainder::Nearest,
                _ => Remainder::NearestWithQuotient,
            };
            let (r, quo) = remainder(&mut d, kind, &ft, arg(0)?, y()?);
            if let Some(q) = quo {
                let w = d.t(Type::I32);
                store(d.fx, q, arg(2)?, &w);
            }
            r
        }
        CLOp::erf | CLOp::erfc if double => erf_double(&mut d, op == CLOp::erfc, x),
        CLOp::erf | CLOp::erfc => erf(&mut d, op == CLOp::erfc, x),
        CLOp::tgamma if double => gamma::tgamma(&mut d, x),
        CLOp::lgamma | CLOp::lgamma_r | CLOp::tgamma => {
            let (lg, sign) = if double { gamma::lgamma(&mut d, x.clone()) } else { lgamma(&mut d, x.clone()) };
            if op == CLOp::lgamma_r {
                let w = d.t(Type::I32);
                let dt = d.f();
                let s = d.fx.cast(CastOp::FpToSi, &dt, sign.clone(), &w);
                store(d.fx, s, arg(1)?, &w);
            }
            if op == CLOp::tgamma {
                // sign · e^lgamma; the poles (0 excepted) and -inf are NaN,
                // ±0 give ±inf.
                let e = d.exp(lg);
                let r = d.mul(sign, e);
                let int = d.is_int(&x);
                let neg = d.cmpk(FloatPred::Olt, x.clone(), 0.0);
                let pole = d.and(int, neg);
                let r = d.selk(pole, f64::NAN, r);
                let inf = d.k(f64::INFINITY);
                let signed_inf = d.copysign(inf, x.clone());
                let zero = d.cmpk(FloatPred::Oeq, x.clone(), 0.0);
                d.sel(zero, signed_inf, r)
            } else {
                lg
            }
        }
        other => return Err(format!("OpenCL.std {other:?} is not supported")),
    };
    Ok(narrow(&mut d, r))
}

/// The result divided by π for the `*pi` forms.
fn per_pi(d: &mut D, by_pi: bool, r: Operand) -> Operand {
    if by_pi {
        let pi = d.k(PI);
        d.div(r, pi)
    } else {
        r
    }
}

/// pow, pown, powr and rootn: 2^(y log2 |x|) with the sign and the special
/// cases each defines (C99 Annex F for pow and pown; OpenCL's table for powr
/// and rootn).
///
/// On double (`pair`) the exponent is formed as a pair: log2 |x| from
/// `double::log2_pair`, times y (or over n) by fma, into `exp2_parts`.
fn pow_like(d: &mut D, op: CLOp, x: Operand, y: Operand, pair: bool) -> Operand {
    let ax = d.abs(x.clone());
    let base = if op == CLOp::powr { x.clone() } else { ax };
    let r = if pair {
        let (hi, lo) = double::log2_pair(d, base);
        double::exp2_of_product(d, y.clone(), hi, lo, op == CLOp::rootn)
    } else {
        let l = d.log2(base);
        let t = if op == CLOp::rootn { d.div(l, y.clone()) } else { d.mul(y.clone(), l) };
        d.exp2(t)
    };
    let xneg = d.cmpk(FloatPred::Olt, x.clone(), 0.0);
    // The sign of x^y for x < 0 (-0 included: its sign survives odd powers).
    let xb = d.bits(x.clone());
    let zero_i = d.ki(Type::I64, 0);
    let it = d.t(Type::I64);
    let xsign = d.fx.value(MOp::Icmp { pred: IntPred::Slt, ty: it, lhs: xb, rhs: zero_i });
    let odd = d.is_odd_int(&y);
    let neg = d.and(xsign, odd.clone());
    let nr = d.un(UnOp::FNeg, r.clone());
    // powr is defined for x >= 0 only (powr(-0, y) is +0 or +inf).
    let r = if op == CLOp::powr { r } else { d.sel(neg, nr, r) };
    match op {
        CLOp::pow | CLOp::pown => {
            // Finite x < 0 to a finite non-integer power: NaN (-inf to any
            // power is ±0 or ±inf).
            let int = d.is_int(&y);
            let not_int = d.not(int);
            let bad = d.and(xneg.clone(), not_int);
            let xinf = d.is_inf(&x);
            let xfin = d.not(xinf);
            let bad = d.and(bad, xfin);
            let r = d.selk(bad, f64::NAN, r);
            // (-1)^±inf = 1; x^0 = 1 and 1^y = 1, NaN included.
            let m1 = d.cmpk(FloatPred::Oeq, x.clone(), -1.0);
            let yi = d.is_inf(&y);
            let one = d.and(m1, yi);
            let r = d.selk(one, 1.0, r);
            let y0 = d.cmpk(FloatPred::Oeq, y, 0.0);
            let x1 = d.cmpk(FloatPred::Oeq, x, 1.0);
            let one = d.or(y0, x1);
            d.selk(one, 1.0, r)
        }
        CLOp::rootn => {
            // rootn(x < 0, even n) and rootn(x, 0) are NaN.
            let even = d.not(odd);
            let bad = d.and(xneg, even);
            let n0 = d.cmpk(FloatPred::Oeq, y, 0.0);
            let bad = d.or(bad, n0);
            d.selk(bad, f64::NAN, r)
        }
        // powr: x < 0 is NaN through log2, 0^0, inf^0 and 1^inf through
        // 0 · inf.
        _ => r,
    }
}

/// sinh, cosh and tanh from e^|x| (the Taylor series near 0 for sinh and
/// tanh, where e^x - e^-x cancels).
fn hyperbolic(d: &mut D, op: CLOp, x: Operand) -> Operand {
    let ax = d.abs(x.clone());
    let z = d.mul(x.clone(), x.clone());
    let near = d.cmpk(FloatPred::Olt, ax.clone(), 1.0 / 32.0);
    match op {
        CLOp::cosh => {
            let e = d.exp(ax);
            let one = d.k(1.0);
            let inv = d.div(one, e.clone());
            let s = d.add(e, inv);
            let h = d.k(0.5);
            d.mul(s, h)
        }
        CLOp::sinh => {
            let e = d.exp(ax.clone());
            let one = d.k(1.0);
            let inv = d.div(one, e.clone());
            let s = d.sub(e, inv);
            let h = d.k(0.5);
            let big = d.mul(s, h);
            let coeffs: Vec<f64> = (0..7).scan(1.0f64, |f, k| {
                let v = *f;
                *f /= f64::from((2 * k + 2) * (2 * k + 3));
                Some(v)
            }).collect();
            let p = d.poly(&z, &coeffs);
            let small = d.mul(ax, p);
            let r = d.sel(near, small, big);
            d.copysign(r, x)
        }
        _ => {
            let two = d.k(2.0);
            let t = d.mul(ax.clone(), two);
            let e = d.exp(t);
            let one = d.k(1.0);
            let num = d.sub(e.clone(), one.clone());
            let den = d.add(e, one);
            let big = d.div(num, den);
            let far = d.cmpk(FloatPred::Ogt, ax.clone(), 22.0);
            let big = d.selk(far, 1.0, big);
            let p = d.poly(&z, &[1.0, -1.0 / 3.0, 2.0 / 15.0, -17.0 / 315.0, 62.0 / 2835.0, -1382.0 / 155925.0, 21844.0 / 6081075.0]);
            let small = d.mul(ax, p);
            let r = d.sel(near, small, big);
            d.copysign(r, x)
        }
    }
}
