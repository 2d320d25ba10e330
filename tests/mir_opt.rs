//! The MIR optimiser (src/opt/) keeps what programs compute: random kernels
//! and random control flow give the interpreter's results before and after
//! -O1 and -O2 (the interpreter is the semantics, and it runs the
//! unoptimised module, which nothing optimised); the verifier accepts the
//! result of every pass; division by constants is exact for every input
//! the tests try; and the passes do what they are for (counted on the
//! output, not compared with a copy of it).
//!
//! The other suites (simulator against interpreter, llc-22 comparisons) run
//! at the default -O2, so they check the optimised code on the hardware
//! model too.

mod common;

use amdgpu_cg::mir::interp::ops::equivalent;
use amdgpu_cg::mir::launch::{self, LaunchSpec, RunOutput};
use amdgpu_cg::mir::{self, Module, Op, Operand};
use amdgpu_cg::opt::{self, divide, Observe, OptLevel, Trace};
use proptest::prelude::*;

fn optimized(module: &Module, level: OptLevel) -> Module {
    let observe = Observe { print_after: &[], verify: true };
    opt::optimize(module, level, &observe, &mut Trace::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn same_results(a: &RunOutput, b: &RunOutput) -> Result<(), String> {
    for (x, y) in a.buffers.iter().zip(&b.buffers) {
        for (i, (p, q)) in x.bits().into_iter().zip(y.bits()).enumerate() {
            if !equivalent(&x.ty, p, q) {
                return Err(format!("buffer {} element {i}: {p:#x} before, {q:#x} after", x.name));
            }
        }
    }
    Ok(())
}

/// Runs both modules on the interpreter with one launch and compares.
fn runs_the_same(before: &Module, after: &Module, launch_json: &str) {
    let launch = spec(launch_json);
    let (want, got) = (launch::run(before, &launch).unwrap(), launch::run(after, &launch).unwrap());
    same_results(&want, &got).unwrap();
}

fn count(module: &Module, pred: impl Fn(&Op) -> bool) -> usize {
    module.functions.iter().flat_map(|f| &f.blocks).flat_map(|b| &b.insts).filter(|i| pred(&i.op)).count()
}

/// The module with its first function's slots promoted (the pass must
/// change it), verified.
fn promoted(module: &Module) -> Module {
    let mut promoted = module.clone();
    assert!(opt::promote::run(&mut promoted.functions[0]));
    assert!(mir::verify::verify(&promoted).is_ok(), "verified:\n{promoted}");
    promoted
}

fn parse(text: &str) -> Module {
    mir::parse::parse(text).unwrap_or_else(|e| panic!("{e:?}"))
}

fn spec(json: &str) -> LaunchSpec {
    LaunchSpec::from_json(json).unwrap()
}

#[test]
fn random_control_flow_computes_the_same() {
    let programs = if std::env::var("CI").is_ok() { 120 } else { 60 };
    for seed in 0..programs {
        let program = common::cfggen::generate(0x0bad_cafe + seed);
        let want = launch::run(&program.module, &program.launch).unwrap();
        for level in [OptLevel::O1, OptLevel::O2] {
            let module = optimized(&program.module, level);
            let got = launch::run(&module, &program.launch).unwrap_or_else(|e| panic!("seed {seed} {level:?}: {e}\n{module}"));
            same_results(&want, &got).unwrap_or_else(|e| panic!("seed {seed} {level:?}: {e}\nbefore:\n{}\nafter:\n{module}", program.text));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_kernels_compute_the_same(module in common::mirgen::arb_kernel(), seed in any::<u32>()) {
        let input: Vec<String> = (0..64u32).map(|i| ((i.wrapping_mul(2_654_435_761) ^ seed) as i32).to_string()).collect();
        let launch = spec(&format!(
            r#"{{"kernel": "random", "grid": [64, 1, 1], "block": [32, 1, 1],
                "buffers": {{"in": {{"type": "i32", "data": [{}]}}, "out": {{"type": "i32", "len": {}}}}},
                "args": {{"input": "@in", "output": "@out", "scale": "0.75"}}}}"#,
            input.join(", "),
            64 * common::mirgen::OUTPUTS_PER_ITEM
        ));
        let want = launch::run(&module, &launch).unwrap();
        for level in [OptLevel::O1, OptLevel::O2] {
            let opt = optimized(&module, level);
            let got = launch::run(&opt, &launch).unwrap();
            prop_assert!(same_results(&want, &got).is_ok(), "{level:?}: {}\nbefore:\n{module}\nafter:\n{opt}", same_results(&want, &got).unwrap_err());
        }
    }

    #[test]
    fn magic_division_is_exact(d in 2u64.., n in any::<u64>(), small in 2u64..100_000) {
        for w in [32u32, 64] {
            let m = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
            for d in [d & m, small] {
                if d < 2 {
                    continue;
                }
                let magic = divide::magic_unsigned(d, w);
                for n in [n & m, m, (m / d) * d, ((m / d) * d).wrapping_sub(1) & m] {
                    prop_assert_eq!(divide::apply_unsigned(magic, n, w), n / d, "{} / {} in {} bits ({:?})", n, d, w, magic);
                }
            }
        }
    }
}

/// Every division and remainder by a constant, signed and unsigned, i32 and
/// i64, against the interpreter's exact division on edge and random inputs.
#[test]
fn division_by_constants_computes_the_same() {
    let divisors: [i64; 22] = [2, 3, 5, 6, 7, 10, 12, 13, 25, 100, 641, 1000, 65535, 65536, 0x7fff_ffff, -1 << 31, -2, -3, -7, -100, 0x1_0000_0001, i64::MIN];
    let mut text = String::from("kernel @div(%in: ptr<global>, %out: ptr<global>) {\nentry:\n  %i = workitem_id x\n  %i64 = zext i32 %i to i64\n  %off = mul i64 %i64, 8\n  %p = ptradd %in, %off\n  %x = load i64 %p\n  %x32 = trunc i64 %x to i32\n  %base = mul i64 %i64, 2048\n  %q = ptradd %out, %base\n");
    let mut slot = 0;
    for d in divisors {
        for op in ["udiv", "sdiv", "urem", "srem"] {
            for (ty, x) in [("i64", "%x"), ("i32", "%x32")] {
                if ty == "i32" && i32::try_from(d).is_err() && d != 0x1_0000_0001 {
                    continue;
                }
                let dv = if ty == "i32" { (d as i32).to_string() } else { d.to_string() };
                let name = format!("r{slot}");
                let wide = if ty == "i32" { format!("  %{name}w = sext i32 %{name} to i64\n") } else { String::new() };
                let stored = if ty == "i32" { format!("%{name}w") } else { format!("%{name}") };
                text.push_str(&format!("  %{name} = {op} {ty} {x}, {dv}\n{wide}  %a{slot} = ptradd %q, {}\n  store i64 {stored}, %a{slot}\n", slot * 8));
                slot += 1;
            }
        }
    }
    assert!(slot <= 256);
    text.push_str("  ret\n}\n");
    let module = parse(&text);
    let inputs: Vec<String> = [0i64, 1, -1, 2, -2, 7, -7, 100, -100, i64::MAX, i64::MIN, i64::MIN + 1, i32::MAX as i64, i32::MIN as i64, u32::MAX as i64, 0x1234_5678_9abc_def0, -0x1234_5678_9abc_def0, 999_999_999_999, 1 << 40, (1 << 31) + 5]
        .iter()
        .map(|v| v.to_string())
        .chain((0..44u64).map(|k| ((k.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (k << 17)) as i64).to_string()))
        .collect();
    divisions_compute_the_same(&module, "i64", &inputs, 64);
}

/// Runs `module` (`@div(%in, %out)`, each work-item reading its input and
/// writing up to 256 results) before and after -O2 on the interpreter,
/// one work-item per input: no division is left, and the results agree.
fn divisions_compute_the_same(module: &Module, ty: &str, inputs: &[String], items: usize) {
    let launch = spec(&format!(
        r#"{{"grid": [{items}, 1, 1], "block": [64, 1, 1],
            "buffers": {{"in": {{"type": "{ty}", "data": [{}]}}, "out": {{"type": "{ty}", "len": {}}}}},
            "args": {{"in": "@in", "out": "@out"}}}}"#,
        inputs.join(", "),
        items * 256
    ));
    let want = launch::run(module, &launch).unwrap();
    let opt = optimized(module, OptLevel::O2);
    assert_eq!(count(&opt, |op| matches!(op, Op::Binary { op: mir::BinOp::UDiv | mir::BinOp::SDiv | mir::BinOp::URem | mir::BinOp::SRem, .. })), 0, "{opt}");
    let got = launch::run(&opt, &launch).unwrap();
    same_results(&want, &got).unwrap();
}

/// i8 and i16 divisions and remainders by constants (divided in 32 bits
/// by the divide pass) against the interpreter's exact ones: every i8
/// value, and i16 values covering each high byte and the edges.
#[test]
fn narrow_division_by_constants_computes_the_same() {
    let divisors: [i32; 18] = [2, 3, 5, 7, 10, 13, 100, 127, -128, -2, -3, -7, -100, 25, 300, 1000, 32767, -32768];
    let mut text = String::from("kernel @div(%in: ptr<global>, %out: ptr<global>) {\nentry:\n  %i = workitem_id x\n  %g = workgroup_id x\n  %gs = workgroup_size x\n  %gb = mul i32 %g, %gs\n  %j = add i32 %gb, %i\n  %j64 = zext i32 %j to i64\n  %off = mul i64 %j64, 4\n  %p = ptradd %in, %off\n  %x = load i32 %p\n  %x8 = trunc i32 %x to i8\n  %x16 = trunc i32 %x to i16\n  %base = mul i64 %j64, 1024\n  %q = ptradd %out, %base\n");
    let mut slot = 0;
    for d in divisors {
        for op in ["udiv", "sdiv", "urem", "srem"] {
            for (ty, x) in [("i8", "%x8"), ("i16", "%x16")] {
                if ty == "i8" && i8::try_from(d).is_err() {
                    continue;
                }
                let name = format!("r{slot}");
                text.push_str(&format!("  %{name} = {op} {ty} {x}, {d}\n  %{name}w = sext {ty} %{name} to i32\n  %a{slot} = ptradd %q, {}\n  store i32 %{name}w, %a{slot}\n", slot * 4));
                slot += 1;
            }
        }
    }
    assert!(slot <= 256);
    text.push_str("  ret\n}\n");
    let module = parse(&text);
    let inputs: Vec<String> = (0..256i32).map(|k| (((k * 167) & 0xff) << 8 | k).to_string()).chain(["32768", "32767", "65535", "65408", "128", "127"].map(String::from)).chain((0..58).map(|k: i32| (k * 1031).to_string())).collect();
    divisions_compute_the_same(&module, "i32", &inputs, 320);
}

