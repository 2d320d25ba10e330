//! `select` and the casts between integer, float, boolean and pointer types.

use super::*;

impl<'a> Isel<'a> {
    pub(super) fn select(&mut self, ty: &Type, cond: &Operand, t: &Operand, f: &Operand, divergent: bool) -> Result<Lowered, Diagnostic> {
        let (c, a, b) = (self.lowered(cond), self.lowered(t), self.lowered(f));
        let divergent = divergent || in_vector_registers(&c) || in_vector_registers(&a) || in_vector_registers(&b);
        self.select_lowered(ty, c, a, b, divergent)
    }

    pub(super) fn select_lowered(&mut self, ty: &Type, c: Lowered, a: Lowered, b: Lowered, divergent: bool) -> Result<Lowered, Diagnostic> {
        if let Lowered::Imm(bits) = c {
            return Ok(if bits & 1 != 0 { a } else { b });
        }
        if let (Lowered::Agg(xs), Lowered::Agg(ys)) = (&a, &b) {
            let elem = ty.element().clone();
            let mut parts = Vec::new();
            for (x, y) in xs.clone().into_iter().zip(ys.clone()) {
                parts.push(self.select_lowered(&elem, c.clone(), x, y, divergent)?);
            }
            return Ok(Lowered::Agg(parts));
        }
        let bits = ty.bits();
        if *ty == Type::I1 {
            // Booleans: (c & a) | (~c & b) on masks, or SCC select on bools.
            if divergent {
                let (mc, ma, mb) = (self.to_mask(&c)?, self.to_mask(&a)?, self.to_mask(&b)?);
                let (and, andn2, or) = if self.wave64() {
                    (Opcode::s_and_b64, Opcode::s_andn2_b64, Opcode::s_or_b64)
                } else {
                    (Opcode::s_and_b32, Opcode::s_andn2_b32, Opcode::s_or_b32)
                };
                let (x, y, d) = (self.vreg(self.mask_class()), self.vreg(self.mask_class()), self.vreg(self.mask_class()));
                self.emit(and, &[Dst::R(x)], &[Src::R(ma), Src::R(mc)], |_| {});
                self.emit(andn2, &[Dst::R(y)], &[Src::R(mb), Src::R(mc)], |_| {});
                self.emit(or, &[Dst::R(d)], &[Src::R(x), Src::R(y)], |_| {});
                return Ok(Lowered::Mask(d));
            }
        }
        if !divergent && bits <= 32 {
            // s_cselect takes one literal: a second goes to an SGPR first.
            let a = if is_literal(&a) && is_literal(&b) { Lowered::S(self.to_s(&a)?) } else { a };
            let (sa, sb) = (self.scalar_src(&a)?, self.scalar_src(&b)?);
            self.set_scc(&c)?;
            let d = self.vreg(Class::Sgpr);
            self.emit(Opcode::s_cselect_b32, &[Dst::R(d)], &[sa, sb], |_| {});
            return Ok(if *ty == Type::I1 { Lowered::Bool(d) } else { Lowered::S(d) });
        }
        if !divergent && bits == 64 {
            let (pa, pb) = (self.to_s64(&a)?, self.to_s64(&b)?);
            self.set_scc(&c)?;
            let d = self.vreg(Class::SgprPair);
            self.emit(Opcode::s_cselect_b64, &[Dst::R(d)], &[Src::R(pa), Src::R(pb)], |_| {});
            return Ok(Lowered::S64(d));
        }
        let m = self.to_mask(&c)?;
        if bits == 64 {
            // A constant's halves go in as inline constants where they are
            // (0 and 1 of a flag), not through a VGPR pair each.
            let halves = |s: &mut Self, l: &Lowered| -> Result<(Src, Src), Diagnostic> {
                if let Lowered::Imm(k) = *l {
                    return Ok((s.cndmask_src(&Lowered::Imm(k & 0xffff_ffff))?, s.cndmask_src(&Lowered::Imm(k >> 32))?));
                }
                let (lo, hi) = s.to_v64(l)?;
                Ok((Src::R(lo), Src::R(hi)))
            };
            let ((al, ah), (bl, bh)) = (halves(self, &a)?, halves(self, &b)?);
            let (lo, hi) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
            self.emit(Opcode::v_cndmask_b32, &[Dst::R(lo)], &[bl, al, Src::R(m)], |i| i.e64 = true);
            self.emit(Opcode::v_cndmask_b32, &[Dst::R(hi)], &[bh, ah, Src::R(m)], |i| i.e64 = true);
            return Ok(Lowered::V64(lo, hi));
        }
        let d = self.vreg(Class::Vgpr);
        let (sb, sa) = (self.cndmask_src(&b)?, self.cndmask_src(&a)?);
        self.emit(Opcode::v_cndmask_b32, &[Dst::R(d)], &[sb, sa, Src::R(m)], |i| i.e64 = true);
        Ok(Lowered::V(d))
    }

