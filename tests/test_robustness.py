"""Robustness at real scale (issue 17): read-only and memory-mapped inputs, input never
mutated, counts beyond the kernels' integer types, float16 / np.matrix input, a parallel
audit on a corpus above joblib's memory-mapping threshold."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from dptm._utils import INT32_MAX, check_count_matrix
from dptm.attacks import zeta
from dptm.corpus import Corpus
from dptm.datasets import make_lda_corpus
from dptm.exceptions import PrivacyWarning

K = 3


@pytest.fixture(scope="module")
def counts():
    X = sp.csr_matrix(make_lda_corpus(40, 30, K, doc_length=30, random_state=0)[0])
    return X.astype(np.int64)


def _readonly(M):
    M = M.copy()
    if sp.issparse(M):
        for a in (M.data, M.indices, M.indptr):
            a.flags.writeable = False
    else:
        M.flags.writeable = False
    return M


def _forms(X, tmp_path):
    """The same corpus as read-only CSR, CSC, dense and an np.load(mmap_mode='r') array."""
    path = tmp_path / "X.npy"
    np.save(path, X.toarray())
    return {
        "csr": _readonly(X.tocsr()),
        "csc": _readonly(X.tocsc()),
        "dense": _readonly(X.toarray()),
        "mmap": np.load(path, mmap_mode="r"),
    }


def _snapshot(M):
    if sp.issparse(M):
        return (M.format, M.data.copy(), M.indices.copy(), M.indptr.copy())
    return np.array(M, copy=True)


def _unchanged(M, snap):
    if sp.issparse(M):
        assert M.format == snap[0]
        for a, b in zip((M.data, M.indices, M.indptr), snap[1:]):
            np.testing.assert_array_equal(a, b)
    else:
        np.testing.assert_array_equal(np.asarray(M), snap)


def _estimators():
    from dptm.models.gibbs import GibbsLDA
    from dptm.models.topicdp import TopicDP
    from dptm.models.private_gibbs import NoisyGibbsLDA, SubsampledGibbsLDA
    from dptm.models.svi import PrivateOnlineLDA
    return {
        "GibbsLDA": lambda: GibbsLDA(K, max_iter=3, random_state=0),
        "NoisyGibbsLDA": lambda: NoisyGibbsLDA(K, max_iter=3, random_state=0),
        "SubsampledGibbsLDA": lambda: SubsampledGibbsLDA(K, max_iter=3, random_state=0),
        "PrivateOnlineLDA": lambda: PrivateOnlineLDA(K, batch_size=10, max_iter=2,
                                                     noise_multiplier=1.0, max_doc_length=50,
                                                     total_samples=40, random_state=0),
        "TopicDP": lambda: TopicDP(GibbsLDA(K, max_iter=3), target_epsilon=3.0,
                                   target_delta=1e-4, sensitivity=0.05, random_state=0),
    }


@pytest.mark.parametrize("form", ["csr", "csc", "dense", "mmap"])
@pytest.mark.parametrize("name", sorted(_estimators()))
def test_estimators_accept_read_only_input_and_leave_it_unchanged(name, form, counts, tmp_path):
    X = _forms(counts, tmp_path)[form]
    snap = _snapshot(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        est = _estimators()[name]().fit(X)
        theta = est.transform(X)
    assert theta.shape == (counts.shape[0], K) and np.all(np.isfinite(theta))
    _unchanged(X, snap)


@pytest.mark.parametrize("form", ["csr", "csc", "dense", "mmap"])
def test_local_models_accept_read_only_input(form, counts, tmp_path):
    from dptm.local import randomize_matrix
    from dptm.models.local import OnlineLocalDPLDA
    bits = randomize_matrix(counts, 0.2, random_state=0)
    X = _forms(bits.astype(np.int64), tmp_path)[form]
    snap = _snapshot(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        prior = _readonly(counts)
        OnlineLocalDPLDA(K, flip_probability=0.2, batch_size=20, max_iter=2,
                         random_state=0).fit_prior(prior)
    _unchanged(X, snap)


@pytest.mark.parametrize("form", ["csr", "csc", "dense", "mmap"])
def test_zeta_on_read_only_input(form, counts, tmp_path):
    X = _forms(counts, tmp_path)[form]
    snap = _snapshot(X)
    phi = np.random.default_rng(0).dirichlet(np.ones(counts.shape[1]), size=K)
    phi_ro = _readonly(phi)
    np.testing.assert_allclose(zeta(phi_ro, X), zeta(phi, counts.toarray()), rtol=1e-12)
    _unchanged(X, snap)


def test_non_canonical_writable_input_is_not_mutated():
    """Duplicates, unsorted indices and explicit zeros are resolved in a copy."""
    data = np.array([2, 0, 1, 3, 1], dtype=np.int64)
    indices = np.array([3, 1, 0, 3, 2], dtype=np.int32)
    indptr = np.array([0, 3, 5], dtype=np.int32)
    X = sp.csr_matrix((data, indices, indptr), shape=(2, 4))
    snap = _snapshot(X)
    out = check_count_matrix(X)
    _unchanged(X, snap)
    np.testing.assert_array_equal(out.toarray(), [[1, 0, 0, 2], [0, 0, 1, 3]])
    assert out.has_canonical_format and np.all(out.data > 0)
    assert out.dtype == np.int64


def test_canonical_csr_shares_indices_read_only():
    """Copy only what must be copied: a canonical CSR's index arrays are shared (read-only
    views, so nothing downstream can write into the caller's matrix); counts are new."""
    X = sp.csr_matrix(np.array([[1, 0, 2], [0, 3, 0]], dtype=np.int64))
    out = check_count_matrix(X)
    assert np.shares_memory(out.indices, X.indices)
    assert not out.indices.flags.writeable and not out.indptr.flags.writeable
    assert not np.shares_memory(out.data, X.data)
    assert X.indices.flags.writeable  # the caller's arrays keep their flags


