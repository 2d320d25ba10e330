//! reassociate: constants in address arithmetic move outwards, towards the
//! access, where selection puts them in the instruction's offset field.
//! `vload8(i + 64, x)` is `x + (i + 64) * 32` in SPIR-V; the access wants
//! `(x + i * 32) + 2048`, whose inner sum gvn then shares with `x[i]`'s.
//!
//! - `mul (add x, c1), c2` and `shl (add x, c1), c2` with the add used only
//!   there: `add (mul x, c2), c1 * c2` (or the shift). Exact in modular
//!   arithmetic, for every integer type.
//! - `ptradd p, (add x, c)` with an i64 offset: `ptradd (ptradd p, x), c`.
//!   Pointers wrap like i64 (a 32-bit pointer takes the offset's low half),
//!   so this is exact too; an i32 offset is sign-extended after its add,
//!   which splitting would not be, so those stay.
//! - `ptradd (ptradd s, x), y` where `s` is an `lds_slot` and `x`, `y` are
//!   values of one type: `ptradd s, (add x, y)`. Local pointers are 32 bits
//!   and wrap, so this is exact. Selection puts a slot's address in the DS
//!   offset field, so the sum is the only register: two `__local` arrays
//!   indexed alike (`a[ty][tx]`, `b[ty][tx]`) share it after gvn, and their
//!   stores pair into one `ds_write2` (matmul's tiles, as llc-22 has them).

use super::rewrite::{replace_ops, use_counts, Names};
use crate::abi::Type;
use crate::mir::interp::ops::mask;
use crate::mir::ir::{BinOp, Const, Function, Inst, Op, Operand, Value};

/// `add x, c` (the sum's definition, when it is one).
fn added_constant(defs: &[Option<(Operand, u64)>], o: &Operand) -> Option<(Operand, u64)> {
    match o {
        Operand::Value(v) => defs.get(v.0 as usize).cloned().flatten(),
        Operand::Const(_) => None,
    }
}

pub fn run(func: &mut Function) -> bool {
    let uses = use_counts(func);
    let mut sums: Vec<Option<(Operand, u64)>> = vec![None; func.values.len()];
    for block in &func.blocks {
        for inst in &block.insts {
            if let (Some(r), Op::Binary { op: BinOp::Add, ty, lhs: x @ Operand::Value(_), rhs: Operand::Const(c) }) = (inst.result, &inst.op) {
                if ty.is_int() {
                    sums[r.0 as usize] = Some((x.clone(), c.bits));
                }
            }
        }
    }
    // `ptradd s, x` of an lds_slot `s` by a value `x`: (s, x).
    let mut slot_sums: Vec<Option<(Operand, Operand)>> = vec![None; func.values.len()];
    let slots: Vec<bool> = {
        let mut slots = vec![false; func.values.len()];
        for inst in func.blocks.iter().flat_map(|b| &b.insts) {
            if let (Some(r), Op::LdsSlot { .. }) = (inst.result, &inst.op) {
                slots[r.0 as usize] = true;
            }
        }
        slots
    };
    for inst in func.blocks.iter().flat_map(|b| &b.insts) {
        if let (Some(r), Op::PtrAdd { ptr: s @ Operand::Value(p), offset: x @ Operand::Value(_) }) = (inst.result, &inst.op) {
            if slots[p.0 as usize] {
                slot_sums[r.0 as usize] = Some((s.clone(), x.clone()));
            }
        }
    }
    let mut names = Names::default();
    replace_ops(func, |func, out, inst| {
        let span = inst.span;
        let mut push = |func: &mut Function, out: &mut Vec<Inst>, op: Op, ty: Type| -> Operand {
            let v: Value = names.fresh(func, ty, "r");
            out.push(Inst { result: Some(v), op, span });
            Operand::Value(v)
        };
        match &inst.op {
            Op::Binary { op: op @ (BinOp::Mul | BinOp::Shl), ty, lhs: Operand::Value(a), rhs: Operand::Const(c2) } if ty.is_int() && uses[a.0 as usize] == 1 && (*op == BinOp::Mul || c2.bits < u64::from(ty.bits())) => {
                match added_constant(&sums, &Operand::Value(*a)) {
                    Some((x, c1)) => {
                        let m = mask(ty.bits());
                        let scaled = if *op == BinOp::Mul { c1.wrapping_mul(c2.bits) } else { c1 << c2.bits } & m;
                        let product = push(func, out, Op::Binary { op: *op, ty: ty.clone(), lhs: x, rhs: Operand::Const(c2.clone()) }, ty.clone());
                        Some(Op::Binary { op: BinOp::Add, ty: ty.clone(), lhs: product, rhs: Operand::Const(Const { ty: ty.clone(), bits: scaled }) })
                    }
                    None => None,
                }
            }
            Op::PtrAdd { ptr, offset } if *func.operand_type(offset) == Type::I64 => match added_constant(&sums, offset) {
                Some((x, c)) => {
                    let ty = func.operand_type(ptr).clone();
                    let inner = push(func, out, Op::PtrAdd { ptr: ptr.clone(), offset: x }, ty);
                    Some(Op::PtrAdd { ptr: inner, offset: Operand::Const(Const { ty: Type::I64, bits: c }) })
                }
                None => None,
            },
            Op::PtrAdd { ptr: Operand::Value(p), offset: y @ Operand::Value(_) } => match slot_sums.get(p.0 as usize).and_then(Option::as_ref) {
                Some((slot, x)) if func.operand_type(x) == func.operand_type(y) => {
                    let ty = func.operand_type(x).clone();
                    let sum = push(func, out, Op::Binary { op: BinOp::Add, ty: ty.clone(), lhs: x.clone(), rhs: y.clone() }, ty);
                    Some(Op::PtrAdd { ptr: slot.clone(), offset: sum })
                }
                _ => None,
            },
            _ => None,
        }
    })
}
