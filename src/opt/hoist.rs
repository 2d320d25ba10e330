//! hoist: a pure computation that both successors of a two-way branch make
//! from the same operands moves up into the branching block, once. gvn only
//! shares a value with a computation that dominates it; two arms compute
//! their copies side by side (register_tile's row offsets `(i + r) * n`, in
//! its zero-trip path and before its loop), and after the hoist the copies
//! below the join are gvn's to share too.
//!
//! For a block ending in `brif` to two different blocks that have it as
//! their only predecessor: an instruction of the first arm whose operands
//! are defined above it (not in the arm, or already hoisted) and whose
//! canonical operation (gvn's: commutative operands ordered) equals one of
//! the second arm under the same condition goes to the end of the branching
//! block; the second arm's copy is removed and its uses read the hoisted
//! one. Both arms computed it, so no path computes more than before (under
//! a divergent branch both arms run: it is computed once instead of twice).
//! A hoisted value makes its users hoistable: the scan repeats while
//! something moves, at most [`MAX_SWEEPS`] times per branch.

use super::gvn::{canonical, is_pure};
use super::rewrite::{remove_marked, Subst};
use crate::mir::ir::{op_operands, op_operands_mut, Function, Op, Operand, Terminator, Value};
use hashbrown::{HashMap, HashSet};

/// Sweeps over one branch's arms (a chain of k dependent computations
/// needs k).
const MAX_SWEEPS: usize = 8;

pub fn run(func: &mut Function) -> bool {
    let n = func.blocks.len();
    let mut preds = vec![0u32; n];
    for block in &func.blocks {
        for s in block.term.successors() {
            preds[s.0 as usize] += 1;
        }
    }
    let mut subst = Subst::new(func);
    let mut removed: Vec<Vec<bool>> = func.blocks.iter().map(|b| vec![false; b.insts.len()]).collect();
    let mut changed = false;
    for b in 0..n {
        let Terminator::BrIf { then_to, else_to, .. } = &func.blocks[b].term else { continue };
        let (t, e) = (then_to.block.0 as usize, else_to.block.0 as usize);
        if t == e || t == b || e == b || preds[t] != 1 || preds[e] != 1 {
            continue;
        }
        let defined = |blk: usize| -> HashSet<Value> { func.blocks[blk].params.iter().copied().chain(func.blocks[blk].insts.iter().filter_map(|i| i.result)).collect() };
        let (mut in_t, in_e) = (defined(t), defined(e));
        let mut hoisted = Vec::new();
        for _ in 0..MAX_SWEEPS {
            // The second arm's candidates by operation (the first of equals).
            let mut second: HashMap<Op, usize> = HashMap::new();
            for (j, inst) in func.blocks[e].insts.iter().enumerate() {
                if removed[e][j] || inst.result.is_none() || !is_pure(&inst.op) {
                    continue;
                }
                let mut op = inst.op.clone();
                for operand in op_operands_mut(&mut op) {
                    subst.rewrite(operand);
                }
                if op_operands(&op).iter().all(|o| !matches!(o, Operand::Value(v) if in_e.contains(v))) {
                    second.entry(canonical(&op)).or_insert(j);
                }
            }
            let mut moved = false;
            for i in 0..func.blocks[t].insts.len() {
                let inst = &func.blocks[t].insts[i];
                let Some(result) = inst.result else { continue };
                if removed[t][i] || !is_pure(&inst.op) {
                    continue;
                }
                // Operands an earlier hoist (of this branch or one above)
                // replaced read their replacements here too.
                let mut op = inst.op.clone();
                for operand in op_operands_mut(&mut op) {
                    subst.rewrite(operand);
                }
                if op_operands(&op).iter().any(|o| matches!(o, Operand::Value(v) if in_t.contains(v))) {
                    continue;
                }
                let Some(j) = second.remove(&canonical(&op)) else { continue };
                let other = func.blocks[e].insts[j].result.expect("candidates have results");
                hoisted.push(inst.clone());
                removed[t][i] = true;
                removed[e][j] = true;
                subst.set(other, Operand::Value(result));
                in_t.remove(&result);
                moved = true;
            }
            if !moved {
                break;
            }
        }
        if !hoisted.is_empty() {
            changed = true;
            // Appended, so the indices of the block's own instructions (some
            // may be marked, when the block is an arm of a branch above it)
            // stay valid for the removal below.
            let block = &mut func.blocks[b];
            block.insts.extend(hoisted);
            removed[b].resize(block.insts.len(), false);
        }
    }
    subst.apply(func);
    remove_marked(func, &removed);
    changed
}
