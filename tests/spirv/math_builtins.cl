// OpenCL.std math with exact results: sqrt, fabs, floor, ceil, rint, round,
// fmin, fmax, copysign, ldexp, clamp, mad, fdim.
// launch: --grid 64 --block 64 --buffer x=f32:iota:64 --buffer out=f32:zero:768 --arg x=@x --arg out=@out
#include "spirv.h"
__kernel void math_builtins(__global const float *x, __global float *out) {
    size_t i = get_global_id(0);
    float v = (x[i] - 31.5f) * 0.37f;
    __global float *o = out + 12 * i;
    o[0] = sqrt(fabs(v));
    o[1] = floor(v);
    o[2] = ceil(v);
    o[3] = rint(v);
    o[4] = round(v);
    o[5] = fmin(v, 1.0f);
    o[6] = fmax(v, -2.0f);
    o[7] = copysign(3.0f, v);
    o[8] = ldexp(v, (int)i - 30);
    o[9] = clamp(v, -1.0f, 1.0f);
    o[10] = fdim(v, 0.5f);
    o[11] = trunc(v) / 3.0f;
}
