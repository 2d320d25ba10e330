//! Launch descriptions for `amdgpu-cg run`: the grid, the buffers to allocate in
//! device memory, the kernel arguments (by parameter name) and the buffers to
//! print afterwards. Two equivalent forms, a JSON file and command-line flags,
//! are documented in docs/mir-semantics.md ("Running kernels").

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};

use super::interp::{run_kernel_with, Launch, Memory, Options, RtValue, RunStats};
use super::ir::{FuncKind, Function, Module};
use crate::abi::{AddrSpace, Type};
use crate::mir::float;

/// Largest buffer `run` allocates, in bytes.
pub const MAX_BUFFER_BYTES: usize = 1 << 30;

/// What a buffer holds initially.
#[derive(Clone, Debug, PartialEq)]
pub enum BufferInit {
    /// The elements, as literal text (`1`, `-2.5`, `nan`, `0x3c00`).
    Data(Vec<String>),
    /// `len` copies of one value.
    Fill { value: String, len: usize },
    /// 0, 1, 2, ... (as the element type).
    Iota { len: usize },
}

/// A device buffer: an array of one scalar type.
#[derive(Clone, Debug, PartialEq)]
pub struct BufferSpec {
    pub name: String,
    /// The element type: i8, i16, i32, i64, f16, f32 or f64.
    pub ty: Type,
    pub init: BufferInit,
}

impl BufferSpec {
    /// Number of elements.
    pub fn len(&self) -> usize {
        match &self.init {
            BufferInit::Data(d) => d.len(),
            BufferInit::Fill { len, .. } | BufferInit::Iota { len } => *len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The initial contents, little-endian.
    pub fn bytes(&self) -> Result<Vec<u8>, String> {
        let size = self.ty.size() as usize;
        if self.len().checked_mul(size).is_none_or(|n| n > MAX_BUFFER_BYTES) {
            return Err(format!("buffer '{}' is too large ({} elements; at most {MAX_BUFFER_BYTES} bytes)", self.name, self.len()));
        }
        let mut out = Vec::with_capacity(self.len() * size);
        let mut push = |bits: u64| out.extend_from_slice(&bits.to_le_bytes()[..size]);
        match &self.init {
            BufferInit::Data(items) => {
                for (i, text) in items.iter().enumerate() {
                    push(literal_bits(text, &self.ty).map_err(|e| format!("buffer '{}', element {i}: {e}", self.name))?);
                }
            }
            BufferInit::Fill { value, len } => {
                let bits = literal_bits(value, &self.ty).map_err(|e| format!("buffer '{}': fill value: {e}", self.name))?;
                (0..*len).for_each(|_| push(bits));
            }
            BufferInit::Iota { len } => {
                for i in 0..*len {
                    let bits = if self.ty.is_float() {
                        super::interp::ops::from_f64(&self.ty, i as f64)
                    } else {
                        (i as u64) & super::interp::ops::mask(self.ty.bits())
                    };
                    push(bits);
                }
            }
        }
        Ok(out)
    }
}

/// A kernel argument as written by the user.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgSpec {
    /// A number or word (`256`, `-1`, `2.5`, `nan`, `inf`, `0x7fc00000`, `null`).
    Value(String),
    /// `@name`: the device address of a buffer.
    Buffer(String),
    /// The elements of a vector or the fields of a struct.
    List(Vec<ArgSpec>),
}

/// A complete launch: which kernel, the geometry, buffers, arguments, output.
#[derive(Clone, Debug, PartialEq)]
pub struct LaunchSpec {
    /// The kernel; None = the module's only kernel.
    pub kernel: Option<String>,
    /// Work-items in the grid (not work-groups).
    pub grid: [u32; 3],
    /// Work-group size.
    pub block: [u32; 3],
    pub buffers: Vec<BufferSpec>,
    /// Arguments by kernel parameter name (without '%').
    pub args: Vec<(String, ArgSpec)>,
    /// Buffers to print after the run; empty = all, in declaration order.
    pub print: Vec<String>,
    /// Instruction budget (None = the interpreter's default).
    pub max_instructions: Option<u64>,
    /// LDS bytes per work-group the launch adds for `dynamic_lds` (JSON key
    /// `"dynamic_lds"`; 0 by default).
    pub dynamic_lds: u32,
    /// Lanes per wave for the interpreter's wave operations (JSON key
    /// `"wave_size"`, 32 or 64; 64 by default). The simulator takes the code
    /// object's.
    pub wave_size: u32,
    /// The global offset (JSON key `"offset"`, flag `--offset`; 0 by default):
    /// what `global_offset` reads, in the code object's hidden arguments.
    pub offset: [u32; 3],
    /// The dimensions the launch is enqueued with (JSON key `"work_dim"`; by
    /// default the highest one with more than one work-item).
    pub work_dim: Option<u32>,
    /// The buffer the launch gives kernels as their printf buffer (JSON key
    /// `"printf_buffer": "@name"`): the hidden printf-buffer argument and what
    /// `printf_buffer` reads. Its first two dwords are the runtime's header
    /// (bytes used after the header, the buffer's size); docs/mir.md "Printf".
    pub printf_buffer: Option<String>,
}

/// A JSON object with its keys in document order (serde_json's own map sorts).
struct Ordered(Vec<(String, serde_json::Value)>);

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Ordered, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Ordered;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
                let mut entries: Vec<(String, serde_json::Value)> = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, serde_json::Value>()? {
                    if entries.iter().any(|(e, _)| *e == k) {
                        return Err(serde::de::Error::custom(format!("duplicate key '{k}'")));
                    }
                    entries.push((k, v));
                }
                Ok(Ordered(entries))
            }
        }
        d.deserialize_map(V)
    }
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonSpec {
    #[serde(default)]
    kernel: Option<String>,
    grid: serde_json::Value,
    block: serde_json::Value,
    #[serde(default)]
    buffers: Option<Ordered>,
    #[serde(default)]
    args: Option<Ordered>,
    #[serde(default)]
    print: Option<Vec<String>>,
    #[serde(default)]
    max_instructions: Option<u64>,
    #[serde(default)]
    dynamic_lds: u32,
    #[serde(default)]
    wave_size: Option<u32>,
    #[serde(default)]
    offset: Option<serde_json::Value>,
    #[serde(default)]
    work_dim: Option<u32>,
    #[serde(default)]
    printf_buffer: Option<String>,
}

