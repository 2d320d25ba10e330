#include "common.h"
#define BINS 64
// Per-work-group histogram in LDS (local atomics), merged with global atomics.
__kernel void histogram(__global const uint *data, int n, __global uint *bins, __global uint *total) {
    __local uint local_bins[BINS];
    int lid = lid_x();
    int lsize = lsize_x();
    for (int b = lid; b < BINS; b += lsize) local_bins[b] = 0;
    wg_barrier();
    int i = gid_x();
    if (i < n) __atomic_fetch_add(&local_bins[data[i] % BINS], 1u, __ATOMIC_RELAXED);
    wg_barrier();
    for (int b = lid; b < BINS; b += lsize) {
        uint v = local_bins[b];
        if (v) __atomic_fetch_add(&bins[b], v, __ATOMIC_RELAXED);
    }
    if (i < n) __atomic_fetch_max(total, data[i], __ATOMIC_RELAXED);
}
