//! AMDHSA code objects: writer and reader (see docs/code-object.md).
//!
//! * [`write_hsaco`] writes a loadable shared object (`ET_DYN`, what `.hsaco`
//!   means), laid out like `ld.lld-22 -shared` output.
//! * [`write_relocatable`] writes an `ET_REL` object that `ld.lld-22 -shared` links
//!   together with objects LLVM produced.
//! * [`read`] loads a code object (ours or LLVM's) and lists its kernels with their
//!   decoded descriptors, metadata and code; [`inspect::summary`] renders it.
//!
//! The input is a [`CodeObject`]: a target, a code object version and a list of
//! [`Function`]s; kernels carry a [`KernelInfo`] (descriptor plus metadata).

pub mod asm;
pub mod bundle;
pub mod frame;
pub mod inspect;
pub mod interface;
pub mod metadata;
pub mod processor;
pub mod reader;
pub mod target;
mod data_layout;
mod writer;

use thiserror::Error;

pub use amdgpu_abi::descriptor::{DescriptorError, KernelDescriptor, KernelResources};
pub use metadata::{Access, HiddenArg, KernelArg, KernelMetadata, Metadata, ValueKind};
pub use reader::{read, LoadedCodeObject, LoadedFunction, LoadedKernel};
pub use processor::{ObjectProcessor, Processor};
pub use target::{CodeObjectTarget, FeatureSetting};
pub use writer::{write_hsaco, write_relocatable};

/// `e_ident[EI_OSABI]` of AMDHSA code objects.
pub const ELFOSABI_AMDGPU_HSA: u8 = 64;
/// Note type of the msgpack metadata note (owner "AMDGPU").
pub const NT_AMDGPU_METADATA: u32 = 32;
/// `R_AMDGPU_ABS64`.
pub const R_AMDGPU_ABS64: u32 = 3;
/// `R_AMDGPU_RELATIVE64`: a dynamic relocation writing the load base plus
/// the addend (an address held in data, in a `.hsaco`).
pub const R_AMDGPU_RELATIVE64: u32 = 13;
/// `R_AMDGPU_ABS32`: CIE pointers in `.debug_frame`.
pub const R_AMDGPU_ABS32: u32 = 6;
/// `R_AMDGPU_REL64`: the descriptor's entry offset in relocatable objects.
pub const R_AMDGPU_REL64: u32 = 5;
/// `R_AMDGPU_REL32_LO`: low 32 bits of `S + A − P`.
pub const R_AMDGPU_REL32_LO: u32 = 10;
/// `R_AMDGPU_REL32_HI`: high 32 bits of `S + A − P`.
pub const R_AMDGPU_REL32_HI: u32 = 11;

/// Code object version (`--code-object-version`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub enum CodeObjectVersion {
    V4,
    #[default]
    V5,
    V6,
}

impl CodeObjectVersion {
    /// From the number the user writes (4, 5 or 6); anything else is an error.
    pub fn from_number(n: u32) -> Result<CodeObjectVersion, CodeObjectError> {
        match n {
            4 => Ok(CodeObjectVersion::V4),
            5 => Ok(CodeObjectVersion::V5),
            6 => Ok(CodeObjectVersion::V6),
            other => Err(CodeObjectError::UnknownVersion(other)),
        }
    }

    /// 4, 5 or 6.
    pub fn number(self) -> u32 {
        match self {
            CodeObjectVersion::V4 => 4,
            CodeObjectVersion::V5 => 5,
            CodeObjectVersion::V6 => 6,
        }
    }

    /// `e_ident[EI_ABIVERSION]`: 2, 3, 4.
    pub fn abi_version(self) -> u8 {
        match self {
            CodeObjectVersion::V4 => 2,
            CodeObjectVersion::V5 => 3,
            CodeObjectVersion::V6 => 4,
        }
    }

    /// From `e_ident[EI_ABIVERSION]`.
    pub fn from_abi_version(v: u8) -> Option<CodeObjectVersion> {
        match v {
            2 => Some(CodeObjectVersion::V4),
            3 => Some(CodeObjectVersion::V5),
            4 => Some(CodeObjectVersion::V6),
            _ => None,
        }
    }

    /// `amdhsa.version` of the metadata: [1, 1] for v4, [1, 2] for v5 and v6.
    pub fn metadata_version(self) -> [u32; 2] {
        match self {
            CodeObjectVersion::V4 => [1, 1],
            CodeObjectVersion::V5 | CodeObjectVersion::V6 => [1, 2],
        }
    }
}

impl std::str::FromStr for CodeObjectVersion {
    type Err = CodeObjectError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let n: u32 = s
            .trim()
            .parse()
            .map_err(|_| CodeObjectError::BadVersionText(s.to_string()))?;
        CodeObjectVersion::from_number(n)
    }
}

