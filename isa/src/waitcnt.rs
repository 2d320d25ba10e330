//! `s_waitcnt` immediate layouts per generation.
//!
//! ```text
//! gfx9:  vmcnt[3:0] | expcnt[6:4] | lgkmcnt[11:8] | vmcnt_hi[15:14]   (vmcnt 6 bits, lgkmcnt 4)
//! gfx11: expcnt[2:0] | lgkmcnt[9:4] | vmcnt[15:10]                      (lgkmcnt 6 bits)
//! ```
//!
//! gfx11 counts stores separately (vscnt), waited on with `s_waitcnt_vscnt null, N`
//! (SOPK), which is not part of this immediate.

use crate::target::Generation;

/// Counter thresholds of one `s_waitcnt`: `None` = do not wait on that counter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Waitcnt {
    /// Wait until at most this many vector memory operations are outstanding.
    pub vm: Option<u8>,
    /// ... export/GDS operations.
    pub exp: Option<u8>,
    /// ... LDS, SMEM, message (and FLAT) operations.
    pub lgkm: Option<u8>,
}

/// Largest encodable value of each counter: (vm, exp, lgkm).
pub fn max(gen: Generation) -> (u8, u8, u8) {
    match gen {
        Generation::Gfx9 => (63, 7, 15),
        Generation::Gfx11 => (63, 7, 63),
    }
}

impl Waitcnt {
    /// Wait for everything.
    pub const ALL_ZERO: Waitcnt = Waitcnt { vm: Some(0), exp: Some(0), lgkm: Some(0) };

    /// The SOPP immediate; values above a counter's maximum are clamped to "no wait".
    pub fn encode(self, gen: Generation) -> u16 {
        let (mv, me, ml) = max(gen);
        let vm = self.vm.unwrap_or(mv).min(mv) as u16;
        let exp = self.exp.unwrap_or(me).min(me) as u16;
        let lgkm = self.lgkm.unwrap_or(ml).min(ml) as u16;
        match gen {
            Generation::Gfx9 => (vm & 0xf) | (exp << 4) | (lgkm << 8) | ((vm >> 4) << 14),
            Generation::Gfx11 => exp | (lgkm << 4) | (vm << 10),
        }
    }

    /// Reads an immediate; `None` if it sets bits outside the counter fields.
    pub fn decode(imm: u16, gen: Generation) -> Option<Waitcnt> {
        let (mv, me, ml) = max(gen);
        let (vm, exp, lgkm) = match gen {
            Generation::Gfx9 => {
                if imm & 0x3080 != 0 {
                    return None;
                }
                ((imm & 0xf) | ((imm >> 14) << 4), (imm >> 4) & 7, (imm >> 8) & 0xf)
            }
            Generation::Gfx11 => {
                if imm & 0x8 != 0 {
                    return None;
                }
                (imm >> 10, imm & 7, (imm >> 4) & 0x3f)
            }
        };
        let opt = |v: u16, m: u8| (v as u8 != m).then_some(v as u8);
        Some(Waitcnt { vm: opt(vm, mv), exp: opt(exp, me), lgkm: opt(lgkm, ml) })
    }

    /// LLVM's operand text: the counters that are waited on, or all three at their
    /// maximum when none is.
    pub fn print(imm: u16, gen: Generation) -> String {
        let Some(w) = Waitcnt::decode(imm, gen) else {
            return imm.to_string();
        };
        let (mv, me, ml) = max(gen);
        let mut parts = Vec::new();
        let all = w.vm.is_none() && w.exp.is_none() && w.lgkm.is_none();
        if let Some(v) = w.vm.or(all.then_some(mv)) {
            parts.push(format!("vmcnt({v})"));
        }
        if let Some(v) = w.exp.or(all.then_some(me)) {
            parts.push(format!("expcnt({v})"));
        }
        if let Some(v) = w.lgkm.or(all.then_some(ml)) {
            parts.push(format!("lgkmcnt({v})"));
        }
        parts.join(" ")
    }
}
