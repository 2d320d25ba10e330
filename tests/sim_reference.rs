//! The simulator, validated on code no one here wrote: OpenCL C kernels in
//! tests/data/sim compiled by clang-22 for gfx90a, gfx942 and gfx1100; every output
//! element is compared with a value computed independently in Rust.
//!
//! Compile command (one per source and target; see tests/data/sim/build.sh):
//! `clang-22 -x cl -cl-std=CL2.0 -target amdgcn-amd-amdhsa -mcpu=GPU -nogpulib -O2
//!  -mcode-object-version=5 -cl-fp32-correctly-rounded-divide-sqrt -I tests/data/sim`

use std::path::{Path, PathBuf};
use std::process::Command;

use amdgpu_cg::sim::{CodeObject, SimError, Simulator, Stats};

const GPUS: [&str; 3] = ["gfx90a", "gfx942", "gfx1100"];

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sim")
}

/// Compiles `source` for `gpu` (and optional extra flags); None when clang-22 is
/// missing outside CI.
fn compile(source: &str, gpu: &str, extra: &[&str]) -> Option<Vec<u8>> {
    let clang = amdgpu_cg::isa::llvm_tools::require("clang-22")?;
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sim_reference");
    std::fs::create_dir_all(&dir).unwrap();
    let tag = if extra.is_empty() { String::new() } else { format!("-{}", extra.join("").replace(['-', '='], "")) };
    // Tests run in parallel and may compile the same source: one file per call.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let out = dir.join(format!("{}-{gpu}{tag}-{call}.hsaco", source.trim_end_matches(".cl")));
    let status = Command::new(clang)
        .args(["-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa", "-nogpulib", "-O2", "-mcode-object-version=5"])
        .arg("-cl-fp32-correctly-rounded-divide-sqrt")
        .arg(format!("-mcpu={gpu}"))
        .args(extra)
        .arg("-I")
        .arg(data_dir())
        .arg("-Wno-everything")
        .arg("-o")
        .arg(&out)
        .arg(data_dir().join(source))
        .status()
        .expect("run clang-22");
    assert!(status.success(), "clang-22 failed on {source} for {gpu}");
    Some(std::fs::read(&out).unwrap())
}

/// Kernel argument bytes, each argument at its natural alignment.
#[derive(Default)]
struct Args(Vec<u8>);

impl Args {
    fn put(&mut self, b: &[u8]) -> &mut Self {
        let a = b.len();
        while !self.0.len().is_multiple_of(a) {
            self.0.push(0);
        }
        self.0.extend_from_slice(b);
        self
    }
    fn ptr(&mut self, p: u64) -> &mut Self {
        self.put(&p.to_le_bytes())
    }
    fn i32(&mut self, v: i32) -> &mut Self {
        self.put(&v.to_le_bytes())
    }
    fn f32(&mut self, v: f32) -> &mut Self {
        self.put(&v.to_le_bytes())
    }
    fn i64(&mut self, v: i64) -> &mut Self {
        self.put(&v.to_le_bytes())
    }
}

fn bytes_u32(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
fn bytes_f32(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
fn bytes_u64(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
fn u32s(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
}
fn u64s(b: &[u8]) -> Vec<u64> {
    b.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect()
}

/// Runs `check` for each GPU; collects failures and panics with all of them.
fn for_each_gpu(source: &str, mut check: impl FnMut(&str, &mut Simulator, &CodeObject) -> Result<Stats, String>) {
    let mut failures = Vec::new();
    for gpu in GPUS {
        let Some(hsaco) = compile(source, gpu, &[]) else { return };
        let mut sim = Simulator::new();
        let co = match sim.load(&hsaco) {
            Ok(co) => co,
            Err(e) => {
                failures.push(format!("{gpu}: {e}"));
                continue;
            }
        };
        match check(gpu, &mut sim, &co) {
            Ok(stats) => eprintln!("{source} on {gpu}: {stats}"),
            Err(e) => failures.push(format!("{gpu}: {e}")),
        }
    }
    assert!(failures.is_empty(), "{source}:\n{}", failures.join("\n"));
}

fn run(sim: &mut Simulator, co: &CodeObject, k: &str, grid: [u32; 3], block: [u32; 3], args: &Args) -> Result<Stats, String> {
    sim.dispatch(co, k, grid, block, &args.0).map_err(|e: SimError| e.to_string())
}

fn compare<T: PartialEq + std::fmt::Debug>(what: &str, got: &[T], want: &[T]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{what}: {} elements, expected {}", got.len(), want.len()));
    }
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        if g != w {
            return Err(format!("{what}[{i}] = {g:?}, expected {w:?}"));
        }
    }
    Ok(())
}

#[test]
fn vadd() {
    for_each_gpu("vadd.cl", |_, sim, co| {
        let n = 1000usize;
        let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 + 0.125).collect();
        let b: Vec<f32> = (0..n).map(|i| 3.0 - i as f32 * 0.3).collect();
        let pa = sim.alloc("a", bytes_f32(&a));
        let pb = sim.alloc("b", bytes_f32(&b));
        let pc = sim.alloc("c", vec![0; 4 * (n + 24)]);
        let stats = run(sim, co, "vadd", [n as u32, 1, 1], [64, 1, 1], Args::default().ptr(pa).ptr(pb).ptr(pc).i32(n as i32))?;
        let got = u32s(sim.read(pc).unwrap());
        let mut want: Vec<u32> = (0..n).map(|i| (a[i] + b[i]).to_bits()).collect();
        want.extend([0; 24]);
        compare("c", &got, &want)?;
        Ok(stats)
    });
}

