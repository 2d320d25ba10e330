//! Vector ALU (VOP1, VOP2, VOP3, VOP3P AGPR moves, VOPC, gfx11 VOPD).
//!
//! Each instruction runs on the lanes enabled in EXEC. Float sources take the VOP3
//! `abs`/`neg` modifiers, float results `omod` and `clamp`. f32 arithmetic is IEEE
//! round-to-nearest-even; denormals are kept unless the kernel descriptor asks to
//! flush them (`ftz`).

use amdgpu_isa::Operand;

use super::decode::{CmpTy, Cond, DInst, DualHalf, DualOp, Sem, N};
use super::float::*;
use super::operands::{mask, set_mask, set_s, set_v, v32, v64};
use super::state::Wave;

/// A lane's result.
#[derive(Clone, Copy)]
enum R {
    F(f32),
    D(f64),
    I(u32),
    L(u64),
}

fn ftz32(x: f32, on: bool) -> f32 {
    if on && x.is_subnormal() && x != 0.0 {
        if x.is_sign_negative() {
            -0.0
        } else {
            0.0
        }
    } else {
        x
    }
}

fn bfe(x: u32, off: u32, width: u32, signed: bool) -> u32 {
    let (off, width) = (off & 31, width & 31);
    if width == 0 {
        return 0;
    }
    let v = ((x as u64) >> off) & ((1u64 << width) - 1);
    if signed {
        (((v << (64 - width)) as i64) >> (64 - width)) as u32
    } else {
        v as u32
    }
}

fn perm_byte(sel: u32, data: u64) -> u32 {
    match sel {
        0..=7 => ((data >> (sel * 8)) & 0xff) as u32,
        8 => if data >> 15 & 1 == 1 { 0xff } else { 0 },
        9 => if data >> 31 & 1 == 1 { 0xff } else { 0 },
        10 => if data >> 47 & 1 == 1 { 0xff } else { 0 },
        11 => if data >> 63 & 1 == 1 { 0xff } else { 0 },
        12 => 0,
        _ => 0xff,
    }
}

/// Executes a VALU instruction.
pub fn exec(w: &mut Wave, d: &DInst, ftz: bool) -> Result<(), String> {
    match d.sem {
        Sem::Cmp { ty, cond, x } => cmp(w, d, ty, cond, x),
        Sem::CmpClass { f64, x } => cmp_class(w, d, f64, x),
        Sem::Dual { x, y, literal } => dual(w, x, y, literal, ftz),
        Sem::N(n) => exec_n(w, d, n, ftz),
        _ => Err("not a VALU instruction".into()),
    }
}

