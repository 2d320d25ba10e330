// Conversions with rounding modes and saturation: convert_int_rte/rtp/rtn/rtz
// of floats (FPRoundingMode), the _sat forms of integer and float-to-integer
// conversions (SaturatedConversion, OpSatConvertSToU/UToS), and convert_double4.
// clang-22 writes convert_char_sat of a signed int as OpSatConvertUToS, which
// SPIR-V defines to read the source as unsigned (docs/spirv.md); the char
// conversion here has an unsigned source.
// launch: --grid 128 --block 64 --buffer x=f32:iota:128 --buffer y=i32:iota:128 --buffer o=i32:zero:1280 --buffer d=f64:zero:512 --arg x=@x --arg y=@y --arg o=@o --arg d=@d
#include "spirv.h"
__kernel void conversions(__global const float *x, __global const int *y, __global int *o, __global double *d) {
    size_t i = get_global_id(0);
    float f = (x[i] - 64.0f) * 0.75f;
    int v = (y[i] - 64) * 37000000 + (int)i * 3;
    __global int *r = o + 10 * i;
    r[0] = convert_int_rte(f);
    r[1] = convert_int_rtp(f);
    r[2] = convert_int_rtn(f);
    r[3] = convert_int_rtz(f);
    r[4] = convert_uchar_sat(v >> 20);
    r[5] = convert_char_sat((uint)v >> 21);
    r[6] = (int)convert_uint_sat(v);
    r[7] = convert_short_sat((uint)v >> 12);
    r[8] = convert_int_sat(f * 1e8f);
    r[9] = convert_int_sat(f * 3e7f);
    float4 q = (float4)(f, f * 2.0f, -f, 1.0f / (f + 0.1f));
    vstore4(convert_double4(q), i, d);
}
