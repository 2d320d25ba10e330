//! Every `.hsaco` we write, checked by the LLVM 22 tools: `llvm-readelf-22 -h -S -l
//! -s --dyn-syms --notes` and `llvm-objdump-22 -d / -D -j .rodata` must run without
//! a warning and show what we meant (header, sections, segments, symbols, the
//! decoded metadata, the descriptor directives, the resolved call).

#[path = "support/codeobj.rs"]
mod support;

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;

use amdgpu_cg::codeobj::{write_hsaco, CodeObjectTarget, CodeObjectVersion};
use amdgpu_cg::isa::{Generation, Gpu, WaveSize};
use support::*;

const VERSIONS: [CodeObjectVersion; 3] = [
    CodeObjectVersion::V4,
    CodeObjectVersion::V5,
    CodeObjectVersion::V6,
];

struct Written {
    path: PathBuf,
    target: CodeObjectTarget,
    version: CodeObjectVersion,
}

fn write_all(dir: &std::path::Path, mc: &std::path::Path) -> Vec<Written> {
    let mut out = Vec::new();
    for t in targets() {
        let code = assemble(mc, dir, &t, &bodies(t.target.gpu.generation()));
        for v in VERSIONS {
            let co = sample(t, v, &code, true);
            let bytes = write_hsaco(&co).unwrap();
            let path = dir.join(file_name(&t, v, "hsaco"));
            std::fs::write(&path, bytes).unwrap();
            out.push(Written {
                path,
                target: t,
                version: v,
            });
        }
    }
    out
}

