//! The MIR data structures: modules, functions, blocks, instructions, operands.
//!
//! A function owns an arena of SSA values (`ValueInfo`: name and type); blocks refer
//! to values by index ([`Value`]). Blocks take parameters instead of phis: a branch
//! passes one operand per parameter of its target. The textual form is described in
//! docs/mir.md and produced by the `Display` impls in `print.rs`.

use crate::abi::{AddrSpace, Type};

/// A source position: byte offset of the start of the construct in the parsed text,
/// and its length. Builder-made instructions carry [`Span::NONE`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Span {
    pub start: u32,
    pub len: u32,
}

impl Span {
    /// "No source location" (instructions made by the builder API).
    pub const NONE: Span = Span { start: u32::MAX, len: 0 };

    /// A span covering `start..end` byte offsets.
    pub fn new(start: usize, end: usize) -> Span {
        Span { start: start as u32, len: end.saturating_sub(start) as u32 }
    }

    /// True unless this is [`Span::NONE`].
    pub fn is_known(self) -> bool {
        self.start != u32::MAX
    }

    /// The byte range, for diagnostics.
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..(self.start + self.len) as usize
    }
}

/// An SSA value: an index into [`Function::values`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Value(pub u32);

/// A basic block: an index into [`Function::blocks`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlockId(pub u32);

/// What the function knows about one SSA value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueInfo {
    /// The name without the leading `%`; unique within its function.
    pub name: String,
    pub ty: Type,
}

/// A compile-time constant of a scalar type, stored as its bit pattern (zero-extended
/// to 64 bits; floats as their IEEE bits, f16 in the low 16 bits).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Const {
    pub ty: Type,
    pub bits: u64,
}

impl Const {
    /// An integer constant; `value` is truncated to the type's width.
    pub fn int(ty: Type, value: i64) -> Const {
        let bits = ty.bits();
        let mask = if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 };
        Const { ty, bits: (value as u64) & mask }
    }

    /// An f32 constant.
    pub fn f32(value: f32) -> Const {
        Const { ty: Type::F32, bits: u64::from(value.to_bits()) }
    }

    /// An f64 constant.
    pub fn f64(value: f64) -> Const {
        Const { ty: Type::F64, bits: value.to_bits() }
    }
}

/// An instruction operand: an SSA value or an inline constant.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    Value(Value),
    Const(Const),
}

impl From<Value> for Operand {
    fn from(v: Value) -> Operand {
        Operand::Value(v)
    }
}

impl From<Const> for Operand {
    fn from(c: Const) -> Operand {
        Operand::Const(c)
    }
}

/// Two-operand arithmetic and logic, on scalars or element-wise on vectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    /// High half of the signed full-width product.
    MulHiS,
    /// High half of the unsigned full-width product.
    MulHiU,
    SDiv,
    UDiv,
    SRem,
    URem,
    And,
    Or,
    Xor,
    Shl,
    LShr,
    AShr,
    SMin,
    SMax,
    UMin,
    UMax,
    FAdd,
    FSub,
    FMul,
    FDiv,
    FMin,
    FMax,
    /// Rotate left / right; the amount is taken modulo the width.
    RotL,
    RotR,
    /// Saturating signed / unsigned add and subtract.
    AddSatS,
    AddSatU,
    SubSatS,
    SubSatU,
    /// Low 32 bits of the product of the low 24 bits, sign- or zero-extended
    /// (i32 only: OpenCL's `mul24`, one instruction).
    Mul24S,
    Mul24U,
    /// `copysign`: the magnitude of the first operand with the sign of the second.
    CopySign,
    /// `ldexp T x, e`: x · 2^e rounded once, `e` an i32 (of the same lanes).
    Ldexp,
}

impl BinOp {
    /// Every binary operation, in the order of their mnemonics' table.
    pub const ALL: [BinOp; 35] = [
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::MulHiS,
        BinOp::MulHiU,
        BinOp::SDiv,
        BinOp::UDiv,
        BinOp::SRem,
        BinOp::URem,
        BinOp::And,
        BinOp::Or,
        BinOp::Xor,
        BinOp::Shl,
        BinOp::LShr,
        BinOp::AShr,
        BinOp::SMin,
        BinOp::SMax,
        BinOp::UMin,
        BinOp::UMax,
        BinOp::FAdd,
        BinOp::FSub,
        BinOp::FMul,
        BinOp::FDiv,
        BinOp::FMin,
        BinOp::FMax,
        BinOp::RotL,
        BinOp::RotR,
        BinOp::AddSatS,
        BinOp::AddSatU,
        BinOp::SubSatS,
        BinOp::SubSatU,
        BinOp::Mul24S,
        BinOp::Mul24U,
        BinOp::CopySign,
        BinOp::Ldexp,
    ];

    /// The text mnemonic.
    pub fn mnemonic(self) -> &'static str {
        match self {
            BinOp::Add => "add",
            BinOp::Sub => "sub",
            BinOp::Mul => "mul",
            BinOp::MulHiS => "mulhi.s",
            BinOp::MulHiU => "mulhi.u",
            BinOp::SDiv => "sdiv",
            BinOp::UDiv => "udiv",
            BinOp::SRem => "srem",
            BinOp::URem => "urem",
            BinOp::And => "and",
            BinOp::Or => "or",
            BinOp::Xor => "xor",
            BinOp::Shl => "shl",
            BinOp::LShr => "lshr",
            BinOp::AShr => "ashr",
            BinOp::SMin => "smin",
            BinOp::SMax => "smax",
            BinOp::UMin => "umin",
            BinOp::UMax => "umax",
            BinOp::FAdd => "fadd",
            BinOp::FSub => "fsub",
            BinOp::FMul => "fmul",
            BinOp::FDiv => "fdiv",
            BinOp::FMin => "fmin",
            BinOp::FMax => "fmax",
            BinOp::RotL => "rotl",
            BinOp::RotR => "rotr",
            BinOp::AddSatS => "addsat.s",
            BinOp::AddSatU => "addsat.u",
            BinOp::SubSatS => "subsat.s",
            BinOp::SubSatU => "subsat.u",
            BinOp::Mul24S => "mul24.s",
            BinOp::Mul24U => "mul24.u",
            BinOp::CopySign => "copysign",
            BinOp::Ldexp => "ldexp",
        }
    }

    /// True for the operations on floating-point types.
    pub fn is_float(self) -> bool {
        matches!(self, BinOp::FAdd | BinOp::FSub | BinOp::FMul | BinOp::FDiv | BinOp::FMin | BinOp::FMax | BinOp::CopySign | BinOp::Ldexp)
    }

    /// The type of the second operand when the first (and the result) is
    /// `ty`: `ty` itself, except `ldexp`'s exponent (i32, lane for lane).
    pub fn rhs_type(self, ty: &Type) -> Type {
        match (self, ty) {
            (BinOp::Ldexp, Type::Vector(_, n)) => Type::Vector(Box::new(Type::I32), *n),
            (BinOp::Ldexp, _) => Type::I32,
            _ => ty.clone(),
        }
    }

    /// True for the integer operations that are also defined on i1 (logic only).
    pub fn allows_i1(self) -> bool {
        matches!(self, BinOp::And | BinOp::Or | BinOp::Xor)
    }
}

