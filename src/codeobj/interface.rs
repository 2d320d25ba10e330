//! One kernel interface across devices: a module compiled for several devices
//! in one run must give every kernel the same kernarg layout on each of them,
//! or a host program that launches "the" kernel would pass arguments one device
//! reads differently (the device-triples proposal's example: a value passed by
//! value on one device and by reference on another).

use super::metadata::{KernelArg, KernelMetadata};
use super::CodeObject;

/// What the host sees of one argument: where and how it is passed.
fn describe(a: &KernelArg) -> String {
    let space = a.address_space.map(|s| format!(" {}", super::metadata::addr_space_name(s))).unwrap_or_default();
    format!("{}{space} at offset {} ({} bytes)", a.value_kind.name(), a.offset, a.size)
}

fn same_place(a: &KernelArg, b: &KernelArg) -> bool {
    a.offset == b.offset && a.size == b.size && a.value_kind == b.value_kind && a.address_space == b.address_space
}

fn arg_name(k: &KernelMetadata, i: usize) -> String {
    match &k.args[i].name {
        Some(n) => format!("argument {i} (%{n})"),
        None => format!("argument {i} ({})", k.args[i].value_kind.name()),
    }
}

/// Compares every kernel's interface (kernarg size and alignment, each
/// argument's offset, size, kind and address space, hidden arguments included)
/// across `devices` (a device name and its code object each). The error lists
/// every difference, naming the kernel, the argument and the two devices.
pub fn check(devices: &[(String, &CodeObject)]) -> Result<(), String> {
    let Some(((first_name, first), rest)) = devices.split_first() else { return Ok(()) };
    let metadata = |co: &CodeObject| super::writer::build_metadata(co).kernels;
    let reference = metadata(first);
    let mut problems = Vec::new();
    for (name, co) in rest {
        let other = metadata(co);
        for k in &reference {
            let Some(o) = other.iter().find(|o| o.name == k.name) else {
                problems.push(format!("kernel @{} is compiled for {first_name} but not for {name}", k.name));
                continue;
            };
            if (k.kernarg_segment_size, k.kernarg_segment_align) != (o.kernarg_segment_size, o.kernarg_segment_align) {
                problems.push(format!(
                    "kernel @{}: the kernarg segment is {} bytes (align {}) on {first_name} but {} bytes (align {}) on {name}",
                    k.name, k.kernarg_segment_size, k.kernarg_segment_align, o.kernarg_segment_size, o.kernarg_segment_align
                ));
            }
            for i in 0..k.args.len().max(o.args.len()) {
                match (k.args.get(i), o.args.get(i)) {
                    (Some(a), Some(b)) if same_place(a, b) => {}
                    (Some(a), Some(b)) => problems.push(format!(
                        "kernel @{}, {}: {} on {first_name} but {} on {name}",
                        k.name,
                        arg_name(k, i),
                        describe(a),
                        describe(b)
                    )),
                    (Some(a), None) => problems.push(format!("kernel @{}, {}: {} on {first_name}, absent on {name}", k.name, arg_name(k, i), describe(a))),
                    (None, Some(b)) => problems.push(format!("kernel @{}, {}: absent on {first_name}, {} on {name}", k.name, arg_name(o, i), describe(b))),
                    (None, None) => {}
                }
            }
        }
        for o in &other {
            if !reference.iter().any(|k| k.name == o.name) {
                problems.push(format!("kernel @{} is compiled for {name} but not for {first_name}", o.name));
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}
