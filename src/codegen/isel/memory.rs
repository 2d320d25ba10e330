//! Pointers and memory: `ptradd`, loads and stores in each address space (scalar, buffer, global, flat, LDS, scratch) and atomics.

use super::*;

/// The byte offsets a global load or store holds in its offset field: 13 bits,
/// signed, on gfx90a, gfx942 and gfx1100 alike (llvm-mc-22 takes -4096 and
/// 4095 and refuses 4096 on each; isa's encoder checks the same range).
const GLOBAL_OFFSETS: std::ops::RangeInclusive<i64> = -4096..=4095;

impl<'a> Isel<'a> {
    /// `fold`: the result may stay a [`Lowered::LdsAddr`] or
    /// [`Lowered::VmemAddr`] (its uses are all loads and stores that fold it,
    /// see `lds_folded_pointers` and `global_folded_pointers`).
    pub(super) fn ptradd(&mut self, ptr: &Operand, offset: &Operand, divergent: bool, fold: bool) -> Result<Lowered, Diagnostic> {
        let (p, o) = (self.lowered(ptr), self.lowered(offset));
        let divergent = divergent || in_vector_registers(&p) || in_vector_registers(&o);
        let space = self.space_of(ptr);
        let offset_is_64 = self.func.operand_type(offset).bits() == 64;
        if space.pointer_bits() == 32 {
            let o32 = match o {
                Lowered::S64(pair) => {
                    let s = self.vreg(Class::Sgpr);
                    self.emit(Opcode::s_mov_b32, &[Dst::R(s)], &[Src::Half(pair, 0)], |_| {});
                    Lowered::S(s)
                }
                Lowered::V64(lo, _) => Lowered::V(lo),
                Lowered::Imm(bits) => Lowered::Imm(bits & 0xffff_ffff),
                other => other,
            };
            if fold && space == AddrSpace::Local {
                // A VGPR value plus a constant that fits the DS offset field.
                let value = |o: &Operand| match o {
                    Operand::Value(v) => Some(*v),
                    Operand::Const(_) => None,
                };
                let folded = match (&p, &o32) {
                    (Lowered::V(_), Lowered::Imm(c)) if *c <= 0xffff => value(ptr).map(|root| (root, *c as u32)),
                    (Lowered::Imm(c), Lowered::V(_)) if *c <= 0xffff => value(offset).map(|root| (root, *c as u32)),
                    (Lowered::LdsAddr { root, imm }, Lowered::Imm(c)) if u64::from(*imm) + *c <= 0xffff => Some((*root, imm + *c as u32)),
                    _ => None,
                };
                if let Some((root, imm)) = folded {
                    return Ok(Lowered::LdsAddr { root, imm });
                }
            }
            let p = if let Lowered::LdsAddr { .. } = p { Lowered::V(self.to_v(&p)?) } else { p };
            return self.binary32(BinOp::Add, p, o32, divergent);
        }
        // Address folding for global memory: uniform base + divergent i32 offset
        // stays symbolic; constant offsets go to the instruction's immediate.
        if space == AddrSpace::Global || space == AddrSpace::Constant {
            if let (true, Lowered::Imm(bits)) = (fold, &o) {
                let add = if offset_is_64 { *bits as i64 } else { *bits as u32 as i32 as i64 };
                if let Some(folded) = Self::fold_vmem_offset(&p, add) {
                    return Ok(folded);
                }
            }
            // A uniform global or constant pointer plus a small constant,
            // used only by accesses of this block: the SGPR base, a zero
            // VGPR offset and the constant in the immediate (no 64-bit
            // scalar add); a scalar load keeps the constant in its offset.
            if let (true, Lowered::S64(base), Lowered::Imm(bits)) = (fold, &p, &o) {
                let add = if offset_is_64 { *bits as i64 } else { *bits as u32 as i32 as i64 };
                if (0..=*GLOBAL_OFFSETS.end()).contains(&add) {
                    let zero = self.zero_vgpr();
                    return Ok(Lowered::Addr { base: *base, offset: zero, imm: add as i32, zext: true });
                }
            }
            match (&p, &o) {
                (Lowered::S64(base), _) if fold && divergent => {
                    if let Some(off) = self.zero_extended_offset(offset)? {
                        return Ok(Lowered::Addr { base: *base, offset: off, imm: 0, zext: true });
                    }
                    if let (Lowered::V(off), false) = (&o, offset_is_64) {
                        return Ok(Lowered::Addr { base: *base, offset: *off, imm: 0, zext: false });
                    }
                }
                (Lowered::S64(base), Lowered::V(off)) if !offset_is_64 => {
                    return Ok(Lowered::Addr { base: *base, offset: *off, imm: 0, zext: false });
                }
                (Lowered::Addr { base, offset, imm, zext }, Lowered::Imm(bits)) => {
                    let add = if offset_is_64 { *bits as i64 } else { *bits as u32 as i32 as i64 };
                    let sum = i64::from(*imm) + add;
                    if GLOBAL_OFFSETS.contains(&sum) {
                        return Ok(Lowered::Addr { base: *base, offset: *offset, imm: sum as i32, zext: *zext });
                    }
                }
                _ => {}
            }
        }
        // base + ext(x) * 2^k (an index scaled by the element size): one
        // 64-bit multiply-add; the extension and shift selected before it are
        // left unread (machine_dce removes them).
        if let Operand::Value(ov) = offset {
            if let (Some((x, k, signed)), true) = (self.scaled_ext.get(ov).cloned(), divergent) {
                let lx = self.lowered(&x);
                let base = match p {
                    Lowered::S64(b) => Some((Src::R(b), true)),
                    Lowered::V64(lo, hi) => Some((Src::VPair(lo, hi), false)),
                    _ => None,
                };
                if let Some((base, scalar_base)) = base {
                    let gfx11 = self.target.gpu.generation() == isa::Generation::Gfx11;
                    let xs = match lx {
                        Lowered::V(v) => Src::R(v),
                        Lowered::S(s) if !scalar_base || gfx11 => Src::R(s),
                        ref other => Src::R(self.to_v(other)?),
                    };
                    let (lo, hi) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
                    let carry = self.vreg(self.mask_class());
                    let opcode = if signed { Opcode::v_mad_i64_i32 } else { Opcode::v_mad_u64_u32 };
                    self.emit(opcode, &[Dst::VPair(lo, hi), Dst::R(carry)], &[xs, Src::Imm(1 << k), base], |_| {});
                    return Ok(Lowered::V64(lo, hi));
                }
            }
        }
        // 64-bit pointer + sign-extended (or 64-bit) offset.
        let o64 = if offset_is_64 {
            o
        } else {
            match o {
                Lowered::Imm(bits) => Lowered::Imm(bits as u32 as i32 as i64 as u64),
                Lowered::S(s) => Lowered::S64(self.uniform_extend(s, true)),
                Lowered::V(v) => {
                    let hi = self.vreg(Class::Vgpr);
                    self.emit(Opcode::v_ashrrev_i32, &[Dst::R(hi)], &[Src::Imm(31), Src::R(v)], |_| {});
                    Lowered::V64(v, hi)
                }
                _ => return Err(self.error("internal: ptradd offset")),
            }
        };
        if let Lowered::Imm(0) = o64 {
            return Ok(p);
        }
        if let (true, true, Lowered::V64(lo, hi)) = (fold, matches!(space, AddrSpace::Global | AddrSpace::Constant), &p) {
            // One VOP3 carry add reads one SGPR before gfx11 (the carry-in
            // is one), so there the addend's high half comes from a VGPR.
            let gfx11 = self.target.gpu.generation() == isa::Generation::Gfx11;
            let add = match o64 {
                Lowered::S64(pair) if gfx11 => Some([Addend::Half(pair, 0), Addend::Half(pair, 1)]),
                Lowered::S64(pair) => Some([Addend::Half(pair, 0), Addend::R(self.vector_copy(Src::Half(pair, 1)))]),
                Lowered::V64(a, b) => Some([Addend::R(a), Addend::R(b)]),
                _ => None,
            };
            if let Some(add) = add {
                return Ok(Lowered::VSum { lo: *lo, hi: *hi, add });
            }
        }
        self.binary64(BinOp::Add, p, o64, divergent)
    }

