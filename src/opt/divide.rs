//! divide: integer division and remainder by a constant become a multiply
//! by a "magic" reciprocal (the high half of the product) and shifts, as in
//! Granlund and Montgomery, "Division by invariant integers using
//! multiplication" (PLDI 1994). A 64-bit division is about 360 instructions
//! on AMDGPU; a 64-bit high multiply is a handful.
//!
//! - `udiv n, d`: q = mulhi(n >> z, m) >> s, with the pre-shift z (trailing
//!   zeros of d) and the smallest s for which the reciprocal m fits the width
//!   and is exact for every n (`magic_unsigned`); when none fits, the
//!   "add" form q = (t + ((n - t) >> 1)) >> (l - 1), t = mulhi(n, m).
//! - `sdiv n, d`: the unsigned quotient of |n| by |d|, its sign restored with
//!   the xor/subtract pair (d = INT_MIN: n == INT_MIN);
//! - `urem`/`srem`: n - q * d.
//!
//! `magic_unsigned` is tested against exact division (tests/mir_opt.rs and
//! the unit tests below).

use super::rewrite::Names;
use crate::abi::Type;
use crate::mir::interp::ops::{mask, sext};
use crate::mir::ir::{BinOp, CastOp, Const, Function, Inst, IntPred, Op, Operand, Span};

/// How to divide a `w`-bit unsigned value by a constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnsignedMagic {
    /// `n >> shift`
    Shift(u32),
    /// `mulhi(n >> pre, multiplier) >> post`
    Multiply { pre: u32, multiplier: u64, post: u32 },
    /// `t = mulhi(n, multiplier); (t + ((n - t) >> 1)) >> post`
    MultiplyAdd { multiplier: u64, post: u32 },
    /// `n >= d` (d above half the range: the quotient is 0 or 1)
    Compare(u64),
}

/// The reciprocal of `d` (2 ≤ d < 2^w) for `w`-bit unsigned division.
pub fn magic_unsigned(d: u64, w: u32) -> UnsignedMagic {
    debug_assert!(d >= 2 && (w == 64 || d < 1u64 << w));
    if d & (d - 1) == 0 {
        return UnsignedMagic::Shift(d.trailing_zeros());
    }
    // n < 2^bits after the pre-shift; m = ceil(2^p / d) is exact for every
    // such n when m * d - 2^p <= 2^(p - bits): then n * m / 2^p lies within
    // 1/d of n / d, below the next integer.
    let exact = |d: u64, bits: u32| -> Option<(u64, u32)> {
        let d = u128::from(d);
        for p in w..(2 * w).min(127) {
            let two_p = 1u128 << p;
            let m = two_p.div_ceil(d);
            if m >> w != 0 {
                continue;
            }
            let e = m * d - two_p;
            if e << bits <= two_p {
                return Some((m as u64, p - w));
            }
        }
        None
    };
    if let Some((multiplier, post)) = exact(d, w) {
        return UnsignedMagic::Multiply { pre: 0, multiplier, post };
    }
    if d > mask(w) >> 1 {
        return UnsignedMagic::Compare(d);
    }
    let z = d.trailing_zeros();
    if z > 0 {
        if let Some((multiplier, post)) = exact(d >> z, w - z) {
            return UnsignedMagic::Multiply { pre: z, multiplier, post };
        }
    }
    // 2^(l-1) < d < 2^l; m = floor(2^(w+l) / d) - 2^w + 1 fits w bits.
    let l = 64 - (d - 1).leading_zeros();
    let m = ((1u128 << (w + l)) / u128::from(d)) - (1u128 << w) + 1;
    UnsignedMagic::MultiplyAdd { multiplier: m as u64, post: l - 1 }
}

/// Evaluates a magic division the way the emitted code does (for tests).
pub fn apply_unsigned(magic: UnsignedMagic, n: u64, w: u32) -> u64 {
    let mulhi = |a: u64, b: u64| ((u128::from(a) * u128::from(b)) >> w) as u64;
    match magic {
        UnsignedMagic::Shift(k) => n >> k,
        UnsignedMagic::Multiply { pre, multiplier, post } => mulhi(n >> pre, multiplier) >> post,
        UnsignedMagic::MultiplyAdd { multiplier, post } => {
            let t = mulhi(n, multiplier);
            (t + ((n - t) >> 1)) >> post
        }
        UnsignedMagic::Compare(d) => u64::from(n >= d),
    }
}

/// New instructions before the one they replace.
struct Emitter<'a> {
    func: &'a mut Function,
    names: &'a mut Names,
    out: &'a mut Vec<Inst>,
    span: Span,
    ty: Type,
}

