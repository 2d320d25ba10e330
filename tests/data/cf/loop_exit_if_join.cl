// OpenCL C twin of loop_exit_if_join.mir (same computation, same buffers and
// arguments): a loop exit that is also an enclosing if's join.
// No device library is linked (-nogpulib): the work-item functions come from
// clang's AMDGPU builtins (dimension 0 only). Unsigned arithmetic wraps like MIR's.
#define get_local_id(d) __builtin_amdgcn_workitem_id_x()
#define get_group_id(d) __builtin_amdgcn_workgroup_id_x()
#define get_local_size(d) ((uint)__builtin_amdgcn_workgroup_size_x())
#define GLOBAL_ID() (get_group_id(0) * get_local_size(0) + get_local_id(0))

__kernel void k(__global uint *out) {
    uint g = GLOBAL_ID();
    uint r = (uint)-5;
    if (g % 7 < 4) {
        uint t = g & 7;
        out[2 * g + 1] = t;
        uint acc = g;
        for (uint i = 0; i < t; i++)
            acc += i * 3;
        r = acc;
    }
    out[2 * g] = r;
}
