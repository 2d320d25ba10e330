//! Final layout: branch offsets, machine code bytes, and the assembly listing in
//! llvm-mc syntax (labels for branch targets, so the listing re-assembles).

use super::expand::Expanded;
use crate::isa::{self, Target};
use crate::mir::Diagnostic;

/// A function's machine code and its assembly text.
pub struct Encoded {
    pub code: Vec<u8>,
    /// PC-relative symbol addresses (calls and data): (offset of the
    /// instruction after the `s_getpc_b64`, the symbol).
    pub relocated: Vec<(u64, String)>,
    pub asm: String,
    pub instructions: usize,
    /// Call-frame information changes: (code offset, change), in code order.
    pub cfi: Vec<(u32, super::expand::CfiEvent)>,
}

/// Encodes the blocks in order, resolving branch targets; with `listing`, also
/// writes the assembly text (empty without).
pub fn encode(
    func_name: &str,
    code: &Expanded,
    target: Target,
    listing: bool,
) -> Result<Encoded, Diagnostic> {
    let (kept, destination) = thread_jumps(code);
    let blocks = || code.blocks.iter().zip(&kept).filter(|(_, &k)| k).map(|(block, _)| block);
    let fail = |e: isa::EncodeError, inst: &isa::Inst| {
        Diagnostic::new(
            format!("internal error: cannot encode '{}' in @{func_name}: {e}", isa::print(inst, target)),
            crate::mir::Span::NONE,
        )
    };
    // Block start offsets by VCode block index (every instruction's size is
    // known before offsets are).
    let mut offsets = vec![0usize; blocks().map(|(b, _, _)| b + 1).max().unwrap_or(0)];
    let mut offset = 0usize;
    for (b, _, insts) in blocks() {
        offsets[*b] = offset;
        for e in insts {
            offset += isa::encoded_len(&e.inst, target).map_err(|err| fail(err, &e.inst))?;
        }
    }
    let mut labels = vec![false; offsets.len()];
    for (_, _, insts) in blocks() {
        for e in insts {
            if let Some(t) = e.target.map(|t| destination[t]) {
                labels[t] = true;
            }
        }
    }
    let label = |b: usize| format!(".L{func_name}_{b}");
    let mut bytes = Vec::with_capacity(offset);
    let mut asm = String::new();
    let mut instructions = 0;
    let mut relocated = Vec::new();
    let mut cfi = Vec::new();
    // After a call's `s_getpc_b64`: the callee and how many of the two
    // relocated literals (`s_add_u32`, `s_addc_u32`) are still to print.
    let mut call_literals: Option<(String, u8)> = None;
    for &(b, ref name, ref insts) in blocks() {
        if listing && (labels[b] || b == 0) {
            asm.push_str(&format!("{}:{}; {name}\n", label(b), " ".repeat(4)));
        } else if listing {
            asm.push_str(&format!("; {name}\n"));
        }
        for e in insts {
            let at = bytes.len();
            cfi.extend(
                e.cfi
                    .iter()
                    .filter(|c| !c.after)
                    .map(|c| (at as u32, c.event.clone())),
            );
            // A branch gets its offset; other instructions are encoded as they are.
            let branch;
            let target_block = e.target.map(|t| destination[t]);
            let inst = match target_block {
                Some(t) => {
                    let delta = (offsets[t] as i64 - (at as i64 + 4)) / 4;
                    let delta = i16::try_from(delta).map_err(|_| {
                        Diagnostic::new(
                            format!("branch in @{func_name} is too far ({delta} words)"),
                            crate::mir::Span::NONE,
                        )
                    })?;
                    branch = isa::Inst {
                        imm: delta as u16,
                        ..e.inst.clone()
                    };
                    &branch
                }
                None => &e.inst,
            };
            if let Some(t) = target_block {
                if listing {
                    let mnemonic = isa::print::mnemonic(inst, target.gpu);
                    asm.push_str(&format!("  {mnemonic} {}\n", label(t)));
                }
            } else if let Some((callee, done)) = call_literals.take() {
                // The literal is a placeholder the linker fills in: the listing
                // names the relocation instead, as llc-22's does, so that it
                // re-assembles into the same code.
                if listing {
                    let [lo, hi] = crate::codeobj::Reloc::getpc_pair(0, &callee);
                    let r = if done == 0 { lo } else { hi };
                    let text = isa::print(inst, target);
                    let placeholder = format!("0x{:x}", super::expand::CALL_LITERAL_PLACEHOLDER);
                    let at = text.rfind(&placeholder).ok_or_else(|| {
                        Diagnostic::new(
                            format!(
                                "internal error: call literal missing in '{text}' in @{func_name}"
                            ),
                            crate::mir::Span::NONE,
                        )
                    })?;
                    asm.push_str(&format!(
                        "  {}{}{}\n",
                        &text[..at],
                        r.asm_expression(),
                        &text[at + placeholder.len()..]
                    ));
                }
                if done == 0 {
                    call_literals = Some((callee, 1));
                }
            } else if listing {
                asm.push_str(&format!("  {}\n", isa::print(inst, target)));
            }
            isa::encode(inst, target, &mut bytes).map_err(|err| fail(err, inst))?;
            if let Some(callee) = &e.symbol {
                relocated.push((bytes.len() as u64, callee.clone()));
                call_literals = Some((callee.clone(), 0));
            }
            cfi.extend(e.cfi.iter().filter(|c| c.after).map(|c| (bytes.len() as u32, c.event.clone())));
            instructions += 1;
        }
    }
    Ok(Encoded { code: bytes, relocated, asm, instructions, cfi })
}

/// Branch threading: a block that holds nothing but a jump (typically the block
/// splitting a critical edge, left empty by register allocation) is skipped by
/// every branch to it, and dropped when no block falls through into it.
/// Returns, per block position, whether the block stays, and per block index
/// where a branch to it goes instead (the code itself is not copied).
fn thread_jumps(code: &Expanded) -> (Vec<bool>, Vec<usize>) {
    use crate::isa::Opcode;
    let destination = code.branch_destinations();
    let ends_without_fallthrough = |insts: &[super::expand::Emitted]| {
        insts.last().is_some_and(|e| matches!(e.inst.op, Opcode::s_branch | Opcode::s_endpgm | Opcode::s_setpc_b64))
    };
    let kept = code
        .blocks
        .iter()
        .enumerate()
        .map(|(position, (b, _, _))| {
            let fallen_into = position == 0 || !ends_without_fallthrough(&code.blocks[position - 1].2);
            destination[*b] == *b || fallen_into || *b == 0
        })
        .collect();
    (kept, destination)
}
