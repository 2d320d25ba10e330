//! Function bodies into MIR: every function reachable from an entry point,
//! blocks in module order (SPIR-V's dominance order, so every value but an
//! `OpPhi` operand is defined before it is used), `OpPhi`s as block
//! parameters whose arguments the predecessors' branches pass.

use hashbrown::{HashMap, HashSet};

use rspirv::dr::Operand as O;
use rspirv::spirv::{MemoryAccess, MemorySemantics, Op, Scope, StorageClass};

use super::module::{address_space, ByvalField, Constant, Facts, SpvType};
use super::read::Inst;
use super::{builtins, collectives, convert, opencl, subgroups, Error};
use crate::abi::{AddrSpace, Type};
use crate::mir::builder::FunctionBuilder;
use crate::mir::{AtomicOp, BinOp, BlockId, CastOp, Const, FloatPred, FuncKind, IntPred, MemOrder, MemScope, Module, Op as MOp, Operand, Sync, UnOp, WaveOp};

/// What a SPIR-V id stands for inside a function.
#[derive(Clone, Debug)]
pub enum Val {
    Op(Operand),
    /// The value loaded from a builtin input variable (computed per element
    /// when extracted).
    Builtin(rspirv::spirv::BuiltIn, u32),
}

struct Phi {
    id: u32,
    /// (value, predecessor label)
    incoming: Vec<(u32, u32)>,
}

/// The most bytes a memory copy (`OpCopyMemorySized`, LLVM's memcpy,
/// memmove and memset) may move: the copy is unrolled into loads and
/// stores (a 64 KiB copy is already 16,384 of each), so a longer one is
/// refused with its size instead of growing without bound.
pub const MOST_COPIED_BYTES: u64 = 65536;

pub struct Fx<'a> {
    pub facts: &'a Facts,
    pub b: FunctionBuilder,
    vals: HashMap<u32, Val>,
    blocks: HashMap<u32, BlockId>,
    phis: HashMap<u32, Vec<Phi>>,
    entry: BlockId,
    current: BlockId,
    current_label: u32,
    kernel: bool,
    names: &'a HashMap<u32, (String, Option<Type>)>,
    imports: &'a HashMap<u32, String>,
    byval_params: &'a HashMap<u32, Vec<Option<u32>>>,
    lds_uses: &'a HashMap<u32, Vec<u32>>,
    /// The module's printf formats (`OpenCL.std printf`).
    pub printf: &'a super::printf::Formats,
    /// The module's constant tables (read-only data).
    tables: &'a super::data::Tables,
    /// The memory of module variables: a kernel's LDS slots, a device
    /// function's LDS parameters, constant tables' addresses.
    module_slots: HashMap<u32, Operand>,
    /// Generic pointers made by `OpPtrCastToGeneric` here from global or
    /// local ones: the pointer cast. Atomics use it, so they are global or
    /// LDS atomics instead of FLAT ones.
    generic_sources: HashMap<crate::mir::Value, Operand>,
    fresh: u32,
    /// The first operation MIR could not type (see [`Fx::value`]).
    poisoned: Option<String>,
}

