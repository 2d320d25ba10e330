// What the OpenCL library would provide, from clang's AMDGPU builtins (the
// benchmarks and tests compile with -nogpulib, so no device library is linked).
#define LOCAL_ID_X() ((int)__builtin_amdgcn_workitem_id_x())
#define LOCAL_ID_Y() ((int)__builtin_amdgcn_workitem_id_y())
#define GROUP_ID_X() ((int)__builtin_amdgcn_workgroup_id_x())
#define GROUP_ID_Y() ((int)__builtin_amdgcn_workgroup_id_y())
#define LOCAL_SIZE_X() ((int)__builtin_amdgcn_workgroup_size_x())
#define BARRIER()                                              \
    do {                                                       \
        __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup"); \
        __builtin_amdgcn_s_barrier();                          \
        __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup"); \
    } while (0)
