"""Fits validate their input once (issue #16 follow-up): ``check_count_matrix`` runs once
per ``fit`` / ``fit_distributed`` on the data, the corpus is then built from the validated
matrix (``Corpus._from_counts``) without a second pass, and every bad-input error and the
int32 token limit are those of the single validation."""
import numpy as np
import pytest
import scipy.sparse as sp

import dptm.corpus as corpus_mod
import dptm.distributed as ddist
import dptm.models.gibbs as gibbs_mod
from dptm import GibbsLDA, LocalDPLDA, NoisyGibbsLDA, SubsampledGibbsLDA
from dptm._utils import INT32_MAX, check_count_matrix
from dptm.corpus import Corpus
from dptm.datasets import make_lda_corpus
from dptm.distributed import fit_distributed

pytestmark = [pytest.mark.filterwarnings("ignore::dptm.exceptions.SeededPrivacyWarning"),
              pytest.mark.filterwarnings("ignore::dptm.exceptions.VacuousGuaranteeWarning")]


@pytest.fixture(scope="module")
def X():
    return make_lda_corpus(30, 20, 3, doc_length=(5, 20), random_state=0)[0]


def count_validations(monkeypatch, *modules):
    """Every module's ``check_count_matrix`` replaced by a counting wrapper; returns the
    list the calls' data shapes are appended to."""
    calls = []

    def counting(X, *args, **kwargs):
        calls.append(np.shape(X))
        return check_count_matrix(X, *args, **kwargs)
    for mod in modules:
        monkeypatch.setattr(mod, "check_count_matrix", counting)
    return calls


def test_gibbs_fit_validates_once(X, monkeypatch):
    ref = GibbsLDA(3, max_iter=3, random_state=0).fit(X)
    calls = count_validations(monkeypatch, gibbs_mod, corpus_mod)
    got = GibbsLDA(3, max_iter=3, random_state=0).fit(X)
    assert calls == [X.shape]
    np.testing.assert_array_equal(got.components_, ref.components_)
    np.testing.assert_array_equal(got.doc_topic_, ref.doc_topic_)
    assert got.n_features_in_ == X.shape[1]


@pytest.mark.parametrize("make", [
    lambda: NoisyGibbsLDA(3, clip=20, max_iter=2, random_state=0),
    lambda: SubsampledGibbsLDA(3, sample_rate=0.5, clip=20, max_iter=2, random_state=0)])
def test_private_gibbs_fit_validates_once(X, make, monkeypatch):
    calls = count_validations(monkeypatch, gibbs_mod, corpus_mod)
    make().fit(X)
    assert calls == [X.shape]


def test_fit_distributed_gibbs_validates_once(X, monkeypatch):
    ref = fit_distributed(NoisyGibbsLDA(3, clip=20, max_iter=2, random_state=0), X, "serial",
                          n_partitions=2)
    calls = count_validations(monkeypatch, ddist, corpus_mod)
    got = fit_distributed(NoisyGibbsLDA(3, clip=20, max_iter=2, random_state=0), X, "serial",
                          n_partitions=2)
    assert calls == [X.shape]
    np.testing.assert_array_equal(got.components_, ref.components_)
    np.testing.assert_array_equal(got.doc_topic_, ref.doc_topic_)


def test_local_dp_fit_validates_its_reconstruction_once(monkeypatch):
    bits = (np.random.default_rng(0).random((40, 15)) < 0.3).astype(np.int8)
    calls = count_validations(monkeypatch, gibbs_mod, corpus_mod)
    LocalDPLDA(2, flip_probability=0.2, max_iter=2, random_state=0).fit(bits)
    assert len(calls) == 1                  # the reconstructed counts, in GibbsLDA.fit


def test_distributed_partition_without_tokens(X):
    # a partition whose rows are all empty: its corpus has no token, the fit goes on
    Xz = sp.vstack([sp.csr_matrix((5, X.shape[1]), dtype=np.int64), X]).tocsr()
    m = fit_distributed(NoisyGibbsLDA(3, clip=20, max_iter=2, random_state=0), Xz, "serial",
                        n_partitions=6)
    assert m.doc_topic_.shape == (Xz.shape[0], 3)


