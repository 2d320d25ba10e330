// Twin of examples/divergent_loop.mir.
__kernel void divergent_loop(__global const int *in, __global int *out) {
    int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
    int x = in[i], acc = 0;
    for (int j = 0; j < (x & 15); j++) acc += (j & 1) ? j * x : -j;
    out[i] = acc;
}