/// One-operand operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// Bitwise complement (integers, including i1).
    Not,
    /// Count of set bits (integers).
    Popcount,
    /// Count of leading zero bits; the bit width for zero (integers).
    Clz,
    /// Count of trailing zero bits; the bit width for zero (integers).
    Ctz,
    FNeg,
    FAbs,
    /// Correctly rounded square root.
    Sqrt,
    /// Round toward negative infinity.
    Floor,
    /// Round toward positive infinity.
    Ceil,
    /// Round toward zero.
    Trunc,
    /// Round to the nearest integer, ties to even (`v_rndne`).
    RoundEven,
    /// Absolute value of a signed integer (wrapping: `abs` of the minimum is itself).
    Abs,
    /// Bits in reverse order (integers).
    BitReverse,
    /// Bytes in reverse order (i16, i32, i64).
    Bswap,
    // Transcendentals (docs/mir.md "Transcendentals"): an accurate form with a
    // stated error bound and an `.approx` form, one hardware instruction.
    Exp2,
    Exp2Approx,
    Log2,
    Log2Approx,
    Exp,
    ExpApprox,
    Log,
    LogApprox,
    SinApprox,
    CosApprox,
    Sin,
    Cos,
    Rcp,
    RcpApprox,
    Rsqrt,
    RsqrtApprox,
}

impl UnOp {
    pub const ALL: [UnOp; 30] = [
        UnOp::Not,
        UnOp::Popcount,
        UnOp::Clz,
        UnOp::Ctz,
        UnOp::FNeg,
        UnOp::FAbs,
        UnOp::Sqrt,
        UnOp::Floor,
        UnOp::Ceil,
        UnOp::Trunc,
        UnOp::RoundEven,
        UnOp::Abs,
        UnOp::BitReverse,
        UnOp::Bswap,
        UnOp::Exp2,
        UnOp::Exp2Approx,
        UnOp::Log2,
        UnOp::Log2Approx,
        UnOp::Exp,
        UnOp::ExpApprox,
        UnOp::Log,
        UnOp::LogApprox,
        UnOp::SinApprox,
        UnOp::CosApprox,
        UnOp::Sin,
        UnOp::Cos,
        UnOp::Rcp,
        UnOp::RcpApprox,
        UnOp::Rsqrt,
        UnOp::RsqrtApprox,
    ];

    pub fn mnemonic(self) -> &'static str {
        match self {
            UnOp::Not => "not",
            UnOp::Popcount => "popcount",
            UnOp::Clz => "clz",
            UnOp::Ctz => "ctz",
            UnOp::FNeg => "fneg",
            UnOp::FAbs => "fabs",
            UnOp::Sqrt => "sqrt",
            UnOp::Floor => "floor",
            UnOp::Ceil => "ceil",
            UnOp::Trunc => "ftrunc",
            UnOp::RoundEven => "roundeven",
            UnOp::Abs => "abs",
            UnOp::BitReverse => "bitreverse",
            UnOp::Bswap => "bswap",
            UnOp::Exp2 => "exp2",
            UnOp::Exp2Approx => "exp2.approx",
            UnOp::Log2 => "log2",
            UnOp::Log2Approx => "log2.approx",
            UnOp::Exp => "exp",
            UnOp::ExpApprox => "exp.approx",
            UnOp::Log => "log",
            UnOp::LogApprox => "log.approx",
            UnOp::SinApprox => "sin.approx",
            UnOp::CosApprox => "cos.approx",
            UnOp::Sin => "sin",
            UnOp::Cos => "cos",
            UnOp::Rcp => "rcp",
            UnOp::RcpApprox => "rcp.approx",
            UnOp::Rsqrt => "rsqrt",
            UnOp::RsqrtApprox => "rsqrt.approx",
        }
    }

    /// The transcendentals: results within a tolerance of the interpreter's
    /// (`interp::ops::transcendental_acceptable`), not bit-exact.
    pub fn is_transcendental(self) -> bool {
        matches!(
            self,
            UnOp::Exp2
                | UnOp::Exp2Approx
                | UnOp::Log2
                | UnOp::Log2Approx
                | UnOp::Exp
                | UnOp::ExpApprox
                | UnOp::Log
                | UnOp::LogApprox
                | UnOp::SinApprox
                | UnOp::CosApprox
                | UnOp::Sin
                | UnOp::Cos
                | UnOp::Rcp
                | UnOp::RcpApprox
                | UnOp::Rsqrt
                | UnOp::RsqrtApprox
        )
    }

    /// Defined on f64 as well as f16/f32 (the others have no short f64 form).
    pub fn allows_f64(self) -> bool {
        !self.is_transcendental() || matches!(self, UnOp::Rcp | UnOp::RcpApprox | UnOp::Rsqrt | UnOp::RsqrtApprox)
    }

    pub fn is_float(self) -> bool {
        !matches!(self, UnOp::Not | UnOp::Popcount | UnOp::Clz | UnOp::Ctz | UnOp::Abs | UnOp::BitReverse | UnOp::Bswap)
    }
}

/// Integer comparison predicates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IntPred {
    Eq,
    Ne,
    Slt,
    Sle,
    Sgt,
    Sge,
    Ult,
    Ule,
    Ugt,
    Uge,
}

impl IntPred {
    pub const ALL: [IntPred; 10] = [
        IntPred::Eq,
        IntPred::Ne,
        IntPred::Slt,
        IntPred::Sle,
        IntPred::Sgt,
        IntPred::Sge,
        IntPred::Ult,
        IntPred::Ule,
        IntPred::Ugt,
        IntPred::Uge,
    ];

    pub fn mnemonic(self) -> &'static str {
        match self {
            IntPred::Eq => "eq",
            IntPred::Ne => "ne",
            IntPred::Slt => "slt",
            IntPred::Sle => "sle",
            IntPred::Sgt => "sgt",
            IntPred::Sge => "sge",
            IntPred::Ult => "ult",
            IntPred::Ule => "ule",
            IntPred::Ugt => "ugt",
            IntPred::Uge => "uge",
        }
    }
}

/// Float comparison predicates: `o*` are false when either operand is NaN, `u*` true.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FloatPred {
    Oeq,
    One,
    Olt,
    Ole,
    Ogt,
    Oge,
    Ord,
    Ueq,
    Une,
    Ult,
    Ule,
    Ugt,
    Uge,
    Uno,
}

