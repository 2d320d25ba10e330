// OpenCL C twin of while_do_while.mir (same computation, same buffers and
// arguments): a while-loop and a do-while loop with divergent trip counts.
#include "twin.h"

__kernel void k(__global uint *out) {
    uint g = GLOBAL_ID();
    uint t1 = g % 6, p = g;
    for (uint i = 0; i < t1; i++)
        p = p * 3 + i;
    out[3 * g] = p;
    uint g9 = g % 9, lim = g9 * 10 + 5;
    uint j = 0, q = g9, q2;
    do {
        q2 = q + j * j + 1;
        j++;
        q = q2;
    } while (q2 < lim);
    out[3 * g + 1] = q2;
    out[3 * g + 2] = j;
}
