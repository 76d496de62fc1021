"""PrivateBatchLDA: combining every release (bias-aware weights) against the last two.

Variants of the default fit, by monkeypatching ``dptm.models.private_vb`` (no edit of the
package):

- ``current``: the default (the final estimate and each search step from the third on
  combine the last two releases, ``_combine_releases(releases[-2:])``);
- ``final-all``: the final estimate combines EVERY model release (``combine_all``), the
  search steps as the default: read from the SAME fit as ``current`` (same noise, same
  topics until the final release), so the pair differs only in the combination;
- ``all``: the final estimate and every search step from the third on combine every
  release so far (a fit of its own, same seed as ``current``).

``combine_all`` is the best linear combination of the releases with weights summing to
one when release i's error is its noise (sd_i, independent) plus a bias b_i (the final
release's bias 0): the weights minimise w' (G + diag(sd^2)) w, G the Gram matrix of the
biases, estimated from the differences d_i = est_i - est_f over the entries whose mean
passes ``threshold`` noise sd (E d_i d_j = b_i b_j + sd_f^2 + [i = j] sd_i^2), projected
onto the positive semi-definite matrices; with ``nonneg`` (default) every weight is kept
>= 0 (active set). For two releases it is ``_combine_releases`` exactly.

Also: ``--final-share`` (another ``_FINAL_SHARE``), ``--searches`` (the plan's search posts
truncated), ``--clip-norms`` (public clip bounds) and ``--noise-free`` (model releases exact,
post-processing told sd ~ 0, a fine lattice). Written against ``private_vb`` as of a01a64e
(before its statistic and denoising functions moved): it patches module attributes by name.

Held-out perplexity as ``bench_utility`` (fold-in, prior 1/K) and its ratio to sklearn's
batch LDA (defaults, ``random_state=0``; cached per corpus in ``--cache``). The record:
docs/records/2026-12-02-private-vb-combining.md.

    python bench/bench_vb_combining.py --corpus debian gcide perlpod --epsilons 1 4 --seeds 1 2
    python bench/bench_vb_combining.py --set evaluation --corpus pydoc --secret 3
"""
import argparse
import itertools
import json
import math
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_utility as bu  # noqa: E402
from dptm.models import private_vb as pv  # noqa: E402


def combine_all(releases, threshold, nonneg=True):
    """Bias-aware best linear combination of independent releases ``[(est, sd), ...]``, the
    final (reference, unbiased) one last; returns (estimate, its noise sd, weights)."""
    est_f, sd_f = releases[-1]
    n = len(releases)
    if n == 1:
        return est_f, sd_f, np.ones(1)
    r = np.array([s / sd_f for _, s in releases])          # noise sd in units of sd_f
    mean = sum(e for e, _ in releases) / n
    sel = mean > threshold * sd_f * math.sqrt(float(np.sum(r * r))) / n
    G = np.zeros((n - 1, n - 1))
    if sel.any():
        d = np.stack([((e - est_f)[sel] / sd_f) for e, _ in releases[:-1]])
        G = d @ d.T / d.shape[1] - 1.0 - np.diag(r[:-1] ** 2)
        lam, vec = np.linalg.eigh(0.5 * (G + G.T))
        G = (vec * np.maximum(lam, 0.0)) @ vec.T
    M = np.diag(r * r)
    M[:-1, :-1] += G
    active = np.ones(n, dtype=bool)
    while True:
        w = np.zeros(n)
        w[active] = np.linalg.solve(M[np.ix_(active, active)], np.ones(active.sum()))
        w /= w.sum()
        if not nonneg or w.min() >= -1e-12:
            break
        active[int(np.argmin(np.where(active, w, np.inf)))] = False
    w = np.maximum(w, 0.0) if nonneg else w
    w /= w.sum()
    combined = sum(wi * e for wi, (e, _) in zip(w, releases))
    sd = sd_f * math.sqrt(float(np.sum(w * w * r * r)))
    return combined, sd, w


class _Recorder:
    """Patches ``_release`` (records every model release) and ``_combine_releases``."""

    def __init__(self, mode, eta, nonneg=True):
        self.mode, self.eta, self.nonneg = mode, eta, nonneg
        self.releases, self.alt_final, self.weights = [], None, None
        self.alt_signed = self.signed_weights = None

    def release(self, stat, sigma, gen, g):
        out = self.base_release(stat, sigma, gen, g)
        if np.shape(stat)[0] > 1:                 # a model release, not the histogram
            self.releases.append((out[0], out[2]))
        return out

    def combine(self, pair, threshold):
        is_final = len(self.releases) == self.n_model
        if self.mode == "all" or (self.mode == "final-all" and is_final):
            est, sd, w = combine_all(self.releases, threshold, self.nonneg)
            if is_final:
                self.weights = w
            return est, sd
        out = _ORIG_COMBINE(pair, threshold)
        if is_final and self.mode == "current":
            est, sd, w = combine_all(self.releases, threshold, self.nonneg)
            self.alt_final = pv._post_process("final", est, sd, self.eta)
            self.weights = w
            est, sd, self.signed_weights = combine_all(self.releases, threshold, False)
            self.alt_signed = pv._post_process("final", est, sd, self.eta)
        return out


_ORIG_RELEASE, _ORIG_COMBINE = pv._release, pv._combine_releases
_Recorder.base_release = staticmethod(_ORIG_RELEASE)


def _noise_free(stat, sigma, gen, g):
    """A model release without noise, its noise sd told as ~0 (the histogram as usual)."""
    if np.shape(stat)[0] > 1:
        return np.asarray(stat, dtype=np.float64), g, sigma * 1e-12
    return _ORIG_RELEASE(stat, sigma, gen, g)


