//! `amdgpu-cg inspect FILE`: a readable summary of a code object (what
//! `llvm-readelf --notes` shows, plus every descriptor field decoded).

use std::fmt::Write as _;

use amdgpu_abi::descriptor::{ComputePgmRsrc3, KernelDescriptor};
use object::elf;

use super::reader::{LoadedCodeObject, LoadedKernel};

/// Reads `data` (a code object, or a clang offload bundle of them) and
/// summarizes it.
pub fn summary_of_bytes(data: &[u8]) -> Result<String, super::CodeObjectError> {
    if super::bundle::is_bundle(data) {
        return bundle_summary(data);
    }
    Ok(summary(&super::read(data)?))
}

/// A bundle: its entries, then each code object's summary.
fn bundle_summary(data: &[u8]) -> Result<String, super::CodeObjectError> {
    let entries = super::bundle::read(data)?;
    let mut o = format!("clang offload bundle, {} entries\n", entries.len());
    for e in &entries {
        let _ = writeln!(o, "\nentry {} at offset 0x{:x}, {} bytes", e.id, e.offset, e.data.len());
        if e.data.is_empty() {
            let _ = writeln!(o, "  (empty)");
            continue;
        }
        // Host objects and bitcode entries (clang -fgpu-rdc) are listed, not read.
        let amdgpu_elf = e.data.starts_with(b"\x7fELF") && e.data.get(18..20) == Some(&object::elf::EM_AMDGPU.to_le_bytes()[..]);
        if !amdgpu_elf {
            let _ = writeln!(o, "  (not an AMDGPU code object)");
            continue;
        }
        let co = super::read(&e.data).map_err(|err| super::CodeObjectError::Bundle(format!("entry {}: {err}", e.id)))?;
        o.push_str(&summary(&co));
    }
    Ok(o)
}

fn vis(v: u8) -> &'static str {
    match v {
        elf::STV_HIDDEN => "hidden",
        elf::STV_PROTECTED => "protected",
        elf::STV_INTERNAL => "internal",
        _ => "default",
    }
}

