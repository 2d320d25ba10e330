//! Building a batch of probes into one code object: our side through the
//! library, LLVM's through one `llc` run, the two linked by one `ld.lld -shared`
//! (ours against ours needs neither tool: one module, one code object).

use std::path::{Path, PathBuf};
use std::process::Command;

use super::emit::{self, Lang};
use super::probe::Probe;
use super::{Compiler, Config};
use crate::codegen::{self, Options, Report};
use crate::codeobj::{self, CodeObjectVersion};
use crate::isa::{Generation, WaveSize};

/// What a batch was built from, to write a reproducer.
#[derive(Clone, Debug, Default)]
pub struct Sources {
    /// `probe.mir`: the functions our compiler builds (and, for calls into
    /// LLVM's side, the callee bodies the interpreter would use).
    pub mir: Option<String>,
    /// `probe.ll`: the functions llc builds.
    pub ir: Option<String>,
    /// The commands that build `probe.hsaco` from them, in order.
    pub commands: Vec<String>,
}

/// llc options for what the simulator does not model: SDWA (which llc's
/// peephole uses to read the high half of a register in place) and gfx11's
/// true16 instructions. Neither changes where arguments go.
pub const LLC_SIMULATOR_FLAGS: &[&str] = &["-amdgpu-sdwa-peephole=0"];

fn llc_args(config: &Config) -> Vec<String> {
    let t = config.target.target;
    let mut args = vec!["-O2".to_string(), "-filetype=obj".into(), "--amdhsa-code-object-version=5".into(), format!("-mcpu={}", t.gpu.name())];
    args.extend(LLC_SIMULATOR_FLAGS.iter().map(|s| s.to_string()));
    if t.gpu.generation() == Generation::Gfx11 {
        let wave = if t.wave == WaveSize::W64 { ",+wavefrontsize64" } else { "" };
        args.push(format!("-mattr=-real-true16{wave}"));
    }
    args
}

/// The sources of a batch: probe `k` of `probes` is named with `first + k`.
pub fn sources(config: &Config, probes: &[Probe], first: usize) -> Sources {
    let wave = config.target.target.wave.lanes();
    let llvm_conv = config.conv == crate::abi::Convention::Llvm;
    let mut mir = String::new();
    let mut ir = String::from(emit::IR_HEADER);
    for (k, p) in probes.iter().enumerate() {
        let n = first + k;
        match config.callee {
            Compiler::Ours => mir.push_str(&emit::callee(Lang::Mir, n, p, llvm_conv, wave)),
            Compiler::Llvm => {
                ir.push_str(&emit::callee(Lang::Ir, n, p, true, wave));
                // The body our caller's module declares (not compiled: --extern).
                if config.caller == Compiler::Ours {
                    mir.push_str(&emit::callee(Lang::Mir, n, p, true, wave));
                }
            }
        }
        match config.caller {
            Compiler::Ours => mir.push_str(&emit::caller(Lang::Mir, n, p, wave)),
            Compiler::Llvm => {
                if config.callee == Compiler::Ours {
                    ir.push_str(&emit::callee_declaration(n, p));
                }
                ir.push_str(&emit::caller(Lang::Ir, n, p, wave));
            }
        }
    }
    if config.caller == Compiler::Llvm && config.callee == Compiler::Ours {
        ir.push_str(&register_budget(config));
    }
    let uses_mir = config.caller == Compiler::Ours || config.callee == Compiler::Ours;
    let uses_ir = config.caller == Compiler::Llvm || config.callee == Compiler::Llvm;
    let mcpu = config.target.isa_name().trim_start_matches("amdgcn-amd-amdhsa--").to_string();
    let mut commands = Vec::new();
    let mut objects = Vec::new();
    if uses_mir && uses_ir {
        let externs: String = if config.callee == Compiler::Llvm {
            (0..probes.len()).map(|k| format!(" --extern {}", emit::callee_name(first + k))).collect()
        } else {
            String::new()
        };
        commands.push(format!("amdgpu-cg probe.mir --mcpu {mcpu} --emit obj{externs} -o ours.o"));
        objects.push("ours.o");
    } else if uses_mir {
        commands.push(format!("amdgpu-cg probe.mir --mcpu {mcpu} -o probe.hsaco"));
    }
    if uses_ir {
        commands.push(format!("{} {} probe.ll -o llc.o", config.llc.display(), llc_args(config).join(" ")));
        objects.push("llc.o");
        commands.push(format!("{} -shared {} -o probe.hsaco", config.lld.display(), objects.join(" ")));
    }
    Sources { mir: uses_mir.then_some(mir), ir: uses_ir.then_some(ir), commands }
}

