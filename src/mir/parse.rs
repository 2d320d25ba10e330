//! The MIR text parser (grammar in docs/mir.md).
//!
//! The lexer is lazy (tokens are read at the cursor on demand) so that types can be
//! parsed by the ABI crate's type parser at the current position: the type grammar
//! exists once. Every error carries the byte span of the offending text; the
//! caller renders it as file:line:column with a snippet ([`Diagnostic::render`]).
//!
//! Inline constants take their type from context (the instruction's type, the
//! callee's parameter, the target block's parameter). Where the context is defined
//! later in the text (a call to a function below, a branch to a block below), the
//! constant is resolved after the function or module has been read.

use hashbrown::{HashMap, HashSet};

use super::diag::Diagnostic;
use super::float;
use super::ir::*;
use crate::abi::{types::parse_type_prefix, AddrSpace, Type};

/// The largest `data` object (256 MiB): more is a mistake, not a table.
pub const MAX_DATA_BYTES: u64 = 1 << 28;

/// Parses a module from text. Only syntax and name resolution are checked here;
/// run [`super::verify::verify`] for types and well-formedness.
pub fn parse(text: &str) -> Result<Module, Diagnostic> {
    parse_in_parallel(text, 1)
}

/// Modules shorter than this are parsed on one thread whatever `jobs` says
/// (threads cost more than they save).
const PARALLEL_PARSE_BYTES: usize = 64 * 1024;

/// [`parse`], with the functions of a long module parsed on up to `jobs`
/// threads. The result is the same module, and the same error: functions
/// are found by the lines that start with `kernel` or `func`, each parsed
/// by a parser of its own from its start, and unless every one parses and
/// ends where the next begins, the functions are parsed again one after the
/// other (so an error is always the one the serial parse reports).
pub fn parse_in_parallel(text: &str, jobs: usize) -> Result<Module, Diagnostic> {
    let mut parser = Parser { text, pos: 0, writable_data: HashSet::new(), peeked: None };
    let mut module = Module::default();
    let mut pending_calls = Vec::new();
    let mut function_names: HashSet<String> = HashSet::new();
    let mut addr_spans: Vec<Vec<Span>> = Vec::new();
    loop {
        parser.skip_trivia();
        if parser.pos >= text.len() {
            break;
        }
        if parser.peek() == Tok::Ident("target") {
            if !module.functions.is_empty() || !module.device_triples.is_empty() {
                return parser.error("the 'target device_triples' line comes once, before the first function");
            }
            module.device_triples = parser.device_triples()?;
            continue;
        }
        if parser.peek() == Tok::Ident("printf_format") {
            if !module.functions.is_empty() {
                return parser.error("'printf_format' lines come before the first function");
            }
            module.printf_formats.push(parser.printf_format()?);
            continue;
        }
        if parser.peek() == Tok::Ident("data") {
            if !module.functions.is_empty() {
                return parser.error("'data' lines come before the first function");
            }
            let (data, span, spans) = parser.data()?;
            addr_spans.push(spans);
            if module.data.iter().any(|d| d.name == data.name) {
                return Err(Diagnostic::new(format!("data '@{}' is defined more than once", data.name), span));
            }
            if data.writable {
                parser.writable_data.insert(data.name.clone());
            }
            module.data.push(data);
            continue;
        }
        if module.functions.is_empty() && crate::parallel::threads(jobs) > 1 && text.len() - parser.pos >= PARALLEL_PARSE_BYTES {
            if let Some(functions) = parallel_functions(text, parser.pos, &parser.writable_data, jobs) {
                for (func, calls) in functions {
                    module.functions.push(func);
                    pending_calls.extend(calls.into_iter().map(|c| (module.functions.len() - 1, c)));
                }
                break;
            }
        }
        let (func, calls) = parser.function()?;
        if !function_names.insert(func.name.clone()) {
            return Err(Diagnostic::new(format!("function '@{}' is defined more than once", func.name), func.span));
        }
        module.functions.push(func);
        pending_calls.extend(calls.into_iter().map(|c| (module.functions.len() - 1, c)));
    }
    check_data_addresses(&module.data, &addr_spans)?;
    // Constants passed to functions: their type is the callee's parameter type.
    let mut index: HashMap<String, usize> = HashMap::new();
    if !pending_calls.is_empty() {
        for (i, f) in module.functions.iter().enumerate() {
            index.entry(f.name.clone()).or_insert(i);
        }
    }
    for (func_index, pending) in pending_calls {
        let callee = index.get(&pending.callee).map(|&i| &module.functions[i]);
        let param_type = callee.and_then(|callee| {
            callee.params.get(pending.arg_index).map(|p| callee.value_type(p.value).clone())
        });
        let Some(ty) = param_type else {
            let why = if callee.is_none() {
                format!("call to undefined function '@{}'", pending.callee)
            } else {
                format!("too many arguments in call to '@{}'", pending.callee)
            };
            return Err(Diagnostic::new(why, pending.span));
        };
        let c = literal_for_type(&pending.literal, &ty, pending.span)?;
        let func = &mut module.functions[func_index];
        let inst = &mut func.blocks[pending.block].insts[pending.inst];
        if let Op::Call { args, .. } = &mut inst.op {
            args[pending.arg_index] = Operand::Const(c);
        }
    }
    refresh_result_types(&mut module);
    Ok(module)
}

/// Every `addr` clause names a data object of the module and points at
/// most one past its end.
fn check_data_addresses(data: &[Data], spans: &[Vec<Span>]) -> Result<(), Diagnostic> {
    for (d, spans) in data.iter().zip(spans) {
        for (a, &span) in d.addrs.iter().zip(spans) {
            let Some(target) = data.iter().find(|t| t.name == a.target) else {
                return Err(Diagnostic::new(format!("'addr' of '@{}', which is not the module's data", a.target), span));
            };
            if a.addend > target.bytes.len() as u64 {
                return Err(Diagnostic::new(format!("'@{} + {}' is beyond the end of '@{}' ({} bytes)", a.target, a.addend, a.target, target.bytes.len()), span));
            }
        }
    }
    Ok(())
}

/// The functions from `start` to the end of the text, parsed in parallel,
/// or None where the serial parse must decide: a function that fails to
/// parse or does not end where the next line starting with `kernel` or
/// `func` begins, anything else after the functions, or a name defined
/// twice.
#[allow(clippy::type_complexity)]
fn parallel_functions(text: &str, start: usize, writable_data: &HashSet<String>, jobs: usize) -> Option<Vec<(Function, Vec<PendingCallConst>)>> {
    let mut starts = vec![start];
    let mut line = start;
    while let Some(newline) = text[line..].find('\n') {
        line += newline + 1;
        let rest = &text[line..];
        if rest.starts_with("kernel ") || rest.starts_with("func ") {
            starts.push(line);
        }
    }
    if starts.len() < 2 {
        return None;
    }
    let ends: Vec<usize> = starts[1..].iter().copied().chain([text.len()]).collect();
    let parsed = crate::parallel::map_in_order(starts.len(), jobs, |i| {
        let mut parser = Parser { text, pos: starts[i], writable_data: writable_data.clone(), peeked: None };
        let parsed = parser.function().ok()?;
        parser.skip_trivia();
        (parser.pos == ends[i]).then_some(parsed)
    });
    let functions: Vec<(Function, Vec<PendingCallConst>)> = parsed.into_iter().collect::<Option<_>>()?;
    let unique = {
        let mut names = HashSet::new();
        functions.iter().all(|(f, _)| names.insert(f.name.as_str()))
    };
    unique.then_some(functions)
}

/// The result type of operations whose type is written in the text.
fn explicit_result_type(op: &Op) -> Option<Type> {
    match op {
        Op::PtrAdd { .. } | Op::Extract { .. } | Op::Insert { .. } | Op::Call { .. } => None,
        _ => {
            let empty = Function {
                name: String::new(),
                kind: FuncKind::Device,
                conv: CallConv::AmdgpuCg,
                attrs: KernelAttrs::default(),
                inline: InlineHint::Auto,
                params: Vec::new(),
                ret: None,
                blocks: Vec::new(),
                values: Vec::new(),
                span: Span::NONE,
            };
            result_type(op, &empty, None)
        }
    }
}

