// A loop with several values carried around it (OpPhi) and an early exit.
// launch: --grid 128 --block 64 --buffer out=i32:zero:256 --arg out=@out
#include "spirv.h"
__kernel void loop_phi(__global int *out) {
    int g = get_global_id(0);
    int a = g, b = 1, i = 0;
    while (i < (g & 15)) {
        int t = a + b;
        a = b * 3;
        b = t;
        if (t > 1000)
            break;
        i++;
    }
    out[2 * g] = a;
    out[2 * g + 1] = b + i;
}
