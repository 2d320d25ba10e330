//! The reader and `inspect` summary on our objects and on LLVM's (clang-22 +
//! ld.lld-22, llc-22 relocatable), checked against what llvm-readelf-22 and
//! llvm-objdump-22 print; and the writer's errors (never a partial file).

#[path = "support/codeobj.rs"]
mod support;

use std::collections::HashMap;
use std::process::Command;

use amdgpu_cg::codeobj::{
    inspect, read, write_hsaco, write_relocatable, CodeObjectError, CodeObjectTarget,
    CodeObjectVersion, Function, KernelInfo, Reloc, RelocKind, Visibility,
};
use amdgpu_cg::isa::{Generation, WaveSize};
use support::*;

/// Code bytes without running llvm-mc: `s_endpgm` (gfx9 and gfx11 encodings) and
/// `s_setpc_b64 s[30:31]`, for the tests that need no external tool.
fn fake_code(gen: Generation) -> HashMap<String, Vec<u8>> {
    let endpgm: u32 = match gen {
        Generation::Gfx9 => 0xBF81_0000,
        Generation::Gfx11 => 0xBFB0_0000,
    };
    let words = |w: &[u32]| w.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let mut m = HashMap::new();
    m.insert("store".to_string(), words(&[endpgm; 10]));
    // s_getpc, s_add_u32 lit, s_addc_u32 lit, s_swappc, s_endpgm: 7 words.
    m.insert(
        "caller".to_string(),
        words(&[
            0xBE84_1C00,
            0x8004_FF04,
            0,
            0x8205_FF05,
            0,
            0xBE9E_1E04,
            endpgm,
        ]),
    );
    m.insert("helper".to_string(), words(&[0xBE80_1D1E]));
    m
}

#[test]
fn write_then_read_gives_back_what_we_wrote() {
    for t in targets() {
        let code = fake_code(t.target.gpu.generation());
        for v in [
            CodeObjectVersion::V4,
            CodeObjectVersion::V5,
            CodeObjectVersion::V6,
        ] {
            let co = sample(t, v, &code, true);
            let loaded = read(&write_hsaco(&co).unwrap()).unwrap();
            assert_eq!(loaded.version, v);
            assert_eq!(loaded.target, Some(t));
            assert_eq!(loaded.e_flags, t.e_flags());
            assert_eq!(loaded.symbol_table, ".symtab");
            assert_eq!(loaded.metadata.len(), 1);
            assert_eq!(loaded.metadata[0].version, v.metadata_version());
            assert_eq!(loaded.metadata[0].target, t.isa_name());
            assert_eq!(loaded.kernels.len(), 2);
            for (k, f) in loaded.kernels.iter().zip(&co.functions) {
                let info = f.kernel.as_ref().unwrap();
                assert_eq!(k.name, f.name);
                assert_eq!(k.entry_address % 256, 0);
                let mut d = k.descriptor;
                assert_eq!(
                    k.descriptor_address as i64 + d.kernel_code_entry_byte_offset,
                    k.entry_address as i64
                );
                d.kernel_code_entry_byte_offset = 0;
                assert_eq!(d, info.descriptor);
                let md = k.metadata.as_ref().unwrap();
                assert_eq!(md.args, info.metadata.args);
                assert_eq!(md.kernarg_segment_size, info.descriptor.kernarg_size);
                assert_eq!(md.uses_dynamic_stack.is_some(), v != CodeObjectVersion::V4);
            }
            assert_eq!(loaded.kernels[0].code, code["store"]);
            // caller's literals are resolved: helper − (caller + 4).
            let caller = &loaded.kernels[1];
            let helper = loaded
                .functions
                .iter()
                .find(|f| f.name == "helper")
                .unwrap();
            assert!(!helper.global);
            let lo = u32::from_le_bytes(caller.code[8..12].try_into().unwrap());
            let hi = u32::from_le_bytes(caller.code[16..20].try_into().unwrap());
            let delta = helper.address.wrapping_sub(caller.entry_address + 4);
            assert_eq!((u64::from(hi) << 32) | u64::from(lo), delta);

            // The relocatable form reads back too (entry offsets are still relocations).
            let rel = read(&write_relocatable(&co).unwrap()).unwrap();
            assert_eq!(rel.e_type, 1);
            assert_eq!(rel.kernels.len(), 2);
            assert_eq!(rel.kernels[0].descriptor.kernel_code_entry_byte_offset, 0);
            assert_eq!(rel.kernels[1].code[8..12], [0, 0, 0, 0]);

            let text = inspect::summary(&loaded);
            for needle in [
                format!(
                    "AMDHSA code object v{} (EI_ABIVERSION {})",
                    v.number(),
                    v.abi_version()
                ),
                format!("target: {}", t.isa_name()),
                "kernel store".to_string(),
                "kernel caller".to_string(),
                "segments: kernarg 12 bytes".to_string(),
                "properties 0x".to_string(),
                "out (global_buffer)".replace(" (global_buffer)", ""),
                "helper at 0x".to_string(),
            ] {
                assert!(text.contains(&needle), "summary lacks {needle:?}:\n{text}");
            }
        }
    }
}

