// Program-scope __global variables (OpenCL 2.0): initialised scalars,
// arrays, a struct and a double (.data), zero-initialised ones (.bss), a
// function-scope static, each read and written by the kernel, through a
// device function and through generic pointers. Work-items write only
// their own elements of `slots` before the barrier and read a neighbour's
// after it; `total` is one atomic counter whose last arrival writes the sum.
// launch: --grid 256 --block 64 --buffer in=i32:iota:256 --buffer out=i32:zero:1024 --arg in=@in --arg out=@out
// launch: --grid 64 --block 32 --buffer in=i32:fill:7:64 --buffer out=i32:zero:256 --arg in=@in --arg out=@out
#include "spirv.h"
typedef struct { int count; float weight; short tag; } Stats;

__global int bias[4] = {100, -200, 300, -400};
__global float scale = 2.5f;
__global Stats stats = {3, 0.75f, -9};
__global double ratio = 0.125;
__global int slots[256];
__global long long_slots[256];
__global uint total;

int through_generic(int *p, int v) { return *p + v; }

void remember(int g, int v) {
    slots[g] = v;
    long_slots[g] = (long)v * 3000000000L;
}

__kernel void program_globals(__global const int *in, __global int *out) {
    static __global int calls = 5;
    int g = (int)get_global_id(0);
    int n = (int)get_global_size(0);
    int x = in[g];
    remember(g, x * 3 + bias[g & 3]);
    barrier(CLK_GLOBAL_MEM_FENCE);
    int neighbour = slots[g ^ 1];
    long wide = long_slots[g ^ 1];
    out[4 * g + 0] = neighbour + (int)(scale * (float)x) + through_generic(&bias[(g >> 2) & 3], calls);
    out[4 * g + 1] = (int)(wide >> 20) + stats.count * stats.tag + (int)(stats.weight * 8.0f);
    out[4 * g + 2] = (int)((double)x * ratio * 64.0);
    // Every work-item adds x + 2^20; the one that sees n - 1 arrivals
    // before it holds the final sum and writes it.
    uint old = atomic_add(&total, (uint)x + (1u << 20));
    out[4 * g + 3] = (old >> 20) == (uint)(n - 1) ? (int)(old + (uint)x + (1u << 20)) : -1;
}
