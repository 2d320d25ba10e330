//! Integer and float compares (SCC or a lane mask) and the tables of compare opcodes.

use super::*;

impl<'a> Isel<'a> {
    /// A VALU compare into a lane mask.
    pub(super) fn vcmp(&mut self, opcode: Opcode, a: Lowered, b: Lowered) -> Result<ra::VReg, Diagnostic> {
        let m = self.vreg(self.mask_class());
        let (sa, sb) = (self.src_of(&a)?, self.src_of(&b)?);
        // VOP3 compare: one scalar/constant source is fine; a second goes to a VGPR,
        // and gfx9 VOP3 takes no literal.
        let gfx9 = self.target.gpu.generation() == isa::Generation::Gfx9;
        let legal = |s: &Src| matches!(s, Src::R(_)) || matches!(s, Src::Imm(bits) if matches!(isa::Operand::imm32(*bits), isa::Operand::Const(_)));
        // gfx9 VOP3 takes no literal; gfx11 VOP3 takes one.
        let sa = if (!gfx9 && !(is_literal(&a) && is_literal(&b))) || legal(&sa) { sa } else { Src::R(self.to_v(&a)?) };
        let sb = if !gfx9 || legal(&sb) { sb } else { Src::R(self.to_v(&b)?) };
        let scalar = |s: &Src, l: &Lowered| matches!(s, Src::R(_)) && matches!(l, Lowered::S(_) | Lowered::Bool(_));
        let sb = if gfx9 && scalar(&sa, &a) && scalar(&sb, &b) { Src::R(self.to_v(&b)?) } else { sb };
        self.emit(opcode, &[Dst::R(m)], &[sa, sb], |i| i.e64 = true);
        Ok(m)
    }

    pub(super) fn icmp(&mut self, pred: IntPred, ty: &Type, lhs: &Operand, rhs: &Operand, divergent: bool) -> Result<Lowered, Diagnostic> {
        let (a, b) = (self.lowered(lhs), self.lowered(rhs));
        if let (Lowered::Imm(x), Lowered::Imm(y), Type::I32) = (&a, &b, ty) {
            return Ok(Lowered::Imm(u64::from(interp::ops::icmp(pred, 32, *x, *y))));
        }
        let divergent = divergent || in_vector_registers(&a) || in_vector_registers(&b);
        let wide = ty.bits() == 64;
        if !matches!(ty, Type::I32) && !(wide && (matches!(ty, Type::I64 | Type::Ptr(_)))) {
            if !matches!(ty, Type::Ptr(_)) {
                return Err(self.error(format!("icmp on {ty} is not supported by the code generator yet")));
            }
        }
        if !divergent && !wide {
            let opcode = scmp_opcode(pred);
            // SOPC takes one literal: a second goes to an SGPR first.
            let a = if is_literal(&a) && is_literal(&b) { Lowered::S(self.to_s(&a)?) } else { a };
            if self.inst_ref.and_then(|i| i.result).is_some_and(|r| self.deferred_compares.contains(&r)) {
                return Ok(Lowered::ScalarCmp { op: opcode, a: Box::new(a), b: Box::new(b) });
            }
            let (sa, sb) = (self.scalar_src(&a)?, self.scalar_src(&b)?);
            let d = self.vreg(Class::Sgpr);
            self.emit(opcode, &[], &[sa, sb], |_| {});
            self.emit(Opcode::s_cselect_b32, &[Dst::R(d)], &[Src::Imm(1), Src::Imm(0)], |_| {});
            return Ok(Lowered::Bool(d));
        }
        if wide && !divergent && matches!(pred, IntPred::Eq | IntPred::Ne) {
            // SOPC has 64-bit equality (not order): the pairs where they are,
            // a 64-bit inline constant as itself (one side at most), any
            // other in a pair.
            let side = |s: &mut Self, l: &Lowered, constant_taken: bool| -> Result<Lowered, Diagnostic> {
                Ok(match *l {
                    Lowered::Imm(bits) if inline_i64(bits) && !constant_taken => l.clone(),
                    _ => Lowered::S64(s.to_s64(l)?),
                })
            };
            let a = side(self, &a, matches!(b, Lowered::Imm(bits) if inline_i64(bits)))?;
            let b = side(self, &b, false)?;
            let op = if pred == IntPred::Eq { Opcode::s_cmp_eq_u64 } else { Opcode::s_cmp_lg_u64 };
            let cmp = Lowered::ScalarCmp { op, a: Box::new(a), b: Box::new(b) };
            if self.inst_ref.and_then(|i| i.result).is_some_and(|r| self.deferred_compares.contains(&r)) {
                return Ok(cmp);
            }
            return Ok(Lowered::Bool(self.to_bool(&cmp)?));
        }
        if wide && !divergent {
            return self.scalar_order64(pred, a, b);
        }
        if wide && divergent {
            // Both high halves known zero (zero extensions; constants below
            // 2^32): the low halves decide, as unsigned numbers (both values
            // are non-negative, so the signed order is the unsigned one).
            let low = |s: &Self, l: &Lowered| match *l {
                Lowered::V64(lo, hi) if s.zero_vgprs.contains(&hi) => Some(Lowered::V(lo)),
                Lowered::Imm(bits) if bits >> 32 == 0 => Some(Lowered::Imm(bits)),
                _ => None,
            };
            if let (Some(la), Some(lb)) = (low(self, &a), low(self, &b)) {
                let unsigned = match pred {
                    IntPred::Slt => IntPred::Ult,
                    IntPred::Sle => IntPred::Ule,
                    IntPred::Sgt => IntPred::Ugt,
                    IntPred::Sge => IntPred::Uge,
                    other => other,
                };
                let m = self.vcmp(vcmp32_opcode(unsigned), la, lb)?;
                return Ok(Lowered::Mask(m));
            }
        }
        if wide {
            // Constants and uniform operands where they are (an inline
            // constant, or an SGPR pair the constant bus carries): no VGPRs
            // and no copies into pair windows for them.
            let mut scalars = self.constant_bus();
            let sa = self.i64_src(&a, &mut scalars)?;
            let sb = self.i64_src(&b, &mut scalars)?;
            let m = self.vreg(self.mask_class());
            self.emit(vcmp64_opcode(pred), &[Dst::R(m)], &[sa, sb], |i| i.e64 = true);
            return Ok(Lowered::Mask(m));
        }
        let m = self.vcmp(vcmp32_opcode(pred), a, b)?;
        Ok(Lowered::Mask(m))
    }

