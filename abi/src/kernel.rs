//! The initial execution state of a kernel: which user and system SGPRs and
//! work-item id VGPRs the hardware (command processor / SPI) sets up, per target.
//! Facts from AMDGPUUsage ("Initial Kernel Execution State") and measured with
//! llc-22 (docs/abi.md, "Kernel ABI").

use amdgpu_isa::target::{Gpu, Target, WaveSize};

/// What a kernel asks the hardware to set up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelInputs {
    pub dispatch_ptr: bool,
    pub queue_ptr: bool,
    pub kernarg_segment_ptr: bool,
    pub dispatch_id: bool,
    /// Flat scratch init (only meaningful on buffer-scratch targets, i.e. gfx90a).
    pub flat_scratch_init: bool,
    pub private_segment_size: bool,
    /// Dwords of kernarg preloaded into user SGPRs (gfx90a, gfx942 only).
    pub preload_kernarg_dwords: u8,
    pub workgroup_id_x: bool,
    pub workgroup_id_y: bool,
    pub workgroup_id_z: bool,
    pub workgroup_info: bool,
    /// The kernel uses scratch (stack, spills, calls).
    pub uses_scratch: bool,
    /// Highest work-item id dimension used: 0 = X, 1 = X,Y, 2 = X,Y,Z.
    pub workitem_id_dims: u8,
}

impl KernelInputs {
    /// Everything on (what a kernel with calls to unknown functions needs).
    pub fn all() -> KernelInputs {
        KernelInputs {
            dispatch_ptr: true,
            queue_ptr: true,
            kernarg_segment_ptr: true,
            dispatch_id: true,
            flat_scratch_init: true,
            private_segment_size: false,
            preload_kernarg_dwords: 0,
            workgroup_id_x: true,
            workgroup_id_y: true,
            workgroup_id_z: true,
            workgroup_info: false,
            uses_scratch: true,
            workitem_id_dims: 2,
        }
    }
}

/// A kind of initial SGPR value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SgprInput {
    PrivateSegmentBuffer,
    DispatchPtr,
    QueuePtr,
    KernargSegmentPtr,
    DispatchId,
    FlatScratchInit,
    PrivateSegmentSize,
    /// Preloaded kernarg dwords.
    KernargPreload,
    WorkgroupIdX,
    WorkgroupIdY,
    WorkgroupIdZ,
    WorkgroupInfo,
    PrivateSegmentWaveOffset,
}

impl SgprInput {
    pub fn name(self) -> &'static str {
        match self {
            SgprInput::PrivateSegmentBuffer => "private_segment_buffer",
            SgprInput::DispatchPtr => "dispatch_ptr",
            SgprInput::QueuePtr => "queue_ptr",
            SgprInput::KernargSegmentPtr => "kernarg_segment_ptr",
            SgprInput::DispatchId => "dispatch_id",
            SgprInput::FlatScratchInit => "flat_scratch_init",
            SgprInput::PrivateSegmentSize => "private_segment_size",
            SgprInput::KernargPreload => "kernarg_preload",
            SgprInput::WorkgroupIdX => "workgroup_id_x",
            SgprInput::WorkgroupIdY => "workgroup_id_y",
            SgprInput::WorkgroupIdZ => "workgroup_id_z",
            SgprInput::WorkgroupInfo => "workgroup_info",
            SgprInput::PrivateSegmentWaveOffset => "private_segment_wave_offset",
        }
    }
}

/// One initial SGPR value: `count` SGPRs starting at `first`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SgprSlot {
    pub input: SgprInput,
    pub first: u16,
    pub count: u16,
}

/// Where the work-item ids arrive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkitemIds {
    /// Packed into v0 (X 9:0, Y 19:10, Z 29:20) rather than v0, v1, v2.
    pub packed: bool,
    /// Dimensions enabled (1..=3).
    pub dims: u8,
}

impl WorkitemIds {
    /// VGPR holding dimension `dim` (0..3), and the bit offset inside it.
    pub fn location(self, dim: u8) -> Option<(u16, u32)> {
        (dim < self.dims).then(|| if self.packed { (0, 10 * u32::from(dim)) } else { (u16::from(dim), 0) })
    }
}

