//! The memory model: fences, and the ordering and scope of atomics, lowered
//! per target as LLVM's AMDGPU backend lowers the same LLVM IR (its
//! memory-model tables in AMDGPUUsage; `tests/memory_model.rs` compares the
//! cache instructions with llc-22's for every ordering, scope and target).
//!
//! A release first writes back the caches the scope does not share (gfx90a's
//! L2 for the system; gfx942's L2 for the agent or system) and then waits for
//! every earlier memory operation; an acquire waits for every earlier one
//! (the atomic that acquires included) and then invalidates the caches the
//! scope does not share (gfx90a's L1, and L2 for the system; gfx942's L2
//! lines; gfx11's L0 per CU, and GL1 beyond the work-group). Work-group scope
//! on gfx9 needs no cache operation (a work-group shares one CU's L1), and
//! wavefront scope needs nothing.

use super::*;
use crate::mir::{MemOrder, MemScope, Sync};

impl<'a> Isel<'a> {
    /// Waits for every outstanding memory operation of the wave (loads,
    /// stores, LDS and scalar loads; gfx11 counts stores apart).
    fn wait_all(&mut self) {
        let gen = self.target.gpu.generation();
        let all = isa::waitcnt::Waitcnt { vm: Some(0), exp: None, lgkm: Some(0) };
        self.emit(Opcode::s_waitcnt, &[], &[], |i| i.imm = all.encode(gen));
        if gen == isa::Generation::Gfx11 {
            let null = isa::Reg::new(isa::PhysReg::null(gen).expect("gfx11 has null"), 1);
            self.emit(Opcode::s_waitcnt_vscnt, &[], &[Src::Fixed(null)], |i| i.imm = 0);
        }
    }

    fn cache_op(&mut self, op: Opcode, cache: isa::Cache) {
        self.emit(op, &[], &[], |i| i.cache = cache);
    }

    /// The release half of an ordering at `scope`.
    pub(super) fn release(&mut self, scope: MemScope) {
        if scope == MemScope::Wavefront {
            return;
        }
        match (self.target.gpu, scope) {
            (isa::Gpu::Gfx90a, MemScope::System) => self.cache_op(Opcode::buffer_wbl2, isa::Cache::empty()),
            (isa::Gpu::Gfx942, MemScope::Agent) => self.cache_op(Opcode::buffer_wbl2, isa::Cache::SC1),
            (isa::Gpu::Gfx942, MemScope::System) => self.cache_op(Opcode::buffer_wbl2, isa::Cache::SC0 | isa::Cache::SC1),
            _ => {}
        }
        self.wait_all();
    }

    /// The acquire half of an ordering at `scope` (after the operation).
    pub(super) fn acquire(&mut self, scope: MemScope) {
        if scope == MemScope::Wavefront {
            return;
        }
        self.wait_all();
        let gfx11 = self.target.gpu.generation() == isa::Generation::Gfx11;
        match (self.target.gpu, scope) {
            (isa::Gpu::Gfx90a, MemScope::Agent) => self.cache_op(Opcode::buffer_wbinvl1_vol, isa::Cache::empty()),
            (isa::Gpu::Gfx90a, MemScope::System) => {
                self.cache_op(Opcode::buffer_invl2, isa::Cache::empty());
                self.cache_op(Opcode::buffer_wbinvl1_vol, isa::Cache::empty());
            }
            (isa::Gpu::Gfx942, MemScope::Agent) => self.cache_op(Opcode::buffer_inv, isa::Cache::SC1),
            (isa::Gpu::Gfx942, MemScope::System) => self.cache_op(Opcode::buffer_inv, isa::Cache::SC0 | isa::Cache::SC1),
            (_, MemScope::Workgroup) if gfx11 => self.cache_op(Opcode::buffer_gl0_inv, isa::Cache::empty()),
            (_, MemScope::Agent | MemScope::System) if gfx11 => {
                self.cache_op(Opcode::buffer_gl1_inv, isa::Cache::empty());
                self.cache_op(Opcode::buffer_gl0_inv, isa::Cache::empty());
            }
            _ => {}
        }
    }

    /// `fence ORDER SCOPE`.
    pub(super) fn fence(&mut self, order: MemOrder, scope: MemScope) {
        if order.releases() {
            self.release(scope);
        }
        if order.acquires() {
            self.acquire(scope);
        }
    }

    /// The cache bits an atomic at `sync`'s scope adds to the returning form's
    /// (gfx942 marks system-scope atomics with sc1).
    pub(super) fn atomic_scope_bits(&self, sync: Sync) -> isa::Cache {
        if self.target.gpu == isa::Gpu::Gfx942 && sync.scope == MemScope::System {
            isa::Cache::SC1
        } else {
            isa::Cache::empty()
        }
    }

    /// The cache bits of a volatile global or flat access (the caches it
    /// bypasses, as llc-22 sets them): loads glc (gfx90a), sc0 sc1 (gfx942),
    /// glc dlc (gfx11); stores sc0 sc1 (gfx942), dlc (gfx11).
    pub(super) fn volatile_bits(&self, op: Opcode) -> isa::Cache {
        let name = op.info().name;
        let vmem = name.starts_with("global_") || name.starts_with("flat_");
        let load = op.info().flags.contains(isa::opcodes::OpFlags::LOAD);
        if !vmem || op.info().flags.contains(isa::opcodes::OpFlags::ATOMIC) {
            return isa::Cache::empty();
        }
        match (self.target.gpu.generation(), self.target.gpu, load) {
            (_, isa::Gpu::Gfx942, _) => isa::Cache::SC0 | isa::Cache::SC1,
            (isa::Generation::Gfx11, _, true) => isa::Cache::GLC | isa::Cache::DLC,
            (isa::Generation::Gfx11, _, false) => isa::Cache::DLC,
            (_, _, true) => isa::Cache::GLC,
            _ => isa::Cache::empty(),
        }
    }

    /// After a volatile access: it completes before anything later (so
    /// volatile accesses stay in order).
    pub(super) fn volatile_done(&mut self) {
        self.wait_all();
    }
}
