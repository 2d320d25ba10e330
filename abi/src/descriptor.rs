//! The AMDHSA kernel descriptor: the 64-byte record (`<kernel>.kd`) that tells the
//! command processor how to launch a kernel, with every field as a typed value.
//!
//! Layout (little-endian, AMDGPUUsage "Kernel Descriptor", verified against
//! `llvm-objdump-22 -D -j .rodata`, which prints a `.kd` back as `.amdhsa_*`
//! directives):
//!
//! | offset | size | field |
//! | --- | --- | --- |
//! | 0x00 | 4 | `group_segment_fixed_size` |
//! | 0x04 | 4 | `private_segment_fixed_size` |
//! | 0x08 | 4 | `kernarg_size` |
//! | 0x0c | 4 | reserved |
//! | 0x10 | 8 | `kernel_code_entry_byte_offset` (entry − descriptor address, signed) |
//! | 0x18 | 20 | reserved |
//! | 0x2c | 4 | `compute_pgm_rsrc3` ([`ComputePgmRsrc3`]) |
//! | 0x30 | 4 | `compute_pgm_rsrc1` ([`ComputePgmRsrc1`]) |
//! | 0x34 | 4 | `compute_pgm_rsrc2` ([`ComputePgmRsrc2`]) |
//! | 0x38 | 2 | `kernel_code_properties` ([`KernelCodeProperties`]) |
//! | 0x3a | 2 | `kernarg_preload` ([`KernargPreload`]) |
//! | 0x3c | 4 | reserved |
//!
//! [`KernelDescriptor::for_kernel`] fills a descriptor from what a kernel uses
//! ([`KernelResources`]), choosing the per-target values LLVM 22 chooses.

use std::fmt;

use amdgpu_isa::{Generation, Gpu, Target, WaveSize};

/// Size of a kernel descriptor in bytes.
pub const DESCRIPTOR_SIZE: usize = 64;
/// Required alignment of a kernel descriptor in bytes.
pub const DESCRIPTOR_ALIGN: u64 = 64;
/// Required alignment of a kernel entry point in bytes.
pub const KERNEL_ENTRY_ALIGN: u64 = 256;
/// Offset of `kernel_code_entry_byte_offset` inside the descriptor (the place an
/// `R_AMDGPU_REL64` relocation patches in a relocatable object).
pub const ENTRY_OFFSET_FIELD: u64 = 0x10;

/// A descriptor that could not be built or decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DescriptorError {
    /// The byte slice is not 64 bytes long.
    WrongSize(usize),
    /// A field value does not fit its bit field or is not valid for the target.
    FieldOutOfRange {
        field: &'static str,
        value: u64,
        max: u64,
    },
    /// A feature was asked for that the target does not have.
    Unsupported { field: &'static str, gpu: Gpu },
}

impl fmt::Display for DescriptorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DescriptorError::WrongSize(n) => write!(f, "a kernel descriptor is 64 bytes, got {n}"),
            DescriptorError::FieldOutOfRange { field, value, max } => {
                write!(
                    f,
                    "kernel descriptor field {field} = {value} is out of range (max {max})"
                )
            }
            DescriptorError::Unsupported { field, gpu } => {
                write!(
                    f,
                    "kernel descriptor field {field} is not available on {gpu}"
                )
            }
        }
    }
}

impl std::error::Error for DescriptorError {}

fn check(field: &'static str, value: u64, bits: u32) -> Result<(), DescriptorError> {
    let max = (1u64 << bits) - 1;
    if value > max {
        Err(DescriptorError::FieldOutOfRange { field, value, max })
    } else {
        Ok(())
    }
}

fn get(word: u32, shift: u32, bits: u32) -> u32 {
    (word >> shift) & ((1u32 << bits) - 1)
}

fn flag(word: u32, bit: u32) -> bool {
    word & (1 << bit) != 0
}

/// `FLOAT_ROUND_MODE_*` (2 bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum FloatRoundMode {
    #[default]
    NearEven = 0,
    PlusInfinity = 1,
    MinusInfinity = 2,
    Zero = 3,
}

impl FloatRoundMode {
    fn from_bits(bits: u32) -> FloatRoundMode {
        match bits & 3 {
            0 => FloatRoundMode::NearEven,
            1 => FloatRoundMode::PlusInfinity,
            2 => FloatRoundMode::MinusInfinity,
            _ => FloatRoundMode::Zero,
        }
    }
}

/// `FLOAT_DENORM_MODE_*` (2 bits): which denormals are flushed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum FloatDenormMode {
    /// Flush source and destination denormals.
    FlushSrcDst = 0,
    /// Flush destination denormals only.
    FlushDst = 1,
    /// Flush source denormals only.
    FlushSrc = 2,
    /// Keep denormals (LLVM's default for compute: value 3).
    #[default]
    FlushNone = 3,
}

impl FloatDenormMode {
    fn from_bits(bits: u32) -> FloatDenormMode {
        match bits & 3 {
            0 => FloatDenormMode::FlushSrcDst,
            1 => FloatDenormMode::FlushDst,
            2 => FloatDenormMode::FlushSrc,
            _ => FloatDenormMode::FlushNone,
        }
    }
}

/// `COMPUTE_PGM_RSRC1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct ComputePgmRsrc1 {
    /// Bits 5:0: `ceil(vgprs / granule) − 1` (see [`granulated_vgpr_count`]).
    pub granulated_workitem_vgpr_count: u8,
    /// Bits 9:6: `ceil(sgprs / 8) − 1` on gfx9; must be 0 on gfx10+.
    pub granulated_wavefront_sgpr_count: u8,
    /// Bits 11:10.
    pub priority: u8,
    /// Bits 13:12.
    pub float_round_mode_32: FloatRoundMode,
    /// Bits 15:14.
    pub float_round_mode_16_64: FloatRoundMode,
    /// Bits 17:16.
    pub float_denorm_mode_32: FloatDenormMode,
    /// Bits 19:18.
    pub float_denorm_mode_16_64: FloatDenormMode,
    /// Bit 20.
    pub priv_: bool,
    /// Bit 21 (`.amdhsa_dx10_clamp`).
    pub enable_dx10_clamp: bool,
    /// Bit 22.
    pub debug_mode: bool,
    /// Bit 23 (`.amdhsa_ieee_mode`).
    pub enable_ieee_mode: bool,
    /// Bit 24.
    pub bulky: bool,
    /// Bit 25.
    pub cdbg_user: bool,
    /// Bit 26 (`.amdhsa_fp16_overflow`, gfx9+).
    pub fp16_ovfl: bool,
    /// Bit 29 (gfx10+: `.amdhsa_workgroup_processor_mode`).
    pub wgp_mode: bool,
    /// Bit 30 (gfx10+: `.amdhsa_memory_ordered`).
    pub mem_ordered: bool,
    /// Bit 31 (gfx10+: `.amdhsa_forward_progress`).
    pub fwd_progress: bool,
}

