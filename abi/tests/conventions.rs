//! One test per decision of docs/abi.md ("Resolutions"): each pins a rule that
//! the reference text left open or stated inconsistently. Expected values are
//! derived by hand from the rule, not copied from `assign`'s output.

use amdgpu_abi::conv::{hw_reg_preserved, needs_emergency_spill_slot, HwReg};
use amdgpu_abi::{
    assign, is_preserved, register_set, AbiError, Assignment, Convention, ImplicitInput, Location, RegKind, Signature,
};
use amdgpu_isa::target::{Gpu, Target};
use Location::{Sgpr, Stack, Vgpr};

fn cg(sig: &str) -> Assignment {
    assign(&Signature::parse(sig).unwrap(), Convention::AmdgpuCg, Target::new(Gpu::Gfx90a)).unwrap()
}

fn locs(a: &Assignment, arg: usize) -> Vec<Location> {
    a.args[arg].pieces.iter().map(|p| p.loc).collect()
}

fn n_i32(n: usize) -> String {
    vec!["i32"; n].join(", ")
}

#[test]
fn basic_vgpr_and_sgpr_arguments() {
    // Issue example: i32 v0, f64 v1:v2, inreg i64 s4:s5, {i32, f32, i64} (16 bytes,
    // decomposed) v3 v4 v5:v6, result f32 v0, work-item id right after: v7.
    let a = cg("fn(i32, f64, inreg i64, {i32, f32, i64}) -> f32");
    assert_eq!(locs(&a, 0), [Vgpr(0)]);
    assert_eq!(locs(&a, 1), [Vgpr(1), Vgpr(2)]);
    assert_eq!(locs(&a, 2), [Sgpr(4), Sgpr(5)]);
    assert_eq!(locs(&a, 3), [Vgpr(3), Vgpr(4), Vgpr(5), Vgpr(6)]);
    assert_eq!(a.ret.iter().map(|p| p.loc).collect::<Vec<_>>(), [Vgpr(0)]);
    assert_eq!(a.implicit[0].input, ImplicitInput::WorkitemId);
    assert_eq!(a.implicit[0].pieces, [Vgpr(7)]);
    assert_eq!(a.stack_size, 0);
}

/// Reference contradiction "SGPR0 up to SGPR29" vs "SGPR4-29": s4 (s0-s3 hold the
/// scratch V#, and stay reserved on flat-scratch targets too).
#[test]
fn first_sgpr_argument_is_s4() {
    for gpu in Gpu::ALL {
        let a = assign(&Signature::parse("fn(inreg i32)").unwrap(), Convention::AmdgpuCg, Target::new(gpu)).unwrap();
        assert_eq!(locs(&a, 0), [Sgpr(4)], "{gpu}");
    }
}

/// s0-s3 are never argument registers in amdgpu-cg, on any target; s33 holds the
/// wave scratch offset only where a scratch V# exists (gfx90a).
#[test]
fn s0_s3_never_arguments_and_s33_wave_offset_only_on_buffer_scratch() {
    let sig = Signature::parse(&format!("fn({}) uses()", vec!["inreg i32"; 26].join(", "))).unwrap();
    for gpu in Gpu::ALL {
        let a = assign(&sig, Convention::AmdgpuCg, Target::new(gpu)).unwrap();
        let regs: Vec<Location> = a.args.iter().map(|x| x.pieces[0].loc).collect();
        assert_eq!(regs, (4..30).map(Sgpr).collect::<Vec<_>>(), "{gpu}: s4..s29");
        let flat = gpu.has_architected_flat_scratch();
        assert_eq!(a.special.wave_scratch_offset, (!flat).then_some(33), "{gpu}");
        assert_eq!(a.special.scratch_rsrc, (!flat).then_some(0), "{gpu}");
        assert_eq!((a.special.stack_pointer, a.special.return_address, a.special.frame_pointer), (32, 30, 34));
    }
}

/// "SGPR overflow is not handled" / "allocating SGPR arguments on the stack is not
/// supported": inreg pieces that do not fit in s4-s29 go to the stack, in order,
/// naturally aligned, exactly like VGPR overflow.
#[test]
fn sgpr_overflow_goes_to_stack() {
    let a = cg(&format!("fn({}, inreg i64, inreg i32, i32) uses()", vec!["inreg i32"; 25].join(", ")));
    assert_eq!(locs(&a, 24), [Sgpr(28)]);
    // s29 is left: the i64 needs two, so it goes to [sp+0..8) and the class is closed.
    assert_eq!(locs(&a, 25), [Stack { offset: 0, size: 4 }, Stack { offset: 4, size: 4 }]);
    assert_eq!(locs(&a, 26), [Stack { offset: 8, size: 4 }]);
    assert_eq!(locs(&a, 27), [Vgpr(0)], "VGPR arguments are not affected");
    assert_eq!(a.stack_size, 16);
}

