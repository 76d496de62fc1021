"""Model selection under a privacy budget.

Every fit of a private estimator on the data is a release of it. Two tools keep that
visible:

* :func:`spending`: while it is active (a ``with`` block, or process-wide with
  :func:`set_default_accountant`), every private fit spends its ``privacy_`` from a
  :class:`dptm.accounting.BudgetAccountant`, also the fits scikit-learn's
  ``GridSearchCV`` or ``cross_validate`` make, so the ledger shows how many releases of
  the data there were and their composition::

      budget = dptm.accounting.BudgetAccountant(epsilon=20, delta=1e-5)
      with dptm.selection.spending(budget):
          GridSearchCV(PrivateBatchLDA(10), {"target_epsilon": [1, 4]}, cv=2).fit(X)
      print(budget)           # 5 fits: 4 on folds, 1 refit on all of X

* :func:`select_private`: choose among candidate settings (K, epsilon, ...) on the
  private data with a private selection (Papernot & Steinke 2022, "Hyperparameter
  tuning with Renyi differential privacy", ICLR; Liu & Talwar 2019 for ``eta=1``): a
  random number of fits of randomly drawn candidates, each scored on its own release, and
  only the best one released. Its report covers the whole selection.

The alternative costs nothing: choose the settings on public data of the same kind (a
public proxy corpus) with a non-private model, then fit the private model once.

Privacy contract: the ledger holds the reports of the fits (functions of the estimators'
public parameters and of each fit's own releases). :func:`select_private` releases the chosen candidate's index,
release and score only; the number of fits and the other candidates' scores stay secret.
"""
import contextlib
import contextvars
import math
import warnings

import numpy as np
from sklearn.base import clone

from ._utils import check_count_matrix

__all__ = ["spending", "set_default_accountant", "current_accountant", "select_private",
           "SelectionResult", "mean_repetitions", "selection_rdp"]

_ACTIVE = contextvars.ContextVar("dptm_accountant", default=None)
_SUSPENDED = contextvars.ContextVar("dptm_accountant_suspended", default=False)
_default = None


def set_default_accountant(accountant):
    """Make ``accountant`` (a :class:`~dptm.accounting.BudgetAccountant`, or None to stop)
    the process-wide ledger every private fit spends from when no :func:`spending` block
    is active. Returns the previous one."""
    global _default
    _check_accountant(accountant, allow_none=True)
    previous, _default = _default, accountant
    return previous


def current_accountant():
    """The accountant private fits spend from now (the innermost :func:`spending`, else
    the process default), or None."""
    return _ACTIVE.get() or _default


@contextlib.contextmanager
def spending(accountant):
    """Within the block, every private fit (outermost ``fit`` of a dptm estimator with a
    ``privacy_`` report) spends its report from ``accountant``; a fit that would pass the
    cap raises :class:`~dptm.accounting.BudgetExceededError` (the fitted model must then
    not be published). A private fit that raises after drawing releases (PrivateBatchLDA,
    the Gibbs snapshot samplers) spends the releases it drew: their noisy values may be in
    its exception. Fits made in other processes (``n_jobs`` > 1 in scikit-learn's
    model selection) are not seen: use ``n_jobs=1`` there."""
    _check_accountant(accountant)
    token = _ACTIVE.set(accountant)
    try:
        yield accountant
    finally:
        _ACTIVE.reset(token)


def _check_accountant(accountant, allow_none=False):
    from .accounting import BudgetAccountant
    if accountant is None and allow_none:
        return
    if not isinstance(accountant, BudgetAccountant):
        raise TypeError("accountant must be a dptm.accounting.BudgetAccountant, got "
                        f"{type(accountant).__name__}")


def _record_fit(estimator, label):
    """Spend ``estimator.privacy_`` from the current accountant (called when a private
    estimator's outermost fit returns)."""
    _record_report(estimator.privacy_, label)