impl ComputePgmRsrc1 {
    pub fn to_bits(&self) -> Result<u32, DescriptorError> {
        check(
            "granulated_workitem_vgpr_count",
            self.granulated_workitem_vgpr_count.into(),
            6,
        )?;
        check(
            "granulated_wavefront_sgpr_count",
            self.granulated_wavefront_sgpr_count.into(),
            4,
        )?;
        check("priority", self.priority.into(), 2)?;
        Ok(u32::from(self.granulated_workitem_vgpr_count)
            | u32::from(self.granulated_wavefront_sgpr_count) << 6
            | u32::from(self.priority) << 10
            | (self.float_round_mode_32 as u32) << 12
            | (self.float_round_mode_16_64 as u32) << 14
            | (self.float_denorm_mode_32 as u32) << 16
            | (self.float_denorm_mode_16_64 as u32) << 18
            | u32::from(self.priv_) << 20
            | u32::from(self.enable_dx10_clamp) << 21
            | u32::from(self.debug_mode) << 22
            | u32::from(self.enable_ieee_mode) << 23
            | u32::from(self.bulky) << 24
            | u32::from(self.cdbg_user) << 25
            | u32::from(self.fp16_ovfl) << 26
            | u32::from(self.wgp_mode) << 29
            | u32::from(self.mem_ordered) << 30
            | u32::from(self.fwd_progress) << 31)
    }

    pub fn from_bits(w: u32) -> ComputePgmRsrc1 {
        ComputePgmRsrc1 {
            granulated_workitem_vgpr_count: get(w, 0, 6) as u8,
            granulated_wavefront_sgpr_count: get(w, 6, 4) as u8,
            priority: get(w, 10, 2) as u8,
            float_round_mode_32: FloatRoundMode::from_bits(get(w, 12, 2)),
            float_round_mode_16_64: FloatRoundMode::from_bits(get(w, 14, 2)),
            float_denorm_mode_32: FloatDenormMode::from_bits(get(w, 16, 2)),
            float_denorm_mode_16_64: FloatDenormMode::from_bits(get(w, 18, 2)),
            priv_: flag(w, 20),
            enable_dx10_clamp: flag(w, 21),
            debug_mode: flag(w, 22),
            enable_ieee_mode: flag(w, 23),
            bulky: flag(w, 24),
            cdbg_user: flag(w, 25),
            fp16_ovfl: flag(w, 26),
            wgp_mode: flag(w, 29),
            mem_ordered: flag(w, 30),
            fwd_progress: flag(w, 31),
        }
    }
}

/// `ENABLE_VGPR_WORKITEM_ID`: which work-item ids the hardware puts in v0 (packed
/// into v0 on gfx90a/gfx942/gfx11 as 10-bit fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub enum WorkitemIdDims {
    #[default]
    X = 0,
    XY = 1,
    XYZ = 2,
}

/// The floating-point exceptions that can raise a trap (`COMPUTE_PGM_RSRC2` bits 30:24).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct FpExceptions {
    pub ieee_invalid_op: bool,
    pub denorm_src: bool,
    pub ieee_div_zero: bool,
    pub ieee_overflow: bool,
    pub ieee_underflow: bool,
    pub ieee_inexact: bool,
    pub int_div_zero: bool,
}

impl FpExceptions {
    fn to_bits(self) -> u32 {
        u32::from(self.ieee_invalid_op)
            | u32::from(self.denorm_src) << 1
            | u32::from(self.ieee_div_zero) << 2
            | u32::from(self.ieee_overflow) << 3
            | u32::from(self.ieee_underflow) << 4
            | u32::from(self.ieee_inexact) << 5
            | u32::from(self.int_div_zero) << 6
    }

    fn from_bits(b: u32) -> FpExceptions {
        FpExceptions {
            ieee_invalid_op: flag(b, 0),
            denorm_src: flag(b, 1),
            ieee_div_zero: flag(b, 2),
            ieee_overflow: flag(b, 3),
            ieee_underflow: flag(b, 4),
            ieee_inexact: flag(b, 5),
            int_div_zero: flag(b, 6),
        }
    }
}

/// `COMPUTE_PGM_RSRC2`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct ComputePgmRsrc2 {
    /// Bit 0: scratch is used (gfx90a: the private segment wave offset SGPR is set
    /// up; architected flat scratch targets: `.amdhsa_enable_private_segment`).
    pub enable_private_segment: bool,
    /// Bits 5:1: number of user SGPRs the hardware initializes.
    pub user_sgpr_count: u8,
    /// Bit 6 (set by the CP, 0 in code objects).
    pub enable_trap_handler: bool,
    /// Bit 7.
    pub enable_sgpr_workgroup_id_x: bool,
    /// Bit 8.
    pub enable_sgpr_workgroup_id_y: bool,
    /// Bit 9.
    pub enable_sgpr_workgroup_id_z: bool,
    /// Bit 10.
    pub enable_sgpr_workgroup_info: bool,
    /// Bits 12:11.
    pub enable_vgpr_workitem_id: WorkitemIdDims,
    /// Bit 13.
    pub enable_exception_address_watch: bool,
    /// Bit 14.
    pub enable_exception_memory: bool,
    /// Bits 23:15 (0 for HSA: the CP takes the LDS size from the dispatch packet).
    pub granulated_lds_size: u16,
    /// Bits 30:24.
    pub exceptions: FpExceptions,
}