/// A vector load read only through one element (`v.z` of a `float4`, and
/// a vector nothing reads) becomes a load of that element at its offset
/// with the alignment that offset allows; a vector read through two
/// elements stays whole. The interpreter computes the same before and
/// after.
#[test]
fn a_vector_load_read_through_one_element_loads_only_it() {
    let module = parse(
        "kernel @k(%in: ptr<global>, %out: ptr<global>) {\nentry:\n  %i = workitem_id x\n  %i64 = zext i32 %i to i64\n  %off = mul i64 %i64, 16\n  %p = ptradd %in, %off\n  %v = load <4 x f32> %p, align 16\n  %z = extract %v, 2\n  %z2 = extract %v, 2\n  %w = load <2 x i32> %p, align 8\n  %a = extract %w, 0\n  %b = extract %w, 1\n  %s = fadd f32 %z, %z2\n  %ab = add i32 %a, %b\n  %abf = sitofp i32 %ab to f32\n  %t = fadd f32 %s, %abf\n  %o4 = mul i64 %i64, 4\n  %q = ptradd %out, %o4\n  store f32 %t, %q\n  ret\n}\n",
    );
    let opt = optimized(&module, OptLevel::O2);
    let vector_loads = count(&opt, |op| matches!(op, Op::Load { ty: amdgpu_cg::abi::Type::Vector(..), .. }));
    let element_loads: Vec<String> = opt.functions[0].blocks.iter().flat_map(|b| &b.insts).filter(|i| matches!(i.op, Op::Load { .. })).map(|i| format!("{:?}", i.op)).collect();
    assert_eq!(vector_loads, 1, "{opt}");
    assert_eq!(count(&opt, |op| matches!(op, Op::Load { ty: amdgpu_cg::abi::Type::F32, align: 8, .. })), 1, "{element_loads:?}\n{opt}");
    let launch = spec(
        r#"{"grid": [64, 1, 1], "block": [64, 1, 1],
            "buffers": {"in": {"type": "f32", "iota": true, "len": 256}, "out": {"type": "f32", "len": 64}},
            "args": {"in": "@in", "out": "@out"}}"#,
    );
    same_results(&launch::run(&module, &launch).unwrap(), &launch::run(&opt, &launch).unwrap()).unwrap();
}

/// The vector add that clang-22's SPIR-V gives (one `mul` per array): one
/// shift remains, shared by the three addresses.
#[test]
fn repeated_address_arithmetic_is_computed_once() {
    let module = parse(
        include_str!("data/opt/vadd_unoptimised.mir"),
    );
    let opt = optimized(&module, OptLevel::O2);
    let shifts = count(&opt, |op| matches!(op, Op::Binary { op: mir::BinOp::Shl, .. }));
    let muls = count(&opt, |op| matches!(op, Op::Binary { op: mir::BinOp::Mul, ty: amdgpu_cg::abi::Type::I64, .. }));
    assert_eq!((shifts, muls), (1, 0), "{opt}");
    // -O0 folds nothing; this module has no dead code or parameter that
    // merely passes a value on, so it stays as it is.
    assert_eq!(optimized(&module, OptLevel::O0), module);
}

/// -O0 runs two passes only: a block parameter every edge passes the same
/// value becomes that value, and dead code goes; constants, repeated
/// arithmetic and branches on constants stay as written.
#[test]
fn o0_removes_only_pass_through_parameters_and_dead_code() {
    let module = parse(
        "kernel @k(%out: ptr<global>, %n: i32) {
entry:
  %tid = workitem_id x
  %dead = mul i32 %tid, %tid
  %c = add i32 1, 2
  %c2 = add i32 1, 2
  %odd = and i32 %tid, 1
  %t = icmp ne i32 %odd, 0
  brif %t, then, join(%tid, %c)
then:
  %x = add i32 %tid, %c2
  br join(%tid, %x)
join(%same: i32, %v: i32):
  %s = add i32 %same, %v
  %p = ptradd %out, 0
  %off = mul i32 %tid, 4
  %q = ptradd %out, %off
  store i32 %s, %q
  brif true, done, done
done:
  ret
}
",
    );
    let o0 = optimized(&module, OptLevel::O0);
    let text = o0.to_string();
    assert!(!text.contains("%dead") && !text.contains("%same") && !text.contains("%p ="), "{text}");
    assert!(text.contains("join(%v: i32)") && text.contains("%s = add i32 %tid, %v"), "{text}");
    assert!(text.contains("%c = add i32 1, 2") && text.contains("%c2 = add i32 1, 2") && text.contains("brif true, done, done"), "{text}");
    let launch = spec(
        r#"{"grid": [64, 1, 1], "block": [64, 1, 1], "buffers": {"out": {"type": "i32", "len": 64}}, "args": {"out": "@out", "n": 5}}"#,
    );
    same_results(&launch::run(&module, &launch).unwrap(), &launch::run(&o0, &launch).unwrap()).unwrap();
}

/// Constants fold through arithmetic, compares and branches; the dead arm
/// and the parameters only it fed disappear; the chain of blocks merges.
#[test]
fn constant_branches_fold_away() {
    let module = parse(
        "kernel @k(%out: ptr<global>) {
entry:
  %a = add i32 20, 22
  %b = mul i32 %a, 2
  %c = icmp slt i32 %b, 50
  brif %c, small(%a), big(%b)
small(%x: i32):
  %y = sub i32 %x, 0
  br done(%y)
big(%u: i32):
  br done(%u)
done(%r: i32):
  store i32 %r, %out
  ret
}
",
    );
    let launch = spec(r#"{"grid": [1,1,1], "block": [1,1,1], "buffers": {"out": {"type": "i32", "len": 1}}, "args": {"out": "@out"}}"#);
    let opt = optimized(&module, OptLevel::O2);
    let func = &opt.functions[0];
    assert_eq!(func.blocks.len(), 1, "{opt}");
    assert_eq!(func.blocks[0].insts.len(), 1, "{opt}");
    let (want, got) = (launch::run(&module, &launch).unwrap(), launch::run(&opt, &launch).unwrap());
    assert_eq!(want.buffer("out").unwrap().bits(), vec![84]);
    same_results(&want, &got).unwrap();
}

/// Every MIR file of the corpus optimises into verified MIR at every level.
#[test]
fn the_corpus_optimises_into_verified_mir() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["examples", "tests/data/codegen", "tests/data/cf", "tests/data/sim"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else { continue };
        for e in entries.flatten() {
            if e.path().extension().is_some_and(|x| x == "mir") {
                files.push(e.path());
            }
        }
    }
    assert!(files.len() >= 20, "{} MIR files", files.len());
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let Ok(module) = mir::parse::parse(&text) else { continue };
        if mir::verify::verify(&module).is_err() {
            continue;
        }
        for level in [OptLevel::O1, OptLevel::O2] {
            let observe = Observe { print_after: &[], verify: true };
            opt::optimize(&module, level, &observe, &mut Trace::default()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
    }
}

/// The shift pairs and 64-bit index arithmetic clang's SPIR-V writes for
/// `size_t` indexing narrow: no 64-bit shift pair, no 64-bit multiply of
/// extended values left as such, and the same results.
#[test]
fn sixty_four_bit_index_arithmetic_narrows() {
    let module = parse(
        "kernel @k(%in: ptr<global>, %out: ptr<global>, %n: i32) {
entry:
  %t = workitem_id x
  %w = zext i32 %t to i64
  %s = shl i64 %w, 32
  %x = ashr i64 %s, 30
  %p = ptradd %in, %x
  %v = load i32 %p
  %a = add i64 %w, 5
  %m = mul i64 %a, 3
  %lo = trunc i64 %m to i32
  %r = add i32 %v, %lo
  %e = sext i32 %t to i64
  %z0 = zext i32 %n to i64
  %z = and i64 %z0, 4294967295
  %q = mul i64 %e, %z
  %o = shl i64 %q, 2
  %dst = ptradd %out, %o
  store i32 %r, %dst
  %y = add i64 %w, 4294967300
  %ym = and i64 %y, 4294967295
  %yo = shl i64 %ym, 2
  %dst2 = ptradd %out, %yo
  store i32 %v, %dst2
  ret
}
",
    );
    let opt = optimized(&module, OptLevel::O2);
    let wide = |op: mir::BinOp| count(&opt, |o| matches!(o, Op::Binary { op: b, ty: amdgpu_cg::abi::Type::I64, .. } if *b == op));
    assert_eq!((wide(mir::BinOp::AShr), wide(mir::BinOp::Add), wide(mir::BinOp::And)), (0, 0, 0), "{opt}");
    // sext of a work-item id (below 1024) is its zext.
    assert_eq!(count(&opt, |o| matches!(o, Op::Cast { op: mir::CastOp::SExt, .. })), 0, "{opt}");
    runs_the_same(&module, &opt, r#"{"grid": [64,1,1], "block": [64,1,1], "buffers": {"in": {"type": "i32", "iota": true, "len": 64}, "out": {"type": "i32", "len": 4096}},
            "args": {"in": "@in", "out": "@out", "n": "7"}}"#);
}

