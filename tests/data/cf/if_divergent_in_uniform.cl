// OpenCL C twin of if_divergent_in_uniform.mir (same computation, same buffers and
// arguments): a divergent if inside a uniform if.
#include "twin.h"

__kernel void k(__global uint *out, uint u) {
    uint g = GLOBAL_ID(), wg = get_group_id(0);
    __global uint *p1 = out + 3 * g + 1;
    uint r;
    if (wg == u) {
        uint d;
        if (g & 2) { d = g * 7; *p1 = d; }
        else { d = 0 - g; *p1 = d; }
        r = d + 3;
    } else {
        out[3 * g + 2] = g;
        r = (uint)-2;
    }
    out[3 * g] = r;
}