    /// Where a private access of `size` bytes through `ptr` (lowered: `p`)
    /// goes: a stack slot, or one plus a constant, is its local in the frame
    /// (no address register; expansion adds the frame's base); a pointer
    /// plus a constant that fits the offset field is that pointer's register
    /// with the constant in the instruction; anything else is the pointer's
    /// register.
    fn private_place(&mut self, ptr: &Operand, p: &Lowered, size: u32) -> Result<(PrivateAt, Option<ra::VReg>), Diagnostic> {
        let (root, c) = match ptr {
            Operand::Value(v) => self.private_offsets.get(v).cloned().unwrap_or((ptr.clone(), 0)),
            Operand::Const(_) => (ptr.clone(), 0),
        };
        if let Some(&local) = match &root {
            Operand::Value(r) => self.slot_locals.get(r),
            Operand::Const(_) => None,
        } {
            return Ok((PrivateAt::Local(local + c), None));
        }
        if c > 0 && c + size <= 4095 {
            let base = self.lowered(&root);
            return Ok((PrivateAt::Pointer(c), Some(self.to_v(&base)?)));
        }
        Ok((PrivateAt::Pointer(0), Some(self.to_v(p)?)))
    }

    pub(super) fn load(&mut self, ty: &Type, ptr: &Operand, align: u32, divergent: bool) -> Result<Lowered, Diagnostic> {
        let p = self.lowered(ptr);
        let space = self.space_of(ptr);
        if space == AddrSpace::Private {
            let (at, addr) = self.private_place(ptr, &p, ty.size())?;
            return self.load_private_value(ty, at, addr);
        }
        if let Type::Vector(elem, n) = ty {
            // A vector that scalar loads can read (uniform, from memory no
            // write reaches) goes element by element to SGPRs; otherwise
            // multi-dword vector loads where they apply.
            let scalar = self.scalar_load_allowed(&p, space, align.min(elem.align()), divergent) && matches!(elem.bits(), 32 | 64);
            if !scalar {
                if let Some(parts) = self.load_dwords(elem, *n, &p, space)? {
                    return Ok(Lowered::Agg(parts));
                }
            }
            let mut parts = Vec::new();
            for i in 0..u32::from(*n) {
                let part_ptr = self.offset_pointer(&p, space, i * elem.size())?;
                parts.push(self.load_scalar(elem, part_ptr, space, align.min(elem.align()), divergent)?);
            }
            return Ok(Lowered::Agg(parts));
        }
        self.load_scalar(ty, p, space, align, divergent)
    }

    /// A divergent global address plus a constant the offset field holds.
    fn fold_vmem_offset(p: &Lowered, add: i64) -> Option<Lowered> {
        let (base, imm) = match p {
            Lowered::V64(..) | Lowered::VSum { .. } => (p.clone(), add),
            Lowered::VmemAddr { base, imm } => ((**base).clone(), i64::from(*imm) + add),
            _ => return None,
        };
        GLOBAL_OFFSETS.contains(&imm).then(|| Lowered::VmemAddr { base: Box::new(base), imm: imm as i32 })
    }

    pub(super) fn offset_pointer(&mut self, p: &Lowered, space: AddrSpace, offset: u32) -> Result<Lowered, Diagnostic> {
        if offset == 0 {
            return Ok(p.clone());
        }
        if matches!(space, AddrSpace::Global | AddrSpace::Constant) {
            if let Some(folded) = Self::fold_vmem_offset(p, i64::from(offset)) {
                return Ok(folded);
            }
        }
        if let Lowered::Addr { base, offset: off, imm, zext } = *p {
            let sum = i64::from(imm) + i64::from(offset);
            if GLOBAL_OFFSETS.contains(&sum) {
                return Ok(Lowered::Addr { base, offset: off, imm: sum as i32, zext });
            }
            let (lo, hi) = self.to_v64(p)?;
            return self.binary64(BinOp::Add, Lowered::V64(lo, hi), Lowered::Imm(u64::from(offset)), true);
        }
        if let Lowered::LdsAddr { root, imm } = *p {
            if imm + offset <= 0xffff {
                return Ok(Lowered::LdsAddr { root, imm: imm + offset });
            }
        }
        // A uniform pointer plus a small constant (an element of a vector or
        // struct access at a uniform address): the SGPR base with the
        // constant in the instruction, as a scalar load takes it (and a
        // vector access through the base with a zero VGPR offset), instead
        // of a 64-bit scalar add per element.
        if let (AddrSpace::Global | AddrSpace::Constant, Lowered::S64(base)) = (space, p) {
            if i64::from(offset) <= *GLOBAL_OFFSETS.end() {
                let zero = self.zero_vgpr();
                return Ok(Lowered::Addr { base: *base, offset: zero, imm: offset as i32, zext: true });
            }
        }
        let divergent = in_vector_registers(p);
        if space.pointer_bits() == 32 {
            self.binary32(BinOp::Add, p.clone(), Lowered::Imm(u64::from(offset)), divergent)
        } else {
            self.binary64(BinOp::Add, p.clone(), Lowered::Imm(u64::from(offset)), divergent)
        }
    }

    /// i8/i16 loads: the value lands zero-extended in a VGPR (i8/i16 values live
    /// in 32-bit registers with undefined upper bits; extensions make them exact).
    pub(super) fn load_small(&mut self, ty: &Type, p: Lowered, space: AddrSpace) -> Result<Lowered, Diagnostic> {
        let byte = ty.bits() == 8;
        let d = self.vreg(Class::Vgpr);
        match space {
            AddrSpace::Local => {
                let (addr, imm) = self.lds_address(&p)?;
                let op = if byte { Opcode::ds_read_u8 } else { Opcode::ds_read_u16 };
                self.emit(op, &[Dst::R(d)], &[Src::R(addr)], |i| i.offset = imm);
            }
            AddrSpace::Global | AddrSpace::Constant | AddrSpace::Flat => {
                let op = match (space, byte) {
                    (AddrSpace::Flat, true) => Opcode::flat_load_ubyte,
                    (AddrSpace::Flat, false) => Opcode::flat_load_ushort,
                    (_, true) => Opcode::global_load_ubyte,
                    _ => Opcode::global_load_ushort,
                };
                let (mut uses, imm) = self.vmem_address(&p, space)?;
                if space == AddrSpace::Flat {
                    uses.truncate(1);
                }
                self.emit(op, &[Dst::R(d)], &uses, |i| i.offset = imm);
            }
            AddrSpace::Private => return Err(self.error("internal: private memory is accessed through load_private_value and store_private_value")),
        }
        Ok(Lowered::V(d))
    }

    /// Whether a uniform address can be a scalar load's: a uniform pointer
    /// (or a constant), or one plus a small constant (the vector form
    /// with a zero VGPR offset, whose constant goes to the instruction).
    fn scalar_address(&self, p: &Lowered) -> bool {
        match p {
            Lowered::S64(_) | Lowered::Imm(..) => true,
            Lowered::Addr { offset, imm, .. } => self.zero_vgprs.contains(offset) && (0..4096).contains(imm),
            _ => false,
        }
    }

    /// Whether a load of 32 or 64 bits at `p` may be a scalar load: a
    /// uniform value, 4-aligned, at an address `scalar_address` takes, not
    /// volatile, not where lanes may be off, from constant memory or from
    /// global memory no write in the kernel can reach (unclobbered.rs).
    fn scalar_load_allowed(&self, p: &Lowered, space: AddrSpace, align: u32, divergent: bool) -> bool {
        matches!(space, AddrSpace::Constant | AddrSpace::Global)
            && !divergent
            && align >= 4
            && self.scalar_address(p)
            && !self.in_partial_exec()
            && !self.volatile_access
            && (space == AddrSpace::Constant || self.inst_ref.is_some_and(|i| self.uni.unclobbered_loads.contains(&(i as *const Inst))))
    }

