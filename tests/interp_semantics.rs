//! Semantics of the MIR interpreter, checked against values computed in plain
//! Rust (never against earlier interpreter output).

#![allow(clippy::result_large_err)]

use amdgpu_cg::mir::float::{f16_to_f32, f32_to_f16, f64_to_f16};
use amdgpu_cg::mir::interp::{
    call_function, run_kernel, run_kernel_with, InterpError, Launch, Memory, Options, RtValue, LOCAL_APERTURE, PRIVATE_APERTURE,
};
use amdgpu_cg::mir::{parse, verify::verify, Module, SourceFile};
use proptest::prelude::*;

fn module(text: &str) -> Module {
    let m = parse(text).unwrap_or_else(|e| panic!("parse error:\n{}", e.render(&SourceFile::new("test.mir", text))));
    if let Err(errors) = verify(&m) {
        let all: Vec<String> = errors.iter().map(|e| e.render(&SourceFile::new("test.mir", text))).collect();
        panic!("verify errors:\n{}", all.join("\n"));
    }
    m
}

fn call(m: &Module, f: &str, args: &[RtValue]) -> Result<Option<RtValue>, InterpError> {
    call_function(m, f, args, &mut Memory::new(), &Options::default())
}

fn call_bits(m: &Module, f: &str, args: &[u64]) -> Result<u64, InterpError> {
    let args: Vec<RtValue> = args.iter().map(|&a| RtValue::Scalar(a)).collect();
    Ok(call(m, f, &args)?.and_then(|v| v.bits()).expect("a scalar result"))
}

/// `func @f(%a: T, %b: T) -> R { %r = OP T %a, %b; ret %r }`
fn binop(op: &str, ty: &str) -> Module {
    let ret = if op.starts_with("icmp") || op.starts_with("fcmp") { "i1" } else { ty };
    module(&format!("func @f(%a: {ty}, %b: {ty}) -> {ret} {{\nentry:\n  %r = {op} {ty} %a, %b\n  ret %r\n}}\n"))
}

fn unop(op: &str, ty: &str) -> Module {
    module(&format!("func @f(%a: {ty}) -> {ty} {{\nentry:\n  %r = {op} {ty} %a\n  ret %r\n}}\n"))
}

fn cast(op: &str, from: &str, to: &str) -> Module {
    module(&format!("func @f(%a: {from}) -> {to} {{\nentry:\n  %r = {op} {from} %a to {to}\n  ret %r\n}}\n"))
}

fn err_text(r: Result<u64, InterpError>) -> String {
    match r {
        Ok(v) => panic!("expected an error, got {v:#x}"),
        Err(e) => e.to_string(),
    }
}

const U32: fn(i32) -> u64 = |v| u64::from(v as u32);

// ---------------------------------------------------------------- integers

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn i32_ops_match_rust(a in any::<i32>(), b in any::<i32>()) {
        let cases: Vec<(&str, i32)> = vec![
            ("add", a.wrapping_add(b)),
            ("sub", a.wrapping_sub(b)),
            ("mul", a.wrapping_mul(b)),
            ("mulhi.s", ((i64::from(a) * i64::from(b)) >> 32) as i32),
            ("mulhi.u", ((u64::from(a as u32) * u64::from(b as u32)) >> 32) as i32),
            ("and", a & b), ("or", a | b), ("xor", a ^ b),
            ("shl", a.wrapping_shl(b as u32)),
            ("lshr", ((a as u32).wrapping_shr(b as u32)) as i32),
            ("ashr", a.wrapping_shr(b as u32)),
            ("smin", a.min(b)), ("smax", a.max(b)),
            ("umin", (a as u32).min(b as u32) as i32), ("umax", (a as u32).max(b as u32) as i32),
        ];
        for (op, expected) in cases {
            let m = binop(op, "i32");
            prop_assert_eq!(call_bits(&m, "f", &[U32(a), U32(b)]).unwrap(), U32(expected), "{}", op);
        }
        if b != 0 && !(a == i32::MIN && b == -1) {
            prop_assert_eq!(call_bits(&binop("sdiv", "i32"), "f", &[U32(a), U32(b)]).unwrap(), U32(a / b));
            prop_assert_eq!(call_bits(&binop("srem", "i32"), "f", &[U32(a), U32(b)]).unwrap(), U32(a % b));
        }
        if b != 0 {
            prop_assert_eq!(call_bits(&binop("udiv", "i32"), "f", &[U32(a), U32(b)]).unwrap(), u64::from(a as u32 / b as u32));
            prop_assert_eq!(call_bits(&binop("urem", "i32"), "f", &[U32(a), U32(b)]).unwrap(), u64::from(a as u32 % b as u32));
        }
    }

    #[test]
    fn i64_and_i8_ops_match_rust(a in any::<i64>(), b in any::<i64>(), c in any::<i8>(), d in any::<i8>()) {
        let m = binop("mulhi.s", "i64");
        prop_assert_eq!(call_bits(&m, "f", &[a as u64, b as u64]).unwrap(), ((i128::from(a) * i128::from(b)) >> 64) as u64);
        let m = binop("mulhi.u", "i64");
        prop_assert_eq!(call_bits(&m, "f", &[a as u64, b as u64]).unwrap(), ((u128::from(a as u64) * u128::from(b as u64)) >> 64) as u64);
        let m = binop("mul", "i64");
        prop_assert_eq!(call_bits(&m, "f", &[a as u64, b as u64]).unwrap(), a.wrapping_mul(b) as u64);
        let i8bits = |v: i8| u64::from(v as u8);
        for (op, expected) in [
            ("add", c.wrapping_add(d)), ("mul", c.wrapping_mul(d)),
            ("mulhi.s", ((i16::from(c) * i16::from(d)) >> 8) as i8),
            ("mulhi.u", ((u16::from(c as u8) * u16::from(d as u8)) >> 8) as i8),
            ("ashr", c.wrapping_shr(d as u32)), ("shl", c.wrapping_shl(d as u32)),
            ("lshr", (c as u8).wrapping_shr(d as u32) as i8), ("smin", c.min(d)), ("umax", (c as u8).max(d as u8) as i8),
        ] {
            prop_assert_eq!(call_bits(&binop(op, "i8"), "f", &[i8bits(c), i8bits(d)]).unwrap(), i8bits(expected), "{}", op);
        }
    }
}

#[test]
fn shift_amounts_are_taken_modulo_the_width() {
    assert_eq!(call_bits(&binop("shl", "i32"), "f", &[1, 33]).unwrap(), 2);
    assert_eq!(call_bits(&binop("shl", "i8"), "f", &[1, 9]).unwrap(), 2);
    assert_eq!(call_bits(&binop("lshr", "i64"), "f", &[1 << 63, 64 + 63]).unwrap(), 1);
    assert_eq!(call_bits(&binop("ashr", "i16"), "f", &[0x8000, 15]).unwrap(), 0xffff);
    assert_eq!(call_bits(&binop("ashr", "i16"), "f", &[0x8000, 16 + 1]).unwrap(), 0xc000);
    // The shift amount is the whole (unsigned) operand: -1 as i32 is 2^32-1, mod 32 = 31.
    assert_eq!(call_bits(&binop("shl", "i32"), "f", &[1, 0xffff_ffff]).unwrap(), 0x8000_0000);
}

#[test]
fn division_undefined_behaviour_is_an_error() {
    let e = err_text(call_bits(&binop("sdiv", "i32"), "f", &[7, 0]));
    assert!(e.contains("division by zero") && e.contains("sdiv i32 %a, %b"), "{e}");
    assert!(e.contains("work-item (0, 0, 0)"), "{e}");
    assert!(err_text(call_bits(&binop("udiv", "i64"), "f", &[7, 0])).contains("division by zero"));
    assert!(err_text(call_bits(&binop("urem", "i8"), "f", &[7, 0])).contains("division by zero"));
    assert!(err_text(call_bits(&binop("srem", "i16"), "f", &[7, 0])).contains("division by zero"));
    let e = err_text(call_bits(&binop("sdiv", "i32"), "f", &[0x8000_0000, 0xffff_ffff]));
    assert!(e.contains("overflow"), "{e}");
    assert!(err_text(call_bits(&binop("srem", "i8"), "f", &[0x80, 0xff])).contains("overflow"));
    assert!(err_text(call_bits(&binop("sdiv", "i64"), "f", &[1 << 63, u64::MAX])).contains("overflow"));
    // Not errors: INT_MIN / 1, -7 / 2 truncates, -7 % 2 = -1.
    assert_eq!(call_bits(&binop("sdiv", "i32"), "f", &[0x8000_0000, 1]).unwrap(), 0x8000_0000);
    assert_eq!(call_bits(&binop("sdiv", "i32"), "f", &[U32(-7), 2]).unwrap(), U32(-3));
    assert_eq!(call_bits(&binop("srem", "i32"), "f", &[U32(-7), 2]).unwrap(), U32(-1));
}

