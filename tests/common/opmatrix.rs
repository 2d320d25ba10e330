//! The candidates of the operation-coverage matrix (tests/op_coverage.rs): every
//! operation of the docs/mir.md Instructions table on every type it could
//! plausibly take, each turned into a kernel and a launch whose inputs are the
//! edge values of its types.
//!
//! A candidate is only a guess at the language: the test keeps the ones the
//! verifier accepts, so the matrix follows the language as it grows.
//!
//! Every kernel has the same frame: operands are read from input buffers at a
//! "unit" index, the operation runs once, and the result is written to an output
//! buffer at the work-item's global id. The unit is the global id for
//! [`Operands::Divergent`] and the work-group id for [`Operands::Uniform`]: then
//! each work-group (one wave of 64 lanes, or two on wave32) gets one input tuple,
//! read through `ptr<constant>` so that the uniformity analysis
//! (src/codegen/uniformity.rs: loads through other spaces are divergent) sees the
//! operands as uniform.
//!
//! Operands and results move through memory one scalar at a time (vectors are
//! built with `make` and taken apart with `extract`), so that an operation's row
//! does not depend on vector loads and stores, which have rows of their own.

#![allow(dead_code)]

use std::collections::HashMap;

use amdgpu_cg::mir::interp::ops;
use amdgpu_cg::mir::launch::{format_element, ArgSpec, BufferInit, BufferSpec, LaunchSpec};
use amdgpu_cg::mir::{AddrSpace, Type};

/// Work-items per work-group in every launch but those of [`SHARED_LDS_BLOCK`].
pub const BLOCK: u32 = 64;

/// Work-items per work-group of a uniform kernel whose lanes all access one LDS
/// location: one wave on every target. With two waves (wave32) their stores to
/// that location would race, which the simulator reports as an error.
pub const SHARED_LDS_BLOCK: u32 = 32;

/// Most work-groups a uniform launch uses: each runs 64 work-items on one tuple,
/// so the interpreter's cost is 64 times that of a divergent lane; the tuples
/// are sampled evenly from the divergent launch's.
pub const UNIFORM_UNITS: usize = 128;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operands {
    Uniform,
    Divergent,
}

impl Operands {
    pub const BOTH: [Operands; 2] = [Operands::Uniform, Operands::Divergent];

    pub fn label(self) -> &'static str {
        match self {
            Operands::Uniform => "u",
            Operands::Divergent => "d",
        }
    }
}

/// One operation on one type (a row of the matrix).
#[derive(Clone, Debug)]
pub struct Combination {
    /// The operation as the matrix names it: `add`, `icmp slt`, `trunc`,
    /// `load global`, `atomic add local`, ...
    pub op: String,
    /// The type(s): `i32`, `<4 x f16>`, `i64 to <2 x i32>`.
    pub ty: String,
    shape: Shape,
}

/// How the kernel of a combination is built.
#[derive(Clone, Debug)]
enum Shape {
    /// `%r = INST` where INST refers to the operands as `%a0`, `%a1`, ...
    Compute { inst: String, operands: Vec<Type>, result: Type, inputs: Inputs },
    /// `load T` through a pointer to global, constant or flat memory at the unit.
    Load { space: AddrSpace, ty: Type },
    /// `store T` through a pointer to global or flat memory at the unit.
    Store { space: AddrSpace, ty: Type },
    /// Local and private memory are only observable by loading back what was
    /// stored: `store T` then `load T` through an `lds_slot` or `stack_slot`.
    StoreLoad { space: AddrSpace, ty: Type },
    /// `atomic OP` (or `cmpxchg` when `op` is None) on memory initialised with
    /// operand 0; the old value and the final memory are compared.
    Atomic { op: Option<&'static str>, space: AddrSpace, ty: Type },
    /// `addrspacecast` between flat and local/private: the address values differ
    /// between implementations (the apertures), so the cast pointer is used for
    /// an access instead of being compared.
    ApertureCast { space: AddrSpace, to_flat: bool },
}

/// Which input tuples a combination gets, built from the value sets of its
/// operands' element types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Inputs {
    /// Every edge value of operand 0.
    Each,
    /// A cross product of two smaller sets.
    Pairs,
    /// Operand 0's pairs times exponents that reach every range: normal,
    /// subnormal, overflow, and beyond any format (`ldexp`).
    Exponents,
    /// Pairs without undefined divisors (0; -1 under MIN for the signed ones).
    Divisions { signed: bool },
    /// A cross product of three sets, plus tuples where one rounding matters.
    Triples,
    /// Integer ternaries: operands around the 24-bit edges, times shift
    /// amounts at and beyond the width.
    IntTriples,
    /// Both conditions times pairs.
    Select,
    /// (memory, operand) pairs for atomics.
    AtomicPairs,
    /// (memory, expected, new) with expected = memory in half of them.
    CmpXchg,
}

// ---------------------------------------------------------------- types

pub fn scalar_int_types() -> Vec<Type> {
    vec![Type::I8, Type::I16, Type::I32, Type::I64]
}

pub fn float_types() -> Vec<Type> {
    vec![Type::F16, Type::F32, Type::F64]
}

pub fn pointer_types() -> Vec<Type> {
    [AddrSpace::Global, AddrSpace::Constant, AddrSpace::Local, AddrSpace::Private, AddrSpace::Flat].into_iter().map(Type::Ptr).collect()
}

fn vectors_of(elems: &[Type]) -> Vec<Type> {
    let mut out = Vec::new();
    for n in [2u8, 3, 4] {
        for e in elems {
            out.push(Type::Vector(Box::new(e.clone()), n));
        }
    }
    out
}

