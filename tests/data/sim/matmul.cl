#include "common.h"
#define T 16
// C[M x N] = A[M x K] * B[K x N], all dimensions multiples of T.
__kernel __attribute__((reqd_work_group_size(T, T, 1)))
void matmul(__global const float *A, __global const float *B, __global float *C, int M, int N, int K) {
    __local float As[T][T];
    __local float Bs[T][T];
    int tx = lid_x(), ty = lid_y();
    int col = gid_x(), row = gid_y();
    float acc = 0.0f;
    for (int t = 0; t < K; t += T) {
        As[ty][tx] = A[row * K + t + tx];
        Bs[ty][tx] = B[(t + ty) * N + col];
        wg_barrier();
        for (int k = 0; k < T; k++) acc += As[ty][k] * Bs[k][tx];
        wg_barrier();
    }
    C[row * N + col] = acc;
}
