//! Printer: [`Inst`] -> LLVM assembly syntax, exactly as `llvm-mc --disassemble`
//! prints it (so that our `.s` round-trips through llvm-mc and the cross-check can
//! compare text). VOP1/VOP2/VOPC instructions always carry an explicit `_e32`/`_e64`
//! suffix, which pins the encoding.

use std::fmt::Write;

use crate::inst::{Cache, Inst, Operand};
use crate::opcodes::{Format, Kind, OpFlags, Opcode};
use crate::regs::inline_name;
use crate::target::{Generation, Gpu, Target};
use crate::waitcnt::Waitcnt;

/// The full mnemonic, with `_e32`/`_e64` where LLVM prints one.
pub fn mnemonic(inst: &Inst, gpu: Gpu) -> String {
    let info = inst.op.info();
    let base = info.mnemonic(gpu);
    if info.format(gpu).has_e64_form() && info.opcode_e64(gpu).is_some() {
        format!("{base}{}", if inst.e64 { "_e64" } else { "_e32" })
    } else if gpu.generation() == Generation::Gfx11 && matches!(inst.op, Opcode::v_cvt_f16_f32 | Opcode::v_cvt_f32_f16) {
        // VOP3 forms of instructions that also have a VOP1 one (not in our table there).
        format!("{base}_e64")
    } else {
        base.to_string()
    }
}

fn operand(o: Operand, gpu: Gpu, f64: bool) -> String {
    match o {
        Operand::Reg(r) => r.name(gpu),
        Operand::Const(c) => inline_name(c, f64),
        Operand::Literal(v) => format!("0x{v:x}"),
        Operand::Off => "off".into(),
    }
}

fn bits_list(mask: u8, n: usize) -> String {
    let v: Vec<String> = (0..n).map(|i| ((mask >> i) & 1).to_string()).collect();
    format!("[{}]", v.join(","))
}

fn cache_text(c: Cache, gpu: Gpu) -> String {
    let mut s = String::new();
    // LLVM's order for the GPU's own bits; bits of other GPUs (invalid, rejected by the
    // encoder) are still printed so that the text shows them.
    let order: &[(Cache, &str)] = match gpu {
        Gpu::Gfx942 => &[
            (Cache::SC0, "sc0"),
            (Cache::NT, "nt"),
            (Cache::SC1, "sc1"),
            (Cache::GLC, "glc"),
            (Cache::SLC, "slc"),
            (Cache::DLC, "dlc"),
        ],
        _ => &[
            (Cache::GLC, "glc"),
            (Cache::SLC, "slc"),
            (Cache::DLC, "dlc"),
            (Cache::SC0, "sc0"),
            (Cache::NT, "nt"),
            (Cache::SC1, "sc1"),
        ],
    };
    for (b, n) in order {
        if c.contains(*b) {
            s.push(' ');
            s.push_str(n);
        }
    }
    s
}

