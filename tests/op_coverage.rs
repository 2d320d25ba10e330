//! The operation-coverage matrix: every operation x type of the docs/mir.md
//! Instructions table that the verifier accepts, with uniform and with divergent
//! operands, compiled for every target, run on the simulator and compared with
//! the interpreter on edge-value inputs (tests/common/opmatrix.rs builds the
//! kernels).
//!
//! Run `cargo test --test op_coverage -- --nocapture` to see the matrix (also
//! written to target/op_coverage.txt). `OP_COVERAGE_FILTER=icmp` restricts the
//! run to operations whose name contains `icmp`.
//!
//! The test fails on a wrong result, a simulator or interpreter error or a panic
//! (except the defects in KNOWN_WRONG), and when the refusals differ from
//! EXPECTED_REFUSALS in either direction.

mod common;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use amdgpu_cg::codegen::{self, Options, Report};
use amdgpu_cg::codeobj::{self, CodeObjectTarget, CodeObjectVersion};
use amdgpu_cg::isa::Gpu;
use amdgpu_cg::mir::interp::ops;
use amdgpu_cg::mir::launch::{format_element, BufferOutput};
use amdgpu_cg::mir::{self};
use common::opmatrix::{self, Case, Combination, InputTable, Operands};

/// A set of cells: operation and type patterns (`*` matches any text, `|`
/// separates alternatives, each matched against the whole name), optionally
/// limited to targets (same syntax, over the labels of [`target_label`]) and to
/// uniform or divergent operands.
#[derive(Clone, Copy, Debug)]
struct Pattern {
    op: &'static str,
    ty: &'static str,
    target: Option<&'static str>,
    operands: Option<Operands>,
}

#[allow(dead_code)] // for the lists below, empty today
const fn cells(op: &'static str, ty: &'static str) -> Pattern {
    Pattern { op, ty, target: None, operands: None }
}

impl Pattern {
    #[allow(dead_code)]
    const fn on(self, target: &'static str) -> Pattern {
        Pattern { target: Some(target), ..self }
    }

    #[allow(dead_code)] // for a refusal of uniform or of divergent operands only
    const fn with(self, operands: Operands) -> Pattern {
        Pattern { operands: Some(operands), ..self }
    }

    fn matches(&self, cell: &CellId) -> bool {
        glob(self.op, &cell.op)
            && glob(self.ty, &cell.ty)
            && self.target.is_none_or(|t| glob(t, &cell.target))
            && self.operands.is_none_or(|o| o == cell.operands)
    }
}

impl std::fmt::Display for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cells({:?}, {:?})", self.op, self.ty)?;
        if let Some(t) = self.target {
            write!(f, ".on({t:?})")?;
        }
        if let Some(o) = self.operands {
            write!(f, ".with(Operands::{o:?})")?;
        }
        Ok(())
    }
}

/// Wrong results the test knows about, each with its cause. A listed cell may
/// fail in any way; an entry that matches no failing cell fails the test, so
/// that a fix removes it.
const KNOWN_WRONG: &[(Pattern, &str)] = &[];

/// The combinations the code generator refuses today, exactly: a new refusal
/// and a listed cell that compiles both fail the test. The comments give the
/// compile error.
const EXPECTED_REFUSALS: &[Pattern] = &[];

// ---------------------------------------------------------------- running

/// Which cell of the matrix.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct CellId {
    op: String,
    ty: String,
    target: String,
    operands: Operands,
}

impl std::fmt::Display for CellId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} on {} ({})", self.op, self.ty, self.target, if self.operands == Operands::Uniform { "uniform" } else { "divergent" })
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Outcome {
    Ok,
    /// The compile error's message.
    Refused(String),
    /// The first differing element.
    Mismatch(String),
    SimError(String),
    InterpError(String),
    Panic(String),
}

impl Outcome {
    fn code(&self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Refused(_) => "ref",
            Outcome::Mismatch(_) => "WRONG",
            Outcome::SimError(_) => "SIMERR",
            Outcome::InterpError(_) => "INTERR",
            Outcome::Panic(_) => "PANIC",
        }
    }

    fn detail(&self) -> &str {
        match self {
            Outcome::Ok => "",
            Outcome::Refused(m) | Outcome::Mismatch(m) | Outcome::SimError(m) | Outcome::InterpError(m) | Outcome::Panic(m) => m,
        }
    }

    fn is_failure(&self) -> bool {
        !matches!(self, Outcome::Ok | Outcome::Refused(_))
    }
}

