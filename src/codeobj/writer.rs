//! Writing code objects with `object::write::elf::Writer` (the `object` crate
//! computes every header, table and string layout; we choose the order, the
//! alignments and the addresses the way `ld.lld-22 -shared` does).

use hashbrown::HashMap;

use amdgpu_abi::descriptor::{
    DESCRIPTOR_SIZE, ENTRY_OFFSET_FIELD, KERNEL_ENTRY_ALIGN,
};
use amdgpu_isa::{Generation, WaveSize};
use object::elf;
use super::frame::{write_debug_frame, FrameFunction};
use object::write::elf::{
    FileHeader, ProgramHeader, Rel, SectionHeader, SectionIndex, Sym, Writer,
};
use object::write::StringId;
use object::Endianness;

use super::data_layout::{DataLayout, Extent, Home};
use super::metadata::Metadata;
use super::{
    CodeObject, CodeObjectError, CodeObjectVersion, Visibility, ELFOSABI_AMDGPU_HSA,
    NT_AMDGPU_METADATA, R_AMDGPU_ABS32, R_AMDGPU_ABS64, R_AMDGPU_REL64, R_AMDGPU_RELATIVE64,
};

/// Page size lld uses to separate segments in the address space.
const PAGE: u64 = 0x1000;
/// `s_nop 0` on gfx9 and gfx11: the fill between functions.
const S_NOP_0: u32 = 0xBF80_0000;
/// `s_code_end` (gfx10+).
const S_CODE_END: u32 = 0xBF9F_0000;
/// What `.comment` says.
const COMMENT: &[u8] = concat!("amdgpu-cg ", env!("CARGO_PKG_VERSION"), "\0").as_bytes();

fn align_up(v: u64, a: u64) -> u64 {
    v.div_ceil(a) * a
}

fn vis_bits(v: Visibility) -> u8 {
    match v {
        Visibility::Default => elf::STV_DEFAULT,
        Visibility::Hidden => elf::STV_HIDDEN,
        Visibility::Protected => elf::STV_PROTECTED,
    }
}

/// The `.text` contents and where each function starts in it.
struct TextLayout {
    bytes: Vec<u8>,
    offsets: Vec<u64>,
    align: u64,
}

/// Appends `pad` words until `bytes.len()` is a multiple of `align`.
fn pad_to(bytes: &mut Vec<u8>, align: u64, pad: u32) {
    while !(bytes.len() as u64).is_multiple_of(align) {
        bytes.extend_from_slice(&pad.to_le_bytes());
    }
}

/// Lays out the functions: kernels at 256-byte boundaries, other functions at
/// 4, `s_nop 0` between them, then LLVM's instruction-prefetch padding
/// (`AMDGPUTargetStreamer::EmitCodeEnd`): gfx90a/gfx942 align to 64 and add 256
/// `s_nop 0`; gfx11 align to 128 and add 96 `s_code_end`.
fn layout_text(co: &CodeObject) -> TextLayout {
    let mut bytes = Vec::new();
    let mut offsets = Vec::new();
    for f in &co.functions {
        let align = if f.kernel.is_some() {
            KERNEL_ENTRY_ALIGN
        } else {
            4
        };
        pad_to(&mut bytes, align, S_NOP_0);
        offsets.push(bytes.len() as u64);
        bytes.extend_from_slice(&f.code);
    }
    let (line, fill_bytes, pad) = match co.target.target.gpu.generation() {
        Generation::Gfx9 => (64, 16 * 64, S_NOP_0),
        Generation::Gfx11 => (128, 3 * 128, S_CODE_END),
    };
    pad_to(&mut bytes, line, pad);
    for _ in 0..fill_bytes / 4 {
        bytes.extend_from_slice(&pad.to_le_bytes());
    }
    let has_kernel = co.functions.iter().any(|f| f.kernel.is_some());
    TextLayout {
        bytes,
        offsets,
        align: if has_kernel { KERNEL_ENTRY_ALIGN } else { line },
    }
}

/// Checks everything that could make a file wrong, before any byte is written.
fn validate(co: &CodeObject) -> Result<(), CodeObjectError> {
    let t = co.target.target;
    let mut names: HashMap<String, ()> = HashMap::new();
    for d in &co.data {
        if d.name.is_empty() || d.name.contains('\0') {
            return Err(CodeObjectError::BadName(d.name.clone()));
        }
        if !d.align.is_power_of_two() || u64::from(d.align) > PAGE {
            return Err(CodeObjectError::Write(format!("data '{}' has alignment {}, not a power of two up to {PAGE}", d.name, d.align)));
        }
        if names.insert(d.name.clone(), ()).is_some() {
            return Err(CodeObjectError::DuplicateSymbol(d.name.clone()));
        }
    }
    for f in &co.functions {
        if f.name.is_empty() || f.name.contains('\0') {
            return Err(CodeObjectError::BadName(f.name.clone()));
        }
        if names.insert(f.name.clone(), ()).is_some() {
            return Err(CodeObjectError::DuplicateSymbol(f.name.clone()));
        }
        if f.code.is_empty() || f.code.len() % 4 != 0 {
            return Err(CodeObjectError::BadCodeSize(f.name.clone(), f.code.len()));
        }
        for r in &f.relocs {
            if r.offset % 4 != 0 || r.offset + 4 > f.code.len() as u64 {
                return Err(CodeObjectError::RelocOutOfRange {
                    function: f.name.clone(),
                    offset: r.offset,
                    size: f.code.len(),
                });
            }
        }
        let Some(k) = &f.kernel else { continue };
        if names.contains_key(&format!("{}.kd", f.name)) {
            return Err(CodeObjectError::DuplicateSymbol(format!("{}.kd", f.name)));
        }
        let bad = |message: String| {
            Err(CodeObjectError::InconsistentKernel {
                kernel: f.name.clone(),
                message,
            })
        };
        if f.visibility == Visibility::Hidden {
            return bad("a kernel cannot be hidden: the loader skips local symbols".into());
        }
        let d = &k.descriptor;
        let m = &k.metadata;
        d.encode()?;
        if m.kernarg_segment_size != d.kernarg_size {
            return bad(format!(
                "metadata kernarg size {} differs from the descriptor's {}",
                m.kernarg_segment_size, d.kernarg_size
            ));
        }
        if m.group_segment_fixed_size != d.group_segment_fixed_size
            || m.private_segment_fixed_size != d.private_segment_fixed_size
        {
            return bad("metadata segment sizes differ from the descriptor's".into());
        }
        if m.wavefront_size != t.wave.lanes() {
            return bad(format!(
                "wavefront size {} but the target runs wave{}",
                m.wavefront_size,
                t.wave.lanes()
            ));
        }
        if d.kernel_code_properties.enable_wavefront_size32 != (t.wave == WaveSize::W32) {
            return bad(
                "descriptor ENABLE_WAVEFRONT_SIZE32 does not match the target's wave size".into(),
            );
        }
        let rsrc3_gen = match d.compute_pgm_rsrc3 {
            amdgpu_abi::descriptor::ComputePgmRsrc3::Gfx9 { .. } => Some(Generation::Gfx9),
            amdgpu_abi::descriptor::ComputePgmRsrc3::Gfx11 { .. } => Some(Generation::Gfx11),
            amdgpu_abi::descriptor::ComputePgmRsrc3::Other(_) => None,
        };
        if rsrc3_gen != Some(t.gpu.generation()) {
            return bad("compute_pgm_rsrc3 is for another generation".into());
        }
        if let Some(u) = m.uses_dynamic_stack {
            if u != d.kernel_code_properties.uses_dynamic_stack {
                return bad("metadata .uses_dynamic_stack differs from the descriptor".into());
            }
        }
        // The descriptor must allocate at least the registers the metadata reports.
        let vgpr_field = amdgpu_abi::descriptor::granulated_vgpr_count(t, m.vgpr_count);
        if vgpr_field > u32::from(d.compute_pgm_rsrc1.granulated_workitem_vgpr_count) {
            return bad(format!(
                "{} VGPRs need granulated count {vgpr_field}, the descriptor allocates {}",
                m.vgpr_count, d.compute_pgm_rsrc1.granulated_workitem_vgpr_count
            ));
        }
        let sgpr_field =
            amdgpu_abi::descriptor::granulated_sgpr_count(t.gpu.generation(), m.sgpr_count);
        if sgpr_field > u32::from(d.compute_pgm_rsrc1.granulated_wavefront_sgpr_count) {
            return bad(format!(
                "{} SGPRs need granulated count {sgpr_field}, the descriptor allocates {}",
                m.sgpr_count, d.compute_pgm_rsrc1.granulated_wavefront_sgpr_count
            ));
        }
        if !m.kernarg_segment_align.is_power_of_two() {
            return bad(format!(
                "kernarg segment alignment {} is not a power of two",
                m.kernarg_segment_align
            ));
        }
        for a in &m.args {
            if u64::from(a.offset) + u64::from(a.size) > u64::from(m.kernarg_segment_size) {
                return bad(format!(
                    "argument at offset {} size {} exceeds the kernarg segment ({} bytes)",
                    a.offset, a.size, m.kernarg_segment_size
                ));
            }
        }
    }
    // The first function of each name (a search per relocation was
    // quadratic in modules of many functions that call each other).
    let mut by_name: HashMap<&str, &super::Function> = HashMap::new();
    for f in &co.functions {
        by_name.entry(f.name.as_str()).or_insert(f);
    }
    for f in &co.functions {
        for r in &f.relocs {
            let callee = by_name.get(r.symbol.as_str());
            if callee.is_some_and(|g| g.visibility == Visibility::Default) {
                return Err(CodeObjectError::PreemptibleCallee {
                    function: f.name.clone(),
                    symbol: r.symbol.clone(),
                });
            }
        }
        if f.kernel.is_some() && names.contains_key(&format!("{}.kd", f.name)) {
            return Err(CodeObjectError::DuplicateSymbol(format!("{}.kd", f.name)));
        }
    }
    Ok(())
}

