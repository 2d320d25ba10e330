//! ABI conformance fuzzing (`amdgpu-cg abi-fuzz`, docs/abi.md section 11):
//! random signatures, a callee that records what it receives and a caller that
//! passes known values, each side compiled by the compiler asked for (ours, or
//! LLVM's llc), linked, run on the simulator, and every disagreement reported
//! with where the caller put a value and where the callee looked for it.
//!
//! - [`probe`]: signatures, values, pieces;
//! - `emit`: the callee and caller as MIR or LLVM IR;
//! - `build`: compiling a batch (one llc run, one link);
//! - `check`: running a probe and reading records and register snapshots;
//! - `reduce`: shrinking a disagreeing signature and writing its reproducer.

mod build;
mod check;
mod emit;
pub mod probe;
mod reduce;

use std::fmt::Write;
use std::path::PathBuf;
use std::time::Instant;

use crate::abi::{self, Convention, Signature};
use crate::codeobj::CodeObjectTarget;
use probe::{Probe, Rng};

pub use check::conv_name;

/// Which compiler builds one side of the call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compiler {
    Ours,
    Llvm,
}

impl Compiler {
    pub fn name(self) -> &'static str {
        match self {
            Compiler::Ours => "ours",
            Compiler::Llvm => "llvm",
        }
    }
}

/// What to fuzz.
#[derive(Clone, Debug)]
pub struct Config {
    pub target: CodeObjectTarget,
    pub caller: Compiler,
    pub callee: Compiler,
    /// The convention both sides use (`AmdgpuCg` only when both are ours).
    pub conv: Convention,
    pub seed: u64,
    /// Random signatures to check (ignored with `signature`).
    pub count: usize,
    /// Check only this signature.
    pub signature: Option<Signature>,
    /// Call from a device function the kernel calls (true), from the kernel
    /// (false), or either at random (None).
    pub device_caller: Option<bool>,
    /// Signatures compiled together (one llc run and one link per batch).
    pub batch: usize,
    pub llc: PathBuf,
    pub lld: PathBuf,
    /// Where reduced reproducers go; None: no reduction.
    pub out_dir: Option<PathBuf>,
}

impl Config {
    /// Defaults: ours on both sides, 100 signatures, seed 1.
    pub fn new(target: CodeObjectTarget) -> Config {
        Config {
            target,
            caller: Compiler::Ours,
            callee: Compiler::Ours,
            conv: Convention::AmdgpuCg,
            seed: 1,
            count: 100,
            signature: None,
            device_caller: None,
            batch: 40,
            llc: "llc-22".into(),
            lld: "ld.lld-22".into(),
            out_dir: None,
        }
    }

    /// Why the configuration cannot run (a usage error), if it cannot.
    pub fn validate(&self) -> Result<(), String> {
        if self.conv == Convention::AmdgpuCg && (self.caller == Compiler::Llvm || self.callee == Compiler::Llvm) {
            return Err("LLVM has no amdgpu_cg convention: use --conv llvm when either side is llvm".into());
        }
        if self.batch == 0 {
            return Err("the batch size must be at least 1".into());
        }
        Ok(())
    }
}

/// The kinds of disagreement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// An argument piece the callee received differs from what the caller passed.
    Argument,
    /// A work-item id, work-group id or work-group size the callee read is wrong.
    Implicit,
    /// A result piece the caller received differs from what the callee returned.
    Result,
    /// A value the caller kept live across the call changed.
    CallerValue,
    /// s[30:31] at the callee's entry is not the address after the call.
    ReturnAddress,
    /// A register the callee's convention preserves changed across the call.
    Preserved,
    /// gfx90a: s[0:3] at the callee's entry is not the wave's scratch V#.
    ScratchDescriptor,
    /// The callee uses registers the kernel's descriptor does not allocate.
    Resources,
    /// The program faulted, looped or lost a function.
    Crash,
    /// A compiler refused the probe (or the link failed).
    Compile,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Argument => "argument",
            Kind::Implicit => "implicit_input",
            Kind::Result => "result",
            Kind::CallerValue => "caller_value",
            Kind::ReturnAddress => "return_address",
            Kind::Preserved => "preserved_register",
            Kind::ScratchDescriptor => "scratch_descriptor",
            Kind::Resources => "resources",
            Kind::Crash => "crash",
            Kind::Compile => "compile",
        }
    }
}

