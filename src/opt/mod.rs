//! MIR optimisation: the first phase of the pipeline (docs/pipeline.md),
//! SSA passes over verified MIR before selection. Each pass is one module, a
//! function over one function that says whether it changed anything; the
//! table below is their order and their gates, and nothing else decides it.
//!
//! At -O1 the passes run once, in order. At -O2 the round repeats until no
//! pass changes the function, at most [`MAX_ROUNDS`] times (each round only
//! removes instructions or makes them cheaper, so this ends well before the
//! bound on ordinary code; the bound caps pathological ping-pong).
//! At -O0 only [`O0_PASSES`] run, once: trivial block parameters and dead
//! code; no inlining.
//!
//! One step needs the whole module: [`inline`], which copies small device
//! functions into their callers. It runs after every function went through
//! its rounds once, and the functions it changed go through them again (a
//! copied body meets the caller's constants and values only then).

pub mod branches;
pub mod dce;
pub mod divide;
pub mod fold;
pub mod gvn;
pub mod hoist;
pub mod inline;
pub mod known;
pub mod licm;
pub mod merge;
pub mod narrow;
pub mod promote;
pub mod reassociate;
pub mod rewrite;
pub mod schedule;
pub mod select;
pub mod simplify;
pub mod spaces;

use crate::mir::ir::{Data, Function, Module};
use std::time::{Duration, Instant};

/// How hard the compiler works on the code (`-O0`, `-O1`, `-O2`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OptLevel {
    /// The fastest compile: only [`O0_PASSES`] (pass-through block
    /// parameters and dead code), then selection.
    O0,
    /// One round of the MIR passes.
    O1,
    /// The MIR passes to a fixed point (the default).
    #[default]
    O2,
}

impl OptLevel {
    /// Parses `0`, `1` or `2`.
    pub fn parse(s: &str) -> Option<OptLevel> {
        match s {
            "0" => Some(OptLevel::O0),
            "1" => Some(OptLevel::O1),
            "2" => Some(OptLevel::O2),
            _ => None,
        }
    }
}

/// One MIR pass: its name (for `--print-after` and `--time-passes`), the
/// lowest level it runs at, and the function.
pub struct MirPass {
    pub name: &'static str,
    pub level: OptLevel,
    /// The function, and the module's read-only data (which simplify reads).
    pub run: fn(&mut Function, &[Data]) -> bool,
}

/// The MIR passes of one round, in order.
pub const MIR_PASSES: [MirPass; 14] = [
    MirPass { name: "promote", level: OptLevel::O1, run: |f, _| promote::run(f) },
    MirPass { name: "spaces", level: OptLevel::O1, run: |f, _| spaces::run(f) },
    MirPass { name: "simplify", level: OptLevel::O1, run: simplify::run_with_data },
    MirPass { name: "divide", level: OptLevel::O1, run: |f, _| divide::run(f) },
    MirPass { name: "narrow", level: OptLevel::O1, run: |f, _| narrow::run(f) },
    MirPass { name: "reassociate", level: OptLevel::O1, run: |f, _| reassociate::run(f) },
    MirPass { name: "hoist", level: OptLevel::O1, run: |f, _| hoist::run(f) },
    MirPass { name: "licm", level: OptLevel::O1, run: |f, _| licm::run(f) },
    MirPass { name: "gvn", level: OptLevel::O1, run: |f, _| gvn::run(f) },
    MirPass { name: "dce", level: OptLevel::O1, run: |f, _| dce::run(f) },
    MirPass { name: "merge", level: OptLevel::O1, run: |f, _| merge::run(f) },
    MirPass { name: "select", level: OptLevel::O1, run: |f, _| select::run(f) },
    MirPass { name: "branches", level: OptLevel::O1, run: |f, _| branches::run(f) },
    MirPass { name: "schedule", level: OptLevel::O1, run: |f, _| schedule::run(f) },
];