/// The metadata note as written: the version's keys, names filled in.
pub(super) fn build_metadata(co: &CodeObject) -> Metadata {
    let kernels = co
        .functions
        .iter()
        .filter_map(|f| {
            let k = f.kernel.as_ref()?;
            let mut m = k.metadata.clone();
            m.name = f.name.clone();
            m.symbol = format!("{}.kd", f.name);
            // v4 metadata has neither key (LLVM 22 writes them from v5 on).
            m.uses_dynamic_stack = match co.version {
                CodeObjectVersion::V4 => None,
                _ => Some(k.descriptor.kernel_code_properties.uses_dynamic_stack),
            };
            if co.version == CodeObjectVersion::V4 {
                m.workgroup_processor_mode = None;
            }
            // LLVM writes .agpr_count exactly on the targets that have AGPRs.
            if !co.target.target.gpu.has_agprs() {
                m.agpr_count = None;
            } else if m.agpr_count.is_none() {
                m.agpr_count = Some(0);
            }
            Some(m)
        })
        .collect();
    Metadata {
        version: co.version.metadata_version(),
        target: co.target.isa_name(),
        kernels,
        printf: co.printf.clone(),
        raw: rmpv::Value::Nil,
    }
}

/// The `.note` section: one `NT_AMDGPU_METADATA` record, owner "AMDGPU".
fn build_note(co: &CodeObject) -> Vec<u8> {
    let desc = build_metadata(co).to_msgpack();
    let mut note = Vec::with_capacity(desc.len() + 24);
    note.extend_from_slice(&7u32.to_le_bytes());
    note.extend_from_slice(&(desc.len() as u32).to_le_bytes());
    note.extend_from_slice(&NT_AMDGPU_METADATA.to_le_bytes());
    note.extend_from_slice(b"AMDGPU\0\0");
    note.extend_from_slice(&desc);
    while note.len() % 4 != 0 {
        note.push(0);
    }
    note
}

fn file_header(co: &CodeObject, e_type: u16) -> FileHeader {
    FileHeader {
        os_abi: ELFOSABI_AMDGPU_HSA,
        abi_version: co.version.abi_version(),
        e_type,
        e_machine: elf::EM_AMDGPU,
        e_entry: 0,
        e_flags: co.target.e_flags(),
    }
}

fn werr(e: object::write::Error) -> CodeObjectError {
    CodeObjectError::Write(e.to_string())
}

/// Patches the 32-bit field at `at` in `text`.
fn patch32(text: &mut [u8], at: u64, value: u32) {
    let at = at as usize;
    text[at..at + 4].copy_from_slice(&value.to_le_bytes());
}

/// What both object forms start from: the validated functions' metadata note,
/// laid-out text, and the kernels (indices into `co.functions`) with their
/// descriptor symbol names.
struct Prepared {
    note: Vec<u8>,
    text: TextLayout,
    kernels: Vec<usize>,
    kd_names: Vec<String>,
    layout: DataLayout,
}

/// The `.debug_frame` section header (not loaded; 8-byte aligned like LLVM's).
fn write_debug_frame_header(w: &mut Writer, name: StringId, offset: u64, len: usize) {
    w.write_section_header(&SectionHeader {
        name: Some(name),
        sh_type: elf::SHT_PROGBITS,
        sh_flags: 0,
        sh_addr: 0,
        sh_offset: offset,
        sh_size: len as u64,
        sh_link: 0,
        sh_info: 0,
        sh_addralign: 8,
        sh_entsize: 0,
    });
}

/// The header of `.data` or `.bss` (`sh_type`), at `addr` (0 in a
/// relocatable object) and file `offset`.
fn write_writable_header(w: &mut Writer, name: StringId, sh_type: u32, addr: u64, offset: u64, extent: Extent) {
    w.write_section_header(&SectionHeader {
        name: Some(name),
        sh_type,
        sh_flags: (elf::SHF_WRITE | elf::SHF_ALLOC).into(),
        sh_addr: addr,
        sh_offset: offset,
        sh_size: extent.len,
        sh_link: 0,
        sh_info: 0,
        sh_addralign: extent.align,
        sh_entsize: 0,
    });
}

