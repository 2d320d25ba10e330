//! spaces: loads, stores and atomics through a generic (flat) pointer that
//! was cast from a global, constant or local one use that address space
//! instead. OpenCL 2.0 passes `__global` arrays to generic-pointer library
//! functions (`vload8`, `vstore16`, the math functions' out-parameters), so
//! clang's SPIR-V casts to the generic space before the access. A flat access
//! on AMDGPU waits on two counters, takes no SGPR base and, on gfx90a, no
//! negative offset; the address space it came from gives all of that back.
//!
//! A flat value is *derived* from `p: ptr<S>` when it is `addrspacecast p to
//! ptr` or a `ptradd` of a derived value. For every derived value a memory
//! operation reads, the same chain is rebuilt in `S` (each `ptradd` next to
//! the flat one it copies, so it dominates everything the flat one does) and
//! the operation takes the `S` pointer. The flat chain stays for any other
//! use (a call argument, a stored pointer, a comparison); dce removes it when
//! nothing else reads it. Values merged by block parameters or `select` are
//! not followed. Private pointers are left alone: their accesses are lowered
//! from the stack slot they point into (codegen), not from an address space.

use super::rewrite::Names;
use crate::abi::{AddrSpace, Type};
use crate::mir::ir::{CastOp, Function, Inst, Op, Operand, Value};

/// How a flat value is derived from a pointer in another space.
#[derive(Clone)]
enum Derived {
    /// `addrspacecast root to ptr`.
    Cast { root: Operand },
    /// `ptradd parent, offset` with a derived parent.
    Add { parent: Value, offset: Operand },
}

fn space_kept(space: AddrSpace) -> bool {
    matches!(space, AddrSpace::Global | AddrSpace::Constant | AddrSpace::Local)
}

/// The pointer operand of a memory operation.
fn accessed_pointer(op: &mut Op) -> Option<&mut Operand> {
    match op {
        Op::Load { ptr, .. } | Op::Store { ptr, .. } | Op::AtomicRmw { ptr, .. } | Op::CmpXchg { ptr, .. } => Some(ptr),
        _ => None,
    }
}

pub fn run(func: &mut Function) -> bool {
    // Derivations, in definition order (an instruction's operands are defined
    // before it in every block that dominates it, and defs index them).
    let mut derived: Vec<Option<Derived>> = vec![None; func.values.len()];
    let mut space_of: Vec<Option<AddrSpace>> = vec![None; func.values.len()];
    let mut any = false;
    for block in &func.blocks {
        for inst in &block.insts {
            let Some(r) = inst.result else { continue };
            match &inst.op {
                Op::Cast { op: CastOp::AddrSpaceCast, from: Type::Ptr(space), arg, to: Type::Ptr(AddrSpace::Flat) } if space_kept(*space) => {
                    derived[r.0 as usize] = Some(Derived::Cast { root: arg.clone() });
                    space_of[r.0 as usize] = Some(*space);
                    any = true;
                }
                _ => {}
            }
        }
    }
    if !any {
        return false;
    }
    // ptradd chains: a parent defined in a later block (blocks out of
    // dominance order) is followed by another sweep.
    loop {
        let mut grew = false;
        for block in &func.blocks {
            for inst in &block.insts {
                let (Some(r), Op::PtrAdd { ptr: Operand::Value(parent), offset }) = (inst.result, &inst.op) else { continue };
                if derived[r.0 as usize].is_none() {
                    if let Some(space) = space_of[parent.0 as usize] {
                        derived[r.0 as usize] = Some(Derived::Add { parent: *parent, offset: offset.clone() });
                        space_of[r.0 as usize] = Some(space);
                        grew = true;
                    }
                }
            }
        }
        if !grew {
            break;
        }
    }
    // The derived values memory operations read, and their parents.
    let mut needed = vec![false; func.values.len()];
    let mut stack: Vec<Value> = Vec::new();
    for block in &mut func.blocks {
        for inst in &mut block.insts {
            if let Some(Operand::Value(v)) = accessed_pointer(&mut inst.op) {
                if derived[v.0 as usize].is_some() {
                    stack.push(*v);
                }
            }
        }
    }
    if stack.is_empty() {
        return false;
    }
    while let Some(v) = stack.pop() {
        if std::mem::replace(&mut needed[v.0 as usize], true) {
            continue;
        }
        if let Some(Derived::Add { parent, .. }) = &derived[v.0 as usize] {
            stack.push(*parent);
        }
    }
    // The value in the original space that stands for each needed flat value:
    // roots for casts, new ptradds for the rest (made next to their flat twin).
    let mut twin: Vec<Option<Operand>> = vec![None; func.values.len()];
    for (v, d) in derived.iter().enumerate() {
        if let (true, Some(Derived::Cast { root, .. })) = (needed[v], d) {
            twin[v] = Some(root.clone());
        }
    }
    let mut names = Names::default();
    // Parents are made before their children in one sweep, except where a
    // parent is in a later block: another sweep makes those.
    loop {
        let mut made = false;
        for b in 0..func.blocks.len() {
            let mut i = 0;
            while i < func.blocks[b].insts.len() {
                let inst = &func.blocks[b].insts[i];
                i += 1;
                let Some(r) = inst.result else { continue };
                let r = r.0 as usize;
                if r >= needed.len() || !needed[r] || twin[r].is_some() {
                    continue;
                }
                let Some(Derived::Add { parent, offset }) = derived[r].clone() else { continue };
                let Some(base) = twin[parent.0 as usize].clone() else { continue };
                let space = space_of[r].expect("a derived value has a space");
                let span = inst.span;
                let hint = func.values[r].name.clone();
                let v = names.fresh(func, Type::Ptr(space), &hint);
                func.blocks[b].insts.insert(i, Inst { result: Some(v), op: Op::PtrAdd { ptr: base, offset }, span });
                i += 1;
                twin[r] = Some(Operand::Value(v));
                made = true;
            }
        }
        if !made {
            break;
        }
    }
    let mut changed = false;
    for block in &mut func.blocks {
        for inst in &mut block.insts {
            if let Some(ptr) = accessed_pointer(&mut inst.op) {
                if let Operand::Value(v) = ptr {
                    if let Some(t) = twin.get(v.0 as usize).cloned().flatten() {
                        *ptr = t;
                        changed = true;
                    }
                }
            }
        }
    }
    changed
}