#[test]
fn bit_counting_and_logic() {
    assert_eq!(call_bits(&unop("clz", "i32"), "f", &[0]).unwrap(), 32);
    assert_eq!(call_bits(&unop("clz", "i8"), "f", &[1]).unwrap(), 7);
    assert_eq!(call_bits(&unop("clz", "i64"), "f", &[1 << 40]).unwrap(), 23);
    assert_eq!(call_bits(&unop("ctz", "i64"), "f", &[0]).unwrap(), 64);
    assert_eq!(call_bits(&unop("ctz", "i16"), "f", &[0x8000]).unwrap(), 15);
    assert_eq!(call_bits(&unop("popcount", "i32"), "f", &[0xf0f0_0001]).unwrap(), 9);
    assert_eq!(call_bits(&unop("not", "i16"), "f", &[0x00ff]).unwrap(), 0xff00);
    assert_eq!(call_bits(&unop("not", "i1"), "f", &[1]).unwrap(), 0);
    assert_eq!(call_bits(&binop("xor", "i1"), "f", &[1, 1]).unwrap(), 0);
    assert_eq!(call_bits(&binop("or", "i1"), "f", &[0, 1]).unwrap(), 1);
    for (pred, a, b, expected) in [
        ("slt", U32(-1), 1, 1),
        ("ult", U32(-1), 1, 0),
        ("sge", 5, 5, 1),
        ("ugt", 0x8000_0000, 1, 1),
        ("ne", 3, 3, 0),
    ] {
        assert_eq!(call_bits(&binop(&format!("icmp {pred}"), "i32"), "f", &[a, b]).unwrap(), expected, "{pred}");
    }
}

// ---------------------------------------------------------------- floats

/// Bits equal, or both NaN (NaN payloads are unspecified).
fn same_f32(got: u64, want: f32) -> bool {
    let g = f32::from_bits(got as u32);
    (g.is_nan() && want.is_nan()) || got == u64::from(want.to_bits())
}

fn same_f64(got: u64, want: f64) -> bool {
    let g = f64::from_bits(got);
    (g.is_nan() && want.is_nan()) || got == want.to_bits()
}

