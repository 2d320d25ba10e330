//! Kernels that exercise particular parts of the code generator, run on the
//! simulator and compared with the interpreter on every target: register
//! pressure beyond what fits (SGPRs spilled into VGPR lanes, VGPRs to scratch)
//! f64 arithmetic (register pairs through windows, the division sequence) and
//! calls (arguments, results and implicit inputs in the registers the calling
//! convention names; values of the caller live across calls).

use amdgpu_cg::codegen::{self, Options, Report};
use amdgpu_cg::codeobj::{self, CodeObjectTarget, CodeObjectVersion};
use amdgpu_cg::isa::{Gpu, Target};
use amdgpu_cg::mir::{self, launch::LaunchSpec};
use amdgpu_cg::opt::OptLevel;

fn targets() -> Vec<CodeObjectTarget> {
    CodeObjectTarget::all_configurations()
}

/// The text of a file of tests/data/codegen.
fn data_text(file: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/data/codegen/{file}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// The module compiled for `target` with the default options (-O2).
fn compile_default(module: &mir::Module, target: &CodeObjectTarget) -> (codeobj::CodeObject, Vec<codegen::CompiledKernel>) {
    codegen::compile_module(module, target, CodeObjectVersion::V5, &Options::default(), &mut Report::default()).unwrap()
}

fn check(file: &str, spec: &LaunchSpec, expect_spills: bool, expect_scratch: bool) {
    let text = data_text(file);
    check_text(file, &text, spec, expect_spills, expect_scratch);
}

/// Compiles `text` for every target at -O0 and -O2, checks the -O0 spill
/// expectations, runs it on the simulator against the interpreter, and
/// returns the kernels' statistics per target at -O0.
fn check_text(file: &str, text: &str, spec: &LaunchSpec, expect_spills: bool, expect_scratch: impl Into<Option<bool>>) -> Vec<(String, codegen::KernelStats)> {
    let expect_scratch = expect_scratch.into();
    let module = mir::parse(text).unwrap();
    mir::verify::verify(&module).unwrap();
    let want = mir::launch::run(&module, spec).unwrap();
    let mut all_stats = Vec::new();
    // The register pressure and frames of these files are what they were
    // written for at -O0; -O2 must compute the same, with whatever frames
    // the optimised code needs.
    for (target, level) in targets().into_iter().flat_map(|t| [(t.clone(), OptLevel::O0), (t, OptLevel::O2)]) {
        let options = Options { opt_level: level, ..Options::default() };
        let (object, kernels) = codegen::compile_module(&module, &target, CodeObjectVersion::V5, &options, &mut Report::default())
            .unwrap_or_else(|d| panic!("{file} on {}: {d}", target.isa_name()));
        let stats = &kernels.iter().find(|k| k.is_kernel).unwrap().stats;
        if level == OptLevel::O0 {
            assert_eq!(stats.sgpr_spills + stats.vgpr_spills + stats.slot_vgprs > 0, expect_spills, "{file} on {}: spills", target.isa_name());
            if let Some(scratch) = expect_scratch {
                assert_eq!(stats.scratch_bytes > 0, scratch, "{file} on {}", target.isa_name());
            }
            all_stats.push((target.isa_name(), stats.clone()));
        }
        let hsaco = codeobj::write_hsaco(&object).unwrap();
        let (got, _) = amdgpu_cg::sim::run_launch(&hsaco, spec).unwrap_or_else(|e| panic!("{file} on {}: simulator: {e}", target.isa_name()));
        for w in &want.buffers {
            let g = got.iter().find(|b| b.name == w.name).unwrap();
            assert_eq!(g.elements(), w.elements(), "{file} on {}: buffer {}", target.isa_name(), w.name);
        }
    }
    all_stats
}

/// The start of a kernel that loads `n` f32 values %v0..: in[nt..nt + n].
fn loads_of_live_values(n: usize) -> String {
    let mut text = String::from("kernel @pressure(%in: ptr<global>, %out: ptr<global>) {\nentry:\n  %t = workitem_id x\n");
    text.push_str(&format!("  %base = mul i32 %t, {}\n  %p = ptradd %in, %base\n", 4 * n));
    for k in 0..n {
        text.push_str(&format!("  %q{k} = ptradd %p, {}\n  %v{k} = load f32 %q{k}\n", 4 * k));
    }
    text
}

/// A kernel with `n` divergent f32 values live at once: out[t] = in[nt] +
/// in[nt + 1] + ... in that order, every value loaded before the first add.
fn live_values_kernel(n: usize) -> String {
    let mut text = loads_of_live_values(n);
    text.push_str("  %s0 = fadd f32 %v0, %v1\n");
    for k in 2..n {
        text.push_str(&format!("  %s{} = fadd f32 %s{}, %v{k}\n", k - 1, k - 2));
    }
    text.push_str(&format!("  %o = mul i32 %t, 4\n  %r = ptradd %out, %o\n  store f32 %s{}, %r\n  ret\n}}\n", n - 2));
    text
}

/// `n` values live through a loop whose trip count differs per lane (t & 7)
/// and after it: every iteration adds them all to an accumulator, and the
/// exit adds them once more.
fn divergent_live_values_kernel(n: usize) -> String {
    let mut text = loads_of_live_values(n);
    text.push_str("  %m = and i32 %t, 7\n  br head(0, 0.0)\nhead(%i: i32, %acc: f32):\n  %done = icmp uge i32 %i, %m\n  brif %done, exit(%acc), body\nbody:\n");
    text.push_str("  %a0 = fadd f32 %acc, %v0\n");
    for k in 1..n {
        text.push_str(&format!("  %a{k} = fadd f32 %a{}, %v{k}\n", k - 1));
    }
    text.push_str(&format!("  %i2 = add i32 %i, 1\n  br head(%i2, %a{})\nexit(%r: f32):\n  %b0 = fmul f32 %r, %v0\n", n - 1));
    for k in 1..n {
        text.push_str(&format!("  %b{k} = fadd f32 %b{}, %v{k}\n", k - 1));
    }
    text.push_str(&format!("  %o = mul i32 %t, 4\n  %w = ptradd %out, %o\n  store f32 %b{}, %w\n  ret\n}}\n", n - 1));
    text
}

fn live_values_spec(n: usize) -> LaunchSpec {
    LaunchSpec::from_flags("64", "64", &[format!("in=f32:iota:{}", 64 * n), "out=f32:zero:64".into()], &["in=@in".into(), "out=@out".into()], &[]).unwrap()
}

#[test]
fn vgpr_values_beyond_regalloc2s_64_stay_in_registers() {
    // 80 values live: regalloc2's VGPR class holds 64, its spill slots are
    // VGPRs above them, nothing goes to memory.
    let spec = LaunchSpec::from_flags("128", "64", &["in=f32:iota:10240".into(), "out=f32:zero:128".into()], &["in=@in".into(), "out=@out".into()], &[]).unwrap();
    for (target, stats) in check_text("pressure_vgpr.mir", &data_text("pressure_vgpr.mir"), &spec, true, false) {
        assert_eq!(stats.vgpr_spills, 0, "{target}");
        assert!(stats.slot_vgprs > 0 && stats.vgprs >= 80 && stats.vgprs <= 96, "{target}: {stats:?}");
    }
}

#[test]
fn two_hundred_live_values_need_no_memory() {
    for (target, stats) in check_text("200 live values", &live_values_kernel(200), &live_values_spec(200), true, false) {
        assert_eq!(stats.vgpr_spills, 0, "{target}");
        assert!(stats.vgprs >= 200 && stats.vgprs <= 240, "{target}: {stats:?}");
    }
}

#[test]
fn live_values_beyond_64_through_a_divergent_loop() {
    for (target, stats) in check_text("120 live values in a divergent loop", &divergent_live_values_kernel(120), &live_values_spec(120), true, false) {
        assert_eq!(stats.vgpr_spills, 0, "{target}");
        assert!(stats.vgprs >= 120 && stats.vgprs <= 140, "{target}: {stats:?}");
    }
}

#[test]
fn an_occupancy_target_bounds_the_registers() {
    // 110 values live need 114 VGPRs; 8 waves per SIMD leave 64 on gfx90a
    // and gfx942 (512 / 8, AGPRs included) and 192 on gfx1100 in wave32 (96
    // in wave64): the rest spills, and the results stay the same.
    let text = live_values_kernel(110).replacen("%out: ptr<global>)", "%out: ptr<global>) min_waves_per_simd(8)", 1);
    for (target, stats) in check_text("110 live values, 8 waves", &text, &live_values_spec(110), true, None) {
        assert!(stats.occupancy >= 8, "{target}: {stats:?}");
        if !target.contains("gfx1100") {
            assert!(stats.vgprs + stats.agprs <= 64 && stats.vgpr_spills > 0, "{target}: {stats:?}");
        }
    }
    let text = live_values_kernel(110).replacen("%out: ptr<global>)", "%out: ptr<global>) min_waves_per_simd(16)", 1);
    for (target, stats) in check_text("110 live values, 16 waves", &text, &live_values_spec(110), true, None) {
        if target.contains("gfx1100") {
            assert!(stats.occupancy >= 16 && stats.vgprs <= 96, "{target}: {stats:?}");
        } else {
            // gfx90a and gfx942 run at most 8 waves per SIMD.
            assert_eq!(stats.occupancy, 8, "{target}: {stats:?}");
        }
    }
}

#[test]
fn vgpr_values_beyond_the_vgprs_go_to_agprs_then_scratch() {
    // gfx90a and gfx942 have 256 AGPRs besides the 256 VGPRs; gfx1100 has
    // none: the VGPR file first, then scratch.
    let has_agprs = |target: &str| !target.contains("gfx1100");
    for (target, stats) in check_text("300 live values", &live_values_kernel(300), &live_values_spec(300), true, None) {
        assert!(stats.vgprs >= 200, "{target}: {stats:?}");
        if has_agprs(&target) {
            assert!(stats.agprs > 0 && stats.vgpr_spills == 0 && stats.scratch_bytes == 0, "{target}: {stats:?}");
        } else {
            assert!(stats.vgpr_spills > 0 && stats.scratch_bytes > 0, "{target}: {stats:?}");
        }
    }
    for (target, stats) in check_text("400 live values", &live_values_kernel(400), &live_values_spec(400), true, None) {
        if has_agprs(&target) {
            assert!(stats.agprs > 100 && stats.vgpr_spills == 0 && stats.scratch_bytes == 0, "{target}: {stats:?}");
        }
    }
    for (target, stats) in check_text("560 live values", &live_values_kernel(560), &live_values_spec(560), true, true) {
        assert!(stats.vgpr_spills > 0 && stats.vgprs >= 200, "{target}: {stats:?}");
        if has_agprs(&target) {
            assert_eq!(stats.agprs, 256, "{target}: {stats:?}");
        }
    }
}

#[test]
fn sgpr_spills_to_vgpr_lanes() {
    let spec = LaunchSpec::from_flags("64", "64", &["c=i32:iota:70".into(), "out=i32:zero:64".into()], &["c=@c".into(), "out=@out".into()], &[]).unwrap();
    check("pressure_sgpr.mir", &spec, true, false);
}

#[test]
fn f64_arithmetic_division_and_conversions() {
    // Inputs spread over signs and magnitudes; y = 3.25 - i is never zero.
    let input: Vec<String> = (0..64i64).map(|i| ((i * 7919 - 250_000) * (1 - 2 * (i % 2))).to_string()).collect();
    let spec = LaunchSpec::from_flags("64", "64", &[format!("in=i32:{}", input.join(",")), "out=i32:zero:256".into()], &["in=@in".into(), "out=@out".into()], &[]).unwrap();
    check("f64.mir", &spec, false, false);
    let data: Vec<String> = (0..64u64).map(|k| ((k.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (k << 59)) as i64).to_string()).collect();
    let spec = LaunchSpec::from_flags(
        "64",
        "64",
        &[format!("in=i64:{}", data.join(",")), "out=i64:zero:1024".into()],
        &["in=@in".into(), "out=@out".into(), "u=-81985529216486896".into()],
        &[],
    )
    .unwrap();
    check("wide_shifts.mir", &spec, false, false);
}

/// gfx11 VOPD pairs (vopd.rs) compute what the interpreter does: a kernel of
/// many independent f32 and i32 operations, on every target at -O0 and -O2.
/// On gfx1100 wave32 at -O2 it gets at least 12 pairs (both halves of each
/// read their sources before either writes, as the simulator executes them);
/// -O0 and wave64 get none.
#[test]
fn dual_issue_pairs_compute_what_the_interpreter_does() {
    let input: Vec<String> = (0..512).map(|i| (((i * 37 % 101) as f32 - 50.0) * 0.37 + (i % 3) as f32 * 0.125).to_string()).collect();
    let spec = LaunchSpec::from_flags(
        "64",
        "64",
        &[format!("in=f32:{}", input.join(",")), "out=f32:zero:512".into()],
        &["in=@in".into(), "out=@out".into(), "u=1.5".into(), "k=12345".into()],
        &[],
    )
    .unwrap();
    check("dual_issue.mir", &spec, false, false);
    let text = data_text("dual_issue.mir");
    let module = mir::parse(&text).unwrap();
    for target in targets() {
        for level in [OptLevel::O0, OptLevel::O2] {
            let options = Options { opt_level: level, ..Options::default() };
            let (_, kernels) = codegen::compile_module(&module, &target, CodeObjectVersion::V5, &options, &mut Report::default()).unwrap();
            let pairs = kernels[0].asm.lines().filter(|l| l.trim_start().starts_with("v_dual_")).count();
            let wave32_gfx11 = target.target.gpu == Gpu::Gfx1100 && target.target.wave == amdgpu_cg::isa::WaveSize::W32;
            if wave32_gfx11 && level == OptLevel::O2 {
                assert!(pairs >= 12, "{} at -O2: {pairs} VOPD pairs", target.isa_name());
            } else {
                assert_eq!(pairs, 0, "{} at {level:?}", target.isa_name());
            }
        }
    }
}

#[test]
fn byte_and_short_memory() {
    let bytes: Vec<String> = (0..64i32).map(|i| (i * 37 % 256 - 128).to_string()).collect();
    let shorts: Vec<String> = (0..64i32).map(|i| (i * 1031 % 65536 - 32768).to_string()).collect();
    let spec = LaunchSpec::from_flags(
        "64",
        "64",
        &[format!("in_b=i8:{}", bytes.join(",")), format!("in_s=i16:{}", shorts.join(",")), "out_b=i8:zero:64".into(), "out_s=i16:zero:64".into()],
        &["in_b=@in_b".into(), "in_s=@in_s".into(), "out_b=@out_b".into(), "out_s=@out_s".into()],
        &[],
    )
    .unwrap();
    check("bytes.mir", &spec, false, false);
}

#[test]
fn wait_before_a_loaded_value_leaves_a_fall_through_block() {
    let spec = LaunchSpec::from_flags("64", "64", &["in=i32:iota:64".into(), "out=i32:zero:64".into()], &["in=@in".into(), "out=@out".into()], &[]).unwrap();
    check("fallthrough_wait.mir", &spec, false, false);
}

/// Values a divergent loop's latch merges at its exit after assigning the
/// header's parameters for the back edge, whose registers are the
/// parameters' own (`sext %i`, `trunc %w`): -O0 read the new parameters
/// (every result one iteration ahead).
#[test]
fn loop_exit_after_back_edge_reads_values_before_the_assignment() {
    let input: Vec<String> = (0..64).map(|i| ((i * 7) % 5).to_string()).collect();
    let spec = LaunchSpec::from_flags("64", "64", &[format!("in=i32:{}", input.join(",")), "out=i32:fill:-99:64".into()], &["in=@in".into(), "out=@out".into()], &[]).unwrap();
    check("exit_after_back_edge.mir", &spec, false, false);
}

#[test]
fn review_regressions() {
    // v[4t + 1] is a signalling NaN for odd t: fmin/fmax must ignore it (MIR).
    let v: Vec<String> = (0..256u32)
        .map(|i| if i % 4 == 1 && (i / 4) % 2 == 1 { "0x7f800001".to_string() } else { format!("{}", i as f32 * 0.5 - 40.0) })
        .collect();
    let spec = LaunchSpec::from_flags(
        "64",
        "64",
        &["c=i32:iota:8".into(), format!("v=f32:{}", v.join(",")), "out=i32:zero:256".into()],
        &["c=@c".into(), "v=@v".into(), "out=@out".into()],
        &[],
    )
    .unwrap();
    check("review.mir", &spec, false, false);
}

#[test]
fn calls_to_device_functions() {
    // Two work-groups of 8 x 8: work-item ids in X and Y and the work-group id
    // reach the callees as implicit inputs.
    let spec = LaunchSpec::from_flags(
        "16,8,1",
        "8,8,1",
        &["in=f32:iota:128".into(), "out=f32:zero:128".into(), "tags=i32:zero:128".into()],
        &["in=@in".into(), "out=@out".into(), "tags=@tags".into(), "k=3".into()],
        &[],
    )
    .unwrap();
    check("calls.mir", &spec, false, false);
    let spec = LaunchSpec::from_flags(
        "64",
        "64",
        &["in=i32:iota:64".into(), "out=i32:zero:64".into()],
        &["in=@in".into(), "out=@out".into(), "k=5".into(), "big=81985529216486895".into()],
        &[],
    )
    .unwrap();
    check("call_aggregates.mir", &spec, false, false);
    let spec = LaunchSpec::from_flags(
        "128",
        "64",
        &["in=i32:iota:128".into(), "out=i32:zero:128".into()],
        &["in=@in".into(), "out=@out".into(), "k=5".into()],
        &[],
    )
    .unwrap();
    check("call_control_flow.mir", &spec, false, false);
    let spec = LaunchSpec::from_flags(
        "128",
        "64",
        &["in=i32:iota:128".into(), "out=i32:zero:128".into()],
        &["in=@in".into(), "out=@out".into(), "u0=17".into(), "u1=-5".into()],
        &[],
    )
    .unwrap();
    // The kernel itself no longer spills at -O0 (one VGPR did until 64-bit
    // multiplies by constants stopped multiplying by their zero and one
    // halves); the callee whose SGPR spills need v32 still spills.
    check("call_frames.mir", &spec, false, true);
    let text = data_text("call_frames.mir");
    let options = Options { opt_level: OptLevel::O0, ..Options::default() };
    for target in targets() {
        let (_, compiled) = codegen::compile_module(&mir::parse(&text).unwrap(), &target, CodeObjectVersion::V5, &options, &mut Report::default()).unwrap();
        let f1 = compiled.iter().find(|k| k.name == "frames_f1").unwrap();
        assert!(f1.stats.sgpr_spills > 0, "frames_f1 on {}: no SGPR spills", target.isa_name());
    }
    let text = std::fs::read_to_string(format!("{}/examples/call.mir", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let module = mir::parse(&text).unwrap();
    let spec = LaunchSpec::from_flags("128", "64", &["in=f32:iota:128".into(), "out=f32:zero:128".into()], &["in=@in".into(), "out=@out".into(), "k=3".into()], &[]).unwrap();
    let want = mir::launch::run(&module, &spec).unwrap();
    for target in targets() {
        let (object, _) = compile_default(&module, &target);
        let (got, _) = amdgpu_cg::sim::run_launch(&codeobj::write_hsaco(&object).unwrap(), &spec).unwrap();
        let out = |b: &[amdgpu_cg::mir::launch::BufferOutput]| b.iter().find(|b| b.name == "out").unwrap().elements();
        assert_eq!(out(&got), out(&want.buffers), "call.mir on {}", target.isa_name());
    }
}

/// Issue 8 (6c): the 40-argument call with a struct argument (stack arguments,
/// a by-reference copy, the work-item id on the stack) on every target. The
/// simulator takes the struct's fields with their types.
#[test]
fn call_with_forty_arguments_and_a_struct() {
    let text = std::fs::read_to_string(format!("{}/examples/call_many.mir", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let module = mir::parse(&text).unwrap();
    let flags = |s: &str| {
        LaunchSpec::from_flags(
            "128",
            "64",
            &["in=i32:iota:128".into(), "out=f32:zero:128".into()],
            &["in=@in".into(), "out=@out".into(), s.into()],
            &[],
        )
        .unwrap()
    };
    let want = mir::launch::run(&module, &flags("s=17,0.25,4294967301,-3.5")).unwrap();
    let out = |b: &[amdgpu_cg::mir::launch::BufferOutput]| b.iter().find(|b| b.name == "out").unwrap().elements();
    for target in targets() {
        let (object, kernels) = codegen::compile_module(&module, &target, CodeObjectVersion::V5, &Options::default(), &mut Report::default())
            .unwrap_or_else(|d| panic!("call_many on {}: {d}", target.isa_name()));
        let kernel = kernels.iter().find(|k| k.is_kernel).unwrap();
        // 48 bytes of stack arguments and the 24-byte struct's copy at least.
        assert!(kernel.resources.private_segment_fixed_size >= 48 + 32, "{}", kernel.resources.private_segment_fixed_size);
        let (got, _) = amdgpu_cg::sim::run_launch(&codeobj::write_hsaco(&object).unwrap(), &flags("s=i32:17,f32:0.25,i64:4294967301,f64:-3.5"))
            .unwrap_or_else(|e| panic!("call_many on {}: simulator: {e}", target.isa_name()));
        assert_eq!(out(&got), out(&want.buffers), "call_many on {}", target.isa_name());
    }
}

#[test]
fn early_returns_and_shared_joins_on_divergent_paths() {
    let spec = LaunchSpec::from_flags(
        "128",
        "64",
        &["in=i32:iota:128".into(), "out=i32:zero:128".into(), "flags=i32:fill:7:128".into()],
        &["in=@in".into(), "out=@out".into(), "flags=@flags".into()],
        &[],
    )
    .unwrap();
    check("early_return.mir", &spec, false, false);
    let spec = LaunchSpec::from_flags("64", "64", &["out=i32:zero:64".into()], &["out=@out".into()], &[]).unwrap();
    check("nested_join.mir", &spec, false, false);
}

#[test]
fn f16_arithmetic_compares_and_conversions() {
    // Random f16 bit patterns (every class: NaNs, infinities, denormals, zeros)
    // and the special values, on the targets that support f16 (gfx9).
    let mut x = 0x2545_f491u32;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x
    };
    let specials = [0x0000u16, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x0001, 0x03ff, 0x0400, 0x7bff, 0xfbff, 0x3c00, 0xbc00];
    let mut half = |i: usize| if i % 5 == 0 { specials[(i / 5) % specials.len()] } else { next() as u16 };
    let a: Vec<String> = (0..64).map(|i| (half(i) as i16).to_string()).collect();
    let b: Vec<String> = (0..64).map(|i| (half(i + 3) as i16).to_string()).collect();
    let spec = LaunchSpec::from_flags(
        "64",
        "64",
        &[format!("a=i16:{}", a.join(",")), format!("b=i16:{}", b.join(",")), "out=f16:zero:576".into(), "flags=i32:zero:64".into()],
        &["a=@a".into(), "b=@b".into(), "out=@out".into(), "flags=@flags".into()],
        &[],
    )
    .unwrap();
    let text = data_text("f16.mir");
    let module = mir::parse(&text).unwrap();
    let want = mir::launch::run(&module, &spec).unwrap();
    for target in targets() {
        let compiled = codegen::compile_module(&module, &target, CodeObjectVersion::V5, &Options::default(), &mut Report::default());
        let (object, _) = compiled.unwrap_or_else(|d| panic!("{}: {d}", target.isa_name()));
        let (got, _) = amdgpu_cg::sim::run_launch(&codeobj::write_hsaco(&object).unwrap(), &spec).unwrap();
        for w in &want.buffers {
            let g = got.iter().find(|b| b.name == w.name).unwrap();
            assert_eq!(g.elements(), w.elements(), "f16.mir on {}: buffer {}", target.isa_name(), w.name);
        }
    }
}

fn compile_error(text: &str) -> String {
    let module = mir::parse(text).unwrap();
    mir::verify::verify(&module).unwrap();
    let target = CodeObjectTarget::new(Target::new(Gpu::Gfx90a));
    match codegen::compile_module(&module, &target, CodeObjectVersion::V5, &Options::default(), &mut Report::default()) {
        Ok(_) => panic!("expected a compile error"),
        Err(d) => d.message.clone(),
    }
}

#[test]
fn lds_beyond_the_limit_is_an_error() {
    let message = compile_error("kernel @k() {\nentry:\n  %a = lds_slot 40000, align 4\n  %b = lds_slot 40000, align 4\n  ret\n}\n");
    assert!(message.contains("80000 bytes of LDS, more than the 65536"), "{message}");
    let message = compile_error("kernel @k() {\nentry:\n  %a = lds_slot 4294967295, align 4\n  %b = lds_slot 4294967295, align 4\n  ret\n}\n");
    assert!(message.contains("bytes of LDS"), "{message}");
}

#[test]
fn divergent_loop_entered_twice_from_one_block() {
    for n in ["n=0", "n=5"] {
        let spec = LaunchSpec::from_flags("128", "64", &["out=i32:fill:-1:128".into()], &["out=@out".into(), n.into()], &[]).unwrap();
        check("loop_entered_twice.mir", &spec, false, false);
    }
}

/// Issue 8: device functions that call (nested calls and recursion). A
/// recursive call graph has no static stack bound: the kernel reports a dynamic
/// stack, which the simulator (like ROCm) backs with extra private memory.
/// A work-item id that arrives on the stack (the arguments fill v0-v31) and
/// is only passed on from a non-entry block still reaches the callee.
#[test]
fn stack_work_item_id_passed_on_from_a_branch() {
    let spec = LaunchSpec::from_flags("128", "64", &["out=i32:zero:128".into()], &["out=@out".into()], &[]).unwrap();
    check("stack_workitem_id.mir", &spec, false, true);
}

#[test]
fn nested_and_recursive_calls() {
    let spec = LaunchSpec::from_flags("128", "64", &["out=i32:zero:128".into()], &["out=@out".into()], &[]).unwrap();
    check("nested_calls.mir", &spec, false, true);
    check("stack_slots.mir", &spec, false, true);
    check("large_frames.mir", &spec, false, true);
    check("frame_edges.mir", &spec, false, true);
    let mut fact_frame = 0;
    let text = data_text("nested_calls.mir");
    let module = mir::parse(&text).unwrap();
    for target in targets() {
        let (_, kernels) = compile_default(&module, &target);
        let k = kernels.iter().find(|k| k.is_kernel).unwrap();
        assert!(k.resources.uses_dynamic_stack, "recursion: dynamic stack on {}", target.isa_name());
        let fact = kernels.iter().find(|f| f.name == "fact").unwrap();
        fact_frame = fact.frame_bytes;
        let outer = kernels.iter().find(|f| f.name == "outer").unwrap();
        let inner = kernels.iter().find(|f| f.name == "inner").unwrap();
        // The deeper chain: fact's frame and the documented default, or outer -> inner.
        let deepest = (fact.frame_bytes + codegen::DYNAMIC_STACK_BYTES).max(outer.frame_bytes + inner.frame_bytes);
        assert_eq!(k.resources.private_segment_fixed_size, k.frame_bytes + deepest, "{}", target.isa_name());
    }
    // Without the recursive call the depth is static: the kernel's frame and
    // the chain outer -> inner.
    let flat = text.replace("  %f = call @fact(%m)", "  %f = add i32 %m, 1");
    let module = mir::parse(&flat).unwrap();
    let target = &targets()[0];
    let (_, kernels) = codegen::compile_module(&module, target, CodeObjectVersion::V5, &Options::default(), &mut Report::default()).unwrap();
    let k = kernels.iter().find(|k| k.is_kernel).unwrap();
    let inner = kernels.iter().find(|k| k.name == "inner").unwrap();
    let outer = kernels.iter().find(|k| k.name == "outer").unwrap();
    assert!(!k.resources.uses_dynamic_stack);
    // inner was compiled first and writes few VGPRs below v32: outer keeps its
    // return address in lanes of one inner leaves alone, so it saves nothing
    // and has no frame; fact, whose calls reach itself, saves the VGPR it
    // keeps them in (above).
    assert_eq!(outer.frame_bytes, 0);
    assert!(outer.stats.vgprs < 32, "outer keeps its values across the calls below v32: {} VGPRs", outer.stats.vgprs);
    assert!(fact_frame > 0);
    assert_eq!(k.resources.private_segment_fixed_size, k.frame_bytes + outer.frame_bytes + inner.frame_bytes);
}

#[test]
fn wave_operations_in_full_and_partial_waves() {
    // Work-groups of 100: full and partial waves in wave64 and wave32; lanes 9
    // and 40 of every wave have returned before the wave operations.
    let input: Vec<String> = (0..200u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 7).to_string()).collect();
    check_waves("wave_ops.mir", &input, 1600, &["u=77".into()]);
    // Signed values for the reductions and scans.
    let input: Vec<String> = (0..200u32).map(|i| ((i.wrapping_mul(2_654_435_761) >> 11) as i32 - 1_000_000).to_string()).collect();
    check_waves("wave_reduce.mir", &input, 2000, &[]);
    check_waves("wave_reduce64.mir", &input, 4000, &[]);
}

/// Runs a wave test kernel (`in`, `out` and `extra` arguments) on every target
/// with the interpreter's wave size set to the target's.
fn check_waves(file: &str, input: &[String], out_len: usize, extra: &[String]) {
    let text = data_text(file);
    let module = mir::parse(&text).unwrap();
    mir::verify::verify(&module).unwrap();
    for target in targets() {
        let mut args = vec!["in=@in".to_string(), "out=@out".to_string()];
        args.extend(extra.iter().cloned());
        let mut spec =
            LaunchSpec::from_flags("200", "100", &[format!("in=i32:{}", input.join(",")), format!("out=i32:zero:{out_len}")], &args, &[]).unwrap();
        spec.wave_size = target.target.wave.lanes();
        let want = mir::launch::run(&module, &spec).unwrap_or_else(|e| panic!("{}: {e}", target.isa_name()));
        let (object, _) = codegen::compile_module(&module, &target, CodeObjectVersion::V5, &Options::default(), &mut Report::default())
            .unwrap_or_else(|d| panic!("{}: {d}", target.isa_name()));
        let (got, _) = amdgpu_cg::sim::run_launch(&codeobj::write_hsaco(&object).unwrap(), &spec).unwrap_or_else(|e| panic!("{}: {e}", target.isa_name()));
        for w in &want.buffers {
            let g = got.iter().find(|b| b.name == w.name).unwrap();
            assert_eq!(g.elements(), w.elements(), "{file} on {}: buffer {}", target.isa_name(), w.name);
        }
    }
}

/// Uniform loads of global memory use the scalar unit only where no write
/// can reach them (unclobbered_loads.mir): in each kernel the load before
/// every write is an `s_load`; after a store, an atomic, a barrier, a fence
/// or a call the next one is a vector load, after a store to LDS a scalar
/// one, and a load in a loop whose body stores is a vector load. Each
/// kernel's results equal the interpreter's.
#[test]
fn uniform_global_loads_are_scalar_only_before_any_write() {
    let text = data_text("unclobbered_loads.mir");
    for kernel in ["store", "atomic", "barrier", "fence", "call", "lds", "loop"] {
        let mut args = vec!["in=@in".to_string(), "out=@out".to_string()];
        if kernel == "loop" {
            args.push("n=3".into());
        }
        let mut spec = LaunchSpec::from_flags("64", "64", &["in=i32:iota:16".into(), "out=i32:zero:512".into()], &args, &[]).unwrap();
        spec.kernel = Some(kernel.to_string());
        check_text(&format!("unclobbered_loads.mir @{kernel}"), &text, &spec, false, false);
    }
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/codegen/unclobbered_loads.mir");
    for mcpu in ["gfx90a", "gfx942", "gfx1100"] {
        let target = amdgpu_cg::driver::parse_target("amdgcn-amd-amdhsa", mcpu).unwrap();
        let (listing, _) = amdgpu_cg::driver::compile_file(&path, &target, amdgpu_cg::driver::Emit::Asm, 5, &Options::default(), false).unwrap();
        let listing = String::from_utf8(listing).unwrap();
        let code = |name: &str| -> Vec<String> { listing.lines().skip_while(|l| *l != format!("{name}:")).take_while(|l| !l.contains("s_endpgm")).map(str::to_string).collect() };
        let scalar_at = |code: &[String], offset: &str| code.iter().any(|l| (l.contains("s_load_dword ") || l.contains("s_load_b32 ")) && l.trim_end().ends_with(&format!(", {offset}")));
        let vector_at = |code: &[String], offset: &str| code.iter().any(|l| l.contains("global_load") && l.trim_end().ends_with(&format!("offset:{offset}")));
        for kernel in ["store", "atomic", "barrier", "fence", "call", "lds"] {
            let code = code(kernel);
            assert!(scalar_at(&code, "0x8"), "{mcpu} @{kernel}: @in[2] before any write\n{}", code.join("\n"));
            let after_scalar = kernel == "lds";
            assert_eq!((scalar_at(&code, "0xc"), vector_at(&code, "12")), (after_scalar, !after_scalar), "{mcpu} @{kernel}: @in[3]\n{}", code.join("\n"));
        }
        let code = code("loop");
        assert!(vector_at(&code, "20") && !scalar_at(&code, "0x14"), "{mcpu} @loop\n{}", code.join("\n"));
    }
}

/// gfx1100's transcendental-use hazard across blocks: each side of a
/// divergent branch ends in a transcendental whose result the join reads
/// at once (trans_across_blocks.mir). The simulator refuses the read
/// without `s_waitcnt_depctr va_vdst(0)`; the hazard pass looked only
/// within blocks before.
#[test]
fn transcendental_results_read_across_blocks() {
    let spec = LaunchSpec::from_flags("64", "64", &["in=f32:iota:64".into(), "out=f32:zero:64".into()], &["in=@in".into(), "out=@out".into()], &[]).unwrap();
    check("trans_across_blocks.mir", &spec, false, false);
}

/// Data holding addresses (module_addresses.mir): the loader writes them
/// (R_AMDGPU_RELATIVE64 in .rela.dyn), in writable data and in
/// .data.rel.ro. The sums are worked out by hand from the data lines:
/// table[2] + (table[0] or table[3]) + 5 + table[1] + ctab[2] + ctab[1],
/// and both pointer comparisons true (3).
#[test]
fn data_holding_addresses() {
    let spec = LaunchSpec::from_flags("64", "64", &["out=i32:zero:128".into()], &["out=@out".into()], &[]).unwrap();
    let text = data_text("module_addresses.mir");
    let want = mir::launch::run(&mir::parse(&text).unwrap(), &spec).unwrap();
    let by_hand: Vec<String> = (0..64).flat_map(|i| [if i % 2 == 0 { 30 + 10 + 5 + 20 + 9 + 8 } else { 30 + 40 + 5 + 20 + 9 + 8 }, 3]).map(|v: i32| v.to_string()).collect();
    assert_eq!(want.buffers[0].elements(), by_hand);
    check("module_addresses.mir", &spec, false, false);
}

#[test]
fn float_atomics_under_contention() {
    let spec = LaunchSpec::from_flags("64", "64", &["g=f32:0,-1,0,0".into(), "out=i32:zero:64".into()], &["g=@g".into(), "out=@out".into()], &[]).unwrap();
    check("float_atomics.mir", &spec, false, false);
}

/// `base + sext(i) * 4` (clang's SPIR-V for `p[i]` with an int index) is one
/// `v_mad_i64_i32` at -O2: the extension and shift selected before it are
/// removed unread (machine_dce), and the kernel still computes what the
/// interpreter does.
#[test]
fn scaled_indices_are_one_multiply_add() {
    let text = "kernel @k(%in: ptr<global>, %out: ptr<global>) {
entry:
  %t = workitem_id x
  %j = sub i32 100, %t
  %e = sext i32 %j to i64
  %o = shl i64 %e, 2
  %p = ptradd %in, %o
  %v = load i32 %p
  %q = ptradd %out, %o
  store i32 %v, %q
  ret
}
";
    let module = mir::parse(text).unwrap();
    let spec = LaunchSpec::from_flags("64", "64", &["in=i32:iota:128".into(), "out=i32:zero:128".into()], &["in=@in".into(), "out=@out".into()], &[]).unwrap();
    let want = mir::launch::run(&module, &spec).unwrap();
    for target in targets() {
        let (object, kernels) = compile_default(&module, &target);
        let asm = &kernels[0].asm;
        assert_eq!(asm.matches("v_mad_i64_i32").count(), 2, "{}:\n{asm}", target.isa_name());
        assert!(!asm.contains("v_lshlrev_b64") && !asm.contains("v_ashrrev_i32"), "{}:\n{asm}", target.isa_name());
        let hsaco = codeobj::write_hsaco(&object).unwrap();
        let (got, _) = amdgpu_cg::sim::run_launch(&hsaco, &spec).unwrap();
        let g = got.iter().find(|b| b.name == "out").unwrap();
        assert_eq!(g.elements(), want.buffer("out").unwrap().elements(), "{}", target.isa_name());
    }
}

/// The hidden arguments: a kernel reads the global offset and the dimension
/// count itself, and a device function (through two calls) receives the
/// implicit-argument pointer and reads them there; the launch has an offset.
#[test]
fn global_offset_and_work_dim_in_kernels_and_device_functions() {
    let text = "func @inner(%k: i32) -> i32 noinline {
entry:
  %oy = global_offset y
  %d = work_dim
  %m = mul i32 %d, 1000
  %s = add i32 %oy, %m
  %r = add i32 %s, %k
  ret %r
}
func @outer(%k: i32) -> i32 noinline {
entry:
  %r = call @inner(%k)
  %ox = global_offset x
  %s = add i32 %r, %ox
  ret %s
}
kernel @k(%pad: i32, %out: ptr<global>) {
entry:
  %x = workitem_id x
  %g = workgroup_id x
  %oz = global_offset z
  %r = call @outer(%x)
  %a = add i32 %r, %oz
  %b = add i32 %a, %pad
  %n = workgroup_size x
  %gb = mul i32 %g, %n
  %i = add i32 %gb, %x
  %w = zext i32 %i to i64
  %off = shl i64 %w, 2
  %p = ptradd %out, %off
  store i32 %b, %p
  ret
}
";
    let spec = |offset: &str, dims: &str| {
        let json = format!(
            r#"{{"grid":[128,2],"block":[64,1],"offset":{offset},"work_dim":{dims},"buffers":{{"out":{{"type":"i32","len":128}}}},"args":{{"pad":3,"out":"@out"}}}}"#
        );
        LaunchSpec::from_json(&json).unwrap()
    };
    for s in [spec("[70000, 9, 5]", "3"), spec("[1]", "2")] {
        let want = mir::launch::run(&mir::parse(text).unwrap(), &s).unwrap();
        // Work-item 5 of group 1: 5 + oy + 1000 d + ox + oz + 3.
        let [ox, oy, oz] = s.offset;
        assert_eq!(
            want.buffers[0].elements()[69],
            (5 + oy + 1000 * s.work_dim.unwrap() + ox + oz + 3).to_string()
        );
        check_text("global offset", text, &s, false, None);
    }
}

/// A divergent pointer plus a 64-bit offset that is not a constant (a
/// uniform kernel argument, and a divergent value) is added straight into
/// the registers of the loads that use it: every global load's address pair
/// is written by the instruction right before it (the carry add, or the
/// load before it at another constant offset of the same sum), so no copy
/// into a window sits between them.
#[test]
fn address_sums_are_computed_in_the_address_registers() {
    let text = data_text("address_sums.mir");
    let module = mir::parse(&text).unwrap();
    let spec = LaunchSpec::from_flags("64", "64", &["in=i32:iota:1024".into(), "out=i32:zero:64".into()], &["in=@in".into(), "out=@out".into(), "u=24".into()], &[]).unwrap();
    let want = mir::launch::run(&module, &spec).unwrap();
    for target in targets() {
        let (object, kernels) = compile_default(&module, &target);
        let asm = &kernels[0].asm;
        let lines: Vec<&str> = asm.lines().map(str::trim).filter(|l| l.starts_with(|c: char| c.is_ascii_lowercase())).collect();
        let loads: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].starts_with("global_load")).collect();
        assert_eq!(loads.len(), 3, "{}:\n{asm}", target.isa_name());
        for &i in &loads {
            let pair = load_address(lines[i]);
            let before = lines[i - 1];
            let writes_high = before.starts_with("v_addc_co_u32") || before.starts_with("v_add_co_ci_u32");
            assert!(writes_high || (before.starts_with("global_load") && load_address(before) == pair), "{}: {} after {before}:\n{asm}", target.isa_name(), lines[i]);
        }
        let hsaco = codeobj::write_hsaco(&object).unwrap();
        let (got, _) = amdgpu_cg::sim::run_launch(&hsaco, &spec).unwrap();
        let g = got.iter().find(|b| b.name == "out").unwrap();
        assert_eq!(g.elements(), want.buffer("out").unwrap().elements(), "{}", target.isa_name());
    }
}

