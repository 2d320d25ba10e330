// OpenCL C twin of no_lane_enters.mir (same computation, same buffers and
// arguments): a loop no lane enters (divergent guard false everywhere) and a uniform loop with zero trips.
#include "twin.h"

__kernel void k(__global uint *out, uint n, uint m) {
    uint lid = get_local_id(0), g = GLOBAL_ID();
    __global uint *p1 = out + 4 * g + 1, *p2 = out + 4 * g + 2;
    uint r = (uint)-7;
    if (lid < n) {
        uint i = lid * 3, trips = 0;
        do {
            *p1 = i;
            trips++;
            i += 32;
        } while (i < n);
        r = trips;
    }
    out[4 * g] = r;
    uint acc = g;
    for (uint u = 0; u < m; u++) {
        acc = (acc + u) * 3;
        *p2 = acc;
    }
    out[4 * g + 3] = acc;
}
