//! window_rename: moves the short lives of pair windows down onto free low
//! VGPRs, so a kernel's VGPR count is what its values need rather than the
//! allocated registers plus a block of windows above them.
//!
//! Expansion (docs/regalloc.md) gives every 64-bit operand of a divergent
//! value a pair "window" above the allocated VGPRs. Most windows live for an
//! instruction or two (an address built and consumed by one load), while
//! the registers below them are free for long stretches. Per block, each
//! life of a window pair (an interval from a write with both halves free
//! before it to the last reference before both are free again) is an
//! independent candidate: in order of their starts, each takes the lowest
//! pair below its own (even on gfx90a and gfx942, any on gfx11) whose
//! registers are free at its start, are referenced nowhere inside it (but
//! as a result of its last instruction, which reads the pair before it
//! writes: `global_load v3, v[2:3]`; not the 64-bit multiply-adds, whose
//! result may not overlap a source), and are not taken by an earlier
//! candidate still alive there. A half whose life fills it by copying a
//! register that nothing reads after the copy (`v_mov v7, v1`, v1 dead
//! there) may take that register instead, if the life references it
//! nowhere else: the copy becomes a move onto itself and goes (a
//! compare-and-swap's data pair built around the value it replaces).
//! Unmoved candidates keep their window; later ones
//! never take a register that an unprocessed candidate's references need,
//! so keeping is always possible.
//!
//! "Free" is the dead_moves scan's: overwritten before any read under the
//! EXEC there, or read by nothing reachable. A candidate runs under one
//! EXEC (no EXEC write, branch or call inside), so the lanes it writes in
//! the new register are exactly those that register's old value no longer
//! needs, and the lanes outside EXEC keep their values. Only kernels whose
//! every exit is `s_endpgm` (the scan knows the other blocks) and that
//! neither spill nor use AGPRs are renamed, with or without calls (a call
//! reads what the scan says a callee may read, and no life contains one);
//! the VGPR count is then the highest register referenced (a kernel that
//! calls also counts its callees', as before).

use super::dead_moves::{ends_lives, FreeVgprs, Scan};
use super::expand::{vgpr_span, vgprs_named, Expanded};
use crate::isa::{Operand, PhysReg, Target};

/// One life of a window pair within a block.
struct Candidate {
    /// The pair's first VGPR (hardware number).
    pair: u16,
    /// First and last instruction referencing it.
    start: usize,
    end: usize,
}

/// Renames the windows of every block; returns how many lives moved, or
/// None where the pass does not apply: it works on a function with pair
/// windows and neither spills nor AGPRs, whose every exit ends the program
/// (a kernel).
pub fn run(code: &mut Expanded, target: Target) -> Option<usize> {
    let windows = code.windows?;
    if code.agprs > 0 || code.spills.vgprs > 0 || code.spills.slot_vgprs > 0 {
        return None;
    }
    let scan = Scan::new(code, target);
    if !scan.knows_other_blocks() {
        return None;
    }
    let top = vgprs_named(&code.blocks);
    let mut moved = 0;
    for index in 0..code.blocks.len() {
        let block = &code.blocks[index].2;
        let touches_windows = block.iter().flat_map(|e| e.inst.defs.iter().chain(&e.inst.uses)).any(|o| vgpr_span(o).is_some_and(|(b, s)| b + s > windows.base));
        if touches_windows {
            moved += rename_block(code, index, &scan, windows.base, top, target);
        }
    }
    if moved > 0 {
        // The count is what the code names (v0, where the work-item IDs
        // arrive, at least), as the simulator and hardware fault beyond it.
        code.vgprs = u32::from(vgprs_named(&code.blocks).max(1));
    }
    Some(moved)
}

