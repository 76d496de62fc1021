"""Shared machinery of the topic-model estimators: parameter checks, fold-in inference,
perplexity and score, progress reporting (through :mod:`dptm._progress`) and the
guardrails checked when a fit returns."""
import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .. import _progress
from .._utils import check_count_matrix, check_int, check_positive
from ..release import Release, _fold_in_counts, _top_words_table, public_params

_SCOPED_METHODS = ("fit", "fit_transform", "partial_fit")


def _after_fit(estimator, args, kwargs):
    """Guardrails once the outermost fit of ``estimator`` returns (nested fits, e.g.
    TopicDP's refits, are not checked: the enclosing model is): the scikit-learn context
    (a vocabulary fitted on the same data, model selection), the ledger of
    :func:`dptm.selection.spending`, then :func:`dptm.guardrails.check_fitted`."""
    from ..exceptions import user_stacklevel
    from ..guardrails import check_fitted
    X = args[0] if args else kwargs.get("X", kwargs.get("documents"))
    if _private_report(estimator) is not None:
        _check_sklearn_context(estimator)
    check_fitted(estimator, X, stacklevel=user_stacklevel())


def store_params(estimator, params):
    """Store the constructor's arguments (its ``locals()``) as attributes of the same names:
    scikit-learn's ``__init__`` convention, written once for the estimators with many."""
    for name, value in params.items():
        if name not in ("self", "__class__"):
            setattr(estimator, name, value)


#: What a release says of a vocabulary learned from the private data.
PRIVATE_VOCABULARY = "vocabulary from the private data: not covered by the guarantee"


def _private_report(estimator):
    from ..accounting import PrivacyReport
    report = getattr(estimator, "privacy_", None)
    return report if isinstance(report, PrivacyReport) else None


def _with_vocabulary(report, provenance):
    """``report`` with its vocabulary provenance replaced (the guarantee is unchanged)."""
    from ..accounting import PrivacyReport
    state = report.to_state()
    state["vocabulary"] = provenance
    return PrivacyReport.from_state(state)


def learned_vocabulary(step):
    """True when ``step`` is a fitted scikit-learn vectorizer whose vocabulary was learned
    from the documents it was fitted on (``vocabulary_`` set, ``fixed_vocabulary_``
    False), False for a given ``vocabulary=``, None for anything else."""
    if not hasattr(step, "vocabulary_") or not hasattr(step, "fixed_vocabulary_"):
        return None
    return not bool(step.fixed_vocabulary_)


def _enclosing(estimator):
    """(steps fitted before ``estimator`` in every enclosing ``Pipeline.fit``, the
    outermost scikit-learn model selection call or None), read from the call stack: a
    final step cannot otherwise know what its Pipeline fitted on the same data."""
    import os
    import sys

    import sklearn
    from sklearn.pipeline import Pipeline
    selection_dir = os.path.join(os.path.dirname(os.path.abspath(sklearn.__file__)),
                                 "model_selection") + os.sep
    before, selection, target = [], None, estimator
    frame = sys._getframe(1)
    while frame is not None:
        owner = frame.f_locals.get("self")
        if isinstance(owner, Pipeline) and frame.f_code.co_name.startswith("fit"):
            steps = [s for _, s in owner.steps]
            where = [s is target for s in steps]
            if any(where):        # then the pipeline holding this one, outwards
                before += steps[:where.index(True)]
                target = owner
        if os.path.abspath(frame.f_code.co_filename).startswith(selection_dir):
            selection = (f"{type(owner).__name__}.{frame.f_code.co_name}"
                         if owner is not None else frame.f_code.co_name)
        frame = frame.f_back
    return before, selection


def _frozen(step):
    """A ``sklearn.frozen.FrozenEstimator``: its ``fit`` does nothing, so its vocabulary was
    not learned from the documents of this fit."""
    try:
        from sklearn.frozen import FrozenEstimator
    except ImportError:         # scikit-learn < 1.6
        return False
    return isinstance(step, FrozenEstimator)


