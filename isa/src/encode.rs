//! Encoder: [`Inst`] -> bytes, for one [`Target`]. Every operand is checked against
//! the opcode table's operand kinds; invalid instructions are errors, never panics.

use std::fmt;

use crate::inst::{Cache, Inst, Operand};
use crate::opcodes::{Format, Kind, OpFlags, OpInfo};
use crate::regs::{PhysReg, Reg};
use crate::target::{Generation, Gpu, Target, WaveSize};

/// Why an instruction cannot be encoded. `op` is the gfx9 mnemonic.
#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EncodeError {
    /// The opcode (or its VOP3 form) does not exist on this GPU.
    NotAvailable { op: &'static str, gpu: Gpu },
    /// Wrong number of defs or uses.
    OperandCount { op: &'static str, expected: usize, found: usize, defs: bool },
    /// An operand does not fit its slot (wrong class, size, alignment, ...).
    BadOperand { op: &'static str, slot: String, reason: String },
    /// A literal where the format has no room for one, or two different literals.
    Literal { op: &'static str, reason: &'static str },
    /// More scalar values (SGPRs, literals) than the constant bus allows.
    ConstantBus { op: &'static str },
    /// Modifiers the encoding cannot express.
    Modifier { op: &'static str, reason: &'static str },
    /// An offset or immediate out of range.
    Range { op: &'static str, what: &'static str, value: i64 },
    /// A wave size the GPU cannot run.
    WaveSize,
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::NotAvailable { op, gpu } => write!(f, "{op} does not exist on {gpu}"),
            EncodeError::OperandCount { op, expected, found, defs } => {
                write!(f, "{op}: expected {expected} {}, found {found}", if *defs { "defs" } else { "uses" })
            }
            EncodeError::BadOperand { op, slot, reason } => write!(f, "{op}: {slot}: {reason}"),
            EncodeError::Literal { op, reason } => write!(f, "{op}: {reason}"),
            EncodeError::ConstantBus { op } => {
                write!(f, "{op}: too many scalar operands for the constant bus")
            }
            EncodeError::Modifier { op, reason } => write!(f, "{op}: {reason}"),
            EncodeError::Range { op, what, value } => {
                write!(f, "{op}: {what} {value} out of range")
            }
            EncodeError::WaveSize => write!(f, "wave size not supported by the GPU"),
        }
    }
}

impl std::error::Error for EncodeError {}

/// Encodes `inst` for `target`, appending 4, 8, 12 or 16 bytes to `out`. On error
/// nothing is appended.
pub fn encode(inst: &Inst, target: Target, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    let words = encode_words(inst, target)?;
    for w in words {
        out.extend_from_slice(&w.to_le_bytes());
    }
    Ok(())
}

/// Size in bytes of `inst`'s encoding for `target`.
pub fn encoded_len(inst: &Inst, target: Target) -> Result<usize, EncodeError> {
    Ok(encode_words(inst, target)?.len() * 4)
}

/// Which operand an error is about, formatted only when there is one
/// (every operand of every instruction passes through the checks).
#[derive(Clone, Copy)]
enum Slot {
    Named(&'static str),
    Def(usize),
    Use(usize),
    /// A use of one half of a dual-issue pair ("X" or "Y").
    HalfUse(&'static str, usize),
    /// A source position of one half of a dual-issue pair.
    HalfSource(&'static str, usize),
}

impl std::fmt::Display for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            Slot::Named(name) => f.write_str(name),
            Slot::Def(i) => write!(f, "def {i}"),
            Slot::Use(i) => write!(f, "use {i}"),
            Slot::HalfUse(half, i) => write!(f, "{half} use {i}"),
            Slot::HalfSource(half, i) => write!(f, "{half} src{i}"),
        }
    }
}

struct Ctx<'a> {
    inst: &'a Inst,
    info: &'static OpInfo,
    gpu: Gpu,
    gen: Generation,
    wave: WaveSize,
    literal: Option<u32>,
}