@pytest.mark.parametrize("bad, match", [
    (np.array([[1, -1], [2, 0]]), "Negative values"),
    (np.array([[1.5, 1], [2, 0]]), "integer counts"),
    (np.array([[np.nan, 1], [2, 0]]), "NaN"),
    (np.zeros((2, 3)), "no tokens"),
    (np.array([[INT32_MAX, 1]], dtype=np.int64), "X holds more tokens than the Gibbs kernels"),
])
def test_bad_input_errors_are_kept(bad, match):
    for est in (GibbsLDA(2, max_iter=1), NoisyGibbsLDA(2, clip=5, max_iter=1, random_state=0)):
        with pytest.raises(ValueError, match=match):
            est.fit(bad)


def test_from_counts_needs_the_validated_matrix():
    A = np.array([[1, 0, 2], [0, 0, 0], [3, 1, 0]])
    ref = Corpus.from_matrix(A)
    got = Corpus._from_counts(check_count_matrix(A))
    np.testing.assert_array_equal(got.doc_ptr, ref.doc_ptr)
    np.testing.assert_array_equal(got.word_ids, ref.word_ids)
    np.testing.assert_array_equal(got.doc_ptr, [0, 3, 3, 7])
    np.testing.assert_array_equal(got.word_ids, [0, 2, 2, 0, 0, 0, 1])
    for raw in (A, sp.csr_matrix(A.astype(np.float64)), sp.csc_matrix(A)):
        with pytest.raises(TypeError, match="check_count_matrix"):
            Corpus._from_counts(raw)
    with pytest.raises(ValueError, match="int32"):
        Corpus._from_counts(sp.csr_matrix(np.array([[INT32_MAX, 1]], dtype=np.int64)))
    empty = Corpus._from_counts(sp.csr_matrix((2, 3), dtype=np.int64))
    assert (empty.n_docs, empty.n_tokens, empty.n_words) == (2, 0, 3)


def test_transform_perplexity_score_validate_once(X, monkeypatch):
    """``transform``, ``perplexity`` and ``score`` of a model and of its ``Release``, and
    ``dptm.metrics.perplexity`` / ``release.fold_in``, validate X once (they validated it
    2-4 times: ``SubsampledGibbsLDA``'s stopping rule calls ``perplexity`` every iteration),
    with the same results."""
    import dptm.metrics as metrics_mod
    import dptm.models._base as base_mod
    import dptm.release as release_mod
    m = GibbsLDA(3, max_iter=3, random_state=0).fit(X)
    rel = m.release()
    ref = [m.transform(X), m.perplexity(X), m.score(X), rel.transform(X), rel.perplexity(X),
           metrics_mod.perplexity(X, m.transform(X), m.topic_word_),
           release_mod.fold_in(m.topic_word_, X, 0.5, 10, 3)]
    calls = count_validations(monkeypatch, corpus_mod, metrics_mod, base_mod, release_mod,
                              gibbs_mod)
    got = []
    for f in (lambda: m.transform(X), lambda: m.perplexity(X), lambda: m.score(X),
              lambda: rel.transform(X), lambda: rel.perplexity(X),
              lambda: metrics_mod.perplexity(X, ref[0], m.topic_word_),
              lambda: release_mod.fold_in(m.topic_word_, X, 0.5, 10, 3)):
        calls.clear()
        got.append(f())
        assert calls == [X.shape]
    for a, b in zip(ref, got):
        np.testing.assert_array_equal(a, b)
    # bad input still refused with the parameter named, through each entry point
    bad = X.toarray().astype(float)
    bad[0, 0] = 0.5
    for f in (m.transform, m.perplexity, m.score, rel.transform, rel.perplexity,
              lambda Y: release_mod.fold_in(m.topic_word_, Y, 0.5, 10, 3)):
        with pytest.raises(ValueError, match="X"):
            f(bad)
