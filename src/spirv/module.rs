//! Module-level facts: everything outside function bodies, collected in one
//! walk in module order (SPIR-V declares before it uses, except forward
//! pointers and the function bodies themselves).

use hashbrown::{HashMap, HashSet};

use rspirv::dr::Operand as O;
use rspirv::spirv::{BuiltIn, Capability, Decoration, ExecutionMode, ExecutionModel, FunctionParameterAttribute, Op, StorageClass};

use super::read::Inst;
use super::Error;
use crate::abi::{AddrSpace, Type};
use crate::mir::Const;

/// A SPIR-V type, as declared.
#[derive(Clone, Debug, PartialEq)]
pub enum SpvType {
    Void,
    Bool,
    Int(u32),
    Float(u32),
    Vector { elem: u32, n: u32 },
    Array { elem: u32, len: u64 },
    RuntimeArray { elem: u32 },
    Struct { members: Vec<u32>, packed: bool },
    Pointer { storage: StorageClass, pointee: u32 },
    Function { ret: u32, params: Vec<u32> },
    /// Events, images, samplers, pipes, queues: named for the error.
    Opaque(&'static str),
}

/// A module-level constant.
#[derive(Clone, Debug, PartialEq)]
pub enum Constant {
    Scalar(Const),
    Composite(Vec<u32>),
    /// `OpConstantNull` and `OpUndef` (undefined values read as zero).
    Zero,
    /// The address of module-scope variable `var` plus `offset` bytes: the
    /// variable itself used as a constant, or an `OpSpecConstantOp` access
    /// chain or pointer cast of one (docs/spirv.md, "Module-scope
    /// variables").
    Address { var: u32, offset: i64 },
}

/// A module-level `OpVariable`.
#[derive(Clone, Debug)]
pub struct Global {
    pub storage: StorageClass,
    /// The pointee type.
    pub pointee: u32,
    pub initializer: Option<u32>,
}

/// A function body: instruction indices `start..end` (OpFunction to OpFunctionEnd).
#[derive(Clone, Debug)]
pub struct Body {
    pub id: u32,
    pub start: usize,
    pub end: usize,
}

#[derive(Clone, Debug, Default)]
pub struct Modes {
    pub local_size: Option<[u32; 3]>,
    pub local_size_hint: Option<[u32; 3]>,
}

#[derive(Default)]
pub struct Facts {
    pub names: HashMap<u32, String>,
    pub strings: HashMap<u32, String>,
    pub builtins: HashMap<u32, BuiltIn>,
    pub alignment: HashMap<u32, u32>,
    pub volatile: HashSet<u32>,
    pub byval: HashSet<u32>,
    /// The other `FuncParamAttr` decorations of parameters (NoAlias, NoWrite,
    /// Zext, Sext: the kernel argument descriptions).
    pub param_attrs: HashMap<u32, Vec<FunctionParameterAttribute>>,
    /// `FPRoundingMode` and `SaturatedConversion` of conversions.
    pub rounding: HashMap<u32, rspirv::spirv::FPRoundingMode>,
    pub saturated: HashSet<u32>,
    /// Ids decorated `LinkageAttributes ... Import`: declared here, defined
    /// in another module (`extern`).
    pub imported: HashSet<u32>,
    pub types: HashMap<u32, SpvType>,
    pub constants: HashMap<u32, (u32, Constant)>,
    pub globals: HashMap<u32, Global>,
    /// Entry points: function id and kernel name.
    pub entry_points: Vec<(u32, String)>,
    pub modes: HashMap<u32, Modes>,
    pub bodies: Vec<Body>,
    pub opencl_std: Option<u32>,
    /// Declared result type of every instruction with one (for operand types).
    pub result_types: HashMap<u32, u32>,
}

/// The capabilities the translation handles (Kernel-model OpenCL C).
const CAPABILITIES: [Capability; 25] = [
    Capability::Kernel,
    Capability::Addresses,
    Capability::Linkage,
    Capability::Int8,
    Capability::Int16,
    Capability::Int64,
    Capability::Float16,
    Capability::Float16Buffer,
    Capability::Float64,
    Capability::Int64Atomics,
    Capability::GenericPointer,
    Capability::Vector16,
    Capability::Groups,
    Capability::GroupNonUniform,
    Capability::GroupNonUniformVote,
    Capability::GroupNonUniformArithmetic,
    Capability::GroupNonUniformBallot,
    Capability::GroupNonUniformShuffle,
    Capability::GroupNonUniformShuffleRelative,
    Capability::GroupNonUniformClustered,
    Capability::ExpectAssumeKHR,
    // OpAtomicFAddEXT / FMinEXT / FMaxEXT on f32 and f64 (MIR's float
    // atomics; clang-22 declares these for OpenCL's atomic_fetch_add on
    // atomic_float with SPV_EXT_shader_atomic_float_add).
    Capability::AtomicFloat32AddEXT,
    Capability::AtomicFloat64AddEXT,
    Capability::AtomicFloat32MinMaxEXT,
    Capability::AtomicFloat64MinMaxEXT,
];

fn word(o: &O) -> Option<u32> {
    match o {
        O::IdRef(x) | O::LiteralBit32(x) | O::LiteralExtInstInteger(x) | O::IdScope(x) | O::IdMemorySemantics(x) => Some(*x),
        _ => None,
    }
}

impl Facts {
    pub fn collect(insts: &[Inst]) -> Result<Facts, Error> {
        let mut f = Facts::default();
        match f.collect_into(insts) {
            Ok(()) => Ok(f),
            Err((k, m)) => Err(f.locate(Error::new(m, Some(insts[k].word)), &insts[k])),
        }
    }

