//! Instruction selection: verified MIR → VCode with virtual registers.
//!
//! Uniform values go to SGPRs and the scalar unit when a scalar instruction
//! exists (integer arithmetic, logic, compares); divergent values and all float
//! arithmetic go to VGPRs and the vector unit. Booleans are SGPR 0/1 values when
//! uniform and lane masks when divergent.
//!
//! Control flow follows [`super::structure`]: uniform branches are real branches;
//! divergent if-regions and loop exits are linearised with EXEC masks, and values
//! that meet at their joins are merged lane by lane into accumulators
//! ([`MKind::LaneMerge`]) threaded through the region.

use std::collections::HashMap;

use regalloc2 as ra;

use super::structure::Structure;
use super::uniformity::Uniformity;
use super::vcode::*;
use crate::abi::kernarg::{self, KernargLayout};
use crate::abi::kernel::{self, InitialState, KernelInputs, SgprInput};
use crate::abi::{assign, Assignment, Convention, ImplicitInput, Location, Signature};
use crate::isa::{self, Opcode, Target, WaveSize};
use crate::mir::interp;
use crate::mir::{
    AddrSpace, AtomicOp, BinOp, BlockCall, Module, Builtin, CastOp, Const, Diagnostic, FloatPred, FuncKind, Function, Inst, IntPred, Op,
    Operand, Type, UnOp, Value,
};

/// LDS bytes one work-group may allocate (the same limit the interpreter
/// enforces: `mir::interp::Options::max_lds_bytes`).
pub const LDS_LIMIT: u32 = 65536;

/// What selection produces for one kernel.
pub struct Selected {
    pub vcode: VCode,
    pub inputs: KernelInputs,
    pub state: InitialState,
    pub kernarg: KernargLayout,
    /// Bytes of LDS the kernel's `lds_slot`s take.
    pub lds_size: u32,
}

/// A MIR value after selection.
#[derive(Clone, Debug)]
pub(super) enum Lowered {
    /// Uniform 32-bit value in an SGPR.
    S(ra::VReg),
    /// Uniform 64-bit value in an SGPR pair.
    S64(ra::VReg),
    /// 32-bit value in a VGPR.
    V(ra::VReg),
    /// 64-bit value in two VGPRs (low, high).
    V64(ra::VReg, ra::VReg),
    /// Uniform boolean: an SGPR holding 0 or 1.
    Bool(ra::VReg),
    /// Divergent boolean: a lane mask.
    Mask(ra::VReg),
    /// A constant not yet materialised (its bits).
    Imm(u64),
    /// Vector elements or struct fields.
    Agg(Vec<Lowered>),
    /// A uniform compare not yet computed, whose only use is its block's branch:
    /// the branch does the compare itself and branches on SCC.
    ScalarCmp { op: Opcode, a: Box<Lowered>, b: Box<Lowered> },
    /// A 64-bit address not yet computed: `base` (SGPR pair) + sext(`offset`)
    /// (a VGPR) + `imm`. Memory instructions fold it (one `v_mad_i64_i32` and the
    /// instruction's immediate offset); anything else materialises it.
    Addr { base: ra::VReg, offset: ra::VReg, imm: i32 },
}

/// A source operand of a machine instruction being built.
#[derive(Clone, Copy, Debug)]
enum Src {
    /// A folded address (see [`Lowered::Addr`]); its immediate goes to `offset`.
    Address(ra::VReg, ra::VReg),
    R(ra::VReg),
    Half(ra::VReg, u8),
    Imm(u32),
    VPair(ra::VReg, ra::VReg),
    Fixed(isa::Reg),
    Off,
}

/// A destination.
#[derive(Clone, Copy, Debug)]
enum Dst {
    /// One half of an SGPR pair (only in [`Isel::emit_seq`]).
    Half(ra::VReg, u8),
    R(ra::VReg),
    VPair(ra::VReg, ra::VReg),
    Fixed(isa::Reg),
}

fn err(func: &Function, inst: Option<&Inst>, message: String) -> Diagnostic {
    let mut d = Diagnostic::new(message, inst.map_or(func.span, |i| i.span));
    d.context = Some(format!("in @{}", func.name));
    d
}

/// A machine block under construction (indices of successors are block indices).
pub(super) struct BlockBuild {
    pub name: String,
    pub insts: Vec<MInst>,
    pub succs: Vec<usize>,
    pub succ_args: Vec<Vec<ra::VReg>>,
    pub params: Vec<ra::VReg>,
    pub partial_exec: bool,
}

/// How a register of a value merges where lanes meet (lower_cf.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum MergeKind {
    /// A VGPR: lane by lane.
    Vector,
    /// A lane mask: bit by bit.
    Mask,
    /// A uniform value: every arriving lane brings the same one.
    Scalar,
}

struct Isel<'a> {
    module: &'a Module,
    /// Implicit inputs each device function uses (itself and through calls).
    callee_uses: &'a HashMap<String, Vec<ImplicitInput>>,
    /// Device functions: where the result pieces go.
    ret_locations: Vec<Location>,
    /// Device functions returning through memory: the caller's result buffer.
    sret_ptr: Option<ra::VReg>,
    /// Bytes per lane of locals allocated so far (by-reference copies, result
    /// buffers of calls).
    locals: u32,
    func: &'a Function,
    uni: &'a Uniformity,
    structure: &'a Structure,
    target: Target,
    vc: VCode,
    values: Vec<Option<Lowered>>,
    blocks: Vec<BlockBuild>,
    cur: usize,
    /// Machine block of each MIR block.
    mblock: Vec<usize>,
    kernarg_ptr: Option<ra::VReg>,
    dispatch_ptr: Option<ra::VReg>,
    workgroup_id: [Option<ra::VReg>; 3],
    tid: Option<ra::VReg>,
    lds_size: u32,
    /// Uniform compares used only by their own block's branch (see
    /// [`Lowered::ScalarCmp`]).
    branch_only_compares: std::collections::HashSet<Value>,
    inst_ref: Option<&'a Inst>,
}

impl<'a> Isel<'a> {
    fn wave64(&self) -> bool {
        self.target.wave == WaveSize::W64
    }

    fn mask_class(&self) -> Class {
        if self.wave64() {
            Class::SgprPair
        } else {
            Class::Sgpr
        }
    }

    fn exec_reg(&self) -> isa::Reg {
        isa::Reg::exec(if self.wave64() { 2 } else { 1 })
    }

    fn vreg(&mut self, class: Class) -> ra::VReg {
        self.vc.new_vreg(class)
    }

    fn error(&self, message: impl Into<String>) -> Diagnostic {
        err(self.func, self.inst_ref, message.into())
    }

    fn push(&mut self, inst: MInst) {
        self.blocks[self.cur].insts.push(inst);
    }

    /// Emits one hardware instruction. Defs are late unless `early` (needed when a
    /// pseudo expands to several instructions).
    fn emit(&mut self, op: Opcode, defs: &[Dst], uses: &[Src], tweak: impl FnOnce(&mut isa::Inst)) {
        let mut inst = isa::Inst::new(op, Vec::new(), Vec::new());
        let mut ops: Vec<ra::Operand> = Vec::new();
        let mut fills = Vec::new();
        let mut window = 0u8;
        let mut use_index: HashMap<ra::VReg, u8> = HashMap::new();
        let mut add_use = |ops: &mut Vec<ra::Operand>, v: ra::VReg| -> u8 {
            *use_index.entry(v).or_insert_with(|| {
                ops.push(ra::Operand::reg_use(v));
                (ops.len() - 1) as u8
            })
        };
        for (i, s) in uses.iter().enumerate() {
            let slot = Slot::Use(i as u8);
            let operand = match *s {
                Src::R(v) => {
                    fills.push((slot, Fill::Whole(add_use(&mut ops, v))));
                    isa::Operand::Off
                }
                Src::Half(v, h) => {
                    fills.push((slot, Fill::Half(add_use(&mut ops, v), h)));
                    isa::Operand::Off
                }
                Src::VPair(lo, hi) => {
                    let (l, h) = (add_use(&mut ops, lo), add_use(&mut ops, hi));
                    fills.push((slot, Fill::VPair { lo: l, hi: h, window }));
                    window += 1;
                    isa::Operand::Off
                }
                Src::Address(base, offset) => {
                    let (b, o) = (add_use(&mut ops, base), add_use(&mut ops, offset));
                    fills.push((slot, Fill::Address { base: b, offset: o, window }));
                    window += 1;
                    isa::Operand::Off
                }
                Src::Imm(bits) => isa::Operand::imm32(bits),
                Src::Fixed(r) => isa::Operand::Reg(r),
                Src::Off => isa::Operand::Off,
            };
            inst.uses.push(operand);
        }
        for (i, d) in defs.iter().enumerate() {
            let slot = Slot::Def(i as u8);
            let operand = match *d {
                Dst::R(v) => {
                    ops.push(ra::Operand::reg_def(v));
                    fills.push((slot, Fill::Whole((ops.len() - 1) as u8)));
                    isa::Operand::Off
                }
                Dst::VPair(lo, hi) => {
                    // Results leave the window after the instruction, so they must
                    // not share registers with the sources still being read.
                    ops.push(ra::Operand::new(lo, ra::OperandConstraint::Reg, ra::OperandKind::Def, ra::OperandPos::Early));
                    ops.push(ra::Operand::new(hi, ra::OperandConstraint::Reg, ra::OperandKind::Def, ra::OperandPos::Early));
                    let n = ops.len() as u8;
                    fills.push((slot, Fill::VPair { lo: n - 2, hi: n - 1, window }));
                    window += 1;
                    isa::Operand::Off
                }
                Dst::Fixed(r) => isa::Operand::Reg(r),
                Dst::Half(..) => unreachable!("halves are written only by sequences"),
            };
            inst.defs.push(operand);
        }
        tweak(&mut inst);
        // `_e64` only where the instruction has a 32-bit form on this target
        // (VOP3-only instructions are encoded as VOP3 anyway).
        if inst.e64 && !op.info().format(self.target.gpu).has_e64_form() {
            inst.e64 = false;
        }
        self.push(MInst { kind: MKind::Real { inst, fills }, ops });
    }

    /// A sequence of hardware instructions that regalloc2 sees as one (see
    /// [`MKind::Seq`]): each part's registers are SGPRs, SGPR pairs or their
    /// halves; results are early definitions.
    fn emit_seq(&mut self, parts: &[(Opcode, &[Dst], &[Src])]) {
        let mut ops: Vec<ra::Operand> = Vec::new();
        let mut index: HashMap<(ra::VReg, bool), u8> = HashMap::new();
        let mut operand = |ops: &mut Vec<ra::Operand>, v: ra::VReg, def: bool| -> u8 {
            *index.entry((v, def)).or_insert_with(|| {
                ops.push(if def {
                    ra::Operand::new(v, ra::OperandConstraint::Reg, ra::OperandKind::Def, ra::OperandPos::Early)
                } else {
                    ra::Operand::reg_use(v)
                });
                (ops.len() - 1) as u8
            })
        };
        let mut out = Vec::new();
        for (op, defs, uses) in parts {
            let mut inst = isa::Inst::new(*op, Vec::new(), Vec::new());
            let mut fills = Vec::new();
            for (i, d) in defs.iter().enumerate() {
                let fill = match *d {
                    Dst::R(v) => Fill::Whole(operand(&mut ops, v, true)),
                    Dst::Half(v, h) => Fill::Half(operand(&mut ops, v, true), h),
                    _ => unreachable!("sequences write registers"),
                };
                fills.push((Slot::Def(i as u8), fill));
                inst.defs.push(isa::Operand::Off);
            }
            for (i, u) in uses.iter().enumerate() {
                let o = match *u {
                    Src::R(v) => {
                        fills.push((Slot::Use(i as u8), Fill::Whole(operand(&mut ops, v, false))));
                        isa::Operand::Off
                    }
                    Src::Half(v, h) => {
                        fills.push((Slot::Use(i as u8), Fill::Half(operand(&mut ops, v, false), h)));
                        isa::Operand::Off
                    }
                    Src::Imm(bits) => isa::Operand::imm32(bits),
                    Src::Fixed(r) => isa::Operand::Reg(r),
                    _ => unreachable!("sequences read registers and constants"),
                };
                inst.uses.push(o);
            }
            out.push((inst, fills));
        }
        self.push(MInst { kind: MKind::Seq(out), ops });
    }

    // ---- materialisation -------------------------------------------------

    /// The value as a 32-bit VGPR (copying/moving as needed).
    fn to_v(&mut self, l: &Lowered) -> Result<ra::VReg, Diagnostic> {
        Ok(match *l {
            Lowered::V(v) => v,
            Lowered::S(s) | Lowered::Bool(s) => {
                let v = self.vreg(Class::Vgpr);
                self.emit(Opcode::v_mov_b32, &[Dst::R(v)], &[Src::R(s)], |_| {});
                v
            }
            Lowered::Imm(bits) => {
                let v = self.vreg(Class::Vgpr);
                self.emit(Opcode::v_mov_b32, &[Dst::R(v)], &[Src::Imm(bits as u32)], |_| {});
                v
            }
            Lowered::Mask(m) => {
                let v = self.vreg(Class::Vgpr);
                self.emit(Opcode::v_cndmask_b32, &[Dst::R(v)], &[Src::Imm(0), Src::Imm(1), Src::R(m)], |i| i.e64 = true);
                v
            }
            _ => return Err(self.error("internal: expected a 32-bit value")),
        })
    }

    /// The value as an SGPR (uniform 32-bit values only).
    fn to_s(&mut self, l: &Lowered) -> Result<ra::VReg, Diagnostic> {
        Ok(match *l {
            Lowered::S(s) | Lowered::Bool(s) => s,
            Lowered::Imm(bits) => {
                let s = self.vreg(Class::Sgpr);
                self.emit(Opcode::s_mov_b32, &[Dst::R(s)], &[Src::Imm(bits as u32)], |_| {});
                s
            }
            Lowered::V(v) => {
                // Only for values known uniform that happen to live in a VGPR.
                let s = self.vreg(Class::Sgpr);
                self.emit(Opcode::v_readfirstlane_b32, &[Dst::R(s)], &[Src::R(v)], |_| {});
                s
            }
            _ => return Err(self.error("internal: expected a uniform 32-bit value")),
        })
    }

    /// The value as a 64-bit VGPR pair (lo, hi).
    fn to_v64(&mut self, l: &Lowered) -> Result<(ra::VReg, ra::VReg), Diagnostic> {
        Ok(match *l {
            Lowered::V64(lo, hi) => (lo, hi),
            Lowered::Addr { base, offset, imm } => {
                let (lo, hi) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
                // A shift by zero copies the 64-bit address out of its window
                // (there is no 64-bit VGPR move before gfx940).
                self.emit(Opcode::v_lshlrev_b64, &[Dst::VPair(lo, hi)], &[Src::Imm(0), Src::Address(base, offset)], |_| {});
                if imm == 0 {
                    (lo, hi)
                } else {
                    let Lowered::V64(a, b) = self.binary64(BinOp::Add, Lowered::V64(lo, hi), Lowered::Imm(imm as i64 as u64), true)? else {
                        unreachable!("a divergent 64-bit add")
                    };
                    (a, b)
                }
            }
            Lowered::S64(p) => {
                let (lo, hi) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
                self.emit(Opcode::v_mov_b32, &[Dst::R(lo)], &[Src::Half(p, 0)], |_| {});
                self.emit(Opcode::v_mov_b32, &[Dst::R(hi)], &[Src::Half(p, 1)], |_| {});
                (lo, hi)
            }
            Lowered::Imm(bits) => {
                let (lo, hi) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
                self.emit(Opcode::v_mov_b32, &[Dst::R(lo)], &[Src::Imm(bits as u32)], |_| {});
                self.emit(Opcode::v_mov_b32, &[Dst::R(hi)], &[Src::Imm((bits >> 32) as u32)], |_| {});
                (lo, hi)
            }
            _ => return Err(self.error("internal: expected a 64-bit value")),
        })
    }

    /// The value as a uniform SGPR pair.
    fn to_s64(&mut self, l: &Lowered) -> Result<ra::VReg, Diagnostic> {
        Ok(match *l {
            Lowered::S64(p) => p,
            Lowered::Imm(bits) => {
                let (lo, hi) = (self.vreg(Class::Sgpr), self.vreg(Class::Sgpr));
                self.emit(Opcode::s_mov_b32, &[Dst::R(lo)], &[Src::Imm(bits as u32)], |_| {});
                self.emit(Opcode::s_mov_b32, &[Dst::R(hi)], &[Src::Imm((bits >> 32) as u32)], |_| {});
                self.make_pair(lo, hi)
            }
            // A value uniform by analysis that lives in VGPRs (a 64-bit multiply,
            // a folded address): every lane holds it, the first one is read.
            Lowered::V64(..) | Lowered::Addr { .. } => {
                let (vl, vh) = self.to_v64(l)?;
                let (lo, hi) = (self.vreg(Class::Sgpr), self.vreg(Class::Sgpr));
                self.emit(Opcode::v_readfirstlane_b32, &[Dst::R(lo)], &[Src::R(vl)], |_| {});
                self.emit(Opcode::v_readfirstlane_b32, &[Dst::R(hi)], &[Src::R(vh)], |_| {});
                self.make_pair(lo, hi)
            }
            _ => return Err(self.error("internal: expected a uniform 64-bit value")),
        })
    }

    /// A uniform i32 sign- or zero-extended into an SGPR pair.
    fn uniform_extend(&mut self, lo: ra::VReg, signed: bool) -> ra::VReg {
        let d = self.vreg(Class::SgprPair);
        let high: (Opcode, &[Src]) = if signed { (Opcode::s_ashr_i32, &[Src::R(lo), Src::Imm(31)]) } else { (Opcode::s_mov_b32, &[Src::Imm(0)]) };
        self.emit_seq(&[(Opcode::s_mov_b32, &[Dst::Half(d, 0)], &[Src::R(lo)]), (high.0, &[Dst::Half(d, 1)], high.1)]);
        d
    }

    fn make_pair(&mut self, lo: ra::VReg, hi: ra::VReg) -> ra::VReg {
        let p = self.vreg(Class::SgprPair);
        self.push(MInst {
            kind: MKind::MakePair,
            ops: vec![
                ra::Operand::new(p, ra::OperandConstraint::Reg, ra::OperandKind::Def, ra::OperandPos::Early),
                ra::Operand::reg_use(lo),
                ra::Operand::reg_use(hi),
            ],
        });
        p
    }

    /// A lane mask for a boolean.
    fn to_mask(&mut self, l: &Lowered) -> Result<ra::VReg, Diagnostic> {
        if let Lowered::ScalarCmp { op, a, b } = l {
            // The compare sets SCC; the mask is all lanes or none.
            let (sa, sb) = (self.scalar_src(a)?, self.scalar_src(b)?);
            let m = self.vreg(self.mask_class());
            let sel = if self.wave64() { Opcode::s_cselect_b64 } else { Opcode::s_cselect_b32 };
            self.emit(*op, &[], &[sa, sb], |_| {});
            self.emit(sel, &[Dst::R(m)], &[Src::Imm(u32::MAX), Src::Imm(0)], |_| {});
            return Ok(m);
        }
        Ok(match *l {
            Lowered::Mask(m) => m,
            Lowered::Bool(b) => {
                let m = self.vreg(self.mask_class());
                let (cmp, sel) = (Opcode::s_cmp_lg_u32, if self.wave64() { Opcode::s_cselect_b64 } else { Opcode::s_cselect_b32 });
                self.bool_select(m, b, cmp, sel);
                m
            }
            Lowered::Imm(bits) => {
                let m = self.vreg(self.mask_class());
                let op = if self.wave64() { Opcode::s_mov_b64 } else { Opcode::s_mov_b32 };
                self.emit(op, &[Dst::R(m)], &[Src::Imm(if bits & 1 != 0 { u32::MAX } else { 0 })], |_| {});
                m
            }
            _ => return Err(self.error("internal: expected a boolean")),
        })
    }

    /// `dst = b != 0 ? -1 : 0` through SCC (two instructions that must stay together).
    fn bool_select(&mut self, dst: ra::VReg, b: ra::VReg, cmp: Opcode, sel: Opcode) {
        // s_cmp then s_cselect: SCC is not allocated, and nothing regalloc inserts
        // between two instructions writes it (moves are s_mov / v_mov / memory).
        self.emit(cmp, &[], &[Src::R(b), Src::Imm(0)], |_| {});
        self.emit(sel, &[Dst::R(dst)], &[Src::Imm(u32::MAX), Src::Imm(0)], |_| {});
    }

