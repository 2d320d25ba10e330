//! The types that cross an ABI boundary: kernel arguments, function arguments and
//! results. The MIR uses these same types for its values, so the text syntax below
//! is the MIR's type syntax (docs/mir.md) and the one `amdgpu-cg abi` accepts.
//!
//! ```text
//! type   := scalar | "<" N "x" scalar ">" | "{" type ("," type)* "}"
//! scalar := i1 | i8 | i16 | i32 | i64 | f16 | f32 | f64 | ptr | "ptr<" space ">"
//! space  := global | constant | local | private | flat        (bare `ptr` is flat)
//! N      := 2 | 3 | 4 | 8 | 16
//! ```
//!
//! Memory layout (`size`/`align`) is the natural C layout that OpenCL and HIP use on
//! AMDGPU: scalars are naturally aligned; 64-bit pointers (flat, global, constant)
//! take 8 bytes, 32-bit pointers (local, private) take 4; a 3-element vector has the
//! size and alignment of the 4-element one; a struct is aligned to its most aligned
//! field and padded to a multiple of that alignment.

use std::fmt;

/// An address space, as the hardware and LLVM number them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AddrSpace {
    /// Generic (flat) addresses: may point to global, LDS or scratch memory.
    Flat,
    /// Global memory (device memory visible to all work-items).
    Global,
    /// Read-only memory, uniform loads may use scalar (SMEM) loads.
    Constant,
    /// Local data share (LDS, OpenCL `local`, HIP `__shared__`): per work-group.
    Local,
    /// Private (scratch) memory: per work-item.
    Private,
}

impl AddrSpace {
    /// All address spaces, for generators and tests.
    pub const ALL: [AddrSpace; 5] =
        [AddrSpace::Flat, AddrSpace::Global, AddrSpace::Constant, AddrSpace::Local, AddrSpace::Private];

    /// The keyword used in `ptr<...>`.
    pub fn keyword(self) -> &'static str {
        match self {
            AddrSpace::Flat => "flat",
            AddrSpace::Global => "global",
            AddrSpace::Constant => "constant",
            AddrSpace::Local => "local",
            AddrSpace::Private => "private",
        }
    }

    /// LLVM's AMDGPU address-space number (what `ptr addrspace(N)` means).
    pub fn llvm_number(self) -> u32 {
        match self {
            AddrSpace::Flat => 0,
            AddrSpace::Global => 1,
            AddrSpace::Local => 3,
            AddrSpace::Constant => 4,
            AddrSpace::Private => 5,
        }
    }

    /// Width of a pointer into this address space, in bits.
    pub fn pointer_bits(self) -> u32 {
        match self {
            AddrSpace::Flat | AddrSpace::Global | AddrSpace::Constant => 64,
            AddrSpace::Local | AddrSpace::Private => 32,
        }
    }

    fn from_keyword(word: &str) -> Option<AddrSpace> {
        AddrSpace::ALL.into_iter().find(|a| a.keyword() == word)
    }
}

/// A type of the MIR and of the ABI.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    I1,
    I8,
    I16,
    I32,
    I64,
    F16,
    F32,
    F64,
    /// A pointer into an address space.
    Ptr(AddrSpace),
    /// A vector of 2 to 4 scalar elements (never of `i1`).
    Vector(Box<Type>, u8),
    /// A by-value struct (arguments and results only; MIR values are never structs).
    Struct(Vec<Type>),
}

impl Type {
    /// True for i1..f64 and pointers.
    pub fn is_scalar(&self) -> bool {
        !matches!(self, Type::Vector(..) | Type::Struct(..))
    }

    /// True for i1, i8, i16, i32, i64.
    pub fn is_int(&self) -> bool {
        matches!(self, Type::I1 | Type::I8 | Type::I16 | Type::I32 | Type::I64)
    }

    /// True for f16, f32, f64.
    pub fn is_float(&self) -> bool {
        matches!(self, Type::F16 | Type::F32 | Type::F64)
    }

    /// Width in bits of a scalar (pointers by address space); vectors: total bits
    /// of the elements; structs: size in memory times 8.
    pub fn bits(&self) -> u32 {
        match self {
            Type::I1 => 1,
            Type::I8 => 8,
            Type::I16 | Type::F16 => 16,
            Type::I32 | Type::F32 => 32,
            Type::I64 | Type::F64 => 64,
            Type::Ptr(space) => space.pointer_bits(),
            Type::Vector(elem, len) => elem.bits() * u32::from(*len),
            Type::Struct(_) => self.size() * 8,
        }
    }