fn interesting_f32() -> impl Strategy<Value = f32> {
    prop_oneof![
        any::<f32>(),
        Just(0.0f32), Just(-0.0f32), Just(f32::INFINITY), Just(f32::NEG_INFINITY), Just(f32::NAN),
        Just(f32::from_bits(1)), Just(f32::MIN_POSITIVE), Just(f32::MAX), Just(1.0f32),
        (-1000.0f32..1000.0f32),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn f32_arithmetic_matches_rust(a in interesting_f32(), b in interesting_f32(), c in interesting_f32()) {
        let bits = |x: f32| u64::from(x.to_bits());
        for (op, want) in [("fadd", a + b), ("fsub", a - b), ("fmul", a * b), ("fdiv", a / b)] {
            let got = call_bits(&binop(op, "f32"), "f", &[bits(a), bits(b)]).unwrap();
            prop_assert!(same_f32(got, want), "{} {} {}: got {:#x}", op, a, b, got);
        }
        let got = call_bits(&unop("sqrt", "f32"), "f", &[bits(a)]).unwrap();
        prop_assert!(same_f32(got, a.sqrt()));
        // The correctly rounded square root is also the f64 root rounded to f32.
        prop_assert!(same_f32(got, (f64::from(a)).sqrt() as f32));
        for (op, want) in [("floor", a.floor()), ("ceil", a.ceil()), ("ftrunc", a.trunc()), ("fneg", -a), ("fabs", a.abs())] {
            let got = call_bits(&unop(op, "f32"), "f", &[bits(a)]).unwrap();
            prop_assert!(same_f32(got, want), "{} {}", op, a);
        }
        let m = module("func @f(%a: f32, %b: f32, %c: f32) -> f32 {\nentry:\n  %r = fma f32 %a, %b, %c\n  ret %r\n}\n");
        let got = call_bits(&m, "f", &[bits(a), bits(b), bits(c)]).unwrap();
        prop_assert!(same_f32(got, a.mul_add(b, c)), "fma {} {} {}", a, b, c);
        let got = call_bits(&binop("fcmp olt", "f32"), "f", &[bits(a), bits(b)]).unwrap();
        prop_assert_eq!(got, u64::from(a < b));
        let got = call_bits(&binop("fcmp une", "f32"), "f", &[bits(a), bits(b)]).unwrap();
        prop_assert_eq!(got, u64::from(a != b));
        let got = call_bits(&binop("fcmp ueq", "f32"), "f", &[bits(a), bits(b)]).unwrap();
        prop_assert_eq!(got, u64::from(a == b || a.is_nan() || b.is_nan()));
    }

    #[test]
    fn f64_arithmetic_matches_rust(a in any::<f64>(), b in any::<f64>(), c in any::<f64>()) {
        for (op, want) in [("fadd", a + b), ("fsub", a - b), ("fmul", a * b), ("fdiv", a / b)] {
            let got = call_bits(&binop(op, "f64"), "f", &[a.to_bits(), b.to_bits()]).unwrap();
            prop_assert!(same_f64(got, want), "{}", op);
        }
        let got = call_bits(&unop("sqrt", "f64"), "f", &[a.to_bits()]).unwrap();
        prop_assert!(same_f64(got, a.sqrt()));
        let m = module("func @f(%a: f64, %b: f64, %c: f64) -> f64 {\nentry:\n  %r = fma f64 %a, %b, %c\n  ret %r\n}\n");
        let got = call_bits(&m, "f", &[a.to_bits(), b.to_bits(), c.to_bits()]).unwrap();
        prop_assert!(same_f64(got, a.mul_add(b, c)));
    }

    #[test]
    fn f16_arithmetic_rounds_once(a in any::<u16>(), b in any::<u16>(), c in any::<u16>()) {
        let (x, y, z) = (f16_to_f32(a), f16_to_f32(b), f16_to_f32(c));
        // f32 has 24 >= 2*11+2 bits, so rounding the f32 result again to f16 is
        // the correctly rounded f16 result for + - * / sqrt.
        let same16 = |got: u64, want: u16| {
            let g = f16_to_f32(got as u16);
            (g.is_nan() && f16_to_f32(want).is_nan()) || got == u64::from(want)
        };
        for (op, want) in [("fadd", x + y), ("fsub", x - y), ("fmul", x * y), ("fdiv", x / y)] {
            let got = call_bits(&binop(op, "f16"), "f", &[u64::from(a), u64::from(b)]).unwrap();
            prop_assert!(same16(got, f32_to_f16(want)), "{} {:#x} {:#x}: got {:#x}", op, a, b, got);
        }
        let got = call_bits(&unop("sqrt", "f16"), "f", &[u64::from(a)]).unwrap();
        prop_assert!(same16(got, f32_to_f16(x.sqrt())));
        // fma: f64's fused a*b+c rounded again to f16. (For f16 inputs the f64
        // result is exact whenever it matters; f32_fma_is_one_rounding... and the
        // hand-made cases below check the rounding itself.)
        let m = module("func @f(%a: f16, %b: f16, %c: f16) -> f16 {\nentry:\n  %r = fma f16 %a, %b, %c\n  ret %r\n}\n");
        let got = call_bits(&m, "f", &[u64::from(a), u64::from(b), u64::from(c)]).unwrap();
        let want = f64_to_f16(f64::from(x).mul_add(f64::from(y), f64::from(z)));
        prop_assert!(same16(got, want), "fma {:#x} {:#x} {:#x}: got {:#x}, want {:#x}", a, b, c, got, want);
    }
}

/// Independent f16 rounding of an exact value `n` x 2^-48 (n != 0): the nearest
/// f16 by exact integer comparison, ties to the even bit pattern.
fn round_to_f16_exactly(n: i128) -> u16 {
    let sign = if n < 0 { 0x8000u16 } else { 0 };
    let mag = n.unsigned_abs();
    if mag >= 65520u128 << 48 {
        return sign | 0x7c00;
    }
    let scaled = |b: u16| -> u128 {
        if b == 0x7c00 {
            65536u128 << 48
        } else {
            (f64::from(f16_to_f32(b)) * 2f64.powi(48)) as u128
        }
    };
    let (mut lo, mut hi) = (0u16, 0x7c00u16); // scaled(lo) <= mag < scaled(hi)
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if scaled(mid) <= mag {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let (below, above) = (mag - scaled(lo), scaled(hi) - mag);
    let pick = if below < above || (below == above && lo % 2 == 0) { lo } else { hi };
    sign | pick
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn f16_fma_matches_exact_rounding(a in 0u16..0x7c00, b in 0u16..0x7c00, c in 0u16..0x7c00, signs in 0u8..8) {
        let (a, b, c) = (a | u16::from(signs & 1) << 15, b | u16::from(signs & 2) << 14, c | u16::from(signs & 4) << 13);
        let units = |h: u16| (f64::from(f16_to_f32(h)) * 2f64.powi(24)) as i128; // exact
        let n = units(a) * units(b) + (units(c) << 24);
        prop_assume!(n != 0);
        let m = module("func @f(%a: f16, %b: f16, %c: f16) -> f16 {\nentry:\n  %r = fma f16 %a, %b, %c\n  ret %r\n}\n");
        let got = call_bits(&m, "f", &[u64::from(a), u64::from(b), u64::from(c)]).unwrap();
        prop_assert_eq!(got, u64::from(round_to_f16_exactly(n)), "fma {:#x} {:#x} {:#x}", a, b, c);
    }
}

#[test]
fn f32_fma_is_one_rounding_not_f64_mul_then_add() {
    // a*b = 1 - 2^-13 - 2^-25 exactly (a tie in f32); c = -2^-100 pushes it below.
    let a = 1.0f32 + 2f32.powi(-13);
    let b = 1.0f32 - 2f32.powi(-12);
    let c = -(2f32.powi(-100));
    let fused = a.mul_add(b, c);
    let naive = (f64::from(a) * f64::from(b) + f64::from(c)) as f32;
    assert_ne!(fused, naive, "the test needs a case where double rounding differs");
    assert_eq!(fused, 1.0 - 2f32.powi(-13) - 2f32.powi(-24));
    let m = module("func @f(%a: f32, %b: f32, %c: f32) -> f32 {\nentry:\n  %r = fma f32 %a, %b, %c\n  ret %r\n}\n");
    let got = call_bits(&m, "f", &[a.to_bits().into(), b.to_bits().into(), c.to_bits().into()]).unwrap();
    assert_eq!(got, u64::from(fused.to_bits()));
}

#[test]
fn f16_rounding_ties_to_even_and_subnormals() {
    let h = |x: f64| u64::from(f64_to_f16(x));
    let add = binop("fadd", "f16");
    // 1 + 2^-11 is halfway between 1 and 1+2^-10: ties to even gives 1.
    assert_eq!(call_bits(&add, "f", &[0x3c00, h(2f64.powi(-11))]).unwrap(), 0x3c00);
    // 1+2^-10 + 2^-11: halfway between 1+2^-10 (odd) and 1+2^-9 (even): up.
    assert_eq!(call_bits(&add, "f", &[0x3c01, h(2f64.powi(-11))]).unwrap(), 0x3c02);
    // Subnormals are kept: smallest subnormal + smallest subnormal.
    assert_eq!(call_bits(&add, "f", &[1, 1]).unwrap(), 2);
    // 65504 + 16 rounds to infinity (halfway to 65536, the next "even").
    assert_eq!(call_bits(&add, "f", &[0x7bff, h(16.0)]).unwrap(), 0x7c00);
    // Smallest subnormal / 2 is a tie with 0: even is 0; * 0.75 -> 0.75 ulp rounds to 1 ulp.
    assert_eq!(call_bits(&binop("fmul", "f16"), "f", &[1, 0x3800]).unwrap(), 0);
    assert_eq!(call_bits(&binop("fmul", "f16"), "f", &[1, 0x3a00]).unwrap(), 1);
    // fma with a subnormal result, single rounding.
    let m = module("func @f(%a: f16, %b: f16, %c: f16) -> f16 {\nentry:\n  %r = fma f16 %a, %b, %c\n  ret %r\n}\n");
    assert_eq!(call_bits(&m, "f", &[1, 0x3c00, 1]).unwrap(), 2);
    // 1.5 * (1 + 2^-10) = 1.5 + 2^-10 + 2^-11 is a tie; c = -2^-24 puts the exact
    // result just below it, so the answer rounds down to 0x3e01. (Rounding a*b+c
    // to f32 first would give the tie itself and then round up to even, 0x3e02.)
    assert_eq!(call_bits(&m, "f", &[0x3e00, 0x3c01, 0x8001]).unwrap(), 0x3e01);
    assert_eq!(call_bits(&m, "f", &[0x3e00, 0x3c01, 0x0001]).unwrap(), 0x3e02);
    assert_eq!(call_bits(&m, "f", &[0x3e00, 0x3c01, 0x0000]).unwrap(), 0x3e02, "a plain tie rounds to even");
    // Large-magnitude fma: 2^-24 * 2^-24 + 1 = 1 (tiny product below the ulp).
    assert_eq!(call_bits(&m, "f", &[1, 1, 0x3c00]).unwrap(), 0x3c00);
    // fmin/fmax on f16 with -0.
    assert_eq!(call_bits(&binop("fmin", "f16"), "f", &[0x0000, 0x8000]).unwrap(), 0x8000);
    assert_eq!(call_bits(&binop("fmax", "f16"), "f", &[0x8000, 0x0000]).unwrap(), 0x0000);
}

#[test]
fn fmin_fmax_are_ieee_minnum_maxnum() {
    let b = |x: f32| u64::from(x.to_bits());
    let fmin = binop("fmin", "f32");
    let fmax = binop("fmax", "f32");
    assert_eq!(call_bits(&fmin, "f", &[b(f32::NAN), b(2.0)]).unwrap(), b(2.0));
    assert_eq!(call_bits(&fmin, "f", &[b(2.0), b(f32::NAN)]).unwrap(), b(2.0));
    assert_eq!(call_bits(&fmax, "f", &[b(f32::NAN), b(-3.0)]).unwrap(), b(-3.0));
    assert!(f32::from_bits(call_bits(&fmin, "f", &[b(f32::NAN), b(f32::NAN)]).unwrap() as u32).is_nan());
    assert_eq!(call_bits(&fmin, "f", &[b(0.0), b(-0.0)]).unwrap(), b(-0.0));
    assert_eq!(call_bits(&fmin, "f", &[b(-0.0), b(0.0)]).unwrap(), b(-0.0));
    assert_eq!(call_bits(&fmax, "f", &[b(-0.0), b(0.0)]).unwrap(), b(0.0));
    assert_eq!(call_bits(&fmax, "f", &[b(0.0), b(-0.0)]).unwrap(), b(0.0));
    assert_eq!(call_bits(&fmin, "f", &[b(f32::NEG_INFINITY), b(1.0)]).unwrap(), b(f32::NEG_INFINITY));
    assert_eq!(call_bits(&fmax, "f", &[b(1.5), b(1.25)]).unwrap(), b(1.5));
    let fmin64 = binop("fmin", "f64");
    assert_eq!(call_bits(&fmin64, "f", &[f64::NAN.to_bits(), 7.0f64.to_bits()]).unwrap(), 7.0f64.to_bits());
}

#[test]
fn nan_inf_zero_and_subnormal_edge_cases() {
    let b = |x: f32| u64::from(x.to_bits());
    let tiny = f32::from_bits(1); // smallest subnormal
    assert_eq!(call_bits(&binop("fadd", "f32"), "f", &[b(tiny), b(tiny)]).unwrap(), 2, "no flush to zero");
    assert_eq!(call_bits(&binop("fmul", "f32"), "f", &[b(f32::MIN_POSITIVE), b(0.5)]).unwrap(), b(f32::MIN_POSITIVE * 0.5));
    assert_eq!(call_bits(&binop("fdiv", "f32"), "f", &[b(1.0), b(-0.0)]).unwrap(), b(f32::NEG_INFINITY));
    assert!(f32::from_bits(call_bits(&binop("fsub", "f32"), "f", &[b(f32::INFINITY), b(f32::INFINITY)]).unwrap() as u32).is_nan());
    assert_eq!(call_bits(&binop("fadd", "f32"), "f", &[b(-0.0), b(0.0)]).unwrap(), b(0.0));
    assert_eq!(call_bits(&binop("fadd", "f32"), "f", &[b(-0.0), b(-0.0)]).unwrap(), b(-0.0));
    assert!(f32::from_bits(call_bits(&unop("sqrt", "f32"), "f", &[b(-1.0)]).unwrap() as u32).is_nan());
    assert_eq!(call_bits(&unop("sqrt", "f32"), "f", &[b(-0.0)]).unwrap(), b(-0.0));
    assert_eq!(call_bits(&unop("fneg", "f32"), "f", &[b(0.0)]).unwrap(), b(-0.0));
    // fneg/fabs are sign-bit operations: they keep NaN payloads.
    assert_eq!(call_bits(&unop("fneg", "f32"), "f", &[0x7fc0_1234]).unwrap(), 0xffc0_1234);
    assert_eq!(call_bits(&unop("fabs", "f16"), "f", &[0xfe01]).unwrap(), 0x7e01);
    assert_eq!(call_bits(&unop("floor", "f32"), "f", &[b(-0.5)]).unwrap(), b(-1.0));
    assert_eq!(call_bits(&unop("ceil", "f32"), "f", &[b(-0.5)]).unwrap(), b(-0.0));
    assert_eq!(call_bits(&unop("ftrunc", "f16"), "f", &[u64::from(f32_to_f16(-2.75))]).unwrap(), u64::from(f32_to_f16(-2.0)));
    assert_eq!(call_bits(&unop("floor", "f64"), "f", &[(-2.5f64).to_bits()]).unwrap(), (-3.0f64).to_bits());
    for (pred, expected) in [("oeq", 0), ("une", 1), ("uno", 1), ("ord", 0), ("olt", 0), ("ult", 1), ("one", 0), ("ueq", 1)] {
        assert_eq!(call_bits(&binop(&format!("fcmp {pred}"), "f32"), "f", &[b(f32::NAN), b(1.0)]).unwrap(), expected, "{pred}");
    }
    assert_eq!(call_bits(&binop("fcmp oeq", "f32"), "f", &[b(0.0), b(-0.0)]).unwrap(), 1);
    assert_eq!(call_bits(&binop("fcmp olt", "f16"), "f", &[0x8001, 0]).unwrap(), 1, "f16 subnormals compare");
}

// ---------------------------------------------------------------- conversions

#[test]
fn float_to_int_saturates_and_nan_is_zero() {
    let b = |x: f32| u64::from(x.to_bits());
    let si8 = cast("fptosi", "f32", "i8");
    for (x, want) in [(300.0f32, 127i8), (-300.0, -128), (f32::NAN, 0), (-0.9, 0), (-128.9, -128), (127.9, 127), (f32::INFINITY, 127)] {
        assert_eq!(call_bits(&si8, "f", &[b(x)]).unwrap(), u64::from(want as u8), "{x}");
    }
    let ui32 = cast("fptoui", "f32", "i32");
    for (x, want) in [(-1.0f32, 0u32), (5e9, u32::MAX), (f32::NAN, 0), (3.99, 3), (f32::NEG_INFINITY, 0)] {
        assert_eq!(call_bits(&ui32, "f", &[b(x)]).unwrap(), u64::from(want), "{x}");
    }
    let si64 = cast("fptosi", "f64", "i64");
    assert_eq!(call_bits(&si64, "f", &[1e19f64.to_bits()]).unwrap(), i64::MAX as u64);
    assert_eq!(call_bits(&si64, "f", &[(-1e19f64).to_bits()]).unwrap(), i64::MIN as u64);
    assert_eq!(call_bits(&si64, "f", &[(-2.5f64).to_bits()]).unwrap(), (-2i64) as u64);
    let ui16 = cast("fptoui", "f16", "i16");
    assert_eq!(call_bits(&ui16, "f", &[0x7bff]).unwrap(), 65504);
    assert_eq!(call_bits(&ui16, "f", &[0x7c00]).unwrap(), 65535);
    let si16 = cast("fptosi", "f16", "i16");
    assert_eq!(call_bits(&si16, "f", &[0x7bff]).unwrap(), 32767);
}

#[test]
fn int_to_float_rounds_to_nearest_even() {
    let f32_of = |m: &Module, v: u64| f32::from_bits(call_bits(m, "f", &[v]).unwrap() as u32);
    let s = cast("sitofp", "i64", "f32");
    assert_eq!(f32_of(&s, (1u64 << 24) + 1), 16_777_216.0);
    assert_eq!(f32_of(&s, (1u64 << 24) + 3), 16_777_220.0);
    assert_eq!(f32_of(&s, (-5i64) as u64), -5.0);
    assert_eq!(f32_of(&s, i64::MIN as u64), i64::MIN as f32);
    let u = cast("uitofp", "i64", "f32");
    assert_eq!(f32_of(&u, u64::MAX), 18_446_744_073_709_551_616.0);
    let u32f = cast("uitofp", "i32", "f32");
    assert_eq!(f32_of(&u32f, 0xffff_ffff), u32::MAX as f32);
    let s8 = cast("sitofp", "i8", "f64");
    assert_eq!(call_bits(&s8, "f", &[0x80]).unwrap(), (-128.0f64).to_bits());
    let h = cast("sitofp", "i32", "f16");
    assert_eq!(call_bits(&h, "f", &[2049]).unwrap(), u64::from(f64_to_f16(2048.0)), "2049 is a tie: even");
    assert_eq!(call_bits(&h, "f", &[2051]).unwrap(), u64::from(f64_to_f16(2052.0)));
    assert_eq!(call_bits(&h, "f", &[100_000]).unwrap(), 0x7c00);
    assert_eq!(call_bits(&cast("uitofp", "i64", "f16"), "f", &[u64::MAX]).unwrap(), 0x7c00);
}

#[test]
fn float_truncation_and_extension() {
    // f64 -> f16 directly: 1 + 2^-11 + 2^-40 is just above a tie, so it rounds
    // up; going through f32 would lose 2^-40 and round the tie to even (down).
    let x = 1.0f64 + 2f64.powi(-11) + 2f64.powi(-40);
    let m = cast("fptrunc", "f64", "f16");
    assert_eq!(call_bits(&m, "f", &[x.to_bits()]).unwrap(), 0x3c01);
    assert_eq!(u64::from(f32_to_f16(x as f32)), 0x3c00, "the double-rounded answer differs");
    assert_eq!(call_bits(&m, "f", &[1e10f64.to_bits()]).unwrap(), 0x7c00);
    assert_eq!(call_bits(&m, "f", &[(2f64.powi(-24)).to_bits()]).unwrap(), 1);
    let m = cast("fptrunc", "f64", "f32");
    assert_eq!(call_bits(&m, "f", &[0.1f64.to_bits()]).unwrap(), u64::from(0.1f32.to_bits()));
    assert_eq!(call_bits(&m, "f", &[1e-45f64.to_bits()]).unwrap(), 1, "rounds to the smallest subnormal");
    let m = cast("fpext", "f16", "f64");
    assert_eq!(call_bits(&m, "f", &[1]).unwrap(), 2f64.powi(-24).to_bits());
    assert_eq!(call_bits(&m, "f", &[0xfbff]).unwrap(), (-65504.0f64).to_bits());
    let m = cast("fpext", "f32", "f64");
    assert_eq!(call_bits(&m, "f", &[1]).unwrap(), f64::from(f32::from_bits(1)).to_bits());
    assert!(f64::from_bits(call_bits(&m, "f", &[0x7fc0_0000]).unwrap()).is_nan());
}

#[test]
fn integer_casts_and_bitcasts() {
    assert_eq!(call_bits(&cast("trunc", "i32", "i8"), "f", &[0x1234_5680]).unwrap(), 0x80);
    assert_eq!(call_bits(&cast("sext", "i8", "i32"), "f", &[0x80]).unwrap(), 0xffff_ff80);
    assert_eq!(call_bits(&cast("zext", "i8", "i32"), "f", &[0x80]).unwrap(), 0x80);
    assert_eq!(call_bits(&cast("sext", "i1", "i32"), "f", &[1]).unwrap(), 0xffff_ffff);
    assert_eq!(call_bits(&cast("zext", "i1", "i64"), "f", &[1]).unwrap(), 1);
    assert_eq!(call_bits(&cast("bitcast", "f32", "i32"), "f", &[u64::from(1.5f32.to_bits())]).unwrap(), 0x3fc0_0000);
    let m = module(
        "func @f(%a: i32, %b: i32) -> i64 {\nentry:\n  %v = make <2 x i32> %a, %b\n  %r = bitcast <2 x i32> %v to i64\n  ret %r\n}\n",
    );
    assert_eq!(call_bits(&m, "f", &[0x1111_2222, 0x3333_4444]).unwrap(), 0x3333_4444_1111_2222, "element 0 is the low half");
    let m = module(
        "func @f(%a: i64) -> i16 {\nentry:\n  %v = bitcast i64 %a to <4 x i16>\n  %r = extract %v, 2\n  ret %r\n}\n",
    );
    assert_eq!(call_bits(&m, "f", &[0x4444_3333_2222_1111]).unwrap(), 0x3333);
    let m = module("func @f(%a: <2 x f16>) -> f32 {\nentry:\n  %r = bitcast <2 x f16> %a to f32\n  ret %r\n}\n");
    let got = call(&m, "f", &[RtValue::Agg(vec![RtValue::f16_bits(0x0000), RtValue::f16_bits(0x3f80)])]).unwrap().unwrap();
    assert_eq!(got, RtValue::f32(1.0));
}

#[test]
fn vectors_are_element_wise() {
    let m = module(
        "func @f(%a: <3 x i32>, %b: <3 x i32>) -> <3 x i32> {\nentry:\n  %s = sub <3 x i32> %a, %b\n  %m = mul <3 x i32> %s, %s\n  ret %m\n}\n",
    );
    let v = |x: [i32; 3]| RtValue::Agg(x.iter().map(|&e| RtValue::i32(e)).collect());
    let got = call(&m, "f", &[v([1, i32::MIN, 7]), v([4, 1, -7])]).unwrap().unwrap();
    let want = [1i32 - 4, i32::MIN.wrapping_sub(1), 14].map(|s| s.wrapping_mul(s));
    assert_eq!(got, v(want));
    let m = module(
        "func @f(%a: <2 x f32>, %b: <2 x f32>, %c: i1) -> <2 x f32> {\nentry:\n  %x = fma <2 x f32> %a, %b, %b\n  %y = fneg <2 x f32> %x\n  %r = select <2 x f32> %c, %x, %y\n  ret %r\n}\n",
    );
    let f = |x: [f32; 2]| RtValue::Agg(x.iter().map(|&e| RtValue::f32(e)).collect());
    let got = call(&m, "f", &[f([1.5, -2.0]), f([3.0, 0.25]), RtValue::Scalar(0)]).unwrap().unwrap();
    assert_eq!(got, f([-(1.5f32.mul_add(3.0, 3.0)), -((-2.0f32).mul_add(0.25, 0.25))]));
    let got = call(&m, "f", &[f([1.5, -2.0]), f([3.0, 0.25]), RtValue::Scalar(1)]).unwrap().unwrap();
    assert_eq!(got, f([1.5f32.mul_add(3.0, 3.0), (-2.0f32).mul_add(0.25, 0.25)]));
    let m = module(
        "func @f(%a: <4 x i8>) -> <4 x i8> {\nentry:\n  %e = const i8 9\n  %x = insert %a, %e, 3\n  %r = shl <4 x i8> %x, %x\n  ret %r\n}\n",
    );
    let v8 = |x: [u8; 4]| RtValue::Agg(x.iter().map(|&e| RtValue::Scalar(u64::from(e))).collect());
    let got = call(&m, "f", &[v8([1, 2, 3, 4])]).unwrap().unwrap();
    assert_eq!(got, v8([1u8 << 1, 2 << 2, 3 << 3, 9u8.wrapping_shl(9 % 8)]));
}

// ---------------------------------------------------------------- kernels

fn launch(grid: u32, block: u32) -> Launch {
    Launch::new([grid, 1, 1], [block, 1, 1])
}

fn read_u32s(mem: &Memory, addr: u64, n: usize) -> Vec<u32> {
    mem.read(addr, n * 4).unwrap().chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
}

fn u32_bytes(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn saxpy_over_several_work_groups() {
    let m = module(
        "kernel @saxpy(%n: i32, %a: f32, %x: ptr<global>, %y: ptr<global>) {
entry:
  %lid = workitem_id x
  %gid = workgroup_id x
  %size = workgroup_size x
  %base = mul i32 %gid, %size
  %i = add i32 %base, %lid
  %in = icmp slt i32 %i, %n
  brif %in, body, done
body:
  %off = mul i32 %i, 4
  %px = ptradd %x, %off
  %py = ptradd %y, %off
  %vx = load f32 %px
  %vy = load f32 %py
  %r = fma f32 %a, %vx, %vy
  store f32 %r, %py
  br done
done:
  ret
}
",
    );
    let n = 200usize;
    let xs: Vec<f32> = (0..n).map(|i| i as f32 * 0.37 - 11.0).collect();
    let ys: Vec<f32> = (0..n).map(|i| 1.0 / (i as f32 + 1.0)).collect();
    let mut mem = Memory::new();
    let x = mem.alloc(&xs.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>(), 4);
    let y = mem.alloc(&ys.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>(), 4);
    let args = [RtValue::i32(n as i32), RtValue::f32(2.5), RtValue::Scalar(x), RtValue::Scalar(y)];
    let stats = run_kernel(&m, "saxpy", &launch(256, 64), &args, &mut mem).unwrap();
    assert_eq!((stats.work_items, stats.work_groups), (256, 4));
    let out: Vec<f32> = mem.read(y, n * 4).unwrap().chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
    for i in 0..n {
        assert_eq!(out[i].to_bits(), 2.5f32.mul_add(xs[i], ys[i]).to_bits(), "element {i}");
    }
}

#[test]
fn builtins_in_three_dimensions() {
    let m = module(
        "kernel @k(%out: ptr<global>) {
entry:
  %lx = workitem_id x
  %ly = workitem_id y
  %lz = workitem_id z
  %gx = workgroup_id x
  %gy = workgroup_id y
  %gz = workgroup_id z
  %sx = workgroup_size x
  %sy = workgroup_size y
  %nx = grid_size x
  %ny = grid_size y
  %ix = mul i32 %gx, %sx
  %x = add i32 %ix, %lx
  %iy = mul i32 %gy, %sy
  %y = add i32 %iy, %ly
  %sz = workgroup_size z
  %iz = mul i32 %gz, %sz
  %z = add i32 %iz, %lz
  %t0 = mul i32 %z, %ny
  %t1 = add i32 %t0, %y
  %t2 = mul i32 %t1, %nx
  %lin = add i32 %t2, %x
  %off = mul i32 %lin, 4
  %p = ptradd %out, %off
  %v0 = mul i32 %x, 10000
  %v1 = mul i32 %y, 100
  %v2 = add i32 %v0, %v1
  %v = add i32 %v2, %z
  store i32 %v, %p
  ret
}
",
    );
    let (gx, gy, gz) = (8u32, 6u32, 4u32);
    let mut mem = Memory::new();
    let out = mem.alloc_zeroed((gx * gy * gz * 4) as usize, 4);
    let l = Launch::new([gx, gy, gz], [4, 3, 2]);
    let stats = run_kernel(&m, "k", &l, &[RtValue::Scalar(out)], &mut mem).unwrap();
    assert_eq!(stats.work_groups, 2 * 2 * 2);
    let got = read_u32s(&mem, out, (gx * gy * gz) as usize);
    for z in 0..gz {
        for y in 0..gy {
            for x in 0..gx {
                assert_eq!(got[((z * gy + y) * gx + x) as usize], x * 10000 + y * 100 + z);
            }
        }
    }
}

#[test]
fn memory_alignment_bounds_and_sizes() {
    let m = module(
        "kernel @k(%p: ptr<global>, %off: i64) {
entry:
  %q = ptradd %p, %off
  %v = load i32 %q
  store i32 %v, %p
  ret
}
kernel @v3(%p: ptr<global>) {
entry:
  %v = load <3 x i32> %p
  %e = extract %v, 2
  store i32 %e, %p
  ret
}
kernel @unaligned(%p: ptr<global>) {
entry:
  %q = ptradd %p, 2
  %v = load i32 %q, align 2
  store i32 %v, %p
  ret
}
",
    );
    let mut mem = Memory::new();
    let buf = mem.alloc(&u32_bytes(&[10, 20, 30]), 4);
    let one = launch(1, 1);
    // In bounds.
    run_kernel(&m, "k", &one, &[RtValue::Scalar(buf), RtValue::i64(8)], &mut mem).unwrap();
    assert_eq!(read_u32s(&mem, buf, 3), vec![30, 20, 30]);
    // Misaligned for the natural alignment 4.
    let e = run_kernel(&m, "k", &one, &[RtValue::Scalar(buf), RtValue::i64(2)], &mut mem).unwrap_err();
    assert!(e.message.contains("misaligned") && e.to_string().contains("load i32 %q"), "{e}");
    assert_eq!(e.inst, Some(1));
    // Out of bounds: the last 4 bytes are past the 12-byte allocation.
    let e = run_kernel(&m, "k", &one, &[RtValue::Scalar(buf), RtValue::i64(12)], &mut mem).unwrap_err();
    assert!(e.message.contains(&format!("{:#x}", buf + 12)) && e.message.contains("nearest"), "{e}");
    let e = run_kernel(&m, "k", &one, &[RtValue::Scalar(buf), RtValue::i64(-4)], &mut mem).unwrap_err();
    assert!(e.message.contains("outside"), "{e}");
    // A <3 x i32> access touches exactly 12 bytes (a 16-byte read would be out of bounds).
    run_kernel(&m, "v3", &one, &[RtValue::Scalar(buf)], &mut mem).unwrap();
    assert_eq!(read_u32s(&mem, buf, 1), vec![30]);
    // An explicit smaller alignment allows the access.
    run_kernel(&m, "unaligned", &one, &[RtValue::Scalar(buf)], &mut mem).unwrap();
    // Bytes 2..6 of [30, 20, ...]: the high half of 30 and the low half of 20.
    assert_eq!(read_u32s(&mem, buf, 1)[0], u32::from_le_bytes([0, 0, 20, 0]));
    // Null is never mapped.
    let e = run_kernel(&m, "k", &one, &[RtValue::Scalar(0), RtValue::i64(0)], &mut mem).unwrap_err();
    assert!(e.message.contains("outside"), "{e}");
}