/// The `v[a:b]` address pair of a global load (its second operand).
fn load_address(line: &str) -> String {
    line.split(", ").nth(1).unwrap_or_default().to_string()
}

/// Vector loads and stores in global memory are multi-dword accesses where
/// the allocation places their registers consecutively, and dword accesses
/// otherwise: every target's code moves exactly the dwords the kernel
/// accesses (11 loaded, 15 stored), with at least one `_dwordx4` load and
/// store, and computes what the interpreter does.
#[test]
fn vector_memory_is_multi_dword_where_registers_allow() {
    let text = data_text("vector_memory.mir");
    let module = mir::parse(&text).unwrap();
    let buffers = ["in=f32:iota:1024".into(), "out=f32:zero:256".into(), "rev=f32:zero:256".into(), "d=f64:zero:128".into(), "t=i32:zero:192".into()];
    let args = ["in=@in".into(), "out=@out".into(), "rev=@rev".into(), "d=@d".into(), "t=@t".into()];
    let spec = LaunchSpec::from_flags("64", "64", &buffers, &args, &[]).unwrap();
    let want = mir::launch::run(&module, &spec).unwrap();
    // Dwords per access, by the names llvm-mc-22 prints on gfx9 and gfx11.
    let dwords = |name: &str| match name.trim_start_matches("global_load_").trim_start_matches("global_store_") {
        "dword" | "b32" => 1,
        "dwordx2" | "b64" => 2,
        "dwordx3" | "b96" => 3,
        "dwordx4" | "b128" => 4,
        other => panic!("unexpected access {other}"),
    };
    for target in targets() {
        let (object, kernels) = compile_default(&module, &target);
        let asm = &kernels[0].asm;
        let names: Vec<&str> = asm.lines().filter_map(|l| l.split_whitespace().next()).filter(|n| n.starts_with("global_load") || n.starts_with("global_store")).collect();
        let loaded: u32 = names.iter().filter(|n| n.starts_with("global_load")).map(|n| dwords(n)).sum();
        let stored: u32 = names.iter().filter(|n| n.starts_with("global_store")).map(|n| dwords(n)).sum();
        assert_eq!((loaded, stored), (11, 15), "{}:\n{asm}", target.isa_name());
        assert!(names.iter().any(|n| dwords(n) == 4 && n.starts_with("global_load")), "{}:\n{asm}", target.isa_name());
        assert!(names.iter().any(|n| dwords(n) == 4 && n.starts_with("global_store")), "{}:\n{asm}", target.isa_name());
        let hsaco = codeobj::write_hsaco(&object).unwrap();
        let (got, _) = amdgpu_cg::sim::run_launch(&hsaco, &spec).unwrap();
        for w in &want.buffers {
            let g = got.iter().find(|b| b.name == w.name).unwrap();
            assert_eq!(g.elements(), w.elements(), "{}: buffer {}", target.isa_name(), w.name);
        }
    }
}

