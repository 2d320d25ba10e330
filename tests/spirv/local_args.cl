// __local pointer arguments: the launch gives each its LDS (clSetKernelArg with
// a size and no value), placed after the kernel's own __local variable at the
// pointee's alignment; a permutation through one, a sum of neighbours through another.
// launch: --grid 256 --block 64 --buffer in=f32:iota:256 --buffer out=f32:zero:256 --buffer d=f64:zero:256 --arg in=@in --arg out=@out --arg d=@d --arg t=lds:256 --arg u=lds:512 --arg c=lds:24
// launch: --grid 128 --block 128 --buffer in=f32:iota:128 --buffer out=f32:zero:128 --buffer d=f64:zero:128 --arg in=@in --arg out=@out --arg d=@d --arg t=lds:512 --arg u=lds:1024 --arg c=lds:8
#include "spirv.h"
__kernel void local_args(__global const float *in, __global float *out, __global double *d, __local float *t, __local double *u, __local int2 *c) {
    __local int counter;
    size_t l = get_local_id(0), g = get_global_id(0);
    if (l == 0) {
        counter = 7;
        c[0] = (int2)(3, 4);
    }
    t[l] = in[g];
    u[l] = (double)in[g] * 0.5;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[g] = t[l ^ 31] + counter + c[0].y;
    d[g] = u[l] + u[l ^ 1];
}
