//! Decoder: bytes -> [`Inst`], the inverse of the encoder for every table entry.
//! It never panics: any byte string yields an instruction or a [`DecodeError`].

use std::collections::HashMap;
use std::fmt;
use std::sync::OnceLock;

use crate::inst::{Cache, Inst, Mods, Operand};
use crate::opcodes::{Format, Kind, OpFlags, Opcode};
use crate::regs::{is_inline_code, PhysReg, Reg};
use crate::target::{Generation, Gpu, Target};

/// Why bytes do not decode.
#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// Fewer bytes than the instruction needs.
    Truncated,
    /// The encoding is not one of our table's instructions on this GPU.
    Unknown { word: u32 },
    /// An operand field holds a value the instruction cannot take.
    BadOperand { op: &'static str, field: &'static str, value: u32 },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Truncated => write!(f, "truncated instruction"),
            DecodeError::Unknown { word } => write!(f, "unknown instruction {word:#010x}"),
            DecodeError::BadOperand { op, field, value } => {
                write!(f, "{op}: invalid {field} {value:#x}")
            }
        }
    }
}

impl std::error::Error for DecodeError {}

/// The decoder's view of a format: FLAT segments are distinct, every VOP3-encoded
/// instruction (native or e64) shares one opcode space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Space {
    Fmt(Format),
    Vop3,
}

type Map = HashMap<(Gpu, Space, u16), (Opcode, bool)>;

fn map() -> &'static Map {
    static MAP: OnceLock<Map> = OnceLock::new();
    MAP.get_or_init(|| {
        let mut m = Map::new();
        for op in Opcode::ALL {
            let info = op.info();
            for gpu in Gpu::ALL {
                let fmt = info.format(gpu);
                if let Some(n) = info.opcode(gpu) {
                    let space = if matches!(fmt, Format::Vop3 | Format::Vop3b) { Space::Vop3 } else { Space::Fmt(fmt) };
                    m.insert((gpu, space, n), (op, false));
                }
                if let Some(n) = info.opcode_e64(gpu) {
                    m.insert((gpu, Space::Vop3, n), (op, true));
                }
            }
        }
        m
    })
}

struct Dec<'a> {
    bytes: &'a [u8],
    target: Target,
    gen: Generation,
    name: &'static str,
    literal: Option<u32>,
    lit_ok: bool,
}

impl Dec<'_> {
    fn bad(&self, field: &'static str, value: u32) -> DecodeError {
        DecodeError::BadOperand { op: self.name, field, value }
    }
    fn word(&self, i: usize) -> Result<u32, DecodeError> {
        let b = self.bytes.get(i * 4..i * 4 + 4).ok_or(DecodeError::Truncated)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn sreg(&self, code: u32, n: u8, field: &'static str) -> Result<Operand, DecodeError> {
        if code < 128 {
            Ok(Operand::Reg(Reg::new(PhysReg(code as u16), n)))
        } else {
            Err(self.bad(field, code))
        }
    }
    /// A scalar-or-constant source code (8 bits, or the low part of a 9-bit VALU source).
    fn ssrc(&mut self, code: u32, n: u8, field: &'static str, lit_word: usize) -> Result<Operand, DecodeError> {
        match code {
            0..=127 => self.sreg(code, n, field),
            253 => Ok(Operand::Reg(Reg::new(PhysReg::SCC, 1))),
            235..=238 if n <= 2 => Ok(Operand::Reg(Reg::new(PhysReg(code as u16), n))),
            255 if self.lit_ok => {
                let v = self.word(lit_word)?;
                self.literal = Some(v);
                Ok(Operand::Literal(v))
            }
            c if is_inline_code(c as u16) => Ok(Operand::Const(c as u8)),
            _ => Err(self.bad(field, code)),
        }
    }
    fn vsrc(&mut self, code: u32, k: Kind, field: &'static str, lit_word: usize) -> Result<Operand, DecodeError> {
        let wave = self.target.wave;
        match k {
            Kind::Vgpr(n) | Kind::Vdata(n) if code >= 256 => Ok(Operand::v(code as u16 - 256, n)),
            Kind::Agpr(n) if code >= 256 => Ok(Operand::a(code as u16 - 256, n)),
            Kind::Src(n) if code >= 256 => Ok(Operand::v(code as u16 - 256, n)),
            Kind::Src(n) | Kind::Ssrc(n) if code < 256 => self.ssrc(code, n, field, lit_word),
            Kind::Sreg(n) | Kind::Sdst(n) if code < 256 => self.sreg(code, n, field),
            Kind::Mask if code < 256 => self.sreg(code, k.size(wave), field),
            _ => Err(self.bad(field, code)),
        }
    }
}

