"""User-level against document-level PrivateBatchLDA on corpora with authors (issue #37).

For every corpus, split BY USER (``corpora.load_by_user``: a held-out user's documents are
never in the training part), K = 20, the 5,000 most frequent training words, delta = 1e-5,
in one run:

- the non-private reference: scikit-learn's batch variational LDA with its defaults,
- document-level ``PrivateBatchLDA(...).fit(X)`` (add/remove one document) at each epsilon,
- user-level ``PrivateBatchLDA(...).fit(X, groups=users)`` (add/remove one user with all
  their documents) at each user-level epsilon,
- both pipelines at epsilon 1e5 (the noise-free floor: what clipping alone costs),

with the held-out perplexity of ``bench_utility.evaluate`` (Gibbs fold-in with the released
topics fixed, then ``dptm.metrics.perplexity``), the ratio of the user-level model to the
document-level one at the same epsilon (target: <= 1.15 at epsilon 4 on the issue's shape),
the clip bounds, the share of training tokens a scaling of each user's (document's) summed
count vector to the clip bound would remove (an upper bound on the mass clipping costs), and
both pipelines without noise at the first epsilon's clip bound (clipping's cost alone);
with ``--clip-oracle`` the error each clip bound would give a release after rescaling,
from the true count vectors (``clip_oracle``, non-private: a diagnosis of the rule).

Corpora: ``authors17k`` (real, shaped like the issue's target: bench/corpora.py),
``synthetic`` (``corpora.target_shape()`` exactly: 17,000 documents by 8,500 users, each
user's documents drawn around the user's own topic mixture), and any corpus with authors
(fortunes, changelogs, debian, perlpod, c50). Private fits use the secret generator; cells
are medians of ``--repeats`` fits with the range.

    python bench/bench_user_level.py --corpus authors17k synthetic fortunes --repeats 3
    python bench/bench_user_level.py --corpus synthetic --quick      # 2,000 documents
"""
import argparse
import inspect
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

from dptm.models.private_vb import PrivateBatchLDA  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpora  # noqa: E402
from _harness import format_table, report  # noqa: E402
from bench_utility import evaluate  # noqa: E402  (the one perplexity of the benchmarks)

K = 20
DELTA = 1e-5
FLOOR_EPSILON = 1e5
TARGET = {4.0: 1.15}       # user-level perplexity / document-level, same epsilon


def synthetic_users(shape, n_words=5000, n_topics=20, doc_length=(20, 60), concentration=5.0,
                    seed=0):
    """Documents of users with ``shape[u]`` documents each: LDA topics, a topic mixture per
    user (Dirichlet 0.1), each document's mixture Dirichlet(``concentration`` x the user's),
    uniform lengths. Returns (X csr, users int array)."""
    rng = np.random.default_rng(seed)
    phi = rng.dirichlet(np.full(n_words, 0.01), n_topics)
    users = np.repeat(np.arange(len(shape)), shape)
    theta_u = rng.dirichlet(np.full(n_topics, 0.1), len(shape))
    theta = np.array([rng.dirichlet(concentration * t + 1e-3) for t in theta_u[users]])
    lengths = rng.integers(doc_length[0], doc_length[1] + 1, len(users))
    p = theta @ phi
    rows = [rng.multinomial(n, q / q.sum()) for n, q in zip(lengths, p)]
    X = sp.csr_matrix(np.array(rows, dtype=np.int64))
    return X, users


def load(name, quick):
    """(X_train, X_test, users_train, shape dict of all documents, description)."""
    if name == "synthetic":
        shape = (corpora.target_shape(1000, 2000, 30) if quick else corpora.target_shape())
        X, users = synthetic_users(shape)
        tr, te = corpora.user_split(list(users))
        return (X[tr], X[te], users[tr], corpora.user_shape(users),
                "synthetic, corpora.target_shape(): each user's documents around their topics")
    c = corpora.load_by_user(name)
    return c.X_train, c.X_test, c.groups_train, c.meta["users"], c.meta.get("name", name)


