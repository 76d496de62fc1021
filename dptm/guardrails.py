"""Guardrails: warnings for guarantees that protect little and models that say little.

Each check emits a :mod:`dptm.exceptions` warning class that users can filter or turn into
errors (``warnings.simplefilter("error", dptm.exceptions.VacuousGuaranteeWarning)``).
The checks run on the data owner's side; what they compute (a held-out perplexity, the
number of records) is not part of any release.

Every dptm estimator runs :func:`check_fitted` when its ``fit`` returns (a vacuous
guarantee, more topics than documents). :func:`check_against_uniform` is not run
automatically: it needs held-out or public documents, and a private model's utility is
never measured silently on its private training data. Call it yourself::

    model.fit(X_train)
    dptm.guardrails.check_against_uniform(model, X_heldout)   # warns if no better than uniform
    check = dptm.guardrails.check_against_unigram(model, X_heldout)   # ... than word frequencies
    check.ratio             # model / unigram perplexity: below 1, the topics say more
"""
import re
import warnings
from typing import NamedTuple

from ._utils import check_int
from .exceptions import TopicCountWarning, UninformativeModelWarning, VacuousGuaranteeWarning

__all__ = ["VACUOUS_EPSILON", "check_guarantee", "check_against_uniform",
           "check_against_unigram", "UnigramComparison", "unigram_perplexity", "check_topic_count",
           "check_fitted", "public_record_count"]

#: Above this epsilon a guarantee is flagged as vacuous.
VACUOUS_EPSILON = 10.0


def check_guarantee(report, n_records=None, unit="records", stacklevel=2):
    """Warn (:class:`~dptm.exceptions.VacuousGuaranteeWarning`) when ``report``'s epsilon at
    its delta exceeds :data:`VACUOUS_EPSILON`, or when its delta is at least
    ``1 / n_records``. Returns the list of problems found (empty when none)."""
    problems = []
    try:
        eps = report.epsilon(None if report.pure_only else report.default_delta)
    except ValueError:          # no accountant supports the event: nothing to compare
        eps = None
    if eps is not None and eps > VACUOUS_EPSILON:
        problems.append(f"epsilon = {eps:.4g} exceeds {VACUOUS_EPSILON:g}: the guarantee allows an "
                        f"adversary's odds about the protected unit to grow by e^{eps:.3g}")
    if n_records is not None and not report.pure_only:
        n = check_int(n_records, "n_records", minimum=1)
        if report.default_delta >= 1.0 / n:
            problems.append(f"delta = {report.default_delta:.3g} >= 1/n = 1/{n} {unit}: a "
                            "mechanism publishing one record in the clear meets this delta")
    for p in problems:
        warnings.warn(f"vacuous privacy guarantee: {p}", VacuousGuaranteeWarning,
                      stacklevel=stacklevel + 1)
    return problems


def _heldout_perplexity(model, X_heldout):
    """``model.perplexity(X_heldout)``, except for scikit-learn's LatentDirichletAllocation
    (public topics fitted with it, say): its ``perplexity`` is a variational bound, far
    above the held-out perplexity the baselines are compared on, so its topics are folded in
    as a :class:`~dptm.Release`'s are."""
    from sklearn.decomposition import LatentDirichletAllocation
    if isinstance(model, LatentDirichletAllocation):
        from .release import Release
        model = Release(model.components_, doc_topic_prior=model.doc_topic_prior_)
    return float(model.perplexity(X_heldout))


def check_against_uniform(model, X_heldout, margin=0.95, stacklevel=2):
    """Warn (:class:`~dptm.exceptions.UninformativeModelWarning`) when the held-out
    perplexity of ``model`` (a fitted model or a ``Release``) is above ``margin`` times the
    vocabulary size, the perplexity of the uniform model. Returns the perplexity."""
    import numpy as np
    perplexity = _heldout_perplexity(model, X_heldout)
    n_words = np.shape(X_heldout)[1]
    if perplexity >= margin * n_words:
        warnings.warn(f"held-out perplexity {perplexity:.1f} is no better than the uniform "
                      f"model's ({n_words}, the vocabulary size): the topics carry no "
                      "information (too much noise for this data size: raise epsilon, use more "
                      "documents or fewer topics)", UninformativeModelWarning,
                      stacklevel=stacklevel + 1)
    return perplexity


