//! AMDGPU ABI layer: the types that cross ABI boundaries, calling conventions,
//! the kernel ABI (initial execution state, kernarg layout) and kernel descriptor
//! fields. Code generation, the simulator and the fuzzers ask this crate; nothing
//! else decides where a value lives.

pub mod types;

pub use types::{AddrSpace, Type};