/// A 64-bit `and` with a mask of the low 32 bits is a zero-extended 32-bit
/// `and` (the high half known zero), so `(i & 1) * 8` from a 64-bit index
/// leaves no 64-bit `and` and the same results; masks with high bits stay.
#[test]
fn sixty_four_bit_masks_of_low_bits_narrow() {
    let module = parse(
        "kernel @k(%out: ptr<global>, %n: i64) {
entry:
  %t = workitem_id x
  %w = zext i32 %t to i64
  %big = mul i64 %w, 8589934595
  %m = and i64 %big, 7
  %o = shl i64 %m, 3
  %dst = ptradd %out, %o
  %keep = and i64 %n, 8589934591
  %lo = trunc i64 %keep to i32
  %hi64 = lshr i64 %keep, 32
  %hi = trunc i64 %hi64 to i32
  %v = add i32 %lo, %hi
  %r = add i32 %v, %t
  %old = atomic add i32 %dst, %r
  ret
}
",
    );
    let opt = optimized(&module, OptLevel::O2);
    let masks: Vec<u64> = opt.functions[0].blocks.iter().flat_map(|b| &b.insts).filter_map(|i| match &i.op {
        Op::Binary { op: mir::BinOp::And, ty: amdgpu_cg::abi::Type::I64, rhs: mir::Operand::Const(c), .. } => Some(c.bits),
        _ => None,
    }).collect();
    assert_eq!(masks, [8589934591], "{opt}");
    runs_the_same(&module, &opt, r#"{"grid": [64,1,1], "block": [64,1,1], "buffers": {"out": {"type": "i32", "len": 64}},
            "args": {"out": "@out", "n": "12884901890"}}"#);
}

/// 64-bit compares of extended 32-bit values become 32-bit compares, for
/// every predicate, against boundary constants and each other.
#[test]
fn compares_of_extended_values_narrow() {
    let preds = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"];
    let consts = ["0", "1", "-1", "2147483647", "-2147483648", "4294967295", "100"];
    let mut body = String::new();
    let mut slot = 0;
    for ext in ["zext", "sext"] {
        for pred in preds {
            for rhs in consts.iter().map(|c| c.to_string()).chain([format!("%{ext}b")]) {
                body.push_str(&format!("  %c{slot} = icmp {pred} i64 %{ext}a, {rhs}\n  %w{slot} = zext i1 %c{slot} to i32\n  %p{slot} = ptradd %q, {}\n  store i32 %w{slot}, %p{slot}\n", slot * 4));
                slot += 1;
            }
        }
    }
    let text = format!(
        "kernel @k(%in: ptr<global>, %out: ptr<global>) {{\nentry:\n  %i = workitem_id x\n  %o = mul i32 %i, 4\n  %pa = ptradd %in, %o\n  %a = load i32 %pa\n  %pb = ptradd %pa, 4\n  %b = load i32 %pb\n  %zexta = zext i32 %a to i64\n  %zextb = zext i32 %b to i64\n  %sexta = sext i32 %a to i64\n  %sextb = sext i32 %b to i64\n  %base = mul i32 %i, {}\n  %q = ptradd %out, %base\n{body}  ret\n}}\n",
        slot * 4
    );
    let module = parse(&text);
    let opt = optimized(&module, OptLevel::O2);
    // What stays 64-bit: a zero-extended value against -1 or -2^31 (10
    // predicates each) and a sign-extended one against 2^32-1 (10).
    assert_eq!(count(&opt, |o| matches!(o, Op::Icmp { ty: amdgpu_cg::abi::Type::I64, .. })), 30, "{opt}");
    let data = ["0", "1", "-1", "2147483647", "-2147483648", "100", "99", "101", "-100", "7", "7", "0", "-1", "-1", "2147483647", "-2147483647"];
    one_item_per_input_runs_the_same(&module, &opt, &data[..15], &data, slot);
}

/// Runs `module` and `opt` with one work-item per input (`items` of them,
/// each reading `in[i]` and after), `data` in `in` and `words` dwords of
/// `out` per work-item, and compares every buffer.
fn one_item_per_input_runs_the_same(module: &mir::Module, opt: &mir::Module, items: &[&str], data: &[&str], words: usize) {
    let n = items.len();
    let launch = spec(&format!(
        r#"{{"grid": [{n},1,1], "block": [{n},1,1], "buffers": {{"in": {{"type": "i32", "data": [{}]}}, "out": {{"type": "i32", "len": {}}}}}, "args": {{"in": "@in", "out": "@out"}}}}"#,
        data.join(", "),
        n * words
    ));
    let (want, got) = (launch::run(module, &launch).unwrap(), launch::run(opt, &launch).unwrap());
    same_results(&want, &got).unwrap();
}

/// A 64-bit bound (`umin`, `umax`, `smin`, `smax`) of a zero-extended i32
/// and a constant below 2^32 is the 32-bit bound, extended; larger
/// constants (2^32 and -1) stay 64-bit; the results are the interpreter's
/// before the pass, on values around every constant.
#[test]
fn bounds_of_extended_values_narrow() {
    let consts = ["0", "1", "61", "2147483647", "2147483648", "4294967295", "4294967296", "-1"];
    let mut body = String::new();
    let mut slot = 0;
    for op in ["umin", "umax", "smin", "smax"] {
        for c in consts {
            body.push_str(&format!("  %b{slot} = {op} i64 %z, {c}\n  %p{slot} = ptradd %q, {}\n  store i64 %b{slot}, %p{slot}\n", slot * 8));
            slot += 1;
        }
    }
    let text = format!(
        "kernel @k(%in: ptr<global>, %out: ptr<global>) {{\nentry:\n  %i = workitem_id x\n  %o = mul i32 %i, 4\n  %pa = ptradd %in, %o\n  %a = load i32 %pa\n  %z = zext i32 %a to i64\n  %base = mul i32 %i, {}\n  %q = ptradd %out, %base\n{body}  ret\n}}\n",
        slot * 8
    );
    let module = parse(&text);
    let opt = optimized(&module, OptLevel::O2);
    let wide = count(&opt, |o| matches!(o, Op::Binary { op: mir::BinOp::UMin | mir::BinOp::UMax | mir::BinOp::SMin | mir::BinOp::SMax, ty: amdgpu_cg::abi::Type::I64, .. }));
    assert_eq!(wide, 6, "{opt}");
    let data = ["0", "1", "60", "61", "62", "2147483647", "-2147483648", "-2", "-1", "7"];
    one_item_per_input_runs_the_same(&module, &opt, &data, &data, slot * 2);
}

/// A compare of `select c, k1, k2` with a constant is c, its negation or a
/// constant (every predicate, both operand orders, i32 and i64 arms), and
/// the results stay the interpreter's before the pass.
#[test]
fn compares_of_selected_constants_fold() {
    let preds = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"];
    let mut body = String::new();
    let mut slot = 0;
    for ty in ["i32", "i64"] {
        for (k1, k2) in [("1", "0"), ("0", "1"), ("-1", "5"), ("7", "7")] {
            for pred in preds {
                for k3 in ["0", "1", "5", "-1"] {
                    for swapped in [false, true] {
                        let (l, r) = if swapped { (k3.to_string(), format!("%s{slot}")) } else { (format!("%s{slot}"), k3.to_string()) };
                        body.push_str(&format!("  %s{slot} = select {ty} %c, {k1}, {k2}\n  %t{slot} = icmp {pred} {ty} {l}, {r}\n  %w{slot} = zext i1 %t{slot} to i32\n  %p{slot} = ptradd %q, {}\n  store i32 %w{slot}, %p{slot}\n", slot * 4));
                        slot += 1;
                    }
                }
            }
        }
    }
    let text = format!(
        "kernel @k(%in: ptr<global>, %out: ptr<global>) {{\nentry:\n  %i = workitem_id x\n  %o = mul i32 %i, 4\n  %pa = ptradd %in, %o\n  %a = load i32 %pa\n  %c = icmp slt i32 %a, 3\n  %base = mul i32 %i, {}\n  %q = ptradd %out, %base\n{body}  ret\n}}\n",
        slot * 4
    );
    let module = parse(&text);
    let opt = optimized(&module, OptLevel::O2);
    // Only %c's own compare is left, and no select.
    assert_eq!(count(&opt, |o| matches!(o, Op::Icmp { .. })), 1, "{opt}");
    assert_eq!(count(&opt, |o| matches!(o, Op::Select { .. })), 0, "{opt}");
    let launch = spec(&format!(
        r#"{{"grid": [6,1,1], "block": [6,1,1], "buffers": {{"in": {{"type": "i32", "data": [0, 1, 2, 3, 4, -9]}}, "out": {{"type": "i32", "len": {}}}}}, "args": {{"in": "@in", "out": "@out"}}}}"#,
        6 * slot
    ));
    let (want, got) = (launch::run(&module, &launch).unwrap(), launch::run(&opt, &launch).unwrap());
    same_results(&want, &got).unwrap();
}