/// What -O0 runs, once, with no inlining: block parameters that every
/// edge passes the same value become that value (no folding otherwise:
/// selection sees every other instruction as written), and dead code goes
/// (LLVM's fast instruction selection skips trivially dead instructions
/// too). Without them a chain of divergent ifs moved every value through
/// every join, and -O0 compiled slower than -O2 (stress ifchain-10000 twice
/// the instructions and time).
pub const O0_PASSES: [MirPass; 2] = [
    MirPass { name: "parameters", level: OptLevel::O0, run: |f, _| simplify::parameters(f) },
    MirPass { name: "dce", level: OptLevel::O0, run: |f, _| dce::run(f) },
];

/// The passes of one round at `level`.
pub fn passes(level: OptLevel) -> &'static [MirPass] {
    if level == OptLevel::O0 {
        &O0_PASSES
    } else {
        &MIR_PASSES
    }
}

/// The most rounds -O2 runs.
pub const MAX_ROUNDS: usize = 8;

/// What the caller wants to see of the optimisation.
#[derive(Default)]
pub struct Observe<'a> {
    /// Print the function after these passes (`"all"`: every pass).
    pub print_after: &'a [String],
    /// Run the MIR verifier after every pass (tests do; an error is an
    /// internal error naming the pass).
    pub verify: bool,
}

/// What optimisation reports: printed functions, pass timings.
#[derive(Default)]
pub struct Trace {
    pub printed: String,
    pub timings: Vec<(String, Duration)>,
}

/// What the module-level step needs to know about the module's functions.
#[derive(Clone, Copy, Default)]
pub struct ModuleFacts<'a> {
    /// Device functions defined in another object (`--extern`): their bodies
    /// here only serve the interpreter, so they are never inlined.
    pub external: &'a [String],
}

/// Optimises every function of a module (calls keep their signatures: the
/// passes change no function's interface), small callees inlined.
pub fn optimize(module: &Module, level: OptLevel, observe: &Observe, trace: &mut Trace) -> Result<Module, String> {
    optimize_in_parallel(module, level, observe, trace, 1, ModuleFacts::default())
}

/// [`optimize`] with the functions on up to `jobs` threads (0: one per core):
/// each function is optimised alone, then [`inline`] runs over the module on
/// this thread, then the functions it changed are optimised again, alone;
/// so the result and the trace are the same for any number of threads.
pub fn optimize_in_parallel(module: &Module, level: OptLevel, observe: &Observe, trace: &mut Trace, jobs: usize, facts: ModuleFacts) -> Result<Module, String> {
    optimize_functions(module, |index| module.functions[index].clone(), level, observe, trace, jobs, facts)
}

/// [`optimize_in_parallel`] of a module the caller gives up: its functions
/// are moved through the passes instead of copied (a million-instruction
/// kernel's copy was 0.2 GB kept alive beside the result). Same result.
pub fn optimize_owned(mut module: Module, level: OptLevel, observe: &Observe, trace: &mut Trace, jobs: usize, facts: ModuleFacts) -> Result<Module, String> {
    let bodies: Vec<std::sync::Mutex<Option<Function>>> = std::mem::take(&mut module.functions).into_iter().map(|f| std::sync::Mutex::new(Some(f))).collect();
    // What the passes read of the module besides the function they work on:
    // its data, and every function's interface (the verifier between passes
    // checks calls against it).
    module.functions = bodies.iter().map(|f| interface(f.lock().expect("not poisoned").as_ref().expect("not taken yet"))).collect();
    let take = |index: usize| bodies[index].lock().expect("not poisoned").take().expect("each function is optimised once");
    optimize_functions(&module, take, level, observe, trace, jobs, facts)
}

/// A function without its body: what a call to it is checked against.
fn interface(func: &Function) -> Function {
    let values = func.params.iter().map(|p| p.value.0 as usize + 1).max().unwrap_or(0);
    Function {
        name: func.name.clone(),
        kind: func.kind,
        conv: func.conv,
        attrs: func.attrs.clone(),
        inline: func.inline,
        params: func.params.clone(),
        ret: func.ret.clone(),
        blocks: Vec::new(),
        values: func.values[..values].to_vec(),
        span: func.span,
    }
}

