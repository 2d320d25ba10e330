//! `.debug_frame`: call-frame information, one CIE and one FDE per function,
//! written with gimli (docs/code-object.md, "Call-frame information").
//!
//! The CIE is LLVM 22's for AMDGPU (version 4, 8-byte addresses, code and data
//! alignment 4, return address column 16 = PC). Each FDE holds the rows the code
//! generator recorded: where the CFA is and where each of the caller's registers
//! the function moves lives, from the instruction boundary on where it changes.

use gimli::write::{Address, CallFrameInstruction, CommonInformationEntry, DebugFrame, EndianVec, Expression, FrameDescriptionEntry, FrameTable, Writer};
use gimli::{Encoding, Format, LittleEndian, Register, SectionId};

/// AMDGPU DWARF register numbers (LLVM's AMDGPUUsage "DWARF Register
/// Identifier", measured with llvm-mc-22 in ../shared/research/code-object.md).
pub mod dwarf {
    /// The 64-bit program counter: the return address column.
    pub const PC: u16 = 16;
    /// EXEC in wave64 code (EXEC_MASK_64).
    pub const EXEC_64: u16 = 17;
    /// EXEC in wave32 code (EXEC_MASK_32, `exec_lo`).
    pub const EXEC_32: u16 = 1;

    /// SGPR n: 32 + n below s64, 1088 + (n - 64) above.
    pub fn sgpr(n: u16) -> u16 {
        if n < 64 {
            32 + n
        } else {
            1088 + (n - 64)
        }
    }

    /// VGPR n, whose number depends on the wave size of the code.
    pub fn vgpr(n: u16, wave64: bool) -> u16 {
        if wave64 {
            2560 + n
        } else {
            1536 + n
        }
    }
}

/// A rule that holds from a code offset on (bytes from the function's start).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CfiRow {
    pub offset: u32,
    pub rule: CfiRule,
}

/// Call-frame rules, in DWARF register numbers ([`dwarf`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CfiRule {
    /// CFA = register + offset.
    DefCfa { reg: u16, offset: i32 },
    /// CFA = the same register + a new offset.
    CfaOffset(i32),
    /// The caller's `reg` is saved at CFA + offset.
    Offset { reg: u16, offset: i32 },
    /// The caller's `reg` is the concatenation of these 32-bit registers, low
    /// part first (`DW_CFA_expression`: `DW_OP_regx r, DW_OP_piece 4`, ...).
    InRegisters { reg: u16, parts: Vec<u16> },
    /// The caller's `reg` is in these 32-bit lanes of a VGPR, low part first
    /// (`DW_OP_regx v, DW_OP_bit_piece 32 lane*32`, ...).
    InLanes { reg: u16, vgpr: u16, lanes: Vec<u32> },
    /// The caller's `reg` is in register `to`.
    Register { reg: u16, to: u16 },
    /// The CIE's rule again (the register holds the caller's value).
    Restore(u16),
    /// The caller's value cannot be recovered (a kernel's return address).
    Undefined(u16),
    RememberState,
    RestoreState,
}

/// One function's FDE: its address (a constant in a loadable object, its
/// symbol in a relocatable one) and its rows in code order.
pub struct FrameFunction<'a> {
    pub address: Address,
    pub len: u32,
    pub rows: &'a [CfiRow],
}

/// A `.debug_frame` section and its relocations: (offset, symbol, 64-bit
/// address) for FDE start addresses and (offset, section) for CIE pointers,
/// which a relocatable object needs.
pub struct DebugFrameSection {
    pub bytes: Vec<u8>,
    pub address_relocs: Vec<(u64, usize)>,
    pub cie_pointer_relocs: Vec<u64>,
}

/// Collects the relocations gimli would need while writing.
struct Recording {
    out: EndianVec<LittleEndian>,
    address_relocs: Vec<(u64, usize)>,
    cie_pointer_relocs: Vec<u64>,
}

impl Writer for Recording {
    type Endian = LittleEndian;