#[test]
fn uninitialised_lds_and_private_reads_are_errors() {
    let m = module(
        "kernel @lds(%out: ptr<global>) {
entry:
  %a = lds_slot 64, align 4
  %q = ptradd %a, 4
  store i32 7, %a
  %v = load i32 %q
  store i32 %v, %out
  ret
}
kernel @priv(%out: ptr<global>) {
entry:
  %s = stack_slot 8, align 4
  store i16 1, %s
  %v = load i32 %s
  store i32 %v, %out
  ret
}
kernel @lds_oob(%out: ptr<global>) {
entry:
  %a = lds_slot 8, align 4
  %q = ptradd %a, 8
  store i32 1, %q
  ret
}
kernel @flat_priv(%out: ptr<global>) {
entry:
  %s = stack_slot 4, align 4
  store i32 1, %s
  %f = addrspacecast ptr<private> %s to ptr
  %v = atomic add i32 %f, 1
  store i32 %v, %out
  ret
}
",
    );
    let mut mem = Memory::new();
    let out = mem.alloc_zeroed(4, 4);
    let e = run_kernel(&m, "lds", &launch(2, 2), &[RtValue::Scalar(out)], &mut mem).unwrap_err();
    assert!(e.message.contains("never written") && e.message.contains("local"), "{e}");
    assert_eq!(e.work_item, Some([0, 0, 0]));
    let e = run_kernel(&m, "priv", &launch(1, 1), &[RtValue::Scalar(out)], &mut mem).unwrap_err();
    assert!(e.message.contains("never written") && e.message.contains("private"), "{e}");
    let e = run_kernel(&m, "lds_oob", &launch(1, 1), &[RtValue::Scalar(out)], &mut mem).unwrap_err();
    assert!(e.message.contains("outside every lds_slot"), "{e}");
    // Flat atomics reach global memory and LDS, not private memory.
    let e = run_kernel(&m, "flat_priv", &launch(1, 1), &[RtValue::Scalar(out)], &mut mem).unwrap_err();
    assert!(e.message.contains("atomic through a flat pointer into private memory"), "{e}");
}