/// Sets the result types that depend on operand types or on the callee. Repeats
/// while anything changes, since a value may be used above its definition.
fn refresh_result_types(module: &mut Module) {
    // A call's type is its callee's result type, found by name once.
    let mut results: HashMap<String, Option<Type>> = HashMap::new();
    for f in &module.functions {
        results.entry(f.name.clone()).or_insert_with(|| f.ret.clone());
    }
    let mut changed = true;
    let mut rounds = 0;
    while changed && rounds < 64 {
        changed = false;
        rounds += 1;
        let mut updates = Vec::new();
        for (fi, func) in module.functions.iter().enumerate() {
            for block in &func.blocks {
                for inst in &block.insts {
                    let Some(result) = inst.result else { continue };
                    if explicit_result_type(&inst.op).is_some() {
                        continue;
                    }
                    let produced = match &inst.op {
                        Op::Call { callee, .. } => results.get(callee.as_str()).cloned().flatten(),
                        op => result_type(op, func, Some(module)),
                    };
                    if let Some(ty) = produced {
                        if *func.value_type(result) != ty {
                            updates.push((fi, result, ty));
                        }
                    }
                }
            }
        }
        for (fi, value, ty) in updates {
            module.functions[fi].values[value.0 as usize].ty = ty;
            changed = true;
        }
    }
}

/// A constant argument of a call, typed once the callee is known.
struct PendingCallConst {
    callee: String,
    block: usize,
    inst: usize,
    arg_index: usize,
    literal: String,
    span: Span,
}

/// A constant branch argument, typed once the target block is known.
struct PendingBranchConst {
    block: usize,
    /// Which block call of the terminator (0 = `br` or `then`, 1 = `else`).
    call: usize,
    arg_index: usize,
    literal: String,
    span: Span,
}

/// A token: its text borrowed from the source (no allocation per token; a
/// million-instruction module is lexed at parse speed, not allocator speed).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Tok<'a> {
    Ident(&'a str),
    /// A double-quoted string (no escapes; not across lines).
    Str(&'a str),
    Local(&'a str),
    Global(&'a str),
    Literal(&'a str),
    Punct(&'static str),
    Eof,
}

impl Tok<'_> {
    fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => format!("'{s}'"),
            Tok::Local(s) => format!("'%{s}'"),
            Tok::Global(s) => format!("'@{s}'"),
            Tok::Literal(s) => format!("'{s}'"),
            Tok::Str(s) => format!("\"{s}\""),
            Tok::Punct(p) => format!("'{p}'"),
            Tok::Eof => "end of input".to_string(),
        }
    }
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
    /// The writable data declared so far (data lines come before
    /// functions): `data_addr` of these is a `ptr<global>`.
    writable_data: HashSet<String>,
    /// The last token peeked: (position peeked from, token, start, end).
    peeked: Option<(usize, Tok<'a>, usize, usize)>,
}

/// The per-function state of name resolution.
struct FuncScope<'a> {
    values: Vec<ValueInfo>,
    /// Names borrowed from the text (one allocation per value, its IR name).
    by_name: HashMap<&'a str, Value>,
    /// Span of the first use of a value not yet defined (forward reference).
    undefined: HashMap<Value, Span>,
    defined: Vec<bool>,
}

impl<'a> FuncScope<'a> {
    fn define(&mut self, name: &'a str, ty: Type, span: Span) -> Result<Value, Diagnostic> {
        if let Some(&v) = self.by_name.get(name) {
            if self.defined[v.0 as usize] {
                return Err(Diagnostic::new(format!("value '%{name}' is defined more than once"), span));
            }
            self.values[v.0 as usize].ty = ty;
            self.defined[v.0 as usize] = true;
            self.undefined.remove(&v);
            return Ok(v);
        }
        let v = Value(self.values.len() as u32);
        self.values.push(ValueInfo { name: name.to_string(), ty });
        self.defined.push(true);
        self.by_name.insert(name, v);
        Ok(v)
    }

    fn use_value(&mut self, name: &'a str, span: Span) -> Value {
        if let Some(&v) = self.by_name.get(name) {
            return v;
        }
        let v = Value(self.values.len() as u32);
        // Placeholder type, replaced when the definition is seen.
        self.values.push(ValueInfo { name: name.to_string(), ty: Type::I1 });
        self.defined.push(false);
        self.by_name.insert(name, v);
        self.undefined.insert(v, span);
        v
    }
}

/// The operation families whose mnemonics are tables in ir.rs.
#[derive(Clone, Copy)]
enum Operator {
    Binary(BinOp),
    Ternary(TernOp),
    Unary(UnOp),
    Cast(CastOp),
    Builtin(Builtin),
}

/// Mnemonic to operation, for the families above (built once: a search of
/// the tables per instruction was a tenth of parsing). The first family
/// listing a mnemonic wins, in the order the parser used to search them.
fn operator_mnemonics() -> &'static HashMap<&'static str, Operator> {
    static TABLE: std::sync::OnceLock<HashMap<&'static str, Operator>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = HashMap::new();
        let families = BinOp::ALL.into_iter().map(|o| (o.mnemonic(), Operator::Binary(o)))
            .chain(TernOp::ALL.into_iter().map(|o| (o.mnemonic(), Operator::Ternary(o))))
            .chain(UnOp::ALL.into_iter().map(|o| (o.mnemonic(), Operator::Unary(o))))
            .chain(CastOp::ALL.into_iter().map(|o| (o.mnemonic(), Operator::Cast(o))))
            .chain(Builtin::ALL.into_iter().map(|o| (o.mnemonic(), Operator::Builtin(o))));
        for (mnemonic, operator) in families {
            table.entry(mnemonic).or_insert(operator);
        }
        table
    })
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '.'
}

impl<'a> Parser<'a> {
    fn skip_trivia(&mut self) {
        let bytes = self.text.as_bytes();
        while let Some(&b) = bytes.get(self.pos) {
            match b {
                b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c' => self.pos += 1,
                b';' => self.pos += bytes[self.pos..].iter().position(|&c| c == b'\n').unwrap_or(bytes.len() - self.pos),
                // Other whitespace is Unicode's (as `str::trim_start` has it).
                0x80.. => match self.text[self.pos..].chars().next() {
                    Some(c) if c.is_whitespace() => self.pos += c.len_utf8(),
                    _ => return,
                },
                _ => return,
            }
        }
    }

    /// Reads the next token without consuming it: (token, start, end). The
    /// parser peeks at most tokens several times: the last one is kept.
    fn peek_full(&mut self) -> (Tok<'a>, usize, usize) {
        if let Some((at, tok, start, end)) = self.peeked {
            if at == self.pos {
                self.pos = start;
                return (tok, start, end);
            }
        }
        let at = self.pos;
        let (tok, start, end) = self.lex();
        self.peeked = Some((at, tok, start, end));
        (tok, start, end)
    }

    fn lex(&mut self) -> (Tok<'a>, usize, usize) {
        self.skip_trivia();
        let start = self.pos;
        let text: &'a str = self.text;
        let rest = &text[start..];
        let Some(c) = rest.chars().next() else { return (Tok::Eof, start, start) };
        // Name characters are ASCII: a byte scan.
        let name_len = |s: &str| s.bytes().position(|b| !is_name_char(b as char)).unwrap_or(s.len());
        match c {
            '%' | '@' => {
                let len = name_len(&rest[1..]);
                let name = &rest[1..1 + len];
                let tok = if c == '%' { Tok::Local(name) } else { Tok::Global(name) };
                (tok, start, start + 1 + len)
            }
            '-' if rest.starts_with("->") => (Tok::Punct("->"), start, start + 2),
            '"' => match rest[1..].find(['"', '\n']) {
                Some(end) if rest.as_bytes()[1 + end] == b'"' => (Tok::Str(&rest[1..1 + end]), start, start + end + 2),
                // Unterminated: the rest of the line, reported where it is used.
                _ => (Tok::Literal(&rest[..1]), start, start + 1),
            },
            '0'..='9' | '-' | '+' => {
                let bytes = rest.as_bytes();
                let hex = rest.as_bytes().iter().position(|&b| b != b'-' && b != b'+').is_some_and(|i| rest[i..].starts_with("0x"));
                let mut end = 1;
                while end < bytes.len() {
                    let b = bytes[end] as char;
                    let exponent_sign =
                        (b == '-' || b == '+') && !hex && matches!(bytes[end - 1] as char, 'e' | 'E');
                    if is_name_char(b) || exponent_sign {
                        end += 1;
                    } else {
                        break;
                    }
                }
                (Tok::Literal(&rest[..end]), start, start + end)
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let len = name_len(rest);
                (Tok::Ident(&rest[..len]), start, start + len)
            }
            _ => {
                for p in ["(", ")", "{", "}", "<", ">", ",", ":", "="] {
                    if rest.starts_with(p) {
                        return (Tok::Punct(p), start, start + 1);
                    }
                }
                let len = c.len_utf8();
                (Tok::Literal(&rest[..len]), start, start + len)
            }
        }
    }

