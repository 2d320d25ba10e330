//! dead_moves: deletes `v_mov_b32`, `s_mov_b32` and `s_mov_b64` instructions
//! whose destination is written again before anything reads it, within one
//! block (after expansion, on hardware registers). The pair-window scheme
//! (docs/regalloc.md) copies a 64-bit result out of its window after every
//! instruction, and often the only reader takes the value from the window
//! again; those copies die here, as do the halves selection writes into an
//! SGPR pair that a later instruction replaces.
//!
//! A backward scan per block keeps the registers known to be overwritten
//! before any read. It starts empty (what the successors read is unknown)
//! except after `s_endpgm` (nothing is read after it). Only full writes
//! kill a register: those of ordinary VALU and memory instructions and of
//! scalar instructions that do not read their destination; partial writes
//! (`_d16` loads, `v_writelane`, accumulators, SDWA/DPP, `s_cmov`) do not.
//! An instruction that writes EXEC forgets every vector register, since a
//! write under fewer lanes leaves the others in place; scalar registers
//! ignore EXEC. Only ordinary SGPRs (below s102) are candidates: VCC, M0
//! and the rest are read by instructions that do not list them.
//!
//! Across blocks the pass knows only which registers are never read again:
//! in a function whose every exit is `s_endpgm` (no returns, whose readers
//! no operand lists), a register that no instruction of any block reachable
//! from a point reads (in any lane; a partial write counts as a read) is
//! dead there. A read counts only when it is upward-exposed in its block:
//! a full write earlier in the same block under the same EXEC (no EXEC
//! write between) covers every lane the read reads, so it reads the block's
//! own value (a pair window, written and read within each block, carries
//! nothing between blocks). Writes never count as kills across blocks,
//! since they may run under other lanes. A call (`s_swappc_b64`) reads
//! every SGPR and the VGPRs below v32 that the function's calls pass values
//! in, and returns to the next instruction; what the callee writes is not
//! counted as a kill. This removes the copies out of a pair window whose
//! destination nothing reads (for example when the pair was last used
//! through the window itself).

use super::expand::{overlaps, reg_span, Emitted, Expanded};
use crate::isa::{self, Opcode, PhysReg, Target};

/// Whether an instruction's register outputs replace every active lane of
/// their registers. The rule reads mnemonics and the pass asks for every
/// instruction: answers are kept per opcode and GPU as they are found (a
/// table filled up front cost more than the pass on small kernels).
pub(super) fn writes_fully(inst: &isa::Inst, target: Target) -> bool {
    let gpu = isa::opcodes::gpu_index(target.gpu);
    remembered(&WRITES_FULLY, inst.op as usize * 3 + gpu, || writes_fully_uncached(inst.op, target.gpu))
}

/// Answers by index, 0 unknown, 1 no, 2 yes.
type Answers = std::sync::OnceLock<Vec<std::sync::atomic::AtomicU8>>;
static WRITES_FULLY: Answers = std::sync::OnceLock::new();
static WRITES_EXEC: Answers = std::sync::OnceLock::new();

fn remembered(answers: &Answers, index: usize, find: impl FnOnce() -> bool) -> bool {
    use std::sync::atomic::{AtomicU8, Ordering};
    let table = answers.get_or_init(|| (0..Opcode::COUNT * 3).map(|_| AtomicU8::new(0)).collect());
    match table[index].load(Ordering::Relaxed) {
        0 => {
            let answer = find();
            table[index].store(1 + u8::from(answer), Ordering::Relaxed);
            answer
        }
        known => known == 2,
    }
}

fn writes_fully_uncached(op: Opcode, gpu: isa::Gpu) -> bool {
    let name = op.info().name;
    let format = op.info().format(gpu);
    if name.contains("d16")
        || name.contains("writelane")
        || name.contains("mac")
        || name.contains("sdwa")
        || name.contains("dpp")
    {
        return false;
    }
    if format.is_valu() || format.is_flat() || format == isa::opcodes::Format::Ds || format == isa::opcodes::Format::Mubuf {
        return true;
    }
    // Scalar results replace their registers whatever EXEC is, but for the
    // instructions that read their destination (conditional moves, bit sets,
    // the `k` arithmetic) or reach registers indirectly.
    let reads_destination = ["s_cmov", "s_bitset", "s_addk", "s_mulk", "s_movrel", "s_getreg", "s_setreg"].iter().any(|p| name.starts_with(p));
    (format.is_salu() || format == isa::opcodes::Format::Smem) && !reads_destination
}