impl ComputePgmRsrc2 {
    pub fn to_bits(&self) -> Result<u32, DescriptorError> {
        check("user_sgpr_count", self.user_sgpr_count.into(), 5)?;
        check("granulated_lds_size", self.granulated_lds_size.into(), 9)?;
        Ok(u32::from(self.enable_private_segment)
            | u32::from(self.user_sgpr_count) << 1
            | u32::from(self.enable_trap_handler) << 6
            | u32::from(self.enable_sgpr_workgroup_id_x) << 7
            | u32::from(self.enable_sgpr_workgroup_id_y) << 8
            | u32::from(self.enable_sgpr_workgroup_id_z) << 9
            | u32::from(self.enable_sgpr_workgroup_info) << 10
            | (self.enable_vgpr_workitem_id as u32) << 11
            | u32::from(self.enable_exception_address_watch) << 13
            | u32::from(self.enable_exception_memory) << 14
            | u32::from(self.granulated_lds_size) << 15
            | self.exceptions.to_bits() << 24)
    }

    pub fn from_bits(w: u32) -> ComputePgmRsrc2 {
        ComputePgmRsrc2 {
            enable_private_segment: flag(w, 0),
            user_sgpr_count: get(w, 1, 5) as u8,
            enable_trap_handler: flag(w, 6),
            enable_sgpr_workgroup_id_x: flag(w, 7),
            enable_sgpr_workgroup_id_y: flag(w, 8),
            enable_sgpr_workgroup_id_z: flag(w, 9),
            enable_sgpr_workgroup_info: flag(w, 10),
            enable_vgpr_workitem_id: match get(w, 11, 2) {
                0 => WorkitemIdDims::X,
                1 => WorkitemIdDims::XY,
                _ => WorkitemIdDims::XYZ,
            },
            enable_exception_address_watch: flag(w, 13),
            enable_exception_memory: flag(w, 14),
            granulated_lds_size: get(w, 15, 9) as u16,
            exceptions: FpExceptions::from_bits(get(w, 24, 7)),
        }
    }

    /// Number of system SGPRs the hardware initializes after the user SGPRs.
    pub fn system_sgpr_count(&self, gpu: Gpu) -> u32 {
        u32::from(self.enable_sgpr_workgroup_id_x)
            + u32::from(self.enable_sgpr_workgroup_id_y)
            + u32::from(self.enable_sgpr_workgroup_id_z)
            + u32::from(self.enable_sgpr_workgroup_info)
            + u32::from(self.enable_private_segment && !gpu.has_architected_flat_scratch())
    }
}

/// `COMPUTE_PGM_RSRC3`: its meaning depends on the generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ComputePgmRsrc3 {
    /// gfx90a / gfx942.
    Gfx9 {
        /// Bits 5:0: `accum_offset / 4 − 1` (see [`accum_offset_field`]).
        accum_offset: u8,
        /// Bit 16.
        tg_split: bool,
    },
    /// gfx11.
    Gfx11 {
        /// Bits 3:0.
        shared_vgpr_count: u8,
        /// Bits 9:4: instruction prefetch size in 128-byte units (LLVM: `ceil(code bytes / 128)`).
        inst_pref_size: u8,
        /// Bit 10.
        trap_on_start: bool,
        /// Bit 11.
        trap_on_end: bool,
        /// Bit 31.
        image_op: bool,
    },
    /// A processor whose layout amdgpu-cg does not model (read from another
    /// compiler's code object): the raw bits.
    Other(u32),
}

impl ComputePgmRsrc3 {
    pub fn to_bits(&self) -> Result<u32, DescriptorError> {
        match *self {
            ComputePgmRsrc3::Gfx9 {
                accum_offset,
                tg_split,
            } => {
                check("accum_offset", accum_offset.into(), 6)?;
                Ok(u32::from(accum_offset) | u32::from(tg_split) << 16)
            }
            ComputePgmRsrc3::Gfx11 {
                shared_vgpr_count,
                inst_pref_size,
                trap_on_start,
                trap_on_end,
                image_op,
            } => {
                check("shared_vgpr_count", shared_vgpr_count.into(), 4)?;
                check("inst_pref_size", inst_pref_size.into(), 6)?;
                Ok(u32::from(shared_vgpr_count)
                    | u32::from(inst_pref_size) << 4
                    | u32::from(trap_on_start) << 10
                    | u32::from(trap_on_end) << 11
                    | u32::from(image_op) << 31)
            }
            ComputePgmRsrc3::Other(bits) => Ok(bits),
        }
    }

    pub fn from_bits(w: u32, generation: Generation) -> ComputePgmRsrc3 {
        match generation {
            Generation::Gfx9 => ComputePgmRsrc3::Gfx9 {
                accum_offset: get(w, 0, 6) as u8,
                tg_split: flag(w, 16),
            },
            Generation::Gfx11 => ComputePgmRsrc3::Gfx11 {
                shared_vgpr_count: get(w, 0, 4) as u8,
                inst_pref_size: get(w, 4, 6) as u8,
                trap_on_start: flag(w, 10),
                trap_on_end: flag(w, 11),
                image_op: flag(w, 31),
            },
        }
    }
}

/// `kernel_code_properties` (16 bits): which user SGPRs are set up, wave32, dynamic stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct KernelCodeProperties {
    /// Bit 0: 4 SGPRs (gfx90a only; architected flat scratch targets reject it).
    pub enable_sgpr_private_segment_buffer: bool,
    /// Bit 1: 2 SGPRs.
    pub enable_sgpr_dispatch_ptr: bool,
    /// Bit 2: 2 SGPRs.
    pub enable_sgpr_queue_ptr: bool,
    /// Bit 3: 2 SGPRs.
    pub enable_sgpr_kernarg_segment_ptr: bool,
    /// Bit 4: 2 SGPRs.
    pub enable_sgpr_dispatch_id: bool,
    /// Bit 5: 2 SGPRs (gfx90a only).
    pub enable_sgpr_flat_scratch_init: bool,
    /// Bit 6: 1 SGPR.
    pub enable_sgpr_private_segment_size: bool,
    /// Bit 10: wave32 (gfx10+).
    pub enable_wavefront_size32: bool,
    /// Bit 11.
    pub uses_dynamic_stack: bool,
}

