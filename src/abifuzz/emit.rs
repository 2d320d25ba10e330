//! The probe's callee and caller as text: MIR for our compiler, LLVM IR for
//! llc. Both languages are written by one emitter: their instructions have the
//! same shape (`zext i32 %x to i64`, `xor i64 %a, %b`); only types, aggregate
//! access, calls and a few intrinsics are spelled differently.

use std::fmt::Write;

use amdgpu_abi::{AddrSpace, Type};

use super::probe::{element_bits, Probe, IMPLICIT, KEEP_VECTOR};

/// Where callees record (a 64-bit word per element, work-group and lane):
/// element `e` of work-group `g`, lane `t` is at `RECORDS + ((g * 64 + t) * n + e) * 8`
/// (a lane's words together, so every store is one base plus an immediate offset).
pub const RECORDS: u64 = 0x0000_5000_0000_0000;
/// Where callers store the result elements and the values they kept across the call.
pub const OUTPUTS: u64 = RECORDS + 0x0100_0000;
/// A uniform 32-bit value the callers load (kept values are derived from it).
pub const UNIFORM: u64 = RECORDS + 0x0200_0000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    Mir,
    Ir,
}

/// Names of a probe's functions.
pub fn callee_name(n: usize) -> String {
    format!("callee_{n}")
}
pub fn caller_name(n: usize, probe: &Probe) -> String {
    if probe.device_caller {
        format!("mid_{n}")
    } else {
        kernel_name(n)
    }
}
pub fn kernel_name(n: usize) -> String {
    format!("k_{n}")
}

fn ty(lang: Lang, t: &Type) -> String {
    match lang {
        Lang::Mir => t.to_string(),
        Lang::Ir => match t {
            Type::F16 => "half".into(),
            Type::F32 => "float".into(),
            Type::F64 => "double".into(),
            Type::Ptr(AddrSpace::Flat) => "ptr".into(),
            Type::Ptr(s) => format!("ptr addrspace({})", s.llvm_number()),
            Type::Vector(e, n) => format!("<{n} x {}>", ty(lang, e)),
            Type::Struct(fields) => format!("{{{}}}", fields.iter().map(|f| ty(lang, f)).collect::<Vec<_>>().join(", ")),
            t => t.to_string(),
        },
    }
}

fn int_type(bits: u32) -> Type {
    match bits {
        1 => Type::I1,
        8 => Type::I8,
        16 => Type::I16,
        32 => Type::I32,
        _ => Type::I64,
    }
}

/// An integer literal of `bits` bits (signed form, which both languages accept).
fn literal(bits: u32, v: u64) -> String {
    match bits {
        1 => if v & 1 == 1 { "true" } else { "false" }.into(),
        64 => (v as i64).to_string(),
        b => (((v << (64 - b)) as i64) >> (64 - b)).to_string(),
    }
}

/// One function body being written.
struct Body {
    lang: Lang,
    text: String,
    next: usize,
    wave: u32,
}

impl Body {
    fn new(lang: Lang, wave: u32) -> Body {
        Body { lang, text: String::new(), next: 0, wave }
    }

    fn ty(&self, t: &Type) -> String {
        ty(self.lang, t)
    }

    fn op(&mut self, rhs: String) -> String {
        self.next += 1;
        let v = format!("%v{}", self.next);
        writeln!(self.text, "  {v} = {rhs}").unwrap();
        v
    }

    fn line(&mut self, s: String) {
        writeln!(self.text, "  {s}").unwrap();
    }

    fn bin(&mut self, op: &str, t: &Type, a: &str, b: &str) -> String {
        let t = self.ty(t);
        self.op(format!("{op} {t} {a}, {b}"))
    }

    fn cast(&mut self, op: &str, from: &Type, v: &str, to: &Type) -> String {
        let (f, t) = (self.ty(from), self.ty(to));
        self.op(format!("{op} {f} {v} to {t}"))
    }

