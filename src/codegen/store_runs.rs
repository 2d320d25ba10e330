//! store_runs: within one block, after allocation, renames the data of
//! neighbouring single-dword global stores into consecutive VGPRs, so that
//! merge_accesses (the next pass) makes them one `global_store_dwordx2`-`x4`.
//!
//! Selection stores a vector or a 64-bit value a dword at a time, each dword
//! a value of its own; regalloc2 knows no tuples, and placement
//! (docs/regalloc.md) renumbers registers for the whole function, so where
//! one register serves several values the elements of a store land apart
//! (vectors_8_16 on gfx90a: 30 dword stores, llc-22 ten `dwordx4`). Each
//! stored dword is usually computed shortly before its store and dead
//! after it: its life, from the last write of its register to the store,
//! can move to another register free throughout it.
//!
//! For a run of two to four stores in a row (nothing between them) to
//! consecutive dword offsets from the same address, with different data
//! registers, the pass picks the lowest aligned run of registers below the
//! function's VGPR count (even on gfx90a and gfx942) that keeps the most
//! data registers in place and where every other data register `d` can
//! move to its register `t`:
//! - `d`'s last write before the store lies in the block with no EXEC
//!   write, branch, call or CFI row from it to the run, is a VALU or memory
//!   instruction that writes `d` fully and nothing else among the VGPRs,
//!   without a tied or partial form (forward_copies' `rewritable`);
//! - every read of `d` between them names `d` alone (no tuple) in an
//!   instruction that reads no other lanes (no readlane, DPP, ...), and `d`
//!   is free after its store (the dead_moves scan: overwritten before any
//!   read under that EXEC, or read by nothing reachable);
//! - `t` is free before the write and no instruction from the write to the
//!   run names it.
//!
//! The write then writes `t`, the reads read `t`. Sound because the life
//! runs under one EXEC: `t` gets the lanes `d` got, `t`'s old value was not
//! needed in any lane, and after the store neither `d`'s value nor `t`'s
//! is read. The function's VGPR count does not change. Only in kernels
//! whose every exit is `s_endpgm` (the scan knows what other blocks read)
//! that neither spill nor use AGPRs.
//!
//! Cost: one backward scan per block that has such a run (again after a
//! rename in it), and a walk back from each run to its data's writes.

use super::dead_moves::{ends_lives, writes_fully, FreeVgprs, Scan};
use super::expand::{vgpr_span, Emitted, Expanded};
use super::merge_accesses::{access, next_place, run_from};
use crate::isa::{Operand, PhysReg, Target};

/// Renames the data of dword store runs; returns how many lives moved.
pub fn run(code: &mut Expanded, target: Target) -> usize {
    if code.agprs > 0 || code.spills.vgprs > 0 || code.spills.slot_vgprs > 0 {
        return 0;
    }
    let even = target.gpu.requires_even_vgpr_tuples();
    let runs: Vec<Vec<(usize, usize)>> = code.blocks.iter().map(|(_, _, block)| store_runs(block, even)).collect();
    if runs.iter().all(Vec::is_empty) {
        return 0;
    }
    let scan = Scan::new(code, target);
    if !scan.knows_other_blocks() {
        return 0;
    }
    let top = code.vgprs.min(256) as u16;
    let mut moved = 0;
    for (index, runs) in runs.into_iter().enumerate() {
        let mut free: Option<FreeVgprs> = None;
        for (first, end) in runs {
            let block = &code.blocks[index].2;
            let free_now = free.get_or_insert_with(|| FreeVgprs::new(&scan, index, block, top));
            let Some(renames) = choose(block, first, end, free_now, top, even, target) else { continue };
            // Every life's operands are found before any is renamed (a
            // life may move onto a register another one leaves).
            let mut operands: Vec<(usize, bool, usize, u16)> = Vec::new();
            for r in &renames {
                let block = &code.blocks[index].2;
                operands.extend(positions(&block[r.write].inst.defs, r.from).map(|o| (r.write, true, o, r.to)));
                for k in r.write + 1..=r.store {
                    operands.extend(positions(&block[k].inst.uses, r.from).map(|o| (k, false, o, r.to)));
                }
            }
            let block = &mut code.blocks[index].2;
            for (k, def, o, to) in operands {
                let list = if def { &mut block[k].inst.defs } else { &mut block[k].inst.uses };
                if let Operand::Reg(r) = &mut list[o] {
                    r.base = PhysReg::vgpr(to);
                }
            }
            moved += renames.len();
            free = None;
        }
    }
    moved
}

