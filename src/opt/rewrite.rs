//! What the MIR passes share for editing a function in place: a substitution
//! of values by operands (applied to every use in one sweep), fresh values,
//! the reverse postorder, and where each value is defined.

use crate::abi::Type;
use crate::mir::ir::{op_operands, op_operands_mut, terminator_operands, terminator_operands_mut, Block, Function, Inst, Op, Operand, Value, ValueInfo};
use hashbrown::{HashMap, HashSet};

/// Values replaced by other operands. A replacement may itself be replaced
/// later; `resolve` follows the chain. Few values are replaced and every
/// operand is looked up: a bit per value says which are (a long function's
/// bits stay in cache where a dense table of operands did not), and the
/// replacements are kept apart.
pub struct Subst {
    replaced: Vec<u64>,
    to: HashMap<u32, Operand>,
    any: bool,
}

impl Subst {
    pub fn new(func: &Function) -> Subst {
        Subst { replaced: vec![0; func.values.len().div_ceil(64)], to: HashMap::new(), any: false }
    }

    fn replacement(&self, v: Value) -> Option<&Operand> {
        let i = v.0 as usize;
        if self.replaced.get(i / 64).is_some_and(|word| word >> (i % 64) & 1 != 0) {
            self.to.get(&v.0)
        } else {
            None
        }
    }

    /// From now on, uses of `value` read `with`.
    pub fn set(&mut self, value: Value, with: Operand) {
        let i = value.0 as usize;
        if i / 64 >= self.replaced.len() {
            self.replaced.resize(i / 64 + 1, 0);
        }
        self.replaced[i / 64] |= 1 << (i % 64);
        self.to.insert(value.0, with);
        self.any = true;
    }

    /// The operand a use of `operand` reads after the substitution.
    pub fn resolve(&self, operand: &Operand) -> Operand {
        let mut cur = operand;
        while let Operand::Value(v) = cur {
            match self.replacement(*v) {
                Some(next) => cur = next,
                None => break,
            }
        }
        cur.clone()
    }

    /// Rewrites one operand in place; true when it changed.
    pub fn rewrite(&self, operand: &mut Operand) -> bool {
        let Operand::Value(v) = operand else { return false };
        if !self.any || self.replacement(*v).is_none() {
            return false;
        }
        let resolved = self.resolve(operand);
        if resolved != *operand {
            *operand = resolved;
            true
        } else {
            false
        }
    }

    /// Rewrites every use in the function (instructions and terminators).
    pub fn apply(&self, func: &mut Function) -> bool {
        if !self.any {
            return false;
        }
        let mut changed = false;
        for block in &mut func.blocks {
            changed |= self.apply_block(block);
        }
        changed
    }

    fn apply_block(&self, block: &mut Block) -> bool {
        let mut changed = false;
        for inst in &mut block.insts {
            for operand in op_operands_mut(&mut inst.op) {
                changed |= self.rewrite(operand);
            }
        }
        for operand in terminator_operands_mut(&mut block.term) {
            changed |= self.rewrite(operand);
        }
        changed
    }
}

/// Makes values with names unique in their function (`NAME.N`).
#[derive(Default)]
pub struct Names {
    taken: Option<HashSet<String>>,
}

impl Names {
    /// A new value of type `ty`, named after `hint`.
    pub fn fresh(&mut self, func: &mut Function, ty: Type, hint: &str) -> Value {
        let taken = self.taken.get_or_insert_with(|| func.values.iter().map(|v| v.name.clone()).collect());
        let mut n = func.values.len();
        let mut name = format!("{hint}.{n}");
        while taken.contains(&name) {
            n += 1;
            name = format!("{hint}.{n}");
        }
        taken.insert(name.clone());
        func.values.push(ValueInfo { name, ty });
        Value(func.values.len() as u32 - 1)
    }
}

/// The blocks reachable from the entry, in reverse postorder.
pub fn reverse_postorder(func: &Function) -> Vec<usize> {
    crate::mir::cfg::reverse_postorder(func.blocks.len(), |b, i| {
        func.blocks[b].term.successors().get(i).map(|s| s.0 as usize)
    })
}