impl Emitter<'_> {
    fn c(&self, bits: u64) -> Operand {
        Operand::Const(Const { ty: self.ty.clone(), bits: bits & mask(self.ty.bits()) })
    }

    fn push(&mut self, op: Op, ty: Type) -> Operand {
        let v = self.names.fresh(self.func, ty, "div");
        self.out.push(Inst { result: Some(v), op, span: self.span });
        Operand::Value(v)
    }

    fn bin(&mut self, op: BinOp, lhs: Operand, rhs: Operand) -> Operand {
        let ty = self.ty.clone();
        self.push(Op::Binary { op, ty: ty.clone(), lhs, rhs }, ty)
    }

    fn udiv(&mut self, n: Operand, d: u64) -> Operand {
        let w = self.ty.bits();
        match magic_unsigned(d, w) {
            UnsignedMagic::Shift(k) => {
                let k = self.c(u64::from(k));
                self.bin(BinOp::LShr, n, k)
            }
            UnsignedMagic::Multiply { pre, multiplier, post } => {
                let mut x = n;
                if pre > 0 {
                    let k = self.c(u64::from(pre));
                    x = self.bin(BinOp::LShr, x, k);
                }
                let m = self.c(multiplier);
                let mut q = self.bin(BinOp::MulHiU, x, m);
                if post > 0 {
                    let k = self.c(u64::from(post));
                    q = self.bin(BinOp::LShr, q, k);
                }
                q
            }
            UnsignedMagic::MultiplyAdd { multiplier, post } => {
                let m = self.c(multiplier);
                let t = self.bin(BinOp::MulHiU, n.clone(), m);
                let diff = self.bin(BinOp::Sub, n, t.clone());
                let one = self.c(1);
                let half = self.bin(BinOp::LShr, diff, one);
                let sum = self.bin(BinOp::Add, t, half);
                if post == 0 {
                    return sum;
                }
                let k = self.c(u64::from(post));
                self.bin(BinOp::LShr, sum, k)
            }
            UnsignedMagic::Compare(d) => {
                let (c, ty) = (self.c(d), self.ty.clone());
                let ge = self.push(Op::Icmp { pred: IntPred::Uge, ty: ty.clone(), lhs: n, rhs: c }, Type::I1);
                self.push(Op::Cast { op: CastOp::ZExt, from: Type::I1, arg: ge, to: ty.clone() }, ty)
            }
        }
    }

    fn sdiv(&mut self, n: Operand, d: u64) -> Operand {
        let w = self.ty.bits();
        let min = 1u64 << (w - 1);
        if d & mask(w) == min {
            // Only INT_MIN itself divides to 1.
            let c = self.c(min);
            let eq = self.push(Op::Icmp { pred: IntPred::Eq, ty: self.ty.clone(), lhs: n, rhs: c }, Type::I1);
            let ty = self.ty.clone();
            return self.push(Op::Cast { op: CastOp::ZExt, from: Type::I1, arg: eq, to: ty.clone() }, ty);
        }
        let negative = sext(d, w) < 0;
        let magnitude = sext(d, w).unsigned_abs() & mask(w);
        let shift = self.c(u64::from(w - 1));
        let sign = self.bin(BinOp::AShr, n.clone(), shift);
        let flipped = self.bin(BinOp::Xor, n, sign.clone());
        let abs = self.bin(BinOp::Sub, flipped, sign.clone());
        let q = self.udiv(abs, magnitude);
        let result_sign = if negative {
            let all = self.c(u64::MAX);
            self.bin(BinOp::Xor, sign, all)
        } else {
            sign
        };
        let flipped = self.bin(BinOp::Xor, q, result_sign.clone());
        self.bin(BinOp::Sub, flipped, result_sign)
    }
}

/// The divisions this pass rewrites: i8/i16/i32/i64 by a constant other
/// than 0, 1 and -1 (simplify handles those and the unsigned powers of
/// two). i8 and i16 divide in 32 bits: the operand extended (zero or sign
/// as the division), the quotient or remainder truncated, which is exact
/// (no divisor but -1 overflows, and that one is left out).
fn rewritten(op: &Op) -> Option<(BinOp, u64)> {
    let Op::Binary { op, ty, rhs: Operand::Const(c), .. } = op else { return None };
    if !matches!(ty, Type::I8 | Type::I16 | Type::I32 | Type::I64) || !matches!(op, BinOp::UDiv | BinOp::URem | BinOp::SDiv | BinOp::SRem) {
        return None;
    }
    let w = ty.bits();
    let d = c.bits & mask(w);
    let signed = matches!(op, BinOp::SDiv | BinOp::SRem);
    (d > 1 && !(signed && d == mask(w))).then_some((*op, d))
}