    /// `workitem_id`, `workgroup_id` and `workgroup_size` in dimension `d` (0..3).
    fn implicit(&mut self, which: usize) -> String {
        let dim = ["x", "y", "z"][which % 3];
        match (self.lang, which / 3) {
            (Lang::Mir, k) => self.op(format!("{} {dim}", ["workitem_id", "workgroup_id", "workgroup_size"][k])),
            (Lang::Ir, 0) => self.op(format!("call i32 @llvm.amdgcn.workitem.id.{dim}()")),
            (Lang::Ir, 1) => self.op(format!("call i32 @llvm.amdgcn.workgroup.id.{dim}()")),
            (Lang::Ir, _) => {
                // The dispatch packet's workgroup_size_{x,y,z} (u16 at 4, 6, 8).
                let dp = self.op("call ptr addrspace(4) @llvm.amdgcn.dispatch.ptr()".into());
                let at = self.op(format!("getelementptr i8, ptr addrspace(4) {dp}, i64 {}", 4 + 2 * (which % 3)));
                let half = self.op(format!("load i16, ptr addrspace(4) {at}, align 2"));
                self.cast("zext", &Type::I16, &half, &Type::I32)
            }
        }
    }

    /// A global pointer to the absolute address `addr` plus the i32 byte offset `off`.
    fn global_at(&mut self, addr: u64, off: &str) -> String {
        let g = Type::Ptr(AddrSpace::Global);
        let base = self.cast("inttoptr", &Type::I64, &literal(64, addr), &g);
        self.offset(&base, off)
    }

    /// `ptr + off` (an i32 byte offset).
    fn offset(&mut self, ptr: &str, off: &str) -> String {
        match self.lang {
            Lang::Mir => self.op(format!("ptradd {ptr}, {off}")),
            Lang::Ir => self.op(format!("getelementptr i8, ptr addrspace(1) {ptr}, i32 {off}")),
        }
    }

    fn store64(&mut self, v: &str, ptr: &str) {
        match self.lang {
            Lang::Mir => self.line(format!("store i64 {v}, {ptr}")),
            Lang::Ir => self.line(format!("store i64 {v}, ptr addrspace(1) {ptr}, align 8")),
        }
    }

    fn extract(&mut self, agg_ty: &Type, agg: &str, index: usize) -> String {
        match self.lang {
            Lang::Mir => self.op(format!("extract {agg}, {index}")),
            Lang::Ir => {
                let t = self.ty(agg_ty);
                match agg_ty {
                    Type::Vector(..) => self.op(format!("extractelement {t} {agg}, i32 {index}")),
                    _ => self.op(format!("extractvalue {t} {agg}, {index}")),
                }
            }
        }
    }

    /// The scalar elements of `v: t`, in piece order.
    fn flatten(&mut self, t: &Type, v: &str, out: &mut Vec<(Type, String)>) {
        match t {
            Type::Vector(e, n) => {
                for k in 0..*n as usize {
                    let x = self.extract(t, v, k);
                    out.push(((**e).clone(), x));
                }
            }
            Type::Struct(fields) => {
                for (i, f) in fields.iter().enumerate() {
                    let x = self.extract(t, v, i);
                    self.flatten(f, &x, out);
                }
            }
            _ => out.push((t.clone(), v.to_string())),
        }
    }

    /// A value of type `t` from scalar element values (in order), consumed from `parts`.
    fn build(&mut self, t: &Type, parts: &mut std::slice::Iter<String>) -> String {
        let fields: Vec<String> = match t {
            Type::Vector(_, n) => (0..*n).map(|_| parts.next().expect("element").clone()).collect(),
            Type::Struct(fs) => fs.iter().map(|f| self.build(f, parts)).collect(),
            _ => return parts.next().expect("element").clone(),
        };
        match self.lang {
            Lang::Mir => {
                let tt = self.ty(t);
                self.op(format!("make {tt} {}", fields.join(", ")))
            }
            Lang::Ir => {
                let tt = self.ty(t);
                let mut acc = "poison".to_string();
                for (i, f) in fields.iter().enumerate() {
                    let ft = match t {
                        Type::Vector(e, _) => (**e).clone(),
                        Type::Struct(fs) => fs[i].clone(),
                        _ => unreachable!(),
                    };
                    let ftt = self.ty(&ft);
                    acc = match t {
                        Type::Vector(..) => self.op(format!("insertelement {tt} {acc}, {ftt} {f}, i32 {i}")),
                        _ => self.op(format!("insertvalue {tt} {acc}, {ftt} {f}, {i}")),
                    };
                }
                acc
            }
        }
    }

