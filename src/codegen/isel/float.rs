//! Floating-point arithmetic that is more than one instruction: correctly rounded division and square root, f64 operations, quieting NaNs for min/max.

use super::*;

impl<'a> Isel<'a> {
    /// Correctly rounded f32 division (the scale / reciprocal / Newton / fixup
    /// sequence). VCC carries the scale flag from the second v_div_scale to
    /// v_div_fmas across several selected instructions: regalloc2 may put moves
    /// and spill code between them, so nothing expansion adds between
    /// instructions may write VCC (expand.rs `whole_wave`).
    /// A packed f16 instruction (VOP3P) on the low halves of VGPRs: the
    /// operands in VGPRs (a packed instruction reads an inline constant or a
    /// literal differently per generation), `neg` the low-half negations.
    pub(super) fn packed16(&mut self, opcode: Opcode, srcs: &[Lowered], neg: u8) -> Result<Lowered, Diagnostic> {
        let regs = srcs.iter().map(|s| self.to_v(s).map(Src::R)).collect::<Result<Vec<Src>, Diagnostic>>()?;
        let d = self.vreg(Class::Vgpr);
        self.emit(opcode, &[Dst::R(d)], &regs, |i| i.mods.neg = neg);
        Ok(Lowered::V(d))
    }

    /// `copysign`: one bitfield insert of the sign, `(mask & a) | (!mask & b)`
    /// with the magnitude mask (on the high half of an f64; an f16's bits above
    /// 16 are undefined anyway).
    pub(super) fn copysign(&mut self, ty: &Type, a: Lowered, b: Lowered) -> Result<Lowered, Diagnostic> {
        let d = self.vreg(Class::Vgpr);
        match ty {
            Type::F64 => {
                let ((lo, hi), (_, sign)) = (self.to_v64(&a)?, self.to_v64(&b)?);
                self.valu(Opcode::v_bfi_b32, d, &[Lowered::Imm(0x7fff_ffff), Lowered::V(hi), Lowered::V(sign)], false)?;
                Ok(Lowered::V64(lo, d))
            }
            _ => {
                let mask = if *ty == Type::F16 { 0x7fff } else { 0x7fff_ffff };
                self.valu(Opcode::v_bfi_b32, d, &[Lowered::Imm(mask), a, b], false)?;
                Ok(Lowered::V(d))
            }
        }
    }

    /// `ldexp`: `v_ldexp_f32/f64` (x · 2^e, rounded once, with the ISA's
    /// signed 32-bit exponent). f16 goes through f32: an f16 times 2^e is exact
    /// there unless it is below 2^-126 or overflows, where the f16 result is
    /// ±0 or ±inf whichever way f32 rounded.
    pub(super) fn ldexp(&mut self, ty: &Type, x: Lowered, e: Lowered) -> Result<Lowered, Diagnostic> {
        match ty {
            Type::F64 => {
                let (lo, hi) = self.to_v64(&x)?;
                let e = self.to_v(&e)?;
                let (dl, dh) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
                self.emit(Opcode::v_ldexp_f64, &[Dst::VPair(dl, dh)], &[Src::VPair(lo, hi), Src::R(e)], |_| {});
                Ok(Lowered::V64(dl, dh))
            }
            Type::F16 => {
                let wide = self.f16_to_f32(x)?;
                let r = self.ldexp(&Type::F32, wide, e)?;
                self.f32_to_f16(r)
            }
            _ => {
                let d = self.vreg(Class::Vgpr);
                self.valu(Opcode::v_ldexp_f32, d, &[x, e], false)?;
                Ok(Lowered::V(d))
            }
        }
    }

