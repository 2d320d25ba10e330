// OpenCL C twin of if_divergent_in_uniform.mir (same computation, same buffers and
// arguments): a divergent if inside a uniform if.
// No device library is linked (-nogpulib): the work-item functions come from
// clang's AMDGPU builtins (dimension 0 only). Unsigned arithmetic wraps like MIR's.
#define get_local_id(d) __builtin_amdgcn_workitem_id_x()
#define get_group_id(d) __builtin_amdgcn_workgroup_id_x()
#define get_local_size(d) ((uint)__builtin_amdgcn_workgroup_size_x())
#define GLOBAL_ID() (get_group_id(0) * get_local_size(0) + get_local_id(0))

__kernel void k(__global uint *out, uint u) {
    uint g = GLOBAL_ID(), wg = get_group_id(0);
    __global uint *p1 = out + 3 * g + 1;
    uint r;
    if (wg == u) {
        uint d;
        if (g & 2) { d = g * 7; *p1 = d; }
        else { d = 0 - g; *p1 = d; }
        r = d + 3;
    } else {
        out[3 * g + 2] = g;
        r = (uint)-2;
    }
    out[3 * g] = r;
}