/// Reads of one LDS address at offsets up to 1020 bytes pair into
/// `ds_read2_b32` (gfx11: `ds_load_2addr_b32`) with the interpreter's results;
/// the read at 1024 stays a single one. Selection pairs (0, 4) and (8, 12);
/// a pair stays one instruction where the allocation puts its results side
/// by side, which placement cannot always give both (a register can be the
/// partner of only one other, docs/regalloc.md), so the output has one or
/// two.
#[test]
fn lds_reads_of_one_address_pair_up() {
    let text = data_text("lds_read_pairs.mir");
    let spec = LaunchSpec::from_flags("64", "64", &["out=i32:zero:64".into()], &["out=@out".into()], &[]).unwrap();
    check_text("lds_read_pairs.mir", &text, &spec, false, false);
    let module = mir::parse(&text).unwrap();
    for target in targets() {
        let options = Options { print_after: vec!["fold_merges".into()], ..Options::default() };
        let mut report = Report::default();
        let (_, kernels) = codegen::compile_module(&module, &target, CodeObjectVersion::V5, &options, &mut report).unwrap();
        let selected = report.printed.lines().filter(|l| l.contains("ds_read2_b32") || l.contains("ds_load_2addr_b32")).count();
        assert_eq!(selected, 2, "{}:\n{}", target.isa_name(), report.printed);
        let asm = &kernels[0].asm;
        let pairs = asm.lines().filter(|l| l.contains("ds_read2_b32") || l.contains("ds_load_2addr_b32")).count();
        let singles = asm.lines().filter(|l| l.contains("ds_read_b32") || l.contains("ds_load_b32")).count();
        assert!(pairs >= 1, "{}: {pairs} pairs:\n{asm}", target.isa_name());
        assert_eq!(2 * pairs + singles, 6, "{}:\n{asm}", target.isa_name());
    }
}

