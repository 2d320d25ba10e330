#include "common.h"
__kernel void saxpy(float alpha, __global const float *x, __global float *y, __global float *q, int n) {
    int i = gid_x();
    if (i < n) {
        y[i] = alpha * x[i] + y[i];
        q[i] = x[i] / (float)(i + 1);
    }
}
