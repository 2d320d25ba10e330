// AGPR use for tests/codeobj_compare.rs, gfx90a/gfx942 only: checks the unified
// VGPR+AGPR granule and accum_offset against LLVM's descriptor. The inline asm
// forces AGPRs a0..a5 (MFMA alone may use VGPRs on these targets).
kernel void agprs(global float *out, float a) {
  __asm volatile("v_accvgpr_write_b32 a5, 0" ::: "a5");
  out[__builtin_amdgcn_workitem_id_x()] = a * 2.0f;
}

kernel void many_vgprs(global float *out, float a) {
  __asm volatile("v_mov_b32 v37, 0" ::: "v37");
  __asm volatile("v_accvgpr_write_b32 a9, 0" ::: "a9");
  out[0] = a;
}
