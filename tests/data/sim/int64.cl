#include "common.h"
// 64-bit integer and double arithmetic.
__kernel void arith64(__global const long *a, __global const long *b, __global long *r,
                      __global const double *x, __global const double *y, __global double *d) {
    int i = gid_x();
    long p = a[i], q = b[i];
    r[8 * i + 0] = p * q;
    r[8 * i + 1] = p / q;
    r[8 * i + 2] = p % q;
    r[8 * i + 3] = (long)((ulong)p / (ulong)q);
    r[8 * i + 4] = (p << (q & 63)) ^ (p >> 7);
    r[8 * i + 5] = (long)((ulong)p >> (q & 63));
    r[8 * i + 6] = (p * 3) >> 5;
    r[8 * i + 7] = p + q - (p < q ? q : p);
    double u = x[i], v = y[i];
    d[6 * i + 0] = u + v;
    d[6 * i + 1] = u * v;
    d[6 * i + 2] = u / v;
    d[6 * i + 3] = __builtin_fma(u, v, -1.0);
    d[6 * i + 4] = (double)p + (double)(int)q;
    d[6 * i + 5] = (double)(long)(u * 1000.0);
}
