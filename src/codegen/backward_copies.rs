//! backward_copies: within one block (after expansion, on hardware
//! registers), a move `D = S` whose source nothing reads afterwards makes
//! the instruction that computed S write D instead, and goes. Selection
//! builds values in registers of their own and copies them where they are
//! wanted (an SGPR pair assembled from two single SGPRs, a value copied
//! into a phi's register or out of a pair window); when the allocator gave
//! the two sides different registers the copy stays, and forward_copies
//! cannot remove it when the copy's destination is what is read later.
//!
//! Why this is sound: let I be the last instruction before the copy that
//! names S (it writes S fully, so it is S's definition here). Nothing
//! between I and the copy names D, so D holds, after the copy, what it
//! would hold had I written it: I writes the lanes the copy would (no EXEC
//! write between them), and D's other lanes keep what they held in both
//! cases. S is free after the copy (overwritten before any read under the
//! same EXEC, or read by nothing reachable), so its lanes I no longer
//! writes are never read. Nothing between I and the copy may call or
//! branch (a callee could write D), and I may not read D, so no rewrite
//! changes what an instruction reads.

use super::dead_moves::{writes_exec, writes_fully, Scan};
use super::expand::{overlaps, reg_span, Expanded};
use crate::isa::{self, Opcode, Target};

/// How far back the definition is looked for: copies sit close to the
/// instruction they copy from, and the search must stay linear.
const MOST_INSTRUCTIONS_BACK: usize = 32;

/// A plain register-to-register move of one VGPR, one SGPR or an SGPR pair:
/// (destination, source) spans, both in the same file.
fn plain_copy(inst: &isa::Inst) -> Option<((u16, u16), (u16, u16))> {
    if inst.mods != isa::Mods::default() || inst.vopd_y.is_some() || inst.e64 {
        return None;
    }
    let (d, s) = match (inst.defs.as_slice(), inst.uses.as_slice()) {
        ([isa::Operand::Reg(d)], [isa::Operand::Reg(s)]) => (d, s),
        _ => return None,
    };
    let plain_sgpr = |r: &isa::Reg| r.base.is_scalar() && r.base.0 + u16::from(r.size) <= 102;
    let same_file = match (inst.op, d.size, s.size) {
        (Opcode::v_mov_b32, 1, 1) => d.base.is_vgpr() && s.base.is_vgpr(),
        (Opcode::s_mov_b32, 1, 1) | (Opcode::s_mov_b64, 2, 2) => plain_sgpr(d) && plain_sgpr(s),
        _ => false,
    };
    same_file.then_some(((d.base.0, u16::from(d.size)), (s.base.0, u16::from(s.size))))
}

/// Whether nothing may move across `e`: EXEC writes (for vector copies),
/// calls, branches and instructions with relocations or frame rows.
fn barrier(e: &super::expand::Emitted, vector: bool) -> bool {
    e.target.is_some() || e.symbol.is_some() || !e.cfi.is_empty() || matches!(e.inst.op, Opcode::s_swappc_b64 | Opcode::s_setpc_b64) || e.inst.op.info().name.contains("movrel") || (vector && writes_exec(&e.inst))
}