impl KernelCodeProperties {
    pub fn to_bits(&self) -> u16 {
        u16::from(self.enable_sgpr_private_segment_buffer)
            | u16::from(self.enable_sgpr_dispatch_ptr) << 1
            | u16::from(self.enable_sgpr_queue_ptr) << 2
            | u16::from(self.enable_sgpr_kernarg_segment_ptr) << 3
            | u16::from(self.enable_sgpr_dispatch_id) << 4
            | u16::from(self.enable_sgpr_flat_scratch_init) << 5
            | u16::from(self.enable_sgpr_private_segment_size) << 6
            | u16::from(self.enable_wavefront_size32) << 10
            | u16::from(self.uses_dynamic_stack) << 11
    }

    pub fn from_bits(w: u16) -> KernelCodeProperties {
        let w = u32::from(w);
        KernelCodeProperties {
            enable_sgpr_private_segment_buffer: flag(w, 0),
            enable_sgpr_dispatch_ptr: flag(w, 1),
            enable_sgpr_queue_ptr: flag(w, 2),
            enable_sgpr_kernarg_segment_ptr: flag(w, 3),
            enable_sgpr_dispatch_id: flag(w, 4),
            enable_sgpr_flat_scratch_init: flag(w, 5),
            enable_sgpr_private_segment_size: flag(w, 6),
            enable_wavefront_size32: flag(w, 10),
            uses_dynamic_stack: flag(w, 11),
        }
    }

    /// User SGPRs taken by the enabled inputs, in the hardware order (private
    /// segment buffer 4, dispatch ptr 2, queue ptr 2, kernarg ptr 2, dispatch id 2,
    /// flat scratch init 2, private segment size 1).
    pub fn user_sgprs(&self) -> u32 {
        4 * u32::from(self.enable_sgpr_private_segment_buffer)
            + 2 * u32::from(self.enable_sgpr_dispatch_ptr)
            + 2 * u32::from(self.enable_sgpr_queue_ptr)
            + 2 * u32::from(self.enable_sgpr_kernarg_segment_ptr)
            + 2 * u32::from(self.enable_sgpr_dispatch_id)
            + 2 * u32::from(self.enable_sgpr_flat_scratch_init)
            + u32::from(self.enable_sgpr_private_segment_size)
    }
}

/// `kernarg_preload` (16 bits, gfx90a/gfx942): kernel arguments preloaded into
/// user SGPRs after the enabled inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct KernargPreload {
    /// Bits 6:0: number of dwords.
    pub length: u8,
    /// Bits 15:7: offset in dwords into the kernarg segment.
    pub offset: u16,
}

impl KernargPreload {
    pub fn to_bits(&self) -> Result<u16, DescriptorError> {
        check("kernarg_preload_length", self.length.into(), 7)?;
        check("kernarg_preload_offset", self.offset.into(), 9)?;
        Ok(u16::from(self.length) | self.offset << 7)
    }

    pub fn from_bits(w: u16) -> KernargPreload {
        KernargPreload {
            length: (w & 0x7f) as u8,
            offset: w >> 7,
        }
    }
}

/// The whole 64-byte descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KernelDescriptor {
    pub group_segment_fixed_size: u32,
    pub private_segment_fixed_size: u32,
    pub kernarg_size: u32,
    /// Kernel entry address minus descriptor address. The code object writer sets
    /// it when it places the kernel; leave 0 before that.
    pub kernel_code_entry_byte_offset: i64,
    pub compute_pgm_rsrc3: ComputePgmRsrc3,
    pub compute_pgm_rsrc1: ComputePgmRsrc1,
    pub compute_pgm_rsrc2: ComputePgmRsrc2,
    pub kernel_code_properties: KernelCodeProperties,
    pub kernarg_preload: KernargPreload,
}

impl KernelDescriptor {
    /// The 64 bytes, little-endian.
    pub fn encode(&self) -> Result<[u8; DESCRIPTOR_SIZE], DescriptorError> {
        let mut b = [0u8; DESCRIPTOR_SIZE];
        b[0x00..0x04].copy_from_slice(&self.group_segment_fixed_size.to_le_bytes());
        b[0x04..0x08].copy_from_slice(&self.private_segment_fixed_size.to_le_bytes());
        b[0x08..0x0c].copy_from_slice(&self.kernarg_size.to_le_bytes());
        b[0x10..0x18].copy_from_slice(&self.kernel_code_entry_byte_offset.to_le_bytes());
        b[0x2c..0x30].copy_from_slice(&self.compute_pgm_rsrc3.to_bits()?.to_le_bytes());
        b[0x30..0x34].copy_from_slice(&self.compute_pgm_rsrc1.to_bits()?.to_le_bytes());
        b[0x34..0x38].copy_from_slice(&self.compute_pgm_rsrc2.to_bits()?.to_le_bytes());
        b[0x38..0x3a].copy_from_slice(&self.kernel_code_properties.to_bits().to_le_bytes());
        b[0x3a..0x3c].copy_from_slice(&self.kernarg_preload.to_bits()?.to_le_bytes());
        Ok(b)
    }

    /// Decodes 64 bytes; `generation` selects the meaning of `compute_pgm_rsrc3`.
    /// Reserved bits are ignored.
    pub fn decode(
        bytes: &[u8],
        generation: Generation,
    ) -> Result<KernelDescriptor, DescriptorError> {
        KernelDescriptor::decode_for(bytes, Some(generation))
    }

