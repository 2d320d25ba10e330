//! `amdgpu-cg abi-fuzz` (issue 19): the findings it must make.
//! - ours against ours, under both conventions, on every target: no disagreement;
//! - llc-22 against llc-22: the LLVM 22.1 `inreg` bug on gfx90a (the caller
//!   writes s0.., the callee reads s16..; docs/abi.md section 5) in every
//!   signature with an `inreg` argument and in no other, reduced to a
//!   one-argument reproducer; none on gfx942 or gfx1100;
//! - ours against llc-22 under `callconv(llvm)`, both ways: none, except that an
//!   llc-22 caller on gfx90a shows the same `inreg` bug against our callee
//!   (which reads where LLVM's callees read).
//!
//! The LLVM finding is an expected disagreement: the test fails if the fuzzer
//! stops finding it.

use amdgpu_cg::abi::{Convention, Signature};
use amdgpu_cg::abifuzz::{self, Compiler, Config, Kind, Summary};
use amdgpu_cg::codeobj::CodeObjectTarget;
use amdgpu_cg::isa::{llvm_tools, Gpu};

fn config(target: CodeObjectTarget, caller: Compiler, callee: Compiler, conv: Convention, count: usize, seed: u64) -> Config {
    let mut c = Config::new(target);
    c.caller = caller;
    c.callee = callee;
    c.conv = conv;
    c.count = count;
    c.seed = seed;
    c
}

fn run(c: &Config) -> Summary {
    abifuzz::run(c).unwrap_or_else(|e| panic!("abi-fuzz on {}: {e}", c.target.isa_name()))
}

fn has_inreg(sig: &Signature) -> bool {
    sig.params.iter().any(|p| p.inreg)
}

fn describe(s: &Summary) -> String {
    let text = abifuzz::text(s);
    text.lines().take(40).collect::<Vec<_>>().join("\n")
}

fn llvm_tools_present() -> bool {
    llvm_tools::require("llc-22").is_some() && llvm_tools::require("ld.lld-22").is_some()
}

#[test]
fn ours_against_ours_agree_on_every_target_under_both_conventions() {
    let mut checked = 0;
    for target in CodeObjectTarget::all_configurations() {
        for (conv, seed) in [(Convention::AmdgpuCg, 11), (Convention::Llvm, 12)] {
            let s = run(&config(target, Compiler::Ours, Compiler::Ours, conv, 48, seed));
            assert!(s.disagreements.is_empty(), "{}", describe(&s));
            checked += s.signatures;
        }
    }
    assert_eq!(checked, 8 * 48);
}

