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

use hashbrown::HashMap;

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
    AddrSpace, AtomicOp, BinOp, BlockCall, Module, Builtin, CastOp, Const, Diagnostic, Diagnostics, FloatPred, MemScope, FuncKind, Function, Inst, IntPred, Op,
    Operand, Type, UnOp, Value,
};

mod arith;
mod call;
mod cast;
mod compare;
mod float;
mod memory;
mod memory_model;
mod wave;
mod unary;

use compare::*;

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
    /// A 64-bit address not yet computed: `base` (SGPR pair) + the 32-bit
    /// `offset` (a VGPR), sign-extended or, with `zext`, zero-extended, +
    /// `imm`. Memory instructions fold it: a sign-extended offset with one
    /// `v_mad_i64_i32` into an address window, a zero-extended one as the
    /// global instructions' SGPR base and VGPR offset (their `saddr` form,
    /// no 64-bit VGPR at all); `imm` goes to the immediate offset. Anything
    /// else materialises it.
    Addr { base: ra::VReg, offset: ra::VReg, imm: i32, zext: bool },
    /// An LDS address not yet computed: the MIR value `root` (in a VGPR) +
    /// `imm` (0-65535), for the DS instructions' offset field. The root's
    /// register is looked up where the address is used (control-flow
    /// lowering may have replaced it since). Only pointers whose every use is
    /// a local load or store, or another such `ptradd`, in blocks no loop
    /// exit separates from the definition take this form
    /// (`memory::lds_folded_pointers`); anything else materialises it.
    LdsAddr { root: Value, imm: u32 },
    /// A global or constant address not yet computed: a divergent 64-bit
    /// address (`V64`) plus `imm` (-4096..4095), which global loads and stores
    /// take in their offset field. Made only for the elements of a vector
    /// access and for pointers whose every use is a load or store of their
    /// own block (`memory::global_folded_pointers`); anything else
    /// materialises it.
    VmemAddr { base: Box<Lowered>, imm: i32 },
    /// A global or constant address not yet computed: the divergent 64-bit
    /// pointer (`lo`, `hi`) plus a 64-bit addend (an SGPR pair's halves, or
    /// two VGPRs) that is not a constant. Loads and stores compute the sum
    /// straight into their address window (`Fill::Sum`), so it is never two
    /// VGPR values to copy in. Made for the pointers of
    /// `memory::global_folded_pointers` (every use a load or store of their
    /// own block); anything else materialises it.
    VSum { lo: ra::VReg, hi: ra::VReg, add: [Addend; 2] },
}

/// One 32-bit half of a [`Lowered::VSum`] addend.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Addend {
    R(ra::VReg),
    Half(ra::VReg, u8),
}

impl Addend {
    fn src(self) -> Src {
        match self {
            Addend::R(v) => Src::R(v),
            Addend::Half(p, h) => Src::Half(p, h),
        }
    }
}