/// Retargets definitions onto their copies' destinations; returns how many
/// copies went.
pub fn run(code: &mut Expanded, target: Target) -> usize {
    let mut removed = 0;
    let scan = Scan::new(code, target);
    for (index, (_, _, block)) in code.blocks.iter_mut().enumerate() {
        let mut point = scan.block_end(index, block);
        let mut keep = vec![true; block.len()];
        for c in (0..block.len()).rev() {
            if let Some((d, s)) = plain_copy(&block[c].inst).filter(|_| block[c].cfi.is_empty()) {
                let source_free = (s.0..s.0 + s.1).all(|r| point.free(usize::from(r)));
                if source_free && !overlaps(d, s) {
                    // The pair defined by one instruction, or (an SGPR
                    // pair assembled from two `s_mov_b32`s, a generic
                    // pointer to LDS) each half by one of its own.
                    let whole = definition(block, c, d, s, target).map(|i| vec![(i, d, s)]);
                    let halves = || {
                        let lo = definition(block, c, (d.0, 1), (s.0, 1), target)?;
                        let hi = definition(block, c, (d.0 + 1, 1), (s.0 + 1, 1), target)?;
                        Some(vec![(lo, (d.0, 1), (s.0, 1)), (hi, (d.0 + 1, 1), (s.0 + 1, 1))])
                    };
                    let by_halves = if whole.is_none() && d.1 == 2 && !isa::PhysReg(d.0).is_vgpr() { halves() } else { None };
                    if let Some(defs) = whole.or(by_halves) {
                        for (i, d, s) in defs {
                            for def in &mut block[i].inst.defs {
                                if let isa::Operand::Reg(r) = def {
                                    if (r.base.0, u16::from(r.size)) == s {
                                        r.base = isa::PhysReg(d.0);
                                    }
                                }
                            }
                        }
                        keep[c] = false;
                        removed += 1;
                        continue;
                    }
                }
            }
            scan.step_back(&mut point, &block[c]);
        }
        if removed > 0 {
            super::expand::keep_marked(block, &keep);
        }
    }
    removed
}

