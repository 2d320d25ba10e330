//! Representative instructions for every table entry: each register class and tuple
//! size the entry takes, inline constants, literals, each modifier, memory offsets and
//! cache bits. The LLVM cross-check test encodes, prints and decodes all of them; later
//! crates (simulator, scheduler) can reuse the list as a corpus.

use crate::encode::encode_words;
use crate::inst::{Cache, Inst, Mods, Operand};
use crate::opcodes::{Format, Kind, OpFlags, Opcode};
use crate::regs::{inline_int, PhysReg, Reg, INV_2PI};
use crate::target::{Generation, Gpu, Target, WaveSize};
use crate::waitcnt::Waitcnt;

/// Representative instructions for `gpu` at its default wave size.
pub fn representative(gpu: Gpu) -> Vec<Inst> {
    representative_for(Target::new(gpu))
}

/// Representative instructions for `target`. Only candidates our encoder accepts are
/// returned (some generated combinations are deliberately illegal, e.g. two SGPRs on
/// the gfx9 constant bus); see [`candidates`] for the unfiltered list.
pub fn representative_for(target: Target) -> Vec<Inst> {
    candidates(target).into_iter().filter(|i| encode_words(i, target).is_ok()).collect()
}

/// Only the instructions whose form depends on the wave size (lane-mask operands).
pub fn wave_dependent(target: Target) -> Vec<Inst> {
    representative_for(target).into_iter().filter(|i| uses_mask(i.op)).collect()
}

fn uses_mask(op: Opcode) -> bool {
    let i = op.info();
    i.defs9.contains(&Kind::Mask) || i.uses9.contains(&Kind::Mask)
}

/// Every candidate form for `target`, legal or not.
pub fn candidates(target: Target) -> Vec<Inst> {
    let mut out = Vec::new();
    for op in Opcode::ALL {
        let info = op.info();
        if info.format(target.gpu) == Format::Vopd {
            if info.available_for(target) {
                vopd_forms(op, target, &mut out);
            }
        } else if info.available(target.gpu) {
            forms(op, target, &mut out);
            probes(op, target, &mut out);
        }
    }
    out
}

/// One VOPD half with bank-safe registers: X writes v0 and reads v1, v2; Y writes v3
/// and reads v6, v7 (different banks, different destination parity).
fn vopd_half(op: Opcode, t: Target, y: bool) -> (Operand, Vec<Operand>) {
    let (dst, regs) = if y { (3, [6u16, 7]) } else { (0, [1u16, 2]) };
    let mut r = regs.iter();
    let uses = op
        .info()
        .uses(t.gpu)
        .iter()
        .map(|k| match k {
            Kind::KImm => Operand::Literal(0x4120_0000),
            Kind::Mask => Operand::Reg(Reg::vcc(1)),
            _ => Operand::v(*r.next().unwrap_or(&8), 1),
        })
        .collect();
    (Operand::v(dst, 1), uses)
}

fn vopd_pair(x: Opcode, y: Opcode, t: Target) -> Inst {
    let (dx, ux) = vopd_half(x, t, false);
    let (dy, uy) = vopd_half(y, t, true);
    Inst::vopd(x, y, vec![dx, dy], [ux, uy].concat())
}

