//! The executor: work-groups, work-items, frames, barriers, memory accesses.

use hashbrown::HashMap;

use super::memory::{SlotMemory, APERTURE_SIZE, LOCAL_APERTURE, PRIVATE_APERTURE};
use super::ops::{self, mask, sext, width};
use super::{InterpError, Launch, Memory, Options, RtValue, RunStats};
use crate::abi::{AddrSpace, Type};
use crate::mir::ir::*;
use crate::mir::print::{InstDisplay, TermDisplay};

/// Unused bytes between private slots (so small overruns are caught).
const PRIVATE_GAP: u64 = 16;

struct FuncInfo {
    /// The entry block's `stack_slot`s: (instruction index, size, align), in order.
    stack_slots: Vec<(usize, u32, u32)>,
}

struct Frame {
    func: usize,
    block: usize,
    inst: usize,
    regs: Vec<RtValue>,
    /// Addresses of this frame's stack slots (same order as `FuncInfo::stack_slots`).
    slot_addrs: Vec<u32>,
    /// Private slots below this frame's (freed on return).
    private_mark: usize,
    /// Where the caller wants the result.
    dest: Option<Value>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Running,
    Barrier,
    /// Stopped at a collective wave operation, waiting for its wave.
    Wave,
    Done,
}

struct WorkItem {
    id: [u32; 3],
    frames: Vec<Frame>,
    private: SlotMemory,
    state: State,
    /// The value returned by the outermost frame (for `call_function`).
    result: Option<RtValue>,
}

/// Where an access lands.
#[derive(Clone, Copy, Debug)]
enum Place {
    Global(u64),
    Local(u32),
    Private(u32),
}

struct Machine<'m, 'a> {
    module: &'m Module,
    infos: Vec<FuncInfo>,
    by_name: HashMap<&'m str, usize>,
    memory: &'a mut Memory,
    options: Options,
    launch: Launch,
    group: [u32; 3],
    /// The launched function's `lds_slot`s: (instruction index, offset, size),
    /// then the dynamic LDS (index `usize::MAX`) when the launch has some.
    lds_layout: Vec<(usize, u32, u32)>,
    /// Where `dynamic_lds` points: the end of the slots, 16-byte aligned.
    dynamic_lds_base: u32,
    instructions: u64,
    scratch: Vec<RtValue>,
    /// Where the module's `data` objects are: copied into device memory
    /// when the machine starts (read-only by the verifier's rules).
    data_addrs: HashMap<&'m str, u64>,
}

fn align_up(value: u64, align: u64) -> u64 {
    let align = align.max(1);
    value.div_ceil(align) * align
}

fn dims(v: [u32; 3]) -> String {
    format!("({}, {}, {})", v[0], v[1], v[2])
}

#[inline]
fn val(regs: &[RtValue], operand: &Operand) -> RtValue {
    match operand {
        Operand::Value(v) => regs.get(v.0 as usize).cloned().unwrap_or(RtValue::Scalar(0)),
        Operand::Const(c) => RtValue::Scalar(c.bits),
    }
}

#[inline]
fn scalar(regs: &[RtValue], operand: &Operand) -> Result<u64, String> {
    match operand {
        Operand::Value(v) => match regs.get(v.0 as usize) {
            Some(RtValue::Scalar(b)) => Ok(*b),
            _ => Err(format!("internal: value {} is not a scalar", v.0)),
        },
        Operand::Const(c) => Ok(c.bits),
    }
}

fn shape_error() -> String {
    "internal: operand does not match its type (is the module verified?)".to_string()
}

/// Applies a scalar function element-wise over vectors.
fn lanewise2(ty: &Type, a: &RtValue, b: &RtValue, f: &dyn Fn(&Type, u64, u64) -> Result<u64, String>) -> Result<RtValue, String> {
    match (ty, a, b) {
        (_, RtValue::Scalar(x), RtValue::Scalar(y)) => Ok(RtValue::Scalar(f(ty, *x, *y)?)),
        (Type::Vector(elem, _), RtValue::Agg(xs), RtValue::Agg(ys)) if xs.len() == ys.len() => {
            xs.iter().zip(ys).map(|(x, y)| lanewise2(elem, x, y, f)).collect::<Result<Vec<_>, _>>().map(RtValue::Agg)
        }
        _ => Err(shape_error()),
    }
}

fn lanewise1(ty: &Type, a: &RtValue, f: &dyn Fn(&Type, u64) -> Result<u64, String>) -> Result<RtValue, String> {
    match (ty, a) {
        (_, RtValue::Scalar(x)) => Ok(RtValue::Scalar(f(ty, *x)?)),
        (Type::Vector(elem, _), RtValue::Agg(xs)) => xs.iter().map(|x| lanewise1(elem, x, f)).collect::<Result<Vec<_>, _>>().map(RtValue::Agg),
        _ => Err(shape_error()),
    }
}

/// Bytes an access of `ty` touches: lanes x element size (a `<3 x i32>` is 12).
fn access_size(ty: &Type) -> usize {
    (ty.lanes() * ty.element().size()) as usize
}

/// Little-endian memory image of a scalar or vector (element 0 first).
fn encode(value: &RtValue, ty: &Type, out: &mut [u8; 128]) -> Result<usize, String> {
    match (value, ty) {
        (RtValue::Scalar(bits), t) if t.is_scalar() => {
            let n = t.size() as usize;
            out[..n].copy_from_slice(&bits.to_le_bytes()[..n]);
            Ok(n)
        }
        (RtValue::Agg(elems), Type::Vector(elem, n)) if elems.len() == usize::from(*n) => {
            let size = elem.size() as usize;
            for (i, e) in elems.iter().enumerate() {
                let bits = e.bits().ok_or_else(shape_error)?;
                out[i * size..(i + 1) * size].copy_from_slice(&bits.to_le_bytes()[..size]);
            }
            Ok(size * elems.len())
        }
        _ => Err(shape_error()),
    }
}

