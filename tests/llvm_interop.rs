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
    let mut t = format!("func @mix(%a: i32, %b: f32, %c: i64, %s: {{i32, f32, i64, f64}}, {}) -> i32 callconv(llvm) noinline {{\nentry:\n", xs.join(", "));
    t.push_str("  %lid = workitem_id x\n  %bi = fptosi f32 %b to i32\n  %cl = trunc i64 %c to i32\n  %ch64 = lshr i64 %c, 32\n  %ch = trunc i64 %ch64 to i32\n");
    t.push_str("  %s0 = extract %s, 0\n  %s1f = extract %s, 1\n  %s1 = fptosi f32 %s1f to i32\n  %s2l = extract %s, 2\n  %s2 = trunc i64 %s2l to i32\n  %s3f = extract %s, 3\n  %s3 = fptosi f64 %s3f to i32\n");
    t.push_str("  %t1 = add i32 %a, %bi\n  %t2 = add i32 %t1, %cl\n  %t3 = add i32 %t2, %ch\n  %t4 = add i32 %t3, %s0\n  %t5 = add i32 %t4, %s1\n  %t6 = add i32 %t5, %s2\n  %acc0 = add i32 %t6, %s3\n");
    for j in 0..EXTRA {
        writeln!(t, "  %m{j} = mul i32 %acc{j}, 3\n  %acc{} = add i32 %m{j}, %x{j}", j + 1).unwrap();
    }
    writeln!(t, "  %l1000 = mul i32 %lid, 1000\n  %r = add i32 %acc{EXTRA}, %l1000\n  ret %r\n}}\n").unwrap();
    t.push_str("func @scale(%k: inreg i32, %x: i32) -> i32 callconv(llvm) noinline {\nentry:\n  %p = mul i32 %x, %k\n  %q = add i32 %p, 7\n  ret %q\n}\n\n");
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

/// `llc-22 -O2` to an object; `extra` are further llc options.
fn llc(tool: &Path, target: &CodeObjectTarget, ir: &str, path: &Path, extra: &[&str]) {
    let src = path.with_extension("ll");
    std::fs::write(&src, ir).unwrap();
    let mut cmd = Command::new(tool);
    cmd.args(["-O2", "-filetype=obj", "--amdhsa-code-object-version=5", &format!("-mcpu={}", target.target.gpu.name())]).args(extra);
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
        llc(&llc_tool, &target, &ir_functions(), &theirs, &[]);
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
        llc(&llc_tool, &target, &ir_kernel(), &theirs, &[]);
        let hsaco = link(&lld, &[&theirs, &ours], &dir.join(format!("b-{config}.hsaco")));
        let (got, _) = amdgpu_cg::sim::run_launch(&hsaco, &flags("-3")).unwrap_or_else(|e| panic!("(b) on {what}: simulator: {e}"));
        assert_eq!(out(&got), out(&want.buffers), "(b) llc-22's kernel calling our function on {what}");
        runs += 1;
    }
    assert_eq!(runs, 8);
}

// Vectors of 16-bit elements (two to a register, element 2k in the low half)
// and of 8-bit elements (one to a register) across the compiler boundary, both
// directions, as arguments in registers, split between v30 and the stack, on
// the stack, and as results. The arithmetic is written once in MIR syntax and
// shared with the LLVM IR (only `f16` is spelled `half` there), so the two
// sides compute the same thing by construction; only the glue (element
// extraction, vector building, calls) is written twice.

/// `@pack`'s vector parameters: name, element type, element count.
const PACK_VECTORS: [(&str, &str, usize); 4] = [("a", "i16", 2), ("b", "i16", 3), ("c", "i8", 4), ("d", "f16", 2)];
/// `@pack_late` takes this many i32s first: `%a` in v29, `%b` straddles v30 and
/// LLVM's first stack slot, `%c` (2-byte objects in 4-byte slots), `%d` and
/// `%e` are on the stack.
const LATE_PAD: usize = 29;
/// `@unpack`'s result: every new type that fits in a result (7 VGPRs).
const UNPACK_RESULT: &str = "{<3 x i16>, <4 x i8>, <2 x f16>}";
/// llc options for the vector code, for what the simulator lacks: SDWA
/// (docs/simulator.md, "What is not modelled"), which llc's peephole uses to
/// read the high half of a packed register in place, and gfx11's true16
/// instructions (`v_mov_b16 v0.l, v1.h`, docs/isa.md "Not covered yet"), for
/// which llc shifts and masks instead, reading the same ABI registers. (VOPD
/// stays on: llc's pairs whose X half reads the Y half's destination, like
/// `v_dual_mov_b32 v41, v0 :: v_dual_mov_b32 v0, v110`, run as the hardware
/// runs them, both halves reading before either writes.)
const LLC_FOR_THE_SIMULATOR: &[&str] = &["-amdgpu-sdwa-peephole=0", "-mattr=-real-true16"];
/// Words the vector kernel stores per work-item (see `VECTOR_KERNEL_WORDS`).
const VECTOR_WORDS: usize = 7;

