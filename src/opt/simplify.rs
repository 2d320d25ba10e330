//! simplify: constant folding and propagation, algebraic identities and the
//! cheap strength reductions, in one walk over the blocks in reverse
//! postorder (so an instruction's operands are simplified before it).
//!
//! Block parameters that every edge still taken passes the same operand
//! become that operand. An instruction either stays, is rewritten in place into a cheaper one
//! (`mul x, 8` into `shl x, 3`), or disappears, its uses reading another
//! operand instead (a constant, or a value it merely passes on). Every rule
//! keeps the exact MIR semantics of docs/mir-semantics.md, undefined
//! behaviour aside: float rules are only the bit-exact ones (`x + -0.0`,
//! `x - +0.0`, `x * 1.0`, `x / 1.0`; NaN payloads are unspecified), integer
//! rules hold for every bit pattern.

use super::fold::{self, foldable_type};
use super::known::{known_nonnegative, known_trailing_zeros};
use super::rewrite::{remove_marked, definitions, defining_op, reverse_postorder, Def, Subst};
use crate::abi::Type;
use crate::mir::interp::ops::{mask, sext, width};
use crate::mir::ir::{op_operands_mut, BinOp, CastOp, Const, Data, Function, IntPred, Op, Operand, Terminator, UnOp};

/// What becomes of one instruction.
pub(super) enum Outcome {
    Keep,
    /// Rewritten into a cheaper operation with the same result.
    Replace(Op),
    /// Removed: its result is this operand.
    Forward(Operand),
}

pub fn run(func: &mut Function) -> bool {
    run_with_data(func, &[])
}

/// [`run`], with loads of the module's read-only `data` at constant offsets
/// folded into their values.
pub fn run_with_data(func: &mut Function, data: &[Data]) -> bool {
    walk(func, data, true)
}

/// Only the block-parameter rule, with every edge counted as taken, and
/// no instruction folded or rewritten (what -O0 runs: selection still sees
/// every instruction as written, but not the moves of parameters that
/// merely pass a value on).
pub fn parameters(func: &mut Function) -> bool {
    walk(func, &[], false)
}

