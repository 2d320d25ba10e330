//! Control-flow lowering: walks the MIR blocks in a structured linear order and
//! builds the machine CFG around instruction selection.
//!
//! - Uniform branches become real branches on an SGPR boolean.
//! - A divergent **if-region** at B (join J) becomes
//!   `B: saved = exec; exec = saved & c; if exec == 0 goto ELSE` → then-side →
//!   `ELSE: exec = saved & ~c; if exec == 0 goto JOIN` → else-side →
//!   `JOIN: exec = saved; goto J`. J's parameters are merged lane by lane into
//!   accumulators: each side's exit writes its lanes (`LaneMerge`), the skip edges
//!   pass the accumulators unchanged.
//! - A loop with a **divergent exit** saves EXEC before the header; at each exit
//!   branch the leaving lanes' exit values are merged into accumulators and those
//!   lanes are removed from EXEC; when none remain the wave jumps to a restore
//!   block that sets EXEC back and enters the exit block with the accumulators.
//!   Values defined in the loop and used after it are accumulated the same way
//!   (each lane keeps the value of its last iteration).
//!
//! Every special edge (side exit, loop entry, uniform loop exit) gets an edge block
//! of its own, so the merges sit on exactly that edge.

use std::collections::HashMap;

use regalloc2 as ra;

use super::isel::IselHandle;
use super::structure::DivergentBranch;
use super::vcode::{Branch, Class, ExecOp, MKind};
use crate::abi::kernarg::KernargLayout;
use crate::abi::kernel::InitialState;
use crate::mir::{BlockCall, Diagnostic, Operand, Terminator, Value};

/// Per if-region (keyed by its branch block): the state the later stages need.
struct IfRegion {
    /// Accumulators as they enter the then-side and after the then stage.
    accs_then: Vec<ra::VReg>,
    else_block: Option<usize>,
    /// Accumulators entering the else stage (parameters of the else block).
    accs_else: Vec<ra::VReg>,
    restore_block: usize,
}

struct DivergentLoop {
    saved: Option<ra::VReg>,
    /// Values used after the loop (temporal divergence), in accumulator order after
    /// the exit block's parameters.
    tracked_values: Vec<Value>,
    /// Number of accumulator registers for the exit block's parameters.
    param_regs: usize,
    classes: Vec<Class>,
    /// Current accumulator versions while the loop body is lowered.
    current: Vec<ra::VReg>,
    restore_block: usize,
    restore_params: Vec<ra::VReg>,
    /// Tracked values and their accumulators after the loop: they replace the
    /// values from the exit block on (the exit dominates every use after the
    /// loop; blocks of the loop keep the per-iteration values).
    after_loop: Vec<(Value, Vec<ra::VReg>)>,
}

/// Lowers a whole function (kernel) through `h`.
pub(super) fn lower_function(h: &mut IselHandle<'_, '_>, layout: &KernargLayout, state: &InitialState) -> Result<(), Diagnostic> {
    let func = h.func();
    let structure = h.structure();
    let uni = h.uniformity();
    let order = linear_order(h);
    for &b in &order {
        let mb = h.new_block(func.blocks[b].name.clone(), uni.partial_exec[b]);
        h.set_mblock(b, mb);
    }
    for &b in &order {
        for &p in &func.blocks[b].params {
            h.define_block_param(h.mblock(b), p)?;
        }
    }
    // Divergent loops: accumulator shapes, restore blocks, header parameters.
    let mut loops: HashMap<usize, DivergentLoop> = HashMap::new();
    for (li, l) in structure.loops.iter().enumerate() {
        if !l.divergent {
            continue;
        }
        let exit = l.exit.expect("structure checked a single exit");
        let mut classes = Vec::new();
        for &p in &func.blocks[exit].params {
            for r in h.value_regs(p) {
                classes.push(h.class_of(r));
            }
        }
        let param_regs = classes.len();
        let tracked_values = values_used_after(func, &l.blocks);
        for &v in &tracked_values {
            classes.extend(h.divergent_classes(func.value_type(v)));
        }
        // Moves before the restore run while EXEC still holds the last iteration's lanes.
        let restore_block = h.new_block(format!("{}.restore", func.blocks[exit].name), true);
        loops.insert(li, DivergentLoop {
            saved: None,
            tracked_values,
            param_regs,
            classes,
            current: Vec::new(),
            restore_block,
            restore_params: Vec::new(),
            after_loop: Vec::new(),
        });
    }
    let regions: HashMap<usize, IfRegion> = HashMap::new();
    // Which if-region side a block exits (block -> (branch block, side)).
    let mut side_exit: HashMap<usize, (usize, usize)> = HashMap::new();
    for (b, br) in structure.branches.iter().enumerate() {
        if let Some(DivergentBranch::If { then_exit, else_exit, .. }) = br {
            if let Some(x) = then_exit {
                side_exit.insert(*x, (b, 0));
            }
            if let Some(x) = else_exit {
                side_exit.insert(*x, (b, 1));
            }
        }
    }

    let mut ctx = Ctx { loops, regions, side_exit };
    for &b in &order {
        let mb = h.mblock(b);
        h.switch_to(mb);
        if b == 0 {
            h.entry(layout, state)?;
        }
        for (li, l) in structure.loops.iter().enumerate() {
            if l.divergent && l.exit == Some(b) {
                for (v, regs) in std::mem::take(&mut ctx.loops.get_mut(&li).unwrap().after_loop) {
                    h.set_divergent_value(v, &regs);
                }
            }
        }
        // Loop header: tracked values are (re)defined per iteration; the accumulators
        // enter as header parameters.
        if let Some(li) = structure.loops.iter().position(|l| l.header == b && l.divergent) {
            let dl = ctx.loops.get_mut(&li).unwrap();
            let classes = dl.classes.clone();
            let mut params = Vec::new();
            for c in &classes {
                params.push(h.add_param(mb, *c));
            }
            ctx.loops.get_mut(&li).unwrap().current = params;
        }
        for inst in &func.blocks[b].insts {
            h.instruction(inst)?;
        }
        h.set_inst_ref(None);
        ctx.terminator(h, b)?;
    }
    Ok(())
}

