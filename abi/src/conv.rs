//! Calling conventions for callable (non-kernel) functions: where every 32-bit
//! piece of every argument and result, every implicit input and every stack slot
//! lives. The rules are written out in docs/abi.md; this file is their only
//! implementation.

use crate::signature::{ImplicitInput, Param, Signature};
use crate::types::{align_to, AddrSpace, Type};
use amdgpu_isa::target::{Gpu, Target};
use serde_json::{json, Value};
use std::fmt;

/// A calling convention for callable functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Convention {
    /// The amdgpu-cg convention (the reference text, with our resolutions).
    AmdgpuCg,
    /// LLVM 22's C calling convention for callable functions (callee side).
    Llvm,
}

impl Convention {
    pub const ALL: [Convention; 2] = [Convention::AmdgpuCg, Convention::Llvm];

    pub fn name(self) -> &'static str {
        match self {
            Convention::AmdgpuCg => "amdgpu-cg",
            Convention::Llvm => "llvm",
        }
    }

    pub fn from_name(name: &str) -> Option<Convention> {
        Convention::ALL.into_iter().find(|c| c.name() == name)
    }
}

impl fmt::Display for Convention {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where one 32-bit piece (or a smaller value) lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Location {
    Vgpr(u16),
    Sgpr(u16),
    /// Bytes `[offset, offset + size)` of the stack argument area; `offset` is
    /// relative to the SP at the call, which is the callee's SP on entry.
    Stack {
        offset: u32,
        size: u32,
    },
}

impl Location {
    pub fn is_reg(self) -> bool {
        !matches!(self, Location::Stack { .. })
    }

    /// The stable JSON form: `{"reg":"v3"}` or `{"stack_offset":8,"size":4}`.
    pub fn to_json(self) -> Value {
        match self {
            Location::Stack { offset, size } => json!({"stack_offset": offset, "size": size}),
            reg => json!({"reg": reg.to_string()}),
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Vgpr(n) => write!(f, "v{n}"),
            Location::Sgpr(n) => write!(f, "s{n}"),
            Location::Stack { offset, size } => write!(f, "[sp+{offset}]:{size}"),
        }
    }
}

/// One piece of a value: a 32-bit register's worth (or less) of it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Piece {
    /// Which part of the value: `""` (all of it), `.1.0` (struct fields),
    /// `[2]` / `[0..1]` (vector elements), `.lo` / `.hi` (halves of 64-bit values).
    pub path: String,
    /// The leaf type (scalar or vector) the piece belongs to.
    pub leaf: Type,
    /// Meaningful bits in the piece (1, 8, 16 or 32); the value sits in the low bits
    /// of a register, upper bits undefined.
    pub bits: u32,
    pub loc: Location,
}

/// Where one source parameter goes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ArgAssignment {
    /// Index in `Signature::params`.
    pub index: usize,
    pub param: Param,
    /// Passed by reference: `pieces` hold the private pointer to a caller-made copy.
    pub by_ref: bool,
    pub pieces: Vec<Piece>,
}

/// Where one implicit input goes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ImplicitAssignment {
    pub input: ImplicitInput,
    /// One location per 32-bit piece, low dword first.
    pub pieces: Vec<Location>,
}

/// Registers with a fixed role on entry to a callable function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SpecialRegs {
    /// First of four SGPRs holding the scratch buffer resource (V#), if any.
    pub scratch_rsrc: Option<u16>,
    /// First of the SGPR pair holding the return address.
    pub return_address: u16,
    pub stack_pointer: u16,
    /// Frame pointer when the function needs one.
    pub frame_pointer: u16,
    /// SGPR holding the wave's scratch base offset (amdgpu-cg on buffer-scratch targets).
    pub wave_scratch_offset: Option<u16>,
    /// Base pointer (LLVM: realigned frame with dynamic allocas).
    pub base_pointer: Option<u16>,
}

