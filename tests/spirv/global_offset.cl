// A launch with a global offset and its dimension count: get_global_id includes
// the offset, get_global_linear_id does not, and get_work_dim is what the launch
// was enqueued with (the hidden arguments of the code object).
// launch: --grid 16,4 --block 8,2 --offset 100,7 --buffer out=i32:zero:512 --arg out=@out
// launch: --grid 64 --block 32 --offset 5 --work-dim 3 --buffer out=i32:zero:512 --arg out=@out
#include "spirv.h"
__kernel void global_offset(__global int *out) {
    size_t l = get_global_linear_id();
    __global int *o = out + 8 * l;
    o[0] = get_global_id(0);
    o[1] = get_global_id(1);
    o[2] = get_global_offset(0);
    o[3] = get_global_offset(1);
    o[4] = get_global_offset(2);
    o[5] = get_work_dim();
    o[6] = l;
    o[7] = get_global_id(0) - get_global_offset(0) + get_local_id(1);
}
