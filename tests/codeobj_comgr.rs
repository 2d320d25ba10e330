//! ROCm's code object manager (Debian's libamd-comgr2 = ROCm 5.2, comgr 2.4) reads
//! our `.hsaco` files back: metadata (every version), symbols (`.dynsym`), the ISA
//! name (v4 only: comgr 2.4 rejects EI_ABIVERSION > 2 with INVALID_ARGUMENT) and,
//! for gfx90a (the newest ISA it knows), disassembly of each kernel.
//! The checker is tests/support/comgr_check.c, compiled here with `cc -lamd_comgr`.

#[path = "support/codeobj.rs"]
mod support;

use std::process::Command;

use amdgpu_cg::codeobj::{write_hsaco, CodeObjectTarget, CodeObjectVersion};
use amdgpu_cg::isa::{Generation, Gpu, WaveSize};
use support::*;

#[test]
fn comgr_reads_metadata_symbols_isa_and_code() {
    let Some(t) = tools(&["llvm-mc-22"]) else {
        return;
    };
    let dir = out_dir("comgr");
    let Some(checker) = build_checker(&dir) else {
        return;
    };
    let cases = [
        ("gfx90a", None, CodeObjectVersion::V4),
        ("gfx90a:xnack-", None, CodeObjectVersion::V4),
        ("gfx90a", None, CodeObjectVersion::V5),
        ("gfx90a:xnack+", None, CodeObjectVersion::V6),
        ("gfx942", None, CodeObjectVersion::V5),
        ("gfx1100", None, CodeObjectVersion::V5),
        ("gfx1100", Some(WaveSize::W64), CodeObjectVersion::V4),
    ];
    for (text, wave, version) in cases {
        let target = CodeObjectTarget::parse(text, wave).unwrap();
        let code = assemble(
            &t[0],
            &dir,
            &target,
            &bodies(target.target.gpu.generation()),
        );
        let co = sample(target, version, &code, true);
        let path = dir.join(file_name(&target, version, "hsaco"));
        std::fs::write(&path, write_hsaco(&co).unwrap()).unwrap();
        let ctx = path.display().to_string();

        let mut cmd = Command::new(&checker);
        cmd.arg(&path);
        // comgr 2.4 can disassemble gfx90a only; it needs the ISA name for v5/v6.
        let disasm = target.target.gpu == Gpu::Gfx90a;
        if disasm && version != CodeObjectVersion::V4 {
            cmd.args(["--isa", &target.isa_name()]);
        }
        let out = run(&mut cmd);
        let lines: Vec<&str> = out.lines().collect();
        let has = |l: &str| lines.contains(&l);

        // ISA name: comgr names v4 objects of ISAs in its table (up to gfx90a, gfx1036).
        let names_isa = version == CodeObjectVersion::V4 && target.target.gpu == Gpu::Gfx90a;
        if names_isa {
            assert!(has(&format!("isa: {}", target.isa_name())), "{ctx}:\n{out}");
        } else {
            assert!(
                has("isa-error: INVALID_ARGUMENT"),
                "{ctx}: comgr 2.4 cannot name this ISA/version\n{out}"
            );
        }
        assert!(
            has(&format!("target: {}", target.isa_name())),
            "{ctx}:\n{out}"
        );
        let minor = if version == CodeObjectVersion::V4 {
            1
        } else {
            2
        };
        assert!(has(&format!("version: 1.{minor}")), "{ctx}:\n{out}");

        let kernel = |name: &str| -> &str {
            lines
                .iter()
                .find(|l| l.starts_with("kernel:") && l.contains(&format!(" .name={name} ")))
                .unwrap_or_else(|| panic!("{ctx}: comgr lists no kernel {name}\n{out}"))
        };
        let store = kernel("store");
        let lanes = target.target.wave.lanes();
        for kv in [
            ".symbol=store.kd".to_string(),
            ".kernarg_segment_size=12".into(),
            ".kernarg_segment_align=8".into(),
            ".group_segment_fixed_size=0".into(),
            ".private_segment_fixed_size=0".into(),
            format!(".wavefront_size={lanes}"),
            ".vgpr_count=3".into(),
            ".max_flat_workgroup_size=256".into(),
            ".args=[2]".into(),
        ] {
            assert!(
                store.split_whitespace().any(|w| w == kv),
                "{ctx}: store lacks {kv}: {store}"
            );
        }
        let caller = kernel("caller");
        let (hidden_count, size) = if version == CodeObjectVersion::V4 {
            (7, 64)
        } else {
            (19, 264)
        };
        assert!(
            caller.contains(&format!(" .args=[{}]", 1 + hidden_count)),
            "{ctx}: {caller}"
        );
        assert!(
            caller.contains(&format!(" .kernarg_segment_size={size} ")),
            "{ctx}: {caller}"
        );
        assert!(
            has("arg: .address_space=global .name=out .offset=0 .size=8 .value_kind=global_buffer"),
            "{ctx}:\n{out}"
        );
        assert!(
            has("arg: .name=v .offset=8 .size=4 .value_kind=by_value"),
            "{ctx}:\n{out}"
        );
        let hidden = if version == CodeObjectVersion::V4 {
            "arg: .offset=8 .size=8 .value_kind=hidden_global_offset_x"
        } else {
            "arg: .offset=8 .size=4 .value_kind=hidden_block_count_x"
        };
        assert!(has(hidden), "{ctx}:\n{out}");

        // Symbols found by comgr's lookup: FUNC (2) with the code size, OBJECT (1) of 64 bytes.
        let sym = |name: &str| -> Vec<String> {
            lines
                .iter()
                .find(|l| l.starts_with(&format!("symbol: {name} ")))
                .unwrap_or_else(|| panic!("{ctx}: no symbol {name}\n{out}"))
                .split_whitespace()
                .map(str::to_string)
                .collect()
        };
        assert_eq!(
            sym("store")[2..4],
            ["type=2", &format!("size={}", code["store"].len())],
            "{ctx}"
        );
        assert_eq!(sym("store.kd")[2..4], ["type=1", "size=64"], "{ctx}");
        assert_eq!(sym("caller.kd")[2..4], ["type=1", "size=64"], "{ctx}");
        for name in ["store", "store.kd", "caller", "caller.kd"] {
            assert_eq!(sym(name)[5], "undefined=0");
        }

        // Disassembly through comgr (gfx90a).
        let dis: Vec<&str> = lines
            .iter()
            .filter(|l| l.starts_with("disasm: "))
            .copied()
            .collect();
        if disasm {
            assert_eq!(target.target.gpu.generation(), Generation::Gfx9);
            for needle in [
                "disasm: store: s_load_dwordx2 s[2:3], s[0:1], 0x0",
                "disasm: store: global_store_dword v1, v2, s[2:3]",
                "disasm: store: s_endpgm",
                "disasm: caller: s_getpc_b64 s[4:5]",
                "disasm: caller: s_swappc_b64 s[30:31], s[4:5]",
            ] {
                assert!(
                    dis.contains(&needle),
                    "{ctx}: comgr disassembly lacks {needle:?}\n{out}"
                );
            }
            assert!(
                !dis.iter()
                    .any(|l| l.contains("unknown") || l.contains("invalid")),
                "{ctx}:\n{out}"
            );
        } else {
            assert!(dis.is_empty());
        }
    }
}
