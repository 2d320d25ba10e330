//! Control-flow shapes: one small kernel per shape in tests/data/cf/*.mir
//! (guarded loops, loop exits that are if-joins, several exits and back edges,
//! early returns, deep nests, uniform/divergent mixes, block parameters on
//! every kind of edge, ...), each run by the MIR interpreter and, compiled for
//! every configuration of `CodeObjectTarget::all_configurations()`, on the ISA
//! simulator; the buffers must be equal bit for bit.
//!
//! Each file describes its launches in its header, one per line, with the
//! flags of `amdgpu-cg run`:
//!
//! ```text
//! ; launch: --grid 192 --block 96 --buffer out=i32:fill:0xdeadbeef:384 --arg out=@out
//! ```
//!
//! (`amdgpu-cg run FILE $(sed -n 's/^; launch://p' FILE | head -1)` runs the
//! first by hand). Output buffers start filled with the sentinel 0xdeadbeef so
//! that a missing store shows. Every failure (file, target, launch, the slots
//! that differ) is collected and reported before the test fails; compile
//! errors ("refused", or "internal error" when a check of the code generator
//! caught a bug) and panics of the code generator or simulator are failures
//! too. A table of the outcome per file and target goes to stderr.
//!
//! `interpreter_matches_hand_computed_results` checks the interpreter itself
//! on the first two shapes (from the issue) against values computed here.
//! `opencl_twins_compute_what_the_mir_computes` checks the OpenCL C twins
//! (NAME.cl) that scripts/cf_overhead compiles with clang-22 to compare
//! control-flow overhead: clang's code leaves the interpreter's buffers too.

#[path = "support/launch.rs"]
mod launch_lines;
use launch_lines::Launch;

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use amdgpu_cg::codegen::{self, Options, Report};
use amdgpu_cg::codeobj::{self, CodeObjectTarget, CodeObjectVersion};
use amdgpu_cg::isa::WaveSize;
use amdgpu_cg::mir::{
    self,
    launch::{BufferInit, BufferOutput},
};

/// The initial value of every output buffer (written as `0xdeadbeef` in the
/// launch lines; printed as -559038737).
const SENTINEL: u32 = 0xdead_beef;

/// The instruction budget of each run (interpreter: work-item instructions;
/// simulator: wave instructions). The largest shape needs about 55 000 in the
/// interpreter, so this only stops a miscompiled endless loop early.
const MAX_INSTRUCTIONS: u64 = 5_000_000;

/// Slots listed per differing buffer.
const SHOWN_SLOTS: usize = 12;

fn cf_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/cf")
}

/// The `.mir` files of tests/data/cf, sorted.
fn shape_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(cf_dir())
        .expect("tests/data/cf exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "mir"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .mir files in tests/data/cf");
    files
}

fn name_of(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

/// Parses the `; launch:` lines of a shape file.
fn launches(file: &str, text: &str) -> Result<Vec<Launch>, String> {
    launch_lines::launches(file, text, "; launch:", MAX_INSTRUCTIONS)
}

/// `gfx90a`, `gfx1100 wave32`, `gfx1100 wave64`.
fn target_name(target: &CodeObjectTarget) -> String {
    let gpu = target.target.gpu.name();
    if target.target.gpu.default_wave_size() == WaveSize::W64 && target.target.wave == WaveSize::W64 {
        gpu.to_string()
    } else {
        format!("{gpu} wave{}", target.target.wave.lanes())
    }
}

std::thread_local! {
    /// Set while `catch` runs: the panic hook records the message instead of printing it.
    static CATCHING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    static CAUGHT: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f`, turning a panic into its message and location (`message at
/// file:line:col`) without the default hook's report and backtrace; panics
/// elsewhere in the test binary still go to the default hook.
fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if CATCHING.with(|c| c.get()) {
                let payload = info.payload();
                let message = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "(non-string panic payload)".to_string());
                let at = info.location().map(|l| format!(" at {}:{}:{}", l.file(), l.line(), l.column())).unwrap_or_default();
                CAUGHT.with(|c| *c.borrow_mut() = Some(format!("{message}{at}")));
            } else {
                default(info)
            }
        }));
    });
    CATCHING.with(|c| c.set(true));
    let r = catch_unwind(AssertUnwindSafe(f));
    CATCHING.with(|c| c.set(false));
    r.map_err(|_| CAUGHT.with(|c| c.borrow_mut().take()).unwrap_or_else(|| "(panic without a message)".to_string()))
}

