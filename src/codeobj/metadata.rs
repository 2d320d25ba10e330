//! The `NT_AMDGPU_METADATA` note: msgpack (via `rmpv`) in the layout LLVM 22 writes
//! (map keys sorted bytewise, smallest integer encodings, booleans as msgpack
//! booleans, arrays of maps for kernels and arguments).

use amdgpu_abi::AddrSpace;
use rmpv::Value;

use super::{CodeObjectError, CodeObjectVersion};

/// A hidden (implicit) kernel argument (`.value_kind: hidden_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HiddenArg {
    BlockCountX,
    BlockCountY,
    BlockCountZ,
    GroupSizeX,
    GroupSizeY,
    GroupSizeZ,
    RemainderX,
    RemainderY,
    RemainderZ,
    GlobalOffsetX,
    GlobalOffsetY,
    GlobalOffsetZ,
    GridDims,
    PrintfBuffer,
    HostcallBuffer,
    MultigridSyncArg,
    HeapV1,
    DefaultQueue,
    CompletionAction,
    DynamicLdsSize,
    PrivateBase,
    SharedBase,
    QueuePtr,
    None,
}

const HIDDEN_NAMES: [(HiddenArg, &str); 24] = [
    (HiddenArg::BlockCountX, "hidden_block_count_x"),
    (HiddenArg::BlockCountY, "hidden_block_count_y"),
    (HiddenArg::BlockCountZ, "hidden_block_count_z"),
    (HiddenArg::GroupSizeX, "hidden_group_size_x"),
    (HiddenArg::GroupSizeY, "hidden_group_size_y"),
    (HiddenArg::GroupSizeZ, "hidden_group_size_z"),
    (HiddenArg::RemainderX, "hidden_remainder_x"),
    (HiddenArg::RemainderY, "hidden_remainder_y"),
    (HiddenArg::RemainderZ, "hidden_remainder_z"),
    (HiddenArg::GlobalOffsetX, "hidden_global_offset_x"),
    (HiddenArg::GlobalOffsetY, "hidden_global_offset_y"),
    (HiddenArg::GlobalOffsetZ, "hidden_global_offset_z"),
    (HiddenArg::GridDims, "hidden_grid_dims"),
    (HiddenArg::PrintfBuffer, "hidden_printf_buffer"),
    (HiddenArg::HostcallBuffer, "hidden_hostcall_buffer"),
    (HiddenArg::MultigridSyncArg, "hidden_multigrid_sync_arg"),
    (HiddenArg::HeapV1, "hidden_heap_v1"),
    (HiddenArg::DefaultQueue, "hidden_default_queue"),
    (HiddenArg::CompletionAction, "hidden_completion_action"),
    (HiddenArg::DynamicLdsSize, "hidden_dynamic_lds_size"),
    (HiddenArg::PrivateBase, "hidden_private_base"),
    (HiddenArg::SharedBase, "hidden_shared_base"),
    (HiddenArg::QueuePtr, "hidden_queue_ptr"),
    (HiddenArg::None, "hidden_none"),
];

impl HiddenArg {
    pub fn name(self) -> &'static str {
        HIDDEN_NAMES
            .iter()
            .find(|(h, _)| *h == self)
            .map(|(_, n)| *n)
            .unwrap()
    }

    pub fn from_name(name: &str) -> Option<HiddenArg> {
        HIDDEN_NAMES
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(h, _)| *h)
    }
}

/// `.value_kind`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum ValueKind {
    #[default]
    ByValue,
    GlobalBuffer,
    DynamicSharedPointer,
    Sampler,
    Image,
    Pipe,
    Queue,
    Hidden(HiddenArg),
    /// Anything else found when reading.
    Other(String),
}

