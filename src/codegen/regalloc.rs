//! Register allocation: the only call into regalloc2 (docs/regalloc.md).
//!
//! The allocatable registers per class are chosen here. regalloc2 numbers its
//! registers per class; `expand::Placement` turns them into hardware registers
//! afterwards (dense per class, SGPR pairs and expansion temporaries above the
//! single SGPRs), so the limits below only bound how many values can be live.

use regalloc2 as ra;

use super::vcode::VCode;
use crate::isa::Target;
use crate::mir::Diagnostic;

/// Single SGPRs regalloc2 may use. Placement puts the pair units (at most 17,
/// 34 SGPRs) and 8 expansion temporaries above the singles and the pinned
/// inputs; at the very highest pressure that can pass s101, which the register
/// checker after expansion reports as an internal error rather than miscompile.
pub const ALLOCATABLE_SGPRS: usize = 56;

/// Number of VGPRs regalloc2 may use (its class limit).
pub const ALLOCATABLE_VGPRS: usize = 64;

/// Registers regalloc2 may use: the first `limits[c]` of each class's allowed list.
fn env(allowed: &[Vec<usize>; 3], limits: [usize; 3]) -> ra::MachineEnv {
    let mut sets = [ra::PRegSet::empty(), ra::PRegSet::empty(), ra::PRegSet::empty()];
    for (class_index, class) in [ra::RegClass::Int, ra::RegClass::Float, ra::RegClass::Vector].into_iter().enumerate() {
        for &n in allowed[class_index].iter().take(limits[class_index]) {
            sets[class_index].add(ra::PReg::new(n, class));
        }
    }
    ra::MachineEnv {
        preferred_regs_by_class: sets,
        non_preferred_regs_by_class: [ra::PRegSet::empty(), ra::PRegSet::empty(), ra::PRegSet::empty()],
        scratch_by_class: [None, None, None],
        fixed_stack_slots: Vec::new(),
    }
}

/// How many spill slots VGPR values were moved to or from.
fn vgpr_spill_slots(out: &ra::Output) -> usize {
    let mut slots: Vec<usize> = out
        .edits
        .iter()
        .filter_map(|(_, ra::Edit::Move { from, to })| {
            let slot = from.as_stack().or(to.as_stack())?;
            let reg = from.as_reg().or(to.as_reg())?;
            (reg.class() == ra::RegClass::Float).then_some(slot.index())
        })
        .collect();
    slots.sort_unstable();
    slots.dedup();
    slots.len()
}

/// The classes (Int, Float, Vector) whose values regalloc2 moved to spill slots.
pub fn spilled_classes(out: &ra::Output) -> [bool; 3] {
    let mut spilled = [false; 3];
    for (_, ra::Edit::Move { from, to }) in &out.edits {
        if from.as_stack().is_none() && to.as_stack().is_none() {
            continue;
        }
        if let Some(p) = from.as_reg().or(to.as_reg()) {
            spilled[match p.class() {
                ra::RegClass::Int => 0,
                ra::RegClass::Float => 1,
                ra::RegClass::Vector => 2,
            }] = true;
        }
    }
    spilled
}

/// The register class of each spill slot regalloc2 used (by slot index; a
/// pair unit's slot covers two indices, the second is None): from its moves
/// and from operands it left in a slot (`Any` constraints).
pub fn slot_classes(vcode: &VCode, out: &ra::Output) -> Vec<Option<ra::RegClass>> {
    let mut classes = vec![None; out.num_spillslots];
    // Every function asks (expand::spills_vgprs); most have no slots.
    if out.num_spillslots == 0 {
        return classes;
    }
    for (_, ra::Edit::Move { from, to }) in &out.edits {
        if let (Some(p), Some(slot)) = (from.as_reg().or(to.as_reg()), from.as_stack().or(to.as_stack())) {
            classes[slot.index()] = Some(p.class());
        }
    }
    for (index, m) in vcode.insts.iter().enumerate() {
        for (o, a) in m.ops.iter().zip(out.inst_allocs(ra::Inst::new(index))) {
            if let Some(slot) = a.as_stack() {
                classes[slot.index()] = Some(o.class());
            }
        }
    }
    classes
}