    pub(super) fn load_scalar(&mut self, ty: &Type, p: Lowered, space: AddrSpace, align: u32, divergent: bool) -> Result<Lowered, Diagnostic> {
        let bits = ty.bits();
        if bits == 8 || bits == 16 {
            return self.load_small(ty, p, space);
        }
        if bits != 32 && bits != 64 {
            return Err(self.error(format!("loads of {ty} are not supported by the code generator yet")));
        }
        let dwords = (bits / 32) as u8;
        match space {
            AddrSpace::Local if dwords == 2 && align < 8 => {
                // ds_read_b64 needs 8-byte alignment: two dword reads instead.
                let (lo_addr, lo_imm, hi_addr, hi_imm) = self.lds_address_pair(&p)?;
                let (lo, hi) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
                self.emit(Opcode::ds_read_b32, &[Dst::R(lo)], &[Src::R(lo_addr)], |i| i.offset = lo_imm);
                self.emit(Opcode::ds_read_b32, &[Dst::R(hi)], &[Src::R(hi_addr)], |i| i.offset = hi_imm);
                Ok(Lowered::V64(lo, hi))
            }
            AddrSpace::Local => {
                let (addr, imm) = self.lds_address(&p)?;
                let op = if dwords == 1 { Opcode::ds_read_b32 } else { Opcode::ds_read_b64 };
                if dwords == 1 {
                    let d = self.vreg(Class::Vgpr);
                    self.emit(op, &[Dst::R(d)], &[Src::R(addr)], |i| i.offset = imm);
                    Ok(Lowered::V(d))
                } else {
                    let (lo, hi) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
                    self.emit(op, &[Dst::VPair(lo, hi)], &[Src::R(addr)], |i| i.offset = imm);
                    Ok(Lowered::V64(lo, hi))
                }
            }
            // Scalar loads ignore the low two address bits: only for 4-aligned data.
            AddrSpace::Constant | AddrSpace::Global if self.scalar_load_allowed(&p, space, align, divergent) => {
                // Uniform address in constant memory, or in global memory
                // that nothing in the kernel can have written before the
                // load: a scalar load (a uniform pointer plus a small
                // constant keeps the constant in the instruction).
                let (base, imm) = match p {
                    Lowered::Addr { base, imm, .. } => (base, imm),
                    _ => (self.to_s64(&p)?, 0),
                };
                if dwords == 1 {
                    let d = self.vreg(Class::Sgpr);
                    self.emit(Opcode::s_load_dword, &[Dst::R(d)], &[Src::R(base), Src::Off], |i| i.offset = imm);
                    Ok(Lowered::S(d))
                } else {
                    let d = self.vreg(Class::SgprPair);
                    self.emit(Opcode::s_load_dwordx2, &[Dst::R(d)], &[Src::R(base), Src::Off], |i| i.offset = imm);
                    Ok(Lowered::S64(d))
                }
            }
            AddrSpace::Global | AddrSpace::Constant | AddrSpace::Flat => {
                let op = match (space, dwords) {
                    (AddrSpace::Flat, 1) => Opcode::flat_load_dword,
                    (AddrSpace::Flat, _) => Opcode::flat_load_dwordx2,
                    (_, 1) => Opcode::global_load_dword,
                    _ => Opcode::global_load_dwordx2,
                };
                let (addr, imm) = self.vmem_address(&p, space)?;
                let mut uses = addr;
                let dst = if dwords == 1 {
                    let d = self.vreg(Class::Vgpr);
                    (vec![Dst::R(d)], Lowered::V(d))
                } else {
                    let (lo, hi) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
                    (vec![Dst::VPair(lo, hi)], Lowered::V64(lo, hi))
                };
                if space == AddrSpace::Flat {
                    uses.truncate(1);
                }
                self.emit(op, &dst.0, &uses, |i| i.offset = imm);
                Ok(dst.1)
            }
            AddrSpace::Private => Err(self.error("internal: private memory is accessed through load_private_value and store_private_value")),
        }
    }

    /// Whether a vector of `elem` in `space` goes through multi-dword
    /// global accesses (`Fill::Tuple`): 32- and 64-bit elements in global
    /// memory, not volatile. Global accesses need 4-byte alignment only
    /// (LLVM selects `global_load_dwordx4` for OpenCL's `vload4`, align 4).
    fn multi_dword(&self, elem: &Type, space: AddrSpace) -> bool {
        space == AddrSpace::Global && !self.volatile_access && matches!(elem.bits(), 32 | 64) && !matches!(elem, Type::I1)
    }

    /// The address operands of the chunk `offset` bytes into an access at
    /// `p`, if the chunk's last dword still fits the offset field.
    fn chunk_address(&mut self, p: &Lowered, offset: u32, dwords: u32) -> Result<(Vec<Src>, i32), Diagnostic> {
        let part = self.offset_pointer(p, AddrSpace::Global, offset)?;
        let (uses, imm) = self.vmem_address(&part, AddrSpace::Global)?;
        if GLOBAL_OFFSETS.contains(&(i64::from(imm) + 4 * i64::from(dwords - 1))) {
            return Ok((uses, imm));
        }
        let plain = self.vmem_address_plain(&part, AddrSpace::Global)?;
        Ok((plain, 0))
    }

    /// A vector load in chunks of up to four dwords (`_dwordx2`..`_dwordx4`,
    /// or dword loads where the allocation does not place a chunk
    /// consecutively); None where [`Isel::multi_dword`] says no.
    fn load_dwords(&mut self, elem: &Type, n: u8, p: &Lowered, space: AddrSpace) -> Result<Option<Vec<Lowered>>, Diagnostic> {
        if !self.multi_dword(elem, space) {
            return Ok(None);
        }
        let per = elem.bits() / 32;
        let total = u32::from(n) * per;
        let mut regs: Vec<ra::VReg> = Vec::new();
        let mut at = 0;
        while at < total {
            let m = (total - at).min(4);
            let (uses, imm) = self.chunk_address(p, 4 * at, m)?;
            let chunk: Vec<ra::VReg> = (0..m).map(|_| self.vreg(Class::Vgpr)).collect();
            if m == 1 {
                self.emit(Opcode::global_load_dword, &[Dst::R(chunk[0])], &uses, |i| i.offset = imm);
            } else {
                let mut tuple = [chunk[0]; 4];
                tuple[..chunk.len()].copy_from_slice(&chunk);
                let op = [Opcode::global_load_dwordx2, Opcode::global_load_dwordx3, Opcode::global_load_dwordx4][m as usize - 2];
                self.emit(op, &[Dst::Tuple(tuple, m as u8)], &uses, |i| i.offset = imm);
            }
            regs.extend(chunk);
            at += m;
        }
        Ok(Some(if per == 1 { regs.into_iter().map(Lowered::V).collect() } else { regs.chunks(2).map(|h| Lowered::V64(h[0], h[1])).collect() }))
    }

