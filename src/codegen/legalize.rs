//! Legalize: rewrites MIR operations that instruction selection does not take
//! directly into MIR operations it does, before uniformity analysis.
//!
//! Why in MIR: every rewrite is an ordinary MIR program, so the interpreter can
//! check it against the operation it replaces (`legalize(f)` and `f` give the
//! same results, `tests` below and tests/op_coverage.rs), and the selector
//! keeps one lowering per machine idiom instead of one per type.
//!
//! What it rewrites (each rule ends in operations that are legal or that another
//! rule rewrites further; every rule strictly narrows the type or the vector,
//! so the recursion ends):
//! - vectors: arithmetic, compares (giving `<N x i1>`), `select` on a vector
//!   condition, `fma` and casts element by element; a `bitcast` with a vector
//!   on either side through integer pieces;
//! - `i8`/`i16` integer operations and compares: in i32 on extended operands
//!   (zero- or sign-extended as the operation reads them), truncated back;
//!   `i1` compares through i32;
//! - `i64` operations without a 64-bit idiom (`not`, min/max, bit counts,
//!   `mulhi`) on 32-bit halves or compare-and-select;
//! - casts the selector has no instruction for: extensions through i32,
//!   saturating float → i8/i16/i64, i8/i16/i64 → float, `fptrunc f64 → f16`
//!   (rounded to odd in f32 first, so the result is rounded once);

use hashbrown::HashMap;

use crate::abi::AddrSpace;
use crate::isa;
use crate::mir::{
    op_operands_mut, terminator_operands_mut, AtomicOp, BinOp, Block, BlockCall, BlockId, CastOp, Const, FloatPred, Function, Inst, IntPred, Op,
    Operand, Span, TernOp, Terminator, Type, UnOp, Value, ValueInfo,
};

/// The float atomics a target does in one instruction, with MIR's exact
/// arithmetic (IEEE, subnormals kept, rounded to nearest even); the rest
/// become compare-and-swap loops. The choice is llc-22's: `ds_add_rtn_f32` on
/// every target, `global_atomic_add_f32` on gfx942 only (gfx90a's and
/// gfx1100's fail on fine-grained host memory, so llc-22 loops there unless
/// told the memory is coarse-grained, which MIR cannot say).
#[derive(Clone, Copy, Debug, Default)]
pub struct NativeFloatAtomics {
    pub lds_fadd_f32: bool,
    pub global_fadd_f32: bool,
}

impl NativeFloatAtomics {
    pub fn of(gpu: isa::Gpu) -> Self {
        NativeFloatAtomics { lds_fadd_f32: true, global_fadd_f32: gpu == isa::Gpu::Gfx942 }
    }

    fn covers(self, func: &Function, op: &Op) -> bool {
        let Op::AtomicRmw { op: AtomicOp::FAdd, ty: Type::F32, ptr, .. } = op else { return false };
        match ptr_space(func, ptr) {
            Some(AddrSpace::Local) => self.lds_fadd_f32,
            Some(AddrSpace::Global) => self.global_fadd_f32,
            _ => false,
        }
    }
}

fn ptr_space(func: &Function, ptr: &Operand) -> Option<AddrSpace> {
    match ptr {
        Operand::Value(v) => match &func.values[v.0 as usize].ty {
            Type::Ptr(space) => Some(*space),
            _ => None,
        },
        _ => None,
    }
}

/// The legalized function, or `None` when every operation is already legal.
pub fn run(func: &Function, native: NativeFloatAtomics) -> Option<Function> {
    let loops = |f: &Function, op: &Op| matches!(op, Op::AtomicRmw { op, .. } if op.is_float()) && !native.covers(f, op);
    let float_atomics = func.blocks.iter().flat_map(|b| &b.insts).any(|i| loops(func, &i.op));
    let any = float_atomics || func.blocks.iter().flat_map(|b| &b.insts).any(|i| !is_legal(&i.op, &func.values));
    if !any {
        return None;
    }
    let mut f = func.clone();
    expand_float_atomics(&mut f, &loops);
    let mut lg = Legalizer { values: std::mem::take(&mut f.values), fresh: 0, renamed: HashMap::new() };
    for block in &mut f.blocks {
        let insts = std::mem::take(&mut block.insts);
        let mut out = Vec::with_capacity(insts.len());
        for inst in insts {
            lg.lower(&mut out, inst.span, inst.result, inst.op);
        }
        block.insts = out;
    }
    if !lg.renamed.is_empty() {
        let resolve = |o: &mut Operand| {
            while let Operand::Value(v) = o {
                match lg.renamed.get(v) {
                    Some(to) => *o = to.clone(),
                    None => break,
                }
            }
        };
        for block in &mut f.blocks {
            block.insts.iter_mut().flat_map(|i| op_operands_mut(&mut i.op)).for_each(resolve);
            terminator_operands_mut(&mut block.term).into_iter().for_each(resolve);
        }
    }
    f.values = lg.values;
    Some(f)
}

/// Float atomics as compare-and-swap loops, which keep MIR's arithmetic
/// exactly (IEEE with subnormals, minNum/maxNum) on every target:
///
/// ```text
///   B:      ...; %old0 = load T %p; br retry(%old0)
///   retry(%old: T): %new = OP T %old, %v; %got = cmpxchg I %p, bits(old), bits(new)
///           brif %got == bits(old), done(%old), retry(T(%got))
///   done(%result: T): the rest of B
/// ```
///
/// (the result keeps its value id, as `done`'s parameter, so its uses need
/// no renaming; everything B dominated, `done` dominates).
fn expand_float_atomics(f: &mut Function, loops: &dyn Fn(&Function, &Op) -> bool) {
    let mut serial = 0;
    while let Some((b, i)) = f.blocks.iter().enumerate().find_map(|(b, block)| block.insts.iter().position(|inst| loops(f, &inst.op)).map(|i| (b, i))) {
        serial += 1;
        let tail = f.blocks[b].insts.split_off(i + 1);
        let atomic = f.blocks[b].insts.pop().expect("the atomic");
        let Op::AtomicRmw { op, ty, ptr, value, sync } = atomic.op else { unreachable!("found above") };
        let bits = if ty == Type::F64 { Type::I64 } else { Type::I32 };
        let result = atomic.result.expect("atomics have results");
        let span = atomic.span;
        let name = f.blocks[b].name.clone();
        let new_value = |f: &mut Function, what: &str, ty: Type| {
            let v = Value(f.values.len() as u32);
            f.values.push(ValueInfo { name: format!("{}.atomic{serial}.{what}", f.values[result.0 as usize].name), ty });
            v
        };
        let (old0, old, new, old_bits, new_bits, got_bits, ok, got) = (
            new_value(f, "old0", ty.clone()),
            new_value(f, "old", ty.clone()),
            new_value(f, "new", ty.clone()),
            new_value(f, "old_bits", bits.clone()),
            new_value(f, "new_bits", bits.clone()),
            new_value(f, "got_bits", bits.clone()),
            new_value(f, "ok", Type::I1),
            new_value(f, "got", ty.clone()),
        );
        let (retry, done) = (BlockId(f.blocks.len() as u32), BlockId(f.blocks.len() as u32 + 1));
        let inst = |result: Option<Value>, op: Op| Inst { result, op, span };
        let v = |x: Value| Operand::Value(x);
        f.blocks[b].insts.push(inst(Some(old0), Op::Load { ty: ty.clone(), ptr: ptr.clone(), align: ty.size(), volatile: false }));
        let term = std::mem::replace(&mut f.blocks[b].term, Terminator::Br(BlockCall { block: retry, args: vec![v(old0)] }));
        let term_span = f.blocks[b].term_span;
        let loop_insts = vec![
            inst(Some(new), Op::Binary { op: op.float_op().expect("float"), ty: ty.clone(), lhs: v(old), rhs: value }),
            inst(Some(old_bits), Op::Cast { op: CastOp::Bitcast, from: ty.clone(), arg: v(old), to: bits.clone() }),
            inst(Some(new_bits), Op::Cast { op: CastOp::Bitcast, from: ty.clone(), arg: v(new), to: bits.clone() }),
            inst(Some(got_bits), Op::CmpXchg { ty: bits.clone(), ptr, expected: v(old_bits), new: v(new_bits), sync }),
            inst(Some(ok), Op::Icmp { pred: IntPred::Eq, ty: bits.clone(), lhs: v(got_bits), rhs: v(old_bits) }),
            inst(Some(got), Op::Cast { op: CastOp::Bitcast, from: bits.clone(), arg: v(got_bits), to: ty.clone() }),
        ];
        let loop_term = Terminator::BrIf {
            cond: v(ok),
            then_to: BlockCall { block: done, args: vec![v(old)] },
            else_to: BlockCall { block: retry, args: vec![v(got)] },
        };
        f.blocks.push(Block { name: format!("{name}.atomic{serial}.retry"), params: vec![old], insts: loop_insts, term: loop_term, term_span: span, span });
        f.blocks.push(Block { name: format!("{name}.atomic{serial}.done"), params: vec![result], insts: tail, term, term_span, span });
    }
}

fn operand_type<'a>(values: &'a [ValueInfo], o: &'a Operand) -> &'a Type {
    match o {
        Operand::Value(v) => &values[v.0 as usize].ty,
        Operand::Const(c) => &c.ty,
    }
}

/// True when instruction selection takes `op` as it is.
fn is_legal(op: &Op, values: &[ValueInfo]) -> bool {
    let narrow = |t: &Type| matches!(t, Type::I8 | Type::I16);
    match op {
        Op::Binary { ty: Type::Vector(..), .. }
        | Op::Unary { ty: Type::Vector(..), .. }
        | Op::Fma { ty: Type::Vector(..), .. }
        | Op::Icmp { ty: Type::Vector(..), .. }
        | Op::Fcmp { ty: Type::Vector(..), .. } => false,
        Op::Binary { op: BinOp::RotL | BinOp::RotR | BinOp::AddSatS | BinOp::AddSatU | BinOp::SubSatS | BinOp::SubSatU, .. } => false,
        // fshr i32 is v_alignbit_b32, mad24 v_mad_*_24; fshl and other widths are rewritten.
        Op::Ternary { op, ty, .. } => *ty == Type::I32 && *op != TernOp::FshL,
        Op::Binary { op, ty, .. } => {
            if narrow(ty) {
                return false;
            }
            *ty != Type::I64 || matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::And | BinOp::Or | BinOp::Xor | BinOp::Shl | BinOp::LShr | BinOp::AShr)
        }
        Op::Unary { op: UnOp::Abs | UnOp::Sin | UnOp::Cos, .. } => false,
        Op::Unary { op: UnOp::BitReverse | UnOp::Bswap, ty, .. } => *ty == Type::I32,
        Op::Unary { op, ty, .. } => !(narrow(ty) || *ty == Type::I64) || op.is_float(),
        Op::Select { cond, .. } => operand_type(values, cond).is_scalar(),
        Op::Icmp { ty, .. } => !narrow(ty) && *ty != Type::I1,
        Op::Cast { op, from, to, arg } => {
            debug_assert_eq!(operand_type(values, arg), from);
            cast_is_legal(*op, from, to)
        }
        _ => true,
    }
}

