// Subgroup reductions and scans on char, short, uchar and half
// (cl_khr_subgroup_extended_types, cl_khr_fp16): widened to 32 bits and
// narrowed back, the exclusive scans' first lanes given the narrow type's
// identity. tests/spirv.rs `narrow_subgroup_collectives_are_what_opencl_defines`
// checks every slot against the definition computed in the test.
// launch: --grid 256 --block 128 --buffer out=i32:zero:3072 --arg out=@out
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
__kernel void narrow_subgroups(__global int *out) {
    size_t g = get_global_id(0);
    char c = (char)(g * 37 + 11);
    short s = (short)(g * 1237 - 20000);
    uchar u = (uchar)(g * 53 + 7);
    half h = (half)((int)(g % 23) - 11);
    __global int *o = out + 12 * g;
    o[0] = sub_group_reduce_add(c);
    o[1] = sub_group_reduce_max(c);
    o[2] = sub_group_scan_inclusive_min(c);
    o[3] = sub_group_scan_exclusive_max(c);
    o[4] = sub_group_reduce_min(s);
    o[5] = sub_group_scan_exclusive_add(s);
    o[6] = sub_group_scan_exclusive_min(s);
    o[7] = sub_group_reduce_max(u);
    o[8] = sub_group_scan_inclusive_add(u);
    o[9] = (int)sub_group_reduce_add(h);
    o[10] = (int)sub_group_reduce_max(h);
    o[11] = as_ushort(sub_group_scan_exclusive_min(h));
}
