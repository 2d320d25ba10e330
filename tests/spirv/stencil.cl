// A 5-point stencil on a 2-D grid with clamped borders.
// launch: --grid 32,16 --block 16,8 --buffer in=f32:iota:512 --buffer out=f32:zero:512 --arg in=@in --arg out=@out --arg w=32 --arg h=16
#include "spirv.h"
__kernel void stencil(__global const float *in, __global float *out, int w, int h) {
    int x = get_global_id(0), y = get_global_id(1);
    int xl = x > 0 ? x - 1 : x, xr = x < w - 1 ? x + 1 : x;
    int yu = y > 0 ? y - 1 : y, yd = y < h - 1 ? y + 1 : y;
    float c = in[y * w + x];
    out[y * w + x] = 0.5f * c + 0.125f * (in[y * w + xl] + in[y * w + xr] + in[yu * w + x] + in[yd * w + x]);
}
