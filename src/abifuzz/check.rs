//! Running a probe on the simulator and reading what happened: the callee's
//! records and the caller's outputs against the values passed, and register
//! snapshots at four places (the kernel's entry, the call, the callee's entry,
//! the return) for where each value really was.

use std::cell::RefCell;
use std::rc::Rc;

use super::emit::{self, OUTPUTS, RECORDS, UNIFORM};
use super::probe::{element_bits, pieces, Piece, Probe, IMPLICIT, KEEP_VECTOR};
use super::{Compiler, Config, Finding, Kind};
use crate::abi::{self, Assignment, Convention, Location, RegKind};
use crate::isa::{self, Opcode};
use crate::sim::{CodeObject, Simulator, Snapshot, Watch};

/// What the caller loads from `UNIFORM`.
const U: u32 = 0x1357_9bdf;
/// What the record and output areas hold before a run (a word no one stored).
const UNWRITTEN: u8 = 0xa5;
const AREA_BYTES: usize = 0x0080_0000;

/// A simulator with the probe areas mapped and a batch's code object loaded.
pub struct Bench {
    sim: Simulator,
    co: CodeObject,
}

impl Bench {
    pub fn new(hsaco: &[u8]) -> Result<Bench, String> {
        let mut sim = Simulator::new();
        for (name, base, size) in [("abi-fuzz records", RECORDS, AREA_BYTES), ("abi-fuzz outputs", OUTPUTS, AREA_BYTES), ("abi-fuzz uniform", UNIFORM, 4096)] {
            sim.device.map_at(name, base, vec![UNWRITTEN; size], true)?;
        }
        sim.device.write_u32(UNIFORM, U).map_err(|e| e.to_string())?;
        let co = sim.load(hsaco).map_err(|e| e.to_string())?;
        Ok(Bench { sim, co })
    }

    fn function(&self, name: &str) -> Option<(u64, &[u8])> {
        self.co.loaded.functions.iter().find(|f| f.name == name).map(|f| (self.co.base + f.address, f.code.as_slice()))
    }
}

/// Work-items per work-group in each dimension for a wave of `lanes`.
pub fn block(lanes: u32) -> [u32; 3] {
    [lanes / 4, 2, 2]
}

/// The probe's snapshots of one work-group.
struct Views<'a> {
    kernel: Option<&'a Snapshot>,
    call: Option<&'a Snapshot>,
    entry: Option<&'a Snapshot>,
    back: Option<&'a Snapshot>,
}

