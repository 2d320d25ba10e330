// The examples' tiled matrix multiply (examples/matmul.mir): 16 x 16 tiles of
// A and B staged in __local memory, n a multiple of 16.
// launch: --grid 32,32 --block 16,16 --buffer a=f32:iota:1024 --buffer b=f32:fill:0.5:1024 --buffer c=f32:zero:1024 --arg a=@a --arg b=@b --arg c=@c --arg n=32
#include "spirv.h"
__kernel void matmul(__global const float *a, __global const float *b, __global float *c, int n) {
    __local float ta[16][16], tb[16][16];
    int tx = get_local_id(0), ty = get_local_id(1);
    int row = get_group_id(1) * 16 + ty, col = get_group_id(0) * 16 + tx;
    float acc = 0.0f;
    for (int t = 0; t < n; t += 16) {
        ta[ty][tx] = a[row * n + t + tx];
        tb[ty][tx] = b[(t + ty) * n + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < 16; k++)
            acc += ta[ty][k] * tb[k][tx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    c[row * n + col] = acc;
}
