//! Every AMDGCN processor LLVM 22 writes code objects for, as `e_flags` names it.
//!
//! The reader must name any code object LLVM writes, not only the three targets
//! amdgpu-cg compiles for: `inspect` summarises it and the simulator says plainly
//! that it does not model the processor instead of refusing the file. The table
//! was measured, not copied: `llc-22 -mcpu=P -filetype=obj` for every processor
//! `llc-22 -mcpu=help` lists, `llvm-readelf-22 -h` for the flags (code object v5;
//! v6 for the generic targets). tests/codeobj_generic.rs repeats the measurement
//! for every row.

use amdgpu_isa::Gpu;

use super::target::{FeatureSetting, EF_AMDGPU_FEATURE_SRAMECC_V4, EF_AMDGPU_FEATURE_XNACK_V4, EF_AMDGPU_MACH};

/// `EF_AMDGPU_GENERIC_VERSION` (bits 31:24, code object v6): the version of a
/// generic target's definition; 0 for a specific processor.
pub const EF_AMDGPU_GENERIC_VERSION: u32 = 0xff00_0000;

/// How a processor's `COMPUTE_PGM_RSRC3` and register files are laid out: the
/// parts of a kernel descriptor whose meaning depends on the processor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// gfx6 to gfx8: no `COMPUTE_PGM_RSRC3`.
    Gcn,
    /// gfx9 before gfx90a: `COMPUTE_PGM_RSRC3` reserved.
    Gfx9,
    /// gfx90a, gfx94x, gfx950 (CDNA2+): the unified VGPR/AGPR file, `accum_offset`.
    Cdna,
    /// gfx10 (RDNA1/2).
    Gfx10,
    /// gfx11 (RDNA3).
    Gfx11,
    /// gfx12 (RDNA4) and gfx125x.
    Gfx12,
}

/// One row of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Processor {
    /// As `-mcpu` and the ISA name spell it: `gfx90a`, `gfx11-generic`.
    pub name: &'static str,
    /// `EF_AMDGPU_MACH_*` (bits 7:0 of `e_flags`).
    pub mach: u32,
    pub family: Family,
    /// Has the xnack / sramecc target features (their `e_flags` bits are
    /// "unsupported" otherwise).
    pub xnack: bool,
    pub sramecc: bool,
    /// A generic target: code for it runs on every member processor.
    pub generic: bool,
    /// The processor amdgpu-cg compiles for and simulates that runs this code:
    /// the processor itself, or, for a generic target, the member we model.
    pub runs_as: Option<Gpu>,
}

const fn p(name: &'static str, mach: u32, family: Family, xnack: bool, sramecc: bool) -> Processor {
    Processor { name, mach, family, xnack, sramecc, generic: false, runs_as: None }
}

const fn generic(name: &'static str, mach: u32, family: Family, xnack: bool, sramecc: bool, runs_as: Option<Gpu>) -> Processor {
    Processor { name, mach, family, xnack, sramecc, generic: true, runs_as }
}

const fn ours(name: &'static str, mach: u32, family: Family, gpu: Gpu) -> Processor {
    Processor { name, mach, family, xnack: true, sramecc: true, generic: false, runs_as: Some(gpu) }
}

use Family::*;

/// The measured table (see the module comment), in `llc-22 -mcpu=help` order by family.
pub const PROCESSORS: &[Processor] = &[
    p("gfx600", 0x20, Gcn, false, false),
    p("gfx601", 0x21, Gcn, false, false),
    p("gfx602", 0x3a, Gcn, false, false),
    p("gfx700", 0x22, Gcn, false, false),
    p("gfx701", 0x23, Gcn, false, false),
    p("gfx702", 0x24, Gcn, false, false),
    p("gfx703", 0x25, Gcn, false, false),
    p("gfx704", 0x26, Gcn, false, false),
    p("gfx705", 0x3b, Gcn, false, false),
    p("gfx801", 0x28, Gcn, true, false),
    p("gfx802", 0x29, Gcn, false, false),
    p("gfx803", 0x2a, Gcn, false, false),
    p("gfx805", 0x3c, Gcn, false, false),
    p("gfx810", 0x2b, Gcn, true, false),
    p("gfx900", 0x2c, Gfx9, true, false),
    p("gfx902", 0x2d, Gfx9, true, false),
    p("gfx904", 0x2e, Gfx9, true, false),
    p("gfx906", 0x2f, Gfx9, true, true),
    p("gfx908", 0x30, Gfx9, true, true),
    p("gfx909", 0x31, Gfx9, true, false),
    ours("gfx90a", 0x3f, Cdna, Gpu::Gfx90a),
    p("gfx90c", 0x32, Gfx9, true, false),
    ours("gfx942", 0x4c, Cdna, Gpu::Gfx942),
    p("gfx950", 0x4f, Cdna, true, true),
    // gfx9-generic covers gfx900-gfx90c but not gfx90a: nothing we model.
    generic("gfx9-generic", 0x51, Gfx9, true, false, None),
    generic("gfx9-4-generic", 0x5f, Cdna, true, true, Some(Gpu::Gfx942)),
    p("gfx1010", 0x33, Gfx10, true, false),
    p("gfx1011", 0x34, Gfx10, true, false),
    p("gfx1012", 0x35, Gfx10, true, false),
    p("gfx1013", 0x42, Gfx10, true, false),
    p("gfx1030", 0x36, Gfx10, false, false),
    p("gfx1031", 0x37, Gfx10, false, false),
    p("gfx1032", 0x38, Gfx10, false, false),
    p("gfx1033", 0x39, Gfx10, false, false),
    p("gfx1034", 0x3e, Gfx10, false, false),
    p("gfx1035", 0x3d, Gfx10, false, false),
    p("gfx1036", 0x45, Gfx10, false, false),
    generic("gfx10-1-generic", 0x52, Gfx10, true, false, None),
    generic("gfx10-3-generic", 0x53, Gfx10, false, false, None),
    Processor { name: "gfx1100", mach: 0x41, family: Gfx11, xnack: false, sramecc: false, generic: false, runs_as: Some(Gpu::Gfx1100) },
    p("gfx1101", 0x46, Gfx11, false, false),
    p("gfx1102", 0x47, Gfx11, false, false),
    p("gfx1103", 0x44, Gfx11, false, false),
    p("gfx1150", 0x43, Gfx11, false, false),
    p("gfx1151", 0x4a, Gfx11, false, false),
    p("gfx1152", 0x55, Gfx11, false, false),
    p("gfx1153", 0x58, Gfx11, false, false),
    generic("gfx11-generic", 0x54, Gfx11, false, false, Some(Gpu::Gfx1100)),
    p("gfx1200", 0x48, Gfx12, false, false),
    p("gfx1201", 0x4e, Gfx12, false, false),
    generic("gfx12-generic", 0x59, Gfx12, false, false, None),
    p("gfx1250", 0x49, Gfx12, true, true),
    p("gfx1251", 0x5a, Gfx12, true, true),
];