#[test]
fn saxpy_and_division() {
    for_each_gpu("saxpy.cl", |_, sim, co| {
        let n = 777usize;
        let alpha = 2.5f32;
        let x: Vec<f32> = (0..n).map(|i| (i as f32 - 300.0) * 0.25).collect();
        let y: Vec<f32> = (0..n).map(|i| (i % 97) as f32 * 0.125 - 3.0).collect();
        let px = sim.alloc("x", bytes_f32(&x));
        let py = sim.alloc("y", bytes_f32(&y));
        let pq = sim.alloc("q", vec![0; 4 * n]);
        let stats = run(sim, co, "saxpy", [n as u32, 1, 1], [128, 1, 1], Args::default().f32(alpha).ptr(px).ptr(py).ptr(pq).i32(n as i32))?;
        let want_y: Vec<u32> = (0..n).map(|i| alpha.mul_add(x[i], y[i]).to_bits()).collect();
        let want_q: Vec<u32> = (0..n).map(|i| (x[i] / (i as f32 + 1.0)).to_bits()).collect();
        compare("y", &u32s(sim.read(py).unwrap()), &want_y)?;
        compare("q", &u32s(sim.read(pq).unwrap()), &want_q)?;
        Ok(stats)
    });
}

#[test]
fn lds_reduction_with_barriers() {
    for_each_gpu("reduce.cl", |_, sim, co| {
        let groups = 6usize;
        let input: Vec<u32> = (0..256 * groups).map(|i| (i as u32).wrapping_mul(2654435761) >> 12).collect();
        let pin = sim.alloc("in", bytes_u32(&input));
        let pout = sim.alloc("out", vec![0; 4 * groups]);
        let stats = run(sim, co, "reduce", [256 * groups as u32, 1, 1], [256, 1, 1], Args::default().ptr(pin).ptr(pout))?;
        let want: Vec<u32> = (0..groups).map(|g| input[g * 256..(g + 1) * 256].iter().fold(0u32, |a, &b| a.wrapping_add(b))).collect();
        compare("out", &u32s(sim.read(pout).unwrap()), &want)?;
        Ok(stats)
    });
}

#[test]
fn tiled_matmul() {
    for_each_gpu("matmul.cl", |_, sim, co| {
        let (m, n, k) = (32usize, 48usize, 64usize);
        let a: Vec<f32> = (0..m * k).map(|i| ((i * 7) % 11) as f32 - 5.0).collect();
        let b: Vec<f32> = (0..k * n).map(|i| ((i * 5) % 13) as f32 - 6.0).collect();
        let pa = sim.alloc("A", bytes_f32(&a));
        let pb = sim.alloc("B", bytes_f32(&b));
        let pc = sim.alloc("C", vec![0; 4 * m * n]);
        let stats = run(sim, co, "matmul", [n as u32, m as u32, 1], [16, 16, 1], Args::default().ptr(pa).ptr(pb).ptr(pc).i32(m as i32).i32(n as i32).i32(k as i32))?;
        let mut want = vec![0u32; m * n];
        for r in 0..m {
            for c in 0..n {
                let s: f32 = (0..k).map(|t| a[r * k + t] * b[t * n + c]).sum();
                want[r * n + c] = s.to_bits();
            }
        }
        compare("C", &u32s(sim.read(pc).unwrap()), &want)?;
        Ok(stats)
    });
}

#[test]
fn divergent_loop() {
    for_each_gpu("divergent.cl", |_, sim, co| {
        let n = 512usize;
        let input: Vec<u32> = (0..n as u32).map(|i| i * 37 % 1000 + 1).collect();
        let pin = sim.alloc("in", bytes_u32(&input));
        let ps = sim.alloc("steps", vec![0; 4 * n]);
        let pp = sim.alloc("peak", vec![0; 4 * n]);
        let stats = run(sim, co, "collatz", [n as u32, 1, 1], [64, 1, 1], Args::default().ptr(pin).ptr(ps).ptr(pp))?;
        let (mut steps, mut peak) = (Vec::new(), Vec::new());
        for &v in &input {
            let (mut x, mut c, mut m) = (v, 0u32, v);
            while x > 1 {
                x = if x & 1 == 1 { 3 * x + 1 } else { x >> 1 };
                m = m.max(x);
                c += 1;
            }
            steps.push(c);
            peak.push(m);
        }
        compare("steps", &u32s(sim.read(ps).unwrap()), &steps)?;
        compare("peak", &u32s(sim.read(pp).unwrap()), &peak)?;
        Ok(stats)
    });
}

#[test]
fn atomics_histogram() {
    for_each_gpu("histogram.cl", |_, sim, co| {
        let n = 1000usize;
        let data: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2246822519).rotate_left(13) % 100_000).collect();
        let pd = sim.alloc("data", bytes_u32(&data));
        let pb = sim.alloc("bins", vec![0; 4 * 64]);
        let pt = sim.alloc("total", vec![0; 4]);
        let stats = run(sim, co, "histogram", [1024, 1, 1], [128, 1, 1], Args::default().ptr(pd).i32(n as i32).ptr(pb).ptr(pt))?;
        let mut bins = vec![0u32; 64];
        for &d in &data {
            bins[(d % 64) as usize] += 1;
        }
        compare("bins", &u32s(sim.read(pb).unwrap()), &bins)?;
        compare("total", &u32s(sim.read(pt).unwrap()), &[*data.iter().max().unwrap()])?;
        Ok(stats)
    });
}