/// The initial kernel execution state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InitialState {
    pub user_sgprs: Vec<SgprSlot>,
    /// `USER_SGPR_COUNT` (compute_pgm_rsrc2), including gfx1100 wave32 padding.
    pub user_sgpr_count: u16,
    pub system_sgprs: Vec<SgprSlot>,
    pub workitem_ids: WorkitemIds,
    /// Kernarg dwords actually preloaded (limited by the 16 user SGPRs).
    pub kernarg_preload_dwords: u16,
    /// `ENABLE_PRIVATE_SEGMENT`: the private segment (scratch) is enabled.
    pub private_segment: bool,
}

impl InitialState {
    /// The slot of `input`, user or system.
    pub fn slot(&self, input: SgprInput) -> Option<SgprSlot> {
        self.user_sgprs.iter().chain(&self.system_sgprs).copied().find(|s| s.input == input)
    }

    /// First SGPR after all initial SGPRs.
    pub fn next_free_sgpr(&self) -> u16 {
        self.system_sgprs.last().map_or(self.user_sgpr_count, |s| s.first + s.count)
    }
}

/// Maximum number of user SGPRs.
pub const MAX_USER_SGPRS: u16 = 16;

/// gfx1100 (and gfx1102) in wave32 need user + system SGPRs to be at least 16
/// (LLVM `FeatureUserSGPRInit16Bug`), so the user SGPR count is padded.
pub fn has_user_sgpr_init16_bug(target: Target) -> bool {
    target.gpu == Gpu::Gfx1100 && target.wave == WaveSize::W32
}

/// The initial state of a kernel with `inputs` on `target`.
pub fn initial_state(target: Target, inputs: &KernelInputs) -> InitialState {
    let flat = target.gpu.has_architected_flat_scratch();
    let mut user = Vec::new();
    let mut next: u16 = 0;
    let push = |list: &mut Vec<SgprSlot>, input, count: u16, next: &mut u16| {
        list.push(SgprSlot { input, first: *next, count });
        *next += count;
    };
    // Buffer-scratch targets always get the scratch V# (LLVM enables it for every
    // kernel there); architected flat scratch has none.
    if !flat {
        push(&mut user, SgprInput::PrivateSegmentBuffer, 4, &mut next);
    }
    let preload_supported = matches!(target.gpu, Gpu::Gfx90a | Gpu::Gfx942);
    let kernarg = inputs.kernarg_segment_ptr || (preload_supported && inputs.preload_kernarg_dwords > 0);
    for (on, input, count) in [
        (inputs.dispatch_ptr, SgprInput::DispatchPtr, 2),
        (inputs.queue_ptr, SgprInput::QueuePtr, 2),
        (kernarg, SgprInput::KernargSegmentPtr, 2),
        (inputs.dispatch_id, SgprInput::DispatchId, 2),
        (inputs.flat_scratch_init && !flat, SgprInput::FlatScratchInit, 2),
        (inputs.private_segment_size, SgprInput::PrivateSegmentSize, 1),
    ] {
        if on {
            push(&mut user, input, count, &mut next);
        }
    }
    let mut preload = 0;
    if preload_supported && inputs.preload_kernarg_dwords > 0 {
        preload = u16::from(inputs.preload_kernarg_dwords).min(MAX_USER_SGPRS.saturating_sub(next));
        if preload > 0 {
            push(&mut user, SgprInput::KernargPreload, preload, &mut next);
        }
    }
    let mut system_inputs = Vec::new();
    for (on, input) in [
        (inputs.workgroup_id_x, SgprInput::WorkgroupIdX),
        (inputs.workgroup_id_y, SgprInput::WorkgroupIdY),
        (inputs.workgroup_id_z, SgprInput::WorkgroupIdZ),
        (inputs.workgroup_info, SgprInput::WorkgroupInfo),
        (inputs.uses_scratch && !flat, SgprInput::PrivateSegmentWaveOffset),
    ] {
        if on {
            system_inputs.push(input);
        }
    }
    let mut user_sgpr_count = next;
    if has_user_sgpr_init16_bug(target) {
        user_sgpr_count = user_sgpr_count.max(16 - system_inputs.len() as u16);
    }
    let mut sys_next = user_sgpr_count;
    let mut system = Vec::new();
    for input in system_inputs {
        push(&mut system, input, 1, &mut sys_next);
    }
    InitialState {
        user_sgprs: user,
        user_sgpr_count,
        system_sgprs: system,
        workitem_ids: WorkitemIds { packed: true, dims: inputs.workitem_id_dims.min(2) + 1 },
        kernarg_preload_dwords: preload,
        private_segment: inputs.uses_scratch,
    }
}
