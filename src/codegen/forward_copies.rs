//! forward_copies: within one block (after expansion, on hardware
//! registers), an instruction that reads a VGPR which a `v_mov_b32` copied
//! from another VGPR reads the original instead, while neither register
//! nor EXEC has been written since. Copies chain through the pair windows
//! (a result copied out of its window, then into the next instruction's
//! window), so a later copy often reads the first register directly and
//! the copies in between are left unread; dead_moves, which runs next,
//! deletes those. A copy of a register onto itself, which forwarding can
//! produce, is deleted here.
//!
//! Why this is sound: a `v_mov_b32` writes the lanes EXEC has on; a later
//! instruction under the same EXEC reads only those lanes, where the two
//! registers agree until either is written. Instructions that read other
//! lanes (`v_readlane`, `v_writelane`, DPP, permutes, swizzles) and
//! instructions whose result must share a register with a source (tied
//! forms; non-VALU instructions whose result overlaps a source) are left
//! as they are, and only single VGPRs are rewritten: tuples keep their
//! registers, whose contiguity and alignment placement chose. A source is
//! never rewritten onto a register its instruction writes: gfx11's 64-bit
//! multiply-adds may not read a register of their result. Nor onto a pair
//! window's register where window_rename will move the windows: each
//! window life must end with its copies out.

use super::dead_moves::writes_exec;
use super::expand::{overlaps, reg_span, Expanded};
use crate::isa::{self, Opcode};

/// Whether `inst` may read a different VGPR in place of one of its
/// single-VGPR sources: it reads only the active lanes of its sources, and
/// no source must share a register with its result. A VALU instruction
/// whose result merely happens to overlap a source (`v_alignbit_b32 v6,
/// v2, v6, 1`) reads before it writes and may be rewritten; tied forms
/// (`v_fmac`, `v_mac`, the `fmaak`/`fmamk` forms, `v_swap`), partial
/// writes and non-VALU instructions with such an overlap keep their
/// registers.
pub(super) fn rewritable(inst: &isa::Inst) -> bool {
    let name = inst.op.info().name;
    let cross_lane = ["readlane", "writelane", "readfirstlane", "dpp", "sdwa", "permute", "permlane", "swizzle", "accvgpr", "movrel"].iter().any(|p| name.contains(p));
    let overlapping = inst.uses.iter().filter_map(reg_span).any(|u| inst.defs.iter().filter_map(reg_span).any(|d| overlaps(u, d)));
    // Also what writes part of its result (the rest is the old value: a
    // gfx11 VOP3 `op_sel` destination half, d16 loads among the non-VALU).
    let partial = inst.mods.op_sel != 0 && !name.starts_with("v_pk_");
    let must_share = inst.op.info().flags.contains(isa::opcodes::OpFlags::TIED) || ["mac", "swap", "fmaak", "fmamk", "d16"].iter().any(|p| name.contains(p)) || partial || !name.starts_with("v_");
    !cross_lane && !(overlapping && must_share) && inst.vopd_y.is_none()
}

/// A plain VGPR-to-VGPR `v_mov_b32`: (destination, source), as PhysReg
/// indices.
pub(super) fn vgpr_copy(inst: &isa::Inst) -> Option<(u16, u16)> {
    if inst.op != Opcode::v_mov_b32 || inst.mods != isa::Mods::default() || inst.vopd_y.is_some() {
        return None;
    }
    match (inst.defs.as_slice(), inst.uses.as_slice()) {
        ([isa::Operand::Reg(d)], [isa::Operand::Reg(s)]) if d.base.is_vgpr() && s.base.is_vgpr() && d.size == 1 && s.size == 1 => Some((d.base.0, s.base.0)),
        _ => None,
    }
}