    /// A vector store in chunks of up to four dwords, as [`Isel::load_dwords`].
    fn store_dwords(&mut self, elem: &Type, parts: &[Lowered], p: &Lowered, space: AddrSpace) -> Result<bool, Diagnostic> {
        if !self.multi_dword(elem, space) {
            return Ok(false);
        }
        let mut data: Vec<ra::VReg> = Vec::new();
        for part in parts {
            if elem.bits() == 64 {
                let (lo, hi) = self.to_v64(part)?;
                data.extend([lo, hi]);
            } else {
                data.push(self.to_v(part)?);
            }
        }
        let mut at = 0;
        for chunk in data.chunks(4) {
            let m = chunk.len() as u32;
            let (uses, imm) = self.chunk_address(p, 4 * at, m)?;
            let (addr, saddr) = (uses[0], uses[1]);
            if m == 1 {
                self.emit(Opcode::global_store_dword, &[], &[addr, Src::R(chunk[0]), saddr], |i| i.offset = imm);
            } else {
                let mut tuple = [chunk[0]; 4];
                tuple[..chunk.len()].copy_from_slice(chunk);
                let op = [Opcode::global_store_dwordx2, Opcode::global_store_dwordx3, Opcode::global_store_dwordx4][m as usize - 2];
                self.emit(op, &[], &[addr, Src::Tuple(tuple, m as u8), saddr], |i| i.offset = imm);
            }
            at += m;
        }
        Ok(true)
    }

    /// A DS instruction's address VGPR and offset field.
    pub(super) fn lds_address(&mut self, p: &Lowered) -> Result<(ra::VReg, i32), Diagnostic> {
        match *p {
            Lowered::LdsAddr { root, imm } => match self.lowered(&Operand::Value(root)) {
                Lowered::V(base) => Ok((base, imm as i32)),
                _ => Ok((self.to_v(p)?, 0)),
            },
            _ => Ok((self.to_v(p)?, 0)),
        }
    }

    /// The addresses of the two dwords of an unaligned 64-bit DS access.
    fn lds_address_pair(&mut self, p: &Lowered) -> Result<(ra::VReg, i32, ra::VReg, i32), Diagnostic> {
        let (lo, lo_imm) = self.lds_address(p)?;
        if lo_imm + 4 <= 0xffff {
            return Ok((lo, lo_imm, lo, lo_imm + 4));
        }
        let hi = self.offset_pointer(&Lowered::V(lo), AddrSpace::Local, lo_imm as u32 + 4)?;
        let hi = self.to_v(&hi)?;
        Ok((lo, lo_imm, hi, 0))
    }

    /// Address operands of a global/flat access: (vaddr, saddr).
    pub(super) fn vmem_address(&mut self, p: &Lowered, space: AddrSpace) -> Result<(Vec<Src>, i32), Diagnostic> {
        if let (Lowered::Addr { base, offset, imm, zext }, true) = (p, space != AddrSpace::Flat) {
            if *zext {
                return Ok((vec![Src::R(*offset), Src::R(*base)], *imm));
            }
            return Ok((vec![Src::Address(*base, *offset), Src::Off], *imm));
        }
        if let (Lowered::VmemAddr { base, imm }, true) = (p, space != AddrSpace::Flat) {
            match **base {
                Lowered::V64(lo, hi) => return Ok((vec![Src::VPair(lo, hi), Src::Off], *imm)),
                Lowered::VSum { lo, hi, add } => return Ok((vec![Src::Sum(lo, hi, add), Src::Off], *imm)),
                _ => {}
            }
        }
        if let (Lowered::VSum { lo, hi, add }, true) = (p, space != AddrSpace::Flat) {
            return Ok((vec![Src::Sum(*lo, *hi, *add), Src::Off], 0));
        }
        Ok((self.vmem_address_plain(p, space)?, 0))
    }

    /// The ptradd offset `offset` as a 32-bit VGPR whose zero extension is
    /// the offset, where that is known: a zero-extended i32, a zero-extended
    /// i32 shifted left by k where its value is known below 2^(32-k), or an
    /// i32 (sign-extended by `ptradd`) whose sign bit is known clear
    /// (`opt::known`). Global instructions add such an offset to an SGPR
    /// base themselves.
    fn zero_extended_offset(&mut self, offset: &Operand) -> Result<Option<ra::VReg>, Diagnostic> {
        use crate::opt::known::{known_nonnegative, known_width};
        let Operand::Value(v) = offset else { return Ok(None) };
        if let Some((x, false)) = self.wide_ext.get(v).cloned() {
            return Ok(match self.lowered(&x) {
                Lowered::V(r) => Some(r),
                _ => None,
            });
        }
        if let Some((x, k, false)) = self.scaled_ext.get(v).cloned() {
            if known_width(self.func, &self.mir_defs, &x, &Type::I32, 6) + k > 32 {
                return Ok(None);
            }
            let (Lowered::V(r), Operand::Value(xv)) = (self.lowered(&x), &x) else { return Ok(None) };
            if let Some(&shifted) = self.shifted_offsets.get(&(self.cur, *xv, k)) {
                return Ok(Some(shifted));
            }
            let shifted = self.vreg(Class::Vgpr);
            self.emit(Opcode::v_lshlrev_b32, &[Dst::R(shifted)], &[Src::Imm(k), Src::R(r)], |_| {});
            self.shifted_offsets.insert((self.cur, *xv, k), shifted);
            return Ok(Some(shifted));
        }
        if *self.func.operand_type(offset) == Type::I32 && known_nonnegative(self.func, &self.mir_defs, offset, &Type::I32, 6) {
            if let Lowered::V(r) = self.lowered(offset) {
                return Ok(Some(r));
            }
        }
        Ok(None)
    }

    pub(super) fn vmem_address_plain(&mut self, p: &Lowered, space: AddrSpace) -> Result<Vec<Src>, Diagnostic> {
        match *p {
            Lowered::S64(base) if space != AddrSpace::Flat => {
                // SGPR base with a zero VGPR offset.
                let zero = self.zero_vgpr();
                Ok(vec![Src::R(zero), Src::R(base)])
            }
            _ => {
                let (lo, hi) = self.to_v64(p)?;
                Ok(vec![Src::VPair(lo, hi), Src::Off])
            }
        }
    }

    /// The address space of a pointer operand (the verifier checked it is one).
    pub(super) fn space_of(&self, ptr: &Operand) -> AddrSpace {
        match self.func.operand_type(ptr) {
            Type::Ptr(space) => *space,
            _ => unreachable!("verified: a pointer operand"),
        }
    }

    pub(super) fn in_partial_exec(&self) -> bool {
        self.blocks[self.cur].partial_exec
    }

    pub(super) fn store(&mut self, ty: &Type, value: &Operand, ptr: &Operand, align: u32) -> Result<(), Diagnostic> {
        let (v, p) = (self.lowered(value), self.lowered(ptr));
        let space = self.space_of(ptr);
        if space == AddrSpace::Private {
            let (at, addr) = self.private_place(ptr, &p, ty.size())?;
            return self.store_private_value(&v, ty, at, addr);
        }
        if let Type::Vector(elem, _) = ty {
            let Lowered::Agg(parts) = v else { return Err(self.error("internal: vector store")) };
            if self.store_dwords(elem, &parts, &p, space)? {
                return Ok(());
            }
            for (i, part) in parts.into_iter().enumerate() {
                let part_ptr = self.offset_pointer(&p, space, i as u32 * elem.size())?;
                self.store_scalar(elem, part, part_ptr, space, align.min(elem.align()))?;
            }
            return Ok(());
        }
        self.store_scalar(ty, v, p, space, align)
    }

