//! Integer arithmetic and logic (32- and 64-bit, SALU and VALU), the dispatch of binary operations by type, and 32-bit integer division.

use super::*;

impl<'a> Isel<'a> {
    pub(super) fn binary(&mut self, op: BinOp, ty: &Type, lhs: &Operand, rhs: &Operand, divergent: bool) -> Result<Lowered, Diagnostic> {
        if *ty == Type::I64 && op == BinOp::Mul {
            if let Some(l) = self.mul64_of_extended(lhs, rhs, None, divergent)? {
                return Ok(l);
            }
        }
        if *ty == Type::I64 && op == BinOp::Add {
            // A product of extended halves plus a 64-bit value: one
            // multiply-add (the multiply selected before is left unread, for
            // machine_dce), as the 64-bit high product's columns are summed.
            for (product, addend) in [(lhs, rhs), (rhs, lhs)] {
                let Operand::Value(pv) = product else { continue };
                let Some((a, b)) = self.mul_ext.get(pv).cloned() else { continue };
                let addend = self.lowered(addend);
                if let Some(l) = self.mul64_of_extended(&a, &b, Some(addend), divergent)? {
                    return Ok(l);
                }
            }
        }
        let (a, b) = (self.lowered(lhs), self.lowered(rhs));
        self.binary_values(op, ty, a, b, divergent)
    }

    /// An i64 product of two 32-bit values extended the same way (or
    /// constants that fit): one `v_mad_u64_u32`/`v_mad_i64_i32` with a zero
    /// addend, or `s_mul_i32` and `s_mul_hi` when both are uniform. With an
    /// `addend`, only the multiply-add, where it is divergent and the
    /// addend a VGPR pair, an SGPR pair the constant bus has room for, or
    /// an inline constant (None otherwise: the caller adds).
    fn mul64_of_extended(&mut self, lhs: &Operand, rhs: &Operand, addend: Option<Lowered>, divergent: bool) -> Result<Option<Lowered>, Diagnostic> {
        let narrow = |s: &Self, o: &Operand, signed: bool| -> Option<Operand> {
            match o {
                Operand::Const(c) => {
                    let fits = if signed { c.bits as i64 == c.bits as i32 as i64 } else { c.bits >> 32 == 0 };
                    fits.then(|| Operand::Const(crate::mir::Const { ty: Type::I32, bits: c.bits & 0xffff_ffff }))
                }
                Operand::Value(v) => match s.wide_ext.get(v) {
                    Some((arg, is_signed)) if *is_signed == signed => Some(arg.clone()),
                    _ => None,
                },
            }
        };
        let Some((signed, a, b)) = [false, true].into_iter().find_map(|signed| Some((signed, narrow(self, lhs, signed)?, narrow(self, rhs, signed)?))) else {
            return Ok(None);
        };
        if matches!((&a, &b), (Operand::Const(_), Operand::Const(_))) {
            return Ok(None);
        }
        let (la, lb) = (self.lowered(&a), self.lowered(&b));
        let divergent = divergent || in_vector_registers(&la) || in_vector_registers(&lb) || addend.as_ref().is_some_and(in_vector_registers);
        if addend.is_some() && !divergent {
            return Ok(None);
        }
        if !divergent {
            let (sa, sb) = (self.src_of(&la)?, self.src_of(&lb)?);
            let d = self.vreg(Class::SgprPair);
            let hi = if signed { Opcode::s_mul_hi_i32 } else { Opcode::s_mul_hi_u32 };
            self.emit_seq(&[(Opcode::s_mul_i32, &[Dst::Half(d, 0)], &[sa, sb]), (hi, &[Dst::Half(d, 1)], &[sa, sb])]);
            return Ok(Some(Lowered::S64(d)));
        }
        // VOP3: one SGPR (two on gfx11) and no literal before gfx10.
        let gfx11 = self.target.gpu.generation() == isa::Generation::Gfx11;
        let mut bus = if gfx11 { 2 } else { 1 };
        let mut literal = gfx11;
        let sc = match addend {
            None => Src::Imm(0),
            Some(Lowered::V64(lo, hi)) => Src::VPair(lo, hi),
            Some(Lowered::Imm(bits)) if bits <= 64 => Src::Imm(bits as u32),
            Some(Lowered::S64(pair)) if bus > 0 => {
                bus -= 1;
                Src::R(pair)
            }
            Some(_) => return Ok(None),
        };
        let mut src = |s: &mut Self, l: &Lowered| -> Result<Src, Diagnostic> {
            Ok(match *l {
                Lowered::S(r) if bus > 0 => {
                    bus -= 1;
                    Src::R(r)
                }
                Lowered::Imm(bits) if matches!(isa::Operand::imm32(bits as u32), isa::Operand::Const(_)) => Src::Imm(bits as u32),
                Lowered::Imm(bits) if literal && bus > 0 => {
                    literal = false;
                    bus -= 1;
                    Src::Imm(bits as u32)
                }
                _ => Src::R(s.to_v(l)?),
            })
        };
        let (sa, sb) = (src(self, &la)?, src(self, &lb)?);
        let (lo, hi) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
        let carry = self.vreg(self.mask_class());
        let opcode = if signed { Opcode::v_mad_i64_i32 } else { Opcode::v_mad_u64_u32 };
        self.emit(opcode, &[Dst::VPair(lo, hi), Dst::R(carry)], &[sa, sb, sc], |_| {});
        Ok(Some(Lowered::V64(lo, hi)))
    }

