//! The `-S` listing as assembler source that gives back the code object:
//! `llvm-mc -filetype=obj` of it, linked by `ld.lld -shared`, has the same code
//! bytes, kernel descriptors and metadata note as [`super::write_hsaco`]'s output
//! (tests/listing_roundtrip.rs checks every example on every target).
//!
//! What it prints, in llc-22's manner: `.amdgcn_target`, `.amdhsa_code_object_version`,
//! each function with its alignment, binding, visibility, type and size (the
//! bodies come from the code generator, with calls written as `sym@rel32@lo+4`
//! relocation expressions), each kernel's descriptor as an `.amdhsa_kernel`
//! block, the instruction-prefetch padding after the code, and the metadata note
//! as the YAML of an `.amdgpu_metadata` block. Call-frame information
//! (`.debug_frame`) is not in the listing.

use std::fmt::Write as _;

use amdgpu_abi::descriptor::{ComputePgmRsrc3, KernelDescriptor};
use amdgpu_isa::{Generation, Gpu};
use rmpv::Value;

use super::data_layout::Home;
use super::{CodeObject, CodeObjectError, CodeObjectTarget, FeatureSetting, Visibility};

/// `name` as an assembler symbol: bare when the assembler reads it as one
/// symbol, in double quotes otherwise.
pub fn symbol(name: &str) -> String {
    let bare = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '.')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '$');
    if bare {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

/// The listing of `co`; `body(name)` is the instruction text of each function
/// (labels and instructions, as the code generator prints them).
pub fn listing<'a>(co: &CodeObject, body: impl Fn(&str) -> Option<&'a str>) -> Result<String, CodeObjectError> {
    let target = co.target.target;
    let mut o = String::new();
    // llvm-mc takes the processor's feature settings and the wave size from the
    // command line and checks them against `.amdgcn_target`.
    let mut mattr = Vec::new();
    for (name, setting) in [("sramecc", co.target.sramecc), ("xnack", co.target.xnack)] {
        match setting {
            FeatureSetting::On => mattr.push(format!("+{name}")),
            FeatureSetting::Off => mattr.push(format!("-{name}")),
            _ => {}
        }
    }
    if target.wave != target.gpu.default_wave_size() {
        mattr.push(format!("+wavefrontsize{}", target.wave.lanes()));
    }
    let mattr = if mattr.is_empty() { String::new() } else { format!(" -mattr={}", mattr.join(",")) };
    let _ = writeln!(
        o,
        "; assemble: llvm-mc -triple=amdgcn-amd-amdhsa -mcpu={}{mattr} -filetype=obj FILE.s -o FILE.o; link: ld.lld -shared FILE.o -o FILE.hsaco",
        target.gpu.name()
    );
    let _ = writeln!(o, "\t.amdgcn_target \"{}\"", co.target.isa_name());
    let _ = writeln!(o, "\t.amdhsa_code_object_version {}", co.version.number());
    let _ = writeln!(o, "\t.text");
    for (i, f) in co.functions.iter().enumerate() {
        if f.name.starts_with(".L") {
            // The assembler keeps `.L` names out of the symbol table.
            return Err(CodeObjectError::InconsistentKernel {
                kernel: f.name.clone(),
                message: "a name starting with '.L' is an assembler-local label: the listing cannot define it as a symbol".into(),
            });
        }
        let name = symbol(&f.name);
        let text = body(&f.name).ok_or_else(|| CodeObjectError::InconsistentKernel {
            kernel: f.name.clone(),
            message: "no instruction text for the listing".into(),
        })?;
        // Kernels at 256 bytes, other functions at 4: the writer's layout.
        let _ = writeln!(o, "\t.p2align {}", if f.kernel.is_some() { 8 } else { 2 });
        match f.visibility {
            Visibility::Hidden => {
                let _ = writeln!(o, "\t.hidden {name}");
            }
            Visibility::Protected => {
                let _ = writeln!(o, "\t.protected {name}");
            }
            Visibility::Default => {}
        }
        let _ = writeln!(o, "\t.globl {name}\n\t.type {name},@function\n{name}:");
        o.push_str(text);
        if !text.ends_with('\n') {
            o.push('\n');
        }
        let _ = writeln!(o, ".Lfunc_end{i}:\n\t.size {name}, .Lfunc_end{i}-{name}");
        if let Some(k) = &f.kernel {
            let _ = writeln!(o, "\t.section .rodata,\"a\",@progbits\n\t.p2align 6, 0x0");
            o.push_str(&descriptor_directives(&name, &k.descriptor, &co.target).map_err(|message| {
                CodeObjectError::InconsistentKernel { kernel: f.name.clone(), message }
            })?);
            let _ = writeln!(o, "\t.text");
        }
    }
    // Data after the descriptors in .rodata, or in .data and .bss, as the
    // writer lays it out.
    for d in &co.data {
        let name = symbol(&d.name);
        let section = match Home::of(d) {
            Home::Rodata => ".rodata,\"a\",@progbits",
            Home::RelRo => ".data.rel.ro,\"aw\",@progbits",
            Home::Data => ".data,\"aw\",@progbits",
            Home::Bss => ".bss,\"aw\",@nobits",
        };
        let _ = writeln!(o, "\t.section {section}\n\t.p2align {}, 0x0\n\t.hidden {name}\n\t.globl {name}\n\t.type {name},@object\n{name}:", d.align.trailing_zeros());
        // The bytes between the addresses it holds, each address a `.quad`
        // of its symbol (an R_AMDGPU_ABS64 relocation for the linker).
        let mut at = 0usize;
        let mut runs: Vec<(&[u8], Option<&super::DataAddress>)> = Vec::new();
        for a in &d.addrs {
            runs.push((&d.bytes[at..a.offset as usize], Some(a)));
            at = a.offset as usize + 8;
        }
        runs.push((&d.bytes[at..], None));
        for (run, address) in runs {
            if run.iter().all(|&b| b == 0) {
                if !run.is_empty() {
                    let _ = writeln!(o, "\t.zero {}", run.len());
                }
            } else {
                for line in run.chunks(16) {
                    let bytes: Vec<String> = line.iter().map(|b| format!("0x{b:02x}")).collect();
                    let _ = writeln!(o, "\t.byte {}", bytes.join(","));
                }
            }
            if let Some(a) = address {
                let _ = writeln!(o, "\t.quad {}+{}", symbol(&a.symbol), a.addend);
            }
        }
        let _ = writeln!(o, "\t.size {name}, {}\n\t.text", d.bytes.len());
    }
    // LLVM's instruction-prefetch padding after the last function (the writer's
    // `layout_text`): gfx9 `s_nop 0` to a 64-byte boundary and 256 words more,
    // gfx11 `s_code_end` to a 128-byte boundary and 96 words more.
    let (align_log2, words, fill) = match target.gpu.generation() {
        Generation::Gfx9 => (6, 256, 0xbf80_0000u32),
        Generation::Gfx11 => (7, 96, 0xbf9f_0000u32),
    };
    let _ = writeln!(o, "\t.p2alignl {align_log2}, {fill}\n\t.fill {words}, 4, {fill}");
    let _ = writeln!(o, "\t.amdgpu_metadata");
    let note = super::writer::build_metadata(co).to_msgpack();
    let value = rmpv::decode::read_value(&mut note.as_slice()).map_err(|e| CodeObjectError::Metadata(e.to_string()))?;
    o.push_str("---\n");
    yaml(&mut o, &value, 0);
    o.push_str("...\n");
    let _ = writeln!(o, "\t.end_amdgpu_metadata");
    Ok(o)
}