/// Accesses through generic pointers cast from global and local ones take
/// the original address space (spaces), also along ptradd chains that cross
/// blocks, while the flat chain stays for a use that is not an access (a
/// pointer compared); the results are the interpreter's before the passes.
#[test]
fn generic_accesses_use_the_space_they_came_from() {
    let module = parse(
        "kernel @k(%in: ptr<global>, %out: ptr<global>, %n: i32) {
entry:
  %lds = lds_slot 256, align 4
  %t = workitem_id x
  %w = zext i32 %t to i64
  %o = shl i64 %w, 2
  %gin = addrspacecast ptr<global> %in to ptr
  %gout = addrspacecast ptr<global> %out to ptr
  %glds = addrspacecast ptr<local> %lds to ptr
  %p = ptradd %gin, %o
  %v = load i32 %p
  %l = ptradd %glds, %o
  store i32 %v, %l
  barrier
  %c = icmp ult i32 %t, %n
  brif %c, then, done
then:
  %r = sub i64 252, %o
  %l2 = ptradd %glds, %r
  %u = load i32 %l2
  %q = ptradd %gout, %o
  %q4 = ptradd %q, 256
  store i32 %u, %q4
  store i32 %v, %q
  br done
done:
  %same = icmp eq ptr %p, %gin
  %s = zext i1 %same to i32
  %end = ptradd %gout, 512
  store i32 %s, %end
  ret
}
",
    );
    let opt = optimized(&module, OptLevel::O2);
    let flat = |o: &Operand| opt.functions[0].operand_type(o) == &amdgpu_cg::abi::Type::Ptr(amdgpu_cg::abi::AddrSpace::Flat);
    let flat_accesses = count(&opt, |op| match op {
        Op::Load { ptr, .. } | Op::Store { ptr, .. } => flat(ptr),
        _ => false,
    });
    assert_eq!(flat_accesses, 0, "{opt}");
    // The comparison still reads the flat pointers.
    assert_eq!(count(&opt, |op| matches!(op, Op::Icmp { lhs, .. } if flat(lhs))), 1, "{opt}");
    runs_the_same(&module, &opt, r#"{"grid": [64,1,1], "block": [64,1,1], "buffers": {"in": {"type": "i32", "iota": true, "len": 64}, "out": {"type": "i32", "len": 160}},
            "args": {"in": "@in", "out": "@out", "n": "40"}}"#);
}

/// Constants leave address arithmetic for the access (reassociate): `x[i]`,
/// `x[i + 64]` and `((i - 1) << 2) + 8` share one `x + 4i`; the constants
/// wrap as the sums did (`-1 << 2` is -4, and -4 + 8 reads `x[i + 1]`).
#[test]
fn constant_offsets_move_to_the_access() {
    let module = parse(
        "kernel @k(%x: ptr<global>, %out: ptr<global>) {
entry:
  %t = workitem_id x
  %i = zext i32 %t to i64
  %a = mul i64 %i, 4
  %p = ptradd %x, %a
  %v = load i32 %p
  %j = add i64 %i, 64
  %b = mul i64 %j, 4
  %p2 = ptradd %x, %b
  %v2 = load i32 %p2
  %k = add i64 %i, -1
  %c = shl i64 %k, 2
  %c8 = add i64 %c, 8
  %p3 = ptradd %x, %c8
  %v3 = load i32 %p3
  %s = add i32 %v, %v2
  %s2 = add i32 %s, %v3
  %q = ptradd %out, %a
  store i32 %s2, %q
  ret
}
",
    );
    let opt = optimized(&module, OptLevel::O2);
    let variable_offsets = count(&opt, |op| matches!(op, Op::PtrAdd { offset: Operand::Value(_), .. }));
    assert_eq!(variable_offsets, 2, "one x + 4i, one out + 4i:\n{opt}");
    runs_the_same(&module, &opt, r#"{"grid": [64,1,1], "block": [64,1,1], "buffers": {"x": {"type": "i32", "iota": true, "len": 192}, "out": {"type": "i32", "len": 64}},
            "args": {"x": "@x", "out": "@out"}}"#);
}

/// The op kinds of the kernel's entry block, in order: 'L' load, 'S' store,
/// 'u' anything else.
fn entry_shape(module: &Module) -> String {
    module.functions[0].blocks[0]
        .insts
        .iter()
        .map(|i| match i.op {
            Op::Load { .. } => 'L',
            Op::Store { .. } => 'S',
            _ => 'u',
        })
        .filter(|c| *c != 'u')
        .collect()
}

#[test]
fn loads_cluster_ahead_of_their_uses_but_never_cross_a_store() {
    // Four loads, each used at once; a store to the array they read, then
    // two more loads of it that must see the store.
    let module = parse(
        "kernel @k(%x: ptr<global>, %out: ptr<global>) {
entry:
  %t = workitem_id x
  %i = zext i32 %t to i64
  %a = shl i64 %i, 4
  %p0 = ptradd %x, %a
  %v0 = load i32 %p0
  %s0 = mul i32 %v0, 3
  %p1 = ptradd %p0, 4
  %v1 = load i32 %p1
  %s1 = add i32 %s0, %v1
  %p2 = ptradd %p0, 8
  %v2 = load i32 %p2
  %s2 = mul i32 %s1, %v2
  %p3 = ptradd %p0, 12
  %v3 = load i32 %p3
  %s3 = add i32 %s2, %v3
  %p1b = ptradd %p0, 4
  store i32 %s3, %p1b
  %v4 = load i32 %p1b
  %s4 = add i32 %s3, %v4
  %v5 = load i32 %p2
  %s5 = xor i32 %s4, %v5
  %q = ptradd %out, %a
  store i32 %s5, %q
  ret
}
",
    );
    let mut opt = module.clone();
    assert!(opt::schedule::run(&mut opt.functions[0]), "the loads move");
    // The first four loads run ahead of the first use; the store keeps the
    // last two after it.
    assert_eq!(entry_shape(&opt), "LLLLSLLS");
    let uses_before_last_load = opt.functions[0].blocks[0].insts.iter().take_while(|i| !matches!(i.op, Op::Store { .. })).position(|i| matches!(i.op, Op::Binary { op: mir::BinOp::Mul, ty: mir::Type::I32, .. }));
    let fourth_load = opt.functions[0].blocks[0].insts.iter().enumerate().filter(|(_, i)| matches!(i.op, Op::Load { .. })).nth(3).unwrap().0;
    assert!(uses_before_last_load.unwrap() > fourth_load, "{}", opt);
    assert!(!opt::schedule::run(&mut opt.functions[0]), "a second run changes nothing");
    assert!(mir::verify::verify(&opt).is_ok(), "verified");
    runs_the_same(&module, &opt, r#"{"grid": [64,1,1], "block": [64,1,1], "buffers": {"x": {"type": "i32", "iota": true, "len": 1024}, "out": {"type": "i32", "len": 1024}},
            "args": {"x": "@x", "out": "@out"}}"#);
}

#[test]
fn at_most_a_dozen_loads_wait_for_their_uses() {
    // Twenty loads, each summed right after it: the thirteenth may not go
    // above the first one's use, so at most twelve results wait at once.
    let mut text = String::from("kernel @k(%x: ptr<global>, %out: ptr<global>) {\nentry:\n  %t = workitem_id x\n  %i = zext i32 %t to i64\n  %a = shl i64 %i, 7\n  %p = ptradd %x, %a\n  %s0 = add i32 0, 0\n");
    for k in 0..20 {
        text += &format!("  %p{k} = ptradd %p, {}\n  %v{k} = load i32 %p{k}\n  %s{} = add i32 %s{k}, %v{k}\n", 4 * k, k + 1);
    }
    text += "  %q = ptradd %out, %a\n  store i32 %s20, %q\n  ret\n}\n";
    let module = parse(&text);
    let mut opt = module.clone();
    opt::schedule::run(&mut opt.functions[0]);
    let mut waiting = 0usize;
    let mut most = 0usize;
    let mut loaded = std::collections::HashSet::new();
    for inst in &opt.functions[0].blocks[0].insts {
        match (&inst.op, inst.result) {
            (Op::Load { .. }, Some(r)) => {
                loaded.insert(r);
                waiting += 1;
                most = most.max(waiting);
            }
            (op, _) => {
                for o in mir::op_operands(op) {
                    if let Operand::Value(v) = o {
                        if loaded.remove(v) {
                            waiting -= 1;
                        }
                    }
                }
            }
        }
    }
    assert!((12..=13).contains(&most), "{most} loads waited at once:\n{opt}");
    runs_the_same(&module, &opt, r#"{"grid": [8,1,1], "block": [8,1,1], "buffers": {"x": {"type": "i32", "iota": true, "len": 2048}, "out": {"type": "i32", "len": 512}},
            "args": {"x": "@x", "out": "@out"}}"#);
}

#[test]
fn loads_used_in_reverse_order_stay_ahead_of_their_uses() {
    // The first load's first use is the last instruction: the in-flight
    // bound must not push later loads past their own (earlier) uses.
    let mut text = String::from("kernel @k(%x: ptr<global>, %out: ptr<global>) {\nentry:\n  %t = workitem_id x\n  %i = zext i32 %t to i64\n  %a = shl i64 %i, 7\n  %p = ptradd %x, %a\n");
    for k in 0..20 {
        text += &format!("  %p{k} = ptradd %p, {}\n  %v{k} = load i32 %p{k}\n", 4 * k);
    }
    text += "  %s19 = add i32 %v19, 1\n";
    for k in (0..19).rev() {
        text += &format!("  %s{k} = add i32 %s{}, %v{k}\n", k + 1);
    }
    text += "  %q = ptradd %out, %a\n  store i32 %s0, %q\n  ret\n}\n";
    let module = parse(&text);
    let mut opt = module.clone();
    opt::schedule::run(&mut opt.functions[0]);
    assert!(mir::verify::verify(&opt).is_ok(), "verified:\n{opt}");
    runs_the_same(&module, &opt, r#"{"grid": [8,1,1], "block": [8,1,1], "buffers": {"x": {"type": "i32", "iota": true, "len": 2048}, "out": {"type": "i32", "len": 512}},
            "args": {"x": "@x", "out": "@out"}}"#);
}