/// The answer of [`assign`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assignment {
    pub convention: Convention,
    pub target: Target,
    pub signature: Signature,
    /// One entry per source parameter, in order.
    pub args: Vec<ArgAssignment>,
    /// Result pieces (empty for no result or when returned through `sret`).
    pub ret: Vec<Piece>,
    /// The hidden result pointer (a private pointer), when the result is returned in memory.
    pub sret: Option<Location>,
    /// The implicit inputs, in the convention's order.
    pub implicit: Vec<ImplicitAssignment>,
    /// Bytes of the stack argument area (starting at the entry SP).
    pub stack_size: u32,
    /// Alignment of the entry SP, in bytes.
    pub stack_align: u32,
    pub special: SpecialRegs,
}

/// Why a signature cannot be assigned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AbiError {
    /// A `self` parameter that is not the first parameter.
    SelfNotFirst { index: usize },
    /// A `self` parameter that is not a pointer.
    SelfNotPointer { index: usize },
    /// The convention has no register for this implicit input.
    ImplicitNotAvailable { input: ImplicitInput, convention: Convention },
    /// The stack argument area would exceed [`MAX_STACK_ARGS`] bytes.
    StackTooLarge { bytes: u64 },
}

/// Largest stack argument area we accept (bytes per lane).
pub const MAX_STACK_ARGS: u32 = 64 * 1024;

impl fmt::Display for AbiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AbiError::SelfNotFirst { index } => write!(f, "parameter {index}: 'self' must be the first parameter"),
            AbiError::SelfNotPointer { index } => write!(f, "parameter {index}: 'self' must be a pointer"),
            AbiError::ImplicitNotAvailable { input, convention } => {
                write!(f, "implicit input {} is not passed in the {} convention", input.name(), convention)
            }
            AbiError::StackTooLarge { bytes } => {
                write!(f, "stack argument area of {bytes} bytes exceeds the limit of {MAX_STACK_ARGS}")
            }
        }
    }
}

impl std::error::Error for AbiError {}

/// Size in bytes above which amdgpu-cg passes a struct argument by reference and
/// returns a result through `sret`.
pub const MAX_DIRECT_BYTES: u32 = 16;
/// amdgpu-cg argument VGPRs v0..v31.
pub const CG_VGPR_ARGS: u16 = 32;
/// amdgpu-cg argument SGPRs s4..s29.
pub const CG_FIRST_SGPR_ARG: u16 = 4;
pub const CG_LAST_SGPR_ARG: u16 = 29;
/// LLVM argument VGPRs v0..v30 (v31 is the work-item id); results v0..v31.
pub const LLVM_VGPR_ARGS: u16 = 31;
pub const LLVM_VGPR_RETS: u16 = 32;
/// Largest stack alignment amdgpu-cg gives an argument (the SP's alignment).
pub const STACK_ALIGN: u32 = 16;

/// The shape of one piece of a leaf (before a location is chosen).
#[derive(Clone, Debug)]
struct PieceShape {
    suffix: String,
    bits: u32,
    /// Byte offset and size inside the leaf's memory image (amdgpu-cg stack).
    mem_offset: u32,
    mem_size: u32,
    /// Size of the stack object LLVM makes for the piece (its slot is 4 bytes).
    llvm_size: u32,
}

