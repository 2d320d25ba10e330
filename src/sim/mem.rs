//! Memory instructions: SMEM, LDS (DS), and vector memory (FLAT, GLOBAL, SCRATCH,
//! MUBUF). Each one reads or writes memory when it issues and records an
//! outstanding operation (see [`super::waitcnt`]) that poisons its result registers.

use amdgpu_isa::{Counters, Generation, Operand};

use super::decode::{Access, Atom, DInst, Ds, Seg};
use super::memory::{swizzle, Device};
use super::operands::{s32, s64, set_v_dwords, v32, v64, v_dword};
use super::state::Wave;

/// High 32 bits of flat addresses that reach LDS (`src_shared_base`).
pub const SHARED_APERTURE_HI: u32 = 0x1000_0000;
/// High 32 bits of flat addresses that reach private memory (`src_private_base`).
pub const PRIVATE_APERTURE_HI: u32 = 0x2000_0000;

/// What memory instructions act on besides the wave.
pub struct MemCtx<'a> {
    pub dev: &'a mut Device,
    pub lds: &'a mut [u8],
    /// LDS race tracking (None = off).
    pub races: Option<&'a mut LdsRaces>,
    /// The executing wave's index in its work-group.
    pub wave: u32,
    /// See [`super::Options::strict_lds_alignment`].
    pub strict_lds_alignment: bool,
}

/// LDS data-race detection: for each dword, the wave that last wrote it and the
/// waves that read it, within the current barrier epoch. Two accesses by different
/// waves to the same dword between the same two barriers, at least one of them a
/// plain (non-atomic) write, are a race: their order is not defined.
#[derive(Clone, Debug, Default)]
pub struct LdsRaces {
    pub epoch: u32,
    writer: Vec<(u32, u32)>,
    readers: Vec<(u64, u32)>,
}

impl LdsRaces {
    pub fn new(bytes: usize) -> LdsRaces {
        let n = bytes.div_ceil(4);
        LdsRaces { epoch: 1, writer: vec![(0, 0); n], readers: vec![(0, 0); n] }
    }

    fn access(&mut self, wave: u32, addr: u64, size: u64, write: bool) -> Result<(), String> {
        let e = self.epoch;
        let bit = 1u64 << (wave & 63);
        for d in (addr / 4)..(addr + size).div_ceil(4) {
            let d = d as usize;
            let Some(&(wr, we)) = self.writer.get(d) else { continue };
            if we == e && wr != 0 && wr - 1 != wave {
                return Err(format!(
                    "LDS race: wave {wave} {} LDS[{:#x}] that wave {} wrote since the last barrier",
                    if write { "writes" } else { "reads" },
                    d * 4,
                    wr - 1
                ));
            }
            if write {
                let (rd, re) = self.readers[d];
                if re == e && rd & !bit != 0 {
                    return Err(format!(
                        "LDS race: wave {wave} writes LDS[{:#x}] that wave {} read since the last barrier",
                        d * 4,
                        (rd & !bit).trailing_zeros()
                    ));
                }
                self.writer[d] = (wave + 1, e);
            } else {
                let r = &mut self.readers[d];
                *r = if r.1 == e { (r.0 | bit, e) } else { (bit, e) };
            }
        }
        Ok(())
    }
}

fn issue(w: &mut Wave, d: &DInst, counters: Counters, lgkm_ooo: bool, dst: Option<&Operand>) -> Result<(), String> {
    let regs: Vec<(u16, u8)> = match dst {
        Some(Operand::Reg(r)) => vec![(r.base.0, r.size)],
        _ => vec![],
    };
    let pc = w.pc;
    w.pending.issue(counters, lgkm_ooo, &regs, pc, &d.text)
}