/// ELF symbol visibility of a function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Visibility {
    /// Exported and preemptible (not what clang uses for GPU code).
    Default,
    /// Local to the code object: `GLOBAL HIDDEN` in the relocatable object, `LOCAL`
    /// in the shared object, not in `.dynsym`.
    Hidden,
    /// Exported, not preemptible (clang's choice for kernels and their `.kd`).
    #[default]
    Protected,
}

/// What a relocation computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RelocKind {
    /// Low 32 bits of `S + A − P` (the `s_add_u32` literal after `s_getpc_b64`).
    Rel32Lo,
    /// High 32 bits of `S + A − P` (the `s_addc_u32` literal).
    Rel32Hi,
}

impl RelocKind {
    pub fn elf_type(self) -> u32 {
        match self {
            RelocKind::Rel32Lo => R_AMDGPU_REL32_LO,
            RelocKind::Rel32Hi => R_AMDGPU_REL32_HI,
        }
    }
}

/// A reference from a function's code to a symbol: resolved by [`write_hsaco`],
/// emitted as an ELF relocation by [`write_relocatable`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reloc {
    /// Byte offset of the 32-bit field (the instruction's literal) in the function.
    pub offset: u64,
    pub kind: RelocKind,
    /// Name of the referenced function (in this object, or, for a relocatable
    /// object only, defined by another object at link time).
    pub symbol: String,
    /// `A`: LLVM uses +4 for the `s_add_u32` literal and +12 for the `s_addc_u32`
    /// literal, so that `S + A − P` is relative to the `s_getpc_b64` result.
    pub addend: i64,
}

impl Reloc {
    /// The operand an assembler reads for this relocation: `callee@rel32@lo+4`.
    pub fn asm_expression(&self) -> String {
        let part = match self.kind {
            RelocKind::Rel32Lo => "lo",
            RelocKind::Rel32Hi => "hi",
        };
        format!("{}@rel32@{part}{:+}", asm::symbol(&self.symbol), self.addend)
    }

    /// The two relocations of an `s_getpc_b64 s[n:n+1]` / `s_add_u32 sn, sn, lit` /
    /// `s_addc_u32 sn+1, sn+1, lit` sequence, given the offset of the byte after
    /// `s_getpc_b64` (the address it returns): literals at +4 and +12.
    pub fn getpc_pair(pc_offset: u64, symbol: &str) -> [Reloc; 2] {
        [
            Reloc {
                offset: pc_offset + 4,
                kind: RelocKind::Rel32Lo,
                symbol: symbol.to_string(),
                addend: 4,
            },
            Reloc {
                offset: pc_offset + 12,
                kind: RelocKind::Rel32Hi,
                symbol: symbol.to_string(),
                addend: 12,
            },
        ]
    }
}

/// A kernel's descriptor and metadata.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelInfo {
    /// `kernel_code_entry_byte_offset` is ignored: the writer computes it.
    pub descriptor: KernelDescriptor,
    /// `.name` and `.symbol` are ignored: the writer uses the function name.
    pub metadata: KernelMetadata,
}

impl KernelInfo {
    /// Builds descriptor and metadata from what the kernel uses: lays out the
    /// hidden arguments after `args` when `implicit_args` is set (the whole block
    /// of the code object version, as LLVM does), sets the kernarg size and fills
    /// the register counts and segment sizes consistently.
    pub fn from_resources(
        target: &CodeObjectTarget,
        version: CodeObjectVersion,
        args: Vec<KernelArg>,
        implicit_args: bool,
        mut res: KernelResources,
        max_flat_workgroup_size: u32,
    ) -> Result<KernelInfo, CodeObjectError> {
        let explicit_end = args.iter().map(|a| a.offset + a.size).max().unwrap_or(0);
        let explicit_align = args.iter().map(KernelArg::natural_align).max().unwrap_or(1);
        let mut args = args;
        let mut kernarg_size = explicit_end;
        if implicit_args {
            let (hidden, end) = metadata::hidden_args(version, explicit_end);
            args.extend(hidden);
            kernarg_size = end;
        }
        res.kernarg_size = kernarg_size;
        res.xnack_enabled =
            target.xnack != FeatureSetting::Off && target.xnack != FeatureSetting::Unsupported;
        let t = target.target;
        let descriptor = KernelDescriptor::for_kernel(t, &res)?;
        let gpu = t.gpu;
        let metadata = KernelMetadata {
            name: String::new(),
            symbol: String::new(),
            args,
            kernarg_segment_size: kernarg_size,
            kernarg_segment_align: if implicit_args {
                explicit_align.max(8)
            } else {
                explicit_align.max(4)
            },
            group_segment_fixed_size: res.group_segment_fixed_size,
            private_segment_fixed_size: res.private_segment_fixed_size,
            wavefront_size: t.wave.lanes(),
            sgpr_count: amdgpu_abi::descriptor::sgpr_count(
                t,
                res.num_sgpr,
                res.uses_vcc,
                res.uses_flat_scratch,
                res.xnack_enabled,
            ),
            vgpr_count: amdgpu_abi::descriptor::total_vgpr_count(gpu, res.num_vgpr, res.num_agpr),
            agpr_count: gpu.has_agprs().then_some(res.num_agpr),
            sgpr_spill_count: res.sgpr_spill_count,
            vgpr_spill_count: res.vgpr_spill_count,
            max_flat_workgroup_size,
            reqd_workgroup_size: None,
            workgroup_size_hint: None,
            uses_dynamic_stack: (version != CodeObjectVersion::V4)
                .then_some(res.uses_dynamic_stack),
            workgroup_processor_mode: (gpu.generation() == amdgpu_isa::Generation::Gfx11
                && version != CodeObjectVersion::V4)
                .then_some(true),
            language: None,
            language_version: None,
            uniform_work_group_size: None,
        };
        Ok(KernelInfo {
            descriptor,
            metadata,
        })
    }
}