/// Stores to LDS through one address register pair up
/// (tests/data/codegen/lds_write_pairs.mir): one `ds_write2st64_b32` (two
/// 1 KiB arrays indexed alike; gfx11: `ds_store_2addr_stride64_b32`), one
/// `ds_write2_b32` (words 4 bytes apart; `ds_store_2addr_b32`) and two single
/// stores, the first of which a load reads before the second: on every
/// target, at -O0 and -O2, with the interpreter's results (a store moved
/// down past that load would give it the old value).
#[test]
fn lds_writes_of_one_address_pair_up() {
    let text = data_text("lds_write_pairs.mir");
    let spec = LaunchSpec::from_flags("64", "64", &["out=i32:zero:64".into()], &["out=@out".into()], &[]).unwrap();
    check_text("lds_write_pairs.mir", &text, &spec, false, false);
    let module = mir::parse(&text).unwrap();
    for target in targets() {
        let (_, kernels) = compile_default(&module, &target);
        let asm = &kernels[0].asm;
        let count = |names: [&str; 2]| asm.lines().filter_map(|l| l.split_whitespace().next()).filter(|n| names.contains(n)).count();
        let st64 = count(["ds_write2st64_b32", "ds_store_2addr_stride64_b32"]);
        let plain = count(["ds_write2_b32", "ds_store_2addr_b32"]);
        let single = count(["ds_write_b32", "ds_store_b32"]);
        assert_eq!((st64, plain, single), (1, 1, 2), "{}:\n{asm}", target.isa_name());
    }
}