    /// Size in memory, in bytes (see the module docs for the layout rules).
    pub fn size(&self) -> u32 {
        match self {
            Type::I1 => 1,
            Type::Vector(elem, len) => elem.size() * u32::from(if *len == 3 { 4 } else { *len }),
            Type::Struct(fields) => {
                let mut offset = 0;
                for field in fields {
                    offset = align_to(offset, field.align()) + field.size();
                }
                align_to(offset, self.align())
            }
            scalar => scalar.bits() / 8,
        }
    }

    /// Alignment in memory, in bytes.
    pub fn align(&self) -> u32 {
        match self {
            Type::Vector(..) => self.size(),
            Type::Struct(fields) => fields.iter().map(Type::align).max().unwrap_or(1),
            scalar => scalar.size(),
        }
    }

    /// Byte offsets of the fields of a struct in memory (empty for other types).
    pub fn field_offsets(&self) -> Vec<u32> {
        let Type::Struct(fields) = self else { return Vec::new() };
        let mut offsets = Vec::with_capacity(fields.len());
        let mut offset = 0;
        for field in fields {
            offset = align_to(offset, field.align());
            offsets.push(offset);
            offset += field.size();
        }
        offsets
    }

    /// The element type of a vector, or the type itself.
    pub fn element(&self) -> &Type {
        match self {
            Type::Vector(elem, _) => elem,
            other => other,
        }
    }

    /// True for a vector of `i1` (a vector compare's result) or a struct
    /// holding one: values inside a function, with no memory or argument form.
    pub fn has_bool_vector(&self) -> bool {
        match self {
            Type::Vector(elem, _) => **elem == Type::I1,
            Type::Struct(fields) => fields.iter().any(Type::has_bool_vector),
            _ => false,
        }
    }

    /// Number of vector lanes (1 for scalars).
    pub fn lanes(&self) -> u32 {
        match self {
            Type::Vector(_, len) => u32::from(*len),
            _ => 1,
        }
    }
}

/// Rounds `value` up to a multiple of `align` (a power of two, or 1).
pub fn align_to(value: u32, align: u32) -> u32 {
    value.div_ceil(align.max(1)) * align.max(1)
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::I1 => f.write_str("i1"),
            Type::I8 => f.write_str("i8"),
            Type::I16 => f.write_str("i16"),
            Type::I32 => f.write_str("i32"),
            Type::I64 => f.write_str("i64"),
            Type::F16 => f.write_str("f16"),
            Type::F32 => f.write_str("f32"),
            Type::F64 => f.write_str("f64"),
            Type::Ptr(AddrSpace::Flat) => f.write_str("ptr"),
            Type::Ptr(space) => write!(f, "ptr<{}>", space.keyword()),
            Type::Vector(elem, len) => write!(f, "<{len} x {elem}>"),
            Type::Struct(fields) => {
                f.write_str("{")?;
                for (i, field) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{field}")?;
                }
                f.write_str("}")
            }
        }
    }
}

/// Why a type did not parse, with the byte offset (into the text given) where the
/// problem is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeParseError {
    pub offset: usize,
    pub message: String,
}

impl fmt::Display for TypeParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at byte {}: {}", self.offset, self.message)
    }
}

impl std::error::Error for TypeParseError {}

/// Parses one type at the start of `text` (leading white space allowed) and returns
/// it with the number of bytes consumed. Parsers of larger languages (the MIR text
/// format, signatures) call this at their cursor, so the type grammar exists once.
pub fn parse_type_prefix(text: &str) -> Result<(Type, usize), TypeParseError> {
    let mut cursor = Cursor { text, pos: 0 };
    let ty = cursor.parse_type(0)?;
    Ok((ty, cursor.pos))
}

impl std::str::FromStr for Type {
    type Err = TypeParseError;

    /// Parses a whole string as one type.
    fn from_str(text: &str) -> Result<Type, TypeParseError> {
        let (ty, used) = parse_type_prefix(text)?;
        let rest = &text[used..];
        let trailing = rest.len() - rest.trim_start().len();
        if !rest.trim().is_empty() {
            return Err(TypeParseError { offset: used + trailing, message: "unexpected text after the type".into() });
        }
        Ok(ty)
    }
}

/// Nesting deeper than this is rejected instead of risking the parser's stack.
const MAX_TYPE_NESTING: usize = 64;

