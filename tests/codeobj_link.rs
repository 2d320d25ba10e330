//! The relocatable form: `llvm-readelf-22 -r` shows the relocations we meant,
//! `ld.lld-22 -shared` links it together with an object `llc-22` compiled (our
//! kernel calls LLVM's `helper`; LLVM's kernel sits beside ours), and the linked
//! `.hsaco` passes the same readelf/objdump checks. Linking our relocatable object
//! alone must give what `write_hsaco` gives directly.

#[path = "support/codeobj.rs"]
mod support;

use std::process::Command;

use amdgpu_cg::codeobj::{
    read, write_hsaco, write_relocatable, CodeObjectTarget, CodeObjectVersion,
};
use amdgpu_cg::isa::WaveSize;
use support::*;

/// (target, llc -mattr, version)
fn cases() -> Vec<(CodeObjectTarget, &'static str, CodeObjectVersion)> {
    vec![
        (
            CodeObjectTarget::parse("gfx90a", None).unwrap(),
            "",
            CodeObjectVersion::V5,
        ),
        (
            CodeObjectTarget::parse("gfx90a:xnack-", None).unwrap(),
            "-xnack",
            CodeObjectVersion::V4,
        ),
        (
            CodeObjectTarget::parse("gfx942:sramecc+:xnack-", None).unwrap(),
            "+sramecc,-xnack",
            CodeObjectVersion::V6,
        ),
        (
            CodeObjectTarget::parse("gfx1100", None).unwrap(),
            "",
            CodeObjectVersion::V5,
        ),
        (
            CodeObjectTarget::parse("gfx1100", Some(WaveSize::W64)).unwrap(),
            "+wavefrontsize64",
            CodeObjectVersion::V5,
        ),
    ]
}

