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
const CAPABILITIES: [Capability; 21] = [
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
                Op::ConstantSampler | Op::ConstantPipeStorage | Op::SpecConstantOp => {
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

    /// The distance between consecutive elements of type `id` in an array.
    pub fn stride(&self, id: u32) -> Result<u64, String> {
        let (s, a) = self.layout(id)?;
        Ok(s.div_ceil(a) * a)
    }

    pub fn name(&self, id: u32) -> Option<&str> {
        self.names.get(&id).map(String::as_str)
    }
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
