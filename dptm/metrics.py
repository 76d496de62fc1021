"""Utility metrics for topic models, each defined once.

* :func:`log_likelihood` / :func:`perplexity` — held-out fit, natural log, per token
  (Zhao et al. 2021, Section VII-A). The caller infers theta of the held-out documents with
  phi fixed (e.g. ``model.transform(X_test)``); these functions only evaluate.
* :func:`umass_coherence`, :func:`npmi_coherence`, :func:`cv_coherence` — topic coherence
  as the field reports it (UMass as the mean over word pairs, like gensim and tomotopy;
  the paper's sum over pairs with ``aggregate="sum"``), from document co-occurrence in a
  reference corpus, top 10 words by default, averaged over topics.
* :func:`privacy_utility_curve` — held-out perplexity and coherence of a private model
  for several epsilons, beside the uniform model's (plot it with
  :func:`dptm.plotting.plot_privacy_utility`).
* :func:`align_topics`, :func:`aligned_l1`, :func:`aligned_rmse`,
  :func:`kendall_tau_distance` — distances between two topic-word matrices (e.g. before and
  after DP noise, Wang et al. 2022 Section 6), computed after matching topics, since a fit
  defines its topics only up to a permutation.

Metrics are post-processing: evaluating a released (private) topic-word matrix costs no
privacy, but evaluating on the private training corpus (e.g. coherence with ``X`` the
training data) reveals information about it and is not itself private.
"""
import numpy as np
from scipy.optimize import linear_sum_assignment

from ._utils import check_count_matrix, check_int, check_positive, check_probability_matrix

__all__ = [
    "PROB_FLOOR", "log_likelihood", "perplexity", "umass_coherence", "npmi_coherence",
    "cv_coherence", "align_topics",
    "aligned_l1", "aligned_rmse", "kendall_tau_distance", "top_words",
    "privacy_utility_curve",
]

#: Probabilities below this are raised to it before taking logs, so a token the model
#: gives probability 0 contributes log(1e-300) ~ -690.8 nats instead of -inf.
PROB_FLOOR = 1e-300


def _check_matrix(A, name, shape=None, stochastic=False):
    # one validation module: dptm._utils
    return check_probability_matrix(A, name, shape=shape,
                                    rows="stochastic" if stochastic else "any")


def log_likelihood(X, doc_topic, topic_word):
    """Total log-likelihood of a corpus under a topic model, in nats.

    ``sum_d sum_w X[d, w] * log(sum_k doc_topic[d, k] * topic_word[k, w])`` with each
    probability floored at :data:`PROB_FLOOR` (1e-300) before the log.

    Parameters
    ----------
    X : array-like or sparse matrix, shape (n_docs, n_words)
        Non-negative integer counts.
    doc_topic : array-like, shape (n_docs, n_topics)
        theta; rows must sum to 1 (tolerance 1e-6).
    topic_word : array-like, shape (n_topics, n_words)
        phi; rows must sum to 1 (tolerance 1e-6).

    Returns
    -------
    float (<= 0)
    """
    return _log_likelihood_counts(check_count_matrix(X), doc_topic, topic_word)