fn lookup(gpu: Gpu, space: Space, n: u32, w: u32) -> Result<(Opcode, bool), DecodeError> {
    map().get(&(gpu, space, n as u16)).copied().ok_or(DecodeError::Unknown { word: w })
}

/// Decodes one instruction from the start of `bytes`; returns it and its length in bytes.
pub fn decode(bytes: &[u8], target: Target) -> Result<(Inst, usize), DecodeError> {
    let gpu = target.gpu;
    let gen = gpu.generation();
    let mut d = Dec { bytes, target, gen, name: "", literal: None, lit_ok: false };
    let w = d.word(0)?;
    let top = |bits: u32| w >> (32 - bits);
    let wave = target.wave;
    let (inst, words) = if top(7) == 0x3F {
        let (op, _) = lookup(gpu, Space::Fmt(Format::Vop1), w >> 9 & 0xFF, w)?;
        dec_vop_short(&mut d, op, Format::Vop1, w)?
    } else if top(7) == 0x3E {
        let (op, _) = lookup(gpu, Space::Fmt(Format::Vopc), w >> 17 & 0xFF, w)?;
        dec_vop_short(&mut d, op, Format::Vopc, w)?
    } else if gen == Generation::Gfx11 && top(6) == 0x32 {
        if wave != crate::target::WaveSize::W32 {
            return Err(DecodeError::Unknown { word: w });
        }
        let (x, _) = lookup(gpu, Space::Fmt(Format::Vopd), w >> 22 & 0xF, w)?;
        let (y, _) = lookup(gpu, Space::Fmt(Format::Vopd), w >> 17 & 0x1F, w)?;
        dec_vopd(&mut d, x, y, w)?
    } else if top(1) == 0 {
        let (op, _) = lookup(gpu, Space::Fmt(Format::Vop2), w >> 25 & 0x3F, w)?;
        dec_vop_short(&mut d, op, Format::Vop2, w)?
    } else if top(9) == 0x17D {
        let (op, _) = lookup(gpu, Space::Fmt(Format::Sop1), w >> 8 & 0xFF, w)?;
        dec_salu(&mut d, op, Format::Sop1, w)?
    } else if top(9) == 0x17E {
        let (op, _) = lookup(gpu, Space::Fmt(Format::Sopc), w >> 16 & 0x7F, w)?;
        dec_salu(&mut d, op, Format::Sopc, w)?
    } else if top(9) == 0x17F {
        let (op, _) = lookup(gpu, Space::Fmt(Format::Sopp), w >> 16 & 0x7F, w)?;
        dec_salu(&mut d, op, Format::Sopp, w)?
    } else if top(4) == 0xB {
        let (op, _) = lookup(gpu, Space::Fmt(Format::Sopk), w >> 23 & 0x1F, w)?;
        dec_salu(&mut d, op, Format::Sopk, w)?
    } else if top(2) == 0b10 {
        let (op, _) = lookup(gpu, Space::Fmt(Format::Sop2), w >> 23 & 0x7F, w)?;
        dec_salu(&mut d, op, Format::Sop2, w)?
    } else if (gen == Generation::Gfx9 && top(9) == 0x1A7) || (gen == Generation::Gfx11 && top(8) == 0xCC) {
        let (op, _) = lookup(gpu, Space::Fmt(Format::Vop3p), w >> 16 & 0x7F, w)?;
        dec_vop3p(&mut d, op, w)?
    } else if (gen == Generation::Gfx9 && top(6) == 0x34) || (gen == Generation::Gfx11 && top(6) == 0x35) {
        let (op, e64) = lookup(gpu, Space::Vop3, w >> 16 & 0x3FF, w)?;
        dec_vop3(&mut d, op, e64, w)?
    } else if (gen == Generation::Gfx9 && top(6) == 0x30) || (gen == Generation::Gfx11 && top(6) == 0x3D) {
        let (op, _) = lookup(gpu, Space::Fmt(Format::Smem), w >> 18 & 0xFF, w)?;
        dec_smem(&mut d, op, w)?
    } else if top(6) == 0x36 {
        let n = if gen == Generation::Gfx9 { w >> 17 & 0xFF } else { w >> 18 & 0xFF };
        let (op, _) = lookup(gpu, Space::Fmt(Format::Ds), n, w)?;
        dec_ds(&mut d, op, w)?
    } else if top(6) == 0x37 {
        let seg = if gen == Generation::Gfx9 { w >> 14 & 3 } else { w >> 16 & 3 };
        let fmt = match seg {
            0 => Format::Flat,
            1 => Format::Scratch,
            2 => Format::Global,
            _ => return Err(DecodeError::Unknown { word: w }),
        };
        let (op, _) = lookup(gpu, Space::Fmt(fmt), w >> 18 & 0x7F, w)?;
        dec_flat(&mut d, op, fmt, w)?
    } else if top(6) == 0x38 {
        let n = if gen == Generation::Gfx9 { w >> 18 & 0x7F } else { w >> 18 & 0xFF };
        let (op, _) = lookup(gpu, Space::Fmt(Format::Mubuf), n, w)?;
        dec_mubuf(&mut d, op, w)?
    } else {
        return Err(DecodeError::Unknown { word: w });
    };
    let _ = wave;
    let len = (words + d.literal.is_some() as usize) * 4;
    Ok((inst, len))
}