/// An ordinary SGPR span (not VCC, M0, EXEC or the other special registers,
/// which instructions read without listing them).
fn plain_sgprs((base, size): (u16, u16)) -> bool {
    base + size <= 102
}

pub(super) fn writes_exec(inst: &isa::Inst) -> bool {
    // Opcodes that write EXEC without naming it (answers kept per opcode).
    let name = || inst.op.info().name;
    let implicit = remembered(&WRITES_EXEC, inst.op as usize, || name().starts_with("v_cmpx") || name().contains("saveexec"));
    let exec = (PhysReg::EXEC.0, 2u16);
    implicit
        || inst
            .defs
            .iter()
            .filter_map(reg_span)
            .any(|d| overlaps(d, exec))
}

/// Registers by PhysReg index, one bit each.
#[derive(Clone, Copy, PartialEq, Eq)]
struct RegSet([u64; 16]);

impl RegSet {
    const ALL: RegSet = RegSet([u64::MAX; 16]);

    fn insert_span(&mut self, (base, size): (u16, u16)) {
        for r in base..base + size {
            if let Some(word) = self.0.get_mut(usize::from(r) / 64) {
                *word |= 1 << (r % 64);
            }
        }
    }

    fn contains(&self, r: usize) -> bool {
        self.0.get(r / 64).is_some_and(|w| w & (1 << (r % 64)) != 0)
    }

    fn union_with(&mut self, other: &RegSet) {
        self.0.iter_mut().zip(other.0).for_each(|(a, b)| *a |= b);
    }

    fn remove_span(&mut self, (base, size): (u16, u16)) {
        for r in base..base + size {
            if let Some(word) = self.0.get_mut(usize::from(r) / 64) {
                *word &= !(1 << (r % 64));
            }
        }
    }

    fn keep_only(&mut self, other: &RegSet) {
        self.0.iter_mut().zip(other.0).for_each(|(a, b)| *a &= b);
    }

    fn complement(&self) -> RegSet {
        RegSet(self.0.map(|w| !w))
    }
}

/// The registers an instruction reads, as far as liveness goes: its uses,
/// and the destinations of partial writes (which keep what they do not
/// replace).
fn reads(inst: &isa::Inst, target: Target) -> impl Iterator<Item = (u16, u16)> + '_ {
    let partial = !writes_fully(inst, target) || writes_exec(inst);
    let kept = inst.defs.iter().filter(move |_| partial);
    inst.uses.iter().chain(kept).filter_map(reg_span)
}

/// The registers a callee may read that the call instruction does not
/// list: every scalar register (arguments, the scratch resource, SP, the
/// implicit inputs, EXEC) and the VGPRs below v32 that the function's calls
/// pass values in (`vgprs`, bit n for vN: arguments and the work-item IDs).
/// Other VGPRs and AGPRs carry nothing to a callee; one that uses such a
/// register saves and restores it, so the caller's value there is not read.
fn call_reads(vgprs: u32) -> RegSet {
    let mut set = RegSet([0; 16]);
    for r in 0..1024u16 {
        let reg = PhysReg(r);
        if reg.is_scalar() || (reg.is_vgpr() && reg.index() < 32 && vgprs & (1 << reg.index()) != 0) {
            set.insert_span((r, 1));
        }
    }
    set
}

/// The scalar registers (which EXEC does not mask).
fn scalar_registers() -> RegSet {
    let mut scalar = RegSet([0; 16]);
    (0..1024u16).filter(|&r| PhysReg(r).is_scalar()).for_each(|r| scalar.insert_span((r, 1)));
    scalar
}

