//! The simulator's strictness checks bite: a kernel with one `s_waitcnt` removed by
//! hand, hazards without their `s_nop`, out-of-bounds accesses, undecodable bytes.
//! The kernels are clang-22 builds of tests/data/sim (see sim_reference.rs), patched.

use std::path::Path;
use std::process::Command;

use amdgpu_cg::isa::{self, Gpu, Inst, Opcode, Operand, Target};
use amdgpu_cg::sim::{ErrorKind, SimError, Simulator};

const GPUS: [&str; 3] = ["gfx90a", "gfx942", "gfx1100"];

fn compile(source: &str, gpu: &str) -> Option<Vec<u8>> {
    let clang = isa::llvm_tools::require("clang-22")?;
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sim");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sim_checks");
    std::fs::create_dir_all(&dir).unwrap();
    // Tests run in parallel and may compile the same source: one file per call.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let out = dir.join(format!("{}-{gpu}-{call}.hsaco", source.trim_end_matches(".cl")));
    let ok = Command::new(clang)
        .args(["-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa", "-nogpulib", "-O2", "-mcode-object-version=5"])
        .args(["-cl-fp32-correctly-rounded-divide-sqrt", "-Wno-everything"])
        .arg(format!("-mcpu={gpu}"))
        .arg("-I")
        .arg(&data)
        .arg("-o")
        .arg(&out)
        .arg(data.join(source))
        .status()
        .expect("run clang-22")
        .success();
    assert!(ok, "clang-22 failed on {source} for {gpu}");
    Some(std::fs::read(out).unwrap())
}

/// File offset and bytes of a kernel's code.
fn kernel_code(hsaco: &[u8], kernel: &str) -> (usize, Vec<u8>, Target) {
    let co = amdgpu_cg::codeobj::read(hsaco).unwrap();
    let k = co.kernels.iter().find(|k| k.name == kernel).unwrap();
    let pos = hsaco.windows(k.code.len()).position(|w| w == k.code.as_slice()).unwrap();
    (pos, k.code.clone(), co.target.expect("a modelled target").target)
}

/// Decodes `code` into (offset, instruction).
fn listing(code: &[u8], t: Target) -> Vec<(usize, Inst, usize)> {
    let mut v = Vec::new();
    let mut o = 0;
    while o < code.len() {
        let Ok(d) = amdgpu_cg::sim::decode::decode(&code[o..], t) else { break };
        let (i, n) = (d.inst.clone(), d.len as usize);
        v.push((o, i.clone(), n));
        if i.op == Opcode::s_endpgm {
            break;
        }
        o += n;
    }
    v
}

fn nop(t: Target) -> Vec<u8> {
    let mut b = Vec::new();
    isa::encode(&Inst::sopp(Opcode::s_nop, 0), t, &mut b).unwrap();
    b
}

fn run_vadd(hsaco: &[u8], n: u32, buf_elems: usize) -> Result<(), SimError> {
    let mut sim = Simulator::new();
    let co = sim.load(hsaco)?;
    let a = sim.alloc("a", vec![0; 4 * buf_elems]);
    let b = sim.alloc("b", vec![0; 4 * buf_elems]);
    let c = sim.alloc("c", vec![0; 4 * buf_elems]);
    let mut args = Vec::new();
    for p in [a, b, c] {
        args.extend_from_slice(&p.to_le_bytes());
    }
    args.extend_from_slice(&(n as i32).to_le_bytes());
    sim.dispatch(&co, "vadd", [n, 1, 1], [64, 1, 1], &args).map(|_| ())
}

