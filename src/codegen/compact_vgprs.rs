//! compact_vgprs: re-assigns the VGPRs of values that live within one
//! block, after allocation and expansion, where that lowers the kernel's
//! VGPR count.
//!
//! regalloc2 allocates single registers and knows no pairs; expansion then
//! needs aligned pairs and tuples (addresses, 64-bit results, multi-dword
//! accesses), found in pair windows above the allocation or, after
//! window_rename, in whatever pair happens to be free (docs/regalloc.md).
//! Singles scattered over odd and even registers leave no free pair, so a
//! straight-line kernel can need half again the registers its values do
//! (stencil on gfx90a: 14 VGPRs for 8 values live at once). Within a
//! block the code is final, so its block-local values can be placed again
//! knowing every tuple: a small linear-scan allocation over the block.
//!
//! **Lives.** For each VGPR of a block, a life runs from an instruction that
//! writes it while it is free (its old value needed in no lane: the
//! dead_moves scan, which takes EXEC into account) to the last reference
//! before it is free again, or to an instruction that reads it and writes
//! all of it again (`v3 = v3 + s0`, a load replacing its address), which
//! starts the next life. A life that starts before the block or does
//! not end in it, and every reference outside a life, stays where it is
//! (fixed), and so does one that contains an EXEC write or a branch (its
//! write and its reads must see the same lanes: a write under an if's EXEC
//! read after the join is a lane merge, whose other lanes the register
//! still holds). Lives that one tuple operand names together (`v[4:5]` read by
//! a load; a 64-bit result) move together, at the same distances, as one
//! group; a group with a fixed member stays. Aligned tuples (gfx90a,
//! gfx942) constrain the group's parity.
//!
//! **Placement.** Groups in order of their first write take the lowest
//! registers free (of fixed and of placed lives) at every point they
//! occupy: from after the write (from the write itself where the
//! instruction may not write a register it reads: gfx11's 64-bit
//! multiply-adds; other results, tuples too, may overlap their sources in
//! any way, as llc-22's do: `global_load_dwordx4 v[0:3], v[0:1]`) to the
//! last read (one point more where that
//! instruction also writes the register, a result nothing reads). Points
//! are instruction boundaries, so a life may start where another ends, in
//! the instruction that reads the one and writes the other. Only lives
//! move, every reference of a life with them; the lanes a life writes are
//! those its instructions wrote before, and its new register held nothing
//! needed, so the code computes what it did.
//!
//! **Copies.** A `v_mov_b32 d, s` that ends a life of s and starts one of
//! d joins the two: a group with a member so joined to a placed life tries
//! that life's register first (values copied into a pair window take the
//! pair's registers when the pair is placed before them). A copy whose two
//! lives share a register copies it onto itself and goes. Four placements
//! are tried, each order with and without these hints; the one naming the
//! fewest registers wins, then the one deleting the most copies.
//!
//! **When.** Kernels whose every exit is `s_endpgm` (the scan knows what
//! other blocks read, and that a call reads the VGPRs its arguments use;
//! no life contains a call, which may write any register it clobbers),
//! without spills, AGPRs or `movrel`; applied in the blocks that named
//! registers at or above the kernel's new VGPR count (the highest register
//! any block names) where it drops, and in the blocks where copies go
//! (never naming more than they did), so code that gains nothing is left
//! alone (VOPD pairs on gfx11 depend on register banks).
//!
//! **Validator.** In debug builds (every test) and with `verify_passes`
//! (the fuzzers) each block placed again is
//! checked against its old code: every VGPR an instruction reads holds the
//! value the old code's instruction read there (named by the instruction
//! that wrote it), and so does every VGPR live after the block.
//!
//! Cost: per block, one backward scan for free registers, lives and groups
//! in one walk, and per group the union of busy registers over the points
//! it occupies (bit sets of the VGPR count); about a microsecond per
//! instruction, so blocks of more than `LARGEST_BLOCK` instructions are
//! left alone.

use super::dead_moves::{ends_lives, writes_fully, FreeVgprs, Scan};
use super::forward_copies::vgpr_copy;
use super::expand::{keep_marked, result_apart_from_sources, vgpr_span, vgprs_named, Emitted, Expanded};
use crate::isa::{Opcode, Operand, PhysReg, Target};

/// The largest block placed again (instructions).
pub const LARGEST_BLOCK: usize = 50_000;

