//! merge: neighbouring scalar accesses to global memory become one vector
//! access, which selection emits as `global_load_dwordx2`..`x4` (and the
//! stores likewise). OpenCL code written element by element (`o[0] = c0;
//! o[1] = c1; ...`, `float b0 = bk[0], b1 = bk[1], ...`) reaches the SPIR-V
//! as one access per element; llc-22 merges them after selection (its
//! load/store optimizer), we do it here, where the addresses are still
//! `ptradd base, constant`.
//!
//! Within a block, an access's address is `(base, offset)`: the operands of a
//! `ptradd` with a constant offset, or the pointer itself at offset 0.
//! Accesses of one element type (i32, f32, i64, f64: 32- and 64-bit, what
//! the multi-dword instructions move) through one base at consecutive
//! offsets merge in chunks of at most four dwords (vectors of 4 or 2
//! elements; no 3-element vectors, whose memory form is 4 elements wide).
//!
//! - Loads (not volatile) merge when no store, atomic, call, barrier, fence
//!   or volatile access lies between them: the vector load goes where the
//!   first of them was, its elements extracted right after it into the
//!   loads' own result values, so every use is still dominated.
//! - Stores (not volatile) merge when they are consecutive among the
//!   block's memory operations (any other access between them may alias
//!   one of them, and moving a store past it could change what it sees or
//!   leaves): the vector store goes where the last of them was, where every
//!   stored value is defined.
//!
//! The accesses touch the same bytes as before, in one instruction; global
//! memory needs 4-byte alignment only for multi-dword accesses (the merged
//! access keeps the alignment of its first element).

use super::rewrite::Names;
use crate::abi::{AddrSpace, Type};
use crate::mir::ir::{Const, Function, Inst, Op, Operand, Value};
use hashbrown::HashMap;

/// What an instruction is to this pass.
enum Access {
    /// A mergeable load or store: its element type, base, offset.
    Merge { store: bool, ty: Type, base: Operand, offset: i64 },
    /// Another memory operation (or a volatile or unmergeable access).
    Other,
    /// No memory effect.
    None,
}

fn mergeable_type(ty: &Type) -> bool {
    matches!(ty, Type::I32 | Type::F32 | Type::I64 | Type::F64)
}

/// A constant offset as a signed byte count.
fn signed(c: &Const) -> i64 {
    match c.ty.bits() {
        32 => i64::from(c.bits as u32 as i32),
        _ => c.bits as i64,
    }
}

fn classify(func: &Function, offsets: &[Option<(Operand, i64)>], op: &Op) -> Access {
    let address = |ptr: &Operand| -> Option<(Operand, i64)> {
        if *func.operand_type(ptr) != Type::Ptr(AddrSpace::Global) {
            return None;
        }
        match ptr {
            Operand::Value(_) => Some(offsets_of(offsets, ptr).unwrap_or((ptr.clone(), 0))),
            Operand::Const(_) => None,
        }
    };
    match op {
        Op::Load { ty, ptr, volatile: false, .. } | Op::Store { ty, ptr, volatile: false, .. } if mergeable_type(ty) => match address(ptr) {
            Some((base, offset)) => Access::Merge { store: matches!(op, Op::Store { .. }), ty: ty.clone(), base, offset },
            None => Access::Other,
        },
        Op::Load { .. } | Op::Store { .. } | Op::AtomicRmw { .. } | Op::CmpXchg { .. } | Op::Call { .. } | Op::Barrier | Op::Fence { .. } => Access::Other,
        _ => Access::None,
    }
}

/// One merged access: its members' instruction indices, in offset order.
struct Chunk {
    store: bool,
    members: Vec<usize>,
}

/// Splits accesses (instruction index, offset) of one group, sorted by
/// offset, into chunks of consecutive offsets of `size`-byte elements.
fn chunks_of(mut accesses: Vec<(usize, i64)>, size: i64, store: bool, out: &mut Vec<Chunk>) {
    accesses.sort_by_key(|&(i, offset)| (offset, i));
    accesses.dedup_by_key(|a| a.1); // a repeated load stays as it is
    let most = (16 / size) as usize;
    let mut run: Vec<usize> = Vec::new();
    let flush = |run: &mut Vec<usize>, out: &mut Vec<Chunk>| {
        let mut rest = &run[..];
        while rest.len() >= 2 {
            let n = if rest.len() >= 4 && most >= 4 { 4 } else { 2 };
            out.push(Chunk { store, members: rest[..n].to_vec() });
            rest = &rest[n..];
        }
        run.clear();
    };
    let mut last: Option<i64> = None;
    for (i, offset) in accesses {
        if last.is_some_and(|l| l + size != offset) {
            flush(&mut run, out);
        }
        run.push(i);
        last = Some(offset);
    }
    flush(&mut run, out);
}

