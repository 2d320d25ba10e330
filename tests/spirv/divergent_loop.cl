// The examples' divergent loop (examples/divergent_loop.mir): a data-dependent
// trip count with a divergent if/else inside.
// launch: --grid 256 --block 64 --buffer in=i32:iota:256 --buffer out=i32:zero:256 --arg in=@in --arg out=@out
#include "spirv.h"
__kernel void divergent_loop(__global const int *in, __global int *out) {
    size_t i = get_global_id(0);
    int x = in[i], acc = 0;
    for (int j = 0; j < (x & 15); j++)
        acc += (j & 1) ? j * x : -j;
    out[i] = acc;
}