    /// The walk; an error is the index of the instruction and the message.
    fn collect_into(&mut self, insts: &[Inst]) -> Result<(), (usize, String)> {
        let f = self;
        let mut i = 0;
        while i < insts.len() {
            let inst = &insts[i];
            let here = i;
            let err = |m: String| Err((here, m));
            let ops = &inst.inst.operands;
            if let (Some(id), Some(ty)) = (inst.inst.result_id, inst.inst.result_type) {
                f.result_types.insert(id, ty);
            }
            match inst.op() {
                Op::Capability => {
                    if let Some(O::Capability(c)) = ops.first() {
                        if !CAPABILITIES.contains(c) {
                            return err(format!("capability {c:?} is not supported (OpenCL C compute kernels need: {})", CAPABILITIES.map(|c| format!("{c:?}")).join(", ")));
                        }
                    }
                }
                Op::Extension => {}
                Op::ExtInstImport => {
                    if let Some(O::LiteralString(name)) = ops.first() {
                        if name == "OpenCL.std" {
                            f.opencl_std = inst.inst.result_id;
                        }
                    }
                }
                Op::MemoryModel if !matches!(ops.first(), Some(O::AddressingModel(rspirv::spirv::AddressingModel::Physical64))) => {
                    return err(format!("addressing model {:?} is not supported (only Physical64: spirv64 targets)", ops.first()));
                }
                Op::EntryPoint => {
                    if let [O::ExecutionModel(model), O::IdRef(func), O::LiteralString(name), ..] = &ops[..] {
                        if *model != ExecutionModel::Kernel {
                            return err(format!("entry point '{name}' uses the {model:?} execution model; only Kernel is supported"));
                        }
                        f.entry_points.push((*func, name.clone()));
                    }
                }
                Op::ExecutionMode => {
                    if let [O::IdRef(func), O::ExecutionMode(mode), rest @ ..] = &ops[..] {
                        let xyz = || -> Option<[u32; 3]> { Some([word(rest.first()?)?, word(rest.get(1)?)?, word(rest.get(2)?)?]) };
                        let m = f.modes.entry(*func).or_default();
                        match mode {
                            ExecutionMode::LocalSize => m.local_size = xyz(),
                            ExecutionMode::LocalSizeHint => m.local_size_hint = xyz(),
                            // Hints and floating-point modes that change nothing here:
                            // contraction is never done, denormals are kept.
                            _ => {}
                        }
                    }
                }
                Op::String => {
                    if let (Some(id), Some(O::LiteralString(s))) = (inst.inst.result_id, ops.first()) {
                        f.strings.insert(id, s.clone());
                    }
                }
                Op::Name => {
                    if let [O::IdRef(id), O::LiteralString(s)] = &ops[..] {
                        f.names.insert(*id, s.clone());
                    }
                }
                Op::Decorate => {
                    if let [O::IdRef(id), O::Decoration(d), rest @ ..] = &ops[..] {
                        match d {
                            Decoration::BuiltIn => {
                                if let Some(O::BuiltIn(b)) = rest.first() {
                                    f.builtins.insert(*id, *b);
                                }
                            }
                            Decoration::Alignment => {
                                if let Some(a) = rest.first().and_then(word) {
                                    f.alignment.insert(*id, a);
                                }
                            }
                            Decoration::Volatile => {
                                f.volatile.insert(*id);
                            }
                            Decoration::FPRoundingMode => {
                                if let Some(O::FPRoundingMode(m)) = rest.first() {
                                    f.rounding.insert(*id, *m);
                                }
                            }
                            Decoration::SaturatedConversion => {
                                f.saturated.insert(*id);
                            }
                            Decoration::LinkageAttributes => {
                                if let Some(O::LinkageType(rspirv::spirv::LinkageType::Import)) = rest.get(1) {
                                    f.imported.insert(*id);
                                }
                            }
                            Decoration::FuncParamAttr => {
                                match rest.first() {
                                    Some(O::FunctionParameterAttribute(FunctionParameterAttribute::ByVal)) => {
                                        f.byval.insert(*id);
                                    }
                                    Some(O::FunctionParameterAttribute(a)) => f.param_attrs.entry(*id).or_default().push(*a),
                                    _ => {}
                                }
                            }
                            _ => {}
                        }
                    }
                }
                Op::TypeVoid => f.add_type(inst, SpvType::Void),
                Op::TypeBool => f.add_type(inst, SpvType::Bool),
                Op::TypeInt => {
                    let w = ops.first().and_then(word).unwrap_or(0);
                    if ![8, 16, 32, 64].contains(&w) {
                        return err(format!("integer type of {w} bits is not supported"));
                    }
                    f.add_type(inst, SpvType::Int(w));
                }
                Op::TypeFloat => {
                    let w = ops.first().and_then(word).unwrap_or(0);
                    if ![16, 32, 64].contains(&w) {
                        return err(format!("float type of {w} bits is not supported"));
                    }
                    f.add_type(inst, SpvType::Float(w));
                }
                Op::TypeVector => {
                    let (elem, n) = (ops.first().and_then(word).unwrap_or(0), ops.get(1).and_then(word).unwrap_or(0));
                    f.add_type(inst, SpvType::Vector { elem, n });
                }
                Op::TypeArray => {
                    let elem = ops.first().and_then(word).unwrap_or(0);
                    let len = match ops.get(1).and_then(word).and_then(|c| f.constants.get(&c)) {
                        Some((_, Constant::Scalar(c))) => c.bits,
                        _ => return err("an array length that is not a constant integer".into()),
                    };
                    f.add_type(inst, SpvType::Array { elem, len });
                }
                Op::TypeRuntimeArray => {
                    let elem = ops.first().and_then(word).unwrap_or(0);
                    f.add_type(inst, SpvType::RuntimeArray { elem });
                }
                Op::TypeStruct => {
                    let members = ops.iter().filter_map(word).collect();
                    f.add_type(inst, SpvType::Struct { members, packed: false });
                }
                Op::TypePointer => {
                    if let [O::StorageClass(storage), O::IdRef(pointee)] = &ops[..] {
                        f.add_type(inst, SpvType::Pointer { storage: *storage, pointee: *pointee });
                    }
                }
                Op::TypeForwardPointer => {}
                Op::TypeFunction => {
                    let ids: Vec<u32> = ops.iter().filter_map(word).collect();
                    if let Some((&ret, params)) = ids.split_first() {
                        f.add_type(inst, SpvType::Function { ret, params: params.to_vec() });
                    }
                }
                Op::TypeEvent => f.add_type(inst, SpvType::Opaque("event")),
                Op::TypeDeviceEvent => f.add_type(inst, SpvType::Opaque("device event")),
                Op::TypeReserveId => f.add_type(inst, SpvType::Opaque("reserve id")),
                Op::TypeQueue => f.add_type(inst, SpvType::Opaque("queue")),
                Op::TypePipe => f.add_type(inst, SpvType::Opaque("pipe")),
                Op::TypeImage => f.add_type(inst, SpvType::Opaque("image")),
                Op::TypeSampler => f.add_type(inst, SpvType::Opaque("sampler")),
                Op::TypeSampledImage => f.add_type(inst, SpvType::Opaque("sampled image")),
                Op::TypeOpaque => f.add_type(inst, SpvType::Opaque("opaque type")),
                Op::Constant | Op::SpecConstant => {
                    let (id, ty) = (inst.inst.result_id.unwrap_or(0), inst.inst.result_type.unwrap_or(0));
                    let mir = match f.mir_type(ty) {
                        Ok(t) => t,
                        Err(m) => return err(m),
                    };
                    let bits = match ops.first() {
                        Some(O::LiteralBit32(b)) => u64::from(*b),
                        Some(O::LiteralBit64(b)) => *b,
                        _ => return err("a constant without a literal value".into()),
                    };
                    let c = match mir {
                        Type::I8 | Type::I16 | Type::I32 | Type::I64 | Type::F16 | Type::F32 | Type::F64 => Const::int(mir, bits as i64),
                        other => return err(format!("a scalar constant of type {other}")),
                    };
                    f.constants.insert(id, (ty, Constant::Scalar(c)));
                }
                Op::ConstantTrue | Op::ConstantFalse | Op::SpecConstantTrue | Op::SpecConstantFalse => {
                    let v = matches!(inst.op(), Op::ConstantTrue | Op::SpecConstantTrue);
                    let (id, ty) = (inst.inst.result_id.unwrap_or(0), inst.inst.result_type.unwrap_or(0));
                    f.constants.insert(id, (ty, Constant::Scalar(Const { ty: Type::I1, bits: u64::from(v) })));
                }
                Op::ConstantComposite | Op::SpecConstantComposite => {
                    let (id, ty) = (inst.inst.result_id.unwrap_or(0), inst.inst.result_type.unwrap_or(0));
                    f.constants.insert(id, (ty, Constant::Composite(ops.iter().filter_map(word).collect())));
                }
                Op::ConstantNull | Op::Undef => {
                    // OpUndef also appears inside functions; it is the same there.
                    let (id, ty) = (inst.inst.result_id.unwrap_or(0), inst.inst.result_type.unwrap_or(0));
                    f.constants.insert(id, (ty, Constant::Zero));
                }
                Op::SpecConstantOp => {
                    let (id, ty) = (inst.inst.result_id.unwrap_or(0), inst.inst.result_type.unwrap_or(0));
                    let Some(O::LiteralSpecConstantOpInteger(op)) = ops.first() else {
                        return err("OpSpecConstantOp without an operation".into());
                    };
                    let args: Vec<u32> = ops[1..].iter().filter_map(word).collect();
                    match f.address_constant(*op, ty, &args) {
                        Ok(c) => {
                            f.constants.insert(id, (ty, c));
                        }
                        Err(m) => return err(m),
                    }
                }
                Op::ConstantSampler | Op::ConstantPipeStorage => {
                    return err(format!("Op{:?} is not supported", inst.op()));
                }
                Op::Variable => {
                    let (id, ty) = (inst.inst.result_id.unwrap_or(0), inst.inst.result_type.unwrap_or(0));
                    let Some(SpvType::Pointer { storage, pointee }) = f.types.get(&ty).cloned() else {
                        return err("a variable whose type is not a pointer".into());
                    };
                    let initializer = ops.get(1).and_then(word);
                    f.globals.insert(id, Global { storage, pointee, initializer });
                }
                Op::Function => {
                    let id = inst.inst.result_id.unwrap_or(0);
                    let start = i;
                    while i < insts.len() && insts[i].op() != Op::FunctionEnd {
                        // Function-local OpUndef are constants too.
                        let local = &insts[i];
                        if local.op() == Op::Undef {
                            f.constants.insert(local.inst.result_id.unwrap_or(0), (local.inst.result_type.unwrap_or(0), Constant::Zero));
                        }
                        if let (Some(id), Some(ty)) = (local.inst.result_id, local.inst.result_type) {
                            f.result_types.insert(id, ty);
                        }
                        i += 1;
                    }
                    if i == insts.len() {
                        return Err((start, "a function without OpFunctionEnd".into()));
                    }
                    f.bodies.push(Body { id, start, end: i });
                }
                _ => {}
            }
            i += 1;
        }
        Ok(())
    }