impl ValueKind {
    pub fn name(&self) -> &str {
        match self {
            ValueKind::ByValue => "by_value",
            ValueKind::GlobalBuffer => "global_buffer",
            ValueKind::DynamicSharedPointer => "dynamic_shared_pointer",
            ValueKind::Sampler => "sampler",
            ValueKind::Image => "image",
            ValueKind::Pipe => "pipe",
            ValueKind::Queue => "queue",
            ValueKind::Hidden(h) => h.name(),
            ValueKind::Other(s) => s,
        }
    }

    pub fn from_name(name: &str) -> ValueKind {
        match name {
            "by_value" => ValueKind::ByValue,
            "global_buffer" => ValueKind::GlobalBuffer,
            "dynamic_shared_pointer" => ValueKind::DynamicSharedPointer,
            "sampler" => ValueKind::Sampler,
            "image" => ValueKind::Image,
            "pipe" => ValueKind::Pipe,
            "queue" => ValueKind::Queue,
            other => HiddenArg::from_name(other)
                .map(ValueKind::Hidden)
                .unwrap_or(ValueKind::Other(other.into())),
        }
    }
}

/// `.access` / `.actual_access`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    ReadOnly,
    WriteOnly,
    ReadWrite,
}

impl Access {
    pub fn name(self) -> &'static str {
        match self {
            Access::ReadOnly => "read_only",
            Access::WriteOnly => "write_only",
            Access::ReadWrite => "read_write",
        }
    }

    pub fn from_name(name: &str) -> Option<Access> {
        match name {
            "read_only" => Some(Access::ReadOnly),
            "write_only" => Some(Access::WriteOnly),
            "read_write" => Some(Access::ReadWrite),
            _ => None,
        }
    }
}

/// The metadata's name of an address space (`generic` for flat).
pub fn addr_space_name(space: AddrSpace) -> &'static str {
    match space {
        AddrSpace::Flat => "generic",
        AddrSpace::Global => "global",
        AddrSpace::Constant => "constant",
        AddrSpace::Local => "local",
        AddrSpace::Private => "private",
    }
}

fn addr_space_from_name(name: &str) -> Option<AddrSpace> {
    AddrSpace::ALL
        .into_iter()
        .find(|a| addr_space_name(*a) == name)
}

/// One entry of `.args`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct KernelArg {
    pub name: Option<String>,
    pub type_name: Option<String>,
    pub offset: u32,
    pub size: u32,
    pub value_kind: ValueKind,
    /// For pointers (`global_buffer`, `dynamic_shared_pointer`).
    pub address_space: Option<AddrSpace>,
    /// The source-level qualifier (`.access`).
    pub access: Option<Access>,
    /// What the kernel actually does (`.actual_access`).
    pub actual_access: Option<Access>,
    pub pointee_align: Option<u32>,
    pub is_const: bool,
    pub is_restrict: bool,
    pub is_volatile: bool,
}

impl KernelArg {
    /// An explicit argument of ABI type `ty` at `offset`: pointers to global or
    /// constant memory are `global_buffer`, pointers to LDS are
    /// `dynamic_shared_pointer` (pointee alignment 1 unless changed), everything
    /// else is `by_value`.
    pub fn new(name: &str, ty: &amdgpu_abi::Type, offset: u32) -> KernelArg {
        use amdgpu_abi::Type;
        let (value_kind, address_space, pointee_align) = match ty {
            Type::Ptr(AddrSpace::Local) => (
                ValueKind::DynamicSharedPointer,
                Some(AddrSpace::Local),
                Some(1),
            ),
            Type::Ptr(space @ (AddrSpace::Global | AddrSpace::Constant | AddrSpace::Flat)) => {
                (ValueKind::GlobalBuffer, Some(*space), None)
            }
            _ => (ValueKind::ByValue, None, None),
        };
        KernelArg {
            name: (!name.is_empty()).then(|| name.to_string()),
            type_name: None,
            offset,
            size: ty.size(),
            value_kind,
            address_space,
            pointee_align,
            ..KernelArg::default()
        }
    }