struct Cursor<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn skip_space(&mut self) {
        let rest = &self.text[self.pos..];
        self.pos += rest.len() - rest.trim_start().len();
    }

    fn error<T>(&self, message: impl Into<String>) -> Result<T, TypeParseError> {
        Err(TypeParseError { offset: self.pos, message: message.into() })
    }

    fn eat(&mut self, token: &str) -> bool {
        self.skip_space();
        if self.text[self.pos..].starts_with(token) {
            self.pos += token.len();
            true
        } else {
            false
        }
    }

    /// The next word, borrowed from the text (no allocation per type).
    fn word(&mut self) -> &'a str {
        self.skip_space();
        let text: &'a str = self.text;
        let rest = &text[self.pos..];
        let len = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
        self.pos += len;
        &rest[..len]
    }

    fn parse_type(&mut self, depth: usize) -> Result<Type, TypeParseError> {
        if depth > MAX_TYPE_NESTING {
            return self.error("type is nested too deeply");
        }
        self.skip_space();
        if self.eat("{") {
            let mut fields = Vec::new();
            if self.eat("}") {
                return self.error("a struct needs at least one field");
            }
            loop {
                fields.push(self.parse_type(depth + 1)?);
                if self.eat("}") {
                    return Ok(Type::Struct(fields));
                }
                if !self.eat(",") {
                    return self.error("expected ',' or '}' in struct type");
                }
            }
        }
        if self.eat("<") {
            let start = self.pos;
            let count = self.word();
            let len: u8 = match count {
                "2" => 2,
                "3" => 3,
                "4" => 4,
                "8" => 8,
                "16" => 16,
                _ => {
                    self.pos = start;
                    self.skip_space();
                    return self.error(format!("vector length must be 2, 3, 4, 8 or 16, found '{count}'"));
                }
            };
            if self.word() != "x" {
                return self.error("expected 'x' in vector type '<N x T>'");
            }
            self.skip_space();
            let elem_start = self.pos;
            let elem = self.parse_type(depth + 1)?;
            if !elem.is_scalar() {
                self.pos = elem_start;
                return self.error(format!("vector elements must be scalars, found '{elem}'"));
            }
            if !self.eat(">") {
                return self.error("expected '>' to close the vector type");
            }
            return Ok(Type::Vector(Box::new(elem), len));
        }
        let start = self.pos;
        let word = self.word();
        let ty = match word {
            "i1" => Type::I1,
            "i8" => Type::I8,
            "i16" => Type::I16,
            "i32" => Type::I32,
            "i64" => Type::I64,
            "f16" => Type::F16,
            "f32" => Type::F32,
            "f64" => Type::F64,
            "ptr" => {
                if self.text[self.pos..].starts_with('<') {
                    self.pos += 1;
                    let space_start = self.pos;
                    let space = self.word().to_string();
                    let Some(space) = AddrSpace::from_keyword(&space) else {
                        self.pos = space_start;
                        return self.error(format!(
                            "unknown address space '{space}' (expected global, constant, local, private or flat)"
                        ));
                    };
                    if !self.eat(">") {
                        return self.error("expected '>' after the address space");
                    }
                    Type::Ptr(space)
                } else {
                    Type::Ptr(AddrSpace::Flat)
                }
            }
            "" => {
                self.pos = start;
                return self.error("expected a type");
            }
            other => {
                self.pos = start;
                return self.error(format!("unknown type '{other}'"));
            }
        };
        Ok(ty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_text() {
        for text in ["i1", "f16", "ptr", "ptr<global>", "<3 x f32>", "{i32, {f64, ptr<local>}, <2 x i16>}"] {
            let ty: Type = text.parse().unwrap();
            assert_eq!(ty.to_string(), text);
        }
    }

    #[test]
    fn layout_matches_c_rules() {
        // {i8, i32, i64}: i8 at 0, i32 at 4, i64 at 8, size 16, align 8 (clang agrees:
        // the research note measured this struct at kernarg offset 16 with size 16).
        let ty: Type = "{i8, i32, i64}".parse().unwrap();
        assert_eq!(ty.field_offsets(), vec![0, 4, 8]);
        assert_eq!((ty.size(), ty.align()), (16, 8));
        let v3: Type = "<3 x i32>".parse().unwrap();
        assert_eq!((v3.size(), v3.align()), (16, 16));
        assert_eq!(Type::Ptr(AddrSpace::Local).size(), 4);
    }

    #[test]
    fn errors_point_at_the_problem() {
        let err = "{i32, q8}".parse::<Type>().unwrap_err();
        assert_eq!(err.offset, 6);
        let err = "<5 x i32>".parse::<Type>().unwrap_err();
        assert_eq!(err.offset, 1);
        let err = "ptr<heap>".parse::<Type>().unwrap_err();
        assert_eq!(err.offset, 4);
        // Vectors of i1 exist (compare results), but only inside functions.
        assert!("<2 x i1>".parse::<Type>().unwrap().has_bool_vector());
        assert!("<2 x <2 x i32>>".parse::<Type>().is_err());
        assert!("{}".parse::<Type>().is_err());
        let deep = "{".repeat(200) + "i32" + &"}".repeat(200);
        assert!(deep.parse::<Type>().is_err());
    }
}
