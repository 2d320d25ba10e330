//! Unit tests of the public API that do not need LLVM: error reporting, round trips,
//! table invariants and the waitcnt layouts.

use amdgpu_isa::opcodes::{count, Counters};
use amdgpu_isa::samples::representative_for;
use amdgpu_isa::*;

fn t(gpu: Gpu) -> Target {
    Target::new(gpu)
}

fn enc(i: &Inst, target: Target) -> Result<Vec<u8>, EncodeError> {
    let mut v = Vec::new();
    encode(i, target, &mut v).map(|_| v)
}

#[test]
fn encode_decode_print_roundtrip_for_all_samples() {
    for target in [t(Gpu::Gfx90a), t(Gpu::Gfx942), t(Gpu::Gfx1100), Target { gpu: Gpu::Gfx1100, wave: WaveSize::W64 }] {
        let insts = representative_for(target);
        assert!(insts.len() > 1000);
        let mut bytes = Vec::new();
        for i in &insts {
            encode(i, target, &mut bytes).unwrap();
        }
        let back = decode_all(&bytes, target).unwrap();
        assert_eq!(back, insts);
    }
}

#[test]
fn misaligned_vgpr_tuple_is_an_error_on_gfx9_only() {
    let i = Inst::new(Opcode::v_add_f64, vec![Operand::v(1, 2)], vec![Operand::v(4, 2), Operand::v(6, 2)]);
    assert!(matches!(enc(&i, t(Gpu::Gfx90a)), Err(EncodeError::BadOperand { .. })));
    assert!(matches!(enc(&i, t(Gpu::Gfx942)), Err(EncodeError::BadOperand { .. })));
    assert!(enc(&i, t(Gpu::Gfx1100)).is_ok());
}

#[test]
fn misaligned_sgpr_pair_is_an_error() {
    let i = Inst::new(Opcode::s_mov_b64, vec![Operand::s(3, 2)], vec![Operand::s(4, 2)]);
    assert!(matches!(enc(&i, t(Gpu::Gfx1100)), Err(EncodeError::BadOperand { .. })));
}

#[test]
fn absent_opcode_is_an_error() {
    let i = Inst::new(Opcode::v_mov_b64, vec![Operand::v(0, 2)], vec![Operand::v(2, 2)]);
    assert!(enc(&i, t(Gpu::Gfx942)).is_ok());
    assert_eq!(enc(&i, t(Gpu::Gfx90a)), Err(EncodeError::NotAvailable { op: "v_mov_b64", gpu: Gpu::Gfx90a }));
    let i = Inst::new(Opcode::s_and_saveexec_b32, vec![Operand::s(0, 1)], vec![Operand::s(2, 1)]);
    assert!(matches!(enc(&i, t(Gpu::Gfx90a)), Err(EncodeError::NotAvailable { .. })));
}

#[test]
fn literal_rules() {
    // gfx9 VOP3 cannot take a literal, gfx11 can.
    let i = Inst::new(
        Opcode::v_fma_f32,
        vec![Operand::v(0, 1)],
        vec![Operand::v(1, 1), Operand::Literal(0x1234_5678), Operand::v(2, 1)],
    );
    assert!(matches!(enc(&i, t(Gpu::Gfx90a)), Err(EncodeError::Literal { .. })));
    assert_eq!(enc(&i, t(Gpu::Gfx1100)).unwrap().len(), 12);
    // Two different literals.
    let i = Inst::new(Opcode::s_add_u32, vec![Operand::s(0, 1)], vec![Operand::Literal(1000), Operand::Literal(2000)]);
    assert!(matches!(enc(&i, t(Gpu::Gfx90a)), Err(EncodeError::Literal { .. })));
    // Operand::imm32 picks inline constants when it can.
    assert_eq!(Operand::imm32(64), Operand::Const(192));
    assert_eq!(Operand::imm32((-16i32) as u32), Operand::Const(208));
    assert_eq!(Operand::imm32(0.5f32.to_bits()), Operand::Const(240));
    assert_eq!(Operand::imm32(0x3e22_f983), Operand::Const(248));
    assert_eq!(Operand::imm32(65), Operand::Literal(65));
}

