// OpenCL printf (src/spirv/printf.rs): records of several shapes in
// divergent code; each work-item stores what printf returned. (clang-22's
// SPIR-V back end stops on printf in a function that is not inlined: it
// wants SPV_EXT_relaxed_printf_string_address_space there.)
#include "../spirv.h"

#ifndef __SPIRV__
// For clang's amdgcn build without ROCm's device library: the runtime's
// contract for the buffer (a header of the bytes used after it and the
// buffer's size; a record is reserved only if it fits), written here.
__global char *__printf_alloc(uint bytes) {
    __global char *buffer = (__global char *)((__constant size_t *)__builtin_amdgcn_implicitarg_ptr())[9];
    __global atomic_uint *used = (__global atomic_uint *)buffer;
    uint size = ((__global uint *)buffer)[1];
    uint seen = __opencl_atomic_load(used, memory_order_relaxed, memory_scope_device);
    while (8 + seen + bytes <= size) {
        if (__opencl_atomic_compare_exchange_strong(used, &seen, seen + bytes, memory_order_relaxed, memory_order_relaxed, memory_scope_device))
            return buffer + 8 + seen;
    }
    return 0;
}
#endif

__kernel void printing(__global const int *a, float f, __global int *status) {
    int i = get_global_id(0);
    int v = a[i];
    int r = printf("item %d: a=%d f=%.3f s=%s %%\n", i, v, f * (float)i, "str");
    if (v % 3 == 0)
        r += 2 * printf("%ld %lu %x %c %10.4e|\n", (long)v * 1000000007L, (ulong)i * 3UL, v, 'A' + i % 26, (double)v / 7.0);
    if (i % 16 == 5)
        r += 4 * printf("vector %v4d at %p\n", (int4)(i, v, -i, -v), a);
    if (v > 40)
        r += 8 * printf("over 40: %d -> %d (%s)\n", i, v, "big");
    status[i] = r;
}
