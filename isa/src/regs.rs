//! Register model. Registers are numbered as the hardware encodes a 9-bit VALU
//! source operand (the ACO convention), so encoding a register is mostly a copy:
//! SGPR n = n, VCC_LO = 106, EXEC_LO = 126, VGPR n = 256 + n. AGPRs have no source
//! encoding of their own (they are selected by the opcode or by the acc bit), so
//! they get the private range 512 + n.

use std::fmt;

use crate::target::{Generation, Gpu};

/// A physical register or operand code (see the module docs for the numbering).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PhysReg(pub u16);

/// Number of addressable SGPRs (s0..s105) on every supported GPU.
pub const NUM_SGPRS: u16 = 106;
/// Number of VGPRs (and of AGPRs) addressable by one instruction.
pub const NUM_VGPRS: u16 = 256;

impl PhysReg {
    /// gfx9: FLAT_SCRATCH_LO (the pair is `flat_scratch`). On gfx11 this code is s102.
    pub const FLAT_SCRATCH: PhysReg = PhysReg(102);
    /// gfx9: XNACK_MASK_LO. On gfx11 this code is s104.
    pub const XNACK_MASK: PhysReg = PhysReg(104);
    /// VCC_LO (the pair is `vcc`).
    pub const VCC: PhysReg = PhysReg(106);
    /// VCC_HI.
    pub const VCC_HI: PhysReg = PhysReg(107);
    /// First trap temporary, ttmp0.
    pub const TTMP0: PhysReg = PhysReg(108);
    /// EXEC_LO (the pair is `exec`).
    pub const EXEC: PhysReg = PhysReg(126);
    /// EXEC_HI.
    pub const EXEC_HI: PhysReg = PhysReg(127);
    /// `src_shared_base`: the high half of the LDS aperture's base in the flat address
    /// space (a 64-bit read gives base << 32). Codes 235..=238 are read-only sources.
    pub const SRC_SHARED_BASE: PhysReg = PhysReg(235);
    /// `src_shared_limit`: the LDS aperture's limit.
    pub const SRC_SHARED_LIMIT: PhysReg = PhysReg(236);
    /// `src_private_base`: the high half of the scratch aperture's base.
    pub const SRC_PRIVATE_BASE: PhysReg = PhysReg(237);
    /// `src_private_limit`: the scratch aperture's limit.
    pub const SRC_PRIVATE_LIMIT: PhysReg = PhysReg(238);
    /// SCC read as a VALU/SALU source (`src_scc`).
    pub const SCC: PhysReg = PhysReg(253);
    /// Operand code meaning "a 32-bit literal follows the instruction".
    pub const LITERAL: PhysReg = PhysReg(255);

    /// SGPR `n`.
    pub const fn sgpr(n: u16) -> PhysReg {
        PhysReg(n)
    }
    /// VGPR `n`.
    pub const fn vgpr(n: u16) -> PhysReg {
        PhysReg(256 + n)
    }
    /// AGPR `n` (gfx90a/gfx942).
    pub const fn agpr(n: u16) -> PhysReg {
        PhysReg(512 + n)
    }
    /// M0: code 124 on gfx9, 125 on gfx11.
    pub fn m0(gen: Generation) -> PhysReg {
        match gen {
            Generation::Gfx9 => PhysReg(124),
            Generation::Gfx11 => PhysReg(125),
        }
    }
    /// NULL (reads 0, writes are discarded): code 124, gfx11 only.
    pub fn null(gen: Generation) -> Option<PhysReg> {
        (gen == Generation::Gfx11).then_some(PhysReg(124))
    }
    /// An SGPR or a special scalar register (anything below 128).
    pub fn is_scalar(self) -> bool {
        self.0 < 128
    }
    /// One of the aperture sources `src_shared_base` .. `src_private_limit` (235..=238),
    /// readable as a 32- or 64-bit scalar or VALU source.
    pub fn is_aperture(self) -> bool {
        (235..=238).contains(&self.0)
    }
    /// s0..s105.
    pub fn is_sgpr(self) -> bool {
        self.0 < NUM_SGPRS
    }
    /// v0..v255.
    pub fn is_vgpr(self) -> bool {
        (256..512).contains(&self.0)
    }
    /// a0..a255.
    pub fn is_agpr(self) -> bool {
        (512..768).contains(&self.0)
    }
    /// Index within its register file (VGPR/AGPR n -> n).
    pub fn index(self) -> u16 {
        if self.0 >= 512 {
            self.0 - 512
        } else if self.0 >= 256 {
            self.0 - 256
        } else {
            self.0
        }
    }
}