#[test]
fn readelf_and_objdump_accept_and_decode_our_hsaco() {
    let Some(t) = tools(&["llvm-mc-22", "llvm-readelf-22", "llvm-objdump-22"]) else {
        return;
    };
    let (mc, readelf, objdump) = (&t[0], &t[1], &t[2]);
    let dir = out_dir("oracle");
    let files = write_all(&dir, mc);

    // One readelf run over every file.
    let out = run(Command::new(readelf)
        .args(["-h", "-S", "-l", "-s", "--dyn-syms", "--notes"])
        .args(files.iter().map(|f| &f.path)));
    let per_file = split_by_file(&out);
    assert_eq!(
        per_file.len(),
        files.len(),
        "readelf printed one block per file"
    );
    for w in &files {
        let text = &per_file[&w.path.display().to_string()];
        let ctx = w.path.display();
        let field = |name: &str| -> String {
            text.lines()
                .find_map(|l| l.trim().strip_prefix(name).map(|r| r.trim().to_string()))
                .unwrap_or_else(|| panic!("{ctx}: no '{name}' in readelf output"))
        };
        assert_eq!(field("Class:"), "ELF64", "{ctx}");
        assert_eq!(field("Data:"), "2's complement, little endian", "{ctx}");
        assert_eq!(field("OS/ABI:"), "AMDGPU - HSA", "{ctx}");
        assert_eq!(
            field("ABI Version:"),
            w.version.abi_version().to_string(),
            "{ctx}"
        );
        assert_eq!(field("Type:"), "DYN (Shared object file)", "{ctx}");
        assert_eq!(field("Machine:"), "EM_AMDGPU", "{ctx}");
        let flags = field("Flags:");
        assert!(
            flags.starts_with(&format!(
                "0x{:x}, {}",
                w.target.e_flags(),
                w.target.target.gpu.name()
            )),
            "{ctx}: {flags}"
        );
        // gfx90a "any": readelf prints "xnack, sramecc"; explicit settings: "xnack-", "sramecc+".
        if w.target.processor_with_features().contains("xnack-") {
            assert!(flags.contains("xnack-"), "{ctx}: {flags}");
        }
        if w.target.processor_with_features().contains("sramecc+") {
            assert!(flags.contains("sramecc+"), "{ctx}: {flags}");
        }

        // Sections: the set lld produces (minus .relro_padding, .AMDGPU.gpr_maximums).
        let secs = parse_sections(text);
        let names: Vec<&str> = secs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                ".note",
                ".dynsym",
                ".gnu.hash",
                ".hash",
                ".dynstr",
                ".rodata",
                ".text",
                ".dynamic",
                ".comment",
                ".symtab",
                ".shstrtab",
                ".strtab"
            ],
            "{ctx}"
        );
        let sec = |n: &str| secs.iter().find(|s| s.name == n).unwrap().clone();
        assert_eq!(
            (
                sec(".note").kind.as_str(),
                sec(".note").flags.as_str(),
                sec(".note").align
            ),
            ("NOTE", "A", 4)
        );
        assert_eq!(
            (
                sec(".rodata").flags.as_str(),
                sec(".rodata").align,
                sec(".rodata").size
            ),
            ("A", 64, 128)
        );
        assert_eq!(
            (sec(".text").flags.as_str(), sec(".text").align),
            ("AX", 256)
        );
        assert_eq!(
            (
                sec(".dynamic").kind.as_str(),
                sec(".dynamic").flags.as_str()
            ),
            ("DYNAMIC", "WA")
        );
        assert_eq!(sec(".hash").kind, "HASH");
        assert_eq!(sec(".gnu.hash").kind, "GNU_HASH");
        // The text padding LLVM adds: at least 1 KiB (gfx9) / 384 B (gfx11).
        let pad = if w.target.target.gpu.generation() == Generation::Gfx9 {
            1024
        } else {
            384
        };
        assert!(
            sec(".text").size >= 0x100 + 24 + pad,
            "{ctx}: .text size {:#x}",
            sec(".text").size
        );

        let segs = parse_segments(text);
        let kinds: Vec<&str> = segs.iter().map(|s| s.0.as_str()).collect();
        assert_eq!(
            kinds,
            [
                "PHDR",
                "LOAD",
                "LOAD",
                "LOAD",
                "DYNAMIC",
                "GNU_RELRO",
                "GNU_STACK",
                "NOTE"
            ],
            "{ctx}"
        );
        assert_eq!(segs[1].1, "R");
        assert_eq!(segs[2].1, "R E");
        assert_eq!(segs[3].1, "RW");

        // Symbols.
        let syms = parse_symbols(text);
        let find = |table: &str, name: &str| {
            syms.iter()
                .find(|s| s.table == table && s.name == name)
                .unwrap_or_else(|| panic!("{ctx}: no {name} in {table}"))
                .clone()
        };
        for table in [".dynsym", ".symtab"] {
            for k in ["store", "caller"] {
                let f = find(table, k);
                assert_eq!(
                    (f.kind.as_str(), f.bind.as_str(), f.vis.as_str()),
                    ("FUNC", "GLOBAL", "PROTECTED"),
                    "{ctx}"
                );
                assert_eq!(f.value % 256, 0, "{ctx}: {k} entry is 256-aligned");
                assert!(f.size > 0);
                let kd = find(table, &format!("{k}.kd"));
                assert_eq!(
                    (kd.kind.as_str(), kd.bind.as_str(), kd.vis.as_str(), kd.size),
                    ("OBJECT", "GLOBAL", "PROTECTED", 64)
                );
                assert_eq!(kd.value % 64, 0);
            }
        }
        assert!(
            !syms
                .iter()
                .any(|s| s.table == ".dynsym" && s.name == "helper"),
            "{ctx}: hidden helper is not exported"
        );
        let helper = find(".symtab", "helper");
        assert_eq!(
            (
                helper.kind.as_str(),
                helper.bind.as_str(),
                helper.vis.as_str()
            ),
            ("FUNC", "LOCAL", "HIDDEN")
        );
        let dynamic = find(".symtab", "_DYNAMIC");
        assert_eq!(
            (dynamic.bind.as_str(), dynamic.vis.as_str()),
            ("LOCAL", "HIDDEN")
        );

        // The decoded note.
        assert!(
            text.contains("NT_AMDGPU_METADATA (AMDGPU Metadata)"),
            "{ctx}"
        );
        // readelf prints the YAML; strings with ':' and a trailing '-'/'+' come quoted.
        let isa = w.target.isa_name();
        assert!(
            text.contains(&format!("amdhsa.target:   {isa}\n"))
                || text.contains(&format!("amdhsa.target:   '{isa}'\n")),
            "{ctx}"
        );
        let minor = if w.version == CodeObjectVersion::V4 {
            1
        } else {
            2
        };
        assert!(
            text.contains(&format!("amdhsa.version:\n  - 1\n  - {minor}\n")),
            "{ctx}"
        );
        for needle in [
            ".name:           store",
            ".symbol:         store.kd",
            ".kernarg_segment_size: 12",
            ".name:           caller",
            ".symbol:         caller.kd",
            "- .address_space:  global\n        .name:           out\n        .offset:         0\n        .size:           8\n        .value_kind:     global_buffer",
            ".name:           v\n        .offset:         8\n        .size:           4\n        .value_kind:     by_value",
            ".max_flat_workgroup_size: 256",
            ".max_flat_workgroup_size: 1024",
            ".vgpr_count:     3",
        ] {
            assert!(text.contains(needle), "{ctx}: note lacks {needle:?}\n{text}");
        }
        let wave = w.target.target.wave.lanes();
        assert!(text.contains(&format!(".wavefront_size: {wave}")), "{ctx}");
        if w.version == CodeObjectVersion::V4 {
            assert!(!text.contains(".uses_dynamic_stack"), "{ctx}");
            assert!(
                text.contains(".kernarg_segment_size: 64"),
                "{ctx}: 8 + 56 hidden"
            );
            assert!(
                text.contains("hidden_multigrid_sync_arg")
                    && !text.contains("hidden_block_count_x"),
                "{ctx}"
            );
        } else {
            assert!(text.contains(".uses_dynamic_stack: false"), "{ctx}");
            assert!(
                text.contains(".kernarg_segment_size: 264"),
                "{ctx}: 8 + 256 hidden"
            );
            for h in [
                "hidden_block_count_x",
                "hidden_group_size_x",
                "hidden_remainder_z",
                "hidden_grid_dims",
                "hidden_queue_ptr",
            ] {
                assert!(text.contains(h), "{ctx}: {h}");
            }
        }
        if w.target.target.gpu.has_agprs() {
            assert!(text.contains(".agpr_count:     0"), "{ctx}");
        } else {
            assert!(!text.contains(".agpr_count"), "{ctx}");
            // gfx10+ metadata key, written from code object v5 on (as LLVM 22 does).
            assert_eq!(
                text.contains(".workgroup_processor_mode: 1"),
                w.version != CodeObjectVersion::V4,
                "{ctx}"
            );
        }

        // The descriptors' entry offsets, read from the raw bytes readelf dumps.
        let (start, rodata) = hex_dump(readelf, &w.path, ".rodata");
        for k in ["store", "caller"] {
            let kd = find(".symtab", &format!("{k}.kd"));
            let f = find(".symtab", k);
            let at = (kd.value - start) as usize + 16;
            let off = i64::from_le_bytes(rodata[at..at + 8].try_into().unwrap());
            assert_eq!(
                kd.value as i64 + off,
                f.value as i64,
                "{ctx}: {k}.kd entry offset"
            );
        }
    }

    // objdump: -d per (mcpu, mattr) group, -D -j .rodata for the descriptors.
    let mut groups: HashMap<Vec<String>, Vec<&Written>> = HashMap::new();
    for w in &files {
        groups.entry(mcpu_args(&w.target)).or_default().push(w);
    }
    for (args, ws) in groups {
        let dis = run(Command::new(objdump)
            .arg("-d")
            .args(&args)
            .args(ws.iter().map(|w| &w.path)));
        for w in &ws {
            let ctx = w.path.display();
            let block = dis
                .split(&format!("{}:\tfile format elf64-amdgpu", w.path.display()))
                .nth(1)
                .unwrap_or_else(|| panic!("{ctx}: not in objdump -d output"));
            let block = block.split("file format elf64-amdgpu").next().unwrap();
            assert!(
                !block.contains("<unknown>") && !block.contains(".long"),
                "{ctx}: undecodable words\n{block}"
            );
            let store = if w.target.target.gpu.generation() == Generation::Gfx9 {
                "global_store_dword v1, v2, s[2:3]"
            } else {
                "global_store_b32 v1, v2, s[2:3]"
            };
            for needle in [
                "<store>:",
                "<caller>:",
                "<helper>:",
                store,
                "s_swappc_b64 s[30:31], s[4:5]",
                "s_setpc_b64 s[30:31]",
            ] {
                assert!(
                    block.contains(needle),
                    "{ctx}: objdump -d lacks {needle:?}\n{block}"
                );
            }
            check_call_literals(block, &w.path.display().to_string());
        }
        let rodata = run(Command::new(objdump)
            .args(["-D", "-j", ".rodata"])
            .args(&args)
            .args(ws.iter().map(|w| &w.path)));
        for w in &ws {
            let ctx = w.path.display();
            let block = rodata
                .split(&format!("{}:\tfile format elf64-amdgpu", w.path.display()))
                .nth(1)
                .unwrap()
                .split("file format elf64-amdgpu")
                .next()
                .unwrap();
            check_descriptor_directives(block, &w.target, w.version, &ctx.to_string());
        }
    }
}

