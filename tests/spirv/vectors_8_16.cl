// Vectors of 8 and 16 elements (OpenCL's float8, int16, double8, ...):
// arithmetic, comparisons and selects, conversions, swizzles, vload/vstore and
// by-value kernel arguments.
// launch: --grid 64 --block 32 --buffer x=f32:iota:1024 --buffer y=i32:iota:1024 --buffer d=f64:zero:512 --buffer o=f32:zero:1024 --buffer oi=i32:zero:1024 --arg x=@x --arg y=@y --arg d=@d --arg o=@o --arg oi=@oi --arg k=i32:1,i32:2,i32:3,i32:4,i32:5,i32:6,i32:7,i32:8
#include "spirv.h"
__kernel void vectors_8_16(__global const float *x, __global const int *y, __global double *d, __global float *o, __global int *oi, int8 k) {
    size_t i = get_global_id(0);
    float8 a = vload8(i, x);
    float8 b = vload8(i + 64, x);
    int16 c = vload16(i, y);
    float8 s = a * b + (float8)(0.5f) - a / (b + 1.0f);
    int8 m = a > (float8)(40.0f);
    float8 t = select(s, a, m);
    vstore8(t, i, o);
    int16 e = c * 3 + (int16)(k, k) - (c >> 2);
    e = e.s0123456789abcdef ^ e.sfedcba9876543210;
    vstore16(e, i, oi);
    double8 w = convert_double8(a) * 0.25;
    vstore8(w, i, d);
    o[512 + i] = s.s7 + t.s3 + (float)e.s9 + (float)k.s5;
}
