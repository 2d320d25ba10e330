//! Differential fuzzing of control flow: random reducible control-flow graphs
//! (tests/common/cfggen.rs: nested loops with break, continue and return, extra
//! forward edges, guards, uniform and divergent branches) run in the MIR
//! interpreter and, compiled for every target configuration, on the ISA
//! simulator; the buffers must be identical.
//!
//! Each (program, target) pair ends as one of:
//! - pass;
//! - unsupported: the code generator refused an *operation* ("not supported by
//!   the code generator"; the generator avoids those, so this should not happen);
//! - panic: the compiler, the code object writer or the simulator panicked;
//! - refusal: any other compile error (every input is reducible: all must compile);
//! - mismatch: the simulator failed, or a buffer differs from the interpreter's.
//!
//! Panics, refusals and mismatches fail the test. Environment:
//! - `CFG_FUZZ_CASES` (default 100): number of programs;
//! - `CFG_FUZZ_SEED` (decimal or 0x hex): program k has seed `SEED + k * 0x9e3779b97f4a7c15`,
//!   so `CFG_FUZZ_SEED=<a program's seed> CFG_FUZZ_CASES=1` reproduces that program;
//! - `CFG_FUZZ_SHOW` (default 3): failing programs printed in full (MIR and every message);
//! - `CFG_FUZZ_DUMP=1`: write every program (not only the failing ones) as
//!   `.mir` + `.json` (for `amdgpu-cg run FILE.mir --launch FILE.json`) to
//!   `target/tmp/cfg_fuzz/`;
//! - `CFG_FUZZ_TARGETS`: only these configurations, e.g. `gfx90a,gfx1100 W64`
//!   (`none`: the interpreter only, to look at the generator);
//! - `CFG_FUZZ_GENERATOR_CASES` (default 300): programs the generator-only test
//!   checks (parse, verify, interpreter);
//! - `CFG_FUZZ_THREADS` (default: the available cores, at most 4);
//! - `CFG_FUZZ_OPT` (0, 1 or 2; default 2): the optimisation level;
//! - `CFG_FUZZ_VERBOSE=1`: one line per program (shape, slot coverage, outcomes);
//!   `=2` also lists the slots no work-item writes (store sites no lane reaches).

mod common;

use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use amdgpu_cg::codegen::{self, Options, Report};
use amdgpu_cg::codeobj::{self, CodeObjectTarget, CodeObjectVersion};
use amdgpu_cg::mir::{self, launch::RunOutput};
use common::cfggen::{self, numbered, Program, Shape, SENTINEL};

const DEFAULT_CASES: usize = 100;
const DEFAULT_SEED: u64 = 0xcf9_f022_5eed;
const SEED_STEP: u64 = 0x9e37_79b9_7f4a_7c15;
/// Programs that once failed, run after the generated ones (unless
/// `CFG_FUZZ_SEED` asks for other programs): fold_merges forwarded a copy
/// into a register a later copy forwarded away ("register allocation
/// failed: EntryLivein"; 3 of 15,000 programs from seed 0x5eed1206). Then
/// five from seed 0x3207 that failed while lowering merged arguments for
/// every running lane: along back edges (a header's parameters read later
/// in the pass for lanes that went elsewhere: wrong stores) and with a merge
/// folded above an earlier merge into the same variable (EntryLivein).
/// Then one from seed 0x81206 (one of 15,000) whose loop latch assigned the
/// header's parameters for the back edge before merging, at its exit, a
/// value sharing a parameter's register (`sext %i`), and one from seed
/// 0x91206 that a too-narrow fix of it broke (an edge assigning a loop's
/// rotated parameters read one it had assigned).
const REGRESSION_SEEDS: [u64; 10] = [
    0x065e_eab8_3e8c_2d70,
    0x0671_44e7_5234_3c71,
    0xdba4_ae4b_412f_de69,
    0x9e37_79b9_7f4a_ae1c,
    0xf1bb_cdcb_fa54_12af,
    0x5a40_a958_4ad2_8c2e,
    0xfff4_a85c_d7d4_a5ff,
    0x589e_4264_5672_97c6,
    0xad90_9c52_39b9_1da7,
    0x1c6a_b295_cf8d_b5ad,
];

fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.trim();
    let parsed = match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(&hex.replace('_', ""), 16),
        None => v.replace('_', "").parse::<u64>(),
    };
    Some(parsed.unwrap_or_else(|_| panic!("{name}={v}: expected a number")))
}