#[test]
fn wrong_operand_kind_and_count() {
    let i = Inst::new(Opcode::v_add_f32, vec![Operand::s(0, 1)], vec![Operand::v(1, 1), Operand::v(2, 1)]);
    assert!(matches!(enc(&i, t(Gpu::Gfx90a)), Err(EncodeError::BadOperand { .. })));
    let i = Inst::new(Opcode::v_add_f32, vec![Operand::v(0, 1)], vec![Operand::v(1, 1)]);
    assert!(matches!(enc(&i, t(Gpu::Gfx90a)), Err(EncodeError::OperandCount { .. })));
    // VOP2 src1 must be a VGPR in the 32-bit form, but not in the e64 form.
    let i = Inst::new(Opcode::v_add_f32, vec![Operand::v(0, 1)], vec![Operand::v(1, 1), Operand::s(2, 1)]);
    assert!(enc(&i, t(Gpu::Gfx90a)).is_err());
    assert!(enc(&i.clone().with_e64(), t(Gpu::Gfx90a)).is_ok());
    // AGPRs do not exist on gfx11.
    let i = Inst::new(Opcode::global_load_dword, vec![Operand::a(0, 1)], vec![Operand::v(0, 2), Operand::Off]);
    assert!(enc(&i, t(Gpu::Gfx90a)).is_ok());
    assert!(enc(&i, t(Gpu::Gfx1100)).is_err());
}

#[test]
fn wave_size_decides_lane_masks() {
    let w32 = Target { gpu: Gpu::Gfx1100, wave: WaveSize::W32 };
    let w64 = Target { gpu: Gpu::Gfx1100, wave: WaveSize::W64 };
    let cmp =
        |n| Inst::new(Opcode::v_cmp_eq_u32, vec![Operand::Reg(Reg::vcc(n))], vec![Operand::v(0, 1), Operand::v(1, 1)]);
    assert!(enc(&cmp(1), w32).is_ok());
    assert!(enc(&cmp(2), w32).is_err());
    assert!(enc(&cmp(2), w64).is_ok());
    assert_eq!(print(&cmp(1), w32), "v_cmp_eq_u32_e32 vcc_lo, v0, v1");
    assert_eq!(print(&cmp(2), w64), "v_cmp_eq_u32_e32 vcc, v0, v1");
    assert!(Target::with_wave(Gpu::Gfx90a, WaveSize::W32).is_none());
    let bad = Target { gpu: Gpu::Gfx90a, wave: WaveSize::W32 };
    assert_eq!(enc(&cmp(1), bad), Err(EncodeError::WaveSize));
}

#[test]
fn special_registers_are_numbered_per_generation() {
    assert_eq!(PhysReg::m0(Generation::Gfx9), PhysReg(124));
    assert_eq!(PhysReg::m0(Generation::Gfx11), PhysReg(125));
    assert_eq!(PhysReg::null(Generation::Gfx11), Some(PhysReg(124)));
    assert_eq!(PhysReg::null(Generation::Gfx9), None);
    assert_eq!(Reg::new(PhysReg(124), 1).name(Gpu::Gfx90a), "m0");
    assert_eq!(Reg::new(PhysReg(124), 1).name(Gpu::Gfx1100), "null");
    assert_eq!(Reg::new(PhysReg::FLAT_SCRATCH, 2).name(Gpu::Gfx942), "flat_scratch");
    assert_eq!(Reg::new(PhysReg::FLAT_SCRATCH, 2).name(Gpu::Gfx1100), "s[102:103]");
    assert_eq!(Reg::exec(1).name(Gpu::Gfx1100), "exec_lo");
}

