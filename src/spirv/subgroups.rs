//! `OpGroupNonUniform*` (the `cl_khr_subgroup_*` extensions) with the
//! Subgroup scope: MIR's wave operations, which work over the active lanes as
//! these instructions are defined to. The subgroup is the wave; a ballot is a
//! `<4 x i32>` whose first two elements hold the wave's 64-bit mask.

use rspirv::dr::Operand as O;
use rspirv::spirv::{GroupOperation, Op, Scope};

use super::function::Fx;
use crate::abi::Type;
use crate::mir::{BinOp, CastOp, Const, FloatPred, IntPred, Op as MOp, Operand, UnOp, WaveOp};

/// Whether `op` is one of the non-uniform group instructions.
pub fn handles(op: Op) -> bool {
    use Op::*;
    matches!(
        op,
        GroupNonUniformElect
            | GroupNonUniformAll
            | GroupNonUniformAny
            | GroupNonUniformAllEqual
            | GroupNonUniformBroadcast
            | GroupNonUniformBroadcastFirst
            | GroupNonUniformBallot
            | GroupNonUniformInverseBallot
            | GroupNonUniformBallotBitExtract
            | GroupNonUniformBallotBitCount
            | GroupNonUniformBallotFindLSB
            | GroupNonUniformBallotFindMSB
            | GroupNonUniformShuffle
            | GroupNonUniformShuffleXor
            | GroupNonUniformShuffleUp
            | GroupNonUniformShuffleDown
            | GroupNonUniformIAdd
            | GroupNonUniformFAdd
            | GroupNonUniformIMul
            | GroupNonUniformFMul
            | GroupNonUniformSMin
            | GroupNonUniformUMin
            | GroupNonUniformFMin
            | GroupNonUniformSMax
            | GroupNonUniformUMax
            | GroupNonUniformFMax
            | GroupNonUniformBitwiseAnd
            | GroupNonUniformBitwiseOr
            | GroupNonUniformBitwiseXor
            | GroupNonUniformLogicalAnd
            | GroupNonUniformLogicalOr
            | GroupNonUniformLogicalXor
    )
}

/// The MIR operation of a group reduction or scan (OpGroup* and
/// OpGroupNonUniform*): None for the others and for multiplications.
pub fn group_binop(op: Op) -> Option<BinOp> {
    use Op::*;
    Some(match op {
        GroupIAdd | GroupNonUniformIAdd => BinOp::Add,
        GroupFAdd | GroupNonUniformFAdd => BinOp::FAdd,
        GroupFMin | GroupNonUniformFMin => BinOp::FMin,
        GroupUMin | GroupNonUniformUMin => BinOp::UMin,
        GroupSMin | GroupNonUniformSMin => BinOp::SMin,
        GroupFMax | GroupNonUniformFMax => BinOp::FMax,
        GroupUMax | GroupNonUniformUMax => BinOp::UMax,
        GroupSMax | GroupNonUniformSMax => BinOp::SMax,
        GroupNonUniformBitwiseAnd | GroupNonUniformLogicalAnd => BinOp::And,
        GroupNonUniformBitwiseOr | GroupNonUniformLogicalOr => BinOp::Or,
        GroupNonUniformBitwiseXor | GroupNonUniformLogicalXor => BinOp::Xor,
        _ => return None,
    })
}

/// SPIR-V's (and OpenCL's) identity of a float exclusive scan, which its first
/// lane gets: +0, +inf, -inf for add, min and max (MIR's is -0 or a NaN).
pub fn float_scan_identity(bop: BinOp, ty: &Type) -> Operand {
    let first = match bop {
        BinOp::FAdd => 0.0,
        BinOp::FMin => f64::INFINITY,
        _ => f64::NEG_INFINITY,
    };
    let bits = if ty.element() == &Type::F32 { u64::from((first as f32).to_bits()) } else { first.to_bits() };
    Operand::Const(Const { ty: ty.clone(), bits })
}

/// `any` (some active lane's `p` holds) or `all` (none fails) over the wave.
pub fn vote(fx: &mut Fx, p: Operand, all: bool) -> Operand {
    let p = if all { fx.bin(BinOp::Xor, &Type::I1, p, Operand::Const(Const { ty: Type::I1, bits: 1 })) } else { p };
    let m = ballot(fx, p);
    let pred = if all { IntPred::Eq } else { IntPred::Ne };
    fx.value(MOp::Icmp { pred, ty: Type::I64, lhs: m, rhs: Operand::Const(Const::int(Type::I64, 0)) })
}

