//! Builtin input variables (`OpVariable Input` decorated `BuiltIn`), loaded
//! as a whole and usually extracted right away: each element is computed from
//! MIR's work-item builtins only when it is extracted.

use rspirv::spirv::{BuiltIn, Op};

use super::function::{bool_like, Fx};
use crate::abi::Type;
use crate::mir::{BinOp, Builtin, CastOp, Const, FloatPred, IntPred, Op as MOp, Operand, UnOp, WaveOp};

fn get(fx: &mut Fx, kind: Builtin, dim: u8) -> Operand {
    Operand::Value(fx.b.builtin(kind, dim))
}

fn i32c(v: i64) -> Operand {
    Operand::Const(Const::int(Type::I32, v))
}

/// Element `k` (x, y, z) of builtin `b` as i32.
fn dim(fx: &mut Fx, b: BuiltIn, k: u8) -> Result<Operand, String> {
    let i32t = Type::I32;
    Ok(match b {
        BuiltIn::LocalInvocationId => get(fx, Builtin::WorkitemId, k),
        BuiltIn::WorkgroupId => get(fx, Builtin::WorkgroupId, k),
        BuiltIn::WorkgroupSize | BuiltIn::EnqueuedWorkgroupSize => get(fx, Builtin::WorkgroupSize, k),
        BuiltIn::GlobalSize => get(fx, Builtin::GridSize, k),
        // The OpenCL environment's definition: the global offset included
        // (uniform, added to the uniform part first).
        BuiltIn::GlobalInvocationId => {
            let (g, s, o) = (get(fx, Builtin::WorkgroupId, k), get(fx, Builtin::WorkgroupSize, k), get(fx, Builtin::GlobalOffset, k));
            let base = fx.bin(BinOp::Mul, &i32t, g, s);
            let base = fx.bin(BinOp::Add, &i32t, base, o);
            let l = get(fx, Builtin::WorkitemId, k);
            fx.bin(BinOp::Add, &i32t, base, l)
        }
        BuiltIn::NumWorkgroups => {
            let (n, s) = (get(fx, Builtin::GridSize, k), get(fx, Builtin::WorkgroupSize, k));
            let up = fx.bin(BinOp::Add, &i32t, n, s.clone());
            let up = fx.bin(BinOp::Sub, &i32t, up, i32c(1));
            fx.bin(BinOp::UDiv, &i32t, up, s)
        }
        BuiltIn::GlobalOffset => get(fx, Builtin::GlobalOffset, k),
        other => return Err(format!("the builtin {other:?} as a vector")),
    })
}

/// `x + X * (y + Y * z)` over the three dimensions of `of` with sizes `size`;
/// the global id without its offset (OpenCL's `get_global_linear_id`).
fn linear(fx: &mut Fx, of: BuiltIn, size: Builtin) -> Result<Operand, String> {
    let i32t = Type::I32;
    let id = |fx: &mut Fx, k: u8| -> Result<Operand, String> {
        if of != BuiltIn::GlobalInvocationId {
            return dim(fx, of, k);
        }
        let (g, s, l) = (get(fx, Builtin::WorkgroupId, k), get(fx, Builtin::WorkgroupSize, k), get(fx, Builtin::WorkitemId, k));
        let base = fx.bin(BinOp::Mul, &i32t, g, s);
        Ok(fx.bin(BinOp::Add, &i32t, base, l))
    };
    let (x, y, z) = (id(fx, 0)?, id(fx, 1)?, id(fx, 2)?);
    let (sx, sy) = (get(fx, size, 0), get(fx, size, 1));
    let zy = fx.bin(BinOp::Mul, &i32t, z, sy);
    let zy = fx.bin(BinOp::Add, &i32t, zy, y);
    let zyx = fx.bin(BinOp::Mul, &i32t, zy, sx);
    Ok(fx.bin(BinOp::Add, &i32t, zyx, x))
}

