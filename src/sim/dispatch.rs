//! The initial kernel execution state, as the ROCm runtime and the hardware set it
//! up: user and system SGPRs in the order the kernel descriptor enables them, the
//! packed work-item ids in v0, EXEC, the scratch resource, the dispatch packet and
//! the hidden kernel arguments.

use amdgpu_abi::descriptor::{KernelDescriptor, WorkitemIdDims};

use crate::codeobj::metadata::{HiddenArg, KernelMetadata, ValueKind};

use super::state::Wave;

/// Device-side objects of one dispatch.
#[derive(Clone, Debug)]
pub struct DispatchInfo {
    pub packet: u64,
    pub queue: u64,
    pub kernarg: u64,
    pub dispatch_id: u64,
    /// Base of the scratch area (the private segment buffer's base address).
    pub scratch_root: u64,
    /// Bytes of private memory per lane.
    pub lane_size: u64,
}

/// (VGPRs, AGPRs, SGPRs) a wave may use, from the descriptor's granulated counts:
/// gfx90a/gfx942 allocate `(g+1)*8` unified registers, VGPRs below `accum_offset`
/// and AGPRs from there; gfx1100 `(g+1)*8` VGPRs in wave32 and `(g+1)*4` in wave64.
/// SGPRs: gfx9 `(g+1)*8` (the count includes VCC, XNACK and FLAT_SCRATCH at the
/// top, which are addressed by their own codes here); gfx11 allocates all 106.
pub fn register_limits(kd: &KernelDescriptor, target: amdgpu_isa::Target) -> (u16, u16, u16) {
    use amdgpu_abi::descriptor::ComputePgmRsrc3;
    let r1 = kd.compute_pgm_rsrc1;
    let g = r1.granulated_workitem_vgpr_count as u16 + 1;
    match (target.gpu.generation(), kd.compute_pgm_rsrc3) {
        (amdgpu_isa::Generation::Gfx9, ComputePgmRsrc3::Gfx9 { accum_offset, .. }) => {
            let total = (g * 8).min(512);
            let acc = (accum_offset as u16 + 1) * 4;
            let sg = ((r1.granulated_wavefront_sgpr_count as u16 + 1) * 8).min(102);
            (acc.min(total).min(256), total.saturating_sub(acc).min(256), sg)
        }
        _ => {
            let gran = if target.wave == amdgpu_isa::WaveSize::W32 { 8 } else { 4 };
            ((g * gran).min(256), 0, 106)
        }
    }
}

/// Size of `hsa_kernel_dispatch_packet_t`.
pub const PACKET_SIZE: usize = 64;

/// The AQL dispatch packet.
/// `dynamic_lds`: LDS bytes per work-group the launch adds to the kernel's own
/// (the packet's group segment size is their sum, as the runtime writes it).
/// `dims`: the packet's `setup` (the launch's dimension count).
pub fn packet(grid: [u32; 3], block: [u32; 3], dims: u16, kd: &KernelDescriptor, kernel_object: u64, kernarg: u64, dynamic_lds: u32) -> Vec<u8> {
    let mut p = vec![0u8; PACKET_SIZE];
    // header: type KERNEL_DISPATCH (2), barrier bit, acquire/release system scope.
    let header: u16 = 2 | 1 << 8 | 2 << 9 | 2 << 11;
    p[0..2].copy_from_slice(&header.to_le_bytes());
    p[2..4].copy_from_slice(&dims.to_le_bytes());
    for k in 0..3 {
        p[4 + 2 * k..6 + 2 * k].copy_from_slice(&(block[k] as u16).to_le_bytes());
        p[12 + 4 * k..16 + 4 * k].copy_from_slice(&grid[k].to_le_bytes());
    }
    p[24..28].copy_from_slice(&kd.private_segment_fixed_size.to_le_bytes());
    p[28..32].copy_from_slice(&(kd.group_segment_fixed_size + dynamic_lds).to_le_bytes());
    p[32..40].copy_from_slice(&kernel_object.to_le_bytes());
    p[40..48].copy_from_slice(&kernarg.to_le_bytes());
    p
}

