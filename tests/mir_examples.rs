//! Every example kernel runs in the MIR interpreter and produces, element by
//! element, what plain Rust computes for the same inputs.

use amdgpu_cg::mir::interp::{run_kernel, Launch, Memory, RtValue};
use amdgpu_cg::mir::{self, Module};
use proptest::prelude::*;

fn load_example(name: &str) -> Module {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples").join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let module = mir::parse(&text).unwrap_or_else(|d| panic!("{name}: {d}"));
    mir::verify::verify(&module).unwrap_or_else(|ds| panic!("{name}: {ds:?}"));
    module
}

/// A small deterministic generator, so inputs do not come from the code under test.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) as u32
    }
    fn small_f32(&mut self) -> f32 {
        (self.next() % 2001) as f32 / 100.0 - 10.0
    }
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn i32_bytes(values: &[i32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn read_f32(memory: &Memory, addr: u64, count: usize) -> Vec<f32> {
    let bytes = memory.read(addr, count * 4).unwrap();
    bytes.chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}

fn read_i32(memory: &Memory, addr: u64, count: usize) -> Vec<i32> {
    let bytes = memory.read(addr, count * 4).unwrap();
    bytes.chunks(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect()
}

fn ptr(addr: u64) -> RtValue {
    RtValue::Scalar(addr)
}

fn f32_arg(v: f32) -> RtValue {
    RtValue::Scalar(u64::from(v.to_bits()))
}

fn i32_arg(v: i32) -> RtValue {
    RtValue::Scalar(u64::from(v as u32))
}

fn launch_1d(grid: u32, block: u32) -> Launch {
    Launch::new([grid, 1, 1], [block, 1, 1])
}

#[test]
fn vector_add() {
    let module = load_example("vector_add.mir");
    let mut rng = Lcg(1);
    let n = 256;
    let a: Vec<f32> = (0..n).map(|_| rng.small_f32()).collect();
    let b: Vec<f32> = (0..n).map(|_| rng.small_f32()).collect();
    let mut memory = Memory::new();
    let (pa, pb) = (memory.alloc(&f32_bytes(&a), 256), memory.alloc(&f32_bytes(&b), 256));
    let pc = memory.alloc(&vec![0; n * 4], 256);
    let stats = run_kernel(&module, "vector_add", &launch_1d(n as u32, 64), &[ptr(pa), ptr(pb), ptr(pc)], &mut memory).unwrap();
    let c = read_f32(&memory, pc, n);
    for i in 0..n {
        assert_eq!(c[i].to_bits(), (a[i] + b[i]).to_bits(), "element {i}");
    }
    assert_eq!(stats.work_items, n as u64);
    assert_eq!(stats.work_groups, 4);
}

fn saxpy_reference(n: usize, a: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
    (0..y.len()).map(|i| if i < n { a.mul_add(x[i], y[i]) } else { y[i] }).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn saxpy_matches_fused_multiply_add(
        a in -100.0f32..100.0,
        n in 0usize..200,
        x in prop::collection::vec(-1e3f32..1e3, 192),
        y in prop::collection::vec(-1e3f32..1e3, 192),
    ) {
        let module = load_example("saxpy.mir");
        let mut memory = Memory::new();
        let px = memory.alloc(&f32_bytes(&x), 16);
        let py = memory.alloc(&f32_bytes(&y), 16);
        // 192 work-items; items at or past n must leave y alone.
        let n = n.min(192);
        run_kernel(&module, "saxpy", &launch_1d(192, 64), &[i32_arg(n as i32), f32_arg(a), ptr(px), ptr(py)], &mut memory).unwrap();
        let got = read_f32(&memory, py, 192);
        let want = saxpy_reference(n, a, &x, &y);
        for i in 0..192 {
            prop_assert_eq!(got[i].to_bits(), want[i].to_bits(), "element {}", i);
        }
    }
}

#[test]
fn lds_reduction() {
    let module = load_example("lds_reduction.mir");
    let mut rng = Lcg(7);
    let (groups, size) = (4usize, 256usize);
    // Small integers: every partial sum is exact in f32, whatever the order.
    let input: Vec<f32> = (0..groups * size).map(|_| (rng.next() % 1000) as f32).collect();
    let mut memory = Memory::new();
    let pin = memory.alloc(&f32_bytes(&input), 16);
    let pout = memory.alloc(&vec![0; groups * 4], 16);
    run_kernel(&module, "reduce_sum", &launch_1d((groups * size) as u32, size as u32), &[ptr(pin), ptr(pout)], &mut memory).unwrap();
    let out = read_f32(&memory, pout, groups);
    for g in 0..groups {
        let want: f32 = input[g * size..(g + 1) * size].iter().sum();
        assert_eq!(out[g], want, "work-group {g}");
    }
}

#[test]
fn tiled_matrix_multiply() {
    let module = load_example("matmul.mir");
    let n = 32usize;
    let mut rng = Lcg(3);
    let a: Vec<f32> = (0..n * n).map(|_| rng.small_f32()).collect();
    let b: Vec<f32> = (0..n * n).map(|_| rng.small_f32()).collect();
    let mut memory = Memory::new();
    let (pa, pb) = (memory.alloc(&f32_bytes(&a), 16), memory.alloc(&f32_bytes(&b), 16));
    let pc = memory.alloc(&vec![0; n * n * 4], 16);
    let launch = Launch::new([n as u32, n as u32, 1], [16, 16, 1]);
    run_kernel(&module, "matmul", &launch, &[ptr(pa), ptr(pb), ptr(pc), i32_arg(n as i32)], &mut memory).unwrap();
    let c = read_f32(&memory, pc, n * n);
    for row in 0..n {
        for col in 0..n {
            // The kernel accumulates k = 0, 1, ..., n-1 in order with one fma each.
            let want = (0..n).fold(0.0f32, |acc, k| a[row * n + k].mul_add(b[k * n + col], acc));
            assert_eq!(c[row * n + col].to_bits(), want.to_bits(), "C[{row}][{col}]");
        }
    }
}

#[test]
fn divergent_loop() {
    let module = load_example("divergent_loop.mir");
    let mut rng = Lcg(11);
    let n = 128usize;
    let input: Vec<i32> = (0..n).map(|_| rng.next() as i32).collect();
    let mut memory = Memory::new();
    let pin = memory.alloc(&i32_bytes(&input), 16);
    let pout = memory.alloc(&vec![0; n * 4], 16);
    run_kernel(&module, "divergent_loop", &launch_1d(n as u32, 64), &[ptr(pin), ptr(pout)], &mut memory).unwrap();
    let out = read_i32(&memory, pout, n);
    for i in 0..n {
        let x = input[i];
        let want = (0..(x & 15)).fold(0i32, |acc, j| acc.wrapping_add(if j & 1 == 1 { j.wrapping_mul(x) } else { -j }));
        assert_eq!(out[i], want, "element {i} (x = {x})");
    }
}

#[test]
fn call_with_forty_arguments_and_a_struct() {
    let module = load_example("call_many.mir");
    let mut rng = Lcg(5);
    let n = 64usize;
    let input: Vec<i32> = (0..n).map(|_| (rng.next() % 2001) as i32 - 1000).collect();
    let (s0, s1, s2, s3) = (17i32, 0.25f32, 0x1_0000_0005i64, -3.5f64);
    let mut memory = Memory::new();
    let pin = memory.alloc(&i32_bytes(&input), 16);
    let pout = memory.alloc(&vec![0; n * 4], 16);
    let s = RtValue::Agg(vec![
        i32_arg(s0),
        f32_arg(s1),
        RtValue::Scalar(s2 as u64),
        RtValue::Scalar(s3.to_bits()),
    ]);
    run_kernel(&module, "call_many", &launch_1d(n as u32, 32), &[ptr(pin), ptr(pout), s], &mut memory).unwrap();
    let out = read_f32(&memory, pout, n);
    for i in 0..n {
        let x = input[i];
        let mut ints = 0i32;
        for k in 0..20 {
            ints = ints.wrapping_add(x.wrapping_add(k).wrapping_mul(k + 1));
        }
        ints = ints.wrapping_add(s0).wrapping_add(s2 as i32);
        let xf = x as f32;
        let mut floats = xf * 20.0;
        for k in 21..40 {
            floats += xf * k as f32;
        }
        floats = floats + s1 + s3 as f32;
        let want = floats + ints as f32;
        assert_eq!(out[i].to_bits(), want.to_bits(), "element {i} (x = {x})");
    }
}

#[test]
fn cli_run_prints_saxpy_results() {
    let exe = env!("CARGO_BIN_EXE_amdgpu-cg");
    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/saxpy.mir");
    let output = std::process::Command::new(exe)
        .args(["run", example.to_str().unwrap(), "--grid", "8", "--block", "4"])
        .args(["--buffer", "x=f32:iota:8", "--buffer", "y=f32:fill:1:8"])
        .args(["--arg", "n=6", "--arg", "a=2", "--arg", "x=@x", "--arg", "y=@y", "--print", "y"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "stderr: {}", String::from_utf8_lossy(&output.stderr));
    // y[i] = 2 * i + 1 for i < 6, untouched (1) after.
    let want: Vec<String> = (0..8).map(|i| if i < 6 { (2.0f32 * i as f32 + 1.0).to_string() } else { "1".to_string() }).collect();
    let line = stdout.lines().find(|l| l.starts_with("y:")).unwrap_or_else(|| panic!("no y line in:\n{stdout}"));
    let values: Vec<String> = line[line.find("= [").unwrap() + 3..line.rfind(']').unwrap()]
        .split(',')
        .map(|v| v.trim().trim_end_matches(".0").to_string())
        .collect();
    assert_eq!(values, want, "{line}");
}
