//! Code generation from verified MIR to machine code (docs/pipeline.md).
//!
//! ```text
//!  MIR ──uniformity──► divergence facts ──structure──► if-regions / loops
//!      ──isel + lower_cf──► VCode (virtual registers, EXEC pseudo-ops)
//!      ──regalloc (regalloc2)──► allocation + moves
//!      ──expand──► isa::Inst per block (registers filled, pseudos expanded)
//!      ──forward_copies──► ──dead_moves──► ──window_rename──►
//!      ──backward_copies──► ──store_runs──► ──merge_accesses──► ──compact_vgprs──► ──skip_branches──► ──vopd──►
//!      ──waitcnt──► ──hazards──► ──emit──► bytes + assembly ──► code object
//! ```
//!
//! One module per pass; each is a function over one function. This file lists
//! them in order and nothing else decides the order.

mod arg_access;
pub mod cfi;
pub mod dead_moves;
pub mod backward_copies;
pub mod forward_copies;
pub mod emit;
pub mod expand;
pub mod hazards;
pub mod merge_accesses;
pub mod store_runs;
pub mod compact_vgprs;
pub mod machine_dce;
pub mod fold_merges;
pub mod fuse_valu;
pub mod saveexec;
pub mod skip_branches;
pub mod isel;
pub mod lower_cf;
pub mod regalloc;
pub mod ssa_repair;
pub mod structure;
pub mod unclobbered;
pub mod uniformity;
pub mod vopd;
pub mod legalize;
pub mod unify_returns;
pub mod vcode;
pub mod window_rename;
pub mod input_vgpr;
pub mod waitcnt;

use hashbrown::{HashMap, HashSet};
use std::borrow::Cow;
use std::time::{Duration, Instant};

use crate::abi::ImplicitInput;

use crate::abi::descriptor::KernelResources;
use crate::abi::kernarg::KernargLayout;
use crate::codeobj::{self, CodeObject, CodeObjectTarget, CodeObjectVersion, KernelArg, KernelInfo};
use crate::mir::{Diagnostic, Diagnostics, FuncKind, Function, Module, Span};

/// The passes, in order (names for `--print-after`): the MIR passes
/// (`crate::opt::O0_PASSES` at -O0, `crate::opt::MIR_PASSES` above) and
/// the module-level inline, then selection and the machine passes.
pub const PASSES: [&str; 38] = ["parameters", "promote", "spaces", "simplify", "divide", "narrow", "reassociate", "hoist", "licm", "gvn", "dce", "merge", "select", "branches", "schedule", "inline", "uniformity", "structure", "isel", "machine_dce", "fuse_valu", "fold_merges", "saveexec", "regalloc", "input_vgpr", "expand", "forward_copies", "dead_moves", "window_rename", "backward_copies", "store_runs", "merge_accesses", "compact_vgprs", "skip_branches", "vopd", "waitcnt", "hazards", "emit"];

/// Options of one compilation.
#[derive(Clone, Debug)]
pub struct Options {
    /// Print the function after these passes (or all with `"all"`).
    pub print_after: Vec<String>,
    /// Measure each pass.
    pub time_passes: bool,
    /// Device functions defined elsewhere (an object compiled by LLVM, or by
    /// us separately): not compiled; calls to them stay relocations, resolved
    /// when a relocatable object is linked (their bodies serve the interpreter).
    pub external: Vec<String>,
    /// The optimisation level (`-O0`, `-O1`, `-O2`).
    pub opt_level: crate::opt::OptLevel,
    /// Run the MIR verifier after every MIR pass (on in debug builds).
    pub verify_passes: bool,
    /// Threads for a module's functions (`-j`): 0 and 1 compile one at a time
    /// (the library's default: an embedder decides about threads), more use up
    /// to that many (at most `parallel::MAX_THREADS`). The output is the same
    /// whatever the number (functions are compiled independently and collected
    /// in module order).
    pub jobs: usize,
    /// At least this many waves per SIMD for every kernel (`--min-waves`; a
    /// kernel's `min_waves_per_simd` attribute wins): the VGPR budget is what
    /// that occupancy leaves (docs/regalloc.md, "Occupancy").
    pub min_waves: Option<u32>,
    /// At most this many VGPRs per kernel (`--max-vgprs`).
    pub max_vgprs: Option<u32>,
    /// Write each function's assembly listing (`CompiledKernel::asm`; on by
    /// default). The command line turns it off unless it prints the listing:
    /// the text costs about as much as encoding the code.
    pub listing: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            print_after: Vec::new(),
            time_passes: false,
            external: Vec::new(),
            opt_level: crate::opt::OptLevel::default(),
            verify_passes: false,
            jobs: 0,
            min_waves: None,
            max_vgprs: None,
            listing: true,
        }
    }
}

/// The VGPRs (and, on gfx90a and gfx942, VGPRs plus AGPRs of the unified
/// file) a kernel may use for at least `waves` waves per SIMD and at most
/// `max_vgprs`: (architected VGPRs, unified total). The inverse of
/// [`occupancy`], in its granules.
pub fn vgpr_budget(target: crate::isa::Target, waves: Option<u32>, max_vgprs: Option<u32>) -> (u32, u32) {
    let (file, granule) = match target.gpu.generation() {
        crate::isa::Generation::Gfx9 => (512, 8),
        crate::isa::Generation::Gfx11 => (if target.wave == crate::isa::WaveSize::W64 { 768 } else { 1536 }, 8),
    };
    let mut total = match waves {
        Some(w) => (file / w.max(1)) / granule * granule,
        None => file,
    };
    if let Some(m) = max_vgprs {
        total = total.min(m);
    }
    let arch = total.min(256);
    let unified = if target.gpu.has_agprs() { total } else { arch };
    (arch, unified)
}

/// What a kernel assumes about a function defined elsewhere: LLVM's default
/// stack size for external calls, and every register the target lets a
/// function use (nothing bounds what another object's function uses; the
/// ABI fuzzer found LLVM callees above any smaller guess; docs/abi.md, "Interop").
pub const EXTERNAL_STACK_BYTES: u32 = 16384;
/// Stack a recursive call chain gets beyond one frame of each function on it
/// (the kernel reports a dynamic stack; docs/abi.md section 3.1).
pub const DYNAMIC_STACK_BYTES: u32 = 16384;
pub const EXTERNAL_VGPRS: u32 = 256;
/// s0-s101 (gfx9) or s0-s105 (gfx11); VCC and the other extras are added on top.
pub fn external_sgprs(target: crate::isa::Target) -> u32 {
    if target.gpu.generation() == crate::isa::Generation::Gfx11 {
        106
    } else {
        102
    }
}
/// AGPRs on targets that have them (LLVM keeps callee-saved VGPRs in AGPRs).
pub const EXTERNAL_AGPRS: u32 = 256;

