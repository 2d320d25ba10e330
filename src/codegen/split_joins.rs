//! Split shared joins: when one side of a divergent branch reaches the branch's
//! join from several blocks (it holds a nested branch, or early returns that
//! unify_returns sent to one return block), a new block is put in front of the
//! join for that side: those blocks branch to it with their arguments, and it
//! branches on to the join with its parameters. The nested branch then has its
//! own join and the outer side reaches the outer join through one block, which
//! is the if-region shape `structure` accepts.
//!
//! `structure::analyze` finds the blocks; the driver (`codegen/mod.rs`) splits
//! and analyses again until the structure is accepted or refused for another
//! reason. Each round adds one block and removes one shared join; the number of
//! rounds is bounded by the number of branch edges.

use crate::mir::{Block, BlockCall, BlockId, Function, Operand, Terminator, Value, ValueInfo};

/// `func` with blocks `from` branching to a new block in front of `join`.
pub fn split(func: &Function, from: &[usize], join: usize) -> Function {
    let mut f = func.clone();
    let new = BlockId(f.blocks.len() as u32);
    let target = &func.blocks[join];
    let mut params = Vec::new();
    for (k, p) in target.params.iter().enumerate() {
        let base = format!("{}.{k}", func.value_name(*p));
        let name = (0..).map(|i| format!("{base}.j{i}")).find(|n| !f.values.iter().any(|v| &v.name == n)).expect("a free name");
        params.push(Value(f.values.len() as u32));
        f.values.push(ValueInfo { name, ty: func.value_type(*p).clone() });
    }
    let name = (0..).map(|i| format!("{}.pre{i}", target.name)).find(|n| !f.blocks.iter().any(|b| &b.name == n)).expect("a free name");
    for &b in from {
        let retarget = |call: &mut BlockCall| {
            if call.block.0 as usize == join {
                call.block = new;
            }
        };
        match &mut f.blocks[b].term {
            Terminator::Br(call) => retarget(call),
            Terminator::BrIf { then_to, else_to, .. } => {
                retarget(then_to);
                retarget(else_to);
            }
            Terminator::Ret(_) | Terminator::Unreachable => {}
        }
    }
    let args = params.iter().map(|v| Operand::Value(*v)).collect();
    let term = Terminator::Br(BlockCall { block: BlockId(join as u32), args });
    f.blocks.push(Block { name, params, insts: Vec::new(), term, term_span: target.span, span: target.span });
    f
}
