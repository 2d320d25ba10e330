//! An AMDGPU ISA simulator: runs `.hsaco` kernels on the CPU (docs/simulator.md).
//!
//! ```no_run
//! use amdgpu_cg::sim::Simulator;
//! let hsaco = std::fs::read("vadd.hsaco").unwrap();
//! let mut sim = Simulator::new();
//! let co = sim.load(&hsaco).unwrap();
//! let a = sim.alloc("a", vec![0u8; 4 * 256]);
//! let mut kernarg = Vec::new();
//! kernarg.extend_from_slice(&a.to_le_bytes());
//! let stats = sim.dispatch(&co, "vadd", [256, 1, 1], [64, 1, 1], &kernarg).unwrap();
//! println!("{stats}");
//! ```
//!
//! * [`Simulator`] owns the device memory ([`Device`]): `alloc` maps host bytes at a
//!   device address, `read` returns them after the run.
//! * [`Simulator::load`] maps a code object; [`Simulator::dispatch`] runs one of its
//!   kernels over a grid (work-items per dimension) in work-groups of `block`.
//! * Every failure is a [`SimError`] naming the wave, the PC (as `function+offset`)
//!   and the instruction.

pub mod decode;
pub mod dispatch;
pub mod float;
pub mod hazards;
pub mod mem;
pub mod memory;
pub mod operands;
pub mod salu;
pub mod state;
pub mod valu;
pub mod waitcnt;
mod cli;

use std::fmt;
use std::rc::Rc;
use std::time::{Duration, Instant};

use amdgpu_isa::{Generation, Operand, Target, WaveSize};

use crate::codeobj::{self, LoadedCodeObject};

pub use cli::{run_launch, run_launch_with, sim_command};
pub use decode::{DInst, Sem, EXTRA_INSTRUCTIONS};
pub use memory::{Device, MemFault};
use state::{Wave, WaveStatus};

/// Where a code object is mapped (its ELF virtual addresses are added to this).
pub const CODE_BASE: u64 = 0x0000_7f00_0000_0000;
/// Base of the scratch (private segment) area.
pub const SCRATCH_ROOT: u64 = 0x0000_6000_0000_0000;

/// What a wave does after an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    Next,
    Jump(u64),
    Barrier,
    End,
}

/// Class of a simulation error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The code object cannot be loaded or the kernel is not in it.
    Load,
    /// A readable code object for a processor the simulator does not model.
    UnsupportedTarget,
    /// The bytes at the PC are not an instruction the decoder knows.
    Decode,
    /// Decoded, but the simulator has no semantics for it.
    Unimplemented,
    /// A register was read before the `s_waitcnt` its load requires.
    Waitcnt,
    /// A data hazard that needs `s_nop`/independent instructions.
    Hazard,
    /// Out-of-bounds or read-only memory access.
    Memory,
    /// Two waves of a work-group access the same LDS dword between the same two
    /// barriers, one of them writing (`Options::check_lds_races`).
    Race,
    /// A register was read before anything wrote it (with `check_uninit`).
    Uninitialized,
    /// A register beyond the descriptor's VGPR/AGPR/SGPR allocation.
    Allocation,
    /// The instruction budget ran out.
    Budget,
    /// Anything else (bad launch parameters, s_trap, PC outside the code).
    Other,
}

/// A simulation error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimError {
    pub kind: ErrorKind,
    pub message: String,
    /// Work-group id and wave index within it.
    pub wave: Option<([u32; 3], u32)>,
    /// PC as `function+0xoffset`.
    pub at: Option<String>,
    /// The instruction, in LLVM syntax.
    pub inst: Option<String>,
}

