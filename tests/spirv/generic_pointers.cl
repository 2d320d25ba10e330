// OpenCL 2.0 generic pointers: one function reading through a pointer that
// points to global, local or private memory.
// launch: --grid 64 --block 64 --buffer in=i32:iota:64 --buffer out=i32:zero:64 --arg in=@in --arg out=@out
#include "spirv.h"
__attribute__((noinline)) int sum3(const int *p) { return p[0] + 2 * p[1] + 3 * p[2]; }
__kernel void generic_pointers(__global const int *in, __global int *out) {
    __local int tile[66];
    int priv[3];
    size_t l = get_local_id(0), g = get_global_id(0);
    tile[l] = in[g];
    if (l < 2) tile[64 + l] = 0;
    priv[0] = g; priv[1] = -g; priv[2] = g * g;
    barrier(CLK_LOCAL_MEM_FENCE);
    const int *p = (g & 1) ? (const int *)&tile[l] : (const int *)priv;
    out[g] = sum3(p) + sum3((const int *)&in[g < 62 ? g : 61]);
}
