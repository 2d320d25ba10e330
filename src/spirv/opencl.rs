//! The `OpenCL.std` extended instructions: one MIR operation where MIR has
//! it, a short expansion where OpenCL's definition allows one (docs/spirv.md
//! lists which and their precision), an error naming the instruction otherwise.

use rspirv::spirv::CLOp;

use super::function::Fx;
use crate::abi::Type;
use crate::mir::{AtomicOp, BinOp, CastOp, Const, FloatPred, IntPred, MemOrder, MemScope, Op as MOp, Operand, Sync, TernOp, UnOp};

fn float_bits(ty: &Type, v: f64) -> u64 {
    match ty.element() {
        Type::F16 => u64::from(crate::mir::float::f64_to_f16(v)),
        Type::F32 => u64::from((v as f32).to_bits()),
        _ => v.to_bits(),
    }
}

/// Translates `OpExtInst OpenCL.std n` with result type `rty`; `None` for
/// instructions without a result (stores).
pub fn translate(fx: &mut Fx, n: u32, rty: u32, args: &[u32]) -> Result<Option<Operand>, String> {
    let op = CLOp::from_u32(n).ok_or_else(|| format!("OpenCL.std instruction {n} does not exist"))?;
    if op == CLOp::printf {
        // Before the operands are read: the format and %s strings are
        // constants written into the record, not values.
        let formats = fx.printf;
        return super::printf::translate(fx, formats, args).map(Some);
    }
    let void = matches!(fx.facts.ty(rty)?, super::module::SpvType::Void);
    let ty = if void { Type::I32 } else { fx.facts.mir_type(rty)? };
    // vloadn, vload_halfn and vloada_halfn end with the literal n (the reader
    // sees every extended-instruction operand as an id): not an operand.
    // The `_r` stores end with a literal FPRoundingMode the same way.
    let mut rounding = None;
    let args = match op {
        CLOp::vloadn | CLOp::vload_halfn | CLOp::vloada_halfn if args.len() == 3 => &args[..2],
        CLOp::vstore_half_r | CLOp::vstore_halfn_r | CLOp::vstorea_halfn_r if args.len() == 4 => {
            rounding = Some(args[3]);
            &args[..3]
        }
        _ => args,
    };
    let mut a = Vec::new();
    for &id in args {
        a.push(fx.operand(id)?);
    }
    let arg = |k: usize| -> Result<Operand, String> { a.get(k).cloned().ok_or_else(|| format!("OpenCL.std {op:?} with {} operands", a.len())) };
    let un = |fx: &mut Fx, u: UnOp| -> Result<Operand, String> { Ok(fx.un(u, &ty, arg(0)?)) };
    let bin = |fx: &mut Fx, b: BinOp| -> Result<Operand, String> { Ok(fx.bin(b, &ty, arg(0)?, arg(1)?)) };
    let k = |fx: &mut Fx, v: f64| fx.splat(&ty, float_bits(&ty, v));
    let fcmp = |fx: &mut Fx, pred: FloatPred, x: Operand, y: Operand| fx.value(MOp::Fcmp { pred, ty: ty.clone(), lhs: x, rhs: y });
    let icmp = |fx: &mut Fx, pred: IntPred, x: Operand, y: Operand| fx.value(MOp::Icmp { pred, ty: ty.clone(), lhs: x, rhs: y });
    let f64_transcendental = || -> Result<(), String> {
        if ty.element() == &Type::F64 {
            Err(format!("OpenCL.std {op:?} on double is not supported (MIR's transcendentals are f16/f32)"))
        } else {
            Ok(())
        }
    };
    let r = match op {
        CLOp::fabs => un(fx, UnOp::FAbs)?,
        CLOp::sqrt | CLOp::native_sqrt | CLOp::half_sqrt => un(fx, UnOp::Sqrt)?,
        CLOp::floor => un(fx, UnOp::Floor)?,
        CLOp::ceil => un(fx, UnOp::Ceil)?,
        CLOp::trunc => un(fx, UnOp::Trunc)?,
        CLOp::rint => un(fx, UnOp::RoundEven)?,
        CLOp::round => {
            // Half-way cases away from zero: trunc(x) plus one unit toward x's
            // sign when the exact remainder is at least a half.
            let x = arg(0)?;
            let t = fx.un(UnOp::Trunc, &ty, x.clone());
            let d = fx.bin(BinOp::FSub, &ty, x.clone(), t.clone());
            let d = fx.un(UnOp::FAbs, &ty, d);
            let half = k(fx, 0.5);
            let up = fcmp(fx, FloatPred::Oge, d, half);
            let one = k(fx, 1.0);
            let unit = fx.bin(BinOp::CopySign, &ty, one, x);
            let stepped = fx.bin(BinOp::FAdd, &ty, t.clone(), unit);
            fx.select(&ty, up, stepped, t)
        }
        CLOp::fmin | CLOp::fmin_common => bin(fx, BinOp::FMin)?,
        CLOp::fmax | CLOp::fmax_common => bin(fx, BinOp::FMax)?,
        CLOp::copysign => bin(fx, BinOp::CopySign)?,
        CLOp::ldexp => {
            let e = arg(1)?;
            let et = fx.mir_type_of(args[1])?;
            let want = BinOp::Ldexp.rhs_type(&ty);
            let e = if et.lanes() != want.lanes() {
                // A scalar exponent for a vector.
                let elems = vec![e; ty.lanes() as usize];
                fx.value(MOp::Make { ty: want.clone(), elems })
            } else {
                e
            };
            fx.bin(BinOp::Ldexp, &ty, arg(0)?, e)
        }
        CLOp::fma | CLOp::mad => fx.value(MOp::Fma { ty: ty.clone(), a: arg(0)?, b: arg(1)?, c: arg(2)? }),
        CLOp::exp | CLOp::exp2 | CLOp::log | CLOp::log2 | CLOp::exp10 | CLOp::log10 if ty.element() == &Type::F64 => super::libm::double(fx, op, &ty, arg(0)?)?,
        CLOp::sin | CLOp::cos | CLOp::tan if ty.element() == &Type::F64 => {
            let (s, c) = super::libm::double_sin_cos(fx, &ty, arg(0)?);
            match op {
                CLOp::sin => s,
                CLOp::cos => c,
                _ => fx.bin(BinOp::FDiv, &ty, s, c),
            }
        }
        CLOp::sincos if ty.element() == &Type::F64 => {
            let (s, c) = super::libm::double_sin_cos(fx, &ty, arg(0)?);
            let align = fx.facts.layout(rty)?.1 as u32;
            fx.b.push(MOp::Store { ty: ty.clone(), value: c, ptr: arg(1)?, align, volatile: false }, None);
            s
        }
        CLOp::exp | CLOp::exp2 | CLOp::log | CLOp::log2 | CLOp::sin | CLOp::cos | CLOp::tan => {
            f64_transcendental()?;
            let u = match op {
                CLOp::exp => UnOp::Exp,
                CLOp::exp2 => UnOp::Exp2,
                CLOp::log => UnOp::Log,
                CLOp::log2 => UnOp::Log2,
                CLOp::sin => UnOp::Sin,
                CLOp::cos | CLOp::tan => UnOp::Cos,
                _ => unreachable!(),
            };
            if op == CLOp::tan {
                let (s, c) = (fx.un(UnOp::Sin, &ty, arg(0)?), fx.un(UnOp::Cos, &ty, arg(0)?));
                fx.bin(BinOp::FDiv, &ty, s, c)
            } else {
                un(fx, u)?
            }
        }
        CLOp::native_exp | CLOp::half_exp | CLOp::native_exp2 | CLOp::half_exp2 | CLOp::native_log | CLOp::half_log | CLOp::native_log2 | CLOp::half_log2 | CLOp::native_sin | CLOp::half_sin | CLOp::native_cos | CLOp::half_cos | CLOp::native_recip | CLOp::half_recip | CLOp::native_rsqrt | CLOp::half_rsqrt => {
            f64_transcendental()?;
            let u = match op {
                CLOp::native_exp | CLOp::half_exp => UnOp::ExpApprox,
                CLOp::native_exp2 | CLOp::half_exp2 => UnOp::Exp2Approx,
                CLOp::native_log | CLOp::half_log => UnOp::LogApprox,
                CLOp::native_log2 | CLOp::half_log2 => UnOp::Log2Approx,
                CLOp::native_sin | CLOp::half_sin => UnOp::SinApprox,
                CLOp::native_cos | CLOp::half_cos => UnOp::CosApprox,
                CLOp::native_recip | CLOp::half_recip => UnOp::RcpApprox,
                _ => UnOp::RsqrtApprox,
            };
            un(fx, u)?
        }
        CLOp::rsqrt => un(fx, UnOp::Rsqrt)?,
        CLOp::native_divide | CLOp::half_divide => bin(fx, BinOp::FDiv)?,
        CLOp::native_exp10 | CLOp::half_exp10 | CLOp::native_log10 | CLOp::half_log10 | CLOp::native_tan | CLOp::half_tan => {
            // From the one-instruction forms: 2^(x log2 10), log2(x) log10 2,
            // sin/cos.
            f64_transcendental()?;
            match op {
                CLOp::native_exp10 | CLOp::half_exp10 => {
                    let c = k(fx, std::f64::consts::LOG2_10);
                    let t = fx.bin(BinOp::FMul, &ty, arg(0)?, c);
                    fx.un(UnOp::Exp2Approx, &ty, t)
                }
                CLOp::native_log10 | CLOp::half_log10 => {
                    let l = fx.un(UnOp::Log2Approx, &ty, arg(0)?);
                    let c = k(fx, std::f64::consts::LOG10_2);
                    fx.bin(BinOp::FMul, &ty, l, c)
                }
                _ => {
                    let (s, c) = (fx.un(UnOp::SinApprox, &ty, arg(0)?), fx.un(UnOp::CosApprox, &ty, arg(0)?));
                    fx.bin(BinOp::FDiv, &ty, s, c)
                }
            }
        }
        CLOp::native_powr | CLOp::half_powr => {
            f64_transcendental()?;
            let l = fx.un(UnOp::Log2Approx, &ty, arg(0)?);
            let p = fx.bin(BinOp::FMul, &ty, arg(1)?, l);
            fx.un(UnOp::Exp2Approx, &ty, p)
        }
        CLOp::sincos => {
            // sin returned, cos stored through the pointer.
            f64_transcendental()?;
            let (s, c) = (fx.un(UnOp::Sin, &ty, arg(0)?), fx.un(UnOp::Cos, &ty, arg(0)?));
            let align = fx.facts.layout(rty)?.1 as u32;
            fx.b.push(MOp::Store { ty: ty.clone(), value: c, ptr: arg(1)?, align, volatile: false }, None);
            s
        }
        CLOp::fdim => {
            let (x, y) = (arg(0)?, arg(1)?);
            let d = fx.bin(BinOp::FSub, &ty, x.clone(), y.clone());
            let gt = fcmp(fx, FloatPred::Ogt, x.clone(), y.clone());
            let zero = k(fx, 0.0);
            let r = fx.select(&ty, gt, d.clone(), zero);
            let nan = fcmp(fx, FloatPred::Uno, x, y);
            fx.select(&ty, nan, d, r)
        }
        CLOp::fclamp => {
            let m = fx.bin(BinOp::FMax, &ty, arg(0)?, arg(1)?);
            fx.bin(BinOp::FMin, &ty, m, arg(2)?)
        }
        CLOp::mix => {
            let d = fx.bin(BinOp::FSub, &ty, arg(1)?, arg(0)?);
            let p = fx.bin(BinOp::FMul, &ty, d, arg(2)?);
            fx.bin(BinOp::FAdd, &ty, arg(0)?, p)
        }
        CLOp::step => {
            let lt = fcmp(fx, FloatPred::Olt, arg(1)?, arg(0)?);
            let (zero, one) = (k(fx, 0.0), k(fx, 1.0));
            fx.select(&ty, lt, zero, one)
        }
        CLOp::smoothstep => {
            let (e0, e1, x) = (arg(0)?, arg(1)?, arg(2)?);
            let num = fx.bin(BinOp::FSub, &ty, x, e0.clone());
            let den = fx.bin(BinOp::FSub, &ty, e1, e0);
            let t = fx.bin(BinOp::FDiv, &ty, num, den);
            let (zero, one) = (k(fx, 0.0), k(fx, 1.0));
            let t = fx.bin(BinOp::FMax, &ty, t, zero);
            let t = fx.bin(BinOp::FMin, &ty, t, one);
            let (two, three) = (k(fx, 2.0), k(fx, 3.0));
            let tt = fx.bin(BinOp::FMul, &ty, two, t.clone());
            let s = fx.bin(BinOp::FSub, &ty, three, tt);
            let t2 = fx.bin(BinOp::FMul, &ty, t.clone(), t);
            fx.bin(BinOp::FMul, &ty, t2, s)
        }
        CLOp::degrees | CLOp::radians => {
            let f = if op == CLOp::degrees { 180.0 / std::f64::consts::PI } else { std::f64::consts::PI / 180.0 };
            let c = k(fx, f);
            fx.bin(BinOp::FMul, &ty, arg(0)?, c)
        }
        CLOp::sign => {
            let x = arg(0)?;
            let (zero, one) = (k(fx, 0.0), k(fx, 1.0));
            let unit = fx.bin(BinOp::CopySign, &ty, one, x.clone());
            let nonzero = fcmp(fx, FloatPred::One, x.clone(), zero.clone());
            let r = fx.select(&ty, nonzero, unit, x.clone());
            let nan = fcmp(fx, FloatPred::Uno, x.clone(), x);
            fx.select(&ty, nan, zero, r)
        }
        CLOp::length | CLOp::fast_length | CLOp::distance | CLOp::fast_distance | CLOp::normalize | CLOp::fast_normalize => geometric(fx, op, args, &a)?,
        CLOp::cross => {
            let (x, y) = (arg(0)?, arg(1)?);
            let elem = ty.element().clone();
            let e = |fx: &mut Fx, v: &Operand, i: u32| fx.value(MOp::Extract { agg: v.clone(), index: i });
            let mut out = Vec::new();
            for (i, j) in [(1, 2), (2, 0), (0, 1)] {
                let (xi, yj, xj, yi) = (e(fx, &x, i), e(fx, &y, j), e(fx, &x, j), e(fx, &y, i));
                let p = fx.bin(BinOp::FMul, &elem, xi, yj);
                let q = fx.bin(BinOp::FMul, &elem, xj, yi);
                out.push(fx.bin(BinOp::FSub, &elem, p, q));
            }
            if ty.lanes() == 4 {
                out.push(Operand::Const(Const { ty: elem, bits: 0 }));
            }
            fx.value(MOp::Make { ty: ty.clone(), elems: out })
        }
        // Integers.
        CLOp::s_abs => un(fx, UnOp::Abs)?,
        CLOp::u_abs => arg(0)?,
        CLOp::s_abs_diff | CLOp::u_abs_diff => {
            let (x, y) = (arg(0)?, arg(1)?);
            let gt = icmp(fx, if op == CLOp::s_abs_diff { IntPred::Sgt } else { IntPred::Ugt }, x.clone(), y.clone());
            let d1 = fx.bin(BinOp::Sub, &ty, x.clone(), y.clone());
            let d2 = fx.bin(BinOp::Sub, &ty, y, x);
            fx.select(&ty, gt, d1, d2)
        }
        CLOp::s_add_sat => bin(fx, BinOp::AddSatS)?,
        CLOp::u_add_sat => bin(fx, BinOp::AddSatU)?,
        CLOp::s_sub_sat => bin(fx, BinOp::SubSatS)?,
        CLOp::u_sub_sat => bin(fx, BinOp::SubSatU)?,
        CLOp::s_hadd | CLOp::u_hadd | CLOp::s_rhadd | CLOp::u_rhadd => {
            // (x >> 1) + (y >> 1) + the carry of the low bits, without overflow.
            let (x, y) = (arg(0)?, arg(1)?);
            let shift = if matches!(op, CLOp::s_hadd | CLOp::s_rhadd) { BinOp::AShr } else { BinOp::LShr };
            let one = fx.splat(&ty, 1);
            let hx = fx.bin(shift, &ty, x.clone(), one.clone());
            let hy = fx.bin(shift, &ty, y.clone(), one.clone());
            let low = fx.bin(if matches!(op, CLOp::s_hadd | CLOp::u_hadd) { BinOp::And } else { BinOp::Or }, &ty, x, y);
            let carry = fx.bin(BinOp::And, &ty, low, one);
            let s = fx.bin(BinOp::Add, &ty, hx, hy);
            fx.bin(BinOp::Add, &ty, s, carry)
        }
        CLOp::s_max => bin(fx, BinOp::SMax)?,
        CLOp::u_max => bin(fx, BinOp::UMax)?,
        CLOp::s_min => bin(fx, BinOp::SMin)?,
        CLOp::u_min => bin(fx, BinOp::UMin)?,
        CLOp::s_clamp | CLOp::u_clamp => {
            let (max, min) = if op == CLOp::s_clamp { (BinOp::SMax, BinOp::SMin) } else { (BinOp::UMax, BinOp::UMin) };
            let m = fx.bin(max, &ty, arg(0)?, arg(1)?);
            fx.bin(min, &ty, m, arg(2)?)
        }
        CLOp::clz => un(fx, UnOp::Clz)?,
        CLOp::ctz => un(fx, UnOp::Ctz)?,
        CLOp::popcount => un(fx, UnOp::Popcount)?,
        CLOp::rotate => bin(fx, BinOp::RotL)?,
        CLOp::s_mul_hi => bin(fx, BinOp::MulHiS)?,
        CLOp::u_mul_hi => bin(fx, BinOp::MulHiU)?,
        CLOp::s_mad_hi | CLOp::u_mad_hi => {
            let h = fx.bin(if op == CLOp::s_mad_hi { BinOp::MulHiS } else { BinOp::MulHiU }, &ty, arg(0)?, arg(1)?);
            fx.bin(BinOp::Add, &ty, h, arg(2)?)
        }
        CLOp::s_mul24 => bin(fx, BinOp::Mul24S)?,
        CLOp::u_mul24 => bin(fx, BinOp::Mul24U)?,
        CLOp::s_mad24 | CLOp::u_mad24 => {
            let t = if op == CLOp::s_mad24 { TernOp::Mad24S } else { TernOp::Mad24U };
            fx.value(MOp::Ternary { op: t, ty: ty.clone(), a: arg(0)?, b: arg(1)?, c: arg(2)? })
        }
        CLOp::s_upsample | CLOp::u_upsample => {
            let (hi, lo) = (arg(0)?, arg(1)?);
            let from = fx.mir_type_of(args[0])?;
            let w = from.element().bits();
            let h = fx.resize(&from, hi, &ty, op == CLOp::s_upsample);
            let l = fx.resize(&from, lo, &ty, false);
            let sh = fx.splat(&ty, u64::from(w));
            let h = fx.bin(BinOp::Shl, &ty, h, sh);
            fx.bin(BinOp::Or, &ty, h, l)
        }
        CLOp::bitselect => {
            // (a & ~c) | (b & c), on the bits of floats.
            let (x, y, c) = (arg(0)?, arg(1)?, arg(2)?);
            let it = int_like(&ty);
            let bits = |fx: &mut Fx, v: Operand| fx.cast(CastOp::Bitcast, &ty, v, &it);
            let (x, y, c) = if ty.element().is_float() { (bits(fx, x), bits(fx, y), bits(fx, c)) } else { (x, y, c) };
            let nc = fx.un(UnOp::Not, &it, c.clone());
            let l = fx.bin(BinOp::And, &it, x, nc);
            let r = fx.bin(BinOp::And, &it, y, c);
            let v = fx.bin(BinOp::Or, &it, l, r);
            fx.cast(CastOp::Bitcast, &it, v, &ty)
        }
        CLOp::select => {
            // c's most significant bit (vectors) or c != 0 (scalars) picks b.
            let (x, y, c) = (arg(0)?, arg(1)?, arg(2)?);
            let ct = fx.mir_type_of(args[2])?;
            let zero = fx.splat(&ct, 0);
            let pred = if ct.lanes() > 1 { IntPred::Slt } else { IntPred::Ne };
            let cond = fx.value(MOp::Icmp { pred, ty: ct, lhs: c, rhs: zero });
            fx.select(&ty, cond, y, x)
        }
        CLOp::vloadn | CLOp::vload_half | CLOp::vload_halfn | CLOp::vloada_halfn => {
            // (offset, pointer): element `offset` of an array of such values.
            let (offset, ptr) = (arg(0)?, arg(1)?);
            let half = op != CLOp::vloadn;
            let stored = if half { half_like(&ty) } else { ty.clone() };
            let elem = stored.element().size() as u64;
            let n = if op == CLOp::vloada_halfn && ty.lanes() == 3 { 4 } else { u64::from(ty.lanes()) };
            let p = element_ptr(fx, ptr, args[1], offset, args[0], elem * n)?;
            let v = fx.value(MOp::Load { ty: stored.clone(), ptr: p, align: if op == CLOp::vloada_halfn { (elem * n) as u32 } else { elem as u32 }, volatile: false });
            if half {
                fx.cast(CastOp::FpExt, &stored, v, &ty)
            } else {
                v
            }
        }
        CLOp::vstoren | CLOp::vstore_half | CLOp::vstore_halfn | CLOp::vstorea_halfn | CLOp::vstore_half_r | CLOp::vstore_halfn_r | CLOp::vstorea_halfn_r => {
            // (data, offset, pointer[, rounding mode]); the half forms
            // round to nearest even unless an `_r` form names a mode.
            let (data, offset, ptr) = (arg(0)?, arg(1)?, arg(2)?);
            let dt = fx.mir_type_of(args[0])?;
            let half = op != CLOp::vstoren;
            let aligned = matches!(op, CLOp::vstorea_halfn | CLOp::vstorea_halfn_r);
            let stored = if half { half_like(&dt) } else { dt.clone() };
            let elem = stored.element().size() as u64;
            let n = if aligned && dt.lanes() == 3 { 4 } else { u64::from(dt.lanes()) };
            let p = element_ptr(fx, ptr, args[2], offset, args[1], elem * n)?;
            let v = match (half, rounding) {
                (false, _) => data,
                (true, None) => fx.cast(CastOp::FpTrunc, &dt, data, &stored),
                (true, Some(mode)) => {
                    let mode = Rounding::from_spirv(mode).ok_or_else(|| format!("OpenCL.std {op:?} with rounding mode {mode}, which SPIR-V does not define"))?;
                    to_half_rounded(fx, &dt, data, mode)
                }
            };
            fx.b.push(MOp::Store { ty: stored, value: v, ptr: p, align: if aligned { (elem * n) as u32 } else { elem as u32 }, volatile: false }, None);
            return Ok(None);
        }
        CLOp::prefetch => return Ok(None),
        CLOp::s_mad_sat | CLOp::u_mad_sat => mad_sat(fx, &ty, op == CLOp::s_mad_sat, arg(0)?, arg(1)?, arg(2)?),
        CLOp::shuffle | CLOp::shuffle2 => {
            // (x, mask) or (x, y, mask): lane i of the result is lane
            // mask[i] of x (or of x then y), mask[i] taken modulo the lanes.
            let sources = if op == CLOp::shuffle { 1 } else { 2 };
            let xt = fx.mir_type_of(args[0])?;
            let mt = fx.mir_type_of(*args.get(sources).ok_or_else(|| format!("OpenCL.std {op:?} with {} operands", args.len()))?)?;
            let lanes = xt.lanes();
            if !matches!(lanes, 2 | 4 | 8 | 16) || !mt.element().is_int() || mt.lanes() != ty.lanes() || ty.lanes() < 2 {
                return Err(format!("OpenCL.std {op:?} from {xt} by {mt} to {ty}: not a shuffle OpenCL C defines (2, 4, 8 or 16 lanes)"));
            }
            let mut from = Vec::new();
            for k in 0..sources {
                let v = arg(k)?;
                for j in 0..lanes {
                    from.push(fx.value(MOp::Extract { agg: v.clone(), index: j }));
                }
            }
            shuffle(fx, &ty, &from, arg(sources)?, mt.element())
        }
        other if super::libm::handles(other) => {
            let mut types = Vec::new();
            for &id in args {
                types.push(fx.mir_type_of(id)?);
            }
            super::libm::translate(fx, other, &ty, &a, &types)?
        }
        other => return Err(format!("OpenCL.std {other:?} is not supported")),
    };
    Ok(Some(r))
}