#[test]
fn atomic_histogram_with_contention() {
    let m = module(
        "kernel @hist(%bins: ptr<global>, %old: ptr<global>) {
entry:
  %lid = workitem_id x
  %gid = workgroup_id x
  %size = workgroup_size x
  %b = mul i32 %gid, %size
  %i = add i32 %b, %lid
  %bin = urem i32 %i, 8
  %boff = mul i32 %bin, 4
  %pb = ptradd %bins, %boff
  %prev = atomic add i32 %pb, 1
  %ooff = mul i32 %i, 4
  %po = ptradd %old, %ooff
  store i32 %prev, %po
  %x = atomic xor i32 %pb, 0
  ret
}
",
    );
    let mut mem = Memory::new();
    let bins = mem.alloc_zeroed(32, 4);
    let old = mem.alloc_zeroed(256 * 4, 4);
    run_kernel(&m, "hist", &launch(256, 64), &[RtValue::Scalar(bins), RtValue::Scalar(old)], &mut mem).unwrap();
    assert_eq!(read_u32s(&mem, bins, 8), vec![32; 8]);
    // The old values seen for each bin are exactly 0..32, each once.
    let olds = read_u32s(&mem, old, 256);
    for bin in 0..8 {
        let mut seen: Vec<u32> = (0..256).filter(|i| i % 8 == bin).map(|i| olds[i]).collect();
        seen.sort();
        assert_eq!(seen, (0..32).collect::<Vec<u32>>());
    }
}