fn json_text(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

/// An offset: one number (x) or a list of up to three, the rest 0.
fn json_offset(v: &serde_json::Value) -> Result<[u32; 3], String> {
    let items: Vec<serde_json::Value> = match v {
        serde_json::Value::Array(a) => a.clone(),
        other => vec![other.clone()],
    };
    if items.is_empty() || items.len() > 3 {
        return Err(format!("\"offset\": expected a number or a list of 1 to 3 numbers, found {v}"));
    }
    let mut out = [0u32; 3];
    for (k, item) in items.iter().enumerate() {
        out[k] = item.as_u64().and_then(|n| u32::try_from(n).ok()).ok_or_else(|| format!("\"offset\": {item} is not a number from 0 to 2^32-1"))?;
    }
    Ok(out)
}

fn json_dims(v: &serde_json::Value, what: &str) -> Result<[u32; 3], String> {
    let one = |x: &serde_json::Value| -> Result<u32, String> {
        x.as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| format!("'{what}': expected a non-negative 32-bit integer, found {x}"))
    };
    match v {
        serde_json::Value::Array(items) => {
            if items.is_empty() || items.len() > 3 {
                return Err(format!("'{what}' needs 1 to 3 sizes, found {}", items.len()));
            }
            let mut out = [1; 3];
            for (i, x) in items.iter().enumerate() {
                out[i] = one(x)?;
            }
            Ok(out)
        }
        x => Ok([one(x)?, 1, 1]),
    }
}

fn json_arg(v: &serde_json::Value) -> Result<ArgSpec, String> {
    match v {
        serde_json::Value::String(s) if s.starts_with('@') => Ok(ArgSpec::Buffer(s[1..].to_string())),
        serde_json::Value::Array(items) => items.iter().map(json_arg).collect::<Result<Vec<_>, _>>().map(ArgSpec::List),
        other => json_text(other).map(ArgSpec::Value).ok_or_else(|| format!("expected a number, a string or an array, found {other}")),
    }
}