/// VOPD forms of one component: as the Y half (with `v_dual_mov_b32` as X) and, if it
/// can be, as the X half; scalar, constant and literal sources, high registers, and
/// the illegal forms (same VGPR bank, same destination parity, two literals, a
/// Y-only operation as X, too many scalar values).
fn vopd_forms(op: Opcode, t: Target, out: &mut Vec<Inst>) {
    let gpu = t.gpu;
    let mov = Opcode::v_dual_mov_b32;
    let nx = |x: Opcode| x.info().uses(gpu).len();
    let y = vopd_pair(mov, op, t);
    out.push(y.clone());
    for c in [Operand::s(41, 1), Operand::Const(242), konst(-16), Operand::Literal(0x4120_0000)] {
        let mut v = y.clone();
        v.uses[nx(mov)] = c;
        out.push(v);
    }
    // Same src0 bank as X's v1; same destination parity as X's v0.
    let mut v = y.clone();
    v.uses[nx(mov)] = Operand::v(5, 1);
    out.push(v);
    let mut v = y.clone();
    v.defs[1] = Operand::v(2, 1);
    out.push(v);
    if !op.info().vopd_x(gpu) {
        // A Y-only operation as the X half.
        out.push(vopd_pair(op, mov, t));
        return;
    }
    let b = vopd_pair(op, mov, t);
    out.push(b.clone());
    for c in [
        Operand::s(40, 1),
        Operand::Const(240),
        konst(64),
        Operand::Literal(0x4120_0000),
        Operand::Literal(0x1234_5678),
        Operand::Reg(Reg::vcc(1)),
    ] {
        let mut v = b.clone();
        v.uses[0] = c;
        out.push(v);
    }
    // Two scalar sources (plus VCC_LO for v_dual_cndmask_b32, or a K literal).
    let mut v = b.clone();
    v.uses[0] = Operand::s(40, 1);
    v.uses[nx(op)] = Operand::s(41, 1);
    out.push(v);
    // High registers.
    let mut v = b.clone();
    v.defs = vec![Operand::v(254, 1), Operand::v(255, 1)];
    v.uses[0] = Operand::v(253, 1);
    if let Some(i) = op.info().uses(gpu).iter().position(|k| *k == Kind::Vgpr(1)) {
        v.uses[i] = Operand::v(250, 1);
    }
    v.uses[nx(op)] = Operand::v(252, 1);
    out.push(v);
    // Y halves with a vsrc1, and the same operation twice.
    for y in [Opcode::v_dual_add_nc_u32, Opcode::v_dual_fmaak_f32, Opcode::v_dual_fmac_f32, op] {
        let p = vopd_pair(op, y, t);
        out.push(p.clone());
        // Same vsrc1 bank (v2 and v10).
        if let (Some(i), true) = (y.info().uses(gpu).iter().position(|k| *k == Kind::Vgpr(1)), op.info().uses(gpu).contains(&Kind::Vgpr(1))) {
            let mut v = p.clone();
            v.uses[nx(op) + i] = Operand::v(10, 1);
            out.push(v);
        }
    }
    // src2 (fmamk's VGPR, fmac's accumulator) of the same parity: Y fmamk reads v4,
    // like X's v2 or v0.
    let mut v = vopd_pair(op, Opcode::v_dual_fmamk_f32, t);
    let n = v.uses.len();
    v.uses[n - 1] = Operand::v(4, 1);
    out.push(v);
}

