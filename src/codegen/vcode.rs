//! VCode: machine instructions over virtual registers, in a machine CFG, and the
//! one place where amdgpu-cg talks to regalloc2 (the `regalloc2::Function` impl).
//!
//! Register classes (docs/regalloc.md explains the partition):
//!
//! | class | regalloc2 class | physical registers | holds |
//! | --- | --- | --- | --- |
//! | [`Class::Sgpr`] | Int | s0..s63 (one register each) | uniform 32-bit values, wave32 lane masks |
//! | [`Class::SgprPair`] | Vector | s[64:65]..s[100:101] (aligned pairs) | uniform 64-bit values, wave64 lane masks |
//! | [`Class::Vgpr`] | Float | v0..v63 | divergent 32-bit values (64-bit ones as two) |
//!
//! regalloc2 has three classes of at most 64 registers and no tuples, so an SGPR
//! pair is one allocation unit in a class of its own, and a divergent 64-bit value
//! is two VGPR values that meet in a reserved "window" pair only inside the
//! expansion of an instruction that needs a register pair.

use regalloc2 as ra;

use crate::isa;

/// A virtual register's class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    Sgpr,
    SgprPair,
    Vgpr,
}

impl Class {
    pub fn ra(self) -> ra::RegClass {
        match self {
            Class::Sgpr => ra::RegClass::Int,
            Class::SgprPair => ra::RegClass::Vector,
            Class::Vgpr => ra::RegClass::Float,
        }
    }
}

/// First SGPR of the pair class (s64) and number of pair units (s64..s101).
pub const SGPR_PAIR_BASE: u16 = 64;
/// Pair units regalloc2 may allocate freely.
pub const SGPR_PAIR_UNITS: u16 = 17;
/// Pair units reserved for kernel inputs that arrive as SGPR pairs (kernarg and
/// dispatch pointers): defined with fixed constraints, placed where the hardware
/// puts them.
pub const SGPR_PAIR_INPUT_UNITS: [u16; 2] = [17, 18];

/// The physical register (first of the tuple) a regalloc2 `PReg` stands for.
pub fn preg_to_phys(preg: ra::PReg) -> isa::Reg {
    match preg.class() {
        ra::RegClass::Int => isa::Reg::s(preg.hw_enc() as u16, 1),
        ra::RegClass::Vector => isa::Reg::s(SGPR_PAIR_BASE + 2 * preg.hw_enc() as u16, 2),
        ra::RegClass::Float => isa::Reg::v(preg.hw_enc() as u16, 1),
    }
}

/// The regalloc2 `PReg` for SGPR n (Int class).
pub fn sgpr_preg(n: u16) -> ra::PReg {
    ra::PReg::new(n as usize, ra::RegClass::Int)
}

/// The regalloc2 `PReg` for VGPR n (Float class).
pub fn vgpr_preg(n: u16) -> ra::PReg {
    ra::PReg::new(n as usize, ra::RegClass::Float)
}

/// Where an allocated operand goes in a machine instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// `inst.defs[i]`
    Def(u8),
    /// `inst.uses[i]`
    Use(u8),
}

/// How a regalloc operand (by index in [`MInst::ops`]) fills a slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fill {
    /// The whole allocation (a 32-bit register or an SGPR pair).
    Whole(u8),
    /// One half (0 = low) of an SGPR pair allocation.
    Half(u8, u8),
    /// Two VGPR allocations (low, high) that the instruction needs as an aligned
    /// pair: copied into window `w` before (uses) or out of it after (defs).
    VPair { lo: u8, hi: u8, window: u8 },
    /// Four VGPR allocations the instruction needs as one aligned 128-bit tuple
    /// (the {new, expected} data of a 64-bit compare-and-swap): copied into
    /// windows `w` and `w + 1` (consecutive) before it. Uses only.
    VQuad { regs: [u8; 4], window: u8 },
    /// A 64-bit address `base + sext(offset)` (base: an SGPR pair allocation,
    /// offset: a VGPR allocation) computed into window `w` by one
    /// `v_mad_i64_i32 w, tmp, offset, 1, base` right before the instruction.
    Address { base: u8, offset: u8, window: u8 },
    /// A 64-bit address `{lo, hi} + {add[0], add[1]}` (VGPR allocations
    /// plus two halves: a whole allocation, or with `Some(h)` half `h` of
    /// an SGPR pair) computed into window `w` by a carry add right before
    /// the instruction.
    Sum { lo: u8, hi: u8, add: [(u8, Option<u8>); 2], window: u8 },
    /// The first `n` of four VGPR allocations, which a multi-dword global
    /// load or store (`_dwordx2` to `_dwordx4`) reads or writes as
    /// consecutive registers. Where the allocation put them consecutively
    /// (from an even register on gfx90a and gfx942) the instruction uses
    /// them in place; otherwise expansion splits it into `n` dword accesses
    /// at consecutive offsets (never copies). Defs are early, so a split
    /// load cannot overwrite the address the next part reads. Also two SGPR
    /// pair allocations (`n` = 2) that an `s_load_dwordx4` writes as one
    /// 4-aligned quad, split into two `s_load_dwordx2` otherwise.
    Tuple { regs: [u8; 4], n: u8 },
}

/// A machine instruction over virtual registers.
#[derive(Clone, Debug)]
pub struct MInst {
    pub kind: MKind,
    /// What regalloc2 sees.
    pub ops: Vec<ra::Operand>,
}

impl MInst {
    /// No instruction: no operands, no code (what a pass leaves where it
    /// deleted one; the instruction indices of the blocks stay valid).
    pub fn nothing() -> MInst {
        MInst { kind: MKind::Seq(Vec::new()), ops: Vec::new() }
    }

    pub fn is_nothing(&self) -> bool {
        matches!(&self.kind, MKind::Seq(parts) if parts.is_empty())
    }

