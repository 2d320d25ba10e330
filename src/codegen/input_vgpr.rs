//! input_vgpr: after allocation, in a kernel without calls, the register
//! regalloc2 gave the work-item IDs is split where it is first written
//! again. The hardware puts the IDs in v0, so placement keeps that register
//! at v0 for the whole kernel; but the IDs are read once or twice at the
//! start (`v_and_b32 v0, 0x3ff, v0`), and regalloc2 reuses the register for
//! whatever comes next. Pinned, that later value can never be half of an
//! aligned pair above v0, and the pair is copied into a window at every use
//! (a 64-bit address whose high half sat in v0: 6 copies and 3 VGPRs in
//! cf_if_divergent_in_uniform). After the split, what the register holds
//! from its first write on lives in a register no instruction names yet,
//! which placement treats like any other (and may put on v0 again, since
//! nothing in it overlaps the IDs' short life: `Placement::new`).
//!
//! Valid because the entry block runs first and once (nothing branches to
//! it): every read of the register after the write, in the entry block or
//! any other, reads a value written at or after it.

use super::vcode::{Layout, MKind, VCode};
use regalloc2 as ra;

/// Splits the input VGPR's register; returns whether it did.
pub fn run(vcode: &VCode, out: &mut ra::Output) -> bool {
    if vcode.layout != Layout::Dense || !vcode.entry_runs_once() {
        return false;
    }
    // The one fixed VGPR: the IDs' register, defined by the entry.
    let mut input = None;
    for (index, m) in vcode.insts.iter().enumerate() {
        for op in &m.ops {
            if let ra::OperandConstraint::FixedReg(p) = op.constraint() {
                if p.class() != ra::RegClass::Float {
                    continue;
                }
                let in_entry = matches!(m.kind, MKind::Entry) && vcode.blocks[0].insts.contains(&index);
                if !in_entry || input.is_some_and(|(q, _)| q != p) {
                    return false;
                }
                input = Some((p, index));
            }
        }
    }
    let Some((input, entry)) = input else { return false };
    let reg = ra::Allocation::reg(input);
    // A register nothing names, for what the input's register holds later.
    let mut named = [false; 64];
    let mut note = |a: &ra::Allocation| {
        if let Some(p) = a.as_reg().filter(|p| p.class() == ra::RegClass::Float) {
            named[p.hw_enc()] = true;
        }
    };
    out.allocs.iter().for_each(&mut note);
    out.edits.iter().for_each(|(_, ra::Edit::Move { from, to })| {
        note(from);
        note(to);
    });
    let Some(spare) = (0..64).find(|&r| !named[r]) else { return false };
    let spare = ra::Allocation::reg(ra::PReg::new(spare, ra::RegClass::Float));

    // The first write after the entry's: an instruction's result (not tied
    // to an operand) in the entry block, with no move into the register
    // before it.
    let first_edit_into = out.edits.iter().find(|(_, ra::Edit::Move { to, .. })| *to == reg).map(|(point, _)| *point);
    let mut boundary = None;
    for index in entry + 1..vcode.blocks[0].insts.end {
        let ops = &vcode.insts[index].ops;
        let allocs = out.inst_allocs(ra::Inst::new(index));
        let writes = ops.iter().zip(allocs).any(|(op, a)| op.kind() == ra::OperandKind::Def && *a == reg);
        if writes {
            boundary = Some(index);
            break;
        }
    }
    let Some(boundary) = boundary else { return false };
    if first_edit_into.is_some_and(|p| p < ra::ProgPoint::after(ra::Inst::new(boundary))) {
        return false;
    }
    if vcode.insts[boundary].ops.iter().any(|op| matches!(op.constraint(), ra::OperandConstraint::Reuse(_))) {
        return false;
    }

    // Rename from the write on.
    for index in boundary..vcode.insts.len() {
        let start = out.inst_alloc_offsets[index] as usize;
        let ops = &vcode.insts[index].ops;
        for (k, op) in ops.iter().enumerate() {
            let a = &mut out.allocs[start + k];
            if *a == reg && (index > boundary || op.kind() == ra::OperandKind::Def) {
                *a = spare;
            }
        }
    }
    let after = ra::ProgPoint::after(ra::Inst::new(boundary));
    for (point, ra::Edit::Move { from, to }) in &mut out.edits {
        if *point >= after {
            for a in [from, to] {
                if *a == reg {
                    *a = spare;
                }
            }
        }
    }
    for (_, from, _, a) in &mut out.debug_locations {
        if *from >= after && *a == reg {
            *a = spare;
        }
    }
    true
}