    /// A uniform 64-bit order compare on the scalar unit, which has 64-bit
    /// equality only: `x <u y` is the borrow out of `x - y`, which
    /// `s_sub_u32` / `s_subb_u32` leave in SCC; the signed order is the
    /// unsigned one of both operands with their sign bits flipped; `>` swaps
    /// the operands, `<=` and `>=` negate. Three instructions (four or five
    /// signed) where a VALU compare needed the operands in VGPRs and its lane
    /// mask turned back into a scalar boolean (seven, llc-22's count too).
    fn scalar_order64(&mut self, pred: IntPred, a: Lowered, b: Lowered) -> Result<Lowered, Diagnostic> {
        if let (Lowered::Imm(x), Lowered::Imm(y)) = (&a, &b) {
            return Ok(Lowered::Imm(u64::from(interp::ops::icmp(pred, 64, *x, *y))));
        }
        let (x, y, negate) = match pred {
            IntPred::Ult | IntPred::Slt => (a, b, false),
            IntPred::Ugt | IntPred::Sgt => (b, a, false),
            IntPred::Ule | IntPred::Sle => (b, a, true),
            IntPred::Uge | IntPred::Sge => (a, b, true),
            IntPred::Eq | IntPred::Ne => unreachable!("64-bit equality has its own compare"),
        };
        let signed = matches!(pred, IntPred::Slt | IntPred::Sle | IntPred::Sgt | IntPred::Sge);
        let halves = |s: &mut Self, l: &Lowered| -> Result<[Src; 2], Diagnostic> {
            Ok(match *l {
                Lowered::Imm(bits) => {
                    let bits = if signed { bits ^ (1 << 63) } else { bits };
                    [Src::Imm(bits as u32), Src::Imm((bits >> 32) as u32)]
                }
                _ => {
                    let p = s.to_s64(l)?;
                    if signed {
                        let flipped = s.vreg(Class::Sgpr);
                        s.emit(Opcode::s_xor_b32, &[Dst::R(flipped)], &[Src::Half(p, 1), Src::Imm(0x8000_0000)], |_| {});
                        [Src::Half(p, 0), Src::R(flipped)]
                    } else {
                        [Src::Half(p, 0), Src::Half(p, 1)]
                    }
                }
            })
        };
        let (hx, hy) = (halves(self, &x)?, halves(self, &y)?);
        let difference = self.vreg(Class::SgprPair);
        let d = self.vreg(Class::Sgpr);
        let (when_less, otherwise) = if negate { (0, 1) } else { (1, 0) };
        // One sequence: the borrow travels in SCC to the select.
        self.emit_seq(&[
            (Opcode::s_sub_u32, &[Dst::Half(difference, 0)], &[hx[0], hy[0]]),
            (Opcode::s_subb_u32, &[Dst::Half(difference, 1)], &[hx[1], hy[1]]),
            (Opcode::s_cselect_b32, &[Dst::R(d)], &[Src::Imm(when_less), Src::Imm(otherwise)]),
        ]);
        Ok(Lowered::Bool(d))
    }
}

