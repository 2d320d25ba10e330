// Twin of examples/matmul.mir (16 x 16 tiles).
__kernel void matmul(__global const float *a, __global const float *b, __global float *c, int n) {
    __local float ta[256], tb[256];
    int tx = get_local_id(0), ty = get_local_id(1);
    int row = get_group_id(1) * 16 + ty, col = get_group_id(0) * 16 + tx;
    float acc = 0.0f;
    for (int t = 0; t < n; t += 16) {
        ta[ty * 16 + tx] = a[row * n + t + tx];
        tb[ty * 16 + tx] = b[(t + ty) * n + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < 16; k++) acc = fma(ta[ty * 16 + k], tb[k * 16 + tx], acc);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    c[row * n + col] = acc;
}
