//! SSA repair: makes the machine CFG that selection built valid SSA for
//! regalloc2 (one definition per virtual register, every use dominated by it,
//! values meeting at joins as block parameters).
//!
//! Control-flow lowering (lower_cf.rs) assigns *variables* in several places
//! (lane masks, accumulators) and creates skip edges that bypass the block
//! defining a value used later. Every register that is defined more than once,
//! or has a use its definition does not dominate, is a variable here. Per
//! variable: live-in blocks by a backward walk from its upward-exposed uses;
//! which block starts may see a real value (a forward walk: an `ImplicitDef`
//! of a variable is a *kill*, "no value"); a block parameter at every live-in
//! join that a real value reaches; then renaming in reverse postorder. A read
//! where no value reaches is *missing*: a lane mask is empty there (0), any
//! other variable undefined. A `MaskAdd` or `LaneMerge` that would read a
//! missing accumulator becomes the plain first assignment instead, so masks and
//! accumulators live only from their first write to their last read.
//!
//! Cost: per variable, linear in its live region's blocks and in the
//! instructions of the blocks that mention it.

use regalloc2 as ra;

use super::isel::BlockBuild;
use super::lower_cf::Variables;
use super::vcode::{Class, Fill, MInst, MKind, Slot, VCode};
use crate::isa::{self, Opcode};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Cur {
    Missing,
    Reg(ra::VReg),
}

/// Drops machine blocks no path from the entry reaches (heads of blocks that
/// every edge enters directly, walk points nothing falls into), renumbering
/// successors.
pub(super) fn remove_unreachable(blocks: &mut Vec<BlockBuild>) {
    let n = blocks.len();
    let mut reach = vec![false; n];
    let mut stack = vec![0usize];
    while let Some(b) = stack.pop() {
        if std::mem::replace(&mut reach[b], true) {
            continue;
        }
        stack.extend(blocks[b].succs.iter().copied().filter(|&s| !reach[s]));
    }
    if reach.iter().all(|&r| r) {
        return;
    }
    let mut remap = vec![usize::MAX; n];
    let mut next = 0;
    for b in 0..n {
        if reach[b] {
            remap[b] = next;
            next += 1;
        }
    }
    let old = std::mem::take(blocks);
    for (b, mut block) in old.into_iter().enumerate() {
        if reach[b] {
            for s in block.succs.iter_mut() {
                *s = remap[*s];
            }
            blocks.push(block);
        }
    }
}

/// Where a variable appears in a block: its parameter (sorts first), an
/// instruction (index + 1), or the branch arguments (sorts last).
const AT_PARAM: u32 = 0;
const AT_ARGS: u32 = u32::MAX;

/// Edits of a block's instruction list, applied once every variable is
/// repaired, so that instruction indices stay valid meanwhile: instructions
/// to insert before an index (in the order made) and instructions to drop.
#[derive(Default)]
struct Edits {
    insert: Vec<(usize, MInst)>,
    drop: Vec<usize>,
}