/// What a kernel uses, for `--stats` and the closing measurements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelStats {
    pub name: String,
    pub instructions: usize,
    pub code_bytes: usize,
    pub vgprs: u32,
    /// The most 32-bit divergent values live at once in this function,
    /// an early definition counted beside the sources it may not overlap
    /// (`vcode::Pressure::most_occupied`).
    pub max_live_vgprs: u32,
    /// The same counting what is live in the wave while a callee runs: at
    /// each call, the values live across it plus the callee's own count
    /// (with its callees', recursively; a call cycle or an external callee
    /// adds nothing). A kernel's `vgprs` cover its callees', so this is the
    /// lower bound to hold them against (`compile_module` fills it in).
    pub max_live_vgprs_with_callees: u32,
    /// Per call: the callee and how many VGPR values are live across it.
    pub live_across_calls: Vec<(String, u32)>,
    pub sgprs: u32,
    pub agprs: u32,
    /// Registers stored by spill code (once per spill store, as LLVM counts
    /// them): SGPRs into VGPR lanes, VGPRs into scratch. Values kept in VGPRs
    /// above the allocated ones are not spills (`slot_vgprs`).
    pub sgpr_spills: u32,
    pub vgpr_spills: u32,
    /// VGPRs that hold regalloc2 spill slots (docs/regalloc.md).
    pub slot_vgprs: u32,
    pub scratch_bytes: u32,
    pub lds_bytes: u32,
    /// Waves per SIMD the register use allows.
    pub occupancy: u32,
    /// What bounds `occupancy`: "VGPRs" or "the SIMD's wave slots".
    pub occupancy_limit: &'static str,
}

/// A compiled kernel.
pub struct CompiledKernel {
    pub name: String,
    pub is_kernel: bool,
    pub code: Vec<u8>,
    /// PC-relative symbol addresses, calls and data: (offset after each
    /// `s_getpc_b64`, the callee or data object).
    pub relocated: Vec<(u64, String)>,
    pub asm: String,
    pub stats: KernelStats,
    pub kernarg: KernargLayout,
    pub resources: KernelResources,
    /// Each kernel argument's name, type and source-level description.
    pub args: Vec<(String, crate::abi::Type, crate::mir::ArgInfo)>,
    /// The kernel's launch attributes (for the metadata).
    pub attrs: crate::mir::KernelAttrs,
    /// Bytes per lane of the function's frame from its entry SP (0 without
    /// scratch); calls add what the callee needs.
    pub frame_bytes: u32,
    /// Its `.debug_frame` rows (cfi.rs).
    pub frame_rows: Vec<codeobj::frame::CfiRow>,
    /// The VGPRs below v32 its own code writes (bit n: vn), whatever EXEC.
    pub vgprs_written: u32,
}

/// What the compiled device functions tell the compilation of their
/// callers.
#[derive(Default)]
pub struct CalleeFacts {
    /// Bytes of stack each needs (its frame and its calls').
    pub stack_needs: HashMap<String, u32>,
    /// The VGPRs below v32 a call to each may change (bit n: vn): what its
    /// code and every function it can reach write. Only functions compiled
    /// here whose every reachable callee was too are listed; a call to one
    /// clobbers just these (and v32 up survive as the convention says), as
    /// LLVM's interprocedural register usage does, so its caller can keep
    /// values across the call in the VGPRs it leaves alone.
    pub vgprs_clobbered: HashMap<String, u32>,
}

/// Diagnostic output of the pipeline (`--print-after`, `--time-passes`).
#[derive(Default)]
pub struct Report {
    pub printed: String,
    pub timings: Vec<(String, Duration)>,
}

/// Whether a device function's pair windows go above v31: when more VGPR
/// values are live at once than v0-v31 less the windows hold, the function
/// uses VGPRs above v31 anyway, which its prologue saves and its epilogue
/// restores (four at a time, the allocation's step there); the windows'
/// two VGPRs each cost less, and its arguments can stay in v0-v31 where
/// they arrive. Not with calls to LLVM functions, which keep nothing in
/// registers across them (regalloc.rs) and clobber v32-v39.
fn callee_windows_high(vcode: &vcode::VCode, live_vgprs: u32) -> bool {
    let windows = vcode.windows_needed();
    vcode.layout == vcode::Layout::Callee
        && windows > 0
        && live_vgprs + 2 * u32::from(windows) > 32
        && !vcode.insts.iter().any(|m| matches!(m.kind, vcode::MKind::Call { llvm: true, .. }))
}

fn wants(options: &Options, pass: &str) -> bool {
    options.print_after.iter().any(|p| p == pass || p == "all")
}