#[test]
fn writer_errors_instead_of_partial_files() {
    let t = CodeObjectTarget::parse("gfx90a", None).unwrap();
    let code = fake_code(Generation::Gfx9);
    let v = CodeObjectVersion::V5;

    assert!(matches!(
        CodeObjectVersion::from_number(7),
        Err(CodeObjectError::UnknownVersion(7))
    ));
    assert!("3".parse::<CodeObjectVersion>().is_err());
    assert_eq!(
        "6".parse::<CodeObjectVersion>().unwrap(),
        CodeObjectVersion::V6
    );
    let msg = CodeObjectVersion::from_number(2).unwrap_err().to_string();
    assert!(msg.contains("unknown code object version 2"), "{msg}");

    // A call to a function that is not there: an ET_DYN cannot be written...
    let missing = sample(t, v, &code, false);
    assert!(matches!(
        write_hsaco(&missing),
        Err(CodeObjectError::UndefinedSymbol { .. })
    ));
    // ...but a relocatable object can (the linker resolves it).
    assert!(write_relocatable(&missing).is_ok());

    let mut dup = sample(t, v, &code, true);
    dup.functions[2].name = "store".into();
    assert!(matches!(
        write_hsaco(&dup),
        Err(CodeObjectError::DuplicateSymbol(_))
    ));

    let mut kd_clash = sample(t, v, &code, true);
    kd_clash.functions[2].name = "store.kd".into();
    assert!(matches!(
        write_hsaco(&kd_clash),
        Err(CodeObjectError::DuplicateSymbol(_))
    ));

    let mut hidden = sample(t, v, &code, true);
    hidden.functions[0].visibility = Visibility::Hidden;
    assert!(matches!(
        write_hsaco(&hidden),
        Err(CodeObjectError::InconsistentKernel { .. })
    ));

    let mut size = sample(t, v, &code, true);
    size.functions[0]
        .kernel
        .as_mut()
        .unwrap()
        .metadata
        .kernarg_segment_size = 16;
    assert!(matches!(
        write_relocatable(&size),
        Err(CodeObjectError::InconsistentKernel { .. })
    ));

    let mut arg = sample(t, v, &code, true);
    arg.functions[0].kernel.as_mut().unwrap().metadata.args[1].offset = 12;
    assert!(matches!(
        write_hsaco(&arg),
        Err(CodeObjectError::InconsistentKernel { .. })
    ));

    let mut regs = sample(t, v, &code, true);
    regs.functions[0]
        .kernel
        .as_mut()
        .unwrap()
        .metadata
        .vgpr_count = 9; // descriptor allocates 8
    assert!(matches!(
        write_hsaco(&regs),
        Err(CodeObjectError::InconsistentKernel { .. })
    ));
    let mut regs = sample(t, v, &code, true);
    regs.functions[0]
        .kernel
        .as_mut()
        .unwrap()
        .metadata
        .sgpr_count = 17; // descriptor allocates 16
    assert!(matches!(
        write_hsaco(&regs),
        Err(CodeObjectError::InconsistentKernel { .. })
    ));

    // A PC-relative call to a preemptible (default-visibility) function: ld.lld-22
    // refuses it ("recompile with -fPIC"), so neither writer produces it.
    let mut preemptible = sample(t, v, &code, true);
    preemptible.functions[2].visibility = Visibility::Default;
    assert!(matches!(
        write_relocatable(&preemptible),
        Err(CodeObjectError::PreemptibleCallee { .. })
    ));
    assert!(matches!(
        write_hsaco(&preemptible),
        Err(CodeObjectError::PreemptibleCallee { .. })
    ));

    let mut odd = sample(t, v, &code, true);
    odd.functions[2].code.push(0);
    assert!(matches!(
        write_hsaco(&odd),
        Err(CodeObjectError::BadCodeSize(..))
    ));

    let mut reloc = sample(t, v, &code, true);
    reloc.functions[1].relocs.push(Reloc {
        offset: 28,
        kind: RelocKind::Rel32Lo,
        symbol: "helper".into(),
        addend: 4,
    });
    assert!(matches!(
        write_hsaco(&reloc),
        Err(CodeObjectError::RelocOutOfRange { .. })
    ));

    // A descriptor made for another wave size or generation.
    let w64 = CodeObjectTarget::parse("gfx1100", Some(WaveSize::W64)).unwrap();
    let mut wave = sample(w64, v, &fake_code(Generation::Gfx11), true);
    wave.target = CodeObjectTarget::parse("gfx1100", None).unwrap();
    assert!(matches!(
        write_hsaco(&wave),
        Err(CodeObjectError::InconsistentKernel { .. })
    ));
    let mut gen = sample(t, v, &code, true);
    gen.target = CodeObjectTarget::parse("gfx1100", Some(WaveSize::W64)).unwrap();
    assert!(write_hsaco(&gen).is_err());

    // Resources the target lacks.
    let res = amdgpu_cg::abi::descriptor::KernelResources {
        num_agpr: 4,
        ..store_resources(&code["store"])
    };
    let gfx1100 = CodeObjectTarget::parse("gfx1100", None).unwrap();
    assert!(KernelInfo::from_resources(&gfx1100, v, store_args(), false, res, 256).is_err());

    for bad in ["gfx1100:xnack+", "gfx90a:xnack", "gfx906", "gfx90a:foo+"] {
        let e = CodeObjectTarget::parse(bad, None).unwrap_err().to_string();
        assert!(e.contains(bad), "{e}");
    }

    // Reading what is not a code object.
    assert!(read(b"not an elf").is_err());
    assert!(read(&std::fs::read("/proc/self/exe").unwrap()).is_err());
    let mut wrong_version = write_hsaco(&sample(t, v, &code, true)).unwrap();
    wrong_version[8] = 9;
    assert!(read(&wrong_version)
        .unwrap_err()
        .to_string()
        .contains("EI_ABIVERSION 9"));

    // An empty function list is still a valid (kernel-less) object.
    let empty = amdgpu_cg::codeobj::CodeObject {
        target: t,
        version: v,
        functions: Vec::<Function>::new(),
        printf: Vec::new(),
        data: Vec::new(),
    };
    assert!(read(&write_hsaco(&empty).unwrap())
        .unwrap()
        .kernels
        .is_empty());
}

