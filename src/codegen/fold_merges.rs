//! fold_merges: removes the copies control-flow lowering leaves around
//! divergent joins, before allocation.
//!
//! regalloc2 coalesces block parameters and reused operands, never copies, so
//! a copy in the VCode is a `v_mov_b32` in the output unless the allocator
//! happens to give both sides one register. Lowering a divergent if-then
//! (lower_cf.rs) makes two per joined VGPR value: the first contribution to a
//! join's parameter becomes `acc = Copy x` (ssa_repair: a merge into nothing),
//! and the then-side's `acc' = LaneMerge(acc, v)` is a `v_mov_b32` under the
//! side's EXEC. Two rewrites take both away:
//!
//! 1. **Copy forwarding.** `d = Copy x` where the copy is `x`'s only reader
//!    and neither side is pinned to a register: `d` becomes `x` and the copy
//!    goes. The program is SSA, so `x`'s definition dominates every use of
//!    `d`, and `x`'s live range ended at the copy. A copy under a partial
//!    EXEC writes only the active lanes of `d`; after forwarding the other
//!    lanes hold `x`'s instead of whatever `d`'s register held, which no
//!    reader may depend on (`d` was a fresh register).
//! 2. **Merge folding.** `acc' = LaneMerge(acc, v)` selecting the active lanes,
//!    where `v` is the one VGPR result of a VALU instruction earlier in the
//!    same machine block, nothing between them changes EXEC, `acc` is defined
//!    before that instruction (the tied def reads it there; cfg_fuzz found
//!    `acc` defined between the two once forward edges merged for every
//!    running lane), and every reader of `v` is in that block: the
//!    instruction writes `acc'` itself, tied to `acc`'s register (a reused operand), and the merge goes. A VALU write
//!    under EXEC changes the active lanes only, which is exactly the merge;
//!    readers of `v` in the block read active lanes, where `acc'` equals `v`.
//!    If `acc` is still read after the instruction, regalloc2 copies it first
//!    (moves in blocks with lanes off run with every lane on: docs/regalloc.md).
//!
//! Cost: two linear sweeps over the instructions.

use regalloc2 as ra;

use super::vcode::{Class, Fill, MInst, MKind, Slot, VCode};
use crate::isa::{Gpu, Opcode};

/// Counts of what the pass removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Folded {
    pub copies: usize,
    pub merges: usize,
}

/// Removes forwarded copies and folded merges; returns how many of each.
pub fn run(vcode: &mut VCode, gpu: Gpu) -> Folded {
    let copies = forward_copies(vcode);
    let merges = fold_lane_merges(vcode, gpu);
    Folded { copies, merges }
}

fn unpinned(op: &ra::Operand) -> bool {
    matches!(op.constraint(), ra::OperandConstraint::Any | ra::OperandConstraint::Reg)
}

fn forward_copies(vcode: &mut VCode) -> usize {
    let n = vcode.vreg_classes.len();
    let mut uses = vcode.use_counts();
    // Registers with a fixed placement somewhere (inputs, call arguments and
    // results) keep their copies: a call's arguments are copied into their
    // registers right before it, where no SGPR pair overlapping them is live
    // (in a device function the pair units alias ordinary SGPRs, which
    // regalloc2 does not know; docs/regalloc.md), and an input copied out
    // frees its register at once.
    let mut pinned = vec![false; n];
    for op in vcode.insts.iter().flat_map(|m| &m.ops) {
        pinned[op.vreg().vreg()] |= !unpinned(op) && !matches!(op.constraint(), ra::OperandConstraint::Reuse(_));
    }
    // `alias[d]`: the register `d` is now (itself if not forwarded).
    let mut alias: Vec<u32> = (0..n as u32).collect();
    let mut forwarded = 0;
    for m in vcode.insts.iter_mut() {
        if !matches!(m.kind, MKind::Copy) || m.ops.len() != 2 {
            continue;
        }
        let (d, x) = (m.ops[0], m.ops[1]);
        let root = alias[x.vreg().vreg()] as usize;
        if uses[root] != 1 || pinned[root] || pinned[d.vreg().vreg()] {
            continue;
        }
        alias[d.vreg().vreg()] = root as u32;
        uses[root] = uses[d.vreg().vreg()];
        *m = MInst::nothing();
        forwarded += 1;
    }
    if forwarded == 0 {
        return 0;
    }
    // A copy earlier in the instruction order may read what a later copy
    // forwards (blocks are not in dominance order: `d = Copy x` in one
    // block, `x = Copy y` in a block laid out after it): follow each chain
    // to its end, or `d` would become `x`, whose definition went.
    for v in 0..n {
        let mut r = alias[v];
        while alias[r as usize] != r {
            r = alias[r as usize];
        }
        alias[v] = r;
    }
    let class_of = |v: usize| vcode.vreg_classes[v];
    let renamed = |v: ra::VReg| -> ra::VReg {
        let r = alias[v.vreg()] as usize;
        if r == v.vreg() {
            v
        } else {
            ra::VReg::new(r, class_of(r).ra())
        }
    };
    for m in &mut vcode.insts {
        for op in &mut m.ops {
            let r = renamed(op.vreg());
            if r != op.vreg() {
                *op = ra::Operand::new(r, op.constraint(), op.kind(), op.pos());
            }
        }
    }
    for b in &mut vcode.blocks {
        b.succ_args.iter_mut().flatten().for_each(|v| *v = renamed(*v));
    }
    forwarded
}

