//! Floating-point arithmetic that is more than one instruction: correctly rounded division and square root, f64 operations, quieting NaNs for min/max.

use super::*;

impl<'a> Isel<'a> {
    /// Correctly rounded f32 division (the scale / reciprocal / Newton / fixup
    /// sequence). VCC carries the scale flag from the second v_div_scale to
    /// v_div_fmas across several selected instructions: regalloc2 may put moves
    /// and spill code between them, so nothing expansion adds between
    /// instructions may write VCC (expand.rs `whole_wave`).
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
        let ((mut al, mut ah), (mut bl, mut bh)) = (self.to_v64(&a)?, self.to_v64(&b)?);
        if op == BinOp::FDiv {
            return self.fdiv64((al, ah), (bl, bh));
        }
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
    pub(super) fn fdiv64(&mut self, n: (ra::VReg, ra::VReg), d: (ra::VReg, ra::VReg)) -> Result<Lowered, Diagnostic> {
        let vcc = isa::Reg::vcc(if self.wave64() { 2 } else { 1 });
        let pair = |s: &mut Self| (s.vreg(Class::Vgpr), s.vreg(Class::Vgpr));
        let p = |x: (ra::VReg, ra::VReg)| Src::VPair(x.0, x.1);
        let dp = |x: (ra::VReg, ra::VReg)| Dst::VPair(x.0, x.1);
        let neg0 = |i: &mut isa::Inst| i.mods.neg = 1;
        let one = Src::Imm(1.0f32.to_bits());
        let den = pair(self);
        self.emit(Opcode::v_div_scale_f64, &[dp(den), Dst::Fixed(vcc)], &[p(d), p(d), p(n)], |_| {});
        let r0 = pair(self);
        self.emit(Opcode::v_rcp_f64, &[dp(r0)], &[p(den)], |_| {});
        let (e0, r1, e1, r2) = (pair(self), pair(self), pair(self), pair(self));
        self.emit(Opcode::v_fma_f64, &[dp(e0)], &[p(den), p(r0), one], neg0);
        self.emit(Opcode::v_fma_f64, &[dp(r1)], &[p(r0), p(e0), p(r0)], |_| {});
        self.emit(Opcode::v_fma_f64, &[dp(e1)], &[p(den), p(r1), one], neg0);
        self.emit(Opcode::v_fma_f64, &[dp(r2)], &[p(r1), p(e1), p(r1)], |_| {});
        let num = pair(self);
        self.emit(Opcode::v_div_scale_f64, &[dp(num), Dst::Fixed(vcc)], &[p(n), p(d), p(n)], |_| {});
        let (q, e2, q2, res) = (pair(self), pair(self), pair(self), pair(self));
        self.emit(Opcode::v_mul_f64, &[dp(q)], &[p(num), p(r2)], |_| {});
        self.emit(Opcode::v_fma_f64, &[dp(e2)], &[p(den), p(q), p(num)], neg0);
        self.emit(Opcode::v_div_fmas_f64, &[dp(q2)], &[p(e2), p(r2), p(q)], |_| {});
        self.emit(Opcode::v_div_fixup_f64, &[dp(res)], &[p(q2), p(d), p(n)], |_| {});
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
}