    pub(super) fn store_scalar(&mut self, ty: &Type, v: Lowered, p: Lowered, space: AddrSpace, align: u32) -> Result<(), Diagnostic> {
        let bits = ty.bits();
        if bits == 8 || bits == 16 {
            // The byte/short stores write the low bits of the register.
            let data = Src::R(self.to_v(&v)?);
            let byte = bits == 8;
            match space {
                AddrSpace::Local => {
                    let (addr, imm) = self.lds_address(&p)?;
                    let op = if byte { Opcode::ds_write_b8 } else { Opcode::ds_write_b16 };
                    self.emit(op, &[], &[Src::R(addr), data], |i| i.offset = imm);
                }
                AddrSpace::Global | AddrSpace::Flat => {
                    let (addr, imm) = self.vmem_address(&p, space)?;
                    let op = match (space, byte) {
                        (AddrSpace::Flat, true) => Opcode::flat_store_byte,
                        (AddrSpace::Flat, false) => Opcode::flat_store_short,
                        (_, true) => Opcode::global_store_byte,
                        _ => Opcode::global_store_short,
                    };
                    let uses = if space == AddrSpace::Flat { vec![addr[0], data] } else { vec![addr[0], data, addr[1]] };
                    self.emit(op, &[], &uses, |i| i.offset = imm);
                }
                _ => return Err(self.error("internal: private memory is accessed through load_private_value and store_private_value")),
            }
            return Ok(());
        }
        if bits != 32 && bits != 64 {
            return Err(self.error(format!("stores of {ty} are not supported by the code generator yet")));
        }
        let data = if bits == 32 {
            Src::R(self.to_v(&v)?)
        } else {
            let (lo, hi) = self.to_v64(&v)?;
            Src::VPair(lo, hi)
        };
        match space {
            AddrSpace::Local if bits == 64 && align < 8 => {
                let Src::VPair(lo, hi) = data else { unreachable!("64-bit data is a pair") };
                let (lo_addr, lo_imm, hi_addr, hi_imm) = self.lds_address_pair(&p)?;
                self.emit(Opcode::ds_write_b32, &[], &[Src::R(lo_addr), Src::R(lo)], |i| i.offset = lo_imm);
                self.emit(Opcode::ds_write_b32, &[], &[Src::R(hi_addr), Src::R(hi)], |i| i.offset = hi_imm);
            }
            AddrSpace::Local => {
                let (addr, imm) = self.lds_address(&p)?;
                let op = if bits == 32 { Opcode::ds_write_b32 } else { Opcode::ds_write_b64 };
                self.emit(op, &[], &[Src::R(addr), data], |i| i.offset = imm);
            }
            AddrSpace::Global | AddrSpace::Flat => {
                let (addr, imm) = self.vmem_address(&p, space)?;
                let op = match (space, bits) {
                    (AddrSpace::Flat, 32) => Opcode::flat_store_dword,
                    (AddrSpace::Flat, _) => Opcode::flat_store_dwordx2,
                    (_, 32) => Opcode::global_store_dword,
                    _ => Opcode::global_store_dwordx2,
                };
                let uses = if space == AddrSpace::Flat { vec![addr[0], data] } else { vec![addr[0], data, addr[1]] };
                self.emit(op, &[], &uses, |i| i.offset = imm);
            }
            _ => return Err(self.error("internal: private memory is accessed through load_private_value and store_private_value")),
        }
        Ok(())
    }

    /// Atomics return the old value; `op` None is compare-and-swap with
    /// `expected`. i64 uses the 64-bit forms (register pairs). Without
    /// `returns` (nothing reads the old value) the form that returns nothing
    /// is used where there is one: no result register, and on global memory
    /// no wait for the old value's round trip (the result is then a
    /// placeholder nothing reads).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn atomic(
        &mut self,
        op: Option<AtomicOp>,
        ty: &Type,
        ptr: &Operand,
        value: &Operand,
        expected: Option<&Operand>,
        sync: crate::mir::Sync,
        returns: bool,
    ) -> Result<Lowered, Diagnostic> {
        // Float atomics reach here only where legalize found a native one.
        let native_fadd = op == Some(AtomicOp::FAdd) && *ty == Type::F32;
        if op.is_some_and(AtomicOp::is_float) && !native_fadd {
            return Err(self.error("internal: float atomics are compare-and-swap loops after legalize"));
        }
        let wide = *ty == Type::I64;
        let p = self.lowered(ptr);
        let data = self.lowered(value);
        let as_vregs = |s: &mut Self, l: &Lowered| -> Result<Vec<ra::VReg>, Diagnostic> {
            Ok(if wide {
                let (lo, hi) = s.to_v64(l)?;
                vec![lo, hi]
            } else {
                vec![s.to_v(l)?]
            })
        };
        let data = as_vregs(self, &data)?;
        let expected = match expected {
            Some(e) => {
                let e = self.lowered(e);
                Some(as_vregs(self, &e)?)
            }
            None => None,
        };
        let src = |regs: &[ra::VReg]| if regs.len() == 2 { Src::VPair(regs[0], regs[1]) } else { Src::R(regs[0]) };
        let space = self.space_of(ptr);
        let (old_dst, result) = if wide {
            let (lo, hi) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
            (Dst::VPair(lo, hi), Lowered::V64(lo, hi))
        } else {
            let d = self.vreg(Class::Vgpr);
            (Dst::R(d), Lowered::V(d))
        };
        match space {
            AddrSpace::Local => {
                let opcode = match (op, wide) {
                    (Some(AtomicOp::Add), false) => Opcode::ds_add_rtn_u32,
                    (Some(AtomicOp::Sub), false) => Opcode::ds_sub_rtn_u32,
                    (Some(AtomicOp::SMin), false) => Opcode::ds_min_rtn_i32,
                    (Some(AtomicOp::SMax), false) => Opcode::ds_max_rtn_i32,
                    (Some(AtomicOp::UMin), false) => Opcode::ds_min_rtn_u32,
                    (Some(AtomicOp::UMax), false) => Opcode::ds_max_rtn_u32,
                    (Some(AtomicOp::And), false) => Opcode::ds_and_rtn_b32,
                    (Some(AtomicOp::Or), false) => Opcode::ds_or_rtn_b32,
                    (Some(AtomicOp::Xor), false) => Opcode::ds_xor_rtn_b32,
                    (Some(AtomicOp::Xchg), false) => Opcode::ds_wrxchg_rtn_b32,
                    (None, false) => Opcode::ds_cmpst_rtn_b32,
                    (Some(AtomicOp::Add), true) => Opcode::ds_add_rtn_u64,
                    (Some(AtomicOp::Sub), true) => Opcode::ds_sub_rtn_u64,
                    (Some(AtomicOp::SMin), true) => Opcode::ds_min_rtn_i64,
                    (Some(AtomicOp::SMax), true) => Opcode::ds_max_rtn_i64,
                    (Some(AtomicOp::UMin), true) => Opcode::ds_min_rtn_u64,
                    (Some(AtomicOp::UMax), true) => Opcode::ds_max_rtn_u64,
                    (Some(AtomicOp::And), true) => Opcode::ds_and_rtn_b64,
                    (Some(AtomicOp::Or), true) => Opcode::ds_or_rtn_b64,
                    (Some(AtomicOp::Xor), true) => Opcode::ds_xor_rtn_b64,
                    (Some(AtomicOp::Xchg), true) => Opcode::ds_wrxchg_rtn_b64,
                    (None, true) => Opcode::ds_cmpst_rtn_b64,
                    (Some(AtomicOp::FAdd), false) => Opcode::ds_add_rtn_f32,
                    (Some(AtomicOp::FAdd | AtomicOp::FMin | AtomicOp::FMax), _) => unreachable!("checked above"),
                };
                let opcode = if returns { opcode } else { lds_no_return(opcode) };
                let old_dst: &[Dst] = if opcode.info().defs9.is_empty() { &[] } else { std::slice::from_ref(&old_dst) };
                let addr = self.to_v(&p)?;
                match &expected {
                    // gfx9's ds_cmpst takes (compare, new), gfx11's ds_cmpstore (new, compare).
                    Some(e) => {
                        let (data0, data1) = if self.target.gpu.generation() == isa::Generation::Gfx9 { (src(e), src(&data)) } else { (src(&data), src(e)) };
                        self.emit(opcode, old_dst, &[Src::R(addr), data0, data1], |_| {});
                    }
                    None => self.emit(opcode, old_dst, &[Src::R(addr), src(&data)], |_| {}),
                }
            }
            AddrSpace::Global | AddrSpace::Flat => {
                let opcode = match (op, wide) {
                    (Some(AtomicOp::Add), false) => Opcode::global_atomic_add,
                    (Some(AtomicOp::Sub), false) => Opcode::global_atomic_sub,
                    (Some(AtomicOp::SMin), false) => Opcode::global_atomic_smin,
                    (Some(AtomicOp::SMax), false) => Opcode::global_atomic_smax,
                    (Some(AtomicOp::UMin), false) => Opcode::global_atomic_umin,
                    (Some(AtomicOp::UMax), false) => Opcode::global_atomic_umax,
                    (Some(AtomicOp::And), false) => Opcode::global_atomic_and,
                    (Some(AtomicOp::Or), false) => Opcode::global_atomic_or,
                    (Some(AtomicOp::Xor), false) => Opcode::global_atomic_xor,
                    (Some(AtomicOp::Xchg), false) => Opcode::global_atomic_swap,
                    (None, false) => Opcode::global_atomic_cmpswap,
                    (Some(AtomicOp::Add), true) => Opcode::global_atomic_add_x2,
                    (Some(AtomicOp::Sub), true) => Opcode::global_atomic_sub_x2,
                    (Some(AtomicOp::SMin), true) => Opcode::global_atomic_smin_x2,
                    (Some(AtomicOp::SMax), true) => Opcode::global_atomic_smax_x2,
                    (Some(AtomicOp::UMin), true) => Opcode::global_atomic_umin_x2,
                    (Some(AtomicOp::UMax), true) => Opcode::global_atomic_umax_x2,
                    (Some(AtomicOp::And), true) => Opcode::global_atomic_and_x2,
                    (Some(AtomicOp::Or), true) => Opcode::global_atomic_or_x2,
                    (Some(AtomicOp::Xor), true) => Opcode::global_atomic_xor_x2,
                    (Some(AtomicOp::Xchg), true) => Opcode::global_atomic_swap_x2,
                    (None, true) => Opcode::global_atomic_cmpswap_x2,
                    (Some(AtomicOp::FAdd), false) => Opcode::global_atomic_add_f32,
                    (Some(AtomicOp::FAdd | AtomicOp::FMin | AtomicOp::FMax), _) => unreachable!("checked above"),
                };
                // Through a generic pointer: the FLAT form of the same
                // operation (no SGPR base; it reaches global or LDS memory
                // by the address's aperture, and counts on both vmcnt and
                // lgkmcnt).
                let opcode = if space == AddrSpace::Flat { flat_atomic(opcode) } else { opcode };
                // Compare-and-swap takes {new, expected} as one register tuple.
                let data = match &expected {
                    Some(e) if wide => Src::VQuad([data[0], data[1], e[0], e[1]]),
                    Some(e) => Src::VPair(data[0], e[0]),
                    None => src(&data),
                };
                let (addr, imm) = self.vmem_address(&p, space)?;
                let returned = if returns { isa::Cache::atomic_return(self.target.gpu) } else { isa::Cache::empty() };
                let cache = returned | self.atomic_scope_bits(sync);
                let old_dst: &[Dst] = if returns { std::slice::from_ref(&old_dst) } else { &[] };
                let uses = if space == AddrSpace::Flat { vec![addr[0], data] } else { vec![addr[0], data, addr[1]] };
                self.emit(opcode, old_dst, &uses, |i| {
                    i.offset = imm;
                    i.cache = cache;
                });
            }
            other => return Err(self.error(format!("atomics on {} memory are not supported", other.keyword()))),
        }
        Ok(result)
    }
}