    /// Lays out explicit arguments in order with their natural alignment.
    pub fn layout(args: &[(&str, amdgpu_abi::Type)]) -> Vec<KernelArg> {
        let mut offset = 0;
        args.iter()
            .map(|(name, ty)| {
                offset = amdgpu_abi::types::align_to(offset, ty.align());
                let arg = KernelArg::new(name, ty, offset);
                offset += ty.size();
                arg
            })
            .collect()
    }

    /// Alignment assumed for the kernarg segment: the size rounded up to a power
    /// of two, at most 16.
    pub fn natural_align(&self) -> u32 {
        self.size.max(1).next_power_of_two().min(16)
    }

    /// A hidden argument of `kind` at `offset`.
    pub fn hidden(kind: HiddenArg, offset: u32, size: u32) -> KernelArg {
        KernelArg {
            offset,
            size,
            value_kind: ValueKind::Hidden(kind),
            ..KernelArg::default()
        }
    }
}

/// The hidden arguments LLVM 22 appends (all of them, as it does without the
/// attributor) and the kernarg segment size they end at. They start at the
/// explicit size rounded up to 8. v5/v6: the 256-byte implicit block; v4: global
/// offsets, hostcall buffer, default queue, completion action, multigrid sync (56 bytes).
pub fn hidden_args(version: CodeObjectVersion, explicit_end: u32) -> (Vec<KernelArg>, u32) {
    // The layout belongs to the ABI crate: take the hidden block of a kernel
    // without explicit arguments and move it to this kernel's explicit end.
    let layout = amdgpu_abi::kernarg::layout(&[], version.number());
    let base = explicit_end.div_ceil(8) * 8;
    let shift = |offset: u32| offset - layout.hidden_offset + base;
    let args = layout
        .hidden_emitted_by_default()
        .into_iter()
        .filter_map(|h| HiddenArg::from_name(h.name).map(|k| KernelArg::hidden(k, shift(h.offset), h.size)))
        .collect();
    (args, shift(layout.size))
}

/// One entry of `amdhsa.kernels`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct KernelMetadata {
    pub name: String,
    pub symbol: String,
    pub args: Vec<KernelArg>,
    pub kernarg_segment_size: u32,
    pub kernarg_segment_align: u32,
    pub group_segment_fixed_size: u32,
    pub private_segment_fixed_size: u32,
    pub wavefront_size: u32,
    pub sgpr_count: u32,
    pub vgpr_count: u32,
    /// Only on AGPR targets (gfx90a, gfx942).
    pub agpr_count: Option<u32>,
    pub sgpr_spill_count: u32,
    pub vgpr_spill_count: u32,
    pub max_flat_workgroup_size: u32,
    /// `.reqd_workgroup_size` (OpenCL's `reqd_work_group_size`).
    pub reqd_workgroup_size: Option<[u32; 3]>,
    /// `.workgroup_size_hint`.
    pub workgroup_size_hint: Option<[u32; 3]>,
    /// Code object v5+ only.
    pub uses_dynamic_stack: Option<bool>,
    /// gfx10+ (written as 1/0 like LLVM).
    pub workgroup_processor_mode: Option<bool>,
    pub language: Option<String>,
    pub language_version: Option<[u32; 2]>,
    pub uniform_work_group_size: Option<bool>,
}

/// The whole note.
#[derive(Clone, Debug, PartialEq)]
pub struct Metadata {
    pub version: [u32; 2],
    pub target: String,
    pub kernels: Vec<KernelMetadata>,
    /// `amdhsa.printf`: the printf formats (`ID:N:SIZE1:...:FORMAT`), absent
    /// when empty.
    pub printf: Vec<String>,
    /// The decoded msgpack as read (for keys this struct does not model); empty
    /// map when built for writing.
    pub raw: Value,
}