/// Prints `inst` in LLVM syntax for `target` (no leading tab, no newline).
pub fn print(inst: &Inst, target: Target) -> String {
    let gpu = target.gpu;
    let info = inst.op.info();
    let fmt = info.format(gpu);
    if let (Format::Vopd, Some(y)) = (fmt, inst.vopd_y) {
        // `X dst, X srcs :: Y dst, Y srcs`; v_dual_cndmask_b32's VCC_LO is not printed.
        let nx = info.uses(gpu).len().min(inst.uses.len());
        let half = |op: Opcode, def: Option<&Operand>, uses: &[Operand]| {
            let kinds = op.info().uses(gpu);
            let mut ops: Vec<String> = def.map(|d| operand(*d, gpu, false)).into_iter().collect();
            for (u, k) in uses.iter().zip(kinds.iter().chain(std::iter::repeat(&Kind::Src(1)))) {
                if *k != Kind::Mask {
                    ops.push(operand(*u, gpu, false));
                }
            }
            format!("{} {}", op.mnemonic(gpu), ops.join(", "))
        };
        return format!(
            "{} :: {}",
            half(inst.op, inst.defs.first(), &inst.uses[..nx]),
            half(y, inst.defs.get(1), &inst.uses[nx..])
        );
    }
    let mut s = mnemonic(inst, gpu);
    let is_f64 = info.name.contains("f64");
    let valu3 = (fmt.has_e64_form() && inst.e64) || matches!(fmt, Format::Vop3 | Format::Vop3b);
    let mut ops: Vec<String> = Vec::new();
    // gfx11's 16-bit operands of the f16 conversions (true16): we use the low
    // halves, which LLVM prints explicitly.
    let gfx11 = gpu.generation() == Generation::Gfx11;
    let low_half = |o: Operand, t: &mut String| {
        if matches!(o, Operand::Reg(r) if r.base.is_vgpr()) {
            t.push_str(".l");
        }
    };
    for &d in &inst.defs {
        let mut t = operand(d, gpu, false);
        if gfx11 && inst.op == Opcode::v_cvt_f16_f32 {
            low_half(d, &mut t);
        }
        ops.push(t);
    }
    for (i, (&u, &k)) in inst.uses.iter().zip(info.uses(gpu).iter().chain(std::iter::repeat(&Kind::Mask))).enumerate() {
        let f64 = is_f64 && k.size(target.wave) == 2 && matches!(k, Kind::Src(_));
        let mut t = operand(u, gpu, f64);
        // gfx11 treats the shift operand of v_alignbit/v_alignbyte as a 16-bit (true16)
        // register and LLVM prints its low half explicitly.
        if i == 2 && gpu.generation() == Generation::Gfx11 && info.name.starts_with("v_align") {
            if let Operand::Reg(r) = u {
                if r.base.is_vgpr() {
                    t.push_str(if inst.mods.op_sel & 4 != 0 { ".h" } else { ".l" });
                }
            }
        }
        if gfx11 && i == 0 && inst.op == Opcode::v_cvt_f32_f16 {
            low_half(u, &mut t);
        }
        if valu3 && i < 3 {
            if inst.mods.abs >> i & 1 != 0 {
                t = format!("|{t}|");
            }
            if inst.mods.neg >> i & 1 != 0 {
                t = format!("-{t}");
            }
        }
        ops.push(t);
    }
    match fmt {
        Format::Sopp => {
            if info.flags.contains(OpFlags::WAITCNT) {
                let _ = write!(s, " {}", Waitcnt::print(inst.imm, gpu.generation()));
            } else if inst.op == Opcode::s_delay_alu {
                let _ = write!(s, " {}", delay_alu_text(inst.imm));
            } else if matches!(inst.op, Opcode::s_waitcnt_depctr | Opcode::s_clause | Opcode::s_set_inst_prefetch_distance) {
                // LLVM prints the counter fields by name only for values that
                // encode exactly; hex is what it prints (and reads) for the rest.
                let _ = write!(s, " 0x{:x}", inst.imm);
            } else if info.flags.contains(OpFlags::IMM) {
                let _ = write!(s, " {}", inst.imm);
            }
            return s;
        }
        // s_call_b64's immediate is a branch offset, printed in decimal like SOPP branches.
        Format::Sopk if info.flags.contains(OpFlags::BRANCH) => ops.push(inst.imm.to_string()),
        Format::Sopk => {
            ops.push(format!("0x{:x}", inst.imm));
        }
        Format::Smem => {
            // sdata, sbase, then the offset form.
            let soff = inst.uses.get(1).copied().unwrap_or(Operand::Off);
            ops.truncate(2);
            match soff {
                // gfx11 encodes "no SGPR offset" as NULL, and LLVM prints a zero offset as `null`.
                Operand::Off if inst.offset == 0 && gpu.generation() == Generation::Gfx11 => ops.push("null".into()),
                Operand::Off => ops.push(hex_signed(inst.offset)),
                o => {
                    let mut t = operand(o, gpu, false);
                    if inst.offset != 0 {
                        let _ = write!(t, " offset:{}", hex_signed(inst.offset));
                    }
                    ops.push(t);
                }
            }
        }
        _ => {}
    }
    if !ops.is_empty() {
        s.push(' ');
        s.push_str(&ops.join(", "));
    }
    match fmt {
        Format::Smem => {
            let c = inst.cache;
            if c.contains(Cache::GLC) {
                s.push_str(" glc");
            }
            if c.contains(Cache::DLC) {
                s.push_str(" dlc");
            }
        }
        Format::Vop3p => {
            let n = info.uses(gpu).len();
            let m = inst.mods;
            let all = (1u8 << n) - 1;
            if info.name.starts_with("v_accvgpr") {
                return s;
            }
            if m.op_sel & all != 0 {
                let _ = write!(s, " op_sel:{}", bits_list(m.op_sel, n));
            }
            if m.op_sel_hi & all != all {
                let _ = write!(s, " op_sel_hi:{}", bits_list(m.op_sel_hi, n));
            }
            if m.neg != 0 {
                let _ = write!(s, " neg_lo:{}", bits_list(m.neg, n));
            }
            if m.neg_hi != 0 {
                let _ = write!(s, " neg_hi:{}", bits_list(m.neg_hi, n));
            }
            if m.clamp {
                s.push_str(" clamp");
            }
        }
        _ if valu3 => {
            if inst.mods.clamp {
                s.push_str(" clamp");
            }
            match inst.mods.omod {
                1 => s.push_str(" mul:2"),
                2 => s.push_str(" mul:4"),
                3 => s.push_str(" div:2"),
                _ => {}
            }
        }
        Format::Ds => {
            if info.flags.contains(OpFlags::DS2) {
                if inst.offset != 0 {
                    let _ = write!(s, " offset0:{}", inst.offset);
                }
                if inst.offset1 != 0 {
                    let _ = write!(s, " offset1:{}", inst.offset1);
                }
            } else if inst.offset != 0 {
                let _ = write!(s, " offset:{}", inst.offset);
            }
        }
        Format::Flat | Format::Global | Format::Scratch => {
            if inst.offset != 0 {
                let _ = write!(s, " offset:{}", inst.offset);
            }
            s.push_str(&cache_text(inst.cache, gpu));
        }
        Format::Mubuf => {
            if inst.idxen {
                s.push_str(" idxen");
            }
            if inst.offen {
                s.push_str(" offen");
            }
            if inst.offset != 0 {
                let _ = write!(s, " offset:{}", inst.offset);
            }
            s.push_str(&cache_text(inst.cache, gpu));
        }
        _ => {}
    }
    s
}