/// A register tuple: first register and size in dwords.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Reg {
    /// First register.
    pub base: PhysReg,
    /// Number of consecutive dwords.
    pub size: u8,
}

impl Reg {
    /// Tuple of `size` registers starting at `base`.
    pub const fn new(base: PhysReg, size: u8) -> Reg {
        Reg { base, size }
    }
    /// `s[n : n+size-1]`.
    pub const fn s(n: u16, size: u8) -> Reg {
        Reg::new(PhysReg::sgpr(n), size)
    }
    /// `v[n : n+size-1]`.
    pub const fn v(n: u16, size: u8) -> Reg {
        Reg::new(PhysReg::vgpr(n), size)
    }
    /// `a[n : n+size-1]`.
    pub const fn a(n: u16, size: u8) -> Reg {
        Reg::new(PhysReg::agpr(n), size)
    }
    /// VCC as a lane mask: the pair in wave64, VCC_LO in wave32.
    pub const fn vcc(size: u8) -> Reg {
        Reg::new(PhysReg::VCC, size)
    }
    /// EXEC as a lane mask: the pair in wave64, EXEC_LO in wave32.
    pub const fn exec(size: u8) -> Reg {
        Reg::new(PhysReg::EXEC, size)
    }

    /// Checks that the tuple fits its register file and has the alignment `gpu`
    /// requires: SGPR pairs even, larger SGPR tuples 4-aligned; VGPR/AGPR tuples even
    /// on gfx90a/gfx942. Returns a description of the problem.
    pub fn check(self, gpu: Gpu) -> Result<(), String> {
        let idx = self.base.index();
        let n = self.size as u16;
        if n == 0 {
            return Err("empty register tuple".into());
        }
        if self.base.is_vgpr() || self.base.is_agpr() {
            if idx + n > NUM_VGPRS {
                return Err(format!("register tuple {self:?} exceeds the register file"));
            }
            if self.base.is_agpr() && !gpu.has_agprs() {
                return Err(format!("{gpu} has no AGPRs"));
            }
            if n > 1 && gpu.requires_even_vgpr_tuples() && !idx.is_multiple_of(2) {
                return Err(format!("{gpu} requires even-aligned VGPR/AGPR tuples"));
            }
            return Ok(());
        }
        if self.base.0 >= 128 {
            if n == 1 || self.base == PhysReg::SCC || (self.base.is_aperture() && n == 2) {
                return Ok(());
            }
            return Err("constant operands are not register tuples".into());
        }
        if idx + n > 128 {
            return Err("scalar tuple exceeds the scalar register space".into());
        }
        let align = if n >= 4 { 4 } else { n };
        if n > 1 && !idx.is_multiple_of(align) {
            return Err(format!("SGPR tuple of {n} must be {align}-aligned"));
        }
        Ok(())
    }