/// The first line of a (possibly long) message.
fn first_line(message: &str) -> &str {
    message.lines().next().unwrap_or("")
}

/// Describes every buffer in which `got` differs from `want`: the number of
/// differing slots and the first few, with "missing store" when the simulator
/// left the sentinel and "extra store" when only the interpreter did.
fn differences(got: &[BufferOutput], want: &[BufferOutput]) -> Vec<String> {
    let mut out = Vec::new();
    for w in want {
        let Some(g) = got.iter().find(|b| b.name == w.name) else {
            out.push(format!("buffer {} missing from the simulator's output", w.name));
            continue;
        };
        if g.bytes == w.bytes {
            continue;
        }
        let (gb, wb) = (g.bits(), w.bits());
        let (ge, we) = (g.elements(), w.elements());
        if gb.len() != wb.len() {
            out.push(format!("buffer {}: {} elements, the interpreter has {}", w.name, gb.len(), wb.len()));
            continue;
        }
        let differing: Vec<usize> = (0..wb.len()).filter(|&i| gb[i] != wb[i]).collect();
        let shown: Vec<String> = differing
            .iter()
            .take(SHOWN_SLOTS)
            .map(|&i| {
                let note = if gb[i] == SENTINEL as u64 {
                    " (missing store)"
                } else if wb[i] == SENTINEL as u64 {
                    " (extra store)"
                } else {
                    ""
                };
                format!("[{i}] = {} want {}{note}", ge[i], we[i])
            })
            .collect();
        let more = if differing.len() > SHOWN_SLOTS { format!(", ... ({} more)", differing.len() - SHOWN_SLOTS) } else { String::new() };
        out.push(format!("{}: {} of {} slots differ: {}{more}", w.name, differing.len(), wb.len(), shown.join(", ")));
    }
    out
}

/// What happened to one shape on one target.
enum Outcome {
    Pass,
    /// The code generator returned an error (an "internal error" one is shown
    /// as such in the table: a bug caught by a check, not a refusal by design).
    Refused(String),
    /// Something panicked (code generator, writer or simulator).
    Panicked(String),
    /// Compiled, but at least one launch failed on the simulator or differed.
    Wrong(Vec<String>),
    /// The MIR file itself or the interpreter failed (a problem with the test).
    BadFile(String),
}

impl Outcome {
    fn cell(&self) -> String {
        match self {
            Outcome::Pass => "pass".into(),
            Outcome::Refused(m) if m.starts_with("internal error") => "internal error".into(),
            Outcome::Refused(_) => "refused".into(),
            Outcome::Panicked(_) => "PANIC".into(),
            Outcome::Wrong(p) => format!("FAIL({})", p.len()),
            Outcome::BadFile(_) => "BAD FILE".into(),
        }
    }
}