/// The FLAT atomic doing what the GLOBAL atomic `global` does (the table
/// names them alike: `global_atomic_X` and `flat_atomic_X`).
fn flat_atomic(global: Opcode) -> Opcode {
    let name = global.info().name.strip_prefix("global_").expect("a global atomic");
    Opcode::from_name(&format!("flat_{name}")).unwrap_or_else(|| panic!("the table has no flat_{name}"))
}

/// The DS atomic that returns nothing for one that returns the old value,
/// where the instruction set has one (the exchanges, compare-and-stores and
/// most 64-bit operations have none: they keep their result, unread).
fn lds_no_return(opcode: Opcode) -> Opcode {
    match opcode {
        Opcode::ds_add_rtn_u32 => Opcode::ds_add_u32,
        Opcode::ds_sub_rtn_u32 => Opcode::ds_sub_u32,
        Opcode::ds_min_rtn_i32 => Opcode::ds_min_i32,
        Opcode::ds_max_rtn_i32 => Opcode::ds_max_i32,
        Opcode::ds_min_rtn_u32 => Opcode::ds_min_u32,
        Opcode::ds_max_rtn_u32 => Opcode::ds_max_u32,
        Opcode::ds_and_rtn_b32 => Opcode::ds_and_b32,
        Opcode::ds_or_rtn_b32 => Opcode::ds_or_b32,
        Opcode::ds_xor_rtn_b32 => Opcode::ds_xor_b32,
        Opcode::ds_add_rtn_f32 => Opcode::ds_add_f32,
        Opcode::ds_add_rtn_u64 => Opcode::ds_add_u64,
        other => other,
    }
}

/// The local pointers that stay [`Lowered::LdsAddr`] (a VGPR and an offset
/// the DS instructions fold): results of `ptradd` on `ptr<local>` whose every
/// use is the address of a non-atomic local load or store, or the base of
/// another such `ptradd` by a constant, in a block that every loop holding
/// the definition also holds (no loop exit in between, where control-flow
/// lowering would have to merge the address).
pub(super) fn lds_folded_pointers(func: &Function, structure: &Structure) -> hashbrown::HashSet<Value> {
    folded_pointers(
        func,
        |ptr, _| matches!(func.operand_type(ptr), Type::Ptr(AddrSpace::Local)),
        |def, user| structure.loop_of.get(def).copied().flatten().is_none_or(|l| structure.loop_contains(l, user)),
        false,
    )
}

/// The global and constant pointers that may stay [`Lowered::VmemAddr`]
/// (by a constant), [`Lowered::VSum`] (by a value) or a zero-extended
/// [`Lowered::Addr`]: results of `ptradd` whose every use is the address of
/// a load, store or atomic in the same block (or the base of another such
/// `ptradd` by a constant).
pub(super) fn global_folded_pointers(func: &Function) -> hashbrown::HashSet<Value> {
    folded_pointers(
        func,
        |ptr, _| matches!(func.operand_type(ptr), Type::Ptr(AddrSpace::Global | AddrSpace::Constant)),
        |def, user| def == user,
        true,
    )
}

/// The `ptradd` results (those `candidate(ptr, offset)` accepts) whose every
/// use is the address of a load or store, or the base of another such
/// `ptradd` by a constant, in a block `reaches(def block, use block)`
/// accepts; with `atomics`, the address of an atomic too. Removing a
/// pointer can disqualify the one it was built from, so this iterates until
/// nothing changes (each round only removes).
fn folded_pointers(func: &Function, candidate: impl Fn(&Operand, &Operand) -> bool, reaches: impl Fn(usize, usize) -> bool, atomics: bool) -> hashbrown::HashSet<Value> {
    use crate::mir::{op_operands, terminator_operands};
    let mut block_of: HashMap<Value, usize> = HashMap::new();
    for (b, block) in func.blocks.iter().enumerate() {
        for inst in &block.insts {
            if let (Some(r), Op::PtrAdd { ptr, offset }) = (inst.result, &inst.op) {
                if candidate(ptr, offset) {
                    block_of.insert(r, b);
                }
            }
        }
    }
    let mut set: hashbrown::HashSet<Value> = block_of.keys().copied().collect();
    loop {
        let mut out = Vec::new();
        for (b, block) in func.blocks.iter().enumerate() {
            for inst in &block.insts {
                let allowed: Option<Value> = match &inst.op {
                    Op::Load { ptr: Operand::Value(p), .. } => Some(*p),
                    Op::Store { ptr: Operand::Value(p), value, .. } if *value != Operand::Value(*p) => Some(*p),
                    Op::AtomicRmw { ptr: Operand::Value(p), value, .. } if atomics && *value != Operand::Value(*p) => Some(*p),
                    Op::CmpXchg { ptr: Operand::Value(p), expected, new, .. }
                        if atomics && *expected != Operand::Value(*p) && *new != Operand::Value(*p) =>
                    {
                        Some(*p)
                    }
                    Op::PtrAdd { ptr: Operand::Value(p), offset: Operand::Const(_) } if inst.result.is_some_and(|r| set.contains(&r)) => Some(*p),
                    _ => None,
                };
                for operand in op_operands(&inst.op) {
                    if let Operand::Value(v) = operand {
                        if set.contains(v) && (allowed != Some(*v) || !reaches(block_of[v], b)) {
                            out.push(*v);
                        }
                    }
                }
            }
            for operand in terminator_operands(&block.term) {
                if let Operand::Value(v) = operand {
                    if set.contains(v) {
                        out.push(*v);
                    }
                }
            }
        }
        if out.is_empty() {
            return set;
        }
        for v in out {
            set.remove(&v);
        }
    }
}