fn exec_n(w: &mut Wave, d: &DInst, n: N, ftz: bool) -> Result<(), String> {
    let i = &d.inst;
    let lanes = w.lanes;
    let exec = w.exec();
    // Cross-lane and lane-independent instructions.
    match n {
        N::v_nop => return Ok(()),
        N::v_readlane_b32 => {
            let lane = v32(w, &i.uses[1], 0) & (lanes - 1);
            let v = v32(w, &i.uses[0], lane);
            set_s(w, &i.defs[0], v as u64);
            return Ok(());
        }
        N::v_readfirstlane_b32 => {
            let lane = if exec == 0 { 0 } else { exec.trailing_zeros() };
            let v = v32(w, &i.uses[0], lane);
            set_s(w, &i.defs[0], v as u64);
            return Ok(());
        }
        // The two halves of a wave64 swapped (wave32: a move); every lane.
        N::v_permlane64_b32 => {
            let vals: Vec<u32> = (0..lanes).map(|l| v32(w, &i.uses[0], l)).collect();
            for l in 0..lanes {
                if exec >> l & 1 == 1 {
                    let from = if lanes == 64 { l ^ 32 } else { l };
                    set_v(w, &i.defs[0], l, u64::from(vals[from as usize]));
                }
            }
            return Ok(());
        }
        N::v_writelane_b32 => {
            let lane = v32(w, &i.uses[1], 0) & (lanes - 1);
            let v = v32(w, &i.uses[0], 0);
            set_v(w, &i.defs[0], lane, v as u64);
            return Ok(());
        }
        _ => {}
    }
    let m = i.mods;
    let f = |w: &Wave, k: usize, lane: u32| -> f32 {
        let mut b = v32(w, &i.uses[k], lane);
        if m.abs >> k & 1 == 1 {
            b &= 0x7fff_ffff;
        }
        if m.neg >> k & 1 == 1 {
            b ^= 0x8000_0000;
        }
        ftz32(f32::from_bits(b), ftz)
    };
    let fd = |w: &Wave, k: usize, lane: u32| -> f64 {
        let mut b = v64(w, &i.uses[k], lane, true);
        if m.abs >> k & 1 == 1 {
            b &= 0x7fff_ffff_ffff_ffff;
        }
        if m.neg >> k & 1 == 1 {
            b ^= 0x8000_0000_0000_0000;
        }
        f64::from_bits(b)
    };
    let u = |w: &Wave, k: usize, lane: u32| -> u32 { v32(w, &i.uses[k], lane) };
    let ul = |w: &Wave, k: usize, lane: u32| -> u64 { v64(w, &i.uses[k], lane, false) };
    let msk = |w: &Wave, k: usize| -> u64 { mask(w, &i.uses[k]) };
    let mut out = [0u64; 64];
    let mut carry = 0u64;
    let mut vcc_out = 0u64;
    for lane in 0..lanes {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let mut c = false;
        let r = match n {
            N::v_add_f32 => R::F(f(w, 0, lane) + f(w, 1, lane)),
            N::v_sub_f32 => R::F(f(w, 0, lane) - f(w, 1, lane)),
            N::v_subrev_f32 => R::F(f(w, 1, lane) - f(w, 0, lane)),
            N::v_mul_f32 => R::F(f(w, 0, lane) * f(w, 1, lane)),
            N::v_min_f32 => R::F(min32(f(w, 0, lane), f(w, 1, lane))),
            N::v_max_f32 => R::F(max32(f(w, 0, lane), f(w, 1, lane))),
            N::v_mul_i32_i24 => R::I(((u(w, 0, lane) << 8) as i32 >> 8).wrapping_mul((u(w, 1, lane) << 8) as i32 >> 8) as u32),
            N::v_mul_hi_i32_i24 => {
                let p = (((u(w, 0, lane) << 8) as i32 >> 8) as i64) * (((u(w, 1, lane) << 8) as i32 >> 8) as i64);
                R::I((p >> 32) as u32)
            }
            N::v_mul_u32_u24 => R::I((u(w, 0, lane) & 0xff_ffff).wrapping_mul(u(w, 1, lane) & 0xff_ffff)),
            N::v_mul_hi_u32_u24 => R::I((((u(w, 0, lane) & 0xff_ffff) as u64 * (u(w, 1, lane) & 0xff_ffff) as u64) >> 32) as u32),
            N::v_min_i32 => R::I((u(w, 0, lane) as i32).min(u(w, 1, lane) as i32) as u32),
            N::v_max_i32 => R::I((u(w, 0, lane) as i32).max(u(w, 1, lane) as i32) as u32),
            N::v_min_u32 => R::I(u(w, 0, lane).min(u(w, 1, lane))),
            N::v_max_u32 => R::I(u(w, 0, lane).max(u(w, 1, lane))),
            N::v_lshrrev_b32 => R::I(u(w, 1, lane) >> (u(w, 0, lane) & 31)),
            N::v_ashrrev_i32 => R::I(((u(w, 1, lane) as i32) >> (u(w, 0, lane) & 31)) as u32),
            N::v_lshlrev_b32 => R::I(u(w, 1, lane) << (u(w, 0, lane) & 31)),
            N::v_and_b32 => R::I(u(w, 0, lane) & u(w, 1, lane)),
            N::v_or_b32 => R::I(u(w, 0, lane) | u(w, 1, lane)),
            N::v_xor_b32 => R::I(u(w, 0, lane) ^ u(w, 1, lane)),
            N::v_xnor_b32 => R::I(!(u(w, 0, lane) ^ u(w, 1, lane))),
            N::v_mac_f32 => {
                let acc = ftz32(f32::from_bits(v32(w, &i.defs[0], lane)), ftz);
                R::F(f(w, 0, lane) * f(w, 1, lane) + acc)
            }
            N::v_fmac_f32 => {
                let acc = ftz32(f32::from_bits(v32(w, &i.defs[0], lane)), ftz);
                R::F(f(w, 0, lane).mul_add(f(w, 1, lane), acc))
            }
            N::v_fmac_f64 => {
                // The accumulator is the (tied) destination.
                let acc = f64::from_bits(v64(w, &i.defs[0], lane, true));
                R::D(fd(w, 0, lane).mul_add(fd(w, 1, lane), acc))
            }
            // d = src0 * K + vsrc1 / d = src0 * vsrc1 + K (K is a literal use): the
            // gfx90a mad forms round twice, the fma forms once.
            N::v_madmk_f32 | N::v_madak_f32 => R::F(f(w, 0, lane) * f(w, 1, lane) + f(w, 2, lane)),
            N::v_fmamk_f32 | N::v_fmaak_f32 => R::F(f(w, 0, lane).mul_add(f(w, 1, lane), f(w, 2, lane))),
            N::v_cndmask_b32 => {
                let sel = msk(w, 2) >> lane & 1 == 1;
                // Float modifiers apply to the selected value's bits (VOP3 form).
                let pick = if sel { 1 } else { 0 };
                let mut b = u(w, pick, lane);
                if m.abs >> pick & 1 == 1 {
                    b &= 0x7fff_ffff;
                }
                if m.neg >> pick & 1 == 1 {
                    b ^= 0x8000_0000;
                }
                R::I(b)
            }
            // Signed add/sub; clamp saturates to the i32 range (ISA: "clamp
            // the result" for the integer forms).
            N::v_add_i32 | N::v_sub_i32 => {
                let (a, b) = (u(w, 0, lane) as i32, u(w, 1, lane) as i32);
                let (r, o) = if n == N::v_add_i32 { a.overflowing_add(b) } else { a.overflowing_sub(b) };
                let sat = if n == N::v_add_i32 { a.saturating_add(b) } else { a.saturating_sub(b) };
                R::I(if m.clamp && o { sat } else { r } as u32)
            }
            N::v_add_u32 => {
                let (r, o) = u(w, 0, lane).overflowing_add(u(w, 1, lane));
                R::I(if m.clamp && o { u32::MAX } else { r })
            }
            N::v_sub_u32 => {
                let (r, o) = u(w, 0, lane).overflowing_sub(u(w, 1, lane));
                R::I(if m.clamp && o { 0 } else { r })
            }
            N::v_subrev_u32 => {
                let (r, o) = u(w, 1, lane).overflowing_sub(u(w, 0, lane));
                R::I(if m.clamp && o { 0 } else { r })
            }
            N::v_add_co_u32 => {
                let (r, o) = u(w, 0, lane).overflowing_add(u(w, 1, lane));
                c = o;
                R::I(r)
            }
            N::v_sub_co_u32 => {
                let (r, o) = u(w, 0, lane).overflowing_sub(u(w, 1, lane));
                c = o;
                R::I(r)
            }
            N::v_subrev_co_u32 => {
                let (r, o) = u(w, 1, lane).overflowing_sub(u(w, 0, lane));
                c = o;
                R::I(r)
            }
            N::v_addc_co_u32 => {
                let cin = msk(w, 2) >> lane & 1;
                let r = u(w, 0, lane) as u64 + u(w, 1, lane) as u64 + cin;
                c = r >> 32 != 0;
                R::I(r as u32)
            }
            N::v_subb_co_u32 | N::v_subbrev_co_u32 => {
                let cin = msk(w, 2) >> lane & 1;
                let (a, b) = if n == N::v_subb_co_u32 { (u(w, 0, lane), u(w, 1, lane)) } else { (u(w, 1, lane), u(w, 0, lane)) };
                c = b as u64 + cin > a as u64;
                R::I(a.wrapping_sub(b).wrapping_sub(cin as u32))
            }
            // VOP1
            N::v_mov_b32 | N::v_accvgpr_read_b32 | N::v_accvgpr_write_b32 | N::v_accvgpr_mov_b32 => R::I(u(w, 0, lane)),
            N::v_mov_b64 => R::L(v64(w, &i.uses[0], lane, true)),
            N::v_cvt_i32_f64 => R::I(fd(w, 0, lane) as i32 as u32),
            N::v_cvt_u32_f64 => R::I(fd(w, 0, lane) as u32),
            N::v_cvt_f64_i32 => R::D(u(w, 0, lane) as i32 as f64),
            N::v_cvt_f64_u32 => R::D(u(w, 0, lane) as f64),
            N::v_cvt_f32_i32 => R::F(u(w, 0, lane) as i32 as f32),
            N::v_cvt_f32_u32 => R::F(u(w, 0, lane) as f32),
            N::v_cvt_u32_f32 => R::I(f(w, 0, lane) as u32),
            N::v_cvt_i32_f32 => R::I(f(w, 0, lane) as i32 as u32),
            N::v_cvt_f32_f64 => R::F(fd(w, 0, lane) as f32),
            N::v_cvt_f64_f32 => R::D(f(w, 0, lane) as f64),
            N::v_cvt_f32_ubyte0 => R::F((u(w, 0, lane) & 0xff) as f32),
            N::v_cvt_f32_ubyte1 => R::F((u(w, 0, lane) >> 8 & 0xff) as f32),
            N::v_cvt_f32_ubyte2 => R::F((u(w, 0, lane) >> 16 & 0xff) as f32),
            N::v_cvt_f32_ubyte3 => R::F((u(w, 0, lane) >> 24) as f32),
            N::v_fract_f32 => {
                let x = f(w, 0, lane);
                R::F(if x.is_infinite() { f32::NAN } else { (x - x.floor()).min(f32::from_bits(0x3f7f_ffff)) })
            }
            N::v_trunc_f32 => R::F(f(w, 0, lane).trunc()),
            N::v_ceil_f32 => R::F(f(w, 0, lane).ceil()),
            N::v_rndne_f32 => R::F(f(w, 0, lane).round_ties_even()),
            N::v_floor_f32 => R::F(f(w, 0, lane).floor()),
            // Neither handles subnormals (LLVM scales around both): v_exp_f32
            // flushes subnormal results to +0, v_log_f32 reads a subnormal input
            // as 0 (giving -inf).
            N::v_exp_f32 => {
                let r = f(w, 0, lane).exp2();
                R::F(if r.is_subnormal() { 0.0 } else { r })
            }
            N::v_log_f32 => {
                let x = f(w, 0, lane);
                R::F(if x.is_subnormal() { f32::NEG_INFINITY } else { x.log2() })
            }
            N::v_rcp_f32 | N::v_rcp_iflag_f32 => R::F(1.0 / f(w, 0, lane)),
            N::v_rsq_f32 => R::F(1.0 / f(w, 0, lane).sqrt()),
            N::v_sqrt_f32 => R::F(f(w, 0, lane).sqrt()),
            N::v_rcp_f64 => R::D(1.0 / fd(w, 0, lane)),
            N::v_rsq_f64 => R::D(1.0 / fd(w, 0, lane).sqrt()),
            N::v_sqrt_f64 => R::D(fd(w, 0, lane).sqrt()),
            N::v_trunc_f64 => R::D(fd(w, 0, lane).trunc()),
            N::v_ceil_f64 => R::D(fd(w, 0, lane).ceil()),
            N::v_floor_f64 => R::D(fd(w, 0, lane).floor()),
            N::v_rndne_f64 => R::D(fd(w, 0, lane).round_ties_even()),
            N::v_fract_f64 => {
                let x = fd(w, 0, lane);
                R::D(if x.is_infinite() { f64::NAN } else { (x - x.floor()).min(f64::from_bits(0x3fef_ffff_ffff_ffff)) })
            }
            N::v_frexp_exp_i32_f32 => R::I(frexp_exp64(f(w, 0, lane) as f64) as u32),
            N::v_frexp_mant_f32 => R::F(frexp_mant64(f(w, 0, lane) as f64) as f32),
            N::v_frexp_exp_i32_f64 => R::I(frexp_exp64(fd(w, 0, lane)) as u32),
            N::v_frexp_mant_f64 => R::D(frexp_mant64(fd(w, 0, lane))),
            N::v_sin_f32 => R::F((f(w, 0, lane) as f64 * std::f64::consts::TAU).sin() as f32),
            N::v_cos_f32 => R::F((f(w, 0, lane) as f64 * std::f64::consts::TAU).cos() as f32),
            // Gfx9 zeroes the high half of a 16-bit result; gfx11's true16 form
            // writes the low half only (`v0.l`) and keeps the high one.
            N::v_cvt_f16_f32 => {
                let half = crate::mir::float::f64_to_f16(f(w, 0, lane) as f64) as u32;
                let kept = if w.gen() == amdgpu_isa::Generation::Gfx11 { v32(w, &i.defs[0], lane) & 0xffff_0000 } else { 0 };
                R::I(kept | half)
            }
            N::v_cvt_f32_f16 => R::F(crate::mir::float::f16_to_f64(u(w, 0, lane) as u16) as f32),
            N::v_pk_fma_f32 | N::v_pk_mul_f32 | N::v_pk_add_f32 => {
                // Packed f32: each half picks its source halves by op_sel (low result)
                // and op_sel_hi (high result); neg_lo/neg_hi negate.
                let half = |w: &Wave, k: usize, hi: bool| -> f32 {
                    let sel = if hi { m.op_sel_hi >> k & 1 == 1 } else { m.op_sel >> k & 1 == 1 };
                    // An inline constant is its 32-bit value in the low dword
                    // (the high one zero): llc-22 selects the low dword for
                    // both halves with op_sel_hi:[..,0] to splat it.
                    let v = match &i.uses[k] {
                        Operand::Const(_) => u64::from(u(w, k, lane)),
                        other => v64(w, other, lane, false),
                    };
                    let mut b = if sel { (v >> 32) as u32 } else { v as u32 };
                    let neg = if hi { m.neg_hi >> k & 1 == 1 } else { m.neg >> k & 1 == 1 };
                    if neg {
                        b ^= 0x8000_0000;
                    }
                    ftz32(f32::from_bits(b), ftz)
                };
                let one = |hi: bool| -> f32 {
                    match n {
                        N::v_pk_fma_f32 => half(w, 0, hi).mul_add(half(w, 1, hi), half(w, 2, hi)),
                        N::v_pk_mul_f32 => half(w, 0, hi) * half(w, 1, hi),
                        _ => half(w, 0, hi) + half(w, 1, hi),
                    }
                };
                let (lo, hi) = (one(false), one(true));
                R::L(ftz32(lo, ftz).to_bits() as u64 | (ftz32(hi, ftz).to_bits() as u64) << 32)
            }
            // ISA (MI200): D[31:0] = S0's dword op_sel[0] picks, D[63:32] = S1's
            // dword op_sel[1] picks.
            N::v_pk_mov_b32 => {
                let (a, b) = (v64(w, &i.uses[0], lane, false), v64(w, &i.uses[1], lane, false));
                let lo = if m.op_sel & 1 == 1 { a >> 32 } else { a & 0xffff_ffff };
                let hi = if m.op_sel >> 1 & 1 == 1 { b >> 32 } else { b & 0xffff_ffff };
                R::L(lo | hi << 32)
            }
            N::v_pk_fma_f16 | N::v_pk_add_f16 | N::v_pk_mul_f16 | N::v_pk_min_f16 | N::v_pk_max_f16 => {
                // Packed f16, per the ISA: each 16-bit result from the halves
                // op_sel (low) and op_sel_hi (high) pick, neg/neg_hi negating;
                // IEEE arithmetic with subnormals, rounded to nearest even.
                let half = |w: &Wave, k: usize, hi: bool| -> f64 {
                    let sel = if hi { m.op_sel_hi >> k & 1 == 1 } else { m.op_sel >> k & 1 == 1 };
                    let v = u(w, k, lane);
                    let mut b = if sel { (v >> 16) as u16 } else { v as u16 };
                    if (if hi { m.neg_hi } else { m.neg }) >> k & 1 == 1 {
                        b ^= 0x8000;
                    }
                    crate::mir::float::f16_to_f64(b)
                };
                let one = |hi: bool| -> u32 {
                    let (a, b) = (half(w, 0, hi), half(w, 1, hi));
                    // f16 sums and products are exact in f64 (and so is a
                    // product plus an f16, f16's exponents being so narrow:
                    // see fma16), so one rounding to f16 is the IEEE result.
                    let r = match n {
                        N::v_pk_add_f16 => a + b,
                        N::v_pk_mul_f16 => a * b,
                        N::v_pk_fma_f16 => fma16(a, b, half(w, 2, hi)),
                        N::v_pk_min_f16 => min64(a, b),
                        _ => max64(a, b),
                    };
                    u32::from(crate::mir::float::f64_to_f16(r))
                };
                R::I(one(false) | one(true) << 16)
            }
            N::v_not_b32 => R::I(!u(w, 0, lane)),
            N::v_bfrev_b32 => R::I(u(w, 0, lane).reverse_bits()),
            N::v_ffbh_u32 => {
                let x = u(w, 0, lane);
                R::I(if x == 0 { u32::MAX } else { x.leading_zeros() })
            }
            N::v_ffbl_b32 => {
                let x = u(w, 0, lane);
                R::I(if x == 0 { u32::MAX } else { x.trailing_zeros() })
            }
            N::v_ffbh_i32 => {
                let x = u(w, 0, lane) as i32;
                R::I(if x == 0 || x == -1 { u32::MAX } else if x < 0 { (!x).leading_zeros() } else { x.leading_zeros() })
            }
            // VOP3
            N::v_mad_u32_u24 => R::I((u(w, 0, lane) & 0xff_ffff).wrapping_mul(u(w, 1, lane) & 0xff_ffff).wrapping_add(u(w, 2, lane))),
            N::v_mad_i32_i24 => R::I(
                (((u(w, 0, lane) << 8) as i32 >> 8).wrapping_mul((u(w, 1, lane) << 8) as i32 >> 8) as u32).wrapping_add(u(w, 2, lane)),
            ),
            N::v_fma_f32 => R::F(f(w, 0, lane).mul_add(f(w, 1, lane), f(w, 2, lane))),
            N::v_fma_f64 => R::D(fd(w, 0, lane).mul_add(fd(w, 1, lane), fd(w, 2, lane))),
            N::v_bfe_u32 => R::I(bfe(u(w, 0, lane), u(w, 1, lane), u(w, 2, lane), false)),
            N::v_bfe_i32 => R::I(bfe(u(w, 0, lane), u(w, 1, lane), u(w, 2, lane), true)),
            N::v_bfi_b32 => {
                let (a, b, cc) = (u(w, 0, lane), u(w, 1, lane), u(w, 2, lane));
                R::I((a & b) | (!a & cc))
            }
            N::v_alignbit_b32 => {
                let x = (u(w, 0, lane) as u64) << 32 | u(w, 1, lane) as u64;
                R::I((x >> (u(w, 2, lane) & 31)) as u32)
            }
            N::v_alignbyte_b32 => {
                let x = (u(w, 0, lane) as u64) << 32 | u(w, 1, lane) as u64;
                R::I((x >> (8 * (u(w, 2, lane) & 3))) as u32)
            }
            N::v_min3_f32 => R::F(min32(min32(f(w, 0, lane), f(w, 1, lane)), f(w, 2, lane))),
            N::v_max3_f32 => R::F(max32(max32(f(w, 0, lane), f(w, 1, lane)), f(w, 2, lane))),
            N::v_med3_f32 => R::F(med3_32(f(w, 0, lane), f(w, 1, lane), f(w, 2, lane))),
            N::v_min3_i32 => R::I((u(w, 0, lane) as i32).min(u(w, 1, lane) as i32).min(u(w, 2, lane) as i32) as u32),
            N::v_max3_i32 => R::I((u(w, 0, lane) as i32).max(u(w, 1, lane) as i32).max(u(w, 2, lane) as i32) as u32),
            N::v_min3_u32 => R::I(u(w, 0, lane).min(u(w, 1, lane)).min(u(w, 2, lane))),
            N::v_max3_u32 => R::I(u(w, 0, lane).max(u(w, 1, lane)).max(u(w, 2, lane))),
            N::v_med3_i32 => {
                let mut v = [u(w, 0, lane) as i32, u(w, 1, lane) as i32, u(w, 2, lane) as i32];
                v.sort();
                R::I(v[1] as u32)
            }
            N::v_med3_u32 => {
                let mut v = [u(w, 0, lane), u(w, 1, lane), u(w, 2, lane)];
                v.sort();
                R::I(v[1])
            }
            N::v_div_fixup_f32 => R::F(div_fixup32(f(w, 0, lane), f(w, 1, lane), f(w, 2, lane))),
            N::v_div_fixup_f64 => R::D(div_fixup64(fd(w, 0, lane), fd(w, 1, lane), fd(w, 2, lane))),
            N::v_div_fmas_f32 => R::F(div_fmas32(f(w, 0, lane), f(w, 1, lane), f(w, 2, lane), w.vcc() >> lane & 1 == 1)),
            N::v_div_fmas_f64 => R::D(div_fmas64(fd(w, 0, lane), fd(w, 1, lane), fd(w, 2, lane), w.vcc() >> lane & 1 == 1)),
            N::v_div_scale_f32 => {
                let (r, v) = div_scale32(f(w, 0, lane), f(w, 1, lane), f(w, 2, lane));
                c = v;
                R::F(r)
            }
            N::v_div_scale_f64 => {
                let (r, v) = div_scale64(fd(w, 0, lane), fd(w, 1, lane), fd(w, 2, lane));
                c = v;
                R::D(r)
            }
            N::v_mul_lo_u32 => R::I(u(w, 0, lane).wrapping_mul(u(w, 1, lane))),
            N::v_mul_hi_u32 => R::I(((u(w, 0, lane) as u64 * u(w, 1, lane) as u64) >> 32) as u32),
            N::v_mul_hi_i32 => R::I(((u(w, 0, lane) as i32 as i64 * u(w, 1, lane) as i32 as i64) >> 32) as u32),
            N::v_add_f64 => R::D(fd(w, 0, lane) + fd(w, 1, lane)),
            N::v_mul_f64 => R::D(fd(w, 0, lane) * fd(w, 1, lane)),
            N::v_min_f64 => R::D(min64(fd(w, 0, lane), fd(w, 1, lane))),
            N::v_max_f64 => R::D(max64(fd(w, 0, lane), fd(w, 1, lane))),
            N::v_ldexp_f64 => R::D(ldexp64(fd(w, 0, lane), u(w, 1, lane) as i32)),
            N::v_ldexp_f32 => R::F(ldexp32(f(w, 0, lane), u(w, 1, lane) as i32)),
            N::v_lshlrev_b64 => R::L(ul(w, 1, lane) << (u(w, 0, lane) & 63)),
            N::v_lshrrev_b64 => R::L(ul(w, 1, lane) >> (u(w, 0, lane) & 63)),
            N::v_ashrrev_i64 => R::L(((ul(w, 1, lane) as i64) >> (u(w, 0, lane) & 63)) as u64),
            N::v_bcnt_u32_b32 => R::I(u(w, 0, lane).count_ones().wrapping_add(u(w, 1, lane))),
            N::v_mbcnt_lo_u32_b32 => {
                let below = if lane >= 32 { u32::MAX } else { ((1u64 << lane) - 1) as u32 };
                R::I((u(w, 0, lane) & below).count_ones().wrapping_add(u(w, 1, lane)))
            }
            N::v_mbcnt_hi_u32_b32 => {
                let below = if lane < 32 { 0 } else { ((1u64 << (lane - 32)) - 1) as u32 };
                R::I((u(w, 0, lane) & below).count_ones().wrapping_add(u(w, 1, lane)))
            }
            N::v_lshl_add_u32 => R::I((u(w, 0, lane) << (u(w, 1, lane) & 31)).wrapping_add(u(w, 2, lane))),
            N::v_add_lshl_u32 => R::I(u(w, 0, lane).wrapping_add(u(w, 1, lane)) << (u(w, 2, lane) & 31)),
            N::v_add3_u32 => R::I(u(w, 0, lane).wrapping_add(u(w, 1, lane)).wrapping_add(u(w, 2, lane))),
            N::v_lshl_or_b32 => R::I((u(w, 0, lane) << (u(w, 1, lane) & 31)) | u(w, 2, lane)),
            N::v_and_or_b32 => R::I((u(w, 0, lane) & u(w, 1, lane)) | u(w, 2, lane)),
            N::v_or3_b32 => R::I(u(w, 0, lane) | u(w, 1, lane) | u(w, 2, lane)),
            N::v_xad_u32 => R::I((u(w, 0, lane) ^ u(w, 1, lane)).wrapping_add(u(w, 2, lane))),
            N::v_xor3_b32 => R::I(u(w, 0, lane) ^ u(w, 1, lane) ^ u(w, 2, lane)),
            N::v_bfm_b32 => R::I((((1u64 << (u(w, 0, lane) & 31)) - 1) as u32) << (u(w, 1, lane) & 31)),
            N::v_perm_b32 => {
                let data = (u(w, 0, lane) as u64) << 32 | u(w, 1, lane) as u64;
                let sel = u(w, 2, lane);
                let mut r = 0u32;
                for k in 0..4 {
                    r |= perm_byte(sel >> (8 * k) & 0xff, data) << (8 * k);
                }
                R::I(r)
            }
            N::v_lshl_add_u64 => R::L((ul(w, 0, lane) << (u(w, 1, lane) & 63)).wrapping_add(ul(w, 2, lane))),
            N::v_mad_u64_u32 => {
                let r = (u(w, 0, lane) as u128 * u(w, 1, lane) as u128) + ul(w, 2, lane) as u128;
                c = r >> 64 != 0;
                R::L(r as u64)
            }
            N::v_mad_i64_i32 => {
                let p = u(w, 0, lane) as i32 as i128 * u(w, 1, lane) as i32 as i128;
                let r = p + ul(w, 2, lane) as i64 as i128;
                c = r > i64::MAX as i128 || r < i64::MIN as i128;
                R::L(r as u64)
            }
            _ => return Err("VALU instruction not implemented by the simulator".into()),
        };
        let bits = match r {
            R::F(x) => {
                let mut x = x;
                x = match m.omod {
                    1 => x * 2.0,
                    2 => x * 4.0,
                    3 => x * 0.5,
                    _ => x,
                };
                if m.clamp {
                    x = if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) };
                }
                ftz32(x, ftz).to_bits() as u64
            }
            R::D(x) => {
                let mut x = x;
                x = match m.omod {
                    1 => x * 2.0,
                    2 => x * 4.0,
                    3 => x * 0.5,
                    _ => x,
                };
                if m.clamp {
                    x = if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) };
                }
                x.to_bits()
            }
            R::I(x) => x as u64,
            R::L(x) => x,
        };
        out[lane as usize] = bits;
        if c {
            carry |= 1 << lane;
        }
        if matches!(n, N::v_div_scale_f32 | N::v_div_scale_f64) && c {
            vcc_out |= 1 << lane;
        }
    }
    let _ = vcc_out;
    let dst = i.defs[0];
    for lane in 0..lanes {
        if exec >> lane & 1 == 1 {
            set_v(w, &dst, lane, out[lane as usize]);
        }
    }
    if let Some(cd) = i.defs.get(1) {
        set_mask(w, cd, carry);
    }
    Ok(())
}