    /// [`KernelDescriptor::decode`] for any processor: `None` (a processor whose
    /// `compute_pgm_rsrc3` layout is not modelled) keeps that word's raw bits.
    pub fn decode_for(
        bytes: &[u8],
        generation: Option<Generation>,
    ) -> Result<KernelDescriptor, DescriptorError> {
        if bytes.len() != DESCRIPTOR_SIZE {
            return Err(DescriptorError::WrongSize(bytes.len()));
        }
        let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().unwrap());
        let u16_at = |o: usize| u16::from_le_bytes(bytes[o..o + 2].try_into().unwrap());
        Ok(KernelDescriptor {
            group_segment_fixed_size: u32_at(0x00),
            private_segment_fixed_size: u32_at(0x04),
            kernarg_size: u32_at(0x08),
            kernel_code_entry_byte_offset: i64::from_le_bytes(
                bytes[0x10..0x18].try_into().unwrap(),
            ),
            compute_pgm_rsrc3: match generation {
                Some(g) => ComputePgmRsrc3::from_bits(u32_at(0x2c), g),
                None => ComputePgmRsrc3::Other(u32_at(0x2c)),
            },
            compute_pgm_rsrc1: ComputePgmRsrc1::from_bits(u32_at(0x30)),
            compute_pgm_rsrc2: ComputePgmRsrc2::from_bits(u32_at(0x34)),
            kernel_code_properties: KernelCodeProperties::from_bits(u16_at(0x38)),
            kernarg_preload: KernargPreload::from_bits(u16_at(0x3a)),
        })
    }

    /// The descriptor LLVM 22 would write for a kernel that uses `res` on `target`.
    pub fn for_kernel(
        target: Target,
        res: &KernelResources,
    ) -> Result<KernelDescriptor, DescriptorError> {
        let gpu = target.gpu;
        let gen = gpu.generation();
        let wave32 = target.wave == WaveSize::W32;
        if !gpu.supports_wave_size(target.wave) {
            return Err(DescriptorError::Unsupported {
                field: "wavefront_size",
                gpu,
            });
        }
        if gpu.has_architected_flat_scratch() {
            if res.user_sgprs.enable_sgpr_private_segment_buffer {
                return Err(DescriptorError::Unsupported {
                    field: "enable_sgpr_private_segment_buffer",
                    gpu,
                });
            }
            if res.user_sgprs.enable_sgpr_flat_scratch_init {
                return Err(DescriptorError::Unsupported {
                    field: "enable_sgpr_flat_scratch_init",
                    gpu,
                });
            }
        }
        if !gpu.has_agprs() && res.num_agpr > 0 {
            return Err(DescriptorError::Unsupported {
                field: "agpr_count",
                gpu,
            });
        }
        if res.kernarg_preload.length > 0 && gen != Generation::Gfx9 {
            return Err(DescriptorError::Unsupported {
                field: "kernarg_preload",
                gpu,
            });
        }
        let total_vgprs = total_vgpr_count(gpu, res.num_vgpr, res.num_agpr);
        let max_vgprs = max_vgprs(target);
        if total_vgprs > max_vgprs {
            return Err(DescriptorError::FieldOutOfRange {
                field: "vgpr_count",
                value: total_vgprs.into(),
                max: max_vgprs.into(),
            });
        }
        let sgprs = sgpr_count(
            target,
            res.num_sgpr,
            res.uses_vcc,
            res.uses_flat_scratch,
            res.xnack_enabled,
        );
        if gen == Generation::Gfx9 && sgprs > 112 {
            return Err(DescriptorError::FieldOutOfRange {
                field: "sgpr_count",
                value: sgprs.into(),
                max: 112,
            });
        }
        if res.num_sgpr > 106 {
            return Err(DescriptorError::FieldOutOfRange {
                field: "next_free_sgpr",
                value: res.num_sgpr.into(),
                max: 106,
            });
        }
        let mut props = res.user_sgprs;
        if res.kernarg_preload.length > 0 {
            props.enable_sgpr_kernarg_segment_ptr = true;
        }
        props.enable_wavefront_size32 = wave32;
        props.uses_dynamic_stack = res.uses_dynamic_stack;

        let rsrc1 = ComputePgmRsrc1 {
            granulated_workitem_vgpr_count: granulated_vgpr_count(target, total_vgprs) as u8,
            granulated_wavefront_sgpr_count: granulated_sgpr_count(gen, sgprs) as u8,
            float_round_mode_32: res.float_mode.round_32,
            float_round_mode_16_64: res.float_mode.round_16_64,
            float_denorm_mode_32: res.float_mode.denorm_32,
            float_denorm_mode_16_64: res.float_mode.denorm_16_64,
            enable_dx10_clamp: res.float_mode.dx10_clamp,
            enable_ieee_mode: res.float_mode.ieee_mode,
            fp16_ovfl: res.float_mode.fp16_overflow,
            wgp_mode: gen == Generation::Gfx11,
            mem_ordered: gen == Generation::Gfx11,
            fwd_progress: gen == Generation::Gfx11,
            ..ComputePgmRsrc1::default()
        };
        let mut rsrc2 = ComputePgmRsrc2 {
            enable_private_segment: res.private_segment_fixed_size > 0
                || res.uses_dynamic_stack
                || res.uses_scratch,
            enable_sgpr_workgroup_id_x: res.workgroup_id[0],
            enable_sgpr_workgroup_id_y: res.workgroup_id[1],
            enable_sgpr_workgroup_id_z: res.workgroup_id[2],
            enable_sgpr_workgroup_info: res.workgroup_info,
            enable_vgpr_workitem_id: res.workitem_id,
            ..ComputePgmRsrc2::default()
        };
        rsrc2.user_sgpr_count =
            user_sgpr_count(target, &props, res.kernarg_preload.length, &rsrc2) as u8;
        check("user_sgpr_count", rsrc2.user_sgpr_count.into(), 5)?;
        let rsrc3 = match gen {
            Generation::Gfx9 => ComputePgmRsrc3::Gfx9 {
                accum_offset: accum_offset_field(res.num_vgpr) as u8,
                tg_split: res.tg_split,
            },
            Generation::Gfx11 => ComputePgmRsrc3::Gfx11 {
                shared_vgpr_count: 0,
                inst_pref_size: inst_pref_size(res.code_size) as u8,
                trap_on_start: false,
                trap_on_end: false,
                image_op: false,
            },
        };
        let desc = KernelDescriptor {
            group_segment_fixed_size: res.group_segment_fixed_size,
            private_segment_fixed_size: res.private_segment_fixed_size,
            kernarg_size: res.kernarg_size,
            kernel_code_entry_byte_offset: 0,
            compute_pgm_rsrc3: rsrc3,
            compute_pgm_rsrc1: rsrc1,
            compute_pgm_rsrc2: rsrc2,
            kernel_code_properties: props,
            kernarg_preload: res.kernarg_preload,
        };
        desc.encode()?;
        Ok(desc)
    }
}