/// Renames block-local lives where that lowers the VGPR count or deletes
/// copies; returns the VGPRs saved, or what the validator (with
/// `validate`) found changed.
pub fn run(code: &mut Expanded, target: Target, validate: bool) -> Result<u32, String> {
    if code.agprs > 0 || code.spills.vgprs > 0 || code.spills.slot_vgprs > 0 || code.windows.is_some() {
        return Ok(0);
    }
    let any = |f: &dyn Fn(&Emitted) -> bool| code.blocks.iter().flat_map(|(_, _, b)| b).any(f);
    if any(&|e| e.inst.op == Opcode::s_setpc_b64 || e.inst.op.info().name.contains("movrel") || e.inst.vopd_y.is_some()) {
        return Ok(0);
    }
    let top = vgprs_named(&code.blocks);
    if top < 2 || top > 256 {
        return Ok(0);
    }
    if code.blocks.iter().all(|(_, _, b)| b.len() > LARGEST_BLOCK) {
        return Ok(0);
    }
    let scan = Scan::new(code, target);
    if !scan.knows_other_blocks() {
        return Ok(0);
    }
    let plans: Vec<(u16, u16, Option<Plan>)> = (0..code.blocks.len())
        .map(|index| {
            let block = &code.blocks[index].2;
            let named = block.iter().flat_map(|e| e.inst.defs.iter().chain(&e.inst.uses)).filter_map(vgpr_span).map(|(b, s)| b + s).max().unwrap_or(0);
            // Blocks beyond LARGEST_BLOCK instructions are left as they
            // are: placement costs about a microsecond per instruction
            // (0.75 s of a 17 s compilation of one million instructions),
            // for a count that matters little in code that size.
            if named == 0 || block.len() > LARGEST_BLOCK {
                return (named, named, None);
            }
            let free = FreeVgprs::new(&scan, index, block, top);
            // Where as many registers hold values as the block names, no
            // placement names fewer.
            let words = usize::from(top).div_ceil(64);
            let valid = |w: usize| if (w + 1) * 64 <= usize::from(top) { u64::MAX } else { (1u64 << (top % 64)) - 1 };
            let most_held = (0..=block.len()).map(|p| (0..words).map(|w| (!free.word(p, w) & valid(w)).count_ones()).sum::<u32>()).max().unwrap_or(0);
            // Where as many registers hold values as the block names, no
            // placement names fewer; only copies may go.
            if most_held >= u32::from(named) && !block.iter().any(|e| vgpr_copy_in(e).is_some_and(|(d, s)| d != s)) {
                return (named, named, None);
            }
            match place(block, &free, top, most_held as u16, target) {
                Some(plan) if plan.named < named || plan.coalesced > 0 && plan.named <= named => (named, plan.named, Some(plan)),
                _ => (named, named, None),
            }
        })
        .collect();
    let new_top = plans.iter().map(|(_, after, _)| *after).max().unwrap_or(0).max(1);
    let coalescing = plans.iter().any(|(_, _, plan)| plan.as_ref().is_some_and(|p| p.coalesced > 0));
    if new_top >= top && !coalescing {
        return Ok(0);
    }
    // Blocks naming registers at or above the new count are placed again,
    // and blocks where copies go.
    for (index, (before, _, plan)) in plans.into_iter().enumerate() {
        if let Some(plan) = plan.filter(|p| before > new_top || p.coalesced > 0) {
            let old = validate.then(|| code.blocks[index].2.clone());
            apply(&mut code.blocks[index].2, &plan);
            if let Some(old) = old {
                let free = FreeVgprs::new(&scan, index, &old, top);
                if let Err(why) = same_values(&old, &code.blocks[index].2, |r| free.at(old.len(), r)) {
                    return Err(format!("compact_vgprs changed what block '{}' computes: {why}", code.blocks[index].1));
                }
            }
            if plan.coalesced > 0 {
                let keep: Vec<bool> = code.blocks[index].2.iter().map(|e| !vgpr_copy_in(e).is_some_and(|(d, s)| d == s)).collect();
                keep_marked(&mut code.blocks[index].2, &keep);
            }
        }
    }
    let saved = u32::from(top.saturating_sub(new_top));
    code.vgprs = u32::from(vgprs_named(&code.blocks).max(1));
    Ok(saved)
}

/// One life: register `reg` from the write at `start` to the last
/// reference at `end`; its points are `from..=to`.
struct Life {
    reg: u16,
    start: usize,
    end: usize,
    from: usize,
    to: usize,
    /// The instruction at `end` writes the register again (its result is
    /// another life's or fixed).
    renewed: bool,
}

/// A block's lives, by register (each register's contiguous in `all`, in
/// order of start).
struct Lives {
    all: Vec<Life>,
    range_of: Vec<(usize, usize)>,
}

impl Lives {
    fn new(all: Vec<Life>, top: u16) -> Lives {
        let mut range_of = vec![(0usize, 0usize); usize::from(top)];
        let mut i = 0;
        while i < all.len() {
            let (r, first) = (all[i].reg, i);
            while i < all.len() && all[i].reg == r {
                i += 1;
            }
            range_of[usize::from(r)] = (first, i);
        }
        Lives { all, range_of }
    }

    /// The life of register `r` that instruction `k` writes (`def`) or
    /// reads in, if any (None: a fixed reference).
    fn at(&self, r: u16, k: usize, def: bool) -> Option<usize> {
        let (first, end) = *self.range_of.get(usize::from(r))?;
        owner(&self.all[first..end], k, def).map(|n| first + n)
    }
}

/// Which of one register's lives (in order) instruction `k` writes (`def`)
/// or reads in, if any.
fn owner(own: &[Life], k: usize, def: bool) -> Option<usize> {
    // The last life starting at or before k (before k for a read).
    let n = own.partition_point(|l| if def { l.start <= k } else { l.start < k });
    let l = own.get(n.checked_sub(1)?)?;
    // A life renewed at its end reads there; the write is the next one's.
    (k < l.end || k == l.end && !(def && l.renewed)).then_some(n - 1)
}

