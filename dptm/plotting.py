"""Plots for the data scientist's workflow (matplotlib, the optional extra ``dptm[plot]``,
imported only when a function here is called).

* :func:`plot_top_words` — bar charts of the most probable words of each topic of a fitted
  model or a :class:`dptm.Release` (post-processing of the released topics: no privacy
  cost).
* :func:`plot_privacy_utility` — the table of :func:`dptm.metrics.privacy_utility_curve`:
  held-out perplexity (or coherence) against epsilon, with the uniform model's and a
  non-private model's levels.
* :func:`plot_roc` — log-log ROC curves of membership-inference attacks (also
  ``AuditResult.plot()``).

Every function takes an optional ``ax`` (or ``fig``) and returns what it drew on.
"""
import numpy as np

from ._utils import check_int
from .attacks.evaluation import plot_roc

__all__ = ["plot_top_words", "plot_privacy_utility", "plot_roc"]


def _pyplot(what):
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(f"{what} needs matplotlib: pip install 'dptm[plot]'") from exc
    return plt


def _topic_word_of(model):
    for name in ("topic_word_", "topic_word"):
        tw = getattr(model, name, None)
        if tw is not None:
            return np.asarray(tw, dtype=np.float64)
    arr = np.asarray(model, dtype=np.float64)
    if arr.ndim != 2:
        raise TypeError("model must be a fitted topic model, a Release or a (K, V) topic-word "
                        f"matrix, got {type(model).__name__}")
    return arr / arr.sum(axis=1, keepdims=True)


def plot_top_words(model, vocabulary=None, n=10, topics=None, ncols=4, fig=None):
    """Horizontal bar charts of the ``n`` most probable words of each topic.

    Parameters
    ----------
    model : fitted dptm model, Release, or array (K, V)
        Uses the released ``topic_word_`` / ``topic_word`` (post-processing).
    vocabulary : sequence of str, optional
        Default: the model's ``feature_names_in_`` or the release's ``vocabulary``; word
        ids otherwise.
    n : int, default=10
    topics : sequence of int, optional
        Which topics to draw (default: all).
    ncols : int, default=4
    fig : matplotlib Figure, optional

    Returns
    -------
    matplotlib Figure
    """
    plt = _pyplot("plot_top_words")
    phi = _topic_word_of(model)
    n = min(check_int(n, "n", minimum=1), phi.shape[1])
    ncols = check_int(ncols, "ncols", minimum=1)
    if vocabulary is None:
        vocabulary = getattr(model, "feature_names_in_", None)
        if vocabulary is None:
            vocabulary = getattr(model, "vocabulary", None)
    if vocabulary is not None and len(vocabulary) != phi.shape[1]:
        raise ValueError(f"vocabulary has {len(vocabulary)} words but the model has "
                         f"{phi.shape[1]}")
    topics = list(range(phi.shape[0])) if topics is None else [int(t) for t in topics]
    bad = [t for t in topics if not 0 <= t < phi.shape[0]]
    if bad:
        raise ValueError(f"topics must be in [0, {phi.shape[0]}), got {bad[0]}")
    ncols = min(ncols, len(topics))
    nrows = -(-len(topics) // ncols)
    if fig is None:
        fig = plt.figure(figsize=(2.6 * ncols, 0.28 * n * nrows + 0.8 * nrows))
    axes = fig.subplots(nrows, ncols, squeeze=False)
    for ax in axes.ravel()[len(topics):]:
        ax.set_visible(False)
    for ax, k in zip(axes.ravel(), topics):
        order = np.argsort(-phi[k], kind="stable")[:n]
        labels = [str(vocabulary[i]) if vocabulary is not None else str(i) for i in order]
        ax.barh(np.arange(n), phi[k, order], color="C0")
        ax.set_yticks(np.arange(n), labels, fontsize="small")
        ax.invert_yaxis()
        ax.set_title(f"topic {k}", fontsize="medium")
        ax.tick_params(axis="x", labelsize="x-small")
    fig.supxlabel("probability in the topic", fontsize="small")
    fig.tight_layout()
    return fig


def plot_privacy_utility(table, ax=None, metric="perplexity"):
    """Utility against epsilon from :func:`dptm.metrics.privacy_utility_curve`.

    Parameters
    ----------
    table : DataFrame or dict of lists
    ax : matplotlib Axes, optional
    metric : {"perplexity", "coherence"}, default="perplexity"
        Held-out perplexity (lower is better; the uniform model's level V is
        drawn dashed) or coherence (higher is better).

    Returns
    -------
    matplotlib Axes
    """
    plt = _pyplot("plot_privacy_utility")
    if metric not in ("perplexity", "coherence"):
        raise ValueError(f"metric must be 'perplexity' or 'coherence', got {metric!r}")
    col = {k: np.asarray(table[k], dtype=float) for k in
           ("epsilon", metric, f"{metric}_std", f"nonprivate_{metric}", "uniform_perplexity")}
    created = ax is None
    if created:
        _, ax = plt.subplots(figsize=(5, 3.8))
    order = np.argsort(col["epsilon"])
    eps = col["epsilon"][order]
    ax.errorbar(eps, col[metric][order], yerr=np.nan_to_num(col[f"{metric}_std"][order]),
                marker="o", capsize=3, label="private model")
    if metric == "perplexity":
        ax.axhline(col["uniform_perplexity"][0], color="k", ls="--", lw=0.8,
                   label=f"uniform model (V = {col['uniform_perplexity'][0]:g})")
    nonpriv = col[f"nonprivate_{metric}"]
    if np.isfinite(nonpriv).any():
        ax.axhline(nonpriv[np.isfinite(nonpriv)][0], color="C2", ls=":", lw=1.2,
                   label="non-private model")
    from matplotlib.ticker import NullFormatter
    ax.set_xscale("log")
    ax.set_xticks(eps, [f"{e:g}" for e in eps])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("total epsilon")
    ax.set_ylabel(f"held-out {metric}" + (" (lower is better)" if metric == "perplexity"
                                           else " (higher is better)"))
    ax.legend(fontsize="small")
    if created:
        ax.figure.tight_layout()
    return ax
