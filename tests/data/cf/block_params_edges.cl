// OpenCL C twin of block_params_edges.mir (same computation, same buffers and
// arguments): block parameters on every kind of edge.
#include "twin.h"

__kernel void k(__global uint *out) {
    uint lid = get_local_id(0), g = GLOBAL_ID();
    uint v, tag;
    if (g % 6 < 3) { v = g * 3; tag = 1; }
    else { v = lid + 3; tag = 2; }
    out[4 * g] = v;
    out[4 * g + 1] = tag;
    uint t = g & 7, e1, e2;
    if (t != 0) {
        uint i = v & 3, p = v, q = 0;
        for (;;) {
            uint p2 = p + i, i2 = i + 1;
            if (!(i2 < t)) { e1 = p2; e2 = q; break; }
            i = i2;
            p = q; // the rotation of the loop's parameters
            q = p2;
        }
    } else {
        e1 = tag;
        e2 = (uint)-1;
    }
    out[4 * g + 2] = e1;
    out[4 * g + 3] = e2;
}
