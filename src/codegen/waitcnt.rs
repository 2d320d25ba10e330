//! s_waitcnt insertion: a register written by a memory instruction may only be
//! read (or overwritten) after the counter that instruction increments has
//! dropped far enough.
//!
//! Within a block the pass tracks outstanding loads per counter in issue order and
//! waits for exactly as many as needed before the first instruction that touches
//! a pending register (vmcnt and LDS-only lgkmcnt complete in order; scalar loads
//! may complete out of order, so any pending one forces lgkmcnt(0)). Barriers wait
//! for everything outstanding (other waves may read what this one wrote); a
//! wait selection placed (a fence's) is dropped when nothing it waits for is
//! outstanding. At the end of a
//! block every pending load is waited for, so blocks start clean: simple and
//! correct, at the price of a few waits that cross-block tracking could avoid.

use super::expand::{overlaps, reg_span as span, Emitted, Expanded};
use crate::isa::{self, opcodes::Counters, waitcnt::Waitcnt, Generation, Opcode, Target};


#[derive(Clone, Default)]
struct Pending {
    /// Outstanding vmcnt operations: registers they write, and whether FLAT
    /// (on gfx9 not in order with the other vector memory accesses).
    vm: Vec<(Vec<(u16, u16)>, bool)>,
    /// Outstanding lgkmcnt operations: registers they write, and whether
    /// they may complete out of order (SMEM; FLAT on gfx9).
    lgkm: Vec<(Vec<(u16, u16)>, bool)>,
    /// gfx11: outstanding stores (vscnt).
    vs: usize,
}

impl Pending {
    /// Loads (or LDS operations) still outstanding.
    fn loads_pending(&self) -> bool {
        !(self.vm.is_empty() && self.lgkm.is_empty())
    }

    /// A wait for everything outstanding (only the counters that have any).
    fn all(&self) -> Waitcnt {
        Waitcnt { vm: (!self.vm.is_empty()).then_some(0), exp: None, lgkm: (!self.lgkm.is_empty()).then_some(0) }
    }
}

fn waitcnt_inst(w: Waitcnt, gen: Generation) -> Emitted {
    Emitted { inst: isa::Inst::sopp(Opcode::s_waitcnt, w.encode(gen)), target: None, symbol: None, cfi: Vec::new() }
}