    /// Whether the instruction changes EXEC (or may: calls, wave scans,
    /// branches), so lanes computed before and after it may differ.
    pub fn changes_exec(&self) -> bool {
        let writes_exec = |inst: &isa::Inst| inst.defs.iter().any(|d| matches!(d, isa::Operand::Reg(r) if r.base == isa::PhysReg::EXEC));
        match &self.kind {
            MKind::Exec(_) | MKind::Call { .. } | MKind::WaveScan(..) | MKind::Branch(_) => true,
            MKind::Real { inst, .. } => writes_exec(inst) || inst.op.info().name.starts_with("v_cmpx"),
            MKind::Seq(parts) => parts.iter().any(|(inst, _)| writes_exec(inst)),
            _ => false,
        }
    }
}

/// The kinds of VCode instructions.
#[derive(Clone, Debug)]
pub enum MKind {
    /// One hardware instruction; register slots are filled from the allocation.
    Real { inst: isa::Inst, fills: Vec<(Slot, Fill)> },
    /// A short sequence of hardware instructions sharing one operand list, for
    /// results assembled by several instructions (both halves of a uniform
    /// 64-bit sum). Defs are early: the sequence may write a result before it
    /// has read every source.
    Seq(Vec<(isa::Inst, Vec<(Slot, Fill)>)>),
    /// `ops[0] = ops[1]` (same class).
    Copy,
    /// Defines `ops[0]` with arbitrary contents (a merge accumulator's start).
    ImplicitDef,
    /// `ops[0] = ops[2]` in the selected lanes, `ops[1]` elsewhere; `ops[0]`
    /// reuses `ops[1]`'s register, so unselected (even inactive) lanes keep their
    /// contents. The selected lanes are the active ones, or with `masked` those of
    /// the lane mask `ops[3]` (its complement with `invert`). `vector`: a VGPR
    /// value; otherwise a lane mask merged bitwise. Implements per-lane merges at
    /// divergent joins and loop exits.
    LaneMerge { vector: bool, masked: bool, invert: bool },
    /// Makes an SGPR pair from two SGPRs: `ops[0] = {ops[1], ops[2]}`.
    MakePair,
    /// A wave reduction or scan (`WaveOp::Reduce`/`InclusiveScan`/
    /// `ExclusiveScan`) on a value of the type: the result (SGPRs for a
    /// reduction, VGPRs for a scan; one per 32-bit piece) then the VGPR
    /// pieces of the source. Expanded in whole-wave mode with three windows
    /// (four for 64 bits) as temporaries (expand.rs, `wave_scan`).
    WaveScan(crate::mir::WaveOp, crate::mir::Type),
    /// Adds lanes to a lane-mask variable (control flow, lower_cf.rs):
    /// `ops[0] = ops[1] | sel`, or with `first` `ops[0] = sel` (no `ops[1]`),
    /// where `sel` is EXEC, `EXEC & c` or `EXEC & ~c` for the lane mask `c`
    /// (the last operand). Without `first`, `ops[0]` reuses `ops[1]`'s register.
    MaskAdd { first: bool, sel: MaskSel },
    /// Sets EXEC from a lane mask: the kinds of EXEC updates control flow needs.
    Exec(ExecOp),
    /// The function's entry: defines the hardware inputs (fixed registers).
    Entry,
    /// A call of `callee`: arguments are fixed uses, results fixed defs, and the
    /// registers the convention lets the callee change are clobbered. `llvm`:
    /// the callee follows LLVM's convention (which also clobbers v32-v39).
    Call { callee: String, clobbers: ra::PRegSet, llvm: bool },
    /// A private (scratch) memory access of `width` bytes (1, 2 or 4) per lane:
    /// `ops[0]` is the data (a VGPR; defined by a load, used by a store) and, for
    /// [`PrivateAt::Pointer`], `ops[1]` the private pointer (a VGPR). Frame
    /// offsets become addresses at expansion, when the frame's size is known.
    Private { store: bool, width: u8, at: PrivateAt },
    /// No code: the registers are clobbered here (regalloc2 moves what is live
    /// out of them first). Before a device function's argument copies: SGPR
    /// pair units overlap argument SGPRs, which regalloc2 cannot see.
    Clobber(ra::PRegSet),
    /// `ops[0]` (an SGPR) = the private pointer to local `offset` of the frame
    /// (from the frame's base, known at expansion).
    LocalAddress(u32),
    /// `ops[0]` (an SGPR pair) = the address of the module's data object
    /// (`s_getpc_b64` and two relocated literals, as llc-22 addresses its
    /// `.rodata`; the code object writer resolves them).
    SymbolAddress(String),
    /// End of a block: jump / conditional branches; arguments for the successors'
    /// block parameters are in `args`.
    Branch(Branch),
}

/// What a [`MKind::Private`] access addresses (offsets in bytes per lane).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrivateAt {
    /// The incoming stack argument area (from the entry SP).
    Incoming(u32),
    /// The function's locals (by-reference argument copies, sret buffers).
    Local(u32),
    /// The outgoing stack argument area of a call (from the SP at the call).
    Outgoing(u32),
    /// `ops[1] + offset`, a private pointer.
    Pointer(u32),
}

impl PrivateAt {
    /// The same place `k` bytes further.
    pub fn plus(self, k: u32) -> PrivateAt {
        match self {
            PrivateAt::Incoming(o) => PrivateAt::Incoming(o + k),
            PrivateAt::Local(o) => PrivateAt::Local(o + k),
            PrivateAt::Outgoing(o) => PrivateAt::Outgoing(o + k),
            PrivateAt::Pointer(o) => PrivateAt::Pointer(o + k),
        }
    }
}

/// The frame of a function, in bytes per lane from its entry SP (from 0 in a
/// kernel): `[incoming arguments][locals][spill slots]`, then the SP for calls
/// (docs/abi.md section 3). Sizes known at selection; spill slots are added by
/// expansion.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Frame {
    /// Incoming stack argument area (16-byte multiple; 0 in kernels).
    pub incoming: u32,
    /// Locals (16-byte multiple).
    pub locals: u32,
}

/// The lanes a [`MKind::MaskAdd`] adds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaskSel {
    /// The active lanes.
    Exec,
    /// The active lanes where `c` is set.
    And,
    /// The active lanes where `c` is clear.
    AndNot,
}