/// The walk; `fold`: the instruction rules and constant branch conditions
/// too.
fn walk(func: &mut Function, data: &[Data], fold: bool) -> bool {
    let order = reverse_postorder(func);
    let defs = if fold { definitions(func) } else { Vec::new() };
    let mut subst = Subst::new(func);
    let mut removed: Vec<Vec<bool>> = func.blocks.iter().map(|b| vec![false; b.insts.len()]).collect();
    let mut changed = false;
    // Dominance, for replacing a parameter by a value: an edge the walk
    // knows is not taken is still in the CFG, so the value must dominate the
    // block by itself.
    let cfg = crate::mir::cfg::Cfg::new(func);
    let intervals = crate::mir::cfg::dominator_intervals(&cfg.dominators(), 0);
    let def_block = func.defining_blocks();
    let dominates_block = |o: &Operand, b: usize| match o {
        Operand::Const(_) => true,
        Operand::Value(v) => match def_block.get(v.0 as usize).copied() {
            Some(usize::MAX) => true,
            // Strictly: a value of the block itself may come after a use.
            Some(d) if d < intervals.len() && d != b => crate::mir::cfg::interval_dominates(&intervals, d, b),
            _ => false,
        },
    };
    let mut reachable = vec![false; func.blocks.len()];
    order.iter().for_each(|&b| reachable[b] = true);
    let mut incoming: Vec<Vec<(usize, usize)>> = vec![Vec::new(); func.blocks.len()];
    for &p in &order {
        for (slot, s) in func.blocks[p].term.successors().into_iter().enumerate() {
            if let Some(list) = incoming.get_mut(s.0 as usize) {
                list.push((p, slot));
            }
        }
    }
    for &b in &order {
        // A block parameter that every edge still taken passes the same
        // operand (itself aside) is that operand. Edges of a `brif` on a
        // known constant that it does not take do not count, so constants
        // travel down chains of branches in one walk.
        for j in 0..func.blocks[b].params.len() {
            let param = func.blocks[b].params[j];
            if subst.resolve(&Operand::Value(param)) != Operand::Value(param) {
                continue;
            }
            let mut same: Option<Operand> = None;
            let mut agree = true;
            for &(p, slot) in &incoming[b] {
                let (call, taken) = match &func.blocks[p].term {
                    Terminator::Br(call) => (call, true),
                    Terminator::BrIf { cond, then_to, else_to } => {
                        let call = if slot == 0 { then_to } else { else_to };
                        let taken = match subst.resolve(cond) {
                            Operand::Const(c) if fold => (c.bits & 1 != 0) == (slot == 0),
                            _ => true,
                        };
                        (call, taken)
                    }
                    _ => continue,
                };
                if !taken {
                    continue;
                }
                let Some(arg) = call.args.get(j).map(|a| subst.resolve(a)) else { agree = false; break };
                if arg == Operand::Value(param) {
                    continue;
                }
                match &same {
                    None => same = Some(arg),
                    Some(s) if *s == arg => {}
                    _ => {
                        agree = false;
                        break;
                    }
                }
            }
            if let (true, Some(with)) = (agree, same.filter(|w| dominates_block(w, b))) {
                subst.set(param, with);
                changed = true;
            }
        }
        for i in 0..func.blocks[b].insts.len() {
            for operand in op_operands_mut(&mut func.blocks[b].insts[i].op) {
                changed |= subst.rewrite(operand);
            }
            let Some(result) = func.blocks[b].insts[i].result.filter(|_| fold) else { continue };
            let mut op = std::mem::replace(&mut func.blocks[b].insts[i].op, Op::Barrier);
            // A rewritten instruction may simplify again (`mul x, 1` after
            // reassociation); each round makes it cheaper, four are plenty.
            let mut forward = None;
            for _ in 0..4 {
                match simplify(&op, func, &defs, data) {
                    Outcome::Keep => break,
                    Outcome::Replace(new) => op = new,
                    Outcome::Forward(operand) => {
                        forward = Some(operand);
                        break;
                    }
                }
                changed = true;
            }
            if let Some(operand) = forward {
                subst.set(result, operand);
                removed[b][i] = true;
                changed = true;
            }
            func.blocks[b].insts[i].op = op;
        }
    }
    subst.apply(func);
    remove_marked(func, &removed);
    changed
}

fn int_const(ty: &Type, value: u64) -> Operand {
    Operand::Const(Const { ty: ty.clone(), bits: value & mask(width(ty)) })
}

fn as_const(operand: &Operand) -> Option<u64> {
    match operand {
        Operand::Const(c) => Some(c.bits),
        Operand::Value(_) => None,
    }
}

fn is_commutative(op: BinOp) -> bool {
    use BinOp::*;
    matches!(op, Add | Mul | MulHiS | MulHiU | And | Or | Xor | SMin | SMax | UMin | UMax | FAdd | FMul | FMin | FMax | Mul24S | Mul24U | AddSatS | AddSatU)
}

/// Operations where `(x op c1) op c2 == x op (c1 op c2)`.
fn is_associative_int(op: BinOp) -> bool {
    matches!(op, BinOp::Add | BinOp::Mul | BinOp::And | BinOp::Or | BinOp::Xor)
}