    pub(super) fn fdiv32(&mut self, a: Lowered, b: Lowered) -> Result<Lowered, Diagnostic> {
        let (n, d) = (self.to_v(&a)?, self.to_v(&b)?);
        let vcc = isa::Reg::vcc(if self.wave64() { 2 } else { 1 });
        let v = |s: &mut Self| s.vreg(Class::Vgpr);
        let (den, num, r0, e0, r1, q0, e1, q1, e2, q2, res) =
            (v(self), v(self), v(self), v(self), v(self), v(self), v(self), v(self), v(self), v(self), v(self));
        let neg0 = |i: &mut isa::Inst| i.mods.neg = 1;
        self.emit(Opcode::v_div_scale_f32, &[Dst::R(den), Dst::Fixed(vcc)], &[Src::R(d), Src::R(d), Src::R(n)], |_| {});
        self.emit(Opcode::v_div_scale_f32, &[Dst::R(num), Dst::Fixed(vcc)], &[Src::R(n), Src::R(d), Src::R(n)], |_| {});
        self.emit(Opcode::v_rcp_f32, &[Dst::R(r0)], &[Src::R(den)], |_| {});
        self.emit(Opcode::v_fma_f32, &[Dst::R(e0)], &[Src::R(den), Src::R(r0), Src::Imm(1.0f32.to_bits())], neg0);
        self.emit(Opcode::v_fma_f32, &[Dst::R(r1)], &[Src::R(e0), Src::R(r0), Src::R(r0)], |_| {});
        self.emit(Opcode::v_mul_f32, &[Dst::R(q0)], &[Src::R(num), Src::R(r1)], |_| {});
        self.emit(Opcode::v_fma_f32, &[Dst::R(e1)], &[Src::R(den), Src::R(q0), Src::R(num)], neg0);
        self.emit(Opcode::v_fma_f32, &[Dst::R(q1)], &[Src::R(e1), Src::R(r1), Src::R(q0)], |_| {});
        self.emit(Opcode::v_fma_f32, &[Dst::R(e2)], &[Src::R(den), Src::R(q1), Src::R(num)], neg0);
        self.emit(Opcode::v_div_fmas_f32, &[Dst::R(q2)], &[Src::R(e2), Src::R(r1), Src::R(q1)], |_| {});
        self.emit(Opcode::v_div_fixup_f32, &[Dst::R(res)], &[Src::R(q2), Src::R(d), Src::R(n)], |_| {});
        Ok(Lowered::V(res))
    }

    /// The value with a signalling NaN quieted (constants are left alone).
    pub(super) fn quiet32(&mut self, l: Lowered) -> Result<Lowered, Diagnostic> {
        if let Lowered::Imm(_) = l {
            return Ok(l);
        }
        let x = self.to_v(&l)?;
        let q = self.vreg(Class::Vgpr);
        self.emit(Opcode::v_max_f32, &[Dst::R(q)], &[Src::R(x), Src::R(x)], |_| {});
        Ok(Lowered::V(q))
    }

    /// f64 arithmetic: every operand and result is a VGPR pair (through windows).
    pub(super) fn binary_f64(&mut self, op: BinOp, a: Lowered, b: Lowered) -> Result<Lowered, Diagnostic> {
        if matches!(op, BinOp::FAdd | BinOp::FSub | BinOp::FMul) {
            // Constants and uniform values straight from SGPRs or as inline
            // constants (f64_src).
            let opcode = if op == BinOp::FMul { Opcode::v_mul_f64 } else { Opcode::v_add_f64 };
            let mut scalars = self.constant_bus();
            let (sa, sb) = (self.f64_src(&a, &mut scalars)?, self.f64_src(&b, &mut scalars)?);
            let (lo, hi) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
            self.emit(opcode, &[Dst::VPair(lo, hi)], &[sa, sb], |i| {
                if op == BinOp::FSub {
                    i.mods.neg = 0b10;
                }
            });
            return Ok(Lowered::V64(lo, hi));
        }
        if op == BinOp::FDiv {
            return self.fdiv64(a, b);
        }
        let ((mut al, mut ah), (mut bl, mut bh)) = (self.to_v64(&a)?, self.to_v64(&b)?);
        if matches!(op, BinOp::FMin | BinOp::FMax) {
            // Quiet signalling NaNs first (see quiet32).
            for (lo, hi) in [(&mut al, &mut ah), (&mut bl, &mut bh)] {
                let (ql, qh) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
                self.emit(Opcode::v_max_f64, &[Dst::VPair(ql, qh)], &[Src::VPair(*lo, *hi), Src::VPair(*lo, *hi)], |_| {});
                (*lo, *hi) = (ql, qh);
            }
        }
        let (opcode, negate_b) = match op {
            BinOp::FAdd => (Opcode::v_add_f64, false),
            BinOp::FSub => (Opcode::v_add_f64, true),
            BinOp::FMul => (Opcode::v_mul_f64, false),
            BinOp::FMin => (Opcode::v_min_f64, false),
            BinOp::FMax => (Opcode::v_max_f64, false),
            _ => unreachable!("verified: float op on f64"),
        };
        let (lo, hi) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
        self.emit(opcode, &[Dst::VPair(lo, hi)], &[Src::VPair(al, ah), Src::VPair(bl, bh)], |i| {
            if negate_b {
                i.mods.neg = 0b10;
            }
        });
        Ok(Lowered::V64(lo, hi))
    }

