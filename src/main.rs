//! The `amdgpu-cg` command line.
//!
//! ```text
//! amdgpu-cg kernel.mir -o kernel.hsaco [--mcpu gfx90a] [--emit mir|asm|obj|hsaco|bundle] [-j N]
//! amdgpu-cg kernel.mir --mcpu gfx90a,gfx942,gfx1100 -o out/   (or -o 'k-%t.hsaco', or --emit bundle)
//! amdgpu-cg check kernel.mir
//! amdgpu-cg run kernel.mir --grid 256 --block 64 --buffer x=f32:iota:256 --arg x=@x ...
//! amdgpu-cg abi 'fn(i32, inreg i64) -> f32' --mcpu gfx90a [--conv amdgpu-cg|llvm] [--json]
//! amdgpu-cg abi-fuzz --mcpu gfx90a --caller ours|llvm --callee ours|llvm [--conv llvm|amdgpu_cg] [--count N] [-o DIR] [--json]
//! amdgpu-cg inspect kernel.hsaco
//! amdgpu-cg sim kernel.hsaco --grid 256 --block 64 --buffer x=f32:iota:256 --arg x=@x ...
//! ```
//!
//! Errors go to stderr as `file:line:column: error: message` with a source snippet;
//! the exit status is 1 for bad input, 2 for bad usage. Output files are written
//! whole or not at all.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use amdgpu_cg::driver::{self, CliError, Emit};

/// The command line allocates with mimalloc: a compile makes and frees many
/// small vectors and maps, and glibc's malloc/free took about 30% of a large
/// module's compile time (perf, docs/performance.md). The library leaves the
/// allocator to its embedder.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
use clap::{Args, Parser, Subcommand};

#[derive(Parser)]
#[command(name = "amdgpu-cg", version, about = "An embeddable AMDGPU code generator", args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    compile: CompileArgs,
}

#[derive(Args)]
struct TargetArgs {
    /// Target triple (parsed with target-lexicon); only amdgcn-amd-amdhsa is supported.
    #[arg(long, default_value = "amdgcn-amd-amdhsa")]
    target: String,
    /// The GPU: gfx90a, gfx942 or gfx1100, optionally with features
    /// (gfx90a:xnack-, gfx1100:wavefrontsize64+). Default gfx90a. To compile
    /// for several devices at once, a comma-separated list (gfx90a,gfx942,gfx1100);
    /// without --mcpu, a module's `target device_triples` line decides.
    #[arg(long)]
    mcpu: Option<String>,
}

impl TargetArgs {
    /// The single device of the commands that take one.
    fn single(&self) -> Result<amdgpu_cg::codeobj::CodeObjectTarget, CliError> {
        let mcpu = self.mcpu.as_deref().unwrap_or("gfx90a");
        if mcpu.contains(',') {
            return Err(CliError::usage("this command takes one device in --mcpu, not a list"));
        }
        driver::parse_target(&self.target, mcpu)
    }
}

#[derive(Args)]
struct CompileArgs {
    /// The MIR file to compile.
    input: Option<PathBuf>,
    /// Where to write the result (default: stdout for text, INPUT.hsaco otherwise).
    #[arg(short = 'o')]
    output: Option<PathBuf>,
    #[command(flatten)]
    target: TargetArgs,
    /// What to produce.
    #[arg(long, value_enum, default_value = "hsaco")]
    emit: Emit,
    /// Same as --emit asm.
    #[arg(short = 'S')]
    assembly: bool,
    /// Code object version: 4, 5 or 6.
    #[arg(long, default_value_t = 5)]
    code_object_version: u32,
    /// Print the function after this pass (repeatable; `all` for every pass).
    #[arg(long, value_name = "PASS")]
    print_after: Vec<String>,
    /// Same as --print-after all.
    #[arg(long)]
    print_after_all: bool,
    /// Report the time each pass takes.
    #[arg(long)]
    time_passes: bool,
    /// A device function defined in another object (e.g. compiled by llc-22):
    /// not compiled here; calls to it are resolved when the relocatable output
    /// (`--emit obj`) is linked. Repeatable.
    #[arg(long = "extern", value_name = "FUNCTION")]
    external: Vec<String>,
    /// Print per-kernel register, memory and occupancy statistics.
    #[arg(long)]
    stats: bool,
    /// Keep every kernel's registers to what lets at least N of its waves run
    /// on one SIMD (1-16; a kernel's `min_waves_per_simd` attribute wins);
    /// values beyond go to AGPRs (gfx90a, gfx942), then scratch.
    #[arg(long = "min-waves", value_name = "N", value_parser = clap::value_parser!(u32).range(1..=16))]
    min_waves: Option<u32>,
    /// Use at most N VGPRs per kernel (VGPRs and AGPRs together on gfx90a and
    /// gfx942; 16-512).
    #[arg(long = "max-vgprs", value_name = "N", value_parser = clap::value_parser!(u32).range(16..=512))]
    max_vgprs: Option<u32>,
    /// Threads for the functions: 0 (the default) for one per core, 1 for
    /// one at a time; with several devices they are shared out among them.
    /// The output is the same for every value.
    #[arg(short = 'j', long = "jobs", value_name = "N", default_value_t = 0)]
    jobs: usize,
    /// Optimisation level: -O0 (only pass-through block parameters and
    /// dead code removed, then selection), -O1 (one round of the MIR
    /// passes) or -O2 (to a fixed point; the default).
    #[arg(short = 'O', value_name = "LEVEL", default_value = "2", value_parser = ["0", "1", "2"])]
    opt_level: String,
}

