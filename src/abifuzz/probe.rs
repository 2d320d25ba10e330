//! Random signatures and the probe built around each: the values a caller
//! passes, element by element, and the pieces (section 2 of docs/abi.md) they
//! travel in.
//!
//! A probe's callee records every scalar element of every argument, and its
//! implicit inputs, into the record area (one 64-bit word per element, per
//! work-group and lane); its result is built from constants and the xor of
//! what it recorded, so the caller's view of the result can be checked
//! against what the callee actually saw.

use amdgpu_abi::{AddrSpace, Param, Signature, Type};

/// A small deterministic generator (xorshift64*), so a seed names a run.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15 | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

const SPACES: [AddrSpace; 5] = [AddrSpace::Flat, AddrSpace::Global, AddrSpace::Constant, AddrSpace::Local, AddrSpace::Private];

fn scalar(rng: &mut Rng) -> Type {
    match rng.below(13) {
        0 => Type::I1,
        1 => Type::I8,
        2 => Type::I16,
        3 | 4 => Type::I32,
        5 => Type::I64,
        6 => Type::F16,
        7 | 8 => Type::F32,
        9 => Type::F64,
        _ => Type::Ptr(SPACES[rng.below(SPACES.len() as u64) as usize]),
    }
}

fn vector(rng: &mut Rng) -> Type {
    let element = [Type::I8, Type::I16, Type::I32, Type::I64, Type::F16, Type::F32, Type::F64][rng.below(7) as usize].clone();
    Type::Vector(Box::new(element), 2 + rng.below(3) as u8)
}

/// A struct, sometimes nested; its size lands on both sides of the 16-byte
/// threshold where the amdgpu-cg convention switches to by-reference.
fn structure(rng: &mut Rng, depth: u32) -> Type {
    let fields = 1 + rng.below(4);
    Type::Struct(
        (0..fields)
            .map(|_| match rng.below(10) {
                0..=5 => scalar(rng),
                6 | 7 => vector(rng),
                _ if depth < 2 => structure(rng, depth + 1),
                _ => scalar(rng),
            })
            .collect(),
    )
}

fn any_type(rng: &mut Rng) -> Type {
    match rng.below(8) {
        0..=3 => scalar(rng),
        4 | 5 => vector(rng),
        _ => structure(rng, 0),
    }
}

/// A result big enough for a hidden sret pointer in either convention: more
/// than 16 bytes (amdgpu-cg) or more than 32 pieces (LLVM).
fn big_result(rng: &mut Rng) -> Type {
    let n = if rng.chance(50) { 3 + rng.below(3) } else { 9 + rng.below(4) };
    Type::Struct((0..n).map(|_| Type::Vector(Box::new(Type::I32), 4)).collect())
}

/// A random signature: 1-8 parameters mostly, up to 70 (past the registers, onto
/// the stack), a quarter of them `inreg`, results of every shape.
pub fn random_signature(rng: &mut Rng) -> Signature {
    let count = match rng.below(10) {
        0..=6 => rng.below(9),
        7 | 8 => 9 + rng.below(28),
        _ => 37 + rng.below(34),
    };
    let inreg_share = [0, 25, 25, 60][rng.below(4) as usize];
    let params = (0..count)
        .map(|_| {
            let ty = any_type(rng);
            Param { ty, inreg: rng.chance(inreg_share), is_self: false }
        })
        .collect();
    let ret = match rng.below(10) {
        0 | 1 => None,
        2..=4 => Some(scalar(rng)),
        5 | 6 => Some(vector(rng)),
        7 | 8 => Some(structure(rng, 0)),
        _ => Some(big_result(rng)),
    };
    Signature::new(params, ret)
}

/// The scalar elements of a value, in piece order.
pub fn elements(ty: &Type) -> Vec<Type> {
    match ty {
        Type::Vector(e, n) => vec![(**e).clone(); *n as usize],
        Type::Struct(fields) => fields.iter().flat_map(elements).collect(),
        t => vec![t.clone()],
    }
}

