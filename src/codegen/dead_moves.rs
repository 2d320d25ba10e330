//! dead_moves: deletes `v_mov_b32` instructions whose destination is written
//! again before anything reads it, within one block (after expansion, on
//! hardware registers). The pair-window scheme (docs/regalloc.md) copies a
//! 64-bit result out of its window after every instruction, and often the
//! only reader takes the value from the window again; those copies die here.
//!
//! A backward scan per block keeps the registers known to be overwritten
//! before any read. It starts empty (what the successors read is unknown)
//! except after `s_endpgm` (nothing is read after it). Only full writes of
//! ordinary VALU and memory instructions kill a register: partial writes
//! (`_d16` loads, `v_writelane`, accumulators, SDWA/DPP) do not, and any
//! instruction that writes EXEC forgets everything, since a write under
//! fewer lanes leaves the others in place.

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
    format.is_valu() || format.is_flat() || format == isa::opcodes::Format::Ds || format == isa::opcodes::Format::Mubuf
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
            if inst.op == Opcode::v_mov_b32 && e.target.is_none() && e.call.is_none() && e.cfi.is_empty() && !inst.e64 {
                if let Some((d, 1)) = inst.defs.first().and_then(reg_span) {
                    if PhysReg(d).is_vgpr() && dead[usize::from(d)] {
                        keep[i] = false;
                        removed += 1;
                        continue;
                    }
                }
            }
            // EXEC writes, branches and calls (the callee reads its argument
            // registers, which no operand lists) forget everything.
            if writes_exec(inst) || e.target.is_some() || e.call.is_some() || matches!(inst.op, Opcode::s_swappc_b64 | Opcode::s_setpc_b64) {
                dead.iter_mut().for_each(|d| *d = false);
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
