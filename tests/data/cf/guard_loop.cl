// OpenCL C twin of guard_loop.mir (same computation, same buffers and
// arguments): a divergent guard straight into a divergent loop (the guarded grid-stride loop).
#include "twin.h"

__kernel void k(uint n, __global uint *out) {
    uint i = get_local_id(0);
    if (i < n) {
        uint j = i;
        do {
            out[j] = j;
            j += 64;
        } while (j < n);
    }
}
