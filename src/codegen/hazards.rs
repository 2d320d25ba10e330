//! Hazard avoidance: hardware situations where an instruction reads a result too
//! early and needs independent instructions (or `s_nop`) in between.
//!
//! Handled (gfx9 family: gfx90a, gfx942), each as "N wait states between the
//! writer and the reader", where every instruction counts one and `s_nop k`
//! counts k+1:
//! - a VALU instruction writes an SGPR (or VCC) that a vector memory instruction
//!   reads as an address or resource: 5;
//! - a VALU instruction writes an SGPR that `v_readlane`/`v_writelane` use as the
//!   lane select: 4;
//! - a VALU instruction writes VCC and `v_div_fmas` reads it: 4;
//! - gfx942: a transcendental VALU instruction (`v_rcp`, `v_sqrt`, ...) writes a
//!   VGPR that the next non-transcendental VALU instruction reads: 1;
//! - gfx942: a VALU instruction writes an SGPR (a `v_readlane` restoring a
//!   spilled SGPR, a compare's lane mask) that a VALU instruction reads: 2;
//! - gfx942: a VALU instruction writes a VGPR that `v_readfirstlane` or
//!   `v_readlane` reads: 1.
//! - a VMEM store of more than 8 bytes (`_dwordx3`, `_dwordx4`), then a VALU
//!   instruction that overwrites one of its data VGPRs: 1 (2 on gfx942).
//!
//! - gfx1100: a VALU instruction reads a VGPR that a transcendental instruction
//!   wrote within the last 5 VALU (or 1 transcendental) instructions: wait for
//!   the ALU results with `s_waitcnt_depctr va_vdst(0)`.
//!
//! The pass looks back within a block, then across block boundaries: a VALU
//! write near a block's end (edge moves such as SGPR spill restores
//! can put one right before a branch) is checked against the first instructions
//! of every successor, and padded before the branch when needed (gfx9); on
//! gfx1100 a block's first VALU reads are checked against the transcendental
//! writes that may reach its start from its predecessors (through blocks too
//! short to close the window), and wait for them.

use super::expand::{overlaps, Emitted, Expanded};
use crate::isa::{self, Generation, Gpu, Opcode, Target};

/// Register spans (first register, count) an instruction reads or writes:
/// a handful, kept inline (the pass asks for them at every pair it checks).
type Spans = smallvec::SmallVec<[(u16, u16); 4]>;

fn writes_sgpr_by_valu(inst: &isa::Inst, gpu: Gpu) -> Spans {
    if !inst.op.info().format(gpu).is_valu() {
        return Spans::new();
    }
    inst.defs
        .iter()
        .filter_map(|o| match o {
            isa::Operand::Reg(r) if r.base.is_scalar() => Some((r.base.0, u16::from(r.size))),
            _ => None,
        })
        .collect()
}

/// The registers an instruction reads: its uses, and the destination of an
/// accumulating instruction (`v_fmac_f32`, a VOPD `v_dual_fmac_f32` half).
fn reads(inst: &isa::Inst) -> Spans {
    let span = |o: &isa::Operand| match o {
        isa::Operand::Reg(r) => Some((r.base.0, u16::from(r.size))),
        _ => None,
    };
    let mut read: Spans = inst.uses.iter().filter_map(span).collect();
    let tied = |op: Opcode| op.info().flags.contains(isa::OpFlags::TIED);
    if tied(inst.op) {
        read.extend(inst.defs.first().and_then(span));
    }
    if inst.vopd_y.is_some_and(tied) {
        read.extend(inst.defs.get(1).and_then(span));
    }
    read
}


pub(super) fn is_trans(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::v_rcp_f32
            | Opcode::v_rcp_iflag_f32
            | Opcode::v_rsq_f32
            | Opcode::v_sqrt_f32
            | Opcode::v_exp_f32
            | Opcode::v_log_f32
            | Opcode::v_sin_f32
            | Opcode::v_cos_f32
            | Opcode::v_rcp_f64
            | Opcode::v_rsq_f64
            | Opcode::v_sqrt_f64
    )
}