#[test]
fn slots_only_loaded_and_stored_become_values() {
    // %j (through its generic cast) and %s are promoted: the loop gets block
    // parameters for them. %a is indexed by a variable and stays in memory.
    let module = parse(
        "kernel @k(%out: ptr<global>) {
entry:
  %j = stack_slot 4, align 4
  %s = stack_slot 4, align 4
  %a = stack_slot 16, align 4
  %t = workitem_id x
  %jg = addrspacecast ptr<private> %j to ptr
  store i32 0, %jg
  store i32 7, %s
  br head
head:
  %jv = load i32 %jg
  %c = icmp slt i32 %jv, 4
  brif %c, body, done
body:
  %sv = load i32 %s
  %x = add i32 %sv, %t
  %x2 = add i32 %x, %jv
  store i32 %x2, %s
  %off = mul i32 %jv, 4
  %pa = ptradd %a, %off
  store i32 %x2, %pa
  %jn = add i32 %jv, 1
  store i32 %jn, %jg
  br head
done:
  %r = load i32 %s
  %p1 = ptradd %a, 8
  %r2 = load i32 %p1
  %sum = add i32 %r, %r2
  %ti = zext i32 %t to i64
  %o = shl i64 %ti, 2
  %q = ptradd %out, %o
  store i32 %sum, %q
  ret
}
",
    );
    let promoted = promoted(&module);
    let f = &promoted.functions[0];
    let accesses = f.blocks.iter().flat_map(|b| &b.insts).filter(|i| matches!(i.op, Op::Load { .. } | Op::Store { .. })).count();
    assert_eq!(accesses, 3, "the store into %a, its load, the output store:\n{promoted}");
    let head = f.blocks.iter().find(|b| b.name == "head").unwrap();
    assert_eq!(head.params.len(), 2, "j and s meet at the loop head:\n{promoted}");
    runs_the_same(&module, &promoted, r#"{"grid": [64,1,1], "block": [16,1,1], "buffers": {"out": {"type": "i32", "len": 64}}, "args": {"out": "@out"}}"#);
}

#[test]
fn a_pointer_slot_that_may_be_read_unwritten_keeps_the_slots() {
    let module = parse(
        "kernel @k(%out: ptr<global>) {
entry:
  %p = stack_slot 8, align 8
  %t = workitem_id x
  %c = icmp eq i32 %t, 0
  brif %c, set, join
set:
  store ptr<global> %out, %p
  br join
join:
  %c2 = icmp ne i32 %t, 0
  brif %c2, done, use
use:
  %q = load ptr<global> %p
  store i32 1, %q
  br done
done:
  ret
}
",
    );
    let mut f = module.functions[0].clone();
    assert!(!opt::promote::run(&mut f));
    assert_eq!(f.values.len(), module.functions[0].values.len(), "no values left behind");
}

/// A slot holding a vector field and a field stored as an integer and read
/// as a float of its size (a by-value struct copied into a callee's local as
/// clang's SPIR-V and the front end write it) is promoted: no slot access is
/// left, a bitcast reads the float, and the kernel computes the same.
#[test]
fn vector_fields_and_same_size_puns_are_promoted() {
    let module = parse(
        "kernel @k(%out: ptr<global>) {
entry:
  %p = stack_slot 32, align 16
  %t = workitem_id x
  %v = make <4 x i32> %t, 1, 2, 3
  store <4 x i32> %v, %p
  %p16 = ptradd %p, 16
  %bits = shl i32 %t, 20
  store i32 %bits, %p16
  %p20 = ptradd %p, 20
  store i8 5, %p20
  %w = load <4 x i32> %p
  %w1 = extract %w, 1
  %w0 = extract %w, 0
  %f = load f32 %p16
  %c = load i8 %p20
  %c32 = zext i8 %c to i32
  %s = add i32 %w0, %w1
  %s2 = add i32 %s, %c32
  %sf = sitofp i32 %s2 to f32
  %r = fadd f32 %sf, %f
  %o = shl i32 %t, 2
  %q = ptradd %out, %o
  store f32 %r, %q
  ret
}
",
    );
    let promoted = promoted(&module);
    let slot_accesses = count(&promoted, |op| matches!(op, Op::Load { .. }) || matches!(op, Op::Store { ty, .. } if *ty != mir::Type::F32));
    assert_eq!(slot_accesses, 0, "every slot access promoted:\n{promoted}");
    assert_eq!(count(&promoted, |op| matches!(op, Op::Cast { op: mir::CastOp::Bitcast, .. })), 1, "the float read through a bitcast:\n{promoted}");
    runs_the_same(&module, &promoted, r#"{"grid": [64,1,1], "block": [64,1,1], "buffers": {"out": {"type": "f32", "len": 64}}, "args": {"out": "@out"}}"#);
}

fn vector_accesses(module: &Module, store: bool) -> usize {
    count(module, |op| match op {
        Op::Load { ty, .. } if !store => matches!(ty, mir::Type::Vector(..)),
        Op::Store { ty, .. } if store => matches!(ty, mir::Type::Vector(..)),
        _ => false,
    })
}

#[test]
fn neighbouring_global_accesses_merge_into_vector_ones() {
    // Five loads at consecutive offsets (one of four and a single one left),
    // four stores at consecutive offsets through another base (one of four),
    // then two stores with a store through a second pointer between them,
    // which may alias (they stay apart: the launch makes %y alias %out).
    let module = parse(
        "kernel @k(%x: ptr<global>, %out: ptr<global>, %y: ptr<global>) {
entry:
  %t = workitem_id x
  %i = zext i32 %t to i64
  %a = shl i64 %i, 5
  %p0 = ptradd %x, %a
  %v0 = load f32 %p0
  %p1 = ptradd %p0, 4
  %v1 = load f32 %p1
  %p2 = ptradd %p0, 8
  %v2 = load f32 %p2
  %p3 = ptradd %p0, 12
  %v3 = load f32 %p3
  %p4 = ptradd %p0, 16
  %v4 = load f32 %p4
  %s0 = fadd f32 %v0, %v4
  %q0 = ptradd %out, %a
  store f32 %s0, %q0
  %q1 = ptradd %q0, 4
  store f32 %v3, %q1
  %q2 = ptradd %q0, 8
  store f32 %v2, %q2
  %q3 = ptradd %q0, 12
  store f32 %v1, %q3
  %q4 = ptradd %q0, 16
  store f32 %v1, %q4
  %r = ptradd %y, %a
  %r5 = ptradd %r, 20
  store f32 %v0, %r5
  %q5 = ptradd %q0, 20
  store f32 %v4, %q5
  ret
}
",
    );
    let opt = optimized(&module, OptLevel::O2);
    assert_eq!(vector_accesses(&opt, false), 1, "one vector load: {opt}");
    assert_eq!(vector_accesses(&opt, true), 1, "one vector store, the stores around the aliasing one apart: {opt}");
    assert_eq!(count(&opt, |op| matches!(op, Op::Store { ty: mir::Type::F32, .. })), 3, "{opt}");
    assert_eq!(count(&opt, |op| matches!(op, Op::Load { ty: mir::Type::F32, .. })), 1, "{opt}");
    for alias in ["@out", "@other"] {
        runs_the_same(
            &module,
            &opt,
            &format!(
                r#"{{"grid": [64,1,1], "block": [64,1,1], "buffers": {{"x": {{"type": "f32", "iota": true, "len": 2048}}, "out": {{"type": "f32", "len": 2048}}, "other": {{"type": "f32", "len": 2048}}}},
            "args": {{"x": "@x", "out": "@out", "y": "{alias}"}}}}"#
            ),
        );
    }
}

#[test]
fn loads_do_not_merge_across_a_store() {
    let module = parse(
        "kernel @k(%x: ptr<global>) {
entry:
  %t = workitem_id x
  %i = zext i32 %t to i64
  %a = shl i64 %i, 3
  %p0 = ptradd %x, %a
  %v0 = load i32 %p0
  %p1 = ptradd %p0, 4
  store i32 7, %p1
  %v1 = load i32 %p1
  %s = add i32 %v0, %v1
  store i32 %s, %p0
  ret
}
",
    );
    let opt = optimized(&module, OptLevel::O2);
    assert_eq!(vector_accesses(&opt, false) + vector_accesses(&opt, true), 0, "{opt}");
    runs_the_same(&module, &opt, r#"{"grid": [64,1,1], "block": [64,1,1], "buffers": {"x": {"type": "i32", "iota": true, "len": 1024}}, "args": {"x": "@x"}}"#);
}

#[test]
fn disjoint_ors_become_adds_that_gvn_shares() {
    // `or (8 * i), 3` and `add (8 * i), 3` are one value; `or` of a value
    // whose low bits are not known to be clear stays an `or`.
    let module = parse(
        "kernel @k(%out: ptr<global>, %n: i32) {
entry:
  %t = workitem_id x
  %i = shl i32 %t, 3
  %a = or i32 %i, 3
  %b = add i32 %i, 3
  %pa = mul i32 %a, %n
  %pb = mul i32 %n, %b
  %c = or i32 %t, 3
  %s1 = add i32 %pa, %pb
  %s = add i32 %s1, %c
  %o = zext i32 %t to i64
  %o4 = shl i64 %o, 2
  %dst = ptradd %out, %o4
  store i32 %s, %dst
  ret
}
",
    );
    let opt = optimized(&module, OptLevel::O2);
    assert_eq!(count(&opt, |op| matches!(op, Op::Binary { op: mir::BinOp::Mul, .. })), 1, "{opt}");
    assert_eq!(count(&opt, |op| matches!(op, Op::Binary { op: mir::BinOp::Or, .. })), 1, "{opt}");
    runs_the_same(&module, &opt, r#"{"grid": [64,1,1], "block": [64,1,1], "buffers": {"out": {"type": "i32", "len": 64}}, "args": {"out": "@out", "n": 37}}"#);
}

