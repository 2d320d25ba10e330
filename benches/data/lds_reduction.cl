// Twin of examples/lds_reduction.mir.
__kernel void reduce_sum(__global const float *in, __global float *out) {
    __local float tile[256];
    int lid = get_local_id(0), size = get_local_size(0);
    int i = get_group_id(0) * size + lid;
    tile[lid] = in[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int stride = size >> 1; stride != 0; stride >>= 1) {
        if ((uint)lid < (uint)stride) tile[lid] += tile[lid + stride];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) out[get_group_id(0)] = tile[0];
}
