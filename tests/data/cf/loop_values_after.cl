// OpenCL C twin of loop_values_after.mir (same computation, same buffers and
// arguments): values defined in a loop used after it.
#include "twin.h"

__kernel void k(__global uint *out) {
    uint g = GLOBAL_ID();
    uint i = 0, x = g, sq, h;
    for (;;) {
        sq = i * i;
        h = x ^ sq;
        if ((h & 7) == 0 || i >= 9)
            break;
        x = x * 3 + i;
        i++;
    }
    out[4 * g] = i;
    out[4 * g + 1] = h + sq;
    uint t = h % 6, j = 0, a = x, v, w;
    do {
        v = (a & 1) ? a * 3 + 1 : a >> 1;
        j++;
        w = v + j;
        a = v;
    } while (j < t);
    out[4 * g + 2] = v;
    out[4 * g + 3] = w * j;
}
