//! After register allocation: fill in physical registers, expand pseudo-
//! instructions, and place regalloc2's moves.
//!
//! Moves regalloc2 inserts run with **all lanes enabled** in blocks where some
//! lanes may be off: a VGPR value's inactive lanes can hold another path's data
//! (the lanes of the other side of a divergent branch), and a move under a
//! partial EXEC would lose them. EXEC is parked in a reserved SGPR (pair) around
//! such moves.
//!
//! Register pairs for divergent 64-bit values exist only inside one expanded
//! instruction: the two halves are copied into a "window" pair above every
//! allocated VGPR, used there, and copied out.

use regalloc2 as ra;

use super::vcode::*;
use crate::isa::{self, Opcode, Target, WaveSize};
use crate::mir::Diagnostic;

/// The literal of a call's `s_add_u32`/`s_addc_u32` before the relocation fills
/// it in (any value that is not an inline constant keeps the literal's slot).
pub const CALL_LITERAL_PLACEHOLDER: u32 = 0x1010_1010;

/// A machine instruction, possibly a branch to a block (resolved at encoding).
#[derive(Clone, Debug)]
pub struct Emitted {
    pub inst: isa::Inst,
    /// For branches: the target block (index into the VCode blocks).
    pub target: Option<usize>,
    /// For the `s_getpc_b64` of a call or a data address: the symbol (the
    /// callee or the data object) whose address the next two instructions'
    /// literals receive through relocations.
    pub symbol: Option<String>,
    /// Call-frame information changes at this instruction (prologue, epilogue
    /// and SP moves around calls), turned into `.debug_frame` rows (cfi.rs).
    pub cfi: Vec<Cfi>,
}

/// A call-frame information change, before or after an instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Cfi {
    pub after: bool,
    pub event: CfiEvent,
}

/// What changes in where the caller's registers and the CFA are.
#[derive(Clone, Debug, PartialEq)]
pub enum CfiEvent {
    /// The caller's EXEC is held in this SGPR (an aligned pair in wave64), or
    /// in VCC (None), which has no DWARF register number.
    ExecIn(Option<u16>),
    /// EXEC holds the caller's value again.
    ExecRestored,
    /// The caller's `vgpr` (all lanes) is saved at this per-lane offset from the
    /// entry SP.
    VgprSaved { vgpr: u16, offset: u32 },
    /// The caller's `vgpr` is back in place.
    VgprRestored(u16),
    /// The return address is in lanes `lane` and `lane + 1` of `vgpr`.
    ReturnAddressInLanes { vgpr: u16, lane: u32 },
    /// The return address is back in s[30:31].
    ReturnAddressInSgprs,
    /// SP is this many SP units above its entry value (around a call).
    SpMoved(u32),
    /// Start of an epilogue: the body's rules are remembered ...
    RememberState,
    /// ... and hold again after its `s_setpc_b64`.
    RestoreState,
}

/// The dense VGPR renumbering of a kernel without calls, chosen so that the
/// two registers an instruction reads or writes as a 64-bit pair land on an
/// aligned pair (v2k, v2k+1) as often as possible: then the instruction uses
/// them in place instead of copying them through a window. The registers of
/// a multi-dword access (`Fill::Tuple`) are placed the same way, in a run
/// from an even register: then it is one instruction, not one per dword. Any renaming of
/// regalloc2's VGPRs is valid (they are interchangeable); the pairs the
/// operands ask for most are placed first, greedily, on the lowest free
/// aligned pair, and the other registers fill the remaining numbers from 0,
/// so the count stays that of the registers used (plus at most one hole
/// where a pair skipped an odd number). Pinned registers keep their numbers.
///
/// `shares_v0`: registers that hold nothing while the pinned input
/// register (the work-item IDs in v0) holds them; one of them may be
/// placed on v0 too.
fn paired_dense(vcode: &VCode, out: &ra::Output, used: &[bool; 64], pinned: &[bool; 64], shares_v0: &SharesV0) -> (Vec<u16>, u16) {
    // Wanted runs of registers: a pair's (low, high), a multi-dword access's
    // tuple (Fill::Tuple), by how often they are asked for.
    let mut weight: hashbrown::HashMap<Vec<usize>, u32> = hashbrown::HashMap::new();
    for run in tuple_runs(vcode, out) {
        let distinct = run.iter().enumerate().all(|(k, r)| !run[..k].contains(r));
        // A pinned register keeps its number: it can only be the low
        // half, of a pair on an even one.
        let pinnable = run.iter().skip(1).all(|&r| !pinned[r]) && (!pinned[run[0]] || (run[0] % 2 == 0 && run.len() == 2));
        if distinct && pinnable {
            *weight.entry(run).or_insert(0) += 1;
        }
    }
    let mut wanted: Vec<(Vec<usize>, u32)> = weight.into_iter().collect();
    // Heaviest first (a tuple counts once per register it keeps in place);
    // ties in register order, so the result is deterministic.
    wanted.sort_unstable_by(|a, b| (b.1 * b.0.len() as u32).cmp(&(a.1 * a.0.len() as u32)).then(a.0.cmp(&b.0)));
    let mut map = vec![u16::MAX; 64];
    let mut taken = [false; 64];
    for i in 0..64 {
        if pinned[i] {
            map[i] = i as u16;
            taken[i] = true;
        }
    }
    let mut v0_shared = false;
    for (run, _) in wanted {
        let (l, h) = (run[0], run[1]);
        if run.len() == 2 && pinned[l] && map[h] == u16::MAX && !taken[l + 1] {
            map[h] = l as u16 + 1;
            taken[l + 1] = true;
            continue;
        }
        if run.iter().any(|&r| map[r] != u16::MAX) {
            continue;
        }
        let n = run.len();
        let on_v0 = !v0_shared && shares_v0.may[l];
        if let Some(k) = (0..=64 - n).step_by(2).find(|&k| (k..k + n).all(|j| !taken[j] || (j == 0 && on_v0))) {
            for (j, &r) in run.iter().enumerate() {
                map[r] = (k + j) as u16;
                taken[k + j] = true;
            }
            v0_shared |= k == 0;
        }
    }
    // Otherwise v0 goes to what follows the IDs there first (what
    // regalloc2 put in their register after them, as it was before the
    // split, so the long-lived values keep the registers above).
    if !v0_shared {
        if let Some(r) = shares_v0.next.filter(|&r| used[r] && map[r] == u16::MAX) {
            map[r] = 0;
        }
    }
    let end = fill_lowest_free(used, &mut map, &mut taken);
    (map, end)
}

/// The dense renumbering of the SGPR pair units of a kernel without calls,
/// chosen so that the two pairs an `s_load_dwordx4` writes (`Fill::Tuple`
/// of two pair units) are units 2m and 2m + 1: from a 4-aligned base, one
/// SGPR quad, and the load stays one instruction. Pair units are
/// interchangeable, so any renaming is valid; wanted quads are placed first
/// (in register order), the other units fill the remaining numbers from 0.
/// Returns the map, one past the highest unit, and whether a quad was placed.
fn quad_dense(vcode: &VCode, out: &ra::Output, used: &[bool; 64]) -> (Vec<u16>, u16, bool) {
    let mut wanted: Vec<[usize; 2]> = Vec::new();
    for (index, m) in vcode.insts.iter().enumerate() {
        let MKind::Real { fills, .. } = &m.kind else { continue };
        let allocs = out.inst_allocs(ra::Inst::new(index));
        let unit = |i: u8| allocs[usize::from(i)].as_reg().filter(|p| p.class() == ra::RegClass::Vector).map(|p| p.hw_enc());
        for (_, fill) in fills {
            if let Fill::Tuple { regs, n: 2 } = *fill {
                if let (Some(a), Some(b)) = (unit(regs[0]), unit(regs[1])) {
                    if a != b && used[a] && used[b] {
                        wanted.push([a, b]);
                    }
                }
            }
        }
    }
    wanted.sort_unstable();
    let mut map = vec![u16::MAX; 64];
    let mut taken = [false; 64];
    let mut quads = false;
    for [a, b] in wanted {
        if map[a] != u16::MAX || map[b] != u16::MAX {
            continue;
        }
        if let Some(k) = (0..63).step_by(2).find(|&k| !taken[k] && !taken[k + 1]) {
            (map[a], map[b]) = (k as u16, k as u16 + 1);
            (taken[k], taken[k + 1]) = (true, true);
            quads = true;
        }
    }
    let end = fill_lowest_free(used, &mut map, &mut taken);
    (map, end, quads)
}

/// The index of a regalloc2 class in per-class tables (Int, Float, Vector).
fn class_index(class: ra::RegClass) -> usize {
    match class {
        ra::RegClass::Int => 0,
        ra::RegClass::Float => 1,
        ra::RegClass::Vector => 2,
    }
}

/// regalloc2's registers (by class: Int, Float, Vector) that some operand
/// is fixed to.
fn fixed_registers(vcode: &VCode) -> [[bool; 64]; 3] {
    let mut fixed = [[false; 64]; 3];
    for o in vcode.insts.iter().flat_map(|m| &m.ops) {
        if let ra::OperandConstraint::FixedReg(p) = o.constraint() {
            fixed[class_index(p.class())][p.hw_enc()] = true;
        }
    }
    fixed
}

/// The VGPR registers (regalloc2's) that may share v0 with the work-item
/// IDs' register: first named after its last mention, which lies in the
/// entry block (run first and once, so everything after that point in the
/// instruction order runs after the IDs are dead).
struct SharesV0 {
    may: [bool; 64],
    /// The one of them named first.
    next: Option<usize>,
}

fn shares_v0(vcode: &VCode, out: &ra::Output, pinned: &[bool; 64]) -> SharesV0 {
    let mut shares = SharesV0 { may: [false; 64], next: None };
    if (1..64).any(|r| pinned[r]) || !pinned[0] || !vcode.entry_runs_once() {
        return shares;
    }
    // Program order, finer than regalloc2's points: moves before an
    // instruction, its early operands, its late ones, moves after it.
    let mut first = [usize::MAX; 64];
    let mut last_input = 0usize;
    let mut mention = |a: &ra::Allocation, key: usize| {
        if let Some(p) = a.as_reg().filter(|p| p.class() == ra::RegClass::Float) {
            first[p.hw_enc()] = first[p.hw_enc()].min(key);
            if p.hw_enc() == 0 {
                last_input = last_input.max(key);
            }
        }
    };
    for (index, m) in vcode.insts.iter().enumerate() {
        for (op, a) in m.ops.iter().zip(out.inst_allocs(ra::Inst::new(index))) {
            mention(a, 4 * index + if op.pos() == ra::OperandPos::Early { 1 } else { 2 });
        }
    }
    for (point, ra::Edit::Move { from, to }) in &out.edits {
        let key = 4 * point.inst().index() + if point.pos() == ra::InstPosition::Before { 0 } else { 3 };
        mention(from, key);
        mention(to, key);
    }
    if last_input >= 4 * vcode.blocks[0].insts.end {
        return shares;
    }
    for r in 1..64 {
        shares.may[r] = first[r] != usize::MAX && first[r] > last_input;
    }
    shares.next = (1..64).filter(|&r| shares.may[r]).min_by_key(|&r| first[r]);
    shares
}

/// Gives every used register without a number (`map[i] == u16::MAX`) the
/// lowest number not `taken`, in register order; returns one past the
/// highest number taken.
fn fill_lowest_free(used: &[bool; 64], map: &mut [u16], taken: &mut [bool]) -> u16 {
    let mut next = 0;
    for i in 0..64 {
        if used[i] && map[i] == u16::MAX {
            while taken[next] {
                next += 1;
            }
            map[i] = next as u16;
            taken[next] = true;
        }
    }
    (0..taken.len()).rev().find(|&i| taken[i]).map_or(0, |i| i as u16 + 1)
}

/// What spill code the function has, as LLVM's metadata counts it: the
/// registers written by spill stores (SGPRs into VGPR lanes, VGPRs to
/// memory); and the VGPRs that hold spill slots (not spills: registers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpillCounts {
    pub sgprs: u32,
    pub vgprs: u32,
    pub slot_vgprs: u32,
}

/// A function after expansion: instructions per block in layout order.
#[derive(Clone, Debug)]
pub struct Expanded {
    /// Blocks in layout order: (VCode block index, name, instructions). Branch
    /// targets name VCode block indices.
    pub blocks: Vec<(usize, String, Vec<Emitted>)>,
    /// Where the pair windows start when only windows lie above the
    /// allocated VGPRs (kernels without spills): window_rename may move
    /// them down and recount `vgprs`.
    pub windows: Option<Windows>,
    /// The VGPRs below v32 that some call of the function passes a value in
    /// (bit n: vN; arguments and implicit inputs): what a callee may read
    /// of v0-v31.
    pub call_vgpr_reads: u32,
    /// VGPRs used (highest + 1), SGPRs used (highest + 1), VCC written.
    pub vgprs: u32,
    /// AGPRs used (highest + 1; spill slots beyond the VGPRs).
    pub agprs: u32,
    pub spills: SpillCounts,
    pub sgprs: u32,
    pub uses_vcc: bool,
    /// Bytes of scratch per work-item (VGPR spill slots).
    pub scratch_bytes: u32,
    /// Bytes per lane of the function's frame from its entry SP (incoming stack
    /// arguments, locals, spill slots; 16-byte aligned), 0 without scratch.
    pub frame_bytes: u32,
}

/// The pair windows of a kernel (with or without calls): VGPRs from `base` up are windows
/// only (the allocated values lie below).
#[derive(Clone, Copy, Debug)]
pub struct Windows {
    pub base: u16,
}