fn cast_is_legal(op: CastOp, from: &Type, to: &Type) -> bool {
    if !from.is_scalar() || !to.is_scalar() {
        return false;
    }
    match op {
        CastOp::Trunc => *to != Type::I1,
        CastOp::ZExt | CastOp::SExt => matches!((from, to), (Type::I1, Type::I32) | (Type::I8 | Type::I16, Type::I32 | Type::I16) | (Type::I32, Type::I64)),
        CastOp::FpToSi | CastOp::FpToUi => *to == Type::I32,
        CastOp::SiToFp | CastOp::UiToFp => *from == Type::I32,
        CastOp::FpTrunc => !(*from == Type::F64 && *to == Type::F16),
        _ => true,
    }
}

struct Legalizer {
    values: Vec<ValueInfo>,
    fresh: u32,
    /// Results whose rewrite is an existing operand (replaced everywhere at
    /// the end).
    renamed: HashMap<Value, Operand>,
}

/// What an illegal operation becomes: a final operation that defines its
/// result, or an operand that already holds it.
enum Rewritten {
    Op(Op),
    Is(Operand),
}

impl From<Op> for Rewritten {
    fn from(op: Op) -> Rewritten {
        Rewritten::Op(op)
    }
}

fn int(ty: &Type, v: i64) -> Operand {
    Operand::Const(Const::int(ty.clone(), v))
}

fn float(ty: &Type, v: f64) -> Operand {
    let bits = match ty {
        Type::F32 => u64::from((v as f32).to_bits()),
        Type::F64 => v.to_bits(),
        _ => unreachable!("float constants of legalize are f32/f64"),
    };
    Operand::Const(Const { ty: ty.clone(), bits })
}

fn int_of_width(bits: u32) -> Type {
    match bits {
        8 => Type::I8,
        16 => Type::I16,
        32 => Type::I32,
        _ => Type::I64,
    }
}

/// Emits into one block's instruction list.
struct Out<'a> {
    lg: &'a mut Legalizer,
    insts: &'a mut Vec<Inst>,
    span: Span,
}

impl Out<'_> {
    fn ty(&self, o: &Operand) -> Type {
        operand_type(&self.lg.values, o).clone()
    }

    /// A new value computed by `op` (itself legalized).
    fn value(&mut self, ty: Type, op: Op) -> Operand {
        let v = Value(self.lg.values.len() as u32);
        self.lg.fresh += 1;
        self.lg.values.push(ValueInfo { name: format!("legal.{}", self.lg.fresh), ty });
        self.lg.lower(self.insts, self.span, Some(v), op);
        Operand::Value(v)
    }

    fn bin(&mut self, op: BinOp, ty: &Type, a: Operand, b: Operand) -> Operand {
        self.value(ty.clone(), Op::Binary { op, ty: ty.clone(), lhs: a, rhs: b })
    }

    fn un(&mut self, op: UnOp, ty: &Type, a: Operand) -> Operand {
        self.value(ty.clone(), Op::Unary { op, ty: ty.clone(), arg: a })
    }

    fn cast(&mut self, op: CastOp, from: &Type, a: Operand, to: &Type) -> Operand {
        self.value(to.clone(), Op::Cast { op, from: from.clone(), arg: a, to: to.clone() })
    }

    fn icmp(&mut self, pred: IntPred, ty: &Type, a: Operand, b: Operand) -> Operand {
        self.value(Type::I1, Op::Icmp { pred, ty: ty.clone(), lhs: a, rhs: b })
    }

    fn fcmp(&mut self, pred: FloatPred, ty: &Type, a: Operand, b: Operand) -> Operand {
        self.value(Type::I1, Op::Fcmp { pred, ty: ty.clone(), lhs: a, rhs: b })
    }

    fn select(&mut self, ty: &Type, c: Operand, a: Operand, b: Operand) -> Operand {
        self.value(ty.clone(), Op::Select { ty: ty.clone(), cond: c, if_true: a, if_false: b })
    }

    fn extract(&mut self, agg: &Operand, index: u32) -> Operand {
        let Type::Vector(elem, _) = self.ty(agg) else { unreachable!("extract from a vector") };
        self.value(*elem, Op::Extract { agg: agg.clone(), index })
    }

    /// Elements of a vector operand (a scalar is its own single element).
    /// A three-operand vector operation element by element: `scalar` builds
    /// one element's operation from its type and operands.
    fn elementwise3(&mut self, ty: Type, [a, b, c]: [Operand; 3], scalar: impl Fn(Type, Operand, Operand, Operand) -> Op) -> Op {
        let elem = ty.element().clone();
        let (xs, ys, zs) = (self.elements(&a), self.elements(&b), self.elements(&c));
        let elems = xs.into_iter().zip(ys).zip(zs).map(|((x, y), z)| self.value(elem.clone(), scalar(elem.clone(), x, y, z))).collect();
        Op::Make { ty, elems }
    }

    fn elements(&mut self, o: &Operand) -> Vec<Operand> {
        match self.ty(o) {
            Type::Vector(_, n) => (0..u32::from(n)).map(|i| self.extract(o, i)).collect(),
            _ => vec![o.clone()],
        }
    }

    /// The high 32 bits of an i64 as an i32.
    fn high(&mut self, x: &Operand) -> Operand {
        let shifted = self.bin(BinOp::LShr, &Type::I64, x.clone(), int(&Type::I64, 32));
        self.cast(CastOp::Trunc, &Type::I64, shifted, &Type::I32)
    }

    fn low(&mut self, x: &Operand) -> Operand {
        self.cast(CastOp::Trunc, &Type::I64, x.clone(), &Type::I32)
    }
}

impl Legalizer {
    /// Appends `result = op` to `insts`, rewritten until it is legal.
    fn lower(&mut self, insts: &mut Vec<Inst>, span: Span, result: Option<Value>, op: Op) {
        if is_legal(&op, &self.values) {
            insts.push(Inst { result, op, span });
            return;
        }
        let mut out = Out { lg: self, insts, span };
        match rewrite(&mut out, op) {
            Rewritten::Op(last) => self.lower(insts, span, result, last),
            Rewritten::Is(x) => {
                if let Some(v) = result {
                    self.renamed.insert(v, x);
                }
            }
        }
    }
}

/// The rewrite of an illegal operation: instructions emitted into `out`, and
/// what defines the original result.
fn rewrite(out: &mut Out, op: Op) -> Rewritten {
    match op {
        Op::Cast { op: CastOp::Bitcast, from, arg, to } => return bitcast(out, &from, arg, &to),
        Op::Binary { op: op @ (BinOp::UDiv | BinOp::URem | BinOp::SDiv | BinOp::SRem), ty: Type::I64, lhs, rhs } => return div64(out, op, lhs, rhs),
        _ => {}
    }
    Rewritten::Op(match op {
        Op::Binary { op, ty: ty @ Type::Vector(..), lhs, rhs } => {
            let (xs, ys) = (out.elements(&lhs), out.elements(&rhs));
            let elem = ty.element().clone();
            let elems = xs.into_iter().zip(ys).map(|(x, y)| out.bin(op, &elem, x, y)).collect();
            Op::Make { ty, elems }
        }
        Op::Unary { op, ty: ty @ Type::Vector(..), arg } => {
            let elem = ty.element().clone();
            let elems = out.elements(&arg).into_iter().map(|x| out.un(op, &elem, x)).collect();
            Op::Make { ty, elems }
        }
        Op::Fma { ty: ty @ Type::Vector(..), a, b, c } => out.elementwise3(ty, [a, b, c], |ty, a, b, c| Op::Fma { ty, a, b, c }),
        Op::Ternary { op, ty: ty @ Type::Vector(..), a, b, c } => out.elementwise3(ty, [a, b, c], |ty, a, b, c| Op::Ternary { op, ty, a, b, c }),
        Op::Ternary { op: TernOp::FshL, ty: Type::I32, a, b, c } => {
            // fshl(a, b, s) = fshr(a >> 1, fshr(a, b, 1), ~s): shifting a:b
            // right by one first turns the left shift by s into a right
            // shift by 31 - s, which is ~s modulo 32 (no special case at 0).
            let i32t = Type::I32;
            let high = out.bin(BinOp::LShr, &i32t, a.clone(), int(&i32t, 1));
            let low = out.value(i32t.clone(), Op::Ternary { op: TernOp::FshR, ty: i32t.clone(), a, b, c: int(&i32t, 1) });
            let amount = out.bin(BinOp::Xor, &i32t, c, int(&i32t, -1));
            Op::Ternary { op: TernOp::FshR, ty: i32t, a: high, b: low, c: amount }
        }
        Op::Ternary { op: op @ (TernOp::FshL | TernOp::FshR), ty, a, b, c } => {
            // Through shifts, with the amount s modulo the width w: the
            // other operand moves by one and then by w - 1 - s, so no shift
            // reaches w.
            let w = i64::from(ty.bits());
            let s = out.bin(BinOp::And, &ty, c, int(&ty, w - 1));
            let rest = out.bin(BinOp::Sub, &ty, int(&ty, w - 1), s.clone());
            let (x, y) = if op == TernOp::FshL {
                let b1 = out.bin(BinOp::LShr, &ty, b, int(&ty, 1));
                (out.bin(BinOp::Shl, &ty, a, s), out.bin(BinOp::LShr, &ty, b1, rest))
            } else {
                let a1 = out.bin(BinOp::Shl, &ty, a, int(&ty, 1));
                (out.bin(BinOp::Shl, &ty, a1, rest), out.bin(BinOp::LShr, &ty, b, s))
            };
            Op::Binary { op: BinOp::Or, ty, lhs: x, rhs: y }
        }
        Op::Icmp { pred, ty: ty @ Type::Vector(..), lhs, rhs } => {
            let (xs, ys) = (out.elements(&lhs), out.elements(&rhs));
            let elem = ty.element().clone();
            let elems = xs.into_iter().zip(ys).map(|(x, y)| out.icmp(pred, &elem, x, y)).collect();
            Op::Make { ty: Type::Vector(Box::new(Type::I1), ty.lanes() as u8), elems }
        }
        Op::Fcmp { pred, ty: ty @ Type::Vector(..), lhs, rhs } => {
            let (xs, ys) = (out.elements(&lhs), out.elements(&rhs));
            let elem = ty.element().clone();
            let elems = xs.into_iter().zip(ys).map(|(x, y)| out.fcmp(pred, &elem, x, y)).collect();
            Op::Make { ty: Type::Vector(Box::new(Type::I1), ty.lanes() as u8), elems }
        }
        Op::Select { ty, cond, if_true, if_false } => {
            let (cs, ts, fs) = (out.elements(&cond), out.elements(&if_true), out.elements(&if_false));
            let elem = ty.element().clone();
            let elems = cs.into_iter().zip(ts).zip(fs).map(|((c, t), f)| out.select(&elem, c, t, f)).collect();
            Op::Make { ty, elems }
        }
        Op::Binary { op: op @ (BinOp::RotL | BinOp::RotR), ty, lhs, rhs } => {
            // x rotl s = (x << s) | (x >> -s), both amounts modulo the width.
            let w = i64::from(ty.bits());
            let s = out.bin(BinOp::And, &ty, rhs.clone(), int(&ty, w - 1));
            let neg = out.bin(BinOp::Sub, &ty, int(&ty, 0), rhs);
            let t = out.bin(BinOp::And, &ty, neg, int(&ty, w - 1));
            let (first, second) = if op == BinOp::RotL { (BinOp::Shl, BinOp::LShr) } else { (BinOp::LShr, BinOp::Shl) };
            let x = out.bin(first, &ty, lhs.clone(), s);
            let y = out.bin(second, &ty, lhs, t);
            Op::Binary { op: BinOp::Or, ty, lhs: x, rhs: y }
        }
        Op::Binary { op: op @ (BinOp::AddSatS | BinOp::AddSatU | BinOp::SubSatS | BinOp::SubSatU), ty, lhs, rhs } => saturating(out, op, &ty, lhs, rhs),
        Op::Binary { op, ty, lhs, rhs } if matches!(ty, Type::I8 | Type::I16) => narrow_binary(out, op, &ty, lhs, rhs),
        Op::Binary { op, ty: Type::I64, lhs, rhs } => wide_binary(out, op, lhs, rhs),
        Op::Unary { op, ty, arg } => int_unary(out, op, &ty, arg),
        Op::Icmp { pred, ty, lhs, rhs } => {
            // i8/i16/i1 in i32, extended as the predicate reads them.
            let signed = matches!(pred, IntPred::Slt | IntPred::Sle | IntPred::Sgt | IntPred::Sge);
            let ext = if signed { CastOp::SExt } else { CastOp::ZExt };
            let (a, b) = (out.cast(ext, &ty, lhs, &Type::I32), out.cast(ext, &ty, rhs, &Type::I32));
            Op::Icmp { pred, ty: Type::I32, lhs: a, rhs: b }
        }
        Op::Cast { op, from, arg, to } => cast(out, op, &from, arg, &to),
        other => unreachable!("legal operation rewritten: {other:?}"),
    })
}

