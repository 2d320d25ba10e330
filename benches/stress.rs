//! Compile-time stress shapes (issue 17, item 1): synthetic kernels written
//! once and printed as MIR for us and as LLVM IR for llc-22, each shape at
//! three sizes, both compilers at -O2 and -O0 as whole processes in the same
//! run. Printed per row: wall time (median of 3) and peak memory of each,
//! the instructions each emitted (code quality stays next to compile time),
//! the ratios, and the growth exponent of our -O2 time from the previous size.
//!
//! Shapes: `straight` (one block of random i32/f32 arithmetic on pools of 8 + 8
//! values), `ifchain` (the same stream cut into divergent if-then triangles,
//! every value passed through each join), `loops` (a chain of uniform loops of
//! 20 operations, every value carried around each back edge), `nested` (uniform
//! loops nested n/200 deep, every value carried around every back edge),
//! `wide` (n/50 values defined first and all live to the end of the stream),
//! `kernels` (many small kernels in one module), `calls` (a kernel calling
//! many device functions), `chain` (n/5 device functions of 5 operations,
//! each calling the one before).
//!
//! `cargo bench --bench stress [-- SHAPE...]` (release; needs llc-22 and /usr/bin/time). The
//! generated inputs stay in `target/tmp/stress/`.
//! Under `cargo test` it does nothing.

use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use amdgpu_cg::isa::{self, Gpu, Target};
use object::{Object, ObjectSection};

#[derive(Clone, Copy, PartialEq)]
enum Lang {
    Mir,
    Ir,
}

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// One function body: pools of 8 i32 and 8 f32 values, updated by a random stream.
struct Body {
    lang: Lang,
    text: String,
    next: usize,
    ints: Vec<String>,
    floats: Vec<String>,
}

impl Body {
    fn new(lang: Lang) -> Body {
        Body { lang, text: String::new(), next: 0, ints: Vec::new(), floats: Vec::new() }
    }

    fn op(&mut self, rhs: String) -> String {
        self.next += 1;
        let v = format!("%v{}", self.next);
        writeln!(self.text, "  {v} = {rhs}").unwrap();
        v
    }

    fn f32(&self) -> &'static str {
        if self.lang == Lang::Mir { "f32" } else { "float" }
    }

    /// Fills the pools from `seed` (an i32 value).
    fn start(&mut self, seed: &str) {
        for j in 0..8 {
            let i = self.op(format!("add i32 {seed}, {}", j * 7 + 1));
            let f = self.op(format!("sitofp i32 {i} to {}", self.f32()));
            self.ints.push(i);
            self.floats.push(f);
        }
    }

    fn stream(&mut self, rng: &mut Rng, ops: usize) {
        for _ in 0..ops {
            let (a, b, d) = (rng.below(8) as usize, rng.below(8) as usize, rng.below(8) as usize);
            if rng.below(2) == 0 {
                let op = ["add", "sub", "mul", "xor", "and", "or"][rng.below(6) as usize];
                let v = self.op(format!("{op} i32 {}, {}", self.ints[a], self.ints[b]));
                self.ints[d] = v;
            } else {
                let op = ["fadd", "fsub", "fmul"][rng.below(3) as usize];
                let t = self.f32();
                let v = self.op(format!("{op} {t} {}, {}", self.floats[a], self.floats[b]));
                self.floats[d] = v;
            }
        }
    }

    /// The sum of the pools as an i32.
    fn finish(&mut self) -> String {
        let mut acc = self.ints[0].clone();
        for j in 1..8 {
            acc = self.op(format!("add i32 {acc}, {}", self.ints[j]));
        }
        for j in 0..8 {
            let t = self.f32();
            let i = self.op(format!("fptosi {t} {} to i32", self.floats[j]));
            acc = self.op(format!("add i32 {acc}, {i}"));
        }
        acc
    }

    fn line(&mut self, s: &str) {
        writeln!(self.text, "{s}").unwrap();
    }
}