fn buffer_type(text: &str) -> Result<Type, String> {
    let ty: Type = text.trim().parse().map_err(|_| format!("unknown buffer element type '{text}'"))?;
    if !(ty.is_float() || (ty.is_int() && ty != Type::I1)) {
        return Err(format!("buffer elements must be i8, i16, i32, i64, f16, f32 or f64, not {ty}"));
    }
    Ok(ty)
}

fn parse_len(text: &str, what: &str) -> Result<usize, String> {
    text.trim().parse::<usize>().map_err(|_| format!("{what}: expected a length, found '{text}'"))
}

fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.') {
        return Err(format!("invalid buffer name '{name}' (letters, digits, '_' and '.')"));
    }
    Ok(())
}

impl LaunchSpec {
    /// Reads the JSON form, e.g.
    /// `{"kernel":"saxpy","grid":[256,1,1],"block":64,"buffers":{"x":{"type":"f32","data":[1,2]}},"args":{"x":"@x"},"print":["x"]}`.
    pub fn from_json(text: &str) -> Result<LaunchSpec, String> {
        let spec: JsonSpec = serde_json::from_str(text).map_err(|e| format!("launch JSON: {e}"))?;
        let mut buffers = Vec::new();
        for (name, desc) in spec.buffers.map(|o| o.0).unwrap_or_default() {
            check_name(&name)?;
            let serde_json::Value::Object(fields) = &desc else {
                return Err(format!("buffer '{name}': expected an object like {{\"type\":\"f32\",\"len\":16}}"));
            };
            for key in fields.keys() {
                if !matches!(key.as_str(), "type" | "data" | "len" | "fill" | "iota") {
                    return Err(format!("buffer '{name}': unknown field '{key}' (expected type, data, len, fill or iota)"));
                }
            }
            let ty = match fields.get("type") {
                Some(serde_json::Value::String(t)) => buffer_type(t).map_err(|e| format!("buffer '{name}': {e}"))?,
                _ => return Err(format!("buffer '{name}': missing \"type\" (e.g. \"f32\")")),
            };
            let len = match fields.get("len") {
                None => None,
                Some(v) => Some(
                    v.as_u64()
                        .and_then(|n| usize::try_from(n).ok())
                        .ok_or_else(|| format!("buffer '{name}': \"len\" must be a non-negative integer"))?,
                ),
            };
            let iota = match fields.get("iota") {
                None | Some(serde_json::Value::Bool(false)) => false,
                Some(serde_json::Value::Bool(true)) => true,
                Some(_) => return Err(format!("buffer '{name}': \"iota\" must be true or false")),
            };
            let init = match (fields.get("data"), fields.get("fill"), iota) {
                (Some(serde_json::Value::Array(items)), None, false) => {
                    let data = items
                        .iter()
                        .map(|v| json_text(v).ok_or_else(|| format!("buffer '{name}': data elements must be numbers or strings, found {v}")))
                        .collect::<Result<Vec<_>, _>>()?;
                    if let Some(len) = len {
                        if len != data.len() {
                            return Err(format!("buffer '{name}': \"len\" is {len} but \"data\" has {} elements", data.len()));
                        }
                    }
                    BufferInit::Data(data)
                }
                (Some(_), None, false) => return Err(format!("buffer '{name}': \"data\" must be an array")),
                (None, Some(value), false) => {
                    let value = json_text(value).ok_or_else(|| format!("buffer '{name}': \"fill\" must be a number or a string"))?;
                    let len = len.ok_or_else(|| format!("buffer '{name}': \"fill\" needs \"len\""))?;
                    BufferInit::Fill { value, len }
                }
                (None, None, true) => BufferInit::Iota { len: len.ok_or_else(|| format!("buffer '{name}': \"iota\" needs \"len\""))? },
                (None, None, false) => match len {
                    Some(len) => BufferInit::Fill { value: "0".to_string(), len },
                    None => return Err(format!("buffer '{name}': give \"data\", or \"len\" (with \"fill\" or \"iota\", or zeros)")),
                },
                _ => return Err(format!("buffer '{name}': \"data\", \"fill\" and \"iota\" exclude each other")),
            };
            buffers.push(BufferSpec { name, ty, init });
        }
        let mut args = Vec::new();
        for (name, value) in spec.args.map(|o| o.0).unwrap_or_default() {
            let arg = json_arg(&value).map_err(|e| format!("argument '{name}': {e}"))?;
            args.push((name.trim_start_matches('%').to_string(), arg));
        }
        let out = LaunchSpec {
            kernel: spec.kernel.map(|k| k.trim_start_matches('@').to_string()),
            grid: json_dims(&spec.grid, "grid")?,
            block: json_dims(&spec.block, "block")?,
            buffers,
            args,
            print: spec.print.unwrap_or_default(),
            max_instructions: spec.max_instructions,
            dynamic_lds: spec.dynamic_lds,
            wave_size: spec.wave_size.unwrap_or(64),
            offset: match &spec.offset {
                Some(v) => json_offset(v)?,
                None => [0; 3],
            },
            work_dim: spec.work_dim,
            printf_buffer: match spec.printf_buffer {
                Some(b) => Some(b.strip_prefix('@').map(str::to_string).ok_or_else(|| format!("\"printf_buffer\": expected a buffer like \"@name\", not '{b}'"))?),
                None => None,
            },
        };
        out.check()?;
        Ok(out)
    }