/// MIR's `f16` as LLVM spells it (no value name contains it).
fn ir_types(mir: &str) -> String {
    mir.replace("f16", "half")
}

/// `%{v}0`, `%{v}1`, ... extracted from the vector `%{v}` of `n` `elem`s.
fn extract_elements(ir: bool, v: &str, elem: &str, n: usize) -> String {
    let mut t = String::new();
    for k in 0..n {
        if ir {
            writeln!(t, "  %{v}{k} = extractelement <{n} x {}> %{v}, i32 {k}", ir_types(elem)).unwrap();
        } else {
            writeln!(t, "  %{v}{k} = extract %{v}, {k}").unwrap();
        }
    }
    t
}

/// `%{v}` built from the scalars `parts` (all of type `elem`).
fn build_vector(ir: bool, v: &str, elem: &str, parts: &[String]) -> String {
    let n = parts.len();
    if !ir {
        return format!("  %{v} = make <{n} x {elem}> {}\n", parts.join(", "));
    }
    let (ty, elem) = (format!("<{n} x {}>", ir_types(elem)), ir_types(elem));
    let mut t = String::new();
    let mut prev = "poison".to_string();
    for (k, p) in parts.iter().enumerate() {
        let name = if k + 1 == n { format!("%{v}") } else { format!("%{v}.{k}") };
        writeln!(t, "  {name} = insertelement {ty} {prev}, {elem} {p}, i32 {k}").unwrap();
        prev = name;
    }
    t
}

fn pack_name(pad: usize) -> &'static str {
    if pad == 0 { "pack" } else { "pack_late" }
}

/// `@pack`'s (or `@pack_late`'s) parameters, `ir` for LLVM's spelling.
fn pack_params(ir: bool, pad: usize) -> String {
    let mut ps: Vec<String> = (0..pad).map(|j| if ir { format!("i32 %p{j}") } else { format!("%p{j}: i32") }).collect();
    for (v, elem, n) in PACK_VECTORS {
        ps.push(if ir { format!("<{n} x {}> %{v}", ir_types(elem)) } else { format!("%{v}: <{n} x {elem}>") });
    }
    ps.push(if ir { "i32 %e".into() } else { "%e: i32".into() });
    ps.join(", ")
}

/// The body of `@pack` (MIR syntax) after the elements are extracted: an
/// order-sensitive hash of every element and `%e` (and the padding), so a
/// swapped, shifted or lost element changes it. Elements are widened with zext
/// or sext, which reads exactly the element's bits: a callee that kept the other
/// half of a packed register, or an i8 register's upper bits, gets other high
/// bits of `%h`, which `%hi` returns. All arithmetic is 32-bit (here and in the
/// other bodies): the simulator has no 16-bit VALU instructions (docs/isa.md,
/// "Not covered yet"), and llc would use them for i16/f16 operations.
fn pack_arith(pad: usize) -> String {
    let mut t = String::new();
    let widen = [("a0", "zext", "i16"), ("a1", "sext", "i16"), ("b0", "sext", "i16"), ("b1", "zext", "i16"), ("b2", "zext", "i16"), ("c0", "zext", "i8"), ("c1", "sext", "i8"), ("c2", "zext", "i8"), ("c3", "sext", "i8")];
    let mut terms: Vec<String> = (0..pad).map(|j| format!("%p{j}")).collect();
    for (v, op, ty) in widen {
        writeln!(t, "  %{v}w = {op} {ty} %{v} to i32").unwrap();
        terms.push(format!("%{v}w"));
    }
    for v in ["d0", "d1"] {
        writeln!(t, "  %{v}b = bitcast f16 %{v} to i16\n  %{v}w = zext i16 %{v}b to i32").unwrap();
        terms.push(format!("%{v}w"));
    }
    let mut h = "%e".to_string();
    for (k, term) in terms.iter().enumerate() {
        writeln!(t, "  %hm{k} = mul i32 {h}, 31\n  %h{k} = add i32 %hm{k}, {term}").unwrap();
        h = format!("%h{k}");
    }
    writeln!(t, "  %hs = lshr i32 {h}, 16\n  %lo = trunc i32 {h} to i16\n  %hi = trunc i32 %hs to i16").unwrap();
    t
}