/// The 32-bit pieces of a leaf (scalar or vector) type, in register order.
fn leaf_pieces(leaf: &Type) -> Vec<PieceShape> {
    fn scalar(ty: &Type, prefix: &str, base: u32, out: &mut Vec<PieceShape>) {
        let bits = ty.bits();
        if bits == 64 {
            for (k, half) in ["lo", "hi"].iter().enumerate() {
                out.push(PieceShape {
                    suffix: format!("{prefix}.{half}"),
                    bits: 32,
                    mem_offset: base + 4 * k as u32,
                    mem_size: 4,
                    llvm_size: 4,
                });
            }
        } else {
            let llvm_size = match bits {
                1 => 1,
                8 | 16 => 2,
                _ => 4,
            };
            out.push(PieceShape { suffix: prefix.to_string(), bits, mem_offset: base, mem_size: ty.size(), llvm_size });
        }
    }
    let mut out = Vec::new();
    match leaf {
        Type::Vector(elem, n) => {
            let n = u32::from(*n);
            let esize = elem.size();
            if elem.bits() == 16 {
                for k in 0..n.div_ceil(2) {
                    let two = 2 * k + 1 < n;
                    out.push(PieceShape {
                        suffix: if two { format!("[{}..{}]", 2 * k, 2 * k + 1) } else { format!("[{}]", 2 * k) },
                        bits: if two { 32 } else { 16 },
                        mem_offset: 4 * k,
                        mem_size: if two { 4 } else { 2 },
                        llvm_size: 4,
                    });
                }
            } else {
                for k in 0..n {
                    scalar(elem, &format!("[{k}]"), k * esize, &mut out);
                }
            }
        }
        other => scalar(other, "", 0, &mut out),
    }
    out
}

/// Flattens a type into its leaves (scalars and vectors) with their field paths.
fn leaves(ty: &Type, path: &str, out: &mut Vec<(String, Type)>) {
    match ty {
        Type::Struct(fields) => {
            for (i, f) in fields.iter().enumerate() {
                leaves(f, &format!("{path}.{i}"), out);
            }
        }
        other => out.push((path.to_string(), other.clone())),
    }
}

/// Number of 32-bit pieces a value of `ty` is cut into when passed directly.
pub fn piece_count(ty: &Type) -> usize {
    let mut ls = Vec::new();
    leaves(ty, "", &mut ls);
    ls.iter().map(|(_, l)| leaf_pieces(l).len()).sum()
}

/// amdgpu-cg passes this parameter type by reference.
pub fn cg_passes_by_reference(ty: &Type) -> bool {
    matches!(ty, Type::Struct(_)) && ty.size() > MAX_DIRECT_BYTES
}

/// amdgpu-cg returns this result type through an `sret` pointer.
pub fn cg_returns_in_memory(ty: &Type) -> bool {
    ty.size() > MAX_DIRECT_BYTES
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    V,
    S,
}

/// The register/stack allocator shared by both conventions.
struct Alloc {
    conv: Convention,
    vgpr_next: u16,
    vgpr_end: u16,
    sgprs: Vec<u16>,
    sgpr_next: usize,
    v_overflowed: bool,
    s_overflowed: bool,
    stack: u64,
}

impl Alloc {
    fn new(conv: Convention, target: Target, llvm22_caller: bool) -> Alloc {
        let (vgpr_end, sgprs) = match conv {
            Convention::AmdgpuCg => (CG_VGPR_ARGS, (CG_FIRST_SGPR_ARG..=CG_LAST_SGPR_ARG).collect()),
            Convention::Llvm if llvm22_caller => (LLVM_VGPR_ARGS, llvm22_caller_inreg_sgprs(target.gpu)),
            Convention::Llvm => (LLVM_VGPR_ARGS, llvm_inreg_sgprs(target.gpu)),
        };
        Alloc { conv, vgpr_next: 0, vgpr_end, sgprs, sgpr_next: 0, v_overflowed: false, s_overflowed: false, stack: 0 }
    }

