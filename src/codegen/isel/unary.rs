//! Unary operations: bit counts and `not` on integers and booleans, sign and rounding operations on floats.

use super::*;

impl<'a> Isel<'a> {
    pub(super) fn unary(&mut self, op: UnOp, ty: &Type, arg: &Operand, divergent: bool) -> Result<Lowered, Diagnostic> {
        let a = self.lowered(arg);
        let divergent = divergent || in_vector_registers(&a);
        match (op, ty) {
            (UnOp::Not, Type::I1) => {
                if divergent {
                    let m = self.to_mask(&a)?;
                    let d = self.vreg(self.mask_class());
                    let (opcode, exec) = (if self.wave64() { Opcode::s_andn2_b64 } else { Opcode::s_andn2_b32 }, self.exec_reg());
                    // Inactive lanes do not matter; restrict to EXEC so masks stay tidy.
                    self.emit(opcode, &[Dst::R(d)], &[Src::Fixed(exec), Src::R(m)], |_| {});
                    Ok(Lowered::Mask(d))
                } else {
                    let b = self.to_bool(&a)?;
                    let d = self.vreg(Class::Sgpr);
                    self.emit(Opcode::s_xor_b32, &[Dst::R(d)], &[Src::R(b), Src::Imm(1)], |_| {});
                    Ok(Lowered::Bool(d))
                }
            }
            (UnOp::Not | UnOp::Popcount | UnOp::Clz | UnOp::Ctz, Type::I32) => {
                let d = self.vreg(Class::Vgpr);
                match op {
                    UnOp::Not => self.valu(Opcode::v_not_b32, d, &[a], false)?,
                    UnOp::Popcount => self.valu(Opcode::v_bcnt_u32_b32, d, &[a, Lowered::Imm(0)], false)?,
                    _ => {
                        // v_ffbh/v_ffbl give -1 for zero; MIR wants the width (32).
                        let raw = self.vreg(Class::Vgpr);
                        let opcode = if op == UnOp::Clz { Opcode::v_ffbh_u32 } else { Opcode::v_ffbl_b32 };
                        self.valu(opcode, raw, &[a], false)?;
                        self.emit(Opcode::v_min_u32, &[Dst::R(d)], &[Src::Imm(32), Src::R(raw)], |_| {});
                    }
                }
                Ok(Lowered::V(d))
            }
            (UnOp::BitReverse, Type::I32) if !divergent => {
                let x = self.to_s(&a)?;
                let d = self.vreg(Class::Sgpr);
                self.emit(Opcode::s_brev_b32, &[Dst::R(d)], &[Src::R(x)], |_| {});
                Ok(Lowered::S(d))
            }
            (UnOp::BitReverse, Type::I32) => {
                let d = self.vreg(Class::Vgpr);
                self.valu(Opcode::v_bfrev_b32, d, &[a], false)?;
                Ok(Lowered::V(d))
            }
            (UnOp::Bswap, Type::I32) => {
                // v_perm_b32 picks bytes of {x, x}: selector bytes 3, 2, 1, 0.
                let d = self.vreg(Class::Vgpr);
                self.valu(Opcode::v_perm_b32, d, &[a.clone(), a, Lowered::Imm(0x0001_0203)], false)?;
                Ok(Lowered::V(d))
            }
            (op, Type::F32) if op.is_transcendental() => self.transcendental32(op, a),
            (op, Type::F16) if op.is_transcendental() => {
                // In f32 and rounded once to f16 (within the f16 bounds).
                let wide = self.f16_to_f32(a)?;
                let r = self.transcendental32(op, wide)?;
                self.f32_to_f16(r)
            }
            (op, Type::F64) if op.is_transcendental() => self.transcendental64(op, a),
            (UnOp::Sqrt, Type::F32) => self.sqrt32(a),
            (UnOp::Sqrt, Type::F64) => {
                let x = self.to_v64(&a)?;
                self.sqrt64(x)
            }
            (UnOp::FNeg | UnOp::FAbs, Type::F16) => {
                // Sign bit 15; the bits above an f16 are undefined anyway.
                let d = self.vreg(Class::Vgpr);
                let (opcode, mask) = if op == UnOp::FNeg { (Opcode::v_xor_b32, 0x8000) } else { (Opcode::v_and_b32, 0x7fff) };
                self.valu(opcode, d, &[Lowered::Imm(mask), a], true)?;
                Ok(Lowered::V(d))
            }
            (UnOp::Sqrt | UnOp::Floor | UnOp::Ceil | UnOp::Trunc | UnOp::RoundEven, Type::F16) => {
                // In f32 and rounded once: floor/ceil/trunc/roundeven are exact, and a
                // correctly rounded f32 square root rounds to the correctly
                // rounded f16 one (24 >= 2 * 11 + 2).
                let wide = self.f16_to_f32(a)?;
                let r = match op {
                    UnOp::Sqrt => self.sqrt32(wide)?,
                    _ => {
                        let d = self.vreg(Class::Vgpr);
                        let opcode = match op {
                            UnOp::Floor => Opcode::v_floor_f32,
                            UnOp::Ceil => Opcode::v_ceil_f32,
                            UnOp::RoundEven => Opcode::v_rndne_f32,
                            _ => Opcode::v_trunc_f32,
                        };
                        self.valu(opcode, d, &[wide], false)?;
                        Lowered::V(d)
                    }
                };
                self.f32_to_f16(r)
            }
            (UnOp::FNeg | UnOp::FAbs, Type::F64) => {
                // The sign is bit 31 of the high half.
                let (lo, hi) = self.to_v64(&a)?;
                let h = self.vreg(Class::Vgpr);
                let (opcode, mask) = if op == UnOp::FNeg { (Opcode::v_xor_b32, 0x8000_0000u32) } else { (Opcode::v_and_b32, 0x7fff_ffff) };
                self.emit(opcode, &[Dst::R(h)], &[Src::Imm(mask), Src::R(hi)], |_| {});
                Ok(Lowered::V64(lo, h))
            }
            (UnOp::Floor | UnOp::Ceil | UnOp::Trunc | UnOp::RoundEven, Type::F64) => {
                let (lo, hi) = self.to_v64(&a)?;
                let (dl, dh) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
                let opcode = match op {
                    UnOp::Floor => Opcode::v_floor_f64,
                    UnOp::Ceil => Opcode::v_ceil_f64,
                    UnOp::RoundEven => Opcode::v_rndne_f64,
                    _ => Opcode::v_trunc_f64,
                };
                self.emit(opcode, &[Dst::VPair(dl, dh)], &[Src::VPair(lo, hi)], |_| {});
                Ok(Lowered::V64(dl, dh))
            }
            (UnOp::FNeg | UnOp::FAbs | UnOp::Floor | UnOp::Ceil | UnOp::Trunc | UnOp::RoundEven, Type::F32) => {
                let d = self.vreg(Class::Vgpr);
                match op {
                    UnOp::FNeg => self.valu(Opcode::v_xor_b32, d, &[Lowered::Imm(0x8000_0000), a], true)?,
                    UnOp::FAbs => self.valu(Opcode::v_and_b32, d, &[Lowered::Imm(0x7fff_ffff), a], true)?,
                    UnOp::Floor => self.valu(Opcode::v_floor_f32, d, &[a], false)?,
                    UnOp::Ceil => self.valu(Opcode::v_ceil_f32, d, &[a], false)?,
                    UnOp::RoundEven => self.valu(Opcode::v_rndne_f32, d, &[a], false)?,
                    _ => self.valu(Opcode::v_trunc_f32, d, &[a], false)?,
                }
                Ok(Lowered::V(d))
            }
            _ => Err(self.error(format!("'{}' on {ty} is not supported by the code generator yet", op.mnemonic()))),
        }
    }
}
