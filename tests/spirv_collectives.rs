//! Work-group collectives (src/spirv/collectives.rs): the kernel
//! tests/spirv/collectives/work_group.cl, compiled by clang-22 to SPIR-V, on
//! work-groups of one wave, of whole and partial waves (96 and 65 work-items,
//! so a wave may have fewer lanes than there are waves), and of 1024. The
//! interpreter's results must equal the collectives' definitions computed
//! here from the inputs, and the simulator's on every target the interpreter's
//! (run with the target's wave size). One of them runs in a device function,
//! which receives the LDS area as a parameter.

use std::process::Command;

use amdgpu_cg::codegen::{self, Options, Report};
use amdgpu_cg::codeobj::{self, CodeObjectTarget, CodeObjectVersion};
use amdgpu_cg::isa::llvm_tools;
use amdgpu_cg::mir::{self, launch::LaunchSpec};

fn list<T: ToString>(v: &[T]) -> String {
    v.iter().map(|x| format!("\"{}\"", x.to_string())).collect::<Vec<_>>().join(",")
}

#[test]
fn work_group_collectives_match_their_definitions_on_every_target() {
    let Some(clang) = llvm_tools::require("clang-22") else { return };
    let Some(spirv_val) = llvm_tools::require("spirv-val") else { return };
    let source = format!("{}/tests/spirv/collectives/work_group.cl", env!("CARGO_MANIFEST_DIR"));
    let work = std::env::temp_dir().join(format!("amdgpu-cg-spirv-wg-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let spv = work.join("wg.spv");
    let out = Command::new(&clang).args(["-cl-std=CL2.0", "-O2", "-ffp-contract=off", "-fno-discard-value-names", "-target", "spirv64", "-c", "-o"]).arg(&spv).arg(&source).output().unwrap();
    assert!(out.status.success(), "clang-22: {}", String::from_utf8_lossy(&out.stderr));
    let out = Command::new(&spirv_val).arg(&spv).output().unwrap();
    assert!(out.status.success(), "spirv-val: {}", String::from_utf8_lossy(&out.stderr));
    let module = amdgpu_cg::driver::load_spirv("wg.spv", &std::fs::read(&spv).unwrap()).unwrap();
    let _ = std::fs::remove_dir_all(&work);
    let mut objects = Vec::new();
    for target in CodeObjectTarget::all_configurations() {
        let (object, _) = codegen::compile_module(&module, &target, CodeObjectVersion::V5, &Options::default(), &mut Report::default()).unwrap();
        objects.push((target.isa_name(), target.target.wave.lanes(), codeobj::write_hsaco(&object).unwrap()));
    }
    // (grid, block) in work-items, 2D.
    for (grid, block) in [([64, 1], [64, 1]), ([32, 12], [16, 6]), ([130, 1], [65, 1]), ([256, 4], [256, 4]), ([64, 2], [32, 1])] {
        let n = grid[0] * grid[1];
        let a: Vec<i32> = (0..n).map(|i| ((i * 37 + 11) % 101) as i32 - 50).collect();
        let f: Vec<f32> = (0..n).map(|i| ((i * 13) % 29) as f32 - 14.0).collect();
        let l: Vec<i64> = (0..n).map(|i| ((i as i64 * 7919) % 1000 - 500) << 33).collect();
        let json = format!(
            r#"{{"grid":[{},{}],"block":[{},{}],"buffers":{{"a":{{"type":"i32","data":[{}]}},"f":{{"type":"f32","data":[{}]}},"l":{{"type":"i64","data":[{}]}},"oi":{{"type":"i32","len":{}}},"of":{{"type":"f32","len":{}}},"ol":{{"type":"i64","len":{}}}}},"args":{{"a":"@a","f":"@f","l":"@l","oi":"@oi","of":"@of","ol":"@ol"}}}}"#,
            grid[0],
            grid[1],
            block[0],
            block[1],
            list(&a),
            list(&f),
            list(&l),
            8 * n,
            2 * n,
            2 * n
        );
        let mut spec = LaunchSpec::from_json(&json).unwrap();
        // The definitions, per work-group, in linear local-id order.
        let (mut oi, mut of, mut ol) = (vec![0i32; 8 * n], vec![0f32; 2 * n], vec![0i64; 2 * n]);
        let groups = [grid[0] / block[0], grid[1] / block[1]];
        for gy in 0..groups[1] {
            for gx in 0..groups[0] {
                let items: Vec<usize> = (0..block[1]).flat_map(|ly| (0..block[0]).map(move |lx| (gx * block[0] + lx) + (gy * block[1] + ly) * grid[0])).collect();
                let xs: Vec<i32> = items.iter().map(|&g| a[g]).collect();
                let ys: Vec<f32> = items.iter().map(|&g| f[g]).collect();
                let zs: Vec<i64> = items.iter().map(|&g| l[g]).collect();
                let bcast = xs[(block[0] - 1) + (block[1] / 2) * block[0]];
                for (k, &g) in items.iter().enumerate() {
                    oi[8 * g] = xs.iter().fold(0i32, |s, v| s.wrapping_add(*v));
                    oi[8 * g + 1] = *xs.iter().min().unwrap() + *xs.iter().max().unwrap();
                    oi[8 * g + 2] = xs[..=k].iter().fold(0i32, |s, v| s.wrapping_add(*v));
                    oi[8 * g + 3] = xs[..k].iter().copied().max().unwrap_or(i32::MIN);
                    oi[8 * g + 4] = bcast;
                    oi[8 * g + 5] = i32::from(xs.iter().any(|v| *v > 40));
                    oi[8 * g + 6] = i32::from(xs.iter().all(|v| *v > -50));
                    oi[8 * g + 7] = xs.iter().map(|v| *v as u32).max().unwrap() as i32;
                    of[2 * g] = ys.iter().sum();
                    of[2 * g + 1] = ys[..k].iter().copied().fold(f32::INFINITY, f32::min);
                    ol[2 * g] = *zs.iter().max().unwrap();
                    ol[2 * g + 1] = zs[..=k].iter().sum();
                }
            }
        }
        let what = format!("grid {grid:?}, block {block:?}");
        for (isa, lanes, hsaco) in &objects {
            spec.wave_size = *lanes;
            let want = mir::launch::run(&module, &spec).unwrap_or_else(|e| panic!("{what}, interpreter: {e}"));
            let got_i: Vec<i32> = want.buffers[3].bits().into_iter().map(|b| b as u32 as i32).collect();
            let got_f: Vec<f32> = want.buffers[4].bits().into_iter().map(|b| f32::from_bits(b as u32)).collect();
            let got_l: Vec<i64> = want.buffers[5].bits().into_iter().map(|b| b as i64).collect();
            for (k, (g, w)) in got_i.iter().zip(&oi).enumerate() {
                assert_eq!(g, w, "{what}, wave {lanes}: int result {} of work-item {}", k % 8, k / 8);
            }
            for (k, (g, w)) in got_f.iter().zip(&of).enumerate() {
                assert_eq!(g.to_bits(), w.to_bits(), "{what}, wave {lanes}: float result {} of work-item {} is {g}, want {w}", k % 2, k / 2);
            }
            for (k, (g, w)) in got_l.iter().zip(&ol).enumerate() {
                assert_eq!(g, w, "{what}, wave {lanes}: long result {} of work-item {}", k % 2, k / 2);
            }
            let (got, _) = amdgpu_cg::sim::run_launch(hsaco, &spec).unwrap_or_else(|e| panic!("{what} on {isa}: {e}"));
            for (g, w) in got.iter().zip(&want.buffers) {
                assert_eq!(g.bits(), w.bits(), "{what} on {isa}: buffer {}", w.name);
            }
        }
    }
}

/// `OpGroupNonUniform*` (cl_khr_subgroup_*) in convergent code, against their
/// definitions over each wave (32 or 64 lanes, per target), on the interpreter
/// and on every target.
#[test]
fn non_uniform_subgroup_operations_match_their_definitions() {
    let Some(clang) = llvm_tools::require("clang-22") else { return };
    let source = format!("{}/tests/spirv/collectives/non_uniform.cl", env!("CARGO_MANIFEST_DIR"));
    let work = std::env::temp_dir().join(format!("amdgpu-cg-spirv-nu-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let spv = work.join("nu.spv");
    let ext = "-cl-ext=+cl_khr_subgroups,+__opencl_c_subgroups,+cl_khr_subgroup_non_uniform_vote,+cl_khr_subgroup_ballot,+cl_khr_subgroup_non_uniform_arithmetic,+cl_khr_subgroup_shuffle,+cl_khr_subgroup_shuffle_relative,+cl_khr_subgroup_clustered_reduce";
    let out = Command::new(&clang).args(["-cl-std=CL3.0", "-O2", "-ffp-contract=off", "-fno-discard-value-names", "-target", "spirv64", "-Xclang", ext, "-c", "-o"]).arg(&spv).arg(&source).output().unwrap();
    assert!(out.status.success(), "clang-22: {}", String::from_utf8_lossy(&out.stderr));
    let module = amdgpu_cg::driver::load_spirv("nu.spv", &std::fs::read(&spv).unwrap()).unwrap();
    let _ = std::fs::remove_dir_all(&work);
    let n = 256usize;
    let a: Vec<i32> = (0..n).map(|i| ((i * 37 + 11) % 101) as i32 - 50).collect();
    let f: Vec<f32> = (0..n).map(|i| ((i * 13) % 29) as f32 - 14.0).collect();
    let json = format!(
        r#"{{"grid":{n},"block":128,"buffers":{{"a":{{"type":"i32","data":[{}]}},"f":{{"type":"f32","data":[{}]}},"o":{{"type":"i32","len":{}}},"of":{{"type":"f32","len":{n}}}}},"args":{{"a":"@a","f":"@f","o":"@o","of":"@of"}}}}"#,
        list(&a),
        list(&f),
        20 * n
    );
    let mut spec = LaunchSpec::from_json(&json).unwrap();
    for target in CodeObjectTarget::all_configurations() {
        let lanes = target.target.wave.lanes() as usize;
        let (mut o, mut of) = (vec![0i32; 20 * n], vec![0f32; n]);
        for w in (0..n).step_by(lanes) {
            let xs = &a[w..w + lanes];
            let mask: u64 = xs.iter().enumerate().filter(|(_, x)| **x > 0).map(|(l, _)| 1u64 << l).sum();
            for l in 0..lanes {
                let r = &mut o[20 * (w + l)..20 * (w + l) + 20];
                r[0] = i32::from(l == 0);
                r[1] = i32::from(xs.iter().all(|x| *x > -40));
                r[2] = i32::from(xs.iter().any(|x| *x > 45));
                r[3] = i32::from(xs.iter().all(|x| x / 1000 == xs[0] / 1000));
                r[4] = xs.iter().sum();
                r[5] = *xs[..=l].iter().max().unwrap();
                r[6] = xs[..l].iter().fold(0, |s, x| s ^ x);
                r[7] = i32::from(xs.iter().all(|x| *x > -45));
                r[8] = xs[5];
                r[9] = xs[0];
                r[10] = i32::from(mask >> l & 1 == 1) + 2 * i32::from(mask >> 3 & 1 == 1);
                r[11] = mask.count_ones() as i32 * 100 + (mask & (u64::MAX >> (63 - l))).count_ones() as i32;
                r[12] = mask.trailing_zeros() as i32 * 100 + (63 - mask.leading_zeros() as i32);
                r[13] = xs[3];
                r[14] = xs[l ^ 1];
                r[15] = xs[if l + 1 < lanes { l + 1 } else { l }] + xs[l.saturating_sub(1)];
                r[16] = xs[l / 4 * 4..l / 4 * 4 + 4].iter().sum();
                r[17] = *xs[l / 16 * 16..l / 16 * 16 + 16].iter().max().unwrap();
                r[18] = xs.iter().fold(1i32, |p, x| p.wrapping_mul((x & 1) + 1));
                r[19] = xs[..=l].iter().fold(1i32, |p, x| p.wrapping_mul(x % 3));
                of[w + l] = f[w..w + l].iter().copied().fold(f32::INFINITY, f32::min);
            }
        }
        spec.wave_size = lanes as u32;
        let want = mir::launch::run(&module, &spec).unwrap();
        let got_i: Vec<i32> = want.buffers[2].bits().into_iter().map(|b| b as u32 as i32).collect();
        let got_f: Vec<f32> = want.buffers[3].bits().into_iter().map(|b| f32::from_bits(b as u32)).collect();
        for (k, (g, w)) in got_i.iter().zip(&o).enumerate() {
            assert_eq!(g, w, "wave {lanes}: result {} of work-item {}", k % 20, k / 20);
        }
        assert_eq!(got_f, of, "wave {lanes}: exclusive min");
        let (object, _) = codegen::compile_module(&module, &target, CodeObjectVersion::V5, &Options::default(), &mut Report::default()).unwrap();
        let (got, _) = amdgpu_cg::sim::run_launch(&codeobj::write_hsaco(&object).unwrap(), &spec).unwrap_or_else(|e| panic!("{}: {e}", target.isa_name()));
        let sim_i: Vec<i32> = got[2].bits().into_iter().map(|b| b as u32 as i32).collect();
        for (k, (g, w)) in sim_i.iter().zip(&got_i).enumerate() {
            assert_eq!(g, w, "{}: result {} of work-item {}", target.isa_name(), k % 20, k / 20);
        }
        assert_eq!(got[3].bits(), want.buffers[3].bits(), "{}", target.isa_name());
    }
}
