//! The machine-instruction value the code generator builds and the encoder,
//! decoder and printer exchange.

use bitflags::bitflags;

use crate::opcodes::{Counters, OpFlags, Opcode};
use crate::regs::{inline_code_for_bits, inline_int, Reg};
use crate::target::{Generation, Gpu};

/// One operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    /// A register tuple (SGPRs, special registers, VGPRs, AGPRs).
    Reg(Reg),
    /// An inline constant, by its hardware code (128..=208 integers 0..64 and -1..-16,
    /// 240..=247 the float constants, 248 1/(2*pi)).
    Const(u8),
    /// A 32-bit literal dword following the instruction.
    Literal(u32),
    /// `off`: an absent optional address operand.
    Off,
}

impl Operand {
    /// Register operand.
    pub fn reg(r: Reg) -> Operand {
        Operand::Reg(r)
    }
    /// SGPR tuple.
    pub fn s(n: u16, size: u8) -> Operand {
        Operand::Reg(Reg::s(n, size))
    }
    /// VGPR tuple.
    pub fn v(n: u16, size: u8) -> Operand {
        Operand::Reg(Reg::v(n, size))
    }
    /// AGPR tuple.
    pub fn a(n: u16, size: u8) -> Operand {
        Operand::Reg(Reg::a(n, size))
    }
    /// Inline integer constant; `None` outside -16..=64.
    pub fn int(v: i32) -> Option<Operand> {
        inline_int(v).map(Operand::Const)
    }
    /// The cheapest encoding of a 32-bit value: an inline constant if there is one,
    /// else a literal.
    pub fn imm32(bits: u32) -> Operand {
        match inline_code_for_bits(bits) {
            Some(c) => Operand::Const(c),
            None => Operand::Literal(bits),
        }
    }
    /// The register tuple, if this is a register.
    pub fn as_reg(self) -> Option<Reg> {
        match self {
            Operand::Reg(r) => Some(r),
            _ => None,
        }
    }
}

/// VALU operand modifiers. Bit `i` of a mask refers to source `i`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Mods {
    /// Negate source (VOP3); for VOP3P this is `neg_lo`.
    pub neg: u8,
    /// Absolute value of source (VOP3 only).
    pub abs: u8,
    /// VOP3P `neg_hi`.
    pub neg_hi: u8,
    /// Clamp the result.
    pub clamp: bool,
    /// Output modifier: 0 none, 1 `mul:2`, 2 `mul:4`, 3 `div:2`.
    pub omod: u8,
    /// VOP3P `op_sel` (bit 3 is the destination's on gfx11 VOP3).
    pub op_sel: u8,
    /// VOP3P `op_sel_hi`; 0b111 is the default and is not printed.
    pub op_sel_hi: u8,
}

impl Default for Mods {
    fn default() -> Mods {
        Mods { neg: 0, abs: 0, neg_hi: 0, clamp: false, omod: 0, op_sel: 0, op_sel_hi: 0b111 }
    }
}

impl Mods {
    /// No modifier is set (op_sel_hi at its default).
    pub fn is_default(&self) -> bool {
        *self == Mods::default()
    }
}

bitflags! {
    /// Cache-policy bits. gfx90a uses GLC/SLC, gfx942 SC0/SC1/NT, gfx11 GLC/SLC/DLC.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub struct Cache: u8 {
        /// gfx90a/gfx11: globally coherent (and "return the old value" for atomics).
        const GLC = 1 << 0;
        /// gfx90a/gfx11: system level coherent / streaming.
        const SLC = 1 << 1;
        /// gfx11: device level coherent.
        const DLC = 1 << 2;
        /// gfx942: scope bit 0 (and "return the old value" for atomics).
        const SC0 = 1 << 3;
        /// gfx942: scope bit 1.
        const SC1 = 1 << 4;
        /// gfx942: non-temporal.
        const NT = 1 << 5;
    }
}

impl Cache {
    /// The bits that exist on `gpu` (for the format; SMEM on gfx942 still uses GLC).
    pub fn allowed(gpu: Gpu, smem: bool) -> Cache {
        match gpu {
            Gpu::Gfx90a => {
                if smem {
                    Cache::GLC
                } else {
                    Cache::GLC | Cache::SLC
                }
            }
            Gpu::Gfx942 => {
                if smem {
                    Cache::GLC
                } else {
                    Cache::SC0 | Cache::SC1 | Cache::NT
                }
            }
            Gpu::Gfx1100 => {
                if smem {
                    Cache::GLC | Cache::DLC
                } else {
                    Cache::GLC | Cache::SLC | Cache::DLC
                }
            }
        }
    }
    /// The bits a cache-control instruction (buffer_wbl2, buffer_inv...) accepts: the
    /// scope bits on gfx942, nothing elsewhere.
    pub fn allowed_cache_ctl(gpu: Gpu) -> Cache {
        if gpu == Gpu::Gfx942 {
            Cache::SC0 | Cache::SC1
        } else {
            Cache::empty()
        }
    }
    /// The bit that makes an atomic return the old value: GLC, or SC0 on gfx942.
    pub fn atomic_return(gpu: Gpu) -> Cache {
        if gpu == Gpu::Gfx942 {
            Cache::SC0
        } else {
            Cache::GLC
        }
    }
}