/// Compiles one kernel through every pass.
pub fn compile_kernel(
    module: &Module,
    functions: &HashMap<&str, &Function>,
    callee_uses: &HashMap<String, Vec<ImplicitInput>>,
    callee_facts: &CalleeFacts,
    func: &Function,
    target: &CodeObjectTarget,
    version: CodeObjectVersion,
    options: &Options,
    report: &mut Report,
) -> Result<CompiledKernel, Diagnostics> {
    let t = target.target;
    let mut clock = Instant::now();
    let mut lap = |report: &mut Report, pass: &str| {
        if options.time_passes {
            report.timings.push((format!("{}: {pass}", func.name), clock.elapsed()));
        }
        clock = Instant::now();
    };
    let atomics = legalize::NativeFloatAtomics::of(t.gpu);
    let mut legal = legalize::run(func, atomics);
    // What legalization wrote (vector lanes with constant elements, the
    // halves of 64-bit pieces) simplified once more, at -O1 and -O2; a
    // simplification may recombine what legalization split (a cast chain),
    // so legalization runs once more on the result.
    if let Some(l) = legal.as_mut().filter(|_| options.opt_level >= crate::opt::OptLevel::O1) {
        crate::opt::cleanup_after_legalize(l);
        if let Some(again) = legalize::run(l, atomics) {
            *l = again;
        }
    }
    let func = legal.as_ref().unwrap_or(func);
    let normalized = unify_returns::run(func);
    let f = normalized.as_ref().unwrap_or(func);
    let uniformity = uniformity::analyze(f);
    let structure = structure::analyze(f)?;
    let func = normalized.as_ref().unwrap_or(func);
    lap(report, "uniformity");
    if wants(options, "uniformity") {
        report.printed.push_str(&format!("; after uniformity: @{}\n", func.name));
        for (i, v) in func.values.iter().enumerate() {
            if uniformity.divergent_values[i] {
                report.printed.push_str(&format!(";   divergent %{}\n", v.name));
            }
        }
    }
    lap(report, "structure");
    if wants(options, "structure") {
        let order: Vec<&str> = structure.order.iter().map(|&b| func.blocks[b].name.as_str()).collect();
        report.printed.push_str(&format!("; after structure: @{}\n;   order: {}\n;   loops: {:?}\n", func.name, order.join(" "), structure.loops));
    }
    // A kernel's selection and allocation run again with scratch enabled when
    // the first allocation spills VGPRs (scratch changes the kernel's input
    // registers). A device function always reaches scratch through s[0:3] and
    // SP, so its first allocation stands.
    // A kernel with stack slots, or whose calls pass or return values in
    // memory, or call functions that use the stack, has scratch from the start.
    let stack_slots = func.blocks.iter().flat_map(|b| &b.insts).any(|i| matches!(i.op, crate::mir::Op::StackSlot { .. }));
    let mut scratch = func.kind == FuncKind::Kernel && (stack_slots || calls_need_scratch(module, callee_uses, &callee_facts.stack_needs, func, t));
    // A kernel without calls keeps VGPR spill slots in VGPRs above the
    // allocated ones while they fit, then (gfx90a, gfx942) in AGPRs too;
    // beyond that they go to scratch (docs/regalloc.md).
    // Vgprs, then Spread without scratch, then Spread with scratch (which
    // changes the kernel's inputs, so selection runs again).
    let mut slot_home = vcode::SlotHome::Vgprs;
    let (arch, unified) = vgpr_budget(t, func.attrs.min_waves_per_simd.or(options.min_waves), options.max_vgprs);
    let (selected, allocation, occupied_vgprs, live_across_calls) = loop {
        let mut selected = isel::select(module, functions, callee_uses, &callee_facts.vgprs_clobbered, func, &uniformity, &structure, t, version.number(), scratch)?;
        selected.vcode.slot_home = if selected.vcode.layout == vcode::Layout::Dense { slot_home } else { vcode::SlotHome::Memory };
        selected.vcode.has_agprs = t.gpu.has_agprs();
        selected.vcode.vgpr_budget = (arch as u16, unified as u16);
        lap(report, "isel");
        // The VCode verifier runs after selection and after every machine
        // pass in debug builds (tests), naming the pass whose output is wrong.
        let verified = |vcode: &vcode::VCode, pass: &str| -> Result<(), Diagnostic> {
            if cfg!(debug_assertions) {
                vcode::verify(vcode).map_err(|why| Diagnostic::new(format!("internal error in @{}: invalid VCode after {pass}: {why}", func.name), func.span))?;
            }
            Ok(())
        };
        if wants(options, "isel") {
            report.printed.push_str(&format!("; after isel: @{}\n{}", func.name, vcode::print(&selected.vcode, t)));
        }
        verified(&selected.vcode, "isel")?;
        // machine_dce and fold_merges run at every level: two linear sweeps
        // that take out what regalloc2 would otherwise allocate (-O0 is about
        // compile time, and they save more allocation time than they cost).
        use crate::opt::OptLevel;
        let machine_passes: [(&str, OptLevel, fn(&mut vcode::VCode, crate::isa::Gpu, OptLevel)); 4] = [
            ("machine_dce", OptLevel::O0, |v, gpu, _| {
                machine_dce::run(v, gpu);
            }),
            ("fuse_valu", OptLevel::O1, |v, gpu, _| {
                fuse_valu::run(v, gpu);
            }),
            ("fold_merges", OptLevel::O0, |v, gpu, level| {
                fold_merges::run(v, gpu, level > OptLevel::O0);
            }),
            ("saveexec", OptLevel::O1, |v, _, _| {
                saveexec::run(v);
            }),
        ];
        for (pass, level, run) in machine_passes {
            if options.opt_level < level {
                continue;
            }
            run(&mut selected.vcode, t.gpu, options.opt_level);
            lap(report, pass);
            if wants(options, pass) {
                report.printed.push_str(&format!("; after {pass}: @{}\n{}", func.name, vcode::print(&selected.vcode, t)));
            }
            verified(&selected.vcode, pass)?;
        }
        let pressure = vcode::pressure(&selected.vcode);
        let live = pressure.most;
        let live_vgprs = live[1];
        let occupied_vgprs = pressure.most_occupied[1];
        let live_across_calls: Vec<(String, u32)> = pressure
            .vgprs_across_clobbers
            .iter()
            .filter_map(|&(i, n)| match &selected.vcode.insts[i].kind {
                vcode::MKind::Call { callee, .. } => Some((callee.clone(), n)),
                _ => None,
            })
            .collect();
        selected.vcode.callee_windows_high = callee_windows_high(&selected.vcode, live_vgprs);
        selected.vcode.llvm_convention = func.conv == crate::mir::CallConv::Llvm;
        selected.vcode.elide_arrival_copies();
        let allocation = regalloc::allocate(&selected.vcode, t, &func.name, &pressure)?;
        lap(report, "regalloc");
        if selected.vcode.slot_home.in_registers() && expand::spills_vgprs(&selected.vcode, &allocation) && !expand::vgpr_slots_fit(&selected.vcode, &allocation) {
            if slot_home == vcode::SlotHome::Spread {
                scratch = true;
            }
            slot_home = vcode::SlotHome::Spread;
            continue;
        }
        if func.kind == FuncKind::Kernel && !scratch && expand::spills_vgprs(&selected.vcode, &allocation) && !selected.vcode.slot_home.in_registers() {
            scratch = true;
            continue;
        }
        break (selected, allocation, occupied_vgprs, live_across_calls);
    };
    if wants(options, "regalloc") {
        report.printed.push_str(&format!("; after regalloc: @{}: {} edits, {} spill slots\n", func.name, allocation.edits.len(), allocation.num_spillslots));
    }
    let mut allocation = allocation;
    let split = input_vgpr::run(&selected.vcode, &mut allocation);
    lap(report, "input_vgpr");
    if wants(options, "input_vgpr") {
        report.printed.push_str(&format!("; after input_vgpr: @{}: {}\n", func.name, if split { "the work-item IDs' register split at its first write" } else { "unchanged" }));
    }
    let mut expanded = expand::expand(&selected.vcode, &allocation, t).map_err(|mut d| {
        d.context = Some(format!("in @{}", func.name));
        d.span = func.span;
        d
    })?;
    expand::check_registers(&expanded, t, &func.name)?;
    // The register checker again after every pass over hardware
    // instructions, in debug builds (tests).
    let checked = |code: &expand::Expanded| if cfg!(debug_assertions) { expand::check_registers(code, t, &func.name) } else { Ok(()) };
    lap(report, "expand");
    print_expanded(options, report, "expand", func, &expanded, t);
    if options.opt_level >= crate::opt::OptLevel::O1 {
        forward_copies::run(&mut expanded);
        lap(report, "forward_copies");
        print_expanded(options, report, "forward_copies", func, &expanded, t);
        checked(&expanded)?;
        dead_moves::run(&mut expanded, t);
        lap(report, "dead_moves");
        print_expanded(options, report, "dead_moves", func, &expanded, t);
        checked(&expanded)?;
        let renamed_at_all = window_rename::run(&mut expanded, t).is_some();
        lap(report, "window_rename");
        print_expanded(options, report, "window_rename", func, &expanded, t);
        checked(&expanded)?;
        if renamed_at_all {
            // The windows are ordinary registers now (moved or not, nothing
            // renames them any more): copies out of them forward like any
            // other.
            expanded.windows = None;
            forward_copies::run(&mut expanded);
            dead_moves::run(&mut expanded, t);
            lap(report, "forward_copies");
            print_expanded(options, report, "forward_copies", func, &expanded, t);
            checked(&expanded)?;
        }
        backward_copies::run(&mut expanded, t);
        if renamed_at_all {
            // The count is what the code names, as after window_rename.
            expanded.vgprs = u32::from(expand::vgprs_named(&expanded.blocks).max(1));
        }
        lap(report, "backward_copies");
        print_expanded(options, report, "backward_copies", func, &expanded, t);
        checked(&expanded)?;
        store_runs::run(&mut expanded, t);
        lap(report, "store_runs");
        print_expanded(options, report, "store_runs", func, &expanded, t);
        checked(&expanded)?;
        merge_accesses::run(&mut expanded, t);
        lap(report, "merge_accesses");
        print_expanded(options, report, "merge_accesses", func, &expanded, t);
        checked(&expanded)?;
        // Its validator runs in debug builds and with `verify_passes`.
        compact_vgprs::run(&mut expanded, t, options.verify_passes || cfg!(debug_assertions))
            .map_err(|why| Diagnostic::new(format!("internal error in @{}: {why}", func.name), func.span))?;
        lap(report, "compact_vgprs");
        print_expanded(options, report, "compact_vgprs", func, &expanded, t);
        checked(&expanded)?;
        skip_branches::run(&mut expanded, t);
        lap(report, "skip_branches");
        print_expanded(options, report, "skip_branches", func, &expanded, t);
        checked(&expanded)?;
        vopd::run(&mut expanded, t);
        lap(report, "vopd");
        print_expanded(options, report, "vopd", func, &expanded, t);
        checked(&expanded)?;
    }
    waitcnt::insert_waitcnts(&mut expanded, t);
    lap(report, "waitcnt");
    print_expanded(options, report, "waitcnt", func, &expanded, t);
    checked(&expanded)?;
    hazards::avoid_hazards(&mut expanded, t);
    lap(report, "hazards");
    print_expanded(options, report, "hazards", func, &expanded, t);
    checked(&expanded)?;
    let vgprs_written = expanded
        .blocks
        .iter()
        .flat_map(|(_, _, code)| code)
        .flat_map(|e| &e.inst.defs)
        .filter_map(expand::vgpr_span)
        .flat_map(|(b, n)| b..b + n)
        .filter(|&v| v < 32)
        .fold(0u32, |m, v| m | 1 << v);
    let encoded = emit::encode(
        &func.name,
        &expanded,
        t,
        options.listing || wants(options, "emit"),
    )?;
    lap(report, "emit");
    if wants(options, "emit") {
        report.printed.push_str(&format!("; after emit: @{}\n{}", func.name, encoded.asm));
    }

    let lanes = if t.wave == crate::isa::WaveSize::W64 { 64 } else { 32 };
    let shape = cfi::FrameShape {
        kernel: func.kind == FuncKind::Kernel,
        sp_scale: if t.gpu.has_architected_flat_scratch() { 1 } else { lanes },
        incoming: selected.vcode.frame.incoming,
    };
    let frame_rows = cfi::rows(shape, t, &encoded.cfi);
    let mut resources = KernelResources::from_inputs(t, &selected.inputs);
    resources.sgpr_spill_count = expanded.spills.sgprs;
    resources.vgpr_spill_count = expanded.spills.vgprs;
    resources.num_vgpr = expanded.vgprs.max(1);
    resources.num_agpr = expanded.agprs;
    resources.num_sgpr = expanded.sgprs.max(u32::from(selected.state.next_free_sgpr()));
    resources.uses_vcc = expanded.uses_vcc;
    resources.uses_flat_scratch = selected.vcode.flat_scratch_init.is_some();
    resources.group_segment_fixed_size = selected.lds_size;
    resources.kernarg_size = selected.kernarg.size;
    resources.code_size = encoded.code.len() as u32;
    resources.xnack_enabled = target.xnack != codeobj::FeatureSetting::Off && t.gpu.generation() == crate::isa::Generation::Gfx9;
    resources.workitem_id = match selected.inputs.workitem_id_dims {
        0 | 1 => crate::abi::descriptor::WorkitemIdDims::X,
        2 => crate::abi::descriptor::WorkitemIdDims::XY,
        _ => crate::abi::descriptor::WorkitemIdDims::XYZ,
    };
    resources.workgroup_id = [selected.inputs.workgroup_id_x, selected.inputs.workgroup_id_y, selected.inputs.workgroup_id_z];
    if scratch {
        resources.uses_scratch = true;
        resources.private_segment_fixed_size = expanded.frame_bytes;
    }
    let stats = KernelStats {
        name: func.name.clone(),
        instructions: encoded.instructions,
        code_bytes: encoded.code.len(),
        vgprs: resources.num_vgpr,
        max_live_vgprs: occupied_vgprs,
        max_live_vgprs_with_callees: occupied_vgprs,
        live_across_calls,
        sgprs: resources.num_sgpr,
        agprs: expanded.agprs,
        sgpr_spills: expanded.spills.sgprs,
        vgpr_spills: expanded.spills.vgprs,
        slot_vgprs: expanded.spills.slot_vgprs,
        // A device function's frame; a kernel's private segment (set below and
        // in compile_module, which adds what its callees need).
        scratch_bytes: expanded.frame_bytes,
        lds_bytes: selected.lds_size,
        occupancy: occupancy(t, crate::abi::descriptor::total_vgpr_count(t.gpu, resources.num_vgpr, resources.num_agpr), resources.num_sgpr),
        occupancy_limit: occupancy_limit(t, crate::abi::descriptor::total_vgpr_count(t.gpu, resources.num_vgpr, resources.num_agpr)),
    };
    // restrict pointers get what the kernel does through them (as LLVM infers
    // it) unless the MIR says.
    let args = func
        .params
        .iter()
        .map(|p| {
            let mut info = p.info.clone();
            if info.is_restrict && info.access.is_none() && matches!(func.value_type(p.value), crate::abi::Type::Ptr(_)) {
                info.access = arg_access::pointer_access(func, p.value);
            }
            (func.value_name(p.value).to_string(), func.value_type(p.value).clone(), info)
        })
        .collect();
    Ok(CompiledKernel {
        name: func.name.clone(),
        is_kernel: func.kind == FuncKind::Kernel,
        code: encoded.code,
        relocated: encoded.relocated,
        asm: encoded.asm,
        stats,
        kernarg: selected.kernarg,
        resources,
        args,
        attrs: func.attrs.clone(),
        frame_bytes: expanded.frame_bytes,
        frame_rows,
        vgprs_written,
    })
}