/// One function of a code object.
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub name: String,
    /// Machine code (a multiple of 4 bytes).
    pub code: Vec<u8>,
    pub visibility: Visibility,
    /// `Some` for kernels (entry 256-byte aligned, with `name.kd`).
    pub kernel: Option<KernelInfo>,
    pub relocs: Vec<Reloc>,
    /// Call-frame rows for the function's `.debug_frame` FDE (none: no FDE; no
    /// function with rows: no `.debug_frame`).
    pub frame: Vec<frame::CfiRow>,
}

/// Everything a code object holds.
#[derive(Clone, Debug, PartialEq)]
pub struct CodeObject {
    pub target: CodeObjectTarget,
    pub version: CodeObjectVersion,
    pub functions: Vec<Function>,
    /// `amdhsa.printf`: the module's printf formats (MIR's `printf_format`).
    pub printf: Vec<String>,
    /// Data objects (MIR's `data`): read-only ones in `.rodata` after the
    /// kernel descriptors, writable ones in `.data` (or `.bss` when zero);
    /// functions reach them through relocations.
    pub data: Vec<DataObject>,
}

/// A data object of the code object: hidden, in `.rodata`, or in `.data`
/// or `.bss` when writable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataObject {
    pub name: String,
    /// A power of two, at most a page (4096).
    pub align: u32,
    pub bytes: Vec<u8>,
    pub writable: bool,
    /// Addresses it holds, in offset order (their 8 bytes are zero in
    /// `bytes`): `R_AMDGPU_RELATIVE64` dynamic relocations in a `.hsaco`,
    /// `R_AMDGPU_ABS64` ones against the symbol in a relocatable object.
    /// An object holding addresses is never `.bss`; a read-only one goes
    /// to `.data.rel.ro`, which the loader writes and kernels do not.
    pub addrs: Vec<DataAddress>,
}

/// An address held in a data object: `offset` bytes into it, the address
/// of the data object `symbol` plus `addend`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataAddress {
    pub offset: u64,
    pub symbol: String,
    pub addend: u64,
}

/// Why a code object could not be written or read.
#[derive(Debug, Error)]
pub enum CodeObjectError {
    #[error("unknown code object version {0} (supported: 4, 5, 6)")]
    UnknownVersion(u32),
    #[error("code object version must be a number (4, 5 or 6), got '{0}'")]
    BadVersionText(String),
    #[error("invalid target '{0}': {1}")]
    InvalidTarget(String, String),
    #[error("function name is empty or contains a NUL byte: {0:?}")]
    BadName(String),
    #[error("symbol '{0}' is defined twice")]
    DuplicateSymbol(String),
    #[error("function '{0}': code size {1} is not a non-zero multiple of 4")]
    BadCodeSize(String, usize),
    #[error("function '{function}': relocation against undefined symbol '{symbol}'")]
    UndefinedSymbol { function: String, symbol: String },
    #[error(
        "function '{function}' calls '{symbol}', which has default visibility (preemptible in a \
         shared object: LLVM calls it through the GOT, ld.lld rejects a PC-relative call); make \
         the callee hidden or protected"
    )]
    PreemptibleCallee { function: String, symbol: String },
    #[error("function '{function}': relocation at offset {offset} does not fit in the code ({size} bytes)")]
    RelocOutOfRange {
        function: String,
        offset: u64,
        size: usize,
    },
    #[error("kernel '{kernel}': {message}")]
    InconsistentKernel { kernel: String, message: String },
    #[error("offload bundle: {0}")]
    Bundle(String),
    #[error("kernel descriptor: {0}")]
    Descriptor(#[from] DescriptorError),
    #[error("ELF writer: {0}")]
    Write(String),
    #[error("not a readable AMDGPU code object: {0}")]
    Read(String),
    #[error("metadata note: {0}")]
    Metadata(String),
}

impl From<object::read::Error> for CodeObjectError {
    fn from(e: object::read::Error) -> Self {
        CodeObjectError::Read(e.to_string())
    }
}
