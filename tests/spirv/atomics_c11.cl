// OpenCL 2.0's C11 atomics on __global and __local atomic_int / atomic_uint.
// Through SPIR-V they are library calls on generic pointers: clang-22 casts
// each pointer to generic (OpPtrCastToGeneric) before the OpAtomic*, and the
// front end uses the original global or local pointer (a global or LDS
// atomic, not a FLAT one; atomics_generic.cl has the FLAT ones). Results that do not depend on the order work-items arrive
// in: the counts, the maximum and minimum (clang-22's SPIR-V backend leaves
// atomic_fetch_min/max as calls: the front end translates them), the bits
// set, per-item compare-exchanges and
// exchanges, a work-group's local count.
// launch: --grid 256 --block 64 --buffer counters=i32:zero:4 --buffer slots=i32:iota:256 --buffer out=i32:zero:512 --arg counters=@counters --arg slots=@slots --arg out=@out
#include "spirv.h"

__kernel void atomics_c11(__global atomic_int *counters, __global atomic_int *slots, __global int *out) {
    __local atomic_int local_count;
    int i = (int)get_global_id(0);
    int l = (int)get_local_id(0);
    if (l == 0) {
        atomic_store_explicit(&local_count, 0, memory_order_relaxed, memory_scope_work_group);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_fetch_add_explicit(&counters[0], 1, memory_order_relaxed, memory_scope_device);
    atomic_fetch_max_explicit(&counters[1], (i * 37) % 251, memory_order_relaxed, memory_scope_device);
    atomic_fetch_or_explicit(&counters[2], 1 << (i % 29), memory_order_acq_rel, memory_scope_device);
    atomic_fetch_min(&counters[3], -(i % 97));
    atomic_fetch_add_explicit(&local_count, 2, memory_order_relaxed, memory_scope_work_group);
    // slots[i] starts at i: the first exchange succeeds, the second fails.
    int expected = i;
    int won = atomic_compare_exchange_strong_explicit(&slots[i], &expected, i + 1000, memory_order_seq_cst, memory_order_relaxed, memory_scope_device);
    int lost = atomic_compare_exchange_strong_explicit(&slots[i], &expected, -1, memory_order_seq_cst, memory_order_relaxed, memory_scope_device);
    int old = atomic_exchange_explicit(&slots[i], i * 3, memory_order_relaxed, memory_scope_device);
    barrier(CLK_LOCAL_MEM_FENCE);
    out[2 * i] = atomic_load_explicit(&local_count, memory_order_relaxed, memory_scope_work_group);
    out[2 * i + 1] = won + 2 * lost + 4 * (expected == i) + old * 8;
}
