//! The GPUs we generate code for, and the properties of each that more than one
//! layer needs (ISA, ABI, code objects, simulator). Everything target-specific that
//! is not an encoding fact lives here, so that `match gpu` is not scattered.

use std::fmt;

/// A supported GPU (an LLVM "processor", `-mcpu`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Gpu {
    /// MI200 (CDNA2).
    Gfx90a,
    /// MI300 (CDNA3).
    Gfx942,
    /// RDNA3 (Navi31).
    Gfx1100,
}

/// Instruction-set generation: decides encodings and most hazard rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Generation {
    /// GCN/CDNA "gfx9" encodings (gfx90a, gfx942).
    Gfx9,
    /// RDNA3 "gfx11" encodings (gfx1100).
    Gfx11,
}

/// Number of lanes in a wave.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WaveSize {
    W32,
    W64,
}

impl WaveSize {
    /// Lanes per wave (32 or 64).
    pub fn lanes(self) -> u32 {
        match self {
            WaveSize::W32 => 32,
            WaveSize::W64 => 64,
        }
    }
}

impl Gpu {
    /// All supported GPUs, in a stable order (used by tests that loop over targets).
    pub const ALL: [Gpu; 3] = [Gpu::Gfx90a, Gpu::Gfx942, Gpu::Gfx1100];

    /// The LLVM processor name (`gfx90a`).
    pub fn name(self) -> &'static str {
        match self {
            Gpu::Gfx90a => "gfx90a",
            Gpu::Gfx942 => "gfx942",
            Gpu::Gfx1100 => "gfx1100",
        }
    }

    /// Parses an LLVM processor name; `None` for anything we do not support.
    pub fn from_name(name: &str) -> Option<Gpu> {
        Gpu::ALL.into_iter().find(|g| g.name() == name)
    }

    /// The instruction-set generation.
    pub fn generation(self) -> Generation {
        match self {
            Gpu::Gfx90a | Gpu::Gfx942 => Generation::Gfx9,
            Gpu::Gfx1100 => Generation::Gfx11,
        }
    }

    /// The wave size used when the user does not ask for one.
    pub fn default_wave_size(self) -> WaveSize {
        match self {
            Gpu::Gfx90a | Gpu::Gfx942 => WaveSize::W64,
            Gpu::Gfx1100 => WaveSize::W32,
        }
    }

    /// Wave sizes the hardware can run.
    pub fn supports_wave_size(self, wave: WaveSize) -> bool {
        match self {
            Gpu::Gfx90a | Gpu::Gfx942 => wave == WaveSize::W64,
            Gpu::Gfx1100 => true,
        }
    }

    /// Accumulation registers (AGPRs) exist, in a file unified with the VGPRs.
    pub fn has_agprs(self) -> bool {
        matches!(self, Gpu::Gfx90a | Gpu::Gfx942)
    }

    /// Scratch is addressed through architected flat scratch (no scratch V# in
    /// s[0:3] in the initial kernel state, no private segment wave offset SGPR).
    pub fn has_architected_flat_scratch(self) -> bool {
        matches!(self, Gpu::Gfx942 | Gpu::Gfx1100)
    }

    /// Register tuples of VGPRs (and AGPRs) must start at an even register.
    pub fn requires_even_vgpr_tuples(self) -> bool {
        matches!(self, Gpu::Gfx90a | Gpu::Gfx942)
    }
}

impl fmt::Display for Gpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A GPU together with the wave size code is generated for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Target {
    pub gpu: Gpu,
    pub wave: WaveSize,
}

impl Target {
    /// The GPU with its default wave size.
    pub fn new(gpu: Gpu) -> Target {
        Target { gpu, wave: gpu.default_wave_size() }
    }

    /// The GPU with an explicit wave size; `None` if the GPU cannot run it.
    pub fn with_wave(gpu: Gpu, wave: WaveSize) -> Option<Target> {
        gpu.supports_wave_size(wave).then_some(Target { gpu, wave })
    }
}
