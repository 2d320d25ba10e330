//! Emitting probe IR: a function whose every argument piece is used by an
//! inline-asm `; USE tag` marker (as one i32), and whose result is built from
//! `; DEF tag` markers, one per 32-bit piece.
#![allow(dead_code)]

use super::ir_type;
use amdgpu_abi::{AddrSpace, Type};

pub struct Emitter {
    pub body: String,
    next: usize,
}

impl Emitter {
    pub fn new() -> Emitter {
        Emitter { body: String::new(), next: 0 }
    }

    fn tmp(&mut self) -> String {
        self.next += 1;
        format!("%t{}", self.next)
    }

    fn line(&mut self, s: String) {
        self.body.push_str("  ");
        self.body.push_str(&s);
        self.body.push('\n');
    }

    /// `%x = <rhs>`; returns `%x`.
    fn op(&mut self, rhs: String) -> String {
        let t = self.tmp();
        self.line(format!("{t} = {rhs}"));
        t
    }

    pub fn use_i32(&mut self, v: &str, tag: &str) {
        self.line(format!("call void asm sideeffect \"; USE {tag} $0\", \"v\"(i32 {v})"));
    }

    pub fn def_i32(&mut self, tag: &str) -> String {
        self.op(format!("call i32 asm sideeffect \"; DEF {tag} $0\", \"=v\"()"))
    }

    /// The i32 pieces of scalar `v` of type `ty`.
    fn scalar_pieces(&mut self, v: &str, ty: &Type) -> Vec<String> {
        match ty {
            Type::I1 | Type::I8 | Type::I16 => vec![self.op(format!("zext {} {v} to i32", ir_type(ty)))],
            Type::F16 => {
                let a = self.op(format!("bitcast half {v} to i16"));
                vec![self.op(format!("zext i16 {a} to i32"))]
            }
            Type::I32 => vec![v.to_string()],
            Type::F32 => vec![self.op(format!("bitcast float {v} to i32"))],
            Type::Ptr(s) if s.pointer_bits() == 32 => vec![self.op(format!("ptrtoint {} {v} to i32", ir_type(ty)))],
            Type::I64 | Type::F64 | Type::Ptr(_) => {
                let w = if matches!(ty, Type::Ptr(_)) {
                    self.op(format!("ptrtoint {} {v} to i64", ir_type(ty)))
                } else {
                    v.to_string()
                };
                let src = if matches!(ty, Type::Ptr(_)) { "i64".to_string() } else { ir_type(ty) };
                let b = self.op(format!("bitcast {src} {w} to <2 x i32>"));
                (0..2).map(|k| self.op(format!("extractelement <2 x i32> {b}, i32 {k}"))).collect()
            }
            _ => unreachable!("not a scalar: {ty}"),
        }
    }

    /// The i32 pieces of leaf `v`, in the ABI's piece order.
    pub fn leaf_pieces(&mut self, v: &str, ty: &Type) -> Vec<String> {
        match ty {
            Type::Vector(e, n) => {
                let n = u32::from(*n);
                let vt = ir_type(ty);
                if e.bits() == 16 {
                    let m = n.div_ceil(2);
                    let padded = if n % 2 == 1 {
                        let mask: Vec<String> = (0..=n).map(|k| format!("i32 {k}")).collect();
                        let pt = format!("<{} x {}>", n + 1, ir_type(e));
                        let s = self.op(format!(
                            "shufflevector {vt} {v}, {vt} poison, <{} x i32> <{}>",
                            n + 1,
                            mask.join(", ")
                        ));
                        (s, pt)
                    } else {
                        (v.to_string(), vt.clone())
                    };
                    let b = self.op(format!("bitcast {} {} to <{m} x i32>", padded.1, padded.0));
                    (0..m).map(|k| self.op(format!("extractelement <{m} x i32> {b}, i32 {k}"))).collect()
                } else {
                    let mut out = Vec::new();
                    for k in 0..n {
                        let x = self.op(format!("extractelement {vt} {v}, i32 {k}"));
                        out.extend(self.scalar_pieces(&x, e));
                    }
                    out
                }
            }
            s => self.scalar_pieces(v, s),
        }
    }