    fn add_type(&mut self, inst: &Inst, t: SpvType) {
        if let Some(id) = inst.inst.result_id {
            self.types.insert(id, t);
        }
    }

    /// Adds the source line of `inst` to an error.
    pub fn locate(&self, mut e: Error, inst: &Inst) -> Error {
        if let Some((file, line)) = inst.line {
            e.line = Some((self.strings.get(&file).cloned().unwrap_or_else(|| format!("<OpString {file}>")), line));
        }
        e
    }

    /// A constant address (`Constant::Address`): `base` as a variable or
    /// an address constant.
    fn address_of(&self, base: u32) -> Option<(u32, i64)> {
        if self.globals.contains_key(&base) {
            return Some((base, 0));
        }
        match self.constants.get(&base) {
            Some((_, Constant::Address { var, offset })) => Some((*var, *offset)),
            _ => None,
        }
    }

    /// `OpSpecConstantOp` of `op` on `args` giving a `result_type`: pointer
    /// casts and access chains of a module-scope variable's address (the
    /// initializers of program-scope pointers). An access chain follows
    /// SPIR-V's rules (Element in units of the base's pointee, then the
    /// indices through its type) when its indices reach the result's
    /// pointee type. LLVM 22's SPIR-V backend writes LLVM's `getelementptr
    /// i8, @var, N` (clang's form of OpenCL's `&table[2]`) as a chain of the
    /// variable in its own type with Element 0 and N as the one index, typed
    /// as whatever pointer the use wanted: a chain of that shape whose
    /// indices do not reach its result type is read as N bytes, which is
    /// what clang meant (its amdgcn output of the same source agrees).
    fn address_constant(&self, op: rspirv::spirv::Op, result_type: u32, args: &[u32]) -> Result<Constant, String> {
        use rspirv::spirv::Op;
        let base = *args.first().ok_or_else(|| format!("OpSpecConstantOp {op:?} without operands"))?;
        let (var, offset) = self
            .address_of(base)
            .ok_or_else(|| format!("OpSpecConstantOp {op:?} of %{base}, which is not a module-scope variable's address (constant operations on numbers are not supported)"))?;
        let index = |id: u32| -> Result<i64, String> {
            match self.constants.get(&id) {
                Some((_, Constant::Scalar(c))) => Ok(match c.ty {
                    Type::I32 => c.bits as u32 as i32 as i64,
                    _ => c.bits as i64,
                }),
                Some((_, Constant::Zero)) => Ok(0),
                _ => Err(format!("an access chain index %{id} that is not a constant integer")),
            }
        };
        let pointee = |ty: u32| match self.types.get(&ty) {
            Some(SpvType::Pointer { pointee, .. }) => Ok(*pointee),
            _ => Err(format!("OpSpecConstantOp {op:?} on or to a type that is not a pointer")),
        };
        match op {
            Op::Bitcast | Op::GenericCastToPtr | Op::PtrCastToGeneric => Ok(Constant::Address { var, offset }),
            Op::PtrAccessChain | Op::InBoundsPtrAccessChain | Op::AccessChain | Op::InBoundsAccessChain => {
                let at = match (self.globals.get(&base), self.constants.get(&base)) {
                    (Some(g), _) => g.pointee,
                    (None, Some((ty, _))) => pointee(*ty)?,
                    (None, None) => return Err("an access chain base without a type".into()),
                };
                let chain = &args[1..];
                let (element, rest) = if matches!(op, Op::PtrAccessChain | Op::InBoundsPtrAccessChain) {
                    match chain.split_first() {
                        Some((&e, rest)) => (index(e)?, rest),
                        None => return Err("a pointer access chain without Element".into()),
                    }
                } else {
                    (0, chain)
                };
                let offset = offset.checked_add(element.checked_mul(self.stride(at)? as i64).ok_or("an access chain offset overflows")?).ok_or("an access chain offset overflows")?;
                // SPIR-V's reading: the indices walk the base's pointee type,
                // reaching the result's pointee.
                let walk = |mut at: u32| -> Result<(i64, u32), String> {
                    let mut offset = 0i64;
                    for &i in rest {
                        let i = index(i)?;
                        let step = match self.ty(at)?.clone() {
                            SpvType::Array { elem, .. } | SpvType::RuntimeArray { elem } | SpvType::Vector { elem, .. } => {
                                at = elem;
                                i.checked_mul(self.stride(elem)? as i64).ok_or("an access chain offset overflows")?
                            }
                            SpvType::Struct { members, .. } => {
                                let m = usize::try_from(i).ok().filter(|&m| m < members.len()).ok_or("an access chain index past a struct's members")?;
                                let o = self.member_offset(at, m)? as i64;
                                at = members[m];
                                o
                            }
                            t => return Err(format!("an access chain into {t:?}")),
                        };
                        offset = offset.checked_add(step).ok_or("an access chain offset overflows")?;
                    }
                    Ok((offset, at))
                };
                let result_pointee = pointee(result_type)?;
                match walk(at) {
                    Ok((step, reached)) if reached == result_pointee || self.ty(reached) == self.ty(result_pointee) => {
                        Ok(Constant::Address { var, offset: offset.checked_add(step).ok_or("an access chain offset overflows")? })
                    }
                    // LLVM's byte offset: Element 0, then N bytes.
                    _ if element == 0 && rest.len() == 1 => Ok(Constant::Address { var, offset: offset.checked_add(index(rest[0])?).ok_or("an access chain offset overflows")? }),
                    Ok(_) => Err("an access chain whose result type is not the type its indices reach".into()),
                    Err(e) => Err(e),
                }
            }
            other => Err(format!("OpSpecConstantOp {other:?} is not supported (pointer casts and access chains of module-scope variables are)")),
        }
    }

