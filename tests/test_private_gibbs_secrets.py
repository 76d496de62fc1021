"""The private Gibbs samplers against a replay attacker and a floating-point attacker.

Replay: whoever holds the pickled default model and its public parameters cannot
regenerate its noise (nothing that could is stored; two default fits on the same data
differ in every released matrix). A seed is a labelled test mode. Floating point: the
default mechanisms release integer snapshots, whatever the counts (zero counts included).
"""
import pickle
import warnings

import numpy as np
import pytest

from dptm import NoisyGibbsLDA, SubsampledGibbsLDA
from dptm.datasets import make_lda_corpus
from dptm.exceptions import NotHardenedWarning, SeededPrivacyWarning, VacuousGuaranteeWarning

MODELS = [(NoisyGibbsLDA, {}), (NoisyGibbsLDA, {"noise_schedule": "first"}),
          (NoisyGibbsLDA, {"noise_schedule": "last"}), (SubsampledGibbsLDA, {"sample_rate": 0.5})]


@pytest.fixture(scope="module")
def X():
    X, _, _ = make_lda_corpus(60, 40, 3, doc_length=30, random_state=0)
    X = X.toarray() if hasattr(X, "toarray") else np.asarray(X)
    X[:, :20] = 0               # words with a zero count everywhere
    return X


def snapshot_event(model):
    """The leaf event of the noisy snapshot in the model's report."""
    (leaf,) = [e for e, _, _, label in model.privacy_.events if label.startswith("noisy snapshot")]
    return leaf


