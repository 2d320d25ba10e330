//! Several devices in one run: `--mcpu a,b,c` (or a module's
//! `target device_triples` line) writes one code object per device, each
//! byte-identical to a run for that device alone, or one clang offload bundle
//! that clang-offload-bundler-22 lists, splits into those same code objects and
//! rebuilds byte for byte; `inspect` reads the bundle; a kernel whose interface
//! differs between devices is an error naming the kernel, argument and devices.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use amdgpu_cg::codegen::{self, Options, Report};
use amdgpu_cg::codeobj::{interface, CodeObjectVersion};
use amdgpu_cg::driver;

const DEVICES: [&str; 3] = ["gfx90a", "gfx942:sramecc+:xnack-", "gfx1100"];

fn exe() -> Command {
    Command::new(env!("CARGO_BIN_EXE_amdgpu-cg"))
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("multi_device").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Byte equality without printing megabytes when it fails.
fn same_bytes(a: &[u8], b: &[u8], what: &str) {
    let first = a.iter().zip(b).position(|(x, y)| x != y);
    assert!(a == b, "{what}: {} and {} bytes, first difference at {first:?}", a.len(), b.len());
}

fn ok(out: Output, what: &str) -> Output {
    assert!(out.status.success(), "{what}: {}", String::from_utf8_lossy(&out.stderr));
    out
}

/// A run for one device alone.
fn single(input: &Path, mcpu: &str, dir: &Path) -> Vec<u8> {
    let path = dir.join(format!("single-{}.hsaco", mcpu.replace(':', "_")));
    ok(exe().arg(input).args(["--mcpu", mcpu, "-o"]).arg(&path).output().unwrap(), mcpu);
    std::fs::read(path).unwrap()
}

#[test]
fn one_code_object_per_device_identical_to_single_runs() {
    for example in ["examples/call.mir", "examples/matmul.mir", "tests/data/codegen/call_frames.mir"] {
        let input = root().join(example);
        let dir = scratch(&format!("dir-{}", input.file_stem().unwrap().to_string_lossy()));
        let out_dir = dir.join("out/");
        let run = ok(exe().arg(&input).args(["--mcpu", &DEVICES.join(",")]).arg("-o").arg(&out_dir).output().unwrap(), example);
        assert!(run.stderr.is_empty(), "{example}: a run without report options prints nothing: {}", String::from_utf8_lossy(&run.stderr));
        let pattern = dir.join("p-%t.hsaco");
        ok(exe().arg(&input).args(["--mcpu", &DEVICES.join(",")]).arg("-o").arg(&pattern).output().unwrap(), example);
        let stem = input.file_stem().unwrap().to_string_lossy().to_string();
        for mcpu in DEVICES {
            let name = mcpu.replace(':', "_");
            let alone = single(&input, mcpu, &dir);
            same_bytes(&std::fs::read(out_dir.join(format!("{stem}-{name}.hsaco"))).unwrap(), &alone, &format!("{example} {mcpu} in a directory"));
            same_bytes(&std::fs::read(dir.join(format!("p-{name}.hsaco"))).unwrap(), &alone, &format!("{example} {mcpu} by pattern"));
        }
        assert_eq!(std::fs::read_dir(&out_dir).unwrap().count(), DEVICES.len());
    }
}

#[test]
fn bundle_round_trips_through_clang_offload_bundler() {
    let Some(bundler) = amdgpu_cg::isa::llvm_tools::require("clang-offload-bundler-22") else { return };
    let input = root().join("examples/call.mir");
    let dir = scratch("bundle");
    let bundle = dir.join("call.hipfb");
    ok(exe().arg(&input).args(["--mcpu", &DEVICES.join(","), "--emit", "bundle", "-o"]).arg(&bundle).output().unwrap(), "bundle");
    let listed = ok(Command::new(&bundler).args(["--list", "--type=o"]).arg(format!("--input={}", bundle.display())).output().unwrap(), "--list");
    let mut ids: Vec<String> = String::from_utf8_lossy(&listed.stdout).lines().map(str::to_string).collect();
    ids.sort();
    let mut want: Vec<String> = DEVICES.iter().map(|d| format!("hipv4-amdgcn-amd-amdhsa--{d}")).collect();
    want.push("host-x86_64-unknown-linux-gnu-".into());
    want.sort();
    assert_eq!(ids, want);
    let mut singles = Vec::new();
    for mcpu in DEVICES {
        let alone = single(&input, mcpu, &dir);
        let split = dir.join(format!("split-{}.hsaco", mcpu.replace(':', "_")));
        ok(
            Command::new(&bundler)
                .args(["--unbundle", "--type=o", &format!("--targets=hipv4-amdgcn-amd-amdhsa--{mcpu}")])
                .arg(format!("--input={}", bundle.display()))
                .arg(format!("--output={}", split.display()))
                .output()
                .unwrap(),
            "--unbundle",
        );
        same_bytes(&std::fs::read(&split).unwrap(), &alone, &format!("{mcpu}: unbundled against the single-device run"));
        singles.push(dir.join(format!("single-{}.hsaco", mcpu.replace(':', "_"))));
    }
    // clang-offload-bundler-22 bundling the single runs, as clang does for HIP,
    // writes our bundle byte for byte.
    let theirs = dir.join("theirs.hipfb");
    let targets: Vec<String> = std::iter::once("host-x86_64-unknown-linux-gnu".to_string()).chain(DEVICES.iter().map(|d| format!("hipv4-amdgcn-amd-amdhsa--{d}"))).collect();
    let mut cmd = Command::new(&bundler);
    cmd.args(["--type=o", "-bundle-align=4096", &format!("--targets={}", targets.join(",")), "--input=/dev/null"]);
    for s in &singles {
        cmd.arg(format!("--input={}", s.display()));
    }
    ok(cmd.arg(format!("--output={}", theirs.display())).output().unwrap(), "bundling");
    same_bytes(&std::fs::read(&theirs).unwrap(), &std::fs::read(&bundle).unwrap(), "clang-offload-bundler-22's bundle against ours");
    // inspect reads the bundle entry by entry.
    let text = String::from_utf8(ok(exe().arg("inspect").arg(&bundle).output().unwrap(), "inspect").stdout).unwrap();
    assert!(text.starts_with("clang offload bundle, 4 entries"), "{text}");
    for d in DEVICES {
        assert!(text.contains(&format!("entry hipv4-amdgcn-amd-amdhsa--{d} at offset")), "{text}");
    }
    assert_eq!(text.matches("kernel call_scale").count(), 3, "{text}");
    // Where one code object is expected, a bundle is named as such.
    let out = exe().args(["sim"]).arg(&bundle).args(["--grid", "1", "--block", "1"]).output().unwrap();
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("clang offload bundle"), "{}", String::from_utf8_lossy(&out.stderr));
    // A bundle of one device from the library path the CLI uses.
    let t = driver::parse_target("amdgcn-amd-amdhsa", "gfx90a").unwrap();
    let (one, _) = driver::compile_file(&input, &t, driver::Emit::Bundle, 5, &Options::default(), false).unwrap();
    assert_eq!(amdgpu_cg::codeobj::bundle::read(&one).unwrap().len(), 2);
}