/// The VGPR each VGPR spill slot becomes, counted from the first VGPR above
/// the allocated ones (by slot index; None for other slots), and how many
/// VGPRs that takes.
///
/// regalloc2 shares a slot between values whose live ranges do not overlap,
/// but it tries only ten slots before it opens a new one; with a hundred
/// slots that wastes VGPRs. When its output lists where every value lives
/// (`VCode::debug_labels`), slots whose occupied ranges are apart, not even
/// touching (moves at one program point are parallel), share a VGPR: a
/// consistent renaming of the slots, as regalloc2's own sharing is.
pub fn slot_colors(vcode: &VCode, out: &ra::Output) -> (Vec<Option<u16>>, u16) {
    let classes = slot_classes(vcode, out);
    let vgpr_slots: Vec<usize> = (0..classes.len()).filter(|&s| classes[s] == Some(ra::RegClass::Float)).collect();
    if out.debug_locations.is_empty() || vgpr_slots.is_empty() {
        let mut colors = vec![None; classes.len()];
        for (k, &s) in vgpr_slots.iter().enumerate() {
            colors[s] = Some(k as u16);
        }
        return (colors, vgpr_slots.len() as u16);
    }
    // Occupied ranges per slot, as (from, to) program point indices.
    let mut ranges: Vec<Vec<(u32, u32)>> = vec![Vec::new(); classes.len()];
    for &(_, from, to, alloc) in &out.debug_locations {
        if let Some(slot) = alloc.as_stack() {
            ranges[slot.index()].push((from.to_index(), to.to_index()));
        }
    }
    // Moves into or out of a slot sit at range ends too; every slot in an
    // edit keeps the point of that edit.
    for &(point, ra::Edit::Move { from, to }) in &out.edits {
        for a in [from, to] {
            if let Some(slot) = a.as_stack() {
                ranges[slot.index()].push((point.to_index(), point.to_index()));
            }
        }
    }
    let mut order: Vec<usize> = vgpr_slots.clone();
    for r in &mut ranges {
        r.sort_unstable();
    }
    order.sort_by_key(|&s| ranges[s].first().map_or(0, |r| r.0));
    // Per color, its occupied ranges sorted by start, merged where they meet.
    let mut taken: Vec<Vec<(u32, u32)>> = Vec::new();
    let conflicts = |have: &[(u32, u32)], want: &[(u32, u32)]| {
        want.iter().any(|&(f, t)| {
            // The first range that ends at or after f; closed intervals.
            let i = have.partition_point(|&(_, end)| end < f);
            i < have.len() && have[i].0 <= t
        })
    };
    let mut colors = vec![None; classes.len()];
    for s in order {
        let color = match (0..taken.len()).find(|&c| !conflicts(&taken[c], &ranges[s])) {
            Some(c) => c,
            None => {
                taken.push(Vec::new());
                taken.len() - 1
            }
        };
        let merged = &mut taken[color];
        merged.extend_from_slice(&ranges[s]);
        merged.sort_unstable();
        let mut joined: Vec<(u32, u32)> = Vec::with_capacity(merged.len());
        for &(f, t) in merged.iter() {
            match joined.last_mut() {
                Some(last) if f <= last.1 => last.1 = last.1.max(t),
                _ => joined.push((f, t)),
            }
        }
        *merged = joined;
        colors[s] = Some(color as u16);
    }
    (colors, taken.len() as u16)
}