/// `out[4 * g + k]` as clang's SPIR-V writes it, `zext (or (shl g, 2), k)`
/// (and a sign-extended twin at a negative index): the extension of a sum
/// that cannot carry becomes `zext (shl g, 2) + k`, the constant moves to
/// the access, and the four stores through one base merge into one. An
/// `or` whose constant overlaps the known zeros, and an extension that is
/// not only an address, stay.
#[test]
fn extended_disjoint_sums_become_offsets_of_one_base() {
    let module = parse(
        "kernel @k(%out: ptr<global>, %mid: ptr<global>, %keep: ptr<global>) {
entry:
  %g = workitem_id x
  %i = shl i32 %g, 2
  %z0 = zext i32 %i to i64
  %o0 = mul i64 %z0, 4
  %p0 = ptradd %out, %o0
  store i32 %g, %p0
  %i1 = or i32 %i, 1
  %z1 = zext i32 %i1 to i64
  %o1 = mul i64 %z1, 4
  %p1 = ptradd %out, %o1
  store i32 %i1, %p1
  %i2 = add i32 %i, 2
  %z2 = zext i32 %i2 to i64
  %o2 = shl i64 %z2, 2
  %p2 = ptradd %out, %o2
  store i32 %i2, %p2
  %i3 = or i32 %i, 3
  %z3 = zext i32 %i3 to i64
  %o3 = mul i64 %z3, 4
  %p3 = ptradd %out, %o3
  store i32 %i3, %p3
  %m = sub i32 %g, 32
  %n = shl i32 %m, 1
  %s0 = sext i32 %n to i64
  %d0 = mul i64 %s0, 4
  %midc = ptradd %mid, 256
  %q0 = ptradd %midc, %d0
  store i32 %m, %q0
  %n1 = or i32 %n, 1
  %s1 = sext i32 %n1 to i64
  %d1 = mul i64 %s1, 4
  %q1 = ptradd %midc, %d1
  store i32 %n1, %q1
  %w = or i32 %i, 4
  %zw = zext i32 %w to i64
  %ow = mul i64 %zw, 4
  %pw = ptradd %keep, %ow
  store i32 %w, %pw
  %v = or i32 %i, 1
  %zv = zext i32 %v to i64
  %kv = ptradd %keep, %o0
  store i64 %zv, %kv
  ret
}
",
    );
    let opt = optimized(&module, OptLevel::O2);
    let vector_stores: Vec<String> = opt.functions[0].blocks[0].insts.iter().filter_map(|i| match &i.op {
        Op::Store { ty: mir::Type::Vector(_, n), .. } => Some(n.to_string()),
        _ => None,
    }).collect();
    assert_eq!(vector_stores, ["4", "2"], "out[4g..4g+3] and mid[2m..2m+1] each one store:\n{opt}");
    assert_eq!(count(&opt, |op| matches!(op, Op::Binary { op: mir::BinOp::Or, .. })), 1, "`or %i, 4` stays:\n{opt}");
    let zext_of_sum = count(&opt, |op| matches!(op, Op::Cast { op: mir::CastOp::ZExt, arg: Operand::Value(v), .. } if opt.functions[0].values[v.0 as usize].name != "i"));
    assert_eq!(zext_of_sum, 2, "%zw (overlapping constant) and %zv (stored, not an address) stay extensions of sums:\n{opt}");
    runs_the_same(
        &module,
        &opt,
        r#"{"grid": [64,1,1], "block": [64,1,1], "buffers": {"out": {"type": "i32", "len": 256}, "mid": {"type": "i32", "len": 256}, "keep": {"type": "i32", "len": 1024}},
            "args": {"out": "@out", "mid": "@mid", "keep": "@keep"}}"#,
    );
}

#[test]
fn computations_both_arms_make_move_above_the_branch() {
    // Both arms compute `(i + 2) * n` (and the sum feeding it); one copy is
    // left, above the branch; `x * 5` (only in one arm) stays in its arm.
    let module = parse(
        "kernel @k(%out: ptr<global>, %n: i32) {
entry:
  %t = workitem_id x
  %c = icmp ult i32 %t, 17
  brif %c, left, right
left:
  %a = add i32 %t, 2
  %p = mul i32 %a, %n
  %x = mul i32 %p, 5
  br join(%x)
right:
  %b = add i32 %t, 2
  %q = mul i32 %n, %b
  %y = xor i32 %q, 9
  br join(%y)
join(%v: i32):
  %o = zext i32 %t to i64
  %o4 = shl i64 %o, 2
  %dst = ptradd %out, %o4
  store i32 %v, %dst
  ret
}
",
    );
    let opt = optimized(&module, OptLevel::O2);
    let entry = &opt.functions[0].blocks[0];
    assert!(entry.insts.iter().any(|i| matches!(i.op, Op::Binary { op: mir::BinOp::Mul, rhs: Operand::Value(_), .. })), "{opt}");
    assert_eq!(count(&opt, |op| matches!(op, Op::Binary { op: mir::BinOp::Mul, .. })), 2, "{opt}");
    assert_eq!(count(&opt, |op| matches!(op, Op::Binary { op: mir::BinOp::Add, ty: mir::Type::I32, .. })), 1, "{opt}");
    runs_the_same(&module, &opt, r#"{"grid": [64,1,1], "block": [64,1,1], "buffers": {"out": {"type": "i32", "len": 64}}, "args": {"out": "@out", "n": 37}}"#);
}

#[test]
fn hoisting_works_through_nested_branches() {
    // The outer arms share `t + 2`; the inner arms of the left one share
    // `(t + 2) * n` (an arm that lost an instruction to the branch above
    // receives one from the branch below it).
    let module = parse(
        "kernel @k(%out: ptr<global>, %n: i32) {
entry:
  %t = workitem_id x
  %c = icmp ult i32 %t, 17
  brif %c, left, right
left:
  %a = add i32 %t, 2
  %d = icmp ult i32 %t, 5
  brif %d, ll, lr
ll:
  %p = mul i32 %a, %n
  br join(%p)
lr:
  %q = mul i32 %n, %a
  %q1 = xor i32 %q, 3
  br join(%q1)
right:
  %b = add i32 %t, 2
  %y = xor i32 %b, 9
  br join(%y)
join(%v: i32):
  %o = zext i32 %t to i64
  %o4 = shl i64 %o, 2
  %dst = ptradd %out, %o4
  store i32 %v, %dst
  ret
}
",
    );
    let opt = optimized(&module, OptLevel::O2);
    assert_eq!(count(&opt, |op| matches!(op, Op::Binary { op: mir::BinOp::Mul, .. })), 1, "{opt}");
    assert_eq!(count(&opt, |op| matches!(op, Op::Binary { op: mir::BinOp::Add, ty: mir::Type::I32, .. })), 1, "{opt}");
    runs_the_same(&module, &opt, r#"{"grid": [64,1,1], "block": [64,1,1], "buffers": {"out": {"type": "i32", "len": 64}}, "args": {"out": "@out", "n": 37}}"#);
}

/// Two `__local` tiles indexed alike, `a[ty][tx]` and `b[ty][tx]` as clang
/// writes them (`(slot + ty * 64) + tx * 4`): reassociate makes each
/// `slot + (ty * 64 + tx * 4)`, and gvn leaves one sum for both, so
/// selection has one address register for the two stores (the slots'
/// addresses go to the offset field).
#[test]
fn local_tiles_indexed_alike_share_one_address() {
    let module = parse(
        r#"kernel @k(%out: ptr<global>) {
entry:
  %a = lds_slot 1024, align 4
  %b = lds_slot 1024, align 4
  %tx = workitem_id x
  %ty = workitem_id y
  %row = shl i32 %ty, 6
  %col = shl i32 %tx, 2
  %ar = ptradd %a, %row
  %pa = ptradd %ar, %col
  store i32 %tx, %pa
  %br = ptradd %b, %row
  %pb = ptradd %br, %col
  %s = xor i32 %tx, %ty
  store i32 %s, %pb
  barrier
  %x = load i32 %ar
  %y = load i32 %pb
  %z = mul i32 %x, %y
  %lin = add i32 %row, %col
  %o = zext i32 %lin to i64
  %dst = ptradd %out, %o
  store i32 %z, %dst
  ret
}"#,
    );
    let opt = optimized(&module, OptLevel::O2);
    let sums = count(&opt, |op| matches!(op, Op::Binary { op: mir::BinOp::Add, ty: amdgpu_cg::abi::Type::I32, .. }));
    // The one sum is shared by the two stores' addresses and by %lin.
    assert_eq!(sums, 1, "{opt}");
    // Each local store's address is `ptradd slot, sum`, with the same sum.
    let insts: Vec<&mir::Inst> = opt.functions[0].blocks.iter().flat_map(|b| &b.insts).collect();
    let def = |v: &Operand| insts.iter().find(|i| Operand::Value(i.result.unwrap_or(mir::Value(u32::MAX))) == *v).map(|i| &i.op);
    let mut offsets = Vec::new();
    for inst in &insts {
        let Op::Store { ptr, .. } = &inst.op else { continue };
        if let Some(Op::PtrAdd { ptr: base, offset }) = def(ptr) {
            if matches!(def(base), Some(Op::LdsSlot { .. })) {
                offsets.push(offset.clone());
            }
        }
    }
    assert!(offsets.len() == 2 && offsets[0] == offsets[1], "{opt}");
    runs_the_same(&module, &opt, r#"{"grid": [16,16,1], "block": [16,16,1], "buffers": {"out": {"type": "i32", "len": 256}}, "args": {"out": "@out"}}"#);
}

/// The module after licm alone (each function once), checked by the
/// verifier.
fn after_licm(module: &Module) -> Module {
    let mut out = module.clone();
    for func in &mut out.functions {
        opt::licm::run(func);
    }
    mir::verify::verify(&out).unwrap_or_else(|e| panic!("{e:?}\n{out}"));
    out
}