#[test]
fn int64_and_double() {
    for_each_gpu("int64.cl", |_, sim, co| {
        let n = 200usize;
        let a: Vec<i64> = (0..n as i64).map(|i| (i * 0x1234_5678_9abc_i64).wrapping_mul(if i % 3 == 0 { -1 } else { 1 }) ^ (i << 40)).collect();
        let b: Vec<i64> = (0..n as i64).map(|i| if i % 4 == 0 { -(i * 7919 + 3) } else { (i * 0x1_0000_0001 + 17) >> (i % 20) } | 1).collect();
        let x: Vec<f64> = (0..n).map(|i| (i as f64 - 77.3) * 1.0e3 / 7.0 + 0.1).collect();
        let y: Vec<f64> = (0..n).map(|i| if i % 5 == 0 { -3.3e-3 * (i as f64 + 1.0) } else { (i as f64 * 1.7 + 0.9).sqrt() }).collect();
        let pa = sim.alloc("a", bytes_u64(&a.iter().map(|&v| v as u64).collect::<Vec<_>>()));
        let pb = sim.alloc("b", bytes_u64(&b.iter().map(|&v| v as u64).collect::<Vec<_>>()));
        let pr = sim.alloc("r", vec![0; 8 * 8 * n]);
        let px = sim.alloc("x", bytes_u64(&x.iter().map(|v| v.to_bits()).collect::<Vec<_>>()));
        let py = sim.alloc("y", bytes_u64(&y.iter().map(|v| v.to_bits()).collect::<Vec<_>>()));
        let pd = sim.alloc("d", vec![0; 8 * 6 * n]);
        let stats = run(sim, co, "arith64", [n as u32, 1, 1], [64, 1, 1], Args::default().ptr(pa).ptr(pb).ptr(pr).ptr(px).ptr(py).ptr(pd))?;
        let mut want_r = Vec::new();
        let mut want_d = Vec::new();
        for i in 0..n {
            let (p, q) = (a[i], b[i]);
            want_r.extend([
                p.wrapping_mul(q),
                p.wrapping_div(q),
                p.wrapping_rem(q),
                ((p as u64) / (q as u64)) as i64,
                p.wrapping_shl((q & 63) as u32) ^ (p >> 7),
                ((p as u64) >> (q & 63)) as i64,
                p.wrapping_mul(3) >> 5,
                p.wrapping_add(q).wrapping_sub(if p < q { q } else { p }),
            ]);
            let (u, v) = (x[i], y[i]);
            want_d.extend([u + v, u * v, u / v, u.mul_add(v, -1.0), p as f64 + (q as i32) as f64, ((u * 1000.0) as i64) as f64]);
        }
        let got_r: Vec<i64> = u64s(sim.read(pr).unwrap()).into_iter().map(|v| v as i64).collect();
        compare("r", &got_r, &want_r)?;
        let got_d = u64s(sim.read(pd).unwrap());
        let want_d: Vec<u64> = want_d.iter().map(|v| v.to_bits()).collect();
        compare("d", &got_d, &want_d)?;
        Ok(stats)
    });
}

#[test]
fn call_with_stack_arguments() {
    for_each_gpu("call.cl", |_, sim, co| {
        let n = 130usize;
        let input: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(40503) ^ 0x5a5a).collect();
        let pin = sim.alloc("in", bytes_u32(&input));
        let pout = sim.alloc("out", vec![0; 4 * n]);
        let stats = run(sim, co, "caller", [n as u32, 1, 1], [64, 1, 1], Args::default().ptr(pin).ptr(pout))?;
        let want: Vec<u32> = input
            .iter()
            .map(|&b| {
                let b = b as i32;
                let mut args = Vec::new();
                for k in 0..20 {
                    args.push(b.wrapping_add(k));
                }
                for k in 20..30 {
                    args.push(b ^ k);
                }
                for k in 30..40 {
                    args.push(b.wrapping_mul(k));
                }
                args.iter().enumerate().fold(0i32, |s, (k, &v)| s.wrapping_add(v.wrapping_mul(k as i32 + 1))) as u32
            })
            .collect();
        compare("out", &u32s(sim.read(pout).unwrap()), &want)?;
        Ok(stats)
    });
}

/// gfx1100 in wave64 mode (`-mwavefrontsize64`): the same kernels, 64-lane waves on
/// the gfx11 encoding.
#[test]
fn gfx1100_wave64() {
    let mut failures = Vec::new();
    for source in ["vadd.cl", "reduce.cl", "histogram.cl", "call.cl"] {
        let Some(hsaco) = compile(source, "gfx1100", &["-mwavefrontsize64"]) else { return };
        let mut sim = Simulator::new();
        let co = sim.load(&hsaco).unwrap();
        assert!(!co.loaded.kernels[0].descriptor.kernel_code_properties.enable_wavefront_size32);
        let r = match source {
            "vadd.cl" => {
                let n = 300usize;
                let a: Vec<f32> = (0..n).map(|i| i as f32 * 1.5).collect();
                let pa = sim.alloc("a", bytes_f32(&a));
                let pc = sim.alloc("c", vec![0; 4 * n]);
                run(&mut sim, &co, "vadd", [n as u32, 1, 1], [64, 1, 1], Args::default().ptr(pa).ptr(pa).ptr(pc).i32(n as i32)).and_then(|s| {
                    let want: Vec<u32> = a.iter().map(|x| (x + x).to_bits()).collect();
                    compare("c", &u32s(sim.read(pc).unwrap()), &want).map(|_| s)
                })
            }
            "reduce.cl" => {
                let input: Vec<u32> = (0..512u32).map(|i| i * 3 + 1).collect();
                let pin = sim.alloc("in", bytes_u32(&input));
                let pout = sim.alloc("out", vec![0; 8]);
                run(&mut sim, &co, "reduce", [512, 1, 1], [256, 1, 1], Args::default().ptr(pin).ptr(pout)).and_then(|s| {
                    let want = [input[..256].iter().sum::<u32>(), input[256..].iter().sum::<u32>()];
                    compare("out", &u32s(sim.read(pout).unwrap()), &want).map(|_| s)
                })
            }
            "histogram.cl" => {
                let data: Vec<u32> = (0..500u32).map(|i| i * i % 1000).collect();
                let pd = sim.alloc("data", bytes_u32(&data));
                let pb = sim.alloc("bins", vec![0; 256]);
                let pt = sim.alloc("total", vec![0; 4]);
                run(&mut sim, &co, "histogram", [512, 1, 1], [128, 1, 1], Args::default().ptr(pd).i32(500).ptr(pb).ptr(pt)).and_then(|s| {
                    let mut bins = vec![0u32; 64];
                    data.iter().for_each(|&d| bins[(d % 64) as usize] += 1);
                    compare("bins", &u32s(sim.read(pb).unwrap()), &bins).map(|_| s)
                })
            }
            _ => {
                let input: Vec<u32> = (0..70u32).collect();
                let pin = sim.alloc("in", bytes_u32(&input));
                let pout = sim.alloc("out", vec![0; 4 * 70]);
                run(&mut sim, &co, "caller", [70, 1, 1], [64, 1, 1], Args::default().ptr(pin).ptr(pout)).and_then(|s| {
                    let want: Vec<u32> = input
                        .iter()
                        .map(|&b| {
                            let b = b as i32;
                            (0..40).fold(0i32, |s, k| {
                                let v = if k < 20 { b + k } else if k < 30 { b ^ k } else { b * k };
                                s.wrapping_add(v.wrapping_mul(k + 1))
                            }) as u32
                        })
                        .collect();
                    compare("out", &u32s(sim.read(pout).unwrap()), &want).map(|_| s)
                })
            }
        };
        match r {
            Ok(stats) => eprintln!("{source} on gfx1100 wave64: {stats}"),
            Err(e) => failures.push(format!("{source}: {e}")),
        }
    }
    assert!(failures.is_empty(), "gfx1100 wave64:\n{}", failures.join("\n"));
}

