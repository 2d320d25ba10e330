//! Reading: the words into rspirv instructions, each with its word offset
//! (found by walking the word counts ourselves, so that every error can say
//! where it is) and the source line of the last `OpLine` before it.

use rspirv::binary::{Consumer, ParseAction};
use rspirv::dr;
use rspirv::spirv::Op;

use super::{Error, MAGIC};

/// One instruction of the module.
pub struct Inst {
    pub inst: dr::Instruction,
    /// Word offset of its first word.
    pub word: usize,
    /// `(OpString id, line)` of the `OpLine` in effect, if any.
    pub line: Option<(u32, u32)>,
}

impl Inst {
    pub fn op(&self) -> Op {
        self.inst.class.opcode
    }
}

struct Collect {
    insts: Vec<dr::Instruction>,
}

impl Consumer for Collect {
    fn initialize(&mut self) -> ParseAction {
        ParseAction::Continue
    }
    fn finalize(&mut self) -> ParseAction {
        ParseAction::Continue
    }
    fn consume_header(&mut self, _: dr::ModuleHeader) -> ParseAction {
        ParseAction::Continue
    }
    fn consume_instruction(&mut self, inst: dr::Instruction) -> ParseAction {
        self.insts.push(inst);
        ParseAction::Continue
    }
}

/// The module's instructions in order.
pub fn read(words: &[u32]) -> Result<Vec<Inst>, Error> {
    if words.len() < 5 {
        return Err(Error::new(format!("a SPIR-V module starts with a 5-word header; this one has {} words", words.len()), Some(0)));
    }
    if words[0] != MAGIC {
        return Err(Error::new(format!("not a SPIR-V module: the first word is {:#010x}, not the magic number {MAGIC:#010x}", words[0]), Some(0)));
    }
    // The instruction boundaries, from the word counts.
    let mut offsets = Vec::new();
    let mut at = 5;
    while at < words.len() {
        let count = (words[at] >> 16) as usize;
        if count == 0 || at + count > words.len() {
            return Err(Error::new(
                format!("malformed instruction (opcode {}): a word count of {count} runs past the module's {} words", words[at] & 0xffff, words.len()),
                Some(at),
            ));
        }
        offsets.push(at);
        at += count;
    }
    let mut collect = Collect { insts: Vec::with_capacity(offsets.len()) };
    // rspirv is a parser of someone else's: a panic on input it did not
    // expect becomes an error here rather than the compiler's end.
    let parsed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| rspirv::binary::parse_words(words, &mut collect)));
    let failed_at = |n: usize| offsets.get(n).copied().or(Some(0));
    match parsed {
        Ok(Ok(())) => {}
        Ok(Err(state)) => return Err(Error::new(format!("cannot read the module: {state}"), failed_at(collect.insts.len()))),
        Err(_) => return Err(Error::new("cannot read the module: the SPIR-V parser failed on this instruction", failed_at(collect.insts.len()))),
    }
    if collect.insts.len() != offsets.len() {
        return Err(Error::new("cannot read the module: its instructions do not match their word counts", failed_at(collect.insts.len())));
    }
    let mut line = None;
    let mut out = Vec::with_capacity(offsets.len());
    for (inst, word) in collect.insts.into_iter().zip(offsets) {
        match inst.class.opcode {
            Op::Line => {
                if let [dr::Operand::IdRef(file), dr::Operand::LiteralBit32(l), ..] = inst.operands[..] {
                    line = Some((file, l));
                }
            }
            Op::NoLine | Op::FunctionEnd => line = None,
            _ => {}
        }
        out.push(Inst { inst, word, line });
    }
    Ok(out)
}
