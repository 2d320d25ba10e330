// OpenCL C twin of loop_uniform_in_divergent.mir (same computation, same buffers and
// arguments): a uniform loop inside a divergent loop.
#include "twin.h"

__kernel void k(__global uint *out, uint m) {
    uint g = GLOBAL_ID(), wg = get_group_id(0);
    __global uint *p5 = out + 6 * g + 5;
    uint td = (g & 3) + 1, tu = m + wg, acc = g, i = 0;
    do {
        uint a = acc;
        for (uint j = 0; j < tu; j++) {
            a = a * 7 + (i + j);
            *p5 = a;
        }
        out[6 * g + 1 + i] = a;
        acc = a;
        i++;
    } while (i < td);
    out[6 * g] = acc;
}
