"""The instruction list for amdgpu-isa: one line per instruction.

`gen_opcodes.py` reads this list, asks llvm-mc-22 for each instruction's opcode
number on gfx90a, gfx942 and gfx1100 (an instruction missing on a GPU gets None),
and writes `isa/src/opcodes/table.rs`.

Each entry: (name, gfx11 name or None (= same), format gfx9, format gfx11, signature, flags)
 (a gfx11 name of "-" means: absent on gfx11)
 - signature "defs|uses", comma separated operand kinds:
     s<n>  scalar register tuple (def) / scalar source incl. constants (use)
     r<n>  SGPR tuple only (no constants): SMEM base, buffer resource
     v<n>  VGPR only              c<n>  VOP source (VGPR, SGPR, constant, literal)
     a<n>  AGPR only              x<n>  VGPR, or AGPR on gfx90a/gfx942 (memory data)
     m     lane mask (SGPR pair in wave64, one SGPR in wave32)
     k     the 32-bit literal constant K of v_fmamk/v_fmaak (always a literal dword)
     va    memory address VGPR(s) or off      sa    SGPR address / offset or off
 - flags: space separated, see OpFlags in opcodes.rs; "nodef11" (generator only) means
   the gfx11 form has no results; "e64name11" (generator only) means the gfx11 VOP3
   form is written with `_e64` (a shorter form exists that we do not use);
   "uses11=<kinds>" (generator only) gives the gfx11
   form other sources (v_add_co_u32 is VOP3-only there, so src1 takes any source).
"""

SPEC = []

def add(name, n11, f9, f11, sig, flags=""):
    SPEC.append((name, n11, f9, f11, sig, flags))

# ---------------- SOP2 ----------------
for n, sig, fl in [
    ("s_add_u32", "s1|s1,s1", "scc_def"), ("s_sub_u32", "s1|s1,s1", "scc_def"),
    ("s_add_i32", "s1|s1,s1", "scc_def"), ("s_sub_i32", "s1|s1,s1", "scc_def"),
    ("s_addc_u32", "s1|s1,s1", "scc_def scc_use"), ("s_subb_u32", "s1|s1,s1", "scc_def scc_use"),
    ("s_min_i32", "s1|s1,s1", "scc_def"), ("s_min_u32", "s1|s1,s1", "scc_def"),
    ("s_max_i32", "s1|s1,s1", "scc_def"), ("s_max_u32", "s1|s1,s1", "scc_def"),
    ("s_cselect_b32", "s1|s1,s1", "scc_use"), ("s_cselect_b64", "s2|s2,s2", "scc_use"),
    ("s_and_b32", "s1|s1,s1", "scc_def"), ("s_and_b64", "s2|s2,s2", "scc_def"),
    ("s_or_b32", "s1|s1,s1", "scc_def"), ("s_or_b64", "s2|s2,s2", "scc_def"),
    ("s_xor_b32", "s1|s1,s1", "scc_def"), ("s_xor_b64", "s2|s2,s2", "scc_def"),
    ("s_nand_b32", "s1|s1,s1", "scc_def"), ("s_nor_b32", "s1|s1,s1", "scc_def"),
    ("s_xnor_b32", "s1|s1,s1", "scc_def"),
    ("s_lshl_b32", "s1|s1,s1", "scc_def"), ("s_lshl_b64", "s2|s2,s1", "scc_def"),
    ("s_lshr_b32", "s1|s1,s1", "scc_def"), ("s_lshr_b64", "s2|s2,s1", "scc_def"),
    ("s_ashr_i32", "s1|s1,s1", "scc_def"), ("s_ashr_i64", "s2|s2,s1", "scc_def"),
    ("s_bfm_b32", "s1|s1,s1", ""), ("s_mul_i32", "s1|s1,s1", ""),
    ("s_bfe_u32", "s1|s1,s1", "scc_def"), ("s_bfe_i32", "s1|s1,s1", "scc_def"),
    ("s_bfe_u64", "s2|s2,s1", "scc_def"), ("s_mul_hi_u32", "s1|s1,s1", ""),
    ("s_mul_hi_i32", "s1|s1,s1", ""), ("s_pack_ll_b32_b16", "s1|s1,s1", ""),
    ("s_pack_lh_b32_b16", "s1|s1,s1", ""), ("s_pack_hh_b32_b16", "s1|s1,s1", ""),
    ("s_pack_hl_b32_b16", "s1|s1,s1", ""),
]:
    add(n, None, "SOP2", "SOP2", sig, fl)