/// A kernel's adjacent 64-bit arguments load as one SGPR quad: vector_add's
/// three pointers are one `s_load_dwordx4` (gfx11: `s_load_b128`) of bytes
/// 0-15 into a 4-aligned quad and one `s_load_dwordx2` of bytes 16-23, as
/// llc-22 loads them, with the interpreter's results on every target.
#[test]
fn adjacent_pointer_arguments_load_as_one_quad() {
    let spec = LaunchSpec::from_flags("64", "64", &["a=f32:iota:64".into(), "b=f32:fill:2:64".into(), "c=f32:zero:64".into()], &["a=@a".into(), "b=@b".into(), "c=@c".into()], &[]).unwrap();
    let text = std::fs::read_to_string(format!("{}/examples/vector_add.mir", env!("CARGO_MANIFEST_DIR"))).unwrap();
    check_text("vector_add.mir", &text, &spec, false, false);
    let module = mir::parse(&text).unwrap();
    for target in targets() {
        let (_, kernels) = compile_default(&module, &target);
        let asm = &kernels[0].asm;
        let loads: Vec<&str> = asm.lines().map(str::trim).filter(|l| l.starts_with("s_load")).collect();
        let quads: Vec<&&str> = loads.iter().filter(|l| l.starts_with("s_load_dwordx4 ") || l.starts_with("s_load_b128 ")).collect();
        assert_eq!(quads.len(), 1, "{}:\n{asm}", target.isa_name());
        let first = quads[0].split(['[', ':']).nth(1).and_then(|n| n.parse::<u32>().ok()).unwrap();
        assert_eq!(first % 4, 0, "{}: {}", target.isa_name(), quads[0]);
        let pairs = loads.iter().filter(|l| l.starts_with("s_load_dwordx2 ") || l.starts_with("s_load_b64 ")).count();
        assert_eq!(pairs, 1, "{}:\n{asm}", target.isa_name());
    }
}

/// Values passed through divergent joins stay in their registers: a
/// then-side's instructions write the join's registers under EXEC, and the
/// first contribution to a join is the value itself (fold_merges), so the
/// only copy is for the value the last then-side both reads and replaces.
/// (Before fold_merges: two `v_mov_b32` per value a then-side replaces.)
/// Each if's EXEC save and narrowing is one `s_and_saveexec`.
#[test]
fn values_through_divergent_joins_are_not_copied() {
    let text = data_text("join_copies.mir");
    let spec = LaunchSpec::from_flags("64", "64", &["in=i32:iota:64".into(), "out=i32:zero:64".into()], &["in=@in".into(), "out=@out".into()], &[]).unwrap();
    check_text("join_copies.mir", &text, &spec, false, false);
    let module = mir::parse(&text).unwrap();
    for target in targets() {
        let (_, kernels) = compile_default(&module, &target);
        let asm = &kernels[0].asm;
        let copies = asm.lines().filter(|l| l.trim_start().starts_with("v_mov_b32")).count();
        assert!(copies <= 1, "{}: {copies} copies:\n{asm}", target.isa_name());
        // Each if saves and narrows EXEC in one s_and_saveexec (saveexec)
        // and restores EXEC at the join; its side, two VALU instructions,
        // runs even with no lane left (skip_branches drops the branch).
        let exec = asm.lines().filter(|l| l.contains("exec")).count();
        let saveexec = asm.lines().filter(|l| l.trim_start().starts_with("s_and_saveexec")).count();
        assert_eq!((saveexec, exec), (3, 6), "{}:\n{asm}", target.isa_name());
    }
}