/// One machine instruction.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Inst {
    /// The instruction (a row of the opcode table).
    pub op: Opcode,
    /// Results, in the order of the table's `defs` (assembly order).
    pub defs: Vec<Operand>,
    /// Sources, in the order of the table's `uses` (assembly order).
    pub uses: Vec<Operand>,
    /// Encode a VOP1/VOP2/VOPC instruction in its VOP3 (`_e64`) form (needed for
    /// modifiers, a non-VCC lane mask, or an SGPR/constant second source). Ignored for
    /// instructions that only have a VOP3 form on the target; the decoder sets it only
    /// for e64 forms of VOP1/VOP2/VOPC instructions.
    pub e64: bool,
    /// VALU modifiers (VOP3/VOP3P forms only).
    pub mods: Mods,
    /// SOPP/SOPK 16-bit immediate (branch offsets are signed words, stored as u16).
    pub imm: u16,
    /// Memory offset in bytes (SMEM, FLAT, MUBUF, DS `offset`/`offset0`).
    pub offset: i32,
    /// DS two-address second offset (`offset1`).
    pub offset1: u8,
    /// Cache-policy bits of a memory instruction.
    pub cache: Cache,
    /// MUBUF: the VGPR address holds an offset.
    pub offen: bool,
    /// MUBUF: the VGPR address holds an index.
    pub idxen: bool,
    /// gfx11 VOPD: the Y half (a [`crate::opcodes::Format::Vopd`] row; `op` is the X
    /// half). `defs` are then `[X dst, Y dst]` and `uses` the X sources followed by the
    /// Y sources, each in its table order.
    pub vopd_y: Option<Opcode>,
}

impl Inst {
    /// An instruction with no modifiers, immediates or offsets.
    pub fn new(op: Opcode, defs: Vec<Operand>, uses: Vec<Operand>) -> Inst {
        Inst {
            op,
            defs,
            uses,
            e64: false,
            mods: Mods::default(),
            imm: 0,
            offset: 0,
            offset1: 0,
            cache: Cache::empty(),
            offen: false,
            idxen: false,
            vopd_y: None,
        }
    }
    /// SOPP instruction with immediate `imm`.
    pub fn sopp(op: Opcode, imm: u16) -> Inst {
        Inst { imm, ..Inst::new(op, vec![], vec![]) }
    }
    /// A SOPP branch to `offset` words relative to the end of the branch
    /// (target = address of branch + 4 + 4 * offset). `s_branch 0` falls through.
    pub fn branch(op: Opcode, offset: i16) -> Inst {
        Inst::sopp(op, offset as u16)
    }
    /// The signed word offset of a SOPP branch or `s_call_b64`; `None` for other
    /// instructions (including `s_setpc_b64`/`s_swappc_b64`, whose target is a register).
    pub fn branch_offset(&self) -> Option<i16> {
        let info = self.op.info();
        let imm_branch =
            info.flags.contains(OpFlags::BRANCH) && (info.flags.contains(OpFlags::IMM) || info.name == "s_call_b64");
        imm_branch.then_some(self.imm as i16)
    }
    /// A gfx11 VOPD pair: X half `x`, Y half `y`; `defs` = `[X dst, Y dst]`, `uses` =
    /// the X sources, then the Y sources.
    pub fn vopd(x: Opcode, y: Opcode, defs: Vec<Operand>, uses: Vec<Operand>) -> Inst {
        Inst { vopd_y: Some(y), ..Inst::new(x, defs, uses) }
    }
    /// Same instruction in VOP3 form.
    pub fn with_e64(mut self) -> Inst {
        self.e64 = true;
        self
    }
    /// Whether this is a returning atomic (or any memory instruction with a result).
    pub fn returns(&self) -> bool {
        !self.defs.is_empty()
    }
    /// Counters this instruction increments on `gpu` (a gfx11 returning atomic counts
    /// on vmcnt, a non-returning one on vscnt).
    pub fn counters(&self, gpu: Gpu) -> Counters {
        let info = self.op.info();
        let mut c = info.counters(gpu);
        if gpu.generation() == Generation::Gfx11 && info.flags.contains(OpFlags::OPT_DEF) && self.returns() {
            c.remove(Counters::VS);
            c.insert(Counters::VM);
        }
        c
    }
}