# ------------------------------------------------------------------ dtypes and sizes
@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
def test_float16_and_matrix_inputs_are_converted():
    A = np.array([[1, 0, 2], [0, 3, 0]])
    for X in (A.astype(np.float16), np.matrix(A), sp.csr_matrix(A.astype(np.float32)),
              A.astype(bool), A.astype(np.uint64)):
        out = check_count_matrix(X)
        np.testing.assert_array_equal(out.toarray(), A if X.dtype != bool else A > 0)
        assert out.dtype == np.int64


@pytest.mark.parametrize("bad, match", [
    (np.array([[1.0, np.nan]]), "NaN"),
    (np.array([[1.0, np.inf]]), "infinity"),
    (np.array([[1.0, 0.5]]), "fractional"),
    (np.array([[1, -1]]), "Negative"),
    (np.array([[0, 0]]), "no tokens"),
    (np.array([[1.0, 1e300]]), "2\\*\\*63"),
    (np.array([[1, 2 ** 63 + 5]], dtype=np.uint64), "2\\*\\*63"),
    (np.array([[2.0 ** 62, 2.0 ** 62, 2.0 ** 62]]), "total"),
    (np.array([[1 + 1j, 2]]), "Complex"),
])
def test_bad_counts_give_a_clear_error_naming_the_parameter(bad, match):
    with pytest.raises(ValueError, match=match) as info:
        check_count_matrix(bad, name="X_test")
    assert "X_test" in str(info.value) or "2**63" in str(info.value) or "Complex" in str(info.value)
    assert "HistGradientBoosting" not in str(info.value)     # scikit-learn's supervised advice


def test_only_nan_values_get_the_nan_message():
    # scikit-learn's other errors pass through: a column NAMED "NaN" missing at transform
    # is a feature-name mismatch, not a NaN value (review6 F3)
    pd = pytest.importorskip("pandas")
    from dptm import PrivateBatchLDA
    X = pd.DataFrame(np.ones((20, 3), dtype=int), columns=["a", "NaN", "c"])
    model = PrivateBatchLDA(2, target_epsilon=4.0).fit(X)
    with pytest.raises(ValueError) as info:
        model.transform(X.rename(columns={"NaN": "b"}))
    assert "contains NaN or infinity" not in str(info.value)


def test_huge_counts_are_refused_by_every_model_before_allocating():
    """One count of 3e9 (> int32 tokens) and 1e300 (> int64): a ValueError naming X, raised
    before any token array is allocated (tracemalloc peak stays small)."""
    import tracemalloc
    from dptm.models.gibbs import GibbsLDA
    from dptm.models.svi import PrivateOnlineLDA
    X = np.ones((3, 4))
    X[0, 0] = 3e9
    tracemalloc.start()
    with pytest.raises(ValueError, match=r"X holds more tokens than .* \(2,147,483,647\)$"):
        GibbsLDA(2, max_iter=1, random_state=0).fit(X)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 50e6
    X[0, 0] = 1e300
    for est in (GibbsLDA(2, max_iter=1), PrivateOnlineLDA(2, max_iter=1)):
        with pytest.raises(ValueError, match="X holds a count too large") as info:
            est.fit(X)
        assert "300" not in str(info.value)        # the private count is not printed
    with pytest.raises(ValueError, match="2\\*\\*63"):
        zeta(np.full((2, 4), 0.25), np.array([[2 ** 63 + 5, 1, 0, 0]], dtype=np.uint64))


