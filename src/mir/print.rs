//! The MIR printer: writes the text format that `parse` reads (docs/mir.md).
//! Printing is canonical: `parse(print(m)) == m` for every well-formed module.

use std::fmt::{self, Write};

use super::ir::*;
use crate::abi::Type;

/// A printf format as the text writes it: `\n`, `\t`, `\\`, and `\xHH`
/// for `"` and the other control characters.
pub fn escape(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\x22"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// The inverse of [`escape`].
pub fn unescape(text: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('\\') => out.push('\\'),
            Some('x') => {
                let hex: String = chars.by_ref().take(2).collect();
                let byte = u8::from_str_radix(&hex, 16).ok().filter(|_| hex.len() == 2).ok_or_else(|| format!("'\\x{hex}' is not an escape of two hex digits"))?;
                out.push(char::from(byte));
            }
            Some(other) => return Err(format!("unknown escape '\\{other}' (\\n, \\t, \\\\ and \\xHH are)")),
            None => return Err("the text ends in a lone '\\'".to_string()),
        }
    }
    Ok(out)
}

impl fmt::Display for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.device_triples.is_empty() {
            writeln!(f, "target device_triples = \"{}\"\n", self.device_triples.join(","))?;
        }
        for format in &self.printf_formats {
            writeln!(f, "printf_format \"{}\"", escape(format))?;
        }
        if !self.printf_formats.is_empty() {
            writeln!(f)?;
        }
        for d in &self.data {
            let writable = if d.writable { "writable, " } else { "" };
            if d.bytes.iter().all(|&b| b == 0) {
                write!(f, "data @{}, align {}, {writable}zeros {}", d.name, d.align, d.bytes.len())?;
            } else {
                let hex: String = d.bytes.iter().map(|b| format!("{b:02x}")).collect();
                write!(f, "data @{}, align {}, {writable}bytes \"{hex}\"", d.name, d.align)?;
            }
            for a in &d.addrs {
                write!(f, ", addr {} @{}", a.offset, a.target)?;
                if a.addend != 0 {
                    write!(f, " + {}", a.addend)?;
                }
            }
            writeln!(f)?;
        }
        if !self.data.is_empty() {
            writeln!(f)?;
        }
        for (i, func) in self.functions.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{func}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let keyword = match self.kind {
            FuncKind::Kernel => "kernel",
            FuncKind::Device => "func",
        };
        write!(f, "{keyword} @{}(", self.name)?;
        for (i, param) in self.params.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            let inreg = if param.inreg { "inreg " } else { "" };
            write!(f, "%{}: {inreg}{}", self.value_name(param.value), self.value_type(param.value))?;
            let info = &param.info;
            for (on, word) in [(info.is_const, "const"), (info.is_restrict, "restrict"), (info.is_volatile, "volatile")] {
                if on {
                    write!(f, " {word}")?;
                }
            }
            match info.access {
                Some(ArgAccess::ReadOnly) => f.write_str(" readonly")?,
                Some(ArgAccess::WriteOnly) => f.write_str(" writeonly")?,
                None => {}
            }
            if let Some(a) = info.pointee_align {
                write!(f, " align {a}")?;
            }
            if let Some(name) = &info.type_name {
                write!(f, " \"{name}\"")?;
            }
        }
        f.write_str(")")?;
        if let Some(ret) = &self.ret {
            write!(f, " -> {ret}")?;
        }
        if self.conv == CallConv::Llvm {
            f.write_str(" callconv(llvm)")?;
        }
        match self.inline {
            InlineHint::Never => f.write_str(" noinline")?,
            InlineHint::Always => f.write_str(" alwaysinline")?,
            InlineHint::Auto => {}
        }
        if let Some([x, y, z]) = self.attrs.reqd_work_group_size {
            write!(f, " reqd_work_group_size({x}, {y}, {z})")?;
        }
        if let Some(n) = self.attrs.min_waves_per_simd {
            write!(f, " min_waves_per_simd({n})")?;
        }
        if let Some(n) = self.attrs.max_work_group_size {
            write!(f, " max_work_group_size({n})")?;
        }
        if let Some([x, y, z]) = self.attrs.work_group_size_hint {
            write!(f, " work_group_size_hint({x}, {y}, {z})")?;
        }
        f.write_str(" {\n")?;
        for block in &self.blocks {
            f.write_str(&block_header(self, block))?;
            for inst in &block.insts {
                writeln!(f, "  {}", InstDisplay { func: self, inst })?;
            }
            writeln!(f, "  {}", TermDisplay { func: self, term: &block.term })?;
        }
        f.write_str("}\n")
    }
}

