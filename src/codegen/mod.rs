//! Code generation from verified MIR to machine code (docs/pipeline.md).
//!
//! One module per pass; each pass is a function over a function.

pub mod uniformity;
