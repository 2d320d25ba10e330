//! `amdgpu-cg sim`: run a kernel of a `.hsaco` from the command line, with the
//! launch flags of `amdgpu-cg run` (parsed by [`crate::mir::launch::LaunchSpec`]).

use std::fmt::Write;

use crate::abi::Type;
use crate::codeobj::metadata::ValueKind;
use crate::mir::launch::{format_element, literal_bits, ArgSpec, BufferOutput, LaunchSpec};

use super::{Options, Simulator, Stats};

/// Runs `kernel` (None = the only kernel) of the code object at `path`; returns the
/// printed buffers and the statistics. Flags as for `amdgpu-cg run`:
/// `grid`/`block` like `256` or `16,16`, `buffers` like `x=f32:iota:256`, `args`
/// like `x=@x` or `n=256` (by the kernel's argument names in the metadata, or
/// `arg0`, `arg1`, ... by position), `print`
/// buffer names (empty = all).
#[allow(clippy::too_many_arguments)]
pub fn sim_command(path: &str, kernel: Option<&str>, launch: Option<&str>, grid: &str, block: &str, buffers: &[String], args: &[String], print: &[String], trace: bool) -> Result<String, String> {
    let mut spec = match launch {
        Some(text) => LaunchSpec::from_json(text)?,
        None => LaunchSpec::from_flags(grid, block, buffers, args, print)?,
    };
    if kernel.is_some() {
        spec.kernel = kernel.map(str::to_string);
    }
    let data = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    let (buffers, stats) = run_launch_with(&data, &spec, &Options { trace, ..Options::default() })?;
    let mut out = String::new();
    for b in &buffers {
        if !spec.print.is_empty() && !spec.print.contains(&b.name) {
            continue;
        }
        let size = b.ty.size().max(1) as usize;
        let elems: Vec<String> = b
            .bytes
            .chunks_exact(size)
            .map(|c| {
                let mut x = [0u8; 8];
                x[..size].copy_from_slice(c);
                format_element(&b.ty, u64::from_le_bytes(x))
            })
            .collect();
        let _ = writeln!(out, "{}: {}[{}] = [{}]", b.name, b.ty, elems.len(), elems.join(", "));
    }
    let _ = writeln!(out, "{stats}");
    Ok(out)
}

/// Runs a launch description (as `amdgpu-cg run` takes it) on a code object;
/// returns every buffer after the run, in declaration order, and the statistics.
pub fn run_launch(hsaco: &[u8], spec: &LaunchSpec) -> Result<(Vec<BufferOutput>, Stats), String> {
    run_launch_with(hsaco, spec, &Options::default())
}