/// For each block (by layout position), the registers that an instruction
/// of a block reachable from it, itself included, may read: what is not in
/// it is never read again from the block's start. A call reads
/// [`call_reads`] and returns to the next instruction. `None` when the
/// function leaves other than by `s_endpgm` (a device function's return:
/// its caller reads registers that no operand lists).
fn reachable_reads(code: &Expanded, target: Target, by_call: &RegSet, scalar: &RegSet) -> Option<Vec<RegSet>> {
    let position: hashbrown::HashMap<usize, usize> = code.blocks.iter().enumerate().map(|(i, (b, _, _))| (*b, i)).collect();
    let mut own = Vec::with_capacity(code.blocks.len());
    let mut successors: Vec<Vec<usize>> = Vec::with_capacity(code.blocks.len());
    for (i, (_, _, block)) in code.blocks.iter().enumerate() {
        let mut next = Vec::new();
        for e in block {
            if e.inst.op == Opcode::s_setpc_b64 {
                return None;
            }
            if let Some(t) = e.target {
                next.push(*position.get(&t)?);
            }
        }
        // The block's upward-exposed reads: a read that a full write before
        // it in the block covers (same EXEC: no EXEC write between) reads
        // the block's own value, in every lane it reads. A backward sweep;
        // past an EXEC write the vector registers read after it stay
        // exposed (`sticky`), whatever writes them before.
        let mut exposed = RegSet([0; 16]);
        let mut sticky = RegSet([0; 16]);
        for e in block.iter().rev() {
            if writes_exec(&e.inst) {
                let mut vector = exposed;
                vector.keep_only(&scalar.complement());
                sticky.union_with(&vector);
            }
            if writes_fully(&e.inst, target) && !writes_exec(&e.inst) {
                e.inst.defs.iter().filter_map(reg_span).for_each(|span| exposed.remove_span(span));
            }
            reads(&e.inst, target).for_each(|span| exposed.insert_span(span));
            if e.inst.op == Opcode::s_swappc_b64 {
                exposed.union_with(by_call);
            }
        }
        let mut read = exposed;
        read.union_with(&sticky);
        let jumps_away = block.last().is_some_and(|e| matches!(e.inst.op, Opcode::s_branch | Opcode::s_endpgm));
        if !jumps_away {
            if i + 1 < code.blocks.len() {
                next.push(i + 1);
            } else {
                // Falls off the end of the code: unknown readers.
                read = RegSet::ALL;
            }
        }
        own.push(read);
        successors.push(next);
    }
    // Reachability to a fixed point; blocks in reverse layout order settle
    // forward code in one sweep, each loop needs one more.
    let mut reach = own.clone();
    let mut changed = true;
    while changed {
        changed = false;
        for i in (0..reach.len()).rev() {
            let mut r = reach[i];
            for &s in &successors[i] {
                r.union_with(&reach[s]);
            }
            if r != reach[i] {
                reach[i] = r;
                changed = true;
            }
        }
    }
    Some(reach)
}

/// What a backward scan knows at one point of a block: per register (by
/// PhysReg index), whether the value there is overwritten before any read
/// under the present EXEC (`dead`) or read by nothing reachable at all
/// (`never`). Either way an instruction placed at that point, running under
/// the EXEC there, may write the register.
/// Bit sets over the 1024 PhysReg indices (no allocation per point).
pub(super) struct Point {
    dead: RegSet,
    never: RegSet,
}

impl Point {
    pub(super) fn free(&self, r: usize) -> bool {
        self.dead.contains(r) || self.never.contains(r)
    }
}

/// The function-wide facts the per-block scans start from.
pub(super) struct Scan {
    reach: Option<Vec<RegSet>>,
    /// What a call reads ([`call_reads`]).
    by_call: RegSet,
    /// The scalar registers (which EXEC does not mask).
    scalar: RegSet,
    position: hashbrown::HashMap<usize, usize>,
    layout_len: usize,
    target: Target,
}