/// i8/i16 arithmetic in i32.
fn narrow_binary(out: &mut Out, op: BinOp, ty: &Type, lhs: Operand, rhs: Operand) -> Op {
    let width = ty.bits();
    let i32t = Type::I32;
    let ext = |out: &mut Out, how, x| out.cast(how, ty, x, &i32t);
    let r = match op {
        // The low bits of these do not depend on the high bits of the operands.
        BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::And | BinOp::Or | BinOp::Xor => {
            let (a, b) = (ext(out, CastOp::ZExt, lhs), ext(out, CastOp::ZExt, rhs));
            out.bin(op, &i32t, a, b)
        }
        BinOp::Shl | BinOp::LShr | BinOp::AShr => {
            // The amount is taken modulo the narrow width, not 32.
            let how = if op == BinOp::AShr { CastOp::SExt } else { CastOp::ZExt };
            let a = ext(out, how, lhs);
            let b = ext(out, CastOp::ZExt, rhs);
            let amount = out.bin(BinOp::And, &i32t, b, int(&i32t, i64::from(width - 1)));
            out.bin(op, &i32t, a, amount)
        }
        BinOp::SDiv | BinOp::SRem | BinOp::SMin | BinOp::SMax => {
            let (a, b) = (ext(out, CastOp::SExt, lhs), ext(out, CastOp::SExt, rhs));
            out.bin(op, &i32t, a, b)
        }
        BinOp::UDiv | BinOp::URem | BinOp::UMin | BinOp::UMax => {
            let (a, b) = (ext(out, CastOp::ZExt, lhs), ext(out, CastOp::ZExt, rhs));
            out.bin(op, &i32t, a, b)
        }
        BinOp::MulHiS | BinOp::MulHiU => {
            // The exact double-width product fits in 32 bits.
            let (how, shift) = if op == BinOp::MulHiS { (CastOp::SExt, BinOp::AShr) } else { (CastOp::ZExt, BinOp::LShr) };
            let (a, b) = (ext(out, how, lhs), ext(out, how, rhs));
            let p = out.bin(BinOp::Mul, &i32t, a, b);
            out.bin(shift, &i32t, p, int(&i32t, i64::from(width)))
        }
        _ => unreachable!("verified: integer operation on {ty}"),
    };
    Op::Cast { op: CastOp::Trunc, from: i32t, arg: r, to: ty.clone() }
}

/// i64 operations without a 64-bit lowering.
fn wide_binary(out: &mut Out, op: BinOp, lhs: Operand, rhs: Operand) -> Op {
    let i64t = Type::I64;
    match op {
        BinOp::SMin | BinOp::SMax | BinOp::UMin | BinOp::UMax => {
            let pred = match op {
                BinOp::SMin => IntPred::Slt,
                BinOp::SMax => IntPred::Sgt,
                BinOp::UMin => IntPred::Ult,
                _ => IntPred::Ugt,
            };
            let c = out.icmp(pred, &i64t, lhs.clone(), rhs.clone());
            Op::Select { ty: i64t, cond: c, if_true: lhs, if_false: rhs }
        }
        BinOp::MulHiU => mulhi_u64(out, &lhs, &rhs),
        BinOp::MulHiS => {
            // mulhi.s(a, b) = mulhi.u(a, b) - (a < 0 ? b : 0) - (b < 0 ? a : 0).
            let hi = mulhi_u64(out, &lhs, &rhs);
            let hi = out.value(i64t.clone(), hi);
            let a_neg = out.icmp(IntPred::Slt, &i64t, lhs.clone(), int(&i64t, 0));
            let b_neg = out.icmp(IntPred::Slt, &i64t, rhs.clone(), int(&i64t, 0));
            let fix_a = out.select(&i64t, a_neg, rhs, int(&i64t, 0));
            let fix_b = out.select(&i64t, b_neg, lhs, int(&i64t, 0));
            let t = out.bin(BinOp::Sub, &i64t, hi, fix_a);
            Op::Binary { op: BinOp::Sub, ty: i64t, lhs: t, rhs: fix_b }
        }
        _ => unreachable!("i64 operation with a lowering: {op:?}"),
    }
}

/// The high 64 bits of the unsigned 128-bit product, from four 32 x 32 → 64
/// products (the operation that computes it last).
fn mulhi_u64(out: &mut Out, a: &Operand, b: &Operand) -> Op {
    // Schoolbook on 32-bit halves, each partial product plus a column sum
    // (selected as one v_mad_u64_u32 with a 64-bit addend): with p0 = al·bl,
    // m1 = ah·bl + hi(p0) and m2 = al·bh + lo(m1), the high half is ah·bh +
    // hi(m1) + hi(m2). No sum overflows: (2^32 - 1)^2 + 2 (2^32 - 1) = 2^64 - 1.
    let (i32t, i64t) = (Type::I32, Type::I64);
    let half = |out: &mut Out, x: &Operand, high: bool| -> Operand {
        if let Operand::Const(c) = x {
            return int(&i32t, (if high { c.bits >> 32 } else { c.bits & 0xffff_ffff }) as i64);
        }
        let x = if high { out.bin(BinOp::LShr, &i64t, x.clone(), int(&i64t, 32)) } else { x.clone() };
        out.cast(CastOp::Trunc, &i64t, x, &i32t)
    };
    let wide = |out: &mut Out, x: Operand| -> Operand {
        if let Operand::Const(c) = &x {
            return int(&i64t, (c.bits & 0xffff_ffff) as i64);
        }
        out.cast(CastOp::ZExt, &i32t, x, &i64t)
    };
    let is_zero = |x: &Operand| matches!(x, Operand::Const(c) if c.bits == 0);
    // x·y + addend (the addend alone where a factor is the constant 0).
    let mad = |out: &mut Out, x: &Operand, y: &Operand, addend: Operand| -> Operand {
        if is_zero(x) || is_zero(y) {
            return addend;
        }
        let (wx, wy) = (wide(out, x.clone()), wide(out, y.clone()));
        let p = out.bin(BinOp::Mul, &i64t, wx, wy);
        if is_zero(&addend) {
            return p;
        }
        out.bin(BinOp::Add, &i64t, p, addend)
    };
    let column = |out: &mut Out, x: &Operand, high: bool| {
        let h = half(out, x, high);
        wide(out, h)
    };
    let (al, ah, bl, bh) = (half(out, a, false), half(out, a, true), half(out, b, false), half(out, b, true));
    let p0 = mad(out, &al, &bl, int(&i64t, 0));
    let p0_hi = column(out, &p0, true);
    let m1 = mad(out, &ah, &bl, p0_hi);
    let m1_lo = column(out, &m1, false);
    let m2 = mad(out, &al, &bh, m1_lo);
    let (m1_hi, m2_hi) = (column(out, &m1, true), column(out, &m2, true));
    if is_zero(&ah) || is_zero(&bh) {
        return Op::Binary { op: BinOp::Add, ty: i64t, lhs: m1_hi, rhs: m2_hi };
    }
    let carries = out.bin(BinOp::Add, &i64t, m1_hi, m2_hi);
    let (wh, wbh) = (wide(out, ah), wide(out, bh));
    let top = out.bin(BinOp::Mul, &i64t, wh, wbh);
    Op::Binary { op: BinOp::Add, ty: i64t, lhs: top, rhs: carries }
}

