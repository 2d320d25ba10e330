#include "common.h"
#define WG 256
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce(__global const int *in, __global int *out) {
    __local int tmp[WG];
    int lid = lid_x();
    tmp[lid] = in[gid_x()];
    wg_barrier();
    for (int s = WG / 2; s > 0; s >>= 1) {
        if (lid < s) tmp[lid] += tmp[lid + s];
        wg_barrier();
    }
    if (lid == 0) out[grp_x()] = tmp[0];
}