/// A `ds_read_b32` this pairing may take: (address vreg, result vreg, byte
/// offset), when its offset fits `ds_read2_b32`'s 8-bit dword fields.
fn lds_dword_read(m: &MInst) -> Option<(ra::VReg, ra::VReg, i32)> {
    let MKind::Real { inst, .. } = &m.kind else { return None };
    if inst.op != Opcode::ds_read_b32 || inst.cache != isa::Cache::default() || m.ops.len() != 2 {
        return None;
    }
    let (addr, dst) = (m.ops[0], m.ops[1]);
    let fits = inst.offset % 4 == 0 && (0..=4 * 255).contains(&inst.offset);
    (fits && addr.kind() == ra::OperandKind::Use && dst.kind() == ra::OperandKind::Def).then(|| (addr.vreg(), dst.vreg(), inst.offset))
}

/// Whether a read may move up across `m`: computation and other reads, not a
/// store, atomic, barrier, wait, cache control, EXEC write or branch.
fn lds_read_may_cross(m: &MInst) -> bool {
    match &m.kind {
        MKind::Real { inst, .. } => {
            use isa::opcodes::OpFlags;
            let stop = OpFlags::STORE | OpFlags::ATOMIC | OpFlags::EXEC_DEF | OpFlags::BRANCH | OpFlags::WAITCNT | OpFlags::CACHE_CTL;
            !inst.op.info().flags.intersects(stop) && inst.op != Opcode::s_barrier && inst.defs.iter().all(|d| !matches!(d, isa::Operand::Reg(_)))
        }
        MKind::Copy | MKind::Seq(_) => true,
        _ => false,
    }
}

/// A `ds_write_b32` with one address and one data register at a dword
/// offset: (address, data, byte offset).
fn lds_dword_write(m: &MInst) -> Option<(ra::VReg, ra::VReg, i32)> {
    let MKind::Real { inst, .. } = &m.kind else { return None };
    if inst.op != Opcode::ds_write_b32 || inst.cache != isa::Cache::default() || m.ops.len() != 2 {
        return None;
    }
    let (addr, data) = (m.ops[0], m.ops[1]);
    (inst.offset % 4 == 0 && addr.kind() == ra::OperandKind::Use && data.kind() == ra::OperandKind::Use).then(|| (addr.vreg(), data.vreg(), inst.offset))
}

/// The two-address form that reaches byte offsets `a` and `b` (dword
/// multiples) from one address: `ds_*2_b32` counts its two 8-bit offsets in
/// dwords, `ds_*2st64_b32` in 64 dwords (256 bytes; two `__local` arrays
/// of 1 KiB indexed alike). The opcode pair (plain, st64) and the fields.
fn two_address_offsets(a: i32, b: i32) -> Option<(bool, i32, u8)> {
    let fits = |x: i32, unit: i32| x % unit == 0 && (0..=255 * unit).contains(&x);
    if fits(a, 4) && fits(b, 4) {
        Some((false, a / 4, (b / 4) as u8))
    } else if fits(a, 256) && fits(b, 256) {
        Some((true, a / 256, (b / 256) as u8))
    } else {
        None
    }
}

/// Whether a write to LDS may move down across `m`: computation, scalar
/// and global (never LDS) memory accesses, not an LDS or flat access (it
/// may read or write the same bytes), a barrier, wait, cache control, EXEC
/// write or branch.
fn lds_write_may_cross(m: &MInst) -> bool {
    match &m.kind {
        MKind::Real { inst, .. } => {
            use isa::opcodes::OpFlags;
            let info = inst.op.info();
            let stop = OpFlags::EXEC_DEF | OpFlags::BRANCH | OpFlags::WAITCNT | OpFlags::CACHE_CTL;
            let memory = OpFlags::LOAD | OpFlags::STORE | OpFlags::ATOMIC;
            let touches_lds = info.flags.intersects(memory) && (info.name.starts_with("ds_") || info.name.starts_with("flat_"));
            !info.flags.intersects(stop) && !touches_lds && inst.op != Opcode::s_barrier
        }
        MKind::Copy | MKind::Seq(_) => true,
        _ => false,
    }
}

/// Two `ds_write_b32` through one address register in one block, at
/// different offsets within 1020 bytes of it (or multiples of 256 bytes
/// within 65280: `ds_write2st64_b32`), become one `ds_write2_b32`
/// (two data registers, each at its own offset) at the second one's
/// place: the first write moves down past computation and non-LDS memory
/// accesses only, and only when nothing between them redefines its address
/// or data (variables before SSA repair). Unlike `ds_read2`, the two data
/// operands are independent registers, so the allocation never has to
/// place them side by side. llc-22 pairs a work-group's tile stores so.
pub(super) fn pair_lds_writes(blocks: &mut [BlockBuild]) {
    pair_in_blocks(blocks, |insts, i, removed| {
        let (addr, first, off0) = lds_dword_write(&insts[i])?;
        let mut partner = None;
        for j in i + 1..insts.len().min(i + 1 + LDS_PAIR_WINDOW) {
            if removed[j] {
                continue;
            }
            if let Some((a, d, off1)) = lds_dword_write(&insts[j]) {
                if a == addr && off1 != off0 {
                    partner = two_address_offsets(off0, off1).map(|fields| (j, d, fields));
                }
                // Another write through another address (or the same
                // offset) may overlap the first one's bytes: stop.
                break;
            }
            let redefines = insts[j].ops.iter().any(|o| o.kind() == ra::OperandKind::Def && (o.vreg() == addr || o.vreg() == first));
            if redefines || !lds_write_may_cross(&insts[j]) {
                break;
            }
        }
        let (j, second, (st64, offset0, offset1)) = partner?;
        let MKind::Real { inst, .. } = &insts[i].kind else { unreachable!("checked by lds_dword_write") };
        let mut write2 = inst.clone();
        write2.op = if st64 { Opcode::ds_write2st64_b32 } else { Opcode::ds_write2_b32 };
        write2.offset = offset0;
        write2.offset1 = offset1;
        write2.uses = vec![isa::Operand::Off; 3];
        let mut ops = vec![ra::Operand::reg_use(addr), ra::Operand::reg_use(first)];
        let second_index = if second == first {
            1
        } else {
            ops.push(ra::Operand::reg_use(second));
            2
        };
        let fills = vec![(Slot::Use(0), Fill::Whole(0)), (Slot::Use(1), Fill::Whole(1)), (Slot::Use(2), Fill::Whole(second_index))];
        Some(Paired { partner: j, inst: MInst { kind: MKind::Real { inst: write2, fills }, ops }, at_partner: true })
    });
}

/// Two instructions of a block joined into one (`pair_in_blocks`).
struct Paired {
    /// The later instruction's index.
    partner: usize,
    /// The joined instruction.
    inst: MInst,
    /// Whether it takes the later one's place (else the earlier one's).
    at_partner: bool,
}