/// Runs regalloc2 on a function.
///
/// regalloc2 spreads live ranges over every register it may use (it starts its
/// search at varying registers), so the number of registers a function ends up
/// with is how many it was allowed, not how many it needed. Allocation therefore
/// starts with a few registers per class and doubles the limit of each class that
/// spilled, up to the class's full size; only then are spills accepted.
///
/// `pressure` (`vcode::pressure`) says where the search can start. A
/// function's VGPRs need, at every call, as many registers that the call
/// neither clobbers nor returns in as values live through it: a limit below
/// that spills for sure, so no run is made there. The most values of a
/// class live at once is where the SGPR classes start (half as high again
/// in large functions), and the VGPRs of a kernel without calls (an eighth
/// above in a large one), growing by half steps; in the other layouts the
/// VGPRs start at the first step of their growth that holds that many less
/// the most fixed-register operands of one instruction (values in a call's
/// argument registers need no register below the limit there).
pub fn allocate(
    vcode: &VCode,
    target: Target,
    func_name: &str,
    pressure: &super::vcode::Pressure,
) -> Result<ra::Output, Diagnostic> {
    let live = pressure.most;
    let live_vgprs = live[1];
    let _ = target;
    let options = ra::RegallocOptions { verbose_log: false, validate_ssa: cfg!(debug_assertions), algorithm: ra::Algorithm::Ion };
    // Input pairs and the scratch V# are never allocated as single SGPRs in
    // layouts that keep register numbers.
    let mut reserved: Vec<u16> = Vec::new();
    if vcode.layout != super::vcode::Layout::Dense {
        for &(_, first) in &vcode.pinned_pairs {
            reserved.extend([first, first + 1]);
        }
        if let Some(super::vcode::Scratch::Buffer { rsrc, wave_offset }) = vcode.scratch {
            reserved.extend(rsrc..rsrc + 4);
            reserved.push(wave_offset);
        }
    }
    let mut allowed = vcode.layout.allowed(&reserved);
    if vcode.layout == super::vcode::Layout::Callee {
        // v0-v31 less the windows first; v32 and up (which the prologue must
        // save) only when the growing limits reach them.
        allowed[1] = (0..usize::from(vcode.callee_vgprs())).chain(32..ALLOCATABLE_VGPRS).collect();
    }
    // An occupancy target or VGPR limit (`VCode::vgpr_budget`) leaves room
    // for the windows and a VGPR of spilled SGPRs' lanes above what
    // regalloc2 may use.
    if vcode.layout == super::vcode::Layout::Dense && vcode.vgpr_budget.0 != 0 {
        let cap = usize::from(vcode.vgpr_budget.0).saturating_sub(2 * usize::from(vcode.windows_needed()) + 2).max(8);
        allowed[1].truncate(cap);
    }
    let mut max = [allowed[0].len(), allowed[1].len(), allowed[2].len()];
    // A device function that calls LLVM functions keeps nothing in registers
    // across those calls whatever it is given: v32 and up would only add saves.
    if vcode.layout == super::vcode::Layout::Callee && vcode.insts.iter().any(|m| matches!(m.kind, super::vcode::MKind::Call { llvm: true, .. })) {
        max[1] = usize::from(vcode.callee_vgprs());
    }
    // The SGPR classes start at the most values of theirs live at once
    // (at least 8 singles and 4 pairs): fewer spill for sure, and each
    // run saved is a whole regalloc2 run (stress ifchain-10000: three runs
    // of about 100 ms each, the pair class growing 4, 8, 16). More SGPRs
    // cost nothing but SGPRs, far from limiting occupancy here.
    // A large function starts them half as high again: at the bound they
    // spilled on the stress shapes (loops-4000, ifchain-3000), and a run
    // there costs more than the SGPRs saved are worth.
    let large = vcode.insts.len() > NARROW_VGPRS_UP_TO;
    let sgpr_start = |c: usize, least: usize| {
        let live = live[c] as usize;
        (if large { live + live / 2 } else { live })
            .max(least)
            .min(max[c])
    };
    let mut limits = [sgpr_start(0, 8), 8.min(max[1]), sgpr_start(2, 4)];
    let grow = |c: usize, limit: usize| {
        // A device function's VGPRs above v31 cost a save and a restore
        // each: they are added four at a time.
        let low = usize::from(vcode.callee_vgprs());
        if c == 1 && vcode.layout == super::vcode::Layout::Callee && limit >= low {
            (limit + 4).min(max[c])
        } else if c == 1 && vcode.layout == super::vcode::Layout::Callee {
            (limit * 2).min(low)
        } else if c == 1 && vcode.layout == super::vcode::Layout::Dense {
            // Half steps (at least 2): regalloc2 spreads values over every
            // register it may use, so a doubled limit costs up to twice the
            // VGPRs a kernel needs.
            (limit + (limit / 2).max(2)).min(max[c])
        } else if c == 1 && limit >= 16 {
            (limit + limit / 2).next_multiple_of(8).min(max[c])
        } else {
            (limit * 2).min(max[c])
        }
    };
    // The shortest prefix of the VGPR order that holds, at every call,
    // the values live through it in registers the call neither clobbers nor
    // returns a result in.
    let calls_need = pressure
        .vgprs_across_clobbers
        .iter()
        .map(|&(inst, through)| {
            let mut clobbers = ra::Function::inst_clobbers(vcode, ra::Inst::new(inst));
            for o in &vcode.insts[inst].ops {
                if let (ra::OperandKind::Def, ra::OperandConstraint::FixedReg(r)) =
                    (o.kind(), o.constraint())
                {
                    clobbers.add(r);
                }
            }
            let mut kept = 0;
            allowed[1]
                .iter()
                .position(|&r| {
                    kept += usize::from(!clobbers.contains(ra::PReg::new(r, ra::RegClass::Float)));
                    kept >= through as usize
                })
                .map_or(max[1], |p| p + 1)
        })
        .max()
        .unwrap_or(0)
        .min(max[1]);
    if vcode.layout == super::vcode::Layout::Dense {
        // The most values live at once is a lower bound: fewer registers
        // spill for sure. A small kernel starts there (it often fits, and
        // bisection narrows the limit after a spill). A large one starts an
        // eighth above: at the bound itself every stress shape spilled, and
        // each run costs (the first run's saving on ifchain-1000 is a fifth
        // of the compilation), while the next half step lands far above what
        // it needs (ifchain-1000: 24 most live, 36 VGPRs after the retry, 27
        // from an eighth above in one run).
        let live = live_vgprs as usize;
        let start = if large { live + live.div_ceil(8) } else { live };
        limits[1] = start.max(calls_need).clamp(2, max[1]);
    } else {
        // Values in an instruction's fixed registers (a call's arguments
        // and results, a function's arguments) need no register below the
        // limit there: call_many on gfx1100 fits in 40 with 45 live, 32 of
        // them arguments. The bound is what is left without them.
        let fixed_most = vcode
            .insts
            .iter()
            .map(|m| {
                m.ops
                    .iter()
                    .filter(|o| {
                        o.class() == ra::RegClass::Float
                            && matches!(o.constraint(), ra::OperandConstraint::FixedReg(_))
                    })
                    .count()
            })
            .max()
            .unwrap_or(0);
        let bound = (live_vgprs as usize)
            .saturating_sub(fixed_most)
            .max(calls_need);
        while limits[1] < bound && grow(1, limits[1]) > limits[1] {
            limits[1] = grow(1, limits[1]);
        }
    }
    // Where spill slots are registers and more values are live than the
    // class holds, the run that keeps VGPR operands in slots is the one
    // that counts: it starts at the full class (smaller limits only make
    // regalloc2 split and spill, which costs time at such pressure: 10 ms
    // of 14 for the register tile kernel), and only the SGPR classes grow.
    let failed = |e: ra::RegAllocError| {
        let mut d = Diagnostic::new(format!("register allocation failed: {e:?}"), crate::mir::Span::NONE);
        d.context = Some(format!("in @{func_name}"));
        d
    };
    let run = |func: &VCode, limits: [usize; 3]| ra::run(func, &env(&allowed, limits), &options).map_err(failed);
    let slots_only = |vcode: &VCode| slot_operands(vcode, vcode.slot_home == super::vcode::SlotHome::Vgprs);
    let mut relaxed = None;
    // The highest VGPR limit a dense kernel's allocation spilled at.
    let mut vgpr_spilled_at: Option<usize> = None;
    if vcode.slot_home.in_registers() && live_vgprs as usize > max[1] {
        limits[1] = max[1];
        relaxed = Some(slots_only(vcode));
    }
    loop {
        let func = relaxed.as_ref().unwrap_or(vcode);
        // A limit below what one instruction's operands need at once is
        // refused outright (the VGPR start is the most values live, which
        // can be lower): widen and retry, as after a spill.
        let out = match ra::run(func, &env(&allowed, limits), &options) {
            Err(ra::RegAllocError::TooManyLiveRegs) if (0..3).any(|c| limits[c] < max[c]) => {
                let c = if limits[1] < max[1] { 1 } else { (0..3).find(|&c| limits[c] < max[c]).expect("a class below its size") };
                limits[c] = grow(c, limits[c]);
                continue;
            }
            other => other.map_err(failed)?,
        };
        let spilled = spilled_classes(&out);
        if spilled[1] && vcode.layout == super::vcode::Layout::Dense {
            vgpr_spilled_at = Some(limits[1]);
        }
        // A large function whose VGPR spills went to a slot or two, where
        // slots are registers, keeps them: another run costs as much as
        // this one, and a wider limit lets regalloc2 spread values over
        // every register it allows (stress ifchain-10000: 23 spilled into
        // one slot VGPR, 24 VGPRs and 11951 instructions in 91 ms of
        // allocation, against 34 VGPRs, 12064 instructions and 170 ms
        // after a second run at 34). Classes already at their size count
        // as done: their spills stay whatever the VGPR limit.
        let growing = [0, 1, 2].map(|c| spilled[c] && limits[c] < max[c]);
        if growing == [false, true, false] && vcode.slot_home.in_registers() && relaxed.is_none() && vcode.insts.len() > KEEP_FEW_SPILLS_FROM {
            let slots = vgpr_spill_slots(&out);
            if slots <= 2 && limits[1] + slots < grow(1, limits[1]) {
                return Ok(out);
            }
        }
        let mut widened = false;
        for c in 0..3 {
            if spilled[c] && limits[c] < max[c] {
                limits[c] = grow(c, limits[c]);
                widened = true;
            }
        }
        if !widened {
            if spilled[1] && vcode.slot_home.in_registers() && relaxed.is_none() {
                // Spill slots are VGPRs here, as good as registers: with the
                // VGPR operands of hardware instructions free to be in a slot,
                // regalloc2 leaves what does not fit in registers in its slot
                // for good, without a move at every use. Slots that may be
                // AGPRs or memory are reached by moves only (no VALU operand
                // is an AGPR).
                return run(&slots_only(vcode), limits);
            }
            // Bisection costs more runs: only small kernels, where each is
            // cheap (at 3,000 operations with 300 blocks three runs made the
            // whole compilation 1.7x slower).
            let small = vcode.insts.len() <= NARROW_VGPRS_UP_TO;
            if let (Some(failed), false, true) = (vgpr_spilled_at, spilled.iter().any(|&s| s), small) {
                let out_of_place = |o: &ra::Output| super::expand::tuples_out_of_place(vcode, o);
                return Ok(narrow_vgprs(out, failed, limits, &|limits| ra::run(vcode, &env(&allowed, limits), &options).ok(), &out_of_place));
            }
            return Ok(out);
        }
    }
}