impl SimError {
    fn new(kind: ErrorKind, message: impl Into<String>) -> SimError {
        SimError { kind, message: message.into(), wave: None, at: None, inst: None }
    }
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some((g, w)) = self.wave {
            write!(f, "wave {w} of work-group ({}, {}, {})", g[0], g[1], g[2])?;
        }
        if let Some(at) = &self.at {
            write!(f, " at {at}")?;
        }
        if let Some(i) = &self.inst {
            write!(f, " `{i}`")?;
        }
        if self.wave.is_some() || self.at.is_some() {
            write!(f, ": ")?;
        }
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for SimError {}

/// Checks and limits.
#[derive(Clone, Debug)]
pub struct Options {
    /// Report reads of registers nothing has written (off by default: LLVM's code
    /// legitimately copies undefined registers, e.g. when saving callee-saved ones).
    pub check_uninit: bool,
    /// Check the data hazards listed in [`hazards`].
    pub check_hazards: bool,
    /// Within `check_hazards`: gfx942's missing VALU→SGPR→VALU interlocks (VALU
    /// writes an SGPR/VCC/EXEC or a VGPR that a VALU, `v_readlane` or
    /// `v_readfirstlane` reads within 2/1/4 wait states; LLVM's
    /// `hasVDecCoExecHazard`). On by default; a separate switch because our code
    /// generator does not avoid them yet.
    pub check_gfx942_valu_sgpr_hazards: bool,
    /// Stop after this many instructions (all waves together).
    pub max_instructions: u64,
    /// Report LDS data races between the waves of a work-group (see
    /// [`mem::LdsRaces`]).
    pub check_lds_races: bool,
    /// LDS alignment mode. Off (the default) models the unaligned mode that
    /// ROCm programs into SH_MEM_CONFIG on gfx9 and later, where LDS loads and
    /// stores may be at any byte address (llc-22 relies on it for `align 1`
    /// accesses); atomics must still be naturally aligned. On: every access
    /// must be aligned to its size (at most 4), the hardware's dword mode.
    pub strict_lds_alignment: bool,
    /// LDS bytes per work-group the launch adds to the kernel's own (the
    /// runtime's dynamic group segment size: in the packet, the hidden
    /// `dynamic_lds_size` argument and the LDS the work-groups get).
    pub dynamic_lds_bytes: u32,
    /// The launch's global offset, in the hidden global-offset arguments.
    pub global_offset: [u32; 3],
    /// The hidden grid-dimensions argument; None: the highest dimension with
    /// more than one work-item (as the dispatch packet's `setup` field).
    pub work_dim: Option<u32>,
    /// The device address the hidden printf-buffer argument holds (0: none).
    pub printf_buffer: u64,
    /// Print every instruction executed to stderr.
    pub trace: bool,
    /// Register snapshots taken when a wave reaches one of the watched
    /// addresses, before the instruction there runs (for ABI conformance tests:
    /// where arguments are at a callee's entry, what survives a call).
    pub watch: Option<std::rc::Rc<std::cell::RefCell<Watch>>>,
}

/// Device addresses to watch and the snapshots taken there.
#[derive(Clone, Debug, Default)]
pub struct Watch {
    pub addresses: Vec<u64>,
    pub hits: Vec<Snapshot>,
}

/// A wave's registers just before the instruction at `pc` ran.
#[derive(Clone, Debug)]
pub struct Snapshot {
    pub pc: u64,
    /// Work-group id and the wave's index within it.
    pub group: [u32; 3],
    pub wave: u32,
    pub lanes: u32,
    pub exec: u64,
    pub sgpr: Vec<u32>,
    /// `vgpr[reg * lanes + lane]`.
    pub vgpr: Vec<u32>,
    /// The wave's private memory (empty without scratch), swizzled as the
    /// hardware lays it out.
    pub scratch: Vec<u8>,
    /// The device address of that memory (what a buffer-scratch V# must hold).
    pub scratch_base: u64,
}

impl Snapshot {
    pub fn v(&self, reg: u16, lane: u32) -> u32 {
        self.vgpr[reg as usize * self.lanes as usize + lane as usize]
    }

    /// `n` (at most 8) bytes of a lane's private memory at per-lane byte
    /// `offset`, little-endian; None outside the wave's private memory.
    pub fn private(&self, lane: u32, offset: u64, n: usize) -> Option<u64> {
        let mut value = 0u64;
        for k in 0..n.min(8) as u64 {
            let at = memory::swizzle(offset + k, lane, self.lanes) as usize;
            value |= u64::from(*self.scratch.get(at)?) << (8 * k);
        }
        Some(value)
    }
}

impl Default for Options {
    fn default() -> Options {
        Options {
            check_uninit: false,
            check_hazards: true,
            check_gfx942_valu_sgpr_hazards: true,
            max_instructions: 500_000_000,
            check_lds_races: true,
            strict_lds_alignment: false,
            dynamic_lds_bytes: 0,
            global_offset: [0; 3],
            work_dim: None,
            printf_buffer: 0,
            trace: false,
            watch: None,
        }
    }
}

/// Counts of one dispatch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Instructions executed (per wave, summed over waves).
    pub instructions: u64,
    pub waves: u64,
    pub workgroups: u64,
    pub wall: Duration,
}

impl Stats {
    /// Simulated instructions per second of wall time.
    pub fn throughput(&self) -> f64 {
        self.instructions as f64 / self.wall.as_secs_f64().max(1e-9)
    }
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} instructions, {} waves, {} work-groups, {:.3} ms ({:.2} M instructions/s)",
            self.instructions,
            self.waves,
            self.workgroups,
            self.wall.as_secs_f64() * 1e3,
            self.throughput() / 1e6
        )
    }
}

/// A code object mapped into device memory.
#[derive(Clone, Debug)]
pub struct CodeObject {
    pub loaded: LoadedCodeObject,
    pub target: Target,
    /// Device address of the image's virtual address 0.
    pub base: u64,
    /// The image (all PT_LOAD segments), from virtual address 0.
    pub image: Vec<u8>,
}

