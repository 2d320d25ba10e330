//! A generator of arbitrary reducible control-flow graphs as MIR kernels, for
//! differential testing of the control-flow lowering (tests/cfg_fuzz.rs).
//!
//! [`generate`] draws a random structured program from a seed and lowers it, as
//! it goes, to MIR blocks with block parameters:
//!
//! - statements: arithmetic on a few accumulators (i32, sometimes f32, i64 and
//!   i1), loads, stores, if/else, if without else, loops (while, do-while, and
//!   loops whose bounded exit is in the middle of the body) nested up to 4 deep;
//! - jumps: `break` out of 1..=depth loops, `continue` of the innermost or an
//!   outer loop, early `ret`, and jumps from anywhere inside an if to its join
//!   (labelled breaks: forward edges to the join of an enclosing construct, which
//!   keep the graph reducible), conditional or ending a branch side;
//! - shapes: loops guarded by a branch straight into the header or through a
//!   preheader (the guard's join is the loop exit), loops whose exit is the join
//!   of the enclosing if, loop headers that are the join of an if/else, exits
//!   from a loop to the join of an if around it;
//! - conditions on work-item ids, per-lane loaded data, work-group ids, kernel
//!   arguments, loop counters and constants, so uniform and divergent branches
//!   mix (each branch is labelled by where its condition comes from).
//!
//! Values crossing a join are passed as block arguments; afterwards trivial
//! parameters (the same value on every incoming edge, defined in a dominating
//! block) are mostly removed again, so that such values are used directly. Loop
//! counters and values computed in a loop header are used after the loop when the
//! header dominates the exit (the last iteration's value).
//!
//! Every loop has a counter that grows on every path back to its header and an
//! exit test against a small limit (uniform or per lane), so every program ends:
//! a header runs at most 9, 5, 5 and 3 times per entry at nesting depths 1 to 4
//! (break and continue conditions are arbitrary). Every work-item
//! stores at several points (`out[gidx * K + slot]`, one slot per store site,
//! many in blocks only some lanes reach) and, at whichever `ret` it reaches, all
//! accumulators and the number of that return; the launch fills `out` with
//! [`SENTINEL`] so that missing stores show.
//!
//! Only operations the code generator supports are used: i32 add/sub/mul/and/or/
//! xor/shl, icmp, select, f32 fadd/fmul, i64 add/sub/xor/mul/shl/lshr with
//! sext/trunc, i1 and/or/xor, loads and stores of i32/f32 through global
//! pointers, ptradd, workitem_id and workgroup_id. f32 values are multiples of
//! 1/4 far below 2^22, so every addition is exact (no rounding differences, NaN
//! or subnormals).
//!
//! The generator checks that every block is reachable and every retreating edge
//! goes to a dominator (reducible); the program text is parsed with the crate's
//! parser and verified. A generator bug panics with the text. The program and
//! launch are deterministic in the seed.

#![allow(dead_code)]

use std::fmt::Write as _;

use amdgpu_cg::mir::{self, launch::LaunchSpec, Module};

/// Initial contents of every `out` word (0xabababab): a slot still holding it
/// was never written.
pub const SENTINEL: i32 = 0xabab_abab_u32 as i32;
/// Elements of the `in` and `fin` input buffers (loads index them modulo this).
pub const INPUT_LEN: usize = 512;
/// Instruction budget of a launch in the interpreter (a generator bug that loops
/// fails fast instead of running 10^9 instructions).
pub const MAX_INSTRUCTIONS: u64 = 30_000_000;

/// splitmix64.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// Seeds are scrambled first, so that seeds a multiple of the increment
    /// apart do not give shifted copies of one sequence.
    pub fn new(seed: u64) -> Rng {
        let mut r = Rng(seed ^ 0x5851_f42d_4c95_7f2d);
        let scrambled = r.next_u64();
        Rng(scrambled)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// 0..n (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        assert!(n > 0);
        (self.next_u64() % n as u64) as usize
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }

    pub fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())].clone()
    }

    /// lo..=hi.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next_u64() % (hi - lo + 1) as u64) as i64
    }

    /// An index drawn with the given weights.
    fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u32 = weights.iter().sum();
        let mut r = (self.next_u64() % u64::from(total.max(1))) as u32;
        for (i, &w) in weights.iter().enumerate() {
            if r < w {
                return i;
            }
            r -= w;
        }
        weights.len() - 1
    }
}

/// Shape statistics of one program (the CFG numbers are of the final graph).
#[derive(Clone, Debug, Default)]
pub struct Shape {
    pub blocks: usize,
    pub instructions: usize,
    /// Natural loops (headers with back edges).
    pub loops: usize,
    pub max_loop_depth: usize,
    /// Loop kinds generated: while, do-while, exit in the middle.
    pub loop_kinds: [usize; 3],
    pub breaks: usize,
    /// Breaks out of more than one loop.
    pub multi_level_breaks: usize,
    pub continues: usize,
    /// Continues of a loop other than the innermost.
    pub outer_continues: usize,
    pub returns: usize,
    /// Jumps from inside an if (not at the end of a side) to its join or the
    /// join of an enclosing if.
    pub if_exits: usize,
    /// Of those, the ones leaving a loop.
    pub loop_exits_to_if_join: usize,
    /// Loops entered by a guard branch (straight into the header or through a
    /// preheader; the guard's join is the loop's exit).
    pub guards: usize,
    pub preheaders: usize,
    /// Loops whose exit block is the join of the enclosing if.
    pub exits_are_if_joins: usize,
    /// Loop headers that are the join of an if/else.
    pub headers_are_if_joins: usize,
    pub divergent_branches: usize,
    pub uniform_branches: usize,
    /// Block parameters kept, and removed (their value is used directly).
    pub block_params: usize,
    pub direct_uses: usize,
    /// Uses of values defined in a loop header outside the loop.
    pub uses_after_loop: usize,
    pub store_sites: usize,
}

impl Shape {
    pub fn add(&mut self, o: &Shape) {
        self.blocks += o.blocks;
        self.instructions += o.instructions;
        self.loops += o.loops;
        self.max_loop_depth = self.max_loop_depth.max(o.max_loop_depth);
        for k in 0..3 {
            self.loop_kinds[k] += o.loop_kinds[k];
        }
        self.breaks += o.breaks;
        self.multi_level_breaks += o.multi_level_breaks;
        self.continues += o.continues;
        self.outer_continues += o.outer_continues;
        self.returns += o.returns;
        self.if_exits += o.if_exits;
        self.loop_exits_to_if_join += o.loop_exits_to_if_join;
        self.guards += o.guards;
        self.preheaders += o.preheaders;
        self.exits_are_if_joins += o.exits_are_if_joins;
        self.headers_are_if_joins += o.headers_are_if_joins;
        self.divergent_branches += o.divergent_branches;
        self.uniform_branches += o.uniform_branches;
        self.block_params += o.block_params;
        self.direct_uses += o.direct_uses;
        self.uses_after_loop += o.uses_after_loop;
        self.store_sites += o.store_sites;
    }
}