/// The fewest machine instructions of a function whose VGPR spills into
/// one or two slots (registers) are kept instead of allocating again with
/// more VGPRs.
const KEEP_FEW_SPILLS_FROM: usize = 8000;

/// The most machine instructions of a kernel whose VGPR limit
/// [`narrow_vgprs`] narrows, and how many more allocation runs it makes.
/// One run between the limits halves the gap: on the 50-file benchmark 22
/// VGPRs fewer (12515 instructions against 12526); two runs 44 fewer with
/// more instructions (12523), at twice the cost (straight-1000 of the
/// stress bench +19% executed instructions in all, against +9%).
const NARROW_VGPRS_UP_TO: usize = 600;
const NARROW_RUNS: usize = 1;

/// A dense kernel's VGPR limit grows by half steps from the most values
/// live at once (regalloc2 spreads values over every register it may use,
/// so the limit it ends at is about the VGPRs the kernel uses): a limit
/// that spilled, `failed`, and one that did not, in `limits` with its
/// allocation `out`, leave a gap that bisection narrows ([`NARROW_RUNS`]
/// more runs: between 13 and 19, 16). The allocation at the lowest limit
/// that spills in no class and needs no more moves, and no more pair or
/// tuple operands out of place (copies into windows), than the one it
/// replaces wins: fewer VGPRs are not bought with instructions.
fn narrow_vgprs(mut out: ra::Output, mut failed: usize, mut limits: [usize; 3], run: &dyn Fn([usize; 3]) -> Option<ra::Output>, out_of_place: &dyn Fn(&ra::Output) -> usize) -> ra::Output {
    for _ in 0..NARROW_RUNS {
        if limits[1] <= failed + 1 {
            break;
        }
        let mid = (failed + limits[1]) / 2;
        let trial = [limits[0], mid, limits[2]];
        match run(trial) {
            Some(o) if !spilled_classes(&o).iter().any(|&s| s) && o.edits.len() <= out.edits.len() && out_of_place(&o) <= out_of_place(&out) => {
                out = o;
                limits = trial;
            }
            _ => failed = mid,
        }
    }
    out
}

