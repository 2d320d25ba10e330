//! inline: small device functions copied into their callers (-O1, -O2).
//!
//! A call costs more than its instruction: the arguments move into the
//! registers of the convention, the caller saves what the callee may clobber,
//! the callee builds a frame, and neither side can fold constants or share
//! values across the boundary. For a small callee the body is cheaper than
//! the call, and once it sits in the caller the function passes see through
//! it (a constant argument folds, a by-reference argument's stack slot is
//! promoted, address arithmetic is shared).
//!
//! This is the one module-level step of the MIR optimiser
//! (`opt::optimize_in_parallel`): every function is first optimised alone,
//! then this pass runs over the module, then the functions it changed go
//! through the function rounds again. A callee is inlined when it is
//!
//! - a device function of the module (not one declared external: its body
//!   here only serves the interpreter),
//! - not recursive (on no cycle of the call graph, itself included),
//! - not marked `noinline`, and
//! - small: at most [`SMALL_CALLEE`] instructions (terminators included),
//!   counted after its own callees were inlined into it; `alwaysinline`
//!   waives the size test.
//!
//! Functions are visited bottom-up (Tarjan's strongly connected components
//! come out callees first), so a callee's calls are already resolved when it
//! is copied, and its size is its final size. A caller stops taking inlines
//! once it would grow past [`CALLER_LIMIT`] instructions: total growth is at
//! most that per function, and every copied instruction is written once, so
//! the pass is linear in the size of the module it produces.
//!
//! The rewrite of one call `%r = call @g(args)` in block B: B ends at the
//! call and branches to a copy of g's entry block; the instructions after the
//! call, with B's terminator, move to a new continuation block that takes
//! `%r` as its block parameter (so the caller's uses of `%r` stay as they
//! are); g's blocks are copied with fresh values and block names (`g.NAME`,
//! made unique); g's parameters read the call's arguments; each `ret v`
//! becomes `br` to the continuation passing `v`. g's stack slots move to the
//! caller's entry block (MIR wants them there): one slot per inlined call,
//! which is what each call's frame had. Calls inside g stay calls. g has no
//! `lds_slot` or `dynamic_lds` (kernels only); builtins (work-item ids, launch
//! queries) mean the same in every function of a launch. Wave operations
//! and barriers keep their meaning: lanes meet at the same copy exactly when
//! they met at the same instruction of the same call.
//!
//! Functions nothing calls any more are kept: they are still device
//! functions of the module, with their symbols, which another object may
//! call.

use crate::mir::ir::{op_operands_mut, terminator_operands_mut, Block, BlockCall, BlockId, FuncKind, Function, InlineHint, Inst, Op, Operand, Terminator, Value, ValueInfo};
use hashbrown::{HashMap, HashSet};

/// The most instructions (terminators included) a callee may have to be
/// inlined without `alwaysinline`. Measured on the tests/spirv kernels with
/// calls, their `noinline` dropped (gfx90a, kernel plus callee): `sum3` (10
/// MIR instructions, 2 calls) 81 + 15 → 89 instructions; `weigh` (42, a loop
/// over a private array, 2 calls) 35 + 49 → 112 but no calls left to run
/// (133 → 112 executed), 14 → 12 VGPRs; `combine` (70, one call of 40
/// arguments) 95 + 92 → 107, 54 → 28 VGPRs. 64 takes the first two with
/// room to spare and leaves bodies whose copies would dominate their callers.
pub const SMALL_CALLEE: usize = 64;

/// A caller takes no inline that would make it larger than this many
/// instructions (the bound on growth, hence on compile time).
pub const CALLER_LIMIT: usize = 2000;

/// A function's size as the inliner counts it: instructions and terminators.
pub fn size(func: &Function) -> usize {
    func.blocks.iter().map(|b| b.insts.len() + 1).sum()
}