impl Expanded {
    /// Where a branch to each block (by VCode block index) really goes: past
    /// blocks that hold nothing but a jump (typically one splitting a
    /// critical edge, left empty by register allocation) and empty blocks,
    /// which fall through to the next in layout.
    pub fn branch_destinations(&self) -> Vec<usize> {
        let n = self.blocks.iter().map(|(b, _, _)| b + 1).max().unwrap_or(0);
        let mut forward: Vec<usize> = (0..n).collect();
        for (position, (b, _, insts)) in self.blocks.iter().enumerate() {
            match insts.as_slice() {
                [only] if only.inst.op == Opcode::s_branch => forward[*b] = only.target.expect("s_branch has a target"),
                [] => {
                    if let Some((next, _, _)) = self.blocks.get(position + 1) {
                        forward[*b] = *next;
                    }
                }
                _ => {}
            }
        }
        // Follow each chain (bounded: a cycle of jumps ends anywhere on it).
        (0..n)
            .map(|mut b| {
                for _ in 0..n {
                    if forward[b] == b {
                        break;
                    }
                    b = forward[b];
                }
                b
            })
            .collect()
    }
}

/// True if regalloc2 put a VGPR value in a spill slot (by a move, or by
/// leaving an operand there).
pub fn spills_vgprs(vcode: &VCode, out: &ra::Output) -> bool {
    super::regalloc::slot_classes(vcode, out).contains(&Some(ra::RegClass::Float))
}

/// How many VGPR spill slots can be VGPRs above the `allocated` VGPRs: what
/// the 256 a wave addresses leave after the pair windows and the VGPRs whose
/// lanes hold spilled SGPRs (counted as if every slot index took a lane, as
/// they do).
fn slot_vgpr_budget(vcode: &VCode, out: &ra::Output, allocated: u16) -> u16 {
    vgpr_file(vcode).0.saturating_sub(allocated + above_slots(vcode, out))
}

/// The VGPRs above the slot VGPRs: the windows (and the one that aligns
/// them) and, at most, the VGPRs whose lanes hold spilled SGPRs.
fn above_slots(vcode: &VCode, out: &ra::Output) -> u16 {
    1 + 2 * vcode.windows_needed() + (out.num_spillslots as u16 + 1).div_ceil(32)
}

/// The AGPRs spill slots may use above `vgprs` VGPRs: what the unified file
/// of gfx90a/gfx942 leaves within the budget (AGPRs start at the VGPRs
/// rounded up to 4), at most 256.
fn slot_agpr_budget(vcode: &VCode, vgprs: u16) -> u16 {
    if !vcode.has_agprs {
        return 0;
    }
    vgpr_file(vcode).1.saturating_sub(vgprs.div_ceil(4) * 4).min(isa::regs::NUM_VGPRS)
}

/// (VGPRs, VGPRs + AGPRs) the function may use.
fn vgpr_file(vcode: &VCode) -> (u16, u16) {
    match vcode.vgpr_budget {
        (0, 0) => (isa::regs::NUM_VGPRS, if vcode.has_agprs { 2 * isa::regs::NUM_VGPRS } else { isa::regs::NUM_VGPRS }),
        budget => budget,
    }
}

/// True if a kernel's VGPR spill slots fit where `VCode::slot_home` puts
/// them: the VGPRs above the allocated ones, and with `Spread` the 256 AGPRs
/// after those (gfx90a, gfx942) and scratch, when the kernel has it.
pub fn vgpr_slots_fit(vcode: &VCode, out: &ra::Output) -> bool {
    if vcode.layout != Layout::Dense || !vcode.slot_home.in_registers() {
        return false;
    }
    let mut used = [false; 64];
    for a in out.allocs.iter().copied().chain(out.edits.iter().flat_map(|(_, ra::Edit::Move { from, to })| [*from, *to])) {
        if let Some(p) = a.as_reg().filter(|p| p.class() == ra::RegClass::Float) {
            used[p.hw_enc()] = true;
        }
    }
    let slots = super::regalloc::slot_colors(vcode, out).1;
    let allocated = used.iter().filter(|u| **u).count() as u16 + 1;
    let budget = slot_vgpr_budget(vcode, out, allocated);
    let spread = vcode.slot_home == SlotHome::Spread;
    let vgprs = allocated + slots.min(budget) + above_slots(vcode, out);
    let agprs = if spread { slot_agpr_budget(vcode, vgprs) } else { 0 };
    slots <= budget + agprs || (spread && vcode.scratch.is_some())
}

/// A VGPR operand as (first VGPR number, count).
pub fn vgpr_span(op: &isa::Operand) -> Option<(u16, u16)> {
    match op {
        isa::Operand::Reg(r) if r.base.is_vgpr() => Some((r.base.index(), u16::from(r.size))),
        _ => None,
    }
}

/// The highest VGPR the code names, plus one (0 without any).
pub fn vgprs_named(blocks: &[(usize, String, Vec<Emitted>)]) -> u16 {
    blocks.iter().flat_map(|(_, _, c)| c).flat_map(|e| e.inst.defs.iter().chain(&e.inst.uses)).filter_map(vgpr_span).map(|(b, n)| b + n).max().unwrap_or(0)
}

/// Drops the instructions of a block whose `keep` entry is false (the
/// machine passes mark what they delete during a scan, then drop it once).
pub fn keep_marked(block: &mut Vec<Emitted>, keep: &[bool]) {
    let mut k = 0;
    block.retain(|_| {
        k += 1;
        keep[k - 1]
    });
}

/// The hardware registers an operand covers, as (first operand code, count).
pub fn reg_span(op: &isa::Operand) -> Option<(u16, u16)> {
    match op {
        isa::Operand::Reg(r) if r.base.is_scalar() || r.base.is_vgpr() || r.base.is_agpr() => Some((r.base.0, u16::from(r.size))),
        _ => None,
    }
}

/// True if two register spans share a register.
pub fn overlaps(a: (u16, u16), b: (u16, u16)) -> bool {
    a.0 < b.0 + b.1 && b.0 < a.0 + a.1
}

/// Where each allocated register ends up: regalloc2 spreads values over its
/// registers, so after allocation the registers of each class are renumbered
/// densely (a consistent renaming of interchangeable registers is always valid),
/// keeping registers with fixed constraints (kernel inputs) in place. SGPR pair
/// units go right above the single SGPRs, and the expansion temporaries above
/// those.
#[derive(Clone, Debug)]
pub struct Placement {
    vgpr: Vec<u16>,
    sgpr: Vec<u16>,
    pair: Vec<u16>,
    /// First of the 8 temporary SGPRs (mask temporaries, EXEC save).
    pub temps: u16,
    /// One past the highest placed VGPR / SGPR (before windows and temporaries).
    pub vgpr_end: u16,
    pub sgpr_end: u16,
    /// Per spill slot index: the register a VGPR spill slot is (right above
    /// the allocated VGPRs, then AGPRs; `VCode::slot_home`), if any.
    slot_reg: Vec<Option<isa::Reg>>,
    /// AGPRs the slots use.
    pub agprs: u16,
    /// VGPRs the slots use.
    pub slot_vgprs: u16,
    /// Per spill slot index: its 4-byte slot in scratch, for the VGPR slots
    /// that `SlotHome::Spread` leaves in memory; and how many there are.
    slot_memory: Vec<Option<u32>>,
    pub memory_slots: u32,
}

/// How many pair and multi-dword operands (`Fill::VPair`, `Fill::Tuple`)
/// the placement of `out` leaves out of place: not consecutive from an even
/// VGPR, so expansion copies them into a window (or a tuple) around their
/// instruction. Register allocation compares allocations by it.
pub fn tuples_out_of_place(vcode: &VCode, out: &ra::Output) -> usize {
    let place = Placement::new(vcode, out);
    tuple_runs(vcode, out)
        .filter(|run| {
            let regs: Vec<u16> = run.iter().map(|&p| place.vgpr[p]).collect();
            !(regs[0] % 2 == 0 && regs.iter().enumerate().all(|(k, &r)| r == regs[0] + k as u16))
        })
        .count()
}

/// The VGPR runs that pair and multi-dword operands (`Fill::VPair`,
/// `Fill::Tuple`) want consecutive, as regalloc2's registers (`hw_enc`),
/// one per operand, in instruction order.
fn tuple_runs<'a>(vcode: &'a VCode, out: &'a ra::Output) -> impl Iterator<Item = Vec<usize>> + 'a {
    vcode.insts.iter().enumerate().flat_map(move |(index, m)| {
        let fills: Vec<&(Slot, Fill)> = match &m.kind {
            MKind::Real { fills, .. } => fills.iter().collect(),
            MKind::Seq(parts) => parts.iter().flat_map(|(_, f)| f).collect(),
            _ => Vec::new(),
        };
        let allocs = if fills.is_empty() { &[][..] } else { out.inst_allocs(ra::Inst::new(index)) };
        let vgpr = move |i: u8| allocs[usize::from(i)].as_reg().filter(|p| p.class() == ra::RegClass::Float).map(|p| p.hw_enc());
        fills.into_iter().filter_map(move |(_, fill)| match *fill {
            Fill::VPair { lo, hi, .. } => vgpr(lo).zip(vgpr(hi)).map(|(l, h)| vec![l, h]),
            Fill::Tuple { regs, n } => regs[..usize::from(n)].iter().map(|&r| vgpr(r)).collect(),
            _ => None,
        })
    })
}

impl Placement {
    /// Registers keep their numbers (layouts with calls); pair units and the
    /// temporaries go where the layout puts them.
    fn identity(vcode: &VCode, out: &ra::Output) -> Placement {
        let (pairs, temps) = match vcode.layout {
            Layout::Callee => (Layout::CALLEE_PAIRS, Layout::CALLEE_TEMPS),
            _ => (Layout::CALLER_PAIRS, Layout::CALLER_TEMPS),
        };
        let mut pair: Vec<u16> = (0..64u16).map(|u| pairs + 2 * u).collect();
        let mut temps = temps;
        if vcode.layout == Layout::Caller {
            // A calling kernel's pair units and temporaries are packed right above
            // its highest single SGPR, never below s36 (s0-s31 are clobbered by
            // calls, s32-s34 are the stack pointer, wave offset and frame pointer).
            let mut singles_end = 36u16;
            let mut units = [false; 64];
            let regs = out.allocs.iter().copied().chain(out.edits.iter().flat_map(|(_, ra::Edit::Move { from, to })| [*from, *to]));
            for p in regs.filter_map(|a| a.as_reg()) {
                match p.class() {
                    ra::RegClass::Int => singles_end = singles_end.max(p.hw_enc() as u16 + 1),
                    ra::RegClass::Vector => units[p.hw_enc()] = true,
                    ra::RegClass::Float => {}
                }
            }
            let mut next = singles_end.div_ceil(2) * 2;
            for (u, _) in units.iter().enumerate().filter(|(_, used)| **used) {
                pair[u] = next;
                next += 2;
            }
            temps = next;
        }
        for &(unit, first) in &vcode.pinned_pairs {
            pair[unit as usize] = first;
        }
        let mut vgpr_end = 1u16;
        let mut sgpr_end = 0u16;
        let mut vgpr_used = [false; 64];
        let mut note = |a: ra::Allocation| {
            if let Some(p) = a.as_reg() {
                match p.class() {
                    ra::RegClass::Float => vgpr_used[p.hw_enc()] = true,
                    ra::RegClass::Int => sgpr_end = sgpr_end.max(p.hw_enc() as u16 + 1),
                    ra::RegClass::Vector => sgpr_end = sgpr_end.max(pair[p.hw_enc()] + 2),
                }
            }
        };
        out.allocs.iter().for_each(|a| note(*a));
        for (_, ra::Edit::Move { from, to }) in &out.edits {
            note(*from);
            note(*to);
        }
        // v0-v31 keep their numbers (a call clobbers them by number; arguments
        // are pinned there). Registers above, which only values live across
        // calls use, are interchangeable: they are packed from v32 up. A callee
        // allocates below v24 and uses at most four windows, so its windows (right above) stay below v32.
        let mut vgpr: Vec<u16> = (0..64).collect();
        // A device function that calls nothing may renumber the registers
        // below v32 that no argument or result is fixed to, as a kernel
        // without calls does: only the registers it writes are clobbered
        // for its callers (`vgprs_clobbered`), so fewer and lower is better
        // for them too, and its windows sit right above them.
        let leaf = !vcode.insts.iter().any(|m| matches!(m.kind, MKind::Call { .. }));
        if vcode.layout == Layout::Callee && leaf && !vcode.callee_windows_high {
            let mut pinned = fixed_registers(vcode)[1];
            let mut low = [false; 64];
            for i in 0..64 {
                low[i] = i < 32 && vgpr_used[i];
                // v32 and up are numbered below; they are no place for the
                // registers under v32.
                pinned[i] |= i >= 32;
            }
            let (map, _) = paired_dense(vcode, out, &low, &pinned, &SharesV0 { may: [false; 64], next: None });
            // A pair whose low half is above v31 would pull its high half
            // up there (paired_dense places a pinned low half's partner
            // right after it): then keep the numbers as they are.
            if (0..32).filter(|&i| low[i]).all(|i| map[i] < 32) {
                for i in (0..32).filter(|&i| low[i]) {
                    vgpr[i] = map[i];
                }
            }
        }
        let mut next = 32;
        for (i, _) in vgpr_used.iter().enumerate().filter(|(_, u)| **u) {
            if i >= 32 {
                vgpr[i] = next;
                next += 1;
            }
            vgpr_end = vgpr_end.max(vgpr[i] + 1);
        }
        Placement { vgpr, sgpr: (0..64).collect(), pair, temps, vgpr_end, sgpr_end: sgpr_end.max(temps + 8), slot_reg: Vec::new(), agprs: 0, slot_vgprs: 0, slot_memory: Vec::new(), memory_slots: 0 }
    }