/// Integers in scalar and vector forms (with `i1` and `<N x i1>` when `with_i1`).
fn int_types(with_i1: bool) -> Vec<Type> {
    let mut elems = scalar_int_types();
    if with_i1 {
        elems.insert(0, Type::I1);
    }
    let mut out = elems.clone();
    out.extend(vectors_of(&elems));
    out
}

fn float_and_vector_types() -> Vec<Type> {
    let mut out = float_types();
    out.extend(vectors_of(&float_types()));
    out
}

/// Every scalar (i1, integers, floats, pointers) and every vector of `i1`,
/// integers and floats.
pub fn value_types() -> Vec<Type> {
    let mut out = vec![Type::I1];
    out.extend(scalar_int_types());
    out.extend(float_types());
    out.extend(pointer_types());
    let mut elems = vec![Type::I1];
    elems.extend(scalar_int_types());
    elems.extend(float_types());
    out.extend(vectors_of(&elems));
    out
}

/// The result of a compare on `ty`: `i1`, or a vector of `i1` for vector forms
/// (not a type of today's language, so such candidates do not verify).
fn compare_result(ty: &Type) -> Type {
    match ty {
        Type::Vector(_, n) => Type::Vector(Box::new(Type::I1), *n),
        _ => Type::I1,
    }
}

// ---------------------------------------------------------------- candidates

// The arithmetic rows come from the language itself (every operation the
// parser knows), so a new operation joins the matrix without being listed here.
pub fn int_binary() -> Vec<&'static str> {
    amdgpu_cg::mir::BinOp::ALL.iter().filter(|o| !o.is_float()).map(|o| o.mnemonic()).collect()
}
pub fn float_binary() -> Vec<&'static str> {
    amdgpu_cg::mir::BinOp::ALL.iter().filter(|o| o.is_float()).map(|o| o.mnemonic()).collect()
}
pub fn int_unary() -> Vec<&'static str> {
    amdgpu_cg::mir::UnOp::ALL.iter().filter(|o| !o.is_float()).map(|o| o.mnemonic()).collect()
}
pub fn float_unary() -> Vec<&'static str> {
    amdgpu_cg::mir::UnOp::ALL.iter().filter(|o| o.is_float()).map(|o| o.mnemonic()).collect()
}
pub const INT_PREDICATES: [&str; 10] = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"];
pub const FLOAT_PREDICATES: [&str; 14] = ["oeq", "one", "olt", "ole", "ogt", "oge", "ord", "ueq", "une", "ult", "ule", "ugt", "uge", "uno"];
pub const CASTS: [&str; 13] =
    ["trunc", "zext", "sext", "fptrunc", "fpext", "fptoui", "fptosi", "uitofp", "sitofp", "bitcast", "ptrtoint", "inttoptr", "addrspacecast"];
pub const ATOMICS: [&str; 10] = ["add", "sub", "smin", "smax", "umin", "umax", "and", "or", "xor", "xchg"];

fn compute(op: &str, ty: String, inst: String, operands: Vec<Type>, result: Type, inputs: Inputs) -> Combination {
    Combination { op: op.to_string(), ty, shape: Shape::Compute { inst, operands, result, inputs } }
}