fn run_shape(path: &Path, targets: &[CodeObjectTarget]) -> Vec<Outcome> {
    let file = name_of(path);
    let bad = |m: String| targets.iter().map(|_| Outcome::BadFile(m.clone())).collect();
    let text = std::fs::read_to_string(path).unwrap();
    let module = match mir::parse(&text) {
        Ok(m) => m,
        Err(d) => return bad(format!("{file}: parse: {d}")),
    };
    if let Err(ds) = mir::verify::verify(&module) {
        return bad(format!("{file}: verify: {}", ds.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("; ")));
    }
    let launches = match launches(&file, &text) {
        Ok(l) => l,
        Err(e) => return bad(e),
    };
    let mut wants = Vec::new();
    for l in &launches {
        match mir::launch::run(&module, &l.spec) {
            Ok(w) => wants.push(w),
            Err(e) => return bad(format!("{file}:{}: interpreter: {e}", l.line)),
        }
        let sentinel_buffer = l.spec.buffers.iter().any(|b| {
            matches!(&b.init, BufferInit::Fill { value, .. } if mir::launch::literal_bits(value, &b.ty).ok() == Some(SENTINEL as u64))
        });
        if !sentinel_buffer {
            return bad(format!("{file}:{}: no output buffer is filled with the sentinel 0xdeadbeef", l.line));
        }
    }
    let mut outcomes = Vec::new();
    for target in targets {
        let compiled = catch(|| {
            codegen::compile_module(&module, target, CodeObjectVersion::V5, &Options::default(), &mut Report::default())
                .map(|(object, _)| codeobj::write_hsaco(&object))
        });
        let hsaco = match compiled {
            Err(p) => {
                outcomes.push(Outcome::Panicked(format!("code generator panicked: {p}")));
                continue;
            }
            Ok(Err(d)) => {
                outcomes.push(Outcome::Refused(d.message.clone()));
                continue;
            }
            Ok(Ok(Err(e))) => {
                outcomes.push(Outcome::Wrong(vec![format!("writing the code object: {e}")]));
                continue;
            }
            Ok(Ok(Ok(h))) => h,
        };
        let mut problems = Vec::new();
        let mut panicked = None;
        for (l, want) in launches.iter().zip(&wants) {
            match catch(|| amdgpu_cg::sim::run_launch(&hsaco, &l.spec)) {
                Err(p) => {
                    panicked = Some(format!("simulator panicked on line {} ({}): {p}", l.line, l.text));
                    break;
                }
                Ok(Err(e)) => problems.push(format!("line {} ({}): simulator: {}", l.line, l.text, first_line(&e))),
                Ok(Ok((got, _))) => {
                    for d in differences(&got, &want.buffers) {
                        problems.push(format!("line {} ({}): {d}", l.line, l.text));
                    }
                }
            }
        }
        outcomes.push(match panicked {
            Some(p) => Outcome::Panicked(p),
            None if problems.is_empty() => Outcome::Pass,
            None => Outcome::Wrong(problems),
        });
    }
    outcomes
}

