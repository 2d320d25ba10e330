//! Reading llc-22 `-stop-after=finalize-isel` MIR: which physical register or
//! fixed stack object each marked value comes from.
#![allow(dead_code, clippy::type_complexity)]

use std::collections::HashMap;

/// Where a traced value comes from.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Source {
    /// A physical register read on entry (`$vgpr3`, `$sgpr16`).
    Phys(String),
    /// A load from fixed stack object `id`, plus a byte offset inside it.
    Fixed { id: u32, byte: u32 },
    /// The result of an inline-asm `; DEF tag` marker.
    Def(String),
    /// An immediate (`S_MOV_B32 11`).
    Imm(i64),
}

/// One function of a MIR file.
#[derive(Debug, Default)]
pub struct MirFunction {
    pub name: String,
    /// fixed stack id -> (offset, size)
    pub fixed: HashMap<u32, (i64, u32)>,
    /// vreg -> defining line
    defs: HashMap<u32, String>,
    /// `; USE tag` markers -> (vreg, subreg lanes)
    pub uses: Vec<(String, u32)>,
    /// `$physreg = COPY %v` lines in body order: (phys, vreg, lanes)
    pub phys_copies: Vec<(String, u32, Option<(u32, u32)>)>,
    /// Stores into the outgoing argument area: (value vreg, bytes, offset).
    pub stores: Vec<(u32, u32, u32)>,
    /// Scratch stores without a stack memory operand: (value, bytes, address vreg, offset).
    pending_saddr: Vec<(u32, u32, u32, u32)>,
}