impl CodeObject {
    /// `function+0xoffset` for a device address.
    pub fn locate(&self, pc: u64) -> String {
        let va = pc.wrapping_sub(self.base);
        for f in &self.loaded.functions {
            if va >= f.address && va < f.address + f.size.max(1) {
                return format!("{}+{:#x}", f.name, va - f.address);
            }
        }
        format!("{pc:#x}")
    }
}

/// The simulator: device memory plus options.
#[derive(Debug, Default)]
pub struct Simulator {
    pub device: Device,
    pub options: Options,
    /// Code objects loaded (each gets its own 4 GiB window above `CODE_BASE`).
    loads: u64,
    /// Dispatches started (the dispatch id).
    dispatches: u64,
    /// Decoded instructions of each loaded code object and wave size, kept
    /// across dispatches (a code object's bytes never change once loaded).
    decoded: hashbrown::HashMap<(u64, u32), Vec<Option<Rc<DInst>>>>,
}

/// The image of a linked code object (all PT_LOAD segments from virtual
/// address 0) and the address ranges kernels may write: PT_LOAD segments
/// with PF_W outside PT_GNU_RELRO (`.data` and `.bss`: program-scope
/// `__global` variables; `.dynamic` is read-only once loaded).
fn image_of(data: &[u8]) -> Result<(Vec<u8>, Vec<std::ops::Range<usize>>), String> {
    use object::read::elf::{ElfFile64, FileHeader as _, ProgramHeader as _};
    use object::Endianness;
    let file = ElfFile64::<Endianness>::parse(data).map_err(|e| e.to_string())?;
    let endian = file.endian();
    let mut image = Vec::new();
    let mut writable = Vec::new();
    let mut relro = Vec::new();
    let headers = file.elf_header().program_headers(endian, data).map_err(|e| e.to_string())?;
    for ph in headers {
        let va = ph.p_vaddr(endian) as usize;
        let mem = ph.p_memsz(endian) as usize;
        if ph.p_type(endian) == object::elf::PT_GNU_RELRO {
            relro.push(va..va.saturating_add(mem));
        }
        if ph.p_type(endian) != object::elf::PT_LOAD {
            continue;
        }
        if va + mem > 1 << 30 {
            return Err("PT_LOAD segment beyond 1 GiB".into());
        }
        let bytes = ph.data(endian, data).map_err(|_| "bad PT_LOAD segment".to_string())?;
        let end = va + mem.max(bytes.len());
        if end > 1 << 30 {
            return Err("PT_LOAD segment beyond 1 GiB".into());
        }
        if image.len() < end {
            image.resize(end, 0);
        }
        image[va..va + bytes.len()].copy_from_slice(bytes);
        if ph.p_flags(endian) & object::elf::PF_W != 0 {
            writable.push(va..end);
        }
    }
    if image.is_empty() {
        // A relocatable object: map its sections at their addresses (0-based).
        return Err("the code object has no PT_LOAD segments (link it with ld.lld -shared)".into());
    }
    writable.retain(|w| !relro.iter().any(|r| r.start <= w.start && w.end <= r.end));
    writable.sort_by_key(|w| w.start);
    Ok((image, writable))
}

