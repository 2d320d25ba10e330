// OpenCL C twin of loop_exits_many_blocks.mir (same computation, same buffers and
// arguments): a loop with exits (breaks) to different blocks.
#include "twin.h"

__kernel void k(__global uint *out) {
    uint g = GLOBAL_ID();
    __global uint *p1 = out + 2 * g + 1;
    uint t = g % 9 + 1, x = g, code;
    for (uint i = 0;;) {
        uint x1 = x * 5 + 1;
        if ((x1 & 15) == 0) { *p1 = i + 100; code = 1; break; }
        if (x1 % 13 == 4) { *p1 = x1 * 2; code = 2; break; }
        i++;
        if (!(i < t)) { *p1 = x1; code = 3; break; }
        x = x1;
    }
    out[2 * g] = code;
}
