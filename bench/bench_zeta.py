"""zeta(Phi, d) throughput on TweetRumors, K = 5 and 20: our kernel (dptm.attacks.zeta: EM +
SQUAREM finished by active-set Newton) against the paper's way, scipy.optimize.minimize with
the simplex constraint (SLSQP from the uniform start, numerical gradient, as
papers/manzonelli2024 Section 3.3 and its authors' model_stats.max_topic_dist do), in the same
run; ``dptm_squarem_only`` is our kernel without the Newton finish (the previous default).
Also reports the largest relative amount by which scipy's objective exceeds ours (negative:
ours is higher), at scipy's own x (which satisfies sum(x) = 1 only to ~1e-9, so it can exceed
the true maximum by about that much) and at x projected onto the simplex (clip, normalise).

Thread scaling (issue 16): ``dptm_n_jobs=T`` rows time ``zeta(phi, X, n_jobs=T)`` for
every T of ``--threads`` (default 1,2), with the speed-up over one thread; the load
average is printed before and after (scaling figures need an idle machine).

    python bench/bench_zeta.py [--quick] [--repeats 3] [--threads 1,2]
"""
import os
import sys

import numpy as np
from scipy.optimize import minimize

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from _harness import Case, add_ratios, data_path, parser, report, run_cases  # noqa: E402


def neg_loglik(q, P):
    return -np.sum(np.log(np.sum((P.T * q).T, axis=0)))


def scipy_zeta(phi, X, docs, projected=None):
    """The paper's solve: minimize -log p(d | theta, Phi) over the simplex with SLSQP.
    ``projected`` (optional array) receives the objective at x clipped and normalised."""
    K = phi.shape[0]
    out = np.empty(len(docs))
    cons = {"type": "eq", "fun": lambda x: np.sum(x) - 1}
    for i, d in enumerate(docs):
        row = X[d]
        P = phi[:, np.repeat(row.indices, row.data)]
        r = minimize(neg_loglik, np.repeat(1 / K, K), args=(P,), bounds=[(0.0, 1.0)] * K,
                     constraints=cons)
        out[i] = -neg_loglik(r.x, P)
        if projected is not None:
            x = np.clip(r.x, 0.0, None)
            projected[i] = -neg_loglik(x / x.sum(), P)
    return out


def main():
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--scipy-docs", type=int, default=300, help="documents timed for scipy")
    p.add_argument("--threads", default="1,2", help="n_jobs values of the scaling rows")
    args = p.parse_args()
    from sklearn.decomposition import LatentDirichletAllocation
    from sklearn.feature_extraction.text import CountVectorizer
    from dptm import _svi
    from dptm.attacks import zeta
    from dptm.datasets import load_json_texts

    texts = load_json_texts(data_path("tweetrumors", "tweetrumors_clean.json"))
    rng = np.random.default_rng(0)
    half = rng.permutation(len(texts))[: len(texts) // 2]
    cv = CountVectorizer().fit([texts[i] for i in half])
    X = cv.transform(texts).tocsr()
    n_scipy = 60 if args.quick else args.scipy_docs
    threads = tuple(int(t) for t in args.threads.split(","))
    load0 = os.getloadavg()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in load0)} on "
          f"{os.cpu_count()} CPUs", flush=True)
    rows, acc = [], {}
    for K in (5, 20):
        lda = LatentDirichletAllocation(K, random_state=0).fit(X[half])
        phi = lda.components_ / lda.components_.sum(axis=1, keepdims=True)
        docs = rng.choice(np.flatnonzero(np.diff(X.indptr) > 0), n_scipy, replace=False)
        ours = zeta(phi, X)
        proj = np.empty(len(docs))
        with np.errstate(all="ignore"):
            ref = scipy_zeta(phi, X, docs, proj)
        acc[K] = float(np.max((ref - ours[docs]) / np.abs(ours[docs])))
        acc_proj = float(np.max((proj - ours[docs]) / np.abs(ours[docs])))
        csr = (X.indptr.astype(np.int64), X.indices.astype(np.int32), X.data.astype(np.float64),
               np.ascontiguousarray(phi.T))
        cases = [Case(f"zeta_K{K}", "dptm_em", lambda phi=phi: zeta(phi, X),
                      work=X.shape[0], unit="docs",
                      extra={"max_rel_scipy_minus_ours": acc[K],
                             "max_rel_scipy_proj_minus_ours": acc_proj}),
                 Case(f"zeta_K{K}", "dptm_squarem_only",
                      lambda csr=csr: _svi.zeta_batch(*csr, newton=False),
                      work=X.shape[0], unit="docs"),
                 *[Case(f"zeta_K{K}", f"dptm_n_jobs={t}",
                        lambda phi=phi, t=t: zeta(phi, X, n_jobs=t), work=X.shape[0],
                        unit="docs") for t in threads],
                 Case(f"zeta_K{K}", "scipy_slsqp",
                      lambda phi=phi, docs=docs: scipy_zeta(phi, X, docs),
                      work=len(docs), unit="docs")]
        rows += run_cases(cases, repeats=args.repeats)
    add_ratios(rows, "scipy_slsqp")
    for r in rows:  # speed as throughput ratio (the two sides solve different doc counts)
        ref = [q for q in rows if q["group"] == r["group"] and q["name"] == "scipy_slsqp"][0]
        r["docs_per_s_vs_scipy"] = r["throughput"] / ref["throughput"]
        if r["name"].startswith("dptm_n_jobs="):
            one = [q for q in rows if q["group"] == r["group"]
                   and q["name"] == f"dptm_n_jobs={threads[0]}"][0]
            r["speedup_vs_1_thread"] = one["median_s"] / r["median_s"]
    load1 = os.getloadavg()
    print(f"load average after: {' '.join(f'{x:.2f}' for x in load1)}")
    report("bench_zeta" + ("_quick" if args.quick else ""), rows,
           [("group", ""), ("name", ""), ("median_s", ".3f"), ("throughput", ".0f"),
            ("unit", ""), ("docs_per_s_vs_scipy", ".0f"), ("max_rel_scipy_minus_ours", ".2e"),
            ("max_rel_scipy_proj_minus_ours", ".2e"), ("speedup_vs_1_thread", ".2f")],
           meta={"n_docs": X.shape[0], "n_words": X.shape[1], "scipy_docs": n_scipy,
                 "threads": list(threads), "loadavg_before": load0, "loadavg_after": load1})


if __name__ == "__main__":
    main()