/// Whether this lane is the wave's first active one.
pub fn is_first_lane(fx: &mut Fx) -> Operand {
    let lane = wave(fx, WaveOp::LaneId, &Type::I32, vec![]);
    let lowest = wave(fx, WaveOp::ReadFirstLane, &Type::I32, vec![lane.clone()]);
    fx.value(MOp::Icmp { pred: IntPred::Eq, ty: Type::I32, lhs: lane, rhs: lowest })
}

fn i32c(v: i64) -> Operand {
    Operand::Const(Const::int(Type::I32, v))
}

fn wave(fx: &mut Fx, op: WaveOp, ty: &Type, args: Vec<Operand>) -> Operand {
    fx.value(MOp::Wave { op, ty: ty.clone(), args })
}

/// The active lanes where `p` holds, as an i64 mask.
fn ballot(fx: &mut Fx, p: Operand) -> Operand {
    wave(fx, WaveOp::Ballot, &Type::I64, vec![p])
}

/// The first 64 bits of a `<4 x i32>` ballot as an i64.
fn mask_of(fx: &mut Fx, b: Operand) -> Operand {
    let lo = fx.value(MOp::Extract { agg: b.clone(), index: 0 });
    let hi = fx.value(MOp::Extract { agg: b, index: 1 });
    let lo = fx.cast(CastOp::ZExt, &Type::I32, lo, &Type::I64);
    let hi = fx.cast(CastOp::ZExt, &Type::I32, hi, &Type::I64);
    let hi = fx.bin(BinOp::Shl, &Type::I64, hi, Operand::Const(Const::int(Type::I64, 32)));
    fx.bin(BinOp::Or, &Type::I64, hi, lo)
}

/// Bit `k` (i32) of an i64 mask, as i1.
fn bit(fx: &mut Fx, mask: Operand, k: Operand) -> Operand {
    let k = fx.cast(CastOp::ZExt, &Type::I32, k, &Type::I64);
    let s = fx.bin(BinOp::LShr, &Type::I64, mask, k);
    let b = fx.bin(BinOp::And, &Type::I64, s, Operand::Const(Const::int(Type::I64, 1)));
    fx.value(MOp::Icmp { pred: IntPred::Ne, ty: Type::I64, lhs: b, rhs: Operand::Const(Const::int(Type::I64, 0)) })
}

fn to_i32(fx: &mut Fx, v: Operand, from: &Type) -> Operand {
    fx.resize(from, v, &Type::I32, false)
}