    pub fn ty(&self, id: u32) -> Result<&SpvType, String> {
        self.types.get(&id).ok_or_else(|| format!("%{id} is not a type"))
    }

    /// The MIR type of values of SPIR-V type `id`.
    pub fn mir_type(&self, id: u32) -> Result<Type, String> {
        self.mir_type_at(id, 0)
    }

    fn mir_type_at(&self, id: u32, depth: u32) -> Result<Type, String> {
        if depth > 64 {
            return Err("types nested more than 64 deep".into());
        }
        Ok(match self.ty(id)? {
            SpvType::Bool => Type::I1,
            SpvType::Int(8) => Type::I8,
            SpvType::Int(16) => Type::I16,
            SpvType::Int(32) => Type::I32,
            SpvType::Int(_) => Type::I64,
            SpvType::Float(16) => Type::F16,
            SpvType::Float(32) => Type::F32,
            SpvType::Float(_) => Type::F64,
            SpvType::Vector { elem, n } => {
                if ![2, 3, 4, 8, 16].contains(n) {
                    return Err(format!("vectors of {n} elements are not supported (MIR has 2, 3, 4, 8 and 16)"));
                }
                Type::Vector(Box::new(self.mir_type_at(*elem, depth + 1)?), *n as u8)
            }
            SpvType::Struct { members, .. } => Type::Struct(members.iter().map(|m| self.mir_type_at(*m, depth + 1)).collect::<Result<_, _>>()?),
            SpvType::Pointer { storage, .. } => Type::Ptr(address_space(*storage)?),
            SpvType::Array { .. } | SpvType::RuntimeArray { .. } => return Err("arrays as values (not in memory) are not supported".into()),
            SpvType::Void => return Err("a void value".into()),
            SpvType::Function { .. } => return Err("a function type as a value".into()),
            SpvType::Opaque(what) => return Err(format!("{what} types are not supported")),
        })
    }