/// Every byte reserved was written: the layout computed up front held.
fn check_layout(w: &Writer) -> Result<(), CodeObjectError> {
    if w.reserved_len() != w.len() {
        return Err(CodeObjectError::Write(format!("layout mismatch: reserved {} wrote {}", w.reserved_len(), w.len())));
    }
    Ok(())
}

/// The FDEs of the functions that have call-frame rows, each at the address
/// `address(function index)` gives (a constant, or a symbol to relocate).
fn frame_functions(co: &CodeObject, address: impl Fn(usize) -> gimli::write::Address) -> Vec<FrameFunction<'_>> {
    co.functions
        .iter()
        .enumerate()
        .filter(|(_, f)| !f.frame.is_empty())
        .map(|(i, f)| FrameFunction { address: address(i), len: f.code.len() as u32, rows: &f.frame })
        .collect()
}

fn prepare(co: &CodeObject) -> Result<Prepared, CodeObjectError> {
    validate(co)?;
    let kernels: Vec<usize> = (0..co.functions.len()).filter(|&i| co.functions[i].kernel.is_some()).collect();
    let kd_names = kernels.iter().map(|&i| format!("{}.kd", co.functions[i].name)).collect();
    let layout = DataLayout::new(co, kernels.len());
    Ok(Prepared { note: build_note(co), text: layout_text(co), kernels, kd_names, layout })
}

