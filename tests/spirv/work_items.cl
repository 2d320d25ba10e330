// The work-item functions in two dimensions: ids, sizes, group counts.
// launch: --grid 16,8 --block 8,4 --buffer out=i32:zero:1024 --arg out=@out
#include "spirv.h"
__kernel void work_items(__global int *out) {
    size_t x = get_global_id(0), y = get_global_id(1);
    size_t w = get_global_size(0);
    __global int *o = out + 8 * (y * w + x);
    o[0] = get_local_id(0);
    o[1] = get_local_id(1);
    o[2] = get_group_id(0);
    o[3] = get_group_id(1);
    o[4] = get_local_size(0) * 100 + get_local_size(1);
    o[5] = get_num_groups(0) * 100 + get_num_groups(1);
    o[6] = get_global_size(1);
    o[7] = x * 1000 + y;
}