/// Bytes per lane a call of `f` needs above the caller's SP: its frame (which
/// starts with its incoming arguments) and the most its calls need; and
/// whether a recursive call makes the real depth unknown (a function already on
/// the current path adds DYNAMIC_STACK_BYTES).
///
/// `known` holds what this walk found; `settled` what any walk found for a
/// function whose calls reach no recursion: that does not depend on the path
/// it was reached by, so every walk shares it (a chain of n calls was walked
/// once per function, n^2 steps, each searching the path). A result that
/// passed a recursion is this walk's only. The third value says so.
fn stack_need<'a>(
    f: &'a str,
    frames: &HashMap<String, u32>,
    callees: &HashMap<&'a str, Vec<&'a str>>,
    external: &[String],
    path: &mut HashSet<&'a str>,
    known: &mut HashMap<&'a str, (u32, bool, bool)>,
    settled: &mut HashMap<&'a str, (u32, bool)>,
) -> (u32, bool, bool) {
    if external.iter().any(|e| e == f) {
        return (EXTERNAL_STACK_BYTES, true, false);
    }
    if let Some(&(n, d)) = settled.get(f) {
        return (n, d, false);
    }
    if let Some(&n) = known.get(f) {
        return n;
    }
    if path.contains(f) {
        // Recursion: the depth is unknown; reserve LLVM's default for stacks
        // it cannot bound on top of one frame of each function on the cycle.
        return (DYNAMIC_STACK_BYTES, true, true);
    }
    path.insert(f);
    let mut deepest = (0u32, false);
    let mut recursive = false;
    for &c in callees.get(f).map(Vec::as_slice).unwrap_or(&[]) {
        let (n, d, r) = stack_need(c, frames, callees, external, path, known, settled);
        deepest = (deepest.0.max(n), deepest.1 || d);
        recursive |= r;
    }
    path.remove(f);
    let need = (frames.get(f).copied().unwrap_or(0).saturating_add(deepest.0), deepest.1);
    // Remembered even below a recursion (then an estimate anyway), so that
    // every function is visited once per walk.
    known.insert(f, (need.0, need.1, recursive));
    if !recursive {
        settled.insert(f, need);
    }
    (need.0, need.1, recursive)
}