/// What the note is written from: a msgpack tree that borrows its strings
/// (building an `rmpv::Value` allocated every key and name of every argument
/// of every kernel: a tenth of a 1,200-function compile).
enum Node<'a> {
    Str(&'a str),
    UInt(u64),
    Bool(bool),
    Array(Vec<Node<'a>>),
    /// Entries sorted by key, as LLVM writes them.
    Map(Vec<(&'static str, Node<'a>)>),
}

impl Node<'_> {
    /// The msgpack encoding (what `rmpv` writes for the same values).
    fn write(&self, out: &mut Vec<u8>) {
        use rmp::encode;
        let done = "writing to a Vec cannot fail";
        match self {
            Node::Str(t) => encode::write_str(out, t).expect(done),
            Node::UInt(n) => {
                encode::write_uint(out, *n).expect(done);
            }
            Node::Bool(b) => encode::write_bool(out, *b).expect(done),
            Node::Array(items) => {
                encode::write_array_len(out, items.len() as u32).expect(done);
                for i in items {
                    i.write(out);
                }
            }
            Node::Map(entries) => {
                encode::write_map_len(out, entries.len() as u32).expect(done);
                for (k, v) in entries {
                    encode::write_str(out, k).expect(done);
                    v.write(out);
                }
            }
        }
    }
}

fn s(text: &str) -> Node<'_> {
    Node::Str(text)
}

fn uint(v: u32) -> Node<'static> {
    Node::UInt(v.into())
}

fn map<'a>(mut entries: Vec<(&'static str, Node<'a>)>) -> Node<'a> {
    entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    Node::Map(entries)
}

fn arg_value(arg: &KernelArg) -> Node<'_> {
    let mut e: Vec<(&'static str, Node)> = vec![
        (".offset", uint(arg.offset)),
        (".size", uint(arg.size)),
        (".value_kind", s(arg.value_kind.name())),
    ];
    if let Some(n) = &arg.name {
        e.push((".name", s(n)));
    }
    if let Some(t) = &arg.type_name {
        e.push((".type_name", s(t)));
    }
    if let Some(a) = arg.address_space {
        e.push((".address_space", s(addr_space_name(a))));
    }
    if let Some(a) = arg.access {
        e.push((".access", s(a.name())));
    }
    if let Some(a) = arg.actual_access {
        e.push((".actual_access", s(a.name())));
    }
    if let Some(p) = arg.pointee_align {
        e.push((".pointee_align", uint(p)));
    }
    if arg.is_const {
        e.push((".is_const", Node::Bool(true)));
    }
    if arg.is_restrict {
        e.push((".is_restrict", Node::Bool(true)));
    }
    if arg.is_volatile {
        e.push((".is_volatile", Node::Bool(true)));
    }
    map(e)
}

fn kernel_value(k: &KernelMetadata) -> Node<'_> {
    let mut e: Vec<(&'static str, Node)> = vec![
        (".name", s(&k.name)),
        (".symbol", s(&k.symbol)),
        (
            ".args",
            Node::Array(k.args.iter().map(arg_value).collect()),
        ),
        (".kernarg_segment_size", uint(k.kernarg_segment_size)),
        (
            ".kernarg_segment_align",
            uint(k.kernarg_segment_align),
        ),
        (
            ".group_segment_fixed_size",
            uint(k.group_segment_fixed_size),
        ),
        (
            ".private_segment_fixed_size",
            uint(k.private_segment_fixed_size),
        ),
        (".wavefront_size", uint(k.wavefront_size)),
        (".sgpr_count", uint(k.sgpr_count)),
        (".vgpr_count", uint(k.vgpr_count)),
        (".sgpr_spill_count", uint(k.sgpr_spill_count)),
        (".vgpr_spill_count", uint(k.vgpr_spill_count)),
        (
            ".max_flat_workgroup_size",
            uint(k.max_flat_workgroup_size),
        ),
    ];
    if let Some(a) = k.agpr_count {
        e.push((".agpr_count", uint(a)));
    }
    for (key, size) in [(".reqd_workgroup_size", k.reqd_workgroup_size), (".workgroup_size_hint", k.workgroup_size_hint)] {
        if let Some(size) = size {
            e.push((key, Node::Array(size.iter().map(|&v| uint(v)).collect())));
        }
    }
    if let Some(d) = k.uses_dynamic_stack {
        e.push((".uses_dynamic_stack", Node::Bool(d)));
    }
    if let Some(w) = k.workgroup_processor_mode {
        e.push((".workgroup_processor_mode", uint(u32::from(w))));
    }
    if let Some(l) = &k.language {
        e.push((".language", s(l)));
    }
    if let Some([a, b]) = k.language_version {
        e.push((
            ".language_version",
            Node::Array(vec![uint(a), uint(b)]),
        ));
    }
    if let Some(u) = k.uniform_work_group_size {
        e.push((".uniform_work_group_size", uint(u32::from(u))));
    }
    map(e)
}

