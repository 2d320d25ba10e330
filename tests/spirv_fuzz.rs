//! The SPIR-V reader and translator on mutated modules: never a panic. Seeds
//! are tests/spirv kernels compiled by clang-22 (`-target spirv64`); each
//! mutant (bit flips, random words, word-count changes, truncations, swapped
//! or repeated instructions) goes through `spirv::to_mir`, and what translates
//! through the verifier and the code generator for gfx942. Any panic fails,
//! with the seed and the mutation to reproduce it.
//!
//! `SPIRV_FUZZ_COUNT` (default 1500) mutants per seed (a tenth of that for the
//! four large seeds); `SPIRV_FUZZ_SEED` changes the stream; `SPIRV_FUZZ_SEEDS`
//! (outside CI) picks seeds by name; `SPIRV_FUZZ_TRACE` names every mutant
//! before it runs.

use std::path::Path;
use std::process::Command;

use amdgpu_cg::codegen::{self, Options, Report};
use amdgpu_cg::codeobj::{CodeObjectTarget, CodeObjectVersion};
use amdgpu_cg::isa::{llvm_tools, Gpu, Target};

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

/// Instruction boundaries of a well-formed module (after the header).
fn boundaries(words: &[u32]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut at = 5;
    while at < words.len() {
        let n = ((words[at] >> 16) as usize).max(1);
        out.push((at, n.min(words.len() - at)));
        at += n;
    }
    out
}

fn mutate(words: &[u32], rng: &mut Rng) -> (Vec<u32>, String) {
    let mut w = words.to_vec();
    let insts = boundaries(words);
    let what = match rng.below(7) {
        0 => {
            let i = 5 + rng.below(w.len() - 5);
            let bit = rng.below(32);
            w[i] ^= 1 << bit;
            format!("flip bit {bit} of word {i}")
        }
        1 => {
            let i = 5 + rng.below(w.len() - 5);
            let v = match rng.below(3) {
                0 => rng.next() as u32,
                1 => rng.below(300) as u32,
                _ => (words[i] & 0xffff_0000) | rng.below(400) as u32,
            };
            w[i] = v;
            format!("word {i} = {v:#x}")
        }
        2 => {
            let (at, _) = insts[rng.below(insts.len())];
            let count = rng.below(12) as u32;
            w[at] = (w[at] & 0xffff) | count << 16;
            format!("word count of the instruction at {at} = {count}")
        }
        3 => {
            let n = 5 + rng.below(w.len() - 5);
            w.truncate(n);
            format!("truncate to {n} words")
        }
        4 => {
            let (a, b) = (insts[rng.below(insts.len())], insts[rng.below(insts.len())]);
            let (first, second) = if a.0 < b.0 { (a, b) } else { (b, a) };
            if first.0 + first.1 <= second.0 {
                let mut out = w[..first.0].to_vec();
                out.extend_from_slice(&w[second.0..second.0 + second.1]);
                out.extend_from_slice(&w[first.0 + first.1..second.0]);
                out.extend_from_slice(&w[first.0..first.0 + first.1]);
                out.extend_from_slice(&w[second.0 + second.1..]);
                w = out;
            }
            format!("swap the instructions at {} and {}", first.0, second.0)
        }
        5 => {
            let (at, n) = insts[rng.below(insts.len())];
            let copy = w[at..at + n].to_vec();
            let to = insts[rng.below(insts.len())].0;
            w.splice(to..to, copy);
            format!("copy the instruction at {at} to {to}")
        }
        _ => {
            // An id operand to another small id.
            let (at, n) = insts[rng.below(insts.len())];
            if n > 1 {
                let i = at + 1 + rng.below(n - 1);
                w[i] = rng.below(80) as u32;
                format!("operand word {i} = {}", w[i])
            } else {
                "nothing".into()
            }
        }
    };
    (w, what)
}

