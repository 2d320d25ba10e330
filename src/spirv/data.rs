//! Module-scope variables as the module's data, addressed with `data_addr`
//! as llc-22 places and addresses them: constant tables (OpenCL `__constant`
//! data, array initializers: a `UniformConstant` variable with an
//! initializer) read-only in `.rodata`, each table's bytes once instead of a
//! copy per work-item; program-scope `__global` variables (`CrossWorkgroup`,
//! zero without an initializer) writable, in `.data` or `.bss`.

use std::cell::RefCell;

use hashbrown::{HashMap, HashSet};

use rspirv::spirv::StorageClass;

use super::module::{Constant, Facts, SpvType};
use crate::mir::{Data, DataAddr};

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

    /// The data object of module-scope variable `id` (a constant table or
    /// a program-scope `__global` variable), made the first time.
    pub fn global(&self, facts: &Facts, id: u32) -> Result<String, String> {
        let name = || facts.name(id).unwrap_or("?").to_string();
        let g = facts.globals.get(&id).ok_or_else(|| format!("%{id} is not a module-scope variable"))?;
        if facts.imported.contains(&id) {
            return Err(format!("the program-scope variable '{}' is extern (Import linkage): it is defined in another module, and amdgpu-cg links none", name()));
        }
        let writable = match g.storage {
            StorageClass::CrossWorkgroup => true,
            StorageClass::UniformConstant if g.initializer.is_some() => false,
            other => return Err(format!("the address of '{}', a variable in the {other:?} storage class, held in module data", name())),
        };
        let align = facts.alignment.get(&id).map_or(1, |&a| u64::from(a));
        self.name_of(facts, id, g.pointee, g.initializer, align, writable)
    }

    /// The name of variable `id`'s data object (the variable's own name
    /// where free), laid out from its initializer (zeros without one) the
    /// first time. Addresses of variables in the initializer make their
    /// objects too (the name is taken first, so an object may hold its own
    /// address).
    fn name_of(&self, facts: &Facts, id: u32, pointee: u32, init: Option<u32>, align: u64, writable: bool) -> Result<String, String> {
        if let Some(name) = self.made.borrow().1.get(&id) {
            return Ok(name.clone());
        }
        let (size, natural) = facts.layout(pointee)?;
        if size > MAX_TABLE_BYTES {
            let what = if writable { "a program-scope variable" } else { "a constant table" };
            return Err(format!("{what} of {size} bytes (at most {MAX_TABLE_BYTES})"));
        }
        let (name, index) = {
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
            made.0.push(Data { name: name.clone(), align, bytes: Vec::new(), writable, addrs: Vec::new() });
            made.1.insert(id, name.clone());
            (name, made.0.len() - 1)
        };
        let mut bytes = vec![0u8; size as usize];
        let mut addrs = Vec::new();
        if let Some(init) = init {
            write_constant(self, facts, pointee, init, &mut bytes, &mut addrs, 0, 0)?;
        }
        addrs.sort_by_key(|a: &DataAddr| a.offset);
        let mut made = self.made.borrow_mut();
        made.0[index].bytes = bytes;
        made.0[index].addrs = addrs;
        Ok(name)
    }

    pub fn into_inner(self) -> Vec<Data> {
        self.made.into_inner().0
    }
}

/// Writes constant `c` of SPIR-V type `ty` into `out` at `offset`, in the
/// layout loads read it with (`Facts::layout`, little-endian); `out` starts
/// zeroed, so null parts are skipped. Addresses of variables go to `addrs`
/// (their bytes stay zero: the loader writes them).
#[allow(clippy::too_many_arguments)]
fn write_constant(tables: &Tables, facts: &Facts, ty: u32, c: u32, out: &mut [u8], addrs: &mut Vec<DataAddr>, offset: u64, depth: u32) -> Result<(), String> {
    if depth > 64 {
        return Err("a constant table nested more than 64 deep".into());
    }
    // A variable used as a constant is its address.
    let variable = facts.globals.contains_key(&c).then_some(Constant::Address { var: c, offset: 0 });
    let k = match &variable {
        Some(k) => k,
        None => &facts.constants.get(&c).ok_or_else(|| format!("an initializer %{c} that is not a constant"))?.1,
    };
    match (facts.ty(ty)?, k) {
        (SpvType::Pointer { .. }, Constant::Address { var, offset: addend }) => {
            let (size, _) = facts.layout(ty)?;
            if size != 8 || offset.checked_add(8).is_none_or(|e| e > out.len() as u64) {
                return Err("an address that does not fill a 64-bit pointer of its table".into());
            }
            let target = tables.global(facts, *var)?;
            let (target_size, _) = facts.layout(facts.globals[var].pointee)?;
            if *addend < 0 || *addend as u64 > target_size {
                return Err(format!("an address {addend} bytes from the start of '{}', outside its {target_size} bytes", facts.name(*var).unwrap_or("?")));
            }
            addrs.push(DataAddr { offset: offset as u32, target, addend: *addend as u64 });
            Ok(())
        }
        (_, Constant::Zero) => Ok(()),
        (SpvType::Array { elem, .. } | SpvType::Vector { elem, .. }, Constant::Composite(parts)) => {
            let stride = facts.stride(*elem)?;
            for (i, p) in parts.iter().enumerate() {
                write_constant(tables, facts, *elem, *p, out, addrs, offset + i as u64 * stride, depth + 1)?;
            }
            Ok(())
        }
        (SpvType::Struct { members, .. }, Constant::Composite(parts)) => {
            for (i, (m, p)) in members.iter().zip(parts).enumerate() {
                write_constant(tables, facts, *m, *p, out, addrs, offset + facts.member_offset(ty, i)?, depth + 1)?;
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