impl Ctx<'_> {
    fn name(&self) -> &'static str {
        self.info.name
    }
    fn bad(&self, slot: Slot, reason: impl Into<String>) -> EncodeError {
        EncodeError::BadOperand { op: self.name(), slot: slot.to_string(), reason: reason.into() }
    }
    fn check_reg(&self, slot: Slot, r: Reg) -> Result<(), EncodeError> {
        r.check(self.gpu).map_err(|e| self.bad(slot, e))
    }
    fn want_size(&self, slot: Slot, r: Reg, n: u8) -> Result<(), EncodeError> {
        if r.size != n {
            return Err(self.bad(slot, format!("expected {n} dword(s), got {}", r.size)));
        }
        self.check_reg(slot, r)
    }
    fn literal(&mut self, v: u32, allowed: bool) -> Result<u16, EncodeError> {
        if !allowed {
            return Err(EncodeError::Literal { op: self.name(), reason: "no literal allowed here" });
        }
        match self.literal {
            Some(l) if l != v => Err(EncodeError::Literal { op: self.name(), reason: "two different literals" }),
            _ => {
                self.literal = Some(v);
                Ok(255)
            }
        }
    }
    /// Scalar register (SGPR or special) of `n` dwords; returns its 7-bit code.
    fn sreg(&self, slot: Slot, o: Operand, n: u8, sgpr_only: bool) -> Result<u16, EncodeError> {
        match o {
            Operand::Reg(r) if r.base.is_scalar() => {
                if sgpr_only && !(r.base.is_sgpr() || (108..124).contains(&r.base.0)) {
                    return Err(self.bad(slot, "expected SGPRs"));
                }
                self.want_size(slot, r, n)?;
                self.check_special(slot, r)?;
                Ok(r.base.0)
            }
            _ => Err(self.bad(slot, "expected a scalar register")),
        }
    }
    /// Rejects special-register codes that do not exist on this generation.
    fn check_special(&self, slot: Slot, r: Reg) -> Result<(), EncodeError> {
        let b = r.base.0;
        let ok = match self.gen {
            Generation::Gfx9 => b != 125,
            Generation::Gfx11 => true,
        };
        if ok {
            Ok(())
        } else {
            Err(self.bad(slot, "no such scalar register on this generation"))
        }
    }
    /// Scalar source (SOP*/VOP scalar slots): register, inline constant or literal.
    fn ssrc(&mut self, slot: Slot, o: Operand, n: u8, lit_ok: bool) -> Result<u16, EncodeError> {
        match o {
            Operand::Reg(r) if r.base == PhysReg::SCC || r.base.is_aperture() => {
                self.want_size(slot, r, n)?;
                Ok(r.base.0)
            }
            Operand::Reg(_) => self.sreg(slot, o, n, false),
            Operand::Const(c) => self.konst(slot, c),
            Operand::Literal(v) => {
                if n != 1 {
                    return Err(EncodeError::Literal { op: self.name(), reason: "64-bit literals are not supported" });
                }
                self.literal(v, lit_ok)
            }
            Operand::Off => Err(self.bad(slot, "operand required")),
        }
    }
    fn konst(&self, slot: Slot, c: u8) -> Result<u16, EncodeError> {
        if crate::regs::is_inline_code(c as u16) {
            Ok(c as u16)
        } else {
            Err(self.bad(slot, format!("{c} is not an inline-constant code")))
        }
    }
    fn vgpr(&self, slot: Slot, o: Operand, n: u8) -> Result<u16, EncodeError> {
        match o {
            Operand::Reg(r) if r.base.is_vgpr() => {
                self.want_size(slot, r, n)?;
                Ok(r.base.index())
            }
            _ => Err(self.bad(slot, "expected VGPRs")),
        }
    }
    fn agpr(&self, slot: Slot, o: Operand, n: u8) -> Result<u16, EncodeError> {
        match o {
            Operand::Reg(r) if r.base.is_agpr() => {
                self.want_size(slot, r, n)?;
                Ok(r.base.index())
            }
            _ => Err(self.bad(slot, "expected AGPRs")),
        }
    }
    /// VGPR or (gfx90a/gfx942) AGPR data; returns (index, is_agpr).
    fn vdata(&self, slot: Slot, o: Operand, n: u8) -> Result<(u16, bool), EncodeError> {
        match o {
            Operand::Reg(r) if r.base.is_agpr() => Ok((self.agpr(slot, o, n)?, true)),
            _ => Ok((self.vgpr(slot, o, n)?, false)),
        }
    }
    /// A 9-bit VALU source for table kind `k`.
    fn vsrc(&mut self, slot: Slot, o: Operand, k: Kind, lit_ok: bool) -> Result<u16, EncodeError> {
        match k {
            Kind::Src(n) => match o {
                Operand::Reg(r) if r.base.is_vgpr() => Ok(256 + self.vgpr(slot, o, n)?),
                _ => self.ssrc(slot, o, n, lit_ok),
            },
            Kind::Vgpr(n) => Ok(256 + self.vgpr(slot, o, n)?),
            Kind::Agpr(n) => Ok(256 + self.agpr(slot, o, n)?),
            Kind::Ssrc(n) => self.ssrc(slot, o, n, lit_ok),
            Kind::Sreg(n) | Kind::Sdst(n) => self.sreg(slot, o, n, false),
            Kind::Mask => self.mask(slot, o, false),
            _ => Err(self.bad(slot, "unexpected operand kind for a VALU source")),
        }
    }
    /// A lane mask; `vcc_only` in VOP2/VOPC forms, where it is implicit VCC.
    fn mask(&self, slot: Slot, o: Operand, vcc_only: bool) -> Result<u16, EncodeError> {
        let n = Kind::Mask.size(self.wave);
        let code = self.sreg(slot, o, n, false)?;
        if vcc_only && code != PhysReg::VCC.0 {
            return Err(self.bad(slot, "the 32-bit encoding can only use VCC; use the e64 form"));
        }
        Ok(code)
    }
    /// Constant-bus check: distinct SGPR/special reads and literals.
    fn constant_bus(&self, srcs: &[Operand]) -> Result<(), EncodeError> {
        let mut seen: Vec<Operand> = Vec::new();
        if self.info.flags.contains(OpFlags::VCC_USE) {
            // v_div_fmas reads VCC through the constant bus.
            seen.push(Operand::Reg(Reg::vcc(Kind::Mask.size(self.wave))));
        }
        for (i, &o) in srcs.iter().enumerate() {
            // v_writelane's lane select may be M0 without using the constant bus.
            if i == 1 && self.info.name == "v_writelane_b32" && o == Operand::Reg(Reg::new(PhysReg::m0(self.gen), 1)) {
                continue;
            }
            let scalar = match o {
                Operand::Reg(r) => {
                    (r.base.is_scalar() && Some(r.base) != PhysReg::null(self.gen)) || r.base.is_aperture()
                }
                Operand::Literal(_) => true,
                _ => false,
            };
            if scalar && !seen.contains(&o) {
                seen.push(o);
            }
        }
        let limit = match self.gen {
            Generation::Gfx9 => 1,
            Generation::Gfx11 => 2,
        };
        // A 64-bit shift's scalar operand counts once; LLVM allows the same SGPR twice.
        if seen.len() > limit {
            return Err(EncodeError::ConstantBus { op: self.name() });
        }
        Ok(())
    }
    fn no_mods(&self) -> Result<(), EncodeError> {
        if !self.inst.mods.is_default() {
            return Err(EncodeError::Modifier { op: self.name(), reason: "modifiers need the e64 (VOP3) form" });
        }
        Ok(())
    }
    fn no_cache(&self) -> Result<(), EncodeError> {
        if !self.inst.cache.is_empty()
            || self.inst.offset != 0
            || self.inst.offset1 != 0
            || self.inst.offen
            || self.inst.idxen
        {
            return Err(EncodeError::Modifier { op: self.name(), reason: "memory fields on a non-memory instruction" });
        }
        Ok(())
    }
    fn cache_ok(&self, smem: bool) -> Result<(), EncodeError> {
        let allowed = if self.info.flags.contains(OpFlags::CACHE_CTL) {
            Cache::allowed_cache_ctl(self.gpu)
        } else {
            Cache::allowed(self.gpu, smem)
        };
        if !allowed.contains(self.inst.cache) {
            return Err(EncodeError::Modifier {
                op: self.name(),
                reason: "cache-policy bit not available on this GPU",
            });
        }
        Ok(())
    }
}