/// The function labelled for `slot_colors` and, with `any`, every VGPR
/// operand of a hardware instruction or copy constrained to "anywhere" (a
/// register or a spill slot) instead of "a register", except operands tied to
/// a def (regalloc2 gives a reused input the def's register). Expansion reads
/// a VGPR slot like a register.
fn slot_operands(vcode: &VCode, any: bool) -> VCode {
    use super::vcode::{Class, MKind};
    let mut relaxed = vcode.clone();
    // Every VGPR value is labelled over the whole function: the output then
    // lists where each of its live ranges is (slot_colors).
    let end = ra::Inst::new(vcode.insts.len());
    relaxed.debug_labels = (0..vcode.vreg_classes.len())
        .filter(|&v| vcode.vreg_classes[v] == Class::Vgpr)
        .map(|v| (ra::VReg::new(v, ra::RegClass::Float), ra::Inst::new(0), end, v as u32))
        .collect();
    for m in relaxed.insts.iter_mut().filter(|_| any) {
        if !matches!(m.kind, MKind::Real { .. } | MKind::Seq(_) | MKind::Copy) {
            continue;
        }
        let reused: Vec<usize> = m.ops.iter().filter_map(|o| match o.constraint() {
            ra::OperandConstraint::Reuse(i) => Some(i),
            _ => None,
        }).collect();
        for (i, o) in m.ops.iter_mut().enumerate() {
            if o.constraint() == ra::OperandConstraint::Reg && o.class() == Class::Vgpr.ra() && !reused.contains(&i) {
                *o = ra::Operand::new(o.vreg(), ra::OperandConstraint::Any, o.kind(), o.pos());
            }
        }
    }
    relaxed
}