/// Scalar loads.
pub fn smem(w: &mut Wave, d: &DInst, dwords: u8, buffer: bool, ctx: &mut MemCtx) -> Result<(), String> {
    let i = &d.inst;
    let soff = match i.uses.get(1) {
        Some(Operand::Off) | None => 0u64,
        Some(o) => s32(w, o) as u64,
    };
    let off = (i.offset as i64 as u64).wrapping_add(soff);
    let size = dwords as u64 * 4;
    let addr = if buffer {
        let b = i.uses[0].as_reg().ok_or("bad resource")?.base.0 as usize;
        let (w0, w1, w2) = (w.sget(b), w.sget(b + 1), w.sget(b + 2));
        let base = w0 as u64 | ((w1 & 0xffff) as u64) << 32;
        if off + size > w2 as u64 {
            return Err(format!("s_buffer_load out of bounds: offset {off:#x} + {size} > num_records {w2:#x}"));
        }
        base + off
    } else {
        s64(w, &i.uses[0]).wrapping_add(off)
    } & !3;
    let mut buf = vec![0u8; size as usize];
    ctx.dev.read(addr, &mut buf).map_err(|e| e.to_string())?;
    let dst = i.defs[0];
    if let Operand::Reg(r) = dst {
        for k in 0..dwords as usize {
            let v = u32::from_le_bytes(buf[k * 4..k * 4 + 4].try_into().unwrap());
            w.sset(r.base.0 as usize + k, v);
        }
    }
    issue(w, d, Counters::LGKM, true, Some(&dst))
}

fn lds_range(lds: &[u8], addr: u64, size: u64) -> Result<usize, String> {
    if addr + size > lds.len() as u64 {
        return Err(format!("LDS access of {size} bytes at {addr:#x} outside the work-group's {} bytes", lds.len()));
    }
    Ok(addr as usize)
}

/// The atomic operations on 32- and 64-bit values (`AddF32` only exists on 32).
macro_rules! atomic_fn {
    ($name:ident, $u:ty, $i:ty, $add_f32:expr) => {
        fn $name(op: Atom, old: $u, src: $u, cmp: $u) -> $u {
            match op {
                Atom::Add => old.wrapping_add(src),
                Atom::Sub => old.wrapping_sub(src),
                Atom::SMin => (old as $i).min(src as $i) as $u,
                Atom::UMin => old.min(src),
                Atom::SMax => (old as $i).max(src as $i) as $u,
                Atom::UMax => old.max(src),
                Atom::And => old & src,
                Atom::Or => old | src,
                Atom::Xor => old ^ src,
                Atom::Inc => if old >= src { 0 } else { old + 1 },
                Atom::Dec => if old == 0 || old > src { src } else { old - 1 },
                Atom::Swap => src,
                Atom::CmpSwap => if old == cmp { src } else { old },
                Atom::AddF32 => $add_f32(old, src),
            }
        }
    };
}

atomic_fn!(atomic32, u32, i32, |old: u32, src: u32| (f32::from_bits(old) + f32::from_bits(src)).to_bits());
atomic_fn!(atomic64, u64, i64, |old: u64, _src: u64| old);

/// Where one lane's access goes.
enum Place {
    Global(u64),
    Lds(u64),
    /// Swizzled private memory: byte `off` of lane `lane` lives at
    /// `base + swizzle(off, lane, stride)` (elements of 4 bytes interleaved).
    Swz { base: u64, off: u64, lane: u32, stride: u32 },
}

/// Splits a swizzled access into (device address, range in the buffer) pieces.
fn swz_pieces(base: u64, off: u64, lane: u32, stride: u32, len: usize) -> Vec<(u64, std::ops::Range<usize>)> {
    let mut v = Vec::new();
    let mut k = 0usize;
    while k < len {
        let o = off + k as u64;
        let n = ((4 - o % 4) as usize).min(len - k);
        v.push((base + swizzle(o, lane, stride), k..k + n));
        k += n;
    }
    v
}

fn extend(bytes: &[u8], signed: bool) -> u32 {
    match (bytes.len(), signed) {
        (1, false) => bytes[0] as u32,
        (1, true) => bytes[0] as i8 as i32 as u32,
        (2, false) => u16::from_le_bytes([bytes[0], bytes[1]]) as u32,
        (2, true) => i16::from_le_bytes([bytes[0], bytes[1]]) as i32 as u32,
        _ => 0,
    }
}

fn read_place(ctx: &mut MemCtx, p: &Place, buf: &mut [u8]) -> Result<(), String> {
    match *p {
        Place::Global(a) => ctx.dev.read(a, buf).map_err(|e| e.to_string()),
        Place::Lds(a) => {
            let o = lds_range(ctx.lds, a, buf.len() as u64)?;
            buf.copy_from_slice(&ctx.lds[o..o + buf.len()]);
            Ok(())
        }
        Place::Swz { base, off, lane, stride } => {
            for (a, r) in swz_pieces(base, off, lane, stride, buf.len()) {
                ctx.dev.read(a, &mut buf[r]).map_err(|e| e.to_string())?;
            }
            Ok(())
        }
    }
}

