//! Generated code checked by LLVM's tools, batched one process per target
//! (that `-S` re-assembles into the same code object is tests/listing_roundtrip.rs):
//! - llvm-objdump-22 disassembles the `.hsaco` into exactly our instructions;
//! - the relocatable form of modules with calls links with ld.lld-22 and runs.

use std::path::Path;
use std::process::Command;

use amdgpu_cg::codegen::{self, Options, Report};
use amdgpu_cg::codeobj::{self, CodeObjectTarget, CodeObjectVersion};
use amdgpu_cg::isa::{llvm_tools, Gpu, Target, WaveSize};
use amdgpu_cg::mir;

/// Every example, the register-pressure kernels that make it spill, and calls
/// (with stack arguments, by-reference copies, sret and saved VGPRs).
const EXAMPLES: [&str; 18] = [
    "examples/vector_add",
    "examples/saxpy",
    "examples/lds_reduction",
    "examples/matmul",
    "examples/divergent_loop",
    "tests/data/codegen/pressure_vgpr",
    "tests/data/codegen/pressure_sgpr",
    "examples/call",
    "tests/data/codegen/calls",
    "tests/data/codegen/call_aggregates",
    "examples/call_many",
    "tests/data/codegen/call_frames",
    "tests/data/codegen/nested_calls",
    "tests/data/codegen/stack_slots",
    "tests/data/codegen/large_frames",
    "tests/data/codegen/frame_edges",
    "tests/data/codegen/f16_arith",
    "tests/data/codegen/lds_write_pairs",
];

fn targets() -> Vec<(CodeObjectTarget, Vec<&'static str>)> {
    let mut t: Vec<(CodeObjectTarget, Vec<&'static str>)> =
        Gpu::ALL.iter().map(|&g| (CodeObjectTarget::new(Target::new(g)), vec![])).collect();
    t.push((CodeObjectTarget::new(Target::with_wave(Gpu::Gfx1100, WaveSize::W64).unwrap()), vec!["-mattr=+wavefrontsize64"]));
    t
}

/// The code object and every compiled function (kernels and device functions).
fn compile(name: &str, target: &CodeObjectTarget) -> (Vec<u8>, Vec<codegen::CompiledKernel>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("{name}.mir"));
    let module = mir::parse(&std::fs::read_to_string(path).unwrap()).unwrap();
    let (object, functions) =
        codegen::compile_module(&module, target, CodeObjectVersion::V5, &Options::default(), &mut Report::default())
            .unwrap_or_else(|d| panic!("{name} on {}: {d}", target.isa_name()));
    (codeobj::write_hsaco(&object).unwrap(), functions)
}

