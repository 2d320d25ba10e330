//! Register-level conformance of calls (issue 8, 6b), checked on the simulator
//! with register snapshots:
//! - at a callee's first instruction every argument piece is in the register
//!   or stack slot `abi::assign` names for the amdgpu-cg convention (VGPR and stack pieces in every
//!   active lane), the packed work-item id is where the convention puts it, and
//!   s[30:31] holds the address right after the caller's `s_swappc_b64`;
//! - at the callee's `s_setpc_b64` every register the convention preserves
//!   (s0-s3, s32 and up, v32 and up in the active lanes) and EXEC hold their
//!   entry values.
//!
//! Half of the probes call a helper function themselves (a nested call); every
//! third probe uses LLVM's convention (`callconv(llvm)`), checked against
//! `abi::assign(.., Convention::Llvm, ..)` and LLVM's preserved registers.
//!
//! Signatures are random (seeded): 1-10 parameters of i32, f32, i64, f64 in
//! VGPRs and i32, i64, f32 `inreg`, and one in three with 25-44 of them, which
//! overflow v0-v31 and s4-s29: stack pieces are read from the wave's private
//! memory at the entry SP plus their offset.

use std::cell::RefCell;
use std::rc::Rc;

use amdgpu_cg::abi::{self, Convention, ImplicitInput, Location, RegKind};
use amdgpu_cg::codegen::{self, Options, Report};
use amdgpu_cg::codeobj::{self, CodeObjectTarget, CodeObjectVersion};
use amdgpu_cg::isa::{self, Opcode, Target, WaveSize};
use amdgpu_cg::mir::{self, launch::LaunchSpec};
use amdgpu_cg::sim::{self, Snapshot, Watch};
use object::{Object, ObjectSymbol};

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

/// Parameter kinds: (MIR type, inreg).
const KINDS: [(&str, bool); 7] = [("i32", false), ("f32", false), ("i64", false), ("f64", false), ("i32", true), ("i64", true), ("f32", true)];

/// The uniform kernel argument every inreg value is derived from.
const U: i32 = 11;

/// The i32 seed of parameter `j` in local work-item `t` (inreg: uniform).
fn seed(j: usize, inreg: bool, t: u32) -> i32 {
    if inreg {
        U + 7 * (j as i32 + 1)
    } else {
        1000 * (j as i32 + 1) + t as i32
    }
}

/// The dwords of parameter `j` of type `ty` for local work-item `t`.
fn dwords(j: usize, ty: &str, inreg: bool, t: u32) -> Vec<u32> {
    let s = seed(j, inreg, t);
    match ty {
        "i32" => vec![s as u32],
        "f32" => vec![(s as f32).to_bits()],
        "f64" => {
            let b = (s as f64).to_bits();
            vec![b as u32, (b >> 32) as u32]
        }
        _ => {
            let v = (s as i64).wrapping_mul(0x1_0000_0001) as u64;
            vec![v as u32, (v >> 32) as u32]
        }
    }
}

