// The OpenCL math library beyond MIR's own operations (src/spirv/libm.rs):
// every function on x[i] (and y[i], n[i]), 48 results per work-item.
// tests/spirv_math.rs checks them against Rust's f64 library.
__kernel void library(__global const float *x, __global const float *y, __global const int *n, __global float *out, __global int *iout) {
    size_t i = get_global_id(0);
    float a = x[i], b = y[i];
    int k = n[i];
    __global float *o = out + 48 * i;
    o[0] = pow(a, b);
    o[1] = pown(a, k);
    o[2] = powr(a, b);
    o[3] = rootn(a, k);
    o[4] = cbrt(a);
    o[5] = exp10(a);
    o[6] = expm1(a);
    o[7] = log10(a);
    o[8] = log1p(a);
    o[9] = hypot(a, b);
    o[10] = sinh(a);
    o[11] = cosh(a);
    o[12] = tanh(a);
    o[13] = asinh(a);
    o[14] = acosh(a);
    o[15] = atanh(a);
    o[16] = atan(a);
    o[17] = atan2(a, b);
    o[18] = asin(a);
    o[19] = acos(a);
    o[20] = atanpi(a);
    o[21] = atan2pi(a, b);
    o[22] = asinpi(a);
    o[23] = acospi(a);
    o[24] = sinpi(a);
    o[25] = cospi(a);
    o[26] = tanpi(a);
    o[27] = logb(a);
    int e;
    o[28] = frexp(a, &e);
    iout[4 * i] = e;
    iout[4 * i + 1] = ilogb(a);
    float w;
    o[29] = modf(a, &w);
    o[30] = w;
    o[31] = fract(a, &w);
    o[32] = w;
    o[33] = nextafter(a, b);
    o[34] = maxmag(a, b);
    o[35] = minmag(a, b);
    o[36] = nan((uint)k);
    // Vectors go lane by lane; two lanes of one are checked.
    float4 v = pow((float4)(a, b, a, 2.0f), (float4)(b, a, 0.5f, b));
    o[37] = v.x;
    o[38] = v.y;
    o[39] = sinpi((float2)(b, a)).y;
    o[40] = fmod(a, b);
    o[41] = remainder(a, b);
    int q;
    o[42] = remquo(a, b, &q);
    iout[4 * i + 2] = q;
    // LLVM's frem (OpFRem).
    o[43] = __builtin_fmodf(a, b);
    o[44] = erf(a);
    o[45] = erfc(a);
    o[46] = lgamma_r(a, &q);
    iout[4 * i + 3] = q;
    o[47] = tgamma(a);
}