/// For each instruction of each block, in order and not yet joined,
/// `pair(insts, i, joined)` may join it with a later one; the instruction
/// goes in one place and the other is removed. One walk, each look-ahead
/// bounded by the caller.
fn pair_in_blocks(blocks: &mut [BlockBuild], pair: impl Fn(&[MInst], usize, &[bool]) -> Option<Paired>) {
    for block in blocks.iter_mut() {
        let insts = &mut block.insts;
        let mut removed = vec![false; insts.len()];
        for i in 0..insts.len() {
            if removed[i] {
                continue;
            }
            let Some(Paired { partner, inst, at_partner }) = pair(insts, i, &removed) else { continue };
            let (keep, drop) = if at_partner { (partner, i) } else { (i, partner) };
            insts[keep] = inst;
            removed[drop] = true;
        }
        if removed.contains(&true) {
            let mut k = 0;
            insts.retain(|_| {
                k += 1;
                !removed[k - 1]
            });
        }
    }
}

/// How many instructions ahead a second read is looked for.
const LDS_PAIR_WINDOW: usize = 24;

/// How many reads past the offset field of `ds_read2_b32` a new base must
/// serve to pay for its add: four reads become two pairs and the add.
const LDS_REBASE_MIN: usize = 4;

/// `ds_read_b32` of one address register at offsets beyond `ds_read2_b32`'s
/// reach (above 1020 bytes), at least [`LDS_REBASE_MIN`] of them within 1020
/// bytes of the first, read from a new base (the address plus the first's
/// offset, one `v_add_u32` before the first) so that [`pair_lds_reads`] can
/// pair them: matmul's column of the second tile (`tb[k][tx]`, 1024 + 64k
/// bytes from the lane's address), as llc-22 reads it. The reads join while
/// nothing between writes the address or EXEC (the add runs under the
/// first read's EXEC, and a variable's address may be redefined before SSA
/// repair).
pub(super) fn rebase_lds_reads(blocks: &mut [BlockBuild], vc: &mut VCode) {
    let far_read = |m: &MInst| -> Option<(ra::VReg, i32)> {
        let MKind::Real { inst, .. } = &m.kind else { return None };
        let ok = inst.op == Opcode::ds_read_b32 && inst.cache == isa::Cache::default() && m.ops.len() == 2 && inst.offset % 4 == 0 && inst.offset > 4 * 255;
        (ok && m.ops[0].kind() == ra::OperandKind::Use).then(|| (m.ops[0].vreg(), inst.offset))
    };
    for block in blocks.iter_mut() {
        let insts = &mut block.insts;
        let mut based = vec![false; insts.len()];
        let mut adds: Vec<(usize, MInst)> = Vec::new();
        for i in 0..insts.len() {
            let Some((addr, base)) = (!based[i]).then(|| far_read(&insts[i])).flatten() else { continue };
            let mut group = vec![i];
            // Bounded, so that a block of many reads stays linear.
            for (j, m) in insts.iter().enumerate().skip(i + 1).take(4 * LDS_PAIR_WINDOW) {
                if let Some((a, off)) = far_read(m) {
                    if a == addr && !based[j] && (base..=base + 4 * 255).contains(&off) {
                        group.push(j);
                        continue;
                    }
                }
                let writes_addr = m.ops.iter().any(|o| o.kind() == ra::OperandKind::Def && o.vreg() == addr);
                let writes_exec = matches!(&m.kind, MKind::Real { inst, .. } if inst.op.info().flags.intersects(isa::opcodes::OpFlags::EXEC_DEF | isa::opcodes::OpFlags::BRANCH));
                if writes_addr || writes_exec || !matches!(m.kind, MKind::Real { .. } | MKind::Copy | MKind::Seq(_)) {
                    break;
                }
            }
            if group.len() < LDS_REBASE_MIN {
                continue;
            }
            let new = vc.new_vreg(Class::Vgpr);
            let add = isa::Inst::new(Opcode::v_add_u32, vec![isa::Operand::Off], vec![isa::Operand::imm32(base as u32), isa::Operand::Off]);
            let fills = vec![(Slot::Use(1), Fill::Whole(0)), (Slot::Def(0), Fill::Whole(1))];
            adds.push((i, MInst { kind: MKind::Real { inst: add, fills }, ops: vec![ra::Operand::reg_use(addr), ra::Operand::reg_def(new)] }));
            for &j in &group {
                based[j] = true;
                insts[j].ops[0] = ra::Operand::reg_use(new);
                if let MKind::Real { inst, .. } = &mut insts[j].kind {
                    inst.offset -= base;
                }
            }
        }
        for (at, add) in adds.into_iter().rev() {
            insts.insert(at, add);
        }
    }
}

/// Two `ds_read_b32` of one address register in one block, both offsets
/// within 1020 bytes of it, become one `ds_read2_b32` (two results in
/// consecutive registers, each at its own offset) at the first one's place,
/// when nothing between them writes memory, waits, or changes EXEC (the
/// second read moves up to the first, past reads and arithmetic only).
/// The results are a `Fill::Tuple`: where the allocation does not put them
/// in an (even, on gfx90a and gfx942) run of two, expansion splits the
/// instruction back into the two reads. matmul's inner loop reads its `__local` row
/// this way, as llc-22 does.
pub(super) fn pair_lds_reads(blocks: &mut [BlockBuild]) {
    pair_in_blocks(blocks, |insts, i, removed| {
        let (addr, first, off0) = lds_dword_read(&insts[i])?;
        let mut partner = None;
        for j in i + 1..insts.len().min(i + 1 + LDS_PAIR_WINDOW) {
            if removed[j] {
                continue;
            }
            if let Some((a, d, off1)) = lds_dword_read(&insts[j]) {
                if a == addr && d != first {
                    partner = Some((j, d, off1));
                    break;
                }
            }
            // The address register redefined (a variable before SSA
            // repair) or an instruction the read may not cross: stop.
            let redefines = insts[j].ops.iter().any(|o| o.kind() == ra::OperandKind::Def && o.vreg() == addr);
            if redefines || !lds_read_may_cross(&insts[j]) {
                break;
            }
        }
        let (j, second, off1) = partner?;
        let MKind::Real { inst, .. } = &insts[i].kind else { unreachable!("checked by lds_dword_read") };
        let mut read2 = inst.clone();
        read2.op = Opcode::ds_read2_b32;
        read2.offset = off0 / 4;
        read2.offset1 = (off1 / 4) as u8;
        let early = |v| ra::Operand::new(v, ra::OperandConstraint::Reg, ra::OperandKind::Def, ra::OperandPos::Early);
        let ops = vec![ra::Operand::reg_use(addr), early(first), early(second)];
        let fills = vec![(Slot::Use(0), Fill::Whole(0)), (Slot::Def(0), Fill::Tuple { regs: [1, 2, 1, 1], n: 2 })];
        Some(Paired { partner: j, inst: MInst { kind: MKind::Real { inst: read2, fills }, ops }, at_partner: false })
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every GLOBAL atomic has its FLAT twin, on every target that has both
    /// (selection maps one to the other by name).
    #[test]
    fn every_global_atomic_has_a_flat_form() {
        let globals: Vec<Opcode> = Opcode::ALL.into_iter().filter(|o| o.info().name.starts_with("global_atomic_")).collect();
        assert!(globals.len() >= 20);
        for global in globals {
            let flat = flat_atomic(global);
            assert_eq!(flat.info().name.strip_prefix("flat_"), global.info().name.strip_prefix("global_"));
            // gfx90a has no flat f32 add (selection loops there: legalize).
            for gpu in isa::Gpu::ALL.iter().filter(|&&g| global.info().available(g) && global != Opcode::global_atomic_add_f32) {
                assert!(flat.info().available(*gpu), "{} on {gpu:?}", flat.info().name);
            }
        }
    }
}
