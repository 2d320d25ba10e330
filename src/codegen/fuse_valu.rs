//! fuse_valu: two dependent 32-bit VALU instructions become one of the
//! three-operand VOP3 forms gfx9 and gfx11 have, before allocation.
//!
//! Selection lowers one MIR instruction at a time, so an index scaled and
//! added (`(i << 2) + base`), a sum of three terms or a bit-field extract
//! (`(x >> 8) & 0xff`) is two instructions. Where the inner result has no
//! other reader, the pair is one instruction:
//!
//! | outer | inner | fused |
//! | --- | --- | --- |
//! | `v_add_u32 t, z` | `t = v_lshlrev_b32 c, x` | `v_lshl_add_u32 x, c, z` |
//! | `v_add_u32 t, z` | `t = v_add_u32 x, y` | `v_add3_u32 x, y, z` |
//! | `v_add_u32 t, z` | `t = v_xor_b32 x, y` | `v_xad_u32 x, y, z` |
//! | `v_xor_b32 t, z` | `t = v_xor_b32 x, y` | `v_xor3_b32 x, y, z` (gfx11) |
//! | `v_or_b32 t, z` | `t = v_lshlrev_b32 c, x` | `v_lshl_or_b32 x, c, z` |
//! | `v_or_b32 t, z` | `t = v_and_b32 x, y` | `v_and_or_b32 x, y, z` |
//! | `v_or_b32 t, z` | `t = v_or_b32 x, y` | `v_or3_b32 x, y, z` |
//! | `v_lshlrev_b32 c, t` | `t = v_add_u32 x, y` | `v_add_lshl_u32 x, y, c` |
//! | `v_and_b32 t, 2^w - 1` | `t = v_lshrrev_b32 c, x` | `v_bfe_u32 x, c, w` |
//!
//! (`c` an inline constant below 32, `w` from 1 to 31; the outer
//! instruction's operands in either order where it commutes.)
//!
//! The fused instruction stands where the outer one stood and reads the inner
//! one's sources there (SSA: they still hold their values). Both must be in
//! one machine block with no EXEC change between them, so the fused form
//! computes the same lanes. VOP3 has stricter operand rules than VOP2: on
//! gfx9 no literal constant and at most one SGPR (the constant bus); on
//! gfx11 one literal, and SGPRs plus literal at most two. A pair whose fused
//! operands break them stays two instructions.
//!
//! Cost: one linear sweep.

use regalloc2 as ra;

use super::vcode::{Class, Fill, MInst, MKind, Slot, VCode};
use crate::isa::{self, Generation, Gpu, Opcode};

/// A source of a fused instruction: a virtual register or a constant.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Src {
    R(ra::VReg),
    K(isa::Operand),
}

/// A plain VALU instruction: one result in a whole virtual register, sources
/// that are whole registers or constants, no modifiers and no placement
/// constraints. Its result and sources.
fn plain(m: &MInst) -> Option<(Opcode, ra::VReg, Vec<Src>)> {
    let MKind::Real { inst, fills } = &m.kind else { return None };
    if inst.defs.len() != 1 || inst.mods != isa::Mods::default() || inst.vopd_y.is_some() {
        return None;
    }
    if !m.ops.iter().all(|o| matches!(o.constraint(), ra::OperandConstraint::Reg) && (o.kind() == ra::OperandKind::Use || o.pos() == ra::OperandPos::Late)) {
        return None;
    }
    let mut def = None;
    let mut srcs: Vec<Option<Src>> = inst.uses.iter().map(|u| matches!(u, isa::Operand::Const(_) | isa::Operand::Literal(_)).then_some(Src::K(*u))).collect();
    for (slot, fill) in fills {
        let Fill::Whole(k) = *fill else { return None };
        let v = m.ops.get(usize::from(k))?.vreg();
        match *slot {
            Slot::Def(0) => def = Some(v),
            Slot::Use(u) => *srcs.get_mut(usize::from(u))? = Some(Src::R(v)),
            Slot::Def(_) => return None,
        }
    }
    let srcs: Option<Vec<Src>> = srcs.into_iter().collect();
    Some((inst.op, def?, srcs?))
}