/// The lives of each group (by its root life) with their distances from
/// the root, in one array.
struct Groups {
    start: Vec<u32>,
    members: Vec<(usize, i32)>,
}

impl Groups {
    fn new(roots: &[(usize, i32)]) -> Groups {
        let mut start = vec![0u32; roots.len() + 1];
        for &(root, _) in roots {
            start[root + 1] += 1;
        }
        for i in 0..roots.len() {
            start[i + 1] += start[i];
        }
        let mut next = start.clone();
        let mut members = vec![(0usize, 0i32); roots.len()];
        for (i, &(root, off)) in roots.iter().enumerate() {
            members[next[root] as usize] = (i, off);
            next[root] += 1;
        }
        Groups { start, members }
    }

    fn of(&self, root: usize) -> &[(usize, i32)] {
        &self.members[self.start[root] as usize..self.start[root + 1] as usize]
    }
}

/// A block's new placement: per life its register, and the highest
/// register named plus one.
struct Plan {
    lives: Lives,
    to: Vec<u16>,
    named: u16,
    /// Copies whose two lives share a register (deleted).
    coalesced: usize,
}

/// Whether the instruction's results must not share a register with what it
/// reads (so a life it starts occupies the point before it too).
fn strict(e: &Emitted, target: Target) -> bool {
    result_apart_from_sources(e.inst.op, target)
}

