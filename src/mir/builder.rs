//! Building MIR in code, for programs that embed amdgpu-cg (no text involved).
//!
//! ```
//! use amdgpu_cg::mir::{builder::FunctionBuilder, Builtin, IntPred, Module};
//! use amdgpu_cg::abi::{AddrSpace, Type};
//!
//! let mut f = FunctionBuilder::kernel("fill");
//! let out = f.param("out", Type::Ptr(AddrSpace::Global));
//! let entry = f.create_block("entry");
//! f.switch_to(entry);
//! let tid = f.builtin(Builtin::WorkitemId, 0);
//! let offset = f.binary(amdgpu_cg::mir::BinOp::Mul, Type::I32, tid, f.int(Type::I32, 4));
//! let addr = f.ptradd(out, offset);
//! f.store(Type::I32, tid, addr);
//! f.ret(None);
//! let module = Module::new(vec![f.finish().unwrap()]);
//! amdgpu_cg::mir::verify::verify(&module).unwrap();
//! ```

use hashbrown::HashSet;

use super::diag::Diagnostic;
use super::ir::*;
use crate::abi::Type;

/// Builds one function. Values get automatic names (`t0`, `t1`, …) unless named
/// with [`FunctionBuilder::set_name`].
pub struct FunctionBuilder {
    func: Function,
    current: Option<BlockId>,
    terminated: Vec<bool>,
    names: HashSet<String>,
    next_auto_name: usize,
}

impl FunctionBuilder {
    /// Starts a kernel.
    pub fn kernel(name: &str) -> FunctionBuilder {
        FunctionBuilder::new(name, FuncKind::Kernel, None)
    }

    /// Starts a device function returning `ret` (None: returns nothing).
    pub fn device(name: &str, ret: Option<Type>) -> FunctionBuilder {
        FunctionBuilder::new(name, FuncKind::Device, ret)
    }

    fn new(name: &str, kind: FuncKind, ret: Option<Type>) -> FunctionBuilder {
        FunctionBuilder {
            func: Function { name: name.to_string(), kind, conv: CallConv::AmdgpuCg, inline: InlineHint::Auto, attrs: KernelAttrs::default(), params: Vec::new(), ret, blocks: Vec::new(), values: Vec::new(), span: Span::NONE },
            current: None,
            terminated: Vec::new(),
            names: HashSet::new(),
            next_auto_name: 0,
        }
    }

    fn new_value(&mut self, name: Option<&str>, ty: Type) -> Value {
        let name = match name {
            Some(n) if !self.names.contains(n) => n.to_string(),
            _ => loop {
                let candidate = format!("t{}", self.next_auto_name);
                self.next_auto_name += 1;
                if !self.names.contains(&candidate) {
                    break candidate;
                }
            },
        };
        self.names.insert(name.clone());
        self.func.values.push(ValueInfo { name, ty });
        Value(self.func.values.len() as u32 - 1)
    }

    /// Renames a value (ignored if the name is taken).
    pub fn set_name(&mut self, value: Value, name: &str) {
        if self.names.contains(name) {
            return;
        }
        let old = std::mem::replace(&mut self.func.values[value.0 as usize].name, name.to_string());
        self.names.remove(&old);
        self.names.insert(name.to_string());
    }

    /// Adds a function parameter.
    pub fn param(&mut self, name: &str, ty: Type) -> Value {
        let value = self.new_value(Some(name), ty);
        self.func.params.push(Param { value, inreg: false, info: ArgInfo::default() });
        value
    }

    /// Sets the source-level description of the last parameter added.
    pub fn set_param_info(&mut self, info: ArgInfo) {
        if let Some(p) = self.func.params.last_mut() {
            p.info = info;
        }
    }

    /// The calling convention of a device function (`callconv(llvm)`).
    pub fn calling_convention(&mut self, conv: CallConv) {
        self.func.conv = conv;
    }

    /// Whether the optimiser may inline this device function into its
    /// callers (`noinline`, `alwaysinline`; src/opt/inline.rs).
    pub fn inline_hint(&mut self, hint: InlineHint) {
        self.func.inline = hint;
    }