#[test]
fn waitcnt_layouts() {
    for gen in [Generation::Gfx9, Generation::Gfx11] {
        for w in [
            Waitcnt::ALL_ZERO,
            Waitcnt { vm: Some(5), exp: None, lgkm: Some(2) },
            Waitcnt { vm: Some(62), exp: Some(3), lgkm: None },
            Waitcnt::default(),
        ] {
            assert_eq!(Waitcnt::decode(w.encode(gen), gen), Some(w));
        }
    }
    assert_eq!(Waitcnt { vm: Some(0), lgkm: Some(0), exp: None }.encode(Generation::Gfx9), 0x0070);
    assert_eq!(Waitcnt { vm: Some(0), lgkm: Some(0), exp: None }.encode(Generation::Gfx11), 0x0007);
}

#[test]
fn table_invariants() {
    assert_eq!(Opcode::ALL.len(), Opcode::COUNT);
    for (i, op) in Opcode::ALL.into_iter().enumerate() {
        assert_eq!(op as usize, i);
        assert_eq!(Opcode::from_name(op.info().name), Some(op));
        assert!(Gpu::ALL.into_iter().any(|g| op.info().available(g)), "{} exists nowhere", op.info().name);
    }
    for gpu in Gpu::ALL {
        assert!(count(gpu) > 450, "{gpu}: {}", count(gpu));
    }
    // Memory counters per generation.
    let store = Opcode::global_store_dword.info();
    assert_eq!(store.counters(Gpu::Gfx90a), Counters::VM);
    assert_eq!(store.counters(Gpu::Gfx1100), Counters::VS);
    assert_eq!(Opcode::flat_load_dword.info().counters(Gpu::Gfx942), Counters::VM | Counters::LGKM);
    assert_eq!(Opcode::s_load_dword.info().counters(Gpu::Gfx1100), Counters::LGKM);
    let ret = Inst {
        cache: Cache::GLC,
        ..Inst::new(
            Opcode::global_atomic_add,
            vec![Operand::v(0, 1)],
            vec![Operand::v(2, 2), Operand::v(4, 1), Operand::Off],
        )
    };
    assert_eq!(ret.counters(Gpu::Gfx1100), Counters::VM);
    assert!(Opcode::s_add_u32.info().flags.contains(OpFlags::SCC_DEF));
    assert!(Opcode::s_cbranch_vccz.info().flags.contains(OpFlags::BRANCH | OpFlags::VCC_USE));
}

#[test]
fn decoder_reports_truncation() {
    let i = Inst::new(Opcode::v_mov_b32, vec![Operand::v(0, 1)], vec![Operand::Literal(0x1234_5678)]);
    let b = enc(&i, t(Gpu::Gfx90a)).unwrap();
    assert_eq!(b.len(), 8);
    assert_eq!(decode(&b[..4], t(Gpu::Gfx90a)), Err(DecodeError::Truncated));
    assert_eq!(decode(&b[..2], t(Gpu::Gfx90a)), Err(DecodeError::Truncated));
    assert_eq!(decode(&b, t(Gpu::Gfx90a)).unwrap(), (i, 8));
}

#[test]
fn docs_counts_are_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/isa.md");
    let doc = std::fs::read_to_string(path).expect("docs/isa.md");
    for gpu in Gpu::ALL {
        let row = format!("| {} | {} |", gpu.name(), count(gpu));
        assert!(doc.contains(&row), "docs/isa.md should contain `{row}`");
    }
    assert!(doc.contains(&format!("{} table entries", Opcode::COUNT)));
}

#[test]
fn branches() {
    let b = Inst::branch(Opcode::s_cbranch_execz, -3);
    assert_eq!(b.branch_offset(), Some(-3));
    assert_eq!(print(&b, t(Gpu::Gfx90a)), "s_cbranch_execz 65533");
    assert_eq!(enc(&b, t(Gpu::Gfx1100)).unwrap().len(), 4);
    assert_eq!(Inst::sopp(Opcode::s_nop, 0).branch_offset(), None);
    let setpc = Inst::new(Opcode::s_setpc_b64, vec![], vec![Operand::s(4, 2)]);
    assert_eq!(setpc.branch_offset(), None);
    let implicit = Opcode::s_and_saveexec_b64.info();
    assert_eq!(implicit.implicit_defs(WaveSize::W64), vec![Reg::new(PhysReg::SCC, 1), Reg::exec(2)]);
    assert_eq!(implicit.implicit_uses(WaveSize::W64), vec![Reg::exec(2)]);
}

