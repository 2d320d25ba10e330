//! licm: loop-invariant code motion. A pure computation inside a loop whose
//! operands are all defined outside it (or move out with it) gives the same
//! value on every iteration; it moves to the loop's preheader and runs once
//! per entry into the loop instead of once per iteration. gvn cannot do
//! this (the loop body does not dominate the code before it). clang -O2 has
//! done it before SPIR-V is written; unoptimised input (clang -O0, the
//! builder API, hand-written MIR) keeps a row's offset `row * n`, a tile's
//! LDS base or a reciprocal of an argument in the body.
//!
//! **Loops** are the natural loops of `mir::cfg::LoopForest` (shared with
//! codegen's structure and uniformity). A loop whose header is the entry
//! block is left alone (it cannot get a preheader).
//!
//! **The preheader** is the block outside the loop that branches to the
//! header unconditionally and is its only predecessor outside the loop.
//! Where the header has none (a guard's `brif` straight into the loop, or
//! several entry edges), one is made when something moves: a new block with
//! parameters of the header's types, to which every entry edge goes with
//! its arguments, and which passes them on to the header (whose parameters
//! stay). On tests/spirv (through clang -O2, -O0 or its spirv64-amd-amdhsa
//! path) licm never had to make one: clang's loops come with a preheader
//! (all 26 loops of the -O2 kernels when licm first runs), and branches
//! folds it away only once it is empty. The random programs of
//! tests/common/cfggen.rs, whose guards branch straight into the loop, get
//! one often (101 new preheaders over the 120 programs mir_opt runs in CI,
//! in two rounds of the passes).
//!
//! **What may move**: the instructions gvn calls pure (no memory access,
//! call, slot or wave collective: a collective's result depends on which
//! lanes are active, which differs between the body and the preheader),
//! except constants (selection materialises or folds them where they are
//! used). Loads stay in the loop (a store, atomic or call in it may change
//! what they read). An instruction the interpreter may reject for some
//! operands (integer division or remainder unless the divisor is a constant
//! other than 0, and -1 for signed ones; `addrspacecast` from flat, which
//! requires the address to be in the target space) moves out of a loop only
//! from a block that dominates every latch and every exiting block of that
//! loop: a run that enters the loop and leaves it or starts another
//! iteration passes that block, so computing it earlier fails only where
//! the original failed.
//!
//! **What moves**: what may move and pays off, and what a moving instruction
//! reads. Moving something that selection makes free where it is would only
//! hold a register across the loop: casts that rename or widen registers,
//! aggregate plumbing, kernel inputs, a compare that is only its block's
//! branch condition or a `select`'s there (a uniform one is made at its use,
//! in SCC), a 32-bit shift, add, xor, and or or that its one reader in its
//! block takes into a three-operand instruction (codegen/fuse_valu.rs), and
//! a `ptradd` by a constant that accesses take in their offset field. On
//! clang -O2's SPIR-V, where what is left invariant is mostly such code,
//! moving all of it cost instructions and VGPRs and saved nothing
//! (tests/spirv: +3 or +4 instructions and +1 VGPR per target; one kernel
//! through clang's spirv64-amd-amdhsa path +16 instructions, +4 VGPRs).
//! **Pressure guard**: a moving value that something left in the loop (or
//! after it) reads is live across every loop it leaves. A loop's live-in
//! values (defined outside, read inside) may take at most
//! [`MAX_LIVE_IN_REGISTERS`] 32-bit registers after the moves: a move past
//! that stays, unless a moving reader needs it. (Operands that die when
//! their readers move are not subtracted: the count errs high.)
//!
//! **Order**: two walks, no iteration. (1) Forwards over the reachable
//! blocks in reverse postorder, each block's instructions in order: an
//! instruction's operands come before it (SSA: a definition dominates its
//! uses), so each operand's loop is known when it is reached (its block's,
//! or the one its move takes it to). Its block's loops are tried from the
//! innermost outwards; it may leave each loop that holds no operand (and,
//! if it may fail, whose latches and exits its block dominates): its target
//! is the outermost loop it may leave, as far out as its operands allow.
//! (2) Backwards over those candidates, so every reader is decided before
//! what it reads: a candidate moves if a moving one reads it, or if it pays
//! off and the guard allows. Moving instructions go to the end of their
//! target's preheader in the order of walk (1), each after the operands
//! moving with it. Walk (1) tries each instruction's loops from its block
//! outwards and walk (2) charges the same loops, as does counting each
//! loop's live-in values: the function's size times the loop depth. A
//! second run moves nothing more unless the guard held something back and
//! operands that died have made room (each instruction that pays off is
//! already in the outermost loop its operands allow); every move goes
//! outwards, so -O2's rounds settle.
//!
//! Why it is correct: the preheader dominates every block of its loop and
//! every block they dominate, so a moved value dominates all its uses; an
//! operand defined outside the loop dominates the instruction, and every
//! path to it enters the loop through the preheader, so the operand
//! dominates the preheader (or is defined in it, above what is appended).