/// The device functions a function calls directly.
/// `f`'s most VGPR values live counting its callees' (see
/// [`KernelStats::max_live_vgprs_with_callees`]).
fn live_with_callees(f: &str, own: &HashMap<&str, (u32, &[(String, u32)])>, done: &mut HashMap<String, u32>, path: &mut Vec<String>) -> u32 {
    if let Some(&n) = done.get(f) {
        return n;
    }
    let Some(&(mine, calls)) = own.get(f) else { return 0 };
    if path.iter().any(|p| p == f) {
        return mine;
    }
    path.push(f.to_string());
    let mut most = mine;
    for (callee, across) in calls {
        most = most.max(across + live_with_callees(callee, own, done, path));
    }
    path.pop();
    done.insert(f.to_string(), most);
    most
}

fn direct_callees(func: &Function) -> Vec<&str> {
    let mut list: Vec<&str> = func
        .blocks
        .iter()
        .flat_map(|b| &b.insts)
        .filter_map(|i| match &i.op {
            crate::mir::Op::Call { callee, .. } => Some(callee.as_str()),
            _ => None,
        })
        .collect();
    list.sort_unstable();
    list.dedup();
    list
}

/// True if a kernel's calls need scratch: a callee that uses the stack, or an
/// argument or result passed in memory (copies in the kernel's frame).
fn calls_need_scratch(module: &Module, callee_uses: &HashMap<String, Vec<ImplicitInput>>, stack_needs: &HashMap<String, u32>, func: &Function, t: crate::isa::Target) -> bool {
    direct_callees(func).into_iter().any(|callee| {
        if stack_needs.get(callee).copied().unwrap_or(0) > 0 {
            return true;
        }
        let Some(f) = module.function(callee) else { return false };
        match crate::abi::assign(&isel::function_signature(f, callee_uses), crate::abi::Convention::AmdgpuCg, t) {
            Ok(a) => a.stack_size > 0 || a.sret.is_some() || a.args.iter().any(|x| x.by_ref),
            Err(_) => false,
        }
    })
}

fn print_expanded(options: &Options, report: &mut Report, pass: &str, func: &Function, code: &expand::Expanded, t: crate::isa::Target) {
    if !wants(options, pass) {
        return;
    }
    report.printed.push_str(&format!("; after {pass}: @{}\n", func.name));
    for (_, name, insts) in &code.blocks {
        report.printed.push_str(&format!("{name}:\n"));
        for e in insts {
            match e.target {
                Some(b) => report.printed.push_str(&format!("  {} -> block {b}\n", crate::isa::print::mnemonic(&e.inst, t.gpu))),
                None => report.printed.push_str(&format!("  {}\n", crate::isa::print(&e.inst, t))),
            }
        }
    }
}

/// Waves per SIMD that the register counts allow (`vgprs`: VGPRs and AGPRs
/// as the unified file of gfx90a/gfx942 counts them; gfx9: 512 VGPRs per lane
/// slot in granules of 8 and at most 8 waves (CDNA); gfx11: 1536 VGPRs per SIMD
/// in wave32 granules of 8 (wave64 counts double), at most 16 waves).
pub fn occupancy(target: crate::isa::Target, vgprs: u32, sgprs: u32) -> u32 {
    let _ = sgprs;
    let granule = |n: u32, g: u32| n.max(1).div_ceil(g) * g;
    match target.gpu.generation() {
        crate::isa::Generation::Gfx9 => (512 / granule(vgprs, 8)).min(8),
        crate::isa::Generation::Gfx11 => {
            let per_wave = granule(vgprs, 8) * if target.wave == crate::isa::WaveSize::W64 { 2 } else { 1 };
            (1536 / per_wave).min(16)
        }
    }
}

/// What limits [`occupancy`] for `vgprs` (the unified count on gfx90a and
/// gfx942): the VGPRs, or the most waves a SIMD holds (8 on gfx90a and
/// gfx942, 16 on gfx1100). SGPRs (at most 102 of 800 per SIMD) and LDS are
/// not counted.
pub fn occupancy_limit(target: crate::isa::Target, vgprs: u32) -> &'static str {
    let most = match target.gpu.generation() {
        crate::isa::Generation::Gfx9 => 8,
        crate::isa::Generation::Gfx11 => 16,
    };
    if occupancy(target, vgprs, 0) < most { "VGPRs" } else { "the SIMD's wave slots" }
}

/// The implicit inputs each function uses, directly (builtins) or through the
/// functions it calls; iterated to a fixed point over the call graph (calls may
/// be recursive).
pub fn implicit_uses(module: &Module) -> HashMap<String, Vec<ImplicitInput>> {
    use crate::mir::{Builtin, Op};
    let mut uses: HashMap<String, Vec<ImplicitInput>> = HashMap::new();
    let mut calls: Vec<(String, String)> = Vec::new();
    for f in &module.functions {
        let mut mine = Vec::new();
        for block in &f.blocks {
            for inst in &block.insts {
                let input = match inst.op {
                    Op::Builtin { kind: Builtin::WorkitemId, .. } => Some(ImplicitInput::WorkitemId),
                    Op::Builtin { kind: Builtin::WorkgroupId, dim: 0 } => Some(ImplicitInput::WorkgroupIdX),
                    Op::Builtin { kind: Builtin::WorkgroupId, dim: 1 } => Some(ImplicitInput::WorkgroupIdY),
                    Op::Builtin { kind: Builtin::WorkgroupId, .. } => Some(ImplicitInput::WorkgroupIdZ),
                    Op::Builtin { kind: Builtin::WorkgroupSize | Builtin::GridSize, .. } => Some(ImplicitInput::DispatchPtr),
                    Op::Builtin { kind, .. } if kind.reads_hidden_args() => Some(ImplicitInput::ImplicitArgPtr),
                    Op::Call { ref callee, .. } => {
                        calls.push((f.name.clone(), callee.clone()));
                        None
                    }
                    _ => None,
                };
                if let Some(i) = input {
                    if !mine.contains(&i) {
                        mine.push(i);
                    }
                }
            }
        }
        uses.insert(f.name.clone(), mine);
    }
    let mut changed = true;
    while changed {
        changed = false;
        for (caller, callee) in &calls {
            let add: Vec<ImplicitInput> = uses.get(callee).cloned().unwrap_or_default();
            let mine = uses.get_mut(caller).expect("every function has an entry");
            for i in add {
                if !mine.contains(&i) {
                    mine.push(i);
                    changed = true;
                }
            }
        }
    }
    uses
}