/// Replaces the first `s_waitcnt` that waits on `counter` ("vm" or "lgkm") with
/// `s_nop 0`; returns the patched code object and the removed instruction's text.
fn remove_waitcnt(hsaco: &[u8], counter: &str) -> (Vec<u8>, String) {
    let (pos, code, t) = kernel_code(hsaco, "vadd");
    for (o, i, n) in listing(&code, t) {
        if i.op != Opcode::s_waitcnt || !matches!(amdgpu_cg::sim::decode::sem_of(i.op), Some(amdgpu_cg::sim::Sem::N(_))) {
            continue;
        }
        let w = isa::Waitcnt::decode(i.imm, t.gpu.generation()).unwrap();
        let hit = match counter {
            "vm" => w.vm.is_some(),
            _ => w.lgkm.is_some(),
        };
        if hit {
            let mut out = hsaco.to_vec();
            assert_eq!(n, 4);
            out[pos + o..pos + o + 4].copy_from_slice(&nop(t));
            return (out, isa::print(&i, t));
        }
    }
    panic!("no s_waitcnt on {counter} in vadd");
}

#[test]
fn removing_a_waitcnt_is_reported() {
    for gpu in GPUS {
        let Some(hsaco) = compile("vadd.cl", gpu) else { return };
        run_vadd(&hsaco, 256, 256).unwrap_or_else(|e| panic!("{gpu}: unpatched vadd fails: {e}"));
        for counter in ["vm", "lgkm"] {
            let (patched, removed) = remove_waitcnt(&hsaco, counter);
            let err = run_vadd(&patched, 256, 256).expect_err("the missing s_waitcnt must be reported");
            eprintln!("{gpu}, removed `{removed}`: {err}");
            assert_eq!(err.kind, ErrorKind::Waitcnt, "{gpu}: {err}");
            assert!(err.message.contains("missing s_waitcnt"), "{gpu}: {err}");
            let load = if counter == "vm" { "_load_" } else { "s_load" };
            assert!(err.message.contains(load), "{gpu}: {err}");
            assert!(err.at.as_deref().unwrap_or("").starts_with("vadd+0x"), "{gpu}: {err}");
        }
    }
}

#[test]
fn out_of_bounds_access_is_reported() {
    for gpu in GPUS {
        let Some(hsaco) = compile("vadd.cl", gpu) else { return };
        // n = 300 elements but the buffers hold 256.
        let err = run_vadd(&hsaco, 300, 256).expect_err("out of bounds");
        assert_eq!(err.kind, ErrorKind::Memory, "{gpu}: {err}");
        assert!(err.message.contains("out-of-bounds"), "{gpu}: {err}");
    }
}

#[test]
fn undecodable_bytes_name_the_address() {
    for gpu in GPUS {
        let Some(hsaco) = compile("vadd.cl", gpu) else { return };
        let (pos, _, _) = kernel_code(&hsaco, "vadd");
        let mut patched = hsaco.clone();
        patched[pos..pos + 4].copy_from_slice(&0xffff_ffffu32.to_le_bytes());
        let err = run_vadd(&patched, 64, 64).expect_err("bad bytes");
        assert!(matches!(err.kind, ErrorKind::Decode | ErrorKind::Unimplemented), "{gpu}: {err}");
        assert!(err.to_string().contains("vadd+0x0"), "{gpu}: {err}");
    }
}

/// Overwrites vadd's entry with `insts` followed by `s_endpgm`.
fn patch_entry(hsaco: &[u8], insts: &[Inst]) -> Vec<u8> {
    let (pos, code, t) = kernel_code(hsaco, "vadd");
    let mut bytes = Vec::new();
    for i in insts {
        isa::encode(i, t, &mut bytes).unwrap();
    }
    isa::encode(&Inst::sopp(Opcode::s_endpgm, 0), t, &mut bytes).unwrap();
    assert!(bytes.len() <= code.len());
    let mut out = hsaco.to_vec();
    out[pos..pos + bytes.len()].copy_from_slice(&bytes);
    out
}

fn with_nops(seq: &[Inst], at: usize, n: u16) -> Vec<Inst> {
    let mut v = seq[..at].to_vec();
    if n > 0 {
        v.push(Inst::sopp(Opcode::s_nop, n - 1));
    }
    v.extend_from_slice(&seq[at..]);
    v
}

