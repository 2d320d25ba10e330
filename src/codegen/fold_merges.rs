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
//!    running lane): the instruction writes `acc'` itself, tied to `acc`'s
//!    register (a reused operand), and the merge goes. A VALU write under
//!    EXEC changes the active lanes only, which is exactly the merge;
//!    readers of `v` read `acc'`, which equals `v` in every lane `v` holds.
//!    If `acc` is still read after the instruction, regalloc2 copies it first
//!    (moves in blocks with lanes off run with every lane on: docs/regalloc.md).
//!    Readers in other blocks (a loop's exit value read again further on in
//!    the iteration) are dominated by `v`'s definition and run with lanes
//!    that passed it in this visit, so they may read `acc'` too; but only
//!    where `v` is passed along no edge (a back edge would then carry one
//!    value into two parameters, a whole-wave copy) and every instruction
//!    tying a result to `acc'` merges `v` (later exits' merges of `v`,
//!    which become `acc'' = LaneMerge(acc', acc')`: such a merge is `acc'`
//!    itself and goes too, so `acc'` is never tied while still read).
//!
//! Cost: two linear sweeps over the instructions, and where readers in other
//! blocks were renamed, one sweep more per chain of self-merges removed
//! (in practice one or two).

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
    let mut passed = vec![false; n];
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
            passed[v.vreg()] = true;
        }
    }
    // Per register: the value every instruction tying a result to it merges
    // in (NONE when none does, MANY when one is not a merge or they differ).
    let mut tied_value = vec![NONE; n];
    for m in &vcode.insts {
        for op in &m.ops {
            let ra::OperandConstraint::Reuse(k) = op.constraint() else { continue };
            let acc = m.ops[k].vreg().vreg();
            let merged = match m.kind {
                MKind::LaneMerge { vector: true, masked: false, .. } if k == 1 => m.ops[2].vreg().vreg() as u32,
                _ => MANY,
            };
            tied_value[acc] = if tied_value[acc] == NONE || tied_value[acc] == merged { merged } else { MANY };
        }
    }
    let mut folded = 0;
    let mut renames: Vec<(usize, usize)> = Vec::new();
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
            if d == NONE || (d as usize) < exec_from || d as usize >= i || acc.vreg() == v.vreg() {
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
            let v_reg = v.vreg().vreg();
            let elsewhere = read_in[v_reg] != b as u32;
            if elsewhere && passed[v_reg] || elsewhere && !matches!(tied_value[acc_new.vreg().vreg()], x if x == NONE || x == v_reg as u32) {
                continue;
            }
            let def = &mut vcode.insts[d];
            def.ops[k] = ra::Operand::reg_reuse_def(acc_new.vreg(), tied);
            def.ops.push(ra::Operand::reg_use(acc.vreg()));
            if !elsewhere {
                // Readers of `v` (all in this block, after `d`) read `acc'`.
                for j in d + 1..range.end {
                    for op in &mut vcode.insts[j].ops {
                        if op.vreg() == v.vreg() && op.kind() == ra::OperandKind::Use {
                            *op = ra::Operand::new(acc_new.vreg(), op.constraint(), op.kind(), op.pos());
                        }
                    }
                }
            } else {
                renames.push((v.vreg().vreg(), acc_new.vreg().vreg()));
            }
            vcode.insts[i] = MInst::nothing();
            folded += 1;
        }
    }
    if !renames.is_empty() {
        let mut to = vec![NONE; n];
        for &(v, acc_new) in &renames {
            to[v] = acc_new as u32;
        }
        let class_of = |v: usize| vcode.vreg_classes[v];
        // A merge of a value into itself (`acc'' = LaneMerge(acc', acc')`,
        // a later exit's merge of the value just renamed) is `acc'`
        // itself: its readers read `acc'`, and the merge goes (kept, its
        // result tied to `acc'` while `acc'` is read on, it would cost a
        // whole-wave copy).
        loop {
            for m in &mut vcode.insts {
                for op in &mut m.ops {
                    let mut r = to[op.vreg().vreg()];
                    while r != NONE && to[r as usize] != NONE {
                        r = to[r as usize];
                    }
                    if r != NONE && op.kind() == ra::OperandKind::Use {
                        *op = ra::Operand::new(ra::VReg::new(r as usize, class_of(r as usize).ra()), op.constraint(), op.kind(), op.pos());
                    }
                }
            }
            let mut changed = false;
            for m in &mut vcode.insts {
                if let MKind::LaneMerge { .. } = m.kind {
                    if m.ops[1].vreg() == m.ops[2].vreg() && to[m.ops[0].vreg().vreg()] == NONE {
                        to[m.ops[0].vreg().vreg()] = m.ops[1].vreg().vreg() as u32;
                        *m = MInst::nothing();
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        for b in &mut vcode.blocks {
            for v in b.succ_args.iter_mut().flatten() {
                let mut r = to[v.vreg()];
                while r != NONE && to[r as usize] != NONE {
                    r = to[r as usize];
                }
                if r != NONE {
                    *v = ra::VReg::new(r as usize, class_of(r as usize).ra());
                }
            }
        }
    }
    folded
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::vcode::{Branch, MBlock};
    use crate::isa;

    /// `v = x + 1` merged into a loop exit's accumulator in one block and
    /// read (and merged again at a second exit) in the next: the addition
    /// writes the accumulator itself, the reader in the other block reads
    /// it, and the second merge, now of the accumulator into itself, goes
    /// with its readers reading the first result.
    #[test]
    fn a_merged_value_read_in_a_later_block_is_read_from_the_accumulator() {
        let mut vc = VCode::default();
        let [x, acc0, v, acc1, w, acc2] = [0; 6].map(|_| vc.new_vreg(Class::Vgpr));
        let add = |def: ra::VReg, src: ra::VReg| {
            let inst = isa::Inst::new(Opcode::v_add_u32, vec![isa::Operand::Off], vec![isa::Operand::Off]);
            MInst {
                kind: MKind::Real { inst, fills: vec![(Slot::Def(0), Fill::Whole(0)), (Slot::Use(0), Fill::Whole(1))] },
                ops: vec![ra::Operand::reg_def(def), ra::Operand::reg_use(src)],
            }
        };
        let merge = |new: ra::VReg, acc: ra::VReg, value: ra::VReg| MInst {
            kind: MKind::LaneMerge { vector: true, masked: false, invert: false },
            ops: vec![ra::Operand::reg_reuse_def(new, 1), ra::Operand::reg_use(acc), ra::Operand::reg_use(value)],
        };
        let implicit = |v| MInst { kind: MKind::ImplicitDef, ops: vec![ra::Operand::reg_def(v)] };
        vc.insts = vec![
            implicit(x),
            implicit(acc0),
            add(v, x),
            merge(acc1, acc0, v),
            MInst { kind: MKind::Branch(Branch::Jump), ops: Vec::new() },
            add(w, v),
            merge(acc2, acc1, v),
            MInst { kind: MKind::Branch(Branch::EndProgram), ops: vec![ra::Operand::reg_use(w), ra::Operand::reg_use(acc2)] },
        ];
        vc.blocks = vec![
            MBlock { insts: 0..5, succs: vec![ra::Block::new(1)], succ_args: vec![Vec::new()], ..Default::default() },
            MBlock { insts: 5..8, preds: vec![ra::Block::new(0)], ..Default::default() },
        ];
        assert_eq!(run(&mut vc, Gpu::Gfx90a), Folded { copies: 0, merges: 1 });
        assert!(vc.insts[3].is_nothing() && vc.insts[6].is_nothing());
        let reads = |i: usize| vc.insts[i].ops.iter().filter(|o| o.kind() == ra::OperandKind::Use).map(|o| o.vreg()).collect::<Vec<_>>();
        assert_eq!(vc.insts[2].ops[0].vreg(), acc1);
        assert_eq!(vc.insts[2].ops[0].constraint(), ra::OperandConstraint::Reuse(2));
        assert_eq!(reads(2), vec![x, acc0]);
        assert_eq!(reads(5), vec![acc1]);
        assert_eq!(reads(7), vec![w, acc1]);
    }
}