fn decode(ty: &Type, bytes: &[u8]) -> RtValue {
    let scalar = |b: &[u8]| {
        let mut buf = [0u8; 8];
        buf[..b.len()].copy_from_slice(b);
        RtValue::Scalar(u64::from_le_bytes(buf))
    };
    match ty {
        Type::Vector(elem, n) => {
            let size = elem.size() as usize;
            RtValue::Agg((0..usize::from(*n)).map(|i| scalar(&bytes[i * size..(i + 1) * size])).collect())
        }
        _ => scalar(bytes),
    }
}

/// Where a pointer of address space `space` points.
fn place(space: AddrSpace, addr: u64) -> Place {
    match space {
        AddrSpace::Global | AddrSpace::Constant => Place::Global(addr),
        AddrSpace::Local => Place::Local(addr as u32),
        AddrSpace::Private => Place::Private(addr as u32),
        AddrSpace::Flat => {
            if addr.wrapping_sub(LOCAL_APERTURE) < APERTURE_SIZE {
                Place::Local((addr - LOCAL_APERTURE) as u32)
            } else if addr.wrapping_sub(PRIVATE_APERTURE) < APERTURE_SIZE {
                Place::Private((addr - PRIVATE_APERTURE) as u32)
            } else {
                Place::Global(addr)
            }
        }
    }
}

/// Where an atomic's pointer points: global or local memory. A flat pointer
/// into private memory is an error, as OpenCL C and HIP leave it undefined
/// (clang marks their atomics as never private, and the hardware's flat
/// atomics do not reach scratch).
fn atomic_place(space: AddrSpace, addr: u64) -> Result<Place, String> {
    match place(space, addr) {
        Place::Private(a) => Err(format!("an atomic through a flat pointer into private memory (address {a:#x}): atomics work on global and local memory")),
        p => Ok(p),
    }
}

/// `addrspacecast`: local/private to flat add the aperture base; flat to X
/// requires the address to be in X's range.
fn addrspace_cast(from: AddrSpace, to: AddrSpace, addr: u64) -> Result<u64, String> {
    use AddrSpace::*;
    match (from, to) {
        (Global | Constant, Global | Constant | Flat) => Ok(addr),
        (Local, Flat) => Ok(LOCAL_APERTURE + (addr & 0xffff_ffff)),
        (Private, Flat) => Ok(PRIVATE_APERTURE + (addr & 0xffff_ffff)),
        (Flat, _) => match (place(Flat, addr), to) {
            (Place::Global(a), Global | Constant) => Ok(a),
            (Place::Local(a), Local) => Ok(u64::from(a)),
            (Place::Private(a), Private) => Ok(u64::from(a)),
            (p, _) => {
                let actual = match p {
                    Place::Global(_) => "global",
                    Place::Local(_) => "local",
                    Place::Private(_) => "private",
                };
                Err(format!("addrspacecast: flat address {addr:#x} is a {actual} address, not a {} one", to.keyword()))
            }
        },
        _ => Err(format!("addrspacecast from {} to {} is not allowed", from.keyword(), to.keyword())),
    }
}

fn cast_value(op: CastOp, from: &Type, to: &Type, v: &RtValue) -> Result<RtValue, String> {
    match op {
        CastOp::AddrSpaceCast => match (from, to, v) {
            (Type::Ptr(a), Type::Ptr(b), RtValue::Scalar(addr)) => {
                Ok(RtValue::Scalar(addrspace_cast(*a, *b, *addr & mask(a.pointer_bits()))?))
            }
            _ => Err(shape_error()),
        },
        CastOp::Bitcast if !(from.is_scalar() && to.is_scalar()) => {
            let mut buf = [0u8; 128];
            let n = encode(v, from, &mut buf)?;
            if n != access_size(to) {
                return Err(format!("bitcast between types of different sizes ({from} to {to})"));
            }
            Ok(decode(to, &buf[..n]))
        }
        _ => match (from, to, v) {
            (Type::Vector(fe, _), Type::Vector(te, _), RtValue::Agg(xs)) => {
                xs.iter().map(|x| cast_value(op, fe, te, x)).collect::<Result<Vec<_>, _>>().map(RtValue::Agg)
            }
            (_, _, RtValue::Scalar(x)) => Ok(RtValue::Scalar(ops::cast(op, from, to, *x)?)),
            _ => Err(shape_error()),
        },
    }
}

fn atomic_apply(op: AtomicOp, w: u32, old: u64, v: u64) -> u64 {
    let m = mask(w);
    let r = match op {
        AtomicOp::Add => old.wrapping_add(v),
        AtomicOp::Sub => old.wrapping_sub(v),
        AtomicOp::SMin => {
            if sext(old, w) <= sext(v, w) {
                old
            } else {
                v
            }
        }
        AtomicOp::SMax => {
            if sext(old, w) >= sext(v, w) {
                old
            } else {
                v
            }
        }
        AtomicOp::UMin => old.min(v),
        AtomicOp::UMax => old.max(v),
        AtomicOp::And => old & v,
        AtomicOp::Or => old | v,
        AtomicOp::Xor => old ^ v,
        AtomicOp::Xchg => v,
        AtomicOp::FAdd | AtomicOp::FMin | AtomicOp::FMax => unreachable!("float atomics are applied by float_binary"),
    };
    r & m
}

fn pointer_space(func: &Function, ptr: &Operand) -> Result<AddrSpace, String> {
    match func.operand_type(ptr) {
        Type::Ptr(space) => Ok(*space),
        other => Err(format!("internal: address has type {other}")),
    }
}

fn check_align(addr: u64, align: u64, size: usize, space: AddrSpace) -> Result<(), String> {
    if align > 1 && !addr.is_multiple_of(align) {
        return Err(format!(
            "misaligned access: {} address {addr:#x} ({size} bytes) is not a multiple of the required alignment {align}",
            space.keyword()
        ));
    }
    Ok(())
}

