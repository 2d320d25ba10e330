//! The MIR verifier: everything later stages may assume about a module.
//!
//! Checks, per function: parameter and result types for its kind; every
//! instruction's operand and result types; address-space rules for memory
//! operations; call signatures; block arguments against block parameters; that
//! every block ends in a terminator that matches the function's result; and SSA
//! dominance (every use is dominated by its definition). All errors are collected;
//! each carries the source span of the instruction (or, for builder-made code, a
//! textual location).

use hashbrown::HashMap;

use super::cfg::Cfg;
use super::diag::Diagnostic;
use super::ir::*;
use crate::abi::{AddrSpace, Type};

/// Checks a module; returns every problem found, in source order per function.
pub fn verify(module: &Module) -> Result<(), Vec<Diagnostic>> {
    verify_in_parallel(module, 1)
}

/// [`verify`] with the functions checked on up to `jobs` threads; the
/// problems come back in the same order.
pub fn verify_in_parallel(module: &Module, jobs: usize) -> Result<(), Vec<Diagnostic>> {
    let mut seen = HashMap::new();
    let duplicate: Vec<bool> = module.functions.iter().map(|func| seen.insert(func.name.as_str(), func.span).is_some()).collect();
    let by_name = module.functions_by_name();
    let per_function = crate::parallel::map_in_order(module.functions.len(), jobs, |i| {
        let func = &module.functions[i];
        let mut checker = Checker { module, functions: Some(&by_name), func, errors: Vec::new() };
        if duplicate[i] {
            checker.errors.push(Diagnostic::new(format!("function '@{}' is defined more than once", func.name), func.span));
        }
        checker.function();
        checker.errors
    });
    let mut errors: Vec<Diagnostic> = per_function.into_iter().flatten().collect();
    // Data and functions share the code object's symbol names.
    let mut data_names = HashMap::new();
    for d in &module.data {
        if data_names.insert(d.name.as_str(), ()).is_some() {
            errors.push(Diagnostic::new(format!("data '@{}' is defined more than once", d.name), Span::NONE));
        }
        if let Some(f) = module.function(&d.name) {
            errors.push(Diagnostic::new(format!("'@{}' names both data and a function", d.name), f.span));
        }
        if d.align == 0 || !d.align.is_power_of_two() || d.align > 4096 {
            errors.push(Diagnostic::new(format!("data '@{}': alignment {} is not a power of two between 1 and 4096", d.name, d.align), Span::NONE));
        }
        let mut previous_end = 0u64;
        for a in &d.addrs {
            let (start, end) = (u64::from(a.offset), u64::from(a.offset) + 8);
            let problem = if end > d.bytes.len() as u64 {
                Some(format!("its address at byte {start} does not fit in its {} bytes", d.bytes.len()))
            } else if start < previous_end {
                Some(format!("its address at byte {start} overlaps the one before it (addresses are listed in offset order)"))
            } else if d.bytes[start as usize..end as usize].iter().any(|&b| b != 0) {
                Some(format!("the 8 bytes at offset {start} hold an address, but its bytes there are not zero"))
            } else {
                match module.data(&a.target) {
                    None => Some(format!("it holds the address of '@{}', which is not the module's data", a.target)),
                    Some(t) if a.addend > t.bytes.len() as u64 => Some(format!("'@{} + {}' is beyond the end of '@{}' ({} bytes)", a.target, a.addend, a.target, t.bytes.len())),
                    Some(_) => None,
                }
            };
            if let Some(problem) = problem {
                errors.push(Diagnostic::new(format!("data '@{}': {problem}", d.name), Span::NONE));
            }
            previous_end = end;
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Checks one function; its calls are checked against the functions of
/// `module` (the function itself need not be in it: an optimiser checks its
/// working copy against the module it came from).
pub fn verify_function(module: &Module, func: &Function) -> Result<(), Vec<Diagnostic>> {
    let mut checker = Checker { module, functions: None, func, errors: Vec::new() };
    checker.function();
    if checker.errors.is_empty() {
        Ok(())
    } else {
        Err(checker.errors)
    }
}

struct Checker<'a> {
    module: &'a Module,
    /// The module's functions by name, where the caller built the index.
    functions: Option<&'a HashMap<&'a str, &'a Function>>,
    func: &'a Function,
    errors: Vec<Diagnostic>,
}

/// Where an error is, for code without spans.
enum At {
    Function,
    Inst(usize, usize),
    Term(usize),
}

impl<'a> Checker<'a> {
    /// The first function of the module named `name`.
    fn callee(&self, name: &str) -> Option<&'a Function> {
        match self.functions {
            Some(index) => index.get(name).copied(),
            None => self.module.function(name),
        }
    }

    fn error(&mut self, at: At, message: impl Into<String>) {
        let func = self.func;
        let (span, context) = match at {
            At::Function => (func.span, format!("in @{}", func.name)),
            At::Inst(b, i) => {
                let block = &func.blocks[b];
                (block.insts[i].span, format!("in @{}, block '{}', instruction {}", func.name, block.name, i + 1))
            }
            At::Term(b) => {
                let block = &func.blocks[b];
                (block.term_span, format!("in @{}, block '{}', terminator", func.name, block.name))
            }
        };
        let mut diagnostic = Diagnostic::new(message, span);
        diagnostic.context = Some(context);
        self.errors.push(diagnostic);
    }

    fn ty<'o>(&'o self, operand: &'o Operand) -> &'o Type {
        self.func.operand_type(operand)
    }

    fn function(&mut self) {
        let func = self.func;
        if func.blocks.is_empty() {
            self.error(At::Function, "a function needs at least one block");
            return;
        }
        match func.kind {
            FuncKind::Kernel => {
                if func.ret.is_some() {
                    self.error(At::Function, "kernels cannot return a value");
                }
                for param in &func.params {
                    let ty = func.value_type(param.value).clone();
                    let name = func.value_name(param.value).to_string();
                    if param.inreg {
                        self.error(At::Function, format!("kernel parameter '%{name}' cannot be 'inreg' (kernel arguments are in the kernarg segment)"));
                    }
                    if let Some(why) = kernel_arg_problem(&ty) {
                        self.error(At::Function, format!("kernel parameter '%{name}' has type {ty}: {why}"));
                    }
                    if ty == Type::Ptr(AddrSpace::Local) && func.blocks.iter().flat_map(|b| &b.insts).any(|i| matches!(i.op, Op::DynamicLds)) {
                        self.error(At::Function, format!("kernel parameter '%{name}' is a local pointer and the kernel uses 'dynamic_lds': the launch's LDS goes to one or the other"));
                    }
                }
            }
            FuncKind::Device => {
                for param in &func.params {
                    if !param.info.is_empty() {
                        let name = func.value_name(param.value);
                        self.error(At::Function, format!("parameter '%{name}' has a kernel argument description (const, restrict, volatile, readonly, writeonly, a type name), which only kernel parameters have"));
                    }
                    let ty = func.value_type(param.value);
                    if ty.has_bool_vector() {
                        self.error(At::Function, format!("parameter '%{}' has type {ty}: vectors of i1 cannot be passed to functions", func.value_name(param.value)));
                    }
                }
                if func.ret.as_ref().is_some_and(Type::has_bool_vector) {
                    self.error(At::Function, "vectors of i1 cannot be returned from functions");
                }
            }
        }
        if !func.blocks[0].params.is_empty() {
            self.error(At::Function, format!("the entry block '{}' cannot have parameters", func.blocks[0].name));
        }
        for b in 0..func.blocks.len() {
            for i in 0..func.blocks[b].insts.len() {
                self.instruction(b, i);
            }
            self.terminator(b);
        }
        self.dominance();
    }

    /// `what` is formatted only for the error (checks run per operand).
    fn expect_type(&mut self, at: At, what: impl std::fmt::Display, operand: &Operand, expected: &Type) -> bool {
        if self.ty(operand) != expected {
            let found = self.ty(operand).clone();
            self.error(at, format!("{what} has type {found}, expected {expected}"));
            return false;
        }
        true
    }

    fn instruction(&mut self, b: usize, i: usize) {
        let func = self.func;
        let inst = &func.blocks[b].insts[i];
        let at = || At::Inst(b, i);
        match &inst.op {
            Op::Const(c) => {
                if !c.ty.is_scalar() {
                    self.error(at(), format!("constants must have a scalar type, not {}", c.ty));
                }
            }
            Op::Binary { op, ty, lhs, rhs } => {
                let element = ty.element();
                let ok = if op.is_float() {
                    element.is_float()
                } else {
                    element.is_int() && (*element != Type::I1 || op.allows_i1())
                };
                if !ok || matches!(ty, Type::Struct(_)) {
                    let kind = if op.is_float() { "floating-point" } else if element == &Type::I1 { "integer (other than i1)" } else { "integer" };
                    self.error(at(), format!("'{}' needs {kind} operands, not {ty}", op.mnemonic()));
                } else if matches!(op, BinOp::Mul24S | BinOp::Mul24U) && *element != Type::I32 {
                    self.error(at(), format!("'{}' works on i32, not {ty}", op.mnemonic()));
                } else {
                    let m = op.mnemonic();
                    self.expect_type(at(), format_args!("the first operand of '{m}'"), lhs, ty);
                    self.expect_type(at(), format_args!("the second operand of '{m}'"), rhs, &op.rhs_type(ty));
                }
            }
            Op::Unary { op, ty, arg } => {
                let element = ty.element();
                let ok = if op.is_float() { element.is_float() } else { element.is_int() && (*element != Type::I1 || *op == UnOp::Not) };
                if op.is_transcendental() && *element == Type::F64 && !op.allows_f64() {
                    self.error(at(), format!("'{}' is defined on f16 and f32 (f64 has only rcp and rsqrt)", op.mnemonic()));
                } else if *op == UnOp::Bswap && matches!(element, Type::I1 | Type::I8) {
                    self.error(at(), format!("'bswap' needs i16, i32 or i64 (two or more bytes), not {ty}"));
                } else if !ok || matches!(ty, Type::Struct(_)) {
                    self.error(at(), format!("'{}' is not defined on {ty}", op.mnemonic()));
                } else {
                    self.expect_type(at(), format_args!("the operand of '{}'", op.mnemonic()), arg, ty);
                }
            }
            Op::Fma { ty, a, b: b_op, c } => {
                if !ty.element().is_float() || matches!(ty, Type::Struct(_)) {
                    self.error(at(), format!("'fma' needs floating-point operands, not {ty}"));
                } else {
                    for (n, operand) in [a, b_op, c].into_iter().enumerate() {
                        self.expect_type(at(), format_args!("operand {} of 'fma'", n + 1), operand, ty);
                    }
                }
            }
            Op::Ternary { op, ty, a, b: b_op, c } => {
                let element = ty.element();
                let m = op.mnemonic();
                let mad = matches!(op, TernOp::Mad24S | TernOp::Mad24U);
                if matches!(ty, Type::Struct(_)) || !element.is_int() || *element == Type::I1 || (mad && *element != Type::I32) {
                    let want = if mad { "i32 or an i32 vector" } else { "an integer or integer vector (not i1)" };
                    self.error(at(), format!("'{m}' needs {want}, not {ty}"));
                } else {
                    for (n, operand) in [a, b_op, c].into_iter().enumerate() {
                        self.expect_type(at(), format_args!("operand {} of '{m}'", n + 1), operand, ty);
                    }
                }
            }
            Op::Icmp { ty, lhs, rhs, .. } => {
                if !(ty.element().is_int() || matches!(ty, Type::Ptr(_))) {
                    self.error(at(), format!("'icmp' compares integers, integer vectors or pointers, not {ty}"));
                } else {
                    self.expect_type(at(), "the first operand of 'icmp'", lhs, ty);
                    self.expect_type(at(), "the second operand of 'icmp'", rhs, ty);
                }
            }
            Op::Fcmp { ty, lhs, rhs, .. } => {
                if !ty.element().is_float() {
                    self.error(at(), format!("'fcmp' compares floating-point scalars or vectors, not {ty}"));
                } else {
                    self.expect_type(at(), "the first operand of 'fcmp'", lhs, ty);
                    self.expect_type(at(), "the second operand of 'fcmp'", rhs, ty);
                }
            }
            Op::Select { ty, cond, if_true, if_false } => {
                if matches!(ty, Type::Struct(_)) {
                    self.error(at(), "'select' cannot choose between structs");
                }
                // A vector may also be chosen element by element (a vector compare's result).
                let lanewise = Type::Vector(Box::new(Type::I1), ty.lanes() as u8);
                if !(matches!(ty, Type::Vector(..)) && self.ty(cond) == &lanewise) {
                    self.expect_type(at(), "the condition of 'select'", cond, &Type::I1);
                }
                self.expect_type(at(), "the second operand of 'select'", if_true, ty);
                self.expect_type(at(), "the third operand of 'select'", if_false, ty);
            }
            Op::Cast { op, from, arg, to } => {
                if self.expect_type(at(), format_args!("the operand of '{}'", op.mnemonic()), arg, from) {
                    if let Some(why) = cast_problem(*op, from, to) {
                        self.error(at(), format!("cannot {} {from} to {to}: {why}", op.mnemonic()));
                    }
                }
            }
            Op::Load { ty, ptr, align, .. } => {
                if let Some(why) = memory_type_problem(ty) {
                    self.error(at(), format!("cannot load {ty}: {why}"));
                }
                if let Some(space) = self.pointer(at(), "the address of 'load'", ptr) {
                    let _ = space;
                }
                if !align.is_power_of_two() {
                    self.error(at(), format!("alignment {align} is not a power of two"));
                }
            }
            Op::Store { ty, value, ptr, align, .. } => {
                if let Some(why) = memory_type_problem(ty) {
                    self.error(at(), format!("cannot store {ty}: {why}"));
                }
                self.expect_type(at(), "the stored value", value, ty);
                if let Some(space) = self.pointer(at(), "the address of 'store'", ptr) {
                    if space == AddrSpace::Constant {
                        self.error(at(), "cannot store through a pointer to constant memory (module data is read-only unless its `data` line says `writable`)");
                    }
                }
                if !align.is_power_of_two() {
                    self.error(at(), format!("alignment {align} is not a power of two"));
                }
            }
            Op::PtrAdd { ptr, offset } => {
                self.pointer(at(), "the first operand of 'ptradd'", ptr);
                let offset_ty = self.ty(offset).clone();
                if offset_ty != Type::I32 && offset_ty != Type::I64 {
                    self.error(at(), format!("the offset of 'ptradd' has type {offset_ty}, expected i32 or i64"));
                }
            }
            Op::AtomicRmw { op, ty, ptr, value, .. } => {
                if op.is_float() && *ty != Type::F32 && *ty != Type::F64 {
                    self.error(at(), format!("atomic '{}' works on f32 and f64, not {ty}", op.mnemonic()));
                } else if !op.is_float() && *ty != Type::I32 && *ty != Type::I64 {
                    self.error(at(), format!("atomic '{}' works on i32 and i64, not {ty}", op.mnemonic()));
                }
                self.atomic_pointer(at(), ptr);
                self.expect_type(at(), "the atomic operand", value, ty);
            }
            Op::CmpXchg { ty, ptr, expected, new, .. } => {
                if *ty != Type::I32 && *ty != Type::I64 {
                    self.error(at(), format!("'cmpxchg' works on i32 and i64, not {ty}"));
                }
                self.atomic_pointer(at(), ptr);
                self.expect_type(at(), "the expected value of 'cmpxchg'", expected, ty);
                self.expect_type(at(), "the new value of 'cmpxchg'", new, ty);
            }
            Op::StackSlot { size, align } | Op::LdsSlot { size, align } => {
                let name = if matches!(inst.op, Op::StackSlot { .. }) { "stack_slot" } else { "lds_slot" };
                if b != 0 {
                    self.error(at(), format!("'{name}' must be in the entry block (slots are allocated once per invocation)"));
                }
                if *size == 0 {
                    self.error(at(), format!("'{name}' needs a size of at least one byte"));
                }
                if !align.is_power_of_two() {
                    self.error(at(), format!("alignment {align} is not a power of two"));
                }
                if name == "lds_slot" && func.kind != FuncKind::Kernel {
                    self.error(at(), "'lds_slot' is only allowed in kernels (LDS is allocated per work-group)");
                }
            }
            Op::Call { callee, args } => self.call(b, i, callee, args, inst.result),
            Op::Builtin { kind, dim } => {
                if *dim > 2 || (kind.dimensionless() && *dim != 0) {
                    self.error(at(), "dimension must be x, y or z");
                }
            }
            Op::Barrier => {}
            Op::Fence { .. } => {}
            Op::Wave { op, ty, args } => {
                let m = op.mnemonic();
                match op {
                    WaveOp::LaneId | WaveOp::WaveSize => {}
                    WaveOp::Ballot => {
                        self.expect_type(at(), "the condition of 'ballot'", &args[0], &Type::I1);
                    }
                    WaveOp::Reduce(b) | WaveOp::InclusiveScan(b) | WaveOp::ExclusiveScan(b) => {
                        let want = if b.is_float() { [Type::F32, Type::F64] } else { [Type::I32, Type::I64] };
                        if !want.contains(ty) {
                            self.error(at(), format!("'{m} {}' works on {} and {}, not {ty}", b.mnemonic(), want[0], want[1]));
                        }
                        self.expect_type(at(), format_args!("the value of '{m}'"), &args[0], ty);
                    }
                    _ => {
                        if !(ty.is_int() || ty.is_float()) || *ty == Type::I1 {
                            self.error(at(), format!("'{m}' works on integer and float scalars (not i1), not {ty}"));
                        }
                        self.expect_type(at(), format_args!("the value of '{m}'"), &args[0], ty);
                        if let Some(lane) = args.get(1) {
                            self.expect_type(at(), format_args!("the lane of '{m}'"), lane, &Type::I32);
                        }
                    }
                }
            }
            Op::DataAddr { name, space } => match self.module.data(name) {
                None => self.error(at(), format!("'data_addr' of '@{name}', which is not the module's data")),
                Some(d) if d.space() != *space => {
                    self.error(at(), format!("'data_addr' of '@{name}' is a ptr<{}>, but the data's address is a ptr<{}>", space.keyword(), d.space().keyword()))
                }
                Some(_) => {}
            },
            Op::DynamicLds => {
                if func.kind != FuncKind::Kernel {
                    self.error(at(), "'dynamic_lds' is only allowed in kernels (LDS is allocated per work-group)");
                }
            }
            Op::Extract { agg, index } => match self.ty(agg).clone() {
                Type::Vector(_, n) if *index < u32::from(n) => {}
                Type::Struct(fields) if (*index as usize) < fields.len() => {}
                Type::Vector(..) | Type::Struct(..) => self.error(at(), format!("index {index} is out of range for {}", self.ty(agg))),
                other => self.error(at(), format!("'extract' needs a vector or struct, not {other}")),
            },
            Op::Insert { agg, value, index } => {
                let agg_ty = self.ty(agg).clone();
                let field = match &agg_ty {
                    Type::Vector(elem, n) if *index < u32::from(*n) => Some((**elem).clone()),
                    Type::Struct(fields) => fields.get(*index as usize).cloned(),
                    _ => None,
                };
                match field {
                    Some(field) => {
                        self.expect_type(at(), "the inserted value", value, &field);
                    }
                    None if matches!(agg_ty, Type::Vector(..) | Type::Struct(..)) => {
                        self.error(at(), format!("index {index} is out of range for {agg_ty}"))
                    }
                    None => self.error(at(), format!("'insert' needs a vector or struct, not {agg_ty}")),
                }
            }
            Op::Make { ty, elems } => {
                let fields: Vec<Type> = match ty {
                    Type::Vector(elem, n) => vec![(**elem).clone(); usize::from(*n)],
                    Type::Struct(fields) => fields.clone(),
                    other => {
                        self.error(at(), format!("'make' builds vectors and structs, not {other}"));
                        Vec::new()
                    }
                };
                if !fields.is_empty() && fields.len() != elems.len() {
                    self.error(at(), format!("'make {ty}' needs {} elements, found {}", fields.len(), elems.len()));
                } else {
                    for (n, (elem, field)) in elems.iter().zip(&fields).enumerate() {
                        self.expect_type(at(), format_args!("element {n} of 'make'"), elem, field);
                    }
                }
            }
        }
        // The result's recorded type must be what the operation produces (values
        // made by the builder or the parser are typed from the same function).
        let produced = match &inst.op {
            Op::Call { callee, .. } => self.callee(callee).and_then(|f| f.ret.clone()),
            op => result_type(op, func, Some(self.module)),
        };
        if let (Some(result), Some(ty)) = (inst.result, produced) {
            if *func.value_type(result) != ty {
                self.error(at(), format!("result '%{}' is recorded as {} but the instruction produces {ty}", func.value_name(result), func.value_type(result)));
            }
        }
    }

    fn pointer(&mut self, at: At, what: &str, operand: &Operand) -> Option<AddrSpace> {
        match self.ty(operand).clone() {
            Type::Ptr(space) => Some(space),
            other => {
                self.error(at, format!("{what} must be a pointer, found {other}"));
                None
            }
        }
    }

    fn atomic_pointer(&mut self, at: At, ptr: &Operand) {
        match self.ty(ptr).clone() {
            Type::Ptr(AddrSpace::Global | AddrSpace::Local | AddrSpace::Flat) => {}
            Type::Ptr(space) => self.error(at, format!("atomics work on global, local and flat pointers, not {}", space.keyword())),
            other => self.error(at, format!("the address of an atomic must be a pointer, found {other}")),
        }
    }

    fn call(&mut self, b: usize, i: usize, callee: &str, args: &[Operand], result: Option<Value>) {
        let at = || At::Inst(b, i);
        let Some(target) = self.callee(callee) else {
            self.error(at(), format!("call to undefined function '@{callee}'"));
            return;
        };
        if target.kind == FuncKind::Kernel {
            self.error(at(), format!("'@{callee}' is a kernel and cannot be called"));
            return;
        }
        if target.params.len() != args.len() {
            self.error(at(), format!("'@{callee}' takes {} arguments, but {} are passed", target.params.len(), args.len()));
            return;
        }
        for (n, (param, arg)) in target.params.iter().zip(args).enumerate() {
            let expected = target.value_type(param.value).clone();
            self.expect_type(at(), format_args!("argument {} of the call to '@{callee}'", n + 1), arg, &expected);
        }
        match (&target.ret, result) {
            (None, Some(_)) => self.error(at(), format!("'@{callee}' returns nothing, so the call has no result")),
            (Some(ty), None) => {
                let ty = ty.clone();
                self.error(at(), format!("the result of '@{callee}' ({ty}) must be named, as in '%r = call ...'"))
            }
            _ => {}
        }
    }

    fn block_call(&mut self, b: usize, call: &BlockCall) {
        let func = self.func;
        let Some(target) = func.blocks.get(call.block.0 as usize) else {
            self.error(At::Term(b), "branch to a block that does not exist");
            return;
        };
        if call.block.0 == 0 {
            self.error(At::Term(b), format!("the entry block '{}' cannot be a branch target", target.name));
        }
        if target.params.len() != call.args.len() {
            self.error(
                At::Term(b),
                format!("block '{}' takes {} arguments, but {} are passed", target.name, target.params.len(), call.args.len()),
            );
            return;
        }
        for (n, (param, arg)) in target.params.iter().zip(&call.args).enumerate() {
            let expected = func.value_type(*param).clone();
            self.expect_type(At::Term(b), format_args!("argument {} to block '{}'", n + 1, target.name), arg, &expected);
        }
    }

    fn terminator(&mut self, b: usize) {
        let func = self.func;
        match &func.blocks[b].term {
            Terminator::Br(call) => self.block_call(b, call),
            Terminator::BrIf { cond, then_to, else_to } => {
                self.expect_type(At::Term(b), "the condition of 'brif'", cond, &Type::I1);
                self.block_call(b, then_to);
                self.block_call(b, else_to);
            }
            Terminator::Ret(value) => match (&func.ret, value) {
                (None, Some(_)) if func.kind == FuncKind::Kernel => self.error(At::Term(b), "kernels return nothing: use 'ret'"),
                (None, Some(_)) => self.error(At::Term(b), format!("'@{}' returns nothing, but 'ret' has a value", func.name)),
                (Some(ty), None) => {
                    let ty = ty.clone();
                    self.error(At::Term(b), format!("'@{}' must return a value of type {ty}", func.name))
                }
                (Some(ty), Some(v)) => {
                    let ty = ty.clone();
                    self.expect_type(At::Term(b), "the returned value", v, &ty);
                }
                (None, None) => {}
            },
            Terminator::Unreachable => {}
        }
    }

    /// SSA: every use must be dominated by its definition. Dominators are computed
    /// with the iterative algorithm of Cooper, Harvey and Kennedy over the reachable
    /// blocks; in unreachable blocks only the order within the block is checked.
    fn dominance(&mut self) {
        let func = self.func;
        let n = func.blocks.len();
        // Where each value is defined: (block, position); position 0 = parameters.
        let mut def_at: Vec<Option<(usize, usize)>> = vec![None; func.values.len()];
        for p in &func.params {
            def_at[p.value.0 as usize] = Some((0, 0));
        }
        for (b, block) in func.blocks.iter().enumerate() {
            for p in &block.params {
                def_at[p.0 as usize] = Some((b, 0));
            }
            for (i, inst) in block.insts.iter().enumerate() {
                if let Some(r) = inst.result {
                    def_at[r.0 as usize] = Some((b, i + 1));
                }
            }
        }
        let idom = Cfg::new(func).dominators();
        let dominates = |a: usize, b: usize| Cfg::dominates(&idom, a, b);
        for b in 0..n {
            let reachable = idom[b].is_some();
            let block = &func.blocks[b];
            let mut uses: Vec<(usize, crate::mir::ir::Operands<&Operand>, At)> =
                block.insts.iter().enumerate().map(|(i, inst)| (i + 1, op_operands(&inst.op), At::Inst(b, i))).collect();
            uses.push((block.insts.len() + 1, terminator_operands(&block.term).into_iter().collect(), At::Term(b)));
            for (pos, operands, at) in uses {
                for operand in operands {
                    let Operand::Value(v) = operand else { continue };
                    let name = func.value_name(*v).to_string();
                    let ok = match def_at.get(v.0 as usize).copied().flatten() {
                        None => false,
                        Some((db, dpos)) if db == b => dpos < pos,
                        Some((db, _)) => !reachable || dominates(db, b),
                    };
                    if !ok {
                        let at = match at {
                            At::Inst(b, i) => At::Inst(b, i),
                            At::Term(b) => At::Term(b),
                            At::Function => At::Function,
                        };
                        self.error(at, format!("'%{name}' is used here but its definition does not dominate this use"));
                    }
                }
            }
        }
    }
}

/// Why a type cannot be loaded or stored (None if it can).
fn memory_type_problem(ty: &Type) -> Option<&'static str> {
    match ty {
        Type::I1 => Some("i1 has no memory representation; extend it to i8 first"),
        Type::Vector(elem, _) if **elem == Type::I1 => Some("vectors of i1 have no memory representation; extend them to i8 first"),
        Type::Struct(_) => Some("structs are not loaded or stored whole; access their fields"),
        _ => None,
    }
}

