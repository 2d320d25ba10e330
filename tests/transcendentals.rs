//! Transcendentals (docs/mir.md, "Transcendentals"): every form on f32, f16
//! (and rcp/rsqrt on f64) over edge values and thousands of others, run on the
//! simulator for every target, each result within the stated bound of the
//! reference (the function in f64, rounded once: what the interpreter
//! computes). The simulator flushes as the hardware does where LLVM says the
//! instructions do not handle subnormals (v_exp_f32 results, v_log_f32
//! inputs), so the accurate forms' scaling is exercised; the instructions are
//! otherwise computed correctly rounded, so the bounds' share for the
//! hardware's own error (1 ulp, the ISA manuals' figure) is not.

use amdgpu_cg::codegen::{self, Options, Report};
use amdgpu_cg::codeobj::{self, CodeObjectTarget, CodeObjectVersion};
use amdgpu_cg::mir::interp::ops::transcendental_acceptable;
use amdgpu_cg::mir::{self, launch::LaunchSpec, Type, UnOp};

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

/// Inputs for an operation, as bit patterns of `ty`.
fn inputs(op: UnOp, ty: &Type, rng: &mut Rng) -> Vec<u64> {
    let bits = |v: f64| -> u64 {
        match ty {
            Type::F16 => u64::from(amdgpu_cg::mir::float::f64_to_f16(v)),
            Type::F32 => u64::from((v as f32).to_bits()),
            _ => v.to_bits(),
        }
    };
    let width = ty.bits();
    let mut v: Vec<u64> = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 1e-40, 1e-45, 3.0, 10.0].iter().map(|&x| bits(x)).collect();
    for _ in 0..2000 {
        let x = match op {
            UnOp::Exp2 | UnOp::Exp2Approx => rng.uniform(-160.0, 130.0),
            UnOp::Exp | UnOp::ExpApprox => rng.uniform(-110.0, 90.0),
            UnOp::SinApprox | UnOp::CosApprox => rng.uniform(-100.0, 100.0),
            // Every bit pattern: every exponent, subnormals, both signs.
            _ => {
                let r = rng.next() >> (64 - width);
                v.push(r);
                continue;
            }
        };
        v.push(bits(x));
    }
    v
}

fn kernel(op: UnOp, ty: &Type) -> String {
    let size = ty.size();
    format!(
        "kernel @k(%in: ptr<global>, %out: ptr<global>) {{\nentry:\n  %lid = workitem_id x\n  %gid = workgroup_id x\n  %base = mul i32 %gid, 64\n  %i = add i32 %base, %lid\n  %off = mul i32 %i, {size}\n  %p = ptradd %in, %off\n  %x = load {ty} %p\n  %r = {} {ty} %x\n  %q = ptradd %out, %off\n  store {ty} %r, %q\n  ret\n}}\n",
        op.mnemonic()
    )
}

#[test]
fn transcendentals_are_within_their_bounds_on_every_target() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let mut failures = Vec::new();
    for op in UnOp::ALL.into_iter().filter(|o| o.is_transcendental()) {
        for ty in [Type::F16, Type::F32, Type::F64] {
            if ty == Type::F64 && !op.allows_f64() {
                continue;
            }
            let mut xs = inputs(op, &ty, &mut rng);
            while !xs.len().is_multiple_of(64) {
                xs.push(xs[0]);
            }
            let module = mir::parse(&kernel(op, &ty)).unwrap();
            mir::verify::verify(&module).unwrap();
            let name = match ty {
                Type::F16 => "i16",
                Type::F32 => "i32",
                _ => "i64",
            };
            let data: Vec<String> = xs.iter().map(|x| format!("0x{x:x}")).collect();
            let spec = LaunchSpec::from_flags(
                &xs.len().to_string(),
                "64",
                &[format!("in={name}:{}", data.join(",")), format!("out={name}:zero:{}", xs.len())],
                &["in=@in".into(), "out=@out".into()],
                &[],
            )
            .unwrap();
            let want = mir::launch::run(&module, &spec).unwrap();
            let want = &want.buffers.iter().find(|b| b.name == "out").unwrap().bytes;
            for target in CodeObjectTarget::all_configurations() {
                let (object, _) = codegen::compile_module(&module, &target, CodeObjectVersion::V5, &Options::default(), &mut Report::default())
                    .unwrap_or_else(|d| panic!("{} {ty} on {}: {d}", op.mnemonic(), target.isa_name()));
                let (got, _) = amdgpu_cg::sim::run_launch(&codeobj::write_hsaco(&object).unwrap(), &spec).unwrap();
                let got = &got.iter().find(|b| b.name == "out").unwrap().bytes;
                let size = ty.size() as usize;
                let read = |b: &[u8], i: usize| b[i * size..(i + 1) * size].iter().rev().fold(0u64, |acc, &x| acc << 8 | u64::from(x));
                let bad: Vec<String> = (0..xs.len())
                    .filter(|&i| !transcendental_acceptable(op, &ty, xs[i], read(want, i), read(got, i)))
                    .take(3)
                    .map(|i| format!("x={:#x}: want {:#x}, got {:#x}", xs[i], read(want, i), read(got, i)))
                    .collect();
                if !bad.is_empty() {
                    failures.push(format!("{} {ty} on {}: {}", op.mnemonic(), target.isa_name(), bad.join("; ")));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