/// Every candidate, in matrix order. Each family is tried on its documented
/// types and on the obvious extensions (vectors, `i1`), which the verifier
/// sorts out.
pub fn candidates() -> Vec<Combination> {
    let mut out = Vec::new();
    for op in int_binary() {
        let inputs = match op {
            "sdiv" | "srem" => Inputs::Divisions { signed: true },
            "udiv" | "urem" => Inputs::Divisions { signed: false },
            _ => Inputs::Pairs,
        };
        for ty in int_types(true) {
            out.push(compute(op, ty.to_string(), format!("{op} {ty} %a0, %a1"), vec![ty.clone(), ty.clone()], ty, inputs));
        }
    }
    for op in float_binary() {
        let bop = amdgpu_cg::mir::BinOp::ALL.into_iter().find(|b| b.mnemonic() == op).expect("a binary operation");
        let inputs = if bop == amdgpu_cg::mir::BinOp::Ldexp { Inputs::Exponents } else { Inputs::Pairs };
        for ty in float_and_vector_types() {
            out.push(compute(op, ty.to_string(), format!("{op} {ty} %a0, %a1"), vec![ty.clone(), bop.rhs_type(&ty)], ty, inputs));
        }
    }
    for ty in float_and_vector_types() {
        out.push(compute("fma", ty.to_string(), format!("fma {ty} %a0, %a1, %a2"), vec![ty.clone(); 3], ty, Inputs::Triples));
    }
    for op in amdgpu_cg::mir::TernOp::ALL.map(|t| t.mnemonic()) {
        for ty in int_types(true) {
            out.push(compute(op, ty.to_string(), format!("{op} {ty} %a0, %a1, %a2"), vec![ty.clone(); 3], ty, Inputs::IntTriples));
        }
    }
    for op in int_unary() {
        for ty in int_types(true) {
            out.push(compute(op, ty.to_string(), format!("{op} {ty} %a0"), vec![ty.clone()], ty, Inputs::Each));
        }
    }
    for op in float_unary() {
        for ty in float_and_vector_types() {
            out.push(compute(op, ty.to_string(), format!("{op} {ty} %a0"), vec![ty.clone()], ty, Inputs::Each));
        }
    }
    let mut icmp_types = int_types(false);
    icmp_types.extend(pointer_types());
    for pred in INT_PREDICATES {
        for ty in &icmp_types {
            let op = format!("icmp {pred}");
            out.push(compute(&op, ty.to_string(), format!("{op} {ty} %a0, %a1"), vec![ty.clone(), ty.clone()], compare_result(ty), Inputs::Pairs));
        }
    }
    for pred in FLOAT_PREDICATES {
        for ty in float_and_vector_types() {
            let op = format!("fcmp {pred}");
            out.push(compute(&op, ty.to_string(), format!("{op} {ty} %a0, %a1"), vec![ty.clone(), ty.clone()], compare_result(&ty), Inputs::Pairs));
        }
    }
    for ty in value_types() {
        out.push(compute("select", ty.to_string(), format!("select {ty} %a0, %a1, %a2"), vec![Type::I1, ty.clone(), ty.clone()], ty.clone(), Inputs::Select));
        // Element by element, on a vector condition.
        if let Type::Vector(_, n) = &ty {
            let condition = Type::Vector(Box::new(Type::I1), *n);
            let label = format!("{ty} on {condition}");
            out.push(compute("select", label, format!("select {ty} %a0, %a1, %a2"), vec![condition, ty.clone(), ty.clone()], ty, Inputs::Select));
        }
    }
    for op in CASTS {
        for from in value_types() {
            for to in value_types() {
                // Only bitcast may change the number of elements.
                if op != "bitcast" && from.lanes() != to.lanes() {
                    continue;
                }
                let ty = format!("{from} to {to}");
                let aperture_space = match (&from, &to) {
                    (Type::Ptr(AddrSpace::Flat), Type::Ptr(s @ (AddrSpace::Local | AddrSpace::Private))) => Some((*s, false)),
                    (Type::Ptr(s @ (AddrSpace::Local | AddrSpace::Private)), Type::Ptr(AddrSpace::Flat)) => Some((*s, true)),
                    _ => None,
                };
                match aperture_space {
                    Some((space, to_flat)) if op == "addrspacecast" => {
                        out.push(Combination { op: op.to_string(), ty, shape: Shape::ApertureCast { space, to_flat } })
                    }
                    _ => out.push(compute(op, ty, format!("{op} {from} %a0 to {to}"), vec![from.clone()], to.clone(), Inputs::Each)),
                }
            }
        }
    }
    let memory_types: Vec<Type> = value_types();
    let spaces = [AddrSpace::Global, AddrSpace::Constant, AddrSpace::Flat];
    for space in spaces {
        for ty in &memory_types {
            out.push(Combination { op: format!("load {}", space.keyword()), ty: ty.to_string(), shape: Shape::Load { space, ty: ty.clone() } });
        }
    }
    for space in spaces {
        for ty in &memory_types {
            out.push(Combination { op: format!("store {}", space.keyword()), ty: ty.to_string(), shape: Shape::Store { space, ty: ty.clone() } });
        }
    }
    for space in [AddrSpace::Local, AddrSpace::Private] {
        for ty in &memory_types {
            let op = format!("load/store {}", space.keyword());
            out.push(Combination { op, ty: ty.to_string(), shape: Shape::StoreLoad { space, ty: ty.clone() } });
        }
    }
    let atomic_ops: Vec<Option<&'static str>> = ATOMICS.into_iter().map(Some).chain([None]).collect();
    for op in atomic_ops {
        for space in [AddrSpace::Global, AddrSpace::Local, AddrSpace::Flat, AddrSpace::Private] {
            for ty in scalar_int_types() {
                let name = match op {
                    Some(o) => format!("atomic {o} {}", space.keyword()),
                    None => format!("cmpxchg {}", space.keyword()),
                };
                out.push(Combination { op: name, ty: ty.to_string(), shape: Shape::Atomic { op, space, ty } });
            }
        }
    }
    out
}

// ---------------------------------------------------------------- input values

/// Bit patterns of one scalar type, for each use.
#[derive(Clone, Debug, Default)]
struct ValueSets {
    /// Edge values: every unary operation and conversion gets all of them.
    each: Vec<u64>,
    /// A smaller set for the sides of a cross product of two.
    pair: Vec<u64>,
    /// A still smaller set for three operands (fma).
    triple: Vec<u64>,
    /// For select's and the atomics' operands.
    few: Vec<u64>,
}

/// The value sets of every scalar type, made once.
pub struct InputTable {
    sets: HashMap<Type, ValueSets>,
}

