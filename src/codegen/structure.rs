//! Control-flow structure for EXEC masking: the loop nesting forest and the
//! linear block order the mask-based lowering (lower_cf.rs) walks.
//!
//! Any reducible CFG is accepted. The order is a topological order of the
//! forward edges in which every loop's blocks are contiguous (its header
//! first), built by collapsing each loop to one node, sorting the nodes of
//! every loop body (and of the function) by reverse postorder of a depth-first
//! walk, and expanding the collapsed loops in place. The function's return
//! block, a sink, goes last. With that order every edge either goes forward or
//! is a back edge to the header of a loop that contains its source.
//!
//! An irreducible CFG (a cycle entered at more than one block) is refused with
//! an error at the branch that enters the cycle at a block that does not
//! dominate it.

use crate::mir::cfg::Cfg;
use crate::mir::{Diagnostic, Function, Terminator};

/// A natural loop (all back edges to one header merged).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loop {
    pub header: usize,
    /// All blocks of the loop (header included), sorted.
    pub blocks: Vec<usize>,
    /// Blocks with a back edge to the header.
    pub latches: Vec<usize>,
    /// The smallest loop strictly containing this one.
    pub parent: Option<usize>,
    /// Nesting depth (1 for an outermost loop).
    pub depth: u32,
}

/// The structure of one function.
#[derive(Clone, Debug)]
pub struct Structure {
    pub loops: Vec<Loop>,
    /// Innermost loop of each block.
    pub loop_of: Vec<Option<usize>>,
    /// Immediate dominators (MIR CFG).
    pub idom: Vec<Option<usize>>,
    /// Reachable blocks in lowering order.
    pub order: Vec<usize>,
    /// Position of each block in `order` (`usize::MAX` when unreachable).
    pub position: Vec<usize>,
    /// Per loop: position of its last block in `order`.
    pub loop_end: Vec<usize>,
    /// Successors and predecessors (reachable blocks only).
    pub cfg: Cfg,
    /// Per block: (preorder, postorder + 1) numbers in the dominator tree
    /// ((0, 0) when unreachable).
    pub dom_interval: Vec<(u32, u32)>,
}

impl Structure {
    /// True if loop `l` contains block `b`.
    pub fn loop_contains(&self, l: usize, b: usize) -> bool {
        let mut cur = self.loop_of[b];
        while let Some(i) = cur {
            if i == l {
                return true;
            }
            cur = self.loops[i].parent;
        }
        false
    }

    /// The loops an edge `from -> to` leaves, innermost first.
    pub fn loops_left(&self, from: usize, to: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut cur = self.loop_of[from];
        while let Some(i) = cur {
            if self.loop_contains(i, to) {
                break;
            }
            out.push(i);
            cur = self.loops[i].parent;
        }
        out
    }

    /// True if `a` dominates `b` in the MIR CFG (constant time: `a`'s
    /// dominator-tree interval contains `b`'s).
    pub fn dominates(&self, a: usize, b: usize) -> bool {
        crate::mir::cfg::interval_dominates(&self.dom_interval, a, b)
    }

    /// True if `from -> to` is a back edge (`to` is a loop header containing `from`).
    pub fn is_back_edge(&self, from: usize, to: usize) -> bool {
        self.position[to] <= self.position[from]
    }
}

fn reject(func: &Function, block: usize, why: &str) -> Diagnostic {
    let b = &func.blocks[block];
    let mut d = Diagnostic::new(format!("unsupported control flow at the end of block '{}': {why}", b.name), b.term_span);
    d.context = Some(format!("in @{}, block '{}'", func.name, b.name));
    d
}

