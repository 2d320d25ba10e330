//! Instruction decoding for the simulator: bytes → [`DInst`] (an `amdgpu_isa::Inst`
//! plus the simulator's semantic class [`Sem`]), decoded once per PC and cached.
//!
//! Semantics are attached by mnemonic (the isa table's gfx9 name), so instructions
//! the isa crate adds later are picked up without changes here; a VOPD pair gets
//! [`Sem::Dual`] from its two component rows. A small fallback decoder covers the
//! two encodings that LLVM emits for the reference kernels but the isa table does
//! not have (see [`EXTRA_INSTRUCTIONS`]); it reports them as `extra` in the text so
//! that the gap stays visible.

use amdgpu_isa::{Counters, Generation, Gpu, Inst, Kind, Opcode, Operand, Target};

/// Instructions the fallback decoder knows (mnemonic, format, GPUs): the isa table
/// lacks them; LLVM 22 emits them for the reference kernels. (ds_read2st64,
/// s_ff1_i32_b64, v_fmac_f64, v_madmk/fmamk/fmaak, the aperture operands, gfx11
/// s_clause/s_delay_alu/v_cmpx, VOPD and SGPR src1 of gfx11 v_add_co_u32 used to be
/// here; the isa table has them now.)
pub const EXTRA_INSTRUCTIONS: &[(&str, &str, &str)] = &[("s_code_end", "SOPP", "gfx1100"), ("s_sendmsg", "SOPP", "gfx1100"), ("v_mov_b16_e32", "VOP1", "gfx1100")];

macro_rules! named {
    ($($n:ident),* $(,)?) => {
        /// Instructions with their own semantics, by their gfx9 mnemonic.
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum N { $($n),* }
        impl N {
            pub fn from_name(s: &str) -> Option<N> {
                match s { $(stringify!($n) => Some(N::$n),)* _ => None }
            }
        }
    };
}

