//! Embedding amdgpu-cg: build a kernel with the builder API (no text), verify it,
//! run it in the MIR interpreter, and compile it to a code object.
//!
//! ```sh
//! cargo run --example embed -- [--mcpu gfx942] [-o scale.hsaco]
//! ```

use amdgpu_cg::abi::{AddrSpace, Type};
use amdgpu_cg::codegen::{self, Options, Report};
use amdgpu_cg::codeobj::{self, CodeObjectTarget, CodeObjectVersion};
use amdgpu_cg::isa::{Gpu, Target};
use amdgpu_cg::mir::builder::FunctionBuilder;
use amdgpu_cg::mir::interp::{run_kernel, Launch, Memory, RtValue};
use amdgpu_cg::mir::{verify::verify, BinOp, Builtin, IntPred, Module};

/// `out[i] = in[i] * factor` for i < n.
fn build_scale_kernel() -> Module {
    let mut f = FunctionBuilder::kernel("scale");
    let input = f.param("in", Type::Ptr(AddrSpace::Global));
    let output = f.param("out", Type::Ptr(AddrSpace::Global));
    let factor = f.param("factor", Type::F32);
    let n = f.param("n", Type::I32);
    let entry = f.create_block("entry");
    let body = f.create_block("body");
    let exit = f.create_block("exit");

    f.switch_to(entry);
    let lid = f.builtin(Builtin::WorkitemId, 0);
    let gid = f.builtin(Builtin::WorkgroupId, 0);
    let size = f.builtin(Builtin::WorkgroupSize, 0);
    let base = f.binary(BinOp::Mul, Type::I32, gid, size);
    let i = f.binary(BinOp::Add, Type::I32, base, lid);
    f.set_name(i, "i");
    let in_range = f.icmp(IntPred::Slt, Type::I32, i, n);
    f.brif(in_range, body, vec![], exit, vec![]);

    f.switch_to(body);
    let offset = f.binary(BinOp::Mul, Type::I32, i, f.int(Type::I32, 4));
    let src = f.ptradd(input, offset);
    let dst = f.ptradd(output, offset);
    let x = f.load(Type::F32, src);
    let y = f.binary(BinOp::FMul, Type::F32, x, factor);
    f.store(Type::F32, y, dst);
    f.br(exit, vec![]);

    f.switch_to(exit);
    f.ret(None);
    Module::new(vec![f.finish().expect("every block is terminated")])
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let gpu = flag("--mcpu").and_then(|m| Gpu::from_name(&m)).unwrap_or(Gpu::Gfx90a);

    let module = build_scale_kernel();
    if let Err(errors) = verify(&module) {
        for e in errors {
            eprintln!("error: {e}");
        }
        std::process::exit(1);
    }
    print!("{module}");

    // Run it in the interpreter: 100 elements, 128 work-items.
    let mut memory = Memory::new();
    let input: Vec<u8> = (0..100).flat_map(|k| (k as f32).to_le_bytes()).collect();
    let pin = memory.alloc(&input, 16);
    let pout = memory.alloc(&[0; 400], 16);
    let args = [RtValue::Scalar(pin), RtValue::Scalar(pout), RtValue::f32(2.5), RtValue::i32(100)];
    let launch = Launch::new([128, 1, 1], [64, 1, 1]);
    run_kernel(&module, "scale", &launch, &args, &mut memory).expect("the kernel runs");
    let out = memory.read(pout, 400).expect("in bounds");
    let last = f32::from_le_bytes(out[396..400].try_into().unwrap());
    println!("; interpreter: out[99] = {last}");
    assert_eq!(last, 99.0 * 2.5);

    // Compile it.
    let target = CodeObjectTarget::new(Target::new(gpu));
    let (object, kernels) =
        codegen::compile_module(&module, &target, CodeObjectVersion::V5, &Options::default(), &mut Report::default())
            .unwrap_or_else(|d| panic!("{d}"));
    let bytes = codeobj::write_hsaco(&object).expect("a well-formed code object");
    let s = &kernels[0].stats;
    println!("; {}: {} instructions, {} VGPRs, {} SGPRs, code object of {} bytes", target.isa_name(), s.instructions, s.vgprs, s.sgprs, bytes.len());
    if let Some(path) = flag("-o") {
        std::fs::write(&path, &bytes).expect("writable output");
    }
}
