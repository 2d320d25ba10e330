#include "common.h"
// Packed half arithmetic: clang-22 selects v_pk_add/mul/fma/min/max_f16 (and
// a negated operand for the subtraction) on every target for half2.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

__kernel void half2_ops(__global const half2 *a, __global const half2 *b, __global const half2 *c, __global half2 *out) {
    uint i = gid_x();
    half2 x = a[i], y = b[i], z = c[i];
    out[6 * i + 0] = x + y;
    out[6 * i + 1] = x - y;
    out[6 * i + 2] = x * y;
    out[6 * i + 3] = fma(x, y, z);
    out[6 * i + 4] = __builtin_elementwise_min(x, y);
    out[6 * i + 5] = __builtin_elementwise_max(x, y);
}