    /// Reads the flag form: `--grid 256 --block 64 --buffer x=f32:1,2,3
    /// --buffer y=f32:fill:1.5:256 --buffer z=i32:iota:256 --arg n=256 --arg x=@x
    /// --print y` (each slice holds the values of one repeated flag).
    pub fn from_flags(grid: &str, block: &str, buffers: &[String], args: &[String], print: &[String]) -> Result<LaunchSpec, String> {
        let mut out = LaunchSpec {
            kernel: None,
            grid: flag_dims(grid, "--grid")?,
            block: flag_dims(block, "--block")?,
            buffers: Vec::new(),
            args: Vec::new(),
            print: Vec::new(),
            max_instructions: None,
            dynamic_lds: 0,
            wave_size: 64,
            offset: [0; 3],
            work_dim: None,
            printf_buffer: None,
        };
        for b in buffers {
            let (name, rest) = b.split_once('=').ok_or_else(|| format!("--buffer '{b}': expected NAME=TYPE:CONTENTS"))?;
            let name = name.trim();
            check_name(name)?;
            let (ty, contents) = rest.split_once(':').ok_or_else(|| format!("--buffer '{b}': expected NAME=TYPE:CONTENTS"))?;
            let ty = buffer_type(ty).map_err(|e| format!("--buffer '{b}': {e}"))?;
            let parts: Vec<&str> = contents.split(':').collect();
            let what = format!("--buffer '{b}'");
            let init = match parts.as_slice() {
                ["fill", value, len] => BufferInit::Fill { value: value.trim().to_string(), len: parse_len(len, &what)? },
                ["iota", len] => BufferInit::Iota { len: parse_len(len, &what)? },
                ["zero", len] => BufferInit::Fill { value: "0".to_string(), len: parse_len(len, &what)? },
                [data] if data.trim().is_empty() => BufferInit::Data(Vec::new()),
                [data] => BufferInit::Data(data.split(',').map(|s| s.trim().to_string()).collect()),
                _ => return Err(format!("{what}: expected TYPE:v1,v2,..., TYPE:fill:VALUE:LEN, TYPE:iota:LEN or TYPE:zero:LEN")),
            };
            out.buffers.push(BufferSpec { name: name.to_string(), ty, init });
        }
        for a in args {
            let (name, value) = a.split_once('=').ok_or_else(|| format!("--arg '{a}': expected NAME=VALUE"))?;
            let value = value.trim();
            let spec = if value.starts_with('[') {
                let json: serde_json::Value = serde_json::from_str(value).map_err(|e| format!("--arg '{a}': {e}"))?;
                json_arg(&json).map_err(|e| format!("--arg '{a}': {e}"))?
            } else if value.contains(',') {
                ArgSpec::List(value.split(',').map(|s| flag_arg(s.trim())).collect())
            } else {
                flag_arg(value)
            };
            out.args.push((name.trim().trim_start_matches('%').to_string(), spec));
        }
        for p in print {
            out.print.extend(p.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()));
        }
        out.check()?;
        Ok(out)
    }

    /// Consistency checks that need no module: unique names, known buffers.
    /// Sets the launch's global offset (`--offset X[,Y[,Z]]`, the rest 0) or its
    /// dimension count (`--work-dim N`) from a flag.
    pub fn set_flag(&mut self, flag: &str, value: &str) -> Result<(), String> {
        match flag {
            "--offset" => {
                let parts: Vec<&str> = value.split(',').map(str::trim).collect();
                if parts.len() > 3 {
                    return Err(format!("--offset '{value}': expected 1 to 3 numbers like 16 or 16,4"));
                }
                let mut offset = [0; 3];
                for (k, p) in parts.iter().enumerate() {
                    offset[k] = p.parse().map_err(|_| format!("--offset '{value}': '{p}' is not a number from 0 to 2^32-1"))?;
                }
                self.offset = offset;
            }
            "--work-dim" => self.work_dim = Some(value.trim().parse().map_err(|_| format!("--work-dim '{value}': not a number"))?),
            other => return Err(format!("unknown launch flag {other}")),
        }
        self.check()
    }

    /// The interpreter's launch: geometry, global offset and dimension count.
    pub fn launch(&self) -> Launch {
        let mut l = Launch::new(self.grid, self.block);
        l.offset = self.offset;
        l.work_dim = self.work_dim.unwrap_or(l.work_dim);
        l
    }

    fn check(&self) -> Result<(), String> {
        if !matches!(self.wave_size, 32 | 64) {
            return Err(format!("the wave size is 32 or 64, not {}", self.wave_size));
        }
        if let Some(d) = self.work_dim {
            if !(1..=3).contains(&d) {
                return Err(format!("\"work_dim\" is 1, 2 or 3, not {d}"));
            }
        }
        for (i, b) in self.buffers.iter().enumerate() {
            if self.buffers[..i].iter().any(|o| o.name == b.name) {
                return Err(format!("buffer '{}' is defined more than once", b.name));
            }
        }
        for (i, (name, arg)) in self.args.iter().enumerate() {
            if self.args[..i].iter().any(|(o, _)| o == name) {
                return Err(format!("argument '{name}' is given more than once"));
            }
            self.check_arg_buffers(name, arg)?;
        }
        if let Some(b) = &self.printf_buffer {
            self.check_arg_buffers("printf_buffer", &ArgSpec::Buffer(b.clone()))?;
        }
        for p in &self.print {
            if !self.buffers.iter().any(|b| &b.name == p) {
                return Err(format!("cannot print '{p}': there is no buffer with that name"));
            }
        }
        Ok(())
    }

    fn check_arg_buffers(&self, name: &str, arg: &ArgSpec) -> Result<(), String> {
        match arg {
            ArgSpec::Buffer(b) if !self.buffers.iter().any(|x| &x.name == b) => {
                Err(format!("argument '{name}' refers to '@{b}', but there is no buffer with that name"))
            }
            ArgSpec::List(items) => items.iter().try_for_each(|a| self.check_arg_buffers(name, a)),
            _ => Ok(()),
        }
    }
}