    /// Adds an `inreg` parameter (device functions; passed in SGPRs).
    pub fn param_inreg(&mut self, name: &str, ty: Type) -> Value {
        let value = self.new_value(Some(name), ty);
        self.func.params.push(Param { value, inreg: true, info: ArgInfo::default() });
        value
    }

    /// Creates a block (the first one created is the entry block).
    pub fn create_block(&mut self, name: &str) -> BlockId {
        self.func.blocks.push(Block {
            name: name.to_string(),
            params: Vec::new(),
            insts: Vec::new(),
            term: Terminator::Unreachable,
            term_span: Span::NONE,
            span: Span::NONE,
        });
        self.terminated.push(false);
        BlockId(self.func.blocks.len() as u32 - 1)
    }

    /// Adds a parameter to a block.
    pub fn block_param(&mut self, block: BlockId, name: &str, ty: Type) -> Value {
        let value = self.new_value(Some(name), ty);
        self.func.blocks[block.0 as usize].params.push(value);
        value
    }

    /// Makes `block` the one instructions are appended to.
    pub fn switch_to(&mut self, block: BlockId) {
        self.current = Some(block);
    }

    /// The type of a value built so far.
    pub fn value_type(&self, value: Value) -> &Type {
        self.func.value_type(value)
    }

    /// An integer constant operand.
    pub fn int(&self, ty: Type, value: i64) -> Operand {
        Operand::Const(Const::int(ty, value))
    }

    /// An f32 constant operand.
    pub fn f32(&self, value: f32) -> Operand {
        Operand::Const(Const::f32(value))
    }

    /// An f64 constant operand.
    pub fn f64(&self, value: f64) -> Operand {
        Operand::Const(Const::f64(value))
    }

    /// Appends an instruction with the given operation; returns its result, if any.
    /// `call_ret` is the callee's result type (only for calls).
    pub fn push(&mut self, op: Op, call_ret: Option<Type>) -> Option<Value> {
        let ty = match &op {
            Op::Call { .. } => call_ret,
            _ => result_type(&op, &self.func, None),
        };
        let result = ty.map(|ty| self.new_value(None, ty));
        let block = self.current.expect("FunctionBuilder: switch_to a block before adding instructions");
        self.func.blocks[block.0 as usize].insts.push(Inst { result, op, span: Span::NONE });
        result
    }

    fn push_value(&mut self, op: Op) -> Value {
        self.push(op, None).expect("operation produces a value")
    }

    pub fn binary(&mut self, op: BinOp, ty: Type, lhs: impl Into<Operand>, rhs: impl Into<Operand>) -> Value {
        self.push_value(Op::Binary { op, ty, lhs: lhs.into(), rhs: rhs.into() })
    }

    pub fn unary(&mut self, op: UnOp, ty: Type, arg: impl Into<Operand>) -> Value {
        self.push_value(Op::Unary { op, ty, arg: arg.into() })
    }

    pub fn fma(&mut self, ty: Type, a: impl Into<Operand>, b: impl Into<Operand>, c: impl Into<Operand>) -> Value {
        self.push_value(Op::Fma { ty, a: a.into(), b: b.into(), c: c.into() })
    }

    pub fn ternary(&mut self, op: TernOp, ty: Type, a: impl Into<Operand>, b: impl Into<Operand>, c: impl Into<Operand>) -> Value {
        self.push_value(Op::Ternary { op, ty, a: a.into(), b: b.into(), c: c.into() })
    }

    pub fn icmp(&mut self, pred: IntPred, ty: Type, lhs: impl Into<Operand>, rhs: impl Into<Operand>) -> Value {
        self.push_value(Op::Icmp { pred, ty, lhs: lhs.into(), rhs: rhs.into() })
    }

    pub fn fcmp(&mut self, pred: FloatPred, ty: Type, lhs: impl Into<Operand>, rhs: impl Into<Operand>) -> Value {
        self.push_value(Op::Fcmp { pred, ty, lhs: lhs.into(), rhs: rhs.into() })
    }

    pub fn select(&mut self, ty: Type, cond: impl Into<Operand>, a: impl Into<Operand>, b: impl Into<Operand>) -> Value {
        self.push_value(Op::Select { ty, cond: cond.into(), if_true: a.into(), if_false: b.into() })
    }