    fn endian(&self) -> LittleEndian {
        LittleEndian
    }

    fn len(&self) -> usize {
        self.out.len()
    }

    fn write(&mut self, bytes: &[u8]) -> gimli::write::Result<()> {
        self.out.write(bytes)
    }

    fn write_at(&mut self, offset: usize, bytes: &[u8]) -> gimli::write::Result<()> {
        self.out.write_at(offset, bytes)
    }

    fn write_address(&mut self, address: Address, size: u8) -> gimli::write::Result<()> {
        match address {
            Address::Constant(v) => self.write_udata(v, size),
            Address::Symbol { symbol, addend } => {
                self.address_relocs.push((self.len() as u64, symbol));
                self.write_udata(addend as u64, size)
            }
        }
    }

    fn write_offset(&mut self, val: usize, section: SectionId, size: u8) -> gimli::write::Result<()> {
        if section == SectionId::DebugFrame {
            self.cie_pointer_relocs.push(self.len() as u64);
        }
        self.write_udata(val as u64, size)
    }
}

fn expression_in_registers(parts: &[u16]) -> Expression {
    let mut e = Expression::new();
    for &r in parts {
        e.op_reg(Register(r));
        e.op_piece(4);
    }
    e
}

fn expression_in_lanes(vgpr: u16, lanes: &[u32]) -> Expression {
    let mut e = Expression::new();
    for &l in lanes {
        e.op_reg(Register(vgpr));
        e.op_bit_piece(32, u64::from(l) * 32);
    }
    e
}

fn instruction(rule: &CfiRule) -> CallFrameInstruction {
    match rule {
        CfiRule::DefCfa { reg, offset } => CallFrameInstruction::Cfa(Register(*reg), *offset),
        CfiRule::CfaOffset(offset) => CallFrameInstruction::CfaOffset(*offset),
        CfiRule::Offset { reg, offset } => CallFrameInstruction::Offset(Register(*reg), *offset),
        CfiRule::InRegisters { reg, parts } => CallFrameInstruction::Expression(Register(*reg), expression_in_registers(parts)),
        CfiRule::InLanes { reg, vgpr, lanes } => CallFrameInstruction::Expression(Register(*reg), expression_in_lanes(*vgpr, lanes)),
        CfiRule::Register { reg, to } => CallFrameInstruction::Register(Register(*reg), Register(*to)),
        CfiRule::Restore(reg) => CallFrameInstruction::Restore(Register(*reg)),
        CfiRule::Undefined(reg) => CallFrameInstruction::Undefined(Register(*reg)),
        CfiRule::RememberState => CallFrameInstruction::RememberState,
        CfiRule::RestoreState => CallFrameInstruction::RestoreState,
    }
}

/// Writes `.debug_frame` for the functions. Offsets of CFA and memory rules
/// must be multiples of 4 (the data alignment factor).
pub fn write_debug_frame(functions: &[FrameFunction]) -> Result<DebugFrameSection, String> {
    let encoding = Encoding { format: Format::Dwarf32, version: 4, address_size: 8 };
    let cie = CommonInformationEntry::new(encoding, 4, 4, Register(dwarf::PC));
    let mut table = FrameTable::default();
    let cie_id = table.add_cie(cie);
    for f in functions {
        let mut fde = FrameDescriptionEntry::new(f.address, f.len);
        for row in f.rows {
            fde.add_instruction(row.offset, instruction(&row.rule));
        }
        table.add_fde(cie_id, fde);
    }
    let mut w = DebugFrame(Recording { out: EndianVec::new(LittleEndian), address_relocs: Vec::new(), cie_pointer_relocs: Vec::new() });
    table.write_debug_frame(&mut w).map_err(|e| format!(".debug_frame: {e}"))?;
    let Recording { out, address_relocs, cie_pointer_relocs } = w.0;
    Ok(DebugFrameSection { bytes: out.into_vec(), address_relocs, cie_pointer_relocs })
}
