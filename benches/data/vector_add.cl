// Twin of examples/vector_add.mir.
__kernel void vector_add(__global const float *a, __global const float *b, __global float *c) {
    int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
    c[i] = a[i] + b[i];
}