for k in range(1, 5):
    add(f"s_lshl{k}_add_u32", None, "SOP2", "SOP2", "s1|s1,s1", "scc_def")
add("s_andn2_b32", "s_and_not1_b32", "SOP2", "SOP2", "s1|s1,s1", "scc_def")
add("s_andn2_b64", "s_and_not1_b64", "SOP2", "SOP2", "s2|s2,s2", "scc_def")
add("s_orn2_b32", "s_or_not1_b32", "SOP2", "SOP2", "s1|s1,s1", "scc_def")
add("s_orn2_b64", "s_or_not1_b64", "SOP2", "SOP2", "s2|s2,s2", "scc_def")

# ---------------- SOP1 ----------------
for n, sig, fl in [
    ("s_mov_b32", "s1|s1", ""), ("s_mov_b64", "s2|s2", ""),
    ("s_cmov_b32", "s1|s1", "scc_use"), ("s_cmov_b64", "s2|s2", "scc_use"),
    ("s_not_b32", "s1|s1", "scc_def"), ("s_not_b64", "s2|s2", "scc_def"),
    ("s_brev_b32", "s1|s1", ""), ("s_bcnt1_i32_b32", "s1|s1", "scc_def"),
    ("s_bcnt1_i32_b64", "s1|s2", "scc_def"),
    ("s_sext_i32_i8", "s1|s1", ""), ("s_sext_i32_i16", "s1|s1", ""),
    ("s_bitset0_b32", "s1|s1", ""), ("s_bitset1_b32", "s1|s1", ""),
    ("s_abs_i32", "s1|s1", "scc_def"),
    ("s_getpc_b64", "s2|", ""), ("s_setpc_b64", "|r2", "branch"),
    ("s_swappc_b64", "s2|r2", "branch"),
    ("s_and_saveexec_b32", "s1|s1", "scc_def exec_def exec_use"),
    ("s_and_saveexec_b64", "s2|s2", "scc_def exec_def exec_use"),
    ("s_or_saveexec_b32", "s1|s1", "scc_def exec_def exec_use"),
    ("s_or_saveexec_b64", "s2|s2", "scc_def exec_def exec_use"),
    ("s_xor_saveexec_b32", "s1|s1", "scc_def exec_def exec_use"),
    ("s_xor_saveexec_b64", "s2|s2", "scc_def exec_def exec_use"),
]:
    add(n, None, "SOP1", "SOP1", sig, fl)
add("s_ff1_i32_b32", "s_ctz_i32_b32", "SOP1", "SOP1", "s1|s1", "")
add("s_flbit_i32_b32", "s_clz_i32_u32", "SOP1", "SOP1", "s1|s1", "")
add("s_ff1_i32_b64", "s_ctz_i32_b64", "SOP1", "SOP1", "s1|s2", "")
add("s_andn2_saveexec_b32", "s_and_not1_saveexec_b32", "SOP1", "SOP1", "s1|s1", "scc_def exec_def exec_use")
add("s_andn2_saveexec_b64", "s_and_not1_saveexec_b64", "SOP1", "SOP1", "s2|s2", "scc_def exec_def exec_use")

# ---------------- SOPK ----------------
add("s_movk_i32", None, "SOPK", "SOPK", "s1|", "")
add("s_cmovk_i32", None, "SOPK", "SOPK", "s1|", "scc_use")
add("s_addk_i32", None, "SOPK", "SOPK", "s1|", "scc_def tied")
add("s_mulk_i32", None, "SOPK", "SOPK", "s1|", "tied")
for c in ["eq", "lg", "gt", "ge", "lt", "le"]:
    for t in ["i32", "u32"]:
        add(f"s_cmpk_{c}_{t}", None, "SOPK", "SOPK", "|s1", "scc_def")
add("s_call_b64", None, "SOPK", "SOPK", "s2|", "branch")
for c in ["vscnt", "vmcnt", "expcnt", "lgkmcnt"]:
    add(f"s_waitcnt_{c}", None, "SOPK", "SOPK", "|s1", "")

# ---------------- SOPC ----------------
for c in ["eq", "lg", "gt", "ge", "lt", "le"]:
    for t in ["i32", "u32"]:
        add(f"s_cmp_{c}_{t}", None, "SOPC", "SOPC", "|s1,s1", "scc_def")
add("s_cmp_eq_u64", None, "SOPC", "SOPC", "|s2,s2", "scc_def")
add("s_cmp_lg_u64", None, "SOPC", "SOPC", "|s2,s2", "scc_def")
add("s_bitcmp0_b32", None, "SOPC", "SOPC", "|s1,s1", "scc_def")
add("s_bitcmp1_b32", None, "SOPC", "SOPC", "|s1,s1", "scc_def")