fn check_counts(inst: &Inst, info: &OpInfo, gpu: Gpu) -> Result<(), EncodeError> {
    let opt = info.flags.contains(OpFlags::OPT_DEF) && inst.defs.is_empty();
    if inst.defs.len() != info.defs(gpu).len() && !opt {
        return Err(EncodeError::OperandCount {
            op: info.name,
            expected: info.defs(gpu).len(),
            found: inst.defs.len(),
            defs: true,
        });
    }
    if inst.uses.len() != info.uses(gpu).len() {
        return Err(EncodeError::OperandCount {
            op: info.name,
            expected: info.uses(gpu).len(),
            found: inst.uses.len(),
            defs: false,
        });
    }
    Ok(())
}

/// The dwords of `inst`'s encoding (literal last).
pub fn encode_words(inst: &Inst, target: Target) -> Result<Vec<u32>, EncodeError> {
    if !target.gpu.supports_wave_size(target.wave) {
        return Err(EncodeError::WaveSize);
    }
    let info = inst.op.info();
    let gpu = target.gpu;
    let op = info.opcode(gpu).ok_or(EncodeError::NotAvailable { op: info.name, gpu })?;
    let mut cx = Ctx { inst, info, gpu, gen: gpu.generation(), wave: target.wave, literal: None };
    let fmt = info.format(gpu);
    if fmt == Format::Vopd {
        let mut words = enc_vopd(&mut cx, op)?;
        if let Some(l) = cx.literal {
            words.push(l);
        }
        return Ok(words);
    }
    if inst.vopd_y.is_some() {
        return Err(EncodeError::Modifier { op: info.name, reason: "a Y half on an instruction that is not VOPD" });
    }
    check_counts(inst, info, gpu)?;
    // `e64` on an instruction that is VOP3-only on this generation (v_add_co_u32 on
    // gfx11) is accepted: it already is in VOP3 form. Elsewhere it is an error.
    if inst.e64 && !fmt.has_e64_form() && !matches!(fmt, Format::Vop3 | Format::Vop3b) {
        return Err(EncodeError::Modifier { op: info.name, reason: "only VALU instructions have an e64 form" });
    }
    let mut words = match fmt {
        Format::Sop1 | Format::Sop2 | Format::Sopk | Format::Sopc | Format::Sopp => enc_salu(&mut cx, fmt, op)?,
        Format::Smem => enc_smem(&mut cx, op)?,
        Format::Vop1 | Format::Vop2 | Format::Vopc if !inst.e64 => enc_vop_short(&mut cx, fmt, op)?,
        Format::Vop1 | Format::Vop2 | Format::Vopc | Format::Vop3 | Format::Vop3b => {
            let op = if inst.e64 {
                info.opcode_e64(gpu).ok_or(EncodeError::NotAvailable { op: info.name, gpu })?
            } else {
                op
            };
            enc_vop3(&mut cx, fmt, op)?
        }
        Format::Vop3p => enc_vop3p(&mut cx, op)?,
        Format::Ds => enc_ds(&mut cx, op)?,
        Format::Flat | Format::Global | Format::Scratch => enc_flat(&mut cx, fmt, op)?,
        Format::Mubuf => enc_mubuf(&mut cx, op)?,
        Format::Vopd => enc_vopd(&mut cx, op)?,
    };
    if let Some(l) = cx.literal {
        words.push(l);
    }
    Ok(words)
}

fn enc_salu(cx: &mut Ctx, fmt: Format, op: u16) -> Result<Vec<u32>, EncodeError> {
    cx.no_mods()?;
    cx.no_cache()?;
    let inst = cx.inst;
    let info = cx.info;
    let op = op as u32;
    if !matches!(fmt, Format::Sopk | Format::Sopp) && inst.imm != 0 {
        return Err(EncodeError::Modifier { op: info.name, reason: "immediate on an instruction without one" });
    }
    let mut sdst = 0u32;
    for (i, (&k, &o)) in info.defs(cx.gpu).iter().zip(&inst.defs).enumerate() {
        sdst = cx.sreg(Slot::Def(i), o, k.size(cx.wave), false)? as u32;
    }
    let mut srcs = [0u32; 2];
    for (i, (&k, &o)) in info.uses(cx.gpu).iter().zip(&inst.uses).enumerate() {
        srcs[i] = match k {
            Kind::Sreg(n) => cx.sreg(Slot::Use(i), o, n, true)?,
            Kind::Ssrc(n) if fmt == Format::Sopk => cx.sreg(Slot::Use(i), o, n, false)?,
            Kind::Ssrc(n) => cx.ssrc(Slot::Use(i), o, n, true)?,
            _ => return Err(cx.bad(Slot::Named("use"), "unexpected operand kind")),
        } as u32;
    }
    let imm = inst.imm as u32;
    Ok(vec![match fmt {
        Format::Sop1 => 0xBE80_0000 | sdst << 16 | op << 8 | srcs[0],
        Format::Sop2 => 0x8000_0000 | op << 23 | sdst << 16 | srcs[1] << 8 | srcs[0],
        Format::Sopk => {
            let reg = if info.defs(cx.gpu).is_empty() { srcs[0] } else { sdst };
            0xB000_0000 | op << 23 | reg << 16 | imm
        }
        Format::Sopc => 0xBF00_0000 | op << 16 | srcs[1] << 8 | srcs[0],
        _ => {
            if !info.flags.contains(OpFlags::IMM) && imm != 0 {
                return Err(EncodeError::Range { op: info.name, what: "immediate", value: imm as i64 });
            }
            0xBF80_0000 | op << 16 | imm
        }
    }])
}

