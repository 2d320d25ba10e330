//! Control-flow lowering by lane masks in a linear block order (docs/pipeline.md,
//! "Control flow").
//!
//! The blocks run in the order `structure.rs` chose: a topological order of the
//! forward edges in which every loop is contiguous. Each block that lanes can
//! reach along a *mask edge* (an edge that carries only some of the active
//! lanes, or that leaves a block running with some lanes off) has a lane-mask
//! variable `M[b]`: the lanes waiting to run it. An edge `a -> b` with lanes `L`
//! does `M[b] |= L` and merges its arguments into `b`'s parameters lane by lane;
//! `b`'s head sets `EXEC = M[b]`, empties `M[b]`, and skips `b` when no lane
//! waits (`s_cbranch_execz`). After a block, the wave walks on to the next point
//! of the order that can have lanes: the next block with a mask, or the
//! continuation check of a loop ending there (`EXEC = M[header]`, back to the
//! header's body while lanes remain). Lanes leaving a loop wait in the exit's
//! mask until the loop is done, so every lane reaches every block it should,
//! exactly once per visit, for any reducible CFG.
//!
//! Uniform branches stay real branches (*direct* edges, EXEC untouched) where no
//! lane can be elsewhere (a block outside every divergent region,
//! `Uniformity::partial_exec` false) and wherever the jump passes only points
//! that no lane can wait at (reached only through the branch's own block, or
//! on the other arm of a uniform branch above it); masks appear only where
//! divergence does.
//!
//! Values a loop with mask exits defines and code after the loop uses are
//! merged at each exit into accumulators (a lane leaves with the value of its
//! last iteration), for every lane running the exit's block (see
//! `merge_tracked`); nested loops tracking one value share its accumulator,
//! and a value passed on to a join right after the loop accumulates in the
//! join's parameter. Masks, parameter accumulators and those accumulators are
//! *variables*: assigned in several places. `ssa_repair.rs` turns them (and
//! values whose definitions a skip edge bypasses) into SSA for regalloc2.

use hashbrown::{HashMap, HashSet};

use regalloc2 as ra;

use super::isel::{IselHandle, Lowered, MergeKind};
use super::vcode::{Branch, Class, ExecOp, MKind, MaskSel};
use crate::abi::kernarg::KernargLayout;
use crate::abi::kernel::InitialState;
use crate::mir::{BlockCall, Diagnostic, FuncKind, Operand, Terminator, Value};

/// What the SSA repair needs to know about the variables lowering made.
#[derive(Default)]
pub struct Variables {
    /// Lane-mask variables: read before any assignment, they are empty (0).
    pub zero_default: HashSet<ra::VReg>,
}

/// A point of the walk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Point {
    /// The head of the block at this position.
    Head(usize),
    /// The continuation check of a loop.
    Check(usize),
}

struct Lowering {
    /// Per MIR block: reached along some mask edge.
    mask_headed: Vec<bool>,
    /// Per MIR block: its branch keeps EXEC (convergent, uniform).
    real: Vec<bool>,
    /// Edges (from, to) of uniform terminators that jump straight to the target.
    direct: HashSet<(usize, usize)>,
    /// Per MIR block: one edge brings all lanes of a visit (so its mask and
    /// parameters are assigned, not merged).
    single_contribution: Vec<bool>,
    /// Per MIR block: the joins whose masks it sets to its own EXEC (it
    /// dominates them, they post-dominate it, in the same loop: exactly its
    /// lanes arrive there), so the edges into them leave their masks alone.
    saves_for: Vec<Vec<usize>>,
    /// Per MIR block: its mask is set by its immediate dominator.
    saved_by_idom: Vec<bool>,
    /// Per MIR block: the block right before it whose one mask edge brings all
    /// its lanes and whose walk is the only one that reaches its head with lanes:
    /// the head narrows EXEC itself (`s_and exec, exec, c`), no mask needed.
    fold_from: Vec<Option<usize>>,
    /// Heads narrowing EXEC, with the lanes (filled at the edge, used at the head).
    head_and: HashMap<usize, (MaskSel, Option<ra::VReg>)>,
    /// The MIR block whose terminator is being lowered.
    cur: usize,
    /// Per MIR block: the mask variable.
    mask: Vec<Option<ra::VReg>>,
    /// Per MIR block: head and body machine blocks.
    head: Vec<Option<usize>>,
    body: Vec<usize>,
    /// Per loop: the check block, when some back edge is a mask edge.
    check: Vec<Option<usize>>,
    /// Walk points in order, with their machine blocks.
    points: Vec<(Point, usize)>,
    /// Per position: index of the first point after the block's body.
    next_after: Vec<usize>,
    /// Per loop: index of the first point after its range (and its check).
    point_after_loop: Vec<usize>,
    /// Per MIR block: its head may skip the block (it can be reached with no
    /// lane: inside a divergent region, or not on every path of its loop).
    head_tests: Vec<bool>,
    /// The end of the walk (created when needed).
    end: Option<usize>,
    /// Per MIR block with a mask: its parameters' variables (flattened).
    param_vars: Vec<Vec<(ra::VReg, MergeKind)>>,
    /// Per loop with mask exits: the values it accumulates.
    tracked: Vec<Vec<Tracked>>,
    /// (machine block, accumulator) pairs the block already merged into
    /// (both edges of a divergent branch may leave one loop, and nested
    /// loops share accumulators; one merge serves all).
    tracked_merged: HashSet<(usize, ra::VReg)>,
    /// Original lowerings of tracked values.
    original: HashMap<Value, Option<Lowered>>,
    /// Block that defines each value.
    def_block: Vec<usize>,
    vars: Variables,
}

/// A value a loop accumulates for the code after it.
#[derive(Clone)]
struct Tracked {
    value: Value,
    /// Its accumulator variables (one per divergent register of the value).
    accs: Vec<ra::VReg>,
    /// Whether the accumulator starts empty above this loop; false where it
    /// is borrowed: an outer loop's (`share_nested_accumulators`) or a
    /// join's parameter (`share_join_parameters`), which start elsewhere.
    starts_here: bool,
}