/// The chunks of one block.
fn plan(func: &Function, offsets: &[Option<(Operand, i64)>], insts: &[Inst]) -> Vec<Chunk> {
    let mut chunks = Vec::new();
    // Loads: grouped by (base, type) between memory-ordering instructions.
    let mut loads: HashMap<(Operand, Type), Vec<(usize, i64)>> = HashMap::new();
    // Stores: the current run of consecutive stores through one base.
    let mut stores: Option<((Operand, Type), Vec<(usize, i64)>)> = None;
    let flush_loads = |loads: &mut HashMap<(Operand, Type), Vec<(usize, i64)>>, chunks: &mut Vec<Chunk>| {
        let mut groups: Vec<_> = loads.drain().filter(|(_, g)| g.len() >= 2).collect();
        groups.sort_by_key(|(_, g)| g[0].0); // deterministic order
        for ((_, ty), group) in groups {
            chunks_of(group, i64::from(ty.size()), false, chunks);
        }
    };
    let flush_stores = |stores: &mut Option<((Operand, Type), Vec<(usize, i64)>)>, chunks: &mut Vec<Chunk>| {
        if let Some(((_, ty), group)) = stores.take() {
            if group.len() >= 2 {
                chunks_of(group, i64::from(ty.size()), true, chunks);
            }
        }
    };
    for (i, inst) in insts.iter().enumerate() {
        match classify(func, offsets, &inst.op) {
            Access::None => {}
            Access::Other => {
                flush_loads(&mut loads, &mut chunks);
                flush_stores(&mut stores, &mut chunks);
            }
            Access::Merge { store: false, ty, base, offset } => {
                flush_stores(&mut stores, &mut chunks);
                loads.entry((base, ty)).or_default().push((i, offset));
            }
            Access::Merge { store: true, ty, base, offset } => {
                flush_loads(&mut loads, &mut chunks);
                let key = (base, ty);
                let continues = stores.as_ref().is_some_and(|(k, group)| *k == key && group.iter().all(|&(_, o)| o != offset));
                if !continues {
                    flush_stores(&mut stores, &mut chunks);
                }
                stores.get_or_insert_with(|| (key, Vec::new())).1.push((i, offset));
            }
        }
    }
    flush_loads(&mut loads, &mut chunks);
    flush_stores(&mut stores, &mut chunks);
    chunks
}

pub fn run(func: &mut Function) -> bool {
    let mut offsets: Vec<Option<(Operand, i64)>> = vec![None; func.values.len()];
    for block in &func.blocks {
        for inst in &block.insts {
            if let (Some(r), Op::PtrAdd { ptr, offset: Operand::Const(c) }) = (inst.result, &inst.op) {
                offsets[r.0 as usize] = Some((ptr.clone(), signed(c)));
            }
        }
    }
    let mut names = Names::default();
    let mut changed = false;
    for b in 0..func.blocks.len() {
        let chunks = plan(func, &offsets, &func.blocks[b].insts);
        if chunks.is_empty() {
            continue;
        }
        changed = true;
        let insts = std::mem::take(&mut func.blocks[b].insts);
        // Per instruction: the chunk it is the anchor of (the first load or
        // the last store), or that it is a member dropped in its favour.
        let mut anchor: Vec<Option<usize>> = vec![None; insts.len()];
        let mut dropped = vec![false; insts.len()];
        for (c, chunk) in chunks.iter().enumerate() {
            let at = if chunk.store { *chunk.members.iter().max().unwrap() } else { *chunk.members.iter().min().unwrap() };
            anchor[at] = Some(c);
            for &m in &chunk.members {
                dropped[m] = true;
            }
        }
        let mut out = Vec::with_capacity(insts.len());
        for (i, inst) in insts.iter().enumerate() {
            if let Some(c) = anchor[i] {
                emit_chunk(func, &mut names, &offsets, &insts, &chunks[c], &mut out);
            }
            if !dropped[i] {
                out.push(inst.clone());
            }
        }
        func.blocks[b].insts = out;
    }
    changed
}

/// `ptradd base, constant` when `ptr` is one (the table of [`run`]).
fn offsets_of(offsets: &[Option<(Operand, i64)>], ptr: &Operand) -> Option<(Operand, i64)> {
    match ptr {
        Operand::Value(v) => offsets[v.0 as usize].clone(),
        Operand::Const(_) => None,
    }
}

/// The vector access standing for `chunk`'s members.
fn emit_chunk(func: &mut Function, names: &mut Names, offsets: &[Option<(Operand, i64)>], insts: &[Inst], chunk: &Chunk, out: &mut Vec<Inst>) {
    let first = &insts[chunk.members[0]];
    let span = first.span;
    let (ty, ptr, align) = match &first.op {
        Op::Load { ty, ptr, align, .. } | Op::Store { ty, ptr, align, .. } => (ty.clone(), ptr.clone(), *align),
        _ => unreachable!("chunks hold loads and stores"),
    };
    let n = chunk.members.len() as u8;
    let vector = Type::Vector(Box::new(ty.clone()), n);
    if chunk.store {
        // The first element's address is defined before its store, so before
        // the last store, where this goes.
        let elems: Vec<Operand> = chunk.members.iter().map(|&m| match &insts[m].op {
            Op::Store { value, .. } => value.clone(),
            _ => unreachable!("store chunks hold stores"),
        }).collect();
        let v: Value = names.fresh(func, vector.clone(), "merged");
        out.push(Inst { result: Some(v), op: Op::Make { ty: vector.clone(), elems }, span });
        out.push(Inst { result: None, op: Op::Store { ty: vector, value: Operand::Value(v), ptr, align, volatile: false }, span });
        return;
    }
    // A load goes where the first of them was, which may come before the
    // definition of the lowest one's address: that is recomputed here from
    // its base (which every member's address uses, so it is defined).
    let address = match offsets_of(offsets, &ptr) {
        Some((base, offset)) => {
            let fresh = names.fresh(func, func.operand_type(&ptr).clone(), "addr");
            out.push(Inst { result: Some(fresh), op: Op::PtrAdd { ptr: base, offset: Operand::Const(Const::int(Type::I64, offset)) }, span });
            Operand::Value(fresh)
        }
        None => ptr.clone(),
    };
    let v: Value = names.fresh(func, vector.clone(), "merged");
    out.push(Inst { result: Some(v), op: Op::Load { ty: vector, ptr: address, align, volatile: false }, span });
    for (k, &m) in chunk.members.iter().enumerate() {
        out.push(Inst { result: insts[m].result, op: Op::Extract { agg: Operand::Value(v), index: k as u32 }, span });
    }
}