/// Saturating add and subtract: narrow types exactly in i32 and clamped; i32
/// and i64 by the overflow condition of the wrapped result.
fn saturating(out: &mut Out, op: BinOp, ty: &Type, a: Operand, b: Operand) -> Op {
    let (i32t, w) = (Type::I32, ty.bits());
    let add = matches!(op, BinOp::AddSatS | BinOp::AddSatU);
    let signed = matches!(op, BinOp::AddSatS | BinOp::SubSatS);
    let arith = if add { BinOp::Add } else { BinOp::Sub };
    if matches!(ty, Type::I8 | Type::I16) {
        let ext = if signed { CastOp::SExt } else { CastOp::ZExt };
        let (x, y) = (out.cast(ext, ty, a, &i32t), out.cast(ext, ty, b, &i32t));
        let exact = out.bin(arith, &i32t, x, y);
        let clamped = if signed {
            let low = out.bin(BinOp::SMax, &i32t, exact, int(&i32t, -(1i64 << (w - 1))));
            out.bin(BinOp::SMin, &i32t, low, int(&i32t, (1i64 << (w - 1)) - 1))
        } else if add {
            out.bin(BinOp::UMin, &i32t, exact, int(&i32t, (1i64 << w) - 1))
        } else {
            out.bin(BinOp::SMax, &i32t, exact, int(&i32t, 0))
        };
        return Op::Cast { op: CastOp::Trunc, from: i32t, arg: clamped, to: ty.clone() };
    }
    let r = out.bin(arith, ty, a.clone(), b.clone());
    if !signed {
        // Unsigned: a carry (the sum below a) or a borrow (a below b).
        let (over, limit) = if add { (out.icmp(IntPred::Ult, ty, r.clone(), a), -1) } else { (out.icmp(IntPred::Ult, ty, a, b), 0) };
        return Op::Select { ty: ty.clone(), cond: over, if_true: int(ty, limit), if_false: r };
    }
    // Signed: overflow when the result's sign differs from what the operands
    // allow; the limit has a's sign (MIN for negative a, MAX otherwise).
    let (p, q) = if add {
        (out.bin(BinOp::Xor, ty, a.clone(), r.clone()), out.bin(BinOp::Xor, ty, b, r.clone()))
    } else {
        (out.bin(BinOp::Xor, ty, a.clone(), b), out.bin(BinOp::Xor, ty, a.clone(), r.clone()))
    };
    let both = out.bin(BinOp::And, ty, p, q);
    let over = out.icmp(IntPred::Slt, ty, both, int(ty, 0));
    let sign = out.bin(BinOp::AShr, ty, a, int(ty, i64::from(w - 1)));
    let max = if w == 64 { i64::MAX } else { (1i64 << (w - 1)) - 1 };
    let limit = out.bin(BinOp::Xor, ty, sign, int(ty, max));
    Op::Select { ty: ty.clone(), cond: over, if_true: limit, if_false: r }
}

/// Integer unary operations on i8/i16 (in i32) and i64 (on halves); the
/// accurate sine and cosine.
fn int_unary(out: &mut Out, op: UnOp, ty: &Type, arg: Operand) -> Op {
    let i32t = Type::I32;
    if matches!(op, UnOp::Sin | UnOp::Cos) {
        if *ty == Type::F16 {
            let wide = out.cast(CastOp::FpExt, ty, arg, &Type::F32);
            let r = out.un(op, &Type::F32, wide);
            return Op::Cast { op: CastOp::FpTrunc, from: Type::F32, arg: r, to: Type::F16 };
        }
        return sin_cos(out, op == UnOp::Sin, arg);
    }
    if op == UnOp::Not {
        return Op::Binary { op: BinOp::Xor, ty: ty.clone(), lhs: arg, rhs: int(ty, -1) };
    }
    if op == UnOp::Abs {
        // smax(x, -x); the minimum stays itself, as MIR's abs wraps.
        let negated = out.bin(BinOp::Sub, ty, int(ty, 0), arg.clone());
        return Op::Binary { op: BinOp::SMax, ty: ty.clone(), lhs: arg, rhs: negated };
    }
    if matches!(op, UnOp::BitReverse | UnOp::Bswap) {
        if *ty == Type::I64 {
            // Each half reversed, the halves swapped.
            let (lo, hi) = (out.low(&arg), out.high(&arg));
            let (rlo, rhi) = (out.un(op, &i32t, lo), out.un(op, &i32t, hi));
            let up = out.cast(CastOp::ZExt, &i32t, rlo, &Type::I64);
            let up = out.bin(BinOp::Shl, &Type::I64, up, int(&Type::I64, 32));
            let down = out.cast(CastOp::ZExt, &i32t, rhi, &Type::I64);
            return Op::Binary { op: BinOp::Or, ty: Type::I64, lhs: up, rhs: down };
        }
        // i8/i16: in the high bits of an i32 reversal.
        let x = out.cast(CastOp::ZExt, ty, arg, &i32t);
        let r = out.un(op, &i32t, x);
        let shifted = out.bin(BinOp::LShr, &i32t, r, int(&i32t, i64::from(32 - ty.bits())));
        return Op::Cast { op: CastOp::Trunc, from: i32t, arg: shifted, to: ty.clone() };
    }
    if *ty == Type::I64 {
        let (lo, hi) = (out.low(&arg), out.high(&arg));
        let r = match op {
            UnOp::Popcount => {
                let (a, b) = (out.un(UnOp::Popcount, &i32t, lo), out.un(UnOp::Popcount, &i32t, hi));
                out.bin(BinOp::Add, &i32t, a, b)
            }
            UnOp::Clz | UnOp::Ctz => {
                // The count in the half that decides, or 32 + the count in the other.
                let (first, second) = if op == UnOp::Clz { (hi, lo) } else { (lo, hi) };
                let zero = out.icmp(IntPred::Eq, &i32t, first.clone(), int(&i32t, 0));
                let in_first = out.un(op, &i32t, first);
                let in_second = out.un(op, &i32t, second);
                let past = out.bin(BinOp::Add, &i32t, in_second, int(&i32t, 32));
                out.select(&i32t, zero, past, in_first)
            }
            _ => unreachable!("verified: integer unary operation"),
        };
        return Op::Cast { op: CastOp::ZExt, from: i32t, arg: r, to: Type::I64 };
    }
    let width = ty.bits();
    let x = out.cast(CastOp::ZExt, ty, arg, &i32t);
    let r = match op {
        UnOp::Popcount => out.un(UnOp::Popcount, &i32t, x),
        // clz32 counts 32 - width zeros above the narrow value (and 32 for 0).
        UnOp::Clz => {
            let c = out.un(UnOp::Clz, &i32t, x);
            out.bin(BinOp::Sub, &i32t, c, int(&i32t, i64::from(32 - width)))
        }
        // A stop bit just above the value makes ctz of 0 the width.
        UnOp::Ctz => {
            let stopped = out.bin(BinOp::Or, &i32t, x, int(&i32t, 1 << width));
            out.un(UnOp::Ctz, &i32t, stopped)
        }
        _ => unreachable!("verified: integer unary operation"),
    };
    Op::Cast { op: CastOp::Trunc, from: i32t, arg: r, to: ty.clone() }
}

/// The first 224 bits of 2/π, in 32-bit words (checked against an integer
/// computation of π in the tests).
const TWO_OVER_PI: [u32; 7] = [0xa2f9_836e, 0x4e44_1529, 0xfc27_57d1, 0xf534_ddc0, 0xdb62_9599, 0x3c43_9041, 0xfe51_63ab];

