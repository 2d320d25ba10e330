// Shared by the OpenCL C kernels of tests/spirv. For SPIR-V the work-item
// functions are OpenCL's own (clang-22 lowers them to builtin variables); for
// amdgcn, built without a device library (-nogpulib), they are clang's AMDGPU
// builtins (full work-groups), the global offset and the dimension count read
// from the hidden arguments as ROCm's device library does.
#ifndef __SPIRV__
#define AMDGCN_DIM(x, y, z, d) ((d) == 0 ? (x) : (d) == 1 ? (y) : (z))
#define get_local_id(d) ((size_t)AMDGCN_DIM(__builtin_amdgcn_workitem_id_x(), __builtin_amdgcn_workitem_id_y(), __builtin_amdgcn_workitem_id_z(), d))
#define get_group_id(d) ((size_t)AMDGCN_DIM(__builtin_amdgcn_workgroup_id_x(), __builtin_amdgcn_workgroup_id_y(), __builtin_amdgcn_workgroup_id_z(), d))
#define get_local_size(d) ((size_t)AMDGCN_DIM(__builtin_amdgcn_workgroup_size_x(), __builtin_amdgcn_workgroup_size_y(), __builtin_amdgcn_workgroup_size_z(), d))
#define get_global_offset(d) (((__constant size_t *)__builtin_amdgcn_implicitarg_ptr())[5 + (d)])
#define get_work_dim() ((uint)((__constant ushort *)__builtin_amdgcn_implicitarg_ptr())[32])
#define get_global_id(d) (get_group_id(d) * get_local_size(d) + get_local_id(d) + get_global_offset(d))
#define get_global_linear_id() ((get_global_id(2) - get_global_offset(2)) * get_global_size(1) * get_global_size(0) + (get_global_id(1) - get_global_offset(1)) * get_global_size(0) + get_global_id(0) - get_global_offset(0))
#define get_global_size(d) ((size_t)AMDGCN_DIM(__builtin_amdgcn_grid_size_x(), __builtin_amdgcn_grid_size_y(), __builtin_amdgcn_grid_size_z(), d))
#define get_num_groups(d) ((get_global_size(d) + get_local_size(d) - 1) / get_local_size(d))
#define barrier(flags) do { __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup"); __builtin_amdgcn_s_barrier(); __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup"); } while (0)

// The OpenCL C library functions the kernels use, for the types they use
// them on, as clang builtins and C: what OpenCL C defines them to be.
#define sqrt(x) __builtin_sqrtf(x)
#define fabs(x) __builtin_fabsf(x)
#define floor(x) __builtin_floorf(x)
#define ceil(x) __builtin_ceilf(x)
#define trunc(x) __builtin_truncf(x)
#define rint(x) __builtin_rintf(x)
#define round(x) __builtin_roundf(x)
#define fmin(x, y) __builtin_fminf(x, y)
#define fmax(x, y) __builtin_fmaxf(x, y)
#define copysign(x, y) __builtin_copysignf(x, y)
#define ldexp(x, e) __builtin_ldexpf(x, e)
#define fdim(x, y) ((x) > (y) ? (x) - (y) : (isnan(x) || isnan(y)) ? (x) - (y) : 0.0f)
#define clamp(x, lo, hi) _Generic((x), float: __builtin_fminf(__builtin_fmaxf(x, lo), hi), default: ((x) < (lo) ? (lo) : (x) > (hi) ? (hi) : (x)))
#define isnan(x) __builtin_isnan(x)
#define abs(x) ((uint)((x) < 0 ? -(x) : (x)))
#define abs_diff(x, y) ((uint)((x) > (y) ? (x) - (y) : (y) - (x)))
#define add_sat(x, y) _Generic((x), int: __builtin_elementwise_add_sat((int)(x), (int)(y)), uint: __builtin_elementwise_add_sat((uint)(x), (uint)(y)))
#define sub_sat(x, y) _Generic((x), int: __builtin_elementwise_sub_sat((int)(x), (int)(y)), uint: __builtin_elementwise_sub_sat((uint)(x), (uint)(y)))
#define hadd(x, y) (((x) >> 1) + ((y) >> 1) + ((x) & (y) & 1))
#define rhadd(x, y) (((x) >> 1) + ((y) >> 1) + (((x) | (y)) & 1))
#define clz(x) ((x) == 0 ? 32 : __builtin_clz(x))
#define ctz(x) ((x) == 0 ? 32 : __builtin_ctz(x))
#define popcount(x) __builtin_popcount(x)
#define rotate(x, n) (((x) << ((n) & 31)) | ((x) >> ((32 - ((n) & 31)) & 31)))
#define mul_hi(x, y) ((int)(((long)(x) * (long)(y)) >> 32))
#define mad24(x, y, z) (((((int)(x)) << 8 >> 8) * (((int)(y)) << 8 >> 8)) + (z))
#define mul24(x, y) (((x) & 0xffffff) * ((y) & 0xffffff))
#define min(x, y) ((x) < (y) ? (x) : (y))
#define max(x, y) ((x) > (y) ? (x) : (y))
#define upsample(hi, lo) ((int)(((uint)(ushort)(hi) << 16) | (ushort)(lo)))
#define convert_float4(v) __builtin_convertvector(v, float4)
#define convert_int4(v) __builtin_convertvector(v, int4) /* toward zero, as convert_int4 */
#define select(a, b, c) ((c) < 0 ? (b) : (a)) /* vectors: the most significant bit of c */
#define vstore4(v, i, p) (*(__global float4 *)((p) + 4 * (i)) = (v))
#define atomic_add(p, v) __scoped_atomic_fetch_add(p, v, __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE)
#define atomic_sub(p, v) __scoped_atomic_fetch_sub(p, v, __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE)
#define atomic_max(p, v) __scoped_atomic_fetch_max(p, v, __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE)
#define atomic_min(p, v) __scoped_atomic_fetch_min(p, v, __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE)
#define atomic_or(p, v) __scoped_atomic_fetch_or(p, v, __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE)
#define atomic_xor(p, v) __scoped_atomic_fetch_xor(p, v, __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE)
#define atomic_inc(p) __scoped_atomic_fetch_add(p, 1, __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE)
#define atomic_cmpxchg(p, e, v) ({ int e_ = (e); __scoped_atomic_compare_exchange_n(p, &e_, v, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE); e_; })
#endif
