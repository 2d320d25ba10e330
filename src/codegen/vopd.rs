//! vopd: joins two independent VALU instructions of a block into one gfx11
//! VOPD instruction (`v_dual_mul_f32 v0, v1, v2 :: v_dual_add_f32 v3, v4, v5`),
//! which issues both halves at once, after register assignment.
//!
//! The RDNA3 ISA lets a wave32 instruction carry two VALU operations, X and
//! Y, from a short list (X: fmac, fmaak, fmamk, mul, add, sub, subrev, mov,
//! cndmask, max, min; Y: those and add_nc_u32, lshlrev_b32, and_b32) in
//! their VOP1/VOP2 shapes: src0 any source, vsrc1 a VGPR, no modifiers.
//! Both halves read their sources before either writes, so the later
//! instruction of the pair must not read what the earlier one writes; the
//! earlier may read what the later writes (it gets the old value, as it did
//! before). The register file's banks constrain the operands (the ISA
//! document's VOPD restrictions and LLVM's `checkVOPDRegConstraints`;
//! tests/codegen_llvm.rs holds them against llvm-mc's on random pairs): the destinations one even and one odd VGPR; the two
//! src0 VGPRs in different banks (number mod 4), the two vsrc1 likewise;
//! the third read port (fmac's accumulator, fmamk's VGPR) of different
//! parity; at most one literal, shared by the halves (fmaak's and fmamk's K
//! count); at most two scalar values: distinct SGPR (or other scalar)
//! sources, the literal, and VCC when a cndmask half reads it (implicitly:
//! llvm-mc counts it once for two such halves, and apart from a `vcc_lo`
//! written as a source). Commutative operations swap
//! their sources, and `v_sub` becomes `v_subrev`, to put a VGPR in vsrc1 or
//! move a source to another bank; a VOP3 `v_fma_f32` is a VOPD fmac when its
//! addend is its destination, fmaak or fmamk when one factor or the addend
//! is a literal; e64 forms without modifiers count as their short forms; a
//! copy of a VGPR may also be the Y half `v_dual_add_nc_u32 d, 0, v` (two
//! copies of one register then read it through different ports).
//!
//! For each instruction in block order the pass looks at most `WINDOW`
//! instructions ahead for a partner. The pair takes the earlier one's place
//! (the later one moves up) when nothing crossed writes the later one's
//! sources or touches its destination, or else the later one's place (the
//! earlier one moves down) when nothing crossed writes the earlier one's
//! sources or touches its destination. The search stops at branches, calls,
//! call-frame events, waits, barriers and anything else of the SOPP/SOPK
//! formats, EXEC writes, and `movrel` (which reaches VGPRs no operand
//! names); a cndmask half does not cross a VCC write. A later instruction
//! reading a memory result or transcendental result that nothing read yet
//! is not moved up: its wait (waitcnt and hazards run after this pass)
//! would move up with it, ahead of the crossed instructions that did not
//! need it. Code never grows: a pair is 8 bytes (with its literal 12), the
//! two instructions were at least as long.
//!
//! Gate: -O1 and -O2, gfx11 in wave32 (the ISA document: VOPD is legal only
//! for wave32; a wave64 skips it).
//!
//! Cost: one sweep per block; each instruction compares with at most
//! `WINDOW` later ones and each comparison walks at most `WINDOW` crossed
//! instructions' registers: linear in the function.

use super::dead_moves::writes_exec;
use super::expand::{overlaps, reg_span, Emitted, Expanded};
use super::hazards::is_trans;
use crate::isa::{self, Format, Gpu, Kind, OpFlags, Opcode, Operand, PhysReg, Reg, Target};

/// How many instructions ahead a partner is sought.
const WINDOW: usize = 12;

/// The inline constant 0 (hardware source code 128).
const INLINE_ZERO: u8 = 128;

/// One instruction as a VOPD half: the `v_dual_*` operation, its
/// destination VGPR and its sources in that row's order.
#[derive(Clone, Debug)]
struct Half {
    op: Opcode,
    dst: u16,
    uses: Vec<Operand>,
}