/// Forms that are legal on some targets only, or never: misaligned tuples, AGPRs,
/// literals in VOP3, non-VCC masks in 32-bit encodings, out-of-range offsets, foreign
/// cache bits. The cross-check proves that exactly the ones our encoder accepts are
/// accepted by llvm-mc.
fn probes(op: Opcode, t: Target, out: &mut Vec<Inst>) {
    let info = op.info();
    let gpu = t.gpu;
    let fmt = info.format(gpu);
    let b = base(op, t, fmt.has_e64_form());
    // Odd-aligned VGPR tuple (legal on gfx11 only).
    for (slot, k) in info.defs(t.gpu).iter().chain(info.uses(t.gpu)).enumerate() {
        if let Kind::Vgpr(n) | Kind::Src(n) | Kind::Vdata(n) = *k {
            if n >= 2 {
                let mut x = b.clone();
                let o = if slot < info.defs(t.gpu).len() {
                    &mut x.defs[slot]
                } else {
                    &mut x.uses[slot - info.defs(t.gpu).len()]
                };
                *o = Operand::v(3 + 8 * slot as u16, n);
                out.push(x);
                break;
            }
        }
    }
    // AGPR data (legal on gfx90a/gfx942 only).
    if !gpu.has_agprs() {
        let mut x = b.clone();
        let mut any = false;
        for (o, k) in x.defs.iter_mut().chain(x.uses.iter_mut()).zip(info.defs(t.gpu).iter().chain(info.uses(t.gpu))) {
            if let (Kind::Vdata(n), Operand::Reg(r)) = (k, *o) {
                *o = Operand::a(r.base.index(), *n);
                any = true;
            }
        }
        if any {
            out.push(x);
        }
    }
    match fmt {
        Format::Vop3 | Format::Vop3b if gpu.generation() == Generation::Gfx9 => {
            // gfx9 VOP3 has no literal.
            if let Some(i) = info.uses(t.gpu).iter().position(|k| *k == Kind::Src(1)) {
                let mut x = b.clone();
                x.uses[i] = Operand::Literal(0x1234_5678);
                out.push(x);
            }
        }
        Format::Vop2 if info.uses(t.gpu).contains(&Kind::Mask) => {
            // The 32-bit encoding can only read VCC.
            let mut x = b.clone();
            *x.uses.last_mut().unwrap() = Operand::s(30, Kind::Mask.size(t.wave));
            out.push(x);
        }
        Format::Sop2 if info.uses(t.gpu) == [Kind::Ssrc(1), Kind::Ssrc(1)] => {
            // Two different literals.
            let mut x = b.clone();
            x.uses = vec![Operand::Literal(0x1234_5678), Operand::Literal(0x8765_4321)];
            out.push(x);
        }
        Format::Mubuf => {
            // A cache bit of another GPU.
            let mut x = b.clone();
            x.cache |= if gpu == Gpu::Gfx942 { Cache::GLC } else { Cache::SC1 };
            out.push(x);
        }
        Format::Ds => {
            let mut x = b.clone();
            if info.flags.contains(OpFlags::DS2) {
                x.offset = 256;
            } else {
                x.offset = 65536;
            }
            out.push(x);
        }
        Format::Flat | Format::Global | Format::Scratch => {
            let mut x = b.clone();
            x.offset = if fmt == Format::Flat { -16 } else { 4096 };
            out.push(x);
            if fmt == Format::Scratch {
                // Both address parts, and neither (legal on gfx942/gfx11 only).
                let mut x = b.clone();
                let n = x.uses.len();
                x.uses[n - 1] = Operand::s(5, 1);
                out.push(x.clone());
                x.uses[n - 1] = Operand::Off;
                x.uses[0] = Operand::Off;
                if info.uses(t.gpu)[0] == Kind::Vaddr {
                    out.push(x);
                }
            }
            // A cache bit of another GPU.
            let mut x = b.clone();
            x.cache |= if gpu == Gpu::Gfx942 { Cache::GLC } else { Cache::SC1 };
            out.push(x);
            if info.flags.contains(OpFlags::OPT_DEF) {
                // A result without the return bit.
                let mut x = b.clone();
                x.cache = Cache::empty();
                out.push(x);
            }
        }
        _ => {}
    }
}

fn sgpr_base(p: usize, n: u8) -> u16 {
    let align = if n >= 4 { n as u16 } else { 4 };
    (4 + 4 * p as u16).div_ceil(align) * align
}

fn pick(k: Kind, p: usize, fmt: Format, short: bool, wave: WaveSize) -> Operand {
    let mask_n = Kind::Mask.size(wave);
    match k {
        Kind::Sdst(n) | Kind::Ssrc(n) | Kind::Sreg(n) => Operand::s(sgpr_base(p, n), n),
        Kind::Vgpr(n) | Kind::Src(n) | Kind::Vdata(n) => Operand::v(2 + 4 * p as u16, n),
        Kind::Agpr(n) => Operand::a(2 + 4 * p as u16, n),
        Kind::Mask if short => Operand::Reg(Reg::vcc(mask_n)),
        Kind::Mask => Operand::s(20 + 2 * p as u16, mask_n),
        Kind::Vaddr => match fmt {
            Format::Flat | Format::Global => Operand::v(2, 2),
            Format::Scratch => Operand::v(2, 1),
            _ => Operand::Off,
        },
        Kind::Saddr => Operand::Off,
        Kind::KImm => Operand::Literal(0x4120_0000),
    }
}

fn base(op: Opcode, t: Target, short: bool) -> Inst {
    let info = op.info();
    let fmt = info.format(t.gpu);
    let defs = info.defs(t.gpu).iter().enumerate().map(|(p, &k)| pick(k, p, fmt, short, t.wave)).collect();
    let uses = info.uses(t.gpu).iter().enumerate().map(|(p, &k)| pick(k, p + 3, fmt, short, t.wave)).collect();
    let mut i = Inst::new(op, defs, uses);
    if info.name.starts_with("s_waitcnt_") && !i.uses.is_empty() {
        // gfx11's separate counters take NULL as their register operand.
        if let Some(n) = PhysReg::null(t.gpu.generation()) {
            i.uses[0] = Operand::Reg(Reg::new(n, 1));
        }
    }
    if info.flags.contains(OpFlags::OPT_DEF) {
        i.cache = Cache::atomic_return(t.gpu);
    }
    i
}

