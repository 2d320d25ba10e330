//! AMDGPU ABI layer: the types that cross ABI boundaries, calling conventions,
//! the kernel ABI (initial execution state, kernarg layout) and kernel descriptor
//! fields. Code generation, the simulator and the fuzzers ask this crate; nothing
//! else decides where a value lives. The rules are documented in docs/abi.md.

pub mod conv;
pub mod descriptor;
pub mod kernarg;
pub mod kernel;
pub mod signature;
pub mod types;

pub use conv::{
    assign, assign_llvm22_caller, hw_reg_preserved, is_preserved, register_set, special_regs, AbiError, ArgAssignment,
    Assignment, Convention, HwReg, ImplicitAssignment, Location, Piece, RegKind, RegisterSet, SpecialRegs,
};
pub use kernarg::{layout as kernarg_layout, KernargLayout};
pub use kernel::{initial_state, InitialState, KernelInputs};
pub use signature::{ImplicitInput, Param, Signature};
pub use types::{AddrSpace, Type};

/// What `amdgpu-cg abi SIGNATURE --mcpu CPU [--conv C] [--json]` prints: the
/// table (`Display`) or the JSON of the assignment, or an error message.
pub fn cli_abi(signature: &str, mcpu: &str, conv: &str, json: bool) -> Result<String, String> {
    let sig = Signature::parse(signature).map_err(|e| format!("signature: {e}"))?;
    let gpu = amdgpu_isa::target::Gpu::from_name(mcpu).ok_or_else(|| format!("unsupported --mcpu '{mcpu}'"))?;
    let conv = Convention::from_name(conv).ok_or_else(|| format!("unknown --conv '{conv}' (amdgpu-cg or llvm)"))?;
    let a = assign(&sig, conv, amdgpu_isa::target::Target::new(gpu)).map_err(|e| e.to_string())?;
    Ok(if json { format!("{}\n", a.to_json()) } else { a.to_string() })
}
