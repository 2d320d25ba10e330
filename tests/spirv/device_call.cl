// A device function that stays a call (noinline), with a private array.
// launch: --grid 64 --block 64 --buffer out=i32:zero:64 --arg out=@out
#include "spirv.h"
__attribute__((noinline)) int weigh(int x, int k) {
    int t[8];
    for (int j = 0; j < 8; j++)
        t[j] = x * j + k;
    int s = 0;
    for (int j = 0; j < 8; j += 1 + (x & 1))
        s += t[j];
    return s;
}
__kernel void device_call(__global int *out) {
    int g = get_global_id(0);
    out[g] = weigh(g, 3) - weigh(g >> 2, g);
}
