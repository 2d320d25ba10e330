//! select: a conditional branch whose arms are a few instructions that are
//! safe to run whatever the condition (no memory access, call, or operation
//! MIR makes an error, like division by zero) becomes straight-line code
//! choosing the join's arguments with `select`.
//!
//! Shapes: a diamond, `brif c, A, B` with A and B reached only from this
//! branch and both ending in `br J(...)`; and a triangle, `brif c, A, J(...)`
//! with A reached only from it and ending in `br J(...)` (or the mirror).
//! The arms' instructions move to the end of the branching block (they use
//! only values of their own arm or values defined above the branch, which
//! dominate its end), each argument position where the two ways differ
//! becomes `select c, then, else`, and the branch becomes `br J(...)`; the
//! arms are left empty and unreachable for `branches` to delete.
//!
//! Why: clang's SPIR-V keeps `c ? (generic)&local[l] : (generic)priv` as a
//! branch (the generic target does not call an address-space cast cheap),
//! and on a GPU a divergent branch costs EXEC-mask instructions on top of
//! both arms, which run anyway; a uniform one costs a branch or two. LLVM's
//! SimplifyCFG makes the same `select`s for the amdgcn target. Only where
//! the selects cost less than the branch (the limits below).

use super::rewrite::Names;
use crate::abi::{AddrSpace, Type};
use crate::mir::ir::{BinOp, BlockCall, CastOp, Function, Inst, Op, Operand, Terminator};

/// The most instructions (constants not counted) both arms may have
/// together.
const MOST_ARM_INSTRUCTIONS: usize = 4;

/// The most dwords of `select`ed arguments each shape pays for. A divergent
/// triangle costs two scalar instructions once saveexec, fold_merges and
/// skip_branches are done (EXEC saved and narrowed in one, restored in
/// one: its side writes the join's registers in place), a diamond about
/// four; each dword selected costs a `v_cndmask_b32` (an `s_cselect` when
/// uniform, where the branch costs one or two). So a triangle pays for one
/// 32-bit select, a diamond for three dwords (a generic pointer chosen
/// between two address spaces is two).
const MOST_TRIANGLE_SELECT_DWORDS: u32 = 1;
const MOST_DIAMOND_SELECT_DWORDS: u32 = 3;

/// Whether an instruction may run where the source did not run it: no
/// memory, calls, synchronisation or wave operations, and nothing MIR makes
/// an error (division and remainder by zero or overflow; a flat address cast
/// to a space it is not in).
fn speculatable(op: &Op) -> bool {
    match op {
        Op::Const(_) | Op::Unary { .. } | Op::Fma { .. } | Op::Ternary { .. } | Op::Icmp { .. } | Op::Fcmp { .. } | Op::Select { .. } | Op::PtrAdd { .. } | Op::Extract { .. } | Op::Insert { .. } | Op::Make { .. } => true,
        Op::Binary { op, .. } => !matches!(op, BinOp::SDiv | BinOp::UDiv | BinOp::SRem | BinOp::URem),
        Op::Cast { op: CastOp::AddrSpaceCast, from, .. } => !matches!(from, Type::Ptr(AddrSpace::Flat)),
        Op::Cast { .. } => true,
        _ => false,
    }
}

/// An arm: the block `call` enters when it takes no arguments, is entered
/// only from the branch, runs only speculatable instructions and ends in
/// `br`. Returns the block and where it goes.
fn arm(func: &Function, preds: &[u32], branch: usize, call: &BlockCall) -> Option<(usize, BlockCall)> {
    let b = call.block.0 as usize;
    let block = func.blocks.get(b)?;
    let Terminator::Br(next) = &block.term else { return None };
    let plain = b != 0 && b != branch && call.args.is_empty() && block.params.is_empty() && preds[b] == 1;
    (plain && block.insts.iter().all(|i| speculatable(&i.op))).then(|| (b, next.clone()))
}

fn cost(func: &Function, block: Option<usize>) -> usize {
    block.map_or(0, |b| func.blocks[b].insts.iter().filter(|i| !matches!(i.op, Op::Const(_))).count())
}

