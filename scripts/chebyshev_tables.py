#!/usr/bin/env python3
"""Chebyshev tables of the double math library (src/spirv/libm/special.rs
`ERFC_SCALED`, src/spirv/libm/gamma.rs `LGAMMA_SCALED`), in 60-digit
arithmetic (mpmath), each cut where every later coefficient is below 2^-60
of the first (coefficients at 100 Chebyshev nodes of the first kind).

- ERFC_SCALED: f(t) = x e^(x^2) erfc(x) with t = 1/x in [1/28, 2] (x from
  1/2 to 28; beyond, erfc is below the least subnormal), in
  u = (2t - 2 - 1/28) / (2 - 1/28).
- LGAMMA_SCALED: g(z) = ln Gamma(z) / ((z - 1)(z - 2)) on z in [1, 3] (the
  zeros of ln Gamma divided out, so that (z - 1)(z - 2) g(z) keeps its
  relative accuracy there), in u = z - 2.

Also prints 0.5 log2(2 pi) as a pair (Stirling's constant in base 2).
Run: python3 scripts/chebyshev_tables.py
"""
import struct

import mpmath as mp

mp.mp.dps = 60
NODES = 100


def chebyshev(f, a, b):
    us = [mp.cos(mp.pi * (k + mp.mpf(1) / 2) / NODES) for k in range(NODES)]
    values = [f((b - a) / 2 * u + (a + b) / 2) for u in us]
    cs = []
    for j in range(NODES):
        s = mp.fsum(values[k] * mp.cos(mp.pi * j * (k + mp.mpf(1) / 2) / NODES) for k in range(NODES))
        cs.append(2 * s / NODES if j else s / NODES)
    n = next(k for k in range(NODES) if all(abs(c) < abs(cs[0]) * mp.mpf(2) ** -60 for c in cs[k:]))
    return cs[:n]


def bits(v):
    return struct.unpack("<Q", struct.pack("<d", float(v)))[0]


def table(name, doc, cs):
    for line in doc:
        print(f"/// {line}")
    print(f"const {name}: [f64; {len(cs)}] = [")
    for c in cs:
        print(f"    f64::from_bits(0x{bits(c):016x}), // {mp.nstr(c, 20)}")
    print("];")


def main():
    erfc = chebyshev(lambda t: (1 / t) * mp.exp(1 / t**2) * mp.erfc(1 / t), mp.mpf(1) / 28, mp.mpf(2))
    table("ERFC_SCALED", ["f(t) = x e^(x²) erfc(x) with t = 1/x in [1/28, 2], as Chebyshev", f"coefficients in u = (2t - 2 - 1/28) / (2 - 1/28): {len(erfc)} terms, the rest below", "2^-60 of the first (scripts/chebyshev_tables.py, 60 digits)."], erfc)
    lgamma = chebyshev(lambda z: mp.loggamma(z) / ((z - 1) * (z - 2)), mp.mpf(1), mp.mpf(3))
    table("LGAMMA_SCALED", ["g(z) = ln Γ(z) / ((z - 1)(z - 2)) on [1, 3], as Chebyshev coefficients", f"in u = z - 2: {len(lgamma)} terms, the rest below 2^-60 of the first", "(scripts/chebyshev_tables.py, 60 digits)."], lgamma)
    c = mp.log(2 * mp.pi, 2) / 2
    hi = float(c)
    lo = float(c - mp.mpf(hi))
    print(f"const HALF_LOG2_2PI: f64 = f64::from_bits(0x{bits(hi):016x}); // {mp.nstr(c, 25)}")
    print(f"const HALF_LOG2_2PI_LO: f64 = f64::from_bits(0x{bits(lo):016x});")


if __name__ == "__main__":
    main()