# ---------------- SOPP ----------------
add("s_nop", None, "SOPP", "SOPP", "|", "imm")
add("s_endpgm", None, "SOPP", "SOPP", "|", "")
add("s_branch", None, "SOPP", "SOPP", "|", "imm branch")
add("s_cbranch_scc0", None, "SOPP", "SOPP", "|", "imm branch scc_use")
add("s_cbranch_scc1", None, "SOPP", "SOPP", "|", "imm branch scc_use")
add("s_cbranch_vccz", None, "SOPP", "SOPP", "|", "imm branch vcc_use")
add("s_cbranch_vccnz", None, "SOPP", "SOPP", "|", "imm branch vcc_use")
add("s_cbranch_execz", None, "SOPP", "SOPP", "|", "imm branch exec_use")
add("s_cbranch_execnz", None, "SOPP", "SOPP", "|", "imm branch exec_use")
add("s_barrier", None, "SOPP", "SOPP", "|", "")
add("s_waitcnt", None, "SOPP", "SOPP", "|", "imm waitcnt")
add("s_sethalt", None, "SOPP", "SOPP", "|", "imm")
add("s_sleep", None, "SOPP", "SOPP", "|", "imm")
add("s_setprio", None, "SOPP", "SOPP", "|", "imm")
add("s_trap", None, "SOPP", "SOPP", "|", "imm")
add("s_icache_inv", None, "SOPP", "SOPP", "|", "")
# gfx10+: waits for outstanding ALU results (hazard avoidance on gfx11).
add("s_waitcnt_depctr", None, "SOPP", "SOPP", "|", "imm")
# gfx11 scheduling hints: s_clause groups the next 1 + imm memory instructions,
# s_delay_alu tells the hardware which earlier VALU/TRANS/SALU result the next
# instructions wait for (printed symbolically, see print.rs).
add("s_clause", None, "SOPP", "SOPP", "|", "imm")
add("s_delay_alu", None, "SOPP", "SOPP", "|", "imm")
# gfx10+ instruction-prefetch hint (llc-22 puts it before loops on gfx1100).
add("s_set_inst_prefetch_distance", None, "SOPP", "SOPP", "|", "imm")

# ---------------- SMEM ----------------
SMEM_SZ = [("dword", "b32", 1), ("dwordx2", "b64", 2), ("dwordx4", "b128", 4),
           ("dwordx8", "b256", 8), ("dwordx16", "b512", 16)]
for a, b, n in SMEM_SZ:
    add(f"s_load_{a}", f"s_load_{b}", "SMEM", "SMEM", f"s{n}|r2,sa", "load")
    add(f"s_buffer_load_{a}", f"s_buffer_load_{b}", "SMEM", "SMEM", f"s{n}|r4,sa", "load")

# ---------------- VOP2 ----------------
for n, sig, fl in [
    ("v_add_f32", "v1|c1,v1", ""), ("v_sub_f32", "v1|c1,v1", ""), ("v_subrev_f32", "v1|c1,v1", ""),
    ("v_mul_f32", "v1|c1,v1", ""), ("v_min_f32", "v1|c1,v1", ""), ("v_max_f32", "v1|c1,v1", ""),
    ("v_mul_i32_i24", "v1|c1,v1", ""), ("v_mul_hi_i32_i24", "v1|c1,v1", ""),
    ("v_mul_u32_u24", "v1|c1,v1", ""), ("v_mul_hi_u32_u24", "v1|c1,v1", ""),
    ("v_min_i32", "v1|c1,v1", ""), ("v_max_i32", "v1|c1,v1", ""),
    ("v_min_u32", "v1|c1,v1", ""), ("v_max_u32", "v1|c1,v1", ""),
    ("v_lshrrev_b32", "v1|c1,v1", ""), ("v_ashrrev_i32", "v1|c1,v1", ""),
    ("v_lshlrev_b32", "v1|c1,v1", ""), ("v_and_b32", "v1|c1,v1", ""),
    ("v_or_b32", "v1|c1,v1", ""), ("v_xor_b32", "v1|c1,v1", ""), ("v_xnor_b32", "v1|c1,v1", ""),
    ("v_mac_f32", "v1|c1,v1", "tied"), ("v_fmac_f32", "v1|c1,v1", "tied"),
    ("v_cndmask_b32", "v1|c1,v1,m", ""),
]:
    add(n, None, "VOP2", "VOP2", sig, fl)
