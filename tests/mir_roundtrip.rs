//! The MIR text format round-trips: parse(print(m)) == m for every example and for
//! random well-formed kernels, printing is idempotent, and no input makes the
//! parser or verifier panic.

mod common;

use amdgpu_cg::mir::{self, verify::verify};
use proptest::prelude::*;

fn examples() -> Vec<(String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "mir"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap()))
        .collect();
    out.sort();
    assert!(out.len() >= 6, "the six example kernels of the foundation issue");
    out
}

#[test]
fn examples_parse_verify_and_round_trip() {
    for (name, text) in examples() {
        let module = mir::parse(&text).unwrap_or_else(|d| panic!("{name}: {d}"));
        verify(&module).unwrap_or_else(|ds| panic!("{name}: {:?}", ds));
        let printed = module.to_string();
        let reparsed = mir::parse(&printed).unwrap_or_else(|d| panic!("{name} printed: {d}\n{printed}"));
        assert!(reparsed == module, "{name}: parse(print(m)) != m");
        assert_eq!(reparsed.to_string(), printed, "{name}: printing is not idempotent");
    }
}

#[test]
fn structural_equality_sees_differences() {
    // The equality used above must be able to fail: change one constant.
    let (_, text) = examples().into_iter().find(|(n, _)| n == "saxpy.mir").unwrap();
    let a = mir::parse(&text).unwrap();
    let b = mir::parse(&text.replace("mul i32 %i, 4", "mul i32 %i, 8")).unwrap();
    assert!(a != b);
    let c = mir::parse(&text.replace("%offset", "%off")).unwrap();
    assert!(a != c, "value names are part of the module");
}

#[test]
fn calling_conventions_round_trip_and_differ() {
    let text = "func @f(%x: inreg i32) -> i32 callconv(llvm) {\nentry:\n  ret %x\n}\n";
    let m = mir::parse(text).unwrap();
    assert_eq!(m.functions[0].conv, mir::CallConv::Llvm);
    let printed = m.to_string();
    assert!(printed.contains(") -> i32 callconv(llvm) {"), "{printed}");
    assert_eq!(mir::parse(&printed).unwrap(), m);
    let ours = mir::parse(&text.replace(" callconv(llvm)", "")).unwrap();
    assert_eq!(ours.functions[0].conv, mir::CallConv::AmdgpuCg);
    assert!(ours != m, "the convention is part of the function");
    assert_eq!(mir::parse(&text.replace("llvm", "amdgpu_cg")).unwrap(), ours);
}

#[test]
fn inline_hints_round_trip_and_differ() {
    let text = "func @f(%x: i32) -> i32 callconv(llvm) noinline {\nentry:\n  ret %x\n}\n\nfunc @g(%x: i32) -> i32 alwaysinline {\nentry:\n  ret %x\n}\n";
    let m = mir::parse(text).unwrap();
    assert_eq!(m.functions[0].inline, mir::InlineHint::Never);
    assert_eq!(m.functions[1].inline, mir::InlineHint::Always);
    let printed = m.to_string();
    assert!(printed.contains(") -> i32 callconv(llvm) noinline {") && printed.contains(") -> i32 alwaysinline {"), "{printed}");
    assert_eq!(mir::parse(&printed).unwrap(), m);
    let plain = mir::parse(&text.replace(" noinline", "").replace(" alwaysinline", "")).unwrap();
    assert_eq!(plain.functions[0].inline, mir::InlineHint::Auto);
    assert!(plain != m, "the hint is part of the function");
    // The builder sets it too.
    let mut b = mir::builder::FunctionBuilder::device("h", None);
    b.inline_hint(mir::InlineHint::Never);
    let entry = b.create_block("entry");
    b.switch_to(entry);
    b.ret(None);
    let built = b.finish().unwrap();
    assert!(built.to_string().starts_with("func @h() noinline {"), "{built}");
    // Kernels are never called: the hint is refused with a message.
    let err = mir::parse("kernel @k() noinline {\nentry:\n  ret\n}\n").unwrap_err();
    assert!(err.message.contains("kernels are never called"), "{}", err.message);
}