/// "Direct argument < 64 bits should check register budget", "register budget
/// should respect inreg": each class has its own budget; a leaf value goes to
/// registers only if all its pieces fit; once a class spilled to the stack no later
/// value of that class uses its registers (no back-filling).
#[test]
fn register_budget_per_class_and_no_backfill() {
    let a = cg(&format!("fn({}, i64, i32, inreg i32) uses()", n_i32(31)));
    assert_eq!(locs(&a, 30), [Vgpr(30)]);
    assert_eq!(locs(&a, 31), [Stack { offset: 0, size: 4 }, Stack { offset: 4, size: 4 }], "i64 does not fit in v31");
    assert_eq!(locs(&a, 32), [Stack { offset: 8, size: 4 }], "no back-fill of v31");
    assert_eq!(locs(&a, 33), [Sgpr(4)], "SGPR budget unaffected");
}

/// "Structs partly in registers": structs <= 16 bytes are always decomposed, also
/// when they start on the stack; the unit of allocation is the leaf (scalar or
/// vector field), which is never split, so a struct can straddle registers and
/// stack only at a field boundary. Fields on the stack are placed like separate
/// arguments (natural alignment).
#[test]
fn struct_split_at_field_boundary() {
    let a = cg(&format!("fn({}, {{i32, f32, i64}}, {{i8, i32}}) uses()", n_i32(29)));
    // i32 -> v29, f32 -> v30, the i64 needs two (only v31 left) -> [sp+0..8).
    assert_eq!(locs(&a, 29), [Vgpr(29), Vgpr(30), Stack { offset: 0, size: 4 }, Stack { offset: 4, size: 4 }]);
    // Wholly on the stack, still decomposed: i8 at 8, i32 at 12.
    assert_eq!(locs(&a, 30), [Stack { offset: 8, size: 1 }, Stack { offset: 12, size: 4 }]);
    assert_eq!(a.stack_size, 16);
}

/// "Overly aligned structures on the stack", "stack arguments must be aligned",
/// "stack is aligned to max(16, max argument alignment)": natural alignment capped
/// at 16 (the SP's alignment); no dynamic realignment, no base pointer.
#[test]
fn stack_alignment_capped_at_16() {
    let a = cg(&format!("fn({}, i8, <4 x i64>, <3 x i32>, i16) uses()", n_i32(32)));
    assert_eq!(locs(&a, 32), [Stack { offset: 0, size: 1 }]);
    // <4 x i64>: 32-byte natural alignment, placed at 16.
    let v: Vec<Location> = (0..8).map(|k| Stack { offset: 16 + 4 * k, size: 4 }).collect();
    assert_eq!(locs(&a, 33), v);
    // <3 x i32>: size and alignment 16 (layout rule of types.rs): at 48.
    assert_eq!(
        locs(&a, 34),
        [Stack { offset: 48, size: 4 }, Stack { offset: 52, size: 4 }, Stack { offset: 56, size: 4 }]
    );
    assert_eq!(locs(&a, 35), [Stack { offset: 64, size: 2 }]);
    assert_eq!(a.stack_size, 80);
    assert_eq!(a.stack_align, 16);
    assert_eq!(a.special.base_pointer, None);
}

/// Structs > 16 bytes are passed by reference: one private pointer at the
/// argument's position (inreg if the argument is), pointing to a copy the caller
/// makes in its own frame (never in the argument area).
#[test]
fn large_structs_by_reference() {
    let a = cg("fn({i64, i64, i32}, inreg {i32, i32, i32, i32, i32}, {i64, i64}) uses()");
    assert!(a.args[0].by_ref && a.args[1].by_ref && !a.args[2].by_ref);
    assert_eq!(locs(&a, 0), [Vgpr(0)]);
    assert_eq!(locs(&a, 1), [Sgpr(4)]);
    assert_eq!(locs(&a, 2), [Vgpr(1), Vgpr(2), Vgpr(3), Vgpr(4)], "exactly 16 bytes: decomposed");
    assert_eq!(a.stack_size, 0);
    // Vectors are not structs: passed by value whatever their size.
    let b = cg("fn(<4 x i64>) uses()");
    assert_eq!(b.args[0].pieces.len(), 8);
}

