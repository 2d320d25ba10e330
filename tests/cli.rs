//! The command line as a user meets it: exit codes, diagnostics with
//! file:line:column, no partial output files, and every subcommand.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn exe() -> Command {
    Command::new(env!("CARGO_BIN_EXE_amdgpu-cg"))
}

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples").join(name)
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("amdgpu-cg-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn compiles_an_example_to_a_code_object_and_inspects_it() {
    let out = scratch("saxpy.hsaco");
    let o = exe().arg(example("saxpy.mir")).arg("-o").arg(&out).args(["--mcpu", "gfx942", "--stats"]).output().unwrap();
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("saxpy (amdgcn-amd-amdhsa--gfx942):") && err.contains("VGPRs"), "{err}");
    // saxpy needs a few VGPRs: the SIMD's 8 wave slots are the limit.
    assert!(err.contains("occupancy 8 waves/SIMD (limited by the SIMD's wave slots)"), "{err}");
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(&bytes[..4], b"\x7fELF");
    let o = exe().arg("inspect").arg(&out).output().unwrap();
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(stdout.contains("saxpy") && stdout.contains("gfx942"), "{stdout}");
}

#[test]
fn malformed_input_gives_file_line_column_and_exit_1() {
    let bad = scratch("bad.mir");
    std::fs::write(&bad, "kernel @k(%x: i32) {\nentry:\n  %y = add i32 %x, %nope\n  ret\n}\n").unwrap();
    for args in [vec!["check"], vec![]] {
        let out = scratch("bad.hsaco");
        let o = exe().args(&args).arg(&bad).arg("-o").arg(&out).output();
        let o = match args.is_empty() {
            true => o.unwrap(),
            false => exe().args(&args).arg(&bad).output().unwrap(),
        };
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains("bad.mir:3:20: error: use of undefined value '%nope'"), "{err}");
        assert!(err.contains("^^^^^"), "no snippet: {err}");
        assert!(!out.exists(), "no output file for bad input");
    }
}

#[test]
fn unsupported_input_writes_no_output_file() {
    // More LDS than a work-group can have is refused.
    let out = scratch("lds_overflow.hsaco");
    let input = format!("{}/tests/data/codegen/several_refusals.mir", env!("CARGO_MANIFEST_DIR"));
    let o = exe().arg(&input).arg("--mcpu").arg("gfx90a").arg("-o").arg(&out).output().unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("several_refusals.mir:14:3: error:") && err.contains("LDS"), "{err}");
    assert!(!out.exists());
    // No temporary file left behind either.
    let leftovers: Vec<_> = std::fs::read_dir(out.parent().unwrap())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn every_refusal_of_a_module_is_reported() {
    // One in a device function and one in each of two kernels.
    let out = scratch("several_refusals.hsaco");
    let input = format!("{}/tests/data/codegen/several_refusals.mir", env!("CARGO_MANIFEST_DIR"));
    let o = exe().arg(&input).arg("--mcpu").arg("gfx942").arg("-o").arg(&out).output().unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    for at in ["several_refusals.mir:5:3: error: a stack slot of 300000 bytes", "several_refusals.mir:14:3: error: the kernel's lds_slots need 80000 bytes", "several_refusals.mir:25:3: error: the kernel's lds_slots need 70000 bytes"] {
        assert!(err.contains(at), "missing `{at}` in:\n{err}");
    }
    assert_eq!(err.matches(": error: ").count(), 3, "{err}");
    assert!(!out.exists());
}

#[test]
fn occupancy_targets_from_the_command_line_and_the_kernel() {
    // 80 values live: 84 VGPRs (5 waves on gfx942); --min-waves 8 keeps the
    // kernel to 64 (VGPRs and AGPRs together), a kernel attribute wins over
    // the option.
    let input = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/codegen/pressure_vgpr.mir");
    let stats = |args: &[&str], file: &std::path::Path| {
        let o = exe().arg(file).args(["--mcpu", "gfx942", "--stats", "-o", "/dev/null"]).args(args).output().unwrap();
        let (_, err) = text(&o);
        assert!(o.status.success(), "{err}");
        err
    };
    let plain = stats(&[], &input);
    assert!(plain.contains("84 VGPRs") && plain.contains("occupancy 5 waves/SIMD (limited by VGPRs)"), "{plain}");
    let eight = stats(&["--min-waves", "8"], &input);
    assert!(eight.contains("occupancy 8 waves/SIMD") && eight.contains("0 AGPRs") && !eight.contains(" 0 VGPR spills"), "{eight}");
    let limited = stats(&["--max-vgprs", "48"], &input);
    assert!(limited.contains("occupancy 8 waves/SIMD (limited by the SIMD's wave slots)"), "{limited}");
    let with_attr = scratch("pressure_attr.mir");
    let text_in = std::fs::read_to_string(&input).unwrap().replacen("%out: ptr<global>)", "%out: ptr<global>) min_waves_per_simd(4)", 1);
    std::fs::write(&with_attr, text_in).unwrap();
    let attr = stats(&["--min-waves", "8"], &with_attr);
    assert!(attr.contains("84 VGPRs") && attr.contains("occupancy 5 waves/SIMD"), "{attr}");
    let bad = scratch("pressure_bad.mir");
    std::fs::write(&bad, std::fs::read_to_string(&input).unwrap().replacen("%out: ptr<global>)", "%out: ptr<global>) min_waves_per_simd(0)", 1)).unwrap();
    let o = exe().arg(&bad).args(["--mcpu", "gfx942", "-o", "/dev/null"]).output().unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("between 1 and 16 waves") && err.contains(":3:"), "{err}");
}