fn kernel_head(lang: Lang, name: &str) -> String {
    match lang {
        Lang::Mir => format!("kernel @{name}(%out: ptr<global>, %n: i32) {{\nentry:\n  %tid = workitem_id x\n"),
        Lang::Ir => format!("define amdgpu_kernel void @{name}(ptr addrspace(1) %out, i32 %n) {{\nentry:\n  %tid = call i32 @llvm.amdgcn.workitem.id.x()\n"),
    }
}

fn kernel_tail(b: &mut Body, value: &str) {
    match b.lang {
        Lang::Mir => {
            let off = b.op("mul i32 %tid, 4".into());
            let p = b.op(format!("ptradd %out, {off}"));
            b.line(&format!("  store i32 {value}, {p}\n  ret\n}}\n"));
        }
        Lang::Ir => {
            let p = b.op("getelementptr i32, ptr addrspace(1) %out, i32 %tid".into());
            b.line(&format!("  store i32 {value}, ptr addrspace(1) {p}\n  ret void\n}}\n"));
        }
    }
}

const IR_HEADER: &str = "target triple = \"amdgcn-amd-amdhsa\"\ndeclare i32 @llvm.amdgcn.workitem.id.x()\n\n";

/// One kernel `k`: the pools filled from the work-item id, `shape` writes the
/// middle, and the kernel stores the pools' sum.
fn one_kernel(lang: Lang, seed: u64, shape: impl FnOnce(&mut Body, &mut Rng)) -> String {
    let mut rng = Rng(seed);
    let mut b = Body::new(lang);
    b.start("%tid");
    shape(&mut b, &mut rng);
    let v = b.finish();
    kernel_tail(&mut b, &v);
    let head = if lang == Lang::Ir { IR_HEADER } else { "" };
    format!("{head}{}{}", kernel_head(lang, "k"), b.text)
}

fn straight(lang: Lang, ops: usize) -> String {
    one_kernel(lang, 0x9e37_79b9_7f4a_7c15, |b, rng| b.stream(rng, ops))
}

/// `blocks` divergent triangles with `ops / blocks` operations in each `then`.
fn ifchain(lang: Lang, ops: usize, blocks: usize) -> String {
    one_kernel(lang, 0x2545_f491_4f6c_dd1d, |b, rng| {
        let per = ops / blocks;
        let mut pred = "entry".to_string();
        for k in 0..blocks {
            let m = b.op(format!("and i32 %tid, {}", 1 << (k % 6)));
            let c = b.op(format!("icmp ne i32 {m}, 0"));
            let (ints0, floats0) = (b.ints.clone(), b.floats.clone());
            let all0: Vec<String> = ints0.iter().chain(&floats0).cloned().collect();
            match lang {
                Lang::Mir => b.line(&format!("  brif {c}, t{k}, j{k}({})\nt{k}:", all0.join(", "))),
                Lang::Ir => b.line(&format!("  br i1 {c}, label %t{k}, label %j{k}\nt{k}:")),
            }
            b.stream(rng, per);
            let all1: Vec<String> = b.ints.iter().chain(&b.floats).cloned().collect();
            let f32 = b.f32();
            match lang {
                Lang::Mir => {
                    let params: Vec<String> = (0..16).map(|j| format!("%p{k}_{j}: {}", if j < 8 { "i32" } else { f32 })).collect();
                    b.line(&format!("  br j{k}({})\nj{k}({}):", all1.join(", "), params.join(", ")));
                }
                Lang::Ir => {
                    b.line(&format!("  br label %j{k}\nj{k}:"));
                    for j in 0..16 {
                        let t = if j < 8 { "i32" } else { f32 };
                        b.line(&format!("  %p{k}_{j} = phi {t} [{}, %t{k}], [{}, %{pred}]", all1[j], all0[j]));
                    }
                }
            }
            b.ints = (0..8).map(|j| format!("%p{k}_{j}")).collect();
            b.floats = (8..16).map(|j| format!("%p{k}_{j}")).collect();
            pred = format!("j{k}");
        }
    })
}