/// The shift amount `c` if `s` is the inline constant `c < 32`.
fn shift_amount(s: Src) -> Option<u32> {
    (0..32).find(|&c| s == Src::K(isa::Operand::imm32(c)))
}

/// `w` if `s` is the constant `2^w - 1`, `w` from 1 to 31.
fn low_mask_width(s: Src) -> Option<u32> {
    (1..32).find(|&w| s == Src::K(isa::Operand::imm32((1u32 << w) - 1)))
}

/// The fused instruction for `outer(srcs)` whose source `t` is `inner(isrcs)`.
fn fuse(outer: Opcode, srcs: &[Src], t: ra::VReg, inner: Opcode, isrcs: &[Src], gpu: Gpu) -> Option<(Opcode, [Src; 3])> {
    if srcs.len() != 2 || isrcs.len() != 2 {
        return None;
    }
    let is_t = |s: &Src| *s == Src::R(t);
    // The outer source that is not `t` (for the commutative outer forms).
    let other = || -> Option<Src> {
        match srcs {
            [a, b] if is_t(a) && !is_t(b) => Some(*b),
            [a, b] if is_t(b) && !is_t(a) => Some(*a),
            _ => None,
        }
    };
    match (outer, inner) {
        (Opcode::v_add_u32, Opcode::v_lshlrev_b32) => Some((Opcode::v_lshl_add_u32, [isrcs[1], Src::K(isa::Operand::imm32(shift_amount(isrcs[0])?)), other()?])),
        (Opcode::v_add_u32, Opcode::v_add_u32) => Some((Opcode::v_add3_u32, [isrcs[0], isrcs[1], other()?])),
        (Opcode::v_add_u32, Opcode::v_xor_b32) => Some((Opcode::v_xad_u32, [isrcs[0], isrcs[1], other()?])),
        (Opcode::v_xor_b32, Opcode::v_xor_b32) if gpu.generation() == Generation::Gfx11 => Some((Opcode::v_xor3_b32, [isrcs[0], isrcs[1], other()?])),
        (Opcode::v_or_b32, Opcode::v_lshlrev_b32) => Some((Opcode::v_lshl_or_b32, [isrcs[1], Src::K(isa::Operand::imm32(shift_amount(isrcs[0])?)), other()?])),
        (Opcode::v_or_b32, Opcode::v_and_b32) => Some((Opcode::v_and_or_b32, [isrcs[0], isrcs[1], other()?])),
        (Opcode::v_or_b32, Opcode::v_or_b32) => Some((Opcode::v_or3_b32, [isrcs[0], isrcs[1], other()?])),
        (Opcode::v_lshlrev_b32, Opcode::v_add_u32) if is_t(&srcs[1]) && !is_t(&srcs[0]) => {
            Some((Opcode::v_add_lshl_u32, [isrcs[0], isrcs[1], Src::K(isa::Operand::imm32(shift_amount(srcs[0])?))]))
        }
        (Opcode::v_and_b32, Opcode::v_lshrrev_b32) => {
            let w = low_mask_width(other()?)?;
            let c = shift_amount(isrcs[0])?;
            Some((Opcode::v_bfe_u32, [isrcs[1], Src::K(isa::Operand::imm32(c)), Src::K(isa::Operand::imm32(w))]))
        }
        _ => None,
    }
}