impl Processor {
    /// The row for `EF_AMDGPU_MACH` value `mach`.
    pub fn from_mach(mach: u32) -> Option<&'static Processor> {
        PROCESSORS.iter().find(|p| p.mach == mach)
    }

    /// The row named `name` (`gfx1100`, `gfx11-generic`).
    pub fn from_name(name: &str) -> Option<&'static Processor> {
        PROCESSORS.iter().find(|p| p.name == name)
    }

    /// The row of a GPU amdgpu-cg compiles for.
    pub fn of_gpu(gpu: Gpu) -> &'static Processor {
        PROCESSORS
            .iter()
            .find(|p| !p.generic && p.runs_as == Some(gpu))
            .expect("every supported GPU has a row")
    }
}

/// What a code object's `e_flags` say: the processor, its generic version and
/// the feature settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjectProcessor {
    pub processor: &'static Processor,
    /// `EF_AMDGPU_GENERIC_VERSION`: 0 for a specific processor.
    pub generic_version: u8,
    pub xnack: FeatureSetting,
    pub sramecc: FeatureSetting,
}

impl ObjectProcessor {
    /// Decodes the code object v4+ `e_flags`; `None` names an unknown machine.
    pub fn from_e_flags(flags: u32) -> Option<ObjectProcessor> {
        let processor = Processor::from_mach(flags & EF_AMDGPU_MACH)?;
        Some(ObjectProcessor {
            processor,
            generic_version: ((flags & EF_AMDGPU_GENERIC_VERSION) >> 24) as u8,
            xnack: FeatureSetting::from_bits((flags & EF_AMDGPU_FEATURE_XNACK_V4) >> 8),
            sramecc: FeatureSetting::from_bits((flags & EF_AMDGPU_FEATURE_SRAMECC_V4) >> 10),
        })
    }

    /// The ISA name's processor part: `gfx9-4-generic:sramecc+:xnack-`.
    pub fn processor_with_features(&self) -> String {
        super::target::target_id(self.processor.name, self.sramecc, self.xnack)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_machine_numbers_are_unique() {
        for (i, a) in PROCESSORS.iter().enumerate() {
            for b in &PROCESSORS[i + 1..] {
                assert_ne!(a.name, b.name);
                assert_ne!(a.mach, b.mach, "{} and {}", a.name, b.name);
            }
        }
        for gpu in Gpu::ALL {
            assert_eq!(Processor::of_gpu(gpu).name, gpu.name());
        }
    }

    #[test]
    fn the_measured_generic_flags_decode() {
        // llvm-readelf-22 -h of llc-22's gfx11-generic / gfx9-4-generic objects.
        let p = ObjectProcessor::from_e_flags(0x100_0054).unwrap();
        assert_eq!((p.processor.name, p.generic_version), ("gfx11-generic", 1));
        assert_eq!(p.xnack, FeatureSetting::Unsupported);
        let p = ObjectProcessor::from_e_flags(0x100_055f).unwrap();
        assert_eq!((p.processor.name, p.generic_version), ("gfx9-4-generic", 1));
        assert_eq!((p.xnack, p.sramecc), (FeatureSetting::Any, FeatureSetting::Any));
        assert!(ObjectProcessor::from_e_flags(0x50).is_none());
    }
}