/// Translates one instruction with result type `rty` and operands `ops`.
pub fn translate(fx: &mut Fx, op: Op, rty: u32, ops: &[O]) -> Result<Operand, String> {
    let id = |k: usize| match ops.get(k) {
        Some(O::IdRef(x) | O::IdScope(x)) => Ok(*x),
        other => Err(format!("{op:?} with operand {other:?}")),
    };
    match fx.const_int(id(0)?).and_then(|v| Scope::from_u32(v as u32)) {
        Some(Scope::Subgroup) => {}
        other => return Err(format!("{op:?} with scope {other:?}; only the subgroup scope is supported")),
    }
    let ty = fx.facts.mir_type(rty)?;
    let lane = wave(fx, WaveOp::LaneId, &Type::I32, vec![]);
    Ok(match op {
        Op::GroupNonUniformElect => {
            let first = wave(fx, WaveOp::ReadFirstLane, &Type::I32, vec![lane.clone()]);
            fx.value(MOp::Icmp { pred: IntPred::Eq, ty: Type::I32, lhs: lane, rhs: first })
        }
        Op::GroupNonUniformAll | Op::GroupNonUniformAny => {
            let p = fx.operand(id(1)?)?;
            vote(fx, p, op == Op::GroupNonUniformAll)
        }
        Op::GroupNonUniformAllEqual => {
            // Every active lane equal to the first: none differs.
            let x = fx.operand(id(1)?)?;
            let xt = fx.mir_type_of(id(1)?)?;
            let (x, xt) = if xt == Type::I1 { (fx.cast(CastOp::ZExt, &Type::I1, x, &Type::I32), Type::I32) } else { (x, xt) };
            if !xt.is_scalar() {
                return Err(format!("{op:?} of {xt} is not supported (scalars are)"));
            }
            let first = wave(fx, WaveOp::ReadFirstLane, &xt, vec![x.clone()]);
            let differs = if xt.is_float() {
                fx.value(MOp::Fcmp { pred: FloatPred::Une, ty: xt, lhs: x, rhs: first })
            } else {
                fx.value(MOp::Icmp { pred: IntPred::Ne, ty: xt, lhs: x, rhs: first })
            };
            let m = ballot(fx, differs);
            fx.value(MOp::Icmp { pred: IntPred::Eq, ty: Type::I64, lhs: m, rhs: Operand::Const(Const::int(Type::I64, 0)) })
        }
        Op::GroupNonUniformBroadcast | Op::GroupNonUniformBroadcastFirst => {
            let x = fx.operand(id(1)?)?;
            if op == Op::GroupNonUniformBroadcastFirst {
                wave(fx, WaveOp::ReadFirstLane, &ty, vec![x])
            } else {
                let lt = fx.mir_type_of(id(2)?)?;
                let l = fx.operand(id(2)?)?;
                let l = to_i32(fx, l, &lt);
                wave(fx, WaveOp::ReadLane, &ty, vec![x, l])
            }
        }
        Op::GroupNonUniformBallot => {
            let p = fx.operand(id(1)?)?;
            let m = ballot(fx, p);
            let lo = fx.cast(CastOp::Trunc, &Type::I64, m.clone(), &Type::I32);
            let hi = fx.bin(BinOp::LShr, &Type::I64, m, Operand::Const(Const::int(Type::I64, 32)));
            let hi = fx.cast(CastOp::Trunc, &Type::I64, hi, &Type::I32);
            fx.value(MOp::Make { ty: ty.clone(), elems: vec![lo, hi, i32c(0), i32c(0)] })
        }
        Op::GroupNonUniformInverseBallot | Op::GroupNonUniformBallotBitExtract => {
            let b = fx.operand(id(1)?)?;
            let m = mask_of(fx, b);
            let k = if op == Op::GroupNonUniformInverseBallot {
                lane
            } else {
                let kt = fx.mir_type_of(id(2)?)?;
                let k = fx.operand(id(2)?)?;
                to_i32(fx, k, &kt)
            };
            bit(fx, m, k)
        }
        Op::GroupNonUniformBallotBitCount => {
            let Some(O::GroupOperation(g)) = ops.get(1) else { return Err(format!("{op:?} without its group operation")) };
            let b = fx.operand(id(2)?)?;
            let m = mask_of(fx, b);
            // Bits at and below the lane (inclusive), below it (exclusive).
            let m = match g {
                GroupOperation::Reduce => m,
                GroupOperation::InclusiveScan | GroupOperation::ExclusiveScan => {
                    let l = fx.cast(CastOp::ZExt, &Type::I32, lane, &Type::I64);
                    let one = Operand::Const(Const::int(Type::I64, 1));
                    let below = fx.bin(BinOp::Shl, &Type::I64, one.clone(), l);
                    let below = fx.bin(BinOp::Sub, &Type::I64, below, one.clone());
                    let keep = if *g == GroupOperation::InclusiveScan {
                        let twice = fx.bin(BinOp::Shl, &Type::I64, below.clone(), one.clone());
                        fx.bin(BinOp::Or, &Type::I64, twice, one)
                    } else {
                        below
                    };
                    fx.bin(BinOp::And, &Type::I64, m, keep)
                }
                other => return Err(format!("{op:?} with {other:?}")),
            };
            let n = fx.un(UnOp::Popcount, &Type::I64, m);
            fx.cast(CastOp::Trunc, &Type::I64, n, &Type::I32)
        }
        Op::GroupNonUniformBallotFindLSB | Op::GroupNonUniformBallotFindMSB => {
            let b = fx.operand(id(1)?)?;
            let m = mask_of(fx, b);
            let r = if op == Op::GroupNonUniformBallotFindLSB {
                fx.un(UnOp::Ctz, &Type::I64, m)
            } else {
                let z = fx.un(UnOp::Clz, &Type::I64, m);
                fx.bin(BinOp::Sub, &Type::I64, Operand::Const(Const::int(Type::I64, 63)), z)
            };
            fx.cast(CastOp::Trunc, &Type::I64, r, &Type::I32)
        }
        Op::GroupNonUniformShuffle | Op::GroupNonUniformShuffleXor | Op::GroupNonUniformShuffleUp | Op::GroupNonUniformShuffleDown => {
            let x = fx.operand(id(1)?)?;
            let kt = fx.mir_type_of(id(2)?)?;
            let k = fx.operand(id(2)?)?;
            let k = to_i32(fx, k, &kt);
            let from = match op {
                Op::GroupNonUniformShuffle => k,
                Op::GroupNonUniformShuffleXor => fx.bin(BinOp::Xor, &Type::I32, lane, k),
                Op::GroupNonUniformShuffleUp => fx.bin(BinOp::Sub, &Type::I32, lane, k),
                _ => fx.bin(BinOp::Add, &Type::I32, lane, k),
            };
            wave(fx, WaveOp::Shuffle, &ty, vec![x, from])
        }
        _ => arithmetic(fx, op, &ty, ops)?,
    })
}

