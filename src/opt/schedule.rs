//! schedule: loads move up their block, with the arithmetic that computes
//! their addresses, so several are in flight before the first result is
//! needed. A load waits hundreds of cycles (global) or tens (LDS); issued one
//! at a time right before its use, each costs the whole wait and an
//! `s_waitcnt` of its own. Clustered, the waits overlap and the waitcnt pass
//! needs fewer of them.
//!
//! Per block, the instructions split in two sequences that keep their own
//! order: the *moved* ones (non-volatile loads, and pure instructions whose
//! every use, anywhere, is a moved instruction of this block: the address
//! arithmetic) and the *rest*. The rest stays where it is relative to
//! itself; each moved instruction goes right after the last instruction of
//! the rest it depends on (an operand's definition; for a load, also the last
//! store, atomic, call, barrier, fence or volatile load before it), and never
//! before the moved instruction ahead of it. Nothing moves later than it was,
//! so every use still follows its definition.
//!
//! Register pressure: every load moved ahead of its uses holds a register
//! longer. A load is not placed before the first use of the load
//! [`IN_FLIGHT`] loads ahead of it, so at most that many results wait at
//! once (the LDS counter, lgkmcnt, counts 15 on gfx9).

use super::gvn::is_pure;
use super::rewrite::use_counts;
use crate::mir::ir::{op_operands, Function, Inst, Op, Operand};

/// How many loads may be issued ahead of the first use among them.
const IN_FLIGHT: usize = 12;

fn is_movable_load(op: &Op) -> bool {
    matches!(op, Op::Load { volatile: false, .. })
}

/// What a load may not move above.
fn orders_memory(op: &Op) -> bool {
    matches!(op, Op::Store { .. } | Op::AtomicRmw { .. } | Op::CmpXchg { .. } | Op::Call { .. } | Op::Barrier | Op::Fence { .. } | Op::Load { volatile: true, .. })
}

pub fn run(func: &mut Function) -> bool {
    let uses = use_counts(func);
    // Per value defined in the block being scheduled: the index of its
    // definition among the rest (usize::MAX: defined by a moved one, or
    // elsewhere).
    let mut rest_index = vec![usize::MAX; func.values.len()];
    let mut moved_uses = vec![0u32; func.values.len()];
    // Per value: the index in its block of the moved load defining it.
    let mut load_at = vec![usize::MAX; func.values.len()];
    let mut changed = false;
    for block in &mut func.blocks {
        let n = block.insts.len();
        if !block.insts.iter().any(|i| is_movable_load(&i.op)) {
            continue;
        }
        // Which instructions move: users before definitions, backwards.
        let mut moves = vec![false; n];
        for (i, inst) in block.insts.iter().enumerate().rev() {
            let m = is_movable_load(&inst.op)
                || (is_pure(&inst.op) && inst.result.is_some_and(|r| uses[r.0 as usize] > 0 && moved_uses[r.0 as usize] == uses[r.0 as usize]));
            if m {
                moves[i] = true;
                for operand in op_operands(&inst.op) {
                    if let Operand::Value(v) = operand {
                        moved_uses[v.0 as usize] += 1;
                    }
                }
            }
        }
        // The rest, in order, and where each value is defined among it.
        let mut rest = 0usize;
        let mut last_barrier = 0usize; // rest index after the last memory-ordering instruction
        let mut earliest = vec![0usize; n]; // per moved instruction: the rest index it goes before
        // Per moved load: the rest index of its first use among the rest,
        // from the whole block first (so a second run places it the same).
        let mut first_use = vec![usize::MAX; n];
        {
            let mut k = 0usize;
            for (i, inst) in block.insts.iter().enumerate() {
                if moves[i] {
                    if let (true, Some(r)) = (is_movable_load(&inst.op), inst.result) {
                        load_at[r.0 as usize] = i;
                    }
                    continue;
                }
                for o in op_operands(&inst.op) {
                    if let Operand::Value(v) = o {
                        let l = load_at[v.0 as usize];
                        if l != usize::MAX {
                            first_use[l] = first_use[l].min(k);
                        }
                    }
                }
                k += 1;
            }
        }
        let mut loads: Vec<usize> = Vec::new();
        let mut floor = 0usize;
        for (i, inst) in block.insts.iter().enumerate() {
            let deps = op_operands(&inst.op)
                .into_iter()
                .filter_map(|o| match o {
                    Operand::Value(v) if rest_index[v.0 as usize] != usize::MAX => Some(rest_index[v.0 as usize] + 1),
                    _ => None,
                })
                .max()
                .unwrap_or(0);
            if moves[i] {
                let mut e = deps.max(floor);
                if is_movable_load(&inst.op) {
                    e = e.max(last_barrier);
                    if loads.len() >= IN_FLIGHT {
                        let ahead = loads[loads.len() - IN_FLIGHT];
                        if first_use[ahead] != usize::MAX {
                            e = e.max(first_use[ahead]);
                        }
                    }
                    loads.push(i);
                }
                // Never later than where it was: the rest instructions
                // before it then are all still before it (the earlier load's
                // first use may come after this one's own uses).
                let e = e.min(rest);
                earliest[i] = e;
                floor = e;
            } else {
                if let Some(r) = inst.result {
                    rest_index[r.0 as usize] = rest;
                }
                rest += 1;
                if orders_memory(&inst.op) {
                    last_barrier = rest;
                }
            }
        }
        // Merge: before the rest's instruction k, every moved one whose
        // earliest place is k or less.
        let insts = std::mem::take(&mut block.insts);
        let mut moved: Vec<(usize, usize, Inst)> = Vec::new();
        let mut others: Vec<(usize, Inst)> = Vec::new();
        for (i, inst) in insts.into_iter().enumerate() {
            if moves[i] {
                moved.push((earliest[i], i, inst));
            } else {
                others.push((i, inst));
            }
        }
        let mut order: Vec<(usize, Inst)> = Vec::with_capacity(n);
        let mut next = moved.into_iter().peekable();
        for (k, inst) in others.into_iter().enumerate() {
            while let Some((_, i, m)) = next.next_if(|(e, _, _)| *e <= k) {
                order.push((i, m));
            }
            order.push(inst);
        }
        order.extend(next.map(|(_, i, m)| (i, m)));
        changed |= order.iter().enumerate().any(|(k, (i, _))| k != *i);
        block.insts = order.into_iter().map(|(_, inst)| inst).collect();
        for inst in &block.insts {
            if let Some(r) = inst.result {
                rest_index[r.0 as usize] = usize::MAX;
                load_at[r.0 as usize] = usize::MAX;
            }
            for operand in op_operands(&inst.op) {
                if let Operand::Value(v) = operand {
                    moved_uses[v.0 as usize] = 0;
                }
            }
        }
    }
    changed
}