/// Accurate f32 sine or cosine (within an ulp: the reduced argument and the
/// polynomials are f64). |x| < π/4 is its own reduced argument; otherwise x
/// = m·2^E is reduced exactly (Payne-Hanek): m times a 96-bit window of 2/π
/// starting at the bit that makes the product's integer part the quadrant
/// (mod 4) gives the quadrant and a 94-bit fraction, taken to f64 and times
/// π/2 (to [-π/4, π/4] around the nearest multiple). Taylor polynomials to r^11
/// (sine) and r^10 (cosine) are within 10^-10 there; the quadrant picks ±sin,
/// ±cos.
fn sin_cos(out: &mut Out, sine: bool, x: Operand) -> Op {
    let (i1, i32t, i64t, f32t, f64t) = (Type::I1, Type::I32, Type::I64, Type::F32, Type::F64);
    let i32c = |v: i64| int(&Type::I32, v);
    let i64c = |v: i64| int(&Type::I64, v);
    let ax = out.un(UnOp::FAbs, &f32t, x.clone());
    let small = out.fcmp(FloatPred::Olt, &f32t, ax.clone(), float(&f32t, std::f64::consts::FRAC_PI_4));
    // x = m · 2^(exp - 150); the window starts at bit s = exp - 120 of 2/π
    // behind 32 zero bits (words k.., shift r).
    let bits = out.cast(CastOp::Bitcast, &f32t, ax.clone(), &i32t);
    let exp = out.bin(BinOp::LShr, &i32t, bits.clone(), i32c(23));
    let low = out.bin(BinOp::And, &i32t, bits, i32c(0x7f_ffff));
    let m = out.bin(BinOp::Or, &i32t, low, i32c(0x80_0000));
    let s = out.bin(BinOp::Sub, &i32t, exp, i32c(120));
    let s = out.bin(BinOp::SMax, &i32t, s, i32c(0));
    let k = out.bin(BinOp::LShr, &i32t, s.clone(), i32c(5));
    let r = out.bin(BinOp::And, &i32t, s, i32c(31));
    // A_j = padded[k + j] for k in 0..=4 (padded = [0, TWO_OVER_PI...]).
    let padded = |n: usize| if n == 0 { 0 } else { i64::from(TWO_OVER_PI[n - 1]) };
    let words: Vec<Operand> = (0..4)
        .map(|j| {
            let mut w = i32c(padded(j + 4));
            for kk in (0..4).rev() {
                let is_k = out.icmp(IntPred::Eq, &i32t, k.clone(), i32c(kk as i64));
                w = out.select(&i32t, is_k, i32c(padded(j + kk)), w);
            }
            w
        })
        .collect();
    // W_j = the 32 bits at shift r: (A_j:A_j+1) >> (32 - r).
    let back = out.bin(BinOp::Sub, &i32t, i32c(32), r);
    let back64 = out.cast(CastOp::ZExt, &i32t, back, &i64t);
    let window: Vec<Operand> = (0..3)
        .map(|j| {
            let hi = out.cast(CastOp::ZExt, &i32t, words[j].clone(), &i64t);
            let hi = out.bin(BinOp::Shl, &i64t, hi, i64c(32));
            let lo = out.cast(CastOp::ZExt, &i32t, words[j + 1].clone(), &i64t);
            let both = out.bin(BinOp::Or, &i64t, hi, lo);
            let shifted = out.bin(BinOp::LShr, &i64t, both, back64.clone());
            out.cast(CastOp::Trunc, &i64t, shifted, &i32t)
        })
        .collect();
    // m · W mod 2^96 as H (bits 64..95) and L (bits 0..63).
    let m64 = out.cast(CastOp::ZExt, &i32t, m, &i64t);
    let product = |out: &mut Out, w: &Operand| {
        let w64 = out.cast(CastOp::ZExt, &i32t, w.clone(), &i64t);
        out.bin(BinOp::Mul, &i64t, m64.clone(), w64)
    };
    let (p0, p1, p2) = (product(out, &window[0]), product(out, &window[1]), product(out, &window[2]));
    let p1_up = out.bin(BinOp::Shl, &i64t, p1.clone(), i64c(32));
    let l = out.bin(BinOp::Add, &i64t, p2.clone(), p1_up);
    let carry = out.icmp(IntPred::Ult, &i64t, l.clone(), p2);
    let carry = out.cast(CastOp::ZExt, &i1, carry, &i32t);
    let p1_hi = out.bin(BinOp::LShr, &i64t, p1, i64c(32));
    let p1_hi = out.cast(CastOp::Trunc, &i64t, p1_hi, &i32t);
    let p0_lo = out.cast(CastOp::Trunc, &i64t, p0, &i32t);
    let h = out.bin(BinOp::Add, &i32t, p1_hi, p0_lo);
    let h = out.bin(BinOp::Add, &i32t, h, carry);
    let quadrant = out.bin(BinOp::LShr, &i32t, h.clone(), i32c(30));
    let h_frac = out.bin(BinOp::And, &i32t, h, i32c(0x3fff_ffff));
    let h_frac = out.cast(CastOp::ZExt, &i32t, h_frac, &i64t);
    let h_frac = out.bin(BinOp::Shl, &i64t, h_frac, i64c(34));
    let l_top = out.bin(BinOp::LShr, &i64t, l, i64c(30));
    let frac_bits = out.bin(BinOp::Or, &i64t, h_frac, l_top);
    let frac = out.cast(CastOp::UiToFp, &i64t, frac_bits, &f64t);
    let frac = out.bin(BinOp::FMul, &f64t, frac, float(&f64t, 2f64.powi(-64)));
    // Past half a quadrant: the next quadrant, a negative remainder.
    let upper = out.fcmp(FloatPred::Oge, &f64t, frac.clone(), float(&f64t, 0.5));
    let down = out.bin(BinOp::FSub, &f64t, frac.clone(), float(&f64t, 1.0));
    let frac = out.select(&f64t, upper.clone(), down, frac);
    let next = out.bin(BinOp::Add, &i32t, quadrant.clone(), i32c(1));
    let quadrant = out.select(&i32t, upper, next, quadrant);
    let reduced = out.bin(BinOp::FMul, &f64t, frac, float(&f64t, std::f64::consts::FRAC_PI_2));
    let wide = out.cast(CastOp::FpExt, &f32t, ax, &f64t);
    let r = out.select(&f64t, small.clone(), wide, reduced);
    let quadrant = out.select(&i32t, small, i32c(0), quadrant);
    // The polynomials (Horner in r²).
    let r2 = out.bin(BinOp::FMul, &f64t, r.clone(), r.clone());
    let horner = |out: &mut Out, coefficients: &[f64]| {
        let mut acc = float(&f64t, coefficients[0]);
        for &c in &coefficients[1..] {
            acc = out.value(f64t.clone(), Op::Fma { ty: f64t.clone(), a: acc, b: r2.clone(), c: float(&f64t, c) });
        }
        acc
    };
    let sin_poly = horner(out, &[-1.0 / 39_916_800.0, 1.0 / 362_880.0, -1.0 / 5040.0, 1.0 / 120.0, -1.0 / 6.0]);
    let r3 = out.bin(BinOp::FMul, &f64t, r2.clone(), r.clone());
    let sin_r = out.value(f64t.clone(), Op::Fma { ty: f64t.clone(), a: sin_poly, b: r3, c: r.clone() });
    let cos_poly = horner(out, &[-1.0 / 3_628_800.0, 1.0 / 40320.0, -1.0 / 720.0, 1.0 / 24.0, -0.5, 1.0]);
    // sin: [s, c, -s, -c]; cos: [c, -s, -c, s] by quadrant (cos = sin one quadrant on).
    let q = if sine { quadrant } else { out.bin(BinOp::Add, &i32t, quadrant, i32c(1)) };
    let odd = out.bin(BinOp::And, &i32t, q.clone(), i32c(1));
    let use_cos = out.icmp(IntPred::Ne, &i32t, odd, i32c(0));
    let value = out.select(&f64t, use_cos, cos_poly, sin_r);
    let half = out.bin(BinOp::And, &i32t, q, i32c(2));
    let negate = out.icmp(IntPred::Ne, &i32t, half, i32c(0));
    let negated = out.un(UnOp::FNeg, &f64t, value.clone());
    let value = out.select(&f64t, negate, negated, value);
    let narrow = out.cast(CastOp::FpTrunc, &f64t, value, &f32t);
    // sin is odd, cos even; NaN and infinities give NaN.
    let narrow = if sine {
        let negative = out.fcmp(FloatPred::Olt, &f32t, x.clone(), float(&f32t, 0.0));
        let flipped = out.un(UnOp::FNeg, &f32t, narrow.clone());
        out.select(&f32t, negative, flipped, narrow)
    } else {
        narrow
    };
    let magnitude = out.un(UnOp::FAbs, &f32t, x);
    let finite = out.fcmp(FloatPred::Olt, &f32t, magnitude, float(&f32t, f64::INFINITY));
    Op::Select { ty: f32t.clone(), cond: finite, if_true: narrow, if_false: float(&f32t, f64::NAN) }
}

fn cast(out: &mut Out, op: CastOp, from: &Type, arg: Operand, to: &Type) -> Op {
    let (i32t, i64t, f32t, f64t) = (Type::I32, Type::I64, Type::F32, Type::F64);
    if let (Type::Vector(fe, _), Type::Vector(te, _)) = (from, to) {
        let elems = out.elements(&arg).into_iter().map(|x| out.cast(op, fe, x, te)).collect();
        return Op::Make { ty: to.clone(), elems };
    }
    match (op, from, to) {
        // trunc to i1 keeps bit 0.
        (CastOp::Trunc, _, Type::I1) => {
            let bit = out.bin(BinOp::And, from, arg, int(from, 1));
            Op::Icmp { pred: IntPred::Ne, ty: from.clone(), lhs: bit, rhs: int(from, 0) }
        }
        // Extensions through i32.
        (CastOp::ZExt | CastOp::SExt, Type::I1 | Type::I8 | Type::I16, _) => {
            let wide = out.cast(op, from, arg, &i32t);
            if *to == i64t {
                Op::Cast { op, from: i32t, arg: wide, to: i64t }
            } else {
                Op::Cast { op: CastOp::Trunc, from: i32t, arg: wide, to: to.clone() }
            }
        }
        // Saturating float → i8/i16: saturated to i32, then clamped.
        (CastOp::FpToSi | CastOp::FpToUi, _, Type::I8 | Type::I16) => {
            let w = to.bits();
            let r = out.cast(op, from, arg, &i32t);
            let clamped = if op == CastOp::FpToSi {
                let lo = out.bin(BinOp::SMax, &i32t, r, int(&i32t, -(1i64 << (w - 1))));
                out.bin(BinOp::SMin, &i32t, lo, int(&i32t, (1i64 << (w - 1)) - 1))
            } else {
                out.bin(BinOp::UMin, &i32t, r, int(&i32t, (1i64 << w) - 1))
            };
            Op::Cast { op: CastOp::Trunc, from: i32t, arg: clamped, to: to.clone() }
        }
        (CastOp::FpToSi | CastOp::FpToUi, _, Type::I64) => {
            let x = if *from == f64t { arg } else { out.cast(CastOp::FpExt, from, arg, &f64t) };
            float_to_i64(out, op == CastOp::FpToSi, x)
        }
        (CastOp::SiToFp | CastOp::UiToFp, Type::I8 | Type::I16, _) => {
            let ext = if op == CastOp::SiToFp { CastOp::SExt } else { CastOp::ZExt };
            let wide = out.cast(ext, from, arg, &i32t);
            Op::Cast { op, from: i32t, arg: wide, to: to.clone() }
        }
        (CastOp::SiToFp | CastOp::UiToFp, Type::I64, _) => {
            let signed = op == CastOp::SiToFp;
            match to {
                // hi · 2^32 + lo: both halves exact in f64, one rounding in the fma.
                Type::F64 => {
                    let (lo, hi) = (out.low(&arg), out.high(&arg));
                    let hi_f = out.cast(op, &i32t, hi, &f64t);
                    let lo_f = out.cast(CastOp::UiToFp, &i32t, lo, &f64t);
                    Op::Fma { ty: f64t.clone(), a: hi_f, b: float(&f64t, 4294967296.0), c: lo_f }
                }
                Type::F32 => i64_to_f32(out, signed, arg),
                // Through f32: exact below 2^24, and f16 overflows above 65520.
                _ => {
                    let f = out.cast(op, &i64t, arg, &f32t);
                    Op::Cast { op: CastOp::FpTrunc, from: f32t, arg: f, to: to.clone() }
                }
            }
        }
        (CastOp::FpTrunc, Type::F64, Type::F16) => {
            // Round to odd in f32 (24 bits >= 11 + 2), then to nearest in f16:
            // the same as rounding once. The f32 result r of rounding to nearest
            // is moved one ulp toward zero when it rounded away from zero, and
            // gets its last bit set when it is inexact.
            let r = out.cast(CastOp::FpTrunc, &f64t, arg.clone(), &f32t);
            let back = out.cast(CastOp::FpExt, &f32t, r.clone(), &f64t);
            let inexact = out.fcmp(FloatPred::One, &f64t, back.clone(), arg.clone());
            let (abs_back, abs_x) = (out.un(UnOp::FAbs, &f64t, back), out.un(UnOp::FAbs, &f64t, arg));
            let away = out.fcmp(FloatPred::Ogt, &f64t, abs_back, abs_x);
            let bits = out.cast(CastOp::Bitcast, &f32t, r, &i32t);
            let toward = out.bin(BinOp::Sub, &i32t, bits.clone(), int(&i32t, 1));
            let truncated = out.select(&i32t, away, toward, bits);
            let odd = out.bin(BinOp::Or, &i32t, truncated.clone(), int(&i32t, 1));
            let rounded = out.select(&i32t, inexact, odd, truncated);
            let f = out.cast(CastOp::Bitcast, &i32t, rounded, &f32t);
            Op::Cast { op: CastOp::FpTrunc, from: f32t, arg: f, to: Type::F16 }
        }
        _ => unreachable!("cast without a rewrite: {op:?} {from} to {to}"),
    }
}