// ---- panics: caught, with the message and location, without the default hook's output ----

thread_local! {
    static CAPTURE: RefCell<Option<String>> = const { RefCell::new(None) };
}

fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let captured = CAPTURE.with(|c| match c.borrow_mut().as_mut() {
                Some(s) => {
                    *s = info.to_string();
                    true
                }
                None => false,
            });
            if !captured {
                previous(info);
            }
        }));
    });
}

/// Runs `f`, turning a panic into its message.
fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    CAPTURE.with(|c| *c.borrow_mut() = Some(String::new()));
    let r = panic::catch_unwind(AssertUnwindSafe(f));
    let message = CAPTURE.with(|c| c.borrow_mut().take()).unwrap_or_default();
    r.map_err(|payload| {
        if !message.is_empty() {
            message
        } else if let Some(s) = payload.downcast_ref::<&str>() {
            s.to_string()
        } else if let Some(s) = payload.downcast_ref::<String>() {
            s.clone()
        } else {
            "panic with a non-string payload".to_string()
        }
    })
}

// ---- one program on one target ----

enum Outcome {
    Pass,
    Unsupported(String),
    Panic(String),
    Refusal(String),
    Mismatch(String),
}

impl Outcome {
    fn class(&self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Unsupported(_) => "unsupported operation",
            Outcome::Panic(_) => "panic",
            Outcome::Refusal(_) => "refusal",
            Outcome::Mismatch(_) => "mismatch",
        }
    }

    fn message(&self) -> &str {
        match self {
            Outcome::Pass => "",
            Outcome::Unsupported(m) | Outcome::Panic(m) | Outcome::Refusal(m) | Outcome::Mismatch(m) => m,
        }
    }

    fn is_failure(&self) -> bool {
        matches!(self, Outcome::Panic(_) | Outcome::Refusal(_) | Outcome::Mismatch(_))
    }
}

#[derive(Default)]
struct Times {
    interp: Duration,
    compile: Duration,
    sim: Duration,
}

/// Where slot `index` of `out` belongs, as text.
fn describe_slot(p: &Program, index: usize) -> String {
    let (item, slot) = (index / p.slots_per_item, index % p.slots_per_item);
    format!("out[{index}] (work-item {} of group {}, slot {slot}: {})", item % p.block_size, item / p.block_size, p.slots.get(slot).map_or("?", |s| s.as_str()))
}

fn check_target(p: &Program, want: &RunOutput, target: &CodeObjectTarget, times: &mut Times) -> Outcome {
    let file = mir::SourceFile::new(format!("seed_{:#x}.mir", p.seed), p.text.clone());
    let start = Instant::now();
    let level = std::env::var("CFG_FUZZ_OPT").ok().and_then(|l| amdgpu_cg::opt::OptLevel::parse(&l)).unwrap_or(amdgpu_cg::opt::OptLevel::O2);
    let options = Options { opt_level: level, verify_passes: true, ..Options::default() };
    let compiled = guarded(|| codegen::compile_module(&p.module, target, CodeObjectVersion::V5, &options, &mut Report::default()));
    times.compile += start.elapsed();
    let object = match compiled {
        Err(panic) => return Outcome::Panic(format!("compile_module panicked: {panic}")),
        Ok(Err(d)) => {
            let mut m = d.short(Some(&file));
            if let Some(c) = &d.context {
                m.push_str(&format!(" ({c})"));
            }
            return if d.message.contains("not supported by the code generator") { Outcome::Unsupported(m) } else { Outcome::Refusal(m) };
        }
        Ok(Ok((object, _))) => object,
    };
    let hsaco = match guarded(|| codeobj::write_hsaco(&object)) {
        Err(panic) => return Outcome::Panic(format!("write_hsaco panicked: {panic}")),
        Ok(Err(e)) => return Outcome::Refusal(format!("write_hsaco: {e}")),
        Ok(Ok(h)) => h,
    };
    // The simulator's budget: generous for correct code (a few times the
    // interpreter's count), small enough that a hang in compiled code ends soon.
    let mut spec = p.launch.clone();
    spec.max_instructions = None;
    let options = amdgpu_cg::sim::Options { max_instructions: 2_000_000 + 8 * want.stats.instructions, ..Default::default() };
    let start = Instant::now();
    let ran = guarded(|| amdgpu_cg::sim::run_launch_with(&hsaco, &spec, &options));
    times.sim += start.elapsed();
    let got = match ran {
        Err(panic) => return Outcome::Panic(format!("the simulator panicked: {panic}")),
        Ok(Err(e)) => return Outcome::Mismatch(format!("simulator: {e}")),
        Ok(Ok((got, _))) => got,
    };
    let mut diffs = Vec::new();
    for w in &want.buffers {
        let Some(g) = got.iter().find(|g| g.name == w.name) else {
            return Outcome::Mismatch(format!("the simulator returned no buffer '{}'", w.name));
        };
        if g.bytes == w.bytes {
            continue;
        }
        let (gb, wb) = (g.bits(), w.bits());
        let differing: Vec<usize> = (0..wb.len()).filter(|&i| gb.get(i) != Some(&wb[i])).collect();
        let missing = differing.iter().filter(|&&i| gb[i] as u32 as i32 == SENTINEL).count();
        let extra = differing.iter().filter(|&&i| wb[i] as u32 as i32 == SENTINEL).count();
        diffs.push(format!(
            "buffer '{}': {} of {} words differ ({missing} never written by the compiled code, {extra} written only by it)",
            w.name,
            differing.len(),
            wb.len()
        ));
        for &i in differing.iter().take(10) {
            let what = if w.name == "out" { describe_slot(p, i) } else { format!("{}[{i}]", w.name) };
            let show = |b: u64| {
                let v = b as u32 as i32;
                if v == SENTINEL {
                    "(unwritten)".to_string()
                } else {
                    v.to_string()
                }
            };
            diffs.push(format!("  {what}: compiled {}, interpreter {}", show(gb[i]), show(wb[i])));
        }
        if differing.len() > 10 {
            diffs.push(format!("  ... and {} more", differing.len() - 10));
        }
    }
    if diffs.is_empty() {
        Outcome::Pass
    } else {
        Outcome::Mismatch(diffs.join("\n"))
    }
}