/// Inserts the waits into every block.
pub fn insert_waitcnts(code: &mut Expanded, target: Target) {
    let gen = target.gpu.generation();
    for (_, _, block) in &mut code.blocks {
        let mut out = Vec::with_capacity(block.len() + 4);
        let mut pending = Pending::default();
        let first_branch = block
            .iter()
            .position(|e| e.target.is_some() || matches!(e.inst.op, Opcode::s_endpgm | Opcode::s_setpc_b64))
            .unwrap_or(block.len());
        let ends_program = block.last().is_some_and(|e| e.inst.op == Opcode::s_endpgm);
        let block_len = block.len();
        for (index, e) in block.drain(..).enumerate() {
            if index == first_branch && e.inst.op != Opcode::s_endpgm && pending.loads_pending() {
                out.push(waitcnt_inst(pending.all(), gen));
                pending.vm.clear();
                pending.lgkm.clear();
            }
            // Waits selection already placed (fences, volatile accesses) count;
            // one that waits for nothing still outstanding is left out (this
            // block's tracking is complete: blocks start with nothing pending).
            if e.inst.op == Opcode::s_waitcnt {
                if let Some(w) = Waitcnt::decode(e.inst.imm, gen) {
                    let vm_done = w.vm.is_none_or(|v| pending.vm.len() <= usize::from(v));
                    let lgkm_done = w.lgkm.is_none_or(|l| pending.lgkm.len() <= usize::from(l));
                    if vm_done && lgkm_done && w.exp.is_none_or(|x| x == 7) {
                        continue;
                    }
                    if let Some(v) = w.vm {
                        let drop = pending.vm.len().saturating_sub(usize::from(v));
                        pending.vm.drain(..drop);
                    }
                    if let Some(l) = w.lgkm {
                        let drop = pending.lgkm.len().saturating_sub(usize::from(l));
                        pending.lgkm.drain(..drop);
                    }
                }
            }
            if e.inst.op == Opcode::s_waitcnt_vscnt && e.inst.imm == 0 {
                pending.vs = 0;
            }
            let touched: Vec<(u16, u16)> = e.inst.defs.iter().chain(&e.inst.uses).filter_map(span).collect();
            let mut need = Waitcnt::default();
            if matches!(e.inst.op, Opcode::s_barrier | Opcode::s_swappc_b64) {
                // Everything outstanding, loads and stores (other waves or the
                // callee may read what this one wrote).
                need = pending.all();
                if gen == Generation::Gfx11 && pending.vs > 0 {
                    let mut w = isa::Inst::new(Opcode::s_waitcnt_vscnt, vec![], vec![isa::Operand::Reg(isa::Reg::new(isa::PhysReg::null(gen).unwrap(), 1))]);
                    w.imm = 0;
                    out.push(Emitted { inst: w, target: None, symbol: None, cfi: Vec::new() });
                    pending.vs = 0;
                }
            } else {
                // A counter saturates at its largest value, so a wait for
                // that value waits for nothing (it encodes "no wait"): with
                // more operations outstanding than that, wait for one fewer.
                let (max_vm, _, max_lgkm) = isa::waitcnt::max(gen);
                if let Some(pos) = pending.vm.iter().rposition(|(regs, _)| regs.iter().any(|r| touched.iter().any(|t| overlaps(*r, *t)))) {
                    // gfx9 does not keep FLAT accesses in order with the
                    // others on vmcnt (gfx10 and later do; llc-22 likewise).
                    let any_flat = gen == Generation::Gfx9 && pending.vm.iter().any(|(_, f)| *f);
                    need.vm = Some(if any_flat { 0 } else { (pending.vm.len() - 1 - pos).min(usize::from(max_vm) - 1) as u8 });
                }
                if let Some(pos) = pending.lgkm.iter().rposition(|(regs, _)| regs.iter().any(|r| touched.iter().any(|t| overlaps(*r, *t)))) {
                    let any_scalar = pending.lgkm.iter().any(|(_, s)| *s);
                    need.lgkm = Some(if any_scalar { 0 } else { (pending.lgkm.len() - 1 - pos).min(usize::from(max_lgkm) - 1) as u8 });
                }
            }
            if need.vm.is_some() || need.lgkm.is_some() {
                out.push(waitcnt_inst(need, gen));
                if let Some(v) = need.vm {
                    let keep = v as usize;
                    let drop = pending.vm.len().saturating_sub(keep);
                    pending.vm.drain(..drop);
                }
                if let Some(l) = need.lgkm {
                    let keep = l as usize;
                    let drop = pending.lgkm.len().saturating_sub(keep);
                    pending.lgkm.drain(..drop);
                }
            }
            let counters = e.inst.counters(target.gpu);
            let written: Vec<(u16, u16)> = e.inst.defs.iter().filter_map(span).collect();
            // Scalar loads may complete out of order on lgkmcnt, and on gfx9
            // so may FLAT accesses (which count there in case they reach
            // LDS): a wait for anything sharing the counter with them is
            // lgkmcnt(0). gfx10 and later keep FLAT in order (llc-22 alike).
            let format = e.inst.op.info().format(target.gpu);
            let flat = format == isa::opcodes::Format::Flat;
            let scalar = format == isa::opcodes::Format::Smem || flat && gen == Generation::Gfx9;
            if counters.contains(Counters::VM) {
                pending.vm.push((written.clone(), flat));
            }
            if counters.contains(Counters::LGKM) {
                pending.lgkm.push((written.clone(), scalar));
            }
            if counters.contains(Counters::VS) {
                pending.vs += 1;
            }
            out.push(e);
        }
        // A block without a branch falls through (its jump to the next block was
        // left out): it must still hand nothing pending to its successor.
        let has_branch = first_branch < block_len;
        if !has_branch && !ends_program && pending.loads_pending() {
            out.push(waitcnt_inst(pending.all(), gen));
        }
        *block = out;
    }
}
