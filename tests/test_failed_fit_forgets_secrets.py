"""A private fit that fails midway: neither its traceback nor the estimator keeps the secret
generator or the noise drawn so far (an interactive session keeps ``sys.last_traceback``;
error reporters capture frames and their locals)."""
import os
import types

import numpy as np
import pytest
from randomgen import AESCounter

from dptm import NoisyGibbsLDA, SubsampledGibbsLDA
from dptm._random import private_fit
from dptm.datasets import make_lda_corpus
from dptm.models.topicdp import TopicDP
from dptm.noise.releases import LatticeGaussianRelease
from dptm.models.private_vb import PrivateBatchLDA
from dptm.models.svi import PrivateOnlineLDA
from dptm.pipeline import FullyPrivateTopicModel
from dptm.vocab import DPVocabulary

from _secrets import GeneratorRecorder

pytestmark = [pytest.mark.filterwarnings("ignore::dptm.exceptions.SeededPrivacyWarning"),
              pytest.mark.filterwarnings("ignore::dptm.exceptions.VacuousGuaranteeWarning"),
              pytest.mark.filterwarnings("ignore::UserWarning")]

K = 3
_SECRET_TYPES = (np.random.Generator, np.random.BitGenerator, np.random.SeedSequence, AESCounter)


class Midway(Exception):
    pass


@pytest.fixture(scope="module")
def X():
    return make_lda_corpus(60, 30, K, doc_length=(5, 25), random_state=0)[0]


def _fail_at(it):
    def callback(model, i):
        if i >= it:
            raise Midway("provoked")
    return callback


def _secrets(obj, path, depth, seen, found):
    """Every generator, bit generator or seed sequence reachable from ``obj`` through
    containers, instance dicts, closures and bound methods, with the path to it; also an
    AES state dict by value."""
    if depth < 0 or id(obj) in seen or isinstance(obj, (type, types.ModuleType)):
        return
    seen.add(id(obj))
    if isinstance(obj, _SECRET_TYPES):
        found.append(path)
        return
    if isinstance(obj, dict):
        if obj.get("bit_generator") == "AESCounter":
            found.append(path)
        items = obj.items()
    elif isinstance(obj, (list, tuple, set, frozenset)):
        items = enumerate(obj)
    elif isinstance(obj, types.FunctionType):
        items = enumerate(c.cell_contents for c in (obj.__closure__ or ())
                          if c.cell_contents is not None) if obj.__closure__ else ()
    elif isinstance(obj, types.MethodType):
        items = [("__self__", obj.__self__)]
    elif hasattr(obj, "__dict__") and not isinstance(obj, types.FrameType):
        items = vars(obj).items()
    elif hasattr(obj, "__slots__"):
        items = [(s, getattr(obj, s, None)) for s in obj.__slots__]
    else:
        return
    for k, v in list(items):
        _secrets(v, f"{path}.{k}", depth - 1, seen, found)


_DECORATOR_FILE = os.path.join("noise", "secret.py")     # where private_fit's wrapper lives


def _is_wrapper(frame):
    code = frame.f_code
    return code.co_name == "wrapper" and code.co_filename.endswith(_DECORATOR_FILE)


def _frames_below(exc, here=None):
    """Frames of ``exc`` below the decorated call (all of them if it is not on the way) and
    of its chained exceptions."""
    out, todo, seen = [], [exc], set()
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        tb, frames = e.__traceback__, []
        while tb is not None:
            frames.append(tb.tb_frame)
            tb = tb.tb_next
        starts = [i for i, f in enumerate(frames) if _is_wrapper(f)]
        out += frames[starts[0]:] if starts else frames
        todo += [e.__cause__, e.__context__]
    return out


def assert_forgotten(exc, est):
    frames = _frames_below(exc)
    assert len(frames) >= 3               # the failure really happened inside the fit
    found = []
    for f in frames:
        _secrets(f.f_locals, f"{f.f_code.co_name}()", 6, set(), found)
    assert not found, found
    # the noise drawn so far (and the true counts) lived in locals: none is left below the
    # decorated call (its own frame holds only the estimator and the caller's arguments)
    full = [f.f_code.co_name for f in frames if f.f_locals and not _is_wrapper(f)]
    assert not full, full
    # and no partial release stays on the estimator
    assert not [k for k in vars(est) if k.endswith("_") and not k.startswith("_sklearn")]
    _secrets(vars(est), "est", 6, set(), found)
    assert not found, found


def _run(fit, est):
    with pytest.raises(Midway) as info:
        fit()
    return info.value, est


