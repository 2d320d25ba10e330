//! `-S` re-assembles: for every example and every codegen test module, on every
//! target (and the xnack/sramecc variants and code object versions that change
//! the directives), `llvm-mc-22 -filetype=obj` of the listing `amdgpu-cg -S`
//! writes, linked by `ld.lld-22 -shared`, is the code object `amdgpu-cg` writes:
//! the same `.text` (code bytes, call and data literals resolved), `.rodata`
//! (kernel descriptors, entry offsets included), `.data`, `.data.rel.ro`,
//! `.rela.dyn` (addresses held in data), `.dynamic` and `.note`
//! (metadata) bytes, `.bss` at the same address and size, and the
//! reader finds the same functions, descriptors and metadata in both.

use std::path::{Path, PathBuf};
use std::process::Command;

use amdgpu_cg::codegen::Options;
use amdgpu_cg::codeobj::read;
use amdgpu_cg::driver::{self, Emit};
use object::{Object, ObjectSection};

/// The examples and tests/data/codegen modules (all that compile: the one with
/// deliberate refusals is left out).
fn modules() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut all = Vec::new();
    for dir in ["examples", "tests/data/codegen"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "mir") && !p.ends_with("several_refusals.mir"))
            .collect();
        files.sort();
        all.extend(files);
    }
    all
}

/// (our --mcpu, llvm-mc's -mcpu and -mattr, code object version).
const CONFIGS: [(&str, &str, &str, u32); 8] = [
    ("gfx90a", "gfx90a", "", 5),
    ("gfx942", "gfx942", "", 5),
    ("gfx1100", "gfx1100", "", 5),
    ("gfx1100:wavefrontsize64+", "gfx1100", "+wavefrontsize64", 5),
    ("gfx90a:xnack-", "gfx90a", "-xnack", 5),
    ("gfx942:sramecc+:xnack-", "gfx942", "+sramecc,-xnack", 5),
    ("gfx90a", "gfx90a", "", 4),
    ("gfx1100", "gfx1100", "", 6),
];

fn section(bytes: &[u8], name: &str) -> Vec<u8> {
    let file = object::File::parse(bytes).unwrap();
    file.section_by_name(name).map(|s| s.data().unwrap().to_vec()).unwrap_or_default()
}

/// A section's address and size (for `.bss`, which has no bytes).
fn section_extent(bytes: &[u8], name: &str) -> Option<(u64, u64)> {
    let file = object::File::parse(bytes).unwrap();
    file.section_by_name(name).map(|s| (s.address(), s.size()))
}