#[test]
fn relocatable_links_with_llc_objects() {
    let Some(t) = tools(&[
        "llvm-mc-22",
        "llvm-readelf-22",
        "llvm-objdump-22",
        "llc-22",
        "ld.lld-22",
    ]) else {
        return;
    };
    let (mc, readelf, objdump, llc, lld) = (&t[0], &t[1], &t[2], &t[3], &t[4]);
    let dir = out_dir("link");
    let Some(checker) = build_checker(&dir) else {
        return;
    };
    let helper_ll =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/codeobj/helper.ll");
    for (target, mattr, version) in cases() {
        let code = assemble(mc, &dir, &target, &bodies(target.target.gpu.generation()));
        let tag = file_name(&target, version, "");
        let ctx = tag.clone();

        // Ours, relocatable, calling an undefined `helper`.
        let ours = dir.join(format!("{tag}ours.o"));
        std::fs::write(
            &ours,
            write_relocatable(&sample(target, version, &code, false)).unwrap(),
        )
        .unwrap();
        let text = run(Command::new(readelf)
            .args(["-h", "-S", "-s", "-r", "--notes"])
            .arg(&ours));
        assert!(text.contains("REL (Relocatable file)"), "{ctx}");
        assert!(
            text.contains(&format!(
                "ABI Version:                       {}",
                version.abi_version()
            )),
            "{ctx}"
        );
        let syms = parse_symbols(&text);
        let sym = |n: &str| {
            syms.iter()
                .find(|s| s.name == n)
                .unwrap_or_else(|| panic!("{ctx}: no {n}"))
                .clone()
        };
        let caller = sym("caller").value;
        let helper = sym("helper");
        assert_eq!(
            (
                helper.kind.as_str(),
                helper.bind.as_str(),
                helper.vis.as_str(),
                helper.ndx.as_str()
            ),
            ("NOTYPE", "GLOBAL", "HIDDEN", "UND")
        );
        let reloc_lines: Vec<Vec<String>> = text
            .lines()
            .filter(|l| l.contains("R_AMDGPU_"))
            .map(|l| l.split_whitespace().map(str::to_string).collect())
            .collect();
        // Offset Info Type SymValue SymName + Addend
        let has = |offset: u64, kind: &str, name: &str, addend: &str| {
            reloc_lines.iter().any(|f| {
                u64::from_str_radix(&f[0], 16).unwrap() == offset
                    && f[2] == kind
                    && f[4] == name
                    && f[6] == addend
            })
        };
        assert!(
            has(caller + 8, "R_AMDGPU_REL32_LO", "helper", "4"),
            "{ctx}: {reloc_lines:?}"
        );
        assert!(
            has(caller + 16, "R_AMDGPU_REL32_HI", "helper", "c"),
            "{ctx}: {reloc_lines:?}"
        );
        assert!(
            has(0x10, "R_AMDGPU_REL64", "store", "10"),
            "{ctx}: {reloc_lines:?}"
        );
        assert!(
            has(0x50, "R_AMDGPU_REL64", "caller", "10"),
            "{ctx}: {reloc_lines:?}"
        );
        assert_eq!(reloc_lines.len(), 4, "{ctx}");

        // LLVM's object: helper + llvm_kernel.
        let theirs = dir.join(format!("{tag}llvm.o"));
        let mut cmd = Command::new(llc);
        cmd.args(["-mtriple=amdgcn-amd-amdhsa", "-filetype=obj"])
            .arg(format!("-mcpu={}", target.target.gpu.name()))
            .arg(format!("--amdhsa-code-object-version={}", version.number()));
        if !mattr.is_empty() {
            cmd.arg(format!("-mattr={mattr}"));
        }
        run(cmd.arg(&helper_ll).arg("-o").arg(&theirs));

        // Our relocatable object has the shape of llc's: the sections both have agree in
        // type, flags and alignment. (llc also writes .AMDGPU.gpr_maximums and
        // .llvm_addrsig, keeps section names in .strtab instead of .shstrtab, and has
        // no .comment, which clang adds and we write too.)
        let sections_of =
            |p: &std::path::Path| parse_sections(&run(Command::new(readelf).arg("-S").arg(p)));
        let (ours_secs, llvm_secs) = (sections_of(&ours), sections_of(&theirs));
        for name in [
            ".text",
            ".rela.text",
            ".rodata",
            ".rela.rodata",
            ".note.GNU-stack",
            ".note",
            ".symtab",
        ] {
            let shape = |secs: &[SecLine]| {
                secs.iter()
                    .find(|s| s.name == name)
                    .map(|s| (s.kind.clone(), s.flags.clone(), s.align))
            };
            let theirs_shape = shape(&llvm_secs);
            if name == ".rela.text" && theirs_shape.is_none() {
                continue; // llc's helper.ll makes no calls
            }
            assert_eq!(
                shape(&ours_secs),
                theirs_shape,
                "{ctx}: {name} vs llc-22's object"
            );
        }

        // Link (lld rejects mismatched e_flags / ABI versions, so this also checks ours match LLVM's).
        let linked = dir.join(format!("{tag}linked.hsaco"));
        run(Command::new(lld)
            .arg("-shared")
            .arg(&ours)
            .arg(&theirs)
            .arg("-o")
            .arg(&linked));
        let text = run(Command::new(readelf)
            .args(["-h", "-S", "-l", "-s", "--dyn-syms", "--notes"])
            .arg(&linked));
        assert!(text.contains("DYN (Shared object file)"), "{ctx}");
        assert!(
            text.contains(&format!(
                "Flags:                             0x{:x},",
                target.e_flags()
            )),
            "{ctx}"
        );
        assert_eq!(
            text.matches("NT_AMDGPU_METADATA").count(),
            2,
            "{ctx}: one note per input object"
        );
        for needle in [
            ".name:           store",
            ".name:           caller",
            ".name:           llvm_kernel",
            ".kernarg_segment_size: 12",
        ] {
            assert!(text.contains(needle), "{ctx}: {needle}");
        }
        let syms = parse_symbols(&text);
        let sym = |table: &str, n: &str| {
            syms.iter()
                .find(|s| s.table == table && s.name == n)
                .unwrap_or_else(|| panic!("{ctx}: no {n} in {table}"))
                .clone()
        };
        for k in ["store", "caller", "llvm_kernel"] {
            assert_eq!(sym(".dynsym", k).kind, "FUNC");
            assert_eq!(sym(".dynsym", &format!("{k}.kd")).size, 64);
            assert_eq!(sym(".symtab", k).value % 256, 0);
        }
        assert_eq!(
            sym(".symtab", "helper").bind,
            "LOCAL",
            "{ctx}: the hidden helper became local"
        );
        let (start, rodata) = hex_dump(readelf, &linked, ".rodata");
        for k in ["store", "caller", "llvm_kernel"] {
            let kd = sym(".symtab", &format!("{k}.kd")).value;
            let at = (kd - start) as usize + 16;
            let off = i64::from_le_bytes(rodata[at..at + 8].try_into().unwrap());
            assert_eq!(
                kd as i64 + off,
                sym(".symtab", k).value as i64,
                "{ctx}: {k}.kd entry offset after the link"
            );
        }
        let dis = run(Command::new(objdump)
            .arg("-d")
            .args(mcpu_args(&target))
            .arg(&linked));
        assert!(!dis.contains("<unknown>"), "{ctx}");
        // caller's literals now hold helper − (getpc + 4), written by lld from our relocations.
        let helper_addr = sym(".symtab", "helper").value;
        let caller_addr = sym(".symtab", "caller").value;
        let delta = helper_addr.wrapping_sub(caller_addr + 4);
        let body = dis.split("<caller>:").nth(1).unwrap();
        let lines: Vec<&str> = body
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .take(3)
            .collect();
        let lit = literal_of;
        assert_eq!(lit(lines[1]), delta & 0xffff_ffff, "{ctx}: {lines:?}");
        assert_eq!(lit(lines[2]), delta >> 32, "{ctx}: {lines:?}");
        let kd = run(Command::new(objdump)
            .args(["-D", "-j", ".rodata"])
            .args(mcpu_args(&target))
            .arg(&linked));
        assert!(
            kd.contains(".amdhsa_kernel store") && kd.contains(".amdhsa_kernel llvm_kernel"),
            "{ctx}"
        );

        // comgr reads the linked object: both notes' kernels (it merges the notes),
        // the symbols, and for gfx90a disassembles our kernels and LLVM's.
        if target.target.gpu == amdgpu_cg::isa::Gpu::Gfx90a {
            let mut cmd = Command::new(&checker);
            cmd.arg(&linked);
            if version != CodeObjectVersion::V4 {
                cmd.args(["--isa", &target.isa_name()]);
            }
            let out = run(&mut cmd);
            for name in ["store", "caller", "llvm_kernel"] {
                assert!(
                    out.contains(&format!(" .name={name} ")),
                    "{ctx}: comgr lacks kernel {name}\n{out}"
                );
                assert!(
                    out.contains(&format!("symbol: {name}.kd type=1 size=64 ")),
                    "{ctx}\n{out}"
                );
                assert!(
                    out.contains(&format!("disasm: {name}: s_endpgm")),
                    "{ctx}\n{out}"
                );
            }
        }

        // Our reader on lld's output.
        let loaded = read(&std::fs::read(&linked).unwrap()).unwrap();
        let names: Vec<&str> = loaded.kernels.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names.len(), 3, "{ctx}: {names:?}");
        assert!(loaded.kernels.iter().all(|k| k.metadata.is_some()), "{ctx}");

        // Our relocatable alone (helper included) through lld == our direct ET_DYN.
        let co = sample(target, version, &code, true);
        let alone_o = dir.join(format!("{tag}alone.o"));
        let alone = dir.join(format!("{tag}alone.hsaco"));
        std::fs::write(&alone_o, write_relocatable(&co).unwrap()).unwrap();
        run(Command::new(lld)
            .arg("-shared")
            .arg(&alone_o)
            .arg("-o")
            .arg(&alone));
        let direct = write_hsaco(&co).unwrap();
        let a = read(&std::fs::read(&alone).unwrap()).unwrap();
        let b = read(&direct).unwrap();
        assert_eq!(a.metadata.len(), 1);
        assert_eq!(a.metadata[0].kernels, b.metadata[0].kernels, "{ctx}");
        assert_eq!(
            (a.e_flags, a.abi_version),
            (b.e_flags, b.abi_version),
            "{ctx}"
        );
        for (ka, kb) in a.kernels.iter().zip(&b.kernels) {
            let (mut da, mut db) = (ka.descriptor, kb.descriptor);
            // Both point at their own kernel; addresses differ between the layouts.
            da.kernel_code_entry_byte_offset = 0;
            db.kernel_code_entry_byte_offset = 0;
            assert_eq!((ka.name.as_str(), da), (kb.name.as_str(), db), "{ctx}");
            assert_eq!(ka.code, kb.code, "{ctx}: {} code after relocation", ka.name);
        }
        // Same allocated sections in the same order (lld adds .relro_padding; both have .comment).
        let lld_text = run(Command::new(readelf).arg("-S").arg(&alone));
        let ours_path = dir.join(format!("{tag}direct.hsaco"));
        std::fs::write(&ours_path, &direct).unwrap();
        let ours_text = run(Command::new(readelf).arg("-S").arg(&ours_path));
        // Allocated sections: same name, type, flags, alignment, address and size
        // (our layout rules are lld's); non-allocated ones: same name, type, flags.
        let shape = |t: &str| -> Vec<(String, String, String, u64, u64, u64)> {
            parse_sections(t)
                .into_iter()
                .filter(|s| s.name != ".relro_padding")
                .map(|s| {
                    let alloc = s.flags.contains('A');
                    (
                        s.name,
                        s.kind,
                        s.flags,
                        s.align,
                        if alloc { s.addr } else { 0 },
                        if alloc { s.size } else { 0 },
                    )
                })
                .collect()
        };
        assert_eq!(
            shape(&ours_text),
            shape(&lld_text),
            "{ctx}: section shape vs ld.lld-22"
        );
        // And the same bytes in every section whose contents do not depend on the
        // order of strings in .dynstr/.strtab (ours: definition order; lld: hash order).
        for section in [".note", ".rodata", ".text", ".dynamic"] {
            let ours_bytes = hex_dump(readelf, &ours_path, section);
            let lld_bytes = hex_dump(readelf, &alone, section);
            assert_eq!(
                ours_bytes, lld_bytes,
                "{ctx}: {section} bytes differ from ld.lld-22's"
            );
        }
    }
}
