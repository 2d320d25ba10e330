//! Kernel attributes and dynamic LDS (docs/mir.md, "Kernel attributes"):
//! a kernel with `reqd_work_group_size` and `dynamic_lds` runs on every target
//! with the interpreter's results; the code object's metadata says what clang
//! writes for the same OpenCL attributes (checked with llvm-readelf-22 on both);
//! launches that break the attributes are refused by the interpreter and the
//! simulator alike.

use std::process::Command;

use amdgpu_cg::codegen::{self, Options, Report};
use amdgpu_cg::codeobj::{self, CodeObjectTarget, CodeObjectVersion};
use amdgpu_cg::isa::llvm_tools;
use amdgpu_cg::mir::{self, launch::LaunchSpec};

fn module(file: &str) -> mir::Module {
    let text = std::fs::read_to_string(format!("{}/tests/data/codegen/{file}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let module = mir::parse(&text).unwrap();
    mir::verify::verify(&module).unwrap();
    module
}

fn hsaco(module: &mir::Module, target: &CodeObjectTarget) -> Vec<u8> {
    let (object, _) = codegen::compile_module(module, target, CodeObjectVersion::V5, &Options::default(), &mut Report::default())
        .unwrap_or_else(|d| panic!("{}: {d}", target.isa_name()));
    codeobj::write_hsaco(&object).unwrap()
}

fn launch(block: u32, dynamic_lds: u32) -> LaunchSpec {
    let mut spec = LaunchSpec::from_flags(
        "128",
        &block.to_string(),
        &["in=i32:iota:128".into(), "out=i32:zero:128".into(), "info=i32:zero:2".into()],
        &["in=@in".into(), "out=@out".into(), "info=@info".into()],
        &[],
    )
    .unwrap();
    spec.dynamic_lds = dynamic_lds;
    spec
}

#[test]
fn dynamic_lds_and_a_required_size_run_everywhere() {
    let module = module("dynamic_lds.mir");
    let spec = launch(64, 256);
    let want = mir::launch::run(&module, &spec).unwrap();
    // The dynamic LDS starts after the 6- and 4-byte slots, 16-byte aligned.
    let info = want.buffers.iter().find(|b| b.name == "info").unwrap();
    assert_eq!(info.elements(), vec!["16".to_string(), "64".to_string()]);
    for target in CodeObjectTarget::all_configurations() {
        let (got, _) = amdgpu_cg::sim::run_launch(&hsaco(&module, &target), &spec).unwrap_or_else(|e| panic!("{}: {e}", target.isa_name()));
        for w in &want.buffers {
            let g = got.iter().find(|b| b.name == w.name).unwrap();
            assert_eq!(g.elements(), w.elements(), "{}: buffer {}", target.isa_name(), w.name);
        }
    }
}

#[test]
fn launches_that_break_the_attributes_are_refused() {
    let module = module("dynamic_lds.mir");
    let target = CodeObjectTarget::all_configurations().remove(0);
    let code = hsaco(&module, &target);
    // A work-group size other than the required one.
    let e = mir::launch::run(&module, &launch(32, 256)).unwrap_err();
    assert!(e.contains("reqd_work_group_size"), "{e}");
    let e = amdgpu_cg::sim::run_launch(&code, &launch(32, 256)).unwrap_err();
    assert!(e.contains("reqd_workgroup_size"), "{e}");
    // Too little dynamic LDS: the reversal reads past it.
    assert!(mir::launch::run(&module, &launch(64, 128)).is_err());
    assert!(amdgpu_cg::sim::run_launch(&code, &launch(64, 128)).is_err());
}

/// The metadata lines llvm-readelf-22 prints for a work-group size key.
fn size_key(notes: &str, key: &str) -> Option<Vec<String>> {
    let lines: Vec<&str> = notes.lines().collect();
    let at = lines.iter().position(|l| l.trim_start().starts_with(key))?;
    Some(lines[at + 1..at + 4].iter().map(|l| l.trim().trim_start_matches("- ").to_string()).collect())
}

fn max_flat(notes: &str) -> Option<String> {
    notes.lines().find_map(|l| l.trim().strip_prefix(".max_flat_workgroup_size:").map(|v| v.trim().to_string()))
}

#[test]
fn metadata_matches_clang() {
    let (Some(readelf), Some(clang)) = (llvm_tools::require("llvm-readelf-22"), llvm_tools::require("clang-22")) else { return };
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("kernel_attributes");
    std::fs::create_dir_all(&dir).unwrap();
    let notes = |path: &std::path::Path| {
        let o = Command::new(&readelf).arg("--notes").arg(path).output().unwrap();
        assert!(o.status.success());
        String::from_utf8(o.stdout).unwrap()
    };
    let ours = dir.join("ours.hsaco");
    let text = "kernel @k(%out: ptr<global>) reqd_work_group_size(16, 4, 1) work_group_size_hint(8, 2, 1) {\nentry:\n  store i32 1, %out\n  ret\n}\n";
    let module = mir::parse(text).unwrap();
    std::fs::write(&ours, hsaco(&module, &CodeObjectTarget::all_configurations().remove(0))).unwrap();
    let cl = dir.join("attrs.cl");
    std::fs::write(&cl, "__kernel __attribute__((reqd_work_group_size(16, 4, 1))) __attribute__((work_group_size_hint(8, 2, 1))) void k(__global int *out) { *out = 1; }\n").unwrap();
    let theirs = dir.join("clang.o");
    let status = Command::new(&clang)
        .args(["-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx90a", "-nogpulib", "-O2", "-c", "-o"])
        .arg(&theirs)
        .arg(&cl)
        .status()
        .unwrap();
    assert!(status.success());
    let (ours, theirs) = (notes(&ours), notes(&theirs));
    for key in [".reqd_workgroup_size:", ".workgroup_size_hint:"] {
        assert!(size_key(&theirs, key).is_some(), "clang writes {key}:\n{theirs}");
        assert_eq!(size_key(&ours, key), size_key(&theirs, key), "{key}\n{ours}");
    }
    assert_eq!(max_flat(&ours), max_flat(&theirs));
}

/// Kernel parameter descriptions (docs/mir.md): written ones reach the
/// metadata, `restrict` pointers without `readonly`/`writeonly` get what the
/// code does through them (a pointer only stored through, even after a
/// `ptradd` and a branch argument, is write-only; one also read is neither),
/// the text prints back the same, and device functions cannot have them.
#[test]
fn kernel_parameter_descriptions_reach_the_metadata() {
    let text = "kernel @k(%a: ptr<global> const restrict volatile \"float*\", %w: ptr<global> restrict, %rw: ptr<global> restrict \"int*\", %n: i32 \"uint\") {
entry:
  %x = load f32 %a
  %q = ptradd %w, 4
  br next(%q)
next(%p: ptr<global>):
  store f32 %x, %p
  %y = load i32 %rw
  %z = add i32 %y, %n
  store i32 %z, %rw
  ret
}
";
    let module = mir::parse(text).unwrap();
    mir::verify::verify(&module).unwrap();
    assert_eq!(mir::parse(&module.to_string()).unwrap().to_string(), module.to_string());
    assert!(module.to_string().contains("%a: ptr<global> const restrict volatile \"float*\""), "{module}");
    let target = CodeObjectTarget::new(amdgpu_cg::isa::Target::new(amdgpu_cg::isa::Gpu::Gfx942));
    let co = codeobj::reader::read(&hsaco(&module, &target)).unwrap();
    let args = co.kernels[0].metadata.clone().unwrap().args;
    use codeobj::metadata::Access;
    let (a, w, rw, n) = (&args[0], &args[1], &args[2], &args[3]);
    assert!(a.is_const && a.is_restrict && a.is_volatile && a.type_name.as_deref() == Some("float*") && a.actual_access == Some(Access::ReadOnly), "{a:?}");
    assert!(w.is_restrict && !w.is_const && w.actual_access == Some(Access::WriteOnly) && w.type_name.as_deref() == Some("void*"), "{w:?}");
    assert!(rw.is_restrict && rw.actual_access.is_none(), "{rw:?}");
    assert!(n.type_name.as_deref() == Some("uint") && !n.is_restrict, "{n:?}");
    let bad = mir::parse("func @f(%p: ptr<global> restrict) {\nentry:\n  ret\n}\n").unwrap();
    let err: String = mir::verify::verify(&bad).unwrap_err().iter().map(|d| d.to_string()).collect();
    assert!(err.contains("only kernel parameters"), "{err}");
}

/// A local pointer kernel parameter: the launch's `lds:BYTES` gives it LDS
/// (after the kernel's own), the interpreter and the simulator agree on every
/// target, and the mistakes are errors that say what to write.
#[test]
fn local_pointer_arguments_take_the_launchs_lds() {
    let text = "kernel @k(%l: ptr<local> align 8, %out: ptr<global>) {
entry:
  %own = lds_slot 260, align 4
  %t = workitem_id x
  %o = mul i32 %t, 8
  %p = ptradd %l, %o
  %v = zext i32 %t to i64
  store i64 %v, %p
  %oo = mul i32 %t, 4
  %mine = ptradd %own, %oo
  store i32 5, %mine
  barrier
  %r = xor i32 %t, 1
  %ro = mul i32 %r, 8
  %q = ptradd %l, %ro
  %w = load i64 %q
  %five = load i32 %mine
  %f = zext i32 %five to i64
  %s = add i64 %w, %f
  %g = zext i32 %o to i64
  %d = ptradd %out, %g
  store i64 %s, %d
  ret
}
";
    let module = mir::parse(text).unwrap();
    mir::verify::verify(&module).unwrap();
    let spec = LaunchSpec::from_flags("64", "64", &["out=i64:zero:64".into()], &["l=lds:512".into(), "out=@out".into()], &[]).unwrap();
    let want = mir::launch::run(&module, &spec).unwrap();
    assert_eq!(want.buffers[0].elements()[6], "12");
    for target in CodeObjectTarget::all_configurations() {
        let (got, _) = amdgpu_cg::sim::run_launch(&hsaco(&module, &target), &spec).unwrap_or_else(|e| panic!("{}: {e}", target.isa_name()));
        assert_eq!(got[0].elements(), want.buffers[0].elements(), "{}", target.isa_name());
    }
    let missing = LaunchSpec::from_flags("64", "64", &["out=i64:zero:64".into()], &["l=7".into(), "out=@out".into()], &[]).unwrap();
    assert!(mir::launch::run(&module, &missing).unwrap_err().contains("lds:BYTES"));
    let both = mir::parse("kernel @k(%l: ptr<local>) {\nentry:\n  %d = dynamic_lds\n  ret\n}\n").unwrap();
    let err: String = mir::verify::verify(&both).unwrap_err().iter().map(|d| d.to_string()).collect();
    assert!(err.contains("dynamic_lds"), "{err}");
}
