"""Every private estimator seen by value, as the adversary of DESIGN.md sees a shared
pickle, a report or a log: fits on neighbouring data sets may differ only in privatized
outputs (by value, private attributes and nested estimators included); nothing reachable
from a fitted model restores a secret generator (its key, round keys, counter, state dict,
any key it gave a child stream); a seeded report says TEST MODE first; verbose logs are the
same on neighbours; the number and sizes of the releases never follow the corpus size."""
import logging
import pickle
import warnings

import numpy as np
import pytest
from sklearn.decomposition import NMF

from dptm import NoisyGibbsLDA, SubsampledGibbsLDA
from dptm.exceptions import SeededPrivacyWarning
from dptm.local import randomize_matrix
from dptm.models.local import LocalDPLDA, OnlineLocalDPLDA
from dptm.models.topicdp import TopicDP
from dptm.models import private_vb as P
from dptm.models.private_vb import PrivateBatchLDA
from dptm.models.svi import PrivateOnlineLDA
from dptm.pipeline import FullyPrivateTopicModel
from dptm.vocab import DPVocabulary

from _neighbours import word_replaced
from _releases import force_lattice_releases
from _secrets import (GeneratorRecorder, differing_paths, released, secret_bytes_in,
                      suspicious)

# ------------------------------------------------------------------- neighbouring data
_XW, _XWP = word_replaced(30)                                # word replaced
_XD = np.random.default_rng(0).poisson(0.8, (40, 15))
_XDP = _XD[:-1]                                               # one document removed
_XDR = _XD.copy()
_XDR[-1] = np.random.default_rng(1).poisson(0.8, 15)         # one document replaced
_DOCS = ["storm flood rain river", "vote poll senate candidate"] * 60
_DOCSP = _DOCS + ["storm zyxwv secret"]                       # one document added
_LOCAL = np.eye(20, dtype=int)[np.arange(120) % 20]
_LOCALP = _LOCAL.copy()
_LOCALP[0] = 1                                                # one client's vector replaced

_TOPICS = ("components_", "topic_word_")
_GIBBS_OUT = _TOPICS + ("snapshot_", "doc_topic_")           # doc_topic_: accounted sweeps


def _vocab():
    return DPVocabulary(3.0, 1e-5, max_contribution=10, alpha=30.0)


