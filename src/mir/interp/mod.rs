//! The MIR interpreter: the reference semantics of MIR (docs/mir-semantics.md),
//! the oracle that the code generator and the ISA simulator are compared with.
//!
//! It runs a kernel over a grid, work-group by work-group and work-item by
//! work-item in a fixed order, so every run of a program is deterministic.
//! Undefined behaviour (division by zero, out-of-bounds or misaligned accesses,
//! reads of never-written LDS or private memory, divergent barriers, ...) is
//! reported as an [`InterpError`] naming the instruction and the work-item,
//! never silently given a value.
//!
//! ```
//! use amdgpu_cg::mir::interp::{run_kernel, Launch, Memory, RtValue};
//! let module = amdgpu_cg::mir::parse(
//!     "kernel @k(%out: ptr<global>) {\nentry:\n  %i = workitem_id x\n  %o = mul i32 %i, 4\n  %p = ptradd %out, %o\n  store i32 %i, %p\n  ret\n}\n",
//! ).unwrap();
//! let mut memory = Memory::new();
//! let out = memory.alloc_zeroed(16, 4);
//! let launch = Launch::new([4, 1, 1], [4, 1, 1]);
//! run_kernel(&module, "k", &launch, &[RtValue::Scalar(out)], &mut memory).unwrap();
//! assert_eq!(memory.read(out + 12, 4).unwrap(), &3u32.to_le_bytes());
//! ```

// Errors are rare and leave the hot path; a flat, inspectable InterpError is
// worth its size.
#![allow(clippy::result_large_err)]

mod exec;
mod memory;
pub mod ops;

use std::fmt;

pub use memory::{Memory, APERTURE_SIZE, GLOBAL_BASE, LOCAL_APERTURE, PRIVATE_APERTURE};

use super::ir::{Module, Span};
use crate::abi::Type;

/// A run-time value: a scalar's bit pattern (zero-extended to 64 bits; floats as
/// their IEEE bits, f16 in the low 16 bits, i1 as 0 or 1), or the elements of a
/// vector or the fields of a struct.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RtValue {
    Scalar(u64),
    Agg(Vec<RtValue>),
}

impl RtValue {
    pub fn i32(v: i32) -> RtValue {
        RtValue::Scalar(u64::from(v as u32))
    }
    pub fn i64(v: i64) -> RtValue {
        RtValue::Scalar(v as u64)
    }
    pub fn f32(v: f32) -> RtValue {
        RtValue::Scalar(u64::from(v.to_bits()))
    }
    pub fn f64(v: f64) -> RtValue {
        RtValue::Scalar(v.to_bits())
    }
    /// An f16 from its bit pattern.
    pub fn f16_bits(bits: u16) -> RtValue {
        RtValue::Scalar(u64::from(bits))
    }
    /// The bit pattern of a scalar (None for aggregates).
    pub fn bits(&self) -> Option<u64> {
        match self {
            RtValue::Scalar(b) => Some(*b),
            RtValue::Agg(_) => None,
        }
    }
    /// The elements of an aggregate (None for scalars).
    pub fn elems(&self) -> Option<&[RtValue]> {
        match self {
            RtValue::Agg(v) => Some(v),
            RtValue::Scalar(_) => None,
        }
    }
    /// Checks that the value has the shape of `ty` and that scalars fit in their
    /// width.
    pub fn check_type(&self, ty: &Type) -> Result<(), String> {
        match (self, ty) {
            (RtValue::Scalar(bits), ty) if ty.is_scalar() => {
                let w = ops::width(ty);
                if w < 64 && bits >> w != 0 {
                    return Err(format!("value {bits:#x} does not fit in {ty}"));
                }
                Ok(())
            }
            (RtValue::Agg(elems), Type::Vector(elem, n)) => {
                if elems.len() != usize::from(*n) {
                    return Err(format!("{ty} needs {n} elements, found {}", elems.len()));
                }
                elems.iter().try_for_each(|e| e.check_type(elem))
            }
            (RtValue::Agg(elems), Type::Struct(fields)) => {
                if elems.len() != fields.len() {
                    return Err(format!("{ty} needs {} fields, found {}", fields.len(), elems.len()));
                }
                elems.iter().zip(fields).try_for_each(|(e, f)| e.check_type(f))
            }
            (RtValue::Scalar(_), ty) => Err(format!("a scalar was given for {ty}")),
            (RtValue::Agg(_), ty) => Err(format!("an aggregate was given for scalar type {ty}")),
        }
    }
}

/// Launch geometry, in work-items (like HIP's global size, not a block count).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    /// Work-items in the grid per dimension; a whole number of work-groups.
    pub grid: [u32; 3],
    /// Work-group size per dimension (at most 1024 work-items in all).
    pub block: [u32; 3],
    /// The global offset per dimension (OpenCL's `global_work_offset`; 0 unless
    /// the launch asks): `global_offset`, and added to nothing else.
    pub offset: [u32; 3],
    /// The dimensions the launch was enqueued with (`work_dim`), 1 to 3.
    pub work_dim: u32,
    /// The address `printf_buffer` reads (0: the launch gives none).
    pub printf_buffer: u64,
}

impl Launch {
    /// A launch without a global offset, its dimension count the highest one
    /// with more than one work-item (as the simulator's dispatch packet says).
    pub fn new(grid: [u32; 3], block: [u32; 3]) -> Launch {
        Launch { grid, block, offset: [0; 3], work_dim: default_work_dim(grid), printf_buffer: 0 }
    }
}