/// Compiles every function of a module into a code object description.
pub fn compile_module(
    module: &Module,
    target: &CodeObjectTarget,
    version: CodeObjectVersion,
    options: &Options,
    report: &mut Report,
) -> Result<(CodeObject, Vec<CompiledKernel>), Diagnostics> {
    compile(Cow::Borrowed(module), target, version, options, report)
}

/// [`compile_module`] of a module the caller gives up: optimisation moves
/// its functions instead of copying them (less memory, same bytes).
pub fn compile_module_owned(
    module: Module,
    target: &CodeObjectTarget,
    version: CodeObjectVersion,
    options: &Options,
    report: &mut Report,
) -> Result<(CodeObject, Vec<CompiledKernel>), Diagnostics> {
    compile(Cow::Owned(module), target, version, options, report)
}

fn compile(
    module: Cow<'_, Module>,
    target: &CodeObjectTarget,
    version: CodeObjectVersion,
    options: &Options,
    report: &mut Report,
) -> Result<(CodeObject, Vec<CompiledKernel>), Diagnostics> {
    let trace_start = Instant::now();
    let mut trace = crate::opt::Trace::default();
    let observe = crate::opt::Observe { print_after: &options.print_after, verify: options.verify_passes || cfg!(debug_assertions) };
    let optimized = {
        let facts = crate::opt::ModuleFacts { external: &options.external };
        let result = match module {
            Cow::Borrowed(module) => crate::opt::optimize_in_parallel(module, options.opt_level, &observe, &mut trace, options.jobs, facts),
            Cow::Owned(module) => crate::opt::optimize_owned(module, options.opt_level, &observe, &mut trace, options.jobs, facts),
        };
        Cow::Owned(result.map_err(|why| Diagnostic::new(why, Span::NONE))?)
    };
    report.printed.push_str(&trace.printed);
    if options.time_passes {
        report.timings.extend(trace.timings);
        report.timings.push(("MIR optimisation (wall)".to_string(), trace_start.elapsed()));
    }
    let codegen_start = Instant::now();
    let module: &Module = &optimized;
    let uses = implicit_uses(module);
    let by_name = module.functions_by_name();
    let callees: HashMap<&str, Vec<&str>> = module.functions.iter().map(|f| (f.name.as_str(), direct_callees(f))).collect();
    // Device functions first: a kernel's scratch depends on what its callees
    // need from the stack (their frames, with their incoming arguments, and
    // what their own calls need).
    let mut compiled: Vec<Option<CompiledKernel>> = module.functions.iter().map(|_| None).collect();
    let mut frames: HashMap<String, u32> = HashMap::new();
    for name in &options.external {
        match module.function(name) {
            Some(f) if f.kind == FuncKind::Device => {}
            _ => return Err(Diagnostic::new(format!("'{name}' is declared external but is not a device function of the module"), Span::NONE).into()),
        }
    }
    let external = |name: &str| options.external.iter().any(|e| e == name);
    // Every function is compiled even after one fails, so that all refusals of
    // the module are reported together.
    let mut refusals: Vec<Diagnostic> = Vec::new();
    // Device functions go callee first, in rounds of functions whose
    // callees are all compiled (each round in parallel), so that a call
    // between device functions clobbers only the VGPRs its callee and what
    // that reaches write, as a kernel's calls do; values live across it stay
    // in the registers below v32 that it leaves alone instead of going to
    // v32 and up, which the caller must save. Calls within a cycle of
    // recursion, and to functions that failed, change all of v0-v31.
    let mut round_facts = CalleeFacts::default();
    for round in callee_first_rounds(module, &callees, &external) {
        let results = in_parallel(&round, options.jobs, |i, r| compile_kernel(module, &by_name, &uses, &round_facts, &module.functions[i], target, version, options, r));
        for (i, result, printed) in results {
            merge(report, printed);
            match result {
                Ok(k) => {
                    frames.insert(k.name.clone(), k.frame_bytes);
                    // Its callees' masks are final (they were compiled in
                    // earlier rounds, or it calls itself).
                    let f = &module.functions[i];
                    let reached = callees.get(f.name.as_str()).into_iter().flatten().filter(|c| **c != f.name).map(|c| round_facts.vgprs_clobbered.get(*c).copied());
                    if let Some(mask) = reached.fold(Some(k.vgprs_written), |m, c| Some(m? | c?)) {
                        round_facts.vgprs_clobbered.insert(k.name.clone(), mask);
                    }
                    compiled[i] = Some(k);
                }
                Err(ds) => refusals.extend(ds.0),
            }
        }
    }
    let device: Vec<&str> = module.functions.iter().filter(|f| f.kind == FuncKind::Device).map(|f| f.name.as_str()).collect();
    let mut settled = HashMap::new();
    let stack_needs: HashMap<String, (u32, bool)> = device
        .iter()
        .map(|f| {
            let (n, d, _) = stack_need(f, &frames, &callees, &options.external, &mut HashSet::new(), &mut HashMap::new(), &mut settled);
            (f.to_string(), (n, d))
        })
        .collect();
    let facts = CalleeFacts {
        stack_needs: stack_needs.iter().map(|(f, (n, _))| (f.clone(), *n)).collect(),
        vgprs_clobbered: vgprs_clobbered(&compiled, &module.functions, &callees),
    };
    let kernels: Vec<usize> = (0..module.functions.len()).filter(|&i| module.functions[i].kind == FuncKind::Kernel).collect();
    for (i, result, printed) in in_parallel(&kernels, options.jobs, |i, r| compile_kernel(module, &by_name, &uses, &facts, &module.functions[i], target, version, options, r)) {
        merge(report, printed);
        match result {
            Ok(k) => compiled[i] = Some(k),
            Err(ds) => refusals.extend(ds.0),
        }
    }
    if !refusals.is_empty() {
        return Err(Diagnostics(refusals));
    }
    let mut compiled: Vec<CompiledKernel> = compiled.into_iter().flatten().collect();
    // A kernel's private segment covers its frame and the deepest chain of
    // callee frames above it. Recursion makes the depth unknown: the kernel
    // then reports a dynamic stack, with one frame of each function counted
    // plus DYNAMIC_STACK_BYTES (docs/abi.md section 3.1).
    for k in compiled.iter_mut().filter(|k| k.is_kernel) {
        let (deepest, dynamic) = callees
            .get(k.name.as_str())
            .map_or((0, false), |list| list.iter().map(|c| stack_needs.get(*c).copied().unwrap_or((0, false))).fold((0, false), |(n, d), (m, e)| (n.max(m), d || e)));
        if k.resources.uses_scratch {
            k.resources.private_segment_fixed_size = k.frame_bytes.saturating_add(deepest);
            k.resources.uses_dynamic_stack = dynamic;
            k.stats.scratch_bytes = k.resources.private_segment_fixed_size;
        }
    }
    // What is live in the wave while a callee runs: the caller's values
    // across the call and the callee's own (memoised; a function on the
    // current path counts its own values only, so recursion ends).
    let mut with_callees: HashMap<String, u32> = HashMap::new();
    {
        let own: HashMap<&str, (u32, &[(String, u32)])> = compiled.iter().map(|k| (k.name.as_str(), (k.stats.max_live_vgprs, k.stats.live_across_calls.as_slice()))).collect();
        for k in &compiled {
            live_with_callees(&k.name, &own, &mut with_callees, &mut Vec::new());
        }
    }
    for k in compiled.iter_mut() {
        k.stats.max_live_vgprs_with_callees = with_callees.get(&k.name).copied().unwrap_or(k.stats.max_live_vgprs);
    }
    // A kernel's register counts cover every function it can reach: callees run
    // in the kernel's waves, with its register allocation.
    let counts: HashMap<String, (u32, u32)> = compiled.iter().map(|k| (k.name.clone(), (k.resources.num_vgpr, k.resources.num_sgpr))).collect();
    for k in compiled.iter_mut().filter(|k| k.is_kernel) {
        let mut seen = vec![k.name.as_str().to_string()];
        let mut stack: Vec<&str> = callees.get(k.name.as_str()).cloned().unwrap_or_default();
        while let Some(f) = stack.pop() {
            if seen.iter().any(|s| s == f) {
                continue;
            }
            seen.push(f.to_string());
            if let Some(&(v, sg)) = counts.get(f) {
                k.resources.num_vgpr = k.resources.num_vgpr.max(v);
                k.resources.num_sgpr = k.resources.num_sgpr.max(sg);
            }
            if options.external.iter().any(|e| e == f) {
                k.resources.num_vgpr = k.resources.num_vgpr.max(EXTERNAL_VGPRS);
                k.resources.num_sgpr = k.resources.num_sgpr.max(external_sgprs(target.target));
                if target.target.gpu.has_agprs() {
                    k.resources.num_agpr = k.resources.num_agpr.max(EXTERNAL_AGPRS);
                }
            }
            stack.extend(callees.get(f).cloned().unwrap_or_default());
        }
        k.stats.vgprs = k.resources.num_vgpr;
        k.stats.sgprs = k.resources.num_sgpr;
        k.stats.agprs = k.resources.num_agpr;
        let total = crate::abi::descriptor::total_vgpr_count(target.target.gpu, k.resources.num_vgpr, k.resources.num_agpr);
        k.stats.occupancy = occupancy(target.target, total, k.resources.num_sgpr);
        k.stats.occupancy_limit = occupancy_limit(target.target, total);
    }
    if options.time_passes {
        report.timings.push(("code generation (wall)".to_string(), codegen_start.elapsed()));
    }
    let printf_readers: HashSet<&str> = module
        .functions
        .iter()
        .filter(|f| f.blocks.iter().flat_map(|b| &b.insts).any(|i| matches!(i.op, crate::mir::Op::Builtin { kind: crate::mir::Builtin::PrintfBuffer, .. })))
        .map(|f| f.name.as_str())
        .collect();
    let mut functions = Vec::new();
    for k in &compiled {
        let relocs = k.relocated.iter().flat_map(|(pc, symbol)| codeobj::Reloc::getpc_pair(*pc, symbol)).collect();
        let kernel = if k.is_kernel {
            let args: Vec<KernelArg> = k.args.iter().zip(&k.kernarg.explicit).map(|((name, ty, info), a)| kernel_arg(name, ty, info, a.offset)).collect();
            let mut info = KernelInfo::from_resources(target, version, args, true, k.resources.clone(), k.attrs.max_flat_work_group_size())
                .map_err(|e| Diagnostic::new(format!("@{}: {e}", k.name), Span::NONE))?;
            // Selection refused printf_buffer where the version has no slot
            // for it, so the kernel's own layout has one here.
            if let Some(h) = k.kernarg.hidden_arg("hidden_printf_buffer").filter(|_| reaches_printf(&k.name, &printf_readers, &callees)) {
                let arg = KernelArg::hidden(codeobj::metadata::HiddenArg::PrintfBuffer, h.offset, h.size);
                let at = info.metadata.args.iter().position(|a| a.offset > arg.offset).unwrap_or(info.metadata.args.len());
                info.metadata.args.insert(at, arg);
            }
            info.metadata.reqd_workgroup_size = k.attrs.reqd_work_group_size;
            info.metadata.workgroup_size_hint = k.attrs.work_group_size_hint;
            Some(info)
        } else {
            None
        };
        let visibility = if k.is_kernel { codeobj::Visibility::Protected } else { codeobj::Visibility::Hidden };
        functions.push(codeobj::Function { name: k.name.clone(), code: k.code.clone(), visibility, kernel, relocs, frame: k.frame_rows.clone() });
    }
    // Only the data some function still addresses (loads at constant
    // offsets were folded into constants), as LLVM drops unused constants.
    // Data a kept object holds the address of is kept too.
    let mut addressed: HashSet<String> = compiled.iter().flat_map(|k| k.relocated.iter().map(|(_, symbol)| symbol.clone())).collect();
    let mut pending: Vec<String> = addressed.iter().cloned().collect();
    while let Some(name) = pending.pop() {
        for a in module.data(&name).map_or(&[][..], |d| &d.addrs[..]) {
            if addressed.insert(a.target.clone()) {
                pending.push(a.target.clone());
            }
        }
    }
    let data = module
        .data
        .iter()
        .filter(|d| addressed.contains(&d.name))
        .map(|d| codeobj::DataObject {
            name: d.name.clone(),
            align: d.align,
            bytes: d.bytes.clone(),
            writable: d.writable,
            addrs: d.addrs.iter().map(|a| codeobj::DataAddress { offset: u64::from(a.offset), symbol: a.target.clone(), addend: a.addend }).collect(),
        })
        .collect();
    Ok((CodeObject { target: *target, version, functions, printf: module.printf_formats.clone(), data }, compiled))
}