/// What the runtime writes into the hidden kernel arguments of one dispatch.
#[derive(Clone, Debug)]
pub struct HiddenValues {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub queue: u64,
    pub dynamic_lds: u32,
    pub offset: [u32; 3],
    /// None: the highest dimension with more than one work-item.
    pub work_dim: Option<u32>,
    /// The hidden printf-buffer argument (0: none).
    pub printf_buffer: u64,
}

/// The kernarg segment: the explicit argument bytes followed by the hidden
/// arguments the metadata lists, filled as ROCm does.
pub fn kernarg_segment(explicit: &[u8], md: Option<&KernelMetadata>, kd: &KernelDescriptor, hidden: &HiddenValues) -> Result<Vec<u8>, String> {
    let HiddenValues { grid, block, queue, dynamic_lds, offset, .. } = *hidden;
    let size = md.map_or(kd.kernarg_size, |m| m.kernarg_segment_size).max(kd.kernarg_size) as usize;
    let size = size.max(explicit.len());
    let mut seg = vec![0u8; size];
    seg[..explicit.len()].copy_from_slice(explicit);
    let Some(md) = md else { return Ok(seg) };
    let explicit_end = md.args.iter().filter(|a| !matches!(a.value_kind, ValueKind::Hidden(_))).map(|a| a.offset + a.size).max().unwrap_or(0);
    if (explicit.len() as u32) < explicit_end {
        return Err(format!("kernel arguments are {} bytes, the kernel's explicit arguments need {explicit_end}", explicit.len()));
    }
    let dims = u64::from(hidden.work_dim.unwrap_or_else(|| crate::mir::interp::default_work_dim(grid)));
    for a in &md.args {
        let ValueKind::Hidden(h) = a.value_kind else { continue };
        let v: u64 = match h {
            HiddenArg::BlockCountX => grid[0].div_ceil(block[0]) as u64,
            HiddenArg::BlockCountY => grid[1].div_ceil(block[1]) as u64,
            HiddenArg::BlockCountZ => grid[2].div_ceil(block[2]) as u64,
            HiddenArg::GroupSizeX => block[0] as u64,
            HiddenArg::GroupSizeY => block[1] as u64,
            HiddenArg::GroupSizeZ => block[2] as u64,
            HiddenArg::RemainderX => (grid[0] % block[0]) as u64,
            HiddenArg::RemainderY => (grid[1] % block[1]) as u64,
            HiddenArg::RemainderZ => (grid[2] % block[2]) as u64,
            HiddenArg::GridDims => dims,
            HiddenArg::QueuePtr => queue,
            HiddenArg::SharedBase => (super::mem::SHARED_APERTURE_HI as u64) << 32,
            HiddenArg::PrivateBase => (super::mem::PRIVATE_APERTURE_HI as u64) << 32,
            HiddenArg::DynamicLdsSize => u64::from(dynamic_lds),
            HiddenArg::GlobalOffsetX => u64::from(offset[0]),
            HiddenArg::GlobalOffsetY => u64::from(offset[1]),
            HiddenArg::GlobalOffsetZ => u64::from(offset[2]),
            HiddenArg::PrintfBuffer => hidden.printf_buffer,
            // No hostcall buffer, heap, default queue, completion action,
            // multigrid sync.
            _ => 0,
        };
        let (o, n) = (a.offset as usize, a.size as usize);
        if o + n > seg.len() || n > 8 {
            return Err(format!("hidden argument {} at {o}+{n} outside the kernarg segment", h.name()));
        }
        seg[o..o + n].copy_from_slice(&v.to_le_bytes()[..n]);
    }
    Ok(seg)
}