/// The `.amdhsa_*` directives llvm-objdump decodes from our descriptors.
fn check_descriptor_directives(
    block: &str,
    t: &CodeObjectTarget,
    version: CodeObjectVersion,
    ctx: &str,
) {
    let kernel = |name: &str| -> HashMap<String, String> {
        let start = block
            .find(&format!(".amdhsa_kernel {name}\n"))
            .unwrap_or_else(|| panic!("{ctx}: no .amdhsa_kernel {name}\n{block}"));
        let body = &block[start..];
        let body = &body[..body.find(".end_amdhsa_kernel").unwrap()];
        body.lines()
            .filter_map(|l| {
                let mut f = l.split_whitespace();
                Some((f.next()?.to_string(), f.next()?.to_string()))
            })
            .collect()
    };
    let gfx9 = t.target.gpu.generation() == Generation::Gfx9;
    let w32 = t.target.wave == WaveSize::W32;
    let store = kernel("store");
    let expect = |d: &HashMap<String, String>, key: &str, value: &str| {
        assert_eq!(
            d.get(key).map(String::as_str),
            Some(value),
            "{ctx}: {key}\n{d:?}"
        );
    };
    expect(&store, ".amdhsa_kernarg_size", "12");
    expect(&store, ".amdhsa_group_segment_fixed_size", "0");
    expect(&store, ".amdhsa_private_segment_fixed_size", "0");
    expect(&store, ".amdhsa_user_sgpr_kernarg_segment_ptr", "1");
    expect(&store, ".amdhsa_user_sgpr_dispatch_ptr", "0");
    expect(&store, ".amdhsa_system_sgpr_workgroup_id_x", "1");
    expect(&store, ".amdhsa_system_sgpr_workgroup_id_y", "0");
    expect(&store, ".amdhsa_system_vgpr_workitem_id", "0");
    expect(&store, ".amdhsa_float_denorm_mode_32", "3");
    expect(&store, ".amdhsa_float_denorm_mode_16_64", "3");
    expect(&store, ".amdhsa_dx10_clamp", "1");
    expect(&store, ".amdhsa_ieee_mode", "1");
    if version != CodeObjectVersion::V4 {
        // The directive exists from code object v5 on; objdump omits it for v4.
        expect(&store, ".amdhsa_uses_dynamic_stack", "0");
    }
    // 3 VGPRs → 1 granule: objdump prints next_free_vgpr as granules × granule size.
    let granule = if t.target.gpu == Gpu::Gfx1100 && !w32 {
        4
    } else {
        8
    };
    expect(&store, ".amdhsa_next_free_vgpr", &granule.to_string());
    let caller = kernel("caller");
    let hidden = if version == CodeObjectVersion::V4 {
        64
    } else {
        264
    };
    expect(&caller, ".amdhsa_kernarg_size", &hidden.to_string());
    if gfx9 {
        expect(&store, ".amdhsa_accum_offset", "4");
        expect(&store, ".amdhsa_tg_split", "0");
        // SGPRs the hardware reserves above next_free_sgpr (code-object.md §7.5):
        // gfx90a: VCC 2 + XNACK mask 2 (xnack on or any) → 4; gfx942: 6.
        let xnack_off = t.processor_with_features().contains("xnack-");
        let extra = |uses_vcc: bool| match t.target.gpu {
            Gpu::Gfx942 => 6,
            _ if !xnack_off => 4,
            _ if uses_vcc => 2,
            _ => 0,
        };
        let granules = |n: u32| (n.div_ceil(8) * 8).to_string();
        expect(
            &store,
            ".amdhsa_next_free_sgpr",
            &granules(5 + extra(false)),
        );
        expect(
            &caller,
            ".amdhsa_next_free_sgpr",
            &granules(32 + extra(true)),
        );
    } else {
        expect(
            &store,
            ".amdhsa_wavefront_size32",
            if w32 { "1" } else { "0" },
        );
        expect(&store, ".amdhsa_workgroup_processor_mode", "1");
        expect(&store, ".amdhsa_memory_ordered", "1");
        expect(&store, ".amdhsa_forward_progress", "1");
        expect(&store, ".amdhsa_inst_pref_size", "1");
    }
}