/// The body of `@unpack(%a: <2 x i16>, %c: <4 x i8>, %e: i32)` after the
/// elements are extracted. The halves of `%a` cross (element 0 of the result
/// from element 1), `%c` comes back reversed, and the sub-dword results are
/// truncated from 32-bit values, so their registers' upper bits may hold
/// garbage (allowed: undefined) that a caller must not read: `%u2` is alone in
/// the upper half's register.
fn unpack_arith() -> String {
    let mut t = String::from("  %a0w = zext i16 %a0 to i32\n  %a1w = sext i16 %a1 to i32\n  %u0w = sub i32 %a1w, %e\n  %u0 = trunc i32 %u0w to i16\n");
    t.push_str("  %u1m = mul i32 %a0w, 3\n  %u1w = lshr i32 %u1m, 1\n  %u1 = trunc i32 %u1w to i16\n  %ew = mul i32 %e, 40503\n  %ews = lshr i32 %ew, 5\n  %u2 = trunc i32 %ews to i16\n");
    for k in 0..4 {
        writeln!(t, "  %cw{k} = zext i8 %c{} to i32\n  %cm{k} = mul i32 %cw{k}, {}\n  %cs{k} = add i32 %cm{k}, %e\n  %q{k} = trunc i32 %cs{k} to i8", 3 - k, 2 * k + 3).unwrap();
    }
    t.push_str("  %f0m = mul i32 %e, -1640531535\n  %f0s = lshr i32 %f0m, 18\n  %f1a = add i32 %cw2, %e\n  %f1m = mul i32 %f1a, 668265263\n  %f1s = lshr i32 %f1m, 18\n");
    t.push_str(&halves_from_bits("f", "%f0s", "%f1s"));
    t
}

/// `%{v}: <2 x f16>` from the bit patterns `lo`, `hi` (i32s below 2^14, so no
/// NaN; MIR syntax). No f16 arithmetic or conversion anywhere: llc would pack
/// with `v_pack_b32_f16` and convert with gfx11's VOP1 `v_cvt_f32_f16`, which
/// the simulator does not decode (docs/isa.md, "Not covered yet"); the ABI
/// moves bits, and the bit patterns are checked exactly.
fn halves_from_bits(v: &str, lo: &str, hi: &str) -> String {
    format!("  %{v}h = shl i32 {hi}, 16\n  %{v}p = or i32 {lo}, %{v}h\n  %{v} = bitcast i32 %{v}p to <2 x f16>\n")
}

fn names(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|k| format!("%{prefix}{k}")).collect()
}

/// The callees of the vector kernel in MIR (`callconv(llvm)`) or LLVM IR.
fn vector_functions(ir: bool) -> String {
    let mut t = if ir { String::from(IR_HEADER) } else { String::new() };
    for pad in [0, LATE_PAD] {
        let name = pack_name(pad);
        if ir {
            writeln!(t, "define hidden <2 x i16> @{name}({}) {{", pack_params(true, pad)).unwrap();
        } else {
            writeln!(t, "func @{name}({}) -> <2 x i16> callconv(llvm) noinline {{\nentry:", pack_params(false, pad)).unwrap();
        }
        for (v, elem, n) in PACK_VECTORS {
            t.push_str(&extract_elements(ir, v, elem, n));
        }
        t.push_str(&ir_or_mir(ir, &pack_arith(pad)));
        t.push_str(&build_vector(ir, "r", "i16", &["%lo".into(), "%hi".into()]));
        t.push_str(if ir { "  ret <2 x i16> %r\n}\n" } else { "  ret %r\n}\n\n" });
    }
    if ir {
        writeln!(t, "define hidden {} @unpack(<2 x i16> %a, <4 x i8> %c, i32 %e) {{", ir_types(UNPACK_RESULT)).unwrap();
    } else {
        writeln!(t, "func @unpack(%a: <2 x i16>, %c: <4 x i8>, %e: i32) -> {UNPACK_RESULT} callconv(llvm) noinline {{\nentry:").unwrap();
    }
    t.push_str(&extract_elements(ir, "a", "i16", 2));
    t.push_str(&extract_elements(ir, "c", "i8", 4));
    t.push_str(&ir_or_mir(ir, &unpack_arith()));
    t.push_str(&build_vector(ir, "v", "i16", &names("u", 3)));
    t.push_str(&build_vector(ir, "q", "i8", &names("q", 4)));
    if ir {
        let ty = ir_types(UNPACK_RESULT);
        writeln!(t, "  %s0 = insertvalue {ty} poison, <3 x i16> %v, 0\n  %s1 = insertvalue {ty} %s0, <4 x i8> %q, 1\n  %s = insertvalue {ty} %s1, <2 x half> %f, 2\n  ret {ty} %s\n}}").unwrap();
    } else {
        writeln!(t, "  %s = make {UNPACK_RESULT} %v, %q, %f\n  ret %s\n}}\n").unwrap();
    }
    t
}