named! {
    // SOP2
    s_add_u32, s_sub_u32, s_add_i32, s_sub_i32, s_addc_u32, s_subb_u32, s_min_i32, s_min_u32,
    s_max_i32, s_max_u32, s_cselect_b32, s_cselect_b64, s_and_b32, s_and_b64, s_or_b32, s_or_b64,
    s_xor_b32, s_xor_b64, s_nand_b32, s_nor_b32, s_xnor_b32, s_lshl_b32, s_lshl_b64, s_lshr_b32,
    s_lshr_b64, s_ashr_i32, s_ashr_i64, s_bfm_b32, s_mul_i32, s_bfe_u32, s_bfe_i32, s_bfe_u64,
    s_mul_hi_u32, s_mul_hi_i32, s_pack_ll_b32_b16, s_pack_lh_b32_b16, s_pack_hh_b32_b16, s_pack_hl_b32_b16, s_lshl1_add_u32, s_lshl2_add_u32,
    s_lshl3_add_u32, s_lshl4_add_u32, s_andn2_b32, s_andn2_b64, s_orn2_b32, s_orn2_b64,
    // SOP1
    s_mov_b32, s_mov_b64, s_cmov_b32, s_cmov_b64, s_not_b32, s_not_b64, s_brev_b32,
    s_bcnt1_i32_b32, s_bcnt1_i32_b64, s_sext_i32_i8, s_sext_i32_i16, s_bitset0_b32, s_bitset1_b32,
    s_abs_i32, s_getpc_b64, s_setpc_b64, s_swappc_b64, s_and_saveexec_b32, s_and_saveexec_b64,
    s_or_saveexec_b32, s_or_saveexec_b64, s_xor_saveexec_b32, s_xor_saveexec_b64, s_ff1_i32_b32,
    s_ff1_i32_b64, s_flbit_i32_b32, s_andn2_saveexec_b32, s_andn2_saveexec_b64,
    // SOPK
    s_movk_i32, s_cmovk_i32, s_addk_i32, s_mulk_i32, s_cmpk_eq_i32, s_cmpk_eq_u32, s_cmpk_lg_i32,
    s_cmpk_lg_u32, s_cmpk_gt_i32, s_cmpk_gt_u32, s_cmpk_ge_i32, s_cmpk_ge_u32, s_cmpk_lt_i32,
    s_cmpk_lt_u32, s_cmpk_le_i32, s_cmpk_le_u32, s_call_b64, s_waitcnt_vscnt, s_waitcnt_vmcnt,
    s_waitcnt_expcnt, s_waitcnt_lgkmcnt,
    // SOPC
    s_cmp_eq_i32, s_cmp_lg_i32, s_cmp_gt_i32, s_cmp_ge_i32, s_cmp_lt_i32, s_cmp_le_i32,
    s_cmp_eq_u32, s_cmp_lg_u32, s_cmp_gt_u32, s_cmp_ge_u32, s_cmp_lt_u32, s_cmp_le_u32,
    s_cmp_eq_u64, s_cmp_lg_u64, s_bitcmp0_b32, s_bitcmp1_b32,
    // SOPP
    s_nop, s_endpgm, s_branch, s_cbranch_scc0, s_cbranch_scc1, s_cbranch_vccz, s_cbranch_vccnz,
    s_cbranch_execz, s_cbranch_execnz, s_barrier, s_waitcnt, s_sethalt, s_sleep, s_setprio,
    s_trap, s_icache_inv,
    // VOP2
    v_add_f32, v_sub_f32, v_subrev_f32, v_mul_f32, v_min_f32, v_max_f32, v_mul_i32_i24,
    v_mul_hi_i32_i24, v_mul_u32_u24, v_mul_hi_u32_u24, v_min_i32, v_max_i32, v_min_u32, v_max_u32,
    v_lshrrev_b32, v_ashrrev_i32, v_lshlrev_b32, v_and_b32, v_or_b32, v_xor_b32, v_xnor_b32,
    v_mac_f32, v_fmac_f32, v_fmac_f64, v_cndmask_b32, v_add_u32, v_sub_u32, v_subrev_u32,
    v_add_co_u32, v_sub_co_u32, v_subrev_co_u32, v_addc_co_u32, v_subb_co_u32, v_subbrev_co_u32,
    v_fmamk_f32, v_fmaak_f32, v_madmk_f32, v_madak_f32,
    // VOP1
    v_nop, v_readfirstlane_b32, v_mov_b32, v_mov_b64, v_cvt_i32_f64, v_cvt_f64_i32, v_cvt_f32_i32,
    v_cvt_f32_u32, v_cvt_u32_f32, v_cvt_i32_f32, v_cvt_f32_f64, v_cvt_f64_f32, v_cvt_u32_f64,
    v_cvt_f64_u32, v_cvt_f32_ubyte0, v_cvt_f32_ubyte1, v_cvt_f32_ubyte2, v_cvt_f32_ubyte3,
    v_fract_f32, v_trunc_f32, v_ceil_f32, v_rndne_f32, v_floor_f32, v_exp_f32, v_log_f32,
    v_rcp_f32, v_rcp_iflag_f32, v_rsq_f32, v_sqrt_f32, v_rcp_f64, v_rsq_f64, v_sqrt_f64,
    v_trunc_f64, v_ceil_f64, v_floor_f64, v_rndne_f64, v_fract_f64, v_frexp_exp_i32_f32,
    v_frexp_mant_f32, v_frexp_exp_i32_f64, v_frexp_mant_f64, v_not_b32, v_bfrev_b32, v_ffbh_u32,
    v_ffbl_b32, v_ffbh_i32, v_accvgpr_mov_b32, v_sin_f32, v_cos_f32, v_cvt_f16_f32, v_cvt_f32_f16,
    v_permlane64_b32,
    // VOP3
    v_mad_u32_u24, v_mad_i32_i24, v_fma_f32, v_fma_f64, v_bfe_u32, v_bfe_i32, v_bfi_b32,
    v_alignbit_b32, v_alignbyte_b32, v_min3_f32, v_min3_i32, v_min3_u32, v_max3_f32, v_max3_i32,
    v_max3_u32, v_med3_f32, v_med3_i32, v_med3_u32, v_div_fixup_f32, v_div_fixup_f64,
    v_div_fmas_f32, v_div_fmas_f64, v_mul_lo_u32, v_mul_hi_u32, v_mul_hi_i32, v_add_f64,
    v_mul_f64, v_ldexp_f64, v_ldexp_f32, v_lshlrev_b64, v_lshrrev_b64, v_ashrrev_i64,
    v_readlane_b32, v_writelane_b32, v_bcnt_u32_b32, v_mbcnt_lo_u32_b32, v_mbcnt_hi_u32_b32,
    v_lshl_add_u32, v_add_lshl_u32, v_add3_u32, v_lshl_or_b32, v_and_or_b32, v_or3_b32,
    v_xad_u32, v_xor3_b32, v_bfm_b32, v_perm_b32, v_lshl_add_u64, v_min_f64, v_max_f64, v_div_scale_f32,
    v_div_scale_f64, v_mad_u64_u32, v_mad_i64_i32, v_add_i32, v_sub_i32,
    // VOP3P (AGPR moves)
    v_accvgpr_read_b32, v_accvgpr_write_b32, v_pk_fma_f32, v_pk_mul_f32, v_pk_add_f32,
    v_pk_fma_f16, v_pk_add_f16, v_pk_mul_f16, v_pk_min_f16, v_pk_max_f16, v_pk_mov_b32,
}