use super::gvn::is_pure;
use super::rewrite::{remove_marked, reverse_postorder, Names};
use crate::abi::{AddrSpace, Type};
use crate::mir::cfg::{dominator_intervals, Cfg, LoopForest};
use crate::mir::ir::{op_operands, terminator_operands, BinOp, Block, BlockCall, BlockId, CastOp, Function, Inst, Op, Operand, Span, Terminator, Value};
use hashbrown::HashSet;

/// Where a loop's hoisted instructions go.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Preheader {
    /// An existing block: the loop's only outside predecessor, which ends in
    /// `br header`.
    Existing(usize),
    /// A block to make if something is hoisted.
    New,
}

/// Per loop: the smallest dominator-tree preorder number and the largest
/// postorder number of its latches and exiting blocks. A block dominates
/// all of them iff its dominator-tree interval contains this span.
type DomSpan = (u32, u32);

/// The most registers (32-bit values) of values live into a loop that a
/// move may leave it with: the values defined outside it and read inside,
/// moved ones included, each live across the whole loop. Selection keeps
/// uniform values in SGPRs, but MIR does not know which values are
/// uniform, so every value counts. The loops of tests/spirv (clang -O2 and
/// -O0) have at most 15 before licm, and none reaches the bound after it.
const MAX_LIVE_IN_REGISTERS: u32 = 32;

/// An instruction that may leave its loops: where it is, and the outermost
/// loop it may leave.
struct Candidate {
    block: usize,
    index: usize,
    target: usize,
}