struct Ctx {
    loops: HashMap<usize, DivergentLoop>,
    regions: HashMap<usize, IfRegion>,
    side_exit: HashMap<usize, (usize, usize)>,
}

impl Ctx {
    /// The divergent loop (index) that `b` is in and whose exit is `target`.
    fn loop_exit_of(&self, h: &IselHandle<'_, '_>, b: usize, target: usize) -> Option<usize> {
        let structure = h.structure();
        let mut li = structure.loop_of[b];
        while let Some(i) = li {
            let l = &structure.loops[i];
            if l.divergent && l.exit == Some(target) && l.blocks.contains(&b) {
                return Some(i);
            }
            // Outer loop: the smallest loop strictly containing this one.
            li = structure
                .loops
                .iter()
                .enumerate()
                .filter(|(_, o)| o.blocks.len() > l.blocks.len() && o.blocks.is_superset(&l.blocks))
                .min_by_key(|(_, o)| o.blocks.len())
                .map(|(j, _)| j);
        }
        None
    }

    fn terminator(&mut self, h: &mut IselHandle<'_, '_>, b: usize) -> Result<(), Diagnostic> {
        let func = h.func();
        let structure = h.structure();
        match &func.blocks[b].term {
            Terminator::Ret(value) if func.kind == crate::mir::FuncKind::Device => h.function_return(value.as_ref()),
            Terminator::Unreachable if func.kind == crate::mir::FuncKind::Device => h.function_return(None),
            Terminator::Ret(_) | Terminator::Unreachable => {
                h.terminate(Branch::EndProgram, Vec::new(), Vec::new(), Vec::new());
                Ok(())
            }
            Terminator::Br(call) => {
                let (target, args) = self.edge(h, b, call)?;
                h.terminate(Branch::Jump, Vec::new(), vec![target], vec![args]);
                Ok(())
            }
            Terminator::BrIf { cond, then_to, else_to } => match structure.branches[b].clone() {
                Some(DivergentBranch::If { join, then_side, else_side, .. }) => {
                    self.if_region(h, b, cond, then_to, else_to, join, !then_side.is_empty(), !else_side.is_empty())
                }
                Some(DivergentBranch::LoopExit { loop_index, exit_successor }) => {
                    self.divergent_exit(h, b, cond, [then_to, else_to], loop_index, exit_successor)
                }
                None => {
                    let (branch, ops) = h.uniform_branch(cond)?;
                    let (t, targs) = self.edge(h, b, then_to)?;
                    let (e, eargs) = self.edge(h, b, else_to)?;
                    h.terminate(branch, ops, vec![t, e], vec![targs, eargs]);
                    Ok(())
                }
            },
        }
    }