fn write_place(ctx: &mut MemCtx, p: &Place, data: &[u8]) -> Result<(), String> {
    match *p {
        Place::Global(a) => ctx.dev.write(a, data).map_err(|e| e.to_string()),
        Place::Lds(a) => {
            let o = lds_range(ctx.lds, a, data.len() as u64)?;
            ctx.lds[o..o + data.len()].copy_from_slice(data);
            Ok(())
        }
        Place::Swz { base, off, lane, stride } => {
            for (a, r) in swz_pieces(base, off, lane, stride, data.len()) {
                ctx.dev.write(a, &data[r]).map_err(|e| e.to_string())?;
            }
            Ok(())
        }
    }
}

/// Performs `acc` for one lane at `p`; returns the dwords loaded/returned.
/// Up to 4 dwords returned per lane.
#[derive(Clone, Copy, Default)]
struct LaneOut {
    n: u8,
    v: [u32; 4],
}

impl LaneOut {
    fn clear(&mut self) {
        self.n = 0;
    }
    fn push(&mut self, x: u32) {
        if (self.n as usize) < 4 {
            self.v[self.n as usize] = x;
            self.n += 1;
        }
    }
    fn extend<I: IntoIterator<Item = u32>>(&mut self, it: I) {
        for x in it {
            self.push(x);
        }
    }
    fn extend_from_slice(&mut self, o: &LaneOut) {
        for k in 0..o.n as usize {
            self.push(o.v[k]);
        }
    }
    fn as_slice(&self) -> &[u32] {
        &self.v[..self.n as usize]
    }
}

fn access(ctx: &mut MemCtx, p: Place, acc: Access, w: &Wave, data: Option<&Operand>, lane: u32, out: &mut LaneOut) -> Result<(), String> {
    out.clear();
    if let (Place::Lds(a), Some(r)) = (&p, ctx.races.as_deref_mut()) {
        match acc {
            Access::Load { size, .. } | Access::LoadD16 { size, .. } => r.access(ctx.wave, *a, size as u64, false)?,
            Access::Store { size } => r.access(ctx.wave, *a, size as u64, true)?,
            Access::Atomic { .. } => {}
        }
    }
    match acc {
        Access::Load { size, signed } => {
            let mut buf = [0u8; 16];
            let b = &mut buf[..size as usize];
            read_place(ctx, &p, b)?;
            if size < 4 {
                out.push(extend(b, signed));
            } else {
                for c in b.chunks_exact(4) {
                    out.push(u32::from_le_bytes(c.try_into().unwrap()));
                }
            }
        }
        Access::LoadD16 { size, signed, .. } => {
            // The 16-bit value; `vmem` merges it into the destination's half.
            let mut buf = [0u8; 2];
            let b = &mut buf[..size as usize];
            read_place(ctx, &p, b)?;
            out.push(extend(b, signed) & 0xffff);
        }
        Access::Store { size } => {
            let o = data.ok_or("store without data")?;
            let mut buf = [0u8; 16];
            for k in 0..(size as usize).div_ceil(4) {
                buf[k * 4..k * 4 + 4].copy_from_slice(&v_dword(w, o, lane, k).to_le_bytes());
            }
            write_place(ctx, &p, &buf[..size as usize])?;
        }
        Access::Atomic { op, wide } => {
            let o = data.ok_or("atomic without data")?;
            if wide {
                let mut b = [0u8; 8];
                read_place(ctx, &p, &mut b)?;
                let old = u64::from_le_bytes(b);
                let src = v_dword(w, o, lane, 0) as u64 | (v_dword(w, o, lane, 1) as u64) << 32;
                let cmp = if op == Atom::CmpSwap { v_dword(w, o, lane, 2) as u64 | (v_dword(w, o, lane, 3) as u64) << 32 } else { 0 };
                write_place(ctx, &p, &atomic64(op, old, src, cmp).to_le_bytes())?;
                out.extend([old as u32, (old >> 32) as u32]);
            } else {
                let mut b = [0u8; 4];
                read_place(ctx, &p, &mut b)?;
                let old = u32::from_le_bytes(b);
                let src = v_dword(w, o, lane, 0);
                let cmp = if op == Atom::CmpSwap { v_dword(w, o, lane, 1) } else { 0 };
                write_place(ctx, &p, &atomic32(op, old, src, cmp).to_le_bytes())?;
                out.push(old);
            }
        }
    }
    Ok(())
}

