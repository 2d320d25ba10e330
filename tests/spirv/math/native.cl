// OpenCL's native_* and half_* functions (one hardware instruction each, or a
// short composition of them), 16 results per work-item on x[i] (positive where
// the function needs it) and y[i].
__kernel void native(__global const float *x, __global const float *y, __global float *out) {
    size_t i = get_global_id(0);
    float a = x[i], p = fabs(a) + 0.001f, b = y[i];
    __global float *o = out + 16 * i;
    o[0] = native_exp(a);
    o[1] = native_exp2(a);
    o[2] = native_exp10(a * 0.25f);
    o[3] = native_log(p);
    o[4] = native_log2(p);
    o[5] = native_log10(p);
    o[6] = native_sin(a);
    o[7] = native_cos(a);
    o[8] = native_tan(a * 0.1f);
    o[9] = native_recip(p);
    o[10] = native_rsqrt(p);
    o[11] = native_sqrt(p);
    o[12] = native_divide(a, p);
    o[13] = native_powr(p, b);
    o[14] = half_exp(a);
    o[15] = half_sin(a);
}
