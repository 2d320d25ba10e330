// Twin of examples/divergent_loop.mir.
#include "prelude.h"
__kernel void divergent_loop(__global const int *in, __global int *out) {
    int i = GROUP_ID_X() * LOCAL_SIZE_X() + LOCAL_ID_X();
    int x = in[i], acc = 0;
    for (int j = 0; j < (x & 15); j++) acc += (j & 1) ? j * x : -j;
    out[i] = acc;
}
