//! merge_accesses: within one block, after allocation, single-dword global
//! loads or stores that follow one another, address the same place at
//! consecutive dword offsets and move consecutive VGPRs become one
//! multi-dword access (`global_store_dword` ×2 → `global_store_dwordx2`, up
//! to `x4`). Selection stores a 64-bit value or neighbouring scalars one
//! dword at a time (each half of a 64-bit value is a value of its own, and
//! assembling a tuple would cost a copy per dword); where the allocator put
//! the dwords in neighbouring registers anyway, one instruction does.
//!
//! Why this is sound: the accesses are adjacent, so nothing runs between
//! them; they share every operand but the data register and the offset (the
//! same address registers, the same cache bits), so together they access
//! the bytes the multi-dword access does, in one instruction instead of
//! several. Global memory needs only 4-byte alignment for multi-dword
//! accesses (llc-22 merges dword accesses of 4-byte aligned data so too).
//! Volatile accesses never merge: selection puts a wait after each one. A
//! load merges only if no load of the run writes a register of the address
//! (the later loads would have read the new address). The tuple's first
//! register is even where the target requires it (gfx90a, gfx942).

use super::expand::{overlaps, reg_span, Emitted, Expanded};
use crate::isa::{self, Opcode, Target};

/// One single-dword global access: the index of its data operand among the
/// instruction's definitions (loads) or uses (stores), and its register.
#[derive(Clone, Copy)]
pub(super) struct Access {
    pub(super) load: bool,
    /// The data register's PhysReg index.
    pub(super) data: u16,
}

/// A single-dword global load or store with its one data VGPR.
pub(super) fn access(e: &Emitted) -> Option<Access> {
    if e.target.is_some() || e.symbol.is_some() || !e.cfi.is_empty() || e.inst.vopd_y.is_some() {
        return None;
    }
    let (load, data) = match e.inst.op {
        Opcode::global_load_dword => (true, e.inst.defs.first()?),
        Opcode::global_store_dword => (false, e.inst.uses.get(1)?),
        _ => return None,
    };
    match data {
        isa::Operand::Reg(r) if r.base.is_vgpr() && r.size == 1 => Some(Access { load, data: r.base.0 }),
        _ => None,
    }
}

/// The operands of `e` other than its data register (the address).
fn address(e: &Emitted, load: bool) -> impl Iterator<Item = &isa::Operand> {
    let skip = if load { usize::MAX } else { 1 };
    e.inst.uses.iter().enumerate().filter(move |&(i, _)| i != skip).map(|(_, o)| o)
}

/// Whether `next` continues a run whose last access is `last`: the same
/// kind, address and cache bits, the next dword in memory and in registers.
fn continues(last: &Emitted, last_access: &Access, next: &Emitted, next_access: &Access) -> bool {
    next_access.data == last_access.data + 1 && next_place(last, last_access, next)
}

/// Whether `next` accesses the dword after `last`'s in the same way (the
/// same opcode, address operands and cache bits), whatever their data.
pub(super) fn next_place(last: &Emitted, last_access: &Access, next: &Emitted) -> bool {
    last.inst.op == next.inst.op
        && i64::from(next.inst.offset) == i64::from(last.inst.offset) + 4
        && next.inst.cache == last.inst.cache
        && next.inst.offen == last.inst.offen
        && next.inst.idxen == last.inst.idxen
        && address(last, last_access.load).eq(address(next, last_access.load))
}

/// The end of the run of up to four accesses starting with `first` at `i`
/// in which each access `follows` the one before, and its last access.
pub(super) fn run_from(block: &[Emitted], i: usize, first: Access, follows: impl Fn(&Emitted, &Access, &Emitted, &Access) -> bool) -> (usize, Access) {
    let (mut end, mut last) = (i + 1, first);
    while end < block.len() && end - i < 4 {
        match access(&block[end]) {
            Some(next) if follows(&block[end - 1], &last, &block[end], &next) => {
                last = next;
                end += 1;
            }
            _ => break,
        }
    }
    (end, last)
}

