// The double forms of exp, exp2, exp10, log, log2 and log10 (src/spirv/libm.rs
// `double`), 6 results per work-item.
__kernel void double_math(__global const double *x, __global double *out) {
    size_t i = get_global_id(0);
    double a = x[i];
    __global double *o = out + 6 * i;
    o[0] = exp(a);
    o[1] = exp2(a);
    o[2] = exp10(a);
    o[3] = log(a);
    o[4] = log2(a);
    o[5] = log10(a);
}