fn block_header(func: &Function, block: &Block) -> String {
    let mut out = block.name.clone();
    if !block.params.is_empty() {
        out.push('(');
        for (i, p) in block.params.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            let _ = write!(out, "%{}: {}", func.value_name(*p), func.value_type(*p));
        }
        out.push(')');
    }
    out.push_str(":\n");
    out
}

/// Prints one instruction (without indentation), e.g. for diagnostics.
pub struct InstDisplay<'a> {
    pub func: &'a Function,
    pub inst: &'a Inst,
}

/// Prints one terminator.
pub struct TermDisplay<'a> {
    pub func: &'a Function,
    pub term: &'a Terminator,
}

/// Prints an operand in the function's context.
pub struct OperandDisplay<'a> {
    pub func: &'a Function,
    pub operand: &'a Operand,
}

impl fmt::Display for OperandDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.operand {
            Operand::Value(v) => write!(f, "%{}", self.func.value_name(*v)),
            Operand::Const(c) => f.write_str(&const_literal(c)),
        }
    }
}

/// The literal text of a constant (without its type): `-1`, `true`, `1.5`, `nan`,
/// `0x7fc00001` (a float NaN that is not the canonical quiet NaN, as raw bits).
pub fn const_literal(c: &Const) -> String {
    match &c.ty {
        Type::I1 => if c.bits & 1 != 0 { "true" } else { "false" }.to_string(),
        Type::F16 => float_literal(f64::from(super::float::f16_to_f32(c.bits as u16)), c.bits, super::float::F16_QNAN, 16),
        Type::F32 => float_literal(f64::from(f32::from_bits(c.bits as u32)), c.bits, 0x7fc0_0000, 32),
        Type::F64 => float_literal(f64::from_bits(c.bits), c.bits, 0x7ff8_0000_0000_0000, 64),
        ty if ty.is_int() => {
            let bits = ty.bits();
            let shift = 64 - bits;
            (((c.bits << shift) as i64) >> shift).to_string()
        }
        // Pointer constants are integers (addresses).
        _ => c.bits.to_string(),
    }
}

fn float_literal(value: f64, bits: u64, canonical_nan: u64, width: u32) -> String {
    if value.is_nan() {
        return if bits == canonical_nan { "nan".to_string() } else { format!("0x{:0w$x}", bits, w = (width / 4) as usize) };
    }
    if value.is_infinite() {
        return if value > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    if width == 64 {
        format!("{value:?}")
    } else {
        // Shortest text that reads back as the same f32 (and so the same f16).
        format!("{:?}", value as f32)
    }
}

fn dim_name(dim: u8) -> &'static str {
    match dim {
        0 => "x",
        1 => "y",
        _ => "z",
    }
}

