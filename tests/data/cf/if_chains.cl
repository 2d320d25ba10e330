// OpenCL C twin of if_chains.mir (same computation, same buffers and
// arguments): if-chains whose sides reach the join through several blocks.
#include "twin.h"

__kernel void k(__global uint *out) {
    uint g = GLOBAL_ID();
    uint r;
    if ((g & 1) == 0) {
        uint x = g * 5, tv;
        if (g % 3 == 0) {
            tv = x + 1000;
            out[3 * g + 2] = tv;
        } else {
            uint b = x - 7;
            tv = (g & 4) ? b ^ 255 : b;
        }
        r = tv * 2;
    } else {
        uint z = g * g;
        uint z1 = z + 11;
        r = z1 >> 1;
    }
    out[3 * g] = r;
    uint m5 = g % 5, s;
    if (m5 == 0)
        s = r + 1;
    else if (m5 == 1)
        s = r * 3;
    else if (m5 < 4)
        s = r - m5;
    else
        s = (uint)-1;
    out[3 * g + 1] = s;
}
