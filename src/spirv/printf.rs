//! OpenCL's `printf` (`OpenCL.std printf`) as ROCm runs it: each call
//! reserves a record in the launch's printf buffer and writes its format's id
//! and its arguments there; the runtime prints the records after the kernel,
//! reading the formats from the code object's `amdhsa.printf` metadata
//! (docs/spirv.md "printf").
//!
//! The buffer starts with two dwords, the bytes used after this 8-byte
//! header and the buffer's size. A record is reserved with a compare-and-swap
//! loop that never moves the count past the size (the record is dropped, and
//! printf returns -1, when it does not fit). A record is the format's id
//! (a dword) and every argument in order, each padded to a multiple of 4
//! bytes, unaligned beyond that: integers and floats as the SPIR-V module
//! passes them (clang has already promoted them: float to double, char and
//! short to int), pointers as their address, vectors lane by lane, and a
//! `%s` argument that is a string constant as its bytes with the NUL. The
//! metadata entry is `ID:N:SIZE1:...:SIZEN:FORMAT`, as LLVM writes it.

use std::cell::RefCell;

use rspirv::spirv::StorageClass;

use super::function::Fx;
use super::module::{Constant, SpvType};
use crate::abi::{AddrSpace, Type};
use crate::mir::{BinOp, CastOp, Const, IntPred, Op as MOp, Operand};

/// The module's printf formats, in the order their calls were translated;
/// identical entries share one id. Each is kept without its id
/// (`N:SIZE1:...:FORMAT`), which is its position plus one.
#[derive(Default)]
pub struct Formats(RefCell<Vec<String>>);

impl Formats {
    /// The id of the entry `sizes` + `format`, added if new (ids start at 1).
    fn id(&self, sizes: &[u32], format: &str) -> u32 {
        let mut body = format!("{}:", sizes.len());
        for s in sizes {
            body.push_str(&format!("{s}:"));
        }
        body.push_str(format);
        let mut list = self.0.borrow_mut();
        let at = match list.iter().position(|b| *b == body) {
            Some(at) => at,
            None => {
                list.push(body);
                list.len() - 1
            }
        };
        at as u32 + 1
    }

    /// The `amdhsa.printf` entries, `ID:N:SIZE1:...:FORMAT`.
    pub fn into_inner(self) -> Vec<String> {
        self.0.into_inner().into_iter().enumerate().map(|(k, body)| format!("{}:{body}", k + 1)).collect()
    }
}

/// One argument as the record holds it.
enum Field {
    Value(Operand, Type),
    /// A string constant's bytes, NUL included.
    Text(Vec<u8>),
}

impl Field {
    fn size(&self) -> u32 {
        match self {
            Field::Value(_, ty) => ty.size() as u32,
            Field::Text(bytes) => bytes.len() as u32,
        }
    }
}

/// The bytes of a `UniformConstant` variable's `i8` array initializer, up to
/// and including the first NUL; None when `id` is not such a variable.
fn string_constant(fx: &Fx, id: u32) -> Option<Vec<u8>> {
    let g = fx.facts.globals.get(&id)?;
    if g.storage != StorageClass::UniformConstant {
        return None;
    }
    let SpvType::Array { elem, .. } = fx.facts.ty(g.pointee).ok()? else { return None };
    if fx.facts.ty(*elem).ok()? != &SpvType::Int(8) {
        return None;
    }
    let mut bytes = Vec::new();
    match &fx.facts.constants.get(&g.initializer?)?.1 {
        Constant::Composite(parts) => {
            for p in parts {
                let byte = match &fx.facts.constants.get(p)?.1 {
                    Constant::Scalar(c) => c.bits as u8,
                    Constant::Zero => 0,
                    Constant::Composite(_) | Constant::Address { .. } => return None,
                };
                bytes.push(byte);
                if byte == 0 {
                    break;
                }
            }
        }
        Constant::Zero => {}
        Constant::Scalar(_) | Constant::Address { .. } => return None,
    }
    if bytes.last() != Some(&0) {
        bytes.push(0);
    }
    Some(bytes)
}