fn target_label(target: &CodeObjectTarget) -> String {
    let name = target.target.gpu.name();
    if target.target.gpu == Gpu::Gfx1100 {
        let wave = if matches!(target.target.wave, amdgpu_cg::isa::WaveSize::W32) { 32 } else { 64 };
        format!("{name}w{wave}")
    } else {
        name.to_string()
    }
}

/// `*` matches any text; `|` separates alternatives.
fn glob(pattern: &str, text: &str) -> bool {
    fn one(p: &[u8], t: &[u8]) -> bool {
        match p.split_first() {
            None => t.is_empty(),
            Some((b'*', rest)) => (0..=t.len()).any(|i| one(rest, &t[i..])),
            Some((c, rest)) => t.first() == Some(c) && one(rest, &t[1..]),
        }
    }
    pattern.split('|').any(|alt| one(alt.trim().as_bytes(), text.as_bytes()))
}

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(non-text panic)".to_string()
    }
}

/// The first element where the simulator's buffers differ from the
/// interpreter's (NaNs of one type are all equal; a transcendental's results
/// need only be within its bound of the interpreter's, see
/// `ops::transcendental_acceptable`).
fn first_difference(op: &str, case: &Case, want: &[BufferOutput], got: &[BufferOutput]) -> Option<String> {
    let transcendental = amdgpu_cg::mir::UnOp::ALL.into_iter().find(|u| u.is_transcendental() && u.mnemonic() == op);
    for w in want {
        let Some(g) = got.iter().find(|b| b.name == w.name) else {
            return Some(format!("buffer {} missing from the simulator's output", w.name));
        };
        let per_unit = case.per_unit.iter().find(|(b, _)| *b == w.name).map_or(1, |(_, n)| *n).max(1);
        let acceptable = |i: usize, a: u64, b: u64| match transcendental {
            Some(u) if w.name == "out" => {
                let values = &case.unit_values[i / per_unit][0];
                let x = values[(i % per_unit) % values.len()];
                ops::transcendental_acceptable(u, &w.ty, x, a, b)
            }
            _ => ops::equivalent(&w.ty, a, b),
        };
        let differing: Vec<(usize, u64, u64)> =
            w.bits().into_iter().zip(g.bits()).enumerate().filter(|(i, (a, b))| !acceptable(*i, *a, *b)).map(|(i, (a, b))| (i, a, b)).collect();
        if let Some(&(index, a, b)) = differing.first() {
            return Some(format!(
                "{}[{index}] ({}): expected {} (0x{a:x}), got {} (0x{b:x}); {} of {} elements differ",
                w.name,
                case.inputs_of(&w.name, index),
                format_element(&w.ty, a),
                format_element(&w.ty, b),
                differing.len(),
                w.bits().len()
            ));
        }
    }
    None
}

/// Runs one combination with one kind of operands on every target.
fn run_cell(combination: &Combination, operands: Operands, table: &InputTable, targets: &[CodeObjectTarget]) -> Vec<Outcome> {
    let case = combination.case(operands, table);
    let module = match mir::parse(&case.text) {
        Ok(m) => m,
        Err(e) => return vec![Outcome::Panic(format!("the kernel stopped parsing: {e:?}")); targets.len()],
    };
    let want = catch_unwind(AssertUnwindSafe(|| mir::launch::run(&module, &case.spec)))
        .unwrap_or_else(|p| Err(format!("interpreter panicked: {}", panic_message(p))));
    targets
        .iter()
        .map(|target| {
            let compiled = catch_unwind(AssertUnwindSafe(|| {
                codegen::compile_module(&module, target, CodeObjectVersion::V5, &Options::default(), &mut Report::default())
            }));
            let object = match compiled {
                Err(p) => return Outcome::Panic(format!("compile: {}", panic_message(p))),
                Ok(Err(d)) => return Outcome::Refused(d.message.clone()),
                Ok(Ok((object, _))) => object,
            };
            let want = match &want {
                Ok(w) => w,
                Err(e) => return Outcome::InterpError(e.clone()),
            };
            let hsaco = match catch_unwind(AssertUnwindSafe(|| codeobj::write_hsaco(&object))) {
                Err(p) => return Outcome::Panic(format!("write_hsaco: {}", panic_message(p))),
                Ok(Err(e)) => return Outcome::SimError(format!("write_hsaco: {e}")),
                Ok(Ok(h)) => h,
            };
            match catch_unwind(AssertUnwindSafe(|| amdgpu_cg::sim::run_launch(&hsaco, &case.spec))) {
                Err(p) => Outcome::Panic(format!("simulator: {}", panic_message(p))),
                Ok(Err(e)) => Outcome::SimError(e),
                Ok(Ok((got, _))) => match first_difference(&combination.op, &case, &want.buffers, &got) {
                    Some(d) => Outcome::Mismatch(d),
                    None => Outcome::Ok,
                },
            }
        })
        .collect()
}