// ---- one program on every target ----

struct ProgramResult {
    index: usize,
    program: Program,
    outcomes: Vec<(String, Outcome)>,
    /// Slots (over all work-items) written by every / some / no work-item in the interpreter.
    slots_all: usize,
    slots_some: usize,
    slots_none: usize,
    /// Descriptions of the slots no work-item writes.
    dead_slots: Vec<String>,
    interp_instructions: u64,
    times: Times,
}

fn run_program(index: usize, seed: u64, targets: &[CodeObjectTarget]) -> ProgramResult {
    let program = cfggen::generate(seed);
    let start = Instant::now();
    let want = mir::launch::run(&program.module, &program.launch)
        .unwrap_or_else(|e| panic!("generator bug (seed {seed:#x}): the interpreter fails:\n{e}\n{}", numbered(&program.text)));
    let mut times = Times { interp: start.elapsed(), ..Times::default() };
    // Every work-item reached a `ret` (which stores its number), and which slots
    // only some work-items write.
    let out = want.buffer("out").expect("an out buffer").bits();
    let k = program.slots_per_item;
    for item in 0..program.work_items {
        let r = out[item * k + program.return_slot] as u32 as i32;
        assert!(r >= 1, "generator bug (seed {seed:#x}): work-item {item} reached no ret (slot holds {r})\n{}", numbered(&program.text));
    }
    let (mut slots_all, mut slots_some, mut slots_none) = (0, 0, 0);
    let mut dead_slots = Vec::new();
    for s in 0..k {
        let written = (0..program.work_items).filter(|&i| out[i * k + s] as u32 as i32 != SENTINEL).count();
        match written {
            0 => {
                slots_none += 1;
                dead_slots.push(format!("slot {s}: {}", program.slots[s]));
            }
            n if n == program.work_items => slots_all += 1,
            _ => slots_some += 1,
        }
    }
    let outcomes = targets.iter().map(|t| (target_name(t), check_target(&program, &want, t, &mut times))).collect();
    ProgramResult { index, program, outcomes, slots_all, slots_some, slots_none, dead_slots, interp_instructions: want.stats.instructions, times }
}

fn target_name(t: &CodeObjectTarget) -> String {
    format!("{} {:?}", t.target.gpu, t.target.wave)
}

fn dump(dir: &std::path::Path, p: &Program) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let base = dir.join(format!("seed_{:#x}", p.seed));
    std::fs::write(base.with_extension("mir"), &p.text).unwrap();
    std::fs::write(base.with_extension("json"), &p.launch_json).unwrap();
    base.with_extension("mir")
}

fn first_line(s: &str, max: usize) -> String {
    let line = s.lines().next().unwrap_or("");
    if line.chars().count() > max {
        format!("{}...", line.chars().take(max).collect::<String>())
    } else {
        line.to_string()
    }
}

