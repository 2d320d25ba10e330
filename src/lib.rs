//! amdgpu-cg: an embeddable AMDGPU code generator.
//!
//! Pipeline (docs/pipeline.md): parse → verify → MIR optimisation → uniformity analysis → instruction
//! selection → register allocation → ABI and frame lowering → waitcnt and hazards →
//! encoding → code object.

pub mod abifuzz;
pub mod codegen;
pub mod codeobj;
pub mod driver;
pub mod graph;
pub mod mir;
pub mod opt;
pub mod parallel;
pub mod sim;
pub mod spirv;

pub use amdgpu_abi as abi;
pub use amdgpu_isa as isa;