impl Scan {
    pub(super) fn new(code: &Expanded, target: Target) -> Scan {
        let (by_call, scalar) = (call_reads(code.call_vgpr_reads), scalar_registers());
        Scan {
            reach: reachable_reads(code, target, &by_call, &scalar),
            by_call,
            scalar,
            position: code.blocks.iter().enumerate().map(|(i, (b, _, _))| (*b, i)).collect(),
            layout_len: code.blocks.len(),
            target,
        }
    }

    /// Whether registers are known across blocks (every exit is
    /// `s_endpgm`).
    pub(super) fn knows_other_blocks(&self) -> bool {
        self.reach.is_some()
    }

    /// The point after the last instruction of the block at layout position
    /// `index`.
    pub(super) fn block_end(&self, index: usize, block: &[Emitted]) -> Point {
        let dead = if block.last().is_some_and(|e| e.inst.op == Opcode::s_endpgm) { RegSet::ALL } else { RegSet([0; 16]) };
        let mut never = RegSet([0; 16]);
        if let Some(reach) = &self.reach {
            let jumps_away = block.last().is_some_and(|e| matches!(e.inst.op, Opcode::s_branch | Opcode::s_endpgm));
            let after = match (jumps_away, index + 1 < self.layout_len) {
                (true, _) => RegSet([0; 16]),
                (false, true) => reach[index + 1],
                // Falls off the end of the code: unknown readers.
                (false, false) => RegSet::ALL,
            };
            never = after.complement();
        }
        Point { dead, never }
    }

    /// Moves `point` from after `e` to before it.
    pub(super) fn step_back(&self, point: &mut Point, e: &Emitted) {
        let inst = &e.inst;
        let Point { dead, never } = point;
        // Branches forget everything; a call, when registers are known
        // across blocks, reads what a callee may read (no operand lists
        // it) and returns here, where the rest stays known (the callee's
        // writes kill nothing: it may not write a register at all);
        // EXEC writes forget the vector registers (a write under other
        // lanes keeps the rest), not the scalar ones, which no EXEC masks.
        if inst.op == Opcode::s_swappc_b64 && self.reach.is_some() {
            dead.keep_only(&self.by_call.complement());
            never.keep_only(&self.by_call.complement());
        } else if e.target.is_some() || matches!(inst.op, Opcode::s_swappc_b64 | Opcode::s_setpc_b64) {
            *dead = RegSet([0; 16]);
            match (&self.reach, e.target.and_then(|t| self.position.get(&t))) {
                (Some(reach), Some(&t)) => never.keep_only(&reach[t].complement()),
                _ => *never = RegSet([0; 16]),
            }
        } else if writes_exec(inst) {
            dead.keep_only(&self.scalar);
        }
        // A partial write reads what it keeps (an accumulator reads its
        // destination without listing it); a full one kills.
        let full = writes_fully(inst, self.target) && !writes_exec(inst);
        for span in inst.defs.iter().filter_map(reg_span) {
            if full {
                dead.insert_span(span);
            } else {
                dead.remove_span(span);
            }
        }
        for span in inst.uses.iter().filter_map(reg_span) {
            dead.remove_span(span);
        }
        for span in reads(inst, self.target) {
            never.remove_span(span);
        }
    }
}

/// An instruction no renamed register life may contain: it changes EXEC
/// (a write before it and a read after it see different lanes), branches,
/// calls or returns, or carries frame rows. (A relocated instruction, the
/// `s_getpc_b64`/`s_add_u32` of a data or callee address, writes SGPRs
/// only; the call itself is the `s_swappc_b64`.)
pub(super) fn ends_lives(e: &Emitted) -> bool {
    writes_exec(&e.inst) || e.target.is_some() || !e.cfi.is_empty() || matches!(e.inst.op, Opcode::s_swappc_b64 | Opcode::s_setpc_b64)
}

/// The VGPRs below `top` free at every point of one block (point `p` is
/// before instruction `p`; point `len` after the last): one backward scan.
pub(super) struct FreeVgprs {
    words: usize,
    bits: Vec<u64>,
}