#[test]
fn cf_shapes_match_the_interpreter_on_every_target() {
    let targets = CodeObjectTarget::all_configurations();
    let names: Vec<String> = targets.iter().map(target_name).collect();
    let mut results: BTreeMap<String, Vec<Outcome>> = BTreeMap::new();
    for path in shape_files() {
        results.insert(name_of(&path), run_shape(&path, &targets));
    }

    // The table: one row per shape, one column per target.
    let width = results.keys().map(|k| k.len()).max().unwrap_or(4).max(5);
    let mut table = format!("{:<width$} | {}\n", "shape", names.iter().map(|n| format!("{n:<14}")).collect::<Vec<_>>().join(" | "));
    for (file, outcomes) in &results {
        let cells: Vec<String> = outcomes.iter().map(|o| format!("{:<14}", o.cell())).collect();
        table.push_str(&format!("{file:<width$} | {}\n", cells.join(" | ")));
    }
    let count = |f: fn(&Outcome) -> bool| results.values().flatten().filter(|o| f(o)).count();
    let total = results.len() * targets.len();
    let summary = format!(
        "{total} shape/target pairs: {} pass, {} refused, {} internal errors, {} panicked, {} wrong, {} bad files",
        count(|o| matches!(o, Outcome::Pass)),
        count(|o| matches!(o, Outcome::Refused(m) if !m.starts_with("internal error"))),
        count(|o| matches!(o, Outcome::Refused(m) if m.starts_with("internal error"))),
        count(|o| matches!(o, Outcome::Panicked(_))),
        count(|o| matches!(o, Outcome::Wrong(_))),
        count(|o| matches!(o, Outcome::BadFile(_)))
    );
    eprintln!("\ncontrol-flow shapes on the simulator against the interpreter:\n{table}{summary}\n");

    let mut failures = Vec::new();
    for (file, outcomes) in &results {
        if let Some(Outcome::BadFile(m)) = outcomes.first() {
            failures.push(format!("{file}: BAD FILE (a problem with the test, not the code generator): {m}"));
            continue;
        }
        for (outcome, target) in outcomes.iter().zip(&names) {
            match outcome {
                Outcome::Pass | Outcome::BadFile(_) => {}
                Outcome::Refused(m) if m.starts_with("internal error") => failures.push(format!("{file} on {target}: {}", first_line(m))),
                Outcome::Refused(m) => failures.push(format!("{file} on {target}: refused: {}", first_line(m))),
                Outcome::Panicked(m) => failures.push(format!("{file} on {target}: {}", first_line(m))),
                Outcome::Wrong(problems) => {
                    for p in problems {
                        failures.push(format!("{file} on {target}: {p}"));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{summary}\n{table}\n{}", failures.join("\n"));
}

/// The interpreter against values worked out by hand for the issue's two
/// kernels (an outside check: the comparison above trusts the interpreter).
#[test]
fn interpreter_matches_hand_computed_results() {
    let sentinel = SENTINEL as u64;
    let run = |file: &str| {
        let text = std::fs::read_to_string(cf_dir().join(file)).unwrap();
        let module = mir::parse(&text).unwrap();
        mir::verify::verify(&module).unwrap();
        let ls = launches(file, &text).unwrap();
        let outs: Vec<Vec<u64>> = ls
            .iter()
            .map(|l| {
                let r = mir::launch::run(&module, &l.spec).unwrap_or_else(|e| panic!("{file}:{}: {e}", l.line));
                r.buffer("out").expect("an `out` buffer").bits()
            })
            .collect();
        (ls, outs)
    };
    let arg = |l: &Launch, name: &str| -> u64 {
        match l.spec.args.iter().find(|(n, _)| n == name) {
            Some((_, mir::launch::ArgSpec::Value(v))) => v.parse().unwrap(),
            other => panic!("argument {name}: {other:?}"),
        }
    };

    // guard_loop: work-item i (of a work-group of 64) stores j to out[j] for
    // j = i, i + 64, ... < n, so out[j] = j for j < n and the sentinel above.
    let (ls, outs) = run("guard_loop.mir");
    let mut seen = Vec::new();
    for (l, out) in ls.iter().zip(&outs) {
        assert_eq!(l.spec.block, [64, 1, 1], "guard_loop.mir:{}: the stride is 64", l.line);
        let n = arg(l, "n");
        let want: Vec<u64> = (0..out.len() as u64).map(|j| if j < n { j } else { sentinel }).collect();
        assert_eq!(out, &want, "guard_loop.mir:{} (n = {n})", l.line);
        seen.push(n);
    }
    // n = 40 (the guard diverges), 150 (divergent trip counts), 0 (no lane enters).
    assert!(seen.contains(&40) && seen.contains(&150) && seen.contains(&0), "guard_loop.mir launches: n = {seen:?}");
    let l40 = outs[seen.iter().position(|&n| n == 40).unwrap()].clone();
    assert_eq!(&l40[..3], &[0, 1, 2]);
    assert_eq!(l40[39], 39);
    assert_eq!(l40[40], sentinel);

    // guard_preheader_join: out[lid] = number of trips of i = lid, lid + 8, ...
    // while i < n, i.e. ceil((n - lid) / 8), for lid < n, and 0 otherwise.
    let (ls, outs) = run("guard_preheader_join.mir");
    let mut issue_case = false;
    for (l, out) in ls.iter().zip(&outs) {
        let n = arg(l, "n");
        let block = l.spec.block[0] as u64;
        assert_eq!(out.len() as u64, block, "guard_preheader_join.mir:{}: one slot per work-item of a group", l.line);
        let want: Vec<u64> = (0..block).map(|lid| if lid < n { (n - lid).div_ceil(8) } else { 0 }).collect();
        assert_eq!(out, &want, "guard_preheader_join.mir:{} (n = {n})", l.line);
        if l.spec.grid == [8, 1, 1] && n == 3 {
            // The issue's expectation, literally.
            assert_eq!(out, &[1, 1, 1, 0, 0, 0, 0, 0]);
            issue_case = true;
        }
    }
    assert!(issue_case, "guard_preheader_join.mir has the issue's launch (8 work-items, n = 3)");
}

/// Every shape has its OpenCL C twin (NAME.cl, a kernel `k` with the same
/// parameters), and the twin computes what the MIR computes: compiled by
/// clang-22 -O2 for gfx90a, gfx942 and gfx1100 and linked by ld.lld-22, it
/// leaves the interpreter's buffers on the simulator for every launch of the
/// shape. This keeps scripts/cf_overhead's comparison fair, and checks the
/// interpreter against code we did not generate.
/// Skipped outside CI when clang-22 or ld.lld-22 is missing.
#[test]
fn opencl_twins_compute_what_the_mir_computes() {
    let mut missing = Vec::new();
    let mut pairs = Vec::new();
    for path in shape_files() {
        let cl = path.with_extension("cl");
        match std::fs::read_to_string(&cl) {
            Ok(text) if text.contains("__kernel void k(") => pairs.push((path, cl)),
            Ok(_) => missing.push(format!("{}: no `__kernel void k(`", name_of(&cl))),
            Err(_) => missing.push(format!("{} has no twin {}", name_of(&path), name_of(&cl))),
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
    let Some(clang) = amdgpu_cg::isa::llvm_tools::require("clang-22") else { return };
    let Some(lld) = amdgpu_cg::isa::llvm_tools::require("ld.lld-22") else { return };
    let work = std::env::temp_dir().join(format!("amdgpu-cg-cf-twins-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let mut failures = Vec::new();
    for (mir_path, cl) in pairs {
        let file = name_of(&mir_path);
        let text = std::fs::read_to_string(&mir_path).unwrap();
        let module = mir::parse(&text).unwrap_or_else(|d| panic!("{file}: {d}"));
        let launches = launches(&file, &text).unwrap();
        for gpu in ["gfx90a", "gfx942", "gfx1100"] {
            let stem = format!("{}.{gpu}", mir_path.file_stem().unwrap().to_string_lossy());
            let (obj, hsaco) = (work.join(format!("{stem}.o")), work.join(format!("{stem}.hsaco")));
            let out = std::process::Command::new(&clang)
                .args(["-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa", &format!("-mcpu={gpu}"), "-nogpulib", "-O2", "-cl-kernel-arg-info", "-c", "-o"])
                .arg(&obj)
                .arg(&cl)
                .output()
                .expect("run clang-22");
            if !out.status.success() || !out.stderr.is_empty() {
                failures.push(format!("{} for {gpu}: clang-22 failed or warned:\n{}", name_of(&cl), String::from_utf8_lossy(&out.stderr)));
                continue;
            }
            let out = std::process::Command::new(&lld).arg("-shared").arg(&obj).arg("-o").arg(&hsaco).output().expect("run ld.lld-22");
            if !out.status.success() {
                failures.push(format!("{} for {gpu}: ld.lld-22: {}", name_of(&cl), String::from_utf8_lossy(&out.stderr)));
                continue;
            }
            let code = std::fs::read(&hsaco).unwrap();
            for l in &launches {
                let want = mir::launch::run(&module, &l.spec).unwrap_or_else(|e| panic!("{file}:{}: interpreter: {e}", l.line));
                match amdgpu_cg::sim::run_launch(&code, &l.spec) {
                    Err(e) => failures.push(format!("{} for {gpu}, {file}:{}: simulator: {}", name_of(&cl), l.line, first_line(&e))),
                    Ok((got, _)) => {
                        for d in differences(&got, &want.buffers) {
                            failures.push(format!("{} for {gpu}, {file}:{}: the twin differs from the MIR: {d}", name_of(&cl), l.line));
                        }
                    }
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
