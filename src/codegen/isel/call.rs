//! Builtins, calls and entry: implicit inputs, the calling convention (arguments and results in registers or memory), locals in scratch, the kernel entry and kernarg loads.

use super::*;

impl<'a> Isel<'a> {
    pub(super) fn builtin(&mut self, kind: Builtin, dim: u8) -> Result<Lowered, Diagnostic> {
        match kind {
            Builtin::WorkitemId => {
                let tid = self.tid.expect("entry defines the work-item ids");
                let d = self.vreg(Class::Vgpr);
                if dim == 0 {
                    self.emit(Opcode::v_and_b32, &[Dst::R(d)], &[Src::Imm(0x3ff), Src::R(tid)], |_| {});
                } else {
                    self.emit(Opcode::v_bfe_u32, &[Dst::R(d)], &[Src::R(tid), Src::Imm(10 * u32::from(dim)), Src::Imm(10)], |_| {});
                }
                Ok(Lowered::V(d))
            }
            Builtin::WorkgroupId => Ok(Lowered::S(self.workgroup_id[dim as usize].expect("entry defines the work-group ids"))),
            Builtin::WorkgroupSize if self.func.attrs.reqd_work_group_size.is_some() => {
                Ok(Lowered::Imm(u64::from(self.func.attrs.reqd_work_group_size.expect("checked")[dim as usize])))
            }
            Builtin::WorkgroupSize | Builtin::GridSize => {
                // From the dispatch packet: workgroup_size_x/y/z are u16 at 4/6/8,
                // grid_size_x/y/z are u32 at 12/16/20.
                let packet = self.dispatch_ptr.expect("entry defines the dispatch pointer");
                let d = self.vreg(Class::Sgpr);
                if kind == Builtin::GridSize {
                    self.emit(Opcode::s_load_dword, &[Dst::R(d)], &[Src::R(packet), Src::Off], |i| i.offset = 12 + 4 * i32::from(dim));
                    return Ok(Lowered::S(d));
                }
                // x and y share a dword: one load per block serves both.
                let dword_offset = if dim == 2 { 8 } else { 4 };
                let word = match self.packet_words.get(&(self.cur, dword_offset)) {
                    Some(&w) => w,
                    None => {
                        let w = self.vreg(Class::Sgpr);
                        self.emit(Opcode::s_load_dword, &[Dst::R(w)], &[Src::R(packet), Src::Off], |i| i.offset = dword_offset);
                        self.packet_words.insert((self.cur, dword_offset), w);
                        w
                    }
                };
                if dim == 1 {
                    self.emit(Opcode::s_lshr_b32, &[Dst::R(d)], &[Src::R(word), Src::Imm(16)], |_| {});
                } else {
                    self.emit(Opcode::s_and_b32, &[Dst::R(d)], &[Src::R(word), Src::Imm(0xffff)], |_| {});
                }
                Ok(Lowered::S(d))
            }
            hidden => {
                debug_assert!(hidden.reads_hidden_args());
                let (ptr, base) = self.implicit_args.ok_or_else(|| self.error("internal: hidden kernel arguments not available"))?;
                let name = match (kind, dim) {
                    (Builtin::WorkDim, _) => "hidden_grid_dims",
                    (Builtin::PrintfBuffer, _) => "hidden_printf_buffer",
                    (_, 0) => "hidden_global_offset_x",
                    (_, 1) => "hidden_global_offset_y",
                    _ => "hidden_global_offset_z",
                };
                let block = crate::abi::kernarg::layout(&[], self.code_object_version);
                let at = block.hidden.iter().find(|h| h.name == name).map(|h| h.offset - block.hidden_offset);
                let why = if kind == Builtin::PrintfBuffer { " (printf needs version 5 or 6)" } else { "" };
                let at = at.ok_or_else(|| self.error(format!("code object version {} has no {name} argument{why}", self.code_object_version)))?;
                if kind == Builtin::PrintfBuffer {
                    let d = self.vreg(Class::SgprPair);
                    self.emit(Opcode::s_load_dwordx2, &[Dst::R(d)], &[Src::R(ptr), Src::Off], |i| i.offset = (base + at) as i32);
                    return Ok(Lowered::S64(d));
                }
                // The low dword of a global offset; the 16-bit dimension count
                // shares its dword with reserved bytes, so it is masked.
                let word = self.vreg(Class::Sgpr);
                self.emit(Opcode::s_load_dword, &[Dst::R(word)], &[Src::R(ptr), Src::Off], |i| i.offset = (base + at) as i32);
                if kind == Builtin::GlobalOffset {
                    return Ok(Lowered::S(word));
                }
                let d = self.vreg(Class::Sgpr);
                self.emit(Opcode::s_and_b32, &[Dst::R(d)], &[Src::R(word), Src::Imm(0xffff)], |_| {});
                Ok(Lowered::S(d))
            }
        }
    }

    // ---- kernel entry ------------------------------------------------------

    /// The signature a device function is compiled (and called) with: its
    /// parameters and result, and the implicit inputs it uses.
    pub(super) fn signature_of(&self, f: &Function) -> Signature {
        function_signature(f, self.callee_uses)
    }

    pub(super) fn assignment_of(&self, f: &Function) -> Result<Assignment, Diagnostic> {
        assign(&self.signature_of(f), convention_of(f), self.target).map_err(|e| self.error(format!("calling convention of '@{}': {e}", f.name)))
    }

    // ---- private memory (stack arguments, by-reference copies, sret) -------

    /// A copy of `v` in a value of its own (same class), so that `v` can leave a
    /// fixed register right here.
    pub(super) fn copy_of(&mut self, v: ra::VReg) -> ra::VReg {
        let d = self.vreg(self.vc.class(v));
        self.push(MInst { kind: MKind::Copy, ops: vec![ra::Operand::reg_def(d), ra::Operand::reg_use(v)] });
        d
    }

