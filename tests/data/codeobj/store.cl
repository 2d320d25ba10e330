// The kernel tests/codeobj_compare.rs builds with clang-22 + ld.lld-22 to compare
// the structure of LLVM's .hsaco with ours for the same kernel (support/codeobj.rs
// `store`: *out = v, kernarg 12 bytes, no hidden arguments).
kernel void store(global int *out, int v) { out[0] = v; }
