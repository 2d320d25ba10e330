//! SPIR-V in: the OpenCL C kernels of tests/spirv, compiled inside the test by
//! clang-22 `-target spirv64` and validated by spirv-val, are translated to MIR
//! (amdgpu_cg::spirv) and compiled for every target. For each `// launch:`
//! line the simulator's buffers must equal
//! (a) the interpreter's on the translated module, and
//! (b) the simulator's on the same source compiled by clang-22 for amdgcn and
//!     linked by ld.lld-22 (no one here wrote either compiler's output).
//! Tests needing the tools fail under `CI` when they are missing.

#[path = "support/launch.rs"]
mod launch_lines;

use std::path::{Path, PathBuf};
use std::process::Command;

use amdgpu_cg::codegen::{self, Options, Report};
use amdgpu_cg::codeobj::{self, CodeObjectTarget, CodeObjectVersion};
use amdgpu_cg::isa::{llvm_tools, Gpu, Target, WaveSize};
use amdgpu_cg::mir::{self, launch::LaunchSpec};
use amdgpu_cg::opt::OptLevel;

/// The flags both compilations share: correctly rounded division and square
/// root, no contraction (MIR computes what the source says, one rounding per
/// operation), value names kept (kernel argument names).
const CL_FLAGS: [&str; 5] = ["-cl-std=CL2.0", "-O2", "-ffp-contract=off", "-cl-fp32-correctly-rounded-divide-sqrt", "-fno-discard-value-names"];

/// Kernels whose clang-22 amdgcn code uses 16-bit VALU instructions (true16
/// operands on gfx11) that the ISA table and the simulator do not have yet
/// (docs/isa.md "Not covered yet"): comparison (b) is expected to stop at an
/// instruction the simulator cannot decode, and the test checks that it does,
/// so the entry goes once the simulator learns them. Comparison (a) runs.
/// `file@gpu` limits an entry to one target (sat_shuffle's 128-bit
/// arithmetic moves 16-bit halves with gfx11's `v_mov_b16`).
const SIMULATOR_GAPS: [&str; 4] = ["half_math.cl", "small_ints.cl", "sat_narrow.cl", "sat_shuffle.cl@gfx1100"];

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/spirv")
}

fn sources() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir()).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "cl")).collect();
    v.sort();
    v
}

/// The `// launch:` lines of a source: (line, launch).
fn launches(name: &str, text: &str) -> Vec<(usize, LaunchSpec)> {
    launch_lines::launches(name, text, "// launch:", 50_000_000).unwrap_or_else(|e| panic!("{e}")).into_iter().map(|l| (l.line, l.spec)).collect()
}