#[test]
fn int32_division_sqrt_and_conversions() {
    for_each_gpu("misc.cl", |_, sim, co| {
        let n = 320usize;
        let a: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761) ^ (i << 7)).collect();
        let b: Vec<u32> = (0..n as u32).map(|i| if i % 3 == 0 { (i * 7 + 1) | 1 } else { i.wrapping_mul(40503).rotate_left(i % 32) | 1 }).collect();
        let x: Vec<f32> = (0..n).map(|i| (i as f32 - 160.0) * 0.731 + if i % 7 == 0 { 0.5 } else { 0.0 }).collect();
        let pa = sim.alloc("a", bytes_u32(&a));
        let pb = sim.alloc("b", bytes_u32(&b));
        let pr = sim.alloc("r", vec![0; 4 * 8 * n]);
        let px = sim.alloc("x", bytes_f32(&x));
        let pf = sim.alloc("f", vec![0; 4 * 4 * n]);
        let stats = run(sim, co, "misc", [n as u32, 1, 1], [64, 1, 1], Args::default().ptr(pa).ptr(pb).ptr(pr).ptr(px).ptr(pf))?;
        let mut want_r = Vec::new();
        let mut want_f = Vec::new();
        for i in 0..n {
            let (p, q) = (a[i], b[i]);
            let (ps, qs) = (p as i32, q as i32);
            want_r.extend([
                p / q,
                p % q,
                ps.wrapping_div(qs) as u32,
                ps.wrapping_rem(qs) as u32,
                p.count_ones(),
                (p | 1).leading_zeros(),
                p.reverse_bits(),
                p.abs_diff(q),
            ]);
            let v = x[i];
            want_f.extend([
                v.abs().sqrt().to_bits(),
                (v.floor() + v.ceil()).to_bits(),
                (((v * 3.0) as i32) as f32 + (v.abs() as u32) as f32).to_bits(),
                (v.min(1.5) * v.max(-2.0)).to_bits(),
            ]);
        }
        compare("r", &u32s(sim.read(pr).unwrap()), &want_r)?;
        compare("f", &u32s(sim.read(pf).unwrap()), &want_f)?;
        Ok(stats)
    });
}

#[test]
fn unaligned_lds_accesses() {
    // 5-byte packed records: the 32-bit field of record i is at byte 5i + 1.
    for_each_gpu("unaligned_lds.cl", |_, sim, co| {
        let n = 128usize;
        let input: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(0x9e37_79b9)).collect();
        let pin = sim.alloc("in", bytes_u32(&input));
        let pout = sim.alloc("out", vec![0; 4 * n]);
        let stats = run(sim, co, "unaligned_lds", [n as u32, 1, 1], [64, 1, 1], Args::default().ptr(pin).ptr(pout))?;
        let want: Vec<u32> = (0..n).map(|g| {
            let (group, i) = (g / 64, g % 64);
            input[group * 64 + 63 - i].wrapping_add(63 - i as u32)
        }).collect();
        compare("out", &u32s(sim.read(pout).unwrap()), &want)?;
        Ok(stats)
    });
}

#[test]
fn packed_half_arithmetic() {
    // Values that round, subnormals (0x0001, 0x03ff), the largest finite
    // (0x7bff, whose sum overflows), signed zeros and a quiet NaN (ignored
    // by min/max; any NaN matches a NaN).
    use amdgpu_cg::mir::float::{f16_to_f64, f64_to_f16};
    let specials: [u16; 12] = [0x3c00, 0x3c01, 0xbc00, 0x0001, 0x03ff, 0x7bff, 0x0000, 0x8000, 0x7e00, 0x4248, 0x1400, 0xc500];
    let n = 256usize;
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut halves = |i: usize| -> Vec<u16> {
        (0..2 * n).map(|k| if (k + i) % 3 == 0 { specials[(k / 3 + i) % specials.len()] } else { (next() as u16) & 0x7fff | (next() as u16 & 0x8000) }).collect()
    };
    let (a, b, c) = (halves(0), halves(1), halves(2));
    let nan = |h: u16| h & 0x7c00 == 0x7c00 && h & 0x3ff != 0;
    let round = |x: f64| f64_to_f16(x);
    let minmax = |x: u16, y: u16, min: bool| -> u16 {
        match (nan(x), nan(y)) {
            (true, true) => 0x7e00,
            (true, false) => y,
            (false, true) => x,
            _ => {
                let (fx, fy) = (f16_to_f64(x), f16_to_f64(y));
                let x_first = if fx == fy { (x & 0x8000 != 0) == min } else { (fx < fy) == min };
                if x_first { x } else { y }
            }
        }
    };
    let mut want = Vec::with_capacity(6 * 2 * n);
    for i in 0..n {
        for op in 0..6 {
            for h in 0..2 {
                let (x, y, z) = (a[2 * i + h], b[2 * i + h], c[2 * i + h]);
                let (fx, fy, fz) = (f16_to_f64(x), f16_to_f64(y), f16_to_f64(z));
                want.push(match op {
                    0 => round(fx + fy),
                    1 => round(fx - fy),
                    2 => round(fx * fy),
                    // Rounded once from f64: exact there unless the product overflows
                    // f16 anyway or c swamps it (the argument at sim::float::fma16).
                    3 => round(fx * fy + fz),
                    4 => minmax(x, y, true),
                    _ => minmax(x, y, false),
                });
            }
        }
    }
    let bytes16 = |v: &[u16]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    for_each_gpu("half2.cl", |_, sim, co| {
        let (pa, pb, pc) = (sim.alloc("a", bytes16(&a)), sim.alloc("b", bytes16(&b)), sim.alloc("c", bytes16(&c)));
        let pout = sim.alloc("out", vec![0; 2 * want.len()]);
        let stats = run(sim, co, "half2_ops", [n as u32, 1, 1], [64, 1, 1], Args::default().ptr(pa).ptr(pb).ptr(pc).ptr(pout))?;
        let got: Vec<u16> = sim.read(pout).unwrap().chunks(2).map(|p| u16::from_le_bytes([p[0], p[1]])).collect();
        for (k, (&g, &w)) in got.iter().zip(&want).enumerate() {
            if g != w && !(nan(g) && nan(w)) {
                return Err(format!("out[{k}] (element {}, operation {}, half {}) = {g:#06x}, expected {w:#06x}", k / 12, k / 2 % 6, k % 2));
            }
        }
        Ok(stats)
    });
}