/// Lowers a whole function through `h`; returns the variables for the SSA repair.
pub(super) fn lower_function(h: &mut IselHandle<'_, '_>, layout: &KernargLayout, state: &InitialState) -> Result<Variables, Diagnostic> {
    let func = h.func();
    let st = h.structure();
    let uni = h.uniformity();
    let n = func.blocks.len();
    let reached = |b: usize| st.position[b] != usize::MAX;
    let real: Vec<bool> = (0..n).map(|b| reached(b) && !uni.partial_exec[b] && !uni.divergent_branches[b]).collect();
    // Edges of uniform terminators that jump straight to their target: from a
    // convergent block (no lane waits anywhere), or over points that only
    // lanes through the source can reach (it sends them all this way, so they
    // are empty). Every other edge adds its lanes to the target's mask and the
    // wave walks on.
    let nloops = st.loops.len();
    let mut loops_ending: Vec<Vec<usize>> = vec![Vec::new(); st.order.len()];
    for (l, &e) in st.loop_end.iter().enumerate() {
        loops_ending[e].push(l);
    }
    let mut direct: HashSet<(usize, usize)> = HashSet::new();
    for &b in &st.order {
        if uni.divergent_branches[b] {
            continue;
        }
        for &s in &st.cfg.succs[b] {
            if real[b] || jumps_over_only_empty(st, &uni.divergent_branches, &loops_ending, b, s) {
                direct.insert((b, s));
            }
        }
    }
    let is_direct = |b: usize, s: usize| direct.contains(&(b, s));
    let mut mask_headed = vec![false; n];
    for &b in &st.order {
        for &s in &st.cfg.succs[b] {
            if !is_direct(b, s) {
                mask_headed[s] = true;
            }
        }
    }
    // Loops: a check when a back edge carries a mask; tracked values when an
    // exit does.
    let needs_check: Vec<bool> = st.loops.iter().map(|l| l.latches.iter().any(|&b| !is_direct(b, l.header))).collect();
    let mask_exits: Vec<bool> = st
        .loops
        .iter()
        .map(|l| l.blocks.iter().any(|&b| st.cfg.succs[b].iter().any(|&s| l.blocks.binary_search(&s).is_err() && !is_direct(b, s))))
        .collect();

    let def_block = func.defining_blocks();

    let ipdom = crate::mir::cfg::Cfg::new(func).post_dominators();
    // Machine blocks in walk order.
    let mut head = vec![None; n];
    let mut body = vec![usize::MAX; n];
    let mut check = vec![None; nloops];
    let mut points = Vec::new();
    let mut next_after = vec![0; st.order.len()];
    let mut mask = vec![None; n];
    for (i, &b) in st.order.iter().enumerate() {
        let name = &func.blocks[b].name;
        if mask_headed[b] {
            let hb = h.new_block(format!("{name}.head"), true);
            head[b] = Some(hb);
            points.push((Point::Head(i), hb));
            mask[b] = Some(h.vreg(h.mask_class()));
        }
        let mb = h.new_block(name.clone(), uni.partial_exec[b]);
        body[b] = mb;
        h.set_mblock(b, mb);
        next_after[i] = points.len();
        // Checks of the loops ending here, innermost first.
        let mut ending: Vec<usize> = (0..nloops).filter(|&l| st.loop_end[l] == i).collect();
        ending.sort_by_key(|&l| std::cmp::Reverse(st.loops[l].depth));
        for l in ending {
            if needs_check[l] {
                let cb = h.new_block(format!("{}.continue", func.blocks[st.loops[l].header].name), true);
                check[l] = Some(cb);
                points.push((Point::Check(l), cb));
            }
        }
    }
    for &b in &st.order {
        if !mask_headed[b] {
            for &p in &func.blocks[b].params {
                h.define_block_param(h.mblock(b), p)?;
            }
        }
    }
    let mut param_vars = vec![Vec::new(); n];
    // Per block with a mask: where each parameter's variables start in
    // `param_vars`.
    let mut param_starts: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &b in &st.order {
        if mask_headed[b] {
            for &p in &func.blocks[b].params {
                h.define_value_vars(p)?;
                param_starts[b].push(param_vars[b].len());
                param_vars[b].extend(h.value_regs_kinds(p));
            }
        }
    }
    // One contribution per visit: a single edge (for a loop header, one entry
    // edge and one back edge), leaving no loop whose lanes leave over time.
    let single_contribution: Vec<bool> = (0..n)
        .map(|s| {
            if !reached(s) {
                return false;
            }
            let header = st.loop_of[s].filter(|&l| st.loops[l].header == s);
            let mut groups = [0u32; 2];
            for &p in &st.cfg.preds[s] {
                let edges = match &func.blocks[p].term {
                    Terminator::BrIf { then_to, else_to, .. } => u32::from(then_to.block.0 as usize == s) + u32::from(else_to.block.0 as usize == s),
                    _ => 1,
                };
                let back = header.is_some_and(|l| st.loop_contains(l, p));
                if st.loops_left(p, s).iter().any(|&l| mask_exits[l]) {
                    return false;
                }
                groups[usize::from(back)] += edges;
            }
            groups[0] <= 1 && groups[1] <= 1
        })
        .collect();
    let mut saves_for = vec![Vec::new(); n];
    let mut saved_by_idom = vec![false; n];
    for &j in &st.order {
        let Some(d) = st.idom[j].filter(|&d| d != j) else { continue };
        // (A join one edge enters needs no saving, and an edge that brings all
        // its lanes may enter its body past the head, which would leave a
        // saved mask unconsumed.)
        if !mask_headed[j] || single_contribution[j] || st.loop_of[d] != st.loop_of[j] || st.loop_of[j].is_some_and(|l| st.loops[l].header == j) {
            continue;
        }
        // j post-dominates d?
        let mut cur = ipdom[d];
        let mut steps = 0;
        while let Some(p) = cur {
            if p == j || steps > n {
                break;
            }
            cur = ipdom[p];
            steps += 1;
        }
        if cur == Some(j) {
            saves_for[d].push(j);
            saved_by_idom[j] = true;
        }
    }
    // The walk enters a loop only at its header's head: points inside a loop
    // the walk is not in are skipped with the whole loop.
    let point_after_loop: Vec<usize> = (0..nloops)
        .map(|l| {
            points
                .iter()
                .position(|&(p, _)| match p {
                    Point::Head(pos) => pos > st.loop_end[l],
                    // Checks ending with l belong to l when their loop is nested in it.
                    Point::Check(c) => st.loop_end[c] > st.loop_end[l] || (st.loop_end[c] == st.loop_end[l] && !st.loop_contains(l, st.loops[c].header)),
                })
                .unwrap_or(points.len())
        })
        .collect();
    // A head needs no test where every live lane arrives whenever the walk
    // gets there: outside divergent regions, on every path through its loop
    // (or the function).
    let head_tests: Vec<bool> = (0..n)
        .map(|b| {
            if uni.partial_exec[b] {
                return true;
            }
            let start = st.loop_of[b].map_or(0, |l| st.loops[l].header);
            let mut cur = Some(start);
            let mut steps = 0;
            while let Some(p) = cur {
                if p == b || steps > n {
                    break;
                }
                cur = ipdom[p];
                steps += 1;
            }
            cur != Some(b)
        })
        .collect();
    // Heads that can narrow EXEC from the block right before them: the only
    // walk into the head with lanes comes from that block (it has a head of its
    // own, or is the entry, and no check lies between); every other way in
    // (skips, loop fall-outs) has no lane, and narrowing an empty EXEC keeps it
    // empty.
    let head_index: HashMap<usize, usize> = points.iter().enumerate().filter_map(|(k, &(p, _))| if let Point::Head(pos) = p { Some((st.order[pos], k)) } else { None }).collect();
    let fold_from: Vec<Option<usize>> = (0..n)
        .map(|t| {
            let [b] = st.cfg.preds[t][..] else { return None };
            let header = st.loop_of[t].is_some_and(|l| st.loops[l].header == t);
            let pb = st.position[b];
            // (Only after a divergent branch: a uniform branch's other edge
            // walks into the same head with lanes meant elsewhere.)
            let ok = mask_headed[t]
                && uni.divergent_branches[b]
                && single_contribution[t]
                && !header
                && st.position[t] == pb + 1
                && st.loop_of[t] == st.loop_of[b]
                && (head_index.contains_key(&b) || pb == 0)
                && head_index.get(&t) == Some(&next_after[pb]);
            ok.then_some(b)
        })
        .collect();
    let mut lw = Lowering {
        fold_from,
        head_and: HashMap::new(),
        cur: 0,
        point_after_loop,
        head_tests,
        mask_headed,
        real,
        direct,
        single_contribution,
        saves_for,
        saved_by_idom,
        mask,
        head,
        body,
        check,
        points,
        next_after,
        end: None,
        param_vars,
        tracked: vec![Vec::new(); nloops],
        tracked_merged: HashSet::new(),
        original: HashMap::new(),
        def_block,
        vars: Variables::default(),
    };
    for m in lw.mask.iter().flatten() {
        lw.vars.zero_default.insert(*m);
    }
    // Values used after a loop with mask exits: one accumulator each.
    for (l, lp) in st.loops.iter().enumerate() {
        if !mask_exits[l] {
            continue;
        }
        for v in values_used_outside(func, &lp.blocks) {
            let regs = h.divergent_classes(func.value_type(v)).into_iter().map(|c| h.vreg(c)).collect();
            lw.tracked[l].push(Tracked { value: v, accs: regs, starts_here: true });
        }
    }
    lw.share_nested_accumulators(h);
    lw.share_join_parameters(h, &param_starts);

    for (i, &b) in st.order.iter().enumerate() {
        if let Some(hb) = lw.head[b] {
            lw.lower_head(h, i, b, hb);
        }
        h.switch_to(lw.body[b]);
        if b == 0 {
            h.entry(layout, state)?;
        }
        lw.set_tracked_lowerings(h, b);
        for inst in &func.blocks[b].insts {
            h.instruction(inst)?;
        }
        h.set_inst_ref(None);
        lw.record_tracked_originals(h, b);
        lw.terminator(h, i, b)?;
        let mut ending: Vec<usize> = (0..nloops).filter(|&l| st.loop_end[l] == i).collect();
        ending.sort_by_key(|&l| std::cmp::Reverse(st.loops[l].depth));
        for l in ending {
            if let Some(cb) = lw.check[l] {
                lw.lower_check(h, l, cb);
            }
        }
    }
    lw.kill_skipped_values(h);
    lw.kill_at_dominators(h);
    Ok(lw.vars)
}

