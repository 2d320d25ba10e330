//! Functions compiled in parallel (`-j`) give the same bytes, the same report
//! and the same refusals as one at a time, whatever the number of threads.

use std::path::Path;

use amdgpu_cg::codegen::{self, Options, Report};
use amdgpu_cg::codeobj::{write_hsaco, CodeObjectVersion};
use amdgpu_cg::driver;

/// `@name(` becomes `@name_SUFFIX(`: every function and call of a module renamed.
fn rename_functions(text: &str, suffix: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('@') {
        out.push_str(&rest[..=at]);
        rest = &rest[at + 1..];
        let len = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.')).unwrap_or(rest.len());
        out.push_str(&rest[..len]);
        if rest[len..].starts_with('(') {
            out.push_str(suffix);
        }
        rest = &rest[len..];
    }
    out.push_str(rest);
    out
}

/// Many kernels and device functions: renamed copies of the examples.
fn many_functions() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut text = String::new();
    for copy in 0..6 {
        for file in ["examples/saxpy.mir", "examples/matmul.mir", "examples/divergent_loop.mir", "examples/call.mir", "tests/data/codegen/nested_calls.mir"] {
            text.push_str(&rename_functions(&std::fs::read_to_string(root.join(file)).unwrap(), &format!("_{copy}")));
            text.push('\n');
        }
    }
    text
}

#[test]
fn any_number_of_jobs_gives_the_same_output() {
    let text = many_functions();
    let module = amdgpu_cg::mir::parse(&text).unwrap_or_else(|d| panic!("{d}"));
    assert!(module.functions.len() >= 40, "{} functions", module.functions.len());
    for mcpu in ["gfx90a", "gfx1100"] {
        let target = driver::parse_target("amdgcn-amd-amdhsa", mcpu).unwrap();
        let run = |jobs: usize, level: amdgpu_cg::opt::OptLevel| {
            let options = Options { jobs, opt_level: level, print_after: vec!["gvn".into(), "simplify".into(), "regalloc".into(), "emit".into()], time_passes: false, ..Options::default() };
            let mut report = Report::default();
            let (object, _) = codegen::compile_module(&module, &target, CodeObjectVersion::V5, &options, &mut report).unwrap_or_else(|d| panic!("{d}"));
            (write_hsaco(&object).unwrap(), report.printed)
        };
        for level in [amdgpu_cg::opt::OptLevel::O1, amdgpu_cg::opt::OptLevel::O2] {
            let (serial, serial_text) = run(1, level);
            assert!(serial_text.contains("; after gvn:") && serial_text.contains("; after regalloc:"), "the report prints the MIR and machine passes");
            for jobs in [2, 3, 8] {
                let (bytes, printed) = run(jobs, level);
                assert!(bytes == serial, "{mcpu} {level:?} -j {jobs}: the code object differs from -j 1");
                assert!(printed == serial_text, "{mcpu} {level:?} -j {jobs}: the --print-after text differs from -j 1");
            }
        }
    }
}

/// The command line gives its module up to the compile, which then moves
/// the functions through the optimiser instead of copying them: the bytes
/// and the printed passes are the borrowed compile's, and the verifier
/// between passes (on here) checks calls against the interfaces it keeps.
#[test]
fn a_module_given_up_compiles_as_a_borrowed_one() {
    // A small callee, which the optimiser inlines.
    let text = many_functions()
        + "func @twice(%x: i32) -> i32 {\nentry:\n  %y = add i32 %x, %x\n  ret %y\n}\n"
        + "kernel @uses_twice(%out: ptr<global>) {\nentry:\n  %tid = workitem_id x\n  %r = call @twice(%tid)\n  %o = mul i32 %tid, 4\n  %p = ptradd %out, %o\n  store i32 %r, %p\n  ret\n}\n";
    let module = amdgpu_cg::mir::parse(&text).unwrap_or_else(|d| panic!("{d}"));
    let target = driver::parse_target("amdgcn-amd-amdhsa", "gfx942").unwrap();
    for jobs in [1, 2] {
        let options = Options { jobs, verify_passes: true, print_after: vec!["inline".into(), "gvn".into(), "emit".into()], ..Options::default() };
        let mut borrowed_report = Report::default();
        let (borrowed, _) = codegen::compile_module(&module, &target, CodeObjectVersion::V5, &options, &mut borrowed_report).unwrap_or_else(|d| panic!("{d}"));
        let mut owned_report = Report::default();
        let (owned, _) = codegen::compile_module_owned(module.clone(), &target, CodeObjectVersion::V5, &options, &mut owned_report).unwrap_or_else(|d| panic!("{d}"));
        assert!(borrowed_report.printed.contains("; after inline:"), "the module has calls the optimiser inlines");
        assert!(write_hsaco(&owned).unwrap() == write_hsaco(&borrowed).unwrap(), "-j {jobs}: the code objects differ");
        assert!(owned_report.printed == borrowed_report.printed, "-j {jobs}: the printed passes differ");
    }
}

