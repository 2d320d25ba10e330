//! The kernarg segment: explicit kernel arguments followed by the hidden
//! arguments of the code object version (v4 or v5; v6 uses the v5 layout).

use crate::types::{align_to, Type};

/// One explicit argument in the kernarg segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernargArg {
    pub ty: Type,
    pub offset: u32,
    pub size: u32,
    pub align: u32,
}

/// One hidden argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HiddenArg {
    /// The metadata `.value_kind`, e.g. `hidden_block_count_x`.
    pub name: &'static str,
    /// Offset from the start of the kernarg segment.
    pub offset: u32,
    pub size: u32,
}

/// The layout of a kernel's kernarg segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernargLayout {
    pub explicit: Vec<KernargArg>,
    /// End of the explicit arguments (not rounded).
    pub explicit_size: u32,
    /// Where the hidden arguments start (the implicit argument pointer of callees):
    /// `explicit_size` rounded up to 8.
    pub hidden_offset: u32,
    pub hidden: Vec<HiddenArg>,
    /// `.kernarg_segment_size`: hidden base + hidden bytes, or the explicit size
    /// rounded up to 4 without hidden arguments.
    pub size: u32,
    /// `.kernarg_segment_align`.
    pub align: u32,
}

/// (name, offset from the hidden base, size) of one hidden argument.
pub type HiddenEntry = (&'static str, u32, u32);

/// Hidden arguments of code object v5 (and v6), offsets relative to the hidden base.
pub const HIDDEN_V5: [(&str, u32, u32); 20] = [
    ("hidden_block_count_x", 0, 4),
    ("hidden_block_count_y", 4, 4),
    ("hidden_block_count_z", 8, 4),
    ("hidden_group_size_x", 12, 2),
    ("hidden_group_size_y", 14, 2),
    ("hidden_group_size_z", 16, 2),
    ("hidden_remainder_x", 18, 2),
    ("hidden_remainder_y", 20, 2),
    ("hidden_remainder_z", 22, 2),
    ("hidden_global_offset_x", 40, 8),
    ("hidden_global_offset_y", 48, 8),
    ("hidden_global_offset_z", 56, 8),
    ("hidden_grid_dims", 64, 2),
    ("hidden_printf_buffer", 72, 8),
    ("hidden_hostcall_buffer", 80, 8),
    ("hidden_multigrid_sync_arg", 88, 8),
    ("hidden_heap_v1", 96, 8),
    ("hidden_default_queue", 104, 8),
    ("hidden_completion_action", 112, 8),
    ("hidden_dynamic_lds_size", 120, 4),
];
/// v5 hidden arguments after the reserved gap.
pub const HIDDEN_V5_TAIL: [(&str, u32, u32); 3] =
    [("hidden_private_base", 192, 4), ("hidden_shared_base", 196, 4), ("hidden_queue_ptr", 200, 8)];
/// Bytes reserved for hidden arguments in v5.
pub const HIDDEN_V5_SIZE: u32 = 256;

/// Hidden arguments of code object v4 (offset 24 holds the hostcall buffer, or the
/// printf buffer for OpenCL printf, or nothing).
pub const HIDDEN_V4: [(&str, u32, u32); 7] = [
    ("hidden_global_offset_x", 0, 8),
    ("hidden_global_offset_y", 8, 8),
    ("hidden_global_offset_z", 16, 8),
    ("hidden_hostcall_buffer", 24, 8),
    ("hidden_default_queue", 32, 8),
    ("hidden_completion_action", 40, 8),
    ("hidden_multigrid_sync_arg", 48, 8),
];
pub const HIDDEN_V4_SIZE: u32 = 56;

/// Lays out explicit arguments (natural alignment and size of each type; by-value
/// structs in their memory layout) followed by the hidden arguments of
/// `code_object_version` (4, 5 or 6; anything above 5 uses the v5 layout, below 4
/// is treated as 4). With `hidden == false` (kernels that use no implicit
/// argument) no hidden arguments are laid out.
pub fn layout_with(args: &[Type], code_object_version: u32, hidden: bool) -> KernargLayout {
    let mut offset = 0;
    let mut align = 4;
    let mut explicit = Vec::with_capacity(args.len());
    for ty in args {
        let a = ty.align();
        offset = align_to(offset, a);
        explicit.push(KernargArg { ty: ty.clone(), offset, size: ty.size(), align: a });
        offset += ty.size();
        align = align.max(a);
    }
    let explicit_size = offset;
    let hidden_offset = align_to(explicit_size, 8);
    let mut list = Vec::new();
    let mut size = explicit_size;
    if hidden {
        align = align.max(8);
        let (table, tail, bytes): (&[HiddenEntry], &[HiddenEntry], u32) = if code_object_version >= 5 {
            (&HIDDEN_V5, &HIDDEN_V5_TAIL, HIDDEN_V5_SIZE)
        } else {
            (&HIDDEN_V4, &[], HIDDEN_V4_SIZE)
        };
        for &(name, off, sz) in table.iter().chain(tail) {
            list.push(HiddenArg { name, offset: hidden_offset + off, size: sz });
        }
        size = hidden_offset + bytes;
    }
    // The segment size is a multiple of 4 (LLVM's getKernArgSegmentSize; measured:
    // 241 explicit bytes without hidden arguments give .kernarg_segment_size 244).
    let size = align_to(size, 4);
    KernargLayout { explicit, explicit_size, hidden_offset, hidden: list, size, align }
}

/// [`layout_with`] with the hidden arguments present.
pub fn layout(args: &[Type], code_object_version: u32) -> KernargLayout {
    layout_with(args, code_object_version, true)
}

/// Hidden arguments LLVM 22 leaves out unless the kernel needs them (printf,
/// dynamic LDS, the gfx8 apertures).
pub const HIDDEN_ON_DEMAND: [&str; 4] =
    ["hidden_printf_buffer", "hidden_dynamic_lds_size", "hidden_private_base", "hidden_shared_base"];

impl KernargLayout {
    /// The hidden arguments LLVM 22 emits in the metadata of a kernel compiled
    /// from plain IR (every implicit input assumed used): all but
    /// [`HIDDEN_ON_DEMAND`].
    pub fn hidden_emitted_by_default(&self) -> Vec<HiddenArg> {
        self.hidden.iter().copied().filter(|h| !HIDDEN_ON_DEMAND.contains(&h.name)).collect()
    }

    /// The hidden argument called `name`, if laid out.
    pub fn hidden_arg(&self, name: &str) -> Option<HiddenArg> {
        self.hidden.iter().copied().find(|h| h.name == name)
    }
}