impl Metadata {
    /// The msgpack bytes of the note descriptor (unpadded).
    pub fn to_msgpack(&self) -> Vec<u8> {
        let mut entries = vec![
            (
                "amdhsa.version",
                Node::Array(self.version.iter().map(|v| uint(*v)).collect()),
            ),
            ("amdhsa.target", s(&self.target)),
            (
                "amdhsa.kernels",
                Node::Array(self.kernels.iter().map(kernel_value).collect()),
            ),
        ];
        if !self.printf.is_empty() {
            entries.push(("amdhsa.printf", Node::Array(self.printf.iter().map(|f| s(f)).collect())));
        }
        let root = map(entries);
        let mut out = Vec::new();
        root.write(&mut out);
        out
    }

    /// Decodes the note descriptor. Missing required keys are errors; unknown
    /// keys are kept in `raw` only.
    pub fn from_msgpack(bytes: &[u8]) -> Result<Metadata, CodeObjectError> {
        let mut cursor = bytes;
        let raw = rmpv::decode::read_value(&mut cursor)
            .map_err(|e| CodeObjectError::Metadata(e.to_string()))?;
        let root = Entries::of(&raw, "the root")?;
        let version = root.req("amdhsa.version")?;
        let version = match version.as_array().map(|a| a.as_slice()) {
            Some([a, b]) => [int(a, "amdhsa.version")?, int(b, "amdhsa.version")?],
            _ => {
                return Err(CodeObjectError::Metadata(
                    "amdhsa.version is not a 2-element array".into(),
                ))
            }
        };
        let target = root.string("amdhsa.target")?.unwrap_or_default();
        let mut kernels = Vec::new();
        if let Some(list) = root.get("amdhsa.kernels") {
            let list = list.as_array().ok_or_else(|| {
                CodeObjectError::Metadata("amdhsa.kernels is not an array".into())
            })?;
            for k in list {
                kernels.push(read_kernel(k)?);
            }
        }
        let printf = match root.get("amdhsa.printf") {
            Some(list) => list
                .as_array()
                .and_then(|l| l.iter().map(|v| v.as_str().map(str::to_string)).collect::<Option<Vec<_>>>())
                .ok_or_else(|| CodeObjectError::Metadata("amdhsa.printf is not an array of strings".into()))?,
            None => Vec::new(),
        };
        Ok(Metadata {
            version,
            target,
            kernels,
            printf,
            raw,
        })
    }
}

fn int(v: &Value, key: &str) -> Result<u32, CodeObjectError> {
    // LLVM writes integers; comgr-era tools sometimes wrote strings: accept both.
    v.as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .or_else(|| v.as_str().and_then(|t| t.parse().ok()))
        .ok_or_else(|| {
            CodeObjectError::Metadata(format!("{key} is not an unsigned 32-bit integer: {v}"))
        })
}