/// The instructions of `func`'s blocks inside the loop headed by the block
/// named `header` (by the natural loops of the function's own CFG).
fn loop_instructions(func: &mir::Function, header: &str) -> Vec<String> {
    let cfg = mir::cfg::Cfg::new(func);
    let forest = mir::cfg::LoopForest::new(&cfg, &cfg.dominators());
    let h = func.block_by_name(header).unwrap_or_else(|| panic!("no block '{header}'\n{func}")).0 as usize;
    let l = forest.loops.iter().position(|l| l.header == h).unwrap_or_else(|| panic!("'{header}' heads no loop\n{func}"));
    let blocks = &forest.blocks()[l];
    blocks.iter().flat_map(|&b| &func.blocks[b].insts).map(|i| mir::print::InstDisplay { func, inst: i }.to_string()).collect()
}

/// Runs both modules with one launch: the same buffers, and the work each
/// did (instructions the interpreter executed, all work-items together).
fn work_before_and_after(before: &Module, after: &Module, launch_json: &str) -> (u64, u64) {
    let launch = spec(launch_json);
    let (want, got) = (launch::run(before, &launch).unwrap(), launch::run(after, &launch).unwrap_or_else(|e| panic!("{e}\n{after}")));
    same_results(&want, &got).unwrap_or_else(|e| panic!("{e}\n{after}"));
    (want.stats.instructions, got.stats.instructions)
}

#[test]
fn loop_invariant_arithmetic_leaves_the_loop() {
    // `n * m`, `+ t`, `^ 12345` and the 64-bit square of that do not change
    // between iterations; the sums with the counter do. The extension moves
    // because the square reads it; `lane_id`, its shift (which selection
    // fuses into the add reading it) and the truncation stay, since moving
    // them alone would save nothing. The entry block branches to the loop
    // unconditionally: it is the preheader.
    let module = parse(
        "kernel @k(%out: ptr<global>, %n: i32, %m: i32) {
entry:
  %t = workitem_id x
  br loop(0, 0)
loop(%j: i32, %acc: i32):
  %a = mul i32 %n, %m
  %b = add i32 %a, %t
  %c = xor i32 %b, 12345
  %w = zext i32 %c to i64
  %wm = mul i64 %w, %w
  %lane = lane_id
  %l2 = shl i32 %lane, 1
  %s = add i32 %j, %c
  %s2 = add i32 %s, %l2
  %sw = trunc i64 %wm to i32
  %s3 = sub i32 %s2, %sw
  %acc2 = add i32 %acc, %s3
  %j2 = add i32 %j, 1
  %more = icmp slt i32 %j2, 10
  brif %more, loop(%j2, %acc2), exit
exit:
  %o = zext i32 %t to i64
  %o4 = shl i64 %o, 2
  %dst = ptradd %out, %o4
  store i32 %acc, %dst
  ret
}
",
    );
    let hoisted = after_licm(&module);
    let func = &hoisted.functions[0];
    let moved: Vec<String> = func.blocks[0].insts.iter().skip(1).map(|i| func.value_name(i.result.unwrap()).to_string()).collect();
    assert_eq!(moved, ["a", "b", "c", "w", "wm"], "{hoisted}");
    assert_eq!(loop_instructions(func, "loop").len(), 14 - 5, "{hoisted}");
    assert_eq!(func.blocks.len(), module.functions[0].blocks.len(), "the entry block was the preheader\n{hoisted}");
    let launch = r#"{"grid": [64,1,1], "block": [64,1,1], "buffers": {"out": {"type": "i32", "len": 64}}, "args": {"out": "@out", "n": 37, "m": -3}}"#;
    let (before, after) = work_before_and_after(&module, &hoisted, launch);
    // The five run once per work-item instead of once in each of ten
    // iterations.
    assert_eq!(before - after, 64 * 5 * 9, "{before} -> {after}");
    // The whole pipeline keeps them out of the loop too.
    for level in [OptLevel::O1, OptLevel::O2] {
        let opt = optimized(&module, level);
        assert!(loop_instructions(&opt.functions[0], "loop").iter().all(|i| !i.contains("mul") && !i.contains("xor")), "{opt}");
        runs_the_same(&module, &opt, launch);
    }
}

#[test]
fn a_guarded_loop_gets_a_preheader_that_the_zero_trip_path_skips() {
    // clang's shape: the guard branches straight into the loop (its header
    // has parameters) or past it. The invariant work goes to a new block on
    // the loop's side of the guard, so a work-item that skips the loop does
    // not compute it.
    let module = parse(
        "kernel @k(%out: ptr<global>, %n: i32, %scale: f32) {
entry:
  %t = workitem_id x
  %trip = add i32 %n, %t
  %go = icmp sgt i32 %trip, 0
  %tf = uitofp i32 %t to f32
  brif %go, loop(0, 0.0), exit(-1.0)
loop(%j: i32, %acc: f32):
  %k = fmul f32 %tf, %scale
  %k2 = fadd f32 %k, 0.5
  %r = rcp f32 %scale
  %jf = sitofp i32 %j to f32
  %x = fmul f32 %jf, %k2
  %x2 = fadd f32 %x, %r
  %acc2 = fadd f32 %acc, %x2
  %j2 = add i32 %j, 1
  %more = icmp slt i32 %j2, %trip
  brif %more, loop(%j2, %acc2), exit(%acc2)
exit(%v: f32):
  %o = zext i32 %t to i64
  %o4 = shl i64 %o, 2
  %dst = ptradd %out, %o4
  store f32 %v, %dst
  ret
}
",
    );
    let hoisted = after_licm(&module);
    let func = &hoisted.functions[0];
    assert_eq!(func.blocks.len(), 4, "one new block\n{hoisted}");
    let pre = &func.blocks[3];
    assert_eq!(pre.insts.len(), 3, "k, k2, r\n{hoisted}");
    assert!(matches!(&pre.term, mir::Terminator::Br(call) if call.block == func.block_by_name("loop").unwrap() && call.args.len() == 2), "{hoisted}");
    assert!(matches!(&func.blocks[0].term, mir::Terminator::BrIf { then_to, .. } if then_to.block.0 == 3), "the guard enters through it\n{hoisted}");
    assert_eq!(loop_instructions(func, "loop").len(), 6, "{hoisted}");
    let launch = |n: i32| format!(r#"{{"grid": [64,1,1], "block": [64,1,1], "buffers": {{"out": {{"type": "f32", "len": 64}}}}, "args": {{"out": "@out", "n": {n}, "scale": 0.75}}}}"#);
    // n = -100: no work-item enters the loop, and none does more work.
    let (before, after) = work_before_and_after(&module, &hoisted, &launch(-100));
    assert_eq!(after, before, "the zero-trip path runs what it ran");
    // n = -40: some enter (trip counts 1..23), 64 - 41 = 23 of them; each
    // saves 3 instructions per iteration after the first and pays one branch.
    let (before, after) = work_before_and_after(&module, &hoisted, &launch(-40));
    let iterations: u64 = (1..=23).sum();
    assert_eq!(before - after, 3 * (iterations - 23) - 23, "{before} -> {after}");
    for level in [OptLevel::O1, OptLevel::O2] {
        let opt = optimized(&module, level);
        assert!(loop_instructions(&opt.functions[0], "loop").iter().all(|i| !i.contains("rcp") && !i.contains("fadd f32 %k")), "{opt}");
        for n in [-100, -40, 5] {
            runs_the_same(&module, &opt, &launch(n));
        }
    }
}

#[test]
fn a_division_that_may_fail_moves_only_from_where_it_would_have_run() {
    // `1000 / %d` in a block the loop enters only when %d is not zero stays
    // there (hoisted, %d = 0 would fail on entry); `%n / %e` in the header
    // runs on every entry anyway and moves; `%n / 7` cannot fail and moves
    // from the conditional block. (The compare stays: it is only the
    // branch's condition, which selection makes at the branch.)
    let module = parse(
        "kernel @k(%out: ptr<global>, %n: i32, %d: i32, %e: i32) {
entry:
  %t = workitem_id x
  br loop(0, 0)
loop(%j: i32, %acc: i32):
  %h = udiv i32 %n, %e
  %nz = icmp ne i32 %d, 0
  brif %nz, then, join(%h)
then:
  %q = sdiv i32 1000, %d
  %q7 = sdiv i32 %n, 7
  %qs = add i32 %q, %q7
  br join(%qs)
join(%v: i32):
  %s = add i32 %v, %j
  %acc2 = add i32 %acc, %s
  %j2 = add i32 %j, 1
  %more = icmp slt i32 %j2, %t
  brif %more, loop(%j2, %acc2), exit
exit:
  %o = zext i32 %t to i64
  %o4 = shl i64 %o, 2
  %dst = ptradd %out, %o4
  store i32 %acc2, %dst
  ret
}
",
    );
    let hoisted = after_licm(&module);
    let inside = loop_instructions(&hoisted.functions[0], "loop");
    assert!(inside.iter().any(|i| i.contains("sdiv i32 1000, %d")), "{hoisted}");
    assert!(!inside.iter().any(|i| i.contains("udiv") || i.contains("sdiv i32 %n, 7")), "{hoisted}");
    assert_eq!(inside.len(), 7, "{hoisted}");
    let launch = |d: i32| format!(r#"{{"grid": [64,1,1], "block": [64,1,1], "buffers": {{"out": {{"type": "i32", "len": 64}}}}, "args": {{"out": "@out", "n": 5000, "d": {d}, "e": 3}}}}"#);
    for d in [0, 9, -1] {
        work_before_and_after(&module, &hoisted, &launch(d));
        for level in [OptLevel::O1, OptLevel::O2] {
            runs_the_same(&module, &optimized(&module, level), &launch(d));
        }
    }
}