    fn peek(&mut self) -> Tok<'a> {
        self.peek_full().0
    }

    fn next(&mut self) -> (Tok<'a>, Span) {
        let (tok, start, end) = self.peek_full();
        self.pos = end;
        (tok, Span::new(start, end))
    }

    fn error<T>(&mut self, message: impl Into<String>) -> Result<T, Diagnostic> {
        let (_, start, end) = self.peek_full();
        Err(Diagnostic::new(message, Span::new(start, end.max(start + 1))))
    }

    fn expect_punct(&mut self, p: &'static str, context: &str) -> Result<Span, Diagnostic> {
        let (tok, start, end) = self.peek_full();
        if tok == Tok::Punct(p) {
            self.pos = end;
            Ok(Span::new(start, end))
        } else {
            self.error(format!("expected '{p}' {context}, found {}", tok.describe()))
        }
    }

    fn eat_punct(&mut self, p: &'static str) -> bool {
        let (tok, _, end) = self.peek_full();
        if tok == Tok::Punct(p) {
            self.pos = end;
            true
        } else {
            false
        }
    }

    fn eat_ident(&mut self, word: &str) -> bool {
        let (tok, _, end) = self.peek_full();
        if tok == Tok::Ident(word) {
            self.pos = end;
            true
        } else {
            false
        }
    }

    fn ty(&mut self) -> Result<(Type, Span), Diagnostic> {
        self.skip_trivia();
        let start = self.pos;
        // The scalar types by name, without the type parser (most types are).
        let bytes = &self.text.as_bytes()[start..];
        let len = bytes.iter().take(4).position(|&b| !is_name_char(b as char)).unwrap_or(4);
        let scalar = match &bytes[..len] {
            b"i1" => Some(Type::I1),
            b"i8" => Some(Type::I8),
            b"i16" => Some(Type::I16),
            b"i32" => Some(Type::I32),
            b"i64" => Some(Type::I64),
            b"f16" => Some(Type::F16),
            b"f32" => Some(Type::F32),
            b"f64" => Some(Type::F64),
            _ => None,
        };
        if let Some(ty) = scalar {
            self.pos = start + len;
            return Ok((ty, Span::new(start, self.pos)));
        }
        match parse_type_prefix(&self.text[start..]) {
            Ok((ty, used)) => {
                self.pos = start + used;
                Ok((ty, Span::new(start, start + used)))
            }
            Err(e) => {
                let at = start + e.offset;
                let len = self.text[at..].find(|c: char| c.is_whitespace() || ",)>}".contains(c)).unwrap_or(0).max(1);
                Err(Diagnostic::new(e.message, Span::new(at, at + len)))
            }
        }
    }

    fn number(&mut self, what: &str) -> Result<(u64, Span), Diagnostic> {
        let (tok, span) = self.next();
        let value = match &tok {
            Tok::Literal(text) => parse_unsigned(text),
            _ => None,
        };
        value
            .map(|v| (v, span))
            .ok_or_else(|| Diagnostic::new(format!("expected {what}, found {}", tok.describe()), span))
    }

    /// An ordering keyword, if the next token is one.
    fn mem_order(&mut self) -> Result<Option<MemOrder>, Diagnostic> {
        let order = match self.peek() {
            Tok::Ident(w) => MemOrder::ALL.into_iter().find(|o| o.mnemonic() == w),
            _ => None,
        };
        if order.is_some() {
            self.next();
        }
        Ok(order)
    }

    /// The scope keyword that follows an ordering.
    fn mem_scope(&mut self) -> Result<MemScope, Diagnostic> {
        let (tok, span) = self.next();
        match &tok {
            Tok::Ident(w) => MemScope::ALL.into_iter().find(|s| s.mnemonic() == *w),
            _ => None,
        }
        .ok_or_else(|| Diagnostic::new(format!("expected a scope (wavefront, workgroup, agent or system), found {}", tok.describe()), span))
    }

    /// An atomic's optional `ORDER SCOPE` (default `relaxed agent`).
    fn atomic_sync(&mut self) -> Result<Sync, Diagnostic> {
        match self.mem_order()? {
            Some(order) => Ok(Sync { order, scope: self.mem_scope()? }),
            None => Ok(Sync::default()),
        }
    }

    fn peek_span(&mut self) -> Span {
        let (_, start, end) = self.peek_full();
        Span::new(start, end)
    }

    /// A work-group size `(X, Y, Z)` of an attribute: each at least 1, at
    /// most 1024 work-items in all.
    fn size3(&mut self, name: &str) -> Result<[u32; 3], Diagnostic> {
        let open = self.expect_punct("(", &format!("after '{name}'"))?;
        let mut size = [0u32; 3];
        for (k, d) in size.iter_mut().enumerate() {
            if k > 0 {
                self.comma("between the dimensions")?;
            }
            let (v, span) = self.number("a work-group size")?;
            if v == 0 || v > 1024 {
                return Err(Diagnostic::new(format!("a work-group dimension must be between 1 and 1024, not {v}"), span));
            }
            *d = v as u32;
        }
        let close = self.expect_punct(")", &format!("after the three sizes of '{name}'"))?;
        if size.iter().map(|&v| u64::from(v)).product::<u64>() > 1024 {
            return Err(Diagnostic::new(format!("'{name}' asks for more than 1024 work-items per work-group"), Span::new(open.start as usize, (close.start + close.len) as usize)));
        }
        Ok(size)
    }

    /// `printf_format "ID:N:SIZE1:...:FORMAT"`: one entry of the code object's
    /// `amdhsa.printf` list, with `\n`, `\t`, `\\` and `\xHH` escapes (the
    /// string holds no `"` of its own: that is `\x22`).
    fn printf_format(&mut self) -> Result<String, Diagnostic> {
        self.next();
        let (tok, span) = self.next();
        let Tok::Str(raw) = tok else {
            return Err(Diagnostic::new(format!("expected a quoted printf format after 'printf_format', found {}", tok.describe()), span));
        };
        let text = super::print::unescape(raw).map_err(|e| Diagnostic::new(format!("printf format: {e}"), span))?;
        let mut fields = text.splitn(3, ':');
        let id = fields.next().and_then(|f| f.parse::<u32>().ok());
        let n = fields.next().and_then(|f| f.parse::<usize>().ok());
        let (Some(_), Some(n)) = (id, n) else {
            return Err(Diagnostic::new("a printf format starts 'ID:N:' (its id and argument count)", span));
        };
        let sizes: Vec<&str> = fields.next().unwrap_or("").splitn(n + 1, ':').collect();
        if sizes.len() != n + 1 || sizes[..n].iter().any(|s| s.parse::<u32>().is_err()) {
            return Err(Diagnostic::new(format!("a printf format with {n} arguments has {n} byte sizes after 'ID:N:', then the format"), span));
        }
        Ok(text)
    }

    /// `data @NAME, align A, bytes "HEX"` or `data @NAME, align A, zeros N`:
    /// an object of the module (two hex digits a byte, in memory order),
    /// read-only unless `writable` follows the alignment.
    /// Each `addr` clause's span comes with the data (in the order of
    /// `Data::addrs`): its target is checked once every data line is read.
    fn data(&mut self) -> Result<(Data, Span, Vec<Span>), Diagnostic> {
        let (_, start) = self.next();
        let (tok, span) = self.next();
        let Tok::Global(name) = tok else {
            return Err(Diagnostic::new(format!("expected a data name like '@table' after 'data', found {}", tok.describe()), span));
        };
        let name = name.to_string();
        self.comma("after the data's name")?;
        if !self.eat_ident("align") {
            return self.error("expected 'align N' after the data's name");
        }
        let (align, align_span) = self.number("an alignment")?;
        if align == 0 || !align.is_power_of_two() || align > 4096 {
            return Err(Diagnostic::new("a data alignment must be a power of two between 1 and 4096", align_span));
        }
        self.comma("after the alignment")?;
        let writable = self.eat_ident("writable");
        if writable {
            self.comma("after 'writable'")?;
        }
        let bytes = if self.eat_ident("zeros") {
            let (len, len_span) = self.number("a size in bytes")?;
            if len > MAX_DATA_BYTES {
                return Err(Diagnostic::new(format!("data of {len} bytes (at most {MAX_DATA_BYTES})"), len_span));
            }
            vec![0; len as usize]
        } else if self.eat_ident("bytes") {
            let (tok, span) = self.next();
            let Tok::Str(hex) = tok else {
                return Err(Diagnostic::new(format!("expected a quoted string of hex digits after 'bytes', found {}", tok.describe()), span));
            };
            if hex.len() % 2 != 0 || !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
                return Err(Diagnostic::new("data bytes are pairs of hex digits", span));
            }
            if hex.len() as u64 / 2 > MAX_DATA_BYTES {
                return Err(Diagnostic::new(format!("data of more than {MAX_DATA_BYTES} bytes"), span));
            }
            (0..hex.len() / 2).map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("checked hex digits")).collect()
        } else {
            return self.error("expected 'writable', 'bytes \"HEX\"' or 'zeros N' after the alignment");
        };
        // `, addr OFFSET @NAME [+ ADDEND]`, any number of times.
        let mut addrs: Vec<(DataAddr, Span)> = Vec::new();
        while self.peek() == Tok::Punct(",") {
            self.next();
            if !self.eat_ident("addr") {
                return self.error("expected 'addr OFFSET @NAME' after a comma in a data line");
            }
            let (offset, offset_span) = self.number("the byte offset of an address in the data")?;
            if offset.checked_add(8).is_none_or(|end| end > bytes.len() as u64) {
                return Err(Diagnostic::new(format!("an address at byte {offset} does not fit in data of {} bytes (it takes 8)", bytes.len()), offset_span));
            }
            let (tok, target_span) = self.next();
            let Tok::Global(target) = tok else {
                return Err(Diagnostic::new(format!("expected the name of the data whose address it holds, like '@table', found {}", tok.describe()), target_span));
            };
            let mut end = target_span.range().end;
            let addend = match self.peek() {
                Tok::Literal("+") => {
                    self.next();
                    let (n, span) = self.number("an addend in bytes")?;
                    end = span.range().end;
                    n
                }
                Tok::Literal(text) if text.starts_with('+') => {
                    let (_, span) = self.next();
                    end = span.range().end;
                    parse_unsigned(&text[1..]).ok_or_else(|| Diagnostic::new(format!("expected an addend in bytes, found '{text}'"), span))?
                }
                _ => 0,
            };
            let span = Span::new(offset_span.range().start, end);
            let at = offset as usize;
            if bytes[at..at + 8].iter().any(|&b| b != 0) {
                return Err(Diagnostic::new(format!("the 8 bytes at offset {offset} hold an address: they must be zero in the data's bytes"), span));
            }
            if let Some((other, _)) = addrs.iter().find(|(a, _)| u64::from(a.offset) < offset + 8 && offset < u64::from(a.offset) + 8) {
                return Err(Diagnostic::new(format!("the address at offset {offset} overlaps the one at offset {}", other.offset), span));
            }
            addrs.push((DataAddr { offset: offset as u32, target: target.to_string(), addend }, span));
        }
        addrs.sort_by_key(|(a, _)| a.offset);
        let end = self.pos;
        let spans = addrs.iter().map(|(_, s)| *s).collect();
        let addrs = addrs.into_iter().map(|(a, _)| a).collect();
        Ok((Data { name, align: align as u32, bytes, writable, addrs }, Span::new(start.start as usize, end), spans))
    }

    /// `target device_triples = ""amdgcn-amd-amdhsa--gfx90a,amdgcn-amd-amdhsa--gfx942"`:
    /// the devices the module is compiled for, each a target id amdgpu-cg
    /// compiles for, none twice.
    fn device_triples(&mut self) -> Result<Vec<String>, Diagnostic> {
        self.next();
        if !self.eat_ident("device_triples") {
            return self.error("expected 'device_triples' after 'target'");
        }
        self.expect_punct("=", "after 'device_triples'")?;
        self.skip_trivia();
        let open = self.pos;
        if !self.text[open..].starts_with('"') {
            return self.error("expected a quoted, comma-separated list of device triples");
        }
        let body_start = open + 1;
        let Some(len) = self.text[body_start..].find(['"', '\n']).filter(|&l| self.text[body_start + l..].starts_with('"')) else {
            return Err(Diagnostic::new("the device triples' string is not closed on its line", Span::new(open, open + 1)));
        };
        self.pos = body_start + len + 1;
        let mut triples: Vec<String> = Vec::new();
        let mut at = body_start;
        for entry in self.text[body_start..body_start + len].split(',') {
            let lead = entry.len() - entry.trim_start().len();
            let id = entry.trim();
            let span = Span::new(at + lead, (at + lead + id.len()).max(at + lead + 1));
            at += entry.len() + 1;
            let Some(processor) = id.strip_prefix("amdgcn-amd-amdhsa--") else {
                return Err(Diagnostic::new(format!("device triple '{id}' is not amdgcn-amd-amdhsa--<processor>[:feature+|-]"), span));
            };
            let target = crate::codeobj::CodeObjectTarget::parse_with_wave(processor).map_err(|e| Diagnostic::new(format!("device triple '{id}': {e}"), span))?;
            let canonical = format!("amdgcn-amd-amdhsa--{}", target.target_id_with_wave());
            if triples.contains(&canonical) {
                return Err(Diagnostic::new(format!("device triple '{id}' is listed twice"), span));
            }
            triples.push(canonical);
        }
        Ok(triples)
    }

    /// `(N)` after attribute `name`, N in 1..=`most` (else `range`, at N).
    fn bounded_attr(&mut self, name: &str, what: &str, most: u64, range: &str) -> Result<u32, Diagnostic> {
        self.expect_punct("(", &format!("after '{name}'"))?;
        let (v, vspan) = self.number(what)?;
        if v == 0 || v > most {
            return Err(Diagnostic::new(format!("{range}, not {v}"), vspan));
        }
        self.expect_punct(")", &format!("after {what}"))?;
        Ok(v as u32)
    }

    /// The attributes after a kernel's parameter list (docs/mir.md).
    fn kernel_attrs(&mut self, kind: FuncKind) -> Result<KernelAttrs, Diagnostic> {
        let mut attrs = KernelAttrs::default();
        let mut reqd_at = Span::NONE;
        loop {
            let (tok, span) = match self.peek() {
                Tok::Ident("reqd_work_group_size" | "max_work_group_size" | "work_group_size_hint" | "min_waves_per_simd") => self.next(),
                _ => break,
            };
            let Tok::Ident(name) = tok else { unreachable!() };
            if kind != FuncKind::Kernel {
                return Err(Diagnostic::new(format!("'{name}' is a kernel attribute; '@' functions called by kernels have none"), span));
            }
            let duplicate = match name {
                "reqd_work_group_size" => {
                    reqd_at = span;
                    attrs.reqd_work_group_size.replace(self.size3(name)?).is_some()
                }
                "work_group_size_hint" => attrs.work_group_size_hint.replace(self.size3(name)?).is_some(),
                "min_waves_per_simd" => {
                    let v = self.bounded_attr(name, "a number of waves", 16, "a SIMD runs between 1 and 16 waves (8 on gfx90a and gfx942)")?;
                    attrs.min_waves_per_simd.replace(v).is_some()
                }
                _ => {
                    let v = self.bounded_attr(name, "a number of work-items", 1024, "a work-group has between 1 and 1024 work-items")?;
                    attrs.max_work_group_size.replace(v).is_some()
                }
            };
            if duplicate {
                return Err(Diagnostic::new(format!("'{name}' is given twice"), span));
            }
        }
        if let (Some(r), Some(m)) = (attrs.reqd_work_group_size, attrs.max_work_group_size) {
            if r.iter().product::<u32>() > m {
                return Err(Diagnostic::new(format!("reqd_work_group_size({}, {}, {}) has more work-items than max_work_group_size({m})", r[0], r[1], r[2]), reqd_at));
            }
        }
        Ok(attrs)
    }

    fn function(&mut self) -> Result<(Function, Vec<PendingCallConst>), Diagnostic> {
        let (tok, kw_span) = self.next();
        let kind = match tok {
            Tok::Ident("kernel") => FuncKind::Kernel,
            Tok::Ident("func") => FuncKind::Device,
            _ => {
                return Err(Diagnostic::new(
                    format!("expected 'kernel' or 'func' at the start of a function, found {}", tok.describe()),
                    kw_span,
                ))
            }
        };
        let (tok, name_span) = self.next();
        let Tok::Global(name) = tok else {
            return Err(Diagnostic::new(
                format!("expected a function name like '@main', found {}", tok.describe()),
                name_span,
            ));
        };
        if name.is_empty() {
            return Err(Diagnostic::new("expected a function name after '@'", name_span));
        }
        let mut scope = FuncScope { values: Vec::new(), by_name: HashMap::new(), undefined: HashMap::new(), defined: Vec::new() };
        self.expect_punct("(", "to open the parameter list")?;
        let mut params = Vec::new();
        if !self.eat_punct(")") {
            loop {
                let (tok, span) = self.next();
                let Tok::Local(pname) = tok else {
                    return Err(Diagnostic::new(format!("expected a parameter like '%x: i32', found {}", tok.describe()), span));
                };
                self.expect_punct(":", "after the parameter name")?;
                let inreg = self.eat_ident("inreg");
                let (ty, _) = self.ty()?;
                let mut info = ArgInfo::default();
                loop {
                    if self.eat_ident("const") {
                        info.is_const = true;
                    } else if self.eat_ident("restrict") {
                        info.is_restrict = true;
                    } else if self.eat_ident("volatile") {
                        info.is_volatile = true;
                    } else if self.eat_ident("readonly") {
                        info.access = Some(ArgAccess::ReadOnly);
                    } else if self.eat_ident("writeonly") {
                        info.access = Some(ArgAccess::WriteOnly);
                    } else if self.eat_ident("align") {
                        let (tok, span) = self.next();
                        let align = match tok {
                            Tok::Literal(t) => t.parse::<u32>().ok().filter(|a| a.is_power_of_two() && *a <= 4096),
                            _ => None,
                        };
                        let Some(align) = align else {
                            return Err(Diagnostic::new(format!("expected the pointee's alignment (a power of two up to 4096) after 'align', found {}", tok.describe()), span));
                        };
                        info.pointee_align = Some(align);
                    } else {
                        break;
                    }
                }
                if let Tok::Str(name) = self.peek() {
                    info.type_name = Some(name.to_string());
                    self.next();
                }
                let value = scope.define(pname, ty, span)?;
                params.push(Param { value, inreg, info });
                if self.eat_punct(")") {
                    break;
                }
                self.expect_punct(",", "or ')' in the parameter list")?;
            }
        }
        let ret = if self.eat_punct("->") { Some(self.ty()?.0) } else { None };
        let conv = if self.eat_ident("callconv") {
            self.expect_punct("(", "after 'callconv'")?;
            let (tok, span) = self.next();
            let conv = match tok {
                Tok::Ident("llvm") => CallConv::Llvm,
                Tok::Ident("amdgpu_cg") => CallConv::AmdgpuCg,
                _ => return Err(Diagnostic::new(format!("expected a calling convention ('llvm' or 'amdgpu_cg'), found {}", tok.describe()), span)),
            };
            if kind == FuncKind::Kernel {
                return Err(Diagnostic::new("kernels have no calling convention (callconv is for 'func')", span));
            }
            self.expect_punct(")", "after the calling convention")?;
            conv
        } else {
            CallConv::AmdgpuCg
        };
        let inline = match self.peek() {
            Tok::Ident(word @ ("noinline" | "alwaysinline")) => {
                let (_, span) = self.next();
                if kind == FuncKind::Kernel {
                    return Err(Diagnostic::new(format!("kernels are never called, so they take no '{word}' (it is for 'func')"), span));
                }
                if word == "noinline" {
                    InlineHint::Never
                } else {
                    InlineHint::Always
                }
            }
            _ => InlineHint::Auto,
        };
        let attrs = self.kernel_attrs(kind)?;
        self.expect_punct("{", "to open the function body")?;

        // Blocks are numbered in order of first mention so that branches can refer
        // to blocks further down.
        let mut block_ids: HashMap<String, BlockId> = HashMap::new();
        let mut block_slots: Vec<Option<Block>> = Vec::new();
        let mut block_first_use: HashMap<BlockId, Span> = HashMap::new();
        let mut order = Vec::new();
        let mut pending_calls = Vec::new();
        let mut pending_branches: Vec<PendingBranchConst> = Vec::new();
        loop {
            if self.eat_punct("}") {
                break;
            }
            let (tok, label_span) = self.next();
            let Tok::Ident(label) = tok else {
                if tok == Tok::Eof {
                    return Err(Diagnostic::new(format!("unexpected end of input: function '@{name}' is not closed with '}}'"), label_span));
                }
                return Err(Diagnostic::new(format!("expected a block label like 'entry:', found {}", tok.describe()), label_span));
            };
            let id = *block_ids.entry(label.to_string()).or_insert_with(|| {
                block_slots.push(None);
                BlockId(block_slots.len() as u32 - 1)
            });
            if block_slots[id.0 as usize].is_some() {
                return Err(Diagnostic::new(format!("block '{label}' is defined more than once"), label_span));
            }
            let mut bparams = Vec::new();
            if self.eat_punct("(") {
                loop {
                    let (tok, span) = self.next();
                    let Tok::Local(pname) = tok else {
                        return Err(Diagnostic::new(format!("expected a block parameter like '%x: i32', found {}", tok.describe()), span));
                    };
                    self.expect_punct(":", "after the block parameter name")?;
                    let (ty, _) = self.ty()?;
                    bparams.push(scope.define(pname, ty, span)?);
                    if self.eat_punct(")") {
                        break;
                    }
                    self.expect_punct(",", "or ')' in the block parameter list")?;
                }
            }
            self.expect_punct(":", "after the block label")?;
            let block_index = id.0 as usize;
            let mut insts = Vec::new();
            let (term, term_span) = loop {
                let (tok, start, _) = self.peek_full();
                match tok {
                    Tok::Ident(word) if matches!(word, "br" | "brif" | "ret" | "unreachable") => {
                        self.next();
                        let term = self.terminator(
                            word,
                            &mut scope,
                            ret.as_ref(),
                            &mut block_ids,
                            &mut block_slots,
                            &mut block_first_use,
                            block_index,
                            &mut pending_branches,
                        )?;
                        break (term, Span::new(start, self.pos));
                    }
                    Tok::Eof | Tok::Punct("}") => {
                        return self.error(format!("block '{label}' does not end with a terminator (br, brif, ret or unreachable)"));
                    }
                    _ => {
                        let inst = self.instruction(&mut scope, &mut pending_calls, block_index, insts.len())?;
                        insts.push(inst);
                    }
                }
            };
            block_slots[block_index] = Some(Block { name: label.to_string(), params: bparams, insts, term, term_span, span: label_span });
            order.push(id);
        }
        // Every mentioned block must be defined.
        for (i, slot) in block_slots.iter().enumerate() {
            if slot.is_none() {
                let name = block_ids.iter().find(|(_, id)| id.0 as usize == i).map(|(n, _)| n.clone()).unwrap_or_default();
                let span = block_first_use.get(&BlockId(i as u32)).copied().unwrap_or(Span::NONE);
                return Err(Diagnostic::new(format!("branch to undefined block '{name}'"), span));
            }
        }
        if order.is_empty() {
            return Err(Diagnostic::new(format!("function '@{name}' has no blocks"), name_span));
        }
        if let Some((&v, &span)) = scope.undefined.iter().min_by_key(|(_, span)| span.start) {
            return Err(Diagnostic::new(format!("use of undefined value '%{}'", scope.values[v.0 as usize].name), span));
        }
        // Renumber blocks into text order (the entry block is the first written).
        let mut renumber = vec![BlockId(0); block_slots.len()];
        for (new_index, old) in order.iter().enumerate() {
            renumber[old.0 as usize] = BlockId(new_index as u32);
        }
        let mut blocks: Vec<Block> = Vec::with_capacity(order.len());
        let mut slots: Vec<Option<Block>> = block_slots;
        for old in &order {
            let mut block = slots[old.0 as usize].take().expect("every block was checked to be defined");
            match &mut block.term {
                Terminator::Br(call) => call.block = renumber[call.block.0 as usize],
                Terminator::BrIf { then_to, else_to, .. } => {
                    then_to.block = renumber[then_to.block.0 as usize];
                    else_to.block = renumber[else_to.block.0 as usize];
                }
                _ => {}
            }
            blocks.push(block);
        }
        let mut func = Function { name: name.to_string(), kind, conv, inline, attrs, params, ret, blocks, values: scope.values, span: kw_span };
        for pending in pending_branches {
            let new_index = renumber[pending.block].0 as usize;
            let term = &func.blocks[new_index].term;
            let call = match (term, pending.call) {
                (Terminator::Br(call), 0) => call,
                (Terminator::BrIf { then_to, .. }, 0) => then_to,
                (Terminator::BrIf { else_to, .. }, _) => else_to,
                _ => continue,
            };
            let target = func.block(call.block);
            let Some(&param) = target.params.get(pending.arg_index) else {
                return Err(Diagnostic::new(
                    format!("block '{}' takes {} arguments, but more are passed", target.name, target.params.len()),
                    pending.span,
                ));
            };
            let ty = func.value_type(param).clone();
            let c = literal_for_type(&pending.literal, &ty, pending.span)?;
            let term = &mut func.blocks[new_index].term;
            let call = match (term, pending.call) {
                (Terminator::Br(call), 0) => call,
                (Terminator::BrIf { then_to, .. }, 0) => then_to,
                (Terminator::BrIf { else_to, .. }, _) => else_to,
                _ => continue,
            };
            call.args[pending.arg_index] = Operand::Const(c);
        }
        // Constant call arguments are typed after the whole module is read;
        // their block indices must follow the renumbering too.
        let mut pending_calls = pending_calls;
        for pending in &mut pending_calls {
            pending.block = renumber[pending.block].0 as usize;
        }
        Ok((func, pending_calls))
    }

    /// An operand whose constant form has type `ty`.
    fn operand(&mut self, scope: &mut FuncScope<'a>, ty: &Type) -> Result<Operand, Diagnostic> {
        let (tok, span) = self.next();
        match tok {
            Tok::Local(name) => Ok(Operand::Value(scope.use_value(name, span))),
            Tok::Literal(text) | Tok::Ident(text) if is_literal_word(text) => {
                Ok(Operand::Const(literal_for_type(text, ty, span)?))
            }
            other => Err(Diagnostic::new(format!("expected a value or a constant, found {}", other.describe()), span)),
        }
    }

    /// An operand that must be an SSA value (pointers, aggregates).
    fn value_operand(&mut self, scope: &mut FuncScope<'a>, what: &str) -> Result<Operand, Diagnostic> {
        let (tok, span) = self.next();
        match tok {
            Tok::Local(name) => Ok(Operand::Value(scope.use_value(name, span))),
            other => Err(Diagnostic::new(format!("expected {what} (a '%' value), found {}", other.describe()), span)),
        }
    }

    fn comma(&mut self, context: &str) -> Result<(), Diagnostic> {
        self.expect_punct(",", context).map(|_| ())
    }

    fn instruction(
        &mut self,
        scope: &mut FuncScope<'a>,
        pending_calls: &mut Vec<PendingCallConst>,
        block: usize,
        inst_index: usize,
    ) -> Result<Inst, Diagnostic> {
        let (first, start, _) = self.peek_full();
        let result_name = if let Tok::Local(name) = first {
            let (_, span) = self.next();
            self.expect_punct("=", "after the result name")?;
            Some((name, span))
        } else {
            None
        };
        let (tok, op_span) = self.next();
        let Tok::Ident(opcode) = tok else {
            return Err(Diagnostic::new(format!("expected an instruction, found {}", tok.describe()), op_span));
        };
        let op = self.op(opcode, op_span, scope, pending_calls, block, inst_index)?;
        let span = Span::new(start, self.pos);
        let needs_result = !matches!(op, Op::Store { .. } | Op::Barrier | Op::Fence { .. } | Op::Call { .. });
        let result = match result_name {
            Some((name, name_span)) => {
                if matches!(op, Op::Store { .. } | Op::Barrier | Op::Fence { .. }) {
                    return Err(Diagnostic::new(format!("'{opcode}' produces no value and cannot be assigned to '%{name}'"), name_span));
                }
                // Types that depend on other values (ptradd, extract, insert, call)
                // are filled in by `refresh_result_types` once everything is read.
                let ty = explicit_result_type(&op).unwrap_or(Type::I1);
                Some(scope.define(name, ty, name_span)?)
            }
            None if needs_result => {
                return Err(Diagnostic::new(format!("the result of '{opcode}' must be named, as in '%x = {opcode} ...'"), op_span));
            }
            None => None,
        };
        Ok(Inst { result, op, span })
    }

    /// `T a, b, c`, all three of type T (fma and the integer ternaries).
    fn three_operands(&mut self, scope: &mut FuncScope<'a>) -> Result<(Type, [Operand; 3]), Diagnostic> {
        let (ty, _) = self.ty()?;
        let a = self.operand(scope, &ty)?;
        self.comma("between the operands")?;
        let b = self.operand(scope, &ty)?;
        self.comma("between the operands")?;
        let c = self.operand(scope, &ty)?;
        Ok((ty, [a, b, c]))
    }

    fn op(
        &mut self,
        opcode: &str,
        op_span: Span,
        scope: &mut FuncScope<'a>,
        pending_calls: &mut Vec<PendingCallConst>,
        block: usize,
        inst_index: usize,
    ) -> Result<Op, Diagnostic> {
        let family = operator_mnemonics().get(opcode).copied();
        if let Some(Operator::Binary(op)) = family {
            let (ty, _) = self.ty()?;
            let lhs = self.operand(scope, &ty)?;
            self.comma("between the operands")?;
            let rhs = self.operand(scope, &op.rhs_type(&ty))?;
            return Ok(Op::Binary { op, ty, lhs, rhs });
        }
        if let Some(Operator::Ternary(op)) = family {
            let (ty, [a, b, c]) = self.three_operands(scope)?;
            return Ok(Op::Ternary { op, ty, a, b, c });
        }
        if let Some(Operator::Unary(op)) = family {
            let (ty, _) = self.ty()?;
            let arg = self.operand(scope, &ty)?;
            return Ok(Op::Unary { op, ty, arg });
        }
        if let Some(Operator::Cast(op)) = family {
            let (from, _) = self.ty()?;
            let arg = self.operand(scope, &from)?;
            if !self.eat_ident("to") {
                return self.error(format!("expected 'to' and the result type in '{opcode}'"));
            }
            let (to, _) = self.ty()?;
            return Ok(Op::Cast { op, from, arg, to });
        }
        if let Some(Operator::Builtin(kind)) = family {
            if kind.dimensionless() {
                return Ok(Op::Builtin { kind, dim: 0 });
            }
            let (tok, span) = self.next();
            let dim = match tok {
                Tok::Ident("x") => 0,
                Tok::Ident("y") => 1,
                Tok::Ident("z") => 2,
                _ => return Err(Diagnostic::new(format!("expected dimension x, y or z, found {}", tok.describe()), span)),
            };
            return Ok(Op::Builtin { kind, dim });
        }
        match opcode {
            "const" => {
                let (ty, _) = self.ty()?;
                let (tok, span) = self.next();
                match tok {
                    Tok::Literal(text) | Tok::Ident(text) if is_literal_word(text) => {
                        Ok(Op::Const(literal_for_type(text, &ty, span)?))
                    }
                    other => Err(Diagnostic::new(format!("expected a constant, found {}", other.describe()), span)),
                }
            }
            "fma" => {
                let (ty, [a, b, c]) = self.three_operands(scope)?;
                Ok(Op::Fma { ty, a, b, c })
            }
            "icmp" => {
                let pred = self.predicate(IntPred::ALL.into_iter().map(|p| (p.mnemonic(), p)), "integer")?;
                let (ty, _) = self.ty()?;
                let lhs = self.operand(scope, &ty)?;
                self.comma("between the operands")?;
                let rhs = self.operand(scope, &ty)?;
                Ok(Op::Icmp { pred, ty, lhs, rhs })
            }
            "fcmp" => {
                let pred = self.predicate(FloatPred::ALL.into_iter().map(|p| (p.mnemonic(), p)), "float")?;
                let (ty, _) = self.ty()?;
                let lhs = self.operand(scope, &ty)?;
                self.comma("between the operands")?;
                let rhs = self.operand(scope, &ty)?;
                Ok(Op::Fcmp { pred, ty, lhs, rhs })
            }
            "select" => {
                let (ty, _) = self.ty()?;
                let cond = self.operand(scope, &Type::I1)?;
                self.comma("after the condition")?;
                let if_true = self.operand(scope, &ty)?;
                self.comma("between the operands")?;
                let if_false = self.operand(scope, &ty)?;
                Ok(Op::Select { ty, cond, if_true, if_false })
            }
            "load" => {
                let volatile = self.eat_ident("volatile");
                let (ty, _) = self.ty()?;
                let ptr = self.value_operand(scope, "a pointer")?;
                let align = self.optional_align(&ty)?;
                Ok(Op::Load { ty, ptr, align, volatile })
            }
            "store" => {
                let volatile = self.eat_ident("volatile");
                let (ty, _) = self.ty()?;
                let value = self.operand(scope, &ty)?;
                self.comma("between the value and the pointer")?;
                let ptr = self.value_operand(scope, "a pointer")?;
                let align = self.optional_align(&ty)?;
                Ok(Op::Store { ty, value, ptr, align, volatile })
            }
            "fence" => {
                let order = self.mem_order()?.ok_or_else(|| Diagnostic::new("expected an ordering after 'fence' (acquire, release, acq_rel or seq_cst)", self.peek_span()))?;
                if order == MemOrder::Relaxed {
                    return self.error("a fence cannot be relaxed (acquire, release, acq_rel or seq_cst)");
                }
                let scope = self.mem_scope()?;
                Ok(Op::Fence { order, scope })
            }
            "ptradd" => {
                let ptr = self.value_operand(scope, "a pointer")?;
                self.comma("between the pointer and the offset")?;
                let offset = self.operand(scope, &Type::I64)?;
                Ok(Op::PtrAdd { ptr, offset })
            }
            "atomic" => {
                let (tok, span) = self.next();
                let op = match &tok {
                    Tok::Ident(name) => AtomicOp::ALL.into_iter().find(|a| a.mnemonic() == *name),
                    _ => None,
                };
                let Some(op) = op else {
                    return Err(Diagnostic::new(format!("unknown atomic operation {}", tok.describe()), span));
                };
                let (ty, _) = self.ty()?;
                let ptr = self.value_operand(scope, "a pointer")?;
                self.comma("between the pointer and the value")?;
                let value = self.operand(scope, &ty)?;
                let sync = self.atomic_sync()?;
                Ok(Op::AtomicRmw { op, ty, ptr, value, sync })
            }
            "cmpxchg" => {
                let (ty, _) = self.ty()?;
                let ptr = self.value_operand(scope, "a pointer")?;
                self.comma("after the pointer")?;
                let expected = self.operand(scope, &ty)?;
                self.comma("between the expected and the new value")?;
                let new = self.operand(scope, &ty)?;
                let sync = self.atomic_sync()?;
                Ok(Op::CmpXchg { ty, ptr, expected, new, sync })
            }
            "stack_slot" | "lds_slot" => {
                let (size, size_span) = self.number("a size in bytes")?;
                self.comma("after the size")?;
                if !self.eat_ident("align") {
                    return self.error("expected 'align N' after the size");
                }
                let (align, align_span) = self.number("an alignment")?;
                if size > u64::from(u32::MAX) {
                    return Err(Diagnostic::new("slot size is too large", size_span));
                }
                if align == 0 || !align.is_power_of_two() || align > 4096 {
                    return Err(Diagnostic::new("alignment must be a power of two between 1 and 4096", align_span));
                }
                let (size, align) = (size as u32, align as u32);
                Ok(if opcode == "stack_slot" { Op::StackSlot { size, align } } else { Op::LdsSlot { size, align } })
            }
            "call" => {
                let (tok, span) = self.next();
                let Tok::Global(callee) = tok else {
                    return Err(Diagnostic::new(format!("expected a function name like '@f', found {}", tok.describe()), span));
                };
                self.expect_punct("(", "to open the argument list")?;
                let mut args = Vec::new();
                if !self.eat_punct(")") {
                    loop {
                        let (tok, span) = self.next();
                        match tok {
                            Tok::Local(name) => args.push(Operand::Value(scope.use_value(name, span))),
                            Tok::Literal(text) | Tok::Ident(text) if is_literal_word(text) => {
                                pending_calls.push(PendingCallConst {
                                    callee: callee.to_string(),
                                    block,
                                    inst: inst_index,
                                    arg_index: args.len(),
                                    literal: text.to_string(),
                                    span,
                                });
                                // Placeholder until the callee's parameter type is known.
                                args.push(Operand::Const(Const { ty: Type::I32, bits: 0 }));
                            }
                            other => {
                                return Err(Diagnostic::new(format!("expected an argument, found {}", other.describe()), span))
                            }
                        }
                        if self.eat_punct(")") {
                            break;
                        }
                        self.comma("or ')' in the argument list")?;
                    }
                }
                Ok(Op::Call { callee: callee.to_string(), args })
            }
            "barrier" => Ok(Op::Barrier),
            "dynamic_lds" => Ok(Op::DynamicLds),
            "data_addr" => {
                let (tok, span) = self.next();
                let Tok::Global(name) = tok else {
                    return Err(Diagnostic::new(format!("expected a data name like '@table', found {}", tok.describe()), span));
                };
                let space = if self.writable_data.contains(name) { AddrSpace::Global } else { AddrSpace::Constant };
                Ok(Op::DataAddr { name: name.to_string(), space })
            }
            "lane_id" => Ok(Op::Wave { op: WaveOp::LaneId, ty: Type::I32, args: Vec::new() }),
            "wave_size" => Ok(Op::Wave { op: WaveOp::WaveSize, ty: Type::I32, args: Vec::new() }),
            "ballot" => {
                let c = self.operand(scope, &Type::I1)?;
                Ok(Op::Wave { op: WaveOp::Ballot, ty: Type::I64, args: vec![c] })
            }
            "wave_reduce" | "wave_scan_incl" | "wave_scan_excl" => {
                let (tok, span) = self.next();
                let bop = match &tok {
                    Tok::Ident(name) => WaveOp::REDUCIBLE.into_iter().find(|b| b.mnemonic() == *name),
                    _ => None,
                };
                let Some(bop) = bop else {
                    return Err(Diagnostic::new(format!("expected a reduction (add, and, or, xor, smin, smax, umin, umax, fadd, fmin, fmax), found {}", tok.describe()), span));
                };
                let (ty, _) = self.ty()?;
                let x = self.operand(scope, &ty)?;
                let op = match opcode {
                    "wave_reduce" => WaveOp::Reduce(bop),
                    "wave_scan_incl" => WaveOp::InclusiveScan(bop),
                    _ => WaveOp::ExclusiveScan(bop),
                };
                Ok(Op::Wave { op, ty, args: vec![x] })
            }
            "readfirstlane" | "readlane" | "shuffle" => {
                let (ty, _) = self.ty()?;
                let x = self.operand(scope, &ty)?;
                let op = match opcode {
                    "readfirstlane" => WaveOp::ReadFirstLane,
                    "readlane" => WaveOp::ReadLane,
                    _ => WaveOp::Shuffle,
                };
                let mut args = vec![x];
                if op != WaveOp::ReadFirstLane {
                    self.comma("between the value and the lane")?;
                    args.push(self.operand(scope, &Type::I32)?);
                }
                Ok(Op::Wave { op, ty, args })
            }
            "extract" => {
                let agg = self.value_operand(scope, "a vector or struct")?;
                self.comma("before the index")?;
                let (index, span) = self.number("an index")?;
                let index = u32::try_from(index).map_err(|_| Diagnostic::new("index is too large", span))?;
                Ok(Op::Extract { agg, index })
            }
            "insert" => {
                let agg = self.value_operand(scope, "a vector or struct")?;
                self.comma("after the aggregate")?;
                let value = self.value_operand(scope, "the inserted value")?;
                self.comma("before the index")?;
                let (index, span) = self.number("an index")?;
                let index = u32::try_from(index).map_err(|_| Diagnostic::new("index is too large", span))?;
                Ok(Op::Insert { agg, value, index })
            }
            "make" => {
                let (ty, ty_span) = self.ty()?;
                let field_types: Vec<Type> = match &ty {
                    Type::Vector(elem, n) => vec![(**elem).clone(); usize::from(*n)],
                    Type::Struct(fields) => fields.clone(),
                    other => {
                        return Err(Diagnostic::new(format!("'make' builds vectors and structs, not '{other}'"), ty_span));
                    }
                };
                let mut elems = Vec::new();
                for (i, field_ty) in field_types.iter().enumerate() {
                    if i > 0 {
                        self.comma("between the elements")?;
                    }
                    elems.push(self.operand(scope, field_ty)?);
                }
                Ok(Op::Make { ty, elems })
            }
            _ => Err(Diagnostic::new(format!("unknown instruction '{opcode}'"), op_span)),
        }
    }

    fn predicate<P>(&mut self, mut options: impl Iterator<Item = (&'static str, P)>, kind: &str) -> Result<P, Diagnostic> {
        let (tok, span) = self.next();
        let found = match &tok {
            Tok::Ident(word) => options.find(|(name, _)| name == word).map(|(_, p)| p),
            _ => None,
        };
        found.ok_or_else(|| Diagnostic::new(format!("unknown {kind} predicate {}", tok.describe()), span))
    }

    fn optional_align(&mut self, ty: &Type) -> Result<u32, Diagnostic> {
        if self.eat_punct(",") {
            if !self.eat_ident("align") {
                return self.error("expected 'align N'");
            }
            let (align, span) = self.number("an alignment")?;
            if align == 0 || !align.is_power_of_two() || align > 4096 {
                return Err(Diagnostic::new("alignment must be a power of two between 1 and 4096", span));
            }
            Ok(align as u32)
        } else {
            Ok(ty.align())
        }
    }

    fn block_call(
        &mut self,
        scope: &mut FuncScope<'a>,
        block_ids: &mut HashMap<String, BlockId>,
        block_slots: &mut Vec<Option<Block>>,
        first_use: &mut HashMap<BlockId, Span>,
        pending: &mut Vec<PendingBranchConst>,
        from_block: usize,
        call_index: usize,
    ) -> Result<BlockCall, Diagnostic> {
        let (tok, span) = self.next();
        let Tok::Ident(name) = tok else {
            return Err(Diagnostic::new(format!("expected a block name, found {}", tok.describe()), span));
        };
        let id = *block_ids.entry(name.to_string()).or_insert_with(|| {
            block_slots.push(None);
            BlockId(block_slots.len() as u32 - 1)
        });
        first_use.entry(id).or_insert(span);
        let mut args = Vec::new();
        if self.eat_punct("(") {
            loop {
                let (tok, span) = self.next();
                match tok {
                    Tok::Local(name) => args.push(Operand::Value(scope.use_value(name, span))),
                    Tok::Literal(text) | Tok::Ident(text) if is_literal_word(text) => {
                        pending.push(PendingBranchConst { block: from_block, call: call_index, arg_index: args.len(), literal: text.to_string(), span });
                        args.push(Operand::Const(Const { ty: Type::I32, bits: 0 }));
                    }
                    other => return Err(Diagnostic::new(format!("expected a block argument, found {}", other.describe()), span)),
                }
                if self.eat_punct(")") {
                    break;
                }
                self.comma("or ')' in the block arguments")?;
            }
        }
        Ok(BlockCall { block: id, args })
    }

    #[allow(clippy::too_many_arguments)]
    fn terminator(
        &mut self,
        word: &str,
        scope: &mut FuncScope<'a>,
        ret: Option<&Type>,
        block_ids: &mut HashMap<String, BlockId>,
        block_slots: &mut Vec<Option<Block>>,
        first_use: &mut HashMap<BlockId, Span>,
        block_index: usize,
        pending: &mut Vec<PendingBranchConst>,
    ) -> Result<Terminator, Diagnostic> {
        match word {
            "br" => Ok(Terminator::Br(self.block_call(scope, block_ids, block_slots, first_use, pending, block_index, 0)?)),
            "brif" => {
                let cond = self.operand(scope, &Type::I1)?;
                self.comma("after the condition")?;
                let then_to = self.block_call(scope, block_ids, block_slots, first_use, pending, block_index, 0)?;
                self.comma("between the two targets")?;
                let else_to = self.block_call(scope, block_ids, block_slots, first_use, pending, block_index, 1)?;
                Ok(Terminator::BrIf { cond, then_to, else_to })
            }
            "ret" => {
                // `ret` alone when the next token starts a new block or closes the body.
                match self.peek() {
                    Tok::Local(_) | Tok::Literal(_) => {}
                    Tok::Ident(w) if is_literal_word(w) => {}
                    _ => return Ok(Terminator::Ret(None)),
                }
                let ty = ret.cloned().unwrap_or(Type::I32);
                Ok(Terminator::Ret(Some(self.operand(scope, &ty)?)))
            }
            _ => Ok(Terminator::Unreachable),
        }
    }
}