    /// Places one leaf; returns its pieces.
    fn leaf(&mut self, path: &str, leaf: &Type, class: Class) -> Vec<Piece> {
        let shapes = leaf_pieces(leaf);
        match self.conv {
            Convention::AmdgpuCg => {
                let n = shapes.len();
                let fits = match class {
                    Class::V => !self.v_overflowed && usize::from(self.vgpr_next) + n <= usize::from(self.vgpr_end),
                    Class::S => !self.s_overflowed && self.sgpr_next + n <= self.sgprs.len(),
                };
                if fits {
                    shapes
                        .into_iter()
                        .map(|s| {
                            let loc = match class {
                                Class::V => {
                                    self.vgpr_next += 1;
                                    Location::Vgpr(self.vgpr_next - 1)
                                }
                                Class::S => {
                                    self.sgpr_next += 1;
                                    Location::Sgpr(self.sgprs[self.sgpr_next - 1])
                                }
                            };
                            Piece { path: format!("{path}{}", s.suffix), leaf: leaf.clone(), bits: s.bits, loc }
                        })
                        .collect()
                } else {
                    match class {
                        Class::V => self.v_overflowed = true,
                        Class::S => self.s_overflowed = true,
                    }
                    let base = align_to(self.stack.min(u64::from(u32::MAX / 2)) as u32, leaf.align().min(STACK_ALIGN));
                    self.stack = u64::from(base) + u64::from(leaf.size());
                    shapes
                        .into_iter()
                        .map(|s| Piece {
                            path: format!("{path}{}", s.suffix),
                            leaf: leaf.clone(),
                            bits: s.bits,
                            loc: Location::Stack { offset: base + s.mem_offset, size: s.mem_size },
                        })
                        .collect()
                }
            }
            Convention::Llvm => shapes
                .into_iter()
                .map(|s| {
                    let loc = if class == Class::S && self.sgpr_next < self.sgprs.len() {
                        self.sgpr_next += 1;
                        Location::Sgpr(self.sgprs[self.sgpr_next - 1])
                    } else if self.vgpr_next < self.vgpr_end {
                        self.vgpr_next += 1;
                        Location::Vgpr(self.vgpr_next - 1)
                    } else {
                        let offset = self.stack.min(u64::from(u32::MAX / 2)) as u32;
                        self.stack += 4;
                        Location::Stack { offset, size: s.llvm_size }
                    };
                    Piece { path: format!("{path}{}", s.suffix), leaf: leaf.clone(), bits: s.bits, loc }
                })
                .collect(),
        }
    }

    fn value(&mut self, ty: &Type, class: Class) -> Vec<Piece> {
        let mut ls = Vec::new();
        leaves(ty, "", &mut ls);
        ls.iter().flat_map(|(path, leaf)| self.leaf(path, leaf, class)).collect()
    }
}

/// LLVM 22's callee-side inreg SGPRs (no `amdgpu-no-*` attributes): s16-s29, and
/// s0-s3 first on targets with architected flat scratch (no scratch V#).
pub fn llvm_inreg_sgprs(gpu: Gpu) -> Vec<u16> {
    let mut regs = Vec::new();
    if gpu.has_architected_flat_scratch() {
        regs.extend(0..4);
    }
    regs.extend(16..=29);
    regs
}

/// The SGPRs an LLVM 22.1.x *caller* uses for inreg arguments: s0-s3, s16-s29 on
/// every target. On buffer-scratch targets (gfx90a) this disagrees with the callee
/// ([`llvm_inreg_sgprs`]) and overwrites the scratch V#: the LLVM 22 bug fixed by
/// llvm-project PR 182754 (docs/abi.md section 5).
pub fn llvm22_caller_inreg_sgprs(_gpu: Gpu) -> Vec<u16> {
    (0..4).chain(16..=29).collect()
}

/// LLVM 22's fixed implicit-input registers: (input, first register, is VGPR).
pub const LLVM_IMPLICIT: [(ImplicitInput, u16, bool); 9] = [
    (ImplicitInput::WorkitemId, 31, true),
    (ImplicitInput::DispatchPtr, 4, false),
    (ImplicitInput::QueuePtr, 6, false),
    (ImplicitInput::ImplicitArgPtr, 8, false),
    (ImplicitInput::DispatchId, 10, false),
    (ImplicitInput::WorkgroupIdX, 12, false),
    (ImplicitInput::WorkgroupIdY, 13, false),
    (ImplicitInput::WorkgroupIdZ, 14, false),
    (ImplicitInput::LdsKernelId, 15, false),
];