    pub(super) fn private_store(&mut self, data: ra::VReg, width: u8, at: PrivateAt, ptr: Option<ra::VReg>) {
        let mut ops = vec![ra::Operand::reg_use(data)];
        ops.extend(ptr.map(ra::Operand::reg_use));
        self.push(MInst { kind: MKind::Private { store: true, width, at }, ops });
    }

    pub(super) fn private_load(&mut self, width: u8, at: PrivateAt, ptr: Option<ra::VReg>) -> ra::VReg {
        let d = self.vreg(Class::Vgpr);
        let mut ops = vec![ra::Operand::reg_def(d)];
        ops.extend(ptr.map(ra::Operand::reg_use));
        self.push(MInst { kind: MKind::Private { store: false, width, at }, ops });
        d
    }

    /// Stores a value in its memory layout (fields and elements at their
    /// offsets) at `at`.
    pub(super) fn store_private_value(&mut self, l: &Lowered, ty: &Type, at: PrivateAt, ptr: Option<ra::VReg>) -> Result<(), Diagnostic> {
        match ty {
            Type::Struct(fields) => {
                let Lowered::Agg(parts) = l else { return Err(self.error("internal: struct value")) };
                for ((p, f), o) in parts.clone().iter().zip(fields).zip(ty.field_offsets()) {
                    self.store_private_value(p, f, at.plus(o), ptr)?;
                }
            }
            Type::Vector(elem, _) => {
                let Lowered::Agg(parts) = l else { return Err(self.error("internal: vector value")) };
                for (k, p) in parts.clone().iter().enumerate() {
                    self.store_private_value(p, elem, at.plus(k as u32 * elem.size()), ptr)?;
                }
            }
            t if t.bits() == 64 => {
                let (lo, hi) = self.to_v64(l)?;
                self.private_store(lo, 4, at, ptr);
                self.private_store(hi, 4, at.plus(4), ptr);
            }
            Type::I1 => {
                let m = self.to_mask(l)?;
                let v = self.to_v(&Lowered::Mask(m))?;
                self.private_store(v, 1, at, ptr);
            }
            t => {
                let v = self.to_v(l)?;
                self.private_store(v, (t.size() as u8).min(4), at, ptr);
            }
        }
        Ok(())
    }

    /// Loads a value stored in its memory layout at `at`.
    pub(super) fn load_private_value(&mut self, ty: &Type, at: PrivateAt, ptr: Option<ra::VReg>) -> Result<Lowered, Diagnostic> {
        Ok(match ty {
            Type::Struct(fields) => {
                let mut parts = Vec::new();
                for (f, o) in fields.iter().zip(ty.field_offsets()) {
                    parts.push(self.load_private_value(f, at.plus(o), ptr)?);
                }
                Lowered::Agg(parts)
            }
            Type::Vector(elem, n) => {
                let mut parts = Vec::new();
                for k in 0..u32::from(*n) {
                    parts.push(self.load_private_value(elem, at.plus(k * elem.size()), ptr)?);
                }
                Lowered::Agg(parts)
            }
            t if t.bits() == 64 => {
                let lo = self.private_load(4, at, ptr);
                let hi = self.private_load(4, at.plus(4), ptr);
                Lowered::V64(lo, hi)
            }
            Type::I1 => {
                let byte = self.private_load(1, at, ptr);
                Lowered::Mask(self.vcmp(Opcode::v_cmp_ne_u32, Lowered::V(byte), Lowered::Imm(0))?)
            }
            t => Lowered::V(self.private_load((t.size() as u8).min(4), at, ptr)),
        })
    }

    /// Reserves `size` bytes per lane of locals (16-byte aligned pieces).
    pub(super) fn new_local(&mut self, size: u32) -> u32 {
        // Sizes are at most MAX_FRAME_BYTES each; the total saturates and
        // expansion refuses frames over MAX_FRAME_BYTES.
        let at = self.locals;
        self.locals = self.locals.saturating_add(size.div_ceil(16).saturating_mul(16));
        at
    }

    /// A private pointer to local `offset` of the frame. Private pointers count
    /// per-lane bytes from the start of private memory (on gfx90a the scratch
    /// V#'s base, as LLVM's do): the frame's base (SP, the wave offset, or 0 in a
    /// kernel on flat scratch) plus where the locals start, at expansion.
    pub(super) fn local_pointer(&mut self, offset: u32) -> Result<Lowered, Diagnostic> {
        // Known at expansion: where the locals start, and the frame's base
        // (docs/abi.md section 3.1).
        let d = self.vreg(Class::Sgpr);
        self.push(MInst { kind: MKind::LocalAddress(offset), ops: vec![ra::Operand::reg_def(d)] });
        Ok(Lowered::S(d))
    }