add("v_add_u32", "v_add_nc_u32", "VOP2", "VOP2", "v1|c1,v1", "")
add("v_sub_u32", "v_sub_nc_u32", "VOP2", "VOP2", "v1|c1,v1", "")
add("v_subrev_u32", "v_subrev_nc_u32", "VOP2", "VOP2", "v1|c1,v1", "")
# VOP2 on gfx9 (vsrc1 is a VGPR in the 32-bit form); VOP3-only on gfx11, where src1
# takes any source.
add("v_add_co_u32", None, "VOP2", "VOP3B", "v1,m|c1,v1", "uses11=c1,c1")
add("v_sub_co_u32", None, "VOP2", "VOP3B", "v1,m|c1,v1", "uses11=c1,c1")
add("v_subrev_co_u32", None, "VOP2", "VOP3B", "v1,m|c1,v1", "uses11=c1,c1")
add("v_addc_co_u32", "v_add_co_ci_u32", "VOP2", "VOP2", "v1,m|c1,v1,m", "")
add("v_subb_co_u32", "v_sub_co_ci_u32", "VOP2", "VOP2", "v1,m|c1,v1,m", "")
add("v_subbrev_co_u32", "v_subrev_co_ci_u32", "VOP2", "VOP2", "v1,m|c1,v1,m", "")
add("v_fmac_f64", "-", "VOP2", "VOP2", "v2|c2,v2", "tied")
# VOP2 with a literal constant K (no VOP3 form): madmk/madak (gfx90a, unfused) and
# fmamk/fmaak (gfx942, gfx11): d = src0 * K + vsrc1 and d = src0 * vsrc1 + K.
add("v_madmk_f32", "-", "VOP2", "VOP2", "v1|c1,k,v1", "")
add("v_madak_f32", "-", "VOP2", "VOP2", "v1|c1,v1,k", "")
add("v_fmamk_f32", None, "VOP2", "VOP2", "v1|c1,k,v1", "")
add("v_fmaak_f32", None, "VOP2", "VOP2", "v1|c1,v1,k", "")

# ---------------- VOP1 ----------------
add("v_nop", None, "VOP1", "VOP1", "|", "")
add("v_readfirstlane_b32", None, "VOP1", "VOP1", "s1|v1", "")
for n, sig in [
    ("v_mov_b32", "v1|c1"), ("v_mov_b64", "v2|c2"),
    ("v_cvt_i32_f64", "v1|c2"), ("v_cvt_f64_i32", "v2|c1"), ("v_cvt_f32_i32", "v1|c1"),
    ("v_cvt_f32_u32", "v1|c1"), ("v_cvt_u32_f32", "v1|c1"), ("v_cvt_i32_f32", "v1|c1"),
("v_cvt_f32_f64", "v1|c2"),
    ("v_cvt_f64_f32", "v2|c1"), ("v_cvt_u32_f64", "v1|c2"), ("v_cvt_f64_u32", "v2|c1"),
    ("v_cvt_f32_ubyte0", "v1|c1"), ("v_cvt_f32_ubyte1", "v1|c1"), ("v_cvt_f32_ubyte2", "v1|c1"),
    ("v_cvt_f32_ubyte3", "v1|c1"), ("v_fract_f32", "v1|c1"), ("v_trunc_f32", "v1|c1"),
    ("v_ceil_f32", "v1|c1"), ("v_rndne_f32", "v1|c1"), ("v_floor_f32", "v1|c1"),
    ("v_exp_f32", "v1|c1"), ("v_log_f32", "v1|c1"), ("v_rcp_f32", "v1|c1"),
    ("v_rcp_iflag_f32", "v1|c1"), ("v_rsq_f32", "v1|c1"), ("v_sqrt_f32", "v1|c1"),
    ("v_rcp_f64", "v2|c2"), ("v_rsq_f64", "v2|c2"), ("v_sqrt_f64", "v2|c2"),
    ("v_trunc_f64", "v2|c2"), ("v_ceil_f64", "v2|c2"), ("v_floor_f64", "v2|c2"),
    ("v_rndne_f64", "v2|c2"), ("v_fract_f64", "v2|c2"),
    ("v_frexp_exp_i32_f32", "v1|c1"), ("v_frexp_mant_f32", "v1|c1"),
    ("v_frexp_exp_i32_f64", "v1|c2"), ("v_frexp_mant_f64", "v2|c2"),
    ("v_sin_f32", "v1|c1"), ("v_cos_f32", "v1|c1"), ("v_not_b32", "v1|c1"), ("v_bfrev_b32", "v1|c1"),
]:
    add(n, None, "VOP1", "VOP1", sig, "")