impl Lowering {
    /// The first point from `k` on that the walk, inside loop `context`, can
    /// reach: a loop it is not in is entered only at its header's head, or
    /// skipped whole.
    fn walk(&self, st: &crate::codegen::structure::Structure, mut k: usize, context: Option<usize>) -> usize {
        let within = |l: usize| context.is_some_and(|c| st.loop_contains(l, st.loops[c].header) && (l == c || st.loops[l].blocks.len() > st.loops[c].blocks.len()));
        while let Some(&(Point::Head(pos), _)) = self.points.get(k) {
            let b = st.order[pos];
            // The outermost loop of b the walk is not in.
            let mut outer = None;
            let mut cur = st.loop_of[b];
            while let Some(l) = cur {
                if within(l) {
                    break;
                }
                outer = Some(l);
                cur = st.loops[l].parent;
            }
            match outer {
                Some(l) if st.loops[l].header != b => k = self.point_after_loop[l],
                _ => break,
            }
        }
        k
    }

    /// The machine block of the walk's next point from `k`.
    fn walk_block(&mut self, h: &mut IselHandle<'_, '_>, k: usize, context: Option<usize>) -> usize {
        let k = self.walk(h.structure(), k, context);
        self.point_block(h, k)
    }

    /// The machine block of walk point `k` (or the end).
    fn point_block(&mut self, h: &mut IselHandle<'_, '_>, k: usize) -> usize {
        match self.points.get(k) {
            Some(&(_, mb)) => mb,
            None => self.end_block(h),
        }
    }

    fn end_block(&mut self, h: &mut IselHandle<'_, '_>) -> usize {
        if let Some(e) = self.end {
            return e;
        }
        // Reached only when every remaining lane ended in `unreachable`.
        let here = h.current();
        let e = h.new_block("end".into(), true);
        h.switch_to(e);
        h.terminate(Branch::EndProgram, Vec::new(), Vec::new(), Vec::new());
        h.switch_to(here);
        self.end = Some(e);
        e
    }