def test_corpus_token_limit_is_the_int32_count_type():
    X = sp.csr_matrix(np.array([[INT32_MAX, 1]], dtype=np.int64))
    with pytest.raises(ValueError, match="int32"):
        Corpus.from_matrix(X)


def test_corpus_copies_the_callers_token_arrays():
    # the caller's arrays stay theirs: changing them afterwards does not change the corpus
    # (nor a later fit's tokens), and nothing the corpus holds is a view of them
    doc_ptr, word_ids = np.array([0, 2, 3]), np.array([0, 2, 1], dtype=np.int32)
    corpus = Corpus(doc_ptr, word_ids, 3)
    assert not np.shares_memory(corpus.word_ids, word_ids)
    assert not np.shares_memory(corpus.doc_ptr, doc_ptr)
    word_ids[0], doc_ptr[1] = 2, 1
    assert corpus.word_ids.tolist() == [0, 2, 1] and corpus.doc_ptr.tolist() == [0, 2, 3]


@pytest.mark.parametrize("word_ids", [[0, 3], [-1, 0]], ids=["V", "negative"])
def test_corpus_refuses_word_ids_outside_the_vocabulary(word_ids):
    # catches the bound off by one (fresh round 5, J67): id V would index one past the
    # kernels' topic-word counts; V - 1 is the largest accepted
    with pytest.raises(ValueError, match=r"word_ids must lie in \[0, n_words=3\)"):
        Corpus(np.array([0, 2]), np.array(word_ids), 3)
    assert Corpus(np.array([0, 2]), np.array([0, 2]), 3).n_words == 3


# ------------------------------------------------------------------ parallel audit on KOS
def test_parallel_audit_on_kos_with_joblibs_default_backend(kos):
    """joblib memory-maps arrays above 1 MB read-only for its workers: KOS (3430 documents,
    ~2.8 MB of counts) goes through that path with n_jobs=2 and the default backend."""
    from dptm.attacks import audit
    from dptm.models.gibbs import GibbsLDA
    X, _ = kos
    assert X.data.astype(np.int64).nbytes > 2e6
    res = audit(GibbsLDA(2, max_iter=2), X, n_shadows=4, baselines=False, n_jobs=2,
                random_state=0)
    scores = np.asarray(res.scores[next(iter(res.scores))])
    assert scores.shape[0] == X.shape[0] and np.all(np.isfinite(scores))


# ------------------------------------------------------------------ attack helpers
def test_theta_statistics_reject_bad_theta():
    from dptm.attacks import logit_max, negative_entropy, topic_std
    good = np.array([[0.5, 0.5], [1.0, 0.0]])
    for f in (negative_entropy, topic_std, logit_max):
        assert np.all(np.isfinite(f(good)))
        assert np.isfinite(f(good[0]))
        with pytest.raises(ValueError, match="theta contains NaN"):
            f(np.array([[0.5, np.nan]]))
        with pytest.raises(ValueError, match="theta must be non-negative"):
            f(np.array([[1.5, -0.5]]))
        with pytest.raises(ValueError, match="theta rows must sum to 1"):
            f(np.array([[0.2, 0.2]]))
        with pytest.raises(ValueError, match="theta must be 1-D .* or 2-D"):
            f(np.ones((2, 2, 2)) / 2)
        with pytest.raises(ValueError, match="theta must be 2-D with at least one row"):
            f(np.zeros((0, 3)))


def _trace(V=5, K=3, T=4, n=6, seed=0):
    rng = np.random.default_rng(seed)
    return {"snapshots": [rng.integers(0, 5, size=(V, K)).astype(float) for _ in range(T)],
            "topics": rng.integers(0, K, size=(T, n))}