/// The rules for one operation whose operands are already rewritten.
pub(super) fn simplify(op: &Op, func: &Function, defs: &[Option<Def>], data: &[Data]) -> Outcome {
    if let Some(c) = fold::evaluate(op) {
        return Outcome::Forward(Operand::Const(c));
    }
    match op {
        Op::Load { ty, ptr, volatile: false, .. } if !data.is_empty() => match data_load(ty, ptr, func, defs, data) {
            Some(o) => o,
            None => Outcome::Keep,
        },
        Op::Binary { op: bop, ty, lhs, rhs } => {
            if is_commutative(*bop) && matches!(lhs, Operand::Const(_)) && matches!(rhs, Operand::Value(_)) {
                return Outcome::Replace(Op::Binary { op: *bop, ty: ty.clone(), lhs: rhs.clone(), rhs: lhs.clone() });
            }
            if ty.is_int() {
                int_binary(*bop, ty, lhs, rhs, func, defs)
            } else if ty.is_float() {
                float_binary(*bop, ty, lhs, rhs)
            } else {
                Outcome::Keep
            }
        }
        Op::Unary { op: uop, ty, arg } => match defining_op(func, defs, arg) {
            Some(Op::Unary { op: inner, ty: inner_ty, arg: x }) if inner == uop && inner_ty == ty && matches!(uop, UnOp::FNeg | UnOp::Not) => {
                Outcome::Forward(x.clone())
            }
            _ => Outcome::Keep,
        },
        Op::Select { ty, cond, if_true, if_false } => {
            if let Some(c) = as_const(cond) {
                return Outcome::Forward(if c & 1 != 0 { if_true.clone() } else { if_false.clone() });
            }
            if if_true == if_false {
                return Outcome::Forward(if_true.clone());
            }
            if *ty == Type::I1 && *func.operand_type(cond) == Type::I1 && as_const(if_true) == Some(1) && as_const(if_false) == Some(0) {
                return Outcome::Forward(cond.clone());
            }
            Outcome::Keep
        }
        Op::Icmp { pred, ty, lhs, rhs } if lhs == rhs && !matches!(ty, Type::Vector(..)) => {
            let always = matches!(pred, IntPred::Eq | IntPred::Sle | IntPred::Sge | IntPred::Ule | IntPred::Uge);
            Outcome::Forward(int_const(&Type::I1, u64::from(always)))
        }
        Op::Icmp { pred, ty, lhs, rhs } if !matches!(ty, Type::Vector(..)) && compare_of_select(*pred, ty, lhs, rhs, func, defs).is_some() => {
            compare_of_select(*pred, ty, lhs, rhs, func, defs).expect("checked by the guard")
        }
        Op::Icmp { pred, ty: Type::I64, lhs, rhs } => narrow_compare(*pred, lhs, rhs, func, defs),
        Op::Cast { op: cop, from, arg, to } => cast(*cop, from, arg, to, func, defs),
        Op::Extract { agg, index } => match defining_op(func, defs, agg) {
            Some(Op::Make { elems, .. }) => elems.get(*index as usize).map_or(Outcome::Keep, |e| Outcome::Forward(e.clone())),
            Some(Op::Insert { agg: inner, value, index: j }) => {
                if j == index {
                    Outcome::Forward(value.clone())
                } else {
                    Outcome::Replace(Op::Extract { agg: inner.clone(), index: *index })
                }
            }
            _ => Outcome::Keep,
        },
        Op::PtrAdd { ptr, offset } => {
            let Some(c) = as_const(offset) else { return Outcome::Keep };
            let offset_ty = func.operand_type(offset);
            let c = if *offset_ty == Type::I32 { sext(c, 32) } else { c as i64 };
            if c == 0 {
                return Outcome::Forward(ptr.clone());
            }
            // ptradd (ptradd p, c1), c2 = ptradd p, c1 + c2.
            if let Some(Op::PtrAdd { ptr: base, offset: Operand::Const(c1) }) = defining_op(func, defs, ptr) {
                let c1 = if c1.ty == Type::I32 { sext(c1.bits, 32) } else { c1.bits as i64 };
                let sum = c1.wrapping_add(c);
                let offset = if *offset_ty == Type::I32 && c1 == sext(c1 as u64, 32) && i32::try_from(sum).is_ok() {
                    int_const(&Type::I32, sum as u64)
                } else {
                    int_const(&Type::I64, sum as u64)
                };
                return Outcome::Replace(Op::PtrAdd { ptr: base.clone(), offset });
            }
            Outcome::Keep
        }
        _ => Outcome::Keep,
    }
}