    /// Where a block's skip goes: past every point only lanes through `b` can
    /// reach (blocks `b` dominates, checks of loops whose latches it dominates):
    /// with no lane at `b` they have none either.
    fn skip_target(&mut self, h: &mut IselHandle<'_, '_>, i: usize, b: usize) -> usize {
        let st = h.structure();
        let mut k = self.next_after[i];
        while let Some(&(p, _)) = self.points.get(k) {
            // Only inside b's innermost loop: an exit target of that loop gathers
            // lanes over several iterations.
            let inside = |x: usize| st.loop_of[b].is_none_or(|l| st.loop_contains(l, x));
            let dominated = match p {
                Point::Head(pos) => inside(st.order[pos]) && st.dominates(b, st.order[pos]),
                Point::Check(l) => inside(st.loops[l].header) && st.loops[l].latches.iter().all(|&x| st.dominates(b, x)),
            };
            if !dominated {
                break;
            }
            k += 1;
        }
        self.walk_block(h, k, st.loop_of[b])
    }

    fn lower_head(&mut self, h: &mut IselHandle<'_, '_>, i: usize, b: usize, hb: usize) {
        let m = self.mask[b].unwrap();
        h.switch_to(hb);
        match self.head_and.remove(&b) {
            // EXEC is still the previous block's: narrow it to this edge's lanes.
            Some((MaskSel::And, Some(c))) => h.push(MKind::Exec(ExecOp::AndSelf), vec![ra::Operand::reg_use(c)]),
            Some((MaskSel::AndNot, Some(c))) => h.push(MKind::Exec(ExecOp::AndNotSelf), vec![ra::Operand::reg_use(c)]),
            Some(_) => {}
            None => {
                h.push(MKind::Exec(ExecOp::Set), vec![ra::Operand::reg_use(m)]);
                // The mask is consumed: later edges start a new collection.
                h.push(MKind::ImplicitDef, vec![ra::Operand::reg_def(m)]);
            }
        }
        let body = self.body[b];
        if self.head_tests[b] {
            let skip = self.skip_target(h, i, b);
            h.switch_to(hb);
            h.terminate(Branch::IfExecZero, Vec::new(), vec![skip, body], vec![Vec::new(), Vec::new()]);
        } else {
            // Every live lane arrives whenever the walk gets here: never empty.
            h.terminate(Branch::Jump, Vec::new(), vec![body], vec![Vec::new()]);
        }
    }

    fn lower_check(&mut self, h: &mut IselHandle<'_, '_>, l: usize, cb: usize) {
        let st = h.structure();
        let header = st.loops[l].header;
        let m = self.mask[header].expect("a loop with mask back edges has a header mask");
        let k = self.points.iter().position(|&(p, _)| p == Point::Check(l)).unwrap() + 1;
        let after = self.walk_block(h, k, st.loops[l].parent);
        h.switch_to(cb);
        h.push(MKind::Exec(ExecOp::Set), vec![ra::Operand::reg_use(m)]);
        h.push(MKind::ImplicitDef, vec![ra::Operand::reg_def(m)]);
        h.terminate(Branch::IfExecZero, Vec::new(), vec![after, self.body[header]], vec![Vec::new(), Vec::new()]);
    }

    /// After selecting block `b`: the lowerings of tracked values it defines.
    fn record_tracked_originals(&mut self, h: &mut IselHandle<'_, '_>, b: usize) {
        for t in self.tracked.iter().flatten() {
            let v = t.value;
            if self.def_block[v.0 as usize] == b && !self.original.contains_key(&v) {
                self.original.insert(v, h.value_lowering(v));
            }
        }
    }

    /// A value that nested loops all track (defined in the innermost, used
    /// outside several) keeps one accumulator for all of them, the
    /// outermost's: an exit of an inner loop writes it for the lanes running
    /// there, an exit of an outer loop from outside the inner one would
    /// merge it into itself (nothing to do), and lanes that left the outer
    /// loop are off for all of it. Only the outermost loop's kill (above it)
    /// starts it, so it stays live, and untouched for lanes that left,
    /// across the whole outer loop, as the outer accumulator did; the inner
    /// accumulator and its merges into the outer one go.
    fn share_nested_accumulators(&mut self, h: &IselHandle<'_, '_>) {
        let st = h.structure();
        // Per value: the outermost loop tracking it and its registers.
        let mut outermost: HashMap<Value, (u32, Vec<ra::VReg>)> = HashMap::new();
        for (l, t) in self.tracked.iter().enumerate().flat_map(|(l, list)| list.iter().map(move |t| (l, t))) {
            let depth = st.loops[l].depth;
            match outermost.get(&t.value) {
                Some((d, _)) if *d <= depth => {}
                _ => {
                    outermost.insert(t.value, (depth, t.accs.clone()));
                }
            }
        }
        for (l, list) in self.tracked.iter_mut().enumerate() {
            for t in list.iter_mut() {
                let (depth, accs) = &outermost[&t.value];
                if *depth != st.loops[l].depth {
                    t.accs = accs.clone();
                    t.starts_here = false;
                }
            }
        }
    }