/// "Struct with 1 member unpeeling is not checking size of member": the size test
/// is on the struct; a one-member struct <= 16 bytes is passed exactly like its
/// member, a larger one by reference.
#[test]
fn one_member_struct() {
    let a = cg("fn({f64}, f64, {<4 x i64>}) uses()");
    assert_eq!(locs(&a, 0), [Vgpr(0), Vgpr(1)]);
    assert_eq!(locs(&a, 1), [Vgpr(2), Vgpr(3)]);
    assert!(a.args[2].by_ref);
    assert_eq!(locs(&a, 2), [Vgpr(4)]);
}

/// "How are function results returned?": results <= 16 bytes in v0.. (decomposed
/// like arguments, never in SGPRs); larger results through sret.
#[test]
fn results_in_vgprs_up_to_16_bytes() {
    let a = cg("fn() -> {i8, i16, <2 x f16>, i64}");
    assert_eq!(a.ret.iter().map(|p| p.loc).collect::<Vec<_>>(), [Vgpr(0), Vgpr(1), Vgpr(2), Vgpr(3), Vgpr(4)]);
    assert_eq!(a.sret, None);
    let b = cg("fn() -> <4 x i64>");
    assert!(b.ret.is_empty());
    assert_eq!(b.sret, Some(Vgpr(0)));
}

/// The sret TODOs ("correct the sret definition", "first or last?", "after this?",
/// "on the stack? can it overlay arguments?"): the sret pointer is a private
/// pointer passed first, in v0, before `self`; the memory is in the caller's frame,
/// never in the argument area, so it overlays nothing and is never on the stack.
#[test]
fn sret_is_first_in_v0_before_self() {
    let a = cg("fn(self ptr<global>, i32) -> {i64, i64, i64}");
    assert_eq!(a.sret, Some(Vgpr(0)));
    assert_eq!(locs(&a, 0), [Vgpr(1), Vgpr(2)]);
    assert_eq!(locs(&a, 1), [Vgpr(3)]);
    assert_eq!(a.stack_size, 0);
    // `self` must be first and a pointer.
    let bad = Signature::parse("fn(i32, self ptr)").unwrap();
    assert_eq!(assign(&bad, Convention::AmdgpuCg, Target::new(Gpu::Gfx90a)), Err(AbiError::SelfNotFirst { index: 1 }));
    let bad = Signature::parse("fn(self i32)").unwrap();
    assert_eq!(assign(&bad, Convention::Llvm, Target::new(Gpu::Gfx90a)), Err(AbiError::SelfNotPointer { index: 0 }));
}

/// Implicit inputs are appended after the source arguments, in the reference order,
/// each in the next free register of its class (work-item id: VGPR; others: SGPRs),
/// only those used; when a class is exhausted they go to the stack like arguments.
#[test]
fn implicit_inputs_appended_in_reference_order() {
    let a = cg("fn(i32, inreg i32) uses(workgroup_id_y, workitem_id, implicitarg_ptr, dispatch_ptr)");
    let got: Vec<(ImplicitInput, Vec<Location>)> = a.implicit.iter().map(|i| (i.input, i.pieces.clone())).collect();
    assert_eq!(
        got,
        [
            (ImplicitInput::WorkitemId, vec![Vgpr(1)]),
            (ImplicitInput::DispatchPtr, vec![Sgpr(5), Sgpr(6)]),
            (ImplicitInput::WorkgroupIdY, vec![Sgpr(7)]),
            (ImplicitInput::ImplicitArgPtr, vec![Sgpr(8), Sgpr(9)]),
        ]
    );
    let full = cg(&format!("fn({}) uses(workitem_id)", n_i32(32)));
    assert_eq!(full.implicit[0].pieces, [Stack { offset: 0, size: 4 }]);
    // LLVM's LDS kernel id does not exist in amdgpu-cg.
    let lds = Signature::parse("fn() uses(lds_kernel_id)").unwrap();
    assert!(matches!(
        assign(&lds, Convention::AmdgpuCg, Target::new(Gpu::Gfx942)),
        Err(AbiError::ImplicitNotAvailable { .. })
    ));
}