/// The negated forms are true for unordered operands, hence `!(a >= b)`.
#[allow(clippy::neg_cmp_op_on_partial_ord)]
fn cmp_f64(a: f64, b: f64, c: Cond) -> bool {
    let un = a.is_nan() || b.is_nan();
    match c {
        Cond::F => false,
        Cond::Lt => a < b,
        Cond::Eq => a == b,
        Cond::Le => a <= b,
        Cond::Gt => a > b,
        Cond::Lg => !un && a != b,
        Cond::Ge => a >= b,
        Cond::O => !un,
        Cond::U => un,
        Cond::Nge => !(a >= b),
        Cond::Nlg => un || a == b,
        Cond::Ngt => !(a > b),
        Cond::Nle => !(a <= b),
        Cond::Neq => !(a == b),
        Cond::Nlt => !(a < b),
        Cond::Tru => true,
        Cond::Ne => a != b,
    }
}

fn cmp_int<T: PartialOrd>(a: T, b: T, c: Cond) -> bool {
    match c {
        Cond::F => false,
        Cond::Lt => a < b,
        Cond::Eq => a == b,
        Cond::Le => a <= b,
        Cond::Gt => a > b,
        Cond::Ne | Cond::Lg | Cond::Neq => a != b,
        Cond::Ge => a >= b,
        _ => true,
    }
}