/// Applies the code object's dynamic relocations (`DT_RELA`) to its image
/// loaded at `base`, as the ROCm loader does: `R_AMDGPU_RELATIVE64` writes
/// base + addend, `R_AMDGPU_ABS64` the symbol's address + addend (addresses
/// held in program-scope data). Other types are refused.
fn relocate(data: &[u8], image: &mut [u8], base: u64) -> Result<(), String> {
    use object::read::elf::{Dyn as _, ElfFile64, FileHeader as _, ProgramHeader as _, Rela as _, Sym as _};
    use object::Endianness;
    let file = ElfFile64::<Endianness>::parse(data).map_err(|e| e.to_string())?;
    let endian = file.endian();
    let headers = file.elf_header().program_headers(endian, data).map_err(|e| e.to_string())?;
    let Some(dynamic) = headers.iter().find(|ph| ph.p_type(endian) == object::elf::PT_DYNAMIC) else { return Ok(()) };
    let entries = dynamic.dynamic(endian, data).map_err(|_| "bad PT_DYNAMIC segment".to_string())?.unwrap_or(&[]);
    let (mut rela, mut relasz, mut symtab) = (None, 0u64, None);
    for d in entries {
        match d.tag32(endian) {
            Some(object::elf::DT_RELA) => rela = Some(d.d_val(endian)),
            Some(object::elf::DT_RELASZ) => relasz = d.d_val(endian),
            Some(object::elf::DT_SYMTAB) => symtab = Some(d.d_val(endian)),
            Some(object::elf::DT_RELAENT) if d.d_val(endian) != 24 => return Err("DT_RELAENT is not 24".into()),
            _ => {}
        }
    }
    let Some(rela) = rela else { return Ok(()) };
    let bytes_at = |image: &[u8], va: u64, len: u64| -> Result<Vec<u8>, String> {
        let end = va.checked_add(len).filter(|&e| e <= image.len() as u64).ok_or_else(|| format!("dynamic relocation data at {va:#x} is outside the image"))?;
        Ok(image[va as usize..end as usize].to_vec())
    };
    let table = bytes_at(image, rela, relasz)?;
    let relocs: &[object::elf::Rela64<Endianness>] = object::pod::slice_from_all_bytes(&table).map_err(|_| "DT_RELASZ is not a multiple of 24".to_string())?;
    for r in relocs {
        let (offset, r_type, addend) = (r.r_offset(endian), r.r_type(endian, false), r.r_addend(endian) as u64);
        let value = match r_type {
            crate::codeobj::R_AMDGPU_RELATIVE64 => base.wrapping_add(addend),
            crate::codeobj::R_AMDGPU_ABS64 => {
                let symtab = symtab.ok_or("an R_AMDGPU_ABS64 relocation without DT_SYMTAB")?;
                let index = u64::from(r.r_sym(endian, false));
                let sym_bytes = bytes_at(image, symtab + index * 24, 24)?;
                let sym: &object::elf::Sym64<Endianness> = object::pod::from_bytes(&sym_bytes).map_err(|_| "bad symbol".to_string())?.0;
                if sym.st_shndx(endian) == object::elf::SHN_UNDEF {
                    return Err(format!("R_AMDGPU_ABS64 at {offset:#x} against an undefined symbol"));
                }
                base.wrapping_add(sym.st_value(endian)).wrapping_add(addend)
            }
            t => return Err(format!("dynamic relocation type {t} at {offset:#x} (the simulator applies R_AMDGPU_RELATIVE64 and R_AMDGPU_ABS64)")),
        };
        let at = offset.checked_add(8).filter(|&e| e <= image.len() as u64).ok_or_else(|| format!("dynamic relocation at {offset:#x} is outside the image"))?;
        image[offset as usize..at as usize].copy_from_slice(&value.to_le_bytes());
    }
    Ok(())
}

/// Cuts `image` into mappings: read-only between the `writable` ranges
/// (sorted), writable on them; each (offset, bytes, writable).
fn split_image(image: &[u8], writable: &[std::ops::Range<usize>]) -> Vec<(usize, Vec<u8>, bool)> {
    let mut parts = Vec::new();
    let mut at = 0;
    for w in writable {
        let (start, end) = (w.start.max(at), w.end.min(image.len()));
        if start >= end {
            continue;
        }
        if at < start {
            parts.push((at, image[at..start].to_vec(), false));
        }
        parts.push((start, image[start..end].to_vec(), true));
        at = end;
    }
    if at < image.len() {
        parts.push((at, image[at..].to_vec(), false));
    }
    parts
}

impl Simulator {
    pub fn new() -> Simulator {
        Simulator { device: Device::new(), options: Options::default(), loads: 0, dispatches: 0, decoded: Default::default() }
    }

    /// Maps `data` at a fresh device address.
    pub fn alloc(&mut self, name: &str, data: Vec<u8>) -> u64 {
        self.device.alloc(name, data)
    }

    /// The current contents of the allocation at `addr`.
    pub fn read(&self, addr: u64) -> Option<&[u8]> {
        self.device.bytes(addr)
    }

    /// Loads a code object and maps its image into device memory: read-only
    /// but for its writable data segments.
    pub fn load(&mut self, hsaco: &[u8]) -> Result<CodeObject, SimError> {
        let loaded = codeobj::read(hsaco).map_err(|e| SimError::new(ErrorKind::Load, format!("cannot read the code object: {e}")))?;
        let (mut image, writable) = image_of(hsaco).map_err(|e| SimError::new(ErrorKind::Load, e))?;
        let base = CODE_BASE + self.loads * 0x1_0000_0000;
        relocate(hsaco, &mut image, base).map_err(|e| SimError::new(ErrorKind::Load, e))?;
        self.loads += 1;
        for (offset, bytes, writable) in split_image(&image, &writable) {
            let name = if writable { "code object data" } else { "code object" };
            self.device.map_at(name, base + offset as u64, bytes, writable).map_err(|e| SimError::new(ErrorKind::Load, e))?;
        }
        let target = match loaded.target {
            Some(t) => t.target,
            None => {
                return Err(SimError::new(
                    ErrorKind::UnsupportedTarget,
                    format!(
                        "the code object is for {}, which the simulator does not model (it runs gfx90a, gfx942 and gfx1100 code, and gfx9-4-generic and gfx11-generic code as gfx942 and gfx1100)",
                        loaded.processor.processor_with_features()
                    ),
                ))
            }
        };
        Ok(CodeObject { loaded, target, base, image })
    }

