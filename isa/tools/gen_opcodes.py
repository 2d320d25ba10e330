#!/usr/bin/env python3
"""Generates isa/src/opcodes/table.rs from spec.py, taking every opcode number from
llvm-mc-22 (the same oracle the cross-check test uses).

Usage: python3 isa/tools/gen_opcodes.py   (from the repository root)

For each instruction and GPU it assembles one canonical line; if llvm-mc rejects it,
the instruction does not exist on that GPU (None in the table). The opcode field is
then read from the first dword at the bit position of the instruction's format.
"""
import os, re, subprocess, sys
sys.path.insert(0, os.path.dirname(__file__))
from spec import SPEC

GPUS = ["gfx90a", "gfx942", "gfx1100"]
# (shift, bits) of the opcode field in the first dword, per format and generation.
OPF = {
    "SOP1": {9: (8, 8), 11: (8, 8)}, "SOP2": {9: (23, 7), 11: (23, 7)},
    "SOPK": {9: (23, 5), 11: (23, 5)}, "SOPC": {9: (16, 7), 11: (16, 7)},
    "SOPP": {9: (16, 7), 11: (16, 7)}, "SMEM": {9: (18, 8), 11: (18, 8)},
    "VOP1": {9: (9, 8), 11: (9, 8)}, "VOP2": {9: (25, 6), 11: (25, 6)},
    "VOPC": {9: (17, 8), 11: (17, 8)}, "VOP3": {9: (16, 10), 11: (16, 10)},
    "VOP3B": {9: (16, 10), 11: (16, 10)}, "VOP3P": {9: (16, 7), 11: (16, 7)},
    "DS": {9: (17, 8), 11: (18, 8)}, "FLAT": {9: (18, 7), 11: (18, 7)},
    "GLOBAL": {9: (18, 7), 11: (18, 7)}, "SCRATCH": {9: (18, 7), 11: (18, 7)},
    "MUBUF": {9: (18, 7), 11: (18, 8)},
}

def vopd_text(name, sig, as_y):
    """A VOPD pair with `name` as the X (or Y) half and v_dual_mov_b32 as the other;
    the registers use different VGPR banks, and the destinations differ in parity."""
    uses = [u for u in sig.split("|")[1].split(",") if u]
    regs = iter(["v6", "v7"] if as_y else ["v1", "v2"])
    ops = ["v3" if as_y else "v0"]
    for u in uses:
        if u == "k":
            ops.append("0x41200000")
        elif u != "m":
            ops.append(next(regs))
    half = f"{name} " + ", ".join(ops)
    return f"v_dual_mov_b32 v0, v1 :: {half}" if as_y else f"{half} :: v_dual_mov_b32 v3, v6"


def reg(prefix, base, n):
    return f"{prefix}{base}" if n == 1 else f"{prefix}[{base}:{base + n - 1}]"

def uses11(flags):
    """The gfx11 source kinds from a "uses11=..." flag, or None."""
    for f in flags.split():
        if f.startswith("uses11="):
            return f[len("uses11="):]
    return None

