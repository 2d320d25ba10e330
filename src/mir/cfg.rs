//! Control-flow graph facts about a function: successors, predecessors, reverse
//! postorder, dominators, post-dominators and the loop nesting forest. The
//! verifier (SSA dominance), the uniformity analysis (join points of divergent
//! branches, loops), codegen's structure and the licm pass (loops) use them.

use super::ir::Function;

/// Successor and predecessor lists of a function's blocks (indices into
/// `Function::blocks`).
#[derive(Clone, Debug)]
pub struct Cfg {
    pub succs: Vec<Vec<usize>>,
    pub preds: Vec<Vec<usize>>,
}

impl Cfg {
    /// The CFG of a function (branches to blocks that do not exist are ignored:
    /// the verifier reports them).
    pub fn new(func: &Function) -> Cfg {
        let n = func.blocks.len();
        let mut succs = vec![Vec::new(); n];
        let mut preds = vec![Vec::new(); n];
        for (b, block) in func.blocks.iter().enumerate() {
            for s in block.term.successors() {
                let s = s.0 as usize;
                if s < n && !succs[b].contains(&s) {
                    succs[b].push(s);
                    preds[s].push(b);
                }
            }
        }
        Cfg { succs, preds }
    }

    /// Number of blocks.
    pub fn len(&self) -> usize {
        self.succs.len()
    }

    /// True for a function without blocks.
    pub fn is_empty(&self) -> bool {
        self.succs.is_empty()
    }

    /// Immediate dominators (`Some(entry)` for the entry block, `None` for blocks
    /// not reachable from the entry).
    pub fn dominators(&self) -> Vec<Option<usize>> {
        if self.is_empty() {
            return Vec::new();
        }
        immediate_dominators(&self.succs, &self.preds, &[0])
    }

    /// Immediate post-dominators. Blocks that end the function (no successors) are
    /// post-dominated by a virtual exit, reported as `None`; a block whose
    /// paths all reach the exit through some block P has `Some(P)`. Blocks that
    /// cannot reach an exit (endless loops) also get `None`.
    pub fn post_dominators(&self) -> Vec<Option<usize>> {
        let n = self.len();
        // Reverse graph with a virtual exit node `n` whose reverse successors are
        // the blocks without successors.
        let mut rsuccs: Vec<Vec<usize>> = self.preds.clone();
        let mut rpreds: Vec<Vec<usize>> = self.succs.clone();
        let exits: Vec<usize> = (0..n).filter(|&b| self.succs[b].is_empty()).collect();
        rsuccs.push(exits.clone());
        rpreds.push(Vec::new());
        for &e in &exits {
            rpreds[e].push(n);
        }
        let idom = immediate_dominators(&rsuccs, &rpreds, &[n]);
        (0..n).map(|b| idom[b].filter(|&p| p != n)).collect()
    }

    /// True if `a` dominates `b` according to `idom` (from [`Cfg::dominators`]).
    pub fn dominates(idom: &[Option<usize>], a: usize, mut b: usize) -> bool {
        loop {
            if a == b {
                return true;
            }
            match idom[b] {
                Some(parent) if parent != b => b = parent,
                _ => return false,
            }
        }
    }
}