    pub(super) fn binary_values(&mut self, op: BinOp, ty: &Type, a: Lowered, b: Lowered, divergent: bool) -> Result<Lowered, Diagnostic> {
        let divergent = divergent || in_vector_registers(&a) || in_vector_registers(&b);
        if let (Lowered::Imm(x), Lowered::Imm(y)) = (&a, &b) {
            // Folded by the interpreter's own semantics (the oracle); what it
            // refuses (division by zero, overflow) is left to run.
            if let Some(folded) = (*ty == Type::I32).then(|| interp::ops::int_binary(op, 32, *x, *y).ok()).flatten() {
                return Ok(Lowered::Imm(folded));
            }
        }
        match op {
            BinOp::CopySign => return self.copysign(ty, a, b),
            BinOp::Ldexp => return self.ldexp(ty, a, b),
            _ => {}
        }
        match ty {
            Type::I32 => self.binary32(op, a, b, divergent),
            // f16 add, sub, mul, min and max with the packed 16-bit instructions
            // (the low halves; the high halves compute whatever is there).
            Type::F16 if op != BinOp::FDiv => {
                let (opcode, neg_b) = match op {
                    BinOp::FAdd => (Opcode::v_pk_add_f16, false),
                    BinOp::FSub => (Opcode::v_pk_add_f16, true),
                    BinOp::FMul => (Opcode::v_pk_mul_f16, false),
                    BinOp::FMin => (Opcode::v_pk_min_f16, false),
                    BinOp::FMax => (Opcode::v_pk_max_f16, false),
                    _ => unreachable!("verified: float op on f16"),
                };
                // IEEE-mode min/max return NaN for a signalling NaN operand; MIR
                // ignores any single NaN, so quiet the operands first.
                let (a, b) = if matches!(op, BinOp::FMin | BinOp::FMax) { (self.packed16(Opcode::v_pk_max_f16, &[a.clone(), a], 0)?, self.packed16(Opcode::v_pk_max_f16, &[b.clone(), b], 0)?) } else { (a, b) };
                self.packed16(opcode, &[a, b], if neg_b { 0b10 } else { 0 })
            }
            // f16 division in f32, rounded once to f16: f32 has 24 >= 2 * 11 + 2
            // bits, so it rounds as if done in f16 directly.
            Type::F16 => {
                let (a, b) = (self.f16_to_f32(a)?, self.f16_to_f32(b)?);
                let wide = self.binary_values(op, &Type::F32, a, b, divergent)?;
                self.f32_to_f16(wide)
            }
            Type::F32 => {
                let opcode = match op {
                    BinOp::FAdd => Opcode::v_add_f32,
                    BinOp::FSub => Opcode::v_sub_f32,
                    BinOp::FMul => Opcode::v_mul_f32,
                    BinOp::FMin => Opcode::v_min_f32,
                    BinOp::FMax => Opcode::v_max_f32,
                    BinOp::FDiv => return self.fdiv32(a, b),
                    _ => unreachable!("verified: float op on f32"),
                };
                // In IEEE mode min/max return NaN for a signalling NaN operand; MIR
                // ignores any single NaN, so quiet the operands first (max(x, x)).
                let (a, b) = if matches!(op, BinOp::FMin | BinOp::FMax) { (self.quiet32(a)?, self.quiet32(b)?) } else { (a, b) };
                let d = self.vreg(Class::Vgpr);
                let commutative = !matches!(op, BinOp::FSub);
                self.valu(opcode, d, &[a, b], commutative)?;
                Ok(Lowered::V(d))
            }
            Type::F64 => self.binary_f64(op, a, b),
            Type::I1 => {
                // Logic on booleans: uniform -> SALU on 0/1, divergent -> mask ops.
                if divergent {
                    let (ma, mb) = (self.to_mask(&a)?, self.to_mask(&b)?);
                    let m = self.vreg(self.mask_class());
                    let opcode = match (op, self.wave64()) {
                        (BinOp::And, true) => Opcode::s_and_b64,
                        (BinOp::Or, true) => Opcode::s_or_b64,
                        (_, true) => Opcode::s_xor_b64,
                        (BinOp::And, false) => Opcode::s_and_b32,
                        (BinOp::Or, false) => Opcode::s_or_b32,
                        (_, false) => Opcode::s_xor_b32,
                    };
                    self.emit(opcode, &[Dst::R(m)], &[Src::R(ma), Src::R(mb)], |_| {});
                    Ok(Lowered::Mask(m))
                } else {
                    let (sa, sb) = (self.to_bool(&a)?, self.to_bool(&b)?);
                    let d = self.vreg(Class::Sgpr);
                    let opcode = match op {
                        BinOp::And => Opcode::s_and_b32,
                        BinOp::Or => Opcode::s_or_b32,
                        _ => Opcode::s_xor_b32,
                    };
                    self.emit(opcode, &[Dst::R(d)], &[Src::R(sa), Src::R(sb)], |_| {});
                    Ok(Lowered::Bool(d))
                }
            }
            Type::I64 if matches!(op, BinOp::Add | BinOp::Sub | BinOp::And | BinOp::Or | BinOp::Xor) => self.binary64(op, a, b, divergent),
            Type::I64 if matches!(op, BinOp::Shl | BinOp::LShr | BinOp::AShr) => self.shift64(op, a, b, divergent),
            Type::I64 if op == BinOp::Mul => self.mul64(a, b),
            other => Err(self.error(format!("'{}' on {other} is not supported by the code generator yet", op.mnemonic()))),
        }
    }