/// One disagreement, with what the snapshots show about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub kind: Kind,
    /// What disagrees: `argument 2 (inreg i64) piece '.lo'`.
    pub subject: String,
    pub expected: Option<u64>,
    /// None: nothing was stored.
    pub got: Option<u64>,
    /// Lanes of the work-group where it differs.
    pub lanes: u32,
    /// Where the expected value was at the callee's entry (arguments).
    pub caller_put: Vec<String>,
    /// Where the value the callee read was at its entry.
    pub callee_looked: Vec<String>,
    /// Where the expected result was after the return (results).
    pub callee_put: Vec<String>,
    /// Where the value the caller read was after the return.
    pub caller_looked: Vec<String>,
    /// Where the callee's convention puts it (our ABI crate's model).
    pub callee_convention: Option<String>,
    /// Where the caller's convention puts it (for an LLVM caller: LLVM 22.1's
    /// caller side, which differs on gfx90a).
    pub caller_convention: Option<String>,
    /// Registers involved: changed though preserved, clobbered, overwritten.
    pub registers: Vec<String>,
    pub detail: String,
}

impl Finding {
    pub fn new(kind: Kind, subject: String) -> Finding {
        Finding {
            kind,
            subject,
            expected: None,
            got: None,
            lanes: 0,
            caller_put: Vec::new(),
            callee_looked: Vec::new(),
            callee_put: Vec::new(),
            caller_looked: Vec::new(),
            callee_convention: None,
            caller_convention: None,
            registers: Vec::new(),
            detail: String::new(),
        }
    }
}

/// A signature that showed disagreements.
#[derive(Clone, Debug)]
pub struct Disagreement {
    /// Its position in the run.
    pub index: usize,
    pub signature: Signature,
    pub device_caller: bool,
    pub findings: Vec<Finding>,
}

/// A disagreement reduced to a shortest signature that still shows its kind.
#[derive(Clone, Debug)]
pub struct Reduced {
    /// The kinds it shows (the one it was reduced for among them).
    pub kinds: Vec<Kind>,
    /// The index of the disagreement it came from.
    pub from: usize,
    pub signature: Signature,
    pub device_caller: bool,
    pub findings: Vec<Finding>,
    /// The directory with the sources, the commands and the report.
    pub dir: Option<PathBuf>,
    /// Signatures tried while reducing.
    pub tried: usize,
}

/// What a run found.
#[derive(Clone, Debug)]
pub struct Summary {
    pub config: Config,
    pub signatures: usize,
    pub disagreements: Vec<Disagreement>,
    pub reduced: Vec<Reduced>,
    /// Wall time of the run.
    pub seconds: f64,
    /// Time spent building and simulating, summed over the worker threads.
    pub build_seconds: f64,
    pub simulate_seconds: f64,
}

impl Summary {
    /// Number of findings of each kind, in kind order.
    pub fn counts(&self) -> Vec<(Kind, usize)> {
        let mut counts: Vec<(Kind, usize)> = Vec::new();
        for f in self.disagreements.iter().flat_map(|d| &d.findings) {
            match counts.iter_mut().find(|(k, _)| *k == f.kind) {
                Some((_, n)) => *n += 1,
                None => counts.push((f.kind, 1)),
            }
        }
        counts.sort();
        counts
    }
}

/// Probe values for a signature: drawn from the run's seed and the
/// signature's position, so a reproducer gets the same values back.
fn probe_for(config: &Config, sig: Signature, index: usize, device_caller: bool) -> Probe {
    let mut rng = Rng::new(config.seed.wrapping_mul(0x100_0000_01b3) ^ index as u64);
    Probe::new(sig, device_caller, &mut rng)
}

/// A signature both conventions can assign (no stack area over 64 KiB).
fn assignable(sig: &Signature, config: &Config) -> bool {
    let t = config.target.target;
    abi::assign(sig, config.conv, t).is_ok() && (config.caller == Compiler::Ours || abi::assign_llvm22_caller(sig, t).is_ok())
}

/// Timings of one batch.
#[derive(Default)]
struct Clock {
    build: f64,
    simulate: f64,
}

/// Builds and runs probes named `first..`, returning each one's findings. A
/// batch that does not build is split until the probes that do not are alone.
fn evaluate(config: &Config, probes: &[Probe], first: usize, clock: &mut Clock) -> Vec<Vec<Finding>> {
    let started = Instant::now();
    let sources = build::sources(config, probes, first);
    let built = build::build(config, &sources, probes, first);
    clock.build += started.elapsed().as_secs_f64();
    match built {
        Ok(hsaco) => {
            let started = Instant::now();
            let out = match check::Bench::new(&hsaco) {
                Ok(mut bench) => probes.iter().enumerate().map(|(k, p)| check::check(&mut bench, config, p, first + k)).collect(),
                Err(e) => probes.iter().map(|_| vec![Finding::new(Kind::Crash, format!("the simulator cannot load the code object: {e}"))]).collect(),
            };
            clock.simulate += started.elapsed().as_secs_f64();
            out
        }
        Err(e) if probes.len() == 1 => vec![vec![Finding::new(Kind::Compile, e)]],
        Err(_) => {
            let half = probes.len() / 2;
            let mut out = evaluate(config, &probes[..half], first, clock);
            out.extend(evaluate(config, &probes[half..], first + half, clock));
            out
        }
    }
}