/// "Is recursion or external functions supported?": yes; a function whose uses are
/// unknown (external, or in a recursive cycle) gets every implicit input (no
/// `uses(...)` clause = all).
#[test]
fn external_functions_get_all_implicit_inputs() {
    let a = cg("fn()");
    let names: Vec<&str> = a.implicit.iter().map(|i| i.input.name()).collect();
    assert_eq!(
        names,
        [
            "workitem_id",
            "dispatch_ptr",
            "queue_ptr",
            "kernarg_segment_ptr",
            "dispatch_id",
            "workgroup_id_x",
            "workgroup_id_y",
            "workgroup_id_z",
            "implicitarg_ptr"
        ]
    );
    // 2+2+2+2+1+1+1+2 = 13 SGPRs from s4: s4..s16.
    assert_eq!(a.implicit.last().unwrap().pieces, [Sgpr(15), Sgpr(16)]);
}

/// Sub-dword values take a whole register (low bits, upper bits undefined) and
/// their natural size on the stack; 16-bit vector elements are packed in pairs,
/// i8 vector elements are not packed.
#[test]
fn sub_dword_values() {
    let a = cg(&format!("fn(i1, i8, f16, <3 x f16>, <3 x i8>, {}, i8, i1, <3 x f16>, <2 x i8>) uses()", n_i32(23)));
    assert_eq!(locs(&a, 0), [Vgpr(0)]);
    assert_eq!(locs(&a, 3), [Vgpr(3), Vgpr(4)]);
    assert_eq!(locs(&a, 4), [Vgpr(5), Vgpr(6), Vgpr(7)]);
    let stack_from = 5 + 23;
    assert_eq!(locs(&a, stack_from), [Vgpr(31)]);
    assert_eq!(locs(&a, stack_from + 1), [Stack { offset: 0, size: 1 }]);
    assert_eq!(locs(&a, stack_from + 2), [Stack { offset: 8, size: 4 }, Stack { offset: 12, size: 2 }]);
    assert_eq!(locs(&a, stack_from + 3), [Stack { offset: 16, size: 1 }, Stack { offset: 17, size: 1 }]);
}

/// 64-bit values take two consecutive registers with no even alignment (as LLVM).
#[test]
fn no_register_pair_alignment() {
    let a = cg("fn(i32, i64, inreg i32, inreg ptr<global>) uses()");
    assert_eq!(locs(&a, 1), [Vgpr(1), Vgpr(2)]);
    assert_eq!(locs(&a, 3), [Sgpr(5), Sgpr(6)]);
}

/// "On gfx908 are all ACC registers clobbered?": no: a0-a31 are clobbered and
/// a32-a255 preserved, the same split as our VGPRs (and as LLVM). Also pins the
/// reference's preserved set: clobbered s4-s31, v0-v31; EXEC, MODE, FLAT_SCRATCH
/// preserved; M0, VCC, SCC clobbered.
#[test]
fn preserved_registers() {
    let t = Target::new(Gpu::Gfx90a);
    let agpr = register_set(Convention::AmdgpuCg, RegKind::Agpr, t);
    assert_eq!(agpr.clobbered, (0..32).collect::<Vec<u16>>());
    assert_eq!(agpr.preserved.len(), 224);
    let s = register_set(Convention::AmdgpuCg, RegKind::Sgpr, t);
    assert_eq!(s.clobbered, (4..32).collect::<Vec<u16>>());
    let v = register_set(Convention::AmdgpuCg, RegKind::Vgpr, t);
    assert_eq!(v.clobbered, (0..32).collect::<Vec<u16>>());
    assert!(register_set(Convention::AmdgpuCg, RegKind::Agpr, Target::new(Gpu::Gfx1100)).preserved.is_empty());
    for conv in Convention::ALL {
        assert!(hw_reg_preserved(conv, HwReg::Exec) && hw_reg_preserved(conv, HwReg::Mode));
        assert!(hw_reg_preserved(conv, HwReg::FlatScratch));
        assert!(
            !hw_reg_preserved(conv, HwReg::M0)
                && !hw_reg_preserved(conv, HwReg::Vcc)
                && !hw_reg_preserved(conv, HwReg::Scc)
        );
    }
    // LLVM 22 (research, measured): s30-s39, s48-s55, ..., v40-v47, v56-v63, ...
    for n in [30, 33, 39, 48, 55, 64, 71, 80, 87, 96, 101] {
        assert!(is_preserved(Convention::Llvm, RegKind::Sgpr, n), "s{n}");
    }
    for n in [0, 15, 29, 40, 47, 56, 63, 72, 79, 88, 95] {
        assert!(!is_preserved(Convention::Llvm, RegKind::Sgpr, n), "s{n}");
    }
    for n in [40, 47, 56, 63, 248, 255] {
        assert!(is_preserved(Convention::Llvm, RegKind::Vgpr, n), "v{n}");
    }
    for n in [0, 31, 39, 48, 55, 240, 247] {
        assert!(!is_preserved(Convention::Llvm, RegKind::Vgpr, n), "v{n}");
    }
}