#[test]
fn atomic_operations_return_the_old_value() {
    let m = module(
        "kernel @k(%p: ptr<global>, %out: ptr<global>) {
entry:
  %p1 = ptradd %p, 8
  %p2 = ptradd %p, 16
  %a = atomic smin i32 %p, -5
  %b = atomic umax i32 %p, 3
  %c = atomic sub i64 %p1, 10
  %d = cmpxchg i32 %p2, 1, 99
  %e = cmpxchg i32 %p2, 1, 42
  %f = atomic xchg i32 %p2, 7
  store i32 %a, %out
  %o1 = ptradd %out, 4
  store i32 %b, %o1
  %o2 = ptradd %out, 8
  store i64 %c, %o2
  %o3 = ptradd %out, 16
  store i32 %d, %o3
  %o4 = ptradd %out, 20
  store i32 %e, %o4
  %o5 = ptradd %out, 24
  store i32 %f, %o5
  ret
}
",
    );
    let mut mem = Memory::new();
    let mut init = u32_bytes(&[4, 0]);
    init.extend_from_slice(&3u64.to_le_bytes());
    init.extend_from_slice(&u32_bytes(&[1, 0]));
    let p = mem.alloc(&init, 8);
    let out = mem.alloc_zeroed(28, 8);
    run_kernel(&m, "k", &launch(1, 1), &[RtValue::Scalar(p), RtValue::Scalar(out)], &mut mem).unwrap();
    let o = mem.read(out, 28).unwrap();
    let u = |i: usize| u32::from_le_bytes(o[i..i + 4].try_into().unwrap());
    assert_eq!(u(0), 4, "smin returns the old 4");
    assert_eq!(u(4), (-5i32) as u32, "umax(-5 as unsigned, 3) keeps -5");
    assert_eq!(u64::from_le_bytes(o[8..16].try_into().unwrap()), 3);
    assert_eq!((u(16), u(20), u(24)), (1, 99, 99));
    let pm = mem.read(p, 24).unwrap();
    assert_eq!(u32::from_le_bytes(pm[0..4].try_into().unwrap()), (-5i32) as u32);
    assert_eq!(u64::from_le_bytes(pm[8..16].try_into().unwrap()), 3u64.wrapping_sub(10));
    assert_eq!(u32::from_le_bytes(pm[16..20].try_into().unwrap()), 7);
}

const LDS_REDUCTION: &str = "kernel @reduce(%in: ptr<global>, %out: ptr<global>) {
entry:
  %lds = lds_slot 256, align 4
  %lid = workitem_id x
  %gid = workgroup_id x
  %base = mul i32 %gid, 64
  %i = add i32 %base, %lid
  %off = mul i32 %i, 4
  %pin = ptradd %in, %off
  %v = load i32 %pin
  %loff = mul i32 %lid, 4
  %pl = ptradd %lds, %loff
  store i32 %v, %pl
  barrier
  br loop(32)
loop(%s: i32):
  %active = icmp ult i32 %lid, %s
  brif %active, add, next
add:
  %o = add i32 %lid, %s
  %oo = mul i32 %o, 4
  %po = ptradd %lds, %oo
  %a = load i32 %pl
  %b = load i32 %po
  %sum = add i32 %a, %b
  store i32 %sum, %pl
  br next
next:
  barrier
  %s2 = lshr i32 %s, 1
  %more = icmp ne i32 %s2, 0
  brif %more, loop(%s2), finish
finish:
  %first = icmp eq i32 %lid, 0
  brif %first, write, done
write:
  %r = load i32 %lds
  %go = mul i32 %gid, 4
  %pout = ptradd %out, %go
  store i32 %r, %pout
  br done
done:
  ret
}
";

#[test]
fn lds_reduction_with_barriers() {
    let m = module(LDS_REDUCTION);
    let input: Vec<u32> = (0..256u32).map(|i| i.wrapping_mul(2_654_435_761) >> 7).collect();
    let mut mem = Memory::new();
    let pin = mem.alloc(&u32_bytes(&input), 4);
    let pout = mem.alloc_zeroed(16, 4);
    run_kernel(&m, "reduce", &launch(256, 64), &[RtValue::Scalar(pin), RtValue::Scalar(pout)], &mut mem).unwrap();
    let want: Vec<u32> = input.chunks(64).map(|c| c.iter().fold(0u32, |a, &b| a.wrapping_add(b))).collect();
    assert_eq!(read_u32s(&mem, pout, 4), want);
}

#[test]
fn lds_is_per_work_group_and_local_atomics_work() {
    // Work-item 0 zeroes a counter, everyone increments it, work-item 0 stores it.
    let m = module(
        "kernel @k(%out: ptr<global>) {
entry:
  %c = lds_slot 4, align 4
  %lid = workitem_id x
  %first = icmp eq i32 %lid, 0
  brif %first, init, wait
init:
  store i32 0, %c
  br wait
wait:
  barrier
  %old = atomic add i32 %c, 1
  barrier
  brif %first, write, done
write:
  %n = load i32 %c
  %g = workgroup_id x
  %go = mul i32 %g, 4
  %p = ptradd %out, %go
  store i32 %n, %p
  br done
done:
  ret
}
",
    );
    let mut mem = Memory::new();
    let out = mem.alloc_zeroed(12, 4);
    run_kernel(&m, "k", &launch(3 * 40, 40), &[RtValue::Scalar(out)], &mut mem).unwrap();
    assert_eq!(read_u32s(&mem, out, 3), vec![40, 40, 40]);
}

#[test]
fn divergent_barriers_are_errors() {
    let m = module(
        "kernel @half(%out: ptr<global>) {
entry:
  %lid = workitem_id x
  %c = icmp ult i32 %lid, 32
  brif %c, wait, done
wait:
  barrier
  br done
done:
  ret
}
kernel @two(%out: ptr<global>) {
entry:
  %lid = workitem_id x
  %bit = and i32 %lid, 1
  %c = icmp eq i32 %bit, 0
  brif %c, a, b
a:
  barrier
  br done
b:
  barrier
  br done
done:
  ret
}
func @sync() {
entry:
  barrier
  ret
}
kernel @depth(%out: ptr<global>) {
entry:
  %lid = workitem_id x
  %c = icmp eq i32 %lid, 0
  brif %c, a, b
a:
  call @sync()
  br done
b:
  call @sync()
  br done
done:
  ret
}
kernel @ok(%out: ptr<global>) {
entry:
  call @sync()
  call @sync()
  ret
}
",
    );
    let mut mem = Memory::new();
    let out = mem.alloc_zeroed(4, 4);
    let e = run_kernel(&m, "half", &launch(64, 64), &[RtValue::Scalar(out)], &mut mem).unwrap_err();
    assert!(e.message.contains("barrier divergence") && e.message.contains("returned"), "{e}");
    assert_eq!(e.inst_text.as_deref(), Some("barrier"));
    let e = run_kernel(&m, "two", &launch(4, 4), &[RtValue::Scalar(out)], &mut mem).unwrap_err();
    assert!(e.message.contains("barrier divergence") && e.message.contains("different"), "{e}");
    // Same barrier instruction, but reached through different call sites.
    let e = run_kernel(&m, "depth", &launch(2, 2), &[RtValue::Scalar(out)], &mut mem).unwrap_err();
    assert!(e.message.contains("barrier divergence"), "{e}");
    // A barrier in a device function reached by everyone is fine; a lone
    // work-item group passes barriers trivially.
    run_kernel(&m, "ok", &launch(8, 4), &[RtValue::Scalar(out)], &mut mem).unwrap();
    run_kernel(&m, "half", &launch(1, 1), &[RtValue::Scalar(out)], &mut mem).unwrap();
}

// ---------------------------------------------------------------- calls and control

const CALLS: &str = "func @fib(%n: i32) -> i32 {
entry:
  %small = icmp slt i32 %n, 2
  brif %small, base, rec
base:
  ret %n
rec:
  %a = sub i32 %n, 1
  %b = sub i32 %n, 2
  %fa = call @fib(%a)
  %fb = call @fib(%b)
  %r = add i32 %fa, %fb
  ret %r
}
func @fact(%n: i64) -> i64 {
entry:
  %z = icmp eq i64 %n, 0
  brif %z, one, rec
one:
  ret 1
rec:
  %m = sub i64 %n, 1
  %f = call @fact(%m)
  %r = mul i64 %n, %f
  ret %r
}
func @forever(%n: i32) -> i32 {
entry:
  %r = call @forever(%n)
  ret %r
}
func @spin() {
entry:
  br loop(0)
loop(%i: i32):
  %j = add i32 %i, 1
  br loop(%j)
}
func @never(%x: i32) -> i32 {
entry:
  %c = icmp eq i32 %x, 0
  brif %c, bad, good
bad:
  unreachable
good:
  ret %x
}
func @swap(%a: i32, %b: i32, %n: i32) -> i32 {
entry:
  br loop(%a, %b, %n)
loop(%x: i32, %y: i32, %k: i32):
  %k1 = sub i32 %k, 1
  %done = icmp eq i32 %k, 0
  brif %done, out, loop(%y, %x, %k1)
out:
  %r = sub i32 %x, %y
  ret %r
}
kernel @k(%out: ptr<global>) {
entry:
  %lid = workitem_id x
  %f = call @fib(%lid)
  %o = mul i32 %lid, 4
  %p = ptradd %out, %o
  store i32 %f, %p
  ret
}
";

fn fib(n: u32) -> u32 {
    if n < 2 {
        n
    } else {
        fib(n - 1) + fib(n - 2)
    }
}