/// Where a value is defined: an instruction (block, index) or a parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Def {
    Inst(u32, u32),
    Param,
}

/// The definition of every value (`None` for values no longer defined).
pub fn definitions(func: &Function) -> Vec<Option<Def>> {
    let mut defs = vec![None; func.values.len()];
    for p in &func.params {
        defs[p.value.0 as usize] = Some(Def::Param);
    }
    for (b, block) in func.blocks.iter().enumerate() {
        for p in &block.params {
            defs[p.0 as usize] = Some(Def::Param);
        }
        for (i, inst) in block.insts.iter().enumerate() {
            if let Some(r) = inst.result {
                defs[r.0 as usize] = Some(Def::Inst(b as u32, i as u32));
            }
        }
    }
    defs
}

/// The operation that defines an operand's value, if an instruction does.
pub fn defining_op<'a>(func: &'a Function, defs: &[Option<Def>], operand: &Operand) -> Option<&'a Op> {
    let Operand::Value(v) = operand else { return None };
    match defs.get(v.0 as usize).copied().flatten() {
        Some(Def::Inst(b, i)) => func.blocks.get(b as usize)?.insts.get(i as usize).map(|inst| &inst.op),
        _ => None,
    }
}

/// Removes the instructions marked in `removed` (per block, per instruction).
pub fn remove_marked(func: &mut Function, removed: &[Vec<bool>]) {
    for (block, gone) in func.blocks.iter_mut().zip(removed) {
        if gone.iter().any(|&g| g) {
            let mut index = 0;
            block.insts.retain(|_| {
                index += 1;
                !gone[index - 1]
            });
        }
    }
}

/// How many times each value is read (instructions and terminators).
pub fn use_counts(func: &Function) -> Vec<u32> {
    let mut uses = vec![0u32; func.values.len()];
    for block in &func.blocks {
        for operand in block.insts.iter().flat_map(|i| op_operands(&i.op)).chain(terminator_operands(&block.term)) {
            if let Operand::Value(v) = operand {
                uses[v.0 as usize] += 1;
            }
        }
    }
    uses
}

/// Rewrites instructions one at a time, block by block: `replace` gets the
/// function (to make and type new values), a list to append the new
/// instructions its replacement reads (they go right before it) and the
/// instruction, and returns the instruction's new operation, or None to keep
/// it. True if any instruction was replaced. A block is rebuilt from its
/// first change on; one without changes stays where it is.
pub fn replace_ops(func: &mut Function, mut replace: impl FnMut(&mut Function, &mut Vec<Inst>, &Inst) -> Option<Op>) -> bool {
    let mut changed = false;
    let mut inserted: Vec<Inst> = Vec::new();
    for b in 0..func.blocks.len() {
        let mut insts = std::mem::take(&mut func.blocks[b].insts);
        let mut first_change = None;
        for (i, inst) in insts.iter().enumerate() {
            let op = replace(func, &mut inserted, inst);
            if op.is_some() || !inserted.is_empty() {
                first_change = Some((i, op));
                break;
            }
        }
        if let Some((i, op)) = first_change {
            let rest = insts.split_off(i);
            let mut out = insts;
            out.reserve(rest.len() + inserted.len());
            let mut finish = |out: &mut Vec<Inst>, inserted: &mut Vec<Inst>, inst: Inst, op: Option<Op>| {
                out.append(inserted);
                match op {
                    Some(op) => {
                        out.push(Inst { result: inst.result, op, span: inst.span });
                        changed = true;
                    }
                    None => out.push(inst),
                }
            };
            let mut rest = rest.into_iter();
            let first = rest.next().expect("the changed instruction");
            finish(&mut out, &mut inserted, first, op);
            for inst in rest {
                let op = replace(func, &mut inserted, &inst);
                finish(&mut out, &mut inserted, inst, op);
            }
            insts = out;
        }
        func.blocks[b].insts = insts;
    }
    changed
}