/// "CFA definition", "FP vs SP": the caller passes SP (s32 = address of the first
/// stack argument); FP (s34) is the callee's, set to entry SP + argument area = the
/// CFA = the lowest local; incoming arguments are at negative offsets from it.
#[test]
fn cfa_is_the_first_local_and_arguments_are_below_it() {
    let a = cg(&format!("fn({}, i32, i64) uses()", n_i32(32)));
    assert_eq!(a.stack_size, 16);
    assert_eq!(locs(&a, 32), [Stack { offset: 0, size: 4 }]);
    assert_eq!(a.callee_fp_offset(0), -16);
    assert_eq!(a.callee_fp_offset(8), -8);
    assert_eq!(a.caller_sp_offset(8), 8);
    let l = assign(
        &Signature::parse(&format!("fn({}, i32)", n_i32(31))).unwrap(),
        Convention::Llvm,
        Target::new(Gpu::Gfx90a),
    )
    .unwrap();
    assert_eq!(l.callee_fp_offset(0), 0, "LLVM: FP (s33) = entry SP, arguments above it");
    assert_eq!((l.special.frame_pointer, l.special.base_pointer), (33, Some(34)));
}

/// "Explain when the emergency spill slot is used": when a frame offset may not fit
/// the scratch instructions' immediate offset (frame > 4096 bytes per lane).
#[test]
fn emergency_spill_slot_threshold() {
    for gpu in Gpu::ALL {
        let t = Target::new(gpu);
        assert!(!needs_emergency_spill_slot(4096, t));
        assert!(needs_emergency_spill_slot(4097, t));
    }
}

/// Lambdas are structs with implementation-defined fields (the frontend's layout);
/// no special rule: the struct rules apply.
#[test]
fn lambdas_are_structs() {
    let small = cg("fn({ptr<private>, i32}) uses()");
    assert_eq!(locs(&small, 0), [Vgpr(0), Vgpr(1)]);
    let large = cg("fn({ptr, ptr, ptr}) uses()");
    assert!(large.args[0].by_ref);
}

/// The `llvm` convention on the research note's examples (also covered by the
/// llc-22 differential test).
#[test]
fn llvm_convention_examples() {
    let t = |g| Target::new(g);
    let s = Signature::parse(&format!("fn({}, i64, i32)", n_i32(30))).unwrap();
    let a = assign(&s, Convention::Llvm, t(Gpu::Gfx90a)).unwrap();
    assert_eq!(locs(&a, 30), [Vgpr(30), Stack { offset: 0, size: 4 }]);
    assert_eq!(locs(&a, 31), [Stack { offset: 4, size: 4 }]);
    let s = Signature::parse("fn(inreg i32, inreg f64)").unwrap();
    assert_eq!(locs(&assign(&s, Convention::Llvm, t(Gpu::Gfx942)).unwrap(), 1), [Sgpr(1), Sgpr(2)]);
    assert_eq!(locs(&assign(&s, Convention::Llvm, t(Gpu::Gfx90a)).unwrap(), 0), [Sgpr(16)]);
    let r = Signature::parse(&format!("fn(i32) -> {{{}}}", n_i32(33))).unwrap();
    let a = assign(&r, Convention::Llvm, t(Gpu::Gfx1100)).unwrap();
    assert_eq!(a.sret, Some(Vgpr(0)));
    assert_eq!(locs(&a, 0), [Vgpr(1)]);
    let r = Signature::parse(&format!("fn(i32) -> {{{}}}", n_i32(32))).unwrap();
    let a = assign(&r, Convention::Llvm, t(Gpu::Gfx1100)).unwrap();
    assert_eq!(a.ret.last().unwrap().loc, Vgpr(31));
    assert_eq!(a.implicit.iter().find(|i| i.input == ImplicitInput::WorkitemId).unwrap().pieces, [Vgpr(31)]);
}