/// The `.amdhsa_kernel` block that makes llvm-mc write exactly `d` (the entry
/// offset aside, which the assembler computes). Errors name a field that no
/// directive sets.
pub fn descriptor_directives(name: &str, d: &KernelDescriptor, co_target: &CodeObjectTarget) -> Result<String, String> {
    let target = co_target.target;
    let gpu = target.gpu;
    // The assembler insists that XNACK_MASK is reserved exactly when the target
    // id's xnack is on or "any".
    let xnack_reserved = matches!(co_target.xnack, FeatureSetting::On | FeatureSetting::Any);
    let r1 = d.compute_pgm_rsrc1;
    let r2 = d.compute_pgm_rsrc2;
    let p = d.kernel_code_properties;
    for (set, field) in [
        (r1.priority != 0, "compute_pgm_rsrc1.priority"),
        (r1.priv_, "compute_pgm_rsrc1.priv"),
        (r1.debug_mode, "compute_pgm_rsrc1.debug_mode"),
        (r1.bulky, "compute_pgm_rsrc1.bulky"),
        (r1.cdbg_user, "compute_pgm_rsrc1.cdbg_user"),
        (r2.enable_trap_handler, "compute_pgm_rsrc2.enable_trap_handler"),
        (r2.enable_exception_address_watch, "compute_pgm_rsrc2.enable_exception_address_watch"),
        (r2.enable_exception_memory, "compute_pgm_rsrc2.enable_exception_memory"),
        (r2.granulated_lds_size != 0, "compute_pgm_rsrc2.granulated_lds_size"),
    ] {
        if set {
            return Err(format!("the descriptor sets {field}, which no .amdhsa directive expresses"));
        }
    }
    let mut lines: Vec<(&str, u64)> = vec![
        ("group_segment_fixed_size", d.group_segment_fixed_size.into()),
        ("private_segment_fixed_size", d.private_segment_fixed_size.into()),
        ("kernarg_size", d.kernarg_size.into()),
        ("user_sgpr_count", r2.user_sgpr_count.into()),
    ];
    let b = |v: bool| u64::from(v);
    if !gpu.has_architected_flat_scratch() {
        lines.push(("user_sgpr_private_segment_buffer", b(p.enable_sgpr_private_segment_buffer)));
    }
    lines.push(("user_sgpr_dispatch_ptr", b(p.enable_sgpr_dispatch_ptr)));
    lines.push(("user_sgpr_queue_ptr", b(p.enable_sgpr_queue_ptr)));
    lines.push(("user_sgpr_kernarg_segment_ptr", b(p.enable_sgpr_kernarg_segment_ptr)));
    lines.push(("user_sgpr_dispatch_id", b(p.enable_sgpr_dispatch_id)));
    if !gpu.has_architected_flat_scratch() {
        lines.push(("user_sgpr_flat_scratch_init", b(p.enable_sgpr_flat_scratch_init)));
    }
    if gpu.generation() == Generation::Gfx9 {
        lines.push(("user_sgpr_kernarg_preload_length", d.kernarg_preload.length.into()));
        lines.push(("user_sgpr_kernarg_preload_offset", d.kernarg_preload.offset.into()));
    } else if d.kernarg_preload.length != 0 || d.kernarg_preload.offset != 0 {
        return Err(format!("kernarg preload is not available on {gpu}"));
    }
    lines.push(("user_sgpr_private_segment_size", b(p.enable_sgpr_private_segment_size)));
    if gpu.generation() == Generation::Gfx11 {
        lines.push(("wavefront_size32", b(p.enable_wavefront_size32)));
    } else if p.enable_wavefront_size32 {
        return Err(format!("{gpu} has no wave32"));
    }
    lines.push(("uses_dynamic_stack", b(p.uses_dynamic_stack)));
    if gpu.has_architected_flat_scratch() {
        lines.push(("enable_private_segment", b(r2.enable_private_segment)));
    } else {
        lines.push(("system_sgpr_private_segment_wavefront_offset", b(r2.enable_private_segment)));
    }
    lines.push(("system_sgpr_workgroup_id_x", b(r2.enable_sgpr_workgroup_id_x)));
    lines.push(("system_sgpr_workgroup_id_y", b(r2.enable_sgpr_workgroup_id_y)));
    lines.push(("system_sgpr_workgroup_id_z", b(r2.enable_sgpr_workgroup_id_z)));
    lines.push(("system_sgpr_workgroup_info", b(r2.enable_sgpr_workgroup_info)));
    lines.push(("system_vgpr_workitem_id", r2.enable_vgpr_workitem_id as u64));
    // The assembler derives the granulated counts from the next free registers:
    // VGPRs `ceil(n / granule) − 1` (the unified VGPR+AGPR count on gfx90a and
    // gfx942), so the granule's top reproduces the field exactly.
    let granule = amdgpu_abi::descriptor::vgpr_granule(target);
    lines.push(("next_free_vgpr", (u64::from(r1.granulated_workitem_vgpr_count) + 1) * u64::from(granule)));
    let (next_free_sgpr, flat_scratch) = next_free_sgpr(gpu, xnack_reserved, r1.granulated_wavefront_sgpr_count.into())?;
    lines.push(("next_free_sgpr", next_free_sgpr));
    if let ComputePgmRsrc3::Gfx9 { accum_offset, .. } = d.compute_pgm_rsrc3 {
        lines.push(("accum_offset", (u64::from(accum_offset) + 1) * 4));
    }
    lines.push(("reserve_vcc", 0));
    if !gpu.has_architected_flat_scratch() {
        lines.push(("reserve_flat_scratch", b(flat_scratch)));
    }
    if gpu.generation() == Generation::Gfx9 {
        lines.push(("reserve_xnack_mask", b(xnack_reserved)));
    }
    lines.push(("float_round_mode_32", r1.float_round_mode_32 as u64));
    lines.push(("float_round_mode_16_64", r1.float_round_mode_16_64 as u64));
    lines.push(("float_denorm_mode_32", r1.float_denorm_mode_32 as u64));
    lines.push(("float_denorm_mode_16_64", r1.float_denorm_mode_16_64 as u64));
    lines.push(("dx10_clamp", b(r1.enable_dx10_clamp)));
    lines.push(("ieee_mode", b(r1.enable_ieee_mode)));
    lines.push(("fp16_overflow", b(r1.fp16_ovfl)));
    match d.compute_pgm_rsrc3 {
        ComputePgmRsrc3::Gfx9 { tg_split, .. } => lines.push(("tg_split", b(tg_split))),
        ComputePgmRsrc3::Gfx11 { shared_vgpr_count, inst_pref_size, trap_on_start, trap_on_end, image_op } => {
            if trap_on_start || trap_on_end || image_op {
                return Err("the descriptor sets compute_pgm_rsrc3 trap or image bits, which no .amdhsa directive expresses".into());
            }
            lines.push(("workgroup_processor_mode", b(r1.wgp_mode)));
            lines.push(("memory_ordered", b(r1.mem_ordered)));
            lines.push(("forward_progress", b(r1.fwd_progress)));
            lines.push(("shared_vgpr_count", shared_vgpr_count.into()));
            lines.push(("inst_pref_size", inst_pref_size.into()));
        }
        ComputePgmRsrc3::Other(_) => return Err(format!("compute_pgm_rsrc3 has no layout for {gpu}")),
    }
    let e = r2.exceptions;
    lines.push(("exception_fp_ieee_invalid_op", b(e.ieee_invalid_op)));
    lines.push(("exception_fp_denorm_src", b(e.denorm_src)));
    lines.push(("exception_fp_ieee_div_zero", b(e.ieee_div_zero)));
    lines.push(("exception_fp_ieee_overflow", b(e.ieee_overflow)));
    lines.push(("exception_fp_ieee_underflow", b(e.ieee_underflow)));
    lines.push(("exception_fp_ieee_inexact", b(e.ieee_inexact)));
    lines.push(("exception_int_div_zero", b(e.int_div_zero)));
    let mut o = format!("\t.amdhsa_kernel {name}\n");
    for (directive, value) in lines {
        let _ = writeln!(o, "\t\t.amdhsa_{directive} {value}");
    }
    o.push_str("\t.end_amdhsa_kernel\n");
    Ok(o)
}