/// EXEC updates (all on the lane-mask register of the wave size).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExecOp {
    /// `ops[0] = exec` (save).
    Save,
    /// `exec = ops[0]` (restore).
    Set,
    /// `exec = ops[0] & ops[1]`.
    And,
    /// `exec = ops[0] & ~ops[1]`.
    AndNot,
    /// `exec &= ops[0]`.
    AndSelf,
    /// `exec &= ~ops[0]`.
    AndNotSelf,
    /// `ops[0] = exec; exec &= ops[1]` (`s_and_saveexec`; `ops[0]` is an
    /// early definition: the instruction writes it before it reads `ops[1]`).
    SaveAndSelf,
}

/// Terminators. Uniform conditions are SGPR booleans (0 or 1).
#[derive(Clone, Debug)]
pub enum Branch {
    /// `s_branch` to successor 0 (or fall through).
    Jump,
    /// Successor 0 if the uniform boolean `ops[0]` is non-zero, else successor 1.
    IfUniform,
    /// Successor 0 if the scalar compare `op` holds, else successor 1. Its two
    /// sources are the constants in `imms` or, in order, the operands.
    IfCompare { op: isa::Opcode, imms: [Option<u32>; 2] },
    /// Successor 0 if EXEC is zero, else successor 1 (`s_cbranch_execz`).
    IfExecZero,
    /// `s_endpgm` (kernels) — also the function end.
    EndProgram,
    /// `s_setpc_b64` to the return address in s[30:31] (device functions); the
    /// operands are the result pieces, in their fixed registers.
    Return,
}

/// A machine block.
#[derive(Clone, Debug, Default)]
pub struct MBlock {
    pub insts: std::ops::Range<usize>,
    pub succs: Vec<ra::Block>,
    pub preds: Vec<ra::Block>,
    pub params: Vec<ra::VReg>,
    /// Arguments for each successor's parameters.
    pub succ_args: Vec<Vec<ra::VReg>>,
    /// Some lanes may be inactive here: regalloc moves must run with all lanes on.
    pub partial_exec: bool,
    /// Name for printing (the MIR block, or a role like `else.3`).
    pub name: String,
}

/// A function in VCode form.
#[derive(Clone, Debug, Default)]
pub struct VCode {
    pub insts: Vec<MInst>,
    pub blocks: Vec<MBlock>,
    pub vreg_classes: Vec<Class>,
    /// Input pair units and the first SGPR of the hardware pair each stands for.
    pub pinned_pairs: Vec<(u16, u16)>,
    /// How registers are laid out (see [`Layout`]).
    pub layout: Layout,
    /// Scratch access for VGPR spills when the kernel was compiled with scratch:
    /// on buffer-scratch targets the scratch V# and the wave's scratch offset
    /// (kept out of register placement); on flat-scratch targets nothing.
    pub scratch: Option<Scratch>,
    /// gfx90a kernels whose module makes private pointers generic: the first
    /// SGPR of the flat scratch init pair, from which the kernel sets
    /// FLAT_SCRATCH (init + wave offset) before anything else.
    pub flat_scratch_init: Option<u16>,
    /// The frame's parts known at selection.
    pub frame: Frame,
    /// Where VGPR spill slots live (docs/regalloc.md).
    pub slot_home: SlotHome,
    /// The target has AGPRs (gfx90a, gfx942): `SlotHome::Spread` may use them.
    pub has_agprs: bool,
    /// (architected VGPRs, VGPRs + AGPRs) a kernel without calls may use:
    /// 256 and 512 (gfx90a, gfx942) or 256 unless an occupancy target or a
    /// VGPR limit asks for less (`codegen::vgpr_budget`); (0, 0) means the
    /// full file.
    pub vgpr_budget: (u16, u16),
    /// A device function's pair windows sit above v31 (saved by its
    /// prologue like any VGPR there) instead of right below v32: set when
    /// more values are live at once than v0-v31 less the windows hold, so
    /// that the function allocates all of v0-v31 (its arguments stay where
    /// they arrive) and saves two VGPRs per window instead of four or more
    /// for values above v31 (`codegen::callee_windows_high`).
    pub callee_windows_high: bool,
    /// A device function under LLVM's convention (`callconv(llvm)`): its
    /// callers may keep values in the lanes of v0-v31 that are off at the
    /// call, which it must therefore preserve (ours clobber every lane).
    pub llvm_convention: bool,
    /// regalloc2 debug labels: (vreg, from, to, label), sorted by vreg. Set
    /// for the allocation that keeps VGPR operands in slots, so that its
    /// output says where each value lives (`regalloc::slot_colors`).
    pub debug_labels: Vec<(ra::VReg, ra::Inst, ra::Inst, u32)>,
}

/// Where regalloc2's VGPR spill slots live. Kernels without calls try each in
/// turn until the slots fit (docs/regalloc.md, "Spill slots").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SlotHome {
    /// Scratch memory (4 bytes per lane each).
    #[default]
    Memory,
    /// VGPRs above the allocated ones; VGPR operands of hardware
    /// instructions may read and write a slot in place.
    Vgprs,
    /// VGPRs above the allocated ones up to the 256 a wave addresses, then
    /// AGPRs (gfx90a, gfx942; `v_accvgpr_write_b32` / `v_accvgpr_read_b32`),
    /// then scratch (when the kernel has it), reached by moves only.
    Spread,
}

impl SlotHome {
    /// Slots are registers (not memory).
    pub fn in_registers(self) -> bool {
        self != SlotHome::Memory
    }
}

/// How a function's registers are laid out, which decides what regalloc2 may use
/// and how its registers become hardware registers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Layout {
    /// Kernels without calls: any register, renumbered densely afterwards.
    #[default]
    Dense,
    /// Kernels that call: registers keep their numbers (a call clobbers v0-v31
    /// and s0-s31 by number); s32-s34 (SP, wave scratch offset, FP) stay free.
    Caller,
    /// Device functions: only registers the amdgpu-cg convention lets a callee
    /// clobber: v0-v31 less room for its pair windows (right above, below v32), s4-s11, SGPR pairs in
    /// s12-s21 and the expansion temporaries in s22-s29. A device function that
    /// calls keeps nothing in registers across its calls (they clobber all of
    /// these): regalloc2 spills those values, SGPRs into lanes of v32 and up
    /// (saved by the prologue), VGPRs to the frame.
    Callee,
}

