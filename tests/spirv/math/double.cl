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

// The rest of the double library (src/spirv/libm.rs `on_double`), 24
// results per work-item: x and y any doubles, u in [-1, 1].
__kernel void double_library(__global const double *x, __global const double *y, __global const double *u, __global double *out) {
    size_t i = get_global_id(0);
    double a = x[i], b = y[i], c = u[i];
    __global double *o = out + 24 * i;
    int e;
    double whole;
    o[0] = logb(a);
    o[1] = (double)ilogb(a);
    o[2] = frexp(a, &e);
    o[3] = (double)e;
    o[4] = modf(a, &whole);
    o[5] = whole;
    o[6] = fract(a, &whole);
    o[7] = whole;
    o[8] = nextafter(a, b);
    o[9] = maxmag(a, b);
    o[10] = minmag(a, b);
    o[11] = hypot(a, b);
    o[12] = sinpi(a);
    o[13] = cospi(a);
    o[14] = tanpi(a);
    o[15] = atan(a);
    o[16] = atanpi(a);
    o[17] = atan2(a, b);
    o[18] = atan2pi(a, b);
    o[19] = asin(c);
    o[20] = acos(c);
    o[21] = asinpi(c);
    o[22] = acospi(c);
    o[23] = nan((ulong)i * 0x9e3779b97f4a7c15UL);
}

// expm1, log1p, the hyperbolic functions and their inverses, cbrt on double
// (src/spirv/libm/double.rs), 9 results per work-item: x any double, y >= 1,
// u in (-1, 1).
__kernel void double_family(__global const double *x, __global const double *y, __global const double *u, __global double *out) {
    size_t i = get_global_id(0);
    double a = x[i];
    __global double *o = out + 9 * i;
    o[0] = expm1(a);
    o[1] = log1p(a);
    o[2] = sinh(a);
    o[3] = cosh(a);
    o[4] = tanh(a);
    o[5] = asinh(a);
    o[6] = acosh(y[i]);
    o[7] = atanh(u[i]);
    o[8] = cbrt(a);
}

// sin, cos, tan and sincos on double (src/spirv/libm/double.rs `sin_cos`),
// scalars and a double2: 7 results per work-item.
__kernel void double_trig(__global const double *x, __global const double *y, __global double *out) {
    size_t i = get_global_id(0);
    double a = x[i];
    __global double *o = out + 7 * i;
    o[0] = sin(a);
    o[1] = cos(a);
    o[2] = tan(a);
    double c;
    o[3] = sincos(a, &c);
    o[4] = c;
    double2 v = sin((double2)(a, y[i]));
    o[5] = v.x;
    o[6] = v.y;
}

// pow, powr, pown and rootn on double (the exponent as a pair): 4 results
// per work-item; n for pown, r (in -3..3) for rootn.
__kernel void double_pow(__global const double *x, __global const double *y, __global const int *n, __global const int *r, __global double *out) {
    size_t i = get_global_id(0);
    double a = x[i], b = y[i];
    __global double *o = out + 4 * i;
    o[0] = pow(a, b);
    o[1] = powr(fabs(a), b);
    o[2] = pown(a, n[i]);
    o[3] = rootn(a, r[i]);
}

// fmod, remainder, remquo and LLVM's frem (OpFRem) on double, exact (src/spirv/
// libm/special.rs `remainder`), and a double2 fmod: 7 results per work-item.
__kernel void double_remainder(__global const double *x, __global const double *y, __global double *out) {
    size_t i = get_global_id(0);
    double a = x[i], b = y[i];
    __global double *o = out + 7 * i;
    o[0] = fmod(a, b);
    o[1] = remainder(a, b);
    int q;
    o[2] = remquo(a, b, &q);
    o[3] = (double)q;
    o[4] = __builtin_fmod(a, b);
    double2 v = fmod((double2)(a, b), (double2)(b, a));
    o[5] = v.x;
    o[6] = v.y;
}

// erf and erfc (src/spirv/libm/special.rs `erf_double`), lgamma, lgamma_r
// and tgamma (src/spirv/libm/gamma.rs) on double: 6 results per work-item.
__kernel void double_special(__global const double *x, __global double *out) {
    size_t i = get_global_id(0);
    double a = x[i];
    __global double *o = out + 6 * i;
    o[0] = erf(a);
    o[1] = erfc(a);
    o[2] = lgamma(a);
    int sign;
    o[3] = lgamma_r(a, &sign);
    o[4] = (double)sign;
    o[5] = tgamma(a);
}