/// The probes of a run: the given signature, or `count` random ones.
fn draw(config: &Config) -> Result<Vec<Probe>, String> {
    let mut rng = Rng::new(config.seed);
    let mut probes = Vec::new();
    match &config.signature {
        Some(sig) => {
            if let Err(e) = abi::assign(sig, config.conv, config.target.target) {
                return Err(format!("the signature cannot be assigned: {e}"));
            }
            probes.push(probe_for(config, sig.clone(), 0, config.device_caller.unwrap_or(false)));
        }
        None => {
            while probes.len() < config.count {
                let sig = probe::random_signature(&mut rng);
                let device_caller = config.device_caller.unwrap_or_else(|| rng.chance(40));
                if assignable(&sig, config) {
                    let index = probes.len();
                    probes.push(probe_for(config, sig, index, device_caller));
                }
            }
        }
    }
    Ok(probes)
}

/// The signatures a run of `config` checks, in order.
pub fn signatures(config: &Config) -> Result<Vec<Signature>, String> {
    Ok(draw(config)?.into_iter().map(|p| p.sig).collect())
}

/// Runs the fuzzer.
pub fn run(config: &Config) -> Result<Summary, String> {
    config.validate()?;
    let started = Instant::now();
    let probes = draw(config)?;
    // Batches are independent (each has its own code object and simulator):
    // they run on every core, and the results are put back in order.
    let batches: Vec<&[Probe]> = probes.chunks(config.batch).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(vec![Vec::new(); batches.len()]);
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(batches.len()).max(1);
    let clocks: Vec<Clock> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut clock = Clock::default();
                    loop {
                        let b = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(chunk) = batches.get(b) else { break };
                        let out = evaluate(config, chunk, b * config.batch, &mut clock);
                        results.lock().expect("no worker panics holding the lock")[b] = out;
                    }
                    clock
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("an abi-fuzz worker panicked")).collect()
    });
    let mut clock = Clock { build: clocks.iter().map(|c| c.build).sum(), simulate: clocks.iter().map(|c| c.simulate).sum() };
    let mut disagreements = Vec::new();
    for (b, findings) in results.into_inner().expect("no worker panics holding the lock").into_iter().enumerate() {
        for (k, findings) in findings.into_iter().enumerate() {
            if !findings.is_empty() {
                let p = &batches[b][k];
                disagreements.push(Disagreement { index: b * config.batch + k, signature: p.sig.clone(), device_caller: p.device_caller, findings });
            }
        }
    }
    let mut reduced = Vec::new();
    if let Some(dir) = &config.out_dir {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        reduced = reduce::reduce_all(config, &disagreements, dir, &mut |c, ps| evaluate(c, ps, 0, &mut clock))?;
    }
    Ok(Summary {
        config: config.clone(),
        signatures: probes.len(),
        disagreements,
        reduced,
        seconds: started.elapsed().as_secs_f64(),
        build_seconds: clock.build,
        simulate_seconds: clock.simulate,
    })
}

fn side(c: Compiler, config: &Config) -> String {
    match c {
        Compiler::Ours => "ours".into(),
        Compiler::Llvm => format!("llvm ({})", config.llc.display()),
    }
}

fn hex(v: Option<u64>) -> String {
    v.map_or("nothing stored".into(), |v| format!("{v:#x}"))
}

fn list(v: &[String]) -> String {
    v.join(", ")
}

/// One finding as indented text lines.
pub fn finding_text(f: &Finding) -> String {
    let mut t = format!("  {}: {}", f.kind.name(), f.subject);
    if f.expected.is_some() || f.got.is_some() {
        write!(t, ": expected {}, got {}", hex(f.expected), hex(f.got)).unwrap();
    }
    if f.lanes > 0 {
        write!(t, " ({} lane{})", f.lanes, if f.lanes == 1 { "" } else { "s" }).unwrap();
    }
    if !f.detail.is_empty() {
        write!(t, " {}", f.detail.trim()).unwrap();
    }
    t.push('\n');
    if !f.caller_put.is_empty() {
        writeln!(t, "    the caller put it in {}; the callee looked in {}", list(&f.caller_put), if f.callee_looked.is_empty() { "(nothing)".into() } else { list(&f.callee_looked) }).unwrap();
    }
    if !f.callee_put.is_empty() {
        writeln!(t, "    the callee put it in {}; the caller looked in {}", list(&f.callee_put), list(&f.caller_looked)).unwrap();
    }
    if let Some(c) = &f.callee_convention {
        write!(t, "    the convention puts it in {c} (callee side)").unwrap();
        if let Some(k) = f.caller_convention.as_ref().filter(|k| *k != c) {
            write!(t, ", {k} (caller side)").unwrap();
        }
        t.push('\n');
    }
    if !f.registers.is_empty() {
        writeln!(t, "    registers: {}", list(&f.registers)).unwrap();
    }
    t
}