#[test]
fn generic_pointers_to_private_memory() {
    for_each_gpu("generic_private.cl", |_, sim, co| {
        let n = 128usize;
        let other: Vec<u32> = (0..16).map(|j| 1000 + j).collect();
        let pout = sim.alloc("out", vec![0; 4 * n]);
        let pother = sim.alloc("other", bytes_u32(&other));
        let pick = 2;
        let stats = run(sim, co, "generic_private", [n as u32, 1, 1], [64, 1, 1], Args::default().ptr(pout).ptr(pother).i32(pick))?;
        let want: Vec<u32> = (0..n as u32)
            .map(|i| {
                (0..16).step_by(3).map(|j| {
                    let k = (j + i) & 15;
                    if i % 4 == pick as u32 { other[k as usize] } else { i * 16 + k }
                }).sum()
            })
            .collect();
        compare("out", &u32s(sim.read(pout).unwrap()), &want)?;
        Ok(stats)
    });
}

#[test]
fn division_edge_cases() {
    for_each_gpu("fdiv.cl", |_, sim, co| {
        let special_f: [f32; 14] = [
            1.0, -3.0, 7.0e-39, -1.0e-45, 3.4e38, -1.2e-38, 0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 1.0e-30, 6.0e37, 0.1,
        ];
        let special_d: [f64; 14] = [
            1.0, -3.0, 3.0e-310, -5.0e-324, 1.7e308, -2.3e-308, 0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 1.0e-300, 8.0e307, 0.1,
        ];
        let mut a = Vec::new();
        let mut b = Vec::new();
        let mut x = Vec::new();
        let mut y = Vec::new();
        for i in 0..special_f.len() {
            for j in 0..special_f.len() {
                a.push(special_f[i]);
                b.push(special_f[j]);
                x.push(special_d[i]);
                y.push(special_d[j]);
            }
        }
        // Random bit patterns: every exponent range, denormals included.
        let mut r = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            r
        };
        for _ in 0..3000 {
            let (p, q) = (next(), next());
            a.push(f32::from_bits(p as u32));
            b.push(f32::from_bits(q as u32));
            x.push(f64::from_bits(p));
            y.push(f64::from_bits(q));
        }
        // Quotients at and below the smallest normal, where the scaled result
        // of v_div_fmas must be rounded once (random patterns rarely get there).
        for i in 0..2000u64 {
            let (p, q) = (next(), next());
            let mantissa = |v: u64| v & ((1 << 52) - 1);
            let exponent = if i % 2 == 0 { 1 + (p >> 60) % 3 } else { 0 };
            x.push(f64::from_bits(exponent << 52 | mantissa(p)));
            y.push(f64::from_bits((1023 + (q >> 62)) << 52 | mantissa(q)));
            let (p32, q32) = (p as u32, q as u32);
            a.push(f32::from_bits((1 + (p32 >> 30) % 2) << 23 | (p32 & 0x7f_ffff)));
            b.push(f32::from_bits((127 + (q32 >> 30)) << 23 | (q32 & 0x7f_ffff)));
        }
        let n = a.len();
        let pa = sim.alloc("a", bytes_f32(&a));
        let pb = sim.alloc("b", bytes_f32(&b));
        let pq = sim.alloc("q", vec![0; 4 * n]);
        let px = sim.alloc("x", bytes_u64(&x.iter().map(|v| v.to_bits()).collect::<Vec<_>>()));
        let py = sim.alloc("y", bytes_u64(&y.iter().map(|v| v.to_bits()).collect::<Vec<_>>()));
        let pd = sim.alloc("d", vec![0; 8 * n]);
        let stats = run(sim, co, "fdiv", [n as u32, 1, 1], [64, 1, 1], Args::default().ptr(pa).ptr(pb).ptr(pq).ptr(px).ptr(py).ptr(pd))?;
        let q = u32s(sim.read(pq).unwrap());
        let d = u64s(sim.read(pd).unwrap());
        for i in 0..n {
            let (wq, gq) = (a[i] / b[i], f32::from_bits(q[i]));
            if !(wq.to_bits() == gq.to_bits() || (wq.is_nan() && gq.is_nan())) {
                return Err(format!("f32 {:e} / {:e} = {:e} ({:#x}), expected {:e} ({:#x})", a[i], b[i], gq, q[i], wq, wq.to_bits()));
            }
            let (wd, gd) = (x[i] / y[i], f64::from_bits(d[i]));
            if !(wd.to_bits() == gd.to_bits() || (wd.is_nan() && gd.is_nan())) {
                return Err(format!("f64 {:e} / {:e} = {:e} ({:#x}), expected {:e} ({:#x})", x[i], y[i], gd, d[i], wd, wd.to_bits()));
            }
        }
        Ok(stats)
    });
}