    /// Runs `kernel` over `grid` work-items (per dimension) in work-groups of `block`.
    /// `kernarg` holds the explicit arguments; the hidden ones are appended.
    pub fn dispatch(&mut self, co: &CodeObject, kernel: &str, grid: [u32; 3], block: [u32; 3], kernarg: &[u8]) -> Result<Stats, SimError> {
        let start = Instant::now();
        self.dispatches += 1;
        let k = co
            .loaded
            .kernels
            .iter()
            .find(|k| k.name == kernel || k.descriptor_symbol.trim_end_matches(".kd") == kernel)
            .ok_or_else(|| {
                let names: Vec<&str> = co.loaded.kernels.iter().map(|k| k.name.as_str()).collect();
                SimError::new(ErrorKind::Load, format!("no kernel '{kernel}' in the code object (kernels: {})", names.join(", ")))
            })?;
        let kd = k.descriptor;
        let wave = if kd.kernel_code_properties.enable_wavefront_size32 { WaveSize::W32 } else { WaveSize::W64 };
        let target = Target::with_wave(co.target.gpu, wave)
            .ok_or_else(|| SimError::new(ErrorKind::Load, format!("{} cannot run wave{}", co.target.gpu, wave.lanes())))?;
        let other = |m: String| SimError::new(ErrorKind::Other, m);
        if block.contains(&0) || grid.contains(&0) {
            return Err(other("grid and block sizes must be positive".into()));
        }
        let threads_per_group = block[0] as u64 * block[1] as u64 * block[2] as u64;
        if threads_per_group > 1024 {
            return Err(other(format!("work-group of {threads_per_group} work-items (at most 1024)")));
        }
        if let Some(md) = &k.metadata {
            if threads_per_group > md.max_flat_workgroup_size as u64 && md.max_flat_workgroup_size > 0 {
                return Err(other(format!("work-group of {threads_per_group} exceeds the kernel's max_flat_workgroup_size {}", md.max_flat_workgroup_size)));
            }
            // As the runtime refuses a launch that breaks the requirement.
            if let Some(r) = md.reqd_workgroup_size {
                if r != block {
                    return Err(other(format!("work-group size {block:?} differs from the kernel's .reqd_workgroup_size {r:?}")));
                }
            }
        }
        let dynamic_lds = self.options.dynamic_lds_bytes;
        if u64::from(kd.group_segment_fixed_size) + u64::from(dynamic_lds) > 65536 {
            return Err(other(format!("{} bytes of LDS per work-group ({} static, {dynamic_lds} dynamic), more than 65536", kd.group_segment_fixed_size + dynamic_lds, kd.group_segment_fixed_size)));
        }
        let r1 = kd.compute_pgm_rsrc1;
        use amdgpu_abi::descriptor::{FloatDenormMode, FloatRoundMode};
        if r1.float_round_mode_32 != FloatRoundMode::NearEven || r1.float_round_mode_16_64 != FloatRoundMode::NearEven {
            return Err(SimError::new(ErrorKind::Unimplemented, "the descriptor asks for a rounding mode other than round-to-nearest-even (not modelled)"));
        }
        if !matches!(r1.float_denorm_mode_32, FloatDenormMode::FlushNone | FloatDenormMode::FlushSrcDst) || r1.float_denorm_mode_16_64 != FloatDenormMode::FlushNone {
            return Err(SimError::new(
                ErrorKind::Unimplemented,
                format!("denormal modes f32 {:?} / f16,f64 {:?} are not modelled (f32 keep or flush-all, f64 keep)", r1.float_denorm_mode_32, r1.float_denorm_mode_16_64),
            ));
        }
        let ftz = r1.float_denorm_mode_32 == FloatDenormMode::FlushSrcDst;
        let lanes = target.wave.lanes();
        // Device objects of the dispatch.
        let queue = self.device.alloc("queue", vec![0u8; 256]);
        let hidden = dispatch::HiddenValues { grid, block, queue, dynamic_lds, offset: self.options.global_offset, work_dim: self.options.work_dim, printf_buffer: self.options.printf_buffer };
        let kernarg_seg = dispatch::kernarg_segment(kernarg, k.metadata.as_ref(), &kd, &hidden).map_err(other)?;
        let kernarg_addr = self.device.alloc_readonly("kernarg segment", kernarg_seg.clone());
        let kernel_object = co.base + k.descriptor_address;
        let packet_addr = self.device.alloc_readonly("dispatch packet", dispatch::packet(grid, block, self.options.work_dim.unwrap_or_else(|| crate::mir::interp::default_work_dim(grid)) as u16, &kd, kernel_object, kernarg_addr, dynamic_lds));
        let mut lane_size = kd.private_segment_fixed_size as u64;
        if kd.kernel_code_properties.uses_dynamic_stack {
            lane_size += 16 * 1024;
        }
        let lane_size = lane_size.div_ceil(4) * 4;
        let waves_per_group = threads_per_group.div_ceil(lanes as u64) as u32;
        let wave_bytes = lane_size * lanes as u64;
        let wave_stride = (wave_bytes.div_ceil(0x1_0000) + 1) * 0x1_0000;
        let mut scratch_regions = Vec::new();
        if lane_size > 0 {
            for i in 0..waves_per_group as u64 {
                let base = SCRATCH_ROOT + i * wave_stride;
                self.device.map_at("scratch", base, vec![0u8; wave_bytes as usize], true).map_err(other)?;
                scratch_regions.push(base);
            }
        }
        let info = dispatch::DispatchInfo { packet: packet_addr, queue, kernarg: kernarg_addr, dispatch_id: self.dispatches, scratch_root: SCRATCH_ROOT, lane_size };
        let limits = dispatch::register_limits(&kd, target);
        let groups = [grid[0].div_ceil(block[0]), grid[1].div_ceil(block[1]), grid[2].div_ceil(block[2])];
        let mut stats = Stats::default();
        let mut cache = self.decoded.remove(&(co.base, lanes)).filter(|c| c.len() == co.image.len() / 4 + 1).unwrap_or_else(|| vec![None; co.image.len() / 4 + 1]);
        let entry = co.base + k.entry_address;
        let result = (|| -> Result<(), SimError> {
            for gz in 0..groups[2] {
                for gy in 0..groups[1] {
                    for gx in 0..groups[0] {
                        let g = [gx, gy, gz];
                        let size: Vec<u32> = (0..3).map(|d| block[d].min(grid[d] - g[d] * block[d])).collect();
                        let mut tids = Vec::new();
                        for z in 0..size[2] {
                            for y in 0..size[1] {
                                for x in 0..size[0] {
                                    tids.push([x, y, z]);
                                }
                            }
                        }
                        let mut waves = Vec::new();
                        for (wi, chunk) in tids.chunks(lanes as usize).enumerate() {
                            let mut w = Wave::new(stats.waves as u32, wi as u32, target);
                            w.pc = entry;
                            w.scratch_lane_size = lane_size;
                            let off = scratch_regions.get(wi).map_or(0, |b| b - SCRATCH_ROOT);
                            w.scratch_base = SCRATCH_ROOT + off;
                            (w.vgpr_limit, w.agpr_limit, w.sgpr_limit) = limits;
                            dispatch::init_wave(&mut w, &kd, &info, &kernarg_seg, g, chunk, off).map_err(other)?;
                            waves.push(w);
                            stats.waves += 1;
                        }
                        let mut lds = vec![0u8; (kd.group_segment_fixed_size + dynamic_lds) as usize];
                        run_group(&mut waves, &mut lds, co, &mut cache, &mut self.device, &self.options, ftz, &mut stats, g)?;
                        stats.workgroups += 1;
                    }
                }
            }
            Ok(())
        })();
        for b in scratch_regions {
            self.device.free(b);
        }
        self.device.free(queue);
        self.device.free(kernarg_addr);
        self.device.free(packet_addr);
        self.decoded.insert((co.base, lanes), cache);
        result?;
        stats.wall = start.elapsed();
        Ok(stats)
    }
}

