//! Wave operations (docs/mir.md "Wave operations"): lane ids from
//! `v_mbcnt`, values of one lane by `v_readfirstlane`/`v_readlane`, lane
//! masks as ballots, and per-lane reads of other lanes by `ds_bpermute_b32`.
//! Every live lane of the wave executes them together (MIR requires it), so
//! EXEC holds exactly the lanes that take part.

use super::*;
use crate::mir::WaveOp;

impl<'a> Isel<'a> {
    pub(super) fn wave_op(&mut self, op: WaveOp, ty: &Type, args: &[Operand]) -> Result<Lowered, Diagnostic> {
        let lanes = if self.wave64() { 64 } else { 32 };
        match op {
            WaveOp::WaveSize => Ok(Lowered::Imm(lanes)),
            WaveOp::LaneId => {
                // The count of lanes below this one in an all-ones mask.
                let lo = self.vreg(Class::Vgpr);
                self.emit(Opcode::v_mbcnt_lo_u32_b32, &[Dst::R(lo)], &[Src::Imm(u32::MAX), Src::Imm(0)], |i| i.e64 = true);
                if !self.wave64() {
                    return Ok(Lowered::V(lo));
                }
                let id = self.vreg(Class::Vgpr);
                self.emit(Opcode::v_mbcnt_hi_u32_b32, &[Dst::R(id)], &[Src::Imm(u32::MAX), Src::R(lo)], |i| i.e64 = true);
                Ok(Lowered::V(id))
            }
            WaveOp::Ballot => {
                let c = self.lowered(&args[0]);
                let exec = self.exec_reg();
                // Only active lanes vote: a mask is tidied with EXEC.
                let mask = match c {
                    Lowered::Imm(b) if b & 1 == 0 => return Ok(Lowered::Imm(0)),
                    Lowered::Imm(_) => None,
                    Lowered::Bool(b) => {
                        // Uniform: all active lanes or none.
                        let m = self.vreg(self.mask_class());
                        let (cmp, sel) = if self.wave64() { (Opcode::s_cmp_lg_u32, Opcode::s_cselect_b64) } else { (Opcode::s_cmp_lg_u32, Opcode::s_cselect_b32) };
                        self.emit_seq(&[(cmp, &[], &[Src::R(b), Src::Imm(0)]), (sel, &[Dst::R(m)], &[Src::Fixed(exec), Src::Imm(0)])]);
                        return self.mask_to_i64(m);
                    }
                    other => Some(self.to_mask(&other)?),
                };
                let m = self.vreg(self.mask_class());
                let and = if self.wave64() { Opcode::s_and_b64 } else { Opcode::s_and_b32 };
                match mask {
                    Some(c) => self.emit(and, &[Dst::R(m)], &[Src::R(c), Src::Fixed(exec)], |_| {}),
                    None => {
                        let mov = if self.wave64() { Opcode::s_mov_b64 } else { Opcode::s_mov_b32 };
                        self.emit(mov, &[Dst::R(m)], &[Src::Fixed(exec)], |_| {});
                    }
                }
                self.mask_to_i64(m)
            }
            WaveOp::ReadFirstLane | WaveOp::ReadLane => {
                let x = self.lowered(&args[0]);
                if !in_vector_registers(&x) {
                    return Ok(x); // already the same in every lane
                }
                let lane = match args.get(1) {
                    Some(l) => {
                        let l = self.lowered(l);
                        // The same in every lane (MIR requires it): any lane's.
                        Some(if in_vector_registers(&l) {
                            let v = self.to_v(&l)?;
                            Src::R(self.readfirstlane(v))
                        } else {
                            self.scalar_src(&l)?
                        })
                    }
                    None => None,
                };
                let pieces = if ty.bits() == 64 {
                    let (lo, hi) = self.to_v64(&x)?;
                    vec![lo, hi]
                } else {
                    vec![self.to_v(&x)?]
                };
                let read: Vec<ra::VReg> = pieces
                    .into_iter()
                    .map(|v| match lane {
                        None => self.readfirstlane(v),
                        Some(l) => {
                            let d = self.vreg(Class::Sgpr);
                            self.emit(Opcode::v_readlane_b32, &[Dst::R(d)], &[Src::R(v), l], |i| i.e64 = true);
                            d
                        }
                    })
                    .collect();
                Ok(match read.as_slice() {
                    [one] => Lowered::S(*one),
                    [lo, hi] => Lowered::S64(self.make_pair(*lo, *hi)),
                    _ => unreachable!("one or two pieces"),
                })
            }
            WaveOp::Reduce(_) | WaveOp::InclusiveScan(_) | WaveOp::ExclusiveScan(_) => {
                let x = self.lowered(&args[0]);
                let pieces = if ty.bits() == 64 {
                    let (lo, hi) = self.to_v64(&x)?;
                    vec![lo, hi]
                } else {
                    vec![self.to_v(&x)?]
                };
                let reduce = matches!(op, WaveOp::Reduce(_));
                let class = if reduce { Class::Sgpr } else { Class::Vgpr };
                let d: Vec<ra::VReg> = pieces.iter().map(|_| self.vreg(class)).collect();
                // The result is written while the sources are still read (the
                // expansion's steps), so it must not share a register with x.
                let defs = d.iter().map(|&r| ra::Operand::new(r, ra::OperandConstraint::Reg, ra::OperandKind::Def, ra::OperandPos::Early));
                let ops = defs.chain(pieces.iter().map(|&r| ra::Operand::reg_use(r))).collect();
                self.push(MInst { kind: MKind::WaveScan(op, ty.clone()), ops });
                Ok(match (reduce, d.as_slice()) {
                    (true, [one]) => Lowered::S(*one),
                    (true, [lo, hi]) => Lowered::S64(self.make_pair(*lo, *hi)),
                    (false, [one]) => Lowered::V(*one),
                    (false, [lo, hi]) => Lowered::V64(*lo, *hi),
                    _ => unreachable!("one or two pieces"),
                })
            }
            WaveOp::Shuffle => {
                let x = self.lowered(&args[0]);
                if !in_vector_registers(&x) {
                    return Ok(x);
                }
                let lane = self.lowered(&args[1]);
                // ds_bpermute_b32 reads lane (address / 4) of the data; gfx11
                // in wave64 only within the reading lane's half, so there the
                // other half comes from a half-swapped copy (v_permlane64_b32).
                let addr = self.vreg(Class::Vgpr);
                self.valu(Opcode::v_lshlrev_b32, addr, &[Lowered::Imm(2), lane.clone()], false)?;
                let halves = self.wave64() && self.target.gpu.generation() == isa::Generation::Gfx11;
                let other_half = if halves {
                    let me = self.wave_op(WaveOp::LaneId, &Type::I32, &[])?;
                    let differ = self.vreg(Class::Vgpr);
                    self.valu(Opcode::v_xor_b32, differ, &[lane, me], true)?;
                    let bit = self.vreg(Class::Vgpr);
                    self.valu(Opcode::v_and_b32, bit, &[Lowered::Imm(32), Lowered::V(differ)], true)?;
                    Some(self.vcmp(Opcode::v_cmp_ne_u32, Lowered::V(bit), Lowered::Imm(0))?)
                } else {
                    None
                };
                let pieces = if ty.bits() == 64 {
                    let (lo, hi) = self.to_v64(&x)?;
                    vec![lo, hi]
                } else {
                    vec![self.to_v(&x)?]
                };
                let got: Vec<ra::VReg> = pieces
                    .into_iter()
                    .map(|v| {
                        let d = self.vreg(Class::Vgpr);
                        self.emit(Opcode::ds_bpermute_b32, &[Dst::R(d)], &[Src::R(addr), Src::R(v)], |_| {});
                        let Some(cross) = other_half else { return d };
                        // Swapped with every lane on: the lane read in the other
                        // half may be inactive here, and v_permlane64 writes only
                        // active lanes. (The fresh register holds nothing else in
                        // any lane, so the extra lanes written are harmless.)
                        let swapped = self.vreg(Class::Vgpr);
                        let save = self.vreg(self.mask_class());
                        let exec = self.exec_reg();
                        self.emit(Opcode::s_or_saveexec_b64, &[Dst::R(save)], &[Src::Imm(u32::MAX)], |_| {});
                        self.emit(Opcode::v_permlane64_b32, &[Dst::R(swapped)], &[Src::R(v)], |_| {});
                        self.emit(Opcode::s_mov_b64, &[Dst::Fixed(exec)], &[Src::R(save)], |_| {});
                        let far = self.vreg(Class::Vgpr);
                        self.emit(Opcode::ds_bpermute_b32, &[Dst::R(far)], &[Src::R(addr), Src::R(swapped)], |_| {});
                        let r = self.vreg(Class::Vgpr);
                        self.emit(Opcode::v_cndmask_b32, &[Dst::R(r)], &[Src::R(d), Src::R(far), Src::R(cross)], |i| i.e64 = true);
                        r
                    })
                    .collect();
                Ok(match got.as_slice() {
                    [one] => Lowered::V(*one),
                    [lo, hi] => Lowered::V64(*lo, *hi),
                    _ => unreachable!("one or two pieces"),
                })
            }
        }
    }

    fn readfirstlane(&mut self, v: ra::VReg) -> ra::VReg {
        let d = self.vreg(Class::Sgpr);
        self.emit(Opcode::v_readfirstlane_b32, &[Dst::R(d)], &[Src::R(v)], |_| {});
        d
    }

    /// A lane mask as the i64 `ballot` gives (wave32: the high half 0).
    fn mask_to_i64(&mut self, m: ra::VReg) -> Result<Lowered, Diagnostic> {
        if self.wave64() {
            // The mask class is an SGPR pair in wave64.
            return Ok(Lowered::S64(m));
        }
        let zero = self.vreg(Class::Sgpr);
        self.emit(Opcode::s_mov_b32, &[Dst::R(zero)], &[Src::Imm(0)], |_| {});
        Ok(Lowered::S64(self.make_pair(m, zero)))
    }
}