    /// Correctly rounded f64 division: scale, reciprocal, two Newton steps, then
    /// the quotient with one correction, `v_div_fmas` (VCC from the numerator's
    /// scale) and `v_div_fixup` for the special cases.
    /// The numerator and denominator are read where they are when they
    /// are inline constants or uniform (an SGPR pair), as far as one
    /// instruction's constant bus allows (they meet in three of them).
    pub(super) fn fdiv64(&mut self, n: Lowered, d: Lowered) -> Result<Lowered, Diagnostic> {
        let vcc = isa::Reg::vcc(if self.wave64() { 2 } else { 1 });
        let pair = |s: &mut Self| (s.vreg(Class::Vgpr), s.vreg(Class::Vgpr));
        let p = |x: (ra::VReg, ra::VReg)| Src::VPair(x.0, x.1);
        let dp = |x: (ra::VReg, ra::VReg)| Dst::VPair(x.0, x.1);
        let neg0 = |i: &mut isa::Inst| i.mods.neg = 1;
        let one = Src::Imm(1.0f32.to_bits());
        let mut scalars = self.constant_bus();
        let d = self.f64_src(&d, &mut scalars)?;
        let n = self.f64_src(&n, &mut scalars)?;
        let den = pair(self);
        self.emit(Opcode::v_div_scale_f64, &[dp(den), Dst::Fixed(vcc)], &[d, d, n], |_| {});
        let r0 = pair(self);
        self.emit(Opcode::v_rcp_f64, &[dp(r0)], &[p(den)], |_| {});
        let (e0, r1, e1, r2) = (pair(self), pair(self), pair(self), pair(self));
        self.emit(Opcode::v_fma_f64, &[dp(e0)], &[p(den), p(r0), one], neg0);
        self.emit(Opcode::v_fma_f64, &[dp(r1)], &[p(r0), p(e0), p(r0)], |_| {});
        self.emit(Opcode::v_fma_f64, &[dp(e1)], &[p(den), p(r1), one], neg0);
        self.emit(Opcode::v_fma_f64, &[dp(r2)], &[p(r1), p(e1), p(r1)], |_| {});
        let num = pair(self);
        self.emit(Opcode::v_div_scale_f64, &[dp(num), Dst::Fixed(vcc)], &[n, d, n], |_| {});
        let (q, e2, q2, res) = (pair(self), pair(self), pair(self), pair(self));
        self.emit(Opcode::v_mul_f64, &[dp(q)], &[p(num), p(r2)], |_| {});
        self.emit(Opcode::v_fma_f64, &[dp(e2)], &[p(den), p(q), p(num)], neg0);
        self.emit(Opcode::v_div_fmas_f64, &[dp(q2)], &[p(e2), p(r2), p(q)], |_| {});
        self.emit(Opcode::v_div_fixup_f64, &[dp(res)], &[p(q2), d, n], |_| {});
        Ok(Lowered::V64(res.0, res.1))
    }