    /// Computes the renumbering from every allocation the output mentions.
    pub fn new(vcode: &VCode, out: &ra::Output) -> Placement {
        if vcode.layout != Layout::Dense {
            return Placement::identity(vcode, out);
        }
        let mut used = [[false; 64]; 3];
        let mut note = |a: ra::Allocation| {
            if let Some(p) = a.as_reg() {
                used[class_index(p.class())][p.hw_enc()] = true;
            }
        };
        out.allocs.iter().for_each(|a| note(*a));
        for (_, ra::Edit::Move { from, to }) in &out.edits {
            note(*from);
            note(*to);
        }
        let mut pinned = {
            let mut fixed = fixed_registers(vcode);
            for (class, fixed) in fixed.iter_mut().enumerate() {
                (0..64).filter(|&r| fixed[r]).for_each(|r| used[class][r] = true);
            }
            fixed
        };
        // The work-item ids arrive in v0 even when nothing else uses it.
        pinned[1][0] = true;
        used[1][0] = true;
        // `reserved`: hardware numbers nothing may be renumbered onto (the SGPRs of
        // pinned input pairs, which regalloc2 sees in another class).
        let dense = |used: &[bool; 64], pinned: &[bool; 64], reserved: &[bool; 64]| -> (Vec<u16>, u16) {
            let mut map = vec![u16::MAX; 64];
            // Hardware numbers: 56 singles and the reserved inputs can pass 63.
            let mut taken = [false; 128];
            taken[..64].copy_from_slice(reserved);
            for i in 0..64 {
                if pinned[i] {
                    map[i] = i as u16;
                    taken[i] = true;
                }
            }
            let end = fill_lowest_free(used, &mut map, &mut taken);
            (map, end)
        };
        // Input pairs stay where the hardware put them; single SGPRs avoid them.
        let mut pair_sgprs = [false; 64];
        for &(_, first) in &vcode.pinned_pairs {
            pair_sgprs[first as usize] = true;
            pair_sgprs[first as usize + 1] = true;
        }
        // The scratch V# and wave offset stay where they arrived, for spill code.
        if let Some(Scratch::Buffer { rsrc, wave_offset }) = vcode.scratch {
            for r in rsrc..rsrc + 4 {
                pair_sgprs[r as usize] = true;
            }
            pair_sgprs[wave_offset as usize] = true;
        }
        let (sgpr, sgpr_singles_end) = dense(&used[0], &pinned[0], &pair_sgprs);
        let (vgpr, mut vgpr_end) = paired_dense(vcode, out, &used[1], &pinned[1], &shares_v0(vcode, out, &pinned[1]));
        // VGPR spill slots become the VGPRs right above the allocated ones.
        let (mut slot_reg, mut slot_memory) = (Vec::new(), Vec::new());
        let (mut agprs, mut slot_vgprs, mut memory_slots) = (0, 0, 0);
        if vcode.slot_home.in_registers() {
            // Slots by color: VGPRs first, then AGPRs, then memory.
            let (colors, count) = super::regalloc::slot_colors(vcode, out);
            let in_vgprs = count.min(slot_vgpr_budget(vcode, out, vgpr_end));
            // The slot VGPRs, the windows and the lanes' VGPRs come first.
            let vgprs_before_agprs = vgpr_end + in_vgprs + above_slots(vcode, out);
            let agpr_room = if vcode.slot_home == SlotHome::Spread { slot_agpr_budget(vcode, vgprs_before_agprs) } else { 0 };
            let in_agprs = (count - in_vgprs).min(agpr_room);
            slot_reg = colors
                .iter()
                .map(|c| match *c {
                    Some(c) if c < in_vgprs => Some(isa::Reg::v(vgpr_end + c, 1)),
                    Some(c) if c < in_vgprs + in_agprs => Some(isa::Reg::new(isa::PhysReg::agpr(c - in_vgprs), 1)),
                    _ => None,
                })
                .collect();
            slot_memory = colors.iter().map(|c| c.filter(|&c| c >= in_vgprs + in_agprs).map(|c| u32::from(c - in_vgprs - in_agprs))).collect();
            vgpr_end += in_vgprs;
            (agprs, slot_vgprs, memory_slots) = (in_agprs, in_vgprs, u32::from(count - in_vgprs - in_agprs));
        }
        let mut pair_used = used[2];
        for &(unit, _) in &vcode.pinned_pairs {
            pair_used[unit as usize] = false;
        }
        let (pair_units, pair_count, quads) = quad_dense(vcode, out, &pair_used);
        // A quad of two units (0, 1), (2, 3), ... is 4-aligned when the
        // units start on a multiple of 4.
        let pair_base = if quads { sgpr_singles_end.div_ceil(4) * 4 } else { sgpr_singles_end.div_ceil(2) * 2 };
        let mut pair: Vec<u16> = pair_units.iter().map(|&u| if u == u16::MAX { u } else { pair_base + 2 * u }).collect();
        for &(unit, first) in &vcode.pinned_pairs {
            pair[unit as usize] = first;
        }
        let sgpr_end = pair_base + 2 * pair_count;
        let temps = sgpr_end.div_ceil(2) * 2;
        Placement { vgpr, sgpr, pair, temps, vgpr_end, sgpr_end: sgpr_end.max(sgpr_singles_end), slot_reg, agprs, slot_vgprs, slot_memory, memory_slots }
    }

    /// The VGPR a spill slot is, if VGPR slots are registers.
    pub fn slot(&self, slot: ra::SpillSlot) -> Option<isa::Reg> {
        self.slot_reg.get(slot.index()).copied().flatten()
    }

    /// The scratch slot a spill slot is in `SlotHome::Spread`, if memory.
    pub fn slot_in_memory(&self, slot: ra::SpillSlot) -> Option<u32> {
        self.slot_memory.get(slot.index()).copied().flatten()
    }

    /// The hardware register of an allocation: a register, or a spill slot
    /// that is a VGPR.
    pub fn alloc(&self, a: ra::Allocation) -> Option<isa::Reg> {
        match (a.as_reg(), a.as_stack()) {
            (Some(p), _) => Some(self.reg(p)),
            (None, Some(slot)) => self.slot(slot),
            _ => None,
        }
    }

    /// The physical register for a regalloc2 register.
    pub fn reg(&self, p: ra::PReg) -> isa::Reg {
        match p.class() {
            ra::RegClass::Int => isa::Reg::s(self.sgpr[p.hw_enc()], 1),
            ra::RegClass::Vector => isa::Reg::s(self.pair[p.hw_enc()], 2),
            ra::RegClass::Float => isa::Reg::v(self.vgpr[p.hw_enc()], 1),
        }
    }
}

struct Ctx<'a> {
    vcode: &'a VCode,
    place: &'a Placement,
    out: &'a ra::Output,
    target: Target,
    window_base: u16,
    /// VGPR whose lanes hold spilled SGPRs (above the windows).
    spill_vgpr: u16,
    /// How spill code reaches scratch (the wave offset moved out of a callee's
    /// reach in a kernel that calls).
    scratch: Option<Scratch>,
    /// The SGPR frame offsets are relative to (SP in a function; none in a
    /// kernel on flat scratch; the wave offset in a kernel on buffer scratch).
    frame_base: Option<u16>,
    frame: FrameLayout,
    code: Vec<Emitted>,
    /// Call-frame changes that take effect before the next instruction pushed.
    cfi_before: Vec<CfiEvent>,
    /// Per window: the two registers whose values it holds right now (set by
    /// a copy in or out, forgotten when either side or EXEC is written, and
    /// at every block start), so a pair used twice in a row is copied once.
    window_holds: Vec<Option<WindowHolds>>,
    /// Where the code ends right after the last whole-wave section's EXEC
    /// restore in this block: a section that starts there reopens it instead
    /// of restoring EXEC and parking it again (`usize::MAX`: none).
    whole_wave_end: usize,
    /// Registers written by spill stores (SGPRs into lanes, VGPRs to memory).
    sgpr_spill_stores: u32,
    vgpr_spill_stores: u32,
}

/// What a pair window holds between instructions of a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WindowHolds {
    /// Copies of these two registers (low half, high half).
    Halves(isa::Reg, isa::Reg),
    /// The 64-bit address `base + sext(offset)` (a `Fill::Address`).
    Address { base: isa::Reg, offset: isa::Reg },
    /// The 64-bit sum `{lo, hi} + {add_lo, add_hi}` (a `Fill::Sum`).
    Sum { lo: isa::Reg, hi: isa::Reg, add_lo: isa::Reg, add_hi: isa::Reg },
}

impl WindowHolds {
    /// The registers whose values the window's contents were computed from.
    fn sources(&self) -> Vec<isa::Reg> {
        match *self {
            WindowHolds::Halves(lo, hi) | WindowHolds::Address { base: lo, offset: hi } => vec![lo, hi],
            WindowHolds::Sum { lo, hi, add_lo, add_hi } => vec![lo, hi, add_lo, add_hi],
        }
    }
}

/// The largest frame, in bytes per lane (the private memory a MIR invocation may
/// use, docs/mir-semantics.md); keeps every SP computation within 32 bits.
pub const MAX_FRAME_BYTES: u32 = 256 * 1024;

/// Where a function's frame parts start, in bytes per lane from the entry SP.
#[derive(Clone, Debug)]
struct FrameLayout {
    locals_base: u32,
    spill_base: u32,
    /// Callee-saved VGPRs (v32 up) saved by the prologue, and where.
    saved_base: u32,
    saved_vgprs: Vec<u16>,
    /// A function that calls keeps its return address in these two lanes of the
    /// spill VGPRs (after the slots' lanes) from its prologue to its epilogue.
    return_address_lane: Option<u32>,
    /// Where the prologue parks EXEC (None: VCC).
    prologue_exec: Option<u16>,
    /// The end of the frame (16-byte aligned): the SP for calls.
    sp_end: u32,
}


