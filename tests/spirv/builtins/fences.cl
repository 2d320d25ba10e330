// OpenCL 1.x's mem_fence, read_mem_fence and write_mem_fence (clang-22 leaves
// them as calls in SPIR-V; the front end makes work-group fences of them)
// around an exchange of values through LDS and global memory between the
// work-items of a group.
// launch: --grid 128 --block 64 --buffer in=i32:iota:128 --buffer scratch=i32:zero:128 --buffer out=i32:zero:128 --arg in=@in --arg scratch=@scratch --arg out=@out
#include "spirv.h"
__kernel void fences(__global const int *in, __global int *scratch, __global int *out) {
    __local int tile[64];
    int l = (int)get_local_id(0);
    int i = (int)get_global_id(0);
    tile[l] = in[i] * 3;
    scratch[i] = in[i] + 1;
    write_mem_fence(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    read_mem_fence(CLK_LOCAL_MEM_FENCE);
    int a = tile[63 - l];
    mem_fence(CLK_GLOBAL_MEM_FENCE);
    int b = scratch[i ^ 1];
    out[i] = a * 1000 + b;
}
