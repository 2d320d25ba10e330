//! skip_branches: drops the `s_cbranch_execz` over a short divergent side
//! that is safe to run with no lane active, after expansion.
//!
//! Control-flow lowering skips every divergent side when EXEC is zero
//! (lower_cf.rs). For a side of a few VALU instructions the branch costs more
//! than running them with EXEC zero, where they change nothing: a VALU
//! instruction writes its VGPRs only in active lanes. llc-22 drops such a
//! branch too (its pre-emit peephole keeps it for sides with memory
//! accesses, waits, lane reads or more than 12 instructions). Here the
//! side must be one block right after the branch, falling through (no
//! branch of its own) to the branch's target, with at most 12 instructions,
//! each a VALU instruction that writes VGPRs only (no SGPR or VCC result,
//! which would be written whatever EXEC is; not `v_readlane`,
//! `v_readfirstlane`, `v_writelane` or `v_cmpx`), or `s_nop`. That excludes
//! SALU instructions, whole-wave moves and spill code, which regalloc2 may
//! have placed in the side and which must not run on the skipped path.
//!
//! Cost: one sweep over the blocks.

use super::expand::Expanded;
use crate::isa::{self, Opcode, Target};

/// Longest side (instructions) whose branch is dropped, as llc-22's default.
const SKIP_THRESHOLD: usize = 12;

fn harmless_without_lanes(inst: &isa::Inst, target: Target) -> bool {
    if inst.op == Opcode::s_nop {
        return true;
    }
    let name = inst.op.info().name;
    let lane_op = name.starts_with("v_readlane") || name.starts_with("v_readfirstlane") || name.starts_with("v_writelane") || name.starts_with("v_cmpx");
    let writes_scalar = inst.defs.iter().any(|d| match d {
        isa::Operand::Reg(r) => !r.base.is_vgpr(),
        _ => true,
    });
    // VOPC's e32 form and carries write VCC without naming it.
    let implicit_vcc = name.starts_with("v_cmp") || matches!(inst.op, Opcode::v_add_co_u32 | Opcode::v_sub_co_u32 | Opcode::v_subrev_co_u32 | Opcode::v_addc_co_u32 | Opcode::v_subb_co_u32 | Opcode::v_subbrev_co_u32 | Opcode::v_div_scale_f32 | Opcode::v_div_scale_f64);
    inst.op.info().format(target.gpu).is_valu() && !lane_op && !writes_scalar && !implicit_vcc
}

/// Drops skip branches over short harmless sides; returns how many.
pub fn run(code: &mut Expanded, target: Target) -> usize {
    let destination = code.branch_destinations();
    let mut drop = Vec::new();
    for p in 0..code.blocks.len().saturating_sub(2) {
        let Some(last) = code.blocks[p].2.last() else { continue };
        let Some(skip) = last.target.filter(|_| last.inst.op == Opcode::s_cbranch_execz && last.cfi.is_empty()) else { continue };
        let side = &code.blocks[p + 1].2;
        let falls_into_target = destination[code.blocks[p + 2].0] == destination[skip];
        let short = !side.is_empty() && side.len() <= SKIP_THRESHOLD;
        if falls_into_target && short && side.iter().all(|e| e.target.is_none() && e.symbol.is_none() && harmless_without_lanes(&e.inst, target)) {
            drop.push(p);
        }
    }
    for &p in &drop {
        code.blocks[p].2.pop();
    }
    drop.len()
}