fn place(block: &[Emitted], free: &FreeVgprs, top: u16, most_held: u16, target: Target) -> Option<Plan> {
    let n = block.len();
    let words = usize::from(top).div_ceil(64);
    // busy[p]: the registers fixed lives hold at point p.
    let mut busy = vec![0u64; (n + 1) * words];
    let set = |v: &mut Vec<u64>, p: usize, r: u16| v[p * words + usize::from(r) / 64] |= 1 << (r % 64);
    // Per register, the instructions naming it in order, with whether each
    // writes and reads it (one pass over the code; the walks below per
    // register touch only these lists).
    const WRITES: u8 = 1;
    const READS: u8 = 2;
    let mut refs: Vec<Vec<(usize, u8)>> = vec![Vec::new(); usize::from(top)];
    let mut strict_at = vec![false; n];
    for (k, e) in block.iter().enumerate() {
        strict_at[k] = strict(e, target);
        for (flag, ops) in [(WRITES, &e.inst.defs), (READS, &e.inst.uses)] {
            for (b, s) in ops.iter().filter_map(vgpr_span) {
                for r in b..b + s {
                    let list = &mut refs[usize::from(r)];
                    match list.last_mut() {
                        Some((last, flags)) if *last == k => *flags |= flag,
                        _ => list.push((k, flag)),
                    }
                }
            }
        }
    }
    // Instructions no life may contain, counted up to each index: a life
    // runs under one EXEC (a write before an EXEC change and a read after
    // it would be a lane merge, whose other lanes the register still holds).
    let mut barriers_before = Vec::with_capacity(n + 1);
    barriers_before.push(0u32);
    for (k, e) in block.iter().enumerate() {
        let barrier = ends_lives(e);
        barriers_before.push(barriers_before[k] + u32::from(barrier));
    }
    // Lives, and what is fixed: every point a register's value is needed
    // outside a life, and (for strict instructions) the point before a
    // fixed write.
    for p in 0..=n {
        for w in 0..words {
            busy[p * words + w] = !free.word(p, w);
        }
    }
    let mut lives: Vec<Life> = Vec::new();
    // The highest register a fixed reference names, plus one.
    let mut fixed_named = 0u16;
    // An instruction that reads a register and writes all of it (a load
    // through an address it replaces, `v3 = v3 + s0`) ends the life it
    // reads and starts another: the two may take different registers. (Not
    // where the result must be apart from the sources: one life keeps the
    // overlap the instruction had, `v[2:3] = v[2:3] * v[4:5]`.)
    let renews = |k: usize, flags: u8| flags == WRITES | READS && !strict_at[k] && writes_fully(&block[k].inst, target);
    for r in 0..top {
        let list = &refs[usize::from(r)];
        let first = lives.len();
        let mut i = 0;
        while i < list.len() {
            let (k, flags) = list[i];
            if !(renews(k, flags) || flags == WRITES && free.at(k, r)) {
                i += 1;
                continue;
            }
            // A life ends where the register is free, or where an
            // instruction renews it.
            let Some(j) = (i..list.len()).find(|&j| free.at(list[j].0 + 1, r) || j > i && renews(list[j].0, list[j].1)) else { break };
            let (end, end_flags) = list[j];
            // Renewed (not free after it): the next life starts there.
            let split = j > i && !free.at(end + 1, r);
            let next = if split { j } else { j + 1 };
            // A life contains no EXEC change. (One life moved changes the
            // lanes EXEC enables of its old register, between its write and
            // its last read; what a renewing write leaves in the other
            // lanes is what was there before all of them.)
            if barriers_before[end + 1] != barriers_before[k] {
                i = next;
                continue;
            }
            let from = if strict_at[k] { k } else { k + 1 };
            let to = if end_flags & WRITES != 0 && !split { end + 1 } else { end.max(k + 1) };
            lives.push(Life { reg: r, start: k, end, from, to, renewed: split });
            i = next;
        }
        // Inside its lives the register is theirs; outside, every
        // reference is fixed: the register is taken at the instruction (the
        // point before it for a read, after it for a write).
        for l in &lives[first..] {
            (l.from..=l.to).for_each(|p| busy[p * words + usize::from(r) / 64] &= !(1 << (r % 64)));
        }
        let own = &lives[first..];
        for &(k, flags) in list {
            let read_fixed = flags & READS != 0 && owner(own, k, false).is_none();
            let write_fixed = flags & WRITES != 0 && owner(own, k, true).is_none();
            if read_fixed || write_fixed {
                set(&mut busy, k, r);
                fixed_named = fixed_named.max(r + 1);
            }
            if write_fixed {
                set(&mut busy, k + 1, r);
            }
        }
    }
    if lives.is_empty() {
        return None;
    }
    // The life of register r holding instruction k (None: fixed). Lives of
    // one register are disjoint and in order.
    let lives = Lives::new(lives, top);
    let life_at = |r: u16, k: usize, def: bool| lives.at(r, k, def);
    // Groups: union-find with the offset of each life from its root; a
    // group with a fixed member or conflicting offsets is pinned.
    let mut parent: Vec<usize> = (0..lives.all.len()).collect();
    let mut offset: Vec<i32> = vec![0; lives.all.len()];
    let mut pinned = vec![false; lives.all.len()];
    // Per group root: offsets (from the root) that must be even.
    let mut even_at: Vec<usize> = Vec::new();
    fn find(parent: &mut Vec<usize>, offset: &mut Vec<i32>, x: usize) -> (usize, i32) {
        let mut root = x;
        let mut total = 0;
        while parent[root] != root {
            total += offset[root];
            root = parent[root];
        }
        // Path compression.
        let (mut y, mut acc) = (x, total);
        while parent[y] != root {
            let next = parent[y];
            let step = offset[y];
            parent[y] = root;
            offset[y] = acc;
            acc -= step;
            y = next;
        }
        (root, total)
    }
    let aligned = target.gpu.requires_even_vgpr_tuples();
    for (k, e) in block.iter().enumerate() {
        for (def, op) in e.inst.defs.iter().map(|o| (true, o)).chain(e.inst.uses.iter().map(|o| (false, o))) {
            let Some((b, s)) = vgpr_span(op) else { continue };
            if s < 2 {
                continue;
            }
            let members: Vec<Option<usize>> = (0..s).map(|i| life_at(b + i, k, def)).collect();
            if members.iter().any(Option::is_none) {
                for m in members.into_iter().flatten() {
                    let (root, _) = find(&mut parent, &mut offset, m);
                    pinned[root] = true;
                }
                continue;
            }
            let base = members[0].unwrap();
            for (i, m) in members.iter().enumerate().skip(1) {
                let (ra, oa) = find(&mut parent, &mut offset, base);
                let (rb, ob) = find(&mut parent, &mut offset, m.unwrap());
                // Want: position(m) - position(base) = i.
                if ra == rb {
                    if ob - oa != i as i32 {
                        pinned[ra] = true;
                    }
                } else {
                    // Hang rb under ra: position(rb) = position(ra) + d.
                    parent[rb] = ra;
                    offset[rb] = oa + i as i32 - ob;
                    pinned[ra] |= pinned[rb];
                }
            }
            if aligned {
                even_at.push(base);
            }
        }
    }
    // Collect the groups: members by root, in one array.
    let roots: Vec<(usize, i32)> = (0..lives.all.len()).map(|i| find(&mut parent, &mut offset, i)).collect();
    let members_of = Groups::new(&roots);
    let mut parity: Vec<Option<i32>> = vec![None; lives.all.len()];
    for &life in &even_at {
        let (root, off) = find(&mut parent, &mut offset, life);
        // position(root) + off must be even.
        let want = off.rem_euclid(2);
        match parity[root] {
            Some(p) if p != want => pinned[root] = true,
            _ => parity[root] = Some(want),
        }
    }
    // Pinned groups are fixed where they are.
    let to: Vec<u16> = lives.all.iter().map(|l| l.reg).collect();
    let mut order: Vec<usize> = Vec::new();
    for root in 0..lives.all.len() {
        if members_of.of(root).is_empty() {
            continue;
        }
        if pinned[root] {
            for &(i, _) in members_of.of(root) {
                let l = &lives.all[i];
                (l.from..=l.to).for_each(|p| set(&mut busy, p, l.reg));
            }
        } else {
            order.push(root);
        }
    }
    // Two orders, the better kept: groups by their first point, and the
    // tuples first (the constrained ones take aligned registers before
    // singles scatter over them).
    let first_point = |root: usize| members_of.of(root).iter().map(|&(i, _)| lives.all[i].from).min().unwrap_or(0);
    let mut by_start = order.clone();
    by_start.sort_by_key(|&root| first_point(root));
    let mut tuples_first = order;
    tuples_first.sort_by_key(|&root| (members_of.of(root).len() == 1, first_point(root)));
    // Copies (`v_mov_b32 d, s`) that end the life of s and start one of d:
    // the two lives may share a register, and the copy goes. Each life is
    // the source of at most one such copy (it ends there) and the
    // destination of at most one (it starts there).
    let mut copy_of: Vec<[Option<usize>; 2]> = vec![[None; 2]; lives.all.len()];
    let mut copies: Vec<(usize, usize)> = Vec::new();
    for (k, e) in block.iter().enumerate() {
        let Some((d, s)) = vgpr_copy_in(e).filter(|(d, s)| d != s) else { continue };
        if let (Some(from), Some(to)) = (lives.at(s, k, false), lives.at(d, k, true)) {
            if lives.all[from].end == k && lives.all[to].start == k {
                copy_of[from][1] = Some(to);
                copy_of[to][0] = Some(from);
                copies.push((from, to));
            }
        }
    }
    // With and without those hints, in both orders; the fewest registers
    // named, then the most copies gone.
    let mut best: Option<(u16, usize, Vec<u16>)> = None;
    let (hints, no_hints): (&[[Option<usize>; 2]], &[[Option<usize>; 2]]) = (&copy_of, &[]);
    let tries = [(&by_start, hints), (&tuples_first, hints), (&by_start, no_hints), (&tuples_first, no_hints)];
    for (order, hints) in tries.into_iter().take(if copies.is_empty() { 2 } else { 4 }) {
        // No placement names fewer registers than hold values at once.
        if best.as_ref().is_some_and(|(named, _, _)| *named <= most_held) {
            break;
        }
        let Some(placed) = assign(order, &members_of, &parity, &lives.all, hints, busy.clone(), words, top, to.clone()) else { continue };
        let named = placed.iter().map(|&r| r + 1).max().unwrap_or(0).max(fixed_named);
        let coalesced = copies.iter().filter(|&&(a, b)| placed[a] == placed[b]).count();
        if best.as_ref().is_none_or(|(most, gone, _)| (named, std::cmp::Reverse(coalesced)) < (*most, std::cmp::Reverse(*gone))) {
            best = Some((named, coalesced, placed));
        }
    }
    let (named, coalesced, to) = best?;
    Some(Plan { lives, to, named, coalesced })
}