    pub fn cast(&mut self, op: CastOp, from: Type, arg: impl Into<Operand>, to: Type) -> Value {
        self.push_value(Op::Cast { op, from, arg: arg.into(), to })
    }

    /// Loads with the type's natural alignment.
    pub fn load(&mut self, ty: Type, ptr: Value) -> Value {
        let align = ty.align();
        self.push_value(Op::Load { ty, ptr: ptr.into(), align, volatile: false })
    }

    /// Stores with the type's natural alignment.
    pub fn store(&mut self, ty: Type, value: impl Into<Operand>, ptr: Value) {
        let align = ty.align();
        self.push(Op::Store { ty, value: value.into(), ptr: ptr.into(), align, volatile: false }, None);
    }

    /// Pointer plus a byte offset (an i32 or i64 value; constants must be i64).
    pub fn ptradd(&mut self, ptr: Value, offset: impl Into<Operand>) -> Value {
        self.push_value(Op::PtrAdd { ptr: ptr.into(), offset: offset.into() })
    }

    pub fn atomic(&mut self, op: AtomicOp, ty: Type, ptr: Value, value: impl Into<Operand>) -> Value {
        self.push_value(Op::AtomicRmw { op, ty, ptr: ptr.into(), value: value.into(), sync: Sync::default() })
    }

    pub fn cmpxchg(&mut self, ty: Type, ptr: Value, expected: impl Into<Operand>, new: impl Into<Operand>) -> Value {
        self.push_value(Op::CmpXchg { ty, ptr: ptr.into(), expected: expected.into(), new: new.into(), sync: Sync::default() })
    }

    pub fn stack_slot(&mut self, size: u32, align: u32) -> Value {
        self.push_value(Op::StackSlot { size, align })
    }

    pub fn lds_slot(&mut self, size: u32, align: u32) -> Value {
        self.push_value(Op::LdsSlot { size, align })
    }

    /// Calls a device function whose result type is `ret`.
    pub fn call(&mut self, callee: &str, args: Vec<Operand>, ret: Option<Type>) -> Option<Value> {
        self.push(Op::Call { callee: callee.to_string(), args }, ret)
    }

    pub fn builtin(&mut self, kind: Builtin, dim: u8) -> Value {
        self.push_value(Op::Builtin { kind, dim })
    }

    pub fn barrier(&mut self) {
        self.push(Op::Barrier, None);
    }

    pub fn extract(&mut self, agg: Value, index: u32) -> Value {
        self.push_value(Op::Extract { agg: agg.into(), index })
    }

    pub fn make(&mut self, ty: Type, elems: Vec<Operand>) -> Value {
        self.push_value(Op::Make { ty, elems })
    }

    fn terminate(&mut self, term: Terminator) {
        let block = self.current.expect("FunctionBuilder: switch_to a block before terminating it");
        self.func.blocks[block.0 as usize].term = term;
        self.terminated[block.0 as usize] = true;
    }

    pub fn br(&mut self, target: BlockId, args: Vec<Operand>) {
        self.terminate(Terminator::Br(BlockCall { block: target, args }));
    }

    pub fn brif(&mut self, cond: impl Into<Operand>, then_to: BlockId, then_args: Vec<Operand>, else_to: BlockId, else_args: Vec<Operand>) {
        self.terminate(Terminator::BrIf {
            cond: cond.into(),
            then_to: BlockCall { block: then_to, args: then_args },
            else_to: BlockCall { block: else_to, args: else_args },
        });
    }

    pub fn ret(&mut self, value: Option<Operand>) {
        self.terminate(Terminator::Ret(value));
    }

    pub fn unreachable(&mut self) {
        self.terminate(Terminator::Unreachable);
    }

    /// Finishes the function. Fails if it has no blocks or a block has no
    /// terminator; run the verifier on the module for everything else.
    pub fn finish(self) -> Result<Function, Diagnostic> {
        if self.func.blocks.is_empty() {
            return Err(Diagnostic::new(format!("function '@{}' has no blocks", self.func.name), Span::NONE));
        }
        if let Some(i) = self.terminated.iter().position(|t| !t) {
            return Err(Diagnostic::new(
                format!("block '{}' of '@{}' has no terminator", self.func.blocks[i].name, self.func.name),
                Span::NONE,
            ));
        }
        Ok(self.func)
    }
}