/// Comparison operand type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpTy {
    F32,
    F64,
    I32,
    U32,
    I64,
    U64,
}

/// Memory segment of a vector memory instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seg {
    Flat,
    Global,
    Scratch,
    Buffer,
}

/// Read-modify-write operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Atom {
    Add,
    Sub,
    SMin,
    UMin,
    SMax,
    UMax,
    And,
    Or,
    Xor,
    Inc,
    Dec,
    Swap,
    CmpSwap,
    AddF32,
}

/// What a memory instruction does with memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// `size` bytes (1, 2, 4, 8, 12, 16); sub-dword loads extend by `signed`.
    Load { size: u8, signed: bool },
    /// A D16 load: `size` (1 or 2) bytes, extended by `signed` to 16 bits, into
    /// the low (or, `hi`, the high) half of the destination; the other half
    /// keeps its value.
    LoadD16 { size: u8, signed: bool, hi: bool },
    Store { size: u8 },
    /// `wide`: 64-bit operands.
    Atomic { op: Atom, wide: bool },
}

/// LDS instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ds {
    One(Access),
    /// Two-address forms: element size 4 or 8; `st64` multiplies offsets by 64.
    Read2 { elem: u8, st64: bool },
    Write2 { elem: u8, st64: bool },
    Bpermute,
    Permute,
    /// Compare-and-store returning the old value (`ds_cmpst_rtn_b32/b64`): gfx9
    /// reads the compare value from data0 and the new one from data1, gfx11
    /// (`ds_cmpstore_rtn_*`) the other way round.
    CmpStore { wide: bool },
}

/// VOPD component operations (gfx11).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DualOp {
    FmacF32,
    FmaakF32,
    FmamkF32,
    MulF32,
    AddF32,
    SubF32,
    SubrevF32,
    MovB32,
    CndmaskB32,
    MaxF32,
    MinF32,
    AddNcU32,
    LshlrevB32,
    AndB32,
}

/// One VOPD half: dst VGPR, src0 (any VALU source), vsrc1 (VGPR), literal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DualHalf {
    pub op: DualOp,
    pub dst: u16,
    pub src0: Operand,
    pub vsrc1: u16,
}

/// The simulator's semantic class of an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sem {
    N(N),
    /// v_cmp_* / v_cmpx_* (cond: index in the table's condition order).
    Cmp { ty: CmpTy, cond: Cond, x: bool },
    CmpClass { f64: bool, x: bool },
    Smem { dwords: u8, buffer: bool },
    Ds(Ds),
    Vmem { seg: Seg, acc: Access },
    Dual { x: DualHalf, y: DualHalf, literal: u32 },
    /// Scheduling hints and cache controls that change nothing the simulator models.
    Hint,
    /// s_sendmsg: only MSG_DEALLOC_VGPRS (a no-op here) is accepted.
    SendMsg,
    /// s_code_end: padding after the code; executing it is an error.
    CodeEnd,
    /// gfx11 `v_mov_b16_e32` (true16): the low or high half of the source
    /// (`inst.uses[0]`; SGPRs and constants give their low 16 bits) into the
    /// low or high half of the destination VGPR (`inst.defs[0]`), the other
    /// half kept.
    Mov16 { dst_hi: bool, src_hi: bool },
}