fn acc_size(acc: Access) -> u64 {
    match acc {
        Access::Load { size, .. } | Access::LoadD16 { size, .. } | Access::Store { size } => size as u64,
        Access::Atomic { wide, .. } => if wide { 8 } else { 4 },
    }
}

/// LDS instructions.
pub fn ds(w: &mut Wave, d: &DInst, op: Ds, ctx: &mut MemCtx) -> Result<(), String> {
    let i = &d.inst;
    let exec = w.exec();
    let lanes = w.lanes;
    let dst = i.defs.first().copied();
    let mut results = [LaneOut::default(); 64];
    let mut tmp = LaneOut::default();
    match op {
        Ds::Bpermute | Ds::Permute => {
            let mut src = [0u32; 64];
            let mut addr = [0u32; 64];
            // gfx11 in wave64 permutes within each 32-lane half only.
            let span = if w.gen() == Generation::Gfx11 { 32.min(lanes) } else { lanes };
            for l in 0..lanes {
                src[l as usize] = v32(w, &i.uses[1], l);
                addr[l as usize] = (l & !(span - 1)) | (v32(w, &i.uses[0], l).wrapping_add(i.offset as u32) / 4) % span;
            }
            let mut out = [0u32; 64];
            for l in 0..lanes {
                if exec >> l & 1 == 0 {
                    continue;
                }
                if op == Ds::Bpermute {
                    out[l as usize] = src[addr[l as usize] as usize];
                } else {
                    out[addr[l as usize] as usize] = src[l as usize];
                }
            }
            for l in 0..lanes {
                if exec >> l & 1 == 1 {
                    results[l as usize].push(out[l as usize]);
                }
            }
        }
        _ => {
            for l in 0..lanes {
                if exec >> l & 1 == 0 {
                    continue;
                }
                // The address is the 32-bit sum of the VGPR and the offset (it
                // wraps: llc-22 folds constants into the offset of a base that
                // may be "negative", e.g. 315 - 5i as -5i + offset:315).
                let base = v32(w, &i.uses[0], l) as u64;
                match op {
                    Ds::One(acc) => {
                        let a = (base + i.offset as u64) & 0xffff_ffff;
                        let align = match acc {
                            Access::Atomic { .. } => acc_size(acc),
                            _ if ctx.strict_lds_alignment => acc_size(acc).min(4),
                            _ => 1,
                        };
                        if !a.is_multiple_of(align) {
                            return Err(format!("misaligned LDS access at {a:#x} (a {}-byte access needs {align}-byte alignment)", acc_size(acc)));
                        }
                        access(ctx, Place::Lds(a), acc, w, i.uses.get(1), l, &mut tmp)?;
                        results[l as usize] = tmp;
                    }
                    Ds::Read2 { elem, st64 } | Ds::Write2 { elem, st64 } => {
                        let scale = elem as u64 * if st64 { 64 } else { 1 };
                        let a0 = (base + i.offset as u64 * scale) & 0xffff_ffff;
                        let a1 = (base + i.offset1 as u64 * scale) & 0xffff_ffff;
                        let mut vals = LaneOut::default();
                        for (k, a) in [a0, a1].into_iter().enumerate() {
                            if matches!(op, Ds::Read2 { .. }) {
                                access(ctx, Place::Lds(a), Access::Load { size: elem, signed: false }, w, None, l, &mut tmp)?;
                                vals.extend_from_slice(&tmp);
                            } else {
                                access(ctx, Place::Lds(a), Access::Store { size: elem }, w, i.uses.get(1 + k), l, &mut tmp)?;
                            }
                        }
                        results[l as usize] = vals;
                    }
                    Ds::CmpStore { wide } => {
                        let a = (base + i.offset as u64) & 0xffff_ffff;
                        let size = if wide { 8 } else { 4 };
                        if !a.is_multiple_of(size) {
                            return Err(format!("misaligned LDS access at {a:#x}"));
                        }
                        // Atomic: not a race with other waves' accesses (as above).
                        let (data0, data1) = (i.uses.get(1).ok_or("ds_cmpst without data")?, i.uses.get(2).ok_or("ds_cmpst without data")?);
                        let (cmp, new) = if w.gen() == Generation::Gfx9 { (data0, data1) } else { (data1, data0) };
                        let value = |o: &Operand| v_dword(w, o, l, 0) as u64 | if wide { (v_dword(w, o, l, 1) as u64) << 32 } else { 0 };
                        let mut b = [0u8; 8];
                        read_place(ctx, &Place::Lds(a), &mut b[..size as usize])?;
                        let old = u64::from_le_bytes(b);
                        if old == value(cmp) {
                            write_place(ctx, &Place::Lds(a), &value(new).to_le_bytes()[..size as usize])?;
                        }
                        let mut out = LaneOut::default();
                        out.push(old as u32);
                        if wide {
                            out.push((old >> 32) as u32);
                        }
                        results[l as usize] = out;
                    }
                    _ => unreachable!(),
                }
            }
        }
    }
    if let Some(o) = dst {
        for l in 0..lanes {
            if exec >> l & 1 == 1 {
                set_v_dwords(w, &o, l, 0, results[l as usize].as_slice());
            }
        }
    }
    issue(w, d, Counters::LGKM, false, dst.as_ref())
}