    /// A value tracked by one loop `L` whose only reader outside `L` is a
    /// block `X` that `L` alone enters (one predecessor, in `L`, dominated by
    /// the definition) and that passes it on to a join `J` with a mask
    /// (`br J(.., v, ..)`) accumulates in `J`'s parameter variable itself,
    /// not in an accumulator of its own that `X` then merges into the
    /// parameter. Every lane in `X` left `L` with the value in the variable
    /// and has taken no edge into `J` since (it would be waiting at `J`, not
    /// running `L` or `X`), so `X` reads the variable for the value and its
    /// merge into `J` disappears; lanes waiting at `J` are off while `L` runs,
    /// so `L`'s writes leave their contributions alone. With the exit merge
    /// folded into the definition (fold_merges) the value, its accumulator
    /// and the parameter are one register, as a join after a loop is in
    /// LLVM's output. Needs `J`'s variables to start (kill_at_dominators)
    /// above `L`, no edge from inside `L` into `J`, and each parameter
    /// variable serves one value.
    fn share_join_parameters(&mut self, h: &mut IselHandle<'_, '_>, param_starts: &[Vec<usize>]) {
        let st = h.structure();
        let func = h.func();
        let mut tracking_loops: HashMap<Value, usize> = HashMap::new();
        for t in self.tracked.iter().flatten() {
            *tracking_loops.entry(t.value).or_default() += 1;
        }
        if tracking_loops.is_empty() {
            return;
        }
        // The blocks reading each tracked value (each block once).
        let mut readers: HashMap<Value, Vec<usize>> = HashMap::new();
        for (b, block) in func.blocks.iter().enumerate() {
            let operands = block.insts.iter().flat_map(|i| crate::mir::op_operands(&i.op)).chain(crate::mir::terminator_operands(&block.term));
            for o in operands {
                if let Operand::Value(v) = o {
                    if tracking_loops.contains_key(v) {
                        let list = readers.entry(*v).or_default();
                        if list.last() != Some(&b) {
                            list.push(b);
                        }
                    }
                }
            }
        }
        // Parameter variables already serving a value.
        let mut claimed: HashSet<ra::VReg> = HashSet::new();
        for l in 0..self.tracked.len() {
            for k in 0..self.tracked[l].len() {
                let Tracked { value: v, accs: ref regs, .. } = self.tracked[l][k];
                if tracking_loops[&v] != 1 || regs.iter().any(|&r| h.class_of(r) != Class::Vgpr) {
                    continue;
                }
                let mut outside = readers.get(&v).into_iter().flatten().filter(|&&b| !st.loop_contains(l, b));
                let (Some(&x), None) = (outside.next(), outside.next()) else { continue };
                let mut preds = st.cfg.preds[x].clone();
                preds.dedup();
                let [p] = preds[..] else { continue };
                if !st.loop_contains(l, p) || !st.dominates(self.def_block[v.0 as usize], p) {
                    continue;
                }
                let Terminator::Br(call) = &func.blocks[x].term else { continue };
                let j = call.block.0 as usize;
                let Some(at) = call.args.iter().position(|a| *a == Operand::Value(v)) else { continue };
                if !self.mask_headed[j] || self.single_contribution[j] || at >= param_starts[j].len() {
                    continue;
                }
                // No edge from inside L into J: its arguments would merge
                // into the variable for every lane running its block, lanes
                // that go on to leave through X with the value included.
                if st.cfg.preds[j].iter().any(|&q| st.loop_contains(l, q)) {
                    continue;
                }
                let start = param_starts[j][at];
                let Some(vars) = self.param_vars[j].get(start..start + regs.len()) else { continue };
                if vars.iter().any(|&(r, kind)| kind != MergeKind::Vector || claimed.contains(&r)) {
                    continue;
                }
                // J's variables start empty above L, not between L and X.
                let Some(d) = st.idom[j].filter(|&d| d != j) else { continue };
                let d = dominator_outside_loops(st, d, j);
                if st.loop_contains(l, d) || !st.dominates(d, st.loops[l].header) {
                    continue;
                }
                let shared: Vec<ra::VReg> = vars.iter().map(|&(r, _)| r).collect();
                claimed.extend(shared.iter().copied());
                self.tracked[l][k] = Tracked { value: v, accs: shared, starts_here: false };
            }
        }
    }

    /// Before selecting block `b`: values tracked by loops that contain their
    /// definition but not `b` read their accumulators (the outermost such loop).
    fn set_tracked_lowerings(&mut self, h: &mut IselHandle<'_, '_>, b: usize) {
        let st = h.structure();
        let mut chosen: HashMap<Value, (u32, Vec<ra::VReg>)> = HashMap::new();
        for (l, list) in self.tracked.iter().enumerate() {
            for Tracked { value: v, accs: regs, .. } in list {
                if !self.original.contains_key(v) {
                    continue;
                }
                if !st.loop_contains(l, b) {
                    let depth = st.loops[l].depth;
                    let better = chosen.get(v).is_none_or(|(d, _)| depth < *d);
                    if better {
                        chosen.insert(*v, (depth, regs.clone()));
                    }
                }
            }
        }
        for (v, orig) in &self.original {
            match chosen.get(v) {
                Some((_, regs)) => h.set_divergent_value(*v, regs),
                None => h.set_value_lowering(*v, orig.clone()),
            }
        }
    }

    fn terminator(&mut self, h: &mut IselHandle<'_, '_>, i: usize, b: usize) -> Result<(), Diagnostic> {
        self.cur = b;
        // Values an edge reads whose registers include a parameter variable
        // assigned before the read are copied first, so they are read as
        // they were. An edge into a block with a mask assigns its target's
        // parameters one by one from its arguments (a loop passing its
        // parameters around rotated reads one it assigned); a divergent
        // branch does its `then` edge's work before its `else` edge's in one
        // block (a uniform branch gives each edge a block of its own), so
        // the `else` edge's reads, its arguments and the values merged at
        // the exits of loops it leaves, come after the `then` edge's
        // assignments (parameters, and the accumulators of the loops it
        // leaves) too. Values that share a parameter's register count:
        // `sext %i` has `%i`'s as its low half, merged at an exit after the
        // back edge assigned `%i`.
        let func = h.func();
        let mut snapshots = Vec::new();
        let calls: Vec<&BlockCall> = match &func.blocks[b].term {
            Terminator::Br(c) => vec![c],
            Terminator::BrIf { then_to, else_to, .. } => vec![then_to, else_to],
            _ => Vec::new(),
        };
        let one_block = h.uniformity().divergent_branches[b];
        let vars_of = |c: &BlockCall| -> Vec<ra::VReg> {
            let to = c.block.0 as usize;
            if self.mask_headed[to] { self.param_vars[to].iter().map(|&(r, _)| r).collect() } else { Vec::new() }
        };
        let mut assigned_before: HashSet<ra::VReg> = HashSet::new();
        let mut done = HashSet::new();
        for c in &calls {
            let own: HashSet<ra::VReg> = vars_of(c).into_iter().collect();
            let args = c.args.iter().filter_map(|a| if let Operand::Value(v) = a { Some(*v) } else { None });
            let mut read: Vec<(Value, bool)> = args.map(|v| (v, true)).collect();
            let left = h.structure().loops_left(b, c.block.0 as usize);
            for &l in &left {
                read.extend(self.tracked[l].iter().map(|t| (t.value, false)));
            }
            while let Some((v, is_arg)) = read.pop() {
                let (regs, roots) = h.lowering_reads(v);
                read.extend(roots.into_iter().map(|r| (r, is_arg)));
                let clobbered = regs.iter().any(|r| assigned_before.contains(r) || (is_arg && own.contains(r)));
                if clobbered && done.insert(v) {
                    snapshots.push((v, h.snapshot_value(v)));
                }
            }
            if one_block {
                assigned_before.extend(own);
                // The accumulators the edge writes for the loops it leaves
                // (a join's parameter variable among them, when shared).
                for &l in &left {
                    assigned_before.extend(self.tracked[l].iter().flat_map(|t| t.accs.iter().copied()));
                }
            }
        }
        for j in self.saves_for[b].clone() {
            let acc = self.mask[j].unwrap();
            h.push(MKind::MaskAdd { first: true, sel: MaskSel::Exec }, vec![ra::Operand::reg_def(acc)]);
        }
        let result = self.terminator_inner(h, i, b);
        for (v, old) in snapshots {
            h.set_value_lowering(v, old);
        }
        result
    }

