// Structs that clang-22 types with an array member, passed by value: tail
// padding (`[N x i8]` after the last field), a real array field, and a
// struct holding one of those, to device functions kept out of line and as
// a kernel argument. MIR has no array values: the array members travel as
// one field per element (docs/spirv.md, "Types").
// launch: --grid 64 --block 64 --buffer in=i32:iota:64 --buffer out=f32:zero:128 --arg w=f32:0.5,f32:2,f32:-1,i32:3 --arg in=@in --arg out=@out
#include "spirv.h"
typedef struct { int4 a; float b; char c; } Padded;
typedef struct { float w[3]; int n; } Weights;
typedef struct { Padded p; int tag; Weights q; } Nested;

__attribute__((noinline)) float padded_total(Padded s) {
    int n = s.a.x + s.a.y * 2 + s.a.z * 3 + s.a.w * 4 + s.c;
    return n + s.b;
}

__attribute__((noinline)) float weigh(Weights q, float x) {
    return (q.w[0] * x + q.w[1]) * x + q.w[2] * q.n;
}

__attribute__((noinline)) float nested_total(Nested s, int i) {
    return padded_total(s.p) - s.tag + weigh(s.q, (float)i);
}

__kernel void struct_padding(Weights w, __global const int *in, __global float *out) {
    int i = (int)get_global_id(0);
    Padded s = { (int4)(in[i], i, 2 * i, 7), 0.5f * i, (char)in[(i + 7) & 63] };
    Nested n = { s, i * 3, w };
    n.q.w[i % 3] += 1.0f;
    out[2 * i] = padded_total(s) + weigh(w, (float)in[i]);
    out[2 * i + 1] = nested_total(n, i);
}