impl fmt::Display for InstDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let func = self.func;
        let o = |operand: &Operand| OperandDisplay { func, operand }.to_string();
        if let Some(result) = self.inst.result {
            write!(f, "%{} = ", func.value_name(result))?;
        }
        match &self.inst.op {
            Op::Const(c) => write!(f, "const {} {}", c.ty, const_literal(c)),
            Op::Binary { op, ty, lhs, rhs } => write!(f, "{} {ty} {}, {}", op.mnemonic(), o(lhs), o(rhs)),
            Op::Unary { op, ty, arg } => write!(f, "{} {ty} {}", op.mnemonic(), o(arg)),
            Op::Fma { ty, a, b, c } => write!(f, "fma {ty} {}, {}, {}", o(a), o(b), o(c)),
            Op::Ternary { op, ty, a, b, c } => write!(f, "{} {ty} {}, {}, {}", op.mnemonic(), o(a), o(b), o(c)),
            Op::Icmp { pred, ty, lhs, rhs } => write!(f, "icmp {} {ty} {}, {}", pred.mnemonic(), o(lhs), o(rhs)),
            Op::Fcmp { pred, ty, lhs, rhs } => write!(f, "fcmp {} {ty} {}, {}", pred.mnemonic(), o(lhs), o(rhs)),
            Op::Select { ty, cond, if_true, if_false } => {
                write!(f, "select {ty} {}, {}, {}", o(cond), o(if_true), o(if_false))
            }
            Op::Cast { op, from, arg, to } => write!(f, "{} {from} {} to {to}", op.mnemonic(), o(arg)),
            Op::Load { ty, ptr, align, volatile } => {
                write!(f, "load {}{ty} {}", if *volatile { "volatile " } else { "" }, o(ptr))?;
                write_align(f, ty, *align)
            }
            Op::Store { ty, value, ptr, align, volatile } => {
                write!(f, "store {}{ty} {}, {}", if *volatile { "volatile " } else { "" }, o(value), o(ptr))?;
                write_align(f, ty, *align)
            }
            Op::Fence { order, scope } => write!(f, "fence {} {}", order.mnemonic(), scope.mnemonic()),
            Op::PtrAdd { ptr, offset } => write!(f, "ptradd {}, {}", o(ptr), o(offset)),
            Op::AtomicRmw { op, ty, ptr, value, sync } => {
                write!(f, "atomic {} {ty} {}, {}", op.mnemonic(), o(ptr), o(value))?;
                write_sync(f, sync)
            }
            Op::CmpXchg { ty, ptr, expected, new, sync } => {
                write!(f, "cmpxchg {ty} {}, {}, {}", o(ptr), o(expected), o(new))?;
                write_sync(f, sync)
            }
            Op::StackSlot { size, align } => write!(f, "stack_slot {size}, align {align}"),
            Op::LdsSlot { size, align } => write!(f, "lds_slot {size}, align {align}"),
            Op::Call { callee, args } => {
                write!(f, "call @{callee}(")?;
                for (i, arg) in args.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    f.write_str(&o(arg))?;
                }
                f.write_str(")")
            }
            Op::Builtin { kind, .. } if kind.dimensionless() => write!(f, "{}", kind.mnemonic()),
            Op::Builtin { kind, dim } => write!(f, "{} {}", kind.mnemonic(), dim_name(*dim)),
            Op::Barrier => f.write_str("barrier"),
            Op::DynamicLds => f.write_str("dynamic_lds"),
            Op::DataAddr { name, .. } => write!(f, "data_addr @{name}"),
            Op::Wave { op: op @ (WaveOp::LaneId | WaveOp::WaveSize), .. } => f.write_str(op.mnemonic()),
            Op::Wave { op: WaveOp::Ballot, args, .. } => write!(f, "ballot {}", o(&args[0])),
            Op::Wave { op: op @ (WaveOp::Reduce(b) | WaveOp::InclusiveScan(b) | WaveOp::ExclusiveScan(b)), ty, args } => {
                write!(f, "{} {} {ty} {}", op.mnemonic(), b.mnemonic(), o(&args[0]))
            }
            Op::Wave { op, ty, args } => {
                write!(f, "{} {ty} {}", op.mnemonic(), o(&args[0]))?;
                if let Some(lane) = args.get(1) {
                    write!(f, ", {}", o(lane))?;
                }
                Ok(())
            }
            Op::Extract { agg, index } => write!(f, "extract {}, {index}", o(agg)),
            Op::Insert { agg, value, index } => write!(f, "insert {}, {}, {index}", o(agg), o(value)),
            Op::Make { ty, elems } => {
                write!(f, "make {ty} ")?;
                for (i, e) in elems.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    f.write_str(&o(e))?;
                }
                Ok(())
            }
        }
    }
}

/// Alignment is printed only when it differs from the type's natural alignment,
/// so the canonical text of an ordinary access has no `align`.
fn write_align(f: &mut fmt::Formatter<'_>, ty: &Type, align: u32) -> fmt::Result {
    if align != ty.align() {
        write!(f, ", align {align}")?;
    }
    Ok(())
}

fn block_call(func: &Function, call: &BlockCall) -> String {
    let mut out = func.block(call.block).name.clone();
    if !call.args.is_empty() {
        out.push('(');
        for (i, arg) in call.args.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            out.push_str(&OperandDisplay { func, operand: arg }.to_string());
        }
        out.push(')');
    }
    out
}

impl fmt::Display for TermDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let func = self.func;
        match self.term {
            Terminator::Br(call) => write!(f, "br {}", block_call(func, call)),
            Terminator::BrIf { cond, then_to, else_to } => write!(
                f,
                "brif {}, {}, {}",
                OperandDisplay { func, operand: cond },
                block_call(func, then_to),
                block_call(func, else_to)
            ),
            Terminator::Ret(None) => f.write_str("ret"),
            Terminator::Ret(Some(v)) => write!(f, "ret {}", OperandDisplay { func, operand: v }),
            Terminator::Unreachable => f.write_str("unreachable"),
        }
    }
}

/// An atomic's ordering and scope, unless they are the default.
fn write_sync(f: &mut fmt::Formatter<'_>, sync: &Sync) -> fmt::Result {
    if *sync != Sync::default() {
        write!(f, " {} {}", sync.order.mnemonic(), sync.scope.mnemonic())?;
    }
    Ok(())
}