#[test]
fn bad_usage_exits_2() {
    for (args, message) in [
        (vec!["--mcpu", "gfx803"], "unknown GPU (supported: gfx90a, gfx942, gfx1100)"),
        (vec!["--target", "x86_64-unknown-linux-gnu"], "amdgcn-amd-amdhsa only"),
        (vec!["--code-object-version", "7"], "code object version"),
        (vec!["--print-after", "nonsense"], "unknown pass"),
        (vec!["--mcpu", "gfx1100:xnack-"], "xnack"),
        (vec!["-O3"], "invalid value '3'"),
        (vec!["--min-waves", "0"], "--min-waves"),
        (vec!["--max-vgprs", "8"], "--max-vgprs"),
    ] {
        let o = exe().arg(example("saxpy.mir")).args(&args).args(["-o", "/dev/null"]).output().unwrap();
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(message), "{args:?}: {err}");
    }
}

#[test]
fn listing_mir_and_pass_printing() {
    let o = exe().arg(example("vector_add.mir")).args(["-S", "--mcpu", "gfx1100", "--print-after", "isel", "--time-passes"]).output().unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains(".amdgcn_target \"amdgcn-amd-amdhsa--gfx1100\"") && out.contains("global_load_b32"), "{out}");
    assert!(err.contains("; after isel: @vector_add") && err.contains("time vector_add: regalloc"), "{err}");
    // --time-passes accounts for the whole run, not only the passes.
    for step in ["start-up", "read", "parse", "verify", "MIR optimisation (wall)", "code generation (wall)", "listing writer", "compile (1 device, wall)", "report printing", "output"] {
        assert!(err.contains(&format!("time {step}: ")), "no '{step}' line:\n{err}");
    }
    let total = err.lines().find(|l| l.starts_with("time total (wall): ")).unwrap_or_else(|| panic!("no total:\n{err}"));
    let numbers: Vec<f64> = total.split(|c: char| !(c.is_ascii_digit() || c == '.')).filter_map(|w| w.parse().ok()).collect();
    assert!(numbers.len() >= 2 && numbers[1] <= numbers[0] + 1e-3, "the steps cannot take longer than the run: {total}");
    let o = exe().arg(example("vector_add.mir")).args(["--emit", "mir"]).output().unwrap();
    let (out, _) = text(&o);
    assert!(out.starts_with("kernel @vector_add("), "{out}");
}

#[test]
fn run_with_a_json_launch_file() {
    let launch = scratch("launch.json");
    std::fs::write(
        &launch,
        r#"{"grid":8,"block":4,"buffers":{"x":{"type":"f32","iota":true,"len":8},"y":{"type":"f32","fill":1,"len":8}},"args":{"n":8,"a":3,"x":"@x","y":"@y"},"print":["y"]}"#,
    )
    .unwrap();
    let o = exe().arg("run").arg(example("saxpy.mir")).arg("--launch").arg(&launch).output().unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    // y[i] = 3 * i + 1
    assert!(out.contains("y: f32[8] = [1, 4, 7, 10, 13, 16, 19, 22]") || out.contains("y: f32[8] = [1.0, 4.0, 7.0, 10.0, 13.0, 16.0, 19.0, 22.0]"), "{out}");
}

#[test]
fn inspect_reads_an_object_llvm_built() {
    let Some(clang) = amdgpu_cg::isa::llvm_tools::require("clang-22") else { return };
    let out = scratch("llvm_vector_add.hsaco");
    let cl = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/data/vector_add.cl");
    let status = Command::new(clang)
        .args(["-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx90a", "-nogpulib", "-O2", "-o"])
        .arg(&out)
        .arg(&cl)
        .status()
        .unwrap();
    assert!(status.success());
    let o = exe().arg("inspect").arg(&out).output().unwrap();
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(stdout.contains("vector_add") && stdout.contains("gfx90a"), "{stdout}");
}