#[test]
fn constants_round_trip_exactly() {
    let text = "func @f(%h: f16, %d: f64, %b: i8) -> f32 {\nentry:\n  %a = fadd f16 %h, 0x7e01\n  %c = fadd f16 %h, 65504.0\n  %e = fadd f64 %d, 0.1\n  %g = fadd f64 %d, -0.0\n  %k = fadd f64 %d, 0x7ff0000000000001\n  %m = add i8 %b, 255\n  %n = add i8 %b, -128\n  %q = fmul f32 1e-45, -inf\n  ret %q\n}\n";
    let module = mir::parse(text).unwrap();
    verify(&module).unwrap();
    let printed = module.to_string();
    assert!(mir::parse(&printed).unwrap() == module, "{printed}");
    // 255 as i8 is -1; the smallest f32 subnormal survives; the NaN payloads survive.
    assert!(printed.contains("add i8 %b, -1"), "{printed}");
    assert!(printed.contains("1e-45"), "{printed}");
    assert!(printed.contains("0x7e01") && printed.contains("0x7ff0000000000001"), "{printed}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("MANGLE_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(1000), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_kernels_verify_and_round_trip(module in common::mirgen::arb_kernel()) {
        if let Err(ds) = verify(&module) {
            panic!("generated kernel does not verify: {:?}\n{module}", ds);
        }
        let printed = module.to_string();
        let reparsed = mir::parse(&printed).map_err(|d| TestCaseError::fail(format!("{d}\n{printed}")))?;
        prop_assert!(reparsed == module, "parse(print(m)) != m for\n{}", printed);
    }

    #[test]
    fn mangled_text_never_panics(index in 0usize..7, edits in prop::collection::vec((any::<u16>(), any::<u8>(), 0u8..3), 1..8)) {
        let (_, text) = &examples()[index];
        let mut bytes = text.clone().into_bytes();
        for (at, byte, kind) in edits {
            let at = usize::from(at) % (bytes.len() + 1);
            const ALPHABET: &[u8] = b"%@(){}<>,:=-0123456789xiabf; \n";
            let byte = ALPHABET[usize::from(byte) % ALPHABET.len()];
            match kind {
                0 if at < bytes.len() => { bytes.remove(at); }
                1 => bytes.insert(at, byte),
                _ if at < bytes.len() => bytes[at] = byte,
                _ => {}
            }
        }
        let text = String::from_utf8_lossy(&bytes);
        if let Ok(module) = mir::parse(&text) {
            let verified = verify(&module).is_ok();
            let _ = module.to_string();
            // What verifies goes through the code generator: an error is fine,
            // a panic is not.
            if verified {
                let target = amdgpu_cg::codeobj::CodeObjectTarget::new(amdgpu_cg::isa::Target::new(amdgpu_cg::isa::Gpu::Gfx90a));
                let _ = amdgpu_cg::codegen::compile_module(
                    &module,
                    &target,
                    amdgpu_cg::codeobj::CodeObjectVersion::V5,
                    &amdgpu_cg::codegen::Options::default(),
                    &mut amdgpu_cg::codegen::Report::default(),
                );
            }
        }
    }
}

#[test]
fn generator_covers_control_flow_and_both_pools() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = common::mirgen::arb_kernel();
    let (mut loops, mut diamonds, mut floats, mut max_blocks) = (0, 0, 0, 0);
    for _ in 0..100 {
        let module = strategy.new_tree(&mut runner).unwrap().current();
        let text = module.to_string();
        loops += usize::from(text.contains("\nloop"));
        diamonds += usize::from(text.contains("\nthen"));
        floats += usize::from(text.contains("fadd") || text.contains("fmul") || text.contains("fma"));
        max_blocks = max_blocks.max(module.functions[0].blocks.len());
    }
    assert!(loops > 10 && diamonds > 10 && floats > 10, "loops {loops}, diamonds {diamonds}, floats {floats}");
    assert!(max_blocks >= 8, "largest kernel has only {max_blocks} blocks");
}

/// Module data prints as it parses (bytes as hex, all-zero objects as
/// `zeros N`), and a difference in its bytes or alignment is a difference.
#[test]
fn module_data_round_trips_and_differs() {
    let text = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/codegen/module_data.mir")).unwrap();
    let module = mir::parse(&text).unwrap();
    verify(&module).unwrap();
    assert_eq!(module.data.len(), 4);
    assert_eq!(module.data("small").unwrap().bytes, vec![1, 2, 3, 4, 5]);
    assert_eq!(module.data("nothing").unwrap().bytes, vec![0; 24]);
    let printed = module.to_string();
    assert!(printed.contains("data @nothing, align 8, zeros 24\n"), "{printed}");
    let reparsed = mir::parse(&printed).unwrap();
    assert!(reparsed == module);
    let mut other = module.clone();
    other.data[1].bytes[4] = 6;
    assert!(other != module);
    let mut other = module.clone();
    other.data[0].align = 8;
    assert!(other != module);
}

