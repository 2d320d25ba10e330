//! Differential check against llc-22: random signatures are emitted as LLVM IR
//! (every argument piece used by an inline-asm marker, every result piece defined
//! by one), compiled with `llc-22 -stop-after=finalize-isel` (one llc process per
//! convention and target, many functions each), and the physical register or
//! fixed stack object of every piece is compared with `assign`.
//!
//! - `llvm` convention: every piece must agree, on every target.
//! - `amdgpu-cg`: the IR is our lowering (by-reference structs as private
//!   pointers, sret as a first `sret` parameter); the shared part must agree and
//!   every difference must be one of the intended ones of docs/abi.md (D1..D6),
//!   each recognised exactly.
//!
//! `AMDGPU_ABI_LLC_CASES=N` sets the signatures per convention and target
//! (default 120).

mod common;

use amdgpu_abi::{assign, Assignment, Convention, Location, Signature, Type};
use amdgpu_isa::target::{Gpu, Target};
use common::ir::{private_ptr, Emitter};
use common::mir::{self, MirFunction, Source};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::Command;

/// One piece to compare, in allocation order.
struct Expect {
    tag: String,
    ours: Location,
    inreg: bool,
    /// amdgpu-cg: where the `llvm` convention puts this piece of the lowered IR
    /// (llc must agree exactly; the D-category explains ours against it).
    llvm: Option<Location>,
}

struct Probe {
    name: String,
    text: String,
    pieces: Vec<Expect>,
    ret: Vec<(String, Location)>,
}

fn probe(name: &str, sig: &Signature, a: &Assignment) -> Probe {
    let mut e = Emitter::new();
    let mut params = Vec::new();
    let mut pieces = Vec::new();
    let mut ir_params: Vec<(String, Type, bool, Vec<Location>)> = Vec::new();
    if let Some(loc) = a.sret {
        if a.convention == Convention::AmdgpuCg {
            let rt = common::ir_type(sig.ret.as_ref().unwrap());
            params.push(format!("ptr addrspace(5) sret({rt}) %sret"));
            ir_params.push(("%sret".into(), private_ptr(), false, vec![loc]));
            pieces.push(Expect { tag: format!("{name}.s"), ours: loc, inreg: false, llvm: None });
        } else {
            // LLVM demotes the result itself: the hidden pointer is v0, not an IR parameter.
            assert_eq!(loc, Location::Vgpr(0));
        }
    }
    for arg in &a.args {
        let ty = if arg.by_ref { private_ptr() } else { arg.param.ty.clone() };
        let v = format!("%a{}", arg.index);
        params.push(format!("{}{} {v}", common::ir_type(&ty), if arg.param.inreg { " inreg" } else { "" }));
        ir_params.push((v, ty, arg.param.inreg, arg.pieces.iter().map(|p| p.loc).collect()));
    }
    for (j, (v, ty, inreg, locs)) in ir_params.iter().enumerate() {
        if v == "%sret" {
            let x = e.value_pieces(v, ty);
            e.use_i32(&x[0], &format!("{name}.s"));
            continue;
        }
        let xs = e.value_pieces(v, ty);
        assert_eq!(xs.len(), locs.len(), "piece count of {ty}");
        for (k, (x, loc)) in xs.iter().zip(locs).enumerate() {
            let tag = format!("{name}.a{j}.p{k}");
            e.use_i32(x, &tag);
            pieces.push(Expect { tag, ours: *loc, inreg: *inreg, llvm: None });
        }
    }
    let ir_ret = match (&sig.ret, a.convention, a.sret) {
        (Some(_), Convention::AmdgpuCg, Some(_)) => None,
        (r, _, _) => r.clone(),
    };
    let mut ret = Vec::new();
    let ret_text = match &ir_ret {
        None => "ret void".to_string(),
        Some(ty) => {
            let n = common::expected_pieces(ty);
            let defs: Vec<String> = (0..n).map(|k| e.def_i32(&format!("{name}.r.p{k}"))).collect();
            let v = e.value_from(ty, &mut defs.into_iter());
            for p in a.ret.iter().enumerate() {
                ret.push((format!("{name}.r.p{}", p.0), p.1.loc));
            }
            format!("ret {} {v}", common::ir_type(ty))
        }
    };
    if a.convention == Convention::AmdgpuCg {
        // The lowered IR as a signature, assigned by the llvm convention.
        let lowered = Signature {
            params: ir_params
                .iter()
                .map(|(_, ty, inreg, _)| amdgpu_abi::Param { ty: ty.clone(), inreg: *inreg, is_self: false })
                .collect(),
            ret: ir_ret.clone(),
            uses: None,
        };
        let l = assign(&lowered, Convention::Llvm, a.target).unwrap();
        let flat: Vec<Location> = l.args.iter().flat_map(|x| x.pieces.iter().map(|p| p.loc)).collect();
        assert_eq!(flat.len(), pieces.len());
        for (x, loc) in pieces.iter_mut().zip(flat) {
            x.llvm = Some(loc);
        }
    }
    let rt = ir_ret.as_ref().map_or("void".to_string(), common::ir_type);
    let text = format!("define {rt} @{name}({}) {{\n{}  {ret_text}\n}}\n", params.join(", "), e.body);
    Probe { name: name.to_string(), text, pieces, ret }
}

