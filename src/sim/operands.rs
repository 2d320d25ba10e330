//! Reading and writing instruction operands (registers, inline constants,
//! literals) for scalar and vector instructions.

use amdgpu_isa::regs::INLINE_FLOATS;
use amdgpu_isa::{Operand, PhysReg};

use super::state::Wave;

/// 32-bit value of an inline constant code.
pub fn inline32(c: u8) -> u32 {
    match c {
        128..=192 => (c as i32 - 128) as u32,
        193..=208 => (192 - c as i32) as u32,
        240..=247 => INLINE_FLOATS[(c - 240) as usize].to_bits(),
        248 => 0x3e22_f983,
        _ => 0,
    }
}

/// 64-bit value of an inline constant code; floats are f64 when `fp` (or always,
/// for 64-bit operands the hardware uses the f64 form of the float constants).
pub fn inline64(c: u8) -> u64 {
    match c {
        128..=192 => (c as i64 - 128) as u64,
        193..=208 => (192 - c as i64) as u64,
        240..=247 => (INLINE_FLOATS[(c - 240) as usize] as f64).to_bits(),
        248 => 0x3fc4_5f30_6dc9_c882,
        _ => 0,
    }
}

/// The aperture registers (`src_shared_base` = 235 ... `src_private_limit` = 238)
/// as 64-bit values; a 32-bit read gives the high half.
pub fn aperture(code: u16) -> Option<u64> {
    use super::mem::{PRIVATE_APERTURE_HI, SHARED_APERTURE_HI};
    match code {
        235 => Some((SHARED_APERTURE_HI as u64) << 32),
        236 => Some((SHARED_APERTURE_HI as u64) << 32 | 0xffff_ffff),
        237 => Some((PRIVATE_APERTURE_HI as u64) << 32),
        238 => Some((PRIVATE_APERTURE_HI as u64) << 32 | 0xffff_ffff),
        _ => None,
    }
}

/// A scalar source, 32 bits.
#[inline]
pub fn s32(w: &Wave, o: &Operand) -> u32 {
    match *o {
        Operand::Reg(r) => {
            if r.base == PhysReg::SCC {
                w.scc as u32
            } else if let Some(a) = aperture(r.base.0) {
                (a >> 32) as u32
            } else {
                w.sget(r.base.0 as usize)
            }
        }
        Operand::Const(c) => inline32(c),
        Operand::Literal(v) => v,
        Operand::Off => 0,
    }
}

/// A scalar source, 64 bits (a literal is zero-extended).
#[inline]
pub fn s64(w: &Wave, o: &Operand) -> u64 {
    match *o {
        Operand::Reg(r) => {
            if r.base == PhysReg::SCC {
                w.scc as u64
            } else if let Some(a) = aperture(r.base.0) {
                a
            } else {
                let b = r.base.0 as usize;
                w.sget(b) as u64 | (w.sget(b + 1) as u64) << 32
            }
        }
        Operand::Const(c) => inline64(c),
        Operand::Literal(v) => v as u64,
        Operand::Off => 0,
    }
}

/// Writes a scalar destination (1 or 2 registers by the tuple size).
pub fn set_s(w: &mut Wave, o: &Operand, v: u64) {
    if let Operand::Reg(r) = *o {
        let b = r.base.0 as usize;
        w.sset(b, v as u32);
        if r.size >= 2 {
            w.sset(b + 1, (v >> 32) as u32);
        }
    }
}

/// A VALU source for one lane, 32 bits.
#[inline]
pub fn v32(w: &Wave, o: &Operand, lane: u32) -> u32 {
    match *o {
        Operand::Reg(r) => {
            let b = r.base.0;
            if b >= 512 {
                w.a((b - 512) as usize, lane)
            } else if b >= 256 {
                w.v((b - 256) as usize, lane)
            } else if r.base == PhysReg::SCC {
                w.scc as u32
            } else if let Some(a) = aperture(b) {
                (a >> 32) as u32
            } else {
                w.sget(b as usize)
            }
        }
        Operand::Const(c) => inline32(c),
        Operand::Literal(v) => v,
        Operand::Off => 0,
    }
}