/// Whether `kernel` or a function it calls (directly or not) is one of
/// `readers` (those that read the printf buffer): LLVM 22 gives exactly
/// those kernels the hidden argument.
fn reaches_printf(kernel: &str, readers: &HashSet<&str>, callees: &HashMap<&str, Vec<&str>>) -> bool {
    if readers.is_empty() {
        return false;
    }
    let mut seen: HashSet<&str> = [kernel].into_iter().collect();
    let mut stack = vec![kernel];
    while let Some(f) = stack.pop() {
        if readers.contains(f) {
            return true;
        }
        for &c in callees.get(f).into_iter().flatten() {
            if seen.insert(c) {
                stack.push(c);
            }
        }
    }
    false
}

/// The device functions compiled here (by index), in rounds: each function
/// comes after every device function it calls (but itself), so that its
/// callees' register facts are known when it is compiled. Functions on a
/// cycle of calls through several functions, and those calling them, come
/// in one last round. Kahn's algorithm over the call graph: linear in it.
fn callee_first_rounds(module: &Module, callees: &HashMap<&str, Vec<&str>>, external: &dyn Fn(&str) -> bool) -> Vec<Vec<usize>> {
    let compiled_here = |f: &Function| f.kind == FuncKind::Device && !external(&f.name);
    let index: HashMap<&str, usize> = module.functions.iter().enumerate().filter(|(_, f)| compiled_here(f)).map(|(i, f)| (f.name.as_str(), i)).collect();
    // For each function, how many of its callees compiled here are still
    // to come, and who calls each.
    let mut waiting = vec![0usize; module.functions.len()];
    let mut callers: Vec<Vec<usize>> = vec![Vec::new(); module.functions.len()];
    for (&name, &i) in &index {
        for &c in callees.get(name).into_iter().flatten() {
            if let Some(&k) = index.get(c).filter(|&&k| k != i) {
                waiting[i] += 1;
                callers[k].push(i);
            }
        }
    }
    let ours = |i: usize| index.get(module.functions[i].name.as_str()) == Some(&i);
    let mut round: Vec<usize> = (0..module.functions.len()).filter(|&i| ours(i) && waiting[i] == 0).collect();
    let mut placed = 0;
    let mut rounds = Vec::new();
    while !round.is_empty() {
        placed += round.len();
        let mut next = Vec::new();
        for &f in &round {
            for &c in &callers[f] {
                waiting[c] -= 1;
                if waiting[c] == 0 {
                    next.push(c);
                }
            }
        }
        next.sort_unstable();
        rounds.push(std::mem::replace(&mut round, next));
    }
    if placed < index.len() {
        rounds.push((0..module.functions.len()).filter(|&i| ours(i) && waiting[i] > 0).collect());
    }
    rounds
}