#[derive(Subcommand)]
enum Command {
    /// Parse and verify a MIR file.
    Check {
        input: PathBuf,
    },
    /// Run a kernel in the MIR interpreter (the reference semantics).
    Run(RunArgs),
    /// Show where every argument, result and implicit input of a signature lives.
    Abi {
        /// A signature in MIR type syntax, e.g. 'fn(i32, f64, inreg i64, {i32, f32, i64}) -> f32'.
        signature: String,
        #[command(flatten)]
        target: TargetArgs,
        /// Calling convention: amdgpu-cg (ours) or llvm (LLVM 22's C convention).
        #[arg(long, default_value = "amdgpu-cg")]
        conv: String,
        /// Print stable JSON (docs/abi.md) instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Fuzz calling-convention conformance between two compilers (ours or
    /// llc): random signatures, a callee that records what it receives, a
    /// caller that passes known values, run on the simulator. Exit status 3
    /// when they disagree.
    AbiFuzz(AbiFuzzArgs),
    /// Summarise a code object (.hsaco): kernels, descriptors, metadata.
    Inspect {
        input: PathBuf,
    },
    /// Run a kernel of a code object (.hsaco) on the ISA simulator, with the
    /// same buffer and argument syntax as `run`.
    Sim(SimArgs),
}

#[derive(Args)]
struct AbiFuzzArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// Who compiles the caller: ours or llvm (llc).
    #[arg(long, default_value = "ours", value_parser = ["ours", "llvm"])]
    caller: String,
    /// Who compiles the callee: ours or llvm (llc).
    #[arg(long, default_value = "ours", value_parser = ["ours", "llvm"])]
    callee: String,
    /// The calling convention: llvm or amdgpu_cg (default: amdgpu_cg when both
    /// sides are ours, else llvm).
    #[arg(long, value_parser = ["llvm", "amdgpu_cg", "amdgpu-cg"])]
    conv: Option<String>,
    /// Seed of the random signatures and values.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Signatures to check.
    #[arg(long, default_value_t = 100)]
    count: usize,
    /// Reduce each kind of disagreement to a shortest signature and write its
    /// reproducer (sources, commands, report) under DIR.
    #[arg(short = 'o', value_name = "DIR")]
    output: Option<PathBuf>,
    /// Print the report as one JSON object.
    #[arg(long)]
    json: bool,
    /// Check only this signature (MIR type syntax, as `abi` takes it).
    #[arg(long)]
    signature: Option<String>,
    /// Who makes the call: kernel, function (a device function the kernel
    /// calls), or both at random (the default).
    #[arg(long, value_parser = ["kernel", "function"])]
    caller_kind: Option<String>,
    /// Signatures built together (one llc run and one link each).
    #[arg(long, default_value_t = 40)]
    batch: usize,
    /// The llc to use for the llvm side.
    #[arg(long, default_value = "llc-22")]
    llc: PathBuf,
    /// The linker.
    #[arg(long, default_value = "ld.lld-22")]
    lld: PathBuf,
}

