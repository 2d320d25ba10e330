#include "common.h"
// 32-bit integer division and bit operations, f32 square root, rounding,
// conversions and min/max: more of LLVM's expansions.
__kernel void misc(__global const uint *a, __global const uint *b, __global uint *r,
                   __global const float *x, __global float *f) {
    int i = gid_x();
    uint p = a[i], q = b[i];
    r[8 * i + 0] = p / q;
    r[8 * i + 1] = p % q;
    r[8 * i + 2] = (uint)((int)p / (int)q);
    r[8 * i + 3] = (uint)((int)p % (int)q);
    r[8 * i + 4] = __builtin_popcount(p);
    r[8 * i + 5] = __builtin_clz(p | 1);
    r[8 * i + 6] = __builtin_bitreverse32(p);
    r[8 * i + 7] = p > q ? p - q : q - p;
    float v = x[i];
    f[4 * i + 0] = __builtin_sqrtf(__builtin_fabsf(v));
    f[4 * i + 1] = __builtin_floorf(v) + __builtin_ceilf(v);
    f[4 * i + 2] = (float)(int)(v * 3.0f) + (float)(uint)__builtin_fabsf(v);
    f[4 * i + 3] = __builtin_fminf(v, 1.5f) * __builtin_fmaxf(v, -2.0f);
}