impl<'m, 'a> Machine<'m, 'a> {
    fn new(module: &'m Module, memory: &'a mut Memory, options: &Options, launch: Launch) -> Machine<'m, 'a> {
        let infos = module
            .functions
            .iter()
            .map(|f| FuncInfo {
                stack_slots: f
                    .blocks
                    .first()
                    .map(|b| {
                        b.insts
                            .iter()
                            .enumerate()
                            .filter_map(|(i, inst)| match inst.op {
                                Op::StackSlot { size, align } => Some((i, size, align)),
                                _ => None,
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
            })
            .collect();
        let by_name = module.functions.iter().enumerate().map(|(i, f)| (f.name.as_str(), i)).collect();
        let data_addrs: HashMap<&str, u64> = module
            .data
            .iter()
            .map(|d| {
                let align = u64::from(d.align);
                (d.name.as_str(), if d.writable { memory.alloc(&d.bytes, align) } else { memory.alloc_read_only(&d.bytes, align) })
            })
            .collect();
        // Addresses in the data, as the loader writes them.
        for d in &module.data {
            for a in &d.addrs {
                if let (Some(&at), Some(&target)) = (data_addrs.get(d.name.as_str()), data_addrs.get(a.target.as_str())) {
                    memory.initialise(at + u64::from(a.offset), &target.wrapping_add(a.addend).to_le_bytes());
                }
            }
        }
        Machine {
            module,
            infos,
            by_name,
            memory,
            options: *options,
            launch,
            group: [0; 3],
            lds_layout: Vec::new(),
            dynamic_lds_base: 0,
            instructions: 0,
            scratch: Vec::new(),
            data_addrs,
        }
    }

    /// Lays out the function's `lds_slot`s in entry-block order from offset 0.
    fn layout_lds(&mut self, func: &Function) -> Result<(), String> {
        let mut offset = 0u64;
        self.lds_layout.clear();
        if let Some(entry) = func.blocks.first() {
            for (i, inst) in entry.insts.iter().enumerate() {
                if let Op::LdsSlot { size, align } = inst.op {
                    let base = align_up(offset, u64::from(align));
                    offset = base + u64::from(size);
                    if offset > u64::from(self.options.max_lds_bytes) {
                        return Err(format!(
                            "@{} needs at least {offset} bytes of LDS, more than the limit of {} bytes",
                            func.name, self.options.max_lds_bytes
                        ));
                    }
                    self.lds_layout.push((i, base as u32, size));
                }
            }
        }
        let base = align_up(offset, 16);
        let end = base + u64::from(self.options.dynamic_lds_bytes);
        if end > u64::from(self.options.max_lds_bytes) {
            return Err(format!(
                "@{} needs {end} bytes of LDS with the launch's {} dynamic bytes, more than the limit of {} bytes",
                func.name, self.options.dynamic_lds_bytes, self.options.max_lds_bytes
            ));
        }
        self.dynamic_lds_base = base as u32;
        if self.options.dynamic_lds_bytes > 0 {
            self.lds_layout.push((usize::MAX, base as u32, self.options.dynamic_lds_bytes));
        }
        Ok(())
    }

    fn new_lds(&self) -> SlotMemory {
        let mut lds = SlotMemory::new();
        for &(_, base, size) in &self.lds_layout {
            lds.push(base, size);
        }
        lds
    }

    /// A frame for `func` with its parameters bound and its stack slots allocated.
    fn new_frame(&self, func: usize, args: Vec<RtValue>, private: &mut SlotMemory, dest: Option<Value>) -> Result<Frame, String> {
        let f = &self.module.functions[func];
        let mut regs = vec![RtValue::Scalar(0); f.values.len()];
        for (param, arg) in f.params.iter().zip(args) {
            if let Some(r) = regs.get_mut(param.value.0 as usize) {
                *r = arg;
            }
        }
        let mark = private.len();
        let mut slot_addrs = Vec::with_capacity(self.infos[func].stack_slots.len());
        for &(_, size, align) in &self.infos[func].stack_slots {
            let base = align_up(private.top() + PRIVATE_GAP, u64::from(align));
            let end = base + u64::from(size);
            if end > u64::from(self.options.max_private_bytes) {
                private.truncate(mark);
                return Err(format!(
                    "private memory exhausted: @{}'s stack slots need {end} bytes, more than the limit of {} bytes per work-item",
                    f.name, self.options.max_private_bytes
                ));
            }
            private.push(base as u32, size);
            slot_addrs.push(base as u32);
        }
        Ok(Frame { func, block: 0, inst: 0, regs, slot_addrs, private_mark: mark, dest })
    }

    fn read(&self, lds: &SlotMemory, private: &SlotMemory, at: Place, out: &mut [u8]) -> Result<(), String> {
        match at {
            Place::Global(addr) => {
                let bytes = self.memory.read(addr, out.len()).map_err(|e| e.message)?;
                out.copy_from_slice(bytes);
                Ok(())
            }
            Place::Local(addr) => lds.read("local", addr, out),
            Place::Private(addr) => private.read("private", addr, out),
        }
    }

    fn write(&mut self, lds: &mut SlotMemory, private: &mut SlotMemory, at: Place, bytes: &[u8]) -> Result<(), String> {
        match at {
            Place::Global(addr) => self.memory.write(addr, bytes).map_err(|e| e.message),
            Place::Local(addr) => lds.write("local", addr, bytes),
            Place::Private(addr) => private.write("private", addr, bytes),
        }
    }

    /// Runs a work-item until it reaches a barrier or returns from its outermost
    /// frame. On error the work-item's position is the failing instruction.
    fn run_item(&mut self, wi: &mut WorkItem, lds: &mut SlotMemory) -> Result<State, String> {
        let module = self.module;
        let WorkItem { id, frames, private, result: final_result, .. } = wi;
        'frames: loop {
            let depth = frames.len();
            let Some(frame) = frames.last_mut() else { return Ok(State::Done) };
            let func = &module.functions[frame.func];
            let block = &func.blocks[frame.block];
            // Straight-line instructions of the current block.
            while let Some(inst) = block.insts.get(frame.inst) {
                if self.instructions >= self.options.max_instructions {
                    return Err(format!("instruction limit reached ({} instructions executed)", self.instructions));
                }
                self.instructions += 1;
                let regs = &frame.regs;
                let value: RtValue = match &inst.op {
                    Op::Const(c) => RtValue::Scalar(c.bits),
                    Op::Binary { op, ty, lhs, rhs } => {
                        let op = *op;
                        match (val(regs, lhs), val(regs, rhs)) {
                            (RtValue::Scalar(a), RtValue::Scalar(b)) => RtValue::Scalar(if op.is_float() {
                                ops::float_binary(op, ty, a, b)?
                            } else {
                                ops::int_binary(op, width(ty), a, b)?
                            }),
                            (a, b) => lanewise2(ty, &a, &b, &|t, x, y| {
                                if op.is_float() {
                                    ops::float_binary(op, t, x, y)
                                } else {
                                    ops::int_binary(op, width(t), x, y)
                                }
                            })?,
                        }
                    }
                    Op::Unary { op, ty, arg } => lanewise1(ty, &val(regs, arg), &|t, x| ops::unary(*op, t, x))?,
                    Op::Ternary { op, ty, a, b, c } => match (val(regs, a), val(regs, b), val(regs, c)) {
                        (RtValue::Scalar(x), RtValue::Scalar(y), RtValue::Scalar(z)) => RtValue::Scalar(ops::ternary(*op, width(ty), x, y, z)),
                        (RtValue::Agg(xs), RtValue::Agg(ys), RtValue::Agg(zs)) => {
                            let w = width(ty.element());
                            let mut out = Vec::with_capacity(xs.len());
                            for ((x, y), z) in xs.iter().zip(&ys).zip(&zs) {
                                let (RtValue::Scalar(x), RtValue::Scalar(y), RtValue::Scalar(z)) = (x, y, z) else { return Err(shape_error().into()) };
                                out.push(RtValue::Scalar(ops::ternary(*op, w, *x, *y, *z)));
                            }
                            RtValue::Agg(out)
                        }
                        _ => return Err(shape_error().into()),
                    },
                    Op::Fma { ty, a, b, c } => {
                        let (a, b, c) = (val(regs, a), val(regs, b), val(regs, c));
                        match (ty, &a, &b, &c) {
                            (_, RtValue::Scalar(x), RtValue::Scalar(y), RtValue::Scalar(z)) => RtValue::Scalar(ops::fma(ty, *x, *y, *z)?),
                            (Type::Vector(elem, _), RtValue::Agg(xs), RtValue::Agg(ys), RtValue::Agg(zs)) => {
                                let mut out = Vec::with_capacity(xs.len());
                                for ((x, y), z) in xs.iter().zip(ys).zip(zs) {
                                    match (x, y, z) {
                                        (RtValue::Scalar(x), RtValue::Scalar(y), RtValue::Scalar(z)) => {
                                            out.push(RtValue::Scalar(ops::fma(elem, *x, *y, *z)?))
                                        }
                                        _ => return Err(shape_error()),
                                    }
                                }
                                RtValue::Agg(out)
                            }
                            _ => return Err(shape_error()),
                        }
                    }
                    Op::Icmp { pred, ty, lhs, rhs } => {
                        lanewise2(ty, &val(regs, lhs), &val(regs, rhs), &|t, x, y| Ok(u64::from(ops::icmp(*pred, width(t), x, y))))?
                    }
                    Op::Fcmp { pred, ty, lhs, rhs } => {
                        lanewise2(ty, &val(regs, lhs), &val(regs, rhs), &|t, x, y| Ok(u64::from(ops::fcmp(*pred, t, x, y))))?
                    }
                    Op::Select { cond, if_true, if_false, .. } => match (val(regs, cond), val(regs, if_true), val(regs, if_false)) {
                        // A vector condition chooses element by element.
                        (RtValue::Agg(cs), RtValue::Agg(ts), RtValue::Agg(fs)) if cs.len() == ts.len() && ts.len() == fs.len() => RtValue::Agg(
                            cs.iter().zip(ts).zip(fs).map(|((c, t), f)| if matches!(c, RtValue::Scalar(b) if b & 1 != 0) { t } else { f }).collect(),
                        ),
                        (RtValue::Scalar(c), t, f) => {
                            if c & 1 != 0 {
                                t
                            } else {
                                f
                            }
                        }
                        _ => return Err(shape_error()),
                    },
                    Op::Cast { op, from, arg, to } => cast_value(*op, from, to, &val(regs, arg))?,
                    Op::Load { ty, ptr, align, .. } => {
                        let space = pointer_space(func, ptr)?;
                        let addr = scalar(regs, ptr)?;
                        let size = access_size(ty);
                        check_align(addr, u64::from(*align), size, space)?;
                        let mut buf = [0u8; 128];
                        self.read(lds, private, place(space, addr), &mut buf[..size])?;
                        decode(ty, &buf[..size])
                    }
                    Op::Store { ty, value, ptr, align, .. } => {
                        let space = pointer_space(func, ptr)?;
                        let addr = scalar(regs, ptr)?;
                        let mut buf = [0u8; 128];
                        let size = encode(&val(regs, value), ty, &mut buf)?;
                        check_align(addr, u64::from(*align), size, space)?;
                        self.write(lds, private, place(space, addr), &buf[..size])?;
                        frame.inst += 1;
                        continue;
                    }
                    Op::PtrAdd { ptr, offset } => {
                        let space = pointer_space(func, ptr)?;
                        let base = scalar(regs, ptr)?;
                        let off = scalar(regs, offset)?;
                        let off = match func.operand_type(offset) {
                            Type::I32 => sext(off, 32) as u64,
                            _ => off,
                        };
                        RtValue::Scalar(base.wrapping_add(off) & mask(space.pointer_bits()))
                    }
                    Op::AtomicRmw { op, ty, ptr, value, .. } => {
                        let space = pointer_space(func, ptr)?;
                        let addr = scalar(regs, ptr)?;
                        let v = scalar(regs, value)?;
                        let size = ty.size() as usize;
                        check_align(addr, size as u64, size, space)?;
                        let at = atomic_place(space, addr)?;
                        let mut buf = [0u8; 8];
                        // An exchange stores whatever was there before (an
                        // atomic store is one): into local bytes
                        // never written it returns 0, where the hardware
                        // returns what the memory happened to hold.
                        let unwritten = *op == AtomicOp::Xchg
                            && match at {
                                Place::Local(a) => !lds.is_written("local", a, size),
                                Place::Private(_) | Place::Global(_) => false,
                            };
                        if !unwritten {
                            self.read(lds, private, at, &mut buf[..size])?;
                        }
                        let old = u64::from_le_bytes(buf);
                        let new = match op.float_op() {
                            Some(b) => ops::float_binary(b, ty, old, v)?,
                            None => atomic_apply(*op, width(ty), old, v),
                        };
                        self.write(lds, private, at, &new.to_le_bytes()[..size])?;
                        RtValue::Scalar(old)
                    }
                    Op::CmpXchg { ty, ptr, expected, new, .. } => {
                        let space = pointer_space(func, ptr)?;
                        let addr = scalar(regs, ptr)?;
                        let (expected, new) = (scalar(regs, expected)?, scalar(regs, new)?);
                        let size = ty.size() as usize;
                        check_align(addr, size as u64, size, space)?;
                        let at = atomic_place(space, addr)?;
                        let mut buf = [0u8; 8];
                        self.read(lds, private, at, &mut buf[..size])?;
                        let old = u64::from_le_bytes(buf);
                        if old == expected & mask(width(ty)) {
                            self.write(lds, private, at, &new.to_le_bytes()[..size])?;
                        }
                        RtValue::Scalar(old)
                    }
                    Op::StackSlot { .. } => {
                        let slots = &self.infos[frame.func].stack_slots;
                        match slots.iter().position(|s| s.0 == frame.inst).filter(|_| frame.block == 0) {
                            Some(k) => RtValue::Scalar(u64::from(frame.slot_addrs[k])),
                            None => return Err("internal: stack_slot outside the entry block".to_string()),
                        }
                    }
                    // Work-items run one at a time, in an order that respects
                    // every fence: a fence changes nothing.
                    Op::Fence { .. } => RtValue::Scalar(0),
                    Op::Wave { op: WaveOp::LaneId, .. } => RtValue::Scalar(u64::from(self.linear_id(*id) % self.options.wave_size)),
                    Op::Wave { op: WaveOp::WaveSize, .. } => RtValue::Scalar(u64::from(self.options.wave_size)),
                    Op::Wave { .. } => return Ok(State::Wave),
                    Op::DynamicLds => RtValue::Scalar(u64::from(self.dynamic_lds_base)),
                    Op::DataAddr { name, .. } => match self.data_addrs.get(name.as_str()) {
                        Some(&a) => RtValue::Scalar(a),
                        None => return Err(format!("'data_addr' of '@{name}', which is not the module's data")),
                    },
                    Op::LdsSlot { .. } => {
                        match self.lds_layout.iter().find(|s| s.0 == frame.inst).filter(|_| frame.block == 0 && depth == 1) {
                            Some(&(_, offset, _)) => RtValue::Scalar(u64::from(offset)),
                            None => return Err("internal: lds_slot outside the kernel's entry block".to_string()),
                        }
                    }
                    Op::Call { callee, args } => {
                        let Some(&target) = self.by_name.get(callee.as_str()) else {
                            return Err(format!("call to undefined function '@{callee}'"));
                        };
                        if depth >= self.options.max_call_depth {
                            return Err(format!("call depth limit reached ({} nested calls)", self.options.max_call_depth));
                        }
                        let args: Vec<RtValue> = args.iter().map(|a| val(regs, a)).collect();
                        let new = self.new_frame(target, args, private, inst.result)?;
                        frames.push(new);
                        continue 'frames;
                    }
                    Op::Builtin { kind, dim } => {
                        let d = usize::from(*dim).min(2);
                        let v: u64 = match kind {
                            Builtin::WorkitemId => u64::from(id[d]),
                            Builtin::WorkgroupId => u64::from(self.group[d]),
                            Builtin::WorkgroupSize => u64::from(self.launch.block[d]),
                            Builtin::GridSize => u64::from(self.launch.grid[d]),
                            Builtin::GlobalOffset => u64::from(self.launch.offset[d]),
                            Builtin::WorkDim => u64::from(self.launch.work_dim),
                            Builtin::PrintfBuffer => self.launch.printf_buffer,
                        };
                        RtValue::Scalar(v)
                    }
                    Op::Barrier => return Ok(State::Barrier),
                    Op::Extract { agg, index } => match val(regs, agg) {
                        RtValue::Agg(mut elems) if (*index as usize) < elems.len() => elems.swap_remove(*index as usize),
                        _ => return Err(shape_error()),
                    },
                    Op::Insert { agg, value, index } => match val(regs, agg) {
                        RtValue::Agg(mut elems) if (*index as usize) < elems.len() => {
                            elems[*index as usize] = val(regs, value);
                            RtValue::Agg(elems)
                        }
                        _ => return Err(shape_error()),
                    },
                    Op::Make { elems, .. } => RtValue::Agg(elems.iter().map(|e| val(regs, e)).collect()),
                };
                if let Some(r) = inst.result {
                    if let Some(slot) = frame.regs.get_mut(r.0 as usize) {
                        *slot = value;
                    }
                }
                frame.inst += 1;
            }
            // The terminator.
            if self.instructions >= self.options.max_instructions {
                return Err(format!("instruction limit reached ({} instructions executed)", self.instructions));
            }
            self.instructions += 1;
            match &block.term {
                Terminator::Br(call) => self.jump(frame, func, call),
                Terminator::BrIf { cond, then_to, else_to } => {
                    let c = scalar(&frame.regs, cond)? & 1 != 0;
                    self.jump(frame, func, if c { then_to } else { else_to })
                }
                Terminator::Ret(value) => {
                    let value = value.as_ref().map(|v| val(&frame.regs, v));
                    let (mark, dest) = (frame.private_mark, frame.dest);
                    frames.pop();
                    private.truncate(mark);
                    match frames.last_mut() {
                        None => {
                            *final_result = value;
                            return Ok(State::Done);
                        }
                        Some(caller) => {
                            if let (Some(d), Some(v)) = (dest, value) {
                                caller.regs[d.0 as usize] = v;
                            }
                            caller.inst += 1;
                        }
                    }
                }
                Terminator::Unreachable => return Err("'unreachable' was executed".to_string()),
            }
        }
    }

    /// A branch: block arguments are read first, then assigned (parallel copy).
    fn jump(&mut self, frame: &mut Frame, func: &Function, call: &BlockCall) {
        self.scratch.clear();
        self.scratch.extend(call.args.iter().map(|a| val(&frame.regs, a)));
        let target = &func.blocks[call.block.0 as usize];
        for (p, v) in target.params.iter().zip(self.scratch.drain(..)) {
            frame.regs[p.0 as usize] = v;
        }
        frame.block = call.block.0 as usize;
        frame.inst = 0;
    }

    fn location(&self, frame: &Frame) -> (String, String, usize, String, Span) {
        let func = &self.module.functions[frame.func];
        let block = &func.blocks[frame.block];
        let (text, span) = match block.insts.get(frame.inst) {
            Some(inst) => (InstDisplay { func, inst }.to_string(), inst.span),
            None => (TermDisplay { func, term: &block.term }.to_string(), block.term_span),
        };
        (func.name.clone(), block.name.clone(), frame.inst, text, span)
    }

    /// An error located at the work-item's current instruction.
    fn error_at(&self, wi: &WorkItem, message: String) -> InterpError {
        let mut e = InterpError::new(message);
        if let Some(frame) = wi.frames.last() {
            let (func, block, inst, text, span) = self.location(frame);
            e.function = Some(func);
            e.block = Some(block);
            e.inst = Some(inst);
            e.inst_text = Some(text);
            e.span = span;
        }
        for frame in wi.frames.iter().rev().skip(1).take(16) {
            let (func, block, inst, text, _) = self.location(frame);
            e.call_stack.push(format!("@{func}, block '{block}', instruction {}: `{text}`", inst + 1));
        }
        if wi.frames.len() > 17 {
            e.call_stack.push(format!("... ({} more frames)", wi.frames.len() - 17));
        }
        e.work_item = Some(wi.id);
        e.work_group = Some(self.group);
        e
    }

    /// A work-item's linear id in its work-group (x fastest): its wave is
    /// this divided by the wave size, its lane the remainder.
    fn linear_id(&self, id: [u32; 3]) -> u32 {
        let b = self.launch.block;
        id[0] + b[0] * (id[1] + b[1] * id[2])
    }

    /// Runs the collective wave operations every lane of some wave waits at:
    /// each wave whose live lanes (those that have not returned) all wait at
    /// the same operation executes it together. Returns whether any ran; a
    /// wave whose live lanes wait at different places is an error.
    fn run_wave_ops(&mut self, items: &mut [WorkItem]) -> Result<bool, InterpError> {
        let size = self.options.wave_size.max(1) as usize;
        let mut ran = false;
        for start in (0..items.len()).step_by(size) {
            let wave = start..(start + size).min(items.len());
            let Some(first) = wave.clone().find(|&i| items[i].state == State::Wave) else { continue };
            let key = Self::barrier_key(&items[first]);
            for i in wave.clone() {
                let other = &items[i];
                let message = match other.state {
                    State::Done | State::Wave if other.state == State::Done || Self::barrier_key(other) == key => continue,
                    State::Done | State::Wave => "waits at a different wave operation (or at one in a different call)",
                    State::Barrier => "waits at a barrier instead",
                    State::Running => unreachable!("every work-item has stopped"),
                };
                return Err(self.error_at(
                    &items[first],
                    format!("wave divergence: work-item {} waits at this wave operation, but work-item {} of its wave {message}", dims(items[first].id), dims(other.id)),
                ));
            }
            // The operation and every live lane's operands.
            let frame = items[first].frames.last().expect("waiting work-items have frames");
            let inst = &self.module.functions[frame.func].blocks[frame.block].insts[frame.inst];
            let Op::Wave { op, args, ty: wave_ty } = &inst.op else { unreachable!("stopped at a wave operation") };
            let live: Vec<usize> = wave.clone().filter(|&i| items[i].state == State::Wave).collect();
            let lane_of = |i: usize| (i - start) as u64;
            let operand = |items: &[WorkItem], i: usize, k: usize| val(&items[i].frames.last().expect("frames").regs, &args[k]);
            let lane_arg = |items: &[WorkItem], i: usize| -> Result<usize, String> {
                let RtValue::Scalar(l) = operand(items, i, 1) else { return Err("internal: lane operand".into()) };
                let l = l as u32 as usize;
                if l >= size || !live.contains(&(start + l)) {
                    return Err(format!("'{}' reads lane {l}, which is not an active lane of the wave", op.mnemonic()));
                }
                Ok(start + l)
            };
            let mut results: Vec<RtValue> = Vec::with_capacity(live.len());
            let fail = |this: &Self, items: &[WorkItem], i: usize, m: String| this.error_at(&items[i], m);
            let mut fadd_sums: Option<Result<Vec<u64>, String>> = None;
            for &i in &live {
                let r = match op {
                    WaveOp::ReadFirstLane => operand(items, live[0], 0),
                    WaveOp::ReadLane => {
                        let first_lane = lane_arg(items, live[0]).map_err(|m| fail(self, items, i, m))?;
                        let mine = lane_arg(items, i).map_err(|m| fail(self, items, i, m))?;
                        if mine != first_lane {
                            return Err(fail(self, items, i, format!("'readlane' needs the same lane in every lane of the wave ({} and {})", first_lane - start, mine - start)));
                        }
                        operand(items, mine, 0)
                    }
                    WaveOp::Shuffle => {
                        let src = lane_arg(items, i).map_err(|m| fail(self, items, i, m))?;
                        operand(items, src, 0)
                    }
                    WaveOp::Ballot => RtValue::Scalar(
                        live.iter().filter(|&&j| matches!(operand(items, j, 0), RtValue::Scalar(b) if b & 1 != 0)).fold(0u64, |m, &j| m | 1 << lane_of(j)),
                    ),
                    WaveOp::Reduce(BinOp::FAdd) | WaveOp::InclusiveScan(BinOp::FAdd) | WaveOp::ExclusiveScan(BinOp::FAdd) => {
                        // Rounding makes the order part of the result: the
                        // one docs/mir.md defines (a pairwise tree, or the
                        // Hillis-Steele steps), over every lane of the wave
                        // with -0 in the inactive ones.
                        let sums = fadd_sums.get_or_insert_with(|| {
                            let mut lanes = vec![None; size];
                            for &j in &live {
                                lanes[lane_of(j) as usize] = Some(operand(items, j, 0));
                            }
                            fadd_wave(*op, wave_ty, &lanes)
                        });
                        let sums = sums.as_ref().map_err(|m| fail(self, items, i, m.clone()))?;
                        RtValue::Scalar(sums[lane_of(i) as usize])
                    }
                    WaveOp::Reduce(b) | WaveOp::InclusiveScan(b) | WaveOp::ExclusiveScan(b) => {
                        // In lane order, from the identity.
                        let upto = live.iter().filter(|&&j| match op {
                            WaveOp::Reduce(_) => true,
                            WaveOp::InclusiveScan(_) => j <= i,
                            _ => j < i,
                        });
                        let mut acc = WaveOp::identity(*b, wave_ty);
                        for &j in upto {
                            let RtValue::Scalar(x) = operand(items, j, 0) else { return Err(fail(self, items, i, "internal: wave value".into())) };
                            let combined = if b.is_float() { ops::float_binary(*b, wave_ty, acc, x) } else { ops::int_binary(*b, width(wave_ty), acc, x) };
                            acc = combined.map_err(|m| fail(self, items, i, m))?;
                        }
                        RtValue::Scalar(acc)
                    }
                    WaveOp::LaneId | WaveOp::WaveSize => unreachable!("not collective"),
                };
                results.push(r);
            }
            for (&i, r) in live.iter().zip(results) {
                let wi = &mut items[i];
                let frame = wi.frames.last_mut().expect("frames");
                if let Some(res) = inst.result {
                    frame.regs[res.0 as usize] = r;
                }
                frame.inst += 1;
                wi.state = State::Running;
            }
            self.instructions += 1;
            ran = true;
        }
        Ok(ran)
    }

    fn barrier_key(wi: &WorkItem) -> Vec<(usize, usize, usize)> {
        wi.frames.iter().map(|f| (f.func, f.block, f.inst)).collect()
    }

    /// Runs one work-group to completion.
    fn run_group(&mut self, items: &mut [WorkItem]) -> Result<(), InterpError> {
        let mut lds = self.new_lds();
        loop {
            for wi in items.iter_mut() {
                if wi.state == State::Running {
                    match self.run_item(wi, &mut lds) {
                        Ok(state) => wi.state = state,
                        Err(message) => return Err(self.error_at(wi, message)),
                    }
                }
            }
            if self.run_wave_ops(items)? {
                continue;
            }
            let Some(first) = items.iter().position(|w| w.state == State::Barrier) else {
                return Ok(()); // everyone returned
            };
            if let Some(done) = items.iter().find(|w| w.state == State::Done) {
                let message = format!(
                    "barrier divergence: work-item {} waits at this barrier, but work-item {} has returned and will never reach it",
                    dims(items[first].id),
                    dims(done.id)
                );
                return Err(self.error_at(&items[first], message));
            }
            let key = Self::barrier_key(&items[first]);
            if let Some(other) = items.iter().find(|w| Self::barrier_key(w) != key) {
                let (f, b, i, text, _) = self.location(other.frames.last().expect("waiting work-items have frames"));
                let message = format!(
                    "barrier divergence: work-item {} waits at this barrier, but work-item {} waits at a different one (@{f}, block '{b}', instruction {}: `{text}`{})",
                    dims(items[first].id),
                    dims(other.id),
                    i + 1,
                    if other.frames.len() != items[first].frames.len() { ", at a different call depth" } else { "" }
                );
                return Err(self.error_at(&items[first], message));
            }
            for wi in items.iter_mut() {
                wi.state = State::Running;
                if let Some(frame) = wi.frames.last_mut() {
                    frame.inst += 1;
                }
            }
        }
    }

    fn new_item(&self, func: usize, id: [u32; 3], args: &[RtValue]) -> Result<WorkItem, InterpError> {
        let mut wi = WorkItem { id, frames: Vec::new(), private: SlotMemory::new(), state: State::Running, result: None };
        match self.new_frame(func, args.to_vec(), &mut wi.private, None) {
            Ok(frame) => wi.frames.push(frame),
            Err(message) => {
                let mut e = InterpError::new(message);
                e.function = Some(self.module.functions[func].name.clone());
                e.work_item = Some(id);
                e.work_group = Some(self.group);
                return Err(e);
            }
        }
        Ok(wi)
    }
}

fn check_args(func: &Function, args: &[RtValue]) -> Result<(), InterpError> {
    if args.len() != func.params.len() {
        return Err(InterpError::new(format!(
            "@{} takes {} argument{}, but {} were given",
            func.name,
            func.params.len(),
            if func.params.len() == 1 { "" } else { "s" },
            args.len()
        )));
    }
    for (param, arg) in func.params.iter().zip(args) {
        let ty = func.value_type(param.value);
        arg.check_type(ty).map_err(|why| {
            InterpError::new(format!("argument '%{}' of @{} ({ty}): {why}", func.value_name(param.value), func.name))
        })?;
    }
    Ok(())
}

fn check_launch(launch: &Launch) -> Result<(), InterpError> {
    for (d, name) in ["x", "y", "z"].into_iter().enumerate() {
        let (g, b) = (launch.grid[d], launch.block[d]);
        if g == 0 || b == 0 {
            return Err(InterpError::new(format!(
                "grid and block sizes must be at least 1 in every dimension (grid {}, block {})",
                dims(launch.grid),
                dims(launch.block)
            )));
        }
        if g % b != 0 {
            return Err(InterpError::new(format!(
                "grid size {g} in {name} is not a multiple of the work-group size {b} (the grid counts work-items and must be a whole number of work-groups)"
            )));
        }
    }
    let per_group: u64 = launch.block.iter().map(|&b| u64::from(b)).product();
    if per_group > 1024 {
        return Err(InterpError::new(format!(
            "work-group size {} has {per_group} work-items, more than the maximum of 1024",
            dims(launch.block)
        )));
    }
    Ok(())
}

pub(super) fn run_kernel(
    module: &Module,
    kernel: &str,
    launch: &Launch,
    args: &[RtValue],
    memory: &mut Memory,
    options: &Options,
) -> Result<RunStats, InterpError> {
    let Some(index) = module.functions.iter().position(|f| f.name == kernel) else {
        let names: Vec<String> = module.kernels().map(|k| format!("@{}", k.name)).collect();
        return Err(InterpError::new(format!(
            "no kernel named '@{kernel}' (the module's kernels: {})",
            if names.is_empty() { "none".to_string() } else { names.join(", ") }
        )));
    };
    let func = &module.functions[index];
    if func.kind != FuncKind::Kernel {
        return Err(InterpError::new(format!("'@{kernel}' is a device function, not a kernel")));
    }
    if func.blocks.is_empty() {
        return Err(InterpError::new(format!("@{kernel} has no blocks")));
    }
    check_launch(launch)?;
    check_attrs(func, launch)?;
    check_args(func, args)?;
    let mut m = Machine::new(module, memory, options, *launch);
    m.layout_lds(func).map_err(InterpError::new)?;
    let groups = [launch.grid[0] / launch.block[0], launch.grid[1] / launch.block[1], launch.grid[2] / launch.block[2]];
    let mut stats = RunStats::default();
    for gz in 0..groups[2] {
        for gy in 0..groups[1] {
            for gx in 0..groups[0] {
                m.group = [gx, gy, gz];
                let mut items = Vec::new();
                for lz in 0..launch.block[2] {
                    for ly in 0..launch.block[1] {
                        for lx in 0..launch.block[0] {
                            items.push(m.new_item(index, [lx, ly, lz], args)?);
                        }
                    }
                }
                m.run_group(&mut items)?;
                stats.work_items += items.len() as u64;
                stats.work_groups += 1;
            }
        }
    }
    stats.instructions = m.instructions;
    Ok(stats)
}

pub(super) fn call_function(
    module: &Module,
    function: &str,
    args: &[RtValue],
    memory: &mut Memory,
    options: &Options,
) -> Result<Option<RtValue>, InterpError> {
    let Some(index) = module.functions.iter().position(|f| f.name == function) else {
        return Err(InterpError::new(format!("no function named '@{function}'")));
    };
    let func = &module.functions[index];
    if func.blocks.is_empty() {
        return Err(InterpError::new(format!("@{function} has no blocks")));
    }
    check_args(func, args)?;
    let mut m = Machine::new(module, memory, options, Launch::new([1; 3], [1; 3]));
    m.layout_lds(func).map_err(InterpError::new)?;
    let mut items = vec![m.new_item(index, [0; 3], args)?];
    m.run_group(&mut items)?;
    Ok(items.pop().and_then(|w| w.result))
}

/// A launch must honour the kernel's `reqd_work_group_size` and
/// `max_work_group_size` (as the runtime refuses other launches).
fn check_attrs(func: &Function, launch: &Launch) -> Result<(), InterpError> {
    let [x, y, z] = launch.block;
    if let Some(r) = func.attrs.reqd_work_group_size {
        if r != launch.block {
            return Err(InterpError::new(format!(
                "@{} requires work-groups of {} x {} x {} (reqd_work_group_size), the launch has {x} x {y} x {z}",
                func.name, r[0], r[1], r[2]
            )));
        }
    }
    if let Some(m) = func.attrs.max_work_group_size {
        if u64::from(x) * u64::from(y) * u64::from(z) > u64::from(m) {
            return Err(InterpError::new(format!("@{} allows at most {m} work-items per work-group (max_work_group_size), the launch has {x} x {y} x {z}", func.name)));
        }
    }
    Ok(())
}

/// A wave's `fadd` reduction or scan, lane by lane, in the order docs/mir.md
/// defines: `lanes[l]` is lane l's value, `None` for a lane that is not active
/// (it holds -0, the identity). A reduction adds partners `l ^ k` for k = 1,
/// 2, 4, ... (a pairwise tree over the lanes, the same sum in every lane); a
/// scan adds lane `l - k` to every lane l ≥ k for the same k, an exclusive one
/// after moving every value one lane up.
fn fadd_wave(op: WaveOp, ty: &Type, lanes: &[Option<RtValue>]) -> Result<Vec<u64>, String> {
    let identity = WaveOp::identity(BinOp::FAdd, ty);
    let size = lanes.len();
    let mut y = lanes
        .iter()
        .map(|v| match v {
            None => Ok(identity),
            Some(RtValue::Scalar(x)) => Ok(*x),
            Some(_) => Err("internal: wave value".to_string()),
        })
        .collect::<Result<Vec<u64>, String>>()?;
    let add = |a: u64, b: u64| ops::float_binary(BinOp::FAdd, ty, a, b);
    if matches!(op, WaveOp::ExclusiveScan(_)) {
        y.rotate_right(1);
        y[0] = identity;
    }
    let mut k = 1;
    while k < size {
        let before = y.clone();
        for (l, v) in y.iter_mut().enumerate() {
            match op {
                WaveOp::Reduce(_) => *v = add(before[l ^ k], before[l])?,
                _ if l >= k => *v = add(before[l - k], before[l])?,
                _ => {}
            }
        }
        k *= 2;
    }
    Ok(y)
}
