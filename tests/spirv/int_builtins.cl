// OpenCL.std integer functions: abs, abs_diff, add_sat, sub_sat, hadd, rhadd,
// clz, ctz, popcount, rotate, mul_hi, mad24, mul24, min, max, clamp, upsample.
// launch: --grid 64 --block 64 --buffer x=i32:iota:64 --buffer out=i32:zero:1024 --arg x=@x --arg out=@out
#include "spirv.h"
__kernel void int_builtins(__global const int *x, __global int *out) {
    size_t i = get_global_id(0);
    int v = (x[i] - 30) * 0x01234567;
    uint u = (uint)v;
    __global int *o = out + 16 * i;
    o[0] = abs(v);
    o[1] = abs_diff(v, 12345);
    o[2] = add_sat(v, 0x70000000);
    o[3] = sub_sat(u, 0x80000000u);
    o[4] = hadd(v, -7);
    o[5] = rhadd(u, 0xffffffffu);
    o[6] = clz(u);
    o[7] = ctz(u);
    o[8] = popcount(u);
    o[9] = rotate(u, (uint)i);
    o[10] = mul_hi(v, 0x7654321);
    o[11] = mad24(v & 0xffffff, 3, 5);
    o[12] = mul24(u & 0xffffff, 0x123u);
    o[13] = min(v, 100) + max(u, 7u);
    o[14] = clamp(v, -1000, 1000);
    o[15] = (int)upsample((short)i, (ushort)v);
}