fn dec_salu(d: &mut Dec, op: Opcode, fmt: Format, w: u32) -> Result<(Inst, usize), DecodeError> {
    let info = op.info();
    d.name = info.name;
    d.lit_ok = true;
    let mut inst = Inst::new(op, vec![], vec![]);
    let wave = d.target.wave;
    let sdst = w >> 16 & 0x7F;
    let (s0, s1) = match fmt {
        Format::Sop1 => (w & 0xFF, 0),
        Format::Sop2 | Format::Sopc => (w & 0xFF, w >> 8 & 0xFF),
        _ => (0, 0),
    };
    for &k in info.defs(d.target.gpu) {
        inst.defs.push(d.sreg(sdst, k.size(wave), "sdst")?);
    }
    for (i, &k) in info.uses(d.target.gpu).iter().enumerate() {
        let code = if fmt == Format::Sopk {
            sdst
        } else if i == 0 {
            s0
        } else {
            s1
        };
        let o = match k {
            Kind::Sreg(n) => d.sreg(code, n, "ssrc")?,
            Kind::Ssrc(n) if fmt == Format::Sopk => d.sreg(code, n, "sdst")?,
            Kind::Ssrc(n) => d.ssrc(code, n, "ssrc", 1)?,
            _ => return Err(d.bad("ssrc", code)),
        };
        inst.uses.push(o);
    }
    if matches!(fmt, Format::Sopk | Format::Sopp) {
        inst.imm = w as u16;
    }
    Ok((inst, 1))
}

fn vcc(d: &Dec) -> Operand {
    Operand::Reg(Reg::vcc(Kind::Mask.size(d.target.wave)))
}

