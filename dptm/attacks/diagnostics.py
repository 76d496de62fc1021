"""Checks of a LiRA query statistic (Manzonelli et al. 2024 App. C, Fig. 1 and 6, Table 3):
does it increase with membership, is it normal in and out, and how do the in/out
distributions look for outlying, inlying, long and short documents.
"""
import numpy as np
from scipy import stats

from .._utils import check_count_matrix

__all__ = ["in_out_kl", "normality_tests", "example_documents", "in_out_histograms",
           "in_out_samples"]


def in_out_samples(lira, statistic=0):
    """The per-document samples T_in(d) and T_out(d) of one statistic of a fitted
    :class:`~dptm.attacks.LiRA`, as two (n_docs, n_shadows / 2) arrays (complementary
    pairs give every document the same number of each)."""
    if isinstance(statistic, str):
        statistic = list(lira.statistics_).index(statistic)
    s = lira.shadow_stats_[:, :, statistic].T  # (D, N)
    m = lira.in_mask_.T
    n_in = m.sum(axis=1)
    if np.any(n_in != n_in[0]) or np.any((~m).sum(axis=1) != n_in[0]):
        raise ValueError("documents have unequal numbers of in/out shadows")
    order = np.argsort(~m, axis=1, kind="stable")  # in-shadows first
    s = np.take_along_axis(s, order, axis=1)
    return s[:, : n_in[0]], s[:, n_in[0]:]


def in_out_kl(t_in, t_out, signed=False):
    """KL( N_in(d) || N_out(d) ) between the Gaussians fitted to each document's in and out
    samples (Manzonelli et al. 2024 Fig. 6).

    KL is never negative, so it cannot by itself show that the statistic is LARGER for
    members (the paper reads Fig. 6 that way); ``signed=True`` multiplies it by
    ``sign(mu_in - mu_out)``, which can.

    Parameters
    ----------
    t_in, t_out : arrays (n_docs, n_samples)

    Returns
    -------
    ndarray (n_docs,)
    """
    t_in = np.atleast_2d(np.asarray(t_in, dtype=np.float64))
    t_out = np.atleast_2d(np.asarray(t_out, dtype=np.float64))
    m1, m2 = t_in.mean(axis=1), t_out.mean(axis=1)
    v1 = np.maximum(t_in.var(axis=1, ddof=1), 1e-300)
    v2 = np.maximum(t_out.var(axis=1, ddof=1), 1e-300)
    kl = 0.5 * (np.log(v2 / v1) + (v1 + (m1 - m2) ** 2) / v2 - 1.0)
    return np.sign(m1 - m2) * kl if signed else kl


def normality_tests(samples, alpha=0.05):
    """Shapiro-Wilk test of every sample (row) with Benjamini-Hochberg FDR control at
    ``alpha`` (Manzonelli et al. 2024 Table 3).

    Parameters
    ----------
    samples : array (n_tests, n_samples) or dict name -> array
        E.g. ``np.vstack(in_out_samples(lira))`` for the in and out samples of each document.

    Returns
    -------
    dict with ``n_tests``, ``n_rejected``, ``rejection_rate``, ``pvalues``, ``rejected``; for
    a dict input, a dict of those per name.
    """
    if isinstance(samples, dict):
        return {k: normality_tests(v, alpha) for k, v in samples.items()}
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    samples = np.atleast_2d(np.asarray(samples, dtype=np.float64))
    if samples.shape[1] < 3:
        raise ValueError("Shapiro-Wilk needs at least 3 values per sample")
    p = np.empty(samples.shape[0])
    for i, row in enumerate(samples):
        p[i] = 1.0 if np.ptp(row) == 0 else stats.shapiro(row).pvalue
    adjusted = stats.false_discovery_control(p, method="bh")
    rejected = adjusted <= alpha
    return {"n_tests": int(p.size), "n_rejected": int(rejected.sum()),
            "rejection_rate": float(rejected.mean()), "pvalues": p, "rejected": rejected}


def example_documents(X, random_state=None):
    """One document of each kind in Manzonelli et al. 2024 Fig. 1.

    * outlier: the document whose words are rarest in the corpus (lowest mean log document
      frequency over its tokens), among documents of ordinary length;
    * inlier: the one whose words are most frequent, among documents of ordinary length;
    * long: the longest document (length > mean + sd);
    * short: the shortest non-empty document with length < mean - sd (or the shortest).

    Returns
    -------
    dict kind -> document index
    """
    X = check_count_matrix(X, name="X")
    length = np.asarray(X.sum(axis=1)).ravel().astype(np.float64)
    df = np.asarray((X > 0).sum(axis=0)).ravel().astype(np.float64)
    logdf = X.copy().astype(np.float64)
    logdf.data = logdf.data * np.log(df[X.indices])
    with np.errstate(invalid="ignore", divide="ignore"):
        common = np.asarray(logdf.sum(axis=1)).ravel() / length
    mu, sd = length.mean(), length.std()
    ordinary = (np.abs(length - mu) <= sd) & (length > 0)
    cand = np.flatnonzero(ordinary) if ordinary.any() else np.flatnonzero(length > 0)
    nonempty = np.flatnonzero(length > 0)
    short = nonempty[np.argmin(length[nonempty])]
    return {"outlier": int(cand[np.nanargmin(common[cand])]),
            "inlier": int(cand[np.nanargmax(common[cand])]),
            "long": int(np.argmax(length)), "short": int(short)}


def in_out_histograms(lira, docs=None, statistic=0, bins=20, ax=None):
    """Histograms of T_in(d) and T_out(d) for a few documents (Manzonelli et al. 2024 Fig. 1).

    Parameters
    ----------
    lira : fitted LiRA
    docs : dict name -> document index, optional
        Default: :func:`example_documents` of the LiRA's documents.
    ax : sequence of matplotlib Axes or None
        If given (or matplotlib is importable and ``ax='auto'``), the histograms are drawn.

    Returns
    -------
    dict name -> (edges, counts_in, counts_out)
    """
    if docs is None:
        docs = example_documents(lira.X_)
    t_in, t_out = in_out_samples(lira, statistic)
    out = {}
    for name, d in docs.items():
        both = np.r_[t_in[d], t_out[d]]
        edges = np.histogram_bin_edges(both, bins=bins)
        out[name] = (edges, np.histogram(t_in[d], edges)[0], np.histogram(t_out[d], edges)[0])
    if ax is not None:
        if isinstance(ax, str) and ax == "auto":
            import matplotlib.pyplot as plt
            _, ax = plt.subplots(1, len(out), figsize=(3.2 * len(out), 2.8))
        for a, (name, (edges, ci, co)) in zip(np.atleast_1d(ax), out.items()):
            a.stairs(ci, edges, fill=True, alpha=0.5, label="in")
            a.stairs(co, edges, fill=True, alpha=0.5, label="out")
            a.set_title(f"{name} (doc {docs[name]})")
            a.set_xlabel("zeta" if statistic in (0, "zeta") else str(statistic))
        np.atleast_1d(ax)[0].legend()
    return out