#[test]
fn abi_table_json_and_errors() {
    let sig = "fn(i32, f64, inreg i64, {i32, f32, i64}) -> f32";
    let o = exe().args(["abi", sig, "--mcpu", "gfx942", "--conv", "llvm", "--json"]).output().unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    // LLVM 22 on gfx942 (flat scratch): the first VGPR argument is v0, inreg SGPRs start at s0.
    assert_eq!(json["args"][0]["pieces"][0]["reg"], "v0");
    assert_eq!(json["args"][2]["pieces"][0]["reg"], "s0");
    assert_eq!(json["ret"][0]["reg"], "v0");
    let o = exe().args(["abi", "fn(i32, q64)"]).output().unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(err.contains("unknown type 'q64'") && err.contains("        ^"), "{err}");
    let o = exe().args(["abi", sig, "--conv", "fastcall"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn sim_runs_our_code_object_like_the_interpreter() {
    let hsaco = scratch("sim_saxpy.hsaco");
    let o = exe().arg(example("saxpy.mir")).arg("-o").arg(&hsaco).args(["--mcpu", "gfx1100"]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o).1);
    let launch = ["--grid", "8", "--block", "4", "--buffer", "x=f32:iota:8", "--buffer", "y=f32:fill:1:8", "--arg", "n=6", "--arg", "a=2", "--arg", "x=@x", "--arg", "y=@y", "--print", "y"];
    let sim = exe().arg("sim").arg(&hsaco).args(launch).output().unwrap();
    let run = exe().arg("run").arg(example("saxpy.mir")).args(launch).output().unwrap();
    let (sim_out, sim_err) = text(&sim);
    let (run_out, _) = text(&run);
    assert!(sim.status.success(), "{sim_err}");
    let first = |s: &str| s.lines().find(|l| l.starts_with("y:")).unwrap_or_default().to_string();
    assert_eq!(first(&sim_out), first(&run_out));
    assert_eq!(first(&run_out), "y: f32[8] = [1.0, 3.0, 5.0, 7.0, 9.0, 11.0, 1.0, 1.0]");
}

#[test]
fn extern_functions_stay_undefined_in_the_relocatable_output() {
    // examples/call.mir's @scale_add left to another object: the call is a
    // relocation against an undefined symbol, and no code is emitted for it.
    let out = scratch("call-extern.o");
    let o = exe().arg(example("call.mir")).args(["--emit", "obj", "--extern", "scale_add", "-o"]).arg(&out).output().unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let bytes = std::fs::read(&out).unwrap();
    use object::{Object, ObjectSymbol};
    let file = object::File::parse(&*bytes).unwrap();
    let sym = file.symbols().find(|s| s.name() == Ok("scale_add")).expect("a symbol for the external function");
    assert!(sym.is_undefined(), "scale_add is not compiled here");
    assert!(file.symbols().any(|s| s.name() == Ok("call_scale") && !s.is_undefined()));
    // A loadable object cannot have an undefined function: a clear error, no file.
    let hsaco = scratch("call-extern.hsaco");
    let o = exe().arg(example("call.mir")).args(["--extern", "scale_add", "-o"]).arg(&hsaco).output().unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("scale_add") && err.contains("--emit obj"), "{err}");
    assert!(!hsaco.exists());
    // Only device functions of the module can be external.
    let o = exe().arg(example("call.mir")).args(["--emit", "obj", "--extern", "nope", "-o"]).arg(scratch("nope.o")).output().unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("'nope' is declared external but is not a device function"), "{err}");
}

/// -O0 runs no optimising MIR pass (gvn among them), -O1 and -O2 do: the vector add as
/// clang-22's SPIR-V gives it (three 64-bit multiplies of one index) gets
/// fewer instructions at -O1 and -O2, and MIR passes print only when they run.
#[test]
fn optimisation_levels() {
    let input = scratch("vadd_unoptimised.mir");
    std::fs::write(
        &input,
        include_str!("data/opt/vadd_unoptimised.mir"),
    )
    .unwrap();
    let mut counts = Vec::new();
    for level in ["-O0", "-O1", "-O2"] {
        let o = exe().arg(&input).args([level, "--mcpu", "gfx942", "--stats", "--print-after", "gvn", "-o", "/dev/null"]).output().unwrap();
        let (_, err) = text(&o);
        assert!(o.status.success(), "{level}: {err}");
        assert_eq!(err.contains("; after gvn:"), level != "-O0", "{level}: {err}");
        let n: usize = err.split(" instructions").next().and_then(|s| s.rsplit(' ').next()).and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("{err}"));
        counts.push(n);
    }
    assert!(counts[1] < counts[0] && counts[2] <= counts[1], "instructions at -O0, -O1, -O2: {counts:?}");
}

/// `-o /dev/null` writes to the device: the atomic write (temporary file, then
/// rename) must not replace a device with a regular file, which it did as root.
#[test]
fn output_to_dev_null_leaves_the_device_alone() {
    use std::os::unix::fs::FileTypeExt;
    let o = exe().arg(example("saxpy.mir")).args(["-o", "/dev/null"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let kind = std::fs::metadata("/dev/null").unwrap().file_type();
    assert!(kind.is_char_device(), "/dev/null is no longer a character device");
}