/// OpenCL's `mad_sat`: `a * b + c` clamped to the type's range. Below 64
/// bits the exact result fits in 64 bits (|a·b| < 2^62 signed, < 2^64 − 2^33
/// unsigned, plus c); at 64 bits it is formed in 128 (the product's high half
/// from `mulhi`, c sign-extended, the carry of the low add) and is in range
/// when the high half is the low half's sign (zero, unsigned).
fn mad_sat(fx: &mut Fx, ty: &Type, signed: bool, a: Operand, b: Operand, c: Operand) -> Operand {
    let w = ty.element().bits();
    let lane = |e: Type| match ty {
        Type::Vector(_, n) => Type::Vector(Box::new(e), *n),
        _ => e,
    };
    if w < 64 {
        let wide = lane(Type::I64);
        let (a, b, c) = (fx.resize(ty, a, &wide, signed), fx.resize(ty, b, &wide, signed), fx.resize(ty, c, &wide, signed));
        let p = fx.bin(BinOp::Mul, &wide, a, b);
        let sum = fx.bin(BinOp::Add, &wide, p, c);
        let clamped = if signed {
            let lo = fx.splat(&wide, (-(1i64 << (w - 1))) as u64);
            let hi = fx.splat(&wide, (1u64 << (w - 1)) - 1);
            let m = fx.bin(BinOp::SMax, &wide, sum, lo);
            fx.bin(BinOp::SMin, &wide, m, hi)
        } else {
            let hi = fx.splat(&wide, (1u64 << w) - 1);
            fx.bin(BinOp::UMin, &wide, sum, hi)
        };
        return fx.resize(&wide, clamped, ty, signed);
    }
    let low = fx.bin(BinOp::Mul, ty, a.clone(), b.clone());
    let high = fx.bin(if signed { BinOp::MulHiS } else { BinOp::MulHiU }, ty, a.clone(), b.clone());
    let sum = fx.bin(BinOp::Add, ty, low.clone(), c.clone());
    let carried = fx.value(MOp::Icmp { pred: IntPred::Ult, ty: ty.clone(), lhs: sum.clone(), rhs: low });
    let (one, zero) = (fx.splat(ty, 1), fx.splat(ty, 0));
    let carry = fx.select(ty, carried, one, zero.clone());
    let mut top = fx.bin(BinOp::Add, ty, high, carry);
    let sign_of_sum = if signed {
        let s63 = fx.splat(ty, 63);
        let c_high = fx.bin(BinOp::AShr, ty, c, s63.clone());
        top = fx.bin(BinOp::Add, ty, top, c_high);
        fx.bin(BinOp::AShr, ty, sum.clone(), s63)
    } else {
        zero.clone()
    };
    let fits = fx.value(MOp::Icmp { pred: IntPred::Eq, ty: ty.clone(), lhs: top.clone(), rhs: sign_of_sum });
    let saturated = if signed {
        let negative = fx.value(MOp::Icmp { pred: IntPred::Slt, ty: ty.clone(), lhs: top, rhs: zero });
        let (min, max) = (fx.splat(ty, 1 << 63), fx.splat(ty, i64::MAX as u64));
        fx.select(ty, negative, min, max)
    } else {
        fx.splat(ty, u64::MAX)
    };
    fx.select(ty, fits, sum, saturated)
}