/// A generated program and its launch.
pub struct Program {
    pub seed: u64,
    pub text: String,
    pub module: Module,
    pub launch: LaunchSpec,
    /// The launch in the JSON form of `amdgpu-cg run --launch`.
    pub launch_json: String,
    /// i32 words of `out` per work-item.
    pub slots_per_item: usize,
    /// What each slot holds (block and value), for failure messages.
    pub slots: Vec<String>,
    /// The slot holding the number of the `ret` the work-item reached (1-based).
    pub return_slot: usize,
    pub block_size: usize,
    pub work_items: usize,
    pub shape: Shape,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ty {
    I1,
    I32,
    I64,
    F32,
}

impl Ty {
    fn name(self) -> &'static str {
        match self {
            Ty::I1 => "i1",
            Ty::I32 => "i32",
            Ty::I64 => "i64",
            Ty::F32 => "f32",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Opnd {
    V(usize),
    Lit(String),
}

fn lit(v: impl std::fmt::Display) -> Opnd {
    Opnd::Lit(v.to_string())
}

enum Part {
    S(String),
    O(Opnd),
    /// The byte stride of a work-item's slots (known at the end).
    Stride,
}

struct Val {
    name: String,
    ty: Ty,
    block: usize,
    /// Divergent (may differ between the lanes executing it), as far as the
    /// generator knows; conservative.
    div: bool,
}

#[derive(Clone)]
struct Edge {
    to: usize,
    args: Vec<Opnd>,
}

enum Term {
    Br(Edge),
    Brif { cond: Opnd, div: bool, t: Edge, f: Edge },
    Ret,
}

impl Term {
    fn edges(&self) -> Vec<&Edge> {
        match self {
            Term::Br(e) => vec![e],
            Term::Brif { t, f, .. } => vec![t, f],
            Term::Ret => vec![],
        }
    }
}

struct Blk {
    name: String,
    params: Vec<usize>,
    /// The last parameters are one per accumulator.
    has_vars: bool,
    insts: Vec<Vec<Part>>,
    term: Option<Term>,
}

#[derive(Clone)]
enum Frame {
    If {
        join: usize,
        prefix: Vec<Opnd>,
    },
    /// `cont`: where `continue` goes and the prefix it passes (None: not
    /// allowed here, before the bounded exit of a loop tested mid-body).
    Loop {
        exit: usize,
        exit_prefix: Vec<Opnd>,
        cont: Option<(usize, Vec<Opnd>)>,
    },
}

#[derive(Clone, Copy)]
enum Jump {
    Break(usize),
    Continue(usize),
    IfExit(usize),
    Return,
}

struct LoopOpts {
    /// A header created already (the join of an if/else before it).
    header: Option<usize>,
    limit: Option<(Opnd, bool)>,
    guard: bool,
    /// The exit is this (the join of the enclosing if, with its prefix).
    exit: Option<(usize, Vec<Opnd>)>,
}

const MAX_NEST: usize = 6;
const MAX_LOOP_DEPTH: usize = 4;

struct Gen {
    rng: Rng,
    vals: Vec<Val>,
    blocks: Vec<Blk>,
    cur: Option<usize>,
    var_names: Vec<String>,
    var_tys: Vec<Ty>,
    vars: Vec<Opnd>,
    /// Values readable at the current point besides the accumulators:
    /// (value, type, divergent).
    pool: Vec<(Opnd, Ty, bool)>,
    frames: Vec<Frame>,
    budget: usize,
    loop_depth: usize,
    nest: usize,
    divergent_emitted: usize,
    block_size: usize,
    slots: Vec<String>,
    /// Per accumulator: its first final slot (i64 takes two).
    final_slots: Vec<usize>,
    return_slot: usize,
    ret_sites: usize,
    names: usize,
    shape: Shape,
    lid: Opnd,
    gidx: Opnd,
    obase: Opnd,
    xf: Opnd,
    input: Opnd,
    finput: Opnd,
}

impl Gen {
    // ---- values, blocks and terminators ----

    fn fresh(&mut self, base: &str) -> String {
        self.names += 1;
        format!("{base}_{}", self.names)
    }

    fn def(&mut self, base: &str, ty: Ty, div: bool, parts: Vec<Part>) -> Opnd {
        let b = self.cur.expect("code emitted in a live block");
        let name = self.fresh(base);
        let id = self.vals.len();
        self.vals.push(Val { name: name.clone(), ty, block: b, div });
        let mut p = vec![Part::S(format!("%{name} = "))];
        p.extend(parts);
        self.blocks[b].insts.push(p);
        Opnd::V(id)
    }

    fn void(&mut self, parts: Vec<Part>) {
        let b = self.cur.expect("code emitted in a live block");
        self.blocks[b].insts.push(parts);
    }

    fn div(&self, o: &Opnd) -> bool {
        match o {
            Opnd::V(v) => self.vals[*v].div,
            Opnd::Lit(_) => false,
        }
    }

    fn bin(&mut self, base: &str, op: &str, ty: Ty, a: Opnd, b: Opnd) -> Opnd {
        let d = self.div(&a) || self.div(&b);
        self.def(base, ty, d, vec![Part::S(format!("{op} {} ", ty.name())), Part::O(a), Part::S(", ".into()), Part::O(b)])
    }

    fn icmp(&mut self, pred: &str, a: Opnd, b: Opnd) -> (Opnd, bool) {
        let b = if a == b { lit(self.rng.range(-2, 9)) } else { b };
        let d = self.div(&a) || self.div(&b);
        let c = self.def("c", Ty::I1, d, vec![Part::S(format!("icmp {pred} i32 ")), Part::O(a), Part::S(", ".into()), Part::O(b)]);
        (c, d)
    }

    fn select(&mut self, base: &str, ty: Ty, c: Opnd, a: Opnd, b: Opnd) -> Opnd {
        let d = self.div(&c) || self.div(&a) || self.div(&b);
        self.def(base, ty, d, vec![Part::S(format!("select {} ", ty.name())), Part::O(c), Part::S(", ".into()), Part::O(a), Part::S(", ".into()), Part::O(b)])
    }

    fn cast(&mut self, base: &str, op: &str, from: Ty, a: Opnd, to: Ty) -> Opnd {
        let d = self.div(&a);
        self.def(base, to, d, vec![Part::S(format!("{op} {} ", from.name())), Part::O(a), Part::S(format!(" to {}", to.name()))])
    }

    /// `load ty base[(index & (INPUT_LEN-1)) * 4]`.
    fn load(&mut self, ty: Ty, index: Opnd) -> Opnd {
        let base = if ty == Ty::F32 { self.finput.clone() } else { self.input.clone() };
        let masked = self.bin("t", "and", Ty::I32, index, lit(INPUT_LEN - 1));
        let off = self.bin("t", "shl", Ty::I32, masked, lit(2));
        let d = self.div(&off);
        let p = self.def("p", Ty::I64, d, vec![Part::S("ptradd ".into()), Part::O(base), Part::S(", ".into()), Part::O(off)]);
        self.def("ld", ty, true, vec![Part::S(format!("load {} ", ty.name())), Part::O(p)])
    }

    fn block(&mut self, kind: &str, prefix: &[(Ty, &str)], with_vars: bool) -> usize {
        let id = self.blocks.len();
        self.blocks.push(Blk { name: format!("{kind}_{id}"), params: Vec::new(), has_vars: with_vars, insts: Vec::new(), term: None });
        for (ty, base) in prefix {
            self.param(id, base, *ty);
        }
        if with_vars {
            for k in 0..self.var_names.len() {
                let (base, ty) = (self.var_names[k].clone(), self.var_tys[k]);
                self.param(id, &base, ty);
            }
        }
        id
    }

    fn param(&mut self, b: usize, base: &str, ty: Ty) {
        let name = self.fresh(base);
        let id = self.vals.len();
        self.vals.push(Val { name, ty, block: b, div: true });
        self.blocks[b].params.push(id);
    }

    /// An edge to `to` passing `prefix` and (if it takes them) the accumulators.
    fn edge(&self, to: usize, prefix: &[Opnd]) -> Edge {
        let mut args = prefix.to_vec();
        if self.blocks[to].has_vars {
            args.extend(self.vars.iter().cloned());
        }
        assert_eq!(args.len(), self.blocks[to].params.len(), "edge to {}", self.blocks[to].name);
        Edge { to, args }
    }

    fn plain(to: usize) -> Edge {
        Edge { to, args: Vec::new() }
    }

    fn terminate(&mut self, t: Term) {
        let b = self.cur.take().expect("a live block to terminate");
        assert!(self.blocks[b].term.is_none());
        if let Term::Brif { div, .. } = &t {
            if *div {
                self.divergent_emitted += 1;
            }
        }
        self.blocks[b].term = Some(t);
    }

    fn br(&mut self, e: Edge) {
        self.terminate(Term::Br(e));
    }

    /// `brif c` with `taken` on one side and `other` on the other (either way
    /// round: the side taken when `c` holds is random).
    fn brif(&mut self, c: Opnd, div: bool, taken: Edge, other: Edge) {
        if self.rng.chance(50) {
            self.terminate(Term::Brif { cond: c, div, t: taken, f: other });
        } else {
            self.terminate(Term::Brif { cond: c, div, t: other, f: taken });
        }
    }

    /// Jumps to `target` on `c`, else continues in a new block.
    fn cond_goto(&mut self, c: Opnd, div: bool, target: Edge) {
        let next = self.block("next", &[], false);
        self.brif(c, div, target, Self::plain(next));
        self.cur = Some(next);
    }

    fn incoming(&self, b: usize) -> Vec<Edge> {
        self.blocks.iter().filter_map(|x| x.term.as_ref()).flat_map(|t| t.edges()).filter(|e| e.to == b).cloned().collect()
    }

    /// Continues at a join: labels its parameters (divergent if an incoming value
    /// is, or if the incoming values differ and divergent branches led there) and
    /// makes them the accumulators. False (and no current block) if nothing jumps
    /// there.
    fn arrive(&mut self, b: usize, control_divergent: bool) -> bool {
        let incoming = self.incoming(b);
        if incoming.is_empty() {
            self.cur = None;
            return false;
        }
        for k in 0..self.blocks[b].params.len() {
            let args: Vec<&Opnd> = incoming.iter().map(|e| &e.args[k]).collect();
            let differ = args.iter().any(|a| *a != args[0]);
            let d = args.iter().any(|a| self.div(a)) || (differ && control_divergent);
            let p = self.blocks[b].params[k];
            self.vals[p].div = d;
        }
        self.cur = Some(b);
        self.take_vars(b);
        true
    }

    fn take_vars(&mut self, b: usize) {
        if self.blocks[b].has_vars {
            let params = &self.blocks[b].params;
            let n = self.var_names.len();
            self.vars = params[params.len() - n..].iter().map(|&p| Opnd::V(p)).collect();
        }
    }

    // ---- operands and conditions ----

    /// An i32 operand: a value of the pool or an accumulator (only uniform ones
    /// if asked).
    fn pick_i32(&mut self, uniform: bool) -> Opnd {
        let mut c: Vec<Opnd> = self.pool.iter().filter(|(_, t, d)| *t == Ty::I32 && (!uniform || !d)).map(|(o, _, _)| o.clone()).collect();
        let n_pool = c.len();
        for (k, v) in self.vars.iter().enumerate() {
            if self.var_tys[k] == Ty::I32 && (!uniform || !self.div(v)) {
                c.push(v.clone());
            }
        }
        // Accumulators as often as the pool.
        if c.len() > n_pool && self.rng.chance(50) {
            let i = n_pool + self.rng.below(c.len() - n_pool);
            return c[i].clone();
        }
        self.rng.pick(&c[..n_pool.max(1)])
    }

    /// An i32 operand that differs between lanes if there is one (the
    /// accumulators count as such), else any.
    fn pick_divergent_i32(&mut self) -> Opnd {
        let mut c: Vec<Opnd> = self.pool.iter().filter(|(_, t, d)| *t == Ty::I32 && *d).map(|(o, _, _)| o.clone()).collect();
        for (k, v) in self.vars.iter().enumerate() {
            if self.var_tys[k] == Ty::I32 && self.div(v) {
                c.push(v.clone());
            }
        }
        if c.is_empty() {
            self.pick_i32(false)
        } else {
            self.rng.pick(&c)
        }
    }

    fn small_lit(&mut self) -> Opnd {
        lit(self.rng.pick(&[0i64, 1, 2, 3, 5, 7, 9, 16, 31, 100, -1, -3, -100, 1 << 20, i32::MAX as i64, i32::MIN as i64]))
    }

    fn counters(&self) -> Vec<Opnd> {
        // Uniform pool values defined by loops (their names start with "i").
        self.pool
            .iter()
            .filter(|(o, t, d)| *t == Ty::I32 && !d && matches!(o, Opnd::V(v) if self.vals[*v].name.starts_with('i')))
            .map(|(o, _, _)| o.clone())
            .collect()
    }

    /// `(a & m) PRED k` with PRED and k chosen so that both outcomes are likely.
    fn masked_cmp(&mut self, a: Opnd, m: i64) -> (Opnd, bool) {
        let t = self.bin("t", "and", Ty::I32, a, lit(m));
        // eq/ne only on one or two bits; the ordered tests split near the middle.
        let (pred, k) = match self.rng.below(4) {
            0 if m <= 3 => ("eq", self.rng.range(0, m)),
            1 if m <= 3 => ("ne", self.rng.range(0, m)),
            0 | 2 => ("ult", self.rng.range((m + 1) / 4, m - (m + 1) / 4).max(1)),
            _ => ("ugt", self.rng.range((m + 1) / 4, m - (m + 1) / 4).min(m - 1)),
        };
        self.icmp(pred, t, lit(k))
    }

    fn cond(&mut self) -> (Opnd, bool) {
        if self.rng.chance(45) {
            self.uniform_cond()
        } else {
            self.divergent_cond(true)
        }
    }

    /// On loop counters (vary by iteration), the work-group id (varies by
    /// group), kernel arguments and uniform accumulators.
    fn uniform_cond(&mut self) -> (Opnd, bool) {
        let counters = self.counters();
        match self.rng.below(10) {
            0..=3 if !counters.is_empty() => {
                let i = self.rng.pick(&counters);
                let pred = self.rng.pick(&["eq", "ne", "ult", "ugt", "slt"]);
                let k = lit(self.rng.range(0, 3));
                self.icmp(pred, i, k)
            }
            0..=5 => {
                let wg = self.pool.iter().find(|(o, _, _)| matches!(o, Opnd::V(v) if self.vals[*v].name == "wg")).unwrap().0.clone();
                if self.rng.chance(50) {
                    self.masked_cmp(wg, 1)
                } else {
                    let pred = self.rng.pick(&["eq", "ne", "ult", "ugt"]);
                    let k = lit(self.rng.range(0, 2));
                    self.icmp(pred, wg, k)
                }
            }
            6..=8 | 9 if self.rng.chance(70) => {
                let a = self.pick_i32(true);
                let m = self.rng.pick(&[1, 3, 7]);
                self.masked_cmp(a, m)
            }
            _ => {
                let a = self.pick_i32(true);
                let b = self.pick_i32(true);
                let pred = self.rng.pick(&["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]);
                self.icmp(pred, a, b)
            }
        }
    }

    fn divergent_cond(&mut self, allow_combined: bool) -> (Opnd, bool) {
        let bool_var = (0..self.vars.len()).find(|&k| self.var_tys[k] == Ty::I1);
        let counters = self.counters();
        match self.rng.below(8) {
            0 => {
                // Lane ranges that split waves of 32 and 64 in different places.
                let ks: Vec<usize> = [1, 16, 24, 31, 32, 33, 40, 48, 63, 64, 65, 80].into_iter().filter(|&k| k < self.block_size).collect();
                let k = lit(self.rng.pick(&ks));
                let pred = if self.rng.chance(10) { self.rng.pick(&["eq", "ne"]) } else { self.rng.pick(&["ult", "uge"]) };
                let lid = self.lid.clone();
                self.icmp(pred, lid, k)
            }
            1 | 2 => {
                let a = self.pick_divergent_i32();
                let m = self.rng.pick(&[1, 3, 7, 15, 1, 3]);
                self.masked_cmp(a, m)
            }
            3 => {
                // Two values (a value against a literal is too often constant:
                // their ranges differ widely).
                let mut a = self.pick_divergent_i32();
                let mut b = self.pick_i32(false);
                if self.rng.chance(50) {
                    // Low bits: values of different ranges compare both ways.
                    a = self.bin("t", "and", Ty::I32, a, lit(15));
                    b = self.bin("t", "and", Ty::I32, b, lit(15));
                }
                let pred = self.rng.pick(&["slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]);
                self.icmp(pred, a, b)
            }
            4 if bool_var.is_some() => {
                let b = self.vars[bool_var.unwrap()].clone();
                let d = self.div(&b);
                if self.rng.chance(50) {
                    (b, d)
                } else {
                    (self.bin("c", "xor", Ty::I1, b, lit("true")), d)
                }
            }
            5 if allow_combined => {
                let (c1, d1) = self.divergent_cond(false);
                let (c2, d2) = if self.rng.chance(50) { self.uniform_cond() } else { self.divergent_cond(false) };
                let op = self.rng.pick(&["and", "or", "xor"]);
                (self.bin("c", op, Ty::I1, c1, c2), d1 || d2)
            }
            6 if !counters.is_empty() => {
                let i = self.rng.pick(&counters);
                let a = self.pick_divergent_i32();
                let t = self.bin("t", "and", Ty::I32, a, lit(7));
                self.icmp("ult", i, t)
            }
            _ => {
                // Mostly at an address that differs between lanes.
                let a = if self.rng.chance(80) { self.pick_divergent_i32() } else { self.pick_i32(true) };
                let k = lit(self.rng.range(0, 300));
                let idx = self.bin("t", "add", Ty::I32, a, k);
                let l = self.load(Ty::I32, idx);
                if self.rng.chance(50) {
                    let pred = self.rng.pick(&["slt", "sgt", "sle", "sge"]);
                    let k = lit(self.rng.range(-8, 8));
                    self.icmp(pred, l, k)
                } else {
                    let m = self.rng.pick(&[1, 3, 7]);
                    self.masked_cmp(l, m)
                }
            }
        }
    }

    /// A loop limit for nesting depth `depth` (1-based): at most 8, 4, 4, 2.
    fn limit(&mut self, depth: usize) -> (Opnd, bool) {
        let mask = [7, 3, 3, 1][depth - 1];
        let counters = self.counters();
        let v = match self.rng.below(6) {
            0 => lit(self.rng.range(0, mask + 1)),
            1 => {
                let a = self.pick_i32(true);
                self.bin("lim", "and", Ty::I32, a, lit(mask))
            }
            2 if !counters.is_empty() => {
                // Triangular: the limit grows with an outer counter.
                let i = self.rng.pick(&counters);
                let t = self.bin("t", "add", Ty::I32, i, lit(1));
                self.bin("lim", "and", Ty::I32, t, lit(mask))
            }
            3 => {
                let a = self.rng.pick(&[1u64, 2, 3]);
                let idx = self.bin("t", "add", Ty::I32, self.gidx.clone(), lit(a * 37));
                let l = self.load(Ty::I32, idx);
                self.bin("lim", "and", Ty::I32, l, lit(mask))
            }
            _ => {
                let a = self.pick_i32(false);
                self.bin("lim", "and", Ty::I32, a, lit(mask))
            }
        };
        let v = if matches!(v, Opnd::V(_)) && self.rng.chance(40) { self.bin("lim", "add", Ty::I32, v, lit(1)) } else { v };
        let d = self.div(&v);
        (v, d)
    }

    // ---- statements ----

    fn seq(&mut self, max: usize) {
        let n = 1 + self.rng.below(max);
        for _ in 0..n {
            if self.cur.is_none() || self.budget == 0 {
                return;
            }
            self.stmt();
        }
    }

    /// A loop body: statements, sometimes a store at the end.
    fn body(&mut self, max: usize) {
        if self.budget == 0 && self.cur.is_some() {
            // Out of budget: still not an empty body.
            self.op();
        }
        self.seq(max);
        if self.cur.is_some() && self.rng.chance(35) {
            self.store();
        }
    }

    fn stmt(&mut self) {
        self.budget -= 1;
        let nest_ok = self.nest < MAX_NEST;
        let loop_ok = nest_ok && self.loop_depth < MAX_LOOP_DEPTH;
        let loop_weight = [3, 3, 3, 2][self.loop_depth.min(3)];
        let weights = [
            5,                                                       // arithmetic
            4,                                                       // store
            1,                                                       // load into an accumulator
            if nest_ok { 3 } else { 0 },                             // if/else
            if nest_ok { 2 } else { 0 },                             // if
            if loop_ok { loop_weight } else { 0 },                   // loop
            if loop_ok { 1 } else { 0 },                             // guarded loop
            if loop_ok && self.nest + 1 < MAX_NEST { 1 } else { 0 }, // if/else joining at a loop header
            if self.frames.is_empty() { 0 } else { 4 },              // conditional jump
            1,                                                       // conditional return
        ];
        match self.rng.weighted(&weights) {
            0 => self.op(),
            1 => self.store(),
            2 => {
                let k = self.rng.below(self.vars.len());
                if self.var_tys[k] == Ty::I32 {
                    let idx = self.pick_i32(false);
                    let l = self.load(Ty::I32, idx);
                    let v = self.vars[k].clone();
                    self.vars[k] = self.bin(&self.var_names[k].clone(), "add", Ty::I32, v, l);
                } else {
                    self.op();
                }
            }
            3 => self.with_share(1, |g| g.gen_if(true, false)),
            4 => self.with_share(1, |g| g.gen_if(false, false)),
            5 => self.with_share(2, |g| g.gen_loop(LoopOpts { header: None, limit: None, guard: false, exit: None })),
            6 => self.with_share(2, |g| g.gen_loop(LoopOpts { header: None, limit: None, guard: true, exit: None })),
            7 => self.with_share(2, |g| g.gen_if(true, true)),
            8 => self.jump(true),
            _ => self.jump_to(Jump::Return, true),
        }
    }

    /// Runs `f` with a share (`least`/5 to (`least`+2)/5) of the remaining
    /// statement budget, so that one construct does not take the whole program,
    /// and charges what it used.
    fn with_share(&mut self, least: usize, f: impl FnOnce(&mut Self)) {
        let outer = self.budget;
        let share = if outer == 0 { 0 } else { (outer * (least + self.rng.below(3)) / 5).clamp(1, outer) };
        self.budget = share;
        f(self);
        let used = share - self.budget;
        self.budget = outer - used;
    }

    /// Updates one accumulator.
    fn op(&mut self) {
        let k = self.rng.below(self.vars.len());
        let v = self.vars[k].clone();
        let name = self.var_names[k].clone();
        let nv = match self.var_tys[k] {
            Ty::I32 => match self.rng.below(10) {
                0..=6 => {
                    let op = self.rng.pick(&["add", "add", "sub", "mul", "and", "or", "xor", "xor", "shl"]);
                    let b = match op {
                        "shl" => lit(self.rng.range(1, 4)),
                        "mul" if self.rng.chance(60) => lit(self.rng.pick(&[3, 5, -7, 33, 0x1001])),
                        "and" if self.rng.chance(60) => lit(self.rng.pick(&[0xff, 0x7fff, -2, 0x0f0f_0f0f])),
                        _ if self.rng.chance(30) => self.small_lit(),
                        _ => self.pick_i32(false),
                    };
                    let b = if b == v { self.small_lit() } else { b };
                    self.bin(&name, op, Ty::I32, v, b)
                }
                7 | 8 => {
                    let (c, _) = self.cond();
                    let b = if self.rng.chance(30) { self.small_lit() } else { self.pick_i32(false) };
                    let b = if b == v { self.small_lit() } else { b };
                    if self.rng.chance(50) {
                        self.select(&name, Ty::I32, c, v, b)
                    } else {
                        self.select(&name, Ty::I32, c, b, v)
                    }
                }
                _ => {
                    let idx = self.pick_i32(false);
                    let l = self.load(Ty::I32, idx);
                    self.bin(&name, "xor", Ty::I32, v, l)
                }
            },
            Ty::F32 => match self.rng.below(6) {
                0 | 1 => {
                    let c = self.rng.pick(&["0.5", "-1.25", "2.0", "0.75", "-3.0", "4.0"]);
                    self.bin(&name, "fadd", Ty::F32, v, lit(c))
                }
                2 => {
                    let xf = self.xf.clone();
                    self.bin(&name, "fadd", Ty::F32, v, xf)
                }
                3 => self.bin(&name, "fmul", Ty::F32, v, lit("-1.0")),
                4 => {
                    let (c, _) = self.cond();
                    let b = if self.rng.chance(50) { self.xf.clone() } else { lit("1.5") };
                    self.select(&name, Ty::F32, c, v, b)
                }
                _ => {
                    let idx = self.pick_i32(false);
                    let l = self.load(Ty::F32, idx);
                    self.bin(&name, "fadd", Ty::F32, v, l)
                }
            },
            Ty::I64 => match self.rng.below(5) {
                0..=2 => {
                    let a = self.pick_i32(false);
                    let w = self.cast("t", "sext", Ty::I32, a, Ty::I64);
                    let op = self.rng.pick(&["add", "sub", "xor"]);
                    self.bin(&name, op, Ty::I64, v, w)
                }
                3 => {
                    let k = lit(self.rng.pick(&[3, 0x1_0000_0001i64, -5]));
                    self.bin(&name, "mul", Ty::I64, v, k)
                }
                _ => {
                    let k = lit(self.rng.range(1, 9));
                    self.bin(&name, "shl", Ty::I64, v, k)
                }
            },
            Ty::I1 => {
                let (c, _) = self.cond();
                let op = self.rng.pick(&["xor", "and", "or", "xor"]);
                self.bin(&name, op, Ty::I1, v, c)
            }
        };
        self.vars[k] = nv;
    }

    fn new_slot(&mut self, what: String) -> usize {
        self.slots.push(what);
        self.slots.len() - 1
    }

    fn slot_ptr(&mut self, slot: usize) -> Opnd {
        let base = self.obase.clone();
        let d = self.div(&base);
        self.def("q", Ty::I64, d, vec![Part::S("ptradd ".into()), Part::O(base), Part::S(format!(", {}", slot * 4))])
    }

    fn store_value(&mut self, v: Opnd, ty: Ty, slot: usize) {
        match ty {
            Ty::I32 | Ty::F32 => {
                let p = self.slot_ptr(slot);
                self.void(vec![Part::S(format!("store {} ", ty.name())), Part::O(v), Part::S(", ".into()), Part::O(p)]);
            }
            Ty::I1 => {
                let z = self.select("z", Ty::I32, v, lit(1), lit(-7));
                self.store_value(z, Ty::I32, slot);
            }
            Ty::I64 => {
                let lo = self.cast("lo", "trunc", Ty::I64, v.clone(), Ty::I32);
                self.store_value(lo, Ty::I32, slot);
                let h = self.bin("t", "lshr", Ty::I64, v, lit(32));
                let hi = self.cast("hi", "trunc", Ty::I64, h, Ty::I32);
                self.store_value(hi, Ty::I32, slot + 1);
            }
        }
    }

    fn describe(&self, o: &Opnd) -> String {
        match o {
            Opnd::V(v) => format!("%{}", self.vals[*v].name),
            Opnd::Lit(l) => l.clone(),
        }
    }

    /// Stores one or two accumulators or other values at fresh slots.
    fn store(&mut self) {
        let block = self.blocks[self.cur.unwrap()].name.clone();
        for _ in 0..1 + self.rng.below(2) {
            let (v, ty) = if self.rng.chance(25) {
                let candidates: Vec<(Opnd, Ty)> = self.pool.iter().filter(|(_, t, _)| *t != Ty::I64).map(|(o, t, _)| (o.clone(), *t)).collect();
                self.rng.pick(&candidates)
            } else {
                let k = self.rng.below(self.vars.len());
                (self.vars[k].clone(), self.var_tys[k])
            };
            self.shape.store_sites += 1;
            let what = format!("{block}: {}", self.describe(&v));
            let slot = self.new_slot(what.clone());
            if ty == Ty::I64 {
                self.new_slot(format!("{what} (high half)"));
            }
            self.store_value(v, ty, slot);
        }
    }

    /// Stores every accumulator at its final slot and the return's number, then
    /// returns.
    fn ret_here(&mut self) {
        self.ret_sites += 1;
        for k in 0..self.vars.len() {
            let (v, ty, slot) = (self.vars[k].clone(), self.var_tys[k], self.final_slots[k]);
            self.store_value(v, ty, slot);
        }
        let site = self.ret_sites;
        let slot = self.return_slot;
        self.store_value(lit(site), Ty::I32, slot);
        self.terminate(Term::Ret);
    }

    fn jump(&mut self, conditional: bool) {
        let mut options: Vec<(u32, Jump)> = Vec::new();
        let innermost_loop = self.frames.iter().rposition(|f| matches!(f, Frame::Loop { .. }));
        for (i, f) in self.frames.iter().enumerate() {
            let inner = Some(i) == innermost_loop;
            let outside_a_loop = innermost_loop.is_some_and(|l| i < l);
            match f {
                Frame::If { .. } => options.push((if outside_a_loop { 3 } else { 2 }, Jump::IfExit(i))),
                Frame::Loop { cont, .. } => {
                    options.push((if inner { 4 } else { 3 }, Jump::Break(i)));
                    if cont.is_some() {
                        options.push((if inner { 3 } else { 2 }, Jump::Continue(i)));
                    }
                }
            }
        }
        options.push((1, Jump::Return));
        let weights: Vec<u32> = options.iter().map(|(w, _)| *w).collect();
        let j = options[self.rng.weighted(&weights)].1;
        self.jump_to(j, conditional);
    }

    fn jump_to(&mut self, j: Jump, conditional: bool) {
        let cond = if conditional { Some(self.cond()) } else { None };
        let loops_above = |frames: &[Frame], i: usize| frames[i..].iter().filter(|f| matches!(f, Frame::Loop { .. })).count();
        let target = match j {
            Jump::Return => {
                self.shape.returns += 1;
                match cond {
                    Some((c, d)) => {
                        let r = self.block("ret", &[], false);
                        let next = self.block("next", &[], false);
                        self.brif(c, d, Self::plain(r), Self::plain(next));
                        self.cur = Some(r);
                        self.ret_here();
                        self.cur = Some(next);
                    }
                    None => self.ret_here(),
                }
                return;
            }
            Jump::Break(i) => {
                let Frame::Loop { exit, exit_prefix, .. } = self.frames[i].clone() else { unreachable!() };
                self.shape.breaks += 1;
                if loops_above(&self.frames, i) > 1 {
                    self.shape.multi_level_breaks += 1;
                }
                self.edge(exit, &exit_prefix)
            }
            Jump::Continue(i) => {
                let Frame::Loop { cont: Some((to, prefix)), .. } = self.frames[i].clone() else { unreachable!() };
                self.shape.continues += 1;
                if loops_above(&self.frames, i) > 1 {
                    self.shape.outer_continues += 1;
                }
                self.edge(to, &prefix)
            }
            Jump::IfExit(i) => {
                let Frame::If { join, prefix } = self.frames[i].clone() else { unreachable!() };
                if conditional {
                    self.shape.if_exits += 1;
                    if loops_above(&self.frames, i) > 0 {
                        self.shape.loop_exits_to_if_join += 1;
                    }
                }
                self.edge(join, &prefix)
            }
        };
        match cond {
            Some((c, d)) => self.cond_goto(c, d, target),
            None => self.br(target),
        }
    }

    /// if/else or if (`with_else` false); `fused`: the join is the header of a
    /// loop that follows.
    fn gen_if(&mut self, with_else: bool, fused: bool) {
        let (c, cd) = self.cond();
        let limit = if fused { Some(self.limit(self.loop_depth + 1)) } else { None };
        let saved = self.vars.clone();
        let pool_mark = self.pool.len();
        let div_mark = self.divergent_emitted;
        let then_b = self.block("then", &[], false);
        let else_b = if with_else { Some(self.block("else", &[], false)) } else { None };
        let join = if fused { self.block("head", &[(Ty::I32, "i")], true) } else { self.block("join", &[], true) };
        let prefix = if fused { vec![lit(0)] } else { vec![] };
        let other = match else_b {
            Some(e) => Self::plain(e),
            None => self.edge(join, &prefix),
        };
        self.brif(c, cd, Self::plain(then_b), other);
        self.frames.push(Frame::If { join, prefix: prefix.clone() });
        self.nest += 1;
        for side in [Some(then_b), else_b].into_iter().flatten() {
            self.cur = Some(side);
            self.side(join, &prefix);
            self.vars = saved.clone();
            self.pool.truncate(pool_mark);
        }
        self.nest -= 1;
        self.frames.pop();
        if fused {
            self.shape.headers_are_if_joins += 1;
            self.gen_loop(LoopOpts { header: Some(join), limit, guard: false, exit: None });
        } else {
            let control = self.divergent_emitted > div_mark;
            self.arrive(join, control);
        }
    }

    /// One side of an if: statements, then the join (or a jump elsewhere, or a
    /// loop whose exit is the join).
    fn side(&mut self, join: usize, prefix: &[Opnd]) {
        if self.loop_depth < MAX_LOOP_DEPTH && self.nest < MAX_NEST && self.rng.chance(12) {
            if self.rng.chance(50) {
                self.seq(2);
            }
            if self.cur.is_some() {
                self.shape.exits_are_if_joins += 1;
                let guard = self.rng.chance(30);
                self.gen_loop(LoopOpts { header: None, limit: None, guard, exit: Some((join, prefix.to_vec())) });
                return;
            }
        }
        if self.cur.is_none() {
            return;
        }
        if self.budget == 0 && self.rng.chance(50) {
            self.op();
        }
        self.seq(4);
        if self.cur.is_some() && self.rng.chance(35) {
            self.store();
        }
        if self.cur.is_some() && self.rng.chance(25) {
            self.jump(false);
        }
        if self.cur.is_some() {
            let e = self.edge(join, prefix);
            self.br(e);
        }
    }

    fn gen_loop(&mut self, o: LoopOpts) {
        let depth = self.loop_depth + 1;
        let kind = self.rng.below(3);
        let (limit, limit_div) = match o.limit {
            Some(l) => l,
            None => self.limit(depth),
        };
        let div_mark = self.divergent_emitted;
        let pool_mark = self.pool.len();
        let (exit, exit_prefix, own_exit) = match o.exit {
            Some((j, p)) => (j, p, false),
            None => (self.block("exit", &[], true), vec![], true),
        };
        let header = match o.header {
            Some(h) => h,
            None => {
                let h = self.block("head", &[(Ty::I32, "i")], true);
                let init = [lit(0)];
                if o.guard {
                    self.shape.guards += 1;
                    let (g, gd) = self.cond();
                    let skip = self.edge(exit, &exit_prefix);
                    if self.rng.chance(50) {
                        self.shape.preheaders += 1;
                        let pre = self.block("pre", &[], false);
                        self.brif(g, gd, Self::plain(pre), skip);
                        self.cur = Some(pre);
                        if self.rng.chance(50) {
                            self.op();
                        }
                        let e = self.edge(h, &init);
                        self.br(e);
                    } else {
                        let into = self.edge(h, &init);
                        self.brif(g, gd, into, skip);
                    }
                } else {
                    let e = self.edge(h, &init);
                    self.br(e);
                }
                h
            }
        };
        if self.incoming(header).is_empty() {
            // An if/else before it that never reaches its join.
            self.cur = None;
            return;
        }
        self.cur = Some(header);
        let counter = self.blocks[header].params[0];
        self.vals[counter].div = false;
        for &p in &self.blocks[header].params[1..] {
            self.vals[p].div = true;
        }
        self.take_vars(header);
        let i = Opnd::V(counter);
        self.loop_depth += 1;
        self.nest += 1;
        self.pool.push((i.clone(), Ty::I32, false));
        self.shape.loop_kinds[kind] += 1;
        let mut next_in_header = None;
        match kind {
            0 => {
                // while: the test in the header, continue to the header.
                if self.rng.chance(30) {
                    self.op();
                }
                let (mut c, mut cd) = self.icmp("slt", i.clone(), limit.clone());
                if self.rng.chance(25) {
                    let (c2, d2) = self.cond();
                    c = self.bin("c", "and", Ty::I1, c, c2);
                    cd |= d2;
                }
                let body = self.block("body", &[], false);
                let ex = self.edge(exit, &exit_prefix);
                self.terminate(Term::Brif { cond: c, div: cd || limit_div, t: Self::plain(body), f: ex });
                self.cur = Some(body);
                let next = self.def("i_next", Ty::I32, false, vec![Part::S("add i32 ".into()), Part::O(i.clone()), Part::S(", 1".into())]);
                self.pool.push((next.clone(), Ty::I32, false));
                self.frames.push(Frame::Loop { exit, exit_prefix: exit_prefix.clone(), cont: Some((header, vec![next.clone()])) });
                self.body(5);
                if self.cur.is_some() {
                    let e = self.edge(header, &[next]);
                    self.br(e);
                }
                self.frames.pop();
            }
            1 => {
                // do-while: the test in a latch, continue to the latch.
                let latch = self.block("latch", &[], true);
                let next = self.def("i_next", Ty::I32, false, vec![Part::S("add i32 ".into()), Part::O(i.clone()), Part::S(", 1".into())]);
                next_in_header = Some(next.clone());
                self.pool.push((next.clone(), Ty::I32, false));
                let header_mark = self.pool.len();
                self.frames.push(Frame::Loop { exit, exit_prefix: exit_prefix.clone(), cont: Some((latch, vec![])) });
                self.body(5);
                if self.cur.is_some() {
                    let e = self.edge(latch, &[]);
                    self.br(e);
                }
                self.frames.pop();
                // The latch is reached by continues too: only the header's values
                // dominate it.
                self.pool.truncate(header_mark);
                let control = self.divergent_emitted > div_mark;
                if self.arrive(latch, control) {
                    if self.rng.chance(25) {
                        self.op();
                    }
                    let (mut c, mut cd) = self.icmp("slt", next.clone(), limit.clone());
                    if self.rng.chance(25) {
                        let (c2, d2) = self.cond();
                        c = self.bin("c", "and", Ty::I1, c, c2);
                        cd |= d2;
                    }
                    let back = self.edge(header, &[next]);
                    let ex = self.edge(exit, &exit_prefix);
                    self.terminate(Term::Brif { cond: c, div: cd, t: back, f: ex });
                }
            }
            _ => {
                // The bounded exit in the middle: no continue before it.
                let next = self.def("i_next", Ty::I32, false, vec![Part::S("add i32 ".into()), Part::O(i.clone()), Part::S(", 1".into())]);
                next_in_header = Some(next.clone());
                self.pool.push((next.clone(), Ty::I32, false));
                self.frames.push(Frame::Loop { exit, exit_prefix: exit_prefix.clone(), cont: None });
                self.body(3);
                if self.cur.is_some() {
                    let (mut g, mut gd) = self.icmp("sge", i.clone(), limit.clone());
                    if self.rng.chance(25) {
                        let (c2, d2) = self.cond();
                        g = self.bin("c", "or", Ty::I1, g, c2);
                        gd |= d2;
                    }
                    let rest = self.block("rest", &[], false);
                    let ex = self.edge(exit, &exit_prefix);
                    // (exit when `g` holds: the loop's bound)
                    self.terminate(Term::Brif { cond: g, div: gd, t: ex, f: Self::plain(rest) });
                    self.cur = Some(rest);
                    if let Some(Frame::Loop { cont, .. }) = self.frames.last_mut() {
                        *cont = Some((header, vec![next.clone()]));
                    }
                    self.body(3);
                    if self.cur.is_some() {
                        let e = self.edge(header, &[next]);
                        self.br(e);
                    }
                }
                self.frames.pop();
            }
        }
        self.loop_depth -= 1;
        self.nest -= 1;
        self.pool.truncate(pool_mark);
        if !own_exit {
            self.cur = None;
            return;
        }
        let control = self.divergent_emitted > div_mark;
        if self.arrive(exit, control) && !o.guard {
            // The header dominates the exit: its values are those of the last
            // iteration each lane ran (divergent if lanes leave at different times).
            let d = control || limit_div;
            self.pool.push((i, Ty::I32, d));
            if let Some(n) = next_in_header {
                self.pool.push((n, Ty::I32, d));
            }
        }
    }

    // ---- the finished graph ----

    fn succs(&self, b: usize) -> Vec<usize> {
        self.blocks[b].term.as_ref().map_or(Vec::new(), |t| t.edges().iter().map(|e| e.to).collect())
    }

    /// Dominator sets of the blocks reachable from the entry.
    fn dominators(&self, live: &[bool]) -> Vec<Vec<bool>> {
        let n = self.blocks.len();
        let mut preds = vec![Vec::new(); n];
        for b in (0..n).filter(|&b| live[b]) {
            for s in self.succs(b) {
                preds[s].push(b);
            }
        }
        let mut dom: Vec<Vec<bool>> = (0..n).map(|b| if b == 0 { (0..n).map(|x| x == 0).collect() } else { live.to_vec() }).collect();
        loop {
            let mut changed = false;
            for b in (1..n).filter(|&b| live[b]) {
                let mut d: Vec<bool> = live.to_vec();
                for &p in &preds[b] {
                    for x in 0..n {
                        d[x] = d[x] && dom[p][x];
                    }
                }
                d[b] = true;
                if d != dom[b] {
                    dom[b] = d;
                    changed = true;
                }
            }
            if !changed {
                return dom;
            }
        }
    }

    fn finish(mut self, seed: u64, block_size: usize, groups: usize) -> Program {
        let n = self.blocks.len();
        // Live blocks: those with a terminator; each must be reachable.
        let mut reachable = vec![false; n];
        let mut stack = vec![0];
        while let Some(b) = stack.pop() {
            if !std::mem::replace(&mut reachable[b], true) {
                stack.extend(self.succs(b));
            }
        }
        for b in 0..n {
            assert_eq!(
                reachable[b],
                self.blocks[b].term.is_some(),
                "generator: block {} reachable but unfinished (or finished but unreachable)",
                self.blocks[b].name
            );
        }
        let live = reachable;
        let dom = self.dominators(&live);
        // Reducible: every retreating edge of a depth-first search goes to a
        // dominator (a back edge).
        let mut state = vec![0u8; n];
        let mut back_edges = Vec::new();
        fn dfs(g: &Gen, b: usize, state: &mut [u8], dom: &[Vec<bool>], back: &mut Vec<(usize, usize)>) {
            state[b] = 1;
            for s in g.succs(b) {
                match state[s] {
                    0 => dfs(g, s, state, dom, back),
                    1 => {
                        assert!(dom[b][s], "generator: irreducible edge {} -> {}", g.blocks[b].name, g.blocks[s].name);
                        back.push((b, s));
                    }
                    _ => {}
                }
            }
            state[b] = 2;
        }
        dfs(&self, 0, &mut state, &dom, &mut back_edges);
        // Natural loops, for the statistics.
        let mut preds = vec![Vec::new(); n];
        for b in (0..n).filter(|&b| live[b]) {
            for s in self.succs(b) {
                preds[s].push(b);
            }
        }
        let mut headers: Vec<usize> = back_edges.iter().map(|&(_, h)| h).collect();
        headers.sort();
        headers.dedup();
        let mut depth = vec![0usize; n];
        let mut bodies: Vec<(usize, Vec<bool>)> = Vec::new();
        for &h in &headers {
            let mut body = vec![false; n];
            body[h] = true;
            let mut stack: Vec<usize> = back_edges.iter().filter(|&&(_, x)| x == h).map(|&(l, _)| l).collect();
            while let Some(b) = stack.pop() {
                if !std::mem::replace(&mut body[b], true) {
                    stack.extend(preds[b].iter().copied());
                }
            }
            for b in 0..n {
                if body[b] {
                    depth[b] += 1;
                }
            }
            bodies.push((h, body));
        }
        self.shape.loops = headers.len();
        self.shape.max_loop_depth = depth.iter().copied().max().unwrap_or(0);
        // Trivial parameters (one value on every incoming edge besides
        // themselves, defined in a dominating block) mostly become direct uses.
        let mut alias: Vec<Option<usize>> = vec![None; self.vals.len()];
        let mut prunable = vec![false; self.vals.len()];
        for b in (0..n).filter(|&b| live[b]) {
            for &p in &self.blocks[b].params {
                prunable[p] = self.rng.chance(75);
            }
        }
        fn resolve(alias: &[Option<usize>], o: &Opnd) -> Opnd {
            let mut o = o.clone();
            while let Opnd::V(v) = o {
                match alias[v] {
                    Some(a) => o = Opnd::V(a),
                    None => break,
                }
            }
            o
        }
        loop {
            let mut changed = false;
            for b in (0..n).filter(|&b| live[b]) {
                let incoming = self.incoming(b);
                for (k, &p) in self.blocks[b].params.iter().enumerate() {
                    if alias[p].is_some() || !prunable[p] {
                        continue;
                    }
                    let mut values: Vec<Opnd> = Vec::new();
                    for o in incoming.iter().map(|e| resolve(&alias, &e.args[k])).filter(|o| *o != Opnd::V(p)) {
                        if !values.contains(&o) {
                            values.push(o);
                        }
                    }
                    if let [Opnd::V(v)] = values.as_slice() {
                        let d = self.vals[*v].block;
                        if d != b && dom[b][d] {
                            alias[p] = Some(*v);
                            changed = true;
                        }
                    }
                }
            }
            if !changed {
                break;
            }
        }
        // Values of a loop header used outside the loop (not through the exit's
        // parameters): the value of each lane's last iteration.
        for b in (0..n).filter(|&b| live[b]) {
            let blk = &self.blocks[b];
            let mut operands: Vec<&Opnd> = blk.insts.iter().flatten().filter_map(|p| if let Part::O(o) = p { Some(o) } else { None }).collect();
            if let Some(Term::Brif { cond, .. }) = &blk.term {
                operands.push(cond);
            }
            for e in blk.term.as_ref().map_or(Vec::new(), |t| t.edges()) {
                operands.extend(e.args.iter().zip(&self.blocks[e.to].params).filter(|(_, p)| alias[**p].is_none()).map(|(a, _)| a));
            }
            for o in operands {
                if let Opnd::V(v) = resolve(&alias, o) {
                    let d = self.vals[v].block;
                    if bodies.iter().any(|(h, body)| *h == d && !body[b]) {
                        self.shape.uses_after_loop += 1;
                    }
                }
            }
        }
        // Layout: creation order, sometimes shuffled (the entry stays first).
        let mut order: Vec<usize> = (0..n).filter(|&b| live[b]).collect();
        if self.rng.chance(25) {
            for i in (2..order.len()).rev() {
                let j = 1 + self.rng.below(i);
                order.swap(i, j);
            }
        }
        // Render.
        let stride = self.slots.len() * 4;
        let render = |o: &Opnd| match resolve(&alias, o) {
            Opnd::V(v) => format!("%{}", self.vals[v].name),
            Opnd::Lit(l) => l,
        };
        let render_edge = |e: &Edge| {
            let args: Vec<String> = e.args.iter().zip(&self.blocks[e.to].params).filter(|(_, p)| alias[**p].is_none()).map(|(a, _)| render(a)).collect();
            if args.is_empty() {
                self.blocks[e.to].name.clone()
            } else {
                format!("{}({})", self.blocks[e.to].name, args.join(", "))
            }
        };
        let mut text = String::new();
        let _ = writeln!(text, "; cfg_fuzz program, seed {seed:#x}: {} work-groups of {block_size}, {} words of out per work-item", groups, self.slots.len());
        text.push_str("kernel @cfg(%in: ptr<global>, %fin: ptr<global>, %out: ptr<global>, %u0: i32, %u1: i32) {\n");
        for &b in &order {
            let blk = &self.blocks[b];
            let params: Vec<String> =
                blk.params.iter().filter(|p| alias[**p].is_none()).map(|&p| format!("%{}: {}", self.vals[p].name, self.vals[p].ty.name())).collect();
            self.shape.block_params += params.len();
            self.shape.direct_uses += blk.params.len() - params.len();
            if params.is_empty() {
                let _ = writeln!(text, "{}:", blk.name);
            } else {
                let _ = writeln!(text, "{}({}):", blk.name, params.join(", "));
            }
            for inst in &blk.insts {
                text.push_str("  ");
                for part in inst {
                    match part {
                        Part::S(s) => text.push_str(s),
                        Part::O(o) => text.push_str(&render(o)),
                        Part::Stride => text.push_str(&stride.to_string()),
                    }
                }
                text.push('\n');
                self.shape.instructions += 1;
            }
            match blk.term.as_ref().unwrap() {
                Term::Br(e) => {
                    let _ = writeln!(text, "  br {}", render_edge(e));
                }
                Term::Brif { cond, div, t, f } => {
                    if *div {
                        self.shape.divergent_branches += 1;
                    } else {
                        self.shape.uniform_branches += 1;
                    }
                    let _ = writeln!(text, "  brif {}, {}, {}", render(cond), render_edge(t), render_edge(f));
                }
                Term::Ret => text.push_str("  ret\n"),
            }
        }
        text.push_str("}\n");
        self.shape.blocks = order.len();
        let module = mir::parse(&text).unwrap_or_else(|d| {
            let file = mir::SourceFile::new("cfg.mir", text.clone());
            panic!("generator bug (seed {seed:#x}): the program does not parse: {}\n{}", d.short(Some(&file)), numbered(&text))
        });
        if let Err(errors) = mir::verify::verify(&module) {
            let file = mir::SourceFile::new("cfg.mir", text.clone());
            let lines: Vec<String> = errors.iter().map(|e| e.short(Some(&file))).collect();
            panic!("generator bug (seed {seed:#x}): the program does not verify:\n{}\n{}", lines.join("\n"), numbered(&text));
        }
        // The launch.
        let items = block_size * groups;
        let input: Vec<String> = (0..INPUT_LEN)
            .map(|_| match self.rng.below(10) {
                0..=6 => self.rng.range(-40, 40).to_string(),
                7 | 8 => self.rng.range(0, 1000).to_string(),
                _ => (self.rng.next_u64() as i32).to_string(),
            })
            .collect();
        let finput: Vec<String> = (0..INPUT_LEN).map(|_| format!("{:?}", self.rng.range(-64, 64) as f32 / 4.0)).collect();
        let (u0, u1) = (self.rng.range(-3, 12), self.rng.range(-100, 100));
        let launch_json = format!(
            "{{\"kernel\": \"cfg\", \"grid\": [{items}, 1, 1], \"block\": [{block_size}, 1, 1],\n \"buffers\": {{\n  \"in\": {{\"type\": \"i32\", \"data\": [{}]}},\n  \"fin\": {{\"type\": \"f32\", \"data\": [{}]}},\n  \"out\": {{\"type\": \"i32\", \"len\": {}, \"fill\": {SENTINEL}}}}},\n \"args\": {{\"in\": \"@in\", \"fin\": \"@fin\", \"out\": \"@out\", \"u0\": {u0}, \"u1\": {u1}}},\n \"print\": [\"out\"], \"max_instructions\": {MAX_INSTRUCTIONS}}}\n",
            input.join(", "),
            finput.join(", "),
            items * self.slots.len(),
        );
        let launch = LaunchSpec::from_json(&launch_json).unwrap_or_else(|e| panic!("generator bug: launch: {e}\n{launch_json}"));
        Program {
            seed,
            text,
            module,
            launch,
            launch_json,
            slots_per_item: self.slots.len(),
            slots: self.slots,
            return_slot: self.return_slot,
            block_size,
            work_items: items,
            shape: self.shape,
        }
    }
}

/// The text with line numbers (for messages).
pub fn numbered(text: &str) -> String {
    text.lines().enumerate().map(|(i, l)| format!("{:4} {l}\n", i + 1)).collect()
}

/// The program for `seed`.
pub fn generate(seed: u64) -> Program {
    let mut rng = Rng::new(seed);
    let block_size = rng.pick(&[64usize, 96]);
    let groups = rng.pick(&[2usize, 3]);
    let mut g = Gen {
        rng,
        vals: Vec::new(),
        blocks: Vec::new(),
        cur: None,
        var_names: Vec::new(),
        var_tys: Vec::new(),
        vars: Vec::new(),
        pool: Vec::new(),
        frames: Vec::new(),
        budget: 0,
        loop_depth: 0,
        nest: 0,
        divergent_emitted: 0,
        block_size,
        slots: Vec::new(),
        final_slots: Vec::new(),
        return_slot: 0,
        ret_sites: 0,
        names: 0,
        shape: Shape::default(),
        lid: lit(0),
        gidx: lit(0),
        obase: lit(0),
        xf: lit(0),
        input: lit(0),
        finput: lit(0),
    };
    g.blocks.push(Blk { name: "entry".into(), params: Vec::new(), has_vars: false, insts: Vec::new(), term: None });
    g.cur = Some(0);
    // Kernel parameters and entry values. Names are fixed: `fresh` adds a
    // number to everything else.
    let param = |g: &mut Gen, name: &str, ty: Ty, div: bool| {
        g.vals.push(Val { name: name.into(), ty, block: 0, div });
        Opnd::V(g.vals.len() - 1)
    };
    g.input = param(&mut g, "in", Ty::I64, false);
    g.finput = param(&mut g, "fin", Ty::I64, false);
    let out = param(&mut g, "out", Ty::I64, false);
    let u0 = param(&mut g, "u0", Ty::I32, false);
    let u1 = param(&mut g, "u1", Ty::I32, false);
    let named = |g: &mut Gen, name: &str, ty: Ty, div: bool, parts: Vec<Part>| {
        g.vals.push(Val { name: name.into(), ty, block: 0, div });
        let mut p = vec![Part::S(format!("%{name} = "))];
        p.extend(parts);
        g.blocks[0].insts.push(p);
        Opnd::V(g.vals.len() - 1)
    };
    let lid = named(&mut g, "lid", Ty::I32, true, vec![Part::S("workitem_id x".into())]);
    let wg = named(&mut g, "wg", Ty::I32, false, vec![Part::S("workgroup_id x".into())]);
    let base = named(&mut g, "base", Ty::I32, false, vec![Part::S("mul i32 ".into()), Part::O(wg.clone()), Part::S(format!(", {block_size}"))]);
    let gidx = named(&mut g, "gidx", Ty::I32, true, vec![Part::S("add i32 ".into()), Part::O(base), Part::S(", ".into()), Part::O(lid.clone())]);
    let ioff = named(&mut g, "ioff", Ty::I32, true, vec![Part::S("shl i32 ".into()), Part::O(gidx.clone()), Part::S(", 2".into())]);
    let (input, finput) = (g.input.clone(), g.finput.clone());
    let pin = named(&mut g, "pin", Ty::I64, true, vec![Part::S("ptradd ".into()), Part::O(input), Part::S(", ".into()), Part::O(ioff.clone())]);
    let x = named(&mut g, "x", Ty::I32, true, vec![Part::S("load i32 ".into()), Part::O(pin)]);
    let pfin = named(&mut g, "pfin", Ty::I64, true, vec![Part::S("ptradd ".into()), Part::O(finput), Part::S(", ".into()), Part::O(ioff)]);
    let xf = named(&mut g, "xf", Ty::F32, true, vec![Part::S("load f32 ".into()), Part::O(pfin)]);
    let ooff = named(&mut g, "ooff", Ty::I32, true, vec![Part::S("mul i32 ".into()), Part::O(gidx.clone()), Part::S(", ".into()), Part::Stride]);
    g.obase = named(&mut g, "obase", Ty::I64, true, vec![Part::S("ptradd ".into()), Part::O(out), Part::S(", ".into()), Part::O(ooff)]);
    g.lid = lid.clone();
    g.gidx = gidx.clone();
    g.xf = xf.clone();
    g.pool = vec![
        (lid.clone(), Ty::I32, true),
        (gidx.clone(), Ty::I32, true),
        (x.clone(), Ty::I32, true),
        (xf.clone(), Ty::F32, true),
        (wg.clone(), Ty::I32, false),
        (u0.clone(), Ty::I32, false),
        (u1.clone(), Ty::I32, false),
    ];
    // Accumulators.
    let n_i32 = 2 + g.rng.below(3);
    let mut accs: Vec<(String, Ty)> = (0..n_i32).map(|k| (format!("a{k}"), Ty::I32)).collect();
    if g.rng.chance(50) {
        accs.push(("f".into(), Ty::F32));
    }
    if g.rng.chance(30) {
        accs.push(("w".into(), Ty::I64));
    }
    if g.rng.chance(40) {
        accs.push(("b".into(), Ty::I1));
    }
    for (name, ty) in accs {
        let init = match ty {
            Ty::I32 => match g.rng.below(6) {
                0 => x.clone(),
                1 => lid.clone(),
                2 => u0.clone(),
                3 => g.bin(&name, "mul", Ty::I32, gidx.clone(), lit(3)),
                4 => g.bin(&name, "xor", Ty::I32, x.clone(), u1.clone()),
                _ => {
                    let k = lit(g.rng.range(0, 9));
                    g.bin(&name, "add", Ty::I32, wg.clone(), k)
                }
            },
            Ty::F32 => {
                if g.rng.chance(50) {
                    xf.clone()
                } else {
                    g.bin(&name, "fadd", Ty::F32, xf.clone(), lit("0.5"))
                }
            }
            Ty::I64 => g.cast(&name, "sext", Ty::I32, x.clone(), Ty::I64),
            Ty::I1 => g.icmp("slt", x.clone(), u0.clone()).0,
        };
        g.var_names.push(name.clone());
        g.var_tys.push(ty);
        g.vars.push(init);
        let slot = g.slots.len();
        g.final_slots.push(slot);
        g.slots.push(format!("final {name}"));
        if ty == Ty::I64 {
            g.slots.push(format!("final {name} (high half)"));
        }
    }
    g.return_slot = g.slots.len();
    g.slots.push("number of the ret reached".into());
    g.budget = 14 + g.rng.below(30);
    while g.budget > 0 && g.cur.is_some() {
        g.stmt();
    }
    if g.cur.is_some() {
        g.ret_here();
    }
    g.finish(seed, block_size, groups)
}