/// A chain of `count` uniform loops (trip count `%n`), `ops / count`
/// operations in each body, every value carried around the back edge: each
/// is a one-level [`nest`] entered from the previous one's exit.
fn loops(lang: Lang, ops: usize, count: usize) -> String {
    one_kernel(lang, 0x5851_f42d_4c95_7f2d, |b, rng| {
        let mut pred = "entry".to_string();
        for k in 0..count {
            pred = nest(b, rng, k, k + 1, ops / count, &pred);
        }
    })
}

/// Uniform loops nested `depth` deep, `ops / depth` operations at each level
/// before its inner loop, every value carried around every back edge.
fn nested(lang: Lang, ops: usize, depth: usize) -> String {
    one_kernel(lang, 0x7f4a_7c15_9e37_79b9, |b, rng| {
        nest(b, rng, 0, depth, ops / depth, "entry");
    })
}

/// Level `k` of [`nested`], entered from block `pred`; returns the block the
/// loop exits to (where the code goes on).
fn nest(b: &mut Body, rng: &mut Rng, k: usize, depth: usize, per: usize, pred: &str) -> String {
    let f32 = b.f32();
    let before: Vec<String> = b.ints.iter().chain(&b.floats).cloned().collect();
    let names: Vec<String> = (0..16).map(|j| format!("%q{k}_{j}")).collect();
    match b.lang {
        Lang::Mir => {
            let params: Vec<String> = names.iter().enumerate().map(|(j, n)| format!("{n}: {}", if j < 8 { "i32" } else { f32 })).collect();
            b.line(&format!("  br h{k}(0, {})\nh{k}(%c{k}: i32, {}):", before.join(", "), params.join(", ")));
        }
        Lang::Ir => b.line(&format!("  br label %h{k}\nh{k}:")),
    }
    b.ints = names[..8].to_vec();
    b.floats = names[8..].to_vec();
    let body_start = b.text.len();
    b.stream(rng, per);
    // The back edge leaves from the inner loop's exit block, or from the header.
    let latch = if k + 1 < depth { nest(b, rng, k + 1, depth, per, &format!("h{k}")) } else { format!("h{k}") };
    let after: Vec<String> = b.ints.iter().chain(&b.floats).cloned().collect();
    let next = b.op(format!("add i32 %c{k}, 1"));
    let more = b.op(format!("icmp ult i32 {next}, %n"));
    match b.lang {
        Lang::Mir => b.line(&format!("  brif {more}, h{k}({next}, {}), x{k}\nx{k}:", after.join(", "))),
        Lang::Ir => {
            let mut phis = format!("  %c{k} = phi i32 [0, %{pred}], [{next}, %{latch}]\n");
            for j in 0..16 {
                let t = if j < 8 { "i32" } else { f32 };
                phis.push_str(&format!("  {} = phi {t} [{}, %{pred}], [{}, %{latch}]\n", names[j], before[j], after[j]));
            }
            b.text.insert_str(body_start, &phis);
            b.line(&format!("  br i1 {more}, label %h{k}, label %x{k}\nx{k}:"));
        }
    }
    format!("x{k}")
}

/// `wide` values defined first and all live to the end, with a stream of
/// `ops` operations on the pools between: long live ranges over everything.
fn wide(lang: Lang, ops: usize, wide: usize) -> String {
    let mut rng = Rng(0x4f6c_dd1d_2545_f491);
    let mut b = Body::new(lang);
    b.start("%tid");
    let long: Vec<String> = (0..wide).map(|j| b.op(format!("mul i32 %tid, {}", 2 * j + 3))).collect();
    b.stream(&mut rng, ops);
    let mut v = b.finish();
    for l in &long {
        v = b.op(format!("xor i32 {v}, {l}"));
    }
    kernel_tail(&mut b, &v);
    let head = if lang == Lang::Ir { IR_HEADER } else { "" };
    format!("{head}{}{}", kernel_head(lang, "k"), b.text)
}

fn kernels(lang: Lang, count: usize, ops: usize) -> String {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let mut t = String::from(if lang == Lang::Ir { IR_HEADER } else { "" });
    for k in 0..count {
        let mut b = Body::new(lang);
        b.start("%tid");
        b.stream(&mut rng, ops);
        let v = b.finish();
        kernel_tail(&mut b, &v);
        t.push_str(&kernel_head(lang, &format!("k{k}")));
        t.push_str(&b.text);
    }
    t
}