/// Threads: the machine has two cores.
const THREADS: usize = 2;

/// A combination's outcomes: per kind of operands, one per target.
type RowOutcomes = Vec<(Operands, Vec<Outcome>)>;

struct Matrix {
    targets: Vec<String>,
    /// Per combination in the language: its outcomes.
    rows: Vec<(Combination, RowOutcomes)>,
    /// Candidates the verifier rejects, with its first message.
    not_in_language: Vec<(Combination, String)>,
    /// Candidates whose kernel does not even parse: a bug of the generator,
    /// which would otherwise pass for "not in the language".
    unparsable: Vec<(Combination, String)>,
}

impl Matrix {
    fn cells(&self) -> impl Iterator<Item = (CellId, &Outcome)> + '_ {
        self.rows.iter().flat_map(move |(c, by_operands)| {
            by_operands.iter().flat_map(move |(operands, outcomes)| {
                outcomes.iter().zip(&self.targets).map(move |(outcome, target)| {
                    (CellId { op: c.op.clone(), ty: c.ty.clone(), target: target.clone(), operands: *operands }, outcome)
                })
            })
        })
    }
}

fn build_matrix(filter: Option<&str>) -> Matrix {
    let configurations = CodeObjectTarget::all_configurations();
    let mut in_language = Vec::new();
    let mut not_in_language = Vec::new();
    let mut unparsable = Vec::new();
    for c in opmatrix::candidates() {
        if filter.is_some_and(|f| !c.op.contains(f)) {
            continue;
        }
        match mir::parse(&c.kernel_text(Operands::Divergent)) {
            Err(e) => unparsable.push((c, e.message)),
            Ok(m) => match mir::verify::verify(&m) {
                Ok(()) => in_language.push(c),
                Err(errors) => not_in_language.push((c, errors[0].message.clone())),
            },
        }
    }
    let table = InputTable::new();
    let work: Vec<(usize, Operands)> = (0..in_language.len()).flat_map(|i| Operands::BOTH.map(|o| (i, o))).collect();
    let results: Mutex<Vec<Option<Vec<Outcome>>>> = Mutex::new(vec![None; work.len()]);
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..THREADS {
            scope.spawn(|| loop {
                let n = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(i, operands)) = work.get(n) else { break };
                let outcomes = run_cell(&in_language[i], operands, &table, &configurations);
                results.lock().unwrap()[n] = Some(outcomes);
            });
        }
    });
    let mut results = results.into_inner().unwrap().into_iter();
    let rows = in_language
        .into_iter()
        .map(|c| {
            let by_operands = Operands::BOTH.iter().map(|&o| (o, results.next().unwrap().unwrap())).collect();
            (c, by_operands)
        })
        .collect();
    Matrix { targets: configurations.iter().map(target_label).collect(), rows, not_in_language, unparsable }
}

// ---------------------------------------------------------------- report

fn known_wrong(cell: &CellId) -> Option<&'static str> {
    KNOWN_WRONG.iter().find(|(p, _)| p.matches(cell)).map(|(_, why)| *why)
}