/// A non-kernel caller of `@{callee}` whose every argument piece is a `; DEF`
/// marker; returns the IR and the expected caller-side location of every tag.
fn caller_probe(callee: &str, sig: &Signature, caller_view: &Assignment) -> (String, Vec<(String, Location)>) {
    let mut e = Emitter::new();
    let mut args = Vec::new();
    let mut expect = Vec::new();
    for arg in &caller_view.args {
        let xs: Vec<String> = (0..arg.pieces.len())
            .map(|k| {
                let tag = format!("c{callee}.a{}.p{k}", arg.index);
                expect.push((tag.clone(), arg.pieces[k].loc));
                e.def_i32(&tag)
            })
            .collect();
        let v = e.value_from(&arg.param.ty, &mut xs.into_iter());
        args.push(format!("{}{} {v}", common::ir_type(&arg.param.ty), if arg.param.inreg { " inreg" } else { "" }));
    }
    let rt = sig.ret.as_ref().map_or("void".to_string(), common::ir_type);
    let call = format!("call {rt} @{callee}({})", args.join(", "));
    let text = format!("define void @c{callee}() {{\n{}  {}\n  ret void\n}}\n", e.body, call);
    (text, expect)
}

/// Where the caller put each DEF-marked piece: register copies and stack stores.
fn caller_locations(f: &MirFunction) -> HashMap<String, Vec<Location>> {
    let mut at: HashMap<String, Vec<Location>> = HashMap::new();
    for (phys, v, lanes) in &f.phys_copies {
        let Some(loc) = location_of(f, &Source::Phys(phys.clone())) else { continue };
        for s in f.trace(*v, *lanes) {
            if let Source::Def(tag) = s {
                at.entry(tag).or_default().push(loc);
            }
        }
    }
    for &(v, bytes, offset) in &f.stores {
        let lanes = bytes.div_ceil(4);
        for k in 0..lanes {
            let sel = (lanes > 1).then_some((k, 1));
            for s in f.trace(v, sel) {
                if let Source::Def(tag) = s {
                    at.entry(tag).or_default().push(Location::Stack { offset: offset + 4 * k, size: bytes.min(4) });
                }
            }
        }
    }
    at
}

/// Same register, or same stack offset (the caller stores sub-dword values with
/// their own width, the callee's fixed object may be wider).
fn same_place(a: Location, b: Location) -> bool {
    match (a, b) {
        (Location::Stack { offset: x, .. }, Location::Stack { offset: y, .. }) => x == y,
        (a, b) => a == b,
    }
}

fn location_of(f: &MirFunction, s: &Source) -> Option<Location> {
    match s {
        Source::Phys(r) => {
            if let Some(n) = r.strip_prefix("vgpr") {
                n.parse().ok().map(Location::Vgpr)
            } else if let Some(n) = r.strip_prefix("sgpr") {
                n.parse().ok().map(Location::Sgpr)
            } else {
                None
            }
        }
        Source::Fixed { id, byte } => {
            let (off, size) = *f.fixed.get(id)?;
            Some(Location::Stack { offset: (off + i64::from(*byte)) as u32, size: if *byte == 0 { size } else { 4 } })
        }
        _ => None,
    }
}

