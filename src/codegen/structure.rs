//! Control-flow structure for EXEC masking: natural loops, and for every
//! divergent branch the shape it must have so that it can be lowered with EXEC
//! masks: an if-region (then-side and else-side meeting at the branch's immediate
//! post-dominator) or a divergent exit of a loop. Divergent control flow of any
//! other shape is rejected with an error naming the branch; uniform branches can
//! go anywhere, they stay real branches.
//!
//! Shapes accepted:
//! - **if-region** at block B, join J = ipdom(B): each side (the blocks reachable
//!   from one successor before J; empty when the successor is J) is entered only
//!   from B and leaves only to J, through exactly one block.
//! - **loop exit** at block B inside loop L with header H: one successor is the
//!   loop's single exit target X (every edge leaving L goes to X), B dominates every
//!   latch of L, and H has exactly one predecessor outside L.

use std::collections::BTreeSet;

use super::uniformity::Uniformity;
use crate::mir::cfg::Cfg;
use crate::mir::{Diagnostic, Function, Terminator};

/// A natural loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loop {
    pub header: usize,
    /// All blocks of the loop (header included), sorted.
    pub blocks: BTreeSet<usize>,
    /// Blocks with a back edge to the header.
    pub latches: Vec<usize>,
    /// The single block outside the loop that exits go to (None: no exit).
    pub exit: Option<usize>,
    /// The header's only predecessor outside the loop.
    pub preheader: Option<usize>,
    /// Some exit branch is divergent: the loop runs with EXEC masking.
    pub divergent: bool,
}

/// How a divergent branch is lowered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DivergentBranch {
    /// `then`/`else` are the successors (as in the MIR); a side equal to `join`
    /// is empty. `then_exit`/`else_exit`: the block of each side that jumps to J.
    If { join: usize, then_side: Vec<usize>, else_side: Vec<usize>, then_exit: Option<usize>, else_exit: Option<usize> },
    /// Leaves loop `loop_index` when the branch goes to successor `exit_successor`
    /// (0 = then, 1 = else).
    LoopExit { loop_index: usize, exit_successor: usize },
}

/// The structure of one function.
#[derive(Clone, Debug, Default)]
pub struct Structure {
    pub loops: Vec<Loop>,
    /// Innermost loop of each block.
    pub loop_of: Vec<Option<usize>>,
    /// Per block: how its divergent branch is lowered (None if not divergent).
    pub branches: Vec<Option<DivergentBranch>>,
    pub idom: Vec<Option<usize>>,
}

fn reject(func: &Function, block: usize, why: &str) -> Diagnostic {
    let b = &func.blocks[block];
    let mut d = Diagnostic::new(
        format!("unsupported divergent control flow at the end of block '{}': {why}", b.name),
        b.term_span,
    );
    d.context = Some(format!("in @{}, block '{}'", func.name, b.name));
    d
}

/// Analyses the loops and divergent branches of a function.
/// Why a function's structure was refused. `shared_join` is set when the only
/// problem found is a side of a divergent branch reaching the join from several
/// blocks, which `split_join` can repair.
pub struct Rejection {
    pub diagnostic: Diagnostic,
    pub shared_join: Option<SharedJoin>,
}

/// The blocks of one side of a divergent branch that all branch to `join`.
pub struct SharedJoin {
    pub from: Vec<usize>,
    pub join: usize,
}

impl From<Diagnostic> for Rejection {
    fn from(diagnostic: Diagnostic) -> Rejection {
        Rejection { diagnostic, shared_join: None }
    }
}