/// The iterative algorithm of Cooper, Harvey and Kennedy ("A Simple, Fast
/// Dominance Algorithm"), from the given roots (the first root is its own
/// immediate dominator).
/// Immediate dominators of the graph given by `succs`/`preds` from `roots[0]`
/// (Cooper, Harvey and Kennedy; `Some(root)` for the root, `None` where
/// unreachable). Used for MIR functions and for machine CFGs.
pub fn immediate_dominators(succs: &[Vec<usize>], preds: &[Vec<usize>], roots: &[usize]) -> Vec<Option<usize>> {
    let n = succs.len();
    let root = roots[0];
    let mut order = Vec::with_capacity(n);
    let mut visited = vec![false; n];
    let mut stack = vec![(root, 0usize)];
    visited[root] = true;
    while let Some((b, next)) = stack.pop() {
        if next < succs[b].len() {
            stack.push((b, next + 1));
            let s = succs[b][next];
            if !visited[s] {
                visited[s] = true;
                stack.push((s, 0));
            }
        } else {
            order.push(b);
        }
    }
    order.reverse();
    let mut rpo_index = vec![usize::MAX; n];
    for (i, &b) in order.iter().enumerate() {
        rpo_index[b] = i;
    }
    let mut idom: Vec<Option<usize>> = vec![None; n];
    idom[root] = Some(root);
    let mut changed = true;
    while changed {
        changed = false;
        for &b in order.iter().skip(1) {
            let mut new_idom: Option<usize> = None;
            for &p in &preds[b] {
                if idom[p].is_none() {
                    continue;
                }
                new_idom = Some(match new_idom {
                    None => p,
                    Some(mut x) => {
                        let mut y = p;
                        while x != y {
                            while rpo_index[x] > rpo_index[y] {
                                x = idom[x].expect("visited in reverse postorder");
                            }
                            while rpo_index[y] > rpo_index[x] {
                                y = idom[y].expect("visited in reverse postorder");
                            }
                        }
                        x
                    }
                });
            }
            if new_idom.is_some() && idom[b] != new_idom {
                idom[b] = new_idom;
                changed = true;
            }
        }
    }
    idom
}

/// Per node, (preorder, postorder) numbers of a depth-first walk of the
/// dominator tree given by `idom` from `root`, so that `a` dominates `b` iff
/// `a`'s interval contains `b`'s ((0, 0) for unreachable nodes). Makes
/// dominance queries constant time.
pub fn dominator_intervals(idom: &[Option<usize>], root: usize) -> Vec<(u32, u32)> {
    let n = idom.len();
    let mut children = vec![Vec::new(); n];
    for b in 0..n {
        if let Some(p) = idom[b].filter(|&p| p != b && b != root) {
            children[p].push(b);
        }
    }
    let mut out = vec![(0u32, 0u32); n];
    if n == 0 {
        return out;
    }
    let mut clock = 1u32;
    out[root].0 = clock;
    let mut stack = vec![(root, 0usize)];
    while let Some((b, i)) = stack.last_mut() {
        if let Some(&c) = children[*b].get(*i) {
            *i += 1;
            clock += 1;
            out[c].0 = clock;
            stack.push((c, 0));
        } else {
            clock += 1;
            out[*b].1 = clock;
            stack.pop();
        }
    }
    out
}

/// True if `a` dominates `b` by their [`dominator_intervals`].
pub fn interval_dominates(intervals: &[(u32, u32)], a: usize, b: usize) -> bool {
    let (ia, ib) = (intervals[a], intervals[b]);
    ia.1 != 0 && ia.0 <= ib.0 && ib.1 <= ia.1
}

/// The natural loops of a CFG, one per header (its back edges merged): the
/// header, its latches (predecessors it dominates) and its blocks, sorted,
/// in the order of their headers. Blocks `idom` marks unreachable take no
/// part. [`LoopForest`] has them with their nesting.
pub fn natural_loops(cfg: &Cfg, idom: &[Option<usize>]) -> Vec<(usize, Vec<usize>, Vec<usize>)> {
    let forest = LoopForest::new(cfg, idom);
    let blocks = forest.blocks();
    forest.loops.into_iter().zip(blocks).map(|(l, blocks)| (l.header, l.latches, blocks)).collect()
}

/// One natural loop of a [`LoopForest`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NaturalLoop {
    pub header: usize,
    /// The header's predecessors it dominates (the sources of back edges),
    /// in the order of the header's predecessors.
    pub latches: Vec<usize>,
    /// The smallest loop strictly containing this one.
    pub parent: Option<usize>,
    /// Nesting depth (1 for an outermost loop).
    pub depth: u32,
}