/// Findings the text report shows per signature.
const TEXT_FINDINGS: usize = 8;

/// The report as text.
pub fn text(s: &Summary) -> String {
    let c = &s.config;
    let mut t = format!(
        "abi-fuzz: {} wave{}, caller {}, callee {}, convention {}, seed {}\n",
        c.target.isa_name(),
        c.target.target.wave.lanes(),
        side(c.caller, c),
        side(c.callee, c),
        conv_name(c.conv),
        c.seed
    );
    let counts: Vec<String> = s.counts().iter().map(|(k, n)| format!("{} {n}", k.name())).collect();
    writeln!(
        t,
        "{} signatures, {} disagree{}; {:.2} s (thread time: build {:.2} s, simulate {:.2} s), {:.0} signatures/s",
        s.signatures,
        s.disagreements.len(),
        if counts.is_empty() { String::new() } else { format!(" ({})", counts.join(", ")) },
        s.seconds,
        s.build_seconds,
        s.simulate_seconds,
        s.signatures as f64 / s.seconds.max(1e-9)
    )
    .unwrap();
    for d in &s.disagreements {
        let from = if d.device_caller { "a device function" } else { "the kernel" };
        writeln!(t, "\nsignature {}: {} (called from {from})", d.index, d.signature).unwrap();
        for f in d.findings.iter().take(TEXT_FINDINGS) {
            t.push_str(&finding_text(f));
        }
        if d.findings.len() > TEXT_FINDINGS {
            writeln!(t, "  ... and {} more (--json lists them all)", d.findings.len() - TEXT_FINDINGS).unwrap();
        }
    }
    for r in &s.reduced {
        let kinds: Vec<&str> = r.kinds.iter().map(|k| k.name()).collect();
        write!(t, "\nreduced ({} from signature {}, {} signatures tried): {}", kinds.join(", "), r.from, r.tried, r.signature).unwrap();
        if let Some(dir) = &r.dir {
            write!(t, "\n  reproducer: {}", dir.display()).unwrap();
        }
        t.push('\n');
        for f in &r.findings {
            t.push_str(&finding_text(f));
        }
    }
    t
}

fn finding_json(f: &Finding) -> serde_json::Value {
    serde_json::json!({
        "kind": f.kind.name(),
        "subject": f.subject,
        "expected": f.expected,
        "got": f.got,
        "lanes": f.lanes,
        "caller_put": f.caller_put,
        "callee_looked": f.callee_looked,
        "callee_put": f.callee_put,
        "caller_looked": f.caller_looked,
        "callee_convention": f.callee_convention,
        "caller_convention": f.caller_convention,
        "registers": f.registers,
        "detail": f.detail.trim(),
    })
}

/// The report as one JSON object (keys in docs/abi.md section 11).
pub fn json(s: &Summary) -> String {
    let c = &s.config;
    let counts: serde_json::Map<String, serde_json::Value> = s.counts().into_iter().map(|(k, n)| (k.name().to_string(), n.into())).collect();
    let v = serde_json::json!({
        "target": c.target.isa_name(),
        "wave_size": c.target.target.wave.lanes(),
        "caller": c.caller.name(),
        "callee": c.callee.name(),
        "convention": conv_name(c.conv),
        "seed": c.seed,
        "signatures": s.signatures,
        "disagreeing": s.disagreements.len(),
        "counts": counts,
        "seconds": s.seconds,
        "disagreements": s.disagreements.iter().map(|d| serde_json::json!({
            "index": d.index,
            "signature": d.signature.to_string(),
            "caller_kind": if d.device_caller { "function" } else { "kernel" },
            "findings": d.findings.iter().map(finding_json).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "reduced": s.reduced.iter().map(|r| serde_json::json!({
            "kinds": r.kinds.iter().map(|k| k.name()).collect::<Vec<_>>(),
            "from": r.from,
            "signature": r.signature.to_string(),
            "caller_kind": if r.device_caller { "function" } else { "kernel" },
            "dir": r.dir.as_ref().map(|d| d.display().to_string()),
            "tried": r.tried,
            "findings": r.findings.iter().map(finding_json).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    });
    v.to_string()
}