def unigram_perplexity(X_heldout, X_reference=None, prior=0.5):
    """Perplexity on ``X_heldout`` (documents x words counts) of the unigram model: one
    word distribution for every document, the word frequencies of ``X_reference`` plus
    ``prior`` per word (default: of ``X_heldout`` itself, which favours the unigram model a
    little: the check that uses it warns a little early)."""
    import numpy as np
    import scipy.sparse as sp
    X = sp.csr_matrix(X_heldout, dtype=np.float64)
    R = X if X_reference is None else sp.csr_matrix(X_reference, dtype=np.float64)
    if R.shape[1] != X.shape[1]:
        raise ValueError(f"X_reference has {R.shape[1]} words, X_heldout {X.shape[1]}")
    if not float(prior) > 0:
        raise ValueError(f"prior must be > 0, got {prior!r}")
    counts = np.asarray(R.sum(axis=0)).ravel() + float(prior)
    words = np.asarray(X.sum(axis=0)).ravel()
    if not words.sum() > 0:
        raise ValueError("X_heldout holds no token")
    log_p = np.log(counts / counts.sum())
    return float(np.exp(-(words @ log_p) / words.sum()))


class UnigramComparison(NamedTuple):
    """What :func:`check_against_unigram` measured; unpacks as ``(perplexity, unigram)``."""

    #: Held-out perplexity of the model.
    perplexity: float
    #: Held-out perplexity of the unigram model (one word distribution for every document).
    unigram_perplexity: float

    @property
    def ratio(self):
        """``perplexity / unigram_perplexity``: below 1 the topics say more than the word
        frequencies alone."""
        return self.perplexity / self.unigram_perplexity


def check_against_unigram(model, X_heldout, X_reference=None, margin=1.0, stacklevel=2):
    """Warn (:class:`~dptm.exceptions.UninformativeModelWarning`) when the held-out
    perplexity of ``model`` (a fitted model or a ``Release``) is above ``margin`` times
    that of the unigram model (:func:`unigram_perplexity`, fitted on ``X_reference``, public
    or held-out text, default ``X_heldout``): the topics then say less than the word
    frequencies alone.

    Parameters
    ----------
    model : fitted estimator or Release
        Anything with ``perplexity(X)``; a scikit-learn ``LatentDirichletAllocation``
        is measured by its topics (``components_``) folded in, not by its own
        ``perplexity``, a variational bound.
    X_heldout : array-like or sparse matrix, shape (n_documents, n_words)
        Held-out or public counts over the model's vocabulary.
    X_reference : array-like or sparse matrix, optional
        Public counts the unigram model is fitted on (default ``X_heldout``).
    margin : float, default 1.0
        The warning fires when ``ratio >= margin``.
    stacklevel : int, default 2

    Returns
    -------
    UnigramComparison
        ``(perplexity, unigram_perplexity)`` with ``.ratio``; a 2-tuple, so
        ``ppl, uni = check_against_unigram(...)`` keeps working.

    Privacy contract
    ----------------
    Reads ``X_heldout`` and ``X_reference`` in the clear: give public or held-out data,
    never the private training data, if the result is to be shown to anyone.
    """
    perplexity = _heldout_perplexity(model, X_heldout)
    unigram = unigram_perplexity(X_heldout, X_reference)
    if perplexity >= margin * unigram:
        warnings.warn(f"held-out perplexity {perplexity:.1f} is no better than the unigram "
                      f"model's ({unigram:.1f}, one word distribution for every document): "
                      "the topics carry no information beyond word frequencies (raise "
                      "epsilon, use more data (more users, at user level) or fewer topics)",
                      UninformativeModelWarning, stacklevel=stacklevel + 1)
    return UnigramComparison(perplexity, unigram)


def check_topic_count(n_components, n_docs, stacklevel=2):
    """Warn (:class:`~dptm.exceptions.TopicCountWarning`) when there are more topics than
    documents. Returns True when it warned."""
    if n_components > n_docs:
        warnings.warn(f"n_components={n_components} topics for {n_docs} documents: most topics "
                      "cannot be estimated", TopicCountWarning, stacklevel=stacklevel + 1)
        return True
    return False