/// The registers with a fixed role for `conv` on `target`.
pub fn special_regs(conv: Convention, target: Target) -> SpecialRegs {
    let flat = target.gpu.has_architected_flat_scratch();
    match conv {
        Convention::AmdgpuCg => SpecialRegs {
            scratch_rsrc: (!flat).then_some(0),
            return_address: 30,
            stack_pointer: 32,
            frame_pointer: 34,
            wave_scratch_offset: (!flat).then_some(33),
            base_pointer: None,
        },
        Convention::Llvm => SpecialRegs {
            scratch_rsrc: (!flat).then_some(0),
            return_address: 30,
            stack_pointer: 32,
            frame_pointer: 33,
            wave_scratch_offset: None,
            base_pointer: Some(34),
        },
    }
}

/// Says where everything of `sig` lives under `conv` on `target`.
pub fn assign(sig: &Signature, conv: Convention, target: Target) -> Result<Assignment, AbiError> {
    assign_impl(sig, conv, target, false)
}

/// Where an LLVM 22.1.x *caller* puts the arguments of a `Convention::Llvm` call.
/// Equal to [`assign`] except for inreg arguments on gfx90a (the LLVM 22 bug);
/// for diagnosing interop, never for generating calls.
pub fn assign_llvm22_caller(sig: &Signature, target: Target) -> Result<Assignment, AbiError> {
    assign_impl(sig, Convention::Llvm, target, true)
}

fn assign_impl(sig: &Signature, conv: Convention, target: Target, llvm22_caller: bool) -> Result<Assignment, AbiError> {
    for (index, p) in sig.params.iter().enumerate() {
        if p.is_self {
            if index != 0 {
                return Err(AbiError::SelfNotFirst { index });
            }
            if !matches!(p.ty, Type::Ptr(_)) {
                return Err(AbiError::SelfNotPointer { index });
            }
        }
    }
    let mut alloc = Alloc::new(conv, target, llvm22_caller);
    let sret_ptr = Type::Ptr(AddrSpace::Private);
    let in_memory = match (&sig.ret, conv) {
        (None, _) => false,
        (Some(ty), Convention::AmdgpuCg) => cg_returns_in_memory(ty),
        (Some(ty), Convention::Llvm) => piece_count(ty) > usize::from(LLVM_VGPR_RETS),
    };
    let sret = in_memory.then(|| alloc.leaf("", &sret_ptr, Class::V)[0].loc);
    let mut args = Vec::with_capacity(sig.params.len());
    for (index, p) in sig.params.iter().enumerate() {
        let class = if p.inreg { Class::S } else { Class::V };
        let by_ref = conv == Convention::AmdgpuCg && cg_passes_by_reference(&p.ty);
        let pieces = if by_ref { alloc.leaf("", &sret_ptr, class) } else { alloc.value(&p.ty, class) };
        args.push(ArgAssignment { index, param: p.clone(), by_ref, pieces });
    }
    let mut implicit = Vec::new();
    match conv {
        Convention::AmdgpuCg => {
            if sig.uses.as_ref().is_some_and(|u| u.contains(&ImplicitInput::LdsKernelId)) {
                return Err(AbiError::ImplicitNotAvailable { input: ImplicitInput::LdsKernelId, convention: conv });
            }
            for input in ImplicitInput::REFERENCE_ORDER {
                if !sig.uses(input) {
                    continue;
                }
                let ty = match input.dwords() {
                    1 => Type::I32,
                    _ => Type::I64,
                };
                let class = if input.is_vector() { Class::V } else { Class::S };
                let pieces = alloc.leaf("", &ty, class).into_iter().map(|p| p.loc).collect();
                implicit.push(ImplicitAssignment { input, pieces });
            }
        }
        Convention::Llvm => {
            if sig.uses.as_ref().is_some_and(|u| u.contains(&ImplicitInput::KernargSegmentPtr)) {
                return Err(AbiError::ImplicitNotAvailable {
                    input: ImplicitInput::KernargSegmentPtr,
                    convention: conv,
                });
            }
            for (input, first, vector) in LLVM_IMPLICIT {
                if !sig.uses(input) {
                    continue;
                }
                let pieces = (0..input.dwords() as u16)
                    .map(|k| if vector { Location::Vgpr(first + k) } else { Location::Sgpr(first + k) })
                    .collect();
                implicit.push(ImplicitAssignment { input, pieces });
            }
        }
    }
    let stack_bytes = alloc.stack;
    let stack_size = match conv {
        Convention::AmdgpuCg => align_to(stack_bytes.min(u64::from(u32::MAX / 2)) as u32, STACK_ALIGN),
        Convention::Llvm => stack_bytes.min(u64::from(u32::MAX / 2)) as u32,
    };
    if stack_bytes > u64::from(MAX_STACK_ARGS) {
        return Err(AbiError::StackTooLarge { bytes: stack_bytes });
    }
    // Results: a fresh VGPR sequence from v0.
    let mut ret = Vec::new();
    if let (Some(ty), false) = (&sig.ret, in_memory) {
        let mut ralloc = Alloc::new(conv, target, false);
        ralloc.vgpr_end = match conv {
            Convention::AmdgpuCg => CG_VGPR_ARGS,
            Convention::Llvm => LLVM_VGPR_RETS,
        };
        ret = ralloc.value(ty, Class::V);
    }
    Ok(Assignment {
        convention: conv,
        target,
        signature: sig.clone(),
        args,
        ret,
        sret,
        implicit,
        stack_size,
        stack_align: STACK_ALIGN,
        special: special_regs(conv, target),
    })
}