/// Inlines the module's small callees into their callers, bottom-up over the
/// call graph. `external` names device functions defined in another object
/// (never inlined, never changed). Returns, per function, whether it changed.
pub fn run(functions: &mut [Function], external: &[String]) -> Vec<bool> {
    let index: HashMap<String, usize> = functions.iter().enumerate().map(|(i, f)| (f.name.clone(), i)).collect();
    let callees: Vec<Vec<usize>> = functions.iter().map(|f| direct_callees(f, &index)).collect();
    let (order, recursive) = crate::graph::components(&callees);
    let is_external: Vec<bool> = functions.iter().map(|f| external.iter().any(|e| *e == f.name)).collect();
    let inlinable: Vec<bool> =
        functions.iter().enumerate().map(|(i, f)| f.kind == FuncKind::Device && !is_external[i] && !recursive[i] && f.inline != InlineHint::Never).collect();
    let always: Vec<bool> = functions.iter().map(|f| f.inline == InlineHint::Always).collect();
    let mut sizes: Vec<usize> = functions.iter().map(size).collect();
    let mut changed = vec![false; functions.len()];
    for f in order {
        let wanted = |g: usize, sizes: &[usize]| inlinable[g] && (always[g] || sizes[g] <= SMALL_CALLEE);
        if is_external[f] || !callees[f].iter().any(|&g| wanted(g, &sizes)) {
            continue;
        }
        // The caller is taken out of the slice while its callees are read.
        let mut caller = std::mem::replace(&mut functions[f], placeholder());
        let did = inline_calls(&mut caller, functions, &index, |g| wanted(g, &sizes).then_some(sizes[g]));
        functions[f] = caller;
        if did {
            changed[f] = true;
            sizes[f] = size(&functions[f]);
        }
    }
    changed
}

/// The functions `func` calls (by index, in order of the calls; repeats
/// kept, unknown names left out: the verifier reports them).
fn direct_callees(func: &Function, index: &HashMap<String, usize>) -> Vec<usize> {
    let mut out = Vec::new();
    for block in &func.blocks {
        for inst in &block.insts {
            if let Op::Call { callee, .. } = &inst.op {
                if let Some(&g) = index.get(callee) {
                    out.push(g);
                }
            }
        }
    }
    out
}

/// An empty function standing in for the caller while it is rewritten.
fn placeholder() -> Function {
    Function {
        name: String::new(),
        kind: FuncKind::Device,
        conv: Default::default(),
        inline: InlineHint::Auto,
        attrs: Default::default(),
        params: Vec::new(),
        ret: None,
        blocks: Vec::new(),
        values: Vec::new(),
        span: crate::mir::ir::Span::NONE,
    }
}

/// Unique names in one function: `base`, else `base.N` with the lowest N
/// not yet tried for that base (so repeated copies of one callee cost no
/// search over the earlier ones).
struct Unique {
    taken: HashSet<String>,
    next: HashMap<String, usize>,
}

impl Unique {
    fn new<'a>(names: impl Iterator<Item = &'a str>) -> Unique {
        Unique { taken: names.map(str::to_string).collect(), next: HashMap::new() }
    }

    fn name(&mut self, base: String) -> String {
        if self.taken.insert(base.clone()) {
            return base;
        }
        let n = self.next.entry(base.clone()).or_insert(1);
        loop {
            let candidate = format!("{base}.{n}");
            *n += 1;
            if self.taken.insert(candidate.clone()) {
                return candidate;
            }
        }
    }
}

/// Inlines into `caller` every call whose callee `take` accepts (giving its
/// size), while the caller stays within [`CALLER_LIMIT`]. Only the caller's
/// own blocks (and the continuations made of them) are searched for calls;
/// copied bodies are not searched again. Returns whether anything changed.
fn inline_calls(caller: &mut Function, functions: &[Function], index: &HashMap<String, usize>, take: impl Fn(usize) -> Option<usize>) -> bool {
    let mut size = size(caller);
    let mut values: Option<Unique> = None;
    let mut blocks: Option<Unique> = None;
    let mut slots: Vec<Inst> = Vec::new();
    let mut changed = false;
    // Blocks to search, and the instruction to start at.
    let mut work: Vec<usize> = (0..caller.blocks.len()).rev().collect();
    while let Some(b) = work.pop() {
        let found = caller.blocks[b].insts.iter().enumerate().find_map(|(k, inst)| {
            let Op::Call { callee, args } = &inst.op else { return None };
            let g = *index.get(callee)?;
            let callee_size = take(g)?;
            let callee = &functions[g];
            let fits = size + callee_size <= CALLER_LIMIT;
            let matches = args.len() == callee.params.len() && inst.result.is_some() == callee.ret.is_some() && !callee.blocks.is_empty();
            (fits && matches).then_some((k, g, callee_size))
        });
        let Some((k, g, callee_size)) = found else { continue };
        let values = values.get_or_insert_with(|| Unique::new(caller.values.iter().map(|v| v.name.as_str())));
        let blocks = blocks.get_or_insert_with(|| Unique::new(caller.blocks.iter().map(|b| b.name.as_str())));
        let continuation = inline_one(caller, b, k, &functions[g], values, blocks, &mut slots);
        size += callee_size;
        changed = true;
        work.push(continuation);
    }
    if !slots.is_empty() {
        caller.blocks[0].insts.splice(0..0, slots);
    }
    changed
}

