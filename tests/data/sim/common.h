// Work-item functions and synchronisation for kernels built with -nogpulib (no
// OpenCL device library): the clang builtins the device library would call.
static inline uint lid_x(void) { return __builtin_amdgcn_workitem_id_x(); }
static inline uint lid_y(void) { return __builtin_amdgcn_workitem_id_y(); }
static inline uint grp_x(void) { return __builtin_amdgcn_workgroup_id_x(); }
static inline uint grp_y(void) { return __builtin_amdgcn_workgroup_id_y(); }
static inline uint lsize_x(void) { return __builtin_amdgcn_workgroup_size_x(); }
static inline uint lsize_y(void) { return __builtin_amdgcn_workgroup_size_y(); }
static inline uint gid_x(void) { return grp_x() * lsize_x() + lid_x(); }
static inline uint gid_y(void) { return grp_y() * lsize_y() + lid_y(); }
static inline void wg_barrier(void) {
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
