"""Attacker's-eye tests of the output-perturbation, vocabulary, pipeline and local-DP code:
replay (secret randomness), exact noise on a grid, neighbour invariance of everything that
is not a privatized value, noise checked against the recorded event, empirical epsilon."""
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats
from sklearn.base import BaseEstimator
from sklearn.decomposition import NMF

from _planted import FixedTopics
from dptm.exceptions import NotHardenedWarning, SeededPrivacyWarning
from dptm.local import randomize, randomize_matrix
from dptm.mechanisms import round_to_lattice
from dptm.models.local import LocalDPLDA, OnlineLocalDPLDA
from dptm.models.topicdp import TopicDP
from dptm.pipeline import FullyPrivateTopicModel
from dptm.testing import epsilon_lower_bound
from dptm.vocab import DPVocabulary

_SECRET_TYPES = (np.random.Generator, np.random.BitGenerator, np.random.SeedSequence)


def find_secrets(obj, path="model", seen=None):
    """Paths of every generator, bit generator or seed sequence reachable from ``obj``."""
    seen = set() if seen is None else seen
    if id(obj) in seen or isinstance(obj, (str, bytes, int, float, np.ndarray)):
        return []
    seen.add(id(obj))
    if isinstance(obj, _SECRET_TYPES):
        return [path]
    out = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += find_secrets(v, f"{path}[{k!r}]", seen)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            out += find_secrets(v, f"{path}[{i}]", seen)
    elif hasattr(obj, "__dict__"):
        for k, v in vars(obj).items():
            out += find_secrets(v, f"{path}.{k}", seen)
    return out


def assert_no_secrets(model):
    assert find_secrets(model) == []
    assert find_secrets(pickle.loads(pickle.dumps(model))) == []
    assert model.get_params(deep=False).get("random_state") is None


class ColumnTopics(BaseEstimator):
    """A one-topic "model": the normalised column sums of X plus 1 (a data-dependent
    topic-word matrix with entries far from 0)."""

    def __init__(self, random_state=None):
        self.random_state = random_state

    def fit(self, X, y=None):
        X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)
        self.components_ = (X.sum(axis=0) + 1.0).reshape(1, -1)
        return self


@pytest.fixture(scope="module")
def counts():
    rng = np.random.default_rng(0)
    return rng.poisson(3.0, size=(30, 12))


# ----------------------------------------------------------------------------- replay
def test_topicdp_two_default_fits_differ_everywhere_and_keep_no_secret(counts):
    W = np.random.default_rng(1).dirichlet(np.full(50, 20.0), size=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SeededPrivacyWarning)      # default: no test mode
        a = TopicDP(FixedTopics(W), sensitivity=1e-4).fit(counts)
        b = TopicDP(FixedTopics(W), sensitivity=1e-4).fit(counts)
    assert np.all(a.components_ > 0) and np.all(b.components_ > 0)
    # undo the secret row permutations (noise ~4e-4, rows ~4e-3 apart), then compare: fresh
    # noise in every entry, up to chance coincidences on the lattice (an entry coincides
    # with probability ~1 / (2 sqrt(pi) sigma / g) < 4e-5; <= 3 of 200 at 1e-6)
    rows_a = a.components_[((a.components_[:, None] - W) ** 2).sum(2).argmin(0)]
    rows_b = b.components_[((b.components_[:, None] - W) ** 2).sum(2).argmin(0)]
    assert np.abs(rows_a - W).max() < 5e-3 and np.abs(rows_b - W).max() < 5e-3
    assert np.sum(rows_a == rows_b) <= 3
    nmf = TopicDP(NMF(2, max_iter=50, random_state=0), sensitivity=0.01).fit(counts)
    for model in (a, nmf):
        assert_no_secrets(model)
        assert not model.privacy_.seeded
    assert nmf.estimator_.random_state == 0       # the caller's value, no derived seed


def test_topicdp_seed_is_a_labelled_test_mode(counts):
    with pytest.warns(SeededPrivacyWarning, match="TopicDP"):
        dp = TopicDP(ColumnTopics(), sensitivity=0.01, random_state=3).fit(counts)
    assert str(dp.privacy_).startswith("TEST MODE")
    with pytest.warns(SeededPrivacyWarning):
        again = TopicDP(ColumnTopics(), sensitivity=0.01, random_state=3).fit(counts)
    np.testing.assert_array_equal(dp.components_, again.components_)


def test_float_mechanisms_are_explicit_and_labelled(counts):
    for mech in ("gaussian-float", "laplace-float"):
        with pytest.warns(NotHardenedWarning, match="floating-point"):
            dp = TopicDP(ColumnTopics(), mechanism=mech, sensitivity=0.01).fit(counts)
        assert "not hardened" in str(dp.privacy_) and dp.lattice_granularity_ is None