def _log_likelihood_counts(X, doc_topic, topic_word):
    """``log_likelihood`` of a matrix ``check_count_matrix`` returned (not validated again;
    theta and phi are)."""
    theta = _check_matrix(doc_topic, "doc_topic", shape=(X.shape[0], None), stochastic=True)
    phi = _check_matrix(topic_word, "topic_word", shape=(theta.shape[1], X.shape[1]),
                        stochastic=True)
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    cols, counts = X.indices, X.data
    phi_t = np.ascontiguousarray(phi.T)  # (V, K): gather rows, not columns
    total = 0.0
    step = max(1, (1 << 21) // theta.shape[1])
    for start in range(0, X.nnz, step):
        sl = slice(start, start + step)
        p = np.einsum("ik,ik->i", theta[rows[sl]], phi_t[cols[sl]])
        total += float(np.dot(counts[sl], np.log(np.maximum(p, PROB_FLOOR))))
    return total


def perplexity(X, doc_topic, topic_word):
    """Per-token perplexity, natural log: ``exp(-log_likelihood(X, theta, phi) / N)``.

    N is the number of tokens ``X.sum()``; this is the held-out perplexity of
    Zhao et al. 2021 (Section VII-A) when ``doc_topic`` was inferred for the held-out
    documents with ``topic_word`` fixed. Lower is better; a uniform model over V words
    has perplexity exactly V. Zero probabilities are floored at :data:`PROB_FLOOR`.

    Parameters
    ----------
    X, doc_topic, topic_word
        As in :func:`log_likelihood`.

    Returns
    -------
    float (>= 1)
    """
    return _perplexity_counts(check_count_matrix(X), doc_topic, topic_word)


def _perplexity_counts(X, doc_topic, topic_word):
    """``perplexity`` of a matrix ``check_count_matrix`` returned (not validated again)."""
    return float(np.exp(-_log_likelihood_counts(X, doc_topic, topic_word) / X.sum()))


def _top_words(topic_word, top_n):
    """Indices of the ``top_n`` largest entries of each row, largest first (ties: lower index)."""
    order = np.argsort(-topic_word, axis=1, kind="stable")
    return order[:, :top_n]


def top_words(topic_word, vocabulary, top_n=10):
    """The ``top_n`` most probable words of each topic, most probable first.

    Ties are broken by column order (the same rule :func:`umass_coherence` and
    :func:`kendall_tau_distance` use).

    Parameters
    ----------
    topic_word : array-like, shape (n_topics, n_words)
    vocabulary : array-like of str, shape (n_words,)
    top_n : int, default=10

    Returns
    -------
    list of list of str
    """
    vocab = np.asarray(vocabulary, dtype=str)
    phi = _check_matrix(topic_word, "topic_word", shape=(None, vocab.size))
    top_n = check_int(top_n, "top_n", minimum=1)
    return vocab[_top_words(phi, min(top_n, vocab.size))].tolist()


def _cooccurrence(X, topic_word, top_n):
    """Top words of each topic and the document (co-)frequencies among them.

    Returns ``(inverse, co, n_docs)``: ``inverse[t]`` indexes topic t's top words (most
    probable first) into ``co``, the matrix of co-document counts (the diagonal holds each
    word's document frequency), from the presence of words in the documents of ``X``."""
    X = check_count_matrix(X)
    phi = _check_matrix(topic_word, "topic_word", shape=(None, X.shape[1]))
    top_n = check_int(top_n, "top_n", minimum=2)
    if top_n > X.shape[1]:
        raise ValueError(f"top_n must be <= n_words ({X.shape[1]}), got {top_n}")
    top = _top_words(phi, top_n)                            # (K, M)
    used, inverse = np.unique(top, return_inverse=True)
    B = X[:, used]
    B.data[:] = 1
    co = (B.T @ B).toarray().astype(np.float64)
    return inverse.reshape(top.shape), co, X.shape[0]


def umass_coherence(X, topic_word, top_n=10, per_topic=False, aggregate="mean", smoothing=None):
    """UMass topic coherence (Mimno et al. 2011; Manzonelli et al. 2024 eq. 4), by default
    exactly gensim's ``CoherenceModel(coherence="u_mass")``.

    For topic t with top words v_1, ..., v_M (most probable first, M = ``top_n``), over the
    M (M - 1) / 2 pairs l < m::

        log((D(v_m, v_l) + s) / D(v_l))

    where D(v) is the number of documents of the reference corpus ``X`` containing v and
    D(v, v') the number containing both. The default smoothing is gensim's: 1e-12 added to
    the probability D(v_m, v_l) / n_docs, i.e. s = 1e-12 * n_docs; ``smoothing=1`` is
    Mimno et al.'s pseudo-count (values closer to 0: a pair never seen together scores
    log(1 / D(v_l)) instead of about -27 - log D(v_l), so the two are not comparable).
    ``aggregate="mean"`` (default) averages the pairs, the scale gensim and tomotopy
    report; ``"sum"`` sums them, as Manzonelli et al. 2024 eq. 4 writes it
    (``M (M - 1) / 2`` times larger). Higher (closer to 0) is better. A pair whose
    conditioning word is absent from ``X`` (D(v_l) = 0, where the formula is undefined)
    scores 0, as in gensim; this only happens when the reference corpus is not the one
    the vocabulary came from.

    Parameters
    ----------
    X : array-like or sparse matrix, shape (n_docs, n_words)
        Reference corpus (counts; only presence matters). For a private model use held-out
        or public text: coherence on the private training corpus is not private.
    topic_word : array-like, shape (n_topics, n_words)
        Any non-negative topic-word weights (normalisation does not matter).
    top_n : int, default=10
        M, the number of top words per topic (2 <= M <= n_words).
    per_topic : bool, default=False
        Return the coherence of each topic instead of their mean.
    aggregate : {"mean", "sum"}, default="mean"
    smoothing : float > 0 or None, default=None
        Pseudo-count s added to D(v_m, v_l); None is gensim's 1e-12 * n_docs.

    Returns
    -------
    float, or numpy.ndarray of shape (n_topics,) when ``per_topic``
    """
    if aggregate not in ("mean", "sum"):
        raise ValueError(f"aggregate must be 'mean' or 'sum', got {aggregate!r}")
    if smoothing is not None:
        smoothing = check_positive(smoothing, "smoothing")
    inverse, co, n_docs = _cooccurrence(X, topic_word, top_n)
    if smoothing is None:
        smoothing = _EPS * n_docs
    df = np.diag(co)
    m_idx, l_idx = np.tril_indices(inverse.shape[1], k=-1)  # pairs l < m
    vm, vl = inverse[:, m_idx], inverse[:, l_idx]
    seen = df[vl] > 0
    pairs = np.where(seen, np.log((co[vm, vl] + smoothing) / np.where(seen, df[vl], 1.0)), 0.0)
    scores = pairs.mean(axis=1) if aggregate == "mean" else pairs.sum(axis=1)
    return scores if per_topic else float(scores.mean())


_EPS = 1e-12   # gensim's smoothing of probabilities in the NPMI-based measures


def _npmi(co, n_docs):
    """Normalised PMI of every pair of the words in ``co`` (documents as windows), with
    gensim's smoothing: log((p(a, b) + e) / (p(a) p(b))) / -log(p(a, b) + e)."""
    p = co / n_docs
    pw = np.diag(p)
    denom = np.outer(pw, pw)
    with np.errstate(divide="ignore"):
        pmi = np.log((p + _EPS) / np.where(denom > 0, denom, 1.0))
    # a word absent from the reference text never co-occurs: the minimum, -1 (a private
    # model's top word may well be absent from held-out text)
    return np.where(denom > 0, pmi / -np.log(p + _EPS), -1.0)


def npmi_coherence(X, topic_word, top_n=10, per_topic=False):
    """NPMI coherence (Bouma 2009; Aletras & Stevenson 2013): the mean normalised pointwise
    mutual information of the pairs of each topic's ``top_n`` words, in [-1, 1], higher is
    better. Probabilities are document frequencies in ``X`` (a document is the window),
    smoothed as gensim does; equal to gensim's ``c_npmi`` with a window longer than every
    document. Use held-out or public text for a private model."""
    inverse, co, n_docs = _cooccurrence(X, topic_word, top_n)
    npmi = _npmi(co, n_docs)
    i, j = np.triu_indices(inverse.shape[1], k=1)
    scores = npmi[inverse[:, i], inverse[:, j]].mean(axis=1)
    return scores if per_topic else float(scores.mean())


def cv_coherence(X, topic_word, top_n=10, per_topic=False):
    """C_V coherence (Roeder, Both & Hinneburg 2015): for each top word w of a topic, the
    cosine between its NPMI vector against the topic's top words and the sum of those
    vectors over the topic, averaged over w. In [0, 1] for non-negative NPMI, higher is
    better. Documents are the windows (gensim's ``c_v`` uses sliding windows of 110 words;
    with a window longer than every document it equals this). Use held-out or public text
    for a private model."""
    inverse, co, n_docs = _cooccurrence(X, topic_word, top_n)
    npmi = _npmi(co, n_docs)
    scores = np.empty(inverse.shape[0])
    for t, words in enumerate(inverse):
        vectors = npmi[np.ix_(words, words)]            # row i: NPMI(w_i, w_j) over j
        total = vectors.sum(axis=0)
        norms = np.linalg.norm(vectors, axis=1) * np.linalg.norm(total)
        with np.errstate(invalid="ignore", divide="ignore"):
            cos = np.where(norms > 0, vectors @ total / norms, 0.0)
        scores[t] = cos.mean()
    return scores if per_topic else float(scores.mean())


def _check_pair(A, B, same_shape=True):
    A = _check_matrix(A, "A")
    B = _check_matrix(B, "B", shape=(A.shape[0] if same_shape else None, A.shape[1]))
    return A, B


def align_topics(A, B):
    """Match the topics of two topic-word matrices (minimum total L1 distance).

    Solves the assignment problem on the cost ``C[i, j] = sum_w |A[i, w] - B[j, w]|`` with
    ``scipy.optimize.linear_sum_assignment``.

    Parameters
    ----------
    A : array-like, shape (K_A, V)
    B : array-like, shape (K_B, V)
        Non-negative weights over the same vocabulary (K_A may differ from K_B).

    Returns
    -------
    row_ind, col_ind : numpy.ndarray of int, length min(K_A, K_B)
        Topic ``A[row_ind[i]]`` is matched with ``B[col_ind[i]]``; ``row_ind`` is sorted, so
        for K_A == K_B, ``B[col_ind]`` is B reordered to follow A.
    """
    A, B = _check_pair(A, B, same_shape=False)
    cost = np.empty((A.shape[0], B.shape[0]))
    for i in range(A.shape[0]):  # row by row: O(K V) memory, not O(K^2 V)
        cost[i] = np.abs(B - A[i]).sum(axis=1)
    return linear_sum_assignment(cost)


def _aligned(A, B, align):
    A, B = _check_pair(A, B)
    if align:
        rows, cols = align_topics(A, B)
        return A[rows], B[cols]
    return A, B


def aligned_l1(A, B, align=True, per_topic=False):
    """L1 distance between two topic-word matrices after topic alignment.

    ``sum_k sum_w |A[k, w] - B[pi(k), w]|`` where pi is the matching of
    :func:`align_topics` — the entrywise L1 norm of the difference of the whole matrices,
    as Wang et al. 2022 (Section 6, "L1-distance") compares the original and the noisy
    output matrix. Divide by K for the mean per-topic distance (or use ``per_topic``).

    Parameters
    ----------
    A, B : array-like, shape (K, V)
    align : bool, default=True
        Match topics first; pass False when rows already correspond (e.g. a matrix and its
        noisy release).
    per_topic : bool, default=False
        Return the L1 distance of each aligned row (in the order of A's topics).

    Returns
    -------
    float, or numpy.ndarray of shape (K,)
    """
    A, B = _aligned(A, B, align)
    rows = np.abs(A - B).sum(axis=1)
    return rows if per_topic else float(rows.sum())


def aligned_rmse(A, B, align=True):
    """Root-mean-square error between two topic-word matrices after topic alignment.

    ``sqrt(mean_{k, w} (A[k, w] - B[pi(k), w])^2)`` over all K x V entries, pi as in
    :func:`align_topics` (Wang et al. 2022, Section 6, "RMSE").

    Parameters
    ----------
    A, B : array-like, shape (K, V)
    align : bool, default=True
        Match topics first (by L1 cost, as :func:`aligned_l1`).

    Returns
    -------
    float
    """
    A, B = _aligned(A, B, align)
    return float(np.sqrt(np.mean((A - B) ** 2)))


def kendall_tau_distance(A, B, top_n=10, align=True, per_topic=False):
    """Normalised Kendall tau distance between the keyword rankings of aligned topics.

    Wang et al. 2022 (Section 6) measures how much the ranking of a topic's keywords changes
    between two topic-word matrices (before and after noise). Precisely: for each matched
    pair of topics (A_k, B_pi(k)), take the ``top_n`` most probable words of A_k and count
    the pairs of these words that the two topics order differently::

        tau_k = (#discordant pairs + 0.5 * #pairs tied in exactly one topic) / (n (n-1) / 2)

    (the Kendall distance with penalty 1/2 for ties, Fagin et al. 2006). It is 0 when B ranks
    A's keywords in the same order, 1 when in the reverse order; 0.5 is what unrelated
    rankings give on average. The result is the mean over topics.

    Parameters
    ----------
    A, B : array-like, shape (K, V)
        A is the reference (e.g. the non-private matrix).
    top_n : int, default=10
        Number of keywords per topic (2 <= top_n <= V).
    align : bool, default=True
        Match topics first (:func:`align_topics`).
    per_topic : bool, default=False
        Return the distance of each topic of A.

    Returns
    -------
    float in [0, 1], or numpy.ndarray of shape (K,)
    """
    A, B = _aligned(A, B, align)
    top_n = check_int(top_n, "top_n", minimum=2)
    if top_n > A.shape[1]:
        raise ValueError(f"top_n must be <= n_words ({A.shape[1]}), got {top_n}")
    top = _top_words(A, top_n)
    a = np.take_along_axis(A, top, axis=1)                  # (K, n)
    b = np.take_along_axis(B, top, axis=1)
    i, j = np.triu_indices(top_n, k=1)
    sa = np.sign(a[:, i] - a[:, j])
    sb = np.sign(b[:, i] - b[:, j])
    discordant = (sa * sb < 0).sum(axis=1)
    half = ((sa == 0) != (sb == 0)).sum(axis=1)
    dist = (discordant + 0.5 * half) / i.size
    return dist if per_topic else float(dist.mean())


_COHERENCE = {"npmi": "npmi_coherence", "umass": "umass_coherence", "cv": "cv_coherence"}


def _heldout_perplexity(model, X):
    if hasattr(model, "perplexity"):
        return float(model.perplexity(X))
    X = check_count_matrix(X)
    keep = np.asarray(X.sum(axis=1)).ravel() > 0
    return perplexity(X[keep], model.transform(X[keep]), model.topic_word_)


def privacy_utility_curve(make_estimator, X_train, X_heldout, epsilons, *, coherence="npmi",
                          top_n=10, n_repeats=1, nonprivate=None, budget=None, fit=None):
    """Held-out utility of a private topic model at several total epsilons.

    For each epsilon in ``epsilons`` (and each of ``n_repeats`` fits), fits
    ``make_estimator(epsilon)`` on ``X_train`` and evaluates the fitted model on
    ``X_heldout``: the held-out perplexity (``model.perplexity``) and the topic coherence
    of its top words in ``X_heldout``. The uniform model's perplexity (the vocabulary size
    V: every word probability 1/V) is given beside it, and a non-private reference when
    ``nonprivate`` is given.

    Privacy: every fit is a release of ``X_train``. The table is post-processing of those
    releases and of ``X_heldout``, so its guarantee is the *composition of all the fits*
    (the ``total_epsilon`` column, composed by :class:`dptm.accounting.BudgetAccountant`;
    pass ``budget`` to spend them against a cap, which raises before the fit that would
    exceed it is reported). ``X_heldout`` must be held-out or public text: it is not
    protected. To choose epsilon without spending the private data's budget, draw the
    curve on public or proxy data, then fit once on the private data.

    Parameters
    ----------
    make_estimator : callable(epsilon) -> unfitted estimator
        E.g. ``lambda eps: PrivateOnlineLDA(10, max_doc_length=100, total_samples=5000,
        target_epsilon=eps, target_delta=1e-5)``.
        A model whose ``privacy_`` report is set after fit (a private dptm model).
    X_train : matrix (n_docs, V)
        Training counts (private).
    X_heldout : matrix (n_heldout, V)
        Held-out or public counts over the same vocabulary.
    epsilons : sequence of float > 0
    coherence : {"npmi", "umass", "cv"} or None, default="npmi"
        Coherence measure on ``X_heldout`` (None: skip).
    top_n : int, default=10
        Top words per topic for the coherence.
    n_repeats : int, default=1
        Fits per epsilon (mean and standard deviation are reported). Each is a release.
    nonprivate : unfitted estimator, optional
        A non-private model fitted once on ``X_train`` for reference (its metrics are not
        private: the data owner's own diagnostic, not for publication).
    budget : dptm.accounting.BudgetAccountant, optional
        Every private fit is spent against it.
    fit : callable(model, X_train), optional
        How to fit a model (default ``model.fit(X_train)``); e.g. to randomize the
        clients' data first for a local-DP model.

    Returns
    -------
    table : pandas.DataFrame when pandas is installed, else dict of lists
        One row per epsilon: ``epsilon`` (the target), ``epsilon_reported`` (the model's
        own report at its ``default_delta``, mean over repeats), ``perplexity``, ``perplexity_std``,
        ``coherence``, ``coherence_std`` (NaN when ``coherence`` is None),
        ``uniform_perplexity`` (V), ``nonprivate_perplexity``, ``nonprivate_coherence``
        (NaN without ``nonprivate``) and ``total_epsilon`` (the composition of every fit
        so far, at the budget's delta or the first report's).
    """
    if not callable(make_estimator):
        raise TypeError("make_estimator must be a callable epsilon -> unfitted estimator, got "
                        f"{type(make_estimator).__name__}")
    eps_list = [check_positive(e, "epsilons") for e in np.atleast_1d(np.asarray(epsilons,
                                                                                 dtype=float))]
    if not eps_list:
        raise ValueError("epsilons must hold at least one epsilon > 0")
    n_repeats = check_int(n_repeats, "n_repeats", minimum=1)
    if coherence is not None and coherence not in _COHERENCE:
        raise ValueError(f"coherence must be one of {sorted(_COHERENCE)} or None, got "
                         f"{coherence!r}")
    X_train = check_count_matrix(X_train, "X_train")
    X_heldout = check_count_matrix(X_heldout, "X_heldout")
    V = X_train.shape[1]
    if X_heldout.shape[1] != V:
        raise ValueError(f"X_heldout has {X_heldout.shape[1]} words but X_train has {V}: "
                         "they must share the vocabulary")
    score = None if coherence is None else globals()[_COHERENCE[coherence]]
    top = min(check_int(top_n, "top_n", minimum=2), V)

    def evaluate(model):
        ppl = _heldout_perplexity(model, X_heldout)
        coh = np.nan if score is None else score(X_heldout, model.topic_word_, top_n=top)
        return ppl, coh

    np_ppl = np_coh = np.nan
    if nonprivate is not None:
        np_ppl, np_coh = evaluate(nonprivate.fit(X_train))

    from .accounting import BudgetAccountant
    composed = None
    rows = {k: [] for k in ("epsilon", "epsilon_reported", "perplexity", "perplexity_std",
                            "coherence", "coherence_std", "uniform_perplexity",
                            "nonprivate_perplexity", "nonprivate_coherence", "total_epsilon")}
    for eps in eps_list:
        ppl, coh, reported = [], [], []
        for _ in range(n_repeats):
            model = make_estimator(eps)
            if fit is None:
                model.fit(X_train)
            else:
                fit(model, X_train)
            report = getattr(model, "privacy_", None)
            if report is None:
                raise ValueError(f"{type(model).__name__} set no privacy_ report after fit: "
                                 "make_estimator must build a private model")
            if budget is not None:
                budget.spend(model, label=f"privacy-utility curve, epsilon={eps:g}")
            if composed is None:
                composed = BudgetAccountant(1e300, budget.delta if budget is not None
                                            else report.default_delta)
            composed.spend(model)
            # at the report's delta, as its guarantee line (a pure-DP event may be tighter
            # there than its pure epsilon)
            reported.append(report.epsilon(report.default_delta))
            p, c = evaluate(model)
            ppl.append(p)
            coh.append(c)
        rows["epsilon"].append(eps)
        rows["epsilon_reported"].append(float(np.mean(reported)))
        rows["perplexity"].append(float(np.mean(ppl)))
        rows["perplexity_std"].append(float(np.std(ppl)))
        rows["coherence"].append(float(np.mean(coh)))
        rows["coherence_std"].append(float(np.std(coh)) if score is not None else np.nan)
        rows["uniform_perplexity"].append(float(V))
        rows["nonprivate_perplexity"].append(float(np_ppl))
        rows["nonprivate_coherence"].append(float(np_coh))
        rows["total_epsilon"].append(float(composed.spent))
    try:
        import pandas as pd
    except ImportError:
        return rows
    return pd.DataFrame(rows)
