//! Function signatures as the ABI sees them, and their text syntax.
//!
//! ```text
//! signature := "fn" "(" [param ("," param)*] ")" ["->" type] [uses]
//! param     := ["self"] ["inreg"] type          (also "inreg self type")
//! uses      := "uses" "(" [implicit ("," implicit)*] ")"
//! implicit  := workitem_id | dispatch_ptr | queue_ptr | kernarg_segment_ptr
//!            | dispatch_id | workgroup_id_x | workgroup_id_y | workgroup_id_z
//!            | implicitarg_ptr | lds_kernel_id
//! ```
//!
//! `type` is the MIR type syntax of [`crate::types`]. Without a `uses(...)` clause
//! the function is assumed to use every implicit input (what an external or
//! recursive function must assume). Errors carry the byte offset of the problem.

use crate::types::{parse_type_prefix, Type, TypeParseError};
use std::fmt;

/// One source-language parameter.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Param {
    pub ty: Type,
    /// Passed in SGPRs (the value is uniform across the wave).
    pub inreg: bool,
    /// The implicit `this`/`self` argument (must be the first parameter, a pointer).
    pub is_self: bool,
}

impl Param {
    /// A plain (VGPR) parameter.
    pub fn new(ty: Type) -> Param {
        Param { ty, inreg: false, is_self: false }
    }

    /// An `inreg` (SGPR) parameter.
    pub fn inreg(ty: Type) -> Param {
        Param { ty, inreg: true, is_self: false }
    }
}

/// The implicit inputs a callable function can receive, in the order the reference
/// text appends them (`LdsKernelId` is LLVM-only and comes last).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ImplicitInput {
    /// Packed work-item id (X bits 9:0, Y 19:10, Z 29:20), one VGPR.
    WorkitemId,
    DispatchPtr,
    QueuePtr,
    KernargSegmentPtr,
    DispatchId,
    WorkgroupIdX,
    WorkgroupIdY,
    WorkgroupIdZ,
    ImplicitArgPtr,
    /// LLVM's LDS kernel id (s15 in the `llvm` convention); not part of amdgpu-cg.
    LdsKernelId,
}

impl ImplicitInput {
    /// The amdgpu-cg inputs in the reference order.
    pub const REFERENCE_ORDER: [ImplicitInput; 9] = [
        ImplicitInput::WorkitemId,
        ImplicitInput::DispatchPtr,
        ImplicitInput::QueuePtr,
        ImplicitInput::KernargSegmentPtr,
        ImplicitInput::DispatchId,
        ImplicitInput::WorkgroupIdX,
        ImplicitInput::WorkgroupIdY,
        ImplicitInput::WorkgroupIdZ,
        ImplicitInput::ImplicitArgPtr,
    ];

    /// Every input, in declaration order.
    pub const ALL: [ImplicitInput; 10] = [
        ImplicitInput::WorkitemId,
        ImplicitInput::DispatchPtr,
        ImplicitInput::QueuePtr,
        ImplicitInput::KernargSegmentPtr,
        ImplicitInput::DispatchId,
        ImplicitInput::WorkgroupIdX,
        ImplicitInput::WorkgroupIdY,
        ImplicitInput::WorkgroupIdZ,
        ImplicitInput::ImplicitArgPtr,
        ImplicitInput::LdsKernelId,
    ];

    /// The stable name used in text, JSON and tables.
    pub fn name(self) -> &'static str {
        match self {
            ImplicitInput::WorkitemId => "workitem_id",
            ImplicitInput::DispatchPtr => "dispatch_ptr",
            ImplicitInput::QueuePtr => "queue_ptr",
            ImplicitInput::KernargSegmentPtr => "kernarg_segment_ptr",
            ImplicitInput::DispatchId => "dispatch_id",
            ImplicitInput::WorkgroupIdX => "workgroup_id_x",
            ImplicitInput::WorkgroupIdY => "workgroup_id_y",
            ImplicitInput::WorkgroupIdZ => "workgroup_id_z",
            ImplicitInput::ImplicitArgPtr => "implicitarg_ptr",
            ImplicitInput::LdsKernelId => "lds_kernel_id",
        }
    }

    /// Number of 32-bit registers the input takes.
    pub fn dwords(self) -> u32 {
        match self {
            ImplicitInput::WorkitemId
            | ImplicitInput::WorkgroupIdX
            | ImplicitInput::WorkgroupIdY
            | ImplicitInput::WorkgroupIdZ
            | ImplicitInput::LdsKernelId => 1,
            _ => 2,
        }
    }

    /// True for the one input that lives in a VGPR (it differs per lane).
    pub fn is_vector(self) -> bool {
        self == ImplicitInput::WorkitemId
    }

    pub fn from_name(name: &str) -> Option<ImplicitInput> {
        ImplicitInput::ALL.into_iter().find(|i| i.name() == name)
    }
}