def test_vocabulary_and_pipeline_keep_no_secret():
    docs = [["alpha", "beta"], ["beta", "gamma"]] * 50
    v = DPVocabulary(2.0, 1e-5, max_contribution=5).fit(docs)
    assert_no_secrets(v)
    f = FullyPrivateTopicModel(DPVocabulary(2.0, 1e-5, max_contribution=5),
                               TopicDP(NMF(2, max_iter=30), sensitivity=0.05)).fit(docs)
    assert_no_secrets(f)
    assert_no_secrets(f.vocabulary_stage_) is None and f.model_.random_state is None


def test_local_randomizer_is_fresh_and_secret_per_call():
    doc = list(range(0, 400, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error", SeededPrivacyWarning)
        a, b = randomize(doc, 400, 0.5), randomize(doc, 400, 0.5)
        m1, m2 = randomize_matrix(np.eye(50), 0.5), randomize_matrix(np.eye(50), 0.5)
    assert (a != b).nnz > 0 and (m1 != m2).nnz > 0
    with pytest.warns(SeededPrivacyWarning, match="randomize"):
        c = randomize(doc, 400, 0.5, rng=1)
    with pytest.warns(SeededPrivacyWarning):
        assert (c != randomize(doc, 400, 0.5, rng=1)).nnz == 0


def test_local_server_seed_is_post_processing():
    # The server's random_state seeds only post-processing of the clients' noisy vectors:
    # it is not a test mode (no warning, report not seeded) and the report says why.
    noisy = randomize_matrix(np.eye(40, dtype=int)[np.arange(200) % 40], 0.3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SeededPrivacyWarning)
        m = LocalDPLDA(3, flip_probability=0.3, max_iter=3, random_state=0).fit(noisy)
    assert not m.privacy_.seeded and "is not secret" in str(m.privacy_)


# ----------------------------------------------------------------------------- the grid
@pytest.mark.parametrize("mechanism", ["gaussian", "laplace", "mvg"])
def test_topicdp_releases_lie_on_the_lattice_whatever_the_input(counts, mechanism):
    rng = np.random.default_rng(2)
    W = np.vstack([rng.random(40) * 1e-9 + 1e-3, np.r_[np.zeros(20), rng.random(20) * 0.1],
                   rng.random(40) * 37.123456789])
    dp = TopicDP(FixedTopics(W), mechanism=mechanism, sensitivity=0.05).fit(counts)
    g = dp.lattice_granularity_
    k = dp.components_ / g
    assert np.array_equal(k, np.rint(k))
    assert dp.privacy_.event.discrete if mechanism != "mvg" else True


def test_topicdp_laplace_noise_against_the_ledger(counts):
    # |noise| of a Laplace(b) is Exponential(b): KS test against the scale read from the
    # recorded event (false-alarm rate 1e-6) on a 3 x 3000 data-independent matrix whose
    # entries are far above the noise.
    W = np.full((3, 3000), 1.0)
    dp = TopicDP(FixedTopics(W * 1e6), mechanism="laplace", target_epsilon=1e6).fit(counts)
    ev = dp.privacy_.event
    g = dp.lattice_granularity_
    rows = round_to_lattice(np.full((3, 3000), 1.0 / 3000), g)
    noise = (dp.components_ - rows).ravel()
    assert np.array_equal(noise / g, np.rint(noise / g)) and np.all(dp.components_ > 0)
    assert stats.kstest(np.abs(noise), stats.expon(scale=ev.scale).cdf).pvalue > 1e-6
    assert ev.scale == pytest.approx(ev.sensitivity / 1e6, rel=1e-6)


# ----------------------------------------------------------------------------- neighbours
def _release_meta(rel):
    """Every field of a Release that is not a privatized value."""
    return {"model": rel.model, "doc_topic_prior": rel.doc_topic_prior,
            "vocabulary": rel.vocabulary, "hyperparameters": rel.hyperparameters,
            "transform_seed": rel.transform_seed, "transform_max_iter": rel.transform_max_iter,
            "privacy": rel.privacy.to_dict(), "state": rel.privacy.to_state(),
            "shape": rel.topic_word.shape}


@pytest.mark.parametrize("kw", [dict(sensitivity=0.02), dict(reference=True, gamma=0.4),
                                dict(mechanism="laplace")], ids=["bound", "reference", "laplace"])
def test_topicdp_neighbour_invariance(counts, kw):
    kw = dict(kw)
    if kw.pop("reference", False):
        kw["reference_X"] = np.random.default_rng(9).poisson(3.0, size=(30, 12))
    X0, X1 = counts, counts[1:]                       # one user (document) removed
    vocab = [f"w{i}" for i in range(12)]
    with pytest.warns(SeededPrivacyWarning):
        a = TopicDP(NMF(2, max_iter=30), random_state=5, **kw).fit(X0)
    with pytest.warns(SeededPrivacyWarning):
        b = TopicDP(NMF(2, max_iter=30), random_state=5, **kw).fit(X1)
    assert _release_meta(a.release(vocab)) == _release_meta(b.release(vocab))
    assert not np.array_equal(a.components_, b.components_)


def test_topicdp_paper_mode_fails_neighbour_invariance(counts):
    # The reason the paper's mode is not DP: its report differs between neighbours.
    kw = dict(sensitivity="sample-private", gamma=0.4, random_state=5)
    with pytest.warns(SeededPrivacyWarning):
        a = TopicDP(NMF(2, max_iter=30), **kw).fit(counts)
        b = TopicDP(NMF(2, max_iter=30), **kw).fit(counts[1:])
    assert a.privacy_.to_dict() != b.privacy_.to_dict()
    assert "not DP; Delta_s is revealed" in str(a.privacy_)


def test_dp_vocabulary_neighbour_invariance():
    common = [["alpha", "beta"], ["beta", "gamma"], ["alpha", "gamma"]] * 100
    with pytest.warns(SeededPrivacyWarning):
        a = DPVocabulary(2.0, 1e-5, max_contribution=5, alpha=20.0, random_state=1).fit(common)
    with pytest.warns(SeededPrivacyWarning):
        b = DPVocabulary(2.0, 1e-5, max_contribution=5, alpha=20.0, random_state=1).fit(
            common + [["alpha", "secret"]])
    assert a.vocabulary_.tolist() == b.vocabulary_.tolist() == ["alpha", "beta", "gamma"]
    assert a.privacy_.to_dict() == b.privacy_.to_dict()
    assert a.privacy_.vocabulary.startswith("DP-selected (epsilon=2")


def test_fdptm_neighbour_invariance():
    docs = ["storm flood rain river", "vote poll senate candidate"] * 150
    stage = dict(vocabulary=DPVocabulary(3.0, 1e-5, max_contribution=10, alpha=30.0),
                 model=TopicDP(NMF(2, max_iter=30), target_epsilon=3.0, target_delta=1e-5,
                               sensitivity=0.05))
    with pytest.warns(SeededPrivacyWarning):
        a = FullyPrivateTopicModel(random_state=2, **stage).fit(docs)
    with pytest.warns(SeededPrivacyWarning):
        b = FullyPrivateTopicModel(random_state=2, **stage).fit(docs + ["storm zyxwv"])
    assert _release_meta(a.release()) == _release_meta(b.release())
    assert a.release().vocabulary_provenance.startswith("DP-selected")


@pytest.mark.parametrize("online", [False, True])
def test_local_models_neighbour_invariance(online):
    # local adjacency: one client's document replaced by another
    X0 = np.eye(20, dtype=int)[np.arange(120) % 20]
    X1 = X0.copy()
    X1[0] = 1
    f = 0.4
    with pytest.warns(SeededPrivacyWarning):
        n0, n1 = randomize_matrix(X0, f, random_state=3), randomize_matrix(X1, f, random_state=3)
    make = (lambda: OnlineLocalDPLDA(3, flip_probability=f, batch_size=40, max_iter=3,
                                     random_state=1)) if online else \
        (lambda: LocalDPLDA(3, flip_probability=f, max_iter=3, random_state=1))
    a, b = make().fit(n0), make().fit(n1)
    vocab = [f"w{i}" for i in range(20)]
    assert _release_meta(a.release(vocab)) == _release_meta(b.release(vocab))
    assert a.release(vocab).vocabulary_provenance == "public (given)"


# ----------------------------------------------------------------------------- the randomizer
def test_randomizer_flip_rate_against_the_ledger_and_empirical_epsilon(monkeypatch):
    """The clients' randomizer flips each bit with probability f/2, f read from the
    RandomizedResponseEvent the server model records (binomial test, false alarm 1e-6 on
    each side). On the worst-case neighbours (one presence bit on / off) the Clopper-Pearson
    lower bound on epsilon (confidence 1 - 1e-6) stays below the event's epsilon, and exceeds
    it when the flip probability is halved (positive control)."""
    from dptm import local
    eps = 1.0
    f = local.f_from_epsilon(eps)
    n = 40000
    noisy = randomize_matrix(np.ones((n, 1), dtype=int), f)
    model = LocalDPLDA(1, flip_probability=f, neighbouring="word", max_iter=2).fit(
        sp.vstack([noisy, randomize_matrix(np.zeros((n, 1), dtype=int) + 0, f)]))
    ev = model.privacy_.event
    assert ev.f == f and ev.epsilon == pytest.approx(eps)
    on = noisy.toarray().ravel()
    off = randomize_matrix(sp.csr_matrix((n, 1), dtype=int), f).toarray().ravel()
    assert stats.binomtest(int(n - on.sum()), n, ev.f / 2).pvalue > 1e-6
    assert stats.binomtest(int(off.sum()), n, ev.f / 2).pvalue > 1e-6
    assert epsilon_lower_bound(on, off, confidence=1 - 1e-6) < ev.epsilon
    real = local._bernoulli_positions
    monkeypatch.setattr(local, "_bernoulli_positions", lambda m, p, rng: real(m, p / 2, rng))
    on_h = randomize_matrix(np.ones((n, 1), dtype=int), f).toarray().ravel()
    off_h = randomize_matrix(sp.csr_matrix((n, 1), dtype=int), f).toarray().ravel()
    assert epsilon_lower_bound(on_h, off_h, confidence=1 - 1e-6) > ev.epsilon


# ----------------------------------------------------------------------------- work size
def test_topicdp_refuses_a_hang_before_any_fit(counts):
    class Exploding(ColumnTopics):
        def fit(self, X, y=None):
            raise AssertionError("no fit may start")

    with pytest.raises(ValueError, match=r"gamma=0\.001 needs h=5,486,187 refits.*max_refits"):
        TopicDP(Exploding(), gamma=1e-3, reference_X=counts).fit(counts)
    with pytest.raises(ValueError, match="h=1,305.*max_refits=1,000"):
        TopicDP(Exploding(), gamma=0.05, reference_X=counts, max_refits=1000).fit(counts)


def test_topicdp_progress_counts_refits_without_timings(counts, caplog):
    import logging
    TopicDP(ColumnTopics(), gamma=0.3, reference_X=counts, verbose=1).fit(counts)
    lines = caplog.messages
    assert lines[-1] == "[TopicDP] sensitivity sampling (reference): 24/24 refits"
    assert "24 refits (gamma=0.3)" in caplog.text
    assert not any(" s)" in line or "seconds" in line for line in lines)
    caplog.clear()
    # verbose=None: logged at INFO, nothing configured: shown only if the application's
    # logging lets INFO through (never decided by how long the private fit takes)
    TopicDP(ColumnTopics(), gamma=0.3, reference_X=counts).fit(counts)
    assert caplog.messages == []
    with caplog.at_level(logging.INFO, logger="dptm"):
        TopicDP(ColumnTopics(), gamma=0.3, reference_X=counts).fit(counts)
    assert "24/24 refits" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="dptm"):
        TopicDP(ColumnTopics(), gamma=0.3, reference_X=counts, verbose=0).fit(counts)
    assert caplog.messages == []


# ----------------------------------------------------------------------------- publishing
def test_topicdp_release_round_trip_with_vocabulary(counts, tmp_path):
    from dptm.release import Release
    dp = TopicDP(NMF(2, max_iter=30), sensitivity=0.05).fit(counts)
    words = [f"w{i}" for i in range(12)]
    rel = dp.release(words)
    assert rel.vocabulary == words and rel.vocabulary_provenance == "public (given)"
    assert "random_state" not in rel.hyperparameters and rel.model == "TopicDP"
    np.testing.assert_array_equal(rel.components, dp.components_)
    loaded = Release.load(rel.save(tmp_path / "topicdp"))
    assert loaded == rel
    np.testing.assert_array_equal(loaded.transform(counts[:3]), rel.transform(counts[:3]))
    assert any(a.startswith("vocabulary (V = 12") for a in loaded.privacy.assumed_public)


def test_topicdp_warnings_do_not_follow_the_private_base_fit():
    # NMF does not converge in 30 iterations on X, but does on X plus one document holding
    # a count of 1e6: before the fix its ConvergenceWarning told the two apart
    # (dptm fit and any log show it). With a public sensitivity bound nothing else reads
    # the data, so the warnings must be the same.
    X = np.random.default_rng(0).poisson(0.8, (40, 12)).astype(np.int64)
    doc = np.zeros((1, 12), dtype=np.int64)
    doc[0, 5] = 10 ** 6
    seen = []
    for data in (X, np.vstack([X, doc])):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            TopicDP(NMF(2, max_iter=30), sensitivity=0.05).fit(sp.csr_matrix(data))
        seen.append(sorted(f"{x.category.__name__}: {x.message}" for x in w))
    assert seen[0] == seen[1]
    # the base fit itself warns on one neighbour only (else the test sees nothing)
    warned = []
    for data in (X, np.vstack([X, doc])):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            NMF(2, max_iter=30).fit(sp.csr_matrix(data))
        warned.append(any("Convergence" in x.category.__name__ for x in w))
    assert warned == [True, False]
