// OpenCL C twin of nested3_break2.mir (same computation, same buffers and
// arguments): loops nested three deep with an exit that leaves two levels at once.
#include "twin.h"

__kernel void k(__global uint *out) {
    uint g = GLOBAL_ID();
    uint ti = (g & 3) + 1, tj = ((g >> 2) & 3) + 1, tk = g % 5 + 1;
    uint acc = g, nb = 0, i = 0;
    do {
        uint a = acc;
        for (uint j = 0;;) {
            uint acc2 = a;
            for (uint k = 0;;) {
                uint k1 = k + 1;
                uint acc3 = acc2 * 3 + (k1 + j * 4 + i * 16);
                if ((i + j + k + g) % 7 == 0 && j != 0) {
                    acc = acc3;
                    nb++;
                    goto outer_latch; // leaves the inner and the middle loop
                }
                if (!(k1 < tk)) { a = acc3; break; }
                k = k1;
                acc2 = acc3;
            }
            j++;
            if (!(j < tj)) { acc = a; break; }
        }
    outer_latch:
        i++;
    } while (i < ti);
    out[2 * g] = acc;
    out[2 * g + 1] = nb;
}