/// Runs probe `n` and returns its disagreements.
pub fn check(bench: &mut Bench, config: &Config, probe: &Probe, n: usize) -> Vec<Finding> {
    let target = config.target.target;
    let lanes = target.wave.lanes();
    let mut findings = Vec::new();
    let caller = emit::caller_name(n, probe);
    let kernel = emit::kernel_name(n);
    let (Some((callee_at, _)), Some((caller_at, caller_code)), Some((kernel_at, _))) =
        (bench.function(&emit::callee_name(n)), bench.function(&caller), bench.function(&kernel))
    else {
        findings.push(Finding::new(Kind::Crash, "the linked code object lacks a probe function's symbol".into()));
        return findings;
    };
    let call_sites = swappc_addresses(caller_code, caller_at, target);
    if call_sites.len() != 1 {
        findings.push(Finding::new(Kind::Crash, format!("{caller} has {} s_swappc_b64 instructions, expected one call", call_sites.len())));
        return findings;
    }
    let call_at = call_sites[0];
    let nrec = probe.record_count();
    let nout = probe.out_count();
    let dev = &mut bench.sim.device;
    let _ = dev.write(RECORDS, &vec![UNWRITTEN; 2 * 64 * 8 * nrec]);
    let _ = dev.write(OUTPUTS, &vec![UNWRITTEN; 2 * 64 * 8 * nout]);
    let watch = Rc::new(RefCell::new(Watch { addresses: vec![kernel_at, call_at, callee_at, call_at + 4], hits: Vec::new() }));
    bench.sim.options.watch = Some(watch.clone());
    bench.sim.options.max_instructions = 5_000_000;
    let b = block(lanes);
    if let Err(e) = bench.sim.dispatch(&bench.co, &kernel, [b[0] * 2, b[1], b[2]], b, &[]) {
        let text = e.to_string();
        // A register beyond the kernel's allocation: the kernel's descriptor
        // does not cover what the callee uses.
        let kind = if text.contains("but the kernel descriptor allocates only") { Kind::Resources } else { Kind::Crash };
        findings.push(Finding::new(kind, format!("the simulator stopped: {text}")));
    }
    bench.sim.options.watch = None;
    let mut records = vec![0u8; 2 * 64 * 8 * nrec];
    let mut outputs = vec![0u8; 2 * 64 * 8 * nout];
    let _ = bench.sim.device.read(RECORDS, &mut records);
    let _ = bench.sim.device.read(OUTPUTS, &mut outputs);
    let word = |area: &[u8], e: usize, n: usize, g: u32, t: u32| -> u64 {
        let at = ((g as usize * 64 + t as usize) * n + e) * 8;
        u64::from_le_bytes(area[at..at + 8].try_into().unwrap())
    };
    let hits = watch.borrow().hits.clone();
    let sig = probe.sig.clone();
    let callee_model = abi::assign(&sig, config.conv, target).ok();
    let caller_model = match config.caller {
        Compiler::Llvm => abi::assign_llvm22_caller(&sig, target).ok(),
        Compiler::Ours => callee_model.clone(),
    };
    for g in 0..2u32 {
        let at = |pc: u64| hits.iter().find(|h| h.pc == pc && h.group[0] == g);
        let views = Views { kernel: at(kernel_at), call: at(call_at), entry: at(callee_at), back: at(call_at + 4) };
        let before = findings.len();
        check_group(config, probe, &views, g, &|e, t| word(&records, e, nrec, g, t), &|e, t| word(&outputs, e, nout, g, t), callee_model.as_ref(), caller_model.as_ref(), &mut findings);
        // Work-group 1 repeats what work-group 0 showed; report it only if new.
        if g == 1 {
            let second: Vec<Finding> = findings.drain(before..).collect();
            for f in second {
                if !findings_contain(&findings, &f) {
                    findings.push(f);
                }
            }
        }
    }
    // After a stop, what was never stored follows from it: one line says so.
    if findings.iter().any(|f| matches!(f.kind, Kind::Crash | Kind::Resources)) {
        let lost = findings.iter().filter(|f| f.got.is_none() && f.expected.is_some()).count();
        findings.retain(|f| f.got.is_some() || f.expected.is_none());
        if lost > 0 {
            if let Some(f) = findings.iter_mut().find(|f| matches!(f.kind, Kind::Crash | Kind::Resources)) {
                f.detail = format!("({lost} pieces and values were never stored)");
            }
        }
    }
    findings
}

fn findings_contain(list: &[Finding], f: &Finding) -> bool {
    list.iter().any(|x| x.kind == f.kind && x.subject == f.subject)
}

/// Device addresses of the `s_swappc_b64` instructions in `code`.
fn swappc_addresses(code: &[u8], start: u64, target: isa::Target) -> Vec<u64> {
    let mut found = Vec::new();
    let mut at = 0;
    while at < code.len() {
        let Ok((inst, len)) = isa::decode(&code[at..], target) else { break };
        if inst.op == Opcode::s_swappc_b64 {
            found.push(start + at as u64);
        }
        at += len.max(4);
    }
    found
}

