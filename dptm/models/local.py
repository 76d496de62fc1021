"""Server side of local-DP topic modeling: LP-LDA and its online version OLP-LDA
(Zhao et al. 2021, Sections V and VI).

Clients send randomized word-presence bit vectors (:mod:`dptm.local`). The server never
sees a clean document of theirs; it

1. counts the ones of each word over the noisy vectors, ``n_t``;
2. estimates the true number of documents containing word ``t``: the moment estimator
   ``N_hat_t = (2 n_t - f M) / (2 (1 - f))`` (eq. 8) or, online, the Bayesian estimator
   ``eta_t = omega mu_t + (1 - omega) N_hat_t`` (eq. 19) that shrinks towards a prior mean;
3. reconstructs bit vectors whose column sums match the estimate by switching randomly
   chosen bits of the noisy vectors (Section V-B, Steps 3-5);
4. runs collapsed Gibbs sampling on the reconstruction (online: with the topic-word prior
   ``beta^l = beta^{l-1} + lambda N^{l-1}`` of eq. 10).

Everything after step 1 is post-processing of the clients' randomized responses.

The module-level functions (:func:`moment_estimate`, :func:`moment_variance`,
:func:`bayes_weight`, :func:`bayes_estimate`, :func:`reconstruct`) are the statistical
pieces, usable on their own.

A note on eq. (9). Given the clients' true bits (``N_t`` fixed), ``n_t`` is a sum of
independent Binomial(N_t, 1 - f/2) and Binomial(M - N_t, f/2), so
``Var(N_hat_t | bits) = f (2 - f) M / (4 (1 - f)^2)``, the first term of eq. (9) alone.
The paper's second term ``(M - N_t) N_t / M`` appears when the documents themselves are
drawn i.i.d. with presence probability ``N_t / M`` (then it is the sampling variance of the
true count); :func:`moment_variance` returns either, and the tests check both.
"""
import numbers

import numpy as np
import scipy.sparse as sp

from .. import _cgs
from .._utils import (check_count_matrix, check_int, check_positive, check_probability,
                      check_random_state, spawn_generators)
from ..corpus import Corpus
from .gibbs import GibbsLDA, GibbsState
from ._base import TopicModelMixin, store_params

__all__ = ["LocalDPLDA", "OnlineLocalDPLDA", "moment_estimate", "moment_variance", "bayes_weight",
           "bayes_estimate", "reconstruct", "check_noisy_bits", "flip_for_target_epsilon"]

_NEIGHBOURING = ("document", "word", "word_replacement")


# ---------------------------------------------------------------------------- statistics
def _check_f_open(f, name="f"):
    f = check_probability(f, name, high_open=True)
    return f


def moment_estimate(noisy_counts, n_docs, f):
    """Moment (and unbiased) estimator of the true presence counts, Zhao et al. 2021 eq. (8).

    ``N_hat_t = (2 n_t - f M) / (2 (1 - f))`` with ``n_t`` the number of noisy vectors whose
    bit ``t`` is 1 and ``M = n_docs``. Not clipped: it can be negative or exceed M.
    """
    f = _check_f_open(f)
    M = check_int(n_docs, "n_docs", minimum=1)
    n = np.asarray(noisy_counts, dtype=np.float64)
    return (2.0 * n - f * M) / (2.0 * (1.0 - f))


def moment_variance(true_counts, n_docs, f, conditional=False):
    """Variance of :func:`moment_estimate`, Zhao et al. 2021 eq. (9).

    Parameters
    ----------
    true_counts : array-like
        ``N_t``: documents containing word t (or ``M p_t`` for the i.i.d. model).
    n_docs : int
        M.
    f : float in (0, 1)
    conditional : bool, default=False
        False: eq. (9), ``f (2 - f) M / (4 (1 - f)^2) + (M - N_t) N_t / M`` - the variance
        when each document's bit is i.i.d. Bernoulli(N_t / M). True: the variance given
        the clients' actual bits, ``f (2 - f) M / (4 (1 - f)^2)`` (same for every word).
    """
    f = _check_f_open(f)
    M = check_int(n_docs, "n_docs", minimum=1)
    N = np.asarray(true_counts, dtype=np.float64)
    noise = (2.0 - f) * f * M / (4.0 * (1.0 - f) ** 2) + np.zeros_like(N)
    return noise if conditional else noise + (M - N) * N / M


def bayes_weight(n_docs, f, prior_variance):
    """Weight omega of the prior mean in the Bayesian estimator, Zhao et al. 2021 eq. (19):
    ``omega = M f (2 - f) / (M f (2 - f) + 4 sigma^2 (1 - f)^2)`` with ``sigma^2`` the
    variance of the Gaussian prior on the true count (larger: less trust in the prior)."""
    f = _check_f_open(f)
    M = check_int(n_docs, "n_docs", minimum=1)
    s2 = check_positive(prior_variance, "prior_variance")
    a = M * f * (2.0 - f)
    return a / (a + 4.0 * s2 * (1.0 - f) ** 2)


