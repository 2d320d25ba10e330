//! Calls across compilers through the `llvm` convention (issue 8, item 7), run
//! on the simulator and compared with the MIR interpreter:
//! - (a) our kernel calls `@mix` and `@scale` compiled by llc-22 from LLVM IR
//!   (our relocatable object leaves them undefined; ld.lld-22 -shared links);
//! - (b) a kernel compiled by llc-22 calls `@mix` compiled by us with
//!   `callconv(llvm)`.
//!
//! `@mix` has 38 VGPR argument pieces (an i64, a 24-byte struct LLVM
//! decomposes, 28 i32s): the last ones are on the stack in LLVM's 4-byte slots;
//! it reads the work-item id (v31 in LLVM's convention). `@scale` takes an
//! `inreg` argument; only direction (a) passes one: an LLVM 22 caller on
//! gfx90a puts inreg arguments where the callee does not read them
//! (docs/abi.md section 5), so (b) has none.

use std::fmt::Write;
use std::path::Path;
use std::process::Command;

use amdgpu_cg::codegen::{self, Options, Report};
use amdgpu_cg::codeobj::{self, CodeObjectTarget, CodeObjectVersion};
use amdgpu_cg::isa::{llvm_tools, Generation, WaveSize};
use amdgpu_cg::mir::{self, launch::LaunchSpec};

const EXTRA: usize = 28;

/// The MIR module: `@mix`, `@scale` (both `callconv(llvm)`) and the kernel.
fn mir_module(with_scale: bool) -> String {
    let xs: Vec<String> = (0..EXTRA).map(|j| format!("%x{j}: i32")).collect();
    let mut t = format!("func @mix(%a: i32, %b: f32, %c: i64, %s: {{i32, f32, i64, f64}}, {}) -> i32 callconv(llvm) {{\nentry:\n", xs.join(", "));
    t.push_str("  %lid = workitem_id x\n  %bi = fptosi f32 %b to i32\n  %cl = trunc i64 %c to i32\n  %ch64 = lshr i64 %c, 32\n  %ch = trunc i64 %ch64 to i32\n");
    t.push_str("  %s0 = extract %s, 0\n  %s1f = extract %s, 1\n  %s1 = fptosi f32 %s1f to i32\n  %s2l = extract %s, 2\n  %s2 = trunc i64 %s2l to i32\n  %s3f = extract %s, 3\n  %s3 = fptosi f64 %s3f to i32\n");
    t.push_str("  %t1 = add i32 %a, %bi\n  %t2 = add i32 %t1, %cl\n  %t3 = add i32 %t2, %ch\n  %t4 = add i32 %t3, %s0\n  %t5 = add i32 %t4, %s1\n  %t6 = add i32 %t5, %s2\n  %acc0 = add i32 %t6, %s3\n");
    for j in 0..EXTRA {
        writeln!(t, "  %m{j} = mul i32 %acc{j}, 3\n  %acc{} = add i32 %m{j}, %x{j}", j + 1).unwrap();
    }
    writeln!(t, "  %l1000 = mul i32 %lid, 1000\n  %r = add i32 %acc{EXTRA}, %l1000\n  ret %r\n}}\n").unwrap();
    t.push_str("func @scale(%k: inreg i32, %x: i32) -> i32 callconv(llvm) {\nentry:\n  %p = mul i32 %x, %k\n  %q = add i32 %p, 7\n  ret %q\n}\n\n");
    t.push_str("kernel @k(%in: ptr<global>, %out: ptr<global>, %u: i32) {\nentry:\n  %lid = workitem_id x\n  %gid = workgroup_id x\n  %base = mul i32 %gid, 64\n  %i = add i32 %base, %lid\n");
    t.push_str("  %off = mul i32 %i, 4\n  %src = ptradd %in, %off\n  %x = load i32 %src\n  %xf = sitofp i32 %x to f32\n  %b = fmul f32 %xf, 0.5\n  %xw = sext i32 %x to i64\n  %c = mul i64 %xw, 4294967297\n");
    t.push_str("  %s0 = add i32 %x, 1\n  %s2 = shl i64 %xw, 20\n  %s3 = sitofp i32 %x to f64\n  %s = make {i32, f32, i64, f64} %s0, %xf, %s2, %s3\n");
    let mut args = vec!["%x".to_string(), "%b".into(), "%c".into(), "%s".into()];
    for j in 0..EXTRA {
        writeln!(t, "  %e{j} = add i32 %x, {}", j + 2).unwrap();
        args.push(format!("%e{j}"));
    }
    writeln!(t, "  %r = call @mix({})", args.join(", ")).unwrap();
    if with_scale {
        t.push_str("  %q = call @scale(%u, %r)\n");
    } else {
        t.push_str("  %q = add i32 %r, 0\n");
    }
    t.push_str("  %dst = ptradd %out, %off\n  store i32 %q, %dst\n  ret\n}\n");
    t
}