fn write_cmp(w: &mut Wave, d: &DInst, bits: u64, x: bool) {
    if x {
        w.set_exec(bits);
    }
    if let Some(o) = d.inst.defs.first() {
        set_mask(w, o, bits);
    }
}

fn cmp(w: &mut Wave, d: &DInst, ty: CmpTy, cond: Cond, x: bool) -> Result<(), String> {
    let i = &d.inst;
    let exec = w.exec();
    let m = i.mods;
    let mut bits = 0u64;
    for lane in 0..w.lanes {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let r = match ty {
            CmpTy::F32 => {
                let g = |k: usize| {
                    let mut b = v32(w, &i.uses[k], lane);
                    if m.abs >> k & 1 == 1 {
                        b &= 0x7fff_ffff;
                    }
                    if m.neg >> k & 1 == 1 {
                        b ^= 0x8000_0000;
                    }
                    f32::from_bits(b) as f64
                };
                cmp_f64(g(0), g(1), cond)
            }
            CmpTy::F64 => {
                let g = |k: usize| {
                    let mut b = v64(w, &i.uses[k], lane, true);
                    if m.abs >> k & 1 == 1 {
                        b &= 0x7fff_ffff_ffff_ffff;
                    }
                    if m.neg >> k & 1 == 1 {
                        b ^= 0x8000_0000_0000_0000;
                    }
                    f64::from_bits(b)
                };
                cmp_f64(g(0), g(1), cond)
            }
            CmpTy::I32 => cmp_int(v32(w, &i.uses[0], lane) as i32, v32(w, &i.uses[1], lane) as i32, cond),
            CmpTy::U32 => cmp_int(v32(w, &i.uses[0], lane), v32(w, &i.uses[1], lane), cond),
            CmpTy::I64 => cmp_int(v64(w, &i.uses[0], lane, false) as i64, v64(w, &i.uses[1], lane, false) as i64, cond),
            CmpTy::U64 => cmp_int(v64(w, &i.uses[0], lane, false), v64(w, &i.uses[1], lane, false), cond),
        };
        if r {
            bits |= 1 << lane;
        }
    }
    write_cmp(w, d, bits, x);
    Ok(())
}

