//! Generated code checked by LLVM's tools, batched one process per target
//! (that `-S` re-assembles into the same code object is tests/listing_roundtrip.rs):
//! - llvm-objdump-22 disassembles the `.hsaco` into exactly our instructions;
//! - the relocatable form of modules with calls links with ld.lld-22 and runs;
//! - every gfx11 VOPD pair we form assembles with llvm-mc-22 into our bytes,
//!   and the pass's VOPD operand rules accept exactly what llvm-mc-22 does.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use amdgpu_cg::codegen::{self, Options, Report};
use amdgpu_cg::codeobj::{self, CodeObjectTarget, CodeObjectVersion};
use amdgpu_cg::isa::{self, llvm_tools, Gpu, Kind, Opcode, Operand, Target, WaveSize};
use amdgpu_cg::mir;

/// Every example, the register-pressure kernels that make it spill, and calls
/// (with stack arguments, by-reference copies, sret and saved VGPRs).
const EXAMPLES: [&str; 22] = [
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
    "tests/data/codegen/dual_issue",
    "tests/data/codegen/module_data",
    "tests/data/codegen/module_globals",
    "tests/data/codegen/module_addresses",
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
                // A relocated literal (a call's or a data address's) is the
                // relocation in the listing and the distance in the object:
                // both compare without it.
                let ours = our_instructions(&function.asm);
                let strip = |l: &str| l.rsplit_once(", ").map_or(l.to_string(), |(head, _)| head.to_string());
                let relocated: Vec<bool> = ours.iter().map(|l| l.contains("@rel32@")).collect();
                let body: Vec<String> = body.iter().zip(relocated.iter().chain(std::iter::repeat(&false))).map(|(l, &r)| if r { strip(l) } else { l.clone() }).collect();
                let ours: Vec<String> = ours.iter().map(|l| if l.contains("@rel32@") { strip(l) } else { l.clone() }).collect();
                assert_eq!(body, ours, "{name}, @{} on {}", function.name, target.isa_name());
            }
        }
    }
}

