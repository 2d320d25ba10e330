// Twin of examples/call_many.mir: a 40-argument call with a 24-byte struct.
#include "prelude.h"
typedef struct { int a; float b; long c; double d; } S;
__attribute__((noinline)) float combine(int a0, int a1, int a2, int a3, int a4, int a5, int a6, int a7, int a8, int a9, int a10, int a11, int a12, int a13, int a14, int a15, int a16, int a17, int a18, int a19, float a20, float a21, float a22, float a23, float a24, float a25, float a26, float a27, float a28, float a29, float a30, float a31, float a32, float a33, float a34, float a35, float a36, float a37, float a38, float a39, S s) {
    int ints = a0 * 1 + a1 * 2 + a2 * 3 + a3 * 4 + a4 * 5 + a5 * 6 + a6 * 7 + a7 * 8 + a8 * 9 + a9 * 10 + a10 * 11 + a11 * 12 + a12 * 13 + a13 * 14 + a14 * 15 + a15 * 16 + a16 * 17 + a17 * 18 + a18 * 19 + a19 * 20 + s.a + (int)s.c;
    float floats = (((((((((((((((((((a20 + a21) + a22) + a23) + a24) + a25) + a26) + a27) + a28) + a29) + a30) + a31) + a32) + a33) + a34) + a35) + a36) + a37) + a38) + a39) + s.b + (float)s.d;
    return floats + (float)ints;
}
__kernel void call_many(__global const int *in, __global float *out, S s) {
    int i = GROUP_ID_X() * LOCAL_SIZE_X() + LOCAL_ID_X();
    int x = in[i];
    float xf = (float)x;
    out[i] = combine(x + 0, x + 1, x + 2, x + 3, x + 4, x + 5, x + 6, x + 7, x + 8, x + 9, x + 10, x + 11, x + 12, x + 13, x + 14, x + 15, x + 16, x + 17, x + 18, x + 19, xf * 20.0f, xf * 21.0f, xf * 22.0f, xf * 23.0f, xf * 24.0f, xf * 25.0f, xf * 26.0f, xf * 27.0f, xf * 28.0f, xf * 29.0f, xf * 30.0f, xf * 31.0f, xf * 32.0f, xf * 33.0f, xf * 34.0f, xf * 35.0f, xf * 36.0f, xf * 37.0f, xf * 38.0f, xf * 39.0f, s);
}
