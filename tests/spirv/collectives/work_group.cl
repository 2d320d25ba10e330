// OpenCL 2.0's work-group collectives: reductions, scans, broadcast, any and
// all over a 2D work-group (tests/spirv_collectives.rs checks them against
// their definitions). The float inputs are small integers, so sums are exact
// in any order.
// A device function gets the collectives' LDS area as a parameter.
__attribute__((noinline)) int group_max(int v) {
    return work_group_reduce_max(v);
}

__kernel void work_group(__global const int *a, __global const float *f, __global const long *l, __global int *oi, __global float *of, __global long *ol) {
    size_t g = get_global_id(0) + get_global_id(1) * get_global_size(0);
    int x = a[g];
    float y = f[g];
    long z = l[g];
    oi[8 * g + 0] = work_group_reduce_add(x);
    oi[8 * g + 1] = work_group_reduce_min(x) + group_max(x);
    oi[8 * g + 2] = work_group_scan_inclusive_add(x);
    oi[8 * g + 3] = work_group_scan_exclusive_max(x);
    oi[8 * g + 4] = work_group_broadcast(x, get_local_size(0) - 1, get_local_size(1) / 2);
    oi[8 * g + 5] = work_group_any(x > 40);
    oi[8 * g + 6] = work_group_all(x > -50);
    oi[8 * g + 7] = (int)work_group_reduce_max((uint)x);
    of[2 * g + 0] = work_group_reduce_add(y);
    of[2 * g + 1] = work_group_scan_exclusive_min(y);
    ol[2 * g + 0] = work_group_reduce_max(z);
    ol[2 * g + 1] = work_group_scan_inclusive_add(z);
}