def _record_report(report, label):
    """Spend ``report`` from the current accountant, if any (and not suspended)."""
    accountant = current_accountant()
    if accountant is None or _SUSPENDED.get():
        return
    accountant.spend(report, label=label)


# --------------------------------------------------------------------------- selection
def mean_repetitions(eta, gamma):
    """E[K] of the truncated negative binomial distribution D_{eta, gamma} of the number
    of fits (Papernot & Steinke 2022, section 2): geometric with mean 1/gamma for
    ``eta=1``, logarithmic for ``eta=0``."""
    eta, gamma = _check_eta_gamma(eta, gamma)
    if eta == 0:
        return (1.0 / gamma - 1.0) / math.log(1.0 / gamma)
    return eta * (1.0 - gamma) / (gamma * (1.0 - gamma ** eta))


def _check_eta_gamma(eta, gamma):
    from ._utils import check_real
    eta, gamma = check_real(eta, "eta"), check_real(gamma, "gamma")
    if not eta >= 0:
        raise ValueError(f"eta must be >= 0, got {eta!r}")
    if not 0.0 < gamma < 1.0:
        raise ValueError(f"gamma must be in (0, 1), got {gamma!r}")
    return eta, gamma


def _draw_repetitions(gen, eta, gamma):
    """One draw of K ~ D_{eta, gamma}: P[K = k] proportional to C(k + eta - 1, k)
    (1 - gamma)^k for k >= 1 (eta > 0), or to (1 - gamma)^k / k (eta = 0)."""
    if eta == 0:
        return int(gen.logseries(1.0 - gamma))
    if eta == 1:
        return int(gen.geometric(gamma))
    while True:             # the negative binomial conditioned on K >= 1
        k = int(gen.negative_binomial(eta, gamma))
        if k >= 1:
            return k


def selection_rdp(candidate_rdp, orders, eta, gamma):
    """RDP curve of the private selection (Papernot & Steinke 2022, Theorem 2): with
    ``candidate_rdp[i]`` the RDP at ``orders[i]`` of one fit of a randomly drawn candidate,
    at order lambda::

        eps(lambda) + (1 + eta) (1 - 1/mu) eps(mu) + (1 + eta) log(1/gamma) / mu
                    + log(E[K]) / (lambda - 1)

    minimised over the orders mu."""
    r = np.asarray(candidate_rdp, dtype=np.float64)
    a = np.asarray(orders, dtype=np.float64)
    eta, gamma = _check_eta_gamma(eta, gamma)
    extra = np.min((1 + eta) * (1 - 1 / a) * r + (1 + eta) * math.log(1 / gamma) / a)
    return r + extra + math.log(mean_repetitions(eta, gamma)) / (a - 1)


class SelectionResult:
    """What :func:`select_private` returns.

    Attributes
    ----------
    candidate : int
        Index of the chosen candidate (released).
    estimator : estimator
        The chosen candidate, fitted (holds secrets like every fitted model: publish
        ``release``).
    release : dptm.Release
        The chosen model's release; its privacy report covers the whole selection.
    score : float
        Its score (post-processing of the release).
    privacy : PrivacyReport
        The selection's guarantee.
    """

    def __init__(self, candidate, estimator, release, score, privacy):
        self.candidate, self.estimator, self.release = candidate, estimator, release
        self.score, self.privacy = score, privacy

    def __repr__(self):
        return (f"SelectionResult(candidate={self.candidate}, score={self.score:.6g}, "
                f"{self.privacy!r})")


def _perplexity_score(reference):
    def score(release):
        return -float(release.perplexity(reference))
    return score