#[derive(Args)]
struct SimArgs {
    /// The code object.
    input: PathBuf,
    /// The kernel to run (default: the only kernel of the code object).
    #[arg(long)]
    kernel: Option<String>,
    /// A JSON launch description, as `run` takes it (cannot be combined with
    /// the flags below).
    #[arg(long, conflicts_with_all = ["grid", "block", "buffer", "arg"])]
    launch: Option<PathBuf>,
    /// Work-items in the grid: N or X,Y,Z.
    #[arg(long, default_value = "1")]
    grid: String,
    /// Work-items per work-group: N or X,Y,Z.
    #[arg(long, default_value = "1")]
    block: String,
    /// A buffer: NAME=TYPE:v1,v2,... or NAME=TYPE:fill:VALUE:LEN or NAME=TYPE:iota:LEN.
    #[arg(long)]
    buffer: Vec<String>,
    /// A kernel argument by name (or argN for the N-th): NAME=VALUE, or NAME=@BUFFER.
    #[arg(long)]
    arg: Vec<String>,
    /// Buffers to print after the run (default: all).
    #[arg(long)]
    print: Vec<String>,
    /// Print every instruction executed, with its wave, to stderr.
    #[arg(long)]
    trace: bool,
}

#[derive(Args)]
struct RunArgs {
    /// The MIR file.
    input: PathBuf,
    /// The kernel to run (default: the only kernel of the file).
    #[arg(long)]
    kernel: Option<String>,
    /// A JSON launch description (docs/mir.md); flags below override nothing and
    /// cannot be combined with it.
    #[arg(long, conflicts_with_all = ["grid", "block", "buffer", "arg"])]
    launch: Option<PathBuf>,
    /// Work-items in the grid: N or X,Y,Z.
    #[arg(long, default_value = "1")]
    grid: String,
    /// Work-items per work-group: N or X,Y,Z.
    #[arg(long, default_value = "1")]
    block: String,
    /// A buffer: NAME=TYPE:v1,v2,... or NAME=TYPE:fill:VALUE:LEN or NAME=TYPE:iota:LEN.
    #[arg(long)]
    buffer: Vec<String>,
    /// A kernel argument by parameter name: NAME=VALUE, or NAME=@BUFFER for pointers.
    #[arg(long)]
    arg: Vec<String>,
    /// Buffers to print after the run (default: all).
    #[arg(long)]
    print: Vec<String>,
}

/// The command line runs without transparent huge pages: a compile touches
/// its memory once, in many places, and where the system backs memory with
/// huge pages by default each first touch zeroed 2 MiB (and each page the
/// allocator gave back was zeroed again): on a million-instruction kernel
/// 0.5 s of system time instead of 1.4-2.9 s (docs/performance.md). The
/// library leaves this to its embedder, as it does the allocator.
fn without_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes integer arguments and changes only
    // how this process's future page faults are served.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

fn main() -> ExitCode {
    START.get_or_init(std::time::Instant::now);
    without_huge_pages();
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Check { input }) => driver::check_file(&input).map(|summary| print!("{summary}")),
        Some(Command::Run(args)) => run(args),
        Some(Command::Abi { signature, target, conv, json }) => {
            target.single()
                .and_then(|t| driver::abi_report(&signature, &t, &conv, json))
                .map(|text| print!("{text}"))
        }
        Some(Command::AbiFuzz(a)) => return abi_fuzz(a),
        Some(Command::Inspect { input }) => driver::inspect_file(&input).map(|text| print!("{text}")),
        Some(Command::Sim(a)) => sim(a),
        None => compile(cli.compile),
    };
    report(result)
}

fn abi_fuzz(a: AbiFuzzArgs) -> ExitCode {
    let request = driver::AbiFuzzRequest {
        caller: &a.caller,
        callee: &a.callee,
        conv: a.conv.as_deref(),
        seed: a.seed,
        count: a.count,
        out_dir: a.output.clone(),
        signature: a.signature.as_deref(),
        caller_kind: a.caller_kind.as_deref(),
        batch: a.batch,
        llc: a.llc.clone(),
        lld: a.lld.clone(),
    };
    let result = a.target.single().and_then(|t| driver::abi_fuzz(&t, &request));
    match result {
        Ok(summary) => {
            if a.json {
                println!("{}", amdgpu_cg::abifuzz::json(&summary));
            } else {
                print!("{}", amdgpu_cg::abifuzz::text(&summary));
            }
            if summary.disagreements.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(3)
            }
        }
        Err(e) => report(Err(e)),
    }
}