fn boolean(v: &Value, key: &str) -> Result<bool, CodeObjectError> {
    match v {
        Value::Boolean(b) => Ok(*b),
        other => match other.as_u64() {
            Some(0) => Ok(false),
            Some(1) => Ok(true),
            _ => Err(CodeObjectError::Metadata(format!(
                "{key} is not a boolean: {v}"
            ))),
        },
    }
}

struct Entries<'a>(&'a [(Value, Value)], &'static str);

impl<'a> Entries<'a> {
    fn of(v: &'a Value, what: &'static str) -> Result<Entries<'a>, CodeObjectError> {
        match v {
            Value::Map(m) => Ok(Entries(m, what)),
            _ => Err(CodeObjectError::Metadata(format!("{what} is not a map"))),
        }
    }
    fn get(&self, key: &str) -> Option<&'a Value> {
        self.0
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(_, v)| v)
    }
    fn req(&self, key: &str) -> Result<&'a Value, CodeObjectError> {
        self.get(key)
            .ok_or_else(|| CodeObjectError::Metadata(format!("{} has no {key}", self.1)))
    }
    fn req_int(&self, key: &str) -> Result<u32, CodeObjectError> {
        int(self.req(key)?, key)
    }
    fn opt_int(&self, key: &str) -> Result<Option<u32>, CodeObjectError> {
        self.get(key).map(|v| int(v, key)).transpose()
    }
    /// An optional array of three integers (a work-group size).
    fn opt_int3(&self, key: &str) -> Result<Option<[u32; 3]>, CodeObjectError> {
        let Some(v) = self.get(key) else { return Ok(None) };
        match v.as_array().map(Vec::as_slice) {
            Some([x, y, z]) => Ok(Some([int(x, key)?, int(y, key)?, int(z, key)?])),
            _ => Err(CodeObjectError::Metadata(format!("{key} is not an array of three integers"))),
        }
    }
    fn opt_bool(&self, key: &str) -> Result<Option<bool>, CodeObjectError> {
        self.get(key).map(|v| boolean(v, key)).transpose()
    }
    fn string(&self, key: &str) -> Result<Option<String>, CodeObjectError> {
        self.get(key)
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| CodeObjectError::Metadata(format!("{key} is not a string")))
            })
            .transpose()
    }
}

fn read_kernel(v: &Value) -> Result<KernelMetadata, CodeObjectError> {
    let e = Entries::of(v, "a kernel")?;
    let mut args = Vec::new();
    if let Some(list) = e.get(".args") {
        for a in list
            .as_array()
            .ok_or_else(|| CodeObjectError::Metadata(".args is not an array".into()))?
        {
            args.push(read_arg(a)?);
        }
    }
    let language_version = match e
        .get(".language_version")
        .and_then(|v| v.as_array())
        .map(|a| a.as_slice())
    {
        Some([a, b]) => Some([int(a, ".language_version")?, int(b, ".language_version")?]),
        _ => None,
    };
    Ok(KernelMetadata {
        name: e
            .string(".name")?
            .ok_or_else(|| CodeObjectError::Metadata("a kernel has no .name".into()))?,
        symbol: e
            .string(".symbol")?
            .ok_or_else(|| CodeObjectError::Metadata("a kernel has no .symbol".into()))?,
        args,
        kernarg_segment_size: e.req_int(".kernarg_segment_size")?,
        kernarg_segment_align: e.req_int(".kernarg_segment_align")?,
        group_segment_fixed_size: e.req_int(".group_segment_fixed_size")?,
        private_segment_fixed_size: e.req_int(".private_segment_fixed_size")?,
        wavefront_size: e.req_int(".wavefront_size")?,
        sgpr_count: e.req_int(".sgpr_count")?,
        vgpr_count: e.req_int(".vgpr_count")?,
        agpr_count: e.opt_int(".agpr_count")?,
        sgpr_spill_count: e.opt_int(".sgpr_spill_count")?.unwrap_or(0),
        vgpr_spill_count: e.opt_int(".vgpr_spill_count")?.unwrap_or(0),
        max_flat_workgroup_size: e.req_int(".max_flat_workgroup_size")?,
        reqd_workgroup_size: e.opt_int3(".reqd_workgroup_size")?,
        workgroup_size_hint: e.opt_int3(".workgroup_size_hint")?,
        uses_dynamic_stack: e.opt_bool(".uses_dynamic_stack")?,
        workgroup_processor_mode: e.opt_bool(".workgroup_processor_mode")?,
        language: e.string(".language")?,
        language_version,
        uniform_work_group_size: e.opt_bool(".uniform_work_group_size")?,
    })
}