/// `.amdhsa_next_free_sgpr`, and whether FLAT_SCRATCH is reserved, that make
/// the assembler write the granulated SGPR count `g`. gfx9 counts
/// `ceil(max(1, next_free + extra) / 8) − 1` where `next_free` may not exceed the
/// 102 addressable SGPRs and `extra` is what is reserved above it: 6 with
/// FLAT_SCRATCH (always, with architected flat scratch), else 4 with
/// XNACK_MASK (VCC is not reserved: the kernel's own count includes it), else 0. So the top granules need reserved SGPRs counted
/// on top. gfx11 writes 0 whatever the count.
fn next_free_sgpr(gpu: Gpu, xnack_reserved: bool, g: u64) -> Result<(u64, bool), String> {
    const ADDRESSABLE: u64 = 102;
    if gpu.generation() == Generation::Gfx11 {
        return if g == 0 { Ok((0, false)) } else { Err(format!("granulated SGPR count {g} must be 0 on {gpu}")) };
    }
    // With architected flat scratch (gfx942) the assembler always counts the 6
    // (and takes no FLAT_SCRATCH directive).
    let options = if gpu.has_architected_flat_scratch() {
        vec![(6, false)]
    } else {
        vec![(if xnack_reserved { 4 } else { 0 }, false), (6, true)]
    };
    for (extra, flat_scratch) in options {
        // The largest count in granule g, less the reserved ones, within reach.
        let n = ((g + 1) * 8).saturating_sub(extra).min(ADDRESSABLE);
        if (n + extra).max(1).div_ceil(8) - 1 == g {
            return Ok((n, flat_scratch));
        }
    }
    Err(format!("granulated SGPR count {g} cannot be written with .amdhsa directives on {gpu}"))
}

