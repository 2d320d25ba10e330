//! Work-group collectives (OpenCL 2.0's `work_group_*`: OpGroup* with the
//! Workgroup scope) from MIR's wave operations, an LDS area and barriers.
//!
//! Every wave combines its lanes with a wave operation and writes the result
//! to its entry of the area (every lane writes the same value, so no branch is
//! needed); after a barrier every work-item combines the entries it needs in
//! wave order, one at a time, in a loop over the waves (uniform: the count is
//! the same in every lane of a wave). The order is fixed, so float results are
//! the same wherever they are computed. A second barrier lets the next
//! collective reuse the area.
//!
//! The area is one `lds_slot` per kernel; device functions receive it as a
//! parameter like the `__local` variables they use (docs/spirv.md).

use rspirv::dr::Operand as O;
use rspirv::spirv::{GroupOperation, Op};

use super::function::Fx;
use crate::abi::Type;
use crate::mir::{BinOp, Builtin, CastOp, Const, IntPred, Op as MOp, Operand, WaveOp};

/// The id standing for the collectives' LDS area in the lists of Workgroup
/// variables each function uses (no SPIR-V id is this large).
pub const AREA: u32 = u32::MAX;

/// Bytes of the area: an 8-byte entry per wave (at most 32) and the broadcast
/// value.
pub const AREA_BYTES: u32 = 33 * 8;

/// The most waves a work-group has: 1024 work-items in waves of 32.
const MAX_WAVES: u32 = 32;

/// Whether an instruction is a work-group collective (its scope operand is
/// the constant Workgroup).
pub fn is_workgroup_collective(op: Op, scope: Option<u64>) -> bool {
    matches!(
        op,
        Op::GroupIAdd | Op::GroupFAdd | Op::GroupFMin | Op::GroupUMin | Op::GroupSMin | Op::GroupFMax | Op::GroupUMax | Op::GroupSMax | Op::GroupBroadcast | Op::GroupAny | Op::GroupAll
    ) && scope == Some(rspirv::spirv::Scope::Workgroup as u64)
}

fn i32c(v: i64) -> Operand {
    Operand::Const(Const::int(Type::I32, v))
}

/// The work-item's linear id in its work-group, the number of waves of the
/// work-group and this work-item's wave.
struct Geometry {
    linear: Operand,
    waves: Operand,
    wave: Operand,
}

/// From the builtins' own expansions: LocalInvocationIndex, NumSubgroups and
/// SubgroupId (the subgroup is the wave).
fn geometry(fx: &mut Fx) -> Result<Geometry, String> {
    use rspirv::spirv::BuiltIn;
    Ok(Geometry {
        linear: super::builtins::scalar(fx, BuiltIn::LocalInvocationIndex)?,
        waves: super::builtins::scalar(fx, BuiltIn::NumSubgroups)?,
        wave: super::builtins::scalar(fx, BuiltIn::SubgroupId)?,
    })
}

/// The area's entry `k` (an i32 index, 8 bytes apart).
fn entry(fx: &mut Fx, area: &Operand, k: Operand) -> Operand {
    let off = fx.bin(BinOp::Mul, &Type::I32, k, i32c(8));
    fx.value(MOp::PtrAdd { ptr: area.clone(), offset: off })
}

fn store(fx: &mut Fx, ty: &Type, value: Operand, ptr: Operand) {
    fx.b.push(MOp::Store { ty: ty.clone(), value, ptr, align: 8, volatile: false }, None);
}

fn load(fx: &mut Fx, ty: &Type, ptr: Operand) -> Operand {
    fx.value(MOp::Load { ty: ty.clone(), ptr, align: 8, volatile: false })
}

/// MIR's identity of `op` on `ty` (what its wave reductions start from).
fn identity(op: BinOp, ty: &Type) -> Operand {
    let bits = ty.bits();
    let all = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
    let v = match op {
        BinOp::Add | BinOp::UMax | BinOp::Or => 0,
        BinOp::UMin | BinOp::And => all,
        BinOp::SMin => all >> 1,
        BinOp::SMax => 1u64 << (bits - 1),
        BinOp::FAdd => {
            if bits == 64 {
                (-0.0f64).to_bits()
            } else {
                u64::from((-0.0f32).to_bits())
            }
        }
        // fmin and fmax ignore a NaN.
        _ => {
            if bits == 64 {
                f64::NAN.to_bits()
            } else {
                u64::from(f32::NAN.to_bits())
            }
        }
    };
    Operand::Const(Const { ty: ty.clone(), bits: v })
}

/// The entries 0..count of the area combined in order with `op`: a loop
/// (count is the same in every lane of a wave, so the loop is uniform).
fn combine(fx: &mut Fx, area: &Operand, op: BinOp, ty: &Type, count: &Operand) -> Operand {
    let head = fx.new_block("collective.head");
    let body = fx.new_block("collective.body");
    let exit = fx.new_block("collective.exit");
    let k = fx.b.block_param(head, "k", Type::I32);
    let acc = fx.b.block_param(head, "acc", ty.clone());
    let result = fx.b.block_param(exit, "combined", ty.clone());
    fx.b.br(head, vec![i32c(0), identity(op, ty)]);
    fx.enter(head);
    let more = fx.value(MOp::Icmp { pred: IntPred::Ult, ty: Type::I32, lhs: Operand::Value(k), rhs: count.clone() });
    fx.b.brif(more, body, vec![], exit, vec![Operand::Value(acc)]);
    fx.enter(body);
    let p = entry(fx, area, Operand::Value(k));
    let v = load(fx, ty, p);
    let next = fx.bin(op, ty, Operand::Value(acc), v);
    let k1 = fx.bin(BinOp::Add, &Type::I32, Operand::Value(k), i32c(1));
    fx.b.br(head, vec![k1, next]);
    fx.enter(exit);
    Operand::Value(result)
}

