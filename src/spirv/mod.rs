//! SPIR-V in: OpenCL kernels (the Kernel execution model, Physical64
//! addressing) translated into MIR, which then compiles like any other input
//! (docs/spirv.md).
//!
//! The front end's passes, in order (each in its own file):
//! - `read`: the binary into instructions (rspirv's parser), each with its
//!   word offset and the source line that `OpLine` gives;
//! - `module`: the module-level facts (capabilities, names, decorations,
//!   types and their layouts, constants, variables, entry points, execution
//!   modes, function bodies);
//! - `function`: every function reachable from an entry point into a MIR
//!   function (blocks and `OpPhi` as block parameters, instructions, builtin
//!   variables, `OpenCL.std` in `opencl`).
//!
//! No pass loops; what cannot be translated is an [`Error`] naming the
//! instruction or capability and where it is.

mod builtins;
mod collectives;
mod function;
mod module;
mod convert;
mod data;
mod libm;
mod opencl;
mod printf;
mod subgroups;
mod read;

use std::fmt;

use crate::mir::Module;

/// The first word of every SPIR-V module.
pub const MAGIC: u32 = 0x0723_0203;

/// Something the front end cannot translate, or a malformed module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub message: String,
    /// Word offset of the instruction in the module (0 for the header).
    pub word: Option<usize>,
    /// The source position the last `OpLine` before the instruction gave.
    pub line: Option<(String, u32)>,
}

impl Error {
    pub(crate) fn new(message: impl Into<String>, word: Option<usize>) -> Error {
        Error { message: message.into(), word, line: None }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.line, self.word) {
            (Some((file, line)), Some(w)) => write!(f, "{file}:{line}: {} (SPIR-V word {w})", self.message),
            (Some((file, line)), None) => write!(f, "{file}:{line}: {}", self.message),
            (None, Some(w)) => write!(f, "SPIR-V word {w}: {}", self.message),
            (None, None) => write!(f, "{}", self.message),
        }
    }
}

impl std::error::Error for Error {}

/// True when `bytes` start with the SPIR-V magic number (either byte order).
pub fn is_spirv(bytes: &[u8]) -> bool {
    bytes.len() >= 4 && {
        let w = [bytes[0], bytes[1], bytes[2], bytes[3]];
        u32::from_le_bytes(w) == MAGIC || u32::from_be_bytes(w) == MAGIC
    }
}

/// The words of a SPIR-V binary, in the byte order its magic number shows.
pub fn words(bytes: &[u8]) -> Result<Vec<u32>, Error> {
    if !bytes.len().is_multiple_of(4) {
        return Err(Error::new(format!("a SPIR-V module is a whole number of 32-bit words; this one has {} bytes", bytes.len()), None));
    }
    if !is_spirv(bytes) {
        return Err(Error::new("not a SPIR-V module (no magic number 0x07230203)", Some(0)));
    }
    let little = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) == MAGIC;
    Ok(bytes
        .chunks_exact(4)
        .map(|c| {
            let w = [c[0], c[1], c[2], c[3]];
            if little {
                u32::from_le_bytes(w)
            } else {
                u32::from_be_bytes(w)
            }
        })
        .collect())
}

/// Translates a SPIR-V module into MIR. Every problem found is reported (up
/// to the first one in each function), with its word offset.
pub fn to_mir(words: &[u32]) -> Result<Module, Vec<Error>> {
    let insts = read::read(words).map_err(|e| vec![e])?;
    let facts = module::Facts::collect(&insts).map_err(|e| vec![e])?;
    function::translate(&facts, &insts)
}
