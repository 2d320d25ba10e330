//! Uniformity (divergence) analysis: which values are the same in every active
//! lane of a wave, and which branches can send lanes different ways.
//!
//! Uniform values live in SGPRs and are computed by the scalar unit; divergent
//! values live in VGPRs. A divergent branch needs EXEC masking.
//!
//! Sources of divergence: `workitem_id`; parameters of device functions that are
//! not `inreg`; loads from memory other than `constant` (another lane may have
//! written it; LDS and scratch are per-lane views) and any load through a divergent
//! address; atomics (each lane gets its own old value); call results. Everything
//! else is divergent when an operand is. Kernel arguments, work-group ids and
//! sizes, grid sizes, slot addresses and constants are uniform.
//!
//! Divergence through control flow ("sync dependence"): when a branch is
//! divergent, lanes take different paths from its block B until they meet again
//! at B's immediate post-dominator P. Block parameters of the blocks where paths
//! that left B by different successors meet (reachable from two of them, up to
//! and including P) receive values from different paths in different lanes, so
//! they are divergent; the header of a uniform loop nested in the region, which
//! only one successor reaches, is not such a join. A value defined between B and
//! P (including B itself when it is inside that region, as in a loop with a
//! divergent exit) and used outside the region has, in each lane, the value of the
//! last iteration that lane executed ("temporal divergence"), so it is divergent
//! too; so is every value a loop defines and code outside it uses when the loop
//! holds a divergent branch whose paths meet only outside the loop. This
//! over-approximates LLVM's analysis in a few loop shapes; divergent where
//! uniform would do costs registers, never correctness.
//!
//! The analysis iterates to a fixed point: a branch becomes divergent when its
//! condition does, which can make more values divergent.

use crate::mir::cfg::Cfg;
use crate::mir::{AddrSpace, FuncKind, Function, Op, Operand, Terminator, Type, Value};

/// The result of the analysis for one function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Uniformity {
    /// Per value (indexed like `Function::values`): true if divergent.
    pub divergent_values: Vec<bool>,
    /// Per block: true if the block ends in a branch whose condition is divergent.
    pub divergent_branches: Vec<bool>,
    /// Per block: true if some lanes of the wave may be inactive while it runs
    /// (it lies between a divergent branch and that branch's post-dominator).
    pub partial_exec: Vec<bool>,
    /// Loads of global memory no write can reach (`unclobbered.rs`),
    /// by address of their instruction: uniform at a uniform address, and
    /// selection may make them scalar loads.
    pub unclobbered_loads: hashbrown::HashSet<*const crate::mir::Inst>,
}

impl Uniformity {
    /// True if `value` may differ between the active lanes of a wave.
    pub fn is_divergent(&self, value: Value) -> bool {
        self.divergent_values[value.0 as usize]
    }

    /// True if the operand may differ between lanes (constants never do).
    pub fn operand_divergent(&self, operand: &Operand) -> bool {
        match operand {
            Operand::Value(v) => self.is_divergent(*v),
            Operand::Const(_) => false,
        }
    }
}