/// The operand index of `m`'s one definition if `m` is a VALU instruction
/// writing one VGPR value under EXEC (so lanes that are off keep their
/// contents), with no placement constraint.
fn exec_masked_vgpr_def(m: &MInst, gpu: Gpu, classes: &[Class]) -> Option<usize> {
    let MKind::Real { inst, fills } = &m.kind else { return None };
    let name = inst.op.info().name;
    let whole_wave = name.starts_with("v_cmpx") || name.starts_with("v_readlane") || name.starts_with("v_readfirstlane") || inst.op == Opcode::v_writelane_b32;
    if !inst.op.info().format(gpu).is_valu() || whole_wave || inst.defs.len() != 1 {
        return None;
    }
    let mut defs = m.ops.iter().enumerate().filter(|(_, o)| o.kind() == ra::OperandKind::Def);
    let (k, def) = defs.next()?;
    if defs.next().is_some() || !unpinned(def) || def.pos() != ra::OperandPos::Late || classes[def.vreg().vreg()] != Class::Vgpr {
        return None;
    }
    // Exactly one slot, the whole allocation.
    let mut def_fills = fills.iter().filter(|(s, _)| matches!(s, Slot::Def(_)));
    match (def_fills.next(), def_fills.next()) {
        (Some((Slot::Def(0), Fill::Whole(i))), None) if usize::from(*i) == k => {}
        _ => return None,
    }
    // A reused input already ties the result (v_mac-style forms).
    if m.ops.iter().any(|o| matches!(o.constraint(), ra::OperandConstraint::Reuse(_))) {
        return None;
    }
    Some(k)
}


fn fold_lane_merges(vcode: &mut VCode, gpu: Gpu) -> usize {
    const NONE: u32 = u32::MAX;
    const MANY: u32 = u32::MAX - 1;
    let n = vcode.vreg_classes.len();
    // Per register: its defining instruction, and the one block reading it
    // (MANY when several blocks, or an edge, read it).
    let mut def_at = vec![NONE; n];
    let mut read_in = vec![NONE; n];
    for (b, block) in vcode.blocks.iter().enumerate() {
        for i in block.insts.clone() {
            for op in &vcode.insts[i].ops {
                let v = op.vreg().vreg();
                match op.kind() {
                    ra::OperandKind::Def => def_at[v] = i as u32,
                    ra::OperandKind::Use => read_in[v] = if read_in[v] == NONE || read_in[v] == b as u32 { b as u32 } else { MANY },
                }
            }
        }
        for v in block.succ_args.iter().flatten() {
            read_in[v.vreg()] = MANY;
        }
    }
    let mut folded = 0;
    for (b, block) in vcode.blocks.iter().enumerate() {
        let range = block.insts.clone();
        // Since the last EXEC change: instructions at or after this index.
        let mut exec_from = range.start;
        for i in range.clone() {
            let m = &vcode.insts[i];
            if m.changes_exec() {
                exec_from = i + 1;
                continue;
            }
            let MKind::LaneMerge { vector: true, masked: false, .. } = m.kind else { continue };
            let (acc_new, acc, v) = (m.ops[0], m.ops[1], m.ops[2]);
            let d = def_at[v.vreg().vreg()];
            if d == NONE || (d as usize) < exec_from || d as usize >= i || read_in[v.vreg().vreg()] != b as u32 || acc.vreg() == v.vreg() {
                continue;
            }
            let d = d as usize;
            // `acc` must be defined before `v`'s instruction reads it (an
            // earlier merge into the same variable may lie between them).
            let acc_def = def_at[acc.vreg().vreg()];
            if acc_def != NONE && (acc_def as usize) >= d && (acc_def as usize) < i {
                continue;
            }
            // regalloc2 ties a reused input to its own register; the same
            // register read again by the instruction would need a copy.
            if vcode.insts[d].ops.iter().any(|o| o.vreg() == acc.vreg()) {
                continue;
            }
            let Some(k) = exec_masked_vgpr_def(&vcode.insts[d], gpu, &vcode.vreg_classes) else { continue };
            let tied = vcode.insts[d].ops.len();
            if tied > 255 {
                continue;
            }
            let def = &mut vcode.insts[d];
            def.ops[k] = ra::Operand::reg_reuse_def(acc_new.vreg(), tied);
            def.ops.push(ra::Operand::reg_use(acc.vreg()));
            // Readers of `v` (all in this block, after `d`) read `acc'`.
            for j in d + 1..range.end {
                for op in &mut vcode.insts[j].ops {
                    if op.vreg() == v.vreg() && op.kind() == ra::OperandKind::Use {
                        *op = ra::Operand::new(acc_new.vreg(), op.constraint(), op.kind(), op.pos());
                    }
                }
            }
            vcode.insts[i] = MInst::nothing();
            folded += 1;
        }
    }
    folded
}
