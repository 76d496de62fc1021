"""Cost of one exact discrete Gaussian draw (issue #16, SUB-LDA's snapshot noise).

ns per draw, secret AES-128-CTR generator (``dptm._random.secret_generator``), filling a
preallocated int64 buffer, same run, interleaved repeats:

* ``fill_discrete_gaussian_inversion``: table inversion (``dptm._gauss_inversion``);
* ``fill_discrete_gaussian_table``: the alias-table proposal with rejection
  (``dptm._gauss_table``), the previous SUB-LDA sampler;
* ``fill_discrete_laplace_dyadic``: the table discrete Laplace of NoisyGibbsLDA, at the scale
  with the same standard deviation (anchor);
* one AES ``next_uint64`` per draw (``_cgs.uniform_sum``, next_double; the generator's floor).

    python bench/bench_gauss_inversion.py [--repeats 5] [--n 10000000] [--sigmas 2 7.07 40]
"""
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import Case, parser, report  # noqa: E402

from dptm import _cgs, _gauss_inversion, _gauss_table  # noqa: E402
from dptm._random import secret_generator  # noqa: E402
from dptm.mechanisms import discrete_gaussian_parameters  # noqa: E402
from dptm.models.private_gibbs import dyadic_laplace_parameter  # noqa: E402


def main():
    p = parser(__doc__)
    p.add_argument("--n", type=int, default=10 ** 7)
    p.add_argument("--sigmas", nargs="+", type=float, default=[2.0, 7.07, 40.0])
    args = p.parse_args()
    n = args.n // 10 if args.quick else args.n
    sec = secret_generator()
    bg = sec.bit_generator
    out = np.empty(n, dtype=np.int64)
    cases = []
    for s in args.sigmas:
        pp, q, _, eff = discrete_gaussian_parameters(s)
        inv = _gauss_inversion.inversion_table(pp, q)
        alias = _gauss_table.gauss_table(pp, q)
        g = f"sigma={s:g}"
        cases += [
            Case(g, "inversion", lambda inv=inv, pp=pp, q=q: _cgs.fill_discrete_gaussian_inversion(
                out, pp, q, bg, inv), work=n, unit="draws"),
            Case(g, "alias + rejection", lambda alias=alias: _cgs.fill_discrete_gaussian_table(
                out, alias, bg), work=n, unit="draws")]
        # the discrete Laplace with the same standard deviation: var = 2 r / (1 - r)^2
        if s <= 40:
            r = 1 + 1 / s ** 2 - math.sqrt((1 + 1 / s ** 2) ** 2 - 1)
            a, _ = dyadic_laplace_parameter(-1 / math.log(r))
            cases.append(Case(g, "dyadic Laplace (same sd)",
                              lambda a=a: _cgs.fill_discrete_laplace_dyadic(out, a, bg),
                              work=n, unit="draws"))
        cases.append(Case(g, "AES next_double", lambda: _cgs.uniform_sum(n, bg), work=n,
                          unit="draws"))
    # interleaved repeats: load changes hit every case alike
    times = {}
    for case in cases:                     # warm-up (table builds are cached already)
        case.fn()
    for _ in range(args.repeats):
        for case in cases:
            t0 = time.perf_counter()
            case.fn()
            times.setdefault((case.group, case.name), []).append(time.perf_counter() - t0)
    rows = []
    for case in cases:
        med = float(np.median(times[(case.group, case.name)]))
        rows.append({"group": case.group, "name": case.name, "median_s": med,
                     "ns_per_draw": med / n * 1e9, "runs_s": times[(case.group, case.name)]})
    for r in rows:
        ref = [x for x in rows if x["group"] == r["group"] and x["name"] == "alias + rejection"]
        r["speedup_vs_alias"] = ref[0]["median_s"] / r["median_s"]
    load = os.getloadavg()
    report("bench_gauss_inversion", rows,
           [("group", ""), ("name", ""), ("ns_per_draw", ".2f"), ("speedup_vs_alias", ".2f")],
           {"n": n, "repeats": args.repeats, "load_after": load,
            "note": "shared 2-core machine; same-run ratios"})


if __name__ == "__main__":
    main()
