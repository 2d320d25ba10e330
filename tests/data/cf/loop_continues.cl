// OpenCL C twin of loop_continues.mir (same computation, same buffers and
// arguments): several back edges (continue) in one loop.
// No device library is linked (-nogpulib): the work-item functions come from
// clang's AMDGPU builtins (dimension 0 only). Unsigned arithmetic wraps like MIR's.
#define get_local_id(d) __builtin_amdgcn_workitem_id_x()
#define get_group_id(d) __builtin_amdgcn_workgroup_id_x()
#define get_local_size(d) ((uint)__builtin_amdgcn_workgroup_size_x())
#define GLOBAL_ID() (get_group_id(0) * get_local_size(0) + get_local_id(0))

__kernel void k(__global uint *out) {
    uint g = GLOBAL_ID();
    uint t = g % 13, i = 0, acc = g, n = 0;
    while (i < t) {
        uint i1 = i + 1;
        n++;
        if (i % 3 == 0) { acc += 1; i = i1; continue; }
        if ((g >> (i & 7)) & 1) { acc ^= i * 17; i = i1; continue; }
        acc += i * 10;
        i += 2;
    }
    out[2 * g] = acc;
    out[2 * g + 1] = n;
}
