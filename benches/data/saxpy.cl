// Twin of examples/saxpy.mir.
#include "prelude.h"
__kernel void saxpy(int n, float a, __global const float *x, __global float *y) {
    int i = GROUP_ID_X() * LOCAL_SIZE_X() + LOCAL_ID_X();
    if (i < n) y[i] = __builtin_fmaf(a, x[i], y[i]);
}
