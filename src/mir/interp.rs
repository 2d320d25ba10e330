//! The MIR interpreter: the reference semantics of MIR (docs/mir.md).