#[test]
fn square_root_edge_cases() {
    for_each_gpu("fdiv.cl", |_, sim, co| {
        let mut a: Vec<f32> = vec![0.0, -0.0, 1.0, 2.0, 4.0, 1.0e-45, 7.0e-39, 1.2e-38, 3.4e38, f32::INFINITY, -1.0, f32::NAN];
        let mut x: Vec<f64> = vec![0.0, -0.0, 1.0, 2.0, 4.0, 5.0e-324, 3.0e-310, 2.3e-308, 1.7e308, f64::INFINITY, -1.0, f64::NAN];
        let mut r = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..3000 {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            a.push(f32::from_bits(r as u32 & 0x7fff_ffff));
            x.push(f64::from_bits(r & 0x7fff_ffff_ffff_ffff));
        }
        let n = a.len();
        let pa = sim.alloc("a", bytes_f32(&a));
        let pq = sim.alloc("q", vec![0; 4 * n]);
        let px = sim.alloc("x", bytes_u64(&x.iter().map(|v| v.to_bits()).collect::<Vec<_>>()));
        let pd = sim.alloc("d", vec![0; 8 * n]);
        let stats = run(sim, co, "fsqrt", [n as u32, 1, 1], [64, 1, 1], Args::default().ptr(pa).ptr(pq).ptr(px).ptr(pd))?;
        let q = u32s(sim.read(pq).unwrap());
        let d = u64s(sim.read(pd).unwrap());
        for i in 0..n {
            let (w, g) = (a[i].sqrt(), f32::from_bits(q[i]));
            if !(w.to_bits() == g.to_bits() || (w.is_nan() && g.is_nan())) {
                return Err(format!("sqrt(f32 {:e}) = {:e} ({:#x}), expected {:e} ({:#x})", a[i], g, q[i], w, w.to_bits()));
            }
            let (w, g) = (x[i].sqrt(), f64::from_bits(d[i]));
            if !(w.to_bits() == g.to_bits() || (w.is_nan() && g.is_nan())) {
                return Err(format!("sqrt(f64 {:e}) = {:e} ({:#x}), expected {:e} ({:#x})", x[i], g, d[i], w, w.to_bits()));
            }
        }
        Ok(stats)
    });
}

#[test]
// Float predicates with NaNs: `!(a < b)` and `a < b || a > b` are meant literally.
#[allow(clippy::nonminimal_bool, clippy::neg_cmp_op_on_partial_ord, clippy::double_comparisons)]
fn instruction_coverage() {
    for_each_gpu("coverage.cl", |_, sim, co| {
        let n = 64usize;
        let mut r = 0x1234_5678_9abc_def1u64;
        let mut next = || {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            r
        };
        let g0: Vec<i32> = (0..n * 12).map(|_| next() as i32 >> (next() % 24)).collect();
        let mut out0 = vec![0i32; n * 32];
        for i in 0..n {
            out0[i * 32] = next() as i32 >> (i % 20);
        }
        let set = [0.0f32, -0.0, 1.0, -1.5, f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 2.5];
        let fx: Vec<f32> = (0..2 * n).map(|_| set[(next() % 8) as usize]).collect();
        let lx: Vec<i64> = (0..n).map(|i| if i % 5 == 0 { 77 } else { next() as i64 >> (i % 40) }).collect();
        let (s, t, u, v) = (-123456789i32, 987654i32, -0x1234_5678_9abc_i64, 0x7654_3210_i64);
        let pg = sim.alloc("g", g0.iter().flat_map(|x| x.to_le_bytes()).collect());
        let po = sim.alloc("out", out0.iter().flat_map(|x| x.to_le_bytes()).collect());
        let pf = sim.alloc("fx", bytes_f32(&fx));
        let pl = sim.alloc("lx", bytes_u64(&lx.iter().map(|&x| x as u64).collect::<Vec<_>>()));
        let pt = sim.alloc("tr", vec![0; 4 * 4 * n]);
        let stats = run(sim, co, "coverage", [n as u32, 1, 1], [64, 1, 1], Args::default().ptr(pg).ptr(po).ptr(pf).ptr(pl).i32(s).i32(t).i64(u).i64(v).ptr(pt))?;
        let mut g = g0.clone();
        let mut want = out0.clone();
        let mut tr = Vec::new();
        for i in 0..n {
            let x = out0[i * 32];
            let p = &mut g[i * 12..i * 12 + 12];
            let mut o = 0i32;
            o = o.wrapping_add(p[0]);
            p[0] &= x;
            o ^= p[1];
            p[1] |= x;
            o = o.wrapping_add(p[2]);
            p[2] ^= x;
            o ^= p[3];
            p[3] = p[3].min(x);
            o = o.wrapping_add(p[4]);
            p[4] = p[4].max(x);
            o ^= p[5];
            p[5] = (p[5] as u32).min(x as u32) as i32;
            o = o.wrapping_add(p[6]);
            p[6] = (p[6] as u32).max(x as u32) as i32;
            o ^= p[7];
            p[7] = p[7].wrapping_sub(x);
            o = o.wrapping_add(p[8]);
            p[8] = x;
            o ^= p[9];
            p[9] = x;
            want[i * 32 + 1] = o;
            let q: Vec<i32> = (0..10).map(|k: i32| x.wrapping_mul(k + 1).wrapping_sub(7 * k)).collect();
            let mut rr = 0i32;
            for (k, &old) in q.iter().enumerate() {
                rr = if k % 2 == 0 { rr.wrapping_add(old) } else { rr ^ old };
            }
            want[i * 32 + 2] = rr;
            let w = lx[i].wrapping_mul(3);
            let w2 = w.wrapping_add(w / 2);
            want[i * 32 + 3] = w2 as i32;
            want[i * 32 + 4] = (w2 >> 32) as i32;
            if x & 1 == 1 {
                want[i * 32 + 5] = x.wrapping_add(11);
            }
            want[i * 32 + 6] = x.wrapping_add(11).wrapping_mul(2);
            let b = |c: bool, k: u32| (c as i32) << k;
            let su = b(s > t, 0) + b(s >= t, 1) + b(s < t, 2) + b(s <= t, 3) + b(s as u32 > t as u32, 4) + b(s as u32 >= t as u32, 5)
                + b((s as u32) < t as u32, 6) + b(s as u32 <= t as u32, 7) + b(u != v, 8);
            want[i * 32 + 7] = su.wrapping_add(s.min(t).wrapping_mul(3)).wrapping_add(s.max(t).wrapping_mul(5)).wrapping_add((s as u32).min(t as u32) as i32);
            want[i * 32 + 8] = ((s as i64 * t as i64) >> 32) as i32 + ((s as u32 as u64 * t as u32 as u64) >> 32) as i32;
            want[i * 32 + 9] = ((u as u64) >> (t & 63)) as i32 ^ (u >> (s & 63)) as i32 ^ (((u as u64) >> 7) & 0xfff) as i32;
            want[i * 32 + 10] = ((s as u32).wrapping_sub(t as u32) as i32) ^ (u.wrapping_sub(v) as i32) ^ ((u.wrapping_sub(v) >> 32) as i32);
            let (a, bb) = (fx[2 * i], fx[2 * i + 1]);
            let un = a.is_nan() || bb.is_nan();
            let lg = a < bb || a > bb;
            want[i * 32 + 11] = b(a == bb, 0) | b(a != bb, 1) | b(a < bb, 2) | b(a <= bb, 3) | b(a > bb, 4) | b(a >= bb, 5)
                | b(!(a < bb), 6) | b(!(a <= bb), 7) | b(!(a > bb), 8) | b(!(a >= bb), 9) | b(un, 10) | b(!un, 11) | b(lg, 12) | b(!lg, 13);
            let (la, lb) = (lx[i], lx[(i + 1) % 64]);
            let (ua, ub) = (la as u64, lb as u64);
            want[i * 32 + 12] = b(la == lb, 0) | b(la < lb, 1) | b(la <= lb, 2) | b(la > lb, 3) | b(la >= lb, 4) | b(ua < ub, 5) | b(ua <= ub, 6) | b(ua > ub, 7) | b(ua >= ub, 8);
            want[i * 32 + 13] = ((x | 0x100000).trailing_zeros() as i32)
                .wrapping_add(!x)
                .wrapping_add(x.min(x.wrapping_neg()))
                .wrapping_add(((x as i64).wrapping_mul(0x12345) >> 32) as i32);
            want[i * 32 + 14] = (((a as f64) as f32).to_bits() ^ (bb - a).to_bits()) as i32;
            let mut z = fx[2 * i] * 0.001;
            if z.is_nan() {
                z = 0.5;
            }
            tr.extend([z.exp2(), (z.abs() + 1.0).log2(), (z as f64 * std::f64::consts::TAU).sin() as f32 + (z as f64 * std::f64::consts::TAU).cos() as f32, 1.0 / (z.abs() + 0.25).sqrt()]);
        }
        let got: Vec<i32> = u32s(sim.read(po).unwrap()).into_iter().map(|v| v as i32).collect();
        for i in 0..n {
            for k in 0..32 {
                // NaN payloads and signs are not modelled (docs/simulator.md).
                if k == 14 && (fx[2 * i].is_nan() || fx[2 * i + 1].is_nan()) {
                    continue;
                }
                if got[i * 32 + k] != want[i * 32 + k] {
                    return Err(format!("work-item {i}, out[{k}] = {:#x}, expected {:#x} (x = {:#x}, a = {}, b = {})", got[i * 32 + k], want[i * 32 + k], out0[i * 32], fx[2 * i], fx[2 * i + 1]));
                }
            }
        }
        let got_g: Vec<i32> = u32s(sim.read(pg).unwrap()).into_iter().map(|v| v as i32).collect();
        compare("g", &got_g, &g)?;
        let got_t: Vec<f32> = u32s(sim.read(pt).unwrap()).into_iter().map(f32::from_bits).collect();
        for (k, (a, b)) in got_t.iter().zip(&tr).enumerate() {
            if (a - b).abs() > 1e-5 * b.abs().max(1.0) || a.is_nan() != b.is_nan() {
                return Err(format!("tr[{k}] = {a}, expected about {b}"));
            }
        }
        Ok(stats)
    });
}