    pub(super) fn binary32(&mut self, op: BinOp, a: Lowered, b: Lowered, divergent: bool) -> Result<Lowered, Diagnostic> {
        // x * 2^k is x << k (a full-rate instruction instead of a quarter-rate one).
        if op == BinOp::Mul {
            for (x, c) in [(&a, &b), (&b, &a)] {
                if let Lowered::Imm(bits) = c {
                    let v = *bits as u32;
                    if v.is_power_of_two() {
                        let shift = Lowered::Imm(u64::from(v.trailing_zeros()));
                        return self.binary32(BinOp::Shl, x.clone(), shift, divergent);
                    }
                }
            }
        }
        // x + 0, x - 0, x | 0, x ^ 0, x << 0 ... are x.
        if matches!(op, BinOp::Add | BinOp::Sub | BinOp::Or | BinOp::Xor | BinOp::Shl | BinOp::LShr | BinOp::AShr) && matches!(b, Lowered::Imm(0)) {
            return Ok(a);
        }
        if matches!(op, BinOp::Add | BinOp::Or | BinOp::Xor) && matches!(a, Lowered::Imm(0)) {
            return Ok(b);
        }
        if matches!(op, BinOp::UDiv | BinOp::URem) {
            return self.udiv32(a, b, op == BinOp::URem);
        }
        // 24-bit multiplies exist on the vector unit only (full rate there).
        if matches!(op, BinOp::Mul24S | BinOp::Mul24U) {
            let d = self.vreg(Class::Vgpr);
            let opcode = if op == BinOp::Mul24S { Opcode::v_mul_i32_i24 } else { Opcode::v_mul_u32_u24 };
            self.valu(opcode, d, &[a, b], true)?;
            return Ok(Lowered::V(d));
        }
        if matches!(op, BinOp::SDiv | BinOp::SRem) {
            return self.sdiv32(a, b, op == BinOp::SRem);
        }
        if !divergent {
            let opcode = match op {
                BinOp::Add => Opcode::s_add_u32,
                BinOp::Sub => Opcode::s_sub_u32,
                BinOp::Mul => Opcode::s_mul_i32,
                BinOp::MulHiU => Opcode::s_mul_hi_u32,
                BinOp::MulHiS => Opcode::s_mul_hi_i32,
                BinOp::And => Opcode::s_and_b32,
                BinOp::Or => Opcode::s_or_b32,
                BinOp::Xor => Opcode::s_xor_b32,
                BinOp::Shl => Opcode::s_lshl_b32,
                BinOp::LShr => Opcode::s_lshr_b32,
                BinOp::AShr => Opcode::s_ashr_i32,
                BinOp::SMin => Opcode::s_min_i32,
                BinOp::SMax => Opcode::s_max_i32,
                BinOp::UMin => Opcode::s_min_u32,
                BinOp::UMax => Opcode::s_max_u32,
                _ => unreachable!("integer op"),
            };
            // SOP2 takes one literal: a second goes to an SGPR first.
            let a = if is_literal(&a) && is_literal(&b) { Lowered::S(self.to_s(&a)?) } else { a };
            let (sa, sb) = (self.scalar_src(&a)?, self.scalar_src(&b)?);
            let d = self.vreg(Class::Sgpr);
            self.emit(opcode, &[Dst::R(d)], &[sa, sb], |_| {});
            return Ok(Lowered::S(d));
        }
        let d = self.vreg(Class::Vgpr);
        // VALU shifts take the amount first ("rev" forms); sub of (a, b) = subrev(b, a).
        let (opcode, srcs, commutative) = match op {
            BinOp::Add => (Opcode::v_add_u32, vec![a, b], true),
            BinOp::Sub => {
                if matches!(b, Lowered::S(_) | Lowered::Imm(..)) && matches!(a, Lowered::V(_)) {
                    (Opcode::v_subrev_u32, vec![b, a], false)
                } else {
                    (Opcode::v_sub_u32, vec![a, b], false)
                }
            }
            BinOp::Mul => (Opcode::v_mul_lo_u32, vec![a, b], true),
            BinOp::MulHiU => (Opcode::v_mul_hi_u32, vec![a, b], true),
            BinOp::MulHiS => (Opcode::v_mul_hi_i32, vec![a, b], true),
            BinOp::And => (Opcode::v_and_b32, vec![a, b], true),
            BinOp::Or => (Opcode::v_or_b32, vec![a, b], true),
            BinOp::Xor => (Opcode::v_xor_b32, vec![a, b], true),
            BinOp::Shl => (Opcode::v_lshlrev_b32, vec![b, a], false),
            BinOp::LShr => (Opcode::v_lshrrev_b32, vec![b, a], false),
            BinOp::AShr => (Opcode::v_ashrrev_i32, vec![b, a], false),
            BinOp::SMin => (Opcode::v_min_i32, vec![a, b], true),
            BinOp::SMax => (Opcode::v_max_i32, vec![a, b], true),
            BinOp::UMin => (Opcode::v_min_u32, vec![a, b], true),
            BinOp::UMax => (Opcode::v_max_u32, vec![a, b], true),
            _ => unreachable!("integer op"),
        };
        self.valu(opcode, d, &srcs, commutative)?;
        Ok(Lowered::V(d))
    }

