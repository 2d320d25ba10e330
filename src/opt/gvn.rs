//! gvn: global value numbering over the dominator tree. A pure instruction
//! whose operation and operands equal those of an instruction in a
//! dominating position is removed and its uses read the earlier result.
//! Commutative operands are put in a canonical order first, so `a + b` and
//! `b + a` meet. An instruction whose operands a merge just changed goes
//! through simplify's rules again before it is numbered, so cascades (`x - y`
//! once `y` is known to be `x`) settle in one walk.
//!
//! Pure: arithmetic, compares, selects, casts, `ptradd`, builtins,
//! aggregates, `lane_id`/`wave_size`. Not: memory operations (a load's value
//! depends on the stores between), calls, slots (each is its own storage),
//! and the wave collectives (their result depends on which lanes are active,
//! which differs between blocks).

use super::rewrite::{definitions, remove_marked, reverse_postorder, Subst};
use super::simplify::{self, Outcome};
use crate::mir::cfg::{dominator_intervals, interval_dominates, Cfg};
use crate::mir::ir::{op_operands_mut, BinOp, Function, Op, Operand, Value, WaveOp};
use hashbrown::{hash_table, DefaultHashBuilder, HashTable};
use std::borrow::Cow;
use std::hash::BuildHasher;

/// Pure: free of memory and effects, equal whenever operands are (also
/// what the schedule pass may move up to its operands).
pub(super) fn is_pure(op: &Op) -> bool {
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
        | Op::DynamicLds
        | Op::DataAddr { .. } => true,
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
pub(super) fn canonical(op: &Op) -> Op {
    canonical_view(op).into_owned()
}

/// [`canonical`] without a copy when the operands are in order already.
fn canonical_view(op: &Op) -> Cow<'_, Op> {
    use BinOp::*;
    match op {
        Op::Binary { op: bop, lhs, rhs, .. }
            if matches!(bop, Add | Mul | MulHiS | MulHiU | And | Or | Xor | SMin | SMax | UMin | UMax | FAdd | FMul | FMin | FMax | Mul24S | Mul24U | AddSatS | AddSatU)
                && rank(lhs) > rank(rhs) =>
        {
            let mut op = op.clone();
            if let Op::Binary { lhs, rhs, .. } = &mut op {
                std::mem::swap(lhs, rhs);
            }
            Cow::Owned(op)
        }
        Op::Fma { a, b, .. } if rank(a) > rank(b) => {
            let mut op = op.clone();
            if let Op::Fma { a, b, .. } = &mut op {
                std::mem::swap(a, b);
            }
            Cow::Owned(op)
        }
        _ => Cow::Borrowed(op),
    }
}

/// A numbered operation: where its instruction is (block, index), with the
/// result and the hash of its canonical form. The table refers to the
/// instructions instead of holding copies of their operations (an `Op` is
/// 128 bytes: a million-instruction function's table was most of the pass's
/// memory and time).
struct Numbered {
    hash: u64,
    result: Value,
    block: u32,
    index: u32,
}

pub fn run(func: &mut Function) -> bool {
    let cfg = Cfg::new(func);
    let idom = cfg.dominators();
    let intervals = dominator_intervals(&idom, 0);
    // Blocks in dominator-tree preorder: once the walk leaves a block's
    // subtree it never comes back, so an entry whose block does not dominate
    // the current one is stale and can be replaced (one table, no undo).
    let mut order: Vec<usize> = reverse_postorder(func).into_iter().filter(|&b| intervals[b].1 != 0).collect();
    order.sort_by_key(|&b| intervals[b].0);
    let mut subst = Subst::new(func);
    // Sized for every instruction up front: growing it rehashed each
    // operation key again (a fifth of the pass on long functions).
    let instructions: usize = func.blocks.iter().map(|b| b.insts.len()).sum();
    let mut table: HashTable<Numbered> = HashTable::with_capacity(instructions);
    let hasher = DefaultHashBuilder::default();
    let mut removed: Vec<Vec<bool>> = func.blocks.iter().map(|b| vec![false; b.insts.len()]).collect();
    let mut changed = false;
    let defs = definitions(func);
    for b in order {
        for i in 0..func.blocks[b].insts.len() {
            for operand in op_operands_mut(&mut func.blocks[b].insts[i].op) {
                subst.rewrite(operand);
            }
            let Some(result) = func.blocks[b].insts[i].result else { continue };
            if !is_pure(&func.blocks[b].insts[i].op) {
                continue;
            }
            // An operand just replaced by an equal value or a constant can
            // make the instruction simplify (`x - y` with y = x): simplify's
            // rules run here too, so such chains settle in one walk.
            let op = std::mem::replace(&mut func.blocks[b].insts[i].op, Op::Barrier);
            let op = match simplify::simplify(&op, func, &defs, &[]) {
                Outcome::Forward(with) => {
                    subst.set(result, with);
                    removed[b][i] = true;
                    changed = true;
                    func.blocks[b].insts[i].op = op;
                    continue;
                }
                Outcome::Replace(new) => {
                    changed = true;
                    new
                }
                Outcome::Keep => op,
            };
            func.blocks[b].insts[i].op = op;
            let op = &func.blocks[b].insts[i].op;
            if !is_pure(op) {
                continue;
            }
            let key = canonical_view(op);
            let hash = hasher.hash_one(&*key);
            let blocks = &func.blocks;
            let same = |n: &Numbered| n.hash == hash && *canonical_view(&blocks[n.block as usize].insts[n.index as usize].op) == *key;
            let here = Numbered { hash, result, block: b as u32, index: i as u32 };
            match table.entry(hash, same, |n| n.hash) {
                hash_table::Entry::Occupied(mut e) => {
                    let earlier = e.get();
                    if interval_dominates(&intervals, earlier.block as usize, b) {
                        subst.set(result, Operand::Value(earlier.result));
                        removed[b][i] = true;
                        changed = true;
                    } else {
                        *e.get_mut() = here;
                    }
                }
                hash_table::Entry::Vacant(e) => {
                    e.insert(here);
                }
            }
        }
    }
    subst.apply(func);
    remove_marked(func, &removed);
    changed
}