/// The lanes where `piece` differs between the wanted and the received
/// element values (`lanes_values[lane]`), the first of them, and the piece's
/// two values there.
fn first_difference(piece: &Piece, lanes_values: &[(Vec<u64>, Vec<u64>)]) -> Option<(Vec<u32>, u32, u32, u32)> {
    let bad: Vec<u32> = (0..lanes_values.len() as u32).filter(|&t| {
        let (w, g) = &lanes_values[t as usize];
        piece.value(w) != piece.value(g)
    }).collect();
    let &t = bad.first()?;
    let (w, g) = &lanes_values[t as usize];
    let (want, got) = (piece.value(w), piece.value(g));
    Some((bad, t, want, got))
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

#[allow(clippy::too_many_arguments)]
fn check_group(
    config: &Config,
    probe: &Probe,
    views: &Views,
    g: u32,
    record: &dyn Fn(usize, u32) -> u64,
    output: &dyn Fn(usize, u32) -> u64,
    callee_model: Option<&Assignment>,
    caller_model: Option<&Assignment>,
    findings: &mut Vec<Finding>,
) {
    let target = config.target.target;
    let lanes = target.wave.lanes();
    let unwritten = u64::from_le_bytes([UNWRITTEN; 8]);
    let group = if g == 0 { String::new() } else { format!(" (work-group {g})") };
    // Arguments, piece by piece.
    for (i, a) in probe.args.iter().enumerate() {
        let ps = pieces(&a.ty, 0, "");
        let model = |m: Option<&Assignment>, k: usize| -> Option<String> {
            let arg = &m?.args[i];
            if arg.by_ref {
                return Some(format!("by reference: a pointer in {}", locations(&arg.pieces.iter().map(|p| p.loc).collect::<Vec<_>>())));
            }
            arg.pieces.get(k).map(|p| p.loc.to_string())
        };
        // Element values per lane: what was passed and what the callee recorded.
        let lanes_values: Vec<(Vec<u64>, Vec<u64>)> = (0..lanes)
            .map(|t| {
                let want = a.elements.iter().map(|e| e.in_lane(t) & mask(element_bits(&e.ty))).collect();
                let got = a.elements.iter().enumerate().map(|(e, el)| record(a.first + e, t) & mask(element_bits(&el.ty))).collect();
                (want, got)
            })
            .collect();
        for (k, piece) in ps.iter().enumerate() {
            let Some((bad, t, want, got)) = first_difference(piece, &lanes_values) else { continue };
            let never = piece.parts.iter().any(|&(e, _)| record(a.first + e, t) == unwritten);
            let inreg = if a.inreg { "inreg " } else { "" };
            let mut f = Finding::new(Kind::Argument, format!("argument {i} ({inreg}{}) piece '{}'", a.ty, piece.path));
            f.expected = Some(u64::from(want));
            f.got = (!never).then_some(u64::from(got));
            f.lanes = bad.len() as u32;
            if let Some(entry) = views.entry {
                let loc = |m: Option<&Assignment>| m.filter(|m| !m.args[i].by_ref).and_then(|m| m.args[i].pieces.get(k)).map(|p| p.loc);
                f.caller_put = locate(entry, loc(caller_model), want, piece.bits, target);
                if !never {
                    f.callee_looked = locate(entry, loc(callee_model), got, piece.bits, target);
                }
            }
            f.callee_convention = model(callee_model, k);
            f.caller_convention = model(caller_model, k);
            f.detail = if never { format!("the callee never recorded it{group}") } else { group.clone() };
            findings.push(f);
        }
    }
    // Implicit inputs.
    let nargs = probe.args.iter().map(|a| a.elements.len()).sum::<usize>();
    let b = block(lanes);
    for (k, name) in IMPLICIT.iter().enumerate() {
        let expect = |t: u32| -> u64 {
            let ids = [t % b[0], t / b[0] % b[1], t / (b[0] * b[1])];
            u64::from(match k / 3 {
                0 => ids[k % 3],
                1 => [g, 0, 0][k % 3],
                _ => b[k % 3],
            })
        };
        let bad: Vec<u32> = (0..lanes).filter(|&t| record(nargs + k, t) != expect(t)).collect();
        if let Some(&t) = bad.first() {
            let mut f = Finding::new(Kind::Implicit, format!("implicit input {name}"));
            f.expected = Some(expect(t));
            let got = record(nargs + k, t);
            f.got = (got != unwritten).then_some(got);
            f.lanes = bad.len() as u32;
            f.detail = format!("lane {t}{group}");
            findings.push(f);
        }
    }
    // The result, from what the callee saw.
    if let Some(rt) = &probe.sig.ret {
        let ps = pieces(rt, 0, "");
        let lanes_values: Vec<(Vec<u64>, Vec<u64>)> = (0..lanes)
            .map(|t| {
                let h = (0..probe.record_count()).fold(0u64, |h, e| h ^ (record(e, t) & 0xffff_ffff));
                let want = probe.ret.iter().map(|e| (e.value ^ (h & Probe::hash_mask(&e.ty))) & mask(element_bits(&e.ty))).collect();
                let got = probe.ret.iter().enumerate().map(|(j, e)| output(j, t) & mask(element_bits(&e.ty))).collect();
                (want, got)
            })
            .collect();
        for (k, piece) in ps.iter().enumerate() {
            let Some((bad, t, want, got)) = first_difference(piece, &lanes_values) else { continue };
            let mut f = Finding::new(Kind::Result, format!("result ({rt}) piece '{}'", piece.path));
            f.expected = Some(u64::from(want));
            f.got = (output(piece.parts[0].0, t) != unwritten).then_some(u64::from(got));
            f.lanes = bad.len() as u32;
            if let Some(back) = views.back {
                let loc = |m: Option<&Assignment>| m.filter(|m| m.sret.is_none()).and_then(|m| m.ret.get(k)).map(|p| p.loc);
                f.callee_put = locate(back, loc(callee_model), want, piece.bits, target);
                f.caller_looked = locate(back, loc(caller_model), got, piece.bits, target);
            }
            let model = |m: Option<&Assignment>| -> Option<String> {
                let m = m?;
                match m.sret {
                    Some(loc) => Some(format!("through memory: the hidden result pointer in {loc}")),
                    None => m.ret.get(k).map(|p| p.loc.to_string()),
                }
            };
            f.callee_convention = model(callee_model);
            f.caller_convention = model(caller_model);
            f.detail = group.clone();
            findings.push(f);
        }
    }
    // Values the caller kept across the call.
    let nret = probe.ret.len();
    for (i, k) in probe.keep.iter().enumerate() {
        let expect = |t: u32| -> u64 {
            let base = if i < KEEP_VECTOR { t.wrapping_add(U) } else { U };
            u64::from(base.wrapping_mul(*k))
        };
        let bad: Vec<u32> = (0..lanes).filter(|&t| output(nret + i, t) != expect(t)).collect();
        if let Some(&t) = bad.first() {
            let kind = if i < KEEP_VECTOR { "lane-varying" } else { "uniform" };
            let mut f = Finding::new(Kind::CallerValue, format!("the caller's {kind} value {i}, live across the call"));
            f.expected = Some(expect(t));
            let got = output(nret + i, t);
            f.got = (got != unwritten).then_some(got);
            f.lanes = bad.len() as u32;
            if let (Some(call), Some(back)) = (views.call, views.back) {
                // Registers that held it at the call and lost it by the return.
                let after = search(back, expect(0) as u32, 32, target);
                let lost = search(call, expect(0) as u32, 32, target).into_iter().filter(|r| is_register(r) && !after.contains(r)).collect();
                f.registers = lost;
            }
            f.detail = group.clone();
            findings.push(f);
        }
    }
    let (Some(call), Some(entry)) = (views.call, views.entry) else {
        if findings.iter().all(|f| !matches!(f.kind, Kind::Crash | Kind::Resources)) {
            findings.push(Finding::new(Kind::Crash, format!("the call was not reached{group}")));
        }
        return;
    };
    // The return address.
    let ra = u64::from(entry.sgpr[30]) | u64::from(entry.sgpr[31]) << 32;
    if ra != call.pc + 4 {
        let mut f = Finding::new(Kind::ReturnAddress, "s[30:31] at the callee's entry".into());
        f.expected = Some(call.pc + 4);
        f.got = Some(ra);
        findings.push(f);
    }
    // The scratch descriptor on buffer-scratch targets.
    if !target.gpu.has_architected_flat_scratch() && !entry.scratch.is_empty() {
        let base = u64::from(entry.sgpr[0]) | u64::from(entry.sgpr[1] & 0xffff) << 32;
        let words_ok = views.kernel.is_none_or(|k| k.sgpr[2] == entry.sgpr[2] && k.sgpr[3] == entry.sgpr[3]);
        if base != entry.scratch_base || !words_ok {
            let mut f = Finding::new(Kind::ScratchDescriptor, "s[0:3] at the callee's entry (the scratch V#)".into());
            f.expected = Some(entry.scratch_base);
            f.got = Some(base);
            f.registers = (0..4).filter(|&r| views.kernel.is_none_or(|k| r < 2 || k.sgpr[r] != entry.sgpr[r])).map(|r| format!("s{r}")).collect();
            f.detail = format!("s[0:3] = {:#010x} {:#010x} {:#010x} {:#010x}{group}", entry.sgpr[0], entry.sgpr[1], entry.sgpr[2], entry.sgpr[3]);
            findings.push(f);
        }
    }
    // Registers the callee's convention preserves.
    if let Some(back) = views.back {
        let conv = config.conv;
        let mut changed = Vec::new();
        for s in 0..entry.sgpr.len().min(106) as u16 {
            if abi::is_preserved(conv, RegKind::Sgpr, s) && back.sgpr[s as usize] != entry.sgpr[s as usize] {
                changed.push(format!("s{s}"));
            }
        }
        let vgprs = (entry.vgpr.len() / entry.lanes as usize).min(256) as u16;
        for v in 0..vgprs {
            if abi::is_preserved(conv, RegKind::Vgpr, v) && (0..entry.lanes).any(|l| entry.exec >> l & 1 == 1 && back.v(v, l) != entry.v(v, l)) {
                changed.push(format!("v{v}"));
            }
        }
        if back.exec != entry.exec {
            changed.push("exec".into());
        }
        if !changed.is_empty() {
            let mut f = Finding::new(Kind::Preserved, format!("registers the {} convention preserves", conv_name(conv)));
            f.detail = format!("changed by the call{group}");
            f.registers = changed;
            findings.push(f);
        }
    }
}

pub fn conv_name(conv: Convention) -> &'static str {
    match conv {
        Convention::AmdgpuCg => "amdgpu_cg",
        Convention::Llvm => "llvm",
    }
}