    /// The element `v: t` as a 64-bit word (zero-extended bits).
    fn word_of(&mut self, t: &Type, v: &str) -> String {
        let bits = element_bits(t);
        let as_int = match t {
            Type::F16 | Type::F32 | Type::F64 => self.cast("bitcast", t, v, &int_type(bits)),
            Type::Ptr(_) => self.cast("ptrtoint", t, v, &int_type(bits)),
            _ => v.to_string(),
        };
        if bits == 64 {
            as_int
        } else {
            self.cast("zext", &int_type(bits), &as_int, &Type::I64)
        }
    }

    /// An element of type `t` from an integer `v` of its width.
    fn element_from(&mut self, t: &Type, v: &str) -> String {
        let int = int_type(element_bits(t));
        match t {
            Type::F16 | Type::F32 | Type::F64 => self.cast("bitcast", &int, v, t),
            Type::Ptr(_) => self.cast("inttoptr", &int, v, t),
            _ => v.to_string(),
        }
    }

    /// The lane index within the wave from the work-item ids (the launch's
    /// work-group is `wave/4 x 2 x 2`), and the work-group's parity: returns
    /// (lane, lane masked to 0..63, work-group masked to 0..1).
    fn lane_and_group(&mut self, ids: &[String; 4]) -> (String, String, String) {
        let q = self.wave / 4;
        let y = self.bin("mul", &Type::I32, &ids[1], &q.to_string());
        let z = self.bin("mul", &Type::I32, &ids[2], &(2 * q).to_string());
        let xy = self.bin("add", &Type::I32, &ids[0], &y);
        let t = self.bin("add", &Type::I32, &xy, &z);
        let tm = self.bin("and", &Type::I32, &t, "63");
        let gm = self.bin("and", &Type::I32, &ids[3], "1");
        (t, tm, gm)
    }

    /// The byte offset of lane `tm` of work-group `gm` in an area of `n` elements.
    fn area_offset(&mut self, tm: &str, gm: &str, n: usize) -> String {
        let g = self.bin("mul", &Type::I32, gm, "64");
        let l = self.bin("add", &Type::I32, &g, tm);
        self.bin("mul", &Type::I32, &l, &(8 * n).to_string())
    }
}