/// A string the YAML reader of llvm-mc takes as a string without a tag: starts
/// like an identifier, holds nothing YAML or the number parser reads otherwise.
fn plain(s: &str) -> bool {
    let first_ok = s.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '.');
    let reserved = ["true", "false", "yes", "no", "on", "off", "null", "nan", "inf", "infinity", "y", "n", ".inf", ".nan", ".infinity"];
    first_ok
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-')
        && !reserved.contains(&s.to_ascii_lowercase().as_str())
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => {
            let s = s.as_str().unwrap_or("");
            if plain(s) {
                s.to_string()
            } else {
                // `!str` keeps "123" or "true" a string (llc-22 tags those the
                // same way; it also leaves `float*` untagged, which we tag).
                format!("!str '{}'", s.replace('\'', "''"))
            }
        }
        Value::Boolean(b) => b.to_string(),
        Value::Integer(i) => i.to_string(),
        Value::F32(f) => format!("{f:?}"),
        Value::F64(f) => format!("{f:?}"),
        // Our notes hold no nil, binary or extension values (Metadata writes
        // none); they are printed in rmpv's own syntax, which llvm-mc rejects.
        Value::Nil => "~".to_string(),
        other => format!("{other}"),
    }
}

fn is_scalar(v: &Value) -> bool {
    !matches!(v, Value::Map(_) | Value::Array(_))
}