/// Comparison condition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cond {
    F,
    Lt,
    Eq,
    Le,
    Gt,
    Lg,
    Ge,
    O,
    U,
    Nge,
    Nlg,
    Ngt,
    Nle,
    Neq,
    Nlt,
    Tru,
    Ne,
}

/// A decoded instruction.
#[derive(Clone, Debug)]
pub struct DInst {
    pub sem: Sem,
    pub inst: Inst,
    /// Length in bytes.
    pub len: u32,
    /// LLVM assembly text (for errors and traces).
    pub text: String,
    /// Counters the instruction increments.
    pub counters: Counters,
}

fn cmp_sem(name: &str) -> Option<Sem> {
    let (rest, x) = match name.strip_prefix("v_cmpx_") {
        Some(r) => (r, true),
        None => (name.strip_prefix("v_cmp_")?, false),
    };
    if let Some(t) = rest.strip_prefix("class_") {
        return Some(Sem::CmpClass { f64: t == "f64", x });
    }
    let (c, t) = rest.rsplit_once('_')?;
    let ty = match t {
        "f32" => CmpTy::F32,
        "f64" => CmpTy::F64,
        "i32" => CmpTy::I32,
        "u32" => CmpTy::U32,
        "i64" => CmpTy::I64,
        "u64" => CmpTy::U64,
        _ => return None,
    };
    let cond = match c {
        "f" => Cond::F,
        "lt" => Cond::Lt,
        "eq" => Cond::Eq,
        "le" => Cond::Le,
        "gt" => Cond::Gt,
        "lg" => Cond::Lg,
        "ge" => Cond::Ge,
        "o" => Cond::O,
        "u" => Cond::U,
        "nge" => Cond::Nge,
        "nlg" => Cond::Nlg,
        "ngt" => Cond::Ngt,
        "nle" => Cond::Nle,
        "neq" => Cond::Neq,
        "nlt" => Cond::Nlt,
        "tru" | "t" => Cond::Tru,
        "ne" => Cond::Ne,
        _ => return None,
    };
    Some(Sem::Cmp { ty, cond, x })
}

fn size_of(s: &str) -> Option<(u8, bool)> {
    Some(match s {
        "dword" => (4, false),
        "dwordx2" => (8, false),
        "dwordx3" => (12, false),
        "dwordx4" => (16, false),
        "dwordx8" => (32, false),
        "dwordx16" => (64, false),
        "b256" => (32, false),
        "b512" => (64, false),
        "ubyte" | "byte" | "u8" | "b8" => (1, false),
        "sbyte" | "i8" => (1, true),
        "ushort" | "short" | "u16" | "b16" => (2, false),
        "sshort" | "i16" => (2, true),
        "b32" => (4, false),
        "b64" => (8, false),
        "b96" => (12, false),
        "b128" => (16, false),
        _ => return None,
    })
}