/// Float modes of a kernel (`COMPUTE_PGM_RSRC1` bits 12–26). The default is what
/// LLVM 22 uses for compute kernels: round to nearest even, denormals kept
/// (mode 3), DX10 clamp and IEEE mode on, no fp16 overflow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FloatMode {
    pub round_32: FloatRoundMode,
    pub round_16_64: FloatRoundMode,
    pub denorm_32: FloatDenormMode,
    pub denorm_16_64: FloatDenormMode,
    pub dx10_clamp: bool,
    pub ieee_mode: bool,
    pub fp16_overflow: bool,
}

impl Default for FloatMode {
    fn default() -> FloatMode {
        FloatMode {
            round_32: FloatRoundMode::NearEven,
            round_16_64: FloatRoundMode::NearEven,
            denorm_32: FloatDenormMode::FlushNone,
            denorm_16_64: FloatDenormMode::FlushNone,
            dx10_clamp: true,
            ieee_mode: true,
            fp16_overflow: false,
        }
    }
}

/// What a kernel uses: the input of [`KernelDescriptor::for_kernel`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelResources {
    /// Architected VGPRs used (`.amdhsa_next_free_vgpr` without AGPRs).
    pub num_vgpr: u32,
    /// AGPRs used (gfx90a/gfx942 only).
    pub num_agpr: u32,
    /// SGPRs used (`.amdhsa_next_free_sgpr`), without VCC/XNACK/flat scratch.
    pub num_sgpr: u32,
    /// VCC is written or read.
    pub uses_vcc: bool,
    /// The kernel addresses scratch through flat scratch (gfx90a: adds 2 SGPRs).
    pub uses_flat_scratch: bool,
    /// XNACK is on or "any" (gfx9: reserves the XNACK mask SGPRs).
    pub xnack_enabled: bool,
    /// Scratch is used even though the fixed private size is 0.
    pub uses_scratch: bool,
    pub uses_dynamic_stack: bool,
    pub group_segment_fixed_size: u32,
    pub private_segment_fixed_size: u32,
    pub kernarg_size: u32,
    /// Enabled user SGPR inputs (the wave32 and dynamic-stack bits are set from
    /// the target and `uses_dynamic_stack`).
    pub user_sgprs: KernelCodeProperties,
    pub kernarg_preload: KernargPreload,
    /// Workgroup id SGPRs x, y, z.
    pub workgroup_id: [bool; 3],
    pub workgroup_info: bool,
    pub workitem_id: WorkitemIdDims,
    pub float_mode: FloatMode,
    pub tg_split: bool,
    /// Bytes of machine code of the kernel (gfx11 `INST_PREF_SIZE`).
    pub code_size: u32,
    /// Registers stored by spill code, as LLVM counts them for the metadata's
    /// `.sgpr_spill_count` / `.vgpr_spill_count`: every SGPR written to a VGPR
    /// lane or memory, every VGPR written to memory, once per spill store.
    pub sgpr_spill_count: u32,
    pub vgpr_spill_count: u32,
}

impl Default for KernelResources {
    /// A kernel that only reads its kernarg pointer and workgroup id x (what LLVM
    /// always enables), with one VGPR and no SGPRs beyond the inputs.
    fn default() -> KernelResources {
        KernelResources {
            num_vgpr: 1,
            num_agpr: 0,
            num_sgpr: 0,
            uses_vcc: false,
            uses_flat_scratch: false,
            xnack_enabled: false,
            uses_scratch: false,
            uses_dynamic_stack: false,
            group_segment_fixed_size: 0,
            private_segment_fixed_size: 0,
            kernarg_size: 0,
            user_sgprs: KernelCodeProperties {
                enable_sgpr_kernarg_segment_ptr: true,
                ..Default::default()
            },
            kernarg_preload: KernargPreload::default(),
            workgroup_id: [true, false, false],
            workgroup_info: false,
            workitem_id: WorkitemIdDims::X,
            float_mode: FloatMode::default(),
            tg_split: false,
            code_size: 0,
            sgpr_spill_count: 0,
            vgpr_spill_count: 0,
        }
    }
}

impl KernelResources {
    /// The inputs part of the resources from the kernel ABI's [`KernelInputs`]
    /// (the same rules as [`initial_state`]: buffer-scratch targets always get
    /// the scratch V#, preloading forces the kernarg pointer, the preload is
    /// limited by the 16 user SGPRs). Register counts, segment sizes and code
    /// size stay at their defaults: set them from the compiled kernel.
    ///
    /// [`KernelInputs`]: crate::kernel::KernelInputs
    /// [`initial_state`]: crate::kernel::initial_state
    pub fn from_inputs(target: Target, inputs: &crate::kernel::KernelInputs) -> KernelResources {
        let state = crate::kernel::initial_state(target, inputs);
        let has = |input| state.slot(input).is_some();
        use crate::kernel::SgprInput as I;
        KernelResources {
            user_sgprs: KernelCodeProperties {
                enable_sgpr_private_segment_buffer: has(I::PrivateSegmentBuffer),
                enable_sgpr_dispatch_ptr: has(I::DispatchPtr),
                enable_sgpr_queue_ptr: has(I::QueuePtr),
                enable_sgpr_kernarg_segment_ptr: has(I::KernargSegmentPtr),
                enable_sgpr_dispatch_id: has(I::DispatchId),
                enable_sgpr_flat_scratch_init: has(I::FlatScratchInit),
                enable_sgpr_private_segment_size: has(I::PrivateSegmentSize),
                ..KernelCodeProperties::default()
            },
            kernarg_preload: KernargPreload {
                length: state.kernarg_preload_dwords as u8,
                offset: 0,
            },
            workgroup_id: [
                has(I::WorkgroupIdX),
                has(I::WorkgroupIdY),
                has(I::WorkgroupIdZ),
            ],
            workgroup_info: has(I::WorkgroupInfo),
            workitem_id: match state.workitem_ids.dims {
                0 | 1 => WorkitemIdDims::X,
                2 => WorkitemIdDims::XY,
                _ => WorkitemIdDims::XYZ,
            },
            uses_scratch: state.private_segment,
            ..KernelResources::default()
        }
    }
}