def text(name, fmt, sig, gen, e64):
    defs, uses = sig.split("|")
    if gen == 11 and uses11(SPEC_FLAGS[name]) is not None:
        uses = uses11(SPEC_FLAGS[name])
    defs = [d for d in defs.split(",") if d and "opt_def" not in SPEC_FLAGS[name]
            and not (gen == 11 and "nodef11" in SPEC_FLAGS[name])]
    uses = [u for u in uses.split(",") if u]
    ops = []
    vnext = [0]
    def vreg(n, p="v"):
        b = (vnext[0] + 3) // 4 * 4
        vnext[0] = b + max(n, 1)
        return reg(p, b, n)
    for i, k in enumerate(defs + uses):
        is_def = i < len(defs)
        t, n = re.match(r"([a-z]+)(\d*)", k).groups()
        n = int(n) if n else 1
        if t == "s" and name.startswith("s_waitcnt_"):
            ops.append("null")
        elif t in ("s", "r"):
            ops.append(reg("s", {1: 4, 2: 4, 4: 4, 8: 8, 16: 16}[n], n))
        elif t in ("v", "c", "x"):
            ops.append(vreg(n))
        elif t == "a":
            ops.append(reg("a", 0, n))
        elif t == "k":
            ops.append("0x41200000")
        elif t == "m":
            if fmt in ("VOP2", "VOPC") and not e64:
                ops.append("vcc" if gen == 9 else "vcc_lo")
            else:
                ops.append("s[4:5]" if gen == 9 else "s4")
        elif t == "va":
            ops.append({"FLAT": "v[4:5]", "GLOBAL": "v[4:5]", "SCRATCH": "v4", "MUBUF": "off"}[fmt])
        elif t == "sa":
            ops.append({"SMEM": "0x0", "GLOBAL": "off", "SCRATCH": "off"}[fmt])
    if fmt == "MUBUF" and ops:
        ops[-1] = "0"
    suffix = ""
    if fmt in ("VOP1", "VOP2", "VOPC"):
        suffix = "_e64" if e64 else "_e32"
    # A VOP3-only form of an instruction that also has a shorter one.
    if fmt == "VOP3" and gen == 11 and "e64name11" in SPEC_FLAGS[name].split():
        suffix = "_e64"
    if fmt in ("SOPK",):
        ops.append("0x1")
    if fmt == "SOPP" and "imm" in SPEC_FLAGS[name]:
        ops.append("0")
    return f"{name}{suffix} " + ", ".join(ops)

SPEC_FLAGS = {}

def assemble(gpu, line):
    r = subprocess.run(["llvm-mc-22", "-arch=amdgcn", f"-mcpu={gpu}", "-show-encoding"],
                       input=line + "\n", capture_output=True, text=True)
    if r.returncode != 0 or "error" in r.stderr:
        return None
    m = re.search(r"encoding: \[([^\]]*)\]", r.stdout)
    if not m:
        return None
    b = [int(x, 16) for x in m.group(1).split(",")]
    return b[0] | b[1] << 8 | b[2] << 16 | b[3] << 24

def opcode(gpu, name, fmt, sig, e64=False):
    gen = 11 if gpu == "gfx1100" else 9
    if fmt == "VOPD":
        # The X code (bits 25:22) if the op can be the X half, else the Y code (21:17).
        d = assemble(gpu, vopd_text(name, sig, False))
        if d is not None:
            return (d >> 22) & 0xF
        d = assemble(gpu, vopd_text(name, sig, True))
        return None if d is None else (d >> 17) & 0x1F
    line = text(name, fmt, sig, gen, e64)
    d = assemble(gpu, line)
    if d is None:
        return None
    f = "VOP3" if e64 else fmt
    sh, bits = OPF[f][gen]
    return (d >> sh) & ((1 << bits) - 1)

FMT_RS = {"SOP1": "Sop1", "SOP2": "Sop2", "SOPK": "Sopk", "SOPC": "Sopc", "SOPP": "Sopp",
          "SMEM": "Smem", "VOP1": "Vop1", "VOP2": "Vop2", "VOPC": "Vopc", "VOP3": "Vop3",
          "VOP3B": "Vop3b", "VOP3P": "Vop3p", "DS": "Ds", "FLAT": "Flat", "GLOBAL": "Global",
          "SCRATCH": "Scratch", "MUBUF": "Mubuf", "VOPD": "Vopd"}

def kind(k, is_def):
    t, n = re.match(r"([a-z]+)(\d*)", k).groups()
    n = int(n) if n else 1
    return {"s": f"Kind::Sdst({n})" if is_def else f"Kind::Ssrc({n})", "r": f"Kind::Sreg({n})",
            "v": f"Kind::Vgpr({n})", "c": f"Kind::Src({n})", "a": f"Kind::Agpr({n})",
            "x": f"Kind::Vdata({n})", "m": "Kind::Mask", "k": "Kind::KImm", "va": "Kind::Vaddr", "sa": "Kind::Saddr"}[t]

def opt(x):
    return "None" if x is None else f"Some({x:#x})"