def _secret_objects(obj, seen=None, path="model"):
    """Paths of every generator, bit generator or seed sequence reachable from ``obj``."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return []
    seen.add(id(obj))
    if isinstance(obj, (np.random.Generator, np.random.BitGenerator, np.random.SeedSequence,
                        np.random.RandomState)):
        return [path]
    found = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            found += _secret_objects(v, seen, f"{path}[{k!r}]")
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            found += _secret_objects(v, seen, f"{path}[{i}]")
    elif hasattr(obj, "__dict__"):
        found += _secret_objects(vars(obj), seen, path)
    return found


@pytest.mark.parametrize("cls,kw", MODELS)
def test_replay_attacker_cannot_regenerate_the_noise(X, cls, kw):
    with warnings.catch_warnings():
        warnings.simplefilter("error")            # the default is silent: no test mode
        warnings.simplefilter("ignore", VacuousGuaranteeWarning)     # eps ~ 24 here
        model = cls(3, clip=10, max_iter=3, record_trace=True, **kw).fit(X)
    blob = pickle.dumps(model)
    stolen = pickle.loads(blob)
    # what the attacker holds carries no generator, no seed, no generator state
    assert stolen.get_params()["random_state"] is None
    assert _secret_objects(stolen) == []
    for marker in (b"AESCounter", b"SeedSequence", b"PCG64", b"bit_generator", b"numpy.random"):
        assert marker not in blob
    # replaying the fit with every public parameter gives fresh noise: every released
    # matrix differs (in every row of the release, so no topic is reproduced either)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", VacuousGuaranteeWarning)
        replay = cls(**stolen.get_params()).fit(X)
    for name in ("components_", "topic_word_", "snapshot_"):
        a, b = getattr(stolen, name), getattr(replay, name)
        assert not np.array_equal(a, b), name
    diff = stolen.release().components != replay.release().components
    assert diff.any(axis=1).all()
    for s0, s1 in zip(stolen.trace_["snapshots"], replay.trace_["snapshots"]):
        assert (s0 is None and s1 is None) or not np.array_equal(s0, s1)
    assert stolen.transform_seed_ != replay.transform_seed_     # fresh, not from the fit's seed
    assert not stolen.privacy_.seeded and not str(stolen.privacy_).startswith("TEST MODE")


@pytest.mark.parametrize("cls,kw", MODELS)
@pytest.mark.parametrize("seed", [0, np.random.SeedSequence(5), "generator"])
def test_seed_is_a_labelled_test_mode(X, cls, kw, seed):
    def make_seed():
        return np.random.default_rng(9) if isinstance(seed, str) else seed

    with pytest.warns(SeededPrivacyWarning, match="test mode"):
        a = cls(3, clip=10, max_iter=3, random_state=make_seed(), **kw).fit(X)
    with pytest.warns(SeededPrivacyWarning):
        b = cls(3, clip=10, max_iter=3, random_state=make_seed(), **kw).fit(X)
    np.testing.assert_array_equal(a.components_, b.components_)       # reproducible
    assert a.transform_seed_ == b.transform_seed_
    assert a.privacy_.seeded
    first = str(a.privacy_).splitlines()[0]
    assert first.startswith("TEST MODE") and "seed stays secret" in first
    assert str(a.release().privacy).startswith("TEST MODE")
    assert a.privacy_.to_dict()["seeded"] is True


@pytest.mark.parametrize("cls,mechanism,kw", [
    (NoisyGibbsLDA, "laplace", {}), (NoisyGibbsLDA, "gaussian", {"noise_multiplier": 1.0}),
    (SubsampledGibbsLDA, "gaussian", {})])
def test_floating_point_samplers_are_warned_and_labelled(X, cls, mechanism, kw):
    with pytest.warns(NotHardenedWarning, match="floating-point"):
        m = cls(3, mechanism=mechanism, clip=10, max_iter=2, **kw).fit(X)
    assert "not hardened" in str(m.privacy_)
    leaf = snapshot_event(m)
    assert leaf.discrete is False


@pytest.mark.parametrize("cls,kw", MODELS + [
    (NoisyGibbsLDA, {"mechanism": "discrete_gaussian", "noise_multiplier": 0.7}),
    (NoisyGibbsLDA, {"epsilon_per_iter": 0.37}), (SubsampledGibbsLDA, {"noise_multiplier": 0.3})])
def test_default_and_discrete_releases_lie_on_the_integer_grid(X, cls, kw):
    """Every released snapshot value is an exact integer whatever the count (zero counts
    included): no low-order bit tells a zero count apart (Mironov 2012)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", NotHardenedWarning)
        m = cls(3, clip=10, max_iter=3, record_trace=True, **kw).fit(X)
    assert snapshot_event(m).discrete is True
    assert "not hardened" not in str(m.privacy_)
    snaps = [s for s in m.trace_["snapshots"] if s is not None] + [m.snapshot_]
    for s in snaps:
        assert np.array_equal(s, np.rint(s))
        assert np.abs(s).max() < 2 ** 52
    # zero-count words: their entries are integers too, and take non-zero values (180
    # entries; all zero with probability < 1e-19 even at the smallest sigma here)
    zero_rows = np.stack([s[:20] for s in snaps[-3:]])
    assert np.array_equal(zero_rows, np.rint(zero_rows)) and np.any(zero_rows != 0)
    # the released pseudo-counts are max(s, 0) + beta computed the same way everywhere
    np.testing.assert_array_equal(m.components_, np.maximum(m.snapshot_, 0).T + m.topic_word_prior_)


def test_default_mechanisms_are_exact():
    assert NoisyGibbsLDA().mechanism == "discrete_laplace"
    assert SubsampledGibbsLDA().mechanism == "discrete_gaussian"
    assert NoisyGibbsLDA().random_state is None and SubsampledGibbsLDA().random_state is None


@pytest.mark.parametrize("cls", [NoisyGibbsLDA, SubsampledGibbsLDA])
def test_verbose_prints_no_timing_nor_counts(X, cls, caplog):
    cls(3, clip=10, max_iter=2, verbose=2).fit(X)
    lines = [r.getMessage() for r in caplog.records if r.name == "dptm"]
    assert lines == [f"[{cls.__name__}] iteration {i}/2" for i in (1, 2)]
