//! Register allocation: the only call into regalloc2 (docs/regalloc.md).
//!
//! The allocatable registers per class are chosen here. regalloc2 numbers its
//! registers per class; `expand::Placement` turns them into hardware registers
//! afterwards (dense per class, SGPR pairs and expansion temporaries above the
//! single SGPRs), so the limits below only bound how many values can be live.

use regalloc2 as ra;

use super::vcode::{VCode, SGPR_PAIR_UNITS};
use crate::isa::Target;
use crate::mir::Diagnostic;

/// Single SGPRs regalloc2 may use: with 19 pair units (38 SGPRs) and 8
/// expansion temporaries above them, the total stays within s0..s101.
pub const ALLOCATABLE_SGPRS: usize = 56;

/// Number of VGPRs regalloc2 may use (its class limit).
pub const ALLOCATABLE_VGPRS: usize = 64;

fn env(target: Target) -> ra::MachineEnv {
    let _ = target;
    let mut int = ra::PRegSet::empty();
    for n in 0..ALLOCATABLE_SGPRS {
        int.add(ra::PReg::new(n, ra::RegClass::Int));
    }
    let mut float = ra::PRegSet::empty();
    for n in 0..ALLOCATABLE_VGPRS {
        float.add(ra::PReg::new(n, ra::RegClass::Float));
    }
    let mut vector = ra::PRegSet::empty();
    for n in 0..SGPR_PAIR_UNITS as usize {
        vector.add(ra::PReg::new(n, ra::RegClass::Vector));
    }
    ra::MachineEnv {
        preferred_regs_by_class: [int, float, vector],
        non_preferred_regs_by_class: [ra::PRegSet::empty(), ra::PRegSet::empty(), ra::PRegSet::empty()],
        scratch_by_class: [None, None, None],
        fixed_stack_slots: Vec::new(),
    }
}

/// Runs regalloc2 on a function.
pub fn allocate(vcode: &VCode, target: Target, func_name: &str) -> Result<ra::Output, Diagnostic> {
    let options = ra::RegallocOptions { verbose_log: false, validate_ssa: cfg!(debug_assertions), algorithm: ra::Algorithm::Ion };
    ra::run(vcode, &env(target), &options).map_err(|e| {
        let mut d = Diagnostic::new(format!("register allocation failed: {e:?}"), crate::mir::Span::NONE);
        d.context = Some(format!("in @{func_name}"));
        d
    })
}