    /// A value from its register pieces (parameters and call results).
    pub(super) fn from_pieces(&mut self, ty: &Type, regs: &mut std::slice::Iter<(ra::VReg, bool)>) -> Result<Lowered, Diagnostic> {
        let mut next = || regs.next().copied().ok_or_else(|| Diagnostic::new("internal: missing argument piece", crate::mir::Span::NONE));
        Ok(match ty {
            Type::Struct(fields) => {
                let mut parts = Vec::new();
                for f in fields {
                    parts.push(self.from_pieces(f, regs)?);
                }
                Lowered::Agg(parts)
            }
            // 16-bit elements come two to a register (element 2k in the low
            // half); others one (or two) registers each.
            Type::Vector(elem, n) if elem.bits() == 16 => {
                let mut parts = Vec::new();
                for k in 0..*n {
                    if k % 2 == 1 {
                        continue;
                    }
                    let (r, sgpr) = next()?;
                    let high = self.vreg(if sgpr { Class::Sgpr } else { Class::Vgpr });
                    if sgpr {
                        parts.push(Lowered::S(r));
                        self.emit(Opcode::s_lshr_b32, &[Dst::R(high)], &[Src::R(r), Src::Imm(16)], |_| {});
                        parts.push(Lowered::S(high));
                    } else {
                        parts.push(Lowered::V(r));
                        self.emit(Opcode::v_lshrrev_b32, &[Dst::R(high)], &[Src::Imm(16), Src::R(r)], |_| {});
                        parts.push(Lowered::V(high));
                    }
                }
                parts.truncate(usize::from(*n));
                Lowered::Agg(parts)
            }
            Type::Vector(elem, n) => {
                let mut parts = Vec::new();
                for _ in 0..*n {
                    parts.push(self.from_pieces(elem, regs)?);
                }
                Lowered::Agg(parts)
            }
            Type::I1 => {
                // The value is in the low bit; the other bits are undefined.
                let (r, sgpr) = next()?;
                if sgpr {
                    let b = self.vreg(Class::Sgpr);
                    self.emit(Opcode::s_and_b32, &[Dst::R(b)], &[Src::R(r), Src::Imm(1)], |_| {});
                    Lowered::Bool(b)
                } else {
                    let bit = self.vreg(Class::Vgpr);
                    self.emit(Opcode::v_and_b32, &[Dst::R(bit)], &[Src::Imm(1), Src::R(r)], |_| {});
                    Lowered::Mask(self.vcmp(Opcode::v_cmp_ne_u32, Lowered::V(bit), Lowered::Imm(0))?)
                }
            }
            t if t.bits() == 64 => {
                let ((lo, lo_sgpr), (hi, hi_sgpr)) = (next()?, next()?);
                match (lo_sgpr, hi_sgpr) {
                    (true, true) => Lowered::S64(self.make_pair(lo, hi)),
                    (false, false) => Lowered::V64(lo, hi),
                    // Split between an SGPR and a VGPR or the stack (LLVM's
                    // convention when the inreg SGPRs run out mid-value).
                    _ => {
                        let lo = self.to_v(&if lo_sgpr { Lowered::S(lo) } else { Lowered::V(lo) })?;
                        let hi = self.to_v(&if hi_sgpr { Lowered::S(hi) } else { Lowered::V(hi) })?;
                        Lowered::V64(lo, hi)
                    }
                }
            }
            _ => {
                let (r, sgpr) = next()?;
                if sgpr {
                    Lowered::S(r)
                } else {
                    Lowered::V(r)
                }
            }
        })
    }

    /// The registers holding a value's pieces, in the classes their locations
    /// need (VGPR pieces in VGPRs, SGPR pieces in SGPRs).
    pub(super) fn to_pieces(&mut self, l: &Lowered, ty: &Type, locations: &mut std::slice::Iter<Location>, out: &mut Vec<(ra::VReg, Location)>) -> Result<(), Diagnostic> {
        match ty {
            Type::Struct(fields) => {
                let Lowered::Agg(parts) = l else { return Err(self.error("internal: struct argument")) };
                for (p, f) in parts.clone().iter().zip(fields) {
                    self.to_pieces(p, f, locations, out)?;
                }
            }
            Type::Vector(elem, _) if elem.bits() == 16 => {
                // Two elements to a register, element 2k in the low half.
                let Lowered::Agg(parts) = l else { return Err(self.error("internal: vector argument")) };
                for pair in parts.clone().chunks(2) {
                    let loc = *locations.next().unwrap();
                    let sgpr = matches!(loc, Location::Sgpr(_));
                    let r = match pair {
                        [lo] if sgpr => self.to_s(lo)?,
                        [lo] => self.to_v(lo)?,
                        [Lowered::Imm(lo), Lowered::Imm(hi)] if sgpr => self.to_s(&Lowered::Imm((lo & 0xffff) | (hi & 0xffff) << 16))?,
                        [lo, hi] if sgpr => {
                            // SOP2 takes one literal.
                            let lo = if is_literal(lo) && is_literal(hi) { Lowered::S(self.to_s(lo)?) } else { lo.clone() };
                            let (a, b) = (self.scalar_src(&lo)?, self.scalar_src(hi)?);
                            let d = self.vreg(Class::Sgpr);
                            self.emit(Opcode::s_pack_ll_b32_b16, &[Dst::R(d)], &[a, b], |_| {});
                            d
                        }
                        [lo, hi] => {
                            let (a, b) = (self.to_v(lo)?, self.to_v(hi)?);
                            let (low, d) = (self.vreg(Class::Vgpr), self.vreg(Class::Vgpr));
                            self.emit(Opcode::v_and_b32, &[Dst::R(low)], &[Src::Imm(0xffff), Src::R(a)], |_| {});
                            self.emit(Opcode::v_lshl_or_b32, &[Dst::R(d)], &[Src::R(b), Src::Imm(16), Src::R(low)], |_| {});
                            d
                        }
                        _ => unreachable!("chunks of two"),
                    };
                    out.push((r, loc));
                }
            }
            Type::Vector(elem, _) => {
                let Lowered::Agg(parts) = l else { return Err(self.error("internal: vector argument")) };
                for p in parts.clone() {
                    self.to_pieces(&p, elem, locations, out)?;
                }
            }
            t if t.bits() == 64 => {
                let (lo_loc, hi_loc) = (*locations.next().unwrap(), *locations.next().unwrap());
                let sgpr = |loc: Location| matches!(loc, Location::Sgpr(_));
                if sgpr(lo_loc) || sgpr(hi_loc) {
                    // Each half in its location's class (LLVM may split an
                    // inreg value between an SGPR and a VGPR).
                    let p = self.to_s64(l)?;
                    let half = |isel: &mut Self, h: u8, loc: Location| {
                        if sgpr(loc) {
                            let r = isel.vreg(Class::Sgpr);
                            isel.emit(Opcode::s_mov_b32, &[Dst::R(r)], &[Src::Half(p, h)], |_| {});
                            r
                        } else {
                            let r = isel.vreg(Class::Vgpr);
                            isel.emit(Opcode::v_mov_b32, &[Dst::R(r)], &[Src::Half(p, h)], |_| {});
                            r
                        }
                    };
                    let (lo, hi) = (half(self, 0, lo_loc), half(self, 1, hi_loc));
                    out.extend([(lo, lo_loc), (hi, hi_loc)]);
                } else {
                    let (lo, hi) = self.to_v64(l)?;
                    out.extend([(lo, lo_loc), (hi, hi_loc)]);
                }
            }
            _ => {
                let loc = *locations.next().unwrap();
                let r = match (loc, ty) {
                    (Location::Sgpr(_), Type::I1) => self.to_bool(l)?,
                    (Location::Sgpr(_), _) => self.to_s(l)?,
                    (_, Type::I1) => {
                        let m = self.to_mask(l)?;
                        self.to_v(&Lowered::Mask(m))?
                    }
                    _ => self.to_v(l)?,
                };
                out.push((r, loc));
            }
        }
        Ok(())
    }

