//! The memory model against llc-22 (docs/mir.md, "Memory model"): for every
//! target, ordering and scope, a MIR fence, atomic and volatile access and the
//! same LLVM IR compiled by llc-22 -O2 use the same cache write-backs and
//! invalidations in the same order, and the same cache bits on the memory
//! instruction itself. Waits are not compared: ours are at least LLVM's (a
//! release waits for every earlier access, an acquire for every one before
//! the invalidate), which the second test checks.

use std::path::Path;
use std::process::Command;

use amdgpu_cg::codegen::{self, Options, Report};
use amdgpu_cg::codeobj::{CodeObjectTarget, CodeObjectVersion};
use amdgpu_cg::isa::llvm_tools;
use amdgpu_cg::mir;

const ORDERS: [(&str, &str); 4] = [("acquire", "acquire"), ("release", "release"), ("acq_rel", "acq_rel"), ("seq_cst", "seq_cst")];
const SCOPES: [(&str, &str); 4] = [("wavefront", "syncscope(\"wavefront\") "), ("workgroup", "syncscope(\"workgroup\") "), ("agent", "syncscope(\"agent\") "), ("system", "")];

/// The cache-maintenance instructions and the cache bits of memory
/// instructions in a listing, in order (`buffer_inv sc1`, `global_atomic_add sc0`).
fn memory_shape(listing: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in listing.lines() {
        let line = line.trim();
        let Some(op) = line.split_whitespace().next() else { continue };
        let cache_op = op.starts_with("buffer_") && ["wbl2", "inv", "wbinvl1"].iter().any(|k| op.contains(k)) || op.starts_with("buffer_gl");
        let memory = op.starts_with("global_") || op.starts_with("flat_");
        if cache_op || memory {
            // The mnemonic's family and the cache bits (registers differ).
            let bits: Vec<&str> = line.split_whitespace().filter(|w| matches!(*w, "glc" | "slc" | "dlc" | "sc0" | "sc1" | "nt")).collect();
            let family = if memory { op.split('_').take(2).collect::<Vec<_>>().join("_") } else { op.to_string() };
            out.push(format!("{family} {}", bits.join(" ")).trim().to_string());
        }
    }
    out
}

fn ours(target: &CodeObjectTarget, body: &str) -> String {
    let text = format!("kernel @k(%p: ptr<global>, %v: i32, %f: ptr) {{\nentry:\n{body}  ret\n}}\n");
    let module = mir::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    mir::verify::verify(&module).unwrap();
    let (_, kernels) = codegen::compile_module(&module, target, CodeObjectVersion::V5, &Options::default(), &mut Report::default()).unwrap();
    kernels.into_iter().find(|k| k.is_kernel).unwrap().asm
}