/// The LDS bytes a `lds:N` argument asks for (the value of a local pointer
/// argument: the launch allocates N bytes per work-group for it, as OpenCL's
/// `clSetKernelArg(k, i, N, NULL)` does); None for other arguments.
pub fn local_bytes(arg: &ArgSpec) -> Option<Result<u32, String>> {
    let ArgSpec::Value(v) = arg else { return None };
    let n = v.trim().strip_prefix("lds:")?;
    Some(n.trim().parse::<u32>().ok().filter(|n| *n > 0).ok_or_else(|| format!("'{v}': expected lds:BYTES with BYTES from 1 to 65536")))
}

fn flag_arg(value: &str) -> ArgSpec {
    match value.strip_prefix('@') {
        Some(b) => ArgSpec::Buffer(b.to_string()),
        None => ArgSpec::Value(value.to_string()),
    }
}

fn flag_dims(text: &str, what: &str) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = text.split([',', 'x']).map(str::trim).collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("{what} '{text}': expected 1 to 3 sizes like 256 or 16,16 or 16x16"));
    }
    let mut out = [1; 3];
    for (i, p) in parts.iter().enumerate() {
        out[i] = p.parse().map_err(|_| format!("{what} '{text}': '{p}' is not a size"))?;
    }
    Ok(out)
}