fn vdst_operand(d: &Dec, k: Kind, code: u32) -> Result<Operand, DecodeError> {
    match k {
        Kind::Vgpr(n) | Kind::Vdata(n) => Ok(Operand::v(code as u16, n)),
        Kind::Agpr(n) => Ok(Operand::a(code as u16, n)),
        Kind::Sdst(n) => d.sreg(code, n, "vdst"),
        Kind::Mask => d.sreg(code, Kind::Mask.size(d.target.wave), "sdst"),
        _ => Err(d.bad("vdst", code)),
    }
}

fn dec_vop_short(d: &mut Dec, op: Opcode, fmt: Format, w: u32) -> Result<(Inst, usize), DecodeError> {
    let info = op.info();
    d.name = info.name;
    d.lit_ok = true;
    let mut inst = Inst::new(op, vec![], vec![]);
    let vdst = w >> 17 & 0xFF;
    for &k in info.defs(d.target.gpu) {
        inst.defs.push(if k == Kind::Mask { vcc(d) } else { vdst_operand(d, k, vdst)? });
    }
    for (i, &k) in info.uses(d.target.gpu).iter().enumerate() {
        let o = match (i, k) {
            (_, Kind::Mask) => vcc(d),
            (0, _) => d.vsrc(w & 0x1FF, k, "src0", 1)?,
            // v_fmamk/v_fmaak: K is the literal dword (shared with a literal src0).
            (_, Kind::KImm) => {
                let v = d.word(1)?;
                d.literal = Some(v);
                Operand::Literal(v)
            }
            (_, _) => d.vsrc(256 + (w >> 9 & 0xFF), k, "vsrc1", 1)?,
        };
        inst.uses.push(o);
    }
    let _ = fmt;
    Ok((inst, 1))
}

fn dec_vopd(d: &mut Dec, x: Opcode, y: Opcode, w: u32) -> Result<(Inst, usize), DecodeError> {
    let gpu = d.target.gpu;
    d.name = x.info().name;
    d.lit_ok = true;
    let w1 = d.word(1)?;
    let dx = w1 >> 24;
    let dy = (w1 >> 17 & 0x7F) << 1 | ((dx & 1) ^ 1);
    let mut inst = Inst::vopd(x, y, vec![Operand::v(dx as u16, 1), Operand::v(dy as u16, 1)], vec![]);
    for (op, src0, vsrc1) in [(x, w & 0x1FF, w >> 9 & 0xFF), (y, w1 & 0x1FF, w1 >> 9 & 0xFF)] {
        for (i, &k) in op.info().uses(gpu).iter().enumerate() {
            let o = match (i, k) {
                (_, Kind::Mask) => vcc(d),
                (0, _) => d.vsrc(src0, k, "src0", 2)?,
                (_, Kind::KImm) => {
                    let v = d.word(2)?;
                    d.literal = Some(v);
                    Operand::Literal(v)
                }
                (_, _) => d.vsrc(256 + vsrc1, k, "vsrc1", 2)?,
            };
            inst.uses.push(o);
        }
    }
    Ok((inst, 2))
}

fn dec_vop3(d: &mut Dec, op: Opcode, e64: bool, w: u32) -> Result<(Inst, usize), DecodeError> {
    let info = op.info();
    d.name = info.name;
    d.lit_ok = d.gen == Generation::Gfx11;
    let w1 = d.word(1)?;
    let fmt = info.format(d.target.gpu);
    let mut inst = Inst::new(op, vec![], vec![]);
    inst.e64 = e64;
    let vdst = w & 0xFF;
    let mut vop3b = fmt == Format::Vop3b;
    for &k in info.defs(d.target.gpu) {
        let o = match k {
            Kind::Mask if fmt != Format::Vopc => {
                vop3b = true;
                d.sreg(w >> 8 & 0x7F, Kind::Mask.size(d.target.wave), "sdst")?
            }
            _ => vdst_operand(d, k, vdst)?,
        };
        inst.defs.push(o);
    }
    let srcs = [w1 & 0x1FF, w1 >> 9 & 0x1FF, w1 >> 18 & 0x1FF];
    for (i, &k) in info.uses(d.target.gpu).iter().enumerate() {
        let code = *srcs.get(i).ok_or(d.bad("src", i as u32))?;
        inst.uses.push(d.vsrc(code, crate::encode::widen(k, e64), "src", 2)?);
    }
    let mut m = Mods { clamp: w >> 15 & 1 != 0, omod: (w1 >> 27 & 3) as u8, neg: (w1 >> 29) as u8, ..Mods::default() };
    if !vop3b {
        m.abs = (w >> 8 & 7) as u8;
        m.op_sel = (w >> 11 & 0xF) as u8;
    }
    inst.mods = m;
    Ok((inst, 2))
}