    /// SCC = the uniform condition, right before the `s_cselect` that reads
    /// it (no SCC writer between): a deferred compare is made here, a 0/1
    /// boolean tested. Its sources are lowered first, so nothing they need
    /// comes between either.
    fn set_scc(&mut self, c: &Lowered) -> Result<(), Diagnostic> {
        if let Lowered::ScalarCmp { op, a, b } = c {
            let (sa, sb) = (self.compare_src(a)?, self.compare_src(b)?);
            self.emit(*op, &[], &[sa, sb], |_| {});
            return Ok(());
        }
        let cb = self.to_bool(c)?;
        self.emit(Opcode::s_cmp_lg_u32, &[], &[Src::R(cb), Src::Imm(0)], |_| {});
        Ok(())
    }

    /// v_cndmask_b32_e64 sources: VGPRs or inline constants (the mask already uses
    /// the one scalar source gfx9 allows).
    pub(super) fn cndmask_src(&mut self, l: &Lowered) -> Result<Src, Diagnostic> {
        Ok(match *l {
            Lowered::Imm(bits) if matches!(isa::Operand::imm32(bits as u32), isa::Operand::Const(_)) => Src::Imm(bits as u32),
            _ => Src::R(self.to_v(l)?),
        })
    }

    pub(super) fn cast(&mut self, op: CastOp, from: &Type, arg: &Operand, to: &Type, divergent: bool) -> Result<Lowered, Diagnostic> {
        let a = self.lowered(arg);
        self.cast_value(op, from, a, to, divergent)
    }