impl Ctx<'_> {
    fn wave64(&self) -> bool {
        self.target.wave == WaveSize::W64
    }

    fn mask_size(&self) -> u8 {
        if self.wave64() {
            2
        } else {
            1
        }
    }

    fn exec(&self) -> isa::Reg {
        isa::Reg::exec(self.mask_size())
    }

    fn op_b(&self, b64: Opcode, b32: Opcode) -> Opcode {
        if self.wave64() {
            b64
        } else {
            b32
        }
    }

    fn push(&mut self, mut inst: isa::Inst) {
        // "The VOP3 form" of an instruction that is VOP3 by nature is itself.
        if inst.e64 && !inst.op.info().format(self.target.gpu).has_e64_form() {
            inst.e64 = false;
        }
        let cfi = std::mem::take(&mut self.cfi_before).into_iter().map(|event| Cfi { after: false, event }).collect();
        self.forget_windows_written_by(&inst);
        self.code.push(Emitted { inst, target: None, symbol: None, cfi });
    }

    /// Drops what the windows are known to hold where `inst` writes it (or
    /// writes EXEC, or calls, after which nothing is known).
    fn forget_windows_written_by(&mut self, inst: &isa::Inst) {
        if self.window_holds.iter().all(Option::is_none) {
            return;
        }
        let name = inst.op.info().name;
        let exec = (isa::PhysReg::EXEC.0, 2u16);
        let written: Vec<(u16, u16)> = inst.defs.iter().filter_map(|o| match o {
            isa::Operand::Reg(r) => Some((r.base.0, u16::from(r.size))),
            _ => None,
        }).collect();
        if name.starts_with("v_cmpx") || name.contains("saveexec") || matches!(inst.op, Opcode::s_swappc_b64 | Opcode::s_setpc_b64) || written.iter().any(|w| overlaps(*w, exec)) {
            self.window_holds.iter_mut().for_each(|h| *h = None);
            return;
        }
        let span = |r: isa::Reg| (r.base.0, u16::from(r.size));
        for (w, held) in self.window_holds.iter_mut().enumerate() {
            if let Some(h) = *held {
                let window = (isa::PhysReg::vgpr(self.window_base + 2 * w as u16).0, 2u16);
                if written.iter().any(|d| overlaps(*d, window) || h.sources().into_iter().any(|r| overlaps(*d, span(r)))) {
                    *held = None;
                }
            }
        }
    }

    fn window_held(&self, w: u8) -> Option<WindowHolds> {
        self.window_holds.get(usize::from(w)).copied().flatten()
    }

    fn set_window_held(&mut self, w: u8, regs: WindowHolds) {
        let w = usize::from(w);
        if self.window_holds.len() <= w {
            self.window_holds.resize(w + 1, None);
        }
        self.window_holds[w] = Some(regs);
    }

    /// A call-frame change after the last instruction pushed.
    fn cfi_after(&mut self, event: CfiEvent) {
        self.code.last_mut().expect("an instruction before its call-frame change").cfi.push(Cfi { after: true, event });
    }

    fn mov(&mut self, dst: isa::Reg, src: isa::Reg) {
        if dst == src {
            return;
        }
        let op = if dst.base.is_agpr() && src.base.is_agpr() {
            Opcode::v_accvgpr_mov_b32
        } else if dst.base.is_agpr() {
            Opcode::v_accvgpr_write_b32
        } else if src.base.is_agpr() {
            Opcode::v_accvgpr_read_b32
        } else if dst.base.is_vgpr() {
            Opcode::v_mov_b32
        } else if dst.size == 2 {
            Opcode::s_mov_b64
        } else {
            Opcode::s_mov_b32
        };
        self.push(isa::Inst::new(op, vec![isa::Operand::Reg(dst)], vec![isa::Operand::Reg(src)]));
    }

    /// A wave reduction or scan in whole-wave mode: every lane on, inactive
    /// lanes given the identity, then log2(wave size) steps that combine each
    /// lane with the lane `2^k` away (xor for a reduction, below for a scan)
    /// read by `ds_bpermute_b32` (on gfx11 in wave64 the other half through
    /// `v_permlane64_b32`, as ds_bpermute stays within a half there). A 64-bit
    /// value travels as two 32-bit pieces. The temporaries are windows 0-2
    /// (0-3 for 64 bits), which hold nothing live in any lane, so writing their
    /// inactive lanes is harmless; EXEC is restored at the end. `dst` and `x`
    /// are one register per piece.
    fn wave_scan(&mut self, op: crate::mir::WaveOp, ty: &crate::mir::Type, dst: &[isa::Reg], x: &[isa::Reg]) {
        use crate::mir::{BinOp, WaveOp};
        let (bop, scan, exclusive) = match op {
            WaveOp::Reduce(b) => (b, false, false),
            WaveOp::InclusiveScan(b) => (b, true, false),
            WaveOp::ExclusiveScan(b) => (b, true, true),
            other => unreachable!("not a reduction: {other:?}"),
        };
        let pieces = x.len() as u16;
        let lanes: u32 = if self.wave64() { 64 } else { 32 };
        let halves = self.wave64() && self.target.gpu.generation() == isa::Generation::Gfx11;
        let v = |n: u16| isa::Reg::v(n, 1);
        let base = self.window(0).base.index();
        // y and t: the lane's value and its partner's, a piece per register
        // (an even-aligned pair for 64 bits, as gfx90a's 64-bit operands need).
        let (y, t) = (isa::Reg::v(base, pieces as u8), isa::Reg::v(base + pieces, pieces as u8));
        let piece = |reg: isa::Reg, i: u16| v(reg.base.index() + i);
        let scratch = base + 2 * pieces;
        let (addr, lane, far, keep) = (v(scratch), v(scratch + 1), v(scratch + 2), v(scratch + 3));
        let r = isa::Operand::Reg;
        let imm = isa::Operand::imm32;
        let save = isa::Reg::s(self.place.temps, self.mask_size());
        let cond = isa::Reg::s(self.place.temps + 2, self.mask_size());
        let identity = WaveOp::identity(bop, ty);
        let identity_piece = |i: u16| (identity >> (32 * i)) as u32;
        let e64 = |mut i: isa::Inst| {
            i.e64 = true;
            i
        };
        let saveexec = self.op_b(Opcode::s_or_saveexec_b64, Opcode::s_or_saveexec_b32);
        self.push(isa::Inst::new(saveexec, vec![r(save)], vec![imm(u32::MAX)]));
        for i in 0..pieces {
            self.push(isa::Inst::new(Opcode::v_mov_b32, vec![r(piece(y, i))], vec![imm(identity_piece(i))]));
            self.push(e64(isa::Inst::new(Opcode::v_cndmask_b32, vec![r(piece(y, i))], vec![r(piece(y, i)), r(x[i as usize]), r(save)])));
        }
        if matches!(bop, BinOp::FMin | BinOp::FMax) {
            // minNum/maxNum ignore a NaN, IEEE-mode min/max only a quiet one.
            let quiet = if pieces == 2 { isa::Inst::new(Opcode::v_max_f64, vec![r(y)], vec![r(y), r(y)]) } else { e64(isa::Inst::new(Opcode::v_max_f32, vec![r(y)], vec![r(y), r(y)])) };
            self.push(quiet);
        }
        self.push(isa::Inst::new(Opcode::v_mbcnt_lo_u32_b32, vec![r(lane)], vec![imm(u32::MAX), imm(0)]));
        if self.wave64() {
            self.push(isa::Inst::new(Opcode::v_mbcnt_hi_u32_b32, vec![r(lane)], vec![imm(u32::MAX), r(lane)]));
        }
        // t = y of the lane whose index is in `addr`; on gfx11 wave64 a read
        // across the halves comes from the swapped copy (`cond`: it does).
        let read = |c: &mut Self| {
            if halves {
                c.push(isa::Inst::new(Opcode::v_xor_b32, vec![r(far)], vec![r(addr), r(lane)]));
                c.push(isa::Inst::new(Opcode::v_and_b32, vec![r(far)], vec![imm(32), r(far)]));
                c.push(e64(isa::Inst::new(Opcode::v_cmp_ne_u32, vec![r(cond)], vec![imm(0), r(far)])));
            }
            c.push(isa::Inst::new(Opcode::v_lshlrev_b32, vec![r(far)], vec![imm(2), r(addr)]));
            for i in 0..pieces {
                let (from, to) = (piece(y, i), piece(t, i));
                c.push(isa::Inst::new(Opcode::ds_bpermute_b32, vec![r(to)], vec![r(far), r(from)]));
                if halves {
                    c.push(isa::Inst::new(Opcode::v_permlane64_b32, vec![r(keep)], vec![r(from)]));
                    c.push(isa::Inst::new(Opcode::ds_bpermute_b32, vec![r(keep)], vec![r(far), r(keep)]));
                    c.push(e64(isa::Inst::new(Opcode::v_cndmask_b32, vec![r(to)], vec![r(to), r(keep), r(cond)])));
                }
            }
        };
        if exclusive {
            // Each lane takes its lower neighbour's value (the identity in
            // lane 0); the inclusive scan of that is the exclusive scan.
            self.push(isa::Inst::new(Opcode::v_subrev_u32, vec![r(addr)], vec![imm(1), r(lane)]));
            read(self);
            self.push(e64(isa::Inst::new(Opcode::v_cmp_eq_u32, vec![r(cond)], vec![imm(0), r(lane)])));
            for i in 0..pieces {
                self.push(isa::Inst::new(Opcode::v_mov_b32, vec![r(far)], vec![imm(identity_piece(i))]));
                self.push(e64(isa::Inst::new(Opcode::v_cndmask_b32, vec![r(piece(y, i))], vec![r(piece(t, i)), r(far), r(cond)])));
            }
        }
        let mut k = 1;
        while k < lanes {
            let step = if scan { Opcode::v_subrev_u32 } else { Opcode::v_xor_b32 };
            self.push(isa::Inst::new(step, vec![r(addr)], vec![imm(k), r(lane)]));
            read(self);
            self.combine(bop, pieces == 2, t, y, cond);
            for i in 0..pieces {
                if scan {
                    // Lanes below k have no lane k below them.
                    if i == 0 {
                        self.push(e64(isa::Inst::new(Opcode::v_cmp_le_u32, vec![r(cond)], vec![imm(k), r(lane)])));
                    }
                    self.push(e64(isa::Inst::new(Opcode::v_cndmask_b32, vec![r(piece(y, i))], vec![r(piece(y, i)), r(piece(t, i)), r(cond)])));
                } else {
                    self.push(isa::Inst::new(Opcode::v_mov_b32, vec![r(piece(y, i))], vec![r(piece(t, i))]));
                }
            }
            k *= 2;
        }
        for (i, &d) in dst.iter().enumerate() {
            let opcode = if scan { Opcode::v_mov_b32 } else { Opcode::v_readfirstlane_b32 };
            self.push(isa::Inst::new(opcode, vec![r(d)], vec![r(piece(y, i as u16))]));
        }
        let restore = self.op_b(Opcode::s_mov_b64, Opcode::s_mov_b32);
        self.push(isa::Inst::new(restore, vec![r(self.exec())], vec![r(save)]));
    }

    /// `t = t OP y` for a wave reduction's step, on one register or an
    /// even-aligned pair (`wide`); `cond` is free to hold a carry or a compare.
    fn combine(&mut self, op: crate::mir::BinOp, wide: bool, t: isa::Reg, y: isa::Reg, cond: isa::Reg) {
        use crate::mir::BinOp;
        let r = isa::Operand::Reg;
        let e64 = |mut i: isa::Inst| {
            i.e64 = true;
            i
        };
        let half = |reg: isa::Reg, h: u8| Self::half_of(reg, h);
        if !wide {
            let opcode = match op {
                BinOp::Add => Opcode::v_add_u32,
                BinOp::And => Opcode::v_and_b32,
                BinOp::Or => Opcode::v_or_b32,
                BinOp::Xor => Opcode::v_xor_b32,
                BinOp::SMin => Opcode::v_min_i32,
                BinOp::SMax => Opcode::v_max_i32,
                BinOp::UMin => Opcode::v_min_u32,
                BinOp::UMax => Opcode::v_max_u32,
                BinOp::FAdd => Opcode::v_add_f32,
                BinOp::FMin => Opcode::v_min_f32,
                BinOp::FMax => Opcode::v_max_f32,
                other => unreachable!("not a reduction: {other:?}"),
            };
            self.push(isa::Inst::new(opcode, vec![r(t)], vec![r(t), r(y)]));
            return;
        }
        match op {
            BinOp::Add => {
                self.push(e64(isa::Inst::new(Opcode::v_add_co_u32, vec![r(half(t, 0)), r(cond)], vec![r(half(t, 0)), r(half(y, 0))])));
                self.push(e64(isa::Inst::new(Opcode::v_addc_co_u32, vec![r(half(t, 1)), r(cond)], vec![r(half(t, 1)), r(half(y, 1)), r(cond)])));
            }
            BinOp::And | BinOp::Or | BinOp::Xor => {
                let opcode = match op {
                    BinOp::And => Opcode::v_and_b32,
                    BinOp::Or => Opcode::v_or_b32,
                    _ => Opcode::v_xor_b32,
                };
                for h in 0..2 {
                    self.push(isa::Inst::new(opcode, vec![r(half(t, h))], vec![r(half(t, h)), r(half(y, h))]));
                }
            }
            BinOp::SMin | BinOp::SMax | BinOp::UMin | BinOp::UMax => {
                // cond: t wins; then t = cond ? t : y, a half at a time.
                let compare = match op {
                    BinOp::SMin => Opcode::v_cmp_lt_i64,
                    BinOp::SMax => Opcode::v_cmp_gt_i64,
                    BinOp::UMin => Opcode::v_cmp_lt_u64,
                    _ => Opcode::v_cmp_gt_u64,
                };
                self.push(e64(isa::Inst::new(compare, vec![r(cond)], vec![r(t), r(y)])));
                for h in 0..2 {
                    self.push(e64(isa::Inst::new(Opcode::v_cndmask_b32, vec![r(half(t, h))], vec![r(half(y, h)), r(half(t, h)), r(cond)])));
                }
            }
            _ => {
                let opcode = match op {
                    BinOp::FAdd => Opcode::v_add_f64,
                    BinOp::FMin => Opcode::v_min_f64,
                    BinOp::FMax => Opcode::v_max_f64,
                    other => unreachable!("not a reduction: {other:?}"),
                };
                // VOP3 by nature (no e64 form to ask for).
                self.push(isa::Inst::new(opcode, vec![r(t)], vec![r(t), r(y)]));
            }
        }
    }

    fn window(&self, w: u8) -> isa::Reg {
        isa::Reg::v(self.window_base + 2 * u16::from(w), 2)
    }

    fn half_of(reg: isa::Reg, h: u8) -> isa::Reg {
        isa::Reg::new(isa::PhysReg(reg.base.0 + u16::from(h)), 1)
    }

    fn inst(&mut self, index: usize) -> Result<(), Diagnostic> {
        let m = &self.vcode.insts[index];
        let allocs: &[ra::Allocation] = self.out.inst_allocs(ra::Inst::new(index));
        let place = self.place;
        let reg = |i: u8| place.alloc(allocs[i as usize]).expect("every operand is in a register or a VGPR slot");
        match &m.kind {
            MKind::Real { inst, fills } => self.real(inst, fills, &reg),
            MKind::Seq(parts) => {
                for (inst, fills) in parts {
                    self.real(inst, fills, &reg);
                }
            }
            MKind::Copy => {
                let (d, s) = (reg(0), reg(1));
                self.mov(d, s);
            }
            MKind::ImplicitDef | MKind::Entry | MKind::Clobber(_) => {}
            MKind::WaveScan(op, ty) => {
                let pieces: u8 = if ty.bits() == 64 { 2 } else { 1 };
                let regs: Vec<isa::Reg> = (0..2 * pieces).map(reg).collect();
                let (dst, x) = regs.split_at(usize::from(pieces));
                self.wave_scan(*op, ty, dst, x);
            }
            MKind::MakePair => {
                let (p, lo, hi) = (reg(0), reg(1), reg(2));
                if lo.base.is_scalar() && lo.base.0 % 2 == 0 && hi.base.0 == lo.base.0 + 1 {
                    // The halves already form an aligned pair (a kernel's
                    // input pointer arriving as two SGPRs): one 64-bit move.
                    self.mov(p, isa::Reg::new(lo.base, 2));
                } else {
                    self.mov(Self::half_of(p, 0), lo);
                    self.mov(Self::half_of(p, 1), hi);
                }
            }
            MKind::LaneMerge { vector, masked, invert } => {
                let (d, acc, x) = (reg(0), reg(1), reg(2));
                debug_assert_eq!(d, acc, "the merge result reuses the accumulator's register");
                let _ = acc;
                if *vector {
                    if *masked {
                        let m = reg(3);
                        let (if_clear, if_set) = if *invert { (x, d) } else { (d, x) };
                        let mut i = isa::Inst::new(
                            Opcode::v_cndmask_b32,
                            vec![isa::Operand::Reg(d)],
                            vec![isa::Operand::Reg(if_clear), isa::Operand::Reg(if_set), isa::Operand::Reg(m)],
                        );
                        i.e64 = true;
                        self.push(i);
                    } else {
                        self.mov(d, x);
                    }
                } else {
                    // Lane masks merge bitwise: d = (d & ~sel) | (x & sel).
                    let size = self.mask_size();
                    let t0 = isa::Reg::s(self.place.temps, size);
                    let t1 = isa::Reg::s(self.place.temps + 2, size);
                    let sel = if *masked {
                        let m = reg(3);
                        let op = if *invert { self.op_b(Opcode::s_andn2_b64, Opcode::s_andn2_b32) } else { self.op_b(Opcode::s_and_b64, Opcode::s_and_b32) };
                        self.push(isa::Inst::new(op, vec![isa::Operand::Reg(t1)], vec![isa::Operand::Reg(self.exec()), isa::Operand::Reg(m)]));
                        t1
                    } else {
                        self.exec()
                    };
                    let (andn2, and, or) = (
                        self.op_b(Opcode::s_andn2_b64, Opcode::s_andn2_b32),
                        self.op_b(Opcode::s_and_b64, Opcode::s_and_b32),
                        self.op_b(Opcode::s_or_b64, Opcode::s_or_b32),
                    );
                    self.push(isa::Inst::new(andn2, vec![isa::Operand::Reg(t0)], vec![isa::Operand::Reg(d), isa::Operand::Reg(sel)]));
                    self.push(isa::Inst::new(and, vec![isa::Operand::Reg(d)], vec![isa::Operand::Reg(x), isa::Operand::Reg(sel)]));
                    self.push(isa::Inst::new(or, vec![isa::Operand::Reg(d)], vec![isa::Operand::Reg(d), isa::Operand::Reg(t0)]));
                }
            }
            MKind::MaskAdd { first, sel } => {
                let exec = isa::Operand::Reg(self.exec());
                let (mov, and, andn2, or) = (
                    self.op_b(Opcode::s_mov_b64, Opcode::s_mov_b32),
                    self.op_b(Opcode::s_and_b64, Opcode::s_and_b32),
                    self.op_b(Opcode::s_andn2_b64, Opcode::s_andn2_b32),
                    self.op_b(Opcode::s_or_b64, Opcode::s_or_b32),
                );
                let d = isa::Operand::Reg(reg(0));
                let c = || isa::Operand::Reg(reg(m.ops.len() as u8 - 1));
                // `first`: d = lanes. Otherwise d reuses the accumulator:
                // d |= lanes, the lanes through an expansion temporary.
                let tmp = isa::Operand::Reg(isa::Reg::s(self.place.temps, self.mask_size()));
                let lanes = |into: isa::Operand| match sel {
                    MaskSel::Exec => isa::Inst::new(mov, vec![into], vec![exec.clone()]),
                    MaskSel::And => isa::Inst::new(and, vec![into], vec![exec.clone(), c()]),
                    MaskSel::AndNot => isa::Inst::new(andn2, vec![into], vec![exec.clone(), c()]),
                };
                if *first {
                    self.push(lanes(d));
                } else if *sel == MaskSel::Exec {
                    self.push(isa::Inst::new(or, vec![d.clone()], vec![d, exec.clone()]));
                } else {
                    self.push(lanes(tmp.clone()));
                    self.push(isa::Inst::new(or, vec![d.clone()], vec![d, tmp]));
                }
            }
            MKind::Exec(op) => {
                let exec = isa::Operand::Reg(self.exec());
                let (mov, and, andn2) = (
                    self.op_b(Opcode::s_mov_b64, Opcode::s_mov_b32),
                    self.op_b(Opcode::s_and_b64, Opcode::s_and_b32),
                    self.op_b(Opcode::s_andn2_b64, Opcode::s_andn2_b32),
                );
                let r = |i: u8| isa::Operand::Reg(reg(i));
                let inst = match op {
                    ExecOp::Save => isa::Inst::new(mov, vec![r(0)], vec![exec]),
                    ExecOp::Set => isa::Inst::new(mov, vec![exec], vec![r(0)]),
                    ExecOp::And => isa::Inst::new(and, vec![exec], vec![r(0), r(1)]),
                    ExecOp::AndNot => isa::Inst::new(andn2, vec![exec], vec![r(0), r(1)]),
                    ExecOp::AndSelf => isa::Inst::new(and, vec![exec], vec![exec, r(0)]),
                    ExecOp::AndNotSelf => isa::Inst::new(andn2, vec![exec], vec![exec, r(0)]),
                    ExecOp::SaveAndSelf => isa::Inst::new(self.op_b(Opcode::s_and_saveexec_b64, Opcode::s_and_saveexec_b32), vec![r(0)], vec![r(1)]),
                };
                self.push(inst);
            }
            MKind::Call { callee, .. } => {
                // The callee's address into s[30:31] (relocated literals; not inline
                // constants, so that the slots exist), then the call, which leaves
                // the return address in s[30:31].
                let ra = isa::Reg::s(30, 2);
                let (lo, hi) = (isa::Reg::s(30, 1), isa::Reg::s(31, 1));
                let slot = isa::Operand::Literal(CALL_LITERAL_PLACEHOLDER);
                self.code.push(Emitted { inst: isa::Inst::new(Opcode::s_getpc_b64, vec![isa::Operand::Reg(ra)], vec![]), target: None, symbol: Some(callee.clone()), cfi: Vec::new() });
                self.push(isa::Inst::new(Opcode::s_add_u32, vec![isa::Operand::Reg(lo)], vec![isa::Operand::Reg(lo), slot]));
                self.push(isa::Inst::new(Opcode::s_addc_u32, vec![isa::Operand::Reg(hi)], vec![isa::Operand::Reg(hi), slot]));
                // A device function moves SP to the end of its frame for the
                // call (its outgoing arguments are there) and back after it.
                let bump = (self.vcode.layout == Layout::Callee).then(|| self.frame.sp_end * self.sp_scale());
                let sp = isa::Operand::Reg(isa::Reg::s(Layout::STACK_POINTER, 1));
                if let Some(b) = bump.filter(|b| *b > 0) {
                    self.push(isa::Inst::new(Opcode::s_add_u32, vec![sp], vec![sp, isa::Operand::imm32(b)]));
                    self.cfi_after(CfiEvent::SpMoved(b));
                }
                self.push(isa::Inst::new(Opcode::s_swappc_b64, vec![isa::Operand::Reg(ra)], vec![isa::Operand::Reg(ra)]));
                if let Some(b) = bump.filter(|b| *b > 0) {
                    self.push(isa::Inst::new(Opcode::s_sub_u32, vec![sp], vec![sp, isa::Operand::imm32(b)]));
                    self.cfi_after(CfiEvent::SpMoved(0));
                }
            }
            MKind::Private { store, width, at } => {
                let (ptr, offset) = match *at {
                    PrivateAt::Incoming(o) => (None, o),
                    PrivateAt::Local(o) => (None, self.frame.locals_base + o),
                    PrivateAt::Outgoing(o) => (None, self.frame.sp_end + o),
                    PrivateAt::Pointer(o) => (Some(reg(1)), o),
                };
                self.private_access(*store, *width, reg(0), ptr, offset, false, true)?;
            }
            MKind::LocalAddress(offset) => {
                // Private pointers are per-lane offsets from the start of private
                // memory (the V# base on buffer scratch, like LLVM's): the frame
                // base (SP in a function, the wave offset in a kernel) scaled to
                // lanes, plus the local's offset.
                let d = isa::Operand::Reg(reg(0));
                let at = isa::Operand::imm32(self.frame.locals_base + offset);
                let base = match (self.frame_base, self.scratch) {
                    (Some(sp), _) => Some(sp),
                    (None, Some(Scratch::Buffer { wave_offset, .. })) => Some(wave_offset),
                    _ => None,
                };
                match (base, self.sp_scale()) {
                    (Some(b), 1) => self.push(isa::Inst::new(Opcode::s_add_u32, vec![d], vec![isa::Operand::Reg(isa::Reg::s(b, 1)), at])),
                    (Some(b), scale) => {
                        let shift = scale.trailing_zeros();
                        self.push(isa::Inst::new(Opcode::s_lshr_b32, vec![d], vec![isa::Operand::Reg(isa::Reg::s(b, 1)), isa::Operand::imm32(shift)]));
                        self.push(isa::Inst::new(Opcode::s_add_u32, vec![d], vec![d, at]));
                    }
                    (None, _) => self.push(isa::Inst::new(Opcode::s_mov_b32, vec![d], vec![at])),
                }
            }
            MKind::SymbolAddress(symbol) => {
                // The address of the byte after s_getpc_b64, plus the
                // relocated distance to the symbol (the call sequence's).
                let p = reg(0);
                let (lo, hi) = (Self::half_of(p, 0), Self::half_of(p, 1));
                let slot = isa::Operand::Literal(CALL_LITERAL_PLACEHOLDER);
                self.code.push(Emitted { inst: isa::Inst::new(Opcode::s_getpc_b64, vec![isa::Operand::Reg(p)], vec![]), target: None, symbol: Some(symbol.clone()), cfi: Vec::new() });
                self.push(isa::Inst::new(Opcode::s_add_u32, vec![isa::Operand::Reg(lo)], vec![isa::Operand::Reg(lo), slot]));
                self.push(isa::Inst::new(Opcode::s_addc_u32, vec![isa::Operand::Reg(hi)], vec![isa::Operand::Reg(hi), slot]));
            }
            MKind::Branch(_) => unreachable!("branches are expanded with their block"),
        }
        Ok(())
    }

    /// A multi-dword global access whose tuple ([`Fill::Tuple`]) the
    /// allocation did not put in consecutive registers (from an even one
    /// where the target requires it): the dword accesses it stands for, at
    /// consecutive offsets, each with one register of the tuple. None when
    /// the tuple is in place (or there is none).
    fn split_tuple(&self, inst: &isa::Inst, fills: &[(Slot, Fill)], reg: &dyn Fn(u8) -> isa::Reg) -> Option<Vec<(isa::Inst, Vec<(Slot, Fill)>)>> {
        let (at, regs, n) = fills.iter().enumerate().find_map(|(i, (_, f))| match *f {
            Fill::Tuple { regs, n } => Some((i, regs, n)),
            _ => None,
        })?;
        let first = reg(regs[0]);
        // VGPRs one by one; SGPR pairs two by two, the quad 4-aligned.
        let scalar = !first.base.is_vgpr();
        let step = if scalar { 2 } else { 1 };
        let consecutive = (0..n).all(|k| {
            let r = reg(regs[usize::from(k)]);
            r.base.is_vgpr() != scalar && r.base.index() == first.base.index() + step * u16::from(k)
        });
        let aligned = if scalar { first.base.index() % 4 == 0 } else { !self.target.gpu.requires_even_vgpr_tuples() || first.base.index() % 2 == 0 };
        if consecutive && aligned {
            return None;
        }
        // The dword access each register goes with, and its byte offset
        // (`ds_read2_b32` holds its two offsets in dword units).
        let (single, offsets): (Opcode, Vec<i32>) = match inst.op {
            Opcode::ds_read2_b32 => (Opcode::ds_read_b32, vec![inst.offset * 4, i32::from(inst.offset1) * 4]),
            Opcode::global_load_dwordx2 | Opcode::global_load_dwordx3 | Opcode::global_load_dwordx4 => (Opcode::global_load_dword, (0..n).map(|k| inst.offset + 4 * i32::from(k)).collect()),
            Opcode::global_store_dwordx2 | Opcode::global_store_dwordx3 | Opcode::global_store_dwordx4 => (Opcode::global_store_dword, (0..n).map(|k| inst.offset + 4 * i32::from(k)).collect()),
            Opcode::s_load_dwordx4 => (Opcode::s_load_dwordx2, (0..n).map(|k| inst.offset + 8 * i32::from(k)).collect()),
            other => unreachable!("a register tuple of {other:?}"),
        };
        Some(
            offsets
                .into_iter()
                .enumerate()
                .map(|(k, offset)| {
                    let mut part = inst.clone();
                    part.op = single;
                    part.offset = offset;
                    part.offset1 = 0;
                    let mut part_fills = fills.to_vec();
                    part_fills[at].1 = Fill::Whole(regs[k]);
                    (part, part_fills)
                })
                .collect(),
        )
    }

    /// One hardware instruction with its registers filled in (and the window
    /// copies or address computation its fills need).
    fn real(&mut self, inst: &isa::Inst, fills: &[(Slot, Fill)], reg: &dyn Fn(u8) -> isa::Reg) {
        if let Some(parts) = self.split_tuple(inst, fills, reg) {
            for (part, part_fills) in parts {
                self.real(&part, &part_fills, reg);
            }
            return;
        }
        let mut inst = inst.clone();
        let mut after = Vec::new();
        let mut defined_windows = Vec::new();
        // The windows this instruction's own fills copy into before it; any
        // other window still holding a pair it reads serves as that operand
        // without a copy. A result window may be read too (the instruction
        // reads its sources before it writes, and the two are the same
        // registers, not a partial overlap), except by the 64-bit
        // multiply-adds on gfx11 ([`result_apart_from_sources`]).
        let no_overlap = result_apart_from_sources(inst.op, self.target);
        // With each window the halves a use of a pair copies into it (None
        // for what other fills put there): a window that only uses of the
        // same halves fill may serve them all (`v * v` reads one pair twice).
        let own_windows: Vec<(u8, Option<(isa::Reg, isa::Reg)>)> = fills
            .iter()
            .flat_map(|(slot, fill)| match *fill {
                Fill::VPair { .. } if matches!(slot, Slot::Def(_)) && !no_overlap => vec![],
                Fill::VPair { lo, hi, window } if matches!(slot, Slot::Use(_)) => vec![(window, Some((reg(lo), reg(hi))))],
                Fill::VPair { window, .. } | Fill::Address { window, .. } | Fill::Sum { window, .. } => vec![(window, None)],
                Fill::VQuad { window, .. } => vec![(window, None), (window + 1, None)],
                Fill::Whole(_) | Fill::Half(..) | Fill::Tuple { .. } => vec![],
            })
            .collect();
        let may_serve = |j: u8, l: isa::Reg, h: isa::Reg| own_windows.iter().filter(|(w, _)| *w == j).all(|(_, halves)| *halves == Some((l, h)));
        for (slot, fill) in fills {
            let r = match *fill {
                Fill::Whole(i) => reg(i),
                Fill::Half(i, h) => Self::half_of(reg(i), h),
                Fill::Address { .. } | Fill::Sum { .. } => isa::Reg::v(0, 1),
                // In place (split_tuple saw to that).
                Fill::Tuple { regs, n } if !reg(regs[0]).base.is_vgpr() => isa::Reg::s(reg(regs[0]).base.index(), 2 * n),
                Fill::Tuple { regs, n } => isa::Reg::v(reg(regs[0]).base.index(), n),
                Fill::VQuad { regs, window } => {
                    let w = self.window(window);
                    let first = w.base.index();
                    for (k, &r) in regs.iter().enumerate() {
                        self.mov(isa::Reg::v(first + k as u16, 1), reg(r));
                    }
                    isa::Reg::v(first, 4)
                }
                Fill::VPair { lo, hi, window } => {
                    let (l, h) = (reg(lo), reg(hi));
                    // Halves the allocator happened to place as an aligned
                    // pair are used where they are: one hardware
                    // instruction reads all its sources before it writes.
                    if l.base.is_vgpr() && h.base.is_vgpr() && l.base.index() % 2 == 0 && h.base.index() == l.base.index() + 1 {
                        let r = isa::Reg::v(l.base.index(), 2);
                        match *slot {
                            Slot::Def(i) => inst.defs[i as usize] = isa::Operand::Reg(r),
                            Slot::Use(i) => inst.uses[i as usize] = isa::Operand::Reg(r),
                        }
                        continue;
                    }
                    let w = self.window(window);
                    if matches!(slot, Slot::Use(_)) {
                        let held = Some(WindowHolds::Halves(l, h));
                        let elsewhere = (0..self.window_holds.len() as u8).find(|&j| may_serve(j, l, h) && self.window_held(j) == held);
                        if self.window_held(window) != held {
                            if let Some(j) = elsewhere {
                                let r = self.window(j);
                                if let Slot::Use(i) = *slot {
                                    inst.uses[i as usize] = isa::Operand::Reg(r);
                                }
                                continue;
                            }
                            self.mov(Self::half_of(w, 0), l);
                            self.mov(Self::half_of(w, 1), h);
                            self.set_window_held(window, WindowHolds::Halves(l, h));
                        }
                    } else {
                        after.push((reg(lo), Self::half_of(w, 0)));
                        after.push((reg(hi), Self::half_of(w, 1)));
                        defined_windows.push((window, WindowHolds::Halves(l, h)));
                    }
                    w
                }
            };
            let r = match *fill {
                Fill::Address { base, offset, window } => {
                    // Accesses at constant offsets from one address share
                    // its computation while the window and both sources hold.
                    let w = self.window(window);
                    let held = WindowHolds::Address { base: reg(base), offset: reg(offset) };
                    if self.window_held(window) != Some(held) {
                        let carry = isa::Reg::s(self.place.temps + 4, self.mask_size());
                        self.push(isa::Inst::new(
                            Opcode::v_mad_i64_i32,
                            vec![isa::Operand::Reg(w), isa::Operand::Reg(carry)],
                            vec![isa::Operand::Reg(reg(offset)), isa::Operand::imm32(1), isa::Operand::Reg(reg(base))],
                        ));
                        self.set_window_held(window, held);
                    }
                    w
                }
                Fill::Sum { lo, hi, add, window } => {
                    // Accesses at constant offsets from one sum share it
                    // while the window and every source hold.
                    let w = self.window(window);
                    let part = |(k, h): (u8, Option<u8>)| match h {
                        Some(h) => Self::half_of(reg(k), h),
                        None => reg(k),
                    };
                    let held = WindowHolds::Sum { lo: reg(lo), hi: reg(hi), add_lo: part(add[0]), add_hi: part(add[1]) };
                    if self.window_held(window) != Some(held) {
                        let carry = isa::Operand::Reg(isa::Reg::s(self.place.temps + 4, self.mask_size()));
                        let (w_lo, w_hi) = (isa::Operand::Reg(Self::half_of(w, 0)), isa::Operand::Reg(Self::half_of(w, 1)));
                        let mut low = isa::Inst::new(Opcode::v_add_co_u32, vec![w_lo, carry], vec![isa::Operand::Reg(part(add[0])), isa::Operand::Reg(reg(lo))]);
                        low.e64 = true;
                        self.push(low);
                        let mut high = isa::Inst::new(Opcode::v_addc_co_u32, vec![w_hi, carry], vec![isa::Operand::Reg(reg(hi)), isa::Operand::Reg(part(add[1])), carry]);
                        high.e64 = true;
                        self.push(high);
                        self.set_window_held(window, held);
                    }
                    w
                }
                _ => r,
            };
            match *slot {
                Slot::Def(i) => inst.defs[i as usize] = isa::Operand::Reg(r),
                Slot::Use(i) => inst.uses[i as usize] = isa::Operand::Reg(r),
            }
        }
        self.push(inst);
        for (dst, src) in after {
            self.mov(dst, src);
        }
        for (window, regs) in defined_windows {
            self.set_window_held(window, regs);
        }
            }

    fn edit(&mut self, edit: &ra::Edit, partial_exec: bool) -> Result<(), Diagnostic> {
        let ra::Edit::Move { from, to } = *edit;
        match (from.as_reg(), to.as_reg(), from.as_stack(), to.as_stack()) {
            (Some(f), Some(t), _, _) => {
                let (f, t) = (self.place.reg(f), self.place.reg(t));
                if f == t {
                    return Ok(());
                }
                if partial_exec && t.base.is_vgpr() {
                    self.whole_wave(|c| c.mov(t, f));
                } else {
                    self.mov(t, f);
                }
                Ok(())
            }
            (Some(f), None, None, Some(slot)) if self.place.slot(slot).is_some() => {
                let (f, t) = (self.place.reg(f), self.place.slot(slot).expect("a VGPR slot"));
                if partial_exec { self.whole_wave(|c| c.mov(t, f)) } else { self.mov(t, f) }
                Ok(())
            }
            (None, Some(t), Some(slot), None) if self.place.slot(slot).is_some() => {
                let (f, t) = (self.place.slot(slot).expect("a VGPR slot"), self.place.reg(t));
                if partial_exec { self.whole_wave(|c| c.mov(t, f)) } else { self.mov(t, f) }
                Ok(())
            }
            (Some(f), None, None, Some(slot)) => {
                let at = self.place.slot_in_memory(slot).unwrap_or(slot.index() as u32);
                self.spill(self.place.reg(f), at, true, partial_exec)
            }
            (None, Some(t), Some(slot), None) => {
                let at = self.place.slot_in_memory(slot).unwrap_or(slot.index() as u32);
                self.spill(self.place.reg(t), at, false, partial_exec)
            }
            _ => Err(Diagnostic::new("internal error: unexpected regalloc move", crate::mir::Span::NONE)),
        }
    }

    /// Saves (`store`) or restores a register to or from spill slot `slot`: SGPRs
    /// into lanes `slot..` of the spill VGPR (lane writes ignore EXEC), VGPRs to
    /// scratch at `4 * slot` bytes per lane, with all lanes enabled where some may
    /// be off (the inactive lanes hold other paths' values).
    fn spill(&mut self, reg: isa::Reg, slot: u32, store: bool, partial_exec: bool) -> Result<(), Diagnostic> {
        if store {
            // LLVM's metadata counts: the registers of every spill store.
            if reg.base.is_vgpr() {
                self.vgpr_spill_stores += u32::from(reg.size);
            } else {
                self.sgpr_spill_stores += u32::from(reg.size);
            }
        }
        if !reg.base.is_vgpr() {
            let lanes = if self.wave64() { 64 } else { 32 };
            for k in 0..reg.size {
                let index = slot + u32::from(k);
                let v = isa::Reg::v(self.spill_vgpr + (index / lanes) as u16, 1);
                let s = isa::Reg::s(reg.base.0 + u16::from(k), 1);
                let lane = isa::Operand::imm32(index % lanes);
                let inst = if store {
                    isa::Inst::new(Opcode::v_writelane_b32, vec![isa::Operand::Reg(v)], vec![isa::Operand::Reg(s), lane])
                } else {
                    isa::Inst::new(Opcode::v_readlane_b32, vec![isa::Operand::Reg(s)], vec![isa::Operand::Reg(v), lane])
                };
                self.push(inst);
            }
            return Ok(());
        }
        // Spill code runs between any two instructions, where an SCC value or an
        // argument already in an expansion temporary (s22-s29 in a device
        // function) may be live: no temporary for a large offset.
        self.private_access(store, 4, reg, None, self.frame.spill_base + 4 * slot, partial_exec, false)
    }

    /// One private (scratch) access of `width` bytes per lane at a frame offset
    /// (`ptr` None: bytes from the entry SP, from 0 in a kernel) or through a
    /// private pointer. Flat scratch (gfx942, gfx1100): `scratch_*` with the frame
    /// base (SP) in saddr, or the pointer as vaddr. Buffer scratch (gfx90a):
    /// `buffer_*` through the scratch V#, with the frame base as soffset, or the
    /// pointer (from the V# base) as `offen` VGPR offset with soffset 0.
    #[allow(clippy::too_many_arguments)]
    fn private_access(
        &mut self,
        store: bool,
        width: u8,
        data: isa::Reg,
        ptr: Option<isa::Reg>,
        offset: u32,
        partial_exec: bool,
        may_use_temporary: bool,
    ) -> Result<(), Diagnostic> {
        let scratch = self.scratch.ok_or_else(|| Diagnostic::new("internal error: private memory access without scratch", crate::mir::Span::NONE))?;
        // The frame's base register (none: offset 0 in a kernel on flat scratch).
        let mut base = match scratch {
            Scratch::Flat => self.frame_base,
            Scratch::Buffer { wave_offset, .. } => Some(self.frame_base.unwrap_or(wave_offset)),
        };
        let mut offset = offset;
        if offset > 4095 {
            if ptr.is_some() || !may_use_temporary {
                let what = if ptr.is_some() { "past a private pointer" } else { "into the frame for spill code or saved registers" };
                return Err(Diagnostic::new(
                    format!("a private access {offset} bytes {what} is beyond the 4095 bytes an instruction offset reaches (not supported yet)"),
                    crate::mir::Span::NONE,
                ));
            }
            // Beyond the immediate's reach: the 4 KiB-aligned part goes into an
            // expansion temporary, added to the base in SP units. Only for
            // selected instructions (frame accesses from isel, the epilogue):
            // SCC and the temporaries are free before them.
            let t = isa::Reg::s(self.place.temps, 1);
            let high = isa::Operand::imm32((offset & !0xfff) * self.sp_scale());
            match base {
                Some(b) => self.push(isa::Inst::new(Opcode::s_add_u32, vec![isa::Operand::Reg(t)], vec![isa::Operand::Reg(isa::Reg::s(b, 1)), high])),
                None => self.push(isa::Inst::new(Opcode::s_mov_b32, vec![isa::Operand::Reg(t)], vec![high])),
            }
            base = Some(self.place.temps);
            offset &= 0xfff;
        }
        let reg = |r: isa::Reg| isa::Operand::Reg(r);
        let sreg = |n: u16| isa::Operand::Reg(isa::Reg::s(n, 1));
        let mut inst = match scratch {
            Scratch::Flat => {
                let op = match (store, width) {
                    (true, 1) => Opcode::scratch_store_byte,
                    (true, 2) => Opcode::scratch_store_short,
                    (true, _) => Opcode::scratch_store_dword,
                    (false, 1) => Opcode::scratch_load_ubyte,
                    (false, 2) => Opcode::scratch_load_ushort,
                    (false, _) => Opcode::scratch_load_dword,
                };
                let (vaddr, saddr) = match ptr {
                    Some(p) => (reg(p), isa::Operand::Off),
                    None => (isa::Operand::Off, base.map_or(isa::Operand::Off, sreg)),
                };
                if store {
                    isa::Inst::new(op, vec![], vec![vaddr, reg(data), saddr])
                } else {
                    isa::Inst::new(op, vec![reg(data)], vec![vaddr, saddr])
                }
            }
            Scratch::Buffer { rsrc, .. } => {
                let op = match (store, width) {
                    (true, 1) => Opcode::buffer_store_byte,
                    (true, 2) => Opcode::buffer_store_short,
                    (true, _) => Opcode::buffer_store_dword,
                    (false, 1) => Opcode::buffer_load_ubyte,
                    (false, 2) => Opcode::buffer_load_ushort,
                    (false, _) => Opcode::buffer_load_dword,
                };
                let (vaddr, soffset) = match ptr {
                    // Pointers count from the V# base (see LocalAddress).
                    Some(p) => (reg(p), isa::Operand::imm32(0)),
                    None => (isa::Operand::Off, sreg(base.expect("buffer scratch has a frame base"))),
                };
                let rsrc = isa::Operand::Reg(isa::Reg::s(rsrc, 4));
                let mut i = if store {
                    isa::Inst::new(op, vec![], vec![reg(data), vaddr, rsrc, soffset])
                } else {
                    isa::Inst::new(op, vec![reg(data)], vec![vaddr, rsrc, soffset])
                };
                i.offen = ptr.is_some();
                i
            }
        };
        inst.offset = offset as i32;
        if partial_exec {
            self.whole_wave(|c| c.push(inst));
        } else {
            self.push(inst);
        }
        Ok(())
    }

    /// The prologue: the callee-saved VGPRs the function uses saved with every
    /// lane enabled (EXEC parked in an SGPR pair no argument arrives in, or in
    /// VCC when there is none), then the return address moved into two lanes of
    /// them in a function that calls.
    fn prologue(&mut self) -> Result<(), Diagnostic> {
        if !self.frame.saved_vgprs.is_empty() {
            self.vgprs_with_all_lanes(true, self.frame.prologue_exec)?;
        }
        if let Some((vgpr, lane)) = self.return_address_place() {
            for k in 0..2u16 {
                self.push(isa::Inst::new(
                    Opcode::v_writelane_b32,
                    vec![isa::Operand::Reg(isa::Reg::v(vgpr, 1))],
                    vec![isa::Operand::Reg(isa::Reg::s(30 + k, 1)), isa::Operand::imm32(lane + u32::from(k))],
                ));
            }
            self.cfi_after(CfiEvent::ReturnAddressInLanes { vgpr, lane });
        }
        Ok(())
    }

    /// The spill VGPR and lane the return address's low half is kept in.
    fn return_address_place(&self) -> Option<(u16, u32)> {
        let lanes = if self.wave64() { 64 } else { 32 };
        self.frame.return_address_lane.map(|l| (self.spill_vgpr + (l / lanes) as u16, l % lanes))
    }

    /// The epilogue, before `s_setpc_b64`: the prologue undone (nothing but the
    /// results, in VGPRs, is live; an expansion temporary pair parks EXEC).
    fn epilogue(&mut self) -> Result<(), Diagnostic> {
        if self.frame.saved_vgprs.is_empty() && self.frame.return_address_lane.is_none() {
            return Ok(());
        }
        self.cfi_before.push(CfiEvent::RememberState);
        if let Some((vgpr, lane)) = self.return_address_place() {
            for k in 0..2u16 {
                self.push(isa::Inst::new(
                    Opcode::v_readlane_b32,
                    vec![isa::Operand::Reg(isa::Reg::s(30 + k, 1))],
                    vec![isa::Operand::Reg(isa::Reg::v(vgpr, 1)), isa::Operand::imm32(lane + u32::from(k))],
                ));
            }
            self.cfi_after(CfiEvent::ReturnAddressInSgprs);
        }
        if !self.frame.saved_vgprs.is_empty() {
            // temps + 0 may form a large frame offset for the restores.
            self.vgprs_with_all_lanes(false, Some(self.place.temps + 2))?;
        }
        Ok(())
    }

    /// Saves or restores the callee-saved VGPRs with every lane enabled (the
    /// caller's inactive lanes hold live values too), EXEC parked in `park`
    /// (None: VCC).
    fn vgprs_with_all_lanes(&mut self, save: bool, park: Option<u16>) -> Result<(), Diagnostic> {
        let park_reg = match park {
            Some(n) => isa::Reg::s(n, self.mask_size()),
            None => isa::Reg::new(isa::PhysReg::VCC, self.mask_size()),
        };
        let saveexec = self.op_b(Opcode::s_or_saveexec_b64, Opcode::s_or_saveexec_b32);
        self.push(isa::Inst::new(saveexec, vec![isa::Operand::Reg(park_reg)], vec![isa::Operand::imm32(u32::MAX)]));
        self.cfi_after(CfiEvent::ExecIn(park));
        for (i, n) in self.frame.saved_vgprs.clone().into_iter().enumerate() {
            let offset = self.frame.saved_base + 4 * i as u32;
            // The prologue runs before the arguments are copied out of s4-s29.
            self.private_access(save, 4, isa::Reg::v(n, 1), None, offset, false, !save)?;
            self.cfi_after(if save { CfiEvent::VgprSaved { vgpr: n, offset } } else { CfiEvent::VgprRestored(n) });
        }
        let mov = self.op_b(Opcode::s_mov_b64, Opcode::s_mov_b32);
        self.push(isa::Inst::new(mov, vec![isa::Operand::Reg(self.exec())], vec![isa::Operand::Reg(park_reg)]));
        self.cfi_after(CfiEvent::ExecRestored);
        Ok(())
    }

    /// SP units per byte per lane: the wave size on buffer scratch (SP is a
    /// wave-level offset), 1 on flat scratch.
    fn sp_scale(&self) -> u32 {
        match self.scratch {
            Some(Scratch::Buffer { .. }) => {
                if self.wave64() {
                    64
                } else {
                    32
                }
            }
            _ => 1,
        }
    }

    /// A calling kernel's SP (s32) for its callees: the end of its frame, per lane
    /// on flat scratch, as a wave-level offset above the wave's scratch offset
    /// on buffer scratch (docs/abi.md section 3).
    fn set_kernel_sp(&mut self) {
        let sp = isa::Operand::Reg(isa::Reg::s(Layout::STACK_POINTER, 1));
        match self.scratch {
            Some(Scratch::Buffer { wave_offset, .. }) => self.push(isa::Inst::new(
                Opcode::s_add_u32,
                vec![sp],
                vec![isa::Operand::Reg(isa::Reg::s(wave_offset, 1)), isa::Operand::imm32(self.frame.sp_end * self.sp_scale())],
            )),
            _ => self.push(isa::Inst::new(Opcode::s_mov_b32, vec![sp], vec![isa::Operand::imm32(self.frame.sp_end)])),
        }
    }

    /// Runs `body` (regalloc2's moves and spill code) with every lane enabled,
    /// EXEC parked in an SGPR nothing else holds between instructions: the
    /// expansion temporaries (s[28:29]), except in a device function that
    /// calls, where they may already hold arguments for a call that follows:
    /// there s[30:31], whose return address the prologue has moved into VGPR
    /// lanes. (Not VCC: the division sequences carry a flag in VCC from one
    /// selected instruction to another.)
    fn whole_wave(&mut self, body: impl FnOnce(&mut Self)) {
        let park = if self.frame.return_address_lane.is_some() { 30 } else { self.place.temps + 6 };
        let save = isa::Reg::s(park, self.mask_size());
        let mov = self.op_b(Opcode::s_mov_b64, Opcode::s_mov_b32);
        if self.whole_wave_end == self.code.len() && self.code.last().is_some_and(|e| e.cfi.is_empty()) {
            // Back to back with the previous section: EXEC is still parked
            // in `save`; drop its restore and go on with every lane on.
            self.code.pop();
        } else {
            self.push(isa::Inst::new(mov, vec![isa::Operand::Reg(save)], vec![isa::Operand::Reg(self.exec())]));
            self.push(isa::Inst::new(mov, vec![isa::Operand::Reg(self.exec())], vec![isa::Operand::imm32(u32::MAX)]));
        }
        body(self);
        self.push(isa::Inst::new(mov, vec![isa::Operand::Reg(self.exec())], vec![isa::Operand::Reg(save)]));
        self.whole_wave_end = self.code.len();
    }

    fn branch(&mut self, block: usize, kind: &Branch, allocs: &[ra::Allocation], next_in_layout: Option<usize>) -> Result<(), Diagnostic> {
        let succs: Vec<usize> = self.vcode.blocks[block].succs.iter().map(|b| b.index()).collect();
        let jump = |c: &mut Self, target: usize| {
            if Some(target) != next_in_layout {
                c.code.push(Emitted { inst: isa::Inst::sopp(Opcode::s_branch, 0), target: Some(target), symbol: None, cfi: Vec::new() });
            }
        };
        match kind {
            Branch::Jump => jump(self, succs[0]),
            Branch::IfUniform => {
                let flag = self.place.reg(allocs[0].as_reg().expect("a register"));
                self.push(isa::Inst::new(Opcode::s_cmp_lg_u32, vec![], vec![isa::Operand::Reg(flag), isa::Operand::imm32(0)]));
                self.code.push(Emitted { inst: isa::Inst::sopp(Opcode::s_cbranch_scc1, 0), target: Some(succs[0]), symbol: None, cfi: Vec::new() });
                jump(self, succs[1]);
            }
            Branch::IfCompare { op, imms } => {
                let mut regs = allocs.iter().map(|a| isa::Operand::Reg(self.place.reg(a.as_reg().expect("a register"))));
                let uses: Vec<isa::Operand> = imms.iter().map(|i| match i {
                    Some(bits) => isa::Operand::imm32(*bits),
                    None => regs.next().expect("one operand per non-constant source"),
                }).collect();
                self.push(isa::Inst::new(*op, vec![], uses));
                self.code.push(Emitted { inst: isa::Inst::sopp(Opcode::s_cbranch_scc1, 0), target: Some(succs[0]), symbol: None, cfi: Vec::new() });
                jump(self, succs[1]);
            }
            Branch::IfExecZero => {
                self.code.push(Emitted { inst: isa::Inst::sopp(Opcode::s_cbranch_execz, 0), target: Some(succs[0]), symbol: None, cfi: Vec::new() });
                jump(self, succs[1]);
            }
            Branch::EndProgram => self.push(isa::Inst::sopp(Opcode::s_endpgm, 0)),
            Branch::Return => {
                self.epilogue()?;
                let restores = !self.cfi_before.is_empty() || self.code.last().is_some_and(|e| !e.cfi.is_empty());
                self.push(isa::Inst::new(Opcode::s_setpc_b64, vec![], vec![isa::Operand::Reg(isa::Reg::s(30, 2))]));
                if restores && (!self.frame.saved_vgprs.is_empty() || self.frame.return_address_lane.is_some()) {
                    self.cfi_after(CfiEvent::RestoreState);
                }
            }
        }
        Ok(())
    }
}

