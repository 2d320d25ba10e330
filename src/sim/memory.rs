//! Device memory: host-side buffers mapped at device addresses, with unmapped gaps
//! between them so that any out-of-bounds access is an error; and the per-work-group
//! LDS.

use std::fmt;

/// Address of the first allocation; allocations follow at 64 KiB-aligned
/// addresses with at least one unmapped 64 KiB page between two of them.
pub const HEAP_BASE: u64 = 0x0000_1000_0000_0000;
const GAP: u64 = 0x1_0000;

/// A mapped range.
#[derive(Clone, Debug)]
pub struct Region {
    pub name: String,
    pub base: u64,
    pub data: Vec<u8>,
    pub writable: bool,
}

/// Why a memory access failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MemFault {
    /// No mapping covers the address range.
    Unmapped { addr: u64, size: u64, near: Option<(String, u64, u64)> },
    /// A store to a read-only mapping.
    ReadOnly { addr: u64, region: String },
}

impl fmt::Display for MemFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MemFault::Unmapped { addr, size, near } => {
                write!(f, "out-of-bounds access of {size} bytes at {addr:#x}")?;
                if let Some((n, b, l)) = near {
                    write!(f, " (nearest mapping '{n}' is [{b:#x}, {:#x}))", b + l)?;
                }
                Ok(())
            }
            MemFault::ReadOnly { addr, region } => write!(f, "store to read-only '{region}' at {addr:#x}"),
        }
    }
}

/// Global (device) memory.
#[derive(Clone, Debug, Default)]
pub struct Device {
    regions: Vec<Region>,
    next: u64,
    last: usize,
}

impl Device {
    pub fn new() -> Device {
        Device { regions: Vec::new(), next: HEAP_BASE, last: 0 }
    }

    /// Maps `data` at a fresh address; returns the address.
    pub fn alloc(&mut self, name: &str, data: Vec<u8>) -> u64 {
        self.map_region(name, data, true)
    }

    /// Maps zero-filled memory of `size` bytes.
    pub fn alloc_zeroed(&mut self, name: &str, size: usize) -> u64 {
        self.alloc(name, vec![0; size])
    }

    /// Maps read-only memory (kernarg segment, dispatch packet, code).
    pub fn alloc_readonly(&mut self, name: &str, data: Vec<u8>) -> u64 {
        self.map_region(name, data, false)
    }

    fn map_region(&mut self, name: &str, data: Vec<u8>, writable: bool) -> u64 {
        let base = self.next;
        let len = (data.len() as u64).max(1);
        self.next = (base + len + GAP).div_ceil(GAP) * GAP + GAP;
        self.regions.push(Region { name: name.to_string(), base, data, writable });
        base
    }

    /// Maps `data` at a chosen address (must not overlap an existing mapping).
    pub fn map_at(&mut self, name: &str, base: u64, data: Vec<u8>, writable: bool) -> Result<(), String> {
        let end = base + data.len() as u64;
        if self.regions.iter().any(|r| base < r.base + r.data.len() as u64 && r.base < end) {
            return Err(format!("mapping '{name}' at {base:#x} overlaps another mapping"));
        }
        self.regions.push(Region { name: name.to_string(), base, data, writable });
        Ok(())
    }

    /// Removes the mapping that starts at `base`.
    pub fn free(&mut self, base: u64) -> Option<Region> {
        let i = self.regions.iter().position(|r| r.base == base)?;
        self.last = 0;
        Some(self.regions.remove(i))
    }

    /// The mapping that starts at `base`.
    pub fn region(&self, base: u64) -> Option<&Region> {
        self.regions.iter().find(|r| r.base == base)
    }

    /// Contents of the mapping that starts at `base`.
    pub fn bytes(&self, base: u64) -> Option<&[u8]> {
        self.region(base).map(|r| r.data.as_slice())
    }

    fn find(&mut self, addr: u64, size: u64) -> Result<usize, MemFault> {
        let hit = |r: &Region| addr >= r.base && addr.checked_add(size).is_some_and(|e| e <= r.base + r.data.len() as u64);
        if let Some(r) = self.regions.get(self.last) {
            if hit(r) {
                return Ok(self.last);
            }
        }
        match self.regions.iter().position(hit) {
            Some(i) => {
                self.last = i;
                Ok(i)
            }
            None => {
                let near = self
                    .regions
                    .iter()
                    .min_by_key(|r| if addr < r.base { r.base - addr } else { addr.saturating_sub(r.base + r.data.len() as u64) })
                    .map(|r| (r.name.clone(), r.base, r.data.len() as u64));
                Err(MemFault::Unmapped { addr, size, near })
            }
        }
    }

    /// Reads `out.len()` bytes at `addr`.
    pub fn read(&mut self, addr: u64, out: &mut [u8]) -> Result<(), MemFault> {
        let i = self.find(addr, out.len() as u64)?;
        let r = &self.regions[i];
        let o = (addr - r.base) as usize;
        out.copy_from_slice(&r.data[o..o + out.len()]);
        Ok(())
    }

    /// Writes `data` at `addr`.
    pub fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), MemFault> {
        let i = self.find(addr, data.len() as u64)?;
        let r = &mut self.regions[i];
        if !r.writable {
            return Err(MemFault::ReadOnly { addr, region: r.name.clone() });
        }
        let o = (addr - r.base) as usize;
        r.data[o..o + data.len()].copy_from_slice(data);
        Ok(())
    }

    pub fn read_u32(&mut self, addr: u64) -> Result<u32, MemFault> {
        let mut b = [0u8; 4];
        self.read(addr, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    pub fn read_u64(&mut self, addr: u64) -> Result<u64, MemFault> {
        let mut b = [0u8; 8];
        self.read(addr, &mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    pub fn write_u32(&mut self, addr: u64, v: u32) -> Result<(), MemFault> {
        self.write(addr, &v.to_le_bytes())
    }

    pub fn write_u64(&mut self, addr: u64, v: u64) -> Result<(), MemFault> {
        self.write(addr, &v.to_le_bytes())
    }
}

/// Bytes of a buffer-resource-swizzled private address: `offset` is the lane's
/// private byte offset; elements of 4 bytes are interleaved across `lanes` lanes,
/// as the hardware (and ROCm's scratch setup: element size 4, index stride = wave
/// size) does.
pub fn swizzle(offset: u64, lane: u32, lanes: u32) -> u64 {
    (offset / 4) * 4 * lanes as u64 + lane as u64 * 4 + offset % 4
}