    pub(super) fn preg_of(loc: Location) -> ra::PReg {
        match loc {
            Location::Vgpr(n) => vgpr_preg(n),
            Location::Sgpr(n) => sgpr_preg(n),
            Location::Stack { .. } => unreachable!("stack pieces are rejected"),
        }
    }

    /// A device function's entry: parameters, implicit inputs and the return
    /// address arrive in the registers the calling convention names; pieces on
    /// the stack are loaded from the incoming argument area, by-reference
    /// arguments through their pointers.
    pub(super) fn function_entry(&mut self) -> Result<(), Diagnostic> {
        enum Arrival {
            Reg(ra::VReg, bool),
            Stack { offset: u32, size: u32 },
        }
        let func = self.func;
        let a = self.assignment_of(func)?;
        let mut ops = Vec::new();
        let mut arrive = |vc: &mut VCode, loc: Location| match loc {
            Location::Stack { offset, size } => Arrival::Stack { offset, size },
            reg => {
                let sgpr = matches!(reg, Location::Sgpr(_));
                let v = vc.new_vreg(if sgpr { Class::Sgpr } else { Class::Vgpr });
                ops.push(ra::Operand::reg_fixed_def(v, Self::preg_of(reg)));
                Arrival::Reg(v, sgpr)
            }
        };
        let sret = a.sret.map(|loc| arrive(&mut self.vc, loc));
        let mut params = Vec::new();
        for (param, arg) in func.params.iter().zip(&a.args) {
            let pieces: Vec<Arrival> = arg.pieces.iter().map(|p| arrive(&mut self.vc, p.loc)).collect();
            params.push((param.value, pieces, arg.by_ref));
        }
        let mut implicit = Vec::new();
        for imp in &a.implicit {
            let pieces: Vec<Arrival> = imp.pieces.iter().map(|loc| arrive(&mut self.vc, *loc)).collect();
            implicit.push((imp.input, pieces));
        }
        // The return address stays in s[30:31], which nothing allocates; a
        // function that calls saves it in its prologue (expand.rs), where the
        // call-frame information can say where it is.
        self.ret_locations = a.ret.iter().map(|p| p.loc).collect();
        self.push(MInst { kind: MKind::Entry, ops });
        // Every register argument is copied out of its arrival register before
        // anything else runs: regalloc2 may otherwise leave a value in an
        // arrival register it may not allocate (s12-s29, v24-v31) until its
        // use, where SGPR pair units, expansion temporaries or VGPR windows of
        // the instructions in between would overwrite it.
        let moved_out = |isel: &mut Self, arrival: &mut Arrival| {
            if let Arrival::Reg(v, sgpr) = *arrival {
                *arrival = Arrival::Reg(isel.copy_of(v), sgpr);
            }
        };
        let mut sret = sret;
        if let Some(arrival) = sret.as_mut() {
            moved_out(self, arrival);
        }
        for (_, pieces, _) in params.iter_mut() {
            pieces.iter_mut().for_each(|p| moved_out(self, p));
        }
        for (_, pieces) in implicit.iter_mut() {
            pieces.iter_mut().for_each(|p| moved_out(self, p));
        }
        // Stack pieces, loaded once at the entry (as VGPRs).
        let fetch = |isel: &mut Self, arrival: &Arrival| match *arrival {
            Arrival::Reg(v, sgpr) => (v, sgpr),
            Arrival::Stack { offset, size } => (isel.private_load(size.min(4) as u8, PrivateAt::Incoming(offset), None), false),
        };
        if let Some(arrival) = &sret {
            let (p, _) = fetch(self, arrival);
            let p = self.to_v(&Lowered::V(p))?;
            self.sret_ptr = Some(p);
        }
        let mut dispatch = Vec::new();
        for (input, pieces) in &implicit {
            let mut defs = Vec::new();
            for arrival in pieces {
                let (v, sgpr) = fetch(self, arrival);
                // SGPR inputs that overflowed to the stack are uniform.
                let v = if !sgpr && *input != ImplicitInput::WorkitemId {
                    let s = self.vreg(Class::Sgpr);
                    self.emit(Opcode::v_readfirstlane_b32, &[Dst::R(s)], &[Src::R(v)], |_| {});
                    s
                } else {
                    v
                };
                defs.push(v);
            }
            match input {
                ImplicitInput::WorkitemId => self.tid = Some(defs[0]),
                ImplicitInput::WorkgroupIdX => self.workgroup_id[0] = Some(defs[0]),
                ImplicitInput::WorkgroupIdY => self.workgroup_id[1] = Some(defs[0]),
                ImplicitInput::WorkgroupIdZ => self.workgroup_id[2] = Some(defs[0]),
                ImplicitInput::DispatchPtr => dispatch = defs,
                ImplicitInput::ImplicitArgPtr => {
                    if let [lo, hi] = defs[..] {
                        self.implicit_args = Some((self.make_pair(lo, hi), 0));
                    }
                }
                _ => {}
            }
        }
        if let [lo, hi] = dispatch[..] {
            self.dispatch_ptr = Some(self.make_pair(lo, hi));
        }
        for (value, pieces, by_ref) in params {
            let ty = func.value_type(value).clone();
            let regs: Vec<(ra::VReg, bool)> = pieces.iter().map(|p| fetch(self, p)).collect();
            let l = if by_ref {
                let ptr = match regs[..] {
                    [(p, true)] => self.to_v(&Lowered::S(p))?,
                    [(p, false)] => p,
                    _ => return Err(self.error("internal: by-reference argument without one pointer piece")),
                };
                self.load_private_value(&ty, PrivateAt::Pointer(0), Some(ptr))?
            } else {
                self.from_pieces(&ty, &mut regs.iter())?
            };
            self.set(value, l);
        }
        if self.cur == 0 {
            self.entry_prologue_end = Some(self.blocks[0].insts.len());
        }
        Ok(())
    }