/// A VALU source for one lane, 64 bits. A literal is the high half of an f64 when
/// `fp`, else zero-extended.
#[inline]
pub fn v64(w: &Wave, o: &Operand, lane: u32, fp: bool) -> u64 {
    match *o {
        Operand::Reg(r) => {
            let b = r.base.0;
            if b >= 512 {
                let i = (b - 512) as usize;
                w.a(i, lane) as u64 | (w.a(i + 1, lane) as u64) << 32
            } else if b >= 256 {
                let i = (b - 256) as usize;
                w.v(i, lane) as u64 | (w.v(i + 1, lane) as u64) << 32
            } else if r.base == PhysReg::SCC {
                w.scc as u64
            } else if let Some(a) = aperture(b) {
                a
            } else {
                w.sget(b as usize) as u64 | (w.sget(b as usize + 1) as u64) << 32
            }
        }
        Operand::Const(c) => inline64(c),
        Operand::Literal(v) => {
            if fp {
                (v as u64) << 32
            } else {
                v as u64
            }
        }
        Operand::Off => 0,
    }
}

/// Writes a vector destination for one lane (size 1 or 2 by the tuple; VGPR or AGPR).
#[inline]
pub fn set_v(w: &mut Wave, o: &Operand, lane: u32, v: u64) {
    if let Operand::Reg(r) = *o {
        let b = r.base.0;
        if b >= 512 {
            let i = (b - 512) as usize;
            w.set_a(i, lane, v as u32);
            if r.size >= 2 {
                w.set_a(i + 1, lane, (v >> 32) as u32);
            }
        } else if b >= 256 {
            let i = (b - 256) as usize;
            w.set_v(i, lane, v as u32);
            if r.size >= 2 {
                w.set_v(i + 1, lane, (v >> 32) as u32);
            }
        } else {
            w.sset(b as usize, v as u32);
        }
    }
}

/// Writes `n` dwords of a vector tuple starting at dword `first`.
pub fn set_v_dwords(w: &mut Wave, o: &Operand, lane: u32, first: usize, vals: &[u32]) {
    if let Operand::Reg(r) = *o {
        let b = r.base.0;
        for (k, &v) in vals.iter().enumerate() {
            let i = (b as usize & 255) + first + k;
            if b >= 512 {
                w.set_a(i, lane, v);
            } else {
                w.set_v(i, lane, v);
            }
        }
    }
}

/// Reads dword `k` of a vector tuple.
pub fn v_dword(w: &Wave, o: &Operand, lane: u32, k: usize) -> u32 {
    match *o {
        Operand::Reg(r) => {
            let b = r.base.0;
            let i = (b as usize & 255) + k;
            if b >= 512 {
                w.a(i, lane)
            } else if b >= 256 {
                w.v(i, lane)
            } else {
                w.sget(b as usize + k)
            }
        }
        _ => v32(w, o, lane),
    }
}

/// A lane mask operand (an SGPR pair in wave64, one SGPR in wave32).
pub fn mask(w: &Wave, o: &Operand) -> u64 {
    match *o {
        Operand::Reg(r) if r.base.0 < 128 => {
            let b = r.base.0 as usize;
            if w.wave64() {
                w.sget(b) as u64 | (w.sget(b + 1) as u64) << 32
            } else {
                w.sget(b) as u64
            }
        }
        _ => s64(w, o) & w.all_lanes(),
    }
}

/// Writes a lane mask destination.
pub fn set_mask(w: &mut Wave, o: &Operand, v: u64) {
    if let Operand::Reg(r) = *o {
        let b = r.base.0 as usize;
        w.sset(b, v as u32);
        if w.wave64() {
            w.sset(b + 1, (v >> 32) as u32);
        }
    }
}