/// A plain VGPR-to-VGPR `v_mov_b32` (forward_copies' `vgpr_copy`) without
/// frame rows: (destination, source) VGPR numbers.
fn vgpr_copy_in(e: &Emitted) -> Option<(u16, u16)> {
    vgpr_copy(&e.inst).filter(|_| e.cfi.is_empty()).map(|(d, s)| (PhysReg(d).index(), PhysReg(s).index()))
}

/// Places the groups in `order` on the lowest registers free at every point
/// of their lives; per life its register, or None if a group finds none.
#[allow(clippy::too_many_arguments)]
fn assign(order: &[usize], members_of: &Groups, parity: &[Option<i32>], lives: &[Life], hints: &[[Option<usize>; 2]], mut busy: Vec<u64>, words: usize, top: u16, mut to: Vec<u16>) -> Option<Vec<u16>> {
    let mut taken: Vec<u64> = Vec::new();
    // Lives outside `order` (pinned) keep their registers: placed already.
    let mut placed = vec![true; lives.len()];
    for &root in order {
        for &(i, _) in members_of.of(root) {
            placed[i] = false;
        }
    }
    for &root in order {
        let members = members_of.of(root);
        if members.iter().all(|&(i, _)| placed[i]) {
            // Placed with a group it copies to or from.
            continue;
        }
        let low = members.iter().map(|&(_, o)| o).min().unwrap();
        let high = members.iter().map(|&(_, o)| o).max().unwrap();
        // Per member, the registers taken at some point of its life.
        taken.clear();
        for &(i, _) in members {
            let at = taken.len();
            taken.resize(at + words, 0);
            for q in lives[i].from..=lives[i].to {
                for (w, b) in taken[at..].iter_mut().zip(&busy[q * words..(q + 1) * words]) {
                    *w |= b;
                }
            }
        }
        let clear = |m: usize, r: i32| taken[m * words + r as usize / 64] & (1 << (r % 64)) == 0;
        // Positions of the root with p + low >= 0 and p + high < top: first
        // where a member takes the register of a placed life a copy joins
        // it to, then the lowest.
        let fits = |p: i32| p + low >= 0 && p + high < i32::from(top) && parity[root].is_none_or(|want| (p + want).rem_euclid(2) == 0) && members.iter().enumerate().all(|(m, &(_, o))| clear(m, p + o));
        let (placed_now, to_now) = (&placed, &to);
        let hinted = members.iter().flat_map(|&(i, o)| hints.get(i).into_iter().flatten().flatten().filter(|&&h| placed_now[h]).map(move |&h| i32::from(to_now[h]) - o));
        // Then where the single lives copies join to members, not placed
        // yet, fit too (placed with the group: values copied into a pair
        // take its registers).
        // A partner shares its register with the group's lives at its
        // offset (several lives of a group may have one, at different
        // times) and with the partners kept before it there: only one
        // meeting none of them is kept.
        let apart = |a: usize, b: usize| lives[a].to < lives[b].from || lives[b].to < lives[a].from;
        let mut partners: Vec<(usize, i32)> = Vec::new();
        for (h, o) in members.iter().flat_map(|&(i, o)| hints.get(i).into_iter().flatten().flatten().filter(|&&h| !placed_now[h] && members_of.of(h).len() == 1).map(move |&h| (h, o))) {
            let alone = members.iter().chain(&partners).all(|&(i, at)| at != o || apart(i, h));
            if alone && !partners.iter().any(|&(k, _)| k == h) {
                partners.push((h, o));
            }
        }
        let mut partner_taken = vec![0u64; partners.len() * words];
        for (n, &(h, _)) in partners.iter().enumerate() {
            for q in lives[h].from..=lives[h].to {
                for (w, b) in partner_taken[n * words..(n + 1) * words].iter_mut().zip(&busy[q * words..(q + 1) * words]) {
                    *w |= b;
                }
            }
        }
        let partners_fit = |p: i32| partners.iter().enumerate().all(|(n, &(_, o))| partner_taken[n * words + (p + o) as usize / 64] & (1 << ((p + o) % 64)) == 0);
        let with_partners = (!partners.is_empty()).then(|| (-low..i32::from(top) - high).find(|&p| fits(p) && partners_fit(p))).flatten();
        let p = hinted.chain(with_partners).chain(-low..i32::from(top) - high).find(|&p| fits(p))?;
        if with_partners == Some(p) {
            for &(h, o) in &partners {
                let r = (p + o) as u16;
                to[h] = r;
                placed[h] = true;
                for q in lives[h].from..=lives[h].to {
                    busy[q * words + usize::from(r) / 64] |= 1 << (r % 64);
                }
            }
        }
        for &(i, o) in members {
            let r = (p + o) as u16;
            to[i] = r;
            placed[i] = true;
            for q in lives[i].from..=lives[i].to {
                busy[q * words + usize::from(r) / 64] |= 1 << (r % 64);
            }
        }
    }
    Some(to)
}