fn enc_smem(cx: &mut Ctx, op: u16) -> Result<Vec<u32>, EncodeError> {
    cx.no_mods()?;
    cx.cache_ok(true)?;
    let inst = cx.inst;
    let info = cx.info;
    if inst.imm != 0 || inst.offset1 != 0 || inst.offen || inst.idxen {
        return Err(EncodeError::Modifier { op: info.name, reason: "field not used by SMEM" });
    }
    let sdata = cx.sreg(Slot::Named("sdata"), inst.defs[0], info.defs(cx.gpu)[0].size(cx.wave), false)? as u32;
    let Kind::Sreg(bn) = info.uses(cx.gpu)[0] else { unreachable!("SMEM base kind") };
    let sbase = cx.sreg(Slot::Named("sbase"), inst.uses[0], bn, true)? as u32;
    let soff = match inst.uses[1] {
        Operand::Off => None,
        o => Some(cx.sreg(Slot::Named("soffset"), o, 1, false)? as u32),
    };
    let off = inst.offset;
    let (lo, hi) = match cx.gen {
        Generation::Gfx9 => (0, 0xF_FFFF),
        // s_buffer_load's offset is unsigned on gfx11.
        Generation::Gfx11 if info.name.starts_with("s_buffer") => (0, 0xF_FFFF),
        Generation::Gfx11 => (-(1 << 20), (1 << 20) - 1),
    };
    if off < lo || off > hi {
        return Err(EncodeError::Range { op: info.name, what: "offset", value: off as i64 });
    }
    let op = op as u32;
    let glc = inst.cache.contains(Cache::GLC) as u32;
    let off21 = off as u32 & 0x1F_FFFF;
    Ok(match cx.gen {
        Generation::Gfx9 => {
            let (imm, soe, w1) = match soff {
                None => (1, 0, off21),
                Some(s) if off == 0 => (0, 0, s),
                Some(s) => (1, 1, off21 | s << 25),
            };
            vec![0xC000_0000 | op << 18 | imm << 17 | glc << 16 | soe << 14 | sdata << 6 | sbase >> 1, w1]
        }
        Generation::Gfx11 => {
            let dlc = inst.cache.contains(Cache::DLC) as u32;
            let s = soff.unwrap_or(0x7C);
            vec![0xF400_0000 | op << 18 | glc << 14 | dlc << 13 | sdata << 6 | sbase >> 1, off21 | s << 25]
        }
    })
}

/// VOP1, VOP2, VOPC in their 32-bit forms.
fn enc_vop_short(cx: &mut Ctx, fmt: Format, op: u16) -> Result<Vec<u32>, EncodeError> {
    cx.no_mods()?;
    cx.no_cache()?;
    let inst = cx.inst;
    let info = cx.info;
    let op = op as u32;
    // Destination field.
    let mut vdst = 0u32;
    for (i, (&k, &o)) in info.defs(cx.gpu).iter().zip(&inst.defs).enumerate() {
        let slot = Slot::Def(i);
        match k {
            Kind::Vgpr(n) => vdst = cx.vgpr(slot, o, n)? as u32,
            Kind::Agpr(n) => vdst = cx.agpr(slot, o, n)? as u32,
            Kind::Sdst(n) => vdst = cx.sreg(slot, o, n, false)? as u32,
            Kind::Mask => {
                cx.mask(slot, o, true)?;
            }
            _ => return Err(cx.bad(slot, "unexpected operand kind")),
        }
    }
    let mut src = [0u32; 2];
    for (i, (&k, &o)) in info.uses(cx.gpu).iter().zip(&inst.uses).enumerate() {
        let slot = Slot::Use(i);
        match (i, k) {
            (_, Kind::Mask) => {
                cx.mask(slot, o, true)?;
            }
            (0, _) => src[0] = cx.vsrc(slot, o, k, true)? as u32,
            // v_fmamk/v_fmaak: K is the literal dword (shared with a literal src0).
            (_, Kind::KImm) => match o {
                Operand::Literal(v) => {
                    cx.literal(v, true)?;
                }
                _ => return Err(cx.bad(slot, "K must be a literal")),
            },
            (_, Kind::Vgpr(n)) => src[1] = cx.vgpr(slot, o, n)? as u32,
            _ => return Err(cx.bad(slot, "unexpected operand kind")),
        }
    }
    cx.constant_bus(&inst.uses)?;
    Ok(vec![match fmt {
        Format::Vop1 => 0x7E00_0000 | vdst << 17 | op << 9 | src[0],
        Format::Vop2 => op << 25 | vdst << 17 | src[1] << 9 | src[0],
        _ => 0x7C00_0000 | op << 17 | src[1] << 9 | src[0],
    }])
}