/// Wait states `reader` needs after `writer` (0 = none).
fn required(writer: &isa::Inst, reader: &isa::Inst, target: Target) -> u32 {
    let gpu = target.gpu;
    // Every hazard below has a VALU writer or a wide store as the writer;
    // most pairs have neither, or a VALU writer of VGPRs only: answered
    // before the reader's registers are looked at.
    let wide_store = is_wide_vmem_store(writer, gpu);
    if !wide_store && !writer.op.info().format(gpu).is_valu() {
        return 0;
    }
    let sgpr_writes = writes_sgpr_by_valu(writer, gpu);
    let gfx942_vgpr_rules = gpu == Gpu::Gfx942 && (is_trans(writer.op) || matches!(reader.op, Opcode::v_readfirstlane_b32 | Opcode::v_readlane_b32));
    if sgpr_writes.is_empty() && !wide_store && !gfx942_vgpr_rules {
        return 0;
    }
    let reader_format = reader.op.info().format(gpu);
    let vmem = reader_format.is_flat() || reader_format == isa::opcodes::Format::Mubuf;
    let read = reads(reader);
    let hits = |w: &[(u16, u16)]| w.iter().any(|a| read.iter().any(|b| overlaps(*a, *b)));
    let mut need = 0;
    if vmem && hits(&sgpr_writes) {
        need = need.max(5);
    }
    if matches!(reader.op, Opcode::v_readlane_b32 | Opcode::v_writelane_b32) && hits(&sgpr_writes) {
        need = need.max(4);
    }
    if reader.op == Opcode::v_div_fmas_f32 || reader.op == Opcode::v_div_fmas_f64 {
        let vcc = (isa::PhysReg::VCC.0, 2);
        if sgpr_writes.iter().any(|w| overlaps(*w, vcc)) {
            need = need.max(4);
        }
    }
    // A VMEM store of more than 8 bytes, then a VALU instruction that
    // writes one of its data VGPRs (the store may still be reading them).
    if wide_store && reader_format.is_valu() {
        let data: Spans = writer
            .uses
            .iter()
            .filter_map(|o| match o {
                isa::Operand::Reg(r) if r.base.is_vgpr() && r.size > 2 => Some((r.base.0, u16::from(r.size))),
                _ => None,
            })
            .collect();
        if vgpr_defs(reader).iter().any(|d| data.iter().any(|w| overlaps(*d, *w))) {
            need = need.max(if gpu == Gpu::Gfx942 { 2 } else { 1 });
        }
    }
    if gpu == Gpu::Gfx942 && reader_format.is_valu() && hits(&sgpr_writes) {
        need = need.max(2);
    }
    if gpu == Gpu::Gfx942 && matches!(reader.op, Opcode::v_readfirstlane_b32 | Opcode::v_readlane_b32) && hits(&vgpr_defs(writer)) && writer.op.info().format(gpu).is_valu() {
        need = need.max(1);
    }
    if gpu == Gpu::Gfx942 && is_trans(writer.op) && !is_trans(reader.op) && reader_format.is_valu() {
        let vgpr_writes: Spans = writer
            .defs
            .iter()
            .filter_map(|o| match o {
                isa::Operand::Reg(r) if r.base.is_vgpr() => Some((r.base.0, u16::from(r.size))),
                _ => None,
            })
            .collect();
        if hits(&vgpr_writes) {
            need = need.max(1);
        }
    }
    need
}

/// A gfx9 VMEM store (FLAT/GLOBAL/SCRATCH or MUBUF): its data VGPRs of more
/// than 8 bytes may still be read after it issues.
fn is_wide_vmem_store(inst: &isa::Inst, gpu: Gpu) -> bool {
    let format = inst.op.info().format(gpu);
    gpu.generation() == Generation::Gfx9
        && (format.is_flat() || format == isa::opcodes::Format::Mubuf)
        && inst.op.info().flags.contains(isa::opcodes::OpFlags::STORE)
        && inst.uses.iter().any(|o| matches!(o, isa::Operand::Reg(r) if r.base.is_vgpr() && r.size > 2))
}

fn wait_states(e: &Emitted) -> u32 {
    if e.inst.op == Opcode::s_nop {
        u32::from(e.inst.imm) + 1
    } else {
        1
    }
}

/// `s_waitcnt_depctr` with va_vdst = 0 and every other counter at its maximum:
/// wait until all outstanding VALU results are written.
const DEPCTR_VA_VDST_0: u16 = 0x0fff;

fn vgpr_defs(inst: &isa::Inst) -> Spans {
    inst.defs
        .iter()
        .filter_map(|o| match o {
            isa::Operand::Reg(r) if r.base.is_vgpr() => Some((r.base.0, u16::from(r.size))),
            _ => None,
        })
        .collect()
}

