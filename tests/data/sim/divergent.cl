#include "common.h"
// Collatz step counts: a data-dependent, divergent loop with a divergent branch inside.
__kernel void collatz(__global const uint *in, __global uint *steps, __global uint *peak) {
    int i = gid_x();
    uint x = in[i];
    uint n = 0, m = x;
    while (x > 1) {
        if (x & 1) x = 3 * x + 1; else x >>= 1;
        m = m > x ? m : x;
        n++;
    }
    steps[i] = n;
    peak[i] = m;
}
