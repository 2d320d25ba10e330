//! branches: control-flow simplification.
//!
//! - a branch to an empty block without parameters goes straight to that
//!   block's own target;
//! - `brif` on a constant, or to one block with the same arguments both
//!   ways, becomes `br`;
//! - a block whose only predecessor ends in a `br` to it is appended to that
//!   predecessor (its parameters replaced by the branch's arguments), so a
//!   chain of blocks becomes one;
//! - blocks no longer reachable from the entry are deleted, the others keep
//!   their order.
//!
//! Fewer blocks means fewer EXEC-mask operations and branches after
//! selection, and longer blocks for the later passes to work on.

use super::rewrite::{reverse_postorder, Subst};
use crate::mir::ir::{BlockCall, BlockId, Function, Operand, Terminator};

/// Where a branch to an empty block without parameters really goes: the
/// block's own `br` target (followed through a few such blocks).
fn threaded(func: &Function, call: &BlockCall) -> Option<BlockCall> {
    if !call.args.is_empty() {
        return None;
    }
    let mut cur = call.block;
    let mut hops = 0;
    loop {
        let block = func.blocks.get(cur.0 as usize)?;
        let Terminator::Br(next) = &block.term else { break };
        if cur.0 == 0 || !block.insts.is_empty() || !block.params.is_empty() || next.block == cur || hops == 8 {
            break;
        }
        hops += 1;
        if !next.args.is_empty() {
            return Some(next.clone());
        }
        cur = next.block;
    }
    (cur != call.block).then(|| BlockCall { block: cur, args: Vec::new() })
}

pub fn run(func: &mut Function) -> bool {
    let mut changed = false;
    // Edges through empty forwarding blocks go straight to where those go
    // (the arguments they pass dominate the block, so they dominate its
    // predecessors too); a conditional branch never gets one target twice
    // with different arguments.
    for b in 0..func.blocks.len() {
        let new = match &func.blocks[b].term {
            Terminator::Br(call) => threaded(func, call).map(Terminator::Br),
            Terminator::BrIf { cond, then_to, else_to } => {
                let (t, e) = (threaded(func, then_to), threaded(func, else_to));
                if t.is_none() && e.is_none() {
                    None
                } else {
                    let t = t.unwrap_or_else(|| then_to.clone());
                    let e = e.unwrap_or_else(|| else_to.clone());
                    (t.block != e.block || t.args == e.args).then(|| Terminator::BrIf { cond: cond.clone(), then_to: t, else_to: e })
                }
            }
            _ => None,
        };
        if let Some(term) = new {
            func.blocks[b].term = term;
            changed = true;
        }
    }
    for block in &mut func.blocks {
        let Terminator::BrIf { cond, then_to, else_to } = &block.term else { continue };
        let target = match cond {
            Operand::Const(c) => Some(if c.bits & 1 != 0 { then_to.clone() } else { else_to.clone() }),
            Operand::Value(_) if then_to == else_to => Some(then_to.clone()),
            _ => None,
        };
        if let Some(target) = target {
            block.term = Terminator::Br(target);
            changed = true;
        }
    }
    let n = func.blocks.len();
    let mut preds = vec![0usize; n];
    for block in &func.blocks {
        for s in block.term.successors() {
            if let Some(count) = preds.get_mut(s.0 as usize) {
                *count += 1;
            }
        }
    }
    let mut subst = Subst::new(func);
    let mut merged = vec![false; n];
    for a in reverse_postorder(func) {
        if merged[a] {
            continue;
        }
        while let Terminator::Br(call) = &func.blocks[a].term {
            let b = call.block.0 as usize;
            if b == 0 || b == a || b >= n || preds[b] != 1 || merged[b] {
                break;
            }
            let args = call.args.clone();
            let tail = std::mem::take(&mut func.blocks[b].insts);
            let term = std::mem::replace(&mut func.blocks[b].term, Terminator::Unreachable);
            for (param, arg) in func.blocks[b].params.iter().zip(args) {
                subst.set(*param, arg);
            }
            let term_span = func.blocks[b].term_span;
            let head = &mut func.blocks[a];
            head.insts.extend(tail);
            head.term = term;
            head.term_span = term_span;
            merged[b] = true;
            changed = true;
        }
    }
    subst.apply(func);
    changed |= remove_unreachable(func);
    changed
}

/// Deletes the blocks the entry cannot reach; true when there were any.
fn remove_unreachable(func: &mut Function) -> bool {
    let n = func.blocks.len();
    let mut reachable = vec![false; n];
    for b in reverse_postorder(func) {
        reachable[b] = true;
    }
    if reachable.iter().all(|&r| r) {
        return false;
    }
    let mut new_id = vec![u32::MAX; n];
    let mut next = 0u32;
    for b in 0..n {
        if reachable[b] {
            new_id[b] = next;
            next += 1;
        }
    }
    let mut index = 0;
    func.blocks.retain(|_| {
        index += 1;
        reachable[index - 1]
    });
    let renumber = |id: &mut BlockId| id.0 = new_id[id.0 as usize];
    for block in &mut func.blocks {
        match &mut block.term {
            Terminator::Br(call) => renumber(&mut call.block),
            Terminator::BrIf { then_to, else_to, .. } => {
                renumber(&mut then_to.block);
                renumber(&mut else_to.block);
            }
            Terminator::Ret(_) | Terminator::Unreachable => {}
        }
    }
    true
}
