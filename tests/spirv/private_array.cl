// A private array indexed by data (stays in scratch memory), with a histogram.
// launch: --grid 64 --block 64 --buffer in=i32:iota:64 --buffer out=i32:zero:512 --arg in=@in --arg out=@out
#include "spirv.h"
__kernel void private_array(__global const int *in, __global int *out) {
    size_t g = get_global_id(0);
    int h[8] = {0};
    int x = in[g] * 2654435761u;
    for (int k = 0; k < 16; k++) {
        h[(x >> (k * 2)) & 7] += k;
    }
    for (int k = 0; k < 8; k++)
        out[8 * g + k] = h[k];
}