#[test]
fn hazards_are_reported_and_satisfied_by_s_nop() {
    for gpu in ["gfx90a", "gfx942"] {
        let Some(hsaco) = compile("vadd.cl", gpu) else { return };
        // Kernarg pointer: s[4:5] on gfx90a (after the scratch V#), s[0:1] on gfx942.
        let ka = if gpu == "gfx90a" { 4 } else { 0 };
        // VALU writes s[10:11] -> global_load reads them as its SGPR base: 5 wait states.
        let vmem = vec![
            Inst::new(Opcode::v_mov_b32, vec![Operand::v(1, 1)], vec![Operand::s(ka, 1)]),
            Inst::new(Opcode::v_mov_b32, vec![Operand::v(2, 1)], vec![Operand::s(ka + 1, 1)]),
            Inst::new(Opcode::v_mov_b32, vec![Operand::v(0, 1)], vec![Operand::Const(128)]),
            Inst::new(Opcode::v_readfirstlane_b32, vec![Operand::s(10, 1)], vec![Operand::v(1, 1)]),
            Inst::new(Opcode::v_readfirstlane_b32, vec![Operand::s(11, 1)], vec![Operand::v(2, 1)]),
            Inst::new(Opcode::global_load_dword, vec![Operand::v(3, 1)], vec![Operand::v(0, 1), Operand::s(10, 2)]),
            Inst::sopp(Opcode::s_waitcnt, 0),
        ];
        // VALU writes VCC -> v_div_fmas reads it: 4 wait states.
        let fmas = vec![
            Inst::new(Opcode::v_cmp_eq_u32, vec![Operand::Reg(isa::Reg::vcc(2))], vec![Operand::v(0, 1), Operand::v(0, 1)]),
            Inst::new(Opcode::v_div_fmas_f32, vec![Operand::v(1, 1)], vec![Operand::v(0, 1), Operand::v(0, 1), Operand::v(0, 1)]),
        ];
        // VALU writes s2 -> v_readlane uses it as the lane select: 4 wait states.
        let lane = vec![
            Inst::new(Opcode::v_readfirstlane_b32, vec![Operand::s(2, 1)], vec![Operand::v(0, 1)]),
            Inst::new(Opcode::v_readlane_b32, vec![Operand::s(3, 1)], vec![Operand::v(0, 1), Operand::s(2, 1)]),
        ];
        let cases: Vec<(&str, Vec<Inst>, usize, u16)> = vec![("vmem", vmem, 5, 5), ("div_fmas", fmas, 1, 4), ("readlane", lane, 1, 4)];
        for (name, seq, at, need) in cases {
            let err = run_vadd(&patch_entry(&hsaco, &with_nops(&seq, at, need - 1)), 64, 64).expect_err(name);
            eprintln!("{gpu} {name}: {err}");
            assert_eq!(err.kind, ErrorKind::Hazard, "{gpu} {name}: {err}");
            run_vadd(&patch_entry(&hsaco, &with_nops(&seq, at, need)), 64, 64).unwrap_or_else(|e| panic!("{gpu} {name} with s_nop: {e}"));
        }
    }
    // gfx942: a transcendental result read by the next VALU needs 1 wait state.
    if let Some(hsaco) = compile("vadd.cl", "gfx942") {
        let seq = vec![
            Inst::new(Opcode::v_rcp_f32, vec![Operand::v(1, 1)], vec![Operand::v(0, 1)]),
            Inst::new(Opcode::v_add_f32, vec![Operand::v(2, 1)], vec![Operand::v(1, 1), Operand::v(1, 1)]),
        ];
        let err = run_vadd(&patch_entry(&hsaco, &seq), 64, 64).expect_err("trans hazard");
        assert_eq!(err.kind, ErrorKind::Hazard, "{err}");
        run_vadd(&patch_entry(&hsaco, &with_nops(&seq, 1, 1)), 64, 64).unwrap();
    }
    // gfx942: VALU writes VCC -> VALU reads it (v_cndmask): 2 wait states; VALU
    // writes a VGPR -> v_readfirstlane reads it: 1.
    if let Some(hsaco) = compile("vadd.cl", "gfx942") {
        let vcc = Operand::Reg(isa::Reg::vcc(2));
        let cases: Vec<(&str, Vec<Inst>, u16)> = vec![
            (
                "valu-vcc-valu",
                vec![
                    Inst::new(Opcode::v_cmp_eq_u32, vec![vcc], vec![Operand::v(0, 1), Operand::v(0, 1)]),
                    Inst::new(Opcode::v_cndmask_b32, vec![Operand::v(1, 1)], vec![Operand::v(0, 1), Operand::v(0, 1), vcc]),
                ],
                2,
            ),
            (
                "valu-vgpr-readfirstlane",
                vec![
                    Inst::new(Opcode::v_mov_b32, vec![Operand::v(1, 1)], vec![Operand::Const(129)]),
                    Inst::new(Opcode::v_readfirstlane_b32, vec![Operand::s(2, 1)], vec![Operand::v(1, 1)]),
                ],
                1,
            ),
        ];
        for (name, seq, need) in cases {
            let err = run_vadd(&patch_entry(&hsaco, &with_nops(&seq, 1, need - 1)), 64, 64).expect_err(name);
            assert_eq!(err.kind, ErrorKind::Hazard, "gfx942 {name}: {err}");
            run_vadd(&patch_entry(&hsaco, &with_nops(&seq, 1, need)), 64, 64).unwrap_or_else(|e| panic!("gfx942 {name} with s_nop: {e}"));
        }
    }
    // gfx1100: clang's saxpy with its `s_waitcnt_depctr va_vdst(0)` (after v_rcp_f32,
    // before the VALU that reads the result) replaced by s_nop 0.
    if let Some(hsaco) = compile("saxpy.cl", "gfx1100") {
        let (pos, code, t) = kernel_code(&hsaco, "saxpy");
        let (o, _, _) = listing(&code, t)
            .into_iter()
            .find(|(o, _, _)| amdgpu_cg::sim::decode::decode(&code[*o..], t).is_ok_and(|d| d.text.starts_with("s_waitcnt_depctr")))
            .expect("an s_waitcnt_depctr in clang's gfx1100 saxpy");
        let mut patched = hsaco.clone();
        patched[pos + o..pos + o + 4].copy_from_slice(&nop(t));
        let mut sim = Simulator::new();
        let co = sim.load(&patched).unwrap();
        let x = sim.alloc("x", vec![0; 4 * 64]);
        let mut args = 1.5f32.to_le_bytes().to_vec();
        args.extend_from_slice(&[0; 4]);
        for _ in 0..3 {
            args.extend_from_slice(&x.to_le_bytes());
        }
        args.extend_from_slice(&64i32.to_le_bytes());
        let err = sim.dispatch(&co, "saxpy", [64, 1, 1], [64, 1, 1], &args).expect_err("trans-use hazard");
        eprintln!("gfx1100, removed s_waitcnt_depctr: {err}");
        assert_eq!(err.kind, ErrorKind::Hazard, "{err}");
    }
    let _ = Gpu::Gfx90a;
}