# (id, model factory of random_state, data, neighbour, what may differ between neighbours:
# the privatized outputs)
CASES = [
    ("hdp-lda", lambda rs: NoisyGibbsLDA(3, clip=8, max_iter=3, random_state=rs),
     _XW, _XWP, _GIBBS_OUT),
    ("cdp-lda", lambda rs: NoisyGibbsLDA(3, noise_schedule="first", clip=8, max_iter=3,
                                         random_state=rs), _XW, _XWP, _GIBBS_OUT),
    ("cdp-lda+", lambda rs: NoisyGibbsLDA(3, max_iter=3, random_state=rs),
     _XW, _XWP, _GIBBS_OUT),
    ("zhu", lambda rs: NoisyGibbsLDA(3, noise_schedule="last", clip=8, max_iter=3,
                                     random_state=rs), _XW, _XWP, _GIBBS_OUT),
    ("hdp-gauss", lambda rs: NoisyGibbsLDA(3, mechanism="discrete_gaussian", noise_multiplier=1.0,
                                           clip=8, max_iter=3, random_state=rs),
     _XW, _XWP, _GIBBS_OUT),
    ("sub-lda", lambda rs: SubsampledGibbsLDA(3, sample_rate=0.5, clip=8, max_iter=3,
                                              random_state=rs), _XW, _XWP, _GIBBS_OUT),
    ("vips-shuffle", lambda rs: PrivateOnlineLDA(3, noise_multiplier=1.0, max_doc_length=30,
                                                 batch_size=10, sampling="shuffle", max_iter=2,
                                                 random_state=rs),
     _XD, _XDR, _TOPICS + ("exp_dirichlet_component_", "_lam_t", "_exp_elog_beta_t")),
    ("vips-poisson", lambda rs: PrivateOnlineLDA(3, noise_multiplier=1.0, max_doc_length=30,
                                                 batch_size=10, total_samples=40, max_iter=2,
                                                 random_state=rs),
     _XD, _XDP, _TOPICS + ("exp_dirichlet_component_", "_lam_t", "_exp_elog_beta_t")),
    # batch VB with a public clip bound (no histogram release: everything else equal),
    # and by default with the norm-histogram release forced to one value (see _FORCED)
    ("batch-vb", lambda rs: PrivateBatchLDA(3, target_epsilon=4.0, clip_norm=1.0,
                                            random_state=rs), _XD, _XDP, _TOPICS),
    ("batch-vb-eps1", lambda rs: PrivateBatchLDA(3, target_epsilon=1.0, clip_norm=1.0,
                                                 random_state=rs), _XD, _XDP, _TOPICS),
    ("batch-vb-hist", lambda rs: PrivateBatchLDA(3, target_epsilon=4.0, random_state=rs),
     _XD, _XDP, _TOPICS),
    ("batch-vb-eps1-hist", lambda rs: PrivateBatchLDA(3, target_epsilon=1.0, random_state=rs),
     _XD, _XDP, _TOPICS),
    # estimator_: the non-private base fit, documented "never publish it (nor this object)"
    ("topicdp", lambda rs: TopicDP(NMF(2, max_iter=30), sensitivity=0.05, random_state=rs),
     _XD, _XDP, _TOPICS + ("estimator_",)),
    ("dp-vocabulary", lambda rs: DPVocabulary(3.0, 1e-5, max_contribution=10, alpha=30.0,
                                              random_state=rs),
     [d.split() for d in _DOCS], [d.split() for d in _DOCSP], ("vocabulary_",)),
    ("fdptm", lambda rs: FullyPrivateTopicModel(vocabulary=_vocab(), model=PrivateBatchLDA(
        2, target_epsilon=3.0, clip_norm=1.0), random_state=rs), _DOCS, _DOCSP,
     _TOPICS + ("model_.components_", "model_.topic_word_")),
    ("fdptm-hist", lambda rs: FullyPrivateTopicModel(vocabulary=_vocab(), model=PrivateBatchLDA(
        2, target_epsilon=3.0), random_state=rs), _DOCS, _DOCSP,
     _TOPICS + ("model_.components_", "model_.topic_word_")),
    ("fdptm-topicdp", lambda rs: FullyPrivateTopicModel(vocabulary=_vocab(), model=TopicDP(
        NMF(2, max_iter=30), target_epsilon=3.0, target_delta=1e-5, sensitivity=0.05),
        random_state=rs), _DOCS, _DOCSP,
     _TOPICS + ("model_.components_", "model_.topic_word_", "model_.estimator_")),
]
# the server of a local model sees only randomized vectors: every array it derives from
# them is a privatized value
# them is a privatized value (and its own generator ``_rng``, of OLP-LDA's partial_fit,
# post-processes them: not a secret)
_LOCAL_OUT = _TOPICS + ("doc_topic_", "noisy_counts_", "estimated_counts_",
                        "n_reconstructed_tokens_", "batch_estimate_", "batch_topic_word_counts_",
                        "prior_mean_", "topic_word_prior_matrix_", "_prev_estimate",
                        "_prev_mean", "_pseudo", "_rng")
LOCAL_CASES = [
    ("lp-lda", lambda rs: LocalDPLDA(3, flip_probability=0.4, max_iter=3, random_state=rs)),
    ("olp-lda", lambda rs: OnlineLocalDPLDA(3, flip_probability=0.4, batch_size=40, max_iter=3,
                                            random_state=rs)),
]
IDS = [c[0] for c in CASES]
# the fresh OS entropy of transform's fold-in seed (public, unrelated to the fit's draws)
_FRESH = ("transform_seed_", "model_.transform_seed_")


# Cases whose clip bound comes from the norm-histogram release: the bound, the noise
# scales, the noisy count and the report are post-processing of that DP output, so it is
# forced to one value on both neighbours (its noise still drawn) and all else must match.
_FORCED = ("batch-vb-hist", "batch-vb-eps1-hist", "fdptm-hist")
_N_BINS = P._BINS_PER_OCTAVE * P._OCTAVES


def _force_the_norm_histogram(monkeypatch, value=None):
    value = np.full((1, _N_BINS), 1000.0 * (np.arange(_N_BINS) < 12)) if value is None else value

    def forced(release, stat, noisy):
        if stat.shape == (1, _N_BINS) and release.granularity == 1.0:   # the norm histogram
            return value.copy()
        return None
    force_lattice_releases(monkeypatch, forced)


@pytest.fixture(autouse=True)
def _forced_cases(request, monkeypatch):
    callspec = getattr(request.node, "callspec", None)
    if callspec is not None and callspec.params.get("name") in _FORCED:
        _force_the_norm_histogram(monkeypatch)


