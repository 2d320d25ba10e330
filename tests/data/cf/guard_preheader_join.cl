// OpenCL C twin of guard_preheader_join.mir (same computation, same buffers and
// arguments): guard, preheader, divergent loop whose exit is the guard's join.
#include "twin.h"

__kernel void k(__global uint *out, uint n) {
    uint lid = get_local_id(0);
    uint r = 0;
    if (lid < n) {
        uint i = lid, acc = 0;
        do {
            acc++;
            i += 8;
        } while (i < n);
        r = acc;
    }
    out[lid] = r;
}