#[test]
fn the_module_names_its_devices() {
    let dir = scratch("triples");
    let text = std::fs::read_to_string(root().join("examples/vector_add.mir")).unwrap();
    let module = dir.join("k.mir");
    std::fs::write(&module, format!("; devices\ntarget device_triples = \"amdgcn-amd-amdhsa--gfx942,amdgcn-amd-amdhsa--gfx1100:wavefrontsize64+\"\n\n{text}")).unwrap();
    ok(exe().arg(&module).arg("-o").arg(dir.join("out/")).output().unwrap(), "device_triples");
    let mut names: Vec<String> = std::fs::read_dir(dir.join("out")).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names, ["k-gfx1100_wavefrontsize64+.hsaco", "k-gfx942.hsaco"]);
    same_bytes(&std::fs::read(dir.join("out/k-gfx942.hsaco")).unwrap(), &single(&module, "gfx942", &dir), "gfx942 from the module's list");
    same_bytes(&std::fs::read(dir.join("out/k-gfx1100_wavefrontsize64+.hsaco")).unwrap(), &single(&module, "gfx1100:wavefrontsize64+", &dir), "gfx1100 wave64 from the module's list");
    // --mcpu overrides the module's list; --emit mir keeps the line.
    ok(exe().arg(&module).args(["--mcpu", "gfx90a", "-o"]).arg(dir.join("one.hsaco")).output().unwrap(), "--mcpu over the line");
    let printed = String::from_utf8(ok(exe().arg(&module).args(["--emit", "mir"]).output().unwrap(), "--emit mir").stdout).unwrap();
    assert!(printed.starts_with("target device_triples = \"amdgcn-amd-amdhsa--gfx942,amdgcn-amd-amdhsa--gfx1100:wavefrontsize64+\"\n"), "{printed}");
    let reparsed = amdgpu_cg::mir::parse(&printed).unwrap();
    assert_eq!(reparsed.device_triples.len(), 2);
    // Wave32 and wave64 of one GPU cannot share a bundle: its ids have no wave size.
    let out = exe().arg(&module).args(["--mcpu", "gfx1100,gfx1100:wavefrontsize64+", "--emit", "bundle", "-o"]).arg(dir.join("b.hipfb")).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("two entries for hipv4-amdgcn-amd-amdhsa--gfx1100"));
    assert!(!dir.join("b.hipfb").exists());
}

