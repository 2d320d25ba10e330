//! Call-frame information checked with LLVM's tools (issue 8, item 5): the
//! `.debug_frame` of our code objects, decoded by `llvm-dwarfdump-22
//! --debug-frame`, must hold one FDE per function over exactly its code and
//! state, at the instructions `llvm-objdump-22` shows, what we meant:
//! - kernels: the return address is undefined (an unwind ends there);
//! - device functions: the CFA is SP (SGPR32) plus the incoming argument area,
//!   and follows every `s_add_u32 s32, s32, N` / `s_sub_u32 s32, s32, N` around
//!   calls; the return address is in s[30:31], except between the prologue's
//!   `v_writelane_b32 vX, s30, L` / `s31, L+1` and the epilogue, where it is in
//!   those lanes of vX; a VGPR the prologue saves with `scratch_store_dword` /
//!   `buffer_store_dword ... s32 offset:O` is at CFA + O - incoming (in SP
//!   units: wave-level bytes on gfx90a) until the epilogue restores it; at every
//!   `s_setpc_b64` nothing but the return address in s[30:31] remains.
//!
//! The relocatable form carries the same information: linking it with
//! ld.lld-22 (which applies its `.rela.debug_frame`) gives the same decoded
//! FDEs as our `.hsaco`.
//!
//! One llvm-dwarfdump process for every object and one llvm-objdump process per
//! target.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use amdgpu_cg::codegen::{self, Options, Report};
use amdgpu_cg::codeobj::{self, CodeObjectTarget, CodeObjectVersion};
use amdgpu_cg::isa::llvm_tools;
use amdgpu_cg::mir;

const MODULES: [&str; 9] = [
    "tests/data/codegen/nested_calls",
    "tests/data/codegen/frame_edges",
    "tests/data/codegen/call_aggregates",
    "tests/data/codegen/call_control_flow",
    "examples/call",
    "tests/data/codegen/call_frames",
    "tests/data/codegen/stack_slots",
    "tests/data/codegen/calls",
    "examples/call_many",
];

/// One FDE as llvm-dwarfdump shows it: its range and its rows (address, CFA,
/// register rules by name).
#[derive(Debug)]
struct Fde {
    start: u64,
    end: u64,
    rows: Vec<(u64, String, BTreeMap<String, String>)>,
}

impl Fde {
    /// The row in effect at `address`.
    fn at(&self, address: u64) -> (&str, &BTreeMap<String, String>) {
        let (_, cfa, regs) = self.rows.iter().rev().find(|(a, _, _)| *a <= address).unwrap_or_else(|| panic!("no row at {address:#x} in {self:?}"));
        (cfa, regs)
    }
}

/// Splits `CFA=SGPR32-16: PC_REG=[...], VGPR32=[CFA+8]` into the CFA and the
/// rules (commas inside brackets belong to a rule).
fn parse_row(text: &str) -> (String, BTreeMap<String, String>) {
    let (cfa, rest) = text.split_once(": ").map_or((text, ""), |(c, r)| (c, r));
    let cfa = cfa.trim_start_matches("CFA=").to_string();
    let mut regs = BTreeMap::new();
    let mut depth = 0;
    let mut current = String::new();
    for ch in rest.chars().chain([',']) {
        match ch {
            '[' => depth += 1,
            ']' => depth -= 1,
            _ => {}
        }
        if ch == ',' && depth == 0 {
            if let Some((k, v)) = current.trim().split_once('=') {
                regs.insert(k.to_string(), v.to_string());
            }
            current.clear();
        } else {
            current.push(ch);
        }
    }
    (cfa, regs)
}

