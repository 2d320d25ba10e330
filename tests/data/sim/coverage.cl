#include "common.h"
// Instructions the other kernels do not reach: atomics with return (global and
// LDS, one address per work-item so the results do not depend on lane order),
// 64-bit LDS accesses, generic (flat) pointers, uniform scalar arithmetic and
// compares, every f32 compare predicate, 64-bit compares, hardware
// transcendentals.
static inline int imin(int a, int b) { return a < b ? a : b; }
static inline int imax(int a, int b) { return a > b ? a : b; }
static inline uint umin(uint a, uint b) { return a < b ? a : b; }

__kernel void coverage(__global int *g, __global int *out, __global const float *fx, __global const long *lx,
                       int s, int t, long u, long v, __global float *tr) {
    __local int lds[64 * 10];
    __local long lds64[64];
    int i = gid_x();
    int l = lid_x();
    int x = out[i * 32];
    // Global atomics with return, one address per work-item.
    __global int *p = g + i * 12;
    int o = 0;
    o += __atomic_fetch_and(p + 0, x, __ATOMIC_RELAXED);
    o ^= __atomic_fetch_or(p + 1, x, __ATOMIC_RELAXED);
    o += __atomic_fetch_xor(p + 2, x, __ATOMIC_RELAXED);
    o ^= __atomic_fetch_min(p + 3, x, __ATOMIC_RELAXED);
    o += __atomic_fetch_max(p + 4, x, __ATOMIC_RELAXED);
    o ^= __atomic_fetch_min((__global uint *)p + 5, (uint)x, __ATOMIC_RELAXED);
    o += __atomic_fetch_max((__global uint *)p + 6, (uint)x, __ATOMIC_RELAXED);
    o ^= __atomic_fetch_sub(p + 7, x, __ATOMIC_RELAXED);
    o += __atomic_exchange_n(p + 8, x, __ATOMIC_RELAXED);
    int expected = p[9];
    __atomic_compare_exchange_n(p + 9, &expected, x, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    o ^= expected;
    out[i * 32 + 1] = o;
    // LDS atomics with return.
    __local int *q = lds + l * 10;
    for (int k = 0; k < 10; k++) q[k] = x * (k + 1) - 7 * k;
    int r = 0;
    r += __atomic_fetch_add(q + 0, x, __ATOMIC_RELAXED);
    r ^= __atomic_fetch_and(q + 1, x, __ATOMIC_RELAXED);
    r += __atomic_fetch_or(q + 2, x, __ATOMIC_RELAXED);
    r ^= __atomic_fetch_xor(q + 3, x, __ATOMIC_RELAXED);
    r += __atomic_fetch_min(q + 4, x, __ATOMIC_RELAXED);
    r ^= __atomic_fetch_max(q + 5, x, __ATOMIC_RELAXED);
    r += __atomic_fetch_min((__local uint *)q + 6, (uint)x, __ATOMIC_RELAXED);
    r ^= __atomic_fetch_max((__local uint *)q + 7, (uint)x, __ATOMIC_RELAXED);
    r += __atomic_fetch_sub(q + 8, x, __ATOMIC_RELAXED);
    r ^= __atomic_exchange_n(q + 9, x, __ATOMIC_RELAXED);
    out[i * 32 + 2] = r;
    // 64-bit LDS.
    lds64[l] = lx[i] * 3;
    long w = lds64[l] + lds64[l] / 2;
    out[i * 32 + 3] = (int)w;
    out[i * 32 + 4] = (int)(w >> 32);
    // Generic pointers: global or LDS, chosen at run time.
    int *gp = (x & 1) ? (int *)(out + i * 32 + 5) : (int *)(lds + l * 10);
    *gp = x + 11;
    out[i * 32 + 6] = *gp * 2;
    // Uniform (scalar) arithmetic and compares on kernel arguments.
    int su = (s > t) + 2 * (s >= t) + 4 * (s < t) + 8 * (s <= t) + 16 * ((uint)s > (uint)t) + 32 * ((uint)s >= (uint)t)
           + 64 * ((uint)s < (uint)t) + 128 * ((uint)s <= (uint)t) + 256 * (u != v);
    out[i * 32 + 7] = su + imin(s, t) * 3 + imax(s, t) * 5 + (int)umin((uint)s, (uint)t);
    out[i * 32 + 8] = (int)(((long)s * (long)t) >> 32) + (int)(((ulong)(uint)s * (ulong)(uint)t) >> 32);
    out[i * 32 + 9] = (int)((ulong)u >> (t & 63)) ^ (int)(u >> (s & 63)) ^ (int)(((ulong)u >> 7) & 0xfff);
    out[i * 32 + 10] = (int)((uint)s - (uint)t) ^ (int)(u - v) ^ (int)((u - v) >> 32);
    // Every f32 compare predicate (NaNs included in the inputs).
    float a = fx[2 * i], b = fx[2 * i + 1];
    int fc = (a == b) | (a != b) << 1 | (a < b) << 2 | (a <= b) << 3 | (a > b) << 4 | (a >= b) << 5
           | (!(a < b)) << 6 | (!(a <= b)) << 7 | (!(a > b)) << 8 | (!(a >= b)) << 9
           | __builtin_isunordered(a, b) << 10 | (!__builtin_isunordered(a, b)) << 11
           | (__builtin_islessgreater(a, b)) << 12 | (!__builtin_islessgreater(a, b)) << 13;
    out[i * 32 + 11] = fc;
    // 64-bit compares per lane.
    long la = lx[i], lb = lx[(i + 1) % 64];
    out[i * 32 + 12] = (la == lb) | (la < lb) << 1 | (la <= lb) << 2 | (la > lb) << 3 | (la >= lb) << 4
                     | ((ulong)la < (ulong)lb) << 5 | ((ulong)la <= (ulong)lb) << 6 | ((ulong)la > (ulong)lb) << 7
                     | ((ulong)la >= (ulong)lb) << 8;
    // Bit operations, conversions, subtraction forms.
    out[i * 32 + 13] = __builtin_ctz(x | 0x100000) + ~x + imin(x, -x) + (int)(x * 0x12345LL >> 32);
    out[i * 32 + 14] = __builtin_bit_cast(int, (float)(double)a) ^ __builtin_bit_cast(int, b - a);
    // Hardware transcendentals (compared with a tolerance).
    float z = fx[2 * i] * 0.001f;
    if (!(z == z)) z = 0.5f;
    tr[4 * i + 0] = __builtin_amdgcn_exp2f(z);
    tr[4 * i + 1] = __builtin_amdgcn_logf(__builtin_fabsf(z) + 1.0f);
    tr[4 * i + 2] = __builtin_amdgcn_sinf(z) + __builtin_amdgcn_cosf(z);
    tr[4 * i + 3] = __builtin_amdgcn_rsqf(__builtin_fabsf(z) + 0.25f);
}