/// Runs the analysis on a verified function.
pub fn analyze(func: &Function) -> Uniformity {
    let cfg = Cfg::new(func);
    let ipdom = cfg.post_dominators();
    let n = func.blocks.len();
    let loops: Vec<Vec<usize>> = crate::mir::cfg::natural_loops(&cfg, &cfg.dominators()).into_iter().map(|(_, _, blocks)| blocks).collect();
    let mut divergent = vec![false; func.values.len()];
    if func.kind == FuncKind::Device {
        for p in &func.params {
            if !p.inreg {
                divergent[p.value.0 as usize] = true;
            }
        }
    }
    let mut divergent_branches = vec![false; n];
    let mut partial_exec = vec![false; n];
    // For the temporal-divergence rules: which values each block defines, and
    // the blocks that use each value. Each divergent branch's region and each
    // loop is then visited once, in time linear in what it defines.
    let def_block = func.defining_blocks();
    let mut defined_in: Vec<Vec<Value>> = vec![Vec::new(); n];
    for (v, &b) in def_block.iter().enumerate() {
        if b != usize::MAX {
            defined_in[b].push(Value(v as u32));
        }
    }
    let mut used_in: Vec<Vec<u32>> = vec![Vec::new(); func.values.len()];
    for (ub, block) in func.blocks.iter().enumerate() {
        let uses = block.insts.iter().flat_map(|i| crate::mir::op_operands(&i.op)).chain(crate::mir::terminator_operands(&block.term));
        for o in uses {
            if let Operand::Value(v) = o {
                let list = &mut used_in[v.0 as usize];
                if list.last() != Some(&(ub as u32)) {
                    list.push(ub as u32);
                }
            }
        }
    }
    // Marks the values defined in `blocks` (where `inside` holds) and used where it does not.
    let escaping = |blocks: &[usize], inside: &dyn Fn(usize) -> bool, divergent: &mut Vec<bool>, changed: &mut bool| {
        for &r in blocks {
            for &v in &defined_in[r] {
                if !divergent[v.0 as usize] && used_in[v.0 as usize].iter().any(|&u| !inside(u as usize)) {
                    divergent[v.0 as usize] = true;
                    *changed = true;
                }
            }
        }
    };
    let mut branch_done = vec![false; n];
    let mut loop_done = vec![false; loops.len()];
    let mut in_region = vec![usize::MAX; n];

    let operand_div = |divergent: &[bool], o: &Operand| matches!(o, Operand::Value(v) if divergent[v.0 as usize]);
    // Loads of global memory no write in the kernel can reach read the same
    // bytes in every lane when their address is uniform (unclobbered.rs).
    let unclobbered_loads = super::unclobbered::unclobbered_loads(func);
    let mut changed = true;
    while changed {
        changed = false;
        let mark = |divergent: &mut Vec<bool>, v: Value, changed: &mut bool| {
            if !divergent[v.0 as usize] {
                divergent[v.0 as usize] = true;
                *changed = true;
            }
        };
        // Data dependence.
        for (b, block) in func.blocks.iter().enumerate() {
            for inst in &block.insts {
                let Some(result) = inst.result else { continue };
                // Values a wave operation makes the same in every lane.
                if let Op::Wave {
                    op: crate::mir::WaveOp::ReadFirstLane | crate::mir::WaveOp::ReadLane | crate::mir::WaveOp::Ballot | crate::mir::WaveOp::WaveSize | crate::mir::WaveOp::Reduce(_),
                    ..
                } = &inst.op
                {
                    continue;
                }
                let source_of_divergence = match &inst.op {
                    Op::Builtin { kind, .. } => *kind == crate::mir::Builtin::WorkitemId,
                    Op::Wave {
                        op: crate::mir::WaveOp::LaneId | crate::mir::WaveOp::Shuffle | crate::mir::WaveOp::InclusiveScan(_) | crate::mir::WaveOp::ExclusiveScan(_),
                        ..
                    } => true,
                    Op::Load { ptr, .. } => match func.operand_type(ptr) {
                        Type::Ptr(AddrSpace::Constant) => false,
                        Type::Ptr(AddrSpace::Global) => !unclobbered_loads.contains(&(inst as *const crate::mir::Inst)),
                        _ => true,
                    },
                    Op::AtomicRmw { .. } | Op::CmpXchg { .. } | Op::Call { .. } => true,
                    _ => false,
                };
                let from_operands = crate::mir::op_operands(&inst.op).into_iter().any(|o| operand_div(&divergent, o));
                if source_of_divergence || from_operands {
                    mark(&mut divergent, result, &mut changed);
                }
            }
            // Block arguments flow into the targets' parameters.
            let calls = match &block.term {
                Terminator::Br(call) => vec![call],
                Terminator::BrIf { then_to, else_to, .. } => vec![then_to, else_to],
                _ => Vec::new(),
            };
            for call in calls {
                let target = &func.blocks[call.block.0 as usize];
                for (param, arg) in target.params.iter().zip(&call.args) {
                    if operand_div(&divergent, arg) {
                        mark(&mut divergent, *param, &mut changed);
                    }
                }
            }
            // A branch is divergent when its condition is.
            if let Terminator::BrIf { cond, .. } = &block.term {
                if operand_div(&divergent, cond) && !divergent_branches[b] {
                    divergent_branches[b] = true;
                    changed = true;
                }
            }
        }
        // Temporal divergence of loops: a divergent branch in a loop whose
        // paths meet only outside it lets lanes leave at different iterations,
        // so what the loop defines differs per lane after it.
        for (l, body) in loops.iter().enumerate() {
            let inside = |b: usize| body.binary_search(&b).is_ok();
            if loop_done[l] || !body.iter().any(|&b| divergent_branches[b] && !ipdom[b].is_some_and(inside)) {
                continue;
            }
            loop_done[l] = true;
            escaping(body, &inside, &mut divergent, &mut changed);
        }
        // Sync dependence of every divergent branch (once: what it marks does
        // not depend on what else is divergent).
        for b in 0..n {
            if !divergent_branches[b] || branch_done[b] {
                continue;
            }
            branch_done[b] = true;
            let stop = ipdom[b];
            let region = region_between(&cfg, b, stop);
            for &r in &region {
                in_region[r] = b;
                if !partial_exec[r] {
                    partial_exec[r] = true;
                    changed = true;
                }
            }
            let joins = joins_of(&cfg, func, b, stop);
            for j in joins {
                for &p in &func.blocks[j].params {
                    mark(&mut divergent, p, &mut changed);
                }
            }
            // Temporal divergence: values defined in the region, used outside it.
            escaping(&region, &|u| in_region[u] == b, &mut divergent, &mut changed);
        }
    }
    Uniformity { divergent_values: divergent, divergent_branches, partial_exec, unclobbered_loads }
}

