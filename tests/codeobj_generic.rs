//! Every code object LLVM 22 writes is readable: llc-22 builds one small kernel
//! for every processor `llc-22 -mcpu=help` lists (generic targets included), in
//! code object v4, v5 and v6 and with xnack/sramecc settings; the reader names
//! the processor `llvm-readelf-22 -h` names, `inspect` summarises each object,
//! and the processors amdgpu-cg does not model are reported as such.

use std::path::{Path, PathBuf};
use std::process::Command;

use amdgpu_cg::codeobj::processor::PROCESSORS;
use amdgpu_cg::codeobj::{inspect, read, FeatureSetting, ValueKind};

const KERNEL: &str = "define amdgpu_kernel void @k(ptr addrspace(1) %p, i32 %v) {\n  store i32 %v, ptr addrspace(1) %p\n  ret void\n}\n";

fn dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("codeobj_generic");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// llc-22 (and, when `link`, ld.lld-22 -shared) for `mcpu` in code object `version`.
fn build(mcpu: &str, version: u32, link: bool) -> Option<Vec<u8>> {
    let llc = amdgpu_cg::isa::llvm_tools::require("llc-22")?;
    let lld = amdgpu_cg::isa::llvm_tools::require("ld.lld-22")?;
    let d = dir();
    let stem = format!("{}-v{version}", mcpu.replace([':', '+'], "_"));
    // Tests run in parallel: each build writes its own input.
    let ll = d.join(format!("{stem}-{link}.ll"));
    std::fs::write(&ll, KERNEL).unwrap();
    let obj = d.join(format!("{stem}-{link}.o"));
    // llc takes the processor and its feature settings apart: gfx90a:xnack- is
    // -mcpu=gfx90a -mattr=-xnack.
    let mut parts = mcpu.split(':');
    let processor = parts.next().unwrap();
    let mattr: Vec<String> = parts.map(|f| format!("{}{}", &f[f.len() - 1..], &f[..f.len() - 1])).collect();
    let out = Command::new(&llc)
        .args(["-mtriple=amdgcn-amd-amdhsa", "-filetype=obj"])
        .arg(format!("-mcpu={processor}"))
        .arg(format!("-mattr={}", mattr.join(",")))
        .arg(format!("--amdhsa-code-object-version={version}"))
        .arg(&ll)
        .arg("-o")
        .arg(&obj)
        .output()
        .expect("run llc-22");
    assert!(out.status.success(), "llc-22 -mcpu={mcpu}: {}", String::from_utf8_lossy(&out.stderr));
    if !link {
        return Some(std::fs::read(&obj).unwrap());
    }
    let so = d.join(format!("{stem}.hsaco"));
    let st = Command::new(&lld).arg("-shared").arg(&obj).arg("-o").arg(&so).status().expect("run ld.lld-22");
    assert!(st.success(), "ld.lld-22 for {mcpu}");
    Some(std::fs::read(&so).unwrap())
}

/// `Flags: 0x..., name, ...` of `llvm-readelf-22 -h`, as (flags, processor name).
fn readelf_flags(bytes: &[u8], tag: &str) -> Option<(u32, String)> {
    let readelf = amdgpu_cg::isa::llvm_tools::require("llvm-readelf-22")?;
    let path = dir().join(format!("{tag}.readelf"));
    std::fs::write(&path, bytes).unwrap();
    let out = Command::new(readelf).arg("-h").arg(&path).output().expect("run llvm-readelf-22");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let line = text.lines().find(|l| l.trim_start().starts_with("Flags:")).expect("a Flags line");
    let mut parts = line.split(':').nth(1).unwrap().split(',').map(str::trim);
    let flags = u32::from_str_radix(parts.next().unwrap().trim_start_matches("0x"), 16).unwrap();
    Some((flags, parts.next().unwrap_or("").to_string()))
}

