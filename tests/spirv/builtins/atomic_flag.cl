// OpenCL 2.0's atomic_flag (OpAtomicFlagTestAndSet / OpAtomicFlagClear) on
// global and local flags: each work-item owns one flag of each, so the
// results do not depend on the order work-items arrive in: the first
// test-and-set finds it clear, the second set, and after a clear the third
// finds it clear again.
// launch: --grid 128 --block 64 --buffer flags=i32:zero:128 --buffer out=i32:zero:128 --arg flags=@flags --arg out=@out
#include "spirv.h"
__kernel void atomic_flag_kernel(__global atomic_flag *flags, __global int *out) {
    __local atomic_flag mine[64];
    int i = (int)get_global_id(0);
    int l = (int)get_local_id(0);
    atomic_flag_clear_explicit(&mine[l], memory_order_relaxed, memory_scope_work_group);
    int r = 0;
    r |= atomic_flag_test_and_set_explicit(&flags[i], memory_order_acquire, memory_scope_device);
    r |= atomic_flag_test_and_set_explicit(&flags[i], memory_order_acq_rel, memory_scope_device) << 1;
    atomic_flag_clear_explicit(&flags[i], memory_order_release, memory_scope_device);
    r |= atomic_flag_test_and_set_explicit(&flags[i], memory_order_relaxed, memory_scope_device) << 2;
    r |= atomic_flag_test_and_set_explicit(&mine[l], memory_order_relaxed, memory_scope_work_group) << 3;
    r |= atomic_flag_test_and_set_explicit(&mine[l], memory_order_relaxed, memory_scope_work_group) << 4;
    out[i] = r;
}
