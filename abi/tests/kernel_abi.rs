//! Kernel ABI: initial execution state and kernarg layout, checked against the
//! measured facts of the research notes and against llc-22 (MIR `argumentInfo`,
//! `.amdhsa_*` directives and the code object metadata).

mod common;

use amdgpu_abi::kernarg::{layout, layout_with};
use amdgpu_abi::kernel::{initial_state, KernelInputs, SgprInput};
use amdgpu_abi::Type;
use amdgpu_isa::target::{Gpu, Target, WaveSize};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

fn first(state: &amdgpu_abi::InitialState, input: SgprInput) -> Option<u16> {
    state.slot(input).map(|s| s.first)
}

/// Measured with llc-22 (research note abi-llvm.md section 3.1, code-object.md 7.4).
#[test]
fn initial_state_measured_examples() {
    let mut all = KernelInputs::all();
    let s = initial_state(Target::new(Gpu::Gfx90a), &all);
    let got: Vec<(SgprInput, u16, u16)> =
        s.user_sgprs.iter().chain(&s.system_sgprs).map(|x| (x.input, x.first, x.count)).collect();
    use SgprInput::*;
    assert_eq!(
        got,
        [
            (PrivateSegmentBuffer, 0, 4),
            (DispatchPtr, 4, 2),
            (QueuePtr, 6, 2),
            (KernargSegmentPtr, 8, 2),
            (DispatchId, 10, 2),
            (FlatScratchInit, 12, 2),
            (WorkgroupIdX, 14, 1),
            (WorkgroupIdY, 15, 1),
            (WorkgroupIdZ, 16, 1),
            (PrivateSegmentWaveOffset, 17, 1)
        ]
    );
    assert_eq!(s.user_sgpr_count, 14);
    let s = initial_state(Target::new(Gpu::Gfx942), &all);
    assert_eq!(first(&s, DispatchPtr), Some(0));
    assert_eq!(first(&s, KernargSegmentPtr), Some(4));
    assert_eq!(first(&s, WorkgroupIdX), Some(8));
    assert_eq!(first(&s, WorkgroupIdZ), Some(10));
    assert_eq!(first(&s, FlatScratchInit), None);
    assert_eq!(first(&s, PrivateSegmentWaveOffset), None);
    assert_eq!(s.user_sgpr_count, 8);
    let s = initial_state(Target::new(Gpu::Gfx1100), &all);
    assert_eq!(s.user_sgpr_count, 13, "gfx1100 wave32: padded so that user + system >= 16");
    assert_eq!(first(&s, WorkgroupIdX), Some(13));
    // Only the kernarg pointer and workgroup id x: 15 user SGPRs, id x in s15.
    let only = KernelInputs { kernarg_segment_ptr: true, workgroup_id_x: true, ..KernelInputs::default() };
    let s = initial_state(Target::new(Gpu::Gfx1100), &only);
    assert_eq!((s.user_sgpr_count, first(&s, WorkgroupIdX)), (15, Some(15)));
    let s = initial_state(Target::with_wave(Gpu::Gfx1100, WaveSize::W64).unwrap(), &only);
    assert_eq!((s.user_sgpr_count, first(&s, WorkgroupIdX)), (2, Some(2)), "no padding in wave64");
    // Work-item ids packed in v0 on all three targets.
    for gpu in Gpu::ALL {
        let s = initial_state(Target::new(gpu), &all);
        assert!(s.workitem_ids.packed);
        assert_eq!(s.workitem_ids.location(2), Some((0, 20)));
    }
    // Preload: limited by the 16 user SGPRs (gfx90a: 14 used, 2 left).
    all.preload_kernarg_dwords = 6;
    assert_eq!(initial_state(Target::new(Gpu::Gfx90a), &all).kernarg_preload_dwords, 2);
    assert_eq!(initial_state(Target::new(Gpu::Gfx942), &all).kernarg_preload_dwords, 6);
    assert_eq!(initial_state(Target::new(Gpu::Gfx1100), &all).kernarg_preload_dwords, 0);
}

