"""Noise multiplier needed for (epsilon=1, delta=1e-4) in the papers/park2016 setting:
D = 400,000 documents, minibatch S in {10, 20, 50, 100, 200, 400}, 160,000 documents seen
(J = 160,000 / S iterations, sampling rate q = S / D).

Columns: the paper's recipe (eqs. (3), (5), (6); zCDP, advanced and linear composition),
the tight accountants (RDP, dependency-free; PLD via dp-accounting when installed), and
the ratio recipe / tight (> 1: the tight accountant needs that much less noise for the
same guarantee). The tight accountants model Poisson sampling at rate S/D.

    python bench/bench_park2016_noise.py [--quick]
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _harness import format_table, parser, report  # noqa: E402,F401

from dptm.accounting import calibrate_gaussian, pld_available, recipes  # noqa: E402

D, SEEN, EPS, DELTA = 400_000, 160_000, 1.0, 1e-4


def main():
    args = parser(__doc__).parse_args()
    sizes = [10, 100, 400] if args.quick else [10, 20, 50, 100, 200, 400]
    have_pld = pld_available()
    if not have_pld:
        print("dp-accounting not installed: PLD column skipped (pip install dptm[pld])")
    rows = []
    for S in sizes:
        J, q = SEEN // S, S / D
        row = {"S": S, "J": J, "q": q}
        for c in ("zcdp", "advanced", "linear"):
            row[f"recipe_{c}"] = recipes.park2016_noise_multiplier(EPS, DELTA, D, S, SEEN, c)
        t0 = time.perf_counter()
        row["rdp"] = calibrate_gaussian(EPS, DELTA, sampling_probability=q, steps=J, tol=1e-4)
        row["rdp_s"] = time.perf_counter() - t0
        row["recipe/rdp"] = row["recipe_zcdp"] / row["rdp"]
        if have_pld:
            t0 = time.perf_counter()
            row["pld"] = calibrate_gaussian(EPS, DELTA, sampling_probability=q, steps=J, method="pld",
                                            tol=2e-3, value_discretization_interval=1e-3)
            row["pld_s"] = time.perf_counter() - t0
            row["recipe/pld"] = row["recipe_zcdp"] / row["pld"]
        rows.append(row)
        print(f"  S={S} done", flush=True)
    print()
    report("bench_park2016_noise", rows, [
        ("S", None), ("J", None), ("q", ".2e"), ("recipe_zcdp", ".4f"), ("recipe_advanced", ".4f"),
        ("recipe_linear", ".4f"), ("rdp", ".4f"), ("pld", ".4f"), ("recipe/rdp", ".3f"),
        ("recipe/pld", ".3f"), ("rdp_s", ".1f"), ("pld_s", ".1f")],
        meta={"epsilon": EPS, "delta": DELTA, "n_docs": D, "n_seen": SEEN,
              "note": "noise multiplier = sigma / L2 sensitivity of the minibatch statistic"})


if __name__ == "__main__":
    main()
