//! Unify returns: a function with several `ret`s gets one return block that
//! every former `ret` branches to (passing its value as a block argument).
//!
//! Why: divergent control flow is only lowered in two shapes (docs/pipeline.md),
//! and both need the paths of a divergent branch to meet again. Two `ret`s on
//! the two sides of a divergent branch never meet; after this pass they meet in
//! the return block, so an early return is an ordinary if-region. Functions with
//! one `ret` are left alone (the pass returns `None`).

use crate::mir::{Block, BlockCall, BlockId, Function, Operand, Terminator, Value, ValueInfo};

pub fn run(func: &Function) -> Option<Function> {
    let returns = func.blocks.iter().filter(|b| matches!(b.term, Terminator::Ret(_))).count();
    if returns < 2 {
        return None;
    }
    let mut f = func.clone();
    let exit = BlockId(f.blocks.len() as u32);
    let unique = |taken: &dyn Fn(&str) -> bool, base: &str| {
        (0..).map(|i| if i == 0 { base.to_string() } else { format!("{base}.{i}") }).find(|n| !taken(n)).expect("a free name")
    };
    let mut params = Vec::new();
    if let Some(ty) = &f.ret {
        let name = unique(&|n| func.values.iter().any(|v| v.name == n), "returned");
        params.push(Value(f.values.len() as u32));
        f.values.push(ValueInfo { name, ty: ty.clone() });
    }
    for b in &mut f.blocks {
        if let Terminator::Ret(value) = &b.term {
            let args: Vec<Operand> = value.iter().cloned().collect();
            b.term = Terminator::Br(BlockCall { block: exit, args });
        }
    }
    let name = unique(&|n| func.blocks.iter().any(|b| b.name == n), "return");
    let term = Terminator::Ret(params.first().map(|v| Operand::Value(*v)));
    f.blocks.push(Block { name, params, insts: Vec::new(), term, term_span: func.span, span: func.span });
    Some(f)
}