const IR_HEADER: &str = "target triple = \"amdgcn-amd-amdhsa\"\ndeclare i32 @llvm.amdgcn.workitem.id.x()\ndeclare i32 @llvm.amdgcn.workgroup.id.x()\n";

fn mix_params() -> String {
    let xs: Vec<String> = (0..EXTRA).map(|j| format!("i32 %x{j}")).collect();
    format!("i32 %a, float %b, i64 %c, {{i32, float, i64, double}} %s, {}", xs.join(", "))
}

/// `@mix` and `@scale` in LLVM IR, the same computations as the MIR bodies.
fn ir_functions() -> String {
    let mut t = String::from(IR_HEADER);
    writeln!(t, "define hidden i32 @mix({}) {{", mix_params()).unwrap();
    t.push_str("  %lid = call i32 @llvm.amdgcn.workitem.id.x()\n  %bi = fptosi float %b to i32\n  %cl = trunc i64 %c to i32\n  %ch64 = lshr i64 %c, 32\n  %ch = trunc i64 %ch64 to i32\n");
    t.push_str("  %s0 = extractvalue {i32, float, i64, double} %s, 0\n  %s1f = extractvalue {i32, float, i64, double} %s, 1\n  %s1 = fptosi float %s1f to i32\n");
    t.push_str("  %s2l = extractvalue {i32, float, i64, double} %s, 2\n  %s2 = trunc i64 %s2l to i32\n  %s3f = extractvalue {i32, float, i64, double} %s, 3\n  %s3 = fptosi double %s3f to i32\n");
    t.push_str("  %t1 = add i32 %a, %bi\n  %t2 = add i32 %t1, %cl\n  %t3 = add i32 %t2, %ch\n  %t4 = add i32 %t3, %s0\n  %t5 = add i32 %t4, %s1\n  %t6 = add i32 %t5, %s2\n  %acc0 = add i32 %t6, %s3\n");
    for j in 0..EXTRA {
        writeln!(t, "  %m{j} = mul i32 %acc{j}, 3\n  %acc{} = add i32 %m{j}, %x{j}", j + 1).unwrap();
    }
    writeln!(t, "  %l1000 = mul i32 %lid, 1000\n  %r = add i32 %acc{EXTRA}, %l1000\n  ret i32 %r\n}}").unwrap();
    t.push_str("define hidden i32 @scale(i32 inreg %k, i32 %x) {\n  %p = mul i32 %x, %k\n  %q = add i32 %p, 7\n  ret i32 %q\n}\n");
    t
}

/// The kernel of direction (b) in LLVM IR, calling our `@mix`.
fn ir_kernel() -> String {
    let mut t = String::from(IR_HEADER);
    writeln!(t, "declare hidden i32 @mix({})", mix_params()).unwrap();
    t.push_str("define amdgpu_kernel void @k(ptr addrspace(1) %in, ptr addrspace(1) %out, i32 %u) {\n");
    t.push_str("  %lid = call i32 @llvm.amdgcn.workitem.id.x()\n  %gid = call i32 @llvm.amdgcn.workgroup.id.x()\n  %base = mul i32 %gid, 64\n  %i = add i32 %base, %lid\n");
    t.push_str("  %src = getelementptr i32, ptr addrspace(1) %in, i32 %i\n  %x = load i32, ptr addrspace(1) %src\n  %xf = sitofp i32 %x to float\n  %b = fmul float %xf, 0.5\n");
    t.push_str("  %xw = sext i32 %x to i64\n  %c = mul i64 %xw, 4294967297\n  %s0 = add i32 %x, 1\n  %s2 = shl i64 %xw, 20\n  %s3 = sitofp i32 %x to double\n");
    t.push_str("  %sa = insertvalue {i32, float, i64, double} poison, i32 %s0, 0\n  %sb = insertvalue {i32, float, i64, double} %sa, float %xf, 1\n");
    t.push_str("  %sc = insertvalue {i32, float, i64, double} %sb, i64 %s2, 2\n  %s = insertvalue {i32, float, i64, double} %sc, double %s3, 3\n");
    let mut args = vec!["i32 %x".to_string(), "float %b".into(), "i64 %c".into(), "{i32, float, i64, double} %s".into()];
    for j in 0..EXTRA {
        writeln!(t, "  %e{j} = add i32 %x, {}", j + 2).unwrap();
        args.push(format!("i32 %e{j}"));
    }
    writeln!(t, "  %r = call i32 @mix({})", args.join(", ")).unwrap();
    t.push_str("  %dst = getelementptr i32, ptr addrspace(1) %out, i32 %i\n  store i32 %r, ptr addrspace(1) %dst\n  ret void\n}\n");
    t
}

