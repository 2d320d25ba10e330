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

use super::expand::{overlaps, reg_span, Expanded};
use crate::isa::{self, Opcode, PhysReg, Target};

/// Whether an instruction's register outputs replace every active lane of
/// their registers.
fn writes_fully(inst: &isa::Inst, target: Target) -> bool {
    let name = inst.op.info().name;
    let format = inst.op.info().format(target.gpu);
    if name.contains("d16") || name.contains("writelane") || name.contains("mac") || name.contains("sdwa") || name.contains("dpp") {
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

fn writes_exec(inst: &isa::Inst) -> bool {
    let name = inst.op.info().name;
    let exec = (PhysReg::EXEC.0, 2u16);
    name.starts_with("v_cmpx") || name.contains("saveexec") || inst.defs.iter().filter_map(reg_span).any(|d| overlaps(d, exec))
}

/// Deletes the dead moves of every block; returns how many.
pub fn run(code: &mut Expanded, target: Target) -> usize {
    let mut removed = 0;
    for (_, _, block) in &mut code.blocks {
        // Registers (VGPR numbers as PhysReg indices) overwritten before read.
        let mut dead: Vec<bool> = vec![false; 1024];
        if block.last().is_some_and(|e| e.inst.op == Opcode::s_endpgm) {
            dead.iter_mut().for_each(|d| *d = true);
        }
        let mut keep = vec![true; block.len()];
        for i in (0..block.len()).rev() {
            let e = &block[i];
            let inst = &e.inst;
            if e.target.is_none() && e.call.is_none() && e.cfi.is_empty() && !inst.e64 {
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
                    if onto_itself || (d..d + size).all(|r| dead[usize::from(r)]) {
                        keep[i] = false;
                        removed += 1;
                        continue;
                    }
                }
            }
            // Branches and calls (the callee reads its argument registers,
            // which no operand lists) forget everything; EXEC writes forget
            // the vector registers (a write under other lanes keeps the rest),
            // not the scalar ones, which no EXEC masks.
            if e.target.is_some() || e.call.is_some() || matches!(inst.op, Opcode::s_swappc_b64 | Opcode::s_setpc_b64) {
                dead.iter_mut().for_each(|d| *d = false);
            } else if writes_exec(inst) {
                dead.iter_mut().enumerate().filter(|(r, _)| !PhysReg(*r as u16).is_scalar()).for_each(|(_, d)| *d = false);
            }
            let full = writes_fully(inst, target) && !writes_exec(inst);
            if !full {
                // A partial write reads what it keeps (an accumulator reads
                // its destination without listing it).
                for (base, size) in inst.defs.iter().filter_map(reg_span) {
                    for r in base..base + size {
                        if let Some(d) = dead.get_mut(usize::from(r)) {
                            *d = false;
                        }
                    }
                }
            }
            if full {
                for (base, size) in inst.defs.iter().filter_map(reg_span) {
                    for r in base..base + size {
                        if let Some(d) = dead.get_mut(usize::from(r)) {
                            *d = true;
                        }
                    }
                }
            }
            for (base, size) in inst.uses.iter().filter_map(reg_span) {
                for r in base..base + size {
                    if let Some(d) = dead.get_mut(usize::from(r)) {
                        *d = false;
                    }
                }
            }
        }
        if removed > 0 {
            let mut index = 0;
            block.retain(|_| {
                index += 1;
                keep[index - 1]
            });
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::expand::{Emitted, SpillCounts};
    use crate::isa::{Gpu, Operand, Reg};

    fn inst(op: Opcode, defs: Vec<Operand>, uses: Vec<Operand>) -> Emitted {
        Emitted { inst: isa::Inst::new(op, defs, uses), target: None, call: None, cfi: Vec::new() }
    }

    fn s(n: u16) -> Operand {
        Operand::Reg(Reg::s(n, 1))
    }

    fn v(n: u16) -> Operand {
        Operand::Reg(Reg::v(n, 1))
    }

    /// The opcodes left after the pass, and how many it removed.
    fn survivors(block: Vec<Emitted>) -> (Vec<Opcode>, usize) {
        let mut code = Expanded { blocks: vec![(0, "b".into(), block)], vgprs: 0, agprs: 0, spills: SpillCounts::default(), sgprs: 0, uses_vcc: false, scratch_bytes: 0, frame_bytes: 0 };
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
}
