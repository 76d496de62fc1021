"""Empirical differential-privacy testing of a mechanism on a pair of neighbouring inputs.

In the spirit of DP-Sniper (Bichsel et al. 2021) and Google's DP-Auditorium: run the
mechanism many times on two neighbouring inputs, learn on one half of the runs which
outputs are more likely under the first input than under the second (a likelihood-ratio
ordering of output cells), and on the other half bound the probability of the chosen set
S of outputs under both inputs with Clopper-Pearson intervals. For an (epsilon, delta)-DP
mechanism ``P[M(x0) in S] <= e^epsilon P[M(x1) in S] + delta`` for every S, so

    epsilon >= log((P0_lower - delta) / P1_upper)

holds with probability at least ``confidence`` over the runs. A bound above the claimed
epsilon is evidence (at that confidence) that the mechanism is broken; a correct mechanism
keeps it below. Choosing S on separate runs keeps the bound valid (no selection bias).

Tests apply it to the smallest release of every private model: one snapshot count, one
sampling step with a moving token, one SVI step, one vocabulary selection, one TopicDP
entry, the local randomizer.
"""
import numpy as np
from scipy import stats

from ._utils import check_int, check_probability

__all__ = ["epsilon_lower_bound", "audit_mechanism"]


def _one_sided(k, n, level):
    """Clopper-Pearson one-sided bounds (lower, upper) for k successes in n, each at ``level``."""
    a = 1.0 - level
    lo = stats.beta.ppf(a, k, n - k + 1) if k > 0 else 0.0
    hi = stats.beta.ppf(1 - a, k + 1, n - k) if k < n else 1.0
    return float(lo), float(hi)


def _as_outputs(samples, name):
    out = np.asarray(samples)
    if out.ndim == 2 and out.shape[1] == 1:
        out = out[:, 0]
    if out.ndim != 1 or out.size < 4:
        raise ValueError(f"{name} must be a 1-D array of at least 4 scalar outputs, "
                         f"got shape {out.shape}")
    if out.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold numbers, got dtype {out.dtype}")
    if out.dtype.kind == "f" and not np.all(np.isfinite(out)):
        raise ValueError(f"{name} contains NaN or infinite outputs")
    return out