impl FloatPred {
    pub const ALL: [FloatPred; 14] = [
        FloatPred::Oeq,
        FloatPred::One,
        FloatPred::Olt,
        FloatPred::Ole,
        FloatPred::Ogt,
        FloatPred::Oge,
        FloatPred::Ord,
        FloatPred::Ueq,
        FloatPred::Une,
        FloatPred::Ult,
        FloatPred::Ule,
        FloatPred::Ugt,
        FloatPred::Uge,
        FloatPred::Uno,
    ];

    pub fn mnemonic(self) -> &'static str {
        match self {
            FloatPred::Oeq => "oeq",
            FloatPred::One => "one",
            FloatPred::Olt => "olt",
            FloatPred::Ole => "ole",
            FloatPred::Ogt => "ogt",
            FloatPred::Oge => "oge",
            FloatPred::Ord => "ord",
            FloatPred::Ueq => "ueq",
            FloatPred::Une => "une",
            FloatPred::Ult => "ult",
            FloatPred::Ule => "ule",
            FloatPred::Ugt => "ugt",
            FloatPred::Uge => "uge",
            FloatPred::Uno => "uno",
        }
    }
}

/// Conversions between types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CastOp {
    Trunc,
    ZExt,
    SExt,
    FpTrunc,
    FpExt,
    /// Float to unsigned integer: rounds toward zero, saturates, NaN gives 0.
    FpToUi,
    /// Float to signed integer: rounds toward zero, saturates, NaN gives 0.
    FpToSi,
    UiToFp,
    SiToFp,
    /// Same-size reinterpretation of bits (not pointers).
    Bitcast,
    PtrToInt,
    IntToPtr,
    /// Between flat and a specific address space.
    AddrSpaceCast,
}

impl CastOp {
    pub const ALL: [CastOp; 13] = [
        CastOp::Trunc,
        CastOp::ZExt,
        CastOp::SExt,
        CastOp::FpTrunc,
        CastOp::FpExt,
        CastOp::FpToUi,
        CastOp::FpToSi,
        CastOp::UiToFp,
        CastOp::SiToFp,
        CastOp::Bitcast,
        CastOp::PtrToInt,
        CastOp::IntToPtr,
        CastOp::AddrSpaceCast,
    ];

    pub fn mnemonic(self) -> &'static str {
        match self {
            CastOp::Trunc => "trunc",
            CastOp::ZExt => "zext",
            CastOp::SExt => "sext",
            CastOp::FpTrunc => "fptrunc",
            CastOp::FpExt => "fpext",
            CastOp::FpToUi => "fptoui",
            CastOp::FpToSi => "fptosi",
            CastOp::UiToFp => "uitofp",
            CastOp::SiToFp => "sitofp",
            CastOp::Bitcast => "bitcast",
            CastOp::PtrToInt => "ptrtoint",
            CastOp::IntToPtr => "inttoptr",
            CastOp::AddrSpaceCast => "addrspacecast",
        }
    }
}

/// Wave-level operations (docs/mir.md "Wave operations"): the lanes of a
/// wave (work-items `w·S .. w·S+S-1` by linear local id, S the wave size)
/// exchange values; every lane of the wave that has not returned must execute
/// the same one together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WaveOp {
    /// `lane_id` -> i32: the lane's index in its wave.
    LaneId,
    /// `wave_size` -> i32: 32 or 64 (the target's).
    WaveSize,
    /// `readfirstlane T x`: x of the wave's lowest active lane.
    ReadFirstLane,
    /// `readlane T x, lane`: x of lane `lane` (the same in every lane, active).
    ReadLane,
    /// `ballot c` -> i64: bit L set when lane L is active and c is true there.
    Ballot,
    /// `shuffle T x, lane`: x of lane `lane` (per lane; that lane active).
    Shuffle,
    /// `wave_reduce OP T x`: OP over x of every active lane (the same in all).
    Reduce(BinOp),
    /// `wave_scan_incl OP T x`: OP over x of the active lanes up to this one.
    InclusiveScan(BinOp),
    /// `wave_scan_excl OP T x`: OP over x of the active lanes below this one
    /// (the identity in the lowest).
    ExclusiveScan(BinOp),
}

impl WaveOp {
    /// The operations reductions and scans take, on i32/i64 (the integer
    /// ones) and f32/f64 (fadd, fmin, fmax).
    pub const REDUCIBLE: [BinOp; 11] =
        [BinOp::Add, BinOp::And, BinOp::Or, BinOp::Xor, BinOp::SMin, BinOp::SMax, BinOp::UMin, BinOp::UMax, BinOp::FAdd, BinOp::FMin, BinOp::FMax];

    /// The identity of a reduction's operation on `ty` (its bits): what an
    /// exclusive scan gives the lowest lane.
    pub fn identity(op: BinOp, ty: &Type) -> u64 {
        let wide = ty.bits() == 64;
        let (ones, sign) = if wide { (u64::MAX, 1u64 << 63) } else { (0xffff_ffff, 0x8000_0000) };
        match op {
            BinOp::And | BinOp::UMin => ones,
            BinOp::SMin => ones >> 1,
            BinOp::SMax => sign,
            // minNum/maxNum ignore a NaN: the quiet NaN is their identity.
            BinOp::FMin | BinOp::FMax if wide => 0x7ff8_0000_0000_0000,
            BinOp::FMin | BinOp::FMax => 0x7fc0_0000,
            // x + -0 is x for every x, +0 included.
            BinOp::FAdd => sign,
            _ => 0,
        }
    }

    pub fn mnemonic(self) -> &'static str {
        match self {
            WaveOp::LaneId => "lane_id",
            WaveOp::WaveSize => "wave_size",
            WaveOp::ReadFirstLane => "readfirstlane",
            WaveOp::ReadLane => "readlane",
            WaveOp::Ballot => "ballot",
            WaveOp::Shuffle => "shuffle",
            WaveOp::Reduce(_) => "wave_reduce",
            WaveOp::InclusiveScan(_) => "wave_scan_incl",
            WaveOp::ExclusiveScan(_) => "wave_scan_excl",
        }
    }

    /// Needs the other lanes' values (the interpreter runs the wave's lanes to it together).
    pub fn is_collective(self) -> bool {
        !matches!(self, WaveOp::LaneId | WaveOp::WaveSize)
    }
}

/// The ordering of an atomic or a fence (LLVM's and C++'s orderings).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemOrder {
    Relaxed,
    Acquire,
    Release,
    AcqRel,
    SeqCst,
}