/// Lanes of `from` picked by the lanes of `mask` (of integer type `me`, taken
/// modulo `from.len()`, a power of two) into a vector of type `ty`: a chain
/// of selects per lane, as the mask need not be constant.
fn shuffle(fx: &mut Fx, ty: &Type, from: &[Operand], mask: Operand, me: &Type) -> Operand {
    let elem = ty.element().clone();
    let modulo = Operand::Const(Const { ty: me.clone(), bits: from.len() as u64 - 1 });
    let mut lanes = Vec::with_capacity(ty.lanes() as usize);
    for i in 0..ty.lanes() {
        let m = fx.value(MOp::Extract { agg: mask.clone(), index: i });
        let m = fx.bin(BinOp::And, me, m, modulo.clone());
        let mut v = from[0].clone();
        for (j, x) in from.iter().enumerate().skip(1) {
            let is = fx.value(MOp::Icmp { pred: IntPred::Eq, ty: me.clone(), lhs: m.clone(), rhs: Operand::Const(Const { ty: me.clone(), bits: j as u64 }) });
            v = fx.select(&elem, is, x.clone(), v);
        }
        lanes.push(v);
    }
    fx.value(MOp::Make { ty: ty.clone(), elems: lanes })
}

pub(super) fn int_like(ty: &Type) -> Type {
    let e = match ty.element().bits() {
        16 => Type::I16,
        32 => Type::I32,
        64 => Type::I64,
        8 => Type::I8,
        _ => Type::I1,
    };
    match ty {
        Type::Vector(_, n) => Type::Vector(Box::new(e), *n),
        _ => e,
    }
}