    /// Correctly rounded f32 square root. `v_sqrt_f32` is within 1 ulp; the
    /// neighbours s-1ulp and s+1ulp are tested with exact fma residuals
    /// (x - s'*s) and the right one chosen. Inputs below 2^-64 are scaled by 2^32
    /// first (result scaled by 2^-16) so the residuals stay exact; ±0 and +inf
    /// are returned as they are (v_cmp_class), NaN and negatives give NaN.
    pub(super) fn sqrt32(&mut self, a: Lowered) -> Result<Lowered, Diagnostic> {
        let x = self.to_v(&a)?;
        let v = |s: &mut Self| s.vreg(Class::Vgpr);
        let tiny = self.vcmp(Opcode::v_cmp_gt_f32, Lowered::Imm(u64::from(0x1f80_0000u32)), Lowered::V(x))?; // 2^-64 > x
        let up = v(self);
        self.emit(Opcode::v_mul_f32, &[Dst::R(up)], &[Src::Imm(0x4f80_0000), Src::R(x)], |_| {}); // x * 2^32
        let sx = v(self);
        self.emit(Opcode::v_cndmask_b32, &[Dst::R(sx)], &[Src::R(x), Src::R(up), Src::R(tiny)], |i| i.e64 = true);
        let (s0, down, next) = (v(self), v(self), v(self));
        self.emit(Opcode::v_sqrt_f32, &[Dst::R(s0)], &[Src::R(sx)], |_| {});
        self.emit(Opcode::v_add_u32, &[Dst::R(down)], &[Src::Imm(u32::MAX), Src::R(s0)], |_| {}); // s - 1 ulp
        self.emit(Opcode::v_add_u32, &[Dst::R(next)], &[Src::Imm(1), Src::R(s0)], |_| {}); // s + 1 ulp
        let (rd, rn) = (v(self), v(self));
        let neg0 = |i: &mut isa::Inst| i.mods.neg = 1;
        self.emit(Opcode::v_fma_f32, &[Dst::R(rd)], &[Src::R(down), Src::R(s0), Src::R(sx)], neg0);
        self.emit(Opcode::v_fma_f32, &[Dst::R(rn)], &[Src::R(next), Src::R(s0), Src::R(sx)], neg0);
        let le = self.vcmp(Opcode::v_cmp_le_f32, Lowered::V(rd), Lowered::Imm(0))?;
        let s1 = v(self);
        self.emit(Opcode::v_cndmask_b32, &[Dst::R(s1)], &[Src::R(s0), Src::R(down), Src::R(le)], |i| i.e64 = true);
        let gt = self.vcmp(Opcode::v_cmp_gt_f32, Lowered::V(rn), Lowered::Imm(0))?;
        let s2 = v(self);
        self.emit(Opcode::v_cndmask_b32, &[Dst::R(s2)], &[Src::R(s1), Src::R(next), Src::R(gt)], |i| i.e64 = true);
        let (scaled, s3) = (v(self), v(self));
        self.emit(Opcode::v_mul_f32, &[Dst::R(scaled)], &[Src::Imm(0x3780_0000), Src::R(s2)], |_| {}); // * 2^-16
        self.emit(Opcode::v_cndmask_b32, &[Dst::R(s3)], &[Src::R(s2), Src::R(scaled), Src::R(tiny)], |i| i.e64 = true);
        // ±0 and +inf: the input itself (class bits -0, +0, +inf).
        let special = self.vcmp(Opcode::v_cmp_class_f32, Lowered::V(sx), Lowered::Imm(0x260))?;
        let r = v(self);
        self.emit(Opcode::v_cndmask_b32, &[Dst::R(r)], &[Src::R(s3), Src::R(sx), Src::R(special)], |i| i.e64 = true);
        Ok(Lowered::V(r))
    }