fn llc(llc: &Path, target: Target, module: &str, tag: &str, mir: bool) -> String {
    let gpu = target.gpu;
    let input = std::env::temp_dir().join(format!(
        "amdgpu-abi-kernel-{}-{tag}-{}-{}.ll",
        std::process::id(),
        gpu.name(),
        target.wave.lanes()
    ));
    std::fs::write(&input, module).unwrap();
    let mut cmd = Command::new(llc);
    cmd.args(["-mtriple=amdgcn-amd-amdhsa", &format!("-mcpu={}", gpu.name()), "-o", "-"]);
    if target.wave != gpu.default_wave_size() {
        cmd.arg(format!("-mattr=+wavefrontsize{}", target.wave.lanes()));
    }
    if mir {
        cmd.arg("-stop-after=finalize-isel");
    }
    let out = cmd.arg(&input).output().expect("run llc-22");
    assert!(out.status.success(), "llc-22: {}", String::from_utf8_lossy(&out.stderr));
    let _ = std::fs::remove_file(&input);
    String::from_utf8(out.stdout).unwrap()
}

const NO_ALL: &str = "\"amdgpu-no-dispatch-ptr\" \"amdgpu-no-queue-ptr\" \"amdgpu-no-dispatch-id\" \"amdgpu-no-implicitarg-ptr\" \"amdgpu-no-flat-scratch-init\" \"amdgpu-no-workgroup-id-x\" \"amdgpu-no-workgroup-id-y\" \"amdgpu-no-workgroup-id-z\" \"amdgpu-no-cluster-id-x\" \"amdgpu-no-cluster-id-y\" \"amdgpu-no-cluster-id-z\" \"amdgpu-no-workitem-id-x\" \"amdgpu-no-workitem-id-y\" \"amdgpu-no-workitem-id-z\" \"amdgpu-no-lds-kernel-id\" \"amdgpu-no-hostcall-ptr\" \"amdgpu-no-heap-ptr\" \"amdgpu-no-multigrid-sync-arg\" \"amdgpu-no-default-queue\" \"amdgpu-no-completion-action\"";

/// Kernels exercising the user/system SGPR combinations: (name, body, attributes, preload dwords).
fn kernels() -> Vec<(&'static str, String, &'static str, u8)> {
    let uses = |calls: &[&str], scratch: bool| {
        let mut b = String::new();
        for (i, c) in calls.iter().enumerate() {
            let ret = if c.starts_with("dispatch.ptr") || c.starts_with("queue.ptr") {
                "ptr addrspace(4)"
            } else if c.starts_with("dispatch.id") {
                "i64"
            } else {
                "i32"
            };
            b += &format!("  %v{i} = call {ret} @llvm.amdgcn.{c}()\n");
            b += &format!("  store volatile {ret} %v{i}, ptr addrspace(1) %out\n");
        }
        if scratch {
            b += "  %s = alloca [8 x i32], addrspace(5)\n  store volatile i32 1, ptr addrspace(5) %s\n";
        }
        b
    };
    let every = [
        "dispatch.ptr",
        "queue.ptr",
        "dispatch.id",
        "workgroup.id.x",
        "workgroup.id.y",
        "workgroup.id.z",
        "workitem.id.x",
        "workitem.id.y",
        "workitem.id.z",
    ];
    vec![
        ("k_all", uses(&every, true), "", 0),
        ("k_all_noscratch", uses(&every, false), "\"amdgpu-no-flat-scratch-init\"", 0),
        ("k_kernarg_only", uses(&["workitem.id.x"], false), NO_ALL, 0),
        ("k_wg_y", uses(&["workgroup.id.y", "workitem.id.y"], false), NO_ALL, 0),
        ("k_dispatch_wg_z", uses(&["dispatch.ptr", "workgroup.id.z", "workitem.id.z"], true), NO_ALL, 0),
        ("k_preload", uses(&["dispatch.ptr", "queue.ptr", "dispatch.id"], false), "", 6),
    ]
}