/// The loop nesting forest of a CFG: every natural loop (a header and the
/// blocks that reach one of its back edges without passing it), the
/// innermost loop of each block, and which loop contains which.
///
/// Two natural loops are disjoint or nested, in any CFG (a block of both is
/// dominated by both headers, so one header dominates the other, and the
/// inner header's whole body reaches its latch without passing the outer
/// header). The forest is built inner loops first: headers in reverse
/// postorder reversed (a header comes after the headers dominating it), each
/// loop's body found by walking predecessors back from its latches, where an
/// inner loop already found counts as its header alone (a union-find maps
/// every block to the outermost header found so far that contains it). Each
/// block joins a loop once and each edge is looked at once when its target
/// joins, so the forest costs the size of the CFG (times the inverse
/// Ackermann function), whatever the number of loops and their depth.
#[derive(Clone, Debug)]
pub struct LoopForest {
    /// The loops in the order of their headers' indices.
    pub loops: Vec<NaturalLoop>,
    /// The innermost loop of each block (`None` outside every loop and for
    /// unreachable blocks).
    pub loop_of: Vec<Option<usize>>,
    /// Per loop, its (preorder, postorder) numbers in the forest: `l`
    /// contains `m` iff `l`'s interval contains `m`'s.
    interval: Vec<(u32, u32)>,
}

impl LoopForest {
    /// The loops of `cfg`, whose immediate dominators are `idom` (from
    /// [`Cfg::dominators`]).
    pub fn new(cfg: &Cfg, idom: &[Option<usize>]) -> LoopForest {
        let n = cfg.len();
        let reachable = |b: usize| b == 0 || idom.get(b).copied().flatten().is_some();
        // Constant-time dominance: walking the idom chain for every edge
        // would be quadratic in a chain of loops.
        let dominator_interval = dominator_intervals(idom, 0);
        // Headers are looked at in reverse postorder reversed: inner loops
        // (whose headers the outer ones dominate) first.
        let mut order = reverse_postorder_of(cfg);
        order.reverse();
        let mut rep: Vec<usize> = (0..n).collect();
        let mut loop_of: Vec<Option<usize>> = vec![None; n];
        let mut loop_headed_by: Vec<Option<usize>> = vec![None; n];
        let mut found: Vec<NaturalLoop> = Vec::new();
        let mut stack = Vec::new();
        for h in order {
            let latches: Vec<usize> = cfg.preds[h].iter().copied().filter(|&p| reachable(p) && interval_dominates(&dominator_interval, h, p)).collect();
            if latches.is_empty() {
                continue;
            }
            let l = found.len();
            found.push(NaturalLoop { header: h, latches: latches.clone(), parent: None, depth: 0 });
            loop_of[h] = Some(l);
            loop_headed_by[h] = Some(l);
            stack.extend(latches);
            while let Some(b) = stack.pop() {
                let r = find(&mut rep, b);
                if r == h {
                    continue;
                }
                // `r` joins this loop: a block of no loop yet, or the header
                // of an inner loop standing for all of it.
                match loop_headed_by[r] {
                    Some(inner) => found[inner].parent = Some(l),
                    None => loop_of[r] = Some(l),
                }
                rep[r] = h;
                stack.extend(cfg.preds[r].iter().copied().filter(|&p| reachable(p)));
            }
        }
        // Renumbered in the order of the headers' indices.
        let mut by_header: Vec<usize> = (0..found.len()).collect();
        by_header.sort_by_key(|&l| found[l].header);
        let mut new_index = vec![0; found.len()];
        for (i, &l) in by_header.iter().enumerate() {
            new_index[l] = i;
        }
        let mut loops: Vec<NaturalLoop> = by_header.iter().map(|&l| found[l].clone()).collect();
        for l in &mut loops {
            l.parent = l.parent.map(|p| new_index[p]);
        }
        for b in loop_of.iter_mut() {
            *b = b.map(|l| new_index[l]);
        }
        // Depths and forest intervals, parents before children.
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); loops.len()];
        let mut roots = Vec::new();
        for (l, lp) in loops.iter().enumerate() {
            match lp.parent {
                Some(p) => children[p].push(l),
                None => roots.push(l),
            }
        }
        let mut interval = vec![(0u32, 0u32); loops.len()];
        let mut clock = 0u32;
        for root in roots {
            clock += 1;
            interval[root].0 = clock;
            loops[root].depth = 1;
            let mut walk = vec![(root, 0usize)];
            while let Some((l, i)) = walk.last_mut() {
                if let Some(&c) = children[*l].get(*i) {
                    *i += 1;
                    clock += 1;
                    interval[c].0 = clock;
                    loops[c].depth = loops[*l].depth + 1;
                    walk.push((c, 0));
                } else {
                    clock += 1;
                    interval[*l].1 = clock;
                    walk.pop();
                }
            }
        }
        LoopForest { loops, loop_of, interval }
    }

    /// True if loop `outer` contains loop `inner` (or is it).
    pub fn contains_loop(&self, outer: usize, inner: usize) -> bool {
        let (o, i) = (self.interval[outer], self.interval[inner]);
        o.0 <= i.0 && i.1 <= o.1
    }

    /// True if loop `l` contains block `b`.
    pub fn contains(&self, l: usize, b: usize) -> bool {
        self.loop_of.get(b).copied().flatten().is_some_and(|inner| self.contains_loop(l, inner))
    }

    /// The blocks of every loop, sorted (the sizes of all loops together:
    /// the CFG's size times the nesting depth at most).
    pub fn blocks(&self) -> Vec<Vec<usize>> {
        let mut out = vec![Vec::new(); self.loops.len()];
        for (b, &inner) in self.loop_of.iter().enumerate() {
            let mut cur = inner;
            while let Some(l) = cur {
                out[l].push(b);
                cur = self.loops[l].parent;
            }
        }
        out
    }
}