    /// A uniform boolean (SGPR 0/1) for a branch condition.
    fn to_bool(&mut self, l: &Lowered) -> Result<ra::VReg, Diagnostic> {
        if let Lowered::ScalarCmp { op, a, b } = l {
            let (sa, sb) = (self.scalar_src(a)?, self.scalar_src(b)?);
            let d = self.vreg(Class::Sgpr);
            self.emit(*op, &[], &[sa, sb], |_| {});
            self.emit(Opcode::s_cselect_b32, &[Dst::R(d)], &[Src::Imm(1), Src::Imm(0)], |_| {});
            return Ok(d);
        }
        Ok(match *l {
            Lowered::Bool(b) => b,
            Lowered::Mask(m) => {
                // Uniform condition computed as a mask: any active lane set.
                let t = self.vreg(self.mask_class());
                let (and, cmp) = if self.wave64() { (Opcode::s_and_b64, Opcode::s_cmp_lg_u64) } else { (Opcode::s_and_b32, Opcode::s_cmp_lg_u32) };
                let exec = self.exec_reg();
                self.emit(and, &[Dst::R(t)], &[Src::R(m), Src::Fixed(exec)], |_| {});
                let b = self.vreg(Class::Sgpr);
                self.emit(cmp, &[], &[Src::R(t), Src::Imm(0)], |_| {});
                self.emit(Opcode::s_cselect_b32, &[Dst::R(b)], &[Src::Imm(1), Src::Imm(0)], |_| {});
                b
            }
            Lowered::Imm(bits) => {
                let b = self.vreg(Class::Sgpr);
                self.emit(Opcode::s_mov_b32, &[Dst::R(b)], &[Src::Imm((bits & 1) as u32)], |_| {});
                b
            }
            _ => return Err(self.error("internal: expected a boolean")),
        })
    }

    fn lowered(&self, operand: &Operand) -> Lowered {
        match operand {
            Operand::Value(v) => self.values[v.0 as usize].clone().expect("values are lowered in dominance order"),
            Operand::Const(c) => const_lowered(c),
        }
    }

    fn src_of(&mut self, l: &Lowered) -> Result<Src, Diagnostic> {
        Ok(match *l {
            Lowered::S(s) | Lowered::Bool(s) => Src::R(s),
            Lowered::V(v) => Src::R(v),
            Lowered::Imm(bits) => Src::Imm(bits as u32),
            Lowered::Mask(_) => Src::R(self.to_v(l)?),
            _ => return Err(self.error("internal: expected a 32-bit operand")),
        })
    }

    /// A VALU instruction with legal operands: on gfx9, VOP3 takes no literal and
    /// one scalar source; VOP2 takes a scalar or literal only as src0. Operands
    /// that do not fit are moved to VGPRs first.
    fn valu(&mut self, op: Opcode, dst: ra::VReg, srcs: &[Lowered], commutative: bool) -> Result<(), Diagnostic> {
        let info = op.info();
        let native = info.format(self.target.gpu);
        let vop3 = !native.has_e64_form();
        let gfx11 = self.target.gpu.generation() == isa::Generation::Gfx11;
        let mut order: Vec<Lowered> = srcs.to_vec();
        let is_vgpr = |l: &Lowered| matches!(l, Lowered::V(_));
        if !vop3 && order.len() == 2 && commutative && is_vgpr(&order[0]) && !is_vgpr(&order[1]) {
            order.swap(0, 1);
        }
        let mut srcs_out = Vec::new();
        let mut scalar_budget = if gfx11 { 2 } else { 1 };
        let mut literal_budget = if vop3 && !gfx11 { 0 } else { 1 };
        let mut scalar_seen: Option<ra::VReg> = None;
        for (i, l) in order.iter().enumerate() {
            let needs_vgpr_slot = !vop3 && i >= 1;
            let src = match *l {
                _ if needs_vgpr_slot => Src::R(self.to_v(l)?),
                Lowered::S(s) | Lowered::Bool(s) if !needs_vgpr_slot && (scalar_budget > 0 || scalar_seen == Some(s)) => {
                    if scalar_seen != Some(s) {
                        scalar_budget -= 1;
                        scalar_seen = Some(s);
                    }
                    Src::R(s)
                }
                Lowered::Imm(bits) if matches!(isa::Operand::imm32(bits as u32), isa::Operand::Const(_)) => Src::Imm(bits as u32),
                Lowered::Imm(bits) if !needs_vgpr_slot && literal_budget > 0 && scalar_budget > 0 => {
                    literal_budget -= 1;
                    scalar_budget -= 1;
                    Src::Imm(bits as u32)
                }
                _ => Src::R(self.to_v(l)?),
            };
            srcs_out.push(src);
        }
        self.emit(op, &[Dst::R(dst)], &srcs_out, |i| i.e64 = vop3 && native.has_e64_form());
        Ok(())
    }

    /// An f16 value (low 16 bits) as f32; exact. Constants fold.
    fn f16_to_f32(&mut self, a: Lowered) -> Result<Lowered, Diagnostic> {
        if let Lowered::Imm(bits) = a {
            return Ok(Lowered::Imm(u64::from(crate::mir::float::f16_to_f32(bits as u16).to_bits())));
        }
        self.f16_supported()?;
        let d = self.vreg(Class::Vgpr);
        self.valu(Opcode::v_cvt_f32_f16, d, &[a], false)?;
        Ok(Lowered::V(d))
    }

    /// An f32 value rounded to f16 (to nearest even), in the low 16 bits.
    fn f32_to_f16(&mut self, a: Lowered) -> Result<Lowered, Diagnostic> {
        if let Lowered::Imm(bits) = a {
            return Ok(Lowered::Imm(u64::from(crate::mir::float::f32_to_f16(f32::from_bits(bits as u32)))));
        }
        self.f16_supported()?;
        let d = self.vreg(Class::Vgpr);
        self.valu(Opcode::v_cvt_f16_f32, d, &[a], false)?;
        Ok(Lowered::V(d))
    }

    /// gfx11's f16 conversions are true16 instructions (`v1.l` operands), which
    /// the ISA layer does not model yet.
    fn f16_supported(&self) -> Result<(), Diagnostic> {
        if self.target.gpu.generation() == isa::Generation::Gfx11 {
            return Err(self.error(format!("f16 arithmetic and conversions are not supported on {} yet (its f16 conversions are true16 instructions)", self.target.gpu.name())));
        }
        Ok(())
    }

    fn set(&mut self, v: Value, l: Lowered) {
        self.values[v.0 as usize] = Some(l);
    }

    // ---- instructions ------------------------------------------------------

    fn instruction(&mut self, inst: &'a Inst) -> Result<(), Diagnostic> {
        self.inst_ref = Some(inst);
        let result = inst.result;
        let divergent_result = result.is_some_and(|r| self.uni.is_divergent(r));
        match &inst.op {
            Op::Const(c) => self.set(result.unwrap(), const_lowered(c)),
            Op::Binary { op, ty, lhs, rhs } => {
                let l = self.binary(*op, ty, lhs, rhs, divergent_result)?;
                self.set(result.unwrap(), l);
            }
            Op::Unary { op, ty, arg } => {
                let l = self.unary(*op, ty, arg, divergent_result)?;
                self.set(result.unwrap(), l);
            }
            Op::Fma { ty, a, b, c } if *ty == Type::F64 => {
                let (a, b, c) = (self.lowered(a), self.lowered(b), self.lowered(c));
                let (a, b, c) = (self.to_v64(&a)?, self.to_v64(&b)?, self.to_v64(&c)?);
                let (lo, hi) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
                self.emit(Opcode::v_fma_f64, &[Dst::VPair(lo, hi)], &[Src::VPair(a.0, a.1), Src::VPair(b.0, b.1), Src::VPair(c.0, c.1)], |_| {});
                self.set(result.unwrap(), Lowered::V64(lo, hi));
            }
            Op::Fma { ty, a, b, c } => {
                if *ty != Type::F32 {
                    return Err(self.error(format!("fma on {ty} is not supported by the code generator yet")));
                }
                let (a, b, c) = (self.lowered(a), self.lowered(b), self.lowered(c));
                let d = self.vreg(Class::Vgpr);
                self.valu(Opcode::v_fma_f32, d, &[a, b, c], false)?;
                self.set(result.unwrap(), Lowered::V(d));
            }
            Op::Icmp { pred, ty, lhs, rhs } => {
                let l = self.icmp(*pred, ty, lhs, rhs, divergent_result)?;
                self.set(result.unwrap(), l);
            }
            Op::Fcmp { pred, ty, lhs, rhs } if *ty == Type::F64 => {
                let (a, b) = (self.lowered(lhs), self.lowered(rhs));
                let ((al, ah), (bl, bh)) = (self.to_v64(&a)?, self.to_v64(&b)?);
                let m = self.vreg(self.mask_class());
                self.emit(fcmp64_opcode(*pred), &[Dst::R(m)], &[Src::VPair(al, ah), Src::VPair(bl, bh)], |i| i.e64 = true);
                self.set(result.unwrap(), Lowered::Mask(m));
            }
            Op::Fcmp { pred, ty: Type::F32, lhs: Operand::Const(x), rhs: Operand::Const(y) } => {
                self.set(result.unwrap(), Lowered::Imm(u64::from(interp::ops::fcmp(*pred, &Type::F32, x.bits, y.bits))));
            }
            Op::Fcmp { pred, ty: Type::F16, lhs, rhs } => {
                // Exact in f32.
                let (a, b) = (self.lowered(lhs), self.lowered(rhs));
                let (a, b) = (self.f16_to_f32(a)?, self.f16_to_f32(b)?);
                let m = self.vcmp(fcmp_opcode(*pred), a, b)?;
                self.set(result.unwrap(), Lowered::Mask(m));
            }
            Op::Fcmp { pred, ty, lhs, rhs } => {
                if *ty != Type::F32 {
                    return Err(self.error(format!("fcmp on {ty} is not supported by the code generator yet")));
                }
                let (a, b) = (self.lowered(lhs), self.lowered(rhs));
                let m = self.vcmp(fcmp_opcode(*pred), a, b)?;
                self.set(result.unwrap(), Lowered::Mask(m));
            }
            Op::Select { ty, cond, if_true, if_false } => {
                let l = self.select(ty, cond, if_true, if_false, divergent_result)?;
                self.set(result.unwrap(), l);
            }
            Op::Cast { op, from, arg, to } => {
                let l = self.cast(*op, from, arg, to, divergent_result)?;
                self.set(result.unwrap(), l);
            }
            Op::Load { ty, ptr, align } => {
                let l = self.load(ty, ptr, *align, divergent_result)?;
                self.set(result.unwrap(), l);
            }
            Op::Store { ty, value, ptr, align } => self.store(ty, value, ptr, *align)?,
            Op::PtrAdd { ptr, offset } => {
                let l = self.ptradd(ptr, offset, divergent_result)?;
                self.set(result.unwrap(), l);
            }
            Op::LdsSlot { size, align } => {
                let end = u64::from(self.lds_size).div_ceil(u64::from(*align)) * u64::from(*align) + u64::from(*size);
                if end > u64::from(LDS_LIMIT) {
                    return Err(self.error(format!("the kernel's lds_slots need {end} bytes of LDS, more than the {LDS_LIMIT} a work-group can have")));
                }
                let offset = (end - u64::from(*size)) as u32;
                self.lds_size = end as u32;
                self.set(result.unwrap(), Lowered::Imm(u64::from(offset)));
            }
            Op::Builtin { kind, dim } => {
                let l = self.builtin(*kind, *dim)?;
                self.set(result.unwrap(), l);
            }
            Op::Barrier => self.emit(Opcode::s_barrier, &[], &[], |_| {}),
            Op::Extract { agg, index } => {
                let Lowered::Agg(parts) = self.lowered(agg) else { return Err(self.error("internal: extract from a non-aggregate")) };
                self.set(result.unwrap(), parts[*index as usize].clone());
            }
            Op::Insert { agg, value, index } => {
                let Lowered::Agg(mut parts) = self.lowered(agg) else { return Err(self.error("internal: insert into a non-aggregate")) };
                parts[*index as usize] = self.lowered(value);
                self.set(result.unwrap(), Lowered::Agg(parts));
            }
            Op::Make { elems, .. } => {
                let parts = elems.iter().map(|e| self.lowered(e)).collect();
                self.set(result.unwrap(), Lowered::Agg(parts));
            }
            Op::StackSlot { size, align } => {
                // Locals are 16-byte aligned, as the stack is.
                if *align > 16 {
                    return Err(self.error(format!("stack slots aligned to more than 16 bytes (align {align}) are not supported: the stack is 16-byte aligned")));
                }
                if *size > super::expand::MAX_FRAME_BYTES {
                    return Err(self.error(format!("a stack slot of {size} bytes is larger than the {} bytes per lane a frame may have", super::expand::MAX_FRAME_BYTES)));
                }
                let local = self.new_local(*size);
                let l = self.local_pointer(local)?;
                self.set(inst.result.expect("a stack slot has a result"), l);
            }
            Op::Call { callee, args } => self.call(callee, args, result)?,
            Op::AtomicRmw { op, ty, ptr, value } => {
                let l = self.atomic(Some(*op), ty, ptr, value, None)?;
                self.set(result.unwrap(), l);
            }
            Op::CmpXchg { ty, ptr, expected, new } => {
                let l = self.atomic(None, ty, ptr, new, Some(expected))?;
                self.set(result.unwrap(), l);
            }
        }
        Ok(())
    }

    fn binary(&mut self, op: BinOp, ty: &Type, lhs: &Operand, rhs: &Operand, divergent: bool) -> Result<Lowered, Diagnostic> {
        let (a, b) = (self.lowered(lhs), self.lowered(rhs));
        self.binary_values(op, ty, a, b, divergent)
    }

    fn binary_values(&mut self, op: BinOp, ty: &Type, a: Lowered, b: Lowered, divergent: bool) -> Result<Lowered, Diagnostic> {
        let divergent = divergent || in_vector_registers(&a) || in_vector_registers(&b);
        if let (Lowered::Imm(x), Lowered::Imm(y)) = (&a, &b) {
            // Folded by the interpreter's own semantics (the oracle); what it
            // refuses (division by zero, overflow) is left to run.
            if let Some(folded) = (*ty == Type::I32).then(|| interp::ops::int_binary(op, 32, *x, *y).ok()).flatten() {
                return Ok(Lowered::Imm(folded));
            }
        }
        match ty {
            Type::I32 => self.binary32(op, a, b, divergent),
            // f16 arithmetic in f32, rounded once to f16: f32 has 24 >= 2 * 11 + 2
            // bits, so add, sub, mul and div round as if done in f16 directly;
            // min and max are exact.
            Type::F16 => {
                let (a, b) = (self.f16_to_f32(a)?, self.f16_to_f32(b)?);
                let wide = self.binary_values(op, &Type::F32, a, b, divergent)?;
                self.f32_to_f16(wide)
            }
            Type::F32 => {
                let opcode = match op {
                    BinOp::FAdd => Opcode::v_add_f32,
                    BinOp::FSub => Opcode::v_sub_f32,
                    BinOp::FMul => Opcode::v_mul_f32,
                    BinOp::FMin => Opcode::v_min_f32,
                    BinOp::FMax => Opcode::v_max_f32,
                    BinOp::FDiv => return self.fdiv32(a, b),
                    _ => unreachable!("verified: float op on f32"),
                };
                // In IEEE mode min/max return NaN for a signalling NaN operand; MIR
                // ignores any single NaN, so quiet the operands first (max(x, x)).
                let (a, b) = if matches!(op, BinOp::FMin | BinOp::FMax) { (self.quiet32(a)?, self.quiet32(b)?) } else { (a, b) };
                let d = self.vreg(Class::Vgpr);
                let commutative = !matches!(op, BinOp::FSub);
                self.valu(opcode, d, &[a, b], commutative)?;
                Ok(Lowered::V(d))
            }
            Type::F64 => self.binary_f64(op, a, b),
            Type::I1 => {
                // Logic on booleans: uniform -> SALU on 0/1, divergent -> mask ops.
                if divergent {
                    let (ma, mb) = (self.to_mask(&a)?, self.to_mask(&b)?);
                    let m = self.vreg(self.mask_class());
                    let opcode = match (op, self.wave64()) {
                        (BinOp::And, true) => Opcode::s_and_b64,
                        (BinOp::Or, true) => Opcode::s_or_b64,
                        (_, true) => Opcode::s_xor_b64,
                        (BinOp::And, false) => Opcode::s_and_b32,
                        (BinOp::Or, false) => Opcode::s_or_b32,
                        (_, false) => Opcode::s_xor_b32,
                    };
                    self.emit(opcode, &[Dst::R(m)], &[Src::R(ma), Src::R(mb)], |_| {});
                    Ok(Lowered::Mask(m))
                } else {
                    let (sa, sb) = (self.to_bool(&a)?, self.to_bool(&b)?);
                    let d = self.vreg(Class::Sgpr);
                    let opcode = match op {
                        BinOp::And => Opcode::s_and_b32,
                        BinOp::Or => Opcode::s_or_b32,
                        _ => Opcode::s_xor_b32,
                    };
                    self.emit(opcode, &[Dst::R(d)], &[Src::R(sa), Src::R(sb)], |_| {});
                    Ok(Lowered::Bool(d))
                }
            }
            Type::I64 if matches!(op, BinOp::Add | BinOp::Sub | BinOp::And | BinOp::Or | BinOp::Xor) => self.binary64(op, a, b, divergent),
            Type::I64 if matches!(op, BinOp::Shl | BinOp::LShr | BinOp::AShr) => self.shift64(op, a, b, divergent),
            Type::I64 if op == BinOp::Mul => self.mul64(a, b),
            other => Err(self.error(format!("'{}' on {other} is not supported by the code generator yet", op.mnemonic()))),
        }
    }

    fn binary32(&mut self, op: BinOp, a: Lowered, b: Lowered, divergent: bool) -> Result<Lowered, Diagnostic> {
        // x * 2^k is x << k (a full-rate instruction instead of a quarter-rate one).
        if op == BinOp::Mul {
            for (x, c) in [(&a, &b), (&b, &a)] {
                if let Lowered::Imm(bits) = c {
                    let v = *bits as u32;
                    if v.is_power_of_two() {
                        let shift = Lowered::Imm(u64::from(v.trailing_zeros()));
                        return self.binary32(BinOp::Shl, x.clone(), shift, divergent);
                    }
                }
            }
        }
        // x + 0, x - 0, x | 0, x ^ 0, x << 0 ... are x.
        if matches!(op, BinOp::Add | BinOp::Sub | BinOp::Or | BinOp::Xor | BinOp::Shl | BinOp::LShr | BinOp::AShr) && matches!(b, Lowered::Imm(0)) {
            return Ok(a);
        }
        if matches!(op, BinOp::Add | BinOp::Or | BinOp::Xor) && matches!(a, Lowered::Imm(0)) {
            return Ok(b);
        }
        if matches!(op, BinOp::UDiv | BinOp::URem) {
            return self.udiv32(a, b, op == BinOp::URem);
        }
        if matches!(op, BinOp::SDiv | BinOp::SRem) {
            return self.sdiv32(a, b, op == BinOp::SRem);
        }
        if !divergent {
            let opcode = match op {
                BinOp::Add => Opcode::s_add_u32,
                BinOp::Sub => Opcode::s_sub_u32,
                BinOp::Mul => Opcode::s_mul_i32,
                BinOp::MulHiU => Opcode::s_mul_hi_u32,
                BinOp::MulHiS => Opcode::s_mul_hi_i32,
                BinOp::And => Opcode::s_and_b32,
                BinOp::Or => Opcode::s_or_b32,
                BinOp::Xor => Opcode::s_xor_b32,
                BinOp::Shl => Opcode::s_lshl_b32,
                BinOp::LShr => Opcode::s_lshr_b32,
                BinOp::AShr => Opcode::s_ashr_i32,
                BinOp::SMin => Opcode::s_min_i32,
                BinOp::SMax => Opcode::s_max_i32,
                BinOp::UMin => Opcode::s_min_u32,
                BinOp::UMax => Opcode::s_max_u32,
                _ => unreachable!("integer op"),
            };
            // SOP2 takes one literal: a second goes to an SGPR first.
            let a = if is_literal(&a) && is_literal(&b) { Lowered::S(self.to_s(&a)?) } else { a };
            let (sa, sb) = (self.scalar_src(&a)?, self.scalar_src(&b)?);
            let d = self.vreg(Class::Sgpr);
            self.emit(opcode, &[Dst::R(d)], &[sa, sb], |_| {});
            return Ok(Lowered::S(d));
        }
        let d = self.vreg(Class::Vgpr);
        // VALU shifts take the amount first ("rev" forms); sub of (a, b) = subrev(b, a).
        let (opcode, srcs, commutative) = match op {
            BinOp::Add => (Opcode::v_add_u32, vec![a, b], true),
            BinOp::Sub => {
                if matches!(b, Lowered::S(_) | Lowered::Imm(..)) && matches!(a, Lowered::V(_)) {
                    (Opcode::v_subrev_u32, vec![b, a], false)
                } else {
                    (Opcode::v_sub_u32, vec![a, b], false)
                }
            }
            BinOp::Mul => (Opcode::v_mul_lo_u32, vec![a, b], true),
            BinOp::MulHiU => (Opcode::v_mul_hi_u32, vec![a, b], true),
            BinOp::MulHiS => (Opcode::v_mul_hi_i32, vec![a, b], true),
            BinOp::And => (Opcode::v_and_b32, vec![a, b], true),
            BinOp::Or => (Opcode::v_or_b32, vec![a, b], true),
            BinOp::Xor => (Opcode::v_xor_b32, vec![a, b], true),
            BinOp::Shl => (Opcode::v_lshlrev_b32, vec![b, a], false),
            BinOp::LShr => (Opcode::v_lshrrev_b32, vec![b, a], false),
            BinOp::AShr => (Opcode::v_ashrrev_i32, vec![b, a], false),
            BinOp::SMin => (Opcode::v_min_i32, vec![a, b], true),
            BinOp::SMax => (Opcode::v_max_i32, vec![a, b], true),
            BinOp::UMin => (Opcode::v_min_u32, vec![a, b], true),
            BinOp::UMax => (Opcode::v_max_u32, vec![a, b], true),
            _ => unreachable!("integer op"),
        };
        self.valu(opcode, d, &srcs, commutative)?;
        Ok(Lowered::V(d))
    }