const QUANTUM: u32 = 64;

#[allow(clippy::too_many_arguments)]
fn run_group(
    waves: &mut [Wave],
    lds: &mut [u8],
    co: &CodeObject,
    cache: &mut [Option<Rc<DInst>>],
    dev: &mut Device,
    opts: &Options,
    ftz: bool,
    stats: &mut Stats,
    group: [u32; 3],
) -> Result<(), SimError> {
    let mut races = opts.check_lds_races.then(|| mem::LdsRaces::new(lds.len()));
    loop {
        let mut running = 0;
        for w in waves.iter_mut() {
            if w.status != WaveStatus::Running {
                continue;
            }
            running += 1;
            for _ in 0..QUANTUM {
                if stats.instructions >= opts.max_instructions {
                    return Err(SimError {
                        kind: ErrorKind::Budget,
                        message: format!("instruction budget of {} exhausted", opts.max_instructions),
                        wave: Some((group, w.index)),
                        at: Some(co.locate(w.pc)),
                        inst: None,
                    });
                }
                stats.instructions += 1;
                if let Some(watch) = &opts.watch {
                    let mut watch = watch.borrow_mut();
                    if watch.addresses.contains(&w.pc) {
                        let snapshot = Snapshot {
                            pc: w.pc,
                            group,
                            wave: w.index,
                            lanes: w.lanes,
                            exec: w.exec(),
                            sgpr: w.sgpr.to_vec(),
                            vgpr: w.vgpr.clone(),
                            scratch: dev.bytes(w.scratch_base).map(<[u8]>::to_vec).unwrap_or_default(),
                            scratch_base: w.scratch_base,
                        };
                        watch.hits.push(snapshot);
                    }
                }
                step(w, lds, races.as_mut(), co, cache, dev, opts, ftz).map_err(|mut e| {
                    e.wave = Some((group, w.index));
                    e
                })?;
                if w.status != WaveStatus::Running {
                    break;
                }
            }
        }
        if waves.iter().all(|w| w.status == WaveStatus::Done) {
            return Ok(());
        }
        if running == 0 {
            // Every live wave waits at the barrier: release them.
            if let Some(r) = races.as_mut() {
                r.epoch += 1;
            }
            for w in waves.iter_mut() {
                if w.status == WaveStatus::AtBarrier {
                    w.status = WaveStatus::Running;
                }
            }
        }
    }
}