    /// A call: arguments and implicit inputs into the callee's registers, the
    /// call itself (clobbering what the convention lets the callee change), and
    /// the result pieces back from their registers.
    pub(super) fn call(&mut self, callee: &str, args: &[Operand], result: Option<Value>) -> Result<(), Diagnostic> {
        let target_fn = *self.functions.get(callee).ok_or_else(|| self.error(format!("call to undefined function '@{callee}'")))?;
        let a = self.assignment_of(target_fn)?;
        let mut pieces = Vec::new();
        // A result in memory: a buffer in the caller's frame, its address first.
        let sret_local = match (a.sret, &target_fn.ret) {
            (Some(loc), Some(ty)) => {
                let local = self.new_local(ty.size());
                let ptr = self.local_pointer(local)?;
                self.to_pieces(&ptr, &Type::Ptr(AddrSpace::Private), &mut [loc].iter(), &mut pieces)?;
                Some(local)
            }
            _ => None,
        };
        for ((arg, asg), param) in args.iter().zip(&a.args).zip(&target_fn.params) {
            let ty = target_fn.value_type(param.value).clone();
            let l = self.lowered(arg);
            let locs: Vec<Location> = asg.pieces.iter().map(|p| p.loc).collect();
            if asg.by_ref {
                // A copy in the caller's frame, passed by its address.
                let local = self.new_local(ty.size());
                self.store_private_value(&l, &ty, PrivateAt::Local(local), None)?;
                let ptr = self.local_pointer(local)?;
                self.to_pieces(&ptr, &Type::Ptr(AddrSpace::Private), &mut locs.iter(), &mut pieces)?;
            } else {
                self.to_pieces(&l, &ty, &mut locs.iter(), &mut pieces)?;
            }
        }
        for imp in &a.implicit {
            let regs: Vec<ra::VReg> = match imp.input {
                ImplicitInput::WorkitemId => vec![self.tid.ok_or_else(|| self.error("internal: work-item ids not available"))?],
                ImplicitInput::WorkgroupIdX | ImplicitInput::WorkgroupIdY | ImplicitInput::WorkgroupIdZ => {
                    let d = match imp.input {
                        ImplicitInput::WorkgroupIdX => 0,
                        ImplicitInput::WorkgroupIdY => 1,
                        _ => 2,
                    };
                    vec![self.workgroup_id[d].ok_or_else(|| self.error("internal: work-group id not available"))?]
                }
                ImplicitInput::DispatchPtr => {
                    let p = self.dispatch_ptr.ok_or_else(|| self.error("internal: dispatch pointer not available"))?;
                    let (lo, hi) = (self.vreg(Class::Sgpr), self.vreg(Class::Sgpr));
                    self.emit(Opcode::s_mov_b32, &[Dst::R(lo)], &[Src::Half(p, 0)], |_| {});
                    self.emit(Opcode::s_mov_b32, &[Dst::R(hi)], &[Src::Half(p, 1)], |_| {});
                    vec![lo, hi]
                }
                ImplicitInput::ImplicitArgPtr => {
                    let (p, base) = self.implicit_args.ok_or_else(|| self.error("internal: hidden kernel arguments not available"))?;
                    let (lo, hi) = (self.vreg(Class::Sgpr), self.vreg(Class::Sgpr));
                    if base == 0 {
                        self.emit(Opcode::s_mov_b32, &[Dst::R(lo)], &[Src::Half(p, 0)], |_| {});
                        self.emit(Opcode::s_mov_b32, &[Dst::R(hi)], &[Src::Half(p, 1)], |_| {});
                    } else {
                        self.emit(Opcode::s_add_u32, &[Dst::R(lo)], &[Src::Half(p, 0), Src::Imm(base)], |_| {});
                        self.emit(Opcode::s_addc_u32, &[Dst::R(hi)], &[Src::Half(p, 1), Src::Imm(0)], |_| {});
                    }
                    vec![lo, hi]
                }
                // An LLVM callee has a register for every input; the ones the
                // function does not use are left undefined.
                _ if target_fn.conv == crate::mir::CallConv::Llvm => continue,
                other => return Err(self.error(format!("implicit input {other:?} is not supported in calls yet"))),
            };
            for (r, loc) in regs.into_iter().zip(&imp.pieces) {
                pieces.push((r, *loc));
            }
        }
        // Stack pieces go to the outgoing argument area, above the caller's frame.
        let mut in_registers = Vec::new();
        for (r, loc) in pieces {
            match loc {
                Location::Stack { offset, size } => {
                    let v = if self.vc.class(r) == Class::Vgpr { r } else { self.to_v(&Lowered::S(r))? };
                    self.private_store(v, size.min(4) as u8, PrivateAt::Outgoing(offset), None);
                }
                reg => in_registers.push((r, reg)),
            }
        }
        // In a device function, argument registers overlap the SGPR pair units
        // (s12-s21), the expansion temporaries (s22-s29) and the VGPR windows
        // (v24-v31), which regalloc2 cannot see: each argument is copied into a
        // value of its own right before the call, so nothing runs between the
        // copy into its register and the call.
        let mut ops: Vec<ra::Operand> = Vec::new();
        if self.func.kind == FuncKind::Device {
            // Pair values leave the units before the copies can write the
            // SGPRs under them (the call clobbers the units anyway).
            let mut units = ra::PRegSet::empty();
            for u in 0..SGPR_PAIR_UNITS {
                units.add(ra::PReg::new(u as usize, ra::RegClass::Vector));
            }
            self.push(MInst { kind: MKind::Clobber(units), ops: Vec::new() });
        }
        for (r, reg) in in_registers {
            let r = if self.func.kind == FuncKind::Device { self.copy_of(r) } else { r };
            ops.push(ra::Operand::reg_fixed_use(r, Self::preg_of(reg)));
        }
        // Results.
        let mut result_regs = Vec::new();
        for p in &a.ret {
            let class = if matches!(p.loc, Location::Sgpr(_)) { Class::Sgpr } else { Class::Vgpr };
            let v = self.vreg(class);
            ops.push(ra::Operand::reg_fixed_def(v, Self::preg_of(p.loc)));
            result_regs.push((v, class == Class::Sgpr));
        }
        // Clobbers: v0-v31 and s0-s31, except the registers results arrive in
        // (a register cannot be both a fixed definition and a clobber). Of
        // v0-v31, a device function compiled before its caller changes only
        // those its code and its callees' write.
        let vgprs_changed = self.callee_clobbers.get(callee).copied().unwrap_or(u32::MAX);
        let mut clobbers = ra::PRegSet::empty();
        for n in 0..32u16 {
            let (v, s) = (vgpr_preg(n), sgpr_preg(n));
            if vgprs_changed & (1 << n) != 0 && !a.ret.iter().any(|p| p.loc == Location::Vgpr(n)) {
                clobbers.add(v);
            }
            if !a.ret.iter().any(|p| p.loc == Location::Sgpr(n)) {
                clobbers.add(s);
            }
        }
        // A device function's SGPR pair units (s12-s21) are clobbered as well.
        if self.func.kind == FuncKind::Device {
            for u in 0..SGPR_PAIR_UNITS {
                clobbers.add(ra::PReg::new(u as usize, ra::RegClass::Vector));
            }
        }
        // An LLVM callee may also change registers this layout keeps values in
        // (s40-s47, s56-s63, v32-v39, ...): nothing stays in a register across
        // the call; the SGPR spill VGPRs sit where LLVM preserves them.
        let llvm = target_fn.conv == crate::mir::CallConv::Llvm;
        if llvm {
            for n in 0..64usize {
                if !a.ret.iter().any(|p| p.loc == Location::Vgpr(n as u16)) {
                    clobbers.add(ra::PReg::new(n, ra::RegClass::Float));
                }
                if !a.ret.iter().any(|p| p.loc == Location::Sgpr(n as u16)) {
                    clobbers.add(ra::PReg::new(n, ra::RegClass::Int));
                }
            }
            for u in 0..SGPR_PAIR_UNITS + 2 {
                clobbers.add(ra::PReg::new(u as usize, ra::RegClass::Vector));
            }
        }
        self.push(MInst { kind: MKind::Call { callee: callee.to_string(), clobbers, llvm }, ops });
        if self.func.kind == FuncKind::Device {
            // Results are copied out of their arrival registers at once, like
            // arguments at the entry: those above the allocatable VGPRs
            // overlap the windows.
            for (v, _) in result_regs.iter_mut() {
                *v = self.copy_of(*v);
            }
        }
        if let (Some(r), Some(ty)) = (result, target_fn.ret.clone()) {
            let l = match sret_local {
                Some(local) => self.load_private_value(&ty, PrivateAt::Local(local), None)?,
                None => self.from_pieces(&ty, &mut result_regs.iter())?,
            };
            self.set(r, l);
        }
        Ok(())
    }

