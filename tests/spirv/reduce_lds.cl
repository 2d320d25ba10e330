// A work-group sum in __local memory with barriers: a tree of halving steps.
// launch: --grid 256 --block 64 --buffer in=i32:iota:256 --buffer out=i32:zero:4 --arg in=@in --arg out=@out
#include "spirv.h"
__kernel void reduce_lds(__global const int *in, __global int *out) {
    __local int tile[64];
    size_t l = get_local_id(0);
    tile[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = 32; s > 0; s >>= 1) {
        if (l < s)
            tile[l] += tile[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0)
        out[get_group_id(0)] = tile[0];
}
