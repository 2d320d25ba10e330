//! amdgpu-cg against LLVM 22 on the same kernels, in one run: for every example
//! and target, the code we generate (instructions, VGPRs, SGPRs) next to what
//! `llc-22 -O2` produces from the OpenCL twin in benches/data/, and the backend
//! compile time of both as a ratio. `all` counts the instructions of every
//! function the kernel reaches (call_many's callee too); `priv` is the kernel's
//! private segment in bytes per work-item.
//!
//! `cargo bench --bench vs_llvm`. LLVM's time is `llc-22` on the LLVM IR clang
//! produced (the backend only, like ours), median of 5 runs, and includes
//! process start-up; ours is the median of 50 in-process compilations.
//! Under `cargo test` (no `--bench` argument) it does nothing.
//!
//! A second table starts both sides from the same OpenCL C source, every
//! file of tests/spirv, after clang-22's -O2: ours from its SPIR-V (`-target
//! spirv64`, translated by amdgpu_cg::spirv; the time includes the
//! translation; median of 20), LLVM's from its amdgcn LLVM IR through llc-22
//! -O2. It prints the totals, the median VGPR ratio, VGPRs against the most
//! values live at once, and how many files spill on each side.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use amdgpu_cg::codegen::{self, Options, Report};
use amdgpu_cg::codeobj::{self, CodeObjectTarget, CodeObjectVersion};
use amdgpu_cg::isa::{self, Gpu, Target};
use amdgpu_cg::mir;

const EXAMPLES: [&str; 6] = ["vector_add", "saxpy", "lds_reduction", "matmul", "divergent_loop", "call_many"];

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn count_instructions(code: &[u8], target: Target) -> usize {
    let mut n = 0;
    let mut rest = code;
    while !rest.is_empty() {
        match isa::decode(rest, target) {
            Ok((inst, len)) => {
                n += 1;
                rest = &rest[len..];
                if inst.op == isa::Opcode::s_endpgm {
                    break;
                }
            }
            Err(_) => {
                n += 1;
                rest = &rest[4.min(rest.len())..];
            }
        }
    }
    n
}

/// `llc-22 -O2` of `ll` into `obj`: the median of 5 timed runs.
fn llc_median(ll: &Path, obj: &Path, gpu: Gpu) -> std::time::Duration {
    let times = (0..5)
        .map(|_| {
            let start = Instant::now();
            let status = Command::new("llc-22")
                .args(["-O2", "-mtriple=amdgcn-amd-amdhsa", &format!("-mcpu={gpu}"), "--amdhsa-code-object-version=5", "-filetype=obj", "-o"])
                .arg(obj)
                .arg(ll)
                .stderr(std::process::Stdio::null())
                .status()
                .unwrap();
            assert!(status.success());
            start.elapsed()
        })
        .collect();
    median(times)
}

/// The OpenCL C files of tests/spirv (every kernel in each).
fn spirv_sources(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root.join("tests/spirv"))
        .unwrap()
        .filter_map(|e| e.ok()?.path().file_name()?.to_str()?.strip_suffix(".cl").map(str::to_string))
        .collect();
    names.sort();
    names
}

fn median_f64(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() { 0.0 } else { v[v.len() / 2] }
}