fn reg_range(o: &Operand) -> Option<(usize, usize)> {
    match o {
        Operand::Reg(r) if r.base.0 < 128 || (256..768).contains(&r.base.0) => Some((r.base.0 as usize, r.size as usize)),
        _ => None,
    }
}

fn check_reads(w: &Wave, d: &DInst, opts: &Options) -> Result<(), (ErrorKind, String)> {
    if w.pending.is_empty() && !opts.check_uninit {
        return Ok(());
    }
    let mut regs: Vec<(usize, usize)> = d.inst.uses.iter().filter_map(reg_range).collect();
    // VOPD v_dual_fmac_f32 accumulates into its destination.
    if let Sem::Dual { x, y, .. } = d.sem {
        for h in [x, y] {
            if h.op == decode::DualOp::FmacF32 {
                regs.extend(reg_range(&Operand::v(h.dst, 1)));
            }
        }
    }
    if let Sem::N(n) = d.sem {
        use decode::N;
        // Read-modify-write destinations.
        if matches!(n, N::v_mac_f32 | N::v_fmac_f32 | N::s_addk_i32 | N::s_mulk_i32 | N::s_bitset0_b32 | N::s_bitset1_b32) {
            regs.extend(d.inst.defs.iter().filter_map(reg_range));
        }
        let mask = if w.wave64() { 2 } else { 1 };
        if matches!(n, N::v_fmac_f64) {
            regs.extend(d.inst.defs.iter().filter_map(reg_range));
        }
        if matches!(n, N::v_div_fmas_f32 | N::v_div_fmas_f64 | N::s_cbranch_vccz | N::s_cbranch_vccnz) {
            regs.push((106, mask));
        }
    }
    if !w.pending.is_empty() {
        for &(s, n) in &regs {
            if let Some(op) = w.pending.writer(s, n) {
                let (vm, lgkm, vs) = w.pending.counts();
                return Err((
                    ErrorKind::Waitcnt,
                    format!(
                        "reads {} before `{}` (at {:#x}) has returned it: missing s_waitcnt (outstanding: vmcnt {vm}, lgkmcnt {lgkm}{})",
                        reg_name(s, n, w.target),
                        op.text,
                        op.pc,
                        if w.gen() == Generation::Gfx11 { format!(", vscnt {vs}") } else { String::new() }
                    ),
                ));
            }
        }
        let is_mem = matches!(d.sem, Sem::Smem { .. } | Sem::Ds(_) | Sem::Vmem { .. });
        if !is_mem {
            for (s, n) in d.inst.defs.iter().filter_map(reg_range) {
                if let Some(op) = w.pending.writer(s, n) {
                    return Err((
                        ErrorKind::Waitcnt,
                        format!("overwrites {} that `{}` (at {:#x}) has not written yet: missing s_waitcnt", reg_name(s, n, w.target), op.text, op.pc),
                    ));
                }
            }
        }
    }
    if opts.check_uninit {
        for &(s, n) in &regs {
            for r in s..s + n {
                if r < w.written.len() && !w.written[r] && r != 124 && r != 253 {
                    return Err((ErrorKind::Uninitialized, format!("reads {} which nothing has written", reg_name(r, 1, w.target))));
                }
            }
        }
    }
    Ok(())
}

/// Registers beyond what the kernel descriptor allocates.
fn check_allocation(w: &Wave, d: &DInst) -> Result<(), String> {
    for o in d.inst.defs.iter().chain(&d.inst.uses) {
        let Operand::Reg(r) = o else { continue };
        let (b, n) = (r.base.0, r.size as u16);
        let (idx, limit, what) = if (256..512).contains(&b) {
            (b - 256, w.vgpr_limit, "VGPRs")
        } else if b >= 512 {
            (b - 512, w.agpr_limit, "AGPRs")
        } else if b < 102 {
            (b, w.sgpr_limit, "SGPRs")
        } else {
            continue;
        };
        if idx + n > limit {
            return Err(format!(
                "uses {} but the kernel descriptor allocates only {limit} {what}",
                reg_name(b as usize, n as usize, w.target)
            ));
        }
    }
    Ok(())
}

fn reg_name(s: usize, n: usize, t: Target) -> String {
    let base = amdgpu_isa::PhysReg(s as u16);
    amdgpu_isa::Reg::new(base, n as u8).name(t.gpu)
}