fn rename_block(code: &mut Expanded, index: usize, scan: &Scan, base: u16, top: u16, target: Target) -> usize {
    // gfx90a and gfx942 want VGPR tuples on even registers; gfx11 on any.
    let step = if target.gpu.requires_even_vgpr_tuples() { 2 } else { 1 };
    let block = &code.blocks[index].2;
    let n = block.len();
    let free = FreeVgprs::new(scan, index, block, top);
    let is_free = |p: usize, r: u16| free.at(p, r);

    // Instructions no candidate may contain, counted up to each index.
    let mut barriers_before = Vec::with_capacity(n + 1);
    barriers_before.push(0u32);
    // Instructions referencing each VGPR, in order.
    let mut refs: Vec<Vec<usize>> = vec![Vec::new(); usize::from(top)];
    let pairs = usize::from(top.saturating_sub(base)).div_ceil(2);
    let mut movable = vec![true; pairs];
    for (k, e) in block.iter().enumerate() {
        let barrier = ends_lives(e);
        barriers_before.push(barriers_before[k] + u32::from(barrier));
        for (b, s) in e.inst.defs.iter().chain(&e.inst.uses).filter_map(vgpr_span) {
            for r in b..(b + s).min(top) {
                if refs[usize::from(r)].last() != Some(&k) {
                    refs[usize::from(r)].push(k);
                }
            }
            // An operand that covers more than one pair, or part of a pair
            // and a register outside it, pins the pairs it touches.
            if b + s > base {
                let first = b.max(base);
                let (lo, hi) = ((first - base) / 2, (b + s - 1 - base) / 2);
                let inside_one_pair = b >= base && lo == hi;
                if !inside_one_pair {
                    (lo..=hi).for_each(|p| movable[usize::from(p)] = false);
                }
            }
        }
    }

    let mut candidates = Vec::new();
    for p in 0..pairs as u16 {
        let w = base + 2 * p;
        if !movable[usize::from(p)] || w + 1 >= top {
            continue;
        }
        let mut pair_refs: Vec<usize> = refs[usize::from(w)].iter().chain(&refs[usize::from(w + 1)]).copied().collect();
        pair_refs.sort_unstable();
        pair_refs.dedup();
        let mut m = 0;
        while m < pair_refs.len() {
            let start = pair_refs[m];
            if !(is_free(start, w) && is_free(start, w + 1)) {
                m += 1;
                continue;
            }
            let Some(last) = (m..pair_refs.len()).find(|&q| is_free(pair_refs[q] + 1, w) && is_free(pair_refs[q] + 1, w + 1)) else { break };
            let end = pair_refs[last];
            if barriers_before[end + 1] == barriers_before[start] {
                candidates.push(Candidate { pair: w, start, end });
            }
            m = last + 1;
        }
    }
    candidates.sort_by_key(|c| (c.start, c.pair));

    // Per VGPR: the last instruction of a candidate placed on it.
    let mut busy_until: Vec<Option<usize>> = vec![None; usize::from(top)];
    // Per window pair: its latest processed candidate, and whether it moved.
    let mut latest: Vec<Option<(usize, usize, bool)>> = vec![None; pairs];
    let mut moved = 0;
    // Copies the renaming made moves onto themselves.
    let mut onto_itself: Vec<usize> = Vec::new();
    for c in &candidates {
        let (start, end) = (c.start, c.end);
        let moved_away = |r: u16, k: usize, inclusive_start: bool| {
            r >= base
                && latest[usize::from((r - base) / 2)].is_some_and(|(s, e, moved)| moved && (s < k || (inclusive_start && s == k)) && k <= e)
        };
        // The last instruction may write the register it reads the pair
        // from (`global_load v3, v[2:3]`): an instruction reads its sources
        // before it writes, except gfx11's 64-bit multiply-adds
        // (`expand::result_apart_from_sources`).
        let last = &code.blocks[index].2[end].inst;
        let reads_pair = last.uses.iter().filter_map(vgpr_span).any(|(b, n)| b < c.pair + 2 && c.pair < b + n);
        let may_overlap = reads_pair && !super::expand::result_apart_from_sources(last.op, target);
        let written_last = |r: u16| {
            may_overlap
                && last.defs.iter().filter_map(vgpr_span).any(|(b, n)| (b..b + n).contains(&r))
                && !last.uses.iter().filter_map(vgpr_span).any(|(b, n)| (b..b + n).contains(&r))
        };
        let available = |r: u16| {
            busy_until[usize::from(r)].is_none_or(|until| until < start)
                && (is_free(start, r) || moved_away(r, start, false))
                && {
                    let list = &refs[usize::from(r)];
                    let from = list.partition_point(|&k| k < start);
                    list[from..].iter().take_while(|&&k| k <= end).all(|&k| moved_away(r, k, true) || (k == end && k > start && written_last(r)))
                }
        };
        // A window half that the life fills with a copy of a register whose
        // value nothing else reads after it (`v_mov v7, v1` with v1 dead
        // there) may take that register: the copy becomes a move onto
        // itself, deleted below. The register may be referenced nowhere
        // else in the life (but as a result of its last instruction, as
        // above), so it holds the copied value from the copy on.
        let coalesced = |r: u16, w: u16| {
            let block = &code.blocks[index].2;
            let list = &refs[usize::from(w)];
            let Some(&k) = list.get(list.partition_point(|&k| k < start)).filter(|&&k| k <= end) else { return false };
            let copies_r = vgpr_copy(&block[k].inst) == Some((w, r));
            let elsewhere = {
                let list = &refs[usize::from(r)];
                let from = list.partition_point(|&q| q < start);
                list[from..].iter().take_while(|&&q| q <= end).any(|&q| q != k && !(q == end && q > k && written_last(r)))
            };
            r < base && copies_r && !elsewhere && is_free(k + 1, r) && busy_until[usize::from(r)].is_none_or(|until| until < start)
        };
        let fits = |r: u16, w: u16| available(r) || coalesced(r, w);
        let to = (0..c.pair).step_by(step).find(|&r| fits(r, c.pair) && fits(r + 1, c.pair + 1)).unwrap_or(c.pair);
        busy_until[usize::from(to)] = Some(end);
        busy_until[usize::from(to + 1)] = Some(end);
        latest[usize::from((c.pair - base) / 2)] = Some((start, end, to != c.pair));
        if to != c.pair {
            moved += 1;
            let block = &mut code.blocks[index].2;
            for (k, e) in block[start..=end].iter_mut().enumerate() {
                // The life begins with a write (the pair was free before
                // it), so its first instruction reads nothing of it: a
                // source there in the old pair's registers is an earlier
                // life's, moved here (it ends where this one begins:
                // `v_ldexp_f64 v[26:27], v[30:31], v2` with v[30:31] moved
                // to v[26:27] first).
                let uses = if k == 0 { &mut e.inst.uses[..0] } else { &mut e.inst.uses[..] };
                for o in e.inst.defs.iter_mut().chain(uses.iter_mut()) {
                    if let Operand::Reg(reg) = o {
                        if reg.base.is_vgpr() && (c.pair..c.pair + 2).contains(&reg.base.index()) {
                            reg.base = PhysReg::vgpr(reg.base.index() - c.pair + to);
                        }
                    }
                }
                if let Some((d, s)) = vgpr_copy(&e.inst) {
                    if d == s {
                        onto_itself.push(start + k);
                    }
                }
            }
        }
    }
    if !onto_itself.is_empty() {
        let block = &mut code.blocks[index].2;
        let mut k = 0;
        block.retain(|_| {
            k += 1;
            !onto_itself.contains(&(k - 1))
        });
    }
    moved
}