impl MemOrder {
    pub const ALL: [MemOrder; 5] = [MemOrder::Relaxed, MemOrder::Acquire, MemOrder::Release, MemOrder::AcqRel, MemOrder::SeqCst];

    pub fn mnemonic(self) -> &'static str {
        match self {
            MemOrder::Relaxed => "relaxed",
            MemOrder::Acquire => "acquire",
            MemOrder::Release => "release",
            MemOrder::AcqRel => "acq_rel",
            MemOrder::SeqCst => "seq_cst",
        }
    }

    /// Makes earlier memory operations visible before it (release side).
    pub fn releases(self) -> bool {
        matches!(self, MemOrder::Release | MemOrder::AcqRel | MemOrder::SeqCst)
    }

    /// Makes later memory operations see what it synchronised with (acquire side).
    pub fn acquires(self) -> bool {
        matches!(self, MemOrder::Acquire | MemOrder::AcqRel | MemOrder::SeqCst)
    }
}

/// The set of work-items an atomic or fence synchronises with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MemScope {
    Wavefront,
    Workgroup,
    Agent,
    System,
}

impl MemScope {
    pub const ALL: [MemScope; 4] = [MemScope::Wavefront, MemScope::Workgroup, MemScope::Agent, MemScope::System];

    pub fn mnemonic(self) -> &'static str {
        match self {
            MemScope::Wavefront => "wavefront",
            MemScope::Workgroup => "workgroup",
            MemScope::Agent => "agent",
            MemScope::System => "system",
        }
    }
}

/// Ordering and scope of an atomic (`relaxed agent` unless written).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Sync {
    pub order: MemOrder,
    pub scope: MemScope,
}

impl Default for Sync {
    fn default() -> Sync {
        Sync { order: MemOrder::Relaxed, scope: MemScope::Agent }
    }
}

/// Read-modify-write atomic operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AtomicOp {
    Add,
    Sub,
    SMin,
    SMax,
    UMin,
    UMax,
    And,
    Or,
    Xor,
    Xchg,
    /// Floating-point add, minNum, maxNum (f32, f64), as `fadd`/`fmin`/`fmax`.
    FAdd,
    FMin,
    FMax,
}

impl AtomicOp {
    pub const ALL: [AtomicOp; 13] = [
        AtomicOp::Add,
        AtomicOp::Sub,
        AtomicOp::SMin,
        AtomicOp::SMax,
        AtomicOp::UMin,
        AtomicOp::UMax,
        AtomicOp::And,
        AtomicOp::Or,
        AtomicOp::Xor,
        AtomicOp::Xchg,
        AtomicOp::FAdd,
        AtomicOp::FMin,
        AtomicOp::FMax,
    ];

    pub fn mnemonic(self) -> &'static str {
        match self {
            AtomicOp::Add => "add",
            AtomicOp::Sub => "sub",
            AtomicOp::SMin => "smin",
            AtomicOp::SMax => "smax",
            AtomicOp::UMin => "umin",
            AtomicOp::UMax => "umax",
            AtomicOp::And => "and",
            AtomicOp::Or => "or",
            AtomicOp::Xor => "xor",
            AtomicOp::Xchg => "xchg",
            AtomicOp::FAdd => "fadd",
            AtomicOp::FMin => "fmin",
            AtomicOp::FMax => "fmax",
        }
    }

    /// The floating-point operations (on f32 and f64).
    pub fn is_float(self) -> bool {
        matches!(self, AtomicOp::FAdd | AtomicOp::FMin | AtomicOp::FMax)
    }

    /// The binary operation a float atomic applies.
    pub fn float_op(self) -> Option<BinOp> {
        match self {
            AtomicOp::FAdd => Some(BinOp::FAdd),
            AtomicOp::FMin => Some(BinOp::FMin),
            AtomicOp::FMax => Some(BinOp::FMax),
            _ => None,
        }
    }
}

/// Dispatch geometry queries; each takes a dimension 0..=2 (x, y, z) and gives
/// i32, except `work_dim`, which has none (its dimension is 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Builtin {
    /// The work-item's id within its work-group.
    WorkitemId,
    /// The work-group's id within the grid.
    WorkgroupId,
    /// Work-items per work-group.
    WorkgroupSize,
    /// Work-items in the grid.
    GridSize,
    /// The launch's global offset (OpenCL's `get_global_offset`; the low 32 bits
    /// of the code object's hidden global-offset argument).
    GlobalOffset,
    /// The number of dimensions the launch was enqueued with, 1 to 3 (OpenCL's
    /// `get_work_dim`; the hidden grid-dimensions argument).
    WorkDim,
    /// The address of the launch's printf buffer (a `ptr<global>`; the code
    /// object's hidden printf-buffer argument, which ROCm's runtime fills for
    /// kernels that have one; docs/mir.md "Printf").
    PrintfBuffer,
}

impl Builtin {
    pub const ALL: [Builtin; 7] =
        [Builtin::WorkitemId, Builtin::WorkgroupId, Builtin::WorkgroupSize, Builtin::GridSize, Builtin::GlobalOffset, Builtin::WorkDim, Builtin::PrintfBuffer];

    pub fn mnemonic(self) -> &'static str {
        match self {
            Builtin::WorkitemId => "workitem_id",
            Builtin::WorkgroupId => "workgroup_id",
            Builtin::WorkgroupSize => "workgroup_size",
            Builtin::GridSize => "grid_size",
            Builtin::GlobalOffset => "global_offset",
            Builtin::WorkDim => "work_dim",
            Builtin::PrintfBuffer => "printf_buffer",
        }
    }

    /// Whether the query names no dimension.
    pub fn dimensionless(self) -> bool {
        matches!(self, Builtin::WorkDim | Builtin::PrintfBuffer)
    }

    /// The type of the query's result.
    pub fn result_type(self) -> Type {
        match self {
            Builtin::PrintfBuffer => Type::Ptr(AddrSpace::Global),
            _ => Type::I32,
        }
    }

    /// Whether the query reads a hidden kernel argument (through the kernarg
    /// segment in kernels, the implicit-argument pointer in device functions).
    pub fn reads_hidden_args(self) -> bool {
        matches!(self, Builtin::GlobalOffset | Builtin::WorkDim | Builtin::PrintfBuffer)
    }
}

/// The operation of a non-terminator instruction. Types written in the text are
/// stored here; operand types are known from the values.
/// Integer operations of three operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TernOp {
    /// `fshl T a, b, s`: the high half of `a:b` shifted left by `s` modulo the width.
    FshL,
    /// `fshr T a, b, s`: the low half of `a:b` shifted right by `s` modulo the width.
    FshR,
    /// `mad24.s i32 a, b, c`: the sign-extended low 24 bits of a and b multiplied, plus c (low 32 bits).
    Mad24S,
    /// `mad24.u i32 a, b, c`: as `mad24.s` with zero extension.
    Mad24U,
}