/// gfx11: a VALU read of a transcendental result too soon waits for it,
/// within a block and across block boundaries: a block whose first VALU
/// instructions may follow a transcendental write at the end of a
/// predecessor (a branch target or the block it falls through from, and
/// through blocks too short to close the window) checks its reads against
/// those writes too.
fn avoid_trans_use_hazards(code: &mut Expanded, gpu: Gpu) {
    // The window behind a point: VGPRs written by a transcendental within
    // the last 5 VALU / 1 transcendental instructions, and whether the
    // window closed (a depctr wait, or enough instructions) inside `insts`.
    let window = |insts: &[Emitted]| -> (Spans, bool) {
        let (mut valu, mut trans) = (0, 0);
        let mut written = Spans::new();
        for prev in insts.iter().rev() {
            if prev.inst.op == Opcode::s_waitcnt_depctr {
                return (written, true);
            }
            if !prev.inst.op.info().format(gpu).is_valu() {
                continue;
            }
            if is_trans(prev.inst.op) {
                written.extend(vgpr_defs(&prev.inst));
            }
            valu += 1;
            trans += usize::from(is_trans(prev.inst.op));
            if valu >= 5 || trans >= 1 {
                return (written, true);
            }
        }
        (written, false)
    };
    let successors = successors(code);
    // What may reach each block's start, to a fixed point (a block that
    // does not close the window passes on what reaches it).
    let tails: Vec<(Spans, bool)> = code.blocks.iter().map(|(_, _, insts)| window(insts)).collect();
    let mut incoming: Vec<Spans> = vec![Spans::new(); code.blocks.len()];
    let mut changed = true;
    while changed {
        changed = false;
        for p in 0..code.blocks.len() {
            let mut out = tails[p].0.clone();
            if !tails[p].1 {
                out.extend(incoming[p].iter().copied());
            }
            for &s in &successors[p] {
                for &w in &out {
                    if !incoming[s].contains(&w) {
                        incoming[s].push(w);
                        changed = true;
                    }
                }
            }
        }
    }
    for (p, (_, _, block)) in code.blocks.iter_mut().enumerate() {
        let mut out: Vec<Emitted> = Vec::with_capacity(block.len());
        for e in block.drain(..) {
            let format = e.inst.op.info().format(gpu);
            if format.is_valu() {
                let read = reads(&e.inst);
                let (written, closed) = window(&out);
                let from_before = if closed { &[][..] } else { &incoming[p][..] };
                let hazard = written.iter().chain(from_before).any(|w| read.iter().any(|r| overlaps(*w, *r)));
                if hazard {
                    out.push(Emitted { inst: isa::Inst::sopp(Opcode::s_waitcnt_depctr, DEPCTR_VA_VDST_0), target: None, symbol: None, cfi: Vec::new() });
                }
            }
            out.push(e);
        }
        *block = out;
    }
}

/// Each block's successors, as positions in `code.blocks`: its branch
/// targets and, unless it ends in a jump, a return or `s_endpgm`, the next
/// block.
fn successors(code: &Expanded) -> Vec<Vec<usize>> {
    use hashbrown::HashMap;
    let position: HashMap<usize, usize> = code.blocks.iter().enumerate().map(|(p, (b, _, _))| (*b, p)).collect();
    code.blocks
        .iter()
        .enumerate()
        .map(|(p, (_, _, insts))| {
            let mut next: Vec<usize> = insts.iter().filter_map(|e| e.target).filter_map(|t| position.get(&t).copied()).collect();
            let jumps_away = insts.last().is_some_and(|e| matches!(e.inst.op, Opcode::s_branch | Opcode::s_endpgm | Opcode::s_setpc_b64));
            if !jumps_away && p + 1 < code.blocks.len() {
                next.push(p + 1);
            }
            next
        })
        .collect()
}

/// Across blocks (gfx9): a block whose last instructions include a VALU write
/// gets `s_nop`s before its branch when a successor's first
/// instructions would read that SGPR too early. Successors are the branch
/// targets and, unless the block ends in an unconditional jump, the next block.
fn pad_block_ends(code: &mut Expanded, target: Target) {
    let successors = successors(code);
    let mut pads: Vec<(usize, usize, u32)> = Vec::new();
    for (p, (_, _, insts)) in code.blocks.iter().enumerate() {
        let tail = insts.iter().rposition(|e| e.target.is_none() && e.inst.op != Opcode::s_endpgm).map_or(0, |i| i + 1);
        let branch_states = (insts.len() - tail) as u32;
        // The last VALU writes of SGPRs and their distance to the block's end.
        let mut writers = Vec::new();
        let mut distance = branch_states;
        for e in insts[..tail].iter().rev() {
            // Any VALU result (SGPRs, and on gfx942 VGPRs a successor's
            // v_readlane or VALU reads: spill code lands on edges), and a
            // wide VMEM store whose data a successor's VALU may overwrite.
            if e.inst.op.info().format(target.gpu).is_valu() || is_wide_vmem_store(&e.inst, target.gpu) {
                writers.push((&e.inst, distance));
            }
            distance += wait_states(e);
            if distance >= 5 {
                break;
            }
        }
        if writers.is_empty() {
            continue;
        }
        let mut need = 0u32;
        for &s in &successors[p] {
            let mut seen = 0u32;
            for reader in &code.blocks[s].2 {
                for &(w, d) in &writers {
                    let r = required(w, &reader.inst, target);
                    need = need.max(r.saturating_sub(d + seen));
                }
                seen += wait_states(reader);
                if seen >= 5 {
                    break;
                }
            }
        }
        if need > 0 {
            pads.push((p, tail, need));
        }
    }
    for (p, tail, need) in pads {
        code.blocks[p].2.insert(tail, Emitted { inst: isa::Inst::sopp(Opcode::s_nop, (need - 1) as u16), target: None, symbol: None, cfi: Vec::new() });
    }
}

