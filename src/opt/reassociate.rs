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
//! - `zext`/`sext` i32 to i64 of `or x, c` or `add x, c` where `c` fits
//!   below the low bits known to be 0 in `x` (`out[4 * g + 1]`: clang's
//!   SPIR-V has `zext (or (shl g, 2), 1)`), when the extension is only an
//!   address offset (a `ptradd`'s, or scaled by a constant): `add (zext x),
//!   c`. The sum carries out of no bit, so it is `x | c` and never wraps,
//!   and `x | c` has `x`'s sign bit: both extensions distribute. The rules
//!   above then take the constant to the access (`ptradd (ptradd p, x*4),
//!   4`), where gvn shares `x`'s address and merge joins neighbouring
//!   accesses.
//! - `ptradd (ptradd s, x), y` where `s` is an `lds_slot` and `x`, `y` are
//!   values of one type: `ptradd s, (add x, y)`. Local pointers are 32 bits
//!   and wrap, so this is exact. Selection puts a slot's address in the DS
//!   offset field, so the sum is the only register: two `__local` arrays
//!   indexed alike (`a[ty][tx]`, `b[ty][tx]`) share it after gvn, and their
//!   stores pair into one `ds_write2` (matmul's tiles, as llc-22 has them).

use super::known::known_trailing_zeros;
use super::rewrite::{definitions, replace_ops, use_counts, Names};
use crate::abi::Type;
use crate::mir::interp::ops::mask;
use crate::mir::ir::{BinOp, CastOp, Const, Function, Inst, Op, Operand, Value};

/// `add x, c` (the sum's definition, when it is one).
fn added_constant(defs: &[Option<(Value, u64)>], o: &Operand) -> Option<(Operand, u64)> {
    match o {
        Operand::Value(v) => defs.get(v.0 as usize).copied().flatten().map(|(x, c)| (Operand::Value(x), c)),
        Operand::Const(_) => None,
    }
}

pub fn run(func: &mut Function) -> bool {
    // The tables below are per value; on a long function they are most of
    // the pass's memory traffic, so each is built only when an instruction
    // it serves exists (and sums, read by every rule, is compact).
    let mut sums: Vec<Option<(Value, u64)>> = vec![None; func.values.len()];
    let (mut any_slot, mut any_extension) = (false, false);
    for block in &func.blocks {
        for inst in &block.insts {
            match (inst.result, &inst.op) {
                (Some(r), Op::Binary { op: BinOp::Add, ty, lhs: Operand::Value(x), rhs: Operand::Const(c) }) if ty.is_int() => {
                    sums[r.0 as usize] = Some((*x, c.bits));
                }
                (_, Op::LdsSlot { .. }) => any_slot = true,
                (_, Op::Cast { op: CastOp::ZExt | CastOp::SExt, from: Type::I32, to: Type::I64, .. }) => any_extension = true,
                _ => {}
            }
        }
    }
    // `ptradd s, x` of an lds_slot `s` by a value `x`: (s, x).
    let mut slot_sums: Vec<Option<(Operand, Operand)>> = Vec::new();
    if any_slot {
        slot_sums = vec![None; func.values.len()];
        let mut slots = vec![false; func.values.len()];
        for inst in func.blocks.iter().flat_map(|b| &b.insts) {
            if let (Some(r), Op::LdsSlot { .. }) = (inst.result, &inst.op) {
                slots[r.0 as usize] = true;
            }
        }
        for inst in func.blocks.iter().flat_map(|b| &b.insts) {
            if let (Some(r), Op::PtrAdd { ptr: s @ Operand::Value(p), offset: x @ Operand::Value(_) }) = (inst.result, &inst.op) {
                if slots[p.0 as usize] {
                    slot_sums[r.0 as usize] = Some((s.clone(), x.clone()));
                }
            }
        }
    }
    let (disjoint, address_only) = if any_extension { (disjoint_sums(func), address_offsets(func)) } else { (Vec::new(), Vec::new()) };
    let uses = use_counts(func);
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
                        // The new sum's constant goes on outwards in this run.
                        if let (Some(r), Operand::Value(p)) = (inst.result, &product) {
                            sums[r.0 as usize] = Some((*p, scaled));
                        }
                        Some(Op::Binary { op: BinOp::Add, ty: ty.clone(), lhs: product, rhs: Operand::Const(Const { ty: ty.clone(), bits: scaled }) })
                    }
                    None => None,
                }
            }
            Op::Cast { op: op @ (CastOp::ZExt | CastOp::SExt), from: Type::I32, arg: Operand::Value(a), to: Type::I64 } => match inst.result.and(disjoint.get(a.0 as usize).cloned().flatten()) {
                Some((x, c)) if address_only[inst.result.unwrap().0 as usize] => {
                    let wide = push(func, out, Op::Cast { op: *op, from: Type::I32, arg: x, to: Type::I64 }, Type::I64);
                    if let Operand::Value(w) = wide {
                        sums[inst.result.unwrap().0 as usize] = Some((w, c));
                    }
                    Some(Op::Binary { op: BinOp::Add, ty: Type::I64, lhs: wide, rhs: Operand::Const(Const { ty: Type::I64, bits: c }) })
                }
                _ => None,
            },
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

/// Per value: `(x, c)` when it is an i32 `or x, c` or `add x, c` whose
/// constant lies below the low bits known to be 0 in `x` (so the sum equals
/// `x | c`, never carries, and keeps `x`'s sign bit).
fn disjoint_sums(func: &Function) -> Vec<Option<(Operand, u64)>> {
    let defs = definitions(func);
    let mut out = vec![None; func.values.len()];
    for inst in func.blocks.iter().flat_map(|b| &b.insts) {
        if let (Some(r), Op::Binary { op: BinOp::Or | BinOp::Add, ty: Type::I32, lhs: x @ Operand::Value(_), rhs: Operand::Const(c) }) = (inst.result, &inst.op) {
            let zeros = known_trailing_zeros(func, &defs, x, 4).min(31);
            if c.bits != 0 && c.bits < 1 << zeros {
                out[r.0 as usize] = Some((x.clone(), c.bits));
            }
        }
    }
    out
}

/// Per value: true when every read of it is a `ptradd`'s offset or the
/// left operand of a multiply or left shift by a constant (an address being
/// scaled), so moving a constant out of it ends in an access's offset
/// rather than in 64-bit arithmetic of its own.
fn address_offsets(func: &Function) -> Vec<bool> {
    let mut ok = vec![true; func.values.len()];
    let mut read = vec![false; func.values.len()];
    for block in &func.blocks {
        for inst in &block.insts {
            let scaled = match &inst.op {
                Op::PtrAdd { offset: Operand::Value(v), .. } => Some(*v),
                Op::Binary { op: BinOp::Mul | BinOp::Shl, lhs: Operand::Value(v), rhs: Operand::Const(_), .. } => Some(*v),
                _ => None,
            };
            for operand in crate::mir::ir::op_operands(&inst.op) {
                if let Operand::Value(v) = operand {
                    read[v.0 as usize] = true;
                    if scaled != Some(*v) {
                        ok[v.0 as usize] = false;
                    }
                }
            }
        }
        for operand in crate::mir::ir::terminator_operands(&block.term) {
            if let Operand::Value(v) = operand {
                ok[v.0 as usize] = false;
            }
        }
    }
    ok.iter().zip(&read).map(|(&ok, &read)| ok && read).collect()
}