    pub(super) fn entry(&mut self, layout: &KernargLayout, state: &InitialState) -> Result<(), Diagnostic> {
        if self.func.kind == FuncKind::Device {
            return self.function_entry();
        }
        let mut ops = Vec::new();
        let mut def_fixed = |vc: &mut VCode, class: Class, preg: ra::PReg| {
            let v = vc.new_vreg(class);
            ops.push(ra::Operand::reg_fixed_def(v, preg));
            v
        };
        // Pointer inputs: pinned pair units where the allocator cannot confuse
        // them with single SGPRs; in kernels that call (where calls use s0-s31
        // by number, which a pinned pair would alias unseen) as two singles.
        let calls = self.func.blocks.iter().any(|b| b.insts.iter().any(|i| matches!(i.op, Op::Call { .. })));
        let mut pairs = Vec::new();
        let mut halves = Vec::new();
        for slot in &state.user_sgprs {
            let unit = match slot.input {
                SgprInput::KernargSegmentPtr => SGPR_PAIR_INPUT_UNITS[0],
                SgprInput::DispatchPtr => SGPR_PAIR_INPUT_UNITS[1],
                _ => continue,
            };
            if calls {
                let lo = def_fixed(&mut self.vc, Class::Sgpr, sgpr_preg(slot.first));
                let hi = def_fixed(&mut self.vc, Class::Sgpr, sgpr_preg(slot.first + 1));
                halves.push((slot.input, lo, hi));
                continue;
            }
            let pair = def_fixed(&mut self.vc, Class::SgprPair, ra::PReg::new(unit as usize, ra::RegClass::Vector));
            self.vc.pinned_pairs.push((unit, slot.first));
            pairs.push((slot.input, pair));
        }
        for slot in &state.system_sgprs {
            let dim = match slot.input {
                SgprInput::WorkgroupIdX => 0,
                SgprInput::WorkgroupIdY => 1,
                SgprInput::WorkgroupIdZ => 2,
                _ => continue,
            };
            self.workgroup_id[dim] = Some(def_fixed(&mut self.vc, Class::Sgpr, sgpr_preg(slot.first)));
        }
        if state.workitem_ids.dims > 0 {
            self.tid = Some(def_fixed(&mut self.vc, Class::Vgpr, vgpr_preg(0)));
        }
        self.push(MInst { kind: MKind::Entry, ops });
        for (input, lo, hi) in halves {
            pairs.push((input, self.make_pair(lo, hi)));
        }
        for (input, pair) in pairs {
            match input {
                SgprInput::KernargSegmentPtr => {
                    self.kernarg_ptr = Some(pair);
                    self.implicit_args = Some((pair, layout.hidden_offset));
                }
                _ => self.dispatch_ptr = Some(pair),
            }
        }
        // Kernel arguments: scalar loads from the kernarg segment.
        for (param, arg) in self.func.params.iter().zip(&layout.explicit) {
            let l = self.kernarg_load(&arg.ty, arg.offset)?;
            self.set(param.value, l);
        }
        Ok(())
    }