/// SPIR-V's FPRoundingMode (RTE, RTZ, RTP, RTN = 0..3).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Rounding {
    NearestEven,
    TowardZero,
    Up,
    Down,
}

impl Rounding {
    fn from_spirv(mode: u32) -> Option<Rounding> {
        [Rounding::NearestEven, Rounding::TowardZero, Rounding::Up, Rounding::Down].get(mode as usize).copied()
    }
}

/// `x` (f32 or f64 lanes) rounded to half in `mode`. The conversion to
/// nearest even is exact or off by one step from the directed result: where
/// it went the wrong way past x (compared exactly, in x's type, which holds
/// every half), the half's bits step once toward the right side. Halves are
/// sign-magnitude, so a step toward zero is `bits - 1` and away `bits + 1`;
/// an infinity from a finite overflow steps to the largest finite half
/// (0x7bff) and a zero from a tiny value to the smallest subnormal, as the
/// directed modes require. NaNs compare false and stay as they are.
fn to_half_rounded(fx: &mut Fx, ty: &Type, x: Operand, mode: Rounding) -> Operand {
    let ht = half_like(ty);
    let nearest = fx.cast(CastOp::FpTrunc, ty, x.clone(), &ht);
    if mode == Rounding::NearestEven {
        return nearest;
    }
    let back = fx.cast(CastOp::FpExt, &ht, nearest.clone(), ty);
    let it = int_like(&ht);
    let bits = fx.cast(CastOp::Bitcast, &ht, nearest.clone(), &it);
    let one = fx.splat(&it, 1);
    let toward_zero = fx.bin(BinOp::Sub, &it, bits.clone(), one.clone());
    let away = fx.bin(BinOp::Add, &it, bits.clone(), one);
    let fcmp = |fx: &mut Fx, pred: FloatPred, a: Operand, b: Operand| fx.value(MOp::Fcmp { pred, ty: ty.clone(), lhs: a, rhs: b });
    let stepped = match mode {
        Rounding::TowardZero => {
            let (ab, ax) = (fx.un(UnOp::FAbs, ty, back.clone()), fx.un(UnOp::FAbs, ty, x.clone()));
            let over = fcmp(fx, FloatPred::Ogt, ab, ax);
            fx.select(&it, over, toward_zero, bits)
        }
        Rounding::Up | Rounding::Down => {
            // Wrong side: below x rounding up, above it rounding down. The
            // step is away from zero on the side the mode points to.
            let wrong = fcmp(fx, if mode == Rounding::Up { FloatPred::Olt } else { FloatPred::Ogt }, back, x);
            let zero = fx.splat(&it, 0);
            let negative = fx.value(MOp::Icmp { pred: IntPred::Slt, ty: it.clone(), lhs: bits.clone(), rhs: zero });
            let step = if mode == Rounding::Up { fx.select(&it, negative, toward_zero, away) } else { fx.select(&it, negative, away, toward_zero) };
            fx.select(&it, wrong, step, bits)
        }
        Rounding::NearestEven => unreachable!(),
    };
    fx.cast(CastOp::Bitcast, &it, stepped, &ht)
}