def _check_sklearn_context(estimator):
    """A private fit inside a Pipeline after a vectorizer that learned its vocabulary on
    the same data (the report then says so), or inside model selection (every fit is a
    release): warn; then spend the report from the active accountant."""
    import warnings

    from ..exceptions import PrivateVocabularyWarning, RepeatedFitWarning, user_stacklevel
    from ..selection import _record_fit
    name = type(estimator).__name__
    before, selection = _enclosing(estimator)
    learned = [type(s).__name__ for s in before if learned_vocabulary(s) and not _frozen(s)]
    if learned:
        estimator.privacy_ = _with_vocabulary(estimator.privacy_, PRIVATE_VOCABULARY)
        warnings.warn(
            f"{name} was fitted after {', '.join(learned)} learned its vocabulary from the same "
            "private documents: which words exist is not covered by the guarantee, and the "
            f"release says so. Give the vectorizer a public vocabulary= (or use "
            "dptm.DPVocabulary).", PrivateVocabularyWarning, stacklevel=user_stacklevel())
    if selection is not None:
        warnings.warn(
            f"{name} fitted inside {selection}: each fit is a separate release of (part of) "
            "the data, privacy_ covers this one fit only, and choosing by score on private "
            "folds is not private. Record the fits with dptm.selection.spending(accountant); "
            "choose with dptm.selection.select_private or on public data.",
            RepeatedFitWarning, stacklevel=user_stacklevel())
    _record_fit(estimator, f"{name}.fit" + (f" in {selection}" if selection else ""))


def _record_feature_names(estimator, args, kwargs):
    """``feature_names_in_`` from a DataFrame's columns for every matrix model, whichever
    validation its ``fit`` uses (scikit-learn's rule: set from string column names,
    removed when refitted on an array). The column names are the vocabulary, which the
    release declares public."""
    from sklearn.utils.validation import _check_feature_names
    X = args[0] if args else kwargs.get("X")
    if X is not None and hasattr(X, "shape"):
        _check_feature_names(estimator, X, reset=True)


def _release_vocabulary(estimator, vocabulary):
    """(words, privacy report) of a release: a fitted vectorizer gives its words, and
    one that learned them marks the report."""
    import warnings

    from ..exceptions import PrivateVocabularyWarning, user_stacklevel
    privacy = getattr(estimator, "privacy_", None)
    if vocabulary is None and hasattr(estimator, "feature_names_in_"):
        return list(estimator.feature_names_in_), privacy
    learned = learned_vocabulary(vocabulary)
    if learned is None:
        if (_private_report(estimator) is not None and privacy.vocabulary is None
                and _sorted_like_a_vectorizer(vocabulary)):
            warnings.warn(
                "release(vocabulary=...): the words look like a fitted vectorizer's "
                "get_feature_names_out() (a sorted object array); the release declares given "
                "words public, and a vocabulary learned from the private documents is not "
                "covered by the guarantee. Pass the vectorizer itself (a learned vocabulary "
                "is then marked in the release) or select the words with dptm.DPVocabulary; "
                "ignore this warning for a public list", PrivateVocabularyWarning,
                stacklevel=user_stacklevel())
        return vocabulary, privacy
    words = list(vocabulary.get_feature_names_out())
    if learned and _private_report(estimator) is not None:
        if privacy.vocabulary != PRIVATE_VOCABULARY:
            warnings.warn(
                f"release(vocabulary={type(vocabulary).__name__}(...)): the vectorizer learned "
                "its vocabulary (no vocabulary= was given to it); if it was fitted on the "
                "private documents, which words exist is not covered by the guarantee, and "
                "the release says so", PrivateVocabularyWarning, stacklevel=user_stacklevel())
        privacy = _with_vocabulary(privacy, PRIVATE_VOCABULARY)
    return words, privacy


def _sorted_like_a_vectorizer(vocabulary):
    """Whether ``vocabulary`` is what a fitted scikit-learn vectorizer's
    ``get_feature_names_out()`` returns: an object array of distinct strings in sorted
    order. A check of the given words only (declared public), never of the data."""
    if not isinstance(vocabulary, np.ndarray) or vocabulary.dtype != object \
            or vocabulary.ndim != 1:
        return False
    words = list(vocabulary)
    return (len(words) >= 2 and all(isinstance(w, str) for w in words)
            and all(a < b for a, b in zip(words, words[1:])))