fn ir_or_mir(ir: bool, mir: &str) -> String {
    if ir { ir_types(mir) } else { mir.to_string() }
}

/// The kernel's per-lane arguments from `%x` (MIR syntax): every integer element
/// is bits 13 and up of a different 32-bit hash of `%x`, so its register's upper
/// bits are set (packing must clear them) and sign bits vary across lanes. (The
/// shift also keeps llc from narrowing the arithmetic to 16-bit instructions.)
fn vector_kernel_arith() -> String {
    let mut t = String::new();
    let ints = [("a0", "i16", 0x9e3779b1u32, 3), ("a1", "i16", 0x85ebca6b, 40000), ("b0", "i16", 0xc2b2ae35, 5000), ("b1", "i16", 0x27d4eb2f, 21), ("b2", "i16", 0x165667b1, 12345), ("c0", "i8", 0xd3a2646c, 5), ("c1", "i8", 0xfd7046c5, 200), ("c2", "i8", 0xb55a4f09, 7), ("c3", "i8", 0x94d049bb, 77)];
    for (v, ty, m, k) in ints {
        writeln!(t, "  %{v}m = mul i32 %x, {}\n  %{v}k = add i32 %{v}m, {k}\n  %{v}s = lshr i32 %{v}k, 13\n  %{v} = trunc i32 %{v}s to {ty}", m as i32).unwrap();
    }
    t.push_str("  %d0m = mul i32 %x, -2048144789\n  %d0s = lshr i32 %d0m, 18\n  %d1m = mul i32 %x, -1028477387\n  %d1k = add i32 %d1m, 99\n  %d1s = lshr i32 %d1k, 18\n  %em = mul i32 %x, 7\n  %e = add i32 %em, 1\n");
    for j in 0..LATE_PAD {
        writeln!(t, "  %p{j} = add i32 %x, {}", 3 * j + 1).unwrap();
    }
    t.push_str(&halves_from_bits("d", "%d0s", "%d1s"));
    t
}

/// What the vector kernel stores per work-item, from the results `%r` (`@pack`),
/// `%rl` (`@pack_late`) and `%uv`, `%uq`, `%uf` (`@unpack`'s fields, elements
/// extracted): both halves of each packed result, `%uv2` zero-extended alone
/// (a caller that kept its register's upper half shows there), the i8 elements
/// zero-extended two to a word (16-bit apart: at 8 bits apart llc would shift
/// with 16-bit instructions), and the f16 vector's bit pattern.
const VECTOR_KERNEL_WORDS: &str = "  %w0 = bitcast <2 x i16> %r to i32\n  %w1 = bitcast <2 x i16> %rl to i32\n  %uv0w = zext i16 %uv0 to i32\n  %uv1w = zext i16 %uv1 to i32\n  %uv1s = shl i32 %uv1w, 16\n  %w2 = or i32 %uv0w, %uv1s\n  %w3 = zext i16 %uv2 to i32\n  %uq1s = shl i32 %uq1w, 16\n  %uq3s = shl i32 %uq3w, 16\n  %w4 = or i32 %uq0w, %uq1s\n  %w5 = or i32 %uq2w, %uq3s\n  %w6 = bitcast <2 x f16> %uf to i32\n";

