// OpenCL C twin of loop_continues.mir (same computation, same buffers and
// arguments): several back edges (continue) in one loop.
#include "twin.h"

__kernel void k(__global uint *out) {
    uint g = GLOBAL_ID();
    uint t = g % 13, i = 0, acc = g, n = 0;
    while (i < t) {
        uint i1 = i + 1;
        n++;
        if (i % 3 == 0) { acc += 1; i = i1; continue; }
        if ((g >> (i & 7)) & 1) { acc ^= i * 17; i = i1; continue; }
        acc += i * 10;
        i += 2;
    }
    out[2 * g] = acc;
    out[2 * g + 1] = n;
}