    /// Where an edge goes in the machine CFG, with its arguments; creates an edge
    /// block for edges that need work of their own.
    fn edge(&mut self, h: &mut IselHandle<'_, '_>, from: usize, call: &BlockCall) -> Result<(usize, Vec<ra::VReg>), Diagnostic> {
        let structure = h.structure();
        let to = call.block.0 as usize;
        let from_mb = h.current();
        // Exit of an if-region side.
        if let Some(&(branch, side)) = self.side_exit.get(&from) {
            if let Some(DivergentBranch::If { join, .. }) = &structure.branches[branch] {
                if *join == to {
                    let edge = h.new_block(format!("{}.exit", h.func().blocks[from].name), true);
                    h.switch_to(edge);
                    let args = h.block_call_args(call)?;
                    let region = self.regions.get(&branch).expect("the branch is lowered before its sides");
                    let accs_in = if side == 0 { region.accs_then.clone() } else { region.accs_else.clone() };
                    let merged = lane_merge_all(h, &accs_in, &args, None, false);
                    let next = if side == 0 { region.else_block.unwrap_or(region.restore_block) } else { region.restore_block };
                    h.terminate(Branch::Jump, Vec::new(), vec![next], vec![merged]);
                    h.switch_to(from_mb);
                    return Ok((edge, Vec::new()));
                }
            }
        }
        // A uniform exit of a divergent loop: all active lanes leave.
        if let Some(li) = self.loop_exit_of(h, from, to) {
            let edge = h.new_block(format!("{}.exit", h.func().blocks[from].name), true);
            h.switch_to(edge);
            let args = h.block_call_args(call)?;
            let merged = self.merge_loop_exit(h, li, &args, None, false)?;
            let restore = self.loops[&li].restore_block;
            h.terminate(Branch::Jump, Vec::new(), vec![restore], vec![merged]);
            h.switch_to(from_mb);
            return Ok((edge, Vec::new()));
        }
        // Entering or continuing a divergent loop.
        if let Some(li) = structure.loops.iter().position(|l| l.header == to && l.divergent) {
            let inside = structure.loops[li].blocks.contains(&from);
            let mut args = h.block_call_args(call)?;
            if inside {
                let dl = &self.loops[&li];
                args.extend(dl.current.iter().copied());
                return Ok((h.mblock(to), args));
            }
            let edge = h.new_block(format!("{}.enter", h.func().blocks[to].name), h.uniformity().partial_exec[from]);
            h.switch_to(edge);
            let saved = h.vreg(h.mask_class());
            h.push(MKind::Exec(ExecOp::Save), vec![ra::Operand::reg_def(saved)]);
            let classes = self.loops[&li].classes.clone();
            for c in classes {
                let init = h.vreg(c);
                h.push(MKind::ImplicitDef, vec![ra::Operand::reg_def(init)]);
                args.push(init);
            }
            self.loops.get_mut(&li).unwrap().saved = Some(saved);
            h.terminate(Branch::Jump, Vec::new(), vec![h.mblock(to)], vec![args]);
            h.switch_to(from_mb);
            return Ok((edge, Vec::new()));
        }
        let args = h.block_call_args(call)?;
        Ok((h.mblock(to), args))
    }

