//! Device (global/constant) memory, and the per-work-group (LDS) and
//! per-work-item (private) memories with initialisation tracking.

use super::InterpError;

/// Start of the flat-address window onto the work-group's LDS: flat address
/// `LOCAL_APERTURE + offset` is local address `offset` (offsets are 32-bit).
pub const LOCAL_APERTURE: u64 = 0x0001_0000_0000_0000;
/// Start of the flat-address window onto the work-item's private memory.
pub const PRIVATE_APERTURE: u64 = 0x0002_0000_0000_0000;
/// Size of each aperture (32-bit offsets).
pub const APERTURE_SIZE: u64 = 1 << 32;
/// Lowest device address `Memory::alloc` hands out.
pub const GLOBAL_BASE: u64 = 0x1000;
/// Unmapped bytes left after every allocation (so small overruns are caught).
const GUARD: u64 = 256;

#[derive(Clone, Debug)]
struct Allocation {
    base: u64,
    data: Vec<u8>,
    /// The module's read-only data: a store into it is an error.
    read_only: bool,
}

/// Device memory (global and constant address spaces): host buffers mapped at
/// device addresses. Every byte outside an allocation is inaccessible.
#[derive(Clone, Debug, Default)]
pub struct Memory {
    allocations: Vec<Allocation>, // sorted by base
    next: u64,
}

impl Memory {
    pub fn new() -> Memory {
        Memory { allocations: Vec::new(), next: GLOBAL_BASE }
    }

    /// Copies `bytes` to a new allocation aligned to `align` (rounded up to a power
    /// of two; at least 256) and returns its device address (never 0). Allocations
    /// are separated by unmapped guard bytes.
    pub fn alloc(&mut self, bytes: &[u8], align: u64) -> u64 {
        self.alloc_with(bytes, align, false)
    }

    /// [`Memory::alloc`] of bytes no store may change (read-only module data).
    pub fn alloc_read_only(&mut self, bytes: &[u8], align: u64) -> u64 {
        self.alloc_with(bytes, align, true)
    }

    fn alloc_with(&mut self, bytes: &[u8], align: u64, read_only: bool) -> u64 {
        let align = align.max(GUARD).checked_next_power_of_two().unwrap_or(GUARD);
        let next = self.next.max(GLOBAL_BASE);
        let base = next.div_ceil(align) * align;
        self.next = base.saturating_add(bytes.len() as u64).saturating_add(GUARD);
        self.allocations.push(Allocation { base, data: bytes.to_vec(), read_only });
        base
    }

    /// A new zero-filled allocation of `len` bytes.
    pub fn alloc_zeroed(&mut self, len: usize, align: u64) -> u64 {
        self.alloc(&vec![0; len], align)
    }

    /// The allocations as (address, size), in address order.
    pub fn allocations(&self) -> Vec<(u64, usize)> {
        self.allocations.iter().map(|a| (a.base, a.data.len())).collect()
    }

    fn find(&self, addr: u64, len: usize) -> Result<(usize, usize), InterpError> {
        let i = self.allocations.partition_point(|a| a.base <= addr);
        if i > 0 {
            let a = &self.allocations[i - 1];
            let offset = addr - a.base;
            if offset.checked_add(len as u64).is_some_and(|end| end <= a.data.len() as u64) {
                return Ok((i - 1, offset as usize));
            }
        }
        let ranges: Vec<(u64, u64)> = self.allocations.iter().map(|a| (a.base, a.data.len() as u64)).collect();
        Err(InterpError::new(outside_message("global", addr, len, &ranges)))
    }

    /// The `len` bytes at `addr`; an error if any is outside an allocation.
    pub fn read(&self, addr: u64, len: usize) -> Result<&[u8], InterpError> {
        let (i, offset) = self.find(addr, len)?;
        Ok(&self.allocations[i].data[offset..offset + len])
    }

    /// Writes `bytes` at `addr` as the loader does, read-only data included
    /// (an address held in module data); nothing if outside every allocation.
    pub fn initialise(&mut self, addr: u64, bytes: &[u8]) {
        if let Ok((i, offset)) = self.find(addr, bytes.len()) {
            self.allocations[i].data[offset..offset + bytes.len()].copy_from_slice(bytes);
        }
    }

    /// Writes `bytes` at `addr`; an error if any byte is outside an allocation.
    pub fn write(&mut self, addr: u64, bytes: &[u8]) -> Result<(), InterpError> {
        let (i, offset) = self.find(addr, bytes.len())?;
        if self.allocations[i].read_only {
            return Err(InterpError::new(format!("store of {} bytes at address {addr:#x}, into read-only module data", bytes.len())));
        }
        self.allocations[i].data[offset..offset + bytes.len()].copy_from_slice(bytes);
        Ok(())
    }
}