/// A divergent loop's latch turns off the lanes that leave with one
/// `exec &= ~done` (saveexec's in-place narrowing): no mask register is made
/// for the lanes that go on and then copied into EXEC; the uniform if in
/// its body leaves EXEC alone. Results equal the interpreter's for trip
/// counts that differ per lane (in[i] & 15 over iota).
#[test]
fn loop_exits_narrow_exec_in_place() {
    let text = std::fs::read_to_string(format!("{}/examples/divergent_loop.mir", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let spec = LaunchSpec::from_flags("128", "64", &["in=i32:iota:128".into(), "out=i32:fill:7:128".into()], &["in=@in".into(), "out=@out".into()], &[]).unwrap();
    check_text("divergent_loop.mir", &text, &spec, false, false);
    let module = mir::parse(&text).unwrap();
    for target in targets() {
        let (_, kernels) = compile_default(&module, &target);
        let asm = &kernels[0].asm;
        let insts: Vec<Vec<&str>> = asm.lines().map(|l| l.split([' ', ',']).filter(|w| !w.is_empty()).collect()).collect();
        let narrows = |i: &&Vec<&str>| i.len() == 4 && (i[0].starts_with("s_andn2_b") || i[0].starts_with("s_and_not1_b")) && i[1].starts_with("exec") && i[2].starts_with("exec");
        assert_eq!(insts.iter().filter(narrows).count(), 1, "{}:\n{asm}", target.isa_name());
        // No `t = exec & ~c` into an SGPR: the only mask made from EXEC
        // is the exiting lanes' `exec & c`, merged into the exit mask.
        let masks = insts.iter().filter(|i| i.len() == 4 && i[0].starts_with("s_and") && !i[1].starts_with("exec") && i[2].starts_with("exec")).count();
        assert_eq!(masks, 1, "{}:\n{asm}", target.isa_name());
        // The uniform if inside the loop is a plain branch: its sides'
        // jumps to the join pass only the other side, where no lane waits,
        // so the join has no mask (no EXEC save, restore or skip there).
        // EXEC appears in the mask above, the narrowing, its skip and the
        // exit's restore.
        let exec = asm.lines().filter(|l| l.contains("exec")).count();
        assert_eq!(exec, 4, "{}:\n{asm}", target.isa_name());
    }
}

/// fuse_valu: each pair of dependent VALU instructions in fused_valu.mir is
/// one three-operand instruction (results equal to the interpreter's); a
/// literal operand is fused only on gfx11, whose VOP3 encodes one.
#[test]
fn uniform_compares_are_made_where_their_one_use_reads_scc() {
    let text = data_text("uniform_compares.mir");
    // Each compare both ways: u = -7 takes the branch, 4886718345 (not an
    // inline constant) is c2; v = 3 and 4 decide the divergent select.
    for (u, v) in [("-7", "3"), ("4886718345", "4"), ("0", "3")] {
        let spec = LaunchSpec::from_flags("64", "64", &["out=i32:zero:256".into()], &["out=@out".into(), format!("u=i64:{u}"), format!("v=i32:{v}")], &[]).unwrap();
        check_text("uniform_compares.mir", &text, &spec, false, false);
    }
    let module = mir::parse(&text).unwrap();
    for target in targets() {
        let (_, kernels) = compile_default(&module, &target);
        let asm = &kernels[0].asm;
        let count = |op: &str| asm.lines().filter(|l| l.split_whitespace().next() == Some(op)).count();
        let name = target.isa_name();
        assert_eq!(count("s_cmp_eq_u64"), 2, "{name}:\n{asm}");
        assert_eq!(count("s_cmp_lg_u64"), 1, "{name}:\n{asm}");
        assert!(!asm.contains("_u64_e64") && !asm.contains("_u64_e32"), "a uniform compare on the VALU, {name}:\n{asm}");
        let booleans = asm.lines().filter(|l| l.trim_start().starts_with("s_cselect_b32") && l.trim_end().ends_with(", 1, 0")).count();
        assert_eq!(booleans, 1, "{name}:\n{asm}");
    }
}

#[test]
fn gfx942_adds_64_bit_pairs_without_a_carry() {
    let text = data_text("add64_pairs.mir");
    // Values near 2^32 and 2^64, so the low halves carry.
    let data: Vec<String> = (0..128u64).map(|k| (k.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 0xffff_fff0) as i64).map(|v| v.to_string()).collect();
    let spec = LaunchSpec::from_flags("64", "64", &[format!("in=i64:{}", data.join(",")), "out=i64:zero:512".into()], &["in=@in".into(), "out=@out".into(), "u=4294967297".into()], &[]).unwrap();
    check_text("add64_pairs.mir", &text, &spec, false, false);
    let module = mir::parse(&text).unwrap();
    for target in targets() {
        let (_, kernels) = compile_default(&module, &target);
        let asm = &kernels[0].asm;
        let count = |op: &str| asm.lines().filter(|l| l.split_whitespace().next() == Some(op)).count();
        // x + u, x + y, y - 7, x - 12 and m + x.
        let expected = if target.isa_name().contains("gfx942") { 5 } else { 0 };
        assert_eq!(count("v_lshl_add_u64"), expected, "{}:\n{asm}", target.isa_name());
        // No calls, no spills: the count is the highest VGPR the code names
        // plus one (pair windows that no instruction touched not counted).
        // The simulator faults on a register beyond the descriptor's count,
        // so check_text above shows it is not too low.
        let highest = asm
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '[' || c == ':' || c == ']'))
            .filter_map(|w| {
                let n = w.strip_prefix("v[").and_then(|r| r.split(':').nth(1)).map(|h| h.trim_end_matches(']')).or_else(|| w.strip_prefix('v'))?;
                n.parse::<u32>().ok()
            })
            .max()
            .unwrap();
        assert_eq!(kernels[0].stats.vgprs, highest + 1, "{}:\n{asm}", target.isa_name());
    }
    // Every pair in place (no window copy), and both addresses the SGPR
    // base plus one shifted index (the global instructions' saddr form, no
    // 64-bit VGPR address): 4 VGPRs (v0 the index, v[2:3] the value), not
    // the 6 of two address pairs or the 10 that counting two reserved
    // windows gave. On gfx942 the sum (`v_lshl_add_u64`) replaces the
    // loaded pair in place (its result may share the registers of a source
    // that dies there): v[0:1], the index in v2: 3 (5 when the sum had a
    // pair of its own, 6 with the index pinned to v0). gfx1100, which aligns no
    // tuple, loads into v[0:1] and keeps the index in v2: 3 (4 before).
    // llc-22 -O2 on the same kernel: 4, 3 and 3.
    let text = "kernel @k(%in: ptr<global>, %out: ptr<global>, %u: i64) {\nentry:\n  %i = workitem_id x\n  %i64 = zext i32 %i to i64\n  %off = shl i64 %i64, 3\n  %p = ptradd %in, %off\n  %x = load i64 %p\n  %s = add i64 %x, %u\n  %q = ptradd %out, %off\n  store i64 %s, %q\n  ret\n}\n";
    let spec = LaunchSpec::from_flags("64", "64", &["in=i64:iota:64".into(), "out=i64:zero:64".into()], &["in=@in".into(), "out=@out".into(), "u=4294967295".into()], &[]).unwrap();
    check_text("pairs_in_place.mir", text, &spec, false, false);
    let module = mir::parse(text).unwrap();
    for target in targets() {
        let (_, kernels) = compile_default(&module, &target);
        let expected = if target.isa_name().contains("gfx942") {
            3
        } else if target.isa_name().contains("gfx1100") {
            3
        } else {
            4
        };
        assert_eq!(kernels[0].stats.vgprs, expected, "{}:\n{}", target.isa_name(), kernels[0].asm);
    }
}

#[test]
fn dependent_valu_pairs_fuse_into_three_operand_forms() {
    let text = data_text("fused_valu.mir");
    let spec = LaunchSpec::from_flags("64", "64", &["in=i32:iota:64".into(), "out=i32:zero:64".into()], &["in=@in".into(), "out=@out".into(), "u=i32:1234567".into()], &[]).unwrap();
    check_text("fused_valu.mir", &text, &spec, false, false);
    let module = mir::parse(&text).unwrap();
    for target in targets() {
        let (_, kernels) = compile_default(&module, &target);
        let asm = &kernels[0].asm;
        let count = |op: &str| asm.lines().filter(|l| l.split_whitespace().next() == Some(op)).count();
        let gfx11 = target.isa_name().contains("gfx11");
        for op in ["v_add3_u32", "v_lshl_or_b32", "v_and_or_b32", "v_or3_b32", "v_add_lshl_u32", "v_bfe_u32", "v_xad_u32"] {
            assert!(count(op) >= 1, "{}: no {op}:\n{asm}", target.isa_name());
        }
        // (a << 3) + b, (c << 2) + u (one SGPR), and on gfx11 (b << 1) + 100000.
        assert_eq!(count("v_lshl_add_u32"), if gfx11 { 3 } else { 2 }, "{}:\n{asm}", target.isa_name());
        assert_eq!(count("v_xor3_b32") > 0, gfx11, "{}:\n{asm}", target.isa_name());
    }
}