fn vgpr(o: &Operand) -> Option<u16> {
    match o {
        Operand::Reg(r) if r.base.is_vgpr() && r.size == 1 => Some(r.base.index()),
        _ => None,
    }
}

/// A 32-bit VALU source (VGPR, SGPR or special register, constant, literal).
fn plain_source(o: &Operand) -> bool {
    match o {
        Operand::Reg(r) => r.size == 1 && (r.base.is_vgpr() || r.base.is_scalar() || r.base.is_aperture()),
        Operand::Const(_) | Operand::Literal(_) => true,
        Operand::Off => false,
    }
}

fn is_vcc(o: &Operand) -> bool {
    *o == Operand::Reg(Reg::new(PhysReg::VCC, 1))
}

/// The VOPD operation of a VOP1/VOP2 instruction, and the one computing
/// the same with src0 and vsrc1 exchanged (if any).
fn dual_of(op: Opcode) -> Option<(Opcode, Option<Opcode>)> {
    Some(match op {
        Opcode::v_mov_b32 => (Opcode::v_dual_mov_b32, None),
        Opcode::v_add_f32 => (Opcode::v_dual_add_f32, Some(Opcode::v_dual_add_f32)),
        Opcode::v_mul_f32 => (Opcode::v_dual_mul_f32, Some(Opcode::v_dual_mul_f32)),
        Opcode::v_max_f32 => (Opcode::v_dual_max_f32, Some(Opcode::v_dual_max_f32)),
        Opcode::v_min_f32 => (Opcode::v_dual_min_f32, Some(Opcode::v_dual_min_f32)),
        Opcode::v_sub_f32 => (Opcode::v_dual_sub_f32, Some(Opcode::v_dual_subrev_f32)),
        Opcode::v_subrev_f32 => (Opcode::v_dual_subrev_f32, Some(Opcode::v_dual_sub_f32)),
        Opcode::v_add_u32 => (Opcode::v_dual_add_nc_u32, Some(Opcode::v_dual_add_nc_u32)),
        Opcode::v_and_b32 => (Opcode::v_dual_and_b32, Some(Opcode::v_dual_and_b32)),
        Opcode::v_lshlrev_b32 => (Opcode::v_dual_lshlrev_b32, None),
        Opcode::v_fmac_f32 => (Opcode::v_dual_fmac_f32, Some(Opcode::v_dual_fmac_f32)),
        Opcode::v_cndmask_b32 => (Opcode::v_dual_cndmask_b32, None),
        _ => return None,
    })
}

/// The forms of `inst` as a VOPD half (one, or two where exchanging the
/// sources of a commutative operation gives another legal form); empty
/// when it has none.
fn halves(inst: &isa::Inst, gpu: Gpu) -> Vec<Half> {
    let mut out = Vec::new();
    let info = inst.op.info();
    if inst.vopd_y.is_some() || !inst.mods.is_default() || inst.imm != 0 || inst.defs.len() != 1 || !info.format(gpu).is_valu() {
        return out;
    }
    let Some(dst) = vgpr(&inst.defs[0]) else { return out };
    if !inst.uses.iter().all(|u| plain_source(u) || is_vcc(u)) {
        return out;
    }
    let u = &inst.uses;
    let mut push = |op: Opcode, uses: Vec<Operand>| out.push(Half { op, dst, uses });
    if inst.op == Opcode::v_fma_f32 {
        // d = a * b + c: fmac when c is d, fmaak when c is a literal, fmamk
        // when a factor is; the factors may be exchanged.
        let [a, b, c] = [u[0], u[1], u[2]];
        for (a, b) in [(a, b), (b, a)] {
            match (vgpr(&b), c) {
                (Some(_), c) if vgpr(&c) == Some(dst) => push(Opcode::v_dual_fmac_f32, vec![a, b]),
                (Some(_), Operand::Literal(_)) if !matches!(a, Operand::Literal(_)) => push(Opcode::v_dual_fmaak_f32, vec![a, b, c]),
                (None, _) if matches!(b, Operand::Literal(_)) && vgpr(&c).is_some() && !matches!(a, Operand::Literal(_)) => {
                    push(Opcode::v_dual_fmamk_f32, vec![a, b, c])
                }
                _ => {}
            }
        }
        return out;
    }
    let Some((op, swapped)) = dual_of(inst.op) else { return out };
    match (op, u.as_slice()) {
        (Opcode::v_dual_mov_b32, [a]) => {
            push(op, vec![*a]);
            // A copy of a VGPR is also `0 + a` with `a` in vsrc1, a Y half:
            // two copies of one register then read it through different
            // ports (as X and Y movs they would share src0's bank).
            if vgpr(a).is_some() {
                push(Opcode::v_dual_add_nc_u32, vec![Operand::Const(INLINE_ZERO), *a]);
            }
        }
        (Opcode::v_dual_cndmask_b32, [a, b, m]) if vgpr(b).is_some() && is_vcc(m) => push(op, vec![*a, *b, *m]),
        (Opcode::v_dual_cndmask_b32, _) | (Opcode::v_dual_mov_b32, _) => {}
        (_, [a, b]) if !is_vcc(a) && !is_vcc(b) => {
            if vgpr(b).is_some() {
                push(op, vec![*a, *b]);
            }
            if let (Some(s), Some(_)) = (swapped, vgpr(a)) {
                push(s, vec![*b, *a]);
            }
        }
        _ => {}
    }
    out
}