/// `s_delay_alu`'s immediate as LLVM's disassembler prints it: the non-zero fields
/// `instid0` (bits 3:0), `instskip` (6:4) and `instid1` (10:7) by name, joined with
/// ` | `, or `0`. Bits 15:11 are not printed; field values without a name print
/// LLVM's `/* invalid ... */` comment (such text does not assemble again).
pub fn delay_alu_text(imm: u16) -> String {
    const ID: [&str; 12] = [
        "NO_DEP",
        "VALU_DEP_1",
        "VALU_DEP_2",
        "VALU_DEP_3",
        "VALU_DEP_4",
        "TRANS32_DEP_1",
        "TRANS32_DEP_2",
        "TRANS32_DEP_3",
        "FMA_ACCUM_CYCLE_1",
        "SALU_CYCLE_1",
        "SALU_CYCLE_2",
        "SALU_CYCLE_3",
    ];
    const SKIP: [&str; 6] = ["SAME", "NEXT", "SKIP_1", "SKIP_2", "SKIP_3", "SKIP_4"];
    let id = |v: u16| ID.get(v as usize).copied().unwrap_or("/* invalid instid value */");
    let (id0, skip, id1) = (imm & 0xF, imm >> 4 & 7, imm >> 7 & 0xF);
    let mut parts = Vec::new();
    if id0 != 0 {
        parts.push(format!("instid0({})", id(id0)));
    }
    if skip != 0 {
        parts.push(format!("instskip({})", SKIP.get(skip as usize).copied().unwrap_or("/* invalid instskip value */")));
    }
    if id1 != 0 {
        parts.push(format!("instid1({})", id(id1)));
    }
    if parts.is_empty() {
        "0".into()
    } else {
        parts.join(" | ")
    }
}

fn hex_signed(v: i32) -> String {
    if v < 0 {
        format!("-0x{:x}", -(v as i64))
    } else {
        format!("0x{v:x}")
    }
}

impl Inst {
    /// Prints in LLVM syntax for `target` (see [`print()`]).
    pub fn display(&self, target: Target) -> String {
        print(self, target)
    }
}
