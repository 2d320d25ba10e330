//! Known bits of MIR integer values, from their definitions (a bounded walk
//! up the operands): trailing zeros, a clear sign bit, and an upper bound on
//! the significant bits. simplify uses them to rewrite operations; selection
//! uses [`known_width`] to address memory with a 32-bit offset where a
//! 64-bit index is known to fit.

use super::rewrite::{defining_op, Def};
use crate::abi::Type;
use crate::mir::interp::ops::width;
use crate::mir::ir::{BinOp, CastOp, Function, Op, Operand};

/// How many low bits of `operand` are known to be 0: constants, left shifts
/// and multiplies by constants, and what sums, masks and extensions keep of
/// their operands' zeros. (A lower bound; 64 and more mean all.)
pub fn known_trailing_zeros(func: &Function, defs: &[Option<Def>], operand: &Operand, depth: u32) -> u32 {
    match operand {
        Operand::Const(c) => c.bits.trailing_zeros(),
        Operand::Value(_) if depth == 0 => 0,
        Operand::Value(_) => match defining_op(func, defs, operand) {
            Some(Op::Binary { op: BinOp::Shl, lhs, rhs: Operand::Const(c), ty }) if c.bits < u64::from(width(ty)) => {
                known_trailing_zeros(func, defs, lhs, depth - 1).saturating_add(c.bits as u32).min(width(ty))
            }
            Some(Op::Binary { op: BinOp::Mul, lhs, rhs, ty }) => {
                known_trailing_zeros(func, defs, lhs, depth - 1).saturating_add(known_trailing_zeros(func, defs, rhs, depth - 1)).min(width(ty))
            }
            Some(Op::Binary { op: BinOp::And, lhs, rhs, .. }) => known_trailing_zeros(func, defs, lhs, depth - 1).max(known_trailing_zeros(func, defs, rhs, depth - 1)),
            Some(Op::Binary { op: BinOp::Add | BinOp::Sub | BinOp::Or | BinOp::Xor, lhs, rhs, .. }) => {
                known_trailing_zeros(func, defs, lhs, depth - 1).min(known_trailing_zeros(func, defs, rhs, depth - 1))
            }
            Some(Op::Cast { op: CastOp::ZExt | CastOp::SExt, arg, from, .. }) => known_trailing_zeros(func, defs, arg, depth - 1).min(width(from)),
            _ => 0,
        },
    }
}

/// Whether the sign bit of `operand` (of type `ty`) is known to be 0: work-item
/// ids and work-group sizes (below 1024), lane ids, zero extensions, logical
/// right shifts, masks with a clear sign bit, unsigned minima of such values,
/// and whatever [`known_width`] bounds below the sign bit (left shifts,
/// remainders, sums and products of bounded values).
pub fn known_nonnegative(func: &Function, defs: &[Option<Def>], operand: &Operand, ty: &Type, depth: u32) -> bool {
    use crate::mir::ir::{Builtin, WaveOp};
    let w = width(ty);
    match operand {
        Operand::Const(c) => (c.bits >> (w - 1)) & 1 == 0,
        Operand::Value(_) if depth == 0 => false,
        Operand::Value(_) => match defining_op(func, defs, operand) {
            Some(Op::Builtin { kind: Builtin::WorkitemId | Builtin::WorkgroupSize, .. }) => w > 11,
            Some(Op::Wave { op: WaveOp::LaneId | WaveOp::WaveSize, .. }) => w > 8,
            Some(Op::Cast { op: CastOp::ZExt, from, .. }) => from.bits() < w,
            Some(Op::Binary { op: BinOp::LShr, rhs: Operand::Const(c), .. }) => c.bits % u64::from(w) != 0,
            Some(Op::Binary { op: BinOp::And | BinOp::UMin, lhs, rhs, .. }) => {
                known_nonnegative(func, defs, lhs, ty, depth - 1) || known_nonnegative(func, defs, rhs, ty, depth - 1)
            }
            Some(Op::Binary { op: BinOp::Or | BinOp::Xor | BinOp::SMin | BinOp::SMax | BinOp::UMax, lhs, rhs, .. }) => {
                known_nonnegative(func, defs, lhs, ty, depth - 1) && known_nonnegative(func, defs, rhs, ty, depth - 1)
            }
            // Shifts, remainders, sums and products of bounded values.
            _ => known_width(func, defs, operand, ty, depth) < w,
        },
    }
}

/// An upper bound on the significant bits of `operand` (of type `ty`): the
/// value is known to be below 2^result, unsigned. Work-item ids and
/// work-group sizes are below 1024 (docs/mir.md), lane ids below 64;
/// extensions keep their source's width (zero extensions of any value and
/// sign extensions of non-negative ones); masks, right shifts, remainders,
/// minima, sums, products and left shifts combine their operands' bounds.
pub fn known_width(func: &Function, defs: &[Option<Def>], operand: &Operand, ty: &Type, depth: u32) -> u32 {
    use crate::mir::ir::{Builtin, WaveOp};
    let w = width(ty);
    let bits = |v: u64| 64 - v.leading_zeros();
    match operand {
        Operand::Const(c) => bits(c.bits & crate::mir::interp::ops::mask(w)).min(w),
        Operand::Value(_) if depth == 0 => w,
        Operand::Value(_) => {
            let of = |o: &Operand| known_width(func, defs, o, ty, depth - 1);
            let bound = match defining_op(func, defs, operand) {
                Some(Op::Builtin { kind: Builtin::WorkitemId, .. }) => 10,
                Some(Op::Builtin { kind: Builtin::WorkgroupSize, .. }) => 11,
                Some(Op::Wave { op: WaveOp::LaneId, .. }) => 6,
                Some(Op::Wave { op: WaveOp::WaveSize, .. }) => 7,
                Some(Op::Cast { op: CastOp::ZExt, from, arg, .. }) => known_width(func, defs, arg, from, depth - 1),
                Some(Op::Cast { op: CastOp::SExt, from, arg, .. }) if known_nonnegative(func, defs, arg, from, depth - 1) => {
                    known_width(func, defs, arg, from, depth - 1)
                }
                Some(Op::Binary { op: BinOp::And | BinOp::UMin, lhs, rhs, .. }) => of(lhs).min(of(rhs)),
                Some(Op::Binary { op: BinOp::Or | BinOp::Xor | BinOp::UMax, lhs, rhs, .. }) => of(lhs).max(of(rhs)),
                Some(Op::Binary { op: BinOp::Add, lhs, rhs, .. }) => of(lhs).max(of(rhs)) + 1,
                Some(Op::Binary { op: BinOp::Mul, lhs, rhs, .. }) => of(lhs) + of(rhs),
                Some(Op::Binary { op: BinOp::Shl, lhs, rhs: Operand::Const(c), .. }) if c.bits < u64::from(w) => of(lhs) + c.bits as u32,
                Some(Op::Binary { op: BinOp::LShr, lhs, rhs: Operand::Const(c), .. }) if c.bits < u64::from(w) => of(lhs).saturating_sub(c.bits as u32),
                Some(Op::Binary { op: BinOp::URem, rhs, .. }) => of(rhs),
                Some(Op::Binary { op: BinOp::UDiv, lhs, .. }) => of(lhs),
                _ => w,
            };
            bound.min(w)
        }
    }
}