impl TernOp {
    pub const ALL: [TernOp; 4] = [TernOp::FshL, TernOp::FshR, TernOp::Mad24S, TernOp::Mad24U];

    pub fn mnemonic(self) -> &'static str {
        match self {
            TernOp::FshL => "fshl",
            TernOp::FshR => "fshr",
            TernOp::Mad24S => "mad24.s",
            TernOp::Mad24U => "mad24.u",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// `const T literal`
    Const(Const),
    /// `binop T a, b`
    Binary { op: BinOp, ty: Type, lhs: Operand, rhs: Operand },
    /// `unop T a`
    Unary { op: UnOp, ty: Type, arg: Operand },
    /// `fma T a, b, c`: a*b+c with one rounding.
    Fma { ty: Type, a: Operand, b: Operand, c: Operand },
    /// `ternop T a, b, c` (integers)
    Ternary { op: TernOp, ty: Type, a: Operand, b: Operand, c: Operand },
    /// `icmp pred T a, b` -> i1
    Icmp { pred: IntPred, ty: Type, lhs: Operand, rhs: Operand },
    /// `fcmp pred T a, b` -> i1
    Fcmp { pred: FloatPred, ty: Type, lhs: Operand, rhs: Operand },
    /// `select T cond, a, b`
    Select { ty: Type, cond: Operand, if_true: Operand, if_false: Operand },
    /// `cast FROM x to TO`
    Cast { op: CastOp, from: Type, arg: Operand, to: Type },
    /// `load [volatile] T ptr [, align N]`
    Load { ty: Type, ptr: Operand, align: u32, volatile: bool },
    /// `store [volatile] T value, ptr [, align N]`
    Store { ty: Type, value: Operand, ptr: Operand, align: u32, volatile: bool },
    /// `ptradd ptr, offset`: byte offset (i32 sign-extended, or i64).
    PtrAdd { ptr: Operand, offset: Operand },
    /// `atomic op T ptr, value` -> old value
    AtomicRmw { op: AtomicOp, ty: Type, ptr: Operand, value: Operand, sync: Sync },
    /// `cmpxchg T ptr, expected, new` -> old value
    CmpXchg { ty: Type, ptr: Operand, expected: Operand, new: Operand, sync: Sync },
    /// `stack_slot SIZE, align A` -> ptr<private>: per-invocation storage.
    StackSlot { size: u32, align: u32 },
    /// `lds_slot SIZE, align A` -> ptr<local>: per-work-group storage (kernels only).
    LdsSlot { size: u32, align: u32 },
    /// `call @name(args)`; result type is the callee's.
    Call { callee: String, args: Vec<Operand> },
    /// `workitem_id x` etc.
    Builtin { kind: Builtin, dim: u8 },
    /// `barrier`: work-group execution and memory barrier.
    Barrier,
    /// `fence ORDER SCOPE`: orders memory operations around it.
    Fence { order: MemOrder, scope: MemScope },
    /// A wave-level operation; `ty` is the value type (i32 for lane_id and
    /// wave_size, i64 for ballot); `args` its operands.
    Wave { op: WaveOp, ty: Type, args: Vec<Operand> },
    /// `dynamic_lds` -> ptr<local>: the start of the LDS a launch adds to the
    /// kernel's `lds_slot`s (its size is given at launch; kernels only).
    DynamicLds,
    /// `data_addr @name` -> ptr<constant>, or ptr<global> when the data is
    /// writable (`space`, from the module's `data @name` line: the
    /// verifier checks the two agree): the address of the module's object.
    DataAddr { name: String, space: AddrSpace },
    /// `extract agg, INDEX`: a vector element or a struct field.
    Extract { agg: Operand, index: u32 },
    /// `insert agg, value, INDEX`
    Insert { agg: Operand, value: Operand, index: u32 },
    /// `make T a, b, ...`: build a vector or struct from its parts.
    Make { ty: Type, elems: Vec<Operand> },
}

/// A non-terminator instruction.
#[derive(Clone, Debug)]
pub struct Inst {
    pub result: Option<Value>,
    pub op: Op,
    pub span: Span,
}

/// A branch target with the operands for the target's parameters.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BlockCall {
    pub block: BlockId,
    pub args: Vec<Operand>,
}

/// How a block ends.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Terminator {
    /// `br target(args)`
    Br(BlockCall),
    /// `brif cond, then(args), else(args)`
    BrIf { cond: Operand, then_to: BlockCall, else_to: BlockCall },
    /// `ret` / `ret value`
    Ret(Option<Operand>),
    /// `unreachable`: executing it is an error.
    Unreachable,
}

impl Terminator {
    /// The blocks this terminator may jump to, in order.
    pub fn successors(&self) -> Vec<BlockId> {
        match self {
            Terminator::Br(call) => vec![call.block],
            Terminator::BrIf { then_to, else_to, .. } => vec![then_to.block, else_to.block],
            Terminator::Ret(_) | Terminator::Unreachable => Vec::new(),
        }
    }
}

/// A basic block: parameters, straight-line instructions and one terminator.
#[derive(Clone, Debug)]
pub struct Block {
    pub name: String,
    pub params: Vec<Value>,
    pub insts: Vec<Inst>,
    pub term: Terminator,
    pub term_span: Span,
    /// Where the block's label is, for diagnostics.
    pub span: Span,
}

/// A kernel (entry point, launched over a grid) or a device function (called).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FuncKind {
    Kernel,
    Device,
}

/// A function parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    pub value: Value,
    /// Passed in SGPRs (device functions only; must be uniform at every call).
    pub inreg: bool,
    /// What the source said about a kernel argument, for the code object's
    /// metadata (kernels only).
    pub info: ArgInfo,
}

/// A kernel argument's source-level description, as OpenCL's
/// `clGetKernelArgInfo` reports it and clang writes it in the metadata:
/// `const`, `restrict`, `volatile`, what the kernel does through a `restrict`
/// pointer (`readonly`, `writeonly`), and the type's name in the source.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArgInfo {
    pub is_const: bool,
    pub is_restrict: bool,
    pub is_volatile: bool,
    pub access: Option<ArgAccess>,
    /// The pointee's alignment (`align N`), which places a `ptr<local>`
    /// argument's LDS (`.pointee_align`).
    pub pointee_align: Option<u32>,
    pub type_name: Option<String>,
}

/// `.actual_access` of a pointer argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgAccess {
    ReadOnly,
    WriteOnly,
}

impl ArgInfo {
    pub fn is_empty(&self) -> bool {
        *self == ArgInfo::default()
    }
}