/// The summary text.
pub fn summary(co: &LoadedCodeObject) -> String {
    let mut o = String::new();
    let kind = match co.e_type {
        elf::ET_DYN => "shared object (ET_DYN)",
        elf::ET_REL => "relocatable object (ET_REL)",
        _ => "ELF",
    };
    let _ = writeln!(
        o,
        "AMDHSA code object v{} (EI_ABIVERSION {}), {kind}",
        co.version.number(),
        co.abi_version
    );
    let p = &co.processor;
    let generic = if p.processor.generic {
        format!(", generic version {}", p.generic_version)
    } else {
        String::new()
    };
    let runs = match (&co.target, p.processor.generic) {
        (Some(t), true) => format!("; amdgpu-cg simulates it as {}", t.target.gpu),
        (Some(_), false) => String::new(),
        (None, _) => "; amdgpu-cg does not compile for or simulate this processor".to_string(),
    };
    let _ = writeln!(
        o,
        "target: amdgcn-amd-amdhsa--{} (e_flags 0x{:x}: {}{generic}, xnack {}, sramecc {}), wave{}{runs}",
        p.processor_with_features(),
        co.e_flags,
        p.processor.name,
        p.xnack.describe(),
        p.sramecc.describe(),
        co.wave.lanes()
    );
    for m in &co.metadata {
        let _ = writeln!(
            o,
            "metadata: amdhsa.version {}.{}, amdhsa.target {}, {} kernel(s)",
            m.version[0],
            m.version[1],
            m.target,
            m.kernels.len()
        );
    }
    if co.metadata.is_empty() {
        let _ = writeln!(o, "metadata: none (no NT_AMDGPU_METADATA note)");
    }
    let _ = writeln!(
        o,
        "kernels ({} from {}):",
        co.kernels.len(),
        co.symbol_table
    );
    for k in &co.kernels {
        kernel(&mut o, k);
    }
    let others: Vec<_> = co
        .functions
        .iter()
        .filter(|f| {
            !co.kernels
                .iter()
                .any(|k| k.name == f.name && k.entry_address == f.address)
        })
        .collect();
    if !others.is_empty() {
        let _ = writeln!(o, "other functions:");
        for f in others {
            let _ = writeln!(
                o,
                "  {} at 0x{:x}, {} bytes, {} {}",
                f.name,
                f.address,
                f.size,
                if f.global { "global" } else { "local" },
                vis(f.visibility)
            );
        }
    }
    o
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

fn kernel(o: &mut String, k: &LoadedKernel) {
    let d: &KernelDescriptor = &k.descriptor;
    let _ = writeln!(o, "  kernel {}", k.name);
    let _ = writeln!(
        o,
        "    descriptor {} at 0x{:x}; entry 0x{:x} (offset {:+#x}); code {} bytes",
        k.descriptor_symbol,
        k.descriptor_address,
        k.entry_address,
        d.kernel_code_entry_byte_offset,
        k.code.len()
    );
    let _ = writeln!(
        o,
        "    segments: kernarg {} bytes, group (LDS) {} bytes, private {} bytes/work-item, dynamic stack {}",
        d.kernarg_size,
        d.group_segment_fixed_size,
        d.private_segment_fixed_size,
        yes(d.kernel_code_properties.uses_dynamic_stack)
    );
    let r1 = &d.compute_pgm_rsrc1;
    let _ = writeln!(
        o,
        "    rsrc1 0x{:08x}: vgpr granules {}, sgpr granules {}, round {:?}/{:?}, denorm {:?}/{:?}, dx10_clamp {}, ieee {}, fp16_ovfl {}, wgp {}, mem_ordered {}, fwd_progress {}",
        r1.to_bits().unwrap_or(0),
        r1.granulated_workitem_vgpr_count,
        r1.granulated_wavefront_sgpr_count,
        r1.float_round_mode_32,
        r1.float_round_mode_16_64,
        r1.float_denorm_mode_32,
        r1.float_denorm_mode_16_64,
        yes(r1.enable_dx10_clamp),
        yes(r1.enable_ieee_mode),
        yes(r1.fp16_ovfl),
        yes(r1.wgp_mode),
        yes(r1.mem_ordered),
        yes(r1.fwd_progress)
    );
    let r2 = &d.compute_pgm_rsrc2;
    let wg: Vec<&str> = [
        (r2.enable_sgpr_workgroup_id_x, "x"),
        (r2.enable_sgpr_workgroup_id_y, "y"),
        (r2.enable_sgpr_workgroup_id_z, "z"),
    ]
    .iter()
    .filter(|(b, _)| *b)
    .map(|(_, n)| *n)
    .collect();
    let _ = writeln!(
        o,
        "    rsrc2 0x{:08x}: user sgprs {}, workgroup ids [{}], workgroup info {}, workitem ids {:?}, private segment {}, lds granules {}",
        r2.to_bits().unwrap_or(0),
        r2.user_sgpr_count,
        wg.join(","),
        yes(r2.enable_sgpr_workgroup_info),
        r2.enable_vgpr_workitem_id,
        yes(r2.enable_private_segment),
        r2.granulated_lds_size
    );
    match d.compute_pgm_rsrc3 {
        ComputePgmRsrc3::Gfx9 {
            accum_offset,
            tg_split,
        } => {
            let _ = writeln!(
                o,
                "    rsrc3 0x{:08x}: accum_offset {} (field {}), tg_split {}",
                d.compute_pgm_rsrc3.to_bits().unwrap_or(0),
                (u32::from(accum_offset) + 1) * 4,
                accum_offset,
                yes(tg_split)
            );
        }
        ComputePgmRsrc3::Gfx11 {
            shared_vgpr_count,
            inst_pref_size,
            trap_on_start,
            trap_on_end,
            image_op,
        } => {
            let _ = writeln!(
                o,
                "    rsrc3 0x{:08x}: shared vgprs {}, inst_pref_size {}, trap on start {}, trap on end {}, image_op {}",
                d.compute_pgm_rsrc3.to_bits().unwrap_or(0),
                shared_vgpr_count,
                inst_pref_size,
                yes(trap_on_start),
                yes(trap_on_end),
                yes(image_op)
            );
        }
        ComputePgmRsrc3::Other(bits) => {
            let _ = writeln!(o, "    rsrc3 0x{bits:08x} (layout not modelled for this processor)");
        }
    }
    let p = &d.kernel_code_properties;
    let names: Vec<&str> = [
        (
            p.enable_sgpr_private_segment_buffer,
            "private_segment_buffer",
        ),
        (p.enable_sgpr_dispatch_ptr, "dispatch_ptr"),
        (p.enable_sgpr_queue_ptr, "queue_ptr"),
        (p.enable_sgpr_kernarg_segment_ptr, "kernarg_segment_ptr"),
        (p.enable_sgpr_dispatch_id, "dispatch_id"),
        (p.enable_sgpr_flat_scratch_init, "flat_scratch_init"),
        (p.enable_sgpr_private_segment_size, "private_segment_size"),
        (p.enable_wavefront_size32, "wavefront_size32"),
        (p.uses_dynamic_stack, "uses_dynamic_stack"),
    ]
    .iter()
    .filter(|(b, _)| *b)
    .map(|(_, n)| *n)
    .collect();
    let _ = writeln!(
        o,
        "    properties 0x{:04x}: {}",
        p.to_bits(),
        names.join(", ")
    );
    if d.kernarg_preload.length > 0 {
        let _ = writeln!(
            o,
            "    kernarg preload: {} dwords at dword {}",
            d.kernarg_preload.length, d.kernarg_preload.offset
        );
    }
    let Some(m) = &k.metadata else {
        let _ = writeln!(o, "    (no metadata for this kernel)");
        return;
    };
    let _ = writeln!(
        o,
        "    metadata: kernarg {} bytes (align {}), group {}, private {}, wavefront {}, sgpr {}, vgpr {}{}, spills s{}/v{}, max flat workgroup {}{}",
        m.kernarg_segment_size,
        m.kernarg_segment_align,
        m.group_segment_fixed_size,
        m.private_segment_fixed_size,
        m.wavefront_size,
        m.sgpr_count,
        m.vgpr_count,
        m.agpr_count.map(|a| format!(", agpr {a}")).unwrap_or_default(),
        m.sgpr_spill_count,
        m.vgpr_spill_count,
        m.max_flat_workgroup_size,
        m.uses_dynamic_stack.map(|u| format!(", uses dynamic stack {}", yes(u))).unwrap_or_default()
    );
    if let Some(l) = &m.language {
        let v = m
            .language_version
            .map(|[a, b]| format!(" {a}.{b}"))
            .unwrap_or_default();
        let _ = writeln!(o, "    language: {l}{v}");
    }
    let _ = writeln!(o, "    args ({}):", m.args.len());
    for a in &m.args {
        let mut line = format!(
            "      {:>4} +{:<3} {:<26}",
            a.offset,
            a.size,
            a.value_kind.name()
        );
        if let Some(n) = &a.name {
            line += &format!(" {n}");
        }
        if let Some(t) = &a.type_name {
            line += &format!(" ({t})");
        }
        if let Some(s) = a.address_space {
            line += &format!(" {}", super::metadata::addr_space_name(s));
        }
        if let Some(x) = a.access {
            line += &format!(" access={}", x.name());
        }
        if let Some(x) = a.actual_access {
            line += &format!(" actual_access={}", x.name());
        }
        if let Some(x) = a.pointee_align {
            line += &format!(" pointee_align={x}");
        }
        for (b, n) in [
            (a.is_const, "const"),
            (a.is_restrict, "restrict"),
            (a.is_volatile, "volatile"),
        ] {
            if b {
                line += &format!(" {n}");
            }
        }
        let _ = writeln!(o, "{}", line.trim_end());
    }
}