fn dec_vop3p(d: &mut Dec, op: Opcode, w: u32) -> Result<(Inst, usize), DecodeError> {
    let info = op.info();
    d.name = info.name;
    d.lit_ok = d.gen == Generation::Gfx11;
    let w1 = d.word(1)?;
    let mut inst = Inst::new(op, vec![], vec![]);
    for &k in info.defs(d.target.gpu) {
        inst.defs.push(vdst_operand(d, k, w & 0xFF)?);
    }
    let srcs = [w1 & 0x1FF, w1 >> 9 & 0x1FF, w1 >> 18 & 0x1FF];
    for (i, &k) in info.uses(d.target.gpu).iter().enumerate() {
        let code = *srcs.get(i).ok_or(d.bad("src", i as u32))?;
        inst.uses.push(d.vsrc(code, k, "src", 2)?);
    }
    inst.mods = Mods {
        clamp: w >> 15 & 1 != 0,
        op_sel: (w >> 11 & 7) as u8,
        op_sel_hi: ((w >> 14 & 1) << 2 | (w1 >> 27 & 3)) as u8,
        neg_hi: (w >> 8 & 7) as u8,
        neg: (w1 >> 29) as u8,
        ..Mods::default()
    };
    Ok((inst, 2))
}

fn dec_smem(d: &mut Dec, op: Opcode, w: u32) -> Result<(Inst, usize), DecodeError> {
    let info = op.info();
    d.name = info.name;
    let w1 = d.word(1)?;
    let mut inst = Inst::new(op, vec![], vec![]);
    let wave = d.target.wave;
    inst.defs.push(d.sreg(w >> 6 & 0x7F, info.defs(d.target.gpu).first().map_or(1, |k| k.size(wave)), "sdata")?);
    let bn = match info.uses(d.target.gpu).first() {
        Some(Kind::Sreg(n)) => *n,
        _ => 2,
    };
    inst.uses.push(d.sreg((w & 0x3F) << 1, bn, "sbase")?);
    let off21 = ((w1 & 0x1F_FFFF) << 11) as i32 >> 11;
    match d.gen {
        Generation::Gfx9 => {
            if w >> 16 & 1 != 0 {
                inst.cache |= Cache::GLC;
            }
            let imm = w >> 17 & 1 != 0;
            let soe = w >> 14 & 1 != 0;
            match (imm, soe) {
                (true, false) => {
                    inst.uses.push(Operand::Off);
                    inst.offset = (w1 & 0x1F_FFFF) as i32;
                }
                (false, _) => {
                    inst.uses.push(d.sreg(w1 & 0x7F, 1, "soffset")?);
                }
                (true, true) => {
                    inst.uses.push(d.sreg(w1 >> 25, 1, "soffset")?);
                    inst.offset = (w1 & 0x1F_FFFF) as i32;
                }
            }
        }
        Generation::Gfx11 => {
            if w >> 14 & 1 != 0 {
                inst.cache |= Cache::GLC;
            }
            if w >> 13 & 1 != 0 {
                inst.cache |= Cache::DLC;
            }
            let s = w1 >> 25;
            inst.uses.push(if s == 0x7C { Operand::Off } else { d.sreg(s, 1, "soffset")? });
            inst.offset = off21;
        }
    }
    Ok((inst, 2))
}