fn render(matrix: &Matrix, seconds: f64) -> String {
    let mut out = String::new();
    let columns: Vec<String> = matrix.targets.iter().flat_map(|t| Operands::BOTH.map(|o| format!("{t}:{}", o.label()))).collect();
    let _ = writeln!(out, "{:<22} {:<28} {}", "operation", "type", columns.iter().map(|c| format!("{c:<13}")).collect::<String>());
    for (c, by_operands) in &matrix.rows {
        let mut line = format!("{:<22} {:<28} ", c.op, c.ty);
        for (t, target) in matrix.targets.iter().enumerate() {
            for (operands, outcomes) in by_operands {
                let cell = CellId { op: c.op.clone(), ty: c.ty.clone(), target: target.clone(), operands: *operands };
                let code = match &outcomes[t] {
                    o if o.is_failure() && known_wrong(&cell).is_some() => "known",
                    o => o.code(),
                };
                let _ = write!(line, "{code:<13}");
            }
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }

    let total = matrix.cells().count();
    let ok = matrix.cells().filter(|(_, o)| **o == Outcome::Ok).count();
    let refused = matrix.cells().filter(|(_, o)| matches!(o, Outcome::Refused(_))).count();
    let failed = matrix.cells().filter(|(_, o)| o.is_failure()).count();
    let rows_all_ok = matrix.rows.iter().filter(|(_, b)| b.iter().all(|(_, os)| os.iter().all(|o| *o == Outcome::Ok))).count();
    let percent = |n: usize, d: usize| if d == 0 { 0.0 } else { 100.0 * n as f64 / d as f64 };
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "totals: {ok}/{total} cells compiled and correct ({:.1}%), {refused} refused, {failed} failed; \
         {rows_all_ok}/{} documented combinations correct on every target with both kinds of operands ({:.1}%); \
         {} candidates not in the language; {seconds:.1} s",
        percent(ok, total),
        matrix.rows.len(),
        percent(rows_all_ok, matrix.rows.len()),
        matrix.not_in_language.len()
    );
    // By family (the first word of the operation).
    let mut families: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for (cell, o) in matrix.cells() {
        let family = cell.op.split(' ').next().unwrap_or("").to_string();
        let entry = families.entry(family).or_default();
        entry.1 += 1;
        if *o == Outcome::Ok {
            entry.0 += 1;
        }
    }
    let _ = writeln!(out, "by family (cells correct / cells):");
    for (family, (ok, total)) in &families {
        let _ = writeln!(out, "  {family:<16} {ok:>5}/{total:<5} {:5.1}%", percent(*ok, *total));
    }

    let mut refusals: BTreeMap<&str, Vec<CellId>> = BTreeMap::new();
    for (cell, o) in matrix.cells() {
        if let Outcome::Refused(m) = o {
            refusals.entry(m.as_str()).or_default().push(cell);
        }
    }
    let mut groups: Vec<(&str, Vec<CellId>)> = refusals.into_iter().collect();
    groups.sort_by_key(|(_, cells)| std::cmp::Reverse(cells.len()));
    let _ = writeln!(out, "\nrefusals by message ({} groups):", groups.len());
    for (message, cells) in &groups {
        let _ = writeln!(out, "  {} cells: {message}", cells.len());
        for line in summarize(cells) {
            let _ = writeln!(out, "      {line}");
        }
    }

    let failures: Vec<(CellId, &Outcome)> = matrix.cells().filter(|(_, o)| o.is_failure()).collect();
    let _ = writeln!(out, "\nfailures ({}):", failures.len());
    for (cell, o) in &failures {
        let known = known_wrong(cell).map(|why| format!(" [known: {why}]")).unwrap_or_default();
        let _ = writeln!(out, "  {cell}: {} {}{known}", o.code(), o.detail());
    }

    let mut by_op: BTreeMap<&str, usize> = BTreeMap::new();
    for (c, _) in &matrix.not_in_language {
        *by_op.entry(c.op.as_str()).or_default() += 1;
    }
    let _ = writeln!(out, "\nnot in the language ({} candidates the verifier rejects), per operation:", matrix.not_in_language.len());
    let counts: Vec<String> = by_op.iter().map(|(op, n)| format!("{op}: {n}")).collect();
    let _ = writeln!(out, "  {}", counts.join(", "));
    out
}

/// One line per (operation, type) of a set of cells, naming the targets and
/// operands (u, d) that are in it: `fadd f16 [gfx1100w32:ud gfx1100w64:ud]`.
fn summarize(cells: &[CellId]) -> Vec<String> {
    let mut by_row: BTreeMap<(String, String), BTreeMap<String, String>> = BTreeMap::new();
    for c in cells {
        by_row.entry((c.op.clone(), c.ty.clone())).or_default().entry(c.target.clone()).or_default().push_str(c.operands.label());
    }
    let targets = CodeObjectTarget::all_configurations().len();
    by_row
        .into_iter()
        .map(|((op, ty), by_target)| {
            let everywhere = by_target.len() == targets && by_target.values().all(|o| o.len() == 2);
            let where_: Vec<String> = by_target.iter().map(|(t, o)| format!("{t}:{o}")).collect();
            format!("{op} {ty} [{}]", if everywhere { "all targets, u and d".to_string() } else { where_.join(" ") })
        })
        .collect()
}

