//! Inlining (src/opt/inline.rs): small device functions are copied into
//! their callers at -O1 and -O2 and compute what the calls computed (the
//! interpreter on the unoptimised module is the reference, and the simulator
//! runs the code compiled from the inlined module); large, `noinline`,
//! recursive and external callees stay calls, and so does everything at -O0
//! (`s_swappc_b64` in the listing); growth stops at the caller limit; the
//! result does not depend on the number of threads.

use amdgpu_cg::codegen::{self, Options, Report};
use amdgpu_cg::codeobj::{self, CodeObjectTarget, CodeObjectVersion};
use amdgpu_cg::mir::interp::ops::equivalent;
use amdgpu_cg::mir::launch::{self, LaunchSpec, RunOutput};
use amdgpu_cg::mir::{self, Module, Op};
use amdgpu_cg::opt::{self, inline, ModuleFacts, Observe, OptLevel, Trace};

fn parse(text: &str) -> Module {
    let module = mir::parse(text).unwrap_or_else(|e| panic!("{e:?}"));
    mir::verify::verify(&module).unwrap_or_else(|e| panic!("{e:?}"));
    module
}

fn optimized(module: &Module, level: OptLevel) -> Module {
    let observe = Observe { print_after: &[], verify: true };
    opt::optimize(module, level, &observe, &mut Trace::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// The calls in `function` to `callee`.
fn calls(module: &Module, function: &str, callee: &str) -> usize {
    let f = module.function(function).unwrap();
    f.blocks.iter().flat_map(|b| &b.insts).filter(|i| matches!(&i.op, Op::Call { callee: c, .. } if c == callee)).count()
}

fn same_results(a: &RunOutput, b: &[launch::BufferOutput], what: &str) {
    for x in &a.buffers {
        let y = b.iter().find(|y| y.name == x.name).unwrap();
        for (i, (p, q)) in x.bits().into_iter().zip(y.bits()).enumerate() {
            assert!(equivalent(&x.ty, p, q), "{what}: buffer {} element {i}: {p:#x} wanted, {q:#x} got", x.name);
        }
    }
}

/// The optimised module gives the interpreter's results of the unoptimised
/// one, prints and parses back to itself, and the code compiled from the
/// module at `level` gives them on the simulator on every target. Returns
/// the kernel's listing per target.
fn check(module: &Module, spec: &LaunchSpec, level: OptLevel) -> Vec<String> {
    let want = launch::run(module, spec).unwrap();
    let after = optimized(module, level);
    mir::verify::verify(&after).unwrap_or_else(|e| panic!("{e:?}\n{after}"));
    let got = launch::run(&after, spec).unwrap_or_else(|e| panic!("{e}\n{after}"));
    same_results(&want, &got.buffers, &format!("interpreter after {level:?}"));
    let printed = after.to_string();
    assert!(mir::parse(&printed).unwrap() == after, "the inlined module prints and parses back:\n{printed}");
    let mut listings = Vec::new();
    for target in CodeObjectTarget::all_configurations() {
        let options = Options { opt_level: level, ..Options::default() };
        let (object, kernels) = codegen::compile_module(module, &target, CodeObjectVersion::V5, &options, &mut Report::default()).unwrap();
        let hsaco = codeobj::write_hsaco(&object).unwrap();
        let (got, _) = amdgpu_cg::sim::run_launch(&hsaco, spec).unwrap_or_else(|e| panic!("{}: {e}", target.isa_name()));
        same_results(&want, &got, &format!("simulator, {} at {level:?}", target.isa_name()));
        listings.push(kernels.iter().find(|k| k.is_kernel).unwrap().asm.clone());
    }
    listings
}

fn spec(grid: u32, block: u32) -> LaunchSpec {
    LaunchSpec::from_json(&format!(r#"{{"grid":[{grid}],"block":[{block}],"buffers":{{"out":{{"type":"i32","len":{grid}}}}},"args":{{"out":"@out"}}}}"#))
        .unwrap()
}

/// Several returns; a loop over a private array indexed by a variable (its
/// stack slot stays a slot: promote needs constant offsets), called in a
/// loop; a function without a result writing through a pointer argument;
/// one callee called twice (two copies with distinct names).
const SMALL: &str = "
func @clamp_add(%x: i32, %lo: i32, %hi: i32) -> i32 {
entry:
  %s = add i32 %x, 3
  %below = icmp slt i32 %s, %lo
  brif %below, low, check
low:
  ret %lo
check:
  %above = icmp sgt i32 %s, %hi
  brif %above, high, mid
high:
  ret %hi
mid:
  ret %s
}

func @sum_to(%x: i32, %n: i32) -> i32 {
entry:
  %arr = stack_slot 16, align 4
  store i32 %x, %arr
  %p1 = ptradd %arr, 4
  store i32 1, %p1
  %p2 = ptradd %arr, 8
  store i32 2, %p2
  %p3 = ptradd %arr, 12
  store i32 3, %p3
  br loop(0, 0)
loop(%j: i32, %s: i32):
  %more = icmp slt i32 %j, %n
  brif %more, body, done(%s)
body:
  %idx = and i32 %j, 3
  %o = mul i32 %idx, 4
  %q = ptradd %arr, %o
  %v = load i32 %q
  %s1 = add i32 %s, %v
  %j1 = add i32 %j, 1
  br loop(%j1, %s1)
done(%r: i32):
  ret %r
}

func @touch(%p: ptr<global>, %v: i32) {
entry:
  %old = load i32 %p
  %n = add i32 %old, %v
  store i32 %n, %p
  ret
}

kernel @k(%out: ptr<global>) {
entry:
  %x = workitem_id x
  %g = workgroup_id x
  %n = workgroup_size x
  %gb = mul i32 %g, %n
  %i = add i32 %gb, %x
  %off = mul i32 %i, 4
  %p = ptradd %out, %off
  %a = call @clamp_add(%x, 10, 40)
  %m = and i32 %x, 7
  br loop(0, %a)
loop(%k: i32, %acc: i32):
  %s = call @sum_to(%k, %m)
  %acc1 = add i32 %acc, %s
  %k1 = add i32 %k, 1
  %more = icmp slt i32 %k1, 3
  brif %more, loop(%k1, %acc1), done
done:
  %b = call @clamp_add(%acc1, -5, 60)
  store i32 %b, %p
  call @touch(%p, %x)
  ret
}
";

#[test]
fn small_callees_are_inlined_and_compute_the_same() {
    let module = parse(SMALL);
    let spec = spec(128, 64);
    for level in [OptLevel::O1, OptLevel::O2] {
        let after = optimized(&module, level);
        let k = after.function("k").unwrap();
        assert!(!k.blocks.iter().flat_map(|b| &b.insts).any(|i| matches!(i.op, Op::Call { .. })), "{level:?}: a call is left\n{k}");
        // The array's slot moved to the kernel's entry block.
        assert!(k.blocks[0].insts.iter().any(|i| matches!(i.op, Op::StackSlot { size: 16, .. })), "{level:?}\n{k}");
        // The callees are still there, unchanged in interface.
        assert!(after.function("sum_to").is_some() && after.function("clamp_add").is_some() && after.function("touch").is_some());
        for listing in check(&module, &spec, level) {
            assert!(!listing.contains("s_swappc_b64"), "{level:?}:\n{listing}");
        }
    }
    // -O0 keeps every call.
    for listing in check(&module, &spec, OptLevel::O0) {
        assert_eq!(listing.matches("s_swappc_b64").count(), 4, "{listing}");
    }
}

/// A callee of `n` dependent instructions that simplify cannot shorten.
fn chain(name: &str, n: usize, hint: &str) -> String {
    let mut t = format!("func @{name}(%x: i32, %y: i32) -> i32{hint} {{\nentry:\n  %v0 = add i32 %x, %y\n");
    for k in 1..n {
        let op = ["mul", "xor", "add"][k % 3];
        t.push_str(&format!("  %v{k} = {op} i32 %v{}, %y\n", k - 1));
    }
    t.push_str(&format!("  ret %v{}\n}}\n\n", n - 1));
    t
}

/// Too large, `noinline`, recursive (itself, and two functions calling each
/// other): calls. A small callee of the recursive function is inlined into
/// it; `alwaysinline` takes a large one.
#[test]
fn large_noinline_and_recursive_callees_stay_calls() {
    let mut text = chain("big", inline::SMALL_CALLEE + 10, "");
    text += &chain("forced", inline::SMALL_CALLEE + 10, " alwaysinline");
    text += &chain("kept", 4, " noinline");
    text += &chain("tiny", 4, "");
    text += "
func @fact(%n: i32) -> i32 {
entry:
  %stop = icmp sle i32 %n, 1
  brif %stop, base, step
base:
  ret 1
step:
  %m = sub i32 %n, 1
  %f = call @fact(%m)
  %t = call @tiny(%f, %n)
  ret %t
}

func @ping(%n: i32) -> i32 {
entry:
  %stop = icmp sle i32 %n, 0
  brif %stop, base, step
base:
  ret 5
step:
  %m = sub i32 %n, 1
  %r = call @pong(%m)
  ret %r
}

func @pong(%n: i32) -> i32 {
entry:
  %r = call @ping(%n)
  %s = add i32 %r, %n
  ret %s
}

kernel @k(%out: ptr<global>) {
entry:
  %x = workitem_id x
  %g = workgroup_id x
  %n = workgroup_size x
  %gb = mul i32 %g, %n
  %i = add i32 %gb, %x
  %off = mul i32 %i, 4
  %p = ptradd %out, %off
  %y = add i32 %x, 1
  %a = call @big(%x, %y)
  %b = call @kept(%a, %y)
  %c = and i32 %x, 3
  %d = call @fact(%c)
  %e = call @ping(%c)
  %f = call @forced(%b, %d)
  %s1 = add i32 %f, %e
  store i32 %s1, %p
  ret
}
";
    let module = parse(&text);
    for level in [OptLevel::O1, OptLevel::O2] {
        let after = optimized(&module, level);
        for callee in ["big", "kept", "fact", "ping"] {
            assert_eq!(calls(&after, "k", callee), 1, "{level:?}: @k calls @{callee}\n{after}");
        }
        assert_eq!(calls(&after, "k", "forced"), 0, "{level:?}: alwaysinline\n{after}");
        assert_eq!(calls(&after, "fact", "fact"), 1, "{level:?}");
        assert_eq!(calls(&after, "fact", "tiny"), 0, "{level:?}: the small callee of a recursive function\n{after}");
        assert_eq!(calls(&after, "ping", "pong") + calls(&after, "pong", "ping"), 2, "{level:?}");
        for listing in check(&module, &spec(64, 32), level) {
            assert_eq!(listing.matches("s_swappc_b64").count(), 4, "{level:?}:\n{listing}");
        }
    }
}

/// LLVM's convention, a struct argument and a struct result (returned
/// through memory by the convention when large): the body does not care.
#[test]
fn llvm_convention_and_struct_results_are_inlined() {
    let text = "
func @pair(%s: {i32, f32, i64, f64}, %k: inreg i32) -> {i64, f64, i32, i32, i32, i32} callconv(llvm) {
entry:
  %a = extract %s, 0
  %b = extract %s, 1
  %c = extract %s, 2
  %d = extract %s, 3
  %a2 = add i32 %a, %k
  %bd = fpext f32 %b to f64
  %e = fadd f64 %d, %bd
  %r0 = make {i64, f64, i32, i32, i32, i32} %c, %e, %a2, %a, %k, %a2
  ret %r0
}

kernel @k(%out: ptr<global>, %k: i32) {
entry:
  %x = workitem_id x
  %g = workgroup_id x
  %n = workgroup_size x
  %gb = mul i32 %g, %n
  %i = add i32 %gb, %x
  %off = mul i32 %i, 4
  %p = ptradd %out, %off
  %xf = sitofp i32 %x to f32
  %x64 = zext i32 %i to i64
  %s = make {i32, f32, i64, f64} %x, %xf, %x64, 0.25
  %r = call @pair(%s, %k)
  %c = extract %r, 0
  %e = extract %r, 1
  %a2 = extract %r, 2
  %ct = trunc i64 %c to i32
  %ei = fptosi f64 %e to i32
  %t = add i32 %ct, %ei
  %u = add i32 %t, %a2
  store i32 %u, %p
  ret
}
";
    let module = parse(text);
    let spec = LaunchSpec::from_json(r#"{"grid":[64],"block":[32],"buffers":{"out":{"type":"i32","len":64}},"args":{"out":"@out","k":9}}"#).unwrap();
    let after = optimized(&module, OptLevel::O2);
    assert_eq!(calls(&after, "k", "pair"), 0, "{after}");
    for listing in check(&module, &spec, OptLevel::O2) {
        assert!(!listing.contains("s_swappc_b64"), "{listing}");
    }
}

/// A function declared external (defined in another object) keeps its
/// calls: its body here only serves the interpreter.
#[test]
fn external_callees_stay_calls() {
    let module = parse(&(chain("ext", 3, "") + "kernel @k(%out: ptr<global>) {\nentry:\n  %x = workitem_id x\n  %r = call @ext(%x, %x)\n  %off = mul i32 %x, 4\n  %p = ptradd %out, %off\n  store i32 %r, %p\n  ret\n}\n"));
    let observe = Observe { print_after: &[], verify: true };
    let external = ["ext".to_string()];
    let kept = opt::optimize_in_parallel(&module, OptLevel::O2, &observe, &mut Trace::default(), 1, ModuleFacts { external: &external }).unwrap();
    assert_eq!(calls(&kept, "k", "ext"), 1);
    assert_eq!(calls(&optimized(&module, OptLevel::O2), "k", "ext"), 0, "the same callee, not external, is inlined");
}

/// A caller stops taking inlines at `CALLER_LIMIT` instructions: with 100
/// calls of a callee that cannot shrink, some stay calls, and the caller
/// stays near the limit.
#[test]
fn growth_stops_at_the_caller_limit() {
    let size = inline::SMALL_CALLEE - 4;
    let mut text = chain("mid", size, "");
    text += "kernel @k(%out: ptr<global>) {\nentry:\n  %x = workitem_id x\n  %y = add i32 %x, 1\n";
    let mut acc = "x".to_string();
    for c in 0..100 {
        text += &format!("  %r{c} = call @mid(%{acc}, %y)\n");
        acc = format!("r{c}");
    }
    text += &format!("  %off = mul i32 %x, 4\n  %p = ptradd %out, %off\n  store i32 %{acc}, %p\n  ret\n}}\n");
    let module = parse(&text);
    let after = optimized(&module, OptLevel::O2);
    let left = calls(&after, "k", "mid");
    assert!(left > 0 && left < 100, "{left} calls left");
    let k = after.function("k").unwrap();
    assert!(inline::size(k) <= inline::CALLER_LIMIT + size, "{} instructions", inline::size(k));
    let want = launch::run(&module, &spec(64, 64)).unwrap();
    same_results(&want, &launch::run(&after, &spec(64, 64)).unwrap().buffers, "interpreter");
}

/// The inlined module and the printed trace are the same for any number
/// of threads (inlining runs on one thread between the parallel rounds).
#[test]
fn inlining_is_the_same_on_any_number_of_threads() {
    let module = parse(SMALL);
    let print = ["inline".to_string()];
    let observe = Observe { print_after: &print, verify: true };
    let run = |jobs: usize| {
        let mut trace = Trace::default();
        let m = opt::optimize_in_parallel(&module, OptLevel::O2, &observe, &mut trace, jobs, ModuleFacts::default()).unwrap();
        (m.to_string(), trace.printed)
    };
    let one = run(1);
    assert!(one.1.contains("; after inline: @k"), "{}", one.1);
    for jobs in [2, 4] {
        assert!(run(jobs) == one, "{jobs} threads");
    }
}