    #[allow(clippy::too_many_arguments)]
    fn if_region(
        &mut self,
        h: &mut IselHandle<'_, '_>,
        b: usize,
        cond: &Operand,
        then_to: &BlockCall,
        else_to: &BlockCall,
        join: usize,
        has_then: bool,
        has_else: bool,
    ) -> Result<(), Diagnostic> {
        let func = h.func();
        let mask = h.branch_mask(cond)?;
        let saved = h.vreg(h.mask_class());
        h.push(MKind::Exec(ExecOp::Save), vec![ra::Operand::reg_def(saved)]);
        // Accumulators shaped like J's parameters.
        let mut accs = Vec::new();
        for &p in &func.blocks[join].params {
            for r in h.value_regs(p) {
                let c = h.class_of(r);
                let init = h.vreg(c);
                h.push(MKind::ImplicitDef, vec![ra::Operand::reg_def(init)]);
                accs.push(init);
            }
        }
        // An empty side sends its lanes straight to J: merge their arguments now.
        if !has_then {
            let args = h.block_call_args(then_to)?;
            accs = lane_merge_all(h, &accs, &args, Some(mask), false);
        }
        if !has_else {
            let args = h.block_call_args(else_to)?;
            accs = lane_merge_all(h, &accs, &args, Some(mask), true);
        }
        // Entered with EXEC narrowed to one side (or empty): moves there must run
        // with all lanes enabled.
        let restore = h.new_block(format!("{}.join", func.blocks[b].name), true);
        let mut accs_restore = Vec::new();
        for &a in &accs {
            accs_restore.push(h.add_param(restore, h.class_of(a)));
        }
        let else_block = if has_else && has_then { Some(h.new_block(format!("{}.else", func.blocks[b].name), true)) } else { None };
        let mut accs_else = Vec::new();
        if let Some(eb) = else_block {
            for &a in &accs {
                accs_else.push(h.add_param(eb, h.class_of(a)));
            }
        }
        if has_then {
            // exec = saved & c; skip the then-side when no lane takes it.
            h.push(MKind::Exec(ExecOp::And), vec![ra::Operand::reg_use(saved), ra::Operand::reg_use(mask)]);
            let skip = else_block.unwrap_or(restore);
            let then_args = h.block_call_args(then_to)?;
            h.terminate(Branch::IfExecZero, Vec::new(), vec![skip, h.mblock(then_to.block.0 as usize)], vec![accs.clone(), then_args]);
        } else {
            // Only an else-side: exec = saved & ~c.
            h.push(MKind::Exec(ExecOp::AndNot), vec![ra::Operand::reg_use(saved), ra::Operand::reg_use(mask)]);
            let else_args = h.block_call_args(else_to)?;
            h.terminate(Branch::IfExecZero, Vec::new(), vec![restore, h.mblock(else_to.block.0 as usize)], vec![accs.clone(), else_args]);
        }
        if let Some(eb) = else_block {
            h.switch_to(eb);
            h.push(MKind::Exec(ExecOp::AndNot), vec![ra::Operand::reg_use(saved), ra::Operand::reg_use(mask)]);
            let else_args = h.block_call_args(else_to)?;
            h.terminate(Branch::IfExecZero, Vec::new(), vec![restore, h.mblock(else_to.block.0 as usize)], vec![accs_else.clone(), else_args]);
        }
        h.switch_to(restore);
        h.push(MKind::Exec(ExecOp::Set), vec![ra::Operand::reg_use(saved)]);
        h.terminate(Branch::Jump, Vec::new(), vec![h.mblock(join)], vec![accs_restore.clone()]);
        // The then-side sees `accs`; the else-side sees the else block's parameters
        // (or `accs` when there is no then-side).
        let accs_else_side = if else_block.is_some() { accs_else.clone() } else { accs.clone() };
        self.regions.insert(b, IfRegion {
            accs_then: accs,
            else_block,
            accs_else: accs_else_side,
            restore_block: restore,
        });
        h.switch_to(h.mblock(b));
        Ok(())
    }

    fn divergent_exit(
        &mut self,
        h: &mut IselHandle<'_, '_>,
        b: usize,
        cond: &Operand,
        calls: [&BlockCall; 2],
        li: usize,
        exit_successor: usize,
    ) -> Result<(), Diagnostic> {
        let mask = h.branch_mask(cond)?;
        let exit_args = h.block_call_args(calls[exit_successor])?;
        // Lanes leave where the condition selects the exit successor.
        let merged = self.merge_loop_exit(h, li, &exit_args, Some(mask), exit_successor == 1)?;
        let op = if exit_successor == 0 { ExecOp::AndNotSelf } else { ExecOp::AndSelf };
        h.push(MKind::Exec(op), vec![ra::Operand::reg_use(mask)]);
        let stay = calls[1 - exit_successor];
        let (stay_block, stay_args) = self.edge(h, b, stay)?;
        let restore = self.loops[&li].restore_block;
        h.terminate(Branch::IfExecZero, Vec::new(), vec![restore, stay_block], vec![merged, stay_args]);
        Ok(())
    }

