// The examples' call with many arguments (examples/call_many.mir): a device
// function taking 20 ints, 20 floats and a 24-byte struct by value.
// launch: --grid 64 --block 64 --buffer out=f32:zero:64 --arg out=@out
#include "spirv.h"
typedef struct { int i; float f; long l; double d; } S;
__attribute__((noinline)) float combine(int a0, int a1, int a2, int a3, int a4, int a5, int a6, int a7, int a8, int a9,
                                        int a10, int a11, int a12, int a13, int a14, int a15, int a16, int a17, int a18, int a19,
                                        float f0, float f1, float f2, float f3, float f4, float f5, float f6, float f7, float f8, float f9,
                                        float f10, float f11, float f12, float f13, float f14, float f15, float f16, float f17, float f18, float f19, S s) {
    int ints = a0 + 2 * a1 + 3 * a2 + 4 * a3 + 5 * a4 + 6 * a5 + 7 * a6 + 8 * a7 + 9 * a8 + 10 * a9 + 11 * a10 + 12 * a11 + 13 * a12 + 14 * a13
             + 15 * a14 + 16 * a15 + 17 * a16 + 18 * a17 + 19 * a18 + 20 * a19 + s.i + (int)s.l;
    float floats = ((((((((((((((((((f0 + f1) + f2) + f3) + f4) + f5) + f6) + f7) + f8) + f9) + f10) + f11) + f12) + f13) + f14) + f15) + f16) + f17) + f18) + f19;
    floats = floats + s.f + (float)s.d;
    return floats + (float)ints;
}
__kernel void call_many(__global float *out) {
    int g = get_global_id(0);
    float h = g * 0.5f;
    S s = { g * 3, h + 1.0f, (long)g << 33 | 5, g * 0.25 };
    out[g] = combine(g, g + 1, g + 2, g + 3, g + 4, g + 5, g + 6, g + 7, g + 8, g + 9, g + 10, g + 11, g + 12, g + 13, g + 14, g + 15, g + 16, g + 17, g + 18, g + 19,
                     h, h + 1, h + 2, h + 3, h + 4, h + 5, h + 6, h + 7, h + 8, h + 9, h + 10, h + 11, h + 12, h + 13, h + 14, h + 15, h + 16, h + 17, h + 18, h + 19, s);
}
