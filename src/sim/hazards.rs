//! Data hazards that the hardware does not interlock and that software must cover
//! with independent instructions, `s_nop` or `s_waitcnt_depctr` (the rules of
//! LLVM's GCNHazardRecognizer).
//!
//! Wait-state hazards (gfx90a, gfx942): each instruction provides one wait state,
//! `s_nop N` provides N+1.
//!
//! | target | producer → consumer | wait states |
//! |---|---|---|
//! | gfx90a, gfx942 | VALU writes an SGPR/VCC → VMEM (MUBUF/FLAT/GLOBAL/SCRATCH) reads it (address, resource, offset) | 5 |
//! | gfx90a, gfx942 | VALU writes VCC → `v_div_fmas_*` | 4 |
//! | gfx90a, gfx942 | VALU writes an SGPR → `v_readlane`/`v_writelane` lane select | 4 |
//! | gfx90a, gfx942 | VMEM store of more than 8 bytes (MUBUF without an SGPR `soffset`, FLAT/GLOBAL/SCRATCH) → VALU overwrites its data VGPRs | 1 (gfx90a), 2 (gfx942) |
//! | gfx942 | transcendental VALU writes a VGPR → non-transcendental VALU reads it | 1 |
//! | gfx942 | VALU writes an SGPR or VCC → VALU reads it | 2 |
//! | gfx942 | VALU writes a VGPR → `v_readlane`/`v_readfirstlane` reads it | 1 |
//! | gfx942 | VALU writes EXEC → `v_readlane`/`v_readfirstlane`/`v_writelane` | 4 |
//!
//! The last three (LLVM's `hasVDecCoExecHazard`) can be switched off alone with
//! `Options::check_gfx942_valu_sgpr_hazards`.
//!
//! gfx1100 (`VALUTransUseHazard`): a VALU reading a VGPR that a transcendental
//! instruction wrote needs `s_waitcnt_depctr va_vdst(0)` in between unless
//! more than 5 VALU or more than 1 transcendental instructions, or a VMEM/FLAT/DS
//! instruction, lie between them. The executed path is checked, so hazards across
//! branches are found too.
//!
//! Not checked: DPP/SDWA/op_sel-dst, MFMA, `s_setreg`, M0/LDS-DMA and `s_movrel`
//! hazards (instructions we do not run), gfx11 VALU partial-forwarding and
//! mask-write hazards.

use std::collections::VecDeque;

use amdgpu_isa::{Generation, Gpu, Operand};

use super::decode::{Access, DInst, Sem, Seg, N};

/// What an earlier instruction did that later ones may depend on.
#[derive(Clone, Debug, Default)]
pub struct Entry {
    /// Wait states this instruction provides.
    pub waits: u32,
    pub valu: bool,
    pub trans: bool,
    /// SGPRs (and VCC, EXEC) written by a VALU instruction.
    pub valu_sgprs: Vec<u16>,
    /// VGPRs written by a VALU instruction.
    pub valu_vgprs: Vec<u16>,
    /// Data VGPRs of a VMEM store of more than 8 bytes.
    pub store_data: Vec<u16>,
    /// gfx11: ends a transcendental-use hazard (VMEM/FLAT/DS, or `s_waitcnt_depctr`
    /// with its va_vdst field, bits 15:12, at 0).
    pub ends_trans_use: bool,
}

/// The last instructions of a wave.
#[derive(Clone, Debug, Default)]
pub struct History {
    entries: VecDeque<Entry>,
}

const DEPTH: usize = 32;

fn is_valu(d: &DInst, gpu: Gpu) -> bool {
    match d.sem {
        Sem::Cmp { .. } | Sem::CmpClass { .. } | Sem::Dual { .. } => true,
        Sem::N(_) => d.inst.op.info().format(gpu).is_valu(),
        _ => false,
    }
}