def bayes_estimate(noisy_counts, n_docs, f, prior_mean, omega):
    """Bayesian denoising estimate, Zhao et al. 2021 eq. (19):
    ``omega * prior_mean + (1 - omega) * moment_estimate``.

    The posterior mean of N_t under the prior N(mu_t, sigma^2) and the Gaussian
    approximation of the likelihood (Theorem 6), with ``omega`` from :func:`bayes_weight`
    (or fixed, as the paper's experiments do: 0.4). Its variance is ``(1 - omega)^2`` times
    that of the moment estimator (Theorem 7); it is biased towards ``prior_mean``.
    """
    if isinstance(omega, bool) or not isinstance(omega, numbers.Real) or not 0.0 <= omega <= 1.0:
        raise ValueError(f"omega must be a real in [0, 1], got {omega!r}")
    n_hat = moment_estimate(noisy_counts, n_docs, f)
    return float(omega) * np.asarray(prior_mean, dtype=np.float64) + (1.0 - float(omega)) * n_hat


def check_noisy_bits(X, name="X"):
    """Validate the clients' noisy presence vectors: a 2-D 0/1 matrix, returned as CSR int8
    with sorted indices (all-zero rows and even an all-zero matrix are allowed)."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, copy=True)
    else:
        arr = np.asarray(X)
        if arr.dtype == object:
            raise TypeError(f"{name} must be numeric 0/1 bits, got dtype object")
        if arr.ndim != 2:
            raise ValueError(f"{name} must be a 2-D (n_clients, n_words) bit matrix, got "
                             f"{arr.ndim} dimension(s)")
        X = sp.csr_matrix(arr)
    if not (np.issubdtype(X.dtype, np.number) or X.dtype == bool) or np.issubdtype(X.dtype, np.complexfloating):
        raise TypeError(f"{name} must hold real 0/1 bits, got dtype {X.dtype}")
    if X.shape[0] == 0:
        raise ValueError(f"{name} has no rows: at least one client vector is needed")
    if X.shape[1] == 0:
        raise ValueError(f"{name} has an empty vocabulary: 0 columns")
    X.sum_duplicates()
    X.eliminate_zeros()
    if X.data.size and np.any(X.data != 1):
        raise ValueError(f"{name} must hold the clients' noisy presence bits (values 0 or 1); "
                         "randomize documents with dptm.local.randomize / randomize_matrix")
    X.sort_indices()
    return sp.csr_matrix((np.ones(X.nnz, dtype=np.int8), X.indices.astype(np.int32),
                          X.indptr.astype(np.int64)), shape=X.shape)


def _stochastic_round(x, rng):
    """Integer array equal to x in expectation: floor(x) + Bernoulli(frac(x))."""
    lo = np.floor(x)
    return (lo + (rng.random(np.shape(x)) < (x - lo))).astype(np.int64)


def reconstruct(X_noisy, target_counts, random_state=None):
    """Reconstruct bit vectors whose column sums match estimated counts, Zhao et al. 2021
    Section V-B Steps 3-5.

    The targets are clipped to [0, M] and rounded stochastically (floor plus a Bernoulli of
    the fractional part, so the rounded count is unbiased). For each word ``t`` with
    ``delta_t = target_t - n_t``: if positive, ``delta_t`` vectors whose bit ``t`` is 0 are
    chosen uniformly without replacement and their bit set to 1; if negative, ``|delta_t|``
    vectors whose bit is 1 are chosen and the bit cleared; otherwise the column is kept.

    Parameters
    ----------
    X_noisy : {array-like, sparse matrix} of shape (M, V)
        Noisy presence bits.
    target_counts : array-like of shape (V,)
        Estimated number of documents containing each word (eq. 8 or eq. 19).
    random_state : None, int, SeedSequence or numpy.random.Generator

    Returns
    -------
    scipy.sparse.csr_matrix of int64, shape (M, V)
        The reconstructed 0/1 document-term matrix (each present word counted once).
    """
    X = check_noisy_bits(X_noisy, "X_noisy")
    M, V = X.shape
    target = np.asarray(target_counts, dtype=np.float64)
    if target.shape != (V,):
        raise ValueError(f"target_counts must have shape ({V},), got {target.shape}")
    if not np.all(np.isfinite(target)):
        raise ValueError("target_counts must be finite")
    rng = check_random_state(random_state)
    C = X.tocsc()
    C.sort_indices()
    n = np.diff(C.indptr)
    t = _stochastic_round(np.clip(target, 0.0, M), rng)
    # removals (and unchanged columns): keep a uniform random subset of min(n_t, t_t) ones
    col_of = np.repeat(np.arange(V), n)
    keys = rng.random(C.nnz)
    order = np.lexsort((keys, col_of))
    rank = np.arange(C.nnz) - C.indptr[col_of[order]]
    keep = rank < np.minimum(n, t)[col_of[order]]
    rows = [C.indices[order][keep].astype(np.int64)]
    cols = [col_of[order][keep]]
    # additions: delta_t new ones among the vectors whose bit t is 0
    mask = np.ones(M, dtype=bool)
    for w in np.flatnonzero(t > n):
        ones = C.indices[C.indptr[w]:C.indptr[w + 1]]
        mask[ones] = False
        zeros = np.flatnonzero(mask)
        mask[ones] = True
        new = zeros[rng.choice(zeros.size, size=int(t[w] - n[w]), replace=False)]
        rows.append(new.astype(np.int64))
        cols.append(np.full(new.size, w, dtype=np.int64))
    rows = np.concatenate(rows)
    cols = np.concatenate(cols)
    R = sp.csr_matrix((np.ones(rows.size, dtype=np.int64), (rows, cols)), shape=(M, V))
    R.sum_duplicates()
    R.sort_indices()
    return R


def _corpus_from_bits(R):
    """Corpus of a 0/1 CSR matrix without the non-empty check of Corpus.from_matrix."""
    doc_ptr = R.indptr.astype(np.int64)
    return Corpus._owning(doc_ptr, R.indices.astype(np.int32), R.shape[1])


# ---------------------------------------------------------------------------- privacy
_BITS_PER_NEIGHBOUR = {"document": None, "word": 1, "word_replacement": 2}


def flip_for_target_epsilon(target_epsilon, n_words, neighbouring="document"):
    """The clients' flip probability f whose guarantee under ``neighbouring`` is
    ``target_epsilon`` in total: two neighbouring documents differ in ``n`` presence bits
    (V for "document", 1 for "word", 2 for "word_replacement"), each bit is
    ``eps_w``-LDP, so ``eps_w = target_epsilon / n`` (pure, delta = 0). The clients must
    randomize with this f (e.g. ``dptm.local.randomize_matrix(X, f)``)."""
    from ..local import f_from_epsilon
    target = check_positive(target_epsilon, "target_epsilon")
    n_words = check_int(n_words, "n_words", minimum=1)
    n_bits = _BITS_PER_NEIGHBOUR[_check_neighbouring(neighbouring)]
    n_bits = n_words if n_bits is None else min(n_bits, n_words)
    return f_from_epsilon(target / n_bits)


def _flip_from_params(est, n_words=None):
    """The clients' flip parameter from ``flip_probability``, per-word ``epsilon`` or the
    total ``target_epsilon`` under ``neighbouring`` (needs the vocabulary size)."""
    f, eps = est.flip_probability, est.epsilon
    target = getattr(est, "target_epsilon", None)
    if sum(v is not None for v in (f, eps, target)) != 1:
        raise ValueError("set exactly one of flip_probability (the clients' f in (0, 1)), "
                         "epsilon (their per-word local epsilon > 0) or target_epsilon (the "
                         "total under `neighbouring`); the server must use the value the "
                         "clients used")
    if f is not None:
        return check_probability(f, "flip_probability", high_open=True)
    if target is not None:
        return flip_for_target_epsilon(target, n_words, est.neighbouring)
    from ..local import f_from_epsilon
    eps = check_positive(eps, "epsilon")
    return f_from_epsilon(eps)


def _check_neighbouring(value):
    if value not in _NEIGHBOURING:
        raise ValueError(f"neighbouring must be one of {list(_NEIGHBOURING)}, got {value!r}")
    return value


def _local_report(f, n_words, neighbouring, description, extra_notes=()):
    """PrivacyReport of randomized response on V presence bits under the chosen relation."""
    from ..accounting import (PaperClaim, PrivacyReport, RandomizedResponseEvent,
                              SelfComposedEvent, epsilon_from_flip)
    eps_w = epsilon_from_flip(f)
    n_bits = {"document": n_words, "word": 1, "word_replacement": min(2, n_words)}[neighbouring]
    relation = {
        "document": f"any two documents (their presence vectors differ in up to V={n_words} bits)",
        "word": "one word added to or removed from the document's word set (one bit differs)",
        "word_replacement": "one word replaced by a word the document did not contain (two bits differ)",
    }[neighbouring]
    bit = RandomizedResponseEvent(f, label="client: randomized response on one word-presence bit")
    event = bit if n_bits == 1 else SelfComposedEvent(bit, n_bits, label=f"client: {n_bits} presence bits")
    notes = (
        f"neighbouring inputs: {relation}",
        f"per word (one bit): epsilon = {eps_w:.6g}; replace one word (two bits): "
        f"{2 * eps_w:.6g}; whole document (V={n_words} bits, Theorem 4): {n_words * eps_w:.6g} "
        "(pure, delta = 0)",
        "the server sees only each client's noisy V-bit word-presence vector: no word counts, "
        "no word order, no out-of-vocabulary words; every document is randomized once",
        "estimation, reconstruction and Gibbs sampling are post-processing of the noisy vectors: "
        "the server's random_state only seeds that post-processing and is not secret (knowing it "
        "reveals nothing beyond the noisy vectors); the clients' randomizer draws from a secret "
        "generator (dptm.local.randomize)",
        "a user who sends k documents gets k times these epsilons (composition); not covered here",
    ) + tuple(extra_notes)
    claim = PaperClaim("Zhao et al. 2021 (LP-LDA), Theorem 4: per-word privacy level of Figs. 6-9",
                       "zhao2021_local_epsilon", {"f": f})
    return PrivacyReport(event, "local", description=description, notes=notes, paper_claim=claim,
                         vocabulary="public (given)",
                         assumed_public=(f"vocabulary (V = {n_words} words), shared by the server "
                                         "and the clients",))


# ---------------------------------------------------------------------------- LP-LDA
class LocalDPLDA(TopicModelMixin):
    """LP-LDA: LDA trained by the server on locally randomized word-presence vectors
    (Zhao et al. 2021, Section V).

    ``fit`` takes the noisy presence bits the clients sent (:func:`dptm.local.randomize`,
    or :func:`dptm.local.randomize_matrix` to simulate them), estimates each word's
    document count with the moment estimator (eq. 8), reconstructs bit vectors with those
    column sums (Steps 3-5), and fits collapsed Gibbs LDA on the reconstruction.

    Parameters
    ----------
    n_components : int, default=10
        Number of topics K.
    flip_probability : float in (0, 1), default=None
        The clients' flip parameter f. Set exactly one of ``flip_probability`` and
        ``epsilon``.
    epsilon : float > 0, default=None
        The clients' per-word local epsilon ``log((1 - f/2) / (f/2))``, the per-bit knob
        (Zhao et al. 2021's privacy level); f is derived from it.
    target_epsilon : float > 0, default=None
        The total epsilon of ``privacy_`` under ``neighbouring`` (pure LDP, delta = 0):
        with the default "document" relation, two documents differ in up to V presence
        bits, so each bit gets ``target_epsilon / V``
        (:func:`flip_for_target_epsilon`; the clients must use the same f). Set exactly
        one of ``flip_probability``, ``epsilon`` and ``target_epsilon``.
    neighbouring : {"document", "word", "word_replacement"}, default="document"
        The neighbouring relation ``privacy_`` states its guarantee for (see Privacy).
    doc_topic_prior, topic_word_prior : float, default=None
        Symmetric Dirichlet priors; None means 1/K.
    max_iter : int, default=100
        Gibbs sweeps over the reconstruction.
    transform_max_iter : int, default=50
        Fold-in sweeps per document in ``transform``.
    random_state : None, int, SeedSequence or numpy.random.Generator
        Seeds the reconstruction and the sampler (one child stream each).
    n_jobs : int, default=None
        Threads of the Gibbs sampler and ``transform`` (as :class:`GibbsLDA`'s: None is
        1, -1 all cores; a seed reproduces a fit for the same ``n_jobs``).
    verbose : int, default=0
    callback : callable, default=None
        ``callback(model, iteration)`` after every Gibbs sweep.

    Attributes
    ----------
    components_ : ndarray (K, V)
        Topic-word counts of the final sample plus ``topic_word_prior``.
    topic_word_ : ndarray (K, V)
        Row-normalised ``components_``.
    doc_topic_ : ndarray (M, K)
        Topic distributions of the reconstructed training vectors.
    flip_probability_ : float
        f used.
    noisy_counts_ : ndarray (V,)
        ``n_t``, ones per word over the noisy vectors.
    estimated_counts_ : ndarray (V,)
        Moment estimates ``N_hat_t`` (eq. 8, before clipping to [0, M]).
    estimate_std_ : float
        Standard deviation of every ``N_hat_t`` given the clients' bits,
        ``sqrt(f (2 - f) M) / (2 (1 - f))``.
    n_reconstructed_tokens_ : int
        Ones in the reconstruction (tokens the sampler saw).
    privacy_ : dptm.accounting.PrivacyReport
        Local DP guarantee (adjacency "local").

    Privacy
    -------
    Local DP: each client randomizes its own V-bit word-presence vector with randomized
    response (keep with 1 - f, else a fair coin); the server receives nothing else. With
    ``eps_w = log((1 - f/2) / (f/2))``: one presence bit changed (a word added/removed)
    gives ``eps_w``-LDP; replacing one word by another gives ``2 eps_w``; two arbitrary
    documents differ in up to V bits, giving ``V eps_w``-LDP (Zhao et al. 2021 Theorem 4;
    the default ``neighbouring="document"``). Word counts are not released by clients
    (presence only), so changing how often a present word occurs costs nothing. Everything
    released (``components_``, ``topic_word_``, ``doc_topic_``, the estimates) is
    post-processing of the noisy vectors. The paper's per-word level is attached as
    ``privacy_.paper_claim``.

    Examples
    --------
    >>> from dptm import LocalDPLDA
    >>> from dptm.local import randomize_matrix
    >>> from dptm.datasets import make_lda_corpus
    >>> X, _, _ = make_lda_corpus(300, 60, 3, random_state=0)
    >>> noisy = randomize_matrix(X, f=0.1, random_state=1)     # on the clients
    >>> model = LocalDPLDA(n_components=3, flip_probability=0.1, max_iter=30,
    ...                    random_state=0).fit(noisy)
    >>> model.topic_word_.shape
    (3, 60)
    """

    def __init__(self, n_components=10, *, flip_probability=None, epsilon=None,
                 target_epsilon=None,
                 neighbouring="document", doc_topic_prior=None, topic_word_prior=None,
                 max_iter=100, transform_max_iter=50, random_state=None, n_jobs=None, verbose=0,
                 callback=None):
        store_params(self, locals())

    def fit(self, X, y=None):
        """Fit on the clients' noisy presence vectors ``X`` (n_clients, n_words), 0/1."""
        self._check_common_params()
        X = check_noisy_bits(X)
        M, V = X.shape
        f = _flip_from_params(self, V)
        neighbouring = _check_neighbouring(self.neighbouring)
        rng = check_random_state(self.random_state)
        self.transform_seed_ = int(rng.integers(2**63))
        rec_rng, gibbs_rng = spawn_generators(rng, 2)
        self.flip_probability_ = f
        self.noisy_counts_ = np.asarray(X.sum(axis=0), dtype=np.int64).ravel()
        self.estimated_counts_ = moment_estimate(self.noisy_counts_, M, f)
        self.estimate_std_ = float(np.sqrt(moment_variance(0.0, M, f, conditional=True)))
        R = reconstruct(X, self.estimated_counts_, rec_rng)
        self.n_reconstructed_tokens_ = int(R.nnz)
        if R.nnz == 0:
            raise ValueError("the reconstruction has no tokens (every estimated count rounded "
                             "to 0): too few clients for this flip_probability")
        def callback(_inner, it):
            self._progress(it)      # the inner sampler is silent: this model reports
            if self.callback is not None:
                self.callback(self, it)
        lda = GibbsLDA(self.n_components, doc_topic_prior=self.doc_topic_prior_,
                       topic_word_prior=self.topic_word_prior_, max_iter=self.max_iter,
                       transform_max_iter=self.transform_max_iter, random_state=gibbs_rng,
                       n_jobs=self.n_jobs, verbose=0, callback=callback).fit(R)
        self._set_topics(lda.components_)
        self.doc_topic_ = lda.doc_topic_
        self.n_iter_ = lda.n_iter_
        self.n_features_in_ = V
        self.privacy_ = _local_report(
            f, V, neighbouring,
            f"LP-LDA topic-word matrix from {M} randomized presence vectors "
            f"(moment estimator, reconstruction, {self.max_iter} Gibbs sweeps)")
        return self

    def fit_transform(self, X, y=None):
        """Fit and return ``doc_topic_`` (topics of the reconstructed training vectors)."""
        return self.fit(X).doc_topic_


# ---------------------------------------------------------------------------- OLP-LDA
class OnlineLocalDPLDA(TopicModelMixin):
    """OLP-LDA: online LDA on streaming mini-batches of locally randomized presence
    vectors, with an initial model from a clean prior data set and Bayesian denoising
    (Zhao et al. 2021, Section VI, Algorithm 2).

    ``fit_prior(X0)`` trains the initial model on the server's own clean documents
    (binarized to presence, so that its counts are on the same scale as the clients'
    reconstructed vectors): topic-word counts ``N^0`` and prior means ``mu^0 = eta^0`` (the
    number of prior documents containing each word). Each ``partial_fit(X_l)`` on a noisy
    mini-batch of ``M_l`` vectors then

    1. sets the prior mean ``mu^l = (mu^{l-1} + eta^{l-1}) / 2 * M_l / M_{l-1}`` (eq. 21);
    2. estimates the presence counts ``eta^l = omega mu^l + (1 - omega) N_hat^l`` (eq. 19);
    3. reconstructs the batch to those column sums (Section V-B, Steps 3-5);
    4. runs ``max_iter`` Gibbs sweeps on it with the topic-word prior
       ``beta^l = beta + lambda (N^0 + ... + N^{l-1})`` (eq. 10-12), and releases
       ``components_ = N^l + beta^l`` (eq. 13).

    Without a prior data set the first batch uses the moment estimator (omega = 0) and
    ``beta^1 = beta``.

    Notes on the paper. Algorithm 2 (line 13) sets ``mu^l = eta^{l-1}`` while the text's
    eq. (21) averages ``mu^{l-1}`` and ``eta^{l-1}`` and rescales by the batch sizes; this
    class follows eq. (21). Algorithm 2 initialises ``mu^0 = sum_k N^0_{k,t}`` (token
    counts), Section VI-E2 the presence count of the prior set; with the prior set binarized
    the two agree. The kernel samples with ``beta^l`` as fixed pseudo-counts; the
    ``lambda N`` part is rounded stochastically to integers per batch (unbiased), while
    ``components_`` and ``topic_word_prior_matrix_`` carry the exact ``beta^l``.

    Parameters
    ----------
    n_components : int, default=10
    flip_probability : float in (0, 1), default=None
        The clients' f. Set exactly one of ``flip_probability`` and ``epsilon``.
    epsilon : float > 0, default=None
        The clients' per-word local epsilon.
    target_epsilon : float > 0, default=None
        The total epsilon of ``privacy_`` under ``neighbouring``, as :class:`LocalDPLDA`
        (the f of :func:`flip_for_target_epsilon`).
    neighbouring : {"document", "word", "word_replacement"}, default="document"
        Relation ``privacy_`` states its guarantee for (as :class:`LocalDPLDA`).
    batch_size : int, default=160
        Mini-batch size used by ``fit`` (the paper's 160).
    correlation_factor : float in [0, 1], default=0.5
        lambda of eq. (10): weight of earlier batches' topic-word counts in the prior.
    prior_weight : float in [0, 1] or "auto", default=0.4
        omega of eq. (19), the weight of the prior mean (the paper's experiments fix 0.4).
        "auto" computes it per batch from ``prior_variance`` by eq. (19).
    prior_variance : float > 0, default=None
        sigma^2 of the Gaussian prior on each count; used only with ``prior_weight="auto"``.
    doc_topic_prior, topic_word_prior : float, default=None
        alpha and the base beta; None means 1/K.
    max_iter : int, default=50
        Gibbs sweeps per mini-batch.
    prior_max_iter : int, default=None
        Gibbs sweeps for the initial model; None means ``max_iter``.
    transform_max_iter : int, default=50
    random_state : None, int, SeedSequence or numpy.random.Generator
        One child stream per unit of work: the prior model and each mini-batch in order.
    verbose : int, default=0
        Prints a line per batch.
    callback : callable, default=None
        ``callback(model, batch_index)`` after each mini-batch (1-based).

    Attributes
    ----------
    components_, topic_word_ : ndarray (K, V)
        Current model (eq. 13).
    topic_word_prior_matrix_ : ndarray (K, V)
        ``beta^l`` used for the last batch.
    batch_topic_word_counts_ : ndarray (K, V) of int64
        ``N^l`` of the last batch (or of the prior data set after ``fit_prior``).
    prior_mean_ : ndarray (V,) or None
        ``mu^l`` of the last batch (None if it had no prior).
    batch_estimate_ : ndarray (V,)
        ``eta^l`` of the last batch, clipped to [0, M_l].
    omega_ : float
        omega used for the last batch.
    n_batches_ : int
        Noisy mini-batches processed.
    n_docs_seen_ : int
        Noisy vectors processed.
    n_prior_docs_ : int
        Size of the prior data set (0 if none).
    privacy_ : dptm.accounting.PrivacyReport

    Privacy
    -------
    Local DP for every client whose noisy vector is in a mini-batch, exactly as
    :class:`LocalDPLDA`: ``eps_w`` per presence bit, ``2 eps_w`` per replaced word,
    ``V eps_w`` per document (the default relation). Each client's vector enters one batch
    and is randomized once, so the number of batches does not compose. The prior data set
    passed to ``fit_prior`` is the server's own clean data and is NOT protected: the
    released model depends on it directly. Released: the model after each batch
    (``components_``), the estimates and prior means - all post-processing of the noisy
    vectors and of the prior data set.

    Examples
    --------
    >>> from dptm import OnlineLocalDPLDA
    >>> from dptm.local import randomize_matrix
    >>> from dptm.datasets import make_lda_corpus
    >>> X, _, _ = make_lda_corpus(400, 60, 3, random_state=0)
    >>> noisy = randomize_matrix(X[100:], f=0.1, random_state=1)
    >>> model = OnlineLocalDPLDA(3, flip_probability=0.1, batch_size=100, max_iter=20,
    ...                          random_state=0).fit(noisy, X_prior=X[:100])
    >>> model.n_batches_
    3
    """

    def __init__(self, n_components=10, *, flip_probability=None, epsilon=None,
                 target_epsilon=None,
                 neighbouring="document", batch_size=160, correlation_factor=0.5,
                 prior_weight=0.4, prior_variance=None, doc_topic_prior=None,
                 topic_word_prior=None, max_iter=50, prior_max_iter=None, transform_max_iter=50,
                 random_state=None, verbose=0, callback=None):
        self.n_components = n_components
        self.flip_probability = flip_probability
        self.epsilon = epsilon
        self.target_epsilon = target_epsilon
        self.neighbouring = neighbouring
        self.batch_size = batch_size
        self.correlation_factor = correlation_factor
        self.prior_weight = prior_weight
        self.prior_variance = prior_variance
        self.doc_topic_prior = doc_topic_prior
        self.topic_word_prior = topic_word_prior
        self.max_iter = max_iter
        self.prior_max_iter = prior_max_iter
        self.transform_max_iter = transform_max_iter
        self.random_state = random_state
        self.verbose = verbose
        self.callback = callback

    # -- parameters and state ---------------------------------------------------------
    def _validate(self, n_words=None):
        self._check_common_params()
        f = _flip_from_params(self, n_words if n_words is not None
                              else getattr(self, "n_features_in_", None))
        _check_neighbouring(self.neighbouring)
        check_int(self.batch_size, "batch_size", minimum=1)
        lam = check_positive(self.correlation_factor, "correlation_factor", strict=False)
        if lam > 1.0:
            raise ValueError(f"correlation_factor must be in [0, 1], got {lam}")
        if isinstance(self.prior_weight, str):
            if self.prior_weight != "auto":
                raise ValueError(f"prior_weight must be a float in [0, 1] or 'auto', got {self.prior_weight!r}")
            if self.prior_variance is None:
                raise ValueError("prior_weight='auto' needs prior_variance (sigma^2 > 0 of eq. 19)")
            check_positive(self.prior_variance, "prior_variance")
        else:
            w = check_positive(self.prior_weight, "prior_weight", strict=False)
            if w > 1.0:
                raise ValueError(f"prior_weight must be a float in [0, 1] or 'auto', got {w}")
        if self.prior_max_iter is not None:
            check_int(self.prior_max_iter, "prior_max_iter", minimum=1)
        return f, lam

    def _reset(self, n_words):
        f, lam = self._validate(n_words)
        self._rng = check_random_state(self.random_state)
        self.transform_seed_ = int(self._rng.integers(2**63))
        self.flip_probability_ = f
        self.n_features_in_ = n_words
        K = self.n_components
        self._pseudo = np.zeros((K, n_words), dtype=np.float64)   # lambda * sum_i N^i
        self._prev_mean = None          # mu^{l-1}
        self._prev_estimate = None      # eta^{l-1}
        self._prev_size = None          # M_{l-1}
        self.prior_mean_ = None
        self.batch_estimate_ = None
        self.omega_ = None
        self.n_batches_ = 0
        self.n_docs_seen_ = 0
        self.n_prior_docs_ = 0
        self.topic_word_prior_matrix_ = np.full((K, n_words), self.topic_word_prior_)
        self._set_topics(self.topic_word_prior_matrix_.copy())
        self._update_report()

    def _initialized(self):
        return hasattr(self, "_pseudo")

    def _update_report(self):
        extra = [f"{self.n_batches_} mini-batch(es), {self.n_docs_seen_} randomized client vectors"]
        if self.n_prior_docs_:
            extra.append(f"the prior data set ({self.n_prior_docs_} documents) is the server's own "
                         "clean data and is NOT protected by this guarantee")
        self.privacy_ = _local_report(
            self.flip_probability_, self.n_features_in_, self.neighbouring,
            "OLP-LDA topic-word matrix after each mini-batch of randomized presence vectors "
            "(Bayesian denoising, reconstruction, Gibbs sampling with the eq. 10 prior)",
            extra_notes=extra)

    def _sweeps(self, R, n_sweeps, rng, pseudo):
        """Gibbs sweeps on the 0/1 matrix R with topic-word prior beta + pseudo (K x V).

        The kernel's word factor is (n_wk + beta) / (n_k + V beta); the extra prior enters
        as fixed pseudo-counts added to n_wk and n_k (rounded stochastically to integers,
        unbiased), which no token ever removes. Returns N (K x V, int64) of R's tokens."""
        corpus = _corpus_from_bits(R)
        state = GibbsState(corpus, self.n_components, rng)
        P = _stochastic_round(pseudo.T, rng).astype(np.int32)          # V x K
        state.n_wk += P
        state.n_k += P.sum(axis=0, dtype=np.int64)
        for _ in range(n_sweeps):
            _cgs.gibbs_sweep(corpus.doc_ptr, corpus.word_ids, state.z, state.n_wk, state.n_dk,
                             state.n_k, self.doc_topic_prior_, self.topic_word_prior_,
                             rng.bit_generator)
        return (state.n_wk - P).T.astype(np.int64)

    # -- public API -------------------------------------------------------------------
    def fit_prior(self, X_prior):
        """Train the initial model on the server's clean prior data set (resets the model).

        ``X_prior`` is a doc-term count (or bit) matrix; it is binarized to word presence.
        Not protected: see Privacy."""
        X0 = check_count_matrix(X_prior, name="X_prior")
        self._reset(X0.shape[1])
        B = sp.csr_matrix((np.ones(X0.nnz, dtype=np.int64), X0.indices, X0.indptr), shape=X0.shape)
        rng = spawn_generators(self._rng, 1)[0]
        n_sweeps = self.max_iter if self.prior_max_iter is None else self.prior_max_iter
        N0 = self._sweeps(B, n_sweeps, rng, self._pseudo)
        beta = self.topic_word_prior_
        self.topic_word_prior_matrix_ = np.full_like(self._pseudo, beta)
        self._set_topics(N0 + beta)
        self.batch_topic_word_counts_ = N0
        self._pseudo += self._lambda() * N0
        mu0 = np.asarray(B.sum(axis=0), dtype=np.float64).ravel()
        self._prev_mean = mu0
        self._prev_estimate = mu0
        self._prev_size = X0.shape[0]
        self.n_prior_docs_ = X0.shape[0]
        self._update_report()
        return self

    def _lambda(self):
        return float(self.correlation_factor)

    def partial_fit(self, X, y=None):
        """Update the model with one mini-batch of noisy presence vectors (n_clients, V)."""
        X = check_noisy_bits(X)
        if not self._initialized():
            self._reset(X.shape[1])
        else:
            self._validate()
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} words, the model has {self.n_features_in_}")
        f = self.flip_probability_
        M = X.shape[0]
        batch_rng = spawn_generators(self._rng, 1)[0]
        rec_rng, gibbs_rng = spawn_generators(batch_rng, 2)
        n = np.asarray(X.sum(axis=0), dtype=np.float64).ravel()
        if self._prev_estimate is None:                     # no prior information yet
            mu, omega = None, 0.0
            eta = moment_estimate(n, M, f)
        else:
            mu = (self._prev_mean + self._prev_estimate) / 2.0 * (M / self._prev_size)   # eq. 21
            omega = (bayes_weight(M, f, self.prior_variance) if self.prior_weight == "auto"
                     else float(self.prior_weight))
            eta = bayes_estimate(n, M, f, mu, omega)                                    # eq. 19
        eta = np.clip(eta, 0.0, M)
        R = reconstruct(X, eta, rec_rng)
        beta_l = self.topic_word_prior_ + self._pseudo
        N = self._sweeps(R, self.max_iter, gibbs_rng, self._pseudo)
        self.topic_word_prior_matrix_ = beta_l
        self._set_topics(N + beta_l)                                                    # eq. 13
        self.batch_topic_word_counts_ = N
        self._pseudo = self._pseudo + self._lambda() * N                                # eq. 10
        self.prior_mean_ = mu
        self.batch_estimate_ = eta
        self.omega_ = omega
        self._prev_mean = eta if mu is None else mu
        self._prev_estimate = eta
        self._prev_size = M
        self.n_batches_ += 1
        self.n_docs_seen_ += M
        self.n_iter_ = self.max_iter
        self._update_report()
        if self.verbose:
            self._log("batch %d: %d vectors, %d reconstructed tokens, omega=%.3g",
                      self.n_batches_, M, R.nnz, omega)
        if self.callback is not None:
            self.callback(self, self.n_batches_)
        return self

    def fit(self, X, y=None, X_prior=None):
        """Reset, train the initial model on ``X_prior`` (clean, optional), then feed the
        rows of ``X`` (noisy presence vectors) as consecutive mini-batches of
        ``batch_size`` in the given order."""
        X = check_noisy_bits(X)
        if X_prior is not None:
            self.fit_prior(X_prior)
            if self.n_features_in_ != X.shape[1]:
                raise ValueError(f"X has {X.shape[1]} words, X_prior has {self.n_features_in_}")
        else:
            self._reset(X.shape[1])
        bs = self.batch_size
        for start in range(0, X.shape[0], bs):
            self.partial_fit(X[start:start + bs])
        return self