fn llc(tool: &Path, target: &CodeObjectTarget, ir: &str, path: &Path) {
    let src = path.with_extension("ll");
    std::fs::write(&src, ir).unwrap();
    let mut cmd = Command::new(tool);
    cmd.args(["-O2", "-filetype=obj", "--amdhsa-code-object-version=5", &format!("-mcpu={}", target.target.gpu.name())]);
    if target.target.wave == WaveSize::W64 && target.target.gpu.generation() == Generation::Gfx11 {
        cmd.arg("-mattr=+wavefrontsize64");
    }
    let out = cmd.arg(&src).arg("-o").arg(path).output().unwrap();
    assert!(out.status.success(), "llc-22 on {}: {}", target.isa_name(), String::from_utf8_lossy(&out.stderr));
}

fn link(tool: &Path, objects: &[&Path], out: &Path) -> Vec<u8> {
    let o = Command::new(tool).arg("-shared").args(objects).arg("-o").arg(out).output().unwrap();
    assert!(o.status.success() && o.stderr.is_empty(), "ld.lld-22: {}", String::from_utf8_lossy(&o.stderr));
    std::fs::read(out).unwrap()
}

#[test]
fn calls_between_our_code_and_llc_code_run_correctly() {
    let Some(llc_tool) = llvm_tools::require("llc-22") else { return };
    let Some(lld) = llvm_tools::require("ld.lld-22") else { return };
    let dir = std::env::temp_dir().join(format!("amdgpu-cg-interop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let flags = |u: &str| {
        LaunchSpec::from_flags("128", "64", &["in=i32:iota:128".into(), "out=i32:zero:128".into()], &["arg0=@in".into(), "arg1=@out".into(), format!("arg2={u}")], &[]).unwrap()
    };
    let named = LaunchSpec::from_flags("128", "64", &["in=i32:iota:128".into(), "out=i32:zero:128".into()], &["in=@in".into(), "out=@out".into(), "u=-3".into()], &[]).unwrap();
    let out = |b: &[mir::launch::BufferOutput]| b.iter().find(|b| b.name == "out").unwrap().elements();
    let mut runs = 0;
    for (config, target) in CodeObjectTarget::all_configurations().into_iter().enumerate() {
        let what = target.isa_name();
        // (a) our kernel, LLVM's functions.
        let module = mir::parse(&mir_module(true)).unwrap();
        mir::verify::verify(&module).unwrap();
        let want = mir::launch::run(&module, &named).unwrap();
        let options = Options { external: vec!["mix".into(), "scale".into()], ..Options::default() };
        let (object, _) = codegen::compile_module(&module, &target, CodeObjectVersion::V5, &options, &mut Report::default()).unwrap_or_else(|d| panic!("(a) on {what}: {d}"));
        let ours = dir.join(format!("a-ours-{config}.o"));
        std::fs::write(&ours, codeobj::write_relocatable(&object).unwrap()).unwrap();
        let theirs = dir.join(format!("a-llc-{config}.o"));
        llc(&llc_tool, &target, &ir_functions(), &theirs);
        let hsaco = link(&lld, &[&ours, &theirs], &dir.join(format!("a-{config}.hsaco")));
        let (got, _) = amdgpu_cg::sim::run_launch(&hsaco, &flags("-3")).unwrap_or_else(|e| panic!("(a) on {what}: simulator: {e}"));
        assert_eq!(out(&got), out(&want.buffers), "(a) our kernel calling llc-22's functions on {what}");
        runs += 1;

        // (b) LLVM's kernel, our function.
        let module = mir::parse(&mir_module(false)).unwrap();
        let want = mir::launch::run(&module, &named).unwrap();
        let functions_only = mir::parse(&mir_module(false).split("kernel @k").next().unwrap()).unwrap();
        let (object, _) = codegen::compile_module(&functions_only, &target, CodeObjectVersion::V5, &Options::default(), &mut Report::default())
            .unwrap_or_else(|d| panic!("(b) on {what}: {d}"));
        let ours = dir.join(format!("b-ours-{config}.o"));
        std::fs::write(&ours, codeobj::write_relocatable(&object).unwrap()).unwrap();
        let theirs = dir.join(format!("b-llc-{config}.o"));
        llc(&llc_tool, &target, &ir_kernel(), &theirs);
        let hsaco = link(&lld, &[&theirs, &ours], &dir.join(format!("b-{config}.hsaco")));
        let (got, _) = amdgpu_cg::sim::run_launch(&hsaco, &flags("-3")).unwrap_or_else(|e| panic!("(b) on {what}: simulator: {e}"));
        assert_eq!(out(&got), out(&want.buffers), "(b) llc-22's kernel calling our function on {what}");
        runs += 1;
    }
    assert_eq!(runs, 8);
}