fn apply(block: &mut [Emitted], plan: &Plan) {
    for (k, e) in block.iter_mut().enumerate() {
        for (def, list) in [(true, &mut e.inst.defs), (false, &mut e.inst.uses)] {
            for o in list.iter_mut() {
                if let Operand::Reg(reg) = o {
                    // A tuple's lives move together: its first register's
                    // says where.
                    if let Some(i) = reg.base.is_vgpr().then(|| plan.lives.at(reg.base.index(), k, def)).flatten() {
                        reg.base = PhysReg::vgpr(plan.to[i]);
                    }
                }
            }
        }
    }
}

/// The validator (debug builds): every VGPR an instruction of `after`
/// reads holds the value the same instruction of `before` read, and every
/// VGPR live after the block (not `free_at_end`) holds what it held; a
/// value is named by the instruction that wrote it, or by its register on
/// entry.
fn same_values(before: &[Emitted], after: &[Emitted], free_at_end: impl Fn(u16) -> bool) -> Result<(), String> {
    #[derive(Clone, Copy, PartialEq, Debug)]
    enum Value {
        Entry(u16),
        Written(usize),
    }
    let top = [before, after].iter().flat_map(|b| b.iter()).flat_map(|e| e.inst.defs.iter().chain(&e.inst.uses)).filter_map(vgpr_span).map(|(b, s)| b + s).max().unwrap_or(0);
    let entry: Vec<Value> = (0..top).map(Value::Entry).collect();
    let (mut old, mut new) = (entry.clone(), entry);
    for (k, (b, a)) in before.iter().zip(after).enumerate() {
        let spans = |ops: &[Operand]| ops.iter().filter_map(vgpr_span).flat_map(|(b, s)| b..b + s).collect::<Vec<u16>>();
        for (was, is) in spans(&b.inst.uses).into_iter().zip(spans(&a.inst.uses)) {
            if old[usize::from(was)] != new[usize::from(is)] {
                return Err(format!("instruction {k} reads v{is} holding {:?} instead of v{was}'s {:?}", new[usize::from(is)], old[usize::from(was)]));
            }
        }
        for r in spans(&b.inst.defs) {
            old[usize::from(r)] = Value::Written(k);
        }
        for r in spans(&a.inst.defs) {
            new[usize::from(r)] = Value::Written(k);
        }
    }
    match (0..top).find(|&r| !free_at_end(r) && old[usize::from(r)] != new[usize::from(r)]) {
        Some(r) => Err(format!("v{r} leaves the block holding {:?} instead of {:?}", new[usize::from(r)], old[usize::from(r)])),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::expand::test_code::{function, inst, v};
    use crate::isa::{Gpu, Reg};

    fn pair(n: u16) -> Operand {
        Operand::Reg(Reg::v(n, 2))
    }

    fn sgprs(n: u16) -> Operand {
        Operand::Reg(Reg::s(n, 2))
    }

    /// A load through an address computed into v[6:7] from v1, its result
    /// added to v3 and stored: 10 VGPRs named for at most three values
    /// live. Placed again tuples first: the address to v[0:1] (it may
    /// overlap v1, which the multiply-add reads before it writes), then in
    /// order of their writes v1 to v0, v3 to v2 (v1 is the address's), the
    /// loaded value and the sum to v0.
    fn kernel(exec_write: bool) -> (Vec<crate::isa::Inst>, u32, u32) {
        let mut block = vec![
            inst(Opcode::v_mov_b32, vec![v(1)], vec![Operand::imm32(5)]),
            inst(Opcode::v_mov_b32, vec![v(3)], vec![Operand::imm32(7)]),
            inst(Opcode::v_mad_u64_u32, vec![pair(6), sgprs(2)], vec![v(1), Operand::imm32(4), sgprs(4)]),
            inst(Opcode::global_load_dword, vec![v(8)], vec![pair(6)]),
            inst(Opcode::v_add_u32, vec![v(9)], vec![v(8), v(3)]),
            inst(Opcode::global_store_dword, vec![], vec![v(3), v(9), sgprs(4)]),
            inst(Opcode::s_endpgm, vec![], vec![]),
        ];
        if exec_write {
            // EXEC changes between v3's write and its reads.
            block.insert(2, inst(Opcode::s_mov_b64, vec![Operand::Reg(Reg::exec(2))], vec![sgprs(8)]));
        }
        placed(block)
    }

    /// One block placed again on gfx90a, its count 10 before: the code,
    /// the VGPRs saved and the count after.
    fn placed(block: Vec<Emitted>) -> (Vec<crate::isa::Inst>, u32, u32) {
        let mut code = function(vec![(0, "b".into(), block)], 0);
        code.vgprs = 10;
        let saved = run(&mut code, Target::new(Gpu::Gfx90a), true).unwrap();
        (code.blocks.remove(0).2.into_iter().map(|e| e.inst).collect(), saved, code.vgprs)
    }

    #[test]
    fn block_local_values_are_placed_again_with_their_tuples() {
        let (code, saved, vgprs) = kernel(false);
        assert_eq!((saved, vgprs), (7, 3));
        assert_eq!(code[0].defs[0], v(0));
        assert_eq!(code[1].defs[0], v(2));
        assert_eq!((code[2].defs[0].clone(), code[2].uses[0].clone()), (pair(0), v(0)));
        assert_eq!((code[3].defs[0].clone(), code[3].uses[0].clone()), (v(0), pair(0)));
        assert_eq!(code[4].defs[0], v(0));
        assert_eq!(code[4].uses, vec![v(0), v(2)]);
        assert_eq!(code[5].uses[..2], [v(2), v(0)]);
    }

    /// v1 and v3 are written before an EXEC change and read after it: they
    /// stay, so the address goes to v[0:1] (v1 read by the multiply-add
    /// only), and the loaded value and the sum to v0.
    #[test]
    fn a_value_living_across_an_exec_change_keeps_its_register() {
        let (code, saved, vgprs) = kernel(true);
        assert_eq!((saved, vgprs), (6, 4));
        assert_eq!((code[0].defs[0].clone(), code[1].defs[0].clone()), (v(1), v(3)));
        assert_eq!((code[3].defs[0].clone(), code[3].uses[0].clone()), (pair(0), v(1)));
        assert_eq!(code[4].defs[0], v(0));
        assert_eq!(code[5].uses, vec![v(0), v(3)]);
        assert_eq!(code[6].uses[..2], [v(3), v(0)]);
    }

    /// A load replaces the high half of its own address with the value it
    /// loads, which lives on while a second address is computed: the
    /// address pair's life ends at the load and the loaded value's starts
    /// there, so the value takes v1 (free once the load has read the
    /// address) and the second address v[2:3]: 4 VGPRs. As one life, the
    /// loaded value would keep the pair's high register while the second
    /// address needed an aligned pair apart from both: 6.
    #[test]
    fn an_instruction_reading_and_replacing_a_register_ends_one_life_and_starts_another() {
        let block = vec![
            inst(Opcode::v_mov_b32, vec![v(1)], vec![Operand::imm32(5)]),
            inst(Opcode::v_mad_u64_u32, vec![pair(6), sgprs(2)], vec![v(1), Operand::imm32(4), sgprs(4)]),
            inst(Opcode::global_load_dword, vec![v(7)], vec![pair(6)]),
            inst(Opcode::v_mad_u64_u32, vec![pair(8), sgprs(2)], vec![v(1), Operand::imm32(8), sgprs(4)]),
            inst(Opcode::global_store_dword, vec![], vec![pair(8), v(7)]),
            inst(Opcode::s_endpgm, vec![], vec![]),
        ];
        let (code, saved, _) = placed(block);
        assert_eq!(saved, 6);
        assert_eq!(code[0].defs[0], v(0));
        assert_eq!((code[1].defs[0].clone(), code[1].uses[0].clone()), (pair(2), v(0)));
        assert_eq!((code[2].defs[0].clone(), code[2].uses[0].clone()), (v(1), pair(2)));
        assert_eq!((code[3].defs[0].clone(), code[3].uses[0].clone()), (pair(2), v(0)));
        assert_eq!(code[4].uses[..2], [pair(2), v(1)]);
    }

    /// `v3 = v3 + 1` under an EXEC that changes before v3 is read again:
    /// the value after the add lives across the change (a lane merge), so
    /// it stays in v3; the one before it, which the add reads and whose
    /// other lanes the add leaves as they were before both, moves to v0
    /// after v9's value, which moves there too: 4 VGPRs.
    #[test]
    fn a_renewed_value_living_across_an_exec_change_stays() {
        let block = vec![
            inst(Opcode::v_mov_b32, vec![v(9)], vec![Operand::imm32(7)]),
            inst(Opcode::global_store_dword, vec![], vec![v(9), v(9), sgprs(4)]),
            inst(Opcode::v_mov_b32, vec![v(3)], vec![Operand::imm32(5)]),
            inst(Opcode::v_add_u32, vec![v(3)], vec![v(3), Operand::imm32(1)]),
            inst(Opcode::s_mov_b64, vec![Operand::Reg(Reg::exec(2))], vec![sgprs(8)]),
            inst(Opcode::global_store_dword, vec![], vec![v(3), v(3), sgprs(4)]),
            inst(Opcode::s_endpgm, vec![], vec![]),
        ];
        let (code, saved, _) = placed(block);
        assert_eq!(saved, 6);
        assert_eq!((code[0].defs[0].clone(), code[1].uses[..2].to_vec()), (v(0), vec![v(0), v(0)]));
        assert_eq!(code[2].defs[0], v(0));
        assert_eq!((code[3].defs[0].clone(), code[3].uses[0].clone()), (v(3), v(0)));
        assert_eq!(code[5].uses[..2], [v(3), v(3)]);
    }

    /// The validator finds the mistake a life owning the write that renews
    /// it would make: the add's result renamed, its reader not.
    #[test]
    fn the_validator_finds_a_read_of_another_value() {
        let before = vec![
            inst(Opcode::v_and_b32, vec![v(12)], vec![Operand::imm32(0x3ff), v(0)]),
            inst(Opcode::v_add_u32, vec![v(12)], vec![sgprs(1), v(12)]),
            inst(Opcode::global_store_dword, vec![], vec![v(12), v(12), sgprs(4)]),
        ];
        let mut after = before.clone();
        after[0].inst.defs[0] = v(0);
        after[1].inst.uses[1] = v(0);
        assert_eq!(same_values(&before, &after, |_| true), Ok(()));
        after[1].inst.defs[0] = v(0);
        assert!(same_values(&before, &after, |_| true).is_err());
        after[2].inst.uses = vec![v(0), v(0), sgprs(4)];
        assert_eq!(same_values(&before, &after, |_| true), Ok(()));
        assert!(same_values(&before, &after, |r| r != 12).is_err());
    }

    /// Two values copied into a pair for a store whose address v0 is fixed
    /// (it comes from before the block): the pair is placed first, on
    /// v[2:3], then each value where its copy puts it, so the copies copy
    /// registers onto themselves and go: 4 VGPRs, no copy. The lowest free
    /// registers would give the values v1 and v4 (v2 is the pair's once
    /// the first copy has written it): 5 VGPRs and both copies.
    #[test]
    fn values_copied_into_a_tuple_are_placed_where_the_copies_put_them() {
        let block = vec![
            inst(Opcode::v_mov_b32, vec![v(5)], vec![Operand::imm32(1)]),
            inst(Opcode::v_mov_b32, vec![v(9)], vec![Operand::imm32(2)]),
            inst(Opcode::v_mov_b32, vec![v(2)], vec![v(5)]),
            inst(Opcode::v_mov_b32, vec![v(3)], vec![v(9)]),
            inst(Opcode::global_store_dwordx2, vec![], vec![v(0), pair(2), sgprs(4)]),
            inst(Opcode::s_endpgm, vec![], vec![]),
        ];
        let (code, saved, _) = placed(block);
        assert_eq!(saved, 6);
        assert_eq!(code.len(), 4);
        assert_eq!((code[0].defs[0].clone(), code[1].defs[0].clone()), (v(2), v(3)));
        assert_eq!(code[2].uses, vec![v(0), pair(2), sgprs(4)]);
    }

    /// The address of a data object (`s_getpc_b64` with its symbol) between
    /// a value's write and its read writes SGPRs only: the value still
    /// moves, v9 to v0 (program_globals, 14 to 11 VGPRs on gfx90a).
    #[test]
    fn a_relocated_address_does_not_end_lives() {
        let mut getpc = inst(Opcode::s_getpc_b64, vec![sgprs(16)], vec![]);
        getpc.symbol = Some("table".into());
        let block = vec![
            inst(Opcode::v_mov_b32, vec![v(9)], vec![Operand::imm32(5)]),
            getpc,
            inst(Opcode::global_store_dword, vec![], vec![v(9), v(9), sgprs(16)]),
            inst(Opcode::s_endpgm, vec![], vec![]),
        ];
        let (code, saved, vgprs) = placed(block);
        assert_eq!((saved, vgprs), (9, 1));
        assert_eq!((code[0].defs[0].clone(), code[2].uses[..2].to_vec()), (v(0), vec![v(0), v(0)]));
    }
}