#[test]
fn nested_loops_hoist_as_far_as_their_operands_allow() {
    // In the inner loop: `n * 3` depends on nothing of either loop and
    // leaves both; `i * n` depends on the outer counter and goes to the
    // inner loop's preheader, inside the outer loop; `max(i * n, 1)` follows
    // it. The inner loop's guard makes a preheader too.
    let module = parse(
        "kernel @k(%out: ptr<global>, %n: i32) {
entry:
  %t = workitem_id x
  br outer(0, 0)
outer(%i: i32, %acc: i32):
  %go = icmp slt i32 %i, %t
  brif %go, inner(0, %acc), next(%acc)
inner(%j: i32, %a: i32):
  %n3 = mul i32 %n, 3
  %row = mul i32 %i, %n
  %row1 = smax i32 %row, 1
  %x = add i32 %row1, %j
  %y = add i32 %x, %n3
  %a2 = add i32 %a, %y
  %j2 = add i32 %j, 1
  %more = icmp slt i32 %j2, 4
  brif %more, inner(%j2, %a2), next(%a2)
next(%v: i32):
  %i2 = add i32 %i, 1
  %again = icmp slt i32 %i2, 6
  brif %again, outer(%i2, %v), exit
exit:
  %o = zext i32 %t to i64
  %o4 = shl i64 %o, 2
  %dst = ptradd %out, %o4
  store i32 %v, %dst
  ret
}
",
    );
    let hoisted = after_licm(&module);
    let func = &hoisted.functions[0];
    let inner = loop_instructions(func, "inner");
    let outer = loop_instructions(func, "outer");
    assert_eq!(inner.len(), 5, "x, y, a2, j2, more\n{hoisted}");
    assert!(outer.iter().any(|i| i.contains("mul i32 %i, %n")) && outer.iter().any(|i| i.contains("smax i32 %row, 1")), "{hoisted}");
    assert!(!outer.iter().any(|i| i.contains("mul i32 %n, 3")), "{hoisted}");
    // The outer loop's preheader is the entry block; the inner loop got one.
    assert!(func.blocks[0].insts.iter().any(|i| mir::print::InstDisplay { func, inst: i }.to_string().contains("mul i32 %n, 3")), "{hoisted}");
    assert_eq!(func.blocks.len(), module.functions[0].blocks.len() + 1, "{hoisted}");
    let launch = r#"{"grid": [64,1,1], "block": [64,1,1], "buffers": {"out": {"type": "i32", "len": 64}}, "args": {"out": "@out", "n": 11}}"#;
    let (before, after) = work_before_and_after(&module, &hoisted, launch);
    assert!(after < before, "{before} -> {after}");
    for level in [OptLevel::O1, OptLevel::O2] {
        runs_the_same(&module, &optimized(&module, level), launch);
    }
    // A second run finds nothing more to move.
    let mut again = hoisted.clone();
    assert!(!opt::licm::run(&mut again.functions[0]), "{again}");
}

#[test]
fn memory_collectives_and_loop_values_stay_in_the_loop() {
    // A load (a store in the loop may change it), a wave reduction (it
    // depends on which lanes are active) and an addrspacecast from flat
    // in a block that does not run on every iteration stay; nothing else
    // is invariant.
    let module = parse(
        "kernel @k(%buf: ptr<global>, %g: ptr, %n: i32) {
entry:
  %t = workitem_id x
  br loop(0)
loop(%j: i32):
  %v = load i32 %buf
  %r = wave_reduce add i32 %n
  %w = add i32 %v, %r
  store i32 %w, %buf
  %odd = and i32 %j, 1
  %c = icmp ne i32 %odd, 0
  brif %c, cast, join
cast:
  %gp = addrspacecast ptr %g to ptr<global>
  store i32 %j, %gp
  br join
join:
  %j2 = add i32 %j, 1
  %more = icmp slt i32 %j2, 3
  brif %more, loop(%j2), exit
exit:
  ret
}
",
    );
    let hoisted = after_licm(&module);
    assert_eq!(loop_instructions(&hoisted.functions[0], "loop"), loop_instructions(&module.functions[0], "loop"), "{hoisted}");
}

#[test]
fn the_values_live_into_a_loop_stay_within_the_guard() {
    // Forty invariant products of %x, each added to the sum: moving them all
    // would leave 41 values live into the loop. The guard lets the loop's
    // live-in values (%x and the moved products) take 32 registers, so 31
    // products move (the last ones: readers are decided first) and nine stay,
    // and a second run moves none of them.
    let products = 40;
    let mut text = String::from("kernel @k(%out: ptr<global>, %x: f32) {\nentry:\n  %t = workitem_id x\n  %tf = uitofp i32 %t to f32\n  br loop(0, %tf)\nloop(%j: i32, %acc0: f32):\n");
    for k in 1..=products {
        text.push_str(&format!("  %p{k} = fmul f32 %x, {k}.5\n  %acc{k} = fadd f32 %acc{}, %p{k}\n", k - 1));
    }
    text.push_str(&format!(
        "  %j2 = add i32 %j, 1\n  %more = icmp slt i32 %j2, 3\n  brif %more, loop(%j2, %acc{products}), exit\nexit:\n  %o = zext i32 %t to i64\n  %o4 = shl i64 %o, 2\n  %dst = ptradd %out, %o4\n  store f32 %acc{products}, %dst\n  ret\n}}\n"
    ));
    let module = parse(&text);
    let hoisted = after_licm(&module);
    let func = &hoisted.functions[0];
    let inside = loop_instructions(func, "loop");
    let stayed: Vec<&String> = inside.iter().filter(|i| i.contains("fmul")).collect();
    assert_eq!(stayed.len(), 9, "{hoisted}");
    assert!(stayed.iter().all(|i| (1..=9).any(|k| i.starts_with(&format!("%p{k} =")))), "{stayed:?}");
    let mut again = hoisted.clone();
    assert!(!opt::licm::run(&mut again.functions[0]), "{again}");
    let launch = r#"{"grid": [64,1,1], "block": [64,1,1], "buffers": {"out": {"type": "f32", "len": 64}}, "args": {"out": "@out", "x": 0.25}}"#;
    let (before, after) = work_before_and_after(&module, &hoisted, launch);
    assert_eq!(before - after, 64 * 31 * 2, "{before} -> {after}");
    let opt = optimized(&module, OptLevel::O2);
    assert_eq!(loop_instructions(&opt.functions[0], "loop").iter().filter(|i| i.contains("fmul")).count(), 9, "{opt}");
    runs_the_same(&module, &opt, launch);
}

/// Loads of read-only module data at constant offsets become the bytes'
/// values (each scalar type, a vector, offsets through ptradd chains and
/// negative steps); a load at a divergent offset stays. The interpreter's
/// results are those before the pass.
#[test]
fn loads_of_module_data_at_constant_offsets_fold() {
    let text = r#"data @t, align 8, bytes "0102030405060708f0debc9a78563412000080bf0000c03f6666666666660a40"
data @u, align 4, bytes "0a000000"

kernel @k(%out: ptr<global>) {
entry:
  %i = workitem_id x
  %t = data_addr @t
  %b = load i8 %t
  %p1 = ptradd %t, 8
  %h = load i16 %p1
  %p2 = ptradd %p1, 4
  %w = load i32 %p2
  %p3 = ptradd %t, 8
  %d = load i64 %p3
  %p4 = ptradd %t, 20
  %p5 = ptradd %p4, -4
  %f = load f32 %p5
  %p6 = ptradd %t, 24
  %g = load f64 %p6
  %v = load <2 x f32> %p5
  %u = data_addr @u
  %x = load i32 %u
  %past = ptradd %u, 4
  %o = and i32 %i, 3
  %q = ptradd %t, %o
  %y = load i8 %q
  %b32 = zext i8 %b to i32
  %h32 = zext i16 %h to i32
  %y32 = zext i8 %y to i32
  %d32 = trunc i64 %d to i32
  %dh = lshr i64 %d, 32
  %dh32 = trunc i64 %dh to i32
  %f32 = fptosi f32 %f to i32
  %g32 = fptosi f64 %g to i32
  %v1 = extract %v, 1
  %v32 = fptosi f32 %v1 to i32
  %base = mul i32 %i, 44
  %r = ptradd %out, %base
  store i32 %b32, %r
  %r1 = ptradd %r, 4
  store i32 %h32, %r1
  %r2 = ptradd %r, 8
  store i32 %w, %r2
  %r3 = ptradd %r, 12
  store i32 %d32, %r3
  %r4 = ptradd %r, 16
  store i32 %dh32, %r4
  %r5 = ptradd %r, 20
  store i32 %f32, %r5
  %r6 = ptradd %r, 24
  store i32 %g32, %r6
  %r7 = ptradd %r, 28
  store i32 %v32, %r7
  %r8 = ptradd %r, 32
  store i32 %x, %r8
  %r9 = ptradd %r, 36
  store i32 %y32, %r9
  %r10 = ptradd %r, 40
  %pz = ptrtoint ptr<constant> %past to i64
  %z = trunc i64 %pz to i32
  %nz = icmp ne i32 %z, 0
  %nzi = zext i1 %nz to i32
  store i32 %nzi, %r10
  ret
}
"#;
    let module = parse(text);
    mir::verify::verify(&module).unwrap();
    let opt = optimized(&module, OptLevel::O2);
    // Only the divergent byte load is left.
    assert_eq!(count(&opt, |o| matches!(o, Op::Load { .. })), 1, "{opt}");
    let launch = spec(r#"{"grid": [4,1,1], "block": [4,1,1], "buffers": {"out": {"type": "i32", "len": 44}}, "args": {"out": "@out"}}"#);
    let (want, got) = (launch::run(&module, &launch).unwrap(), launch::run(&opt, &launch).unwrap());
    same_results(&want, &got).unwrap();
    // The values, read off the bytes by hand.
    let words: Vec<u64> = want.buffers[0].bits();
    assert_eq!(&words[..10], &[1, 0xdef0, 0x1234_5678, 0x9abc_def0, 0x1234_5678, 0xffff_ffff, 3, 1, 10, 1]);
}
