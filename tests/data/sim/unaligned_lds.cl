#include "common.h"
// LDS accesses at byte addresses: llc-22 emits ds_write_b32/ds_read_b32 for
// these align-1 fields (relying on the unaligned mode ROCm sets on gfx9+).
typedef struct __attribute__((packed)) {
    uchar tag;
    uint value;
} packed_t;

__kernel void unaligned_lds(__global const uint *in, __global uint *out) {
    __local packed_t buf[64];
    uint i = lid_x();
    buf[i].tag = (uchar)i;
    buf[i].value = in[gid_x()];
    wg_barrier();
    out[gid_x()] = buf[63 - i].value + buf[63 - i].tag;
}