fn theirs(llc: &Path, dir: &Path, target: &CodeObjectTarget, body: &str) -> String {
    // `!0`: the atomics through the generic pointer %f never reach private
    // memory, as clang marks OpenCL's and HIP's (MIR's flat atomics reach
    // global memory or LDS).
    let ir = format!("define amdgpu_kernel void @k(ptr addrspace(1) %p, i32 %v, ptr %f) {{\n{body}  ret void\n}}\n!0 = !{{i32 5, i32 6}}\n");
    let path = dir.join(format!("{}.ll", target.isa_name().replace([':', '-'], "_")));
    std::fs::write(&path, &ir).unwrap();
    let o = Command::new(llc).args(["-mtriple=amdgcn-amd-amdhsa", "-O2", &format!("-mcpu={}", target.target.gpu.name())]).arg(&path).args(["-o", "-"]).output().unwrap();
    assert!(o.status.success(), "llc-22: {}\n{ir}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    // The kernel's body only (not the metadata).
    text.lines().skip_while(|l| !l.starts_with("k:")).take_while(|l| !l.contains("s_endpgm")).collect::<Vec<_>>().join("\n")
}

/// (MIR body, LLVM IR body) pairs for every ordering and scope.
fn cases() -> Vec<(String, String, String)> {
    let mut cases = Vec::new();
    for (order, ir_order) in ORDERS {
        for (scope, ir_scope) in SCOPES {
            cases.push((format!("fence {order} {scope}"), format!("  fence {order} {scope}\n"), format!("  fence {ir_scope}{ir_order}\n")));
            // Loads cannot release and stores cannot acquire; rmw does both.
            cases.push((
                format!("atomic add {order} {scope}"),
                format!("  %r = atomic add i32 %p, %v {order} {scope}\n  store i32 %r, %p\n"),
                format!("  %r = atomicrmw add ptr addrspace(1) %p, i32 %v {ir_scope}{ir_order}\n  store i32 %r, ptr addrspace(1) %p\n"),
            ));
            // The same through a generic pointer (a FLAT atomic).
            cases.push((
                format!("flat atomic add {order} {scope}"),
                format!("  %r = atomic add i32 %f, %v {order} {scope}\n  store i32 %r, %p\n"),
                format!("  %r = atomicrmw add ptr %f, i32 %v {ir_scope}{ir_order}, !noalias.addrspace !0\n  store i32 %r, ptr addrspace(1) %p\n"),
            ));
        }
    }
    for scope in ["agent", "system"] {
        let ir_scope = if scope == "agent" { "syncscope(\"agent\") " } else { "" };
        cases.push((
            format!("cmpxchg seq_cst {scope}"),
            format!("  %r = cmpxchg i32 %p, 0, %v seq_cst {scope}\n  store i32 %r, %p\n"),
            format!("  %x = cmpxchg ptr addrspace(1) %p, i32 0, i32 %v {ir_scope}seq_cst seq_cst\n  %r = extractvalue {{i32, i1}} %x, 0\n  store i32 %r, ptr addrspace(1) %p\n"),
        ));
        cases.push((
            format!("flat cmpxchg seq_cst {scope}"),
            format!("  %r = cmpxchg i32 %f, 0, %v seq_cst {scope}\n  store i32 %r, %p\n"),
            format!("  %x = cmpxchg ptr %f, i32 0, i32 %v {ir_scope}seq_cst seq_cst, !noalias.addrspace !0\n  %r = extractvalue {{i32, i1}} %x, 0\n  store i32 %r, ptr addrspace(1) %p\n"),
        ));
    }
    cases.push((
        "volatile".into(),
        "  %x = load volatile i32 %p\n  %y = add i32 %x, %v\n  store volatile i32 %y, %p\n".into(),
        "  %x = load volatile i32, ptr addrspace(1) %p\n  %y = add i32 %x, %v\n  store volatile i32 %y, ptr addrspace(1) %p\n".into(),
    ));
    cases
}

#[test]
fn cache_maintenance_matches_llc() {
    let Some(llc) = llvm_tools::require("llc-22") else { return };
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("memory_model");
    std::fs::create_dir_all(&dir).unwrap();
    let mut failures = Vec::new();
    let mut with_cache_ops = 0;
    for target in CodeObjectTarget::all_configurations().into_iter().filter(|t| t.target.wave.lanes() == 64 || t.target.gpu.name() == "gfx1100") {
        for (name, mir_body, ir_body) in cases() {
            let (a, b) = (memory_shape(&ours(&target, &mir_body)), memory_shape(&theirs(&llc, &dir, &target, &ir_body)));
            with_cache_ops += usize::from(b.iter().any(|i| i.starts_with("buffer_")));
            if a != b {
                failures.push(format!("{} {name}: ours {a:?}, llc-22 {b:?}", target.isa_name()));
            }
        }
    }
    assert!(failures.is_empty(), "{} differences:\n{}", failures.len(), failures.join("\n"));
    // Most cases need cache maintenance somewhere: the comparison is not of empty lists.
    assert!(with_cache_ops > 40, "only {with_cache_ops} cases with cache operations");
}

#[test]
fn releases_wait_for_earlier_accesses_and_acquires_before_invalidating() {
    for target in CodeObjectTarget::all_configurations() {
        // A store, then a release fence at agent scope, then an acquire one.
        let asm = ours(&target, "  store i32 %v, %p\n  fence release agent\n  %x = load i32 %p\n  fence acquire agent\n  %y = load i32 %p\n  %z = add i32 %x, %y\n  store i32 %z, %p\n");
        let lines: Vec<&str> = asm.lines().map(str::trim).collect();
        let pos = |pred: &dyn Fn(&str) -> bool, from: usize| lines.iter().skip(from).position(|l| pred(l)).map(|p| p + from);
        let store = pos(&|l| l.starts_with("global_store"), 0).expect("the first store");
        let load = pos(&|l| l.starts_with("global_load"), store).expect("the load after the release");
        let full_wait = |l: &str| l.starts_with("s_waitcnt") && l.contains("vmcnt(0)");
        // The store's completion: vmcnt before gfx10, vscnt on gfx11 (where
        // a vmcnt wait with no load outstanding is left out, as llc-22's
        // waitcnt pass relaxes the memory legalizer's soft waits).
        let store_wait = |l: &str| full_wait(l) || l.starts_with("s_waitcnt_vscnt null, 0x0");
        assert!(pos(&store_wait, store).is_some_and(|w| w < load), "{}: no wait between the store and the load across the release\n{asm}", target.isa_name());
        let second = pos(&|l| l.starts_with("global_load"), load + 1).expect("the load after the acquire");
        let wait = pos(&full_wait, load).expect("a wait after the acquire");
        assert!(wait < second, "{}: the acquire does not wait before the next load\n{asm}", target.isa_name());
    }
}