fn konst(v: i32) -> Operand {
    Operand::Const(inline_int(v).expect("inline"))
}

/// Whether LLVM accepts float source modifiers and clamp/omod on this instruction.
fn float_mods(name: &str) -> bool {
    let float = name.ends_with("_f32") || name.ends_with("_f64");
    let excluded = ["v_cvt", "v_ldexp", "v_frexp_exp", "v_cmp_class", "v_div_scale", "v_pk_", "v_mac", "v_fmac"];
    float && !excluded.iter().any(|e| name.starts_with(e))
}

fn forms(op: Opcode, t: Target, out: &mut Vec<Inst>) {
    let info = op.info();
    let gpu = t.gpu;
    let gen = gpu.generation();
    let fmt = info.format(gpu);
    let name = info.name;
    let b = base(op, t, fmt.has_e64_form());
    let first_src = info.uses(t.gpu).iter().position(|k| matches!(k, Kind::Src(_) | Kind::Ssrc(_)));
    let src_size = |i: usize| info.uses(t.gpu)[i].size(t.wave);
    let is_f64 = name.contains("f64");
    // 16-bit operands take 16-bit literals; we only sample 32-bit ones.
    let is16 = ["f16", "u16", "i16", "b16"].iter().any(|t| name.contains(t));
    // Constant and literal forms of the first source operand.
    let const_forms = |b: &Inst, out: &mut Vec<Inst>, lit: bool| {
        if let Some(i) = first_src {
            for c in [konst(-16), konst(64), Operand::Const(240), Operand::Const(247)] {
                let mut x = b.clone();
                x.uses[i] = c;
                out.push(x);
            }
            if src_size(i) == 1 || is_f64 {
                let mut x = b.clone();
                x.uses[i] = Operand::Const(INV_2PI);
                out.push(x);
            }
            if lit && src_size(i) == 1 && !is16 {
                let mut x = b.clone();
                x.uses[i] = Operand::Literal(0x1234_5678);
                out.push(x);
            }
        }
    };
    match fmt {
        Format::Sop1 | Format::Sop2 | Format::Sopc => {
            out.push(b.clone());
            const_forms(&b, out, true);
            // High SGPRs and special registers.
            let mut x = b.clone();
            for (o, k) in x.defs.iter_mut().zip(info.defs(t.gpu)) {
                let n = k.size(t.wave);
                *o = Operand::s(if n == 1 { 105 } else { 100 }, n);
            }
            for (o, k) in x.uses.iter_mut().zip(info.uses(t.gpu)) {
                if let Kind::Ssrc(n) = k {
                    *o = Operand::Reg(Reg::vcc(*n));
                }
            }
            out.push(x);
            let mut x = b.clone();
            for (o, k) in x.uses.iter_mut().zip(info.uses(t.gpu)).take(1) {
                if let Kind::Ssrc(n) = k {
                    *o = Operand::Reg(Reg::exec(*n));
                    if *n == 1 {
                        *o = Operand::Reg(Reg::new(PhysReg::m0(gen), 1));
                    }
                }
            }
            out.push(x);
            if let (Some(null), Some(Kind::Ssrc(1))) = (PhysReg::null(gen), info.uses(t.gpu).last()) {
                let mut x = b.clone();
                *x.uses.last_mut().unwrap() = Operand::Reg(Reg::new(null, 1));
                out.push(x);
            }
            if gen == Generation::Gfx9 && matches!(info.defs(t.gpu).first(), Some(Kind::Sdst(2))) {
                // FLAT_SCRATCH and a trap temporary as 64-bit operands.
                let mut x = b.clone();
                x.defs[0] = Operand::Reg(Reg::new(PhysReg::FLAT_SCRATCH, 2));
                out.push(x);
            }
            if let Some(Kind::Ssrc(n)) = info.uses(t.gpu).first() {
                let mut x = b.clone();
                x.uses[0] = Operand::Reg(Reg::new(PhysReg::TTMP0, *n));
                out.push(x);
                // The aperture sources (LLVM reads them with s_mov_b64 for generic pointers).
                if *n <= 2 {
                    for a in [PhysReg::SRC_SHARED_BASE, PhysReg::SRC_PRIVATE_LIMIT] {
                        let mut x = b.clone();
                        x.uses[0] = Operand::Reg(Reg::new(a, *n));
                        out.push(x);
                    }
                }
                if *n == 1 {
                    let mut x = b.clone();
                    x.uses[0] = Operand::Reg(Reg::new(PhysReg::SCC, 1));
                    out.push(x);
                }
            }
            if let Some(Kind::Sdst(n)) = info.defs(t.gpu).first() {
                let mut x = b.clone();
                x.defs[0] =
                    if *n == 1 { Operand::Reg(Reg::new(PhysReg::m0(gen), 1)) } else { Operand::Reg(Reg::exec(2)) };
                out.push(x);
            }
        }
        Format::Sopk => {
            for imm in [0x1234u16, 0xffff, 0] {
                let mut x = b.clone();
                x.imm = imm;
                out.push(x);
            }
            if !info.defs(t.gpu).is_empty() {
                let mut x = b.clone();
                x.defs[0] = Operand::s(105, 1);
                x.imm = 7;
                out.push(x);
            }
        }
        Format::Sopp => {
            if info.flags.contains(OpFlags::WAITCNT) {
                for w in [
                    Waitcnt::ALL_ZERO,
                    Waitcnt { vm: Some(0), ..Default::default() },
                    Waitcnt { lgkm: Some(0), ..Default::default() },
                    Waitcnt { exp: Some(1), ..Default::default() },
                    Waitcnt { vm: Some(3), lgkm: Some(1), exp: None },
                    Waitcnt { vm: Some(62), lgkm: Some(14), exp: Some(6) },
                    Waitcnt::default(),
                ] {
                    out.push(Inst::sopp(op, w.encode(gen)));
                }
            } else if info.flags.contains(OpFlags::BRANCH) {
                for imm in [0u16, 5, 0xfffd, 0x7fff, 0x8000] {
                    out.push(Inst::sopp(op, imm));
                }
            } else if op == Opcode::s_delay_alu {
                // Values whose fields all have names (LLVM prints them symbolically and
                // assembles the text back to the same bits).
                for imm in [0u16, 0x1, 0x4, 0x5, 0x7, 0x8, 0x9, 0xb, 0x10, 0x50, 0x80, 0x91, 0x112, 0x581, 0x5db] {
                    out.push(Inst::sopp(op, imm));
                }
            } else if op == Opcode::s_clause {
                for imm in [0u16, 1, 0x3f] {
                    out.push(Inst::sopp(op, imm));
                }
            } else if op == Opcode::s_waitcnt_depctr {
                // va_vdst(0) with every other counter at its maximum: the value the
                // code generator uses (LLVM prints it numerically).
                out.push(Inst::sopp(op, 0x0fff));
            } else if info.flags.contains(OpFlags::IMM) {
                for imm in [0u16, 1, 3] {
                    out.push(Inst::sopp(op, imm));
                }
            } else {
                out.push(b.clone());
            }
        }
        Format::Smem => {
            let n = info.defs(t.gpu)[0].size(t.wave);
            let mut x = b.clone();
            x.offset = 0x10;
            out.push(b.clone());
            out.push(x.clone());
            let mut y = b.clone();
            y.uses[1] = Operand::s(5, 1);
            out.push(y.clone());
            y.offset = 0x40;
            out.push(y);
            let mut z = x.clone();
            z.cache = Cache::GLC;
            z.defs[0] = Operand::s(if n >= 4 { 96 - (n as u16 - 4) } else { 100 }, n);
            out.push(z);
            if gen == Generation::Gfx11 {
                let mut z = x.clone();
                z.cache = Cache::GLC | Cache::DLC;
                out.push(z);
                if !name.starts_with("s_buffer") {
                    let mut z = x.clone();
                    z.offset = -8;
                    out.push(z);
                }
            }
        }
        Format::Vop1 | Format::Vop2 | Format::Vopc | Format::Vop3 | Format::Vop3b => {
            let short = fmt.has_e64_form();
            out.push(b.clone());
            // Sources: SGPR in the first source, constants, literal (where allowed).
            if let Some(i) = first_src {
                let mut x = b.clone();
                x.uses[i] = Operand::s(40, src_size(i));
                out.push(x);
                // Special registers as VALU sources.
                let n = src_size(i);
                let mut specials = vec![Reg::vcc(n), Reg::exec(n), Reg::new(PhysReg::TTMP0, n)];
                if n == 1 {
                    specials.push(Reg::new(PhysReg::m0(gen), 1));
                }
                if n <= 2 {
                    specials.extend([Reg::new(PhysReg::SRC_SHARED_LIMIT, n), Reg::new(PhysReg::SRC_PRIVATE_BASE, n)]);
                }
                for r in specials {
                    let mut x = b.clone();
                    x.uses[i] = Operand::Reg(r);
                    out.push(x);
                }
            }
            // v_fmamk/v_fmaak: K values (an inline-constant value is still a literal), and
            // a literal src0 equal to K (one literal dword serves both).
            if let Some(ki) = info.uses(t.gpu).iter().position(|k| *k == Kind::KImm) {
                for k in [1u32, 0x3f80_0000, 0xffff_ffff] {
                    let mut x = b.clone();
                    x.uses[ki] = Operand::Literal(k);
                    out.push(x);
                }
                let mut x = b.clone();
                x.uses[0] = Operand::Literal(0x4120_0000);
                out.push(x);
            }
            const_forms(&b, out, short || gen == Generation::Gfx11);
            // High registers.
            let mut x = b.clone();
            for (o, k) in x.defs.iter_mut().chain(x.uses.iter_mut()).zip(info.defs(t.gpu).iter().chain(info.uses(t.gpu))) {
                match (*o, k) {
                    (Operand::Reg(r), Kind::Vgpr(n) | Kind::Src(n)) if r.base.is_vgpr() => {
                        *o = Operand::v(256 - *n as u16, *n)
                    }
                    (Operand::Reg(r), Kind::Agpr(n)) if r.base.is_agpr() => *o = Operand::a(256 - *n as u16, *n),
                    _ => {}
                }
            }
            out.push(x);
            if short && info.opcode_e64(gpu).is_some() {
                let e = base(op, t, false).with_e64();
                out.push(e.clone());
                // e64 lets the second source be a constant or an SGPR.
                if e.uses.len() >= 2 {
                    let mut x = e.clone();
                    x.uses[1] = konst(2);
                    out.push(x);
                    let mut x = e.clone();
                    x.uses[1] = Operand::s(if src_size(1) == 1 { 41 } else { 42 }, src_size(1));
                    out.push(x);
                }
                if gen == Generation::Gfx11 {
                    if let Some(i) = first_src {
                        if src_size(i) == 1 && !is16 {
                            let mut x = e.clone();
                            x.uses[i] = Operand::Literal(0xdead_beef);
                            out.push(x);
                        }
                    }
                }
                if float_mods(name) {
                    mod_forms(&e, fmt, t, out);
                }
                // Lane masks in VCC or EXEC in the VOP3 form.
                if uses_mask(op) {
                    let mut x = e.clone();
                    for (o, k) in
                        x.defs.iter_mut().chain(x.uses.iter_mut()).zip(info.defs(t.gpu).iter().chain(info.uses(t.gpu)))
                    {
                        if *k == Kind::Mask {
                            *o = Operand::Reg(Reg::vcc(Kind::Mask.size(t.wave)));
                        }
                    }
                    out.push(x);
                }
            } else if !short {
                if float_mods(name) && fmt == Format::Vop3 {
                    mod_forms(&b, fmt, t, out);
                }
                // (Not for a 16-bit source: its literal would be a 16-bit one.)
                if gen == Generation::Gfx11 && !name.starts_with("v_align") && name != "v_cvt_f32_f16" {
                    if let Some(i) = info.uses(t.gpu).iter().rposition(|k| *k == Kind::Src(1)) {
                        let mut x = b.clone();
                        x.uses[i] = Operand::Literal(0x4080_0001);
                        out.push(x.clone());
                        // An SGPR and an inline constant in the last source too (gfx11
                        // v_add_co_u32's src1, a VGPR-only slot in the gfx9 VOP2 form).
                        x.uses[i] = Operand::s(41, 1);
                        out.push(x.clone());
                        x.uses[i] = konst(5);
                        out.push(x);
                    }
                }
                if fmt == Format::Vop3b {
                    let mut x = b.clone();
                    x.defs[1] = Operand::Reg(Reg::vcc(Kind::Mask.size(t.wave)));
                    out.push(x);
                    let mut x = b.clone();
                    x.mods.clamp = true;
                    out.push(x);
                }
                if name == "v_readlane_b32" || name == "v_writelane_b32" {
                    let mut x = b.clone();
                    x.uses[1] = konst(63);
                    out.push(x);
                    let mut x = b.clone();
                    x.uses[1] = Operand::Reg(Reg::new(PhysReg::m0(gen), 1));
                    out.push(x);
                }
            }
        }
        Format::Vop3p => {
            out.push(b.clone());
            let mut x = b.clone();
            for (o, k) in x.defs.iter_mut().chain(x.uses.iter_mut()).zip(info.defs(t.gpu).iter().chain(info.uses(t.gpu))) {
                match k {
                    Kind::Vgpr(n) | Kind::Src(n) => *o = Operand::v(256 - *n as u16, *n),
                    Kind::Agpr(n) => *o = Operand::a(256 - *n as u16, *n),
                    _ => {}
                }
            }
            out.push(x);
            if let Some(i) = first_src {
                let mut x = b.clone();
                x.uses[i] = Operand::s(40, src_size(i));
                out.push(x);
                let mut x = b.clone();
                x.uses[i] = konst(1);
                out.push(x);
                if gen == Generation::Gfx11 {
                    let mut x = b.clone();
                    x.uses[i] = Operand::Literal(0x3c00_4001);
                    out.push(x);
                }
            }
            if !name.starts_with("v_accvgpr") {
                let n = info.uses(t.gpu).len() as u8;
                let all = (1u8 << n) - 1;
                for m in [
                    Mods { op_sel: 1, ..Mods::default() },
                    Mods { op_sel_hi: 0b110 | (!all & 0b111), ..Mods::default() },
                    Mods { op_sel_hi: !all & 0b111, ..Mods::default() },
                    Mods { neg: 1, ..Mods::default() },
                    Mods { neg_hi: all, ..Mods::default() },
                    Mods { clamp: true, ..Mods::default() },
                    Mods {
                        op_sel: all & 0b110,
                        op_sel_hi: 0b101 | (!all & 0b111),
                        neg: 2,
                        neg_hi: 1,
                        clamp: true,
                        ..Mods::default()
                    },
                ] {
                    let mut x = b.clone();
                    x.mods = m;
                    out.push(x);
                }
            }
        }
        Format::Ds => {
            out.push(b.clone());
            let mut x = b.clone();
            if info.flags.contains(OpFlags::DS2) {
                x.offset = 1;
                x.offset1 = 2;
                out.push(x.clone());
                x.offset = 255;
                x.offset1 = 0;
                out.push(x.clone());
                x.offset = 0;
                x.offset1 = 255;
                out.push(x);
            } else {
                x.offset = 16;
                out.push(x.clone());
                x.offset = 0xffff;
                out.push(x);
            }
            agpr_form(&b, t, out);
            let mut x = b.clone();
            for o in x.defs.iter_mut().chain(x.uses.iter_mut()) {
                if let Operand::Reg(r) = *o {
                    // Highest register where the tuple fits with the alignment the GPU needs.
                    let mut first = 256 - r.size as u16;
                    if r.size > 1 && gpu.requires_even_vgpr_tuples() {
                        first &= !1;
                    }
                    *o = Operand::v(first, r.size);
                }
            }
            out.push(x);
        }
        Format::Flat | Format::Global | Format::Scratch => {
            out.push(b.clone());
            let atomic = info.flags.contains(OpFlags::OPT_DEF);
            let ret = Cache::atomic_return(gpu);
            if atomic {
                let mut x = b.clone();
                x.defs.clear();
                x.cache = Cache::empty();
                out.push(x.clone());
                x.offset = if fmt == Format::Flat { 4095 } else { -4096 };
                out.push(x);
            }
            for off in [16, if fmt == Format::Flat { 4095 } else { -16 }] {
                let mut x = b.clone();
                x.offset = off;
                out.push(x);
            }
            let mut bits: Vec<Cache> = Cache::allowed(gpu, false).iter().map(|c| c | b.cache).collect();
            bits.push(Cache::allowed(gpu, false));
            for c in bits {
                let mut x = b.clone();
                x.cache = c;
                if atomic && !c.contains(ret) {
                    x.defs.clear();
                }
                out.push(x);
            }
            let vi = info.uses(t.gpu).iter().position(|k| *k == Kind::Vaddr).unwrap();
            if let Some(si) = info.uses(t.gpu).iter().position(|k| *k == Kind::Saddr) {
                let mut x = b.clone();
                if fmt == Format::Global {
                    x.uses[vi] = Operand::v(7, 1);
                    x.uses[si] = Operand::s(4, 2);
                } else {
                    x.uses[vi] = Operand::Off;
                    x.uses[si] = Operand::s(5, 1);
                }
                x.offset = -32;
                out.push(x.clone());
                if fmt == Format::Scratch && gpu != Gpu::Gfx90a {
                    x.uses[vi] = Operand::v(7, 1);
                    out.push(x.clone());
                    x.uses[vi] = Operand::Off;
                    x.uses[si] = Operand::Off;
                    out.push(x);
                }
            }
            agpr_form(&b, t, out);
        }
        Format::Vopd => {}
        Format::Mubuf if info.flags.contains(OpFlags::CACHE_CTL) => {
            out.push(b.clone());
            for c in Cache::allowed_cache_ctl(gpu).iter().chain([Cache::allowed_cache_ctl(gpu)]) {
                let mut x = b.clone();
                x.cache = c;
                out.push(x);
            }
        }
        Format::Mubuf => {
            out.push(b.clone());
            let vi = info.uses(t.gpu).iter().position(|k| *k == Kind::Vaddr).unwrap();
            let si = info.uses(t.gpu).len() - 1;
            let mut x = b.clone();
            x.offen = true;
            x.uses[vi] = Operand::v(7, 1);
            x.offset = 16;
            out.push(x.clone());
            x.offen = false;
            x.idxen = true;
            x.offset = 4095;
            out.push(x.clone());
            x.offen = true;
            x.uses[vi] = Operand::v(8, 2);
            x.uses[si] = Operand::s(5, 1);
            out.push(x.clone());
            let mut x = b.clone();
            x.uses[si] = konst(-1);
            out.push(x);
            let mut bits: Vec<Cache> = Cache::allowed(gpu, false).iter().collect();
            bits.push(Cache::allowed(gpu, false));
            for c in bits {
                let mut x = b.clone();
                x.cache = c;
                out.push(x);
            }
            agpr_form(&b, t, out);
        }
    }
}