/// VOP3 (a and b), including the e64 forms of VOP1/VOP2/VOPC.
fn enc_vop3(cx: &mut Ctx, fmt: Format, op: u16) -> Result<Vec<u32>, EncodeError> {
    cx.no_cache()?;
    let inst = cx.inst;
    let info = cx.info;
    let m = inst.mods;
    if m.neg_hi != 0 || m.op_sel != 0 || m.op_sel_hi != 0b111 || m.omod > 3 || m.neg >= 8 || m.abs >= 8 {
        return Err(EncodeError::Modifier { op: info.name, reason: "op_sel/neg_hi are not supported on VOP3" });
    }
    let lit_ok = cx.gen == Generation::Gfx11;
    // gfx11 v_cmpx has no result operand; its VOP3 form names EXEC_LO as the destination.
    let mut vdst = if fmt == Format::Vopc && info.defs(cx.gpu).is_empty() { PhysReg::EXEC.0 as u32 } else { 0 };
    let mut sdst: Option<u32> = None;
    for (i, (&k, &o)) in info.defs(cx.gpu).iter().zip(&inst.defs).enumerate() {
        let slot = Slot::Def(i);
        match k {
            Kind::Vgpr(n) => vdst = cx.vgpr(slot, o, n)? as u32,
            Kind::Agpr(n) => vdst = cx.agpr(slot, o, n)? as u32,
            Kind::Sdst(n) => vdst = cx.sreg(slot, o, n, false)? as u32,
            Kind::Mask if fmt == Format::Vopc => vdst = cx.mask(slot, o, false)? as u32,
            Kind::Mask => sdst = Some(cx.mask(slot, o, false)? as u32),
            _ => return Err(cx.bad(slot, "unexpected operand kind")),
        }
    }
    let mut src = [0u32; 3];
    for (i, (&k, &o)) in info.uses(cx.gpu).iter().zip(&inst.uses).enumerate() {
        // v_readlane/v_writelane lane select (a scalar second source): SGPR, M0 or
        // inline constant, never a literal.
        let lit = lit_ok && !(i > 0 && matches!(k, Kind::Ssrc(_)));
        src[i] = cx.vsrc(Slot::Use(i), o, widen(k, inst.e64), lit)? as u32;
    }
    cx.constant_bus(&inst.uses)?;
    let vop3b = sdst.is_some() || fmt == Format::Vop3b;
    if vop3b && m.abs != 0 {
        return Err(EncodeError::Modifier { op: info.name, reason: "VOP3b has no abs modifier" });
    }
    let prefix = match cx.gen {
        Generation::Gfx9 => 0xD000_0000u32,
        Generation::Gfx11 => 0xD400_0000,
    };
    let mid = if vop3b { sdst.unwrap_or(0) << 8 } else { (m.abs as u32) << 8 };
    let w0 = prefix | (op as u32) << 16 | (m.clamp as u32) << 15 | mid | vdst;
    let w1 = src[0] | src[1] << 9 | src[2] << 18 | (m.omod as u32) << 27 | (m.neg as u32) << 29;
    Ok(vec![w0, w1])
}

fn enc_vop3p(cx: &mut Ctx, op: u16) -> Result<Vec<u32>, EncodeError> {
    cx.no_cache()?;
    let inst = cx.inst;
    let info = cx.info;
    let m = inst.mods;
    if m.abs != 0 || m.omod != 0 || m.op_sel >= 8 || m.op_sel_hi >= 8 || m.neg >= 8 || m.neg_hi >= 8 {
        return Err(EncodeError::Modifier { op: info.name, reason: "VOP3P has no abs/omod" });
    }
    let lit_ok = cx.gen == Generation::Gfx11;
    let mut vdst = 0u32;
    for (i, (&k, &o)) in info.defs(cx.gpu).iter().zip(&inst.defs).enumerate() {
        let slot = Slot::Def(i);
        vdst = match k {
            Kind::Vgpr(n) => cx.vgpr(slot, o, n)?,
            Kind::Agpr(n) => cx.agpr(slot, o, n)?,
            _ => return Err(cx.bad(slot, "unexpected operand kind")),
        } as u32;
    }
    let mut src = [0u32; 3];
    for (i, (&k, &o)) in info.uses(cx.gpu).iter().zip(&inst.uses).enumerate() {
        src[i] = cx.vsrc(Slot::Use(i), o, k, lit_ok)? as u32;
    }
    cx.constant_bus(&inst.uses)?;
    let prefix = match cx.gen {
        Generation::Gfx9 => 0xD380_0000u32,
        Generation::Gfx11 => 0xCC00_0000,
    };
    let w0 = prefix
        | (op as u32) << 16
        | (m.clamp as u32) << 15
        | ((m.op_sel_hi as u32 >> 2) & 1) << 14
        | (m.op_sel as u32) << 11
        | (m.neg_hi as u32) << 8
        | vdst;
    let w1 = src[0] | src[1] << 9 | src[2] << 18 | (m.op_sel_hi as u32 & 3) << 27 | (m.neg as u32) << 29;
    Ok(vec![w0, w1])
}

fn mem_common(cx: &Ctx) -> Result<(), EncodeError> {
    cx.no_mods()?;
    if cx.inst.imm != 0 {
        return Err(EncodeError::Modifier { op: cx.name(), reason: "immediate on a memory instruction" });
    }
    Ok(())
}