/// An atomic whose old value nothing reads takes the form that returns
/// nothing (`ds_add_u32`, `global_atomic_add` without glc/sc0), and a
/// global address that is an SGPR base plus a zero-extended index (shifted
/// where the index is known small enough) is the instruction's saddr form:
/// no 64-bit VGPR address, no multiply-add. The results are the
/// interpreter's; llc-22 selects the same forms for local_histogram's
/// OpenCL twin (tests/spirv), which the simulator runs like ours.
#[test]
fn unread_atomics_return_nothing_and_small_indices_address_from_sgprs() {
    let text = "kernel @k(%out: ptr<global>, %bins: ptr<global>) {
entry:
  %h = lds_slot 16, align 4
  %i = workitem_id x
  %b = and i32 %i, 3
  %b4 = shl i32 %b, 2
  %hb = ptradd %h, %b4
  %first = icmp ult i32 %i, 4
  brif %first, clear, counted
clear:
  store i32 0, %hb
  br counted
counted:
  barrier
  %ignored = atomic add i32 %hb, 1 relaxed workgroup
  barrier
  %count = load i32 %hb
  %i64 = zext i32 %i to i64
  %off = shl i64 %i64, 2
  %p = ptradd %out, %off
  %old = atomic add i32 %p, %count relaxed agent
  %w64 = zext i32 %b4 to i64
  %q = ptradd %bins, %w64
  %unread = atomic or i32 %q, %i relaxed agent
  %after = add i32 %old, 1000
  store i32 %after, %p
  ret
}
";
    let spec = LaunchSpec::from_flags("64", "64", &["out=i32:iota:64".into(), "bins=i32:zero:64".into()], &["out=@out".into(), "bins=@bins".into()], &[]).unwrap();
    check_text("unread_atomics.mir", text, &spec, false, false);
    let module = mir::parse(text).unwrap();
    for target in targets() {
        let (_, kernels) = compile_default(&module, &target);
        let asm = &kernels[0].asm;
        let lines = |op: &str| asm.lines().filter(|l| l.split_whitespace().next() == Some(op)).map(str::to_string).collect::<Vec<_>>();
        let name = target.isa_name();
        assert_eq!(lines("ds_add_u32").len(), 1, "{name}:\n{asm}");
        assert!(lines("ds_add_rtn_u32").is_empty(), "{name}:\n{asm}");
        // The add's old value is read (returns: glc on gfx90a and gfx1100,
        // sc0 on gfx942); the or's is not. Both address from an SGPR pair.
        let returned = if name.contains("gfx942") { "sc0" } else { "glc" };
        let add = lines(if name.contains("gfx1100") { "global_atomic_add_u32" } else { "global_atomic_add" });
        let or = lines(if name.contains("gfx1100") { "global_atomic_or_b32" } else { "global_atomic_or" });
        assert!(add.len() == 1 && add[0].contains(returned) && add[0].contains(", s["), "{name}:\n{asm}");
        assert!(or.len() == 1 && !or[0].contains(returned) && or[0].contains(", s["), "{name}:\n{asm}");
        assert!(lines("v_mad_u64_u32").is_empty() && lines("v_mad_i64_i32").is_empty(), "{name}:\n{asm}");
    }
}

/// `printf_buffer` in a kernel and in a device function it calls (which
/// reaches the hidden argument through the implicit-argument pointer): the
/// records written there and the header read back equal the interpreter's
/// on every target; the kernel's metadata lists the hidden argument where
/// llc-22 puts it (explicit arguments rounded to 8, plus 72) and the
/// module's format; the text round-trips.
#[test]
fn the_printf_buffer_is_reached_from_kernels_and_functions() {
    let text = r#"printf_format "1:2:4:4:item %d\\72 %d\\n"

func @put(%i: i32) noinline {
b0:
  %buf = printf_buffer
  %i64 = zext i32 %i to i64
  %at = mul i64 %i64, 12
  %at8 = add i64 %at, 8
  %rec = ptradd %buf, %at8
  store i32 1, %rec
  %p1 = ptradd %rec, 4
  store i32 %i, %p1
  %p2 = ptradd %rec, 8
  %i3 = mul i32 %i, 3
  store i32 %i3, %p2
  ret
}

kernel @k(%out: ptr<global>, %n: i32) {
b0:
  %i = workitem_id x
  call @put(%i)
  %buf = printf_buffer
  %size_at = ptradd %buf, 4
  %size = load i32 %size_at
  %i64 = zext i32 %i to i64
  %o = mul i64 %i64, 4
  %p = ptradd %out, %o
  %v = add i32 %size, %n
  store i32 %v, %p
  ret
}
"#;
    let module = mir::parse(text).unwrap();
    assert_eq!(module.printf_formats, vec!["1:2:4:4:item %d\\72 %d\\n".to_string()]);
    assert_eq!(mir::parse(&module.to_string()).unwrap().to_string(), module.to_string());
    let mut pb = vec!["0".to_string(); 8 + 3 * 64];
    pb[1] = (4 * pb.len()).to_string();
    let spec = LaunchSpec::from_json(&format!(
        r#"{{"grid":64,"block":64,"buffers":{{"out":{{"type":"i32","len":64}},"pb":{{"type":"i32","data":[{}]}}}},"args":{{"out":"@out","n":"5"}},"printf_buffer":"@pb"}}"#,
        pb.join(",")
    ))
    .unwrap();
    let want = mir::launch::run(&module, &spec).unwrap();
    assert_eq!(want.buffers[1].bits()[2 + 3 * 7..2 + 3 * 8], [1, 7, 21], "the interpreter's record of work-item 7");
    assert_eq!(want.buffers[0].bits()[0], 4 * 200 + 5);
    check_text("printf_buffer", text, &spec, false, None);
    for target in targets() {
        let (object, _) = compile_default(&module, &target);
        let co = codeobj::reader::read(&codeobj::write_hsaco(&object).unwrap()).unwrap();
        assert_eq!(co.metadata[0].printf, module.printf_formats);
        let args = &co.kernels[0].metadata.as_ref().unwrap().args;
        let printf = args.iter().find(|a| a.value_kind == codeobj::metadata::ValueKind::Hidden(codeobj::metadata::HiddenArg::PrintfBuffer));
        assert_eq!(printf.map(|a| (a.offset, a.size)), Some((16 + 72, 8)), "{}", target.isa_name());
    }
}

/// A kernel argument nothing reads is not loaded (selection loads every
/// argument at the kernel's start; machine_dce deletes the unread scalar
/// loads, at every level), as llc-22 -O2 loads only `%out` here: one
/// `s_load_dwordx2`. The stress benchmark's kernels carry such an argument.
#[test]
fn unread_kernel_arguments_are_not_loaded() {
    let text = "kernel @k(%out: ptr<global>, %n: i32, %m: i64) {\nentry:\n  %i = workitem_id x\n  %o = shl i32 %i, 2\n  %p = ptradd %out, %o\n  store i32 %i, %p\n  ret\n}\n";
    let spec = LaunchSpec::from_flags("64", "64", &["out=i32:zero:64".into()], &["out=@out".into(), "n=7".into(), "m=9".into()], &[]).unwrap();
    check_text("unread_arguments.mir", text, &spec, false, false);
    let module = mir::parse(text).unwrap();
    for target in targets() {
        for level in [OptLevel::O0, OptLevel::O2] {
            let options = Options { opt_level: level, ..Options::default() };
            let (_, kernels) = codegen::compile_module(&module, &target, CodeObjectVersion::V5, &options, &mut Report::default()).unwrap();
            let asm = &kernels[0].asm;
            let loads: Vec<&str> = asm.lines().map(str::trim).filter(|l| l.starts_with("s_load")).collect();
            assert_eq!(loads.len(), 1, "{} {level:?}:\n{asm}", target.isa_name());
            assert!(loads[0].contains(", 0x0") || loads[0].contains(", null"), "{} {level:?}: {}", target.isa_name(), loads[0]);
        }
    }
}

/// What flat_atomics.mir leaves in one area (global memory for `parity` 0,
/// the even lanes; LDS for 1), worked out here from the operations, apart
/// from the interpreter: the 16 header words, then the per-lane slots.
fn flat_atomics_area(parity: u32) -> Vec<i32> {
    let lanes: Vec<u32> = (0..64).filter(|l| l % 2 == parity).collect();
    let add64: u64 = lanes.iter().map(|&l| u64::from(l) << 34).sum();
    let umax64 = lanes.iter().map(|&l| u64::from(l) << 34).max().unwrap_or(0);
    let fmax = lanes.iter().map(|&l| f64::from(l)).fold(-1.0, f64::max).to_bits();
    let header: [u32; 16] = [
        1000 + lanes.iter().sum::<u32>(),
        1000 - 3 * lanes.len() as u32,
        lanes.iter().map(|&l| (37 * l % 61) as i32).fold(-5, i32::max) as u32,
        lanes.iter().map(|&l| 37 * l).fold(u32::MAX, u32::min),
        lanes.iter().fold(u32::MAX, |a, &l| a & !(1 << (l & 1))),
        lanes.iter().fold(0, |a, &l| a | 1 << (l % 31)),
        lanes.iter().fold(0, |a, &l| a ^ 37 * l),
        0,
        add64 as u32,
        (add64 >> 32) as u32,
        umax64 as u32,
        (umax64 >> 32) as u32,
        (lanes.iter().sum::<u32>() as f32).to_bits(),
        0,
        fmax as u32,
        (fmax >> 32) as u32,
    ];
    let slots = (0..64u32).map(|l| if l % 2 == parity { 7 } else { l as i32 });
    header.iter().map(|&w| w as i32).chain(slots).collect()
}

/// Atomics through flat pointers (flat_atomics.mir): each FLAT atomic
/// reaches global memory for the even lanes and LDS for the odd ones, for
/// every operation and width, compare-and-swap and the float atomics'
/// loops included. The final memory and each lane's exchange results are
/// also worked out by hand (flat_atomics_area), not only taken from the
/// interpreter.
#[test]
fn flat_atomics_reach_global_memory_and_lds() {
    let initial: Vec<String> = [1000, 1000, -5, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (-1.0f64).to_bits() as i64 >> 32].iter().map(|v| v.to_string()).chain((0..64).map(|l: i32| l.to_string())).collect();
    let spec = LaunchSpec::from_flags("64", "64", &[format!("g=i32:{}", initial.join(",")), "out=i32:zero:144".into()], &["g=@g".into(), "out=@out".into()], &[]).unwrap();
    let text = data_text("flat_atomics.mir");
    let want = mir::launch::run(&mir::parse(&text).unwrap(), &spec).unwrap();
    let strings = |v: Vec<i32>| v.into_iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let lds = flat_atomics_area(1);
    let by_hand_g = strings(flat_atomics_area(0));
    let g = want.buffers.iter().find(|b| b.name == "g").unwrap();
    assert_eq!(g.elements(), by_hand_g);
    let o = want.buffers.iter().find(|b| b.name == "out").unwrap();
    let exchanges: Vec<i32> = (0..64).map(|l: i32| l + ((l + 500) << 10) + ((l + 500) << 20)).collect();
    let by_hand_out = strings(exchanges.into_iter().chain(lds.iter().copied()).collect());
    assert_eq!(o.elements(), by_hand_out);
    check("flat_atomics.mir", &spec, false, false);
}