fn is_trans(d: &DInst) -> bool {
    matches!(
        d.sem,
        Sem::N(
            N::v_exp_f32
                | N::v_log_f32
                | N::v_rcp_f32
                | N::v_rcp_iflag_f32
                | N::v_rsq_f32
                | N::v_sqrt_f32
                | N::v_sin_f32
                | N::v_cos_f32
                | N::v_rcp_f64
                | N::v_rsq_f64
                | N::v_sqrt_f64
        )
    )
}

fn scalar_regs(o: &Operand) -> Vec<u16> {
    match o {
        Operand::Reg(r) if r.base.0 < 128 => (0..r.size as u16).map(|i| r.base.0 + i).collect(),
        _ => vec![],
    }
}

fn vgprs(o: &Operand) -> Vec<u16> {
    match o {
        Operand::Reg(r) if r.base.is_vgpr() => (0..r.size as u16).map(|i| r.base.index() + i).collect(),
        _ => vec![],
    }
}

/// Wait states since the most recent entry matching `f`, if within the history.
fn since(h: &History, f: impl Fn(&Entry) -> bool) -> Option<u32> {
    let mut waits = 0;
    for e in h.entries.iter().rev() {
        if f(e) {
            return Some(waits);
        }
        waits += e.waits;
    }
    None
}

fn need(h: &History, what: &str, reg: &str, waits: u32, f: impl Fn(&Entry) -> bool) -> Result<(), String> {
    match since(h, f) {
        Some(w) if w < waits => Err(format!(
            "hazard: {what} {reg} {w} wait state(s) after the producer; {waits} required (s_nop or independent instructions)"
        )),
        _ => Ok(()),
    }
}

/// VGPRs of the data of a VMEM store wider than 8 bytes that can be overwritten
/// early (the 12-dword store hazard).
fn wide_store_data(d: &DInst) -> Vec<u16> {
    let Sem::Vmem { seg, acc: Access::Store { size } } = d.sem else { return vec![] };
    if size <= 8 {
        return vec![];
    }
    let i = &d.inst;
    let data = match seg {
        Seg::Buffer => {
            // Only when soffset is not a register.
            if matches!(i.uses.get(3), Some(Operand::Reg(_))) {
                return vec![];
            }
            i.uses.first()
        }
        _ => i.uses.get(1),
    };
    data.map(vgprs).unwrap_or_default()
}

/// Checks `d` against the history; `Err` describes the hazard.
pub fn check(h: &History, d: &DInst, gpu: Gpu, wave64: bool, gfx942_valu_sgpr: bool) -> Result<(), String> {
    if h.entries.is_empty() {
        return Ok(());
    }
    let valu = is_valu(d, gpu);
    if gpu.generation() == Generation::Gfx11 {
        if valu {
            return check_trans_use(h, d);
        }
        return Ok(());
    }
    let vcc: &[u16] = if wave64 { &[106, 107] } else { &[106] };
    let sname = |r: u16| format!("s{r}");
    match d.sem {
        Sem::Vmem { .. } => {
            for o in &d.inst.uses {
                for r in scalar_regs(o) {
                    need(h, "a VMEM instruction reads", &sname(r), 5, |e| e.valu_sgprs.contains(&r))?;
                }
            }
        }
        Sem::N(N::v_div_fmas_f32 | N::v_div_fmas_f64) => {
            for &r in vcc {
                need(h, "v_div_fmas reads", "VCC", 4, |e| e.valu_sgprs.contains(&r))?;
            }
        }
        Sem::N(N::v_readlane_b32 | N::v_writelane_b32) => {
            if let Some(o) = d.inst.uses.get(1) {
                for r in scalar_regs(o) {
                    need(h, "v_readlane/v_writelane uses as lane select", &sname(r), 4, |e| e.valu_sgprs.contains(&r))?;
                }
            }
        }
        _ => {}
    }
    if valu {
        // Overwriting the data of a wide store too early.
        let ws = if gpu == Gpu::Gfx942 { 2 } else { 1 };
        for o in &d.inst.defs {
            for v in vgprs(o) {
                need(h, "a VALU overwrites", &format!("v{v}, the data of a wide VMEM store,"), ws, |e| e.store_data.contains(&v))?;
            }
        }
    }
    if gpu == Gpu::Gfx942 && valu {
        if !is_trans(d) {
            for o in &d.inst.uses {
                for v in vgprs(o) {
                    need(h, "a VALU reads", &format!("v{v} (written by a transcendental)"), 1, |e| e.trans && e.valu_vgprs.contains(&v))?;
                }
            }
        }
        if !gfx942_valu_sgpr {
            return Ok(());
        }
        let mut sregs: Vec<u16> = d.inst.uses.iter().flat_map(scalar_regs).collect();
        if matches!(d.sem, Sem::N(N::v_div_fmas_f32 | N::v_div_fmas_f64)) {
            sregs.extend_from_slice(vcc);
        }
        for r in sregs {
            need(h, "a VALU reads", &format!("s{r} (written by a VALU)"), 2, |e| e.valu_sgprs.contains(&r))?;
        }
        if matches!(d.sem, Sem::N(N::v_readlane_b32 | N::v_readfirstlane_b32)) {
            if let Some(o) = d.inst.uses.first() {
                for v in vgprs(o) {
                    need(h, "v_readlane/v_readfirstlane reads", &format!("v{v} (written by a VALU)"), 1, |e| e.valu_vgprs.contains(&v))?;
                }
            }
        }
        if matches!(d.sem, Sem::N(N::v_readlane_b32 | N::v_readfirstlane_b32 | N::v_writelane_b32)) {
            need(h, "v_readlane/v_readfirstlane/v_writelane reads", "EXEC (written by a VALU)", 4, |e| e.valu_sgprs.contains(&126))?;
        }
    }
    Ok(())
}

