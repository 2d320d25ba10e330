#include "common.h"
__kernel void vadd(__global const float *a, __global const float *b, __global float *c, int n) {
    int i = gid_x();
    if (i < n) c[i] = a[i] + b[i];
}
