// OpenCL 2.0 atomics through generic pointers whose address space is known
// only when the kernel runs: FLAT atomics. A device function kept out of
// line takes a generic `atomic_int *` and is called with global and local
// objects; the kernel picks global or local memory per work-item (even
// items count in global memory, odd ones in LDS: one atomic instruction
// reaches both) and by an argument. Results that do not depend on the order
// work-items arrive in: counts, maxima, minima, bits, per-item
// compare-exchanges and exchanges, 64-bit sums.
// launch: --grid 256 --block 64 --buffer counters=i32:zero:4 --buffer slots=i32:iota:256 --buffer wide=i64:zero:2 --buffer out=i32:zero:1024 --arg counters=@counters --arg slots=@slots --arg wide=@wide --arg out=@out --arg which=1
#include "spirv.h"

__attribute__((noinline)) int bump(atomic_int *p, int v) {
    return atomic_fetch_add_explicit(p, v, memory_order_relaxed, memory_scope_device);
}

__attribute__((noinline)) int swap_in(atomic_int *p, int expected, int desired) {
    int e = expected;
    int won = atomic_compare_exchange_strong_explicit(p, &e, desired, memory_order_seq_cst, memory_order_relaxed, memory_scope_device);
    return won + 2 * (e == expected);
}

__kernel void atomics_generic(__global atomic_int *counters, __global atomic_int *slots, __global atomic_long *wide, __global int *out, int which) {
    __local atomic_int local_counters[4];
    __local atomic_int local_slots[64];
    int i = (int)get_global_id(0);
    int l = (int)get_local_id(0);
    if (l < 4) {
        atomic_store_explicit(&local_counters[l], 100 * l, memory_order_relaxed, memory_scope_work_group);
    }
    atomic_store_explicit(&local_slots[l], l, memory_order_relaxed, memory_scope_work_group);
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_int *mine = (i & 1) ? (atomic_int *)&local_counters[0] : (atomic_int *)&counters[0];
    bump(mine, 1 + (i & 1));
    atomic_int *chosen = which ? (atomic_int *)&counters[1] : (atomic_int *)&local_counters[1];
    atomic_fetch_max_explicit(chosen, (i * 37) % 251, memory_order_relaxed, memory_scope_device);
    atomic_int *bits = (i & 2) ? (atomic_int *)&counters[2] : (atomic_int *)&local_counters[2];
    atomic_fetch_or_explicit(bits, 1 << (i % 29), memory_order_acq_rel, memory_scope_device);
    atomic_fetch_min_explicit(which ? (atomic_int *)&local_counters[3] : (atomic_int *)&counters[3], -(i % 97), memory_order_relaxed, memory_scope_work_group);
    atomic_long *w = (atomic_long *)&wide[i & 1];
    atomic_fetch_add_explicit(w, (long)i << 33, memory_order_relaxed, memory_scope_device);
    // slots[i] and local_slots[l] start at i and l: the first exchange wins,
    // the second loses.
    atomic_int *slot = (i & 4) ? (atomic_int *)&local_slots[l] : (atomic_int *)&slots[i];
    int start = (i & 4) ? l : i;
    int first = swap_in(slot, start, i + 1000);
    int second = swap_in(slot, start, -1);
    int old = atomic_exchange_explicit(slot, i * 3, memory_order_relaxed, memory_scope_device);
    barrier(CLK_LOCAL_MEM_FENCE);
    out[4 * i] = first + 4 * second + 16 * (old == i + 1000);
    out[4 * i + 1] = atomic_load_explicit(&local_slots[l], memory_order_relaxed, memory_scope_work_group);
    if (l < 4) {
        out[4 * i + 2] = atomic_load_explicit(&local_counters[l], memory_order_relaxed, memory_scope_work_group);
    }
}
