// Program-scope pointers initialised with addresses (OpenCL 2.0): a
// pointer into a __global array, arrays of pointers (into an array, to
// scalars; clang-22 writes an invalid composite when the first of
// `{&table[0], &table[3]}` is the array itself), a struct holding a
// pointer after an int, a pointer to __constant data, a generic pointer, a
// __constant pointer to __constant data (read-only data holding an address:
// .data.rel.ro). (A variable holding its own address, `void *self = &self`,
// crashes clang-22's SPIR-V backend; tests/data/codegen/module_addresses.mir
// has one.) The loader writes the addresses
// (R_AMDGPU_RELATIVE64). Work-items read through every one (the generic
// pointer cast back to __global: clang-22's gfx1100 code for a flat load
// there relies on FLAT and global loads counting in order, which the
// simulator's strictest-order waitcnt model does not grant); after a
// barrier, work-item 0 re-points `p` and stores through `gen`, which the
// next launch of the same loaded code object would see.
// launch: --grid 64 --block 64 --buffer out=i32:zero:256 --arg out=@out
#include "spirv.h"

__global int table[4] = {10, 20, 30, 40};
__global int *p = &table[2];
__constant int ctab[3] = {7, 8, 9};
__constant int *cp = &ctab[1];
__global int *ptrs[2] = {&table[1], &table[3]};
__global int a0 = 1, a1 = 2;
__global int *scalars[2] = {&a0, &a1};
struct S { int a; __global int *q; };
__global struct S s = {5, &table[1]};
int *gen = &table[3];
__constant int *__constant ccp = &ctab[2];

__kernel void global_pointers(__global int *out) {
    int i = (int)get_global_id(0);
    int l = (int)get_local_id(0);
    out[2 * i] = *p + *cp + *ptrs[i & 1] + s.a + *s.q + ((__global int *)gen)[0] + *ccp + ctab[(l >> 1) & 1];
    out[2 * i + 1] = *scalars[i & 1] + 10 * (*ptrs[1] - *ptrs[0]);
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (i == 0) {
        p = &table[3];
        *gen = 41;
    }
}
