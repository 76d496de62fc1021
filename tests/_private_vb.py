"""Helpers shared by the PrivateBatchLDA tests (document and user level): the norm
histogram held fixed, the exact noise a discrete Gaussian release draws, the leaves of a
fit's privacy event and what an observer sees of a fit."""
import json
import math
import pickle
import warnings
from fractions import Fraction

import numpy as np
import scipy.sparse as sp

from dptm.mechanisms import discrete_gaussian_parameters
from _releases import force_lattice_releases
from dptm.models import private_vb


def poisson_corpus(seed=0, D=60, V=12):
    """A small CSR count matrix, every count Poisson(0.8)."""
    r = np.random.default_rng(seed)
    return sp.csr_matrix(r.poisson(0.8, size=(D, V)).astype(np.int64))


def fit_quietly(X, **kw):
    """A ``PrivateBatchLDA(**kw)`` fit of ``X``, seeded (``random_state`` 0 unless given),
    its warnings (seeded test mode, guardrails) silenced."""
    kw.setdefault("random_state", 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return private_vb.PrivateBatchLDA(**kw).fit(X)


def force_norm_histogram(monkeypatch, value=10.0):
    """The norm-histogram release (the only (1, bins) one) forced to ``value`` in its first
    12 bins and 0 elsewhere, its noise still drawn: the clip bound, the noise scales and the
    noisy count are then the same for every corpus."""
    def forced(release, stat, noisy):
        if stat.shape[0] == 1:
            return np.full(stat.shape, value * (np.arange(stat.size) < 12))
        return None
    force_lattice_releases(monkeypatch, forced)


def drawn_sigma(sigma, granularity):
    """The noise sd a lattice release of ``sigma`` on ``granularity`` draws: g times the
    discrete Gaussian's sd, stated as the largest float whose square is at most its
    variance p / q (never more noise than drawn; g is a power of two, the product exact)."""
    p, q = discrete_gaussian_parameters(sigma / granularity)[:2]
    x = math.sqrt(p / q)
    while Fraction(x) ** 2 > Fraction(p, q):
        x = math.nextafter(x, 0.0)
    while Fraction(math.nextafter(x, math.inf)) ** 2 <= Fraction(p, q):
        x = math.nextafter(x, math.inf)
    return granularity * x


def event_leaves(event):
    """The single releases of a fit's composed event, in order (runs expanded)."""
    leaves = []
    for ev in getattr(event, "events", (event,)):
        leaves += [ev.event] * ev.count if hasattr(ev, "count") else [ev]
    return leaves


def observed(m, warned, directory, V):
    """What an observer of a fit sees besides the released values: its attributes' types,
    shapes and dtypes, the report, the noise scales, the fold-in seed, the pickle size, the
    warnings (``warned``: the caught list) and the saved release.json (in ``directory``)."""
    attrs = {k: (type(v).__name__, np.shape(v), str(getattr(v, "dtype", "")))
             for k, v in vars(m).items()}
    path = m.release(vocabulary=[f"w{j}" for j in range(V)]).save(str(directory))
    with open(f"{path}/release.json", encoding="utf-8") as f:
        meta = json.load(f)
    return (attrs, str(m.privacy_), m.release_sigmas_, m.transform_seed_, len(pickle.dumps(m)),
            sorted(f"{type(x.message).__name__}: {x.message}" for x in warned), meta)