fn enc_ds(cx: &mut Ctx, op: u16) -> Result<Vec<u32>, EncodeError> {
    mem_common(cx)?;
    let inst = cx.inst;
    let info = cx.info;
    if !inst.cache.is_empty() || inst.offen || inst.idxen {
        return Err(EncodeError::Modifier { op: info.name, reason: "cache bits on LDS" });
    }
    let mut acc: Option<bool> = None;
    let mut set_acc = |a: bool, cx: &Ctx| -> Result<(), EncodeError> {
        match acc {
            Some(x) if x != a => Err(cx.bad(Slot::Named("data"), "VGPR and AGPR data mixed")),
            _ => {
                acc = Some(a);
                Ok(())
            }
        }
    };
    let mut vdst = 0u32;
    for (&k, &o) in info.defs(cx.gpu).iter().zip(&inst.defs) {
        let (i, a) = match k {
            Kind::Vdata(n) => cx.vdata(Slot::Named("vdst"), o, n)?,
            Kind::Vgpr(n) => (cx.vgpr(Slot::Named("vdst"), o, n)?, false),
            _ => return Err(cx.bad(Slot::Named("vdst"), "unexpected kind")),
        };
        set_acc(a, cx)?;
        vdst = i as u32;
    }
    let mut f = [0u32; 3];
    for (i, (&k, &o)) in info.uses(cx.gpu).iter().zip(&inst.uses).enumerate() {
        let slot = Slot::Named(if i == 0 { "addr" } else { "data" });
        let (r, a) = match k {
            Kind::Vdata(n) => cx.vdata(slot, o, n)?,
            Kind::Vgpr(n) => (cx.vgpr(slot, o, n)?, false),
            _ => return Err(cx.bad(slot, "unexpected kind")),
        };
        if i > 0 {
            set_acc(a, cx)?;
        }
        f[i] = r as u32;
    }
    let (o0, o1) = if info.flags.contains(OpFlags::DS2) {
        if !(0..=255).contains(&inst.offset) {
            return Err(EncodeError::Range { op: info.name, what: "offset0", value: inst.offset as i64 });
        }
        (inst.offset as u32, inst.offset1 as u32)
    } else {
        if !(0..=0xFFFF).contains(&inst.offset) || inst.offset1 != 0 {
            return Err(EncodeError::Range { op: info.name, what: "offset", value: inst.offset as i64 });
        }
        (inst.offset as u32 & 0xFF, inst.offset as u32 >> 8)
    };
    let acc = acc.unwrap_or(false) as u32;
    let w0 = match cx.gen {
        Generation::Gfx9 => 0xD800_0000 | acc << 25 | (op as u32) << 17 | o1 << 8 | o0,
        Generation::Gfx11 => 0xD800_0000 | (op as u32) << 18 | o1 << 8 | o0,
    };
    let w1 = f[0] | f[1] << 8 | f[2] << 16 | vdst << 24;
    Ok(vec![w0, w1])
}

/// gfx11 VOPD: X half `op` (`cx.info`), Y half `inst.vopd_y`.
fn enc_vopd(cx: &mut Ctx, opx: u16) -> Result<Vec<u32>, EncodeError> {
    cx.no_mods()?;
    cx.no_cache()?;
    let inst = cx.inst;
    let (gpu, name) = (cx.gpu, cx.info.name);
    if cx.wave != WaveSize::W32 {
        return Err(EncodeError::NotAvailable { op: name, gpu });
    }
    if inst.imm != 0 {
        return Err(EncodeError::Modifier { op: name, reason: "immediate on a VALU instruction" });
    }
    let Some(y) = inst.vopd_y else {
        return Err(EncodeError::Modifier { op: name, reason: "a VOPD instruction needs its Y half (vopd_y)" });
    };
    let yi = y.info();
    let opy = yi.opcode(gpu).filter(|_| yi.format(gpu) == Format::Vopd).ok_or(EncodeError::NotAvailable { op: yi.name, gpu })?;
    if opx >= 16 {
        return Err(cx.bad(Slot::Named("X half"), "this operation can only be the Y half"));
    }
    let (ux, uy) = (cx.info.uses(gpu), yi.uses(gpu));
    if inst.defs.len() != 2 {
        return Err(EncodeError::OperandCount { op: name, expected: 2, found: inst.defs.len(), defs: true });
    }
    if inst.uses.len() != ux.len() + uy.len() {
        return Err(EncodeError::OperandCount {
            op: name,
            expected: ux.len() + uy.len(),
            found: inst.uses.len(),
            defs: false,
        });
    }
    let dx = cx.vgpr(Slot::Named("X dst"), inst.defs[0], 1)? as u32;
    let dy = cx.vgpr(Slot::Named("Y dst"), inst.defs[1], 1)? as u32;
    // (src0, vsrc1) of each half; vsrc1 is None for v_dual_mov_b32.
    let mut halves = [(0u32, None::<u32>); 2];
    for (h, (kinds, ops)) in [(ux, &inst.uses[..ux.len()]), (uy, &inst.uses[ux.len()..])].into_iter().enumerate() {
        let tag = if h == 0 { "X" } else { "Y" };
        for (i, (&k, &o)) in kinds.iter().zip(ops).enumerate() {
            let slot = Slot::HalfUse(tag, i);
            match (i, k) {
                (_, Kind::Mask) => {
                    cx.mask(slot, o, true)?;
                }
                (0, _) => halves[h].0 = cx.vsrc(slot, o, k, true)? as u32,
                (_, Kind::KImm) => match o {
                    Operand::Literal(v) => {
                        cx.literal(v, true)?;
                    }
                    _ => return Err(cx.bad(slot, "K must be a literal")),
                },
                (_, Kind::Vgpr(n)) => halves[h].1 = Some(cx.vgpr(slot, o, n)? as u32),
                _ => return Err(cx.bad(slot, "unexpected operand kind")),
            }
        }
    }
    // LLVM's VOPD register rules, by source position (src0, src1, src2; the K of
    // fmamk is src1, so its VGPR is src2, and fmac's accumulator, its destination, is
    // src2): VGPRs in the same position must be in different banks (register % 4) for
    // src0 and src1, and of different parity for src2 and the destinations.
    let slots = |kinds: &[Kind], ops: &[Operand], tied_dst: Option<u32>| -> [Option<u32>; 3] {
        let mut s = [None; 3];
        for (i, (k, o)) in kinds.iter().zip(ops).filter(|(k, _)| **k != Kind::Mask).enumerate().take(3) {
            if let (Operand::Reg(r), false) = (o, *k == Kind::KImm) {
                if r.base.is_vgpr() {
                    s[i] = Some(r.base.index() as u32);
                }
            }
        }
        if tied_dst.is_some() {
            s[2] = tied_dst;
        }
        s
    };
    let tied = |i: &OpInfo, d: u32| i.flags.contains(OpFlags::TIED).then_some(d);
    let sx = slots(ux, &inst.uses[..ux.len()], tied(cx.info, dx));
    let sy = slots(uy, &inst.uses[ux.len()..], tied(yi, dy));
    for (i, mask) in [(0, 3), (1, 3), (2, 1)] {
        if let (Some(a), Some(b)) = (sx[i], sy[i]) {
            if a & mask == b & mask {
                return Err(cx.bad(Slot::HalfSource("Y", i), "the halves' VGPRs in this position share a bank"));
            }
        }
    }
    if (dx ^ dy) & 1 == 0 {
        return Err(cx.bad(Slot::Named("Y dst"), "one destination must be even and the other odd"));
    }
    let [(s0x, v1x), (s0y, v1y)] = halves;
    cx.constant_bus(&inst.uses)?;
    let w0 = 0xC800_0000 | (opx as u32) << 22 | (opy as u32) << 17 | v1x.unwrap_or(0) << 9 | s0x;
    let w1 = dx << 24 | (dy >> 1) << 17 | v1y.unwrap_or(0) << 9 | s0y;
    Ok(vec![w0, w1])
}