#[test]
fn v_cmpx_results_differ_per_generation() {
    let info = Opcode::v_cmpx_eq_u32.info();
    assert_eq!(info.defs(Gpu::Gfx90a), &[Kind::Mask]);
    assert!(info.defs(Gpu::Gfx1100).is_empty());
    let uses = vec![Operand::v(1, 1), Operand::v(2, 1)];
    let gfx9 = Inst::new(Opcode::v_cmpx_eq_u32, vec![Operand::Reg(Reg::vcc(2))], uses.clone());
    let gfx11 = Inst::new(Opcode::v_cmpx_eq_u32, vec![], uses);
    assert_eq!(print(&gfx9, t(Gpu::Gfx90a)), "v_cmpx_eq_u32_e32 vcc, v1, v2");
    assert_eq!(print(&gfx11, t(Gpu::Gfx1100)), "v_cmpx_eq_u32_e32 v1, v2");
    assert!(enc(&gfx11, t(Gpu::Gfx90a)).is_err());
    assert!(enc(&gfx9, t(Gpu::Gfx1100)).is_err());
    assert!(info.implicit_defs(WaveSize::W32).contains(&Reg::exec(1)));
}

#[test]
fn gfx11_carry_out_add_takes_scalar_src1() {
    // Bytes from `llvm-mc-22 -mcpu=gfx1100 -show-encoding`.
    let t11 = t(Gpu::Gfx1100);
    for (text, bytes) in [
        ("v_add_co_u32 v2, vcc_lo, s4, v0", [0x02u8, 0x6a, 0x00, 0xd7, 0x04, 0x00, 0x02, 0x00]),
        ("v_add_co_u32 v2, vcc_lo, v0, s4", [0x02, 0x6a, 0x00, 0xd7, 0x00, 0x09, 0x00, 0x00]),
        ("v_sub_co_u32 v2, vcc_lo, v4, 5", [0x02, 0x6a, 0x01, 0xd7, 0x04, 0x0b, 0x01, 0x00]),
        ("v_subrev_co_u32 v2, vcc_lo, s4, v0", [0x02, 0x6a, 0x02, 0xd7, 0x04, 0x00, 0x02, 0x00]),
    ] {
        let (i, n) = decode(&bytes, t11).unwrap();
        assert_eq!(n, 8);
        assert_eq!(print(&i, t11), text);
        assert_eq!(enc(&i, t11).unwrap(), bytes);
    }
    // On gfx9 the 32-bit form still needs a VGPR src1.
    let i = Inst::new(
        Opcode::v_add_co_u32,
        vec![Operand::v(2, 1), Operand::Reg(Reg::vcc(2))],
        vec![Operand::v(0, 1), Operand::s(4, 1)],
    );
    assert!(enc(&i, t(Gpu::Gfx90a)).is_err());
    assert!(enc(&i.clone().with_e64(), t(Gpu::Gfx90a)).is_ok());
}