/// Saturating f64 → i64 (NaN → 0): the truncated value split into
/// hi = floor(t / 2^32) and lo = t - hi · 2^32 (both exact), each converted by
/// the 32-bit instructions; values outside the range are selected.
fn float_to_i64(out: &mut Out, signed: bool, x: Operand) -> Op {
    let (i32t, i64t, f64t) = (Type::I32, Type::I64, Type::F64);
    let t = out.un(UnOp::Trunc, &f64t, x);
    let scaled = out.bin(BinOp::FMul, &f64t, t.clone(), float(&f64t, 1.0 / 4294967296.0));
    let hi_f = out.un(UnOp::Floor, &f64t, scaled);
    let lo_f = out.value(f64t.clone(), Op::Fma { ty: f64t.clone(), a: hi_f.clone(), b: float(&f64t, -4294967296.0), c: t.clone() });
    let hi_op = if signed { CastOp::FpToSi } else { CastOp::FpToUi };
    let hi = out.cast(hi_op, &f64t, hi_f, &i32t);
    let lo = out.cast(CastOp::FpToUi, &f64t, lo_f, &i32t);
    let hi64 = out.cast(CastOp::ZExt, &i32t, hi, &i64t);
    let hi64 = out.bin(BinOp::Shl, &i64t, hi64, int(&i64t, 32));
    let lo64 = out.cast(CastOp::ZExt, &i32t, lo, &i64t);
    let r = out.bin(BinOp::Or, &i64t, hi64, lo64);
    let (low, low_value, high, high_value) =
        if signed { (-9223372036854775808.0, i64::MIN, 9223372036854775808.0, i64::MAX) } else { (0.0, 0, 18446744073709551616.0, -1) };
    // Beyond the range (infinities included: lo would be inf - inf) the
    // halves are wrong; NaN compares false both ways and converts to 0.
    let above = out.fcmp(FloatPred::Oge, &f64t, t.clone(), float(&f64t, high));
    let r = out.select(&i64t, above, int(&i64t, high_value), r);
    let below = out.fcmp(FloatPred::Olt, &f64t, t, float(&f64t, low));
    Op::Select { ty: i64t.clone(), cond: below, if_true: int(&i64t, low_value), if_false: r }
}

/// i64 → f32 rounded once: the value normalised so its top bit is bit 63, its
/// high word converted with the low word's bits as a sticky bit (so ties are
/// decided right), and scaled back by a power of two (exact).
fn i64_to_f32(out: &mut Out, signed: bool, x: Operand) -> Op {
    let (i32t, i64t, f32t) = (Type::I32, Type::I64, Type::F32);
    let (magnitude, negative) = if signed {
        let neg = out.icmp(IntPred::Slt, &i64t, x.clone(), int(&i64t, 0));
        let negated = out.bin(BinOp::Sub, &i64t, int(&i64t, 0), x.clone());
        (out.select(&i64t, neg.clone(), negated, x), Some(neg))
    } else {
        (x, None)
    };
    let lz = out.un(UnOp::Clz, &i64t, magnitude.clone());
    let normalised = out.bin(BinOp::Shl, &i64t, magnitude, lz.clone());
    let (lo, hi) = (out.low(&normalised), out.high(&normalised));
    let any_low = out.icmp(IntPred::Ne, &i32t, lo, int(&i32t, 0));
    let sticky = out.cast(CastOp::ZExt, &Type::I1, any_low, &i32t);
    let top = out.bin(BinOp::Or, &i32t, hi, sticky);
    let f = out.cast(CastOp::UiToFp, &i32t, top, &f32t);
    // 2^(32 - lz) as f32 bits: exponent field 127 + 32 - lz (lz <= 64: normal).
    let lz32 = out.cast(CastOp::Trunc, &i64t, lz, &i32t);
    let field = out.bin(BinOp::Sub, &i32t, int(&i32t, 159), lz32);
    let scale_bits = out.bin(BinOp::Shl, &i32t, field, int(&i32t, 23));
    let scale = out.cast(CastOp::Bitcast, &i32t, scale_bits, &f32t);
    let scaled = Op::Binary { op: BinOp::FMul, ty: f32t.clone(), lhs: f, rhs: scale };
    match negative {
        Some(neg) => {
            let m = out.value(f32t.clone(), scaled);
            let flipped = out.un(UnOp::FNeg, &f32t, m.clone());
            Op::Select { ty: f32t, cond: neg, if_true: flipped, if_false: m }
        }
        None => scaled,
    }
}

/// A bitcast with a vector on either side: the source as integer pieces of
/// the narrower element width (element 0 in the low bits), regrouped into the
/// result's elements.
fn bitcast(out: &mut Out, from: &Type, arg: Operand, to: &Type) -> Rewritten {
    let (fe, te) = (from.element().clone(), to.element().clone());
    let unit = fe.bits().min(te.bits());
    let unit_ty = int_of_width(unit);
    let mut pieces = Vec::new();
    for x in out.elements(&arg) {
        let as_int = int_of_width(fe.bits());
        let x = if fe.is_float() { out.cast(CastOp::Bitcast, &fe, x, &as_int) } else { x };
        if fe.bits() == unit {
            pieces.push(x);
            continue;
        }
        for k in 0..fe.bits() / unit {
            let shifted = if k == 0 { x.clone() } else { out.bin(BinOp::LShr, &as_int, x.clone(), int(&as_int, i64::from(k * unit))) };
            pieces.push(out.cast(CastOp::Trunc, &as_int, shifted, &unit_ty));
        }
    }
    let per = (te.bits() / unit) as usize;
    let groups: Vec<Vec<Operand>> = pieces.chunks(per).map(<[Operand]>::to_vec).collect();
    let mut elems: Vec<Rewritten> = groups.into_iter().map(|g| element_of(out, &g, unit, &te)).collect();
    match to {
        Type::Vector(..) => {
            let elems = elems
                .into_iter()
                .map(|e| match e {
                    Rewritten::Op(op) => out.value(te.clone(), op),
                    Rewritten::Is(x) => x,
                })
                .collect();
            Rewritten::Op(Op::Make { ty: to.clone(), elems })
        }
        _ => elems.pop().expect("one element"),
    }
}

/// One result element of a bitcast from its pieces (lowest first).
fn element_of(out: &mut Out, group: &[Operand], unit: u32, te: &Type) -> Rewritten {
    let unit_ty = int_of_width(unit);
    let as_int = int_of_width(te.bits());
    let value = if group.len() == 1 {
        group[0].clone()
    } else {
        let mut acc: Option<Operand> = None;
        for (k, p) in group.iter().enumerate() {
            let wide = out.cast(CastOp::ZExt, &unit_ty, p.clone(), &as_int);
            let placed = if k == 0 { wide } else { out.bin(BinOp::Shl, &as_int, wide, int(&as_int, (k as i64) * i64::from(unit))) };
            acc = Some(match acc {
                None => placed,
                Some(a) => out.bin(BinOp::Or, &as_int, a, placed),
            });
        }
        acc.expect("a group has pieces")
    };
    if te.is_float() {
        Rewritten::Op(Op::Cast { op: CastOp::Bitcast, from: as_int, arg: value, to: te.clone() })
    } else {
        Rewritten::Is(value)
    }
}

/// i64 division and remainder without a bit loop (the method of LLVM's
/// AMDGPU lowering): a float estimate of 2^64 / d made into a 64-bit
/// reciprocal R, refined by two Newton steps in integer arithmetic
/// (R += mulhi(R, -d · R)), the quotient estimate q = mulhi(n, R) and at most
/// two corrections (while r = n - q · d >= d). Signed forms divide the
/// magnitudes and restore the signs (the quotient's is the operands' xor,
/// the remainder's the dividend's).
fn div64(out: &mut Out, op: BinOp, n: Operand, d: Operand) -> Rewritten {
    let i64t = Type::I64;
    let signed = matches!(op, BinOp::SDiv | BinOp::SRem);
    let remainder = matches!(op, BinOp::URem | BinOp::SRem);
    if !signed {
        let (q, r) = udivrem64(out, n, d);
        return Rewritten::Is(if remainder { r } else { q });
    }
    // |x| = (x ^ s) - s with s = x >> 63 (arithmetic).
    let sign = |out: &mut Out, x: &Operand| out.bin(BinOp::AShr, &i64t, x.clone(), int(&i64t, 63));
    let magnitude = |out: &mut Out, x: &Operand, s: &Operand| {
        let flipped = out.bin(BinOp::Xor, &i64t, x.clone(), s.clone());
        out.bin(BinOp::Sub, &i64t, flipped, s.clone())
    };
    let (sn, sd) = (sign(out, &n), sign(out, &d));
    let (an, ad) = (magnitude(out, &n, &sn), magnitude(out, &d, &sd));
    let (q, r) = udivrem64(out, an, ad);
    let (value, s) = if remainder { (r, sn) } else { (q, out.bin(BinOp::Xor, &i64t, sn, sd)) };
    let flipped = out.bin(BinOp::Xor, &i64t, value, s.clone());
    Rewritten::Op(Op::Binary { op: BinOp::Sub, ty: i64t, lhs: flipped, rhs: s })
}

