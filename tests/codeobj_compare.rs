//! Structural comparison with LLVM: clang-22 + ld.lld-22 build tests/data/codeobj/store.cl,
//! we write the equivalent kernel, and llvm-readelf-22 / llvm-objdump-22 must show
//! the same header, sections, segments, symbols, note keys and descriptor
//! directives. Every tolerated difference is listed below with its reason.

#[path = "support/codeobj.rs"]
mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use amdgpu_cg::codeobj::{
    write_hsaco, CodeObject, CodeObjectTarget, CodeObjectVersion, Function, KernelInfo, Visibility,
};
use amdgpu_cg::isa::Gpu;
use support::*;

/// Sections lld writes that we do not, and why that is fine.
const TOLERATED_SECTIONS: [(&str, &str); 2] = [
    (
        ".relro_padding",
        "lld rounds the RELRO segment up to a page with a NOBITS section; nothing reads it",
    ),
    (
        ".AMDGPU.gpr_maximums",
        "empty informational section of LLVM >= 21; not read by any loader",
    ),
];

/// Symbols clang/lld write that we do not.
fn tolerated_symbol(name: &str) -> Option<&'static str> {
    if name.starts_with("__clang_ocl_kern_imp_") {
        Some("clang 22 OpenCL emits a callable copy of each kernel; not part of the kernel ABI")
    } else if name.starts_with("store.") && !name.ends_with(".kd") {
        Some("LLVM >= 20 resource-usage ABS locals (store.num_vgpr, ...); informational")
    } else {
        None
    }
}

/// Note keys that differ, and why.
const TOLERATED_KERNEL_KEYS: [(&str, &str); 2] = [
    (
        ".language",
        "OpenCL source language: we are not a language front end",
    ),
    (".language_version", "as .language"),
];
const TOLERATED_ARG_KEYS: [(&str, &str); 2] = [
    (
        ".type_name",
        "OpenCL source type names; optional in the spec",
    ),
    (
        ".name",
        "argument names: we write them (optional in the spec), clang's OpenCL mode does not",
    ),
];

/// Descriptor directives whose values depend on the machine code (register use),
/// not on the code object format.
const CODE_DEPENDENT_DIRECTIVES: [&str; 4] = [
    ".amdhsa_next_free_vgpr",
    ".amdhsa_next_free_sgpr",
    ".amdhsa_accum_offset",
    ".amdhsa_inst_pref_size",
];

fn note_keys(readelf_notes: &str) -> (BTreeMap<String, String>, BTreeSet<String>) {
    // Kernel-level "key: value" pairs (4-space indent) and the set of argument keys (8).
    let mut kernel = BTreeMap::new();
    let mut arg_keys = BTreeSet::new();
    for line in readelf_notes.lines() {
        let indent = line.len() - line.trim_start_matches([' ', '-']).len();
        let body = line.trim_start_matches([' ', '-']);
        let Some((key, value)) = body.split_once(':') else {
            continue;
        };
        if !key.starts_with('.') {
            continue;
        }
        match indent {
            4 => {
                kernel.insert(key.to_string(), value.trim().to_string());
            }
            8 => {
                arg_keys.insert(key.to_string());
            }
            _ => {}
        }
    }
    (kernel, arg_keys)
}

fn directives(objdump: &str) -> BTreeMap<String, String> {
    objdump
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with(".amdhsa_") && !l.starts_with(".amdhsa_kernel"))
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            Some((f.next()?.to_string(), f.next()?.to_string()))
        })
        .collect()
}