@pytest.mark.parametrize("seed", [None, 3])
@pytest.mark.parametrize("make", [
    lambda cb: NoisyGibbsLDA(K, clip=20, max_iter=5, callback=cb),
    lambda cb: NoisyGibbsLDA(K, clip=20, max_iter=5, mechanism="discrete_gaussian",
                             noise_multiplier=2.0, callback=cb),
    lambda cb: SubsampledGibbsLDA(K, clip=20, max_iter=5, sample_rate=0.5, callback=cb),
    lambda cb: PrivateOnlineLDA(K, max_doc_length=10, target_epsilon=3.0, target_delta=1e-5,
                                max_iter=4, total_samples=60, callback=cb),
], ids=["noisy-laplace", "noisy-gauss", "subsampled", "vips"])
def test_estimator_failing_midway_keeps_no_secret(X, make, seed):
    est = make(_fail_at(2)).set_params(random_state=seed)
    exc, est = _run(lambda: est.fit(X), est)
    assert_forgotten(exc, est)


@pytest.mark.parametrize("seed", [None, 3])
def test_batch_vb_failing_after_its_first_release_keeps_no_secret(X, monkeypatch, seed):
    real, calls = LatticeGaussianRelease.draw, []

    def second_fails(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise Midway("provoked")
        return real(*args, **kwargs)
    monkeypatch.setattr(LatticeGaussianRelease, "draw", second_fails)
    est = PrivateBatchLDA(K, target_epsilon=2.0, random_state=seed)
    exc, est = _run(lambda: est.fit(X), est)
    assert len(calls) == 2
    assert_forgotten(exc, est)


@pytest.mark.parametrize("chain", ["cause", "context"])
def test_a_chained_failure_keeps_no_secret_in_its_cause(X, monkeypatch, chain):
    # the exception that leaves the fit was raised while handling another one, raised in
    # a frame of its own (not on the final exception's traceback) holding the generator and
    # the statistic: that frame must be cleared too
    real, calls = LatticeGaussianRelease.draw, []

    def second_fails(release, stat, gen):
        calls.append(1)
        if len(calls) < 2:
            return real(release, stat, gen)

        def draw(gen=gen, stat=stat):
            raise KeyError("inner failure")
        try:
            draw()
        except KeyError as inner:
            if chain == "cause":
                raise Midway("provoked") from inner
            raise Midway("provoked")
    monkeypatch.setattr(LatticeGaussianRelease, "draw", second_fails)
    est = PrivateBatchLDA(K, target_epsilon=2.0)
    exc, est = _run(lambda: est.fit(X), est)
    inner = exc.__cause__ if chain == "cause" else exc.__context__
    assert isinstance(inner, KeyError) and inner.__traceback__ is not None
    assert_forgotten(exc, est)


def test_distributed_fit_failing_midway_keeps_no_secret(X):
    from dptm.distributed import fit_distributed
    est = NoisyGibbsLDA(K, clip=20, max_iter=5, callback=_fail_at(2))
    exc, est = _run(lambda: fit_distributed(est, X, "serial", n_partitions=2), est)
    assert_forgotten(exc, est)


def test_topicdp_failing_midway_keeps_no_secret(X, monkeypatch):
    from dptm import GibbsLDA
    from dptm.models import topicdp

    def fail(*args, **kwargs):
        raise Midway("provoked")
    monkeypatch.setattr(topicdp, "sample_sensitivities", fail)
    # the sensitivity sampled on a public reference corpus, after the private fit
    est = TopicDP(GibbsLDA(K, max_iter=5), target_epsilon=2.0, reference_X=X[:30])
    exc, est = _run(lambda: est.fit(X), est)
    assert_forgotten(exc, est)


DOCS = (["storm flood rain warning river", "election vote poll candidate",
         "flood rain river dam", "vote poll senate candidate"] * 150)


def test_pipeline_and_vocabulary_failing_midway_keep_no_secret(monkeypatch):
    # the vocabulary is released, the model stage fails in its second epoch
    model = PrivateOnlineLDA(2, max_doc_length=10, target_epsilon=3.0, target_delta=1e-5,
                             max_iter=4, total_samples=len(DOCS), callback=_fail_at(2))
    est = FullyPrivateTopicModel(DPVocabulary(3.0, 1e-5, max_contribution=10, alpha=10.0), model)
    exc, est = _run(lambda: est.fit(DOCS), est)
    assert_forgotten(exc, est)
    # the vocabulary stage itself failing after its noise is drawn
    monkeypatch.setattr(DPVocabulary, "_report", lambda *a, **k: (_ for _ in ()).throw(Midway()))
    voc = DPVocabulary(3.0, 1e-5, max_contribution=10)
    exc, voc = _run(lambda: voc.fit([d.split() for d in DOCS]), voc)
    assert_forgotten(exc, voc)


def test_decorator_keeps_the_callers_exception_and_set_output():
    class Est:
        def __init__(self, a=1):
            self.a = a

        @private_fit
        def fit(self):
            secret = np.random.Generator(AESCounter(key=5))       # noqa: F841
            self.components_ = 1
            raise Midway("x")

    def callers_own():
        local_of_caller = np.random.default_rng(0)                # noqa: F841
        raise KeyError("earlier")

    est = Est()
    est._sklearn_output_config = {"transform": "pandas"}
    try:
        callers_own()
    except KeyError as earlier:
        with pytest.raises(Midway) as info:
            est.fit()
        # the caller's own exception, being handled, keeps its frames
        assert earlier.__traceback__.tb_next.tb_frame.f_locals
    assert info.value.__context__ is not None
    assert vars(est) == {"a": 1, "_sklearn_output_config": {"transform": "pandas"}}
    frames = _frames_below(info.value)
    assert all(not f.f_locals for f in frames if f.f_code.co_name == "fit")
    # success: returns what the fit returns, nothing cleared
    Est.fit = private_fit(lambda self: self)
    assert Est().fit().a == 1


def _assert_call_forgotten(exc):
    """As ``assert_forgotten``, for a decorated function (no estimator to unfit)."""
    frames = _frames_below(exc)
    assert len(frames) >= 3 and _is_wrapper(frames[0])   # it failed inside the function
    found = []
    for f in frames:
        _secrets(f.f_locals, f"{f.f_code.co_name}()", 6, set(), found)
    assert not found, found
    assert not [f.f_code.co_name for f in frames if f.f_locals and not _is_wrapper(f)]


def _failing_final_matrix(monkeypatch):
    """Make the randomizers fail when they build their result, after every flip is drawn
    (the flips and the true bits are then in their locals, and the generator)."""
    import scipy.sparse as sp

    from dptm import local

    def csr_matrix(arg, *args, **kwargs):
        if isinstance(arg, tuple):          # the (data, indices, indptr) of the result
            raise Midway("provoked")
        return sp.csr_matrix(arg, *args, **kwargs)
    monkeypatch.setattr(local, "sp", types.SimpleNamespace(csr_matrix=csr_matrix,
                                                           issparse=sp.issparse))
    return local


@pytest.mark.parametrize("seed", [None, 3])
def test_local_randomizers_failing_midway_keep_no_secret(X, monkeypatch, seed):
    local = _failing_final_matrix(monkeypatch)
    with pytest.raises(Midway) as info:
        local.randomize(["vote", "poll"], ["poll", "senate", "vote"], 0.5, rng=seed)
    _assert_call_forgotten(info.value)
    with pytest.raises(Midway) as info:
        local.randomize_matrix(X, 0.5, random_state=seed)
    _assert_call_forgotten(info.value)


def test_local_randomizers_keep_their_signature_and_draws(X):
    import inspect

    from dptm import local
    assert list(inspect.signature(local.randomize).parameters) == ["doc", "vocabulary", "f",
                                                                   "rng"]
    assert list(inspect.signature(local.randomize_matrix).parameters) == ["X", "f",
                                                                          "random_state"]
    # keyword calls (the wrapper passes them through) and the seeded test mode's draws
    a = local.randomize(doc=["vote"], vocabulary=["poll", "vote"], f=0.5, rng=4)
    b = local.randomize(["vote"], ["poll", "vote"], 0.5, 4)
    assert (a != b).nnz == 0
    m = local.randomize_matrix(X=X, f=0.5, random_state=4)
    assert (m != local.randomize_matrix(X, 0.5, 4)).nnz == 0 and m.shape == X.shape


@pytest.mark.parametrize("seed", [None, 3])
def test_a_keyboard_interrupt_after_releases_keeps_no_secret_and_the_refit_is_fresh(
        X, monkeypatch, seed):
    # Ctrl-C is not an Exception: the decorator must clear the frames and unfit the
    # estimator for any BaseException, here raised inside the third release's draw (after
    # the norm histogram and a search release were drawn). The refit on the same object
    # draws from a new secret key (unseeded: another start, other noise) or, seeded,
    # reproduces a clean fit.
    real, calls = LatticeGaussianRelease.draw, []

    def interrupted(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*args, **kwargs)
    monkeypatch.setattr(LatticeGaussianRelease, "draw", interrupted)
    est = PrivateBatchLDA(K, target_epsilon=2.0, random_state=seed)
    with pytest.raises(KeyboardInterrupt) as info:
        est.fit(X)
    assert len(calls) == 3
    assert_forgotten(info.value, est)
    monkeypatch.setattr(LatticeGaussianRelease, "draw", real)
    recorder = GeneratorRecorder(monkeypatch)
    first = est.fit(X).components_.copy()
    second = PrivateBatchLDA(K, target_epsilon=2.0, random_state=seed).fit(X).components_
    if seed is None:
        keys = [start["s"]["seed"].tobytes() for _, start in recorder.generators]
        assert len(keys) == 2 and keys[0] != keys[1]
        assert not np.array_equal(first, second)
    else:
        np.testing.assert_array_equal(first, second)
