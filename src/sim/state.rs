//! The state of one wave: scalar and vector register files, PC, SCC, the
//! outstanding memory operations (see [`super::waitcnt`]) and the hazard history.

use amdgpu_isa::{Generation, Target};

use super::hazards::History;
use super::waitcnt::Pending;

/// Register-index space used for tracking (the isa crate's numbering):
/// 0..128 scalar, 256..512 VGPRs, 512..768 AGPRs.
pub const REG_SPACE: usize = 768;

/// Why a wave is not running.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaveStatus {
    Running,
    AtBarrier,
    Done,
}

/// One wave.
#[derive(Clone, Debug)]
pub struct Wave {
    pub id: u32,
    /// Index of the wave within its work-group.
    pub index: u32,
    pub target: Target,
    pub lanes: u32,
    pub pc: u64,
    pub sgpr: [u32; 128],
    pub scc: bool,
    /// VGPRs, `vgpr[reg * lanes + lane]`.
    pub vgpr: Vec<u32>,
    /// AGPRs, same layout.
    pub agpr: Vec<u32>,
    pub status: WaveStatus,
    /// Base of this wave's private (scratch) memory.
    pub scratch_base: u64,
    /// Bytes of private memory per lane.
    pub scratch_lane_size: u64,
    /// Outstanding memory operations.
    pub pending: Pending,
    /// Registers written by the kernel or the initial state (for `check_uninit`).
    pub written: Vec<bool>,
    pub history: History,
    pub insts: u64,
    /// VGPRs, AGPRs and SGPRs the descriptor allocates (indices at or above are errors).
    pub vgpr_limit: u16,
    pub agpr_limit: u16,
    pub sgpr_limit: u16,
}

impl Wave {
    pub fn new(id: u32, index: u32, target: Target) -> Wave {
        let lanes = target.wave.lanes();
        Wave {
            id,
            index,
            target,
            lanes,
            pc: 0,
            sgpr: [0; 128],
            scc: false,
            vgpr: vec![0; 256 * lanes as usize],
            agpr: vec![0; 256 * lanes as usize],
            status: WaveStatus::Running,
            scratch_base: 0,
            scratch_lane_size: 0,
            pending: Pending::default(),
            written: vec![false; REG_SPACE],
            history: History::default(),
            insts: 0,
            vgpr_limit: 256,
            agpr_limit: 256,
            sgpr_limit: 106,
        }
    }

    pub fn gen(&self) -> Generation {
        self.target.gpu.generation()
    }

    pub fn wave64(&self) -> bool {
        self.lanes == 64
    }

    /// Lane mask of all lanes.
    pub fn all_lanes(&self) -> u64 {
        if self.lanes == 64 {
            u64::MAX
        } else {
            0xFFFF_FFFF
        }
    }

    pub fn exec(&self) -> u64 {
        if self.wave64() {
            self.sgpr[126] as u64 | (self.sgpr[127] as u64) << 32
        } else {
            self.sgpr[126] as u64
        }
    }

    pub fn set_exec(&mut self, v: u64) {
        self.sgpr[126] = v as u32;
        if self.wave64() {
            self.sgpr[127] = (v >> 32) as u32;
        }
        self.written[126] = true;
        self.written[127] = true;
    }

    pub fn vcc(&self) -> u64 {
        if self.wave64() {
            self.sgpr[106] as u64 | (self.sgpr[107] as u64) << 32
        } else {
            self.sgpr[106] as u64
        }
    }

    pub fn set_vcc(&mut self, v: u64) {
        self.sgpr[106] = v as u32;
        self.written[106] = true;
        if self.wave64() {
            self.sgpr[107] = (v >> 32) as u32;
            self.written[107] = true;
        }
    }

    /// M0's register index.
    pub fn m0_index(&self) -> usize {
        match self.gen() {
            Generation::Gfx9 => 124,
            Generation::Gfx11 => 125,
        }
    }

    /// Reads scalar register `i` (gfx11 NULL reads 0).
    #[inline]
    pub fn sget(&self, i: usize) -> u32 {
        if i == 124 && self.gen() == Generation::Gfx11 {
            0
        } else {
            self.sgpr[i & 127]
        }
    }

    /// Writes scalar register `i` (gfx11 NULL discards).
    #[inline]
    pub fn sset(&mut self, i: usize, v: u32) {
        if i == 124 && self.gen() == Generation::Gfx11 {
            return;
        }
        self.sgpr[i & 127] = v;
        self.written[i & 127] = true;
    }

    #[inline]
    pub fn v(&self, reg: usize, lane: u32) -> u32 {
        self.vgpr[(reg & 255) * self.lanes as usize + lane as usize]
    }

    #[inline]
    pub fn set_v(&mut self, reg: usize, lane: u32, v: u32) {
        let l = self.lanes as usize;
        self.vgpr[(reg & 255) * l + lane as usize] = v;
    }

    #[inline]
    pub fn a(&self, reg: usize, lane: u32) -> u32 {
        self.agpr[(reg & 255) * self.lanes as usize + lane as usize]
    }

    #[inline]
    pub fn set_a(&mut self, reg: usize, lane: u32, v: u32) {
        let l = self.lanes as usize;
        self.agpr[(reg & 255) * l + lane as usize] = v;
    }
}