/// Runs of 2 to 4 neighbouring dword stores of one place, as (first, end)
/// instruction ranges, whose data are not already a run merge_accesses
/// takes.
fn store_runs(block: &[Emitted], even: bool) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    let mut i = 0;
    while i < block.len() {
        let Some(first) = access(&block[i]).filter(|a| !a.load) else {
            i += 1;
            continue;
        };
        let (end, _) = run_from(block, i, first, |last, last_access, next, _| next_place(last, last_access, next));
        let data: Vec<u16> = (i..end).map(|k| access(&block[k]).unwrap().data).collect();
        let in_run = data.windows(2).all(|w| w[1] == w[0] + 1) && !(even && data[0] % 2 == 1);
        if end - i >= 2 && !in_run {
            runs.push((i, end));
        }
        i = end;
    }
    runs
}

struct Rename {
    from: u16,
    to: u16,
    /// The instruction writing `from` (then `to`), and the store reading it.
    write: usize,
    store: usize,
}

/// The renames that put the data of stores `first..end` in one aligned run
/// of registers, keeping as many in place as possible; None if no run fits.
fn choose(block: &[Emitted], first: usize, end: usize, free: &FreeVgprs, top: u16, even: bool, target: Target) -> Option<Vec<Rename>> {
    let data: Vec<u16> = (first..end).map(|k| PhysReg(access(&block[k]).unwrap().data).index()).collect();
    let n = data.len() as u16;
    if (1..data.len()).any(|j| data[..j].contains(&data[j])) || top < n {
        return None;
    }
    // Per dword: the instruction that last writes its register, if the
    // life from there to the store may move.
    let writes: Vec<Option<usize>> = (0..data.len()).map(|j| movable_life(block, first, first + j, data[j], free, target)).collect();
    let step = if even { 2 } else { 1 };
    let mut best: Option<(usize, u16)> = None;
    for base in (0..=top - n).step_by(step) {
        let moving = |m: usize| base + m as u16 != data[m];
        if (0..data.len()).any(|m| moving(m) && writes[m].is_none()) {
            continue;
        }
        let fits = (0..data.len()).filter(|&j| moving(j)).all(|j| {
            let (t, write) = (base + j as u16, writes[j].unwrap());
            // `t` may hold another dword of the run that moves away: its
            // life there ends up elsewhere, so it does not count, and `t`
            // must be free from the earlier of the two writes.
            let leaving = (0..data.len()).find(|&m| m != j && data[m] == t).map(|m| (writes[m].unwrap(), first + m));
            let from = leaving.map_or(write, |(w, _)| w.min(write));
            free.at(from, t) && (from..end).all(|k| !names(&block[k], t) || leaving.is_some_and(|(w, store)| (w..=store).contains(&k)))
        });
        let in_place = (0..data.len()).filter(|&m| !moving(m)).count();
        if fits && best.is_none_or(|(most, _)| in_place > most) {
            best = Some((in_place, base));
        }
    }
    let (_, base) = best?;
    Some(
        (0..data.len())
            .filter(|&j| base + j as u16 != data[j])
            .map(|j| Rename { from: data[j], to: base + j as u16, write: writes[j].unwrap(), store: first + j })
            .collect(),
    )
}

/// Where the life of VGPR `d` stored by instruction `store` starts (its last
/// write), if that life may move to another register.
fn movable_life(block: &[Emitted], first: usize, store: usize, d: u16, free: &FreeVgprs, target: Target) -> Option<usize> {
    if !free.at(store + 1, d) {
        return None;
    }
    let mut k = first;
    while k > 0 {
        k -= 1;
        let e = &block[k];
        if ends_lives(e) {
            return None;
        }
        let writes_d = e.inst.defs.iter().filter_map(vgpr_span).any(|(b, s)| (b..b + s).contains(&d));
        if writes_d {
            let only_d = e.inst.defs.iter().filter_map(vgpr_span).all(|span| span == (d, 1));
            let plain = super::forward_copies::rewritable(&e.inst) && writes_fully(&e.inst, target) && e.inst.vopd_y.is_none();
            return (only_d && plain && reads_alone(&block[k + 1..=store], d)).then_some(k);
        }
    }
    None
}

/// Whether every instruction naming VGPR `d` reads it as a register of its
/// own, in its own lanes.
fn reads_alone(code: &[Emitted], d: u16) -> bool {
    code.iter().filter(|e| names(e, d)).all(|e| {
        let single = e.inst.uses.iter().chain(&e.inst.defs).filter_map(vgpr_span).filter(|&(b, s)| (b..b + s).contains(&d)).all(|(_, s)| s == 1);
        let written = e.inst.defs.iter().filter_map(vgpr_span).any(|(b, s)| (b..b + s).contains(&d));
        single && !written && super::forward_copies::rewritable(&e.inst) && e.inst.vopd_y.is_none()
    })
}