#[test]
fn recursion_and_call_limits() {
    let m = module(CALLS);
    assert_eq!(call_bits(&m, "fib", &[20]).unwrap(), u64::from(fib(20)));
    assert_eq!(call_bits(&m, "fact", &[20]).unwrap(), (1..=20u64).product::<u64>());
    assert_eq!(call_bits(&m, "fact", &[25]).unwrap(), (1..=25u64).fold(1u64, |a, b| a.wrapping_mul(b)));
    let e = err_text(call_bits(&m, "forever", &[1]));
    assert!(e.contains("call depth limit"), "{e}");
    assert!(e.contains("called from @forever"), "{e}");
    let e = err_text(call_bits(&m, "never", &[0]));
    assert!(e.contains("'unreachable' was executed"), "{e}");
    assert_eq!(call_bits(&m, "never", &[5]).unwrap(), 5);
    let options = Options { max_instructions: 10_000, ..Options::default() };
    let e = call_function(&m, "spin", &[], &mut Memory::new(), &options).unwrap_err();
    assert!(e.message.contains("instruction limit reached"), "{e}");
    // Block arguments are a parallel copy: (x, y) <- (y, x).
    assert_eq!(call_bits(&m, "swap", &[10, 3, 3]).unwrap(), U32(3 - 10));
    assert_eq!(call_bits(&m, "swap", &[10, 3, 4]).unwrap(), U32(10 - 3));
    let mut mem = Memory::new();
    let out = mem.alloc_zeroed(16 * 4, 4);
    run_kernel(&m, "k", &launch(16, 16), &[RtValue::Scalar(out)], &mut mem).unwrap();
    assert_eq!(read_u32s(&mem, out, 16), (0..16).map(fib).collect::<Vec<_>>());
}

#[test]
fn stack_slots_are_per_call_and_freed_on_return() {
    let m = module(
        "func @sum(%n: i32) -> i32 {
entry:
  %s = stack_slot 4, align 4
  store i32 %n, %s
  %z = icmp eq i32 %n, 0
  brif %z, base, rec
base:
  ret 0
rec:
  %m = sub i32 %n, 1
  %r = call @sum(%m)
  %mine = load i32 %s
  %t = add i32 %r, %mine
  ret %t
}
func @leak() -> ptr<private> {
entry:
  %s = stack_slot 4, align 4
  store i32 1, %s
  ret %s
}
func @dangling() -> i32 {
entry:
  %p = call @leak()
  %v = load i32 %p
  ret %v
}
",
    );
    assert_eq!(call_bits(&m, "sum", &[100]).unwrap(), 5050);
    let e = err_text(call_bits(&m, "dangling", &[]));
    assert!(e.contains("private") && e.contains("outside every stack_slot"), "{e}");
}

#[test]
fn flat_pointers_and_addrspace_casts() {
    let m = module(
        "kernel @k(%g: ptr<global>, %out: ptr<global>) {
entry:
  %l = lds_slot 16, align 8
  %s = stack_slot 8, align 8
  %fl = addrspacecast ptr<local> %l to ptr
  %fs = addrspacecast ptr<private> %s to ptr
  %fg = addrspacecast ptr<global> %g to ptr
  store i32 11, %fl
  store i32 22, %fs
  store i32 33, %fg
  %a = load i32 %l
  %b = load i32 %s
  %c = load i32 %g
  %l2 = addrspacecast ptr %fl to ptr<local>
  %s2 = addrspacecast ptr %fs to ptr<private>
  %g2 = addrspacecast ptr %fg to ptr<global>
  %a2 = load i32 %l2
  %b2 = load i32 %s2
  %c2 = load i32 %g2
  %x = add i32 %a, %b
  %y = add i32 %x, %c
  %z0 = add i32 %a2, %b2
  %z = add i32 %z0, %c2
  store i32 %y, %out
  %o1 = ptradd %out, 4
  store i32 %z, %o1
  %il = ptrtoint ptr %fl to i64
  %is = ptrtoint ptr %fs to i64
  %sl = ptrtoint ptr<local> %l to i32
  %ss = ptrtoint ptr<private> %s to i32
  %o2 = ptradd %out, 8
  store i64 %il, %o2
  %o3 = ptradd %out, 16
  store i64 %is, %o3
  %o4 = ptradd %out, 24
  store i32 %sl, %o4
  %o5 = ptradd %out, 28
  store i32 %ss, %o5
  ret
}
kernel @bad(%g: ptr<global>) {
entry:
  %fg = addrspacecast ptr<global> %g to ptr
  %l = addrspacecast ptr %fg to ptr<local>
  ret
}
kernel @bad2(%g: ptr<global>) {
entry:
  %l = lds_slot 4, align 4
  %fl = addrspacecast ptr<local> %l to ptr
  %x = addrspacecast ptr %fl to ptr<global>
  ret
}
",
    );
    let mut mem = Memory::new();
    let g = mem.alloc_zeroed(4, 4);
    let out = mem.alloc_zeroed(32, 8);
    run_kernel(&m, "k", &launch(1, 1), &[RtValue::Scalar(g), RtValue::Scalar(out)], &mut mem).unwrap();
    let o = mem.read(out, 32).unwrap().to_vec();
    let u32_at = |i: usize| u32::from_le_bytes(o[i..i + 4].try_into().unwrap());
    let u64_at = |i: usize| u64::from_le_bytes(o[i..i + 8].try_into().unwrap());
    assert_eq!((u32_at(0), u32_at(4)), (66, 66));
    assert_eq!(u32_at(24), 0, "the first lds_slot is at local address 0");
    assert_eq!(u64_at(8), LOCAL_APERTURE + u64::from(u32_at(24)));
    assert_eq!(u64_at(16), PRIVATE_APERTURE + u64::from(u32_at(28)));
    assert_eq!(u32_at(28) % 8, 0);
    assert_eq!(read_u32s(&mem, g, 1), vec![33]);
    let e = run_kernel(&m, "bad", &launch(1, 1), &[RtValue::Scalar(g)], &mut mem).unwrap_err();
    assert!(e.message.contains("addrspacecast") && e.message.contains("global address"), "{e}");
    let e = run_kernel(&m, "bad2", &launch(1, 1), &[RtValue::Scalar(g)], &mut mem).unwrap_err();
    assert!(e.message.contains("local address, not a global"), "{e}");
}

#[test]
fn lds_slots_are_laid_out_in_order_at_aligned_offsets() {
    let m = module(
        "kernel @k(%out: ptr<global>) {
entry:
  %a = lds_slot 3, align 1
  %b = lds_slot 8, align 8
  %c = lds_slot 1, align 2
  %d = lds_slot 4, align 16
  %ia = ptrtoint ptr<local> %a to i32
  %ib = ptrtoint ptr<local> %b to i32
  %ic = ptrtoint ptr<local> %c to i32
  %id = ptrtoint ptr<local> %d to i32
  %v0 = make <4 x i32> %ia, %ib, %ic, %id
  store <4 x i32> %v0, %out
  ret
}
",
    );
    let mut mem = Memory::new();
    let out = mem.alloc_zeroed(16, 16);
    run_kernel(&m, "k", &launch(1, 1), &[RtValue::Scalar(out)], &mut mem).unwrap();
    assert_eq!(read_u32s(&mem, out, 4), vec![0, 8, 16, 32]);
    // The LDS limit.
    let big = module("kernel @k() {\nentry:\n  %a = lds_slot 65536, align 4\n  %b = lds_slot 4, align 4\n  ret\n}\n");
    let e = run_kernel(&big, "k", &launch(1, 1), &[], &mut mem).unwrap_err();
    assert!(e.message.contains("LDS"), "{e}");
}

#[test]
fn launch_and_argument_errors() {
    let m = module("kernel @k(%n: i32, %p: ptr<global>) {\nentry:\n  ret\n}\nfunc @f() {\nentry:\n  ret\n}\n");
    let mut mem = Memory::new();
    let args = [RtValue::i32(1), RtValue::Scalar(0x1000)];
    let err = |l: Launch, args: &[RtValue], mem: &mut Memory| run_kernel(&m, "k", &l, args, mem).unwrap_err().message;
    assert!(err(launch(100, 64), &args, &mut mem).contains("not a multiple"));
    assert!(err(Launch::new([2048, 1, 1], [2048, 1, 1]), &args, &mut mem).contains("1024"));
    assert!(err(Launch::new([64, 0, 1], [64, 1, 1]), &args, &mut mem).contains("at least 1"));
    assert!(err(launch(1, 1), &args[..1], &mut mem).contains("takes 2 arguments"));
    assert!(err(launch(1, 1), &[RtValue::Scalar(1 << 40), RtValue::Scalar(0)], &mut mem).contains("does not fit in i32"));
    assert!(err(launch(1, 1), &[RtValue::Agg(vec![]), RtValue::Scalar(0)], &mut mem).contains("aggregate"));
    assert!(run_kernel(&m, "nope", &launch(1, 1), &args, &mut mem).unwrap_err().message.contains("no kernel named"));
    assert!(run_kernel(&m, "f", &launch(1, 1), &[], &mut mem).unwrap_err().message.contains("not a kernel"));
    let stats = run_kernel(&m, "k", &Launch::new([4, 4, 4], [2, 2, 2]), &args, &mut mem).unwrap();
    assert_eq!(stats, amdgpu_cg::mir::interp::RunStats { instructions: 64, work_items: 64, work_groups: 8 });
}