/// The relocatable form of modules with calls and module data
/// (R_AMDGPU_REL32_LO/HI against the callee or the data object) links with
/// ld.lld-22 into a code object whose calls land and whose data addresses
/// hold the data: it runs on the simulator with the interpreter's results, on
/// every target.
#[test]
fn relocatable_calls_link_with_lld_and_run() {
    let Some(lld) = llvm_tools::require("ld.lld-22") else { return };
    let dir = temp_dir();
    let cases: [(&str, &str, &str, Vec<String>, Vec<String>); 5] = [
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
        ("tests/data/codegen/module_data", "64", "64", vec!["out=f32:zero:64".into()], vec!["out=@out".into(), "n=6".into()]),
        ("tests/data/codegen/module_globals", "64", "64", vec!["out=i32:zero:128".into()], vec!["out=@out".into(), "n=1".into()]),
        // Addresses in data: our R_AMDGPU_ABS64 relocations become lld's
        // R_AMDGPU_RELATIVE64 ones, which the simulator's loader applies.
        ("tests/data/codegen/module_addresses", "64", "64", vec!["out=i32:zero:128".into()], vec!["out=@out".into()]),
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

/// `llvm-mc-22` for gfx1100 wave32 on `lines` (one instruction each): per
/// line, its encoding, or None where llvm-mc reports an error.
fn llvm_mc_gfx1100(mc: &Path, lines: &[String]) -> Vec<Option<Vec<u8>>> {
    let mut child = Command::new(mc)
        .args(["-triple", "amdgcn-amd-amdhsa", "-mcpu=gfx1100", "-mattr=+wavefrontsize32", "-show-encoding"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = lines.join("\n") + "\n";
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    let mut rejected = vec![false; lines.len()];
    for line in String::from_utf8_lossy(&out.stderr).lines() {
        let mut parts = line.splitn(4, ':');
        if let (Some("<stdin>"), Some(n), Some(_), Some(what)) = (parts.next(), parts.next(), parts.next(), parts.next()) {
            if what.trim_start().starts_with("error") {
                rejected[n.parse::<usize>().unwrap() - 1] = true;
            }
        }
    }
    let mut encodings = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once("; encoding: [").map(|(_, b)| b.trim_end_matches(']').split(',').map(|x| u8::from_str_radix(x.trim().trim_start_matches("0x"), 16).unwrap()).collect::<Vec<u8>>()))
        .collect::<Vec<_>>()
        .into_iter();
    rejected.iter().map(|&r| if r { None } else { encodings.next() }).collect()
}

/// Every VOPD pair the examples and codegen modules get on gfx1100 wave32
/// (dual_issue.mir is written to get many) is accepted by llvm-mc-22, which
/// rejects pairs that break the register-bank, parity, literal and
/// constant-bus rules, and assembles into the bytes we emit. The pairs cover
/// most VOPD operations, fmac/fmaak/fmamk (made from v_fma_f32) among them.
#[test]
fn llvm_mc_accepts_every_vopd_pair_we_form() {
    let Some(mc) = llvm_tools::require("llvm-mc-22") else { return };
    let target = CodeObjectTarget::new(Target::with_wave(Gpu::Gfx1100, WaveSize::W32).unwrap());
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<String> = EXAMPLES.iter().map(|n| n.to_string()).collect();
    for dir in ["examples", "tests/data/codegen"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            let name = format!("{dir}/{}", p.file_stem().unwrap().to_string_lossy());
            if p.extension().is_some_and(|x| x == "mir") && !name.ends_with("several_refusals") && !names.contains(&name) {
                names.push(name);
            }
        }
    }
    let (mut texts, mut ours, mut ops) = (Vec::new(), Vec::new(), std::collections::BTreeSet::new());
    let mut dual_issue_pairs = 0;
    for name in &names {
        let (_, functions) = compile(name, &target);
        for f in &functions {
            let mut rest = f.code.as_slice();
            while !rest.is_empty() {
                let (inst, len) = isa::decode(rest, target.target).unwrap();
                if let Some(y) = inst.vopd_y {
                    texts.push(isa::print(&inst, target.target));
                    ours.push(rest[..len].to_vec());
                    ops.extend([inst.op.info().name, y.info().name]);
                    dual_issue_pairs += usize::from(name.ends_with("dual_issue"));
                }
                rest = &rest[len..];
            }
        }
    }
    let theirs = llvm_mc_gfx1100(&mc, &texts);
    for ((text, ours), theirs) in texts.iter().zip(&ours).zip(&theirs) {
        assert_eq!(theirs.as_ref(), Some(ours), "`{text}`: llvm-mc-22's bytes (None: rejected) against ours");
    }
    assert!(dual_issue_pairs >= 12, "dual_issue.mir: {dual_issue_pairs} pairs");
    for op in ["v_dual_add_f32", "v_dual_mul_f32", "v_dual_sub_f32", "v_dual_max_f32", "v_dual_min_f32", "v_dual_mov_b32", "v_dual_fmac_f32", "v_dual_fmaak_f32", "v_dual_fmamk_f32", "v_dual_add_nc_u32", "v_dual_and_b32"] {
        assert!(ops.contains(op), "no {op} among the pairs formed: {ops:?}");
    }
}

/// The pass's operand rules (`vopd::meets_rules`) against llvm-mc-22's on
/// 3000 random pairs of the operations it forms, with sources drawn from a
/// few VGPRs (so banks and parities often collide), SGPRs, `vcc_lo`, inline
/// constants and two literals: the rules accept exactly what llvm-mc
/// accepts, and our encoder writes llvm-mc's bytes for every accepted one.
#[test]
fn vopd_rules_are_llvm_mcs() {
    let Some(mc) = llvm_tools::require("llvm-mc-22") else { return };
    let target = Target::with_wave(Gpu::Gfx1100, WaveSize::W32).unwrap();
    const OPS: [Opcode; 14] = [
        Opcode::v_dual_fmac_f32,
        Opcode::v_dual_fmaak_f32,
        Opcode::v_dual_fmamk_f32,
        Opcode::v_dual_mul_f32,
        Opcode::v_dual_add_f32,
        Opcode::v_dual_sub_f32,
        Opcode::v_dual_subrev_f32,
        Opcode::v_dual_mov_b32,
        Opcode::v_dual_cndmask_b32,
        Opcode::v_dual_max_f32,
        Opcode::v_dual_min_f32,
        Opcode::v_dual_add_nc_u32,
        Opcode::v_dual_lshlrev_b32,
        Opcode::v_dual_and_b32,
    ];
    let mut state = 0x0dd_ba11_cafe_f00du64;
    let mut below = |n: u64| {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    };
    let literals = [0x4120_0000u32, 0x1234_5678];
    let mut insts = Vec::new();
    while insts.len() < 3000 {
        let (x, y) = (OPS[below(11) as usize], OPS[below(14) as usize]);
        let mut uses = Vec::new();
        for op in [x, y] {
            for k in op.info().uses(target.gpu) {
                uses.push(match k {
                    Kind::KImm => Operand::Literal(literals[below(2) as usize]),
                    Kind::Mask => Operand::Reg(isa::Reg::vcc(1)),
                    Kind::Vgpr(_) => Operand::v(below(12) as u16, 1),
                    _ => match below(20) {
                        0..=10 => Operand::v(below(12) as u16, 1),
                        11..=13 => Operand::s(below(3) as u16, 1),
                        14 => Operand::Reg(isa::Reg::vcc(1)),
                        15..=16 => Operand::Const([128, 129, 242][below(3) as usize]),
                        _ => Operand::Literal(literals[below(2) as usize]),
                    },
                });
            }
        }
        insts.push(isa::Inst::vopd(x, y, vec![Operand::v(below(12) as u16, 1), Operand::v(below(12) as u16, 1)], uses));
    }
    let texts: Vec<String> = insts.iter().map(|i| isa::print(i, target)).collect();
    let theirs = llvm_mc_gfx1100(&mc, &texts);
    let mut accepted = 0;
    for ((inst, text), theirs) in insts.iter().zip(&texts).zip(&theirs) {
        let ours = codegen::vopd::meets_rules(inst, target.gpu);
        assert_eq!(ours, theirs.is_some(), "`{text}`: our rules say {ours}, llvm-mc-22 says {}", theirs.is_some());
        if let Some(bytes) = theirs {
            assert_eq!(&isa::encode_words(inst, target).unwrap().iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>(), bytes, "`{text}`");
            accepted += 1;
        }
    }
    // Both outcomes are well represented.
    assert!(accepted > 300 && accepted < 2700, "{accepted} of 3000 accepted");
}