    fn terminator_inner(&mut self, h: &mut IselHandle<'_, '_>, i: usize, b: usize) -> Result<(), Diagnostic> {
        let func = h.func();
        let device = func.kind == FuncKind::Device;
        match &func.blocks[b].term {
            Terminator::Ret(value) => {
                if device {
                    h.function_return(value.as_ref())
                } else {
                    h.terminate(Branch::EndProgram, Vec::new(), Vec::new(), Vec::new());
                    Ok(())
                }
            }
            Terminator::Unreachable if self.real[b] => {
                if device {
                    h.function_return(None)
                } else {
                    h.terminate(Branch::EndProgram, Vec::new(), Vec::new(), Vec::new());
                    Ok(())
                }
            }
            Terminator::Unreachable => {
                // These lanes end; the others go on.
                let next = self.walk_block(h, self.next_after[i], h.structure().loop_of[b]);
                h.terminate(Branch::Jump, Vec::new(), vec![next], vec![Vec::new()]);
                Ok(())
            }
            Terminator::Br(call) => {
                let (t, a) = self.uniform_edge(h, i, b, call)?;
                h.terminate(Branch::Jump, Vec::new(), vec![t], vec![a]);
                Ok(())
            }
            Terminator::BrIf { cond, then_to, else_to } if !h.uniformity().divergent_branches[b] => {
                let (branch, ops) = h.uniform_branch(cond)?;
                let mut succs = Vec::new();
                let mut args = Vec::new();
                for call in [then_to, else_to] {
                    let here = h.current();
                    let to = call.block.0 as usize;
                    if self.direct.contains(&(b, to)) && !self.mask_headed[to] && !self.merges_tracked(h, b, to) {
                        let (t, a) = self.uniform_edge(h, i, b, call)?;
                        succs.push(t);
                        args.push(a);
                    } else {
                        // Edge work of its own: only when the branch goes this way.
                        let edge = h.new_block(format!("{}.to.{}", func.blocks[b].name, func.blocks[to].name), h.uniformity().partial_exec[b]);
                        h.switch_to(edge);
                        let (t, a) = self.uniform_edge(h, i, b, call)?;
                        h.terminate(Branch::Jump, Vec::new(), vec![t], vec![a]);
                        h.switch_to(here);
                        succs.push(edge);
                        args.push(Vec::new());
                    }
                }
                h.terminate(branch, ops, succs, args);
                Ok(())
            }
            Terminator::BrIf { cond, then_to, else_to } => {
                let m = h.branch_mask(cond)?;
                if then_to.block == else_to.block {
                    // Both ways to one block: every lane goes, the arguments differ per lane.
                    self.merge_args(h, b, then_to, MaskSel::And, Some(m))?;
                    self.merge_args(h, b, else_to, MaskSel::AndNot, Some(m))?;
                    self.mask_add(h, then_to.block.0 as usize, MaskSel::Exec, None);
                } else {
                    self.mask_edge(h, b, then_to, MaskSel::And, Some(m))?;
                    self.mask_edge(h, b, else_to, MaskSel::AndNot, Some(m))?;
                }
                let next = self.walk_block(h, self.next_after[i], h.structure().loop_of[b]);
                h.terminate(Branch::Jump, Vec::new(), vec![next], vec![Vec::new()]);
                Ok(())
            }
        }
    }

    /// An edge of a uniform terminator (all active lanes take it): its work in
    /// the current block, and where to jump with what.
    fn uniform_edge(&mut self, h: &mut IselHandle<'_, '_>, i: usize, b: usize, call: &BlockCall) -> Result<(usize, Vec<ra::VReg>), Diagnostic> {
        let to = call.block.0 as usize;
        if !self.direct.contains(&(b, to)) {
            // The lanes wait in the target's mask; the wave walks on.
            self.mask_edge(h, b, call, MaskSel::Exec, None)?;
            return Ok((self.walk_block(h, self.next_after[i], h.structure().loop_of[b]), Vec::new()));
        }
        if !self.mask_headed[to] {
            self.merge_tracked(h, b, to)?;
            let args = h.block_call_args(call)?;
            return Ok((self.body[to], args));
        }
        self.merge_args(h, b, call, MaskSel::Exec, None)?;
        if self.single_contribution[to] {
            // These are all of the target's lanes: EXEC is its mask already.
            Ok((self.body[to], Vec::new()))
        } else {
            self.mask_add(h, to, MaskSel::Exec, None);
            Ok((self.head[to].unwrap(), Vec::new()))
        }
    }

    /// The work of an edge into a block with a mask: the lanes join its mask,
    /// its arguments merge into its parameters, and loops it leaves accumulate
    /// the values used after them.
    ///
    /// Along a forward edge the arguments merge for every lane running `b`,
    /// not only those taking the edge: a lane that goes elsewhere reaches
    /// the target, if at all, along another edge that merges its own
    /// arguments later (every edge into a block with a mask does), nothing
    /// reads the parameters before the target's head, and lanes waiting at
    /// the target are off. A merge of the active lanes is a plain move (a
    /// constant or an SGPR straight into the parameter), where one under the
    /// edge's mask is a `v_cndmask`. Not along a back edge: the rest of the
    /// loop's pass, after `b` in the order, still reads the header's
    /// parameters for the lanes that went elsewhere.
    fn mask_edge(&mut self, h: &mut IselHandle<'_, '_>, b: usize, call: &BlockCall, sel: MaskSel, m: Option<ra::VReg>) -> Result<(), Diagnostic> {
        let st = h.structure();
        let forward = st.position[call.block.0 as usize] > st.position[b];
        let (merge_sel, merge_mask) = if forward { (MaskSel::Exec, None) } else { (sel, m) };
        self.merge_args(h, b, call, merge_sel, merge_mask)?;
        self.mask_add(h, call.block.0 as usize, sel, m);
        Ok(())
    }