/// Which lanes a gathered combination takes: those of the lane's cluster
/// (aligned, of a constant power-of-two size up to 64), or the wave's up to
/// the lane (inclusive or not), or the whole wave.
enum Gather {
    Cluster(u64),
    Below { inclusive: bool },
    Wave,
}

/// `op` over the active lanes `which` selects, in lane order, each read with a
/// shuffle (of the lane's own value where that lane is not active): for the
/// operations MIR's wave reductions do not have (clustered ones and
/// multiplications). 64 lanes at most, so a wave of 32 leaves half inactive.
fn gather(fx: &mut Fx, bop: BinOp, vt: &Type, x: Operand, which: Gather) -> Operand {
    let lane = wave(fx, WaveOp::LaneId, &Type::I32, vec![]);
    let active = ballot(fx, Operand::Const(Const { ty: Type::I1, bits: 1 }));
    let (base, count) = match which {
        Gather::Cluster(size) => (fx.bin(BinOp::And, &Type::I32, lane.clone(), i32c(!(size as i64 - 1))), size),
        _ => (i32c(0), 64),
    };
    let identity = match bop {
        BinOp::Mul => 1,
        BinOp::FMul if vt.bits() == 64 => 1f64.to_bits(),
        BinOp::FMul => u64::from(1f32.to_bits()),
        _ => WaveOp::identity(bop, vt),
    };
    let mut acc = Operand::Const(Const { ty: vt.clone(), bits: identity });
    for j in 0..count {
        let src = fx.bin(BinOp::Add, &Type::I32, base.clone(), i32c(j as i64));
        let mut on = bit(fx, active.clone(), src.clone());
        if let Gather::Below { inclusive } = which {
            let pred = if inclusive { IntPred::Ule } else { IntPred::Ult };
            let before = fx.value(MOp::Icmp { pred, ty: Type::I32, lhs: src.clone(), rhs: lane.clone() });
            on = fx.bin(BinOp::And, &Type::I1, on, before);
        }
        let from = fx.select(&Type::I32, on.clone(), src, lane.clone());
        let v = wave(fx, WaveOp::Shuffle, vt, vec![x.clone(), from]);
        let next = fx.bin(bop, vt, acc.clone(), v);
        acc = fx.select(vt, on, next, acc);
    }
    acc
}

/// A clustered reduction (the constant cluster size, a power of two up to 64).
fn clustered(fx: &mut Fx, op: Op, bop: BinOp, logical: bool, ty: &Type, x: Operand, ops: &[O]) -> Result<Operand, String> {
    let size = match ops.get(3) {
        Some(O::IdRef(c)) => fx.const_int(*c),
        _ => None,
    }
    .filter(|n| n.is_power_of_two() && *n <= 64)
    .ok_or_else(|| format!("{op:?} with a cluster size that is not a constant power of two up to 64"))?;
    let (vt, x) = if logical { (Type::I32, fx.cast(CastOp::ZExt, &Type::I1, x, &Type::I32)) } else { (ty.clone(), x) };
    if !matches!(vt, Type::I32 | Type::I64 | Type::F32 | Type::F64) {
        return Err(format!("{op:?} on {vt} is not supported (i32, i64, f32 and f64 are)"));
    }
    let acc = gather(fx, bop, &vt, x, Gather::Cluster(size));
    Ok(if logical { fx.value(MOp::Icmp { pred: IntPred::Ne, ty: Type::I32, lhs: acc, rhs: i32c(0) }) } else { acc })
}

