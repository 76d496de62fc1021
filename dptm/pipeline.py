"""Fully differentially private topic modeling, FDPTM (Manzonelli et al. 2024, Algorithm 1).

preprocess -> DP vocabulary (DP set union, :class:`dptm.DPVocabulary`) -> sanitize (drop
every word outside the private vocabulary) -> any document-level (or user-level) DP topic
model on the sanitized corpus. The release is the topic-word matrix *and* its vocabulary,
and ``privacy_`` composes both stages (Theorem 4.1, adaptive basic composition).

Only document- or user-level model stages are accepted. Behind a DP vocabulary a word-level
model is not covered by its proof: sanitizing turns "replace word t by t'" into the deletion
of a token when t is selected and t' is not, which changes the document's length and the
number of tokens, both public under word adjacency (and C = N for an unclipped model).
With ``groups`` (a user-level request) the model stage must itself be user-level.
"""
import inspect

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.utils.validation import check_is_fitted

from .accounting import ApproxDPEvent, ComposedEvent, PrivacyReport
from .models._base import FitScopeMixin
from .models._private_base import PrivateModelMixin
from .text import TextPreprocessor, tokens_to_matrix
from .vocab import DPVocabulary, _check_token_lists

__all__ = ["FullyPrivateTopicModel"]


def _default_model():
    from .models.private_vb import PrivateBatchLDA
    return PrivateBatchLDA(n_components=10, target_epsilon=3.0, target_delta=1e-5)


_ALLOWED = ("document- or user-level model stages: PrivateBatchLDA, PrivateOnlineLDA "
            "(sampling='poisson', with a declared total_samples) or a TopicDP-wrapped model")


def _refuse_word_level(model):
    """Refuse, before any budget is spent, a model stage whose guarantee does not hold on
    a corpus sanitized over a DP vocabulary."""
    name = type(model).__name__
    if getattr(model, "_privacy_adjacency", None) == "word":
        raise ValueError(
            f"model {name} is only word-level private (one token replaced), and behind a DP "
            "vocabulary that guarantee does not hold: sanitizing turns a replaced word into a "
            "deleted token when only one of the two words is selected, which changes the "
            "number of tokens and the document's length its proof takes as public. "
            f"FullyPrivateTopicModel takes {_ALLOWED}; fit word-level models on a matrix over "
            "a public vocabulary, with an explicit clip")
    params = model.get_params(deep=False)
    if name == "PrivateOnlineLDA" and params.get("sampling", "poisson") != "poisson":
        raise ValueError(
            f"model PrivateOnlineLDA(sampling={params['sampling']!r}) is private for documents "
            "replaced in a corpus of public size, not for documents added or removed, which "
            f"the vocabulary stage protects: use sampling='poisson'. Allowed: {_ALLOWED}")
    if (name == "PrivateOnlineLDA" and params.get("total_samples") is None
            and getattr(model, "_private", True)):
        # the refusal of its own fit, made here before the vocabulary stage spends budget
        raise ValueError(
            "model PrivateOnlineLDA(total_samples=None) would plan its sampling rate, steps and "
            "noise from the number of documents, which is not public under the add/remove "
            "adjacency the vocabulary stage protects: declare total_samples, a PUBLIC number of "
            "documents known without looking at the data (an upper bound or an estimate). "
            f"Allowed: {_ALLOWED}")


_USER_LEVEL = ("user-level model stages: PrivateBatchLDA (fit(X, groups=...): add/remove one "
               "user with all their documents) or a TopicDP-wrapped model (user-level random DP)")


def _refuse_without_user_level(model):
    """Refuse, before any budget is spent, a user-level request (``groups`` given) for a
    model stage that has no user-level guarantee: its fit takes no ``groups``."""
    fit = getattr(model, "fit", None)
    try:
        takes_groups = "groups" in inspect.signature(fit).parameters
    except (TypeError, ValueError):
        takes_groups = False
    if not takes_groups:
        name = type(model).__name__
        raise ValueError(
            f"groups were given (user-level privacy: every document of one user protected), "
            f"but model {name} has no user-level guarantee: it protects one document, and a "
            "user with n documents would get n times its epsilon. Use one of the "
            f"{_USER_LEVEL}, or groups=None for document-level privacy (the vocabulary stage "
            "is then document-level too)")


def _seed(est, gen, seeded):
    """A clone of the stage with its own randomness: the secret generator (None) unless the
    pipeline is in test mode, where a seed drawn from the pipeline's seeded stream keeps a
    test reproducible. A seed derived from the secret stream is never stored on a stage."""
    est = clone(est)
    if "random_state" in est.get_params(deep=False):
        est.set_params(random_state=int(gen.integers(2**31 - 1)) if seeded else None)
    return est


