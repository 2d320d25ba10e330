// OpenCL C twin of guard_loop.mir (same computation, same buffers and
// arguments): a divergent guard straight into a divergent loop (the guarded grid-stride loop).
// No device library is linked (-nogpulib): the work-item functions come from
// clang's AMDGPU builtins (dimension 0 only). Unsigned arithmetic wraps like MIR's.
#define get_local_id(d) __builtin_amdgcn_workitem_id_x()
#define get_group_id(d) __builtin_amdgcn_workgroup_id_x()
#define get_local_size(d) ((uint)__builtin_amdgcn_workgroup_size_x())
#define GLOBAL_ID() (get_group_id(0) * get_local_size(0) + get_local_id(0))

__kernel void k(uint n, __global uint *out) {
    uint i = get_local_id(0);
    if (i < n) {
        uint j = i;
        do {
            out[j] = j;
            j += 64;
        } while (j < n);
    }
}
