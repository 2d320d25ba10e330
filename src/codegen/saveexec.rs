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
//! The same holds without a save: a loop latch computes the lanes that go
//! on, `t = exec & ~c` (or `exec & c`), and the continue block it alone
//! enters sets `exec = t`. When `t` has no other reader and nothing after
//! it in the latch changes EXEC, the continue block narrows EXEC itself,
//! `exec &= ~c` (`s_andn2_b64 exec, exec, c`): one instruction and no mask
//! register, where there were two.
//!
//! Cost: one sweep over the blocks.

use regalloc2 as ra;

use super::vcode::{ExecOp, MInst, MKind, MaskSel, VCode};

/// Fuses save-and-narrow pairs and mask-then-set pairs; returns how many.
pub fn run(vcode: &mut VCode) -> usize {
    let uses = vcode.use_counts();
    let mut fused = 0;
    for h in 0..vcode.blocks.len() {
        fused += usize::from(narrow_in_place(vcode, h, &uses));
    }
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

/// `exec = t` at the head of block `h`, with `t = exec & c` or
/// `exec & ~c` made in its one predecessor after the last EXEC change there
/// and read nowhere else, becomes `exec &= c` or `exec &= ~c`.
fn narrow_in_place(vcode: &mut VCode, h: usize, uses: &[u32]) -> bool {
    let block = &vcode.blocks[h];
    let [p] = block.preds[..] else { return false };
    let head = block.insts.start;
    if block.insts.is_empty() || !matches!(vcode.insts[head].kind, MKind::Exec(ExecOp::Set)) {
        return false;
    }
    let t = vcode.insts[head].ops[0].vreg();
    if uses[t.vreg()] != 1 {
        return false;
    }
    let pred = &vcode.blocks[p.index()];
    if pred.succs.len() != 1 || pred.succ_args.iter().flatten().any(|v| *v == t) {
        return false;
    }
    let end = pred.insts.end - 1;
    let Some(k) = (pred.insts.start..end).rev().find(|&i| vcode.insts[i].ops.first().is_some_and(|o| o.vreg() == t && o.kind() == ra::OperandKind::Def)) else { return false };
    let op = match vcode.insts[k].kind {
        MKind::MaskAdd { first: true, sel: MaskSel::And } => ExecOp::AndSelf,
        MKind::MaskAdd { first: true, sel: MaskSel::AndNot } => ExecOp::AndNotSelf,
        _ => return false,
    };
    if (k + 1..end).any(|i| vcode.insts[i].changes_exec()) {
        return false;
    }
    let c = *vcode.insts[k].ops.last().unwrap();
    vcode.insts[head] = MInst { kind: MKind::Exec(op), ops: vec![c] };
    vcode.insts[k] = MInst::nothing();
    true
}