/// The VGPRs a half reads through each of the three read ports (src0,
/// src1, src2): fmamk's VGPR and fmac's accumulator use the third.
fn ports(h: &Half, gpu: Gpu) -> [Option<u16>; 3] {
    let kinds = h.op.info().uses(gpu);
    let mut p = [None; 3];
    for (i, (k, o)) in kinds.iter().zip(&h.uses).filter(|(k, _)| **k != Kind::Mask).enumerate().take(3) {
        if *k != Kind::KImm {
            p[i] = vgpr(o);
        }
    }
    if h.op.info().flags.contains(OpFlags::TIED) {
        p[2] = Some(h.dst);
    }
    p
}

/// Whether X and Y may form one VOPD instruction (the register-file and
/// constant-bus rules of the module doc).
fn legal(x: &Half, y: &Half, gpu: Gpu) -> bool {
    if !x.op.info().vopd_x(gpu) || (x.dst ^ y.dst) & 1 == 0 {
        return false;
    }
    let (px, py) = (ports(x, gpu), ports(y, gpu));
    for (i, mask) in [(0, 3), (1, 3), (2, 1)] {
        if let (Some(a), Some(b)) = (px[i], py[i]) {
            if a & mask == b & mask {
                return false;
            }
        }
    }
    let mut literal = None;
    let mut scalars: [Option<Operand>; 2] = [None; 2];
    let mut implicit_vcc = false;
    for h in [x, y] {
        for (k, o) in h.op.info().uses(gpu).iter().zip(&h.uses) {
            match (k, o) {
                (Kind::Mask, _) => implicit_vcc = true,
                (_, Operand::Literal(v)) => {
                    if literal.is_some_and(|l| l != *v) {
                        return false;
                    }
                    literal = Some(*v);
                }
                (_, Operand::Reg(r)) if !r.base.is_vgpr() => {
                    if !scalars.contains(&Some(*o)) {
                        // Room for two: a third distinct one breaks the limit.
                        let Some(free) = scalars.iter_mut().find(|s| s.is_none()) else { return false };
                        *free = Some(*o);
                    }
                }
                _ => {}
            }
        }
    }
    scalars.iter().flatten().count() + usize::from(implicit_vcc) + usize::from(literal.is_some()) <= 2
}

