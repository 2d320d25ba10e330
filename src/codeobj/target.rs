//! The code object's target: GPU, wave size and the xnack/sramecc settings that
//! go into `e_flags` and the ISA name (`amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-`).

use std::fmt;

use amdgpu_isa::{Gpu, Target, WaveSize};

use super::processor::{ObjectProcessor, Processor};
use super::CodeObjectError;

/// `EF_AMDGPU_MACH` mask (the values are in [`super::processor::PROCESSORS`]).
pub const EF_AMDGPU_MACH: u32 = 0xff;
/// `EF_AMDGPU_FEATURE_XNACK_V4` mask (bits 9:8).
pub const EF_AMDGPU_FEATURE_XNACK_V4: u32 = 0x300;
/// `EF_AMDGPU_FEATURE_SRAMECC_V4` mask (bits 11:10).
pub const EF_AMDGPU_FEATURE_SRAMECC_V4: u32 = 0xc00;

/// A target feature setting as the v4+ `e_flags` encode it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FeatureSetting {
    /// The GPU has no such feature (gfx1100 xnack/sramecc).
    Unsupported,
    /// Code works either way (omitted from the ISA name).
    Any,
    /// `:xnack-`
    Off,
    /// `:xnack+`
    On,
}

impl FeatureSetting {
    fn bits(self) -> u32 {
        match self {
            FeatureSetting::Unsupported => 0,
            FeatureSetting::Any => 1,
            FeatureSetting::Off => 2,
            FeatureSetting::On => 3,
        }
    }

    pub(crate) fn from_bits(b: u32) -> FeatureSetting {
        match b & 3 {
            0 => FeatureSetting::Unsupported,
            1 => FeatureSetting::Any,
            2 => FeatureSetting::Off,
            _ => FeatureSetting::On,
        }
    }

    /// "any", "on", "off", "unsupported".
    pub fn describe(self) -> &'static str {
        match self {
            FeatureSetting::Unsupported => "unsupported",
            FeatureSetting::Any => "any",
            FeatureSetting::Off => "off",
            FeatureSetting::On => "on",
        }
    }
}

/// GPU, wave size and feature settings of a code object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CodeObjectTarget {
    pub target: Target,
    pub xnack: FeatureSetting,
    pub sramecc: FeatureSetting,
}

fn has_xnack_sramecc(gpu: Gpu) -> bool {
    matches!(gpu, Gpu::Gfx90a | Gpu::Gfx942)
}

impl CodeObjectTarget {
    /// Every supported GPU in its default wave size, then gfx1100 in wave64:
    /// the configurations the tests compile for.
    pub fn all_configurations() -> Vec<CodeObjectTarget> {
        let mut all: Vec<CodeObjectTarget> = Gpu::ALL.iter().map(|&g| CodeObjectTarget::new(Target::new(g))).collect();
        all.push(CodeObjectTarget::new(Target::with_wave(Gpu::Gfx1100, WaveSize::W64).expect("gfx1100 has wave64")));
        all
    }

    /// The target with xnack and sramecc "any" where the GPU has them.
    pub fn new(target: Target) -> CodeObjectTarget {
        let f = if has_xnack_sramecc(target.gpu) {
            FeatureSetting::Any
        } else {
            FeatureSetting::Unsupported
        };
        CodeObjectTarget {
            target,
            xnack: f,
            sramecc: f,
        }
    }

    /// Parses `gfx90a`, `gfx90a:xnack-`, `gfx942:sramecc+:xnack-` (also with the
    /// `amdgcn-amd-amdhsa--` prefix). The wave size is the GPU's default unless given.
    pub fn parse(text: &str, wave: Option<WaveSize>) -> Result<CodeObjectTarget, CodeObjectError> {
        let bad = |msg: &str| CodeObjectError::InvalidTarget(text.to_string(), msg.to_string());
        let body = text.strip_prefix("amdgcn-amd-amdhsa--").unwrap_or(text);
        let mut parts = body.split(':');
        let name = parts.next().unwrap_or("");
        let gpu = Gpu::from_name(name)
            .ok_or_else(|| bad("unknown GPU (supported: gfx90a, gfx942, gfx1100)"))?;
        let target = match wave {
            Some(w) => {
                Target::with_wave(gpu, w).ok_or_else(|| bad("the GPU cannot run this wave size"))?
            }
            None => Target::new(gpu),
        };
        let mut t = CodeObjectTarget::new(target);
        let (mut seen_x, mut seen_s) = (false, false);
        for feature in parts {
            let (fname, setting) = if let Some(f) = feature.strip_suffix('+') {
                (f, FeatureSetting::On)
            } else if let Some(f) = feature.strip_suffix('-') {
                (f, FeatureSetting::Off)
            } else {
                return Err(bad(&format!("feature '{feature}' must end in '+' or '-'")));
            };
            if !has_xnack_sramecc(gpu) {
                return Err(bad(&format!("{gpu} has no '{fname}' setting")));
            }
            match fname {
                "xnack" if !seen_x => {
                    seen_x = true;
                    t.xnack = setting
                }
                "sramecc" if !seen_s => {
                    seen_s = true;
                    t.sramecc = setting
                }
                "xnack" | "sramecc" => return Err(bad(&format!("'{fname}' given twice"))),
                other => {
                    return Err(bad(&format!(
                        "unknown feature '{other}' (expected xnack or sramecc)"
                    )))
                }
            }
        }
        Ok(t)
    }