    fn scalar_src(&mut self, l: &Lowered) -> Result<Src, Diagnostic> {
        Ok(match *l {
            Lowered::Imm(bits) => Src::Imm(bits as u32),
            _ => Src::R(self.to_s(l)?),
        })
    }

    fn binary64(&mut self, op: BinOp, a: Lowered, b: Lowered, divergent: bool) -> Result<Lowered, Diagnostic> {
        if !divergent {
            let (op_lo, op_hi) = match op {
                BinOp::Add => (Opcode::s_add_u32, Opcode::s_addc_u32),
                BinOp::Sub => (Opcode::s_sub_u32, Opcode::s_subb_u32),
                BinOp::And => (Opcode::s_and_b32, Opcode::s_and_b32),
                BinOp::Or => (Opcode::s_or_b32, Opcode::s_or_b32),
                _ => (Opcode::s_xor_b32, Opcode::s_xor_b32),
            };
            let halves = |s: &mut Self, l: &Lowered| -> Result<[Src; 2], Diagnostic> {
                Ok(match *l {
                    Lowered::Imm(bits) => [Src::Imm(bits as u32), Src::Imm((bits >> 32) as u32)],
                    _ => {
                        let p = s.to_s64(l)?;
                        [Src::Half(p, 0), Src::Half(p, 1)]
                    }
                })
            };
            let (ha, hb) = (halves(self, &a)?, halves(self, &b)?);
            let d = self.vreg(Class::SgprPair);
            // One sequence: the carry travels in SCC from the first instruction to
            // the second, and nothing may come between them.
            self.emit_seq(&[(op_lo, &[Dst::Half(d, 0)], &[ha[0], hb[0]]), (op_hi, &[Dst::Half(d, 1)], &[ha[1], hb[1]])]);
            return Ok(Lowered::S64(d));
        }
        let ((al, ah), (bl, bh)) = (self.to_v64(&a)?, self.to_v64(&b)?);
        let (lo, hi) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
        match op {
            BinOp::Add | BinOp::Sub => {
                let carry = self.vreg(self.mask_class());
                let (op_lo, op_hi) = if op == BinOp::Add {
                    (Opcode::v_add_co_u32, Opcode::v_addc_co_u32)
                } else {
                    (Opcode::v_sub_co_u32, Opcode::v_subb_co_u32)
                };
                self.emit(op_lo, &[Dst::R(lo), Dst::R(carry)], &[Src::R(al), Src::R(bl)], |i| i.e64 = true);
                let carry_out = self.vreg(self.mask_class());
                self.emit(op_hi, &[Dst::R(hi), Dst::R(carry_out)], &[Src::R(ah), Src::R(bh), Src::R(carry)], |i| i.e64 = true);
            }
            _ => {
                let opcode = match op {
                    BinOp::And => Opcode::v_and_b32,
                    BinOp::Or => Opcode::v_or_b32,
                    _ => Opcode::v_xor_b32,
                };
                self.emit(opcode, &[Dst::R(lo)], &[Src::R(al), Src::R(bl)], |_| {});
                self.emit(opcode, &[Dst::R(hi)], &[Src::R(ah), Src::R(bh)], |_| {});
            }
        }
        Ok(Lowered::V64(lo, hi))
    }

    fn shift64(&mut self, op: BinOp, a: Lowered, b: Lowered, divergent: bool) -> Result<Lowered, Diagnostic> {
        // The amount is the low 6 bits of the i64 amount (modulo 64, as MIR says).
        let amount = match b {
            Lowered::Imm(bits) => Lowered::Imm(bits & 63),
            Lowered::S64(p) => {
                let s = self.vreg(Class::Sgpr);
                self.emit(Opcode::s_and_b32, &[Dst::R(s)], &[Src::Half(p, 0), Src::Imm(63)], |_| {});
                Lowered::S(s)
            }
            Lowered::V64(lo, _) => Lowered::V(lo),
            _ => return Err(self.error("internal: i64 shift amount")),
        };
        if !divergent {
            let p = self.to_s64(&a)?;
            let d = self.vreg(Class::SgprPair);
            let opcode = match op {
                BinOp::Shl => Opcode::s_lshl_b64,
                BinOp::LShr => Opcode::s_lshr_b64,
                _ => Opcode::s_ashr_i64,
            };
            let amount = self.scalar_src(&amount)?;
            self.emit(opcode, &[Dst::R(d)], &[Src::R(p), amount], |_| {});
            return Ok(Lowered::S64(d));
        }
        let (al, ah) = self.to_v64(&a)?;
        let (lo, hi) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
        let opcode = match op {
            BinOp::Shl => Opcode::v_lshlrev_b64,
            BinOp::LShr => Opcode::v_lshrrev_b64,
            _ => Opcode::v_ashrrev_i64,
        };
        let amount = match amount {
            Lowered::Imm(bits) => Src::Imm(bits as u32),
            other => Src::R(self.to_v(&other)?),
        };
        self.emit(opcode, &[Dst::VPair(lo, hi)], &[amount, Src::VPair(al, ah)], |_| {});
        Ok(Lowered::V64(lo, hi))
    }

    fn mul64(&mut self, a: Lowered, b: Lowered) -> Result<Lowered, Diagnostic> {
        // (ah:al) * (bh:bl) mod 2^64 = al*bl + ((al*bh + ah*bl) << 32).
        let ((al, ah), (bl, bh)) = (self.to_v64(&a)?, self.to_v64(&b)?);
        let (lo, hi0, hi) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
        self.emit(Opcode::v_mul_lo_u32, &[Dst::R(lo)], &[Src::R(al), Src::R(bl)], |_| {});
        self.emit(Opcode::v_mul_hi_u32, &[Dst::R(hi0)], &[Src::R(al), Src::R(bl)], |_| {});
        let (c1, c2, s1) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
        self.emit(Opcode::v_mul_lo_u32, &[Dst::R(c1)], &[Src::R(al), Src::R(bh)], |_| {});
        self.emit(Opcode::v_mul_lo_u32, &[Dst::R(c2)], &[Src::R(ah), Src::R(bl)], |_| {});
        self.emit(Opcode::v_add_u32, &[Dst::R(s1)], &[Src::R(c1), Src::R(c2)], |_| {});
        self.emit(Opcode::v_add_u32, &[Dst::R(hi)], &[Src::R(hi0), Src::R(s1)], |_| {});
        Ok(Lowered::V64(lo, hi))
    }

    /// Unsigned 32-bit division: a reciprocal estimate refined by one Newton step
    /// and two corrections (exact for every operand pair; see docs/pipeline.md).
    fn udiv32(&mut self, a: Lowered, b: Lowered, remainder: bool) -> Result<Lowered, Diagnostic> {
        let n = self.to_v(&a)?;
        let d = self.to_v(&b)?;
        let v = |s: &mut Self| s.vreg(Class::Vgpr);
        let (df, rcp, scaled, z) = (v(self), v(self), v(self), v(self));
        self.emit(Opcode::v_cvt_f32_u32, &[Dst::R(df)], &[Src::R(d)], |_| {});
        self.emit(Opcode::v_rcp_iflag_f32, &[Dst::R(rcp)], &[Src::R(df)], |_| {});
        self.emit(Opcode::v_mul_f32, &[Dst::R(scaled)], &[Src::Imm(0x4f7f_fffe), Src::R(rcp)], |_| {});
        self.emit(Opcode::v_cvt_u32_f32, &[Dst::R(z)], &[Src::R(scaled)], |_| {});
        let (negd, t, hi, z2) = (v(self), v(self), v(self), v(self));
        self.emit(Opcode::v_sub_u32, &[Dst::R(negd)], &[Src::Imm(0), Src::R(d)], |_| {});
        self.emit(Opcode::v_mul_lo_u32, &[Dst::R(t)], &[Src::R(negd), Src::R(z)], |_| {});
        self.emit(Opcode::v_mul_hi_u32, &[Dst::R(hi)], &[Src::R(z), Src::R(t)], |_| {});
        self.emit(Opcode::v_add_u32, &[Dst::R(z2)], &[Src::R(z), Src::R(hi)], |_| {});
        let (q, qd, r) = (v(self), v(self), v(self));
        self.emit(Opcode::v_mul_hi_u32, &[Dst::R(q)], &[Src::R(n), Src::R(z2)], |_| {});
        self.emit(Opcode::v_mul_lo_u32, &[Dst::R(qd)], &[Src::R(q), Src::R(d)], |_| {});
        self.emit(Opcode::v_sub_u32, &[Dst::R(r)], &[Src::R(n), Src::R(qd)], |_| {});
        let (mut q, mut r) = (q, r);
        for _ in 0..2 {
            let ge = self.vreg(self.mask_class());
            self.emit(Opcode::v_cmp_ge_u32, &[Dst::R(ge)], &[Src::R(r), Src::R(d)], |i| i.e64 = true);
            let (q1, r1, q2, r2) = (v(self), v(self), v(self), v(self));
            self.emit(Opcode::v_add_u32, &[Dst::R(q1)], &[Src::Imm(1), Src::R(q)], |_| {});
            self.emit(Opcode::v_sub_u32, &[Dst::R(r1)], &[Src::R(r), Src::R(d)], |_| {});
            self.emit(Opcode::v_cndmask_b32, &[Dst::R(q2)], &[Src::R(q), Src::R(q1), Src::R(ge)], |i| i.e64 = true);
            self.emit(Opcode::v_cndmask_b32, &[Dst::R(r2)], &[Src::R(r), Src::R(r1), Src::R(ge)], |i| i.e64 = true);
            q = q2;
            r = r2;
        }
        Ok(Lowered::V(if remainder { r } else { q }))
    }

    /// Signed division via the unsigned one on magnitudes; the quotient is negative
    /// when the signs differ, the remainder has the dividend's sign.
    fn sdiv32(&mut self, a: Lowered, b: Lowered, remainder: bool) -> Result<Lowered, Diagnostic> {
        let (n, d) = (self.to_v(&a)?, self.to_v(&b)?);
        let v = |s: &mut Self| s.vreg(Class::Vgpr);
        let (sn, sd, an0, ad0, an, ad) = (v(self), v(self), v(self), v(self), v(self), v(self));
        self.emit(Opcode::v_ashrrev_i32, &[Dst::R(sn)], &[Src::Imm(31), Src::R(n)], |_| {});
        self.emit(Opcode::v_ashrrev_i32, &[Dst::R(sd)], &[Src::Imm(31), Src::R(d)], |_| {});
        // |x| = (x + s) ^ s with s = x >> 31.
        self.emit(Opcode::v_add_u32, &[Dst::R(an0)], &[Src::R(n), Src::R(sn)], |_| {});
        self.emit(Opcode::v_add_u32, &[Dst::R(ad0)], &[Src::R(d), Src::R(sd)], |_| {});
        self.emit(Opcode::v_xor_b32, &[Dst::R(an)], &[Src::R(an0), Src::R(sn)], |_| {});
        self.emit(Opcode::v_xor_b32, &[Dst::R(ad)], &[Src::R(ad0), Src::R(sd)], |_| {});
        let Lowered::V(u) = self.udiv32(Lowered::V(an), Lowered::V(ad), remainder)? else { unreachable!() };
        let sign = if remainder {
            sn
        } else {
            let s = v(self);
            self.emit(Opcode::v_xor_b32, &[Dst::R(s)], &[Src::R(sn), Src::R(sd)], |_| {});
            s
        };
        let (x, r) = (v(self), v(self));
        self.emit(Opcode::v_xor_b32, &[Dst::R(x)], &[Src::R(u), Src::R(sign)], |_| {});
        self.emit(Opcode::v_sub_u32, &[Dst::R(r)], &[Src::R(x), Src::R(sign)], |_| {});
        Ok(Lowered::V(r))
    }

    /// Correctly rounded f32 division (the scale / reciprocal / Newton / fixup
    /// sequence). VCC carries the scale flag from the second v_div_scale to
    /// v_div_fmas across several selected instructions: regalloc2 may put moves
    /// and spill code between them, so nothing expansion adds between
    /// instructions may write VCC (expand.rs `whole_wave`).
    fn fdiv32(&mut self, a: Lowered, b: Lowered) -> Result<Lowered, Diagnostic> {
        let (n, d) = (self.to_v(&a)?, self.to_v(&b)?);
        let vcc = isa::Reg::vcc(if self.wave64() { 2 } else { 1 });
        let v = |s: &mut Self| s.vreg(Class::Vgpr);
        let (den, num, r0, e0, r1, q0, e1, q1, e2, q2, res) =
            (v(self), v(self), v(self), v(self), v(self), v(self), v(self), v(self), v(self), v(self), v(self));
        let neg0 = |i: &mut isa::Inst| i.mods.neg = 1;
        self.emit(Opcode::v_div_scale_f32, &[Dst::R(den), Dst::Fixed(vcc)], &[Src::R(d), Src::R(d), Src::R(n)], |_| {});
        self.emit(Opcode::v_div_scale_f32, &[Dst::R(num), Dst::Fixed(vcc)], &[Src::R(n), Src::R(d), Src::R(n)], |_| {});
        self.emit(Opcode::v_rcp_f32, &[Dst::R(r0)], &[Src::R(den)], |_| {});
        self.emit(Opcode::v_fma_f32, &[Dst::R(e0)], &[Src::R(den), Src::R(r0), Src::Imm(1.0f32.to_bits())], neg0);
        self.emit(Opcode::v_fma_f32, &[Dst::R(r1)], &[Src::R(e0), Src::R(r0), Src::R(r0)], |_| {});
        self.emit(Opcode::v_mul_f32, &[Dst::R(q0)], &[Src::R(num), Src::R(r1)], |_| {});
        self.emit(Opcode::v_fma_f32, &[Dst::R(e1)], &[Src::R(den), Src::R(q0), Src::R(num)], neg0);
        self.emit(Opcode::v_fma_f32, &[Dst::R(q1)], &[Src::R(e1), Src::R(r1), Src::R(q0)], |_| {});
        self.emit(Opcode::v_fma_f32, &[Dst::R(e2)], &[Src::R(den), Src::R(q1), Src::R(num)], neg0);
        self.emit(Opcode::v_div_fmas_f32, &[Dst::R(q2)], &[Src::R(e2), Src::R(r1), Src::R(q1)], |_| {});
        self.emit(Opcode::v_div_fixup_f32, &[Dst::R(res)], &[Src::R(q2), Src::R(d), Src::R(n)], |_| {});
        Ok(Lowered::V(res))
    }

    /// The value with a signalling NaN quieted (constants are left alone).
    fn quiet32(&mut self, l: Lowered) -> Result<Lowered, Diagnostic> {
        if let Lowered::Imm(_) = l {
            return Ok(l);
        }
        let x = self.to_v(&l)?;
        let q = self.vreg(Class::Vgpr);
        self.emit(Opcode::v_max_f32, &[Dst::R(q)], &[Src::R(x), Src::R(x)], |_| {});
        Ok(Lowered::V(q))
    }

    /// f64 arithmetic: every operand and result is a VGPR pair (through windows).
    fn binary_f64(&mut self, op: BinOp, a: Lowered, b: Lowered) -> Result<Lowered, Diagnostic> {
        let ((mut al, mut ah), (mut bl, mut bh)) = (self.to_v64(&a)?, self.to_v64(&b)?);
        if op == BinOp::FDiv {
            return self.fdiv64((al, ah), (bl, bh));
        }
        if matches!(op, BinOp::FMin | BinOp::FMax) {
            // Quiet signalling NaNs first (see quiet32).
            for (lo, hi) in [(&mut al, &mut ah), (&mut bl, &mut bh)] {
                let (ql, qh) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
                self.emit(Opcode::v_max_f64, &[Dst::VPair(ql, qh)], &[Src::VPair(*lo, *hi), Src::VPair(*lo, *hi)], |_| {});
                (*lo, *hi) = (ql, qh);
            }
        }
        let (opcode, negate_b) = match op {
            BinOp::FAdd => (Opcode::v_add_f64, false),
            BinOp::FSub => (Opcode::v_add_f64, true),
            BinOp::FMul => (Opcode::v_mul_f64, false),
            BinOp::FMin => (Opcode::v_min_f64, false),
            BinOp::FMax => (Opcode::v_max_f64, false),
            _ => unreachable!("verified: float op on f64"),
        };
        let (lo, hi) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
        self.emit(opcode, &[Dst::VPair(lo, hi)], &[Src::VPair(al, ah), Src::VPair(bl, bh)], |i| {
            if negate_b {
                i.mods.neg = 0b10;
            }
        });
        Ok(Lowered::V64(lo, hi))
    }

    /// Correctly rounded f64 division: scale, reciprocal, two Newton steps, then
    /// the quotient with one correction, `v_div_fmas` (VCC from the numerator's
    /// scale) and `v_div_fixup` for the special cases.
    fn fdiv64(&mut self, n: (ra::VReg, ra::VReg), d: (ra::VReg, ra::VReg)) -> Result<Lowered, Diagnostic> {
        let vcc = isa::Reg::vcc(if self.wave64() { 2 } else { 1 });
        let pair = |s: &mut Self| (s.vreg(Class::Vgpr), s.vreg(Class::Vgpr));
        let p = |x: (ra::VReg, ra::VReg)| Src::VPair(x.0, x.1);
        let dp = |x: (ra::VReg, ra::VReg)| Dst::VPair(x.0, x.1);
        let neg0 = |i: &mut isa::Inst| i.mods.neg = 1;
        let one = Src::Imm(1.0f32.to_bits());
        let den = pair(self);
        self.emit(Opcode::v_div_scale_f64, &[dp(den), Dst::Fixed(vcc)], &[p(d), p(d), p(n)], |_| {});
        let r0 = pair(self);
        self.emit(Opcode::v_rcp_f64, &[dp(r0)], &[p(den)], |_| {});
        let (e0, r1, e1, r2) = (pair(self), pair(self), pair(self), pair(self));
        self.emit(Opcode::v_fma_f64, &[dp(e0)], &[p(den), p(r0), one], neg0);
        self.emit(Opcode::v_fma_f64, &[dp(r1)], &[p(r0), p(e0), p(r0)], |_| {});
        self.emit(Opcode::v_fma_f64, &[dp(e1)], &[p(den), p(r1), one], neg0);
        self.emit(Opcode::v_fma_f64, &[dp(r2)], &[p(r1), p(e1), p(r1)], |_| {});
        let num = pair(self);
        self.emit(Opcode::v_div_scale_f64, &[dp(num), Dst::Fixed(vcc)], &[p(n), p(d), p(n)], |_| {});
        let (q, e2, q2, res) = (pair(self), pair(self), pair(self), pair(self));
        self.emit(Opcode::v_mul_f64, &[dp(q)], &[p(num), p(r2)], |_| {});
        self.emit(Opcode::v_fma_f64, &[dp(e2)], &[p(den), p(q), p(num)], neg0);
        self.emit(Opcode::v_div_fmas_f64, &[dp(q2)], &[p(e2), p(r2), p(q)], |_| {});
        self.emit(Opcode::v_div_fixup_f64, &[dp(res)], &[p(q2), p(d), p(n)], |_| {});
        Ok(Lowered::V64(res.0, res.1))
    }