/// The bit pattern of a literal read as a scalar of type `ty`. A `TYPE:`
/// prefix (`i32:7`, the simulator's form for struct fields) must name `ty`.
pub fn literal_bits(text: &str, ty: &Type) -> Result<u64, String> {
    let mut text = text.trim();
    if let Some((prefix, rest)) = text.split_once(':') {
        if prefix == ty.to_string() {
            text = rest.trim();
        } else if prefix.parse::<Type>().is_ok() {
            return Err(format!("'{text}' is a {prefix}, but a {ty} goes here"));
        }
    }
    if ty.is_float() {
        let lower = text.to_ascii_lowercase();
        if let Some(hex) = lower.strip_prefix("0x") {
            let bits = u64::from_str_radix(hex, 16).map_err(|_| format!("invalid bit pattern '{text}'"))?;
            if ty.bits() < 64 && bits >> ty.bits() != 0 {
                return Err(format!("bit pattern '{text}' is wider than {ty}"));
            }
            return Ok(bits);
        }
        let special = match lower.as_str() {
            "nan" => Some(f64::NAN),
            "inf" | "+inf" | "infinity" => Some(f64::INFINITY),
            "-inf" | "-infinity" => Some(f64::NEG_INFINITY),
            _ => None,
        };
        if let Some(v) = special {
            return Ok(if v.is_nan() { super::interp::ops::canonical_nan(ty) } else { super::interp::ops::from_f64(ty, v) });
        }
        if !text.chars().all(|c| c.is_ascii_digit() || "+-.eE".contains(c)) || text.is_empty() {
            return Err(format!("'{text}' is not a {ty} number"));
        }
        return match ty {
            // Decimal text is rounded once, directly to the type (f16 via f64).
            Type::F32 => text.parse::<f32>().map(|v| u64::from(v.to_bits())).map_err(|_| format!("'{text}' is not an f32 number")),
            Type::F64 => text.parse::<f64>().map(f64::to_bits).map_err(|_| format!("'{text}' is not an f64 number")),
            _ => text.parse::<f64>().map(|v| u64::from(float::f64_to_f16(v))).map_err(|_| format!("'{text}' is not an f16 number")),
        };
    }
    if ty.is_int() {
        let bits = ty.bits();
        let (negative, digits) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text.strip_prefix('+').unwrap_or(text)),
        };
        let magnitude = match digits.to_ascii_lowercase().strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16).ok(),
            None => digits.parse::<u64>().ok(),
        }
        .ok_or_else(|| format!("'{text}' is not an integer"))?;
        let max_unsigned = super::interp::ops::mask(bits);
        let max_negative = 1u64 << (bits - 1);
        if (negative && magnitude > max_negative) || (!negative && magnitude > max_unsigned) {
            return Err(format!("{text} does not fit in {ty}"));
        }
        let value = if negative { magnitude.wrapping_neg() } else { magnitude };
        return Ok(value & max_unsigned);
    }
    Err(format!("cannot write a literal of type {ty}"))
}

/// One buffer after the run.
#[derive(Clone, Debug, PartialEq)]
pub struct BufferOutput {
    pub name: String,
    pub ty: Type,
    /// Device address of element 0.
    pub address: u64,
    /// Final contents, little-endian.
    pub bytes: Vec<u8>,
}

impl BufferOutput {
    /// The elements' bit patterns.
    pub fn bits(&self) -> Vec<u64> {
        let size = self.ty.size() as usize;
        self.bytes
            .chunks_exact(size)
            .map(|c| {
                let mut b = [0u8; 8];
                b[..size].copy_from_slice(c);
                u64::from_le_bytes(b)
            })
            .collect()
    }

    /// The elements as text (integers signed, floats shortest round-trip).
    pub fn elements(&self) -> Vec<String> {
        self.bits().into_iter().map(|b| format_element(&self.ty, b)).collect()
    }
}

