// saxpy with a scalar argument and a bound check (a partial last work-group's
// work-items skip the store).
// launch: --grid 256 --block 64 --buffer x=f32:iota:256 --buffer y=f32:fill:1.5:256 --arg n=250 --arg alpha=2.5 --arg x=@x --arg y=@y
#include "spirv.h"
__kernel void saxpy(uint n, float alpha, __global const float *x, __global float *y) {
    size_t i = get_global_id(0);
    if (i < n)
        y[i] = alpha * x[i] + y[i];
}
