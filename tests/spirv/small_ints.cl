// char and short arithmetic with wrapping, sign extension and conversions.
// launch: --grid 64 --block 64 --buffer in=i8:iota:64 --buffer out=i16:zero:256 --arg in=@in --arg out=@out
#include "spirv.h"
__kernel void small_ints(__global const char *in, __global short *out) {
    size_t i = get_global_id(0);
    char c = in[i] * 5;
    uchar u = (uchar)c + 200;
    short s = (short)c * 300;
    out[4 * i] = c;
    out[4 * i + 1] = u;
    out[4 * i + 2] = s >> 3;
    out[4 * i + 3] = (ushort)s / 7;
}