/// gfx11 `VALUTransUseHazard`.
fn check_trans_use(h: &History, d: &DInst) -> Result<(), String> {
    let uses: Vec<u16> = d.inst.uses.iter().flat_map(vgprs).collect();
    if uses.is_empty() {
        return Ok(());
    }
    let (mut valus, mut trans) = (0, 0);
    for e in h.entries.iter().rev() {
        if valus > 5 || trans > 1 || e.ends_trans_use {
            return Ok(());
        }
        if e.trans {
            if let Some(v) = uses.iter().find(|v| e.valu_vgprs.contains(v)) {
                return Err(format!(
                    "hazard: a VALU reads v{v} that a transcendental instruction wrote {valus} VALU instruction(s) earlier; \
                     s_waitcnt_depctr va_vdst(0) required (or more than 5 VALU / 1 transcendental instructions in between)"
                ));
            }
        }
        valus += e.valu as u32;
        trans += e.trans as u32;
    }
    Ok(())
}

/// Records `d` after it executed.
pub fn record(h: &mut History, d: &DInst, gpu: Gpu, _wave64: bool) {
    let mut e = Entry { waits: 1, ..Entry::default() };
    if let Sem::N(N::s_nop) = d.sem {
        e.waits = (d.inst.imm as u32 & 0xF) + 1;
    }
    e.valu = is_valu(d, gpu);
    e.trans = is_trans(d);
    if e.valu {
        for o in &d.inst.defs {
            e.valu_sgprs.extend(scalar_regs(o));
            e.valu_vgprs.extend(vgprs(o));
        }
        if let Sem::Cmp { x: true, .. } | Sem::CmpClass { x: true, .. } = d.sem {
            e.valu_sgprs.extend([126, 127]);
        }
        if let Sem::Dual { x, y, .. } = d.sem {
            e.valu_vgprs.extend([x.dst, y.dst]);
        }
    }
    e.store_data = wide_store_data(d);
    e.ends_trans_use = matches!(d.sem, Sem::Vmem { .. } | Sem::Ds(_))
        || (d.text.starts_with("s_waitcnt_depctr") && d.inst.imm >> 12 & 0xF == 0);
    if h.entries.len() == DEPTH {
        h.entries.pop_front();
    }
    h.entries.push_back(e);
}
