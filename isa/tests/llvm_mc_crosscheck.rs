//! Proof against LLVM: for every table entry x GPU x representative operand forms
//! (a) our bytes == `llvm-mc-22 -show-encoding` bytes for our printed text,
//! (b) `llvm-mc-22 --disassemble` of our bytes prints our text,
//! (c) our decoder turns LLVM's bytes back into the same `Inst`.
//! One assembler and one disassembler process per target. Every mismatch is collected
//! and reported in one failure message.

use std::collections::{BTreeSet, HashSet};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use amdgpu_isa::samples::{candidates, representative_for};
use amdgpu_isa::{decode, encode, encode_words, llvm_tools, print, Gpu, Inst, Opcode, Target, WaveSize};

fn run(mc: &Path, args: &[&str], input: &str) -> (String, String) {
    let mut child = Command::new(mc)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn llvm-mc");
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().expect("llvm-mc output");
    writer.join().unwrap().unwrap();
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// `llvm-mc-22` arguments that select `target` (wave64 on gfx1100 is a feature).
fn mc_args(target: Target) -> Vec<String> {
    let mut v = vec!["-arch=amdgcn".to_string(), format!("-mcpu={}", target.gpu.name()), "-show-encoding".into()];
    if target.wave == WaveSize::W64 && target.gpu == Gpu::Gfx1100 {
        v.push("-mattr=+wavefrontsize64".into());
    }
    v
}

fn parse_bytes(s: &str) -> Vec<u8> {
    s.split(',').filter_map(|b| u8::from_str_radix(b.trim().trim_start_matches("0x"), 16).ok()).collect()
}

/// (text before the comment, encoding bytes) of each instruction line of llvm-mc output.
fn parse_listing(out: &str) -> Vec<(String, Vec<u8>)> {
    let mut v = Vec::new();
    for line in out.lines() {
        if let Some(p) = line.find("; encoding: [") {
            let rest = &line[p + 13..];
            let end = rest.find(']').unwrap_or(rest.len());
            v.push((norm(&line[..p]), parse_bytes(&rest[..end])));
        }
    }
    v
}

fn norm(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:#04x}")).collect::<Vec<_>>().join(",")
}

struct Outcome {
    checked: usize,
    failed_ops: HashSet<Opcode>,
    seen_ops: HashSet<Opcode>,
}

fn check(mc: &Path, target: Target, insts: &[Inst], failures: &mut Vec<String>) -> Outcome {
    let gpu = target.gpu;
    let tag = format!("{}{}", gpu, if target.wave == gpu.default_wave_size() { "" } else { "/wave64" });
    let args = mc_args(target);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut failed_ops = HashSet::new();
    // A VOPD sample covers both of its halves.
    let seen_ops = insts.iter().flat_map(|i| std::iter::once(i.op).chain(i.vopd_y)).collect();
    let mut fail = |op: Opcode, msg: String, failed_ops: &mut HashSet<Opcode>| {
        failed_ops.insert(op);
        failures.push(format!("[{tag}] {msg}"));
    };

    let texts: Vec<String> = insts.iter().map(|i| print(i, target)).collect();
    let mut ours: Vec<Vec<u8>> = Vec::new();
    for (i, t) in insts.iter().zip(&texts) {
        let mut b = Vec::new();
        if let Err(e) = encode(i, target, &mut b) {
            fail(i.op, format!("`{t}`: our encoder failed: {e}"), &mut failed_ops);
        }
        ours.push(b);
    }

    // (a) assemble our text.
    let (out, err) = run(mc, &args, &(texts.join("\n") + "\n"));
    let mut bad_lines = BTreeSet::new();
    for line in err.lines() {
        if let Some(rest) = line.strip_prefix("<stdin>:") {
            let mut it = rest.split(':');
            if let (Some(n), Some(_), Some(kind)) = (it.next(), it.next(), it.next()) {
                if kind.trim() == "error" {
                    if let Ok(n) = n.parse::<usize>() {
                        bad_lines.insert(n - 1);
                        let msg = rest.splitn(4, ':').nth(3).unwrap_or("").trim().to_string();
                        let i = n - 1;
                        if i < insts.len() {
                            fail(
                                insts[i].op,
                                format!("`{}`: llvm-mc rejects our text: {msg}", texts[i]),
                                &mut failed_ops,
                            );
                        }
                    }
                }
            }
        }
    }
    let listing = parse_listing(&out);
    let good: Vec<usize> = (0..insts.len()).filter(|i| !bad_lines.contains(i)).collect();
    if listing.len() != good.len() {
        fail(
            Opcode::ALL[0],
            format!("assembler produced {} encodings for {} accepted lines", listing.len(), good.len()),
            &mut failed_ops,
        );
    }
    let mut llvm_bytes: Vec<Option<Vec<u8>>> = vec![None; insts.len()];
    for (&i, (_, b)) in good.iter().zip(&listing) {
        llvm_bytes[i] = Some(b.clone());
        if *b != ours[i] {
            fail(
                insts[i].op,
                format!("`{}`: bytes differ: ours [{}] llvm [{}]", texts[i], hex(&ours[i]), hex(b)),
                &mut failed_ops,
            );
        }
    }

    // (b) disassemble our bytes.
    let dis_in: String = ours.iter().filter(|b| !b.is_empty()).map(|b| hex(b) + "\n").collect();
    let mut dargs = args.clone();
    dargs.push("--disassemble");
    let (dout, _derr) = run(mc, &dargs, &dis_in);
    let dis = parse_listing(&dout);
    let mut k = 0;
    for (i, b) in ours.iter().enumerate() {
        if b.is_empty() {
            continue;
        }
        // Resynchronise after bytes LLVM could not decode (it skips a dword and goes on).
        let found = (k..(k + 6).min(dis.len())).find(|&j| dis[j].1 == *b);
        match found.map(|j| &dis[j]) {
            Some((text, _)) => {
                k = found.unwrap() + 1;
                if *text != norm(&texts[i]) {
                    fail(
                        insts[i].op,
                        format!("`{}`: llvm disassembles our bytes as `{text}`", texts[i]),
                        &mut failed_ops,
                    );
                }
            }
            _ => fail(
                insts[i].op,
                format!("`{}`: llvm cannot disassemble our bytes [{}]", texts[i], hex(b)),
                &mut failed_ops,
            ),
        }
    }

    // (c) decode LLVM's bytes (and our own) with our decoder.
    for (i, inst) in insts.iter().enumerate() {
        for (what, bytes) in [("llvm", llvm_bytes[i].as_ref()), ("our", Some(&ours[i]))] {
            let Some(bytes) = bytes else { continue };
            if bytes.is_empty() {
                continue;
            }
            match decode(bytes, target) {
                Ok((d, n)) if d == *inst && n == bytes.len() => {}
                Ok((d, n)) => fail(
                    inst.op,
                    format!("`{}`: decoding {what} bytes gives `{}` ({n} bytes): {d:?}", texts[i], print(&d, target)),
                    &mut failed_ops,
                ),
                Err(e) => fail(inst.op, format!("`{}`: decoding {what} bytes fails: {e}", texts[i]), &mut failed_ops),
            }
        }
    }
    Outcome { checked: insts.len(), failed_ops, seen_ops }
}

/// The sample generator also produces deliberately illegal forms (constant-bus
/// violations, misaligned tuples, literals where none fit). Our encoder rejects them;
/// llvm-mc must reject each of them too, so that our validation is not stricter than
/// LLVM's without us knowing.
fn check_rejections(mc: &Path, target: Target, failures: &mut Vec<String>) -> String {
    let rejected: Vec<Inst> = candidates(target).into_iter().filter(|i| encode_words(i, target).is_err()).collect();
    let texts: Vec<String> = rejected.iter().map(|i| print(i, target)).collect();
    let args = mc_args(target);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (_, err) = run(mc, &args, &(texts.join("\n") + "\n"));
    let mut bad = BTreeSet::new();
    for line in err.lines() {
        if let Some(rest) = line.strip_prefix("<stdin>:") {
            let mut it = rest.split(':');
            if let (Some(n), Some(_), Some(kind)) = (it.next(), it.next(), it.next()) {
                if kind.trim() == "error" {
                    if let Ok(n) = n.parse::<usize>() {
                        bad.insert(n - 1);
                    }
                }
            }
        }
    }
    for (i, t) in texts.iter().enumerate() {
        if !bad.contains(&i) {
            failures.push(format!(
                "[{} wave{}] `{t}`: our encoder rejects it but llvm-mc accepts it",
                target.gpu,
                target.wave.lanes()
            ));
        }
    }
    format!(
        "{} wave{}: {} illegal forms rejected by both us and llvm-mc",
        target.gpu,
        target.wave.lanes(),
        rejected.len()
    )
}

#[test]
fn llvm_mc_crosscheck() {
    let Some(mc) = llvm_tools::require("llvm-mc-22") else {
        return;
    };
    let mut failures = Vec::new();
    let mut summary = Vec::new();
    let runs: Vec<(Target, Vec<Inst>, bool)> = vec![
        (Target::new(Gpu::Gfx90a), representative_for(Target::new(Gpu::Gfx90a)), true),
        (Target::new(Gpu::Gfx942), representative_for(Target::new(Gpu::Gfx942)), true),
        (Target::new(Gpu::Gfx1100), representative_for(Target::new(Gpu::Gfx1100)), true),
        (
            Target { gpu: Gpu::Gfx1100, wave: WaveSize::W64 },
            representative_for(Target { gpu: Gpu::Gfx1100, wave: WaveSize::W64 }),
            true,
        ),
    ];
    for &(target, _, full) in &runs {
        if full {
            summary.push(check_rejections(&mc, target, &mut failures));
        }
    }
    for (target, insts, full) in runs {
        let o = check(&mc, target, &insts, &mut failures);
        summary.push(format!("{} wave{}: {} encodings cross-checked", target.gpu, target.wave.lanes(), o.checked));
        if full {
            // Every table entry that exists on this GPU must have passing samples.
            for op in Opcode::ALL {
                if op.info().available_for(target) && !o.seen_ops.contains(&op) {
                    failures.push(format!(
                        "[{} wave{}] {} has no sample that our encoder accepts",
                        target.gpu,
                        target.wave.lanes(),
                        op.info().name
                    ));
                }
            }
            if !o.failed_ops.is_empty() {
                let mut names: Vec<&str> = o.failed_ops.iter().map(|op| op.info().name).collect();
                names.sort_unstable();
                failures.insert(
                    0,
                    format!(
                        "[{} wave{}] {} table entries fail the cross-check: {}",
                        target.gpu,
                        target.wave.lanes(),
                        names.len(),
                        names.join(" ")
                    ),
                );
            }
        }
    }
    for s in &summary {
        eprintln!("{s}");
    }
    if !failures.is_empty() {
        let n = failures.len();
        // Set AMDGPU_ISA_CROSSCHECK_DUMP=<file> to get every failure, not just the first 400.
        if let Some(path) = std::env::var_os("AMDGPU_ISA_CROSSCHECK_DUMP") {
            let _ = std::fs::write(path, failures.join("\n"));
        }
        failures.truncate(400);
        panic!("{n} cross-check failures:\n{}", failures.join("\n"));
    }
}

/// The decoder must never panic, whatever the bytes.
#[test]
fn decoder_never_panics() {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let targets = [
        Target::new(Gpu::Gfx90a),
        Target::new(Gpu::Gfx942),
        Target::new(Gpu::Gfx1100),
        Target { gpu: Gpu::Gfx1100, wave: WaveSize::W64 },
    ];
    for _ in 0..200_000 {
        let len = (next() % 17) as usize;
        let bytes: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        for t in targets {
            if let Ok((inst, n)) = decode(&bytes, t) {
                assert!(n <= bytes.len());
                let _ = print(&inst, t);
                let mut out = Vec::new();
                if encode(&inst, t, &mut out).is_ok() {
                    // What we re-encode decodes to the same instruction.
                    let (again, m) = decode(&out, t).expect("re-decoding our own bytes");
                    assert_eq!((again, m), (inst, out.len()));
                }
            }
        }
    }
}