/// Rewrites reads through copies and deletes self-copies; returns how many
/// sources were rewritten.
pub fn run(code: &mut Expanded) -> usize {
    let mut rewritten = 0;
    // Window registers (where window_rename will move each window's short
    // lives) are never made the source of a later read: a life must end
    // with its copies out, or an instruction ending one life and starting
    // another would be renamed twice.
    let windows = code.windows.as_ref().map(|w| isa::PhysReg::vgpr(w.base).0);
    let forwardable = |original: u16| windows.is_none_or(|w| original < w);
    for (_, _, block) in &mut code.blocks {
        // (copy, original): the copy holds the original's value in the
        // active lanes.
        let mut copies: Vec<(u16, u16)> = Vec::new();
        let mut keep = vec![true; block.len()];
        for (k, e) in block.iter_mut().enumerate() {
            if !copies.is_empty() && rewritable(&e.inst) {
                // Never onto a register the instruction writes: a source
                // may not overlap the result of some (gfx11's 64-bit
                // multiply-adds), so no rewrite makes one. But a copy back
                // to where its source was copied from (`v3 = v6 .. v6 =
                // v3`, a value copied out of a pair and into it again)
                // becomes a copy onto itself, which goes below.
                let defs: Vec<(u16, u16)> = if vgpr_copy(&e.inst).is_some() { Vec::new() } else { e.inst.defs.iter().filter_map(reg_span).collect() };
                for u in &mut e.inst.uses {
                    if let isa::Operand::Reg(r) = u {
                        if r.base.is_vgpr() && r.size == 1 {
                            if let Some(&(_, original)) = copies.iter().find(|(c, _)| *c == r.base.0) {
                                if defs.iter().all(|&d| !overlaps(d, (original, 1))) {
                                    r.base = isa::PhysReg(original);
                                    rewritten += 1;
                                }
                            }
                        }
                    }
                }
            }
            if vgpr_copy(&e.inst).is_some_and(|(d, s)| d == s) && e.cfi.is_empty() {
                keep[k] = false;
                continue;
            }
            // EXEC changes which lanes agree; calls and indirect moves
            // write registers no operand lists.
            if writes_exec(&e.inst) || e.symbol.is_some() || matches!(e.inst.op, Opcode::s_swappc_b64 | Opcode::s_setpc_b64) || e.inst.op.info().name.contains("movrel") {
                copies.clear();
            }
            for d in e.inst.defs.iter().filter_map(reg_span) {
                copies.retain(|&(c, o)| !overlaps(d, (c, 1)) && !overlaps(d, (o, 1)));
            }
            if let Some((d, s)) = vgpr_copy(&e.inst).filter(|&(d, s)| d != s && forwardable(s)) {
                copies.push((d, s));
            }
        }
        if keep.contains(&false) {
            super::expand::keep_marked(block, &keep);
        }
    }
    rewritten
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::expand::test_code::{function, inst, v};

    /// The block after the pass (ending the program) and the rewrites.
    fn after(block: Vec<super::super::expand::Emitted>) -> (Vec<isa::Inst>, usize) {
        let mut block = block;
        block.push(inst(Opcode::s_endpgm, vec![], vec![]));
        let mut code = function(vec![(0, "b".into(), block)], 0);
        let rewritten = run(&mut code);
        (code.blocks.remove(0).2.into_iter().map(|e| e.inst).collect(), rewritten)
    }

    #[test]
    fn a_result_that_happens_to_overlap_a_source_still_reads_the_originals() {
        // gfx11's multiply-add result copied out of its window, then read by
        // an instruction that writes one of the copies.
        let (code, rewritten) = after(vec![
            inst(Opcode::v_mov_b32, vec![v(6)], vec![v(8)]),
            inst(Opcode::v_mov_b32, vec![v(2)], vec![v(9)]),
            inst(Opcode::v_alignbit_b32, vec![v(6)], vec![v(2), v(6), isa::Operand::imm32(1)]),
        ]);
        assert_eq!(rewritten, 2);
        assert_eq!(code[2].uses[..2], [v(9), v(8)]);
    }

    #[test]
    fn tied_and_partial_writes_keep_their_registers() {
        // v_fmac_f32 accumulates into its result; a d16 load keeps the
        // other half of its result register.
        let (code, rewritten) = after(vec![
            inst(Opcode::v_mov_b32, vec![v(6)], vec![v(8)]),
            inst(Opcode::v_fmac_f32, vec![v(6)], vec![v(1), v(2), v(6)]),
        ]);
        assert_eq!((rewritten, code[1].uses[2]), (0, v(6)));
        let mut high = inst(Opcode::v_add_f32, vec![v(6)], vec![v(6), v(1)]);
        high.inst.mods.op_sel = 0b1000;
        let (code, rewritten) = after(vec![inst(Opcode::v_mov_b32, vec![v(6)], vec![v(8)]), high]);
        assert_eq!((rewritten, code[1].uses[0]), (0, v(6)));
        let (_, rewritten) = after(vec![
            inst(Opcode::v_mov_b32, vec![v(6)], vec![v(8)]),
            inst(Opcode::global_load_short_d16_hi, vec![v(6)], vec![isa::Operand::Reg(isa::Reg::v(0, 2)), v(6)]),
        ]);
        assert_eq!(rewritten, 0);
    }

    /// A pair copied out to singles and back into the pair: the copies back
    /// read the pair itself, so they copy registers onto themselves and go
    /// (the copies out, unread now, are dead_moves').
    #[test]
    fn copies_back_to_where_a_value_came_from_go() {
        let pair = |n| isa::Operand::Reg(isa::Reg::v(n, 2));
        let (code, rewritten) = after(vec![
            inst(Opcode::v_mov_b32, vec![v(3)], vec![v(6)]),
            inst(Opcode::v_mov_b32, vec![v(4)], vec![v(7)]),
            inst(Opcode::v_mov_b32, vec![v(6)], vec![v(3)]),
            inst(Opcode::v_mov_b32, vec![v(7)], vec![v(4)]),
            inst(Opcode::v_add_f64, vec![pair(2)], vec![pair(0), pair(6)]),
        ]);
        assert_eq!(rewritten, 2);
        assert_eq!(code.iter().map(|i| i.op).collect::<Vec<_>>(), [Opcode::v_mov_b32, Opcode::v_mov_b32, Opcode::v_add_f64, Opcode::s_endpgm]);
        assert_eq!(code[2].uses, [pair(0), pair(6)]);
    }
}
