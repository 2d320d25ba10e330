//! Where the kernel descriptors and the data objects go, for both writers:
//! `.rodata` holds the descriptors, then the read-only data; writable data
//! goes to `.data`, or to `.bss` when all its bytes are zero (as llc-22 and
//! ld.lld-22 place OpenCL's program-scope `__global` variables, so a large
//! zeroed array costs no file bytes). Objects holding addresses (which the
//! loader writes) are never `.bss`, and read-only ones go to `.data.rel.ro`
//! (relro: written once at load time), as ld.lld-22 places them. Each
//! object sits at its alignment, in the order the code object lists it.

use amdgpu_abi::descriptor::{DESCRIPTOR_ALIGN, DESCRIPTOR_SIZE};

use super::{CodeObject, CodeObjectError, DataObject};

/// The section a data object lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Home {
    Rodata,
    RelRo,
    Data,
    Bss,
}

impl Home {
    pub(super) fn of(d: &DataObject) -> Home {
        match (d.writable, d.addrs.is_empty(), d.bytes.iter().all(|&b| b == 0)) {
            (false, true, _) => Home::Rodata,
            (false, false, _) => Home::RelRo,
            (true, true, true) => Home::Bss,
            (true, _, _) => Home::Data,
        }
    }
}

/// One section's extent.
#[derive(Clone, Copy, Debug)]
pub(super) struct Extent {
    pub len: u64,
    /// The largest alignment of what it holds (at least 1).
    pub align: u64,
    /// Whether the file has the section: something lives in it, even an
    /// empty object, whose symbol needs the section.
    pub present: bool,
}

impl Extent {
    fn empty() -> Extent {
        Extent { len: 0, align: 1, present: false }
    }

    /// Places `len` bytes at `align`; their offset.
    fn place(&mut self, len: u64, align: u64) -> u64 {
        let at = self.len.next_multiple_of(align);
        self.len = at + len;
        self.align = self.align.max(align);
        self.present = true;
        at
    }
}

pub(super) struct DataLayout {
    /// Each data object's section and offset in it.
    pub place: Vec<(Home, u64)>,
    pub rodata: Extent,
    pub relro: Extent,
    pub data: Extent,
    pub bss: Extent,
}

impl DataLayout {
    pub(super) fn new(co: &CodeObject, kernels: usize) -> DataLayout {
        let mut rodata = Extent::empty();
        if kernels > 0 {
            rodata.place((kernels * DESCRIPTOR_SIZE) as u64, DESCRIPTOR_ALIGN);
        }
        // The descriptors' 64-byte alignment holds the section even when
        // only data is in it (as llc-22's .rodata).
        rodata.align = DESCRIPTOR_ALIGN;
        let (mut relro, mut data, mut bss) = (Extent::empty(), Extent::empty(), Extent::empty());
        let place = co
            .data
            .iter()
            .map(|d| {
                let home = Home::of(d);
                let extent = match home {
                    Home::Rodata => &mut rodata,
                    Home::RelRo => &mut relro,
                    Home::Data => &mut data,
                    Home::Bss => &mut bss,
                };
                (home, extent.place(d.bytes.len() as u64, u64::from(d.align)))
            })
            .collect();
        DataLayout { place, rodata, relro, data, bss }
    }

    /// Whether the object has writable data (a read-write segment).
    pub(super) fn writable(&self) -> bool {
        self.data.present || self.bss.present
    }

    /// `.rodata`'s bytes: the kernels' descriptors, kernel k's entry offset
    /// `entry(k, function index)`, then the read-only data.
    pub(super) fn rodata_contents(&self, co: &CodeObject, kernels: &[usize], entry: impl Fn(usize, usize) -> i64) -> Result<Vec<u8>, CodeObjectError> {
        let mut bytes = Vec::with_capacity(self.rodata.len as usize);
        for (k, &i) in kernels.iter().enumerate() {
            let mut d = co.functions[i].kernel.as_ref().expect("a kernel").descriptor;
            d.kernel_code_entry_byte_offset = entry(k, i);
            bytes.extend_from_slice(&d.encode()?);
        }
        self.fill(co, Home::Rodata, &mut bytes);
        Ok(bytes)
    }

    /// The bytes of `.data` (`Home::Data`) or `.data.rel.ro` (`Home::RelRo`):
    /// zero where addresses go.
    pub(super) fn contents(&self, co: &CodeObject, home: Home) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(self.extent(home).len as usize);
        self.fill(co, home, &mut bytes);
        bytes
    }

    fn extent(&self, home: Home) -> Extent {
        match home {
            Home::Rodata => self.rodata,
            Home::RelRo => self.relro,
            Home::Data => self.data,
            Home::Bss => self.bss,
        }
    }

    /// Every address held in the data: (section, offset in the section,
    /// the object it points into, addend), in section order then offset.
    pub(super) fn addresses<'c>(&self, co: &'c CodeObject) -> Vec<(Home, u64, &'c str, u64)> {
        let mut all: Vec<(Home, u64, &str, u64)> = co
            .data
            .iter()
            .zip(&self.place)
            .flat_map(|(d, &(home, at))| d.addrs.iter().map(move |a| (home, at + a.offset, a.symbol.as_str(), a.addend)))
            .collect();
        all.sort_by_key(|&(home, at, _, _)| (home, at));
        all
    }

    fn fill(&self, co: &CodeObject, home: Home, bytes: &mut Vec<u8>) {
        for (d, &(h, at)) in co.data.iter().zip(&self.place) {
            if h == home {
                bytes.resize(at as usize, 0);
                bytes.extend_from_slice(&d.bytes);
            }
        }
        bytes.resize(self.extent(home).len as usize, 0);
    }
}