/// Why a type cannot be a kernel argument (None if it can).
fn kernel_arg_problem(ty: &Type) -> Option<&'static str> {
    match ty {
        Type::I1 => Some("i1 has no memory representation; use i8 or i32"),
        Type::Ptr(AddrSpace::Private) => Some("kernels receive pointers to global, constant, local or flat memory only"),
        Type::Struct(fields) => fields.iter().find_map(kernel_arg_problem).or_else(|| fields.iter().any(|f| matches!(f, Type::Ptr(AddrSpace::Local))).then_some("a local pointer must be an argument of its own (the launch gives its LDS)")),
        Type::Vector(elem, _) => kernel_arg_problem(elem),
        _ => None,
    }
}

/// Why a conversion is invalid (None if it is valid).
fn cast_problem(op: CastOp, from: &Type, to: &Type) -> Option<String> {
    // Casts other than bitcast work element by element on vectors of one length.
    if op != CastOp::Bitcast {
        match (from, to) {
            (Type::Vector(fe, n), Type::Vector(te, m)) if n == m && !matches!(op, CastOp::PtrToInt | CastOp::IntToPtr | CastOp::AddrSpaceCast) => {
                return cast_problem(op, fe, te);
            }
            (Type::Vector(..), _) | (_, Type::Vector(..)) => {
                return Some(format!("'{}' on vectors needs vectors of the same length on both sides", op.mnemonic()));
            }
            _ => {}
        }
    }
    let int_not_i1 = |t: &Type| t.is_int() && *t != Type::I1;
    let ok = match op {
        CastOp::Trunc => from.is_int() && to.is_int() && to.bits() < from.bits(),
        CastOp::ZExt | CastOp::SExt => from.is_int() && to.is_int() && to.bits() > from.bits(),
        CastOp::FpTrunc => from.is_float() && to.is_float() && to.bits() < from.bits(),
        CastOp::FpExt => from.is_float() && to.is_float() && to.bits() > from.bits(),
        CastOp::FpToUi | CastOp::FpToSi => from.is_float() && int_not_i1(to),
        CastOp::UiToFp | CastOp::SiToFp => int_not_i1(from) && to.is_float(),
        CastOp::Bitcast => {
            let plain = |t: &Type| !matches!(t, Type::Ptr(_) | Type::Struct(_) | Type::I1) && !matches!(t.element(), Type::Ptr(_) | Type::I1);
            plain(from) && plain(to) && from.bits() == to.bits()
        }
        CastOp::PtrToInt => matches!(from, Type::Ptr(_)) && to.is_int() && to.bits() == from.bits(),
        CastOp::IntToPtr => from.is_int() && matches!(to, Type::Ptr(_)) && to.bits() == from.bits(),
        CastOp::AddrSpaceCast => match (from, to) {
            (Type::Ptr(a), Type::Ptr(b)) => {
                a != b
                    && (*a == AddrSpace::Flat
                        || *b == AddrSpace::Flat
                        || matches!((a, b), (AddrSpace::Global, AddrSpace::Constant) | (AddrSpace::Constant, AddrSpace::Global)))
            }
            _ => false,
        },
    };
    if ok {
        return None;
    }
    Some(
        match op {
            CastOp::Trunc => "trunc goes from an integer to a narrower integer",
            CastOp::ZExt | CastOp::SExt => "extensions go from an integer to a wider integer",
            CastOp::FpTrunc => "fptrunc goes from a float to a narrower float",
            CastOp::FpExt => "fpext goes from a float to a wider float",
            CastOp::FpToUi | CastOp::FpToSi => "the source must be a float and the result an integer other than i1",
            CastOp::UiToFp | CastOp::SiToFp => "the source must be an integer other than i1 and the result a float",
            CastOp::Bitcast => "bitcast needs two non-pointer types of the same size",
            CastOp::PtrToInt => "ptrtoint gives an integer as wide as the pointer",
            CastOp::IntToPtr => "inttoptr takes an integer as wide as the pointer",
            CastOp::AddrSpaceCast => "addrspacecast converts between flat and another address space (or global and constant)",
        }
        .to_string(),
    )
}
