// float4 arithmetic, vector loads and stores, component access.
// launch: --grid 64 --block 64 --buffer a=f32:iota:256 --buffer out=f32:zero:320 --arg a=@a --arg out=@out
#include "spirv.h"
__kernel void float4_ops(__global const float4 *a, __global float *out) {
    size_t i = get_global_id(0);
    float4 v = a[i];
    float4 w = v * (float4)(1.0f, 2.0f, 0.5f, -1.0f) + v.wzyx;
    vstore4(w, i, out);
    out[256 + i] = w.x + w.y * w.z - w.w;
}
