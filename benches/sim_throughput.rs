//! Simulated throughput (a benchmark, not a timed test): a 128^3 tiled matrix
//! multiply compiled by clang-22, run on the simulator for each target.
//! `cargo bench --bench sim_throughput`; under `cargo test` it does nothing.

use std::path::Path;
use std::process::Command;

use amdgpu_cg::sim::Simulator;

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let Some(clang) = amdgpu_cg::isa::llvm_tools::require("clang-22") else { return };
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sim");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sim_throughput");
    std::fs::create_dir_all(&dir).unwrap();
    for gpu in ["gfx90a", "gfx942", "gfx1100"] {
        let out = dir.join(format!("matmul-{gpu}.hsaco"));
        let ok = Command::new(&clang)
            .args(["-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa", "-nogpulib", "-O2", "-mcode-object-version=5", "-Wno-everything"])
            .arg(format!("-mcpu={gpu}"))
            .arg("-I")
            .arg(&data)
            .arg("-o")
            .arg(&out)
            .arg(data.join("matmul.cl"))
            .status()
            .unwrap()
            .success();
        assert!(ok);
        let hsaco = std::fs::read(&out).unwrap();
        let (m, n, k) = (128usize, 128usize, 128usize);
        let mut sim = Simulator::new();
        let co = sim.load(&hsaco).unwrap();
        let a = sim.alloc("A", vec![0; 4 * m * k]);
        let b = sim.alloc("B", vec![0; 4 * k * n]);
        let c = sim.alloc("C", vec![0; 4 * m * n]);
        let mut args = Vec::new();
        for p in [a, b, c] {
            args.extend_from_slice(&p.to_le_bytes());
        }
        for v in [m, n, k] {
            args.extend_from_slice(&(v as i32).to_le_bytes());
        }
        let stats = sim.dispatch(&co, "matmul", [n as u32, m as u32, 1], [16, 16, 1], &args).unwrap();
        println!("matmul {m}x{n}x{k} on {gpu}: {stats}");
    }
}