impl Layout {
    /// First VGPR of the pair windows in a callee whose instructions use the
    /// most windows (four: `v_fma_f64`, `v_div_scale_f64`), v24-v31; a callee
    /// needing fewer allocates more ([`VCode::callee_vgprs`]).
    pub const CALLEE_WINDOWS: u16 = 24;
    /// First SGPR of the pair units in a callee.
    pub const CALLEE_PAIRS: u16 = 12;
    /// First SGPR of the expansion temporaries in a callee.
    pub const CALLEE_TEMPS: u16 = 22;
    /// First SGPR of the pair units in a caller (above every single SGPR).
    pub const CALLER_PAIRS: u16 = 64;
    /// Where a calling kernel keeps the wave's scratch offset (the register the
    /// convention passes it in on gfx90a).
    pub const CALLER_WAVE_OFFSET: u16 = 33;
    /// The stack pointer (SP).
    pub const STACK_POINTER: u16 = 32;
    /// First SGPR of the expansion temporaries in a caller.
    pub const CALLER_TEMPS: u16 = 56;

    /// The registers regalloc2 may use per class (Int, Float, Vector), in the
    /// order it should prefer them.
    pub fn allowed(self, reserved_sgprs: &[u16]) -> [Vec<usize>; 3] {
        let sgprs = |r: std::ops::Range<usize>| r.filter(|n| !reserved_sgprs.contains(&(*n as u16))).collect::<Vec<_>>();
        match self {
            Layout::Dense => [sgprs(0..56), (0..64).collect(), (0..SGPR_PAIR_UNITS as usize).collect()],
            Layout::Caller => {
                let mut ints = sgprs(0..30);
                ints.extend(sgprs(35..56));
                [ints, (0..64).collect(), (0..SGPR_PAIR_UNITS as usize).collect()]
            }
            Layout::Callee => [sgprs(4..12), (0..Self::CALLEE_WINDOWS as usize).collect(), (0..5).collect()],
        }
    }
}

/// How spilled VGPRs reach scratch memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scratch {
    /// `scratch_store_dword off, v, off offset:N` (gfx942, gfx1100).
    Flat,
    /// `buffer_store_dword v, off, s[rsrc:rsrc+3], s_offset offset:N` (gfx90a).
    Buffer { rsrc: u16, wave_offset: u16 },
}

impl VCode {
    /// How many times each virtual register is read: by instruction operands
    /// and as a block argument.
    pub fn use_counts(&self) -> Vec<u32> {
        let mut uses = vec![0u32; self.vreg_classes.len()];
        for op in self.insts.iter().flat_map(|m| &m.ops).filter(|o| o.kind() == ra::OperandKind::Use) {
            uses[op.vreg().vreg()] += 1;
        }
        for v in self.blocks.iter().flat_map(|b| b.succ_args.iter().flatten()) {
            uses[v.vreg()] += 1;
        }
        uses
    }

    /// How many VGPR pair windows the most demanding instruction uses.
    pub fn windows_needed(&self) -> u16 {
        let windows = |fills: &[(Slot, Fill)]| {
            fills
                .iter()
                .filter_map(|(_, f)| match f {
                    Fill::VPair { window, .. } | Fill::Address { window, .. } | Fill::Sum { window, .. } => Some(u16::from(*window) + 1),
                    Fill::VQuad { window, .. } => Some(u16::from(*window) + 2),
                    _ => None,
                })
                .max()
                .unwrap_or(0)
        };
        self.insts
            .iter()
            .map(|m| match &m.kind {
                MKind::Real { fills, .. } => windows(fills),
                MKind::Seq(parts) => parts.iter().map(|(_, f)| windows(f)).max().unwrap_or(0),
                MKind::WaveScan(_, ty) => if ty.bits() == 64 { 4 } else { 3 },
                _ => 0,
            })
            .max()
            .unwrap_or(0)
    }

    /// The VGPRs a device function may allocate below v32: v0-v31 less room
    /// for its windows right below v32, unless they sit above v31
    /// ([`VCode::callee_windows_high`]).
    pub fn callee_vgprs(&self) -> u16 {
        if self.callee_windows_high {
            return 32;
        }
        32 - 2 * self.windows_needed()
    }

    /// Lets a device function's VGPR arguments stay in the registers they
    /// arrive in: selection copies every argument out of its arrival
    /// register first (one it may not allocate, under a window, would
    /// otherwise be overwritten), and regalloc2 does not coalesce copies, so
    /// each costs a move and, with v0-v31 full of arguments, VGPRs above v31
    /// that the prologue saves. An arrival VGPR the function may allocate
    /// needs no copy: its copy's result is renamed to the arrival value and
    /// the copy deleted. Returns how many.
    pub fn elide_arrival_copies(&mut self) -> usize {
        if self.layout != Layout::Callee || self.blocks.is_empty() {
            return 0;
        }
        let allocatable = self.callee_vgprs() as usize;
        let entry = self.blocks[0].insts.clone();
        let mut arrivals: hashbrown::HashSet<ra::VReg> = hashbrown::HashSet::new();
        let mut rename: hashbrown::HashMap<ra::VReg, ra::VReg> = hashbrown::HashMap::new();
        for i in entry {
            match self.insts[i].kind {
                MKind::Entry => {
                    for op in &self.insts[i].ops {
                        if let ra::OperandConstraint::FixedReg(p) = op.constraint() {
                            if p.class() == ra::RegClass::Float && p.hw_enc() < allocatable {
                                arrivals.insert(op.vreg());
                            }
                        }
                    }
                }
                MKind::Copy if arrivals.contains(&self.insts[i].ops[1].vreg()) => {
                    rename.insert(self.insts[i].ops[0].vreg(), self.insts[i].ops[1].vreg());
                    self.insts[i] = MInst::nothing();
                }
                _ => {}
            }
        }
        if rename.is_empty() {
            return 0;
        }
        let renamed = |v: ra::VReg| rename.get(&v).copied().unwrap_or(v);
        for m in &mut self.insts {
            for op in &mut m.ops {
                if rename.contains_key(&op.vreg()) {
                    *op = ra::Operand::new(renamed(op.vreg()), op.constraint(), op.kind(), op.pos());
                }
            }
        }
        for b in &mut self.blocks {
            b.params.iter_mut().for_each(|v| *v = renamed(*v));
            b.succ_args.iter_mut().flatten().for_each(|v| *v = renamed(*v));
        }
        rename.len()
    }

