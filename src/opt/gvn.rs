//! gvn: global value numbering over the dominator tree. A pure instruction
//! whose operation and operands equal those of an instruction in a
//! dominating position is removed and its uses read the earlier result.
//! Commutative operands are put in a canonical order first, so `a + b` and
//! `b + a` meet.
//!
//! Pure: arithmetic, compares, selects, casts, `ptradd`, builtins,
//! aggregates, `lane_id`/`wave_size`. Not: memory operations (a load's value
//! depends on the stores between), calls, slots (each is its own storage),
//! and the wave collectives (their result depends on which lanes are active,
//! which differs between blocks).

use super::rewrite::{remove_marked, reverse_postorder, Subst};
use crate::mir::cfg::Cfg;
use crate::mir::ir::{op_operands_mut, BinOp, Function, Op, Operand, Value, WaveOp};
use hashbrown::HashMap;

fn is_pure(op: &Op) -> bool {
    match op {
        Op::Const(_)
        | Op::Binary { .. }
        | Op::Unary { .. }
        | Op::Fma { .. }
        | Op::Ternary { .. }
        | Op::Icmp { .. }
        | Op::Fcmp { .. }
        | Op::Select { .. }
        | Op::Cast { .. }
        | Op::PtrAdd { .. }
        | Op::Builtin { .. }
        | Op::Extract { .. }
        | Op::Insert { .. }
        | Op::Make { .. }
        | Op::DynamicLds => true,
        Op::Wave { op, .. } => matches!(op, WaveOp::LaneId | WaveOp::WaveSize),
        _ => false,
    }
}

fn rank(operand: &Operand) -> (u8, u64) {
    match operand {
        Operand::Value(v) => (0, u64::from(v.0)),
        Operand::Const(c) => (1, c.bits),
    }
}

/// The operation with commutative operands in a canonical order.
fn canonical(op: &Op) -> Op {
    use BinOp::*;
    let mut op = op.clone();
    if let Op::Binary { op: bop, lhs, rhs, .. } = &mut op {
        if matches!(bop, Add | Mul | MulHiS | MulHiU | And | Or | Xor | SMin | SMax | UMin | UMax | FAdd | FMul | FMin | FMax | Mul24S | Mul24U | AddSatS | AddSatU)
            && rank(lhs) > rank(rhs)
        {
            std::mem::swap(lhs, rhs);
        }
    }
    if let Op::Fma { a, b, .. } = &mut op {
        if rank(a) > rank(b) {
            std::mem::swap(a, b);
        }
    }
    op
}

pub fn run(func: &mut Function) -> bool {
    let cfg = Cfg::new(func);
    let idom = cfg.dominators();
    let order = reverse_postorder(func);
    // Children in the dominator tree, in reverse postorder.
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); func.blocks.len()];
    for &b in order.iter().skip(1) {
        if let Some(parent) = idom[b] {
            children[parent].push(b);
        }
    }
    let mut subst = Subst::new(func);
    let mut table: HashMap<Op, Value> = HashMap::new();
    let mut removed: Vec<Vec<bool>> = func.blocks.iter().map(|b| vec![false; b.insts.len()]).collect();
    let mut changed = false;
    // Depth-first over the tree; each block's entries leave the table when
    // its subtree is done (the undo log holds what to remove).
    enum Step {
        Enter(usize),
        Leave(usize),
    }
    let mut stack = vec![Step::Enter(0)];
    let mut undo: Vec<Vec<Op>> = vec![Vec::new(); func.blocks.len()];
    while let Some(step) = stack.pop() {
        match step {
            Step::Leave(b) => {
                for key in undo[b].drain(..) {
                    table.remove(&key);
                }
            }
            Step::Enter(b) => {
                stack.push(Step::Leave(b));
                for child in children[b].iter().rev() {
                    stack.push(Step::Enter(*child));
                }
                for (i, inst) in func.blocks[b].insts.iter_mut().enumerate() {
                    for operand in op_operands_mut(&mut inst.op) {
                        subst.rewrite(operand);
                    }
                    let Some(result) = inst.result else { continue };
                    if !is_pure(&inst.op) {
                        continue;
                    }
                    let key = canonical(&inst.op);
                    match table.get(&key) {
                        Some(&earlier) => {
                            subst.set(result, Operand::Value(earlier));
                            removed[b][i] = true;
                            changed = true;
                        }
                        None => {
                            table.insert(key.clone(), result);
                            undo[b].push(key);
                        }
                    }
                }
            }
        }
    }
    subst.apply(func);
    remove_marked(func, &removed);
    changed
}