/// Launch requirements of a kernel (written after its parameters), reflected
/// in the code object's metadata.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelAttrs {
    /// `reqd_work_group_size(X, Y, Z)`: every launch uses exactly this
    /// work-group size (`workgroup_size` is then a constant).
    pub reqd_work_group_size: Option<[u32; 3]>,
    /// `max_work_group_size(N)`: launches use at most N work-items per group.
    pub max_work_group_size: Option<u32>,
    /// `work_group_size_hint(X, Y, Z)`: the size launches are expected to use.
    pub work_group_size_hint: Option<[u32; 3]>,
    /// `min_waves_per_simd(N)`: registers are kept to what lets N waves of
    /// the kernel run on one SIMD (docs/regalloc.md, "Occupancy").
    pub min_waves_per_simd: Option<u32>,
}

impl KernelAttrs {
    /// The most work-items a work-group of the kernel may have.
    pub fn max_flat_work_group_size(&self) -> u32 {
        let reqd = self.reqd_work_group_size.map(|[x, y, z]| x.saturating_mul(y).saturating_mul(z));
        reqd.or(self.max_work_group_size).unwrap_or(1024)
    }
}

/// A kernel or device function. `blocks[0]` is the entry block; its parameters are
/// none (the function's parameters are in `params`).
#[derive(Clone, Debug)]
pub struct Function {
    pub name: String,
    pub kind: FuncKind,
    /// The calling convention a device function is called with (docs/abi.md).
    pub conv: CallConv,
    /// Kernels only (default for device functions).
    pub attrs: KernelAttrs,
    /// Whether the MIR optimiser may copy a device function's body into its
    /// callers (`noinline`, `alwaysinline` in the text; src/opt/inline.rs).
    pub inline: InlineHint,
    pub params: Vec<Param>,
    pub ret: Option<Type>,
    pub blocks: Vec<Block>,
    pub values: Vec<ValueInfo>,
    pub span: Span,
}

/// What a device function says about being inlined into its callers
/// (docs/mir.md, "Modules and functions"): by default the optimiser decides
/// by size; `noinline` keeps every call a call; `alwaysinline` asks for the
/// body at every call the inliner can take (not through recursion).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum InlineHint {
    #[default]
    Auto,
    Never,
    Always,
}

/// The calling convention of a device function: ours, or LLVM 22's (for
/// functions compiled by, or called from, LLVM; `callconv(llvm)` in the text).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CallConv {
    #[default]
    AmdgpuCg,
    Llvm,
}

impl Function {
    /// The block that defines each value (a parameter or an instruction's
    /// result), indexed like `values`; `usize::MAX` for function parameters.
    pub fn defining_blocks(&self) -> Vec<usize> {
        let mut def_block = vec![usize::MAX; self.values.len()];
        for (b, block) in self.blocks.iter().enumerate() {
            for p in &block.params {
                def_block[p.0 as usize] = b;
            }
            for inst in &block.insts {
                if let Some(r) = inst.result {
                    def_block[r.0 as usize] = b;
                }
            }
        }
        def_block
    }

    /// The type of a value.
    pub fn value_type(&self, v: Value) -> &Type {
        &self.values[v.0 as usize].ty
    }

    /// The name of a value (without `%`).
    pub fn value_name(&self, v: Value) -> &str {
        &self.values[v.0 as usize].name
    }

    /// The type of an operand.
    pub fn operand_type<'a>(&'a self, operand: &'a Operand) -> &'a Type {
        match operand {
            Operand::Value(v) => self.value_type(*v),
            Operand::Const(c) => &c.ty,
        }
    }

    /// Finds a block by name.
    pub fn block_by_name(&self, name: &str) -> Option<BlockId> {
        self.blocks.iter().position(|b| b.name == name).map(|i| BlockId(i as u32))
    }

    /// The block with this id.
    pub fn block(&self, id: BlockId) -> &Block {
        &self.blocks[id.0 as usize]
    }
}

/// A compilation unit: kernels and device functions that may call each other.
#[derive(Clone, Debug, Default)]
pub struct Module {
    pub functions: Vec<Function>,
    /// The devices the module is compiled for, from its
    /// `target device_triples = "..."` line (docs/mir.md): target ids like
    /// `amdgcn-amd-amdhsa--gfx90a:xnack-`, each checked by the parser. Empty when
    /// the module names none (the command line's `--mcpu` decides).
    pub device_triples: Vec<String>,
    /// The module's printf formats, from its `printf_format "..."` lines, as
    /// the code object's `amdhsa.printf` metadata lists them
    /// (`ID:N:SIZE1:...:SIZEN:FORMAT`; docs/mir.md "Printf").
    pub printf_formats: Vec<String>,
    /// The module's data, from its `data` lines (docs/mir.md "Module
    /// data"): the code object's `.rodata` objects, or `.data`/`.bss` ones
    /// when writable.
    pub data: Vec<Data>,
}

/// An object of the module: `data @NAME, align A, [writable,] bytes "HEX"`
/// (or `zeros N`), addressed by `data_addr @NAME`: read-only (OpenCL's
/// `__constant` tables) unless writable (program-scope `__global`
/// variables, whose contents persist from launch to launch of the loaded
/// code object).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Data {
    pub name: String,
    /// A power of two, at least 1.
    pub align: u32,
    pub bytes: Vec<u8>,
    /// Kernels may store to it: `data_addr` gives a `ptr<global>` instead
    /// of a `ptr<constant>`, and nothing folds its loads.
    pub writable: bool,
    /// Addresses it holds (`addr OFFSET @NAME + ADDEND`), in offset order:
    /// the eight bytes at each offset are zero in `bytes` and hold the
    /// address once the code object is loaded.
    pub addrs: Vec<DataAddr>,
}

/// An address held in module data: `offset` bytes into the object, the
/// address of the data object `target` plus `addend` bytes (OpenCL's
/// `__global int *p = &table[2];`), written when the code object is
/// loaded (an `R_AMDGPU_RELATIVE64` dynamic relocation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataAddr {
    pub offset: u32,
    pub target: String,
    pub addend: u64,
}

impl Data {
    /// Whether any of `len` bytes at `start` belongs to an address the
    /// loader writes (loads of them cannot be folded into `bytes`).
    pub fn holds_address_in(&self, start: u64, len: u64) -> bool {
        self.addrs.iter().any(|a| u64::from(a.offset) < start + len && start < u64::from(a.offset) + 8)
    }

    /// The address space `data_addr` of this object points into.
    pub fn space(&self) -> AddrSpace {
        if self.writable {
            AddrSpace::Global
        } else {
            AddrSpace::Constant
        }
    }
}

impl Module {
    /// A module of `functions` that names no devices.
    pub fn new(functions: Vec<Function>) -> Module {
        Module { functions, device_triples: Vec::new(), printf_formats: Vec::new(), data: Vec::new() }
    }