    /// Correctly rounded f64 square root (the sequence of LLVM's AMDGPU
    /// lowering, written from its description): inputs below 2^-767 are scaled
    /// by 2^256 (the result by 2^-128) so that `v_rsq_f64`'s estimate y and the
    /// residuals stay normal; s = x·y and h = y/2 are refined by one Goldschmidt
    /// step, then two Newton corrections s += (x - s²)·h with exact fma
    /// residuals round s correctly. ±0 and +inf are returned as they are;
    /// negatives and NaN give NaN (from the estimate).
    pub(super) fn sqrt64(&mut self, x: (ra::VReg, ra::VReg)) -> Result<Lowered, Diagnostic> {
        let pair = |s: &mut Self| (s.vreg(Class::Vgpr), s.vreg(Class::Vgpr));
        let p = |x: (ra::VReg, ra::VReg)| Src::VPair(x.0, x.1);
        let dp = |x: (ra::VReg, ra::VReg)| Dst::VPair(x.0, x.1);
        let neg0 = |i: &mut isa::Inst| i.mods.neg = 1;
        let half = Src::Imm(0.5f32.to_bits());
        let limit = self.to_v64(&Lowered::Imm(0x1000_0000_0000_0000))?; // 2^-767
        let tiny = self.vreg(self.mask_class());
        self.emit(Opcode::v_cmp_gt_f64, &[Dst::R(tiny)], &[p(limit), p(x)], |i| i.e64 = true);
        // (256 and -128 are not inline constants, and gfx9's VOP3 takes no literal.)
        let up_amount = self.to_v(&Lowered::Imm(256))?;
        let up = self.vreg(Class::Vgpr);
        self.emit(Opcode::v_cndmask_b32, &[Dst::R(up)], &[Src::Imm(0), Src::R(up_amount), Src::R(tiny)], |i| i.e64 = true);
        let sx = pair(self);
        self.emit(Opcode::v_ldexp_f64, &[dp(sx)], &[p(x), Src::R(up)], |_| {});
        let (y, s0, h0, r0) = (pair(self), pair(self), pair(self), pair(self));
        self.emit(Opcode::v_rsq_f64, &[dp(y)], &[p(sx)], |_| {});
        self.emit(Opcode::v_mul_f64, &[dp(s0)], &[p(sx), p(y)], |_| {});
        self.emit(Opcode::v_mul_f64, &[dp(h0)], &[p(y), half], |_| {});
        self.emit(Opcode::v_fma_f64, &[dp(r0)], &[p(h0), p(s0), half], neg0);
        let (s1, h1, d0, s2, d1, s3) = (pair(self), pair(self), pair(self), pair(self), pair(self), pair(self));
        self.emit(Opcode::v_fma_f64, &[dp(s1)], &[p(s0), p(r0), p(s0)], |_| {});
        self.emit(Opcode::v_fma_f64, &[dp(h1)], &[p(h0), p(r0), p(h0)], |_| {});
        self.emit(Opcode::v_fma_f64, &[dp(d0)], &[p(s1), p(s1), p(sx)], neg0);
        self.emit(Opcode::v_fma_f64, &[dp(s2)], &[p(d0), p(h1), p(s1)], |_| {});
        self.emit(Opcode::v_fma_f64, &[dp(d1)], &[p(s2), p(s2), p(sx)], neg0);
        self.emit(Opcode::v_fma_f64, &[dp(s3)], &[p(d1), p(h1), p(s2)], |_| {});
        let down_amount = self.to_v(&Lowered::Imm(u64::from((-128i32) as u32)))?;
        let down = self.vreg(Class::Vgpr);
        self.emit(Opcode::v_cndmask_b32, &[Dst::R(down)], &[Src::Imm(0), Src::R(down_amount), Src::R(tiny)], |i| i.e64 = true);
        let r = pair(self);
        self.emit(Opcode::v_ldexp_f64, &[dp(r)], &[p(s3), Src::R(down)], |_| {});
        // ±0 and +inf: the input itself (class bits -0, +0, +inf).
        let classes = self.to_v(&Lowered::Imm(0x260))?;
        let special = self.vreg(self.mask_class());
        self.emit(Opcode::v_cmp_class_f64, &[Dst::R(special)], &[p(sx), Src::R(classes)], |i| i.e64 = true);
        let (lo, hi) = pair(self);
        self.emit(Opcode::v_cndmask_b32, &[Dst::R(lo)], &[Src::R(r.0), Src::R(sx.0), Src::R(special)], |i| i.e64 = true);
        self.emit(Opcode::v_cndmask_b32, &[Dst::R(hi)], &[Src::R(r.1), Src::R(sx.1), Src::R(special)], |i| i.e64 = true);
        Ok(Lowered::V64(lo, hi))
    }

