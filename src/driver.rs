//! What the command line does, as library functions (so tests and embedders can
//! call exactly what `amdgpu-cg` runs): reading and checking MIR files, target
//! parsing, the interpreter front, and writing output files atomically.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::codegen;
use crate::codeobj::{self, CodeObjectTarget, CodeObjectVersion};
use crate::mir::{self, Diagnostic, Module, SourceFile};

/// An error for the command line: the text to print (already rendered, with
/// file:line:column where there is a source) and the exit status.
#[derive(Debug)]
pub struct CliError {
    message: String,
    exit_code: u8,
}

impl CliError {
    /// Bad input (exit status 1).
    pub fn input(message: impl Into<String>) -> CliError {
        CliError { message: message.into(), exit_code: 1 }
    }

    /// Bad usage of the command line (exit status 2).
    pub fn usage(message: impl Into<String>) -> CliError {
        CliError { message: format!("error: {}", message.into()), exit_code: 2 }
    }

    /// A file could not be read or written (exit status 1).
    pub fn io(path: impl fmt::Display, error: std::io::Error) -> CliError {
        CliError::input(format!("error: {path}: {error}"))
    }

    pub fn exit_code(&self) -> u8 {
        self.exit_code
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CliError {}

/// What `amdgpu-cg FILE` produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Emit {
    /// The verified MIR, pretty-printed.
    Mir,
    /// Assembly in llvm-mc syntax.
    Asm,
    /// A relocatable ELF object (ET_REL).
    Obj,
    /// A loadable code object (ET_DYN).
    Hsaco,
    /// A clang offload bundle (a HIP fat binary) of every device's code object.
    Bundle,
}

/// Parses `--target` (with target-lexicon) and `--mcpu` (`gfx90a`, `gfx90a:xnack-`,
/// `gfx1100:wavefrontsize64`) into the code object's target (GPU, wave size and
/// the xnack/sramecc settings).
pub fn parse_target(triple: &str, mcpu: &str) -> Result<CodeObjectTarget, CliError> {
    use target_lexicon::{Architecture, OperatingSystem, Triple};
    let parsed: Triple = triple
        .parse()
        .map_err(|e| CliError::usage(format!("invalid target triple '{triple}': {e}")))?;
    if parsed.architecture != Architecture::AmdGcn || parsed.operating_system != OperatingSystem::AmdHsa {
        return Err(CliError::usage(format!(
            "unsupported target '{triple}': amdgpu-cg generates code for amdgcn-amd-amdhsa only"
        )));
    }
    // The wave size is a feature of ours (`wavefrontsize64`), not of the ISA string.
    CodeObjectTarget::parse_with_wave(mcpu).map_err(|e| CliError::usage(e.to_string()))
}

/// Reads a text file.
pub fn read_text(path: &Path) -> Result<String, CliError> {
    std::fs::read_to_string(path).map_err(|e| CliError::io(path.display(), e))
}

/// Renders diagnostics against their file, followed by a count line.
pub fn render_diagnostics(file: &SourceFile, diagnostics: &[Diagnostic]) -> String {
    let mut out = String::new();
    for d in diagnostics {
        out.push_str(&d.render(file));
    }
    if diagnostics.len() > 1 {
        out.push_str(&format!("{} errors\n", diagnostics.len()));
    }
    out
}

/// Parses and verifies MIR text; errors are rendered with file:line:column.
pub fn load_module_text(name: &str, text: &str) -> Result<Module, CliError> {
    parse_and_verify(name, text, 1, &mut |_| {})
}

/// Parses and verifies (on up to `jobs` threads) MIR text, calling `lap` after
/// each step with its name (for `--time-passes`).
fn parse_and_verify(name: &str, text: &str, jobs: usize, lap: &mut dyn FnMut(&str)) -> Result<Module, CliError> {
    // The source file is only built for an error: a large module's text is
    // not copied on the way that succeeds.
    let rendered = |ds: &[Diagnostic]| CliError::input(render_diagnostics(&SourceFile::new(name, text), ds));
    let module = mir::parse::parse_in_parallel(text, jobs).map_err(|d| rendered(&[d]))?;
    lap("parse");
    mir::verify::verify_in_parallel(&module, jobs).map_err(|ds| rendered(&ds))?;
    lap("verify");
    Ok(module)
}

/// Reads, parses and verifies a MIR file, or translates a SPIR-V one (the
/// kind told by its first word, not its name).
pub fn load_module(path: &Path) -> Result<Module, CliError> {
    load_input(path).map(|(module, _)| module)
}

/// [`load_module`], with the source file diagnostics refer to (empty for SPIR-V).
pub fn load_input(path: &Path) -> Result<(Module, SourceFile), CliError> {
    load_input_timed(path, 1).map(|(module, file, _)| (module, file))
}

/// The time of each named step of a run, in order.
pub type StepTimes = Vec<(String, Duration)>;

/// [`load_input`] with the time of each step (read, parse, verify; read and
/// translate for SPIR-V), for `--time-passes`; the functions are verified on up
/// to `jobs` threads.
pub fn load_input_timed(path: &Path, jobs: usize) -> Result<(Module, SourceFile, StepTimes), CliError> {
    let mut clock = Instant::now();
    let mut timings = Vec::new();
    let mut lap = |timings: &mut StepTimes, step: &str| {
        timings.push((step.to_string(), clock.elapsed()));
        clock = Instant::now();
    };
    let bytes = std::fs::read(path).map_err(|e| CliError::io(path.display(), e))?;
    lap(&mut timings, "read");
    let name = path.display().to_string();
    if crate::spirv::is_spirv(&bytes) {
        let module = load_spirv(&name, &bytes)?;
        lap(&mut timings, "SPIR-V translation and verify");
        return Ok((module, SourceFile::new(name, String::new()), timings));
    }
    let text = String::from_utf8(bytes).map_err(|_| CliError::input(format!("error: {name}: neither MIR text (it is not UTF-8) nor SPIR-V (no magic number)")))?;
    let module = parse_and_verify(&name, &text, jobs, &mut |step| lap(&mut timings, step))?;
    Ok((module, SourceFile::new(name, text), timings))
}

/// Translates a SPIR-V binary into a verified MIR module.
pub fn load_spirv(name: &str, bytes: &[u8]) -> Result<Module, CliError> {
    let words = crate::spirv::words(bytes).map_err(|e| CliError::input(format!("{name}: error: {e}\n")))?;
    let module = crate::spirv::to_mir(&words).map_err(|errors| {
        let mut out: String = errors.iter().map(|e| format!("{name}: error: {e}\n")).collect();
        if errors.len() > 1 {
            out.push_str(&format!("{} errors\n", errors.len()));
        }
        CliError::input(out)
    })?;
    // The translation's output is MIR like any other: verified before use. A
    // failure here is the front end's bug, shown with the MIR it made.
    mir::verify::verify(&module).map_err(|ds| {
        let text = module.to_string();
        let file = SourceFile::new(format!("{name} (translated)"), text);
        CliError::input(format!("error: internal: the MIR translated from {name} does not verify\n{}", render_diagnostics(&file, &ds)))
    })?;
    Ok(module)
}

/// `amdgpu-cg check`: a one-line summary of a well-formed module.
pub fn check_file(path: &Path) -> Result<String, CliError> {
    let module = load_module(path)?;
    let kernels = module.kernels().count();
    Ok(format!(
        "{}: ok ({} kernel{}, {} device function{})\n",
        path.display(),
        kernels,
        if kernels == 1 { "" } else { "s" },
        module.functions.len() - kernels,
        if module.functions.len() - kernels == 1 { "" } else { "s" },
    ))
}

/// `amdgpu-cg run`: runs a kernel in the interpreter and prints the buffers.
#[allow(clippy::too_many_arguments)]
pub fn run_file(
    path: &Path,
    kernel: Option<&str>,
    launch_json: Option<&str>,
    grid: &str,
    block: &str,
    buffers: &[String],
    args: &[String],
    print: &[String],
) -> Result<String, CliError> {
    let module = load_module(path)?;
    let mut spec = match launch_json {
        Some(text) => mir::launch::LaunchSpec::from_json(text).map_err(|e| CliError::input(format!("error: launch description: {e}")))?,
        None => mir::launch::LaunchSpec::from_flags(grid, block, buffers, args, print).map_err(|e| CliError::input(format!("error: {e}")))?,
    };
    if let Some(kernel) = kernel {
        spec.kernel = Some(kernel.to_string());
    }
    let output = mir::launch::run(&module, &spec).map_err(|e| CliError::input(format!("error: {e}")))?;
    Ok(output.to_string())
}

/// `amdgpu-cg FILE`: compiles a MIR file to the requested form for one device.
/// The report (`--print-after`, `--time-passes`, `--stats`) is returned as text
/// for stderr.
pub fn compile_file(
    path: &Path,
    target: &CodeObjectTarget,
    emit: Emit,
    code_object_version: u32,
    options: &codegen::Options,
    stats: bool,
) -> Result<(Vec<u8>, String), CliError> {
    let (module, file) = load_input(path)?;
    if emit == Emit::Mir {
        return Ok((module.to_string().into_bytes(), String::new()));
    }
    let mut outputs = compile_devices(std::borrow::Cow::Owned(module), &file, std::slice::from_ref(target), emit, code_object_version, options, stats)?;
    let output = outputs.pop().expect("one device, one output");
    match emit {
        Emit::Bundle => Ok((bundle(std::slice::from_ref(&output))?, output.report)),
        _ => Ok((output.bytes, output.report)),
    }
}

/// One device's result of [`compile_devices`].
#[derive(Clone, Debug)]
pub struct DeviceOutput {
    pub target: CodeObjectTarget,
    /// The requested form (a `.hsaco` when a bundle was asked for).
    pub bytes: Vec<u8>,
    /// What goes to stderr: `--print-after`, `--time-passes`, `--stats`.
    pub report: String,
}

/// The devices to compile for: `--mcpu` when given (a comma-separated list,
/// `gfx90a,gfx942:xnack-,gfx1100`), else the module's `target device_triples`
/// line, else gfx90a. None may be listed twice.
pub fn device_targets(triple: &str, mcpu: Option<&str>, module: &Module) -> Result<Vec<CodeObjectTarget>, CliError> {
    let list: Vec<&str> = match mcpu {
        Some(list) => list.split(',').map(str::trim).collect(),
        None if !module.device_triples.is_empty() => {
            module.device_triples.iter().map(|t| t.trim_start_matches("amdgcn-amd-amdhsa--")).collect()
        }
        None => vec!["gfx90a"],
    };
    let mut targets: Vec<CodeObjectTarget> = Vec::new();
    for entry in list {
        if entry.is_empty() {
            return Err(CliError::usage("--mcpu has an empty entry in its list"));
        }
        let t = parse_target(triple, entry)?;
        if targets.contains(&t) {
            return Err(CliError::usage(format!("device {} is listed twice", t.target_id_with_wave())));
        }
        targets.push(t);
    }
    Ok(targets)
}

/// Compiles `module` for every device in `targets`, the devices in parallel
/// (each output is what a run for that device alone writes, byte for byte), and
/// checks that every kernel has one interface on all of them.
///
/// A module given up (`Cow::Owned`) with one device and optimisation on has
/// its functions moved through the passes instead of copied (same output).
pub fn compile_devices(
    module: std::borrow::Cow<'_, Module>,
    file: &SourceFile,
    targets: &[CodeObjectTarget],
    emit: Emit,
    code_object_version: u32,
    options: &codegen::Options,
    stats: bool,
) -> Result<Vec<DeviceOutput>, CliError> {
    let version = CodeObjectVersion::from_number(code_object_version).map_err(|e| CliError::usage(e.to_string()))?;
    let several = targets.len() > 1;
    let moves = matches!(module, std::borrow::Cow::Owned(_)) && !several && emit != Emit::Mir;
    if moves {
        let (output, _) = compile_device(module, file, &targets[0], emit, version, options, stats, false)?;
        return Ok(vec![output]);
    }
    let module = &*module;
    // One thread per device (each with its functions on `options.jobs`).
    let results = crate::parallel::map_in_order(targets.len(), targets.len(), |i| {
        compile_device(std::borrow::Cow::Borrowed(module), file, &targets[i], emit, version, options, stats, several)
    });
    let mut outputs = Vec::with_capacity(results.len());
    let mut objects = Vec::with_capacity(results.len());
    for r in results {
        let (output, object) = r?;
        objects.push((output.target.target_id_with_wave(), object));
        outputs.push(output);
    }
    if several {
        let named: Vec<(String, &codeobj::CodeObject)> = objects.iter().map(|(n, o)| (n.clone(), o)).collect();
        codeobj::interface::check(&named)
            .map_err(|e| CliError::input(format!("error: the kernels' interfaces differ between devices:\n{e}\n")))?;
    }
    Ok(outputs)
}

/// One device of [`compile_devices`]: the output and the code object it came from.
#[allow(clippy::too_many_arguments)]
fn compile_device(
    module: std::borrow::Cow<'_, Module>,
    file: &SourceFile,
    target: &CodeObjectTarget,
    emit: Emit,
    version: CodeObjectVersion,
    options: &codegen::Options,
    stats: bool,
    several: bool,
) -> Result<(DeviceOutput, codeobj::CodeObject), CliError> {
    // With several devices, errors and reports say which device they are about.
    let device = if several { format!("note: compiling for {}:\n", target.target_id_with_wave()) } else { String::new() };
    let mut report = codegen::Report::default();
    // What --print-after collected is shown even when a later pass fails: that is
    // when a compiler engineer needs it most.
    // The MIR printed is the input's, so a module to print stays.
    let printed_mir = (emit == Emit::Mir).then(|| module.to_string());
    let compiled = match module {
        std::borrow::Cow::Borrowed(module) => codegen::compile_module(module, target, version, options, &mut report),
        std::borrow::Cow::Owned(module) => codegen::compile_module_owned(module, target, version, options, &mut report),
    };
    let (object, kernels) = compiled.map_err(|d| CliError::input(format!("{}{device}{}", report.printed, render_diagnostics(file, &d.0))))?;
    let mut side = report.printed;
    for (pass, time) in &report.timings {
        side.push_str(&format!("time {pass}: {:.3} ms\n", time.as_secs_f64() * 1e3));
    }
    if stats {
        for k in &kernels {
            let s = &k.stats;
            // With calls, also what is live while a callee runs.
            let with_callees = if s.live_across_calls.is_empty() { String::new() } else { format!(", {} with its callees'", s.max_live_vgprs_with_callees) };
            side.push_str(&format!(
                "{} (amdgcn-amd-amdhsa--{}): {} instructions, {} bytes, {} VGPRs (at most {} values live{with_callees}), {} SGPRs, {} AGPRs, {} SGPR spills, {} VGPR spills ({} VGPRs hold spill slots), {} scratch bytes, {} LDS bytes, occupancy {} waves/SIMD (limited by {})\n",
                s.name, target.target_id_with_wave(), s.instructions, s.code_bytes, s.vgprs, s.max_live_vgprs, s.sgprs, s.agprs, s.sgpr_spills, s.vgpr_spills, s.slot_vgprs, s.scratch_bytes, s.lds_bytes, s.occupancy, s.occupancy_limit
            ));
        }
    }
    let fail = |e: codeobj::CodeObjectError| CliError::input(format!("{device}error: {e}"));
    let writer_start = Instant::now();
    let bytes = match emit {
        Emit::Mir => printed_mir.unwrap_or_default().into_bytes(),
        Emit::Asm => codeobj::asm::listing(&object, |name| kernels.iter().find(|k| k.name == name).map(|k| k.asm.as_str()))
            .map_err(fail)?
            .into_bytes(),
        Emit::Obj => codeobj::write_relocatable(&object).map_err(fail)?,
        Emit::Hsaco | Emit::Bundle => codeobj::write_hsaco(&object).map_err(|e| {
            let hint = match &e {
                codeobj::CodeObjectError::UndefinedSymbol { .. } => {
                    "\nnote: a function defined elsewhere (--extern) needs a relocatable object (--emit obj) linked with the object that defines it (ld.lld -shared)"
                }
                _ => "",
            };
            CliError::input(format!("{device}error: {e}{hint}"))
        })?,
    };
    if options.time_passes {
        let writer = match emit {
            Emit::Asm => "listing writer",
            Emit::Mir => "MIR printer",
            _ => "code object writer",
        };
        side.push_str(&format!("time {writer}: {:.3} ms\n", writer_start.elapsed().as_secs_f64() * 1e3));
    }
    // With several devices each report (when there is one) says whose it is.
    if several && !side.is_empty() {
        side.insert_str(0, &format!("; device {}\n", target.target_id_with_wave()));
    }
    Ok((DeviceOutput { target: *target, bytes, report: side }, object))
}

/// The clang offload bundle of the devices' code objects (docs/code-object.md).
pub fn bundle(outputs: &[DeviceOutput]) -> Result<Vec<u8>, CliError> {
    let entries: Vec<(String, Vec<u8>)> =
        outputs.iter().map(|o| (codeobj::bundle::device_entry_id(&o.target), o.bytes.clone())).collect();
    codeobj::bundle::write(&entries).map_err(|e| CliError::usage(e.to_string()))
}

/// Where one device's output goes when a run compiles several: `output` with
/// `%t` replaced by the device, or, for a directory (`out/`), the input's stem,
/// a dash and the device there. The device's name is its target id with `:`
/// turned into `_` (`gfx942_sramecc+_xnack-`).
pub fn device_output_path(output: &Path, input: &Path, target: &CodeObjectTarget, extension: &str) -> PathBuf {
    let device = target.target_id_with_wave().replace(':', "_");
    let text = output.to_string_lossy();
    if text.contains("%t") {
        return PathBuf::from(text.replace("%t", &device));
    }
    let stem = input.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "out".into());
    output.join(format!("{stem}-{device}.{extension}"))
}

