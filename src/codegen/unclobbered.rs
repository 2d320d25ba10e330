//! Loads no write can reach: in a kernel, a load of global memory that no
//! store, atomic or call (which may write memory), barrier or fence (after
//! which other work-items' writes become visible) precedes on any path from
//! the entry. Such a load at a uniform address gives every lane the same
//! value (uniformity.rs counts it uniform), and may use the scalar unit
//! (`s_load`, isel/memory.rs): the scalar cache starts each dispatch clean
//! and nothing in the kernel can have written the bytes before (the same
//! rule as llc-22's "no clobber" loads of global memory). Writes to local
//! and private memory do not count.

use hashbrown::HashSet;

use crate::abi::{AddrSpace, Type};
use crate::mir::cfg::Cfg;
use crate::mir::{FuncKind, Function, Inst, Op, Operand};

/// The loads of `func` (a kernel; none otherwise) that no write can reach,
/// by address of their instruction.
pub fn unclobbered_loads(func: &Function) -> HashSet<*const Inst> {
    let mut loads = HashSet::new();
    if func.kind != FuncKind::Kernel || func.blocks.is_empty() {
        return loads;
    }
    let writes = |inst: &Inst| {
        let outside_wave = |ptr: &Operand| match ptr {
            Operand::Value(v) => !matches!(func.value_type(*v), Type::Ptr(AddrSpace::Local | AddrSpace::Private)),
            Operand::Const(_) => true,
        };
        match &inst.op {
            Op::Store { ptr, .. } | Op::AtomicRmw { ptr, .. } | Op::CmpXchg { ptr, .. } => outside_wave(ptr),
            Op::Call { .. } | Op::Barrier | Op::Fence { .. } => true,
            _ => false,
        }
    };
    // Whether a write may have happened before each block's start: false
    // only where every path from the entry is free of writes.
    let cfg = Cfg::new(func);
    let written_in: Vec<bool> = func.blocks.iter().map(|b| b.insts.iter().any(writes)).collect();
    let mut dirty_at_start = vec![false; func.blocks.len()];
    let mut work: Vec<usize> = (0..func.blocks.len()).filter(|&b| written_in[b]).collect();
    while let Some(b) = work.pop() {
        for &s in &cfg.succs[b] {
            if !dirty_at_start[s] {
                dirty_at_start[s] = true;
                work.push(s);
            }
        }
    }
    for (b, block) in func.blocks.iter().enumerate() {
        if dirty_at_start[b] {
            continue;
        }
        for inst in &block.insts {
            if writes(inst) {
                break;
            }
            if matches!(inst.op, Op::Load { volatile: false, .. }) {
                loads.insert(inst as *const Inst);
            }
        }
    }
    loads
}