fn atom_of(s: &str) -> Option<(Atom, bool)> {
    Some(match s {
        "add" | "add_u32" => (Atom::Add, false),
        "sub" | "sub_u32" => (Atom::Sub, false),
        "smin" | "min_i32" => (Atom::SMin, false),
        "umin" | "min_u32" => (Atom::UMin, false),
        "smax" | "max_i32" => (Atom::SMax, false),
        "umax" | "max_u32" => (Atom::UMax, false),
        "and" | "and_b32" => (Atom::And, false),
        "or" | "or_b32" => (Atom::Or, false),
        "xor" | "xor_b32" => (Atom::Xor, false),
        "inc" | "inc_u32" => (Atom::Inc, false),
        "dec" | "dec_u32" => (Atom::Dec, false),
        "swap" | "wrxchg_b32" => (Atom::Swap, false),
        "cmpswap" => (Atom::CmpSwap, false),
        "add_f32" => (Atom::AddF32, false),
        "add_x2" | "add_u64" => (Atom::Add, true),
        "swap_x2" => (Atom::Swap, true),
        "cmpswap_x2" => (Atom::CmpSwap, true),
        "sub_x2" | "sub_u64" => (Atom::Sub, true),
        "smin_x2" | "min_i64" => (Atom::SMin, true),
        "umin_x2" | "min_u64" => (Atom::UMin, true),
        "smax_x2" | "max_i64" => (Atom::SMax, true),
        "umax_x2" | "max_u64" => (Atom::UMax, true),
        "and_x2" | "and_b64" => (Atom::And, true),
        "or_x2" | "or_b64" => (Atom::Or, true),
        "xor_x2" | "xor_b64" => (Atom::Xor, true),
        _ => return None,
    })
}

fn mem_sem(name: &str) -> Option<Sem> {
    if let Some(r) = name.strip_prefix("s_load_") {
        return Some(Sem::Smem { dwords: size_of(r)?.0 / 4, buffer: false }).filter(|_| r.starts_with("dword"));
    }
    if let Some(r) = name.strip_prefix("s_buffer_load_") {
        return Some(Sem::Smem { dwords: size_of(r)?.0 / 4, buffer: true }).filter(|_| r.starts_with("dword"));
    }
    if let Some(r) = name.strip_prefix("ds_") {
        let ds = match r {
            "write2_b32" => Ds::Write2 { elem: 4, st64: false },
            "write2_b64" => Ds::Write2 { elem: 8, st64: false },
            "read2_b32" => Ds::Read2 { elem: 4, st64: false },
            "read2_b64" => Ds::Read2 { elem: 8, st64: false },
            "write2st64_b32" => Ds::Write2 { elem: 4, st64: true },
            "write2st64_b64" => Ds::Write2 { elem: 8, st64: true },
            "read2st64_b32" => Ds::Read2 { elem: 4, st64: true },
            "read2st64_b64" => Ds::Read2 { elem: 8, st64: true },
            "bpermute_b32" => Ds::Bpermute,
            "permute_b32" => Ds::Permute,
            "cmpst_rtn_b32" => Ds::CmpStore { wide: false },
            "cmpst_rtn_b64" => Ds::CmpStore { wide: true },
            _ => {
                if let Some(s) = r.strip_prefix("write_") {
                    Ds::One(Access::Store { size: size_of(s)?.0 })
                } else if let Some(s) = r.strip_prefix("read_") {
                    let (size, signed) = size_of(s)?;
                    Ds::One(Access::Load { size, signed })
                } else {
                    let (a, _rtn) = match r.split_once("_rtn") {
                        Some((a, b)) => (format!("{a}{b}"), true),
                        None => (r.to_string(), false),
                    };
                    let (op, wide) = match a.as_str() {
                        "add_u64" => (Atom::Add, true),
                        "wrxchg_b32" => (Atom::Swap, false),
                        "wrxchg_b64" => (Atom::Swap, true),
                        other => atom_of(other)?,
                    };
                    Ds::One(Access::Atomic { op, wide })
                }
            }
        };
        return Some(Sem::Ds(ds));
    }
    let (seg, r) = if let Some(r) = name.strip_prefix("flat_") {
        (Seg::Flat, r)
    } else if let Some(r) = name.strip_prefix("global_") {
        (Seg::Global, r)
    } else if let Some(r) = name.strip_prefix("scratch_") {
        (Seg::Scratch, r)
    } else if let Some(r) = name.strip_prefix("buffer_") {
        (Seg::Buffer, r)
    } else {
        return None;
    };
    let acc = if let Some(s) = r.strip_prefix("load_") {
        if let Some((s, half)) = s.split_once("_d16") {
            let (size, signed) = size_of(s)?;
            return Some(Sem::Vmem { seg, acc: Access::LoadD16 { size, signed, hi: half == "_hi" } }).filter(|_| half.is_empty() || half == "_hi");
        }
        let (size, signed) = size_of(s)?;
        Access::Load { size, signed }
    } else if let Some(s) = r.strip_prefix("store_") {
        Access::Store { size: size_of(s)?.0 }
    } else if let Some(s) = r.strip_prefix("atomic_") {
        let (op, wide) = atom_of(s)?;
        Access::Atomic { op, wide }
    } else {
        return None;
    };
    Some(Sem::Vmem { seg, acc })
}