/// Writable data prints `writable` and reparses to the same module; its
/// `data_addr` is a `ptr<global>`, and the verifier rejects a `data_addr`
/// whose address space disagrees with its data (as the builder API could
/// make one).
#[test]
fn writable_data_round_trips_and_its_address_is_global() {
    use amdgpu_cg::abi::{AddrSpace, Type};
    let text = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/codegen/module_globals.mir")).unwrap();
    let module = mir::parse(&text).unwrap();
    verify(&module).unwrap();
    assert!(module.data.iter().all(|d| d.writable));
    let printed = module.to_string();
    assert!(printed.contains("data @total, align 4, writable, zeros 4\n"), "{printed}");
    assert!(mir::parse(&printed).unwrap() == module);
    let kernel = module.function("k").unwrap();
    let addresses: Vec<&mir::Inst> = kernel.blocks.iter().flat_map(|b| &b.insts).filter(|i| matches!(i.op, mir::Op::DataAddr { .. })).collect();
    assert!(!addresses.is_empty());
    for inst in &addresses {
        assert_eq!(*kernel.value_type(inst.result.unwrap()), Type::Ptr(AddrSpace::Global));
    }
    let mut other = module.clone();
    other.data[0].writable = false;
    assert!(other != module);
    let errors = verify(&other).unwrap_err();
    assert!(errors.iter().any(|e| e.message.contains("'data_addr' of '@bias' is a ptr<global>, but the data's address is a ptr<constant>")), "{errors:?}");
}

/// Data holding addresses: `addr` clauses print as they parse (an addend
/// only when not zero), reparse to the same module, and are part of the
/// module's identity; each malformed clause is refused at its own text.
#[test]
fn data_addresses_round_trip_and_bad_ones_are_located() {
    let text = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/codegen/module_addresses.mir")).unwrap();
    let module = mir::parse(&text).unwrap();
    verify(&module).unwrap();
    let ptrs = module.data("ptrs").unwrap();
    assert_eq!(ptrs.addrs.iter().map(|a| (a.offset, a.target.as_str(), a.addend)).collect::<Vec<_>>(), vec![(0, "table", 0), (8, "table", 12)]);
    let printed = module.to_string();
    assert!(printed.contains("data @ptrs, align 8, writable, zeros 16, addr 0 @table, addr 8 @table + 12\n"), "{printed}");
    assert!(printed.contains("data @me, align 8, writable, zeros 8, addr 0 @me\n"), "{printed}");
    assert!(mir::parse(&printed).unwrap() == module);
    let mut other = module.clone();
    other.data.iter_mut().find(|d| d.name == "p").unwrap().addrs[0].addend = 4;
    assert!(other != module);
    // The verifier checks modules the builder API makes the same way.
    let changes: Vec<(Box<dyn Fn(&mut mir::Data)>, &str)> = vec![
        (Box::new(|d| d.addrs[0].target = "nowhere".into()), "'@nowhere', which is not the module's data"),
        (Box::new(|d| d.addrs[0].offset = 4), "does not fit in its 8 bytes"),
        (Box::new(|d| d.bytes[3] = 1), "are not zero"),
        (Box::new(|d| d.addrs[0].addend = 17), "beyond the end of '@table' (16 bytes)"),
    ];
    for (change, message) in changes {
        let mut bad = module.clone();
        change(bad.data.iter_mut().find(|d| d.name == "p").unwrap());
        let errors = verify(&bad).unwrap_err();
        assert!(errors.iter().any(|e| e.message.contains("data '@p'") && e.message.contains(message)), "{message}: {errors:?}");
    }
    // The `+8` spelling without spaces reads the same.
    let tight = "data @t, align 4, bytes \"0100000002000000\"\ndata @q, align 8, zeros 8, addr 0 @t+4\n";
    assert_eq!(mir::parse(tight).unwrap().data("q").unwrap().addrs[0].addend, 4);

    let kernel = "kernel @k() {\nentry:\n  ret\n}\n";
    for (data, message, at) in [
        ("data @q, align 8, zeros 8, addr 0 @nowhere", "'addr' of '@nowhere', which is not the module's data", "0 @nowhere"),
        ("data @q, align 8, zeros 8, addr 4 @t", "does not fit in data of 8 bytes", "4"),
        ("data @q, align 8, bytes \"0100000000000000\", addr 0 @t", "must be zero", "0 @t"),
        ("data @q, align 8, zeros 16, addr 0 @t, addr 4 @t", "overlaps the one at offset 0", "4 @t"),
        ("data @q, align 8, zeros 8, addr 0 @t + 9", "beyond the end of '@t' (8 bytes)", "0 @t + 9"),
        ("data @q, align 8, zeros 8, addr", "expected the byte offset of an address", ""),
        ("data @q, align 8, zeros 8, zeros 4", "expected 'addr OFFSET @NAME'", ""),
    ] {
        let text = format!("data @t, align 4, zeros 8\n{data}\n{kernel}");
        let e = match mir::parse(&text) {
            Ok(_) => panic!("{data}: parsed"),
            Err(e) => e,
        };
        assert!(e.message.contains(message), "{data}: {}", e.message);
        if !at.is_empty() {
            assert_eq!(&text[e.span.range()], at, "{data}: {}", e.message);
        }
    }
}