#[test]
fn random_control_flow_matches_the_interpreter() {
    install_panic_hook();
    let started = Instant::now();
    let cases = env_u64("CFG_FUZZ_CASES").map_or(DEFAULT_CASES, |n| n as usize);
    let base_seed = env_u64("CFG_FUZZ_SEED").unwrap_or(DEFAULT_SEED);
    let show = env_u64("CFG_FUZZ_SHOW").map_or(3, |n| n as usize);
    let dump_all = std::env::var("CFG_FUZZ_DUMP").is_ok_and(|v| v != "0" && !v.is_empty());
    let threads = env_u64("CFG_FUZZ_THREADS").map_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()).min(4), |n| n as usize).max(1);
    let mut targets = CodeObjectTarget::all_configurations();
    if let Ok(only) = std::env::var("CFG_FUZZ_TARGETS") {
        // e.g. "gfx90a,gfx1100 W64"; "none" runs the interpreter only.
        let wanted: Vec<String> = only.split(',').map(|t| t.trim().to_lowercase()).filter(|t| !t.is_empty()).collect();
        targets.retain(|t| wanted.iter().any(|w| target_name(t).to_lowercase().starts_with(w.as_str())));
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cfg_fuzz");

    let regressions: &[u64] = if env_u64("CFG_FUZZ_SEED").is_some() { &[] } else { &REGRESSION_SEEDS };
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<ProgramResult>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                if index >= cases + regressions.len() {
                    return;
                }
                let seed = if index < cases { base_seed.wrapping_add((index as u64).wrapping_mul(SEED_STEP)) } else { regressions[index - cases] };
                let r = run_program(index, seed, &targets);
                results.lock().unwrap().push(r);
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|r| r.index);
    if std::env::var("CFG_FUZZ_VERBOSE").is_ok_and(|v| v != "0" && !v.is_empty()) {
        for r in &results {
            let sh = &r.program.shape;
            let classes: Vec<&str> = r.outcomes.iter().map(|(_, o)| o.class()).collect();
            eprintln!(
                "#{} seed {:#x}: {} blocks, {} loops (depth {}), {} divergent / {} uniform branches, slots {}/{}/{} (all/some/none), {} instructions: {}",
                r.index,
                r.program.seed,
                sh.blocks,
                sh.loops,
                sh.max_loop_depth,
                sh.divergent_branches,
                sh.uniform_branches,
                r.slots_all,
                r.slots_some,
                r.slots_none,
                r.interp_instructions,
                classes.join(", ")
            );
            if std::env::var("CFG_FUZZ_VERBOSE").is_ok_and(|v| v == "2") {
                eprintln!("    never written: {}", r.dead_slots.join("; "));
            }
        }
    }

    // Shapes.
    let mut total = Shape::default();
    let (mut min_blocks, mut max_blocks) = (usize::MAX, 0);
    let mut depth_histogram = [0usize; 5];
    let (mut slots_all, mut slots_some, mut slots_none) = (0, 0, 0);
    let mut max_interp = 0;
    let mut times = Times::default();
    for r in &results {
        let sh = &r.program.shape;
        total.add(sh);
        min_blocks = min_blocks.min(sh.blocks);
        max_blocks = max_blocks.max(sh.blocks);
        depth_histogram[sh.max_loop_depth.min(4)] += 1;
        slots_all += r.slots_all;
        slots_some += r.slots_some;
        slots_none += r.slots_none;
        max_interp = max_interp.max(r.interp_instructions);
        times.interp += r.times.interp;
        times.compile += r.times.compile;
        times.sim += r.times.sim;
        if dump_all {
            dump(&dir, &r.program);
        }
    }
    let n = results.len().max(1);
    eprintln!(
        "cfg_fuzz shapes over {} programs: blocks {min_blocks}/{:.1}/{max_blocks} (min/avg/max), {:.1} instructions on average",
        results.len(),
        total.blocks as f64 / n as f64,
        total.instructions as f64 / n as f64
    );
    eprintln!(
        "  loops {} (while {}, do-while {}, exit mid-body {}); programs by deepest loop nesting 0..4: {:?}",
        total.loops, total.loop_kinds[0], total.loop_kinds[1], total.loop_kinds[2], depth_histogram
    );
    eprintln!(
        "  breaks {} ({} out of several loops), continues {} ({} of an outer loop), returns {}",
        total.breaks, total.multi_level_breaks, total.continues, total.outer_continues, total.returns
    );
    eprintln!(
        "  jumps to an if's join from inside {} ({} leaving a loop), guarded loops {} ({} through a preheader), loop exits that are an if's join {}, loop headers that are an if's join {}",
        total.if_exits, total.loop_exits_to_if_join, total.guards, total.preheaders, total.exits_are_if_joins, total.headers_are_if_joins
    );
    eprintln!(
        "  branches: {} divergent, {} uniform; block parameters {} kept, {} removed (values used directly); uses of a loop header's values after the loop {}; store sites {}",
        total.divergent_branches, total.uniform_branches, total.block_params, total.direct_uses, total.uses_after_loop, total.store_sites
    );
    eprintln!(
        "  out slots (per program and slot, over the work-items, in the interpreter): {slots_all} written by all, {slots_some} by some only, {slots_none} by none; most instructions in one launch {max_interp}"
    );

    // Outcomes.
    let count = |class: &str| results.iter().flat_map(|r| &r.outcomes).filter(|(_, o)| o.class() == class).count();
    let (passes, unsupported, panics, refusals, mismatches) =
        (count("pass"), count("unsupported operation"), count("panic"), count("refusal"), count("mismatch"));
    let failing: Vec<&ProgramResult> = results.iter().filter(|r| r.outcomes.iter().any(|(_, o)| o.is_failure())).collect();
    for (k, r) in failing.iter().enumerate() {
        let path = dump(&dir, &r.program);
        if k < show {
            eprintln!("\n==== program {} (seed {:#x}) fails; {} ====", r.index, r.program.seed, path.display());
            eprintln!("{}", numbered(&r.program.text));
            for (t, o) in &r.outcomes {
                eprintln!("-- {t}: {}\n{}", o.class(), o.message());
            }
        }
    }
    if !failing.is_empty() {
        eprintln!("\nfailing programs (all written to {}):", dir.display());
        for r in &failing {
            let classes: Vec<String> = r.outcomes.iter().map(|(t, o)| format!("{t}: {}", o.class())).collect();
            let first = r.outcomes.iter().find(|(_, o)| o.is_failure()).map(|(_, o)| first_line(o.message(), 160)).unwrap_or_default();
            eprintln!("  #{} seed {:#x} ({} blocks): {}\n      {first}", r.index, r.program.seed, r.program.shape.blocks, classes.join(", "));
        }
        eprintln!(
            "reproduce one: CFG_FUZZ_SEED=<seed> CFG_FUZZ_CASES=1 cargo test --test cfg_fuzz -- --nocapture\n\
             or run it:     cargo run --release -q -- run {}/seed_<seed>.mir --launch {}/seed_<seed>.json",
            dir.display(),
            dir.display()
        );
    }
    eprintln!(
        "time: {:.1} s wall on {threads} threads; summed over threads: interpreter {:.1} s, compile {:.1} s, simulator {:.1} s",
        started.elapsed().as_secs_f64(),
        times.interp.as_secs_f64(),
        times.compile.as_secs_f64(),
        times.sim.as_secs_f64()
    );
    eprintln!("cfg_fuzz: {passes} passed, {unsupported} refused an unsupported operation (seed {base_seed:#x})");
    let summary = format!("cfg_fuzz: {} programs x {} targets: {panics} panics, {refusals} refusals, {mismatches} mismatches", results.len(), targets.len());
    eprintln!("{summary}");
    assert!(panics + refusals + mismatches == 0, "{summary}");
}

/// The same seed gives the same program and launch.
#[test]
fn the_generator_is_deterministic() {
    for seed in [0u64, 1, 0xdead_beef] {
        let (a, b) = (cfggen::generate(seed), cfggen::generate(seed));
        assert_eq!(a.text, b.text);
        assert_eq!(a.launch_json, b.launch_json);
    }
}

/// Many more programs through the generator's own checks only (parse, verify,
/// reducible, the interpreter runs every work-item to a `ret`): a generator bug
/// shows here even when it is rare.
#[test]
fn generated_programs_verify_and_terminate() {
    let cases = env_u64("CFG_FUZZ_GENERATOR_CASES").unwrap_or(300);
    let base = env_u64("CFG_FUZZ_SEED").unwrap_or(DEFAULT_SEED) ^ 0x6e6e_7261_746f_72;
    for k in 0..cases {
        run_program(k as usize, base.wrapping_add(k.wrapping_mul(SEED_STEP)), &[]);
    }
}
