#!/usr/bin/env python3
"""Independent expected figures for tests/unit/sample_statistics_test.cpp.

Python's statistics module for mean and sample standard deviation; Student's t distribution from its
density (math.lgamma) integrated with Simpson's rule and inverted by bisection, no Boost and no scipy.
Cross-checked against printed t-table values (t(0.975, 4) = 2.776, t(0.975, 9) = 2.262,
t(0.975, 1) = 12.706). Run from the repository root:
    python3 tests/tools/statistics_expected.py
"""
import math
import statistics
from fractions import Fraction


def t_pdf(x, df):
    c = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
    return c * (1 + x * x / df) ** (-(df + 1) / 2)


def t_cdf(x, df):
    # 0.5 + integral_0^x pdf, Simpson's rule with many panels (the density is smooth).
    n = 4000
    h = x / n
    total = t_pdf(0, df) + t_pdf(x, df)
    for i in range(1, n):
        total += (4 if i % 2 else 2) * t_pdf(i * h, df)
    return 0.5 + total * h / 3


def t_quantile(p, df):
    low, high = 0.0, 1000.0
    for _ in range(200):
        mid = (low + high) / 2
        if t_cdf(mid, df) < p:
            low = mid
        else:
            high = mid
    return (low + high) / 2


for df, table in ((4, 2.776), (9, 2.262), (1, 12.706)):
    assert abs(t_quantile(0.975, df) - table) < 1e-3, (df, t_quantile(0.975, df))


def summary(label, samples, level=0.95):
    n = len(samples)
    mean = statistics.fmean(samples)
    sd = statistics.stdev(samples)
    t = t_quantile(1 - (1 - level) / 2, n - 1)
    half = t * sd / math.sqrt(n)
    print(f"{label}: n={n} mean={mean:.10g} sd={sd:.10g} t={t:.10g} ci=[{mean - half:.10g}, {mean + half:.10g}] "
          f"spread={half / abs(mean):.10g}")
    return n, mean, sd


def welch(label, a, b, margin):
    na, ma, sa = a
    nb, mb, sb = b
    scale = 1 + margin
    va = scale * scale * sa * sa / na
    vb = sb * sb / nb
    t = (mb - scale * ma) / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va * va / (na - 1) + vb * vb / (nb - 1))
    slower_p = 1 - t_cdf(t, df) if t >= 0 else t_cdf(-t, df)
    print(f"{label} margin={margin}: t={t:.10g} df={df:.10g} p_slower={slower_p:.10g} p_faster={1 - slower_p:.10g}")
    # Noise of the difference (margin 0), relative to A's mean.
    v = sa * sa / na + sb * sb / nb
    d = v * v / ((sa * sa / na) ** 2 / (na - 1) + (sb * sb / nb) ** 2 / (nb - 1))
    print(f"  noise={t_quantile(0.975, d) * math.sqrt(v) / ma:.10g}")


decode_a = summary("decode A", [4.21, 4.18, 4.25, 4.19, 4.22])
decode_b = summary("decode B", [4.43, 4.40, 4.46, 4.38, 4.45])
summary("two samples", [10.0, 12.0])
summary("ten samples", [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0])
welch("A vs B", decode_a, decode_b, 0.02)
welch("A vs B", decode_a, decode_b, 0.0)
welch("A vs B", decode_a, decode_b, 0.08)


def welch_exact(label, a, b, margin):
    # Exact rationals: (1 + 1e306)^2 * var_a overflows a double, a Fraction does not.
    na, ma, sa = a
    nb, mb, sb = b
    scale = 1 + Fraction(margin)
    va = scale * scale * Fraction(sa) ** 2 / na
    vb = Fraction(sb) ** 2 / nb
    diff = Fraction(mb) - scale * Fraction(ma)
    t = float(diff / scale) / math.sqrt(float((va + vb) / (scale * scale)))
    df = float((va + vb) ** 2 / (va * va / (na - 1) + vb * vb / (nb - 1)))
    print(f"{label} margin={margin:g}: t={t:.10g} df={df:.10g}")


welch_exact("A vs B", decode_a, decode_b, 1e306)
# Identical samples: the exact mean is the value and the spread 0; the counts at which a plain
# floating-point sum / n is not the value (the cases the C++ tests use). The sum is a left-to-right loop, as in
# C++: Python 3.12's sum() of floats is compensated (Neumaier) and gives other counts than 3.11's.
def plain_sum(values):
    total = 0.0
    for value in values:
        total += value
    return total


for value in (0.1, 0.5, 0.3, 1.1, 7.7):
    off = [n for n in range(2, 11) if plain_sum([value] * n) / n != value]
    print(f"constant {value}: exact sd={statistics.stdev([Fraction(value)] * 3)}; plain mean off at n={off}")
# tests/unit/pipeline_repeats_test.cpp: three bare runs.
summary("pipeline wall_s", [1.0, 1.1, 1.2])
summary("pipeline decode_s", [0.17, 0.18, 0.175])


# tests/unit/noise_gate_test.cpp: synthetic repeats, decode_s = scale * (1 + noise * z).
Z_A = (-1.26, -0.63, 0.0, 0.63, 1.26)
Z_B = (0.63, -1.26, 1.26, 0.0, -0.63)


def gate(label, scale_b, noise, limit):
    a = [1.0 * (1 + noise * z) for z in Z_A]
    b = [scale_b * (1 + noise * z) for z in Z_B]
    print(f"gate {label}: A={a} B={b}")
    welch(f"gate {label}", summary("  A", a), summary("  B", b), limit)


gate("5% slower, 1% noise", 1.05, 0.01, 0.02)
gate("5% slower, 10% noise", 1.05, 0.10, 0.02)
gate("unchanged, 1% noise", 1.0, 0.01, 0.02)
