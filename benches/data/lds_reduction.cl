// Twin of examples/lds_reduction.mir.
#include "prelude.h"
__kernel void reduce_sum(__global const float *in, __global float *out) {
    __local float tile[256];
    int lid = LOCAL_ID_X(), size = LOCAL_SIZE_X();
    int i = GROUP_ID_X() * size + lid;
    tile[lid] = in[i];
    BARRIER();
    for (int stride = size >> 1; stride != 0; stride >>= 1) {
        if ((uint)lid < (uint)stride) tile[lid] += tile[lid + stride];
        BARRIER();
    }
    if (lid == 0) out[GROUP_ID_X()] = tile[0];
}