def test_topic_based_attack_rejects_bad_topic_ids_and_shapes():
    from dptm.attacks import topic_based_attack
    tr = _trace()
    res = topic_based_attack(tr, true_words=np.zeros(6, dtype=int))
    assert np.all(np.isfinite(res.log_posterior))
    bad = dict(tr, topics=tr["topics"].copy())
    bad["topics"][0, 0] = -1  # used to index the last topic silently
    with pytest.raises(ValueError, match=r"trace\['topics'\] must hold ids in \[0, 3\), got -1"):
        topic_based_attack(bad)
    bad["topics"][0, 0] = 3
    with pytest.raises(ValueError, match=r"ids in \[0, 3\), got 3"):
        topic_based_attack(bad)
    with pytest.raises(TypeError, match="integer ids"):
        topic_based_attack(dict(tr, topics=tr["topics"] + 0.5))
    with pytest.raises(ValueError, match=r"true_words must hold ids in \[0, 5\), got -1"):
        topic_based_attack(tr, true_words=np.full(6, -1))
    snaps = list(tr["snapshots"])
    snaps[1] = snaps[1][:, :2]
    with pytest.raises(ValueError, match=r"snapshots'\]\[1\] has shape"):
        topic_based_attack(dict(tr, snapshots=snaps))
    snaps = list(tr["snapshots"])
    snaps[2] = snaps[2].copy()
    snaps[2][0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        topic_based_attack(dict(tr, snapshots=snaps))


def test_zeta_rejects_bad_topics_and_parameters():
    X = np.array([[1, 2, 0]])
    phi = np.array([[0.5, 0.5, 0.0], [0.0, 0.5, 0.5]])
    with pytest.raises(ValueError, match="NaN"):
        zeta(np.array([[np.nan, 0.5, 0.5]]), X)
    with pytest.raises(ValueError, match="3 columns"):
        zeta(phi[:, :2], X)
    with pytest.raises(ValueError, match="uncertified"):
        zeta(phi, X, uncertified="maybe")
    with pytest.raises(ValueError, match="floor"):
        zeta(phi, X, floor=2.0)


def test_zeta_refuses_huge_topic_counts_before_allocating():
    """K = 1e5 needs (14 K + K^2) doubles = 75 GiB of kernel scratch: a clear error."""
    import tracemalloc
    phi = sp.random(100_000, 4, density=0.5, format="csr", random_state=0)
    phi = sp.csr_matrix(phi + sp.csr_matrix(np.ones((100_000, 4))) * 1e-3)
    tracemalloc.start()
    with pytest.raises(ValueError, match=r"K = 100000 topics would need 74\.\d GiB"):
        zeta(phi, np.array([[1, 0, 2, 0]]))
    assert tracemalloc.get_traced_memory()[1] < 200e6
    tracemalloc.stop()


def test_zeta_with_many_sparse_topics_is_certified_or_refused():
    """K > V with topics on 3 words each: the solver may stop uncertified; zeta then raises
    a ValueError stating the duality gap, or (uncertified='warn') warns; every value it
    returns without a warning is certified to the relative tolerance."""
    rng = np.random.default_rng(0)
    K, V, D = 200, 50, 12
    phi = np.zeros((K, V))
    for k in range(K):
        s = rng.choice(V, 3, replace=False)
        phi[k, s] = rng.dirichlet(np.full(3, 0.1))
    X = np.zeros((D, V), dtype=np.int64)
    for d in range(D):
        np.add.at(X[d], rng.integers(0, V, size=rng.integers(5, 60)), 1)
    max_iter = 300
    z, theta, n_iter = zeta(phi, X, max_iter=max_iter, return_theta=True, return_n_iter=True,
                            uncertified="ignore")
    gaps = np.array([np.max(phi @ (X[d] / np.maximum(theta[d] @ phi, 1e-300))) - X[d].sum()
                     for d in range(D)])
    uncertified = gaps > 1e-10 * np.abs(z)
    assert np.all(n_iter[uncertified] >= max_iter)  # only truncated solves are uncertified
    assert uncertified.any()  # the instance does exercise the failure
    with pytest.raises(ValueError, match=f"did not certify tol=1e-10 on {uncertified.sum()} of {D}"):
        zeta(phi, X, max_iter=max_iter)
    with pytest.warns(RuntimeWarning, match="duality gap"):
        zeta(phi, X, max_iter=max_iter, uncertified="warn")


def test_raw_text_is_refused_with_advice_and_without_echoing_it():
    """Raw strings where counts are expected: a TypeError that says how to vectorize and
    never repeats the (possibly private) documents."""
    from dptm import GibbsLDA, PrivateBatchLDA
    secret = "the patient's diagnosis was confidential"
    for X in ([secret, "another note"], np.array([secret, "another note"]), secret):
        for est in (PrivateBatchLDA(2), GibbsLDA(2)):
            with pytest.raises(TypeError, match="CountVectorizer") as info:
                est.fit(X)
            assert "diagnosis" not in str(info.value)