    /// `M[to] |= lanes`.
    fn mask_add(&mut self, h: &mut IselHandle<'_, '_>, to: usize, sel: MaskSel, m: Option<ra::VReg>) {
        if self.saved_by_idom[to] {
            return;
        }
        if self.fold_from[to] == Some(self.cur) {
            self.head_and.insert(to, (sel, m));
            return;
        }
        let acc = self.mask[to].expect("a block reached along a mask edge has a mask");
        let first = self.single_contribution[to];
        let mut ops = if first { vec![ra::Operand::reg_def(acc)] } else { vec![ra::Operand::reg_reuse_def(acc, 1), ra::Operand::reg_use(acc)] };
        if let (Some(m), MaskSel::And | MaskSel::AndNot) = (m, sel) {
            ops.push(ra::Operand::reg_use(m));
        }
        h.push(MKind::MaskAdd { first, sel }, ops);
    }

    fn merge_args(&mut self, h: &mut IselHandle<'_, '_>, b: usize, call: &BlockCall, sel: MaskSel, m: Option<ra::VReg>) -> Result<(), Diagnostic> {
        self.merge_tracked(h, b, call.block.0 as usize)?;
        let to = call.block.0 as usize;
        let args = h.block_call_args(call)?;
        let mut vars = self.param_vars[to].clone();
        if self.single_contribution[to] {
            // One edge brings every lane of a visit: a plain assignment.
            for v in vars.iter_mut() {
                v.1 = MergeKind::Scalar;
            }
        }
        lane_merge_all(h, &vars, &args, sel, m);
        Ok(())
    }

    /// True if the edge accumulates values used after the loops it leaves.
    fn merges_tracked(&self, h: &IselHandle<'_, '_>, b: usize, to: usize) -> bool {
        h.structure().loops_left(b, to).iter().any(|&l| !self.tracked[l].is_empty())
    }

    /// The loops an edge leaves accumulate their tracked values: for every
    /// lane running `b`, not only those taking the edge. A lane that goes on
    /// looping writes its accumulator again at its own exit (the value's
    /// definition dominates `b`, so it comes before every later exit that
    /// merges it, and a lane leaving through an exit it does not dominate
    /// never reaches a use); lanes that left earlier are off and keep theirs.
    /// Merging the active lanes is a VALU write under EXEC, which fold_merges
    /// can fold into the instruction defining the value (no merge at all),
    /// where a merge under the edge's mask would be a `v_cndmask` and an
    /// extra register per value.
    fn merge_tracked(&mut self, h: &mut IselHandle<'_, '_>, b: usize, to: usize) -> Result<(), Diagnostic> {
        let st = h.structure();
        for l in st.loops_left(b, to) {
            for k in 0..self.tracked[l].len() {
                let Tracked { value: v, accs, .. } = self.tracked[l][k].clone();
                let merged_here = accs.first().is_some_and(|&a| !self.tracked_merged.insert((h.current(), a)));
                if !st.dominates(self.def_block[v.0 as usize], b) || merged_here {
                    continue;
                }
                let xs = h.divergent_regs(v)?;
                let accs: Vec<(ra::VReg, MergeKind)> = accs.iter().map(|&a| (a, if h.class_of(a) == Class::Vgpr { MergeKind::Vector } else { MergeKind::Mask })).collect();
                lane_merge_all(h, &accs, &xs, MaskSel::Exec, None);
            }
        }
        Ok(())
    }

    /// A block's mask and parameter variables, and a loop's accumulators, start
    /// empty at the block that dominates every contribution to them (for a
    /// block outside some loop, the dominator outside that loop: exits gather
    /// over iterations): killing them there bounds their live ranges, which
    /// keeps the SSA repair linear.
    fn kill_at_dominators(&mut self, h: &mut IselHandle<'_, '_>) {
        let st = h.structure();
        let dominator_for = |d: usize, target: usize| dominator_outside_loops(st, d, target);
        let mut kills: HashMap<usize, Vec<ra::VReg>> = HashMap::new();
        for &s in &st.order {
            if !self.mask_headed[s] {
                continue;
            }
            let Some(d) = st.idom[s].filter(|&d| d != s) else { continue };
            let d = dominator_for(d, s);
            let list = kills.entry(d).or_default();
            if !self.saved_by_idom[s] {
                list.extend(self.mask[s]);
            }
            list.extend(self.param_vars[s].iter().map(|(v, _)| *v));
        }
        for (l, tracked) in self.tracked.iter().enumerate() {
            let header = st.loops[l].header;
            let Some(d) = st.idom[header].filter(|&d| d != header) else { continue };
            let d = dominator_for(d, header);
            let own = tracked.iter().filter(|t| t.starts_here).flat_map(|t| t.accs.iter().copied());
            kills.entry(d).or_default().extend(own);
        }
        let mut order: Vec<usize> = kills.keys().copied().collect();
        order.sort_unstable();
        for d in order {
            let regs = &kills[&d];
            if regs.is_empty() {
                continue;
            }
            let insts: Vec<(MKind, Vec<ra::Operand>)> = regs.iter().map(|&v| (MKind::ImplicitDef, vec![ra::Operand::reg_def(v)])).collect();
            // At the start of the body (after the entry's inputs), and in the
            // head, whose skip bypasses the body.
            h.insert_at_start(self.body[d], insts.clone());
            if let Some(hb) = self.head[d] {
                h.insert_before_terminator(hb, insts);
            }
        }
    }