fn half_like(ty: &Type) -> Type {
    match ty {
        Type::Vector(_, n) => Type::Vector(Box::new(Type::F16), *n),
        _ => Type::F16,
    }
}

/// `ptr + offset * bytes` with the pointer's index width.
fn element_ptr(fx: &mut Fx, ptr: Operand, ptr_id: u32, offset: Operand, offset_id: u32, bytes: u64) -> Result<Operand, String> {
    let pt = fx.mir_type_of(ptr_id)?;
    let it = if pt.size() == 8 { Type::I64 } else { Type::I32 };
    let ot = fx.mir_type_of(offset_id)?;
    let o = fx.resize(&ot, offset, &it, false);
    let o = fx.bin(BinOp::Mul, &it, o, Operand::Const(Const::int(it.clone(), bytes as i64)));
    Ok(fx.value(MOp::PtrAdd { ptr, offset: o }))
}

/// dot, length, distance, normalize (and their fast forms) on f32 vectors
/// and scalars: products summed in lane order, a correctly rounded square
/// root; within OpenCL's bounds for these, not overflow-safe (docs/spirv.md).
fn geometric(fx: &mut Fx, op: CLOp, args: &[u32], a: &[Operand]) -> Result<Operand, String> {
    let wanted = if matches!(op, CLOp::distance | CLOp::fast_distance) { 2 } else { 1 };
    if a.len() != wanted {
        return Err(format!("OpenCL.std {op:?} with {} operands", a.len()));
    }
    let vt = fx.mir_type_of(args[0])?;
    let et = vt.element().clone();
    let lanes = vt.lanes();
    let dot = |fx: &mut Fx, x: &Operand, y: &Operand| -> Operand { fx.dot(&vt, x, y) };
    Ok(match op {
        CLOp::length | CLOp::fast_length => {
            let d = dot(fx, &a[0], &a[0]);
            fx.un(UnOp::Sqrt, &et, d)
        }
        CLOp::distance | CLOp::fast_distance => {
            let d = fx.bin(BinOp::FSub, &vt, a[0].clone(), a[1].clone());
            let s = dot(fx, &d, &d);
            fx.un(UnOp::Sqrt, &et, s)
        }
        _ => {
            let s = dot(fx, &a[0], &a[0]);
            let l = fx.un(UnOp::Sqrt, &et, s);
            let l = if lanes == 1 {
                l
            } else {
                let elems = vec![l; lanes as usize];
                fx.value(MOp::Make { ty: vt.clone(), elems })
            };
            fx.bin(BinOp::FDiv, &vt, a[0].clone(), l)
        }
    })
}