#[test]
fn errors_name_the_instruction_and_the_work_item() {
    let m = module(
        "kernel @k(%p: ptr<global>) {
entry:
  %lid = workitem_id x
  %d = sub i32 5, %lid
  %q = sdiv i32 100, %d
  ret
}
",
    );
    let mut mem = Memory::new();
    let e = run_kernel(&m, "k", &launch(16, 8), &[RtValue::Scalar(0)], &mut mem).unwrap_err();
    assert_eq!(e.work_item, Some([5, 0, 0]));
    assert_eq!(e.work_group, Some([0, 0, 0]));
    assert_eq!(e.function.as_deref(), Some("k"));
    assert_eq!(e.block.as_deref(), Some("entry"));
    assert_eq!(e.inst, Some(2));
    assert!(e.span.is_known());
    let text = e.to_string();
    assert!(text.contains("@k, block 'entry', instruction 3: `%q = sdiv i32 100, %d`"), "{text}");
    assert!(text.contains("work-item (5, 0, 0) of work-group (0, 0, 0)"), "{text}");
    let options = Options { max_instructions: 20, ..Options::default() };
    let e = run_kernel_with(&m, "k", &launch(16, 8), &[RtValue::Scalar(0)], &mut mem, &options).unwrap_err();
    assert!(e.message.contains("instruction limit"), "{e}");
}

// ---------------------------------------------------------------- robustness

/// Every operation on every type, on edge values: a result or an error, never a
/// panic. Casts are tried between all pairs and kept when the verifier accepts.
#[test]
fn every_operation_on_edge_values_never_panics() {
    let ints = ["i8", "i16", "i32", "i64"];
    let floats = ["f16", "f32", "f64"];
    let int_values = |ty: &str| -> Vec<u64> {
        let bits = match ty {
            "i8" => 8,
            "i16" | "f16" => 16,
            "i32" | "f32" => 32,
            _ => 64,
        };
        let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
        let min = 1u64 << (bits - 1);
        vec![0, 1, mask, min, min - 1, 2, bits as u64, 0x7c00 & mask, 0x7fc0_0001 & mask, 0x8000_0001 & mask]
    };
    let int_ops = ["add", "sub", "mul", "mulhi.s", "mulhi.u", "sdiv", "udiv", "srem", "urem", "and", "or", "xor", "shl", "lshr", "ashr", "smin", "smax", "umin", "umax"];
    let float_ops = ["fadd", "fsub", "fmul", "fdiv", "fmin", "fmax"];
    let mut runs = 0;
    for ty in ints.iter().chain(&floats) {
        let ops: &[&str] = if ty.starts_with('f') { &float_ops } else { &int_ops };
        let vals = int_values(ty);
        for op in ops {
            let m = binop(op, ty);
            for &a in &vals {
                for &b in &vals {
                    let _ = call_bits(&m, "f", &[a, b]);
                    runs += 1;
                }
            }
        }
        let unops: &[&str] = if ty.starts_with('f') { &["fneg", "fabs", "sqrt", "floor", "ceil", "ftrunc"] } else { &["not", "popcount", "clz", "ctz"] };
        for op in unops {
            let m = unop(op, ty);
            for &a in &vals {
                let _ = call_bits(&m, "f", &[a]);
                runs += 1;
            }
        }
    }
    let all: Vec<&str> = ints.iter().chain(&floats).copied().collect();
    for op in ["trunc", "zext", "sext", "fptrunc", "fpext", "fptoui", "fptosi", "uitofp", "sitofp", "bitcast"] {
        for from in &all {
            for to in &all {
                let text = format!("func @f(%a: {from}) -> {to} {{\nentry:\n  %r = {op} {from} %a to {to}\n  ret %r\n}}\n");
                let Ok(m) = parse(&text) else { continue };
                if verify(&m).is_err() {
                    continue;
                }
                for &a in &int_values(from) {
                    let _ = call_bits(&m, "f", &[a]);
                    runs += 1;
                }
            }
        }
    }
    assert!(runs > 5000, "{runs}");
}

#[test]
fn vector_memory_images_and_atomic_errors() {
    let m = module(
        "kernel @k(%p: ptr<global>) {
entry:
  %v = load <4 x f16> %p
  %w = fneg <4 x f16> %v
  %q = ptradd %p, 8
  store <4 x f16> %w, %q
  %r = ptradd %p, 16
  %t = load <3 x i32> %r
  %u = add <3 x i32> %t, %t
  %s = ptradd %p, 32
  store <3 x i32> %u, %s
  ret
}
kernel @misaligned(%p: ptr<global>) {
entry:
  %q = ptradd %p, 2
  %x = atomic add i32 %q, 1
  ret
}
kernel @lds_uninit(%p: ptr<global>) {
entry:
  %l = lds_slot 8, align 8
  %x = atomic add i64 %l, 1
  ret
}
",
    );
    let mut mem = Memory::new();
    let halves: [u16; 4] = [0x3c00, 0xc000, 0x0001, 0x7e00];
    let mut init: Vec<u8> = halves.iter().flat_map(|h| h.to_le_bytes()).collect();
    init.extend_from_slice(&[0; 8]);
    init.extend_from_slice(&u32_bytes(&[1, 2, 3, 0xdead]));
    init.extend_from_slice(&u32_bytes(&[7, 7, 7, 0xbeef]));
    let p = mem.alloc(&init, 16);
    run_kernel(&m, "k", &launch(1, 1), &[RtValue::Scalar(p)], &mut mem).unwrap();
    let neg: Vec<u8> = halves.iter().flat_map(|h| (h ^ 0x8000).to_le_bytes()).collect();
    assert_eq!(mem.read(p + 8, 8).unwrap(), &neg[..]);
    // A <3 x i32> store writes 12 bytes: the fourth word keeps 0xbeef.
    assert_eq!(read_u32s(&mem, p + 32, 4), vec![2, 4, 6, 0xbeef]);
    let e = run_kernel(&m, "misaligned", &launch(1, 1), &[RtValue::Scalar(p)], &mut mem).unwrap_err();
    assert!(e.message.contains("misaligned"), "{e}");
    let e = run_kernel(&m, "lds_uninit", &launch(1, 1), &[RtValue::Scalar(p)], &mut mem).unwrap_err();
    assert!(e.message.contains("never written"), "{e}");
}

#[test]
fn nan_equivalence_helper() {
    use amdgpu_cg::abi::Type;
    use amdgpu_cg::mir::interp::ops::equivalent;
    assert!(equivalent(&Type::F32, 0x7fc0_0000, 0xffc0_0001));
    assert!(!equivalent(&Type::F32, 0x7fc0_0000, 0x3f80_0000));
    assert!(!equivalent(&Type::F32, 0x0000_0000, 0x8000_0000), "-0 and +0 differ");
    assert!(equivalent(&Type::F16, 0x7e00, 0x7c01));
    assert!(!equivalent(&Type::I32, 0x7fc0_0000, 0xffc0_0001));
    assert!(equivalent(&Type::I8, 0x1ff, 0xff), "only the type's bits count");
}

#[test]
fn memory_api() {
    let mut mem = Memory::new();
    let a = mem.alloc(&[1, 2, 3], 1);
    let b = mem.alloc(&[0; 10], 4096);
    let c = mem.alloc(&[], 8);
    assert!(a >= 0x1000 && b % 4096 == 0 && c > b + 10);
    assert!(b >= a + 3 + 256, "guard bytes between allocations");
    assert_eq!(mem.read(a, 3).unwrap(), &[1, 2, 3]);
    mem.write(a + 1, &[9, 9]).unwrap();
    assert_eq!(mem.read(a, 3).unwrap(), &[1, 9, 9]);
    assert!(mem.read(a + 2, 2).unwrap_err().message.contains("nearest"));
    assert!(mem.write(a - 1, &[0]).is_err());
    assert!(mem.read(0, 1).is_err());
    assert_eq!(mem.read(c, 0).unwrap(), &[] as &[u8]);
    assert_eq!(mem.allocations(), vec![(a, 3), (b, 10), (c, 0)]);
}

/// Constant call arguments in a block written after a block it branches to
/// forward (block ids are renumbered into text order after parsing): the
/// constant keeps its value. power(n) = 3^n, computed here by repeated calls.
#[test]
fn constant_call_arguments_outside_the_entry_block() {
    let m = module(
        "func @times(%x: i32, %k: inreg i32) -> i32 {\nentry:\n  %r = mul i32 %x, %k\n  ret %r\n}\n\
         func @power(%n: i32) -> i32 {\nentry:\n  br loop(0, 1)\nloop(%j: i32, %acc: i32):\n  %done = icmp uge i32 %j, %n\n  brif %done, exit, body\n\
         body:\n  %next = call @times(%acc, 3)\n  %j2 = add i32 %j, 1\n  br loop(%j2, %next)\nexit:\n  ret %acc\n}\n",
    );
    assert!(m.to_string().contains("call @times(%acc, 3)"), "{m}");
    for n in 0..10u32 {
        assert_eq!(call_bits(&m, "power", &[u64::from(n)]).unwrap(), 3u64.pow(n));
    }
}

/// Read-only module data refuses stores (reached through `addrspacecast`,
/// which the verifier cannot see through); writable data takes them and
/// reads them back.
#[test]
fn stores_into_read_only_data_are_errors_and_writable_data_takes_them() {
    let m = module("data @ro, align 4, bytes \"01000000\"\ndata @rw, align 4, writable, bytes \"01000000\"\n\nfunc @f(%v: i32) -> i32 {\nentry:\n  %c = data_addr @ro\n  %g = addrspacecast ptr<constant> %c to ptr<global>\n  store i32 %v, %g\n  ret %v\n}\n\nfunc @g(%v: i32) -> i32 {\nentry:\n  %p = data_addr @rw\n  %old = load i32 %p\n  store i32 %v, %p\n  %new = load i32 %p\n  %r = add i32 %old, %new\n  ret %r\n}\n");
    let e = err_text(call_bits(&m, "f", &[7]));
    assert!(e.contains("into read-only module data"), "{e}");
    assert_eq!(call_bits(&m, "g", &[7]).unwrap(), 8);
}
