// OpenCL C twin of guard_preheader_join.mir (same computation, same buffers and
// arguments): guard, preheader, divergent loop whose exit is the guard's join.
// No device library is linked (-nogpulib): the work-item functions come from
// clang's AMDGPU builtins (dimension 0 only). Unsigned arithmetic wraps like MIR's.
#define get_local_id(d) __builtin_amdgcn_workitem_id_x()
#define get_group_id(d) __builtin_amdgcn_workgroup_id_x()
#define get_local_size(d) ((uint)__builtin_amdgcn_workgroup_size_x())
#define GLOBAL_ID() (get_group_id(0) * get_local_size(0) + get_local_id(0))

__kernel void k(__global uint *out, uint n) {
    uint lid = get_local_id(0);
    uint r = 0;
    if (lid < n) {
        uint i = lid, acc = 0;
        do {
            acc++;
            i += 8;
        } while (i < n);
        r = acc;
    }
    out[lid] = r;
}
