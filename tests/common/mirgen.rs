//! A generator of random well-formed MIR kernels, for round-trip tests now and
//! differential fuzzing of later stages (code generator vs interpreter).
//!
//! The generator is driven by a list of random numbers (`choices`), which proptest
//! produces and shrinks; the same choices always give the same kernel. Kernels are
//! built with the builder API, so the builder is exercised too.
//!
//! Every generated kernel is free of undefined behaviour when launched as
//! [`launch_shape`] says: it reads `input[i]` (i32) and writes exactly
//! `OUTPUTS_PER_ITEM` i32 words to `output[i * OUTPUTS_PER_ITEM + k]`, where `i` is
//! the global work-item id; divisions are unsigned by a divisor forced odd; loops
//! run at most 7 times. It uses integer and float arithmetic, compares, selects,
//! conversions, divergent if/else and loops with block parameters.

#![allow(dead_code)]

use amdgpu_cg::abi::{AddrSpace, Type};
use amdgpu_cg::mir::builder::FunctionBuilder;
use amdgpu_cg::mir::{BinOp, BlockId, Builtin, CastOp, FloatPred, IntPred, Module, Operand, UnOp, Value};
use proptest::prelude::*;

/// i32 words each work-item writes.
pub const OUTPUTS_PER_ITEM: u32 = 4;

/// proptest strategy: a random kernel and the choices that made it.
pub fn arb_kernel() -> impl Strategy<Value = Module> {
    prop::collection::vec(any::<u32>(), 8..160).prop_map(|choices| build_kernel(&choices))
}

struct Gen<'a> {
    choices: &'a [u32],
    next: usize,
    f: FunctionBuilder,
    ints: Vec<Value>,
    floats: Vec<Value>,
    blocks: usize,
    depth: u32,
}

