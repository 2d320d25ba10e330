//! dce: dead-code elimination. A value is live when something with an
//! effect reads it (a store, an atomic, a call, a barrier or fence, a
//! volatile load, a branch condition, a returned value), or when a live
//! instruction reads it; a block parameter is live when it is read, and then
//! so are the arguments every branch passes for it. Everything else goes:
//! instructions without effects whose result is dead (non-volatile loads and
//! unused stack slots included: neither changes what the program computes;
//! an `lds_slot` stays, since the work-group's LDS size is part of the
//! kernel's interface and its limit is checked), and
//! dead block parameters together with the branch arguments for them.
//!
//! One backward sweep over the instructions, then a worklist over the values
//! it could not settle (block parameters, definitions it had passed): linear
//! in the function.

use crate::mir::ir::{op_operands, BlockCall, Function, Op, Operand, Terminator};

/// Whether removing the instruction when its result is unused keeps the
/// program's behaviour.
fn removable(op: &Op) -> bool {
    !matches!(
        op,
        Op::Store { .. }
            | Op::AtomicRmw { .. }
            | Op::CmpXchg { .. }
            | Op::Call { .. }
            | Op::Barrier
            | Op::Fence { .. }
            | Op::Load { volatile: true, .. }
            | Op::LdsSlot { .. }
    )
}

#[derive(Clone, Copy)]
enum Def {
    None,
    Inst(u32, u32),
    BlockParam(u32, u32),
}

fn calls_mut(term: &mut Terminator) -> Vec<&mut BlockCall> {
    match term {
        Terminator::Br(call) => vec![call],
        Terminator::BrIf { then_to, else_to, .. } => vec![then_to, else_to],
        _ => Vec::new(),
    }
}

fn calls(term: &Terminator) -> Vec<&BlockCall> {
    match term {
        Terminator::Br(call) => vec![call],
        Terminator::BrIf { then_to, else_to, .. } => vec![then_to, else_to],
        _ => Vec::new(),
    }
}

pub fn run(func: &mut Function) -> bool {
    let n = func.values.len();
    let mut def = vec![Def::None; n];
    // For each block, the (predecessor, call slot) pairs that branch to it.
    let mut incoming: Vec<Vec<(u32, u8)>> = vec![Vec::new(); func.blocks.len()];
    for (b, block) in func.blocks.iter().enumerate() {
        for (j, p) in block.params.iter().enumerate() {
            def[p.0 as usize] = Def::BlockParam(b as u32, j as u32);
        }
        for (i, inst) in block.insts.iter().enumerate() {
            if let Some(r) = inst.result {
                def[r.0 as usize] = Def::Inst(b as u32, i as u32);
            }
        }
        for (slot, call) in calls(&block.term).into_iter().enumerate() {
            if let Some(list) = incoming.get_mut(call.block.0 as usize) {
                list.push((b as u32, slot as u8));
            }
        }
    }
    let mut live = vec![false; n];
    let mut work = Vec::new();
    // One backward sweep over the instructions does most of the marking in
    // memory order (a worklist alone chased definitions across the whole
    // function: a third of the optimiser's time on a million instructions).
    // A value marked after the sweep passed its definition, and every block
    // parameter, goes on the worklist, which finishes the job; the live set is
    // the same least fixed point either way.
    let mark = |operand: &Operand, live: &mut Vec<bool>, work: &mut Vec<u32>, swept: &dyn Fn(Def) -> bool| {
        if let Operand::Value(v) = operand {
            if !live[v.0 as usize] {
                live[v.0 as usize] = true;
                if swept(def[v.0 as usize]) {
                    work.push(v.0);
                }
            }
        }
    };
    for (b, block) in func.blocks.iter().enumerate().rev() {
        let b = b as u32;
        let swept_at = |i: u32| move |d: Def| match d {
            Def::None => false,
            Def::Inst(db, di) => db > b || (db == b && di >= i),
            Def::BlockParam(..) => true,
        };
        match &block.term {
            Terminator::BrIf { cond, .. } => mark(cond, &mut live, &mut work, &swept_at(block.insts.len() as u32)),
            Terminator::Ret(Some(value)) => mark(value, &mut live, &mut work, &swept_at(block.insts.len() as u32)),
            _ => {}
        }
        for (i, inst) in block.insts.iter().enumerate().rev() {
            if !removable(&inst.op) || inst.result.is_some_and(|r| live[r.0 as usize]) {
                for operand in op_operands(&inst.op) {
                    mark(operand, &mut live, &mut work, &swept_at(i as u32));
                }
            }
        }
    }
    let everything_swept = |d: Def| !matches!(d, Def::None);
    while let Some(v) = work.pop() {
        match def[v as usize] {
            Def::None => {}
            Def::Inst(b, i) => {
                for operand in op_operands(&func.blocks[b as usize].insts[i as usize].op) {
                    mark(operand, &mut live, &mut work, &everything_swept);
                }
            }
            Def::BlockParam(b, j) => {
                for &(pred, slot) in &incoming[b as usize] {
                    let call = calls(&func.blocks[pred as usize].term)[slot as usize];
                    if let Some(arg) = call.args.get(j as usize) {
                        mark(arg, &mut live, &mut work, &everything_swept);
                    }
                }
            }
        }
    }
    let mut changed = false;
    for block in &mut func.blocks {
        let before = block.insts.len();
        block.insts.retain(|inst| !removable(&inst.op) || inst.result.is_some_and(|r| live[r.0 as usize]));
        changed |= block.insts.len() != before;
    }
    // Dead block parameters and the arguments passed for them.
    for b in 1..func.blocks.len() {
        let keep: Vec<bool> = func.blocks[b].params.iter().map(|p| live[p.0 as usize]).collect();
        if keep.iter().all(|&k| k) {
            continue;
        }
        changed = true;
        let mut j = 0;
        func.blocks[b].params.retain(|_| {
            j += 1;
            keep[j - 1]
        });
        for &(pred, slot) in &incoming[b] {
            let call = calls_mut(&mut func.blocks[pred as usize].term).into_iter().nth(slot as usize).expect("the recorded call");
            let mut j = 0;
            call.args.retain(|_| {
                j += 1;
                keep.get(j - 1).copied().unwrap_or(true)
            });
        }
    }
    changed
}
