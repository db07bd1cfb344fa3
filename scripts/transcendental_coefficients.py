#!/usr/bin/env python3
"""Regenerates the polynomial coefficients and tables of core/codegen/transcendental.cpp.

Near-minimax (Chebyshev) fits with mpmath, rounded to float32 or float64, lowest degree first
as the C++ tables list them, and the maximum error after rounding. Needs python3-mpmath.
"""
import struct

from mpmath import mp, mpf, chebyfit, sin, cos, sqrt, atanh, log, pi, polyval, floor

mp.dps = 60


def f32(x):
    return struct.unpack("f", struct.pack("f", float(x)))[0]


def fit(name, f, lo, hi, n, rnd):
    c = [rnd(v) for v in chebyfit(f, [lo, hi], n)]
    err = max(abs(polyval([mpf(v) for v in c], lo + (hi - lo) * i / 2000) - f(lo + (hi - lo) * i / 2000))
              for i in range(2001))
    print(f"{name} ({'float32' if rnd is f32 else 'float64'}, {n} terms, max error {float(err):.3g}):")
    print("  {" + ", ".join(repr(v) for v in reversed(c)) + "}")


# exp2: 2^s = 1 + s*P(s), s in [-1/2, 1/2]
P = lambda s: (mpf(2) ** s - 1) / s if s != 0 else log(2)
fit("exp2 P", P, mpf(-0.5), mpf(0.5), 7, f32)
fit("exp2 P", P, mpf(-0.5), mpf(0.5), 12, float)
# log2: log2((1+t)/(1-t)) = t*(C + y*T(y)), y = t^2 in [0, 1/25]
C = 2 / log(2)
T = lambda y: (2 * atanh(sqrt(y)) / log(2) / sqrt(y) - C) / y if y != 0 else C / 3
fit("log2 T", T, mpf(0), mpf(1) / 25, 4, f32)
fit("log2 T", T, mpf(0), mpf(1) / 25, 8, float)
print("C hi/lo float32:", repr(f32(C)), repr(f32(C - mpf(f32(C)))), " float64:", repr(float(C)),
      repr(float(C - mpf(float(C)))))
# sin(r) = r + r*y*S(y), cos(r) = 1 - y/2 + y^2*K(y), y = r^2 in [0, (pi/4)^2]
S = lambda y: (sin(sqrt(y)) / sqrt(y) - 1) / y if y != 0 else mpf(-1) / 6
K = lambda y: (cos(sqrt(y)) - 1 + y / 2) / (y * y) if y != 0 else mpf(1) / 24
for n, rnd in ((4, f32), (8, float)):
    fit("sin S", S, mpf(0), (pi / 4) ** 2, n, rnd)
    fit("cos K", K, mpf(0), (pi / 4) ** 2, n, rnd)
# 2/pi in 32-bit words, pi/2 to 32 bits, pi/2 in four parts of 33 bits for Cody-Waite
mp.dps = 500
v, words = 2 / pi, []
for _ in range(40):
    v *= 2**32
    words.append(int(floor(v)))
    v -= words[-1]
print("2/pi words:", ", ".join("0x%08Xu" % w for w in words))
print("round(pi/2 * 2^31) =", int(floor(pi / 2 * 2**31 + mpf(0.5))))
x, parts = pi / 2, []
for _ in range(3):
    e = int(floor(mp.log(x, 2)))
    parts.append(floor(x * 2 ** (32 - e)) / mpf(2) ** (32 - e))
    x -= parts[-1]
parts.append(x)
print("pi/2 parts:", ", ".join(repr(float(p)) for p in parts))