pub fn run(func: &mut Function) -> bool {
    let cfg = Cfg::new(func);
    let n = cfg.len();
    if n == 0 {
        return false;
    }
    let idom = cfg.dominators();
    let forest = LoopForest::new(&cfg, &idom);
    if forest.loops.is_empty() {
        return false;
    }
    let intervals = dominator_intervals(&idom, 0);
    let reachable = |b: usize| b == 0 || idom[b].is_some();

    // Each loop's preheader (none for a loop headed by the entry block).
    let preheader: Vec<Option<Preheader>> = forest
        .loops
        .iter()
        .enumerate()
        .map(|(l, lp)| {
            let h = lp.header;
            let mut outside = cfg.preds[h].iter().copied().filter(|&p| reachable(p) && !forest.contains(l, p));
            match (outside.next(), outside.next()) {
                _ if h == 0 => None,
                (Some(p), None) if matches!(&func.blocks[p].term, Terminator::Br(call) if call.block.0 as usize == h) => Some(Preheader::Existing(p)),
                _ => Some(Preheader::New),
            }
        })
        .collect();
    let must_execute = must_execute_spans(&forest, &cfg, &intervals, &reachable);

    // Where each instruction may go. A value's loop is the innermost loop of
    // the block defining it, as the walk moves it: a hoisted value is in the
    // preheader of its target, whose innermost loop is the target's parent
    // (an existing preheader too: it is in every loop holding the header but
    // the header's own, since its one successor is the header).
    let mut value_loop: Vec<Option<usize>> = func.defining_blocks().iter().map(|&b| forest.loop_of.get(b).copied().flatten()).collect();
    let address_only = address_only_pointers(func);
    let mut candidates: Vec<Candidate> = Vec::new();
    for b in reverse_postorder(func) {
        if forest.loop_of[b].is_none() {
            continue;
        }
        for (index, inst) in func.blocks[b].insts.iter().enumerate() {
            let Some(result) = inst.result else { continue };
            if !is_pure(&inst.op) || matches!(inst.op, Op::Const(_)) {
                continue;
            }
            let may_fail = may_fail(&inst.op);
            let mut target = None;
            let mut cur = forest.loop_of[b];
            while let Some(l) = cur {
                let defined_inside = op_operands(&inst.op).into_iter().any(|o| matches!(o, Operand::Value(v) if value_loop[v.0 as usize].is_some_and(|d| forest.contains_loop(l, d))));
                let (lo, hi) = must_execute[l];
                if preheader[l].is_none() || defined_inside || (may_fail && !(intervals[b].0 <= lo && hi <= intervals[b].1)) {
                    break;
                }
                target = Some(l);
                cur = forest.loops[l].parent;
            }
            if let Some(target) = target {
                candidates.push(Candidate { block: b, index, target });
                value_loop[result.0 as usize] = forest.loops[target].parent;
            }
        }
    }
    if candidates.is_empty() {
        return false;
    }

    // Which candidates move: backwards (every reader before what it reads),
    // each one that pays off alone or that a moving instruction reads, so
    // every moving instruction's operands move too or were outside already.
    // A moving value that something staying still reads is live across the
    // loops it leaves: a move that would take one of them past
    // MAX_LIVE_IN_REGISTERS stays (unless a moving reader needs it).
    let readers = readers(func);
    let mut is_candidate: Vec<Vec<bool>> = func.blocks.iter().map(|b| vec![false; b.insts.len()]).collect();
    for cand in &candidates {
        is_candidate[cand.block][cand.index] = true;
    }
    let mut read_by_staying = vec![false; func.values.len()];
    for (b, block) in func.blocks.iter().enumerate() {
        for (i, inst) in block.insts.iter().enumerate() {
            if !is_candidate[b][i] {
                mark(&mut read_by_staying, op_operands(&inst.op));
            }
        }
        mark(&mut read_by_staying, terminator_operands(&block.term));
    }
    let mut needed = vec![false; func.values.len()];
    let mut held = live_in_registers(func, &forest, &reachable);
    let mut moves = vec![false; candidates.len()];
    for (c, cand) in candidates.iter().enumerate().rev() {
        let inst = &func.blocks[cand.block].insts[cand.index];
        let result = inst.result.expect("candidates have results");
        let r = result.0 as usize;
        let cost = if read_by_staying[r] { registers(func.value_type(result)) } else { 0 };
        // The loops it leaves: from its block's innermost one to the target.
        let left = std::iter::successors(forest.loop_of[cand.block], |&l| (l != cand.target).then(|| forest.loops[l].parent).flatten());
        moves[c] = needed[r] || (pays_off(func, cand.block, inst, readers[r], address_only[r]) && left.clone().all(|l| held[l] + cost <= MAX_LIVE_IN_REGISTERS));
        if moves[c] {
            for l in left {
                held[l] += cost;
            }
            mark(&mut needed, op_operands(&inst.op));
        } else {
            mark(&mut read_by_staying, op_operands(&inst.op));
        }
    }
    if !moves.iter().any(|&m| m) {
        return false;
    }

    let mut hoisted: Vec<Vec<Inst>> = vec![Vec::new(); forest.loops.len()];
    let mut removed: Vec<Vec<bool>> = func.blocks.iter().map(|b| vec![false; b.insts.len()]).collect();
    for (cand, _) in candidates.iter().zip(&moves).filter(|(_, &m)| m) {
        hoisted[cand.target].push(func.blocks[cand.block].insts[cand.index].clone());
        removed[cand.block][cand.index] = true;
    }
    remove_marked(func, &removed);
    let mut names = Names::default();
    let mut block_names: HashSet<String> = func.blocks.iter().map(|b| b.name.clone()).collect();
    for (l, insts) in hoisted.into_iter().enumerate() {
        match preheader[l] {
            _ if insts.is_empty() => {}
            Some(Preheader::Existing(p)) => func.blocks[p].insts.extend(insts),
            Some(Preheader::New) => {
                let h = forest.loops[l].header;
                let index = func.blocks.len();
                let mut params = Vec::with_capacity(func.blocks[h].params.len());
                for p in func.blocks[h].params.clone() {
                    let (ty, hint) = (func.value_type(p).clone(), func.value_name(p).to_string());
                    params.push(names.fresh(func, ty, &hint));
                }
                // Every edge into the header from outside the loop
                // (unreachable blocks' too) now enters through the preheader.
                for &p in &cfg.preds[h] {
                    if !forest.contains(l, p) {
                        redirect(&mut func.blocks[p].term, h, index);
                    }
                }
                let name = unique_block_name(&mut block_names, &format!("{}.preheader", func.blocks[h].name));
                let span = func.blocks[h].span;
                let args = params.iter().map(|&p| Operand::Value(p)).collect();
                func.blocks.push(Block { name, params, insts, term: Terminator::Br(BlockCall { block: BlockId(h as u32), args }), term_span: Span::NONE, span });
            }
            None => {}
        }
    }
    true
}