    /// Finds a data object by name (without `@`).
    pub fn data(&self, name: &str) -> Option<&Data> {
        self.data.iter().find(|d| d.name == name)
    }

    /// Finds a function by name (without `@`).
    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|f| f.name == name)
    }

    /// Every function by name, the first where a name repeats (what
    /// [`Module::function`] finds): for a pass that looks callees up per
    /// call, where searching the module each time is quadratic.
    pub fn functions_by_name(&self) -> hashbrown::HashMap<&str, &Function> {
        let mut by_name = hashbrown::HashMap::with_capacity(self.functions.len());
        for f in &self.functions {
            by_name.entry(f.name.as_str()).or_insert(f);
        }
        by_name
    }

    /// The kernels, in order.
    pub fn kernels(&self) -> impl Iterator<Item = &Function> {
        self.functions.iter().filter(|f| f.kind == FuncKind::Kernel)
    }
}

/// The type of the value that an instruction with this operation produces, given
/// the operand types (`None`: no result). The verifier checks operands first; this
/// function only derives and never fails on well-typed input.
pub fn result_type(op: &Op, func: &Function, module: Option<&Module>) -> Option<Type> {
    match op {
        Op::Const(c) => Some(c.ty.clone()),
        Op::Binary { ty, .. } | Op::Unary { ty, .. } | Op::Fma { ty, .. } | Op::Ternary { ty, .. } | Op::Select { ty, .. } => Some(ty.clone()),
        Op::Icmp { ty, .. } | Op::Fcmp { ty, .. } => Some(match ty {
            Type::Vector(_, n) => Type::Vector(Box::new(Type::I1), *n),
            _ => Type::I1,
        }),
        Op::Cast { to, .. } => Some(to.clone()),
        Op::Load { ty, .. } | Op::AtomicRmw { ty, .. } | Op::CmpXchg { ty, .. } => Some(ty.clone()),
        Op::Store { .. } | Op::Barrier | Op::Fence { .. } => None,
        Op::DynamicLds => Some(Type::Ptr(AddrSpace::Local)),
        Op::DataAddr { space, .. } => Some(Type::Ptr(*space)),
        Op::Wave { ty, .. } => Some(ty.clone()),
        Op::PtrAdd { ptr, .. } => Some(func.operand_type(ptr).clone()),
        Op::StackSlot { .. } => Some(Type::Ptr(AddrSpace::Private)),
        Op::LdsSlot { .. } => Some(Type::Ptr(AddrSpace::Local)),
        Op::Call { callee, .. } => module.and_then(|m| m.function(callee)).and_then(|f| f.ret.clone()),
        Op::Builtin { kind, .. } => Some(kind.result_type()),
        Op::Extract { agg, index } => match func.operand_type(agg) {
            Type::Vector(elem, _) => Some((**elem).clone()),
            Type::Struct(fields) => fields.get(*index as usize).cloned(),
            _ => None,
        },
        Op::Insert { agg, .. } => Some(func.operand_type(agg).clone()),
        Op::Make { ty, .. } => Some(ty.clone()),
    }
}

/// An operation's operands: inline up to three (every operation but calls,
/// wave operations and `make`), so the many walks over operands allocate
/// nothing.
pub type Operands<T> = smallvec::SmallVec<[T; 3]>;

/// The operands of an operation, in order, as references of the kind the
/// match binds (shared or mutable): one list for [`op_operands`] and
/// [`op_operands_mut`].
macro_rules! operands_of {
    ($op:expr) => {
        match $op {
            Op::Const(_) | Op::StackSlot { .. } | Op::LdsSlot { .. } | Op::Builtin { .. } | Op::Barrier | Op::Fence { .. } | Op::DynamicLds | Op::DataAddr { .. } => Operands::new(),
            Op::Binary { lhs, rhs, .. } | Op::Icmp { lhs, rhs, .. } | Op::Fcmp { lhs, rhs, .. } => smallvec::smallvec![lhs, rhs],
            Op::Unary { arg, .. } | Op::Cast { arg, .. } => smallvec::smallvec![arg],
            Op::Fma { a, b, c, .. } | Op::Ternary { a, b, c, .. } => smallvec::smallvec![a, b, c],
            Op::Select { cond, if_true, if_false, .. } => smallvec::smallvec![cond, if_true, if_false],
            Op::Load { ptr, .. } => smallvec::smallvec![ptr],
            Op::Store { value, ptr, .. } => smallvec::smallvec![value, ptr],
            Op::PtrAdd { ptr, offset } => smallvec::smallvec![ptr, offset],
            Op::AtomicRmw { ptr, value, .. } => smallvec::smallvec![ptr, value],
            Op::CmpXchg { ptr, expected, new, .. } => smallvec::smallvec![ptr, expected, new],
            Op::Call { args, .. } | Op::Wave { args, .. } => args.into_iter().collect(),
            Op::Extract { agg, .. } => smallvec::smallvec![agg],
            Op::Insert { agg, value, .. } => smallvec::smallvec![agg, value],
            Op::Make { elems, .. } => elems.into_iter().collect(),
        }
    };
}

/// The operands an operation reads, in order.
pub fn op_operands(op: &Op) -> Operands<&Operand> {
    operands_of!(op)
}

/// The operands an operation reads, in order, for rewriting.
pub fn op_operands_mut(op: &mut Op) -> Operands<&mut Operand> {
    operands_of!(op)
}

/// The operands a terminator reads, for rewriting.
pub fn terminator_operands_mut(term: &mut Terminator) -> Vec<&mut Operand> {
    match term {
        Terminator::Br(call) => call.args.iter_mut().collect(),
        Terminator::BrIf { cond, then_to, else_to } => {
            std::iter::once(cond).chain(then_to.args.iter_mut()).chain(else_to.args.iter_mut()).collect()
        }
        Terminator::Ret(value) => value.iter_mut().collect(),
        Terminator::Unreachable => Vec::new(),
    }
}

/// The operands a terminator reads (condition, branch arguments, returned value).
pub fn terminator_operands(term: &Terminator) -> Vec<&Operand> {
    match term {
        Terminator::Br(call) => call.args.iter().collect(),
        Terminator::BrIf { cond, then_to, else_to } => {
            std::iter::once(cond).chain(then_to.args.iter()).chain(else_to.args.iter()).collect()
        }
        Terminator::Ret(value) => value.iter().collect(),
        Terminator::Unreachable => Vec::new(),
    }
}

