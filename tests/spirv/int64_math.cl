// 64-bit integer arithmetic: multiply, divide, shifts, compares.
// launch: --grid 64 --block 64 --buffer in=i64:iota:64 --buffer out=i64:zero:256 --arg in=@in --arg out=@out
#include "spirv.h"
__kernel void int64_math(__global const long *in, __global long *out) {
    size_t i = get_global_id(0);
    long x = in[i] * 0x123456789L - 77;
    out[4 * i] = x / 13;
    out[4 * i + 1] = x % 7;
    out[4 * i + 2] = (x >> 5) ^ ((ulong)x << 3);
    out[4 * i + 3] = x < 1000 ? x * x : -x;
}