    /// Merges exit arguments (and the tracked values) into the loop's
    /// accumulators for the lanes selected by `mask` (None: active lanes);
    /// returns the new accumulators and makes them current.
    fn merge_loop_exit(
        &mut self,
        h: &mut IselHandle<'_, '_>,
        li: usize,
        exit_args: &[ra::VReg],
        mask: Option<ra::VReg>,
        invert: bool,
    ) -> Result<Vec<ra::VReg>, Diagnostic> {
        let mut values = exit_args.to_vec();
        let tracked = self.loops[&li].tracked_values.clone();
        for v in tracked {
            values.extend(h.divergent_regs(v)?);
        }
        let dl = self.loops.get_mut(&li).unwrap();
        debug_assert_eq!(dl.current.len(), values.len(), "accumulators match the exit values");
        let accs = dl.current.clone();
        let merged = lane_merge_all(h, &accs, &values, mask, invert);
        let dl = self.loops.get_mut(&li).unwrap();
        dl.current = merged.clone();
        if dl.restore_params.is_empty() {
            for &m in &merged {
                let p = h.add_param(dl.restore_block, h.class_of(m));
                dl.restore_params.push(p);
            }
            // The restore block: EXEC back to the loop's entry mask, then the exit.
            let here = h.current();
            let restore = dl.restore_block;
            let saved = dl.saved.expect("the loop is entered before its exits are lowered");
            h.switch_to(restore);
            h.push(MKind::Exec(ExecOp::Set), vec![ra::Operand::reg_use(saved)]);
            let exit = h.structure().loops[li].exit.unwrap();
            let params = dl.restore_params.clone();
            let (param_regs, rest) = params.split_at(dl.param_regs);
            let mut offset = 0;
            for v in dl.tracked_values.clone() {
                let n = h.divergent_classes(h.func().value_type(v)).len();
                dl.after_loop.push((v, rest[offset..offset + n].to_vec()));
                offset += n;
            }
            h.terminate(Branch::Jump, Vec::new(), vec![h.mblock(exit)], vec![param_regs.to_vec()]);
            h.switch_to(here);
        }
        Ok(merged)
    }
}

/// `acc_i = lanes ? x_i : acc_i` for every accumulator.
fn lane_merge_all(h: &mut IselHandle<'_, '_>, accs: &[ra::VReg], values: &[ra::VReg], mask: Option<ra::VReg>, invert: bool) -> Vec<ra::VReg> {
    let mut out = Vec::new();
    for (&acc, &x) in accs.iter().zip(values) {
        let class = h.class_of(acc);
        let d = h.vreg(class);
        let vector = class == Class::Vgpr;
        let mut ops = vec![ra::Operand::reg_reuse_def(d, 1), ra::Operand::reg_use(acc), ra::Operand::reg_use(x)];
        if let Some(m) = mask {
            ops.push(ra::Operand::reg_use(m));
        }
        h.push(MKind::LaneMerge { vector, masked: mask.is_some(), invert }, ops);
        out.push(d);
    }
    out
}

/// Values defined inside `blocks` and used outside them.
fn values_used_after(func: &crate::mir::Function, blocks: &std::collections::BTreeSet<usize>) -> Vec<Value> {
    let mut defined = std::collections::BTreeSet::new();
    for &b in blocks {
        let block = &func.blocks[b];
        defined.extend(block.params.iter().copied());
        defined.extend(block.insts.iter().filter_map(|i| i.result));
    }
    let mut used = Vec::new();
    for (b, block) in func.blocks.iter().enumerate() {
        if blocks.contains(&b) {
            continue;
        }
        let operands = block
            .insts
            .iter()
            .flat_map(|i| crate::mir::op_operands(&i.op))
            .chain(crate::mir::terminator_operands(&block.term));
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

/// A linear order of the MIR blocks: reverse postorder of a DFS that visits loop
/// exits first and else before then, so that loops are contiguous and then-sides
/// precede else-sides.
fn linear_order(h: &IselHandle<'_, '_>) -> Vec<usize> {
    let func = h.func();
    let structure = h.structure();
    let n = func.blocks.len();
    let leaves_loop = |from: usize, to: usize| structure.loop_of[from].is_some_and(|l| !structure.loops[l].blocks.contains(&to));
    let mut visited = vec![false; n];
    let mut post = Vec::new();
    let mut stack: Vec<(usize, Vec<usize>)> = Vec::new();
    let succs_of = |b: usize| -> Vec<usize> {
        let mut s: Vec<usize> = func.blocks[b].term.successors().iter().map(|x| x.0 as usize).collect();
        s.dedup();
        // Visit order: loop exits, then the else target, then the then target.
        let mut order: Vec<usize> = Vec::new();
        order.extend(s.iter().copied().filter(|&t| leaves_loop(b, t)));
        order.extend(s.iter().rev().copied().filter(|&t| !leaves_loop(b, t)));
        order
    };
    visited[0] = true;
    stack.push((0, succs_of(0)));
    while let Some((b, mut rest)) = stack.pop() {
        if let Some(next) = rest.first().copied() {
            rest.remove(0);
            stack.push((b, rest));
            if !visited[next] {
                visited[next] = true;
                stack.push((next, succs_of(next)));
            }
        } else {
            post.push(b);
        }
    }
    post.reverse();
    post
}