/// An LLVM kernel that calls a function of another object sizes its register
/// file from its own module (`max(own, amdgpu.max_num_vgpr)`, the most any
/// function of the module uses), so a callee compiled elsewhere must not use
/// more. An LLVM module that calls ours gets this function, whose clobbers
/// raise that maximum to the whole register file (what a program linking LLVM
/// kernels against separately compiled functions has to do too).
fn register_budget(config: &Config) -> String {
    let gpu = config.target.target.gpu;
    let sgpr = if gpu.generation() == Generation::Gfx11 { 105 } else { 101 };
    let agpr = if gpu.has_agprs() { "~{a255}," } else { "" };
    format!("define hidden void @abi_fuzz_register_budget() {{\n  call void asm sideeffect \"\", \"~{{v255}},{agpr}~{{s{sgpr}}}\"()\n  ret void\n}}\n\n")
}

/// A scratch directory for one build, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> std::io::Result<TempDir> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!("amdgpu-cg-abi-fuzz-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed)));
        std::fs::create_dir_all(&dir)?;
        Ok(TempDir(dir))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run(cmd: &mut Command, what: &str) -> Result<(), String> {
    let out = cmd.output().map_err(|e| format!("cannot run {what}: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let first: Vec<&str> = err.lines().take(6).collect();
        return Err(format!("{what} failed: {}", first.join("\n")));
    }
    Ok(())
}

/// Builds the batch into a linked code object.
pub fn build(config: &Config, sources: &Sources, probes: &[Probe], first: usize) -> Result<Vec<u8>, String> {
    let ours = match &sources.mir {
        None => None,
        Some(text) => {
            let module = crate::mir::parse(text).map_err(|e| format!("our probe does not parse: {e}"))?;
            crate::mir::verify::verify(&module).map_err(|e| format!("our probe does not verify: {}", e.first().map(|d| d.to_string()).unwrap_or_default()))?;
            let external = if config.callee == Compiler::Llvm { (0..probes.len()).map(|k| emit::callee_name(first + k)).collect() } else { Vec::new() };
            let options = Options { external, ..Options::default() };
            let (object, _) = codegen::compile_module(&module, &config.target, CodeObjectVersion::V5, &options, &mut Report::default())
                .map_err(|d| format!("amdgpu-cg refused: {}", d.to_string().lines().next().unwrap_or_default()))?;
            if sources.ir.is_none() {
                return codeobj::write_hsaco(&object).map_err(|e| format!("amdgpu-cg's code object writer: {e}"));
            }
            Some(codeobj::write_relocatable(&object).map_err(|e| format!("amdgpu-cg's object writer: {e}"))?)
        }
    };
    let ir = sources.ir.as_ref().expect("a batch with no MIR has IR");
    let dir = TempDir::new().map_err(|e| format!("cannot create a temporary directory: {e}"))?;
    let path = |name: &str| -> PathBuf { dir.0.join(name) };
    let write = |p: &Path, data: &[u8]| std::fs::write(p, data).map_err(|e| format!("cannot write {}: {e}", p.display()));
    write(&path("probe.ll"), ir.as_bytes())?;
    run(Command::new(&config.llc).args(llc_args(config)).arg(path("probe.ll")).arg("-o").arg(path("llc.o")), &config.llc.display().to_string())?;
    let mut link = Command::new(&config.lld);
    link.arg("-shared");
    if let Some(o) = ours {
        write(&path("ours.o"), &o)?;
        link.arg(path("ours.o"));
    }
    link.arg(path("llc.o")).arg("-o").arg(path("probe.hsaco"));
    run(&mut link, &config.lld.display().to_string())?;
    std::fs::read(path("probe.hsaco")).map_err(|e| format!("cannot read the linked code object: {e}"))
}
