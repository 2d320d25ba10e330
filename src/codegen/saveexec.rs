//! saveexec: a divergent branch's EXEC save and narrowing become one
//! `s_and_saveexec`, before allocation.
//!
//! Control-flow lowering (lower_cf.rs) saves EXEC into the join's lane mask
//! near the end of the block that branches (`m = exec`, a first `MaskAdd` of
//! the active lanes) and narrows EXEC at the start of the side's head block
//! (`exec &= c`, or at a loop's entry `exec = t` with `t = exec & c`
//! computed after the save). When the head is entered from that block alone, and what
//! follows the save there neither reads `m` nor changes EXEC (the else
//! side's mask, copies), the two are one instruction, `s_and_saveexec_b64 m, c`
//! (`_b32` in wave32): it writes the old EXEC to `m` and `EXEC & c` to EXEC,
//! as llc-22 lowers `SI_IF`. The save moves down to the head's start; regalloc2's moves
//! at the edge neither read `m` (it is not a block argument) nor touch EXEC.
//!
//! Cost: one sweep over the blocks.

use regalloc2 as ra;

use super::vcode::{ExecOp, MInst, MKind, MaskSel, VCode};

/// Fuses save-and-narrow pairs; returns how many.
pub fn run(vcode: &mut VCode) -> usize {
    let uses = vcode.use_counts();
    let mut fused = 0;
    for p in 0..vcode.blocks.len() {
        let block = &vcode.blocks[p];
        let [h] = block.succs[..] else { continue };
        let h = h.index();
        if vcode.blocks[h].preds.len() != 1 || block.insts.len() < 2 {
            continue;
        }
        // The save: in P, followed only by instructions that neither read
        // `m` nor change EXEC (the else side's mask, copies), then the jump.
        let end = block.insts.end - 1;
        if !matches!(vcode.insts[end].kind, MKind::Branch(_)) {
            continue;
        }
        let Some(save_at) = (block.insts.start..end).rev().find(|&i| matches!(vcode.insts[i].kind, MKind::MaskAdd { first: true, sel: MaskSel::Exec })) else { continue };
        let save = &vcode.insts[save_at];
        let m = save.ops[0].vreg();
        let read_later = (save_at + 1..=end).any(|i| (i != end && vcode.insts[i].changes_exec()) || vcode.insts[i].ops.iter().any(|o| o.vreg() == m));
        if read_later || block.succ_args.iter().flatten().any(|v| *v == m) {
            continue;
        }
        // The narrowing: H's first instruction, `exec &= c`, or `exec = t`
        // where `t = exec & c` was computed in P after the save and is read
        // nowhere else (a loop's entry).
        let head = vcode.blocks[h].insts.start;
        let (c, mask_at) = match vcode.insts[head].kind {
            MKind::Exec(ExecOp::AndSelf) => (vcode.insts[head].ops[0], None),
            MKind::Exec(ExecOp::Set) => {
                let t = vcode.insts[head].ops[0].vreg();
                let Some(k) = (save_at + 1..end).find(|&i| vcode.insts[i].ops.first().is_some_and(|o| o.vreg() == t && o.kind() == ra::OperandKind::Def)) else { continue };
                if !matches!(vcode.insts[k].kind, MKind::MaskAdd { first: true, sel: MaskSel::And }) || uses[t.vreg()] != 1 {
                    continue;
                }
                (*vcode.insts[k].ops.last().unwrap(), Some(k))
            }
            _ => continue,
        };
        if c.vreg() == m || !matches!(save.ops[0].constraint(), ra::OperandConstraint::Reg) {
            continue;
        }
        // Early: the instruction reads `c` after it has written `m`.
        let def = ra::Operand::new(m, ra::OperandConstraint::Reg, ra::OperandKind::Def, ra::OperandPos::Early);
        vcode.insts[head] = MInst { kind: MKind::Exec(ExecOp::SaveAndSelf), ops: vec![def, c] };
        for at in [Some(save_at), mask_at].into_iter().flatten() {
            vcode.insts[at] = MInst::nothing();
        }
        fused += 1;
    }
    fused
}