    /// LLVM's spelling of the tuple on `gpu` (`s[4:5]`, `vcc`, `exec_lo`, `v7`, `a[0:3]`).
    pub fn name(self, gpu: Gpu) -> String {
        let gen = gpu.generation();
        let b = self.base.0;
        let n = self.size as u16;
        let range = |p: &str, i: u16| {
            if n == 1 {
                format!("{p}{i}")
            } else {
                format!("{p}[{i}:{}]", i + n - 1)
            }
        };
        if self.base.is_vgpr() {
            return range("v", b - 256);
        }
        if self.base.is_agpr() {
            return range("a", b - 512);
        }
        let special = |lo: &str, hi: &str, pair: &str, base: u16| -> Option<String> {
            match (b - base, n) {
                (0, 2) => Some(pair.to_string()),
                (0, 1) => Some(lo.to_string()),
                (1, 1) => Some(hi.to_string()),
                _ => None,
            }
        };
        match b {
            106 | 107 => special("vcc_lo", "vcc_hi", "vcc", 106).unwrap_or_else(|| format!("?{b}")),
            126 | 127 => special("exec_lo", "exec_hi", "exec", 126).unwrap_or_else(|| format!("?{b}")),
            102 | 103 if gen == Generation::Gfx9 => {
                special("flat_scratch_lo", "flat_scratch_hi", "flat_scratch", 102).unwrap_or_else(|| format!("?{b}"))
            }
            104 | 105 if gen == Generation::Gfx9 => {
                special("xnack_mask_lo", "xnack_mask_hi", "xnack_mask", 104).unwrap_or_else(|| format!("?{b}"))
            }
            108..=123 => range("ttmp", b - 108),
            124 if gen == Generation::Gfx9 => "m0".into(),
            124 => "null".into(),
            125 if gen == Generation::Gfx11 => "m0".into(),
            235 => "src_shared_base".into(),
            236 => "src_shared_limit".into(),
            237 => "src_private_base".into(),
            238 => "src_private_limit".into(),
            253 => "src_scc".into(),
            _ if b < NUM_SGPRS => range("s", b),
            _ => format!("?{b}"),
        }
    }
}

impl fmt::Display for PhysReg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", Reg::new(*self, 1).name(Gpu::Gfx90a))
    }
}

/// The float values the hardware has inline codes for (codes 240..=247), in code order.
pub const INLINE_FLOATS: [f32; 8] = [0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0];
/// Operand code of the inline constant 1/(2*pi) (gfx8 and later).
pub const INV_2PI: u8 = 248;

/// Inline-constant code for a signed integer in -16..=64.
pub fn inline_int(v: i32) -> Option<u8> {
    match v {
        0..=64 => Some(128 + v as u8),
        -16..=-1 => Some((192 - v) as u8),
        _ => None,
    }
}

/// Inline-constant code whose 32-bit value (as used by a 32-bit operand) is `bits`.
pub fn inline_code_for_bits(bits: u32) -> Option<u8> {
    if let Some(c) = inline_int(bits as i32) {
        return Some(c);
    }
    if let Some(i) = INLINE_FLOATS.iter().position(|f| f.to_bits() == bits) {
        return Some(240 + i as u8);
    }
    (bits == 0x3e22_f983).then_some(INV_2PI)
}

/// Whether `code` is an inline-constant operand code.
pub fn is_inline_code(code: u16) -> bool {
    (128..=208).contains(&code) || (240..=248).contains(&code)
}

/// LLVM's spelling of inline constant `code`; `f64` selects the 64-bit spelling of 1/(2*pi).
pub fn inline_name(code: u8, f64: bool) -> String {
    match code {
        128..=192 => (code as i32 - 128).to_string(),
        193..=208 => (192 - code as i32).to_string(),
        240..=247 => {
            let v = INLINE_FLOATS[(code - 240) as usize];
            format!("{v:.1}")
        }
        248 if f64 => "0.15915494309189532".into(),
        248 => "0.15915494".into(),
        _ => format!("?{code}"),
    }
}

/// gfx90a/gfx942 unified register file: a wave's VGPRs come first and its AGPRs start
/// at `accum_offset` (a multiple of 4). Returns that offset for `vgprs` VGPRs in use.
/// (The kernel descriptor stores `accum_offset / 4 - 1`.)
pub fn accum_offset(vgprs: u32) -> u32 {
    vgprs.max(1).div_ceil(4) * 4
}

/// Registers a wave allocates in the (unified, on gfx90a/gfx942) vector register file
/// for `vgprs` VGPRs and `agprs` AGPRs, before the allocation granule is applied.
pub fn unified_vgpr_count(gpu: Gpu, vgprs: u32, agprs: u32) -> u32 {
    if gpu.has_agprs() && agprs > 0 {
        accum_offset(vgprs) + agprs
    } else {
        vgprs
    }
}