/// A source operand of a machine instruction being built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Src {
    /// A folded address (see [`Lowered::Addr`]); its immediate goes to `offset`.
    Address(ra::VReg, ra::VReg),
    R(ra::VReg),
    Half(ra::VReg, u8),
    Imm(u32),
    VPair(ra::VReg, ra::VReg),
    /// Four VGPRs as one 128-bit tuple.
    VQuad([ra::VReg; 4]),
    /// The first `n` of four VGPRs as one multi-dword operand
    /// ([`Fill::Tuple`]).
    Tuple([ra::VReg; 4], u8),
    /// A 64-bit address computed into the instruction's window: the pointer
    /// (low, high VGPRs) plus the addend's halves (see [`Lowered::VSum`]).
    Sum(ra::VReg, ra::VReg, [Addend; 2]),
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
    /// The first `n` of four VGPRs ([`Fill::Tuple`]).
    Tuple([ra::VReg; 4], u8),
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
    /// The module's functions by name (calls find their callee here).
    functions: &'a HashMap<&'a str, &'a Function>,
    /// Implicit inputs each device function uses (itself and through calls).
    callee_uses: &'a HashMap<String, Vec<ImplicitInput>>,
    /// The VGPRs below v32 a call to each compiled device function may
    /// change (`CalleeFacts::vgprs_clobbered`); others change all of them.
    callee_clobbers: &'a HashMap<String, u32>,
    /// Device functions: where the result pieces go.
    ret_locations: Vec<Location>,
    /// A device function's entry block: the length of its instructions
    /// after the argument lowering (`call::sink_entry_loads`).
    entry_prologue_end: Option<usize>,
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
    /// Where the hidden kernel arguments are: a pointer (SGPR pair) and the
    /// offset of the hidden block from it (the kernarg segment pointer and the
    /// explicit arguments' size rounded to 8 in kernels; the implicit-argument
    /// pointer and 0 in device functions).
    implicit_args: Option<(ra::VReg, u32)>,
    /// The code object version (the hidden block's layout depends on it).
    code_object_version: u32,
    dispatch_ptr: Option<ra::VReg>,
    workgroup_id: [Option<ra::VReg>; 3],
    tid: Option<ra::VReg>,
    lds_size: u32,
    /// Uniform compares used only by their own block's branch (see
    /// [`Lowered::ScalarCmp`]).
    deferred_compares: hashbrown::HashSet<Value>,
    inst_ref: Option<&'a Inst>,
    /// Instructions the selector refused, in order: selection goes on past
    /// them (their results get placeholder registers) so that one run reports
    /// every refusal of the function.
    refusals: Vec<Diagnostic>,
    /// Set while selecting a volatile load or store: its global and flat
    /// accesses bypass the caches (see `memory_model.rs`).
    volatile_access: bool,
    /// 64-bit constants already written into an SGPR pair, by machine block:
    /// a later use in the same block reads that pair (scalar writes ignore
    /// EXEC, and a block's instructions are only ever appended, so the
    /// earlier definition is before every later use).
    scalar_pairs: hashbrown::HashMap<(usize, u64), ra::VReg>,
    /// Dispatch-packet dwords already loaded into an SGPR, by (machine
    /// block, byte offset): the work-group sizes in x and y share one.
    packet_words: hashbrown::HashMap<(usize, i32), ra::VReg>,
    /// 32-bit constants already written into a VGPR, by machine block: a
    /// later use in the block reads that VGPR. A block runs under one EXEC
    /// (what changes it inside an expansion restores it), so every lane that
    /// reads the VGPR had it written.
    vector_constants: hashbrown::HashMap<(usize, u32), ra::VReg>,
    /// 32-bit literals already written into an SGPR for gfx9's VOP3
    /// instructions (which take no literal but one scalar source), by
    /// machine block, like `vector_constants`: an SGPR instead of a VGPR.
    scalar_literals: hashbrown::HashMap<(usize, u32), ra::VReg>,
    /// Uniform values (an SGPR, or one half of an SGPR pair: `Src::R` or
    /// `Src::Half`) already copied into a VGPR, by machine block, on the
    /// same grounds as `vector_constants`: SGPR values are written once.
    vector_copies: hashbrown::HashMap<(usize, Src), ra::VReg>,
    /// The VGPRs of `vector_constants` that hold 0 (the high halves of zero
    /// extensions, ...): an instruction that takes an inline constant reads
    /// 0 instead. Each is written once, and nothing else writes it.
    zero_vgprs: hashbrown::HashSet<ra::VReg>,
    /// 64-bit VGPR values (low, high) written together by one instruction
    /// as an aligned pair: placement keeps such a pair in place, so another
    /// instruction reading them as a pair costs no window copies.
    pair_defs: hashbrown::HashSet<(ra::VReg, ra::VReg)>,
    /// Local pointers selected as [`Lowered::LdsAddr`].
    lds_folded: hashbrown::HashSet<Value>,
    /// Global pointers that may be selected as [`Lowered::VmemAddr`].
    global_folded: hashbrown::HashSet<Value>,
    /// i64 values that are a 32-bit value zero- (false) or sign-extended
    /// (true), for the 32 x 32 -> 64 multiplies.
    wide_ext: HashMap<Value, (Operand, bool)>,
    /// i64 values `shl (ext x), k` (k ≤ 6) of those: (x, k, signed), for
    /// addresses `base + ext(x) * 2^k` in one `v_mad_*`.
    scaled_ext: HashMap<Value, (Operand, u32, bool)>,
    /// i64 products read once, by their operands: an add of one becomes a
    /// multiply-add where the operands are extended halves.
    mul_ext: HashMap<Value, (Operand, Operand)>,
    /// Zero-extended address offsets already shifted into a VGPR, by
    /// (machine block, value, shift): the addresses of one index into
    /// several arrays share one (`memory::zero_extended_offset`).
    shifted_offsets: hashbrown::HashMap<(usize, Value, u32), ra::VReg>,
    /// Where each MIR value is defined (`opt::known`'s walks start here).
    mir_defs: Vec<Option<crate::opt::rewrite::Def>>,
    /// How many operands read each MIR value (an atomic nobody reads takes
    /// the form that returns nothing).
    mir_uses: Vec<u32>,
    /// Private pointers `ptradd q, c` with a constant 0 < c < 65536: (q, c),
    /// so accesses through them hold c in their offset field.
    private_offsets: HashMap<Value, (Operand, u32)>,
    /// Stack slots (aligned at most 16) by value: their local's offset in the
    /// frame, so accesses through them (or them plus a constant) address the
    /// frame directly, with no pointer register.
    slot_locals: HashMap<Value, u32>,
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
        let mut inst = isa::Inst::new(op, Vec::with_capacity(defs.len()), Vec::with_capacity(uses.len()));
        let mut ops: Vec<ra::Operand> = Vec::with_capacity(uses.len() + defs.len() + 1);
        let mut fills = Vec::with_capacity(uses.len() + defs.len());
        let mut window = 0u8;
        // A value read twice is one operand. Uses come before any def, so
        // the operands so far are all uses: a few, searched in place.
        let add_use = |ops: &mut Vec<ra::Operand>, v: ra::VReg| -> u8 {
            match ops.iter().position(|o| o.vreg() == v) {
                Some(i) => i as u8,
                None => {
                    ops.push(ra::Operand::reg_use(v));
                    (ops.len() - 1) as u8
                }
            }
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
                Src::Sum(lo, hi, add) => {
                    let (l, h) = (add_use(&mut ops, lo), add_use(&mut ops, hi));
                    let add = add.map(|a| match a {
                        Addend::R(v) => (add_use(&mut ops, v), None),
                        Addend::Half(p, k) => (add_use(&mut ops, p), Some(k)),
                    });
                    fills.push((slot, Fill::Sum { lo: l, hi: h, add, window }));
                    window += 1;
                    isa::Operand::Off
                }
                Src::Tuple(regs, n) => {
                    let mut filled = [0u8; 4];
                    for k in 0..usize::from(n) {
                        filled[k] = add_use(&mut ops, regs[k]);
                    }
                    fills.push((slot, Fill::Tuple { regs: filled, n }));
                    isa::Operand::Off
                }
                Src::VQuad(regs) => {
                    let regs = regs.map(|r| add_use(&mut ops, r));
                    fills.push((slot, Fill::VQuad { regs, window }));
                    window += 2;
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
                    self.pair_defs.insert((lo, hi));
                    // One hardware instruction reads its sources before it
                    // writes its result (into the window, copied out after it,
                    // or in place), so a source that dies here may share a
                    // result's register: a loop's 64-bit induction value
                    // updated in place needs no copies on the back edge. Not
                    // gfx11's 64-bit multiply-adds, whose result may not
                    // overlap a source (`expand::result_apart_from_sources`).
                    let apart = super::expand::result_apart_from_sources(op, self.target);
                    let pos = if apart { ra::OperandPos::Early } else { ra::OperandPos::Late };
                    ops.push(ra::Operand::new(lo, ra::OperandConstraint::Reg, ra::OperandKind::Def, pos));
                    ops.push(ra::Operand::new(hi, ra::OperandConstraint::Reg, ra::OperandKind::Def, pos));
                    let n = ops.len() as u8;
                    fills.push((slot, Fill::VPair { lo: n - 2, hi: n - 1, window }));
                    window += 1;
                    isa::Operand::Off
                }
                Dst::Tuple(regs, n) => {
                    if n == 2 {
                        self.pair_defs.insert((regs[0], regs[1]));
                    }
                    // Early: split into dword loads, a part must not write a
                    // register a later part still reads.
                    let mut filled = [0u8; 4];
                    for k in 0..usize::from(n) {
                        ops.push(ra::Operand::new(regs[k], ra::OperandConstraint::Reg, ra::OperandKind::Def, ra::OperandPos::Early));
                        filled[k] = (ops.len() - 1) as u8;
                    }
                    fills.push((slot, Fill::Tuple { regs: filled, n }));
                    isa::Operand::Off
                }
                Dst::Fixed(r) => isa::Operand::Reg(r),
                Dst::Half(..) => unreachable!("halves are written only by sequences"),
            };
            inst.defs.push(operand);
        }
        tweak(&mut inst);
        if self.volatile_access {
            inst.cache |= self.volatile_bits(op);
        }
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
            Lowered::S(s) | Lowered::Bool(s) => self.vector_copy(Src::R(s)),
            Lowered::Imm(bits) => self.vector_constant(bits as u32),
            Lowered::Mask(m) => {
                let v = self.vreg(Class::Vgpr);
                self.emit(Opcode::v_cndmask_b32, &[Dst::R(v)], &[Src::Imm(0), Src::Imm(1), Src::R(m)], |i| i.e64 = true);
                v
            }
            Lowered::LdsAddr { root, imm } => {
                let base = self.lowered(&Operand::Value(root));
                let base = self.to_v(&base)?;
                let v = self.vreg(Class::Vgpr);
                self.emit(Opcode::v_add_u32, &[Dst::R(v)], &[Src::Imm(imm), Src::R(base)], |_| {});
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
            Lowered::Addr { base, offset, imm, zext } => {
                let (lo, hi) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
                if zext {
                    let carry = self.vreg(self.mask_class());
                    self.emit(Opcode::v_mad_u64_u32, &[Dst::VPair(lo, hi), Dst::R(carry)], &[Src::R(offset), Src::Imm(1), Src::R(base)], |_| {});
                } else {
                    // A shift by zero copies the 64-bit address out of its window
                    // (there is no 64-bit VGPR move before gfx940).
                    self.emit(Opcode::v_lshlrev_b64, &[Dst::VPair(lo, hi)], &[Src::Imm(0), Src::Address(base, offset)], |_| {});
                }
                if imm == 0 {
                    (lo, hi)
                } else {
                    let Lowered::V64(a, b) = self.binary64(BinOp::Add, Lowered::V64(lo, hi), Lowered::Imm(imm as i64 as u64), true)? else {
                        unreachable!("a divergent 64-bit add")
                    };
                    (a, b)
                }
            }
            Lowered::VSum { lo, hi, add } => {
                let addend = match add {
                    [Addend::Half(p, 0), _] => Lowered::S64(p),
                    [a, b] => Lowered::V64(self.addend_vgpr(a), self.addend_vgpr(b)),
                };
                let Lowered::V64(a, b) = self.binary64(BinOp::Add, Lowered::V64(lo, hi), addend, true)? else {
                    unreachable!("a divergent 64-bit add")
                };
                (a, b)
            }
            Lowered::VmemAddr { ref base, imm } => {
                let (lo, hi) = self.to_v64(base)?;
                let Lowered::V64(a, b) = self.binary64(BinOp::Add, Lowered::V64(lo, hi), Lowered::Imm(imm as i64 as u64), true)? else {
                    unreachable!("a divergent 64-bit add")
                };
                (a, b)
            }
            Lowered::S64(p) => (self.vector_copy(Src::Half(p, 0)), self.vector_copy(Src::Half(p, 1))),
            Lowered::Imm(bits) => {
                let (lo, hi) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
                self.emit(Opcode::v_mov_b32, &[Dst::R(lo)], &[Src::Imm(bits as u32)], |_| {});
                self.emit(Opcode::v_mov_b32, &[Dst::R(hi)], &[Src::Imm((bits >> 32) as u32)], |_| {});
                (lo, hi)
            }
            _ => return Err(self.error("internal: expected a 64-bit value")),
        })
    }

    /// An f64 source of a VOP3 instruction: an inline constant as itself
    /// (0, ±0.5, ±1, ±2, ±4), a uniform value or another constant as its SGPR
    /// pair while the instruction may still read a scalar (`scalars`: one on
    /// gfx9, two on gfx11: the constant bus), else a VGPR pair. A scalar
    /// pair needs no VGPRs and no copy into a pair window.
    pub(super) fn f64_src(&mut self, l: &Lowered, scalars: &mut u32) -> Result<Src, Diagnostic> {
        if let Lowered::Imm(bits) = *l {
            let v = f64::from_bits(bits);
            if bits == 0 {
                return Ok(Src::Imm(0));
            }
            if [0.5, 1.0, 2.0, 4.0, -0.5, -1.0, -2.0, -4.0].contains(&v) {
                return Ok(Src::Imm((v as f32).to_bits()));
            }
        }
        self.wide_src(l, scalars)
    }

    /// A 64-bit source that is no inline constant: a uniform value or a
    /// constant as its SGPR pair while the constant bus has room
    /// (`scalars`), else a VGPR pair.
    fn wide_src(&mut self, l: &Lowered, scalars: &mut u32) -> Result<Src, Diagnostic> {
        if *scalars > 0 && matches!(l, Lowered::Imm(_) | Lowered::S64(_)) {
            *scalars -= 1;
            return Ok(Src::R(self.to_s64(l)?));
        }
        let (lo, hi) = self.to_v64(l)?;
        Ok(Src::VPair(lo, hi))
    }

    /// A VGPR holding 0 in every active lane (the block's, as every
    /// constant from [`Isel::vector_constant`]).
    pub(super) fn zero_vgpr(&mut self) -> ra::VReg {
        self.vector_constant(0)
    }

    /// A VGPR holding `c`, written once per machine block (see
    /// `vector_constants`); zeros are remembered in `zero_vgprs`.
    pub(super) fn vector_constant(&mut self, c: u32) -> ra::VReg {
        if let Some(&v) = self.vector_constants.get(&(self.cur, c)) {
            return v;
        }
        let v = self.vreg(Class::Vgpr);
        self.emit(Opcode::v_mov_b32, &[Dst::R(v)], &[Src::Imm(c)], |_| {});
        self.vector_constants.insert((self.cur, c), v);
        if c == 0 {
            self.zero_vgprs.insert(v);
        }
        v
    }

    /// An SGPR holding the literal `c`, written once per machine block
    /// (`scalar_literals`).
    fn scalar_literal(&mut self, c: u32) -> ra::VReg {
        if let Some(&s) = self.scalar_literals.get(&(self.cur, c)) {
            return s;
        }
        let s = self.vreg(Class::Sgpr);
        self.emit(Opcode::s_mov_b32, &[Dst::R(s)], &[Src::Imm(c)], |_| {});
        self.scalar_literals.insert((self.cur, c), s);
        s
    }

    /// A VGPR holding a uniform source (an SGPR or a half of an SGPR pair),
    /// copied once per block (see `vector_copies`); constants go through
    /// [`Isel::vector_constant`].
    pub(super) fn vector_copy(&mut self, src: Src) -> ra::VReg {
        if let Src::Imm(c) = src {
            return self.vector_constant(c);
        }
        if let Some(&v) = self.vector_copies.get(&(self.cur, src)) {
            return v;
        }
        let v = self.vreg(Class::Vgpr);
        self.emit(Opcode::v_mov_b32, &[Dst::R(v)], &[src], |_| {});
        self.vector_copies.insert((self.cur, src), v);
        v
    }

    fn addend_vgpr(&mut self, a: Addend) -> ra::VReg {
        match a {
            Addend::R(v) => v,
            Addend::Half(..) => self.vector_copy(a.src()),
        }
    }

    /// A VGPR source, or the inline constant 0 for one [`Isel::zero_vgpr`] wrote.
    pub(super) fn known_zero(&self, r: ra::VReg) -> Src {
        if self.zero_vgprs.contains(&r) {
            Src::Imm(0)
        } else {
            Src::R(r)
        }
    }

    /// An i64 source of a VOP3 instruction: an inline constant (-16..=64,
    /// which the hardware sign-extends to 64 bits) as itself, else as
    /// [`Isel::wide_src`].
    pub(super) fn i64_src(&mut self, l: &Lowered, scalars: &mut u32) -> Result<Src, Diagnostic> {
        if let Lowered::Imm(bits) = *l {
            if inline_i64(bits) {
                return Ok(Src::Imm(bits as u32));
            }
        }
        self.wide_src(l, scalars)
    }

    /// Scalar sources a VALU instruction may read (the constant bus).
    pub(super) fn constant_bus(&self) -> u32 {
        match self.target.gpu.generation() {
            isa::Generation::Gfx9 => 1,
            isa::Generation::Gfx11 => 2,
        }
    }

    /// The value as a uniform SGPR pair.
    fn to_s64(&mut self, l: &Lowered) -> Result<ra::VReg, Diagnostic> {
        Ok(match *l {
            Lowered::S64(p) => p,
            Lowered::Imm(bits) => {
                if let Some(&d) = self.scalar_pairs.get(&(self.cur, bits)) {
                    return Ok(d);
                }
                // Both halves written in place (no pair made from two SGPRs).
                let d = self.vreg(Class::SgprPair);
                self.emit_seq(&[
                    (Opcode::s_mov_b32, &[Dst::Half(d, 0)], &[Src::Imm(bits as u32)]),
                    (Opcode::s_mov_b32, &[Dst::Half(d, 1)], &[Src::Imm((bits >> 32) as u32)]),
                ]);
                self.scalar_pairs.insert((self.cur, bits), d);
                d
            }
            // A value uniform by analysis that lives in VGPRs (a 64-bit multiply,
            // a folded address): every lane holds it, the first one is read.
            Lowered::V64(..) | Lowered::Addr { .. } | Lowered::VSum { .. } => {
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
            let (sa, sb) = (self.compare_src(a)?, self.compare_src(b)?);
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

    /// A source of a deferred compare ([`Lowered::ScalarCmp`]): an SGPR, an
    /// SGPR pair (the 64-bit equalities) or a constant.
    pub(super) fn compare_src(&mut self, l: &Lowered) -> Result<Src, Diagnostic> {
        match *l {
            Lowered::S64(p) => Ok(Src::R(p)),
            _ => self.scalar_src(l),
        }
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
            let (sa, sb) = (self.compare_src(a)?, self.compare_src(b)?);
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
            Lowered::Mask(_) | Lowered::LdsAddr { .. } => Src::R(self.to_v(l)?),
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
        let mut order: smallvec::SmallVec<[Lowered; 3]> = srcs.iter().cloned().collect();
        let is_vgpr = |l: &Lowered| matches!(l, Lowered::V(_));
        if !vop3 && order.len() == 2 && commutative && is_vgpr(&order[0]) && !is_vgpr(&order[1]) {
            order.swap(0, 1);
        }
        let mut srcs_out: smallvec::SmallVec<[Src; 3]> = smallvec::SmallVec::new();
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
                // gfx9 VOP3: a literal the block has not put in a VGPR yet
                // goes to an SGPR (the one scalar source), as llc-22 does:
                // one instruction either way, and no VGPR.
                Lowered::Imm(bits) if vop3 && !gfx11 && scalar_budget > 0 && !self.vector_constants.contains_key(&(self.cur, bits as u32)) => {
                    scalar_budget -= 1;
                    let s = self.scalar_literal(bits as u32);
                    scalar_seen = Some(s);
                    Src::R(s)
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
        let d = self.vreg(Class::Vgpr);
        self.valu(Opcode::v_cvt_f32_f16, d, &[a], false)?;
        Ok(Lowered::V(d))
    }

    /// An f32 value rounded to f16 (to nearest even), in the low 16 bits.
    fn f32_to_f16(&mut self, a: Lowered) -> Result<Lowered, Diagnostic> {
        if let Lowered::Imm(bits) = a {
            return Ok(Lowered::Imm(u64::from(crate::mir::float::f32_to_f16(f32::from_bits(bits as u32)))));
        }
        let d = self.vreg(Class::Vgpr);
        self.valu(Opcode::v_cvt_f16_f32, d, &[a], false)?;
        Ok(Lowered::V(d))
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
                let mut scalars = self.constant_bus();
                let (a, b, c) = (self.f64_src(&a, &mut scalars)?, self.f64_src(&b, &mut scalars)?, self.f64_src(&c, &mut scalars)?);
                let (lo, hi) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
                self.emit(Opcode::v_fma_f64, &[Dst::VPair(lo, hi)], &[a, b, c], |_| {});
                self.set(result.unwrap(), Lowered::V64(lo, hi));
            }
            Op::Fma { ty: Type::F16, a, b, c } => {
                let (a, b, c) = (self.lowered(a), self.lowered(b), self.lowered(c));
                let l = self.packed16(Opcode::v_pk_fma_f16, &[a, b, c], 0)?;
                self.set(result.unwrap(), l);
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
            Op::Ternary { op, ty, a, b, c } => {
                let opcode = match op {
                    crate::mir::TernOp::FshR => Opcode::v_alignbit_b32,
                    crate::mir::TernOp::Mad24S => Opcode::v_mad_i32_i24,
                    crate::mir::TernOp::Mad24U => Opcode::v_mad_u32_u24,
                    crate::mir::TernOp::FshL => return Err(self.error("internal: fshl is rewritten by legalize")),
                };
                if *ty != Type::I32 {
                    return Err(self.error(format!("internal: '{}' on {ty} is rewritten by legalize", op.mnemonic())));
                }
                let (a, b, c) = (self.lowered(a), self.lowered(b), self.lowered(c));
                let d = self.vreg(Class::Vgpr);
                self.valu(opcode, d, &[a, b, c], false)?;
                self.set(result.unwrap(), Lowered::V(d));
            }
            Op::Icmp { pred, ty, lhs, rhs } => {
                let l = self.icmp(*pred, ty, lhs, rhs, divergent_result)?;
                self.set(result.unwrap(), l);
            }
            Op::Fcmp { pred, ty, lhs, rhs } if *ty == Type::F64 => {
                let (a, b) = (self.lowered(lhs), self.lowered(rhs));
                // Constants and uniform operands as inline constants or SGPR
                // pairs, as far as the constant bus allows.
                let mut scalars = self.constant_bus();
                let (sa, sb) = (self.f64_src(&a, &mut scalars)?, self.f64_src(&b, &mut scalars)?);
                let m = self.vreg(self.mask_class());
                self.emit(fcmp64_opcode(*pred), &[Dst::R(m)], &[sa, sb], |i| i.e64 = true);
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
            Op::Load { ty, ptr, align, volatile } => {
                self.volatile_access = *volatile;
                let l = self.load(ty, ptr, *align, divergent_result);
                self.volatile_access = false;
                self.set(result.unwrap(), l?);
                if *volatile {
                    self.volatile_done();
                }
            }
            Op::Store { ty, value, ptr, align, volatile } => {
                self.volatile_access = *volatile;
                let stored = self.store(ty, value, ptr, *align);
                self.volatile_access = false;
                stored?;
                if *volatile {
                    self.volatile_done();
                }
            }
            Op::Fence { order, scope } => self.fence(*order, *scope),
            Op::Wave { op, ty, args } => {
                let l = self.wave_op(*op, ty, args)?;
                self.set(result.unwrap(), l);
            }
            Op::PtrAdd { ptr, offset } => {
                let fold = result.is_some_and(|r| self.lds_folded.contains(&r) || self.global_folded.contains(&r));
                let l = self.ptradd(ptr, offset, divergent_result, fold)?;
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
            // An execution and memory barrier of the work-group: OpenCL's
            // barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE), as a
            // work-group release, s_barrier and a work-group acquire (gfx11's
            // L0 caches are per CU, and a work-group spans the two of a WGP).
            Op::Barrier => {
                self.release(MemScope::Workgroup);
                self.emit(Opcode::s_barrier, &[], &[], |_| {});
                self.acquire(MemScope::Workgroup);
            }
            Op::DataAddr { name, .. } => {
                let d = self.vreg(Class::SgprPair);
                self.push(MInst { kind: MKind::SymbolAddress(name.clone()), ops: vec![ra::Operand::reg_def(d)] });
                self.set(result.unwrap(), Lowered::S64(d));
            }
            Op::DynamicLds => {
                // Right after the kernel's lds_slots, 16-byte aligned; the
                // static size reported is that offset, so the launch's dynamic
                // bytes start exactly there.
                let base = static_lds_end(self.func).div_ceil(16) * 16;
                self.set(result.unwrap(), Lowered::Imm(base));
            }
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
                // Locals are 16-byte aligned, as the stack is; a slot aligned
                // more gets the slack and its address is rounded up at run time.
                let padded = u64::from(*size) + u64::from(align.saturating_sub(16));
                if padded > u64::from(super::expand::MAX_FRAME_BYTES) {
                    return Err(self.error(format!("a stack slot of {size} bytes (align {align}) is larger than the {} bytes per lane a frame may have", super::expand::MAX_FRAME_BYTES)));
                }
                let local = self.new_local(padded as u32);
                let mut l = self.local_pointer(local)?;
                if *align <= 16 {
                    self.slot_locals.insert(inst.result.expect("a stack slot has a result"), local);
                }
                if *align > 16 {
                    let bumped = self.binary32(BinOp::Add, l, Lowered::Imm(u64::from(align - 1)), false)?;
                    l = self.binary32(BinOp::And, bumped, Lowered::Imm(u64::from(!(align - 1))), false)?;
                }
                self.set(inst.result.expect("a stack slot has a result"), l);
            }
            Op::Call { callee, args } => self.call(callee, args, result)?,
            Op::AtomicRmw { op, ty, ptr, value, sync } => {
                if sync.order.releases() {
                    self.release(sync.scope);
                }
                let returns = result.is_some_and(|r| self.mir_uses[r.0 as usize] > 0);
                let l = self.atomic(Some(*op), ty, ptr, value, None, *sync, returns)?;
                self.set(result.unwrap(), l);
                if sync.order.acquires() {
                    self.acquire(sync.scope);
                }
            }
            Op::CmpXchg { ty, ptr, expected, new, sync } => {
                if sync.order.releases() {
                    self.release(sync.scope);
                }
                let l = self.atomic(None, ty, ptr, new, Some(expected), *sync, true)?;
                self.set(result.unwrap(), l);
                if sync.order.acquires() {
                    self.acquire(sync.scope);
                }
            }
        }
        Ok(())
    }

}

/// True if the value lives in VGPRs or is a lane mask: operations on it must use
/// the vector unit even when the result is uniform (a uniform value computed by
/// a vector-only instruction, such as a float conversion, stays in a VGPR).
fn in_vector_registers(l: &Lowered) -> bool {
    match l {
        Lowered::V(_) | Lowered::V64(..) | Lowered::Mask(_) | Lowered::Addr { .. } | Lowered::LdsAddr { .. } | Lowered::VmemAddr { .. } | Lowered::VSum { .. } => true,
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

/// Whether any function of the module casts a private pointer to flat (so
/// that flat accesses may reach private memory).
fn makes_private_generic(module: &Module) -> bool {
    module.functions.iter().flat_map(|f| &f.blocks).flat_map(|b| &b.insts).any(|i| {
        matches!(&i.op, Op::Cast { op: CastOp::AddrSpaceCast, from: Type::Ptr(AddrSpace::Private), .. })
    })
}

/// The end of a kernel's `lds_slot`s, laid out in entry-block order as
/// selection allocates them.
fn static_lds_end(func: &Function) -> u64 {
    let mut end = 0u64;
    for inst in func.blocks.first().map(|b| b.insts.as_slice()).unwrap_or(&[]) {
        if let Op::LdsSlot { size, align } = inst.op {
            end = end.div_ceil(u64::from(align)) * u64::from(align) + u64::from(size);
        }
    }
    end
}

/// The i64 products (by their operands) read once, by an add whose other
/// operand is a half of a 64-bit value zero-extended, or a sum of two: the
/// column sums of a 64-bit high product (`legalize::mulhi_u64`), each one
/// multiply-add. Other adds of products (addresses, division by constants)
/// keep their own selection, which is shorter there.
fn fusable_products(func: &Function, wide_ext: &HashMap<Value, (Operand, bool)>, uses: &[u32]) -> HashMap<Value, (Operand, Operand)> {
    let insts = || func.blocks.iter().flat_map(|b| &b.insts);
    let halves: hashbrown::HashSet<Value> = insts().filter_map(|i| matches!(i.op, Op::Cast { op: CastOp::Trunc, from: Type::I64, to: Type::I32, .. }).then_some(i.result).flatten()).collect();
    let zext = |o: &Operand| matches!(o, Operand::Value(v) if matches!(wide_ext.get(v), Some((Operand::Value(h), false)) if halves.contains(h)));
    let mut products = HashMap::new();
    let mut zext_sums = hashbrown::HashSet::new();
    for i in insts() {
        match (&i.op, i.result) {
            (Op::Binary { op: BinOp::Mul, ty: Type::I64, lhs, rhs }, Some(r)) if uses[r.0 as usize] == 1 => {
                products.insert(r, (lhs.clone(), rhs.clone()));
            }
            (Op::Binary { op: BinOp::Add, ty: Type::I64, lhs, rhs }, Some(r)) if zext(lhs) && zext(rhs) => {
                zext_sums.insert(r);
            }
            _ => {}
        }
    }
    let mut fused = HashMap::new();
    for i in insts() {
        let Op::Binary { op: BinOp::Add, ty: Type::I64, lhs, rhs } = &i.op else { continue };
        for (p, addend) in [(lhs, rhs), (rhs, lhs)] {
            let column = zext(addend) || matches!(addend, Operand::Value(v) if zext_sums.contains(v));
            if let (Operand::Value(pv), true) = (p, column) {
                if let Some(ops) = products.get(pv) {
                    fused.insert(*pv, ops.clone());
                }
            }
        }
    }
    fused
}

/// Which kernel inputs a function uses (so that only those are enabled).
fn kernel_inputs(func: &Function, callee_uses: &HashMap<String, Vec<ImplicitInput>>) -> KernelInputs {
    let mut inputs = KernelInputs::default();
    // Also set below for the hidden arguments (read through this pointer).
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
                        ImplicitInput::ImplicitArgPtr => inputs.kernarg_segment_ptr = true,
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
                    hidden if hidden.reads_hidden_args() => inputs.kernarg_segment_ptr = true,
                    other => unreachable!("{other:?} reads no hidden argument but has no input of its own"),
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
#[allow(clippy::too_many_arguments)]
pub fn select(
    module: &Module,
    functions: &HashMap<&str, &Function>,
    callee_uses: &HashMap<String, Vec<ImplicitInput>>,
    callee_clobbers: &HashMap<String, u32>,
    func: &Function,
    uniformity: &Uniformity,
    structure: &Structure,
    target: Target,
    code_object_version: u32,
    scratch: bool,
) -> Result<Selected, Diagnostics> {
    let has_calls = func.blocks.iter().any(|b| b.insts.iter().any(|i| matches!(i.op, Op::Call { .. })));
    let mir_uses = crate::opt::rewrite::use_counts(func);
    let device = func.kind == FuncKind::Device;
    let mut inputs = if device { KernelInputs::default() } else { kernel_inputs(func, callee_uses) };
    inputs.uses_scratch = scratch;
    // Flat accesses to private memory need FLAT_SCRATCH, which gfx90a kernels
    // set from the flat scratch init SGPRs (architected elsewhere).
    inputs.flat_scratch_init = !device && scratch && !target.gpu.has_architected_flat_scratch() && makes_private_generic(module);
    let state = kernel::initial_state(target, &inputs);
    let arg_types: Vec<Type> = func.params.iter().map(|p| func.value_type(p.value).clone()).collect();
    let layout = kernarg::layout(&arg_types, code_object_version);
    let mut isel = Isel {
        functions,
        callee_uses,
        callee_clobbers,
        ret_locations: Vec::new(),
        entry_prologue_end: None,
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
        implicit_args: None,
        code_object_version,
        dispatch_ptr: None,
        workgroup_id: [None; 3],
        tid: None,
        lds_size: 0,
        deferred_compares: deferred_compares(func, &mir_uses),
        inst_ref: None,
        refusals: Vec::new(),
        volatile_access: false,
        scaled_ext: HashMap::new(),
        mul_ext: HashMap::new(),
        shifted_offsets: hashbrown::HashMap::new(),
        mir_defs: crate::opt::rewrite::definitions(func),
        mir_uses,
        private_offsets: HashMap::new(),
        slot_locals: HashMap::new(),
        scalar_pairs: hashbrown::HashMap::new(),
        zero_vgprs: hashbrown::HashSet::new(),
        pair_defs: hashbrown::HashSet::new(),
        vector_constants: hashbrown::HashMap::new(),
        scalar_literals: hashbrown::HashMap::new(),
        vector_copies: hashbrown::HashMap::new(),
        packet_words: hashbrown::HashMap::new(),
        lds_folded: memory::lds_folded_pointers(func, structure),
        global_folded: memory::global_folded_pointers(func),
        wide_ext: func
            .blocks
            .iter()
            .flat_map(|b| &b.insts)
            .filter_map(|i| match (&i.op, i.result) {
                (Op::Cast { op: op @ (CastOp::ZExt | CastOp::SExt), from: Type::I32, arg, to: Type::I64 }, Some(r)) => Some((r, (arg.clone(), *op == CastOp::SExt))),
                _ => None,
            })
            .collect(),
    };
    isel.scaled_ext = func
        .blocks
        .iter()
        .flat_map(|b| &b.insts)
        .filter_map(|i| match (&i.op, i.result) {
            (Op::Binary { op: BinOp::Shl, ty: Type::I64, lhs: Operand::Value(v), rhs: Operand::Const(k) }, Some(r)) if k.bits <= 6 => {
                isel.wide_ext.get(v).map(|(x, signed)| (r, (x.clone(), k.bits as u32, *signed)))
            }
            _ => None,
        })
        .collect();
    isel.mul_ext = fusable_products(func, &isel.wide_ext, &isel.mir_uses);
    isel.private_offsets = func
        .blocks
        .iter()
        .flat_map(|b| &b.insts)
        .filter_map(|i| match (&i.op, i.result) {
            (Op::PtrAdd { ptr, offset: Operand::Const(c) }, Some(r)) if *func.operand_type(ptr) == Type::Ptr(AddrSpace::Private) => {
                let bytes = if c.ty == Type::I64 { c.bits as i64 } else { c.bits as u32 as i32 as i64 };
                (1..65536).contains(&bytes).then(|| (r, (ptr.clone(), bytes as u32)))
            }
            _ => None,
        })
        .collect();
    let lowered = super::lower_cf::lower_function(&mut isel_handle(&mut isel), &layout, &state);
    if !isel.refusals.is_empty() {
        let mut all = std::mem::take(&mut isel.refusals);
        all.extend(lowered.err());
        return Err(Diagnostics(all));
    }
    let variables = lowered?;
    // With dynamic LDS, the static size covers the alignment up to where it
    // starts (the runtime puts the launch's bytes right after it).
    let uses_dynamic_lds = func.blocks.iter().flat_map(|b| &b.insts).any(|i| matches!(i.op, Op::DynamicLds));
    let lds_size = if uses_dynamic_lds { isel.lds_size.div_ceil(16) * 16 } else { isel.lds_size };
    let mask_class = isel.mask_class();
    let wave64 = isel.wave64();
    if let Some(end) = isel.entry_prologue_end {
        call::sink_entry_loads(&mut isel.blocks, end);
    }
    if !device {
        let bases: Vec<ra::VReg> = isel.kernarg_ptr.into_iter().chain(isel.dispatch_ptr).collect();
        call::hoist_entry_scalar_loads(&mut isel.blocks, &bases);
        // Only a kernel without calls renumbers its pair units into quads
        // (a calling kernel's units keep fixed places, so the quad would
        // only hold two pairs live at once and split again).
        if !has_calls {
            call::pair_entry_scalar_loads(&mut isel.blocks, &bases);
        }
    }
    memory::rebase_lds_reads(&mut isel.blocks, &mut isel.vc);
    memory::pair_lds_reads(&mut isel.blocks);
    memory::pair_lds_writes(&mut isel.blocks);
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
            vcode.flat_scratch_init = state.slot(SgprInput::FlatScratchInit).map(|s| s.first);
            match (rsrc, offset) {
                (Some(rsrc), Some(wave_offset)) => Scratch::Buffer { rsrc, wave_offset },
                _ => return Err(err(func, None, "internal error: scratch inputs missing from the kernel's initial state".into()).into()),
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
    /// Selects one instruction. A refusal is recorded and its result gets
    /// fresh registers of the right shape, so that selection can go on.
    pub fn instruction(&mut self, inst: &'a Inst) -> Result<(), Diagnostic> {
        if let Err(d) = self.isel.instruction(inst) {
            self.isel.refusals.push(d);
            if let Some(r) = inst.result {
                self.define_value_vars(r)?;
            }
        }
        Ok(())
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
                // Never a block's parameter or live out of its block.
                Lowered::Imm(..) | Lowered::Addr { .. } | Lowered::LdsAddr { .. } | Lowered::VmemAddr { .. } | Lowered::VSum { .. } | Lowered::ScalarCmp { .. } => {}
            }
        }
        let mut out = Vec::new();
        if let Some(l) = &self.isel.values[value.0 as usize] {
            flatten(l, &mut out);
        }
        out
    }

    /// The registers a value's lowering reads when it is used, and the MIR
    /// values whose lowerings it looks up then (an LDS address's root).
    pub fn lowering_reads(&self, value: Value) -> (Vec<ra::VReg>, Vec<Value>) {
        fn walk(l: &Lowered, regs: &mut Vec<ra::VReg>, roots: &mut Vec<Value>) {
            let addend = |a: &Addend| match *a {
                Addend::R(v) | Addend::Half(v, _) => v,
            };
            match l {
                Lowered::S(v) | Lowered::S64(v) | Lowered::V(v) | Lowered::Bool(v) | Lowered::Mask(v) => regs.push(*v),
                Lowered::V64(a, b) => regs.extend([*a, *b]),
                Lowered::Agg(parts) => parts.iter().for_each(|p| walk(p, regs, roots)),
                Lowered::Addr { base, offset, .. } => regs.extend([*base, *offset]),
                Lowered::VmemAddr { base, .. } => walk(base, regs, roots),
                Lowered::VSum { lo, hi, add } => regs.extend([*lo, *hi, addend(&add[0]), addend(&add[1])]),
                Lowered::ScalarCmp { a, b, .. } => {
                    walk(a, regs, roots);
                    walk(b, regs, roots);
                }
                Lowered::LdsAddr { root, .. } => roots.push(*root),
                Lowered::Imm(..) => {}
            }
        }
        let (mut regs, mut roots) = (Vec::new(), Vec::new());
        if let Some(l) = &self.isel.values[value.0 as usize] {
            walk(l, &mut regs, &mut roots);
        }
        (regs, roots)
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
            let addend = |isel: &mut Isel<'_>, a: &Addend| match *a {
                Addend::R(v) => Addend::R(isel.copy_of(v)),
                Addend::Half(p, h) => Addend::Half(isel.copy_of(p), h),
            };
            match l {
                Lowered::S(v) => Lowered::S(isel.copy_of(*v)),
                Lowered::S64(v) => Lowered::S64(isel.copy_of(*v)),
                Lowered::V(v) => Lowered::V(isel.copy_of(*v)),
                Lowered::Bool(v) => Lowered::Bool(isel.copy_of(*v)),
                Lowered::Mask(v) => Lowered::Mask(isel.copy_of(*v)),
                Lowered::V64(a, b) => Lowered::V64(isel.copy_of(*a), isel.copy_of(*b)),
                Lowered::Agg(parts) => Lowered::Agg(parts.iter().map(|p| copy(isel, p)).collect()),
                Lowered::Addr { base, offset, imm, zext } => Lowered::Addr { base: isel.copy_of(*base), offset: isel.copy_of(*offset), imm: *imm, zext: *zext },
                Lowered::VmemAddr { base, imm } => Lowered::VmemAddr { base: Box::new(copy(isel, base)), imm: *imm },
                Lowered::VSum { lo, hi, add } => {
                    let (lo, hi) = (isel.copy_of(*lo), isel.copy_of(*hi));
                    Lowered::VSum { lo, hi, add: [addend(isel, &add[0]), addend(isel, &add[1])] }
                }
                Lowered::ScalarCmp { op, a, b } => Lowered::ScalarCmp { op: *op, a: Box::new(copy(isel, a)), b: Box::new(copy(isel, b)) },
                // The root's lowering is looked up at the use: the caller
                // snapshots the root itself (`lowering_reads`).
                Lowered::Imm(..) | Lowered::LdsAddr { .. } => l.clone(),
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
        // Per virtual register (they are numbered densely): the first block
        // defining it, and whether it is already listed.
        const NONE: u32 = u32::MAX;
        let mut def_block: Vec<u32> = vec![NONE; self.isel.vc.vreg_classes.len()];
        for (b, block) in self.isel.blocks.iter().enumerate() {
            for m in &block.insts {
                for o in &m.ops {
                    if o.kind() == ra::OperandKind::Def && def_block[o.vreg().vreg()] == NONE {
                        def_block[o.vreg().vreg()] = b as u32;
                    }
                }
            }
        }
        let mut out: HashMap<usize, Vec<ra::VReg>> = HashMap::new();
        let mut seen = vec![false; def_block.len()];
        for (b, block) in self.isel.blocks.iter().enumerate() {
            let uses = block.insts.iter().flat_map(|m| m.ops.iter().filter(|o| o.kind() == ra::OperandKind::Use).map(|o| o.vreg())).chain(block.succ_args.iter().flatten().copied());
            for v in uses {
                let d = def_block.get(v.vreg()).copied().unwrap_or(NONE);
                if d != NONE && d as usize != b && !seen[v.vreg()] {
                    seen[v.vreg()] = true;
                    out.entry(d as usize).or_default().push(v);
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
            Lowered::Imm(..) | Lowered::Addr { .. } | Lowered::LdsAddr { .. } | Lowered::VmemAddr { .. } | Lowered::VSum { .. } | Lowered::ScalarCmp { .. } => return Err(isel.error("internal: parameters are registers")),
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
                    Lowered::S64(p) => ops.push(ra::Operand::reg_use(p)),
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
            // moves placed on it must run with all lanes enabled. Not where
            // the block runs with every lane on, changes no EXEC and branches
            // on a uniform condition (a uniform loop's back edge): its edges
            // run as it does.
            let uniform_branch = matches!(blocks[b].insts.last().map(|m| &m.kind), Some(MKind::Branch(Branch::IfUniform | Branch::IfCompare { .. })));
            let keeps_exec = blocks[b].insts.iter().all(|m| match &m.kind {
                MKind::Exec(_) | MKind::Call { .. } | MKind::WaveScan(..) => false,
                MKind::Real { inst, .. } => !inst.defs.iter().any(|d| matches!(d, isa::Operand::Reg(r) if r.base == isa::PhysReg::EXEC)) && !inst.op.info().name.starts_with("v_cmpx"),
                MKind::Seq(parts) => parts.iter().all(|(inst, _)| !inst.defs.iter().any(|d| matches!(d, isa::Operand::Reg(r) if r.base == isa::PhysReg::EXEC))),
                _ => true,
            });
            let partial = blocks[b].partial_exec || !uniform_branch || !keeps_exec;
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


/// A 64-bit constant the hardware has inline (-16..=64, sign-extended).
pub(super) fn inline_i64(bits: u64) -> bool {
    (-16..=64).contains(&(bits as i64))
}

/// Uniform `icmp`s whose only use is the branch at the end of their own
/// block or the condition of a `select` in it: the compare is made where it
/// is used, which then reads SCC instead of a 0/1 SGPR tested again.
fn deferred_compares(func: &Function, uses: &[u32]) -> hashbrown::HashSet<Value> {
    let mut set = hashbrown::HashSet::new();
    for block in &func.blocks {
        let select_conds = block.insts.iter().filter_map(|i| match &i.op {
            Op::Select { cond: Operand::Value(c), .. } => Some(*c),
            _ => None,
        });
        let branch_cond = match &block.term {
            crate::mir::Terminator::BrIf { cond: Operand::Value(c), .. } => Some(*c),
            _ => None,
        };
        for c in select_conds.chain(branch_cond) {
            // 32-bit compares, and the 64-bit equalities SOPC has.
            let defined_here = block.insts.iter().any(|i| {
                i.result == Some(c)
                    && matches!(i.op, Op::Icmp { ref ty, pred, .. } if *ty == Type::I32 || (ty.bits() == 64 && matches!(pred, IntPred::Eq | IntPred::Ne)))
            });
            if defined_here && uses[c.0 as usize] == 1 {
                set.insert(c);
            }
        }
    }
    set
}
