// An inclusive work-group scan (Hillis-Steele) in __local memory.
// launch: --grid 128 --block 64 --buffer in=i32:iota:128 --buffer out=i32:zero:128 --arg in=@in --arg out=@out
#include "spirv.h"
__kernel void scan_local(__global const int *in, __global int *out) {
    __local int a[64], b[64];
    size_t l = get_local_id(0);
    a[l] = in[get_global_id(0)] * 3 - 50;
    barrier(CLK_LOCAL_MEM_FENCE);
    __local int *src = a, *dst = b;
    for (uint d = 1; d < 64; d <<= 1) {
        dst[l] = l >= d ? src[l] + src[l - d] : src[l];
        barrier(CLK_LOCAL_MEM_FENCE);
        __local int *t = src; src = dst; dst = t;
    }
    out[get_global_id(0)] = src[l];
}
