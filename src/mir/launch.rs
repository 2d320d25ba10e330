//! Launch descriptions for `amdgpu-cg run`: grid, buffers and arguments.
