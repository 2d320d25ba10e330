//! Reading code objects (ours or LLVM's, `ET_DYN` or `ET_REL`): kernels are found
//! the way ROCr's loader finds them (non-local `STT_OBJECT` symbols named `*.kd`
//! in `.symtab`, `.dynsym` when there is no `.symtab`), descriptors are decoded
//! with the abi crate, the metadata note with [`Metadata::from_msgpack`].

use amdgpu_abi::descriptor::{KernelDescriptor, DESCRIPTOR_SIZE};
use amdgpu_isa::{Generation, Target, WaveSize};
use object::elf;
use object::read::elf::{ElfFile64, FileHeader as _, SectionHeader as _};
use object::{Endian, Endianness, Object, ObjectSection, ObjectSymbol, SectionIndex, SymbolKind};

use super::metadata::{KernelMetadata, Metadata};
use super::processor::{Family, ObjectProcessor};
use super::{
    CodeObjectError, CodeObjectTarget, CodeObjectVersion, ELFOSABI_AMDGPU_HSA, NT_AMDGPU_METADATA,
};

/// A function symbol of a code object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadedFunction {
    pub name: String,
    /// `st_value` (an address in `ET_DYN`, a section offset in `ET_REL`).
    pub address: u64,
    pub size: u64,
    pub global: bool,
    /// `STV_*`.
    pub visibility: u8,
    pub code: Vec<u8>,
}

/// A kernel: its descriptor, metadata (when the note lists it) and code.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadedKernel {
    pub name: String,
    pub descriptor_symbol: String,
    pub descriptor_address: u64,
    pub descriptor: KernelDescriptor,
    /// Entry address: descriptor address + entry offset in `ET_DYN`; the kernel
    /// symbol's value in `ET_REL` (where the offset is still a relocation).
    pub entry_address: u64,
    /// The kernel's machine code (its `STT_FUNC` symbol's bytes), empty if no
    /// function symbol describes the entry.
    pub code: Vec<u8>,
    pub metadata: Option<KernelMetadata>,
}

/// What [`read`] returns.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadedCodeObject {
    /// `ET_DYN` (3) or `ET_REL` (1).
    pub e_type: u16,
    pub abi_version: u8,
    pub version: CodeObjectVersion,
    pub e_flags: u32,
    /// The processor and feature settings `e_flags` name.
    pub processor: ObjectProcessor,
    /// The target amdgpu-cg models that runs this code: the processor itself, or
    /// for a generic target the member amdgpu-cg models (gfx11-generic runs as
    /// gfx1100, gfx9-4-generic as gfx942); `None` for any other processor. Its
    /// wave size is the first kernel's.
    pub target: Option<CodeObjectTarget>,
    /// The first kernel's wave size (the processor's default without kernels).
    pub wave: WaveSize,
    /// Every `NT_AMDGPU_METADATA` note (a link of several LLVM objects has one
    /// per input object); kernels take their metadata from the first that lists them.
    pub metadata: Vec<Metadata>,
    pub kernels: Vec<LoadedKernel>,
    pub functions: Vec<LoadedFunction>,
    /// `(name, sh_type, address, size)` of each section, in order.
    pub sections: Vec<(String, u32, u64, u64)>,
    /// The symbol table kernels were found in: ".symtab" or ".dynsym".
    pub symbol_table: &'static str,
}

fn rerr(msg: impl Into<String>) -> CodeObjectError {
    CodeObjectError::Read(msg.into())
}