#[test]
fn uninitialised_reads_can_be_flagged() {
    let Some(hsaco) = compile("vadd.cl", "gfx942") else { return };
    // v5 is never written before this read.
    let seq = vec![Inst::new(Opcode::v_add_u32, vec![Operand::v(1, 1)], vec![Operand::v(0, 1), Operand::v(5, 1)])];
    let patched = patch_entry(&hsaco, &seq);
    let mut sim = Simulator::new();
    sim.options.check_uninit = true;
    let co = sim.load(&patched).unwrap();
    let err = sim.dispatch(&co, "vadd", [64, 1, 1], [64, 1, 1], &[0u8; 28]).expect_err("uninit");
    assert_eq!(err.kind, ErrorKind::Uninitialized, "{err}");
    // The unpatched kernel reads nothing uninitialised.
    let mut sim = Simulator::new();
    sim.options.check_uninit = true;
    let co = sim.load(&hsaco).unwrap();
    let a = sim.alloc("a", vec![0; 256]);
    let mut args = Vec::new();
    for _ in 0..3 {
        args.extend_from_slice(&a.to_le_bytes());
    }
    args.extend_from_slice(&64i32.to_le_bytes());
    sim.dispatch(&co, "vadd", [64, 1, 1], [64, 1, 1], &args).unwrap();
}