/// In `caller`, the s_add_u32/s_addc_u32 literals must be `helper − (getpc + 4)`.
fn check_call_literals(block: &str, ctx: &str) {
    let addr_of = |label: &str| -> u64 {
        let line = block
            .lines()
            .find(|l| l.ends_with(&format!("<{label}>:")))
            .unwrap();
        u64::from_str_radix(line.split_whitespace().next().unwrap(), 16).unwrap()
    };
    let caller = addr_of("caller");
    let helper = addr_of("helper");
    let body: Vec<&str> = block
        .split("<caller>:")
        .nth(1)
        .unwrap()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(3)
        .collect();
    assert!(body[0].starts_with("s_getpc_b64 s[4:5]"), "{ctx}: {body:?}");
    let literal = literal_of;
    assert!(body[1].starts_with("s_add_u32 s4, s4,"), "{ctx}: {body:?}");
    assert!(body[2].starts_with("s_addc_u32 s5, s5,"), "{ctx}: {body:?}");
    let delta = helper.wrapping_sub(caller + 4);
    assert_eq!(
        literal(body[1]),
        delta & 0xffff_ffff,
        "{ctx}: low half of helper − pc"
    );
    assert_eq!(literal(body[2]), delta >> 32, "{ctx}: high half");
}

/// Degenerate objects are still clean ELF: no kernels (no .rodata) and a single
/// device function; readelf and objdump accept them without a warning.
#[test]
fn kernel_less_objects_are_clean() {
    let Some(t) = tools(&["llvm-readelf-22", "llvm-objdump-22"]) else {
        return;
    };
    let dir = out_dir("oracle_empty");
    let target = CodeObjectTarget::parse("gfx942", None).unwrap();
    let mut paths = Vec::new();
    for (i, functions) in [
        vec![],
        vec![amdgpu_cg::codeobj::Function {
            name: "device_fn".into(),
            code: 0xBE80_1D1Eu32.to_le_bytes().to_vec(), // s_setpc_b64 s[30:31]
            visibility: amdgpu_cg::codeobj::Visibility::Default,
            kernel: None,
            relocs: vec![],
            frame: vec![],
        }],
    ]
    .into_iter()
    .enumerate()
    {
        let co = amdgpu_cg::codeobj::CodeObject {
            target,
            version: CodeObjectVersion::V5,
            functions,
            printf: Vec::new(),
            data: Vec::new(),
        };
        let path = dir.join(format!("empty{i}.hsaco"));
        std::fs::write(&path, write_hsaco(&co).unwrap()).unwrap();
        paths.push(path);
    }
    let out = run(Command::new(&t[0])
        .args(["-h", "-S", "-l", "-s", "--dyn-syms", "--notes", "-d"])
        .args(&paths));
    assert!(out.contains("amdhsa.kernels:  []"), "{out}");
    assert!(!out.contains(".rodata"), "no descriptors, no .rodata");
    let syms = parse_symbols(&out);
    assert!(syms.iter().any(|s| s.table == ".dynsym"
        && s.name == "device_fn"
        && s.kind == "FUNC"
        && s.vis == "DEFAULT"));
    let dis = run(Command::new(&t[1])
        .args(["-d", "--mcpu=gfx942"])
        .args(&paths));
    assert!(dis.contains("s_setpc_b64 s[30:31]"), "{dis}");
}