/// Writes a file completely or not at all: the bytes go to a temporary file next
/// to the destination, which is then renamed over it. A destination that exists
/// and is not a regular file (`/dev/null`, a FIFO, a terminal) is written in
/// place: renaming over it would replace the device with a file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        return std::fs::write(path, bytes).map_err(|e| CliError::io(path.display(), e));
    }
    let file_name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let temporary = path.with_file_name(format!(".{file_name}.tmp-{}", std::process::id()));
    if let Err(e) = std::fs::write(&temporary, bytes) {
        let _ = std::fs::remove_file(&temporary);
        return Err(CliError::io(path.display(), e));
    }
    std::fs::rename(&temporary, path).map_err(|e| {
        let _ = std::fs::remove_file(&temporary);
        CliError::io(path.display(), e)
    })
}

/// `amdgpu-cg abi`: the assignment of a signature as a table or JSON
/// (docs/abi.md). A signature that does not parse is shown with a caret under
/// the problem.
pub fn abi_report(signature: &str, target: &CodeObjectTarget, convention: &str, json: bool) -> Result<String, CliError> {
    use crate::abi::{assign, Convention, Signature};
    let conv = Convention::from_name(convention)
        .ok_or_else(|| CliError::usage(format!("unknown calling convention '{convention}' (amdgpu-cg or llvm)")))?;
    let sig = Signature::parse(signature).map_err(|e| {
        let column = signature[..e.offset.min(signature.len())].chars().count();
        CliError::input(format!("error: signature: {}\n  {signature}\n  {}^\n", e.message, " ".repeat(column)))
    })?;
    let assignment = assign(&sig, conv, target.target).map_err(|e| CliError::input(format!("error: {e}")))?;
    Ok(if json { format!("{}\n", assignment.to_json()) } else { assignment.to_string() })
}