/// The instruction before the copy at `c` that defines its source `s` and
/// may write `d` instead, if any.
fn definition(block: &[super::expand::Emitted], c: usize, d: (u16, u16), s: (u16, u16), target: Target) -> Option<usize> {
    let vector = isa::PhysReg(d.0).is_vgpr();
    let names = |e: &super::expand::Emitted, span: (u16, u16)| e.inst.defs.iter().chain(&e.inst.uses).filter_map(reg_span).any(|r| overlaps(r, span));
    for i in (c.saturating_sub(MOST_INSTRUCTIONS_BACK)..c).rev() {
        let e = &block[i];
        if names(e, s) {
            let defines_exactly = e.inst.defs.iter().filter_map(reg_span).any(|r| r == s);
            let other_defs_apart = e.inst.defs.iter().filter_map(reg_span).filter(|&r| r != s).all(|r| !overlaps(r, s) && !overlaps(r, d));
            let reads_d = e.inst.uses.iter().filter_map(reg_span).any(|r| overlaps(r, d));
            let ok = defines_exactly
                && other_defs_apart
                && !reads_d
                && writes_fully(&e.inst, target)
                && !writes_exec(&e.inst)
                && !barrier(e, vector)
                && e.inst.vopd_y.is_none()
                && !e.inst.op.info().flags.contains(isa::opcodes::OpFlags::TIED)
                && !e.inst.op.info().name.contains("mac");
            return ok.then_some(i);
        }
        if names(e, d) || barrier(e, vector) {
            return None;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::expand::test_code::{function, inst, s, v};
    use crate::codegen::expand::Emitted;
    use crate::isa::{Gpu, Operand, Reg};

    fn end() -> Emitted {
        inst(Opcode::s_endpgm, vec![], vec![])
    }

    /// The block after the pass (one block ending the program) and how many
    /// copies went.
    fn after(block: Vec<Emitted>) -> (Vec<isa::Inst>, usize) {
        let mut code = function(vec![(0, "b".into(), block)], 0);
        let removed = run(&mut code, Target::new(Gpu::Gfx90a));
        (code.blocks.remove(0).2.into_iter().map(|e| e.inst).collect(), removed)
    }

    #[test]
    fn a_pair_assembled_from_single_sgprs_is_written_in_place() {
        let (code, removed) = after(vec![
            inst(Opcode::s_mov_b32, vec![s(0)], vec![Operand::imm32(0)]),
            inst(Opcode::s_mov_b32, vec![s(1)], vec![Operand::imm32(5)]),
            inst(Opcode::s_mov_b32, vec![s(54)], vec![s(0)]),
            inst(Opcode::s_mov_b32, vec![s(55)], vec![s(1)]),
            inst(Opcode::s_add_u32, vec![s(8)], vec![s(54), s(55)]),
            end(),
        ]);
        assert_eq!(removed, 2);
        assert_eq!(code[0].defs, [s(54)]);
        assert_eq!(code[1].defs, [s(55)]);
        assert_eq!(code[2].uses, [s(54), s(55)]);
    }

    /// `s_mov_b64 s[54:55], s[0:1]` of a pair whose halves two moves
    /// wrote: each move writes its half of s[54:55] and the copy goes.
    #[test]
    fn a_pair_copied_whole_after_two_half_writes_is_written_in_place() {
        let pair = |n: u16| Operand::Reg(Reg::s(n, 2));
        let (code, removed) = after(vec![
            inst(Opcode::s_mov_b32, vec![s(0)], vec![Operand::imm32(0)]),
            inst(Opcode::s_mov_b32, vec![s(1)], vec![Operand::imm32(5)]),
            inst(Opcode::s_mov_b64, vec![pair(54)], vec![pair(0)]),
            inst(Opcode::s_add_u32, vec![s(8)], vec![s(54), s(55)]),
            end(),
        ]);
        assert_eq!(removed, 1);
        assert_eq!((code[0].defs.clone(), code[1].defs.clone()), (vec![s(54)], vec![s(55)]));
        assert_eq!(code.len(), 4);
    }

    #[test]
    fn a_vector_result_copied_out_goes_into_the_copy_destination() {
        let (code, removed) = after(vec![
            inst(Opcode::v_add_u32, vec![v(3)], vec![v(0), v(1)]),
            inst(Opcode::v_mov_b32, vec![v(8)], vec![v(3)]),
            inst(Opcode::v_add_u32, vec![v(9)], vec![v(8), v(8)]),
            end(),
        ]);
        assert_eq!((removed, code.len()), (1, 3));
        assert_eq!(code[0].defs, [v(8)]);
    }

    #[test]
    fn copies_stay_where_the_rewrite_would_change_a_read() {
        let exec = Operand::Reg(Reg::exec(2));
        // The source is read after the copy.
        let read_later = vec![
            inst(Opcode::v_add_u32, vec![v(3)], vec![v(0), v(1)]),
            inst(Opcode::v_mov_b32, vec![v(8)], vec![v(3)]),
            inst(Opcode::v_add_u32, vec![v(9)], vec![v(8), v(3)]),
            end(),
        ];
        // The destination is read between the definition and the copy.
        let destination_read = vec![
            inst(Opcode::v_add_u32, vec![v(3)], vec![v(0), v(1)]),
            inst(Opcode::v_add_u32, vec![v(9)], vec![v(8), v(0)]),
            inst(Opcode::v_mov_b32, vec![v(8)], vec![v(3)]),
            inst(Opcode::v_add_u32, vec![v(9)], vec![v(8), v(9)]),
            end(),
        ];
        // The definition reads the destination.
        let definition_reads = vec![
            inst(Opcode::v_add_u32, vec![v(3)], vec![v(8), v(1)]),
            inst(Opcode::v_mov_b32, vec![v(8)], vec![v(3)]),
            inst(Opcode::v_add_u32, vec![v(9)], vec![v(8), v(8)]),
            end(),
        ];
        // EXEC changes between the definition and a vector copy.
        let exec_between = vec![
            inst(Opcode::v_add_u32, vec![v(3)], vec![v(0), v(1)]),
            inst(Opcode::s_mov_b64, vec![exec], vec![Operand::Reg(Reg::s(6, 2))]),
            inst(Opcode::v_mov_b32, vec![v(8)], vec![v(3)]),
            inst(Opcode::v_add_u32, vec![v(9)], vec![v(8), v(8)]),
            end(),
        ];
        // A partial write (an accumulator) is not a definition.
        let accumulator = vec![
            inst(Opcode::v_fmac_f32, vec![v(3)], vec![v(0), v(1)]),
            inst(Opcode::v_mov_b32, vec![v(8)], vec![v(3)]),
            inst(Opcode::v_add_u32, vec![v(9)], vec![v(8), v(8)]),
            end(),
        ];
        for block in [read_later, destination_read, definition_reads, exec_between, accumulator] {
            let listing: Vec<Opcode> = block.iter().map(|e| e.inst.op).collect();
            assert_eq!(after(block).1, 0, "{listing:?}");
        }
    }
}