def main():
    out = []
    for (name, n11, f9, f11, sig, flags) in SPEC:
        SPEC_FLAGS[name] = flags
        if n11:
            SPEC_FLAGS[n11] = flags
    missing = []
    for (name, n11, f9, f11, sig, flags) in SPEC:
        n11 = n11 or name
        ops, e64s = [], []
        for gpu in GPUS:
            nm, f = (n11, f11) if gpu == "gfx1100" else (name, f9)
            if nm == "-":
                ops.append(None)
                e64s.append(None)
                continue
            ops.append(opcode(gpu, nm, f, sig))
            # v_nop's VOP3 form prints as plain `v_nop`, so it cannot round-trip; leave it out.
            has64 = f in ("VOP1", "VOP2", "VOPC") and ops[-1] is not None and name != "v_nop"
            e64s.append(opcode(gpu, nm, f, sig, True) if has64 else None)
        if all(o is None for o in ops):
            missing.append(name)
            continue
        defs, uses = sig.split("|")
        dk = [kind(k, True) for k in defs.split(",") if k]
        # "nodef11": the gfx11 form has no results (v_cmpx writes only EXEC there).
        defs11 = "Some(&[])" if "nodef11" in flags.split() else "None"
        u11 = uses11(flags)
        uses11_rs = "None" if u11 is None else "Some(&[" + ", ".join(kind(k, False) for k in u11.split(",") if k) + "])"
        flags = " ".join(f for f in flags.split() if f not in ("nodef11", "e64name11") and not f.startswith("uses11="))
        uk = [kind(k, False) for k in uses.split(",") if k]
        fl = [f"OpFlags::{f.upper()}.bits()" for f in flags.split()]
        flags_rs = "OpFlags::from_bits_retain(" + (" | ".join(fl) if fl else "0") + ")"
        if n11 == "-":
            n11 = name
        out.append((name, n11, f9, f11, dk, uk, flags_rs, ops, e64s, defs11, uses11_rs))
    if missing:
        print("not found on any GPU:", missing, file=sys.stderr)
    rs = ["// @generated by isa/tools/gen_opcodes.py from isa/tools/spec.py; do not edit by hand.",
          "// Opcode numbers were read from llvm-mc-22; the cross-check test re-verifies them on every run.",
          "",
          "use super::{Format, Kind, OpFlags, OpInfo};",
          "",
          "/// Every instruction amdgpu-isa knows, named as on gfx9 (gfx11 spellings are in the table).",
          "#[allow(non_camel_case_types, missing_docs)]",
          "#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]",
          "#[repr(u16)]",
          "pub enum Opcode {"]
    for e in out:
        rs.append(f"    {e[0]},")
    rs.append("}")
    rs.append("")
    rs.append("impl Opcode {")
    rs.append("    /// All opcodes, in table order.")
    rs.append("    #[rustfmt::skip]")
    rs.append(f"    pub const ALL: [Opcode; {len(out)}] = [" + ", ".join(f"Opcode::{e[0]}" for e in out) + "];")
    rs.append("}")
    rs.append("")
    rs.append("/// One row per [`Opcode`], in the same order. `op`/`op_e64` columns: gfx90a, gfx942, gfx1100.")
    rs.append("#[rustfmt::skip]")
    rs.append(f"pub(super) static TABLE: [OpInfo; {len(out)}] = [")
    for (name, n11, f9, f11, dk, uk, flags_rs, ops, e64s, defs11, uses11_rs) in out:
        rs.append(f'    OpInfo {{ name: "{name}", name11: "{n11}", format: [Format::{FMT_RS[f9]}, Format::{FMT_RS[f11]}], '
                  f'defs9: &[{", ".join(dk)}], defs11: {defs11}, uses9: &[{", ".join(uk)}], uses11: {uses11_rs}, flags: {flags_rs}, '
                  f'op: [{", ".join(opt(o) for o in ops)}], op_e64: [{", ".join(opt(o) for o in e64s)}] }},')
    rs.append("];")
    path = os.path.join(os.path.dirname(__file__), "..", "src", "opcodes", "table.rs")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(rs) + "\n")
    n = [sum(1 for e in out if e[7][i] is not None) for i in range(3)]
    print(f"{len(out)} entries; per GPU: gfx90a={n[0]} gfx942={n[1]} gfx1100={n[2]}")

if __name__ == "__main__":
    main()