#[test]
fn mutated_modules_never_panic() {
    let Some(clang) = llvm_tools::require("clang-22") else { return };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/spirv");
    let work = std::env::temp_dir().join(format!("amdgpu-cg-spirv-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let count: usize = std::env::var("SPIRV_FUZZ_COUNT").ok().and_then(|v| v.parse().ok()).unwrap_or(1500);
    let base: u64 = std::env::var("SPIRV_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x005e_ed0f_5b1e);
    let target = CodeObjectTarget::new(Target::new(Gpu::Gfx942));
    // The last twelve reach the math library, the work-group collectives,
    // conversions, local pointer arguments, 8/16-element vectors, printf, the
    // double library, constant tables, program-scope variables (module
    // data), program-scope pointers holding addresses (OpSpecConstantOp),
    // atomics through generic pointers (flat atomics) and structs with
    // array members passed by value. SPIRV_FUZZ_SEEDS=a,b narrows a
    // development run to those seeds.
    let only = std::env::var("SPIRV_FUZZ_SEEDS").ok().filter(|_| std::env::var_os("CI").is_none());
    let seeds = ["reduce_lds", "loop_phi", "switch_cases", "device_call", "math_builtins", "atomics", "math/library", "collectives/work_group", "conversions", "local_args", "vectors_8_16", "printf/printf", "math/double", "constant_tables", "program_globals", "global_pointers", "atomics_generic", "struct_padding"];
    let mut modules = Vec::new();
    for seed in seeds.into_iter().filter(|s| only.as_deref().is_none_or(|o| o.split(',').any(|o| o == *s))) {
        let spv = work.join(format!("{}.spv", seed.replace('/', "_")));
        let out = Command::new(&clang)
            .args(["-cl-std=CL2.0", "-O2", "-target", "spirv64", "-fno-discard-value-names"])
            .arg(format!("-I{}", dir.display()))
            .args(["-c", "-o"])
            .arg(&spv)
            .arg(dir.join(format!("{seed}.cl")))
            .output()
            .unwrap();
        assert!(out.status.success(), "clang-22: {}", String::from_utf8_lossy(&out.stderr));
        modules.push((seed, amdgpu_cg::spirv::words(&std::fs::read(&spv).unwrap()).unwrap()));
    }
    // Quiet panics while mutants run: each one is caught and reported with its
    // mutation (nothing outside catch_unwind below may panic).
    std::panic::set_hook(Box::new(|_| {}));
    let (mut translated, mut refused, mut panics) = (0usize, 0usize, Vec::new());
    // SPIRV_FUZZ_TRACE names each mutant before it runs (to find one that
    // hangs or runs out of memory, which no panic reports).
    let trace = std::env::var_os("SPIRV_FUZZ_TRACE").is_some();
    for (seed, words) in &modules {
        let seed = *seed;
        let mut rng = Rng(base ^ (seed.len() as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        // The large kernels take longer per mutant: a tenth as many.
        let large = ["math/library", "collectives/work_group", "vectors_8_16", "math/double"].contains(&seed);
        for k in 0..if large { count.div_ceil(10) } else { count } {
            let (mutant, what) = mutate(words, &mut rng);
            if trace {
                eprintln!("{seed} mutant {k} ({what})");
            }
            let outcome = std::panic::catch_unwind(|| match amdgpu_cg::spirv::to_mir(&mutant) {
                Err(_) => false,
                Ok(module) => {
                    if amdgpu_cg::mir::verify::verify(&module).is_ok() {
                        let _ = codegen::compile_module(&module, &target, CodeObjectVersion::V5, &Options::default(), &mut Report::default());
                    }
                    true
                }
            });
            match outcome {
                Ok(true) => translated += 1,
                Ok(false) => refused += 1,
                Err(p) => {
                    let msg = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
                    panics.push(format!("{seed} mutant {k} ({what}): {msg}"));
                }
            }
        }
    }
    let _ = std::panic::take_hook();
    let _ = std::fs::remove_dir_all(&work);
    eprintln!("spirv fuzz: {translated} translated, {refused} refused, {} panics", panics.len());
    assert!(panics.is_empty(), "{} panics:\n{}", panics.len(), panics.iter().take(20).cloned().collect::<Vec<_>>().join("\n"));
}
