// An 8 x 8 register tile per work-item, as in tuned matrix multiplies: 64
// accumulators and 16 operands live in the k loop. Written out with macros
// (clang's SPIR-V target neither unrolls nor promotes a private acc[8][8]).
// launch: --grid 4,4 --block 4,4 --buffer a=f32:iota:1024 --buffer b=f32:fill:0.5:1024 --buffer c=f32:zero:1024 --arg a=@a --arg b=@b --arg c=@c --arg n=32
#include "spirv.h"
#define ROW(r) float c##r##0 = 0, c##r##1 = 0, c##r##2 = 0, c##r##3 = 0, c##r##4 = 0, c##r##5 = 0, c##r##6 = 0, c##r##7 = 0;
#define MAC(r) { float x = a[(i + r) * n + k]; c##r##0 += x * b0; c##r##1 += x * b1; c##r##2 += x * b2; c##r##3 += x * b3; c##r##4 += x * b4; c##r##5 += x * b5; c##r##6 += x * b6; c##r##7 += x * b7; }
#define OUT(r) { __global float *o = c + (i + r) * n + j; o[0] = c##r##0; o[1] = c##r##1; o[2] = c##r##2; o[3] = c##r##3; o[4] = c##r##4; o[5] = c##r##5; o[6] = c##r##6; o[7] = c##r##7; }
__kernel void register_tile(__global const float *a, __global const float *b, __global float *c, int n) {
    int i = get_global_id(1) * 8, j = get_global_id(0) * 8;
    ROW(0) ROW(1) ROW(2) ROW(3) ROW(4) ROW(5) ROW(6) ROW(7)
    for (int k = 0; k < n; k++) {
        __global const float *bk = b + k * n + j;
        float b0 = bk[0], b1 = bk[1], b2 = bk[2], b3 = bk[3], b4 = bk[4], b5 = bk[5], b6 = bk[6], b7 = bk[7];
        MAC(0) MAC(1) MAC(2) MAC(3) MAC(4) MAC(5) MAC(6) MAC(7)
    }
    OUT(0) OUT(1) OUT(2) OUT(3) OUT(4) OUT(5) OUT(6) OUT(7)
}