/// Whether `op`'s result must not share a register with any of its sources
/// on `target`: gfx11's 64-bit multiply-adds (LLVM selects an early-clobber
/// form of them for gfx11 only, `hasMADIntraFwdBug`; on gfx90a and gfx942
/// llc-22 writes `v_mad_u64_u32 v[2:3], s[4:5], v2, ...`). Every other
/// instruction reads its sources before it writes.
pub fn result_apart_from_sources(op: Opcode, target: Target) -> bool {
    matches!(op, Opcode::v_mad_u64_u32 | Opcode::v_mad_i64_i32) && target.gpu.generation() == isa::Generation::Gfx11
}

/// Expands a function. Blocks are laid out in VCode order.
pub fn expand(vcode: &VCode, out: &ra::Output, target: Target) -> Result<Expanded, Diagnostic> {
    let place = Placement::new(vcode, out);
    let uses_windows = vcode.insts.iter().any(|m| matches!(&m.kind, MKind::Real { fills, .. } if fills.iter().any(|(_, f)| matches!(f, Fill::VPair { .. } | Fill::VQuad { .. } | Fill::Address { .. } | Fill::Sum { .. }))) || matches!(m.kind, MKind::WaveScan(..)));
    // A callee's windows sit right above its allocation, which leaves room for
    // them below v32: arguments arriving there are copied out at the entry,
    // before any instruction uses a window.
    // With `callee_windows_high` they sit above everything it allocated,
    // v32 or higher, and its prologue saves them.
    let windows_high = vcode.layout == Layout::Callee && vcode.callee_windows_high;
    let vgpr_end = if vcode.layout == Layout::Callee { place.vgpr_end.min(vcode.callee_vgprs()) } else { place.vgpr_end };
    let window_base = if windows_high { place.vgpr_end.max(32).div_ceil(2) * 2 } else { vgpr_end.div_ceil(2) * 2 };
    let temps = place.temps;
    let windows_used = vcode.windows_needed();
    let vgpr_top = if uses_windows { window_base + 2 * windows_used } else { vgpr_end };
    if vcode.layout == Layout::Callee && vgpr_top > 32 && !windows_high {
        return Err(Diagnostic::new(format!("internal error: a device function's VGPR windows reach v{}", vgpr_top - 1), crate::mir::Span::NONE));
    }
    let spilled = super::regalloc::spilled_classes(out);
    let spills_sgprs = spilled[0] || spilled[2];
    // Spilled SGPRs live in lanes of spill VGPRs (as many as the slots need).
    // A kernel that calls keeps them above v31, which no callee may touch. A
    // device function keeps them below v32, which it may clobber, when they fit
    // there without overlapping an argument register; otherwise it uses v32 and
    // up, saved in its prologue and restored in its epilogue with every lane
    // enabled (the caller's inactive lanes hold live values too).
    // A device function that calls keeps its return address in two lanes after
    // the spill slots' (an even pair, in one VGPR).
    let calls = vcode.layout == Layout::Callee && vcode.insts.iter().any(|m| matches!(m.kind, MKind::Call { .. }));
    let lanes: u32 = if target.wave == WaveSize::W64 { 64 } else { 32 };
    let return_address_lane = calls.then(|| {
        let lane = (out.num_spillslots as u32).div_ceil(2) * 2;
        if lane % lanes == lanes - 1 { lane + 1 } else { lane }
    });
    let lanes_needed = return_address_lane.map_or(out.num_spillslots as u32 + 1, |l| l + 2);
    let spill_vgpr_count = if spills_sgprs || calls { lanes_needed.div_ceil(lanes).max(1) as u16 } else { 0 };
    let highest_argument_vgpr = arrival_registers(vcode, ra::RegClass::Float).max();
    // LLVM callees also clobber v32-v39 (and every other block of 8 above
    // v40): with calls to them the spill VGPRs go to a block LLVM preserves.
    let llvm_calls = vcode.insts.iter().any(|m| matches!(m.kind, MKind::Call { llvm: true, .. }));
    let llvm_preserved = |from: u16| (0..).map(|k| 40 + 16 * k).find(|&b| b >= from).expect("a block");
    // A device function may also allocate v32 and up (callee-saved: its
    // prologue saves them); they are packed from v32.
    let high_end = if windows_high { vgpr_top.max(place.vgpr_end.max(32)) } else if vcode.layout == Layout::Callee { place.vgpr_end.max(32) } else { 32 };
    let (spill_vgpr, mut saved_vgprs) = match vcode.layout {
        Layout::Caller if llvm_calls => (llvm_preserved(vgpr_top), Vec::new()),
        Layout::Caller => (vgpr_top.max(32), Vec::new()),
        Layout::Dense => (vgpr_top, Vec::new()),
        Layout::Callee => {
            // A device function that calls needs them to survive its calls:
            // below v32 only where no call clobbers them (its callees were
            // compiled first and write none of them, `vgprs_clobbered`).
            let lane_vgprs = vgpr_top..vgpr_top + spill_vgpr_count;
            let survive_calls = || {
                !llvm_calls
                    && vcode.insts.iter().all(|m| match &m.kind {
                        MKind::Call { clobbers, .. } => lane_vgprs.clone().all(|v| !clobbers.contains(ra::PReg::new(usize::from(v), ra::RegClass::Float))),
                        _ => true,
                    })
            };
            let fits_below = vgpr_top + spill_vgpr_count <= 32 && !highest_argument_vgpr.is_some_and(|v| v >= vgpr_top) && (!calls || survive_calls());
            if fits_below && !vcode.llvm_convention {
                // Not saved: our convention clobbers every lane of v0-v31
                // (callers move values in blocks with lanes off with every
                // lane on, docs/abi.md).
                (vgpr_top, Vec::new())
            } else if fits_below {
                // LLVM's convention has callees preserve the lanes that are
                // off at the call in every VGPR (its callers save only
                // active lanes), and `v_writelane` writes lanes whatever
                // EXEC is: saved with every lane on, as llc-22 saves them.
                (vgpr_top, (vgpr_top..vgpr_top + spill_vgpr_count).collect())
            } else {
                let first = if llvm_calls { llvm_preserved(high_end.max(40)) } else { high_end };
                (first, (first..first + spill_vgpr_count).collect())
            }
        }
    };
    if vcode.layout == Layout::Callee {
        saved_vgprs.extend(32..high_end);
        saved_vgprs.sort_unstable();
    }
    if llvm_calls && spill_vgpr_count > 8 {
        return Err(Diagnostic::new(
            "calls to LLVM functions with more SGPR spill slots than 8 VGPRs hold are not supported yet".to_string(),
            crate::mir::Span::NONE,
        ));
    }
    // A kernel on buffer scratch folds the wave's scratch offset into the V#
    // base before anything else runs, as LLVM's kernels do, and keeps 0 where
    // the offset was (s33 in a kernel that calls, the arrival SGPR otherwise):
    // frames, SP and private pointers then count from the wave's own private
    // memory, which is what callees (ours and LLVM's) expect (docs/abi.md 3.1).
    let (scratch, fold_wave_offset) = match vcode.scratch {
        Some(Scratch::Buffer { rsrc, wave_offset }) if vcode.layout != Layout::Callee => {
            let kept = if vcode.layout == Layout::Caller { Layout::CALLER_WAVE_OFFSET } else { wave_offset };
            (Some(Scratch::Buffer { rsrc, wave_offset: kept }), Some((rsrc, wave_offset, kept)))
        }
        other => (other, None),
    };
    let frame_base = if vcode.layout == Layout::Callee { Some(Layout::STACK_POINTER) } else { None };
    let spill_bytes = match vcode.slot_home {
        SlotHome::Memory if spills_vgprs(vcode, out) => 4 * out.num_spillslots as u32,
        SlotHome::Memory | SlotHome::Vgprs => 0,
        SlotHome::Spread => 4 * place.memory_slots,
    };
    // [incoming arguments][saved VGPRs][spill slots][locals]: the parts that
    // spill code and the prologue address come first, within the 4095 bytes an
    // instruction offset reaches; locals (reached through pointers or selected
    // instructions) may be large.
    let saved_base = vcode.frame.incoming;
    let spill_base = saved_base + 4 * saved_vgprs.len() as u32;
    let locals_base = (spill_base + spill_bytes).div_ceil(16) * 16;
    let frame_end = u64::from(locals_base) + u64::from(vcode.frame.locals);
    if frame_end > u64::from(MAX_FRAME_BYTES) {
        return Err(Diagnostic::new(
            format!("the stack frame needs {frame_end} bytes per lane, more than the {MAX_FRAME_BYTES} supported"),
            crate::mir::Span::NONE,
        ));
    }
    // The prologue parks EXEC in an aligned SGPR pair (one SGPR in wave32) that
    // no argument arrives in, so that the call-frame information can name it.
    let arrival_sgprs: Vec<u16> = arrival_registers(vcode, ra::RegClass::Int).collect();
    let width = if target.wave == WaveSize::W64 { 2 } else { 1 };
    let prologue_exec = (4..30u16).step_by(width as usize).find(|n| (*n..n + width).all(|r| !arrival_sgprs.contains(&r)));
    let frame = FrameLayout {
        locals_base,
        spill_base,
        saved_base,
        saved_vgprs,
        return_address_lane,
        prologue_exec,
        sp_end: (frame_end as u32).div_ceil(16) * 16,
    };
    let mut ctx = Ctx { vcode, place: &place, out, target, window_base, spill_vgpr, scratch, frame_base, frame, code: Vec::new(), cfi_before: Vec::new(), window_holds: Vec::new(), whole_wave_end: usize::MAX, sgpr_spill_stores: 0, vgpr_spill_stores: 0 };
    let mut blocks = Vec::new();
    let mut uses_reserved = false;
    let layout = vcode.layout();
    for (position, &b) in layout.iter().enumerate() {
        let block = &vcode.blocks[b];
        let start = ctx.code.len();
        ctx.window_holds.clear();
        ctx.whole_wave_end = usize::MAX;
        if let (0, Some((rsrc, arrived, kept))) = (position, fold_wave_offset) {
            let s = |n: u16| isa::Operand::Reg(isa::Reg::s(n, 1));
            if let Some(init) = vcode.flat_scratch_init {
                // FLAT_SCRATCH = the queue's scratch base + this wave's offset:
                // the same memory, with the same swizzle, as the V# base below.
                let fs = |half: u16| isa::Operand::Reg(isa::Reg::new(isa::PhysReg(isa::PhysReg::FLAT_SCRATCH.0 + half), 1));
                ctx.push(isa::Inst::new(Opcode::s_add_u32, vec![fs(0)], vec![s(init), s(arrived)]));
                ctx.push(isa::Inst::new(Opcode::s_addc_u32, vec![fs(1)], vec![s(init + 1), isa::Operand::imm32(0)]));
            }
            ctx.push(isa::Inst::new(Opcode::s_add_u32, vec![s(rsrc)], vec![s(rsrc), s(arrived)]));
            ctx.push(isa::Inst::new(Opcode::s_addc_u32, vec![s(rsrc + 1)], vec![s(rsrc + 1), isa::Operand::imm32(0)]));
            ctx.push(isa::Inst::new(Opcode::s_mov_b32, vec![s(kept)], vec![isa::Operand::imm32(0)]));
        }
        if position == 0 && vcode.layout == Layout::Caller && scratch.is_some() {
            ctx.set_kernel_sp();
        }
        if position == 0 && vcode.layout == Layout::Callee {
            ctx.prologue()?;
        }
        for item in out.block_insts_and_edits(vcode, ra::Block::new(b)) {
            match item {
                ra::InstOrEdit::Edit(edit) => ctx.edit(edit, block.partial_exec)?,
                ra::InstOrEdit::Inst(inst) => {
                    let m = &vcode.insts[inst.index()];
                    if let MKind::Branch(kind) = &m.kind {
                        let allocs = out.inst_allocs(inst).to_vec();
                        let next = layout.get(position + 1).copied();
                        ctx.branch(b, kind, &allocs, next)?;
                    } else {
                        let uses_address = matches!(&m.kind, MKind::Real { fills, .. } if fills.iter().any(|(_, f)| matches!(f, Fill::Address { .. } | Fill::Sum { .. })));
                        if matches!(m.kind, MKind::LaneMerge { vector: false, .. }) || uses_address {
                            uses_reserved = true;
                        }
                        ctx.inst(inst.index())?;
                    }
                }
            }
        }
        let code: Vec<Emitted> = ctx.code.drain(start..).collect();
        if code.iter().any(|e| e.inst.defs.iter().chain(&e.inst.uses).any(|o| matches!(o, isa::Operand::Reg(r) if r.base.0 >= temps && r.base.0 < temps + 8))) {
            uses_reserved = true;
        }
        blocks.push((b, block.name.clone(), code));
    }
    let mut vgprs = if spill_vgpr_count > 0 { u32::from(spill_vgpr + spill_vgpr_count).max(u32::from(vgpr_top)) } else { u32::from(vgpr_top) };
    let mut windows = None;
    if spill_vgpr_count == 0 && vgpr_top > vgpr_end {
        if matches!(vcode.layout, Layout::Dense | Layout::Caller) {
            windows = Some(Windows { base: window_base });
        }
        // Windows reserved for pair operands that the placement kept in place
        // everywhere are not used: the count is what the code references
        // (a device function's too: its callers' counts take the most of
        // their callees').
        vgprs = u32::from(vgprs_named(&blocks).max(vgpr_end));
    }
    if vcode.layout == Layout::Callee && high_end > 32 {
        vgprs = vgprs.max(u32::from(high_end));
    }
    let mut sgprs = u32::from(place.sgpr_end);
    if uses_reserved {
        sgprs = sgprs.max(u32::from(temps) + 8);
    }
    if (fold_wave_offset.is_some() && vcode.layout == Layout::Caller) || (vcode.layout == Layout::Caller && scratch.is_some()) {
        sgprs = sgprs.max(u32::from(Layout::CALLER_WAVE_OFFSET) + 1);
    }
    let uses_vcc = blocks.iter().flat_map(|(_, _, c)| c).any(|e| {
        e.inst.defs.iter().any(|o| matches!(o, isa::Operand::Reg(r) if r.base == isa::PhysReg::VCC))
    });
    let spills = SpillCounts { sgprs: ctx.sgpr_spill_stores, vgprs: ctx.vgpr_spill_stores, slot_vgprs: u32::from(place.slot_vgprs) };
    let call_vgpr_reads = vcode
        .insts
        .iter()
        .filter(|m| matches!(m.kind, MKind::Call { .. }))
        .flat_map(|m| &m.ops)
        .filter_map(|o| match o.constraint() {
            ra::OperandConstraint::FixedReg(p) if p.class() == ra::RegClass::Float && p.hw_enc() < 32 => Some(1u32 << p.hw_enc()),
            _ => None,
        })
        .fold(0, |m, bit| m | bit);
    Ok(Expanded { blocks, windows, call_vgpr_reads, vgprs, agprs: u32::from(place.agprs), spills, sgprs, uses_vcc, scratch_bytes: spill_bytes, frame_bytes: if scratch.is_some() { ctx.frame.sp_end } else { 0 } })
}