/// The semantics of a table instruction, by its gfx9 name.
pub fn sem_of(op: Opcode) -> Option<Sem> {
    let name = op.info().name;
    if let Some(n) = N::from_name(name) {
        return Some(Sem::N(n));
    }
    if matches!(
        name,
        "buffer_wbl2" | "buffer_invl2" | "buffer_wbinvl1_vol" | "buffer_wbinvl1" | "buffer_inv" | "buffer_gl0_inv" | "buffer_gl1_inv" | "s_clause" | "s_delay_alu" | "s_waitcnt_depctr" | "s_set_inst_prefetch_distance"
    ) {
        return Some(Sem::Hint);
    }
    if name == "s_code_end" {
        return Some(Sem::CodeEnd);
    }
    if name == "s_sendmsg" {
        return Some(Sem::SendMsg);
    }
    cmp_sem(name).or_else(|| mem_sem(name))
}

/// The VOPD component operation of a table row (`v_dual_*`).
fn dual_op(op: Opcode) -> Option<DualOp> {
    Some(match op.info().name {
        "v_dual_fmac_f32" => DualOp::FmacF32,
        "v_dual_fmaak_f32" => DualOp::FmaakF32,
        "v_dual_fmamk_f32" => DualOp::FmamkF32,
        "v_dual_mul_f32" => DualOp::MulF32,
        "v_dual_add_f32" => DualOp::AddF32,
        "v_dual_sub_f32" => DualOp::SubF32,
        "v_dual_subrev_f32" => DualOp::SubrevF32,
        "v_dual_mov_b32" => DualOp::MovB32,
        "v_dual_cndmask_b32" => DualOp::CndmaskB32,
        "v_dual_max_f32" => DualOp::MaxF32,
        "v_dual_min_f32" => DualOp::MinF32,
        "v_dual_add_nc_u32" => DualOp::AddNcU32,
        "v_dual_lshlrev_b32" => DualOp::LshlrevB32,
        "v_dual_and_b32" => DualOp::AndB32,
        _ => return None,
    })
}

/// [`Sem::Dual`] of a VOPD pair (X half `inst.op`, Y half `y`): the table gives each
/// half's sources in order (src0, then vsrc1 and/or the literal K).
fn dual_sem(inst: &Inst, y: Opcode, gpu: Gpu) -> Option<Sem> {
    let nx = inst.op.info().uses(gpu).len().min(inst.uses.len());
    let half = |op: Opcode, dst: Option<&Operand>, uses: &[Operand]| -> Option<DualHalf> {
        let kinds = op.info().uses(gpu);
        let vsrc1 = kinds
            .iter()
            .zip(uses)
            .skip(1)
            .find_map(|(k, o)| (*k == Kind::Vgpr(1)).then(|| o.as_reg()).flatten())
            .map_or(0, |r| r.base.index());
        Some(DualHalf { op: dual_op(op)?, dst: dst?.as_reg()?.base.index(), src0: *uses.first()?, vsrc1 })
    };
    let literal = inst.uses.iter().find_map(|o| if let Operand::Literal(v) = o { Some(*v) } else { None });
    Some(Sem::Dual {
        x: half(inst.op, inst.defs.first(), &inst.uses[..nx])?,
        y: half(y, inst.defs.get(1), &inst.uses[nx..])?,
        literal: literal.unwrap_or(0),
    })
}