    /// Block order for emission: greedy fall-through chains (each block is
    /// followed by its fall-through successor when that one is not placed yet),
    /// starting with the entry block and then in creation order.
    pub fn layout(&self) -> Vec<usize> {
        let n = self.blocks.len();
        let mut placed = vec![false; n];
        let mut order = Vec::with_capacity(n);
        for start in 0..n {
            let mut b = start;
            while !placed[b] {
                placed[b] = true;
                order.push(b);
                let block = &self.blocks[b];
                let last = &self.insts[block.insts.end - 1];
                let next = match &last.kind {
                    MKind::Branch(Branch::Jump) => block.succs.first(),
                    MKind::Branch(Branch::IfUniform | Branch::IfCompare { .. } | Branch::IfExecZero) => block.succs.get(1),
                    _ => None,
                };
                match next {
                    Some(s) if !placed[s.index()] => b = s.index(),
                    _ => break,
                }
            }
        }
        order
    }
}

impl VCode {
    /// Whether the function has an entry block that nothing branches to,
    /// so it runs first and once.
    pub fn entry_runs_once(&self) -> bool {
        !self.blocks.is_empty() && !self.blocks.iter().any(|b| b.succs.contains(&ra::Block::new(0)))
    }

    /// A new virtual register of `class`.
    pub fn new_vreg(&mut self, class: Class) -> ra::VReg {
        self.vreg_classes.push(class);
        ra::VReg::new(self.vreg_classes.len() - 1, class.ra())
    }

    /// The class of a virtual register.
    pub fn class(&self, v: ra::VReg) -> Class {
        self.vreg_classes[v.vreg()]
    }
}

impl ra::Function for VCode {
    fn num_insts(&self) -> usize {
        self.insts.len()
    }

    fn num_blocks(&self) -> usize {
        self.blocks.len()
    }

    fn entry_block(&self) -> ra::Block {
        ra::Block::new(0)
    }

    fn block_insns(&self, block: ra::Block) -> ra::InstRange {
        let range = &self.blocks[block.index()].insts;
        ra::InstRange::new(ra::Inst::new(range.start), ra::Inst::new(range.end))
    }

    fn block_succs(&self, block: ra::Block) -> &[ra::Block] {
        &self.blocks[block.index()].succs
    }

    fn block_preds(&self, block: ra::Block) -> &[ra::Block] {
        &self.blocks[block.index()].preds
    }

    fn block_params(&self, block: ra::Block) -> &[ra::VReg] {
        &self.blocks[block.index()].params
    }

    fn is_ret(&self, insn: ra::Inst) -> bool {
        matches!(self.insts[insn.index()].kind, MKind::Branch(Branch::EndProgram | Branch::Return))
    }

    fn is_branch(&self, insn: ra::Inst) -> bool {
        matches!(self.insts[insn.index()].kind, MKind::Branch(ref b) if !matches!(b, Branch::EndProgram | Branch::Return))
    }

    fn branch_blockparams(&self, block: ra::Block, _insn: ra::Inst, succ_idx: usize) -> &[ra::VReg] {
        &self.blocks[block.index()].succ_args[succ_idx]
    }

    fn inst_operands(&self, insn: ra::Inst) -> &[ra::Operand] {
        &self.insts[insn.index()].ops
    }

    fn debug_value_labels(&self) -> &[(ra::VReg, ra::Inst, ra::Inst, u32)] {
        &self.debug_labels
    }

    fn inst_clobbers(&self, insn: ra::Inst) -> ra::PRegSet {
        match &self.insts[insn.index()].kind {
            MKind::Call { clobbers, .. } | MKind::Clobber(clobbers) => *clobbers,
            _ => ra::PRegSet::empty(),
        }
    }

    fn num_vregs(&self) -> usize {
        self.vreg_classes.len()
    }

    fn spillslot_size(&self, regclass: ra::RegClass) -> usize {
        match regclass {
            ra::RegClass::Vector => 2,
            _ => 1,
        }
    }
}