fn run(tool: &Path, args: &[&str], what: &str) -> Result<(), String> {
    let out = Command::new(tool).args(args).output().map_err(|e| format!("{what}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("{what} failed:\n{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
    }
}

fn targets() -> Vec<CodeObjectTarget> {
    let mut t: Vec<CodeObjectTarget> = Gpu::ALL.iter().map(|&g| CodeObjectTarget::new(Target::new(g))).collect();
    t.push(CodeObjectTarget::new(Target::with_wave(Gpu::Gfx1100, WaveSize::W64).unwrap()));
    t
}

/// The buffers that differ, as readable lines.
fn differences(got: &[mir::launch::BufferOutput], want: &[mir::launch::BufferOutput]) -> Vec<String> {
    let mut out = Vec::new();
    for w in want {
        let Some(g) = got.iter().find(|b| b.name == w.name) else {
            out.push(format!("buffer {} is missing", w.name));
            continue;
        };
        let (ge, we) = (g.elements(), w.elements());
        let differing: Vec<String> = (0..we.len().max(ge.len()))
            .filter(|&i| ge.get(i) != we.get(i))
            .take(6)
            .map(|i| format!("[{i}] = {} (want {})", ge.get(i).map_or("-", |s| s.as_str()), we.get(i).map_or("-", |s| s.as_str())))
            .collect();
        if !differing.is_empty() {
            out.push(format!("buffer {}: {}", w.name, differing.join(", ")));
        }
    }
    out
}

#[test]
fn opencl_kernels_through_spirv_match_the_interpreter_and_clang() {
    let Some(clang) = llvm_tools::require("clang-22") else { return };
    let Some(lld) = llvm_tools::require("ld.lld-22") else { return };
    let Some(spirv_val) = llvm_tools::require("spirv-val") else { return };
    let work = std::env::temp_dir().join(format!("amdgpu-cg-spirv-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let mut failures = Vec::new();
    let sources = sources();
    assert!(sources.len() >= 38, "tests/spirv has {} kernels", sources.len());
    // SPIRV_ONLY=stem narrows a development run to the files whose name
    // contains it (CI runs every file).
    let only = std::env::var("SPIRV_ONLY").ok().filter(|_| std::env::var_os("CI").is_none());
    for cl in sources.iter().filter(|p| only.as_deref().is_none_or(|o| p.to_string_lossy().contains(o))) {
        check_source(cl, [&clang, &lld, &spirv_val], &work, &mut failures);
    }
    let _ = std::fs::remove_dir_all(&work);
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

/// Both comparisons for one OpenCL C file: (a) our compilation of its SPIR-V
/// against the interpreter on every target, (b) clang-22's amdgcn build of the
/// same source on the simulator against the interpreter; each failure is pushed.
fn check_source(cl: &Path, tools: [&Path; 3], work: &Path, failures: &mut Vec<String>) {
    let [clang, lld, spirv_val] = tools;
    let include = format!("-I{}", dir().display());
    let name = cl.file_name().unwrap().to_string_lossy().to_string();
    let stem = cl.file_stem().unwrap().to_string_lossy().to_string();
    let text = std::fs::read_to_string(cl).unwrap();
    let specs = launches(&name, &text);
    let spv = work.join(format!("{stem}.spv"));
    let mut args: Vec<&str> = CL_FLAGS.to_vec();
    let (spv_s, cl_s) = (spv.to_string_lossy().to_string(), cl.to_string_lossy().to_string());
    args.extend(["-target", "spirv64", &include, "-c", "-o", &spv_s, &cl_s]);
    if let Err(e) = run(&clang, &args, &format!("clang-22 -target spirv64 {name}")) {
        failures.push(e);
        return;
    }
    if let Err(e) = run(&spirv_val, &[&spv_s], &format!("spirv-val {name}")) {
        failures.push(e);
        return;
    }
    let module = match amdgpu_cg::driver::load_spirv(&name, &std::fs::read(&spv).unwrap()) {
        Ok(m) => m,
        Err(e) => {
            failures.push(format!("{name}: translation: {e}"));
            return;
        }
    };
    // The translated module printed (`--emit mir`) is MIR that parses and
    // verifies again (clang names blocks `.thread66`: labels are renamed).
    if let Err(e) = mir::parse(&module.to_string()).map_err(|d| d.to_string()).and_then(|m| mir::verify::verify(&m).map_err(|ds| format!("{ds:?}"))) {
        failures.push(format!("{name}: the printed translation does not read back: {e}"));
    }
    // (a) our compilation against the interpreter, on every target.
    let mut wants = Vec::new();
    for (line, spec) in &specs {
        match mir::launch::run(&module, spec) {
            Ok(w) => wants.push(Some(w.buffers)),
            Err(e) => {
                failures.push(format!("{name}:{line}: interpreter: {e}"));
                wants.push(None);
            }
        }
    }
    for target in targets() {
        let compiled = codegen::compile_module(&module, &target, CodeObjectVersion::V5, &Options::default(), &mut Report::default());
        let hsaco = match compiled.map_err(|d| d.to_string()).and_then(|(o, _)| codeobj::write_hsaco(&o).map_err(|e| e.to_string())) {
            Ok(h) => h,
            Err(e) => {
                failures.push(format!("{name} on {}: {e}", target.isa_name()));
                return;
            }
        };
        for ((line, spec), want) in specs.iter().zip(&wants) {
            let Some(want) = want else { continue };
            let mut spec = spec.clone();
            spec.wave_size = target.target.wave.lanes();
            match amdgpu_cg::sim::run_launch(&hsaco, &spec) {
                Err(e) => failures.push(format!("{name}:{line} on {}: simulator: {}", target.isa_name(), e.lines().next().unwrap_or(""))),
                Ok((got, _)) => failures.extend(differences(&got, want).into_iter().map(|d| format!("{name}:{line} on {}: {d}", target.isa_name()))),
            }
        }
    }
    // (b) clang-22's own amdgcn code for the same source, on the simulator.
    for gpu in ["gfx90a", "gfx942", "gfx1100"] {
        let (obj, hsaco) = (work.join(format!("{stem}.{gpu}.o")), work.join(format!("{stem}.{gpu}.hsaco")));
        let (obj_s, hsaco_s, mcpu) = (obj.to_string_lossy().to_string(), hsaco.to_string_lossy().to_string(), format!("-mcpu={gpu}"));
        let mut args: Vec<&str> = CL_FLAGS.to_vec();
        args.extend(["-target", "amdgcn-amd-amdhsa", &mcpu, "-nogpulib", "-cl-kernel-arg-info", &include, "-c", "-o", &obj_s, &cl_s]);
        if let Err(e) = run(&clang, &args, &format!("clang-22 -target amdgcn {name} for {gpu}")) {
            failures.push(e);
            return;
        }
        if let Err(e) = run(&lld, &["-shared", &obj_s, "-o", &hsaco_s], "ld.lld-22") {
            failures.push(e);
            return;
        }
        let code = std::fs::read(&hsaco).unwrap();
        for ((line, spec), want) in specs.iter().zip(&wants) {
            let Some(want) = want else { continue };
            if SIMULATOR_GAPS.contains(&name.as_str()) || SIMULATOR_GAPS.contains(&format!("{name}@{gpu}").as_str()) {
                match amdgpu_cg::sim::run_launch(&code, spec) {
                    Err(e) if e.contains("cannot decode") => {}
                    other => failures.push(format!(
                        "{name}:{line}, clang-22 for {gpu}: listed in SIMULATOR_GAPS but the simulator ran it ({}); compare it and remove the entry",
                        if other.is_ok() { "ok".to_string() } else { other.err().unwrap_or_default() }
                    )),
                }
                return;
            }
            match amdgpu_cg::sim::run_launch(&code, spec) {
                Err(e) => failures.push(format!("{name}:{line}, clang-22 for {gpu}: simulator: {}", e.lines().next().unwrap_or(""))),
                Ok((got, _)) => failures.extend(differences(&got, want).into_iter().map(|d| format!("{name}:{line}, clang-22 for {gpu}: {d}"))),
            }
        }
    }
}

/// Compiles OpenCL C `source` to SPIR-V with clang-22; None outside CI when clang-22 is missing.
fn spirv_of(source: &str, tag: &str) -> Option<Vec<u8>> {
    spirv_of_with(source, tag, &[])
}

/// [`spirv_of`] with more clang-22 arguments.
fn spirv_of_with(source: &str, tag: &str, extra: &[&str]) -> Option<Vec<u8>> {
    let clang = llvm_tools::require("clang-22")?;
    let work = std::env::temp_dir().join(format!("amdgpu-cg-spirv-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let (cl, spv) = (work.join("k.cl"), work.join("k.spv"));
    std::fs::write(&cl, source).unwrap();
    let mut args: Vec<String> = CL_FLAGS.iter().map(|s| s.to_string()).collect();
    args.push(format!("-I{}", dir().display()));
    args.extend(extra.iter().map(|a| a.to_string()));
    args.extend(["-target", "spirv64", "-c", "-o"].map(String::from));
    args.push(spv.to_string_lossy().to_string());
    args.push(cl.to_string_lossy().to_string());
    let out = Command::new(clang).args(&args).output().unwrap();
    assert!(out.status.success(), "clang-22: {}", String::from_utf8_lossy(&out.stderr));
    let bytes = std::fs::read(&spv).unwrap();
    let _ = std::fs::remove_dir_all(&work);
    Some(bytes)
}

/// The command line: SPIR-V is recognised by its magic number whatever the
/// file is called, `--emit mir` prints the translation, and bad input is an
/// error with its word offset, a non-zero exit and no output file.
#[test]
fn the_command_line_reads_spirv_by_its_magic_number() {
    let Some(spv) = spirv_of("__kernel void twice(__global int *p) { p[get_global_id(0)] *= 2; }\n", "cli") else { return };
    let work = std::env::temp_dir().join(format!("amdgpu-cg-spirv-cli-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let input = work.join("kernel.bin");
    std::fs::write(&input, &spv).unwrap();
    let exe = env!("CARGO_BIN_EXE_amdgpu-cg");
    let out = Command::new(exe).arg(&input).args(["--emit", "mir", "-o", "-"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("kernel @twice(%p: ptr<global> \"int*\")"), "{text}");
    let hsaco = work.join("twice.hsaco");
    let out = Command::new(exe).arg(&input).args(["--mcpu", "gfx1100", "-o"]).arg(&hsaco).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let summary = amdgpu_cg::codeobj::inspect::summary_of_bytes(&std::fs::read(&hsaco).unwrap()).unwrap();
    assert!(summary.contains("twice"), "{summary}");
    // Truncated in the middle of an instruction.
    let bad = work.join("bad.spv");
    std::fs::write(&bad, &spv[..spv.len() / 2 / 4 * 4 + 4]).unwrap();
    let bad_out = work.join("bad.hsaco");
    let out = Command::new(exe).arg(&bad).arg("-o").arg(&bad_out).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("SPIR-V word") && !err.contains("panicked"), "{err}");
    assert!(!bad_out.exists(), "a partial output file was written");
    let _ = std::fs::remove_dir_all(&work);
}

/// What cannot be translated is named, with where it is; execution modes
/// become kernel attributes.
#[test]
fn refusals_name_the_instruction_and_modes_become_attributes() {
    let Some(spv) = spirv_of("__kernel void p(read_only image2d_t im, __global float4 *x) { x[0] = read_imagef(im, (int2)(0, 0)); }\n", "refusal") else { return };
    let errors = amdgpu_cg::spirv::to_mir(&amdgpu_cg::spirv::words(&spv).unwrap()).unwrap_err();
    let text = errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n");
    assert!(text.contains("capability ImageBasic is not supported") && text.contains("SPIR-V word"), "{text}");
    // An atomic through a generic pointer whose space is not known where it
    // is used (a parameter of a device function kept out of line) is a flat
    // atomic (tests/spirv/atomics_generic.cl runs such kernels).
    let generic = "__attribute__((noinline)) int bump(atomic_int *p) { return atomic_fetch_add(p, 1); }\n__kernel void g(__global atomic_int *c, __global int *out) { out[0] = bump(c); }\n";
    let Some(spv) = spirv_of(generic, "generic-atomic") else { return };
    let module = amdgpu_cg::spirv::to_mir(&amdgpu_cg::spirv::words(&spv).unwrap()).unwrap();
    let text = module.to_string();
    assert!(text.contains("atomic add i32 %"), "{text}");
    let Some(spv) = spirv_of("__kernel __attribute__((reqd_work_group_size(64, 2, 1))) void r(__global int *x) { x[get_local_id(1)] = 1; }\n", "modes") else { return };
    let module = amdgpu_cg::driver::load_spirv("modes", &spv).unwrap();
    assert_eq!(module.functions[0].attrs.reqd_work_group_size, Some([64, 2, 1]));
}

/// OpenCL C builtins kept out of the benchmark (tests/spirv/builtins): both
/// comparisons, as for the kernels above.
#[test]
fn builtin_kernels_match_the_interpreter_and_clang() {
    let Some(clang) = llvm_tools::require("clang-22") else { return };
    let Some(lld) = llvm_tools::require("ld.lld-22") else { return };
    let Some(spirv_val) = llvm_tools::require("spirv-val") else { return };
    let work = std::env::temp_dir().join(format!("amdgpu-cg-spirv-builtins-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let mut sources: Vec<PathBuf> = std::fs::read_dir(dir().join("builtins")).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "cl")).collect();
    sources.sort();
    assert!(!sources.is_empty());
    let mut failures = Vec::new();
    for cl in &sources {
        check_source(cl, [&clang, &lld, &spirv_val], &work, &mut failures);
    }
    let _ = std::fs::remove_dir_all(&work);
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

/// An extended instruction with too few operands for what it is (a fuzzed
/// module: `length`'s number changed to `fast_distance`'s, which takes two)
/// is refused by name, not a panic.
#[test]
fn an_extended_instruction_short_of_operands_is_refused() {
    let Some(spv) = spirv_of("__kernel void g(__global float *x) { x[0] = length((float2)(x[1], x[2])); }\n", "ext-arity") else { return };
    let mut words = amdgpu_cg::spirv::words(&spv).unwrap();
    let mut at = 5;
    let mut changed = 0;
    while at < words.len() {
        let (count, opcode) = ((words[at] >> 16) as usize, words[at] & 0xffff);
        // OpExtInst: result type, result, set, instruction number, operands.
        if opcode == 12 && count == 6 && words[at + 4] == 106 {
            words[at + 4] = 108;
            changed += 1;
        }
        at += count.max(1);
    }
    assert!(changed >= 1, "an OpenCL.std length in the module");
    let errors = amdgpu_cg::spirv::to_mir(&words).unwrap_err();
    let text = errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n");
    assert!(text.contains("fast_distance with 1 operands") && text.contains("SPIR-V word"), "{text}");
}

/// Runs each translated module's launches on every target against the
/// interpreter (comparison (a)); `compile` makes the SPIR-V for a source.
fn run_translated(label: &str, stems: &[&str], compile: &dyn Fn(&Path, &Path) -> Result<(), String>) {
    run_translated_at(label, stems, compile, &[OptLevel::O2]);
}

/// [`run_translated`] at each of `levels`.
fn run_translated_at(label: &str, stems: &[&str], compile: &dyn Fn(&Path, &Path) -> Result<(), String>, levels: &[OptLevel]) {
    let work = std::env::temp_dir().join(format!("amdgpu-cg-spirv-{}-{}", label.replace(' ', "-"), std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let mut failures = Vec::new();
    for stem in stems {
        let cl = dir().join(format!("{stem}.cl"));
        let spv = work.join(format!("{}.spv", stem.replace('/', "_")));
        if let Err(e) = compile(&cl, &spv) {
            failures.push(e);
            continue;
        }
        let name = format!("{stem}.cl ({label})");
        let module = match amdgpu_cg::driver::load_spirv(&name, &std::fs::read(&spv).unwrap()) {
            Ok(m) => m,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        let text = std::fs::read_to_string(&cl).unwrap();
        for (line, spec) in launches(&name, &text) {
            for (target, &level) in targets().into_iter().flat_map(|t| levels.iter().map(move |l| (t.clone(), l))) {
                let mut spec = spec.clone();
                spec.wave_size = target.target.wave.lanes();
                let want = match mir::launch::run(&module, &spec) {
                    Ok(w) => w.buffers,
                    Err(e) => {
                        failures.push(format!("{name}:{line}: interpreter: {e}"));
                        continue;
                    }
                };
                let options = Options { opt_level: level, ..Options::default() };
                let compiled = codegen::compile_module(&module, &target, CodeObjectVersion::V5, &options, &mut Report::default());
                let result = compiled
                    .map_err(|d| d.to_string())
                    .and_then(|(o, _)| codeobj::write_hsaco(&o).map_err(|e| e.to_string()))
                    .and_then(|h| amdgpu_cg::sim::run_launch(&h, &spec).map_err(|e| e.lines().next().unwrap_or("").to_string()));
                let at = format!("{} at {level:?}", target.isa_name());
                match result {
                    Err(e) => failures.push(format!("{name}:{line} on {at}: {e}")),
                    Ok((got, _)) => failures.extend(differences(&got, &want).into_iter().map(|d| format!("{name}:{line} on {at}: {d}"))),
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

/// AMD's flavour: `clang-22 -target spirv64-amd-amdhsa -c` writes LLVM
/// bitcode that llc-22 (the SPIR-V backend, `spirv64-amd-amdhsa`) turns into
/// SPIR-V; kernels of tests/spirv that way run with the interpreter's results
/// on every target (clang-22's amdgcn side is compared in the main test).
/// Not among them: struct_arg (this path drops the by-value argument's name)
/// and atomics (llc-22 stops with "Unknown function" at atomic_max).
#[test]
fn amd_flavoured_spirv_runs() {
    let Some(clang) = llvm_tools::require("clang-22") else { return };
    let Some(llc) = llvm_tools::require("llc-22") else { return };
    let Some(spirv_val) = llvm_tools::require("spirv-val") else { return };
    let include = format!("-I{}", dir().display());
    let stems = ["vadd", "reduce_lds", "loop_phi", "device_call", "switch_cases", "matmul", "call_many", "scan_local", "local_histogram", "generic_pointers"];
    run_translated("spirv64-amd-amdhsa", &stems, &|cl, spv| {
        let bc = spv.with_extension("bc");
        let (bc_s, spv_s, cl_s) = (bc.to_string_lossy().to_string(), spv.to_string_lossy().to_string(), cl.to_string_lossy().to_string());
        let mut args: Vec<&str> = CL_FLAGS.to_vec();
        args.extend(["-target", "spirv64-amd-amdhsa", &include, "-c", "-o", &bc_s, &cl_s]);
        run(&clang, &args, &format!("clang-22 -target spirv64-amd-amdhsa {cl_s}"))?;
        run(&llc, &["-O2", "-filetype=obj", &bc_s, "-o", &spv_s], &format!("llc-22 {cl_s}"))?;
        run(&spirv_val, &[&spv_s], &format!("spirv-val {spv_s}"))
    });
}

/// The same sources as OpenCL C 1.2 and 3.0 (the main test compiles 2.0):
/// clang-22's SPIR-V for each version translates and runs with the
/// interpreter's results on every target.
#[test]
fn opencl_c_1_2_and_3_0_kernels_run() {
    let Some(clang) = llvm_tools::require("clang-22") else { return };
    let Some(spirv_val) = llvm_tools::require("spirv-val") else { return };
    let include = format!("-I{}", dir().display());
    let common = ["vadd", "saxpy", "reduce_lds", "loop_phi", "atomics", "math_builtins", "switch_cases", "device_call", "float4_ops", "struct_arg", "doubles"];
    // ctz and generic pointers are OpenCL C 2.0 and later.
    for (std, extra) in [("CL1.2", vec![]), ("CL3.0", vec!["generic_pointers", "int_builtins"])] {
        let stems: Vec<&str> = common.iter().copied().chain(extra).collect();
        run_translated(std, &stems, &|cl, spv| {
            let (spv_s, cl_s, std_flag) = (spv.to_string_lossy().to_string(), cl.to_string_lossy().to_string(), format!("-cl-std={std}"));
            let mut args: Vec<&str> = CL_FLAGS[1..].to_vec();
            args.extend([std_flag.as_str(), "-target", "spirv64", &include, "-c", "-o", &spv_s, &cl_s]);
            if std == "CL3.0" {
                args.push("-cl-ext=+__opencl_c_generic_address_space,+__opencl_c_program_scope_global_variables");
            }
            run(&clang, &args, &format!("clang-22 {std_flag} -target spirv64 {cl_s}"))?;
            run(&spirv_val, &[&spv_s], &format!("spirv-val {spv_s}"))
        });
    }
}

/// The benchmark's kernels (every tests/spirv file) at -O0 and -O1 give the
/// interpreter's buffers on the simulator too (the first test runs -O2).
#[test]
fn every_kernel_matches_the_interpreter_at_o0_and_o1() {
    let Some(clang) = llvm_tools::require("clang-22") else { return };
    let include = format!("-I{}", dir().display());
    let stems: Vec<String> = sources().iter().map(|p| p.file_stem().unwrap().to_string_lossy().to_string()).collect();
    assert!(stems.len() >= 38, "tests/spirv has {} kernels", stems.len());
    let stems: Vec<&str> = stems.iter().map(String::as_str).collect();
    run_translated_at("levels", &stems, &|cl, spv| {
        let (spv_s, cl_s) = (spv.to_string_lossy().to_string(), cl.to_string_lossy().to_string());
        let mut args: Vec<&str> = CL_FLAGS.to_vec();
        args.extend(["-target", "spirv64", &include, "-c", "-o", &spv_s, &cl_s]);
        run(&clang, &args, &format!("clang-22 -target spirv64 {cl_s}"))
    }, &[OptLevel::O0, OptLevel::O1]);
}

/// Subgroup collectives (cl_khr_subgroups: OpGroupIAdd ... OpGroupAll) as MIR's
/// wave operations, with the interpreter's wave size set to each target's.
/// Comparison (a) only: the amdgcn side has no subgroup functions without
/// the device library.
#[test]
fn subgroup_collectives_run() {
    let Some(clang) = llvm_tools::require("clang-22") else { return };
    let Some(spirv_val) = llvm_tools::require("spirv-val") else { return };
    run_translated("subgroups", &["wave/subgroups", "wave/narrow_subgroups"], &|cl, spv| {
        let (spv_s, cl_s) = (spv.to_string_lossy().to_string(), cl.to_string_lossy().to_string());
        let mut args: Vec<&str> = CL_FLAGS.to_vec();
        args.extend(["-target", "spirv64", "-c", "-o", &spv_s, &cl_s]);
        run(&clang, &args, &format!("clang-22 -target spirv64 {cl_s}"))?;
        run(&spirv_val, &[&spv_s], &format!("spirv-val {spv_s}"))
    });
}

/// Subgroup collectives on char, short, uchar and half equal OpenCL's
/// definition, computed here per subgroup (the wave, within a work-group of
/// 128) for wave64 and wave32 and checked on the interpreter and on one
/// target of each wave size (subgroup_collectives_run holds every target to
/// the interpreter).
#[test]
fn narrow_subgroup_collectives_are_what_opencl_defines() {
    let source = std::fs::read_to_string(dir().join("wave/narrow_subgroups.cl")).unwrap();
    let Some(spv) = spirv_of(&source, "narrow-subgroups") else { return };
    let module = amdgpu_cg::driver::load_spirv("narrow_subgroups.spv", &spv).unwrap();
    let (_, spec) = launches("narrow_subgroups.cl", &source).remove(0);
    let f16 = |v: f32| f32_to_f16_bits(v);
    for (wave, isa) in [(64usize, "gfx90a"), (32, "gfx1100")] {
        let mut want = vec![0i32; 256 * 12];
        for start in (0..256).step_by(wave) {
            let lanes: Vec<usize> = (start..start + wave).collect();
            let c = |g: usize| (g * 37 + 11) as u8 as i8 as i32;
            let s = |g: usize| (g as i64 * 1237 - 20000) as i16 as i32;
            let u = |g: usize| (g * 53 + 7) as u8 as i32;
            let h = |g: usize| (g % 23) as i32 - 11;
            for (k, &g) in lanes.iter().enumerate() {
                let before = &lanes[..k];
                let upto = &lanes[..=k];
                let o = &mut want[12 * g..12 * g + 12];
                o[0] = lanes.iter().map(|&l| c(l)).sum::<i32>() as i8 as i32;
                o[1] = lanes.iter().map(|&l| c(l)).max().unwrap();
                o[2] = upto.iter().map(|&l| c(l)).min().unwrap();
                o[3] = before.iter().map(|&l| c(l)).max().unwrap_or(-128);
                o[4] = lanes.iter().map(|&l| s(l)).min().unwrap();
                o[5] = before.iter().map(|&l| s(l)).sum::<i32>() as i16 as i32;
                o[6] = before.iter().map(|&l| s(l)).min().unwrap_or(32767);
                o[7] = lanes.iter().map(|&l| u(l)).max().unwrap();
                o[8] = upto.iter().map(|&l| u(l)).sum::<i32>() as u8 as i32;
                o[9] = lanes.iter().map(|&l| h(l)).sum::<i32>();
                o[10] = lanes.iter().map(|&l| h(l)).max().unwrap();
                o[11] = i32::from(before.iter().map(|&l| h(l)).min().map_or(0x7c00, |m| f16(m as f32)));
            }
        }
        let mut spec = spec.clone();
        spec.wave_size = wave as u32;
        let run = mir::launch::run(&module, &spec).unwrap();
        let got: Vec<i32> = run.buffers[0].bits().into_iter().map(|b| b as u32 as i32).collect();
        assert_eq!(got, want, "the interpreter, wave{wave}");
        let target = targets().into_iter().find(|t| t.isa_name().contains(isa) && t.target.wave.lanes() == wave as u32).unwrap();
        let (object, _) = codegen::compile_module(&module, &target, CodeObjectVersion::V5, &Options::default(), &mut Report::default()).unwrap();
        let (sim, _) = amdgpu_cg::sim::run_launch(&codeobj::write_hsaco(&object).unwrap(), &spec).unwrap();
        let got: Vec<i32> = sim[0].bits().into_iter().map(|b| b as u32 as i32).collect();
        assert_eq!(got, want, "{isa} wave{wave}");
    }
}

/// The bits of a small integer-valued f32 as f16.
fn f32_to_f16_bits(v: f32) -> u16 {
    if v == 0.0 {
        return if v.is_sign_negative() { 0x8000 } else { 0 };
    }
    let sign = if v < 0.0 { 0x8000 } else { 0 };
    let a = v.abs();
    let e = a.log2().floor() as i32;
    let m = (a / 2f32.powi(e) - 1.0) * 1024.0;
    sign | (((e + 15) as u16) << 10) | m as u16
}

/// With `OpLine` in effect an error names the source position as well as the
/// word offset (LLVM 22's SPIR-V backend writes no OpLine, so this module is
/// assembled by spirv-as from tests/spirv/asm).
#[test]
fn errors_give_the_source_line_of_op_line() {
    let Some(spirv_as) = llvm_tools::require("spirv-as") else { return };
    let work = std::env::temp_dir().join(format!("amdgpu-cg-spirv-asm-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let spv = work.join("async_copy.spv");
    let src = dir().join("asm/async_copy_with_line.spvasm");
    run(&spirv_as, &[&src.to_string_lossy(), "--target-env", "spv1.2", "-o", &spv.to_string_lossy()], "spirv-as").unwrap();
    let errors = amdgpu_cg::spirv::to_mir(&amdgpu_cg::spirv::words(&std::fs::read(&spv).unwrap()).unwrap()).unwrap_err();
    let _ = std::fs::remove_dir_all(&work);
    assert_eq!(errors.len(), 1, "{errors:?}");
    let e = &errors[0];
    assert_eq!(e.line, Some(("k.cl".to_string(), 7)), "{e}");
    assert!(e.word.is_some() && e.to_string().starts_with("k.cl:7: ") && e.message.contains("OpGroupAsyncCopy"), "{e}");
}

/// Kernel argument metadata: for arguments whose description SPIR-V carries
/// (names, address spaces, restrict, volatile, a read-only restrict pointer,
/// the constant space's const, a local pointer's pointee alignment, signed and unsigned char types, typedef'd
/// structs), every field of our code object's `.args` equals clang-22's for
/// the same source compiled for amdgcn with `-cl-kernel-arg-info`.
#[test]
fn kernel_argument_metadata_is_clangs() {
    let Some(clang) = llvm_tools::require("clang-22") else { return };
    let source = "typedef struct { int a; float b; } S;
__kernel void args(__global float *restrict a, __global volatile int *b, __constant int *c, int4 v, S s, uchar u, char sc, __global short *p, long n, __global float2 *restrict w, __local float4 *l) {
    w[0] = (float2)(a[0] + c[0] + v.x + s.b + u + sc + p[0] + n + l[get_local_id(0)].y, 0.0f);
    b[0] = 1;
}
";
    let Some(spv) = spirv_of(source, "argmeta") else { return };
    let module = amdgpu_cg::driver::load_spirv("argmeta", &spv).unwrap();
    let target = CodeObjectTarget::new(Target::new(Gpu::Gfx90a));
    let (object, _) = codegen::compile_module(&module, &target, CodeObjectVersion::V5, &Options::default(), &mut Report::default()).unwrap();
    let ours = codeobj::reader::read(&codeobj::write_hsaco(&object).unwrap()).unwrap();
    let work = std::env::temp_dir().join(format!("amdgpu-cg-spirv-argmeta-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let (cl, obj) = (work.join("args.cl"), work.join("args.o"));
    std::fs::write(&cl, source).unwrap();
    let mut args: Vec<&str> = CL_FLAGS.to_vec();
    let (cl_s, obj_s) = (cl.to_string_lossy().to_string(), obj.to_string_lossy().to_string());
    args.extend(["-target", "amdgcn-amd-amdhsa", "-mcpu=gfx90a", "-nogpulib", "-cl-kernel-arg-info", "-c", "-o", &obj_s, &cl_s]);
    run(&clang, &args, "clang-22 -target amdgcn").unwrap();
    let theirs = codeobj::reader::read(&std::fs::read(&obj).unwrap()).unwrap();
    let _ = std::fs::remove_dir_all(&work);
    let explicit = |co: &codeobj::reader::LoadedCodeObject| -> Vec<codeobj::metadata::KernelArg> {
        let md = co.kernels[0].metadata.clone().expect("metadata");
        md.args.into_iter().filter(|a| !matches!(a.value_kind, codeobj::metadata::ValueKind::Hidden(_))).collect()
    };
    let (ours, theirs) = (explicit(&ours), explicit(&theirs));
    assert_eq!(ours.len(), theirs.len());
    for (o, t) in ours.iter().zip(&theirs) {
        assert_eq!(o, t, "argument {:?}", t.name);
    }
}

/// `int h[8] = {0}` reaches SPIR-V as a copy from a null constant table:
/// the table is written in words (not 32 byte stores), and the scalar
/// address arithmetic of the constant offsets, folded into the scratch
/// instructions' offsets, is deleted (machine_dce removes SCC-setting SALU
/// instructions whose SCC nothing reads). llc-22 -O2 clears it in 8 dword
/// stores (or wider) too.
#[test]
fn a_zeroed_private_array_is_cleared_in_words() {
    let source = "__kernel void z(__global const int *in, __global int *out) {
    size_t g = get_global_id(0);
    int h[8] = {0};
    int x = in[g];
    for (int k = 0; k < 16; k++)
        h[(x >> (k * 2)) & 7] += k;
    for (int k = 0; k < 8; k++)
        out[8 * g + k] = h[k];
}
";
    let Some(spv) = spirv_of(source, "zeroed") else { return };
    let module = amdgpu_cg::driver::load_spirv("zeroed", &spv).unwrap();
    for target in targets() {
        let (_, kernels) = codegen::compile_module(&module, &target, CodeObjectVersion::V5, &Options::default(), &mut Report::default()).unwrap();
        let asm = &kernels.iter().find(|k| k.is_kernel).unwrap().asm;
        let bytes = asm.lines().filter(|l| l.contains("store_byte") || l.contains("store_b8")).count();
        let salu_adds = asm.lines().filter(|l| l.trim_start().starts_with("s_add_u32") || l.trim_start().starts_with("s_add_i32")).count();
        assert_eq!(bytes, 0, "{}:\n{asm}", target.isa_name());
        assert!(salu_adds <= 6, "{}: {salu_adds} scalar adds:\n{asm}", target.isa_name());
    }
}

/// Kernels use no more VGPRs than llc-22 -O2 gives the same source (its
/// `.vgpr_count`, from clang-22 `-target amdgcn`): pair windows (the 64-bit
/// addresses built for one load or store) move down onto free low VGPRs
/// (window_rename), and a kernel that calls a device function keeps its
/// values across the calls in VGPRs below v32 that the callee leaves alone
/// (`CalleeFacts::vgprs_clobbered`) instead of v32 and up (device_call: 38
/// VGPRs before), and the register of the work-item IDs, which the hardware
/// fills and placement keeps at v0, is free for other values once they
/// are read (input_vgpr). The first test runs these kernels on the
/// simulator against the interpreter.
#[test]
fn kernels_need_no_more_vgprs_than_llvm_gives_them() {
    let Some(clang) = llvm_tools::require("clang-22") else { return };
    let work = std::env::temp_dir().join(format!("amdgpu-cg-spirv-windows-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let include = format!("-I{}", dir().display());
    let mut failures = Vec::new();
    let stems = [
        "vadd", "stencil", "local_args", "scan_local", "device_call", "cf_guard_loop", "cf_loop_exits_many_blocks", "cf_loop_divergent_in_uniform", "cf_while_do_while", "clang_builtins", "constant_tables", "conversions", "float4_ops", "global_offset", "int_builtins", "math_builtins",
        "matmul", "private_array", "program_globals", "reduce_lds", "saxpy", "small_ints", "struct_arg", "switch_cases", "work_items",
    ];
    // Where llc-22 needs fewer on gfx1100 (wave32 compares, fewer pairs).
    let gfx9_only = ["cf_if_divergent_in_uniform", "cf_loop_uniform_in_divergent", "loop_phi", "cf_if_chains", "divergent_loop", "doubles", "local_histogram"];
    let cases = stems.iter().map(|s| (*s, &Gpu::ALL[..])).chain(gfx9_only.iter().map(|s| (*s, &[Gpu::Gfx90a, Gpu::Gfx942][..])));
    for (stem, gpus) in cases {
        let cl = dir().join(format!("{stem}.cl"));
        let spv = spirv_of(&std::fs::read_to_string(&cl).unwrap(), &format!("windows-{stem}")).unwrap();
        let module = amdgpu_cg::driver::load_spirv(stem, &spv).unwrap();
        for &g in gpus {
            let (target, gpu) = (CodeObjectTarget::new(Target::new(g)), g.name());
            let (_, kernels) = codegen::compile_module(&module, &target, CodeObjectVersion::V5, &Options::default(), &mut Report::default()).unwrap();
            let ours = kernels.iter().filter(|k| k.is_kernel).map(|k| k.stats.vgprs).max().unwrap();
            let asm = work.join(format!("{stem}.{gpu}.s"));
            let (asm_s, cl_s, mcpu) = (asm.to_string_lossy().to_string(), cl.to_string_lossy().to_string(), format!("-mcpu={gpu}"));
            let mut args: Vec<&str> = CL_FLAGS.to_vec();
            args.extend(["-target", "amdgcn-amd-amdhsa", &mcpu, "-nogpulib", &include, "-S", "-o", &asm_s, &cl_s]);
            run(&clang, &args, &format!("clang-22 -target amdgcn {stem} for {gpu}")).unwrap();
            let listing = std::fs::read_to_string(&asm).unwrap();
            let llvm = listing.lines().filter_map(|l| l.trim().strip_prefix(".vgpr_count:")).map(|n| n.trim().parse::<u32>().unwrap()).max().unwrap();
            if ours > llvm {
                failures.push(format!("{stem} on {gpu}: {ours} VGPRs, llc-22 {llvm}"));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// FunctionControl: clang's `DontInline` (`__attribute__((noinline))`)
/// becomes `noinline` and the call stays a call at -O2; the same module with
/// `Inline` (spirv-dis, the control word replaced, spirv-as) becomes
/// `alwaysinline`, and with `None` the small callee is inlined by size.
#[test]
fn function_control_becomes_the_inline_hint() {
    let source = "__attribute__((noinline)) int twice(int x) { return 2 * x + 1; }\n__kernel void k(__global int *p) { int i = get_global_id(0); p[i] = twice(i); }\n";
    let Some(spv) = spirv_of(source, "inline-hint") else { return };
    let Some(dis) = llvm_tools::require("spirv-dis") else { return };
    let Some(asm) = llvm_tools::require("spirv-as") else { return };
    let work = std::env::temp_dir().join(format!("amdgpu-cg-spirv-inline-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("k.spv"), &spv).unwrap();
    let out = Command::new(&dis).arg(work.join("k.spv")).args(["-o", "-", "--raw-id"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.matches("DontInline").count(), 1, "{text}");
    let target = CodeObjectTarget::new(Target::new(Gpu::Gfx90a));
    for (control, hint, swappc) in [("DontInline", " noinline {", 1), ("Inline", " alwaysinline {", 0), ("None", " {", 0)] {
        let bytes = if control == "DontInline" {
            spv.clone()
        } else {
            let edited = work.join(format!("{control}.spvasm"));
            // The control is a mask (clang writes `DontInline|Pure`).
            let replaced = if control == "None" { text.replace("DontInline|", "").replace(" DontInline ", " None ") } else { text.replace("DontInline", control) };
            std::fs::write(&edited, replaced).unwrap();
            let out = Command::new(&asm).arg(&edited).arg("-o").arg(work.join(format!("{control}.spv"))).output().unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            std::fs::read(work.join(format!("{control}.spv"))).unwrap()
        };
        let module = amdgpu_cg::driver::load_spirv("k.spv", &bytes).unwrap_or_else(|e| panic!("{e:?}"));
        let printed = module.to_string();
        let header = printed.lines().find(|l| l.starts_with("func @")).unwrap();
        assert!(header.ends_with(&format!(") -> i32{hint}")), "{control}: {header}");
        let (_, kernels) = codegen::compile_module(&module, &target, CodeObjectVersion::V5, &Options::default(), &mut Report::default()).unwrap();
        let listing = &kernels.iter().find(|k| k.is_kernel).unwrap().asm;
        assert_eq!(listing.matches("s_swappc_b64").count(), swappc, "{control}:\n{listing}");
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// A printf buffer of `bytes` bytes as the runtime hands it over: the
/// header (nothing used yet, the size), then zeros.
fn printf_buffer_json(bytes: usize) -> String {
    let mut words = vec!["0".to_string(); bytes / 4];
    words[1] = bytes.to_string();
    format!(r#"{{"type":"i32","data":[{}]}}"#, words.join(","))
}

/// One conversion of a printf format applied to an argument's bytes, as
/// C's printf writes it for the conversions tests/spirv/printf uses; `%p`
/// prints `PTR` when `mask` (addresses differ between the interpreter and
/// the simulator).
fn convert(spec: &str, conv: char, bytes: &[u8], mask: bool) -> String {
    let int = |b: &[u8], signed: bool| -> i128 {
        let mut v = [0u8; 8];
        v[..b.len()].copy_from_slice(b);
        let u = u64::from_le_bytes(v);
        match (signed, b.len()) {
            (true, 4) => i128::from(u as u32 as i32),
            (true, _) => i128::from(u as i64),
            (false, _) => i128::from(u),
        }
    };
    let float = |b: &[u8]| if b.len() == 4 { f64::from(f32::from_le_bytes(b.try_into().unwrap())) } else { f64::from_le_bytes(b.try_into().unwrap()) };
    let precision = spec.split_once('.').map(|(_, p)| p.trim_end_matches(|c: char| !c.is_ascii_digit()).parse::<usize>().unwrap_or(0));
    let body = match conv {
        'd' | 'i' => int(bytes, true).to_string(),
        'u' => int(bytes, false).to_string(),
        'x' => format!("{:x}", int(bytes, false)),
        'c' => char::from(bytes[0]).to_string(),
        'f' => format!("{:.*}", precision.unwrap_or(6), float(bytes)),
        'e' => {
            let t = format!("{:.*e}", precision.unwrap_or(6), float(bytes));
            let (m, e) = t.split_once('e').unwrap();
            let e: i32 = e.parse().unwrap();
            format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
        }
        's' => String::from_utf8_lossy(bytes.split(|&b| b == 0).next().unwrap()).into_owned(),
        'p' if mask => "PTR".to_string(),
        'p' => format!("0x{:x}", int(bytes, false)),
        other => panic!("conversion %{other} is not one the test formats"),
    };
    let width: usize = spec.trim_start_matches(['-', '+', ' ', '#', '0']).split('.').next().unwrap().parse().unwrap_or(0);
    if spec.starts_with('-') { format!("{body:<width$}") } else { format!("{body:>width$}") }
}

/// A format as `amdhsa.printf` holds it with its C escapes undone (the
/// runtime's reading: `\n` and the other letters, octal `\NNN`).
fn unescape_c(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('a') => out.push('\x07'),
            Some('b') => out.push('\x08'),
            Some('f') => out.push('\x0c'),
            Some('v') => out.push('\x0b'),
            Some(d @ '0'..='7') => {
                let mut v = d.to_digit(8).unwrap();
                for _ in 0..2 {
                    match chars.peek().and_then(|c| c.to_digit(8)) {
                        Some(k) => {
                            v = v * 8 + k;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.push(char::from(v as u8));
            }
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// The text of every record in a printf buffer, with `formats` the
/// code object's `amdhsa.printf` entries (`ID:N:SIZE1:...:FORMAT`).
fn printf_text(buffer: &[u8], formats: &[String], mask: bool) -> Result<Vec<String>, String> {
    let word = |at: usize| u32::from_le_bytes(buffer[at..at + 4].try_into().unwrap()) as usize;
    let used = word(0);
    if 8 + used > word(4) {
        return Err(format!("{used} bytes used of a {}-byte buffer", word(4)));
    }
    let mut entries = std::collections::HashMap::new();
    for f in formats {
        let mut parts = f.splitn(3, ':');
        let id: usize = parts.next().unwrap().parse().map_err(|_| format!("bad entry {f}"))?;
        let n: usize = parts.next().unwrap().parse().map_err(|_| format!("bad entry {f}"))?;
        let rest: Vec<&str> = parts.next().unwrap_or("").splitn(n + 1, ':').collect();
        let sizes: Vec<usize> = rest[..n].iter().map(|s| s.parse().unwrap()).collect();
        entries.insert(id, (sizes, unescape_c(rest[n])));
    }
    let mut lines = Vec::new();
    let mut at = 8;
    while at < 8 + used {
        let id = word(at);
        let (sizes, format) = entries.get(&id).ok_or_else(|| format!("a record with id {id}, which no format has"))?;
        at += 4;
        let mut args = Vec::new();
        for s in sizes {
            args.push(&buffer[at..at + s]);
            at += s;
        }
        let mut out = String::new();
        let mut chars = format.chars().peekable();
        let mut next = args.into_iter();
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            if chars.peek() == Some(&'%') {
                chars.next();
                out.push('%');
                continue;
            }
            let mut spec = String::new();
            while let Some(&c) = chars.peek() {
                if "diouxXfFeEgGaAcsp".contains(c) {
                    break;
                }
                spec.push(c);
                chars.next();
            }
            let conv = chars.next().ok_or("a format ends inside a conversion")?;
            let arg = next.next().ok_or("more conversions than arguments")?;
            let lanes: usize = spec.split_once('v').map_or(1, |(_, l)| l.trim_end_matches(|c: char| !c.is_ascii_digit()).parse().unwrap());
            let parts: Vec<String> = arg.chunks(arg.len() / lanes).map(|lane| convert(&spec, conv, lane, mask)).collect();
            out.push_str(&parts.join(","));
        }
        lines.push(out);
    }
    lines.sort();
    Ok(lines)
}

#[test]
fn printf_writes_the_records_clangs_code_writes() {
    let Some(clang) = llvm_tools::require("clang-22") else { return };
    let Some(lld) = llvm_tools::require("ld.lld-22") else { return };
    let Some(spirv_val) = llvm_tools::require("spirv-val") else { return };
    let Some(readelf) = llvm_tools::require("llvm-readelf-22") else { return };
    let source = dir().join("printf/printf.cl");
    let work = std::env::temp_dir().join(format!("amdgpu-cg-spirv-printf-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let (spv, src) = (work.join("printf.spv").to_string_lossy().to_string(), source.to_string_lossy().to_string());
    let mut args: Vec<&str> = CL_FLAGS.to_vec();
    args.extend(["-target", "spirv64", "-c", "-o", &spv, &src]);
    run(&clang, &args, "clang-22 -target spirv64 printf.cl").unwrap();
    // spirv-val (SPIRV-Tools 2023.1) wants printf's format to point to an
    // 8-bit integer; clang-22 passes a pointer to the string's i8 array.
    // That complaint, and only it, is expected (spirv-val stops at it).
    let val = Command::new(&spirv_val).arg(&spv).output().unwrap();
    let complaint = String::from_utf8_lossy(&val.stderr).to_string();
    assert!(val.status.success() || complaint.contains("OpenCL.std printf: expected Format data type to be 8-bit int"), "spirv-val printf.spv:\n{complaint}");
    let module = amdgpu_cg::driver::load_spirv("printf.spv", &std::fs::read(&spv).unwrap()).unwrap();
    assert_eq!(module.printf_formats.len(), 4, "{:?}", module.printf_formats);
    let spec = |buffer_bytes: usize| {
        let a: Vec<String> = (0..64).map(|i| ((i * 37 + 11) % 100).to_string()).collect();
        LaunchSpec::from_json(&format!(
            r#"{{"grid":64,"block":32,"buffers":{{"a":{{"type":"i32","data":[{}]}},"status":{{"type":"i32","len":64}},"pb":{}}},"args":{{"a":"@a","f":"1.25","status":"@status"}},"printf_buffer":"@pb"}}"#,
            a.join(","),
            printf_buffer_json(buffer_bytes)
        ))
        .unwrap()
    };
    let big = spec(16384);
    let interpreted = mir::launch::run(&module, &big).unwrap();
    let want = printf_text(&interpreted.buffers[2].bytes, &module.printf_formats, true).unwrap();
    assert_eq!(want.len(), 64 + 22 + 4 + 38, "records: {want:#?}");
    assert!(interpreted.buffers[1].bits().iter().all(|&s| s == 0), "every printf had room");
    for gpu in ["gfx90a", "gfx942", "gfx1100"] {
        let target = CodeObjectTarget::parse_with_wave(gpu).unwrap();
        let mut spec_t = big.clone();
        spec_t.wave_size = target.target.wave.lanes();
        // Ours: the interpreter's records (the order of the work-items'
        // reservations aside), the metadata readelf and our reader see.
        let (object, _) = codegen::compile_module(&module, &target, CodeObjectVersion::V5, &Options::default(), &mut Report::default()).unwrap();
        let ours = codeobj::write_hsaco(&object).unwrap();
        let ours_path = work.join(format!("ours.{gpu}.hsaco"));
        std::fs::write(&ours_path, &ours).unwrap();
        let (sim, _) = amdgpu_cg::sim::run_launch(&ours, &spec_t).unwrap_or_else(|e| panic!("{gpu}: {e}"));
        let our_formats = codeobj::reader::read(&ours).unwrap().metadata[0].printf.clone();
        assert_eq!(our_formats, module.printf_formats, "{gpu}: amdhsa.printf");
        assert_eq!(printf_text(&sim[2].bytes, &our_formats, true).unwrap(), want, "{gpu}: the simulator's records against the interpreter's");
        assert_eq!(sim[1].bits(), interpreted.buffers[1].bits(), "{gpu}: what printf returned");
        let notes = Command::new(&readelf).arg("--notes").arg(&ours_path).output().unwrap();
        let notes = String::from_utf8_lossy(&notes.stdout).to_string();
        assert!(notes.contains("amdhsa.printf:") && notes.contains("hidden_printf_buffer"), "{gpu}: llvm-readelf-22 --notes:\n{notes}");
        // clang's: the same text (floats clang's amdgcn code passes as 4
        // bytes, SPIR-V's as doubles) and the hidden argument at the same place.
        let (obj, hsaco) = (work.join(format!("clang.{gpu}.o")), work.join(format!("clang.{gpu}.hsaco")));
        let (obj_s, hsaco_s, mcpu) = (obj.to_string_lossy().to_string(), hsaco.to_string_lossy().to_string(), format!("-mcpu={gpu}"));
        let mut args: Vec<&str> = CL_FLAGS.to_vec();
        args.extend(["-target", "amdgcn-amd-amdhsa", &mcpu, "-nogpulib", "-c", "-o", &obj_s, &src]);
        run(&clang, &args, "clang-22 -target amdgcn printf.cl").unwrap();
        run(&lld, &["-shared", &obj_s, "-o", &hsaco_s], "ld.lld-22").unwrap();
        let theirs = std::fs::read(&hsaco).unwrap();
        let (their_sim, _) = amdgpu_cg::sim::run_launch(&theirs, &spec_t).unwrap_or_else(|e| panic!("{gpu}, clang's code: {e}"));
        let their_co = codeobj::reader::read(&theirs).unwrap();
        let their_formats = their_co.metadata[0].printf.clone();
        assert_eq!(printf_text(&their_sim[2].bytes, &their_formats, false).unwrap(), printf_text(&sim[2].bytes, &our_formats, false).unwrap(), "{gpu}: records against clang's");
        assert_eq!(their_sim[1].bits(), sim[1].bits(), "{gpu}: what printf returned, against clang's");
        // The formats as the metadata spells them (escapes included), but
        // for their sizes: clang's amdgcn code stores a float printed with
        // %f as a float, SPIR-V hands it over as a double.
        let text_of = |entries: &[String]| {
            let mut v: Vec<String> = entries.iter().map(|e| { let mut p = e.splitn(3, ':'); p.next(); let n: usize = p.next().unwrap().parse().unwrap(); p.next().unwrap().splitn(n + 1, ':').last().unwrap().to_string() }).collect();
            v.sort();
            v
        };
        assert_eq!(text_of(&our_formats), text_of(&their_formats), "{gpu}: amdhsa.printf formats");
        let printf_arg = |co: &codeobj::reader::LoadedCodeObject| {
            let k = co.kernels.iter().find(|k| k.name == "printing").unwrap();
            k.metadata.as_ref().unwrap().args.iter().find(|a| a.value_kind == codeobj::metadata::ValueKind::Hidden(codeobj::metadata::HiddenArg::PrintfBuffer)).map(|a| a.offset)
        };
        let ours_co = codeobj::reader::read(&ours).unwrap();
        assert!(printf_arg(&ours_co).is_some());
        assert_eq!(printf_arg(&ours_co), printf_arg(&their_co), "{gpu}: hidden_printf_buffer offset");
    }
    // A buffer with room for a few records: the others are dropped and their
    // printf returns -1; the count never passes the size.
    let small = spec(120);
    let interpreted = mir::launch::run(&module, &small).unwrap();
    let kept = printf_text(&interpreted.buffers[2].bytes, &module.printf_formats, true).unwrap();
    let failed = interpreted.buffers[1].bits().iter().filter(|&&s| (s as i32) < 0).count();
    assert!(!kept.is_empty() && failed > 0, "{} records kept, {failed} work-items saw a failure", kept.len());
    let target = CodeObjectTarget::parse_with_wave("gfx90a").unwrap();
    let (object, _) = codegen::compile_module(&module, &target, CodeObjectVersion::V5, &Options::default(), &mut Report::default()).unwrap();
    let (sim, _) = amdgpu_cg::sim::run_launch(&codeobj::write_hsaco(&object).unwrap(), &small).unwrap();
    let sim_kept = printf_text(&sim[2].bytes, &module.printf_formats, true).unwrap();
    assert!(!sim_kept.is_empty() && sim[1].bits().iter().any(|&s| (s as i32) < 0));
    let _ = std::fs::remove_dir_all(&work);
}

/// OpenCL 1.x's fences, which clang-22 leaves as calls, are work-group
/// fences: acq_rel for mem_fence, acquire for read_mem_fence, release for
/// write_mem_fence (tests/spirv/builtins/fences.cl runs them).
#[test]
fn opencl_1_fences_are_work_group_fences() {
    let source = "__kernel void f(__global int *x) { x[0] = 1; mem_fence(CLK_GLOBAL_MEM_FENCE); x[1] = 2; read_mem_fence(CLK_LOCAL_MEM_FENCE); x[2] = 3; write_mem_fence(CLK_GLOBAL_MEM_FENCE); x[3] = 4; }\n";
    let Some(spv) = spirv_of(source, "fences") else { return };
    let module = amdgpu_cg::spirv::to_mir(&amdgpu_cg::spirv::words(&spv).unwrap()).unwrap();
    let text = module.to_string();
    let fences: Vec<&str> = text.lines().map(str::trim).filter(|l| l.starts_with("fence")).collect();
    assert_eq!(fences, ["fence acq_rel workgroup", "fence acquire workgroup", "fence release workgroup"], "{text}");
}

/// OpenCL 2.0's atomic_fetch_add on `atomic_float` and `atomic_double`
/// through generic pointers (clang-22 writes OpAtomicFAddEXT and declares
/// AtomicFloat32AddEXT / AtomicFloat64AddEXT, with
/// SPV_EXT_shader_atomic_float_add enabled): the capabilities are accepted,
/// the adds are flat float atomics (compare-and-swap loops), and the
/// simulator's results equal the interpreter's on every target. The sums are
/// of small integers, exact in any order.
#[test]
fn float_atomics_through_generic_pointers_run() {
    let source = "__attribute__((noinline)) void addf(volatile __generic atomic_float *p, float v) { atomic_fetch_add_explicit(p, v, memory_order_relaxed, memory_scope_device); }
__attribute__((noinline)) void addd(volatile __generic atomic_double *p, double v) { atomic_fetch_add_explicit(p, v, memory_order_relaxed, memory_scope_device); }
__kernel void k(__global atomic_float *gf, __global atomic_double *gd, __global float *out) {
    __local atomic_float lf[2];
    int i = get_global_id(0), l = get_local_id(0);
    if (l < 2) atomic_init(&lf[l], 0.0f);
    barrier(CLK_LOCAL_MEM_FENCE);
    __generic atomic_float *p = (i & 1) ? (__generic atomic_float *)&lf[i & 2 ? 1 : 0] : (__generic atomic_float *)&gf[i & 2 ? 1 : 0];
    addf(p, (float)(i % 7));
    addd((__generic atomic_double *)&gd[i & 1], (double)(i % 5));
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l < 2) out[2 * get_group_id(0) + l] = atomic_load(&lf[l]);
}
";
    let Some(spv) = spirv_of_with(source, "float-atomics", &["-mllvm", "--spirv-ext=+SPV_EXT_shader_atomic_float_add"]) else { return };
    let module = amdgpu_cg::driver::load_spirv("float-atomics", &spv).unwrap();
    let text = module.to_string();
    assert!(text.contains("atomic fadd f32") && text.contains("atomic fadd f64"), "{text}");
    let spec = LaunchSpec::from_flags("128", "64", &["gf=f32:zero:2".into(), "gd=f64:zero:2".into(), "out=f32:zero:4".into()], &["gf=@gf".into(), "gd=@gd".into(), "out=@out".into()], &[]).unwrap();
    let want = mir::launch::run(&module, &spec).unwrap();
    for target in CodeObjectTarget::all_configurations() {
        let (object, _) = codegen::compile_module(&module, &target, CodeObjectVersion::V5, &Options::default(), &mut Report::default()).unwrap();
        let hsaco = codeobj::write_hsaco(&object).unwrap();
        let (got, _) = amdgpu_cg::sim::run_launch(&hsaco, &spec).unwrap_or_else(|e| panic!("{}: {e}", target.isa_name()));
        for w in &want.buffers {
            let g = got.iter().find(|b| b.name == w.name).unwrap();
            assert_eq!(g.elements(), w.elements(), "{}: buffer {}", target.isa_name(), w.name);
        }
    }
}