fn directive(asm: &str, kernel: &str, name: &str) -> Option<u32> {
    let start = asm.find(&format!(".amdhsa_kernel {kernel}\n"))?;
    let block = &asm[start..];
    let block = &block[..block.find(".end_amdhsa_kernel").unwrap()];
    block.lines().find_map(|l| {
        let mut w = l.split_whitespace();
        (w.next() == Some(name)).then(|| w.next().unwrap().parse().unwrap())
    })
}

/// argumentInfo of each function: name -> (field -> first register number, is vgpr).
fn argument_info(mir: &str) -> HashMap<String, HashMap<String, u16>> {
    let mut out = HashMap::new();
    let mut current = String::new();
    let mut in_info = false;
    for line in mir.lines() {
        if let Some(n) = line.strip_prefix("name:") {
            current = n.trim().to_string();
            in_info = false;
        } else if line.trim() == "argumentInfo:" {
            in_info = true;
        } else if in_info {
            let t = line.trim();
            let Some((field, rest)) = t.split_once(':') else {
                in_info = false;
                continue;
            };
            let Some(i) = rest.find("reg: '$") else {
                in_info = false;
                continue;
            };
            let reg = &rest[i + 7..];
            let num: String = reg
                .trim_start_matches(|c: char| c.is_ascii_alphabetic())
                .chars()
                .take_while(|c| c.is_ascii_digit())
                .collect();
            out.entry(current.clone()).or_insert_with(HashMap::new).insert(field.to_string(), num.parse().unwrap());
        }
    }
    out
}