#[test]
fn literal_k_and_apertures_and_hints() {
    // v_fmamk_f32 v0, v1, 0x41200000, v2 on gfx942 (bytes from llvm-mc-22).
    let t942 = t(Gpu::Gfx942);
    let b = [0x01u8, 0x05, 0x00, 0x2e, 0x00, 0x00, 0x20, 0x41];
    let (i, n) = decode(&b, t942).unwrap();
    assert_eq!((i.op, n), (Opcode::v_fmamk_f32, 8));
    assert_eq!(print(&i, t942), "v_fmamk_f32 v0, v1, 0x41200000, v2");
    // K must be a literal; a different literal src0 is a second literal.
    let mut k = i.clone();
    k.uses[1] = Operand::Const(242);
    assert!(enc(&k, t942).is_err());
    let mut two = i.clone();
    two.uses[0] = Operand::Literal(1);
    assert!(enc(&two, t942).is_err());
    // s_mov_b64 s[0:1], src_shared_base (all three GPUs).
    for gpu in Gpu::ALL {
        let (m, _) = decode(&[0xeb, 0x01, 0x80, 0xbe], t(gpu)).unwrap();
        assert_eq!(m.uses[0], Operand::Reg(Reg::new(PhysReg::SRC_SHARED_BASE, 2)));
        assert_eq!(print(&m, t(gpu)), "s_mov_b64 s[0:1], src_shared_base");
    }
    // s_delay_alu prints its fields by name, as llvm-mc does.
    let d = |imm| print(&Inst::sopp(Opcode::s_delay_alu, imm), t(Gpu::Gfx1100));
    assert_eq!(d(0), "s_delay_alu 0");
    assert_eq!(d(0x91), "s_delay_alu instid0(VALU_DEP_1) | instskip(NEXT) | instid1(VALU_DEP_1)");
    assert_eq!(d(0x581), "s_delay_alu instid0(VALU_DEP_1) | instid1(SALU_CYCLE_3)");
    assert_eq!(print(&Inst::sopp(Opcode::s_clause, 1), t(Gpu::Gfx1100)), "s_clause 0x1");
}

#[test]
fn vopd_pairs() {
    // Bytes from `llvm-mc-22 -mcpu=gfx1100 -show-encoding`.
    let t11 = t(Gpu::Gfx1100);
    for (text, bytes) in [
        ("v_dual_mul_f32 v0, v1, v2 :: v_dual_mov_b32 v3, v4", &[0x01u8, 0x05, 0xd0, 0xc8, 0x04, 0x01, 0x02, 0x00][..]),
        (
            "v_dual_fmaak_f32 v0, v1, v2, 0x41200000 :: v_dual_mov_b32 v3, v4",
            &[0x01, 0x05, 0x50, 0xc8, 0x04, 0x01, 0x02, 0x00, 0x00, 0x00, 0x20, 0x41][..],
        ),
        ("v_dual_mov_b32 v0, v1 :: v_dual_add_nc_u32 v3, v4, v5", &[0x01, 0x01, 0x20, 0xca, 0x04, 0x0b, 0x02, 0x00][..]),
        ("v_dual_cndmask_b32 v0, v1, v2 :: v_dual_mov_b32 v3, v4", &[0x01, 0x05, 0x50, 0xca, 0x04, 0x01, 0x02, 0x00][..]),
    ] {
        let (i, n) = decode(bytes, t11).unwrap();
        assert_eq!(n, bytes.len());
        assert!(i.vopd_y.is_some());
        assert_eq!(print(&i, t11), text);
        assert_eq!(enc(&i, t11).unwrap(), bytes);
        // VOPD needs wave32.
        let w64 = Target { gpu: Gpu::Gfx1100, wave: WaveSize::W64 };
        assert!(decode(bytes, w64).is_err());
        assert!(enc(&i, w64).is_err());
    }
    // Same src0 bank, same destination parity, a Y-only operation as X.
    let mov = Opcode::v_dual_mov_b32;
    let pair = |x, y, d: [u16; 2], s: [u16; 2]| {
        Inst::vopd(x, y, vec![Operand::v(d[0], 1), Operand::v(d[1], 1)], vec![Operand::v(s[0], 1), Operand::v(s[1], 1)])
    };
    assert!(enc(&pair(mov, mov, [0, 3], [1, 6]), t11).is_ok());
    assert!(enc(&pair(mov, mov, [0, 3], [1, 5]), t11).is_err());
    assert!(enc(&pair(mov, mov, [0, 2], [1, 6]), t11).is_err());
    let and = Opcode::v_dual_and_b32;
    let mut i = pair(mov, and, [0, 3], [1, 6]);
    i.uses.push(Operand::v(7, 1));
    assert!(enc(&i, t11).is_ok());
    i.op = and;
    i.vopd_y = Some(mov);
    i.uses = vec![Operand::v(1, 1), Operand::v(7, 1), Operand::v(6, 1)];
    assert!(enc(&i, t11).is_err());
}
