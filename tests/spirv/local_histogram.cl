// A histogram in __local memory with local atomics, merged into global memory.
// launch: --grid 256 --block 128 --buffer in=i32:iota:256 --buffer bins=i32:zero:16 --arg in=@in --arg bins=@bins
#include "spirv.h"
__kernel void local_histogram(__global const int *in, __global int *bins) {
    __local int h[16];
    size_t l = get_local_id(0);
    if (l < 16)
        h[l] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint v = in[get_global_id(0)] * 2654435761u;
    atomic_add(&h[v >> 28], 1);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l < 16)
        atomic_add(&bins[l], h[l]);
}