impl Assignment {
    /// Every input location (sret, argument pieces, implicit inputs) with a label.
    pub fn input_locations(&self) -> Vec<(String, Location)> {
        let mut out = Vec::new();
        if let Some(loc) = self.sret {
            out.push(("sret".to_string(), loc));
        }
        for a in &self.args {
            for p in &a.pieces {
                out.push((format!("arg{}{}", a.index, p.path), p.loc));
            }
        }
        for i in &self.implicit {
            for (k, loc) in i.pieces.iter().enumerate() {
                out.push((format!("{}[{k}]", i.input.name()), *loc));
            }
        }
        out
    }

    /// Offset of an incoming stack argument from the callee's frame pointer once
    /// the prologue has set it: amdgpu-cg puts FP at the end of the argument area
    /// (arguments at negative offsets), LLVM at the entry SP (positive offsets).
    pub fn callee_fp_offset(&self, sp_offset: u32) -> i64 {
        match self.convention {
            Convention::AmdgpuCg => i64::from(sp_offset) - i64::from(self.stack_size),
            Convention::Llvm => i64::from(sp_offset),
        }
    }

    /// Offset from the caller's SP at the call at which the caller stores a stack
    /// argument (the caller's view; equal to the callee's entry-SP offset).
    pub fn caller_sp_offset(&self, sp_offset: u32) -> u32 {
        sp_offset
    }