fn calls(lang: Lang, count: usize, ops: usize) -> String {
    device_functions(lang, 0x0fed_cba9_8765_4321, count, ops, false)
}

/// `count` device functions in a chain, each a stream of `ops` operations
/// that then calls the one before it, and a kernel calling the last: a call
/// graph as deep as the module is long (steps that walk it from every
/// function, or look callees up by searching the module, grow with its
/// square or worse).
fn chain(lang: Lang, count: usize, ops: usize) -> String {
    device_functions(lang, 0x1357_9bdf_2468_ace0, count, ops, true)
}

/// `count` device functions of `ops` operations each and a kernel: with
/// `chained`, each function calls the one before and the kernel the last;
/// otherwise the kernel calls every function in turn.
fn device_functions(lang: Lang, seed: u64, count: usize, ops: usize, chained: bool) -> String {
    let call = |b: &mut Body, k: usize, arg: &str| match lang {
        Lang::Mir => b.op(format!("call @f{k}({arg})")),
        Lang::Ir => b.op(format!("call i32 @f{k}(i32 {arg})")),
    };
    let mut rng = Rng(seed);
    let mut t = String::from(if lang == Lang::Ir { IR_HEADER } else { "" });
    for k in 0..count {
        let mut b = Body::new(lang);
        b.start("%x");
        b.stream(&mut rng, ops);
        let mut v = b.finish();
        if chained && k > 0 {
            v = call(&mut b, k - 1, &v);
        }
        match lang {
            Lang::Mir => t.push_str(&format!("func @f{k}(%x: i32) -> i32 noinline {{\nentry:\n{}  ret {v}\n}}\n\n", b.text)),
            Lang::Ir => t.push_str(&format!("define hidden i32 @f{k}(i32 %x) #0 {{\nentry:\n{}  ret i32 {v}\n}}\n\n", b.text)),
        }
    }
    let mut b = Body::new(lang);
    let mut acc = "%tid".to_string();
    if chained {
        acc = call(&mut b, count - 1, &acc);
    } else {
        for k in 0..count {
            acc = call(&mut b, k, &acc);
        }
    }
    kernel_tail(&mut b, &acc);
    t.push_str(&kernel_head(lang, "k"));
    t.push_str(&b.text);
    if lang == Lang::Ir {
        t.push_str("attributes #0 = { noinline }\n");
    }
    t
}

/// Wall seconds (median of 3) and peak resident memory in MiB of `cmd`.
fn measure(program: &Path, args: &[String]) -> (f64, f64) {
    let mut times = Vec::new();
    let mut peak = 0.0f64;
    for _ in 0..3 {
        let start = Instant::now();
        let out = Command::new("/usr/bin/time").arg("-f").arg("%M").arg(program).args(args).output().expect("run /usr/bin/time");
        times.push(start.elapsed().as_secs_f64());
        assert!(out.status.success(), "{} {}: {}", program.display(), args.join(" "), String::from_utf8_lossy(&out.stderr));
        let kib: f64 = String::from_utf8_lossy(&out.stderr).lines().last().and_then(|l| l.trim().parse().ok()).unwrap_or(0.0);
        peak = peak.max(kib / 1024.0);
    }
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (times[1], peak)
}

