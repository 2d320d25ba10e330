#include "common.h"
// A non-inlined function with more arguments than fit in registers (stack arguments).
__attribute__((noinline))
int combine(int a0, int a1, int a2, int a3, int a4, int a5, int a6, int a7, int a8, int a9,
            int a10, int a11, int a12, int a13, int a14, int a15, int a16, int a17, int a18, int a19,
            int a20, int a21, int a22, int a23, int a24, int a25, int a26, int a27, int a28, int a29,
            int a30, int a31, int a32, int a33, int a34, int a35, int a36, int a37, int a38, int a39) {
    return a0 * 1 + a1 * 2 + a2 * 3 + a3 * 4 + a4 * 5 + a5 * 6 + a6 * 7 + a7 * 8 + a8 * 9 + a9 * 10
         + a10 * 11 + a11 * 12 + a12 * 13 + a13 * 14 + a14 * 15 + a15 * 16 + a16 * 17 + a17 * 18
         + a18 * 19 + a19 * 20 + a20 * 21 + a21 * 22 + a22 * 23 + a23 * 24 + a24 * 25 + a25 * 26
         + a26 * 27 + a27 * 28 + a28 * 29 + a29 * 30 + a30 * 31 + a31 * 32 + a32 * 33 + a33 * 34
         + a34 * 35 + a35 * 36 + a36 * 37 + a37 * 38 + a38 * 39 + a39 * 40;
}

__kernel void caller(__global const int *in, __global int *out) {
    int i = gid_x();
    int b = in[i];
    out[i] = combine(b, b + 1, b + 2, b + 3, b + 4, b + 5, b + 6, b + 7, b + 8, b + 9,
                     b + 10, b + 11, b + 12, b + 13, b + 14, b + 15, b + 16, b + 17, b + 18, b + 19,
                     b ^ 20, b ^ 21, b ^ 22, b ^ 23, b ^ 24, b ^ 25, b ^ 26, b ^ 27, b ^ 28, b ^ 29,
                     b * 30, b * 31, b * 32, b * 33, b * 34, b * 35, b * 36, b * 37, b * 38, b * 39);
}