    /// The stable JSON form documented in docs/abi.md.
    pub fn to_json(&self) -> Value {
        let pieces = |ps: &[Piece]| Value::Array(ps.iter().map(|p| p.loc.to_json()).collect());
        let args: Vec<Value> = self
            .args
            .iter()
            .map(|a| {
                json!({
                    "index": a.index,
                    "type": a.param.ty.to_string(),
                    "inreg": a.param.inreg,
                    "byref": a.by_ref,
                    "pieces": pieces(&a.pieces),
                })
            })
            .collect();
        let implicit: Vec<Value> = self
            .implicit
            .iter()
            .map(|i| {
                let mut v = json!({
                    "name": i.input.name(),
                    "pieces": Value::Array(i.pieces.iter().map(|l| l.to_json()).collect()),
                });
                if let Some(r) = reg_range(&i.pieces) {
                    v["reg"] = Value::String(r);
                }
                v
            })
            .collect();
        let sp = self.special;
        json!({
            "convention": self.convention.name(),
            "target": self.target.gpu.name(),
            "wave_size": self.target.wave.lanes(),
            "signature": self.signature.to_string(),
            "args": args,
            "ret": pieces(&self.ret),
            "sret": self.sret.map_or(Value::Null, Location::to_json),
            "implicit": implicit,
            "stack_size": self.stack_size,
            "stack_align": self.stack_align,
            "special": {
                "scratch_rsrc": sp.scratch_rsrc.map(|s| format!("s[{}:{}]", s, s + 3)),
                "return_address": format!("s[{}:{}]", sp.return_address, sp.return_address + 1),
                "stack_pointer": format!("s{}", sp.stack_pointer),
                "frame_pointer": format!("s{}", sp.frame_pointer),
                "wave_scratch_offset": sp.wave_scratch_offset.map(|s| format!("s{s}")),
                "base_pointer": sp.base_pointer.map(|s| format!("s{s}")),
            },
        })
    }
}

/// `v3`, `s[6:7]` for consecutive registers of one kind; `None` otherwise.
fn reg_range(locs: &[Location]) -> Option<String> {
    let (kind, first) = match locs.first()? {
        Location::Vgpr(n) => ('v', *n),
        Location::Sgpr(n) => ('s', *n),
        Location::Stack { .. } => return None,
    };
    for (k, l) in locs.iter().enumerate() {
        let ok = match l {
            Location::Vgpr(n) => kind == 'v' && *n == first + k as u16,
            Location::Sgpr(n) => kind == 's' && *n == first + k as u16,
            Location::Stack { .. } => false,
        };
        if !ok {
            return None;
        }
    }
    Some(if locs.len() == 1 {
        format!("{kind}{first}")
    } else {
        format!("{kind}[{}:{}]", first, first + locs.len() as u16 - 1)
    })
}

impl fmt::Display for Assignment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{}   [{} convention, {} wave{}]",
            self.signature,
            self.convention,
            self.target.gpu,
            self.target.wave.lanes()
        )?;
        writeln!(f, "{:<10} {:<20} {:<22} location", "what", "part", "type")?;
        if let Some(loc) = self.sret {
            writeln!(f, "{:<10} {:<20} {:<22} {}", "sret", "", "ptr<private>", loc)?;
        }
        for a in &self.args {
            let what = format!("arg {}", a.index);
            let mut ty = a.param.to_string();
            if a.by_ref {
                ty = format!("{ty} (byref)");
            }
            for (k, p) in a.pieces.iter().enumerate() {
                let shown = if k == 0 { ty.as_str() } else { "" };
                let part = if p.path.is_empty() { "-" } else { p.path.as_str() };
                writeln!(f, "{:<10} {:<20} {:<22} {}", if k == 0 { what.as_str() } else { "" }, part, shown, p.loc)?;
            }
        }
        for (k, p) in self.ret.iter().enumerate() {
            let part = if p.path.is_empty() { "-" } else { p.path.as_str() };
            let ty = if k == 0 {
                self.signature.ret.as_ref().map(|t| t.to_string()).unwrap_or_default()
            } else {
                String::new()
            };
            writeln!(f, "{:<10} {:<20} {:<22} {}", if k == 0 { "ret" } else { "" }, part, ty, p.loc)?;
        }
        for i in &self.implicit {
            let loc = reg_range(&i.pieces)
                .unwrap_or_else(|| i.pieces.iter().map(|l| l.to_string()).collect::<Vec<_>>().join(" "));
            writeln!(f, "{:<10} {:<20} {:<22} {}", "implicit", i.input.name(), "", loc)?;
        }
        let sp = self.special;
        write!(
            f,
            "stack args: {} bytes at SP+0 (SP {}-byte aligned); SP s{}, RA s[{}:{}], FP s{}",
            self.stack_size,
            self.stack_align,
            sp.stack_pointer,
            sp.return_address,
            sp.return_address + 1,
            sp.frame_pointer
        )?;
        if let Some(r) = sp.scratch_rsrc {
            write!(f, ", scratch V# s[{}:{}]", r, r + 3)?;
        }
        if let Some(w) = sp.wave_scratch_offset {
            write!(f, ", wave scratch offset s{w}")?;
        }
        if let Some(b) = sp.base_pointer {
            write!(f, ", BP s{b}")?;
        }
        writeln!(f)
    }
}