/// FDEs per file from one llvm-dwarfdump run over several files.
fn parse_dwarfdump(text: &str) -> BTreeMap<String, Vec<Fde>> {
    let mut files: BTreeMap<String, Vec<Fde>> = BTreeMap::new();
    let mut file = String::new();
    for line in text.lines() {
        if let Some((path, _)) = line.split_once(":\tfile format") {
            file = path.to_string();
            files.insert(file.clone(), Vec::new());
        } else if let Some(range) = line.split(" pc=").nth(1).filter(|_| line.contains(" FDE ")) {
            let (a, b) = range.split_once("...").unwrap();
            let fde = Fde { start: u64::from_str_radix(a, 16).unwrap(), end: u64::from_str_radix(b, 16).unwrap(), rows: Vec::new() };
            files.get_mut(&file).unwrap().push(fde);
        } else if let Some(rest) = line.trim_start().strip_prefix("0x").filter(|_| line.starts_with("  0x")) {
            let (address, row) = rest.split_once(": ").unwrap();
            let (cfa, regs) = parse_row(row);
            files.get_mut(&file).unwrap().last_mut().unwrap().rows.push((u64::from_str_radix(address, 16).unwrap(), cfa, regs));
        }
    }
    files
}

/// Functions per file from llvm-objdump: name -> instructions (address, text).
fn parse_objdump(text: &str) -> BTreeMap<String, BTreeMap<String, Vec<(u64, String)>>> {
    let mut files: BTreeMap<String, BTreeMap<String, Vec<(u64, String)>>> = BTreeMap::new();
    let (mut file, mut func) = (String::new(), String::new());
    for line in text.lines() {
        if let Some((path, _)) = line.split_once(":\tfile format") {
            file = path.to_string();
            files.insert(file.clone(), BTreeMap::new());
        } else if line.ends_with(">:") {
            func = line.split('<').nth(1).unwrap().trim_end_matches(">:").to_string();
            files.get_mut(&file).unwrap().insert(func.clone(), Vec::new());
        } else if let Some((inst, comment)) = line.split_once("//") {
            let address = comment.trim().split(':').next().unwrap();
            let inst = inst.split_whitespace().collect::<Vec<_>>().join(" ");
            files.get_mut(&file).unwrap().get_mut(&func).unwrap().push((u64::from_str_radix(address, 16).unwrap(), inst));
        }
    }
    files
}

/// The CFA's offset from SGPR32 (`SGPR32`, `SGPR32+64`, `SGPR32-16`).
fn cfa_offset(cfa: &str) -> i64 {
    let rest = cfa.strip_prefix("SGPR32").unwrap_or_else(|| panic!("CFA is not SGPR32-based: {cfa}"));
    if rest.is_empty() {
        0
    } else {
        rest.parse().unwrap()
    }
}

/// The last operand of `s_add_u32 s32, s32, N` as a number.
fn immediate(inst: &str) -> i64 {
    let last = inst.rsplit(", ").next().unwrap();
    match last.strip_prefix("0x") {
        Some(hex) => i64::from_str_radix(hex, 16).unwrap(),
        None => last.parse().unwrap(),
    }
}

const RA_IN_SGPRS: &str = "[DW_OP_regx SGPR30, DW_OP_piece 0x4, DW_OP_regx SGPR31, DW_OP_piece 0x4]";