/// Maps cache bits to (glc-ish, slc-ish, dlc, sc1) per generation for FLAT/MUBUF.
fn cache_bits(cx: &Ctx) -> (u32, u32, u32, u32) {
    let c = cx.inst.cache;
    match cx.gpu {
        Gpu::Gfx942 => (c.contains(Cache::SC0) as u32, c.contains(Cache::NT) as u32, 0, c.contains(Cache::SC1) as u32),
        _ => (c.contains(Cache::GLC) as u32, c.contains(Cache::SLC) as u32, c.contains(Cache::DLC) as u32, 0),
    }
}

fn check_atomic_return(cx: &Ctx) -> Result<(), EncodeError> {
    if cx.info.flags.contains(OpFlags::OPT_DEF) {
        let ret = cx.inst.cache.contains(Cache::atomic_return(cx.gpu));
        if ret != cx.inst.returns() {
            return Err(EncodeError::Modifier {
                op: cx.name(),
                reason: "an atomic returns its old value exactly when glc (sc0 on gfx942) is set",
            });
        }
    }
    Ok(())
}

fn enc_flat(cx: &mut Ctx, fmt: Format, op: u16) -> Result<Vec<u32>, EncodeError> {
    mem_common(cx)?;
    cx.cache_ok(false)?;
    check_atomic_return(cx)?;
    let inst = cx.inst;
    let info = cx.info;
    if inst.offen || inst.idxen || inst.offset1 != 0 {
        return Err(EncodeError::Modifier { op: info.name, reason: "MUBUF/DS field on FLAT" });
    }
    let gen = cx.gen;
    let off_null: u32 = if gen == Generation::Gfx11 { 0x7C } else { 0x7F };
    let mut acc = false;
    let mut vdst = 0u32;
    for (&k, &o) in info.defs(cx.gpu).iter().zip(&inst.defs) {
        let (i, a) = match k {
            Kind::Vdata(n) => cx.vdata(Slot::Named("vdst"), o, n)?,
            Kind::Vgpr(n) => (cx.vgpr(Slot::Named("vdst"), o, n)?, false),
            _ => return Err(cx.bad(Slot::Named("vdst"), "unexpected kind")),
        };
        acc |= a;
        vdst = i as u32;
    }
    // Address parts first: the VGPR address size depends on whether there is an SGPR base.
    let saddr_op = info.uses(cx.gpu).iter().position(|k| *k == Kind::Saddr).map(|i| inst.uses[i]);
    let saddr: Option<u32> = match (fmt, saddr_op) {
        (_, None) | (_, Some(Operand::Off)) => None,
        (Format::Global, Some(o)) => Some(cx.sreg(Slot::Named("saddr"), o, 2, false)? as u32),
        (_, Some(o)) => Some(cx.sreg(Slot::Named("saddr"), o, 1, false)? as u32),
    };
    let mut vaddr: Option<u32> = None;
    let mut data = 0u32;
    for (i, (&k, &o)) in info.uses(cx.gpu).iter().zip(&inst.uses).enumerate() {
        match k {
            Kind::Vaddr => {
                let n = match fmt {
                    Format::Flat => 2,
                    Format::Global if saddr.is_none() => 2,
                    _ => 1,
                };
                vaddr = match o {
                    Operand::Off if fmt == Format::Scratch => None,
                    _ => Some(cx.vgpr(Slot::Named("vaddr"), o, n)? as u32),
                };
            }
            Kind::Saddr => {}
            Kind::Vdata(n) => {
                let (r, a) = cx.vdata(Slot::Named("data"), o, n)?;
                acc |= a;
                data = r as u32;
            }
            Kind::Vgpr(n) => data = cx.vgpr(Slot::Use(i), o, n)? as u32,
            _ => return Err(cx.bad(Slot::Named("use"), "unexpected kind")),
        }
    }
    // gfx90a scratch addresses with exactly one of a VGPR or an SGPR offset (gfx942 and
    // gfx11 have the SVE bit and allow both or neither).
    if fmt == Format::Scratch && cx.gpu == Gpu::Gfx90a && vaddr.is_some() == saddr.is_some() {
        return Err(cx.bad(Slot::Named("vaddr"), "gfx90a scratch needs exactly one of a VGPR and an SGPR address"));
    }
    let off = inst.offset;
    let range = if fmt == Format::Flat { 0..=4095 } else { -4096..=4095 };
    if !range.contains(&off) {
        return Err(EncodeError::Range { op: info.name, what: "offset", value: off as i64 });
    }
    let seg: u32 = match fmt {
        Format::Flat => 0,
        Format::Scratch => 1,
        _ => 2,
    };
    let (glc, slc, dlc, sc1) = cache_bits(cx);
    let op = op as u32;
    let off13 = off as u32 & 0x1FFF;
    let sve = (fmt == Format::Scratch && vaddr.is_some()) as u32;
    let saddr_f = if fmt == Format::Flat {
        if gen == Generation::Gfx11 {
            0x7C
        } else {
            0
        }
    } else {
        saddr.unwrap_or(off_null)
    };
    let w0 = match gen {
        Generation::Gfx9 => {
            let bit13 = if cx.gpu == Gpu::Gfx942 { sve } else { 0 };
            0xDC00_0000 | sc1 << 25 | op << 18 | slc << 17 | glc << 16 | seg << 14 | bit13 << 13 | off13
        }
        Generation::Gfx11 => 0xDC00_0000 | op << 18 | seg << 16 | slc << 15 | glc << 14 | dlc << 13 | off13,
    };
    let bit55 = match gen {
        Generation::Gfx9 => acc as u32,
        Generation::Gfx11 => sve,
    };
    let w1 = vaddr.unwrap_or(0) | data << 8 | saddr_f << 16 | bit55 << 23 | vdst << 24;
    Ok(vec![w0, w1])
}

