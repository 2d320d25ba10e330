//! Constant evaluation of one MIR operation whose operands are all constants,
//! with the interpreter's own scalar semantics (`mir::interp::ops`), so a
//! folded result is by definition what the program would have computed.
//!
//! Not folded: operations that would be undefined behaviour at run time
//! (division by zero, signed overflow of `sdiv`); transcendental functions
//! (their results are only specified within an error bound, and the backend's
//! approximations are what the program asked for); vectors and pointers
//! (constants are scalars, and addresses are not known before loading).

use crate::abi::Type;
use crate::mir::interp::ops;
use crate::mir::ir::{Const, Op, Operand};

fn constant(operand: &Operand) -> Option<&Const> {
    match operand {
        Operand::Const(c) => Some(c),
        Operand::Value(_) => None,
    }
}

/// Whether constants of this type can stand in operands.
pub fn foldable_type(ty: &Type) -> bool {
    ty.is_int() || ty.is_float()
}

/// The constant an operation computes, when all its operands are constants.
pub fn evaluate(op: &Op) -> Option<Const> {
    let bits = match op {
        Op::Const(c) => return foldable_type(&c.ty).then(|| c.clone()),
        Op::Binary { op, ty, lhs, rhs } => {
            let (a, b) = (constant(lhs)?, constant(rhs)?);
            if !foldable_type(ty) {
                return None;
            }
            let r = if op.is_float() { ops::float_binary(*op, ty, a.bits, b.bits) } else { ops::int_binary(*op, ops::width(ty), a.bits, b.bits) };
            return r.ok().map(|bits| Const { ty: ty.clone(), bits });
        }
        Op::Unary { op, ty, arg } => {
            let a = constant(arg)?;
            if !foldable_type(ty) || op.is_transcendental() {
                return None;
            }
            ops::unary(*op, ty, a.bits).ok()?
        }
        Op::Fma { ty, a, b, c } => {
            let (a, b, c) = (constant(a)?, constant(b)?, constant(c)?);
            if !ty.is_float() {
                return None;
            }
            ops::fma(ty, a.bits, b.bits, c.bits).ok()?
        }
        Op::Ternary { op, ty, a, b, c } => {
            let (a, b, c) = (constant(a)?, constant(b)?, constant(c)?);
            if !ty.is_int() {
                return None;
            }
            ops::ternary(*op, ops::width(ty), a.bits, b.bits, c.bits)
        }
        Op::Icmp { pred, ty, lhs, rhs } => {
            let (a, b) = (constant(lhs)?, constant(rhs)?);
            if !ty.is_int() {
                return None;
            }
            return Some(Const { ty: Type::I1, bits: u64::from(ops::icmp(*pred, ops::width(ty), a.bits, b.bits)) });
        }
        Op::Fcmp { pred, ty, lhs, rhs } => {
            let (a, b) = (constant(lhs)?, constant(rhs)?);
            if !ty.is_float() {
                return None;
            }
            return Some(Const { ty: Type::I1, bits: u64::from(ops::fcmp(*pred, ty, a.bits, b.bits)) });
        }
        Op::Cast { op, from, arg, to } => {
            let a = constant(arg)?;
            if !foldable_type(from) || !foldable_type(to) {
                return None;
            }
            ops::cast(*op, from, to, a.bits).ok()?
        }
        _ => return None,
    };
    let ty = match op {
        Op::Unary { ty, .. } | Op::Fma { ty, .. } | Op::Ternary { ty, .. } => ty.clone(),
        Op::Cast { to, .. } => to.clone(),
        _ => return None,
    };
    Some(Const { bits: bits & ops::mask(ops::width(&ty)), ty })
}