/// Register kinds for preservation queries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegKind {
    Sgpr,
    Vgpr,
    Agpr,
}

/// Number of SGPRs/VGPRs/AGPRs a function can name on `target`.
pub fn register_count(kind: RegKind, target: Target) -> u16 {
    match kind {
        RegKind::Sgpr => match target.gpu {
            Gpu::Gfx90a | Gpu::Gfx942 => 102,
            Gpu::Gfx1100 => 106,
        },
        RegKind::Vgpr => 256,
        RegKind::Agpr => {
            if target.gpu.has_agprs() {
                256
            } else {
                0
            }
        }
    }
}

/// Whether register `n` of `kind` has the same value after a call as before it
/// (callee-saved). VGPRs and AGPRs are preserved only in the lanes active at the
/// call. VCC, M0, SCC are never preserved; EXEC always is.
pub fn is_preserved(conv: Convention, kind: RegKind, n: u16) -> bool {
    match (conv, kind) {
        // Reference: clobbered s4-s31 and v0-v31; everything else preserved.
        (Convention::AmdgpuCg, RegKind::Sgpr) => !(4..=31).contains(&n),
        (Convention::AmdgpuCg, RegKind::Vgpr) => n >= 32,
        // AGPRs: same split as VGPRs (and as LLVM).
        (_, RegKind::Agpr) => n >= 32,
        (Convention::Llvm, RegKind::Sgpr) => {
            (30..=39).contains(&n) || ((48..106).contains(&n) && (n - 48) % 16 < 8) || (96..=105).contains(&n)
        }
        (Convention::Llvm, RegKind::Vgpr) => n >= 40 && (n - 40) % 16 < 8,
    }
}

/// Preserved and clobbered registers of one kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegisterSet {
    pub preserved: Vec<u16>,
    pub clobbered: Vec<u16>,
}

/// The callee-saved/clobbered split of every numbered register of `kind`.
pub fn register_set(conv: Convention, kind: RegKind, target: Target) -> RegisterSet {
    let (preserved, clobbered) = (0..register_count(kind, target)).partition(|&n| is_preserved(conv, kind, n));
    RegisterSet { preserved, clobbered }
}

/// Whether a frame of `frame_bytes` (per lane) needs the emergency spill slot:
/// when some frame offset does not fit the scratch instructions' immediate offset
/// (12 bits unsigned for MUBUF on gfx90a; 13 bits signed, i.e. up to 4095, for
/// flat scratch on gfx942/gfx1100), a register must be scavenged to form the
/// address and may have to be spilled to this slot.
pub fn needs_emergency_spill_slot(frame_bytes: u32, _target: Target) -> bool {
    frame_bytes > 4096
}

/// Hardware registers other than numbered SGPRs/VGPRs/AGPRs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HwReg {
    Exec,
    /// The MODE register (round and denorm modes, IEEE, DX10 clamp).
    Mode,
    FlatScratch,
    M0,
    Vcc,
    Scc,
}

/// Whether a call preserves `reg` (both conventions agree): EXEC, MODE and
/// FLAT_SCRATCH are preserved; M0 (gfx9+), VCC and SCC are clobbered.
pub fn hw_reg_preserved(_conv: Convention, reg: HwReg) -> bool {
    matches!(reg, HwReg::Exec | HwReg::Mode | HwReg::FlatScratch)
}
