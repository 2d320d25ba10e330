//! What a kernel does through a pointer argument, for the metadata's
//! `.actual_access` (which LLVM writes for `restrict` pointers from the
//! readonly/writeonly attributes it infers): the pointer and everything derived
//! from it (`ptradd`, `addrspacecast`, `select`, block parameters) used only as
//! load addresses is read-only, only as store addresses write-only. Any other
//! use (an atomic, a call, storing the pointer, a conversion to an integer)
//! says nothing.

use hashbrown::HashSet;

use crate::mir::{op_operands, ArgAccess, CastOp, Function, Op, Operand, Terminator, Value};

/// The access through pointer parameter `param` of `func`; None when it may
/// do anything.
pub fn pointer_access(func: &Function, param: Value) -> Option<ArgAccess> {
    let mut derived: HashSet<Value> = HashSet::new();
    derived.insert(param);
    let is = |o: &Operand, set: &HashSet<Value>| matches!(o, Operand::Value(v) if set.contains(v));
    let (mut reads, mut writes) = (false, false);
    // Derived values only grow; repeat until they stop (block parameters may
    // be defined before the branches that feed them).
    loop {
        let before = derived.len();
        for block in &func.blocks {
            for inst in &block.insts {
                let uses: Vec<&Operand> = op_operands(&inst.op).into_iter().filter(|o| is(o, &derived)).collect();
                if uses.is_empty() {
                    continue;
                }
                match &inst.op {
                    Op::Load { .. } => reads = true,
                    Op::Store { value, .. } if !is(value, &derived) => writes = true,
                    Op::PtrAdd { offset, .. } if !is(offset, &derived) => {
                        derived.extend(inst.result);
                    }
                    Op::Cast { op: CastOp::AddrSpaceCast, .. } => derived.extend(inst.result),
                    Op::Select { cond, .. } if !is(cond, &derived) => derived.extend(inst.result),
                    _ => return None,
                }
            }
            let mut calls = Vec::new();
            match &block.term {
                Terminator::Br(c) => calls.push(c),
                Terminator::BrIf { cond, then_to, else_to } => {
                    if is(cond, &derived) {
                        return None;
                    }
                    calls.extend([then_to, else_to]);
                }
                Terminator::Ret(Some(v)) if is(v, &derived) => return None,
                _ => {}
            }
            for c in calls {
                for (arg, &p) in c.args.iter().zip(&func.blocks[c.block.0 as usize].params) {
                    if is(arg, &derived) {
                        derived.insert(p);
                    }
                }
            }
        }
        if derived.len() == before {
            break;
        }
    }
    match (reads, writes) {
        (_, false) => Some(ArgAccess::ReadOnly),
        (false, true) => Some(ArgAccess::WriteOnly),
        (true, true) => None,
    }
}