/// The union-find representative of `b`, with path halving.
fn find(rep: &mut [usize], mut b: usize) -> usize {
    while rep[b] != b {
        rep[b] = rep[rep[b]];
        b = rep[b];
    }
    b
}

/// The blocks reachable from block 0, in reverse postorder of a depth-first
/// walk.
fn reverse_postorder_of(cfg: &Cfg) -> Vec<usize> {
    reverse_postorder(cfg.len(), |b, i| cfg.succs[b].get(i).copied())
}

/// The blocks of an `n`-block graph reachable from block 0, in reverse
/// postorder of a depth-first walk that visits successors in their order.
/// `succ(b, i)` is block `b`'s `i`-th successor, `None` past the last; a
/// successor `>= n` is ignored. One walker for every block representation
/// (MIR functions, `Cfg`, SSA repair's blocks), iterative so deep graphs do
/// not exhaust the stack.
pub fn reverse_postorder(n: usize, succ: impl Fn(usize, usize) -> Option<usize>) -> Vec<usize> {
    let mut post = Vec::with_capacity(n);
    if n == 0 {
        return post;
    }
    let mut seen = vec![false; n];
    seen[0] = true;
    // (block, index of its next successor to look at)
    let mut stack = vec![(0usize, 0usize)];
    while let Some((b, next)) = stack.last_mut() {
        if let Some(s) = succ(*b, *next) {
            *next += 1;
            if s < n && !seen[s] {
                seen[s] = true;
                stack.push((s, 0));
            }
        } else {
            post.push(*b);
            stack.pop();
        }
    }
    post.reverse();
    post
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The natural loops by their definition, one header at a time: the
    /// blocks that reach a latch without passing the header (quadratic, for
    /// checking).
    fn loops_by_definition(cfg: &Cfg, idom: &[Option<usize>]) -> Vec<(usize, Vec<usize>, Vec<usize>)> {
        let n = cfg.len();
        let reachable = |b: usize| b == 0 || idom[b].is_some();
        let mut out = Vec::new();
        for h in (0..n).filter(|&h| reachable(h)) {
            let latches: Vec<usize> = cfg.preds[h].iter().copied().filter(|&p| reachable(p) && Cfg::dominates(idom, h, p)).collect();
            if latches.is_empty() {
                continue;
            }
            let mut inside = vec![false; n];
            inside[h] = true;
            let mut stack = latches.clone();
            while let Some(b) = stack.pop() {
                if !std::mem::replace(&mut inside[b], true) {
                    stack.extend(cfg.preds[b].iter().copied().filter(|&p| reachable(p) && !inside[p]));
                }
            }
            out.push((h, latches, (0..n).filter(|&b| inside[b]).collect()));
        }
        out
    }

    /// A random graph of `n` blocks (block 0 the entry), each with up to two
    /// successors, some of them edges back to earlier blocks; irreducible
    /// graphs included.
    fn random_cfg(seed: u64, n: usize) -> Cfg {
        let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut next = |m: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % m as u64) as usize
        };
        let mut succs = vec![Vec::new(); n];
        let mut preds = vec![Vec::new(); n];
        for b in 0..n {
            let count = if next(8) == 0 { 0 } else { 1 + next(2) };
            for _ in 0..count {
                // Mostly forward edges, some backward.
                let s = if next(3) == 0 || b + 1 >= n { next(n) } else { b + 1 + next((n - b - 1).min(4)) };
                if !succs[b].contains(&s) {
                    succs[b].push(s);
                    preds[s].push(b);
                }
            }
        }
        Cfg { succs, preds }
    }

    #[test]
    fn the_forest_has_the_natural_loops_of_their_definition() {
        let (mut loops, mut deepest, mut irreducible) = (0, 0, 0);
        for seed in 0..2000u64 {
            let cfg = random_cfg(seed, 2 + (seed as usize % 31));
            let idom = cfg.dominators();
            let want = loops_by_definition(&cfg, &idom);
            let forest = LoopForest::new(&cfg, &idom);
            loops += forest.loops.len();
            deepest = deepest.max(forest.loops.iter().map(|l| l.depth).max().unwrap_or(0));
            // A retreating edge of the depth-first order to a block that does
            // not dominate its source: a cycle no natural loop is.
            let order = reverse_postorder_of(&cfg);
            let mut position = vec![usize::MAX; cfg.len()];
            for (i, &b) in order.iter().enumerate() {
                position[b] = i;
            }
            irreducible += usize::from(order.iter().any(|&b| cfg.succs[b].iter().any(|&s| position[s] <= position[b] && !Cfg::dominates(&idom, s, b))));
            let blocks = forest.blocks();
            let got: Vec<(usize, Vec<usize>, Vec<usize>)> = forest.loops.iter().zip(&blocks).map(|(l, b)| (l.header, l.latches.clone(), b.clone())).collect();
            assert_eq!(got, want, "seed {seed}: {cfg:?}");
            for (l, lp) in forest.loops.iter().enumerate() {
                // The parent is the smallest other loop holding the header.
                let parent = (0..want.len())
                    .filter(|&o| o != l && want[o].2.len() > want[l].2.len() && want[o].2.binary_search(&lp.header).is_ok())
                    .min_by_key(|&o| want[o].2.len());
                assert_eq!(lp.parent, parent, "seed {seed}: parent of loop {l}");
                let depth = 1 + (0..want.len()).filter(|&o| o != l && want[o].2.len() > want[l].2.len() && want[o].2.binary_search(&lp.header).is_ok()).count();
                assert_eq!(lp.depth as usize, depth, "seed {seed}: depth of loop {l}");
            }
            for b in 0..cfg.len() {
                let innermost = (0..want.len()).filter(|&l| want[l].2.binary_search(&b).is_ok()).min_by_key(|&l| want[l].2.len());
                assert_eq!(forest.loop_of[b], innermost, "seed {seed}: block {b}");
                for l in 0..want.len() {
                    assert_eq!(forest.contains(l, b), want[l].2.binary_search(&b).is_ok(), "seed {seed}: loop {l} block {b}");
                }
            }
        }
        // The graphs exercise what they are for: many loops, nesting, and
        // irreducible cycles.
        assert!(loops > 1500 && deepest >= 4 && irreducible > 100, "{loops} loops, depth {deepest}, {irreducible} irreducible graphs");
    }
}
