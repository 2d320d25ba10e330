// OpenCL.std mad_sat on 8- and 16-bit integers. clang-22's amdgcn code for
// it uses SDWA (gfx90a, gfx942) and v_cndmask_b16 (gfx1100), which the
// simulator does not decode: listed in SIMULATOR_GAPS (tests/spirv.rs).
// launch: --grid 64 --block 64 --buffer x=i32:iota:64 --buffer out=i32:zero:256 --arg x=@x --arg out=@out
#include "../spirv.h"
#ifndef __SPIRV__
#define OV static __attribute__((overloadable))
#define SAT_NARROW(T, W, LO, HI) OV T amd_mad_sat(T a, T b, T c) { W r = (W)a * (W)b + (W)c; return (T)(r < (W)(LO) ? (W)(LO) : r > (W)(HI) ? (W)(HI) : r); }
SAT_NARROW(short, int, SHRT_MIN, SHRT_MAX)
SAT_NARROW(ushort, int, 0, USHRT_MAX)
SAT_NARROW(char, int, CHAR_MIN, CHAR_MAX)
SAT_NARROW(uchar, uint, 0, UCHAR_MAX)
#define mad_sat amd_mad_sat
#endif

__kernel void sat_narrow(__global const int *x, __global int *out) {
    size_t i = get_global_id(0);
    int v = (x[i] - 30) * 0x01234567;
    __global int *o = out + 4 * i;
    o[0] = mad_sat((short)v, (short)(v >> 16), (short)(i * 1000));
    o[1] = mad_sat((ushort)v, (ushort)(v >> 20), (ushort)(i * 999));
    o[2] = mad_sat((char)v, (char)(v >> 8), (char)(i * 5 - 100));
    o[3] = mad_sat((uchar)v, (uchar)(v >> 8), (uchar)200);
}
