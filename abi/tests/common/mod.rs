//! Shared test helpers: random signature strategies and independent re-statements
//! of the piece rules (written from docs/abi.md, not from the implementation).
#![allow(dead_code)]

use amdgpu_abi::{AddrSpace, ImplicitInput, Param, Signature, Type};
use proptest::prelude::*;

/// Number of cases: the environment variable `name` if set, else `default`.
pub fn cases(name: &str, default: u32) -> u32 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

pub fn scalar() -> impl Strategy<Value = Type> {
    prop_oneof![1 => Just(Type::I1), 9 => vector_element()]
}

/// Scalars other than i1 (vector elements).
pub fn vector_element() -> impl Strategy<Value = Type> {
    prop_oneof![
        Just(Type::I8),
        Just(Type::I16),
        Just(Type::I32),
        Just(Type::I64),
        Just(Type::F16),
        Just(Type::F32),
        Just(Type::F64),
        proptest::sample::select(AddrSpace::ALL.to_vec()).prop_map(Type::Ptr),
    ]
}

pub fn vector() -> impl Strategy<Value = Type> {
    (vector_element(), 2u8..=4).prop_map(|(e, n)| Type::Vector(Box::new(e), n))
}

pub fn leaf() -> impl Strategy<Value = Type> {
    prop_oneof![3 => scalar(), 1 => vector()]
}

pub fn ty() -> impl Strategy<Value = Type> {
    leaf().prop_recursive(3, 24, 5, |inner| proptest::collection::vec(inner, 1..5).prop_map(Type::Struct))
}

pub fn param() -> impl Strategy<Value = Param> {
    (ty(), proptest::bool::weighted(0.25)).prop_map(|(ty, inreg)| Param { ty, inreg, is_self: false })
}

/// Random signatures; `max_long` bounds the occasional long parameter list.
pub fn signature(max_long: usize) -> impl Strategy<Value = Signature> {
    let params = prop_oneof![
        6 => proptest::collection::vec(param(), 0..12),
        2 => proptest::collection::vec(param(), 12..48),
        1 => proptest::collection::vec(param(), 0..max_long.max(1)),
    ];
    let uses = prop_oneof![
        1 => Just(None),
        2 => proptest::sample::subsequence(ImplicitInput::ALL.to_vec(), 0..=10).prop_map(Some),
    ];
    (
        params,
        proptest::option::weighted(0.7, ty()),
        uses,
        proptest::bool::weighted(0.15),
        proptest::sample::select(AddrSpace::ALL.to_vec()),
    )
        .prop_map(|(mut params, ret, uses, with_self, space)| {
            if with_self {
                params.insert(0, Param { ty: Type::Ptr(space), inreg: false, is_self: true });
            }
            Signature { params, ret, uses }
        })
}

/// Pieces of a leaf, restated from docs/abi.md: 64-bit scalars 2, others 1;
/// 16-bit vectors two elements per piece; i8 vectors one per element.
pub fn expected_pieces(ty: &Type) -> usize {
    match ty {
        Type::Struct(fields) => fields.iter().map(expected_pieces).sum(),
        Type::Vector(e, n) => {
            let n = usize::from(*n);
            match e.bits() {
                16 => n.div_ceil(2),
                64 => 2 * n,
                _ => n,
            }
        }
        s if s.bits() == 64 => 2,
        _ => 1,
    }
}

/// LLVM IR spelling of a type.
pub fn ir_type(ty: &Type) -> String {
    match ty {
        Type::I1 => "i1".into(),
        Type::I8 => "i8".into(),
        Type::I16 => "i16".into(),
        Type::I32 => "i32".into(),
        Type::I64 => "i64".into(),
        Type::F16 => "half".into(),
        Type::F32 => "float".into(),
        Type::F64 => "double".into(),
        Type::Ptr(AddrSpace::Flat) => "ptr".into(),
        Type::Ptr(s) => format!("ptr addrspace({})", s.llvm_number()),
        Type::Vector(e, n) => format!("<{n} x {}>", ir_type(e)),
        Type::Struct(f) => format!("{{{}}}", f.iter().map(ir_type).collect::<Vec<_>>().join(", ")),
    }
}

pub mod ir;
pub mod mir;