/// A reduction or scan (`compute`, on i32, i64, f32 or f64) of `x` of any
/// scalar type: i8 and i16 widened to i32 (sign-extended for the signed
/// minimum and maximum, zero-extended otherwise, which truncation undoes for
/// sums, products and bit operations), f16 to f32 (so sums and products
/// round once, in f16, at the end), and the result narrowed back. An
/// exclusive scan's first lane gets the narrow type's identity for the
/// signed minimum and maximum (the wide one's does not truncate to it).
pub fn narrow_collective(fx: &mut Fx, bop: BinOp, exclusive: bool, ty: &Type, x: Operand, compute: impl FnOnce(&mut Fx, &Type, Operand) -> Result<Operand, String>) -> Result<Operand, String> {
    let (wide, ext, back) = match ty {
        Type::I8 | Type::I16 => (Type::I32, if matches!(bop, BinOp::SMin | BinOp::SMax) { CastOp::SExt } else { CastOp::ZExt }, CastOp::Trunc),
        Type::F16 => (Type::F32, CastOp::FpExt, CastOp::FpTrunc),
        _ => return compute(fx, ty, x),
    };
    let xw = fx.cast(ext, ty, x, &wide);
    let r = compute(fx, &wide, xw)?;
    let r = fx.cast(back, &wide, r, ty);
    if !(exclusive && matches!(bop, BinOp::SMin | BinOp::SMax)) {
        return Ok(r);
    }
    let bits = ty.bits();
    let identity = if bop == BinOp::SMin { (1u64 << (bits - 1)) - 1 } else { 1u64 << (bits - 1) };
    let is_first = is_first_lane(fx);
    Ok(fx.select(ty, is_first, Operand::Const(Const { ty: ty.clone(), bits: identity }), r))
}

/// Reduce, InclusiveScan and ExclusiveScan of the arithmetic, bitwise and
/// logical instructions over the active lanes.
fn arithmetic(fx: &mut Fx, op: Op, ty: &Type, ops: &[O]) -> Result<Operand, String> {
    let Some(O::GroupOperation(g)) = ops.get(1) else { return Err(format!("{op:?} without its group operation")) };
    let x = match ops.get(2) {
        Some(O::IdRef(x)) => fx.operand(*x)?,
        other => return Err(format!("{op:?} with operand {other:?}")),
    };
    let logical = matches!(op, Op::GroupNonUniformLogicalAnd | Op::GroupNonUniformLogicalOr | Op::GroupNonUniformLogicalXor);
    let bop = match op {
        Op::GroupNonUniformIMul => BinOp::Mul,
        Op::GroupNonUniformFMul => BinOp::FMul,
        _ => group_binop(op).ok_or_else(|| format!("{op:?} is not a group reduction"))?,
    };
    if logical {
        return wide_arithmetic(fx, op, bop, *g, logical, ty, x, ops);
    }
    narrow_collective(fx, bop, *g == GroupOperation::ExclusiveScan, ty, x, |fx, ty, x| wide_arithmetic(fx, op, bop, *g, logical, ty, x, ops))
}

/// [`arithmetic`] on i32, i64, f32, f64 or booleans.
#[allow(clippy::too_many_arguments)]
fn wide_arithmetic(fx: &mut Fx, op: Op, bop: BinOp, g: GroupOperation, logical: bool, ty: &Type, x: Operand, ops: &[O]) -> Result<Operand, String> {
    if g == GroupOperation::ClusteredReduce {
        return clustered(fx, op, bop, logical, ty, x, ops);
    }
    if matches!(bop, BinOp::Mul | BinOp::FMul) {
        if !matches!(ty, Type::I32 | Type::I64 | Type::F32 | Type::F64) {
            return Err(format!("{op:?} on {ty} is not supported (i32, i64, f32 and f64 are)"));
        }
        let which = match &g {
            GroupOperation::Reduce => Gather::Wave,
            GroupOperation::InclusiveScan => Gather::Below { inclusive: true },
            GroupOperation::ExclusiveScan => Gather::Below { inclusive: false },
            other => return Err(format!("{op:?} with {other:?} is not supported")),
        };
        return Ok(gather(fx, bop, ty, x, which));
    }
    let wop = match &g {
        GroupOperation::Reduce => WaveOp::Reduce(bop),
        GroupOperation::InclusiveScan => WaveOp::InclusiveScan(bop),
        GroupOperation::ExclusiveScan => WaveOp::ExclusiveScan(bop),
        other => return Err(format!("{op:?} with {other:?} is not supported")),
    };
    if logical {
        // On booleans as 0 or 1 in i32.
        let v = fx.cast(CastOp::ZExt, &Type::I1, x, &Type::I32);
        let r = wave(fx, wop, &Type::I32, vec![v]);
        return Ok(fx.value(MOp::Icmp { pred: IntPred::Ne, ty: Type::I32, lhs: r, rhs: i32c(0) }));
    }
    if !matches!(ty, Type::I32 | Type::I64 | Type::F32 | Type::F64) {
        return Err(format!("{op:?} on {ty} is not supported (MIR's wave reductions are on i32, i64, f32 and f64)"));
    }
    let r = wave(fx, wop, ty, vec![x]);
    if !(matches!(wop, WaveOp::ExclusiveScan(_)) && bop.is_float()) {
        return Ok(r);
    }
    let is_first = is_first_lane(fx);
    Ok(fx.select(ty, is_first, float_scan_identity(bop, ty), r))
}