/// The format as `amdhsa.printf` holds it, escaped as LLVM writes it (the
/// runtime reads the entry's fields up to ':' and undoes C escapes): the
/// control characters `\a \b \f \n \r \v` as those escapes, ':' as `\72`.
fn metadata_text(format: &[u8]) -> String {
    let mut out = String::new();
    for &b in format {
        match b {
            0x07 => out.push_str("\\a"),
            0x08 => out.push_str("\\b"),
            0x0c => out.push_str("\\f"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            0x0b => out.push_str("\\v"),
            b':' => out.push_str("\\72"),
            _ => out.push(char::from(b)),
        }
    }
    out
}

/// The conversion letter of each conversion in `format`, in order (`%%`
/// converts nothing).
fn conversions(format: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < format.len() {
        if format[i] != b'%' {
            i += 1;
            continue;
        }
        i += 1;
        if format.get(i) == Some(&b'%') {
            i += 1;
            continue;
        }
        while i < format.len() && !b"diouxXfFeEgGaAcsp".contains(&format[i]) {
            i += 1;
        }
        if let Some(&c) = format.get(i) {
            out.push(c);
        }
        i += 1;
    }
    out
}

/// `printf(format, args...)`: the record written to the printf buffer; 0,
/// or -1 when the buffer had no room.
pub fn translate(fx: &mut Fx, formats: &Formats, args: &[u32]) -> Result<Operand, String> {
    let (&format_id, rest) = args.split_first().ok_or("OpenCL.std printf without a format")?;
    let format = string_constant(fx, format_id).ok_or("OpenCL.std printf: the format is not a string constant (a UniformConstant i8 array with an initializer)")?;
    let specs = conversions(&format[..format.len() - 1]);
    let mut fields = Vec::new();
    for (k, &id) in rest.iter().enumerate() {
        if specs.get(k) == Some(&b's') {
            let text = string_constant(fx, id).ok_or_else(|| format!("OpenCL.std printf: argument {} for %s is not a string constant", k + 1))?;
            fields.push(Field::Text(text));
            continue;
        }
        let ty = fx.mir_type_of(id)?;
        let value = fx.operand(id)?;
        let field = match ty.element() {
            // Below a dword (clang promotes these; other producers may not):
            // the runtime reads a dword.
            Type::I8 | Type::I16 if !matches!(ty, Type::Vector(..)) => Field::Value(fx.resize(&ty, value, &Type::I32, true), Type::I32),
            _ => Field::Value(value, ty),
        };
        if field.size() % 4 != 0 {
            return Err(format!("OpenCL.std printf: argument {} of type {} is {} bytes, not a whole number of dwords", k + 1, fx.mir_type_of(id)?, field.size()));
        }
        fields.push(field);
    }
    let sizes: Vec<u32> = fields.iter().map(|f| f.size().next_multiple_of(4)).collect();
    let id = formats.id(&sizes, &metadata_text(&format[..format.len() - 1]));
    let bytes: u32 = 4 + sizes.iter().sum::<u32>();

    let i32c = |v: i64| Operand::Const(Const::int(Type::I32, v));
    let buffer = fx.value(MOp::Builtin { kind: crate::mir::Builtin::PrintfBuffer, dim: 0 });
    let size_at = fx.offset_ptr(buffer.clone(), AddrSpace::Global, 4);
    let size = fx.value(MOp::Load { ty: Type::I32, ptr: size_at, align: 4, volatile: false });
    let first = fx.value(MOp::Load { ty: Type::I32, ptr: buffer.clone(), align: 4, volatile: true });
    let head = fx.new_block("printf.reserve");
    let attempt = fx.new_block("printf.attempt");
    let write = fx.new_block("printf.write");
    let done = fx.new_block("printf.done");
    let used = fx.b.block_param(head, "used", Type::I32);
    let result = fx.b.block_param(done, "printed", Type::I32);
    fx.b.br(head, vec![first]);
    // Reserve: give up when the header, what is used and the record
    // overrun the size; otherwise swap the count forward, again from what
    // another work-item left there when it moved first.
    fx.enter(head);
    let used = Operand::Value(used);
    let end = fx.bin(BinOp::Add, &Type::I32, used.clone(), i32c(i64::from(bytes) + 8));
    let full = fx.value(MOp::Icmp { pred: IntPred::Ugt, ty: Type::I32, lhs: end, rhs: size });
    fx.b.brif(full, done, vec![i32c(-1)], attempt, vec![]);
    fx.enter(attempt);
    let next = fx.bin(BinOp::Add, &Type::I32, used.clone(), i32c(i64::from(bytes)));
    let seen = fx.value(MOp::CmpXchg { ty: Type::I32, ptr: buffer.clone(), expected: used.clone(), new: next, sync: Default::default() });
    let won = fx.value(MOp::Icmp { pred: IntPred::Eq, ty: Type::I32, lhs: seen.clone(), rhs: used.clone() });
    fx.b.brif(won, write, vec![], head, vec![seen]);
    fx.enter(write);
    let at = fx.cast(CastOp::ZExt, &Type::I32, used, &Type::I64);
    let at = fx.bin(BinOp::Add, &Type::I64, at, Operand::Const(Const::int(Type::I64, 8)));
    let record = fx.value(MOp::PtrAdd { ptr: buffer, offset: at });
    fx.b.push(MOp::Store { ty: Type::I32, value: i32c(i64::from(id)), ptr: record.clone(), align: 4, volatile: false }, None);
    let mut offset = 4u64;
    for (field, size) in fields.into_iter().zip(&sizes) {
        match field {
            Field::Value(value, ty) => {
                let p = fx.offset_ptr(record.clone(), AddrSpace::Global, offset);
                fx.b.push(MOp::Store { ty, value, ptr: p, align: 4, volatile: false }, None);
            }
            // An empty string is the word 0xffffff00, which the runtime
            // reads as "" (LLVM writes it so).
            Field::Text(text) if text == [0] => {
                let p = fx.offset_ptr(record.clone(), AddrSpace::Global, offset);
                fx.b.push(MOp::Store { ty: Type::I32, value: i32c(0xffff_ff00u32 as i32 as i64), ptr: p, align: 4, volatile: false }, None);
            }
            Field::Text(mut text) => {
                text.resize(*size as usize, 0);
                for (k, word) in text.chunks(4).enumerate() {
                    let p = fx.offset_ptr(record.clone(), AddrSpace::Global, offset + 4 * k as u64);
                    let w = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
                    fx.b.push(MOp::Store { ty: Type::I32, value: i32c(i64::from(w as i32)), ptr: p, align: 4, volatile: false }, None);
                }
            }
        }
        offset += u64::from(*size);
    }
    fx.b.br(done, vec![i32c(0)]);
    fx.enter(done);
    Ok(Operand::Value(result))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_skip_literal_percents_and_modifiers() {
        assert_eq!(conversions(b"a %d %% %-08.3f %v4hlf %ld %s %c%p"), b"dffdscp".to_vec());
    }

    #[test]
    fn metadata_text_escapes_as_llvm_does() {
        assert_eq!(metadata_text(b"a:b\n\t%d\x07"), "a\\72b\\n\t%d\\a");
    }

    #[test]
    fn identical_entries_share_an_id() {
        let f = Formats::default();
        assert_eq!(f.id(&[4, 8], "x %d %f\n"), 1);
        assert_eq!(f.id(&[8], "y %ld\n"), 2);
        assert_eq!(f.id(&[4, 8], "x %d %f\n"), 1);
        assert_eq!(f.into_inner(), vec!["1:2:4:8:x %d %f\n".to_string(), "2:1:8:y %ld\n".to_string()]);
    }
}
