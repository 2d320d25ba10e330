//! AMDGPU instruction set layer: targets, registers, opcode tables, encoder,
//! decoder and printer for gfx90a, gfx942 and gfx1100.
//!
//! The code generator builds [`Inst`] values (an [`Opcode`] from the data table in
//! [`opcodes`], operands in table order, modifiers, offsets, cache bits) and calls
//! [`encode()`]; [`decode()`] and [`print()`] are its inverse and companion, checked
//! against llvm-mc-22 by `tests/llvm_mc_crosscheck.rs`. See docs/isa.md.

pub mod decode;
pub mod encode;
pub mod inst;
pub mod llvm_tools;
pub mod opcodes;
pub mod print;
pub mod regs;
pub mod samples;
pub mod target;
pub mod waitcnt;

pub use decode::{decode, decode_all, DecodeError};
pub use encode::{encode, encode_words, encoded_len, EncodeError};
pub use inst::{Cache, Inst, Mods, Operand};
pub use opcodes::{Counters, Format, Kind, OpFlags, OpInfo, Opcode};
pub use print::print;
pub use regs::{PhysReg, Reg};
pub use target::{Generation, Gpu, Target, WaveSize};
pub use waitcnt::Waitcnt;