/// A function signature: parameters in source order, optional result, and the
/// implicit inputs the function (transitively) uses.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Signature {
    pub params: Vec<Param>,
    pub ret: Option<Type>,
    /// Implicit inputs used, `None` = all (external or recursive functions, or
    /// nothing known). Order does not matter: the convention fixes the order.
    pub uses: Option<Vec<ImplicitInput>>,
}

impl Signature {
    /// A signature that uses every implicit input.
    pub fn new(params: Vec<Param>, ret: Option<Type>) -> Signature {
        Signature { params, ret, uses: None }
    }

    /// Whether the function uses `input`.
    pub fn uses(&self, input: ImplicitInput) -> bool {
        self.uses.as_ref().is_none_or(|set| set.contains(&input))
    }

    /// Parses the text syntax (see the module docs).
    pub fn parse(text: &str) -> Result<Signature, TypeParseError> {
        let mut p = SigParser { text, pos: 0 };
        p.expect_word("fn")?;
        p.expect("(")?;
        let mut params = Vec::new();
        if !p.eat(")") {
            loop {
                let mut inreg = false;
                let mut is_self = false;
                loop {
                    if p.eat_word("inreg") {
                        inreg = true;
                    } else if p.eat_word("self") {
                        is_self = true;
                    } else {
                        break;
                    }
                }
                p.skip_space();
                let (ty, used) = parse_type_prefix(&text[p.pos..])
                    .map_err(|e| TypeParseError { offset: e.offset + p.pos, message: e.message })?;
                no_bool_vector(&ty, p.pos)?;
                p.pos += used;
                params.push(Param { ty, inreg, is_self });
                if p.eat(")") {
                    break;
                }
                p.expect(",")?;
            }
        }
        let mut ret = None;
        if p.eat("->") {
            p.skip_space();
            let (ty, used) = parse_type_prefix(&text[p.pos..])
                .map_err(|e| TypeParseError { offset: e.offset + p.pos, message: e.message })?;
            no_bool_vector(&ty, p.pos)?;
            p.pos += used;
            ret = Some(ty);
        }
        let mut uses = None;
        if p.eat_word("uses") {
            p.expect("(")?;
            let mut set = Vec::new();
            if !p.eat(")") {
                loop {
                    p.skip_space();
                    let start = p.pos;
                    let word = p.word();
                    let Some(input) = ImplicitInput::from_name(word) else {
                        return Err(TypeParseError {
                            offset: start,
                            message: format!("unknown implicit input '{word}'"),
                        });
                    };
                    if !set.contains(&input) {
                        set.push(input);
                    }
                    if p.eat(")") {
                        break;
                    }
                    p.expect(",")?;
                }
            }
            set.sort();
            uses = Some(set);
        }
        p.skip_space();
        if p.pos != text.len() {
            return Err(TypeParseError { offset: p.pos, message: "unexpected text after the signature".into() });
        }
        Ok(Signature { params, ret, uses })
    }
}

impl std::str::FromStr for Signature {
    type Err = TypeParseError;
    fn from_str(text: &str) -> Result<Signature, TypeParseError> {
        Signature::parse(text)
    }
}

impl fmt::Display for Param {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_self {
            f.write_str("self ")?;
        }
        if self.inreg {
            f.write_str("inreg ")?;
        }
        write!(f, "{}", self.ty)
    }
}

impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("fn(")?;
        for (i, p) in self.params.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{p}")?;
        }
        f.write_str(")")?;
        if let Some(ret) = &self.ret {
            write!(f, " -> {ret}")?;
        }
        if let Some(uses) = &self.uses {
            f.write_str(" uses(")?;
            for (i, u) in uses.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                f.write_str(u.name())?;
            }
            f.write_str(")")?;
        }
        Ok(())
    }
}

struct SigParser<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> SigParser<'a> {
    fn skip_space(&mut self) {
        let rest = &self.text[self.pos..];
        self.pos += rest.len() - rest.trim_start().len();
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

    fn expect(&mut self, token: &str) -> Result<(), TypeParseError> {
        if self.eat(token) {
            Ok(())
        } else {
            Err(TypeParseError { offset: self.pos, message: format!("expected '{token}'") })
        }
    }

    fn word(&mut self) -> &'a str {
        self.skip_space();
        let rest = &self.text[self.pos..];
        let len = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
        self.pos += len;
        &rest[..len]
    }

    fn eat_word(&mut self, word: &str) -> bool {
        let save = self.pos;
        if self.word() == word {
            true
        } else {
            self.pos = save;
            false
        }
    }

    fn expect_word(&mut self, word: &str) -> Result<(), TypeParseError> {
        self.skip_space();
        let at = self.pos;
        if self.eat_word(word) {
            Ok(())
        } else {
            Err(TypeParseError { offset: at, message: format!("expected '{word}'") })
        }
    }
}

/// Vectors of i1 have no argument form (no calling convention defines one).
fn no_bool_vector(ty: &Type, offset: usize) -> Result<(), TypeParseError> {
    if ty.has_bool_vector() {
        return Err(TypeParseError { offset, message: format!("{ty} cannot be passed or returned: vectors of i1 have no argument form") });
    }
    Ok(())
}
