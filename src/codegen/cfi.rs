//! Call-frame information: the events expansion recorded on the prologue, the
//! epilogue and the SP moves around calls (at their final code offsets, from
//! emit) become `.debug_frame` rows in AMDGPU DWARF register numbers
//! (docs/abi.md, "Call-frame information").
//!
//! - Kernels have no caller: the return address is undefined, which ends an
//!   unwind.
//! - A device function's CFA is SP (s32) plus its incoming argument area, in
//!   SP units (bytes per lane on flat scratch, wave-level bytes on buffer
//!   scratch): the address of its first local, which holds at every
//!   instruction because SP only moves around calls, where the rows follow it.
//! - The return address is in s[30:31] except, in a function that calls, from
//!   its prologue to its epilogue, in two lanes of a spill VGPR.
//! - A callee-saved VGPR is at CFA + (its slot - incoming) from its save on;
//!   EXEC is in the SGPRs the prologue and epilogue park it in.

use super::expand::CfiEvent;
use crate::codeobj::frame::{dwarf, CfiRow, CfiRule};
use crate::isa::{Target, WaveSize};

/// How a function's frame is addressed, for its rows.
#[derive(Clone, Copy, Debug)]
pub struct FrameShape {
    pub kernel: bool,
    /// SP units per byte per lane: the wave size on buffer scratch, 1 on flat.
    pub sp_scale: u32,
    /// Bytes per lane of incoming stack arguments (16-byte multiple).
    pub incoming: u32,
}

/// The rows of one function's FDE.
pub fn rows(shape: FrameShape, target: Target, events: &[(u32, CfiEvent)]) -> Vec<CfiRow> {
    let row = |offset: u32, rule: CfiRule| CfiRow { offset, rule };
    if shape.kernel {
        return vec![row(0, CfiRule::Undefined(dwarf::PC))];
    }
    let wave64 = target.wave == WaveSize::W64;
    let exec = if wave64 { dwarf::EXEC_64 } else { dwarf::EXEC_32 };
    let cfa = (shape.incoming * shape.sp_scale) as i32;
    let return_address_in_sgprs = CfiRule::InRegisters { reg: dwarf::PC, parts: vec![dwarf::sgpr(30), dwarf::sgpr(31)] };
    let mut out = vec![row(0, CfiRule::DefCfa { reg: dwarf::sgpr(32), offset: cfa }), row(0, return_address_in_sgprs.clone())];
    for (offset, event) in events {
        let rule = match *event {
            CfiEvent::ExecIn(Some(n)) if wave64 => CfiRule::InRegisters { reg: exec, parts: vec![dwarf::sgpr(n), dwarf::sgpr(n + 1)] },
            CfiEvent::ExecIn(Some(n)) => CfiRule::Register { reg: exec, to: dwarf::sgpr(n) },
            // VCC has no DWARF register number.
            CfiEvent::ExecIn(None) => CfiRule::Undefined(exec),
            CfiEvent::ExecRestored => CfiRule::Restore(exec),
            CfiEvent::VgprSaved { vgpr, offset: slot } => {
                CfiRule::Offset { reg: dwarf::vgpr(vgpr, wave64), offset: (slot as i32 - shape.incoming as i32) * shape.sp_scale as i32 }
            }
            CfiEvent::VgprRestored(vgpr) => CfiRule::Restore(dwarf::vgpr(vgpr, wave64)),
            CfiEvent::ReturnAddressInLanes { vgpr, lane } => CfiRule::InLanes { reg: dwarf::PC, vgpr: dwarf::vgpr(vgpr, wave64), lanes: vec![lane, lane + 1] },
            CfiEvent::ReturnAddressInSgprs => return_address_in_sgprs.clone(),
            CfiEvent::SpMoved(by) => CfiRule::CfaOffset(cfa - by as i32),
            CfiEvent::RememberState => CfiRule::RememberState,
            CfiEvent::RestoreState => CfiRule::RestoreState,
        };
        out.push(row(*offset, rule));
    }
    out
}
