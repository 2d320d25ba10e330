// OpenCL.std mad_sat (s_mad_sat, u_mad_sat) on 32- and 64-bit integers and
// on a vector (8 and 16 bits: sat_narrow.cl), shuffle and shuffle2 with masks known only at
// run time. For amdgcn, built without a device library, they are written
// here as OpenCL C defines them (128-bit arithmetic for the 64-bit mad_sat).
// launch: --grid 64 --block 64 --buffer x=i32:iota:64 --buffer out=i32:zero:1536 --buffer wide=i64:zero:256 --arg x=@x --arg out=@out --arg wide=@wide
#include "../spirv.h"
#ifndef __SPIRV__
#define OV static __attribute__((overloadable))
#define SAT_NARROW(T, W, LO, HI) OV T amd_mad_sat(T a, T b, T c) { W r = (W)a * (W)b + (W)c; return (T)(r < (W)(LO) ? (W)(LO) : r > (W)(HI) ? (W)(HI) : r); }
SAT_NARROW(int, long, INT_MIN, INT_MAX)
SAT_NARROW(uint, ulong, 0, UINT_MAX)
SAT_NARROW(short, int, SHRT_MIN, SHRT_MAX)
SAT_NARROW(uchar, uint, 0, UCHAR_MAX)
OV long amd_mad_sat(long a, long b, long c) {
    __int128 r = (__int128)a * (__int128)b + (__int128)c;
    return r < (__int128)LONG_MIN ? LONG_MIN : r > (__int128)LONG_MAX ? LONG_MAX : (long)r;
}
OV ulong amd_mad_sat(ulong a, ulong b, ulong c) {
    unsigned __int128 r = (unsigned __int128)a * (unsigned __int128)b + (unsigned __int128)c;
    return r > (unsigned __int128)ULONG_MAX ? ULONG_MAX : (ulong)r;
}
OV int4 amd_mad_sat(int4 a, int4 b, int4 c) {
    return (int4)(amd_mad_sat(a.x, b.x, c.x), amd_mad_sat(a.y, b.y, c.y), amd_mad_sat(a.z, b.z, c.z), amd_mad_sat(a.w, b.w, c.w));
}
#define mad_sat amd_mad_sat
#define shuffle amd_shuffle
#define shuffle2 amd_shuffle2
static int4 amd_shuffle(int8 x, uint4 m) {
    return (int4)(x[m.x & 7], x[m.y & 7], x[m.z & 7], x[m.w & 7]);
}
static int8 amd_shuffle2(int4 x, int4 y, uint8 m) {
    int8 xy = (int8)(x, y);
    return (int8)(xy[m.s0 & 7], xy[m.s1 & 7], xy[m.s2 & 7], xy[m.s3 & 7], xy[m.s4 & 7], xy[m.s5 & 7], xy[m.s6 & 7], xy[m.s7 & 7]);
}
#endif

__kernel void sat_shuffle(__global const int *x, __global int *out, __global long *wide) {
    size_t i = get_global_id(0);
    int v = (x[i] - 30) * 0x01234567;
    uint u = (uint)v;
    __global int *o = out + 24 * i;
    o[0] = mad_sat(v, v >> 8, 12345);
    o[1] = (int)mad_sat(u, u >> 20, 0xfffff000u);
    o[2] = mad_sat(v >> 16, v, (int)i << 24);
    o[3] = (int)mad_sat(u >> 1, 3u, u);
    int4 q = mad_sat((int4)(v, -v, v >> 12, (int)i), (int4)(v >> 3, v, 77, (int)i - 40), (int4)(-5, (int)i << 26, 3, 0));
    o[4] = q.x; o[5] = q.y; o[6] = q.z; o[7] = q.w;
    long l = (long)v * 0x123456789L;
    ulong ul = (ulong)l;
    __global long *w = wide + 4 * i;
    w[0] = mad_sat(l, (long)(v >> 4), -((long)x[i] << 56));
    w[1] = (long)mad_sat(ul, (ulong)u, ul);
    w[2] = mad_sat(l, (long)i - 32, l);
    w[3] = mad_sat((long)(v >> 8), (long)(v >> 9), (long)i);
    int8 a = (int8)(v, v + 1, -v, (int)i, v >> 3, 17, (int)u >> 5, 42);
    int4 s = shuffle(a, (uint4)(u, u >> 3, u >> 7, (uint)i));
    o[8] = s.x; o[9] = s.y; o[10] = s.z; o[11] = s.w;
    int8 s2 = shuffle2((int4)(v, -v, (int)(u >> 1), (int)i), (int4)(9, v ^ 0x5555, (int)i * 3, v >> 16), (uint8)(u, u >> 2, u >> 5, u >> 9, (uint)i, (uint)i >> 1, u >> 13, u >> 17));
    o[12] = s2.s0; o[13] = s2.s1; o[14] = s2.s2; o[15] = s2.s3;
    o[16] = s2.s4; o[17] = s2.s5; o[18] = s2.s6; o[19] = s2.s7;
}