/// Repairs `blocks` in place (see the module docs).
pub(super) fn repair(blocks: &mut [BlockBuild], vc: &mut VCode, vars: &Variables, mask_class: Class, wave64: bool) {
    let n = blocks.len();
    if n == 0 {
        return;
    }
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (b, block) in blocks.iter().enumerate() {
        for &s in &block.succs {
            if !preds[s].contains(&b) {
                preds[s].push(b);
            }
        }
    }
    let succs: Vec<Vec<usize>> = blocks.iter().map(|b| b.succs.clone()).collect();
    let rpo = reverse_postorder(blocks);
    let mut rpo_index = vec![usize::MAX; n];
    for (i, &b) in rpo.iter().enumerate() {
        rpo_index[b] = i;
    }
    let idom = crate::mir::cfg::immediate_dominators(&succs, &preds, &[0]);

    // Definitions of every register, by register number: (count, block,
    // position), position 0 for parameters, the instruction's index + 1
    // otherwise.
    let registers = vc.vreg_classes.len();
    let mut defs: Vec<(u32, usize, usize)> = vec![(0, 0, 0); registers];
    let reachable = |b: usize| rpo_index[b] != usize::MAX;
    for (b, block) in blocks.iter().enumerate().filter(|&(b, _)| reachable(b)) {
        for &p in &block.params {
            let d = &mut defs[p.vreg()];
            *d = (d.0 + 1, if d.0 == 0 { b } else { d.1 }, if d.0 == 0 { 0 } else { d.2 });
        }
        for (i, m) in block.insts.iter().enumerate() {
            for o in m.ops.iter().filter(|o| o.kind() == ra::OperandKind::Def) {
                let d = &mut defs[o.vreg().vreg()];
                *d = (d.0 + 1, if d.0 == 0 { b } else { d.1 }, if d.0 == 0 { i + 1 } else { d.2 });
            }
        }
    }
    // Variables: registers defined more than once, lane masks, and registers
    // read where their one definition does not dominate (block arguments
    // read at the block's end).
    let interval = crate::mir::cfg::dominator_intervals(&idom, rpo[0]);
    let dominates = |a: usize, b: usize| crate::mir::cfg::interval_dominates(&interval, a, b);
    let mut is_variable: Vec<bool> = defs.iter().map(|d| d.0 > 1).collect();
    for (b, block) in blocks.iter().enumerate().filter(|&(b, _)| reachable(b)) {
        let reads = block.insts.iter().enumerate().flat_map(|(i, m)| m.ops.iter().filter(|o| o.kind() == ra::OperandKind::Use).map(move |o| (o.vreg(), i + 1)));
        for (v, at) in reads.chain(block.succ_args.iter().flatten().map(|&a| (a, usize::MAX))) {
            if is_variable[v.vreg()] {
                continue;
            }
            let ok = match defs[v.vreg()] {
                (1, db, dpos) => !vars.zero_default.contains(&v) && if db == b { at > dpos } else { dominates(db, b) },
                _ => false,
            };
            is_variable[v.vreg()] = !ok;
        }
    }
    // Every appearance of a variable, (variable, block, AT_*), in register
    // order, then block order, then order within the block (one pass over
    // the function and a sort).
    let mut appearances: Vec<(u32, usize, u32)> = Vec::new();
    for (b, block) in blocks.iter().enumerate().filter(|&(b, _)| reachable(b)) {
        for &p in &block.params {
            if is_variable[p.vreg()] {
                appearances.push((p.vreg() as u32, b, AT_PARAM));
            }
        }
        for (i, m) in block.insts.iter().enumerate() {
            for o in &m.ops {
                if is_variable[o.vreg().vreg()] {
                    appearances.push((o.vreg().vreg() as u32, b, i as u32 + 1));
                }
            }
        }
        for &a in block.succ_args.iter().flatten() {
            if is_variable[a.vreg()] {
                appearances.push((a.vreg() as u32, b, AT_ARGS));
            }
        }
    }
    // Pushed in block order and in order within each block: sorting the
    // whole tuples orders by register and keeps that order.
    appearances.sort_unstable();
    appearances.dedup();
    let mut scratch = Scratch::new(n);
    let mut edits: Vec<Edits> = (0..n).map(|_| Edits::default()).collect();
    let mut touched: Vec<(usize, Vec<u32>)> = Vec::new();
    for group in appearances.chunk_by(|x, y| x.0 == y.0) {
        let var = ra::VReg::new(group[0].0 as usize, vc.vreg_classes[group[0].0 as usize].ra());
        touched.clear();
        for in_block in group.chunk_by(|x, y| x.1 == y.1) {
            touched.push((in_block[0].1, in_block.iter().map(|x| x.2).collect()));
        }
        repair_variable(blocks, vc, &preds, &rpo_index, &touched, &mut scratch, &mut edits, var, vars.zero_default.contains(&var), mask_class, wave64);
    }
    for (block, edits) in blocks.iter_mut().zip(edits) {
        if edits.insert.is_empty() && edits.drop.is_empty() {
            continue;
        }
        let mut insert = edits.insert;
        insert.sort_by_key(|&(at, _)| at);
        let mut insert = insert.into_iter().peekable();
        let old = std::mem::take(&mut block.insts);
        let mut out = Vec::with_capacity(old.len() + insert.len());
        for (k, m) in old.into_iter().enumerate() {
            while let Some((_, inst)) = insert.next_if(|&(at, _)| at == k) {
                out.push(inst);
            }
            if !edits.drop.contains(&k) {
                out.push(m);
            }
        }
        block.insts = out;
    }
}