/// Our compilation of the SPIR-V and llc-22's of the amdgcn IR, from one source.
fn from_spirv(root: &Path, work: &Path) {
    println!("\nfrom the same OpenCL C (tests/spirv, every file, all kernels and functions): ours from clang-22's SPIR-V, llc-22 -O2 from its amdgcn IR");
    println!("`live`: the most 32-bit divergent values live at once in a kernel's wave, a callee's counted with the caller's values live across its call (a lower bound for the kernels' VGPRs, which cover their callees'); `spill`: SGPR+VGPR spill counts (metadata);");
    println!("`bytes`: code bytes of every function; `priv`: the largest private segment of a kernel (bytes per work-item); `occ`: the lowest waves per SIMD of a kernel (from VGPRs+AGPRs)");
    println!(
        "{:<28} {:<8} | {:>6} {:>6} {:>5} {:>5} {:>4} {:>5} {:>4} {:>3} {:>9} | {:>6} {:>6} {:>5} {:>4} {:>5} {:>4} {:>3} {:>9} | {:>7} {:>6} {:>6}",
        "file", "target", "insts", "bytes", "vgpr", "live", "sgpr", "spill", "priv", "occ", "time", "insts", "bytes", "vgpr", "sgpr", "spill", "priv", "occ", "llc time", "speedup", "size", "vgprs"
    );
    let flags = ["-cl-std=CL2.0", "-O2", "-ffp-contract=off", "-cl-fp32-correctly-rounded-divide-sqrt", "-fno-discard-value-names", "-w"];
    let include = format!("-I{}", root.join("tests/spirv").display());
    let (mut ours_total, mut llc_total, mut our_time_total, mut llc_time_total) = (0usize, 0usize, 0f64, 0f64);
    let (mut vgpr_ratios, mut live_ratios, mut own_live_ratios) = (Vec::new(), Vec::new(), Vec::new());
    let (mut spilling_ours, mut spilling_llc, mut kernels_compared) = (0, 0, 0);
    for name in spirv_sources(root) {
        let cl = root.join(format!("tests/spirv/{name}.cl"));
        let spv = work.join(format!("{name}.spv"));
        let ok = Command::new("clang-22").args(flags).args(["-target", "spirv64", &include, "-c", "-o"]).arg(&spv).arg(&cl).status().map(|s| s.success()).unwrap_or(false);
        if !ok {
            println!("{name:<28} clang-22 -target spirv64 failed");
            continue;
        }
        let bytes = std::fs::read(&spv).unwrap();
        for gpu in Gpu::ALL {
            let target = CodeObjectTarget::new(Target::new(gpu));
            let mut times = Vec::new();
            let mut kernels = Vec::new();
            for _ in 0..20 {
                let start = Instant::now();
                let module = amdgpu_cg::spirv::to_mir(&amdgpu_cg::spirv::words(&bytes).unwrap()).unwrap();
                let (object, compiled) = codegen::compile_module(&module, &target, CodeObjectVersion::V5, &Options::default(), &mut Report::default()).unwrap();
                let _ = codeobj::write_hsaco(&object).unwrap();
                times.push(start.elapsed());
                kernels = compiled;
            }
            let insts: usize = kernels.iter().map(|k| k.stats.instructions).sum();
            let ours_kernels: Vec<&codegen::CompiledKernel> = kernels.iter().filter(|k| k.is_kernel).collect();
            let vgprs = ours_kernels.iter().map(|k| k.stats.vgprs).max().unwrap_or(0);
            // A kernel's VGPR count covers the device functions it calls
            // (the descriptor takes the most of all), so the lower bound
            // counts what is live in the wave while a callee runs: the
            // caller's values across the call and the callee's own. The
            // looser bound of earlier runs, the most values live in any one
            // function, is kept for comparison.
            let live = ours_kernels.iter().map(|k| k.stats.max_live_vgprs_with_callees).max().unwrap_or(0);
            let live_own = kernels.iter().map(|k| k.stats.max_live_vgprs).max().unwrap_or(0);
            let spills: u32 = ours_kernels.iter().map(|k| k.stats.sgpr_spills + k.stats.vgpr_spills).sum();
            let bytes: usize = kernels.iter().map(|k| k.stats.code_bytes).sum();
            let sgprs = ours_kernels.iter().map(|k| k.stats.sgprs).max().unwrap_or(0);
            let private = ours_kernels.iter().map(|k| k.stats.scratch_bytes).max().unwrap_or(0);
            let occupancy = ours_kernels.iter().map(|k| k.stats.occupancy).min().unwrap_or(0);
            let our_time = median(times);
            let (ll, obj, hsaco) = (work.join(format!("{name}.{gpu}.s.ll")), work.join(format!("{name}.{gpu}.s.o")), work.join(format!("{name}.{gpu}.s.hsaco")));
            let mcpu = format!("-mcpu={gpu}");
            assert!(Command::new("clang-22")
                .args(flags)
                .args(["-target", "amdgcn-amd-amdhsa", &mcpu, "-nogpulib", &include, "-S", "-emit-llvm", "-o"])
                .arg(&ll)
                .arg(&cl)
                .status()
                .unwrap()
                .success());
            let llc_time = llc_median(&ll, &obj, gpu);
            assert!(Command::new("ld.lld-22").arg("-shared").arg(&obj).arg("-o").arg(&hsaco).status().unwrap().success());
            let loaded = codeobj::read(&std::fs::read(&hsaco).unwrap()).unwrap();
            let metas: Vec<_> = loaded.kernels.iter().filter_map(|k| k.metadata.as_ref()).collect();
            let llc_vgprs = metas.iter().map(|m| m.vgpr_count).max().unwrap_or(0);
            let llc_spills: u32 = metas.iter().map(|m| m.sgpr_spill_count + m.vgpr_spill_count).sum();
            let llc_functions = || loaded.functions.iter().filter(|f| !f.name.starts_with("__clang_ocl_kern_imp_"));
            let llc_all: usize = llc_functions().map(|f| count_instructions(&f.code, Target::new(gpu))).sum();
            let llc_bytes: usize = llc_functions().map(|f| f.code.len()).sum();
            let llc_sgprs = metas.iter().map(|m| m.sgpr_count).max().unwrap_or(0);
            let llc_private = metas.iter().map(|m| m.private_segment_fixed_size).max().unwrap_or(0);
            let llc_occupancy = metas.iter().map(|m| codegen::occupancy(Target::new(gpu), m.vgpr_count + m.agpr_count.unwrap_or(0), m.sgpr_count)).min().unwrap_or(0);
            ours_total += insts;
            llc_total += llc_all;
            our_time_total += our_time.as_secs_f64();
            llc_time_total += llc_time.as_secs_f64();
            kernels_compared += ours_kernels.len();
            spilling_ours += usize::from(spills > 0);
            spilling_llc += usize::from(llc_spills > 0);
            vgpr_ratios.push(f64::from(vgprs) / f64::from(llc_vgprs.max(1)));
            if live > 0 {
                live_ratios.push(f64::from(vgprs) / f64::from(live));
            }
            if live_own > 0 {
                own_live_ratios.push(f64::from(vgprs) / f64::from(live_own));
            }
            println!(
                "{name:<28} {gpu:<8} | {insts:>6} {bytes:>6} {vgprs:>5} {live:>5} {sgprs:>4} {spills:>5} {private:>4} {occupancy:>3} {:>7.1}us | {llc_all:>6} {llc_bytes:>6} {llc_vgprs:>5} {llc_sgprs:>4} {llc_spills:>5} {llc_private:>4} {llc_occupancy:>3} {:>7.1}ms | {:>6.0}x {:>5.2}x {:>5.2}x",
                our_time.as_secs_f64() * 1e6,
                llc_time.as_secs_f64() * 1e3,
                llc_time.as_secs_f64() / our_time.as_secs_f64(),
                insts as f64 / llc_all as f64,
                f64::from(vgprs) / f64::from(llc_vgprs.max(1)),
            );
        }
    }
    println!(
        "total: {kernels_compared} kernels (files x targets: {}); {ours_total} instructions against llc-22's {llc_total} ({:.2}x); compile time {:.1} ms against {:.1} ms ({:.0}x faster, llc-22 including process start-up)",
        vgpr_ratios.len(),
        ours_total as f64 / llc_total as f64,
        our_time_total * 1e3,
        llc_time_total * 1e3,
        llc_time_total / our_time_total
    );
    println!(
        "VGPRs: median ours/llc-22 {:.2}x; median ours/most values live {:.2}x, worst {:.2}x, {} above 1.2x (against the most live in any one function, callers' values across calls not counted: median {:.2}x, worst {:.2}x, {} above 1.2x); files with spills: ours {spilling_ours}, llc-22 {spilling_llc}",
        median_f64(vgpr_ratios),
        median_f64(live_ratios.clone()),
        live_ratios.iter().copied().fold(0.0, f64::max),
        live_ratios.iter().filter(|&&r| r > 1.2).count(),
        median_f64(own_live_ratios.clone()),
        own_live_ratios.iter().copied().fold(0.0, f64::max),
        own_live_ratios.iter().filter(|&&r| r > 1.2).count()
    );
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let work = std::env::temp_dir().join(format!("amdgpu-cg-vs-llvm-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    println!(
        "{:<16} {:<8} | {:>6} {:>5} {:>5} {:>5} {:>5} {:>9} | {:>6} {:>5} {:>5} {:>5} {:>5} {:>9} | {:>7}",
        "kernel", "target", "insts", "all", "vgpr", "sgpr", "priv", "time", "insts", "all", "vgpr", "sgpr", "priv", "llc time", "speedup"
    );
    for name in EXAMPLES {
        let text = std::fs::read_to_string(root.join(format!("examples/{name}.mir"))).unwrap();
        let module = mir::parse(&text).unwrap();
        for gpu in Gpu::ALL {
            let target = CodeObjectTarget::new(Target::new(gpu));
            let mut times = Vec::new();
            let mut stats = None;
            let mut all = 0;
            let mut private = 0;
            for _ in 0..50 {
                let start = Instant::now();
                let (object, kernels) =
                    codegen::compile_module(&module, &target, CodeObjectVersion::V5, &Options::default(), &mut Report::default()).unwrap();
                let _ = codeobj::write_hsaco(&object).unwrap();
                times.push(start.elapsed());
                let kernel = kernels.iter().find(|k| k.is_kernel).unwrap();
                stats = Some(kernel.stats.clone());
                all = kernels.iter().map(|k| k.stats.instructions).sum::<usize>();
                private = kernel.resources.private_segment_fixed_size;
            }
            let ours = stats.unwrap();
            let our_time = median(times);

            let ll = work.join(format!("{name}.{gpu}.ll"));
            let cl = root.join(format!("benches/data/{name}.cl"));
            let ok = Command::new("clang-22")
                .args(["-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa", &format!("-mcpu={gpu}"), "-nogpulib", "-O2", "-w", "-S", "-emit-llvm", "-o"])
                .arg(&ll)
                .arg(&cl)
                .status()
                .map(|s| s.success())
                .unwrap_or(false);
            if !ok {
                println!("{name:<16} {gpu:<8} | clang-22 not available");
                continue;
            }
            let obj = work.join(format!("{name}.{gpu}.o"));
            let llc_time = llc_median(&ll, &obj, gpu);
            let hsaco = work.join(format!("{name}.{gpu}.hsaco"));
            assert!(Command::new("ld.lld-22").arg("-shared").arg(&obj).arg("-o").arg(&hsaco).status().unwrap().success());
            let loaded = codeobj::read(&std::fs::read(&hsaco).unwrap()).unwrap();
            let kernel = &loaded.kernels[0];
            let meta = kernel.metadata.as_ref().unwrap();
            // Every function but clang's callable copy of the kernel.
            let llc_all: usize = loaded
                .functions
                .iter()
                .filter(|f| !f.name.starts_with("__clang_ocl_kern_imp_"))
                .map(|f| count_instructions(&f.code, Target::new(gpu)))
                .sum();
            println!(
                "{name:<16} {gpu:<8} | {:>6} {:>5} {:>5} {:>5} {:>5} {:>7.1}us | {:>6} {:>5} {:>5} {:>5} {:>5} {:>7.1}ms | {:>6.0}x",
                ours.instructions,
                all,
                ours.vgprs,
                ours.sgprs,
                private,
                our_time.as_secs_f64() * 1e6,
                count_instructions(&kernel.code, Target::new(gpu)),
                llc_all,
                meta.vgpr_count,
                meta.sgpr_count,
                meta.private_segment_fixed_size,
                llc_time.as_secs_f64() * 1e3,
                llc_time.as_secs_f64() / our_time.as_secs_f64()
            );
        }
    }
    from_spirv(root, &work);
}
