// OpenCL C twin of loop_divergent_in_uniform.mir (same computation, same buffers and
// arguments): a divergent loop inside a uniform loop.
#include "twin.h"

__kernel void k(__global uint *out, uint m) {
    uint g = GLOBAL_ID(), wg = get_group_id(0);
    uint tu = m + wg, acc = g;
    for (uint i = 0; i < tu; i++) {
        uint td = (g + i) % 5, a = acc;
        for (uint j = 0; j < td; j++)
            a = a * 5 + j;
        out[5 * g + 1 + i] = a;
        acc = a + 1;
    }
    out[5 * g] = acc;
}