pub fn run(func: &mut Function) -> bool {
    let mut names = Names::default();
    let mut changed = false;
    for b in 0..func.blocks.len() {
        if !func.blocks[b].insts.iter().any(|i| i.result.is_some() && rewritten(&i.op).is_some()) {
            continue;
        }
        let insts = std::mem::take(&mut func.blocks[b].insts);
        let mut out = Vec::with_capacity(insts.len() + 16);
        for inst in insts {
            let (Some((op, d)), Some(result), Op::Binary { ty, lhs, .. }) = (rewritten(&inst.op), inst.result, &inst.op) else {
                out.push(inst);
                continue;
            };
            let (ty, n) = (ty.clone(), lhs.clone());
            let signed = matches!(op, BinOp::SDiv | BinOp::SRem);
            if matches!(ty, Type::I8 | Type::I16) {
                let w = ty.bits();
                let mut e = Emitter { func, names: &mut names, out: &mut out, span: inst.span, ty: Type::I32 };
                let x = e.push(Op::Cast { op: if signed { CastOp::SExt } else { CastOp::ZExt }, from: ty.clone(), arg: n, to: Type::I32 }, Type::I32);
                // The divisor in 32 bits, sign-extended for a signed division.
                let d32 = if signed && d >> (w - 1) & 1 == 1 { (d | !mask(w)) & mask(32) } else { d };
                let q = if signed { e.sdiv(x.clone(), d32) } else { e.udiv(x.clone(), d32) };
                let wide = if matches!(op, BinOp::URem | BinOp::SRem) {
                    let dc = e.c(d32);
                    let product = e.bin(BinOp::Mul, q, dc);
                    e.bin(BinOp::Sub, x, product)
                } else {
                    q
                };
                out.push(Inst { result: Some(result), op: Op::Cast { op: CastOp::Trunc, from: Type::I32, arg: wide, to: ty }, span: inst.span });
                changed = true;
                continue;
            }
            let mut e = Emitter { func, names: &mut names, out: &mut out, span: inst.span, ty: ty.clone() };
            let q = if matches!(op, BinOp::UDiv | BinOp::URem) { e.udiv(n.clone(), d) } else { e.sdiv(n.clone(), d) };
            let last = if matches!(op, BinOp::URem | BinOp::SRem) {
                let dc = e.c(d);
                let product = e.bin(BinOp::Mul, q, dc);
                Op::Binary { op: BinOp::Sub, ty, lhs: n, rhs: product }
            } else {
                // The quotient's own instruction takes the original result.
                let produced = out.pop().expect("a quotient instruction");
                debug_assert_eq!(produced.result.map(Operand::Value), Some(q));
                produced.op
            };
            out.push(Inst { result: Some(result), op: last, span: inst.span });
            changed = true;
        }
        func.blocks[b].insts = out;
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_division_is_exact_at_the_edges() {
        let edges = |w: u32| {
            let m = mask(w);
            let mut v = vec![0, 1, 2, 3, m, m - 1, m >> 1, (m >> 1) + 1, 1000, 12345678];
            for k in 0..w {
                v.extend([(1u64 << k).wrapping_sub(1) & m, 1u64 << k, (1u64 << k) + 1]);
            }
            v
        };
        for w in [32, 64] {
            let m = mask(w);
            let mut divisors: Vec<u64> = (2..300).collect();
            divisors.extend([7, 641, 6_700_417, 0x8000_0001, 0xffff_fffe, 0xffff_ffff, m, m - 1, m >> 1, (m >> 1) + 3, 0x1234_5678_9abc & m]);
            for k in 1..w {
                divisors.extend([(1u64 << k) + 1, (1u64 << k) - 1, 3u64 << (k - 1) & m, 7u64 << (k.saturating_sub(2)) & m]);
            }
            let mut x = 0x9e37_79b9_7f4a_7c15u64;
            for d in divisors.into_iter().filter(|&d| d >= 2 && d <= m) {
                let magic = magic_unsigned(d, w);
                let mut ns = edges(w);
                ns.extend([d - 1, d, d.wrapping_add(1) & m, d.wrapping_mul(2) & m, (m / d) * d, (m / d) * d - 1]);
                for _ in 0..64 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    ns.push(x & m);
                }
                for n in ns {
                    let n = n & m;
                    assert_eq!(apply_unsigned(magic, n, w), n / d, "{n} / {d} in {w} bits with {magic:?}");
                }
            }
        }
    }
}
