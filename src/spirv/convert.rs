//! Conversions between numbers as OpenCL defines them: the rounding mode of a
//! float-to-integer conversion (`FPRoundingMode`, `convert_int_rte`; toward
//! zero by default), saturation of integer conversions (`SaturatedConversion`,
//! `OpSatConvert*`, `convert_uchar_sat`). MIR's float-to-integer casts already
//! saturate (NaN to 0), which is what `_sat` asks and what the unsaturated
//! forms leave undefined.

use rspirv::spirv::FPRoundingMode;

use super::function::Fx;
use crate::abi::Type;
use crate::mir::{BinOp, CastOp, Const, Operand, UnOp};

/// A number of type `from` (`from_signed` for integers) converted to `to`
/// (`to_signed`), rounded by `round` and saturated when `saturate`.
#[allow(clippy::too_many_arguments)]
pub fn convert(fx: &mut Fx, from: &Type, from_signed: bool, x: Operand, to: &Type, to_signed: bool, round: Option<FPRoundingMode>, saturate: bool) -> Result<Operand, String> {
    let (fe, te) = (from.element(), to.element());
    match (fe.is_float(), te.is_float()) {
        (true, false) => {
            let x = match round {
                None | Some(FPRoundingMode::RTZ) => x,
                Some(FPRoundingMode::RTE) => fx.un(UnOp::RoundEven, from, x),
                Some(FPRoundingMode::RTP) => fx.un(UnOp::Ceil, from, x),
                Some(FPRoundingMode::RTN) => fx.un(UnOp::Floor, from, x),
            };
            Ok(fx.cast(if to_signed { CastOp::FpToSi } else { CastOp::FpToUi }, from, x, to))
        }
        (false, true) | (true, true) => {
            // Exact widenings take any mode; otherwise only the default.
            let exact = fe.is_float() && te.bits() >= fe.bits();
            if !exact && !matches!(round, None | Some(FPRoundingMode::RTE)) {
                return Err(format!("a conversion from {from} to {to} rounding {round:?} is not supported (to nearest even is)"));
            }
            Ok(if fe.is_float() {
                let op = if te.bits() > fe.bits() { CastOp::FpExt } else { CastOp::FpTrunc };
                fx.cast(op, from, x, to)
            } else {
                fx.cast(if from_signed { CastOp::SiToFp } else { CastOp::UiToFp }, from, x, to)
            })
        }
        (false, false) => {
            let x = if saturate { clamp(fx, from, from_signed, x, te.bits(), to_signed) } else { x };
            Ok(fx.resize(from, x, to, from_signed))
        }
    }
}

fn range(bits: u32, signed: bool) -> (i128, i128) {
    if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

/// `x` (of `from`) limited to the range of a `bits`-bit integer, in `from`.
fn clamp(fx: &mut Fx, from: &Type, signed: bool, x: Operand, bits: u32, to_signed: bool) -> Operand {
    let (smin, smax) = range(from.element().bits(), signed);
    let (dmin, dmax) = range(bits, to_signed);
    let k = |fx: &mut Fx, v: i128| fx.splat(from, Const::int(from.element().clone(), v as i64).bits);
    let mut x = x;
    if dmin > smin {
        let lo = k(fx, dmin);
        x = fx.bin(if signed { BinOp::SMax } else { BinOp::UMax }, from, x, lo);
    }
    if dmax < smax {
        let hi = k(fx, dmax);
        x = fx.bin(if signed { BinOp::SMin } else { BinOp::UMin }, from, x, hi);
    }
    x
}

/// The signedness an Itanium parameter code gives (`i`, `c`, `a`, `s`, `l`
/// signed; `j`, `h`, `t`, `m` unsigned), the last element's for vectors.
pub fn mangled_signed(params: &str) -> bool {
    !matches!(params.chars().last(), Some('j' | 'h' | 't' | 'm'))
}

/// OpenCL's `convert_TYPE[_sat][_rte|_rtz|_rtp|_rtn]` left as a call: the
/// destination's signedness from the name, the source's from its mangled
/// parameter; None for other names.
pub fn builtin(fx: &mut Fx, base: &str, params: &str, from: &Type, x: Operand, to: &Type) -> Option<Result<Operand, String>> {
    let rest = base.strip_prefix("convert_")?;
    let mut round = None;
    let mut saturate = false;
    let mut name = rest;
    for (suffix, mode) in [("_rte", FPRoundingMode::RTE), ("_rtz", FPRoundingMode::RTZ), ("_rtp", FPRoundingMode::RTP), ("_rtn", FPRoundingMode::RTN)] {
        if let Some(n) = name.strip_suffix(suffix) {
            round = Some(mode);
            name = n;
        }
    }
    if let Some(n) = name.strip_suffix("_sat") {
        saturate = true;
        name = n;
    }
    let to_signed = !name.starts_with('u');
    Some(convert(fx, from, mangled_signed(params), x, to, to_signed, round, saturate))
}