/// The kernel calling `@pack`, `@pack_late` and `@unpack`, in MIR or LLVM IR.
fn vector_kernel(ir: bool) -> String {
    let mut t = String::new();
    let mut pack_args: Vec<String> = Vec::new();
    for (v, elem, n) in PACK_VECTORS {
        pack_args.push(if ir { format!("<{n} x {}> %{v}", ir_types(elem)) } else { format!("%{v}") });
    }
    pack_args.push(if ir { "i32 %e".into() } else { "%e".into() });
    let pads: Vec<String> = (0..LATE_PAD).map(|j| if ir { format!("i32 %p{j}") } else { format!("%p{j}") }).collect();
    let late_args = [pads, pack_args.clone()].concat();
    if ir {
        t.push_str(IR_HEADER);
        for pad in [0, LATE_PAD] {
            writeln!(t, "declare hidden <2 x i16> @{}({})", pack_name(pad), pack_params(true, pad)).unwrap();
        }
        writeln!(t, "declare hidden {} @unpack(<2 x i16>, <4 x i8>, i32)", ir_types(UNPACK_RESULT)).unwrap();
        t.push_str("define amdgpu_kernel void @k(ptr addrspace(1) %in, ptr addrspace(1) %out) {\n");
        t.push_str("  %lid = call i32 @llvm.amdgcn.workitem.id.x()\n  %gid = call i32 @llvm.amdgcn.workgroup.id.x()\n  %base = mul i32 %gid, 64\n  %i = add i32 %base, %lid\n");
        t.push_str("  %src = getelementptr i32, ptr addrspace(1) %in, i32 %i\n  %x = load i32, ptr addrspace(1) %src\n");
    } else {
        t.push_str(&vector_functions(false));
        t.push_str("kernel @k(%in: ptr<global>, %out: ptr<global>) {\nentry:\n  %lid = workitem_id x\n  %gid = workgroup_id x\n  %base = mul i32 %gid, 64\n  %i = add i32 %base, %lid\n");
        t.push_str("  %off = mul i32 %i, 4\n  %src = ptradd %in, %off\n  %x = load i32 %src\n");
    }
    t.push_str(&ir_or_mir(ir, &vector_kernel_arith()));
    for (v, elem, n) in PACK_VECTORS {
        if elem != "f16" {
            t.push_str(&build_vector(ir, v, elem, &names(v, n)));
        }
    }
    let result = ir_types(UNPACK_RESULT);
    if ir {
        writeln!(t, "  %r = call <2 x i16> @pack({})\n  %rl = call <2 x i16> @pack_late({})", pack_args.join(", "), late_args.join(", ")).unwrap();
        writeln!(t, "  %u = call {result} @unpack(<2 x i16> %a, <4 x i8> %c, i32 %e)").unwrap();
        writeln!(t, "  %uv = extractvalue {result} %u, 0\n  %uq = extractvalue {result} %u, 1\n  %uf = extractvalue {result} %u, 2").unwrap();
    } else {
        writeln!(t, "  %r = call @pack({})\n  %rl = call @pack_late({})\n  %u = call @unpack(%a, %c, %e)", pack_args.join(", "), late_args.join(", ")).unwrap();
        t.push_str("  %uv = extract %u, 0\n  %uq = extract %u, 1\n  %uf = extract %u, 2\n");
    }
    t.push_str(&extract_elements(ir, "uv", "i16", 3));
    t.push_str(&extract_elements(ir, "uq", "i8", 4));
    for k in 0..4 {
        writeln!(t, "  %uq{k}w = zext i8 %uq{k} to i32").unwrap();
    }
    t.push_str(&ir_or_mir(ir, VECTOR_KERNEL_WORDS));
    writeln!(t, "  %ob = mul i32 %i, {VECTOR_WORDS}").unwrap();
    for k in 0..VECTOR_WORDS {
        if ir {
            writeln!(t, "  %o{k} = add i32 %ob, {k}\n  %dst{k} = getelementptr i32, ptr addrspace(1) %out, i32 %o{k}\n  store i32 %w{k}, ptr addrspace(1) %dst{k}").unwrap();
        } else {
            writeln!(t, "  %o{k} = add i32 %ob, {k}\n  %ob{k} = mul i32 %o{k}, 4\n  %dst{k} = ptradd %out, %ob{k}\n  store i32 %w{k}, %dst{k}").unwrap();
        }
    }
    t.push_str(if ir { "  ret void\n}\n" } else { "  ret\n}\n" });
    t
}

