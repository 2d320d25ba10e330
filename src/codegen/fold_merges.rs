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
//! 1. **Copy forwarding.** `d = Copy x` where neither side is pinned to a
//!    register: `d` becomes `x` and the copy goes, when
//!    - the copy is `x`'s only reader; or
//!    - nothing reads `x` after the copy, `x` is defined in the copy's
//!      block or its only predecessor (a long `x` joined to `d` is a range
//!      regalloc2 may split at a worse place than the copy: atomics_generic
//!      15 instructions more), and the copy is on no cycle (there it splits
//!      a loop-carried value: loop_phi 4 more); or
//!    - `x` is read after the copy (the base of a join's lane merge that
//!      the then-side still reads: `v = x * y` beside `x' = x + 1` merged
//!      into the copy), under the two conditions above, where the two hold
//!      one value until one is overwritten by a result tied to it, and
//!      neither is read after an instruction tying a result to the other,
//!      nor flows into a block parameter where the other is live or flows
//!      too, and `x` lives on after the copy only where `d` does. Such a
//!      pair joins alone, so the liveness it was judged on stays true.
//!
//!    None of these joins webs (what regalloc2 tries to keep in one
//!    register) into one of more than `WEB_MOST` registers (`Webs`).
//!
//!    The program is SSA, so `x`'s definition dominates every use of `d`.
//!    A copy under a partial EXEC writes only the active lanes of `d`;
//!    after forwarding the other lanes hold `x`'s instead of whatever
//!    `d`'s register held, which no reader may depend on (`d` was a fresh
//!    register). Liveness is per register, a walk over its live region
//!    (`Lives`), for the copies' sources and destinations only.
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
//! Merge folding also ties the result to the instruction's own read of
//! `acc` when it has one (`v = acc * y` becomes `acc' = acc * y`): the
//! instruction reads every active lane before it writes them.
//!
//! Cost: linear sweeps over the instructions, liveness walks over the live
//! regions of copied registers (one each), a strongly connected component
//! pass over the blocks, and where readers in other blocks were renamed,
//! one sweep more per chain of self-merges removed (in practice one or
//! two).

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
/// Without `by_liveness` (-O0) copies are forwarded only into their
/// source's one reader: the liveness rules make longer ranges that regalloc2
/// needs more registers and runs for (stress ifchain-10000 at -O0: 142 to
/// 225 ms with them, 17,759 to 14,744 instructions).
pub fn run(vcode: &mut VCode, gpu: Gpu, by_liveness: bool) -> Folded {
    let copies = forward_copies(vcode, by_liveness);
    let merges = fold_lane_merges(vcode, gpu);
    Folded { copies, merges }
}

fn unpinned(op: &ra::Operand) -> bool {
    matches!(op.constraint(), ra::OperandConstraint::Any | ra::OperandConstraint::Reg)
}