    /// Values defined in a block with a mask and used in other machine blocks
    /// are undefined where the block is skipped: saying so at the head keeps
    /// their live ranges from reaching around loops.
    fn kill_skipped_values(&mut self, h: &mut IselHandle<'_, '_>) {
        let st = h.structure();
        let mut outside = h.defs_used_in_other_blocks();
        let mut variables: HashSet<ra::VReg> = self.vars.zero_default.clone();
        variables.extend(self.param_vars.iter().flatten().map(|(v, _)| *v));
        variables.extend(self.tracked.iter().flatten().flat_map(|t| t.accs.iter().copied()));
        for &b in &st.order {
            let Some(hb) = self.head[b] else { continue };
            // Only values: masks and accumulators keep their contents when skipped.
            let mut kills = outside.remove(&self.body[b]).unwrap_or_default();
            kills.retain(|v| !variables.contains(v));
            h.insert_before_terminator(hb, kills.into_iter().map(|v| (MKind::ImplicitDef, vec![ra::Operand::reg_def(v)])).collect());
        }
    }
}

/// The dominator `d` of `target`, or the first dominator above it whose
/// loops all contain `target`.
fn dominator_outside_loops(st: &crate::codegen::structure::Structure, mut d: usize, target: usize) -> usize {
    while let Some(l) = st.loop_of[d] {
        if st.loop_contains(l, target) {
            break;
        }
        match st.idom[st.loops[l].header] {
            Some(up) if up != st.loops[l].header => d = up,
            _ => break,
        }
    }
    d
}

/// True if a jump `b -> s` passes only points (block heads, loop checks)
/// no lane can be waiting at, within `b`'s innermost loop: blocks `b`
/// dominates (lanes reach them through `b` alone, and `b` sends all of
/// its lanes to `s`), and blocks on another arm of a uniform branch above
/// `b`. For the second: `u`, in `b`'s loop, branches uniformly to `a` and
/// `a2`, each entered from `u` alone, `a` dominates `b` and `a2` dominates
/// `x`; in one pass of the loop `u` runs once and sends every lane one way,
/// so with lanes at `b` there are none at `x` (a uniform if inside a
/// divergent region keeps EXEC and needs no join mask). Checks of loops are
/// passed when every latch is such a point. A back edge passes the rest of
/// its loop up to the loop's check. Scans at most 64 positions (farther
/// jumps walk).
fn jumps_over_only_empty(st: &crate::codegen::structure::Structure, divergent_branches: &[bool], loops_ending: &[Vec<usize>], b: usize, s: usize) -> bool {
    let (pb, ps) = (st.position[b], st.position[s]);
    let inside = |x: usize| st.loop_of[b].is_none_or(|l| st.loop_contains(l, x));
    // The uniform branches above `b` in its loop: (u, the arm holding b).
    let mut arms = Vec::new();
    let mut a = b;
    for _ in 0..64 {
        let Some(u) = st.idom[a].filter(|&u| u != a) else { break };
        if st.loop_of[u] != st.loop_of[b] || arms.len() == 8 {
            break;
        }
        if st.cfg.preds[a] == [u] && !divergent_branches[u] {
            arms.push((u, a));
        }
        a = u;
    }
    let other_arm = |x: usize| {
        arms.iter().any(|&(u, a)| {
            st.dominates(u, x) && !st.dominates(a, x) && st.cfg.succs[u].iter().any(|&a2| a2 != a && st.cfg.preds[a2] == [u] && st.dominates(a2, x))
        })
    };
    let empty = |x: usize| inside(x) && (st.dominates(b, x) || other_arm(x));
    let check_ok = |l: usize| inside(st.loops[l].header) && st.loops[l].latches.iter().all(|&x| empty(x));
    let (end, own) = if ps > pb {
        (ps, None)
    } else {
        // Back edge to the header of loop `own`: up to its check.
        let own = st.loop_of[b].and_then(|mut l| loop {
            if st.loops[l].header == s {
                break Some(l);
            }
            l = st.loops[l].parent?;
        });
        let Some(own) = own else { return false };
        (st.loop_end[own] + 1, Some(own))
    };
    if end - pb > 64 {
        return false;
    }
    for pos in pb + 1..end {
        if !empty(st.order[pos]) {
            return false;
        }
    }
    // The checks of the loops ending in the range lie between too.
    loops_ending[pb..end].iter().flatten().all(|&l| Some(l) == own || check_ok(l))
}

/// `acc_i = lanes ? x_i : acc_i` for every accumulator (uniform ones are plain
/// assignments: every lane that arrives brings the same value).
fn lane_merge_all(h: &mut IselHandle<'_, '_>, accs: &[(ra::VReg, MergeKind)], values: &[ra::VReg], sel: MaskSel, m: Option<ra::VReg>) {
    for (&(acc, kind), &x) in accs.iter().zip(values) {
        if acc == x {
            // The value already lives in the variable (a shared accumulator).
            continue;
        }
        if kind == MergeKind::Scalar {
            h.push(MKind::Copy, vec![ra::Operand::reg_def(acc), ra::Operand::reg_use(x)]);
            continue;
        }
        let vector = kind == MergeKind::Vector;
        let mut ops = vec![ra::Operand::reg_reuse_def(acc, 1), ra::Operand::reg_use(acc), ra::Operand::reg_use(x)];
        let masked = m.is_some() && sel != MaskSel::Exec;
        if masked {
            ops.push(ra::Operand::reg_use(m.unwrap()));
        }
        h.push(MKind::LaneMerge { vector, masked, invert: sel == MaskSel::AndNot }, ops);
    }
}

/// Values defined inside `blocks` (sorted) and used outside them.
fn values_used_outside(func: &crate::mir::Function, blocks: &[usize]) -> Vec<Value> {
    let mut defined = HashSet::new();
    for &b in blocks {
        let block = &func.blocks[b];
        defined.extend(block.params.iter().copied());
        defined.extend(block.insts.iter().filter_map(|i| i.result));
    }
    let mut used = Vec::new();
    for (b, block) in func.blocks.iter().enumerate() {
        if blocks.binary_search(&b).is_ok() {
            continue;
        }
        let operands = block.insts.iter().flat_map(|i| crate::mir::op_operands(&i.op)).chain(crate::mir::terminator_operands(&block.term));
        for o in operands {
            if let Operand::Value(v) = o {
                if defined.contains(v) && !used.contains(v) {
                    used.push(*v);
                }
            }
        }
    }
    used
}
