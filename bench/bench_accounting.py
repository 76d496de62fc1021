"""Time to evaluate epsilon after 10,000 composed Poisson-subsampled Gaussian steps over the
order grid: dptm's RDPAccountant vs dp_accounting's RdpAccountant, same run, same orders.

    python bench/bench_accounting.py [--repeats 5] [--quick]

Both accountants compute the RDP of one step at every order once and scale it by the
count; the time is dominated by the fractional orders. The epsilons differ where
dp_accounting 0.6's fractional-order RDP is too high (its series adds negative terms as
positive); the column ``eps_rel_diff`` shows by how much.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import logging  # noqa: E402

from _harness import Case, add_ratios, parser, report, run_cases  # noqa: E402

from dptm.accounting import (DEFAULT_ORDERS, GaussianEvent, PoissonSampledEvent,  # noqa: E402
                             RDPAccountant, SelfComposedEvent)
from dptm.accounting.accountants import _rdp_leaf  # noqa: E402

STEPS, DELTA = 10_000, 1e-5


def ours(q, sigma):
    def fn():
        _rdp_leaf.cache_clear()  # no cached RDP between repeats
        acc = RDPAccountant(DEFAULT_ORDERS)
        acc.compose(SelfComposedEvent(PoissonSampledEvent(GaussianEvent(sigma), q), STEPS))
        eps, order = acc.get_epsilon_and_order(DELTA)
        return {"epsilon": eps, "order": order}
    return fn


def theirs(q, sigma):
    import dp_accounting
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    def fn():
        acc = rdp.RdpAccountant(list(DEFAULT_ORDERS))
        acc.compose(dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), STEPS))
        eps, order = acc.get_epsilon_and_optimal_order(DELTA)
        return {"epsilon": float(eps), "order": float(order)}
    return fn


def main():
    args = parser(__doc__).parse_args()
    logging.getLogger("absl").setLevel(logging.ERROR)
    settings = [(0.01, 1.0), (0.001, 0.8), (0.05, 2.0), (0.5, 5.0)]
    if args.quick:
        settings = settings[:1]
    cases = []
    for q, sigma in settings:
        group = f"q={q:g} sigma={sigma:g}"
        cases.append(Case(group, "dptm", ours(q, sigma), extra={"q": q, "sigma": sigma}))
        try:
            import dp_accounting  # noqa: F401
            cases.append(Case(group, "dp_accounting", theirs(q, sigma), extra={"q": q, "sigma": sigma}))
        except ImportError:
            print("dp-accounting not installed: anchor skipped (pip install dptm[bench])")
    rows = add_ratios(run_cases(cases, repeats=args.repeats), "dp_accounting")
    by_group = {}
    for r in rows:
        by_group.setdefault(r["group"], {})[r["name"]] = r
    for g in by_group.values():
        if "dp_accounting" in g:
            g["dptm"]["eps_rel_diff"] = g["dptm"]["epsilon"] / g["dp_accounting"]["epsilon"] - 1
    print()
    report("bench_accounting", rows, [
        ("group", None), ("name", None), ("median_s", ".4f"), ("speed_vs_dp_accounting", ".2f"),
        ("epsilon", ".6f"), ("order", ".1f"), ("eps_rel_diff", ".2e")],
        meta={"steps": STEPS, "delta": DELTA, "n_orders": len(DEFAULT_ORDERS)})


if __name__ == "__main__":
    main()
