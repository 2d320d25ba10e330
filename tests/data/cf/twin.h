// Shared by the OpenCL C twins of the control-flow shapes (NAME.cl).
// No device library is linked (-nogpulib): the work-item functions come from
// clang's AMDGPU builtins (dimension 0 only). Unsigned arithmetic wraps like MIR's.
// For SPIR-V (tests/spirv includes the twins) OpenCL's own functions serve.
#ifndef __SPIRV__
#define get_local_id(d) __builtin_amdgcn_workitem_id_x()
#define get_group_id(d) __builtin_amdgcn_workgroup_id_x()
#define get_local_size(d) ((uint)__builtin_amdgcn_workgroup_size_x())
#endif
#define GLOBAL_ID() (get_group_id(0) * get_local_size(0) + get_local_id(0))