/// Per loop, the registers of the values defined outside it and read
/// inside it, each counted once: what is live across the whole loop on
/// entry. Each read walks up from its block's innermost loop to the one
/// holding the definition: the function's size times the loop depth.
fn live_in_registers(func: &Function, forest: &LoopForest, reachable: &dyn Fn(usize) -> bool) -> Vec<u32> {
    let def_loop: Vec<Option<usize>> = func.defining_blocks().iter().map(|&b| forest.loop_of.get(b).copied().flatten()).collect();
    let mut out = vec![0u32; forest.loops.len()];
    let mut counted: HashSet<(usize, u32)> = HashSet::new();
    for (b, block) in func.blocks.iter().enumerate() {
        if forest.loop_of[b].is_none() || !reachable(b) {
            continue;
        }
        for operand in block.insts.iter().flat_map(|i| op_operands(&i.op)).chain(terminator_operands(&block.term)) {
            let Operand::Value(v) = operand else { continue };
            let mut cur = forest.loop_of[b];
            while let Some(l) = cur {
                if def_loop[v.0 as usize].is_some_and(|d| forest.contains_loop(l, d)) {
                    break;
                }
                if counted.insert((l, v.0)) {
                    out[l] += registers(func.value_type(*v));
                }
                cur = forest.loops[l].parent;
            }
        }
    }
    out
}

/// Per loop, the span of its latches and exiting blocks (a block an edge
/// leaves the loop from; a block without successors, `ret` or
/// `unreachable`, leaves all of its loops). Each edge walks up from its
/// source's innermost loop to the innermost one holding its target: the
/// CFG's size times the loop depth.
fn must_execute_spans(forest: &LoopForest, cfg: &Cfg, intervals: &[(u32, u32)], reachable: &dyn Fn(usize) -> bool) -> Vec<DomSpan> {
    let mut spans: Vec<DomSpan> = vec![(u32::MAX, 0); forest.loops.len()];
    let widen = |span: &mut DomSpan, b: usize| {
        span.0 = span.0.min(intervals[b].0);
        span.1 = span.1.max(intervals[b].1);
    };
    for (l, lp) in forest.loops.iter().enumerate() {
        for &latch in &lp.latches {
            widen(&mut spans[l], latch);
        }
    }
    for b in (0..cfg.len()).filter(|&b| reachable(b)) {
        let mut leave = |target: Option<usize>| {
            let mut cur = forest.loop_of[b];
            while let Some(l) = cur {
                if target.is_some_and(|s| forest.contains(l, s)) {
                    break;
                }
                widen(&mut spans[l], b);
                cur = forest.loops[l].parent;
            }
        };
        if cfg.succs[b].is_empty() {
            leave(None);
        }
        for &s in &cfg.succs[b] {
            leave(Some(s));
        }
    }
    spans
}

