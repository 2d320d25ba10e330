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

use hashbrown::HashMap;

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

    // Definitions and uses of every register: (block, position), position
    // usize::MAX for block arguments (the block's end), 0-based instruction
    // index otherwise; parameters are definitions before instruction 0.
    let mut def_count: HashMap<ra::VReg, (u32, usize, usize)> = HashMap::new();
    let mut uses: HashMap<ra::VReg, Vec<(usize, usize)>> = HashMap::new();
    for (b, block) in blocks.iter().enumerate() {
        if rpo_index[b] == usize::MAX {
            continue;
        }
        for &p in &block.params {
            let e = def_count.entry(p).or_insert((0, b, 0));
            e.0 += 1;
        }
        for (i, m) in block.insts.iter().enumerate() {
            for o in &m.ops {
                if o.kind() == ra::OperandKind::Def {
                    let e = def_count.entry(o.vreg()).or_insert((0, b, i + 1));
                    e.0 += 1;
                } else {
                    uses.entry(o.vreg()).or_default().push((b, i + 1));
                }
            }
        }
        for a in block.succ_args.iter().flatten() {
            uses.entry(*a).or_default().push((b, usize::MAX));
        }
    }
    // Dominance in constant time.
    let interval = crate::mir::cfg::dominator_intervals(&idom, rpo[0]);
    let dominates = |a: usize, b: usize| crate::mir::cfg::interval_dominates(&interval, a, b);
    let mut variables: Vec<ra::VReg> = Vec::new();
    let mut seen = hashbrown::HashSet::new();
    for (&v, list) in &uses {
        let ok = match def_count.get(&v) {
            Some(&(1, db, dpos)) if !vars.zero_default.contains(&v) => list.iter().all(|&(ub, upos)| if ub == db { upos > dpos } else { dominates(db, ub) }),
            _ => false,
        };
        if !ok && seen.insert(v) {
            variables.push(v);
        }
    }
    for (&v, &(count, _, _)) in &def_count {
        if count > 1 && seen.insert(v) {
            variables.push(v);
        }
    }
    // Deterministic output: process in register order.
    variables.sort_by_key(|v| v.vreg());
    // The blocks each variable appears in (one pass over the function).
    let wanted: hashbrown::HashSet<ra::VReg> = variables.iter().copied().collect();
    let mut occurs: hashbrown::HashMap<ra::VReg, Vec<usize>> = hashbrown::HashMap::new();
    for (b, block) in blocks.iter().enumerate() {
        if rpo_index[b] == usize::MAX {
            continue;
        }
        let regs = block.params.iter().copied().chain(block.insts.iter().flat_map(|m| m.ops.iter().map(|o| o.vreg()))).chain(block.succ_args.iter().flatten().copied());
        for v in regs {
            if wanted.contains(&v) {
                let list = occurs.entry(v).or_default();
                if list.last() != Some(&b) {
                    list.push(b);
                }
            }
        }
    }
    let mut scratch = Scratch::new(n);
    for v in variables {
        let touched = occurs.remove(&v).unwrap_or_default();
        repair_variable(blocks, vc, &preds, &rpo_index, &touched, &mut scratch, v, vars.zero_default.contains(&v), mask_class, wave64);
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

#[allow(clippy::too_many_arguments)]
fn repair_variable(
    blocks: &mut [BlockBuild],
    vc: &mut VCode,
    preds: &[Vec<usize>],
    rpo_index: &[usize],
    touched: &[usize],
    scratch: &mut Scratch,
    var: ra::VReg,
    zero: bool,
    mask_class: Class,
    wave64: bool,
) {
    let class = vc.class(var);
    let Scratch { has_def, exposed, last_real, live_in, real_in, real_out, in_region, mentions, param, end } = scratch;
    // Per block: has a def; first event is a use (upward exposed); last def is a kill.
    for &b in touched {
        mentions[b] = true;
        let block = &blocks[b];
        let mut defined = false;
        if block.params.contains(&var) {
            defined = true;
            last_real[b] = true;
        }
        for m in &block.insts {
            let used = m.ops.iter().any(|o| o.kind() == ra::OperandKind::Use && o.vreg() == var);
            if used && !defined {
                exposed[b] = true;
            }
            if m.ops.iter().any(|o| o.kind() == ra::OperandKind::Def && o.vreg() == var) {
                defined = true;
                last_real[b] = !matches!(m.kind, MKind::ImplicitDef);
            }
        }
        if !defined && block.succ_args.iter().flatten().any(|&a| a == var) {
            exposed[b] = true;
        }
        has_def[b] = defined;
    }
    // Live-in blocks; the region is them and the blocks that mention the variable.
    let mut region: Vec<usize> = touched.to_vec();
    let mut stack: Vec<usize> = touched.iter().copied().filter(|&b| exposed[b]).collect();
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
    let fresh = |vc: &mut VCode| vc.new_vreg(class);
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
    // Renaming.
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
        if blocks[b].params.contains(&var) {
            cur = Cur::Reg(var);
        }
        let old = std::mem::take(&mut blocks[b].insts);
        let mut out: Vec<MInst> = Vec::with_capacity(old.len());
        let count = old.len();
        for (k, mut m) in old.into_iter().enumerate() {
            let is_last = k + 1 == count;
            let uses_var = m.ops.iter().any(|o| o.kind() == ra::OperandKind::Use && o.vreg() == var);
            if uses_var {
                if cur == Cur::Missing {
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
                            m = MInst { kind: MKind::Copy, ops: vec![ra::Operand::reg_def(d), ra::Operand::reg_use(x)] };
                            true
                        }
                        _ => false,
                    };
                    if !converted {
                        let (r, inst) = materialize(vc);
                        out.push(inst);
                        cur = Cur::Reg(r);
                    }
                }
                if let Cur::Reg(r) = cur {
                    for o in m.ops.iter_mut() {
                        if o.kind() == ra::OperandKind::Use && o.vreg() == var {
                            *o = ra::Operand::new(r, o.constraint(), o.kind(), o.pos());
                        }
                    }
                }
            }
            if is_last && blocks[b].succ_args.iter().flatten().any(|&a| a == var) {
                if cur == Cur::Missing {
                    let (r, inst) = materialize(vc);
                    out.push(inst);
                    cur = Cur::Reg(r);
                }
                let Cur::Reg(r) = cur else { unreachable!() };
                for a in blocks[b].succ_args.iter_mut().flatten() {
                    if *a == var {
                        *a = r;
                    }
                }
            }
            let defines = m.ops.iter().any(|o| o.kind() == ra::OperandKind::Def && o.vreg() == var);
            if defines {
                if matches!(m.kind, MKind::ImplicitDef) {
                    cur = Cur::Missing;
                    continue;
                }
                let d = fresh(vc);
                for o in m.ops.iter_mut() {
                    if o.kind() == ra::OperandKind::Def && o.vreg() == var {
                        *o = ra::Operand::new(d, o.constraint(), o.kind(), o.pos());
                    }
                }
                cur = Cur::Reg(d);
            }
            out.push(m);
        }
        blocks[b].insts = out;
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
                    blocks[p].insts.insert(at, inst);
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