fn cmp_class(w: &mut Wave, d: &DInst, f64_: bool, x: bool) -> Result<(), String> {
    let i = &d.inst;
    let exec = w.exec();
    let mut bits = 0u64;
    for lane in 0..w.lanes {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let class = if f64_ {
            let v = f64::from_bits(v64(w, &i.uses[0], lane, true));
            class64(v, v.to_bits() & 0x0008_0000_0000_0000 != 0)
        } else {
            class32(f32::from_bits(v32(w, &i.uses[0], lane)))
        };
        if class & v32(w, &i.uses[1], lane) != 0 {
            bits |= 1 << lane;
        }
    }
    write_cmp(w, d, bits, x);
    Ok(())
}

fn dual_lane(w: &Wave, h: &DualHalf, lit: u32, lane: u32, ftz: bool) -> u32 {
    let a = match h.src0 {
        Operand::Literal(_) => lit,
        o => v32(w, &o, lane),
    };
    let b = w.v(h.vsrc1 as usize, lane);
    let fa = ftz32(f32::from_bits(a), ftz);
    let fb = ftz32(f32::from_bits(b), ftz);
    let fl = f32::from_bits(lit);
    let acc = ftz32(f32::from_bits(w.v(h.dst as usize, lane)), ftz);
    let f = |x: f32| ftz32(x, ftz).to_bits();
    match h.op {
        DualOp::FmacF32 => f(fa.mul_add(fb, acc)),
        DualOp::FmaakF32 => f(fa.mul_add(fb, fl)),
        DualOp::FmamkF32 => f(fa.mul_add(fl, fb)),
        DualOp::MulF32 => f(fa * fb),
        DualOp::AddF32 => f(fa + fb),
        DualOp::SubF32 => f(fa - fb),
        DualOp::SubrevF32 => f(fb - fa),
        DualOp::MovB32 => a,
        DualOp::CndmaskB32 => {
            if w.vcc() >> lane & 1 == 1 {
                b
            } else {
                a
            }
        }
        DualOp::MaxF32 => f(max32(fa, fb)),
        DualOp::MinF32 => f(min32(fa, fb)),
        DualOp::AddNcU32 => a.wrapping_add(b),
        DualOp::LshlrevB32 => b << (a & 31),
        DualOp::AndB32 => a & b,
    }
}