#[test]
fn debug_frame_decodes_to_the_rules_we_meant() {
    let Some(dwarfdump) = llvm_tools::require("llvm-dwarfdump-22") else { return };
    let Some(objdump) = llvm_tools::require("llvm-objdump-22") else { return };
    let Some(lld) = llvm_tools::require("ld.lld-22") else { return };
    let dir = std::env::temp_dir().join(format!("amdgpu-cg-cfi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut files: Vec<(PathBuf, CodeObjectTarget, Vec<codegen::CompiledKernel>)> = Vec::new();
    let mut linked_pairs: Vec<(PathBuf, PathBuf)> = Vec::new();
    for (config, target) in CodeObjectTarget::all_configurations().into_iter().enumerate() {
        for m in MODULES {
            let text = std::fs::read_to_string(format!("{}/{m}.mir", env!("CARGO_MANIFEST_DIR"))).unwrap();
            let module = mir::parse(&text).unwrap();
            let (object, kernels) = codegen::compile_module(&module, &target, CodeObjectVersion::V5, &Options::default(), &mut Report::default()).unwrap();
            let name = format!("{}-{config}.hsaco", m.rsplit('/').next().unwrap());
            let path = dir.join(name);
            std::fs::write(&path, codeobj::write_hsaco(&object).unwrap()).unwrap();
            if m.ends_with("nested_calls") || m.ends_with("call_frames") {
                let (obj, linked) = (path.with_extension("o"), path.with_extension("linked"));
                std::fs::write(&obj, codeobj::write_relocatable(&object).unwrap()).unwrap();
                let out = Command::new(&lld).arg("-shared").arg(&obj).arg("-o").arg(&linked).output().unwrap();
                assert!(out.status.success() && out.stderr.is_empty(), "ld.lld-22: {}", String::from_utf8_lossy(&out.stderr));
                linked_pairs.push((path.clone(), linked));
            }
            files.push((path, target, kernels));
        }
    }
    let out = Command::new(&dwarfdump).arg("--debug-frame").args(files.iter().map(|f| &f.0)).args(linked_pairs.iter().map(|p| &p.1)).output().unwrap();
    assert!(out.status.success() && out.stderr.is_empty(), "llvm-dwarfdump: {}", String::from_utf8_lossy(&out.stderr));
    let frames = parse_dwarfdump(&String::from_utf8_lossy(&out.stdout));
    for (direct, linked) in &linked_pairs {
        let (a, b) = (&frames[&direct.to_string_lossy().to_string()], &frames[&linked.to_string_lossy().to_string()]);
        let rows = |f: &[Fde]| f.iter().map(|x| (x.start, x.end, x.rows.clone())).collect::<Vec<_>>();
        assert!(!a.is_empty() && rows(a) == rows(b), "{}: the relocatable object linked by ld.lld-22 has other FDEs", direct.display());
    }
    let mut disassembly = BTreeMap::new();
    for target in CodeObjectTarget::all_configurations() {
        let same: Vec<&PathBuf> = files.iter().filter(|f| f.1 == target).map(|f| &f.0).collect();
        let mut cmd = Command::new(&objdump);
        cmd.args(["-d", "--no-show-raw-insn", &format!("--mcpu={}", target.target.gpu.name())]);
        if target.target.wave == amdgpu_cg::isa::WaveSize::W64 && target.target.gpu.generation() == amdgpu_cg::isa::Generation::Gfx11 {
            cmd.arg("--mattr=+wavefrontsize64");
        }
        let out = cmd.args(&same).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        disassembly.extend(parse_objdump(&String::from_utf8_lossy(&out.stdout)));
    }
    let (mut fdes, mut checked_rows) = (0, 0);
    for (path, target, kernels) in &files {
        let key = path.to_string_lossy().to_string();
        let what = |f: &str| format!("{f} in {key}");
        let fdes_here = &frames[&key];
        let funcs = &disassembly[&key];
        assert_eq!(fdes_here.len(), kernels.len(), "one FDE per function in {key}");
        let scale = if target.target.gpu.has_architected_flat_scratch() { 1 } else { 64 };
        // llvm-dwarfdump names the wave64 VGPR numbers (2560 + n) only; wave32
        // code uses 1536 + n, shown as a number.
        let wave64 = target.target.wave == amdgpu_cg::isa::WaveSize::W64;
        let vgpr_op = |n: u16| if wave64 { format!("VGPR{n}") } else { format!("{:#x}", 1536 + n) };
        let vgpr_rule = |n: u16| if wave64 { format!("VGPR{n}") } else { format!("reg{}", 1536 + n) };
        let vgpr_number = |operand: &str| operand.trim_end_matches(',').trim_start_matches('v').parse::<u16>().unwrap();
        for k in kernels {
            // objdump shows the padding up to the next symbol as part of a function.
            let start = funcs[&k.name][0].0;
            let insts: Vec<(u64, String)> = funcs[&k.name].iter().filter(|(a, _)| *a < start + k.code.len() as u64).cloned().collect();
            let fde = fdes_here.iter().find(|f| f.start == start).unwrap_or_else(|| panic!("no FDE at the start of {}", what(&k.name)));
            assert_eq!(fde.end - start, k.code.len() as u64, "{}: FDE range", what(&k.name));
            fdes += 1;
            if k.is_kernel {
                assert_eq!(fde.at(start).1.get("PC_REG").map(String::as_str), Some("undefined"), "{}", what(&k.name));
                continue;
            }
            let (cfa, regs) = fde.at(start);
            let base = cfa_offset(cfa);
            assert_eq!(regs.get("PC_REG").map(String::as_str), Some(RA_IN_SGPRS), "{} at entry", what(&k.name));
            // Where the prologue put things.
            let mut ra_lanes = None;
            let mut saved: BTreeMap<String, i64> = BTreeMap::new();
            for (i, (_, inst)) in insts.iter().enumerate() {
                if inst.starts_with("v_writelane_b32") && inst.contains(", s31, ") {
                    let vgpr = vgpr_op(vgpr_number(inst.split_whitespace().nth(1).unwrap()));
                    let lane = immediate(inst);
                    ra_lanes = Some(format!("[DW_OP_regx {vgpr}, DW_OP_bit_piece 0x20 {:#x}, DW_OP_regx {vgpr}, DW_OP_bit_piece 0x20 {:#x}]", (lane - 1) * 32, lane * 32));
                    break;
                }
                let saves = (inst.starts_with("scratch_store_dword off, v") || inst.starts_with("buffer_store_dword v")) && inst.contains("s32");
                if saves && i < 8 && insts[0].1.starts_with("s_or_saveexec") {
                    let vgpr = inst.replace("scratch_store_dword off, ", "").replace("buffer_store_dword ", "");
                    let vgpr = vgpr_rule(vgpr_number(vgpr.split(',').next().unwrap().trim()));
                    let offset = inst.rsplit("offset:").next().filter(|_| inst.contains("offset:")).map_or(0, |o| o.parse::<i64>().unwrap());
                    saved.insert(vgpr, offset * scale - base);
                }
            }
            let mut sp = 0;
            for (i, (address, inst)) in insts.iter().enumerate() {
                let next = insts.get(i + 1).map_or(fde.end, |n| n.0);
                if inst.starts_with("s_add_u32 s32, s32, ") {
                    sp = immediate(inst);
                } else if inst.starts_with("s_sub_u32 s32, s32, ") {
                    sp = 0;
                }
                if inst.starts_with("s_add_u32 s32, s32, ") || inst.starts_with("s_sub_u32 s32, s32, ") {
                    let (cfa, _) = fde.at(next);
                    assert_eq!(cfa_offset(cfa), base - sp, "{}: CFA after '{inst}' at {address:#x}", what(&k.name));
                    checked_rows += 1;
                }
                if inst.starts_with("s_swappc_b64") {
                    let (cfa, regs) = fde.at(*address);
                    assert_eq!(cfa_offset(cfa), base - sp, "{}: CFA at the call at {address:#x}", what(&k.name));
                    let lanes = ra_lanes.as_ref().unwrap_or_else(|| panic!("{}: a call without the return address saved", what(&k.name)));
                    assert_eq!(regs.get("PC_REG"), Some(lanes), "{}: return address at the call at {address:#x}", what(&k.name));
                    for (vgpr, at) in &saved {
                        let want = if *at == 0 { "[CFA]".to_string() } else { format!("[CFA{at:+}]") };
                        assert_eq!(regs.get(vgpr), Some(&want), "{}: {vgpr} at the call at {address:#x}", what(&k.name));
                    }
                    checked_rows += 1;
                }
                if inst.starts_with("s_setpc_b64") {
                    let (cfa, regs) = fde.at(*address);
                    assert_eq!(cfa_offset(cfa), base, "{}: CFA at the return at {address:#x}", what(&k.name));
                    let left: Vec<_> = regs.keys().filter(|r| *r != "PC_REG").collect();
                    assert!(left.is_empty(), "{}: rules left at the return at {address:#x}: {regs:?}", what(&k.name));
                    assert_eq!(regs.get("PC_REG").map(String::as_str), Some(RA_IN_SGPRS), "{}: return address at {address:#x}", what(&k.name));
                    checked_rows += 1;
                }
            }
        }
    }
    assert!(fdes >= 80 && checked_rows >= 100, "{fdes} FDEs, {checked_rows} rows");
    eprintln!("{fdes} FDEs and {checked_rows} rows at calls, SP moves and returns checked with llvm-dwarfdump-22 and llvm-objdump-22; {} linked objects compared", linked_pairs.len());
}
