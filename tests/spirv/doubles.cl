// double arithmetic, conversions and compares.
// launch: --grid 64 --block 64 --buffer x=f64:iota:64 --buffer out=f64:zero:256 --arg x=@x --arg out=@out
#include "spirv.h"
__kernel void doubles(__global const double *x, __global double *out) {
    size_t i = get_global_id(0);
    double v = x[i] * 1.0000001 - 20.0;
    out[4 * i] = v / 3.0;
    out[4 * i + 1] = (double)(long)(v * 1e6);
    out[4 * i + 2] = v > 0.0 ? v * v : -v;
    out[4 * i + 3] = (float)v + 0.1;
}