/// Sets the flags of the values among `operands`.
fn mark<'a>(flags: &mut [bool], operands: impl IntoIterator<Item = &'a Operand>) {
    for operand in operands {
        if let Operand::Value(v) = operand {
            flags[v.0 as usize] = true;
        }
    }
}

/// The 32-bit registers a value of type `ty` takes (an `i1` one, as a
/// lane mask would take an SGPR pair and a uniform one an SGPR).
fn registers(ty: &Type) -> u32 {
    ty.bits().div_ceil(32).max(1)
}

/// Who reads a value.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Readers {
    None,
    /// One read, by the instruction (block, index).
    Inst(usize, usize),
    /// One read, by the block's terminator.
    Terminator(usize),
    Several,
}

fn readers(func: &Function) -> Vec<Readers> {
    let mut out = vec![Readers::None; func.values.len()];
    let mut read = |v: &Operand, by: Readers| {
        if let Operand::Value(v) = v {
            let r = &mut out[v.0 as usize];
            *r = if *r == Readers::None { by } else { Readers::Several };
        }
    };
    for (b, block) in func.blocks.iter().enumerate() {
        for (i, inst) in block.insts.iter().enumerate() {
            for operand in op_operands(&inst.op) {
                read(operand, Readers::Inst(b, i));
            }
        }
        for operand in terminator_operands(&block.term) {
            read(operand, Readers::Terminator(b));
        }
    }
    out
}

/// Whether moving `inst` (in `block`) out of its loop saves work there by
/// itself, with no moving instruction reading it. Not, for what selection
/// makes free where it is: casts that only rename or widen registers,
/// aggregate plumbing, kernel inputs and wave constants (registers from the
/// start), a compare whose one reader is its block's branch or a `select`
/// there (selection makes a uniform one at its use, in SCC), and a 32-bit
/// shift, add, xor, and, or whose one reader, in the same block, takes it
/// into one three-operand instruction (codegen/fuse_valu.rs), and a
/// `ptradd` by a constant that its accesses fold (`address_only`). Moved
/// alone, each would only hold a register across the loop.
fn pays_off(func: &Function, block: usize, inst: &Inst, readers: Readers, address_only: bool) -> bool {
    let read_here = |pred: &dyn Fn(&Op) -> bool| matches!(readers, Readers::Inst(b, i) if b == block && pred(&func.blocks[b].insts[i].op));
    match &inst.op {
        _ if address_only => false,
        Op::Cast { op: CastOp::Trunc | CastOp::ZExt | CastOp::SExt | CastOp::Bitcast | CastOp::PtrToInt | CastOp::IntToPtr, .. } => false,
        Op::Extract { .. } | Op::Insert { .. } | Op::Make { .. } | Op::Builtin { .. } | Op::DynamicLds | Op::Wave { .. } => false,
        Op::Icmp { .. } | Op::Fcmp { .. } => {
            let branch = readers == Readers::Terminator(block) && matches!(&func.blocks[block].term, Terminator::BrIf { cond: Operand::Value(c), .. } if Some(*c) == inst.result);
            !(branch || read_here(&|op| matches!(op, Op::Select { .. })))
        }
        Op::Binary { op: inner, ty: Type::I32, .. } => !read_here(&|op| fuses(*inner, op)),
        _ => true,
    }
}

/// True if a 32-bit `inner` whose result `outer` reads makes one VOP3
/// instruction with it (the pairs of codegen/fuse_valu.rs).
fn fuses(inner: BinOp, outer: &Op) -> bool {
    let Op::Binary { op: outer, ty: Type::I32, rhs, .. } = outer else { return false };
    match outer {
        BinOp::Add => matches!(inner, BinOp::Shl | BinOp::Add | BinOp::Xor),
        BinOp::Xor => inner == BinOp::Xor,
        BinOp::Or => matches!(inner, BinOp::Shl | BinOp::And | BinOp::Or),
        BinOp::Shl => inner == BinOp::Add && matches!(rhs, Operand::Const(_)),
        BinOp::And => inner == BinOp::LShr && matches!(rhs, Operand::Const(_)),
        _ => false,
    }
}