/// Loads a code object.
pub fn read(data: &[u8]) -> Result<LoadedCodeObject, CodeObjectError> {
    if super::bundle::is_bundle(data) {
        return Err(rerr(
            "this is a clang offload bundle, not one code object: `amdgpu-cg inspect` lists its entries, `clang-offload-bundler --unbundle` splits them",
        ));
    }
    let file = ElfFile64::<Endianness>::parse(data)?;
    let endian = file.endian();
    let header = file.elf_header();
    let ident = header.e_ident();
    if ident.os_abi != ELFOSABI_AMDGPU_HSA {
        return Err(rerr(format!(
            "EI_OSABI is {}, not 64 (AMDGPU_HSA)",
            ident.os_abi
        )));
    }
    if header.e_machine(endian) != elf::EM_AMDGPU {
        return Err(rerr(format!(
            "e_machine is {}, not EM_AMDGPU (224)",
            header.e_machine(endian)
        )));
    }
    if !endian.is_little_endian() {
        return Err(rerr("not little-endian"));
    }
    let version = CodeObjectVersion::from_abi_version(ident.abi_version).ok_or_else(|| {
        rerr(format!(
            "EI_ABIVERSION {} is not code object v4, v5 or v6",
            ident.abi_version
        ))
    })?;
    let e_flags = header.e_flags(endian);
    let processor = ObjectProcessor::from_e_flags(e_flags).ok_or_else(|| {
        rerr(format!(
            "e_flags 0x{e_flags:x}: machine 0x{:x} is not an AMDGCN processor LLVM 22 knows",
            e_flags & super::target::EF_AMDGPU_MACH
        ))
    })?;
    let mut target = processor.processor.runs_as.map(|gpu| CodeObjectTarget {
        target: Target::new(gpu),
        xnack: processor.xnack,
        sramecc: processor.sramecc,
    });
    let e_type = header.e_type(endian);

    let mut sections = Vec::new();
    let mut metadata = Vec::new();
    for section in file.sections() {
        let sh = section.elf_section_header();
        sections.push((
            section.name().unwrap_or("").to_string(),
            sh.sh_type(endian),
            section.address(),
            section.size(),
        ));
        if sh.sh_type(endian) != elf::SHT_NOTE {
            continue;
        }
        if let Some(mut notes) = sh.notes(endian, data)? {
            while let Some(note) = notes.next()? {
                if note.name() == b"AMDGPU" && note.n_type(endian) == NT_AMDGPU_METADATA {
                    metadata.push(Metadata::from_msgpack(note.desc())?);
                }
            }
        }
    }

    // ROCr reads .symtab; comgr .dynsym. Prefer .symtab like the loader.
    let use_dynsym = file.symbol_table().is_none();
    let symbols: Vec<object::read::elf::ElfSymbol64<Endianness>> = if use_dynsym {
        file.dynamic_symbols().collect()
    } else {
        file.symbols().collect()
    };
    let symbol_bytes =
        |section: SectionIndex, value: u64, size: u64| -> Result<Vec<u8>, CodeObjectError> {
            let s = file.section_by_index(section)?;
            let d = s.data()?;
            let start = value
                .checked_sub(s.address())
                .ok_or_else(|| rerr("symbol before its section"))? as usize;
            let end = start
                .checked_add(size as usize)
                .ok_or_else(|| rerr("symbol size overflows"))?;
            d.get(start..end)
                .map(<[u8]>::to_vec)
                .ok_or_else(|| rerr("symbol extends past its section"))
        };

    let mut functions = Vec::new();
    for sym in &symbols {
        if sym.kind() != SymbolKind::Text || sym.is_undefined() {
            continue;
        }
        let Some(section) = sym.section_index() else {
            continue;
        };
        functions.push(LoadedFunction {
            name: sym.name()?.to_string(),
            address: sym.address(),
            size: sym.size(),
            global: !sym.is_local(),
            visibility: sym.elf_symbol().st_other & 3,
            code: symbol_bytes(section, sym.address(), sym.size())?,
        });
    }

    let generation = match processor.processor.family {
        Family::Cdna => Some(Generation::Gfx9),
        Family::Gfx11 => Some(Generation::Gfx11),
        _ => None,
    };
    let mut kernels = Vec::new();
    for sym in &symbols {
        let name = sym.name()?;
        let Some(kernel_name) = name.strip_suffix(".kd") else {
            continue;
        };
        if sym.kind() != SymbolKind::Data || sym.is_local() || sym.is_undefined() {
            continue;
        }
        let Some(section) = sym.section_index() else {
            continue;
        };
        if sym.size() != DESCRIPTOR_SIZE as u64 {
            return Err(rerr(format!(
                "descriptor {name} has size {}, not 64",
                sym.size()
            )));
        }
        let bytes = symbol_bytes(section, sym.address(), 64)?;
        let descriptor = KernelDescriptor::decode_for(&bytes, generation)?;
        let func = functions.iter().find(|f| f.name == kernel_name);
        let entry_address = if e_type == elf::ET_REL {
            func.map(|f| f.address).unwrap_or(0)
        } else {
            sym.address()
                .wrapping_add(descriptor.kernel_code_entry_byte_offset as u64)
        };
        let code = match func {
            Some(f) if e_type == elf::ET_REL || f.address == entry_address => f.code.clone(),
            _ => functions
                .iter()
                .find(|f| f.address == entry_address)
                .map(|f| f.code.clone())
                .unwrap_or_default(),
        };
        let md = metadata
            .iter()
            .flat_map(|m| m.kernels.iter())
            .find(|k| k.symbol == name)
            .cloned();
        kernels.push(LoadedKernel {
            name: md
                .as_ref()
                .map(|m| m.name.clone())
                .unwrap_or_else(|| kernel_name.to_string()),
            descriptor_symbol: name.to_string(),
            descriptor_address: sym.address(),
            descriptor,
            entry_address,
            code,
            metadata: md,
        });
    }
    let wave = match kernels.first() {
        Some(k) if k.descriptor.kernel_code_properties.enable_wavefront_size32 => WaveSize::W32,
        Some(_) => WaveSize::W64,
        None if matches!(processor.processor.family, Family::Gfx10 | Family::Gfx11 | Family::Gfx12) => WaveSize::W32,
        None => WaveSize::W64,
    };
    if let Some(t) = target.as_mut() {
        if let Some(with_wave) = Target::with_wave(t.target.gpu, wave) {
            t.target = with_wave;
        }
    }
    Ok(LoadedCodeObject {
        e_type,
        abi_version: ident.abi_version,
        version,
        e_flags,
        processor,
        target,
        wave,
        metadata,
        kernels,
        functions,
        sections,
        symbol_table: if use_dynsym { ".dynsym" } else { ".symtab" },
    })
}