pub fn run(func: &mut Function) -> bool {
    let n = func.blocks.len();
    let mut preds = vec![0u32; n];
    for block in &func.blocks {
        for s in block.term.successors() {
            if let Some(count) = preds.get_mut(s.0 as usize) {
                *count += 1;
            }
        }
    }
    let mut names = Names::default();
    let mut changed = false;
    for h in 0..n {
        let Terminator::BrIf { cond, then_to, else_to } = &func.blocks[h].term else { continue };
        if then_to.block == else_to.block {
            continue;
        }
        let (then_arm, else_arm) = (arm(func, &preds, h, then_to), arm(func, &preds, h, else_to));
        // (arm blocks to empty, the join, its arguments each way)
        let (arms, join, then_args, else_args) = match (&then_arm, &else_arm) {
            (Some((a, ja)), Some((b, jb))) if ja.block == jb.block => ([Some(*a), Some(*b)], ja.block, ja.args.clone(), jb.args.clone()),
            (Some((a, ja)), _) if ja.block == else_to.block => ([Some(*a), None], ja.block, ja.args.clone(), else_to.args.clone()),
            (_, Some((b, jb))) if jb.block == then_to.block => ([None, Some(*b)], jb.block, then_to.args.clone(), jb.args.clone()),
            _ => continue,
        };
        let j = join.0 as usize;
        if j == h || arms.contains(&Some(j)) {
            continue;
        }
        let differing: Vec<usize> = (0..then_args.len()).filter(|&i| then_args[i] != else_args[i]).collect();
        let selectable = |i: &usize| !matches!(func.operand_type(&then_args[*i]), Type::Struct(_));
        let dwords: u32 = differing.iter().map(|&i| func.operand_type(&then_args[i]).bits().div_ceil(32)).sum();
        let most_dwords = if arms.contains(&None) { MOST_TRIANGLE_SELECT_DWORDS } else { MOST_DIAMOND_SELECT_DWORDS };
        if cost(func, arms[0]) + cost(func, arms[1]) > MOST_ARM_INSTRUCTIONS || dwords > most_dwords || !differing.iter().all(selectable) {
            continue;
        }
        let cond = cond.clone();
        let span = func.blocks[h].term_span;
        let mut moved: Vec<Inst> = Vec::new();
        for b in arms.into_iter().flatten() {
            moved.append(&mut func.blocks[b].insts);
            func.blocks[b].term = Terminator::Unreachable;
            preds[b] = 0;
        }
        let mut args = then_args.clone();
        for i in differing {
            let ty = func.operand_type(&then_args[i]).clone();
            let chosen = names.fresh(func, ty.clone(), "sel");
            moved.push(Inst { result: Some(chosen), op: Op::Select { ty, cond: cond.clone(), if_true: then_args[i].clone(), if_false: else_args[i].clone() }, span });
            args[i] = Operand::Value(chosen);
        }
        let head = &mut func.blocks[h];
        head.insts.append(&mut moved);
        head.term = Terminator::Br(BlockCall { block: join, args });
        // The join had two edges from here (or through the arms); now one.
        preds[j] -= 1;
        changed = true;
    }
    changed
}

#[cfg(test)]
mod tests {
    use crate::mir;

    fn after(text: &str) -> String {
        let mut module = mir::parse(text).unwrap();
        let changed = super::run(&mut module.functions[0]);
        super::super::branches::run(&mut module.functions[0]);
        if let Err(errors) = mir::verify::verify(&module) {
            panic!("{errors:?}\n{module}");
        }
        format!("{changed} {module}")
    }

    #[test]
    fn a_diamond_of_casts_becomes_a_select() {
        let text = "kernel @k(%c: i32, %out: ptr<global>) {\nentry:\n  %s = stack_slot 4, align 4\n  %l = lds_slot 4, align 4\n  %z = icmp eq i32 %c, 0\n  brif %z, a, b\na:\n  %fa = addrspacecast ptr<private> %s to ptr\n  br j(%fa)\nb:\n  %fb = addrspacecast ptr<local> %l to ptr\n  br j(%fb)\nj(%p: ptr):\n  %v = ptrtoint ptr %p to i64\n  store i64 %v, %out\n  ret\n}\n";
        let out = after(text);
        assert!(out.starts_with("true"), "{out}");
        assert!(out.contains("select ptr %z"), "{out}");
        assert!(!out.contains("brif"), "{out}");
    }

    #[test]
    fn a_triangle_selects_and_unsafe_arms_stay() {
        let triangle = "kernel @k(%c: i32, %d: i32, %out: ptr<global>) {\nentry:\n  %z = icmp eq i32 %c, 0\n  brif %z, a, j(%d)\na:\n  %x = mul i32 %c, 3\n  br j(%x)\nj(%p: i32):\n  store i32 %p, %out\n  ret\n}\n";
        let out = after(triangle);
        assert!(out.starts_with("true") && out.contains("select i32 %z") && !out.contains("brif"), "{out}");
        // A division may be by zero where the branch was not taken; a load may
        // fault: both arms keep their branch.
        for unsafe_op in ["%x = udiv i32 %d, %c", "%x = load i32 %out"] {
            let text = triangle.replace("%x = mul i32 %c, 3", unsafe_op);
            let out = after(&text);
            assert!(out.starts_with("false") && out.contains("brif"), "{out}");
        }
    }
}