/// Instructions in the `.text` of an object or code object.
fn instructions(path: &Path, target: Target) -> usize {
    let data = std::fs::read(path).unwrap();
    let file = object::File::parse(&*data).unwrap();
    let text = file.section_by_name(".text").map(|s| s.data().unwrap().to_vec()).unwrap_or_default();
    let mut n = 0;
    let mut rest = &text[..];
    while !rest.is_empty() {
        match isa::decode(rest, target) {
            Ok((_, len)) => {
                n += 1;
                rest = &rest[len..];
            }
            Err(_) => rest = &rest[4.min(rest.len())..],
        }
    }
    n
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let Some(llc) = isa::llvm_tools::require("llc-22") else { return };
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_amdgpu-cg"));
    // The inputs stay there for profiling (`amdgpu-cg FILE --time-passes`).
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("stress");
    std::fs::create_dir_all(&dir).unwrap();
    let target = Target::new(Gpu::Gfx90a);
    type Gen = fn(Lang, usize) -> String;
    let shapes: [(&str, Gen, [usize; 3]); 8] = [
        ("straight", |l, n| straight(l, n), [1_000, 5_000, 25_000]),
        ("ifchain", |l, n| ifchain(l, n, n / 10), [1_000, 3_000, 10_000]),
        ("loops", |l, n| loops(l, n, n / 20), [1_000, 2_000, 4_000]),
        ("nested", |l, n| nested(l, n, n / 200), [1_000, 2_000, 4_000]),
        ("wide", |l, n| wide(l, n, n / 50), [1_000, 4_000, 16_000]),
        ("kernels", |l, n| kernels(l, n / 100, 100), [1_000, 4_000, 16_000]),
        ("calls", |l, n| calls(l, n / 50, 50), [500, 2_000, 8_000]),
        ("chain", |l, n| chain(l, n / 5, 5), [1_000, 5_000, 20_000]),
    ];
    println!("gfx90a, whole processes, median of 3; time in s, peak memory in MiB; insts = instructions emitted");
    println!(
        "{:<9} {:>6} | {:>8} {:>5} {:>6} | {:>8} {:>6} | {:>8} {:>5} {:>6} | {:>8} | {:>6} {:>6} {:>6} | {:>6}",
        "shape", "ops", "ours -O2", "MiB", "insts", "ours -O0", "insts", "llc -O2", "MiB", "insts", "llc -O0", "O2 x", "O0 x", "size", "growth"
    );
    // `cargo bench --bench stress -- ifchain calls` runs only those shapes.
    let only: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    for (name, gen, sizes) in shapes {
        if !only.is_empty() && !only.iter().any(|o| o == name) {
            continue;
        }
        let mut last: Option<(usize, f64)> = None;
        for n in sizes {
            let mir = dir.join(format!("{name}-{n}.mir"));
            let ll = dir.join(format!("{name}-{n}.ll"));
            std::fs::write(&mir, gen(Lang::Mir, n)).unwrap();
            std::fs::write(&ll, gen(Lang::Ir, n)).unwrap();
            let o2 = dir.join("ours-o2.hsaco");
            let o0 = dir.join("ours-o0.hsaco");
            let l2 = dir.join("llc-o2.o");
            let l0 = dir.join("llc-o0.o");
            let s = |p: &Path| p.display().to_string();
            let (t2, m2) = measure(&ours, &[s(&mir), "--mcpu".into(), "gfx90a".into(), "-O2".into(), "-o".into(), s(&o2)]);
            let (t0, _) = measure(&ours, &[s(&mir), "--mcpu".into(), "gfx90a".into(), "-O0".into(), "-o".into(), s(&o0)]);
            let llc_args = |opt: &str, out: &Path| vec!["-mtriple=amdgcn-amd-amdhsa".to_string(), "-mcpu=gfx90a".into(), opt.into(), "-filetype=obj".into(), s(&ll), "-o".into(), s(out)];
            let (lt2, lm2) = measure(&llc, &llc_args("-O2", &l2));
            let (lt0, lm0) = measure(&llc, &llc_args("-O0", &l0));
            let (i2, i0, li2) = (instructions(&o2, target), instructions(&o0, target), instructions(&l2, target));
            let growth = last.map_or("-".to_string(), |(pn, pt)| format!("{:.2}", (t2 / pt).ln() / (n as f64 / pn as f64).ln()));
            println!(
                "{name:<9} {n:>6} | {t2:>8.3} {m2:>5.0} {i2:>6} | {t0:>8.3} {i0:>6} | {lt2:>8.3} {lm2:>5.0} {li2:>6} | {lt0:>8.3} | {:>5.1}x {:>5.1}x {:>5.2}x | {growth:>6}",
                lt2 / t2,
                lt0 / t0,
                i2 as f64 / li2.max(1) as f64
            );
            let _ = lm0;
            last = Some((n, t2));
        }
    }
    println!("inputs: {}", dir.display());
}