pub(super) fn scmp_opcode(pred: IntPred) -> Opcode {
    match pred {
        IntPred::Eq => Opcode::s_cmp_eq_u32,
        IntPred::Ne => Opcode::s_cmp_lg_u32,
        IntPred::Slt => Opcode::s_cmp_lt_i32,
        IntPred::Sle => Opcode::s_cmp_le_i32,
        IntPred::Sgt => Opcode::s_cmp_gt_i32,
        IntPred::Sge => Opcode::s_cmp_ge_i32,
        IntPred::Ult => Opcode::s_cmp_lt_u32,
        IntPred::Ule => Opcode::s_cmp_le_u32,
        IntPred::Ugt => Opcode::s_cmp_gt_u32,
        IntPred::Uge => Opcode::s_cmp_ge_u32,
    }
}

pub(super) fn vcmp32_opcode(pred: IntPred) -> Opcode {
    match pred {
        IntPred::Eq => Opcode::v_cmp_eq_u32,
        IntPred::Ne => Opcode::v_cmp_ne_u32,
        IntPred::Slt => Opcode::v_cmp_lt_i32,
        IntPred::Sle => Opcode::v_cmp_le_i32,
        IntPred::Sgt => Opcode::v_cmp_gt_i32,
        IntPred::Sge => Opcode::v_cmp_ge_i32,
        IntPred::Ult => Opcode::v_cmp_lt_u32,
        IntPred::Ule => Opcode::v_cmp_le_u32,
        IntPred::Ugt => Opcode::v_cmp_gt_u32,
        IntPred::Uge => Opcode::v_cmp_ge_u32,
    }
}

pub(super) fn vcmp64_opcode(pred: IntPred) -> Opcode {
    match pred {
        IntPred::Eq => Opcode::v_cmp_eq_u64,
        IntPred::Ne => Opcode::v_cmp_ne_u64,
        IntPred::Slt => Opcode::v_cmp_lt_i64,
        IntPred::Sle => Opcode::v_cmp_le_i64,
        IntPred::Sgt => Opcode::v_cmp_gt_i64,
        IntPred::Sge => Opcode::v_cmp_ge_i64,
        IntPred::Ult => Opcode::v_cmp_lt_u64,
        IntPred::Ule => Opcode::v_cmp_le_u64,
        IntPred::Ugt => Opcode::v_cmp_gt_u64,
        IntPred::Uge => Opcode::v_cmp_ge_u64,
    }
}

/// The f64 compares (same predicates as f32).
pub(super) fn fcmp64_opcode(pred: FloatPred) -> Opcode {
    match pred {
        FloatPred::Oeq => Opcode::v_cmp_eq_f64,
        FloatPred::One => Opcode::v_cmp_lg_f64,
        FloatPred::Olt => Opcode::v_cmp_lt_f64,
        FloatPred::Ole => Opcode::v_cmp_le_f64,
        FloatPred::Ogt => Opcode::v_cmp_gt_f64,
        FloatPred::Oge => Opcode::v_cmp_ge_f64,
        FloatPred::Ord => Opcode::v_cmp_o_f64,
        FloatPred::Uno => Opcode::v_cmp_u_f64,
        FloatPred::Ueq => Opcode::v_cmp_nlg_f64,
        FloatPred::Une => Opcode::v_cmp_neq_f64,
        FloatPred::Ult => Opcode::v_cmp_nge_f64,
        FloatPred::Ule => Opcode::v_cmp_ngt_f64,
        FloatPred::Ugt => Opcode::v_cmp_nle_f64,
        FloatPred::Uge => Opcode::v_cmp_nlt_f64,
    }
}

/// LLVM's f32 compare mnemonics: `n*` are the unordered negations.
pub(super) fn fcmp_opcode(pred: FloatPred) -> Opcode {
    match pred {
        FloatPred::Oeq => Opcode::v_cmp_eq_f32,
        FloatPred::One => Opcode::v_cmp_lg_f32,
        FloatPred::Olt => Opcode::v_cmp_lt_f32,
        FloatPred::Ole => Opcode::v_cmp_le_f32,
        FloatPred::Ogt => Opcode::v_cmp_gt_f32,
        FloatPred::Oge => Opcode::v_cmp_ge_f32,
        FloatPred::Ord => Opcode::v_cmp_o_f32,
        FloatPred::Uno => Opcode::v_cmp_u_f32,
        FloatPred::Ueq => Opcode::v_cmp_nlg_f32,
        FloatPred::Une => Opcode::v_cmp_neq_f32,
        FloatPred::Ult => Opcode::v_cmp_nge_f32,
        FloatPred::Ule => Opcode::v_cmp_ngt_f32,
        FloatPred::Ugt => Opcode::v_cmp_nle_f32,
        FloatPred::Uge => Opcode::v_cmp_nlt_f32,
    }
}