#[allow(clippy::too_many_arguments)]
fn step(w: &mut Wave, lds: &mut [u8], races: Option<&mut mem::LdsRaces>, co: &CodeObject, cache: &mut [Option<Rc<DInst>>], dev: &mut Device, opts: &Options, ftz: bool) -> Result<(), SimError> {
    let pc = w.pc;
    let at = || Some(co.locate(pc));
    let va = pc.wrapping_sub(co.base);
    if !va.is_multiple_of(4) || va >= co.image.len() as u64 {
        return Err(SimError { kind: ErrorKind::Other, message: format!("PC {pc:#x} is outside the code object"), wave: None, at: at(), inst: None });
    }
    let slot = (va / 4) as usize;
    let d = match &cache[slot] {
        Some(d) => d.clone(),
        None => {
            let d = decode::decode(&co.image[va as usize..], w.target).map_err(|m| SimError {
                kind: if m.starts_with("instruction not implemented") { ErrorKind::Unimplemented } else { ErrorKind::Decode },
                message: m,
                wave: None,
                at: at(),
                inst: None,
            })?;
            let d = Rc::new(d);
            cache[slot] = Some(d.clone());
            d
        }
    };
    let fail = |kind: ErrorKind, message: String| SimError { kind, message, wave: None, at: at(), inst: Some(d.text.clone()) };
    if opts.trace {
        eprintln!("[w{} {}] {}", w.index, co.locate(pc), d.text);
    }
    check_allocation(w, &d).map_err(|m| fail(ErrorKind::Allocation, m))?;
    check_reads(w, &d, opts).map_err(|(k, m)| fail(k, m))?;
    let gpu = w.target.gpu;
    if opts.check_hazards {
        hazards::check(&w.history, &d, gpu, w.wave64(), opts.check_gfx942_valu_sgpr_hazards).map_err(|m| fail(ErrorKind::Hazard, m))?;
    }
    let next = pc + d.len as u64;
    let mut ctx = mem::MemCtx { dev, lds, races, wave: w.index, strict_lds_alignment: opts.strict_lds_alignment };
    let mem_kind = |m: String| {
        let k = if m.starts_with("LDS race") {
            ErrorKind::Race
        } else if m.contains("out-of-bounds") || m.contains("outside") || m.contains("read-only") || m.contains("out of") { ErrorKind::Memory } else if m.contains("s_waitcnt") { ErrorKind::Waitcnt } else { ErrorKind::Other };
        fail(k, m)
    };
    let flow = match d.sem {
        Sem::N(n) => {
            let fmt = d.inst.op.info().format(gpu);
            if fmt.is_salu() {
                salu::exec(w, &d, n, next).map_err(|m| fail(if m.contains("not a scalar") { ErrorKind::Unimplemented } else { ErrorKind::Other }, m))?
            } else {
                valu::exec(w, &d, ftz).map_err(|m| fail(if m.contains("not implemented") { ErrorKind::Unimplemented } else { ErrorKind::Other }, m))?;
                Flow::Next
            }
        }
        Sem::Cmp { .. } | Sem::CmpClass { .. } | Sem::Dual { .. } => {
            valu::exec(w, &d, ftz).map_err(|m| fail(ErrorKind::Other, m))?;
            Flow::Next
        }
        Sem::Smem { dwords, buffer } => {
            mem::smem(w, &d, dwords, buffer, &mut ctx).map_err(mem_kind)?;
            Flow::Next
        }
        Sem::Ds(op) => {
            mem::ds(w, &d, op, &mut ctx).map_err(mem_kind)?;
            Flow::Next
        }
        Sem::Vmem { seg, acc } => {
            mem::vmem(w, &d, seg, acc, &mut ctx).map_err(mem_kind)?;
            Flow::Next
        }
        Sem::Hint => Flow::Next,
        Sem::SendMsg => {
            // MSG_DEALLOC_VGPRS (3) only.
            if d.inst.imm & 0xff != 3 {
                return Err(fail(ErrorKind::Unimplemented, format!("s_sendmsg {:#x} is not modelled", d.inst.imm)));
            }
            Flow::Next
        }
        Sem::CodeEnd => return Err(fail(ErrorKind::Other, "executed s_code_end (ran past the end of the code)".into())),
        Sem::Mov16 { dst_hi, src_hi } => {
            valu::mov16(w, &d, dst_hi, src_hi).map_err(|m| fail(ErrorKind::Unimplemented, m))?;
            Flow::Next
        }
    };
    for (s, n) in d.inst.defs.iter().filter_map(reg_range) {
        for r in s..(s + n).min(w.written.len()) {
            w.written[r] = true;
        }
    }
    if opts.check_hazards {
        let w64 = w.wave64();
        hazards::record(&mut w.history, &d, gpu, w64);
    }
    w.insts += 1;
    match flow {
        Flow::Next => w.pc = next,
        Flow::Jump(t) => w.pc = t,
        Flow::Barrier => {
            w.pc = next;
            w.status = WaveStatus::AtBarrier;
        }
        Flow::End => {
            w.pending.drain();
            w.status = WaveStatus::Done;
        }
    }
    Ok(())
}