/// The blocks where lanes that left `from` different ways can meet: reachable
/// from two different successors (without passing `stop`, which counts), or the
/// one target of a branch with both ways to the same block.
fn joins_of(cfg: &Cfg, func: &Function, from: usize, stop: Option<usize>) -> Vec<usize> {
    let targets: Vec<usize> = func.blocks[from].term.successors().iter().map(|s| s.0 as usize).collect();
    if targets.len() == 2 && targets[0] == targets[1] {
        return vec![targets[0]];
    }
    let mut count = vec![0u8; cfg.len()];
    for &s in &cfg.succs[from] {
        let mut seen = vec![false; cfg.len()];
        let mut stack = vec![s];
        while let Some(b) = stack.pop() {
            if seen[b] {
                continue;
            }
            seen[b] = true;
            count[b] = count[b].saturating_add(1);
            if Some(b) != stop {
                stack.extend(cfg.succs[b].iter().copied());
            }
        }
    }
    (0..cfg.len()).filter(|&b| count[b] >= 2).collect()
}

/// Blocks reachable from `from`'s successors without passing through `stop`
/// (`None`: the function's end), excluding `stop`. Contains `from` itself when it
/// lies on a cycle inside the region.
fn region_between(cfg: &Cfg, from: usize, stop: Option<usize>) -> Vec<usize> {
    let mut seen = vec![false; cfg.len()];
    let mut stack: Vec<usize> = cfg.succs[from].clone();
    let mut region = Vec::new();
    while let Some(b) = stack.pop() {
        if Some(b) == stop || seen[b] {
            continue;
        }
        seen[b] = true;
        region.push(b);
        stack.extend(cfg.succs[b].iter().copied());
    }
    region.sort_unstable();
    region
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mir::{parse, verify::verify};

    /// Parses one function and returns the names of its divergent values, sorted.
    fn divergent_names(text: &str) -> Vec<String> {
        let module = parse(text).unwrap();
        verify(&module).unwrap();
        let func = &module.functions[0];
        let u = analyze(func);
        let mut names: Vec<String> =
            (0..func.values.len()).filter(|&i| u.divergent_values[i]).map(|i| func.values[i].name.clone()).collect();
        names.sort();
        names
    }

    #[test]
    fn data_dependence() {
        let names = divergent_names(
            "kernel @k(%p: ptr<global>, %c: ptr<constant>, %n: i32) {\nentry:\n  %t = workitem_id x\n  %g = workgroup_id x\n  %a = add i32 %g, %n\n  %b = add i32 %t, %a\n  %u = load i32 %c\n  %off = mul i32 %t, 4\n  %q = ptradd %c, %off\n  %d = load i32 %q\n  %e = load i32 %p\n  store i32 %n, %p\n  %f = load i32 %p\n  ret\n}\n",
        );
        // %a (work-group id + argument), %u (constant load at a uniform address)
        // and %e (a global load at a uniform address no write can reach) stay
        // uniform; %f, after a store, is not.
        assert_eq!(names, ["b", "d", "f", "off", "q", "t"]);
    }

    #[test]
    fn join_of_a_divergent_branch_is_divergent_and_of_a_uniform_one_is_not() {
        let text = |cond: &str| {
            format!(
                "kernel @k(%n: i32) {{\nentry:\n  %t = workitem_id x\n  %c = icmp slt i32 {cond}, 4\n  brif %c, a, b\na:\n  br join(1)\nb:\n  br join(2)\njoin(%v: i32):\n  ret\n}}\n"
            )
        };
        assert_eq!(divergent_names(&text("%t")), ["c", "t", "v"]);
        assert_eq!(divergent_names(&text("%n")), ["t"]);
    }

    #[test]
    fn loop_with_divergent_exit_makes_values_used_after_it_divergent() {
        let names = divergent_names(
            "kernel @k(%n: i32) {\nentry:\n  %t = workitem_id x\n  br loop(0)\nloop(%j: i32):\n  %next = add i32 %j, 1\n  %done = icmp uge i32 %next, %t\n  brif %done, exit, loop(%next)\nexit:\n  %r = add i32 %next, %n\n  ret\n}\n",
        );
        // %next counts the same in all lanes while they loop, but lanes leave at
        // different iterations: after the loop it differs (and so does %r).
        assert!(names.contains(&"next".to_string()) && names.contains(&"r".to_string()), "{names:?}");
    }

    #[test]
    fn uniform_loop_stays_uniform() {
        let names = divergent_names(
            "kernel @k(%n: i32) {\nentry:\n  br loop(0)\nloop(%j: i32):\n  %next = add i32 %j, 1\n  %done = icmp uge i32 %next, %n\n  brif %done, exit, loop(%next)\nexit:\n  %r = add i32 %next, %n\n  ret\n}\n",
        );
        assert!(names.is_empty(), "{names:?}");
    }

    #[test]
    fn counter_of_a_loop_with_a_divergent_exit_is_divergent_after_it() {
        // Lanes leave at different iterations: inside the loop %j is uniform,
        // after it (%r) it differs per lane, even where the exit's join (the
        // function's end, here past another divergent branch) is far away.
        let names = divergent_names(
            "kernel @k(%n: i32) {\nentry:\n  %t = workitem_id x\n  br loop(0)\nloop(%j: i32):\n  %next = add i32 %j, 1\n  %done = icmp uge i32 %next, %t\n  brif %done, exit, more\nmore:\n  %c = icmp ult i32 %t, 3\n  brif %c, loop(%next), out\nout:\n  ret\nexit:\n  %r = add i32 %j, %n\n  ret\n}\n",
        );
        // The counter itself is divergent, as it is used after the loop.
        assert!(names.contains(&"j".to_string()) && names.contains(&"r".to_string()), "{names:?}");
    }

    #[test]
    fn device_function_parameters() {
        let names = divergent_names("func @f(%a: i32, %b: inreg i32) -> i32 {\nentry:\n  %s = add i32 %b, 1\n  %t = add i32 %a, %b\n  ret %t\n}\n");
        assert_eq!(names, ["a", "t"]);
    }

    #[test]
    fn examples_classify_the_global_id_and_its_branches() {
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/divergent_loop.mir")).unwrap();
        let module = parse(&text).unwrap();
        let func = &module.functions[0];
        let u = analyze(func);
        let value = |name: &str| Value(func.values.iter().position(|v| v.name == name).unwrap() as u32);
        assert!(!u.is_divergent(value("base")));
        for name in ["i", "x", "trip", "acc", "term"] {
            assert!(u.is_divergent(value(name)), "{name}");
        }
        // The counter is the same in every lane still looping (lanes leave, they
        // do not fall behind); nothing after the loop uses it.
        assert!(!u.is_divergent(value("j")));
        // loop ends in a divergent branch, body in a uniform one (on the
        // counter); `then`/`else`/`join` run with partial EXEC.
        let block = |name: &str| func.block_by_name(name).unwrap().0 as usize;
        assert!(u.divergent_branches[block("loop")] && !u.divergent_branches[block("body")]);
        assert!(u.partial_exec[block("then")] && u.partial_exec[block("join")]);
        assert!(!u.partial_exec[block("entry")]);
    }
}