fn int_binary(op: BinOp, ty: &Type, lhs: &Operand, rhs: &Operand, func: &Function, defs: &[Option<Def>]) -> Outcome {
    let w = width(ty);
    let m = mask(w);
    let zero = || Outcome::Forward(int_const(ty, 0));
    let same = || Outcome::Forward(lhs.clone());
    let binary = |op: BinOp, rhs: u64| Outcome::Replace(Op::Binary { op, ty: ty.clone(), lhs: lhs.clone(), rhs: int_const(ty, rhs) });
    if lhs == rhs {
        match op {
            BinOp::Sub | BinOp::Xor => return zero(),
            BinOp::And | BinOp::Or | BinOp::SMin | BinOp::SMax | BinOp::UMin | BinOp::UMax => return same(),
            _ => {}
        }
    }
    let Some(c) = as_const(rhs) else { return Outcome::Keep };
    let c = c & m;
    let power = (c != 0 && c & (c - 1) == 0).then(|| c.trailing_zeros());
    match op {
        BinOp::Add | BinOp::Or | BinOp::Xor | BinOp::Sub if c == 0 => return same(),
        BinOp::Shl | BinOp::LShr | BinOp::AShr | BinOp::RotL | BinOp::RotR if c.is_multiple_of(u64::from(w)) => return same(),
        BinOp::Shl | BinOp::LShr | BinOp::AShr | BinOp::RotL | BinOp::RotR if c >= u64::from(w) => return binary(op, c % u64::from(w)),
        BinOp::Sub => return binary(BinOp::Add, c.wrapping_neg()),
        BinOp::Mul | BinOp::And | BinOp::UMin if c == 0 => return zero(),
        BinOp::Mul | BinOp::UDiv | BinOp::SDiv if c == 1 => return same(),
        BinOp::URem | BinOp::SRem if c == 1 => return zero(),
        BinOp::Mul if power.is_some() => return binary(BinOp::Shl, u64::from(power.unwrap())),
        BinOp::UDiv if power.is_some() => return binary(BinOp::LShr, u64::from(power.unwrap())),
        BinOp::URem if power.is_some() => return binary(BinOp::And, c - 1),
        BinOp::And | BinOp::UMin if c == m => return same(),
        BinOp::Or | BinOp::UMax if c == m => return Outcome::Forward(int_const(ty, m)),
        BinOp::UMax if c == 0 => return same(),
        // `or x, c` with c below x's known low zero bits (clang's `or
        // disjoint` for `8 * i + 1`) is `add x, c`: one form for gvn to
        // share with the sums written as such, and one reassociate moves.
        BinOp::Or if c >> known_trailing_zeros(func, defs, lhs, 4).min(63) == 0 => return binary(BinOp::Add, c),
        _ => {}
    }
    // and (zext x), c = zext x when c keeps every bit x can have (clang's
    // SPIR-V writes `& 0xffffffff` after zero-extending 32-bit indices).
    if op == BinOp::And {
        if let Some(Op::Cast { op: CastOp::ZExt, from, .. }) = defining_op(func, defs, lhs) {
            let low = mask(from.bits());
            if from.bits() < w && c & low == low {
                return same();
            }
        }
    }
    // (x op c1) op c2 = x op (c1 op c2) for the associative operations, and
    // (x << c1) << c2 = x << (c1 + c2).
    if let Some(Op::Binary { op: inner, ty: inner_ty, lhs: x, rhs: Operand::Const(c1) }) = defining_op(func, defs, lhs) {
        if inner_ty == ty && *inner == op && is_associative_int(op) {
            if let Ok(bits) = crate::mir::interp::ops::int_binary(op, w, c1.bits, c) {
                return Outcome::Replace(Op::Binary { op, ty: ty.clone(), lhs: x.clone(), rhs: int_const(ty, bits) });
            }
        }
        if inner_ty == ty && *inner == BinOp::Shl && op == BinOp::Shl && c1.bits < u64::from(w) {
            let total = c1.bits + c;
            if total >= u64::from(w) {
                return zero();
            }
            return Outcome::Replace(Op::Binary { op, ty: ty.clone(), lhs: x.clone(), rhs: int_const(ty, total) });
        }
    }
    Outcome::Keep
}