    /// Size and alignment in bytes of a value of type `id` in memory (OpenCL
    /// C's layout: natural alignment, 3-element vectors as 4, C structs).
    pub fn layout(&self, id: u32) -> Result<(u64, u64), String> {
        self.layout_at(id, 0)
    }

    /// [`Facts::layout`], refusing sizes beyond 2^31 bytes and types nested
    /// deeper than any real program's (a malformed module can loop).
    fn layout_at(&self, id: u32, depth: u32) -> Result<(u64, u64), String> {
        const LIMIT: u64 = 1 << 31;
        if depth > 64 {
            return Err("types nested more than 64 deep".into());
        }
        let too_big = || format!("a type of more than {LIMIT} bytes");
        let (size, align) = match self.ty(id)? {
            SpvType::Bool => (1, 1),
            SpvType::Int(w) | SpvType::Float(w) => (u64::from(*w / 8), u64::from(*w / 8)),
            SpvType::Vector { elem, n } => {
                let (s, _) = self.layout_at(*elem, depth + 1)?;
                let lanes = if *n == 3 { 4 } else { u64::from(*n) };
                let v = s.checked_mul(lanes).ok_or_else(too_big)?;
                (v, v)
            }
            SpvType::Array { elem, len } => {
                let (s, a) = self.layout_at(*elem, depth + 1)?;
                let a = a.max(1);
                (s.div_ceil(a).checked_mul(a).and_then(|x| x.checked_mul(*len)).ok_or_else(too_big)?, a)
            }
            SpvType::RuntimeArray { elem } => (0, self.layout_at(*elem, depth + 1)?.1),
            SpvType::Struct { members, packed } => {
                let (mut size, mut align) = (0u64, 1u64);
                for m in members {
                    let (s, a) = self.layout_at(*m, depth + 1)?;
                    let a = if *packed { 1 } else { a.max(1) };
                    size = size.div_ceil(a).checked_mul(a).and_then(|x| x.checked_add(s)).ok_or_else(too_big)?;
                    align = align.max(a);
                }
                (size.div_ceil(align) * align, align)
            }
            SpvType::Pointer { storage, .. } => {
                let s = Type::Ptr(address_space(*storage)?).size() as u64;
                (s, s)
            }
            SpvType::Void => (1, 1),
            other => return Err(format!("no memory layout for {other:?}")),
        };
        if size > LIMIT {
            return Err(too_big());
        }
        Ok((size, align.max(1)))
    }