/// How the element of a value is named in a report: `.1[2]` is element 2 of field 1.
fn element_paths(ty: &Type, prefix: &str, out: &mut Vec<String>) {
    match ty {
        Type::Vector(_, n) => out.extend((0..*n).map(|k| format!("{prefix}[{k}]"))),
        Type::Struct(fields) => {
            for (i, f) in fields.iter().enumerate() {
                element_paths(f, &format!("{prefix}.{i}"), out);
            }
        }
        _ => out.push(prefix.to_string()),
    }
}

/// Bits of an element as it sits in a register or the record (pointers by their width).
pub fn element_bits(ty: &Type) -> u32 {
    match ty {
        Type::Ptr(s) => s.pointer_bits(),
        t => t.bits(),
    }
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// A value for an element: random bits; floats normal, so no compiler or
/// register move can change them.
fn element_value(rng: &mut Rng, ty: &Type) -> u64 {
    let r = rng.next_u64();
    match ty {
        Type::F16 => (r & 0x83ff) | (4 + r % 20) << 10,
        Type::F32 => (r & 0x807f_ffff) | (100 + r % 50) << 23,
        Type::F64 => (r & 0x800f_ffff_ffff_ffff) | (1000 + (r >> 3) % 50) << 52,
        // At least one of the top bits set, so the value is not a small
        // number found by chance in a register.
        t => {
            let bits = element_bits(t);
            let v = r & mask(bits);
            if bits >= 8 {
                v | 1 << (bits - 2)
            } else {
                v
            }
        }
    }
}

/// Whether an element's value varies with the lane (non-`inreg` scalars of 32
/// or 64 bits: the lane index is xor-ed into the low bits).
fn lane_varying(ty: &Type, inreg: bool) -> bool {
    !inreg && element_bits(ty) >= 32
}

/// One scalar element of an argument or result.
#[derive(Clone, Debug)]
pub struct Element {
    pub ty: Type,
    /// `.1[2]`-style path within its parameter.
    pub path: String,
    /// The value in lane 0 (low `element_bits` bits).
    pub value: u64,
    /// The lane index is xor-ed into the value.
    pub per_lane: bool,
}

impl Element {
    pub fn in_lane(&self, lane: u32) -> u64 {
        if self.per_lane {
            self.value ^ u64::from(lane)
        } else {
            self.value
        }
    }
}

/// One piece (a register's worth) of a parameter or result.
#[derive(Clone, Debug)]
pub struct Piece {
    /// Its path in docs/abi.md's notation (`.1[0..1]`, `.2.lo`).
    pub path: String,
    pub bits: u32,
    /// The elements it carries and their bit offsets in it: one, or two packed
    /// 16-bit vector elements; a 64-bit element gives two pieces.
    pub parts: Vec<(usize, u32)>,
    /// For a 64-bit element, which half (0 low, 1 high).
    pub half: Option<u32>,
}

impl Piece {
    /// The piece's register value in `lane`, from element values.
    pub fn value(&self, elements: &[u64]) -> u32 {
        let mut v = 0u64;
        for &(e, shift) in &self.parts {
            let x = match self.half {
                Some(h) => elements[e] >> (32 * h),
                None => elements[e],
            };
            v |= (x & mask(self.bits.min(32))) << shift;
        }
        v as u32
    }
}

/// The pieces of a value of type `ty` whose elements start at `first`.
pub fn pieces(ty: &Type, first: usize, prefix: &str) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut at = first;
    leaf_pieces(ty, &mut at, prefix, &mut out);
    out
}

fn leaf_pieces(ty: &Type, at: &mut usize, prefix: &str, out: &mut Vec<Piece>) {
    match ty {
        Type::Struct(fields) => {
            for (i, f) in fields.iter().enumerate() {
                leaf_pieces(f, at, &format!("{prefix}.{i}"), out);
            }
        }
        Type::Vector(e, n) if e.bits() == 16 => {
            for k in (0..*n as usize).step_by(2) {
                let two = k + 1 < *n as usize;
                let parts = if two { vec![(*at + k, 0), (*at + k + 1, 16)] } else { vec![(*at + k, 0)] };
                let path = if two { format!("{prefix}[{k}..{}]", k + 1) } else { format!("{prefix}[{k}]") };
                out.push(Piece { path, bits: if two { 32 } else { 16 }, parts, half: None });
            }
            *at += *n as usize;
        }
        Type::Vector(e, n) => {
            for k in 0..*n as usize {
                scalar_pieces(e, *at + k, &format!("{prefix}[{k}]"), out);
            }
            *at += *n as usize;
        }
        t => {
            scalar_pieces(t, *at, prefix, out);
            *at += 1;
        }
    }
}