#[test]
fn every_processor_llvm_writes_is_named() {
    let mut failures = Vec::new();
    for p in PROCESSORS {
        let version = if p.generic { 6 } else { 5 };
        let Some(bytes) = build(p.name, version, false) else { return };
        let Some((flags, name)) = readelf_flags(&bytes, p.name) else { return };
        let co = match read(&bytes) {
            Ok(co) => co,
            Err(e) => {
                failures.push(format!("{}: {e}", p.name));
                continue;
            }
        };
        if name != p.name || co.processor.processor.name != p.name || co.e_flags != flags {
            failures.push(format!("{}: llvm-readelf-22 says {name} (0x{flags:x}), we read {} (0x{:x})", p.name, co.processor.processor.name, co.e_flags));
        }
        // "Any" where the processor has the feature, "unsupported" where it does not.
        let expect = |has: bool| if has { FeatureSetting::Any } else { FeatureSetting::Unsupported };
        if co.processor.xnack != expect(p.xnack) || co.processor.sramecc != expect(p.sramecc) {
            failures.push(format!("{}: xnack {:?} sramecc {:?}", p.name, co.processor.xnack, co.processor.sramecc));
        }
        if p.generic && co.processor.generic_version != 1 {
            failures.push(format!("{}: generic version {}", p.name, co.processor.generic_version));
        }
        let explicit = |m: &amdgpu_cg::codeobj::KernelMetadata| m.args.iter().filter(|a| matches!(a.value_kind, ValueKind::GlobalBuffer | ValueKind::ByValue)).count();
        if co.kernels.len() != 1 || co.kernels[0].metadata.as_ref().map(explicit) != Some(2) {
            failures.push(format!("{}: kernels {:?}", p.name, co.kernels.iter().map(|k| &k.name).collect::<Vec<_>>()));
        }
        let summary = inspect::summary(&co);
        if !summary.contains(&format!("amdgcn-amd-amdhsa--{}", p.name)) {
            failures.push(format!("{}: summary does not name it:\n{summary}", p.name));
        }
        let modelled = p.runs_as.is_some();
        if co.target.is_some() != modelled || summary.contains("does not compile for or simulate") == modelled {
            failures.push(format!("{}: target {:?}\n{summary}", p.name, co.target));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn versions_and_feature_variants_of_linked_objects() {
    let mut failures = Vec::new();
    for (mcpu, versions) in [
        ("gfx9-generic:xnack+", &[6][..]),
        ("gfx9-4-generic:sramecc-:xnack+", &[6]),
        ("gfx10-1-generic:xnack-", &[6]),
        ("gfx10-3-generic", &[6]),
        ("gfx11-generic", &[6]),
        ("gfx12-generic", &[6]),
        ("gfx90a:xnack-", &[4, 5, 6]),
        ("gfx942:sramecc+:xnack-", &[4, 5, 6]),
        ("gfx1100", &[4, 5, 6]),
        ("gfx1030", &[4, 5, 6]),
        ("gfx908:sramecc-", &[4, 5]),
        ("gfx1201", &[5, 6]),
    ] {
        for &v in versions {
            let Some(bytes) = build(mcpu, v, true) else { return };
            let tag = format!("{}-v{v}-linked", mcpu.replace([':', '+'], "_"));
            let Some((flags, _)) = readelf_flags(&bytes, &tag) else { return };
            match read(&bytes) {
                Ok(co) => {
                    let isa = format!("amdgcn-amd-amdhsa--{}", co.processor.processor_with_features());
                    // LLVM spells the ISA name with sramecc before xnack.
                    let want = {
                        let mut parts: Vec<&str> = mcpu.split(':').collect();
                        parts[1..].sort();
                        format!("amdgcn-amd-amdhsa--{}", parts.join(":"))
                    };
                    let md_target = co.metadata.first().map(|m| m.target.clone()).unwrap_or_default();
                    if co.version.number() != v || co.e_flags != flags || isa != want || md_target != want {
                        failures.push(format!("{mcpu} v{v}: version {} flags 0x{:x} (readelf 0x{flags:x}) isa {isa} metadata {md_target}", co.version.number(), co.e_flags));
                    }
                    if co.e_type != 3 || co.kernels.len() != 1 || co.kernels[0].code.is_empty() {
                        failures.push(format!("{mcpu} v{v}: e_type {} kernels {}", co.e_type, co.kernels.len()));
                    }
                }
                Err(e) => failures.push(format!("{mcpu} v{v}: {e}")),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn inspect_on_the_command_line_reads_a_generic_object() {
    let Some(bytes) = build("gfx11-generic", 6, true) else { return };
    let path = dir().join("cli-gfx11-generic.hsaco");
    std::fs::write(&path, &bytes).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_amdgpu-cg")).arg("inspect").arg(&path).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("gfx11-generic, generic version 1"), "{text}");
    assert!(text.contains("simulates it as gfx1100"), "{text}");
    assert!(text.contains("kernel k"), "{text}");
}

/// The table holds exactly the AMDGCN processors llc-22 knows: one missing
/// from it would be a code object the reader refuses.
#[test]
fn the_table_lists_every_processor_llc_knows() {
    let Some(llc) = amdgpu_cg::isa::llvm_tools::require("llc-22") else { return };
    let out = Command::new(llc).args(["-mtriple=amdgcn-amd-amdhsa", "-mcpu=help"]).output().expect("run llc-22");
    // The list goes to stdout or stderr depending on the version: read both.
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let section = text.split("Available CPUs").nth(1).and_then(|s| s.split("Available features").next()).expect("a CPU list");
    let mut llc_names: Vec<&str> = section.lines().filter_map(|l| l.split_whitespace().next()).filter(|w| w.starts_with("gfx")).collect();
    llc_names.sort();
    llc_names.dedup();
    let mut ours: Vec<&str> = PROCESSORS.iter().map(|p| p.name).collect();
    ours.sort();
    assert_eq!(ours, llc_names, "the processor table and llc-22 -mcpu=help disagree");
}