# gfx11 makes these true16 instructions (`v2.l` operands). We use the low halves
# only, in the VOP3 form there: its register fields are the full register's
# (llvm-mc-22 takes `v1` for `v1.l`), while the VOP1 form reaches only v0-v127
# (bit 7 selects the high half). A 16-bit result keeps the register's high half
# on gfx11, which is undefined for us.
add("v_cvt_f16_f32", None, "VOP1", "VOP3", "v1|c1", "e64name11")
add("v_cvt_f32_f16", None, "VOP1", "VOP3", "v1|c1", "e64name11")
add("v_ffbh_u32", "v_clz_i32_u32", "VOP1", "VOP1", "v1|c1", "")
# gfx11 only: swaps the two 32-lane halves of a wave64 (ds_bpermute stays
# within a half there).
add("v_permlane64_b32", None, "VOP1", "VOP1", "v1|v1", "")
add("v_ffbl_b32", "v_ctz_i32_b32", "VOP1", "VOP1", "v1|c1", "")
add("v_ffbh_i32", "v_cls_i32", "VOP1", "VOP1", "v1|c1", "")

# ---------------- VOPC ----------------
for t, n in [("f32", 1), ("f64", 2)]:
    for c in ["f", "lt", "eq", "le", "gt", "lg", "ge", "o", "u", "nge", "nlg", "ngt", "nle", "neq", "nlt", "tru"]:
        # gfx11 spells "tru" as "t".
        add(f"v_cmp_{c}_{t}", f"v_cmp_t_{t}" if c == "tru" else None, "VOPC", "VOPC", f"m|c{n},v{n}", "")
for t, n in [("i32", 1), ("u32", 1), ("i64", 2), ("u64", 2)]:
    for c in ["f", "lt", "eq", "le", "gt", "ne", "ge", "t"]:
        add(f"v_cmp_{c}_{t}", None, "VOPC", "VOPC", f"m|c{n},v{n}", "")
# v_cmpx: compare and write the result to EXEC (gfx9 also writes VCC / an SGPR pair;
# gfx11 writes only EXEC, so its form has no result operand).
for t, n in [("f32", 1), ("f64", 2)]:
    for c in ["f", "lt", "eq", "le", "gt", "lg", "ge", "o", "u", "nge", "nlg", "ngt", "nle", "neq", "nlt", "tru"]:
        add(f"v_cmpx_{c}_{t}", f"v_cmpx_t_{t}" if c == "tru" else None, "VOPC", "VOPC", f"m|c{n},v{n}", "exec_def nodef11")
for t, n in [("i32", 1), ("u32", 1), ("i64", 2), ("u64", 2)]:
    for c in ["f", "lt", "eq", "le", "gt", "ne", "ge", "t"]:
        add(f"v_cmpx_{c}_{t}", None, "VOPC", "VOPC", f"m|c{n},v{n}", "exec_def nodef11")
add("v_cmp_class_f32", None, "VOPC", "VOPC", "m|c1,v1", "")
add("v_cmp_class_f64", None, "VOPC", "VOPC", "m|c2,v1", "")

