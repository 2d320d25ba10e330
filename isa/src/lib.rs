//! AMDGPU instruction set layer: targets, registers, opcode tables, encoder,
//! decoder and printer for gfx90a, gfx942 and gfx1100.

pub mod llvm_tools;
pub mod target;

pub use target::{Generation, Gpu, Target, WaveSize};