fn float_binary(op: BinOp, ty: &Type, lhs: &Operand, rhs: &Operand) -> Outcome {
    let Some(c) = as_const(rhs) else { return Outcome::Keep };
    let sign = 1u64 << (width(ty) - 1);
    let one = match ty {
        Type::F16 => 0x3c00,
        Type::F32 => u64::from(1f32.to_bits()),
        _ => 1f64.to_bits(),
    };
    match op {
        BinOp::FAdd if c == sign => Outcome::Forward(lhs.clone()),
        BinOp::FSub if c == 0 => Outcome::Forward(lhs.clone()),
        BinOp::FMul | BinOp::FDiv if c == one => Outcome::Forward(lhs.clone()),
        _ => Outcome::Keep,
    }
}

fn cast(op: CastOp, from: &Type, arg: &Operand, to: &Type, func: &Function, defs: &[Option<Def>]) -> Outcome {
    if !foldable_type(from) || !foldable_type(to) {
        return Outcome::Keep;
    }
    if from == to && matches!(op, CastOp::Bitcast | CastOp::ZExt | CastOp::SExt | CastOp::Trunc) {
        return Outcome::Forward(arg.clone());
    }
    if op == CastOp::SExt && from.is_int() && known_nonnegative(func, defs, arg, from, 4) {
        return Outcome::Replace(Op::Cast { op: CastOp::ZExt, from: from.clone(), arg: arg.clone(), to: to.clone() });
    }
    let Some(Op::Cast { op: inner, from: inner_from, arg: x, to: inner_to }) = defining_op(func, defs, arg) else { return Outcome::Keep };
    if inner_to != from || !inner_from.is_int() || !from.is_int() || !to.is_int() {
        return Outcome::Keep;
    }
    let cast = |op: CastOp| Outcome::Replace(Op::Cast { op, from: inner_from.clone(), arg: x.clone(), to: to.clone() });
    match (inner, op) {
        (CastOp::ZExt, CastOp::ZExt) | (CastOp::SExt, CastOp::SExt) | (CastOp::Trunc, CastOp::Trunc) => cast(op),
        // A zero-extended value's sign bit is 0.
        (CastOp::ZExt, CastOp::SExt) => cast(CastOp::ZExt),
        (CastOp::ZExt | CastOp::SExt, CastOp::Trunc) => {
            if to == inner_from {
                Outcome::Forward(x.clone())
            } else if to.bits() < inner_from.bits() {
                cast(CastOp::Trunc)
            } else {
                cast(*inner)
            }
        }
        _ => Outcome::Keep,
    }
}

/// A load from read-only module data at a constant offset (`ptradd`s of
/// constants from a `data_addr`): the bytes' value, a scalar or a vector of
/// scalars, little-endian. Outside the object, it stays (the load is
/// undefined; the interpreter reports it).
fn data_load(ty: &Type, ptr: &Operand, func: &Function, defs: &[Option<Def>], data: &[Data]) -> Option<Outcome> {
    let mut offset: i64 = 0;
    let mut at = ptr.clone();
    let name = loop {
        match defining_op(func, defs, &at)? {
            Op::DataAddr { name, .. } => break name,
            Op::PtrAdd { ptr, offset: Operand::Const(c) } => {
                let add = if c.ty == Type::I32 { c.bits as u32 as i32 as i64 } else { c.bits as i64 };
                offset = offset.checked_add(add)?;
                at = ptr.clone();
            }
            _ => return None,
        }
    };
    let object = data.iter().find(|d| d.name == *name && !d.writable)?;
    let scalar = |t: &Type, at: i64| -> Option<Const> {
        if !(t.is_int() || t.is_float()) || *t == Type::I1 {
            return None;
        }
        let size = (t.bits() / 8) as usize;
        let start = usize::try_from(at).ok()?;
        if object.holds_address_in(start as u64, size as u64) {
            return None;
        }
        let bytes = object.bytes.get(start..start.checked_add(size)?)?;
        let mut word = [0u8; 8];
        word[..size].copy_from_slice(bytes);
        Some(Const { ty: t.clone(), bits: u64::from_le_bytes(word) })
    };
    match ty {
        Type::Vector(elem, n) => {
            let step = i64::from(elem.bits() / 8);
            let elems = (0..i64::from(*n)).map(|i| scalar(elem, offset + i * step).map(Operand::Const)).collect::<Option<Vec<_>>>()?;
            Some(Outcome::Replace(Op::Make { ty: ty.clone(), elems }))
        }
        t => Some(Outcome::Forward(Operand::Const(scalar(t, offset)?))),
    }
}