#[test]
fn command_line_form() {
    let Some(hsaco) = compile("vadd.cl", "gfx942") else { return };
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sim_checks/vadd-cli.hsaco");
    std::fs::write(&path, hsaco).unwrap();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let out = amdgpu_cg::sim::sim_command(
        path.to_str().unwrap(),
        Some("vadd"),
        None,
        "70",
        "64",
        &s(&["a=f32:iota:70", "b=f32:fill:0.5:70", "c=f32:fill:0:70"]),
        &s(&["arg0=@a", "arg1=@b", "arg2=@c", "arg3=70"]),
        &s(&["c"]),
        false,
    )
    .unwrap();
    assert!(out.starts_with("c: f32[70] = [0.5, 1.5, 2.5,"), "{out}");
    assert!(out.contains("69.5]"), "{out}");
    assert!(out.contains("instructions") && out.contains("waves"), "{out}");
}

mod no_panic {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]
        /// Random words in place of vadd's code: the simulator returns a result or an
        /// error, and never panics.
        #[test]
        fn random_code_never_panics(words in proptest::collection::vec(any::<u32>(), 1..24), gpu in 0usize..3) {
            let gpu = GPUS[gpu];
            let Some(hsaco) = cached(gpu) else { return Ok(()) };
            let (pos, code, _) = kernel_code(&hsaco, "vadd");
            let mut patched = hsaco.clone();
            for (k, w) in words.iter().enumerate().take(code.len() / 4) {
                patched[pos + 4 * k..pos + 4 * k + 4].copy_from_slice(&w.to_le_bytes());
            }
            let mut sim = Simulator::new();
            sim.options.max_instructions = 2000;
            let co = sim.load(&patched).unwrap();
            let a = sim.alloc("a", vec![0; 256]);
            let mut args = Vec::new();
            for _ in 0..3 {
                args.extend_from_slice(&a.to_le_bytes());
            }
            args.extend_from_slice(&64i32.to_le_bytes());
            let _ = sim.dispatch(&co, "vadd", [128, 1, 1], [64, 1, 1], &args);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
        /// Random sequences of valid instructions (the isa crate's representative forms
        /// of every table entry) in place of vadd's code: no panic, whatever they do.
        #[test]
        fn random_instructions_never_panic(picks in proptest::collection::vec(any::<u32>(), 1..20), gpu in 0usize..3) {
            let gpu = GPUS[gpu];
            let Some(hsaco) = cached(gpu) else { return Ok(()) };
            let (pos, code, t) = kernel_code(&hsaco, "vadd");
            let corpus = isa::samples::representative_for(t);
            let mut bytes = Vec::new();
            for p in &picks {
                let i = &corpus[*p as usize % corpus.len()];
                let mut b = Vec::new();
                isa::encode(i, t, &mut b).unwrap();
                if bytes.len() + b.len() + 4 > code.len() {
                    break;
                }
                bytes.extend(b);
            }
            isa::encode(&Inst::sopp(Opcode::s_endpgm, 0), t, &mut bytes).unwrap();
            let mut patched = hsaco.clone();
            patched[pos..pos + bytes.len()].copy_from_slice(&bytes);
            for check_uninit in [false, true] {
                let mut sim = Simulator::new();
                sim.options.max_instructions = 2000;
                sim.options.check_uninit = check_uninit;
                let co = sim.load(&patched).unwrap();
                let a = sim.alloc("a", vec![0; 256]);
                let mut args = Vec::new();
                for _ in 0..3 {
                    args.extend_from_slice(&a.to_le_bytes());
                }
                args.extend_from_slice(&64i32.to_le_bytes());
                let _ = sim.dispatch(&co, "vadd", [128, 1, 1], [64, 1, 1], &args);
            }
        }
    }

    fn cached(gpu: &str) -> Option<Vec<u8>> {
        use std::sync::Mutex;
        static CACHE: Mutex<Vec<(String, Vec<u8>)>> = Mutex::new(Vec::new());
        let mut c = CACHE.lock().unwrap();
        if let Some((_, b)) = c.iter().find(|(g, _)| g == gpu) {
            return Some(b.clone());
        }
        let b = compile("vadd.cl", gpu)?;
        c.push((gpu.to_string(), b.clone()));
        Some(b)
    }
}