#[test]
fn llvm_against_llvm_shows_the_inreg_bug_on_gfx90a_only() {
    if !llvm_tools_present() {
        return;
    }
    for target in CodeObjectTarget::all_configurations() {
        let c = config(target, Compiler::Llvm, Compiler::Llvm, Convention::Llvm, 40, 3);
        if target.target.gpu != Gpu::Gfx90a {
            let s = run(&c);
            assert!(s.disagreements.is_empty(), "{}", describe(&s));
            continue;
        }
        let dir = std::env::temp_dir().join(format!("amdgpu-cg-abi-fuzz-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let s = run(&Config { out_dir: Some(dir.clone()), ..c.clone() });
        // Every signature with an inreg argument disagrees, and only those.
        let mut inreg = 0;
        for (i, d) in s.disagreements.iter().enumerate() {
            assert!(has_inreg(&d.signature), "signature {i} disagrees without inreg arguments:\n{}", describe(&s));
        }
        let disagreeing: Vec<usize> = s.disagreements.iter().map(|d| d.index).collect();
        let rng_sigs = regenerate(&c);
        for (i, sig) in rng_sigs.iter().enumerate() {
            if has_inreg(sig) {
                inreg += 1;
                assert!(disagreeing.contains(&i), "signature {i} ({sig}) has inreg arguments but agrees");
            }
        }
        assert!(inreg >= 10, "only {inreg} signatures with inreg arguments");
        // The finding itself: an inreg piece the caller put in s0..s3 and the
        // callee read from s16.., and the scratch V# overwritten.
        let argument = s.disagreements.iter().flat_map(|d| &d.findings).find(|f| f.kind == Kind::Argument && f.caller_put.iter().any(|r| r == "s0")).expect("an argument in s0");
        assert!(argument.subject.contains("inreg"), "{}", abifuzz::finding_text(argument));
        assert!(argument.callee_looked.iter().any(|r| r == "s16"), "{}", abifuzz::finding_text(argument));
        assert_eq!(argument.callee_convention.as_deref(), Some("s16"));
        assert!(s.disagreements.iter().flat_map(|d| &d.findings).any(|f| f.kind == Kind::ScratchDescriptor));
        // Reduced to a single inreg argument, with its reproducer.
        let r = s.reduced.iter().find(|r| r.kinds.contains(&Kind::Argument)).expect("a reduced argument disagreement");
        assert_eq!(r.signature.params.len(), 1, "reduced to {}", r.signature);
        assert!(r.signature.params[0].inreg && r.signature.ret.is_none(), "reduced to {}", r.signature);
        let repro = r.dir.as_ref().expect("a reproducer directory");
        for file in ["probe.ll", "reproduce.sh", "report.txt", "signature.txt"] {
            assert!(repro.join(file).exists(), "{} lacks {file}", repro.display());
        }
        let script = std::fs::read_to_string(repro.join("reproduce.sh")).unwrap();
        assert!(script.contains("llc-22") && script.contains("ld.lld-22 -shared") && script.contains("--signature 'fn(inreg"), "{script}");
        // The reproducer's own check shows the disagreement again.
        let mut again = Config { out_dir: None, signature: Some(r.signature.clone()), device_caller: Some(r.device_caller), ..c.clone() };
        again.count = 1;
        assert!(!run(&again).disagreements.is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// The signatures a run draws (the same generator and seed as `run`).
fn regenerate(c: &Config) -> Vec<Signature> {
    abifuzz::signatures(c).unwrap()
}

#[test]
fn ours_against_llvm_agree_both_ways_but_for_llvms_inreg_callers_on_gfx90a() {
    if !llvm_tools_present() {
        return;
    }
    for target in CodeObjectTarget::all_configurations() {
        for (caller, callee) in [(Compiler::Ours, Compiler::Llvm), (Compiler::Llvm, Compiler::Ours)] {
            let c = config(target, caller, callee, Convention::Llvm, 32, 5);
            let s = run(&c);
            if caller == Compiler::Llvm && target.target.gpu == Gpu::Gfx90a {
                assert!(!s.disagreements.is_empty(), "llc-22's inreg callers should disagree on gfx90a");
                for d in &s.disagreements {
                    assert!(has_inreg(&d.signature), "{}", describe(&s));
                }
            } else {
                assert!(s.disagreements.is_empty(), "{}", describe(&s));
            }
        }
    }
}

#[test]
fn the_command_line() {
    let bin = env!("CARGO_BIN_EXE_amdgpu-cg");
    let out = std::process::Command::new(bin).args(["abi-fuzz", "--mcpu", "gfx942", "--count", "6", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["signatures"], 6);
    assert_eq!(v["disagreeing"], 0);
    assert_eq!(v["convention"], "amdgpu_cg");
    // LLVM has no amdgpu_cg convention: a usage error.
    let out = std::process::Command::new(bin).args(["abi-fuzz", "--caller", "llvm", "--conv", "amdgpu_cg"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no amdgpu_cg convention"));
    // A bad signature names where it goes wrong.
    let out = std::process::Command::new(bin).args(["abi-fuzz", "--signature", "fn(i32, i33)"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains('^'), "{}", String::from_utf8_lossy(&out.stderr));
    // Disagreements give exit status 3.
    if llvm_tools_present() {
        let out = std::process::Command::new(bin)
            .args(["abi-fuzz", "--mcpu", "gfx90a", "--caller", "llvm", "--callee", "llvm", "--caller-kind", "kernel", "--signature", "fn(inreg i32, i32)"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stdout));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("the caller put it in s0; the callee looked in s16"), "{text}");
    }
}