fn parse_vreg(s: &str) -> Option<(u32, Option<(u32, u32)>)> {
    let s = s.trim().trim_start_matches("killed ").trim_start_matches("undef ").trim();
    let s = s.strip_prefix('%')?;
    let (num, sub) = match s.find('.') {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let num: u32 = num.split(':').next()?.parse().ok()?;
    Some((num, sub.and_then(lanes_of)))
}

/// Lanes (first 32-bit lane, count) named by a subregister index like `sub1`,
/// `sub0_sub1`, `sub2_lo16`; `None` for `lo16`/`hi16` (same lane).
fn lanes_of(sub: &str) -> Option<(u32, u32)> {
    let nums: Vec<u32> = sub.split('_').filter_map(|p| p.strip_prefix("sub")).filter_map(|n| n.parse().ok()).collect();
    let first = *nums.iter().min()?;
    let last = *nums.iter().max()?;
    Some((first, last - first + 1))
}

fn vregs_in(text: &str) -> Vec<(u32, Option<(u32, u32)>)> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 1 < bytes.len() && bytes[i + 1].is_ascii_digit() {
            let mut j = i + 1;
            while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'.' || bytes[j] == b'_') {
                j += 1;
            }
            if let Some(v) = parse_vreg(&text[i..j]) {
                out.push(v);
            }
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

/// Splits a MIR file into functions.
pub fn parse(mir: &str) -> Vec<MirFunction> {
    let mut out: Vec<MirFunction> = Vec::new();
    let finish = |f: &mut MirFunction| {
        for (v, bytes, addr, imm) in std::mem::take(&mut f.pending_saddr) {
            let srcs = f.trace(addr, None);
            if srcs.contains(&Source::Phys("sgpr32".into())) {
                let add: i64 = srcs.iter().map(|s| if let Source::Imm(n) = s { *n } else { 0 }).sum();
                f.stores.push((v, bytes, (add + i64::from(imm)) as u32));
            }
        }
    };
    let mut in_fixed = false;
    for line in mir.lines() {
        if let Some(name) = line.strip_prefix("name:") {
            if let Some(f) = out.last_mut() {
                finish(f);
            }
            out.push(MirFunction { name: name.trim().trim_matches('\'').to_string(), ..Default::default() });
            in_fixed = false;
            continue;
        }
        let Some(f) = out.last_mut() else { continue };
        let t = line.trim();
        if t.starts_with("fixedStack:") {
            in_fixed = true;
            continue;
        }
        if t.starts_with("stack:") || t.starts_with("body:") {
            in_fixed = false;
        }
        if in_fixed {
            if let Some(rest) = t.strip_prefix("- { id: ") {
                let id: u32 = rest.split(',').next().unwrap().trim().parse().unwrap();
                let field = |name: &str| -> Option<i64> {
                    let i = rest.find(&format!(" {name}: "))?;
                    rest[i + name.len() + 3..].split(',').next()?.trim().parse().ok()
                };
                f.fixed.insert(id, (field("offset").unwrap_or(0), field("size").unwrap_or(0) as u32));
            }
            continue;
        }
        if t.starts_with("INLINEASM") {
            if let Some(start) = t.find("; USE ") {
                let tag = t[start + 6..].split_whitespace().next().unwrap().to_string();
                let (v, _) = *vregs_in(t).last().expect("USE marker without operand");
                f.uses.push((tag, v));
            } else if let Some(start) = t.find("; DEF ") {
                let tag = t[start + 6..].split_whitespace().next().unwrap().to_string();
                let i = t.find("def %").expect("DEF marker without def");
                let (v, _) = parse_vreg(t[i + 4..].split([',', ' ']).next().unwrap()).unwrap();
                f.defs.insert(v, format!("DEF {tag}"));
            }
            continue;
        }
        if t.contains(":: (store (s") && !t.contains(" = ") {
            let j = t.find("(store (s").unwrap();
            let bits: u32 = t[j + 9..].chars().take_while(|c| c.is_ascii_digit()).collect::<String>().parse().unwrap();
            let vs = vregs_in(&t[..t.find("::").unwrap()]);
            if let Some(i) = t.find(" into stack") {
                let rest = &t[i + 11..];
                let offset = rest
                    .strip_prefix(" + ")
                    .map_or(0, |r| r.chars().take_while(|c| c.is_ascii_digit()).collect::<String>().parse().unwrap());
                if let Some((v, _)) = vs.first() {
                    f.stores.push((*v, bits.div_ceil(8), offset));
                }
            } else if t.split_whitespace().next().is_some_and(|op| op.ends_with("_SADDR")) && vs.len() >= 2 {
                // Merged stores lose the memory operand's offset: SP + immediate
                // address register, plus the instruction's offset operand.
                let imm: u32 = t.split(',').nth(2).and_then(|x| x.trim().parse().ok()).unwrap_or(0);
                f.pending_saddr.push((vs[0].0, bits.div_ceil(8), vs[1].0, imm));
            }
            continue;
        }
        if let Some(eq) = t.find(" = ") {
            let lhs = &t[..eq];
            let rhs = &t[eq + 3..];
            if let Some((v, _)) = parse_vreg(lhs) {
                f.defs.insert(v, rhs.to_string());
            } else if lhs.starts_with('$') && rhs.starts_with("COPY %") {
                if let Some((v, lanes)) = parse_vreg(&rhs[5..]) {
                    f.phys_copies.push((lhs.trim_start_matches('$').to_string(), v, lanes));
                }
            }
        }
    }
    if let Some(f) = out.last_mut() {
        finish(f);
    }
    out
}

impl MirFunction {
    /// All sources of vreg `v` (restricted to `lanes`).
    pub fn trace(&self, v: u32, lanes: Option<(u32, u32)>) -> Vec<Source> {
        let mut out = Vec::new();
        self.trace_into(v, lanes, &mut out, 0);
        out.sort();
        out.dedup();
        out
    }

    fn trace_into(&self, v: u32, lanes: Option<(u32, u32)>, out: &mut Vec<Source>, depth: usize) {
        if depth > 64 {
            return;
        }
        let Some(rhs) = self.defs.get(&v) else { return };
        if let Some(tag) = rhs.strip_prefix("DEF ") {
            out.push(Source::Def(tag.to_string()));
            return;
        }
        if let Some(i) = rhs.find("%fixed-stack.") {
            let id: u32 = rhs[i + 13..].chars().take_while(|c| c.is_ascii_digit()).collect::<String>().parse().unwrap();
            out.push(Source::Fixed { id, byte: lanes.map_or(0, |l| 4 * l.0) });
            return;
        }
        if let Some(src) = rhs.strip_prefix("COPY ") {
            let src = src.split(',').next().unwrap().trim().trim_start_matches("killed ");
            if let Some(phys) = src.strip_prefix('$') {
                let regs: Vec<&str> = phys.split('_').collect();
                match lanes {
                    Some((s, c)) if regs.len() > 1 => {
                        for r in regs.iter().skip(s as usize).take(c as usize) {
                            out.push(Source::Phys(r.to_string()));
                        }
                    }
                    _ => out.push(Source::Phys(phys.to_string())),
                }
                return;
            }
            if let Some((m, sub)) = parse_vreg(src) {
                self.trace_into(m, compose(sub, lanes), out, depth + 1);
                return;
            }
        }
        if let Some(ops) = rhs.strip_prefix("REG_SEQUENCE ") {
            let parts: Vec<&str> = ops.split(',').map(str::trim).collect();
            for pair in parts.chunks(2) {
                if pair.len() < 2 {
                    continue;
                }
                let Some((m, msub)) = parse_vreg(pair[0]) else { continue };
                let Some(sub) = pair[1].strip_prefix("%subreg.") else { continue };
                // lo16/hi16 halves live in lane 0 of the 32-bit tuple element.
                let range = lanes_of(sub).unwrap_or((0, 1));
                match lanes {
                    None => self.trace_into(m, msub, out, depth + 1),
                    Some((s, c)) => {
                        let lo = s.max(range.0);
                        let hi = (s + c).min(range.0 + range.1);
                        if lo < hi {
                            self.trace_into(m, compose(msub, Some((lo - range.0, hi - lo))), out, depth + 1);
                        }
                    }
                }
            }
            return;
        }
        if let Some(ops) = rhs.strip_prefix("V_PK_MOV_B32 ") {
            // Result lane k comes from source k, its lane chosen by that source's
            // OP_SEL_0 modifier bit (4).
            let parts: Vec<&str> = ops.split(',').map(str::trim).collect();
            let (lo, hi) = lanes.map_or((0, 2), |(s, c)| (s, s + c));
            for k in lo..hi.min(2) {
                let mods: u32 = parts[2 * k as usize].parse().unwrap_or(0);
                if let Some((m, sub)) = parse_vreg(parts[2 * k as usize + 1]) {
                    let lane = u32::from(mods & 4 != 0);
                    self.trace_into(m, compose(sub, Some((lane, 1))), out, depth + 1);
                }
            }
            return;
        }
        let vs = vregs_in(rhs);
        if vs.is_empty() {
            let mut words = rhs.split_whitespace();
            if let (Some(op), Some(imm)) = (words.next(), words.next()) {
                if op.starts_with("S_MOV_B32") || op.starts_with("V_MOV_B32") {
                    if let Ok(n) = imm.trim_end_matches(',').parse::<i64>() {
                        out.push(Source::Imm(n));
                    }
                }
            }
            return;
        }
        for (m, sub) in vs {
            self.trace_into(m, sub, out, depth + 1);
        }
    }
}

/// Lanes of `outer` selected inside a value whose own selection is `inner`.
fn compose(inner: Option<(u32, u32)>, outer: Option<(u32, u32)>) -> Option<(u32, u32)> {
    match (inner, outer) {
        (None, o) => o,
        (Some(i), None) => Some(i),
        (Some(i), Some(o)) => Some((i.0 + o.0, o.1.min(i.1))),
    }
}