/// The name and the parameter codes of an Itanium-mangled function name
/// (`_Z10atomic_maxPU3AS1Vii` -> `atomic_max`, `PU3AS1Vii`).
fn demangle(name: &str) -> Option<(&str, &str)> {
    let rest = name.strip_prefix("_Z")?;
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    let len: usize = rest[..digits].parse().ok()?;
    let body = &rest[digits..];
    // By bytes, but a mutated name may cut a character: no name then.
    Some((body.get(..len)?, body.get(len..)?))
}

/// A call to a function the module declares but does not define: an
/// OpenCL C builtin the producer left as a call (clang-22 leaves the
/// OpenCL 1.x `atomic_min`/`max`/`inc`/`dec` so). Those atomics are relaxed
/// and device-wide (OpenCL 1.2 section 6.12.11).
pub fn imported(fx: &mut Fx, name: &str, rty: u32, args: &[u32]) -> Result<Option<Operand>, String> {
    let unsupported = || format!("a call to '{name}', a function the module declares but does not define");
    // LLVM's memory intrinsics, which the SPIR-V backend leaves as calls:
    // (dst, src, len, volatile) and (dst, value, len, volatile), with a
    // constant length.
    if let Some(rest) = name.strip_prefix("spirv.llvm_") {
        let copy = rest.starts_with("memcpy") || rest.starts_with("memmove");
        if copy || rest.starts_with("memset") {
            let [dst, src, len, ..] = args else { return Err(unsupported()) };
            let n = fx.const_int(*len).ok_or_else(|| format!("'{name}' with a length that is not a constant"))?;
            let dspace = super::module::address_space(fx.pointee(*dst)?.0)?;
            let d = fx.operand(*dst)?;
            if copy {
                let sspace = super::module::address_space(fx.pointee(*src)?.0)?;
                let s = fx.operand(*src)?;
                fx.copy_bytes(d, dspace, Some((s, sspace)), n, 1)?;
            } else {
                if fx.const_int(*src) != Some(0) {
                    return Err(format!("'{name}' with a fill value other than a constant 0"));
                }
                fx.copy_bytes(d, dspace, None, n, 1)?;
            }
            return Ok(None);
        }
    }
    let (base, params) = demangle(name).ok_or_else(unsupported)?;
    // OpenCL 1.x's fences, left as calls by clang-22 (OpenCL 2.0 defines
    // them as atomic_work_item_fence(flags, acq_rel / acquire / release,
    // memory_scope_work_group), which is also how ROCm's library implements
    // them): a work-group fence, none for empty flags.
    if let ("mem_fence" | "read_mem_fence" | "write_mem_fence", [flags]) = (base, args) {
        let flags = fx.const_int(*flags).ok_or_else(|| format!("'{base}' with flags that are not a constant"))?;
        if flags != 0 {
            let order = match base {
                "read_mem_fence" => MemOrder::Acquire,
                "write_mem_fence" => MemOrder::Release,
                _ => MemOrder::AcqRel,
            };
            fx.b.push(MOp::Fence { order, scope: MemScope::Workgroup }, None);
        }
        return Ok(None);
    }
    if let [x] = args {
        if base.starts_with("convert_") {
            let (from, to) = (fx.mir_type_of(*x)?, fx.facts.mir_type(rty)?);
            let v = fx.operand(*x)?;
            if let Some(r) = super::convert::builtin(fx, base, params, &from, v, &to) {
                return r.map(Some);
            }
        }
    }
    if let Some(key) = base.strip_prefix("atomic_fetch_") {
        return c11_atomic(fx, name, key, params, rty, args).map(Some);
    }
    let base = base.strip_prefix("atom_").map(|b| format!("atomic_{b}")).unwrap_or_else(|| base.to_string());
    // The last parameter code tells signedness: i/l signed, j/m unsigned.
    let signed = matches!(params.chars().last(), Some('i' | 'l' | 'a' | 's'));
    let op = match base.as_str() {
        "atomic_add" => AtomicOp::Add,
        "atomic_sub" => AtomicOp::Sub,
        "atomic_xchg" => AtomicOp::Xchg,
        "atomic_and" => AtomicOp::And,
        "atomic_or" => AtomicOp::Or,
        "atomic_xor" => AtomicOp::Xor,
        "atomic_min" => if signed { AtomicOp::SMin } else { AtomicOp::UMin },
        "atomic_max" => if signed { AtomicOp::SMax } else { AtomicOp::UMax },
        "atomic_inc" | "atomic_dec" => {
            let ty = fx.facts.mir_type(rty)?;
            let p = fx.operand(*args.first().ok_or_else(unsupported)?)?;
            let op = if base == "atomic_inc" { AtomicOp::Add } else { AtomicOp::Sub };
            let one = Operand::Const(Const::int(ty.clone(), 1));
            return Ok(Some(fx.value(MOp::AtomicRmw { op, ty, ptr: p, value: one, sync: Sync::default() })));
        }
        _ => return Err(unsupported()),
    };
    let [ptr, value] = args else { return Err(unsupported()) };
    let ty = fx.facts.mir_type(rty)?;
    let (p, v) = (fx.operand(*ptr)?, fx.operand(*value)?);
    Ok(Some(fx.value(MOp::AtomicRmw { op, ty, ptr: p, value: v, sync: Sync::default() })))
}

