// Constant tables: program-scope __constant arrays of several element types
// (padded structs, vectors, bytes, doubles, an all-zero table) and a
// function-scope lookup table clang makes a constant, read with divergent
// and uniform indices, in the kernel and through a device function.
// launch: --grid 128 --block 64 --buffer in=i32:iota:128 --buffer out=f32:zero:1024 --arg in=@in --arg out=@out --arg n=5
#include "spirv.h"
typedef struct { char tag; float scale; short bias; } Entry;
__constant float coeffs[8] = {1.0f, 2.5f, -3.0f, 4.25f, 0.5f, 6.0f, 7.0f, -8.0f};
__constant int perm[16] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3};
__constant Entry entries[5] = {{1, 0.5f, -7}, {2, 1.5f, 300}, {3, -2.0f, 12}, {4, 8.0f, -1}, {5, 0.25f, 0}};
__constant float4 corners[4] = {(float4)(0, 0, 0, 1), (float4)(1, 0, 0, 1), (float4)(0, 1, 0, 1), (float4)(1, 1, 0, 1)};
__constant uchar bytes[13] = {255, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
__constant double weights[3] = {0.125, 1e-3, 3.0};
__constant int zeros[64] = {0};

float lookup(__constant int *table, int i) { return (float)table[i & 15]; }

__kernel void constant_tables(__global const int *in, __global float *out, int n) {
    size_t g = get_global_id(0);
    int x = in[g] * 2654435761u;
    const int lut[6] = {10, 20, 30, 40, 50, 60};
    Entry e = entries[(x >> 3) % 5 < 0 ? -((x >> 3) % 5) : (x >> 3) % 5];
    float4 c = corners[x & 3];
    out[8 * g + 0] = coeffs[x & 7] * (float)perm[(x >> 4) & 15];
    out[8 * g + 1] = (float)e.tag + e.scale * (float)e.bias;
    out[8 * g + 2] = c.x + 2.0f * c.y + 4.0f * c.w;
    out[8 * g + 3] = (float)bytes[(uint)x % 13u] + (float)zeros[x & 63];
    out[8 * g + 4] = (float)(weights[(uint)x % 3u] * (double)in[g]);
    out[8 * g + 5] = lookup(perm, x >> 9) + (float)lut[(uint)x % 6u];
    out[8 * g + 6] = coeffs[n & 7] + (float)perm[n] + (float)lut[n];
    out[8 * g + 7] = lookup(perm, n + (int)g);
}
