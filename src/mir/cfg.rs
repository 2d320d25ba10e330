//! Control-flow graph facts about a function: successors, predecessors, reverse
//! postorder, dominators and post-dominators. The verifier (SSA dominance) and
//! the uniformity analysis (join points of divergent branches) both use them.

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
/// header, its latches (predecessors it dominates) and its blocks, sorted.
/// Blocks `idom` marks unreachable take no part.
pub fn natural_loops(cfg: &Cfg, idom: &[Option<usize>]) -> Vec<(usize, Vec<usize>, Vec<usize>)> {
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