/// Per-block facts of the variable being repaired, reused across variables
/// (only the entries of its region are set, and reset afterwards).
struct Scratch {
    has_def: Vec<bool>,
    exposed: Vec<bool>,
    last_real: Vec<bool>,
    live_in: Vec<bool>,
    real_in: Vec<bool>,
    real_out: Vec<bool>,
    in_region: Vec<bool>,
    /// The block mentions the variable (a parameter, an operand or a
    /// branch argument); the other blocks of its region only pass it on.
    mentions: Vec<bool>,
    param: Vec<Option<ra::VReg>>,
    end: Vec<Cur>,
}

impl Scratch {
    fn new(n: usize) -> Scratch {
        Scratch {
            has_def: vec![false; n],
            exposed: vec![false; n],
            last_real: vec![false; n],
            live_in: vec![false; n],
            real_in: vec![false; n],
            real_out: vec![false; n],
            in_region: vec![false; n],
            mentions: vec![false; n],
            param: vec![None; n],
            end: vec![Cur::Missing; n],
        }
    }

    fn reset(&mut self, region: &[usize]) {
        for &b in region {
            self.has_def[b] = false;
            self.exposed[b] = false;
            self.last_real[b] = false;
            self.live_in[b] = false;
            self.real_in[b] = false;
            self.real_out[b] = false;
            self.in_region[b] = false;
            self.mentions[b] = false;
            self.param[b] = None;
            self.end[b] = Cur::Missing;
        }
    }
}

