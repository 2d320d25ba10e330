// cl_khr_subgroup_* (OpGroupNonUniform*) in convergent code: every lane of a
// wave executes them together, as MIR's wave operations require
// (tests/spirv_collectives.rs checks them against their definitions).
__kernel void non_uniform(__global const int *a, __global const float *f, __global int *o, __global float *of) {
    size_t g = get_global_id(0);
    int x = a[g];
    __global int *r = o + 20 * g;
    r[0] = sub_group_elect();
    r[1] = sub_group_non_uniform_all(x > -40);
    r[2] = sub_group_non_uniform_any(x > 45);
    r[3] = sub_group_non_uniform_all_equal(x / 1000);
    r[4] = sub_group_non_uniform_reduce_add(x);
    r[5] = sub_group_non_uniform_scan_inclusive_max(x);
    r[6] = sub_group_non_uniform_scan_exclusive_xor(x);
    r[7] = sub_group_non_uniform_reduce_logical_and(x > -45);
    r[8] = sub_group_non_uniform_broadcast(x, 5);
    r[9] = sub_group_broadcast_first(x);
    uint4 b = sub_group_ballot(x > 0);
    r[10] = sub_group_inverse_ballot(b) + 2 * sub_group_ballot_bit_extract(b, 3);
    r[11] = sub_group_ballot_bit_count(b) * 100 + sub_group_ballot_inclusive_scan(b);
    r[12] = sub_group_ballot_find_lsb(b) * 100 + sub_group_ballot_find_msb(b);
    r[13] = sub_group_shuffle(x, 3);
    r[14] = sub_group_shuffle_xor(x, 1);
    uint lid = get_sub_group_local_id();
    r[15] = sub_group_shuffle_down(x, lid + 1 < get_sub_group_size() ? 1 : 0) + sub_group_shuffle_up(x, lid > 0 ? 1 : 0);
    r[16] = sub_group_clustered_reduce_add(x, 4);
    r[17] = sub_group_clustered_reduce_max(x, 16);
    r[18] = sub_group_non_uniform_reduce_mul((x & 1) + 1);
    r[19] = sub_group_non_uniform_scan_inclusive_mul(x % 3);
    of[g] = sub_group_non_uniform_scan_exclusive_min(f[g]);
}
