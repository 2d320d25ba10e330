//! Module-scope variables as the module's data, addressed with `data_addr`
//! as llc-22 places and addresses them: constant tables (OpenCL `__constant`
//! data, array initializers: a `UniformConstant` variable with an
//! initializer) read-only in `.rodata`, each table's bytes once instead of a
//! copy per work-item; program-scope `__global` variables (`CrossWorkgroup`,
//! zero without an initializer) writable, in `.data` or `.bss`.

use std::cell::RefCell;

use hashbrown::{HashMap, HashSet};

use super::module::{Constant, Facts, SpvType};
use crate::mir::Data;

/// The module's data objects, made as the functions first use them: the
/// variable's id → its object's name.
pub struct Tables {
    made: RefCell<(Vec<Data>, HashMap<u32, String>)>,
    /// Names the objects may not take: the module's functions'.
    taken: HashSet<String>,
}

/// The largest table translated (the MIR parser's own bound).
const MAX_TABLE_BYTES: u64 = crate::mir::parse::MAX_DATA_BYTES;

impl Tables {
    /// No tables yet; `functions` are the names the tables may not take.
    pub fn new(functions: impl IntoIterator<Item = String>) -> Tables {
        Tables { made: RefCell::default(), taken: functions.into_iter().collect() }
    }

    /// The name of variable `id`'s data object (the variable's own name
    /// where free), laid out from its initializer (zeros without one) the
    /// first time.
    pub fn name_of(&self, facts: &Facts, id: u32, pointee: u32, init: Option<u32>, align: u64, writable: bool) -> Result<String, String> {
        if let Some(name) = self.made.borrow().1.get(&id) {
            return Ok(name.clone());
        }
        let (size, natural) = facts.layout(pointee)?;
        if size > MAX_TABLE_BYTES {
            let what = if writable { "a program-scope variable" } else { "a constant table" };
            return Err(format!("{what} of {size} bytes (at most {MAX_TABLE_BYTES})"));
        }
        let mut bytes = vec![0u8; size as usize];
        if let Some(init) = init {
            write_constant(facts, pointee, init, &mut bytes, 0, 0)?;
        }
        let mut made = self.made.borrow_mut();
        let base = super::function::sanitize(facts.name(id).unwrap_or("table"));
        let base = if base.is_empty() { "table".to_string() } else { base };
        let mut name = base.clone();
        let mut n = 1;
        while self.taken.contains(&name) || made.0.iter().any(|d| d.name == name) {
            name = format!("{base}.{n}");
            n += 1;
        }
        let align = align.max(natural).clamp(1, 4096).next_power_of_two() as u32;
        made.0.push(Data { name: name.clone(), align, bytes, writable });
        made.1.insert(id, name.clone());
        Ok(name)
    }

    pub fn into_inner(self) -> Vec<Data> {
        self.made.into_inner().0
    }
}

/// Writes constant `c` of SPIR-V type `ty` into `out` at `offset`, in the
/// layout loads read it with (`Facts::layout`, little-endian); `out` starts
/// zeroed, so null parts are skipped.
fn write_constant(facts: &Facts, ty: u32, c: u32, out: &mut [u8], offset: u64, depth: u32) -> Result<(), String> {
    if depth > 64 {
        return Err("a constant table nested more than 64 deep".into());
    }
    let (_, k) = facts.constants.get(&c).ok_or_else(|| format!("an initializer %{c} that is not a constant"))?;
    match (facts.ty(ty)?, k) {
        (_, Constant::Zero) => Ok(()),
        (SpvType::Array { elem, .. } | SpvType::Vector { elem, .. }, Constant::Composite(parts)) => {
            let stride = facts.stride(*elem)?;
            for (i, p) in parts.iter().enumerate() {
                write_constant(facts, *elem, *p, out, offset + i as u64 * stride, depth + 1)?;
            }
            Ok(())
        }
        (SpvType::Struct { members, .. }, Constant::Composite(parts)) => {
            for (i, (m, p)) in members.iter().zip(parts).enumerate() {
                write_constant(facts, *m, *p, out, offset + facts.member_offset(ty, i)?, depth + 1)?;
            }
            Ok(())
        }
        (SpvType::Int(_) | SpvType::Float(_) | SpvType::Pointer { .. }, Constant::Scalar(k)) => {
            let (size, _) = facts.layout(ty)?;
            let end = offset.checked_add(size).filter(|&e| e <= out.len() as u64 && size <= 8).ok_or("a constant outside its table")?;
            out[offset as usize..end as usize].copy_from_slice(&k.bits.to_le_bytes()[..size as usize]);
            Ok(())
        }
        (t, _) => Err(format!("a constant table holding {t:?}")),
    }
}