    pub(super) fn kernarg_load(&mut self, ty: &Type, offset: u32) -> Result<Lowered, Diagnostic> {
        let base = self.kernarg_ptr.expect("kernels with parameters have the kernarg pointer");
        match ty {
            Type::Struct(fields) => {
                let offsets = ty.field_offsets();
                let mut parts = Vec::new();
                for (f, o) in fields.iter().zip(offsets) {
                    parts.push(self.kernarg_load(f, offset + o)?);
                }
                Ok(Lowered::Agg(parts))
            }
            Type::Vector(elem, n) => {
                let mut parts = Vec::new();
                for i in 0..u32::from(*n) {
                    parts.push(self.kernarg_load(elem, offset + i * elem.size())?);
                }
                Ok(Lowered::Agg(parts))
            }
            _ => match ty.bits() {
                32 => {
                    let d = self.vreg(Class::Sgpr);
                    self.emit(Opcode::s_load_dword, &[Dst::R(d)], &[Src::R(base), Src::Off], |i| i.offset = offset as i32);
                    Ok(Lowered::S(d))
                }
                64 => {
                    let d = self.vreg(Class::SgprPair);
                    self.emit(Opcode::s_load_dwordx2, &[Dst::R(d)], &[Src::R(base), Src::Off], |i| i.offset = offset as i32);
                    Ok(Lowered::S64(d))
                }
                8 | 16 => {
                    // Load the containing dword and extract (offset is naturally aligned).
                    let word = self.vreg(Class::Sgpr);
                    self.emit(Opcode::s_load_dword, &[Dst::R(word)], &[Src::R(base), Src::Off], |i| i.offset = (offset & !3) as i32);
                    let d = self.vreg(Class::Sgpr);
                    let shift = (offset & 3) * 8;
                    let width = ty.bits();
                    self.emit(Opcode::s_bfe_u32, &[Dst::R(d)], &[Src::R(word), Src::Imm((width << 16) | shift)], |_| {});
                    Ok(Lowered::S(d))
                }
                _ => Err(self.error(format!("kernel arguments of type {ty} are not supported by the code generator yet"))),
            },
        }
    }
}

/// Moves a kernel's scalar loads of its kernarg segment and dispatch packet
/// (hidden arguments, work-group sizes: read where the MIR asks for them) up
/// the entry block to the kernel-argument loads at its start. That memory does
/// not change while the kernel runs and its pointers are defined before the
/// first of those loads, so the values are the same; issued together, one
/// `s_waitcnt lgkmcnt(0)` covers them all instead of one per late load.
pub(super) fn hoist_entry_scalar_loads(blocks: &mut [BlockBuild], bases: &[ra::VReg]) {
    let Some(entry) = blocks.first_mut() else { return };
    let candidate = |m: &MInst| match &m.kind {
        MKind::Real { inst, .. } => {
            matches!(inst.op, Opcode::s_load_dword | Opcode::s_load_dwordx2 | Opcode::s_load_dwordx4)
                && m.ops.iter().any(|op| op.kind() == ra::OperandKind::Use && bases.contains(&op.vreg()))
        }
        _ => false,
    };
    let Some(first) = entry.insts.iter().position(candidate) else { return };
    // The loads already in one run from `first` stay; later ones join it.
    let run_end = first + entry.insts[first..].iter().take_while(|m| candidate(m)).count();
    if !entry.insts[run_end..].iter().any(candidate) {
        return;
    }
    let rest = entry.insts.split_off(run_end);
    let (late, others): (Vec<MInst>, Vec<MInst>) = rest.into_iter().partition(candidate);
    entry.insts.extend(late);
    entry.insts.extend(others);
}