fn not_in_language_listing(matrix: &Matrix) -> String {
    let mut out = String::from("\nnot in the language (candidate: the verifier's first message):\n");
    for (c, why) in &matrix.not_in_language {
        let _ = writeln!(out, "  {} {}: {why}", c.op, c.ty);
    }
    out
}

// ---------------------------------------------------------------- the test

#[test]
fn every_operation_on_every_type_matches_the_interpreter() {
    let filter = std::env::var("OP_COVERAGE_FILTER").ok().filter(|f| !f.is_empty());
    let start = Instant::now();
    // Panics are outcomes here; their messages are in the report.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let matrix = build_matrix(filter.as_deref());
    std::panic::set_hook(default_hook);
    let seconds = start.elapsed().as_secs_f64();

    let report = render(&matrix, seconds);
    eprintln!("{report}");
    let path = format!("{}/target/op_coverage.txt", env!("CARGO_MANIFEST_DIR"));
    let _ = std::fs::write(&path, format!("{report}{}", not_in_language_listing(&matrix)));

    let mut problems = Vec::new();
    if !matrix.unparsable.is_empty() {
        let lines: Vec<String> = matrix.unparsable.iter().map(|(c, e)| format!("  {} {}: {e}", c.op, c.ty)).collect();
        problems.push(format!("the generator wrote kernels that do not parse:\n{}", lines.join("\n")));
    }
    // 1. Wrong results, simulator and interpreter errors, panics.
    let unexpected: Vec<String> =
        matrix.cells().filter(|(c, o)| o.is_failure() && known_wrong(c).is_none()).map(|(c, o)| format!("  {c}: {} {}", o.code(), o.detail())).collect();
    if !unexpected.is_empty() {
        problems.push(format!("{} cells fail (not in KNOWN_WRONG):\n{}", unexpected.len(), unexpected.join("\n")));
    }
    for (pattern, why) in KNOWN_WRONG {
        let matched: Vec<(CellId, &Outcome)> = matrix.cells().filter(|(c, _)| pattern.matches(c)).collect();
        if !matched.is_empty() && !matched.iter().any(|(_, o)| o.is_failure()) {
            problems.push(format!("fixed: remove {pattern} ({why}) from KNOWN_WRONG: every cell it matches now passes or is refused"));
        }
    }
    // 2. Refusals, exactly as listed.
    let new_refusals: Vec<CellId> =
        matrix.cells().filter(|(c, o)| matches!(o, Outcome::Refused(_)) && !EXPECTED_REFUSALS.iter().any(|p| p.matches(c))).map(|(c, _)| c).collect();
    if !new_refusals.is_empty() {
        let mut by_message: BTreeMap<String, Vec<CellId>> = BTreeMap::new();
        for (c, o) in matrix.cells() {
            if new_refusals.contains(&c) {
                by_message.entry(o.detail().to_string()).or_default().push(c);
            }
        }
        let mut text = format!("{} new refusals (not in EXPECTED_REFUSALS):\n", new_refusals.len());
        for (message, cells) in by_message {
            let _ = writeln!(text, "  {message}");
            for line in summarize(&cells) {
                let _ = writeln!(text, "      {line}");
            }
        }
        problems.push(text);
    }
    for pattern in EXPECTED_REFUSALS {
        let matched: Vec<(CellId, &Outcome)> = matrix.cells().filter(|(c, _)| pattern.matches(c)).collect();
        let compiling: Vec<CellId> = matched.iter().filter(|(_, o)| !matches!(o, Outcome::Refused(_))).map(|(c, _)| c.clone()).collect();
        if !compiling.is_empty() {
            problems.push(format!(
                "now supported: remove it from EXPECTED_REFUSALS (or narrow it): {pattern} matches {} cells that compile:\n{}",
                compiling.len(),
                summarize(&compiling).iter().map(|l| format!("      {l}")).collect::<Vec<_>>().join("\n")
            ));
        } else if matched.is_empty() && filter.is_none() {
            problems.push(format!("now supported: remove it from EXPECTED_REFUSALS: {pattern} matches no cell of the matrix"));
        }
    }
    assert!(problems.is_empty(), "op coverage ({} s; matrix in {path}):\n{}", seconds as u64, problems.join("\n"));
}