def _fit(make, rs, data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make(rs).fit(data)


def _roundtrip(model):
    return pickle.loads(pickle.dumps(model))


def _local_pair(rs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeededPrivacyWarning)
        return randomize_matrix(_LOCAL, 0.4, random_state=7), randomize_matrix(_LOCALP, 0.4,
                                                                                random_state=7)


# ---------------------------------------------------------------- neighbours by value
@pytest.mark.parametrize("name,make,A,B,allowed", CASES, ids=IDS)
def test_unseeded_fits_differ_between_neighbours_only_in_privatized_outputs(
        name, make, A, B, allowed):
    # the default (published) fit: its attributes, every private one and every nested
    # estimator's included, and its unpickled copy
    a, b = _fit(make, None, A), _fit(make, None, B)
    assert released(differing_paths(a, b), allowed + _FRESH) == []
    assert released(differing_paths(_roundtrip(a), _roundtrip(b)), allowed + _FRESH) == []


@pytest.mark.parametrize("name,make,A,B,allowed", CASES, ids=IDS)
def test_seeded_fits_differ_between_neighbours_only_in_privatized_outputs(
        name, make, A, B, allowed):
    # one seed: the streams are the same, so every non-privatized value must be equal
    # (a count, a data-dependent scale or schedule, a stored key all differ)
    a, b = _fit(make, 11, A), _fit(make, 11, B)
    assert released(differing_paths(a, b), allowed) == []
    assert released(differing_paths(_roundtrip(a), _roundtrip(b)), allowed) == []
    # the privatized outputs do differ: the data reaches them (else the test sees nothing)
    assert any(not released([p], allowed) for p in differing_paths(a, b)) \
        or name == "dp-vocabulary"                  # the same words selected on both


_VIPS_OUT = _TOPICS + ("exp_dirichlet_component_", "_lam_t", "_exp_elog_beta_t")


def _vips(total_samples):
    return lambda rs: PrivateOnlineLDA(3, noise_multiplier=1.0, max_doc_length=30, batch_size=10,
                                       max_iter=2, total_samples=total_samples, random_state=rs)


@pytest.mark.parametrize("rs", [None, 11])
def test_vips_add_remove_neighbours_differ_only_in_privatized_outputs(rs):
    # the Poisson (add/remove) fit planned from a declared public bound above both sizes
    # (40 and 39 documents): q, the step count, sigma and the report follow the bound only
    make = _vips(64)
    a, b = _fit(make, rs, _XD), _fit(make, rs, _XDP)
    allowed = _VIPS_OUT + (_FRESH if rs is None else ())
    assert released(differing_paths(a, b), allowed) == []
    assert str(a.privacy_) == str(b.privacy_) and "total_samples = 64 (declared" in str(a.privacy_)
    if rs is not None:      # same streams: the data reaches the privatized outputs
        assert any(not released([p], allowed) for p in differing_paths(a, b))


def test_vips_add_remove_fit_without_total_samples_is_refused_alike_on_neighbours(monkeypatch):
    # the undeclared fit would plan from the number of documents: refused with the same
    # message on both neighbours (nothing in it follows the data), before any secret draw
    rec = GeneratorRecorder(monkeypatch)
    messages = []
    for data in (_XD, _XDP):
        model = _vips(None)(None)
        with pytest.raises(ValueError, match="total_samples") as err:
            model.fit(data)
        messages.append(str(err.value))
        assert not hasattr(model, "components_") and not hasattr(model, "privacy_")
    assert messages[0] == messages[1]
    assert "40" not in messages[0] and "39" not in messages[0]
    assert rec.generators == []


@pytest.mark.parametrize("name,make", LOCAL_CASES, ids=[c[0] for c in LOCAL_CASES])
@pytest.mark.parametrize("rs", [None, 5])
def test_local_servers_differ_between_neighbours_only_in_functions_of_the_noisy_bits(
        name, make, rs):
    n0, n1 = _local_pair(rs)
    a, b = _fit(make, rs, n0), _fit(make, rs, n1)
    allowed = _LOCAL_OUT + (_FRESH if rs is None else ())
    assert released(differing_paths(a, b), allowed) == []
    assert str(a.privacy_) == str(b.privacy_)


# --------------------------------------------------------------------- secrets by value
@pytest.mark.parametrize("name,make,A,B,allowed", CASES, ids=IDS)
def test_nothing_kept_restores_a_secret_generator(name, make, A, B, allowed, monkeypatch):
    # Every secret generator the fit creates is recorded with its initial state; neither
    # the model nor its pickle may hold a generator, a state dict, a raw uint64 / uint8
    # array (keys, counters, AES blocks), nor any 16 bytes of a secret key, of its round
    # keys, of its counter or of its first 256 KiB of output (the keys of its children).
    rec = GeneratorRecorder(monkeypatch)
    model = _fit(make, None, A)
    assert rec.generators, "the fit drew nothing from the secret source"
    copy = _roundtrip(model)
    assert suspicious(model) == [] and suspicious(copy) == []
    prints = rec.fingerprints()
    assert secret_bytes_in(model, prints) == []
    assert secret_bytes_in(copy, prints) == []
    assert model.get_params(deep=False).get("random_state") is None


class _Holder:
    pass


def test_the_scan_sees_a_key_stored_as_an_int_or_array(monkeypatch):
    # the scan itself: a child key drawn from the secret stream and kept in any form
    rec = GeneratorRecorder(monkeypatch)
    from dptm._random import secret_generator
    gen = secret_generator()
    gen.random(3)
    key = gen.bytes(16)
    prints = rec.fingerprints()
    holder = _Holder()
    for kept in (int.from_bytes(key, "little"), np.frombuffer(key, dtype=np.uint64).copy(),
                 np.frombuffer(key, dtype=np.uint64).astype(np.int64),
                 {"k": [np.frombuffer(key, dtype=np.uint8).copy()]}):
        holder.x = kept
        assert secret_bytes_in(holder, prints), type(kept)
    holder.x = gen.bit_generator.state
    assert suspicious(holder)


# -------------------------------------------------------------------------- test mode
@pytest.mark.parametrize("name,make,A,B,allowed", CASES, ids=IDS)
def test_seeded_report_starts_with_test_mode(name, make, A, B, allowed):
    with pytest.warns(SeededPrivacyWarning, match="test mode"):
        m = make(4).fit(A)
    first = str(m.privacy_).splitlines()[0]
    assert first.startswith("TEST MODE") and "seed stays secret" in first
    assert m.privacy_.seeded and m.privacy_.to_dict()["seeded"] is True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        u = make(None).fit(A)
    assert not u.privacy_.seeded and not str(u.privacy_).startswith("TEST MODE")


def test_a_seeded_local_randomizer_is_a_labelled_test_mode():
    # the local models' secret randomness is the clients' (their server only
    # post-processes the randomized vectors): a seed there is warned
    with pytest.warns(SeededPrivacyWarning, match="test mode"):
        a = randomize_matrix(_LOCAL, 0.4, random_state=7)
    with pytest.warns(SeededPrivacyWarning):
        b = randomize_matrix(_LOCAL, 0.4, random_state=7)
    assert (a != b).nnz == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", SeededPrivacyWarning)
        c, d = randomize_matrix(_LOCAL, 0.4), randomize_matrix(_LOCAL, 0.4)
    assert (c != d).nnz > 0


# ------------------------------------------------------------------------------- logs
def _log_lines(make, data, caplog):
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="dptm"):
        model = make(None)
        for obj in (model, getattr(model, "model", None)):
            if obj is not None and "verbose" in obj.get_params(deep=False):
                obj.set_params(verbose=2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(data)
    return [(r.levelno, r.getMessage()) for r in caplog.records
            if r.name == "dptm" or r.name.startswith("dptm.")]


@pytest.mark.parametrize("name,make,A,B,allowed", CASES, ids=IDS)
def test_verbose_logs_are_the_same_on_neighbours(name, make, A, B, allowed, caplog):
    # every record of the "dptm" logger, DEBUG included, with verbose=2 (unseeded: no
    # line may depend on the draws either)
    a, b = _log_lines(make, A, caplog), _log_lines(make, B, caplog)
    assert a == b


# ------------------------------------------------------------- public plans, any size
@pytest.mark.parametrize("eps", [1.0, 2.0, 4.0, 8.0])
@pytest.mark.parametrize("clip", ["public", "histogram"])
def test_batch_vb_releases_do_not_follow_the_corpus_size(eps, clip, monkeypatch):
    # the plan (number of releases, noise multipliers) is a function of the public
    # epsilon only, whatever the corpus; with a public clip bound, or with the
    # norm-histogram release forced to one value (the bound, the sigmas, the noisy count
    # and the report are its post-processing), the sigmas and the report are too: the
    # same for 1 document as for 5,000 (a schedule or a bound chosen by D, or by the
    # tokens, would change them somewhere in this range)
    rng = np.random.default_rng(2)
    plans, seen = set(), set()
    kw = {"clip_norm": 1.0} if clip == "public" else {}
    for forced in (False, True):
        if forced:
            if clip == "public":
                break
            _force_the_norm_histogram(monkeypatch)
        for D in (1, 2, 3, 7, 20, 60, 150, 400, 1000, 2500, 5000):
            X = rng.poisson(0.5, (D, 8))
            X[0, 0] += 1
            m = _fit(lambda rs: PrivateBatchLDA(2, target_epsilon=eps, random_state=rs, **kw),
                     3, X)
            plans.add((m.n_iter_, repr(m.plan_)))
            if forced or clip == "public":
                seen.add((tuple(m.release_sigmas_), m.clip_norm_, m.sigma_, m.sensitivity_,
                          m.n_documents_estimate_, str(m.privacy_),
                          repr(m.privacy_.to_dict())))
    assert len(plans) == 1 and len(seen) == 1
    assert (m.plan_[0].statistic == "norm-histogram") == (clip == "histogram")
