// A switch with fall-through and a default (OpSwitch).
// launch: --grid 64 --block 64 --buffer out=i32:zero:64 --arg out=@out
#include "spirv.h"
__kernel void switch_cases(__global int *out) {
    int g = get_global_id(0);
    int r = 0;
    switch (g % 7) {
    case 0: r = 10; break;
    case 1: r = 20;
    case 2: r += 3; break;
    case 5: r = g * g; break;
    default: r = -g;
    }
    out[g] = r;
}