fn dec_ds(d: &mut Dec, op: Opcode, w: u32) -> Result<(Inst, usize), DecodeError> {
    let info = op.info();
    d.name = info.name;
    let w1 = d.word(1)?;
    let acc = d.gen == Generation::Gfx9 && w >> 25 & 1 != 0;
    let mut inst = Inst::new(op, vec![], vec![]);
    let data_reg = |k: Kind, idx: u32| -> Result<Operand, DecodeError> {
        match k {
            Kind::Vdata(n) if acc => Ok(Operand::a(idx as u16, n)),
            Kind::Vdata(n) | Kind::Vgpr(n) => Ok(Operand::v(idx as u16, n)),
            _ => Err(DecodeError::BadOperand { op: info.name, field: "data", value: idx }),
        }
    };
    for &k in info.defs(d.target.gpu) {
        inst.defs.push(data_reg(k, w1 >> 24)?);
    }
    for (i, &k) in info.uses(d.target.gpu).iter().enumerate() {
        let idx = w1 >> (8 * i as u32) & 0xFF;
        inst.uses.push(if i == 0 { data_reg(Kind::Vgpr(1), idx)? } else { data_reg(k, idx)? });
    }
    if info.flags.contains(OpFlags::DS2) {
        inst.offset = (w & 0xFF) as i32;
        inst.offset1 = (w >> 8 & 0xFF) as u8;
    } else {
        inst.offset = (w & 0xFFFF) as i32;
    }
    Ok((inst, 2))
}

fn cache_from(gpu: Gpu, glc: bool, slc: bool, dlc: bool, sc1: bool) -> Cache {
    let mut c = Cache::empty();
    match gpu {
        Gpu::Gfx942 => {
            c.set(Cache::SC0, glc);
            c.set(Cache::NT, slc);
            c.set(Cache::SC1, sc1);
        }
        _ => {
            c.set(Cache::GLC, glc);
            c.set(Cache::SLC, slc);
            c.set(Cache::DLC, dlc && gpu == Gpu::Gfx1100);
        }
    }
    c
}

fn dec_flat(d: &mut Dec, op: Opcode, fmt: Format, w: u32) -> Result<(Inst, usize), DecodeError> {
    let info = op.info();
    d.name = info.name;
    let w1 = d.word(1)?;
    let gpu = d.target.gpu;
    let gen = d.gen;
    let mut inst = Inst::new(op, vec![], vec![]);
    let (glc, slc, dlc, sc1) = match gen {
        Generation::Gfx9 => (w >> 16 & 1 != 0, w >> 17 & 1 != 0, false, w >> 25 & 1 != 0),
        Generation::Gfx11 => (w >> 14 & 1 != 0, w >> 15 & 1 != 0, w >> 13 & 1 != 0, false),
    };
    inst.cache = cache_from(gpu, glc, slc, dlc, sc1);
    let acc = gen == Generation::Gfx9 && w1 >> 23 & 1 != 0;
    let off13 = ((w & 0x1FFF) << 19) as i32 >> 19;
    inst.offset = if fmt == Format::Flat { (w & 0xFFF) as i32 } else { off13 };
    let off_null = if gen == Generation::Gfx11 { 0x7C } else { 0x7F };
    let saddr_code = w1 >> 16 & 0x7F;
    let saddr = if fmt == Format::Flat || saddr_code == off_null { None } else { Some(saddr_code) };
    let vaddr_present = match fmt {
        Format::Scratch => match (gpu, gen) {
            (Gpu::Gfx942, _) => w >> 13 & 1 != 0,
            (_, Generation::Gfx11) => w1 >> 23 & 1 != 0,
            // gfx90a: a scratch access with an SGPR offset has no VGPR address.
            _ => saddr.is_none(),
        },
        _ => true,
    };
    let data = |k: Kind, idx: u32| -> Operand {
        match k {
            Kind::Vdata(n) if acc => Operand::a(idx as u16, n),
            Kind::Vdata(n) | Kind::Vgpr(n) => Operand::v(idx as u16, n),
            _ => Operand::Off,
        }
    };
    let returns = !info.flags.contains(OpFlags::OPT_DEF) || inst.cache.contains(Cache::atomic_return(gpu));
    if returns {
        for &k in info.defs(d.target.gpu) {
            inst.defs.push(data(k, w1 >> 24));
        }
    }
    for &k in info.uses(d.target.gpu) {
        let o = match k {
            Kind::Vaddr => {
                if !vaddr_present {
                    Operand::Off
                } else {
                    let n = if fmt == Format::Flat || (fmt == Format::Global && saddr.is_none()) { 2 } else { 1 };
                    Operand::v((w1 & 0xFF) as u16, n)
                }
            }
            Kind::Saddr => match saddr {
                None => Operand::Off,
                Some(s) => d.sreg(s, if fmt == Format::Global { 2 } else { 1 }, "saddr")?,
            },
            k => data(k, w1 >> 8 & 0xFF),
        };
        inst.uses.push(o);
    }
    Ok((inst, 2))
}