fn word(bytes: &[u8], i: usize) -> Option<u32> {
    bytes.get(i * 4..i * 4 + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Decodes the instruction at the start of `bytes`.
pub fn decode(bytes: &[u8], target: Target) -> Result<DInst, String> {
    match amdgpu_isa::decode(bytes, target) {
        Ok((inst, len)) => {
            let text = amdgpu_isa::print(&inst, target);
            let sem = match inst.vopd_y {
                Some(y) => dual_sem(&inst, y, target.gpu),
                None => sem_of(inst.op),
            }
            .ok_or_else(|| format!("instruction not implemented by the simulator: {text}"))?;
            let counters = inst.counters(target.gpu);
            Ok(DInst { sem, inst, len: len as u32, text, counters })
        }
        Err(e) => match extra(bytes, target) {
            Some(d) => Ok(d),
            None => Err(format!(
                "cannot decode {}: {e} (not in the amdgpu_isa table)",
                word(bytes, 0).map_or("?".into(), |w| format!("{w:#010x}"))
            )),
        },
    }
}

fn dummy(op: Opcode) -> Inst {
    Inst::new(op, vec![], vec![])
}

/// Encodings the isa table does not have (see [`EXTRA_INSTRUCTIONS`]).
fn extra(bytes: &[u8], target: Target) -> Option<DInst> {
    let gpu = target.gpu;
    let gen = gpu.generation();
    let w = word(bytes, 0)?;
    let top = |bits: u32| w >> (32 - bits);
    let mk = |sem: Sem, inst: Inst, len: u32, text: String, counters: Counters| DInst { sem, inst, len, text, counters };
    // SOPP (gfx11) outside the table.
    if top(9) == 0x17F && gen == Generation::Gfx11 {
        let op = w >> 16 & 0x7F;
        let imm = w & 0xFFFF;
        let (sem, name) = match op {
            0x1f => (Sem::CodeEnd, "s_code_end"),
            0x36 => (Sem::SendMsg, "s_sendmsg"),
            _ => return None,
        };
        let mut i = dummy(Opcode::s_nop);
        i.imm = imm as u16;
        return Some(mk(sem, i, 4, format!("{name} {imm:#x} (extra)"), Counters::empty()));
    }
    // gfx11 VOP1 `v_mov_b16_e32` (opcode 0x1c) in its true16 form, which
    // clang-22 uses to move 8- and 16-bit values (a by-value struct's bytes):
    // bit 7 of the VGPR numbers in vdst and src0 selects the high half, so
    // only v0-v127 are reachable.
    if top(7) == 0x3F && gen == Generation::Gfx11 && w >> 9 & 0xFF == 0x1C {
        let vdst = w >> 17 & 0xFF;
        let src0 = w & 0x1FF;
        let half = |n: u32| if n & 0x80 != 0 { ".h" } else { ".l" };
        let (src, src_hi, len, src_text) = match src0 {
            256..=511 => {
                let n = src0 - 256;
                (Operand::v((n & 0x7F) as u16, 1), n & 0x80 != 0, 4, format!("v{}{}", n & 0x7F, half(n)))
            }
            0..=105 => (Operand::s(src0 as u16, 1), false, 4, format!("s{src0}")),
            128..=208 | 240..=248 => {
                let text = match src0 {
                    128..=192 => (src0 - 128).to_string(),
                    193..=208 => format!("-{}", src0 - 192),
                    _ => ["0.5", "-0.5", "1.0", "-1.0", "2.0", "-2.0", "4.0", "-4.0", "0.15915494"][(src0 - 240) as usize].to_string(),
                };
                (Operand::Const(src0 as u8), false, 4, text)
            }
            255 => {
                let lit = word(bytes, 1)?;
                (Operand::Literal(lit), false, 8, format!("{:#x}", lit & 0xFFFF))
            }
            _ => return None,
        };
        let dst = Operand::v((vdst & 0x7F) as u16, 1);
        let text = format!("v_mov_b16_e32 v{}{}, {src_text} (extra)", vdst & 0x7F, half(vdst));
        let inst = Inst::new(Opcode::v_mov_b32, vec![dst], vec![src]);
        let counters = Counters::empty();
        return Some(mk(Sem::Mov16 { dst_hi: vdst & 0x80 != 0, src_hi }, inst, len, text, counters));
    }
    None
}