#[test]
fn same_structure_as_clang_and_lld() {
    let Some(t) = tools(&[
        "llvm-mc-22",
        "llvm-readelf-22",
        "llvm-objdump-22",
        "clang-22",
    ]) else {
        return;
    };
    let (mc, readelf, objdump, clang) = (&t[0], &t[1], &t[2], &t[3]);
    let dir = out_dir("compare");
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/codeobj/store.cl");
    let versions = [
        CodeObjectVersion::V4,
        CodeObjectVersion::V5,
        CodeObjectVersion::V6,
    ];
    for target_text in [
        "gfx90a",
        "gfx90a:xnack-",
        "gfx942:sramecc+:xnack-",
        "gfx1100",
    ] {
        let target = CodeObjectTarget::parse(target_text, None).unwrap();
        let code = assemble(mc, &dir, &target, &bodies(target.target.gpu.generation()));
        for version in versions {
            let ctx = format!("{target_text} v{}", version.number());
            let tag = file_name(&target, version, "");
            // LLVM's.
            let theirs = dir.join(format!("{tag}clang.hsaco"));
            run(Command::new(clang)
                .args([
                    "-x",
                    "cl",
                    "-cl-std=CL2.0",
                    "-target",
                    "amdgcn-amd-amdhsa",
                    "-nogpulib",
                    "-O2",
                ])
                .arg(format!("-mcpu={target_text}"))
                .arg(format!("-mcode-object-version={}", version.number()))
                .arg(&src)
                .arg("-o")
                .arg(&theirs));
            // Ours: the same kernel.
            let store_code = code["store"].clone();
            let info = KernelInfo::from_resources(
                &target,
                version,
                store_args(),
                false,
                store_resources(&store_code),
                256,
            )
            .unwrap();
            let co = CodeObject {
                target,
                version,
                printf: Vec::new(),
                data: Vec::new(),
                functions: vec![Function {
                    name: "store".into(),
                    code: store_code,
                    visibility: Visibility::Protected,
                    kernel: Some(info),
                    relocs: vec![],
                    frame: vec![],
                }],
            };
            let ours = dir.join(format!("{tag}ours.hsaco"));
            std::fs::write(&ours, write_hsaco(&co).unwrap()).unwrap();

            let args = ["-h", "-S", "-l", "-s", "--dyn-syms", "--notes"];
            let a = run(Command::new(readelf).args(args).arg(&theirs));
            let b = run(Command::new(readelf).args(args).arg(&ours));

            // ELF header: identical except offsets/counts of headers.
            let header = |t: &str| -> Vec<String> {
                t.lines()
                    .map(str::trim)
                    .filter(|l| {
                        [
                            "Class:",
                            "Data:",
                            "Version:",
                            "OS/ABI:",
                            "ABI Version:",
                            "Type:",
                            "Machine:",
                            "Flags:",
                            "Entry point",
                        ]
                        .iter()
                        .any(|k| l.starts_with(k))
                    })
                    .map(str::to_string)
                    .collect()
            };
            assert_eq!(header(&a), header(&b), "{ctx}: ELF header");

            // Sections: same names, types, flags, alignment, in the same order.
            let secs = |t: &str| -> Vec<(String, String, String, u64)> {
                parse_sections(t)
                    .into_iter()
                    .filter(|s| !TOLERATED_SECTIONS.iter().any(|(n, _)| *n == s.name))
                    .map(|s| (s.name, s.kind, s.flags, s.align))
                    .collect()
            };
            assert_eq!(secs(&a), secs(&b), "{ctx}: sections");

            // Segments: same types and permissions in the same order.
            assert_eq!(
                parse_segments(&a),
                parse_segments(&b),
                "{ctx}: program headers"
            );

            // Symbols: same entries in both tables, up to the tolerated ones.
            let syms = |t: &str| -> BTreeSet<(String, String, String, String, String)> {
                parse_symbols(t)
                    .into_iter()
                    .filter(|s| !s.name.is_empty() && tolerated_symbol(&s.name).is_none())
                    .map(|s| {
                        let size = if s.kind == "OBJECT" {
                            s.size.to_string()
                        } else {
                            String::new()
                        };
                        (
                            s.table,
                            s.name,
                            s.kind,
                            format!("{} {}", s.bind, s.vis),
                            size,
                        )
                    })
                    .collect()
            };
            assert_eq!(syms(&a), syms(&b), "{ctx}: symbols");

            // Note: same kernel-level keys and values (except register counts), same arg keys.
            let (ka, args_a) = note_keys(&a);
            let (kb, args_b) = note_keys(&b);
            let strip = |m: &BTreeMap<String, String>| -> BTreeMap<String, String> {
                m.iter()
                    .filter(|(k, _)| !TOLERATED_KERNEL_KEYS.iter().any(|(t, _)| t == k))
                    .map(|(k, v)| {
                        let v = if [".sgpr_count", ".vgpr_count"].contains(&k.as_str()) {
                            "(code-dependent)".into()
                        } else {
                            v.clone()
                        };
                        (k.clone(), v)
                    })
                    .collect()
            };
            assert_eq!(strip(&ka), strip(&kb), "{ctx}: kernel metadata");
            let strip_set = |s: &BTreeSet<String>| -> BTreeSet<String> {
                s.iter()
                    .filter(|k| !TOLERATED_ARG_KEYS.iter().any(|(t, _)| t == k))
                    .cloned()
                    .collect()
            };
            assert_eq!(
                strip_set(&args_a),
                strip_set(&args_b),
                "{ctx}: argument keys"
            );
            for root in ["amdhsa.target:", "amdhsa.version:", "amdhsa.kernels:"] {
                assert!(a.contains(root) && b.contains(root), "{ctx}: {root}");
            }
            let version_of = |t: &str| {
                t.split("amdhsa.version:")
                    .nth(1)
                    .unwrap()
                    .lines()
                    .take(3)
                    .collect::<Vec<_>>()
                    .join("|")
            };
            assert_eq!(version_of(&a), version_of(&b), "{ctx}: amdhsa.version");
            let target_of = |t: &str| {
                t.lines()
                    .find(|l| l.starts_with("amdhsa.target:"))
                    .unwrap()
                    .to_string()
            };
            assert_eq!(target_of(&a), target_of(&b), "{ctx}: amdhsa.target");

            // Descriptor: the same directives with the same values, except those
            // that depend on register use, and on gfx90a the scratch V#:
            let mcpu = mcpu_args(&target);
            let da = directives(&run(Command::new(objdump)
                .args(["-D", "-j", ".rodata"])
                .args(&mcpu)
                .arg(&theirs)));
            let db = directives(&run(Command::new(objdump)
                .args(["-D", "-j", ".rodata"])
                .args(&mcpu)
                .arg(&ours)));
            assert_eq!(
                da.keys().collect::<Vec<_>>(),
                db.keys().collect::<Vec<_>>(),
                "{ctx}: directive set"
            );
            for (k, va) in &da {
                if CODE_DEPENDENT_DIRECTIVES.contains(&k.as_str()) {
                    continue;
                }
                if target.target.gpu == Gpu::Gfx90a
                    && [
                        ".amdhsa_user_sgpr_private_segment_buffer",
                        ".amdhsa_user_sgpr_count",
                    ]
                    .contains(&k.as_str())
                {
                    // LLVM enables the 4-SGPR scratch buffer descriptor in every gfx90a
                    // kernel; our test kernel declares only the inputs its code reads
                    // (kernarg pointer in s[0:1]).
                    continue;
                }
                assert_eq!(Some(va), db.get(k), "{ctx}: {k}");
            }
        }
    }
}

