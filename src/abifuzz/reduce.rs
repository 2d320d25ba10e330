//! Shrinking a disagreeing signature: each round tries every one-step smaller
//! signature (a parameter removed, the result dropped or narrowed, a struct or
//! vector replaced by one of its elements, a scalar made `i32`, `inreg`
//! cleared) in one batch, and keeps the smallest that still shows the same
//! kind of disagreement, until none does. The result is written with its
//! sources, the commands that build it and the command that checks it.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use super::probe::{elements, Probe};
use super::{build, conv_name, finding_text, probe_for, Config, Disagreement, Finding, Kind, Reduced};
use crate::abi::{Param, Signature, Type};

/// Rounds before giving up (each removes at least one step of size).
const MAX_ROUNDS: usize = 200;
/// Kinds reduced per run (the first disagreement of each kind).
const MAX_REDUCTIONS: usize = 4;

fn size(sig: &Signature) -> usize {
    let params: usize = sig.params.iter().map(|p| 2 + elements(&p.ty).len() + usize::from(p.inreg)).sum();
    params + sig.ret.as_ref().map_or(0, |r| 1 + elements(r).len())
}

/// Types one step smaller than `ty`.
fn smaller_types(ty: &Type) -> Vec<Type> {
    match ty {
        Type::Struct(fields) => {
            let mut out: Vec<Type> = fields.clone();
            if fields.len() > 1 {
                for i in 0..fields.len() {
                    let mut rest = fields.clone();
                    rest.remove(i);
                    out.push(Type::Struct(rest));
                }
            }
            out
        }
        Type::Vector(e, n) => {
            let mut out = vec![(**e).clone()];
            if *n > 2 {
                out.push(Type::Vector(e.clone(), n - 1));
            }
            out
        }
        Type::I32 => Vec::new(),
        _ => vec![Type::I32],
    }
}

fn candidates(sig: &Signature, config: &Config) -> Vec<Signature> {
    let mut out = Vec::new();
    for i in 0..sig.params.len() {
        let mut s = sig.clone();
        s.params.remove(i);
        out.push(s);
        for t in smaller_types(&sig.params[i].ty) {
            let mut s = sig.clone();
            s.params[i] = Param { ty: t, ..sig.params[i].clone() };
            out.push(s);
        }
        if sig.params[i].inreg {
            let mut s = sig.clone();
            s.params[i].inreg = false;
            out.push(s);
        }
    }
    if let Some(r) = &sig.ret {
        let mut s = sig.clone();
        s.ret = None;
        out.push(s);
        for t in smaller_types(r) {
            let mut s = sig.clone();
            s.ret = Some(t);
            out.push(s);
        }
    }
    out.retain(|s| super::assignable(s, config));
    out.sort_by_key(size);
    out.dedup_by(|a, b| a.to_string() == b.to_string());
    out
}

type Evaluate<'a> = dyn FnMut(&Config, &[Probe]) -> Vec<Vec<Finding>> + 'a;

/// Reduces `sig` while `kind` stays among its findings; returns the smallest
/// signature, its findings and how many signatures were tried.
fn reduce(config: &Config, sig: &Signature, device_caller: bool, kind: Kind, eval: &mut Evaluate) -> (Signature, Vec<Finding>, usize) {
    let mut current = sig.clone();
    let mut tried = 0;
    for _ in 0..MAX_ROUNDS {
        let cands = candidates(&current, config);
        if cands.is_empty() {
            break;
        }
        let probes: Vec<Probe> = cands.iter().map(|s| probe_for(config, s.clone(), 0, device_caller)).collect();
        let results = eval(config, &probes);
        tried += cands.len();
        match results.iter().position(|f| f.iter().any(|f| f.kind == kind)) {
            Some(i) => current = cands[i].clone(),
            None => break,
        }
    }
    let findings = eval(config, &[probe_for(config, current.clone(), 0, device_caller)]).pop().unwrap_or_default();
    (current, findings, tried)
}

/// Reduces the first disagreement of each kind and writes reproducers under
/// `dir`; a kind that a reduced signature already shows is not reduced again.
pub fn reduce_all(config: &Config, disagreements: &[Disagreement], dir: &Path, eval: &mut Evaluate) -> Result<Vec<Reduced>, String> {
    let mut out: Vec<Reduced> = Vec::new();
    let mut reduced_kinds = 0;
    for d in disagreements {
        for f in &d.findings {
            if out.iter().any(|r| r.kinds.contains(&f.kind)) || reduced_kinds == MAX_REDUCTIONS {
                continue;
            }
            reduced_kinds += 1;
            let (signature, findings, tried) = reduce(config, &d.signature, d.device_caller, f.kind, eval);
            let mut kinds: Vec<Kind> = findings.iter().map(|f| f.kind).collect();
            kinds.push(f.kind);
            kinds.sort();
            kinds.dedup();
            let name = format!("{}-{}-{}-{}", config.target.isa_name().replace([':', '+'], "_"), config.caller.name(), config.callee.name(), out.len());
            let path = dir.join(name);
            write_reproducer(config, &signature, d.device_caller, &findings, &path)?;
            out.push(Reduced { kinds, from: d.index, signature, device_caller: d.device_caller, findings, dir: Some(path), tried });
        }
    }
    Ok(out)
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

fn write_reproducer(config: &Config, sig: &Signature, device_caller: bool, findings: &[Finding], path: &PathBuf) -> Result<(), String> {
    std::fs::create_dir_all(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    let write = |name: &str, text: &str| std::fs::write(path.join(name), text).map_err(|e| format!("cannot write {}: {e}", path.join(name).display()));
    let probe = probe_for(config, sig.clone(), 0, device_caller);
    let sources = build::sources(config, &[probe], 0);
    if let Some(m) = &sources.mir {
        write("probe.mir", m)?;
    }
    if let Some(ir) = &sources.ir {
        write("probe.ll", ir)?;
    }
    write("signature.txt", &format!("{sig}\n"))?;
    let mcpu = config.target.isa_name().trim_start_matches("amdgcn-amd-amdhsa--").to_string();
    let mut sh = String::from("#!/bin/sh\n");
    writeln!(sh, "# amdgpu-cg abi-fuzz reproducer: {sig}").unwrap();
    writeln!(sh, "# {mcpu}, caller {}, callee {}, convention {}", config.caller.name(), config.callee.name(), conv_name(config.conv)).unwrap();
    sh.push_str("set -e\ncd \"$(dirname \"$0\")\"\n# Build the code object (inspect it with llvm-objdump-22 -d probe.hsaco):\n");
    for c in &sources.commands {
        writeln!(sh, "{c}").unwrap();
    }
    sh.push_str("# Run the probe on the simulator and report:\n");
    writeln!(
        sh,
        "amdgpu-cg abi-fuzz --mcpu {mcpu} --caller {} --callee {} --conv {} --seed {} --caller-kind {} --signature {}",
        config.caller.name(),
        config.callee.name(),
        conv_name(config.conv),
        config.seed,
        if device_caller { "function" } else { "kernel" },
        shell_quote(&sig.to_string())
    )
    .unwrap();
    write("reproduce.sh", &sh)?;
    let mut report = format!("{sig} ({mcpu}, caller {}, callee {})\n", config.caller.name(), config.callee.name());
    for f in findings {
        report.push_str(&finding_text(f));
    }
    write("report.txt", &report)
}