/// Words that are constants rather than names: `true`, `false`, `inf`, `nan`.
fn is_literal_word(text: &str) -> bool {
    matches!(text, "true" | "false" | "inf" | "nan") || text.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+')
}

fn parse_unsigned(text: &str) -> Option<u64> {
    if let Some(hex) = text.strip_prefix("0x") {
        u64::from_str_radix(hex, 16).ok()
    } else {
        text.parse().ok()
    }
}

/// Reads a literal as a constant of type `ty` (see docs/mir.md, "Constants").
pub fn literal_for_type(text: &str, ty: &Type, span: Span) -> Result<Const, Diagnostic> {
    let bad = |why: String| Diagnostic::new(why, span);
    match ty {
        Type::I1 => match text {
            "true" => Ok(Const { ty: Type::I1, bits: 1 }),
            "false" => Ok(Const { ty: Type::I1, bits: 0 }),
            _ => Err(bad(format!("expected 'true' or 'false' for an i1 constant, found '{text}'"))),
        },
        Type::I8 | Type::I16 | Type::I32 | Type::I64 | Type::Ptr(_) => {
            let bits = ty.bits();
            let (negative, digits) = match text.strip_prefix('-') {
                Some(rest) => (true, rest),
                None => (false, text.strip_prefix('+').unwrap_or(text)),
            };
            let magnitude = parse_unsigned(digits).ok_or_else(|| bad(format!("invalid integer constant '{text}'")))?;
            let max_unsigned = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
            let max_negative = 1u64 << (bits - 1);
            if (negative && magnitude > max_negative) || (!negative && magnitude > max_unsigned) {
                return Err(bad(format!("integer constant '{text}' does not fit in {ty}")));
            }
            let value = if negative { magnitude.wrapping_neg() } else { magnitude };
            Ok(Const { ty: ty.clone(), bits: value & max_unsigned })
        }
        Type::F16 | Type::F32 | Type::F64 => {
            let width = ty.bits();
            if let Some(hex) = text.strip_prefix("0x") {
                let bits = u64::from_str_radix(hex, 16).map_err(|_| bad(format!("invalid float bit pattern '{text}'")))?;
                if width < 64 && bits >> width != 0 {
                    return Err(bad(format!("float bit pattern '{text}' is wider than {ty}")));
                }
                return Ok(Const { ty: ty.clone(), bits });
            }
            let value: f64 = match text {
                "inf" | "+inf" => f64::INFINITY,
                "-inf" => f64::NEG_INFINITY,
                "nan" => f64::NAN,
                _ => {
                    let ok = text.chars().all(|c| c.is_ascii_digit() || "+-.eE".contains(c));
                    let parsed: Option<f64> = if ok { text.parse().ok() } else { None };
                    parsed.ok_or_else(|| bad(format!("invalid float constant '{text}'")))?
                }
            };
            let bits = match ty {
                Type::F64 => {
                    if value.is_nan() {
                        0x7ff8_0000_0000_0000
                    } else {
                        value.to_bits()
                    }
                }
                Type::F32 => {
                    // Parse as f32 directly so that decimal text rounds once.
                    let v: f32 = if value.is_nan() {
                        f32::from_bits(0x7fc0_0000)
                    } else if value.is_infinite() {
                        value as f32
                    } else {
                        text.parse().map_err(|_| bad(format!("invalid float constant '{text}'")))?
                    };
                    u64::from(v.to_bits())
                }
                _ => {
                    if value.is_nan() {
                        float::F16_QNAN
                    } else {
                        u64::from(float::f64_to_f16(value))
                    }
                }
            };
            Ok(Const { ty: ty.clone(), bits })
        }
        other => Err(bad(format!("constants of type '{other}' cannot be written inline; build them with 'make'"))),
    }
}