/// FLAT, GLOBAL, SCRATCH and MUBUF instructions.
pub fn vmem(w: &mut Wave, d: &DInst, seg: Seg, acc: Access, ctx: &mut MemCtx) -> Result<(), String> {
    let i = &d.inst;
    let exec = w.exec();
    let lanes = w.lanes;
    let gen = w.gen();
    let size = acc_size(acc);
    let dst = i.defs.first().copied();
    // Operand positions: loads (va, sa), stores/atomics (va, data, sa); MUBUF loads
    // (va, rsrc, soffset), stores (data, va, rsrc, soffset).
    let (va, data, sa, rsrc, soff) = match (seg, acc) {
        (Seg::Buffer, Access::Load { .. } | Access::LoadD16 { .. }) => (i.uses.first(), None, None, i.uses.get(1), i.uses.get(2)),
        (Seg::Buffer, Access::Store { .. }) => (i.uses.get(1), i.uses.first(), None, i.uses.get(2), i.uses.get(3)),
        (Seg::Buffer, Access::Atomic { .. }) => (i.uses.get(1), i.uses.first(), None, i.uses.get(2), i.uses.get(3)),
        (_, Access::Load { .. } | Access::LoadD16 { .. }) => (i.uses.first(), None, i.uses.get(1), None, None),
        (_, _) => (i.uses.first(), i.uses.get(1), i.uses.get(2), None, None),
    };
    let mut results = [LaneOut::default(); 64];
    let mut tmp = LaneOut::default();
    for l in 0..lanes {
        if exec >> l & 1 == 0 {
            continue;
        }
        let place = match seg {
            Seg::Global => {
                let a = match sa {
                    Some(o @ Operand::Reg(_)) => s64(w, o).wrapping_add(va.map_or(0, |v| v32(w, v, l)) as u64),
                    _ => v64(w, va.ok_or("no address")?, l, false),
                };
                Place::Global(a.wrapping_add(i.offset as i64 as u64))
            }
            Seg::Flat => {
                let a = v64(w, va.ok_or("no address")?, l, false).wrapping_add(i.offset as i64 as u64);
                if matches!(acc, Access::Atomic { .. }) && (a >> 32) as u32 == PRIVATE_APERTURE_HI {
                    // The hardware's flat atomics do not reach scratch (LLVM
                    // guards a flat atomic that may point there with a branch).
                    return Err(format!("flat atomic into private memory (address {a:#x}): flat atomics reach global memory and LDS only"));
                }
                flat_place(w, a, l, size)?
            }
            Seg::Scratch => {
                let mut off = i.offset as i64 as u64;
                if let Some(o @ Operand::Reg(_)) = sa {
                    off = off.wrapping_add(s32(w, o) as u64);
                }
                if let Some(o @ Operand::Reg(_)) = va {
                    off = off.wrapping_add(v32(w, o, l) as u64);
                }
                private_place(w, off & 0xffff_ffff, l, size)?
            }
            Seg::Buffer => {
                let r = rsrc.and_then(|o| o.as_reg()).ok_or("no buffer resource")?.base.0 as usize;
                let (w0, w1, w2, w3) = (w.sget(r), w.sget(r + 1), w.sget(r + 2), w.sget(r + 3));
                let base = w0 as u64 | ((w1 & 0xffff) as u64) << 32;
                let stride = (w1 >> 16 & 0x3fff) as u64;
                let swz = match gen {
                    Generation::Gfx9 => w1 >> 31 & 1 == 1,
                    Generation::Gfx11 => w1 >> 30 & 3 != 0,
                };
                let add_tid = w3 >> 23 & 1 == 1;
                let istride = 8u64 << (w3 >> 21 & 3);
                let vals: Vec<u32> = match va {
                    Some(o @ Operand::Reg(rg)) => (0..rg.size as usize).map(|k| v_dword(w, o, l, k)).collect(),
                    _ => vec![],
                };
                let mut k = 0;
                let mut index = 0u64;
                if i.idxen {
                    index = *vals.first().ok_or("idxen without address")? as u64;
                    k = 1;
                }
                if add_tid {
                    index += l as u64;
                }
                let voff = if i.offen { *vals.get(k).ok_or("offen without address")? as u64 } else { 0 };
                let offset = voff + i.offset as u64;
                let so = soff.map_or(0, |o| s32(w, o)) as u64;
                if swz {
                    let b = base + so + (index / istride) * stride * istride;
                    Place::Swz { base: b, off: offset, lane: (index % istride) as u32, stride: istride as u32 }
                } else {
                    if stride == 0 && offset + size > w2 as u64 && !add_tid {
                        return Err(format!("buffer access out of range: offset {offset:#x} + {size} > num_records {w2:#x}"));
                    }
                    Place::Global(base + so + index * stride + offset)
                }
            }
        };
        access(ctx, place, acc, w, data, l, &mut tmp)?;
        results[l as usize] = tmp;
    }
    if let Some(o) = dst {
        for l in 0..lanes {
            if exec >> l & 1 == 1 {
                if let Access::LoadD16 { hi, .. } = acc {
                    let (old, half) = (v_dword(w, &o, l, 0), results[l as usize].as_slice()[0]);
                    let merged = if hi { (old & 0xffff) | half << 16 } else { (old & 0xffff_0000) | half };
                    set_v_dwords(w, &o, l, 0, &[merged]);
                } else {
                    set_v_dwords(w, &o, l, 0, results[l as usize].as_slice());
                }
            }
        }
    }
    let lgkm_ooo = d.counters.contains(Counters::LGKM);
    issue(w, d, d.counters, lgkm_ooo, dst.as_ref())
}