    pub(super) fn scalar_src(&mut self, l: &Lowered) -> Result<Src, Diagnostic> {
        Ok(match *l {
            Lowered::Imm(bits) => Src::Imm(bits as u32),
            _ => Src::R(self.to_s(l)?),
        })
    }

    pub(super) fn binary64(&mut self, op: BinOp, a: Lowered, b: Lowered, divergent: bool) -> Result<Lowered, Diagnostic> {
        if !divergent {
            let (op_lo, op_hi) = match op {
                BinOp::Add => (Opcode::s_add_u32, Opcode::s_addc_u32),
                BinOp::Sub => (Opcode::s_sub_u32, Opcode::s_subb_u32),
                BinOp::And => (Opcode::s_and_b32, Opcode::s_and_b32),
                BinOp::Or => (Opcode::s_or_b32, Opcode::s_or_b32),
                _ => (Opcode::s_xor_b32, Opcode::s_xor_b32),
            };
            let halves = |s: &mut Self, l: &Lowered| -> Result<[Src; 2], Diagnostic> {
                Ok(match *l {
                    Lowered::Imm(bits) => [Src::Imm(bits as u32), Src::Imm((bits >> 32) as u32)],
                    _ => {
                        let p = s.to_s64(l)?;
                        [Src::Half(p, 0), Src::Half(p, 1)]
                    }
                })
            };
            let (ha, hb) = (halves(self, &a)?, halves(self, &b)?);
            let d = self.vreg(Class::SgprPair);
            // One sequence: the carry travels in SCC from the first instruction to
            // the second, and nothing may come between them.
            self.emit_seq(&[(op_lo, &[Dst::Half(d, 0)], &[ha[0], hb[0]]), (op_hi, &[Dst::Half(d, 1)], &[ha[1], hb[1]])]);
            return Ok(Lowered::S64(d));
        }
        if matches!(op, BinOp::Add | BinOp::Sub) {
            return self.add64_vector(op, a, b);
        }
        // Bitwise: half by half. A constant or uniform operand's halves are
        // read where they are (one per instruction: the constant bus carries
        // it); a constant half that decides the result (`x & 0`, `x | 0`,
        // `x & -1`, ...) costs a move or nothing.
        let (a, b) = if matches!(a, Lowered::Imm(_) | Lowered::S64(_)) { (b, a) } else { (a, b) };
        let (al, ah) = self.to_v64(&a)?;
        let hb: [Src; 2] = match b {
            Lowered::Imm(bits) => [Src::Imm(bits as u32), Src::Imm((bits >> 32) as u32)],
            Lowered::S64(p) => [Src::Half(p, 0), Src::Half(p, 1)],
            _ => {
                let (bl, bh) = self.to_v64(&b)?;
                [self.known_zero(bl), self.known_zero(bh)]
            }
        };
        let opcode = match op {
            BinOp::And => Opcode::v_and_b32,
            BinOp::Or => Opcode::v_or_b32,
            _ => Opcode::v_xor_b32,
        };
        let half = |s: &mut Self, x: ra::VReg, y: Src| -> ra::VReg {
            match (op, y) {
                (BinOp::And, Src::Imm(u32::MAX)) | (BinOp::Or | BinOp::Xor, Src::Imm(0)) => x,
                (BinOp::And, Src::Imm(0)) => s.zero_vgpr(),
                (BinOp::Or, Src::Imm(u32::MAX)) => s.vector_constant(u32::MAX),
                _ => {
                    let r = s.vreg(Class::Vgpr);
                    s.emit(opcode, &[Dst::R(r)], &[y, Src::R(x)], |_| {});
                    r
                }
            }
        };
        let lo = half(self, al, hb[0]);
        let hi = half(self, ah, hb[1]);
        Ok(Lowered::V64(lo, hi))
    }