/// Shortest text that reads back as the same value of `ty` (integers signed).
pub fn format_element(ty: &Type, bits: u64) -> String {
    match ty {
        Type::F32 => format!("{:?}", f32::from_bits(bits as u32)),
        Type::F64 => format!("{:?}", f64::from_bits(bits)),
        Type::F16 => {
            let v = float::f16_to_f64(bits as u16);
            if !v.is_finite() {
                return format!("{:?}", v as f32);
            }
            for digits in 0..17 {
                let text = format!("{v:.digits$e}");
                if let Ok(back) = text.parse::<f64>() {
                    if float::f64_to_f16(back) == bits as u16 {
                        return format!("{back:?}");
                    }
                }
            }
            format!("{v:?}")
        }
        ty => super::interp::ops::sext(bits, ty.bits()).to_string(),
    }
}

/// The result of [`run`].
#[derive(Clone, Debug, PartialEq)]
pub struct RunOutput {
    pub kernel: String,
    /// Every buffer, in declaration order.
    pub buffers: Vec<BufferOutput>,
    /// Names of the buffers `Display` prints.
    pub print: Vec<String>,
    pub stats: RunStats,
}

impl RunOutput {
    pub fn buffer(&self, name: &str) -> Option<&BufferOutput> {
        self.buffers.iter().find(|b| b.name == name)
    }
}

impl fmt::Display for RunOutput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for name in &self.print {
            if let Some(b) = self.buffer(name) {
                writeln!(f, "{}: {}[{}] = [{}]", b.name, b.ty, b.bytes.len() / b.ty.size().max(1) as usize, b.elements().join(", "))?;
            }
        }
        writeln!(
            f,
            "stats: {} instructions, {} work-items, {} work-groups",
            self.stats.instructions, self.stats.work_items, self.stats.work_groups
        )
    }
}

fn describe_params(func: &Function) -> String {
    let list: Vec<String> =
        func.params.iter().map(|p| format!("{}: {}", func.value_name(p.value), func.value_type(p.value))).collect();
    if list.is_empty() {
        "none".to_string()
    } else {
        list.join(", ")
    }
}

fn build_arg(arg: &ArgSpec, ty: &Type, addresses: &[(String, u64)]) -> Result<RtValue, String> {
    match (ty, arg) {
        (Type::Ptr(space), ArgSpec::Buffer(name)) => {
            if matches!(space, AddrSpace::Local | AddrSpace::Private) {
                return Err(format!("a buffer cannot be passed as {ty}"));
            }
            addresses
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, a)| RtValue::Scalar(*a))
                .ok_or_else(|| format!("there is no buffer named '{name}'"))
        }
        (Type::Ptr(_), ArgSpec::Value(v)) if v == "null" || v == "0" => Ok(RtValue::Scalar(0)),
        (Type::Ptr(_), _) => Err(format!("expected a buffer like \"@name\" for {ty}")),
        (ty, ArgSpec::Value(v)) if ty.is_scalar() => literal_bits(v, ty).map(RtValue::Scalar),
        (ty, ArgSpec::Buffer(b)) if ty.is_scalar() => Err(format!("'@{b}' is a buffer, but the parameter is {ty}, not a pointer")),
        (Type::Vector(elem, n), ArgSpec::List(items)) => {
            if items.len() != usize::from(*n) {
                return Err(format!("{ty} needs {n} elements, found {}", items.len()));
            }
            items.iter().map(|a| build_arg(a, elem, addresses)).collect::<Result<Vec<_>, _>>().map(RtValue::Agg)
        }
        (Type::Struct(fields), ArgSpec::List(items)) => {
            if items.len() != fields.len() {
                return Err(format!("{ty} needs {} fields, found {}", fields.len(), items.len()));
            }
            items.iter().zip(fields).map(|(a, t)| build_arg(a, t, addresses)).collect::<Result<Vec<_>, _>>().map(RtValue::Agg)
        }
        (ty, ArgSpec::List(_)) => Err(format!("a list was given, but the parameter is {ty}")),
        (ty, _) => Err(format!("expected a list like [1, 2] for {ty}")),
    }
}