/// A compare of `select c, k1, k2` (constant arms) with a constant: the
/// compare of each arm is known, so the result is c, its negation, or a
/// constant (`select c, 1, 0` tested against 0, as clang writes flags).
fn compare_of_select(pred: IntPred, ty: &Type, lhs: &Operand, rhs: &Operand, func: &Function, defs: &[Option<Def>]) -> Option<Outcome> {
    let arms = |o: &Operand| match defining_op(func, defs, o) {
        Some(Op::Select { cond, if_true: t @ Operand::Const(_), if_false: f @ Operand::Const(_), .. }) if *func.operand_type(cond) == Type::I1 => Some((cond.clone(), t.clone(), f.clone())),
        _ => None,
    };
    let (cond, on_true, on_false) = match (lhs, rhs) {
        (Operand::Value(_), Operand::Const(_)) => {
            let (c, t, f) = arms(lhs)?;
            let at = |arm: Operand| Op::Icmp { pred, ty: ty.clone(), lhs: arm, rhs: rhs.clone() };
            (c, at(t), at(f))
        }
        (Operand::Const(_), Operand::Value(_)) => {
            let (c, t, f) = arms(rhs)?;
            let at = |arm: Operand| Op::Icmp { pred, ty: ty.clone(), lhs: lhs.clone(), rhs: arm };
            (c, at(t), at(f))
        }
        _ => return None,
    };
    let (t, f) = (fold::evaluate(&on_true)?.bits & 1, fold::evaluate(&on_false)?.bits & 1);
    Some(match (t, f) {
        (1, 0) => Outcome::Forward(cond),
        (0, 1) => Outcome::Replace(Op::Unary { op: UnOp::Not, ty: Type::I1, arg: cond }),
        (k, _) => Outcome::Forward(int_const(&Type::I1, k)),
    })
}

/// `icmp i64` of two 32-bit values extended alike (or constants that fit)
/// is the `icmp i32` of the values: zero-extended ones lie in [0, 2^32),
/// where signed and unsigned order agree; sign-extended ones keep both
/// orders of i32.
fn narrow_compare(pred: IntPred, lhs: &Operand, rhs: &Operand, func: &Function, defs: &[Option<Def>]) -> Outcome {
    let narrow = |o: &Operand, signed: bool| -> Option<Operand> {
        match o {
            Operand::Const(c) => {
                let fits = if signed { c.bits as i64 == c.bits as i32 as i64 } else { c.bits >> 32 == 0 };
                fits.then(|| int_const(&Type::I32, c.bits))
            }
            Operand::Value(_) => match defining_op(func, defs, o) {
                Some(Op::Cast { op, from: Type::I32, arg, to: Type::I64 }) if *op == if signed { CastOp::SExt } else { CastOp::ZExt } => Some(arg.clone()),
                _ => None,
            },
        }
    };
    for signed in [false, true] {
        let (Some(a), Some(b)) = (narrow(lhs, signed), narrow(rhs, signed)) else { continue };
        if matches!((&a, &b), (Operand::Const(_), Operand::Const(_))) {
            continue;
        }
        let pred = if signed {
            pred
        } else {
            match pred {
                IntPred::Slt => IntPred::Ult,
                IntPred::Sle => IntPred::Ule,
                IntPred::Sgt => IntPred::Ugt,
                IntPred::Sge => IntPred::Uge,
                other => other,
            }
        };
        return Outcome::Replace(Op::Icmp { pred, ty: Type::I32, lhs: a, rhs: b });
    }
    Outcome::Keep
}