    /// A divergent 64-bit add or subtract: the carry pair (VOP3 forms). A
    /// uniform operand's halves and inline constants are read where they are,
    /// as far as the constant bus allows (one SGPR or literal per
    /// instruction before gfx10, where VOP3 takes no literal; two on gfx11);
    /// the carry-in of the high half counts against it.
    fn add64_vector(&mut self, op: BinOp, a: Lowered, b: Lowered) -> Result<Lowered, Diagnostic> {
        if let Some(sum) = self.lshl_add64(op, &a, &b)? {
            return Ok(sum);
        }
        let gfx11 = self.target.gpu.generation() == isa::Generation::Gfx11;
        let halves = |s: &mut Self, l: &Lowered| -> Result<[Src; 2], Diagnostic> {
            Ok(match *l {
                Lowered::S64(p) => [Src::Half(p, 0), Src::Half(p, 1)],
                Lowered::Imm(bits) => [Src::Imm(bits as u32), Src::Imm((bits >> 32) as u32)],
                _ => {
                    let (lo, hi) = s.to_v64(l)?;
                    [s.known_zero(lo), s.known_zero(hi)]
                }
            })
        };
        let (ha, hb) = (halves(self, &a)?, halves(self, &b)?);
        // Sources the constant bus cannot carry are moved into VGPRs first.
        let legal = |s: &mut Self, srcs: [Src; 2], budget: u32| -> [Src; 2] {
            let mut left = budget;
            let mut literals = if gfx11 { 1 } else { 0 };
            srcs.map(|src| {
                let cost = match src {
                    Src::Half(..) => Some(false),
                    Src::Imm(v) if !matches!(isa::Operand::imm32(v), isa::Operand::Const(_)) => Some(true),
                    _ => None,
                };
                match cost {
                    Some(literal) if left > 0 && (!literal || literals > 0) => {
                        left -= 1;
                        if literal {
                            literals -= 1;
                        }
                        src
                    }
                    Some(_) => Src::R(s.vector_copy(src)),
                    None => src,
                }
            })
        };
        let bus = if gfx11 { 2 } else { 1 };
        let lo_srcs = legal(self, [ha[0], hb[0]], bus);
        let hi_srcs = legal(self, [ha[1], hb[1]], bus - 1);
        let (lo, hi) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
        let carry = self.vreg(self.mask_class());
        let (op_lo, op_hi) = if op == BinOp::Add { (Opcode::v_add_co_u32, Opcode::v_addc_co_u32) } else { (Opcode::v_sub_co_u32, Opcode::v_subb_co_u32) };
        self.emit(op_lo, &[Dst::R(lo), Dst::R(carry)], &lo_srcs, |i| i.e64 = true);
        let carry_out = self.vreg(self.mask_class());
        self.emit(op_hi, &[Dst::R(hi), Dst::R(carry_out)], &[hi_srcs[0], hi_srcs[1], Src::R(carry)], |i| i.e64 = true);
        Ok(Lowered::V64(lo, hi))
    }

    /// gfx942's one-instruction 64-bit add, `v_lshl_add_u64 d, a, 0, b`: no
    /// carry, so none of the carry pair's SGPR and none of the wait states
    /// between its halves (gfx942 wants two between a VALU carry write and
    /// its read). It reads and writes aligned pairs, so it is taken only when
    /// every VGPR operand was written as a pair by one instruction
    /// (`pair_defs`): placement keeps those in place, where halves computed
    /// apart (a zero extension's shared zero VGPR, say) would cost window
    /// copies that the carry form, reading halves, does not need. A
    /// subtraction of an inline constant is the addition of its negation.
    fn lshl_add64(&mut self, op: BinOp, a: &Lowered, b: &Lowered) -> Result<Option<Lowered>, Diagnostic> {
        if self.target.gpu != isa::Gpu::Gfx942 {
            return Ok(None);
        }
        let b = match (op, b) {
            (BinOp::Add, _) => b.clone(),
            (_, Lowered::Imm(bits)) if inline_i64(bits.wrapping_neg()) => Lowered::Imm(bits.wrapping_neg()),
            _ => return Ok(None),
        };
        let paired = |s: &Self, l: &Lowered| match *l {
            Lowered::V64(lo, hi) => s.pair_defs.contains(&(lo, hi)),
            Lowered::S64(_) | Lowered::Imm(_) => true,
            _ => false,
        };
        if !paired(self, a) || !paired(self, &b) {
            return Ok(None);
        }
        // A uniform operand or a constant first (src0 and src2 are alike).
        let (a, b) = if matches!(a, Lowered::S64(_) | Lowered::Imm(_)) { (b, a.clone()) } else { (a.clone(), b) };
        let mut scalars = self.constant_bus();
        let sa = self.i64_src(&a, &mut scalars)?;
        let sb = self.i64_src(&b, &mut scalars)?;
        let (lo, hi) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
        self.emit(Opcode::v_lshl_add_u64, &[Dst::VPair(lo, hi)], &[sa, Src::Imm(0), sb], |_| {});
        Ok(Some(Lowered::V64(lo, hi)))
    }