fn private_place(w: &Wave, off: u64, lane: u32, size: u64) -> Result<Place, String> {
    if off + size > w.scratch_lane_size {
        return Err(format!(
            "private (scratch) access of {size} bytes at lane offset {off:#x} outside the {} bytes per lane the descriptor requests",
            w.scratch_lane_size
        ));
    }
    Ok(Place::Swz { base: w.scratch_base, off, lane, stride: w.lanes })
}

fn flat_place(w: &Wave, a: u64, lane: u32, size: u64) -> Result<Place, String> {
    let hi = (a >> 32) as u32;
    if hi == SHARED_APERTURE_HI {
        Ok(Place::Lds(a & 0xffff_ffff))
    } else if hi == PRIVATE_APERTURE_HI {
        // Without architected flat scratch the base is FLAT_SCRATCH, which the
        // kernel must have set to its wave's scratch memory.
        if !w.target.gpu.has_architected_flat_scratch() {
            let flat_scratch = u64::from(w.sget(102)) | u64::from(w.sget(103)) << 32;
            if flat_scratch != w.scratch_base {
                return Err(format!(
                    "flat access to private memory with FLAT_SCRATCH {flat_scratch:#x}, not the wave's scratch base {:#x} (flat scratch not initialised)",
                    w.scratch_base
                ));
            }
        }
        private_place(w, a & 0xffff_ffff, lane, size)
    } else {
        Ok(Place::Global(a))
    }
}