# ---------------- VOP3 only ----------------
for n, sig, fl in [
    ("v_mad_u32_u24", "v1|c1,c1,c1", ""), ("v_mad_i32_i24", "v1|c1,c1,c1", ""),
    ("v_fma_f32", "v1|c1,c1,c1", ""), ("v_fma_f64", "v2|c2,c2,c2", ""),
    ("v_bfe_u32", "v1|c1,c1,c1", ""), ("v_bfe_i32", "v1|c1,c1,c1", ""), ("v_bfi_b32", "v1|c1,c1,c1", ""),
    ("v_alignbit_b32", "v1|c1,c1,c1", ""), ("v_alignbyte_b32", "v1|c1,c1,c1", ""),
    ("v_min3_f32", "v1|c1,c1,c1", ""), ("v_min3_i32", "v1|c1,c1,c1", ""), ("v_min3_u32", "v1|c1,c1,c1", ""),
    ("v_max3_f32", "v1|c1,c1,c1", ""), ("v_max3_i32", "v1|c1,c1,c1", ""), ("v_max3_u32", "v1|c1,c1,c1", ""),
    ("v_med3_f32", "v1|c1,c1,c1", ""), ("v_med3_i32", "v1|c1,c1,c1", ""), ("v_med3_u32", "v1|c1,c1,c1", ""),
    ("v_div_fixup_f32", "v1|c1,c1,c1", ""), ("v_div_fixup_f64", "v2|c2,c2,c2", ""),
    ("v_div_fmas_f32", "v1|c1,c1,c1", "vcc_use"), ("v_div_fmas_f64", "v2|c2,c2,c2", "vcc_use"),
    ("v_mul_lo_u32", "v1|c1,c1", ""), ("v_mul_hi_u32", "v1|c1,c1", ""), ("v_mul_hi_i32", "v1|c1,c1", ""),
    ("v_add_f64", "v2|c2,c2", ""), ("v_mul_f64", "v2|c2,c2", ""),
    ("v_ldexp_f64", "v2|c2,c1", ""), ("v_ldexp_f32", "v1|c1,c1", ""),
    ("v_lshlrev_b64", "v2|c1,c2", ""), ("v_lshrrev_b64", "v2|c1,c2", ""), ("v_ashrrev_i64", "v2|c1,c2", ""),
    ("v_readlane_b32", "s1|v1,s1", ""), ("v_writelane_b32", "v1|s1,s1", "tied"),
    ("v_bcnt_u32_b32", "v1|c1,c1", ""), ("v_mbcnt_lo_u32_b32", "v1|c1,c1", ""), ("v_mbcnt_hi_u32_b32", "v1|c1,c1", ""),
    ("v_lshl_add_u32", "v1|c1,c1,c1", ""), ("v_add_lshl_u32", "v1|c1,c1,c1", ""), ("v_add3_u32", "v1|c1,c1,c1", ""),
    ("v_lshl_or_b32", "v1|c1,c1,c1", ""), ("v_and_or_b32", "v1|c1,c1,c1", ""), ("v_or3_b32", "v1|c1,c1,c1", ""),
    ("v_xad_u32", "v1|c1,c1,c1", ""), ("v_xor3_b32", "v1|c1,c1,c1", ""), ("v_bfm_b32", "v1|c1,c1", ""), ("v_perm_b32", "v1|c1,c1,c1", ""),
    ("v_lshl_add_u64", "v2|c2,c1,c2", ""),
]:
    add(n, None, "VOP3", "VOP3", sig, fl)
# Signed 32-bit add/sub (VOP3 only; llc-22 uses them with clamp for add_sat/sub_sat).
add("v_add_i32", "v_add_nc_i32", "VOP3", "VOP3", "v1|c1,c1", "")
add("v_sub_i32", "v_sub_nc_i32", "VOP3", "VOP3", "v1|c1,c1", "")
add("v_min_f64", "v_min_f64", "VOP3", "VOP3", "v2|c2,c2", "")
add("v_max_f64", "v_max_f64", "VOP3", "VOP3", "v2|c2,c2", "")
add("v_div_scale_f32", None, "VOP3B", "VOP3B", "v1,m|c1,c1,c1", "")
add("v_div_scale_f64", None, "VOP3B", "VOP3B", "v2,m|c2,c2,c2", "")
add("v_mad_u64_u32", None, "VOP3B", "VOP3B", "v2,m|c1,c1,c2", "")
add("v_mad_i64_i32", None, "VOP3B", "VOP3B", "v2,m|c1,c1,c2", "")

# ---------------- VOP3P ----------------
for n, sig in [
    ("v_pk_fma_f16", "v1|c1,c1,c1"), ("v_pk_add_f16", "v1|c1,c1"), ("v_pk_mul_f16", "v1|c1,c1"),
    ("v_pk_min_f16", "v1|c1,c1"), ("v_pk_max_f16", "v1|c1,c1"), ("v_pk_add_u16", "v1|c1,c1"),
    ("v_pk_sub_u16", "v1|c1,c1"), ("v_pk_mul_lo_u16", "v1|c1,c1"), ("v_pk_mad_u16", "v1|c1,c1,c1"),
    ("v_pk_fma_f32", "v2|c2,c2,c2"), ("v_pk_mul_f32", "v2|c2,c2"), ("v_pk_add_f32", "v2|c2,c2"), ("v_pk_mov_b32", "v2|c2,c2"),
]:
    add(n, None, "VOP3P", "VOP3P", sig, "")
add("v_accvgpr_read_b32", None, "VOP3P", "VOP3P", "v1|a1", "")
add("v_accvgpr_write_b32", None, "VOP3P", "VOP3P", "a1|c1", "")
add("v_accvgpr_mov_b32", None, "VOP1", "VOP1", "a1|a1", "")