#[test]
fn vectors_of_16_and_8_bit_elements_cross_between_our_code_and_llc_code() {
    let Some(llc_tool) = llvm_tools::require("llc-22") else { return };
    let Some(lld) = llvm_tools::require("ld.lld-22") else { return };
    let dir = std::env::temp_dir().join(format!("amdgpu-cg-interop-vectors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let words = 128 * VECTOR_WORDS;
    let buffers = ["in=i32:iota:128".to_string(), format!("out=i32:zero:{words}")];
    // LLVM's kernel has no argument names in its metadata: positions then.
    let positional = LaunchSpec::from_flags("128", "64", &buffers, &["arg0=@in".into(), "arg1=@out".into()], &[]).unwrap();
    let named = LaunchSpec::from_flags("128", "64", &buffers, &["in=@in".into(), "out=@out".into()], &[]).unwrap();
    let out = |b: &[mir::launch::BufferOutput]| b.iter().find(|b| b.name == "out").unwrap().elements();
    let source = vector_kernel(false);
    let module = mir::parse(&source).unwrap_or_else(|e| panic!("{e}\n{source}"));
    mir::verify::verify(&module).unwrap_or_else(|e| panic!("{e:?}\n{source}"));
    let want = mir::launch::run(&module, &named).unwrap();
    let want = out(&want.buffers);
    let functions_only = mir::parse(&vector_functions(false)).unwrap();
    // Which word of a work-item's output differs, and how, for the message.
    let mismatches = |got: &[mir::launch::BufferOutput]| {
        let got = out(got);
        let labels = ["@pack", "@pack_late", "@unpack .0[0..1]", "@unpack .0[2] zext", "@unpack .1[0], [1] zext", "@unpack .1[2], [3] zext", "@unpack .2 as i32"];
        let mut text = String::new();
        let mut count = 0;
        for (n, (g, w)) in got.iter().zip(&want).enumerate() {
            if g != w {
                count += 1;
                if count <= 8 {
                    writeln!(text, "  lane {} {}: got {g:?}, want {w:?}", n / VECTOR_WORDS, labels[n % VECTOR_WORDS]).unwrap();
                }
            }
        }
        (count, text)
    };
    for (config, target) in CodeObjectTarget::all_configurations().into_iter().enumerate() {
        let what = target.isa_name();
        // (a) our kernel, LLVM's functions.
        let options = Options { external: vec!["pack".into(), "pack_late".into(), "unpack".into()], ..Options::default() };
        let (object, _) = codegen::compile_module(&module, &target, CodeObjectVersion::V5, &options, &mut Report::default()).unwrap_or_else(|d| panic!("(a) on {what}: {d}"));
        let ours = dir.join(format!("a-ours-{config}.o"));
        std::fs::write(&ours, codeobj::write_relocatable(&object).unwrap()).unwrap();
        let theirs = dir.join(format!("a-llc-{config}.o"));
        llc(&llc_tool, &target, &vector_functions(true), &theirs, LLC_FOR_THE_SIMULATOR);
        let hsaco = link(&lld, &[&ours, &theirs], &dir.join(format!("a-{config}.hsaco")));
        let (got, _) = amdgpu_cg::sim::run_launch(&hsaco, &positional).unwrap_or_else(|e| panic!("(a) on {what}: simulator: {e}"));
        let (count, text) = mismatches(&got);
        assert_eq!(count, 0, "(a) our kernel calling llc-22's vector functions on {what}: {count} words differ:\n{text}");

        // (b) LLVM's kernel, our functions.
        let (object, _) = codegen::compile_module(&functions_only, &target, CodeObjectVersion::V5, &Options::default(), &mut Report::default())
            .unwrap_or_else(|d| panic!("(b) on {what}: {d}"));
        let ours = dir.join(format!("b-ours-{config}.o"));
        std::fs::write(&ours, codeobj::write_relocatable(&object).unwrap()).unwrap();
        let theirs = dir.join(format!("b-llc-{config}.o"));
        llc(&llc_tool, &target, &vector_kernel(true), &theirs, LLC_FOR_THE_SIMULATOR);
        let hsaco = link(&lld, &[&theirs, &ours], &dir.join(format!("b-{config}.hsaco")));
        let (got, _) = amdgpu_cg::sim::run_launch(&hsaco, &positional).unwrap_or_else(|e| panic!("(b) on {what}: simulator: {e}"));
        let (count, text) = mismatches(&got);
        assert_eq!(count, 0, "(b) llc-22's kernel calling our vector functions on {what}: {count} words differ:\n{text}");
    }
}