def select_private(candidates, X, *, reference=None, score=None, eta=1.0, gamma=None,
                   delta=None, vocabulary=None, random_state=None):
    """Choose among candidate private estimators on the private data ``X``, privately.

    Papernot & Steinke 2022: draw K ~ D_{eta, gamma} (secretly); K times, draw a candidate
    uniformly at random, fit a clone of it on ``X`` and score its release; release only the
    best. Each fit is (lambda, eps_i(lambda))-RDP, so one round (a uniform draw of the
    candidate, its fit, its score) is RDP with the largest eps_i at each order (a mixture
    with data-independent weights), and the selection has the RDP curve of
    :func:`selection_rdp`, converted to (epsilon, delta) at ``delta``.

    Parameters
    ----------
    candidates : sequence of unfitted private dptm estimators
        E.g. ``[PrivateBatchLDA(k, target_epsilon=e) for k in (10, 20) for e in (1, 2)]``.
        Their reports must be RDP-accountable and of one adjacency.
    X : document-term count matrix
        The private data.
    reference : count matrix, optional
        Public or held-out documents that are not part of ``X``: the default score is
        minus the release's perplexity on them (post-processing, no extra cost).
    score : callable, optional
        ``score(release) -> float``, higher is better; must depend on the release and
        public data only. Give either ``reference`` or ``score``.
    eta : float >= 0, default=1
        Shape of the number of fits: 1 geometric (Liu & Talwar 2019), 0 logarithmic.
    gamma : float in (0, 1), optional
        Default: E[K] = 2 x the number of candidates (geometric: gamma = 1 / (2 n)).
    delta : float, optional
        Delta of the report (default: the first candidate's report's).
    vocabulary : sequence of str, optional
        Passed to the chosen estimator's ``release``.
    random_state : None or int
        None draws K and the candidates from the secret generator; a seed is test mode.

    Returns
    -------
    SelectionResult

    Privacy contract
    ----------------
    The result's ``release``, ``score``, ``candidate`` and ``privacy`` are covered by the
    report; K, the other fits and their scores are not released (do not log them, nor the
    time the selection took: it grows with K). Fits
    made here do not spend from an active accountant one by one: the selection spends its
    report once.
    """
    from .noise.secret import private_generator
    from .accounting import ApproxDPEvent, PrivacyReport, RDPAccountant
    from .accounting.conversions import rdp_to_dp
    candidates = list(candidates)
    if not candidates:
        raise ValueError("candidates must hold at least one estimator")
    for c in candidates:
        if not hasattr(c, "fit") or not hasattr(c, "get_params"):
            raise TypeError(f"candidates must be dptm estimators, got {type(c).__name__}")
    if (reference is None) == (score is None):
        raise ValueError("give exactly one of reference= (public documents) or score=")
    if score is None:
        score = _perplexity_score(reference)
    elif not callable(score):
        raise TypeError(f"score must be callable, got {type(score).__name__}")
    if gamma is None:
        gamma = _gamma_for_mean(eta, 2.0 * len(candidates))
    eta, gamma = _check_eta_gamma(eta, gamma)
    gen, seeded = private_generator(random_state, "select_private")

    # the guarantee is over every candidate that could be drawn, and each candidate's RDP
    # curve must not depend on X: read it from a fit on a public stand-in, before X is used
    n_words = check_count_matrix(X).shape[1]
    reports = [_report_of_candidate(i, c, n_words) for i, c in enumerate(candidates)]
    n_fits = _draw_repetitions(gen, eta, gamma)
    best = None
    token = _SUSPENDED.set(True)
    try:
        for _ in range(n_fits):
            i = int(gen.integers(len(candidates)))
            # the unchosen fits are not released: their warnings and logs are held back
            # (a warning may carry a noisy statistic of its fit); the chosen one's are shown
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                model = _quiet(clone(candidates[i])).fit(X)
                if not isinstance(getattr(model, "privacy_", None), PrivacyReport):
                    raise TypeError(f"candidates[{i}] ({type(model).__name__}) is not a "
                                    "private estimator: its fit states no privacy_ report")
                release = model.release(vocabulary=vocabulary)
            s = float(score(release))
            # a failed score is never chosen; raising here would tell how far the loop got
            s = s if math.isfinite(s) else -math.inf
            if best is None or s > best[3]:
                best = (i, model, release, s, caught)
    finally:
        _SUSPENDED.reset(token)
    if best[3] == -math.inf:
        raise ValueError("score returned no finite number for any fit: it must return a "
                         "finite float (higher is better)")
    for w in best[4]:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    adjacency = {r.adjacency for r in reports}
    if len(adjacency) != 1:
        raise ValueError(f"candidates have different adjacencies {sorted(adjacency)}: their "
                         "guarantees do not combine")
    delta = reports[0].default_delta if delta is None else delta
    acc = [RDPAccountant().compose(r.event) for r in reports]
    orders = np.asarray(acc[0].orders)
    candidate_rdp = np.max([a.rdp for a in acc], axis=0)
    eps, _ = rdp_to_dp(selection_rdp(candidate_rdp, orders, eta, gamma), orders, delta)
    chosen = best[2].privacy
    privacy = PrivacyReport(
        ApproxDPEvent(eps, delta, label="private selection"), reports[0].adjacency,
        description=(f"private selection among {len(candidates)} candidate settings "
                     f"(Papernot & Steinke 2022, number of fits ~ truncated negative "
                     f"binomial eta={eta:g}, gamma={gamma:.4g}, "
                     f"mean {mean_repetitions(eta, gamma):.4g})"),
        notes=["epsilon from the RDP bound of Papernot & Steinke 2022 (Theorem 2) with the "
               "largest RDP of the candidates at each order; only the best candidate's release "
               "and score are published (not the number of fits)",
               f"chosen candidate: {chosen.description}" if chosen.description else
               "chosen candidate's report: see the candidates' settings"] + list(chosen.notes),
        default_delta=delta, seeded=seeded or any(
            c.get_params(deep=False).get("random_state") is not None for c in candidates),
        assumed_public=sorted({a for r in reports for a in r.assumed_public}),
        vocabulary=chosen.vocabulary)
    release = best[2]
    release.privacy = privacy
    accountant = current_accountant()
    if accountant is not None and not _SUSPENDED.get():
        accountant.spend(privacy, label=f"select_private among {len(candidates)} candidates")
    return SelectionResult(best[0], best[1], release, best[3], privacy)


