// The examples' vector add: one float per work-item.
// launch: --grid 256 --block 64 --buffer a=f32:iota:256 --buffer b=f32:fill:0.25:256 --buffer c=f32:zero:256 --arg a=@a --arg b=@b --arg c=@c
#include "spirv.h"
__kernel void vadd(__global const float *a, __global const float *b, __global float *c) {
    size_t i = get_global_id(0);
    c[i] = a[i] + b[i];
}