/// Replaces the call at `caller.blocks[b].insts[k]` by a copy of `callee`;
/// the callee's stack slots go to `slots` (for the caller's entry block).
/// Returns the continuation block (the instructions after the call).
fn inline_one(caller: &mut Function, b: usize, k: usize, callee: &Function, values: &mut Unique, blocks: &mut Unique, slots: &mut Vec<Inst>) -> usize {
    let tail = caller.blocks[b].insts.split_off(k + 1);
    let call = caller.blocks[b].insts.pop().expect("the call is at k");
    let Op::Call { args, .. } = call.op else { unreachable!("inline_one is given a call") };
    // The callee's values in the caller: parameters read the arguments,
    // everything the callee defines gets a fresh value.
    let mut map: Vec<Option<Operand>> = vec![None; callee.values.len()];
    for (param, arg) in callee.params.iter().zip(args) {
        map[param.value.0 as usize] = Some(arg);
    }
    let mut fresh = |v: Value, map: &mut Vec<Option<Operand>>| {
        let info = &callee.values[v.0 as usize];
        let name = values.name(format!("{}.{}", callee.name, info.name));
        caller.values.push(ValueInfo { name, ty: info.ty.clone() });
        let new = Value(caller.values.len() as u32 - 1);
        map[v.0 as usize] = Some(Operand::Value(new));
        new
    };
    let mut defined: Vec<(Vec<Value>, Vec<Option<Value>>)> = Vec::with_capacity(callee.blocks.len());
    for block in &callee.blocks {
        let params = block.params.iter().map(|&p| fresh(p, &mut map)).collect();
        let results = block.insts.iter().map(|inst| inst.result.map(|r| fresh(r, &mut map))).collect();
        defined.push((params, results));
    }
    let base = caller.blocks.len();
    let continuation = base + callee.blocks.len();
    let read = |operand: &mut Operand| {
        if let Operand::Value(v) = operand {
            *operand = map[v.0 as usize].clone().expect("the callee's values are all defined (verified MIR)");
        }
    };
    for (i, (block, (params, results))) in callee.blocks.iter().zip(defined).enumerate() {
        let mut insts = Vec::with_capacity(block.insts.len());
        for (inst, result) in block.insts.iter().zip(results) {
            let mut copy = Inst { result, op: inst.op.clone(), span: inst.span };
            op_operands_mut(&mut copy.op).into_iter().for_each(read);
            if i == 0 && matches!(copy.op, Op::StackSlot { .. }) {
                slots.push(copy);
            } else {
                insts.push(copy);
            }
        }
        let mut term = block.term.clone();
        match &mut term {
            Terminator::Br(to) => to.block = BlockId(base as u32 + to.block.0),
            Terminator::BrIf { then_to, else_to, .. } => {
                then_to.block = BlockId(base as u32 + then_to.block.0);
                else_to.block = BlockId(base as u32 + else_to.block.0);
            }
            Terminator::Ret(value) => term = Terminator::Br(BlockCall { block: BlockId(continuation as u32), args: value.iter().cloned().collect() }),
            Terminator::Unreachable => {}
        }
        terminator_operands_mut(&mut term).into_iter().for_each(read);
        let name = blocks.name(format!("{}.{}", callee.name, block.name));
        caller.blocks.push(Block { name, params, insts, term, term_span: block.term_span, span: block.span });
    }
    // The rest of the call's block, entered with the call's result.
    let from = &mut caller.blocks[b];
    let term = std::mem::replace(&mut from.term, Terminator::Br(BlockCall { block: BlockId(base as u32), args: Vec::new() }));
    let term_span = std::mem::replace(&mut from.term_span, call.span);
    let name = blocks.name(format!("{}.after.{}", from.name, callee.name));
    caller.blocks.push(Block { name, params: call.result.into_iter().collect(), insts: tail, term, term_span, span: call.span });
    continuation
}