#[test]
fn bad_device_lists_are_located_errors() {
    let dir = scratch("errors");
    let body = "kernel @k() {\nentry:\n  ret\n}\n";
    for (header, message, line_col) in [
        ("target device_triples = \"amdgcn-amd-amdhsa--gfx803\"", "unknown GPU", "1:26"),
        ("target device_triples = \"amdgcn-amd-amdhsa--gfx90a,amdgcn-amd-amdhsa--gfx942,amdgcn-amd-amdhsa--gfx90a\"", "listed twice", "1:78"),
        ("target device_triples = \"gfx90a\"", "is not amdgcn-amd-amdhsa--", "1:26"),
        ("target device_triples = \"amdgcn-amd-amdhsa--gfx90a, amdgcn-amd-amdhsa--gfx803\"", "unknown GPU", "1:53"),
        ("target device_triples = \"amdgcn-amd-amdhsa--gfx90a", "not closed", "1:25"),
        ("target triple = \"x\"", "expected 'device_triples'", "1:8"),
    ] {
        let path = dir.join("bad.mir");
        std::fs::write(&path, format!("{header}\n{body}")).unwrap();
        let out = exe().arg(&path).args(["-o"]).arg(dir.join("bad.hsaco")).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{header}: {err}");
        assert!(err.contains(message) && err.contains(&format!("bad.mir:{line_col}")), "{header}: {err}");
        assert!(!dir.join("bad.hsaco").exists());
    }
    let late = dir.join("late.mir");
    std::fs::write(&late, format!("{body}target device_triples = \"amdgcn-amd-amdhsa--gfx90a\"\n")).unwrap();
    let out = exe().arg(&late).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("before the first function"));
    let input = root().join("examples/saxpy.mir");
    for args in [vec!["--mcpu", "gfx90a,gfx942"], vec!["--mcpu", "gfx90a,gfx942", "-o", "-"], vec!["--mcpu", "gfx90a,,gfx942", "-o", "x/"], vec!["--mcpu", "gfx90a,gfx90a", "-o", "x/"]] {
        let out = exe().arg(&input).args(&args).current_dir(&dir).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let file = dir.join("one.hsaco");
    let out = exe().arg(&input).args(["--mcpu", "gfx90a,gfx942", "-o"]).arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("for a directory"), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!file.exists() && !dir.join("x").exists());
    let out = exe().args(["abi", "fn(i32)", "--mcpu", "gfx90a,gfx942"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_kernel_interface_that_differs_between_devices_is_an_error() {
    let module = amdgpu_cg::mir::parse(&std::fs::read_to_string(root().join("examples/saxpy.mir")).unwrap()).unwrap();
    let compile = |mcpu: &str| {
        let t = driver::parse_target("amdgcn-amd-amdhsa", mcpu).unwrap();
        codegen::compile_module(&module, &t, CodeObjectVersion::V5, &Options::default(), &mut Report::default()).unwrap().0
    };
    let a = compile("gfx90a");
    let b = compile("gfx1100");
    assert_eq!(interface::check(&[("gfx90a".into(), &a), ("gfx1100".into(), &b)]), Ok(()));
    // The second argument passed by reference on one device, and one kernel missing.
    let mut by_ref = b.clone();
    let kernel = by_ref.functions.iter_mut().find_map(|f| f.kernel.as_mut()).unwrap();
    kernel.metadata.args[1].size = 8;
    kernel.metadata.args[1].value_kind = amdgpu_cg::codeobj::ValueKind::GlobalBuffer;
    let err = interface::check(&[("gfx90a".into(), &a), ("gfx1100".into(), &by_ref)]).unwrap_err();
    let name = a.functions.iter().find(|f| f.kernel.is_some()).unwrap().name.clone();
    let arg = a.functions.iter().find_map(|f| f.kernel.as_ref()).unwrap().metadata.args[1].name.clone().unwrap();
    assert!(err.contains(&format!("kernel @{name}, argument 1 (%{arg}): by_value")) && err.contains("on gfx90a but global_buffer") && err.contains("on gfx1100"), "{err}");
    let mut missing = b.clone();
    missing.functions.retain(|f| f.kernel.is_none());
    let err = interface::check(&[("gfx90a".into(), &a), ("gfx1100".into(), &missing)]).unwrap_err();
    assert!(err.contains(&format!("kernel @{name} is compiled for gfx90a but not for gfx1100")), "{err}");
}
