//! Final layout: branch offsets, machine code bytes, and the assembly listing in
//! llvm-mc syntax (labels for branch targets, so the listing re-assembles).

use super::expand::Expanded;
use crate::isa::{self, Target};
use crate::mir::Diagnostic;

/// A function's machine code and its assembly text.
pub struct Encoded {
    pub code: Vec<u8>,
    pub asm: String,
    pub instructions: usize,
}

/// Encodes the blocks in order, resolving branch targets.
pub fn encode(func_name: &str, code: &Expanded, target: Target) -> Result<Encoded, Diagnostic> {
    let fail = |e: isa::EncodeError, inst: &isa::Inst| {
        Diagnostic::new(
            format!("internal error: cannot encode '{}' in @{func_name}: {e}", isa::print(inst, target)),
            crate::mir::Span::NONE,
        )
    };
    // Block start offsets (every instruction's size is known before offsets are).
    let mut offsets = Vec::with_capacity(code.blocks.len());
    let mut offset = 0usize;
    for (_, insts) in &code.blocks {
        offsets.push(offset);
        for e in insts {
            offset += isa::encoded_len(&e.inst, target).map_err(|err| fail(err, &e.inst))?;
        }
    }
    let labels: Vec<bool> = {
        let mut used = vec![false; code.blocks.len()];
        for (_, insts) in &code.blocks {
            for e in insts {
                if let Some(t) = e.target {
                    used[t] = true;
                }
            }
        }
        used
    };
    let label = |b: usize| format!(".L{func_name}_{b}");
    let mut bytes = Vec::with_capacity(offset);
    let mut asm = String::new();
    let mut instructions = 0;
    for (b, (name, insts)) in code.blocks.iter().enumerate() {
        if labels[b] || b == 0 {
            asm.push_str(&format!("{}:{}; {name}\n", label(b), " ".repeat(4)));
        } else {
            asm.push_str(&format!("; {name}\n"));
        }
        for e in insts {
            let mut inst = e.inst.clone();
            let at = bytes.len();
            if let Some(t) = e.target {
                let delta = (offsets[t] as i64 - (at as i64 + 4)) / 4;
                let delta = i16::try_from(delta).map_err(|_| {
                    Diagnostic::new(format!("branch in @{func_name} is too far ({delta} words)"), crate::mir::Span::NONE)
                })?;
                inst.imm = delta as u16;
                let mnemonic = isa::print::mnemonic(&inst, target.gpu);
                asm.push_str(&format!("  {mnemonic} {}\n", label(t)));
            } else {
                asm.push_str(&format!("  {}\n", isa::print(&inst, target)));
            }
            isa::encode(&inst, target, &mut bytes).map_err(|err| fail(err, &inst))?;
            instructions += 1;
        }
    }
    Ok(Encoded { code: bytes, asm, instructions })
}
