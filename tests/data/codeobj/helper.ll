; A device function for the link test (tests/codeobj_link.rs): our relocatable
; object's `caller` kernel calls `helper`, which llc-22 compiles here. Hidden, as
; clang makes device functions (-fvisibility=hidden).
define hidden void @helper() {
  ret void
}

; A second kernel from LLVM, so that the linked object mixes LLVM's kernels and ours.
define amdgpu_kernel void @llvm_kernel(ptr addrspace(1) %out) #0 {
  store i32 42, ptr addrspace(1) %out
  ret void
}

attributes #0 = { "amdgpu-no-implicitarg-ptr" "amdgpu-no-dispatch-ptr" "amdgpu-no-queue-ptr" "amdgpu-no-dispatch-id" "amdgpu-no-workitem-id-y" "amdgpu-no-workitem-id-z" "amdgpu-no-workgroup-id-y" "amdgpu-no-workgroup-id-z" "amdgpu-flat-work-group-size"="1,256" }