    /// All i32 pieces of value `v` of type `ty` (structs field by field).
    pub fn value_pieces(&mut self, v: &str, ty: &Type) -> Vec<String> {
        match ty {
            Type::Struct(fields) => {
                let mut out = Vec::new();
                for (i, f) in fields.iter().enumerate() {
                    let x = self.op(format!("extractvalue {} {v}, {i}", ir_type(ty)));
                    out.extend(self.value_pieces(&x, f));
                }
                out
            }
            leaf => self.leaf_pieces(v, leaf),
        }
    }

    fn scalar_from(&mut self, ty: &Type, p: &mut impl Iterator<Item = String>) -> String {
        match ty {
            Type::I1 | Type::I8 | Type::I16 => {
                let x = p.next().unwrap();
                self.op(format!("trunc i32 {x} to {}", ir_type(ty)))
            }
            Type::F16 => {
                let x = p.next().unwrap();
                let a = self.op(format!("trunc i32 {x} to i16"));
                self.op(format!("bitcast i16 {a} to half"))
            }
            Type::I32 => p.next().unwrap(),
            Type::F32 => {
                let x = p.next().unwrap();
                self.op(format!("bitcast i32 {x} to float"))
            }
            Type::Ptr(s) if s.pointer_bits() == 32 => {
                let x = p.next().unwrap();
                self.op(format!("inttoptr i32 {x} to {}", ir_type(ty)))
            }
            Type::I64 | Type::F64 | Type::Ptr(_) => {
                let lo = p.next().unwrap();
                let hi = p.next().unwrap();
                let a = self.op(format!("insertelement <2 x i32> poison, i32 {lo}, i32 0"));
                let b = self.op(format!("insertelement <2 x i32> {a}, i32 {hi}, i32 1"));
                if let Type::Ptr(_) = ty {
                    let i = self.op(format!("bitcast <2 x i32> {b} to i64"));
                    self.op(format!("inttoptr i64 {i} to {}", ir_type(ty)))
                } else {
                    self.op(format!("bitcast <2 x i32> {b} to {}", ir_type(ty)))
                }
            }
            _ => unreachable!(),
        }
    }

    /// Builds a value of `ty` from i32 pieces.
    pub fn value_from(&mut self, ty: &Type, p: &mut impl Iterator<Item = String>) -> String {
        match ty {
            Type::Struct(fields) => {
                let mut acc = "poison".to_string();
                for (i, f) in fields.iter().enumerate() {
                    let x = self.value_from(f, p);
                    acc = self.op(format!("insertvalue {} {acc}, {} {x}, {i}", ir_type(ty), ir_type(f)));
                }
                acc
            }
            Type::Vector(e, n) => {
                let n = u32::from(*n);
                let vt = ir_type(ty);
                if e.bits() == 16 {
                    let m = n.div_ceil(2);
                    let mut acc = "poison".to_string();
                    for k in 0..m {
                        let x = p.next().unwrap();
                        acc = self.op(format!("insertelement <{m} x i32> {acc}, i32 {x}, i32 {k}"));
                    }
                    let wide = format!("<{} x {}>", 2 * m, ir_type(e));
                    let b = self.op(format!("bitcast <{m} x i32> {acc} to {wide}"));
                    if 2 * m == n {
                        b
                    } else {
                        let mask: Vec<String> = (0..n).map(|k| format!("i32 {k}")).collect();
                        self.op(format!("shufflevector {wide} {b}, {wide} poison, <{n} x i32> <{}>", mask.join(", ")))
                    }
                } else {
                    let mut acc = "poison".to_string();
                    for k in 0..n {
                        let x = self.scalar_from(e, p);
                        acc = self.op(format!("insertelement {vt} {acc}, {} {x}, i32 {k}", ir_type(e)));
                    }
                    acc
                }
            }
            s => self.scalar_from(s, p),
        }
    }
}

/// The private pointer type used for sret and by-reference arguments.
pub fn private_ptr() -> Type {
    Type::Ptr(AddrSpace::Private)
}
