//! narrow: 64-bit integer arithmetic whose high half nobody needs is done in
//! 32 bits, and the shift pairs front ends write for sign and zero
//! extensions become the extensions. OpenCL's `size_t` indexing makes every
//! address computation 64-bit in SPIR-V (and in LLVM IR); on AMDGPU a 64-bit
//! operation is two to four instructions and a register pair.
//!
//! - `trunc (op a, b) to i32` with `op` one of add, sub, mul, and, or, xor
//!   (the low 32 bits of the result depend only on the low 32 bits of the
//!   operands), `a`/`b` i64 and the wide result used only there: the
//!   operation on `trunc a`, `trunc b`; `shl` by a constant below 32 too.
//!   simplify then folds `trunc (zext x)` to `x`, and the next round narrows
//!   the operands' own operations: chains narrow from their use upwards.
//! - `and x, 0xffffffff` (i64): `zext (trunc x)`; `and x, c` with a smaller
//!   constant: `zext (and (trunc x), c)`.
//! - `ashr (shl x, k), c` (c ≤ k, the width minus k being 8, 16 or 32):
//!   `shl (sext (trunc x)), k - c`; `lshr (shl x, k), k`: `and x, 2^(w-k)-1`.
//! - `umin`/`umax`/`smin`/`smax` (i64) of `zext x` (from i32) and a
//!   constant below 2^32: `zext (umin|umax x, c)`.
//! - A non-volatile vector load read only by `extract`s of one element: a
//!   load of that element (`ptradd` by its offset, the alignment the offset
//!   allows), its readers reading it.

use super::rewrite::{replace_ops, use_counts, Names};
use crate::abi::Type;
use crate::mir::interp::ops::mask;
use crate::mir::ir::{BinOp, CastOp, Const, Function, Inst, Op, Operand, Value};

fn narrow_type(bits: u32) -> Option<Type> {
    match bits {
        8 => Some(Type::I8),
        16 => Some(Type::I16),
        32 => Some(Type::I32),
        _ => None,
    }
}


/// The defining operation of each value defined by an instruction.
fn defining_ops(func: &Function) -> Vec<Option<Op>> {
    let mut defs = vec![None; func.values.len()];
    for block in &func.blocks {
        for inst in &block.insts {
            // Only what the rules look at: i64 operations, shifts and
            // zero extensions to i64.
            match (inst.result, &inst.op) {
                (Some(r), Op::Binary { op, ty, .. }) if *ty == Type::I64 || *op == BinOp::Shl => defs[r.0 as usize] = Some(inst.op.clone()),
                (Some(r), Op::Cast { op: CastOp::ZExt, from: Type::I32, to: Type::I64, .. }) => defs[r.0 as usize] = Some(inst.op.clone()),
                _ => {}
            }
        }
    }
    defs
}

pub fn run(func: &mut Function) -> bool {
    let loads = narrow_loads(func);
    narrow_operations(func) | loads
}