    fn unary(&mut self, op: UnOp, ty: &Type, arg: &Operand, divergent: bool) -> Result<Lowered, Diagnostic> {
        let a = self.lowered(arg);
        let divergent = divergent || in_vector_registers(&a);
        match (op, ty) {
            (UnOp::Not, Type::I1) => {
                if divergent {
                    let m = self.to_mask(&a)?;
                    let d = self.vreg(self.mask_class());
                    let (opcode, exec) = (if self.wave64() { Opcode::s_andn2_b64 } else { Opcode::s_andn2_b32 }, self.exec_reg());
                    // Inactive lanes do not matter; restrict to EXEC so masks stay tidy.
                    self.emit(opcode, &[Dst::R(d)], &[Src::Fixed(exec), Src::R(m)], |_| {});
                    Ok(Lowered::Mask(d))
                } else {
                    let b = self.to_bool(&a)?;
                    let d = self.vreg(Class::Sgpr);
                    self.emit(Opcode::s_xor_b32, &[Dst::R(d)], &[Src::R(b), Src::Imm(1)], |_| {});
                    Ok(Lowered::Bool(d))
                }
            }
            (UnOp::Not | UnOp::Popcount | UnOp::Clz | UnOp::Ctz, Type::I32) => {
                let d = self.vreg(Class::Vgpr);
                match op {
                    UnOp::Not => self.valu(Opcode::v_not_b32, d, &[a], false)?,
                    UnOp::Popcount => self.valu(Opcode::v_bcnt_u32_b32, d, &[a, Lowered::Imm(0)], false)?,
                    _ => {
                        // v_ffbh/v_ffbl give -1 for zero; MIR wants the width (32).
                        let raw = self.vreg(Class::Vgpr);
                        let opcode = if op == UnOp::Clz { Opcode::v_ffbh_u32 } else { Opcode::v_ffbl_b32 };
                        self.valu(opcode, raw, &[a], false)?;
                        self.emit(Opcode::v_min_u32, &[Dst::R(d)], &[Src::Imm(32), Src::R(raw)], |_| {});
                    }
                }
                Ok(Lowered::V(d))
            }
            (UnOp::Sqrt, Type::F32) => self.sqrt32(a),
            (UnOp::FNeg | UnOp::FAbs, Type::F16) => {
                // Sign bit 15; the bits above an f16 are undefined anyway.
                let d = self.vreg(Class::Vgpr);
                let (opcode, mask) = if op == UnOp::FNeg { (Opcode::v_xor_b32, 0x8000) } else { (Opcode::v_and_b32, 0x7fff) };
                self.valu(opcode, d, &[Lowered::Imm(mask), a], true)?;
                Ok(Lowered::V(d))
            }
            (UnOp::Sqrt | UnOp::Floor | UnOp::Ceil | UnOp::Trunc, Type::F16) => {
                // In f32 and rounded once: floor/ceil/trunc are exact, and a
                // correctly rounded f32 square root rounds to the correctly
                // rounded f16 one (24 >= 2 * 11 + 2).
                let wide = self.f16_to_f32(a)?;
                let r = match op {
                    UnOp::Sqrt => self.sqrt32(wide)?,
                    _ => {
                        let d = self.vreg(Class::Vgpr);
                        let opcode = match op {
                            UnOp::Floor => Opcode::v_floor_f32,
                            UnOp::Ceil => Opcode::v_ceil_f32,
                            _ => Opcode::v_trunc_f32,
                        };
                        self.valu(opcode, d, &[wide], false)?;
                        Lowered::V(d)
                    }
                };
                self.f32_to_f16(r)
            }
            (UnOp::FNeg | UnOp::FAbs, Type::F64) => {
                // The sign is bit 31 of the high half.
                let (lo, hi) = self.to_v64(&a)?;
                let h = self.vreg(Class::Vgpr);
                let (opcode, mask) = if op == UnOp::FNeg { (Opcode::v_xor_b32, 0x8000_0000u32) } else { (Opcode::v_and_b32, 0x7fff_ffff) };
                self.emit(opcode, &[Dst::R(h)], &[Src::Imm(mask), Src::R(hi)], |_| {});
                Ok(Lowered::V64(lo, h))
            }
            (UnOp::Floor | UnOp::Ceil | UnOp::Trunc, Type::F64) => {
                let (lo, hi) = self.to_v64(&a)?;
                let (dl, dh) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
                let opcode = match op {
                    UnOp::Floor => Opcode::v_floor_f64,
                    UnOp::Ceil => Opcode::v_ceil_f64,
                    _ => Opcode::v_trunc_f64,
                };
                self.emit(opcode, &[Dst::VPair(dl, dh)], &[Src::VPair(lo, hi)], |_| {});
                Ok(Lowered::V64(dl, dh))
            }
            (UnOp::FNeg | UnOp::FAbs | UnOp::Floor | UnOp::Ceil | UnOp::Trunc, Type::F32) => {
                let d = self.vreg(Class::Vgpr);
                match op {
                    UnOp::FNeg => self.valu(Opcode::v_xor_b32, d, &[Lowered::Imm(0x8000_0000), a], true)?,
                    UnOp::FAbs => self.valu(Opcode::v_and_b32, d, &[Lowered::Imm(0x7fff_ffff), a], true)?,
                    UnOp::Floor => self.valu(Opcode::v_floor_f32, d, &[a], false)?,
                    UnOp::Ceil => self.valu(Opcode::v_ceil_f32, d, &[a], false)?,
                    _ => self.valu(Opcode::v_trunc_f32, d, &[a], false)?,
                }
                Ok(Lowered::V(d))
            }
            _ => Err(self.error(format!("'{}' on {ty} is not supported by the code generator yet", op.mnemonic()))),
        }
    }

    /// Correctly rounded f32 square root. `v_sqrt_f32` is within 1 ulp; the
    /// neighbours s-1ulp and s+1ulp are tested with exact fma residuals
    /// (x - s'*s) and the right one chosen. Inputs below 2^-64 are scaled by 2^32
    /// first (result scaled by 2^-16) so the residuals stay exact; ±0 and +inf
    /// are returned as they are (v_cmp_class), NaN and negatives give NaN.
    fn sqrt32(&mut self, a: Lowered) -> Result<Lowered, Diagnostic> {
        let x = self.to_v(&a)?;
        let v = |s: &mut Self| s.vreg(Class::Vgpr);
        let tiny = self.vcmp(Opcode::v_cmp_gt_f32, Lowered::Imm(u64::from(0x1f80_0000u32)), Lowered::V(x))?; // 2^-64 > x
        let up = v(self);
        self.emit(Opcode::v_mul_f32, &[Dst::R(up)], &[Src::Imm(0x4f80_0000), Src::R(x)], |_| {}); // x * 2^32
        let sx = v(self);
        self.emit(Opcode::v_cndmask_b32, &[Dst::R(sx)], &[Src::R(x), Src::R(up), Src::R(tiny)], |i| i.e64 = true);
        let (s0, down, next) = (v(self), v(self), v(self));
        self.emit(Opcode::v_sqrt_f32, &[Dst::R(s0)], &[Src::R(sx)], |_| {});
        self.emit(Opcode::v_add_u32, &[Dst::R(down)], &[Src::Imm(u32::MAX), Src::R(s0)], |_| {}); // s - 1 ulp
        self.emit(Opcode::v_add_u32, &[Dst::R(next)], &[Src::Imm(1), Src::R(s0)], |_| {}); // s + 1 ulp
        let (rd, rn) = (v(self), v(self));
        let neg0 = |i: &mut isa::Inst| i.mods.neg = 1;
        self.emit(Opcode::v_fma_f32, &[Dst::R(rd)], &[Src::R(down), Src::R(s0), Src::R(sx)], neg0);
        self.emit(Opcode::v_fma_f32, &[Dst::R(rn)], &[Src::R(next), Src::R(s0), Src::R(sx)], neg0);
        let le = self.vcmp(Opcode::v_cmp_le_f32, Lowered::V(rd), Lowered::Imm(0))?;
        let s1 = v(self);
        self.emit(Opcode::v_cndmask_b32, &[Dst::R(s1)], &[Src::R(s0), Src::R(down), Src::R(le)], |i| i.e64 = true);
        let gt = self.vcmp(Opcode::v_cmp_gt_f32, Lowered::V(rn), Lowered::Imm(0))?;
        let s2 = v(self);
        self.emit(Opcode::v_cndmask_b32, &[Dst::R(s2)], &[Src::R(s1), Src::R(next), Src::R(gt)], |i| i.e64 = true);
        let (scaled, s3) = (v(self), v(self));
        self.emit(Opcode::v_mul_f32, &[Dst::R(scaled)], &[Src::Imm(0x3780_0000), Src::R(s2)], |_| {}); // * 2^-16
        self.emit(Opcode::v_cndmask_b32, &[Dst::R(s3)], &[Src::R(s2), Src::R(scaled), Src::R(tiny)], |i| i.e64 = true);
        // ±0 and +inf: the input itself (class bits -0, +0, +inf).
        let special = self.vcmp(Opcode::v_cmp_class_f32, Lowered::V(sx), Lowered::Imm(0x260))?;
        let r = v(self);
        self.emit(Opcode::v_cndmask_b32, &[Dst::R(r)], &[Src::R(s3), Src::R(sx), Src::R(special)], |i| i.e64 = true);
        Ok(Lowered::V(r))
    }

    /// A VALU compare into a lane mask.
    fn vcmp(&mut self, opcode: Opcode, a: Lowered, b: Lowered) -> Result<ra::VReg, Diagnostic> {
        let m = self.vreg(self.mask_class());
        let (sa, sb) = (self.src_of(&a)?, self.src_of(&b)?);
        // VOP3 compare: one scalar/constant source is fine; a second goes to a VGPR,
        // and gfx9 VOP3 takes no literal.
        let gfx9 = self.target.gpu.generation() == isa::Generation::Gfx9;
        let legal = |s: &Src| matches!(s, Src::R(_)) || matches!(s, Src::Imm(bits) if matches!(isa::Operand::imm32(*bits), isa::Operand::Const(_)));
        // gfx9 VOP3 takes no literal; gfx11 VOP3 takes one.
        let sa = if (!gfx9 && !(is_literal(&a) && is_literal(&b))) || legal(&sa) { sa } else { Src::R(self.to_v(&a)?) };
        let sb = if !gfx9 || legal(&sb) { sb } else { Src::R(self.to_v(&b)?) };
        let scalar = |s: &Src, l: &Lowered| matches!(s, Src::R(_)) && matches!(l, Lowered::S(_) | Lowered::Bool(_));
        let sb = if gfx9 && scalar(&sa, &a) && scalar(&sb, &b) { Src::R(self.to_v(&b)?) } else { sb };
        self.emit(opcode, &[Dst::R(m)], &[sa, sb], |i| i.e64 = true);
        Ok(m)
    }

    fn icmp(&mut self, pred: IntPred, ty: &Type, lhs: &Operand, rhs: &Operand, divergent: bool) -> Result<Lowered, Diagnostic> {
        let (a, b) = (self.lowered(lhs), self.lowered(rhs));
        if let (Lowered::Imm(x), Lowered::Imm(y), Type::I32) = (&a, &b, ty) {
            return Ok(Lowered::Imm(u64::from(interp::ops::icmp(pred, 32, *x, *y))));
        }
        let divergent = divergent || in_vector_registers(&a) || in_vector_registers(&b);
        let wide = ty.bits() == 64;
        if !matches!(ty, Type::I32) && !(wide && (matches!(ty, Type::I64 | Type::Ptr(_)))) {
            if !matches!(ty, Type::Ptr(_)) {
                return Err(self.error(format!("icmp on {ty} is not supported by the code generator yet")));
            }
        }
        if !divergent && !wide {
            let opcode = scmp_opcode(pred);
            // SOPC takes one literal: a second goes to an SGPR first.
            let a = if is_literal(&a) && is_literal(&b) { Lowered::S(self.to_s(&a)?) } else { a };
            if self.inst_ref.and_then(|i| i.result).is_some_and(|r| self.branch_only_compares.contains(&r)) {
                return Ok(Lowered::ScalarCmp { op: opcode, a: Box::new(a), b: Box::new(b) });
            }
            let (sa, sb) = (self.scalar_src(&a)?, self.scalar_src(&b)?);
            let d = self.vreg(Class::Sgpr);
            self.emit(opcode, &[], &[sa, sb], |_| {});
            self.emit(Opcode::s_cselect_b32, &[Dst::R(d)], &[Src::Imm(1), Src::Imm(0)], |_| {});
            return Ok(Lowered::Bool(d));
        }
        if wide {
            let ((al, ah), (bl, bh)) = (self.to_v64(&a)?, self.to_v64(&b)?);
            let m = self.vreg(self.mask_class());
            self.emit(vcmp64_opcode(pred), &[Dst::R(m)], &[Src::VPair(al, ah), Src::VPair(bl, bh)], |i| i.e64 = true);
            return Ok(Lowered::Mask(m));
        }
        let m = self.vcmp(vcmp32_opcode(pred), a, b)?;
        Ok(Lowered::Mask(m))
    }

    fn select(&mut self, ty: &Type, cond: &Operand, t: &Operand, f: &Operand, divergent: bool) -> Result<Lowered, Diagnostic> {
        let (c, a, b) = (self.lowered(cond), self.lowered(t), self.lowered(f));
        let divergent = divergent || in_vector_registers(&c) || in_vector_registers(&a) || in_vector_registers(&b);
        self.select_lowered(ty, c, a, b, divergent)
    }

    fn select_lowered(&mut self, ty: &Type, c: Lowered, a: Lowered, b: Lowered, divergent: bool) -> Result<Lowered, Diagnostic> {
        if let Lowered::Imm(bits) = c {
            return Ok(if bits & 1 != 0 { a } else { b });
        }
        if let (Lowered::Agg(xs), Lowered::Agg(ys)) = (&a, &b) {
            let elem = ty.element().clone();
            let mut parts = Vec::new();
            for (x, y) in xs.clone().into_iter().zip(ys.clone()) {
                parts.push(self.select_lowered(&elem, c.clone(), x, y, divergent)?);
            }
            return Ok(Lowered::Agg(parts));
        }
        let bits = ty.bits();
        if *ty == Type::I1 {
            // Booleans: (c & a) | (~c & b) on masks, or SCC select on bools.
            if divergent {
                let (mc, ma, mb) = (self.to_mask(&c)?, self.to_mask(&a)?, self.to_mask(&b)?);
                let (and, andn2, or) = if self.wave64() {
                    (Opcode::s_and_b64, Opcode::s_andn2_b64, Opcode::s_or_b64)
                } else {
                    (Opcode::s_and_b32, Opcode::s_andn2_b32, Opcode::s_or_b32)
                };
                let (x, y, d) = (self.vreg(self.mask_class()), self.vreg(self.mask_class()), self.vreg(self.mask_class()));
                self.emit(and, &[Dst::R(x)], &[Src::R(ma), Src::R(mc)], |_| {});
                self.emit(andn2, &[Dst::R(y)], &[Src::R(mb), Src::R(mc)], |_| {});
                self.emit(or, &[Dst::R(d)], &[Src::R(x), Src::R(y)], |_| {});
                return Ok(Lowered::Mask(d));
            }
        }
        if !divergent && bits <= 32 {
            let cb = self.to_bool(&c)?;
            // s_cselect takes one literal: a second goes to an SGPR first.
            let a = if is_literal(&a) && is_literal(&b) { Lowered::S(self.to_s(&a)?) } else { a };
            let (sa, sb) = (self.scalar_src(&a)?, self.scalar_src(&b)?);
            let d = self.vreg(Class::Sgpr);
            self.emit(Opcode::s_cmp_lg_u32, &[], &[Src::R(cb), Src::Imm(0)], |_| {});
            self.emit(Opcode::s_cselect_b32, &[Dst::R(d)], &[sa, sb], |_| {});
            return Ok(if *ty == Type::I1 { Lowered::Bool(d) } else { Lowered::S(d) });
        }
        if !divergent && bits == 64 {
            let cb = self.to_bool(&c)?;
            let (pa, pb) = (self.to_s64(&a)?, self.to_s64(&b)?);
            let d = self.vreg(Class::SgprPair);
            self.emit(Opcode::s_cmp_lg_u32, &[], &[Src::R(cb), Src::Imm(0)], |_| {});
            self.emit(Opcode::s_cselect_b64, &[Dst::R(d)], &[Src::R(pa), Src::R(pb)], |_| {});
            return Ok(Lowered::S64(d));
        }
        let m = self.to_mask(&c)?;
        if bits == 64 {
            let ((al, ah), (bl, bh)) = (self.to_v64(&a)?, self.to_v64(&b)?);
            let (lo, hi) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
            self.emit(Opcode::v_cndmask_b32, &[Dst::R(lo)], &[Src::R(bl), Src::R(al), Src::R(m)], |i| i.e64 = true);
            self.emit(Opcode::v_cndmask_b32, &[Dst::R(hi)], &[Src::R(bh), Src::R(ah), Src::R(m)], |i| i.e64 = true);
            return Ok(Lowered::V64(lo, hi));
        }
        let d = self.vreg(Class::Vgpr);
        let (sb, sa) = (self.cndmask_src(&b)?, self.cndmask_src(&a)?);
        self.emit(Opcode::v_cndmask_b32, &[Dst::R(d)], &[sb, sa, Src::R(m)], |i| i.e64 = true);
        Ok(Lowered::V(d))
    }

    /// v_cndmask_b32_e64 sources: VGPRs or inline constants (the mask already uses
    /// the one scalar source gfx9 allows).
    fn cndmask_src(&mut self, l: &Lowered) -> Result<Src, Diagnostic> {
        Ok(match *l {
            Lowered::Imm(bits) if matches!(isa::Operand::imm32(bits as u32), isa::Operand::Const(_)) => Src::Imm(bits as u32),
            _ => Src::R(self.to_v(l)?),
        })
    }

    fn cast(&mut self, op: CastOp, from: &Type, arg: &Operand, to: &Type, divergent: bool) -> Result<Lowered, Diagnostic> {
        let a = self.lowered(arg);
        self.cast_value(op, from, a, to, divergent)
    }

    fn cast_value(&mut self, op: CastOp, from: &Type, a: Lowered, to: &Type, divergent: bool) -> Result<Lowered, Diagnostic> {
        // f16 goes through f32: f16 -> f32 is exact, so extensions and
        // float -> int conversions of f16 are those of f32; f32 -> f16 rounds once,
        // and i32 -> f32 -> f16 is i32 -> f16 rounded once (integers up to 2^24
        // are exact in f32, larger ones overflow f16 either way).
        if *from == Type::F16 && matches!(op, CastOp::FpExt | CastOp::FpToSi | CastOp::FpToUi) {
            let wide = self.f16_to_f32(a)?;
            if *to == Type::F32 && op == CastOp::FpExt {
                return Ok(wide);
            }
            return self.cast_value(op, &Type::F32, wide, to, divergent);
        }
        if *to == Type::F16 && ((op == CastOp::FpTrunc && *from == Type::F32) || (matches!(op, CastOp::SiToFp | CastOp::UiToFp) && *from == Type::I32)) {
            let wide = if op == CastOp::FpTrunc { a } else { self.cast_value(op, from, a, &Type::F32, divergent)? };
            return self.f32_to_f16(wide);
        }
        let a = match a {
            Lowered::Addr { .. } => {
                let (lo, hi) = self.to_v64(&a)?;
                Lowered::V64(lo, hi)
            }
            other => other,
        };
        let divergent = divergent || in_vector_registers(&a);
        let unsupported = || format!("'{}' from {from} to {to} is not supported by the code generator yet", op.mnemonic());
        Ok(match (op, from, to) {
            (CastOp::Bitcast, _, _) if matches!(from.bits(), 16 | 32) && to.bits() == from.bits() && from.is_scalar() && to.is_scalar() => a,
            (CastOp::SiToFp | CastOp::UiToFp, Type::I32, Type::F32) => {
                let d = self.vreg(Class::Vgpr);
                let opcode = if op == CastOp::SiToFp { Opcode::v_cvt_f32_i32 } else { Opcode::v_cvt_f32_u32 };
                self.valu(opcode, d, &[a], false)?;
                Lowered::V(d)
            }
            (CastOp::FpToSi | CastOp::FpToUi, Type::F32, Type::I32) => {
                let d = self.vreg(Class::Vgpr);
                let opcode = if op == CastOp::FpToSi { Opcode::v_cvt_i32_f32 } else { Opcode::v_cvt_u32_f32 };
                self.valu(opcode, d, &[a], false)?;
                Lowered::V(d)
            }
            (CastOp::Bitcast, _, _) if from.bits() == 64 && to.bits() == 64 && from.is_scalar() && to.is_scalar() => a,
            (CastOp::FpExt, Type::F32, Type::F64) | (CastOp::SiToFp | CastOp::UiToFp, Type::I32, Type::F64) => {
                let src = self.to_v(&a)?;
                let (lo, hi) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
                let opcode = match op {
                    CastOp::FpExt => Opcode::v_cvt_f64_f32,
                    CastOp::SiToFp => Opcode::v_cvt_f64_i32,
                    _ => Opcode::v_cvt_f64_u32,
                };
                self.emit(opcode, &[Dst::VPair(lo, hi)], &[Src::R(src)], |_| {});
                Lowered::V64(lo, hi)
            }
            (CastOp::FpToSi | CastOp::FpToUi, Type::F64, Type::I32) => {
                let (lo, hi) = self.to_v64(&a)?;
                let d = self.vreg(Class::Vgpr);
                let opcode = if op == CastOp::FpToSi { Opcode::v_cvt_i32_f64 } else { Opcode::v_cvt_u32_f64 };
                self.emit(opcode, &[Dst::R(d)], &[Src::VPair(lo, hi)], |_| {});
                Lowered::V(d)
            }
            (CastOp::FpTrunc, Type::F64, Type::F32) => {
                let (lo, hi) = self.to_v64(&a)?;
                let d = self.vreg(Class::Vgpr);
                self.emit(Opcode::v_cvt_f32_f64, &[Dst::R(d)], &[Src::VPair(lo, hi)], |_| {});
                Lowered::V(d)
            }
            (CastOp::Trunc, Type::I64, Type::I32) => match a {
                Lowered::S64(p) => {
                    let s = self.vreg(Class::Sgpr);
                    self.emit(Opcode::s_mov_b32, &[Dst::R(s)], &[Src::Half(p, 0)], |_| {});
                    Lowered::S(s)
                }
                Lowered::V64(lo, _) => Lowered::V(lo),
                Lowered::Imm(bits) => Lowered::Imm(bits & 0xffff_ffff),
                _ => return Err(self.error("internal: trunc operand")),
            },
            (CastOp::ZExt | CastOp::SExt, Type::I32, Type::I64) => {
                if let Lowered::Imm(bits) = a {
                    let v = if op == CastOp::SExt { bits as u32 as i32 as i64 as u64 } else { bits & 0xffff_ffff };
                    return Ok(Lowered::Imm(v));
                }
                if divergent || matches!(a, Lowered::V(_)) {
                    let lo = self.to_v(&a)?;
                    let hi = self.vreg(Class::Vgpr);
                    if op == CastOp::SExt {
                        self.emit(Opcode::v_ashrrev_i32, &[Dst::R(hi)], &[Src::Imm(31), Src::R(lo)], |_| {});
                    } else {
                        self.emit(Opcode::v_mov_b32, &[Dst::R(hi)], &[Src::Imm(0)], |_| {});
                    }
                    Lowered::V64(lo, hi)
                } else {
                    let lo = self.to_s(&a)?;
                    Lowered::S64(self.uniform_extend(lo, op == CastOp::SExt))
                }
            }
            (CastOp::ZExt | CastOp::SExt, Type::I1, Type::I32) => {
                let one = if op == CastOp::SExt { u32::MAX } else { 1 };
                match a {
                    Lowered::Bool(b) if !divergent => {
                        if op == CastOp::ZExt {
                            Lowered::S(b)
                        } else {
                            let d = self.vreg(Class::Sgpr);
                            self.emit(Opcode::s_sub_u32, &[Dst::R(d)], &[Src::Imm(0), Src::R(b)], |_| {});
                            Lowered::S(d)
                        }
                    }
                    _ => {
                        let m = self.to_mask(&a)?;
                        let d = self.vreg(Class::Vgpr);
                        self.emit(Opcode::v_cndmask_b32, &[Dst::R(d)], &[Src::Imm(0), Src::Imm(one), Src::R(m)], |i| i.e64 = true);
                        Lowered::V(d)
                    }
                }
            }
            // i8/i16 live in 32-bit registers with undefined upper bits.
            (CastOp::Trunc, Type::I32 | Type::I16, Type::I8 | Type::I16) => a,
            (CastOp::Trunc, Type::I64, Type::I8 | Type::I16) => match a {
                Lowered::S64(p) => {
                    let s = self.vreg(Class::Sgpr);
                    self.emit(Opcode::s_mov_b32, &[Dst::R(s)], &[Src::Half(p, 0)], |_| {});
                    Lowered::S(s)
                }
                Lowered::V64(lo, _) => Lowered::V(lo),
                Lowered::Imm(bits) => Lowered::Imm(bits & 0xffff),
                _ => return Err(self.error("internal: trunc operand")),
            },
            (CastOp::ZExt | CastOp::SExt, Type::I8 | Type::I16, Type::I32 | Type::I16) => {
                let width = from.bits();
                if let Lowered::Imm(bits) = a {
                    let v = if op == CastOp::SExt { ((bits << (64 - width)) as i64 >> (64 - width)) as u64 } else { bits & ((1 << width) - 1) };
                    return Ok(Lowered::Imm(v & 0xffff_ffff));
                }
                if divergent || matches!(a, Lowered::V(_)) {
                    let x = self.to_v(&a)?;
                    let d = self.vreg(Class::Vgpr);
                    let opcode = if op == CastOp::SExt { Opcode::v_bfe_i32 } else { Opcode::v_bfe_u32 };
                    self.emit(opcode, &[Dst::R(d)], &[Src::R(x), Src::Imm(0), Src::Imm(width)], |_| {});
                    Lowered::V(d)
                } else {
                    let x = self.to_s(&a)?;
                    let d = self.vreg(Class::Sgpr);
                    let opcode = if op == CastOp::SExt { Opcode::s_bfe_i32 } else { Opcode::s_bfe_u32 };
                    self.emit(opcode, &[Dst::R(d)], &[Src::R(x), Src::Imm(width << 16)], |_| {});
                    Lowered::S(d)
                }
            }
            (CastOp::PtrToInt, _, _) | (CastOp::IntToPtr, _, _) => a,
            _ => return Err(self.error(unsupported())),
        })
    }