# ---------------- DS ----------------
for n, n11 in [("add_u32", None), ("sub_u32", None), ("min_i32", None), ("max_i32", None),
               ("min_u32", None), ("max_u32", None), ("and_b32", None), ("or_b32", None),
               ("xor_b32", None), ("inc_u32", None), ("dec_u32", None), ("add_f32", None)]:
    add(f"ds_{n}", None, "DS", "DS", "|v1,v1", "store atomic")
    add(f"ds_{n.replace('_', '_rtn_', 1)}", None, "DS", "DS", "v1|v1,v1", "load atomic")
add("ds_wrxchg_rtn_b32", "ds_storexchg_rtn_b32", "DS", "DS", "v1|v1,v1", "load atomic")
add("ds_add_u64", None, "DS", "DS", "|v1,v2", "store atomic")
add("ds_add_rtn_u64", None, "DS", "DS", "v2|v1,v2", "load atomic")
for n in ["sub_rtn_u64", "min_rtn_i64", "max_rtn_i64", "min_rtn_u64", "max_rtn_u64", "and_rtn_b64",
          "or_rtn_b64", "xor_rtn_b64"]:
    add(f"ds_{n}", None, "DS", "DS", "v2|v1,v2", "load atomic")
add("ds_wrxchg_rtn_b64", "ds_storexchg_rtn_b64", "DS", "DS", "v2|v1,v2", "load atomic")
# Compare-and-store: gfx9 takes (compare, new) in data0/data1, gfx11 (new, compare).
add("ds_cmpst_rtn_b32", "ds_cmpstore_rtn_b32", "DS", "DS", "v1|v1,v1,v1", "load atomic")
add("ds_cmpst_rtn_b64", "ds_cmpstore_rtn_b64", "DS", "DS", "v2|v1,v2,v2", "load atomic")
for a, b, n in [("b32", "b32", 1), ("b64", "b64", 2), ("b96", "b96", 3), ("b128", "b128", 4),
                ("b8", "b8", 1), ("b16", "b16", 1)]:
    add(f"ds_write_{a}", f"ds_store_{b}", "DS", "DS", f"|v1,x{n}", "store")
for a, b, n in [("b32", "b32", 1), ("b64", "b64", 2), ("b96", "b96", 3), ("b128", "b128", 4),
                ("u8", "u8", 1), ("i8", "i8", 1), ("u16", "u16", 1), ("i16", "i16", 1)]:
    add(f"ds_read_{a}", f"ds_load_{b}", "DS", "DS", f"x{n}|v1", "load")
add("ds_write2_b32", "ds_store_2addr_b32", "DS", "DS", "|v1,v1,v1", "store ds2")
add("ds_write2_b64", "ds_store_2addr_b64", "DS", "DS", "|v1,v2,v2", "store ds2")
add("ds_read2_b32", "ds_load_2addr_b32", "DS", "DS", "v2|v1", "load ds2")
add("ds_read2_b64", "ds_load_2addr_b64", "DS", "DS", "v4|v1", "load ds2")
# Two-address forms whose offsets are in units of 64 elements.
add("ds_write2st64_b32", "ds_store_2addr_stride64_b32", "DS", "DS", "|v1,v1,v1", "store ds2")
add("ds_write2st64_b64", "ds_store_2addr_stride64_b64", "DS", "DS", "|v1,v2,v2", "store ds2")
add("ds_read2st64_b32", "ds_load_2addr_stride64_b32", "DS", "DS", "v2|v1", "load ds2")
add("ds_read2st64_b64", "ds_load_2addr_stride64_b64", "DS", "DS", "v4|v1", "load ds2")
add("ds_bpermute_b32", None, "DS", "DS", "v1|v1,v1", "load")
add("ds_permute_b32", None, "DS", "DS", "v1|v1,v1", "load")

# ---------------- FLAT / GLOBAL / SCRATCH ----------------
LD = [("dword", "b32", 1), ("dwordx2", "b64", 2), ("dwordx3", "b96", 3), ("dwordx4", "b128", 4),
      ("ubyte", "u8", 1), ("sbyte", "i8", 1), ("ushort", "u16", 1), ("sshort", "i16", 1)]
# D16 loads write one half of the destination and keep the other.
D16 = [("ubyte_d16", "d16_u8", 1), ("ubyte_d16_hi", "d16_hi_u8", 1), ("sbyte_d16", "d16_i8", 1),
       ("sbyte_d16_hi", "d16_hi_i8", 1), ("short_d16", "d16_b16", 1), ("short_d16_hi", "d16_hi_b16", 1)]
LD = LD + D16
ST = [("dword", "b32", 1), ("dwordx2", "b64", 2), ("dwordx3", "b96", 3), ("dwordx4", "b128", 4),
      ("byte", "b8", 1), ("short", "b16", 1)]