/// Verifies the module, allocates the buffers, builds the arguments (by kernel
/// parameter name), runs the kernel and reads the buffers back.
pub fn run(module: &Module, spec: &LaunchSpec) -> Result<RunOutput, String> {
    if let Err(errors) = super::verify::verify(module) {
        let lines: Vec<String> = errors.iter().map(|e| e.short(None)).collect();
        return Err(format!("the module does not verify:\n{}", lines.join("\n")));
    }
    let kernel: &Function = match &spec.kernel {
        Some(name) => match module.function(name) {
            Some(f) if f.kind == FuncKind::Kernel => f,
            Some(_) => return Err(format!("'@{name}' is a device function, not a kernel")),
            None => {
                let names: Vec<String> = module.kernels().map(|k| format!("@{}", k.name)).collect();
                return Err(format!("no kernel named '@{name}' (kernels: {})", if names.is_empty() { "none".into() } else { names.join(", ") }));
            }
        },
        None => {
            let kernels: Vec<&Function> = module.kernels().collect();
            match kernels.as_slice() {
                [only] => only,
                [] => return Err("the module has no kernel".to_string()),
                many => {
                    let names: Vec<String> = many.iter().map(|k| format!("@{}", k.name)).collect();
                    return Err(format!("the module has several kernels ({}); name one", names.join(", ")));
                }
            }
        }
    };
    spec.check()?;
    for (name, _) in &spec.args {
        if !kernel.params.iter().any(|p| kernel.value_name(p.value) == name) {
            return Err(format!("@{} has no parameter named '{name}' (its parameters: {})", kernel.name, describe_params(kernel)));
        }
    }
    let mut memory = Memory::new();
    let mut addresses = Vec::new();
    for b in &spec.buffers {
        let bytes = b.bytes()?;
        let address = memory.alloc(&bytes, u64::from(b.ty.align()));
        addresses.push((b.name.clone(), address));
    }
    let mut args = Vec::new();
    // Local pointer arguments: LDS of the launch, placed in parameter order at
    // their pointee alignment after the kernel's own (where `dynamic_lds`
    // would be; a kernel has one or the other).
    let lds_base = super::interp::dynamic_lds_base(kernel);
    let mut local_bytes_used = 0u32;
    for p in &kernel.params {
        let (name, ty) = (kernel.value_name(p.value), kernel.value_type(p.value));
        let Some((_, arg)) = spec.args.iter().find(|(n, _)| n == name) else {
            return Err(format!("missing argument for parameter '{name}: {ty}' of @{}", kernel.name));
        };
        if *ty == Type::Ptr(AddrSpace::Local) {
            let bytes = local_bytes(arg).unwrap_or_else(|| Err(format!("argument '{name}' (ptr<local>): expected lds:BYTES (the LDS the launch gives it)")))?;
            let at = (lds_base + local_bytes_used).next_multiple_of(p.info.pointee_align.unwrap_or(1));
            local_bytes_used = at + bytes - lds_base;
            args.push(RtValue::Scalar(u64::from(at)));
            continue;
        }
        args.push(build_arg(arg, ty, &addresses).map_err(|e| format!("argument '{name}' ({ty}): {e}"))?);
    }
    let mut options = Options::default();
    options.dynamic_lds_bytes = spec.dynamic_lds + local_bytes_used;
    options.wave_size = spec.wave_size;
    if let Some(max) = spec.max_instructions {
        options.max_instructions = max;
    }
    let mut launch = spec.launch();
    if let Some(b) = &spec.printf_buffer {
        launch.printf_buffer = addresses.iter().find(|(n, _)| n == b).map(|(_, a)| *a).ok_or_else(|| format!("there is no buffer named '{b}'"))?;
    }
    let stats = run_kernel_with(module, &kernel.name, &launch, &args, &mut memory, &options).map_err(|e| e.to_string())?;
    let mut buffers = Vec::new();
    for (b, (_, address)) in spec.buffers.iter().zip(&addresses) {
        let len = b.len() * b.ty.size() as usize;
        let bytes = memory.read(*address, len).map_err(|e| e.to_string())?.to_vec();
        buffers.push(BufferOutput { name: b.name.clone(), ty: b.ty.clone(), address: *address, bytes });
    }
    let print = if spec.print.is_empty() { spec.buffers.iter().map(|b| b.name.clone()).collect() } else { spec.print.clone() };
    Ok(RunOutput { kernel: kernel.name.clone(), buffers, print, stats })
}