#[test]
fn refusals_are_reported_in_module_order_at_any_jobs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let module = amdgpu_cg::mir::parse(&std::fs::read_to_string(root.join("tests/data/codegen/several_refusals.mir")).unwrap()).unwrap();
    let target = driver::parse_target("amdgcn-amd-amdhsa", "gfx942").unwrap();
    let errors = |jobs: usize| {
        let options = Options { jobs, ..Options::default() };
        let Err(d) = codegen::compile_module(&module, &target, CodeObjectVersion::V5, &options, &mut Report::default()) else {
            panic!("several_refusals.mir compiled")
        };
        d.to_string()
    };
    let serial = errors(1);
    assert!(serial.lines().count() >= 2, "{serial}");
    for jobs in [2, 4] {
        assert_eq!(errors(jobs), serial, "-j {jobs}");
    }
}

#[test]
fn the_verifier_reports_the_same_problems_in_the_same_order_at_any_jobs() {
    let mut text = String::new();
    for copy in 0..20 {
        text.push_str(&rename_functions(
            "kernel @a() -> i32 {\nentry:\n  ret 1\n}\nfunc @b(%x: i32) -> i32 {\nentry:\n  %y = fadd f32 %x, %x\n  ret %y\n}\n",
            &format!("_{copy}"),
        ));
    }
    let module = amdgpu_cg::mir::parse(&text).unwrap();
    let messages = |jobs: usize| -> Vec<String> {
        amdgpu_cg::mir::verify::verify_in_parallel(&module, jobs).unwrap_err().iter().map(|d| format!("{:?} {}", d.span, d.message)).collect()
    };
    let serial = messages(1);
    assert_eq!(serial.len(), 20 * 4, "{serial:?}");
    for jobs in [2, 7] {
        assert_eq!(messages(jobs), serial, "-j {jobs}");
    }
}

/// The listing costs as much as the encoding, so the command line writes it
/// only for `-S`: without it the code object is the same, the kernels'
/// `asm` empty; with it (the library's default) every kernel has one.
#[test]
fn the_listing_is_optional_and_changes_no_byte() {
    let text = many_functions();
    let module = amdgpu_cg::mir::parse(&text).unwrap_or_else(|d| panic!("{d}"));
    let target = driver::parse_target("amdgcn-amd-amdhsa", "gfx90a").unwrap();
    let run = |listing: bool| {
        let options = Options { listing, ..Options::default() };
        assert!(Options::default().listing, "the library lists by default");
        let (object, kernels) = codegen::compile_module(&module, &target, CodeObjectVersion::V5, &options, &mut Report::default()).unwrap_or_else(|d| panic!("{d}"));
        (write_hsaco(&object).unwrap(), kernels.iter().map(|k| k.asm.clone()).collect::<Vec<_>>())
    };
    let (listed, listings) = run(true);
    let (bare, empty) = run(false);
    assert!(listed == bare, "the code object depends on the listing");
    assert!(listings.iter().all(|l| l.contains("s_endpgm") || l.contains("s_setpc_b64")), "a function without its listing");
    assert!(empty.iter().all(String::is_empty), "a listing written though not asked for");
}

/// A module long enough to be parsed on several threads: the same module as
/// the serial parse, and for broken text the same error (the first in the
/// text), also where a function's body has a line that looks like the start
/// of a function.
#[test]
fn parsing_in_parallel_gives_the_serial_result() {
    let mut text = String::new();
    for copy in 0..4 {
        text.push_str(&rename_functions(&many_functions(), &format!("_p{copy}")));
    }
    assert!(text.len() > 128 * 1024, "{} bytes: too short to be split", text.len());
    let serial = amdgpu_cg::mir::parse(&text).unwrap_or_else(|d| panic!("{d}"));
    let parallel = amdgpu_cg::mir::parse::parse_in_parallel(&text, 4).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(format!("{parallel:?}"), format!("{serial:?}"));
    // Two errors, the second in an earlier-numbered thread's share of a
    // later function: the first in the text is reported.
    let at = |nth: usize| text.match_indices("\nkernel ").nth(nth).unwrap().0 + 1;
    let mut broken = text.clone();
    broken.insert_str(at(40), "  %oops = frobnicate i32 1\n");
    broken.insert_str(at(3), "kernel @no_body(\n");
    let serial_error = amdgpu_cg::mir::parse(&broken).unwrap_err();
    let parallel_error = amdgpu_cg::mir::parse::parse_in_parallel(&broken, 4).unwrap_err();
    assert_eq!((parallel_error.span, parallel_error.message), (serial_error.span, serial_error.message));
    // `func ` at the start of a line inside a body: the split is wrong
    // there, and the error is still the serial parse's.
    let mut odd = text.clone();
    let body = odd.find("\nentry:\n").unwrap() + "\nentry:\n".len();
    odd.insert_str(body, "func @inside()\n");
    let serial_error = amdgpu_cg::mir::parse(&odd).unwrap_err();
    let parallel_error = amdgpu_cg::mir::parse::parse_in_parallel(&odd, 4).unwrap_err();
    assert_eq!((parallel_error.span, parallel_error.message), (serial_error.span, serial_error.message));
}