def _quiet(model):
    """The clone with its progress log off (``verbose=0``), where it has one."""
    if "verbose" in model.get_params(deep=False):
        model.set_params(verbose=0)
    return model


def _report_of_candidate(i, candidate, n_words):
    """One candidate's privacy report, from a fit on a public synthetic stand-in with the
    private data's number of words (public): never from the private data, so the RDP curve
    the selection composes cannot depend on it. A candidate whose accounting reads the
    number of documents (PrivateOnlineLDA without a declared ``total_samples``) is refused."""
    from .accounting import PrivacyReport
    from .datasets import make_lda_corpus
    params = candidate.get_params(deep=False)
    if "total_samples" in params and params["total_samples"] is None:
        raise ValueError(f"candidates[{i}] ({type(candidate).__name__}) has "
                         "total_samples=None: its accounting then reads the number of private "
                         "documents; declare a public total_samples")
    stand_in, _, _ = make_lda_corpus(64, n_words, 2, doc_length=20, random_state=0)
    token = _SUSPENDED.set(True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = _quiet(clone(candidate))
            if "random_state" in params and params["random_state"] is None:
                model.set_params(random_state=0)    # a public stand-in: nothing to protect
            report = getattr(model.fit(stand_in), "privacy_", None)
    finally:
        _SUSPENDED.reset(token)
    if not isinstance(report, PrivacyReport):
        raise TypeError(f"candidates[{i}] ({type(candidate).__name__}) is not a private "
                        "estimator: its fit states no privacy_ report")
    return report


def _gamma_for_mean(eta, mean):
    """gamma with E[K] = ``mean`` under D_{eta, gamma}."""
    from scipy.optimize import brentq
    if eta == 1:
        return 1.0 / mean
    return math.exp(brentq(lambda lg: mean_repetitions(eta, math.exp(lg)) - mean,
                           math.log(1e-12), math.log(1 - 1e-9)))