#[test]
fn initial_state_matches_llc22() {
    let Some(tool) = amdgpu_isa::llvm_tools::require("llc-22") else { return };
    let mut module = String::from("target triple = \"amdgcn-amd-amdhsa\"\n");
    for (i, (name, body, attrs, preload)) in kernels().iter().enumerate() {
        let params = if *preload > 0 {
            "ptr addrspace(1) inreg %out, i32 inreg %x, i16 inreg %h, i64 inreg %y, i32 %z"
        } else {
            "ptr addrspace(1) %out"
        };
        module += &format!("define amdgpu_kernel void @{name}({params}) #{i} {{\n{body}  ret void\n}}\n");
        if !attrs.is_empty() {
            module += &format!("attributes #{i} = {{ {attrs} }}\n");
        } else {
            module += &format!("attributes #{i} = {{ nounwind }}\n");
        }
    }
    let mut compared = 0;
    let targets = Gpu::ALL.into_iter().map(Target::new).chain(Target::with_wave(Gpu::Gfx1100, WaveSize::W64));
    for target in targets {
        let gpu = target.gpu;
        let asm = llc(&tool, target, &module, "state", false);
        let mir = llc(&tool, target, &module, "state", true);
        let info = argument_info(&mir);
        for (name, _, _, preload) in kernels() {
            let d = |n: &str| directive(&asm, name, n).unwrap_or(0) == 1;
            let flat = gpu.has_architected_flat_scratch();
            let inputs = KernelInputs {
                dispatch_ptr: d(".amdhsa_user_sgpr_dispatch_ptr"),
                queue_ptr: d(".amdhsa_user_sgpr_queue_ptr"),
                kernarg_segment_ptr: d(".amdhsa_user_sgpr_kernarg_segment_ptr"),
                dispatch_id: d(".amdhsa_user_sgpr_dispatch_id"),
                flat_scratch_init: d(".amdhsa_user_sgpr_flat_scratch_init"),
                private_segment_size: d(".amdhsa_user_sgpr_private_segment_size"),
                preload_kernarg_dwords: preload,
                workgroup_id_x: d(".amdhsa_system_sgpr_workgroup_id_x"),
                workgroup_id_y: d(".amdhsa_system_sgpr_workgroup_id_y"),
                workgroup_id_z: d(".amdhsa_system_sgpr_workgroup_id_z"),
                workgroup_info: d(".amdhsa_system_sgpr_workgroup_info"),
                uses_scratch: if flat {
                    d(".amdhsa_enable_private_segment")
                } else {
                    d(".amdhsa_system_sgpr_private_segment_wavefront_offset")
                },
                workitem_id_dims: directive(&asm, name, ".amdhsa_system_vgpr_workitem_id").unwrap() as u8,
            };
            let ours = initial_state(target, &inputs);
            let ctx = format!("{gpu} wave{} {name}", target.wave.lanes());
            assert_eq!(
                u32::from(ours.user_sgpr_count),
                directive(&asm, name, ".amdhsa_user_sgpr_count").unwrap(),
                "{ctx}: user_sgpr_count"
            );
            assert_eq!(
                u32::from(ours.kernarg_preload_dwords),
                directive(&asm, name, ".amdhsa_user_sgpr_kernarg_preload_length").unwrap_or(0),
                "{ctx}: preload length"
            );
            assert_eq!(
                ours.slot(SgprInput::PrivateSegmentBuffer).is_some(),
                !flat && d(".amdhsa_user_sgpr_private_segment_buffer"),
                "{ctx}"
            );
            let regs = &info[name];
            for (field, input) in [
                ("privateSegmentBuffer", SgprInput::PrivateSegmentBuffer),
                ("dispatchPtr", SgprInput::DispatchPtr),
                ("queuePtr", SgprInput::QueuePtr),
                ("kernargSegmentPtr", SgprInput::KernargSegmentPtr),
                ("dispatchID", SgprInput::DispatchId),
                ("flatScratchInit", SgprInput::FlatScratchInit),
                ("workGroupIDX", SgprInput::WorkgroupIdX),
                ("workGroupIDY", SgprInput::WorkgroupIdY),
                ("workGroupIDZ", SgprInput::WorkgroupIdZ),
                ("privateSegmentWaveByteOffset", SgprInput::PrivateSegmentWaveOffset),
            ] {
                if let Some(slot) = ours.slot(input) {
                    assert_eq!(regs.get(field).copied(), Some(slot.first), "{ctx}: {field}");
                    compared += 1;
                }
            }
            if let Some(v) = regs.get("workItemIDX") {
                assert_eq!(*v, 0, "{ctx}: packed work-item ids in v0");
                assert!(ours.workitem_ids.packed);
            }
        }
    }
    eprintln!("initial_state_matches_llc22: {compared} SGPR inputs compared");
}

/// Kernarg metadata of every kernel: name -> (args (offset, size, kind), size, align).
#[allow(clippy::type_complexity)]
fn kernarg_metadata(asm: &str) -> HashMap<String, (Vec<(u32, u32, String)>, u32, u32)> {
    let mut out = HashMap::new();
    let Some(start) = asm.find("amdhsa.kernels:") else { return out };
    let (mut args, mut size, mut align) = (Vec::new(), 0, 0);
    let (mut off, mut sz) = (0, 0);
    for line in asm[start..].lines().skip(1) {
        if !line.starts_with(' ') {
            break;
        }
        let t = line.trim().trim_start_matches("- ");
        let val = |k: &str| t.strip_prefix(k).map(|v| v.trim().to_string());
        if let Some(v) = val(".offset:") {
            off = v.parse().unwrap();
        } else if let Some(v) = val(".size:") {
            sz = v.parse().unwrap();
        } else if let Some(v) = val(".value_kind:") {
            args.push((off, sz, v));
        } else if let Some(v) = val(".kernarg_segment_size:") {
            size = v.parse().unwrap();
        } else if let Some(v) = val(".kernarg_segment_align:") {
            align = v.parse().unwrap();
        } else if line.starts_with("    .name:") {
            out.insert(val(".name:").unwrap(), (std::mem::take(&mut args), size, align));
        }
    }
    out
}