/// A non-volatile load of a vector that is read only by `extract`s of one
/// element becomes a load of that element at its offset, and the extracts'
/// readers read it: selection splits a vector load into its elements'
/// accesses and the unread ones stayed (OpenCL's `c[0].y` of an `int2`).
fn narrow_loads(func: &mut Function) -> bool {
    const NONE: u32 = u32::MAX;
    const MANY: u32 = u32::MAX - 1;
    let wanted = |i: &Inst| matches!(&i.op, Op::Load { ty: Type::Vector(elem, _), volatile: false, .. } if **elem != Type::I1);
    if !func.blocks.iter().flat_map(|b| &b.insts).any(wanted) {
        return false;
    }
    // Per value: the one element every reader extracts (NONE: unread,
    // MANY: another reader or other elements).
    let mut element = vec![NONE; func.values.len()];
    for block in &func.blocks {
        for inst in &block.insts {
            let extracted = match &inst.op {
                Op::Extract { agg: Operand::Value(v), index } => Some((*v, *index)),
                _ => None,
            };
            for operand in crate::mir::ir::op_operands(&inst.op) {
                if let Operand::Value(v) = operand {
                    let e = &mut element[v.0 as usize];
                    *e = match extracted {
                        Some((a, index)) if a == *v && (*e == NONE || *e == index) => index,
                        _ => MANY,
                    };
                }
            }
        }
        for operand in crate::mir::ir::terminator_operands(&block.term) {
            if let Operand::Value(v) = operand {
                element[v.0 as usize] = MANY;
            }
        }
    }
    // The loads to narrow, and each extract's result: the load's.
    let mut narrowed = vec![false; func.values.len()];
    let mut read_as: Vec<Option<Value>> = vec![None; func.values.len()];
    let mut gone: Vec<Vec<bool>> = Vec::with_capacity(func.blocks.len());
    for block in &func.blocks {
        for inst in &block.insts {
            if let (Some(r), true) = (inst.result, wanted(inst)) {
                narrowed[r.0 as usize] = element[r.0 as usize] < MANY;
            }
        }
        gone.push(
            block
                .insts
                .iter()
                .map(|inst| match (&inst.op, inst.result) {
                    (Op::Extract { agg: Operand::Value(v), .. }, Some(x)) if narrowed[v.0 as usize] => {
                        read_as[x.0 as usize] = Some(*v);
                        true
                    }
                    _ => false,
                })
                .collect(),
        );
    }
    if !narrowed.contains(&true) {
        return false;
    }
    super::rewrite::remove_marked(func, &gone);
    let mut names = Names::default();
    replace_ops(func, |func, out, inst| {
        let (Some(r), Op::Load { ty: Type::Vector(elem, _), ptr, align, volatile: false }) = (inst.result, &inst.op) else { return None };
        if !narrowed[r.0 as usize] {
            return None;
        }
        let elem = (**elem).clone();
        let offset = element[r.0 as usize] * elem.size();
        let ptr = if offset == 0 {
            ptr.clone()
        } else {
            let ty = func.operand_type(ptr).clone();
            let p: Value = names.fresh(func, ty, "n");
            out.push(Inst { result: Some(p), op: Op::PtrAdd { ptr: ptr.clone(), offset: Operand::Const(Const { ty: Type::I32, bits: u64::from(offset) }) }, span: inst.span });
            Operand::Value(p)
        };
        // The element's alignment: the vector's, or less at an offset.
        let align = if offset == 0 { *align } else { (*align).min(1 << offset.trailing_zeros()) };
        func.values[r.0 as usize].ty = elem.clone();
        Some(Op::Load { ty: elem, ptr, align, volatile: false })
    });
    for block in &mut func.blocks {
        let readers = block.insts.iter_mut().flat_map(|i| crate::mir::ir::op_operands_mut(&mut i.op)).chain(crate::mir::ir::terminator_operands_mut(&mut block.term));
        for operand in readers {
            if let Operand::Value(v) = operand {
                if let Some(&Some(load)) = read_as.get(v.0 as usize) {
                    *v = load;
                }
            }
        }
    }
    true
}