/// A work-group collective: `op` with result type `rty` and operands `ops`
/// (the scope first).
pub fn translate(fx: &mut Fx, op: Op, rty: u32, ops: &[O]) -> Result<Operand, String> {
    let ty = fx.facts.mir_type(rty)?;
    let id = |k: usize| match ops.get(k) {
        Some(O::IdRef(x)) => Ok(*x),
        other => Err(format!("a work-group collective with operand {other:?}")),
    };
    let area = fx.collective_area()?;
    let g = geometry(fx)?;
    let r = match op {
        Op::GroupAny | Op::GroupAll => {
            // Per wave: 1 where any lane holds (all: no lane fails), as i32,
            // so the waves combine with `or` (all: every wave's 1 or none).
            let p = fx.operand(id(1)?)?;
            let all = op == Op::GroupAll;
            let hit = super::subgroups::vote(fx, p, all);
            let hit = if all { fx.bin(BinOp::Xor, &Type::I1, hit, Operand::Const(Const { ty: Type::I1, bits: 1 })) } else { hit };
            let v = fx.cast(CastOp::ZExt, &Type::I1, hit, &Type::I32);
            let p = entry(fx, &area, g.wave.clone());
            store(fx, &Type::I32, v, p);
            fx.b.barrier();
            let any = combine(fx, &area, BinOp::Or, &Type::I32, &g.waves);
            fx.b.barrier();
            let pred = if all { IntPred::Eq } else { IntPred::Ne };
            fx.value(MOp::Icmp { pred, ty: Type::I32, lhs: any, rhs: i32c(0) })
        }
        Op::GroupBroadcast => {
            if !matches!(ty, Type::I32 | Type::I64 | Type::F32 | Type::F64 | Type::I16 | Type::I8 | Type::F16) {
                return Err(format!("a work-group broadcast of {ty} is not supported (scalars are)"));
            }
            let x = fx.operand(id(1)?)?;
            let at = id(2)?;
            let at_ty = fx.mir_type_of(at)?;
            let at_v = fx.operand(at)?;
            // The linear id of the work-item named by its local id (1 to 3
            // dimensions).
            let target = match &at_ty {
                Type::Vector(e, n) => {
                    let mut parts = Vec::new();
                    for k in 0..*n {
                        let c = fx.value(MOp::Extract { agg: at_v.clone(), index: u32::from(k) });
                        parts.push(fx.resize(e, c, &Type::I32, false));
                    }
                    let sizes: Vec<Operand> = (0..2).map(|d| Operand::Value(fx.b.builtin(Builtin::WorkgroupSize, d))).collect();
                    let mut lin = parts.last().cloned().expect("a vector has elements");
                    for k in (0..parts.len() - 1).rev() {
                        let m = fx.bin(BinOp::Mul, &Type::I32, lin, sizes[k].clone());
                        lin = fx.bin(BinOp::Add, &Type::I32, m, parts[k].clone());
                    }
                    lin
                }
                t => fx.resize(t, at_v, &Type::I32, false),
            };
            let me = fx.value(MOp::Icmp { pred: IntPred::Eq, ty: Type::I32, lhs: g.linear.clone(), rhs: target });
            // The others write their wave's entry (free between collectives),
            // so that no two waves write one place.
            let slot = fx.select(&Type::I32, me, i32c(i64::from(MAX_WAVES)), g.wave.clone());
            let p = entry(fx, &area, slot);
            store(fx, &ty, x, p);
            fx.b.barrier();
            let p = entry(fx, &area, i32c(i64::from(MAX_WAVES)));
            let r = load(fx, &ty, p);
            fx.b.barrier();
            r
        }
        _ => {
            let Some(O::GroupOperation(kind)) = ops.get(1) else { return Err("a work-group collective without its kind".into()) };
            if !matches!(ty, Type::I32 | Type::I64 | Type::F32 | Type::F64) {
                return Err(format!("work-group reductions on {ty} are not supported (MIR's wave operations are on i32, i64, f32 and f64)"));
            }
            let bop = super::subgroups::group_binop(op).ok_or_else(|| format!("{op:?} is not a group reduction"))?;
            let x = fx.operand(id(2)?)?;
            let total = fx.value(MOp::Wave { op: WaveOp::Reduce(bop), ty: ty.clone(), args: vec![x.clone()] });
            let p = entry(fx, &area, g.wave.clone());
            store(fx, &ty, total, p);
            fx.b.barrier();
            let r = match kind {
                GroupOperation::Reduce => combine(fx, &area, bop, &ty, &g.waves),
                GroupOperation::InclusiveScan | GroupOperation::ExclusiveScan => {
                    let inclusive = *kind == GroupOperation::InclusiveScan;
                    let before = combine(fx, &area, bop, &ty, &g.wave);
                    let wop = if inclusive { WaveOp::InclusiveScan(bop) } else { WaveOp::ExclusiveScan(bop) };
                    let within = fx.value(MOp::Wave { op: wop, ty: ty.clone(), args: vec![x] });
                    let r = fx.bin(bop, &ty, before, within);
                    if inclusive || !bop.is_float() {
                        r
                    } else {
                        // OpenCL's identity for the first work-item.
                        let is_first = fx.value(MOp::Icmp { pred: IntPred::Eq, ty: Type::I32, lhs: g.linear.clone(), rhs: i32c(0) });
                        fx.select(&ty, is_first, super::subgroups::float_scan_identity(bop, &ty), r)
                    }
                }
                other => return Err(format!("the group operation {other:?} is not supported")),
            };
            fx.b.barrier();
            r
        }
    };
    Ok(r)
}