pub fn analyze(func: &Function, uniformity: &Uniformity) -> Result<Structure, Rejection> {
    let cfg = Cfg::new(func);
    let n = cfg.len();
    let idom = cfg.dominators();
    let ipdom = cfg.post_dominators();
    // Natural loops: one per header, merging all its back edges.
    let mut loops: Vec<Loop> = Vec::new();
    for b in 0..n {
        for &s in &cfg.succs[b] {
            if idom[b].is_some() && Cfg::dominates(&idom, s, b) {
                let index = match loops.iter().position(|l| l.header == s) {
                    Some(i) => i,
                    None => {
                        loops.push(Loop {
                            header: s,
                            blocks: BTreeSet::from([s]),
                            latches: Vec::new(),
                            exit: None,
                            preheader: None,
                            divergent: false,
                        });
                        loops.len() - 1
                    }
                };
                loops[index].latches.push(b);
                let mut stack = vec![b];
                while let Some(x) = stack.pop() {
                    if loops[index].blocks.insert(x) {
                        stack.extend(cfg.preds[x].iter().copied());
                    }
                }
            }
        }
    }
    // Irreducible cycles (a cycle entered other than through a dominating header)
    // are not natural loops; a divergent branch on one is rejected below.
    let mut loop_of = vec![None; n];
    for (i, l) in loops.iter().enumerate() {
        for &b in &l.blocks {
            let smaller = loop_of[b].is_none_or(|j: usize| loops[j].blocks.len() > l.blocks.len());
            if smaller {
                loop_of[b] = Some(i);
            }
        }
    }
    for l in &mut loops {
        let mut exits = BTreeSet::new();
        for &b in &l.blocks {
            for &s in &cfg.succs[b] {
                if !l.blocks.contains(&s) {
                    exits.insert(s);
                }
            }
        }
        l.exit = if exits.len() == 1 { exits.into_iter().next() } else { None };
        // Edges, not blocks: `brif %c, loop(0), loop(1)` enters twice from one block.
        let entering: Vec<usize> = func
            .blocks
            .iter()
            .enumerate()
            .filter(|(p, _)| !l.blocks.contains(p))
            .flat_map(|(p, b)| b.term.successors().into_iter().filter(|s| s.0 as usize == l.header).map(move |_| p))
            .collect();
        l.preheader = if entering.len() == 1 { Some(entering[0]) } else { None };
    }

    let mut branches = vec![None; n];
    for b in 0..n {
        if !uniformity.divergent_branches[b] || idom[b].is_none() {
            continue;
        }
        let Terminator::BrIf { then_to, else_to, .. } = &func.blocks[b].term else { continue };
        let succ = [then_to.block.0 as usize, else_to.block.0 as usize];
        if succ[0] == succ[1] {
            return Err(Rejection::from(reject(func, b, "both targets are the same block")));
        }
        // A branch that leaves its innermost loop is a loop exit.
        if let Some(li) = loop_of[b] {
            let l = &loops[li];
            let leaving: Vec<usize> = (0..2).filter(|&k| !l.blocks.contains(&succ[k])).collect();
            if leaving.len() == 2 {
                return Err(Rejection::from(reject(func, b, "both targets leave the loop")));
            }
            if let [k] = leaving[..] {
                if l.exit != Some(succ[k]) {
                    return Err(Rejection::from(reject(func, b, "a loop with a divergent exit must leave to a single block")));
                }
                if l.preheader.is_none() {
                    return Err(Rejection::from(reject(func, b, "the loop must be entered by exactly one edge from outside it")));
                }
                if !l.latches.iter().all(|&latch| Cfg::dominates(&idom, b, latch)) {
                    return Err(Rejection::from(reject(func, b, "a divergent loop exit must be in a block that dominates the loop's back edges")));
                }
                branches[b] = Some(DivergentBranch::LoopExit { loop_index: li, exit_successor: k });
                continue;
            }
        }
        let Some(join) = ipdom[b] else {
            return Err(Rejection::from(reject(func, b, "the two paths never meet again")));
        };
        let mut sides: [Vec<usize>; 2] = [Vec::new(), Vec::new()];
        let mut exits: [Option<usize>; 2] = [None, None];
        for k in 0..2 {
            if succ[k] == join {
                continue;
            }
            let mut seen = BTreeSet::new();
            let mut stack = vec![succ[k]];
            while let Some(x) = stack.pop() {
                if x == join || !seen.insert(x) {
                    continue;
                }
                stack.extend(cfg.succs[x].iter().copied());
            }
            // Single entry (from B) and single exit (one block to J).
            for &x in &seen {
                if x == b {
                    return Err(Rejection::from(reject(func, b, "a path from the branch comes back to it before the join (a loop with a divergent branch that is not an exit)")));
                }
                let entry_ok = cfg.preds[x].iter().all(|p| seen.contains(p) || (*p == b && x == succ[k]));
                if !entry_ok {
                    return Err(Rejection::from(reject(func, b, &format!("block '{}' is entered from outside the divergent region", func.blocks[x].name))));
                }
            }
            let to_join: Vec<usize> = seen.iter().copied().filter(|x| cfg.succs[*x].contains(&join)).collect();
            if to_join.len() != 1 {
                let diagnostic = reject(func, b, "each side of a divergent branch must reach the join through exactly one block");
                return Err(Rejection { diagnostic, shared_join: Some(SharedJoin { from: to_join, join }) });
            }
            if seen.iter().any(|x| cfg.succs[*x].iter().any(|s| *s != join && !seen.contains(s))) {
                return Err(Rejection::from(reject(func, b, "a side of the divergent branch leaves the region")));
            }
            exits[k] = Some(to_join[0]);
            sides[k] = seen.into_iter().collect();
        }
        let [then_side, else_side] = sides;
        branches[b] = Some(DivergentBranch::If { join, then_side, else_side, then_exit: exits[0], else_exit: exits[1] });
    }
    for (i, l) in loops.iter_mut().enumerate() {
        l.divergent = branches.iter().any(|br| matches!(br, Some(DivergentBranch::LoopExit { loop_index, .. }) if *loop_index == i));
        if l.divergent {
            // Every exit edge of a divergent loop must come from a block that
            // dominates the back edges (so the exit accumulators have one version).
            for &x in &l.blocks {
                let exits_here = cfg.succs[x].iter().any(|s| !l.blocks.contains(s));
                if exits_here && !l.latches.iter().all(|&latch| Cfg::dominates(&idom, x, latch)) {
                    return Err(Rejection::from(reject(func, x, "an exit of a loop with divergent exits must dominate the loop's back edges")));
                }
            }
        }
    }
    Ok(Structure { loops, loop_of, branches, idom })
}