fn temp_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("amdgpu-cg-codegen-llvm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Our listing's instructions (labels and comments dropped, branch targets
/// reduced to the mnemonic).
fn our_instructions(asm: &str) -> Vec<String> {
    asm.lines()
        .filter(|l| l.starts_with("  "))
        .map(|l| {
            let l = l.trim();
            if l.contains(".L") {
                l.split_whitespace().next().unwrap().to_string()
            } else {
                without_call_offset(&l.split_whitespace().collect::<Vec<_>>().join(" "))
            }
        })
        .collect()
}

/// A call's PC-relative offset is a placeholder in the listing and the
/// relocated distance in the code object (the simulator tests check where the
/// calls land); both compare as the instruction without its literal.
fn without_call_offset(inst: &str) -> String {
    for prefix in ["s_add_u32 s30, s30,", "s_addc_u32 s31, s31,"] {
        if inst.starts_with(prefix) {
            return prefix.to_string();
        }
    }
    inst.to_string()
}

#[test]
fn objdump_shows_our_instructions() {
    let Some(objdump) = llvm_tools::require("llvm-objdump-22") else { return };
    let dir = temp_dir();
    for (target, attrs) in targets() {
        for name in EXAMPLES {
            let (hsaco, functions) = compile(name, &target);
            let path = dir.join(format!("{}.hsaco", functions[0].name));
            std::fs::write(&path, &hsaco).unwrap();
            let mattr: Vec<String> = attrs.iter().map(|a| a.replace("-mattr=", "--mattr=")).collect();
            let out = Command::new(&objdump)
                .args(["-d", &format!("--mcpu={}", target.target.gpu.name()), "--no-show-raw-insn", "--no-leading-addr"])
                .args(&mattr)
                .arg(&path)
                .output()
                .unwrap();
            assert!(out.status.success() && out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
            let text = String::from_utf8_lossy(&out.stdout);
            for function in &functions {
                // The function's instructions: lines after "<name>:" up to the padding.
                let body: Vec<String> = text
                    .lines()
                    .skip_while(|l| !l.ends_with(&format!("<{}>:", function.name)))
                    .skip(1)
                    .map(|l| l.split("//").next().unwrap().trim().to_string())
                    .filter(|l| !l.is_empty())
                    .take(our_instructions(&function.asm).len())
                    .map(|l| {
                        let mnemonic = l.split_whitespace().next().unwrap().to_string();
                        if mnemonic.starts_with("s_branch") || mnemonic.starts_with("s_cbranch") {
                            mnemonic
                        } else {
                            without_call_offset(&l.split_whitespace().collect::<Vec<_>>().join(" "))
                        }
                    })
                    .collect();
                assert_eq!(body, our_instructions(&function.asm), "{name}, @{} on {}", function.name, target.isa_name());
            }
        }
    }
}

/// The relocatable form of modules with calls (R_AMDGPU_REL32_LO/HI against the
/// callee) links with ld.lld-22 into a code object whose calls land: it runs on
/// the simulator with the interpreter's results, on every target.
#[test]
fn relocatable_calls_link_with_lld_and_run() {
    let Some(lld) = llvm_tools::require("ld.lld-22") else { return };
    let dir = temp_dir();
    let cases: [(&str, &str, &str, Vec<String>, Vec<String>); 2] = [
        (
            "examples/call",
            "128",
            "64",
            vec!["in=f32:iota:128".into(), "out=f32:zero:128".into()],
            vec!["in=@in".into(), "out=@out".into(), "k=3".into()],
        ),
        (
            "tests/data/codegen/calls",
            "16,8,1",
            "8,8,1",
            vec!["in=f32:iota:128".into(), "out=f32:zero:128".into(), "tags=i32:zero:128".into()],
            vec!["in=@in".into(), "out=@out".into(), "tags=@tags".into(), "k=3".into()],
        ),
    ];
    for (name, grid, block, buffers, args) in cases {
        let module = mir::parse(&std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("{name}.mir"))).unwrap()).unwrap();
        let spec = mir::launch::LaunchSpec::from_flags(grid, block, &buffers, &args, &[]).unwrap();
        let want = mir::launch::run(&module, &spec).unwrap();
        for (target, _) in targets() {
            let (object, _) = codegen::compile_module(&module, &target, CodeObjectVersion::V5, &Options::default(), &mut Report::default()).unwrap();
            let (obj, linked) = (dir.join("calls.o"), dir.join("calls.hsaco"));
            std::fs::write(&obj, codeobj::write_relocatable(&object).unwrap()).unwrap();
            let out = Command::new(&lld).arg("-shared").arg(&obj).arg("-o").arg(&linked).output().unwrap();
            assert!(out.status.success() && out.stderr.is_empty(), "{name} on {}: {}", target.isa_name(), String::from_utf8_lossy(&out.stderr));
            let (got, _) = amdgpu_cg::sim::run_launch(&std::fs::read(&linked).unwrap(), &spec).unwrap_or_else(|e| panic!("{name} on {}: {e}", target.isa_name()));
            for w in &want.buffers {
                let g = got.iter().find(|b| b.name == w.name).unwrap();
                assert_eq!(g.elements(), w.elements(), "{name} on {}: buffer {}", target.isa_name(), w.name);
            }
        }
    }
}