    /// Byte offset of member `index` of struct type `id`.
    pub fn member_offset(&self, id: u32, index: usize) -> Result<u64, String> {
        let SpvType::Struct { members, packed } = self.ty(id)? else { return Err("not a struct".into()) };
        let mut offset = 0u64;
        for (k, m) in members.iter().enumerate() {
            let (s, a) = self.layout(*m)?;
            let a = if *packed { 1 } else { a };
            offset = offset.div_ceil(a) * a;
            if k == index {
                return Ok(offset);
            }
            offset += s;
        }
        Err(format!("member {index} of a struct of {} members", members.len()))
    }

    /// The MIR type an aggregate passed by value (a struct parameter of a
    /// kernel or device function) travels as: its own, with every array
    /// member spread into fields, since MIR has no array values (clang
    /// types a struct's tail padding as an `[N x i8]` member): one field per
    /// element, and for arrays of 8- and 16-bit integers (padding, `char`
    /// strings) naturally aligned chunks of up to 4 bytes, no wider than
    /// the struct's alignment. Each field sits at an offset its own
    /// alignment divides, so the type's C layout is the aggregate's.
    pub fn byval_type(&self, id: u32) -> Result<Type, String> {
        if !matches!(self.ty(id)?, SpvType::Struct { .. }) {
            return self.mir_type(id);
        }
        let fields = self.byval_members(id)?;
        Ok(Type::Struct(
            fields
                .iter()
                .map(|(f, _)| match f {
                    ByvalField::Member(m) => self.byval_type(*m),
                    ByvalField::Chunk(t) => Ok(t.clone()),
                })
                .collect::<Result<_, _>>()?,
        ))
    }