for seg, fmt in [("flat", "FLAT"), ("global", "GLOBAL"), ("scratch", "SCRATCH")]:
    addr = "va" if seg == "flat" else "va,sa"
    for a, b, n in LD:
        add(f"{seg}_load_{a}", f"{seg}_load_{b}", fmt, fmt, f"x{n}|{addr}", "load")
    for a, b, n in ST:
        u = "va,x%d" % n + ("" if seg == "flat" else ",sa")
        add(f"{seg}_store_{a}", f"{seg}_store_{b}", fmt, fmt, f"|{u}", "store")
ATOM = [("add", "add_u32", 1), ("sub", "sub_u32", 1), ("smin", "min_i32", 1), ("umin", "min_u32", 1),
        ("smax", "max_i32", 1), ("umax", "max_u32", 1), ("and", "and_b32", 1), ("or", "or_b32", 1),
        ("xor", "xor_b32", 1), ("inc", "inc_u32", 1), ("dec", "dec_u32", 1), ("swap", "swap_b32", 1),
        ("cmpswap", "cmpswap_b32", 1), ("add_f32", "add_f32", 1), ("add_x2", "add_u64", 2),
        ("swap_x2", "swap_b64", 2), ("cmpswap_x2", "cmpswap_b64", 2), ("sub_x2", "sub_u64", 2),
        ("smin_x2", "min_i64", 2), ("umin_x2", "min_u64", 2), ("smax_x2", "max_i64", 2),
        ("umax_x2", "max_u64", 2), ("and_x2", "and_b64", 2), ("or_x2", "or_b64", 2),
        ("xor_x2", "xor_b64", 2)]
for seg, fmt in [("global", "GLOBAL"), ("flat", "FLAT")]:
    for a, b, n in ATOM:
        d = 2 * n if a.startswith("cmpswap") else n
        u = f"va,v{d}" + ("" if seg == "flat" else ",sa")
        add(f"{seg}_atomic_{a}", f"{seg}_atomic_{b}", fmt, fmt, f"v{n}|{u}", "atomic opt_def")

# ---------------- MUBUF ----------------
for a, b, n in LD:
    add(f"buffer_load_{a}", f"buffer_load_{b}", "MUBUF", "MUBUF", f"x{n}|va,r4,s1", "load")
for a, b, n in ST:
    add(f"buffer_store_{a}", f"buffer_store_{b}", "MUBUF", "MUBUF", f"|x{n},va,r4,s1", "store")

# ---------------- cache control (memory model) ----------------
# Operand-less MUBUF-format instructions that write back / invalidate caches for
# acquire/release at agent and system scope. Each exists on some GPUs only.
for n in ["buffer_wbl2", "buffer_invl2", "buffer_wbinvl1_vol", "buffer_wbinvl1", "buffer_inv",
          "buffer_gl0_inv", "buffer_gl1_inv"]:
    add(n, None, "MUBUF", "MUBUF", "|", "cache_ctl")

# ---------------- VOPD (gfx11, wave32) ----------------
# One row per component operation; an Inst pairs an X row (op) with a Y row (vopd_y).
# The opcode number is the component's code: X takes codes 0..13, Y also 16..18.
# v_dual_cndmask_b32 reads VCC_LO implicitly (the "m" operand, not printed).
for n, sig, fl in [
    ("v_dual_fmac_f32", "v1|c1,v1", "tied"), ("v_dual_fmaak_f32", "v1|c1,v1,k", ""),
    ("v_dual_fmamk_f32", "v1|c1,k,v1", ""), ("v_dual_mul_f32", "v1|c1,v1", ""),
    ("v_dual_add_f32", "v1|c1,v1", ""), ("v_dual_sub_f32", "v1|c1,v1", ""),
    ("v_dual_subrev_f32", "v1|c1,v1", ""), ("v_dual_mul_dx9_zero_f32", "v1|c1,v1", ""),
    ("v_dual_mov_b32", "v1|c1", ""), ("v_dual_cndmask_b32", "v1|c1,v1,m", ""),
    ("v_dual_max_f32", "v1|c1,v1", ""), ("v_dual_min_f32", "v1|c1,v1", ""),
    ("v_dual_add_nc_u32", "v1|c1,v1", ""), ("v_dual_lshlrev_b32", "v1|c1,v1", ""),
    ("v_dual_and_b32", "v1|c1,v1", ""),
]:
    add(n, None, "VOPD", "VOPD", sig, fl)