    pub(super) fn shift64(&mut self, op: BinOp, a: Lowered, b: Lowered, divergent: bool) -> Result<Lowered, Diagnostic> {
        // The amount is the low 6 bits of the i64 amount (modulo 64, as MIR says).
        let amount = match b {
            Lowered::Imm(bits) => Lowered::Imm(bits & 63),
            Lowered::S64(p) => {
                let s = self.vreg(Class::Sgpr);
                self.emit(Opcode::s_and_b32, &[Dst::R(s)], &[Src::Half(p, 0), Src::Imm(63)], |_| {});
                Lowered::S(s)
            }
            Lowered::V64(lo, _) => Lowered::V(lo),
            _ => return Err(self.error("internal: i64 shift amount")),
        };
        if !divergent {
            let p = self.to_s64(&a)?;
            let d = self.vreg(Class::SgprPair);
            let opcode = match op {
                BinOp::Shl => Opcode::s_lshl_b64,
                BinOp::LShr => Opcode::s_lshr_b64,
                _ => Opcode::s_ashr_i64,
            };
            let amount = self.scalar_src(&amount)?;
            self.emit(opcode, &[Dst::R(d)], &[Src::R(p), amount], |_| {});
            return Ok(Lowered::S64(d));
        }
        let (al, ah) = self.to_v64(&a)?;
        // By 32 or more: one half moves, the other is zero (or the sign).
        if let Lowered::Imm(k) = amount {
            if k >= 32 {
                let k = (k - 32) as u32;
                let moved = self.vreg(Class::Vgpr);
                let shift = |s: &mut Self, opcode: Opcode, d: ra::VReg, x: ra::VReg, by: u32| {
                    if by == 0 && opcode != Opcode::v_ashrrev_i32 {
                        s.emit(Opcode::v_mov_b32, &[Dst::R(d)], &[Src::R(x)], |_| {});
                    } else {
                        s.emit(opcode, &[Dst::R(d)], &[Src::Imm(by), Src::R(x)], |_| {});
                    }
                };
                return Ok(match op {
                    BinOp::Shl => {
                        let zero = self.zero_vgpr();
                        shift(self, Opcode::v_lshlrev_b32, moved, al, k);
                        Lowered::V64(zero, moved)
                    }
                    BinOp::LShr => {
                        let zero = self.zero_vgpr();
                        shift(self, Opcode::v_lshrrev_b32, moved, ah, k);
                        Lowered::V64(moved, zero)
                    }
                    _ => {
                        let sign = self.vreg(Class::Vgpr);
                        shift(self, Opcode::v_ashrrev_i32, sign, ah, 31);
                        if k == 0 {
                            Lowered::V64(ah, sign)
                        } else {
                            shift(self, Opcode::v_ashrrev_i32, moved, ah, k);
                            Lowered::V64(moved, sign)
                        }
                    }
                });
            }
        }
        // By 1 to 31: two 32-bit instructions on the halves where they are,
        // one of them a funnel shift (`v_alignbit_b32 d, hi, lo, n` is the
        // low word of `(hi:lo) >> n`). The 64-bit shift would need both
        // halves copied into an aligned window and its result copied out
        // (docs/regalloc.md), so this costs the same or less.
        if let Lowered::Imm(k) = amount {
            if k == 0 {
                return Ok(Lowered::V64(al, ah));
            }
            let k = k as u32;
            // A zero high half (a zero extension): 32-bit shifts only.
            if self.zero_vgprs.contains(&ah) && op != BinOp::AShr {
                // Shl: the high half is what leaves the low one; LShr: the low half.
                let d = self.vreg(Class::Vgpr);
                let by = if op == BinOp::Shl { 32 - k } else { k };
                self.emit(Opcode::v_lshrrev_b32, &[Dst::R(d)], &[Src::Imm(by), Src::R(al)], |_| {});
                return Ok(if op == BinOp::Shl {
                    let lo = self.vreg(Class::Vgpr);
                    self.emit(Opcode::v_lshlrev_b32, &[Dst::R(lo)], &[Src::Imm(k), Src::R(al)], |_| {});
                    Lowered::V64(lo, d)
                } else {
                    Lowered::V64(d, ah)
                });
            }
            let (lo, hi) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
            match op {
                BinOp::Shl => {
                    self.emit(Opcode::v_alignbit_b32, &[Dst::R(hi)], &[Src::R(ah), Src::R(al), Src::Imm(32 - k)], |_| {});
                    self.emit(Opcode::v_lshlrev_b32, &[Dst::R(lo)], &[Src::Imm(k), Src::R(al)], |_| {});
                }
                _ => {
                    let high = if op == BinOp::LShr { Opcode::v_lshrrev_b32 } else { Opcode::v_ashrrev_i32 };
                    self.emit(Opcode::v_alignbit_b32, &[Dst::R(lo)], &[Src::R(ah), Src::R(al), Src::Imm(k)], |_| {});
                    self.emit(high, &[Dst::R(hi)], &[Src::Imm(k), Src::R(ah)], |_| {});
                }
            }
            return Ok(Lowered::V64(lo, hi));
        }
        let (lo, hi) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
        let opcode = match op {
            BinOp::Shl => Opcode::v_lshlrev_b64,
            BinOp::LShr => Opcode::v_lshrrev_b64,
            _ => Opcode::v_ashrrev_i64,
        };
        let amount = match amount {
            Lowered::Imm(bits) => Src::Imm(bits as u32),
            other => Src::R(self.to_v(&other)?),
        };
        self.emit(opcode, &[Dst::VPair(lo, hi)], &[amount, Src::VPair(al, ah)], |_| {});
        Ok(Lowered::V64(lo, hi))
    }

