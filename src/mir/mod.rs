//! The MIR: amdgpu-cg's input language, a small typed SSA IR for GPU kernels and
//! device functions (docs/mir.md).
//!
//! - [`ir`]: the data structures;
//! - [`parse`]: the text format reader, with file:line:column diagnostics;
//! - [`print`]: the text format writer (`Display` on [`Module`]);
//! - [`builder`]: building functions in code, for embedders;
//! - [`verify`]: the well-formedness checker every stage relies on;
//! - [`interp`]: the reference semantics, an interpreter over a grid.

pub mod builder;
pub mod cfg;
pub mod diag;
pub mod float;
pub mod interp;
pub mod ir;
pub mod launch;
pub mod parse;
pub mod print;
pub mod verify;

pub use crate::abi::{AddrSpace, Type};
pub use diag::{Diagnostic, Diagnostics, SourceFile};
pub use ir::*;
pub use parse::parse;
