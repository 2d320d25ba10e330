//! Conformance fuzzing: random signatures, both conventions, all targets, checked
//! against the rules of docs/abi.md as properties. `AMDGPU_ABI_FUZZ_CASES=N` sets
//! the number of random signatures (default 400; each is checked for 2
//! conventions x 3 targets).

mod common;

use amdgpu_abi::conv::{piece_count, MAX_DIRECT_BYTES};
use amdgpu_abi::{assign, AbiError, Assignment, Convention, ImplicitInput, Location, Signature, Type};
use amdgpu_isa::target::{Gpu, Target};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Field path of a piece (strip the element / half suffix).
fn field_of(path: &str) -> &str {
    let p = path.strip_suffix(".lo").or_else(|| path.strip_suffix(".hi")).unwrap_or(path);
    match p.find('[') {
        Some(i) => &p[..i],
        None => p,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    V,
    S,
}

/// One allocation unit in allocation order: (class, the locations of its pieces, leaf type).
fn units(a: &Assignment) -> Vec<(Class, Vec<Location>, Type)> {
    let mut out = Vec::new();
    if let Some(s) = a.sret {
        out.push((Class::V, vec![s], Type::Ptr(amdgpu_abi::AddrSpace::Private)));
    }
    for arg in &a.args {
        let class = if arg.param.inreg { Class::S } else { Class::V };
        let mut i = 0;
        while i < arg.pieces.len() {
            let f = field_of(&arg.pieces[i].path);
            let mut j = i;
            let mut locs = Vec::new();
            while j < arg.pieces.len() && field_of(&arg.pieces[j].path) == f {
                locs.push(arg.pieces[j].loc);
                j += 1;
            }
            out.push((class, locs, arg.pieces[i].leaf.clone()));
            i = j;
        }
    }
    if a.convention == Convention::AmdgpuCg {
        for imp in &a.implicit {
            let class = if imp.input.is_vector() { Class::V } else { Class::S };
            let ty = if imp.input.dwords() == 2 { Type::I64 } else { Type::I32 };
            out.push((class, imp.pieces.clone(), ty));
        }
    }
    out
}

fn check(sig: &Signature, conv: Convention, target: Target) -> Result<(), TestCaseError> {
    let result = assign(sig, conv, target);
    let unavailable = match conv {
        Convention::AmdgpuCg => ImplicitInput::LdsKernelId,
        Convention::Llvm => ImplicitInput::KernargSegmentPtr,
    };
    if sig.uses.as_ref().is_some_and(|u| u.contains(&unavailable)) {
        prop_assert_eq!(result, Err(AbiError::ImplicitNotAvailable { input: unavailable, convention: conv }));
        return Ok(());
    }
    let a = match result {
        Ok(a) => a,
        Err(AbiError::StackTooLarge { bytes }) => {
            prop_assert!(bytes > u64::from(amdgpu_abi::conv::MAX_STACK_ARGS));
            return Ok(());
        }
        Err(e) => return Err(TestCaseError::fail(format!("unexpected error {e} for {sig}"))),
    };
    // Determinism.
    prop_assert_eq!(&assign(sig, conv, target).unwrap(), &a);
    prop_assert_eq!(a.args.len(), sig.params.len());

    // Piece counts, decomposition and by-reference thresholds.
    for arg in &a.args {
        let ty = &arg.param.ty;
        let byref_expected =
            conv == Convention::AmdgpuCg && matches!(ty, Type::Struct(_)) && ty.size() > MAX_DIRECT_BYTES;
        prop_assert_eq!(arg.by_ref, byref_expected, "byref of {}", ty);
        if arg.by_ref {
            prop_assert_eq!(arg.pieces.len(), 1);
        } else {
            prop_assert_eq!(arg.pieces.len(), common::expected_pieces(ty), "pieces of {}", ty);
            prop_assert_eq!(piece_count(ty), common::expected_pieces(ty));
        }
    }
    match &sig.ret {
        None => prop_assert!(a.ret.is_empty() && a.sret.is_none()),
        Some(ty) => {
            let in_memory = match conv {
                Convention::AmdgpuCg => ty.size() > MAX_DIRECT_BYTES,
                Convention::Llvm => common::expected_pieces(ty) > 32,
            };
            prop_assert_eq!(a.sret.is_some(), in_memory, "sret for {}", ty);
            if in_memory {
                prop_assert!(a.ret.is_empty());
                prop_assert_eq!(a.sret, Some(Location::Vgpr(0)), "sret goes first, in v0");
            } else {
                prop_assert_eq!(a.ret.len(), common::expected_pieces(ty));
                for (k, p) in a.ret.iter().enumerate() {
                    prop_assert_eq!(p.loc, Location::Vgpr(k as u16), "results in v0.. consecutively");
                }
            }
        }
    }

    // No two pieces share a register or a stack byte.
    let inputs = a.input_locations();
    let mut regs = HashSet::new();
    let mut bytes = HashSet::new();
    for (what, loc) in &inputs {
        match *loc {
            Location::Stack { offset, size } => {
                prop_assert!((1..=4).contains(&size), "{} size {}", what, size);
                prop_assert!(offset + size <= a.stack_size, "{} beyond the stack area", what);
                for b in offset..offset + size {
                    prop_assert!(bytes.insert(b), "stack byte {} used twice ({})", b, what);
                }
            }
            reg => prop_assert!(regs.insert(reg), "{} shares {}", what, reg),
        }
    }
    for reg in &regs {
        if let Location::Sgpr(n) = reg {
            let sp = a.special;
            prop_assert!(*n != sp.stack_pointer && *n != sp.return_address && *n != sp.return_address + 1);
            prop_assert!(*n != sp.frame_pointer && Some(*n) != sp.wave_scratch_offset);
            if let Some(r) = sp.scratch_rsrc {
                prop_assert!(!(r..r + 4).contains(n), "argument in the scratch V#");
            }
        }
    }

    // Register ranges, consecutiveness and overflow rules.
    let us = units(&a);
    match conv {
        Convention::AmdgpuCg => {
            for (class, first, end) in [(Class::V, 0u16, 32u16), (Class::S, 4, 30)] {
                let mut next = first;
                let mut overflowed = false;
                let mut last_stack_end = 0u32;
                for (_, locs, leaf) in us.iter().filter(|u| u.0 == class) {
                    let on_stack = locs.iter().all(|l| !l.is_reg());
                    prop_assert!(
                        on_stack || locs.iter().all(|l| l.is_reg()),
                        "a leaf is split between registers and stack"
                    );
                    if !on_stack {
                        prop_assert!(!overflowed, "register used after the class overflowed to the stack");
                        for l in locs {
                            let n = match (class, *l) {
                                (Class::V, Location::Vgpr(n)) | (Class::S, Location::Sgpr(n)) => n,
                                _ => return Err(TestCaseError::fail(format!("wrong register class {l}"))),
                            };
                            prop_assert_eq!(n, next, "consecutive registers");
                            next += 1;
                        }
                        prop_assert!(next <= end);
                    } else {
                        if !overflowed {
                            prop_assert!(
                                usize::from(next) + locs.len() > usize::from(end),
                                "overflow only when the leaf does not fit"
                            );
                        }
                        overflowed = true;
                        let align = leaf.align().min(16);
                        let Location::Stack { offset: base, .. } = locs[0] else { unreachable!() };
                        prop_assert_eq!(base % align, 0, "stack leaf {} at {} not aligned to {}", leaf, base, align);
                        prop_assert!(base >= last_stack_end, "stack leaves of a class in order");
                        if let Some(Location::Stack { offset, size }) = locs.last() {
                            last_stack_end = offset + size;
                        }
                    }
                }
            }
            // Stack offsets increase in allocation order (both classes share the area).
            let mut prev_end = 0;
            for (_, locs, _) in &us {
                for l in locs {
                    if let Location::Stack { offset, size } = *l {
                        prop_assert!(offset >= prev_end, "stack offsets out of order");
                        prev_end = offset + size;
                    }
                }
            }
            prop_assert_eq!(a.stack_size % 16, 0);
            prop_assert!(a.stack_size < prev_end + 16 || a.stack_size == 0 && prev_end == 0);
            // The work-item id is the VGPR right after the VGPR arguments.
            let order: Vec<ImplicitInput> = a.implicit.iter().map(|i| i.input).collect();
            let expected: Vec<ImplicitInput> =
                ImplicitInput::REFERENCE_ORDER.into_iter().filter(|i| sig.uses(*i)).collect();
            prop_assert_eq!(order, expected);
            // Same answer on every target.
            for gpu in Gpu::ALL {
                let other = assign(sig, conv, Target::new(gpu)).unwrap();
                prop_assert_eq!(&other.args, &a.args);
                prop_assert_eq!(&other.ret, &a.ret);
                prop_assert_eq!(&other.implicit, &a.implicit);
                prop_assert_eq!(other.stack_size, a.stack_size);
            }
        }
        Convention::Llvm => {
            let sgprs = amdgpu_abi::conv::llvm_inreg_sgprs(target.gpu);
            let mut vnext = 0u16;
            let mut snext = 0usize;
            let mut slot = 0u32;
            for (class, locs, _) in &us {
                for l in locs {
                    match *l {
                        Location::Sgpr(n) => {
                            prop_assert!(*class == Class::S);
                            prop_assert_eq!(n, sgprs[snext]);
                            snext += 1;
                        }
                        Location::Vgpr(n) => {
                            prop_assert!(
                                *class == Class::V || snext == sgprs.len(),
                                "inreg in a VGPR only after the SGPRs ran out"
                            );
                            prop_assert_eq!(n, vnext);
                            vnext += 1;
                            prop_assert!(vnext <= 31);
                        }
                        Location::Stack { offset, size } => {
                            prop_assert_eq!(vnext, 31, "stack only after v0-v30");
                            prop_assert!(*class == Class::V || snext == sgprs.len());
                            prop_assert_eq!(offset, slot, "4-byte slots in order");
                            prop_assert!(size <= 4);
                            slot += 4;
                        }
                    }
                }
            }
            prop_assert_eq!(a.stack_size, slot);
            for imp in &a.implicit {
                let (_, first, vector) =
                    amdgpu_abi::conv::LLVM_IMPLICIT.iter().copied().find(|x| x.0 == imp.input).unwrap();
                let want = if vector { Location::Vgpr(first) } else { Location::Sgpr(first) };
                prop_assert_eq!(imp.pieces[0], want);
            }
        }
    }

    // Caller's and callee's views of the stack agree.
    for (_, loc) in &inputs {
        if let Location::Stack { offset, .. } = *loc {
            let callee = a.callee_fp_offset(offset);
            let caller = a.caller_sp_offset(offset);
            let fp_at = match conv {
                Convention::AmdgpuCg => i64::from(a.stack_size),
                Convention::Llvm => 0,
            };
            prop_assert_eq!(callee + fp_at, i64::from(caller));
            if conv == Convention::AmdgpuCg {
                prop_assert!(callee < 0, "amdgpu-cg: incoming arguments below the FP");
            }
        }
    }
    // The table and the JSON describe every piece.
    let json = a.to_json();
    prop_assert_eq!(json["args"].as_array().unwrap().len(), a.args.len());
    prop_assert_eq!(json["stack_size"].as_u64(), Some(u64::from(a.stack_size)));
    let text = a.to_string();
    prop_assert!(text.lines().count() >= 2);
    // The signature text round-trips.
    prop_assert_eq!(&Signature::parse(&sig.to_string()).unwrap(), sig);
    Ok(())
}

#[test]
fn fuzz_conformance() {
    let cases = common::cases("AMDGPU_ABI_FUZZ_CASES", 400);
    let checked = AtomicUsize::new(0);
    let mut runner = TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
    runner
        .run(&common::signature(300), |sig| {
            for conv in Convention::ALL {
                for gpu in Gpu::ALL {
                    check(&sig, conv, Target::new(gpu))?;
                    checked.fetch_add(1, Ordering::Relaxed);
                }
            }
            Ok(())
        })
        .unwrap();
    eprintln!(
        "fuzz_conformance: {} assignments checked ({} signatures x 2 conventions x 3 targets)",
        checked.load(Ordering::Relaxed),
        cases
    );
}