/// True for an operation the interpreter rejects for some operand values
/// (docs/mir-semantics.md): integer division and remainder unless the
/// divisor is a constant other than 0 (and -1, for signed division), and
/// `addrspacecast` from flat to a specific space.
fn may_fail(op: &Op) -> bool {
    match op {
        Op::Binary { op: BinOp::UDiv | BinOp::URem, rhs, .. } => !matches!(rhs, Operand::Const(c) if c.bits != 0),
        Op::Binary { op: BinOp::SDiv | BinOp::SRem, ty, rhs, .. } => {
            let all_ones = if ty.bits() >= 64 { u64::MAX } else { (1u64 << ty.bits()) - 1 };
            !matches!(rhs, Operand::Const(c) if c.bits != 0 && c.bits != all_ones)
        }
        Op::Cast { op: CastOp::AddrSpaceCast, from, .. } => matches!(from, Type::Ptr(AddrSpace::Flat)),
        _ => false,
    }
}

/// Per value: a `ptradd` by a constant that selection folds into the
/// accesses using it, so that it costs nothing where it is. A global or
/// constant one whose every use is the address of a load or store in its
/// own block (`Lowered::VmemAddr`: the offset field), and a local one whose
/// every use is the address of a local load or store (the DS offset field;
/// `memory::lds_folded_pointers` also wants no loop exit between the
/// definition and a use, which moving the definition out of loops keeps).
fn address_only_pointers(func: &Function) -> Vec<bool> {
    // Per value: Some(block) for a global candidate, Some(usize::MAX) for
    // a local one (uses anywhere).
    let mut candidate: Vec<Option<usize>> = vec![None; func.values.len()];
    for (b, block) in func.blocks.iter().enumerate() {
        for inst in &block.insts {
            if let (Some(r), Op::PtrAdd { ptr, offset: Operand::Const(_) }) = (inst.result, &inst.op) {
                candidate[r.0 as usize] = match func.operand_type(ptr) {
                    Type::Ptr(AddrSpace::Global | AddrSpace::Constant) => Some(b),
                    Type::Ptr(AddrSpace::Local) => Some(usize::MAX),
                    _ => None,
                };
            }
        }
    }
    let mut disqualify = |v: &Operand, allowed: Option<Value>, b: usize| {
        if let Operand::Value(v) = v {
            let c = &mut candidate[v.0 as usize];
            if c.is_some_and(|home| allowed != Some(*v) || (home != usize::MAX && home != b)) {
                *c = None;
            }
        }
    };
    for (b, block) in func.blocks.iter().enumerate() {
        for inst in &block.insts {
            let allowed = match &inst.op {
                Op::Load { ptr: Operand::Value(p), .. } => Some(*p),
                Op::Store { ptr: Operand::Value(p), value, .. } if *value != Operand::Value(*p) => Some(*p),
                _ => None,
            };
            for operand in op_operands(&inst.op) {
                disqualify(operand, allowed, b);
            }
        }
        for operand in terminator_operands(&block.term) {
            disqualify(operand, None, b);
        }
    }
    candidate.into_iter().map(|c| c.is_some()).collect()
}

/// Points every edge of `term` to block `from` at block `to` instead (same
/// arguments).
fn redirect(term: &mut Terminator, from: usize, to: usize) {
    let calls: Vec<&mut BlockCall> = match term {
        Terminator::Br(call) => vec![call],
        Terminator::BrIf { then_to, else_to, .. } => vec![then_to, else_to],
        Terminator::Ret(_) | Terminator::Unreachable => Vec::new(),
    };
    for call in calls {
        if call.block.0 as usize == from {
            call.block = BlockId(to as u32);
        }
    }
}

/// `base`, or `base.N` for the first N no block is named; taken from now on.
fn unique_block_name(taken: &mut HashSet<String>, base: &str) -> String {
    let name = std::iter::once(base.to_string()).chain((1..).map(|k| format!("{base}.{k}"))).find(|name| !taken.contains(name)).unwrap_or_default();
    taken.insert(name.clone());
    name
}