/// Inserts `s_nop`s (gfx9) or dependency waits (gfx11) where an instruction would
/// read a result too early.
pub fn avoid_hazards(code: &mut Expanded, target: Target) {
    if target.gpu.generation() == Generation::Gfx11 {
        avoid_trans_use_hazards(code, target.gpu);
        return;
    }
    for (_, _, block) in &mut code.blocks {
        let mut out: Vec<Emitted> = Vec::with_capacity(block.len());
        for e in block.drain(..) {
            // Look back over the previous instructions, counting wait states.
            let mut need = 0u32;
            let mut distance = 0u32;
            for prev in out.iter().rev() {
                let r = required(&prev.inst, &e.inst, target);
                if r > distance {
                    need = need.max(r - distance);
                }
                distance += wait_states(prev);
                if distance >= 5 {
                    break;
                }
            }
            if need > 0 {
                out.push(Emitted { inst: isa::Inst::sopp(Opcode::s_nop, (need - 1) as u16), target: None, symbol: None, cfi: Vec::new() });
            }
            out.push(e);
        }
        *block = out;
    }
    pad_block_ends(code, target);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::{Operand, Reg, WaveSize};

    fn emitted(inst: isa::Inst) -> Emitted {
        Emitted { inst, target: None, symbol: None, cfi: Vec::new() }
    }

    /// `first` ends block 0, `second` starts block 1 (which then ends the
    /// program); the hazard pass runs on them and returns block 0.
    fn across_blocks(first: isa::Inst, second: isa::Inst, gpu: Gpu) -> Vec<(Opcode, u16)> {
        let mut expanded = Expanded {
            windows: None,
            call_vgpr_reads: 0,
            blocks: vec![(0, "a".into(), vec![emitted(first)]), (1, "b".into(), vec![emitted(second), emitted(isa::Inst::sopp(Opcode::s_endpgm, 0))])],
            vgprs: 32,
            agprs: 0,
            spills: Default::default(),
            sgprs: 32,
            uses_vcc: false,
            scratch_bytes: 0,
            frame_bytes: 0,
        };
        avoid_hazards(&mut expanded, Target { gpu, wave: WaveSize::W64 });
        expanded.blocks[0].2.iter().map(|e| (e.inst.op, e.inst.imm)).collect()
    }

    /// An SGPR spill's `v_writelane` ends one block and the reload's
    /// `v_readlane` of the same VGPR starts the next (regalloc2 edge moves):
    /// gfx942 needs a wait state between them, gfx90a none (rocRoller and
    /// LLVM list the hazard for gfx94x only).
    #[test]
    fn vgpr_write_then_readlane_across_a_block_boundary() {
        let write = isa::Inst::new(Opcode::v_writelane_b32, vec![Operand::Reg(Reg::v(10, 1))], vec![Operand::Reg(Reg::s(25, 1)), Operand::imm32(1)]);
        let read = isa::Inst::new(Opcode::v_readlane_b32, vec![Operand::Reg(Reg::s(24, 1))], vec![Operand::Reg(Reg::v(10, 1)), Operand::imm32(0)]);
        assert_eq!(across_blocks(write.clone(), read.clone(), Gpu::Gfx942), [(Opcode::v_writelane_b32, 0), (Opcode::s_nop, 0)]);
        assert_eq!(across_blocks(write, read, Gpu::Gfx90a), [(Opcode::v_writelane_b32, 0)]);
    }

    /// A wide store ends one block (the then-side of an if) and the join's
    /// first instruction overwrites one of its data VGPRs: gfx942 needs two
    /// wait states there, gfx90a one (found by cfg_fuzz, seed
    /// 0x8d5559e1bfcae908, once a join's value was defined in place).
    #[test]
    fn wide_store_then_valu_overwrite_across_a_block_boundary() {
        let store = isa::Inst::new(Opcode::global_store_dwordx4, vec![], vec![Operand::Reg(Reg::v(26, 2)), Operand::Reg(Reg::v(6, 4))]);
        let add = isa::Inst::new(Opcode::v_add_u32, vec![Operand::Reg(Reg::v(6, 1))], vec![Operand::imm32(0x8f), Operand::Reg(Reg::v(3, 1))]);
        assert_eq!(across_blocks(store.clone(), add.clone(), Gpu::Gfx942), [(Opcode::global_store_dwordx4, 0), (Opcode::s_nop, 1)]);
        assert_eq!(across_blocks(store, add, Gpu::Gfx90a), [(Opcode::global_store_dwordx4, 0), (Opcode::s_nop, 0)]);
    }
}