_PUBLIC_COUNTS = {
    "documents": re.compile(r"number of documents D = (\d+)\b"),
    # a declared public number of documents (PrivateOnlineLDA's total_samples)
    "declared documents": re.compile(r"total_samples = ([0-9][0-9.e+]*)"),
    "tokens": re.compile(r"number of tokens N = (\d+)\b"),
}


def public_record_count(report):
    """``(n, unit)``: the number of protected units the report declares public, or
    ``(None, None)``.

    Only counts the report lists under "assumed public" are used (the number of
    documents D of the Gibbs and VIPS models, the token count N of an unclipped Gibbs
    model): a count the guarantee protects is never looked at. Word-level reports use N
    when public, else D (a document holds at least one word, so ``delta >= 1/D`` implies
    ``delta >= 1/N``); user-level and local reports have no public count.
    """
    found = {}
    for text in report.assumed_public:
        for unit, pattern in _PUBLIC_COUNTS.items():
            m = pattern.search(text)
            if m:
                found[unit] = int(float(m.group(1)))
    if report.adjacency in ("document", "document-replace") and "documents" in found:
        return found["documents"], "documents"
    if report.adjacency == "document" and "declared documents" in found:
        return found["declared documents"], "documents (declared total_samples)"
    if report.adjacency == "word":
        if "tokens" in found:
            return found["tokens"], "tokens"
        if "documents" in found:
            return found["documents"], "documents (fewer than the protected tokens)"
    return None, None


def _noisy_unit_count(estimator, report):
    """``(n, unit)`` from the fit's DP estimate of its number of protected units (a
    PrivateBatchLDA's ``n_documents_estimate_`` / ``n_users_estimate_``: post-processing
    of its norm-histogram release) plus twice its noise sd (``count_estimate_sd_``), so
    that a delta at or above 1 / (the true count) warns unless the noise drew more than 2 sd
    high; ``(None, None)`` without such an estimate."""
    import math
    inner = getattr(estimator, "model_", estimator)     # a vocabulary pipeline's model
    user = str(report.adjacency).startswith("user")
    value = getattr(inner, "n_users_estimate_" if user else "n_documents_estimate_", None)
    sd = getattr(inner, "count_estimate_sd_", None)
    if not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not isinstance(sd, float) or not math.isfinite(sd):
        return None, None
    unit = ("users" if user else "documents") + " (a DP estimate plus 2 noise sd)"
    return max(1, int(math.ceil(max(value, 0.0) + 2.0 * sd))), unit


def _n_rows(X):
    if X is None:
        return None
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) >= 1:
        return int(shape[0])
    try:
        return len(X)
    except TypeError:
        return None


def check_fitted(estimator, X=None, stacklevel=2):
    """The checks every dptm estimator runs when its ``fit`` returns.

    * :func:`check_guarantee` on ``estimator.privacy_`` (when set), with ``n`` the
      number of protected units the report declares public (:func:`public_record_count`),
      else the fit's DP estimate of it plus 2 noise sd (PrivateBatchLDA's noisy count),
      else none;
    * :func:`check_topic_count` with the number of topics released and the number of
      training documents: ``len(X)`` for a non-private estimator, the count the privacy
      report declares public for a private one, and no check when it declares none (a
      warning printed by the CLI or kept in a log must not tell a private D < K from its
      neighbour's D >= K).

    Returns the list of problems found.
    """
    problems = []
    report = getattr(estimator, "privacy_", None)
    from .accounting import PrivacyReport
    n_docs = _n_rows(X)
    if isinstance(report, PrivacyReport):
        n, unit = public_record_count(report)
        n_docs = n if unit is not None and unit.startswith("documents") else None
        if n is None:
            n, unit = _noisy_unit_count(estimator, report)
        problems += check_guarantee(report, n, unit=unit or "records", stacklevel=stacklevel + 1)
    topics = getattr(estimator, "topic_word_", None)
    if topics is None:
        topics = getattr(estimator, "components_", None)
    shape = getattr(topics, "shape", ())
    if n_docs is not None and len(shape) == 2:
        if check_topic_count(int(shape[0]), n_docs, stacklevel=stacklevel + 1):
            problems.append(f"{shape[0]} topics for {n_docs} documents")
    return problems