fn narrow_operations(func: &mut Function) -> bool {
    // Most functions have nothing the rules below look at: one look at the
    // operations instead of counting uses and rebuilding every block (on a
    // million 32-bit operations the pass cost 760 executed instructions
    // per operation to change nothing).
    let candidate = |op: &Op| match op {
        Op::Cast { op: CastOp::Trunc, from: Type::I64, to: Type::I32, .. } => true,
        Op::Binary { op: BinOp::And, ty: Type::I64, rhs: Operand::Const(_), .. } => true,
        Op::Binary { op: BinOp::AShr | BinOp::LShr, ty, rhs: Operand::Const(_), .. } => ty.is_int(),
        Op::Binary { op: BinOp::UMin | BinOp::UMax | BinOp::SMin | BinOp::SMax, ty: Type::I64, rhs: Operand::Const(c), .. } => c.bits <= 0xffff_ffff,
        _ => false,
    };
    if !func.blocks.iter().flat_map(|b| &b.insts).any(|i| candidate(&i.op)) {
        return false;
    }
    let uses = use_counts(func);
    let defs = defining_ops(func);
    let def_of = |o: &Operand| -> Option<&Op> {
        match o {
            Operand::Value(v) => defs.get(v.0 as usize).and_then(|d| d.as_ref()),
            Operand::Const(_) => None,
        }
    };
    let single_use = |o: &Operand| matches!(o, Operand::Value(v) if uses[v.0 as usize] == 1);
    let mut names = Names::default();
    replace_ops(func, |func, out, inst| {
        let span = inst.span;
        let mut push = |func: &mut Function, out: &mut Vec<Inst>, op: Op, ty: Type| -> Operand {
            let v: Value = names.fresh(func, ty, "n");
            out.push(Inst { result: Some(v), op, span });
            Operand::Value(v)
        };
        match &inst.op {
            Op::Cast { op: CastOp::Trunc, from: Type::I64, arg, to: Type::I32 } if single_use(arg) => match def_of(arg) {
                Some(Op::Binary { op, ty: Type::I64, lhs, rhs })
                    if matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::And | BinOp::Or | BinOp::Xor)
                        || (*op == BinOp::Shl && matches!(rhs, Operand::Const(c) if c.bits < 32)) =>
                {
                    let (op, lhs, rhs) = (*op, lhs.clone(), rhs.clone());
                    let mut narrow = |func: &mut Function, out: &mut Vec<Inst>, o: Operand| match o {
                        Operand::Const(c) => Operand::Const(Const { ty: Type::I32, bits: c.bits & 0xffff_ffff }),
                        v => push(func, out, Op::Cast { op: CastOp::Trunc, from: Type::I64, arg: v, to: Type::I32 }, Type::I32),
                    };
                    let a = narrow(func, out, lhs);
                    let c = narrow(func, out, rhs);
                    Some(Op::Binary { op, ty: Type::I32, lhs: a, rhs: c })
                }
                _ => None,
            },
            // `and x, 0xffffffff` on i64 is `zext (trunc x)`: the high
            // half is a known zero (no instruction on AMDGPU) and the
            // truncation lets the operations below narrow too.
            Op::Binary { op: BinOp::And, ty: Type::I64, lhs: x @ Operand::Value(_), rhs: Operand::Const(c) } if c.bits == 0xffff_ffff => {
                let t = push(func, out, Op::Cast { op: CastOp::Trunc, from: Type::I64, arg: x.clone(), to: Type::I32 }, Type::I32);
                Some(Op::Cast { op: CastOp::ZExt, from: Type::I32, arg: t, to: Type::I64 })
            }
            // Any mask of the low 32 bits too: `zext (and (trunc x), c)`,
            // so that an index like `(i & 1) * 8` (OpenCL's size_t
            // arithmetic) is a zero-extended 32-bit value, which addresses
            // take as the 32-bit offset of an SGPR base.
            Op::Binary { op: BinOp::And, ty: Type::I64, lhs: x @ Operand::Value(_), rhs: Operand::Const(c) } if c.bits < 0xffff_ffff => {
                let t = push(func, out, Op::Cast { op: CastOp::Trunc, from: Type::I64, arg: x.clone(), to: Type::I32 }, Type::I32);
                let a = push(func, out, Op::Binary { op: BinOp::And, ty: Type::I32, lhs: t, rhs: Operand::Const(Const { ty: Type::I32, bits: c.bits }) }, Type::I32);
                Some(Op::Cast { op: CastOp::ZExt, from: Type::I32, arg: a, to: Type::I64 })
            }
            // A bound on a zero-extended i32 by a constant below 2^32
            // (OpenCL's `min(g, 61)` on a size_t): the bound in 32 bits,
            // extended. Both sides are non-negative i64 values, so the
            // signed bounds are the unsigned ones.
            Op::Binary { op: op @ (BinOp::UMin | BinOp::UMax | BinOp::SMin | BinOp::SMax), ty: Type::I64, lhs, rhs: Operand::Const(c) } if c.bits <= 0xffff_ffff => match def_of(lhs) {
                Some(Op::Cast { op: CastOp::ZExt, from: Type::I32, arg: x, to: Type::I64 }) => {
                    let op = if matches!(op, BinOp::UMin | BinOp::SMin) { BinOp::UMin } else { BinOp::UMax };
                    let b = push(func, out, Op::Binary { op, ty: Type::I32, lhs: x.clone(), rhs: Operand::Const(Const { ty: Type::I32, bits: c.bits }) }, Type::I32);
                    Some(Op::Cast { op: CastOp::ZExt, from: Type::I32, arg: b, to: Type::I64 })
                }
                _ => None,
            },
            Op::Binary { op: outer @ (BinOp::AShr | BinOp::LShr), ty, lhs, rhs: Operand::Const(c) } if ty.is_int() => match def_of(lhs) {
                Some(Op::Binary { op: BinOp::Shl, ty: inner_ty, lhs: x, rhs: Operand::Const(k) }) if inner_ty == ty && k.bits < u64::from(ty.bits()) && c.bits <= k.bits => {
                    let (w, k, c) = (ty.bits(), k.bits as u32, c.bits as u32);
                    match (outer, narrow_type(w - k)) {
                        (BinOp::AShr, Some(small)) => {
                            let t = push(func, out, Op::Cast { op: CastOp::Trunc, from: ty.clone(), arg: x.clone(), to: small.clone() }, small.clone());
                            let wide_ty = ty.clone();
                            if k == c {
                                Some(Op::Cast { op: CastOp::SExt, from: small, arg: t, to: wide_ty })
                            } else {
                                let s = push(func, out, Op::Cast { op: CastOp::SExt, from: small, arg: t, to: wide_ty.clone() }, wide_ty.clone());
                                Some(Op::Binary { op: BinOp::Shl, ty: wide_ty.clone(), lhs: s, rhs: Operand::Const(Const { ty: wide_ty, bits: u64::from(k - c) }) })
                            }
                        }
                        (BinOp::LShr, _) if k == c => Some(Op::Binary { op: BinOp::And, ty: ty.clone(), lhs: x.clone(), rhs: Operand::Const(Const { ty: ty.clone(), bits: mask(w - k) }) }),
                        _ => None,
                    }
                }
                _ => None,
            },
            _ => None,
        }
    })
}