/// Initial SGPRs, VGPRs and EXEC of one wave.
///
/// `threads` are the work-item ids (x, y, z) of the wave's lanes.
#[allow(clippy::too_many_arguments)]
pub fn init_wave(w: &mut Wave, kd: &KernelDescriptor, info: &DispatchInfo, kernarg: &[u8], group: [u32; 3], threads: &[[u32; 3]], wave_offset: u64) -> Result<(), String> {
    let gpu = w.target.gpu;
    let kcp = kd.kernel_code_properties;
    let r2 = kd.compute_pgm_rsrc2;
    let mut s = 0usize;
    let mut put = |w: &mut Wave, s: &mut usize, v: u32| {
        if *s < 106 {
            w.sset(*s, v);
        }
        *s += 1;
    };
    let put64 = |w: &mut Wave, s: &mut usize, v: u64, put: &mut dyn FnMut(&mut Wave, &mut usize, u32)| {
        put(w, s, v as u32);
        put(w, s, (v >> 32) as u32);
    };
    if kcp.enable_sgpr_private_segment_buffer {
        // Scratch V#: base, swizzled (bit 63), stride 0, num_records all, element size
        // 4 with an index stride of the wave size and ADD_TID.
        let base = info.scratch_root;
        put(w, &mut s, base as u32);
        put(w, &mut s, ((base >> 32) as u32 & 0xffff) | 1 << 31);
        put(w, &mut s, u32::MAX);
        let istride = if w.lanes == 64 { 3 } else { 2 };
        put(w, &mut s, istride << 21 | 1 << 23 | 0x0002_7fac);
    }
    if kcp.enable_sgpr_dispatch_ptr {
        put64(w, &mut s, info.packet, &mut put);
    }
    if kcp.enable_sgpr_queue_ptr {
        put64(w, &mut s, info.queue, &mut put);
    }
    if kcp.enable_sgpr_kernarg_segment_ptr {
        put64(w, &mut s, info.kernarg, &mut put);
    }
    if kcp.enable_sgpr_dispatch_id {
        put64(w, &mut s, info.dispatch_id, &mut put);
    }
    if kcp.enable_sgpr_flat_scratch_init {
        // GFX9: the 64-bit base of the queue's scratch backing memory (the
        // kernel adds its wave offset to make FLAT_SCRATCH).
        put64(w, &mut s, info.scratch_root, &mut put);
    }
    if kcp.enable_sgpr_private_segment_size {
        put(w, &mut s, info.lane_size as u32);
    }
    let pre = kd.kernarg_preload;
    for k in 0..pre.length as usize {
        let o = (pre.offset as usize + k) * 4;
        let v = kernarg.get(o..o + 4).map_or(0, |b| u32::from_le_bytes(b.try_into().unwrap()));
        put(w, &mut s, v);
    }
    let user = r2.user_sgpr_count as usize;
    if s > user {
        return Err(format!("the descriptor enables {s} user SGPRs but user_sgpr_count is {user}"));
    }
    s = user;
    for (k, en) in [r2.enable_sgpr_workgroup_id_x, r2.enable_sgpr_workgroup_id_y, r2.enable_sgpr_workgroup_id_z].into_iter().enumerate() {
        if en {
            put(w, &mut s, group[k]);
        }
    }
    if r2.enable_sgpr_workgroup_info {
        put(w, &mut s, 0);
    }
    if r2.enable_private_segment && !gpu.has_architected_flat_scratch() {
        put(w, &mut s, wave_offset as u32);
    }
    // Work-item ids, packed in v0 (x | y << 10 | z << 20) on every supported GPU.
    let dims = r2.enable_vgpr_workitem_id;
    let mut exec = 0u64;
    for (lane, t) in threads.iter().enumerate() {
        let y = if matches!(dims, WorkitemIdDims::XY | WorkitemIdDims::XYZ) { t[1] } else { 0 };
        let z = if dims == WorkitemIdDims::XYZ { t[2] } else { 0 };
        w.set_v(0, lane as u32, t[0] | y << 10 | z << 20);
        exec |= 1 << lane;
    }
    w.written[256] = true;
    w.set_exec(exec);
    Ok(())
}