fn dec_mubuf(d: &mut Dec, op: Opcode, w: u32) -> Result<(Inst, usize), DecodeError> {
    let info = op.info();
    d.name = info.name;
    let w1 = d.word(1)?;
    let gpu = d.target.gpu;
    let mut inst = Inst::new(op, vec![], vec![]);
    let (glc, slc, dlc, sc1, offen, idxen, acc) = match d.gen {
        Generation::Gfx9 => (
            w >> 14 & 1 != 0,
            w >> 17 & 1 != 0,
            false,
            w >> 15 & 1 != 0,
            w >> 12 & 1 != 0,
            w >> 13 & 1 != 0,
            w1 >> 23 & 1 != 0,
        ),
        Generation::Gfx11 => {
            (w >> 14 & 1 != 0, w >> 12 & 1 != 0, w >> 13 & 1 != 0, false, w1 >> 22 & 1 != 0, w1 >> 23 & 1 != 0, false)
        }
    };
    inst.cache = cache_from(gpu, glc, slc, dlc, sc1);
    inst.offen = offen;
    inst.idxen = idxen;
    inst.offset = (w & 0xFFF) as i32;
    let data = |k: Kind| -> Operand {
        let idx = (w1 >> 8 & 0xFF) as u16;
        match k {
            Kind::Vdata(n) if acc => Operand::a(idx, n),
            Kind::Vdata(n) | Kind::Vgpr(n) => Operand::v(idx, n),
            _ => Operand::Off,
        }
    };
    for &k in info.defs(d.target.gpu) {
        inst.defs.push(data(k));
    }
    for &k in info.uses(d.target.gpu) {
        let o = match k {
            Kind::Vaddr => {
                let n = offen as u8 + idxen as u8;
                if n == 0 {
                    Operand::Off
                } else {
                    Operand::v((w1 & 0xFF) as u16, n)
                }
            }
            Kind::Sreg(n) => d.sreg((w1 >> 16 & 0x1F) << 2, n, "srsrc")?,
            Kind::Ssrc(_) => {
                let c = w1 >> 24;
                if c < 128 {
                    d.sreg(c, 1, "soffset")?
                } else if is_inline_code(c as u16) {
                    Operand::Const(c as u8)
                } else {
                    return Err(d.bad("soffset", c));
                }
            }
            k => data(k),
        };
        inst.uses.push(o);
    }
    Ok((inst, 2))
}

/// Decodes a whole buffer into instructions (stops at the first error).
pub fn decode_all(mut bytes: &[u8], target: Target) -> Result<Vec<Inst>, DecodeError> {
    let mut v = Vec::new();
    while !bytes.is_empty() {
        let (i, n) = decode(bytes, target)?;
        v.push(i);
        bytes = &bytes[n.min(bytes.len())..];
    }
    Ok(v)
}