fn module_text(rng: &mut Rng, conv: Convention) -> (String, Vec<(&'static str, bool)>) {
    // One signature in three has 25-44 parameters: VGPR and SGPR pieces
    // overflow to the stack (and the packed work-item id with them).
    let count = if rng.below(3) == 0 { 25 + rng.below(20) } else { 1 + rng.below(10) };
    let params: Vec<(&'static str, bool)> = (0..count).map(|_| KINDS[rng.below(KINDS.len() as u64) as usize]).collect();
    let decl: Vec<String> = params.iter().enumerate().map(|(j, (ty, inreg))| format!("%a{j}: {}{ty}", if *inreg { "inreg " } else { "" })).collect();
    // The callee reads the work-item ids (so the packed id is passed) and
    // folds every argument into its result, so it has registers to keep
    // away from what the caller preserves.
    let mut text = format!(
        "func @probe({}) -> i32{} noinline {{\nentry:\n  %x = workitem_id x\n  %y = workitem_id y\n  %y16 = mul i32 %y, 16\n  %t = add i32 %x, %y16\n",
        decl.join(", "),
        if conv == Convention::Llvm { " callconv(llvm)" } else { "" }
    );
    let mut acc = "t".to_string();
    for (j, (ty, _)) in params.iter().enumerate() {
        match *ty {
            "i32" => text.push_str(&format!("  %c{j} = mul i32 %a{j}, 3\n")),
            "f32" => text.push_str(&format!("  %c{j} = fptosi f32 %a{j} to i32\n")),
            "f64" => text.push_str(&format!("  %c{j} = fptosi f64 %a{j} to i32\n")),
            _ => text.push_str(&format!("  %h{j} = lshr i64 %a{j}, 7\n  %c{j} = trunc i64 %h{j} to i32\n")),
        }
        text.push_str(&format!("  %acc{j} = xor i32 %{acc}, %c{j}\n"));
        acc = format!("acc{j}");
    }
    // One probe in two calls a helper itself: its prologue and epilogue
    // must then keep what the convention preserves (the return address and
    // the SGPR spill VGPR above v31 included).
    if rng.below(2) == 0 {
        text.push_str(&format!("  %helped = call @helper(%{acc})\n  %after_helper = xor i32 %helped, %{acc}\n"));
        acc = "after_helper".to_string();
    }
    text.push_str(&format!("  ret %{acc}\n}}\n\n"));
    text.push_str("func @helper(%v: i32) -> i32 noinline {\nentry:\n  %w = mul i32 %v, 13\n  %l = workitem_id x\n  %r = add i32 %w, %l\n  ret %r\n}\n\n");
    text.push_str("kernel @k(%out: ptr<global>, %u: i32) {\nentry:\n  %x = workitem_id x\n  %y = workitem_id y\n  %y16 = mul i32 %y, 16\n  %t = add i32 %x, %y16\n");
    let mut args = Vec::new();
    for (j, (ty, inreg)) in params.iter().enumerate() {
        if *inreg {
            text.push_str(&format!("  %s{j} = add i32 %u, {}\n", 7 * (j + 1)));
        } else {
            text.push_str(&format!("  %s{j} = add i32 %t, {}\n", 1000 * (j + 1)));
        }
        match *ty {
            "i32" => text.push_str(&format!("  %p{j} = add i32 %s{j}, 0\n")),
            "f32" => text.push_str(&format!("  %p{j} = sitofp i32 %s{j} to f32\n")),
            "f64" => text.push_str(&format!("  %p{j} = sitofp i32 %s{j} to f64\n")),
            _ => text.push_str(&format!("  %w{j} = sext i32 %s{j} to i64\n  %p{j} = mul i64 %w{j}, 4294967297\n")),
        }
        args.push(format!("%p{j}"));
    }
    text.push_str(&format!(
        "  %r = call @probe({})\n  %offset = mul i32 %t, 4\n  %dst = ptradd %out, %offset\n  store i32 %r, %dst\n  ret\n}}\n",
        args.join(", ")
    ));
    (text, params)
}

/// Device addresses of the instructions of `symbol` with opcode `op`.
fn addresses_of(hsaco: &[u8], symbol: &str, op: Opcode, target: Target) -> Vec<u64> {
    let file = object::File::parse(hsaco).unwrap();
    let sym = file.symbols().find(|s| s.name() == Ok(symbol)).unwrap_or_else(|| panic!("no symbol {symbol}"));
    let text = file.section_by_name(".text").unwrap();
    use object::ObjectSection;
    let data = text.data().unwrap();
    let start = (sym.address() - text.address()) as usize;
    let code = &data[start..start + sym.size() as usize];
    let mut at = 0;
    let mut found = Vec::new();
    while at < code.len() {
        let (inst, n) = isa::decode(&code[at..], target).unwrap();
        if inst.op == op {
            found.push(sim::CODE_BASE + sym.address() + at as u64);
        }
        at += n;
    }
    found
}

fn targets() -> Vec<CodeObjectTarget> {
    CodeObjectTarget::all_configurations()
}

#[test]
fn arguments_arrive_where_the_abi_says_and_preserved_registers_survive() {
    let spec = LaunchSpec::from_flags("16,4,1", "16,4,1", &["out=i32:zero:64".into()], &["out=@out".into(), format!("u={U}")], &[]).unwrap();
    let mut rng = Rng(0x5eed_ab1c_0ffe_e123);
    let mut checked_pieces = 0;
    let mut stack_pieces = 0;
    for case in 0..30 {
        // Every third probe uses LLVM's convention (callconv(llvm)).
        let conv = if case % 3 == 2 { Convention::Llvm } else { Convention::AmdgpuCg };
        let (text, params) = module_text(&mut rng, conv);
        let module = mir::parse(&text).unwrap();
        mir::verify::verify(&module).unwrap();
        let probe = module.function("probe").unwrap();
        let mut sig = abi::Signature::new(
            probe.params.iter().map(|p| abi::Param { ty: probe.value_type(p.value).clone(), inreg: p.inreg, is_self: false }).collect(),
            probe.ret.clone(),
        );
        sig.uses = Some(vec![ImplicitInput::WorkitemId]);
        for target in targets() {
            let t = target.target;
            let what = format!("case {case} on {}\n{text}", target.isa_name());
            let assignment = abi::assign(&sig, conv, t).unwrap();
            let (object, _) = codegen::compile_module(&module, &target, CodeObjectVersion::V5, &Options::default(), &mut Report::default())
                .unwrap_or_else(|d| panic!("{what}: {d}"));
            let hsaco = codeobj::write_hsaco(&object).unwrap();
            let entry = addresses_of(&hsaco, "probe", Opcode::s_setpc_b64, t);
            let probe_start = {
                let file = object::File::parse(&*hsaco).unwrap();
                sim::CODE_BASE + file.symbols().find(|s| s.name() == Ok("probe")).unwrap().address()
            };
            let returns = entry;
            let swappc = addresses_of(&hsaco, "k", Opcode::s_swappc_b64, t);
            assert_eq!(swappc.len(), 1, "{what}");
            let watch = Rc::new(RefCell::new(Watch { addresses: [vec![probe_start], returns.clone()].concat(), hits: Vec::new() }));
            let options = sim::Options { watch: Some(watch.clone()), ..sim::Options::default() };
            sim::run_launch_with(&hsaco, &spec, &options).unwrap_or_else(|e| panic!("{what}: {e}"));
            let hits = watch.borrow().hits.clone();
            let entries: Vec<&Snapshot> = hits.iter().filter(|h| h.pc == probe_start).collect();
            let waves = if t.wave == WaveSize::W64 { 1 } else { 2 };
            assert_eq!(entries.len(), waves, "{what}");
            for e in entries {
                let ret = hits.iter().find(|h| returns.contains(&h.pc) && h.wave == e.wave).unwrap_or_else(|| panic!("{what}: no return"));
                // The return address: right after the caller's s_swappc_b64.
                assert_eq!(u64::from(e.sgpr[30]) | u64::from(e.sgpr[31]) << 32, swappc[0] + 4, "{what}");
                let active: Vec<u32> = (0..e.lanes).filter(|l| e.exec >> l & 1 == 1).collect();
                assert_eq!(active.len() as u32, e.lanes, "{what}: every lane is active at the call");
                // A stack piece is at the entry SP plus its offset, per lane: SP is
                // a per-lane offset on flat scratch and a wave-level offset above
                // the wave's scratch offset (s33) on buffer scratch.
                let sp_lane = if t.gpu.has_architected_flat_scratch() {
                    u64::from(e.sgpr[32])
                } else {
                    u64::from(e.sgpr[32] - e.sgpr[33]) / u64::from(e.lanes)
                };
                let read = |loc: Location, lane: u32| -> u32 {
                    match loc {
                        Location::Vgpr(n) => e.v(n, lane),
                        Location::Sgpr(n) => e.sgpr[n as usize],
                        Location::Stack { offset, size } => {
                            e.private(lane, sp_lane + u64::from(offset), size as usize).unwrap_or_else(|| panic!("{what}: {loc:?} outside private memory")) as u32
                        }
                    }
                };
                for arg in &assignment.args {
                    let (ty, inreg) = params[arg.index];
                    for lane in &active {
                        let local = e.wave * e.lanes + lane;
                        let want = dwords(arg.index, ty, inreg, local);
                        for (k, piece) in arg.pieces.iter().enumerate() {
                            let got = read(piece.loc, *lane);
                            if !piece.loc.is_reg() {
                                stack_pieces += 1;
                            }
                            assert_eq!(got, want[k], "{what}: argument {} piece '{}' at {:?}, lane {lane}", arg.index, piece.path, piece.loc);
                            checked_pieces += 1;
                        }
                    }
                }
                let id = assignment.implicit.iter().find(|i| i.input == ImplicitInput::WorkitemId).expect("the probe reads work-item ids");
                for lane in &active {
                    let local = e.wave * e.lanes + lane;
                    assert_eq!(read(id.pieces[0], *lane) & 0x3fff_ffff, (local % 16) | (local / 16) << 10, "{what}: packed work-item id, lane {lane}");
                }
                // Preserved registers at the return.
                assert_eq!(ret.exec, e.exec, "{what}: EXEC");
                for s in 0..e.sgpr.len().min(106) as u16 {
                    if abi::is_preserved(conv, RegKind::Sgpr, s) {
                        assert_eq!(ret.sgpr[s as usize], e.sgpr[s as usize], "{what}: s{s} not preserved");
                    }
                }
                for v in 0..(e.vgpr.len() / e.lanes as usize) as u16 {
                    if abi::is_preserved(conv, RegKind::Vgpr, v) {
                        for lane in &active {
                            assert_eq!(ret.v(v, *lane), e.v(v, *lane), "{what}: v{v} lane {lane} not preserved");
                        }
                    }
                }
            }
        }
    }
    assert!(checked_pieces > 10_000, "{checked_pieces}");
    assert!(stack_pieces > 1_000, "{stack_pieces}");
    eprintln!("{checked_pieces} argument pieces checked in their ABI locations, {stack_pieces} of them on the stack");
}