#[test]
fn reads_and_summarizes_llvm_objects() {
    let Some(tl) = tools(&["clang-22", "llc-22", "llvm-readelf-22", "llvm-objdump-22"]) else {
        return;
    };
    let (clang, llc, readelf, objdump) = (&tl[0], &tl[1], &tl[2], &tl[3]);
    let dir = out_dir("reader");
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/codeobj");
    for (mcpu, version) in [("gfx90a:xnack-", 5), ("gfx942", 6), ("gfx1100", 4)] {
        let hsaco = dir.join(format!("store.{}.v{version}.hsaco", mcpu.replace(':', "_")));
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
            .arg(format!("-mcpu={mcpu}"))
            .arg(format!("-mcode-object-version={version}"))
            .arg(data.join("store.cl"))
            .arg("-o")
            .arg(&hsaco));
        let loaded = read(&std::fs::read(&hsaco).unwrap()).unwrap();
        let target = CodeObjectTarget::parse(mcpu, None).unwrap();
        assert_eq!(loaded.target, Some(target));
        assert_eq!(loaded.version.number(), version);
        let k = loaded
            .kernels
            .iter()
            .find(|k| k.name == "store")
            .expect("store kernel");
        let md = k.metadata.as_ref().unwrap();
        assert_eq!(
            (md.kernarg_segment_size, k.descriptor.kernarg_size),
            (12, 12)
        );
        assert_eq!(md.language.as_deref(), Some("OpenCL C"));
        // The code is what objdump disassembles at the entry.
        let dis = run(Command::new(objdump)
            .arg("-d")
            .args(mcpu_args(&target))
            .arg(&hsaco));
        let entry_line = dis.lines().find(|l| l.ends_with("<store>:")).unwrap();
        assert_eq!(
            u64::from_str_radix(entry_line.split_whitespace().next().unwrap(), 16).unwrap(),
            k.entry_address
        );
        let syms = parse_symbols(&run(Command::new(readelf).arg("-s").arg(&hsaco)));
        let f = syms.iter().find(|s| s.name == "store").unwrap();
        assert_eq!(k.code.len() as u64, f.size);
        // Decoded descriptor fields against objdump's directives.
        let kd = run(Command::new(objdump)
            .args(["-D", "-j", ".rodata"])
            .args(mcpu_args(&target))
            .arg(&hsaco));
        let p = &k.descriptor.kernel_code_properties;
        let r2 = &k.descriptor.compute_pgm_rsrc2;
        for (directive, value) in [
            (".amdhsa_kernarg_size", k.descriptor.kernarg_size),
            (
                ".amdhsa_user_sgpr_kernarg_segment_ptr",
                u32::from(p.enable_sgpr_kernarg_segment_ptr),
            ),
            (
                ".amdhsa_user_sgpr_dispatch_ptr",
                u32::from(p.enable_sgpr_dispatch_ptr),
            ),
            (
                ".amdhsa_system_sgpr_workgroup_id_x",
                u32::from(r2.enable_sgpr_workgroup_id_x),
            ),
            (
                ".amdhsa_float_denorm_mode_32",
                k.descriptor.compute_pgm_rsrc1.float_denorm_mode_32 as u32,
            ),
            (
                ".amdhsa_ieee_mode",
                u32::from(k.descriptor.compute_pgm_rsrc1.enable_ieee_mode),
            ),
        ] {
            assert!(
                kd.contains(&format!("\t{directive} {value}\n")),
                "{mcpu}: {directive} {value}\n{kd}"
            );
        }
        let text = inspect::summary(&loaded);
        for needle in [
            "kernel store",
            "segments: kernarg 12 bytes",
            "language: OpenCL C 2.0",
            "__clang_ocl_kern_imp_store",
        ] {
            assert!(
                text.contains(needle),
                "{mcpu}: summary lacks {needle:?}:\n{text}"
            );
        }
        assert_eq!(
            inspect::summary_of_bytes(&std::fs::read(&hsaco).unwrap()).unwrap(),
            text
        );
    }
    // An llc relocatable object with a kernel and a device function.
    let obj = dir.join("helper.o");
    run(Command::new(llc)
        .args([
            "-mtriple=amdgcn-amd-amdhsa",
            "-mcpu=gfx90a",
            "-filetype=obj",
        ])
        .arg(data.join("helper.ll"))
        .arg("-o")
        .arg(&obj));
    let loaded = read(&std::fs::read(&obj).unwrap()).unwrap();
    assert_eq!(loaded.e_type, 1);
    assert_eq!(
        loaded.version,
        CodeObjectVersion::V6,
        "LLVM 22's default code object version"
    );
    let k = &loaded.kernels[0];
    assert_eq!(k.name, "llvm_kernel");
    assert_eq!(
        k.descriptor.kernarg_size,
        k.metadata.as_ref().unwrap().kernarg_segment_size
    );
    assert!(loaded.functions.iter().any(|f| f.name == "helper"));
    assert!(inspect::summary(&loaded).contains("relocatable object (ET_REL)"));
}

/// Damaged files are errors, never panics: every truncation and a flipped byte at
/// every position of a small object.
#[test]
fn reader_survives_damaged_files() {
    let t = CodeObjectTarget::parse("gfx90a", None).unwrap();
    let good = write_hsaco(&sample(
        t,
        CodeObjectVersion::V5,
        &fake_code(Generation::Gfx9),
        true,
    ))
    .unwrap();
    for len in (0..good.len()).step_by(7) {
        let _ = read(&good[..len]);
    }
    for pos in 0..good.len() {
        for mask in [0xff, 0x80, 0x01] {
            let mut bad = good.clone();
            bad[pos] ^= mask;
            if let Ok(co) = read(&bad) {
                let _ = inspect::summary(&co);
            }
        }
    }
}
