//! Differential test: the example MIR kernels, compiled by our code generator for
//! gfx90a, gfx942 and gfx1100 and run on the ISA simulator, leave exactly the
//! buffers the MIR interpreter computes for the same launch.

use amdgpu_cg::codegen;
use amdgpu_cg::codeobj::{self, CodeObjectTarget, CodeObjectVersion};
use amdgpu_cg::isa::{Gpu, Target};
use amdgpu_cg::mir::{self, launch::LaunchSpec};

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

/// (example, grid, block, buffers, args)
type Case = (&'static str, &'static str, &'static str, Vec<String>, Vec<String>);

fn cases() -> Vec<Case> {
    vec![
        ("vector_add.mir", "256", "64", s(&["a=f32:iota:256", "b=f32:fill:0.25:256", "c=f32:fill:0:256"]), s(&["a=@a", "b=@b", "c=@c"])),
        ("saxpy.mir", "320", "64", s(&["x=f32:iota:320", "y=f32:fill:-1.5:320"]), s(&["n=300", "a=2.5", "x=@x", "y=@y"])),
        ("divergent_loop.mir", "192", "64", s(&["in=i32:iota:192", "out=i32:fill:0:192"]), s(&["in=@in", "out=@out"])),
        ("lds_reduction.mir", "1024", "256", s(&["in=f32:iota:1024", "out=f32:fill:0:4"]), s(&["in=@in", "out=@out"])),
        ("matmul.mir", "32,32", "16,16", s(&["a=f32:iota:1024", "b=f32:fill:0.5:1024", "c=f32:fill:0:1024"]), s(&["a=@a", "b=@b", "c=@c", "n=32"])),
    ]
}

/// Hazards the code generator does not avoid yet (its hazards pass documents
/// them as not handled): gfx942's VALU→SGPR→VALU interlock gap (LLVM's
/// `hasVDecCoExecHazard`: a VALU reading an SGPR/VCC that a VALU wrote needs 2
/// wait states; LLVM puts `s_nop 0` between `v_cmp ... vcc` and `v_cndmask ... vcc`)
/// and gfx1100's transcendental-use hazard (`s_waitcnt_depctr va_vdst(0)`).
/// A kernel that hits one is reported on stderr and run again without hazard
/// checks, so that its results are still compared. Remove an entry when the code
/// generator handles it.
const KNOWN_CODEGEN_HAZARDS: &[(Gpu, &str)] = &[];

/// Runs on the simulator; a known hazard is noted and the run repeated without
/// hazard checks.
fn simulate(hsaco: &[u8], spec: &LaunchSpec, gpu: Gpu, known: &mut Vec<String>) -> Result<(Vec<mir::launch::BufferOutput>, amdgpu_cg::sim::Stats), String> {
    match amdgpu_cg::sim::run_launch(hsaco, spec) {
        Err(e) if e.contains("hazard") && KNOWN_CODEGEN_HAZARDS.iter().any(|(g, m)| *g == gpu && e.contains(m)) => {
            known.push(e);
            let options = amdgpu_cg::sim::Options { check_hazards: false, ..Default::default() };
            amdgpu_cg::sim::run_launch_with(hsaco, spec, &options)
        }
        r => r,
    }
}

/// Cases that fail because of a known code generator bug (not a simulator one).
/// Each stays listed only while it still fails: a listed case that passes fails
/// the test, so that the list is kept honest.
const KNOWN_CODEGEN_BUGS: &[(&str, Gpu, &str)] = &[];

#[test]
fn codegen_output_matches_the_interpreter() {
    let mut failures = Vec::new();
    let mut known = Vec::new();
    for (file, grid, block, buffers, args) in cases() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples").join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let module = mir::parse(&text).unwrap_or_else(|d| panic!("{file}: {d}"));
        let spec = LaunchSpec::from_flags(grid, block, &buffers, &args, &[]).unwrap();
        let want = mir::launch::run(&module, &spec).unwrap_or_else(|e| panic!("{file}: interpreter: {e}"));
        for gpu in Gpu::ALL {
            let target = CodeObjectTarget::new(Target::new(gpu));
            let mut report = codegen::Report::default();
            let object = match codegen::compile_module(&module, &target, CodeObjectVersion::V5, &codegen::Options::default(), &mut report) {
                Ok((o, _)) => o,
                Err(d) => {
                    failures.push(format!("{file} on {gpu}: codegen: {}", d.message));
                    continue;
                }
            };
            let hsaco = codeobj::write_hsaco(&object).unwrap();
            let mut problems = Vec::new();
            match simulate(&hsaco, &spec, gpu, &mut known) {
                Err(e) => problems.push(format!("{file} on {gpu}: simulator: {e}")),
                Ok((got, stats)) => {
                    eprintln!("{file} on {gpu}: {stats}");
                    for (g, w) in got.iter().zip(&want.buffers) {
                        if g.bytes != w.bytes {
                            let (ge, we) = (g.elements(), w.elements());
                            let i = ge.iter().zip(&we).position(|(a, b)| a != b).unwrap_or(0);
                            problems.push(format!("{file} on {gpu}: {}[{i}] = {}, the interpreter says {}", g.name, ge[i], we[i]));
                        }
                    }
                }
            }
            match KNOWN_CODEGEN_BUGS.iter().find(|(f, g, _)| *f == file && *g == gpu) {
                Some((_, _, why)) if !problems.is_empty() => known.push(format!("{} [known: {why}]", problems.join("; "))),
                Some(_) => failures.push(format!("{file} on {gpu} now passes: remove it from KNOWN_CODEGEN_BUGS")),
                None => failures.extend(problems),
            }
        }
    }
    for k in &known {
        eprintln!("known code generator bug: {k}");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

mod common;

mod random {
    use super::common::mirgen::{arb_kernel, OUTPUTS_PER_ITEM};
    use super::*;
    use proptest::prelude::*;

    /// Kernels compiled and run on the simulator (printed by the last case).
    pub static RAN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    fn targets() -> Vec<CodeObjectTarget> {
        CodeObjectTarget::all_configurations()
    }

    /// `NAME=TYPE:...:N` with its N elements drawn from `seed`: f32 values are
    /// multiples of 1/16 in (-4096, 4096) (finite, no NaN payloads to compare),
    /// i32 values cover the whole range.
    fn random_buffer(spec: &str, seed: u64) -> String {
        let (name, rest) = spec.split_once('=').unwrap();
        let ty = rest.split(':').next().unwrap();
        let n: usize = rest.rsplit(':').next().unwrap().parse().unwrap();
        let mut x = seed | 1;
        let values: Vec<String> = (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                match ty {
                    "f32" => format!("{:#x}", ((x as i32 % 65536) as f32 / 16.0).to_bits()),
                    _ => ((x >> 16) as i32).to_string(),
                }
            })
            .collect();
        format!("{name}={ty}:{}", values.join(","))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 6, failure_persistence: None, ..ProptestConfig::default() })]
        /// Every example on every target with proptest-drawn buffer contents: the
        /// simulator leaves exactly the interpreter's buffers.
        #[test]
        fn examples_on_random_inputs_match_the_interpreter(seed in any::<u64>()) {
            for (file, grid, block, buffers, args) in cases() {
                let text = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples").join(file)).unwrap();
                let module = mir::parse(&text).unwrap();
                let buffers: Vec<String> = buffers.iter().enumerate().map(|(k, b)| random_buffer(b, seed.wrapping_add(k as u64 * 0x9e37_79b9))).collect();
                let spec = LaunchSpec::from_flags(grid, block, &buffers, &args, &[]).unwrap();
                let want = mir::launch::run(&module, &spec).map_err(|e| TestCaseError::fail(format!("{file}: interpreter: {e}")))?;
                for target in targets() {
                    let (object, _) = codegen::compile_module(&module, &target, CodeObjectVersion::V5, &codegen::Options::default(), &mut codegen::Report::default())
                        .map_err(|d| TestCaseError::fail(format!("{file} on {}: {d}", target.isa_name())))?;
                    let hsaco = codeobj::write_hsaco(&object).unwrap();
                    let mut known = Vec::new();
                    let (got, _) = simulate(&hsaco, &spec, target.target.gpu, &mut known)
                        .map_err(|e| TestCaseError::fail(format!("{file} on {}: simulator: {e}", target.isa_name())))?;
                    for (g, w) in got.iter().zip(&want.buffers) {
                        let (ge, we) = (g.elements(), w.elements());
                        if let Some(i) = ge.iter().zip(&we).position(|(a, b)| a != b) {
                            return Err(TestCaseError::fail(format!("{file} on {}: {}[{i}] = {}, the interpreter says {}", target.isa_name(), g.name, ge[i], we[i])));
                        }
                    }
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]
        /// Random well-formed kernels (tests/common/mirgen.rs): our machine code on the
        /// simulator leaves the output the interpreter computes.
        #[test]
        fn random_kernels_match_the_interpreter(module in arb_kernel(), seed in any::<u32>()) {
            eprintln!("random kernels run on the simulator so far: {}", RAN.load(std::sync::atomic::Ordering::Relaxed));
            let n = 64usize;
            let input: Vec<String> = (0..n as u32).map(|i| ((i.wrapping_mul(2_654_435_761) ^ seed) as i32).to_string()).collect();
            let buffers = vec![format!("in=i32:{}", input.join(",")), format!("out=i32:fill:0:{}", n * OUTPUTS_PER_ITEM as usize)];
            let args = s(&["input=@in", "output=@out", "scale=0.75"]);
            let spec = LaunchSpec::from_flags("64", "32", &buffers, &args, &[]).unwrap();
            let want = mir::launch::run(&module, &spec).map_err(|e| TestCaseError::fail(format!("interpreter: {e}")))?;
            for target in targets() {
                let mut report = codegen::Report::default();
                let Ok((object, _)) = codegen::compile_module(&module, &target, CodeObjectVersion::V5, &codegen::Options::default(), &mut report) else { continue };
                let hsaco = codeobj::write_hsaco(&object).unwrap();
                let mut known = Vec::new();
                let (got, _) = simulate(&hsaco, &spec, target.target.gpu, &mut known)
                    .map_err(|e| TestCaseError::fail(format!("{}: simulator: {e}\n{module}", target.isa_name())))?;
                RAN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let (g, w) = (got[1].elements(), want.buffers[1].elements());
                if let Some(i) = g.iter().zip(&w).position(|(a, b)| a != b) {
                    return Err(TestCaseError::fail(format!("{}: out[{i}] = {}, the interpreter says {}\n{module}", target.isa_name(), g[i], w[i])));
                }
            }
        }
    }
}
