// half arithmetic in registers (loads and stores of half through vload_half /
// vstore_half), rounding to half on the way out.
// launch: --grid 64 --block 64 --buffer x=f32:iota:64 --buffer out=i16:zero:128 --arg x=@x --arg out=@out
#include "spirv.h"
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
__kernel void half_math(__global const float *x, __global half *out) {
    size_t i = get_global_id(0);
    half h = (half)(x[i] * 0.37f - 5.0f);
    half k = h * h + (half)1.5f;
    out[2 * i] = k;
    out[2 * i + 1] = h - k / (half)3.0f;
}