fn run_llc(llc: &Path, gpu: Gpu, module: &str, tag: &str) -> String {
    let dir = std::env::temp_dir();
    let input = dir.join(format!("amdgpu-abi-{}-{tag}-{}.ll", std::process::id(), gpu.name()));
    std::fs::write(&input, module).unwrap();
    let out = Command::new(llc)
        .args(["-mtriple=amdgcn-amd-amdhsa", &format!("-mcpu={}", gpu.name()), "-stop-after=finalize-isel", "-o", "-"])
        .arg(&input)
        .output()
        .expect("run llc-22");
    if !out.status.success() {
        panic!("llc-22 failed on {}: {}", input.display(), String::from_utf8_lossy(&out.stderr));
    }
    if std::env::var_os("AMDGPU_ABI_KEEP").is_some() {
        std::fs::write(input.with_extension("mir"), &out.stdout).unwrap();
        eprintln!("kept {}", input.display());
    } else {
        let _ = std::fs::remove_file(&input);
    }
    String::from_utf8(out.stdout).unwrap()
}

/// Compares one function; returns mismatches and adds difference categories.
fn compare(p: &Probe, f: &MirFunction, conv: Convention, cats: &mut BTreeMap<&'static str, usize>) -> Vec<String> {
    let mut bad = Vec::new();
    let uses: HashMap<&str, u32> = f.uses.iter().map(|(t, v)| (t.as_str(), *v)).collect();
    let mut fallback = false;
    // VGPRs amdgpu-cg gives to non-inreg pieces (always v0..v(n-1)).
    let ours_v_used = p.pieces.iter().filter(|x| !x.inreg && matches!(x.ours, Location::Vgpr(_))).count() as u16;
    let mut llc_stack_slots = 0u32;
    for x in &p.pieces {
        let Some(&v) = uses.get(x.tag.as_str()) else {
            bad.push(format!("{}: marker missing in MIR", x.tag));
            continue;
        };
        let srcs = f.trace(v, None);
        let locs: Vec<Location> = srcs.iter().filter_map(|s| location_of(f, s)).collect();
        if locs.len() != 1 {
            bad.push(format!("{}: cannot locate (sources {:?})", x.tag, srcs));
            continue;
        }
        let llc = locs[0];
        let llc_stack_before = llc_stack_slots;
        if let Location::Stack { .. } = llc {
            llc_stack_slots += 1;
        }
        match conv {
            Convention::Llvm => {
                let same = match (x.ours, llc) {
                    (Location::Stack { offset: a, size: s }, Location::Stack { offset: b, size: t }) => {
                        a == b && s == t
                    }
                    (a, b) => a == b,
                };
                if same {
                    *cats.entry("same").or_default() += 1;
                } else {
                    bad.push(format!("{}: ours {} llc {}", x.tag, x.ours, llc));
                }
            }
            Convention::AmdgpuCg => {
                if x.llvm.is_some_and(|l| !same_place(l, llc)) {
                    bad.push(format!("{}: lowered IR: llvm convention {} llc {}", x.tag, x.llvm.unwrap(), llc));
                }
                let cat: Result<&'static str, ()> = if x.inreg {
                    match (x.ours, llc) {
                        (_, Location::Vgpr(_)) => {
                            fallback = true;
                            Ok("D5 LLVM inreg overflow into VGPRs")
                        }
                        (Location::Sgpr(a), Location::Sgpr(b)) if a == b => Ok("same"),
                        (Location::Sgpr(_), Location::Sgpr(_)) => Ok("D2 inreg SGPR numbering"),
                        (Location::Stack { .. }, _) => Ok("D6 inreg overflow to the stack"),
                        (Location::Sgpr(_), Location::Stack { .. }) => Ok("D3 stack layout"),
                        _ => Err(()),
                    }
                } else {
                    match (x.ours, llc) {
                        (a, b) if a == b => Ok("same"),
                        (Location::Vgpr(_), _) if fallback => Ok("D5 LLVM inreg overflow into VGPRs"),
                        // LLVM's first non-inreg stack slot (after any inreg pieces it put there).
                        (Location::Vgpr(31), Location::Stack { offset, .. }) if offset == 4 * llc_stack_before => {
                            Ok("D1 v31 is an argument register")
                        }
                        (Location::Stack { .. }, Location::Stack { .. }) => Ok("D3 stack layout"),
                        (Location::Stack { .. }, Location::Vgpr(n)) if n >= ours_v_used && !fallback => {
                            Ok("D4 whole-leaf overflow")
                        }
                        (Location::Stack { .. }, Location::Vgpr(_)) if fallback => {
                            Ok("D5 LLVM inreg overflow into VGPRs")
                        }
                        _ => Err(()),
                    }
                };
                match cat {
                    Ok(c) => *cats.entry(c).or_default() += 1,
                    Err(()) => bad.push(format!("{}: ours {} llc {} (not an intended difference)", x.tag, x.ours, llc)),
                }
            }
        }
    }
    // Results: `$vgprN = COPY` lines traced back to DEF markers.
    let mut ret_at: HashMap<String, Location> = HashMap::new();
    for (phys, v, lanes) in &f.phys_copies {
        let Some(loc) = location_of(f, &Source::Phys(phys.clone())) else { continue };
        for s in f.trace(*v, *lanes) {
            if let Source::Def(tag) = s {
                ret_at.insert(tag, loc);
            }
        }
    }
    for (tag, ours) in &p.ret {
        match ret_at.get(tag) {
            Some(l) if l == ours => *cats.entry("same (result)").or_default() += 1,
            other => bad.push(format!("{tag}: result ours {ours} llc {other:?}")),
        }
    }
    if p.ret.is_empty() && !f.phys_copies.is_empty() && conv == Convention::AmdgpuCg {
        bad.push(format!("{}: llc returns registers where we return nothing", p.name));
    }
    bad
}