def has_groups_api():
    return "groups" in inspect.signature(PrivateBatchLDA.fit).parameters


def clipped_share(X, users, C):
    """Share of the tokens held by users whose summed count vector is longer (L2) than C,
    weighted by how much of it a scaling to C removes: sum_u n_u (1 - min(1, C/|x_u|)) / n."""
    _, inv = np.unique(users, return_inverse=True)
    S = sp.csr_matrix((np.ones(len(inv)), (inv, np.arange(len(inv)))),
                      shape=(inv.max() + 1, len(inv))) @ X
    norms = np.sqrt(np.asarray(S.multiply(S).sum(axis=1)).ravel())
    tokens = np.asarray(S.sum(axis=1)).ravel()
    scale = np.minimum(1.0, C / np.maximum(norms, 1e-300))
    return float((tokens * (1 - scale)).sum() / tokens.sum())


def clip_oracle(X, units, edges, noise_sq):
    """What each clip bound C in ``edges`` would cost a release of the summed count vectors
    of ``units`` (one id per row of ``X``) if the rescaling were free: min over lambda of
    |S - lambda S_C|^2 + lambda^2 noise_sq C^2, with S the sum of the units' count vectors,
    S_C the sum of each one scaled to L2 norm at most C, and noise_sq C^2 the squared norm of
    the release's noise summed over topics (K V z^2 C^2). NON-PRIVATE (it reads every unit):
    a diagnosis of the clip rule, which sees only the noisy norm histogram. A release scaled
    by one common factor costs nothing here (the topics are normalised), so every C below all
    the units' norms costs the same. Returns the costs, one per edge."""
    _, inv = np.unique(units, return_inverse=True)
    U = sp.csr_matrix((np.ones(len(inv)), (inv, np.arange(len(inv)))),
                      shape=(inv.max() + 1, len(inv))) @ sp.csr_matrix(X, dtype=np.float64)
    norms = np.sqrt(np.asarray(U.multiply(U).sum(axis=1)).ravel())
    S = np.asarray(U.sum(axis=0)).ravel()
    out = []
    for C in edges:
        scale = np.minimum(1.0, C / np.maximum(norms, 1e-300))
        SC = np.asarray(U.multiply(scale[:, None]).sum(axis=0)).ravel()
        lam = float(S @ SC) / (float(SC @ SC) + noise_sq * C * C)
        out.append(float(np.sum((S - lam * SC) ** 2) + lam * lam * noise_sq * C * C))
    return np.array(out)


def _print_clip_oracle(Xtr, gtr, epsilons, name):
    from dptm.models.private_vb import _edges, fit_plan
    edges = _edges()[:24]
    out = {}
    for eps in epsilons:
        zs = [r.z for r in fit_plan(eps, DELTA, K, Xtr.shape[1]) if r.statistic != "norm-histogram"]
        q = K * Xtr.shape[1] * float(np.mean(np.square(zs)))     # as the clip rule's noise term
        for level, units in (("document", np.arange(Xtr.shape[0])), ("user", gtr)):
            cost = clip_oracle(Xtr, units, edges, q)
            rel = cost / cost.min()
            out[f"{level} eps {eps:g}"] = {f"{c:.3g}": float(r) for c, r in zip(edges, rel)}
            print(f"   clip oracle {name} {level:8s} eps {eps:g}: best C {edges[np.argmin(cost)]:.3g}; "
                  "cost / best at C = " + " ".join(f"{c:.3g}:{r:.3f}" for c, r in
                                                    zip(edges[::2], rel[::2])), flush=True)
    return out


def adjacency(model):
    """The unit the model's report protects ("document", "user"), or None."""
    report = getattr(model, "privacy_", None)
    return getattr(report, "unit", None) or getattr(report, "adjacency", None)


