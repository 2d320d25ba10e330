//! Asynchronous memory results and `s_waitcnt`.
//!
//! A memory instruction's results are written to the registers when it issues, but
//! the registers are *poisoned* until an `s_waitcnt` (or `s_waitcnt_vscnt` etc.)
//! guarantees that the operation has completed. Reading (or overwriting, with a
//! non-load) a poisoned register is an error naming the instruction, the load and
//! the counter that should have been waited on.
//!
//! Completion rule (the strictest the hardware allows): when an `s_waitcnt` lets
//! counter C drop to N, an operation that increments C is guaranteed complete iff
//! it returns in order on C and at least N younger operations increment C, or it
//! may return out of order on C (SMEM, and FLAT on lgkmcnt) and N is 0. An operation
//! that increments several counters (FLAT on gfx9: vmcnt and lgkmcnt) is complete
//! when any of them guarantees it.

use amdgpu_isa::{Counters, Reg};

use super::state::REG_SPACE;

/// One outstanding memory operation.
#[derive(Clone, Debug)]
pub struct Op {
    pub seq: u64,
    pub counters: Counters,
    /// Returns out of order on lgkmcnt (SMEM, FLAT).
    pub lgkm_ooo: bool,
    pub regs: Vec<(u16, u8)>,
    pub pc: u64,
    pub text: String,
}

/// The outstanding operations of a wave.
#[derive(Clone, Debug)]
pub struct Pending {
    pub ops: Vec<Op>,
    /// For each register, the operation that will write it (0 = none).
    reg_seq: Vec<u64>,
    next: u64,
}

impl Default for Pending {
    fn default() -> Pending {
        Pending { ops: Vec::new(), reg_seq: vec![0; REG_SPACE], next: 1 }
    }
}

/// Register-space index of a register tuple's first register.
pub fn reg_index(r: Reg) -> usize {
    r.base.0 as usize
}

impl Pending {
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// The operation that will still write any register of `[start, start+n)`.
    pub fn writer(&self, start: usize, n: usize) -> Option<&Op> {
        for r in start..(start + n).min(REG_SPACE) {
            let s = self.reg_seq[r];
            if s != 0 {
                return self.ops.iter().find(|o| o.seq == s);
            }
        }
        None
    }

    /// Records an issued memory operation whose results go to `regs`.
    /// `Err` if a register is already pending from an operation it may overtake.
    pub fn issue(&mut self, counters: Counters, lgkm_ooo: bool, regs: &[(u16, u8)], pc: u64, text: &str) -> Result<(), String> {
        if counters.is_empty() {
            return Ok(());
        }
        let seq = self.next;
        self.next += 1;
        for &(s, n) in regs {
            if let Some(prev) = self.writer(s as usize, n as usize) {
                let in_order = prev.counters == Counters::VM && counters == Counters::VM;
                if !in_order {
                    return Err(format!(
                        "writes a register that the earlier `{}` (at {:#x}) has not written yet: missing s_waitcnt",
                        prev.text, prev.pc
                    ));
                }
            }
        }
        for &(s, n) in regs {
            for r in s as usize..(s as usize + n as usize).min(REG_SPACE) {
                self.reg_seq[r] = seq;
            }
        }
        self.ops.push(Op { seq, counters, lgkm_ooo, regs: regs.to_vec(), pc, text: text.to_string() });
        Ok(())
    }

    /// Applies a wait: each `Some(n)` lets that counter drop to `n`.
    pub fn wait(&mut self, vm: Option<u8>, lgkm: Option<u8>, vs: Option<u8>) {
        if self.ops.is_empty() {
            return;
        }
        let n = self.ops.len();
        let mut done = vec![false; n];
        for (c, limit) in [(Counters::VM, vm), (Counters::LGKM, lgkm), (Counters::VS, vs)] {
            let Some(limit) = limit else { continue };
            let mut younger = 0usize;
            for i in (0..n).rev() {
                let op = &self.ops[i];
                if !op.counters.contains(c) {
                    continue;
                }
                let ooo = c == Counters::LGKM && op.lgkm_ooo;
                let complete = if ooo { limit == 0 } else { younger >= limit as usize };
                if complete {
                    done[i] = true;
                }
                younger += 1;
            }
        }
        let mut keep = Vec::with_capacity(n);
        for (i, op) in std::mem::take(&mut self.ops).into_iter().enumerate() {
            if done[i] {
                for &(s, k) in &op.regs {
                    for r in s as usize..(s as usize + k as usize).min(REG_SPACE) {
                        if self.reg_seq[r] == op.seq {
                            self.reg_seq[r] = 0;
                        }
                    }
                }
            } else {
                keep.push(op);
            }
        }
        self.ops = keep;
    }

    /// Everything completes (end of program).
    pub fn drain(&mut self) {
        self.wait(Some(0), Some(0), Some(0));
    }

    /// Counter values (vm, lgkm, vs) as the hardware would hold them now.
    pub fn counts(&self) -> (usize, usize, usize) {
        let c = |k: Counters| self.ops.iter().filter(|o| o.counters.contains(k)).count();
        (c(Counters::VM), c(Counters::LGKM), c(Counters::VS))
    }
}