fn sim(a: SimArgs) -> Result<(), CliError> {
    let launch_text = match &a.launch {
        Some(path) => Some(driver::read_text(path)?),
        None => None,
    };
    amdgpu_cg::sim::sim_command(&a.input.to_string_lossy(), a.kernel.as_deref(), launch_text.as_deref(), &a.grid, &a.block, &a.buffer, &a.arg, &a.print, a.trace)
            .map(|text| print!("{text}"))
            .map_err(|e| CliError::input(format!("error: {e}")))
}

fn report(result: Result<(), CliError>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprint!("{error}");
            if !error.to_string().ends_with('\n') {
                eprintln!();
            }
            ExitCode::from(error.exit_code())
        }
    }
}

fn run(args: RunArgs) -> Result<(), CliError> {
    let launch_text = match &args.launch {
        Some(path) => Some(driver::read_text(path)?),
        None => None,
    };
    let output = driver::run_file(
        &args.input,
        args.kernel.as_deref(),
        launch_text.as_deref(),
        &args.grid,
        &args.block,
        &args.buffer,
        &args.arg,
        &args.print,
    )?;
    print!("{output}");
    Ok(())
}

fn compile(args: CompileArgs) -> Result<(), CliError> {
    let Some(input) = args.input else {
        return Err(CliError::usage("no input file (try 'amdgpu-cg --help')"));
    };
    let emit = if args.assembly { Emit::Asm } else { args.emit };
    let mut print_after = args.print_after.clone();
    if args.print_after_all {
        print_after.push("all".to_string());
    }
    for pass in &print_after {
        if pass != "all" && !amdgpu_cg::codegen::PASSES.contains(&pass.as_str()) {
            return Err(CliError::usage(format!("unknown pass '{pass}' (passes: {})", amdgpu_cg::codegen::PASSES.join(", "))));
        }
    }
    let opt_level = amdgpu_cg::opt::OptLevel::parse(&args.opt_level).unwrap_or_default();
    let options = amdgpu_cg::codegen::Options {
        print_after,
        time_passes: args.time_passes,
        external: args.external.clone(),
        opt_level,
        verify_passes: false,
        jobs: 1,
        min_waves: args.min_waves,
        max_vgprs: args.max_vgprs,
        listing: matches!(emit, Emit::Asm),
    };
    let startup = START.get().map(|s| s.elapsed()).unwrap_or_default();
    let jobs = if args.jobs == 0 { amdgpu_cg::parallel::cores() } else { args.jobs };
    let (module, file, load_timings) = driver::load_input_timed(&input, jobs)?;
    // The process ends after this compile: freeing a large module piece by
    // piece took about a second of a 1M-instruction run, for nothing.
    let module = std::mem::ManuallyDrop::new(module);
    let file = std::mem::ManuallyDrop::new(file);
    let targets = driver::device_targets(&args.target.target, args.target.mcpu.as_deref(), &module)?;
    let to_stdout = args.output.as_ref().is_some_and(|p| p.as_os_str() == "-");
    if emit == Emit::Mir {
        let text = module.to_string();
        return match &args.output {
            Some(path) if !to_stdout => driver::write_atomically(path, text.as_bytes()),
            _ => stdout(text.as_bytes()),
        };
    }
    // Checked before compiling: several outputs need somewhere to go.
    let several = targets.len() > 1 && emit != Emit::Bundle;
    if several && (args.output.is_none() || to_stdout) {
        return Err(CliError::usage(format!(
            "{} devices give {} outputs: name a directory (-o DIR/), an output pattern with %t (-o 'out/k-%t.hsaco'), or ask for one --emit bundle",
            targets.len(),
            targets.len()
        )));
    }
    if let Some(output) = args.output.as_deref().filter(|_| several) {
        let text = output.to_string_lossy();
        // A directory is one that exists or a name ending in '/' (created);
        // anything else is most likely one file's name, which cannot hold several.
        if !text.contains("%t") && !text.ends_with('/') && !output.is_dir() {
            return Err(CliError::usage(format!(
                "-o {text}: {} devices give {} outputs; write -o {text}/ for a directory, a pattern with %t, or --emit bundle",
                targets.len(),
                targets.len()
            )));
        }
    }
    if emit == Emit::Bundle {
        // A bundle names devices by target id, which has no wave size.
        use amdgpu_cg::codeobj::bundle;
        let ids: Vec<String> = targets.iter().map(bundle::device_entry_id).collect();
        if let Some(id) = bundle::repeated_id(ids.iter().map(String::as_str)) {
            return Err(CliError::usage(bundle::repeated_id_error(id).to_string()));
        }
    }
    // -j: the threads of the run, shared out among the devices (each also has
    // its own thread).
    let options = amdgpu_cg::codegen::Options { jobs: (jobs / targets.len()).max(1), ..options };
    let compile_start = std::time::Instant::now();
    // One device: the module moves into the compile (no copy for
    // the optimiser). Otherwise it stays, unfreed, as above.
    let outputs = if targets.len() == 1 {
        driver::compile_devices(std::borrow::Cow::Owned(std::mem::ManuallyDrop::into_inner(module)), &file, &targets, emit, args.code_object_version, &options, args.stats)?
    } else {
        driver::compile_devices(std::borrow::Cow::Borrowed(&module), &file, &targets, emit, args.code_object_version, &options, args.stats)?
    };
    let compile_time = compile_start.elapsed();
    let report_start = std::time::Instant::now();
    for o in &outputs {
        eprint!("{}", o.report);
    }
    let report_time = report_start.elapsed();
    // --time-passes ends with what the whole run spent: the steps outside the
    // passes, and how much of the wall time the listed steps account for.
    let finish = |output_time: std::time::Duration| {
        if !args.time_passes {
            return;
        }
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        let mut accounted = startup + compile_time + report_time + output_time;
        eprintln!("time start-up: {:.3} ms", ms(startup));
        for (step, time) in &load_timings {
            eprintln!("time {step}: {:.3} ms", ms(*time));
            accounted += *time;
        }
        eprintln!("time compile ({} device{}, wall): {:.3} ms", targets.len(), if targets.len() == 1 { "" } else { "s" }, ms(compile_time));
        eprintln!("time report printing: {:.3} ms", ms(report_time));
        eprintln!("time output: {:.3} ms", ms(output_time));
        let total = START.get().map_or(accounted, |s| s.elapsed());
        eprintln!("time total (wall): {:.3} ms; the steps above account for {:.3} ms ({:.1}%)", ms(total), ms(accounted), 100.0 * ms(accounted) / ms(total).max(1e-9));
    };
    let output_start = std::time::Instant::now();
    let extension = match emit {
        Emit::Hsaco => "hsaco",
        Emit::Obj => "o",
        Emit::Asm => "s",
        Emit::Bundle => "hipfb",
        Emit::Mir => "mir",
    };
    if several {
        let output = args.output.as_deref().expect("checked above");
        if !output.to_string_lossy().contains("%t") {
            std::fs::create_dir_all(output).map_err(|e| CliError::io(output.display(), e))?;
        }
        // Every path first: two devices may not write one file.
        let paths: Vec<PathBuf> = outputs.iter().map(|o| driver::device_output_path(output, &input, &o.target, extension)).collect();
        for (i, p) in paths.iter().enumerate() {
            if paths[..i].contains(p) {
                return Err(CliError::usage(format!("two devices would write {}", p.display())));
            }
        }
        for (o, path) in outputs.iter().zip(&paths) {
            driver::write_atomically(path, &o.bytes)?;
        }
        finish(output_start.elapsed());
        return Ok(());
    }
    let bytes = if emit == Emit::Bundle { driver::bundle(&outputs)? } else { outputs.into_iter().next().expect("one device").bytes };
    match (&args.output, emit) {
        (Some(path), _) if !to_stdout => driver::write_atomically(path, &bytes),
        (None, Emit::Hsaco | Emit::Obj | Emit::Bundle) => driver::write_atomically(&default_output(&input, extension), &bytes),
        _ => stdout(&bytes),
    }?;
    finish(output_start.elapsed());
    Ok(())
}

/// When `main` started: the start of `--time-passes`' total.
static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

fn stdout(bytes: &[u8]) -> Result<(), CliError> {
    use std::io::Write;
    std::io::stdout().write_all(bytes).map_err(|e| CliError::io("<stdout>", e))
}

fn default_output(input: &Path, extension: &str) -> PathBuf {
    input.with_extension(extension)
}