def _fits(make, fit, Xte, repeats):
    runs, clips, t = [], [], time.process_time()
    for _ in range(repeats):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = fit(make())
        runs.append(evaluate(m.components_, Xte))
        clips.append(getattr(m, "clip_norm_", np.nan))
        unit = adjacency(m)
    ppl = [r["perplexity"] for r in runs]
    return dict(perplexity=float(np.median(ppl)), lo=min(ppl), hi=max(ppl), runs=ppl,
                npmi=float(np.median([r["npmi"] for r in runs])), clip=float(np.median(clips)),
                unit=unit, fits=repeats, cpu_s=(time.process_time() - t) / repeats)


def run_corpus(name, quick, repeats, epsilons, floor=True, clip_floor=True, user_clips=(),
               oracle=False):
    from sklearn.decomposition import LatentDirichletAllocation
    try:
        Xtr, Xte, gtr, shape, desc = load(name, quick)
    except Exception as exc:       # corpora.Unavailable and a missing source
        print(f"\n== {name}: skipped: {exc}", flush=True)
        return None
    tshape = corpora.user_shape(gtr)
    print(f"\n== {name} ({desc}): {Xtr.shape[0]} training documents by {tshape['n_users']} "
          f"users / {Xte.shape[0]} held-out documents of other users, V = {Xtr.shape[1]}, "
          f"{int(Xtr.sum())} training tokens, K = {K}", flush=True)
    print(f"   shape (all documents): {shape['n_docs']} docs, {shape['n_users']} users, "
          f"{100 * shape['users_with_one_doc']:.1f}% with one doc, max "
          f"{shape['max_docs_per_user']} per user, top 1% of users hold "
          f"{100 * shape['docs_by_top1pct_users']:.1f}% of docs", flush=True)
    oracle_costs = _print_clip_oracle(Xtr, gtr, epsilons, name) if oracle else None
    rows = []
    t = time.process_time()
    ref = LatentDirichletAllocation(K, learning_method="batch", random_state=0).fit(Xtr)
    rows.append(dict(corpus=name, model="non-private (sklearn batch VB)", level="-",
                     epsilon=None, **evaluate(ref.components_, Xte), fits=1,
                     cpu_s=time.process_time() - t))
    base = rows[0]["perplexity"]
    user_api = has_groups_api()
    if not user_api:
        print("   user-level rows skipped: PrivateBatchLDA.fit has no groups= here", flush=True)
    def mk(eps, clip=None):
        return lambda: PrivateBatchLDA(K, target_epsilon=eps, target_delta=DELTA, clip_norm=clip)
    levels = [("document", lambda m: m.fit(Xtr))]
    if user_api:
        levels.append(("user", lambda m: m.fit(Xtr, groups=gtr)))
    cells = [(eps, repeats) for eps in epsilons] + ([(FLOOR_EPSILON, 1)] if floor else [])
    for eps, n in cells:
        for level, fit in levels:
            r = _fits(mk(eps), fit, Xte, n)
            rows.append(dict(corpus=name, model="PrivateBatchLDA" if eps != FLOOR_EPSILON
                             else "PrivateBatchLDA floor (eps 1e5)", level=level,
                             epsilon=eps, **r))
            rows[-1]["clipped_share"] = clipped_share(
                Xtr, gtr if level == "user" else np.arange(Xtr.shape[0]), r["clip"])
            print(f"   {level:9s} eps {eps:<6g} perplexity {r['perplexity']:9.1f} "
                  f"[{r['lo']:.0f}-{r['hi']:.0f}] clip {r['clip']:.3g} unit {r['unit']} "
                  f"({r['cpu_s']:.0f} cpu-s a fit)", flush=True)
    if floor and clip_floor:
        # no noise, the clip bound of the first epsilon's fits: what clipping alone costs there
        for level, fit in levels:
            C = next(r["clip"] for r in rows if r["level"] == level and r["epsilon"] == epsilons[0])
            r = _fits(mk(FLOOR_EPSILON, C), fit, Xte, 1)
            rows.append(dict(corpus=name, model=f"floor at the eps {epsilons[0]:g} clip",
                             level=level, epsilon=FLOOR_EPSILON, **r))
            print(f"   {level:9s} eps 1e5, clip {C:.3g}: perplexity {r['perplexity']:9.1f}",
                  flush=True)
    for C in user_clips if user_api else ():
        # a diagnosis: user level at the first epsilon with a given clip bound (taken as public)
        r = _fits(mk(epsilons[0], C), levels[1][1], Xte, repeats)
        rows.append(dict(corpus=name, model=f"clip_norm={C:g} (given)", level="user",
                         epsilon=epsilons[0], **r, clipped_share=clipped_share(Xtr, gtr, C)))
        print(f"   user      eps {epsilons[0]:g}, clip_norm {C:g}: perplexity "
              f"{r['perplexity']:9.1f} [{r['lo']:.0f}-{r['hi']:.0f}]", flush=True)
    side = ("floor at", "clip_norm=")
    by = {(r["level"], r["epsilon"]): r for r in rows if not r["model"].startswith(side)}
    for r in rows:
        r["x_nonprivate"] = r["perplexity"] / base
        d = by.get(("document", r["epsilon"]))
        if r["level"] == "user" and d is not None and not r["model"].startswith(side[0]):
            r["user_over_doc"] = r["perplexity"] / d["perplexity"]
            tgt = TARGET.get(r["epsilon"])
            r["target"] = None if tgt is None else (
                f"<= {tgt}: " + ("met" if r["user_over_doc"] <= tgt else "MISSED"))
    print()
    print(format_table(rows, COLUMNS))
    return {"corpus": name, "description": desc, "shape": shape, "train_shape": tshape,
            "n_train": Xtr.shape[0], "n_heldout": Xte.shape[0], "V": Xtr.shape[1], "rows": rows,
            "clip_oracle": oracle_costs}