fn enc_mubuf(cx: &mut Ctx, op: u16) -> Result<Vec<u32>, EncodeError> {
    mem_common(cx)?;
    cx.cache_ok(false)?;
    check_atomic_return(cx)?;
    let inst = cx.inst;
    let info = cx.info;
    if inst.offset1 != 0 {
        return Err(EncodeError::Modifier { op: info.name, reason: "offset1 on MUBUF" });
    }
    let mut acc = false;
    let mut vdata = 0u32;
    for (&k, &o) in info.defs(cx.gpu).iter().zip(&inst.defs) {
        let Kind::Vdata(n) = k else {
            return Err(cx.bad(Slot::Named("vdata"), "unexpected kind"));
        };
        let (i, a) = cx.vdata(Slot::Named("vdata"), o, n)?;
        acc |= a;
        vdata = i as u32;
    }
    let mut vaddr = 0u32;
    let mut srsrc = 0u32;
    let mut soffset = 0u32;
    for (&k, &o) in info.uses(cx.gpu).iter().zip(&inst.uses) {
        match k {
            Kind::Vdata(n) => {
                let (i, a) = cx.vdata(Slot::Named("vdata"), o, n)?;
                acc |= a;
                vdata = i as u32;
            }
            Kind::Vaddr => {
                let n = inst.offen as u8 + inst.idxen as u8;
                vaddr = match (o, n) {
                    (Operand::Off, 0) => 0,
                    (Operand::Off, _) => return Err(cx.bad(Slot::Named("vaddr"), "offen/idxen need a VGPR address")),
                    (_, 0) => return Err(cx.bad(Slot::Named("vaddr"), "a VGPR address needs offen or idxen")),
                    (o, n) => cx.vgpr(Slot::Named("vaddr"), o, n)? as u32,
                };
            }
            Kind::Sreg(n) => {
                let code = cx.sreg(Slot::Named("srsrc"), o, n, true)?;
                srsrc = code as u32 >> 2;
            }
            Kind::Ssrc(_) => {
                soffset = match o {
                    Operand::Const(c) => cx.konst(Slot::Named("soffset"), c)? as u32,
                    o => cx.sreg(Slot::Named("soffset"), o, 1, false)? as u32,
                };
            }
            _ => return Err(cx.bad(Slot::Named("use"), "unexpected kind")),
        }
    }
    if !(0..=4095).contains(&inst.offset) {
        return Err(EncodeError::Range { op: info.name, what: "offset", value: inst.offset as i64 });
    }
    let (glc, slc, dlc, sc1) = cache_bits(cx);
    let (offen, idxen) = (inst.offen as u32, inst.idxen as u32);
    let op = op as u32;
    let off = inst.offset as u32;
    Ok(match cx.gen {
        Generation::Gfx9 => vec![
            0xE000_0000 | op << 18 | slc << 17 | sc1 << 15 | glc << 14 | idxen << 13 | offen << 12 | off,
            vaddr | vdata << 8 | srsrc << 16 | (acc as u32) << 23 | soffset << 24,
        ],
        Generation::Gfx11 => vec![
            0xE000_0000 | op << 18 | glc << 14 | dlc << 13 | slc << 12 | off,
            vaddr | vdata << 8 | srsrc << 16 | offen << 22 | idxen << 23 | soffset << 24,
        ],
    })
}

/// In the VOP3 form of a VOP2/VOPC instruction, the second source is a full 9-bit
/// source (SGPR, constant) rather than the VGPR-only `vsrc1`.
pub(crate) fn widen(k: Kind, e64: bool) -> Kind {
    match k {
        Kind::Vgpr(n) if e64 => Kind::Src(n),
        k => k,
    }
}