def epsilon_lower_bound(outputs0, outputs1, *, delta=0.0, confidence=0.999, max_cells=64,
                        return_details=False):
    """Lower bound on epsilon from the outputs of a mechanism on two neighbouring inputs.

    Parameters
    ----------
    outputs0, outputs1 : array-like of shape (n_runs,)
        Scalar outputs (or a scalar statistic of each output) of independent runs on the
        two inputs. Discrete outputs with at most ``max_cells`` distinct values are used as
        they are; otherwise outputs are binned at quantiles of the first half.
    delta : float in [0, 1)
    confidence : float in (0, 1)
        The returned bound holds with at least this probability over the runs (Bonferroni
        over both directions and both intervals).
    max_cells : int
        Number of output cells (distinct values or quantile bins).
    return_details : bool
        Also return a dict: the chosen direction and cells, the counts and intervals.

    Returns
    -------
    float
        0 when the runs give no evidence; otherwise the lower bound.
    """
    o0, o1 = _as_outputs(outputs0, "outputs0"), _as_outputs(outputs1, "outputs1")
    confidence = check_probability(confidence, "confidence", high_open=True)
    if not 0 <= delta < 1:
        raise ValueError(f"delta must be in [0, 1), got {delta}")
    max_cells = check_int(max_cells, "max_cells", minimum=2)
    h0, h1 = o0.size // 2, o1.size // 2
    search0, est0, search1, est1 = o0[:h0], o0[h0:], o1[:h1], o1[h1:]
    values = np.unique(np.concatenate([search0, search1]))
    if values.size <= max_cells:
        def cell(o):          # a value never seen in the search half gets its own cell
            idx = np.searchsorted(values, o)
            idx = np.minimum(idx, values.size - 1)
            return np.where(values[idx] == o, idx, values.size)
        n_cells = values.size + 1
    else:
        edges = np.unique(np.quantile(np.concatenate([search0, search1]),
                                      np.linspace(0, 1, max_cells + 1)[1:-1]))

        def cell(o):
            return np.searchsorted(edges, o, side="right")
        n_cells = edges.size + 1
    c_s0 = np.bincount(cell(search0), minlength=n_cells)
    c_s1 = np.bincount(cell(search1), minlength=n_cells)
    c_e0 = np.bincount(cell(est0), minlength=n_cells)
    c_e1 = np.bincount(cell(est1), minlength=n_cells)
    level = 1 - (1 - confidence) / 4      # 2 directions x 2 one-sided intervals
    best = (0.0, None)
    for direction, (sa, sb, ea, eb) in enumerate([(c_s0, c_s1, c_e0, c_e1),
                                                  (c_s1, c_s0, c_e1, c_e0)]):
        # Order cells by their estimated likelihood ratio on the search half, then pick the
        # top-j set whose search-half bound is largest.
        ratio = np.log((sa + 0.5) / (sa.sum() + 0.5)) - np.log((sb + 0.5) / (sb.sum() + 0.5))
        order = np.argsort(-ratio, kind="stable")
        ka, kb = np.cumsum(sa[order]), np.cumsum(sb[order])
        j_best, e_best = 0, -np.inf
        for j in range(order.size):
            lo, _ = _one_sided(int(ka[j]), int(sa.sum()), level)
            _, hi = _one_sided(int(kb[j]), int(sb.sum()), level)
            e = np.log(max(lo - delta, 1e-300) / hi)
            if e > e_best:
                j_best, e_best = j, e
        chosen = order[:j_best + 1]
        ka_e, kb_e = int(ea[chosen].sum()), int(eb[chosen].sum())
        lo, _ = _one_sided(ka_e, int(ea.sum()), level)
        _, hi = _one_sided(kb_e, int(eb.sum()), level)
        eps = float(np.log((lo - delta) / hi)) if lo > delta else 0.0
        if eps > best[0] or best[1] is None:
            best = (max(eps, 0.0), {"direction": "0 over 1" if direction == 0 else "1 over 0",
                                    "cells": chosen.tolist(), "count_a": ka_e, "count_b": kb_e,
                                    "n_a": int(ea.sum()), "n_b": int(eb.sum()),
                                    "p_a_lower": lo, "p_b_upper": hi,
                                    "confidence": confidence, "delta": delta})
    return best if return_details else best[0]


def audit_mechanism(mechanism, input0, input1, n_runs, *, statistic=None, delta=0.0,
                    confidence=0.999, max_cells=64, return_details=False):
    """Run ``mechanism`` ``n_runs`` times on each input and bound epsilon from below.

    Parameters
    ----------
    mechanism : callable
        ``mechanism(input)`` returns one output, drawing fresh randomness on every call
        (e.g. from the secret generator, or a shared seeded generator in tests).
    input0, input1 : object
        Neighbouring inputs (choose the worst case for the mechanism).
    n_runs : int
    statistic : callable, optional
        Maps an output to a scalar (default: the output itself, which must be a scalar).
    delta, confidence, max_cells, return_details
        As in :func:`epsilon_lower_bound`.
    """
    n_runs = check_int(n_runs, "n_runs", minimum=8)
    if not callable(mechanism):
        raise TypeError("mechanism must be callable")
    stat = statistic if statistic is not None else (lambda o: o)
    out0 = np.array([stat(mechanism(input0)) for _ in range(n_runs)])
    out1 = np.array([stat(mechanism(input1)) for _ in range(n_runs)])
    return epsilon_lower_bound(out0, out1, delta=delta, confidence=confidence,
                               max_cells=max_cells, return_details=return_details)