#[test]
fn removing_a_barrier_is_reported_as_an_lds_race() {
    for gpu in GPUS {
        let Some(hsaco) = compile("reduce.cl", gpu) else { return };
        let (pos, code, t) = kernel_code(&hsaco, "reduce");
        let run = |bytes: &[u8]| -> Result<(), SimError> {
            let mut sim = Simulator::new();
            let co = sim.load(bytes)?;
            let input = sim.alloc("in", (0..1024u32).flat_map(|v| v.to_le_bytes()).collect());
            let out = sim.alloc("out", vec![0; 16]);
            let mut args = input.to_le_bytes().to_vec();
            args.extend_from_slice(&out.to_le_bytes());
            sim.dispatch(&co, "reduce", [1024, 1, 1], [256, 1, 1], &args).map(|_| ())
        };
        run(&hsaco).unwrap_or_else(|e| panic!("{gpu}: unpatched reduce fails: {e}"));
        let (o, _, _) = listing(&code, t).into_iter().find(|(_, i, _)| i.op == Opcode::s_barrier).expect("an s_barrier");
        let mut patched = hsaco.clone();
        patched[pos + o..pos + o + 4].copy_from_slice(&nop(t));
        let err = run(&patched).expect_err("the missing barrier must be reported");
        eprintln!("{gpu}, removed the first s_barrier: {err}");
        assert_eq!(err.kind, ErrorKind::Race, "{gpu}: {err}");
    }
}

#[test]
fn registers_beyond_the_descriptor_allocation_are_reported() {
    for gpu in GPUS {
        let Some(hsaco) = compile("vadd.cl", gpu) else { return };
        let seq = vec![Inst::new(Opcode::v_mov_b32, vec![Operand::v(200, 1)], vec![Operand::Const(128)])];
        let err = run_vadd(&patch_entry(&hsaco, &seq), 64, 64).expect_err("v200 is not allocated");
        assert_eq!(err.kind, ErrorKind::Allocation, "{gpu}: {err}");
        assert!(err.message.contains("v200"), "{gpu}: {err}");
    }
}

