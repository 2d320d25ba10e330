// OpenCL C twin of loop_exit_if_join.mir (same computation, same buffers and
// arguments): a loop exit that is also an enclosing if's join.
#include "twin.h"

__kernel void k(__global uint *out) {
    uint g = GLOBAL_ID();
    uint r = (uint)-5;
    if (g % 7 < 4) {
        uint t = g & 7;
        out[2 * g + 1] = t;
        uint acc = g;
        for (uint i = 0; i < t; i++)
            acc += i * 3;
        r = acc;
    }
    out[2 * g] = r;
}