/// Analyses the loops and the lowering order of a function.
pub fn analyze(func: &Function) -> Result<Structure, Diagnostic> {
    let full = Cfg::new(func);
    let n = full.len();
    let idom = full.dominators();
    let reachable: Vec<bool> = (0..n).map(|b| b == 0 || idom[b].is_some()).collect();
    // Only reachable blocks take part.
    let succs: Vec<Vec<usize>> = (0..n).map(|b| if reachable[b] { full.succs[b].clone() } else { Vec::new() }).collect();
    let preds: Vec<Vec<usize>> = (0..n).map(|b| full.preds[b].iter().copied().filter(|&p| reachable[p]).collect()).collect();
    let cfg = Cfg { succs, preds };

    // Natural loops and their nesting (mir/cfg.rs: linear in the CFG).
    let forest = crate::mir::cfg::LoopForest::new(&cfg, &idom);
    let blocks = forest.blocks();
    let loop_of = forest.loop_of;
    let loops: Vec<Loop> = forest
        .loops
        .into_iter()
        .zip(blocks)
        .map(|(l, blocks)| Loop { header: l.header, blocks, latches: l.latches, parent: l.parent, depth: l.depth })
        .collect();

    // Irreducibility: with back edges removed the graph must be acyclic, and
    // every edge into a loop from outside it must go to its header.
    for l in &loops {
        for &b in &l.blocks {
            if b == l.header {
                continue;
            }
            if let Some(&p) = cfg.preds[b].iter().find(|&&p| l.blocks.binary_search(&p).is_err()) {
                return Err(reject(
                    func,
                    p,
                    &format!("the branch enters a loop at block '{}', which is not the loop's header '{}' (irreducible control flow)", func.blocks[b].name, func.blocks[l.header].name),
                ));
            }
        }
    }
    let ret_block = (0..n).find(|&b| reachable[b] && matches!(func.blocks[b].term, Terminator::Ret(_)) && cfg.succs[b].is_empty());
    let dom_interval = crate::mir::cfg::dominator_intervals(&idom, 0);
    let mut st = Structure { loops, loop_of, idom, order: Vec::new(), position: vec![usize::MAX; n], loop_end: Vec::new(), cfg, dom_interval };
    let mut order = Vec::with_capacity(n);
    region_order(&st, None, 0, ret_block, &mut order);
    if let Some(r) = ret_block {
        if !order.contains(&r) {
            order.push(r);
        }
    }
    for (i, &b) in order.iter().enumerate() {
        st.position[b] = i;
    }
    // A cycle that no back edge closes (irreducible) shows as a retreating edge
    // that is not a back edge.
    for &b in &order {
        for &s in &st.cfg.succs[b] {
            if st.position[s] <= st.position[b] && !(st.cfg.preds[s].contains(&b) && st.dominates(s, b)) {
                return Err(reject(func, b, &format!("the branch to '{}' closes a cycle entered at more than one block (irreducible control flow)", func.blocks[s].name)));
            }
        }
    }
    st.loop_end = st.loops.iter().map(|l| l.blocks.iter().map(|&b| st.position[b]).max().unwrap_or(0)).collect();
    st.order = order;
    Ok(st)
}

/// Appends the blocks of `region` (a loop, or the function with `None`) in
/// lowering order: reverse postorder of the region's forward edges with every
/// inner loop collapsed into its header, inner loops expanded in place.
fn region_order(st: &Structure, region: Option<usize>, start: usize, ret_block: Option<usize>, out: &mut Vec<usize>) {
    // The node standing for block b at this level: b itself, or the header of
    // the outermost loop strictly inside `region` that contains b.
    let node_of = |b: usize| -> Option<usize> {
        let mut cur = st.loop_of[b];
        let mut node = b;
        while let Some(l) = cur {
            if Some(l) == region {
                return Some(node);
            }
            node = st.loops[l].header;
            cur = st.loops[l].parent;
        }
        if region.is_none() {
            Some(node)
        } else {
            None
        }
    };
    let header = region.map(|l| st.loops[l].header);
    let is_inner_header = |node: usize| node != start && st.loop_of[node].is_some_and(|l| st.loops[l].header == node && st.loops[l].parent == region);
    // Successor nodes of a node (for an inner loop: its exits within the region).
    let node_succs = |node: usize| -> Vec<usize> {
        let blocks: Vec<usize> = if is_inner_header(node) { st.loops[st.loop_of[node].unwrap()].blocks.clone() } else { vec![node] };
        let mut out = Vec::new();
        for &b in &blocks {
            for &s in st.cfg.succs[b].iter().rev() {
                if Some(s) == header || Some(s) == ret_block {
                    continue;
                }
                if let Some(t) = node_of(s) {
                    if t != node && !out.contains(&t) {
                        out.push(t);
                    }
                }
            }
        }
        out
    };
    let mut post = Vec::new();
    let mut visited = hashbrown::HashSet::new();
    visited.insert(start);
    let mut stack = vec![(start, node_succs(start), 0usize)];
    while let Some((node, succs, i)) = stack.last_mut() {
        if *i < succs.len() {
            let s = succs[*i];
            *i += 1;
            if visited.insert(s) {
                let ss = node_succs(s);
                stack.push((s, ss, 0));
            }
        } else {
            post.push(*node);
            stack.pop();
        }
    }
    post.reverse();
    for node in post {
        if is_inner_header(node) {
            region_order(st, st.loop_of[node], node, ret_block, out);
        } else {
            out.push(node);
        }
    }
}
