// Twin of examples/matmul.mir (16 x 16 tiles).
#include "prelude.h"
__kernel void matmul(__global const float *a, __global const float *b, __global float *c, int n) {
    __local float ta[256], tb[256];
    int tx = LOCAL_ID_X(), ty = LOCAL_ID_Y();
    int row = GROUP_ID_Y() * 16 + ty, col = GROUP_ID_X() * 16 + tx;
    float acc = 0.0f;
    for (int t = 0; t < n; t += 16) {
        ta[ty * 16 + tx] = a[row * n + t + tx];
        tb[ty * 16 + tx] = b[(t + ty) * n + col];
        BARRIER();
        for (int k = 0; k < 16; k++) acc = __builtin_fmaf(ta[ty * 16 + k], tb[k * 16 + tx], acc);
        BARRIER();
    }
    c[row * n + col] = acc;
}
