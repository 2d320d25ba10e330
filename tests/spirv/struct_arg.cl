// A struct passed to the kernel by value, and one read through a pointer.
// launch: --grid 64 --block 64 --buffer recs=i32:iota:192 --buffer out=f32:zero:64 --arg p=i32:7,f32:1.5,i16:-3 --arg recs=@recs --arg out=@out
#include "spirv.h"
typedef struct { int a; float b; short c; } Params;
typedef struct { int x, y, z; } Rec;
__kernel void struct_arg(Params p, __global const Rec *recs, __global float *out) {
    size_t i = get_global_id(0);
    Rec r = recs[i];
    out[i] = (r.x * p.a + r.y - r.z) * p.b + p.c;
}