/// A flat atomic into private memory stops the simulator with the reason,
/// as the interpreter stops (the hardware's flat atomics do not reach
/// scratch; OpenCL and HIP leave such atomics undefined).
#[test]
fn flat_atomics_into_private_memory_are_reported() {
    let text = "kernel @k(%out: ptr<global>) {\nentry:\n  %s = stack_slot 4, align 4\n  store i32 1, %s\n  %f = addrspacecast ptr<private> %s to ptr\n  %v = atomic add i32 %f, 1\n  store i32 %v, %out\n  ret\n}\n";
    let module = mir::parse(text).unwrap();
    let spec = LaunchSpec::from_flags("1", "1", &["out=i32:zero:1".into()], &["out=@out".into()], &[]).unwrap();
    assert!(mir::launch::run(&module, &spec).is_err());
    for target in targets() {
        let (object, _) = compile_default(&module, &target);
        let hsaco = codeobj::write_hsaco(&object).unwrap();
        let e = amdgpu_cg::sim::run_launch(&hsaco, &spec).err().unwrap_or_else(|| panic!("{}: the simulator ran it", target.isa_name()));
        assert!(format!("{e}").contains("flat atomic into private memory"), "{}: {e}", target.isa_name());
    }
}

/// Vectors at a uniform address (uniform_vector_loads.mir): every element's
/// scalar load takes its offset in the instruction from one SGPR base, with
/// no 64-bit scalar add per element, and the 3-element vector from global
/// memory no write reaches is read by scalar loads too, not vector loads:
/// 9 element loads (the two constant vectors' 6 elements used, the global
/// one's 3) and no vector load, and the kernel computes what the
/// interpreter does.
#[test]
fn uniform_vector_loads_take_offsets_in_the_instruction() {
    let spec = LaunchSpec::from_flags(
        "64",
        "64",
        &["out=f32:zero:68".into(), "coef=f32:iota:16".into(), "rec=i32:5,1069547520,-2".into()],
        &["out=@out".into(), "coef=@coef".into(), "rec=@rec".into(), "n=1".into()],
        &[],
    )
    .unwrap();
    check("uniform_vector_loads.mir", &spec, false, false);
    let text = data_text("uniform_vector_loads.mir");
    let module = mir::parse(&text).unwrap();
    for target in targets() {
        let (_, kernels) = compile_default(&module, &target);
        let asm = &kernels.iter().find(|k| k.is_kernel).unwrap().asm;
        let lines: Vec<&str> = asm.lines().map(str::trim).collect();
        // The kernel arguments come from the kernarg segment's base, the
        // first scalar load's address; the elements from other bases.
        let first = lines.iter().find(|l| l.starts_with("s_load_")).unwrap();
        let kernarg = first.split(", ").nth(1).unwrap();
        let element_loads = lines.iter().filter(|l| (l.starts_with("s_load_dword ") || l.starts_with("s_load_b32 ")) && l.split(", ").nth(1) != Some(kernarg)).count();
        assert_eq!(element_loads, 9, "{}\n{asm}", target.isa_name());
        assert!(!lines.iter().any(|l| l.starts_with("global_load")), "{}: a vector load\n{asm}", target.isa_name());
        let carries = lines.iter().filter(|l| l.starts_with("s_addc_u32")).count();
        assert!(carries <= 1, "{}: {carries} 64-bit scalar adds (the index's only)\n{asm}", target.isa_name());
    }
}

/// Uniform 64-bit order compares (`slt`, `ult`, ... of values in SGPR pairs)
/// stay on the scalar unit: the borrow of `s_sub_u32`/`s_subb_u32` is the
/// unsigned order, flipped sign bits give the signed one. Every predicate
/// between eight values (equal and different high halves, both signs) and
/// against constants, one work-group per pair: the simulator equals the
/// interpreter on every target at -O0 and -O2, and no VALU compare is left.
#[test]
fn uniform_64_bit_compares_use_the_scalar_borrow() {
    let spec = LaunchSpec::from_flags("4096", "64", &["out=i32:zero:64".into()], &["out=@out".into()], &[]).unwrap();
    check("uniform_compare64.mir", &spec, false, false);
    let text = data_text("uniform_compare64.mir");
    let module = mir::parse(&text).unwrap();
    for target in targets() {
        let (_, kernels) = compile_default(&module, &target);
        let asm = &kernels[0].asm;
        assert!(!asm.contains("v_cmp"), "{}:\n{asm}", target.isa_name());
        assert!(asm.matches("s_subb_u32").count() >= 12, "{}:\n{asm}", target.isa_name());
    }
}

/// The VGPR whose lanes hold a calling device function's return address
/// sits below v32 where its callee leaves it alone; a `callconv(llvm)`
/// function saves it with every lane on (LLVM's callers keep values in the
/// lanes that are off at a call, which LLVM's convention has callees
/// preserve), one under our convention (which clobbers every lane of
/// v0-v31) does not. Both run as the interpreter says on every target.
#[test]
fn return_address_lanes_stay_below_v32_and_are_saved_under_llvms_convention() {
    let spec = LaunchSpec::from_flags("64", "64", &["out=i32:zero:64".into()], &["out=@out".into()], &[]).unwrap();
    let llvm = data_text("return_address_lanes.mir");
    let ours = llvm.replace("callconv(llvm) ", "");
    assert_ne!(llvm, ours);
    for (text, saves) in [(&llvm, true), (&ours, false)] {
        // A kernel's call to an LLVM-convention function clobbers every
        // register class, so at -O0 what lives across it spills.
        check_text("return_address_lanes.mir", text, &spec, saves, None);
        let module = mir::parse(text).unwrap();
        for target in targets() {
            let (_, kernels) = compile_default(&module, &target);
            let mid = kernels.iter().find(|k| k.name == "mid").unwrap();
            let lanes_vgpr = mid.asm.lines().find_map(|l| l.trim().strip_prefix("v_writelane_b32 v")).and_then(|rest| rest.split(',').next()).and_then(|n| n.parse::<u32>().ok()).unwrap();
            assert!(lanes_vgpr < 32, "{}:\n{}", target.isa_name(), mid.asm);
            let saved = mid.asm.lines().any(|l| l.contains("store_") && l.contains(&format!(" v{lanes_vgpr},")));
            let whole_wave = mid.asm.contains("saveexec_b64 s") && mid.asm.contains(", -1") || mid.asm.contains("saveexec_b32 s");
            assert_eq!((saved, saved && whole_wave), (saves, saves), "{}:\n{}", target.isa_name(), mid.asm);
            assert_eq!(mid.frame_bytes > 0, saves, "{}", target.isa_name());
        }
    }
}

/// A divergent pointer advanced by a uniform stride in a loop is one
/// `v_mad_u64_u32 p, s, stride, 64, p`: on gfx90a and gfx942 its result
/// may take the registers of the addend that dies there (llc-22 writes
/// such overlapping multiply-adds on gfx90a), so the pointer stays in its
/// pair with no copy on the back edge; gfx11 forbids the overlap, and no
/// multiply-add's result there shares a register with a source.
#[test]
fn a_pointer_advanced_in_a_loop_stays_in_place_where_the_target_allows() {
    let text = "kernel @k(%in: ptr<global>, %out: ptr<global>, %n: i32) {\nentry:\n  %i = workitem_id x\n  %i64 = zext i32 %i to i64\n  %off = shl i64 %i64, 2\n  %p0 = ptradd %in, %off\n  %n64 = zext i32 %n to i64\n  %stride = mul i64 %n64, 64\n  br loop(%p0, 0, 0.0)\nloop(%p: ptr<global>, %k: i32, %acc: f32):\n  %x = load f32 %p\n  %acc2 = fadd f32 %acc, %x\n  %p2 = ptradd %p, %stride\n  %k2 = add i32 %k, 1\n  %more = icmp ult i32 %k2, 4\n  brif %more, loop(%p2, %k2, %acc2), done\ndone:\n  %q = ptradd %out, %off\n  store f32 %acc2, %q\n  ret\n}\n";
    let spec = LaunchSpec::from_flags("64", "64", &["in=f32:iota:1024".into(), "out=f32:zero:64".into()], &["in=@in".into(), "out=@out".into(), "n=4".into()], &[]).unwrap();
    check_text("pointer_in_place.mir", text, &spec, false, false);
    let module = mir::parse(text).unwrap();
    for target in targets() {
        let (_, kernels) = compile_default(&module, &target);
        let asm = &kernels[0].asm;
        let name = target.isa_name();
        let mads: Vec<Vec<&str>> = asm
            .lines()
            .map(|l| l.split(|c: char| c == ',' || c.is_whitespace()).filter(|w| !w.is_empty()).collect::<Vec<_>>())
            .filter(|w| w.first() == Some(&"v_mad_u64_u32"))
            .collect();
        assert_eq!(mads.len(), 2, "{name}:\n{asm}");
        if name.contains("gfx11") {
            for m in &mads {
                let (dst, sources) = (m[1], &m[3..]);
                let lo: u32 = dst.trim_start_matches("v[").split(':').next().unwrap().parse().unwrap();
                let named = |r: &str| r.strip_prefix('v').and_then(|n| n.parse::<u32>().ok()).is_some_and(|n| n == lo || n == lo + 1);
                assert!(!sources.iter().any(|s| named(s) || *s == dst), "{name}: a result overlaps a source:\n{asm}");
            }
        } else {
            let advance = &mads[1];
            assert_eq!(advance[1], advance[5], "{name}: the pointer moves out of its pair:\n{asm}");
            assert!(!asm.lines().any(|l| l.trim_start().starts_with("v_mov_b32") && l.matches(", v").count() == 1 && !l.contains("0x")), "{name}: a VGPR copy:\n{asm}");
        }
    }
}