fn is_register(name: &str) -> bool {
    (name.starts_with('s') || name.starts_with('v')) && name[1..].chars().all(|c| c.is_ascii_digit())
}

fn locations(locs: &[Location]) -> String {
    locs.iter().map(|l| l.to_string()).collect::<Vec<_>>().join(", ")
}

/// The stack pointer of a snapshot in bytes per lane.
fn sp_lane(snap: &Snapshot, target: isa::Target) -> u64 {
    if target.gpu.has_architected_flat_scratch() {
        u64::from(snap.sgpr[32])
    } else {
        u64::from(snap.sgpr[32]) / u64::from(snap.lanes)
    }
}

/// What lane 0 holds at `loc` in a snapshot.
fn read(snap: &Snapshot, loc: Location, target: isa::Target) -> Option<u32> {
    match loc {
        Location::Sgpr(n) => snap.sgpr.get(n as usize).copied(),
        Location::Vgpr(n) => ((n as usize) < snap.vgpr.len() / snap.lanes as usize).then(|| snap.v(n, 0)),
        Location::Stack { offset, size } => snap.private(0, sp_lane(snap, target) + u64::from(offset), size.min(4) as usize).map(|v| v as u32),
    }
}

/// Where `value` is: the convention's place for it when it holds the value
/// (there the value is by design, wherever else it is by chance), else every
/// place that holds it.
fn locate(snap: &Snapshot, convention: Option<Location>, value: u32, bits: u32, target: isa::Target) -> Vec<String> {
    let m = mask(bits.min(32)) as u32;
    match convention {
        Some(loc) if read(snap, loc, target).is_some_and(|x| x & m == value & m) => vec![loc.to_string()],
        _ => search(snap, value, bits, target),
    }
}