class FitScopeMixin:
    """Runs every ``fit`` / ``fit_transform`` / ``partial_fit`` a subclass defines inside
    :func:`dptm._progress.fit_scope` (progress on the ``"dptm"`` logger, nested models
    silent) and, when the outermost ``fit`` or ``fit_transform`` returns, calls
    :func:`dptm.guardrails.check_fitted` (vacuous guarantee, more topics than documents).
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for name in _SCOPED_METHODS:
            method = cls.__dict__.get(name)
            if method is None or getattr(method, "_dptm_scoped", False):
                continue
            whole = name != "partial_fit"
            setattr(cls, name, _progress.wrap_fit(
                method, after=_after_fit if whole else None,
                before=cls._before_fit if whole else None))

    @staticmethod
    def _before_fit(estimator, args, kwargs):
        """Hook run before the outermost ``fit`` / ``fit_transform``."""

    def _log(self, message, *args):
        """One INFO progress line ``[ClassName] message`` on the ``"dptm"`` logger (when
        ``verbose`` is set and no enclosing dptm model is fitting this one). Private
        models log public quantities only: no metric of the data, no timing."""
        _progress.log(self, message, *args)


class TopicModelMixin(FitScopeMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin,
                      BaseEstimator):
    """Common API of dptm topic models: ``transform`` by Gibbs fold-in with the released
    topics fixed, ``perplexity``, ``score``, priors with 1/K defaults, progress output.

    Subclasses set ``components_`` (K x V pseudo-counts) in ``fit`` and call
    ``_set_topics``; everything here uses only the released ``topic_word_``, so it is
    post-processing of what a private model releases.
    """

    _before_fit = staticmethod(_record_feature_names)

    def _check_common_params(self):
        check_int(self.n_components, "n_components", minimum=1)
        check_int(self.max_iter, "max_iter", minimum=1)
        check_int(self.transform_max_iter, "transform_max_iter", minimum=2)
        self.doc_topic_prior_ = (1.0 / self.n_components if self.doc_topic_prior is None
                                 else check_positive(self.doc_topic_prior, "doc_topic_prior"))
        self.topic_word_prior_ = (1.0 / self.n_components if self.topic_word_prior is None
                                  else check_positive(self.topic_word_prior, "topic_word_prior"))

    def _set_topics(self, components):
        """Store the released K x V pseudo-counts and their row-normalised form."""
        self.components_ = np.asarray(components, dtype=np.float64)
        self.topic_word_ = self.components_ / self.components_.sum(axis=1, keepdims=True)

    @property
    def _n_features_out(self):
        # transform's columns are the topics: get_feature_names_out() names them
        # "<classname>0", "<classname>1", ... and set_output(transform="pandas") works.
        return self.components_.shape[0]

    def top_words(self, n=10, vocabulary=None, as_frame=None):
        """The ``n`` most probable words of each topic (post-processing of the released
        topics).

        Parameters
        ----------
        n : int
        vocabulary : sequence of str, optional
            Word of each column; default ``feature_names_in_`` (set when the model was
            fitted on a DataFrame), else the word ids are returned.
        as_frame : bool, optional
            None: a DataFrame when pandas is installed; True: a DataFrame; False: a list.

        Returns
        -------
        pandas.DataFrame (one row per topic, columns 1..n) when pandas is installed (and
        ``as_frame`` is not False), otherwise a list of lists.
        """
        check_is_fitted(self, "components_")
        if vocabulary is None:
            vocabulary = getattr(self, "feature_names_in_", None)
        return _top_words_table(self.topic_word_, n, vocabulary, as_frame)

    def _check_transform_input(self, X):
        check_is_fitted(self, "components_")
        return check_count_matrix(X, estimator=self, reset=False)

    def transform(self, X):
        """Infer the document-topic distribution of each row of ``X`` with the topics fixed.

        Fold-in Gibbs sampling (Zhao et al. 2021 VII-A): ``transform_max_iter`` sweeps per
        document, the second half averaged. Each document draws from its own random stream,
        seeded by the model and the document's content, so a document's theta does not
        depend on the other documents in ``X``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_docs, n_words)

        Returns
        -------
        ndarray of shape (n_docs, n_components); rows sum to 1.
        """
        return self._transform_counts(self._check_transform_input(X))

    def _transform_counts(self, X):
        """``transform`` of a matrix ``_check_transform_input`` returned."""
        from .._threads import effective_n_jobs   # estimators with n_jobs: fold-in threads
        return _fold_in_counts(self.topic_word_, X, self.doc_topic_prior_,
                               self.transform_max_iter, self.transform_seed_,
                               effective_n_jobs(getattr(self, "n_jobs", None)))

    def perplexity(self, X):
        """Held-out perplexity ``exp(-log p(X) / n_tokens)`` with theta from ``transform``
        (see ``dptm.metrics.perplexity``; natural log, per token). Lower is better."""
        from ..metrics import _perplexity_counts
        X = self._check_transform_input(X)       # validated once for both steps
        return _perplexity_counts(X, self._transform_counts(X), self.topic_word_)

    def score(self, X, y=None):
        """Log-likelihood of ``X`` under the model (theta from ``transform``); higher is better."""
        from ..metrics import _log_likelihood_counts
        X = self._check_transform_input(X)
        return _log_likelihood_counts(X, self._transform_counts(X), self.topic_word_)

    def _progress(self, iteration, start=None, extra="", total=None, unit="iteration"):
        """Progress of iteration ``iteration`` of ``total`` (default ``max_iter``): a log
        line every 10th iteration (every one with ``verbose > 1``), or the tqdm bar.
        ``extra`` is appended to the line: only non-private models may put a metric of
        the data there. No wall times: how long a private fit takes depends on the
        private data (``start`` is accepted for compatibility and ignored)."""
        total = self.max_iter if total is None else total
        _progress.update_bar(self, iteration, total)
        if self.verbose and (self.verbose > 1 or iteration % 10 == 0 or iteration == total):
            self._log("%s %d/%d%s", unit, iteration, total, extra)

    # -- publication -----------------------------------------------------------------------
    def _release_fields(self):
        """The privatized arrays and declared public parameters of the release; subclasses
        whose ``components_`` or parameters are not all publishable override this."""
        return {"components": self.components_,
                "public_params": public_params(self.get_params(deep=False))}

    def release(self, vocabulary=None):
        """What to publish: a :class:`dptm.Release` (privatized topics, vocabulary,
        privacy report, public hyperparameters). The fitted estimator itself holds secrets
        (true counts, topic assignments, a test-mode seed) and is not for publication.

        Parameters
        ----------
        vocabulary : sequence of str or fitted vectorizer, optional
            Word of each column (default: ``feature_names_in_`` when fitted on a
            DataFrame). Unless the privacy report states its provenance (a DP-selected
            vocabulary), it is declared public: the guarantee assumes it was not built
            from the private text. A fitted scikit-learn vectorizer gives its
            ``get_feature_names_out()``; one that learned its vocabulary (no
            ``vocabulary=`` given to it) is taken to have learned it from the private
            data: a :class:`~dptm.exceptions.PrivateVocabularyWarning`, and the release
            says "vocabulary from the private data: not covered by the guarantee". Words
            given as a vectorizer's ``get_feature_names_out()`` (a sorted object array)
            warn too: the release cannot tell where they came from and declares them public.
        """
        check_is_fitted(self, "components_")
        fields = self._release_fields()
        vocabulary, privacy = _release_vocabulary(self, vocabulary)
        return Release(fields["components"], components=fields["components"],
                       doc_topic_prior=self.doc_topic_prior_,
                       privacy=privacy, vocabulary=vocabulary,
                       model=type(self).__name__, hyperparameters=fields["public_params"],
                       transform_seed=self.transform_seed_ % (1 << 63),
                       transform_max_iter=self.transform_max_iter)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        tags.input_tags.sparse = True
        return tags