fn dedup(values: impl IntoIterator<Item = u64>) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::new();
    for v in values {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

fn int_sets(bits: u32) -> ValueSets {
    let m = ops::mask(bits);
    let min = 1u64 << (bits - 1);
    let max = min - 1;
    let w = u64::from(bits);
    let neg = |v: u64| v.wrapping_neg();
    let pattern55 = 0x5555_5555_5555_5555u64;
    let each = [
        0, 1, 2, 3, 7, neg(1), neg(2), neg(7), min, min + 1, max, max - 1, pattern55, !pattern55, 12345, neg(12345),
        0x0123_4567_89ab_cdef, 0xfedc_ba98_7654_3210, 100, 255, 256, 0x8000, 0x7fff_ffff, 0x8000_0000,
        // Shift amounts at and beyond the width.
        w - 1, w, w + 1, 2 * w + 1,
        // Conversions: rounding to f16 (2049, 65519, 65520), to f32 (2^24 + 1, + 3)
        // and to f64 (2^53 + 1).
        2049, 65519, 65520, 0x100_0001, 0x100_0003, 0x20_0000_0000_0001,
        // i64 -> f32 just above a tie, where rounding through f64 first lands on
        // the tie (2^63 + 2^39 + 1, 2^62 + 2^38 + 1), and i64 -> f64 above a tie.
        0x8000_0080_0000_0001, 0x4000_0040_0000_0001, neg(0x4000_0040_0000_0001), 0x8000_0000_0000_0401, 0x4000_0000_0000_0201,
    ];
    let pair = [0, 1, 2, 7, neg(1), neg(7), min, min + 1, max, pattern55, 12345, neg(12345), w - 1, w, w + 1];
    let few = [0, 1, neg(1), min, max, 7, pattern55, neg(12345)];
    let masked = |v: &[u64]| dedup(v.iter().map(|x| x & m));
    ValueSets { each: masked(&each), pair: masked(&pair), triple: masked(&pair[..6]), few: masked(&few) }
}

/// The bits of a float of type `ty` closest to `v`.
fn float_bits(ty: &Type, v: f64) -> u64 {
    ops::from_f64(ty, v)
}

fn float_sets(ty: &Type) -> ValueSets {
    // Per format: largest finite, smallest normal, smallest subnormal, a mid
    // subnormal, a signalling NaN, a negative quiet NaN.
    let (max, min_normal, min_sub, mid_sub, snan, neg_qnan) = match ty {
        Type::F16 => (0x7bffu64, 0x0400u64, 0x0001u64, 0x0155u64, 0x7d00u64, 0xfe00u64),
        Type::F32 => (0x7f7f_ffff, 0x0080_0000, 1, 0x0025_5555, 0x7fa0_0000, 0xffc0_0000),
        _ => (0x7fef_ffff_ffff_ffff, 0x0010_0000_0000_0000, 1, 0x0005_5555_5555_5555, 0x7ff4_0000_0000_0000, 0xfff8_0000_0000_0000),
    };
    let sign = 1u64 << (ty.bits() - 1);
    let qnan = ops::canonical_nan(ty);
    let f = |v: f64| float_bits(ty, v);
    let two = |e: i32| f(2f64.powi(e));
    let each = [
        f(0.0), f(-0.0), f(1.0), f(-1.0), f(0.5), f(-0.5), f(1.5), f(2.5), f(-2.5), f(3.5), f(0.1), f(-1.0 / 3.0), f(100.75),
        max, max | sign, min_normal, min_normal | sign, min_sub, min_sub | sign, mid_sub,
        f(f64::INFINITY), f(f64::NEG_INFINITY), qnan, neg_qnan, snan,
        // Conversions: saturation and rounding at the integer widths.
        f(127.5), f(-128.5), f(255.9), f(256.0), f(-129.0), f(32767.5), f(-32768.75), f(65535.5), f(65504.0), f(-65504.0),
        f(1e10), f(3e9), f(-3e9), two(31), f(-(2f64.powi(31))), f(2f64.powi(31) - 128.0), two(32), f(4294967295.0),
        two(63), f(-(2f64.powi(63))), two(64), f(1e20), f(1e-5), f(16777217.0), f(9007199254740993.0),
        f(2f64.powi(63) - 1024.0), f(2f64.powi(64) - 2048.0), f(4294967295.5), f(2147483647.5), f(-2147483648.5), f(-2147483649.0),
        f(0.99), f(-0.99), f(65535.99),
        // Narrowing just above a tie of the narrower format, where rounding
        // through an intermediate format first lands on the tie.
        f(1.0 + 2f64.powi(-24) + 2f64.powi(-50)), f(1.0 + 2f64.powi(-11) + 2f64.powi(-40)), f(1.0 + 2f64.powi(-11) + 2f64.powi(-20)),
    ];
    let pair = [f(0.0), f(-0.0), f(1.0), f(-1.0), f(0.5), f(1.5), f(-2.5), f(3.0), f(0.1), max, min_normal, min_sub, f(f64::INFINITY), f(f64::NEG_INFINITY), qnan, snan];
    let triple = [f(-0.0), f(1.0), f(-1.5), f(0.1), max, min_sub, f(f64::INFINITY), qnan];
    let few = [f(0.0), f(-0.0), f(1.0), f(-2.5), f(f64::INFINITY), qnan, snan, mid_sub];
    ValueSets { each: dedup(each), pair: dedup(pair), triple: dedup(triple), few: dedup(few) }
}

/// Pointer values: arbitrary addresses (never dereferenced), clear of the
/// interpreter's flat apertures so that flat -> global casts are defined.
fn pointer_sets(bits: u32) -> ValueSets {
    let each: Vec<u64> = if bits == 64 {
        vec![0, 1, 0x1000, 0xffff_ffff, 0x1_0000_0000, 0x7fff_ffff_ffff_ffff, 0x8000_0000_0000_0000, u64::MAX, 0x0000_7f12_3456_7890, 0x1234_5678]
    } else {
        vec![0, 1, 0x1000, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff, 0x1234_5678, 0xfff0]
    };
    ValueSets { pair: each.clone(), triple: each[..4].to_vec(), few: each[..6].to_vec(), each }
}

/// The fma tuples where a fused and an unfused result differ:
/// (1 + u)(1 - u) - 1 = -u^2, which a rounded product loses.
fn fma_rounding_tuples(ty: &Type) -> Vec<Vec<u64>> {
    let m = match ty {
        Type::F16 => 10,
        Type::F32 => 23,
        _ => 52,
    };
    let u = 2f64.powi(-m);
    let f = |v: f64| float_bits(ty, v);
    vec![
        vec![f(1.0 + u), f(1.0 - u), f(-1.0)],
        vec![f(1.0 + u), f(1.0 + u), f(-(1.0 + 2.0 * u))],
        vec![f(3.0), f(1.0 / 3.0), f(-1.0)],
    ]
}

impl InputTable {
    pub fn new() -> InputTable {
        let mut sets = HashMap::new();
        sets.insert(Type::I1, ValueSets { each: vec![0, 1], pair: vec![0, 1], triple: vec![0, 1], few: vec![0, 1] });
        for ty in scalar_int_types() {
            sets.insert(ty.clone(), int_sets(ty.bits()));
        }
        for ty in float_types() {
            sets.insert(ty.clone(), float_sets(&ty));
        }
        for ty in pointer_types() {
            sets.insert(ty.clone(), pointer_sets(ty.bits()));
        }
        InputTable { sets }
    }

    fn sets(&self, ty: &Type) -> &ValueSets {
        self.sets.get(ty.element()).unwrap_or_else(|| panic!("no input values for {ty}"))
    }

    /// The input tuples (one scalar per operand) of a combination.
    fn tuples(&self, inputs: Inputs, operands: &[Type]) -> Vec<Vec<u64>> {
        let cross = |a: &[u64], b: &[u64]| -> Vec<Vec<u64>> { a.iter().flat_map(|&x| b.iter().map(move |&y| vec![x, y])).collect() };
        match inputs {
            Inputs::Each => self.sets(&operands[0]).each.iter().map(|&v| vec![v]).collect(),
            Inputs::Pairs => {
                let (a, b) = (self.sets(&operands[0]), self.sets(&operands[1]));
                cross(&a.pair, &b.pair)
            }
            Inputs::Exponents => {
                let exponents: Vec<u64> = [0i32, 1, -1, 7, -20, 30, -126, -130, -149, 127, 128, -1022, -1030, -1074, 1023, 1100, -1100, i32::MAX, i32::MIN]
                    .iter()
                    .map(|&e| u64::from(e as u32))
                    .collect();
                cross(&self.sets(&operands[0]).pair, &exponents)
            }
            Inputs::Divisions { signed } => {
                let ty = operands[0].element();
                let sets = self.sets(ty);
                let bits = ty.bits();
                let min = 1u64 << (bits - 1);
                let minus_one = ops::mask(bits);
                cross(&sets.pair, &sets.pair)
                    .into_iter()
                    .map(|mut t| {
                        // Division by zero and MIN / -1 are undefined: divide by 3 and 2 instead.
                        if t[1] == 0 {
                            t[1] = 3;
                        }
                        if signed && t[0] == min && t[1] == minus_one {
                            t[1] = 2;
                        }
                        t
                    })
                    .collect()
            }
            Inputs::IntTriples => {
                let ty = operands[0].element();
                let (w, m) = (u64::from(ty.bits()), ops::mask(ty.bits()));
                let mut ab = self.sets(ty).few.clone();
                ab.extend([0x7f_ffff, 0x80_0000, 0xff_ffff, 0x1ff_ffff, 0xff80_0000].map(|v: u64| v & m));
                let amounts = [0, 1, 7, w - 1, w, w + 1, 2 * w + 1, m, 0x80_0001 & m];
                let mut out = Vec::new();
                for &a in &ab {
                    for &b in &ab {
                        out.extend(amounts.iter().map(|&c| vec![a, b, c]));
                    }
                }
                out
            }
            Inputs::Triples => {
                let s = &self.sets(&operands[0]).triple;
                let mut out: Vec<Vec<u64>> =
                    s.iter().flat_map(|&a| s.iter().flat_map(move |&b| s.iter().map(move |&c| vec![a, b, c]))).collect();
                if operands[0].element().is_float() {
                    out.extend(fma_rounding_tuples(operands[0].element()));
                }
                out
            }
            Inputs::Select => {
                let s = &self.sets(&operands[1]).few;
                [0u64, 1].iter().flat_map(|&c| s.iter().flat_map(move |&a| s.iter().map(move |&b| vec![c, a, b]))).collect()
            }
            Inputs::AtomicPairs => {
                let s = &self.sets(&operands[0]).few;
                cross(s, s)
            }
            Inputs::CmpXchg => {
                let s = &self.sets(&operands[0]).few;
                let n = s.len();
                let mut out = Vec::new();
                for (i, &memory) in s.iter().enumerate() {
                    for j in 0..n {
                        let expected = if j % 2 == 0 { memory } else { s[(i + j) % n] };
                        out.push(vec![memory, expected, s[(i + j + 3) % n]]);
                    }
                }
                out
            }
        }
    }
}

impl Default for InputTable {
    fn default() -> Self {
        InputTable::new()
    }
}

// ---------------------------------------------------------------- kernels

/// The element type a buffer holds for values of scalar type `elem`: `i1` as
/// i32 0/1, pointers as integers of their width.
fn storage_type(elem: &Type) -> Type {
    match elem {
        Type::I1 => Type::I32,
        Type::Ptr(_) if elem.bits() == 64 => Type::I64,
        Type::Ptr(_) => Type::I32,
        other => other.clone(),
    }
}

/// Elements of a buffer that one value of `ty` occupies in memory (`<3 x T>`
/// takes 4).
fn memory_elements(ty: &Type) -> usize {
    (ty.size() / storage_type(ty.element()).size()) as usize
}

/// A kernel under construction.
struct KernelText {
    params: Vec<String>,
    entry: Vec<String>,
    next: usize,
}

impl KernelText {
    fn new() -> KernelText {
        let entry = ["%lid = workitem_id x", "%wg = workgroup_id x", "%size = workgroup_size x", "%gbase = mul i32 %wg, %size", "%gid = add i32 %gbase, %lid"];
        KernelText { params: Vec::new(), entry: entry.iter().map(|s| s.to_string()).collect(), next: 0 }
    }

    fn fresh(&mut self, stem: &str) -> String {
        self.next += 1;
        format!("%{stem}{}", self.next)
    }

    fn line(&mut self, text: impl Into<String>) {
        self.entry.push(text.into());
    }

    /// `ptradd base, index * stride` (+ `extra` bytes).
    fn address(&mut self, base: &str, index: &str, stride: u32, extra: u32) -> String {
        let offset = self.fresh("off");
        self.line(format!("{offset} = mul i32 {index}, {stride}"));
        let mut p = self.fresh("p");
        self.line(format!("{p} = ptradd {base}, {offset}"));
        if extra > 0 {
            let q = self.fresh("p");
            self.line(format!("{q} = ptradd {p}, {extra}"));
            p = q;
        }
        p
    }

    /// Reads a value of type `ty` from buffer `buffer` (scalars of its storage
    /// type, `ty.lanes()` per unit) and converts it to `ty`.
    fn read_operand(&mut self, buffer: &str, space: AddrSpace, ty: &Type, unit: &str) -> String {
        self.params.push(format!("%{buffer}: ptr<{}>", space.keyword()));
        let elem = ty.element().clone();
        let storage = storage_type(&elem);
        let lanes = ty.lanes();
        let mut parts = Vec::new();
        for e in 0..lanes {
            let p = self.address(&format!("%{buffer}"), unit, lanes * storage.size(), e * storage.size());
            let raw = self.fresh("x");
            self.line(format!("{raw} = load {storage} {p}"));
            let value = match &elem {
                Type::I1 => {
                    let v = self.fresh("b");
                    self.line(format!("{v} = icmp ne i32 {raw}, 0"));
                    v
                }
                Type::Ptr(_) => {
                    let v = self.fresh("ptr");
                    self.line(format!("{v} = inttoptr {storage} {raw} to {elem}"));
                    v
                }
                _ => raw,
            };
            parts.push(value);
        }
        if let Type::Vector(..) = ty {
            let v = self.fresh("vec");
            self.line(format!("{v} = make {ty} {}", parts.join(", ")));
            v
        } else {
            parts.pop().unwrap()
        }
    }

    /// Writes `value` (of type `ty`) to buffer `buffer` at `%gid`, element by
    /// element in its storage type.
    fn write_result(&mut self, buffer: &str, ty: &Type, value: &str) {
        self.params.push(format!("%{buffer}: ptr<global>"));
        let elem = ty.element().clone();
        let storage = storage_type(&elem);
        let lanes = ty.lanes();
        for e in 0..lanes {
            let scalar = if let Type::Vector(..) = ty {
                let x = self.fresh("e");
                self.line(format!("{x} = extract {value}, {e}"));
                x
            } else {
                value.to_string()
            };
            let stored = match &elem {
                Type::I1 => {
                    let x = self.fresh("z");
                    self.line(format!("{x} = select i32 {scalar}, 1, 0"));
                    x
                }
                Type::Ptr(_) => {
                    let x = self.fresh("i");
                    self.line(format!("{x} = ptrtoint {elem} {scalar} to {storage}"));
                    x
                }
                _ => scalar,
            };
            let p = self.address(&format!("%{buffer}"), "%gid", lanes * storage.size(), e * storage.size());
            self.line(format!("store {storage} {stored}, {p}"));
        }
    }

    fn finish(self) -> String {
        let mut text = format!("kernel @k({}) {{\nentry:\n", self.params.join(", "));
        for line in self.entry {
            text.push_str("  ");
            text.push_str(&line);
            text.push('\n');
        }
        text.push_str("  ret\n}\n");
        text
    }
}

/// A buffer of the launch and what one unit's share of it is.
struct Buffer {
    name: String,
    ty: Type,
    elements: Vec<u64>,
    /// Elements that belong to one unit (for naming the inputs of a mismatch).
    per_unit: usize,
}

/// A kernel with its launch, ready to run on the interpreter and the simulator.
pub struct Case {
    pub text: String,
    pub spec: LaunchSpec,
    /// Per buffer: elements per unit, to find the unit of a differing element.
    pub per_unit: Vec<(String, usize)>,
    /// Per unit: its inputs, as text.
    pub unit_inputs: Vec<String>,
    /// Per unit: each operand's element values (bits).
    pub unit_values: Vec<Vec<Vec<u64>>>,
}

impl Case {
    /// The inputs behind element `index` of buffer `buffer`.
    pub fn inputs_of(&self, buffer: &str, index: usize) -> String {
        let per_unit = self.per_unit.iter().find(|(b, _)| b == buffer).map_or(1, |(_, n)| *n).max(1);
        self.unit_inputs.get(index / per_unit).cloned().unwrap_or_default()
    }
}

fn describe(ty: &Type, bits: u64) -> String {
    let storage = storage_type(ty);
    let text = format_element(&storage, bits);
    if ty.is_float() || matches!(ty, Type::Ptr(_)) {
        format!("{text}(0x{bits:x})")
    } else {
        text
    }
}

impl Combination {
    /// Operand types, the tuple kind and the space the inputs are read through.
    fn operand_types(&self) -> (Vec<Type>, Inputs) {
        match &self.shape {
            Shape::Compute { operands, inputs, .. } => (operands.clone(), *inputs),
            Shape::Load { ty, .. } | Shape::Store { ty, .. } | Shape::StoreLoad { ty, .. } => (vec![ty.clone()], Inputs::Each),
            Shape::Atomic { op: Some(_), ty, .. } => (vec![ty.clone(), ty.clone()], Inputs::AtomicPairs),
            Shape::Atomic { op: None, ty, .. } => (vec![ty.clone(); 3], Inputs::CmpXchg),
            Shape::ApertureCast { .. } => (vec![Type::I32], Inputs::Each),
        }
    }

    /// Work-items per work-group.
    fn block(&self, operands: Operands) -> u32 {
        let shares_lds = match &self.shape {
            Shape::StoreLoad { space, .. } | Shape::Atomic { space, .. } | Shape::ApertureCast { space, .. } => *space == AddrSpace::Local,
            _ => false,
        };
        if shares_lds && operands == Operands::Uniform {
            SHARED_LDS_BLOCK
        } else {
            BLOCK
        }
    }

    /// The kernel's text (it does not depend on the input values).
    pub fn kernel_text(&self, operands: Operands) -> String {
        let mut k = KernelText::new();
        let unit = match operands {
            Operands::Uniform => "%wg",
            Operands::Divergent => "%gid",
        };
        let input_space = match operands {
            Operands::Uniform => AddrSpace::Constant,
            Operands::Divergent => AddrSpace::Global,
        };
        match &self.shape {
            Shape::Compute { inst, operands: types, result, .. } => {
                let mut inst = inst.clone();
                // Read the operands, then name them in the instruction (%a10
                // would clash with %a1, but there are at most 3).
                for (i, ty) in types.iter().enumerate() {
                    let v = k.read_operand(&format!("in{i}"), input_space, ty, unit);
                    inst = inst.replace(&format!("%a{i}"), &v);
                }
                k.line(format!("%r = {inst}"));
                k.write_result("out", result, "%r");
            }
            Shape::Load { space, ty } => {
                k.params.push(format!("%src: ptr<{}>", space.keyword()));
                let p = k.address("%src", unit, ty.size(), 0);
                k.line(format!("%r = load {ty} {p}"));
                k.write_result("out", ty, "%r");
            }
            Shape::Store { space, ty } => {
                let v = k.read_operand("in0", input_space, ty, unit);
                k.params.push(format!("%dst: ptr<{}>", space.keyword()));
                let p = k.address("%dst", unit, ty.size(), 0);
                k.line(format!("store {ty} {v}, {p}"));
            }
            Shape::StoreLoad { space, ty } => {
                let v = k.read_operand("in0", input_space, ty, unit);
                let p = slot_address(&mut k, *space, ty.size(), ty.align(), operands);
                k.line(format!("store {ty} {v}, {p}"));
                k.line(format!("%r = load {ty} {p}"));
                k.write_result("out", ty, "%r");
            }
            Shape::Atomic { op, space, ty } => {
                let in_buffer = matches!(space, AddrSpace::Global | AddrSpace::Flat | AddrSpace::Constant);
                let p = if in_buffer {
                    k.params.push(format!("%mem: ptr<{}>", space.keyword()));
                    k.address("%mem", unit, ty.size(), 0)
                } else {
                    let initial = k.read_operand("in0", input_space, ty, unit);
                    let p = slot_address(&mut k, *space, ty.size(), ty.align(), operands);
                    k.line(format!("store {ty} {initial}, {p}"));
                    p
                };
                // Uniform: every lane of the group works on one location; the
                // barriers make every lane's initial store precede every atomic
                // and every atomic precede the final loads, as on the hardware.
                let shared_slot = !in_buffer && operands == Operands::Uniform;
                if shared_slot {
                    k.line("barrier");
                }
                let b = k.read_operand("in1", input_space, ty, unit);
                match op {
                    Some(op) => k.line(format!("%old = atomic {op} {ty} {p}, {b}")),
                    None => {
                        let c = k.read_operand("in2", input_space, ty, unit);
                        k.line(format!("%old = cmpxchg {ty} {p}, {b}, {c}"));
                    }
                }
                k.write_result("out", ty, "%old");
                if !in_buffer {
                    if shared_slot {
                        k.line("barrier");
                    }
                    // (Parameters are named after their buffers: the value needs another name.)
                    k.line(format!("%updated = load {ty} {p}"));
                    k.write_result("after", ty, "%updated");
                }
            }
            Shape::ApertureCast { space, to_flat } => {
                let v = k.read_operand("in0", input_space, &Type::I32, unit);
                let p = slot_address(&mut k, *space, 4, 4, operands);
                let s = space.keyword();
                k.line(format!("%flat = addrspacecast ptr<{s}> {p} to ptr"));
                let through = if *to_flat {
                    "%flat".to_string()
                } else {
                    k.line(format!("%back = addrspacecast ptr %flat to ptr<{s}>"));
                    "%back".to_string()
                };
                k.line(format!("store i32 {v}, {through}"));
                k.line(format!("%r = load i32 {p}"));
                k.write_result("out", &Type::I32, "%r");
            }
        }
        k.finish()
    }

    /// The kernel and its launch.
    pub fn case(&self, operands: Operands, table: &InputTable) -> Case {
        let (types, inputs) = self.operand_types();
        let tuples = table.tuples(inputs, &types);
        let lanes = types.iter().map(Type::lanes).max().unwrap_or(1) as usize;
        // A unit takes `lanes` consecutive tuples: element e of a vector operand
        // comes from tuple e, a scalar operand (select's condition) from tuple 0.
        let all_units = tuples.len().div_ceil(lanes);
        let (units, groups, source_unit): (usize, usize, Box<dyn Fn(usize) -> usize>) = match operands {
            Operands::Divergent => {
                let units = all_units.next_multiple_of(BLOCK as usize);
                (units, units / BLOCK as usize, Box::new(move |u| u % all_units))
            }
            Operands::Uniform => {
                let units = all_units.min(UNIFORM_UNITS);
                (units, units, Box::new(move |u| u * all_units / units))
            }
        };
        let block = self.block(operands) as usize;
        let work_items = groups * block;
        // Operand values: unit -> operand -> elements.
        let unit_values: Vec<Vec<Vec<u64>>> = (0..units)
            .map(|u| {
                let first = source_unit(u) * lanes;
                types
                    .iter()
                    .enumerate()
                    .map(|(k, ty)| (0..ty.lanes() as usize).map(|e| tuples[(first + e) % tuples.len()][k]).collect())
                    .collect()
            })
            .collect();
        let unit_inputs: Vec<String> = unit_values
            .iter()
            .map(|ops| {
                ops.iter()
                    .zip(&types)
                    .enumerate()
                    .map(|(k, (elems, ty))| {
                        let items: Vec<String> = elems.iter().map(|&b| describe(ty.element(), b)).collect();
                        if items.len() == 1 {
                            format!("op{k}={}", items[0])
                        } else {
                            format!("op{k}=<{}>", items.join(", "))
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        let per_lane_outputs = |ty: &Type| -> usize {
            match operands {
                Operands::Uniform => block * ty.lanes() as usize,
                Operands::Divergent => ty.lanes() as usize,
            }
        };
        let operand_buffer = |k: usize, ty: &Type| Buffer {
            name: format!("in{k}"),
            ty: storage_type(ty.element()),
            elements: unit_values.iter().flat_map(|ops| ops[k].clone()).collect(),
            per_unit: ty.lanes() as usize,
        };
        let output_buffer = |name: &str, ty: &Type| Buffer {
            name: name.to_string(),
            ty: storage_type(ty.element()),
            elements: vec![0; work_items * ty.lanes() as usize],
            per_unit: per_lane_outputs(ty),
        };
        // A value of `ty` per unit laid out as in memory (`<3 x T>` padded).
        let memory_image = |name: &str, ty: &Type, fill: bool| {
            let per = memory_elements(ty);
            let elements = unit_values
                .iter()
                .flat_map(|ops| {
                    let mut v = if fill { ops[0].clone() } else { vec![0; ty.lanes() as usize] };
                    // Padding of <3 x T>: a marker the interpreter never touches.
                    v.resize(per, 0x5a & ops::mask(storage_type(ty.element()).bits()));
                    v
                })
                .collect();
            Buffer { name: name.to_string(), ty: storage_type(ty.element()), elements, per_unit: per }
        };
        let mut buffers: Vec<Buffer> = Vec::new();
        match &self.shape {
            Shape::Compute { result, .. } => {
                for (k, ty) in types.iter().enumerate() {
                    buffers.push(operand_buffer(k, ty));
                }
                buffers.push(output_buffer("out", result));
            }
            Shape::Load { ty, .. } => {
                buffers.push(memory_image("src", ty, true));
                buffers.push(output_buffer("out", ty));
            }
            Shape::Store { ty, .. } => {
                buffers.push(operand_buffer(0, ty));
                buffers.push(memory_image("dst", ty, false));
            }
            Shape::StoreLoad { .. } | Shape::ApertureCast { .. } => {
                let ty = match &self.shape {
                    Shape::StoreLoad { ty: stored, .. } => stored.clone(),
                    _ => Type::I32,
                };
                buffers.push(operand_buffer(0, &ty));
                buffers.push(output_buffer("out", &ty));
            }
            Shape::Atomic { space, ty, .. } => {
                let in_buffer = matches!(space, AddrSpace::Global | AddrSpace::Flat | AddrSpace::Constant);
                if in_buffer {
                    buffers.push(Buffer { name: "mem".into(), ty: ty.clone(), elements: unit_values.iter().map(|o| o[0][0]).collect(), per_unit: 1 });
                } else {
                    buffers.push(operand_buffer(0, ty));
                }
                for k in 1..types.len() {
                    buffers.push(operand_buffer(k, ty));
                }
                buffers.push(output_buffer("out", ty));
                if !in_buffer {
                    buffers.push(output_buffer("after", ty));
                }
            }
        }
        let spec = LaunchSpec {
            kernel: None,
            grid: [work_items as u32, 1, 1],
            block: [block as u32, 1, 1],
            buffers: buffers
                .iter()
                .map(|b| BufferSpec { name: b.name.clone(), ty: b.ty.clone(), init: BufferInit::Data(b.elements.iter().map(|v| format!("0x{v:x}")).collect()) })
                .collect(),
            args: buffers.iter().map(|b| (b.name.clone(), ArgSpec::Buffer(b.name.clone()))).collect(),
            print: Vec::new(),
            max_instructions: None,
            dynamic_lds: 0,
            wave_size: 64,
            offset: [0; 3],
            work_dim: None,
            printf_buffer: None,
        };
        Case { text: self.kernel_text(operands), spec, per_unit: buffers.iter().map(|b| (b.name.clone(), b.per_unit)).collect(), unit_inputs, unit_values }
    }
}

/// The address a work-item uses in a fresh `lds_slot` (one element per lane
/// when divergent, one shared element when uniform) or `stack_slot`.
fn slot_address(k: &mut KernelText, space: AddrSpace, size: u32, align: u32, operands: Operands) -> String {
    match (space, operands) {
        (AddrSpace::Local, Operands::Divergent) => {
            k.line(format!("%slot = lds_slot {}, align {align}", size * BLOCK));
            k.address("%slot", "%lid", size, 0)
        }
        (AddrSpace::Local, Operands::Uniform) => {
            k.line(format!("%slot = lds_slot {size}, align {align}"));
            "%slot".to_string()
        }
        _ => {
            k.line(format!("%slot = stack_slot {size}, align {align}"));
            "%slot".to_string()
        }
    }
}