/// Where `value` (its low `bits`) is in a snapshot: SGPRs, lane 0's VGPRs and
/// lane 0's private memory, named relative to the SP (`[sp+8]`, `[sp-16]`).
/// Values of 8 bits or fewer are looked for in registers only (they would be
/// found everywhere in memory); at most five places are named.
pub fn search(snap: &Snapshot, value: u32, bits: u32, target: isa::Target) -> Vec<String> {
    if bits <= 1 {
        return vec!["(a 1-bit value: not located)".into()];
    }
    let m = mask(bits.min(32)) as u32;
    let v = value & m;
    let mut out = Vec::new();
    for (s, x) in snap.sgpr.iter().take(106).enumerate() {
        if x & m == v {
            out.push(format!("s{s}"));
        }
    }
    let vgprs = snap.vgpr.len() / snap.lanes as usize;
    for r in 0..vgprs.min(256) {
        if snap.v(r as u16, 0) & m == v {
            out.push(format!("v{r}"));
        }
    }
    if bits >= 16 && !snap.scratch.is_empty() {
        let sp = sp_lane(snap, target);
        let lane_bytes = snap.scratch.len() as u64 / u64::from(snap.lanes);
        let step = if bits == 16 { 2 } else { 4 };
        let width = if bits == 16 { 2 } else { 4 };
        let mut off = 0;
        while off + width <= lane_bytes {
            if let Some(x) = snap.private(0, off, width as usize) {
                if x as u32 & m == v {
                    out.push(if off >= sp { format!("[sp+{}]", off - sp) } else { format!("[sp-{}]", sp - off) });
                }
            }
            off += step;
        }
    }
    if out.len() > 5 {
        let more = out.len() - 5;
        out.truncate(5);
        out.push(format!("{more} more"));
    }
    if out.is_empty() {
        out.push("nowhere".into());
    }
    out
}