/// Translates the functions reachable from the entry points.
pub fn translate(facts: &Facts, insts: &[Inst]) -> Result<Module, Vec<Error>> {
    // Bodies without blocks are declarations (imports: OpenCL builtins the
    // producer left as calls, translated at each call).
    let is_declaration = |b: &super::module::Body| !insts[b.start..b.end].iter().any(|i| i.op() == Op::Label);
    let imports: HashMap<u32, String> =
        facts.bodies.iter().filter(|b| is_declaration(b)).map(|b| (b.id, facts.name(b.id).unwrap_or("?").to_string())).collect();
    let bodies: HashMap<u32, &super::module::Body> = facts.bodies.iter().filter(|b| !is_declaration(b)).map(|b| (b.id, b)).collect();
    if facts.entry_points.is_empty() {
        return Err(vec![Error::new("the module has no kernel entry point (OpEntryPoint Kernel)", None)]);
    }
    // Reachable functions, by calls from the entry points.
    let mut reachable = HashSet::new();
    let mut work: Vec<u32> = facts.entry_points.iter().map(|(f, _)| *f).collect();
    while let Some(f) = work.pop() {
        if !reachable.insert(f) {
            continue;
        }
        if let Some(body) = bodies.get(&f) {
            for inst in &insts[body.start..body.end] {
                if inst.op() == Op::FunctionCall {
                    if let Some(O::IdRef(callee)) = inst.inst.operands.first() {
                        work.push(*callee);
                    }
                }
            }
        }
    }
    // Names: kernels by their entry point, functions by OpName (made unique).
    let mut names: HashMap<u32, (String, Option<Type>)> = HashMap::new();
    let mut taken = HashSet::new();
    let mut errors = Vec::new();
    for body in &facts.bodies {
        if !reachable.contains(&body.id) || imports.contains_key(&body.id) {
            continue;
        }
        let kernel = facts.entry_points.iter().find(|(f, _)| *f == body.id).map(|(_, n)| n.clone());
        let base = kernel.unwrap_or_else(|| sanitize(facts.name(body.id).unwrap_or("func")));
        let mut name = base.clone();
        let mut k = 1;
        while !taken.insert(name.clone()) {
            name = format!("{base}.{k}");
            k += 1;
        }
        let inst = &insts[body.start];
        let ret = match inst.inst.result_type.map(|t| (t, facts.ty(t))) {
            Some((_, Ok(SpvType::Void))) => None,
            Some((t, _)) => match facts.mir_type(t) {
                Ok(t) => Some(t),
                Err(m) => {
                    errors.push(facts.locate(Error::new(format!("function '{name}': {m}"), Some(inst.word)), inst));
                    None
                }
            },
            None => None,
        };
        names.insert(body.id, (name, ret));
    }
    for (f, name) in &facts.entry_points {
        if !bodies.contains_key(f) {
            errors.push(Error::new(format!("entry point '{name}' has no body"), None));
        }
    }
    // Which parameters of each function are aggregates passed by value (a
    // pointer in SPIR-V, a struct in MIR): the pointee type for those.
    let byval: HashMap<u32, Vec<Option<u32>>> = bodies
        .values()
        .map(|b| {
            let params = insts[b.start..b.end]
                .iter()
                .filter(|i| i.op() == Op::FunctionParameter)
                .map(|i| {
                    let (pid, ty) = (i.inst.result_id.unwrap_or(0), i.inst.result_type.unwrap_or(0));
                    match facts.ty(ty) {
                        Ok(SpvType::Pointer { pointee, .. }) if facts.byval.contains(&pid) => Some(*pointee),
                        _ => None,
                    }
                })
                .collect();
            (b.id, params)
        })
        .collect();
    // __local variables reach device functions as parameters: the Workgroup
    // variables each function uses, itself or through its calls (a fixed
    // point over the call graph), are extra `ptr<local>` parameters, and every
    // call passes the caller's (a kernel's LDS slot or its own parameter).
    let mut lds_uses: HashMap<u32, Vec<u32>> = HashMap::new();
    let mut callees: HashMap<u32, Vec<u32>> = HashMap::new();
    for (id, b) in &bodies {
        let mut used = Vec::new();
        let mut calls = Vec::new();
        for inst in &insts[b.start..b.end] {
            for o in &inst.inst.operands {
                if let O::IdRef(x) = o {
                    if facts.globals.get(x).is_some_and(|g| g.storage == StorageClass::Workgroup) && !used.contains(x) {
                        used.push(*x);
                    }
                }
            }
            if inst.op() == Op::FunctionCall {
                if let Some(O::IdRef(c)) = inst.inst.operands.first() {
                    calls.push(*c);
                }
            }
            let scope = match inst.inst.operands.first() {
                Some(O::IdScope(s) | O::IdRef(s)) => match facts.constants.get(s) {
                    Some((_, Constant::Scalar(c))) => Some(c.bits),
                    _ => None,
                },
                _ => None,
            };
            if collectives::is_workgroup_collective(inst.op(), scope) && !used.contains(&collectives::AREA) {
                used.push(collectives::AREA);
            }
        }
        lds_uses.insert(*id, used);
        callees.insert(*id, calls);
    }
    loop {
        let mut changed = false;
        for (f, calls) in &callees {
            for c in calls {
                let extra: Vec<u32> = lds_uses.get(c).cloned().unwrap_or_default();
                let mine = lds_uses.get_mut(f).expect("every body has an entry");
                for g in extra {
                    if !mine.contains(&g) {
                        mine.push(g);
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    for v in lds_uses.values_mut() {
        v.sort_unstable();
    }
    let mut functions = Vec::new();
    let printf = super::printf::Formats::default();
    let tables = super::data::Tables::new(names.values().map(|(n, _)| n.clone()));
    for body in &facts.bodies {
        if !reachable.contains(&body.id) || imports.contains_key(&body.id) {
            continue;
        }
        match translate_function(facts, &insts[body.start..=body.end], &names, &imports, &byval, &lds_uses, &printf, &tables, body.id) {
            Ok(f) => functions.push(f),
            Err(e) => errors.push(e),
        }
    }
    // Calls to functions the module only declares (imports).
    for f in &reachable {
        if !bodies.contains_key(f) && !imports.contains_key(f) && !facts.entry_points.iter().any(|(e, _)| e == f) {
            let name = facts.name(*f).unwrap_or("?");
            errors.push(Error::new(format!("a call to '{name}' (%{f}), which the module declares but does not define"), None));
        }
    }
    if errors.is_empty() {
        let mut module = Module::new(functions);
        module.printf_formats = printf.into_inner();
        module.data = tables.into_inner();
        Ok(module)
    } else {
        Err(errors)
    }
}

/// `i1`, or `<N x i1>` for an N-element vector type.
pub fn bool_like(ty: &Type) -> Type {
    match ty {
        Type::Vector(_, n) => Type::Vector(Box::new(Type::I1), *n),
        _ => Type::I1,
    }
}

/// A MIR-friendly name: letters, digits, `_` and `.`.
/// What the SPIR-V says of kernel parameter `pid` of type `ty`, for the code
/// object's metadata as clang writes it (docs/spirv.md says what is lost):
/// restrict (NoAlias), volatile, const (the constant address space), a
/// read-only restrict pointer (NoAlias with NoWrite), and the type's name.
fn kernel_arg_info(facts: &Facts, pid: u32, ty: u32) -> crate::mir::ArgInfo {
    use rspirv::spirv::FunctionParameterAttribute as A;
    let attrs = facts.param_attrs.get(&pid).map(Vec::as_slice).unwrap_or(&[]);
    let restrict = attrs.contains(&A::NoAlias);
    let constant = matches!(facts.ty(ty), Ok(SpvType::Pointer { storage: StorageClass::UniformConstant, .. }));
    let pointer = matches!(facts.ty(ty), Ok(SpvType::Pointer { .. }));
    let unsigned = attrs.contains(&A::Zext);
    let name = if facts.byval.contains(&pid) {
        match facts.ty(ty) {
            Ok(SpvType::Pointer { pointee, .. }) => type_name(facts, *pointee, unsigned, 0),
            _ => None,
        }
    } else {
        type_name(facts, ty, unsigned, 0)
    };
    let local_align = match facts.ty(ty) {
        // The parameter's Alignment decoration (LLVM's `align`), else the
        // pointee type's (which LLVM's opaque pointers may have made i8).
        Ok(SpvType::Pointer { storage: StorageClass::Workgroup, pointee }) => facts.alignment.get(&pid).copied().or_else(|| facts.layout(*pointee).ok().map(|(_, a)| a as u32)),
        _ => None,
    };
    crate::mir::ArgInfo {
        pointee_align: local_align,
        is_const: constant,
        is_restrict: restrict && pointer,
        is_volatile: facts.volatile.contains(&pid),
        access: (restrict && pointer && attrs.contains(&A::NoWrite)).then_some(crate::mir::ArgAccess::ReadOnly),
        type_name: name,
    }
}

/// The OpenCL C spelling of a SPIR-V type: its integers carry no sign, so
/// they are named signed unless `unsigned` (a Zext parameter); a struct is
/// its LLVM name without `struct.`.
fn type_name(facts: &Facts, ty: u32, unsigned: bool, depth: u32) -> Option<String> {
    if depth > 8 {
        return None;
    }
    let u = if unsigned { "u" } else { "" };
    Some(match facts.ty(ty).ok()? {
        SpvType::Bool => "bool".into(),
        SpvType::Int(8) => format!("{u}char"),
        SpvType::Int(16) => format!("{u}short"),
        SpvType::Int(32) => format!("{u}int"),
        SpvType::Int(_) => format!("{u}long"),
        SpvType::Float(16) => "half".into(),
        SpvType::Float(32) => "float".into(),
        SpvType::Float(_) => "double".into(),
        SpvType::Vector { elem, n } => format!("{}{n}", type_name(facts, *elem, unsigned, depth + 1)?),
        SpvType::Pointer { pointee, .. } => format!("{}*", type_name(facts, *pointee, false, depth + 1)?),
        SpvType::Struct { .. } => {
            let n = facts.name(ty)?;
            n.strip_prefix("struct.").unwrap_or(n).to_string()
        }
        SpvType::Void => "void".into(),
        _ => return None,
    })
}

pub fn sanitize(name: &str) -> String {
    let s: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '.' { c } else { '_' }).collect();
    if s.is_empty() {
        "v".into()
    } else {
        s
    }
}

/// A MIR block label for a SPIR-V label: its OpName made a MIR name that
/// starts as labels must (a letter or `_`: clang names blocks `.thread66`),
/// unique within the function (a repeated name gets a number), so that the
/// translated module printed with `--emit mir` parses again.
fn block_label(name: Option<&str>, label: u32, taken: &mut std::collections::HashSet<String>) -> String {
    let base = sanitize(name.unwrap_or(&format!("b{label}")));
    let base = if base.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') { base } else { format!("b{base}") };
    let mut chosen = base.clone();
    let mut n = 1;
    while !taken.insert(chosen.clone()) {
        chosen = format!("{base}.{n}");
        n += 1;
    }
    chosen
}

/// The OpFunction's FunctionControl as MIR's inline hint (docs/spirv.md):
/// `DontInline` (OpenCL's `__attribute__((noinline))`) keeps the calls,
/// `Inline` (`always_inline`) asks for the body at every call.
fn inline_hint(function: &Inst) -> crate::mir::InlineHint {
    let control = function.inst.operands.iter().find_map(|o| if let O::FunctionControl(c) = o { Some(*c) } else { None });
    match control {
        Some(c) if c.contains(rspirv::spirv::FunctionControl::DONT_INLINE) => crate::mir::InlineHint::Never,
        Some(c) if c.contains(rspirv::spirv::FunctionControl::INLINE) => crate::mir::InlineHint::Always,
        _ => crate::mir::InlineHint::Auto,
    }
}

fn translate_function(
    facts: &Facts,
    body: &[Inst],
    names: &HashMap<u32, (String, Option<Type>)>,
    imports: &HashMap<u32, String>,
    byval_params: &HashMap<u32, Vec<Option<u32>>>,
    lds_uses: &HashMap<u32, Vec<u32>>,
    printf: &super::printf::Formats,
    tables: &super::data::Tables,
    id: u32,
) -> Result<crate::mir::Function, Error> {
    let (name, ret) = names[&id].clone();
    let kernel = facts.entry_points.iter().any(|(f, _)| *f == id);
    let b = if kernel { FunctionBuilder::kernel(&name) } else { FunctionBuilder::device(&name, ret) };
    let mut fx = Fx {
        facts,
        b,
        vals: HashMap::new(),
        blocks: HashMap::new(),
        phis: HashMap::new(),
        entry: BlockId(0),
        current: BlockId(0),
        current_label: 0,
        kernel,
        names,
        imports,
        byval_params,
        lds_uses,
        printf,
        tables,
        module_slots: HashMap::new(),
        generic_sources: HashMap::new(),
        fresh: 0,
        poisoned: None,
    };
    let fail = |e: String, inst: &Inst| facts.locate(Error::new(format!("in '{name}': {e}"), Some(inst.word)), inst);
    // Parameters, blocks and phis first.
    let mut byval = Vec::new();
    let mut current_label = None;
    let mut block_names: std::collections::HashSet<String> = std::collections::HashSet::new();
    for inst in body {
        match inst.op() {
            Op::FunctionParameter => {
                let (pid, ty) = (inst.inst.result_id.unwrap_or(0), inst.inst.result_type.unwrap_or(0));
                let pname = sanitize(facts.name(pid).unwrap_or(&format!("arg{}", fx.b_params())));
                let value_ty = if facts.byval.contains(&pid) {
                    let Ok(SpvType::Pointer { pointee, .. }) = facts.ty(ty) else { return Err(fail("a by-value parameter that is not a pointer".into(), inst)) };
                    byval.push((pid, *pointee));
                    facts.byval_type(*pointee)
                } else {
                    facts.mir_type(ty)
                }
                .map_err(|m| fail(format!("parameter '{pname}': {m}"), inst))?;
                let v = fx.b.param(&pname, value_ty);
                if kernel {
                    fx.b.set_param_info(kernel_arg_info(facts, pid, ty));
                }
                fx.vals.insert(pid, Val::Op(Operand::Value(v)));
            }
            Op::Label => {
                let label = inst.inst.result_id.unwrap_or(0);
                let bname = block_label(facts.name(label), label, &mut block_names);
                let block = fx.b.create_block(&bname);
                fx.blocks.insert(label, block);
                current_label = Some(label);
            }
            Op::Phi => {
                let (pid, ty) = (inst.inst.result_id.unwrap_or(0), inst.inst.result_type.unwrap_or(0));
                let label = current_label.ok_or_else(|| fail("OpPhi outside a block".into(), inst))?;
                let mty = facts.mir_type(ty).map_err(|m| fail(m, inst))?;
                let pname = sanitize(facts.name(pid).unwrap_or(&format!("phi{pid}")));
                let v = fx.b.block_param(fx.blocks[&label], &pname, mty);
                fx.vals.insert(pid, Val::Op(Operand::Value(v)));
                let ids: Vec<u32> = inst.inst.operands.iter().filter_map(|o| if let O::IdRef(x) = o { Some(*x) } else { None }).collect();
                let incoming = ids.chunks(2).filter(|c| c.len() == 2).map(|c| (c[0], c[1])).collect();
                fx.phis.entry(label).or_default().push(Phi { id: pid, incoming });
            }
            _ => {}
        }
    }
    if !kernel {
        for &g in lds_uses.get(&id).map(Vec::as_slice).unwrap_or(&[]) {
            let pname = if g == collectives::AREA {
                "lds.collectives".to_string()
            } else {
                sanitize(&format!("lds.{}", facts.name(g).unwrap_or(&g.to_string())))
            };
            let v = fx.b.param(&pname, Type::Ptr(AddrSpace::Local));
            fx.module_slots.insert(g, Operand::Value(v));
        }
    }
    if fx.blocks.is_empty() {
        return Err(fail("a function without blocks".into(), &body[0]));
    }
    fx.entry = BlockId(0);
    fx.b.switch_to(fx.entry);
    // By-value aggregates live in a stack slot, as the body expects a pointer.
    for (pid, pointee) in byval {
        let (size, align) = facts.layout(pointee).map_err(|m| fail(m, &body[0]))?;
        let value = fx.operand(pid).map_err(|m| fail(m, &body[0]))?;
        let slot = Operand::Value(fx.b.stack_slot(size.max(1) as u32, align.max(1) as u32));
        fx.store_byval(pointee, value, slot.clone(), AddrSpace::Private, align as u32).map_err(|m| fail(m, &body[0]))?;
        fx.vals.insert(pid, Val::Op(slot));
    }
    for inst in body {
        match inst.op() {
            Op::Label => {
                let label = inst.inst.result_id.unwrap_or(0);
                fx.current = fx.blocks[&label];
                fx.current_label = label;
                fx.b.switch_to(fx.current);
            }
            Op::Function | Op::FunctionParameter | Op::FunctionEnd | Op::Phi => {}
            _ => fx.inst(inst).map_err(|m| {
                // Name the instruction where the reason does not.
                let op = format!("Op{:?}", inst.op());
                fail(if m.contains(&op) { m } else { format!("{op}: {m}") }, inst)
            })?,
        }
        if let Some(m) = fx.poisoned.take() {
            return Err(fail(m, inst));
        }
    }
    let mut f = fx.b.finish().map_err(|d| fail(d.message, &body[0]))?;
    if kernel {
        if let Some(m) = facts.modes.get(&id) {
            f.attrs.reqd_work_group_size = m.local_size;
            f.attrs.work_group_size_hint = m.local_size_hint;
        }
    }
    if !kernel {
        f.inline = inline_hint(&body[0]);
    }
    debug_assert!(f.kind == if kernel { FuncKind::Kernel } else { FuncKind::Device });
    Ok(f)
}

fn id_of(o: Option<&O>) -> Result<u32, String> {
    match o {
        Some(O::IdRef(x) | O::IdScope(x) | O::IdMemorySemantics(x)) => Ok(*x),
        other => Err(format!("expected an id operand, found {other:?}")),
    }
}

impl<'a> Fx<'a> {
    fn b_params(&self) -> usize {
        self.vals.len()
    }

    /// The MIR operand for id `id`.
    pub fn operand(&mut self, id: u32) -> Result<Operand, String> {
        match self.vals.get(&id).cloned() {
            Some(Val::Op(o)) => return Ok(o),
            Some(Val::Builtin(b, ty)) => return builtins::whole(self, b, ty),
            None => {}
        }
        if let Some((ty, c)) = self.facts.constants.get(&id).cloned() {
            return self.constant(ty, &c);
        }
        if let Some(o) = self.module_slots.get(&id) {
            return Ok(o.clone());
        }
        if let Some(g) = self.facts.globals.get(&id).cloned() {
            return match g.storage {
                StorageClass::Workgroup if self.kernel => {
                    if let Some(o) = self.module_slots.get(&id) {
                        return Ok(o.clone());
                    }
                    if g.initializer.is_some() {
                        return Err("a Workgroup variable with an initializer".into());
                    }
                    let (size, align) = self.facts.layout(g.pointee)?;
                    let align = self.facts.alignment.get(&id).map_or(align, |&a| u64::from(a)).max(align);
                    let here = self.current;
                    self.b.switch_to(self.entry);
                    let slot = Operand::Value(self.b.lds_slot(size.max(1) as u32, align.max(1) as u32));
                    self.b.switch_to(here);
                    self.module_slots.insert(id, slot.clone());
                    Ok(slot)
                }
                StorageClass::Workgroup => Err(format!(
                    "the Workgroup (__local) variable '{}' is used in a device function; MIR allocates LDS only in kernels",
                    self.facts.name(id).unwrap_or("?")
                )),
                StorageClass::Input => Err(format!("the builtin variable '{}' used other than by OpLoad", self.facts.name(id).unwrap_or("?"))),
                // A constant table (OpenCL's __constant data, array
                // initializers): the module's read-only data (data.rs), its
                // address taken once in the entry block.
                // Program-scope __global variables (OpenCL 2.0): the
                // module's writable data, zero-initialised without an
                // initializer as OpenCL requires.
                StorageClass::CrossWorkgroup if self.facts.imported.contains(&id) => Err(format!(
                    "the program-scope variable '{}' is extern (Import linkage): it is defined in another module, and amdgpu-cg links none",
                    self.facts.name(id).unwrap_or("?")
                )),
                StorageClass::UniformConstant | StorageClass::CrossWorkgroup if g.initializer.is_some() || g.storage == StorageClass::CrossWorkgroup => {
                    let writable = g.storage == StorageClass::CrossWorkgroup;
                    let name = self.tables.global(self.facts, id)?;
                    let space = if writable { AddrSpace::Global } else { AddrSpace::Constant };
                    let here = self.current;
                    self.b.switch_to(self.entry);
                    let address = self.value(MOp::DataAddr { name, space });
                    self.b.switch_to(here);
                    self.module_slots.insert(id, address.clone());
                    Ok(address)
                }
                other => Err(format!(
                    "module-scope variable '{}' in the {other:?} storage class (constant tables with initializers, program-scope __global variables and __local variables are supported)",
                    self.facts.name(id).unwrap_or("?")
                )),
            };
        }
        Err(format!("%{id} is used but not defined (or not supported)"))
    }

    /// The pointer an atomic works through: a generic one made here from a
    /// global or local pointer (OpenCL 2.0's `atomic_fetch_add(&counter, 1)`
    /// on a `__global atomic_int`) is replaced by the original, so the atomic
    /// is a global or LDS one; a generic pointer of unknown space stays
    /// generic (a FLAT atomic, which reaches global memory or LDS by the
    /// address).
    pub(super) fn atomic_pointer(&mut self, ptr: u32) -> Result<Operand, String> {
        let p = self.operand(ptr)?;
        if self.mir_type_of(ptr)? != Type::Ptr(AddrSpace::Flat) {
            return Ok(p);
        }
        match &p {
            Operand::Value(v) => Ok(self.generic_sources.get(v).cloned().unwrap_or(p)),
            Operand::Const(_) => Err("an atomic through a constant generic pointer".into()),
        }
    }

    /// A constant as an operand; composites are built once, in the entry block.
    fn constant(&mut self, ty: u32, c: &Constant) -> Result<Operand, String> {
        self.constant_at(ty, c, 0)
    }

    fn constant_at(&mut self, ty: u32, c: &Constant, depth: u32) -> Result<Operand, String> {
        if depth > 64 {
            return Err("constants nested more than 64 deep".into());
        }
        let mty = self.facts.mir_type(ty)?;
        match (c, &mty) {
            (Constant::Scalar(k), _) => Ok(Operand::Const(k.clone())),
            // `&table[2]` as a constant: the variable's address (taken in
            // the entry block) plus the offset, cast to the result's space.
            (Constant::Address { var, offset }, Type::Ptr(to)) => {
                let base = self.operand(*var)?;
                let storage = self.facts.globals.get(var).map(|g| g.storage).ok_or("an address constant of something other than a variable")?;
                let space = super::module::address_space(storage)?;
                let here = self.current;
                self.b.switch_to(self.entry);
                let at = self.offset_ptr(base, space, *offset as u64);
                let at = if space == *to { at } else { self.cast(CastOp::AddrSpaceCast, &Type::Ptr(space), at, &Type::Ptr(*to)) };
                self.b.switch_to(here);
                Ok(at)
            }
            (Constant::Zero, t) if t.is_scalar() => Ok(Operand::Const(Const { ty: t.clone(), bits: 0 })),
            _ => {
                let elems: Vec<(u32, Constant)> = match (c, self.facts.ty(ty)?.clone()) {
                    (Constant::Composite(parts), _) => {
                        parts.iter().map(|p| self.facts.constants.get(p).cloned().ok_or_else(|| format!("constant part %{p}"))).collect::<Result<_, _>>()?
                    }
                    (_, SpvType::Vector { elem, n }) => (0..n).map(|_| (elem, Constant::Zero)).collect(),
                    (_, SpvType::Struct { members, .. }) => members.iter().map(|m| (*m, Constant::Zero)).collect(),
                    (_, other) => return Err(format!("a constant of type {other:?}")),
                };
                let mut ops = Vec::new();
                for (t, e) in &elems {
                    ops.push(self.constant_at(*t, e, depth + 1)?);
                }
                let here = self.current;
                self.b.switch_to(self.entry);
                let v = self.b.make(mty, ops);
                self.b.switch_to(here);
                Ok(Operand::Value(v))
            }
        }
    }

    pub fn def(&mut self, id: Option<u32>, o: Operand) {
        if let Some(id) = id {
            if let (Operand::Value(v), Some(name)) = (&o, self.facts.name(id)) {
                let name = sanitize(name);
                self.b.set_name(*v, &name);
            }
            self.vals.insert(id, Val::Op(o));
        }
    }

    /// The SPIR-V type id of an id's value.
    pub fn type_of(&self, id: u32) -> Result<u32, String> {
        if let Some(t) = self.facts.result_types.get(&id) {
            return Ok(*t);
        }
        if let Some((t, _)) = self.facts.constants.get(&id) {
            return Ok(*t);
        }
        Err(format!("the type of %{id}"))
    }

    pub fn mir_type_of(&self, id: u32) -> Result<Type, String> {
        self.facts.mir_type(self.type_of(id)?)
    }

    /// Appends an operation with a result. One MIR cannot type (operands of
    /// the wrong kind, from a malformed module) marks the function as failed
    /// and gives a placeholder, so that the translation goes on to its end
    /// and reports this instead.
    pub fn value(&mut self, op: MOp) -> Operand {
        let text = format!("{op:?}");
        match self.b.push(op, None) {
            Some(v) => Operand::Value(v),
            None => {
                self.poisoned.get_or_insert_with(|| format!("operands of the wrong type for {}", text.chars().take(120).collect::<String>()));
                Operand::Const(Const::int(Type::I32, 0))
            }
        }
    }

    pub fn bin(&mut self, op: BinOp, ty: &Type, a: Operand, b: Operand) -> Operand {
        self.value(MOp::Binary { op, ty: ty.clone(), lhs: a, rhs: b })
    }

    pub fn un(&mut self, op: UnOp, ty: &Type, a: Operand) -> Operand {
        self.value(MOp::Unary { op, ty: ty.clone(), arg: a })
    }

    pub fn cast(&mut self, op: CastOp, from: &Type, a: Operand, to: &Type) -> Operand {
        if from == to && !matches!(op, CastOp::AddrSpaceCast) {
            return a;
        }
        self.value(MOp::Cast { op, from: from.clone(), arg: a, to: to.clone() })
    }

    pub fn select(&mut self, ty: &Type, c: Operand, a: Operand, b: Operand) -> Operand {
        self.value(MOp::Select { ty: ty.clone(), cond: c, if_true: a, if_false: b })
    }

    /// A constant of type `ty` (a scalar, or a vector of that value).
    pub fn splat(&mut self, ty: &Type, bits: u64) -> Operand {
        match ty {
            Type::Vector(e, n) => {
                let k = Operand::Const(Const { ty: (**e).clone(), bits });
                let elems = vec![k; usize::from(*n)];
                self.value(MOp::Make { ty: ty.clone(), elems })
            }
            t => Operand::Const(Const { ty: t.clone(), bits }),
        }
    }

    /// A constant integer id's value.
    /// A fresh MIR block inside the current SPIR-V block (for expansions with
    /// control flow of their own).
    pub fn new_block(&mut self, stem: &str) -> BlockId {
        self.fresh += 1;
        self.b.create_block(&format!("{stem}{}", self.fresh))
    }

    /// Continues in `block` (created by [`Fx::new_block`]).
    pub fn enter(&mut self, block: BlockId) {
        self.current = block;
        self.b.switch_to(block);
    }

    /// The LDS area of the work-group collectives: a slot of the kernel, or
    /// the parameter a device function receives it in.
    pub fn collective_area(&mut self) -> Result<Operand, String> {
        if let Some(o) = self.module_slots.get(&collectives::AREA) {
            return Ok(o.clone());
        }
        if !self.kernel {
            return Err("internal: a work-group collective in a device function without the collectives' LDS parameter".into());
        }
        let here = self.current;
        self.b.switch_to(self.entry);
        let slot = Operand::Value(self.b.lds_slot(collectives::AREA_BYTES, 8));
        self.b.switch_to(here);
        self.module_slots.insert(collectives::AREA, slot.clone());
        Ok(slot)
    }

    pub fn const_int(&self, id: u32) -> Option<u64> {
        match self.facts.constants.get(&id) {
            Some((_, Constant::Scalar(c))) => Some(c.bits),
            Some((_, Constant::Zero)) => Some(0),
            _ => None,
        }
    }

    fn branch_args(&mut self, from: u32, to: u32) -> Result<Vec<Operand>, String> {
        let incoming: Vec<u32> = match self.phis.get(&to) {
            None => return Ok(Vec::new()),
            Some(phis) => phis
                .iter()
                .map(|p| p.incoming.iter().find(|(_, pred)| *pred == from).map(|(v, _)| *v).ok_or_else(|| format!("OpPhi %{} has no value for the edge from %{from}", p.id)))
                .collect::<Result<_, _>>()?,
        };
        incoming.into_iter().map(|v| self.operand(v)).collect()
    }

    fn target(&self, label: u32) -> Result<BlockId, String> {
        self.blocks.get(&label).copied().ok_or_else(|| format!("a branch to %{label}, which is not a block of the function"))
    }

    fn sync(&self, scope: u32, semantics: u32) -> Result<Sync, String> {
        Ok(Sync { order: self.order(semantics)?, scope: self.scope(scope)? })
    }

    fn scope(&self, id: u32) -> Result<MemScope, String> {
        let v = self.const_int(id).ok_or("a scope that is not a constant")?;
        Ok(match Scope::from_u32(v as u32) {
            Some(Scope::CrossDevice) => MemScope::System,
            Some(Scope::Device | Scope::QueueFamily) => MemScope::Agent,
            Some(Scope::Workgroup) => MemScope::Workgroup,
            Some(Scope::Subgroup | Scope::Invocation) => MemScope::Wavefront,
            _ => return Err(format!("memory scope {v}")),
        })
    }

    fn order(&self, id: u32) -> Result<MemOrder, String> {
        let v = self.const_int(id).ok_or("memory semantics that are not a constant")?;
        let s = MemorySemantics::from_bits_truncate(v as u32);
        Ok(if s.contains(MemorySemantics::SEQUENTIALLY_CONSISTENT) {
            MemOrder::SeqCst
        } else if s.contains(MemorySemantics::ACQUIRE_RELEASE) || s.contains(MemorySemantics::ACQUIRE | MemorySemantics::RELEASE) {
            MemOrder::AcqRel
        } else if s.contains(MemorySemantics::ACQUIRE) {
            MemOrder::Acquire
        } else if s.contains(MemorySemantics::RELEASE) {
            MemOrder::Release
        } else {
            MemOrder::Relaxed
        })
    }

    /// (alignment, volatile) of a load or store: its memory operands, else
    /// the pointer's decoration, else the type's natural alignment.
    fn access(&self, ptr: u32, ty: u32, operands: &[O]) -> Result<(u32, bool), String> {
        let (mut align, mut volatile) = (None, self.facts.volatile.contains(&ptr));
        if let Some(O::MemoryAccess(m)) = operands.first() {
            volatile |= m.contains(MemoryAccess::VOLATILE);
            if m.contains(MemoryAccess::ALIGNED) {
                if let Some(O::LiteralBit32(a)) = operands.get(1) {
                    align = Some(*a);
                }
            }
        }
        let natural = self.facts.layout(ty)?.1 as u32;
        Ok((align.or_else(|| self.facts.alignment.get(&ptr).copied()).unwrap_or(natural).max(1), volatile))
    }

    pub fn pointee(&self, ptr: u32) -> Result<(StorageClass, u32), String> {
        match self.facts.ty(self.type_of(ptr)?)? {
            SpvType::Pointer { storage, pointee } => Ok((*storage, *pointee)),
            other => Err(format!("%{ptr} is not a pointer but {other:?}")),
        }
    }

    /// `base` plus the byte offset of an access chain's indexes (`element`
    /// first for the Ptr forms, in units of the pointee).
    fn access_chain(&mut self, base: u32, element: Option<u32>, indexes: &[u32]) -> Result<Operand, String> {
        let (storage, mut cur) = self.pointee(base)?;
        let space = address_space(storage)?;
        let index_ty = if Type::Ptr(space).size() == 8 { Type::I64 } else { Type::I32 };
        let mut acc: (i64, Option<Operand>) = (0, None);
        if let Some(e) = element {
            let stride = self.facts.stride(cur)?;
            self.add_index(&mut acc, e, stride, &index_ty)?;
        }
        for &idx in indexes {
            match self.facts.ty(cur)?.clone() {
                SpvType::Struct { members, .. } => {
                    let k = self.const_int(idx).ok_or("a struct index that is not a constant")? as usize;
                    let m = *members.get(k).ok_or("a struct index out of range")?;
                    acc.0 += self.facts.member_offset(cur, k)? as i64;
                    cur = m;
                }
                SpvType::Array { elem, .. } | SpvType::RuntimeArray { elem } => {
                    let stride = self.facts.stride(elem)?;
                    self.add_index(&mut acc, idx, stride, &index_ty)?;
                    cur = elem;
                }
                SpvType::Vector { elem, .. } => {
                    let size = self.facts.layout(elem)?.0;
                    self.add_index(&mut acc, idx, size, &index_ty)?;
                    cur = elem;
                }
                other => return Err(format!("an access chain into {other:?}")),
            }
        }
        let (constant, dynamic) = acc;
        let mut ptr = self.operand(base)?;
        let offset = match (dynamic, constant) {
            (None, 0) => None,
            (None, c) => Some(Operand::Const(Const::int(index_ty.clone(), c))),
            (Some(d), 0) => Some(d),
            (Some(d), c) => Some(self.bin(BinOp::Add, &index_ty, d, Operand::Const(Const::int(index_ty.clone(), c)))),
        };
        if let Some(offset) = offset {
            ptr = self.value(MOp::PtrAdd { ptr, offset });
        }
        Ok(ptr)
    }

    /// Stores constant `c` (of SPIR-V type `ty`) at `ptr + offset` in private memory.
    /// Stores constant `c` of type `ty` at `ptr + offset`, where `ptr` is
    /// aligned to `base_align` bytes.
    fn store_constant(&mut self, ty: u32, c: u32, ptr: Operand, offset: u64, base_align: u64) -> Result<(), String> {
        self.facts.layout(ty)?; // bounded size and nesting
        if offset > 1 << 31 {
            return Err("a constant table of more than 2^31 bytes".into());
        }
        let (_, k) = self.facts.constants.get(&c).cloned().ok_or_else(|| format!("an initializer %{c} that is not a constant"))?;
        let t = self.facts.ty(ty)?.clone();
        match (&t, &k) {
            // A null aggregate: its bytes, in the widest pieces the
            // alignment at `offset` allows.
            (SpvType::Array { .. } | SpvType::Struct { .. }, Constant::Zero) => self.store_zero(ty, ptr, offset, base_align),
            (SpvType::Array { .. } | SpvType::Struct { .. }, _) if !matches!(k, Constant::Scalar(_)) => {
                let parts: Vec<(u32, u64, Option<u32>)> = match &t {
                    SpvType::Array { elem, len } => {
                        let stride = self.facts.stride(*elem)?;
                        let ids: Vec<Option<u32>> = match &k {
                            Constant::Composite(ps) => ps.iter().map(|p| Some(*p)).collect(),
                            _ => vec![None; *len as usize],
                        };
                        ids.into_iter().enumerate().map(|(i, p)| (*elem, offset + i as u64 * stride, p)).collect()
                    }
                    SpvType::Struct { members, .. } => {
                        let mut v = Vec::new();
                        for (i, m) in members.iter().enumerate() {
                            let p = match &k {
                                Constant::Composite(ps) => ps.get(i).copied(),
                                _ => None,
                            };
                            v.push((*m, offset + self.facts.member_offset(ty, i)?, p));
                        }
                        v
                    }
                    _ => unreachable!(),
                };
                for (pt, off, part) in parts {
                    match part {
                        Some(p) => self.store_constant(pt, p, ptr.clone(), off, base_align)?,
                        None => self.store_zero(pt, ptr.clone(), off, base_align)?,
                    }
                }
                Ok(())
            }
            _ => {
                let value = self.constant(ty, &k)?;
                let p = self.offset_ptr(ptr, AddrSpace::Private, offset);
                let (_, align) = self.facts.layout(ty)?;
                let mty = self.facts.mir_type(ty)?;
                self.b.push(MOp::Store { ty: mty, value, ptr: p, align: align as u32, volatile: false }, None);
                Ok(())
            }
        }
    }

    /// Zeroes the bytes of a value of type `ty` at `ptr + offset`, where
    /// `ptr` is aligned to `base_align` bytes.
    fn store_zero(&mut self, ty: u32, ptr: Operand, offset: u64, base_align: u64) -> Result<(), String> {
        let (size, align) = self.facts.layout(ty)?;
        let mut at = 0;
        while at < size {
            // Aligned to the type, and to the base where the offset allows.
            let fits = |c: u64| c <= align || (c <= base_align && (offset + at).is_multiple_of(c));
            let chunk = [4u64, 2, 1].into_iter().find(|&c| fits(c) && at + c <= size).unwrap_or(1);
            let t = match chunk {
                4 => Type::I32,
                2 => Type::I16,
                _ => Type::I8,
            };
            let p = self.offset_ptr(ptr.clone(), AddrSpace::Private, offset + at);
            self.b.push(MOp::Store { ty: t.clone(), value: Operand::Const(Const::int(t, 0)), ptr: p, align: chunk as u32, volatile: false }, None);
            at += chunk;
        }
        Ok(())
    }

    /// `ptr + offset` bytes, with the pointer's index width.
    pub fn offset_ptr(&mut self, ptr: Operand, space: AddrSpace, offset: u64) -> Operand {
        if offset == 0 {
            return ptr;
        }
        let ity = if Type::Ptr(space).size() == 8 { Type::I64 } else { Type::I32 };
        self.value(MOp::PtrAdd { ptr, offset: Operand::Const(Const::int(ity, offset as i64)) })
    }

    /// A load of a value of SPIR-V type `ty`; a struct field by field (MIR
    /// loads scalars and vectors).
    fn load_value(&mut self, ty: u32, ptr: Operand, space: AddrSpace, align: u32, volatile: bool) -> Result<Operand, String> {
        self.facts.mir_type(ty)?; // a type MIR has (and not nested without end)
        if let SpvType::Struct { members, .. } = self.facts.ty(ty)?.clone() {
            let mut fields = Vec::new();
            for (k, m) in members.iter().enumerate() {
                let off = self.facts.member_offset(ty, k)?;
                let p = self.offset_ptr(ptr.clone(), space, off);
                let a = (self.facts.layout(*m)?.1 as u32).min(align.max(1));
                fields.push(self.load_value(*m, p, space, a, volatile)?);
            }
            let mty = self.facts.mir_type(ty)?;
            return Ok(self.value(MOp::Make { ty: mty, elems: fields }));
        }
        let mty = self.facts.mir_type(ty)?;
        Ok(self.value(MOp::Load { ty: mty, ptr, align, volatile }))
    }

    /// An aggregate passed by value, loaded as its `byval_type` (a struct
    /// with arrays spread into fields) from `ptr`.
    fn load_byval(&mut self, ty: u32, ptr: Operand, space: AddrSpace, align: u32) -> Result<Operand, String> {
        if !matches!(self.facts.ty(ty)?, SpvType::Struct { .. }) {
            return self.load_value(ty, ptr, space, align, false);
        }
        let mut fields = Vec::new();
        for (field, off) in self.facts.byval_members(ty)? {
            let p = self.offset_ptr(ptr.clone(), space, off);
            fields.push(match field {
                ByvalField::Member(m) => {
                    let a = (self.facts.layout(m)?.1 as u32).min(align.max(1));
                    self.load_byval(m, p, space, a)?
                }
                ByvalField::Chunk(t) => {
                    let a = t.size().min(align.max(1));
                    self.value(MOp::Load { ty: t, ptr: p, align: a, volatile: false })
                }
            });
        }
        let mty = self.facts.byval_type(ty)?;
        Ok(self.value(MOp::Make { ty: mty, elems: fields }))
    }

    /// The store of an aggregate passed by value (`load_byval`'s inverse).
    fn store_byval(&mut self, ty: u32, value: Operand, ptr: Operand, space: AddrSpace, align: u32) -> Result<(), String> {
        if !matches!(self.facts.ty(ty)?, SpvType::Struct { .. }) {
            return self.store_value(ty, value, ptr, space, align, false);
        }
        for (k, (member, off)) in self.facts.byval_members(ty)?.into_iter().enumerate() {
            let p = self.offset_ptr(ptr.clone(), space, off);
            let field = self.value(MOp::Extract { agg: value.clone(), index: k as u32 });
            match member {
                ByvalField::Member(m) => {
                    let a = (self.facts.layout(m)?.1 as u32).min(align.max(1));
                    self.store_byval(m, field, p, space, a)?;
                }
                ByvalField::Chunk(t) => {
                    let a = t.size().min(align.max(1));
                    self.b.push(MOp::Store { ty: t, value: field, ptr: p, align: a, volatile: false }, None);
                }
            }
        }
        Ok(())
    }

    /// A store of `value` of SPIR-V type `ty`; a struct field by field.
    fn store_value(&mut self, ty: u32, value: Operand, ptr: Operand, space: AddrSpace, align: u32, volatile: bool) -> Result<(), String> {
        self.facts.mir_type(ty)?;
        if let SpvType::Struct { members, .. } = self.facts.ty(ty)?.clone() {
            for (k, m) in members.iter().enumerate() {
                let off = self.facts.member_offset(ty, k)?;
                let p = self.offset_ptr(ptr.clone(), space, off);
                let field = self.value(MOp::Extract { agg: value.clone(), index: k as u32 });
                let a = (self.facts.layout(*m)?.1 as u32).min(align.max(1));
                self.store_value(*m, field, p, space, a, volatile)?;
            }
            return Ok(());
        }
        let mty = self.facts.mir_type(ty)?;
        self.b.push(MOp::Store { ty: mty, value, ptr, align, volatile }, None);
        Ok(())
    }

    /// Adds `idx * stride` to an access chain's (constant, dynamic) offset.
    fn add_index(&mut self, acc: &mut (i64, Option<Operand>), idx: u32, stride: u64, index_ty: &Type) -> Result<(), String> {
        let ity = self.mir_type_of(idx)?;
        if let Some(c) = self.const_int(idx) {
            let signed = crate::mir::interp::ops::sext(c, ity.bits());
            acc.0 = acc.0.wrapping_add(signed.wrapping_mul(stride as i64));
            return Ok(());
        }
        let i = self.operand(idx)?;
        let i = match ity.bits().cmp(&index_ty.bits()) {
            std::cmp::Ordering::Less => self.cast(CastOp::SExt, &ity, i, index_ty),
            std::cmp::Ordering::Greater => self.cast(CastOp::Trunc, &ity, i, index_ty),
            std::cmp::Ordering::Equal => i,
        };
        let scaled = if stride == 1 { i } else { self.bin(BinOp::Mul, index_ty, i, Operand::Const(Const::int(index_ty.clone(), stride as i64))) };
        acc.1 = Some(match acc.1.take() {
            None => scaled,
            Some(d) => self.bin(BinOp::Add, index_ty, d, scaled),
        });
        Ok(())
    }

    fn inst(&mut self, inst: &Inst) -> Result<(), String> {
        let i = &inst.inst;
        let (rid, rty) = (i.result_id, i.result_type);
        let ops = &i.operands;
        let id = |k: usize| id_of(ops.get(k));
        let rt = || rty.ok_or_else(|| "an instruction without a result type".to_string());
        match inst.op() {
            Op::Nop | Op::Line | Op::NoLine | Op::Undef | Op::SelectionMerge | Op::LoopMerge | Op::LifetimeStart | Op::LifetimeStop | Op::Name | Op::Decorate | Op::AssumeTrueKHR => {}
            Op::ExpectKHR | Op::CopyObject => {
                let v = self.operand(id(0)?)?;
                self.def(rid, v);
            }
            // Control flow.
            Op::Branch => {
                let to = id(0)?;
                let args = self.branch_args(self.current_label, to)?;
                let target = self.target(to)?;
                self.b.br(target, args);
            }
            Op::BranchConditional => {
                let (c, t, f) = (self.operand(id(0)?)?, id(1)?, id(2)?);
                let (ta, fa) = (self.branch_args(self.current_label, t)?, self.branch_args(self.current_label, f)?);
                let (tb, fb) = (self.target(t)?, self.target(f)?);
                self.b.brif(c, tb, ta, fb, fa);
            }
            Op::Switch => self.switch(ops)?,
            Op::Return => self.b.ret(None),
            Op::ReturnValue => {
                let v = self.operand(id(0)?)?;
                self.b.ret(Some(v));
            }
            Op::Unreachable => self.b.unreachable(),
            Op::FunctionCall if self.imports.contains_key(&id(0)?) => {
                let name = self.imports[&id(0)?].clone();
                let args: Vec<u32> = (1..ops.len()).map(id).collect::<Result<_, _>>()?;
                if let Some(r) = opencl::imported(self, &name, rt()?, &args)? {
                    self.def(rid, r);
                }
            }
            Op::FunctionCall => {
                let callee = id(0)?;
                let (name, ret) = self.names.get(&callee).cloned().ok_or_else(|| format!("a call to %{callee}, which is not a function of the module"))?;
                let byval = self.byval_params.get(&callee).cloned().unwrap_or_default();
                let mut args = Vec::new();
                for k in 1..ops.len() {
                    let arg = id(k)?;
                    let a = self.operand(arg)?;
                    // An aggregate by value: the callee takes the struct itself.
                    let a = match byval.get(k - 1).copied().flatten() {
                        Some(pointee) => {
                            let space = address_space(self.pointee(arg)?.0)?;
                            let align = self.facts.layout(pointee)?.1 as u32;
                            self.load_byval(pointee, a, space, align)?
                        }
                        None => a,
                    };
                    args.push(a);
                }
                for g in self.lds_uses.get(&callee).cloned().unwrap_or_default() {
                    let p = if g == collectives::AREA { self.collective_area()? } else { self.operand(g)? };
                    args.push(p);
                }
                if let Some(v) = self.b.call(&name, args, ret) {
                    self.def(rid, Operand::Value(v));
                }
            }
            // Memory.
            Op::Variable => {
                let (_, pointee) = match self.facts.ty(rt()?)? {
                    SpvType::Pointer { storage, pointee } => (*storage, *pointee),
                    _ => return Err("a variable whose type is not a pointer".into()),
                };
                let (size, align) = self.facts.layout(pointee)?;
                let align = rid.and_then(|r| self.facts.alignment.get(&r)).map_or(align, |&a| u64::from(a)).max(align);
                let slot = Operand::Value(self.b.stack_slot(size.max(1) as u32, align.max(1) as u32));
                if let Some(init) = ops.get(1).map(|o| id_of(Some(o))).transpose()? {
                    if self.facts.constants.contains_key(&init) {
                        self.store_constant(pointee, init, slot.clone(), 0, align.max(1))?;
                    } else {
                        let value = self.operand(init)?;
                        self.store_value(pointee, value, slot.clone(), AddrSpace::Private, align as u32, false)?;
                    }
                }
                self.def(rid, slot);
            }
            Op::Load => {
                let ptr = id(0)?;
                if let (Some(g), Some(&b)) = (self.facts.globals.get(&ptr), self.facts.builtins.get(&ptr)) {
                    if g.storage != StorageClass::Input {
                        return Err(format!("the builtin {b:?} on a variable in the {:?} storage class (builtins are Input variables)", g.storage));
                    }
                    if let Some(r) = rid {
                        self.vals.insert(r, Val::Builtin(b, rt()?));
                    }
                    return Ok(());
                }
                let ty = rt()?;
                let (align, volatile) = self.access(ptr, ty, &ops[1..])?;
                let p = self.operand(ptr)?;
                let space = address_space(self.pointee(ptr)?.0)?;
                let v = self.load_value(ty, p, space, align, volatile)?;
                self.def(rid, v);
            }
            Op::Store => {
                let (ptr, val) = (id(0)?, id(1)?);
                let ty = self.type_of(val)?;
                let (align, volatile) = self.access(ptr, ty, &ops[2..])?;
                let (p, v) = (self.operand(ptr)?, self.operand(val)?);
                let space = address_space(self.pointee(ptr)?.0)?;
                self.store_value(ty, v, p, space, align, volatile)?;
            }
            Op::AccessChain | Op::InBoundsAccessChain => {
                let idx: Vec<u32> = (1..ops.len()).map(id).collect::<Result<_, _>>()?;
                let p = self.access_chain(id(0)?, None, &idx)?;
                self.def(rid, p);
            }
            Op::PtrAccessChain | Op::InBoundsPtrAccessChain => {
                let idx: Vec<u32> = (2..ops.len()).map(id).collect::<Result<_, _>>()?;
                let p = self.access_chain(id(0)?, Some(id(1)?), &idx)?;
                self.def(rid, p);
            }
            Op::CopyMemory | Op::CopyMemorySized => self.copy_memory(inst.op(), ops)?,
            // Atomics, barriers.
            Op::AtomicLoad => {
                let (ptr, ty) = (id(0)?, rt()?);
                let sync = self.sync(id(1)?, id(2)?)?;
                let mty = self.facts.mir_type(ty)?;
                let p = self.atomic_pointer(ptr)?;
                let v = if mty.is_int() {
                    self.value(MOp::AtomicRmw { op: AtomicOp::Or, ty: mty, ptr: p, value: Operand::Const(Const::int(self.facts.mir_type(ty)?, 0)), sync })
                } else {
                    // A float: an integer `or 0` of its bits.
                    let ity = if mty.bits() == 64 { Type::I64 } else { Type::I32 };
                    let bits = self.value(MOp::AtomicRmw { op: AtomicOp::Or, ty: ity.clone(), ptr: p, value: Operand::Const(Const::int(ity.clone(), 0)), sync });
                    self.cast(CastOp::Bitcast, &ity, bits, &mty)
                };
                self.def(rid, v);
            }
            Op::AtomicStore => {
                let (ptr, val) = (id(0)?, id(3)?);
                let sync = self.sync(id(1)?, id(2)?)?;
                let mty = self.mir_type_of(val)?;
                let (p, v) = (self.atomic_pointer(ptr)?, self.operand(val)?);
                let (ity, v) = if mty.is_int() { (mty.clone(), v) } else {
                    let ity = if mty.bits() == 64 { Type::I64 } else { Type::I32 };
                    let bits = self.cast(CastOp::Bitcast, &mty, v, &ity);
                    (ity, bits)
                };
                self.value(MOp::AtomicRmw { op: AtomicOp::Xchg, ty: ity, ptr: p, value: v, sync });
            }
            Op::AtomicExchange | Op::AtomicIAdd | Op::AtomicISub | Op::AtomicSMin | Op::AtomicUMin | Op::AtomicSMax | Op::AtomicUMax | Op::AtomicAnd | Op::AtomicOr | Op::AtomicXor | Op::AtomicFAddEXT | Op::AtomicFMinEXT | Op::AtomicFMaxEXT => {
                let op = match inst.op() {
                    Op::AtomicExchange => AtomicOp::Xchg,
                    Op::AtomicIAdd => AtomicOp::Add,
                    Op::AtomicISub => AtomicOp::Sub,
                    Op::AtomicSMin => AtomicOp::SMin,
                    Op::AtomicUMin => AtomicOp::UMin,
                    Op::AtomicSMax => AtomicOp::SMax,
                    Op::AtomicUMax => AtomicOp::UMax,
                    Op::AtomicAnd => AtomicOp::And,
                    Op::AtomicOr => AtomicOp::Or,
                    Op::AtomicXor => AtomicOp::Xor,
                    Op::AtomicFAddEXT => AtomicOp::FAdd,
                    Op::AtomicFMinEXT => AtomicOp::FMin,
                    _ => AtomicOp::FMax,
                };
                let sync = self.sync(id(1)?, id(2)?)?;
                let (p, v) = (self.atomic_pointer(id(0)?)?, self.operand(id(3)?)?);
                let r = self.value(MOp::AtomicRmw { op, ty: self.facts.mir_type(rt()?)?, ptr: p, value: v, sync });
                self.def(rid, r);
            }
            Op::AtomicIIncrement | Op::AtomicIDecrement => {
                let op = if inst.op() == Op::AtomicIIncrement { AtomicOp::Add } else { AtomicOp::Sub };
                let sync = self.sync(id(1)?, id(2)?)?;
                let ty = self.facts.mir_type(rt()?)?;
                let p = self.atomic_pointer(id(0)?)?;
                let r = self.value(MOp::AtomicRmw { op, ty: ty.clone(), ptr: p, value: Operand::Const(Const::int(ty, 1)), sync });
                self.def(rid, r);
            }
            Op::AtomicCompareExchange => {
                // (pointer, scope, equal semantics, unequal semantics, value, comparator)
                let sync = self.sync(id(1)?, id(2)?)?;
                let (p, new, expected) = (self.atomic_pointer(id(0)?)?, self.operand(id(4)?)?, self.operand(id(5)?)?);
                let r = self.value(MOp::CmpXchg { ty: self.facts.mir_type(rt()?)?, ptr: p, expected, new, sync });
                self.def(rid, r);
            }
            // OpenCL 2.0's atomic_flag, an int: test-and-set exchanges 1 in
            // and says whether the flag was set; clear stores 0.
            Op::AtomicFlagTestAndSet | Op::AtomicFlagClear => {
                let sync = self.sync(id(1)?, id(2)?)?;
                let p = self.atomic_pointer(id(0)?)?;
                let set = inst.op() == Op::AtomicFlagTestAndSet;
                let value = Operand::Const(Const::int(Type::I32, i64::from(set)));
                let old = self.value(MOp::AtomicRmw { op: AtomicOp::Xchg, ty: Type::I32, ptr: p, value, sync });
                if set {
                    let was_set = self.value(MOp::Icmp { pred: IntPred::Ne, ty: Type::I32, lhs: old, rhs: Operand::Const(Const::int(Type::I32, 0)) });
                    self.def(rid, was_set);
                }
            }
            Op::ControlBarrier => {
                let exec = self.scope(id(0)?)?;
                match exec {
                    MemScope::Workgroup | MemScope::Agent | MemScope::System => self.b.barrier(),
                    // A wave runs in lockstep: only its memory ordering remains.
                    MemScope::Wavefront => {
                        let (scope, order) = (self.scope(id(1)?)?, self.order(id(2)?)?);
                        if order != MemOrder::Relaxed {
                            self.b.push(MOp::Fence { order, scope }, None);
                        }
                    }
                }
            }
            Op::MemoryBarrier => {
                let (scope, order) = (self.scope(id(0)?)?, self.order(id(1)?)?);
                if order != MemOrder::Relaxed {
                    self.b.push(MOp::Fence { order, scope }, None);
                }
            }
            // Composites.
            Op::CompositeExtract => {
                let (comp, idx): (u32, Vec<u32>) = (id(0)?, ops[1..].iter().filter_map(|o| if let O::LiteralBit32(x) = o { Some(*x) } else { None }).collect());
                if let (Some(Val::Builtin(b, _)), [k]) = (self.vals.get(&comp).cloned(), &idx[..]) {
                    let v = builtins::element(self, b, *k, rt()?)?;
                    self.def(rid, v);
                    return Ok(());
                }
                let mut v = self.operand(comp)?;
                for k in idx {
                    v = self.value(MOp::Extract { agg: v, index: k });
                }
                self.def(rid, v);
            }
            Op::CompositeInsert => {
                let (obj, comp) = (self.operand(id(0)?)?, self.operand(id(1)?)?);
                let idx: Vec<u32> = ops[2..].iter().filter_map(|o| if let O::LiteralBit32(x) = o { Some(*x) } else { None }).collect();
                let v = self.insert(comp, obj, &idx);
                self.def(rid, v);
            }
            Op::CompositeConstruct => {
                let ty = self.facts.mir_type(rt()?)?;
                let mut elems = Vec::new();
                for k in 0..ops.len() {
                    let part = id(k)?;
                    let pty = self.mir_type_of(part)?;
                    let p = self.operand(part)?;
                    match (&ty, &pty) {
                        (Type::Vector(..), Type::Vector(_, n)) => {
                            for e in 0..u32::from(*n) {
                                elems.push(self.value(MOp::Extract { agg: p.clone(), index: e }));
                            }
                        }
                        _ => elems.push(p),
                    }
                }
                let v = self.value(MOp::Make { ty, elems });
                self.def(rid, v);
            }
            Op::VectorShuffle => {
                let (a, b) = (id(0)?, id(1)?);
                let na = self.mir_type_of(a)?.lanes();
                let (va, vb) = (self.operand(a)?, self.operand(b)?);
                let ty = self.facts.mir_type(rt()?)?;
                let elem = ty.element().clone();
                let mut elems = Vec::new();
                for o in &ops[2..] {
                    let O::LiteralBit32(k) = o else { return Err("a shuffle component that is not a literal".into()) };
                    elems.push(match *k {
                        u32::MAX => Operand::Const(Const { ty: elem.clone(), bits: 0 }),
                        k if k < na => self.value(MOp::Extract { agg: va.clone(), index: k }),
                        k => self.value(MOp::Extract { agg: vb.clone(), index: k - na }),
                    });
                }
                let v = self.value(MOp::Make { ty, elems });
                self.def(rid, v);
            }
            Op::VectorExtractDynamic => {
                let (vec, idx) = (id(0)?, id(1)?);
                let (vty, ity) = (self.mir_type_of(vec)?, self.mir_type_of(idx)?);
                let (v, i) = (self.operand(vec)?, self.operand(idx)?);
                let elem = vty.element().clone();
                let mut r = self.value(MOp::Extract { agg: v.clone(), index: 0 });
                for k in 1..vty.lanes() {
                    let e = self.value(MOp::Extract { agg: v.clone(), index: k });
                    let c = self.value(MOp::Icmp { pred: IntPred::Eq, ty: ity.clone(), lhs: i.clone(), rhs: Operand::Const(Const::int(ity.clone(), i64::from(k))) });
                    r = self.select(&elem, c, e, r);
                }
                self.def(rid, r);
            }
            Op::VectorInsertDynamic => {
                let (vec, comp, idx) = (id(0)?, id(1)?, id(2)?);
                let (vty, ity) = (self.mir_type_of(vec)?, self.mir_type_of(idx)?);
                let (v, c, i) = (self.operand(vec)?, self.operand(comp)?, self.operand(idx)?);
                let elem = vty.element().clone();
                let mut elems = Vec::new();
                for k in 0..vty.lanes() {
                    let e = self.value(MOp::Extract { agg: v.clone(), index: k });
                    let is = self.value(MOp::Icmp { pred: IntPred::Eq, ty: ity.clone(), lhs: i.clone(), rhs: Operand::Const(Const::int(ity.clone(), i64::from(k))) });
                    elems.push(self.select(&elem, is, c.clone(), e));
                }
                let r = self.value(MOp::Make { ty: vty, elems });
                self.def(rid, r);
            }
            Op::Select => {
                let ty = self.facts.mir_type(rt()?)?;
                let (c, a, b) = (self.operand(id(0)?)?, self.operand(id(1)?)?, self.operand(id(2)?)?);
                let r = self.select(&ty, c, a, b);
                self.def(rid, r);
            }
            op @ (Op::GroupIAdd | Op::GroupFAdd | Op::GroupFMin | Op::GroupUMin | Op::GroupSMin | Op::GroupFMax | Op::GroupUMax | Op::GroupSMax | Op::GroupBroadcast | Op::GroupAny | Op::GroupAll)
                if collectives::is_workgroup_collective(op, self.const_int(id(0)?)) =>
            {
                let r = collectives::translate(self, op, rt()?, ops)?;
                self.def(rid, r);
            }
            Op::GroupIAdd | Op::GroupFAdd | Op::GroupFMin | Op::GroupUMin | Op::GroupSMin | Op::GroupFMax | Op::GroupUMax | Op::GroupSMax => {
                let r = self.group_reduction(inst.op(), rt()?, ops)?;
                self.def(rid, r);
            }
            Op::GroupBroadcast | Op::GroupAny | Op::GroupAll => {
                self.subgroup_scope(id(0)?)?;
                let r = match inst.op() {
                    Op::GroupBroadcast => {
                        let (x, lane) = (self.operand(id(1)?)?, id(2)?);
                        let lt = self.mir_type_of(lane)?;
                        if !lt.is_int() {
                            return Err("OpGroupBroadcast with a vector of local ids (a work-group broadcast) is not supported".into());
                        }
                        let l = self.operand(lane)?;
                        let l = self.resize(&lt, l, &Type::I32, false);
                        self.value(MOp::Wave { op: WaveOp::ReadLane, ty: self.facts.mir_type(rt()?)?, args: vec![x, l] })
                    }
                    op => {
                        let p = self.operand(id(1)?)?;
                        subgroups::vote(self, p, op == Op::GroupAll)
                    }
                };
                self.def(rid, r);
            }
            op @ (Op::ConvertFToU | Op::ConvertFToS | Op::ConvertSToF | Op::ConvertUToF | Op::FConvert | Op::UConvert | Op::SConvert | Op::SatConvertSToU | Op::SatConvertUToS) => {
                let to = self.facts.mir_type(rt()?)?;
                let src = id(0)?;
                let from = self.mir_type_of(src)?;
                let x = self.operand(src)?;
                let (from_signed, to_signed) = match op {
                    Op::ConvertFToS | Op::SConvert | Op::ConvertSToF => (true, true),
                    Op::SatConvertSToU => (true, false),
                    Op::SatConvertUToS => (false, true),
                    _ => (false, false),
                };
                let saturate = self.facts.saturated.contains(&rid.unwrap_or(0)) || matches!(op, Op::SatConvertSToU | Op::SatConvertUToS);
                let round = self.facts.rounding.get(&rid.unwrap_or(0)).copied();
                let r = convert::convert(self, &from, from_signed, x, &to, to_signed, round, saturate)?;
                self.def(rid, r);
            }
            op if subgroups::handles(op) => {
                let r = subgroups::translate(self, op, rt()?, ops)?;
                self.def(rid, r);
            }
            Op::ExtInst => {
                let set = id(0)?;
                if Some(set) != self.facts.opencl_std {
                    return Err("an extended instruction from a set other than OpenCL.std".into());
                }
                let Some(O::LiteralExtInstInteger(n)) = ops.get(1) else { return Err("an OpExtInst without its instruction number".into()) };
                let args: Vec<u32> = (2..ops.len()).map(id).collect::<Result<_, _>>()?;
                let r = opencl::translate(self, *n, rt()?, &args)?;
                if let Some(r) = r {
                    self.def(rid, r);
                }
            }
            op => {
                let r = self.arith(op, rty, ops)?;
                self.def(rid, r);
            }
        }
        Ok(())
    }

    fn subgroup_scope(&self, scope: u32) -> Result<(), String> {
        match self.const_int(scope).and_then(|v| Scope::from_u32(v as u32)) {
            Some(Scope::Subgroup) => Ok(()),
            other => Err(format!("a group operation with scope {other:?}; only subgroup (wave) collectives are supported")),
        }
    }

    /// OpGroup{I,F}Add / {F,U,S}Min / {F,U,S}Max over the subgroup (the wave):
    /// MIR's wave reductions and scans. OpenCL's identity for an exclusive
    /// scan's first lane is +0, -inf, +inf for float add, max, min; MIR's is
    /// -0 or a NaN, so that lane is given OpenCL's.
    fn group_reduction(&mut self, op: Op, rty: u32, ops: &[O]) -> Result<Operand, String> {
        self.subgroup_scope(id_of(ops.first())?)?;
        let Some(O::GroupOperation(g)) = ops.get(1) else { return Err("a group operation without its kind".into()) };
        let ty = self.facts.mir_type(rty)?;
        let bop = subgroups::group_binop(op).ok_or_else(|| format!("{op:?} is not a group reduction"))?;
        let wave = match g {
            rspirv::spirv::GroupOperation::Reduce => WaveOp::Reduce(bop),
            rspirv::spirv::GroupOperation::InclusiveScan => WaveOp::InclusiveScan(bop),
            rspirv::spirv::GroupOperation::ExclusiveScan => WaveOp::ExclusiveScan(bop),
            other => return Err(format!("the group operation {other:?} is not supported")),
        };
        let x = self.operand(id_of(ops.get(2))?)?;
        let exclusive = matches!(wave, WaveOp::ExclusiveScan(_));
        subgroups::narrow_collective(self, bop, exclusive, &ty, x, |fx, ty, x| {
            if !matches!(ty, Type::I32 | Type::I64 | Type::F32 | Type::F64) {
                return Err(format!("subgroup reductions on {ty} are not supported (MIR's are on i32, i64, f32 and f64)"));
            }
            let r = fx.value(MOp::Wave { op: wave, ty: ty.clone(), args: vec![x] });
            if !(exclusive && bop.is_float()) {
                return Ok(r);
            }
            let is_first = subgroups::is_first_lane(fx);
            Ok(fx.select(ty, is_first, subgroups::float_scan_identity(bop, ty), r))
        })
    }

    fn insert(&mut self, agg: Operand, value: Operand, path: &[u32]) -> Operand {
        match path {
            [] => value,
            [k] => self.value(MOp::Insert { agg, value, index: *k }),
            [k, rest @ ..] => {
                let inner = self.value(MOp::Extract { agg: agg.clone(), index: *k });
                let inner = self.insert(inner, value, rest);
                self.value(MOp::Insert { agg, value: inner, index: *k })
            }
        }
    }

    fn switch(&mut self, ops: &[O]) -> Result<(), String> {
        let sel = id_of(ops.first())?;
        let default = id_of(ops.get(1))?;
        let sty = self.mir_type_of(sel)?;
        let s = self.operand(sel)?;
        let mut cases = Vec::new();
        let mut k = 2;
        while k < ops.len() {
            let lit = match ops.get(k) {
                Some(O::LiteralBit32(v)) => u64::from(*v),
                Some(O::LiteralBit64(v)) => *v,
                other => return Err(format!("a switch case literal {other:?}")),
            };
            cases.push((lit, id_of(ops.get(k + 1))?));
            k += 2;
        }
        let from = self.current_label;
        for (lit, to) in cases {
            let args = self.branch_args(from, to)?;
            let target = self.target(to)?;
            let c = self.value(MOp::Icmp { pred: IntPred::Eq, ty: sty.clone(), lhs: s.clone(), rhs: Operand::Const(Const::int(sty.clone(), lit as i64)) });
            self.fresh += 1;
            let next = self.b.create_block(&format!("switch{}", self.fresh));
            self.b.brif(c, target, args, next, Vec::new());
            self.current = next;
            self.b.switch_to(next);
        }
        let args = self.branch_args(from, default)?;
        let target = self.target(default)?;
        self.b.br(target, args);
        Ok(())
    }

    fn copy_memory(&mut self, op: Op, ops: &[O]) -> Result<(), String> {
        let (dst, src) = (id_of(ops.first())?, id_of(ops.get(1))?);
        let (_, pointee) = self.pointee(dst)?;
        let (size, align) = match op {
            Op::CopyMemory => self.facts.layout(pointee)?,
            _ => {
                let n = self.const_int(id_of(ops.get(2))?).ok_or("OpCopyMemorySized with a size that is not a constant")?;
                (n, 1)
            }
        };
        // Memory operands: the destination's alignment first.
        let align = match ops.iter().skip(if op == Op::CopyMemory { 2 } else { 3 }).collect::<Vec<_>>()[..] {
            [O::MemoryAccess(m), O::LiteralBit32(a), ..] if m.contains(MemoryAccess::ALIGNED) => u64::from(*a),
            _ => align,
        };
        let (d, s) = (self.operand(dst)?, self.operand(src)?);
        let (dspace, sspace) = (address_space(self.pointee(dst)?.0)?, address_space(self.pointee(src)?.0)?);
        self.copy_bytes(d, dspace, Some((s, sspace)), size, align)
    }

    /// Copies `size` bytes from `src` to `dst` (or zeroes them with `src`
    /// None), in the widest pieces `align` allows. Every piece is loaded
    /// before the first store, so overlapping ranges copy as memmove does.
    /// The copy is unrolled: more than [`MOST_COPIED_BYTES`] is refused.
    pub fn copy_bytes(&mut self, d: Operand, dspace: AddrSpace, src: Option<(Operand, AddrSpace)>, size: u64, align: u64) -> Result<(), String> {
        if size > MOST_COPIED_BYTES {
            return Err(format!("a memory copy of {size} bytes (copies are unrolled: at most {MOST_COPIED_BYTES} bytes are supported)"));
        }
        let mut pieces = Vec::new();
        let mut offset = 0u64;
        while offset < size {
            let chunk = [8u64, 4, 2, 1].into_iter().find(|&c| c <= align.max(1) && offset + c <= size && offset.is_multiple_of(c)).unwrap_or(1);
            let ty = match chunk {
                8 => Type::I64,
                4 => Type::I32,
                2 => Type::I16,
                _ => Type::I8,
            };
            let v = match &src {
                Some((s, sspace)) => {
                    let sp = self.offset_ptr(s.clone(), *sspace, offset);
                    self.value(MOp::Load { ty: ty.clone(), ptr: sp, align: chunk as u32, volatile: false })
                }
                None => Operand::Const(Const::int(ty.clone(), 0)),
            };
            pieces.push((offset, ty, v, chunk));
            offset += chunk;
        }
        for (offset, ty, v, chunk) in pieces {
            let dp = self.offset_ptr(d.clone(), dspace, offset);
            self.b.push(MOp::Store { ty, value: v, ptr: dp, align: chunk as u32, volatile: false }, None);
        }
        Ok(())
    }

    /// Arithmetic, logic, compares and conversions.
    fn arith(&mut self, op: Op, rty: Option<u32>, ops: &[O]) -> Result<Operand, String> {
        let ty = self.facts.mir_type(rty.ok_or("an instruction without a result type")?)?;
        let a = |fx: &mut Self, k: usize| -> Result<Operand, String> { fx.operand(id_of(ops.get(k))?) };
        let ta = |fx: &Self, k: usize| -> Result<Type, String> { fx.mir_type_of(id_of(ops.get(k))?) };
        let binop = |op: Op| -> Option<BinOp> {
            Some(match op {
                Op::IAdd => BinOp::Add,
                Op::ISub => BinOp::Sub,
                Op::IMul => BinOp::Mul,
                Op::UDiv => BinOp::UDiv,
                Op::SDiv => BinOp::SDiv,
                Op::UMod => BinOp::URem,
                Op::SRem => BinOp::SRem,
                Op::FAdd => BinOp::FAdd,
                Op::FSub => BinOp::FSub,
                Op::FMul => BinOp::FMul,
                Op::FDiv => BinOp::FDiv,
                Op::BitwiseAnd | Op::LogicalAnd => BinOp::And,
                Op::BitwiseOr | Op::LogicalOr => BinOp::Or,
                Op::BitwiseXor | Op::LogicalNotEqual => BinOp::Xor,
                Op::ShiftLeftLogical => BinOp::Shl,
                Op::ShiftRightLogical => BinOp::LShr,
                Op::ShiftRightArithmetic => BinOp::AShr,
                _ => return None,
            })
        };
        if let Some(b) = binop(op) {
            let x = a(self, 0)?;
            let mut y = a(self, 1)?;
            if matches!(op, Op::ShiftLeftLogical | Op::ShiftRightLogical | Op::ShiftRightArithmetic) {
                // The amount may be of another width.
                let yt = ta(self, 1)?;
                y = self.resize(&yt, y, &ty, false);
            }
            return Ok(self.bin(b, &ty, x, y));
        }
        let int_pred = |op: Op| -> Option<IntPred> {
            Some(match op {
                Op::IEqual | Op::LogicalEqual => IntPred::Eq,
                Op::INotEqual => IntPred::Ne,
                Op::UGreaterThan => IntPred::Ugt,
                Op::UGreaterThanEqual => IntPred::Uge,
                Op::ULessThan => IntPred::Ult,
                Op::ULessThanEqual => IntPred::Ule,
                Op::SGreaterThan => IntPred::Sgt,
                Op::SGreaterThanEqual => IntPred::Sge,
                Op::SLessThan => IntPred::Slt,
                Op::SLessThanEqual => IntPred::Sle,
                _ => return None,
            })
        };
        if let Some(p) = int_pred(op) {
            let t = ta(self, 0)?;
            let (x, y) = (a(self, 0)?, a(self, 1)?);
            if op == Op::LogicalEqual {
                let ne = self.bin(BinOp::Xor, &t, x, y);
                let ones = self.splat(&t, 1);
                return Ok(self.bin(BinOp::Xor, &t, ne, ones));
            }
            return Ok(self.value(MOp::Icmp { pred: p, ty: t, lhs: x, rhs: y }));
        }
        let float_pred = |op: Op| -> Option<FloatPred> {
            Some(match op {
                Op::FOrdEqual => FloatPred::Oeq,
                Op::FOrdNotEqual => FloatPred::One,
                Op::FOrdLessThan => FloatPred::Olt,
                Op::FOrdLessThanEqual => FloatPred::Ole,
                Op::FOrdGreaterThan => FloatPred::Ogt,
                Op::FOrdGreaterThanEqual => FloatPred::Oge,
                Op::FUnordEqual => FloatPred::Ueq,
                Op::FUnordNotEqual => FloatPred::Une,
                Op::FUnordLessThan => FloatPred::Ult,
                Op::FUnordLessThanEqual => FloatPred::Ule,
                Op::FUnordGreaterThan => FloatPred::Ugt,
                Op::FUnordGreaterThanEqual => FloatPred::Uge,
                Op::Ordered => FloatPred::Ord,
                Op::Unordered => FloatPred::Uno,
                _ => return None,
            })
        };
        if let Some(p) = float_pred(op) {
            let t = ta(self, 0)?;
            let (x, y) = (a(self, 0)?, a(self, 1)?);
            return Ok(self.value(MOp::Fcmp { pred: p, ty: t, lhs: x, rhs: y }));
        }
        Ok(match op {
            Op::SNegate => {
                let x = a(self, 0)?;
                let zero = self.splat(&ty, 0);
                self.bin(BinOp::Sub, &ty, zero, x)
            }
            Op::FNegate => {
                let x = a(self, 0)?;
                self.un(UnOp::FNeg, &ty, x)
            }
            Op::Not => {
                let x = a(self, 0)?;
                self.un(UnOp::Not, &ty, x)
            }
            Op::LogicalNot => {
                let x = a(self, 0)?;
                let ones = self.splat(&ty, 1);
                self.bin(BinOp::Xor, &ty, x, ones)
            }
            Op::SMod => {
                // The remainder with the divisor's sign.
                let (x, y) = (a(self, 0)?, a(self, 1)?);
                let r = self.bin(BinOp::SRem, &ty, x, y.clone());
                let zero = self.splat(&ty, 0);
                let nonzero = self.value(MOp::Icmp { pred: IntPred::Ne, ty: ty.clone(), lhs: r.clone(), rhs: zero.clone() });
                let signs = self.bin(BinOp::Xor, &ty, r.clone(), y.clone());
                let differ = self.value(MOp::Icmp { pred: IntPred::Slt, ty: ty.clone(), lhs: signs, rhs: zero });
                let cty = bool_like(&ty);
                let fix = self.bin(BinOp::And, &cty, nonzero, differ);
                let adjusted = self.bin(BinOp::Add, &ty, r.clone(), y);
                self.select(&ty, fix, adjusted, r)
            }
            Op::FRem | Op::FMod => {
                // Exact, as OpenCL's fmod (the math library's); OpFMod then
                // takes the divisor's sign (r + y when the signs differ).
                let (x, y) = (a(self, 0)?, a(self, 1)?);
                let r = super::libm::fmod(self, &ty, x, y.clone())?;
                if op == Op::FRem {
                    r
                } else {
                    let zero = self.splat(&ty, 0);
                    let nonzero = self.value(MOp::Fcmp { pred: FloatPred::One, ty: ty.clone(), lhs: r.clone(), rhs: zero.clone() });
                    let rn = self.value(MOp::Fcmp { pred: FloatPred::Olt, ty: ty.clone(), lhs: r.clone(), rhs: zero.clone() });
                    let yn = self.value(MOp::Fcmp { pred: FloatPred::Olt, ty: ty.clone(), lhs: y.clone(), rhs: zero });
                    let cty = bool_like(&ty);
                    let differ = self.bin(BinOp::Xor, &cty, rn, yn);
                    let fix = self.bin(BinOp::And, &cty, nonzero, differ);
                    let adjusted = self.bin(BinOp::FAdd, &ty, r.clone(), y);
                    self.select(&ty, fix, adjusted, r)
                }
            }
            Op::UConvert | Op::SConvert => {
                let from = ta(self, 0)?;
                let x = a(self, 0)?;
                self.resize(&from, x, &ty, op == Op::SConvert)
            }
            Op::FConvert => {
                let from = ta(self, 0)?;
                let x = a(self, 0)?;
                let cop = if from.element().bits() < ty.element().bits() { CastOp::FpExt } else { CastOp::FpTrunc };
                self.cast(cop, &from, x, &ty)
            }
            Op::ConvertFToU | Op::ConvertFToS | Op::ConvertSToF | Op::ConvertUToF | Op::ConvertPtrToU | Op::ConvertUToPtr => {
                let from = ta(self, 0)?;
                let x = a(self, 0)?;
                let cop = match op {
                    Op::ConvertFToU => CastOp::FpToUi,
                    Op::ConvertFToS => CastOp::FpToSi,
                    Op::ConvertSToF => CastOp::SiToFp,
                    Op::ConvertUToF => CastOp::UiToFp,
                    Op::ConvertPtrToU => CastOp::PtrToInt,
                    _ => CastOp::IntToPtr,
                };
                self.value(MOp::Cast { op: cop, from, arg: x, to: ty })
            }
            Op::PtrCastToGeneric | Op::GenericCastToPtr | Op::GenericCastToPtrExplicit => {
                let from = ta(self, 0)?;
                let x = a(self, 0)?;
                let generic = self.cast(CastOp::AddrSpaceCast, &from, x.clone(), &ty);
                if let (Operand::Value(v), Type::Ptr(AddrSpace::Global | AddrSpace::Local), Type::Ptr(AddrSpace::Flat)) = (&generic, &from, &ty) {
                    self.generic_sources.insert(*v, x);
                }
                generic
            }
            Op::Bitcast => {
                let from = ta(self, 0)?;
                let x = a(self, 0)?;
                match (&from, &ty) {
                    (Type::Ptr(f), Type::Ptr(t)) if f == t => x,
                    (Type::Ptr(_), Type::Ptr(_)) => self.cast(CastOp::AddrSpaceCast, &from, x, &ty),
                    (Type::Ptr(_), _) => self.cast(CastOp::PtrToInt, &from, x, &ty),
                    (_, Type::Ptr(_)) => self.cast(CastOp::IntToPtr, &from, x, &ty),
                    _ => self.cast(CastOp::Bitcast, &from, x, &ty),
                }
            }
            Op::IsNan | Op::IsInf | Op::IsFinite | Op::IsNormal | Op::SignBitSet => {
                let t = ta(self, 0)?;
                let x = a(self, 0)?;
                builtins::classify(self, op, &t, x)
            }
            Op::Dot => {
                let t = ta(self, 0)?;
                let (x, y) = (a(self, 0)?, a(self, 1)?);
                self.dot(&t, &x, &y)
            }
            Op::Any | Op::All => {
                let t = ta(self, 0)?;
                let x = a(self, 0)?;
                let mut r = self.value(MOp::Extract { agg: x.clone(), index: 0 });
                for k in 1..t.lanes() {
                    let e = self.value(MOp::Extract { agg: x.clone(), index: k });
                    r = self.bin(if op == Op::Any { BinOp::Or } else { BinOp::And }, &Type::I1, r, e);
                }
                r
            }
            // clang's __builtin_popcount (OpenCL's popcount is OpenCL.std's).
            Op::BitCount => {
                let (x, xt) = (a(self, 0)?, ta(self, 0)?);
                let n = self.un(UnOp::Popcount, &xt, x);
                self.resize(&xt, n, &ty, false)
            }
            // { result, carry or borrow } and { low, high } of the full
            // product, as clang writes LLVM's overflow intrinsics.
            Op::IAddCarry | Op::ISubBorrow | Op::UMulExtended | Op::SMulExtended => {
                let et = ta(self, 0)?;
                let (x, y) = (a(self, 0)?, a(self, 1)?);
                let flag = |fx: &mut Self, lhs: Operand, rhs: Operand| {
                    let c = fx.value(MOp::Icmp { pred: IntPred::Ult, ty: et.clone(), lhs, rhs });
                    let (one, zero) = (fx.splat(&et, 1), fx.splat(&et, 0));
                    fx.select(&et, c, one, zero)
                };
                let (first, second) = match op {
                    Op::IAddCarry => {
                        let sum = self.bin(BinOp::Add, &et, x.clone(), y);
                        let carry = flag(self, sum.clone(), x);
                        (sum, carry)
                    }
                    Op::ISubBorrow => {
                        let diff = self.bin(BinOp::Sub, &et, x.clone(), y.clone());
                        let borrow = flag(self, x, y);
                        (diff, borrow)
                    }
                    _ => {
                        let high = if op == Op::UMulExtended { BinOp::MulHiU } else { BinOp::MulHiS };
                        let lo = self.bin(BinOp::Mul, &et, x.clone(), y.clone());
                        (lo, self.bin(high, &et, x, y))
                    }
                };
                self.value(MOp::Make { ty, elems: vec![first, second] })
            }
            other => return Err(format!("Op{other:?} is not supported")),
        })
    }

    /// The dot product of float vectors (or scalars) of type `t`: products
    /// summed in lane order.
    pub fn dot(&mut self, t: &Type, x: &Operand, y: &Operand) -> Operand {
        let et = t.element().clone();
        if t.lanes() == 1 {
            return self.bin(BinOp::FMul, &et, x.clone(), y.clone());
        }
        let mut sum: Option<Operand> = None;
        for k in 0..t.lanes() {
            let xi = self.value(MOp::Extract { agg: x.clone(), index: k });
            let yi = self.value(MOp::Extract { agg: y.clone(), index: k });
            let p = self.bin(BinOp::FMul, &et, xi, yi);
            sum = Some(match sum {
                None => p,
                Some(s) => self.bin(BinOp::FAdd, &et, s, p),
            });
        }
        sum.expect("a vector has lanes")
    }

    /// An integer of type `from` to the width of `to` (lane for lane).
    pub fn resize(&mut self, from: &Type, x: Operand, to: &Type, signed: bool) -> Operand {
        let (fw, tw) = (from.element().bits(), to.element().bits());
        let target = match from {
            Type::Vector(_, n) => Type::Vector(Box::new(to.element().clone()), *n),
            _ => to.element().clone(),
        };
        match fw.cmp(&tw) {
            std::cmp::Ordering::Equal => x,
            std::cmp::Ordering::Less => self.cast(if signed { CastOp::SExt } else { CastOp::ZExt }, from, x, &target),
            std::cmp::Ordering::Greater => self.cast(CastOp::Trunc, from, x, &target),
        }
    }
}
