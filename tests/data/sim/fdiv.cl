#include "common.h"
// Correctly rounded f32 and f64 division on edge cases: the v_div_scale /
// v_div_fmas / v_div_fixup paths for huge and tiny quotients, denormals, zeros,
// infinities and NaNs; and square roots.
__kernel void fdiv(__global const float *a, __global const float *b, __global float *q,
                   __global const double *x, __global const double *y, __global double *d) {
    int i = gid_x();
    q[i] = a[i] / b[i];
    d[i] = x[i] / y[i];
}

// Correctly rounded square roots (LLVM's scaled expansions).
__kernel void fsqrt(__global const float *a, __global float *q, __global const double *x, __global double *d) {
    int i = gid_x();
    q[i] = __builtin_sqrtf(a[i]);
    d[i] = __builtin_sqrt(x[i]);
}