impl Gen<'_> {
    fn pick(&mut self, n: usize) -> usize {
        let c = self.choices.get(self.next).copied().unwrap_or(0);
        self.next += 1;
        (c as usize) % n.max(1)
    }

    fn exhausted(&self) -> bool {
        self.next >= self.choices.len()
    }

    fn int(&mut self) -> Value {
        let i = self.pick(self.ints.len());
        self.ints[i]
    }

    fn float(&mut self) -> Value {
        let i = self.pick(self.floats.len());
        self.floats[i]
    }

    fn small_const(&mut self) -> Operand {
        let values = [0, 1, 2, 3, 7, 31, 64, -1, -16, 1000, 0x7fff_ffff, i32::MIN as i64];
        let v = values[self.pick(values.len())];
        self.f.int(Type::I32, v)
    }

    fn new_block(&mut self, prefix: &str) -> BlockId {
        self.blocks += 1;
        let name = format!("{prefix}{}", self.blocks);
        self.f.create_block(&name)
    }

    /// One straight-line operation adding a value to a pool.
    fn straight(&mut self) {
        let f32t = Type::F32;
        match self.pick(12) {
            0..=3 => {
                let ops = [
                    BinOp::Add,
                    BinOp::Sub,
                    BinOp::Mul,
                    BinOp::And,
                    BinOp::Or,
                    BinOp::Xor,
                    BinOp::Shl,
                    BinOp::LShr,
                    BinOp::AShr,
                    BinOp::SMin,
                    BinOp::SMax,
                    BinOp::UMin,
                    BinOp::UMax,
                    BinOp::MulHiS,
                    BinOp::MulHiU,
                ];
                let op = ops[self.pick(ops.len())];
                let a = self.int();
                let b: Operand = if self.pick(3) == 0 { self.small_const() } else { self.int().into() };
                let v = self.f.binary(op, Type::I32, a, b);
                self.ints.push(v);
            }
            4 => {
                // Unsigned division by a divisor forced odd (never zero).
                let a = self.int();
                let d = self.int();
                let one = self.f.int(Type::I32, 1);
                let odd = self.f.binary(BinOp::Or, Type::I32, d, one);
                let op = if self.pick(2) == 0 { BinOp::UDiv } else { BinOp::URem };
                let v = self.f.binary(op, Type::I32, a, odd);
                self.ints.push(v);
            }
            5..=6 => {
                let ops = [BinOp::FAdd, BinOp::FSub, BinOp::FMul, BinOp::FDiv, BinOp::FMin, BinOp::FMax];
                let op = ops[self.pick(ops.len())];
                let (a, b) = (self.float(), self.float());
                let v = if self.pick(4) == 0 {
                    let c = self.float();
                    self.f.fma(f32t, a, b, c)
                } else {
                    self.f.binary(op, f32t, a, b)
                };
                self.floats.push(v);
            }
            7 => {
                let ops = [UnOp::FNeg, UnOp::FAbs, UnOp::Floor, UnOp::Sqrt];
                let op = ops[self.pick(ops.len())];
                let a = self.float();
                let v = self.f.unary(op, f32t, a);
                self.floats.push(v);
            }
            8 => {
                let ops = [UnOp::Not, UnOp::Popcount, UnOp::Clz, UnOp::Ctz];
                let op = ops[self.pick(ops.len())];
                let a = self.int();
                let v = self.f.unary(op, Type::I32, a);
                self.ints.push(v);
            }
            9 => {
                // Conversions between the pools, some through i64.
                match self.pick(4) {
                    0 => {
                        let a = self.int();
                        let v = self.f.cast(CastOp::SiToFp, Type::I32, a, f32t);
                        self.floats.push(v);
                    }
                    1 => {
                        let a = self.float();
                        let v = self.f.cast(CastOp::FpToSi, f32t, a, Type::I32);
                        self.ints.push(v);
                    }
                    2 => {
                        let (a, b) = (self.int(), self.int());
                        let wide_a = self.f.cast(CastOp::SExt, Type::I32, a, Type::I64);
                        let wide_b = self.f.cast(CastOp::ZExt, Type::I32, b, Type::I64);
                        let product = self.f.binary(BinOp::Mul, Type::I64, wide_a, wide_b);
                        let high = self.f.binary(BinOp::LShr, Type::I64, product, self.f.int(Type::I64, 29));
                        let v = self.f.cast(CastOp::Trunc, Type::I64, high, Type::I32);
                        self.ints.push(v);
                    }
                    _ => {
                        let a = self.float();
                        let v = self.f.cast(CastOp::Bitcast, f32t, a, Type::I32);
                        self.ints.push(v);
                    }
                }
            }
            10 => {
                let preds = IntPred::ALL;
                let pred = preds[self.pick(preds.len())];
                let (a, b, x, y) = (self.int(), self.int(), self.int(), self.int());
                let c = self.f.icmp(pred, Type::I32, a, b);
                let v = self.f.select(Type::I32, c, x, y);
                self.ints.push(v);
            }
            _ => {
                let preds = FloatPred::ALL;
                let pred = preds[self.pick(preds.len())];
                let (a, b, x, y) = (self.float(), self.float(), self.float(), self.float());
                let c = self.f.fcmp(pred, f32t.clone(), a, b);
                let v = self.f.select(f32t, c, x, y);
                self.floats.push(v);
            }
        }
    }

    /// Straight-line code, if/else diamonds and loops, nested up to depth 2.
    fn region(&mut self, budget: usize) {
        for _ in 0..budget {
            if self.exhausted() {
                return;
            }
            match self.pick(8) {
                0 if self.depth < 2 => self.if_else(),
                1 if self.depth < 2 => self.counted_loop(),
                _ => self.straight(),
            }
        }
    }

    fn if_else(&mut self) {
        let (a, b) = (self.int(), self.int());
        let pred = IntPred::ALL[self.pick(IntPred::ALL.len())];
        let cond = self.f.icmp(pred, Type::I32, a, b);
        let then_block = self.new_block("then");
        let else_block = self.new_block("else");
        let join = self.new_block("join");
        let join_int = self.f.block_param(join, &format!("merged_i{}", self.blocks), Type::I32);
        let join_float = self.f.block_param(join, &format!("merged_f{}", self.blocks), Type::F32);
        self.f.brif(cond, then_block, vec![], else_block, vec![]);
        let (int_mark, float_mark) = (self.ints.len(), self.floats.len());
        self.depth += 1;
        for side in [then_block, else_block] {
            self.f.switch_to(side);
            let budget = 1 + self.pick(4);
            self.region(budget);
            let (vi, vf) = (self.int(), self.float());
            self.f.br(join, vec![vi.into(), vf.into()]);
            // Values of one side are not visible on the other or after the join.
            self.ints.truncate(int_mark);
            self.floats.truncate(float_mark);
        }
        self.depth -= 1;
        self.f.switch_to(join);
        self.ints.push(join_int);
        self.floats.push(join_float);
    }

    fn counted_loop(&mut self) {
        // Trip count: a constant 0..=3, or (value & 7) which diverges across lanes.
        let trip: Operand = if self.pick(2) == 0 {
            let count = self.pick(4) as i64;
            self.f.int(Type::I32, count)
        } else {
            let v = self.int();
            self.f.binary(BinOp::And, Type::I32, v, self.f.int(Type::I32, 7)).into()
        };
        let header = self.new_block("loop");
        let body = self.new_block("body");
        let exit = self.new_block("exit");
        let counter = self.f.block_param(header, &format!("j{}", self.blocks), Type::I32);
        let acc_int = self.f.block_param(header, &format!("acc_i{}", self.blocks), Type::I32);
        let acc_float = self.f.block_param(header, &format!("acc_f{}", self.blocks), Type::F32);
        let exit_int = self.f.block_param(exit, &format!("out_i{}", self.blocks), Type::I32);
        let exit_float = self.f.block_param(exit, &format!("out_f{}", self.blocks), Type::F32);
        let (init_i, init_f) = (self.int(), self.float());
        self.f.br(header, vec![self.f.int(Type::I32, 0), init_i.into(), init_f.into()]);
        self.f.switch_to(header);
        let done = self.f.icmp(IntPred::Uge, Type::I32, counter, trip);
        self.f.brif(done, exit, vec![acc_int.into(), acc_float.into()], body, vec![]);
        self.f.switch_to(body);
        let (int_mark, float_mark) = (self.ints.len(), self.floats.len());
        self.ints.extend([counter, acc_int]);
        self.floats.push(acc_float);
        self.depth += 1;
        let budget = 1 + self.pick(4);
        self.region(budget);
        self.depth -= 1;
        let (next_i, next_f) = (self.int(), self.float());
        let next_counter = self.f.binary(BinOp::Add, Type::I32, counter, self.f.int(Type::I32, 1));
        self.f.br(header, vec![next_counter.into(), next_i.into(), next_f.into()]);
        self.ints.truncate(int_mark);
        self.floats.truncate(float_mark);
        self.f.switch_to(exit);
        self.ints.push(exit_int);
        self.floats.push(exit_float);
    }
}