/// What `amdgpu-cg abi-fuzz` was asked (the command line, checked by [`abi_fuzz`]).
pub struct AbiFuzzRequest<'a> {
    pub caller: &'a str,
    pub callee: &'a str,
    pub conv: Option<&'a str>,
    pub seed: u64,
    pub count: usize,
    pub out_dir: Option<std::path::PathBuf>,
    pub signature: Option<&'a str>,
    pub caller_kind: Option<&'a str>,
    pub batch: usize,
    pub llc: std::path::PathBuf,
    pub lld: std::path::PathBuf,
}

/// `amdgpu-cg abi-fuzz`: runs the conformance fuzzer (docs/abi.md section 11).
pub fn abi_fuzz(target: &CodeObjectTarget, r: &AbiFuzzRequest) -> Result<crate::abifuzz::Summary, CliError> {
    use crate::abi::{Convention, Signature};
    use crate::abifuzz::{Compiler, Config};
    let compiler = |name: &str| match name {
        "llvm" => Ok(Compiler::Llvm),
        "ours" => Ok(Compiler::Ours),
        other => Err(CliError::usage(format!("unknown compiler '{other}' (ours or llvm)"))),
    };
    let mut config = Config::new(*target);
    config.caller = compiler(r.caller)?;
    config.callee = compiler(r.callee)?;
    let both_ours = config.caller == Compiler::Ours && config.callee == Compiler::Ours;
    config.conv = match r.conv {
        None if both_ours => Convention::AmdgpuCg,
        None | Some("llvm") => Convention::Llvm,
        Some(_) => Convention::AmdgpuCg,
    };
    if r.count == 0 {
        return Err(CliError::usage("--count must be at least 1"));
    }
    config.seed = r.seed;
    config.count = r.count;
    config.batch = r.batch;
    config.out_dir = r.out_dir.clone();
    config.llc = r.llc.clone();
    config.lld = r.lld.clone();
    config.device_caller = r.caller_kind.map(|k| k == "function");
    config.validate().map_err(CliError::usage)?;
    if let Some(text) = r.signature {
        let sig = Signature::parse(text).map_err(|e| {
            let column = text[..e.offset.min(text.len())].chars().count();
            CliError::input(format!("error: signature: {}\n  {text}\n  {}^\n", e.message, " ".repeat(column)))
        })?;
        config.signature = Some(sig);
    }
    if !both_ours {
        for tool in [&config.llc, &config.lld] {
            let runs = std::process::Command::new(tool).arg("--version").output().is_ok_and(|o| o.status.success());
            if !runs {
                return Err(CliError::input(format!("error: cannot run {} (the llvm side needs llc and ld.lld; --llc and --lld name others)", tool.display())));
            }
        }
    }
    crate::abifuzz::run(&config).map_err(|e| CliError::input(format!("error: {e}")))
}

/// `amdgpu-cg inspect`: a readable summary of a code object.
pub fn inspect_file(path: &Path) -> Result<String, CliError> {
    let bytes = std::fs::read(path).map_err(|e| CliError::io(path.display(), e))?;
    codeobj::inspect::summary_of_bytes(&bytes).map_err(|e| CliError::input(format!("error: {}: {e}", path.display())))
}