#[test]
fn signature_text_round_trips_and_errors_point_at_the_problem() {
    for text in [
        "fn()",
        "fn(i32, f64, inreg i64, {i32, f32, i64}) -> f32",
        "fn(self ptr<global>, inreg <2 x f16>) -> {i8, i1} uses(workitem_id, dispatch_id)",
        "fn() uses()",
    ] {
        assert_eq!(Signature::parse(text).unwrap().to_string(), text);
    }
    let err = Signature::parse("fn(i32, q8)").unwrap_err();
    assert_eq!(err.offset, 8);
    let err = Signature::parse("fn(i32, {i32, bad})").unwrap_err();
    assert_eq!(err.offset, 14);
    let err = Signature::parse("fn(i32) -> ").unwrap_err();
    assert_eq!(err.offset, 11);
    let err = Signature::parse("fn(i32) uses(stack)").unwrap_err();
    assert_eq!(err.offset, 13);
    assert!(Signature::parse("fn(i32").is_err());
    assert!(Signature::parse("f(i32)").is_err());
    assert!(Signature::parse("fn(i32) x").is_err());
}

#[test]
fn json_format_is_stable() {
    let a = cg("fn(i32, {i64, i64, i64}, inreg i64) -> f32 uses(workitem_id, dispatch_ptr)");
    let j = a.to_json();
    assert_eq!(
        j["args"][0],
        serde_json::json!({"index": 0, "type": "i32", "inreg": false, "byref": false, "pieces": [{"reg": "v0"}]})
    );
    assert_eq!(j["args"][1]["byref"], true);
    assert_eq!(j["args"][1]["pieces"], serde_json::json!([{"reg": "v1"}]));
    assert_eq!(j["args"][2]["pieces"], serde_json::json!([{"reg": "s4"}, {"reg": "s5"}]));
    assert_eq!(j["ret"], serde_json::json!([{"reg": "v0"}]));
    assert_eq!(j["sret"], serde_json::Value::Null);
    assert_eq!(j["implicit"][0], serde_json::json!({"name": "workitem_id", "reg": "v2", "pieces": [{"reg": "v2"}]}));
    assert_eq!(j["implicit"][1]["reg"], "s[6:7]");
    assert_eq!(j["stack_size"], 0);
    let s = cg(&format!("fn({}, i64) uses()", n_i32(32)));
    assert_eq!(
        s.to_json()["args"][32]["pieces"],
        serde_json::json!([{"stack_offset": 0, "size": 4}, {"stack_offset": 4, "size": 4}])
    );
    assert_eq!(s.to_json()["stack_size"], 16);
    let json = a.to_json();
    let keys: Vec<&String> = json.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "args",
            "convention",
            "implicit",
            "ret",
            "signature",
            "special",
            "sret",
            "stack_align",
            "stack_size",
            "target",
            "wave_size"
        ]
    );
}

#[test]
fn display_reads_like_a_table() {
    let text = cg("fn(i32, inreg i64) -> f32 uses(workitem_id)").to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("fn(i32, inreg i64) -> f32 uses(workitem_id)"));
    assert!(lines.iter().any(|l| l.starts_with("arg 0") && l.ends_with("v0")));
    assert!(lines.iter().any(|l| l.starts_with("arg 1") && l.ends_with("s4")));
    assert!(lines.iter().any(|l| l.starts_with("ret") && l.ends_with("v0")));
    assert!(lines.iter().any(|l| l.contains("workitem_id") && l.ends_with("v1")));
    assert!(amdgpu_abi::cli_abi("fn(i32)", "gfx90a", "llvm", true).unwrap().starts_with('{'));
    assert!(amdgpu_abi::cli_abi("fn(i32)", "gfx9000", "llvm", false).is_err());
    assert!(amdgpu_abi::cli_abi("fn(i32)", "gfx90a", "c", false).is_err());
}

/// The JSON example of docs/abi.md section 8 is exactly what `to_json` produces.
#[test]
fn documented_json_example_is_exact() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/abi.md")).unwrap();
    let start = doc.find("## 8. JSON format").unwrap();
    let block = &doc[start..];
    let json_start = block.find("```json\n").unwrap() + 8;
    let json_end = json_start + block[json_start..].find("```").unwrap();
    let documented: serde_json::Value = serde_json::from_str(&block[json_start..json_end]).unwrap();
    let sig = documented["signature"].as_str().unwrap();
    let a = assign(&Signature::parse(sig).unwrap(), Convention::AmdgpuCg, Target::new(Gpu::Gfx90a)).unwrap();
    assert_eq!(a.to_json(), documented);
}