/// VGPR allocation granule of `GRANULATED_WORKITEM_VGPR_COUNT`.
pub fn vgpr_granule(target: Target) -> u32 {
    match (target.gpu.generation(), target.wave) {
        (Generation::Gfx9, _) => 8,
        (Generation::Gfx11, WaveSize::W32) => 8,
        (Generation::Gfx11, WaveSize::W64) => 4,
    }
}

/// Largest VGPR count (unified VGPR+AGPR on gfx90a/gfx942) the field can describe.
pub fn max_vgprs(target: Target) -> u32 {
    match (target.gpu.generation(), target.wave) {
        (Generation::Gfx9, _) => 512,
        (Generation::Gfx11, WaveSize::W32) => 512,
        (Generation::Gfx11, WaveSize::W64) => 256,
    }
}

/// `ceil(max(1, vgprs) / granule) − 1`.
pub fn granulated_vgpr_count(target: Target, vgprs: u32) -> u32 {
    vgprs.max(1).div_ceil(vgpr_granule(target)) - 1
}

/// `ceil(max(1, sgprs) / 8) − 1` on gfx9; 0 on gfx10+ (the field is ignored there).
pub fn granulated_sgpr_count(generation: Generation, sgprs: u32) -> u32 {
    match generation {
        Generation::Gfx9 => sgprs.max(1).div_ceil(8) - 1,
        Generation::Gfx11 => 0,
    }
}

/// The first AGPR's index in the unified register file: `alignTo(max(1, vgprs), 4)`.
pub fn accum_offset(num_vgpr: u32) -> u32 {
    num_vgpr.max(1).div_ceil(4) * 4
}

/// The `ACCUM_OFFSET` field: `accum_offset / 4 − 1`.
pub fn accum_offset_field(num_vgpr: u32) -> u32 {
    accum_offset(num_vgpr) / 4 - 1
}

/// VGPRs allocated per work-item: on AGPR targets with AGPRs in use, the unified
/// total `accum_offset + num_agpr`; else `num_vgpr` (this is also the metadata's
/// `.vgpr_count`).
pub fn total_vgpr_count(gpu: Gpu, num_vgpr: u32, num_agpr: u32) -> u32 {
    if gpu.has_agprs() && num_agpr > 0 {
        accum_offset(num_vgpr) + num_agpr
    } else {
        num_vgpr
    }
}

/// SGPRs allocated (`.sgpr_count` in the metadata): `next_free_sgpr` plus the
/// SGPRs the hardware reserves at the top (gfx90a: VCC 2 + XNACK mask 2 + flat
/// scratch 2 when used; gfx942: always 6 with architected flat scratch; gfx11:
/// VCC 2 when used).
pub fn sgpr_count(
    target: Target,
    next_free_sgpr: u32,
    uses_vcc: bool,
    uses_flat_scratch: bool,
    xnack: bool,
) -> u32 {
    let extra = match target.gpu {
        Gpu::Gfx90a => {
            if uses_flat_scratch {
                6
            } else if xnack {
                4
            } else if uses_vcc {
                2
            } else {
                0
            }
        }
        Gpu::Gfx942 => 6,
        Gpu::Gfx1100 => {
            if uses_vcc {
                2
            } else {
                0
            }
        }
    };
    next_free_sgpr + extra
}

/// gfx11 `INST_PREF_SIZE`: `ceil(code bytes / 128)`, saturated to the 6-bit field.
pub fn inst_pref_size(code_bytes: u32) -> u32 {
    code_bytes.div_ceil(128).min(63)
}

/// The gfx1100/gfx1102 wave32 hardware bug (LLVM `FeatureUserSGPRInit16Bug`):
/// user plus required system SGPRs must be at least 16, so the user SGPR count is
/// padded.
pub fn has_user_sgpr_init16_bug(target: Target) -> bool {
    target.gpu == Gpu::Gfx1100 && target.wave == WaveSize::W32
}