#[test]
fn llc22_differential() {
    let Some(llc) = amdgpu_isa::llvm_tools::require("llc-22") else { return };
    let n = common::cases("AMDGPU_ABI_LLC_CASES", 120) as usize;
    let mut runner = TestRunner::deterministic();
    let strategy = common::signature(80);
    let sigs: Vec<Signature> = (0..n)
        .map(|_| {
            let mut s = strategy.new_tree(&mut runner).unwrap().current();
            s.uses = None;
            s
        })
        .chain(fixed_signatures())
        .collect();
    let mut failures = Vec::new();
    let mut summary = Vec::new();
    // AMDGPU_ABI_LLC_ONLY=llvm:gfx942 restricts the run (debugging).
    let only = std::env::var("AMDGPU_ABI_LLC_ONLY").ok();
    for conv in Convention::ALL {
        for gpu in Gpu::ALL {
            if only.as_ref().is_some_and(|o| *o != format!("{conv}:{gpu}")) {
                continue;
            }
            let target = Target::new(gpu);
            let mut module = String::from("target triple = \"amdgcn-amd-amdhsa\"\n\n");
            let mut probes = Vec::new();
            let mut callers = Vec::new();
            for (i, sig) in sigs.iter().enumerate() {
                let a = assign(sig, conv, target).unwrap();
                let p = probe(&format!("f{i}"), sig, &a);
                module.push_str(&p.text);
                probes.push(p);
                if conv == Convention::Llvm {
                    let view = amdgpu_abi::conv::assign_llvm22_caller(sig, target).unwrap();
                    let (text, expect) = caller_probe(&format!("f{i}"), sig, &view);
                    module.push_str(&text);
                    callers.push((format!("cf{i}"), expect, view != a));
                }
            }
            let out = run_llc(&llc, gpu, &module, conv.name());
            let funcs: HashMap<String, MirFunction> =
                mir::parse(&out).into_iter().map(|f| (f.name.clone(), f)).collect();
            let mut cats = BTreeMap::new();
            for (p, sig) in probes.iter().zip(&sigs) {
                let f = funcs.get(&p.name).expect("function in MIR");
                for b in compare(p, f, conv, &mut cats) {
                    failures.push(format!("[{conv} {gpu}] {}: {sig}: {b}", p.name));
                }
            }
            // Caller side (llvm): every piece where the LLVM 22 caller view says.
            let (mut caller_pieces, mut bug_sigs) = (0, 0);
            for ((name, expect, differs), sig) in callers.iter().zip(&sigs) {
                let f = funcs.get(name).expect("caller in MIR");
                let at = caller_locations(f);
                for (tag, want) in expect {
                    match at.get(tag).map(Vec::as_slice) {
                        Some([got]) if same_place(*got, *want) => caller_pieces += 1,
                        other => failures.push(format!(
                            "[{conv} {gpu}] {name}: {sig}: caller {tag}: expected {want}, llc {other:?}"
                        )),
                    }
                }
                bug_sigs += usize::from(*differs);
            }
            if conv == Convention::Llvm {
                cats.insert("caller pieces same", caller_pieces);
                cats.insert("signatures where the LLVM 22 caller differs from the callee (inreg bug)", bug_sigs);
            }
            summary.push(format!("{conv:9} {gpu:7}: {} signatures compared; pieces {cats:?}", probes.len()));
        }
    }
    for s in &summary {
        eprintln!("llc22_differential {s}");
    }
    if !failures.is_empty() {
        for f in failures.iter().take(25) {
            eprintln!("{}", if f.len() > 400 { format!("{}...{}", &f[..150], &f[f.len() - 120..]) } else { f.clone() });
        }
        panic!("{} disagreements with llc-22", failures.len());
    }
}