fn read_arg(v: &Value) -> Result<KernelArg, CodeObjectError> {
    let e = Entries::of(v, "a kernel argument")?;
    let access = |key: &str| -> Result<Option<Access>, CodeObjectError> {
        e.string(key)?
            .map(|t| {
                Access::from_name(&t).ok_or_else(|| {
                    CodeObjectError::Metadata(format!("{key}: unknown access '{t}'"))
                })
            })
            .transpose()
    };
    Ok(KernelArg {
        name: e.string(".name")?,
        type_name: e.string(".type_name")?,
        offset: e.req_int(".offset")?,
        size: e.req_int(".size")?,
        value_kind: ValueKind::from_name(
            &e.string(".value_kind")?.ok_or_else(|| {
                CodeObjectError::Metadata("an argument has no .value_kind".into())
            })?,
        ),
        address_space: e
            .string(".address_space")?
            .map(|t| {
                addr_space_from_name(&t).ok_or_else(|| {
                    CodeObjectError::Metadata(format!("unknown address space '{t}'"))
                })
            })
            .transpose()?,
        access: access(".access")?,
        actual_access: access(".actual_access")?,
        pointee_align: e.opt_int(".pointee_align")?,
        is_const: e.opt_bool(".is_const")?.unwrap_or(false),
        is_restrict: e.opt_bool(".is_restrict")?.unwrap_or(false),
        is_volatile: e.opt_bool(".is_volatile")?.unwrap_or(false),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_block_matches_llc() {
        // llc-22 --amdhsa-code-object-version=5 on (ptr addrspace(1), i32): block at 16,
        // kernarg size 272, queue_ptr at 216; v4: 16 + 56 = 72.
        let (args, end) = hidden_args(CodeObjectVersion::V5, 12);
        assert_eq!(end, 272);
        assert_eq!(args.last().unwrap().offset, 216);
        assert_eq!(args[9].offset, 56);
        let (args, end) = hidden_args(CodeObjectVersion::V4, 12);
        assert_eq!(end, 72);
        assert_eq!(args[6].offset, 64);
    }

    #[test]
    fn msgpack_round_trip_and_key_order() {
        let md = Metadata {
            version: [1, 2],
            target: "amdgcn-amd-amdhsa--gfx90a".into(),
            printf: Vec::new(),
            kernels: vec![KernelMetadata {
                name: "k".into(),
                symbol: "k.kd".into(),
                args: KernelArg::layout(&[
                    ("out", amdgpu_abi::Type::Ptr(AddrSpace::Global)),
                    ("n", amdgpu_abi::Type::I32),
                ]),
                kernarg_segment_size: 12,
                kernarg_segment_align: 8,
                wavefront_size: 64,
                max_flat_workgroup_size: 256,
                uses_dynamic_stack: Some(false),
                agpr_count: Some(0),
                ..KernelMetadata::default()
            }],
            raw: Value::Nil,
        };
        let bytes = md.to_msgpack();
        // Root: fixmap of 3, first key "amdhsa.kernels" (bytewise smallest).
        assert_eq!(bytes[0], 0x83);
        assert_eq!(&bytes[2..16], b"amdhsa.kernels");
        let back = Metadata::from_msgpack(&bytes).unwrap();
        assert_eq!(back.kernels, md.kernels);
        assert_eq!(back.version, [1, 2]);
    }
}
