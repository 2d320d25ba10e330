//! machine_dce: removes selected instructions whose results nothing reads.
//!
//! Selection lowers every MIR instruction where it stands, before it knows
//! how its result will be used; when a user then folds the computation into
//! its own instruction (a scaled index into a `v_mad_*`, an address into a
//! memory instruction's offset field), the first lowering is left without
//! readers. This pass deletes such instructions before allocation, repeatedly
//! (a deleted instruction may leave its operands' producers unread), in one
//! backward sweep per round.
//!
//! Only instructions without effects are candidates: register copies, VALU
//! instructions (not `v_cmpx`, which writes EXEC, nor `v_writelane`, which
//! merges into its destination) and SALU ones (those that set SCC only when
//! the next instruction does not read it: a carry or a select consumes the
//! SCC of the instruction right before it), all of whose outputs are virtual registers with no fixed placement,
//! loads from private memory (a by-reference argument's field never read)
//! and scalar loads (a kernel argument never read).

use super::vcode::{MInst, MKind, Slot, VCode};
use crate::isa::{Gpu, Opcode};
use crate::isa::opcodes::{Format, OpFlags};
use regalloc2 as ra;

fn reads_scc(m: &MInst) -> bool {
    let scc = |inst: &crate::isa::Inst| inst.op.info().flags.contains(OpFlags::SCC_USE);
    match &m.kind {
        MKind::Real { inst, .. } => scc(inst),
        MKind::Seq(parts) => parts.first().is_some_and(|(inst, _)| scc(inst)),
        _ => false,
    }
}

/// `scc_read_next`: the next instruction with code reads SCC (a carry or a
/// select right after a scalar instruction that sets it).
fn removable(m: &MInst, gpu: Gpu, scc_read_next: bool) -> bool {
    match &m.kind {
        MKind::Copy => true,
        // A load from private memory has no effect but its result.
        MKind::Private { store: false, .. } => true,
        MKind::Real { inst, fills } => {
            // Every hardware output must be one of the instruction's virtual
            // registers (no fixed register written behind the allocator).
            let filled = fills.iter().filter(|(s, _)| matches!(s, Slot::Def(_))).count();
            if filled != inst.defs.len() {
                return false;
            }
            let op = inst.op;
            let name = op.info().name;
            let info = op.info();
            let salu = matches!(info.format(gpu), Format::Sop1 | Format::Sop2 | Format::Sopk);
            let salu_pure = salu && (!info.flags.contains(OpFlags::SCC_DEF) || !scc_read_next);
            // Scalar loads (kernel arguments, the dispatch packet, constant
            // memory) change nothing but their result: an argument the
            // kernel never reads is loaded by selection all the same.
            let scalar_load = info.format(gpu) == Format::Smem && (name.starts_with("s_load_") || name.starts_with("s_buffer_load_"));
            salu_pure || scalar_load || (op.info().format(gpu).is_valu() && !name.starts_with("v_cmpx") && op != Opcode::v_writelane_b32)
        }
        _ => false,
    }
}

/// Deletes unread pure instructions; returns how many.
pub fn run(vcode: &mut VCode, gpu: Gpu) -> usize {
    let mut uses = vcode.use_counts();
    let mut removed = 0;
    loop {
        let mut changed = false;
        // SCC passes only between neighbours (regalloc2's moves do not write
        // it): whether the next instruction with code after `i` reads it.
        let mut scc_read_next = false;
        for i in (0..vcode.insts.len()).rev() {
            let m = &vcode.insts[i];
            let next = scc_read_next;
            if !m.is_nothing() {
                scc_read_next = reads_scc(m);
            }
            let mut defs = m.ops.iter().filter(|o| o.kind() == ra::OperandKind::Def).peekable();
            if defs.peek().is_none() || !removable(m, gpu, next) {
                continue;
            }
            let dead = m.ops.iter().filter(|o| o.kind() == ra::OperandKind::Def).all(|o| uses[o.vreg().vreg()] == 0 && !matches!(o.constraint(), ra::OperandConstraint::FixedReg(_)));
            if !dead {
                continue;
            }
            for op in &m.ops {
                if op.kind() == ra::OperandKind::Use {
                    uses[op.vreg().vreg()] -= 1;
                }
            }
            vcode.insts[i] = MInst::nothing();
            scc_read_next = next;
            removed += 1;
            changed = true;
        }
        if !changed {
            return removed;
        }
    }
}