    pub(super) fn mul64(&mut self, a: Lowered, b: Lowered) -> Result<Lowered, Diagnostic> {
        // (ah:al) * (bh:bl) mod 2^64 = al*bl + ((al*bh + ah*bl) << 32). A
        // constant operand (second, by commuting) has its halves read as
        // inline constants where they are, and cross terms by a zero half
        // (a constant's, or a known-zero high half) or by one are not
        // multiplied; the high half is one `v_add3_u32` of what is left.
        let (a, b) = if matches!(a, Lowered::Imm(_)) { (b, a) } else { (a, b) };
        let (al, ah) = self.to_v64(&a)?;
        let src32 = |s: &mut Self, bits: u32| if matches!(isa::Operand::imm32(bits), isa::Operand::Const(_)) { Src::Imm(bits) } else { Src::R(s.vector_constant(bits)) };
        // A half of b: a constant, or a register (or a known zero).
        enum Half {
            Const(u32),
            Reg(ra::VReg),
        }
        let (bl, bh) = match b {
            Lowered::Imm(bits) => (Half::Const(bits as u32), Half::Const((bits >> 32) as u32)),
            ref other => {
                let (l, h) = self.to_v64(other)?;
                (Half::Reg(l), if self.zero_vgprs.contains(&h) { Half::Const(0) } else { Half::Reg(h) })
            }
        };
        let bl_src = match bl {
            Half::Const(c) => src32(self, c),
            Half::Reg(r) => Src::R(r),
        };
        let (lo, hi0) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
        self.emit(Opcode::v_mul_lo_u32, &[Dst::R(lo)], &[Src::R(al), bl_src], |_| {});
        self.emit(Opcode::v_mul_hi_u32, &[Dst::R(hi0)], &[Src::R(al), bl_src], |_| {});
        let mut terms: Vec<ra::VReg> = Vec::new();
        let mut cross = |s: &mut Self, x: ra::VReg, y: &Half| match *y {
            Half::Const(0) => {}
            Half::Const(1) => terms.push(x),
            Half::Const(c) => {
                let t = s.vreg(Class::Vgpr);
                let src = src32(s, c);
                s.emit(Opcode::v_mul_lo_u32, &[Dst::R(t)], &[Src::R(x), src], |_| {});
                terms.push(t);
            }
            Half::Reg(r) => {
                let t = s.vreg(Class::Vgpr);
                s.emit(Opcode::v_mul_lo_u32, &[Dst::R(t)], &[Src::R(x), Src::R(r)], |_| {});
                terms.push(t);
            }
        };
        cross(self, al, &bh);
        if !self.zero_vgprs.contains(&ah) {
            cross(self, ah, &bl);
        }
        let hi = match terms[..] {
            [] => hi0,
            [t] => {
                let hi = self.vreg(Class::Vgpr);
                self.emit(Opcode::v_add_u32, &[Dst::R(hi)], &[Src::R(hi0), Src::R(t)], |_| {});
                hi
            }
            [t1, t2] => {
                let hi = self.vreg(Class::Vgpr);
                self.emit(Opcode::v_add3_u32, &[Dst::R(hi)], &[Src::R(hi0), Src::R(t1), Src::R(t2)], |_| {});
                hi
            }
            _ => unreachable!("two cross terms"),
        };
        Ok(Lowered::V64(lo, hi))
    }