    pub(super) fn cast_value(&mut self, op: CastOp, from: &Type, a: Lowered, to: &Type, divergent: bool) -> Result<Lowered, Diagnostic> {
        // f16 goes through f32: f16 -> f32 is exact, so extensions and
        // float -> int conversions of f16 are those of f32; f32 -> f16 rounds once,
        // and i32 -> f32 -> f16 is i32 -> f16 rounded once (integers up to 2^24
        // are exact in f32, larger ones overflow f16 either way).
        if *from == Type::F16 && matches!(op, CastOp::FpExt | CastOp::FpToSi | CastOp::FpToUi) {
            let wide = self.f16_to_f32(a)?;
            if *to == Type::F32 && op == CastOp::FpExt {
                return Ok(wide);
            }
            return self.cast_value(op, &Type::F32, wide, to, divergent);
        }
        if *to == Type::F16 && ((op == CastOp::FpTrunc && *from == Type::F32) || (matches!(op, CastOp::SiToFp | CastOp::UiToFp) && *from == Type::I32)) {
            let wide = if op == CastOp::FpTrunc { a } else { self.cast_value(op, from, a, &Type::F32, divergent)? };
            return self.f32_to_f16(wide);
        }
        let a = match a {
            Lowered::Addr { .. } | Lowered::VSum { .. } => {
                let (lo, hi) = self.to_v64(&a)?;
                Lowered::V64(lo, hi)
            }
            other => other,
        };
        let divergent = divergent || in_vector_registers(&a);
        let unsupported = || format!("'{}' from {from} to {to} is not supported by the code generator yet", op.mnemonic());
        Ok(match (op, from, to) {
            (CastOp::Bitcast, _, _) if from.bits() <= 32 && to.bits() == from.bits() && from.is_scalar() && to.is_scalar() => a,
            (CastOp::SiToFp | CastOp::UiToFp, Type::I32, Type::F32) => {
                let d = self.vreg(Class::Vgpr);
                let opcode = if op == CastOp::SiToFp { Opcode::v_cvt_f32_i32 } else { Opcode::v_cvt_f32_u32 };
                self.valu(opcode, d, &[a], false)?;
                Lowered::V(d)
            }
            (CastOp::FpToSi | CastOp::FpToUi, Type::F32, Type::I32) => {
                let d = self.vreg(Class::Vgpr);
                let opcode = if op == CastOp::FpToSi { Opcode::v_cvt_i32_f32 } else { Opcode::v_cvt_u32_f32 };
                self.valu(opcode, d, &[a], false)?;
                Lowered::V(d)
            }
            (CastOp::Bitcast, _, _) if from.bits() == 64 && to.bits() == 64 && from.is_scalar() && to.is_scalar() => a,
            (CastOp::FpExt, Type::F32, Type::F64) | (CastOp::SiToFp | CastOp::UiToFp, Type::I32, Type::F64) => {
                let src = self.to_v(&a)?;
                let (lo, hi) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
                let opcode = match op {
                    CastOp::FpExt => Opcode::v_cvt_f64_f32,
                    CastOp::SiToFp => Opcode::v_cvt_f64_i32,
                    _ => Opcode::v_cvt_f64_u32,
                };
                self.emit(opcode, &[Dst::VPair(lo, hi)], &[Src::R(src)], |_| {});
                Lowered::V64(lo, hi)
            }
            (CastOp::FpToSi | CastOp::FpToUi, Type::F64, Type::I32) => {
                let (lo, hi) = self.to_v64(&a)?;
                let d = self.vreg(Class::Vgpr);
                let opcode = if op == CastOp::FpToSi { Opcode::v_cvt_i32_f64 } else { Opcode::v_cvt_u32_f64 };
                self.emit(opcode, &[Dst::R(d)], &[Src::VPair(lo, hi)], |_| {});
                Lowered::V(d)
            }
            (CastOp::FpTrunc, Type::F64, Type::F32) => {
                let (lo, hi) = self.to_v64(&a)?;
                let d = self.vreg(Class::Vgpr);
                self.emit(Opcode::v_cvt_f32_f64, &[Dst::R(d)], &[Src::VPair(lo, hi)], |_| {});
                Lowered::V(d)
            }
            (CastOp::Trunc, Type::I64, Type::I32) => match a {
                Lowered::S64(p) => {
                    let s = self.vreg(Class::Sgpr);
                    self.emit(Opcode::s_mov_b32, &[Dst::R(s)], &[Src::Half(p, 0)], |_| {});
                    Lowered::S(s)
                }
                Lowered::V64(lo, _) => Lowered::V(lo),
                Lowered::Imm(bits) => Lowered::Imm(bits & 0xffff_ffff),
                _ => return Err(self.error("internal: trunc operand")),
            },
            (CastOp::ZExt | CastOp::SExt, Type::I32, Type::I64) => {
                if let Lowered::Imm(bits) = a {
                    let v = if op == CastOp::SExt { bits as u32 as i32 as i64 as u64 } else { bits & 0xffff_ffff };
                    return Ok(Lowered::Imm(v));
                }
                if divergent || matches!(a, Lowered::V(_)) {
                    let lo = self.to_v(&a)?;
                    let hi = if op == CastOp::SExt {
                        let hi = self.vreg(Class::Vgpr);
                        self.emit(Opcode::v_ashrrev_i32, &[Dst::R(hi)], &[Src::Imm(31), Src::R(lo)], |_| {});
                        hi
                    } else {
                        self.zero_vgpr()
                    };
                    Lowered::V64(lo, hi)
                } else {
                    let lo = self.to_s(&a)?;
                    Lowered::S64(self.uniform_extend(lo, op == CastOp::SExt))
                }
            }
            (CastOp::ZExt | CastOp::SExt, Type::I1, Type::I32) => {
                let one = if op == CastOp::SExt { u32::MAX } else { 1 };
                match a {
                    Lowered::Bool(b) if !divergent => {
                        if op == CastOp::ZExt {
                            Lowered::S(b)
                        } else {
                            let d = self.vreg(Class::Sgpr);
                            self.emit(Opcode::s_sub_u32, &[Dst::R(d)], &[Src::Imm(0), Src::R(b)], |_| {});
                            Lowered::S(d)
                        }
                    }
                    _ => {
                        let m = self.to_mask(&a)?;
                        let d = self.vreg(Class::Vgpr);
                        self.emit(Opcode::v_cndmask_b32, &[Dst::R(d)], &[Src::Imm(0), Src::Imm(one), Src::R(m)], |i| i.e64 = true);
                        Lowered::V(d)
                    }
                }
            }
            // i8/i16 live in 32-bit registers with undefined upper bits.
            (CastOp::Trunc, Type::I32 | Type::I16, Type::I8 | Type::I16) => a,
            (CastOp::Trunc, Type::I64, Type::I8 | Type::I16) => match a {
                Lowered::S64(p) => {
                    let s = self.vreg(Class::Sgpr);
                    self.emit(Opcode::s_mov_b32, &[Dst::R(s)], &[Src::Half(p, 0)], |_| {});
                    Lowered::S(s)
                }
                Lowered::V64(lo, _) => Lowered::V(lo),
                Lowered::Imm(bits) => Lowered::Imm(bits & 0xffff),
                _ => return Err(self.error("internal: trunc operand")),
            },
            (CastOp::ZExt | CastOp::SExt, Type::I8 | Type::I16, Type::I32 | Type::I16) => {
                let width = from.bits();
                if let Lowered::Imm(bits) = a {
                    let v = if op == CastOp::SExt { ((bits << (64 - width)) as i64 >> (64 - width)) as u64 } else { bits & ((1 << width) - 1) };
                    return Ok(Lowered::Imm(v & 0xffff_ffff));
                }
                if divergent || matches!(a, Lowered::V(_)) {
                    let x = self.to_v(&a)?;
                    let d = self.vreg(Class::Vgpr);
                    let opcode = if op == CastOp::SExt { Opcode::v_bfe_i32 } else { Opcode::v_bfe_u32 };
                    self.emit(opcode, &[Dst::R(d)], &[Src::R(x), Src::Imm(0), Src::Imm(width)], |_| {});
                    Lowered::V(d)
                } else {
                    let x = self.to_s(&a)?;
                    let d = self.vreg(Class::Sgpr);
                    let opcode = if op == CastOp::SExt { Opcode::s_bfe_i32 } else { Opcode::s_bfe_u32 };
                    self.emit(opcode, &[Dst::R(d)], &[Src::R(x), Src::Imm(width << 16)], |_| {});
                    Lowered::S(d)
                }
            }
            (CastOp::PtrToInt, _, _) | (CastOp::IntToPtr, _, _) => a,
            (CastOp::AddrSpaceCast, Type::Ptr(f), Type::Ptr(t)) => return self.addrspacecast(*f, *t, a, divergent),
            _ => return Err(self.error(unsupported())),
        })
    }

