// Global atomics from every work-item: add, max, min, or, xor, exchange and
// compare-exchange on a handful of counters.
// launch: --grid 256 --block 64 --buffer c=i32:zero:8 --buffer old=i32:zero:256 --arg c=@c --arg old=@old
#include "spirv.h"
__kernel void atomics(__global int *c, __global int *old) {
    int g = get_global_id(0);
    atomic_add(&c[0], g);
    atomic_max(&c[1], g * 7 % 100);
    atomic_min(&c[2], -g);
    atomic_or(&c[3], 1 << (g & 31));
    atomic_xor(&c[4], g);
    atomic_inc(&c[5]);
    old[g] = atomic_cmpxchg(&c[6], 0, 1) + atomic_sub(&c[7], 2) * 0;
}