/// Every instruction clang-22 emits for the reference kernels decodes through the
/// amdgpu_isa table, except the two the simulator's fallback still lists
/// (`EXTRA_INSTRUCTIONS`: s_code_end, s_sendmsg) and gfx11 s_sendmsg_rtn_b32 in the
/// unreachable trap sequence. The instructions that moved from the fallback into the
/// table are checked by name.
#[test]
fn clang_output_decodes_through_the_table() {
    use amdgpu_cg::isa::{Gpu, Target, WaveSize};
    use std::collections::BTreeMap;
    let sources = [
        "vadd.cl", "saxpy.cl", "reduce.cl", "matmul.cl", "divergent.cl", "histogram.cl", "int64.cl", "misc.cl",
        "fdiv.cl", "coverage.cl", "call.cl",
    ];
    let targets: [(&str, &[&str], Target); 4] = [
        ("gfx90a", &[], Target::new(Gpu::Gfx90a)),
        ("gfx942", &[], Target::new(Gpu::Gfx942)),
        ("gfx1100", &[], Target::new(Gpu::Gfx1100)),
        ("gfx1100", &["-mwavefrontsize64"], Target { gpu: Gpu::Gfx1100, wave: WaveSize::W64 }),
    ];
    let mut failures = Vec::new();
    for (gpu, flags, target) in targets {
        let mut table: BTreeMap<String, usize> = BTreeMap::new();
        let mut fallback: BTreeMap<String, usize> = BTreeMap::new();
        let mut undecodable = 0usize;
        for src in sources {
            let Some(hsaco) = compile(src, gpu, flags) else { return };
            let co = amdgpu_cg::codeobj::reader::read(&hsaco).unwrap();
            for code in co.functions.iter().map(|f| &f.code) {
                let mut at = 0;
                while at + 4 <= code.len() {
                    match amdgpu_cg::sim::decode::decode(&code[at..], target) {
                        Ok(d) => {
                            let mnemonic = d.text.split_whitespace().next().unwrap_or("").to_string();
                            if d.text.contains("(extra") {
                                *fallback.entry(mnemonic).or_default() += 1;
                            } else {
                                *table.entry(mnemonic).or_default() += 1;
                            }
                            at += d.len.max(4) as usize;
                        }
                        Err(e) => {
                            // gfx11 s_sendmsg_rtn_b32 (SOP1 0x4c), in the trap sequence
                            // after `s_trap 2`, which the kernels never reach.
                            let w = u32::from_le_bytes([code[at], code[at + 1], code[at + 2], code[at + 3]]);
                            if !(gpu == "gfx1100" && w & 0xFF80_FF00 == 0xBE80_4C00) {
                                failures.push(format!("{gpu}: {src}: {e}"));
                            }
                            undecodable += 1;
                            at += 4;
                        }
                    }
                }
            }
        }
        let tag = format!("{gpu}{}", flags.join(""));
        eprintln!("{tag}: {} mnemonics through the table, fallback {fallback:?}, {undecodable} undecodable dwords", table.len());
        for m in fallback.keys() {
            if !(m == "s_code_end" || m == "s_sendmsg") {
                failures.push(format!("{tag}: {m} still decoded by the fallback"));
            }
        }
        let moved: &[&str] = match gpu {
            "gfx90a" => &["ds_read2st64_b32", "ds_write2st64_b32", "s_ff1_i32_b64", "v_fmac_f64_e32", "v_madmk_f32", "s_mov_b64"],
            "gfx942" => &["ds_read2st64_b32", "ds_write2st64_b32", "s_ff1_i32_b64", "v_fmac_f64_e32", "v_fmamk_f32"],
            _ => &["s_clause", "s_delay_alu", "ds_load_2addr_stride64_b32", "v_fmamk_f32", "v_add_co_u32", "v_cmpx_gt_u32_e32"],
        };
        for m in moved {
            if !table.contains_key(*m) {
                failures.push(format!("{tag}: {m} not seen through the table"));
            }
        }
        if target.wave == WaveSize::W32 && !table.keys().any(|m| m.starts_with("v_dual_")) {
            failures.push(format!("{tag}: no VOPD instruction seen through the table"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// D16 loads keep the other half of their destination (gfx1100: global and
/// scratch `load_d16_b16`, `load_d16_hi_b16`, `load_d16_u8`) and s_pack_lh,
/// s_pack_hh, s_pack_hl take the documented halves: `halves.cl`.
#[test]
fn sixteen_bit_halves_loads_and_packs() {
    for_each_gpu("halves.cl", |_, sim, co| {
        let n = 128usize;
        let a: Vec<u16> = (0..n + 64).map(|j| 0x8000 ^ (j as u16).wrapping_mul(40503)).collect();
        let b: Vec<u16> = (0..n).map(|j| 0x1234u16.wrapping_add(3 * j as u16)).collect();
        let c: Vec<u8> = (0..n).map(|j| (j as u8).wrapping_mul(37) | 0x80).collect();
        let (ux, uy) = (0xa1b2_c3d4u32, 0x9e8f_7a6bu32);
        let bytes16 = |v: &[u16]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let (pa, pb, pc) = (sim.alloc("a", bytes16(&a)), sim.alloc("b", bytes16(&b)), sim.alloc("c", c.clone()));
        let pout = sim.alloc("out", vec![0; 16 * n]);
        let stats = run(sim, co, "halves", [n as u32, 1, 1], [64, 1, 1], Args::default().ptr(pa).ptr(pb).ptr(pc).ptr(pout).i32(ux as i32).i32(uy as i32))?;
        let pack = |lo: u16, hi: u16| u32::from(lo) | u32::from(hi) << 16;
        let (hl, lh, hh) = ((ux >> 16) | (uy & 0xffff) << 16, (ux & 0xffff) | (uy & 0xffff_0000), (ux >> 16) | (uy & 0xffff_0000));
        let mut want = Vec::new();
        for i in 0..n {
            let v = (a[i], b[i]);
            let w = (u16::from(c[i]), a[i + 1]);
            let p = (a[(i + (i & 7)) & 63], a[(i + ((i + 3) & 7)) & 63]);
            want.push(pack(v.0, v.1).wrapping_add(lh));
            want.push(pack(w.0, w.1) ^ hh);
            want.push(pack(p.0, p.1).wrapping_add(hl));
            want.push(pack(v.0, v.1).wrapping_mul(3).wrapping_add(pack(w.0, w.1)));
        }
        compare("out", &u32s(sim.read(pout).unwrap()), &want)?;
        Ok(stats)
    });
}

/// Generic targets (code object v6): gfx11-generic code runs as gfx1100 and
/// gfx9-4-generic code as gfx942, with the results computed in Rust; gfx9-generic
/// code (gfx900-gfx90c, none of which the simulator models) is read and refused
/// as an unsupported target, not as an unreadable file.
#[test]
fn generic_targets_run_as_their_member_processor() {
    let n = 300usize;
    let alpha = -1.75f32;
    let x: Vec<f32> = (0..n).map(|i| (i as f32 - 100.0) * 0.5).collect();
    let y: Vec<f32> = (0..n).map(|i| (i % 13) as f32 * 0.25).collect();
    let mut failures = Vec::new();
    for (gpu, wave) in [("gfx11-generic", &[][..]), ("gfx11-generic", &["-mwavefrontsize64"][..]), ("gfx9-4-generic", &[][..])] {
        let mut flags = vec!["-mcode-object-version=6"];
        flags.extend_from_slice(wave);
        let Some(hsaco) = compile("saxpy.cl", gpu, &flags) else { return };
        let mut sim = Simulator::new();
        let co = sim.load(&hsaco).unwrap_or_else(|e| panic!("{gpu}: {e}"));
        let px = sim.alloc("x", bytes_f32(&x));
        let py = sim.alloc("y", bytes_f32(&y));
        let pq = sim.alloc("q", vec![0; 4 * n]);
        let result = run(&mut sim, &co, "saxpy", [n as u32, 1, 1], [64, 1, 1], Args::default().f32(alpha).ptr(px).ptr(py).ptr(pq).i32(n as i32)).and_then(|_| {
            let want_y: Vec<u32> = (0..n).map(|i| alpha.mul_add(x[i], y[i]).to_bits()).collect();
            let want_q: Vec<u32> = (0..n).map(|i| (x[i] / (i as f32 + 1.0)).to_bits()).collect();
            compare("y", &u32s(sim.read(py).unwrap()), &want_y)?;
            compare("q", &u32s(sim.read(pq).unwrap()), &want_q)
        });
        if let Err(e) = result {
            failures.push(format!("{gpu} {wave:?}: {e}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let Some(hsaco) = compile("saxpy.cl", "gfx9-generic", &["-mcode-object-version=6"]) else { return };
    let err = Simulator::new().load(&hsaco).map(|_| ()).unwrap_err();
    assert_eq!(err.kind, amdgpu_cg::sim::ErrorKind::UnsupportedTarget, "{err}");
    assert!(err.to_string().contains("gfx9-generic"), "{err}");
}