    fn ptradd(&mut self, ptr: &Operand, offset: &Operand, divergent: bool) -> Result<Lowered, Diagnostic> {
        let (p, o) = (self.lowered(ptr), self.lowered(offset));
        let divergent = divergent || in_vector_registers(&p) || in_vector_registers(&o);
        let space = self.space_of(ptr);
        let offset_is_64 = self.func.operand_type(offset).bits() == 64;
        if space.pointer_bits() == 32 {
            let o32 = match o {
                Lowered::S64(pair) => {
                    let s = self.vreg(Class::Sgpr);
                    self.emit(Opcode::s_mov_b32, &[Dst::R(s)], &[Src::Half(pair, 0)], |_| {});
                    Lowered::S(s)
                }
                Lowered::V64(lo, _) => Lowered::V(lo),
                Lowered::Imm(bits) => Lowered::Imm(bits & 0xffff_ffff),
                other => other,
            };
            return self.binary32(BinOp::Add, p, o32, divergent);
        }
        // Address folding for global memory: uniform base + divergent i32 offset
        // stays symbolic; constant offsets go to the instruction's immediate.
        if space == AddrSpace::Global || space == AddrSpace::Constant {
            match (&p, &o) {
                (Lowered::S64(base), Lowered::V(off)) if !offset_is_64 => {
                    return Ok(Lowered::Addr { base: *base, offset: *off, imm: 0 });
                }
                (Lowered::Addr { base, offset, imm }, Lowered::Imm(bits)) => {
                    let add = if offset_is_64 { *bits as i64 } else { *bits as u32 as i32 as i64 };
                    let sum = i64::from(*imm) + add;
                    if (-2048..=2047).contains(&sum) {
                        return Ok(Lowered::Addr { base: *base, offset: *offset, imm: sum as i32 });
                    }
                }
                _ => {}
            }
        }
        // 64-bit pointer + sign-extended (or 64-bit) offset.
        let o64 = if offset_is_64 {
            o
        } else {
            match o {
                Lowered::Imm(bits) => Lowered::Imm(bits as u32 as i32 as i64 as u64),
                Lowered::S(s) => Lowered::S64(self.uniform_extend(s, true)),
                Lowered::V(v) => {
                    let hi = self.vreg(Class::Vgpr);
                    self.emit(Opcode::v_ashrrev_i32, &[Dst::R(hi)], &[Src::Imm(31), Src::R(v)], |_| {});
                    Lowered::V64(v, hi)
                }
                _ => return Err(self.error("internal: ptradd offset")),
            }
        };
        if let Lowered::Imm(0) = o64 {
            return Ok(p);
        }
        self.binary64(BinOp::Add, p, o64, divergent)
    }

    fn load(&mut self, ty: &Type, ptr: &Operand, align: u32, divergent: bool) -> Result<Lowered, Diagnostic> {
        let p = self.lowered(ptr);
        let space = self.space_of(ptr);
        if space == AddrSpace::Private {
            let addr = self.to_v(&p)?;
            return self.load_private_value(ty, PrivateAt::Pointer(0), Some(addr));
        }
        if let Type::Vector(elem, n) = ty {
            let mut parts = Vec::new();
            for i in 0..u32::from(*n) {
                let part_ptr = self.offset_pointer(&p, space, i * elem.size())?;
                parts.push(self.load_scalar(elem, part_ptr, space, align.min(elem.align()), divergent)?);
            }
            return Ok(Lowered::Agg(parts));
        }
        self.load_scalar(ty, p, space, align, divergent)
    }

    fn offset_pointer(&mut self, p: &Lowered, space: AddrSpace, offset: u32) -> Result<Lowered, Diagnostic> {
        if offset == 0 {
            return Ok(p.clone());
        }
        if let Lowered::Addr { base, offset: off, imm } = *p {
            let sum = i64::from(imm) + i64::from(offset);
            if (-2048..=2047).contains(&sum) {
                return Ok(Lowered::Addr { base, offset: off, imm: sum as i32 });
            }
            let (lo, hi) = self.to_v64(p)?;
            return self.binary64(BinOp::Add, Lowered::V64(lo, hi), Lowered::Imm(u64::from(offset)), true);
        }
        let divergent = in_vector_registers(p);
        if space.pointer_bits() == 32 {
            self.binary32(BinOp::Add, p.clone(), Lowered::Imm(u64::from(offset)), divergent)
        } else {
            self.binary64(BinOp::Add, p.clone(), Lowered::Imm(u64::from(offset)), divergent)
        }
    }

    /// i8/i16 loads: the value lands zero-extended in a VGPR (i8/i16 values live
    /// in 32-bit registers with undefined upper bits; extensions make them exact).
    fn load_small(&mut self, ty: &Type, p: Lowered, space: AddrSpace) -> Result<Lowered, Diagnostic> {
        let byte = ty.bits() == 8;
        let d = self.vreg(Class::Vgpr);
        match space {
            AddrSpace::Local => {
                let addr = self.to_v(&p)?;
                let op = if byte { Opcode::ds_read_u8 } else { Opcode::ds_read_u16 };
                self.emit(op, &[Dst::R(d)], &[Src::R(addr)], |_| {});
            }
            AddrSpace::Global | AddrSpace::Constant | AddrSpace::Flat => {
                let op = match (space, byte) {
                    (AddrSpace::Flat, true) => Opcode::flat_load_ubyte,
                    (AddrSpace::Flat, false) => Opcode::flat_load_ushort,
                    (_, true) => Opcode::global_load_ubyte,
                    _ => Opcode::global_load_ushort,
                };
                let (mut uses, imm) = self.vmem_address(&p, space)?;
                if space == AddrSpace::Flat {
                    uses.truncate(1);
                }
                self.emit(op, &[Dst::R(d)], &uses, |i| i.offset = imm);
            }
            AddrSpace::Private => return Err(self.error("internal: private memory is accessed through load_private_value and store_private_value")),
        }
        Ok(Lowered::V(d))
    }

    fn load_scalar(&mut self, ty: &Type, p: Lowered, space: AddrSpace, align: u32, divergent: bool) -> Result<Lowered, Diagnostic> {
        let bits = ty.bits();
        if bits == 8 || bits == 16 {
            return self.load_small(ty, p, space);
        }
        if bits != 32 && bits != 64 {
            return Err(self.error(format!("loads of {ty} are not supported by the code generator yet")));
        }
        let dwords = (bits / 32) as u8;
        match space {
            AddrSpace::Local if dwords == 2 && align < 8 => {
                // ds_read_b64 needs 8-byte alignment: two dword reads instead.
                let lo_addr = self.to_v(&p)?;
                let hi_addr = self.offset_pointer(&Lowered::V(lo_addr), space, 4)?;
                let hi_addr = self.to_v(&hi_addr)?;
                let (lo, hi) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
                self.emit(Opcode::ds_read_b32, &[Dst::R(lo)], &[Src::R(lo_addr)], |_| {});
                self.emit(Opcode::ds_read_b32, &[Dst::R(hi)], &[Src::R(hi_addr)], |_| {});
                Ok(Lowered::V64(lo, hi))
            }
            AddrSpace::Local => {
                let addr = self.to_v(&p)?;
                let op = if dwords == 1 { Opcode::ds_read_b32 } else { Opcode::ds_read_b64 };
                if dwords == 1 {
                    let d = self.vreg(Class::Vgpr);
                    self.emit(op, &[Dst::R(d)], &[Src::R(addr)], |_| {});
                    Ok(Lowered::V(d))
                } else {
                    let (lo, hi) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
                    self.emit(op, &[Dst::VPair(lo, hi)], &[Src::R(addr)], |_| {});
                    Ok(Lowered::V64(lo, hi))
                }
            }
            // Scalar loads ignore the low two address bits: only for 4-aligned data.
            AddrSpace::Constant if !divergent && align >= 4 && matches!(p, Lowered::S64(_) | Lowered::Imm(..)) && !self.in_partial_exec() => {
                // Uniform address in constant memory: a scalar load.
                let base = self.to_s64(&p)?;
                if dwords == 1 {
                    let d = self.vreg(Class::Sgpr);
                    self.emit(Opcode::s_load_dword, &[Dst::R(d)], &[Src::R(base), Src::Off], |_| {});
                    Ok(Lowered::S(d))
                } else {
                    let d = self.vreg(Class::SgprPair);
                    self.emit(Opcode::s_load_dwordx2, &[Dst::R(d)], &[Src::R(base), Src::Off], |_| {});
                    Ok(Lowered::S64(d))
                }
            }
            AddrSpace::Global | AddrSpace::Constant | AddrSpace::Flat => {
                let op = match (space, dwords) {
                    (AddrSpace::Flat, 1) => Opcode::flat_load_dword,
                    (AddrSpace::Flat, _) => Opcode::flat_load_dwordx2,
                    (_, 1) => Opcode::global_load_dword,
                    _ => Opcode::global_load_dwordx2,
                };
                let (addr, imm) = self.vmem_address(&p, space)?;
                let mut uses = addr;
                let dst = if dwords == 1 {
                    let d = self.vreg(Class::Vgpr);
                    (vec![Dst::R(d)], Lowered::V(d))
                } else {
                    let (lo, hi) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
                    (vec![Dst::VPair(lo, hi)], Lowered::V64(lo, hi))
                };
                if space == AddrSpace::Flat {
                    uses.truncate(1);
                }
                self.emit(op, &dst.0, &uses, |i| i.offset = imm);
                Ok(dst.1)
            }
            AddrSpace::Private => Err(self.error("internal: private memory is accessed through load_private_value and store_private_value")),
        }
    }

    /// Address operands of a global/flat access: (vaddr, saddr).
    fn vmem_address(&mut self, p: &Lowered, space: AddrSpace) -> Result<(Vec<Src>, i32), Diagnostic> {
        if let (Lowered::Addr { base, offset, imm }, true) = (p, space != AddrSpace::Flat) {
            return Ok((vec![Src::Address(*base, *offset), Src::Off], *imm));
        }
        Ok((self.vmem_address_plain(p, space)?, 0))
    }

    fn vmem_address_plain(&mut self, p: &Lowered, space: AddrSpace) -> Result<Vec<Src>, Diagnostic> {
        match *p {
            Lowered::S64(base) if space != AddrSpace::Flat => {
                // SGPR base with a zero VGPR offset.
                let zero = self.vreg(Class::Vgpr);
                self.emit(Opcode::v_mov_b32, &[Dst::R(zero)], &[Src::Imm(0)], |_| {});
                Ok(vec![Src::R(zero), Src::R(base)])
            }
            _ => {
                let (lo, hi) = self.to_v64(p)?;
                Ok(vec![Src::VPair(lo, hi), Src::Off])
            }
        }
    }

    /// The address space of a pointer operand (the verifier checked it is one).
    fn space_of(&self, ptr: &Operand) -> AddrSpace {
        match self.func.operand_type(ptr) {
            Type::Ptr(space) => *space,
            _ => unreachable!("verified: a pointer operand"),
        }
    }

    fn in_partial_exec(&self) -> bool {
        self.blocks[self.cur].partial_exec
    }

    fn store(&mut self, ty: &Type, value: &Operand, ptr: &Operand, align: u32) -> Result<(), Diagnostic> {
        let (v, p) = (self.lowered(value), self.lowered(ptr));
        let space = self.space_of(ptr);
        if space == AddrSpace::Private {
            let addr = self.to_v(&p)?;
            return self.store_private_value(&v, ty, PrivateAt::Pointer(0), Some(addr));
        }
        if let Type::Vector(elem, _) = ty {
            let Lowered::Agg(parts) = v else { return Err(self.error("internal: vector store")) };
            for (i, part) in parts.into_iter().enumerate() {
                let part_ptr = self.offset_pointer(&p, space, i as u32 * elem.size())?;
                self.store_scalar(elem, part, part_ptr, space, align.min(elem.align()))?;
            }
            return Ok(());
        }
        self.store_scalar(ty, v, p, space, align)
    }

    fn store_scalar(&mut self, ty: &Type, v: Lowered, p: Lowered, space: AddrSpace, align: u32) -> Result<(), Diagnostic> {
        let bits = ty.bits();
        if bits == 8 || bits == 16 {
            // The byte/short stores write the low bits of the register.
            let data = Src::R(self.to_v(&v)?);
            let byte = bits == 8;
            match space {
                AddrSpace::Local => {
                    let addr = self.to_v(&p)?;
                    let op = if byte { Opcode::ds_write_b8 } else { Opcode::ds_write_b16 };
                    self.emit(op, &[], &[Src::R(addr), data], |_| {});
                }
                AddrSpace::Global | AddrSpace::Flat => {
                    let (addr, imm) = self.vmem_address(&p, space)?;
                    let op = match (space, byte) {
                        (AddrSpace::Flat, true) => Opcode::flat_store_byte,
                        (AddrSpace::Flat, false) => Opcode::flat_store_short,
                        (_, true) => Opcode::global_store_byte,
                        _ => Opcode::global_store_short,
                    };
                    let uses = if space == AddrSpace::Flat { vec![addr[0], data] } else { vec![addr[0], data, addr[1]] };
                    self.emit(op, &[], &uses, |i| i.offset = imm);
                }
                _ => return Err(self.error("internal: private memory is accessed through load_private_value and store_private_value")),
            }
            return Ok(());
        }
        if bits != 32 && bits != 64 {
            return Err(self.error(format!("stores of {ty} are not supported by the code generator yet")));
        }
        let data = if bits == 32 {
            Src::R(self.to_v(&v)?)
        } else {
            let (lo, hi) = self.to_v64(&v)?;
            Src::VPair(lo, hi)
        };
        match space {
            AddrSpace::Local if bits == 64 && align < 8 => {
                let Src::VPair(lo, hi) = data else { unreachable!("64-bit data is a pair") };
                let lo_addr = self.to_v(&p)?;
                let hi_addr = self.offset_pointer(&Lowered::V(lo_addr), space, 4)?;
                let hi_addr = self.to_v(&hi_addr)?;
                self.emit(Opcode::ds_write_b32, &[], &[Src::R(lo_addr), Src::R(lo)], |_| {});
                self.emit(Opcode::ds_write_b32, &[], &[Src::R(hi_addr), Src::R(hi)], |_| {});
            }
            AddrSpace::Local => {
                let addr = self.to_v(&p)?;
                let op = if bits == 32 { Opcode::ds_write_b32 } else { Opcode::ds_write_b64 };
                self.emit(op, &[], &[Src::R(addr), data], |_| {});
            }
            AddrSpace::Global | AddrSpace::Flat => {
                let (addr, imm) = self.vmem_address(&p, space)?;
                let op = match (space, bits) {
                    (AddrSpace::Flat, 32) => Opcode::flat_store_dword,
                    (AddrSpace::Flat, _) => Opcode::flat_store_dwordx2,
                    (_, 32) => Opcode::global_store_dword,
                    _ => Opcode::global_store_dwordx2,
                };
                let uses = if space == AddrSpace::Flat { vec![addr[0], data] } else { vec![addr[0], data, addr[1]] };
                self.emit(op, &[], &uses, |i| i.offset = imm);
            }
            _ => return Err(self.error("internal: private memory is accessed through load_private_value and store_private_value")),
        }
        Ok(())
    }

    /// Returning atomics (`op: None` is compare-and-swap of `value` against
    /// `expected`). The result is the memory's old value, per lane.
    fn atomic(&mut self, op: Option<AtomicOp>, ty: &Type, ptr: &Operand, value: &Operand, expected: Option<&Operand>) -> Result<Lowered, Diagnostic> {
        if *ty != Type::I32 {
            return Err(self.error(format!("atomics on {ty} are not supported by the code generator yet")));
        }
        let p = self.lowered(ptr);
        let data = self.lowered(value);
        let data = self.to_v(&data)?;
        let space = self.space_of(ptr);
        let old = self.vreg(Class::Vgpr);
        match space {
            AddrSpace::Local => {
                let opcode = match op {
                    Some(AtomicOp::Add) => Opcode::ds_add_rtn_u32,
                    Some(AtomicOp::Sub) => Opcode::ds_sub_rtn_u32,
                    Some(AtomicOp::SMin) => Opcode::ds_min_rtn_i32,
                    Some(AtomicOp::SMax) => Opcode::ds_max_rtn_i32,
                    Some(AtomicOp::UMin) => Opcode::ds_min_rtn_u32,
                    Some(AtomicOp::UMax) => Opcode::ds_max_rtn_u32,
                    Some(AtomicOp::And) => Opcode::ds_and_rtn_b32,
                    Some(AtomicOp::Or) => Opcode::ds_or_rtn_b32,
                    Some(AtomicOp::Xor) => Opcode::ds_xor_rtn_b32,
                    Some(AtomicOp::Xchg) => Opcode::ds_wrxchg_rtn_b32,
                    None => return Err(self.error("cmpxchg on local memory is not supported by the code generator yet")),
                };
                let addr = self.to_v(&p)?;
                self.emit(opcode, &[Dst::R(old)], &[Src::R(addr), Src::R(data)], |_| {});
            }
            AddrSpace::Global => {
                let opcode = match op {
                    Some(AtomicOp::Add) => Opcode::global_atomic_add,
                    Some(AtomicOp::Sub) => Opcode::global_atomic_sub,
                    Some(AtomicOp::SMin) => Opcode::global_atomic_smin,
                    Some(AtomicOp::SMax) => Opcode::global_atomic_smax,
                    Some(AtomicOp::UMin) => Opcode::global_atomic_umin,
                    Some(AtomicOp::UMax) => Opcode::global_atomic_umax,
                    Some(AtomicOp::And) => Opcode::global_atomic_and,
                    Some(AtomicOp::Or) => Opcode::global_atomic_or,
                    Some(AtomicOp::Xor) => Opcode::global_atomic_xor,
                    Some(AtomicOp::Xchg) => Opcode::global_atomic_swap,
                    None => Opcode::global_atomic_cmpswap,
                };
                // Compare-and-swap takes {new, expected} as one register pair.
                let data = match expected {
                    Some(e) => {
                        let e = self.lowered(e);
                        let e = self.to_v(&e)?;
                        Src::VPair(data, e)
                    }
                    None => Src::R(data),
                };
                let (addr, imm) = self.vmem_address(&p, space)?;
                let gpu = self.target.gpu;
                self.emit(opcode, &[Dst::R(old)], &[addr[0], data, addr[1]], |i| {
                    i.offset = imm;
                    i.cache = isa::Cache::atomic_return(gpu);
                });
            }
            other => return Err(self.error(format!("atomics on {} memory are not supported", other.keyword()))),
        }
        Ok(Lowered::V(old))
    }