/// OpenCL 2.0's `atomic_fetch_KEY(obj, operand)` and
/// `atomic_fetch_KEY_explicit(obj, operand, order[, scope])`, which
/// clang-22's SPIR-V backend leaves as calls for `min` and `max`: the object
/// is a generic pointer (`PU3AS4VU7_Atomici`: `i`/`l` signed, `j`/`m`
/// unsigned); the order and scope are constants of OpenCL's enums (clang's
/// values: relaxed 0, acquire 2, release 3, acq_rel 4, seq_cst 5;
/// work_item 0, work_group 1, device 2, all_svm_devices 3, sub_group 4),
/// seq_cst and device without them (OpenCL 2.0 section 6.13.11.7).
fn c11_atomic(fx: &mut Fx, name: &str, key: &str, params: &str, rty: u32, args: &[u32]) -> Result<Operand, String> {
    let key = key.strip_suffix("_explicit").unwrap_or(key);
    let elem = params.split_once("_Atomic").and_then(|(_, rest)| rest.chars().next());
    let signed = matches!(elem, Some('i' | 'l'));
    let op = match key {
        "add" => AtomicOp::Add,
        "sub" => AtomicOp::Sub,
        "or" => AtomicOp::Or,
        "xor" => AtomicOp::Xor,
        "and" => AtomicOp::And,
        "min" if signed => AtomicOp::SMin,
        "min" => AtomicOp::UMin,
        "max" if signed => AtomicOp::SMax,
        "max" => AtomicOp::UMax,
        _ => return Err(format!("a call to '{name}', a function the module declares but does not define")),
    };
    let (ptr, value, rest) = match args {
        [ptr, value, rest @ ..] if rest.len() <= 2 => (*ptr, *value, rest),
        _ => return Err(format!("'{name}' with {} arguments", args.len())),
    };
    let constant = |fx: &Fx, id: u32, what: &str| fx.const_int(id).ok_or_else(|| format!("'{name}' with a memory {what} that is not a constant"));
    let order = match rest.first() {
        None => MemOrder::SeqCst,
        Some(&o) => match constant(fx, o, "order")? {
            0 => MemOrder::Relaxed,
            1 | 2 => MemOrder::Acquire,
            3 => MemOrder::Release,
            4 => MemOrder::AcqRel,
            5 => MemOrder::SeqCst,
            other => return Err(format!("'{name}' with memory order {other}")),
        },
    };
    let scope = match rest.get(1) {
        None => MemScope::Agent,
        Some(&sc) => match constant(fx, sc, "scope")? {
            0 | 4 => MemScope::Wavefront,
            1 => MemScope::Workgroup,
            2 => MemScope::Agent,
            3 => MemScope::System,
            other => return Err(format!("'{name}' with memory scope {other}")),
        },
    };
    let ty = fx.facts.mir_type(rty)?;
    let p = fx.atomic_pointer(ptr)?;
    let v = fx.operand(value)?;
    Ok(fx.value(MOp::AtomicRmw { op, ty, ptr: p, value: v, sync: Sync { order, scope } }))
}

#[cfg(test)]
mod tests {
    use super::demangle;

    #[test]
    fn demangle_reads_names_and_refuses_cut_characters() {
        assert_eq!(demangle("_Z10atomic_maxPU3AS1Vii"), Some(("atomic_max", "PU3AS1Vii")));
        // The length 10 ends inside 'ݞ' (a fuzzed module's name): no name, no panic.
        assert_eq!(demangle("_Z10atomic_mKݞ*3AS1Vii"), None);
        assert_eq!(demangle("_Z99short"), None);
    }
}
