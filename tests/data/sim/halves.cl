#include "common.h"
// D16 loads (a 16-bit load into one half of a register, the other half kept)
// and s_pack_* (16-bit halves of uniform values packed): what clang-22 emits
// for ushort2 built from separate 16-bit loads and from kernel arguments.
kernel void halves(global const ushort *a, global const ushort *b, global const uchar *c,
                   global uint *out, ushort2 ux, ushort2 uy) {
    uint i = gid_x();
    ushort2 v = (ushort2)(a[i], b[i]);
    ushort2 w = (ushort2)(c[i], a[i + 1]);
    volatile private ushort tmp[8];
    for (int k = 0; k < 8; k++) tmp[k] = a[(i + k) & 63];
    ushort2 p = (ushort2)(tmp[i & 7], tmp[(i + 3) & 7]);
    ushort2 hl = (ushort2)(ux.y, uy.x);
    ushort2 lh = (ushort2)(ux.x, uy.y);
    ushort2 hh = (ushort2)(ux.y, uy.y);
    out[4 * i + 0] = as_uint(v) + as_uint(lh);
    out[4 * i + 1] = as_uint(w) ^ as_uint(hh);
    out[4 * i + 2] = as_uint(p) + as_uint(hl);
    out[4 * i + 3] = as_uint(v) * 3u + as_uint(w);
}