/// Hand-picked signatures that exercise each boundary (always compared).
fn fixed_signatures() -> Vec<Signature> {
    [
        "fn(i32, f64, inreg i64, {i32, f32, i64}) -> f32",
        "fn(<31 x i32>)",
        "fn({<4 x i32>, <4 x i32>, <4 x i32>, <4 x i32>, <4 x i32>, <4 x i32>, <4 x i32>, <3 x i32>}, i32, i64, i32)",
        "fn({<4 x i32>, <4 x i32>, <4 x i32>, <4 x i32>, <4 x i32>, <4 x i32>, <4 x i32>, <2 x i32>}, i64, i8, f16, <3 x f16>, <3 x i8>, ptr<local>)",
        "fn(inreg i32, inreg i32, inreg i32, inreg i32, inreg i32, inreg i32, inreg i32, inreg i32, inreg i32, inreg i32, inreg i32, inreg i32, inreg i32, inreg i32, inreg i32, inreg i32, inreg i32, inreg i32, i32)",
        "fn({i32, i32, i32, i32, i32}) -> {i64, i64, i64}",
        "fn(self ptr<global>, {i8, {i16, f64}, <2 x f32>}, <4 x f16>) -> {i32, <3 x f16>}",
        "fn(i1, i8, i16, f16, <2 x i16>, <4 x i8>) -> i1",
        "fn() -> {<4 x i64>, <4 x i64>, <4 x i64>, <4 x i64>, <4 x i64>}",
    ]
    .iter()
    .map(|s| s.replace("<31 x i32>", &["i32"; 31].join(", ")))
    .map(|s| Signature::parse(&s).unwrap_or_else(|e| panic!("{s}: {e}")))
    .collect()
}

/// LLVM 22.1.8 bug (llvm-project PR 182754): on buffer-scratch targets (gfx90a)
/// the caller puts inreg arguments in s0.. while the callee reads them from s16..
/// We follow the callee. This test fails when llc-22 gets the fix, so that the
/// `llvm` convention and docs/abi.md are revisited.
#[test]
fn llvm22_inreg_caller_callee_disagreement() {
    let Some(llc) = amdgpu_isa::llvm_tools::require("llc-22") else { return };
    let module = r#"target triple = "amdgcn-amd-amdhsa"
declare void @ext(i32 inreg, i64 inreg)
define void @caller() {
  call void @ext(i32 inreg 11, i64 inreg 12884901890)
  ret void
}
define void @callee(i32 inreg %a, i64 inreg %b) {
  call void asm sideeffect "; USE a $0", "v"(i32 %a)
  ret void
}
"#;
    let sig = Signature::parse("fn(inreg i32, inreg i64)").unwrap();
    for gpu in Gpu::ALL {
        let out = run_llc(&llc, gpu, module, "inreg-bug");
        let funcs = mir::parse(&out);
        let callee = funcs.iter().find(|f| f.name == "callee").unwrap();
        let caller = funcs.iter().find(|f| f.name == "caller").unwrap();
        let (_, v) = callee.uses.iter().find(|(t, _)| t == "a").unwrap();
        let callee_loc = callee.trace(*v, None).iter().find_map(|s| location_of(callee, s)).unwrap();
        let caller_loc = caller
            .phys_copies
            .iter()
            .find(|(_, v, l)| caller.trace(*v, *l).contains(&Source::Imm(11)))
            .and_then(|(p, _, _)| location_of(caller, &Source::Phys(p.clone())))
            .expect("caller's register for the first inreg argument");
        let ours = assign(&sig, Convention::Llvm, Target::new(gpu)).unwrap().args[0].pieces[0].loc;
        assert_eq!(ours, callee_loc, "{gpu}: the llvm convention follows the callee side");
        if gpu.has_architected_flat_scratch() {
            assert_eq!(caller_loc, callee_loc, "{gpu}: caller and callee agree on flat-scratch targets");
        } else {
            assert_eq!(callee_loc, Location::Sgpr(16), "{gpu}: callee reads s16");
            assert_eq!(
                caller_loc,
                Location::Sgpr(0),
                "{gpu}: llc-22 no longer writes the first inreg argument to s0: the upstream fix \
                 (llvm-project PR 182754) has arrived; update docs/abi.md and this test"
            );
        }
    }
}
