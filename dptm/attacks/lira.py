"""The likelihood-ratio attack (LiRA, Carlini et al. 2022) on topic models, as adapted by
Manzonelli et al. 2024 (Section 3, App. A-B), and the global-threshold attacks of Huang et
al. (2022) it is compared with.
"""
import copy
import io
import json
import numbers
import time

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone

from .. import _progress
from .._utils import check_count_matrix, check_int, check_random_state, spawn_generators
from .evaluation import attack_summary
from .statistics import (_check_statistics, compute_statistics, get_topic_word,
                         negative_entropy, topic_std, zeta)

__all__ = ["LiRA", "global_threshold_scores", "audit", "AuditResult", "shadow_splits",
           "set_random_state"]

_VAR_FLOOR = 1e-12


def set_random_state(estimator, seed):
    """Set every ``random_state`` parameter of ``estimator`` (nested ones of a Pipeline
    included) to ``seed``, in place; returns the estimator."""
    params = estimator.get_params(deep=True)
    keys = {k: seed for k in params if k == "random_state" or k.endswith("__random_state")}
    if keys:
        estimator.set_params(**keys)
    return estimator


def shadow_splits(n_docs, n_shadows, rng):
    """Membership of every document in each shadow model: complementary random halves.

    Shadows ``2i`` and ``2i + 1`` train on a uniformly random half of the documents and on
    its complement, so every document is IN exactly ``n_shadows / 2`` shadows.

    Returns
    -------
    ndarray of bool, shape (n_shadows, n_docs)
    """
    in_mask = np.zeros((n_shadows, n_docs), dtype=bool)
    for i in range(n_shadows // 2):
        half = rng.permutation(n_docs)[: n_docs // 2]
        in_mask[2 * i, half] = True
        in_mask[2 * i + 1] = ~in_mask[2 * i]
    return in_mask


def _fit_shadow(trainer, X, rows, seed, statistics, tol, max_iter):
    """Train one shadow on ``X[rows]`` and return its statistics on every row of ``X``
    (the model itself is dropped: memory per shadow is O(n_docs))."""
    # a shadow is nested in the audit (maybe in another process): it reports nothing
    est = set_random_state(_progress.silenced(clone(trainer)), seed)
    start = time.perf_counter()
    est.fit(X[rows])
    t_fit = time.perf_counter() - start
    # an audit keeps going on a document the solver could not certify (a RuntimeWarning
    # states the duality gap); zeta itself raises by default
    stats = compute_statistics(get_topic_word(est), X, statistics, tol=tol, max_iter=max_iter,
                               uncertified="warn")
    return stats, t_fit, time.perf_counter() - start - t_fit


def _gauss_params(stats, mask, per_example, ddof=1):
    """Means (D, S) and covariances (D, S, S) of ``stats`` (N, D, S) over the shadows where
    ``mask`` (N, D) holds, per document; ``per_example=False`` replaces every document's
    covariance by the mean covariance (the 'global variance' of Carlini et al.)."""
    m = mask[:, :, None].astype(np.float64)
    n = m.sum(axis=0)  # (D, 1)
    if np.any(n[:, 0] < 1 + ddof):
        raise ValueError("each document needs at least 2 shadow models on this side; "
                         "use more shadow models")
    mu = (stats * m).sum(axis=0) / n
    dev = (stats - mu[None]) * m
    cov = np.einsum("nds,ndt->dst", dev, dev) / (n[:, :, None] - ddof)
    if not per_example:
        cov = np.broadcast_to(cov.mean(axis=0), cov.shape).copy()
    return mu, cov


def _regularise(cov, diag_only):
    S = cov.shape[-1]
    if diag_only:
        cov = cov * np.eye(S)[None]
    scale = np.abs(np.diagonal(cov, axis1=1, axis2=2)).mean()
    ridge = _VAR_FLOOR * (1.0 + scale)
    return cov + ridge * np.eye(S)[None]


def _gauss_logpdf(x, mu, cov):
    """log N(x[d]; mu[d], cov[d]) for every document d."""
    S = x.shape[1]
    diff = x - mu
    sol = np.linalg.solve(cov, diff[:, :, None])[:, :, 0]
    _, logdet = np.linalg.slogdet(cov)
    return -0.5 * (np.einsum("ds,ds->d", diff, sol) + logdet + S * np.log(2 * np.pi))


class LiRA:
    """Likelihood-ratio membership-inference attack on a topic model (Manzonelli et al. 2024).

    ``fit`` trains ``n_shadows`` shadow topic models with ``trainer`` on complementary random
    halves of the candidate documents ``X`` (each document is in exactly half of them) and
    keeps only each shadow's query statistics on every document, so memory is
    O(n_shadows x n_docs). ``observe`` computes the same statistics on the target model's
    released topic-word matrix. Scores:

    * online (App. A): ``log p(T_obs | N_in(d)) - log p(T_obs | N_out(d))`` with Gaussians
      (multivariate for several statistics) fitted to the shadows that did / did not see d;
    * offline (App. B): one-sided test against ``N_out(d)`` only; the score is the
      standardised distance ``(T_obs - mu_out) / sigma_out``, a monotone transform of the
      paper's ``Lambda = 1 - Pr[N_out > T_obs]`` that does not saturate at 1. With several
      statistics it is ``1' R^-1 z / sqrt(1' R^-1 1)`` (z the standardised statistics, R their
      correlation under N_out), the most powerful one-sided test of a common standardised
      mean shift.

    Both are oriented so that members score higher (every statistic increases with
    membership; Manzonelli et al. 2024 App. C).

    Parameters
    ----------
    trainer : estimator
        Unfitted estimator with ``fit(X)`` exposing a topic-word matrix after fitting
        (``topic_word_`` or ``components_``; a Pipeline ending in one works). Cloned for every
        shadow; each clone gets its own seed, drawn from ``random_state`` by shadow index.
    n_shadows : int, default=128
        Number of shadow models N (even; each document is IN N/2 of them).
    statistics : str or sequence of str, default=("zeta",)
        Query statistics: "zeta", "neg_entropy", "std", "logit_max"
        (see ``dptm.attacks.compute_statistics``). Several are modelled jointly.
    variance : {"per_example", "global"}, default="per_example"
        Per-document (co)variances, or one pooled (co)variance for all documents.
    covariance : {"full", "diag"}, default="full"
        Covariance model for several statistics ("diag" is the authors' code's choice).
    n_jobs : int or None, default=None
        Shadow models trained in parallel with joblib; any joblib backend (loky, threading,
        dask, ray) can be selected with ``backend`` or ``joblib.parallel_config``.
    backend : str or None, default=None
        joblib backend name; None uses joblib's current default.
    random_state : None, int, SeedSequence or numpy.random.Generator
        Seeds the shadow splits and each shadow's training. Results do not depend on
        ``n_jobs`` or the backend.
    verbose : int, default=0
        1 logs a line per finished shadow model on the ``"dptm"`` logger (a stderr
        handler is attached for the fit if the application configured none); the shadow
        models themselves are silent.
    tol, max_iter : float, int
        Tolerance and iteration cap of the zeta optimisation.

    Attributes
    ----------
    in_mask_ : ndarray of bool (n_shadows, n_docs)
        Whether document d was in shadow model n.
    shadow_stats_ : ndarray (n_shadows, n_docs, n_statistics)
        Query statistics of every document under every shadow model.
    target_stats_ : ndarray (n_docs, n_statistics)
        Statistics under the target model (after ``observe``).
    statistics_ : tuple of str
    fit_time_, stats_time_ : ndarray (n_shadows,)
        Seconds spent training each shadow and computing its statistics.

    Privacy
    -------
    An audit, not a mechanism: it measures empirically how much a released topic-word
    matrix reveals about document membership (document adjacency: one document added or
    removed). It reads only the released topic-word matrix of the target. Its TPR at low
    FPR, and ``dptm.attacks.empirical_epsilon``, lower-bound the true privacy loss; they
    never certify privacy.

    Examples
    --------
    >>> from dptm import GibbsLDA
    >>> from dptm.attacks import LiRA
    >>> from dptm.datasets import make_lda_corpus
    >>> X, _, _ = make_lda_corpus(60, 40, 3, doc_length=20, random_state=0)
    >>> target = GibbsLDA(3, max_iter=20, random_state=1).fit(X[:30])
    >>> lira = LiRA(GibbsLDA(3, max_iter=20), n_shadows=8, random_state=0).fit(X, target)
    >>> lira.online_scores().shape
    (60,)
    """

    def __init__(self, trainer, *, n_shadows=128, statistics=("zeta",), variance="per_example",
                 covariance="full", n_jobs=None, backend=None, random_state=None, verbose=0,
                 tol=1e-10, max_iter=10000):
        self.trainer = trainer
        self.n_shadows = n_shadows
        self.statistics = statistics
        self.variance = variance
        self.covariance = covariance
        self.n_jobs = n_jobs
        self.backend = backend
        self.random_state = random_state
        self.verbose = verbose
        self.tol = tol
        self.max_iter = max_iter

    # ------------------------------------------------------------------ fitting
    def _check_params(self):
        n = check_int(self.n_shadows, "n_shadows", minimum=2)
        if n % 2:
            raise ValueError(f"n_shadows must be even (complementary pairs), got {n}")
        self.statistics_ = _check_statistics(self.statistics)
        self._check_score_options(self.variance, self.covariance)
        if not hasattr(self.trainer, "fit") or not hasattr(self.trainer, "get_params"):
            raise TypeError("trainer must be a scikit-learn style estimator with fit and "
                            f"get_params, got {type(self.trainer).__name__}")
        return n

    @staticmethod
    def _check_score_options(variance, covariance):
        if variance not in ("per_example", "global"):
            raise ValueError(f"variance must be 'per_example' or 'global', got {variance!r}")
        if covariance not in ("full", "diag"):
            raise ValueError(f"covariance must be 'full' or 'diag', got {covariance!r}")

    def fit(self, X, target=None, y=None):
        """Train the shadow models on halves of ``X`` and record their statistics.

        Parameters
        ----------
        X : {array-like, sparse matrix} (n_docs, V)
            Candidate documents (the shadow pool), encoded in the target's vocabulary.
        target : fitted topic model or array (K, V), optional
            If given, ``observe(target)`` is called.
        """
        from joblib import Parallel, delayed

        N = self._check_params()
        X = check_count_matrix(X, name="X")
        D = X.shape[0]
        if D < 2:
            raise ValueError(f"X must hold at least 2 documents, got {D}")
        rng = check_random_state(self.random_state)
        split_rng, seed_rng = spawn_generators(rng, 2)
        self.in_mask_ = shadow_splits(D, N, split_rng)
        seeds = [int(g.integers(2**32 - 1)) for g in spawn_generators(seed_rng, N)]
        self.shadow_seeds_ = np.array(seeds, dtype=np.int64)
        self.X_ = X
        S = len(self.statistics_)
        self.shadow_stats_ = np.empty((N, D, S), dtype=np.float64)
        self.fit_time_ = np.zeros(N)
        self.stats_time_ = np.zeros(N)
        start = time.perf_counter()
        tasks = (delayed(_fit_shadow)(self.trainer, X, np.flatnonzero(self.in_mask_[i]),
                                      seeds[i], self.statistics_, self.tol, self.max_iter)
                 for i in range(N))
        parallel = Parallel(n_jobs=self.n_jobs, backend=self.backend, return_as="generator")
        with _progress.fit_scope(self):
            for i, (stats, t_fit, t_stats) in enumerate(parallel(tasks)):
                self.shadow_stats_[i] = stats
                self.fit_time_[i], self.stats_time_[i] = t_fit, t_stats
                _progress.update_bar(self, i + 1, N)
                # an audit runs on data the auditor holds: timings are not a leak here
                _progress.log(self, "shadow model %d/%d done, %.1f s elapsed", i + 1, N,
                              time.perf_counter() - start)
        if target is not None:
            self.observe(target)
        return self

    def observe(self, target, X=None):
        """Compute the statistics of the candidate documents under the target model.

        Parameters
        ----------
        target : fitted topic model or array (K, V)
            The released topic-word matrix to attack.
        X : optional
            The documents; defaults to the ``X`` given to ``fit`` (scores need the same
            documents the shadows were evaluated on).
        """
        self._check_fitted()
        X = self.X_ if X is None else check_count_matrix(X, name="X")
        if X.shape[0] != self.shadow_stats_.shape[1]:
            raise ValueError(f"X has {X.shape[0]} documents but the shadows were evaluated on "
                             f"{self.shadow_stats_.shape[1]}")
        self.target_stats_ = compute_statistics(get_topic_word(target), X, self.statistics_,
                                                tol=self.tol, max_iter=self.max_iter,
                                                uncertified="warn")
        return self

    def _check_fitted(self, need_target=False):
        if not hasattr(self, "shadow_stats_"):
            raise AttributeError("this LiRA is not fitted yet; call fit(X, target) first")
        if need_target and getattr(self, "target_stats_", None) is None:
            raise AttributeError("no target observed yet; call observe(target) first")

    # ------------------------------------------------------------------ scores
    def online_scores(self, variance=None, covariance=None):
        """Online LiRA scores (log likelihood ratio in/out), one per document; higher means
        more likely a member."""
        self._check_fitted(need_target=True)
        variance = self.variance if variance is None else variance
        covariance = self.covariance if covariance is None else covariance
        self._check_score_options(variance, covariance)
        per_ex = variance == "per_example"
        diag = covariance == "diag"
        mu_in, cov_in = _gauss_params(self.shadow_stats_, self.in_mask_, per_ex)
        mu_out, cov_out = _gauss_params(self.shadow_stats_, ~self.in_mask_, per_ex)
        x = self.target_stats_
        return (_gauss_logpdf(x, mu_in, _regularise(cov_in, diag))
                - _gauss_logpdf(x, mu_out, _regularise(cov_out, diag)))

    def offline_scores(self, variance=None, covariance=None):
        """Offline LiRA scores (one-sided test against the out distribution), one per
        document; higher means more likely a member. Uses only the shadows that did NOT see
        each document, so it applies to documents outside the shadows' pool too."""
        self._check_fitted(need_target=True)
        variance = self.variance if variance is None else variance
        covariance = self.covariance if covariance is None else covariance
        self._check_score_options(variance, covariance)
        mu, cov = _gauss_params(self.shadow_stats_, ~self.in_mask_, variance == "per_example")
        cov = _regularise(cov, covariance == "diag")
        sd = np.sqrt(np.diagonal(cov, axis1=1, axis2=2))
        z = (self.target_stats_ - mu) / sd
        if z.shape[1] == 1:
            return z[:, 0]
        corr = cov / (sd[:, :, None] * sd[:, None, :])
        ones = np.ones(z.shape[:2])
        w = np.linalg.solve(corr, ones[:, :, None])[:, :, 0]  # R^-1 1
        return np.einsum("ds,ds->d", w, z) / np.sqrt(np.einsum("ds,ds->d", w, ones))

    def scores(self, method="online", **kwargs):
        """``online_scores`` or ``offline_scores`` by name."""
        if method == "online":
            return self.online_scores(**kwargs)
        if method == "offline":
            return self.offline_scores(**kwargs)
        raise ValueError(f"method must be 'online' or 'offline', got {method!r}")

    def leave_one_out(self, method="offline", **kwargs):
        """Every shadow model in turn attacked as the target by the other shadows.

        The evaluation of Carlini et al. (2022): ``n_shadows`` more targets from the fits
        already made, so TPR at a low FPR rests on ``n_shadows`` times more members and
        non-members than one target gives (one target of 3,000 documents puts its 0.1%
        threshold at the second highest of 1,500 non-member scores).

        Parameters
        ----------
        method : {"online", "offline"}, default="offline"
        **kwargs
            ``variance`` / ``covariance``, as in :meth:`online_scores`.

        Returns
        -------
        scores : ndarray (n_shadows, n_docs)
            Row i: every document's score against shadow i, from the other shadows.
        labels : ndarray of bool (n_shadows, n_docs)
            ``in_mask_``: whether the document trained shadow i.
        """
        self._check_fitted()
        if method not in ("online", "offline"):
            raise ValueError(f"method must be 'online' or 'offline', got {method!r}")
        N = self.in_mask_.shape[0]
        out = np.empty(self.in_mask_.shape)
        for i in range(N):
            others = copy.copy(self)
            keep = np.arange(N) != i
            others.shadow_stats_, others.in_mask_ = self.shadow_stats_[keep], self.in_mask_[keep]
            others.target_stats_ = self.shadow_stats_[i]
            out[i] = others.scores(method, **kwargs)
        return out, self.in_mask_.copy()

    def evaluate(self, labels, fprs=(0.001, 0.01), delta=0.0, confidence=0.95):
        """Attack metrics (TPR at ``fprs``, AUC, empirical epsilon) of the online and
        offline scores against the true membership ``labels`` (1 = member of the target)."""
        return {m: attack_summary(labels, self.scores(m), fprs, delta, confidence)
                for m in ("online", "offline")}

    # ------------------------------------------------------------------ persistence
    _ARRAYS = ("in_mask_", "shadow_stats_", "target_stats_", "shadow_seeds_", "fit_time_",
               "stats_time_")

    def save(self, path):
        """Save the attack's results (shadow statistics, membership of each shadow, target
        statistics, the documents and the parameters; not the trainer) to an ``.npz`` file."""
        self._check_fitted()
        params = {k: v for k, v in self.get_params().items() if k not in ("trainer",)}
        params["statistics"] = list(self.statistics_)
        if not isinstance(params["random_state"], (numbers.Integral, type(None))):
            params["random_state"] = repr(params["random_state"])
        params["trainer"] = repr(self.trainer)
        arrays = {k: getattr(self, k) for k in self._ARRAYS if getattr(self, k, None) is not None}
        np.savez_compressed(path, params=np.array(json.dumps(params)),
                            X_data=self.X_.data, X_indices=self.X_.indices,
                            X_indptr=self.X_.indptr, X_shape=np.array(self.X_.shape), **arrays)

    @classmethod
    def load(cls, path):
        """Reload a LiRA saved with :meth:`save`; scores can be recomputed and new targets
        observed (the trainer is not restored: ``trainer`` is None)."""
        with np.load(path, allow_pickle=False) as f:
            params = json.loads(str(f["params"]))
            trainer_repr = params.pop("trainer")
            stats = params.pop("statistics")
            params["statistics"] = tuple(stats)
            params["random_state"] = params["random_state"] if not isinstance(
                params["random_state"], str) else None
            obj = cls(None, **params)
            obj.trainer_repr_ = trainer_repr
            obj.statistics_ = tuple(stats)
            for k in cls._ARRAYS:
                setattr(obj, k, f[k] if k in f.files else None)
            obj.X_ = sp.csr_matrix((f["X_data"], f["X_indices"], f["X_indptr"]),
                                   shape=tuple(f["X_shape"]))
        return obj

    def get_params(self, deep=False):
        return {k: getattr(self, k) for k in (
            "trainer", "n_shadows", "statistics", "variance", "covariance", "n_jobs", "backend",
            "random_state", "verbose", "tol", "max_iter")}


def global_threshold_scores(target, X, theta=None, tol=1e-10, max_iter=10000):
    """The global-threshold attacks of Huang et al. (2022) as baselines.

    Each document's topic distribution theta-hat under the target model is summarised by
    its maximum, standard deviation and negative entropy; each summary is thresholded
    directly (one threshold for all documents). Members tend to have more concentrated
    theta-hat, so all three are oriented to be higher for members.

    Parameters
    ----------
    target : fitted topic model or array (K, V)
    X : (n_docs, V) counts in the target's vocabulary
    theta : array (n_docs, K), optional
        theta-hat to use (e.g. ``target.transform(X)``, Huang et al.'s sampling estimate);
        default: the zeta maximiser (Manzonelli et al. 2024 App. C).

    Returns
    -------
    dict name -> ndarray (n_docs,) with names "max_posterior", "std", "neg_entropy".
    """
    if theta is None:
        _, theta = zeta(target, X, tol=tol, max_iter=max_iter, return_theta=True)
    theta = np.asarray(theta, dtype=np.float64)
    return {"max_posterior": theta.max(axis=1), "std": topic_std(theta),
            "neg_entropy": negative_entropy(theta)}


class AuditResult:
    """Outcome of :func:`audit`: membership truth, attack scores and their metrics."""

    def __init__(self, labels, scores, lira, target, vocabulary_mask, fprs=(0.001, 0.01),
                 delta=0.0, confidence=0.95):
        self.labels = labels
        self.scores = scores
        self.lira = lira
        self.target = target
        self.vocabulary_mask = vocabulary_mask
        self.fprs = tuple(fprs)
        self.delta = delta
        self.confidence = confidence

    def metrics(self):
        """dict attack name -> dict of TPR at each FPR, AUC and empirical epsilon."""
        return {name: attack_summary(self.labels, s, self.fprs, self.delta, self.confidence)
                for name, s in self.scores.items()}

    def summary(self):
        """A plain-text table of the metrics of every attack."""
        rows = self.metrics()
        cols = [f"TPR@{100 * f:g}%FPR" for f in self.fprs] + ["AUC", "eps_lb"]
        width = max(len(n) for n in rows) + 2
        buf = io.StringIO()
        buf.write("attack".ljust(width) + "".join(c.rjust(13) for c in cols) + "\n")
        for name, m in rows.items():
            vals = [m[f"tpr@{f:g}"] for f in self.fprs]
            cells = [f"{100 * v:.2f}%" for v in vals] + [f"{m['auc']:.4f}", f"{m['eps_lb']:.3f}"]
            buf.write(name.ljust(width) + "".join(c.rjust(13) for c in cells) + "\n")
        n_in = int(self.labels.sum())
        buf.write(f"({len(self.labels)} documents, {n_in} members; {self.lira.n_shadows} shadow "
                  f"models; eps_lb: Clopper-Pearson at {self.confidence:g} confidence, "
                  f"delta={self.delta:g})\n")
        return buf.getvalue()

    def __str__(self):
        return self.summary()

    def plot(self, ax=None, attacks=None, **kwargs):
        """Log-log ROC curves of the attacks (Manzonelli et al. 2024 Fig. 2): every attack,
        or the names in ``attacks``. Needs matplotlib (``dptm[plot]``); returns the Axes."""
        from .evaluation import plot_roc
        names = list(self.scores) if attacks is None else list(attacks)
        unknown = [n for n in names if n not in self.scores]
        if unknown:
            raise ValueError(f"attacks {unknown} not in this result; choose from {list(self.scores)}")
        return plot_roc(self.labels, {n: self.scores[n] for n in names}, ax=ax, **kwargs)


class _AuditProgress:
    """Progress owner of :func:`audit`'s target fit (the LiRA that follows reports its
    shadow models itself)."""
    _progress_name = "audit"

    def __init__(self, verbose):
        self.verbose = verbose


def audit(trainer, X, *, n_shadows=128, target_fraction=0.5, statistics=("zeta",),
          restrict_vocabulary=True, target_trainer=None, baselines=True, variance="per_example",
          n_jobs=None, backend=None, random_state=None, verbose=0, fprs=(0.001, 0.01),
          delta=0.0, confidence=0.95):
    """Simulate a membership-inference audit of ``trainer`` on a corpus (the experiment of
    Manzonelli et al. 2024 Section 3.5).

    A target model is trained on a random ``target_fraction`` of the documents; the
    vocabulary is restricted to the words of the target's training documents (as a
    vectorizer fitted on them would), every document is encoded with it, and an online and
    offline LiRA with ``n_shadows`` shadow models is run, next to the global-threshold
    attacks of Huang et al.

    Parameters
    ----------
    trainer : estimator
        Shadow-model trainer (and target trainer unless ``target_trainer`` is given).
    X : (n_docs, V) counts
    n_shadows : int, default=128
    target_fraction : float in (0, 1), default=0.5
    statistics : str or sequence, default=("zeta",)
    restrict_vocabulary : bool, default=True
        Train the target and the shadows over the words the target's half uses (Huang et
        al. 2022); False: every column of ``X``.
    target_trainer : estimator, optional
        A different estimator for the target (e.g. a DP model audited with non-private
        shadows); default ``trainer``.
    baselines : bool, default=True
        Include the Huang et al. global-threshold attacks.
    variance : {"per_example", "global"}
    n_jobs, backend, random_state, verbose : see :class:`LiRA`.
    fprs, delta, confidence : evaluation settings (see ``dptm.attacks.empirical_epsilon``).

    Returns
    -------
    AuditResult
        ``.summary()`` prints the table; ``.scores``, ``.labels``, ``.lira``, ``.target``.
    """
    X = check_count_matrix(X, name="X")
    if not 0 < target_fraction < 1:
        raise ValueError(f"target_fraction must be in (0, 1), got {target_fraction}")
    rng = check_random_state(random_state)
    target_rng, lira_rng = spawn_generators(rng, 2)
    D = X.shape[0]
    n_target = int(np.ceil(D * target_fraction))
    members = np.zeros(D, dtype=bool)
    members[target_rng.permutation(D)[:n_target]] = True
    if restrict_vocabulary:
        for est in (trainer, target_trainer):
            given = [n for n in ("init_topics", "word_counts")
                     if getattr(est, n, None) is not None]
            if given:       # per-word public inputs are over every column of X
                raise ValueError(f"restrict_vocabulary=True drops the columns the target's "
                                 f"half never uses, but the trainer's {' and '.join(given)} "
                                 f"cover all {X.shape[1]} columns of X: pass "
                                 "restrict_vocabulary=False")
        vocab = np.asarray(X[members].sum(axis=0)).ravel() > 0
    else:
        vocab = np.ones(X.shape[1], dtype=bool)
    Xv = X[:, np.flatnonzero(vocab)]
    tgt = set_random_state(clone(target_trainer if target_trainer is not None else trainer),
                           int(target_rng.integers(2**32 - 1)))
    owner = _AuditProgress(verbose)
    with _progress.fit_scope(owner):
        _progress.log(owner, "training the target model on %d of %d documents, %d words",
                      n_target, D, int(vocab.sum()))
        tgt.fit(Xv[members])        # nested: the target model reports nothing
    lira = LiRA(trainer, n_shadows=n_shadows, statistics=statistics, variance=variance,
                n_jobs=n_jobs, backend=backend, random_state=lira_rng, verbose=verbose)
    lira.fit(Xv, tgt)
    name = "+".join(lira.statistics_)
    scores = {f"LiRA online ({name})": lira.online_scores(),
              f"LiRA offline ({name})": lira.offline_scores()}
    if baselines:
        for k, s in global_threshold_scores(tgt, Xv).items():
            scores[f"Huang et al. {k.replace('_', ' ')}"] = s
    return AuditResult(members.astype(np.int64), scores, lira, tgt, vocab, fprs, delta, confidence)
