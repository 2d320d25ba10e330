// The rounding-mode half stores (OpenCL.std vstore_half_r, vstore_halfn_r,
// vstorea_halfn_r; src/spirv/opencl.rs `to_half_rounded`), from float and
// from double, 16 halves per work-item.
__kernel void half_rounding(__global const float *x, __global const double *d, __global half *out) {
    size_t i = get_global_id(0);
    float a = x[i];
    double b = d[i];
    __global half *o = out + 16 * i;
    vstore_half_rte(a, 0, o);
    vstore_half_rtz(a, 1, o);
    vstore_half_rtp(a, 2, o);
    vstore_half_rtn(a, 3, o);
    vstore_half_rte(b, 4, o);
    vstore_half_rtz(b, 5, o);
    vstore_half_rtp(b, 6, o);
    vstore_half_rtn(b, 7, o);
    // Vector forms: lanes (a, -a); (b, -b) aligned.
    vstore_half2_rtz((float2)(a, -a), 4, o);
    vstore_half2_rtp((float2)(a, -a), 5, o);
    vstorea_half2_rtn((double2)(b, -b), 6, o);
    vstorea_half2_rtp((double2)(b, -b), 7, o);
}
