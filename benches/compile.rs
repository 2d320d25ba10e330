//! Compile time of the example kernels (parse, verify, code generation and code
//! object writing), per target.

use amdgpu_cg::codegen::{self, Options, Report};
use amdgpu_cg::codeobj::{self, CodeObjectTarget, CodeObjectVersion};
use amdgpu_cg::isa::{Gpu, Target};
use amdgpu_cg::mir;
use criterion::{criterion_group, criterion_main, Criterion};

const EXAMPLES: [&str; 5] = ["vector_add", "saxpy", "lds_reduction", "matmul", "divergent_loop"];

fn compile_examples(c: &mut Criterion) {
    for name in EXAMPLES {
        let text = std::fs::read_to_string(format!("{}/examples/{name}.mir", env!("CARGO_MANIFEST_DIR"))).unwrap();
        for gpu in Gpu::ALL {
            let target = CodeObjectTarget::new(Target::new(gpu));
            c.bench_function(&format!("compile/{name}/{gpu}"), |b| {
                b.iter(|| {
                    let module = mir::parse(&text).unwrap();
                    mir::verify::verify(&module).unwrap();
                    let (object, _) =
                        codegen::compile_module(&module, &target, CodeObjectVersion::V5, &Options::default(), &mut Report::default()).unwrap();
                    codeobj::write_hsaco(&object).unwrap()
                })
            });
        }
    }
}

criterion_group!(benches, compile_examples);
criterion_main!(benches);