    /// Unsigned 32-bit division: a reciprocal estimate refined by one Newton step
    /// and two corrections (exact for every operand pair; see docs/pipeline.md).
    pub(super) fn udiv32(&mut self, a: Lowered, b: Lowered, remainder: bool) -> Result<Lowered, Diagnostic> {
        let n = self.to_v(&a)?;
        let d = self.to_v(&b)?;
        let v = |s: &mut Self| s.vreg(Class::Vgpr);
        let (df, rcp, scaled, z) = (v(self), v(self), v(self), v(self));
        self.emit(Opcode::v_cvt_f32_u32, &[Dst::R(df)], &[Src::R(d)], |_| {});
        self.emit(Opcode::v_rcp_iflag_f32, &[Dst::R(rcp)], &[Src::R(df)], |_| {});
        self.emit(Opcode::v_mul_f32, &[Dst::R(scaled)], &[Src::Imm(0x4f7f_fffe), Src::R(rcp)], |_| {});
        self.emit(Opcode::v_cvt_u32_f32, &[Dst::R(z)], &[Src::R(scaled)], |_| {});
        let (negd, t, hi, z2) = (v(self), v(self), v(self), v(self));
        self.emit(Opcode::v_sub_u32, &[Dst::R(negd)], &[Src::Imm(0), Src::R(d)], |_| {});
        self.emit(Opcode::v_mul_lo_u32, &[Dst::R(t)], &[Src::R(negd), Src::R(z)], |_| {});
        self.emit(Opcode::v_mul_hi_u32, &[Dst::R(hi)], &[Src::R(z), Src::R(t)], |_| {});
        self.emit(Opcode::v_add_u32, &[Dst::R(z2)], &[Src::R(z), Src::R(hi)], |_| {});
        let (q, qd, r) = (v(self), v(self), v(self));
        self.emit(Opcode::v_mul_hi_u32, &[Dst::R(q)], &[Src::R(n), Src::R(z2)], |_| {});
        self.emit(Opcode::v_mul_lo_u32, &[Dst::R(qd)], &[Src::R(q), Src::R(d)], |_| {});
        self.emit(Opcode::v_sub_u32, &[Dst::R(r)], &[Src::R(n), Src::R(qd)], |_| {});
        let (mut q, mut r) = (q, r);
        for _ in 0..2 {
            let ge = self.vreg(self.mask_class());
            self.emit(Opcode::v_cmp_ge_u32, &[Dst::R(ge)], &[Src::R(r), Src::R(d)], |i| i.e64 = true);
            let (q1, r1, q2, r2) = (v(self), v(self), v(self), v(self));
            self.emit(Opcode::v_add_u32, &[Dst::R(q1)], &[Src::Imm(1), Src::R(q)], |_| {});
            self.emit(Opcode::v_sub_u32, &[Dst::R(r1)], &[Src::R(r), Src::R(d)], |_| {});
            self.emit(Opcode::v_cndmask_b32, &[Dst::R(q2)], &[Src::R(q), Src::R(q1), Src::R(ge)], |i| i.e64 = true);
            self.emit(Opcode::v_cndmask_b32, &[Dst::R(r2)], &[Src::R(r), Src::R(r1), Src::R(ge)], |i| i.e64 = true);
            q = q2;
            r = r2;
        }
        Ok(Lowered::V(if remainder { r } else { q }))
    }

    /// Signed division via the unsigned one on magnitudes; the quotient is negative
    /// when the signs differ, the remainder has the dividend's sign.
    pub(super) fn sdiv32(&mut self, a: Lowered, b: Lowered, remainder: bool) -> Result<Lowered, Diagnostic> {
        let (n, d) = (self.to_v(&a)?, self.to_v(&b)?);
        let v = |s: &mut Self| s.vreg(Class::Vgpr);
        let (sn, sd, an0, ad0, an, ad) = (v(self), v(self), v(self), v(self), v(self), v(self));
        self.emit(Opcode::v_ashrrev_i32, &[Dst::R(sn)], &[Src::Imm(31), Src::R(n)], |_| {});
        self.emit(Opcode::v_ashrrev_i32, &[Dst::R(sd)], &[Src::Imm(31), Src::R(d)], |_| {});
        // |x| = (x + s) ^ s with s = x >> 31.
        self.emit(Opcode::v_add_u32, &[Dst::R(an0)], &[Src::R(n), Src::R(sn)], |_| {});
        self.emit(Opcode::v_add_u32, &[Dst::R(ad0)], &[Src::R(d), Src::R(sd)], |_| {});
        self.emit(Opcode::v_xor_b32, &[Dst::R(an)], &[Src::R(an0), Src::R(sn)], |_| {});
        self.emit(Opcode::v_xor_b32, &[Dst::R(ad)], &[Src::R(ad0), Src::R(sd)], |_| {});
        let Lowered::V(u) = self.udiv32(Lowered::V(an), Lowered::V(ad), remainder)? else { unreachable!() };
        let sign = if remainder {
            sn
        } else {
            let s = v(self);
            self.emit(Opcode::v_xor_b32, &[Dst::R(s)], &[Src::R(sn), Src::R(sd)], |_| {});
            s
        };
        let (x, r) = (v(self), v(self));
        self.emit(Opcode::v_xor_b32, &[Dst::R(x)], &[Src::R(u), Src::R(sign)], |_| {});
        self.emit(Opcode::v_sub_u32, &[Dst::R(r)], &[Src::R(x), Src::R(sign)], |_| {});
        Ok(Lowered::V(r))
    }
}
