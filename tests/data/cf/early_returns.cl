// OpenCL C twin of early_returns.mir (same computation, same buffers and
// arguments): early returns inside ifs and inside loops.
#include "twin.h"

__kernel void k(__global uint *out) {
    uint g = GLOBAL_ID();
    __global uint *p0 = out + 2 * g, *p1 = p0 + 1;
    if (g % 5 == 0) { *p0 = 1; *p1 = g; return; }
    uint t = (g & 7) + 1;
    bool isodd = (g & 1) != 0;
    uint x = g, i = 0, x2;
    for (;;) {
        x2 = x + i * 7;
        if (x2 % 11 == 3) { *p0 = 2; *p1 = x2; return; }
        if (i == 4 && isodd) { *p0 = 3; *p1 = x2; return; }
        uint i2 = i + 1;
        if (!(i2 < t))
            break;
        i = i2;
        x = x2;
    }
    if ((x2 & 3) == 0) { *p0 = 4; *p1 = i; return; }
    *p0 = 5;
    *p1 = 0 - x2;
}