    fn builtin(&mut self, kind: Builtin, dim: u8) -> Result<Lowered, Diagnostic> {
        match kind {
            Builtin::WorkitemId => {
                let tid = self.tid.expect("entry defines the work-item ids");
                let d = self.vreg(Class::Vgpr);
                if dim == 0 {
                    self.emit(Opcode::v_and_b32, &[Dst::R(d)], &[Src::Imm(0x3ff), Src::R(tid)], |_| {});
                } else {
                    self.emit(Opcode::v_bfe_u32, &[Dst::R(d)], &[Src::R(tid), Src::Imm(10 * u32::from(dim)), Src::Imm(10)], |_| {});
                }
                Ok(Lowered::V(d))
            }
            Builtin::WorkgroupId => Ok(Lowered::S(self.workgroup_id[dim as usize].expect("entry defines the work-group ids"))),
            Builtin::WorkgroupSize | Builtin::GridSize => {
                // From the dispatch packet: workgroup_size_x/y/z are u16 at 4/6/8,
                // grid_size_x/y/z are u32 at 12/16/20.
                let packet = self.dispatch_ptr.expect("entry defines the dispatch pointer");
                let d = self.vreg(Class::Sgpr);
                if kind == Builtin::GridSize {
                    self.emit(Opcode::s_load_dword, &[Dst::R(d)], &[Src::R(packet), Src::Off], |i| i.offset = 12 + 4 * i32::from(dim));
                    return Ok(Lowered::S(d));
                }
                let word = self.vreg(Class::Sgpr);
                let dword_offset = if dim == 2 { 8 } else { 4 };
                self.emit(Opcode::s_load_dword, &[Dst::R(word)], &[Src::R(packet), Src::Off], |i| i.offset = dword_offset);
                if dim == 1 {
                    self.emit(Opcode::s_lshr_b32, &[Dst::R(d)], &[Src::R(word), Src::Imm(16)], |_| {});
                } else {
                    self.emit(Opcode::s_and_b32, &[Dst::R(d)], &[Src::R(word), Src::Imm(0xffff)], |_| {});
                }
                Ok(Lowered::S(d))
            }
        }
    }

    // ---- kernel entry ------------------------------------------------------

    /// The signature a device function is compiled (and called) with: its
    /// parameters and result, and the implicit inputs it uses.
    fn signature_of(&self, f: &Function) -> Signature {
        function_signature(f, self.callee_uses)
    }

    fn assignment_of(&self, f: &Function) -> Result<Assignment, Diagnostic> {
        assign(&self.signature_of(f), convention_of(f), self.target).map_err(|e| self.error(format!("calling convention of '@{}': {e}", f.name)))
    }

    // ---- private memory (stack arguments, by-reference copies, sret) -------

    /// A copy of `v` in a value of its own (same class), so that `v` can leave a
    /// fixed register right here.
    fn copy_of(&mut self, v: ra::VReg) -> ra::VReg {
        let d = self.vreg(self.vc.class(v));
        self.push(MInst { kind: MKind::Copy, ops: vec![ra::Operand::reg_def(d), ra::Operand::reg_use(v)] });
        d
    }

    fn private_store(&mut self, data: ra::VReg, width: u8, at: PrivateAt, ptr: Option<ra::VReg>) {
        let mut ops = vec![ra::Operand::reg_use(data)];
        ops.extend(ptr.map(ra::Operand::reg_use));
        self.push(MInst { kind: MKind::Private { store: true, width, at }, ops });
    }

    fn private_load(&mut self, width: u8, at: PrivateAt, ptr: Option<ra::VReg>) -> ra::VReg {
        let d = self.vreg(Class::Vgpr);
        let mut ops = vec![ra::Operand::reg_def(d)];
        ops.extend(ptr.map(ra::Operand::reg_use));
        self.push(MInst { kind: MKind::Private { store: false, width, at }, ops });
        d
    }

    /// Stores a value in its memory layout (fields and elements at their
    /// offsets) at `at`.
    fn store_private_value(&mut self, l: &Lowered, ty: &Type, at: PrivateAt, ptr: Option<ra::VReg>) -> Result<(), Diagnostic> {
        match ty {
            Type::Struct(fields) => {
                let Lowered::Agg(parts) = l else { return Err(self.error("internal: struct value")) };
                for ((p, f), o) in parts.clone().iter().zip(fields).zip(ty.field_offsets()) {
                    self.store_private_value(p, f, at.plus(o), ptr)?;
                }
            }
            Type::Vector(elem, _) => {
                let Lowered::Agg(parts) = l else { return Err(self.error("internal: vector value")) };
                for (k, p) in parts.clone().iter().enumerate() {
                    self.store_private_value(p, elem, at.plus(k as u32 * elem.size()), ptr)?;
                }
            }
            t if t.bits() == 64 => {
                let (lo, hi) = self.to_v64(l)?;
                self.private_store(lo, 4, at, ptr);
                self.private_store(hi, 4, at.plus(4), ptr);
            }
            Type::I1 => {
                let m = self.to_mask(l)?;
                let v = self.to_v(&Lowered::Mask(m))?;
                self.private_store(v, 1, at, ptr);
            }
            t => {
                let v = self.to_v(l)?;
                self.private_store(v, (t.size() as u8).min(4), at, ptr);
            }
        }
        Ok(())
    }

    /// Loads a value stored in its memory layout at `at`.
    fn load_private_value(&mut self, ty: &Type, at: PrivateAt, ptr: Option<ra::VReg>) -> Result<Lowered, Diagnostic> {
        Ok(match ty {
            Type::Struct(fields) => {
                let mut parts = Vec::new();
                for (f, o) in fields.iter().zip(ty.field_offsets()) {
                    parts.push(self.load_private_value(f, at.plus(o), ptr)?);
                }
                Lowered::Agg(parts)
            }
            Type::Vector(elem, n) => {
                let mut parts = Vec::new();
                for k in 0..u32::from(*n) {
                    parts.push(self.load_private_value(elem, at.plus(k * elem.size()), ptr)?);
                }
                Lowered::Agg(parts)
            }
            t if t.bits() == 64 => {
                let lo = self.private_load(4, at, ptr);
                let hi = self.private_load(4, at.plus(4), ptr);
                Lowered::V64(lo, hi)
            }
            Type::I1 => {
                let byte = self.private_load(1, at, ptr);
                Lowered::Mask(self.vcmp(Opcode::v_cmp_ne_u32, Lowered::V(byte), Lowered::Imm(0))?)
            }
            t => Lowered::V(self.private_load((t.size() as u8).min(4), at, ptr)),
        })
    }

    /// Reserves `size` bytes per lane of locals (16-byte aligned pieces).
    fn new_local(&mut self, size: u32) -> u32 {
        // Sizes are at most MAX_FRAME_BYTES each; the total saturates and
        // expansion refuses frames over MAX_FRAME_BYTES.
        let at = self.locals;
        self.locals = self.locals.saturating_add(size.div_ceil(16).saturating_mul(16));
        at
    }

    /// A private pointer to local `offset` of the frame. Private pointers count
    /// per-lane bytes from the start of private memory (on gfx90a the scratch
    /// V#'s base, as LLVM's do): the frame's base (SP, the wave offset, or 0 in a
    /// kernel on flat scratch) plus where the locals start, at expansion.
    fn local_pointer(&mut self, offset: u32) -> Result<Lowered, Diagnostic> {
        // Known at expansion: where the locals start, and the frame's base
        // (docs/abi.md section 3.1).
        let d = self.vreg(Class::Sgpr);
        self.push(MInst { kind: MKind::LocalAddress(offset), ops: vec![ra::Operand::reg_def(d)] });
        Ok(Lowered::S(d))
    }

    /// A value from its register pieces (parameters and call results).
    fn from_pieces(&mut self, ty: &Type, regs: &mut std::slice::Iter<(ra::VReg, bool)>) -> Result<Lowered, Diagnostic> {
        let mut next = || regs.next().copied().ok_or_else(|| Diagnostic::new("internal: missing argument piece", crate::mir::Span::NONE));
        Ok(match ty {
            Type::Struct(fields) => {
                let mut parts = Vec::new();
                for f in fields {
                    parts.push(self.from_pieces(f, regs)?);
                }
                Lowered::Agg(parts)
            }
            Type::Vector(elem, n) if elem.bits() >= 32 => {
                let mut parts = Vec::new();
                for _ in 0..*n {
                    parts.push(self.from_pieces(elem, regs)?);
                }
                Lowered::Agg(parts)
            }
            Type::Vector(..) => return Err(self.error("vectors of 8- or 16-bit elements as arguments are not supported yet")),
            Type::I1 => {
                // The value is in the low bit; the other bits are undefined.
                let (r, sgpr) = next()?;
                if sgpr {
                    let b = self.vreg(Class::Sgpr);
                    self.emit(Opcode::s_and_b32, &[Dst::R(b)], &[Src::R(r), Src::Imm(1)], |_| {});
                    Lowered::Bool(b)
                } else {
                    let bit = self.vreg(Class::Vgpr);
                    self.emit(Opcode::v_and_b32, &[Dst::R(bit)], &[Src::Imm(1), Src::R(r)], |_| {});
                    Lowered::Mask(self.vcmp(Opcode::v_cmp_ne_u32, Lowered::V(bit), Lowered::Imm(0))?)
                }
            }
            t if t.bits() == 64 => {
                let ((lo, lo_sgpr), (hi, hi_sgpr)) = (next()?, next()?);
                match (lo_sgpr, hi_sgpr) {
                    (true, true) => Lowered::S64(self.make_pair(lo, hi)),
                    (false, false) => Lowered::V64(lo, hi),
                    // Split between an SGPR and a VGPR or the stack (LLVM's
                    // convention when the inreg SGPRs run out mid-value).
                    _ => {
                        let lo = self.to_v(&if lo_sgpr { Lowered::S(lo) } else { Lowered::V(lo) })?;
                        let hi = self.to_v(&if hi_sgpr { Lowered::S(hi) } else { Lowered::V(hi) })?;
                        Lowered::V64(lo, hi)
                    }
                }
            }
            _ => {
                let (r, sgpr) = next()?;
                if sgpr {
                    Lowered::S(r)
                } else {
                    Lowered::V(r)
                }
            }
        })
    }

    /// The registers holding a value's pieces, in the classes their locations
    /// need (VGPR pieces in VGPRs, SGPR pieces in SGPRs).
    fn to_pieces(&mut self, l: &Lowered, ty: &Type, locations: &mut std::slice::Iter<Location>, out: &mut Vec<(ra::VReg, Location)>) -> Result<(), Diagnostic> {
        match ty {
            Type::Struct(fields) => {
                let Lowered::Agg(parts) = l else { return Err(self.error("internal: struct argument")) };
                for (p, f) in parts.clone().iter().zip(fields) {
                    self.to_pieces(p, f, locations, out)?;
                }
            }
            Type::Vector(elem, _) => {
                let Lowered::Agg(parts) = l else { return Err(self.error("internal: vector argument")) };
                for p in parts.clone() {
                    self.to_pieces(&p, elem, locations, out)?;
                }
            }
            t if t.bits() == 64 => {
                let (lo_loc, hi_loc) = (*locations.next().unwrap(), *locations.next().unwrap());
                let sgpr = |loc: Location| matches!(loc, Location::Sgpr(_));
                if sgpr(lo_loc) || sgpr(hi_loc) {
                    // Each half in its location's class (LLVM may split an
                    // inreg value between an SGPR and a VGPR).
                    let p = self.to_s64(l)?;
                    let half = |isel: &mut Self, h: u8, loc: Location| {
                        if sgpr(loc) {
                            let r = isel.vreg(Class::Sgpr);
                            isel.emit(Opcode::s_mov_b32, &[Dst::R(r)], &[Src::Half(p, h)], |_| {});
                            r
                        } else {
                            let r = isel.vreg(Class::Vgpr);
                            isel.emit(Opcode::v_mov_b32, &[Dst::R(r)], &[Src::Half(p, h)], |_| {});
                            r
                        }
                    };
                    let (lo, hi) = (half(self, 0, lo_loc), half(self, 1, hi_loc));
                    out.extend([(lo, lo_loc), (hi, hi_loc)]);
                } else {
                    let (lo, hi) = self.to_v64(l)?;
                    out.extend([(lo, lo_loc), (hi, hi_loc)]);
                }
            }
            _ => {
                let loc = *locations.next().unwrap();
                let r = match (loc, ty) {
                    (Location::Sgpr(_), Type::I1) => self.to_bool(l)?,
                    (Location::Sgpr(_), _) => self.to_s(l)?,
                    (_, Type::I1) => {
                        let m = self.to_mask(l)?;
                        self.to_v(&Lowered::Mask(m))?
                    }
                    _ => self.to_v(l)?,
                };
                out.push((r, loc));
            }
        }
        Ok(())
    }

    fn preg_of(loc: Location) -> ra::PReg {
        match loc {
            Location::Vgpr(n) => vgpr_preg(n),
            Location::Sgpr(n) => sgpr_preg(n),
            Location::Stack { .. } => unreachable!("stack pieces are rejected"),
        }
    }

    /// A device function's entry: parameters, implicit inputs and the return
    /// address arrive in the registers the calling convention names; pieces on
    /// the stack are loaded from the incoming argument area, by-reference
    /// arguments through their pointers.
    fn function_entry(&mut self) -> Result<(), Diagnostic> {
        enum Arrival {
            Reg(ra::VReg, bool),
            Stack { offset: u32, size: u32 },
        }
        let func = self.func;
        let a = self.assignment_of(func)?;
        let mut ops = Vec::new();
        let mut arrive = |vc: &mut VCode, loc: Location| match loc {
            Location::Stack { offset, size } => Arrival::Stack { offset, size },
            reg => {
                let sgpr = matches!(reg, Location::Sgpr(_));
                let v = vc.new_vreg(if sgpr { Class::Sgpr } else { Class::Vgpr });
                ops.push(ra::Operand::reg_fixed_def(v, Self::preg_of(reg)));
                Arrival::Reg(v, sgpr)
            }
        };
        let sret = a.sret.map(|loc| arrive(&mut self.vc, loc));
        let mut params = Vec::new();
        for (param, arg) in func.params.iter().zip(&a.args) {
            let pieces: Vec<Arrival> = arg.pieces.iter().map(|p| arrive(&mut self.vc, p.loc)).collect();
            params.push((param.value, pieces, arg.by_ref));
        }
        let mut implicit = Vec::new();
        for imp in &a.implicit {
            let pieces: Vec<Arrival> = imp.pieces.iter().map(|loc| arrive(&mut self.vc, *loc)).collect();
            implicit.push((imp.input, pieces));
        }
        // The return address stays in s[30:31], which nothing allocates; a
        // function that calls saves it in its prologue (expand.rs), where the
        // call-frame information can say where it is.
        self.ret_locations = a.ret.iter().map(|p| p.loc).collect();
        self.push(MInst { kind: MKind::Entry, ops });
        // Every register argument is copied out of its arrival register before
        // anything else runs: regalloc2 may otherwise leave a value in an
        // arrival register it may not allocate (s12-s29, v24-v31) until its
        // use, where SGPR pair units, expansion temporaries or VGPR windows of
        // the instructions in between would overwrite it.
        let moved_out = |isel: &mut Self, arrival: &mut Arrival| {
            if let Arrival::Reg(v, sgpr) = *arrival {
                *arrival = Arrival::Reg(isel.copy_of(v), sgpr);
            }
        };
        let mut sret = sret;
        if let Some(arrival) = sret.as_mut() {
            moved_out(self, arrival);
        }
        for (_, pieces, _) in params.iter_mut() {
            pieces.iter_mut().for_each(|p| moved_out(self, p));
        }
        for (_, pieces) in implicit.iter_mut() {
            pieces.iter_mut().for_each(|p| moved_out(self, p));
        }
        // Stack pieces, loaded once at the entry (as VGPRs).
        let fetch = |isel: &mut Self, arrival: &Arrival| match *arrival {
            Arrival::Reg(v, sgpr) => (v, sgpr),
            Arrival::Stack { offset, size } => (isel.private_load(size.min(4) as u8, PrivateAt::Incoming(offset), None), false),
        };
        if let Some(arrival) = &sret {
            let (p, _) = fetch(self, arrival);
            let p = self.to_v(&Lowered::V(p))?;
            self.sret_ptr = Some(p);
        }
        let mut dispatch = Vec::new();
        for (input, pieces) in &implicit {
            let mut defs = Vec::new();
            for arrival in pieces {
                let (v, sgpr) = fetch(self, arrival);
                // SGPR inputs that overflowed to the stack are uniform.
                let v = if !sgpr && *input != ImplicitInput::WorkitemId {
                    let s = self.vreg(Class::Sgpr);
                    self.emit(Opcode::v_readfirstlane_b32, &[Dst::R(s)], &[Src::R(v)], |_| {});
                    s
                } else {
                    v
                };
                defs.push(v);
            }
            match input {
                ImplicitInput::WorkitemId => self.tid = Some(defs[0]),
                ImplicitInput::WorkgroupIdX => self.workgroup_id[0] = Some(defs[0]),
                ImplicitInput::WorkgroupIdY => self.workgroup_id[1] = Some(defs[0]),
                ImplicitInput::WorkgroupIdZ => self.workgroup_id[2] = Some(defs[0]),
                ImplicitInput::DispatchPtr => dispatch = defs,
                _ => {}
            }
        }
        if let [lo, hi] = dispatch[..] {
            self.dispatch_ptr = Some(self.make_pair(lo, hi));
        }
        for (value, pieces, by_ref) in params {
            let ty = func.value_type(value).clone();
            let regs: Vec<(ra::VReg, bool)> = pieces.iter().map(|p| fetch(self, p)).collect();
            let l = if by_ref {
                let ptr = match regs[..] {
                    [(p, true)] => self.to_v(&Lowered::S(p))?,
                    [(p, false)] => p,
                    _ => return Err(self.error("internal: by-reference argument without one pointer piece")),
                };
                self.load_private_value(&ty, PrivateAt::Pointer(0), Some(ptr))?
            } else {
                self.from_pieces(&ty, &mut regs.iter())?
            };
            self.set(value, l);
        }
        Ok(())
    }