/// Writes a loadable `.hsaco` (`ET_DYN`), laid out as `ld.lld-22 -shared` lays
/// out LLVM's objects (docs/code-object.md). Calls are resolved; the result has
/// no relocations. Errors leave nothing behind: the bytes are returned only
/// when the whole file was written.
pub fn write_hsaco(co: &CodeObject) -> Result<Vec<u8>, CodeObjectError> {
    let Prepared { note, mut text, kernels, kd_names, layout } = prepare(co)?;

    let mut out = Vec::new();
    let mut w = Writer::new(Endianness::Little, true, &mut out);

    // Section indices, in file order.
    w.reserve_null_section_index();
    let note_name = w.add_section_name(b".note");
    let note_idx = w.reserve_section_index();
    let dynsym_idx = w.reserve_dynsym_section_index();
    let _gnu_hash_idx = w.reserve_gnu_hash_section_index();
    let _hash_idx = w.reserve_hash_section_index();
    let _dynstr_idx = w.reserve_dynstr_section_index();
    // Addresses held in data: R_AMDGPU_RELATIVE64 relocations the loader
    // applies, in `.rela.dyn` (ld.lld-22's place and order).
    let addresses = layout.addresses(co);
    // (Names only for sections present: .shstrtab holds no others.)
    let rela_dyn_name = (!addresses.is_empty()).then(|| w.add_section_name(b".rela.dyn"));
    let rela_dyn_idx = (!addresses.is_empty()).then(|| w.reserve_section_index());
    let rodata_name = w.add_section_name(b".rodata");
    let rodata_idx = layout.rodata.present.then(|| w.reserve_section_index());
    let text_name = w.add_section_name(b".text");
    let text_idx = w.reserve_section_index();
    let relro_name = layout.relro.present.then(|| w.add_section_name(b".data.rel.ro"));
    let relro_idx = layout.relro.present.then(|| w.reserve_section_index());
    let dynamic_idx = w.reserve_dynamic_section_index();
    let data_name = w.add_section_name(b".data");
    let data_idx = layout.data.present.then(|| w.reserve_section_index());
    let bss_name = w.add_section_name(b".bss");
    let bss_idx = layout.bss.present.then(|| w.reserve_section_index());
    let data_section = |j: usize| match layout.place[j].0 {
        Home::Rodata => rodata_idx,
        Home::RelRo => relro_idx,
        Home::Data => data_idx,
        Home::Bss => bss_idx,
    };
    let _ = rela_dyn_idx;
    let comment_name = w.add_section_name(b".comment");
    let _comment_idx = w.reserve_section_index();
    let has_frames = co.functions.iter().any(|f| !f.frame.is_empty());
    let debug_frame_name = w.add_section_name(b".debug_frame");
    let _debug_frame_idx = has_frames.then(|| w.reserve_section_index());
    let _symtab_idx = w.reserve_symtab_section_index();
    let _shstrtab_idx = w.reserve_shstrtab_section_index();
    let _strtab_idx = w.reserve_strtab_section_index();
    let _ = (note_idx, dynsym_idx);

    // Symbols: (name, section, st_info, st_other, function index or kernel index).
    #[derive(Clone, Copy)]
    enum What {
        Func(usize),
        Kd(usize),
        Data(usize),
        Dynamic,
    }
    struct S<'n> {
        name: &'n [u8],
        what: What,
        st_info: u8,
        st_other: u8,
        dynamic: bool,
    }
    let mut syms: Vec<S> = Vec::new();
    // Locals first: hidden functions become LOCAL after a link, plus _DYNAMIC.
    for (i, f) in co.functions.iter().enumerate() {
        if f.visibility == Visibility::Hidden {
            syms.push(S {
                name: f.name.as_bytes(),
                what: What::Func(i),
                st_info: (elf::STB_LOCAL << 4) | elf::STT_FUNC,
                st_other: elf::STV_HIDDEN,
                dynamic: false,
            });
        }
    }
    // Data is hidden, so local after a link, as ld.lld-22 makes LLVM's
    // (program-scope __global variables included).
    for (j, d) in co.data.iter().enumerate() {
        syms.push(S {
            name: d.name.as_bytes(),
            what: What::Data(j),
            st_info: (elf::STB_LOCAL << 4) | elf::STT_OBJECT,
            st_other: elf::STV_HIDDEN,
            dynamic: false,
        });
    }
    syms.push(S {
        name: b"_DYNAMIC",
        what: What::Dynamic,
        st_info: (elf::STB_LOCAL << 4) | elf::STT_NOTYPE,
        st_other: elf::STV_HIDDEN,
        dynamic: false,
    });
    let num_local = syms.len() as u32 + 1;
    let mut kd_of = HashMap::new();
    for (k, &i) in kernels.iter().enumerate() {
        kd_of.insert(i, k);
    }
    for (i, f) in co.functions.iter().enumerate() {
        if f.visibility == Visibility::Hidden {
            continue;
        }
        syms.push(S {
            name: f.name.as_bytes(),
            what: What::Func(i),
            st_info: (elf::STB_GLOBAL << 4) | elf::STT_FUNC,
            st_other: vis_bits(f.visibility),
            dynamic: true,
        });
        if let Some(&k) = kd_of.get(&i) {
            syms.push(S {
                name: kd_names[k].as_bytes(),
                what: What::Kd(k),
                st_info: (elf::STB_GLOBAL << 4) | elf::STT_OBJECT,
                st_other: vis_bits(f.visibility),
                dynamic: true,
            });
        }
    }
    // Dynamic symbols sorted by GNU hash bucket (required by .gnu.hash).
    let mut dyn_syms: Vec<usize> = (0..syms.len()).filter(|&i| syms[i].dynamic).collect();
    let bucket_count = (dyn_syms.len() as u32 / 4).max(1);
    dyn_syms.sort_by_key(|&i| elf::gnu_hash(syms[i].name) % bucket_count);
    let dyn_hashes: Vec<u32> = dyn_syms
        .iter()
        .map(|&i| elf::gnu_hash(syms[i].name))
        .collect();
    let sysv_hashes: Vec<u32> = dyn_syms.iter().map(|&i| elf::hash(syms[i].name)).collect();

    let str_ids: Vec<StringId> = syms.iter().map(|s| w.add_string(s.name)).collect();
    let dynstr_ids: HashMap<usize, StringId> = dyn_syms
        .iter()
        .map(|&i| (i, w.add_dynamic_string(syms[i].name)))
        .collect();

    // File layout.
    w.reserve_file_header();
    // Writable data gets a read-write segment of its own after .dynamic's.
    let num_phdrs: u32 = if layout.writable() { 9 } else { 8 };
    w.reserve_program_headers(num_phdrs);
    let note_off = w.reserve(note.len(), 4) as u64;
    w.reserve_null_dynamic_symbol_index();
    for _ in &dyn_syms {
        w.reserve_dynamic_symbol_index();
    }
    let dynsym_off = w.reserve_dynsym() as u64;
    // ld.lld's bloom filter size: the power of two above n·12/64 words.
    let bloom_words = (dyn_syms.len() as u32 * 12 / 64 + 1).next_power_of_two();
    let gnu_hash_off = w.reserve_gnu_hash(bloom_words, bucket_count, dyn_syms.len() as u32) as u64;
    let dyn_count = dyn_syms.len() as u32 + 1;
    let hash_off = w.reserve_hash(dyn_count, dyn_count) as u64;
    w.require_dynstr(); // even without exported symbols (a kernel-less object)
    let dynstr_off = w.reserve_dynstr() as u64;
    let dynstr_len = w.dynstr_len() as u64;
    let rela_dyn_off = if addresses.is_empty() { 0 } else { w.reserve_relocations(addresses.len(), true) as u64 };
    let rela_dyn_len = (addresses.len() * 24) as u64;
    let rodata_off = if rodata_idx.is_some() {
        w.reserve(layout.rodata.len as usize, layout.rodata.align as usize) as u64
    } else {
        w.reserved_len() as u64
    };
    let seg0_end = w.reserved_len() as u64;
    let text_off = w.reserve(text.bytes.len(), text.align as usize) as u64;
    let text_addr = align_up(seg0_end, PAGE) + text_off % PAGE;
    // The relro segment: .data.rel.ro (written by the loader), then .dynamic.
    let relro_off = if layout.relro.present { w.reserve(layout.relro.len as usize, layout.relro.align as usize) as u64 } else { 0 };
    let num_dynamic: usize = if addresses.is_empty() { 7 } else { 11 };
    let dynamic_off = w.reserve_dynamic(num_dynamic) as u64;
    let dynamic_len = (num_dynamic * 16) as u64;
    let (relro_seg_off, dynamic_addr, relro_addr) = if layout.relro.present {
        let relro_addr = align_up(text_addr + text.bytes.len() as u64, PAGE) + relro_off % PAGE;
        (relro_off, relro_addr + (dynamic_off - relro_off), relro_addr)
    } else {
        (dynamic_off, align_up(text_addr + text.bytes.len() as u64, PAGE) + dynamic_off % PAGE, 0)
    };
    let relro_seg_addr = if layout.relro.present { relro_addr } else { dynamic_addr };
    let relro_seg_len = dynamic_off + dynamic_len - relro_seg_off;
    // .data then .bss, on the page after the (relro) .dynamic's.
    let data_off = if layout.data.present { w.reserve(layout.data.len as usize, layout.data.align as usize) as u64 } else { w.reserved_len() as u64 };
    let data_addr = align_up(dynamic_addr + dynamic_len, PAGE) + data_off % PAGE;
    let bss_addr = align_up(data_addr + layout.data.len, layout.bss.align);
    let rw_end = if layout.bss.present { bss_addr + layout.bss.len } else { data_addr + layout.data.len };
    let comment_off = w.reserve(COMMENT.len(), 1) as u64;
    let debug_frame = if has_frames {
        write_debug_frame(&frame_functions(co, |i| gimli::write::Address::Constant(text_addr + text.offsets[i]))).map_err(CodeObjectError::Write)?.bytes
    } else {
        Vec::new()
    };
    let debug_frame_off = if has_frames { w.reserve(debug_frame.len(), 8) as u64 } else { 0 };
    w.reserve_null_symbol_index();
    for s in &syms {
        let section = match s.what {
            What::Func(_) => Some(text_idx),
            What::Kd(_) => rodata_idx,
            What::Data(j) => data_section(j),
            What::Dynamic => Some(dynamic_idx),
        };
        w.reserve_symbol_index(section);
    }
    w.reserve_symtab();
    w.reserve_shstrtab();
    w.reserve_strtab();
    w.reserve_section_headers();

    // Addresses (segment 0 is identity-mapped from offset 0).
    let note_addr = note_off;
    let rodata_addr = rodata_off;
    let func_addr = |i: usize| text_addr + text.offsets[i];
    let kd_addr = |k: usize| rodata_addr + (k * DESCRIPTOR_SIZE) as u64;
    let section_addr = |home: Home| match home {
        Home::Rodata => rodata_addr,
        Home::RelRo => relro_addr,
        Home::Data => data_addr,
        Home::Bss => bss_addr,
    };
    let object_addr = |j: usize| section_addr(layout.place[j].0) + layout.place[j].1;
    let sym_addr = |what: What| match what {
        What::Func(i) => func_addr(i),
        What::Kd(k) => kd_addr(k),
        What::Data(j) => object_addr(j),
        What::Dynamic => dynamic_addr,
    };
    let sym_size = |what: What| match what {
        What::Func(i) => co.functions[i].code.len() as u64,
        What::Kd(_) => DESCRIPTOR_SIZE as u64,
        What::Data(j) => co.data[j].bytes.len() as u64,
        What::Dynamic => 0,
    };

    // Resolve calls and data addresses.
    let address_of: HashMap<&str, u64> = co
        .functions
        .iter()
        .enumerate()
        .map(|(i, f)| (f.name.as_str(), func_addr(i)))
        .chain(co.data.iter().enumerate().map(|(j, d)| (d.name.as_str(), object_addr(j))))
        .collect();
    for (i, f) in co.functions.iter().enumerate() {
        for r in &f.relocs {
            let Some(&target) = address_of.get(r.symbol.as_str()) else {
                return Err(CodeObjectError::UndefinedSymbol {
                    function: f.name.clone(),
                    symbol: r.symbol.clone(),
                });
            };
            let p = func_addr(i) + r.offset;
            let value = (target as i64)
                .wrapping_add(r.addend)
                .wrapping_sub(p as i64) as u64;
            let field = match r.kind {
                super::RelocKind::Rel32Lo => value as u32,
                super::RelocKind::Rel32Hi => (value >> 32) as u32,
            };
            patch32(&mut text.bytes, text.offsets[i] + r.offset, field);
        }
    }
    // Descriptors (entry offset: entry - descriptor) and data.
    let rodata = layout.rodata_contents(co, &kernels, |k, i| func_addr(i) as i64 - kd_addr(k) as i64)?;
    let data = layout.contents(co, Home::Data);
    let relro = layout.contents(co, Home::RelRo);
    let data_index: HashMap<&str, usize> = co.data.iter().enumerate().map(|(j, d)| (d.name.as_str(), j)).collect();
    let mut rela_dyn = Vec::with_capacity(addresses.len());
    for &(home, at, symbol, addend) in &addresses {
        let Some(&j) = data_index.get(symbol) else {
            return Err(CodeObjectError::UndefinedSymbol { function: format!("data at {:#x}", section_addr(home) + at), symbol: symbol.to_string() });
        };
        rela_dyn.push(Rel { r_offset: section_addr(home) + at, r_sym: 0, r_type: R_AMDGPU_RELATIVE64, r_addend: (object_addr(j) + addend) as i64 });
    }

    // Write.
    w.write_file_header(&file_header(co, elf::ET_DYN))
        .map_err(werr)?;
    w.write_align_program_headers();
    let phdr_len = u64::from(num_phdrs) * 56;
    let text_len = text.bytes.len() as u64;
    let mut phdrs = vec![
        (elf::PT_PHDR, elf::PF_R, 64, 64, phdr_len, phdr_len, 8),
        (elf::PT_LOAD, elf::PF_R, 0, 0, seg0_end, seg0_end, PAGE),
        (
            elf::PT_LOAD,
            elf::PF_R | elf::PF_X,
            text_off,
            text_addr,
            text_len,
            text_len,
            PAGE,
        ),
        (
            elf::PT_LOAD,
            elf::PF_R | elf::PF_W,
            relro_seg_off,
            relro_seg_addr,
            relro_seg_len,
            relro_seg_len,
            PAGE,
        ),
        (
            elf::PT_DYNAMIC,
            elf::PF_R | elf::PF_W,
            dynamic_off,
            dynamic_addr,
            dynamic_len,
            dynamic_len,
            8,
        ),
        (
            elf::PT_GNU_RELRO,
            elf::PF_R,
            relro_seg_off,
            relro_seg_addr,
            relro_seg_len,
            relro_seg_len,
            1,
        ),
        (elf::PT_GNU_STACK, elf::PF_R | elf::PF_W, 0, 0, 0, 0, 0),
        (
            elf::PT_NOTE,
            elf::PF_R,
            note_off,
            note_addr,
            note.len() as u64,
            note.len() as u64,
            4,
        ),
    ];
    if layout.writable() {
        phdrs.insert(4, (elf::PT_LOAD, elf::PF_R | elf::PF_W, data_off, data_addr, layout.data.len, rw_end - data_addr, PAGE));
    }
    for (p_type, p_flags, p_offset, p_vaddr, p_filesz, p_memsz, p_align) in phdrs {
        w.write_program_header(&ProgramHeader {
            p_type,
            p_flags,
            p_offset,
            p_vaddr,
            p_paddr: p_vaddr,
            p_filesz,
            p_memsz,
            p_align,
        });
    }
    w.pad_until(note_off as usize);
    w.write(&note);
    w.write_null_dynamic_symbol();
    for &i in &dyn_syms {
        let s = &syms[i];
        let section = match s.what {
            What::Func(_) => Some(text_idx),
            What::Kd(_) => rodata_idx,
            What::Data(j) => data_section(j),
            What::Dynamic => Some(dynamic_idx),
        };
        w.write_dynamic_symbol(&Sym {
            name: Some(dynstr_ids[&i]),
            section,
            st_info: s.st_info,
            st_other: s.st_other,
            st_shndx: 0,
            st_value: sym_addr(s.what),
            st_size: sym_size(s.what),
        });
    }
    w.write_gnu_hash(1, 26, bloom_words, bucket_count, dyn_syms.len() as u32, |i| {
        dyn_hashes[i as usize]
    });
    w.write_hash(dyn_count, dyn_count, |i| {
        if i == 0 {
            None
        } else {
            Some(sysv_hashes[i as usize - 1])
        }
    });
    w.write_dynstr();
    if !rela_dyn.is_empty() {
        w.write_align_relocation();
        for r in &rela_dyn {
            w.write_relocation(true, r);
        }
    }
    if rodata_idx.is_some() {
        w.pad_until(rodata_off as usize);
        w.write(&rodata);
    }
    w.pad_until(text_off as usize);
    w.write(&text.bytes);
    if layout.relro.present {
        w.pad_until(relro_off as usize);
        w.write(&relro);
    }
    w.pad_until(dynamic_off as usize);
    w.write_align_dynamic();
    if !rela_dyn.is_empty() {
        w.write_dynamic(elf::DT_RELA, rela_dyn_off);
        w.write_dynamic(elf::DT_RELASZ, rela_dyn_len);
        w.write_dynamic(elf::DT_RELAENT, 24);
        // Every one is relative.
        w.write_dynamic(elf::DT_RELACOUNT, rela_dyn.len() as u64);
    }
    w.write_dynamic(elf::DT_SYMTAB, dynsym_off);
    w.write_dynamic(elf::DT_SYMENT, 24);
    w.write_dynamic(elf::DT_STRTAB, dynstr_off);
    w.write_dynamic(elf::DT_STRSZ, dynstr_len);
    w.write_dynamic(elf::DT_GNU_HASH, gnu_hash_off);
    w.write_dynamic(elf::DT_HASH, hash_off);
    w.write_dynamic(elf::DT_NULL, 0);
    if layout.data.present {
        w.pad_until(data_off as usize);
        w.write(&data);
    }
    w.pad_until(comment_off as usize);
    w.write(COMMENT);
    if has_frames {
        w.pad_until(debug_frame_off as usize);
        w.write(&debug_frame);
    }
    w.write_null_symbol();
    for (s, id) in syms.iter().zip(&str_ids) {
        let section = match s.what {
            What::Func(_) => Some(text_idx),
            What::Kd(_) => rodata_idx,
            What::Data(j) => data_section(j),
            What::Dynamic => Some(dynamic_idx),
        };
        w.write_symbol(&Sym {
            name: Some(*id),
            section,
            st_info: s.st_info,
            st_other: s.st_other,
            st_shndx: 0,
            st_value: sym_addr(s.what),
            st_size: sym_size(s.what),
        });
    }
    w.write_shstrtab();
    w.write_strtab();

    w.write_null_section_header();
    w.write_section_header(&SectionHeader {
        name: Some(note_name),
        sh_type: elf::SHT_NOTE,
        sh_flags: elf::SHF_ALLOC.into(),
        sh_addr: note_addr,
        sh_offset: note_off,
        sh_size: note.len() as u64,
        sh_link: 0,
        sh_info: 0,
        sh_addralign: 4,
        sh_entsize: 0,
    });
    w.write_dynsym_section_header(dynsym_off, 1);
    w.write_gnu_hash_section_header(gnu_hash_off);
    w.write_hash_section_header(hash_off);
    w.write_dynstr_section_header(dynstr_off);
    if !rela_dyn.is_empty() {
        w.write_section_header(&SectionHeader {
            name: rela_dyn_name,
            sh_type: elf::SHT_RELA,
            sh_flags: elf::SHF_ALLOC.into(),
            sh_addr: rela_dyn_off,
            sh_offset: rela_dyn_off,
            sh_size: rela_dyn_len,
            sh_link: dynsym_idx.0,
            sh_info: 0,
            sh_addralign: 8,
            sh_entsize: 24,
        });
    }
    if rodata_idx.is_some() {
        w.write_section_header(&SectionHeader {
            name: Some(rodata_name),
            sh_type: elf::SHT_PROGBITS,
            sh_flags: elf::SHF_ALLOC.into(),
            sh_addr: rodata_addr,
            sh_offset: rodata_off,
            sh_size: layout.rodata.len,
            sh_link: 0,
            sh_info: 0,
            sh_addralign: layout.rodata.align,
            sh_entsize: 0,
        });
    }
    w.write_section_header(&SectionHeader {
        name: Some(text_name),
        sh_type: elf::SHT_PROGBITS,
        sh_flags: (elf::SHF_ALLOC | elf::SHF_EXECINSTR).into(),
        sh_addr: text_addr,
        sh_offset: text_off,
        sh_size: text_len,
        sh_link: 0,
        sh_info: 0,
        sh_addralign: text.align,
        sh_entsize: 0,
    });
    if let Some(relro_name) = relro_name {
        write_writable_header(&mut w, relro_name, elf::SHT_PROGBITS, relro_addr, relro_off, layout.relro);
    }
    w.write_dynamic_section_header(dynamic_addr);
    if layout.data.present {
        write_writable_header(&mut w, data_name, elf::SHT_PROGBITS, data_addr, data_off, layout.data);
    }
    if layout.bss.present {
        write_writable_header(&mut w, bss_name, elf::SHT_NOBITS, bss_addr, data_off + (bss_addr - data_addr), layout.bss);
    }
    w.write_section_header(&SectionHeader {
        name: Some(comment_name),
        sh_type: elf::SHT_PROGBITS,
        sh_flags: (elf::SHF_MERGE | elf::SHF_STRINGS).into(),
        sh_addr: 0,
        sh_offset: comment_off,
        sh_size: COMMENT.len() as u64,
        sh_link: 0,
        sh_info: 0,
        sh_addralign: 1,
        sh_entsize: 1,
    });
    if has_frames {
        write_debug_frame_header(&mut w, debug_frame_name, debug_frame_off, debug_frame.len());
    }
    w.write_symtab_section_header(num_local);
    w.write_shstrtab_section_header();
    w.write_strtab_section_header();
    check_layout(&w)?;
    Ok(out)
}