COLUMNS = [("model", None), ("level", None), ("epsilon", "g"), ("perplexity", ".1f"),
           ("lo", ".0f"), ("hi", ".0f"), ("x_nonprivate", ".3f"), ("user_over_doc", ".3f"),
           ("target", None), ("clip", ".3g"), ("clipped_share", ".3f"), ("npmi", ".3f"),
           ("fits", "d")]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", nargs="*", default=["authors17k", "synthetic", "fortunes"])
    p.add_argument("--epsilons", nargs="*", type=float, default=[4.0, 1.0])
    p.add_argument("--repeats", type=int, default=3, help="private fits per cell (median)")
    p.add_argument("--no-floor", action="store_true", help="skip the eps 1e5 rows")
    p.add_argument("--no-clip-floor", action="store_true",
                   help="skip the eps 1e5 rows at the first epsilon's clip bound")
    p.add_argument("--user-clips", nargs="*", type=float, default=[],
                   help="diagnosis: user-level fits at the first epsilon with these clip_norm")
    p.add_argument("--clip-oracle", action="store_true",
                   help="diagnosis: print clip_oracle's cost at each clip bound (non-private)")
    p.add_argument("--quick", action="store_true", help="a 2,000-document synthetic corpus")
    p.add_argument("--name", default="bench_user_level", help="bench/results/NAME.json")
    a = p.parse_args(argv)
    chosen = ["synthetic"] if a.quick else a.corpus
    print(f"repeats: {a.repeats}; epsilons: {a.epsilons}; load: {os.getloadavg()}", flush=True)
    results = [r for c in chosen
               if (r := run_corpus(c, a.quick, a.repeats, a.epsilons, not a.no_floor,
                                   not a.no_clip_floor, a.user_clips, a.clip_oracle))]
    print(f"\nload: {os.getloadavg()}")
    rows = [r for res in results for r in res["rows"]]
    report(a.name, rows, [("corpus", None)] + COLUMNS,
           meta={"corpora": [{k: v for k, v in res.items() if k != "rows"} for res in results],
                 "K": K, "delta": DELTA, "repeats": a.repeats})
    return results


if __name__ == "__main__":
    main()