    /// A call: arguments and implicit inputs into the callee's registers, the
    /// call itself (clobbering what the convention lets the callee change), and
    /// the result pieces back from their registers.
    fn call(&mut self, callee: &str, args: &[Operand], result: Option<Value>) -> Result<(), Diagnostic> {
        let target_fn = self.module.function(callee).ok_or_else(|| self.error(format!("call to undefined function '@{callee}'")))?;
        let a = self.assignment_of(target_fn)?;
        let mut pieces = Vec::new();
        // A result in memory: a buffer in the caller's frame, its address first.
        let sret_local = match (a.sret, &target_fn.ret) {
            (Some(loc), Some(ty)) => {
                let local = self.new_local(ty.size());
                let ptr = self.local_pointer(local)?;
                self.to_pieces(&ptr, &Type::Ptr(AddrSpace::Private), &mut [loc].iter(), &mut pieces)?;
                Some(local)
            }
            _ => None,
        };
        for ((arg, asg), param) in args.iter().zip(&a.args).zip(&target_fn.params) {
            let ty = target_fn.value_type(param.value).clone();
            let l = self.lowered(arg);
            let locs: Vec<Location> = asg.pieces.iter().map(|p| p.loc).collect();
            if asg.by_ref {
                // A copy in the caller's frame, passed by its address.
                let local = self.new_local(ty.size());
                self.store_private_value(&l, &ty, PrivateAt::Local(local), None)?;
                let ptr = self.local_pointer(local)?;
                self.to_pieces(&ptr, &Type::Ptr(AddrSpace::Private), &mut locs.iter(), &mut pieces)?;
            } else {
                self.to_pieces(&l, &ty, &mut locs.iter(), &mut pieces)?;
            }
        }
        for imp in &a.implicit {
            let regs: Vec<ra::VReg> = match imp.input {
                ImplicitInput::WorkitemId => vec![self.tid.ok_or_else(|| self.error("internal: work-item ids not available"))?],
                ImplicitInput::WorkgroupIdX | ImplicitInput::WorkgroupIdY | ImplicitInput::WorkgroupIdZ => {
                    let d = match imp.input {
                        ImplicitInput::WorkgroupIdX => 0,
                        ImplicitInput::WorkgroupIdY => 1,
                        _ => 2,
                    };
                    vec![self.workgroup_id[d].ok_or_else(|| self.error("internal: work-group id not available"))?]
                }
                ImplicitInput::DispatchPtr => {
                    let p = self.dispatch_ptr.ok_or_else(|| self.error("internal: dispatch pointer not available"))?;
                    let (lo, hi) = (self.vreg(Class::Sgpr), self.vreg(Class::Sgpr));
                    self.emit(Opcode::s_mov_b32, &[Dst::R(lo)], &[Src::Half(p, 0)], |_| {});
                    self.emit(Opcode::s_mov_b32, &[Dst::R(hi)], &[Src::Half(p, 1)], |_| {});
                    vec![lo, hi]
                }
                // An LLVM callee has a register for every input; the ones the
                // function does not use are left undefined.
                _ if target_fn.conv == crate::mir::CallConv::Llvm => continue,
                other => return Err(self.error(format!("implicit input {other:?} is not supported in calls yet"))),
            };
            for (r, loc) in regs.into_iter().zip(&imp.pieces) {
                pieces.push((r, *loc));
            }
        }
        // Stack pieces go to the outgoing argument area, above the caller's frame.
        let mut in_registers = Vec::new();
        for (r, loc) in pieces {
            match loc {
                Location::Stack { offset, size } => {
                    let v = if self.vc.class(r) == Class::Vgpr { r } else { self.to_v(&Lowered::S(r))? };
                    self.private_store(v, size.min(4) as u8, PrivateAt::Outgoing(offset), None);
                }
                reg => in_registers.push((r, reg)),
            }
        }
        // In a device function, argument registers overlap the SGPR pair units
        // (s12-s21), the expansion temporaries (s22-s29) and the VGPR windows
        // (v24-v31), which regalloc2 cannot see: each argument is copied into a
        // value of its own right before the call, so nothing runs between the
        // copy into its register and the call.
        let mut ops: Vec<ra::Operand> = Vec::new();
        if self.func.kind == FuncKind::Device {
            // Pair values leave the units before the copies can write the
            // SGPRs under them (the call clobbers the units anyway).
            let mut units = ra::PRegSet::empty();
            for u in 0..SGPR_PAIR_UNITS {
                units.add(ra::PReg::new(u as usize, ra::RegClass::Vector));
            }
            self.push(MInst { kind: MKind::Clobber(units), ops: Vec::new() });
        }
        for (r, reg) in in_registers {
            let r = if self.func.kind == FuncKind::Device { self.copy_of(r) } else { r };
            ops.push(ra::Operand::reg_fixed_use(r, Self::preg_of(reg)));
        }
        // Results.
        let mut result_regs = Vec::new();
        for p in &a.ret {
            let class = if matches!(p.loc, Location::Sgpr(_)) { Class::Sgpr } else { Class::Vgpr };
            let v = self.vreg(class);
            ops.push(ra::Operand::reg_fixed_def(v, Self::preg_of(p.loc)));
            result_regs.push((v, class == Class::Sgpr));
        }
        // Clobbers: v0-v31 and s0-s31, except the registers results arrive in
        // (a register cannot be both a fixed definition and a clobber).
        let mut clobbers = ra::PRegSet::empty();
        for n in 0..32u16 {
            let (v, s) = (vgpr_preg(n), sgpr_preg(n));
            if !a.ret.iter().any(|p| p.loc == Location::Vgpr(n)) {
                clobbers.add(v);
            }
            if !a.ret.iter().any(|p| p.loc == Location::Sgpr(n)) {
                clobbers.add(s);
            }
        }
        // A device function's SGPR pair units (s12-s21) are clobbered as well.
        if self.func.kind == FuncKind::Device {
            for u in 0..SGPR_PAIR_UNITS {
                clobbers.add(ra::PReg::new(u as usize, ra::RegClass::Vector));
            }
        }
        // An LLVM callee may also change registers this layout keeps values in
        // (s40-s47, s56-s63, v32-v39, ...): nothing stays in a register across
        // the call; the SGPR spill VGPRs sit where LLVM preserves them.
        let llvm = target_fn.conv == crate::mir::CallConv::Llvm;
        if llvm {
            for n in 0..64usize {
                if !a.ret.iter().any(|p| p.loc == Location::Vgpr(n as u16)) {
                    clobbers.add(ra::PReg::new(n, ra::RegClass::Float));
                }
                if !a.ret.iter().any(|p| p.loc == Location::Sgpr(n as u16)) {
                    clobbers.add(ra::PReg::new(n, ra::RegClass::Int));
                }
            }
            for u in 0..SGPR_PAIR_UNITS + 2 {
                clobbers.add(ra::PReg::new(u as usize, ra::RegClass::Vector));
            }
        }
        self.push(MInst { kind: MKind::Call { callee: callee.to_string(), clobbers, llvm }, ops });
        if self.func.kind == FuncKind::Device {
            // Results are copied out of their arrival registers at once, like
            // arguments at the entry: those above the allocatable VGPRs
            // overlap the windows.
            for (v, _) in result_regs.iter_mut() {
                *v = self.copy_of(*v);
            }
        }
        if let (Some(r), Some(ty)) = (result, target_fn.ret.clone()) {
            let l = match sret_local {
                Some(local) => self.load_private_value(&ty, PrivateAt::Local(local), None)?,
                None => self.from_pieces(&ty, &mut result_regs.iter())?,
            };
            self.set(r, l);
        }
        Ok(())
    }

    fn entry(&mut self, layout: &KernargLayout, state: &InitialState) -> Result<(), Diagnostic> {
        if self.func.kind == FuncKind::Device {
            return self.function_entry();
        }
        let mut ops = Vec::new();
        let mut def_fixed = |vc: &mut VCode, class: Class, preg: ra::PReg| {
            let v = vc.new_vreg(class);
            ops.push(ra::Operand::reg_fixed_def(v, preg));
            v
        };
        // Pointer inputs: pinned pair units where the allocator cannot confuse
        // them with single SGPRs; in kernels that call (where calls use s0-s31
        // by number, which a pinned pair would alias unseen) as two singles.
        let calls = self.func.blocks.iter().any(|b| b.insts.iter().any(|i| matches!(i.op, Op::Call { .. })));
        let mut pairs = Vec::new();
        let mut halves = Vec::new();
        for slot in &state.user_sgprs {
            let unit = match slot.input {
                SgprInput::KernargSegmentPtr => SGPR_PAIR_INPUT_UNITS[0],
                SgprInput::DispatchPtr => SGPR_PAIR_INPUT_UNITS[1],
                _ => continue,
            };
            if calls {
                let lo = def_fixed(&mut self.vc, Class::Sgpr, sgpr_preg(slot.first));
                let hi = def_fixed(&mut self.vc, Class::Sgpr, sgpr_preg(slot.first + 1));
                halves.push((slot.input, lo, hi));
                continue;
            }
            let pair = def_fixed(&mut self.vc, Class::SgprPair, ra::PReg::new(unit as usize, ra::RegClass::Vector));
            self.vc.pinned_pairs.push((unit, slot.first));
            pairs.push((slot.input, pair));
        }
        for slot in &state.system_sgprs {
            let dim = match slot.input {
                SgprInput::WorkgroupIdX => 0,
                SgprInput::WorkgroupIdY => 1,
                SgprInput::WorkgroupIdZ => 2,
                _ => continue,
            };
            self.workgroup_id[dim] = Some(def_fixed(&mut self.vc, Class::Sgpr, sgpr_preg(slot.first)));
        }
        if state.workitem_ids.dims > 0 {
            self.tid = Some(def_fixed(&mut self.vc, Class::Vgpr, vgpr_preg(0)));
        }
        self.push(MInst { kind: MKind::Entry, ops });
        for (input, lo, hi) in halves {
            pairs.push((input, self.make_pair(lo, hi)));
        }
        for (input, pair) in pairs {
            match input {
                SgprInput::KernargSegmentPtr => self.kernarg_ptr = Some(pair),
                _ => self.dispatch_ptr = Some(pair),
            }
        }
        // Kernel arguments: scalar loads from the kernarg segment.
        for (param, arg) in self.func.params.iter().zip(&layout.explicit) {
            let l = self.kernarg_load(&arg.ty, arg.offset)?;
            self.set(param.value, l);
        }
        Ok(())
    }

    fn kernarg_load(&mut self, ty: &Type, offset: u32) -> Result<Lowered, Diagnostic> {
        let base = self.kernarg_ptr.expect("kernels with parameters have the kernarg pointer");
        match ty {
            Type::Struct(fields) => {
                let offsets = ty.field_offsets();
                let mut parts = Vec::new();
                for (f, o) in fields.iter().zip(offsets) {
                    parts.push(self.kernarg_load(f, offset + o)?);
                }
                Ok(Lowered::Agg(parts))
            }
            Type::Vector(elem, n) => {
                let mut parts = Vec::new();
                for i in 0..u32::from(*n) {
                    parts.push(self.kernarg_load(elem, offset + i * elem.size())?);
                }
                Ok(Lowered::Agg(parts))
            }
            _ => match ty.bits() {
                32 => {
                    let d = self.vreg(Class::Sgpr);
                    self.emit(Opcode::s_load_dword, &[Dst::R(d)], &[Src::R(base), Src::Off], |i| i.offset = offset as i32);
                    Ok(Lowered::S(d))
                }
                64 => {
                    let d = self.vreg(Class::SgprPair);
                    self.emit(Opcode::s_load_dwordx2, &[Dst::R(d)], &[Src::R(base), Src::Off], |i| i.offset = offset as i32);
                    Ok(Lowered::S64(d))
                }
                8 | 16 => {
                    // Load the containing dword and extract (offset is naturally aligned).
                    let word = self.vreg(Class::Sgpr);
                    self.emit(Opcode::s_load_dword, &[Dst::R(word)], &[Src::R(base), Src::Off], |i| i.offset = (offset & !3) as i32);
                    let d = self.vreg(Class::Sgpr);
                    let shift = (offset & 3) * 8;
                    let width = ty.bits();
                    self.emit(Opcode::s_bfe_u32, &[Dst::R(d)], &[Src::R(word), Src::Imm((width << 16) | shift)], |_| {});
                    Ok(Lowered::S(d))
                }
                _ => Err(self.error(format!("kernel arguments of type {ty} are not supported by the code generator yet"))),
            },
        }
    }
}

/// True if the value lives in VGPRs or is a lane mask: operations on it must use
/// the vector unit even when the result is uniform (a uniform value computed by
/// a vector-only instruction, such as a float conversion, stays in a VGPR).
fn in_vector_registers(l: &Lowered) -> bool {
    match l {
        Lowered::V(_) | Lowered::V64(..) | Lowered::Mask(_) | Lowered::Addr { .. } => true,
        Lowered::ScalarCmp { .. } => false,
        Lowered::Agg(parts) => parts.iter().any(in_vector_registers),
        _ => false,
    }
}

fn const_lowered(c: &Const) -> Lowered {
    Lowered::Imm(c.bits)
}

/// True for a constant that needs a literal dword (not an inline constant).
fn is_literal(l: &Lowered) -> bool {
    matches!(l, Lowered::Imm(bits) if matches!(isa::Operand::imm32(*bits as u32), isa::Operand::Literal(_)))
}

fn scmp_opcode(pred: IntPred) -> Opcode {
    match pred {
        IntPred::Eq => Opcode::s_cmp_eq_u32,
        IntPred::Ne => Opcode::s_cmp_lg_u32,
        IntPred::Slt => Opcode::s_cmp_lt_i32,
        IntPred::Sle => Opcode::s_cmp_le_i32,
        IntPred::Sgt => Opcode::s_cmp_gt_i32,
        IntPred::Sge => Opcode::s_cmp_ge_i32,
        IntPred::Ult => Opcode::s_cmp_lt_u32,
        IntPred::Ule => Opcode::s_cmp_le_u32,
        IntPred::Ugt => Opcode::s_cmp_gt_u32,
        IntPred::Uge => Opcode::s_cmp_ge_u32,
    }
}

fn vcmp32_opcode(pred: IntPred) -> Opcode {
    match pred {
        IntPred::Eq => Opcode::v_cmp_eq_u32,
        IntPred::Ne => Opcode::v_cmp_ne_u32,
        IntPred::Slt => Opcode::v_cmp_lt_i32,
        IntPred::Sle => Opcode::v_cmp_le_i32,
        IntPred::Sgt => Opcode::v_cmp_gt_i32,
        IntPred::Sge => Opcode::v_cmp_ge_i32,
        IntPred::Ult => Opcode::v_cmp_lt_u32,
        IntPred::Ule => Opcode::v_cmp_le_u32,
        IntPred::Ugt => Opcode::v_cmp_gt_u32,
        IntPred::Uge => Opcode::v_cmp_ge_u32,
    }
}

fn vcmp64_opcode(pred: IntPred) -> Opcode {
    match pred {
        IntPred::Eq => Opcode::v_cmp_eq_u64,
        IntPred::Ne => Opcode::v_cmp_ne_u64,
        IntPred::Slt => Opcode::v_cmp_lt_i64,
        IntPred::Sle => Opcode::v_cmp_le_i64,
        IntPred::Sgt => Opcode::v_cmp_gt_i64,
        IntPred::Sge => Opcode::v_cmp_ge_i64,
        IntPred::Ult => Opcode::v_cmp_lt_u64,
        IntPred::Ule => Opcode::v_cmp_le_u64,
        IntPred::Ugt => Opcode::v_cmp_gt_u64,
        IntPred::Uge => Opcode::v_cmp_ge_u64,
    }
}

/// The f64 compares (same predicates as f32).
fn fcmp64_opcode(pred: FloatPred) -> Opcode {
    match pred {
        FloatPred::Oeq => Opcode::v_cmp_eq_f64,
        FloatPred::One => Opcode::v_cmp_lg_f64,
        FloatPred::Olt => Opcode::v_cmp_lt_f64,
        FloatPred::Ole => Opcode::v_cmp_le_f64,
        FloatPred::Ogt => Opcode::v_cmp_gt_f64,
        FloatPred::Oge => Opcode::v_cmp_ge_f64,
        FloatPred::Ord => Opcode::v_cmp_o_f64,
        FloatPred::Uno => Opcode::v_cmp_u_f64,
        FloatPred::Ueq => Opcode::v_cmp_nlg_f64,
        FloatPred::Une => Opcode::v_cmp_neq_f64,
        FloatPred::Ult => Opcode::v_cmp_nge_f64,
        FloatPred::Ule => Opcode::v_cmp_ngt_f64,
        FloatPred::Ugt => Opcode::v_cmp_nle_f64,
        FloatPred::Uge => Opcode::v_cmp_nlt_f64,
    }
}

/// LLVM's f32 compare mnemonics: `n*` are the unordered negations.
fn fcmp_opcode(pred: FloatPred) -> Opcode {
    match pred {
        FloatPred::Oeq => Opcode::v_cmp_eq_f32,
        FloatPred::One => Opcode::v_cmp_lg_f32,
        FloatPred::Olt => Opcode::v_cmp_lt_f32,
        FloatPred::Ole => Opcode::v_cmp_le_f32,
        FloatPred::Ogt => Opcode::v_cmp_gt_f32,
        FloatPred::Oge => Opcode::v_cmp_ge_f32,
        FloatPred::Ord => Opcode::v_cmp_o_f32,
        FloatPred::Uno => Opcode::v_cmp_u_f32,
        FloatPred::Ueq => Opcode::v_cmp_nlg_f32,
        FloatPred::Une => Opcode::v_cmp_neq_f32,
        FloatPred::Ult => Opcode::v_cmp_nge_f32,
        FloatPred::Ule => Opcode::v_cmp_ngt_f32,
        FloatPred::Ugt => Opcode::v_cmp_nle_f32,
        FloatPred::Uge => Opcode::v_cmp_nlt_f32,
    }
}

/// Which kernel inputs a function uses (so that only those are enabled).
fn kernel_inputs(func: &Function, callee_uses: &HashMap<String, Vec<ImplicitInput>>) -> KernelInputs {
    let mut inputs = KernelInputs::default();
    inputs.kernarg_segment_ptr = !func.params.is_empty();
    // What the functions it calls use, the kernel must receive to pass on (the
    // work-item ids packed in v0 need all three dimensions enabled).
    for block in &func.blocks {
        for inst in &block.insts {
            if let Op::Call { callee, .. } = &inst.op {
                for input in callee_uses.get(callee).map(Vec::as_slice).unwrap_or(&[]) {
                    match input {
                        ImplicitInput::WorkitemId => inputs.workitem_id_dims = 3,
                        ImplicitInput::WorkgroupIdX => inputs.workgroup_id_x = true,
                        ImplicitInput::WorkgroupIdY => inputs.workgroup_id_y = true,
                        ImplicitInput::WorkgroupIdZ => inputs.workgroup_id_z = true,
                        ImplicitInput::DispatchPtr => inputs.dispatch_ptr = true,
                        _ => {}
                    }
                }
            }
        }
    }
    for block in &func.blocks {
        for inst in &block.insts {
            if let Op::Builtin { kind, dim } = inst.op {
                match kind {
                    Builtin::WorkitemId => inputs.workitem_id_dims = inputs.workitem_id_dims.max(dim + 1),
                    Builtin::WorkgroupId => match dim {
                        0 => inputs.workgroup_id_x = true,
                        1 => inputs.workgroup_id_y = true,
                        _ => inputs.workgroup_id_z = true,
                    },
                    Builtin::WorkgroupSize | Builtin::GridSize => inputs.dispatch_ptr = true,
                }
            }
        }
    }
    inputs
}

/// The signature a device function is compiled (and called) with: its
/// parameters and result, and the implicit inputs it uses.
pub fn function_signature(f: &Function, callee_uses: &HashMap<String, Vec<ImplicitInput>>) -> Signature {
    let mut sig = Signature::new(
        f.params.iter().map(|p| crate::abi::Param { ty: f.value_type(p.value).clone(), inreg: p.inreg, is_self: false }).collect(),
        f.ret.clone(),
    );
    sig.uses = Some(callee_uses.get(&f.name).cloned().unwrap_or_default());
    sig
}

/// The ABI crate's convention for a function's `callconv`.
pub fn convention_of(f: &Function) -> Convention {
    match f.conv {
        crate::mir::CallConv::AmdgpuCg => Convention::AmdgpuCg,
        crate::mir::CallConv::Llvm => Convention::Llvm,
    }
}

/// Selects instructions for one kernel.
#[allow(clippy::too_many_arguments)]
pub fn select(
    module: &Module,
    callee_uses: &HashMap<String, Vec<ImplicitInput>>,
    func: &Function,
    uniformity: &Uniformity,
    structure: &Structure,
    target: Target,
    code_object_version: u32,
    scratch: bool,
) -> Result<Selected, Diagnostic> {
    let has_calls = func.blocks.iter().any(|b| b.insts.iter().any(|i| matches!(i.op, Op::Call { .. })));
    let device = func.kind == FuncKind::Device;
    let mut inputs = if device { KernelInputs::default() } else { kernel_inputs(func, callee_uses) };
    inputs.uses_scratch = scratch;
    let state = kernel::initial_state(target, &inputs);
    let arg_types: Vec<Type> = func.params.iter().map(|p| func.value_type(p.value).clone()).collect();
    let layout = kernarg::layout(&arg_types, code_object_version);
    let mut isel = Isel {
        module,
        callee_uses,
        ret_locations: Vec::new(),
        sret_ptr: None,
        locals: 0,
        func,
        uni: uniformity,
        structure,
        target,
        vc: VCode::default(),
        values: vec![None; func.values.len()],
        blocks: Vec::new(),
        cur: 0,
        mblock: vec![usize::MAX; func.blocks.len()],
        kernarg_ptr: None,
        dispatch_ptr: None,
        workgroup_id: [None; 3],
        tid: None,
        lds_size: 0,
        branch_only_compares: branch_only_compares(func),
        inst_ref: None,
    };
    let variables = super::lower_cf::lower_function(&mut isel_handle(&mut isel), &layout, &state)?;
    let lds_size = isel.lds_size;
    let mask_class = isel.mask_class();
    let wave64 = isel.wave64();
    super::ssa_repair::remove_unreachable(&mut isel.blocks);
    super::ssa_repair::repair(&mut isel.blocks, &mut isel.vc, &variables, mask_class, wave64);
    let mut vcode = finish(isel.blocks, isel.vc);
    vcode.layout = if device {
        Layout::Callee
    } else if has_calls {
        Layout::Caller
    } else {
        Layout::Dense
    };
    vcode.frame.locals = isel.locals.saturating_add(15) / 16 * 16;
    if device {
        // A device function reaches its frame through SP (s32) and, on buffer
        // scratch, the V# in s[0:3] and the wave offset in s33.
        let a = assign(&function_signature(func, callee_uses), convention_of(func), target).map_err(|e| err(func, None, format!("calling convention: {e}")))?;
        vcode.frame.incoming = a.stack_size.div_ceil(16) * 16;
        vcode.scratch = Some(if target.gpu.has_architected_flat_scratch() {
            Scratch::Flat
        } else {
            Scratch::Buffer { rsrc: 0, wave_offset: Layout::CALLER_WAVE_OFFSET }
        });
    } else if scratch {
        vcode.scratch = Some(if target.gpu.has_architected_flat_scratch() {
            Scratch::Flat
        } else {
            let rsrc = state.slot(SgprInput::PrivateSegmentBuffer).map(|s| s.first);
            let offset = state.slot(SgprInput::PrivateSegmentWaveOffset).map(|s| s.first);
            match (rsrc, offset) {
                (Some(rsrc), Some(wave_offset)) => Scratch::Buffer { rsrc, wave_offset },
                _ => return Err(err(func, None, "internal error: scratch inputs missing from the kernel's initial state".into())),
            }
        });
    }
    Ok(Selected { vcode, inputs, state, kernarg: layout, lds_size })
}