    /// Global, constant and flat addresses are the same 64-bit values. A local or
    /// private offset becomes a flat address in its aperture (the aperture's high
    /// half, read from `src_shared_base` / `src_private_base`); a flat address
    /// cast back keeps its low half (MIR makes a flat address outside the
    /// space an error, docs/mir-semantics.md).
    fn addrspacecast(&mut self, from: AddrSpace, to: AddrSpace, a: Lowered, divergent: bool) -> Result<Lowered, Diagnostic> {
        let is_32 = |s: AddrSpace| matches!(s, AddrSpace::Local | AddrSpace::Private);
        if is_32(to) {
            return self.cast_value(CastOp::Trunc, &Type::I64, a, &Type::I32, divergent);
        }
        if !is_32(from) {
            return Ok(a);
        }
        let aperture = isa::Reg::new(if from == AddrSpace::Local { isa::PhysReg::SRC_SHARED_BASE } else { isa::PhysReg::SRC_PRIVATE_BASE }, 1);
        if divergent || matches!(a, Lowered::V(_)) {
            let lo = self.to_v(&a)?;
            let hi = self.vreg(Class::Vgpr);
            self.emit(Opcode::v_mov_b32, &[Dst::R(hi)], &[Src::Fixed(aperture)], |_| {});
            Ok(Lowered::V64(lo, hi))
        } else {
            let lo = self.to_s(&a)?;
            let hi = self.vreg(Class::Sgpr);
            self.emit(Opcode::s_mov_b32, &[Dst::R(hi)], &[Src::Fixed(aperture)], |_| {});
            Ok(Lowered::S64(self.make_pair(lo, hi)))
        }
    }
}