/// A plain `v_mov_b32` between single VGPRs (forward_copies'): (destination,
/// source) by VGPR number.
fn vgpr_copy(inst: &crate::isa::Inst) -> Option<(u16, u16)> {
    super::forward_copies::vgpr_copy(inst).map(|(d, s)| (PhysReg(d).index(), PhysReg(s).index()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::expand::test_code::inst;
    use crate::codegen::expand::{Emitted, SpillCounts, Windows};
    use crate::isa::{self, Gpu, Opcode, Reg};


    fn v(n: u16, size: u8) -> Operand {
        Operand::Reg(Reg::v(n, size))
    }

    fn s(n: u16) -> Operand {
        Operand::Reg(Reg::s(n, 2))
    }

    /// Allocated v0-v3, windows from v4: two addresses built in windows
    /// v[4:5] and v[6:7], the second after the first is dead; with
    /// `exec_write` EXEC changes inside the second's life.
    fn two_addresses(exec_write: bool) -> Expanded {
        let mut block = vec![
            inst(Opcode::v_mad_u64_u32, vec![v(4, 2), s(0)], vec![v(0, 1), Operand::imm32(4), s(2)]),
            inst(Opcode::global_load_dword, vec![v(2, 1)], vec![v(4, 2)]),
            inst(Opcode::v_mad_u64_u32, vec![v(6, 2), s(0)], vec![v(0, 1), Operand::imm32(4), s(4)]),
            inst(Opcode::global_store_dword, vec![], vec![v(6, 2), v(2, 1)]),
            inst(Opcode::s_endpgm, vec![], vec![]),
        ];
        if exec_write {
            block.insert(3, inst(Opcode::s_mov_b64, vec![Operand::Reg(Reg::exec(2))], vec![s(8)]));
        }
        one_block(block)
    }

    /// A kernel of one block: v0-v3 allocated, windows from v4.
    fn one_block(block: Vec<Emitted>) -> Expanded {
        Expanded {
            blocks: vec![(0, "b".into(), block)],
            windows: Some(Windows { base: 4 }),
            call_vgpr_reads: 0,
            vgprs: 8,
            agprs: 0,
            spills: SpillCounts::default(),
            sgprs: 10,
            uses_vcc: false,
            scratch_bytes: 0,
            frame_bytes: 0,
        }
    }

    #[test]
    fn a_window_life_moves_onto_a_pair_free_throughout_it() {
        let mut code = two_addresses(false);
        // The first life takes v[2:3]: v2 is written only by its last
        // instruction, the load that reads the address from it (v0 is read
        // at its start); the second takes v[4:5], dead by then (v0 read,
        // v2 live).
        assert_eq!(run(&mut code, isa::Target::new(Gpu::Gfx90a)), Some(2));
        let block = &code.blocks[0].2;
        assert_eq!(block[0].inst.defs[0], v(2, 2));
        assert_eq!(block[1].inst.uses[0], v(2, 2));
        assert_eq!(block[1].inst.defs[0], v(2, 1));
        assert_eq!(block[2].inst.defs[0], v(4, 2));
        assert_eq!(block[3].inst.uses[0], v(4, 2));
        assert_eq!(code.vgprs, 6);
    }

    #[test]
    fn gfx11_windows_move_onto_odd_pairs() {
        // gfx1100 has no alignment rule for VGPR tuples: the first life
        // takes v[1:2], the second v[3:4] (v4 free once the first left it).
        let mut code = two_addresses(false);
        assert_eq!(run(&mut code, isa::Target::new(Gpu::Gfx1100)), Some(2));
        let block = &code.blocks[0].2;
        assert_eq!(block[0].inst.defs[0], v(1, 2));
        assert_eq!(block[1].inst.uses[0], v(1, 2));
        assert_eq!(block[2].inst.defs[0], v(3, 2));
        assert_eq!(block[3].inst.uses[0], v(3, 2));
        assert_eq!(code.vgprs, 5);
    }

    #[test]
    fn a_multiply_add_writes_the_pair_it_reads_only_where_the_target_allows() {
        // The life of v[4:5] ends at a v_mad_u64_u32 whose result is v2.
        // On gfx11 its result may not overlap a source, so v[2:3] is not
        // taken (v[0:1] holds v0, read later). On gfx90a the multiply-adds
        // read their sources before they write like every other
        // instruction (llc-22 writes `v_mad_u64_u32 v[2:3], s[4:5], v2,
        // ...` there): the life moves onto v[2:3].
        for (gpu, moved, pair) in [(Gpu::Gfx1100, 0, 4), (Gpu::Gfx90a, 1, 2)] {
            let block = vec![
                inst(Opcode::v_mad_u64_u32, vec![v(4, 2), s(0)], vec![v(0, 1), Operand::imm32(4), s(2)]),
                inst(Opcode::v_mad_u64_u32, vec![v(2, 2), s(0)], vec![v(4, 1), Operand::imm32(4), s(4)]),
                inst(Opcode::global_store_dword, vec![], vec![v(2, 2), v(0, 1)]),
                inst(Opcode::s_endpgm, vec![], vec![]),
            ];
            let mut code = one_block(block);
            assert_eq!(run(&mut code, isa::Target::new(gpu)), Some(moved), "{gpu:?}");
            assert_eq!(code.blocks[0].2[0].inst.defs[0], v(pair, 2), "{gpu:?}");
            assert_eq!(code.blocks[0].2[1].inst.uses[0], v(pair, 1), "{gpu:?}");
        }
    }

    #[test]
    fn a_life_moved_onto_the_pair_the_next_life_writes_keeps_its_read() {
        // v[6:7]'s life ends where v[4:5]'s begins (read, then written by
        // one instruction). The first moves down onto v[4:5] (v[0:1] and
        // v[2:3] are busy), the second onto v[0:1]; renaming the second
        // must leave the first's read at the shared instruction alone.
        let block = vec![
            inst(Opcode::v_mad_u64_u32, vec![v(6, 2), s(0)], vec![v(0, 1), Operand::imm32(4), s(2)]),
            inst(Opcode::v_ldexp_f64, vec![v(4, 2)], vec![v(6, 2), Operand::Reg(Reg::s(6, 1))]),
            inst(Opcode::v_cvt_f32_f64, vec![v(3, 1)], vec![v(4, 2)]),
            inst(Opcode::global_store_dword, vec![], vec![v(2, 1), v(3, 1), s(4)]),
            inst(Opcode::s_endpgm, vec![], vec![]),
        ];
        let mut code = one_block(block);
        assert_eq!(run(&mut code, isa::Target::new(Gpu::Gfx90a)), Some(2));
        let block = &code.blocks[0].2;
        assert_eq!(block[0].inst.defs[0], v(4, 2));
        assert_eq!(block[1].inst.uses[0], v(4, 2));
        assert_eq!(block[1].inst.defs[0], v(0, 2));
        assert_eq!(block[2].inst.uses[0], v(0, 2));
    }

    /// A compare-and-swap's data pair filled by copies: v2 (new value) dies
    /// at its copy (the atomic's result replaces it), v1 (compared value)
    /// is read again later.
    fn cmpswap_from_copies() -> Vec<Emitted> {
        vec![
            inst(Opcode::v_mov_b32, vec![v(4, 1)], vec![v(2, 1)]),
            inst(Opcode::v_mov_b32, vec![v(5, 1)], vec![v(1, 1)]),
            inst(Opcode::global_atomic_cmpswap, vec![v(2, 1)], vec![v(0, 1), v(4, 2), s(0)]),
            inst(Opcode::global_store_dword, vec![], vec![v(0, 1), v(1, 1), s(0)]),
            inst(Opcode::global_store_dword, vec![], vec![v(0, 1), v(2, 1), s(2)]),
            inst(Opcode::s_endpgm, vec![], vec![]),
        ]
    }

    #[test]
    fn a_window_half_takes_the_register_its_copy_reads_where_that_dies() {
        // v[2:3]: v2 is the source of the low half's copy and dead after it
        // (the atomic writes it), v3 is free; the copy goes. v[0:1] is not
        // taken: v1's value is read after the life.
        let mut code = one_block(cmpswap_from_copies());
        assert_eq!(run(&mut code, isa::Target::new(Gpu::Gfx90a)), Some(1));
        let block: Vec<_> = code.blocks[0].2.iter().map(|e| (e.inst.op, e.inst.defs.clone(), e.inst.uses.clone())).collect();
        assert_eq!(block.len(), 5, "{block:?}");
        assert_eq!(block[0], (Opcode::v_mov_b32, vec![v(3, 1)], vec![v(1, 1)]));
        assert_eq!(block[1], (Opcode::global_atomic_cmpswap, vec![v(2, 1)], vec![v(0, 1), v(2, 2), s(0)]));
        assert_eq!(code.vgprs, 4);
        // Read again after the copy, v2 keeps its value and the window stays.
        let mut block = cmpswap_from_copies();
        block[2].inst.defs[0] = v(3, 1);
        block[4].inst.uses[1] = v(3, 1);
        block.insert(3, inst(Opcode::global_store_dword, vec![], vec![v(0, 1), v(2, 1), s(2)]));
        let mut code = one_block(block);
        assert_eq!(run(&mut code, isa::Target::new(Gpu::Gfx90a)), Some(0));
        assert_eq!(code.blocks[0].2.len(), 7);
    }

    #[test]
    fn a_life_under_an_exec_write_stays() {
        let mut code = two_addresses(true);
        // The first life moves (as above); the second has EXEC written
        // inside it and keeps v[6:7].
        assert_eq!(run(&mut code, isa::Target::new(Gpu::Gfx90a)), Some(1));
        assert_eq!(code.blocks[0].2[4].inst.uses[0], v(6, 2));
        assert_eq!(code.vgprs, 8);
    }
}