/// Writes a relocatable object (`ET_REL`) like `llc -filetype=obj`: `.text` with
/// `.rela.text` (`R_AMDGPU_REL32_LO/HI` for calls, references to functions not
/// defined here become undefined hidden symbols), `.rodata` with `.rela.rodata`
/// (`R_AMDGPU_REL64` for each descriptor's entry offset), the metadata `.note`.
/// `ld.lld-22 -shared` turns it (with other objects) into a `.hsaco`.
pub fn write_relocatable(co: &CodeObject) -> Result<Vec<u8>, CodeObjectError> {
    let Prepared { note, mut text, kernels, kd_names, layout } = prepare(co)?;
    let defined: HashMap<&str, ()> = co.functions.iter().map(|f| f.name.as_str()).chain(co.data.iter().map(|d| d.name.as_str())).map(|n| (n, ())).collect();
    let mut undefined: Vec<&str> = Vec::new();
    for f in &co.functions {
        for r in &f.relocs {
            if !defined.contains_key(r.symbol.as_str()) && !undefined.contains(&r.symbol.as_str()) {
                if r.symbol.is_empty() || r.symbol.contains('\0') || kd_names.contains(&r.symbol) {
                    return Err(CodeObjectError::BadName(r.symbol.clone()));
                }
                undefined.push(&r.symbol);
            }
        }
    }
    // In the object the reloc fields hold 0 (RELA: the addend is in the entry).
    for (i, f) in co.functions.iter().enumerate() {
        for r in &f.relocs {
            patch32(&mut text.bytes, text.offsets[i] + r.offset, 0);
        }
    }
    let text_relocs: Vec<(u64, &str, u32, i64)> = co
        .functions
        .iter()
        .enumerate()
        .flat_map(|(i, f)| {
            let base = text.offsets[i];
            f.relocs.iter().map(move |r| {
                (
                    base + r.offset,
                    r.symbol.as_str(),
                    r.kind.elf_type(),
                    r.addend,
                )
            })
        })
        .collect();

    let mut out = Vec::new();
    let mut w = Writer::new(Endianness::Little, true, &mut out);
    w.reserve_null_section_index();
    let text_name = w.add_section_name(b".text");
    let text_idx = w.reserve_section_index();
    let rela_text_name = w.add_section_name(b".rela.text");
    let rela_text_idx = (!text_relocs.is_empty()).then(|| w.reserve_section_index());
    let rodata_name = w.add_section_name(b".rodata");
    let rodata_idx = layout.rodata.present.then(|| w.reserve_section_index());
    let rela_rodata_name = w.add_section_name(b".rela.rodata");
    let rela_rodata_idx = (!kernels.is_empty()).then(|| w.reserve_section_index());
    // Addresses held in data: R_AMDGPU_ABS64 against the object they
    // point into, per section (`.rela.data.rel.ro`, `.rela.data`).
    let addresses = layout.addresses(co);
    let relro_relocs: Vec<(u64, &str, u64)> = addresses.iter().filter(|a| a.0 == Home::RelRo).map(|&(_, at, sym, addend)| (at, sym, addend)).collect();
    let data_relocs: Vec<(u64, &str, u64)> = addresses.iter().filter(|a| a.0 == Home::Data).map(|&(_, at, sym, addend)| (at, sym, addend)).collect();
    // (Names only for sections present, as before these existed.)
    let relro_name = layout.relro.present.then(|| w.add_section_name(b".data.rel.ro"));
    let relro_idx = layout.relro.present.then(|| w.reserve_section_index());
    let rela_relro_name = (!relro_relocs.is_empty()).then(|| w.add_section_name(b".rela.data.rel.ro"));
    let _rela_relro_idx = (!relro_relocs.is_empty()).then(|| w.reserve_section_index());
    let data_name = w.add_section_name(b".data");
    let data_idx = layout.data.present.then(|| w.reserve_section_index());
    let rela_data_name = (!data_relocs.is_empty()).then(|| w.add_section_name(b".rela.data"));
    let _rela_data_idx = (!data_relocs.is_empty()).then(|| w.reserve_section_index());
    let bss_name = w.add_section_name(b".bss");
    let bss_idx = layout.bss.present.then(|| w.reserve_section_index());
    let comment_name = w.add_section_name(b".comment");
    let _comment_idx = w.reserve_section_index();
    let stack_name = w.add_section_name(b".note.GNU-stack");
    let _stack_idx = w.reserve_section_index();
    let note_name = w.add_section_name(b".note");
    let _note_idx = w.reserve_section_index();
    let has_frames = co.functions.iter().any(|f| !f.frame.is_empty());
    let debug_frame_name = w.add_section_name(b".debug_frame");
    let debug_frame_idx = has_frames.then(|| w.reserve_section_index());
    let rela_debug_frame_name = w.add_section_name(b".rela.debug_frame");
    let _rela_debug_frame_idx = has_frames.then(|| w.reserve_section_index());
    let symtab_idx = w.reserve_symtab_section_index();
    let _strtab_idx = w.reserve_strtab_section_index();
    let _shstrtab_idx = w.reserve_shstrtab_section_index();
    let _ = (rela_text_idx, rela_rodata_idx);

    // Symbols: null, the `.debug_frame` section symbol (local, when there is
    // one: CIE pointers are relocated against it), then globals: functions,
    // descriptors, undefined.
    struct S<'n> {
        name: &'n [u8],
        section: Option<SectionIndex>,
        st_info: u8,
        st_other: u8,
        value: u64,
        size: u64,
    }
    let mut syms: Vec<S> = Vec::new();
    let mut sym_index: HashMap<&str, u32> = HashMap::new();
    let num_local = if has_frames {
        syms.push(S { name: b"", section: debug_frame_idx, st_info: (elf::STB_LOCAL << 4) | elf::STT_SECTION, st_other: 0, value: 0, size: 0 });
        2
    } else {
        1
    };
    let mut kd_k = 0;
    for (i, f) in co.functions.iter().enumerate() {
        sym_index.insert(&f.name, syms.len() as u32 + 1);
        syms.push(S {
            name: f.name.as_bytes(),
            section: Some(text_idx),
            st_info: (elf::STB_GLOBAL << 4) | elf::STT_FUNC,
            st_other: vis_bits(f.visibility),
            value: text.offsets[i],
            size: f.code.len() as u64,
        });
        if f.kernel.is_some() {
            syms.push(S {
                name: kd_names[kd_k].as_bytes(),
                section: rodata_idx,
                st_info: (elf::STB_GLOBAL << 4) | elf::STT_OBJECT,
                st_other: vis_bits(f.visibility),
                value: (kd_k * DESCRIPTOR_SIZE) as u64,
                size: DESCRIPTOR_SIZE as u64,
            });
            kd_k += 1;
        }
    }
    // Data: global hidden objects (ld.lld-22 makes them local in the
    // .hsaco, as it does LLVM's).
    for (d, &(home, at)) in co.data.iter().zip(&layout.place) {
        sym_index.insert(&d.name, syms.len() as u32 + 1);
        syms.push(S {
            name: d.name.as_bytes(),
            section: match home {
                Home::Rodata => rodata_idx,
                Home::RelRo => relro_idx,
                Home::Data => data_idx,
                Home::Bss => bss_idx,
            },
            st_info: (elf::STB_GLOBAL << 4) | elf::STT_OBJECT,
            st_other: elf::STV_HIDDEN,
            value: at,
            size: d.bytes.len() as u64,
        });
    }
    for u in &undefined {
        sym_index.insert(u, syms.len() as u32 + 1);
        syms.push(S {
            name: u.as_bytes(),
            section: None,
            st_info: (elf::STB_GLOBAL << 4) | elf::STT_NOTYPE,
            st_other: elf::STV_HIDDEN,
            value: 0,
            size: 0,
        });
    }
    let str_ids: Vec<Option<StringId>> = syms.iter().map(|s| (!s.name.is_empty()).then(|| w.add_string(s.name))).collect();

    // `.debug_frame`: FDE addresses are relocated against the functions
    // (R_AMDGPU_ABS64), CIE pointers against the section (R_AMDGPU_ABS32, the
    // offset as addend); the fields hold 0 (RELA).
    let mut debug_frame_relocs: Vec<(u64, u32, u32, i64)> = Vec::new();
    let debug_frame = if has_frames {
        let mut section = write_debug_frame(&frame_functions(co, |i| gimli::write::Address::Symbol { symbol: i, addend: 0 })).map_err(CodeObjectError::Write)?;
        for &(offset, function) in &section.address_relocs {
            debug_frame_relocs.push((offset, sym_index[co.functions[function].name.as_str()], R_AMDGPU_ABS64, 0));
        }
        for &offset in &section.cie_pointer_relocs {
            let at = offset as usize;
            let value = u32::from_le_bytes(section.bytes[at..at + 4].try_into().expect("4 bytes"));
            section.bytes[at..at + 4].fill(0);
            debug_frame_relocs.push((offset, 1, R_AMDGPU_ABS32, i64::from(value)));
        }
        debug_frame_relocs.sort_by_key(|r| r.0);
        section.bytes
    } else {
        Vec::new()
    };

    // Entry offsets 0: the link fills them in (.rela.rodata).
    let rodata = layout.rodata_contents(co, &kernels, |_, _| 0)?;
    let data = layout.contents(co, Home::Data);
    let relro = layout.contents(co, Home::RelRo);
    for &(_, sym, _) in relro_relocs.iter().chain(&data_relocs) {
        if !sym_index.contains_key(sym) {
            return Err(CodeObjectError::UndefinedSymbol { function: "data".to_string(), symbol: sym.to_string() });
        }
    }

    w.reserve_file_header();
    let text_off = w.reserve(text.bytes.len(), text.align as usize);
    let rela_text_off = if text_relocs.is_empty() {
        0
    } else {
        w.reserve_relocations(text_relocs.len(), true)
    };
    let rodata_off = if layout.rodata.present { w.reserve(rodata.len(), layout.rodata.align as usize) } else { 0 };
    let rela_rodata_off = if kernels.is_empty() {
        0
    } else {
        w.reserve_relocations(kernels.len(), true)
    };
    let relro_off = if layout.relro.present { w.reserve(relro.len(), layout.relro.align as usize) } else { 0 };
    let rela_relro_off = if relro_relocs.is_empty() { 0 } else { w.reserve_relocations(relro_relocs.len(), true) };
    let data_off = if layout.data.present { w.reserve(data.len(), layout.data.align as usize) } else { w.reserved_len() };
    let rela_data_off = if data_relocs.is_empty() { 0 } else { w.reserve_relocations(data_relocs.len(), true) };
    let comment_off = w.reserve(COMMENT.len(), 1);
    let note_off = w.reserve(note.len(), 4);
    let debug_frame_off = if has_frames { w.reserve(debug_frame.len(), 8) } else { 0 };
    let rela_debug_frame_off = if has_frames { w.reserve_relocations(debug_frame_relocs.len(), true) } else { 0 };
    w.reserve_null_symbol_index();
    for s in &syms {
        w.reserve_symbol_index(s.section);
    }
    w.reserve_symtab();
    w.reserve_strtab();
    w.reserve_shstrtab();
    w.reserve_section_headers();

    w.write_file_header(&file_header(co, elf::ET_REL))
        .map_err(werr)?;
    w.pad_until(text_off);
    w.write(&text.bytes);
    if !text_relocs.is_empty() {
        w.write_align_relocation();
        for &(offset, sym, r_type, addend) in &text_relocs {
            w.write_relocation(
                true,
                &Rel {
                    r_offset: offset,
                    r_sym: sym_index[sym],
                    r_type,
                    r_addend: addend,
                },
            );
        }
    }
    if layout.rodata.present {
        w.pad_until(rodata_off);
        w.write(&rodata);
    }
    if !kernels.is_empty() {
        w.write_align_relocation();
        for (k, &i) in kernels.iter().enumerate() {
            w.write_relocation(
                true,
                &Rel {
                    r_offset: (k * DESCRIPTOR_SIZE) as u64 + ENTRY_OFFSET_FIELD,
                    r_sym: sym_index[co.functions[i].name.as_str()],
                    r_type: R_AMDGPU_REL64,
                    r_addend: ENTRY_OFFSET_FIELD as i64,
                },
            );
        }
    }
    let write_abs64 = |w: &mut Writer, relocs: &[(u64, &str, u64)]| {
        w.write_align_relocation();
        for &(offset, sym, addend) in relocs {
            w.write_relocation(true, &Rel { r_offset: offset, r_sym: sym_index[sym], r_type: R_AMDGPU_ABS64, r_addend: addend as i64 });
        }
    };
    if layout.relro.present {
        w.pad_until(relro_off);
        w.write(&relro);
    }
    if !relro_relocs.is_empty() {
        write_abs64(&mut w, &relro_relocs);
    }
    if layout.data.present {
        w.pad_until(data_off);
        w.write(&data);
    }
    if !data_relocs.is_empty() {
        write_abs64(&mut w, &data_relocs);
    }
    w.pad_until(comment_off);
    w.write(COMMENT);
    w.pad_until(note_off);
    w.write(&note);
    if has_frames {
        w.pad_until(debug_frame_off);
        w.write(&debug_frame);
        w.write_align_relocation();
        for &(offset, sym, r_type, addend) in &debug_frame_relocs {
            w.write_relocation(true, &Rel { r_offset: offset, r_sym: sym, r_type, r_addend: addend });
        }
    }
    w.write_null_symbol();
    for (s, id) in syms.iter().zip(&str_ids) {
        w.write_symbol(&Sym {
            name: *id,
            section: s.section,
            st_info: s.st_info,
            st_other: s.st_other,
            st_shndx: 0,
            st_value: s.value,
            st_size: s.size,
        });
    }
    w.write_strtab();
    w.write_shstrtab();

    w.write_null_section_header();
    w.write_section_header(&SectionHeader {
        name: Some(text_name),
        sh_type: elf::SHT_PROGBITS,
        sh_flags: (elf::SHF_ALLOC | elf::SHF_EXECINSTR).into(),
        sh_addr: 0,
        sh_offset: text_off as u64,
        sh_size: text.bytes.len() as u64,
        sh_link: 0,
        sh_info: 0,
        sh_addralign: text.align,
        sh_entsize: 0,
    });
    if !text_relocs.is_empty() {
        w.write_relocation_section_header(
            rela_text_name,
            text_idx,
            symtab_idx,
            rela_text_off,
            text_relocs.len(),
            true,
        );
    }
    if let Some(rodata_idx) = rodata_idx {
        w.write_section_header(&SectionHeader {
            name: Some(rodata_name),
            sh_type: elf::SHT_PROGBITS,
            sh_flags: elf::SHF_ALLOC.into(),
            sh_addr: 0,
            sh_offset: rodata_off as u64,
            sh_size: rodata.len() as u64,
            sh_link: 0,
            sh_info: 0,
            sh_addralign: layout.rodata.align,
            sh_entsize: 0,
        });
        if !kernels.is_empty() {
            w.write_relocation_section_header(rela_rodata_name, rodata_idx, symtab_idx, rela_rodata_off, kernels.len(), true);
        }
    }
    if let (Some(relro_idx), Some(relro_name)) = (relro_idx, relro_name) {
        write_writable_header(&mut w, relro_name, elf::SHT_PROGBITS, 0, relro_off as u64, layout.relro);
        if let Some(rela_relro_name) = rela_relro_name {
            w.write_relocation_section_header(rela_relro_name, relro_idx, symtab_idx, rela_relro_off, relro_relocs.len(), true);
        }
    }
    if let Some(data_idx) = data_idx {
        write_writable_header(&mut w, data_name, elf::SHT_PROGBITS, 0, data_off as u64, layout.data);
        if let Some(rela_data_name) = rela_data_name {
            w.write_relocation_section_header(rela_data_name, data_idx, symtab_idx, rela_data_off, data_relocs.len(), true);
        }
    }
    if layout.bss.present {
        write_writable_header(&mut w, bss_name, elf::SHT_NOBITS, 0, data_off as u64 + layout.data.len, layout.bss);
    }
    w.write_section_header(&SectionHeader {
        name: Some(comment_name),
        sh_type: elf::SHT_PROGBITS,
        sh_flags: (elf::SHF_MERGE | elf::SHF_STRINGS).into(),
        sh_addr: 0,
        sh_offset: comment_off as u64,
        sh_size: COMMENT.len() as u64,
        sh_link: 0,
        sh_info: 0,
        sh_addralign: 1,
        sh_entsize: 1,
    });
    w.write_section_header(&SectionHeader {
        name: Some(stack_name),
        sh_type: elf::SHT_PROGBITS,
        sh_flags: 0,
        sh_addr: 0,
        sh_offset: note_off as u64,
        sh_size: 0,
        sh_link: 0,
        sh_info: 0,
        sh_addralign: 1,
        sh_entsize: 0,
    });
    w.write_section_header(&SectionHeader {
        name: Some(note_name),
        sh_type: elf::SHT_NOTE,
        sh_flags: elf::SHF_ALLOC.into(),
        sh_addr: 0,
        sh_offset: note_off as u64,
        sh_size: note.len() as u64,
        sh_link: 0,
        sh_info: 0,
        sh_addralign: 4,
        sh_entsize: 0,
    });
    if let Some(debug_frame_idx) = debug_frame_idx {
        write_debug_frame_header(&mut w, debug_frame_name, debug_frame_off as u64, debug_frame.len());
        w.write_relocation_section_header(rela_debug_frame_name, debug_frame_idx, symtab_idx, rela_debug_frame_off, debug_frame_relocs.len(), true);
    }
    w.write_symtab_section_header(num_local);
    w.write_strtab_section_header();
    w.write_shstrtab_section_header();
    check_layout(&w)?;
    Ok(out)
}