/// Random explicit argument lists laid out by llc-22 for code object v4 and v5:
/// explicit offsets/sizes, every hidden argument llc emits (name, offset, size),
/// `.kernarg_segment_size` and `.kernarg_segment_align` must agree.
#[test]
fn kernarg_layout_matches_llc22() {
    let Some(tool) = amdgpu_isa::llvm_tools::require("llc-22") else { return };
    let n = common::cases("AMDGPU_ABI_LLC_CASES", 120) as usize;
    let mut runner = TestRunner::deterministic();
    let strategy = proptest::collection::vec(common::ty(), 0..12);
    let lists: Vec<Vec<Type>> = (0..n).map(|_| strategy.new_tree(&mut runner).unwrap().current()).collect();
    let mut compared = 0;
    for (version, gpu) in [4u32, 5, 6].into_iter().flat_map(|v| Gpu::ALL.map(|g| (v, g))) {
        let mut module = format!("target triple = \"amdgcn-amd-amdhsa\"\n!llvm.module.flags = !{{!0}}\n!0 = !{{i32 1, !\"amdhsa_code_object_version\", i32 {}}}\n", version * 100);
        for (i, list) in lists.iter().enumerate() {
            let params: Vec<String> =
                list.iter().enumerate().map(|(j, t)| format!("{} %a{j}", common::ir_type(t))).collect();
            module += &format!("define amdgpu_kernel void @k{i}({}) {{\n  ret void\n}}\n", params.join(", "));
            // The same kernel without implicit arguments.
            module += &format!("define amdgpu_kernel void @n{i}({}) #0 {{\n  ret void\n}}\n", params.join(", "));
        }
        module += "attributes #0 = { \"amdgpu-no-implicitarg-ptr\" }\n";
        let asm = llc(&tool, Target::new(gpu), &module, &format!("kernarg-v{version}"), false);
        let md = kernarg_metadata(&asm);
        for (i, list) in lists.iter().enumerate() {
            for (name, hidden) in [(format!("k{i}"), true), (format!("n{i}"), false)] {
                let ours = if hidden { layout(list, version) } else { layout_with(list, version, false) };
                let (args, size, align) = md.get(&name).unwrap_or_else(|| panic!("metadata of {name}"));
                let ctx = format!("{gpu} v{version} {name} {list:?}");
                let explicit: Vec<(u32, u32)> =
                    args.iter().filter(|a| !a.2.starts_with("hidden_")).map(|a| (a.0, a.1)).collect();
                let want: Vec<(u32, u32)> = ours.explicit.iter().map(|a| (a.offset, a.size)).collect();
                assert_eq!(explicit, want, "{ctx}: explicit arguments");
                for (off, sz, kind) in args.iter().filter(|a| a.2.starts_with("hidden_") && a.2 != "hidden_none") {
                    let h = ours.hidden_arg(kind).unwrap_or_else(|| panic!("{ctx}: {kind} missing from our table"));
                    assert_eq!((h.offset, h.size), (*off, *sz), "{ctx}: {kind}");
                    compared += 1;
                }
                let emitted: Vec<(u32, u32, String)> =
                    args.iter().filter(|a| a.2.starts_with("hidden_")).cloned().collect();
                let want: Vec<(u32, u32, String)> =
                    ours.hidden_emitted_by_default().iter().map(|h| (h.offset, h.size, h.name.to_string())).collect();
                assert_eq!(emitted, want, "{ctx}: the hidden arguments llc-22 emits by default");
                assert_eq!(*size, ours.size, "{ctx}: kernarg_segment_size");
                assert_eq!(*align, ours.align, "{ctx}: kernarg_segment_align");
                compared += explicit.len();
            }
        }
    }
    eprintln!("kernarg_layout_matches_llc22: {n} argument lists x 3 code object versions x 3 targets x 2 (with/without hidden), {compared} arguments compared");
}