    /// One f32 VALU operation on lowered operands.
    fn f32_op(&mut self, op: Opcode, srcs: &[Lowered]) -> Result<Lowered, Diagnostic> {
        let d = self.vreg(Class::Vgpr);
        self.valu(op, d, srcs, false)?;
        Ok(Lowered::V(d))
    }

    /// `c ? a : b` on f32 values (c a lane mask).
    fn f32_select(&mut self, c: ra::VReg, a: Lowered, b: Lowered) -> Result<Lowered, Diagnostic> {
        let (a, b) = (self.cndmask_src(&a)?, self.cndmask_src(&b)?);
        let d = self.vreg(Class::Vgpr);
        self.emit(Opcode::v_cndmask_b32, &[Dst::R(d)], &[b, a, Src::R(c)], |i| i.e64 = true);
        Ok(Lowered::V(d))
    }

    /// The f32 transcendentals (docs/mir.md "Transcendentals"). The `.approx`
    /// forms are the hardware instruction (with the argument scaling the
    /// function needs); the accurate ones handle what the instructions do not
    /// (v_exp_f32 flushes subnormal results and v_log_f32 subnormal inputs, so
    /// those ranges are scaled by powers of two around them) and keep the
    /// rounding error of the argument for exp and log (an extra-precision
    /// product by log2(e) or ln(2) split with fma), as LLVM's lowering does.
    pub(super) fn transcendental32(&mut self, op: UnOp, a: Lowered) -> Result<Lowered, Diagnostic> {
        const LOG2_E: u64 = 0x3fb8_aa3b; // log2(e) rounded to f32
        const LOG2_E_TAIL: u64 = 0x32a5_705f; // log2(e) - LOG2_E
        const LN_2: u64 = 0x3f31_7218; // ln(2) rounded to f32
        const LN_2_TAIL: u64 = 0xb102_e308; // ln(2) - LN_2
        const INV_2PI: u64 = 0x3e22_f983; // 1/(2π)
        let imm = |bits: u64| Lowered::Imm(bits);
        let one = imm(u64::from(1.0f32.to_bits()));
        match op {
            UnOp::Exp2Approx => self.f32_op(Opcode::v_exp_f32, &[a]),
            UnOp::Log2Approx => self.f32_op(Opcode::v_log_f32, &[a]),
            UnOp::RcpApprox => self.f32_op(Opcode::v_rcp_f32, &[a]),
            UnOp::RsqrtApprox => self.f32_op(Opcode::v_rsq_f32, &[a]),
            UnOp::ExpApprox => {
                let t = self.f32_op(Opcode::v_mul_f32, &[a, imm(LOG2_E)])?;
                self.f32_op(Opcode::v_exp_f32, &[t])
            }
            UnOp::LogApprox => {
                let l = self.f32_op(Opcode::v_log_f32, &[a])?;
                self.f32_op(Opcode::v_mul_f32, &[l, imm(LN_2)])
            }
            UnOp::SinApprox | UnOp::CosApprox => {
                // The instructions take the angle in revolutions.
                let t = self.f32_op(Opcode::v_mul_f32, &[a, imm(INV_2PI)])?;
                self.f32_op(if op == UnOp::SinApprox { Opcode::v_sin_f32 } else { Opcode::v_cos_f32 }, &[t])
            }
            UnOp::Rcp => self.fdiv32(one, a),
            UnOp::Rsqrt => {
                let s = self.sqrt32(a)?;
                self.fdiv32(one, s)
            }
            UnOp::Exp2 => {
                // Below -126 the result is subnormal: 2^(x + 64) · 2^-64.
                let tiny = self.vcmp(Opcode::v_cmp_gt_f32, imm(u64::from((-126.0f32).to_bits())), a.clone())?;
                let bump = self.f32_select(tiny, imm(u64::from(64.0f32.to_bits())), Lowered::Imm(0))?;
                let t = self.f32_op(Opcode::v_add_f32, &[a, bump])?;
                let e = self.f32_op(Opcode::v_exp_f32, &[t])?;
                let scale = self.f32_select(tiny, imm(u64::from(2f32.powi(-64).to_bits())), one)?;
                self.f32_op(Opcode::v_mul_f32, &[e, scale])
            }
            UnOp::Log2 | UnOp::Log => {
                // Subnormal inputs: log2(x · 2^32) - 32.
                let y = self.scaled_log2(a)?;
                if op == UnOp::Log2 {
                    return Ok(y);
                }
                // ln(x) = y · ln 2 with the product's rounding error and ln 2's
                // tail added back; y itself when infinite or NaN.
                let r = self.f32_op(Opcode::v_mul_f32, &[y.clone(), imm(LN_2)])?;
                let minus_r = self.f32_op(Opcode::v_xor_b32, &[imm(0x8000_0000), r.clone()])?;
                let err = self.f32_op(Opcode::v_fma_f32, &[y.clone(), imm(LN_2), minus_r])?;
                let tail = self.f32_op(Opcode::v_fma_f32, &[y.clone(), imm(LN_2_TAIL), err])?;
                let sum = self.f32_op(Opcode::v_add_f32, &[r, tail])?;
                let magnitude = self.f32_op(Opcode::v_and_b32, &[imm(0x7fff_ffff), y.clone()])?;
                let finite = self.vcmp(Opcode::v_cmp_gt_f32, imm(u64::from(f32::INFINITY.to_bits())), magnitude)?;
                let plain = self.f32_op(Opcode::v_mul_f32, &[y, imm(LN_2)])?;
                self.f32_select(finite, sum, plain)
            }
            UnOp::Exp => {
                // x · log2(e) = ph + pl exactly enough; e = rint(ph);
                // exp(x) = 2^(ph - e + pl) · 2^e, the power of two by ldexp.
                let ph = self.f32_op(Opcode::v_mul_f32, &[a.clone(), imm(LOG2_E)])?;
                let minus_ph = self.f32_op(Opcode::v_xor_b32, &[imm(0x8000_0000), ph.clone()])?;
                let pl = self.f32_op(Opcode::v_fma_f32, &[a.clone(), imm(LOG2_E), minus_ph])?;
                let pl = self.f32_op(Opcode::v_fma_f32, &[a.clone(), imm(LOG2_E_TAIL), pl])?;
                let e = self.f32_op(Opcode::v_rndne_f32, &[ph.clone()])?;
                let frac = self.f32_op(Opcode::v_sub_f32, &[ph, e.clone()])?;
                let arg = self.f32_op(Opcode::v_add_f32, &[frac, pl])?;
                let r = self.f32_op(Opcode::v_exp_f32, &[arg])?;
                let k = self.f32_op(Opcode::v_cvt_i32_f32, &[e])?;
                let scaled = self.f32_op(Opcode::v_ldexp_f32, &[r, k])?;
                // Beyond the range: +inf above ln(f32::MAX), 0 below ln(2^-150)
                // (infinite x would give inf - inf in pl).
                let over = self.vcmp(Opcode::v_cmp_lt_f32, imm(0x42b1_7218), a.clone())?;
                let high = self.f32_select(over, imm(u64::from(f32::INFINITY.to_bits())), scaled)?;
                let under = self.vcmp(Opcode::v_cmp_gt_f32, imm(0xc2cf_f1b5), a)?;
                self.f32_select(under, Lowered::Imm(0), high)
            }
            _ => unreachable!("f32 transcendental: {op:?}"),
        }
    }