fn forward_copies(vcode: &mut VCode, by_liveness: bool) -> usize {
    let n = vcode.vreg_classes.len();
    let uses = vcode.use_counts();
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
    // Inside loops a copy whose source is read elsewhere stays: there it
    // splits a loop-carried value where regalloc2 would otherwise keep one
    // long range across the back edge and move it under every lane
    // (loop_phi 42 to 46 instructions when such copies went too).
    let looped = if by_liveness { looped_blocks(vcode) } else { Vec::new() };
    let candidates: Vec<usize> = (0..vcode.blocks.len())
        .flat_map(|b| vcode.blocks[b].insts.clone().map(move |i| (b, i)))
        .filter(|&(b, i)| {
            let m = &vcode.insts[i];
            matches!(m.kind, MKind::Copy) && m.ops.len() == 2 && !pinned[m.ops[0].vreg().vreg()] && !pinned[m.ops[1].vreg().vreg()] && (uses[m.ops[1].vreg().vreg()] == 1 || by_liveness && !looped[b])
        })
        .map(|(_, i)| i)
        .collect();
    // Sources read by their copy alone need no liveness.
    let wanted = candidates.iter().filter(|&&i| uses[vcode.insts[i].ops[1].vreg().vreg()] != 1).flat_map(|&i| [vcode.insts[i].ops[0].vreg(), vcode.insts[i].ops[1].vreg()]);
    let lives = Lives::new(vcode, wanted);
    let mut forwarded = 0;
    // First the copies whose source is dead after them: the two live ranges
    // do not meet, so any number of these join exactly.
    let mut shared = Vec::new();
    let mut joined = vec![false; n];
    let mut webs = Webs::new(vcode);
    for &i in &candidates {
        let (d, x) = (vcode.insts[i].ops[0].vreg(), vcode.insts[i].ops[1].vreg());
        if uses[x.vreg()] != 1 && (!lives.defined_near(vcode, x, i) || lives.live_after(vcode, x, i)) {
            shared.push(i);
            continue;
        }
        if !webs.join(x.vreg(), d.vreg()) {
            continue;
        }
        alias[d.vreg()] = x.vreg() as u32;
        joined[d.vreg()] = true;
        joined[x.vreg()] = true;
        vcode.insts[i] = MInst::nothing();
        forwarded += 1;
    }
    // Then copies whose source is read after them (the base of a join's
    // lane merge that the then-side still reads). The two hold one value
    // until either is overwritten, and overwriting happens only where a
    // result is tied to one of them: joined, they need no copy as long as
    // neither is read after an instruction tying a result to the other
    // (else regalloc2 copies it there, under every lane). Such a pair joins
    // alone: its liveness is the original code's.
    for i in shared {
        if let [d, x] = *vcode.insts[i].ops.as_slice() {
            let (d, x) = (d.vreg(), x.vreg());
            if joined[d.vreg()] || joined[x.vreg()] {
                continue;
            }
            let clear = |a: ra::VReg, b: ra::VReg| lives.reads(a).iter().filter(|r| r.tied || r.edge).all(|r| !lives.live_after(vcode, b, r.inst as usize) && !(r.edge && lives.reads(b).iter().any(|q| q.edge && q.inst == r.inst)));
            if lives.defined_near(vcode, x, i) && clear(d, x) && clear(x, d) && lives.covered_after(vcode, x, d, i) && webs.join(x.vreg(), d.vreg()) {
                joined[d.vreg()] = true;
                joined[x.vreg()] = true;
                alias[d.vreg()] = x.vreg() as u32;
                vcode.insts[i] = MInst::nothing();
                forwarded += 1;
            }
        }
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

/// Blocks on a cycle of the control-flow graph (`graph::components`).
fn looped_blocks(vcode: &VCode) -> Vec<bool> {
    let succs: Vec<Vec<usize>> = vcode.blocks.iter().map(|b| b.succs.iter().map(|s| s.index()).collect()).collect();
    crate::graph::components(&succs).1
}

/// Registers regalloc2 will try to keep in one register: block parameters
/// with their arguments, tied results with the inputs they reuse, copies
/// forwarded here (union-find with sizes).
///
/// regalloc2 stops merging two bundles once comparing their live ranges
/// takes 200 steps, so a long chain of joined values (one value updated in
/// a long run of divergent if-thens, its copies forwarded) comes apart
/// wherever its merges happen to stop, often on an edge leaving a block with
/// lanes off, where the move runs under every lane (four instructions).
/// Forwarding stops short of that: a copy that would make a web of more
/// than `WEB_MOST` registers stays, a one-instruction cut where every lane
/// is on. Measured on the stress bench's ifchain (instructions at 1,000 /
/// 3,000 / 10,000 operations; llc-22 -O2 1368 / 3465 / 10996 by the same
/// count): no limit 1143 / 3469 / 11836 (6 / 50 / 242 whole-wave moves);
/// 100: 1120 / 3641 / 10914; 130-150: 1111 / 3245-3248 / 10803-10837 (0
/// at 3,000); 170: 1159 / 3491 / 11664. The benchmark's functions stay
/// below every limit tried.
struct Webs {
    parent: Vec<u32>,
    size: Vec<u32>,
}

const WEB_MOST: u32 = 140;

impl Webs {
    fn new(vcode: &VCode) -> Webs {
        let n = vcode.vreg_classes.len();
        let mut webs = Webs { parent: (0..n as u32).collect(), size: vec![1; n] };
        for block in &vcode.blocks {
            for (s, args) in block.succs.iter().zip(&block.succ_args) {
                for (a, p) in args.iter().zip(&vcode.blocks[s.index()].params) {
                    webs.union(a.vreg(), p.vreg());
                }
            }
        }
        for m in &vcode.insts {
            for op in &m.ops {
                if let ra::OperandConstraint::Reuse(k) = op.constraint() {
                    webs.union(op.vreg().vreg(), m.ops[k].vreg().vreg());
                }
            }
        }
        webs
    }

    fn find(&mut self, mut v: usize) -> usize {
        while self.parent[v] as usize != v {
            let up = self.parent[self.parent[v] as usize];
            self.parent[v] = up;
            v = up as usize;
        }
        v
    }

    fn union(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            let (big, small) = if self.size[a] >= self.size[b] { (a, b) } else { (b, a) };
            self.parent[small] = big as u32;
            self.size[big] += self.size[small];
        }
    }

    /// Joins the webs of `a` and `b` unless that makes one of more than
    /// `WEB_MOST` registers.
    fn join(&mut self, a: usize, b: usize) -> bool {
        let (ra_, rb) = (self.find(a), self.find(b));
        if ra_ != rb && self.size[ra_] + self.size[rb] > WEB_MOST {
            return false;
        }
        self.union(a, b);
        true
    }
}

/// A read of a register: the block, the instruction (a block's successor
/// arguments are read at its last instruction) and whether a result of the
/// instruction is tied to it.
#[derive(Clone, Copy, Default)]
struct Read {
    block: u32,
    inst: u32,
    tied: bool,
    /// A successor argument: the register flows into a block parameter.
    edge: bool,
}

/// Where some registers are read and which blocks they are live into.
///
/// SSA makes liveness per register a walk over its live region: it is live
/// into every block from which a read is reachable without passing its
/// definition. One walk per register, so the cost is the sum of those
/// registers' live regions, not blocks times registers.
struct Lives {
    block_of: Vec<u32>,
    /// Dense number of a register asked about, `NONE` for the others.
    dense: Vec<u32>,
    read_start: Vec<u32>,
    reads: Vec<Read>,
    live_in_start: Vec<u32>,
    /// Per register, its live-in blocks, ascending.
    live_in: Vec<u32>,
    def_block: Vec<u32>,
}

const NONE: u32 = u32::MAX;

impl Lives {
    fn new(vcode: &VCode, wanted: impl Iterator<Item = ra::VReg>) -> Lives {
        let n = vcode.vreg_classes.len();
        let mut dense = vec![NONE; n];
        let mut count = 0u32;
        for v in wanted {
            if dense[v.vreg()] == NONE {
                dense[v.vreg()] = count;
                count += 1;
            }
        }
        let mut lives = Lives { block_of: Vec::new(), dense, read_start: vec![0; count as usize + 1], reads: Vec::new(), live_in_start: vec![0], live_in: Vec::new(), def_block: Vec::new() };
        if count == 0 {
            return lives;
        }
        lives.block_of = vec![0u32; vcode.insts.len()];
        for (b, block) in vcode.blocks.iter().enumerate() {
            lives.block_of[block.insts.clone()].fill(b as u32);
        }
        let dense = &lives.dense;
        let each_read = |f: &mut dyn FnMut(u32, Read)| {
            for (b, block) in vcode.blocks.iter().enumerate() {
                for i in block.insts.clone() {
                    let ops = &vcode.insts[i].ops;
                    for (j, op) in ops.iter().enumerate() {
                        let r = dense[op.vreg().vreg()];
                        if r != NONE && op.kind() == ra::OperandKind::Use {
                            let tied = ops.iter().any(|o| o.constraint() == ra::OperandConstraint::Reuse(j));
                            f(r, Read { block: b as u32, inst: i as u32, tied, edge: false });
                        }
                    }
                }
                for v in block.succ_args.iter().flatten() {
                    let r = dense[v.vreg()];
                    if r != NONE {
                        f(r, Read { block: b as u32, inst: block.insts.end.saturating_sub(1) as u32, tied: false, edge: true });
                    }
                }
            }
        };
        let start = &mut lives.read_start;
        each_read(&mut |r, _| start[r as usize + 1] += 1);
        for r in 0..count as usize {
            start[r + 1] += start[r];
        }
        let mut reads = vec![Read::default(); start[count as usize] as usize];
        let mut fill = start.clone();
        each_read(&mut |r, read| {
            reads[fill[r as usize] as usize] = read;
            fill[r as usize] += 1;
        });
        let mut def_block = vec![NONE; count as usize];
        for (b, block) in vcode.blocks.iter().enumerate() {
            let defs = block.params.iter().copied().chain(vcode.insts[block.insts.clone()].iter().flat_map(|m| m.ops.iter().filter(|o| o.kind() == ra::OperandKind::Def).map(|o| o.vreg())));
            for v in defs {
                if dense[v.vreg()] != NONE {
                    def_block[dense[v.vreg()] as usize] = b as u32;
                }
            }
        }
        let mut stamp = vec![NONE; vcode.blocks.len()];
        let mut work: Vec<u32> = Vec::new();
        for r in 0..count {
            let def = def_block[r as usize];
            let from = lives.live_in.len();
            for read in &reads[start[r as usize] as usize..start[r as usize + 1] as usize] {
                if read.block != def && stamp[read.block as usize] != r {
                    stamp[read.block as usize] = r;
                    work.push(read.block);
                }
            }
            while let Some(b) = work.pop() {
                lives.live_in.push(b);
                for p in &vcode.blocks[b as usize].preds {
                    let p = p.index() as u32;
                    if p != def && stamp[p as usize] != r {
                        stamp[p as usize] = r;
                        work.push(p);
                    }
                }
            }
            lives.live_in[from..].sort_unstable();
            lives.live_in_start.push(lives.live_in.len() as u32);
        }
        lives.reads = reads;
        lives.def_block = def_block;
        lives
    }

    /// Whether `v` is defined in the block of instruction `i` or in that
    /// block's only predecessor.
    fn defined_near(&self, vcode: &VCode, v: ra::VReg, i: usize) -> bool {
        let (def, b) = (self.def_block[self.dense[v.vreg()] as usize], self.block_of[i]);
        def == b || matches!(vcode.blocks[b as usize].preds.as_slice(), [p] if p.index() as u32 == def)
    }

    fn reads(&self, v: ra::VReg) -> &[Read] {
        let r = self.dense[v.vreg()] as usize;
        &self.reads[self.read_start[r] as usize..self.read_start[r + 1] as usize]
    }

    /// Whether `v` (one of the registers asked about) is read on some path
    /// from after instruction `i`.
    fn live_after(&self, vcode: &VCode, v: ra::VReg, i: usize) -> bool {
        self.live_after_but(vcode, v, i, i)
    }

    /// `live_after`, not counting a read by instruction `but`.
    fn live_after_but(&self, vcode: &VCode, v: ra::VReg, i: usize, but: usize) -> bool {
        let b = self.block_of[i];
        let live_in = self.live_in(v);
        self.reads(v).iter().any(|read| read.block == b && read.inst as usize > i && read.inst as usize != but) || vcode.blocks[b as usize].succs.iter().any(|s| live_in.binary_search(&(s.index() as u32)).is_ok())
    }

    fn live_in(&self, v: ra::VReg) -> &[u32] {
        let r = self.dense[v.vreg()] as usize;
        &self.live_in[self.live_in_start[r] as usize..self.live_in_start[r + 1] as usize]
    }

    /// Whether every block `x` is live into on paths from after instruction
    /// `i` has `d` live into it too: from there on `x` lives only where `d`
    /// does.
    fn covered_after(&self, vcode: &VCode, x: ra::VReg, d: ra::VReg, i: usize) -> bool {
        let (x_in, d_in) = (self.live_in(x), self.live_in(d));
        let mut seen: hashbrown::HashSet<u32> = hashbrown::HashSet::new();
        let mut work = vec![self.block_of[i]];
        while let Some(b) = work.pop() {
            for s in &vcode.blocks[b as usize].succs {
                let s = s.index() as u32;
                if x_in.binary_search(&s).is_err() || seen.contains(&s) {
                    continue;
                }
                if d_in.binary_search(&s).is_err() {
                    return false;
                }
                seen.insert(s);
                work.push(s);
            }
        }
        true
    }
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
    // Liveness of merge accumulators, for instructions that read theirs.
    let merge_bases = vcode.insts.iter().filter(|m| matches!(m.kind, MKind::LaneMerge { vector: true, masked: false, .. })).map(|m| m.ops[1].vreg());
    let accs = Lives::new(vcode, merge_bases);
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
            // register read again by the instruction would need a copy. An
            // instruction reading `acc` once, unconstrained, has that read
            // tied instead (`v = acc * y` becomes `acc' = acc * y` in place:
            // it reads every active lane before writing them).
            // Nor may anything read `acc` after the instruction: regalloc2
            // would copy it first, under every lane (four instructions for
            // the merge's one) — which forwarded copies made common: a
            // join's base that the then-side also passes to another join
            // parameter (stress ifchain-1000: 15 such copies).
            if accs.live_after_but(vcode, acc.vreg(), d, i) {
                continue;
            }
            let reads_acc: Vec<usize> = (0..vcode.insts[d].ops.len()).filter(|&j| vcode.insts[d].ops[j].vreg() == acc.vreg()).collect();
            let tied = match reads_acc.as_slice() {
                [] => vcode.insts[d].ops.len(),
                &[j] if unpinned(&vcode.insts[d].ops[j]) && vcode.insts[d].ops[j].kind() == ra::OperandKind::Use && vcode.insts[d].ops[j].pos() == ra::OperandPos::Early => j,
                _ => continue,
            };
            let Some(k) = exec_masked_vgpr_def(&vcode.insts[d], gpu, &vcode.vreg_classes) else { continue };
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
            if tied == def.ops.len() {
                def.ops.push(ra::Operand::reg_use(acc.vreg()));
            }
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

    fn add(def: ra::VReg, src: ra::VReg) -> MInst {
        let inst = isa::Inst::new(Opcode::v_add_u32, vec![isa::Operand::Off], vec![isa::Operand::Off]);
        MInst { kind: MKind::Real { inst, fills: vec![(Slot::Def(0), Fill::Whole(0)), (Slot::Use(0), Fill::Whole(1))] }, ops: vec![ra::Operand::reg_def(def), ra::Operand::reg_use(src)] }
    }

    /// `def = src + 1` written into `base`'s register where lanes are on
    /// (a lane merge already folded into its instruction).
    fn add_into(def: ra::VReg, src: ra::VReg, base: ra::VReg) -> MInst {
        let mut m = add(def, src);
        m.ops[0] = ra::Operand::reg_reuse_def(def, 2);
        m.ops.push(ra::Operand::reg_use(base));
        m
    }

    fn copy(d: ra::VReg, x: ra::VReg) -> MInst {
        MInst { kind: MKind::Copy, ops: vec![ra::Operand::reg_def(d), ra::Operand::reg_use(x)] }
    }

    fn implicit(v: ra::VReg) -> MInst {
        MInst { kind: MKind::ImplicitDef, ops: vec![ra::Operand::reg_def(v)] }
    }

    fn branch(kind: Branch, reads: &[ra::VReg]) -> MInst {
        MInst { kind: MKind::Branch(kind), ops: reads.iter().map(|&v| ra::Operand::reg_use(v)).collect() }
    }

    fn blocks(ranges: &[std::ops::Range<usize>], edges: &[(usize, usize, Vec<ra::VReg>)], params: &[(usize, Vec<ra::VReg>)]) -> Vec<MBlock> {
        let mut blocks: Vec<MBlock> = ranges.iter().map(|r| MBlock { insts: r.clone(), ..Default::default() }).collect();
        for (from, to, args) in edges {
            blocks[*from].succs.push(ra::Block::new(*to));
            blocks[*from].succ_args.push(args.clone());
            blocks[*to].preds.push(ra::Block::new(*from));
        }
        for (b, p) in params {
            blocks[*b].params = p.clone();
        }
        blocks
    }

    /// A divergent if-then whose join takes `x`, or on the then-side
    /// `x + 1`: lowering copies `x` (the join's merge base) before the
    /// branch, and the then-side, after reading `x` into `w`, writes the
    /// sum into the copy's register. `x` is a parameter of the block
    /// before the copy's; with `x_after_join` the program reads it at the
    /// end too.
    fn join_of_a_then_side(x_after_join: bool) -> (VCode, [ra::VReg; 5]) {
        let mut vc = VCode::default();
        let [x, d, s, p, w] = [0; 5].map(|_| vc.new_vreg(Class::Vgpr));
        let end: Vec<ra::VReg> = if x_after_join { vec![p, w, x] } else { vec![p, w] };
        vc.insts = vec![
            branch(Branch::Jump, &[]),
            copy(d, x),
            branch(Branch::IfExecZero, &[]),
            add(w, x),
            add_into(s, x, d),
            branch(Branch::Jump, &[]),
            branch(Branch::Jump, &[]),
            branch(Branch::EndProgram, &end),
        ];
        vc.blocks = blocks(&[0..1, 1..3, 3..6, 6..7, 7..8], &[(0, 1, vec![]), (1, 3, vec![]), (1, 2, vec![]), (3, 4, vec![d]), (2, 4, vec![s])], &[(0, vec![x]), (4, vec![p])]);
        vc.blocks[2].partial_exec = true;
        vc.blocks[3].partial_exec = true;
        (vc, [x, d, s, p, w])
    }

    #[test]
    fn a_copy_whose_source_is_read_on_in_the_then_side_goes() {
        let (mut vc, [x, _, s, p, w]) = join_of_a_then_side(false);
        assert_eq!(run(&mut vc, Gpu::Gfx90a, true), Folded { copies: 1, merges: 0 });
        assert!(vc.insts[1].is_nothing());
        // The then-side reads `x`, then writes the sum into `x`'s register.
        assert_eq!(vc.insts[3].ops[1].vreg(), x);
        assert_eq!(vc.insts[4].ops[0].vreg(), s);
        assert_eq!(vc.insts[4].ops[2].vreg(), x);
        assert_eq!(vc.blocks[3].succ_args[0], vec![x]);
        assert_eq!(vc.insts[7].ops.iter().map(|o| o.vreg()).collect::<Vec<_>>(), vec![p, w]);
    }

    #[test]
    fn a_copy_whose_source_is_read_after_the_join_stays() {
        // `x` read after the join: its register may not take the sum.
        let (mut vc, _) = join_of_a_then_side(true);
        assert_eq!(run(&mut vc, Gpu::Gfx90a, true), Folded { copies: 0, merges: 0 });
        assert!(!vc.insts[1].is_nothing());
    }

    #[test]
    fn a_copy_ending_its_source_goes_though_the_source_was_read_before() {
        let mut vc = VCode::default();
        let [x, y, d, e] = [0; 4].map(|_| vc.new_vreg(Class::Vgpr));
        vc.insts = vec![implicit(x), add(y, x), copy(d, x), add(e, d), branch(Branch::EndProgram, &[y, e])];
        vc.blocks = blocks(&[0..5], &[], &[]);
        assert_eq!(run(&mut vc, Gpu::Gfx90a, true), Folded { copies: 1, merges: 0 });
        assert!(vc.insts[2].is_nothing());
        assert_eq!(vc.insts[3].ops[1].vreg(), x);
    }

    #[test]
    fn a_copy_and_its_source_passed_on_one_edge_stay() {
        // Both flow into parameters of one block: joined, one register
        // would have to be two parameters (a copy on the edge, under
        // every lane where the edge leaves a block with lanes off).
        let mut vc = VCode::default();
        let [x, d, p, q] = [0; 4].map(|_| vc.new_vreg(Class::Vgpr));
        vc.insts = vec![copy(d, x), branch(Branch::Jump, &[]), branch(Branch::EndProgram, &[p, q])];
        vc.blocks = blocks(&[0..2, 2..3], &[(0, 1, vec![d, x])], &[(0, vec![x]), (1, vec![p, q])]);
        assert_eq!(run(&mut vc, Gpu::Gfx90a, true), Folded { copies: 0, merges: 0 });
    }

    #[test]
    fn a_copy_in_a_loop_whose_source_is_read_before_it_stays() {
        // Block 1 loops to itself. Outside loops the copy would go (its
        // source is dead after it); in one it splits the value's range.
        let mut vc = VCode::default();
        let [x, y, d, e] = [0; 4].map(|_| vc.new_vreg(Class::Vgpr));
        vc.insts = vec![branch(Branch::Jump, &[]), implicit(x), add(y, x), copy(d, x), add(e, d), branch(Branch::IfExecZero, &[]), branch(Branch::EndProgram, &[])];
        vc.blocks = blocks(&[0..1, 1..6, 6..7], &[(0, 1, vec![]), (1, 1, vec![]), (1, 2, vec![])], &[]);
        assert_eq!(looped_blocks(&vc), vec![false, true, false]);
        assert_eq!(run(&mut vc, Gpu::Gfx90a, true), Folded { copies: 0, merges: 0 });
        vc.blocks[1].succs.remove(0);
        vc.blocks[1].succ_args.remove(0);
        vc.blocks[1].preds.clear();
        assert_eq!(run(&mut vc, Gpu::Gfx90a, true), Folded { copies: 1, merges: 0 });
    }

    #[test]
    fn a_chain_of_copies_is_cut_where_its_web_outgrows_the_limit() {
        // x, d1 = Copy x, d2 = Copy d1, ...: each copy joins one more
        // register to x's web; the one that would make it WEB_MOST + 1
        // stays, and the chain goes on from there.
        let mut vc = VCode::default();
        let regs: Vec<ra::VReg> = (0..=200).map(|_| vc.new_vreg(Class::Vgpr)).collect();
        vc.insts = vec![implicit(regs[0])];
        vc.insts.extend(regs.windows(2).map(|w| copy(w[1], w[0])));
        vc.insts.push(branch(Branch::EndProgram, &regs[200..]));
        vc.blocks = blocks(&[0..vc.insts.len()], &[], &[]);
        assert_eq!(run(&mut vc, Gpu::Gfx90a, true), Folded { copies: 199, merges: 0 });
        let kept: Vec<usize> = (1..=200).filter(|&i| !vc.insts[i].is_nothing()).collect();
        assert_eq!(kept, vec![WEB_MOST as usize]);
        // The kept copy reads the chain's first register and writes the
        // register the rest of the chain became.
        assert_eq!(vc.insts[WEB_MOST as usize].ops[1].vreg(), regs[0]);
        assert_eq!(vc.insts[201].ops[0].vreg(), vc.insts[WEB_MOST as usize].ops[0].vreg());
    }

    #[test]
    fn a_merge_stays_where_the_accumulator_is_read_after_the_instruction() {
        // Folded, `acc` would have to be copied before the addition, under
        // every lane: four instructions for the merge's one.
        let mut vc = VCode::default();
        let [acc, y, v, acc1, w] = [0; 5].map(|_| vc.new_vreg(Class::Vgpr));
        let merge = MInst { kind: MKind::LaneMerge { vector: true, masked: false, invert: false }, ops: vec![ra::Operand::reg_reuse_def(acc1, 1), ra::Operand::reg_use(acc), ra::Operand::reg_use(v)] };
        vc.insts = vec![implicit(acc), implicit(y), add(v, y), add(w, acc), merge, branch(Branch::EndProgram, &[acc1, w])];
        vc.blocks = blocks(&[0..6], &[], &[]);
        assert_eq!(run(&mut vc, Gpu::Gfx90a, true), Folded { copies: 0, merges: 0 });
        // Without the later read it folds.
        vc.insts[3] = implicit(w);
        assert_eq!(run(&mut vc, Gpu::Gfx90a, true), Folded { copies: 0, merges: 1 });
    }

    #[test]
    fn a_merge_folds_into_an_instruction_reading_the_accumulator() {
        // `v = acc + 1; acc' = LaneMerge(acc, v)`: the addition writes
        // `acc'` in `acc`'s register, tied to the read it already has.
        let mut vc = VCode::default();
        let [acc, v, acc1] = [0; 3].map(|_| vc.new_vreg(Class::Vgpr));
        let merge = MInst { kind: MKind::LaneMerge { vector: true, masked: false, invert: false }, ops: vec![ra::Operand::reg_reuse_def(acc1, 1), ra::Operand::reg_use(acc), ra::Operand::reg_use(v)] };
        vc.insts = vec![implicit(acc), add(v, acc), merge, branch(Branch::EndProgram, &[acc1])];
        vc.blocks = blocks(&[0..4], &[], &[]);
        assert_eq!(run(&mut vc, Gpu::Gfx90a, true), Folded { copies: 0, merges: 1 });
        assert!(vc.insts[2].is_nothing());
        assert_eq!(vc.insts[1].ops.len(), 2);
        assert_eq!(vc.insts[1].ops[0].vreg(), acc1);
        assert_eq!(vc.insts[1].ops[0].constraint(), ra::OperandConstraint::Reuse(1));
        assert_eq!(vc.insts[1].ops[1].vreg(), acc);
    }

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
        assert_eq!(run(&mut vc, Gpu::Gfx90a, true), Folded { copies: 0, merges: 1 });
        assert!(vc.insts[3].is_nothing() && vc.insts[6].is_nothing());
        let reads = |i: usize| vc.insts[i].ops.iter().filter(|o| o.kind() == ra::OperandKind::Use).map(|o| o.vreg()).collect::<Vec<_>>();
        assert_eq!(vc.insts[2].ops[0].vreg(), acc1);
        assert_eq!(vc.insts[2].ops[0].constraint(), ra::OperandConstraint::Reuse(2));
        assert_eq!(reads(2), vec![x, acc0]);
        assert_eq!(reads(5), vec![acc1]);
        assert_eq!(reads(7), vec![w, acc1]);
    }
}