/// Unsigned 64-bit quotient and remainder (see [`div64`]).
fn udivrem64(out: &mut Out, n: Operand, d: Operand) -> (Operand, Operand) {
    let (i32t, i64t, f32t) = (Type::I32, Type::I64, Type::F32);
    // d as f32 (lo + hi · 2^32, rounded), its reciprocal scaled by just under
    // 2^64 so that R never exceeds 2^64 - 1, split into two 32-bit integers.
    let (dl, dh) = (out.low(&d), out.high(&d));
    let dl_f = out.cast(CastOp::UiToFp, &i32t, dl, &f32t);
    let dh_f = out.cast(CastOp::UiToFp, &i32t, dh, &f32t);
    let d_f = out.value(f32t.clone(), Op::Fma { ty: f32t.clone(), a: dh_f, b: float(&f32t, 4294967296.0), c: dl_f });
    let rcp = out.bin(BinOp::FDiv, &f32t, float(&f32t, 1.0), d_f);
    let scaled = out.bin(BinOp::FMul, &f32t, rcp, Operand::Const(Const { ty: f32t.clone(), bits: 0x5f7f_fffc }));
    let hi_part = out.bin(BinOp::FMul, &f32t, scaled.clone(), float(&f32t, 1.0 / 4294967296.0));
    let hi_f = out.un(UnOp::Trunc, &f32t, hi_part);
    let lo_f = out.value(f32t.clone(), Op::Fma { ty: f32t.clone(), a: hi_f.clone(), b: float(&f32t, -4294967296.0), c: scaled });
    let hi = out.cast(CastOp::FpToUi, &f32t, hi_f, &i32t);
    let lo = out.cast(CastOp::FpToUi, &f32t, lo_f, &i32t);
    let hi64 = out.cast(CastOp::ZExt, &i32t, hi, &i64t);
    let hi64 = out.bin(BinOp::Shl, &i64t, hi64, int(&i64t, 32));
    let lo64 = out.cast(CastOp::ZExt, &i32t, lo, &i64t);
    let mut r = out.bin(BinOp::Or, &i64t, hi64, lo64);
    let neg_d = out.bin(BinOp::Sub, &i64t, int(&i64t, 0), d.clone());
    for _ in 0..2 {
        let e = out.bin(BinOp::Mul, &i64t, neg_d.clone(), r.clone());
        let step = mulhi_u64(out, &r, &e);
        let step = out.value(i64t.clone(), step);
        r = out.bin(BinOp::Add, &i64t, r, step);
    }
    let q = mulhi_u64(out, &n, &r);
    let mut q = out.value(i64t.clone(), q);
    let qd = out.bin(BinOp::Mul, &i64t, q.clone(), d.clone());
    let mut rem = out.bin(BinOp::Sub, &i64t, n, qd);
    for _ in 0..2 {
        let over = out.icmp(IntPred::Uge, &i64t, rem.clone(), d.clone());
        let q1 = out.bin(BinOp::Add, &i64t, q.clone(), int(&i64t, 1));
        let r1 = out.bin(BinOp::Sub, &i64t, rem.clone(), d.clone());
        q = out.select(&i64t, over.clone(), q1, q);
        rem = out.select(&i64t, over, r1, rem);
    }
    (q, rem)
}

#[cfg(test)]
mod tests {
    //! Each rewrite against the operation it replaces, both run by the
    //! interpreter (whose definitions are Rust's own integer and IEEE
    //! arithmetic) on edge values and pseudo-random ones.
    use super::*;
    use crate::mir::interp::{self, ops::equivalent, Memory, Options, RtValue};
    use crate::mir::{parse, verify::verify, Module};

    fn edge_values(ty: &Type) -> Vec<u64> {
        let mut v: Vec<u64> = match ty {
            Type::F16 => vec![0, 0x8000, 0x3c00, 0xbc00, 0x3800, 0x3e00, 0x4100, 0xc100, 0x7bff, 0x0400, 0x0001, 0x0200, 0x7c00, 0xfc00, 0x7e00, 0x7d00],
            Type::F32 => [0.0f32, -0.0, 1.0, -1.0, 0.5, 1.5, 2.5, -2.5, f32::MAX, f32::MIN_POSITIVE, 1e-45, 3e9, -3e9, 2147483648.0, 4294967296.0, 9.223372e18, 1.8446744e19, 65504.0, 65520.0, 1e10, f32::INFINITY, f32::NEG_INFINITY, f32::NAN]
                .iter()
                .map(|x| u64::from(x.to_bits()))
                .collect(),
            Type::F64 => [0.0f64, -0.0, 1.0, -1.0, 0.5, 2.5, -2.5, f64::MAX, f64::MIN_POSITIVE, 5e-324, 3e9, -3e9, 9.223372036854775807e18, -9.223372036854775808e18, -9.223372036854778e18, 1.8446744073709552e19, 65504.0, 65519.99, 65520.0, 1.0000000596046448, 6.103515625e-05, 5.960464477539063e-08, 2.98023223876953125e-08, 2.9802322387695315e-08, f64::INFINITY, f64::NEG_INFINITY, f64::NAN]
                .iter()
                .map(|x| x.to_bits())
                .collect(),
            _ => {
                let w = ty.bits();
                let mask = if w == 64 { u64::MAX } else { (1 << w) - 1 };
                [0u64, 1, 2, 3, 7, 31, 32, 63, 64, mask, mask - 1, mask >> 1, (mask >> 1) + 1, (mask >> 1) + 2, 0x5555_5555_5555_5555, 0x1234_5678_9abc_def0, 1 << 32, (1 << 32) - 1, (1 << 32) + 1, 1 << 24, (1 << 24) + 1, 0xffff_ffff_0000_0001]
                    .iter()
                    .map(|x| x & mask)
                    .collect()
            }
        };
        // Pseudo-random values (xorshift) spread over all bit patterns.
        let mut state = 0x9e37_79b9_7f4a_7c15u64 ^ u64::from(ty.bits());
        let mask = if ty.bits() >= 64 { u64::MAX } else { (1 << ty.bits()) - 1 };
        for i in 0..40 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            // Some with few significant bits (small divisors, near-integers).
            let x = if i % 3 == 0 { state >> (state % 60) } else { state };
            v.push(x & mask);
        }
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Runs `@f` of `text` and of its legalized form on every operand tuple
    /// (the operand types as listed), comparing results.
    fn check(text: &str, operand_types: &[Type]) {
        let module = parse(text).unwrap();
        verify(&module).unwrap();
        let legal = run(&module.functions[0], NativeFloatAtomics::default()).expect("something to legalize");
        let legal_module = Module::new(vec![legal]);
        verify(&legal_module).unwrap_or_else(|e| panic!("{e:?}\n{}", legal_module));
        let inputs: Vec<Vec<u64>> = operand_types.iter().map(edge_values).collect();
        let mut tuple = vec![0usize; inputs.len()];
        let ret_ty = module.functions[0].ret.clone().unwrap();
        let mut checked = 0;
        loop {
            let args: Vec<RtValue> = tuple.iter().zip(&inputs).map(|(&i, v)| RtValue::Scalar(v[i])).collect();
            let opts = Options::default();
            let want = interp::call_function(&module, "f", &args, &mut Memory::new(), &opts);
            if let Ok(want) = want {
                let got = interp::call_function(&legal_module, "f", &args, &mut Memory::new(), &opts).unwrap();
                let (Some(RtValue::Scalar(w)), Some(RtValue::Scalar(g))) = (&want, &got) else { panic!("scalar results") };
                assert!(equivalent(&ret_ty, *w, *g), "{text}\nargs {args:x?}: want {w:#x}, got {g:#x}");
                checked += 1;
            }
            // Next tuple (odometer).
            let mut k = 0;
            loop {
                if k == tuple.len() {
                    assert!(checked > 0);
                    return;
                }
                tuple[k] += 1;
                if tuple[k] < inputs[k].len() {
                    break;
                }
                tuple[k] = 0;
                k += 1;
            }
        }
    }

    fn binary(op: &str, ty: Type) {
        check(&format!("func @f(%a: {ty}, %b: {ty}) -> {ty} {{\nentry:\n  %r = {op} {ty} %a, %b\n  ret %r\n}}\n"), &[ty.clone(), ty]);
    }

    #[test]
    fn narrow_integer_arithmetic() {
        for ty in [Type::I8, Type::I16] {
            for op in ["add", "sub", "mul", "mulhi.s", "mulhi.u", "sdiv", "udiv", "srem", "urem", "and", "or", "xor", "shl", "lshr", "ashr", "smin", "smax", "umin", "umax"] {
                binary(op, ty.clone());
            }
            for op in ["not", "popcount", "clz", "ctz"] {
                check(&format!("func @f(%a: {ty}) -> {ty} {{\nentry:\n  %r = {op} {ty} %a\n  ret %r\n}}\n"), &[ty.clone()]);
            }
        }
    }

    #[test]
    fn integer_builtins() {
        for ty in [Type::I8, Type::I16, Type::I32, Type::I64] {
            for op in ["rotl", "rotr", "addsat.s", "addsat.u", "subsat.s", "subsat.u"] {
                binary(op, ty.clone());
            }
            for op in ["abs", "bitreverse", "bswap"] {
                if op == "bswap" && ty == Type::I8 || (op != "abs" && ty == Type::I32) {
                    continue;
                }
                check(&format!("func @f(%a: {ty}) -> {ty} {{\nentry:\n  %r = {op} {ty} %a\n  ret %r\n}}\n"), &[ty.clone()]);
            }
        }
    }

    #[test]
    fn wide_integer_arithmetic() {
        for op in ["mulhi.s", "mulhi.u", "sdiv", "udiv", "srem", "urem", "smin", "smax", "umin", "umax"] {
            binary(op, Type::I64);
        }
        for op in ["not", "popcount", "clz", "ctz"] {
            check(&format!("func @f(%a: i64) -> i64 {{\nentry:\n  %r = {op} i64 %a\n  ret %r\n}}\n"), &[Type::I64]);
        }
    }

    #[test]
    fn i64_division_on_many_operands() {
        // Divisors of every magnitude (the estimate is least accurate for
        // large ones) against dividends of every magnitude.
        let text = "func @f(%a: i64, %b: i64) -> i64 {\nentry:\n  %q = udiv i64 %a, %b\n  %r = urem i64 %a, %b\n  %x = xor i64 %q, %r\n  %y = mul i64 %q, 3\n  %z = add i64 %x, %y\n  ret %z\n}\n";
        let module = parse(text).unwrap();
        let legal_module = Module::new(vec![run(&module.functions[0], NativeFloatAtomics::default()).unwrap()]);
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..20000 {
            let (x, y) = (next() >> (next() % 64), (next() >> (next() % 64)).max(1));
            let args = [RtValue::Scalar(x), RtValue::Scalar(y)];
            let got = interp::call_function(&legal_module, "f", &args, &mut Memory::new(), &Options::default()).unwrap();
            let want = (x / y ^ x % y).wrapping_add((x / y).wrapping_mul(3));
            assert_eq!(got, Some(RtValue::Scalar(want)), "{x} / {y}");
        }
    }