def fit(Xtr, eps, seed, mode, K=bu.K, nonneg=True, clip_norm=None, noise_free=False):
    m = pv.PrivateBatchLDA(K, target_epsilon=eps, target_delta=bu.DELTA, random_state=seed,
                           clip_norm=clip_norm)
    rec = _Recorder(mode, 1.0 / K, nonneg)
    rec.n_model = len([r for r in pv.fit_plan(eps, bu.DELTA, K, Xtr.shape[1])
                       if r.statistic != "norm-histogram"])
    orig_granularity = pv._granularity
    pv._release, pv._combine_releases = rec.release, rec.combine
    if noise_free:
        # a fine lattice: the plan's (sigma / 2^13) floors a large C's contributions to 0
        pv._granularity = lambda sigma: sigma * 2.0 ** -30
        _Recorder.base_release = staticmethod(_noise_free)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m.fit(Xtr)
    finally:
        pv._release, pv._combine_releases = _ORIG_RELEASE, _ORIG_COMBINE
        pv._granularity = orig_granularity
        _Recorder.base_release = staticmethod(_ORIG_RELEASE)
    return m, rec


def reference(name, Xtr, Xte, cache):
    path = os.path.join(cache, f"ref-{name}.json")
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)["perplexity"]
    from sklearn.decomposition import LatentDirichletAllocation
    t = time.process_time()
    ref = LatentDirichletAllocation(bu.K, learning_method="batch", random_state=0).fit(Xtr)
    ppl = bu.evaluate(ref.components_, Xte)["perplexity"]
    with open(path, "w") as f:
        json.dump({"perplexity": ppl, "cpu": time.process_time() - t}, f)
    return ppl


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--set", choices=("tuning", "evaluation"), default="tuning")
    p.add_argument("--corpus", nargs="+", required=True)
    p.add_argument("--epsilons", nargs="+", type=float, default=[1.0, 4.0])
    p.add_argument("--seeds", nargs="*", type=int, default=[], help="seeded (paired) fits")
    p.add_argument("--secret", type=int, default=0, help="secret fits per variant")
    p.add_argument("--modes", nargs="+", default=["current", "all"])
    p.add_argument("--signed", action="store_true", help="allow negative weights")
    p.add_argument("--final-share", type=float, default=None, help="_FINAL_SHARE instead")
    p.add_argument("--searches", type=int, default=None,
                   help="this many search releases instead (the plan's posts truncated)")
    p.add_argument("--clip-norms", nargs="*", type=float, default=[None],
                   help="public clip_norm values (default: the histogram's clip bound)")
    p.add_argument("--noise-free", action="store_true",
                   help="model releases without noise (posts told sd ~ 0)")
    p.add_argument("--cache", default="/tmp/vb-combining")
    p.add_argument("--out", default=None, help="JSON lines appended here")
    a = p.parse_args()
    names = bu.corpora.TUNING if a.set == "tuning" else bu.corpora.EVALUATION
    os.makedirs(a.cache, exist_ok=True)
    tag = ""
    if a.final_share is not None:
        pv._FINAL_SHARE, tag = a.final_share, f"fs{a.final_share:g}"
    if a.searches is not None:
        orig_posts, n_s = pv._search_posts, a.searches
        pv._search_posts = lambda *args: orig_posts(*args)[-n_s:]
        tag += f"n{n_s}"
    print(f"set {a.set}; load {os.getloadavg()}", flush=True)
    for name in a.corpus:
        if name not in names:
            p.error(f"{name!r} is not in the {a.set} set")
        Xtr, Xte = bu.load(name, False)
        base = reference(name, Xtr, Xte, a.cache)
        print(f"== {name}: D = {Xtr.shape[0]}, sklearn perplexity {base:.1f}", flush=True)
        runs = [(s, s) for s in a.seeds] + [(None, f"secret{i}") for i in range(a.secret)]
        for eps in a.epsilons:
            for (seed, label), C, mode in itertools.product(runs, a.clip_norms, a.modes):
                t = time.process_time()
                m, rec = fit(Xtr, eps, seed, mode, nonneg=not a.signed, clip_norm=C,
                             noise_free=a.noise_free)
                rows = {mode: bu.evaluate(m.components_, Xte)["perplexity"]}
                if rec.alt_final is not None:
                    rows["final-all"] = bu.evaluate(rec.alt_final, Xte)["perplexity"]
                    rows["final-signed"] = bu.evaluate(rec.alt_signed, Xte)["perplexity"]
                cpu = time.process_time() - t
                for variant, ppl in rows.items():
                    extra = tag + ("" if C is None else f"C{C:g}") + (
                        "nf" if a.noise_free else "")
                    variant = variant + ("@" + extra if extra else "")
                    row = dict(set=a.set, corpus=name, eps=eps, seed=label, variant=variant,
                               perplexity=ppl, ratio=ppl / base, cpu=cpu,
                               weights=[round(float(x), 4) for x in
                                        (rec.signed_weights if variant.startswith(
                                            "final-signed") else rec.weights)],
                               load=os.getloadavg()[0], signed=a.signed)
                    print(f"{name:10s} eps {eps:g} {str(label):8s} {variant:10s} "
                          f"ratio {ppl / base:.4f}  w {row['weights']}  cpu {cpu:.0f}s "
                          f"load {row['load']:.1f}", flush=True)
                    if a.out:
                        with open(a.out, "a") as f:
                            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