impl FreeVgprs {
    pub(super) fn new(scan: &Scan, index: usize, block: &[Emitted], top: u16) -> FreeVgprs {
        let n = block.len();
        let words = usize::from(top).div_ceil(64).max(1);
        let mut bits = vec![0u64; (n + 1) * words];
        let mut point = scan.block_end(index, block);
        // VGPRs are a run of whole words of the PhysReg sets.
        const FIRST_WORD: usize = PhysReg::vgpr(0).0 as usize / 64;
        const _: () = assert!(PhysReg::vgpr(0).0 % 64 == 0);
        let mut record = |p: usize, point: &Point| {
            for w in 0..words {
                bits[p * words + w] = point.dead.0[FIRST_WORD + w] | point.never.0[FIRST_WORD + w];
            }
        };
        record(n, &point);
        for k in (0..n).rev() {
            scan.step_back(&mut point, &block[k]);
            record(k, &point);
        }
        FreeVgprs { words, bits }
    }

    /// VGPRs 64w to 64w + 63 free before instruction `p`, one bit each.
    pub(super) fn word(&self, p: usize, w: usize) -> u64 {
        self.bits[p * self.words + w]
    }

    /// Whether VGPR `r` is free before instruction `p`.
    pub(super) fn at(&self, p: usize, r: u16) -> bool {
        self.bits.get(p * self.words + usize::from(r) / 64).is_some_and(|w| w & (1 << (r % 64)) != 0)
    }
}