/// Whether a VOPD instruction meets the rules this pass forms pairs by
/// (tests hold them against llvm-mc's).
pub fn meets_rules(inst: &isa::Inst, gpu: Gpu) -> bool {
    let Some(y) = inst.vopd_y else { return false };
    let nx = inst.op.info().uses(gpu).len();
    let half = |op: Opcode, def: Option<&Operand>, uses: &[Operand]| Some(Half { op, dst: vgpr(def?)?, uses: uses.to_vec() });
    match (half(inst.op, inst.defs.first(), &inst.uses[..nx.min(inst.uses.len())]), half(y, inst.defs.get(1), inst.uses.get(nx..).unwrap_or(&[]))) {
        (Some(x), Some(y)) => legal(&x, &y, gpu),
        _ => false,
    }
}

/// The VOPD instruction of two halves, the first in program order given
/// first, if some choice of X and Y and of their forms is legal.
fn pair(first: &[Half], second: &[Half], gpu: Gpu) -> Option<isa::Inst> {
    // The later instruction must not read what the earlier one writes.
    let reads = |h: &Half, v: u16| h.uses.iter().any(|o| vgpr(o) == Some(v)) || (h.op.info().flags.contains(OpFlags::TIED) && h.dst == v);
    if second.first().is_some_and(|s| reads(s, first[0].dst)) {
        return None;
    }
    for a in first {
        for b in second {
            for (x, y) in [(a, b), (b, a)] {
                if legal(x, y, gpu) {
                    let dst = |h: &Half| Operand::Reg(Reg::new(PhysReg(256 + h.dst), 1));
                    return Some(isa::Inst::vopd(x.op, y.op, vec![dst(x), dst(y)], [x.uses.clone(), y.uses.clone()].concat()));
                }
            }
        }
    }
    None
}

/// Where the window ends: control flow, waits and other program-state
/// instructions, EXEC writes, call-frame events, indirect VGPR access.
fn stops_search(e: &Emitted, gpu: Gpu) -> bool {
    let format = e.inst.op.info().format(gpu);
    e.target.is_some() || e.symbol.is_some() || !e.cfi.is_empty() || matches!(format, Format::Sopp | Format::Sopk) || writes_exec(&e.inst) || e.inst.op.info().name.contains("movrel")
}

/// Whether an instruction may write VCC (VOPC and carries write it without
/// listing it in their e32 forms).
fn writes_vcc(inst: &isa::Inst) -> bool {
    let name = inst.op.info().name;
    name.starts_with("v_cmp") || name.contains("_co_") || name.starts_with("v_div_scale") || inst.defs.iter().filter_map(reg_span).any(|d| overlaps(d, (PhysReg::VCC.0, 2)))
}

/// Registers an instruction reads, including a tied accumulator.
fn read_spans(inst: &isa::Inst) -> Vec<(u16, u16)> {
    let mut r: Vec<(u16, u16)> = inst.uses.iter().filter_map(reg_span).collect();
    if inst.op.info().flags.contains(OpFlags::TIED) || inst.vopd_y.is_some_and(|y| y.info().flags.contains(OpFlags::TIED)) {
        r.extend(inst.defs.iter().filter_map(reg_span));
    }
    r
}

/// What the exchange test needs of one instruction, worked out once.
struct Access {
    writes: Vec<(u16, u16)>,
    reads: Vec<(u16, u16)>,
    reads_vcc: bool,
    writes_vcc: bool,
}

impl Access {
    fn of(inst: &isa::Inst) -> Access {
        Access { writes: inst.defs.iter().filter_map(reg_span).collect(), reads: read_spans(inst), reads_vcc: inst.uses.iter().any(is_vcc), writes_vcc: writes_vcc(inst) }
    }
}

/// Whether `moved` (a VOPD candidate) can be exchanged with `crossed`:
/// neither writes what the other reads or writes.
fn independent(moved: &Access, crossed: &Access) -> bool {
    let clash = |a: &[(u16, u16)], b: &[(u16, u16)]| a.iter().any(|x| b.iter().any(|y| overlaps(*x, *y)));
    !(clash(&moved.writes, &crossed.writes) || clash(&moved.writes, &crossed.reads) || clash(&moved.reads, &crossed.writes) || (moved.reads_vcc && crossed.writes_vcc))
}