/// Repairs one variable. `touched`: the blocks it appears in, each with
/// where (AT_PARAM, instruction index + 1, AT_ARGS, in order). Instructions
/// are changed in place; insertions and deletions go to `edits`.
#[allow(clippy::too_many_arguments)]
fn repair_variable(
    blocks: &mut [BlockBuild],
    vc: &mut VCode,
    preds: &[Vec<usize>],
    rpo_index: &[usize],
    touched: &[(usize, Vec<u32>)],
    scratch: &mut Scratch,
    edits: &mut [Edits],
    var: ra::VReg,
    zero: bool,
    mask_class: Class,
    wave64: bool,
) {
    let class = vc.class(var);
    let Scratch { has_def, exposed, last_real, live_in, real_in, real_out, in_region, mentions, param, end } = scratch;
    let reads = |m: &MInst| m.ops.iter().any(|o| o.kind() == ra::OperandKind::Use && o.vreg() == var);
    let writes = |m: &MInst| m.ops.iter().any(|o| o.kind() == ra::OperandKind::Def && o.vreg() == var);
    // Per block: has a def; first event is a use (upward exposed); last def is a kill.
    for (b, at) in touched {
        let b = *b;
        mentions[b] = true;
        let mut defined = false;
        for &k in at {
            if k == AT_PARAM {
                defined = true;
                last_real[b] = true;
            } else if k == AT_ARGS {
                exposed[b] |= !defined;
            } else {
                let m = &blocks[b].insts[k as usize - 1];
                if reads(m) && !defined {
                    exposed[b] = true;
                }
                if writes(m) {
                    defined = true;
                    last_real[b] = !matches!(m.kind, MKind::ImplicitDef);
                }
            }
        }
        has_def[b] = defined;
    }
    // Live-in blocks; the region is them and the blocks that mention the variable.
    let mut region: Vec<usize> = touched.iter().map(|t| t.0).collect();
    let mut stack: Vec<usize> = region.iter().copied().filter(|&b| exposed[b]).collect();
    for &b in &stack {
        live_in[b] = true;
    }
    while let Some(b) = stack.pop() {
        for &p in &preds[b] {
            if rpo_index[p] == usize::MAX || has_def[p] || live_in[p] {
                continue;
            }
            live_in[p] = true;
            region.push(p);
            stack.push(p);
        }
    }
    region.retain(|&b| !std::mem::replace(&mut in_region[b], true));
    region.sort_by_key(|&b| rpo_index[b]);
    for &b in &region {
        real_out[b] = has_def[b] && last_real[b];
    }
    // Where a real value may arrive (forward, within the live region).
    let mut changed = true;
    while changed {
        changed = false;
        for &b in &region {
            if !live_in[b] || real_in[b] {
                continue;
            }
            if preds[b].iter().any(|&p| real_out[p]) {
                real_in[b] = true;
                changed = true;
                if !has_def[b] {
                    real_out[b] = true;
                }
            }
        }
    }
    // Parameters at joins.
    for &b in &region {
        if live_in[b] && real_in[b] && preds[b].len() >= 2 {
            let p = vc.new_vreg(class);
            blocks[b].params.push(p);
            param[b] = Some(p);
        }
    }
    let materialize = |vc: &mut VCode| -> (ra::VReg, MInst) {
        let r = vc.new_vreg(class);
        let inst = if zero {
            let _ = mask_class;
            let op = if wave64 { Opcode::s_mov_b64 } else { Opcode::s_mov_b32 };
            MInst {
                kind: MKind::Real { inst: isa::Inst::new(op, vec![isa::Operand::Off], vec![isa::Operand::imm32(0)]), fills: vec![(Slot::Def(0), Fill::Whole(0))] },
                ops: vec![ra::Operand::reg_def(r)],
            }
        } else {
            MInst { kind: MKind::ImplicitDef, ops: vec![ra::Operand::reg_def(r)] }
        };
        (r, inst)
    };
    // Renaming, in reverse postorder (the mentioning blocks in that order
    // are a subsequence of the region).
    let mut by_rpo: Vec<&(usize, Vec<u32>)> = touched.iter().collect();
    by_rpo.sort_by_key(|t| rpo_index[t.0]);
    let mut next_mention = by_rpo.into_iter();
    for &b in &region {
        let mut cur = if let Some(p) = param[b] {
            Cur::Reg(p)
        } else if live_in[b] && real_in[b] {
            // One predecessor (processed first in reverse postorder).
            preds[b].iter().map(|&p| end[p]).find(|c| *c != Cur::Missing).unwrap_or(Cur::Missing)
        } else {
            Cur::Missing
        };
        if !mentions[b] {
            // Passed through: no instruction to rename (a variable's region
            // spans many more blocks than mention it, so this keeps the
            // repair linear in the mentions, not in the region's code).
            end[b] = cur;
            continue;
        }
        let (mentioned, at) = next_mention.next().expect("a mentioning block");
        debug_assert_eq!(*mentioned, b);
        let last = blocks[b].insts.len().saturating_sub(1);
        let passes_on = at.last() == Some(&AT_ARGS);
        let mut args_done = false;
        let rename_args = |cur: &mut Cur, block: &mut BlockBuild, edits: &mut Edits, vc: &mut VCode| {
            if *cur == Cur::Missing {
                let (r, inst) = materialize(vc);
                edits.insert.push((last, inst));
                *cur = Cur::Reg(r);
            }
            let Cur::Reg(r) = *cur else { unreachable!() };
            for a in block.succ_args.iter_mut().flatten() {
                if *a == var {
                    *a = r;
                }
            }
        };
        for &p in at {
            if p == AT_PARAM {
                cur = Cur::Reg(var);
                continue;
            }
            if p == AT_ARGS {
                if !args_done {
                    rename_args(&mut cur, &mut blocks[b], &mut edits[b], vc);
                    args_done = true;
                }
                continue;
            }
            let k = p as usize - 1;
            if reads(&blocks[b].insts[k]) {
                if cur == Cur::Missing {
                    let m = &mut blocks[b].insts[k];
                    let converted = match &m.kind {
                        MKind::MaskAdd { first: false, sel } if m.ops.get(1).is_some_and(|o| o.vreg() == var) => {
                            let sel = *sel;
                            m.ops.remove(1);
                            // No longer tied to the accumulator it would have read.
                            m.ops[0] = ra::Operand::reg_def(m.ops[0].vreg());
                            m.kind = MKind::MaskAdd { first: true, sel };
                            true
                        }
                        MKind::LaneMerge { .. } if m.ops.get(1).is_some_and(|o| o.vreg() == var) && m.ops.get(2).is_some_and(|o| o.vreg() != var) => {
                            // Merging into nothing: the value itself.
                            let d = m.ops[0].vreg();
                            let x = m.ops[2].vreg();
                            *m = MInst { kind: MKind::Copy, ops: vec![ra::Operand::reg_def(d), ra::Operand::reg_use(x)] };
                            true
                        }
                        _ => false,
                    };
                    if !converted {
                        let (r, inst) = materialize(vc);
                        edits[b].insert.push((k, inst));
                        cur = Cur::Reg(r);
                    }
                }
                if let Cur::Reg(r) = cur {
                    for o in blocks[b].insts[k].ops.iter_mut() {
                        if o.kind() == ra::OperandKind::Use && o.vreg() == var {
                            *o = ra::Operand::new(r, o.constraint(), o.kind(), o.pos());
                        }
                    }
                }
            }
            // The branch arguments are read with the last instruction's
            // operands, before its results.
            if k == last && passes_on && !args_done {
                rename_args(&mut cur, &mut blocks[b], &mut edits[b], vc);
                args_done = true;
            }
            if writes(&blocks[b].insts[k]) {
                if matches!(blocks[b].insts[k].kind, MKind::ImplicitDef) {
                    cur = Cur::Missing;
                    edits[b].drop.push(k);
                    continue;
                }
                let d = vc.new_vreg(class);
                for o in blocks[b].insts[k].ops.iter_mut() {
                    if o.kind() == ra::OperandKind::Def && o.vreg() == var {
                        *o = ra::Operand::new(d, o.constraint(), o.kind(), o.pos());
                    }
                }
                cur = Cur::Reg(d);
            }
        }
        end[b] = cur;
    }
    // Parameter inputs.
    let mut outside = Vec::new();
    for &b in &region {
        let Some(_) = param[b] else { continue };
        for &p in &preds[b] {
            let arg = match end[p] {
                Cur::Reg(r) if rpo_index[p] != usize::MAX => r,
                _ => {
                    let (r, inst) = materialize(vc);
                    let at = blocks[p].insts.len() - 1;
                    edits[p].insert.push((at, inst));
                    end[p] = Cur::Reg(r);
                    if !in_region[p] {
                        outside.push(p);
                    }
                    r
                }
            };
            for k in 0..blocks[p].succs.len() {
                if blocks[p].succs[k] == b {
                    blocks[p].succ_args[k].push(arg);
                }
            }
        }
    }
    region.extend(outside);
    scratch.reset(&region);
}

fn reverse_postorder(blocks: &[BlockBuild]) -> Vec<usize> {
    crate::mir::cfg::reverse_postorder(blocks.len(), |b, i| blocks[b].succs.get(i).copied())
}
