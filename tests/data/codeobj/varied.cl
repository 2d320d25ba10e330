// Kernels with varied resource use for tests/codeobj_compare.rs: our descriptor
// computed from LLVM's resource numbers must equal LLVM's descriptor bytes.
typedef float f4 __attribute__((ext_vector_type(4)));

kernel void lds(global float *out, global const float *in, int n) {
  local float tile[256];
  uint x = __builtin_amdgcn_workitem_id_x();
  uint y = __builtin_amdgcn_workitem_id_y();
  uint g = __builtin_amdgcn_workgroup_id_y();
  tile[x & 255] = in[x + y * 16 + g * 256];
  __builtin_amdgcn_s_barrier();
  float acc = 0;
  for (int k = 0; k < n; k++) acc += tile[(x + k) & 255] * in[k];
  out[x] = acc;
}

kernel void wide(global f4 *out, global const f4 *in) {
  f4 a = in[0], b = in[1], c = in[2], d = in[3], e = in[4], f = in[5], g = in[6], h = in[7];
  f4 i = in[8], j = in[9], k = in[10], l = in[11];
  out[__builtin_amdgcn_workitem_id_x()] = a * b + c * d + e * f + g * h + a * h + b * g + i * j * k * l + i / l;
}

kernel void scratch(global int *out, int n) {
  volatile int buf[64];
  for (int k = 0; k < 64; k++) buf[k] = k * n;
  out[__builtin_amdgcn_workitem_id_z()] = buf[n & 63];
}
