//! promote: stack slots whose fields are only loaded and stored, each
//! always as one scalar type, become SSA values (block parameters where
//! paths with different stores meet), and their loads and stores disappear. clang's
//! `spirv64-amd-amdhsa` path hands over functions as clang wrote them before
//! its own optimiser: every argument and local in a slot, every read a load
//! (`vadd` was 190 instructions for it against 18 through `spirv64`).
//!
//! A slot qualifies when every use of it, of its casts to the generic
//! space and of its constant offsets (`ptradd` by a constant, again and
//! again), is the address of a non-volatile `load` or `store`, and the
//! accesses at each offset are of one type (an integer, float or pointer
//! type, or a vector of integers or floats; or integers and floats of one
//! size, which bitcasts turn into the first type seen there) inside the
//! slot, which is at most 64 bytes, without overlapping another offset's: a
//! struct copied into a local and read field by field (a by-value struct
//! argument, as clang's SPIR-V writes it). Each field is then promoted on
//! its own. Per block, a load reads the last store before it in the block, or the value
//! on entry: the predecessor's value at its exit when there is one
//! predecessor, else a new block parameter that every incoming edge passes
//! its value to (Braun et al., "Simple and Efficient Construction of SSA
//! Form", with every block's predecessors known from the start). Reading a
//! slot's byte never written is an error in MIR (docs/mir-semantics.md), so
//! a path that reads before any store may read anything: zero, for integers
//! and floats; a function where a pointer or vector slot may be read before
//! it is written (MIR has no such constants) keeps all its slots.
//! Parameters that all edges pass one value turn into that value in
//! simplify; dce removes the slots and casts left unread.

use super::rewrite::{Names, Subst};
use crate::abi::{AddrSpace, Type};
use crate::mir::cfg::Cfg;
use crate::mir::ir::{op_operands, terminator_operands, CastOp, Const, Function, Inst, Op, Operand, Terminator, Value};
use hashbrown::HashMap;

/// One promoted slot's state.
struct Slot {
    ty: Type,
}

struct Builder<'a> {
    preds: &'a [Vec<usize>],
    /// Per (block, slot): the last stored operand in the block.
    last_store: HashMap<(usize, usize), Operand>,
    /// Per (block, slot): the value on entry, once known (or being built).
    on_entry: HashMap<(usize, usize), Operand>,
    /// New block parameters, in creation order, and the operand each edge
    /// (predecessor, block) passes, in the same order.
    params: Vec<Vec<Value>>,
    edge_args: HashMap<(usize, usize), Vec<Operand>>,
    slots: &'a [Slot],
    reachable: Vec<bool>,
    /// Set when a pointer or vector slot is read before it is written.
    failed: bool,
}

impl Builder<'_> {
    fn at_exit(&mut self, func: &mut Function, names: &mut Names, b: usize, s: usize) -> Operand {
        match self.last_store.get(&(b, s)) {
            Some(o) => o.clone(),
            None => self.at_entry(func, names, b, s),
        }
    }

    fn at_entry(&mut self, func: &mut Function, names: &mut Names, b: usize, s: usize) -> Operand {
        if let Some(o) = self.on_entry.get(&(b, s)) {
            return o.clone();
        }
        let ty = self.slots[s].ty.clone();
        let preds = &self.preds[b];
        let unique: Vec<usize> = {
            let mut u = preds.clone();
            u.sort_unstable();
            u.dedup();
            u
        };
        let value = if b == 0 || unique.is_empty() || !self.reachable[b] {
            // MIR has no pointer or vector constant for the "anything" read.
            if matches!(ty, Type::Ptr(_) | Type::Vector(..)) {
                self.failed = true;
            }
            Operand::Const(Const { ty, bits: 0 })
        } else if unique.len() == 1 {
            // One predecessor: no merge. The walk back ends at a block with
            // several predecessors (whose parameter is recorded before its
            // edges are asked) or at the entry: a cycle of single-predecessor
            // blocks is unreachable, and those blocks read zero above.
            let p = unique[0];
            let o = self.at_exit(func, names, p, s);
            self.on_entry.insert((b, s), o.clone());
            return o;
        } else {
            let param = names.fresh(func, ty, "promoted");
            self.params[b].push(param);
            self.on_entry.insert((b, s), Operand::Value(param));
            for p in unique {
                let arg = self.at_exit(func, names, p, s);
                self.edge_args.entry((p, b)).or_default().push(arg);
            }
            return Operand::Value(param);
        };
        self.on_entry.insert((b, s), value.clone());
        value
    }
}