/// Builds the kernel `@random(%input: ptr<global>, %output: ptr<global>, %scale: f32)`.
pub fn build_kernel(choices: &[u32]) -> Module {
    let mut f = FunctionBuilder::kernel("random");
    let input = f.param("input", Type::Ptr(AddrSpace::Global));
    let output = f.param("output", Type::Ptr(AddrSpace::Global));
    let scale = f.param("scale", Type::F32);
    let entry = f.create_block("entry");
    f.switch_to(entry);
    let lid = f.builtin(Builtin::WorkitemId, 0);
    let gid = f.builtin(Builtin::WorkgroupId, 0);
    let size = f.builtin(Builtin::WorkgroupSize, 0);
    let base = f.binary(BinOp::Mul, Type::I32, gid, size);
    let i = f.binary(BinOp::Add, Type::I32, base, lid);
    let in_offset = f.binary(BinOp::Mul, Type::I32, i, f.int(Type::I32, 4));
    let src = f.ptradd(input, in_offset);
    let x = f.load(Type::I32, src);
    let xf = f.cast(CastOp::SiToFp, Type::I32, x, Type::F32);
    let mut g = Gen { choices, next: 0, f, ints: vec![lid, i, x], floats: vec![scale, xf], blocks: 0, depth: 0 };
    let budget = 4 + g.pick(24);
    g.region(budget);
    let out_index = g.f.binary(BinOp::Mul, Type::I32, i, g.f.int(Type::I32, (OUTPUTS_PER_ITEM * 4) as i64));
    let out_base = g.f.ptradd(output, out_index);
    for k in 0..OUTPUTS_PER_ITEM {
        let value = if k % 2 == 0 {
            g.int()
        } else {
            let v = g.float();
            g.f.cast(CastOp::Bitcast, Type::F32, v, Type::I32)
        };
        let slot = g.f.ptradd(out_base, g.f.int(Type::I64, i64::from(k * 4)));
        g.f.store(Type::I32, value, slot);
    }
    g.f.ret(None);
    Module::new(vec![g.f.finish().expect("generator terminates every block")])
}