/// Merges the runs; returns how many instructions went.
pub fn run(code: &mut Expanded, target: Target) -> usize {
    let even = target.gpu.requires_even_vgpr_tuples();
    let mut removed = 0;
    for (_, _, block) in code.blocks.iter_mut() {
        let mut keep = vec![true; block.len()];
        let mut i = 0;
        while i < block.len() {
            let Some(first) = access(&block[i]) else {
                i += 1;
                continue;
            };
            if even && first.data % 2 == 1 {
                i += 1;
                continue;
            }
            // The run: up to four accesses, each continuing the one before.
            let (end, last) = run_from(block, i, first, continues);
            let dwords = end - i;
            // Loads: none may write a register the address reads (the loads
            // after it would have read the new address).
            let address_apart = !last.load || {
                let written = (first.data, dwords as u16);
                address(&block[i], true).filter_map(reg_span).all(|r| !overlaps(r, written))
            };
            if dwords < 2 || !address_apart {
                i += 1;
                continue;
            }
            let op = match (last.load, dwords) {
                (true, 2) => Opcode::global_load_dwordx2,
                (true, 3) => Opcode::global_load_dwordx3,
                (true, _) => Opcode::global_load_dwordx4,
                (false, 2) => Opcode::global_store_dwordx2,
                (false, 3) => Opcode::global_store_dwordx3,
                (false, _) => Opcode::global_store_dwordx4,
            };
            let tuple = isa::Operand::Reg(isa::Reg::new(isa::PhysReg(first.data), dwords as u8));
            let inst = &mut block[i].inst;
            inst.op = op;
            if last.load {
                inst.defs[0] = tuple;
            } else {
                inst.uses[1] = tuple;
            }
            for k in &mut keep[i + 1..end] {
                *k = false;
            }
            removed += dwords - 1;
            i = end;
        }
        if keep.iter().any(|&k| !k) {
            super::expand::keep_marked(block, &keep);
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::expand::test_code::{function, inst, v};
    use crate::isa::{Gpu, Operand, Reg};

    fn pair(n: u16) -> Operand {
        Operand::Reg(Reg::v(n, 2))
    }

    fn sbase() -> Operand {
        Operand::Reg(Reg::s(4, 2))
    }

    fn store(addr: u16, data: u16, offset: i32) -> Emitted {
        let mut e = inst(Opcode::global_store_dword, vec![], vec![v(addr), v(data), sbase()]);
        e.inst.offset = offset;
        e
    }

    fn load(data: u16, addr: u16, offset: i32) -> Emitted {
        let mut e = inst(Opcode::global_load_dword, vec![v(data)], vec![v(addr), sbase()]);
        e.inst.offset = offset;
        e
    }

    fn after(block: Vec<Emitted>, gpu: Gpu) -> (Vec<isa::Inst>, usize) {
        let mut block = block;
        block.push(inst(Opcode::s_endpgm, vec![], vec![]));
        let mut code = function(vec![(0, "b".into(), block)], 0);
        let removed = run(&mut code, Target::new(gpu));
        (code.blocks.remove(0).2.into_iter().map(|e| e.inst).collect(), removed)
    }

    #[test]
    fn neighbouring_dword_stores_from_neighbouring_registers_become_one() {
        let (code, removed) = after(vec![store(0, 4, 8), store(0, 5, 12), store(0, 6, 16), store(0, 7, 20)], Gpu::Gfx90a);
        assert_eq!(removed, 3);
        assert_eq!(code[0].op, Opcode::global_store_dwordx4);
        assert_eq!(code[0].uses, vec![v(0), Operand::Reg(Reg::v(4, 4)), sbase()]);
        assert_eq!(code[0].offset, 8);
    }

    #[test]
    fn loads_merge_unless_one_writes_the_address() {
        let (code, removed) = after(vec![load(4, 0, 0), load(5, 0, 4)], Gpu::Gfx942);
        assert_eq!((removed, code[0].op, code[0].defs[0].clone()), (1, Opcode::global_load_dwordx2, pair(4)));
        // The first load writes v0, the second's address.
        let (_, removed) = after(vec![load(0, 0, 0), load(1, 0, 4)], Gpu::Gfx1100);
        assert_eq!(removed, 0);
    }

    #[test]
    fn runs_break_at_gaps_other_addresses_and_odd_tuples_on_gfx9() {
        // Not the next dword, not the next register, another address.
        for block in [
            vec![store(0, 4, 0), store(0, 5, 8)],
            vec![store(0, 4, 0), store(0, 6, 4)],
            vec![store(0, 4, 0), store(1, 5, 4)],
        ] {
            assert_eq!(after(block, Gpu::Gfx1100).1, 0);
        }
        // An odd first register: gfx90a and gfx942 need even tuples; the
        // next two still merge there. gfx11 takes all three.
        let (code, removed) = after(vec![store(0, 3, 0), store(0, 4, 4), store(0, 5, 8)], Gpu::Gfx90a);
        assert_eq!((removed, code[1].op), (1, Opcode::global_store_dwordx2));
        assert_eq!(code[1].uses[1], pair(4));
        assert_eq!(after(vec![store(0, 3, 0), store(0, 4, 4), store(0, 5, 8)], Gpu::Gfx1100).1, 2);
    }

    #[test]
    fn anything_between_or_other_cache_bits_keep_the_accesses_apart() {
        let wait = inst(Opcode::s_waitcnt, vec![], vec![]);
        assert_eq!(after(vec![store(0, 4, 0), wait, store(0, 5, 4)], Gpu::Gfx90a).1, 0);
        let mut nontemporal = store(0, 5, 4);
        nontemporal.inst.cache = isa::Cache::SC0 | isa::Cache::SC1;
        assert_eq!(after(vec![store(0, 4, 0), nontemporal], Gpu::Gfx942).1, 0);
    }
}