    #[test]
    fn compares_of_narrow_integers() {
        for ty in [Type::I8, Type::I16] {
            for pred in ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"] {
                check(&format!("func @f(%a: {ty}, %b: {ty}) -> i32 {{\nentry:\n  %c = icmp {pred} {ty} %a, %b\n  %r = zext i1 %c to i32\n  ret %r\n}}\n"), &[ty.clone(), ty.clone()]);
            }
        }
    }

    #[test]
    fn casts() {
        let (ints, floats) = ([Type::I8, Type::I16, Type::I32, Type::I64], [Type::F16, Type::F32, Type::F64]);
        let mut cases: Vec<(&str, Type, Type)> = Vec::new();
        for from in [Type::I8, Type::I16] {
            cases.push(("zext", from.clone(), Type::I64));
            cases.push(("sext", from.clone(), Type::I64));
        }
        for f in &floats {
            for i in &ints {
                cases.push(("fptosi", f.clone(), i.clone()));
                cases.push(("fptoui", f.clone(), i.clone()));
                cases.push(("sitofp", i.clone(), f.clone()));
                cases.push(("uitofp", i.clone(), f.clone()));
            }
        }
        cases.push(("fptrunc", Type::F64, Type::F16));
        for (op, from, to) in cases {
            let text = format!("func @f(%a: {from}) -> {to} {{\nentry:\n  %r = {op} {from} %a to {to}\n  ret %r\n}}\n");
            let module = parse(&text).unwrap();
            if run(&module.functions[0], NativeFloatAtomics::default()).is_some() {
                check(&text, &[from]);
            }
        }
        for to in [Type::I8, Type::I16, Type::I64] {
            for op in ["zext", "sext"] {
                check(&format!("func @f(%a: i32) -> {to} {{\nentry:\n  %c = trunc i32 %a to i1\n  %r = {op} i1 %c to {to}\n  ret %r\n}}\n"), &[Type::I32]);
            }
        }
    }

    #[test]
    fn vector_compares_select_element_by_element() {
        check("func @f(%a: i64, %b: i64) -> i64 {\nentry:\n  %x = bitcast i64 %a to <4 x i16>\n  %y = bitcast i64 %b to <4 x i16>\n  %c = icmp slt <4 x i16> %x, %y\n  %n = not <4 x i1> %c\n  %s = select <4 x i16> %n, %x, %y\n  %w = zext <4 x i1> %c to <4 x i16>\n  %t = add <4 x i16> %s, %w\n  %r = bitcast <4 x i16> %t to i64\n  ret %r\n}\n", &[Type::I64, Type::I64]);
        check("func @f(%a: i64, %b: i64) -> i64 {\nentry:\n  %x = bitcast i64 %a to <2 x f32>\n  %y = bitcast i64 %b to <2 x f32>\n  %c = fcmp ult <2 x f32> %x, %y\n  %s = select <2 x f32> %c, %x, %y\n  %i = fptosi <2 x f32> %s to <2 x i32>\n  %r = bitcast <2 x i32> %i to i64\n  ret %r\n}\n", &[Type::I64, Type::I64]);
    }

    #[test]
    fn sine_and_cosine_are_within_an_ulp() {
        // Against the f64 reference over every exponent, huge arguments
        // (Payne-Hanek) and small ones, by the interpreter on the rewrite.
        for op in ["sin", "cos"] {
            let text = format!("func @f(%a: f32) -> f32 {{\nentry:\n  %r = {op} f32 %a\n  ret %r\n}}\n");
            let module = parse(&text).unwrap();
            let legal_module = Module::new(vec![run(&module.functions[0], NativeFloatAtomics::default()).unwrap()]);
            verify(&legal_module).unwrap();
            let mut state = 0x1234_5678_9abc_def0u64;
            let mut inputs: Vec<u32> = vec![0, 0x8000_0000, 0x3f80_0000, 0x3f49_0fdb, 0x3fc9_0fdb, 0x4049_0fdb, 0x7f7f_ffff, 0x7f80_0000, 0xff80_0000, 0x7fc0_0000, 1, 0x4b80_0000, 0x5a00_0000];
            for _ in 0..6000 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                inputs.push(state as u32);
            }
            for x in inputs {
                let args = [RtValue::Scalar(u64::from(x))];
                let got = interp::call_function(&legal_module, "f", &args, &mut Memory::new(), &Options::default()).unwrap();
                let want = interp::call_function(&module, "f", &args, &mut Memory::new(), &Options::default()).unwrap();
                let (Some(RtValue::Scalar(g)), Some(RtValue::Scalar(w))) = (got, want) else { panic!("scalar results") };
                let op_kind = if op == "sin" { UnOp::Sin } else { UnOp::Cos };
                assert!(crate::mir::interp::ops::transcendental_acceptable(op_kind, &Type::F32, u64::from(x), w, g), "{op}({:e} = {x:#x}): want {w:#x}, got {g:#x}", f32::from_bits(x));
            }
        }
    }

    #[test]
    fn the_table_of_two_over_pi_is_right() {
        // 2/π · 2^bits from π by Machin's formula in integers (bits + guard).
        let bits = 260u32;
        let scale = |n: u32| num_pow2(n);
        let atan_inv = |x: u128| {
            // arctan(1/x) · 2^bits with u128 limbs is too small: use a Vec<u64> big integer.
            big_atan_inv(x as u64, bits)
        };
        let _ = (scale, atan_inv);
        let pi = big_pi(bits);
        let two_over_pi = big_div_pow2_by(bits * 2 + 1, &pi);
        let words: Vec<u32> = (0..7).map(|i| big_bits(&two_over_pi, bits - 32 * (i + 1), 32) as u32).collect();
        assert_eq!(words, TWO_OVER_PI.to_vec());
    }

    // A little unsigned big-integer arithmetic on little-endian u32 limbs.
    fn num_pow2(n: u32) -> Vec<u32> {
        let mut v = vec![0u32; (n / 32 + 1) as usize];
        v[(n / 32) as usize] = 1 << (n % 32);
        v
    }
    fn big_add(a: &[u32], b: &[u32]) -> Vec<u32> {
        let mut out = Vec::new();
        let mut carry = 0u64;
        for i in 0..a.len().max(b.len()) {
            let s = u64::from(*a.get(i).unwrap_or(&0)) + u64::from(*b.get(i).unwrap_or(&0)) + carry;
            out.push(s as u32);
            carry = s >> 32;
        }
        if carry > 0 {
            out.push(carry as u32);
        }
        out
    }
    fn big_sub(a: &[u32], b: &[u32]) -> Vec<u32> {
        let mut out = Vec::new();
        let mut borrow = 0i64;
        for i in 0..a.len() {
            let mut d = i64::from(a[i]) - i64::from(*b.get(i).unwrap_or(&0)) - borrow;
            borrow = 0;
            if d < 0 {
                d += 1 << 32;
                borrow = 1;
            }
            out.push(d as u32);
        }
        out
    }
    fn big_mul_small(a: &[u32], m: u64) -> Vec<u32> {
        let mut out = Vec::new();
        let mut carry = 0u128;
        for &x in a {
            let p = u128::from(x) * u128::from(m) + carry;
            out.push(p as u32);
            carry = p >> 32;
        }
        while carry > 0 {
            out.push(carry as u32);
            carry >>= 32;
        }
        out
    }
    fn big_div_small(a: &[u32], d: u64) -> Vec<u32> {
        let mut out = vec![0u32; a.len()];
        let mut rem = 0u128;
        for i in (0..a.len()).rev() {
            let cur = (rem << 32) | u128::from(a[i]);
            out[i] = (cur / u128::from(d)) as u32;
            rem = cur % u128::from(d);
        }
        out
    }
    fn big_is_zero(a: &[u32]) -> bool {
        a.iter().all(|&x| x == 0)
    }
    fn big_cmp(a: &[u32], b: &[u32]) -> std::cmp::Ordering {
        for i in (0..a.len().max(b.len())).rev() {
            let (x, y) = (*a.get(i).unwrap_or(&0), *b.get(i).unwrap_or(&0));
            if x != y {
                return x.cmp(&y);
            }
        }
        std::cmp::Ordering::Equal
    }
    /// arctan(1/x) · 2^bits by its series.
    fn big_atan_inv(x: u64, bits: u32) -> Vec<u32> {
        let mut term = big_div_small(&num_pow2(bits), x);
        let mut total = vec![0u32];
        let (mut n, mut positive) = (1u64, true);
        let mut negative = vec![0u32];
        while !big_is_zero(&term) {
            let t = big_div_small(&term, n);
            if positive {
                total = big_add(&total, &t);
            } else {
                negative = big_add(&negative, &t);
            }
            term = big_div_small(&term, x * x);
            n += 2;
            positive = !positive;
        }
        big_sub(&total, &negative)
    }
    /// π · 2^bits = 4 (4 atan(1/5) - atan(1/239)) (Machin).
    fn big_pi(bits: u32) -> Vec<u32> {
        let a = big_mul_small(&big_atan_inv(5, bits), 4);
        let b = big_atan_inv(239, bits);
        big_mul_small(&big_sub(&a, &b), 4)
    }
    /// floor(2^n / d) by long division (restoring, bit by bit).
    fn big_div_pow2_by(n: u32, d: &[u32]) -> Vec<u32> {
        let mut quotient = vec![0u32; (n / 32 + 2) as usize];
        let mut rem = vec![0u32];
        for bit in (0..=n).rev() {
            rem = big_mul_small(&rem, 2);
            if bit == n {
                rem = big_add(&rem, &[1]);
            }
            if big_cmp(&rem, d) != std::cmp::Ordering::Less {
                rem = big_sub(&rem, d);
                quotient[(bit / 32) as usize] |= 1 << (bit % 32);
            }
        }
        quotient
    }
    fn big_bits(a: &[u32], from: u32, count: u32) -> u64 {
        (0..count).fold(0u64, |acc, k| {
            let b = from + count - 1 - k;
            acc << 1 | u64::from(a.get((b / 32) as usize).map_or(0, |w| w >> (b % 32) & 1))
        })
    }

    #[test]
    fn vectors_and_bitcasts() {
        // Vector arithmetic element by element; results compared through a bitcast to i64 or a scalar.
        check("func @f(%a: i64, %b: i64) -> i64 {\nentry:\n  %x = bitcast i64 %a to <4 x i16>\n  %y = bitcast i64 %b to <4 x i16>\n  %s = mul <4 x i16> %x, %y\n  %r = bitcast <4 x i16> %s to i64\n  ret %r\n}\n", &[Type::I64, Type::I64]);
        check("func @f(%a: i64, %b: i64) -> i64 {\nentry:\n  %x = bitcast i64 %a to <2 x f32>\n  %y = bitcast i64 %b to <2 x f32>\n  %s = fdiv <2 x f32> %x, %y\n  %r = bitcast <2 x f32> %s to i64\n  ret %r\n}\n", &[Type::I64, Type::I64]);
        check("func @f(%a: i32) -> i32 {\nentry:\n  %x = bitcast i32 %a to <4 x i8>\n  %s = clz <4 x i8> %x\n  %r = bitcast <4 x i8> %s to i32\n  ret %r\n}\n", &[Type::I32]);
        check("func @f(%a: i64) -> f64 {\nentry:\n  %x = bitcast i64 %a to <4 x f16>\n  %y = bitcast <4 x f16> %x to <2 x i32>\n  %r = bitcast <2 x i32> %y to f64\n  ret %r\n}\n", &[Type::I64]);
    }
}