/// The callee: records its arguments' elements and its implicit inputs, returns
/// result constants xor-ed with the hash (xor of the recorded low dwords).
pub fn callee(lang: Lang, n: usize, probe: &Probe, llvm_conv: bool, wave: u32) -> String {
    let mut b = Body::new(lang, wave);
    let params: Vec<String> = probe
        .args
        .iter()
        .enumerate()
        .map(|(i, a)| match lang {
            Lang::Mir => format!("%p{i}: {}{}", if a.inreg { "inreg " } else { "" }, ty(lang, &a.ty)),
            Lang::Ir => format!("{}{} %p{i}", ty(lang, &a.ty), if a.inreg { " inreg" } else { "" }),
        })
        .collect();
    let implicit: Vec<String> = (0..IMPLICIT.len()).map(|k| b.implicit(k)).collect();
    let (_, tm, gm) = b.lane_and_group(&[implicit[0].clone(), implicit[1].clone(), implicit[2].clone(), implicit[3].clone()]);
    let off = b.area_offset(&tm, &gm, probe.record_count());
    let lane_words = b.global_at(RECORDS, &off);
    let mut hash = "0".to_string();
    let mut slot = 0;
    let mut record = |b: &mut Body, word: String, hash: &mut String| {
        let at = b.offset(&lane_words, &(8 * slot).to_string());
        b.store64(&word, &at);
        let low = b.cast("trunc", &Type::I64, &word, &Type::I32);
        *hash = b.bin("xor", &Type::I32, hash, &low);
        slot += 1;
    };
    for (i, a) in probe.args.iter().enumerate() {
        let mut elems = Vec::new();
        b.flatten(&a.ty, &format!("%p{i}"), &mut elems);
        for (t, v) in elems {
            let w = b.word_of(&t, &v);
            record(&mut b, w, &mut hash);
        }
    }
    for v in &implicit {
        let w = b.cast("zext", &Type::I32, v, &Type::I64);
        record(&mut b, w, &mut hash);
    }
    let ret = match &probe.sig.ret {
        None => None,
        Some(rt) => {
            let mut elems = Vec::new();
            for e in &probe.ret {
                let bits = element_bits(&e.ty);
                let m = b.bin("and", &Type::I32, &hash, &Probe::hash_mask(&e.ty).to_string());
                let int = int_type(bits);
                let m = match bits {
                    32 => m,
                    64 => b.cast("zext", &Type::I32, &m, &int),
                    _ => b.cast("trunc", &Type::I32, &m, &int),
                };
                let x = b.bin("xor", &int, &m, &literal(bits, e.value));
                elems.push(b.element_from(&e.ty, &x));
            }
            Some((rt.clone(), b.build(rt, &mut elems.iter())))
        }
    };
    let name = callee_name(n);
    let mut t = String::new();
    match lang {
        Lang::Mir => {
            let r = probe.sig.ret.as_ref().map(|r| format!(" -> {r}")).unwrap_or_default();
            let conv = if llvm_conv { " callconv(llvm)" } else { "" };
            writeln!(t, "func @{name}({}){r}{conv} noinline {{\nentry:", params.join(", ")).unwrap();
            t.push_str(&b.text);
            match ret {
                Some((_, v)) => writeln!(t, "  ret {v}\n}}\n").unwrap(),
                None => t.push_str("  ret\n}\n\n"),
            }
        }
        Lang::Ir => {
            let r = probe.sig.ret.as_ref().map_or("void".into(), |r| ty(lang, r));
            writeln!(t, "define hidden {r} @{name}({}) {{", params.join(", ")).unwrap();
            t.push_str(&b.text);
            match ret {
                Some((_, v)) => writeln!(t, "  ret {r} {v}\n}}\n").unwrap(),
                None => t.push_str("  ret void\n}\n\n"),
            }
        }
    }
    t
}

/// The IR declaration of a callee defined in the other object.
pub fn callee_declaration(n: usize, probe: &Probe) -> String {
    let params: Vec<String> = probe.args.iter().map(|a| format!("{}{}", ty(Lang::Ir, &a.ty), if a.inreg { " inreg" } else { "" })).collect();
    let r = probe.sig.ret.as_ref().map_or("void".into(), |r| ty(Lang::Ir, r));
    format!("declare hidden {r} @{}({})\n", callee_name(n), params.join(", "))
}