/// Whether VOP3 can encode these sources on the target (constant bus and
/// literal limits).
fn encodable(srcs: &[Src; 3], gpu: Gpu, classes: &[Class]) -> bool {
    let mut sgprs: Vec<ra::VReg> = srcs.iter().filter_map(|s| match s {
        Src::R(v) if classes[v.vreg()] != Class::Vgpr => Some(*v),
        _ => None,
    }).collect();
    sgprs.sort_by_key(|v| v.vreg());
    sgprs.dedup();
    let literals: Vec<isa::Operand> = srcs.iter().filter_map(|s| match s {
        Src::K(k @ isa::Operand::Literal(_)) => Some(*k),
        _ => None,
    }).collect();
    let distinct_literals = literals.first().map_or(0, |first| if literals.iter().all(|k| k == first) { 1 } else { 2 });
    if srcs.iter().any(|s| matches!(s, Src::R(v) if classes[v.vreg()] == Class::SgprPair)) {
        return false;
    }
    match gpu.generation() {
        Generation::Gfx9 => distinct_literals == 0 && sgprs.len() <= 1,
        Generation::Gfx11 => distinct_literals <= 1 && sgprs.len() + distinct_literals <= 2,
    }
}

fn build(op: Opcode, d: ra::VReg, srcs: &[Src; 3]) -> MInst {
    let mut ops = vec![ra::Operand::reg_def(d)];
    let mut fills = vec![(Slot::Def(0), Fill::Whole(0))];
    let mut uses = Vec::with_capacity(3);
    for (i, s) in srcs.iter().enumerate() {
        match *s {
            Src::K(k) => uses.push(k),
            Src::R(v) => {
                let k = match ops.iter().position(|o| o.vreg() == v && o.kind() == ra::OperandKind::Use) {
                    Some(k) => k,
                    None => {
                        ops.push(ra::Operand::reg_use(v));
                        ops.len() - 1
                    }
                };
                fills.push((Slot::Use(i as u8), Fill::Whole(k as u8)));
                uses.push(isa::Operand::Off);
            }
        }
    }
    MInst { kind: MKind::Real { inst: isa::Inst::new(op, vec![isa::Operand::Off], uses), fills }, ops }
}


/// Fuses instruction pairs; returns how many.
pub fn run(vcode: &mut VCode, gpu: Gpu) -> usize {
    const NONE: u32 = u32::MAX;
    let n = vcode.vreg_classes.len();
    let uses = vcode.use_counts();
    let mut def_at = vec![NONE; n];
    for (i, m) in vcode.insts.iter().enumerate() {
        for op in m.ops.iter().filter(|o| o.kind() == ra::OperandKind::Def) {
            def_at[op.vreg().vreg()] = i as u32;
        }
    }
    let mut fused = 0;
    for b in 0..vcode.blocks.len() {
        let range = vcode.blocks[b].insts.clone();
        let mut exec_from = range.start;
        for i in range {
            if vcode.insts[i].changes_exec() {
                exec_from = i + 1;
                continue;
            }
            let Some((outer, d, srcs)) = plain(&vcode.insts[i]) else { continue };
            if !matches!(outer, Opcode::v_add_u32 | Opcode::v_or_b32 | Opcode::v_xor_b32 | Opcode::v_and_b32 | Opcode::v_lshlrev_b32) || vcode.vreg_classes[d.vreg()] != Class::Vgpr {
                continue;
            }
            let candidates: Vec<ra::VReg> = srcs.iter().filter_map(|s| match s {
                Src::R(v) => Some(*v),
                Src::K(_) => None,
            }).collect();
            for t in candidates {
                let j = def_at[t.vreg()];
                if uses[t.vreg()] != 1 || j == NONE || (j as usize) < exec_from || j as usize >= i {
                    continue;
                }
                let Some((inner, _, isrcs)) = plain(&vcode.insts[j as usize]) else { continue };
                let Some((op, fused_srcs)) = fuse(outer, &srcs, t, inner, &isrcs, gpu) else { continue };
                if !encodable(&fused_srcs, gpu, &vcode.vreg_classes) {
                    continue;
                }
                vcode.insts[i] = build(op, d, &fused_srcs);
                vcode.insts[j as usize] = MInst::nothing();
                fused += 1;
                break;
            }
        }
    }
    fused
}
