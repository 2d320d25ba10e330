// int4 compares giving masks, select and vector conversions.
// launch: --grid 64 --block 64 --buffer a=i32:iota:256 --buffer out=i32:zero:256 --arg a=@a --arg out=@out
#include "spirv.h"
__kernel void vector_compare(__global const int4 *a, __global int4 *out) {
    size_t i = get_global_id(0);
    int4 v = a[i] - 128;
    int4 m = v > (int4)(0, 10, -10, 5);
    int4 r = select(-v, v * 2, m);
    float4 f = convert_float4(r) * 0.5f;
    out[i] = convert_int4(f) + m;
}