// Structural equality: two functions are equal when they have the same names,
// signature, blocks, instructions and value names/types, regardless of the order in
// which their values were created in the arena and of source spans. This is what
// "parse(print(m)) == m" means for modules made by the builder in any order.
impl PartialEq for Function {
    fn eq(&self, other: &Function) -> bool {
        if self.name != other.name
            || self.kind != other.kind
            || self.conv != other.conv
            || self.inline != other.inline
            || self.attrs != other.attrs
            || self.ret != other.ret
            || self.params.len() != other.params.len()
            || self.blocks.len() != other.blocks.len()
        {
            return false;
        }
        let same_value = |a: Value, b: Value| {
            let (va, vb) = (&self.values[a.0 as usize], &other.values[b.0 as usize]);
            va == vb
        };
        let same_operand = |a: &Operand, b: &Operand| match (a, b) {
            (Operand::Value(x), Operand::Value(y)) => same_value(*x, *y),
            (Operand::Const(x), Operand::Const(y)) => x == y,
            _ => false,
        };
        let same_call = |a: &BlockCall, b: &BlockCall| {
            a.block == b.block && a.args.len() == b.args.len() && a.args.iter().zip(&b.args).all(|(x, y)| same_operand(x, y))
        };
        for (pa, pb) in self.params.iter().zip(&other.params) {
            if pa.inreg != pb.inreg || !same_value(pa.value, pb.value) {
                return false;
            }
        }
        for (ba, bb) in self.blocks.iter().zip(&other.blocks) {
            if ba.name != bb.name
                || ba.params.len() != bb.params.len()
                || ba.insts.len() != bb.insts.len()
                || !ba.params.iter().zip(&bb.params).all(|(x, y)| same_value(*x, *y))
            {
                return false;
            }
            for (ia, ib) in ba.insts.iter().zip(&bb.insts) {
                let results_match = match (ia.result, ib.result) {
                    (Some(x), Some(y)) => same_value(x, y),
                    (None, None) => true,
                    _ => false,
                };
                if !results_match || !same_op_shape(&ia.op, &ib.op) {
                    return false;
                }
                let (oa, ob) = (op_operands(&ia.op), op_operands(&ib.op));
                if oa.len() != ob.len() || !oa.iter().zip(&ob).all(|(x, y)| same_operand(x, y)) {
                    return false;
                }
            }
            let terms_match = match (&ba.term, &bb.term) {
                (Terminator::Br(x), Terminator::Br(y)) => same_call(x, y),
                (
                    Terminator::BrIf { cond: c1, then_to: t1, else_to: e1 },
                    Terminator::BrIf { cond: c2, then_to: t2, else_to: e2 },
                ) => same_operand(c1, c2) && same_call(t1, t2) && same_call(e1, e2),
                (Terminator::Ret(None), Terminator::Ret(None)) => true,
                (Terminator::Ret(Some(x)), Terminator::Ret(Some(y))) => same_operand(x, y),
                (Terminator::Unreachable, Terminator::Unreachable) => true,
                _ => false,
            };
            if !terms_match {
                return false;
            }
        }
        true
    }
}

/// Compares two operations ignoring their operands (which are compared separately
/// through the value mapping).
fn same_op_shape(a: &Op, b: &Op) -> bool {
    match (a, b) {
        (Op::Const(x), Op::Const(y)) => x == y,
        (Op::Binary { op: o1, ty: t1, .. }, Op::Binary { op: o2, ty: t2, .. }) => o1 == o2 && t1 == t2,
        (Op::Unary { op: o1, ty: t1, .. }, Op::Unary { op: o2, ty: t2, .. }) => o1 == o2 && t1 == t2,
        (Op::Fma { ty: t1, .. }, Op::Fma { ty: t2, .. }) => t1 == t2,
        (Op::Ternary { op: o1, ty: t1, .. }, Op::Ternary { op: o2, ty: t2, .. }) => o1 == o2 && t1 == t2,
        (Op::Icmp { pred: p1, ty: t1, .. }, Op::Icmp { pred: p2, ty: t2, .. }) => p1 == p2 && t1 == t2,
        (Op::Fcmp { pred: p1, ty: t1, .. }, Op::Fcmp { pred: p2, ty: t2, .. }) => p1 == p2 && t1 == t2,
        (Op::Select { ty: t1, .. }, Op::Select { ty: t2, .. }) => t1 == t2,
        (Op::Cast { op: o1, from: f1, to: t1, .. }, Op::Cast { op: o2, from: f2, to: t2, .. }) => {
            o1 == o2 && f1 == f2 && t1 == t2
        }
        (Op::Load { ty: t1, align: a1, volatile: v1, .. }, Op::Load { ty: t2, align: a2, volatile: v2, .. }) => t1 == t2 && a1 == a2 && v1 == v2,
        (Op::Store { ty: t1, align: a1, volatile: v1, .. }, Op::Store { ty: t2, align: a2, volatile: v2, .. }) => t1 == t2 && a1 == a2 && v1 == v2,
        (Op::Fence { order: o1, scope: s1 }, Op::Fence { order: o2, scope: s2 }) => o1 == o2 && s1 == s2,
        (Op::Wave { op: o1, ty: t1, .. }, Op::Wave { op: o2, ty: t2, .. }) => o1 == o2 && t1 == t2,
        (Op::PtrAdd { .. }, Op::PtrAdd { .. }) | (Op::Barrier, Op::Barrier) | (Op::DynamicLds, Op::DynamicLds) => true,
        (Op::DataAddr { name: a, .. }, Op::DataAddr { name: b, .. }) => a == b,
        (Op::AtomicRmw { op: o1, ty: t1, sync: y1, .. }, Op::AtomicRmw { op: o2, ty: t2, sync: y2, .. }) => o1 == o2 && t1 == t2 && y1 == y2,
        (Op::CmpXchg { ty: t1, sync: y1, .. }, Op::CmpXchg { ty: t2, sync: y2, .. }) => t1 == t2 && y1 == y2,
        (Op::StackSlot { size: s1, align: a1 }, Op::StackSlot { size: s2, align: a2 }) => s1 == s2 && a1 == a2,
        (Op::LdsSlot { size: s1, align: a1 }, Op::LdsSlot { size: s2, align: a2 }) => s1 == s2 && a1 == a2,
        (Op::Call { callee: c1, .. }, Op::Call { callee: c2, .. }) => c1 == c2,
        (Op::Builtin { kind: k1, dim: d1 }, Op::Builtin { kind: k2, dim: d2 }) => k1 == k2 && d1 == d2,
        (Op::Extract { index: i1, .. }, Op::Extract { index: i2, .. }) => i1 == i2,
        (Op::Insert { index: i1, .. }, Op::Insert { index: i2, .. }) => i1 == i2,
        (Op::Make { ty: t1, .. }, Op::Make { ty: t2, .. }) => t1 == t2,
        _ => false,
    }
}

impl PartialEq for Module {
    fn eq(&self, other: &Module) -> bool {
        self.functions == other.functions && self.data == other.data
    }
}
