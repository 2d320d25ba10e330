#include "common.h"
// A generic pointer that points to private memory (or global, chosen at run
// time, so clang cannot resolve the address space): flat accesses reach the
// work-item's scratch through FLAT_SCRATCH (gfx90a: set by the kernel from the
// flat scratch init SGPRs) or the architected flat scratch (gfx942, gfx1100).
__kernel void generic_private(__global int *out, __global int *other, int pick) {
    int scratch[16];
    uint i = gid_x();
    for (int j = 0; j < 16; j++)
        scratch[j] = (int)i * 16 + j;
    int *p = ((int)i % 4 == pick) ? (int *)other : (int *)scratch;
    int sum = 0;
    for (int j = 0; j < 16; j += 3)
        sum += ((volatile int *)p)[(j + (int)i) & 15];
    out[i] = sum;
}