/// The caller (the kernel, or a device function the kernel calls): passes the
/// probe's values, stores the result's elements and the values it kept live
/// across the call.
pub fn caller(lang: Lang, n: usize, probe: &Probe, wave: u32) -> String {
    let mut b = Body::new(lang, wave);
    let ids: Vec<String> = [0, 1, 2, 3].iter().map(|&k| b.implicit(k)).collect();
    let (t, tm, gm) = b.lane_and_group(&[ids[0].clone(), ids[1].clone(), ids[2].clone(), ids[3].clone()]);
    let ua = b.global_at(UNIFORM, "0");
    let u = match lang {
        Lang::Mir => b.op(format!("load i32 {ua}")),
        Lang::Ir => b.op(format!("load i32, ptr addrspace(1) {ua}, align 4")),
    };
    let tu = b.bin("add", &Type::I32, &t, &u);
    let mut kept = Vec::new();
    for (i, k) in probe.keep.iter().enumerate() {
        let src = if i < KEEP_VECTOR { &tu } else { &u };
        kept.push(b.bin("mul", &Type::I32, src, &(*k as i32).to_string()));
    }
    let t64 = b.cast("zext", &Type::I32, &t, &Type::I64);
    let mut args = Vec::new();
    for a in &probe.args {
        let mut elems = Vec::new();
        for e in &a.elements {
            let bits = element_bits(&e.ty);
            let int = int_type(bits);
            // Uniform values are literals (both languages take them as operands).
            let v = if e.per_lane {
                let lane = if bits == 64 { t64.clone() } else { t.clone() };
                b.bin("xor", &int, &lane, &literal(bits, e.value))
            } else {
                literal(bits, e.value)
            };
            elems.push(b.element_from(&e.ty, &v));
        }
        let v = b.build(&a.ty, &mut elems.iter());
        args.push(match lang {
            Lang::Mir => v,
            Lang::Ir => format!("{}{} {v}", ty(lang, &a.ty), if a.inreg { " inreg" } else { "" }),
        });
    }
    let callee = callee_name(n);
    let result = match (&probe.sig.ret, lang) {
        (Some(_), Lang::Mir) => Some(b.op(format!("call @{callee}({})", args.join(", ")))),
        (Some(r), Lang::Ir) => {
            let rt = ty(lang, r);
            Some(b.op(format!("call {rt} @{callee}({})", args.join(", "))))
        }
        (None, Lang::Mir) => {
            b.line(format!("call @{callee}({})", args.join(", ")));
            None
        }
        (None, Lang::Ir) => {
            b.line(format!("call void @{callee}({})", args.join(", ")));
            None
        }
    };
    let off = b.area_offset(&tm, &gm, probe.out_count());
    let lane_words = b.global_at(OUTPUTS, &off);
    let mut slot = 0u32;
    let mut words = Vec::new();
    if let (Some(r), Some(v)) = (&probe.sig.ret, result) {
        let mut elems = Vec::new();
        b.flatten(r, &v, &mut elems);
        for (t, v) in elems {
            words.push(b.word_of(&t, &v));
        }
    }
    for k in &kept {
        words.push(b.cast("zext", &Type::I32, k, &Type::I64));
    }
    for w in words {
        let at = b.offset(&lane_words, &(8 * slot).to_string());
        b.store64(&w, &at);
        slot += 1;
    }
    debug_assert_eq!(slot as usize, probe.out_count());
    let name = caller_name(n, probe);
    let mut text = String::new();
    match (lang, probe.device_caller) {
        (Lang::Mir, false) => writeln!(text, "kernel @{name}() {{\nentry:").unwrap(),
        (Lang::Mir, true) => writeln!(text, "func @{name}() noinline {{\nentry:").unwrap(),
        (Lang::Ir, false) => writeln!(text, "define amdgpu_kernel void @{name}() {{").unwrap(),
        (Lang::Ir, true) => writeln!(text, "define hidden void @{name}() {{").unwrap(),
    }
    text.push_str(&b.text);
    text.push_str(match lang {
        Lang::Mir => "  ret\n}\n\n",
        Lang::Ir => "  ret void\n}\n\n",
    });
    if probe.device_caller {
        let k = kernel_name(n);
        match lang {
            Lang::Mir => writeln!(text, "kernel @{k}() {{\nentry:\n  call @{name}()\n  ret\n}}\n").unwrap(),
            Lang::Ir => writeln!(text, "define amdgpu_kernel void @{k}() {{\n  call void @{name}()\n  ret void\n}}\n").unwrap(),
        }
    }
    text
}

/// The header of an LLVM IR module of probes.
pub const IR_HEADER: &str = "target triple = \"amdgcn-amd-amdhsa\"\n\
declare i32 @llvm.amdgcn.workitem.id.x()\ndeclare i32 @llvm.amdgcn.workitem.id.y()\ndeclare i32 @llvm.amdgcn.workitem.id.z()\n\
declare i32 @llvm.amdgcn.workgroup.id.x()\ndeclare i32 @llvm.amdgcn.workgroup.id.y()\ndeclare i32 @llvm.amdgcn.workgroup.id.z()\n\
declare ptr addrspace(4) @llvm.amdgcn.dispatch.ptr()\n\n";