/// Writable module data lives in the loaded code object: a second dispatch
/// of tests/data/codegen/module_globals.mir reads what the first stored
/// (its counter starts at 64, so no work-item sees 63 arrivals before it and
/// none writes the total), and a store into read-only data (`.rodata`,
/// reached through `addrspacecast`) is a memory fault naming the code object.
#[test]
fn writable_data_persists_across_dispatches_and_read_only_data_faults() {
    use amdgpu_cg::codegen::{self, Options, Report};
    use amdgpu_cg::codeobj::{self, CodeObjectTarget, CodeObjectVersion};
    use amdgpu_cg::mir;
    let compile_mir = |text: &str, gpu: Gpu| {
        let module = mir::parse(text).unwrap();
        let (object, _) = codegen::compile_module(&module, &CodeObjectTarget::new(Target::new(gpu)), CodeObjectVersion::V5, &Options::default(), &mut Report::default()).unwrap();
        codeobj::write_hsaco(&object).unwrap()
    };
    let globals = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/codegen/module_globals.mir")).unwrap();
    let read_only = "data @ro, align 4, bytes \"01000000\"\n\nkernel @k() {\nentry:\n  %c = data_addr @ro\n  %g = addrspacecast ptr<constant> %c to ptr<global>\n  store i32 7, %g\n  ret\n}\n";
    for gpu in Gpu::ALL {
        let mut sim = Simulator::new();
        let co = sim.load(&compile_mir(&globals, gpu)).unwrap();
        let out = sim.alloc("out", vec![0; 4 * 128]);
        let mut args = out.to_le_bytes().to_vec();
        args.extend_from_slice(&1i32.to_le_bytes());
        let mut totals = Vec::new();
        for _ in 0..2 {
            sim.dispatch(&co, "k", [64, 1, 1], [64, 1, 1], &args).unwrap();
            let bytes = sim.read(out).unwrap();
            let words: Vec<i32> = bytes.chunks(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect();
            // out[2i+1] = (the total if this work-item arrived last, else -1) + @bias[4] (1000 after the first work-item's store).
            totals.push(words.iter().skip(1).step_by(2).filter(|&&w| w != 999).copied().collect::<Vec<i32>>());
        }
        assert_eq!(totals[0], vec![64 + 1000], "{gpu}: first dispatch");
        assert!(totals[1].is_empty(), "{gpu}: second dispatch: {:?}", totals[1]);

        let mut sim = Simulator::new();
        let co = sim.load(&compile_mir(read_only, gpu)).unwrap();
        let err = sim.dispatch(&co, "k", [1, 1, 1], [1, 1, 1], &[]).expect_err("a store into .rodata");
        assert_eq!(err.kind, ErrorKind::Memory, "{gpu}: {err}");
        assert!(err.message.contains("store to read-only 'code object'"), "{gpu}: {err}");
    }
}

/// gfx11's true16 `v_mov_b16_e32` (clang-22 moves a by-value struct's bytes
/// with it; the isa table has no 16-bit register halves, so the simulator
/// decodes it outside the table): every operand form llvm-mc-22 encodes
/// decodes to llvm-mc's own text, with the halves and lengths it encoded.
#[test]
fn v_mov_b16_decodes_as_llvm_mc_encodes_it() {
    let Some(mc) = isa::llvm_tools::require("llvm-mc-22") else { return };
    let forms = [
        "v_mov_b16_e32 v5.l, v10.l",
        "v_mov_b16_e32 v15.l, v15.h",
        "v_mov_b16_e32 v12.h, 0",
        "v_mov_b16_e32 v3.h, s7",
        "v_mov_b16_e32 v1.l, 0x1234",
        "v_mov_b16_e32 v127.h, v0.h",
        "v_mov_b16_e32 v2.l, -5",
        "v_mov_b16_e32 v2.l, 1.0",
        "v_mov_b16_e32 v9.h, 64",
    ];
    let mut child = Command::new(mc)
        .args(["-arch=amdgcn", "-mcpu=gfx1100", "-show-encoding"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), forms.join("\n").as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| l.contains("encoding:")).collect();
    assert_eq!(lines.len(), forms.len(), "{text}");
    let target = Target::new(Gpu::Gfx1100);
    for line in lines {
        let (asm, enc) = line.split_once(';').unwrap();
        let bytes: Vec<u8> = enc.trim().trim_start_matches("encoding: [").trim_end_matches(']').split(',').map(|b| u8::from_str_radix(b.trim_start_matches("0x"), 16).unwrap()).collect();
        let d = amdgpu_cg::sim::decode::decode(&bytes, target).unwrap_or_else(|e| panic!("{asm}: {e}"));
        assert_eq!(d.len as usize, bytes.len(), "{asm}");
        let ours = d.text.trim_end_matches(" (extra)");
        let normalise = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(normalise(ours), normalise(asm), "{line}");
    }
}
