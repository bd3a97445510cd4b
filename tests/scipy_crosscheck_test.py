#!/usr/bin/env python3
"""The statistics' p-values against scipy.stats (issue 10, point 5).

Usage: scipy_crosscheck_test.py STATISTICS_PVALUES

Runs the tool (properties/statistics/statistics_pvalues.cc), which prints our tail functions on a
fixed grid as JSON, and compares each value with scipy: chi2.sf, ncx2.sf, the two-sided binomial
from binom.cdf / binom.sf (and its interval form, each tail at its end of the interval), to
relative 1e-6; the saddle-point tail of a lattice score statistic against its exact tail (the pmf
of the sum by repeated convolution), to relative 0.15.

Why 1e-6: both sides evaluate the regularized incomplete gamma / beta functions to about 1e-14
relative and the noncentral chi-square's Poisson-weighted series to about 1e-12; a wrapper bug
(wrong degrees of freedom, a missing complement, a wrong noncentrality, an off-by-one tail) is an
O(1) relative error, so 1e-6 separates the two by orders of magnitude either way. Values below
1e-300 are compared as equal when both are (underflow). Why 0.15 for the saddle point: it is an
approximation, not an exact tail; on a lattice without continuity correction STAT-9 measures it
within 12% below the exact tail at the real levels, which STAT-4's 2x margin covers.

Without scipy (python3-scipy, for /usr/bin/python3) it skips with exit code 77, unless CI=true,
where it fails.
"""
import json
import math
import os
import subprocess
import sys


def import_scipy():
    try:
        import numpy  # noqa: F401
        import scipy.stats  # noqa: F401
        return True
    except ImportError:
        return False


def main():
    if not import_scipy():
        # Debian's python3-scipy is for /usr/bin/python3, which is not always first on PATH.
        if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3") and \
                not os.environ.get("SAMPCERT_SCIPY_REEXEC"):
            env = dict(os.environ, SAMPCERT_SCIPY_REEXEC="1")
            os.execve("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv, env)
        print("SKIP: no python3 with scipy (install python3-scipy)")
        return 1 if os.environ.get("CI") == "true" else 77
    import numpy as np
    from scipy import stats

    tool = sys.argv[1]
    rows = json.loads(subprocess.run([tool], check=True, capture_output=True, text=True).stdout)

    def two_sided(k, n, lo, hi):
        lower = stats.binom.cdf(k, n, lo)
        upper = 1.0 if k == 0 else stats.binom.sf(k - 1, n, hi)
        return min(1.0, 2 * min(lower, upper))

    def lattice_tail(s, n):
        # Exact pmf of the sum of n draws of {0, 1, 2} (0.5, 0.3, 0.2), by repeated squaring.
        base = np.array([0.5, 0.3, 0.2])
        result = np.array([1.0])
        power, m = base, int(n)
        while m:
            if m & 1:
                result = np.convolve(result, power)
            power = np.convolve(power, power)
            m >>= 1
        s = int(s)
        mean = 0.7 * n
        tail = result[s:].sum() if s > mean else result[:s + 1].sum()
        return min(1.0, 2 * tail)

    worst = {}
    failures = []
    for row in rows:
        fn, args, ours = row["fn"], row["args"], row["value"]
        if fn == "chi2_sf":
            ref, tol = stats.chi2.sf(args[0], args[1]), 1e-6
        elif fn == "ncx2_sf":
            ref, tol = stats.ncx2.sf(args[0], args[1], args[2]), 1e-6
        elif fn == "binom_two_sided":
            k, n, p = int(args[0]), int(args[1]), args[2]
            ref, tol = two_sided(k, n, p, p), 1e-6
        elif fn == "binom_interval":
            k, n, lo, hi = int(args[0]), int(args[1]), args[2], args[3]
            ref, tol = two_sided(k, n, lo, hi), 1e-6
        elif fn == "saddle_two_sided_012":
            ref, tol = lattice_tail(args[0], args[1]), 0.15
        else:
            failures.append(f"unknown function {fn}")
            continue
        ref = float(ref)
        if ref < 1e-300 and ours < 1e-300:
            rel = 0.0
        else:
            rel = abs(ours - ref) / max(abs(ref), 1e-300)
        if rel > worst.get(fn, (-1,))[0]:
            worst[fn] = (rel, args, ours, ref)
        if not math.isfinite(ours) or rel > tol:
            failures.append(f"{fn}{tuple(args)}: ours {ours:.17g}, scipy {ref:.17g}, "
                            f"relative {rel:.3g} > {tol}")
    for fn, (rel, args, ours, ref) in sorted(worst.items()):
        print(f"{fn}: worst relative difference {rel:.3g} at {args} (ours {ours:.6g}, "
              f"scipy {ref:.6g})")
    print(f"{len(rows)} values compared with scipy {__import__('scipy').__version__}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