/// Registers (by PhysReg code) holding a memory or transcendental result
/// that no instruction has read yet: whatever reads one first waits.
struct Unread {
    flag: Vec<bool>,
    set: Vec<u16>,
}

impl Unread {
    fn clear(&mut self) {
        for &r in &self.set {
            self.flag[usize::from(r)] = false;
        }
        self.set.clear();
    }

    fn any(&self, (base, n): (u16, u16)) -> bool {
        (base..base + n).any(|r| self.flag.get(usize::from(r)).copied().unwrap_or(false))
    }

    /// After `inst`: its reads consume, its writes are unread when they
    /// come from memory or a transcendental instruction.
    fn update(&mut self, inst: &isa::Inst, gpu: Gpu) {
        for (b, n) in read_spans(inst) {
            for r in b..b + n {
                if let Some(f) = self.flag.get_mut(usize::from(r)) {
                    *f = false;
                }
            }
        }
        let format = inst.op.info().format(gpu);
        let slow = format.is_flat() || matches!(format, Format::Ds | Format::Mubuf | Format::Smem) || is_trans(inst.op);
        for (b, n) in inst.defs.iter().filter_map(reg_span) {
            for r in b..b + n {
                if let Some(f) = self.flag.get_mut(usize::from(r)) {
                    *f = slow;
                    if slow {
                        self.set.push(r);
                    }
                }
            }
        }
    }
}

/// Forms VOPD pairs in every block (gfx11 wave32); returns how many.
pub fn run(code: &mut Expanded, target: Target) -> usize {
    if target.gpu.generation() != isa::Generation::Gfx11 || target.wave != isa::WaveSize::W32 {
        return 0;
    }
    let gpu = target.gpu;
    let mut unread = Unread { flag: vec![false; 1024], set: Vec::new() };
    let mut formed = 0;
    for (_, _, block) in &mut code.blocks {
        unread.clear();
        let mut slots: Vec<Option<Emitted>> = block.drain(..).map(Some).collect();
        let mut forms: Vec<Vec<Half>> = slots.iter().flatten().map(|e| halves(&e.inst, gpu)).collect();
        let mut access: Vec<Access> = slots.iter().flatten().map(|e| Access::of(&e.inst)).collect();
        for i in 0..slots.len() {
            let Some(first) = slots[i].as_ref() else { continue };
            if !forms[i].is_empty() && !stops_search(first, gpu) {
                // Scan ahead; `crossed` are the live instructions between.
                let mut crossed: Vec<usize> = Vec::new();
                let mut first_sinks = true;
                let mut k = i + 1;
                let mut seen = 0;
                while k < slots.len() && seen < WINDOW {
                    let Some(next) = slots[k].as_ref() else {
                        k += 1;
                        continue;
                    };
                    if stops_search(next, gpu) {
                        break;
                    }
                    seen += 1;
                    if !forms[k].is_empty() {
                        // Moved up, the later one would wait for a register
                        // nothing read yet (unless the earlier one reads it,
                        // and waits for it there anyway).
                        let (a, b) = (&access[i], &access[k]);
                        let waits = b.reads.iter().chain(&b.writes).any(|r| !a.reads.contains(r) && unread.any(*r));
                        let hoists = !waits && crossed.iter().all(|&c| independent(b, &access[c]));
                        if hoists || first_sinks {
                            if let Some(inst) = pair(&forms[i], &forms[k], gpu) {
                                let (at, gone) = if hoists { (i, k) } else { (k, i) };
                                access[at] = Access::of(&inst);
                                slots[at] = Some(Emitted { inst, target: None, symbol: None, cfi: Vec::new() });
                                slots[gone] = None;
                                forms[i].clear();
                                forms[k].clear();
                                formed += 1;
                                break;
                            }
                        }
                    }
                    first_sinks = first_sinks && independent(&access[i], &access[k]);
                    crossed.push(k);
                    k += 1;
                }
            }
            if let Some(e) = &slots[i] {
                unread.update(&e.inst, gpu);
            }
        }
        *block = slots.into_iter().flatten().collect();
    }
    formed
}