class FullyPrivateTopicModel(PrivateModelMixin, FitScopeMixin, BaseEstimator):
    """FDPTM: a private vocabulary plus a private topic model, with one composed guarantee.

    Parameters
    ----------
    vocabulary : DPVocabulary, default=None
        The vocabulary stage M1; ``DPVocabulary(target_epsilon=3, target_delta=1e-5,
        alpha=3)`` (Carvalho et al. 2022, as in Manzonelli et al. 2024) when None.
    model : estimator, default=None
        The topic-model stage M2: any estimator with ``fit(X)`` (or ``fit(X, groups=...)``)
        that sets a ``privacy_`` report with document or user adjacency, e.g.
        ``PrivateBatchLDA``, ``PrivateOnlineLDA`` (Poisson sampling with a declared
        ``total_samples``) or a ``TopicDP``-wrapped model. Word-level models
        (``NoisyGibbsLDA``, ``SubsampledGibbsLDA``) are refused with a ValueError (see
        Privacy); with ``groups`` so is every model without a user-level guarantee.
        ``PrivateBatchLDA(n_components=10, target_epsilon=3, target_delta=1e-5)`` when None.
    preprocessor : callable or None, default=None
        Maps one document (str) to its tokens; ``dptm.text.TextPreprocessor()`` when None.
        Documents given as token lists are used as they are.
    reference_documents : list of str or list of list of str, optional
        A public reference corpus; sanitized over the private vocabulary and passed as
        ``reference_X`` to a model stage that takes it (TopicDP's sensitivity sampling on
        public data).
    random_state : None, int, SeedSequence or numpy.random.Generator
        None (default): every stage draws from the secret generator (the stages' own
        ``random_state`` is replaced by None). Anything else is a labelled test mode: each
        stage gets a seed drawn from it (``SeededPrivacyWarning``).
    verbose : int, default=0
        >= 1: one line per stage on the ``"dptm"`` logger (the size of the released
        vocabulary, then the model stage); the stages themselves are silent.

    Attributes
    ----------
    vocabulary_ : ndarray of str (V,)
        The released vocabulary (sorted), the columns of ``topic_word_``.
    topic_word_ : ndarray (K, V)
        The released topics.
    components_ : ndarray (K, V)
        The model's released components.
    vocabulary_stage_ : DPVocabulary
        The fitted vocabulary stage.
    model_ : estimator
        The fitted topic-model stage (its own ``privacy_`` is the stage-2 report).
    privacy_ : dptm.accounting.PrivacyReport
        Basic composition of the two stages: (eps1 + eps2, delta1 + delta2).

    Privacy
    -------
    Both stages protect the same unit, and the guarantee is (eps1 + eps2, delta1 + delta2)
    at that unit (basic adaptive composition, Manzonelli et al. 2024 Theorem 4.1):

    * ``groups=None``: documents (every document is its own user, the setting of
      Manzonelli et al. 2024); the model stage is document-level (``PrivateBatchLDA``,
      VIPS) or user-level (then each document is a user).
    * ``groups`` given: users (add or remove one user with all their documents). The
      vocabulary counts at most ``max_contribution`` distinct words per user and the model
      stage must be user-level: ``PrivateBatchLDA`` (whose fit takes ``groups``) or
      TopicDP. A model stage without a user-level guarantee (``PrivateOnlineLDA``, a
      word-level model, any estimator whose fit takes no ``groups``) is refused with a
      ValueError before any budget is spent: a user with n documents would get n times
      its epsilon. A model whose report turns out not to be user-level is refused after
      its fit and both stages' fits are discarded.

    Preprocessing and sanitization are per-document maps (stable functions,
    Manzonelli et al. 2024 App. F): adding a user adds their documents' rows, and nothing
    else changes.

    Word-level models are refused: their proof takes the number of tokens and every
    document's length as public, and on a sanitized corpus a replaced word becomes a
    deleted token whenever exactly one of the two words is in the private vocabulary, so
    neither is public (and an unclipped model's C = N would print it). Document-level
    models that take the number of documents as public are refused too (it changes under
    add/remove adjacency): ``PrivateOnlineLDA`` must use Poisson sampling, planned with a
    declared ``total_samples``.

    eps2 is the model's own sound epsilon at its target delta (``model_.privacy_``). With a
    TopicDP model the whole guarantee is (epsilon, delta, gamma)-random DP and the report
    carries gamma. Released: ``topic_word_`` and ``vocabulary_``.

    Examples
    --------
    >>> from dptm import FullyPrivateTopicModel, DPVocabulary
    >>> from dptm.models.svi import PrivateOnlineLDA
    >>> docs = ["storm flood rain warning", "election vote poll", "flood rain river"] * 300
    >>> fdptm = FullyPrivateTopicModel(
    ...     DPVocabulary(target_epsilon=3, max_contribution=10, alpha=10.0),
    ...     PrivateOnlineLDA(n_components=2, max_doc_length=10, total_samples=1000,
    ...                      target_epsilon=3, target_delta=1e-5)).fit(docs)
    >>> {"flood", "rain", "vote", "poll"} <= set(fdptm.vocabulary_.tolist())  # DP-selected
    True
    """

    # no transform seed of its own: ``release().transform`` uses the model stage's
    _TRANSFORM_SEED = None

    def __init__(self, vocabulary=None, model=None, *, preprocessor=None,
                 reference_documents=None, random_state=None, verbose=0):
        self.vocabulary = vocabulary
        self.model = model
        self.preprocessor = preprocessor
        self.reference_documents = reference_documents
        self.random_state = random_state
        self.verbose = verbose

    # -- helpers ---------------------------------------------------------------------
    def _tokens(self, documents, name="documents"):
        import scipy.sparse as sp
        if isinstance(documents, (str, bytes)):
            raise TypeError(f"{name} must be a list of documents (str or token lists), not a "
                            "single string")
        if sp.issparse(documents) or isinstance(documents, np.ndarray) \
                or hasattr(documents, "iloc"):
            raise TypeError(f"{name} must be a list of texts (str) or token lists (list of str), "
                            f"got {type(documents).__name__}: a document-term matrix is not a "
                            "token list")
        documents = list(documents)
        if not documents:
            raise ValueError(f"{name} is an empty corpus: it has 0 documents")
        pre = self.preprocessor if self.preprocessor is not None else TextPreprocessor()
        if not callable(pre):
            raise TypeError(f"preprocessor must be callable, got {type(pre).__name__}")
        out = []
        for i, doc in enumerate(documents):
            if isinstance(doc, (str, bytes)):
                out.append(list(pre(doc)))
            elif isinstance(doc, (list, tuple)):
                out.append(_check_token_lists([doc], name=f"{name}[{i}]")[0])
            else:
                raise TypeError(f"{name}[{i}] must be a str or a list of str tokens, got "
                                f"{type(doc).__name__}")
        return out

    def _check_stages(self):
        vocab = self.vocabulary if self.vocabulary is not None else DPVocabulary(
            target_epsilon=3.0, target_delta=1e-5, alpha=3.0)
        if not isinstance(vocab, DPVocabulary):
            raise TypeError(f"vocabulary must be a DPVocabulary, got {type(vocab).__name__}")
        model = self.model if self.model is not None else _default_model()
        if not hasattr(model, "fit") or not hasattr(model, "get_params"):
            raise TypeError("model must be a scikit-learn style private topic model, got "
                            f"{type(model).__name__}")
        _refuse_word_level(model)
        for name in ("init_topics", "word_counts"):
            # per column of a vocabulary not selected yet: they cannot line up with it
            if getattr(model, name, None) is not None:
                raise ValueError(f"model.{name} is given per vocabulary word, but the "
                                 "vocabulary is selected privately by the first stage: fit "
                                 f"the model without {name} (or fit it alone on a public "
                                 "vocabulary)")
        return vocab, model

    # -- fit -------------------------------------------------------------------------
    def fit(self, documents, groups=None, *, users=None):
        """Select the vocabulary privately, sanitize, fit the private topic model.

        Parameters
        ----------
        documents : list of str or list of list of str
            Raw texts (preprocessed with ``preprocessor``) or token lists.
        groups : array-like of shape (n_docs,), optional
            Author of each document (any hashable ids): user-level privacy for both stages
            (the vocabulary selected at user level, ``groups`` passed to the model stage,
            which must be user-level). None: document-level.
        users : deprecated name of ``groups``.

        Returns
        -------
        self
        """
        from ._utils import groups_argument
        users = groups_argument(groups, users, "FullyPrivateTopicModel")
        vocab, model = self._check_stages()
        tokens = self._tokens(documents)
        if users is not None:
            from .models.user_contributions import check_groups, user_id_array
            users = user_id_array(users)
            check_groups(users, len(tokens))        # the errors, before any budget is spent
            _refuse_without_user_level(model)
        return self._run_private(self._stages, tokens, users, vocab, model)

    def _stages(self, fit, tokens, users, vocab, model):
        """The two stages, clones of ``vocab`` and ``model`` each with its own secret
        generator (test mode: seeded from ``fit.generator``); the fitted attributes."""
        gen, seeded = fit.generator, fit.seeded
        # stage 1: M1(PRE(D))
        vocabulary_stage = _seed(vocab, gen, seeded).fit(tokens, users)
        words = vocabulary_stage.vocabulary_
        if words.size == 0:
            raise ValueError(
                "the private vocabulary is empty: no word passed the DP set-union threshold "
                f"(rho={vocabulary_stage.threshold_:.3g}); raise the vocabulary stage's "
                "target_epsilon or use more data")
        # the released vocabulary's size: part of the release
        self._log("stage 1 (%s): private vocabulary of %d word%s", type(vocab).__name__,
                  words.size, "" if words.size == 1 else "s")
        K = getattr(model, "n_components", None)
        if isinstance(K, int) and words.size < 10 * K:
            # the released vocabulary's size is public: the warning is post-processing
            import warnings
            from .exceptions import UtilityWarning, user_stacklevel
            warnings.warn(f"the DP vocabulary has only {words.size} words, fewer than 10 x K = "
                          f"{10 * K}: topics over so few words are of little use. Give more "
                          "users or documents, more of the budget to the vocabulary stage, "
                          "fewer topics, or a public word list (PrivateBatchLDA on counts over "
                          "it)", UtilityWarning, stacklevel=user_stacklevel())

        # SAN(PRE(D), S): a per-document map; empty documents are kept (one document in,
        # one row out, so an added document is an added row for the model stage)
        X, _ = tokens_to_matrix(tokens, vocabulary=words)

        # stage 2: M2(SAN(PRE(D), S))
        stage = _seed(model, gen, seeded)
        if self.reference_documents is not None:
            if "reference_X" not in stage.get_params(deep=False):
                raise ValueError("reference_documents is for a model stage with a reference_X "
                                 f"parameter (TopicDP); {type(model).__name__} has none")
            R, _ = tokens_to_matrix(self._tokens(self.reference_documents, "reference_documents"),
                                    vocabulary=words)
            stage.set_params(reference_X=R)
        self._log("stage 2: fitting %s on the sanitized corpus", type(model).__name__)
        params = inspect.signature(stage.fit).parameters
        if "groups" in params:
            stage.fit(X, groups=users)
        else:
            stage.fit(X)
        report = getattr(stage, "privacy_", None)
        if not isinstance(report, PrivacyReport):
            raise ValueError(f"model {type(model).__name__} set no privacy_ report after fit: "
                             "FDPTM needs a differentially private topic model")
        if report.adjacency not in ("document", "user") or (
                users is not None and report.adjacency != "user"):
            # after the fit, for a model whose adjacency is only known from its report: both
            # stages' releases are discarded (the failed fit leaves this object unfitted)
            if users is not None:
                raise ValueError(
                    f"groups were given (user-level privacy), but model {type(model).__name__} "
                    f"reported {report.adjacency!r} adjacency after its fit: FDPTM with groups "
                    f"needs {_USER_LEVEL}")
            raise ValueError(
                f"model {type(model).__name__} is private under {report.adjacency!r} adjacency; "
                "FDPTM needs a central DP model at document or user level "
                f"(Manzonelli et al. 2024 Sec. 4.3): {_ALLOWED}")
        topic_word = np.asarray(stage.topic_word_, dtype=np.float64)
        return {"_seeded": seeded, "vocabulary_stage_": vocabulary_stage, "model_": stage,
                "vocabulary_": words,
                "components_": np.asarray(stage.components_, dtype=np.float64),
                "topic_word_": topic_word, "n_components_": topic_word.shape[0],
                "privacy_": self._compose(vocabulary_stage.privacy_, report, stage,
                                          topic_word.shape, users is None, seeded)}

    @staticmethod
    def _model_delta(stage, report):
        d = getattr(stage, "target_delta", None)
        if d is None:
            d = report.default_delta
        return float(d)

    def _compose(self, vreport, mreport, stage, shape, per_document, seeded):
        """The composed report of the vocabulary stage and the model ``stage`` (its
        released topics of ``shape``, K x V)."""
        K, V = shape
        delta1 = float(vreport.default_delta)
        eps1 = float(vreport.epsilon(delta1))
        delta2 = self._model_delta(stage, mreport)
        eps2 = float(mreport.epsilon(delta2))
        notes = []
        if per_document:
            adjacency = "document"
            notes.append("no user ids given: every document is its own user, so both stages are "
                         "document-level (user-level if each document has a distinct author)")
        else:
            # fit refused every other case: both stages protect a user with all their documents
            adjacency = "user"
            notes.append("groups given: both stages are user-level (add or remove one user "
                         "with all their documents); the vocabulary counts at most "
                         "max_contribution distinct words per user")
        v_event = ApproxDPEvent(eps1, delta1, label=f"stage 1: DP vocabulary ({adjacency}-level)")
        m_event = ApproxDPEvent(eps2, delta2, label=f"stage 2: {type(stage).__name__} "
                                f"(its sound epsilon at delta={delta2:.3g})")
        total_delta = v_event.delta + delta2
        notes.append("basic (adaptive) composition of the two stages (Manzonelli et al. 2024 "
                     "Theorem 4.1)")
        notes.append("preprocessing and sanitization are per-document maps; empty documents "
                     "after sanitization are kept")
        # Every caveat of the stages is kept: their notes, their descriptions (paper modes),
        # random DP, test mode and what they assume public.
        notes.append(f"stage 1 release: {vreport.description}")
        # (the vocabulary's own "no user ids" note repeats the adjacency note above)
        notes.extend(f"stage 1: {n}" for n in vreport.notes
                     if not n.startswith("no user ids given"))
        notes.append(f"stage 2 release: {mreport.description}")
        notes.extend(f"stage 2: {n}" for n in mreport.notes)
        gamma = mreport.gamma
        if gamma is not None:
            notes.append("the model stage is only (epsilon, delta, gamma)-random DP: the whole "
                         "release is random DP, not DP")
        caveat = ""
        if "PAPER MODE" in mreport.description or "NOT DP" in mreport.description:
            caveat = "PAPER MODE, NOT DP (see stage 2): "
        elif any("NOT covered" in n for n in mreport.notes):
            caveat = "partly unprotected (see the notes on what is NOT covered): "
        public = list(dict.fromkeys(a for a in (*vreport.assumed_public, *mreport.assumed_public)
                                    if not a.startswith("vocabulary")))
        seeded = bool(seeded or vreport.seeded or mreport.seeded)
        return PrivacyReport(
            ComposedEvent((v_event, m_event)), adjacency,
            description=(f"FDPTM: {caveat}vocabulary of {V} word{'' if V == 1 else 's'} and a "
                         f"{K} x {V} topic-word "
                         "matrix"),
            notes=notes, gamma=gamma, default_delta=min(total_delta, 0.5), seeded=seeded,
            assumed_public=public, vocabulary=vreport.vocabulary)

    def release(self):
        """What to publish: a :class:`dptm.Release` with the topics over the DP-selected
        vocabulary, the composed report (provenance "DP-selected (...)") and the public
        hyperparameters. The fitted pipeline holds the private corpus's fits: not for
        publication."""
        from ._random import public_seed
        from .release import Release, public_params
        check_is_fitted(self, "vocabulary_")
        prior = getattr(self.model_, "doc_topic_prior_", None)
        if prior is None:
            p = self.model_.get_params(deep=False).get("doc_topic_prior")
            prior = p if p is not None else 1.0 / self.n_components_
        seed = getattr(self.model_, "transform_seed_", None)
        if seed is None:
            seed = public_seed(None, False)
        max_iter = getattr(self.model_, "transform_max_iter", 50)
        return Release(self.topic_word_, components=self.components_, doc_topic_prior=prior,
                       privacy=self.privacy_, vocabulary=list(self.vocabulary_),
                       model=f"FullyPrivateTopicModel({type(self.model_).__name__})",
                       hyperparameters=public_params(self.get_params(deep=False)),
                       transform_seed=int(seed) % (1 << 63),
                       transform_max_iter=max_iter if isinstance(max_iter, int) else 50)

    # -- use -------------------------------------------------------------------------
    def sanitize(self, documents):
        """Document-term matrix of ``documents`` over the private vocabulary."""
        check_is_fitted(self, "vocabulary_")
        X, _ = tokens_to_matrix(self._tokens(documents), vocabulary=self.vocabulary_)
        return X

    def transform(self, documents):
        """Document-topic proportions of ``documents`` under the released model."""
        return self.model_.transform(self.sanitize(documents))

    def get_feature_names_out(self, input_features=None):
        check_is_fitted(self, "vocabulary_")
        return self.vocabulary_.astype(object)