/// The registers of one class that the entry defines (arguments and inputs
/// arriving in fixed registers), by hardware number.
fn arrival_registers(vcode: &VCode, class: ra::RegClass) -> impl Iterator<Item = u16> + '_ {
    vcode
        .insts
        .iter()
        .filter(|m| matches!(m.kind, MKind::Entry))
        .flat_map(|m| &m.ops)
        .filter_map(move |o| match o.constraint() {
            ra::OperandConstraint::FixedReg(p) if p.class() == class => Some(p.hw_enc() as u16),
            _ => None,
        })
}

/// The post-allocation checker: every register operand of the expanded code is
/// a tuple that exists on the target, with the alignment the target requires
/// (even VGPR pairs on gfx90a/gfx942, aligned SGPR tuples everywhere). Runs after
/// every compilation; a failure is an internal error, never a miscompile.
pub fn check_registers(code: &Expanded, target: Target, func_name: &str) -> Result<(), Diagnostic> {
    for (_, block, insts) in &code.blocks {
        for e in insts {
            for o in e.inst.defs.iter().chain(&e.inst.uses) {
                if let isa::Operand::Reg(r) = o {
                    if let Err(why) = r.check(target.gpu) {
                        return Err(Diagnostic::new(
                            format!(
                                "internal error in @{func_name}, block '{block}': '{}': {why}",
                                isa::print(&e.inst, target)
                            ),
                            crate::mir::Span::NONE,
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

/// Hardware code for the machine passes' unit tests.
#[cfg(test)]
pub(super) mod test_code {
    use super::{Emitted, Expanded, SpillCounts};
    use crate::isa;

    /// An instruction without a branch target, symbol or frame rows.
    pub fn inst(op: isa::Opcode, defs: Vec<isa::Operand>, uses: Vec<isa::Operand>) -> Emitted {
        Emitted { inst: isa::Inst::new(op, defs, uses), target: None, symbol: None, cfi: Vec::new() }
    }

    /// One VGPR and one SGPR.
    pub fn v(n: u16) -> isa::Operand {
        isa::Operand::Reg(isa::Reg::v(n, 1))
    }

    pub fn s(n: u16) -> isa::Operand {
        isa::Operand::Reg(isa::Reg::s(n, 1))
    }

    /// A function of these blocks without windows, spills or counts; its
    /// calls pass values in the VGPRs `call_vgpr_reads` names (bit n: vn).
    pub fn function(blocks: Vec<(usize, String, Vec<Emitted>)>, call_vgpr_reads: u32) -> Expanded {
        Expanded { blocks, windows: None, call_vgpr_reads, vgprs: 0, agprs: 0, spills: SpillCounts::default(), sgprs: 0, uses_vcc: false, scratch_bytes: 0, frame_bytes: 0 }
    }
}