    /// A target id with amdgpu-cg's wave-size feature: `gfx1100:wavefrontsize64+`
    /// (or `-`) picks the wave size, the rest is [`CodeObjectTarget::parse`]'s.
    pub fn parse_with_wave(text: &str) -> Result<CodeObjectTarget, CodeObjectError> {
        let mut wave = None;
        let mut rest = Vec::new();
        for part in text.split(':') {
            let w = match part {
                "wavefrontsize64+" => WaveSize::W64,
                "wavefrontsize64-" => WaveSize::W32,
                other => {
                    rest.push(other);
                    continue;
                }
            };
            if wave.replace(w).is_some() {
                return Err(CodeObjectError::InvalidTarget(text.to_string(), "'wavefrontsize64' given twice".into()));
            }
        }
        CodeObjectTarget::parse(&rest.join(":"), wave)
    }

    /// The target id with the wave size when it is not the GPU's default, as
    /// [`CodeObjectTarget::parse_with_wave`] reads it: `gfx1100:wavefrontsize64+`.
    pub fn target_id_with_wave(&self) -> String {
        let mut s = self.processor_with_features();
        if self.target.wave != self.target.gpu.default_wave_size() {
            s += ":wavefrontsize64+";
        }
        s
    }

    /// `gfx90a:sramecc+:xnack-` ("any" settings are omitted, sramecc first).
    pub fn processor_with_features(&self) -> String {
        target_id(self.target.gpu.name(), self.sramecc, self.xnack)
    }

    /// The metadata's `amdhsa.target`: `amdgcn-amd-amdhsa--gfx90a:xnack-`.
    pub fn isa_name(&self) -> String {
        format!("amdgcn-amd-amdhsa--{}", self.processor_with_features())
    }

    /// `e_flags` (code object v4+ layout).
    pub fn e_flags(&self) -> u32 {
        Processor::of_gpu(self.target.gpu).mach | self.xnack.bits() << 8 | self.sramecc.bits() << 10
    }

    /// Decodes `e_flags` of a processor amdgpu-cg compiles for (generic targets
    /// and other processors are errors: [`ObjectProcessor`] names them); the wave
    /// size cannot be seen there, it is the GPU's default.
    pub fn from_e_flags(flags: u32) -> Result<CodeObjectTarget, CodeObjectError> {
        let not_ours = || {
            CodeObjectError::Read(format!(
                "e_flags 0x{flags:x}: machine 0x{:x} is not gfx90a, gfx942 or gfx1100",
                flags & EF_AMDGPU_MACH
            ))
        };
        let p = ObjectProcessor::from_e_flags(flags).ok_or_else(not_ours)?;
        match p.processor.runs_as {
            Some(gpu) if !p.processor.generic => Ok(CodeObjectTarget {
                target: Target::new(gpu),
                xnack: p.xnack,
                sramecc: p.sramecc,
            }),
            _ => Err(not_ours()),
        }
    }
}

/// A target id as LLVM spells it: the processor, then `:sramecc±` and
/// `:xnack±` where the setting is on or off ("any" and "unsupported" are
/// omitted).
pub fn target_id(processor: &str, sramecc: FeatureSetting, xnack: FeatureSetting) -> String {
    let mut s = processor.to_string();
    for (name, setting) in [("sramecc", sramecc), ("xnack", xnack)] {
        match setting {
            FeatureSetting::On => s += &format!(":{name}+"),
            FeatureSetting::Off => s += &format!(":{name}-"),
            _ => {}
        }
    }
    s
}

impl fmt::Display for CodeObjectTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.processor_with_features())?;
        if self.target.wave != self.target.gpu.default_wave_size() {
            write!(f, " (wave{})", self.target.wave.lanes())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e_flags_match_the_measured_values() {
        // code-object.md §2, measured with llvm-readobj-22 -h.
        for (text, flags, isa) in [
            ("gfx90a", 0x53f, "amdgcn-amd-amdhsa--gfx90a"),
            ("gfx90a:xnack+", 0x73f, "amdgcn-amd-amdhsa--gfx90a:xnack+"),
            ("gfx90a:xnack-", 0x63f, "amdgcn-amd-amdhsa--gfx90a:xnack-"),
            (
                "gfx90a:xnack-:sramecc+",
                0xe3f,
                "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-",
            ),
            ("gfx942", 0x54c, "amdgcn-amd-amdhsa--gfx942"),
            (
                "gfx942:sramecc-:xnack+",
                0xb4c,
                "amdgcn-amd-amdhsa--gfx942:sramecc-:xnack+",
            ),
            ("gfx1100", 0x41, "amdgcn-amd-amdhsa--gfx1100"),
        ] {
            let t = CodeObjectTarget::parse(text, None).unwrap();
            assert_eq!(t.e_flags(), flags, "{text}");
            assert_eq!(t.isa_name(), isa);
            assert_eq!(CodeObjectTarget::from_e_flags(flags).unwrap(), t);
        }
        assert!(CodeObjectTarget::parse("gfx1100:xnack+", None).is_err());
        assert!(CodeObjectTarget::parse("gfx90a:xnack", None).is_err());
        assert!(CodeObjectTarget::parse("gfx90a:xnack+:xnack-", None).is_err());
        assert!(CodeObjectTarget::parse("gfx803", None).is_err());
        assert!(CodeObjectTarget::parse("gfx90a", Some(WaveSize::W32)).is_err());
    }
}