fn promotable_type(ty: &Type) -> bool {
    match ty {
        Type::Vector(elem, _) => elem.is_int() || elem.is_float(),
        _ => ty.is_int() || ty.is_float() || matches!(ty, Type::Ptr(_)),
    }
}

/// Two types one field may be accessed as: the same, or an integer and a
/// float (or two of either) of one size, which a bitcast turns into each
/// other.
fn punnable(a: &Type, b: &Type) -> bool {
    a == b || (a.is_int() || a.is_float()) && (b.is_int() || b.is_float()) && a.bits() == b.bits() && a.bits() >= 8
}

pub fn run(func: &mut Function) -> bool {
    // Slots are only in the entry block (docs/mir.md): most functions have
    // none, and leave here.
    if !func.blocks.first().is_some_and(|b| b.insts.iter().any(|i| matches!(i.op, Op::StackSlot { .. }))) {
        return false;
    }
    let n = func.values.len();
    // Slots, their generic casts and their constant offsets: value ->
    // (slot index, byte offset).
    let mut slot_of: Vec<Option<(usize, i64)>> = vec![None; n];
    let mut sizes: Vec<u32> = Vec::new();
    let mut ok: Vec<bool> = Vec::new();
    for block in &func.blocks {
        for inst in &block.insts {
            if let (Op::StackSlot { size, .. }, Some(r)) = (&inst.op, inst.result) {
                slot_of[r.0 as usize] = Some((sizes.len(), 0));
                sizes.push(*size);
                ok.push(true);
            }
        }
    }
    if sizes.is_empty() {
        return false;
    }
    // Values are defined before their uses in the blocks' order except
    // across back edges, which a pointer into a slot does not take without
    // a block parameter (which disqualifies the slot below).
    for block in &func.blocks {
        for inst in &block.insts {
            let Some(r) = inst.result else { continue };
            match &inst.op {
                Op::Cast { op: CastOp::AddrSpaceCast, from: Type::Ptr(AddrSpace::Private), arg: Operand::Value(v), to: Type::Ptr(AddrSpace::Flat) } => {
                    slot_of[r.0 as usize] = slot_of[v.0 as usize];
                }
                Op::PtrAdd { ptr: Operand::Value(v), offset: Operand::Const(c) } => {
                    if let Some((s, at)) = slot_of[v.0 as usize] {
                        let c = if c.ty.bits() == 64 { c.bits as i64 } else { c.bits as u32 as i32 as i64 };
                        slot_of[r.0 as usize] = Some((s, at + c));
                    }
                }
                _ => {}
            }
        }
    }
    let slot_operand = |o: &Operand| match o {
        Operand::Value(v) => slot_of[v.0 as usize],
        Operand::Const(_) => None,
    };
    // The fields of every slot: (offset, type) of its accesses.
    let mut fields: Vec<Vec<(i64, Type)>> = vec![Vec::new(); sizes.len()];
    let field = |fields: &mut Vec<Vec<(i64, Type)>>, (s, at): (usize, i64), ty: &Type| {
        if !fields[s].iter().any(|(o, t)| *o == at && t == ty) {
            fields[s].push((at, ty.clone()));
        }
    };
    // Every use must be an access's address (or a cast or constant offset
    // that stays in the slot's family).
    for block in &func.blocks {
        for inst in &block.insts {
            match &inst.op {
                Op::Load { ty, ptr, volatile: false, .. } if slot_operand(ptr).is_some() => field(&mut fields, slot_operand(ptr).unwrap(), ty),
                Op::Store { ty, value, ptr, volatile: false, .. } if slot_operand(ptr).is_some() => {
                    if let Some((v, _)) = slot_operand(value) {
                        ok[v] = false;
                    }
                    field(&mut fields, slot_operand(ptr).unwrap(), ty);
                }
                Op::Cast { op: CastOp::AddrSpaceCast, arg, to: Type::Ptr(AddrSpace::Flat), .. } if slot_operand(arg).is_some() && inst.result.is_some_and(|r| slot_of[r.0 as usize].is_some()) => {}
                Op::PtrAdd { ptr, offset: Operand::Const(_) } if slot_operand(ptr).is_some() && inst.result.is_some_and(|r| slot_of[r.0 as usize].is_some()) => {}
                op => {
                    for o in op_operands(op) {
                        if let Some((s, _)) = slot_operand(o) {
                            ok[s] = false;
                        }
                    }
                }
            }
        }
        for o in terminator_operands(&block.term) {
            if let Some((s, _)) = slot_operand(o) {
                ok[s] = false;
            }
        }
    }
    for s in 0..sizes.len() {
        // Slots of at most 64 bytes (a larger one is no local of clang's,
        // and removing it would hide its size from the frame limit's check
        // at -O2 only), whose fields are accessed as one type each, or as
        // integers and floats of one size (a field written as an integer
        // and read as a float), and do not overlap. The first type seen at
        // an offset is the field's.
        let mut f: Vec<(i64, Type)> = Vec::new();
        let mut same_size = true;
        for (at, ty) in &fields[s] {
            match f.iter().find(|(o, _)| o == at) {
                Some((_, first)) => same_size &= punnable(first, ty),
                None => f.push((*at, ty.clone())),
            }
        }
        f.sort_by_key(|(o, _)| *o);
        let apart = f.windows(2).all(|w| w[0].0 + i64::from(w[0].1.size()) <= w[1].0);
        let inside = f.iter().all(|(o, t)| *o >= 0 && o + i64::from(t.size()) <= i64::from(sizes[s]) && promotable_type(t));
        if !(ok[s] && !f.is_empty() && same_size && apart && inside && sizes[s] <= 64) {
            ok[s] = false;
        }
        fields[s] = f;
    }
    if !ok.iter().any(|&k| k) {
        return false;
    }
    // Accesses of a promoted field as its other type go through a bitcast:
    // a store stores the bits as the field's type, a load reads them so
    // and casts; from here on every access is of the field's own type.
    let field_type = |o: &Operand| slot_operand(o).filter(|(s, _)| ok[*s]).and_then(|(s, at)| fields[s].iter().find(|(f, _)| *f == at).map(|(_, t)| t.clone()));
    let mut names = Names::default();
    let mut punned = false;
    for b in 0..func.blocks.len() {
        let mut i = 0;
        while i < func.blocks[b].insts.len() {
            let inst = &func.blocks[b].insts[i];
            let (Op::Store { ty, ptr, .. } | Op::Load { ty, ptr, .. }) = &inst.op else {
                i += 1;
                continue;
            };
            let Some(field) = field_type(ptr).filter(|f| f != ty) else {
                i += 1;
                continue;
            };
            let (span, result) = (inst.span, inst.result);
            let bits = names.fresh(func, field.clone(), "punned");
            match &mut func.blocks[b].insts[i].op {
                Op::Store { ty, value, .. } => {
                    let from = std::mem::replace(ty, field.clone());
                    let stored = std::mem::replace(value, Operand::Value(bits));
                    let cast = Inst { result: Some(bits), op: Op::Cast { op: CastOp::Bitcast, from, arg: stored, to: field }, span };
                    func.blocks[b].insts.insert(i, cast);
                }
                Op::Load { ty, .. } => {
                    let to = std::mem::replace(ty, field.clone());
                    func.blocks[b].insts[i].result = Some(bits);
                    func.blocks[b].insts.insert(i + 1, Inst { result, op: Op::Cast { op: CastOp::Bitcast, from: field, arg: Operand::Value(bits), to }, span });
                }
                _ => unreachable!("a load or store, matched above"),
            }
            punned = true;
            i += 2;
        }
    }
    // Renumber the promoted fields densely.
    let mut index: HashMap<(usize, i64), usize> = HashMap::new();
    let mut slots = Vec::new();
    for s in 0..sizes.len() {
        if ok[s] {
            for (at, ty) in &fields[s] {
                index.insert((s, *at), slots.len());
                slots.push(Slot { ty: ty.clone() });
            }
        }
    }
    let promoted = |o: &Operand| slot_operand(o).and_then(|key| index.get(&key).copied());
    let cfg = Cfg::new(func);
    if !cfg.preds[0].is_empty() {
        return false;
    }
    let mut last_store = HashMap::new();
    for (b, block) in func.blocks.iter().enumerate() {
        for inst in &block.insts {
            if let Op::Store { value, ptr, .. } = &inst.op {
                if let Some(s) = promoted(ptr) {
                    last_store.insert((b, s), value.clone());
                }
            }
        }
    }
    let mut reachable = vec![false; func.blocks.len()];
    for b in super::rewrite::reverse_postorder(func) {
        reachable[b] = true;
    }
    let values_before = func.values.len();
    let mut builder = Builder { preds: &cfg.preds, last_store, on_entry: HashMap::new(), params: vec![Vec::new(); func.blocks.len()], edge_args: HashMap::new(), slots: &slots, reachable, failed: false };
    let mut subst = Subst::new(func);
    let mut removed: Vec<Vec<bool>> = func.blocks.iter().map(|b| vec![false; b.insts.len()]).collect();
    for b in 0..func.blocks.len() {
        let mut current: HashMap<usize, Operand> = HashMap::new();
        for i in 0..func.blocks[b].insts.len() {
            let (op, result) = (func.blocks[b].insts[i].op.clone(), func.blocks[b].insts[i].result);
            match &op {
                Op::Store { value, ptr, .. } => {
                    if let Some(s) = promoted(ptr) {
                        current.insert(s, value.clone());
                        removed[b][i] = true;
                    }
                }
                Op::Load { ptr, .. } => {
                    if let (Some(s), Some(r)) = (promoted(ptr), result) {
                        let v = match current.get(&s) {
                            Some(v) => v.clone(),
                            None => builder.at_entry(func, &mut names, b, s),
                        };
                        subst.set(r, v);
                        removed[b][i] = true;
                    }
                }
                _ => {}
            }
        }
    }
    if builder.failed {
        // The bitcasts stay (the same bits, stored and loaded as before).
        func.values.truncate(values_before);
        return punned;
    }
    let (params, edge_args) = (builder.params, builder.edge_args);
    for (b, new) in params.into_iter().enumerate() {
        func.blocks[b].params.extend(new);
    }
    for (p, block) in func.blocks.iter_mut().enumerate() {
        let calls = match &mut block.term {
            Terminator::Br(call) => vec![call],
            Terminator::BrIf { then_to, else_to, .. } => vec![then_to, else_to],
            Terminator::Ret(_) | Terminator::Unreachable => vec![],
        };
        for call in calls {
            if let Some(args) = edge_args.get(&(p, call.block.0 as usize)) {
                call.args.extend(args.iter().cloned());
            }
        }
    }
    super::rewrite::remove_marked(func, &removed);
    subst.apply(func);
    true
}