/// Block-style YAML of a msgpack value: maps as `key: value`, arrays of scalars
/// in flow style, arrays of maps as `- ` items.
fn yaml(o: &mut String, v: &Value, indent: usize) {
    let pad = " ".repeat(indent);
    match v {
        Value::Map(entries) => {
            for (k, value) in entries {
                let key = scalar(k);
                match value {
                    Value::Array(items) if items.iter().all(is_scalar) => {
                        let list: Vec<String> = items.iter().map(scalar).collect();
                        let _ = writeln!(o, "{pad}{key}: [ {} ]", list.join(", "));
                    }
                    Value::Array(items) => {
                        let _ = writeln!(o, "{pad}{key}:");
                        for item in items {
                            item_yaml(o, item, indent + 2);
                        }
                    }
                    Value::Map(_) => {
                        let _ = writeln!(o, "{pad}{key}:");
                        yaml(o, value, indent + 2);
                    }
                    _ => {
                        let _ = writeln!(o, "{pad}{key}: {}", scalar(value));
                    }
                }
            }
        }
        other => {
            let _ = writeln!(o, "{pad}{}", scalar(other));
        }
    }
}

/// One `- ` item of a block sequence.
fn item_yaml(o: &mut String, item: &Value, indent: usize) {
    let pad = " ".repeat(indent);
    if is_scalar(item) {
        let _ = writeln!(o, "{pad}- {}", scalar(item));
        return;
    }
    let mut inner = String::new();
    yaml(&mut inner, item, indent + 2);
    // The first line of the item takes the dash in place of its indentation.
    let mut lines = inner.lines();
    if let Some(first) = lines.next() {
        let _ = writeln!(o, "{pad}- {}", &first[indent + 2..]);
    }
    for line in lines {
        let _ = writeln!(o, "{line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sgpr_granules_within_the_addressable_limit() {
        // Every gfx9 granule a kernel can have (up to 102 + 6 reserved SGPRs).
        for (gpu, xnack) in [(Gpu::Gfx90a, true), (Gpu::Gfx90a, false), (Gpu::Gfx942, true), (Gpu::Gfx942, false)] {
            for g in 0..=13u64 {
                let (n, flat_scratch) = next_free_sgpr(gpu, xnack, g).unwrap();
                let extra = if flat_scratch || gpu == Gpu::Gfx942 { 6 } else if xnack { 4 } else { 0 };
                assert!(n <= 102, "{gpu} g={g}");
                assert_eq!((n + extra).max(1).div_ceil(8) - 1, g, "{gpu} g={g}");
            }
        }
        assert!(next_free_sgpr(Gpu::Gfx1100, false, 1).is_err());
    }

    #[test]
    fn strings_that_would_read_as_other_types_are_tagged() {
        assert_eq!(scalar(&Value::from("global_buffer")), "global_buffer");
        assert_eq!(scalar(&Value::from(".value_kind")), ".value_kind");
        assert_eq!(scalar(&Value::from(".inf")), "!str '.inf'");
        assert_eq!(scalar(&Value::from("123")), "!str '123'");
        assert_eq!(scalar(&Value::from("true")), "!str 'true'");
        assert_eq!(scalar(&Value::from("float*")), "!str 'float*'");
        assert_eq!(scalar(&Value::from("it's")), "!str 'it''s'");
    }
}