/// Kernel blocks of `llvm-readelf --notes` YAML: kernel-level key → value.
fn note_kernels(readelf_notes: &str) -> Vec<BTreeMap<String, String>> {
    let mut out = Vec::new();
    let mut current: Option<BTreeMap<String, String>> = None;
    for line in readelf_notes.lines() {
        if line.starts_with("  - .") {
            if let Some(c) = current.take() {
                out.push(c);
            }
            current = Some(BTreeMap::new());
        } else if !line.starts_with("    ") {
            if let Some(c) = current.take() {
                out.push(c);
            }
            continue;
        }
        let body = line.trim_start_matches([' ', '-']);
        let indent = line.len() - body.len();
        if indent == 4 {
            if let (Some(c), Some((k, v))) = (current.as_mut(), body.split_once(':')) {
                c.insert(k.to_string(), v.trim().to_string());
            }
        }
    }
    if let Some(c) = current {
        out.push(c);
    }
    out
}

/// Our descriptor computation (`KernelDescriptor::for_kernel` and the metadata's
/// register counts), fed with what LLVM says each kernel uses (its resource
/// symbols `<k>.num_vgpr`, `.num_agpr`, `.numbered_sgpr`, `.uses_vcc`,
/// `.uses_flat_scratch`, and the inputs its descriptor enables), must give
/// LLVM's descriptor bytes as llvm-readelf-22 dumps them, and LLVM's
/// `.sgpr_count` / `.vgpr_count`.
#[test]
fn descriptors_from_resources_match_llvm() {
    use amdgpu_cg::abi::descriptor::{
        sgpr_count, total_vgpr_count, KernelDescriptor, KernelResources,
    };
    use amdgpu_cg::codeobj::{read, FeatureSetting};
    use amdgpu_cg::isa::WaveSize;

    let Some(t) = tools(&["clang-22", "llvm-readelf-22"]) else {
        return;
    };
    let (clang, readelf) = (&t[0], &t[1]);
    let dir = out_dir("compare_descriptors");
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/codeobj");
    let mut checked = 0;
    let mut saw = (false, false); // (a kernel with AGPRs, a kernel with preloaded kernargs)
    for (mcpu, wave) in [
        ("gfx90a", None),
        ("gfx90a:xnack-", None),
        ("gfx942", None),
        ("gfx942:sramecc+:xnack-", None),
        ("gfx1100", None),
        ("gfx1100", Some(WaveSize::W64)),
    ] {
        let target = CodeObjectTarget::parse(mcpu, wave).unwrap();
        let gfx9 = target.target.gpu.generation() == amdgpu_cg::isa::Generation::Gfx9;
        let mut sources: Vec<(&str, &str, Vec<&str>)> =
            vec![("store.cl", "", vec![]), ("varied.cl", "", vec![])];
        if gfx9 {
            // AGPRs and kernarg preloading exist on gfx90a/gfx942 only.
            sources.push(("agpr.cl", "", vec![]));
            sources.push((
                "store.cl",
                "preload.",
                vec!["-mllvm", "-amdgpu-kernarg-preload-count=2"],
            ));
        }
        for (src, variant, extra) in sources {
            let out = dir.join(format!(
                "{src}.{variant}{}.w{}.hsaco",
                mcpu.replace(':', "_"),
                target.target.wave.lanes()
            ));
            let mut cmd = Command::new(clang);
            cmd.args([
                "-x",
                "cl",
                "-cl-std=CL2.0",
                "-target",
                "amdgcn-amd-amdhsa",
                "-nogpulib",
                "-O2",
                "-w",
            ])
            .arg(format!("-mcpu={mcpu}"))
            .arg("-mcode-object-version=5")
            .args(&extra);
            if wave == Some(WaveSize::W64) {
                cmd.arg("-mwavefrontsize64");
            }
            run(cmd.arg(data.join(src)).arg("-o").arg(&out));
            let text = run(Command::new(readelf).args(["-s", "--notes"]).arg(&out));
            let syms = parse_symbols(&text);
            let abs_opt = |name: &str| -> Option<u32> {
                syms.iter()
                    .find(|s| s.table == ".symtab" && s.name == name)
                    .map(|s| s.value as u32)
            };
            let abs = |name: &str| -> u32 {
                abs_opt(name).unwrap_or_else(|| panic!("{mcpu}: no {name}"))
            };
            let (rodata_addr, rodata) = hex_dump(readelf, &out, ".rodata");
            let loaded = read(&std::fs::read(&out).unwrap()).unwrap();
            let notes = note_kernels(&text);
            for k in &loaded.kernels {
                let ctx = format!("{mcpu} w{} {}", target.target.wave.lanes(), k.name);
                let d = &k.descriptor;
                let func = syms
                    .iter()
                    .find(|s| s.table == ".symtab" && s.name == k.name)
                    .unwrap();
                let sgpr_symbol = abs_opt(&format!("{}.numbered_sgpr", k.name));
                assert!(
                    sgpr_symbol.is_some() || target.target.gpu == amdgpu_cg::isa::Gpu::Gfx1100,
                    "{ctx}"
                );
                let mut props = d.kernel_code_properties;
                props.enable_wavefront_size32 = false;
                props.uses_dynamic_stack = false;
                let res = KernelResources {
                    num_vgpr: abs(&format!("{}.num_vgpr", k.name)),
                    num_agpr: abs(&format!("{}.num_agpr", k.name)),
                    // On gfx11 LLVM drops the SGPR resource symbols when they are
                    // constant-folded into the descriptor (the SGPR field is 0 there).
                    num_sgpr: sgpr_symbol.unwrap_or(0),
                    uses_vcc: abs_opt(&format!("{}.uses_vcc", k.name)).unwrap_or(0) != 0,
                    uses_flat_scratch: abs_opt(&format!("{}.uses_flat_scratch", k.name))
                        .unwrap_or(0)
                        != 0,
                    xnack_enabled: matches!(target.xnack, FeatureSetting::Any | FeatureSetting::On),
                    uses_scratch: d.compute_pgm_rsrc2.enable_private_segment,
                    uses_dynamic_stack: d.kernel_code_properties.uses_dynamic_stack,
                    group_segment_fixed_size: d.group_segment_fixed_size,
                    private_segment_fixed_size: abs(&format!("{}.private_seg_size", k.name)),
                    kernarg_size: d.kernarg_size,
                    user_sgprs: props,
                    kernarg_preload: d.kernarg_preload,
                    workgroup_id: [
                        d.compute_pgm_rsrc2.enable_sgpr_workgroup_id_x,
                        d.compute_pgm_rsrc2.enable_sgpr_workgroup_id_y,
                        d.compute_pgm_rsrc2.enable_sgpr_workgroup_id_z,
                    ],
                    workgroup_info: d.compute_pgm_rsrc2.enable_sgpr_workgroup_info,
                    workitem_id: d.compute_pgm_rsrc2.enable_vgpr_workitem_id,
                    code_size: func.size as u32,
                    ..KernelResources::default()
                };
                let ours = KernelDescriptor::for_kernel(target.target, &res)
                    .unwrap()
                    .encode()
                    .unwrap();
                let at = (k.descriptor_address - rodata_addr) as usize;
                let theirs = &rodata[at..at + 64];
                assert_eq!(&ours[..16], &theirs[..16], "{ctx}: segment sizes");
                assert_eq!(
                    &ours[24..],
                    &theirs[24..],
                    "{ctx}: rsrc3/1/2, properties, preload\nours   {:02x?}\ntheirs {:02x?}",
                    &ours[44..60],
                    &theirs[44..60]
                );
                let md = notes
                    .iter()
                    .find(|m| m.get(".name") == Some(&k.name))
                    .unwrap();
                let sgprs = sgpr_count(
                    target.target,
                    res.num_sgpr,
                    res.uses_vcc,
                    res.uses_flat_scratch,
                    res.xnack_enabled,
                );
                if sgpr_symbol.is_some() {
                    assert_eq!(md[".sgpr_count"], sgprs.to_string(), "{ctx}: .sgpr_count");
                }
                let vgprs = total_vgpr_count(target.target.gpu, res.num_vgpr, res.num_agpr);
                assert_eq!(md[".vgpr_count"], vgprs.to_string(), "{ctx}: .vgpr_count");
                saw.0 |= res.num_agpr > 0;
                saw.1 |= res.kernarg_preload.length > 0;
                checked += 1;
            }
        }
    }
    // store + lds, wide, scratch on six targets; agprs, many_vgprs and the preloading
    // store on the four gfx9 ones.
    assert_eq!(checked, 6 * 4 + 4 * 3);
    assert_eq!(
        saw,
        (true, true),
        "the AGPR and preload cases were exercised"
    );
}