/// Both halves read their sources before either writes (so a half may read
/// the register the other half writes, as llc-22's pairs do: its rule only
/// keeps a later instruction in program order from reading an earlier one's
/// result, which it cannot see inside a pair).
fn dual(w: &mut Wave, x: DualHalf, y: DualHalf, lit: u32, ftz: bool) -> Result<(), String> {
    let exec = w.exec();
    let mut ox = [0u32; 64];
    let mut oy = [0u32; 64];
    for lane in 0..w.lanes {
        if exec >> lane & 1 == 1 {
            ox[lane as usize] = dual_lane(w, &x, lit, lane, ftz);
            oy[lane as usize] = dual_lane(w, &y, lit, lane, ftz);
        }
    }
    for lane in 0..w.lanes {
        if exec >> lane & 1 == 1 {
            w.set_v(x.dst as usize, lane, ox[lane as usize]);
            w.set_v(y.dst as usize, lane, oy[lane as usize]);
        }
    }
    Ok(())
}

/// gfx11 `v_mov_b16_e32` ([`Sem::Mov16`]): 16 bits into one half of the
/// destination in every active lane. A constant source is a 16-bit one: the
/// integers -16..64, and for the float codes the f16 values (0.5, -0.5, 1,
/// -1, 2, -2, 4, -4, 1/(2*pi)).
pub fn mov16(w: &mut Wave, d: &DInst, dst_hi: bool, src_hi: bool) -> Result<(), String> {
    let dst = usize::from(d.inst.defs.first().and_then(|o| o.as_reg()).ok_or("v_mov_b16 without a destination")?.base.index());
    let src = *d.inst.uses.first().ok_or("v_mov_b16 without a source")?;
    let constant = |c: u8| -> Result<u16, String> {
        Ok(match c {
            128..=192 => u16::from(c - 128),
            193..=208 => (-(i16::from(c - 192))) as u16,
            240 => 0x3800,
            241 => 0xB800,
            242 => 0x3C00,
            243 => 0xBC00,
            244 => 0x4000,
            245 => 0xC000,
            246 => 0x4400,
            247 => 0xC400,
            248 => 0x3118,
            _ => return Err(format!("v_mov_b16: constant code {c} is not modelled")),
        })
    };
    let shift = if dst_hi { 16 } else { 0 };
    for lane in 0..w.lanes {
        if w.exec() >> lane & 1 == 0 {
            continue;
        }
        let value = match src {
            Operand::Reg(r) if r.base.is_vgpr() => (w.v(usize::from(r.base.index()), lane) >> if src_hi { 16 } else { 0 }) as u16,
            Operand::Reg(r) => w.sget(usize::from(r.base.index())) as u16,
            Operand::Const(c) => constant(c)?,
            Operand::Literal(v) => v as u16,
            Operand::Off => return Err("v_mov_b16 with no source".into()),
        };
        let old = w.v(dst, lane);
        w.set_v(dst, lane, (old & !(0xFFFF << shift)) | u32::from(value) << shift);
    }
    Ok(())
}