#[test]
fn listing_reassembles_into_the_same_code_object() {
    let Some(mc) = amdgpu_cg::isa::llvm_tools::require("llvm-mc-22") else { return };
    let Some(lld) = amdgpu_cg::isa::llvm_tools::require("ld.lld-22") else { return };
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("listing_roundtrip");
    std::fs::create_dir_all(&dir).unwrap();
    let mut failures = Vec::new();
    let mut checked = 0;
    for (mcpu, mc_cpu, mattr, version) in CONFIGS {
        let target = driver::parse_target("amdgcn-amd-amdhsa", mcpu).unwrap();
        for module in modules() {
            let stem = module.file_stem().unwrap().to_string_lossy().to_string();
            let what = format!("{stem} on {mcpu} v{version}");
            let compile = |emit| driver::compile_file(&module, &target, emit, version, &Options::default(), false).map(|(bytes, _)| bytes);
            let (listing, ours) = match (compile(Emit::Asm), compile(Emit::Hsaco)) {
                (Ok(l), Ok(h)) => (l, h),
                (Err(e), _) | (_, Err(e)) => {
                    failures.push(format!("{what}: {e}"));
                    continue;
                }
            };
            // The listing's first line says how to assemble it: what this test does.
            let first = String::from_utf8_lossy(&listing).lines().next().unwrap_or("").to_string();
            let mattr_flag = if mattr.is_empty() { String::new() } else { format!(" -mattr={mattr}") };
            if !first.contains(&format!("-mcpu={mc_cpu}{mattr_flag} -filetype=obj")) {
                failures.push(format!("{what}: the listing's assemble line is '{first}'"));
            }
            let tag = format!("{stem}-{}-v{version}", mcpu.replace([':', '+'], "_"));
            let (src, obj, linked) = (dir.join(format!("{tag}.s")), dir.join(format!("{tag}.o")), dir.join(format!("{tag}.hsaco")));
            std::fs::write(&src, &listing).unwrap();
            let out = Command::new(&mc)
                .args(["-triple=amdgcn-amd-amdhsa", "-filetype=obj", &format!("-mcpu={mc_cpu}"), &format!("-mattr={mattr}")])
                .arg(&src)
                .arg("-o")
                .arg(&obj)
                .output()
                .unwrap();
            if !out.status.success() {
                failures.push(format!("{what}: llvm-mc-22 rejects the listing ({}):\n{}", src.display(), String::from_utf8_lossy(&out.stderr)));
                continue;
            }
            let out = Command::new(&lld).arg("-shared").arg(&obj).arg("-o").arg(&linked).output().unwrap();
            if !out.status.success() {
                failures.push(format!("{what}: ld.lld-22: {}", String::from_utf8_lossy(&out.stderr)));
                continue;
            }
            let theirs = std::fs::read(&linked).unwrap();
            for name in [".text", ".rodata", ".data", ".note", ".data.rel.ro", ".rela.dyn", ".dynamic"] {
                if section(&ours, name) != section(&theirs, name) {
                    failures.push(format!("{what}: {name} differs ({} and {})", src.display(), linked.display()));
                }
            }
            if section_extent(&ours, ".bss") != section_extent(&theirs, ".bss") {
                failures.push(format!("{what}: .bss differs ({} and {})", src.display(), linked.display()));
            }
            let (a, b) = (read(&ours).unwrap(), read(&theirs).unwrap());
            if a.metadata != b.metadata || a.e_flags != b.e_flags || a.version != b.version {
                failures.push(format!("{what}: metadata, e_flags or version differ"));
            }
            for k in &a.kernels {
                match b.kernels.iter().find(|o| o.name == k.name) {
                    Some(o) if o.descriptor == k.descriptor && o.code == k.code && o.entry_address == k.entry_address => {}
                    _ => failures.push(format!("{what}: kernel {} differs", k.name)),
                }
            }
            for f in &a.functions {
                if !b.functions.iter().any(|o| o.name == f.name && o.code == f.code && o.address == f.address) {
                    failures.push(format!("{what}: function {} differs", f.name));
                }
            }
            if a.kernels.len() != b.kernels.len() || a.functions.len() != b.functions.len() {
                failures.push(format!("{what}: {} kernels and {} functions, re-assembled {} and {}", a.kernels.len(), a.functions.len(), b.kernels.len(), b.functions.len()));
            }
            checked += 1;
        }
    }
    assert!(failures.is_empty(), "{} of {} failed:\n{}", failures.len(), checked + failures.len(), failures.join("\n"));
    assert_eq!(checked, modules().len() * CONFIGS.len());
}

/// The listing says how to assemble it and names a call's relocation, not a
/// placeholder literal.
#[test]
fn calls_print_their_relocations() {
    let module = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/call.mir");
    let target = driver::parse_target("amdgcn-amd-amdhsa", "gfx90a").unwrap();
    let (listing, _) = driver::compile_file(&module, &target, Emit::Asm, 5, &Options::default(), false).unwrap();
    let text = String::from_utf8(listing).unwrap();
    assert!(text.contains("s_add_u32 s30, s30, scale_add@rel32@lo+4"), "{text}");
    assert!(text.contains("s_addc_u32 s31, s31, scale_add@rel32@hi+12"), "{text}");
    assert!(!text.contains("0x10101010"), "{text}");
    assert!(text.contains(".amdhsa_kernel call_scale"), "{text}");
    assert!(text.contains(".amdgpu_metadata"), "{text}");
}
