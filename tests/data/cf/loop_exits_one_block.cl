// OpenCL C twin of loop_exits_one_block.mir (same computation, same buffers and
// arguments): a loop with several exits to one block.
#include "twin.h"

__kernel void k(__global uint *out) {
    uint g = GLOBAL_ID();
    uint x = (g * 37) & 63, t = (g & 15) + 1;
    uint why, v;
    for (uint i = 0;;) {
        uint x1 = x + 3;
        if (x1 % 5 == 0) { why = 1; v = x1; break; }
        uint y = x1;
        if (x1 & 1) {
            if (x1 > 60) { why = 2; v = i; break; }
            y = x1 + 1;
        }
        i++;
        if (!(i < t)) { why = 3; v = y; break; }
        x = y;
    }
    out[2 * g] = why;
    out[2 * g + 1] = v;
}