fn mod_forms(e: &Inst, fmt: Format, t: Target, out: &mut Vec<Inst>) {
    let n = e.uses.len();
    let vop3b = fmt == Format::Vop3b || e.op.info().defs(t.gpu).len() == 2;
    let cmp = fmt == Format::Vopc;
    let mut ms = vec![Mods { neg: 1, ..Mods::default() }, Mods { neg: ((1u8 << n) - 1), ..Mods::default() }];
    if !vop3b {
        ms.push(Mods { abs: 1 << (n - 1), ..Mods::default() });
        ms.push(Mods { abs: 1, neg: 1, ..Mods::default() });
    }
    if !cmp {
        ms.push(Mods { clamp: true, ..Mods::default() });
        for omod in 1..=3 {
            ms.push(Mods { omod, ..Mods::default() });
        }
        ms.push(Mods { clamp: true, omod: 1, neg: 1, ..Mods::default() });
    }
    for m in ms {
        let mut x = e.clone();
        x.mods = m;
        out.push(x);
    }
}

/// The same instruction with its data/result registers in AGPRs (gfx90a/gfx942).
fn agpr_form(b: &Inst, t: Target, out: &mut Vec<Inst>) {
    if !t.gpu.has_agprs() {
        return;
    }
    let info = b.op.info();
    let mut x = b.clone();
    let mut any = false;
    for (o, k) in x.defs.iter_mut().chain(x.uses.iter_mut()).zip(info.defs(t.gpu).iter().chain(info.uses(t.gpu))) {
        if let (Kind::Vdata(n), Operand::Reg(r)) = (k, *o) {
            *o = Operand::a(r.base.index() + 2, *n);
            any = true;
        }
    }
    if any {
        out.push(x);
    }
}