/// [`CalleeFacts::vgprs_clobbered`]: the VGPRs below v32 each compiled
/// device function and everything it reaches write, to a fixed point over
/// the call graph (recursion included); functions reaching one that was
/// not compiled here (external or declared) are left out.
fn vgprs_clobbered(compiled: &[Option<CompiledKernel>], functions: &[Function], callees: &HashMap<&str, Vec<&str>>) -> HashMap<String, u32> {
    let own: HashMap<&str, u32> = compiled.iter().flatten().filter(|k| !k.is_kernel).map(|k| (k.name.as_str(), k.vgprs_written)).collect();
    // Functions reaching one that is not compiled here drop out (repeated:
    // their callers follow); then the masks grow along the calls until
    // nothing changes (each pass only adds bits).
    let mut known: HashMap<&str, u32> = own;
    loop {
        let dropped: Vec<&str> = known.keys().filter(|f| callees.get(**f).is_some_and(|list| list.iter().any(|c| !known.contains_key(c)))).copied().collect();
        if dropped.is_empty() {
            break;
        }
        dropped.iter().for_each(|f| {
            known.remove(f);
        });
    }
    let names: Vec<&str> = functions.iter().map(|f| f.name.as_str()).filter(|f| known.contains_key(f)).collect();
    loop {
        let mut changed = false;
        for f in &names {
            let mask = callees.get(f).map_or(0, |list| list.iter().fold(0, |m, c| m | known[c])) | known[f];
            if mask != known[f] {
                known.insert(f, mask);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    known.into_iter().map(|(f, m)| (f.to_string(), m)).collect()
}

/// Runs `work` on every index of `items`, `jobs` at a time (0: one per core),
/// each with its own report; the results come back in `items` order, so that
/// the output does not depend on the number of threads or their timing.
fn in_parallel<T: Send>(items: &[usize], jobs: usize, work: impl Fn(usize, &mut Report) -> T + Sync) -> Vec<(usize, T, Report)> {
    crate::parallel::map_in_order(items.len(), jobs, |at| {
        let mut report = Report::default();
        let result = work(items[at], &mut report);
        (items[at], result, report)
    })
}

/// Appends one function's report to the module's.
fn merge(into: &mut Report, from: Report) {
    into.printed.push_str(&from.printed);
    into.timings.extend(from.timings);
}

/// A kernel argument's metadata entry: the ABI's layout and kind, with the
/// source's description where the MIR has one (else the type's OpenCL name).
fn kernel_arg(name: &str, ty: &crate::abi::Type, info: &crate::mir::ArgInfo, offset: u32) -> KernelArg {
    use crate::codeobj::metadata::Access;
    let access = info.access.map(|a| match a {
        crate::mir::ArgAccess::ReadOnly => Access::ReadOnly,
        crate::mir::ArgAccess::WriteOnly => Access::WriteOnly,
    });
    KernelArg {
        type_name: Some(info.type_name.clone().unwrap_or_else(|| opencl_type_name(ty))),
        is_const: info.is_const,
        is_restrict: info.is_restrict,
        is_volatile: info.is_volatile,
        actual_access: access,
        pointee_align: match ty {
            crate::abi::Type::Ptr(crate::abi::AddrSpace::Local) => Some(info.pointee_align.unwrap_or(1)),
            _ => None,
        },
        ..KernelArg::new(name, ty, offset)
    }
}

/// The OpenCL spelling of an argument type, for the metadata's `.type_name`
/// (what clang writes with `-cl-kernel-arg-info`; runtimes and our simulator use
/// it to read argument values).
pub fn opencl_type_name(ty: &crate::abi::Type) -> String {
    use crate::abi::Type;
    match ty {
        Type::I1 => "bool".into(),
        Type::I8 => "char".into(),
        Type::I16 => "short".into(),
        Type::I32 => "int".into(),
        Type::I64 => "long".into(),
        Type::F16 => "half".into(),
        Type::F32 => "float".into(),
        Type::F64 => "double".into(),
        Type::Ptr(_) => "void*".into(),
        Type::Vector(elem, n) => format!("{}{n}", opencl_type_name(elem)),
        Type::Struct(_) => "struct".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel keeping 2 values across a call to a function of 8 values
    /// live, which keeps 1 across a call to one of 4: 10 live in the wave
    /// at once; a call cycle ends at the function already on the path; an
    /// unknown (external) callee adds nothing.
    #[test]
    fn values_live_while_callees_run_add_up_along_calls() {
        let calls = |list: &[(&str, u32)]| list.iter().map(|&(c, n)| (c.to_string(), n)).collect::<Vec<_>>();
        let (k, f, g, a, b, x) = (calls(&[("f", 2)]), calls(&[("g", 1)]), calls(&[]), calls(&[("b", 1)]), calls(&[("a", 1)]), calls(&[("extern", 5)]));
        let own: HashMap<&str, (u32, &[(String, u32)])> = [("k", (3, &k[..])), ("f", (8, &f[..])), ("g", (4, &g[..])), ("a", (2, &a[..])), ("b", (3, &b[..])), ("x", (1, &x[..]))].into_iter().collect();
        let mut done = HashMap::new();
        let mut live = |name: &str| live_with_callees(name, &own, &mut done, &mut Vec::new());
        assert_eq!(live("g"), 4);
        assert_eq!(live("f"), 8);
        assert_eq!(live("k"), 10);
        assert_eq!(live("a"), 4);
        assert_eq!(live("x"), 5);
    }
}