/// Deletes the dead moves of every block; returns how many.
pub fn run(code: &mut Expanded, target: Target) -> usize {
    let mut removed = 0;
    let scan = Scan::new(code, target);
    for (index, (_, _, block)) in code.blocks.iter_mut().enumerate() {
        let mut point = scan.block_end(index, block);
        let mut keep = vec![true; block.len()];
        for i in (0..block.len()).rev() {
            let e = &block[i];
            let inst = &e.inst;
            if e.target.is_none() && e.symbol.is_none() && e.cfi.is_empty() && !inst.e64 {
                let span = inst.defs.first().and_then(reg_span);
                let removable = match (inst.op, span) {
                    (Opcode::v_mov_b32, Some((d, 1))) => PhysReg(d).is_vgpr(),
                    (Opcode::s_mov_b32, Some(d @ (_, 1))) | (Opcode::s_mov_b64, Some(d @ (_, 2))) => plain_sgprs(d),
                    _ => false,
                };
                if let (true, Some((d, size))) = (removable, span) {
                    // A move onto itself (allocation gave a copy instruction
                    // of selection one register for both sides) does nothing.
                    let onto_itself = inst.uses.len() == 1 && inst.uses.first().and_then(reg_span) == Some((d, size));
                    if onto_itself || (d..d + size).all(|r| point.free(usize::from(r))) {
                        keep[i] = false;
                        removed += 1;
                        continue;
                    }
                }
            }
            scan.step_back(&mut point, e);
        }
        if removed > 0 {
            super::expand::keep_marked(block, &keep);
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::expand::test_code::{function, inst, s, v};
    use crate::codegen::expand::Emitted;
    use crate::isa::{Gpu, Operand, Reg};

    /// The opcodes left after the pass, and how many it removed.
    fn survivors(block: Vec<Emitted>) -> (Vec<Opcode>, usize) {
        let mut code = function(vec![(0, "b".into(), block)], 0);
        let removed = run(&mut code, isa::Target::new(Gpu::Gfx90a));
        (code.blocks[0].2.iter().map(|e| e.inst.op).collect(), removed)
    }

    #[test]
    fn scalar_moves_overwritten_before_a_read_go_even_across_exec_writes() {
        let exec = Operand::Reg(Reg::exec(2));
        let (ops, removed) = survivors(vec![
            inst(Opcode::s_mov_b32, vec![s(4)], vec![Operand::imm32(1)]),
            inst(Opcode::s_mov_b64, vec![exec], vec![Operand::Reg(Reg::s(6, 2))]),
            inst(Opcode::s_mul_i32, vec![s(4)], vec![s(5), s(5)]),
            inst(Opcode::v_add_u32, vec![v(0)], vec![s(4), v(0)]),
        ]);
        assert_eq!(removed, 1);
        assert_eq!(ops, [Opcode::s_mov_b64, Opcode::s_mul_i32, Opcode::v_add_u32]);
    }

    #[test]
    fn vector_moves_stay_across_exec_writes_and_scalar_ones_before_readers_of_their_destination() {
        let exec = Operand::Reg(Reg::exec(2));
        let vcc = Operand::Reg(Reg::new(PhysReg::VCC, 1));
        let block = vec![
            inst(Opcode::v_mov_b32, vec![v(1)], vec![Operand::imm32(1)]),
            inst(Opcode::s_mov_b64, vec![exec], vec![Operand::Reg(Reg::s(6, 2))]),
            inst(Opcode::v_mov_b32, vec![v(1)], vec![Operand::imm32(2)]),
            // s_cmov_b32 keeps its destination when SCC is clear.
            inst(Opcode::s_mov_b32, vec![s(4)], vec![Operand::imm32(1)]),
            inst(Opcode::s_cmov_b32, vec![s(4)], vec![s(5)]),
            // VCC is read by instructions that do not list it.
            inst(Opcode::s_mov_b32, vec![vcc.clone()], vec![Operand::imm32(0)]),
            inst(Opcode::s_mov_b32, vec![vcc], vec![Operand::imm32(1)]),
            inst(Opcode::v_add_u32, vec![v(2)], vec![s(4), v(1)]),
        ];
        let (ops, removed) = survivors(block);
        assert_eq!(removed, 0, "{ops:?}");
    }

    #[test]
    fn moves_onto_themselves_go() {
        let (ops, removed) = survivors(vec![
            inst(Opcode::v_mov_b32, vec![v(3)], vec![v(3)]),
            inst(Opcode::s_mov_b32, vec![s(5)], vec![s(5)]),
            inst(Opcode::v_add_u32, vec![v(2)], vec![s(5), v(3)]),
        ]);
        assert_eq!((ops, removed), (vec![Opcode::v_add_u32], 2));
    }

    /// Three blocks: 0 moves into v1 and branches to 2 or falls into 1,
    /// 1 ends the program, 2 reads `read_in_2` and jumps back to 0 when
    /// `back_edge`.
    fn across_blocks(read_in_2: u16, back_edge: bool) -> usize {
        let branch = |op: Opcode, target: usize| Emitted { inst: isa::Inst::sopp(op, 0), target: Some(target), symbol: None, cfi: Vec::new() };
        let mut last = vec![inst(Opcode::v_add_u32, vec![v(4)], vec![v(read_in_2), v(0)])];
        last.push(if back_edge { branch(Opcode::s_branch, 0) } else { inst(Opcode::s_endpgm, vec![], vec![]) });
        let blocks = vec![
            (0, "b0".into(), vec![inst(Opcode::v_add_u32, vec![v(0)], vec![v(1), v(0)]), inst(Opcode::v_mov_b32, vec![v(1)], vec![v(2)]), branch(Opcode::s_cbranch_scc1, 2)]),
            (1, "b1".into(), vec![inst(Opcode::s_endpgm, vec![], vec![])]),
            (2, "b2".into(), last),
        ];
        let mut code = function(blocks, 0);
        run(&mut code, isa::Target::new(Gpu::Gfx90a))
    }

    /// Block 0 moves into v1 and branches to 2 or falls into 1 (which ends
    /// the program); block 2 is `last`, then ends the program. Returns how
    /// many moves the pass removed, with `call_vgpr_reads` as given.
    fn before_block(last: Vec<Emitted>, call_vgpr_reads: u32) -> usize {
        let branch = |op: Opcode, target: usize| Emitted { inst: isa::Inst::sopp(op, 0), target: Some(target), symbol: None, cfi: Vec::new() };
        let mut last = last;
        last.push(inst(Opcode::s_endpgm, vec![], vec![]));
        let blocks = vec![
            (0, "b0".into(), vec![inst(Opcode::v_add_u32, vec![v(0)], vec![v(1), v(0)]), inst(Opcode::v_mov_b32, vec![v(1)], vec![v(2)]), branch(Opcode::s_cbranch_scc1, 2)]),
            (1, "b1".into(), vec![inst(Opcode::s_endpgm, vec![], vec![])]),
            (2, "b2".into(), last),
        ];
        let mut code = function(blocks, call_vgpr_reads);
        run(&mut code, isa::Target::new(Gpu::Gfx90a))
    }

    #[test]
    fn reads_of_a_later_block_behind_its_own_write_do_not_keep_a_move() {
        let exec = Operand::Reg(Reg::exec(2));
        let write_v1 = || inst(Opcode::v_mov_b32, vec![v(1)], vec![Operand::imm32(7)]);
        let read_v1 = || inst(Opcode::v_add_u32, vec![v(4)], vec![v(1), v(0)]);
        // Block 2 writes v1 before reading it, under the same EXEC.
        assert_eq!(before_block(vec![write_v1(), read_v1()], 0), 1);
        // An EXEC write between: the read may see lanes the write did not
        // write, which hold block 0's value.
        let set_exec = inst(Opcode::s_mov_b64, vec![exec], vec![Operand::Reg(Reg::s(6, 2))]);
        assert_eq!(before_block(vec![write_v1(), set_exec, read_v1()], 0), 0);
        // A partial write reads what it keeps.
        let partial = inst(Opcode::v_writelane_b32, vec![v(1)], vec![s(3), Operand::imm32(0)]);
        assert_eq!(before_block(vec![partial, read_v1()], 0), 0);
    }

    #[test]
    fn calls_read_the_argument_vgprs_and_every_sgpr() {
        let ra = Operand::Reg(Reg::s(30, 2));
        let call = || inst(Opcode::s_swappc_b64, vec![ra.clone()], vec![ra.clone()]);
        // v1 carries an argument of the function's calls: the move stays.
        assert_eq!(before_block(vec![call()], 0b10), 0);
        // The calls pass nothing in v1: nothing reads block 0's value.
        assert_eq!(before_block(vec![call()], 0b1), 1);
        // Within a block: a move into an argument VGPR before the call stays,
        // one into another VGPR overwritten after the call goes, and so does
        // one into an SGPR only when nothing but a later write follows.
        let (ops, removed) = {
            let block = vec![
                inst(Opcode::v_mov_b32, vec![v(0)], vec![Operand::imm32(1)]),
                inst(Opcode::v_mov_b32, vec![v(5)], vec![Operand::imm32(2)]),
                inst(Opcode::s_mov_b32, vec![s(8)], vec![Operand::imm32(3)]),
                call(),
                inst(Opcode::v_mov_b32, vec![v(5)], vec![Operand::imm32(4)]),
                inst(Opcode::s_mov_b32, vec![s(8)], vec![Operand::imm32(5)]),
                inst(Opcode::v_add_u32, vec![v(6)], vec![v(5), v(0)]),
                inst(Opcode::s_add_u32, vec![s(9)], vec![s(8), s(8)]),
                inst(Opcode::s_endpgm, vec![], vec![]),
            ];
            let mut code = function(vec![(0, "b".into(), block)], 0b1);
            let removed = run(&mut code, isa::Target::new(Gpu::Gfx90a));
            (code.blocks[0].2.iter().map(|e| e.inst.op).collect::<Vec<_>>(), removed)
        };
        assert_eq!(removed, 1, "{ops:?}");
        assert_eq!(ops[..3], [Opcode::v_mov_b32, Opcode::s_mov_b32, Opcode::s_swappc_b64]);
    }

    #[test]
    fn moves_nothing_reads_in_any_later_block_go() {
        assert_eq!(across_blocks(3, false), 1);
        // A successor reads v1 (in some lanes, perhaps): the move stays.
        assert_eq!(across_blocks(1, false), 0);
        // Block 0 reads v1 again through the loop.
        assert_eq!(across_blocks(3, true), 0);
    }
}