/// The rounds over every function (`function(i)` hands over the i-th), then
/// inlining and the rounds again over the functions it changed.
fn optimize_functions(module: &Module, function: impl Fn(usize) -> Function + Sync, level: OptLevel, observe: &Observe, trace: &mut Trace, jobs: usize, facts: ModuleFacts) -> Result<Module, String> {
    let results = crate::parallel::map_in_order(module.functions.len(), jobs, |index| optimize_function(module, function(index), level, observe));
    let mut functions = Vec::with_capacity(module.functions.len());
    let mut timings = Vec::with_capacity(module.functions.len());
    for result in results {
        let (func, printed, times) = result?;
        trace.printed.push_str(&printed);
        functions.push(func);
        timings.push(times);
    }
    let start = Instant::now();
    let inlined = if level == OptLevel::O0 { vec![false; functions.len()] } else { inline::run(&mut functions, facts.external) };
    let inline_time = start.elapsed();
    let again: Vec<usize> = (0..functions.len()).filter(|&i| inlined[i]).collect();
    for &i in &again {
        let func = &functions[i];
        if observe.print_after.iter().any(|w| w == "inline" || w == "all") {
            trace.printed.push_str(&format!("; after inline: @{}\n{func}\n", func.name));
        }
        if observe.verify {
            check(module, func, "inline")?;
        }
    }
    let results = crate::parallel::map_in_order(again.len(), jobs, |k| optimize_function(module, functions[again[k]].clone(), level, observe));
    for (&i, result) in again.iter().zip(results) {
        let (func, printed, times) = result?;
        trace.printed.push_str(&printed);
        functions[i] = func;
        timings[i].iter_mut().zip(times).for_each(|(sum, t)| *sum += t);
    }
    for (func, times) in functions.iter().zip(timings) {
        for (pass, time) in passes(level).iter().zip(times).filter(|(p, _)| p.level <= level) {
            trace.timings.push((format!("{}: {}", func.name, pass.name), time));
        }
    }
    trace.timings.push(("inline (module)".to_string(), inline_time));
    Ok(Module { functions, device_triples: module.device_triples.clone(), printf_formats: module.printf_formats.clone(), data: module.data.clone() })
}

/// One function through the pass rounds: the function, what it printed, and
/// each pass's time (indexed like [`passes`]).
fn optimize_function(module: &Module, mut func: Function, level: OptLevel, observe: &Observe) -> Result<(Function, String, Vec<Duration>), String> {
    let mut printed = String::new();
    let rounds = if level == OptLevel::O2 { MAX_ROUNDS } else { 1 };
    let mut timings: Vec<Duration> = vec![Duration::ZERO; passes(level).len()];
    for _ in 0..rounds {
        let mut changed = false;
        for (p, pass) in passes(level).iter().enumerate().filter(|(_, p)| p.level <= level) {
            let start = Instant::now();
            let did = (pass.run)(&mut func, &module.data);
            timings[p] += start.elapsed();
            changed |= did;
            if did && observe.print_after.iter().any(|w| w == pass.name || w == "all") {
                printed.push_str(&format!("; after {}: @{}\n{func}\n", pass.name, func.name));
            }
            if observe.verify {
                check(module, &func, pass.name)?;
            }
        }
        if !changed {
            break;
        }
    }
    Ok((func, printed, timings))
}

/// The verifier on one function after a pass; its calls are checked against
/// the signatures in `module` (which no pass changes).
fn check(module: &Module, func: &Function, pass: &str) -> Result<(), String> {
    crate::mir::verify::verify_function(module, func).map_err(|errors| {
        let first = errors.first().map(|d| d.message.clone()).unwrap_or_default();
        format!("internal error: the MIR of @{} is invalid after the '{pass}' pass: {first}\n{func}", func.name)
    })
}

/// After legalization (codegen/legalize.rs, at -O1 and -O2): simplify, gvn
/// and dce once over what it wrote, e.g. the lanes of a vector multiply by
/// a constant vector, or the constant halves of a 64-bit expansion.
pub fn cleanup_after_legalize(func: &mut Function) {
    simplify::run(func);
    gvn::run(func);
    dce::run(func);
}
