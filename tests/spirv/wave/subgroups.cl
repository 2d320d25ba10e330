// cl_khr_subgroups: reductions, scans, broadcast, any and all over the
// subgroup (the wave: 32 or 64 work-items per the target). Not compared with
// clang-22's amdgcn code: without the device library (-nogpulib) the amdgcn
// side has no subgroup functions (tests/spirv.rs `subgroup_collectives_run`).
// launch: --grid 256 --block 128 --buffer out=i32:zero:1280 --buffer f=f32:zero:256 --buffer l=i64:zero:256 --arg out=@out --arg f=@f --arg l=@l
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
__kernel void subgroups(__global int *out, __global float *f, __global long *l) {
    size_t g = get_global_id(0);
    int x = (int)(g * 7 % 13) - 6;
    __global int *o = out + 5 * g;
    o[0] = sub_group_reduce_add(x);
    o[1] = sub_group_scan_inclusive_max(x);
    o[2] = sub_group_broadcast(x, 3) + get_sub_group_local_id() * 100;
    o[3] = sub_group_any(x > 5) + 2 * sub_group_all(x > -7) + 4 * sub_group_all(x > 0);
    o[4] = sub_group_scan_exclusive_min((uint)x) + get_sub_group_size() * 1000;
    f[g] = sub_group_scan_exclusive_add((float)x * 0.1f) + sub_group_scan_exclusive_max((float)x);
    l[g] = sub_group_reduce_max((long)x << 40) + sub_group_scan_inclusive_add((long)g);
}