fn names(e: &Emitted, r: u16) -> bool {
    e.inst.defs.iter().chain(&e.inst.uses).filter_map(vgpr_span).any(|(b, s)| (b..b + s).contains(&r))
}

/// The operands that are VGPR `r` alone.
fn positions(operands: &[Operand], r: u16) -> impl Iterator<Item = usize> + '_ {
    operands.iter().enumerate().filter(move |(_, o)| matches!(o, Operand::Reg(x) if x.base.is_vgpr() && x.size == 1 && x.base.index() == r)).map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::expand::test_code::{function, inst, v};
    use crate::isa::{self, Gpu, Opcode, Reg};

    fn store(data: u16, offset: i32) -> Emitted {
        let mut e = inst(Opcode::global_store_dword, vec![], vec![Operand::Reg(Reg::v(0, 2)), v(data)]);
        e.inst.offset = offset;
        e
    }

    fn after(block: Vec<Emitted>, gpu: Gpu, vgprs: u32) -> (Vec<isa::Inst>, usize) {
        let mut block = block;
        block.push(inst(Opcode::s_endpgm, vec![], vec![]));
        let mut code = function(vec![(0, "b".into(), block)], 0);
        code.vgprs = vgprs;
        let moved = run(&mut code, Target::new(gpu));
        (code.blocks.remove(0).2.into_iter().map(|e| e.inst).collect(), moved)
    }

    /// v[0:1] holds the address. Four dwords computed into v7, v3, v5, v2
    /// and stored at consecutive offsets: v[2:5] keeps v3 in place (v[4:7]
    /// none), so v7's life moves to v2, v5's to v4 and v2's to v5, the
    /// lives trading registers.
    #[test]
    fn computed_dwords_move_into_one_aligned_run() {
        let add = |d: u16, s: u16| inst(Opcode::v_add_u32, vec![v(d)], vec![v(s), isa::Operand::imm32(1)]);
        let (code, moved) = after(
            vec![
                inst(Opcode::v_mov_b32, vec![v(6)], vec![isa::Operand::imm32(5)]),
                add(7, 6),
                add(3, 6),
                add(5, 3),
                add(2, 5),
                store(7, 0),
                store(3, 4),
                store(5, 8),
                store(2, 12),
            ],
            Gpu::Gfx90a,
            8,
        );
        assert_eq!(moved, 3);
        let data: Vec<Operand> = code[5..9].iter().map(|i| i.uses[1].clone()).collect();
        assert_eq!(data, vec![v(2), v(3), v(4), v(5)]);
        let defs: Vec<Operand> = code[1..5].iter().map(|i| i.defs[0].clone()).collect();
        assert_eq!(defs, vec![v(2), v(3), v(4), v(5)]);
        assert_eq!((code[3].uses[0].clone(), code[4].uses[0].clone()), (v(3), v(4)));
    }

    /// A dword read after its store, one written under another EXEC, and
    /// one read as half of a pair keep their registers, so nothing fits.
    #[test]
    fn lives_that_cannot_move_keep_their_registers() {
        let add = |d: u16, s: u16| inst(Opcode::v_add_u32, vec![v(d)], vec![v(s), isa::Operand::imm32(1)]);
        // v7 read after the run.
        let (_, moved) = after(
            vec![add(7, 6), add(3, 6), store(7, 0), store(3, 4), inst(Opcode::v_add_u32, vec![v(6)], vec![v(7), v(7)])],
            Gpu::Gfx90a,
            8,
        );
        assert_eq!(moved, 0);
        // EXEC written between v7's write and its store.
        let exec = inst(Opcode::s_mov_b64, vec![Operand::Reg(Reg::exec(2))], vec![Operand::Reg(Reg::s(4, 2))]);
        let (_, moved) = after(vec![add(7, 6), add(3, 6), exec, store(7, 0), store(3, 4)], Gpu::Gfx90a, 8);
        assert_eq!(moved, 0);
        // v7 read as the high half of v[6:7].
        let pair = inst(Opcode::v_lshlrev_b64, vec![Operand::Reg(Reg::v(4, 2))], vec![isa::Operand::imm32(1), Operand::Reg(Reg::v(6, 2))]);
        let (_, moved) = after(vec![add(7, 6), add(3, 6), pair, store(7, 0), store(3, 4)], Gpu::Gfx90a, 8);
        assert_eq!(moved, 0);
    }
}