/// [`run_launch`] with explicit [`Options`].
pub fn run_launch_with(hsaco: &[u8], spec: &LaunchSpec, options: &Options) -> Result<(Vec<BufferOutput>, Stats), String> {
    let mut sim = Simulator::new();
    sim.options = options.clone();
    sim.options.dynamic_lds_bytes = spec.dynamic_lds;
    sim.options.global_offset = spec.offset;
    sim.options.work_dim = spec.work_dim;
    if let Some(m) = spec.max_instructions {
        sim.options.max_instructions = m;
    }
    let co = sim.load(hsaco).map_err(|e| e.to_string())?;
    let kernel = match spec.kernel.as_deref() {
        Some(k) => co.loaded.kernels.iter().find(|x| x.name == k).ok_or_else(|| format!("no kernel '{k}' in the code object"))?,
        None => match co.loaded.kernels.as_slice() {
            [k] => k,
            ks => return Err(format!("the code object has {} kernels; choose one with --kernel", ks.len())),
        },
    };
    let md = kernel.metadata.clone().ok_or("the kernel has no metadata (argument names unknown)")?;
    let mut addrs = Vec::new();
    for b in &spec.buffers {
        let bytes = b.bytes()?;
        addrs.push((b.name.clone(), b.ty.clone(), sim.alloc(&b.name, bytes)));
    }
    if let Some(b) = &spec.printf_buffer {
        sim.options.printf_buffer = addrs.iter().find(|(n, _, _)| n == b).map(|x| x.2).ok_or_else(|| format!("printf_buffer: no buffer '{b}'"))?;
    }
    let mut kernarg = Vec::new();
    // Local pointer arguments get LDS after the kernel's own, in argument
    // order at their `.pointee_align`, as the ROCm runtime places them.
    let fixed = kernel.descriptor.group_segment_fixed_size;
    let mut local_used = 0u32;
    for (idx, a) in md.args.iter().filter(|a| !matches!(a.value_kind, ValueKind::Hidden(_))).enumerate() {
        // By the metadata's argument name; `argN` (N = position) always works, and is
        // the only way when the code object has no names (clang without -cl-kernel-arg-info).
        let positional = format!("arg{idx}");
        let name = a.name.clone().filter(|n| !n.is_empty()).unwrap_or_else(|| positional.clone());
        let end = (a.offset + a.size) as usize;
        if kernarg.len() < end {
            kernarg.resize(end, 0);
        }
        let v = spec
            .args
            .iter()
            .find(|(n, _)| *n == name || *n == positional)
            .map(|(_, v)| v)
            .ok_or_else(|| format!("no value for kernel argument '{name}' (--arg {name}=...)"))?;
        if a.value_kind == ValueKind::DynamicSharedPointer {
            let bytes = crate::mir::launch::local_bytes(v).unwrap_or_else(|| Err(format!("--arg {name}: a local pointer takes lds:BYTES")))?;
            let at = (fixed + local_used).next_multiple_of(a.pointee_align.unwrap_or(1).max(1));
            local_used = at + bytes - fixed;
            kernarg[a.offset as usize..a.offset as usize + 4].copy_from_slice(&at.to_le_bytes());
            continue;
        }
        let bits = match v {
            ArgSpec::Buffer(b) => addrs.iter().find(|(n, _, _)| n == b).map(|x| x.2).ok_or_else(|| format!("--arg {name}=@{b}: no buffer '{b}'"))?,
            ArgSpec::Value(t) => {
                // The C type name when the metadata has one; otherwise the literal
                // decides: an integer (or 0x bits) is stored as an integer, anything
                // else (2.5, nan, inf) as a float of the argument's size.
                let tn = a.type_name.clone().unwrap_or_else(|| {
                    let t = t.trim();
                    let int = t.starts_with("0x") || t.parse::<i64>().is_ok() || t.parse::<u64>().is_ok();
                    if int { String::new() } else { ["", "", "half", "", "float", "", "", "", "double"].get(a.size as usize).unwrap_or(&"").to_string() }
                });
                let ty = match (a.size, tn.contains("float"), tn.contains("double"), tn.contains("half")) {
                    (2, _, _, true) => Type::F16,
                    (4, true, _, _) => Type::F32,
                    (8, _, true, _) => Type::F64,
                    (1, ..) => Type::I8,
                    (2, ..) => Type::I16,
                    (4, ..) => Type::I32,
                    _ => Type::I64,
                };
                literal_bits(t, &ty).map_err(|e| format!("--arg {name}: {e}"))?
            }
            ArgSpec::List(items) => {
                // The metadata gives an aggregate's size only: each field carries
                // its type (`s=i32:17,f32:0.25`), laid out at natural alignment.
                let mut fields = Vec::new();
                for item in items {
                    let ArgSpec::Value(text) = item else { return Err(format!("--arg {name}: fields of an aggregate must be TYPE:VALUE")) };
                    let (ty, value) = text.split_once(':').ok_or_else(|| format!("--arg {name}: field '{text}' needs a type (TYPE:VALUE, e.g. i32:17) in `sim`"))?;
                    let ty: Type = ty.trim().parse().map_err(|e| format!("--arg {name}: field '{text}': {e:?}"))?;
                    fields.push((ty, value.trim().to_string()));
                }
                let layout = Type::Struct(fields.iter().map(|(t, _)| t.clone()).collect());
                if layout.size() != a.size {
                    return Err(format!("--arg {name}: the fields take {} bytes, the argument {}", layout.size(), a.size));
                }
                for ((ty, value), offset) in fields.iter().zip(layout.field_offsets()) {
                    let bits = literal_bits(value, ty).map_err(|e| format!("--arg {name}: {e}"))?;
                    let at = a.offset as usize + offset as usize;
                    let n = ty.size() as usize;
                    kernarg[at..at + n].copy_from_slice(&bits.to_le_bytes()[..n]);
                }
                continue;
            }
        };
        let n = (a.size as usize).min(8);
        kernarg[a.offset as usize..a.offset as usize + n].copy_from_slice(&bits.to_le_bytes()[..n]);
    }
    sim.options.dynamic_lds_bytes += local_used;
    let stats = sim.dispatch(&co, &kernel.name, spec.grid, spec.block, &kernarg).map_err(|e| e.to_string())?;
    let out = addrs
        .into_iter()
        .map(|(name, ty, address)| BufferOutput { name, ty, address, bytes: sim.read(address).unwrap_or(&[]).to_vec() })
        .collect();
    Ok((out, stats))
}