fn scalar_pieces(ty: &Type, element: usize, path: &str, out: &mut Vec<Piece>) {
    let bits = element_bits(ty);
    if bits == 64 {
        out.push(Piece { path: format!("{path}.lo"), bits: 32, parts: vec![(element, 0)], half: Some(0) });
        out.push(Piece { path: format!("{path}.hi"), bits: 32, parts: vec![(element, 0)], half: Some(1) });
    } else {
        out.push(Piece { path: path.to_string(), bits, parts: vec![(element, 0)], half: None });
    }
}

/// One argument of a probe.
#[derive(Clone, Debug)]
pub struct Argument {
    pub ty: Type,
    pub inreg: bool,
    /// Index of its first element in the probe's record order.
    pub first: usize,
    pub elements: Vec<Element>,
}

/// The implicit inputs a callee records, after the arguments' elements.
pub const IMPLICIT: [&str; 9] =
    ["workitem_id x", "workitem_id y", "workitem_id z", "workgroup_id x", "workgroup_id y", "workgroup_id z", "workgroup_size x", "workgroup_size y", "workgroup_size z"];

/// Values the caller keeps live across the call: lane-varying and uniform.
pub const KEEP_VECTOR: usize = 6;
pub const KEEP_SCALAR: usize = 4;

/// A signature with the values its caller passes and its callee returns.
#[derive(Clone, Debug)]
pub struct Probe {
    pub sig: Signature,
    pub args: Vec<Argument>,
    /// Result elements with the constants the callee xors its hash into.
    pub ret: Vec<Element>,
    /// The call is made by a device function the kernel calls (else by the kernel).
    pub device_caller: bool,
    /// Multipliers of the kept values.
    pub keep: Vec<u32>,
}

impl Probe {
    /// Values for `sig`, drawn from `rng`.
    pub fn new(sig: Signature, device_caller: bool, rng: &mut Rng) -> Probe {
        let mut args = Vec::new();
        let mut first = 0;
        for p in &sig.params {
            let mut paths = Vec::new();
            element_paths(&p.ty, "", &mut paths);
            let elements: Vec<Element> = elements(&p.ty)
                .into_iter()
                .zip(paths)
                .map(|(ty, path)| Element { value: element_value(rng, &ty), per_lane: lane_varying(&ty, p.inreg), path, ty })
                .collect();
            args.push(Argument { ty: p.ty.clone(), inreg: p.inreg, first, elements: elements.clone() });
            first += elements.len();
        }
        let mut ret = Vec::new();
        if let Some(r) = &sig.ret {
            let mut paths = Vec::new();
            element_paths(r, "", &mut paths);
            ret = elements(r).into_iter().zip(paths).map(|(ty, path)| Element { value: element_value(rng, &ty), per_lane: false, path, ty }).collect();
        }
        let keep = (0..KEEP_VECTOR + KEEP_SCALAR).map(|_| (rng.next_u64() as u32) | 1).collect();
        Probe { sig, args, ret, device_caller, keep }
    }

    /// Elements the callee records (arguments, then the implicit inputs).
    pub fn record_count(&self) -> usize {
        self.args.iter().map(|a| a.elements.len()).sum::<usize>() + IMPLICIT.len()
    }

    /// Words the caller stores after the call (result elements, then kept values).
    pub fn out_count(&self) -> usize {
        self.ret.len() + KEEP_VECTOR + KEEP_SCALAR
    }

    /// The mask applied to the callee's hash before it is xor-ed into result element `ty`.
    pub fn hash_mask(ty: &Type) -> u64 {
        if matches!(ty, Type::I1) {
            1
        } else {
            0xff
        }
    }
}