/// The interface the control-flow lowering (lower_cf.rs) uses to drive selection.
pub(super) struct IselHandle<'i, 'a> {
    isel: &'i mut Isel<'a>,
}

fn isel_handle<'i, 'a>(isel: &'i mut Isel<'a>) -> IselHandle<'i, 'a> {
    IselHandle { isel }
}

impl<'a> IselHandle<'_, 'a> {
    pub fn func(&self) -> &'a Function {
        self.isel.func
    }
    pub fn structure(&self) -> &'a Structure {
        self.isel.structure
    }
    pub fn uniformity(&self) -> &'a Uniformity {
        self.isel.uni
    }
    pub fn mask_class(&self) -> Class {
        self.isel.mask_class()
    }
    pub fn new_block(&mut self, name: String, partial_exec: bool) -> usize {
        self.isel.blocks.push(BlockBuild { name, insts: Vec::new(), succs: Vec::new(), succ_args: Vec::new(), params: Vec::new(), partial_exec });
        self.isel.blocks.len() - 1
    }
    pub fn switch_to(&mut self, block: usize) {
        self.isel.cur = block;
    }
    pub fn current(&self) -> usize {
        self.isel.cur
    }
    pub fn set_mblock(&mut self, mir_block: usize, mblock: usize) {
        self.isel.mblock[mir_block] = mblock;
    }
    pub fn mblock(&self, mir_block: usize) -> usize {
        self.isel.mblock[mir_block]
    }
    pub fn vreg(&mut self, class: Class) -> ra::VReg {
        self.isel.vreg(class)
    }
    pub fn entry(&mut self, layout: &KernargLayout, state: &InitialState) -> Result<(), Diagnostic> {
        self.isel.entry(layout, state)
    }
    pub fn instruction(&mut self, inst: &'a Inst) -> Result<(), Diagnostic> {
        self.isel.instruction(inst)
    }
    /// Block parameter of a machine block, recorded as the lowering of a MIR
    /// value (`usize::MAX`: a plain register, no parameter).
    pub fn add_param(&mut self, block: usize, class: Class) -> ra::VReg {
        let v = self.isel.vreg(class);
        if block != usize::MAX {
            self.isel.blocks[block].params.push(v);
        }
        v
    }
    /// The lowering of a MIR block parameter: a fresh machine block parameter of
    /// the right class(es) per 32-bit piece.
    pub fn define_block_param(&mut self, block: usize, value: Value) -> Result<(), Diagnostic> {
        let ty = self.isel.func.value_type(value).clone();
        let divergent = self.isel.uni.is_divergent(value);
        let l = self.fresh_lowered(block, &ty, divergent)?;
        self.isel.set(value, l);
        Ok(())
    }
    fn fresh_lowered(&mut self, block: usize, ty: &Type, divergent: bool) -> Result<Lowered, Diagnostic> {
        Ok(match ty {
            Type::Vector(elem, n) => {
                let mut parts = Vec::new();
                for _ in 0..*n {
                    parts.push(self.fresh_lowered(block, elem, divergent)?);
                }
                Lowered::Agg(parts)
            }
            Type::Struct(fields) => {
                let mut parts = Vec::new();
                for f in fields {
                    parts.push(self.fresh_lowered(block, f, divergent)?);
                }
                Lowered::Agg(parts)
            }
            Type::I1 if divergent => Lowered::Mask(self.add_param(block, self.isel.mask_class())),
            Type::I1 => Lowered::Bool(self.add_param(block, Class::Sgpr)),
            t if t.bits() == 64 && divergent => {
                let lo = self.add_param(block, Class::Vgpr);
                let hi = self.add_param(block, Class::Vgpr);
                Lowered::V64(lo, hi)
            }
            t if t.bits() == 64 => Lowered::S64(self.add_param(block, Class::SgprPair)),
            _ if divergent || ty.is_float() => Lowered::V(self.add_param(block, Class::Vgpr)),
            _ => Lowered::S(self.add_param(block, Class::Sgpr)),
        })
    }

    /// Variables for a MIR block parameter whose block is reached along mask
    /// edges: fresh registers, not machine block parameters.
    pub fn define_value_vars(&mut self, value: Value) -> Result<(), Diagnostic> {
        let ty = self.isel.func.value_type(value).clone();
        let divergent = self.isel.uni.is_divergent(value);
        let l = self.fresh_lowered(usize::MAX, &ty, divergent)?;
        self.isel.set(value, l);
        Ok(())
    }

    /// The registers of a value with how each merges.
    pub fn value_regs_kinds(&mut self, value: Value) -> Vec<(ra::VReg, MergeKind)> {
        fn flatten(l: &Lowered, out: &mut Vec<(ra::VReg, MergeKind)>) {
            match l {
                Lowered::S(v) | Lowered::S64(v) | Lowered::Bool(v) => out.push((*v, MergeKind::Scalar)),
                Lowered::Mask(v) => out.push((*v, MergeKind::Mask)),
                Lowered::V(v) => out.push((*v, MergeKind::Vector)),
                Lowered::V64(a, b) => out.extend([(*a, MergeKind::Vector), (*b, MergeKind::Vector)]),
                Lowered::Agg(parts) => parts.iter().for_each(|p| flatten(p, out)),
                Lowered::Imm(..) | Lowered::Addr { .. } | Lowered::ScalarCmp { .. } => {}
            }
        }
        let mut out = Vec::new();
        if let Some(l) = &self.isel.values[value.0 as usize] {
            flatten(l, &mut out);
        }
        out
    }

    pub fn value_lowering(&self, value: Value) -> Option<Lowered> {
        self.isel.values[value.0 as usize].clone()
    }

    pub fn set_value_lowering(&mut self, value: Value, l: Option<Lowered>) {
        self.isel.values[value.0 as usize] = l;
    }

    /// Replaces a value's lowering by copies of its registers (made here) and
    /// returns the old one: edges then read the value as it was before they
    /// assign the variables it lives in (parallel-copy semantics).
    pub fn snapshot_value(&mut self, value: Value) -> Option<Lowered> {
        fn copy(isel: &mut Isel<'_>, l: &Lowered) -> Lowered {
            match l {
                Lowered::S(v) => Lowered::S(isel.copy_of(*v)),
                Lowered::S64(v) => Lowered::S64(isel.copy_of(*v)),
                Lowered::V(v) => Lowered::V(isel.copy_of(*v)),
                Lowered::Bool(v) => Lowered::Bool(isel.copy_of(*v)),
                Lowered::Mask(v) => Lowered::Mask(isel.copy_of(*v)),
                Lowered::V64(a, b) => Lowered::V64(isel.copy_of(*a), isel.copy_of(*b)),
                Lowered::Agg(parts) => Lowered::Agg(parts.iter().map(|p| copy(isel, p)).collect()),
                other => other.clone(),
            }
        }
        let old = self.isel.values[value.0 as usize].clone();
        if let Some(l) = &old {
            let c = copy(self.isel, l);
            self.isel.values[value.0 as usize] = Some(c);
        }
        old
    }

    /// Per machine block: the registers it defines that other blocks use.
    pub fn defs_used_in_other_blocks(&self) -> HashMap<usize, Vec<ra::VReg>> {
        let mut def_block: HashMap<ra::VReg, usize> = HashMap::new();
        for (b, block) in self.isel.blocks.iter().enumerate() {
            for m in &block.insts {
                for o in &m.ops {
                    if o.kind() == ra::OperandKind::Def {
                        def_block.entry(o.vreg()).or_insert(b);
                    }
                }
            }
        }
        let mut out: HashMap<usize, Vec<ra::VReg>> = HashMap::new();
        let mut seen: std::collections::HashSet<ra::VReg> = std::collections::HashSet::new();
        for (b, block) in self.isel.blocks.iter().enumerate() {
            let uses = block.insts.iter().flat_map(|m| m.ops.iter().filter(|o| o.kind() == ra::OperandKind::Use).map(|o| o.vreg())).chain(block.succ_args.iter().flatten().copied());
            for v in uses {
                if let Some(&d) = def_block.get(&v) {
                    if d != b && seen.insert(v) {
                        out.entry(d).or_default().push(v);
                    }
                }
            }
        }
        out
    }

    /// Inserts instructions at the start of a machine block (after the
    /// function's `Entry`).
    pub fn insert_at_start(&mut self, block: usize, insts: Vec<(MKind, Vec<ra::Operand>)>) {
        let b = &mut self.isel.blocks[block];
        let at = b.insts.iter().position(|m| !matches!(m.kind, MKind::Entry)).unwrap_or(b.insts.len());
        for (k, (kind, ops)) in insts.into_iter().enumerate() {
            b.insts.insert(at + k, MInst { kind, ops });
        }
    }

    /// Inserts instructions before the terminator of a machine block.
    pub fn insert_before_terminator(&mut self, block: usize, insts: Vec<(MKind, Vec<ra::Operand>)>) {
        let b = &mut self.isel.blocks[block];
        let at = b.insts.len() - 1;
        for (k, (kind, ops)) in insts.into_iter().enumerate() {
            b.insts.insert(at + k, MInst { kind, ops });
        }
    }

    /// The machine registers that carry `operand` into a parameter lowered as
    /// `like` (materialising constants and converting classes).
    pub fn args_for(&mut self, operand: &Operand, like: Value) -> Result<Vec<ra::VReg>, Diagnostic> {
        let src = self.isel.lowered(operand);
        let dst = self.isel.values[like.0 as usize].clone().expect("block parameters are defined before branches are lowered");
        self.conform(&src, &dst)
    }

    fn conform(&mut self, src: &Lowered, dst: &Lowered) -> Result<Vec<ra::VReg>, Diagnostic> {
        let isel = &mut *self.isel;
        Ok(match dst {
            Lowered::Agg(ds) => {
                let Lowered::Agg(ss) = src else { return Err(isel.error("internal: aggregate argument")) };
                let mut out = Vec::new();
                for (s, d) in ss.clone().iter().zip(ds.clone().iter()) {
                    out.extend(self.conform(s, d)?);
                }
                out
            }
            Lowered::V(_) => vec![isel.to_v(src)?],
            Lowered::S(_) => vec![isel.to_s(src)?],
            Lowered::Bool(_) => vec![isel.to_bool(src)?],
            Lowered::Mask(_) => vec![isel.to_mask(src)?],
            Lowered::S64(_) => vec![isel.to_s64(src)?],
            Lowered::V64(..) => {
                let (lo, hi) = isel.to_v64(src)?;
                vec![lo, hi]
            }
            Lowered::Imm(..) | Lowered::Addr { .. } | Lowered::ScalarCmp { .. } => return Err(isel.error("internal: parameters are registers")),
        })
    }

    /// Register classes of a divergent value of type `ty`, one per 32-bit piece
    /// (lane masks for booleans).
    pub fn divergent_classes(&self, ty: &Type) -> Vec<Class> {
        match ty {
            Type::Vector(elem, n) => (0..*n).flat_map(|_| self.divergent_classes(elem)).collect(),
            Type::Struct(fields) => fields.iter().flat_map(|f| self.divergent_classes(f)).collect(),
            Type::I1 => vec![self.isel.mask_class()],
            t if t.bits() == 64 => vec![Class::Vgpr, Class::Vgpr],
            _ => vec![Class::Vgpr],
        }
    }

    /// The value in divergent form (see [`Self::divergent_classes`]).
    pub fn divergent_regs(&mut self, value: Value) -> Result<Vec<ra::VReg>, Diagnostic> {
        let ty = self.isel.func.value_type(value).clone();
        let l = self.isel.values[value.0 as usize].clone().expect("defined before use");
        self.divergent_regs_of(&l, &ty)
    }

    fn divergent_regs_of(&mut self, l: &Lowered, ty: &Type) -> Result<Vec<ra::VReg>, Diagnostic> {
        Ok(match ty {
            Type::Vector(..) | Type::Struct(..) => {
                let Lowered::Agg(parts) = l else { return Err(self.isel.error("internal: aggregate value")) };
                let types: Vec<Type> = match ty {
                    Type::Vector(elem, n) => vec![(**elem).clone(); usize::from(*n)],
                    Type::Struct(fields) => fields.clone(),
                    _ => unreachable!(),
                };
                let mut out = Vec::new();
                for (p, t) in parts.clone().iter().zip(&types) {
                    out.extend(self.divergent_regs_of(p, t)?);
                }
                out
            }
            Type::I1 => vec![self.isel.to_mask(l)?],
            t if t.bits() == 64 => {
                let (lo, hi) = self.isel.to_v64(l)?;
                vec![lo, hi]
            }
            _ => vec![self.isel.to_v(l)?],
        })
    }

    /// Makes a value's lowering the divergent form held in `regs`.
    pub fn set_divergent_value(&mut self, value: Value, regs: &[ra::VReg]) {
        fn build(ty: &Type, regs: &mut std::slice::Iter<ra::VReg>) -> Lowered {
            match ty {
                Type::Vector(elem, n) => Lowered::Agg((0..*n).map(|_| build(elem, regs)).collect()),
                Type::Struct(fields) => Lowered::Agg(fields.iter().map(|f| build(f, regs)).collect()),
                Type::I1 => Lowered::Mask(*regs.next().unwrap()),
                t if t.bits() == 64 => Lowered::V64(*regs.next().unwrap(), *regs.next().unwrap()),
                _ => Lowered::V(*regs.next().unwrap()),
            }
        }
        let ty = self.isel.func.value_type(value).clone();
        let mut it = regs.iter();
        self.isel.values[value.0 as usize] = Some(build(&ty, &mut it));
    }

    pub fn class_of(&self, v: ra::VReg) -> Class {
        self.isel.vc.class(v)
    }

    pub fn push(&mut self, kind: MKind, ops: Vec<ra::Operand>) {
        self.isel.push(MInst { kind, ops });
    }

    /// A uniform branch: the terminator for `cond`, with its operands. A deferred
    /// compare becomes a compare-and-branch; anything else a test of a boolean.
    pub fn uniform_branch(&mut self, cond: &Operand) -> Result<(Branch, Vec<ra::Operand>), Diagnostic> {
        let l = self.isel.lowered(cond);
        if let Lowered::ScalarCmp { op, a, b } = &l {
            let mut ops = Vec::new();
            let mut imms = [None, None];
            for (k, side) in [a, b].into_iter().enumerate() {
                match **side {
                    Lowered::Imm(bits) => imms[k] = Some(bits as u32),
                    _ => {
                        let r = self.isel.to_s(side)?;
                        ops.push(ra::Operand::reg_use(r));
                    }
                }
            }
            return Ok((Branch::IfCompare { op: *op, imms }, ops));
        }
        let flag = self.isel.to_bool(&l)?;
        Ok((Branch::IfUniform, vec![ra::Operand::reg_use(flag)]))
    }

    /// A device function's return: the result into its registers, and the
    /// return address back into s[30:31].
    pub fn function_return(&mut self, value: Option<&Operand>) -> Result<(), Diagnostic> {
        let isel = &mut *self.isel;
        let mut ops = Vec::new();
        if let (Some(v), Some(ty), Some(ptr)) = (value, isel.func.ret.clone(), isel.sret_ptr) {
            let l = isel.lowered(v);
            isel.store_private_value(&l, &ty, PrivateAt::Pointer(0), Some(ptr))?;
        } else if let (Some(v), Some(ty)) = (value, isel.func.ret.clone()) {
            let l = isel.lowered(v);
            let locs = isel.ret_locations.clone();
            let mut pieces = Vec::new();
            isel.to_pieces(&l, &ty, &mut locs.iter(), &mut pieces)?;
            ops.extend(pieces.iter().map(|(r, loc)| ra::Operand::reg_fixed_use(*r, Isel::preg_of(*loc))));
        }
        self.terminate(Branch::Return, ops, Vec::new(), Vec::new());
        Ok(())
    }

    /// The lane mask for a divergent branch condition.
    pub fn branch_mask(&mut self, cond: &Operand) -> Result<ra::VReg, Diagnostic> {
        let l = self.isel.lowered(cond);
        self.isel.to_mask(&l)
    }

    /// Ends the current block with a terminator and its successors (machine block
    /// indices) and per-successor arguments.
    pub fn terminate(&mut self, branch: Branch, ops: Vec<ra::Operand>, succs: Vec<usize>, args: Vec<Vec<ra::VReg>>) {
        let cur = self.isel.cur;
        self.isel.push(MInst { kind: MKind::Branch(branch), ops });
        self.isel.blocks[cur].succs = succs;
        self.isel.blocks[cur].succ_args = args;
    }

    pub fn set_inst_ref(&mut self, inst: Option<&'a Inst>) {
        self.isel.inst_ref = inst;
    }

    pub fn block_call_args(&mut self, call: &BlockCall) -> Result<Vec<ra::VReg>, Diagnostic> {
        let target = &self.isel.func.blocks[call.block.0 as usize];
        let mut out = Vec::new();
        for (param, arg) in target.params.iter().zip(&call.args) {
            out.extend(self.args_for(arg, *param)?);
        }
        Ok(out)
    }
}

/// Builds the final VCode: instructions in block order, predecessor lists, and
/// split critical edges (regalloc2 needs them split).
fn finish(mut blocks: Vec<BlockBuild>, mut vc: VCode) -> VCode {
    // Split critical edges: an edge from a block with several successors to a
    // block with several predecessors gets a block of its own holding the jump.
    let mut pred_count = vec![0usize; blocks.len()];
    for b in &blocks {
        for &s in &b.succs {
            pred_count[s] += 1;
        }
    }
    let original = blocks.len();
    for b in 0..original {
        if blocks[b].succs.len() < 2 {
            continue;
        }
        for k in 0..blocks[b].succs.len() {
            let s = blocks[b].succs[k];
            if pred_count[s] < 2 {
                continue;
            }
            let args = std::mem::take(&mut blocks[b].succ_args[k]);
            let name = format!("{}.to.{}", blocks[b].name, blocks[s].name);
            // The edge may leave a block that narrowed EXEC (or found it empty):
            // moves placed on it must run with all lanes enabled.
            let partial = true;
            let split = BlockBuild {
                name,
                insts: vec![MInst { kind: MKind::Branch(Branch::Jump), ops: Vec::new() }],
                succs: vec![s],
                succ_args: vec![args],
                params: Vec::new(),
                partial_exec: partial,
            };
            blocks.push(split);
            blocks[b].succs[k] = blocks.len() - 1;
        }
    }
    let mut preds: Vec<Vec<ra::Block>> = vec![Vec::new(); blocks.len()];
    for (i, b) in blocks.iter().enumerate() {
        for &s in &b.succs {
            preds[s].push(ra::Block::new(i));
        }
    }
    for (i, b) in blocks.into_iter().enumerate() {
        let start = vc.insts.len();
        vc.insts.extend(b.insts);
        vc.blocks.push(MBlock {
            insts: start..vc.insts.len(),
            succs: b.succs.iter().map(|&s| ra::Block::new(s)).collect(),
            preds: std::mem::take(&mut preds[i]),
            params: b.params,
            succ_args: b.succ_args,
            partial_exec: b.partial_exec,
            name: b.name,
        });
    }
    vc
}


/// Uniform `icmp`s whose only use is the branch at the end of their own block.
fn branch_only_compares(func: &Function) -> std::collections::HashSet<Value> {
    let mut uses: HashMap<Value, usize> = HashMap::new();
    for block in &func.blocks {
        let operands = block.insts.iter().flat_map(|i| crate::mir::op_operands(&i.op)).chain(crate::mir::terminator_operands(&block.term));
        for o in operands {
            if let Operand::Value(v) = o {
                *uses.entry(*v).or_default() += 1;
            }
        }
    }
    let mut set = std::collections::HashSet::new();
    for block in &func.blocks {
        let crate::mir::Terminator::BrIf { cond: Operand::Value(c), .. } = &block.term else { continue };
        let defined_here = block.insts.iter().any(|i| i.result == Some(*c) && matches!(i.op, Op::Icmp { ref ty, .. } if *ty == Type::I32));
        if defined_here && uses.get(c) == Some(&1) {
            set.insert(*c);
        }
    }
    set
}