/// `USER_SGPR_COUNT`: the enabled inputs plus preloaded kernarg dwords, padded on
/// targets with [`has_user_sgpr_init16_bug`]. System SGPRs (workgroup ids, ...)
/// start right after this many user SGPRs.
pub fn user_sgpr_count(
    target: Target,
    props: &KernelCodeProperties,
    preload_dwords: u8,
    rsrc2: &ComputePgmRsrc2,
) -> u32 {
    let user = props.user_sgprs() + u32::from(preload_dwords);
    if has_user_sgpr_init16_bug(target) {
        let system = rsrc2.system_sgpr_count(target.gpu);
        user.max(16u32.saturating_sub(system))
    } else {
        user
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(gpu: Gpu) -> Target {
        Target::new(gpu)
    }

    #[test]
    fn granules_match_the_research_probe() {
        // code-object.md §7.5: N = 9 / 33 / 256 / 512 → 1 / 4 / 31 / 63 (granule 8);
        // gfx1100 wave64 N = 9 / 33 / 256 → 2 / 8 / 63.
        for (n, g) in [
            (9, 1),
            (33, 4),
            (256, 31),
            (512, 63),
            (0, 0),
            (1, 0),
            (8, 0),
        ] {
            assert_eq!(granulated_vgpr_count(t(Gpu::Gfx90a), n), g);
        }
        let w64 = Target::with_wave(Gpu::Gfx1100, WaveSize::W64).unwrap();
        for (n, g) in [(9, 2), (33, 8), (256, 63)] {
            assert_eq!(granulated_vgpr_count(w64, n), g);
        }
        assert_eq!(granulated_sgpr_count(Generation::Gfx9, 37), 4);
        assert_eq!(granulated_sgpr_count(Generation::Gfx11, 37), 0);
        assert_eq!(accum_offset(18), 20);
        assert_eq!(accum_offset_field(18), 4);
        assert_eq!(total_vgpr_count(Gpu::Gfx90a, 1, 4), 8);
    }

    #[test]
    fn k4_call_descriptors_from_the_research_note() {
        // §7.6 worked bytes: k4_call gfx90a: rsrc1 0x00af0102, rsrc2 0x8d, rsrc3 0x4, props 0x0009.
        let res = KernelResources {
            num_vgpr: 18,
            num_sgpr: 33,
            xnack_enabled: true,
            private_segment_fixed_size: 68,
            kernarg_size: 20,
            user_sgprs: KernelCodeProperties {
                enable_sgpr_private_segment_buffer: true,
                enable_sgpr_kernarg_segment_ptr: true,
                ..Default::default()
            },
            ..KernelResources::default()
        };
        let d = KernelDescriptor::for_kernel(t(Gpu::Gfx90a), &res).unwrap();
        assert_eq!(d.compute_pgm_rsrc1.to_bits().unwrap(), 0x00af0102);
        assert_eq!(d.compute_pgm_rsrc2.to_bits().unwrap(), 0x8d);
        assert_eq!(d.compute_pgm_rsrc3.to_bits().unwrap(), 0x4);
        assert_eq!(d.kernel_code_properties.to_bits(), 0x9);

        // gfx942: rsrc2 0x85, props 0x0008 (SGPR field: 33 + 6 = 39 → 4).
        let res942 = KernelResources {
            user_sgprs: KernelCodeProperties {
                enable_sgpr_kernarg_segment_ptr: true,
                ..Default::default()
            },
            ..res.clone()
        };
        let d = KernelDescriptor::for_kernel(t(Gpu::Gfx942), &res942).unwrap();
        assert_eq!(d.compute_pgm_rsrc1.to_bits().unwrap(), 0x00af0102);
        assert_eq!(d.compute_pgm_rsrc2.to_bits().unwrap(), 0x85);
        assert_eq!(d.kernel_code_properties.to_bits(), 0x8);

        // gfx1100: rsrc3 0x10 (inst_pref 1), rsrc1 0xe0af0002, rsrc2 0x9f, props 0x0408.
        let res1100 = KernelResources {
            code_size: 100,
            xnack_enabled: false,
            ..res942
        };
        let d = KernelDescriptor::for_kernel(t(Gpu::Gfx1100), &res1100).unwrap();
        assert_eq!(d.compute_pgm_rsrc3.to_bits().unwrap(), 0x10);
        assert_eq!(d.compute_pgm_rsrc1.to_bits().unwrap(), 0xe0af0002);
        assert_eq!(d.compute_pgm_rsrc2.to_bits().unwrap(), 0x9f);
        assert_eq!(d.kernel_code_properties.to_bits(), 0x408);
    }

    #[test]
    fn encode_decode_round_trip() {
        for gpu in Gpu::ALL {
            let mut d = KernelDescriptor::for_kernel(t(gpu), &KernelResources::default()).unwrap();
            d.kernel_code_entry_byte_offset = -0x1440;
            d.group_segment_fixed_size = 1024;
            d.compute_pgm_rsrc2.exceptions.ieee_div_zero = true;
            let bytes = d.encode().unwrap();
            assert_eq!(
                KernelDescriptor::decode(&bytes, gpu.generation()).unwrap(),
                d
            );
            assert_eq!(&bytes[0x10..0x18], &(-0x1440i64).to_le_bytes());
        }
        assert_eq!(
            KernelDescriptor::decode(&[0; 63], Generation::Gfx9),
            Err(DescriptorError::WrongSize(63))
        );
    }

    #[test]
    fn user_sgpr_count_agrees_with_the_kernel_abi() {
        use crate::kernel::{initial_state, KernelInputs};
        let targets = [
            t(Gpu::Gfx90a),
            t(Gpu::Gfx942),
            t(Gpu::Gfx1100),
            Target::with_wave(Gpu::Gfx1100, WaveSize::W64).unwrap(),
        ];
        for bits in 0u32..512 {
            let b = |i: u32| bits & (1 << i) != 0;
            let inputs = KernelInputs {
                dispatch_ptr: b(0),
                queue_ptr: b(1),
                kernarg_segment_ptr: b(2),
                dispatch_id: b(3),
                flat_scratch_init: b(4),
                private_segment_size: b(5),
                preload_kernarg_dwords: if b(6) { 3 } else { 0 },
                workgroup_id_x: true,
                workgroup_id_y: b(7),
                workgroup_id_z: b(8),
                workgroup_info: false,
                uses_scratch: b(4),
                workitem_id_dims: (bits % 3) as u8,
            };
            for target in targets {
                let res = KernelResources::from_inputs(target, &inputs);
                let Ok(d) = KernelDescriptor::for_kernel(target, &res) else {
                    // Only kernarg preload on gfx11 is refused, and from_inputs never asks for it there.
                    panic!("{target:?} {inputs:?}");
                };
                let state = initial_state(target, &inputs);
                assert_eq!(
                    u16::from(d.compute_pgm_rsrc2.user_sgpr_count),
                    state.user_sgpr_count,
                    "{target:?} {inputs:?}"
                );
                assert_eq!(
                    d.compute_pgm_rsrc2.enable_private_segment,
                    state.private_segment
                );
            }
        }
    }

    #[test]
    fn rejects_what_the_target_lacks() {
        let res = KernelResources {
            user_sgprs: KernelCodeProperties {
                enable_sgpr_private_segment_buffer: true,
                ..Default::default()
            },
            ..KernelResources::default()
        };
        assert!(KernelDescriptor::for_kernel(t(Gpu::Gfx942), &res).is_err());
        let res = KernelResources {
            num_agpr: 4,
            ..KernelResources::default()
        };
        assert!(KernelDescriptor::for_kernel(t(Gpu::Gfx1100), &res).is_err());
        let res = KernelResources {
            num_vgpr: 513,
            ..KernelResources::default()
        };
        assert!(KernelDescriptor::for_kernel(t(Gpu::Gfx90a), &res).is_err());
        let rsrc1 = ComputePgmRsrc1 {
            granulated_workitem_vgpr_count: 64,
            ..ComputePgmRsrc1::default()
        };
        assert!(rsrc1.to_bits().is_err());
    }
}