/// Two `s_load_dwordx2` of a kernel's entry through one of `bases` (the
/// kernarg segment and dispatch packet pointers), at offsets 8 bytes apart
/// in the run of entry loads `hoist_entry_scalar_loads` made, become one
/// `s_load_dwordx4` at the first one's place (two pointer arguments side
/// by side, as llc-22 loads them). Its two pairs are a `Fill::Tuple`:
/// where the allocation and placement do not put them in one 4-aligned
/// SGPR quad, expansion splits it back into the two loads. The results are
/// early definitions, so a split half cannot overwrite the base the other
/// half reads.
pub(super) fn pair_entry_scalar_loads(blocks: &mut [BlockBuild], bases: &[ra::VReg]) {
    let Some(entry) = blocks.first_mut() else { return };
    let pair_load = |m: &MInst| -> Option<(ra::VReg, ra::VReg, i32)> {
        let MKind::Real { inst, .. } = &m.kind else { return None };
        if inst.op != Opcode::s_load_dwordx2 || m.ops.len() != 2 {
            return None;
        }
        let (base, dst) = (m.ops[0], m.ops[1]);
        let from_base = base.kind() == ra::OperandKind::Use && bases.contains(&base.vreg());
        (from_base && dst.kind() == ra::OperandKind::Def).then(|| (base.vreg(), dst.vreg(), inst.offset))
    };
    // The run of scalar loads at the entry's start (after the inputs' copies).
    let Some(first) = entry.insts.iter().position(|m| pair_load(m).is_some()) else { return };
    let run_end = first + entry.insts[first..].iter().take_while(|m| matches!(&m.kind, MKind::Real { inst, .. } if matches!(inst.op, Opcode::s_load_dword | Opcode::s_load_dwordx2 | Opcode::s_load_dwordx4))).count();
    let mut removed = vec![false; entry.insts.len()];
    for i in first..run_end {
        let Some((base, low, offset)) = pair_load(&entry.insts[i]).filter(|_| !removed[i]) else { continue };
        let partner = (i + 1..run_end).find(|&j| !removed[j] && pair_load(&entry.insts[j]).is_some_and(|(b, _, o)| b == base && o == offset + 8));
        let Some(j) = partner else { continue };
        let high = pair_load(&entry.insts[j]).expect("checked above").1;
        let MKind::Real { inst, .. } = &entry.insts[i].kind else { unreachable!("checked by pair_load") };
        let mut quad = inst.clone();
        quad.op = Opcode::s_load_dwordx4;
        let early = |v| ra::Operand::new(v, ra::OperandConstraint::Reg, ra::OperandKind::Def, ra::OperandPos::Early);
        let ops = vec![ra::Operand::reg_use(base), early(low), early(high)];
        let fills = vec![(Slot::Use(0), Fill::Whole(0)), (Slot::Def(0), Fill::Tuple { regs: [1, 2, 1, 1], n: 2 })];
        entry.insts[i] = MInst { kind: MKind::Real { inst: quad, fills }, ops };
        removed[j] = true;
    }
    let mut k = 0;
    entry.insts.retain(|_| {
        k += 1;
        !removed[k - 1]
    });
}

/// Moves the loads of a device function's entry (stack arguments from the
/// incoming area, by-reference arguments through their pointers: the
/// `Private` loads among the first `prologue_end` instructions) down the
/// entry block to right before their first use there. Loaded at the entry,
/// every one is live from the start, on top of the register arguments: a
/// function of 40 arguments then needs VGPRs above v31, which its prologue
/// must save and its epilogue restore. Nothing in the function writes that
/// memory (the incoming area is the caller's outgoing area, below the
/// function's own frame; a by-reference copy is the caller's temporary for
/// this call), and a block runs under one EXEC, so the loads read the same
/// values later. A load with a use in another block (or passed on to a
/// successor) stays where it is; one without any use is dropped.
pub(super) fn sink_entry_loads(blocks: &mut [BlockBuild], prologue_end: usize) {
    let Some((entry, rest)) = blocks.split_first_mut() else { return };
    let is_load = |m: &MInst| matches!(m.kind, MKind::Private { store: false, .. });
    let candidates: Vec<usize> = (0..prologue_end.min(entry.insts.len())).filter(|&i| is_load(&entry.insts[i])).collect();
    if candidates.is_empty() {
        return;
    }
    let defined: hashbrown::HashMap<ra::VReg, usize> = candidates.iter().map(|&i| (entry.insts[i].ops[0].vreg(), i)).collect();
    // A use outside the entry block's instructions pins a load in place.
    let uses_elsewhere = rest
        .iter()
        .flat_map(|b| b.insts.iter().flat_map(|m| &m.ops).filter(|op| op.kind() == ra::OperandKind::Use).map(|op| op.vreg()))
        .chain(rest.iter().chain(std::iter::once(&*entry)).flat_map(|b| b.succ_args.iter().flatten().copied()));
    let pinned: hashbrown::HashSet<usize> = uses_elsewhere.filter_map(|v| defined.get(&v).copied()).collect();
    let insts = &mut entry.insts;
    // The users of every vreg a candidate defines in the entry block (one pass).
    let mut users: hashbrown::HashMap<usize, Vec<usize>> = hashbrown::HashMap::new();
    for (j, m) in insts.iter().enumerate() {
        for op in &m.ops {
            if op.kind() == ra::OperandKind::Use {
                if let Some(&i) = defined.get(&op.vreg()) {
                    users.entry(i).or_default().push(j);
                }
            }
        }
    }
    // Where each goes: before its first user, counting a user that is a
    // moved load too where that one goes (a pointer before every load
    // through it); later candidates are placed first.
    // Loads nothing reads are dropped (machine_dce would, but only after
    // they kept their pointer's load at the top).
    let mut target: hashbrown::HashMap<usize, usize> = hashbrown::HashMap::new();
    let mut dead: hashbrown::HashSet<usize> = hashbrown::HashSet::new();
    for &i in candidates.iter().rev() {
        let live_users: Vec<usize> = users.get(&i).map(|us| us.iter().copied().filter(|u| !dead.contains(u)).collect()).unwrap_or_default();
        if pinned.contains(&i) {
            continue;
        }
        if live_users.is_empty() {
            dead.insert(i);
            continue;
        }
        let Some(t) = live_users.iter().map(|u| target.get(u).copied().unwrap_or(*u)).min() else { continue };
        if t > i + 1 {
            target.insert(i, t);
        }
    }
    if target.is_empty() && dead.is_empty() {
        return;
    }
    let mut moved: Vec<(usize, usize, MInst)> = Vec::new();
    let mut order: Vec<MInst> = Vec::with_capacity(insts.len());
    let old = std::mem::take(insts);
    let mut kept: Vec<(usize, MInst)> = Vec::with_capacity(old.len());
    for (i, m) in old.into_iter().enumerate() {
        if dead.contains(&i) {
            continue;
        }
        match target.get(&i) {
            Some(&t) => moved.push((t, i, m)),
            None => kept.push((i, m)),
        }
    }
    moved.sort_by_key(|(t, i, _)| (*t, *i));
    let mut next = moved.into_iter().peekable();
    for (i, m) in kept {
        while let Some((_, _, mv)) = next.next_if(|(t, _, _)| *t <= i) {
            order.push(mv);
        }
        order.push(m);
    }
    order.extend(next.map(|(_, _, m)| m));
    *insts = order;
}

