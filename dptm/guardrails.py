"""Guardrails: warnings for guarantees that protect little and models that say little.

Each check emits a :mod:`dptm.exceptions` warning class that users can filter or turn into
errors (``warnings.simplefilter("error", dptm.exceptions.VacuousGuaranteeWarning)``).
The checks run on the data owner's side; what they compute (a held-out perplexity, the
number of records) is not part of any release.
"""
import warnings

from ._utils import check_int
from .exceptions import TopicCountWarning, UninformativeModelWarning, VacuousGuaranteeWarning

__all__ = ["VACUOUS_EPSILON", "check_guarantee", "check_against_uniform", "check_topic_count"]

#: Above this epsilon a guarantee is flagged as vacuous.
VACUOUS_EPSILON = 10.0


def check_guarantee(report, n_records=None, unit="records", stacklevel=2):
    """Warn (:class:`~dptm.exceptions.VacuousGuaranteeWarning`) when ``report``'s epsilon at
    its delta exceeds :data:`VACUOUS_EPSILON`, or when its delta is at least
    ``1 / n_records``. Returns the list of problems found (empty when none)."""
    problems = []
    eps = report.epsilon(None if report.pure_only else report.default_delta)
    if eps > VACUOUS_EPSILON:
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


def check_against_uniform(model, X_heldout, margin=0.95, stacklevel=2):
    """Warn (:class:`~dptm.exceptions.UninformativeModelWarning`) when the held-out
    perplexity of ``model`` (a fitted model or a ``Release``) is above ``margin`` times the
    vocabulary size, the perplexity of the uniform model. Returns the perplexity."""
    perplexity = float(model.perplexity(X_heldout))
    n_words = (model.topic_word_ if hasattr(model, "topic_word_") else model.topic_word).shape[1]
    if perplexity >= margin * n_words:
        warnings.warn(f"held-out perplexity {perplexity:.1f} is no better than the uniform "
                      f"model's ({n_words}, the vocabulary size): the topics carry no "
                      "information (too much noise for this data size: raise epsilon, use more "
                      "documents or fewer topics)", UninformativeModelWarning,
                      stacklevel=stacklevel + 1)
    return perplexity


def check_topic_count(n_components, n_docs, stacklevel=2):
    """Warn (:class:`~dptm.exceptions.TopicCountWarning`) when there are more topics than
    documents. Returns True when it warned."""
    if n_components > n_docs:
        warnings.warn(f"n_components={n_components} topics for {n_docs} documents: most topics "
                      "cannot be estimated", TopicCountWarning, stacklevel=stacklevel + 1)
        return True
    return False