/// Where a kernel's launch-given LDS starts in the interpreter (`dynamic_lds`,
/// local pointer arguments): after its `lds_slot`s, aligned to 16.
pub fn dynamic_lds_base(func: &crate::mir::Function) -> u32 {
    let mut end = 0u64;
    for inst in func.blocks.first().map(|b| b.insts.as_slice()).unwrap_or(&[]) {
        if let crate::mir::Op::LdsSlot { size, align } = inst.op {
            end = end.next_multiple_of(u64::from(align)) + u64::from(size);
        }
    }
    end.next_multiple_of(16).min(u64::from(u32::MAX)) as u32
}

/// The dimensions of a launch that does not say: 3 if the grid has more than one
/// work-item in z, 2 if in y, else 1 (how the simulator fills the packet).
pub fn default_work_dim(grid: [u32; 3]) -> u32 {
    if grid[2] > 1 {
        3
    } else if grid[1] > 1 {
        2
    } else {
        1
    }
}

/// What a run did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Instructions and terminators executed, over all work-items.
    pub instructions: u64,
    pub work_items: u64,
    pub work_groups: u64,
}

/// Limits of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Instructions (and terminators) executed over the whole launch before the
    /// run stops with "instruction limit reached".
    pub max_instructions: u64,
    /// Deepest call nesting (the kernel is depth 1).
    pub max_call_depth: usize,
    /// LDS bytes per work-group (the sum of the kernel's `lds_slot`s, aligned).
    pub max_lds_bytes: u32,
    /// Private bytes per work-item (live `stack_slot`s).
    pub max_private_bytes: u32,
    /// LDS bytes per work-group that the launch adds after the kernel's
    /// `lds_slot`s (where `dynamic_lds` points).
    pub dynamic_lds_bytes: u32,
    /// Lanes per wave (32 or 64), for the wave operations.
    pub wave_size: u32,
}

impl Default for Options {
    fn default() -> Options {
        Options { max_instructions: 1_000_000_000, max_call_depth: 512, max_lds_bytes: 65536, max_private_bytes: 256 * 1024, dynamic_lds_bytes: 0, wave_size: 64 }
    }
}

/// A run-time error: undefined behaviour, a launch problem or a limit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InterpError {
    pub message: String,
    /// The function executing (without '@').
    pub function: Option<String>,
    /// The block's name.
    pub block: Option<String>,
    /// Index of the instruction in its block (== the number of instructions for
    /// the terminator).
    pub inst: Option<usize>,
    /// The instruction as printed MIR text.
    pub inst_text: Option<String>,
    /// Source location of the instruction ([`Span::NONE`] if unknown).
    pub span: Span,
    /// Id of the work-item within its work-group.
    pub work_item: Option<[u32; 3]>,
    pub work_group: Option<[u32; 3]>,
    /// The callers, innermost first: "@f, block 'b', instruction 2: `call ...`".
    pub call_stack: Vec<String>,
}

impl InterpError {
    /// An error with only a message (no location).
    pub fn new(message: impl Into<String>) -> InterpError {
        InterpError {
            message: message.into(),
            function: None,
            block: None,
            inst: None,
            inst_text: None,
            span: Span::NONE,
            work_item: None,
            work_group: None,
            call_stack: Vec::new(),
        }
    }
}

impl fmt::Display for InterpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if let Some(func) = &self.function {
            write!(f, "\n  at @{func}")?;
            if let Some(block) = &self.block {
                write!(f, ", block '{block}'")?;
            }
            if let Some(i) = self.inst {
                write!(f, ", instruction {}", i + 1)?;
            }
            if let Some(text) = &self.inst_text {
                write!(f, ": `{text}`")?;
            }
        }
        if let Some([x, y, z]) = self.work_item {
            write!(f, "\n  in work-item ({x}, {y}, {z})")?;
            if let Some([gx, gy, gz]) = self.work_group {
                write!(f, " of work-group ({gx}, {gy}, {gz})")?;
            }
        }
        for caller in &self.call_stack {
            write!(f, "\n  called from {caller}")?;
        }
        Ok(())
    }
}

impl std::error::Error for InterpError {}

/// Runs `kernel` over the grid with default [`Options`]. `args` holds one value
/// per kernel parameter (pointers are device addresses from `memory`).
pub fn run_kernel(module: &Module, kernel: &str, launch: &Launch, args: &[RtValue], memory: &mut Memory) -> Result<RunStats, InterpError> {
    run_kernel_with(module, kernel, launch, args, memory, &Options::default())
}

/// [`run_kernel`] with explicit limits.
pub fn run_kernel_with(
    module: &Module,
    kernel: &str,
    launch: &Launch,
    args: &[RtValue],
    memory: &mut Memory,
    options: &Options,
) -> Result<RunStats, InterpError> {
    exec::run_kernel(module, kernel, launch, args, memory, options)
}

/// Calls one function (usually a device function) as a single work-item of a
/// 1x1x1 grid and returns its result: handy for testing scalar semantics.
pub fn call_function(
    module: &Module,
    function: &str,
    args: &[RtValue],
    memory: &mut Memory,
    options: &Options,
) -> Result<Option<RtValue>, InterpError> {
    exec::call_function(module, function, args, memory, options)
}