    /// log2 with subnormal inputs scaled into the range v_log_f32 reads.
    fn scaled_log2(&mut self, a: Lowered) -> Result<Lowered, Diagnostic> {
        let imm = |bits: u64| Lowered::Imm(bits);
        let tiny = self.vcmp(Opcode::v_cmp_gt_f32, imm(u64::from(f32::MIN_POSITIVE.to_bits())), a.clone())?;
        let scale = self.f32_select(tiny, imm(u64::from(2f32.powi(32).to_bits())), imm(u64::from(1.0f32.to_bits())))?;
        let x = self.f32_op(Opcode::v_mul_f32, &[a, scale])?;
        let l = self.f32_op(Opcode::v_log_f32, &[x])?;
        let back = self.f32_select(tiny, imm(u64::from(32.0f32.to_bits())), Lowered::Imm(0))?;
        self.f32_op(Opcode::v_sub_f32, &[l, back])
    }

    /// f64 rcp and rsqrt: the accurate forms correctly rounded (rcp) or
    /// within an ulp (rsqrt: two correctly rounded steps); `.approx` the
    /// hardware estimate.
    pub(super) fn transcendental64(&mut self, op: UnOp, a: Lowered) -> Result<Lowered, Diagnostic> {
        let x = self.to_v64(&a)?;
        let one = Lowered::Imm(1.0f64.to_bits());
        match op {
            UnOp::Rcp => self.fdiv64(one, Lowered::V64(x.0, x.1)),
            UnOp::Rsqrt => {
                let root = self.sqrt64(x)?;
                self.fdiv64(one, root)
            }
            UnOp::RcpApprox | UnOp::RsqrtApprox => {
                let (lo, hi) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
                let opcode = if op == UnOp::RcpApprox { Opcode::v_rcp_f64 } else { Opcode::v_rsq_f64 };
                self.emit(opcode, &[Dst::VPair(lo, hi)], &[Src::VPair(x.0, x.1)], |_| {});
                Ok(Lowered::V64(lo, hi))
            }
            _ => unreachable!("verified: f64 transcendentals are rcp and rsqrt"),
        }
    }
}

