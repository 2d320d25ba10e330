// OpenCL C twin of if_uniform_in_divergent.mir (same computation, same buffers and
// arguments): a uniform if inside a divergent if.
#include "twin.h"

__kernel void k(__global uint *out, uint u) {
    uint g = GLOBAL_ID(), wg = get_group_id(0);
    __global uint *p1 = out + 3 * g + 1;
    uint m3 = g % 3, r;
    if (m3 != 0) {
        uint v;
        if (wg == u) { v = g * 2; *p1 = v; }
        else { v = g + 100; *p1 = v; }
        out[3 * g + 2] = m3;
        r = v + 1;
    } else {
        r = (uint)-9;
    }
    out[3 * g] = r;
}
