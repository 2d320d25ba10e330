// clang builtins that become core SPIR-V instructions: checked arithmetic
// (__builtin_*_overflow: OpIAddCarry, OpISubBorrow, OpUMulExtended and
// OpSMulExtended on 32 and 64 bits) and __builtin_popcount/parity
// (OpBitCount). (Signed
// addition and subtraction are left out: clang-22's SPIR-V back end cannot
// select them. Its signed multiplication reports overflow when the high half
// is not zero, which is wrong for negative products, so the signed operands
// here are not negative.)
// launch: --grid 64 --block 64 --buffer x=i64:iota:64 --buffer out=i64:zero:1280 --arg x=@x --arg out=@out
#include "spirv.h"
__kernel void clang_builtins(__global const long *x, __global long *out) {
    size_t i = get_global_id(0);
    long a = (x[i] - 31) * 0x0123456789abcdefL;
    long b = (x[i] ^ 0x2a) * -0x7edcba9876543210L;
    __global long *o = out + 20 * i;
    ulong ur; long sr; uint u32; int s32;
    o[0] = __builtin_add_overflow((ulong)a, (ulong)b, &ur);
    o[1] = ur;
    o[2] = __builtin_sub_overflow((ulong)a, (ulong)b, &ur);
    o[3] = ur;
    o[4] = __builtin_mul_overflow((ulong)a, (ulong)b, &ur);
    o[5] = ur;
    o[6] = __builtin_mul_overflow(a & 0x7fffffffffffffffL, (b & 0x7fffffffffffffffL) >> (i & 63), &sr);
    o[7] = sr;
    o[8] = __builtin_add_overflow((uint)a, (uint)b, &u32);
    o[9] = u32;
    o[10] = __builtin_mul_overflow((uint)a >> (i & 31), (uint)b, &u32);
    o[11] = u32;
    o[12] = __builtin_mul_overflow((int)a & 0x7fffffff, (int)(b >> 40) & 0x7fffffff, &s32);
    o[13] = s32;
    o[14] = __builtin_sub_overflow((uint)a, (uint)(b >> (i & 31)), &u32);
    o[15] = u32;
    o[16] = __builtin_popcount((uint)a);
    o[17] = __builtin_popcountl(b);
    o[18] = __builtin_parityl(a ^ b);
    o[19] = __builtin_parity((uint)b);
}