/// Prints VCode for `--print-after isel`: one line per instruction, virtual
/// registers as `%s3` / `%S4` (pair) / `%v5`.
pub fn print(vcode: &VCode, target: isa::Target) -> String {
    use std::fmt::Write;
    let name = |v: ra::VReg| {
        let prefix = match vcode.class(v) {
            Class::Sgpr => "s",
            Class::SgprPair => "S",
            Class::Vgpr => "v",
        };
        format!("%{prefix}{}", v.vreg())
    };
    let operands = |ops: &[ra::Operand]| {
        ops.iter()
            .map(|o| {
                let kind = if o.kind() == ra::OperandKind::Def { "def " } else { "" };
                let fixed = match o.constraint() {
                    ra::OperandConstraint::FixedReg(p) => format!("@{}", preg_to_phys(p).name(target.gpu)),
                    ra::OperandConstraint::Reuse(i) => format!("(reuses {i})"),
                    _ => String::new(),
                };
                format!("{kind}{}{fixed}", name(o.vreg()))
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = String::new();
    for (b, block) in vcode.blocks.iter().enumerate() {
        let params: Vec<String> = block.params.iter().map(|p| name(*p)).collect();
        let _ = writeln!(out, "block{b} {}({}){}:", block.name, params.join(", "), if block.partial_exec { " [partial exec]" } else { "" });
        for i in block.insts.clone() {
            let m = &vcode.insts[i];
            let what = match &m.kind {
                MKind::Real { inst, .. } => isa::print::mnemonic(inst, target.gpu),
                MKind::Seq(parts) => parts.iter().map(|(i, _)| isa::print::mnemonic(i, target.gpu)).collect::<Vec<_>>().join("+"),
                other => format!("{other:?}").split([' ', '(']).next().unwrap_or("").to_string(),
            };
            let _ = writeln!(out, "  {what} {}", operands(&m.ops));
        }
        for (s, args) in block.succs.iter().zip(&block.succ_args) {
            let args: Vec<String> = args.iter().map(|a| name(*a)).collect();
            let _ = writeln!(out, "  -> block{}({})", s.index(), args.join(", "));
        }
    }
    out
}

/// The VCode verifier (run after selection in debug builds and tests): the
/// machine CFG is consistent (successor and predecessor lists mirror each other,
/// every block ends in exactly one terminator, branch arguments match the
/// successor's parameters in number and class), every operand names a virtual
/// register that exists, and every register fill of an instruction refers to one
/// of its operands with a class that fits (halves of SGPR pairs, VGPRs in
/// windows and addresses).
pub fn verify(vcode: &VCode) -> Result<(), String> {
    let n = vcode.blocks.len();
    let exists = |v: ra::VReg| v.vreg() < vcode.vreg_classes.len() && vcode.class(v).ra() == v.class();
    for (b, block) in vcode.blocks.iter().enumerate() {
        let name = &block.name;
        if block.insts.is_empty() {
            return Err(format!("block {b} ({name}) is empty"));
        }
        for i in block.insts.clone() {
            let m = &vcode.insts[i];
            let last = i + 1 == block.insts.end;
            let is_branch = matches!(m.kind, MKind::Branch(_));
            if is_branch != last {
                return Err(format!("block {b} ({name}): instruction {i} is {} terminator in the wrong place", if is_branch { "a" } else { "not a" }));
            }
            for o in &m.ops {
                if !exists(o.vreg()) {
                    return Err(format!("block {b} ({name}): instruction {i} uses an unknown or misclassed register {:?}", o.vreg()));
                }
            }
            let parts: Vec<&Vec<(Slot, Fill)>> = match &m.kind {
                MKind::Real { fills, .. } => vec![fills],
                MKind::Seq(parts) => parts.iter().map(|(_, f)| f).collect(),
                _ => Vec::new(),
            };
            for fills in parts {
                for (_, fill) in fills {
                    let class_of = |k: u8| m.ops.get(k as usize).map(|o| vcode.class(o.vreg()));
                    let ok = match *fill {
                        Fill::Whole(k) => class_of(k).is_some(),
                        Fill::Half(k, h) => class_of(k) == Some(Class::SgprPair) && h < 2,
                        Fill::VPair { lo, hi, .. } => class_of(lo) == Some(Class::Vgpr) && class_of(hi) == Some(Class::Vgpr),
                        Fill::VQuad { regs, .. } => regs.iter().all(|&k| class_of(k) == Some(Class::Vgpr)),
                        Fill::Tuple { regs, n } => {
                            let all = |c| regs[..usize::from(n)].iter().all(|&k| class_of(k) == Some(c));
                            ((2..=4).contains(&n) && all(Class::Vgpr)) || (n == 2 && all(Class::SgprPair))
                        }
                        Fill::Address { base, offset, .. } => class_of(base) == Some(Class::SgprPair) && class_of(offset) == Some(Class::Vgpr),
                        Fill::Sum { lo, hi, add, .. } => {
                            class_of(lo) == Some(Class::Vgpr)
                                && class_of(hi) == Some(Class::Vgpr)
                                && add.iter().all(|&(k, h)| match h {
                                    None => class_of(k) == Some(Class::Vgpr),
                                    Some(h) => class_of(k) == Some(Class::SgprPair) && h < 2,
                                })
                        }
                    };
                    if !ok {
                        return Err(format!("block {b} ({name}): instruction {i} has a register fill {fill:?} that does not fit its operands"));
                    }
                }
            }
        }
        if block.succs.len() != block.succ_args.len() {
            return Err(format!("block {b} ({name}): {} successors but {} argument lists", block.succs.len(), block.succ_args.len()));
        }
        for (s, args) in block.succs.iter().zip(&block.succ_args) {
            let target = vcode.blocks.get(s.index()).ok_or_else(|| format!("block {b} ({name}) branches to a missing block"))?;
            if !target.preds.contains(&ra::Block::new(b)) {
                return Err(format!("block {b} ({name}) is not a predecessor of its successor {} ({})", s.index(), target.name));
            }
            if args.len() != target.params.len() {
                return Err(format!("block {b} ({name}) passes {} arguments to {} ({}) which takes {}", args.len(), s.index(), target.name, target.params.len()));
            }
            for (a, p) in args.iter().zip(&target.params) {
                if !exists(*a) || vcode.class(*a) != vcode.class(*p) {
                    return Err(format!("block {b} ({name}): argument {a:?} does not match parameter {p:?} of {}", target.name));
                }
            }
        }
        for p in &block.preds {
            if p.index() >= n || !vcode.blocks[p.index()].succs.contains(&ra::Block::new(b)) {
                return Err(format!("block {b} ({name}) lists a predecessor that does not branch to it"));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_blocks(args: Vec<ra::VReg>, param_class: Class) -> VCode {
        let mut vc = VCode::default();
        let param = vc.new_vreg(param_class);
        vc.insts.push(MInst { kind: MKind::Branch(Branch::Jump), ops: Vec::new() });
        vc.insts.push(MInst { kind: MKind::Branch(Branch::EndProgram), ops: Vec::new() });
        vc.blocks.push(MBlock { insts: 0..1, succs: vec![ra::Block::new(1)], succ_args: vec![args], name: "a".into(), ..Default::default() });
        vc.blocks.push(MBlock { insts: 1..2, preds: vec![ra::Block::new(0)], params: vec![param], name: "b".into(), ..Default::default() });
        vc
    }

    #[test]
    fn verifier_accepts_consistent_and_rejects_broken_vcode() {
        let mut ok = two_blocks(Vec::new(), Class::Vgpr);
        let arg = ok.new_vreg(Class::Vgpr);
        ok.blocks[0].succ_args[0] = vec![arg];
        assert_eq!(verify(&ok), Ok(()));
        // Missing argument.
        assert!(verify(&two_blocks(Vec::new(), Class::Vgpr)).unwrap_err().contains("passes 0 arguments"));
        // Argument of the wrong class.
        let mut wrong = two_blocks(Vec::new(), Class::Sgpr);
        let v = wrong.new_vreg(Class::Vgpr);
        wrong.blocks[0].succ_args[0] = vec![v];
        assert!(verify(&wrong).unwrap_err().contains("does not match parameter"));
        // A terminator in the middle of a block.
        let mut mid = ok.clone();
        mid.insts.insert(0, MInst { kind: MKind::Branch(Branch::EndProgram), ops: Vec::new() });
        mid.blocks[0].insts = 0..2;
        mid.blocks[1].insts = 2..3;
        assert!(verify(&mid).unwrap_err().contains("terminator in the wrong place"));
    }

    /// A loop whose header reads a value defined before it and calls
    /// something, with a second value read only after the loop and an SGPR
    /// condition: counted by hand, two VGPR values live through the call
    /// (the loop-carried read keeps the first live around the back edge),
    /// and at most three VGPRs live at once (the copy's result with both).
    #[test]
    fn pressure_counts_values_live_through_calls_and_around_loops() {
        let mut vc = VCode::default();
        let (a, b, c) = (
            vc.new_vreg(Class::Vgpr),
            vc.new_vreg(Class::Vgpr),
            vc.new_vreg(Class::Vgpr),
        );
        let cond = vc.new_vreg(Class::Sgpr);
        let def = |v| MInst {
            kind: MKind::ImplicitDef,
            ops: vec![ra::Operand::reg_def(v)],
        };
        vc.insts = vec![
            def(a),
            def(b),
            MInst {
                kind: MKind::Branch(Branch::Jump),
                ops: Vec::new(),
            },
            // Header: a call, a read of `a`, the loop's condition.
            MInst {
                kind: MKind::Clobber(ra::PRegSet::empty()),
                ops: Vec::new(),
            },
            MInst {
                kind: MKind::Copy,
                ops: vec![ra::Operand::reg_def(c), ra::Operand::reg_use(a)],
            },
            def(cond),
            MInst {
                kind: MKind::Branch(Branch::IfUniform),
                ops: vec![ra::Operand::reg_use(cond)],
            },
            // Exit: reads `b` and `c`.
            MInst {
                kind: MKind::Branch(Branch::EndProgram),
                ops: vec![ra::Operand::reg_use(b), ra::Operand::reg_use(c)],
            },
        ];
        let block = |insts, succs: Vec<usize>| MBlock {
            insts,
            succ_args: vec![Vec::new(); succs.len()],
            succs: succs.into_iter().map(ra::Block::new).collect(),
            ..Default::default()
        };
        vc.blocks = vec![
            block(0..3, vec![1]),
            block(3..7, vec![1, 2]),
            block(7..8, vec![]),
        ];
        let p = pressure(&vc);
        assert_eq!(p.vgprs_across_clobbers, vec![(3, 2)]);
        assert_eq!(p.most, [1, 3, 0]);
    }

    /// `t` live throughout; `x` ends at an instruction writing a pair of
    /// halves: three values live at a time, but where the halves are early
    /// (they may not share a register with `x`) four registers are in use
    /// at that instruction.
    #[test]
    fn early_definitions_occupy_registers_beside_the_sources_they_end() {
        for (pos, occupied) in [(ra::OperandPos::Late, 3), (ra::OperandPos::Early, 4)] {
            let mut vc = VCode::default();
            let [t, x, lo, hi] = [0; 4].map(|_| vc.new_vreg(Class::Vgpr));
            let def = |v| MInst { kind: MKind::ImplicitDef, ops: vec![ra::Operand::reg_def(v)] };
            let pair = MInst {
                kind: MKind::Seq(Vec::new()),
                ops: vec![
                    ra::Operand::new(lo, ra::OperandConstraint::Reg, ra::OperandKind::Def, pos),
                    ra::Operand::new(hi, ra::OperandConstraint::Reg, ra::OperandKind::Def, pos),
                    ra::Operand::reg_use(x),
                ],
            };
            let end = MInst { kind: MKind::Branch(Branch::EndProgram), ops: vec![ra::Operand::reg_use(t), ra::Operand::reg_use(lo), ra::Operand::reg_use(hi)] };
            vc.insts = vec![def(t), def(x), pair, end];
            vc.blocks = vec![MBlock { insts: 0..4, ..Default::default() }];
            let p = pressure(&vc);
            assert_eq!(p.most, [0, 3, 0]);
            assert_eq!(p.most_occupied, [0, occupied, 0]);
        }
    }
}

/// Register pressure: the most values of each regalloc2 class (SGPRs,
/// VGPRs, SGPR pairs: the order of `ra::RegClass`) live at once anywhere in
/// the function, each a lower bound on the registers of that class any
/// allocation needs, and at each instruction with clobbers (calls) how many
/// VGPR values live through it.
pub struct Pressure {
    pub most: [u32; 3],
    /// `most`, also counting at an instruction with an early definition
    /// (one that may not share a register with what the instruction reads:
    /// gfx11's 64-bit multiply-adds, sequences) the sources ending there,
    /// which it is written beside: the lower bound `--stats` reports.
    /// Allocation starts from `most`.
    pub most_occupied: [u32; 3],
    /// (instruction, VGPR values live before and after it that it does not
    /// define), for every instruction with clobbers.
    pub vgprs_across_clobbers: Vec<(usize, u32)>,
}

/// Backward liveness over the machine CFG; a value is live from its
/// definition to its last use, block parameters from the block's start.
/// Live sets are sorted register lists per block, updated from a worklist
/// until no block's changes (each update merges lists; instructions are
/// walked twice in all: once for each block's upward-exposed uses and
/// definitions, once for the counts).
pub fn pressure(vcode: &VCode) -> Pressure {
    let class_index = |v: u32| vcode.vreg_classes[v as usize].ra() as usize;
    let n = vcode.blocks.len();
    let nv = vcode.vreg_classes.len();
    // Per block: upward-exposed uses and definitions (parameters included).
    let mut exposed: Vec<Vec<u32>> = Vec::with_capacity(n);
    let mut defined: Vec<Vec<u32>> = Vec::with_capacity(n);
    let mut def_stamp = vec![u32::MAX; nv];
    let mut use_stamp = vec![u32::MAX; nv];
    for (b, block) in vcode.blocks.iter().enumerate() {
        let stamp = b as u32;
        let mut gen = Vec::new();
        let mut defs = Vec::new();
        // First definitions and first reads not after a definition, by stamp.
        fn define(v: u32, stamp: u32, def_stamp: &mut [u32], defs: &mut Vec<u32>) {
            if std::mem::replace(&mut def_stamp[v as usize], stamp) != stamp {
                defs.push(v);
            }
        }
        fn read(v: u32, stamp: u32, def_stamp: &[u32], use_stamp: &mut [u32], gen: &mut Vec<u32>) {
            if def_stamp[v as usize] != stamp
                && std::mem::replace(&mut use_stamp[v as usize], stamp) != stamp
            {
                gen.push(v);
            }
        }
        for p in &block.params {
            define(p.vreg() as u32, stamp, &mut def_stamp, &mut defs);
        }
        for m in &vcode.insts[block.insts.clone()] {
            for o in m.ops.iter().filter(|o| o.kind() == ra::OperandKind::Use) {
                read(
                    o.vreg().vreg() as u32,
                    stamp,
                    &def_stamp,
                    &mut use_stamp,
                    &mut gen,
                );
            }
            for o in m.ops.iter().filter(|o| o.kind() == ra::OperandKind::Def) {
                define(o.vreg().vreg() as u32, stamp, &mut def_stamp, &mut defs);
            }
        }
        for a in block.succ_args.iter().flatten() {
            read(a.vreg() as u32, stamp, &def_stamp, &mut use_stamp, &mut gen);
        }
        gen.sort_unstable();
        defs.sort_unstable();
        exposed.push(gen);
        defined.push(defs);
    }
    // live_in[b]: live at the block's start, its parameters excluded (a
    // predecessor's arguments stand for them).
    let mut live_in: Vec<Vec<u32>> = vec![Vec::new(); n];
    let live_out = |b: usize, live_in: &[Vec<u32>]| -> Vec<u32> {
        let block = &vcode.blocks[b];
        let mut out: Vec<u32> = Vec::new();
        for (s, args) in block.succs.iter().zip(&block.succ_args) {
            out = union(&out, &live_in[s.index()]);
            let mut a: Vec<u32> = args.iter().map(|v| v.vreg() as u32).collect();
            a.sort_unstable();
            a.dedup();
            out = union(&out, &a);
        }
        out
    };
    // A worklist, last block first: a block is seen again only when what
    // one of its successors needs has grown.
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (b, block) in vcode.blocks.iter().enumerate() {
        for s in &block.succs {
            preds[s.index()].push(b);
        }
    }
    let mut pending: Vec<usize> = (0..n).collect();
    let mut queued = vec![true; n];
    while let Some(b) = pending.pop() {
        queued[b] = false;
        let out = live_out(b, &live_in);
        let through = difference(&out, &defined[b]);
        let new_in = union(&through, &exposed[b]);
        if new_in != live_in[b] {
            live_in[b] = new_in;
            for &p in &preds[b] {
                if !std::mem::replace(&mut queued[p], true) {
                    pending.push(p);
                }
            }
        }
    }
    // Counts: backward through each block from what leaves it.
    let mut max = [0usize; 3];
    let mut max_occupied = [0usize; 3];
    let mut across = Vec::new();
    let mut member = vec![false; nv];
    for b in 0..n {
        let block = &vcode.blocks[b];
        let out = live_out(b, &live_in);
        let mut count = [0usize; 3];
        for &v in &out {
            member[v as usize] = true;
            count[class_index(v)] += 1;
        }
        for i in block.insts.clone().rev() {
            let m = &vcode.insts[i];
            for o in m.ops.iter().filter(|o| o.kind() == ra::OperandKind::Def) {
                let v = o.vreg().vreg() as u32;
                if std::mem::replace(&mut member[v as usize], false) {
                    count[class_index(v)] -= 1;
                }
            }
            if matches!(m.kind, MKind::Call { .. } | MKind::Clobber(_)) {
                across.push((i, count[ra::RegClass::Float as usize] as u32));
            }
            // Defined and used values of one instruction overlap at it.
            let mut at = count;
            for o in m.ops.iter().filter(|o| o.kind() == ra::OperandKind::Def) {
                at[class_index(o.vreg().vreg() as u32)] += 1;
            }
            // An early definition (one that may not share a register with
            // what its instruction reads: gfx11's 64-bit multiply-adds,
            // sequences) is written while the sources ending here are
            // still read: they overlap it too.
            let mut early = [false; 3];
            for o in m.ops.iter().filter(|o| o.kind() == ra::OperandKind::Def && o.pos() == ra::OperandPos::Early) {
                early[class_index(o.vreg().vreg() as u32)] = true;
            }
            let mut occupied = at;
            for o in m.ops.iter().filter(|o| o.kind() == ra::OperandKind::Use) {
                let v = o.vreg().vreg() as u32;
                if !std::mem::replace(&mut member[v as usize], true) {
                    count[class_index(v)] += 1;
                    if early[class_index(v)] {
                        occupied[class_index(v)] += 1;
                    }
                }
            }
            for c in 0..3 {
                max[c] = max[c].max(at[c].max(count[c]));
                max_occupied[c] = max_occupied[c].max(occupied[c].max(count[c]));
            }
        }
        // What is left is live at the block's start: clear it.
        for &v in live_in[b].iter().chain(&defined[b]) {
            member[v as usize] = false;
        }
    }
    across.sort_unstable();
    Pressure {
        most: max.map(|m| m as u32),
        most_occupied: max_occupied.map(|m| m as u32),
        vgprs_across_clobbers: across,
    }
}

/// The union of two sorted lists.
fn union(a: &[u32], b: &[u32]) -> Vec<u32> {
    if a.is_empty() {
        return b.to_vec();
    }
    if b.is_empty() {
        return a.to_vec();
    }
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => {
                out.push(a[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(b[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// The elements of sorted `a` not in sorted `b`.
fn difference(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len());
    let mut j = 0;
    for &x in a {
        while j < b.len() && b[j] < x {
            j += 1;
        }
        if j == b.len() || b[j] != x {
            out.push(x);
        }
    }
    out
}