#[cfg(test)]
mod tests {
    /// The f64 square root sequence of `sqrt64`, in host arithmetic, with the
    /// hardware's reciprocal square root estimate replaced by the correctly
    /// rounded value moved by `ulps`: the sequence must round correctly for
    /// any estimate with a relative error up to 2^-22 (the simulator's
    /// `v_rsq_f64` is exact, the hardware's is not; the corrections converge
    /// from much worse estimates than its documented error).
    fn model(x: f64, ulps: i64) -> f64 {
        let tiny = x < f64::from_bits(0x1000_0000_0000_0000);
        let sx = if tiny { x * 2f64.powi(256) } else { x };
        let y = f64::from_bits(((1.0 / sx.sqrt()).to_bits() as i64 + ulps) as u64);
        let s0 = sx * y;
        let h0 = y * 0.5;
        let r0 = (-h0).mul_add(s0, 0.5);
        let s1 = s0.mul_add(r0, s0);
        let h1 = h0.mul_add(r0, h0);
        let d0 = (-s1).mul_add(s1, sx);
        let s2 = d0.mul_add(h1, s1);
        let d1 = (-s2).mul_add(s2, sx);
        let s3 = d1.mul_add(h1, s2);
        let r = if tiny { s3 * 2f64.powi(-128) } else { s3 };
        if sx == 0.0 || sx == f64::INFINITY { sx } else { r }
    }

    #[test]
    fn sqrt64_rounds_correctly_with_an_inexact_estimate() {
        let mut state = 0x853c_49e6_748f_ea9bu64;
        for i in 0..200_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            // Every exponent, subnormals included (the top bit clear: positive).
            let bits = if i % 4 == 0 { state >> 12 } else { state >> 1 };
            let x = f64::from_bits(bits);
            if x.is_nan() {
                continue;
            }
            for ulps in [-(1 << 30), -1000, -3, 0, 3, 1000, 1 << 30] {
                let got = model(x, ulps);
                assert_eq!(got.to_bits(), x.sqrt().to_bits(), "sqrt({x:e}) with an estimate off by {ulps} ulps: {got:e}");
            }
        }
    }
}