/// "address 0x.. (N bytes) is outside every allocation; nearest ..."
fn outside_message(space: &str, addr: u64, len: usize, ranges: &[(u64, u64)]) -> String {
    let what = match space {
        "global" => "allocation",
        "local" => "lds_slot",
        _ => "stack_slot",
    };
    let mut msg = format!("{space} access of {len} byte{} at address {addr:#x} is outside every {what}", if len == 1 { "" } else { "s" });
    let distance = |&(base, size): &(u64, u64)| {
        if addr < base {
            base - addr
        } else {
            addr.saturating_sub(base + size)
        }
    };
    match ranges.iter().min_by_key(|r| distance(r)) {
        None => msg.push_str(&format!(" (there are no {what}s)")),
        Some(&(base, size)) => {
            let rel = if addr < base {
                format!("the access starts {} bytes before it", base - addr)
            } else if addr >= base + size {
                format!("the access starts {} bytes after its end", addr - (base + size))
            } else {
                format!(
                    "the access starts at offset {} and ends {} bytes past its end",
                    addr - base,
                    (addr - base).saturating_add(len as u64).saturating_sub(size)
                )
            };
            msg.push_str(&format!("; the nearest is [{base:#x}, {:#x}) ({size} bytes), {rel}", base + size));
        }
    }
    msg
}

/// Byte storage with per-byte initialisation tracking, split into slots
/// (an access must fall inside one slot).
#[derive(Clone, Debug, Default)]
pub(super) struct SlotMemory {
    /// (base, size, data, initialised)
    slots: Vec<Slot>,
}

#[derive(Clone, Debug)]
struct Slot {
    base: u32,
    data: Vec<u8>,
    init: Vec<bool>,
}

impl SlotMemory {
    pub fn new() -> SlotMemory {
        SlotMemory { slots: Vec::new() }
    }

    /// Number of slots (a mark for `truncate`).
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// End of the last slot (0 if none).
    pub fn top(&self) -> u64 {
        self.slots.last().map_or(0, |s| u64::from(s.base) + s.data.len() as u64)
    }

    /// Adds a slot at `base` (above every existing slot).
    pub fn push(&mut self, base: u32, size: u32) {
        self.slots.push(Slot { base, data: vec![0; size as usize], init: vec![false; size as usize] });
    }

    /// Frees the slots above the mark.
    pub fn truncate(&mut self, mark: usize) {
        self.slots.truncate(mark);
    }

    fn find(&self, space: &str, addr: u32, len: usize) -> Result<(usize, usize), String> {
        let i = self.slots.partition_point(|s| s.base <= addr);
        if i > 0 {
            let s = &self.slots[i - 1];
            let offset = (addr - s.base) as usize;
            if offset + len <= s.data.len() {
                return Ok((i - 1, offset));
            }
        }
        let ranges: Vec<(u64, u64)> = self.slots.iter().map(|s| (u64::from(s.base), s.data.len() as u64)).collect();
        Err(outside_message(space, u64::from(addr), len, &ranges))
    }

    /// Whether every one of `len` bytes at `addr` was written (false too
    /// outside every slot: the read reports that).
    pub fn is_written(&self, space: &str, addr: u32, len: usize) -> bool {
        self.find(space, addr, len).is_ok_and(|(i, offset)| self.slots[i].init[offset..offset + len].iter().all(|&b| b))
    }

    /// Reads initialised bytes.
    pub fn read(&self, space: &str, addr: u32, out: &mut [u8]) -> Result<(), String> {
        let (i, offset) = self.find(space, addr, out.len())?;
        let s = &self.slots[i];
        if let Some(k) = s.init[offset..offset + out.len()].iter().position(|&b| !b) {
            return Err(format!(
                "{space} access of {} bytes at address {addr:#x} reads byte {:#x}, which was never written",
                out.len(),
                u64::from(addr) + k as u64
            ));
        }
        out.copy_from_slice(&s.data[offset..offset + out.len()]);
        Ok(())
    }

    pub fn write(&mut self, space: &str, addr: u32, bytes: &[u8]) -> Result<(), String> {
        let (i, offset) = self.find(space, addr, bytes.len())?;
        let s = &mut self.slots[i];
        s.data[offset..offset + bytes.len()].copy_from_slice(bytes);
        s.init[offset..offset + bytes.len()].fill(true);
        Ok(())
    }
}
