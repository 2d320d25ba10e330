//! Scalar ALU and program control (SOP1, SOP2, SOPK, SOPC, SOPP).

use amdgpu_isa::waitcnt::Waitcnt;

use super::decode::{DInst, N};
use super::operands::{s32, s64, set_s};
use super::state::Wave;
use super::Flow;

fn sext16(x: u16) -> u32 {
    x as i16 as i32 as u32
}

/// Executes a scalar instruction. `next` is the address after it.
pub fn exec(w: &mut Wave, d: &DInst, n: N, next: u64) -> Result<Flow, String> {
    let i = &d.inst;
    let u = |k: usize| s32(w, &i.uses[k]);
    let u64_ = |k: usize| s64(w, &i.uses[k]);
    let dst = |w: &mut Wave, v: u64| set_s(w, &i.defs[0], v);
    let mut flow = Flow::Next;
    macro_rules! bin32 {
        ($f:expr) => {{
            let (a, b) = (u(0), u(1));
            #[allow(clippy::redundant_closure_call)]
            let (r, scc): (u32, Option<bool>) = $f(a, b, w.scc);
            dst(w, r as u64);
            if let Some(s) = scc {
                w.scc = s;
            }
        }};
    }
    macro_rules! bin64 {
        ($f:expr) => {{
            let (a, b) = (u64_(0), u64_(1));
            #[allow(clippy::redundant_closure_call)]
            let r: u64 = $f(a, b);
            dst(w, r);
            w.scc = r != 0;
        }};
    }
    match n {
        N::s_add_u32 => bin32!(|a: u32, b: u32, _| { let (r, c) = a.overflowing_add(b); (r, Some(c)) }),
        N::s_sub_u32 => bin32!(|a: u32, b: u32, _| { let (r, c) = a.overflowing_sub(b); (r, Some(c)) }),
        N::s_add_i32 => bin32!(|a: u32, b: u32, _| { let (r, o) = (a as i32).overflowing_add(b as i32); (r as u32, Some(o)) }),
        N::s_sub_i32 => bin32!(|a: u32, b: u32, _| { let (r, o) = (a as i32).overflowing_sub(b as i32); (r as u32, Some(o)) }),
        N::s_addc_u32 => bin32!(|a: u32, b: u32, c: bool| {
            let r = a as u64 + b as u64 + c as u64;
            (r as u32, Some(r >> 32 != 0))
        }),
        N::s_subb_u32 => bin32!(|a: u32, b: u32, c: bool| {
            let r = (a as u64).wrapping_sub(b as u64).wrapping_sub(c as u64);
            (r as u32, Some((b as u64 + c as u64) > a as u64))
        }),
        N::s_min_i32 => bin32!(|a: u32, b: u32, _| { let s = (a as i32) < (b as i32); (if s { a } else { b }, Some(s)) }),
        N::s_min_u32 => bin32!(|a: u32, b: u32, _| { let s = a < b; (if s { a } else { b }, Some(s)) }),
        N::s_max_i32 => bin32!(|a: u32, b: u32, _| { let s = (a as i32) > (b as i32); (if s { a } else { b }, Some(s)) }),
        N::s_max_u32 => bin32!(|a: u32, b: u32, _| { let s = a > b; (if s { a } else { b }, Some(s)) }),
        N::s_cselect_b32 => bin32!(|a: u32, b: u32, c: bool| (if c { a } else { b }, None)),
        N::s_cselect_b64 => {
            let r = if w.scc { u64_(0) } else { u64_(1) };
            dst(w, r);
        }
        N::s_and_b32 => bin32!(|a: u32, b: u32, _| { let r = a & b; (r, Some(r != 0)) }),
        N::s_or_b32 => bin32!(|a: u32, b: u32, _| { let r = a | b; (r, Some(r != 0)) }),
        N::s_xor_b32 => bin32!(|a: u32, b: u32, _| { let r = a ^ b; (r, Some(r != 0)) }),
        N::s_nand_b32 => bin32!(|a: u32, b: u32, _| { let r = !(a & b); (r, Some(r != 0)) }),
        N::s_nor_b32 => bin32!(|a: u32, b: u32, _| { let r = !(a | b); (r, Some(r != 0)) }),
        N::s_xnor_b32 => bin32!(|a: u32, b: u32, _| { let r = !(a ^ b); (r, Some(r != 0)) }),
        N::s_andn2_b32 => bin32!(|a: u32, b: u32, _| { let r = a & !b; (r, Some(r != 0)) }),
        N::s_orn2_b32 => bin32!(|a: u32, b: u32, _| { let r = a | !b; (r, Some(r != 0)) }),
        N::s_and_b64 => bin64!(|a: u64, b: u64| a & b),
        N::s_or_b64 => bin64!(|a: u64, b: u64| a | b),
        N::s_xor_b64 => bin64!(|a: u64, b: u64| a ^ b),
        N::s_andn2_b64 => bin64!(|a: u64, b: u64| a & !b),
        N::s_orn2_b64 => bin64!(|a: u64, b: u64| a | !b),
        N::s_lshl_b32 => bin32!(|a: u32, b: u32, _| { let r = a << (b & 31); (r, Some(r != 0)) }),
        N::s_lshr_b32 => bin32!(|a: u32, b: u32, _| { let r = a >> (b & 31); (r, Some(r != 0)) }),
        N::s_ashr_i32 => bin32!(|a: u32, b: u32, _| { let r = ((a as i32) >> (b & 31)) as u32; (r, Some(r != 0)) }),
        N::s_lshl_b64 => {
            let r = u64_(0) << (u(1) & 63);
            dst(w, r);
            w.scc = r != 0;
        }
        N::s_lshr_b64 => {
            let r = u64_(0) >> (u(1) & 63);
            dst(w, r);
            w.scc = r != 0;
        }
        N::s_ashr_i64 => {
            let r = ((u64_(0) as i64) >> (u(1) & 63)) as u64;
            dst(w, r);
            w.scc = r != 0;
        }
        N::s_bfm_b32 => bin32!(|a: u32, b: u32, _| ((((1u64 << (a & 31)) - 1) as u32) << (b & 31), None)),
        N::s_mul_i32 => bin32!(|a: u32, b: u32, _| (a.wrapping_mul(b), None)),
        N::s_mul_hi_u32 => bin32!(|a: u32, b: u32, _| (((a as u64 * b as u64) >> 32) as u32, None)),
        N::s_mul_hi_i32 => bin32!(|a: u32, b: u32, _| (((a as i32 as i64 * b as i32 as i64) >> 32) as u32, None)),
        N::s_bfe_u32 => bin32!(|a: u32, b: u32, _| {
            let (off, wd) = (b & 31, (b >> 16) & 0x7f);
            let r = if wd == 0 { 0 } else { ((a as u64 >> off) & ((1u64 << wd.min(32)) - 1)) as u32 };
            (r, Some(r != 0))
        }),
        N::s_bfe_i32 => bin32!(|a: u32, b: u32, _| {
            let (off, wd) = (b & 31, (b >> 16) & 0x7f);
            let r = if wd == 0 {
                0
            } else {
                let wd = wd.min(32);
                let x = (a as u64 >> off) & ((1u64 << wd) - 1);
                (((x << (64 - wd)) as i64) >> (64 - wd)) as u32
            };
            (r, Some(r != 0))
        }),
        N::s_bfe_u64 => {
            let (a, b) = (u64_(0), u(1));
            let (off, wd) = (b & 63, (b >> 16) & 0x7f);
            let r = if wd == 0 { 0 } else { (a >> off) & if wd >= 64 { u64::MAX } else { (1u64 << wd) - 1 } };
            dst(w, r);
            w.scc = r != 0;
        }
        N::s_pack_ll_b32_b16 => bin32!(|a: u32, b: u32, _| ((a & 0xffff) | (b << 16), None)),
        N::s_pack_lh_b32_b16 => bin32!(|a: u32, b: u32, _| ((a & 0xffff) | (b & 0xffff_0000), None)),
        N::s_pack_hh_b32_b16 => bin32!(|a: u32, b: u32, _| ((a >> 16) | (b & 0xffff_0000), None)),
        N::s_pack_hl_b32_b16 => bin32!(|a: u32, b: u32, _| ((a >> 16) | (b << 16), None)),
        N::s_lshl1_add_u32 | N::s_lshl2_add_u32 | N::s_lshl3_add_u32 | N::s_lshl4_add_u32 => {
            let sh = match n {
                N::s_lshl1_add_u32 => 1,
                N::s_lshl2_add_u32 => 2,
                N::s_lshl3_add_u32 => 3,
                _ => 4,
            };
            let r = ((u(0) as u64) << sh) + u(1) as u64;
            dst(w, r as u32 as u64);
            w.scc = r >> 32 != 0;
        }
        // SOP1
        N::s_mov_b32 => {
            let v = u(0);
            dst(w, v as u64);
        }
        N::s_mov_b64 => {
            let v = u64_(0);
            dst(w, v);
        }
        N::s_cmov_b32 => {
            if w.scc {
                let v = u(0);
                dst(w, v as u64);
            }
        }
        N::s_cmov_b64 => {
            if w.scc {
                let v = u64_(0);
                dst(w, v);
            }
        }
        N::s_not_b32 => {
            let r = !u(0);
            dst(w, r as u64);
            w.scc = r != 0;
        }
        N::s_not_b64 => {
            let r = !u64_(0);
            dst(w, r);
            w.scc = r != 0;
        }
        N::s_brev_b32 => {
            let r = u(0).reverse_bits();
            dst(w, r as u64);
        }
        N::s_bcnt1_i32_b32 => {
            let r = u(0).count_ones();
            dst(w, r as u64);
            w.scc = r != 0;
        }
        N::s_bcnt1_i32_b64 => {
            let r = u64_(0).count_ones();
            dst(w, r as u64);
            w.scc = r != 0;
        }
        N::s_sext_i32_i8 => {
            let r = u(0) as i8 as i32 as u32;
            dst(w, r as u64);
        }
        N::s_sext_i32_i16 => {
            let r = u(0) as i16 as i32 as u32;
            dst(w, r as u64);
        }
        N::s_bitset0_b32 | N::s_bitset1_b32 => {
            let bit = u(0) & 31;
            let cur = s32(w, &i.defs[0]);
            let r = if n == N::s_bitset0_b32 { cur & !(1 << bit) } else { cur | 1 << bit };
            dst(w, r as u64);
        }
        N::s_abs_i32 => {
            let r = (u(0) as i32).wrapping_abs() as u32;
            dst(w, r as u64);
            w.scc = r != 0;
        }
        N::s_ff1_i32_b32 => {
            let a = u(0);
            let r = if a == 0 { u32::MAX } else { a.trailing_zeros() };
            dst(w, r as u64);
        }
        N::s_ff1_i32_b64 => {
            let a = u64_(0);
            let r = if a == 0 { u32::MAX } else { a.trailing_zeros() };
            dst(w, r as u64);
        }
        N::s_flbit_i32_b32 => {
            let a = u(0);
            let r = if a == 0 { u32::MAX } else { a.leading_zeros() };
            dst(w, r as u64);
        }
        N::s_getpc_b64 => dst(w, next),
        N::s_setpc_b64 => flow = Flow::Jump(u64_(0)),
        N::s_swappc_b64 => {
            let target = u64_(0);
            dst(w, next);
            flow = Flow::Jump(target);
        }
        N::s_and_saveexec_b32
        | N::s_and_saveexec_b64
        | N::s_or_saveexec_b32
        | N::s_or_saveexec_b64
        | N::s_xor_saveexec_b32
        | N::s_xor_saveexec_b64
        | N::s_andn2_saveexec_b32
        | N::s_andn2_saveexec_b64 => {
            let wide = matches!(n, N::s_and_saveexec_b64 | N::s_or_saveexec_b64 | N::s_xor_saveexec_b64 | N::s_andn2_saveexec_b64);
            if wide != w.wave64() {
                return Err("saveexec of the wrong width for the wave size".into());
            }
            let s = if wide { u64_(0) } else { u(0) as u64 };
            let e = w.exec();
            let ne = match n {
                N::s_and_saveexec_b32 | N::s_and_saveexec_b64 => s & e,
                N::s_or_saveexec_b32 | N::s_or_saveexec_b64 => s | e,
                N::s_xor_saveexec_b32 | N::s_xor_saveexec_b64 => s ^ e,
                _ => s & !e,
            } & w.all_lanes();
            dst(w, e);
            w.set_exec(ne);
            w.scc = ne != 0;
        }
        // SOPK
        N::s_movk_i32 => dst(w, sext16(i.imm) as u64),
        N::s_cmovk_i32 => {
            if w.scc {
                dst(w, sext16(i.imm) as u64)
            }
        }
        N::s_addk_i32 => {
            let cur = s32(w, &i.defs[0]) as i32;
            let (r, o) = cur.overflowing_add(sext16(i.imm) as i32);
            dst(w, r as u32 as u64);
            w.scc = o;
        }
        N::s_mulk_i32 => {
            let cur = s32(w, &i.defs[0]) as i32;
            dst(w, cur.wrapping_mul(sext16(i.imm) as i32) as u32 as u64);
        }
        N::s_cmpk_eq_i32 | N::s_cmpk_lg_i32 | N::s_cmpk_gt_i32 | N::s_cmpk_ge_i32 | N::s_cmpk_lt_i32 | N::s_cmpk_le_i32 => {
            let (a, b) = (u(0) as i32, i.imm as i16 as i32);
            w.scc = match n {
                N::s_cmpk_eq_i32 => a == b,
                N::s_cmpk_lg_i32 => a != b,
                N::s_cmpk_gt_i32 => a > b,
                N::s_cmpk_ge_i32 => a >= b,
                N::s_cmpk_lt_i32 => a < b,
                _ => a <= b,
            };
        }
        N::s_cmpk_eq_u32 | N::s_cmpk_lg_u32 | N::s_cmpk_gt_u32 | N::s_cmpk_ge_u32 | N::s_cmpk_lt_u32 | N::s_cmpk_le_u32 => {
            let (a, b) = (u(0), i.imm as u32);
            w.scc = match n {
                N::s_cmpk_eq_u32 => a == b,
                N::s_cmpk_lg_u32 => a != b,
                N::s_cmpk_gt_u32 => a > b,
                N::s_cmpk_ge_u32 => a >= b,
                N::s_cmpk_lt_u32 => a < b,
                _ => a <= b,
            };
        }
        N::s_call_b64 => {
            dst(w, next);
            flow = Flow::Jump(next.wrapping_add((i.imm as i16 as i64 * 4) as u64));
        }
        N::s_waitcnt_vscnt | N::s_waitcnt_vmcnt | N::s_waitcnt_expcnt | N::s_waitcnt_lgkmcnt => {
            let v = (u(0).wrapping_add(i.imm as u32)).min(63) as u8;
            match n {
                N::s_waitcnt_vscnt => w.pending.wait(None, None, Some(v)),
                N::s_waitcnt_vmcnt => w.pending.wait(Some(v), None, None),
                N::s_waitcnt_lgkmcnt => w.pending.wait(None, Some(v), None),
                _ => {}
            }
        }
        // SOPC
        N::s_cmp_eq_i32 | N::s_cmp_eq_u32 => w.scc = u(0) == u(1),
        N::s_cmp_lg_i32 | N::s_cmp_lg_u32 => w.scc = u(0) != u(1),
        N::s_cmp_gt_i32 => w.scc = (u(0) as i32) > (u(1) as i32),
        N::s_cmp_ge_i32 => w.scc = (u(0) as i32) >= (u(1) as i32),
        N::s_cmp_lt_i32 => w.scc = (u(0) as i32) < (u(1) as i32),
        N::s_cmp_le_i32 => w.scc = (u(0) as i32) <= (u(1) as i32),
        N::s_cmp_gt_u32 => w.scc = u(0) > u(1),
        N::s_cmp_ge_u32 => w.scc = u(0) >= u(1),
        N::s_cmp_lt_u32 => w.scc = u(0) < u(1),
        N::s_cmp_le_u32 => w.scc = u(0) <= u(1),
        N::s_cmp_eq_u64 => w.scc = u64_(0) == u64_(1),
        N::s_cmp_lg_u64 => w.scc = u64_(0) != u64_(1),
        N::s_bitcmp0_b32 => w.scc = u(0) >> (u(1) & 31) & 1 == 0,
        N::s_bitcmp1_b32 => w.scc = u(0) >> (u(1) & 31) & 1 == 1,
        // SOPP
        N::s_nop | N::s_sethalt | N::s_sleep | N::s_setprio | N::s_icache_inv => {}
        N::s_endpgm => flow = Flow::End,
        N::s_barrier => flow = Flow::Barrier,
        N::s_trap => return Err(format!("s_trap {} executed", i.imm)),
        N::s_waitcnt => {
            let wc = Waitcnt::decode(i.imm, w.gen()).ok_or("s_waitcnt with reserved bits set")?;
            w.pending.wait(wc.vm, wc.lgkm, None);
        }
        N::s_branch | N::s_cbranch_scc0 | N::s_cbranch_scc1 | N::s_cbranch_vccz | N::s_cbranch_vccnz | N::s_cbranch_execz | N::s_cbranch_execnz => {
            let take = match n {
                N::s_branch => true,
                N::s_cbranch_scc0 => !w.scc,
                N::s_cbranch_scc1 => w.scc,
                N::s_cbranch_vccz => w.vcc() == 0,
                N::s_cbranch_vccnz => w.vcc() != 0,
                N::s_cbranch_execz => w.exec() == 0,
                _ => w.exec() != 0,
            };
            if take {
                flow = Flow::Jump(next.wrapping_add((i.imm as i16 as i64 * 4) as u64));
            }
        }
        _ => return Err("not a scalar instruction".into()),
    }
    Ok(flow)
}