    /// The fields of a struct's [`Facts::byval_type`] with their byte
    /// offsets: members, array elements one by one, and chunks of byte and
    /// short arrays.
    pub fn byval_members(&self, id: u32) -> Result<Vec<(ByvalField, u64)>, String> {
        /// More would be a struct argument no register file holds.
        const MOST_FIELDS: usize = 4096;
        fn spread(facts: &Facts, ty: u32, offset: u64, widest: u64, out: &mut Vec<(ByvalField, u64)>) -> Result<(), String> {
            match facts.ty(ty)? {
                SpvType::Array { elem, len } => {
                    let (elem, len) = (*elem, *len);
                    if out.len() as u64 + len > MOST_FIELDS as u64 {
                        return Err(format!("a by-value aggregate of more than {MOST_FIELDS} fields (arrays counted by element)"));
                    }
                    if let SpvType::Int(bits @ (8 | 16)) = facts.ty(elem)? {
                        let (mut at, end) = (offset, offset + len * u64::from(*bits / 8));
                        while at < end {
                            let size = [4u64, 2, 1].into_iter().find(|&s| s <= widest && at % s == 0 && at + s <= end).unwrap_or(1);
                            out.push((ByvalField::Chunk([Type::I8, Type::I16, Type::I32][size.trailing_zeros() as usize].clone()), at));
                            at += size;
                        }
                        return Ok(());
                    }
                    let stride = facts.stride(elem)?;
                    for k in 0..len {
                        spread(facts, elem, offset + k * stride, widest, out)?;
                    }
                }
                _ => out.push((ByvalField::Member(ty), offset)),
            }
            Ok(())
        }
        let SpvType::Struct { members, .. } = self.ty(id)?.clone() else { return Err("not a struct".into()) };
        let widest = self.layout(id)?.1;
        let mut out = Vec::new();
        for (k, &m) in members.iter().enumerate() {
            spread(self, m, self.member_offset(id, k)?, widest, &mut out)?;
        }
        Ok(out)
    }

    /// The distance between consecutive elements of type `id` in an array.
    pub fn stride(&self, id: u32) -> Result<u64, String> {
        let (s, a) = self.layout(id)?;
        Ok(s.div_ceil(a) * a)
    }

    pub fn name(&self, id: u32) -> Option<&str> {
        self.names.get(&id).map(String::as_str)
    }
}

/// A field of a by-value aggregate as it travels ([`Facts::byval_members`]):
/// a member or array element of SPIR-V type, or a chunk of a byte or
/// short array as a plain integer.
#[derive(Clone, Debug)]
pub enum ByvalField {
    Member(u32),
    Chunk(Type),
}

/// The MIR address space of a storage class.
pub fn address_space(storage: StorageClass) -> Result<AddrSpace, String> {
    Ok(match storage {
        StorageClass::CrossWorkgroup => AddrSpace::Global,
        StorageClass::Workgroup => AddrSpace::Local,
        StorageClass::Function => AddrSpace::Private,
        StorageClass::UniformConstant => AddrSpace::Constant,
        StorageClass::Generic => AddrSpace::Flat,
        other => return Err(format!("pointers to the {other:?} storage class are not supported")),
    })
}