/// A scalar builtin as i32.
pub(super) fn scalar(fx: &mut Fx, b: BuiltIn) -> Result<Operand, String> {
    let i32t = Type::I32;
    let wave = |fx: &mut Fx, op: WaveOp| fx.value(MOp::Wave { op, ty: Type::I32, args: vec![] });
    Ok(match b {
        BuiltIn::SubgroupSize | BuiltIn::SubgroupMaxSize => wave(fx, WaveOp::WaveSize),
        BuiltIn::SubgroupLocalInvocationId => wave(fx, WaveOp::LaneId),
        BuiltIn::WorkDim => get(fx, Builtin::WorkDim, 0),
        BuiltIn::LocalInvocationIndex => linear(fx, BuiltIn::LocalInvocationId, Builtin::WorkgroupSize)?,
        BuiltIn::GlobalLinearId => linear(fx, BuiltIn::GlobalInvocationId, Builtin::GridSize)?,
        BuiltIn::SubgroupId => {
            let l = linear(fx, BuiltIn::LocalInvocationId, Builtin::WorkgroupSize)?;
            let w = wave(fx, WaveOp::WaveSize);
            fx.bin(BinOp::UDiv, &i32t, l, w)
        }
        BuiltIn::NumSubgroups | BuiltIn::NumEnqueuedSubgroups => {
            let (x, y, z) = (get(fx, Builtin::WorkgroupSize, 0), get(fx, Builtin::WorkgroupSize, 1), get(fx, Builtin::WorkgroupSize, 2));
            let xy = fx.bin(BinOp::Mul, &i32t, x, y);
            let n = fx.bin(BinOp::Mul, &i32t, xy, z);
            let w = wave(fx, WaveOp::WaveSize);
            let up = fx.bin(BinOp::Add, &i32t, n, w.clone());
            let up = fx.bin(BinOp::Sub, &i32t, up, i32c(1));
            fx.bin(BinOp::UDiv, &i32t, up, w)
        }
        other => return Err(format!("the builtin {other:?} is not supported")),
    })
}

fn widen(fx: &mut Fx, v: Operand, to: &Type) -> Operand {
    if *to == Type::I32 {
        v
    } else {
        fx.cast(if to.bits() > 32 { CastOp::ZExt } else { CastOp::Trunc }, &Type::I32, v, to)
    }
}

/// Element `k` of the vector builtin `b`, of SPIR-V type `ty`.
pub fn element(fx: &mut Fx, b: BuiltIn, k: u32, ty: u32) -> Result<Operand, String> {
    let t = fx.facts.mir_type(ty)?;
    if k > 2 {
        return Err(format!("element {k} of the builtin {b:?}"));
    }
    let v = dim(fx, b, k as u8)?;
    Ok(widen(fx, v, &t))
}

/// The whole value of builtin `b`, of SPIR-V type `ty` (a vector or a scalar).
pub fn whole(fx: &mut Fx, b: BuiltIn, ty: u32) -> Result<Operand, String> {
    let t = fx.facts.mir_type(ty)?;
    match &t {
        Type::Vector(elem, n) => {
            let mut elems = Vec::new();
            for k in 0..*n {
                let v = dim(fx, b, k)?;
                elems.push(widen(fx, v, elem));
            }
            Ok(fx.value(MOp::Make { ty: t.clone(), elems }))
        }
        _ => {
            let v = scalar(fx, b)?;
            Ok(widen(fx, v, &t))
        }
    }
}

/// OpIsNan, OpIsInf, OpIsFinite, OpIsNormal, OpSignBitSet on `x` of type `t`.
pub fn classify(fx: &mut Fx, op: Op, t: &Type, x: Operand) -> Operand {
    let e = t.element().clone();
    let (inf_bits, min_normal, ity) = match e {
        Type::F16 => (0x7c00u64, 0x0400u64, Type::I16),
        Type::F32 => (0x7f80_0000, 0x0080_0000, Type::I32),
        _ => (0x7ff0_0000_0000_0000, 0x0010_0000_0000_0000, Type::I64),
    };
    let cmp = |fx: &mut Fx, pred: FloatPred, a: Operand, b: Operand| fx.value(MOp::Fcmp { pred, ty: t.clone(), lhs: a, rhs: b });
    match op {
        Op::IsNan => cmp(fx, FloatPred::Uno, x.clone(), x),
        Op::SignBitSet => {
            let it = match t {
                Type::Vector(_, n) => Type::Vector(Box::new(ity), *n),
                _ => ity,
            };
            let bits = fx.cast(CastOp::Bitcast, t, x, &it);
            let zero = fx.splat(&it, 0);
            fx.value(MOp::Icmp { pred: IntPred::Slt, ty: it, lhs: bits, rhs: zero })
        }
        _ => {
            let a = fx.un(UnOp::FAbs, t, x);
            let inf = fx.splat(t, inf_bits);
            match op {
                Op::IsInf => cmp(fx, FloatPred::Oeq, a, inf),
                Op::IsFinite => cmp(fx, FloatPred::Olt, a, inf),
                _ => {
                    let min = fx.splat(t, min_normal);
                    let big = cmp(fx, FloatPred::Oge, a.clone(), min);
                    let finite = cmp(fx, FloatPred::Olt, a, inf);
                    fx.bin(BinOp::And, &bool_like(t), big, finite)
                }
            }
        }
    }
}
