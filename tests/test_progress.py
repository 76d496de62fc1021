"""Progress through logging (dptm._progress): the "dptm" logger, verbose semantics, nested
models silent, the optional tqdm bar, and no data-dependent value in a private model's
progress."""
import io
import re
import logging
import sys
import warnings

import numpy as np
import pytest

import dptm
from dptm import (GibbsLDA, LocalDPLDA, NoisyGibbsLDA, OnlineLocalDPLDA, PrivateOnlineLDA,
                  SubsampledGibbsLDA, TopicDP)
from dptm._progress import get_progress, set_progress
from dptm.datasets import make_lda_corpus


@pytest.fixture(scope="module")
def corpus():
    X, _, _ = make_lda_corpus(60, 30, 3, doc_length=25, random_state=0)
    return X.tocsr()


def _dptm_messages(caplog):
    return [r.getMessage() for r in caplog.records if r.name == "dptm"]


def test_package_logger_has_a_null_handler_and_is_silent_by_default(corpus, capsys, caplog):
    logger = logging.getLogger("dptm")
    assert any(isinstance(h, logging.NullHandler) for h in logger.handlers)
    GibbsLDA(2, max_iter=10, random_state=0).fit(corpus)
    assert _dptm_messages(caplog) == []
    assert capsys.readouterr() == ("", "")


def test_verbose_attaches_a_stderr_handler_for_the_fit_only(corpus, monkeypatch):
    """With no handler configured anywhere (a plain script), verbose=1 prints on stderr;
    the handler and the level are removed after the fit."""
    root = logging.getLogger()
    logger = logging.getLogger("dptm")
    monkeypatch.setattr(root, "handlers", [])         # as in a script: nothing configured
    buf = io.StringIO()
    monkeypatch.setattr(sys, "stderr", buf)
    before = (list(logger.handlers), logger.level)
    GibbsLDA(2, max_iter=20, verbose=1, random_state=0).fit(corpus)
    assert buf.getvalue().splitlines() == ["[GibbsLDA] iteration 10/20",
                                           "[GibbsLDA] iteration 20/20"]
    assert (list(logger.handlers), logger.level) == before
    # an application's own handler on "dptm" is used instead (no duplicate on stderr)
    own = io.StringIO()
    handler = logging.StreamHandler(own)
    logger.addHandler(handler)
    try:
        GibbsLDA(2, max_iter=10, verbose=1, random_state=0).fit(corpus)
    finally:
        logger.removeHandler(handler)
    assert own.getvalue() == "[GibbsLDA] iteration 10/10\n"
    assert buf.getvalue().count("\n") == 2


def test_nested_models_are_silent_and_the_outer_one_counts_them(corpus, caplog):
    """TopicDP with a verbose inner GibbsLDA: 25 fits x 20 sweeps would be 500 lines
    (the issue saw 5,770); the outer model logs a bounded number instead."""
    public = make_lda_corpus(40, 30, 3, doc_length=25, random_state=1)[0]
    inner = GibbsLDA(2, max_iter=20, verbose=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        TopicDP(inner, gamma=0.3, reference_X=public, verbose=1).fit(corpus)
    messages = _dptm_messages(caplog)
    assert not any(m.startswith("[GibbsLDA]") for m in messages)
    assert all(m.startswith("[TopicDP]") for m in messages)
    assert 3 <= len(messages) <= 25
    assert messages[0] == "[TopicDP] fitting GibbsLDA on the data"
    assert messages[-1] == "[TopicDP] sensitivity sampling (reference): 24/24 refits"
    # the inner estimator the user passed is left as it was
    assert inner.verbose == 2


def test_fdptm_logs_one_line_per_stage(caplog):
    from dptm import DPVocabulary, FullyPrivateTopicModel
    docs = [["storm", "rain", "flood"], ["vote", "poll", "election"]] * 150
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        FullyPrivateTopicModel(
            DPVocabulary(target_epsilon=2.0, target_delta=1e-5, max_contribution=3),
            PrivateOnlineLDA(2, max_iter=2, max_doc_length=3, total_samples=300,
                             noise_multiplier=2.0, verbose=2),
            verbose=1).fit(docs)
    messages = _dptm_messages(caplog)
    assert len(messages) == 2
    # the released vocabulary's size (DP-selected: random, at most the 6 words)
    assert re.fullmatch(r"\[FullyPrivateTopicModel\] stage 1 \(DPVocabulary\): private "
                        r"vocabulary of [1-6] words?", messages[0])
    assert messages[1] == ("[FullyPrivateTopicModel] stage 2: fitting PrivateOnlineLDA on the "
                           "sanitized corpus")


def _neighbour(X):
    """Same shape and document lengths, one word of one document replaced."""
    Y = X.toarray()
    d = int(np.argmax(Y.sum(axis=1)))
    w_from = int(np.flatnonzero(Y[d])[0])
    w_to = int(np.flatnonzero(Y[d] == 0)[0])
    Y[d, w_from] -= 1
    Y[d, w_to] += 1
    return Y


PRIVATE = [
    (NoisyGibbsLDA, dict(clip=5, epsilon_per_iter=1.0, max_iter=12)),
    (SubsampledGibbsLDA, dict(clip=5, noise_multiplier=2.0, max_iter=12)),
    (PrivateOnlineLDA, dict(target_epsilon=2.0, target_delta=1e-5, max_doc_length=40,
                            batch_size=20, max_iter=3, total_samples=60)),
    (LocalDPLDA, dict(epsilon=2.0, max_iter=12)),
    (OnlineLocalDPLDA, dict(epsilon=2.0, batch_size=20, max_iter=5)),
]


@pytest.mark.parametrize("cls,kw", PRIVATE, ids=[c.__name__ for c, _ in PRIVATE])
def test_private_progress_is_the_same_on_neighbouring_data(corpus, cls, kw, caplog):
    """What a private model logs must not depend on the data beyond public quantities:
    two neighbouring data sets (one word replaced) give the same lines, and no line
    holds a likelihood, perplexity or time."""
    runs = []
    for data in (corpus.toarray(), _neighbour(corpus)):
        if cls in (LocalDPLDA, OnlineLocalDPLDA):
            data = (data > 0).astype(np.int64)          # presence bits as the server gets them
        caplog.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cls(3, verbose=2, **kw).fit(data)
        runs.append(_dptm_messages(caplog))
    assert runs[0] and all(m.startswith(f"[{cls.__name__}]") for m in runs[0])
    if cls is not OnlineLocalDPLDA:     # its lines count the server's reconstruction (LDP)
        assert runs[0] == runs[1]
    for m in runs[0]:
        for leak in ("likelihood", "perplexity", "elapsed"):
            assert leak not in m, m
        assert not re.search(r"\d\s*(s|sec|seconds)\b", m), m


def test_set_progress_validates_and_round_trips():
    with pytest.raises(ValueError, match="style must be one of"):
        set_progress("bar")
    assert get_progress() == "log"
    assert dptm.set_progress is set_progress


def test_tqdm_bar_replaces_the_lines_and_shows_no_timing(corpus, caplog, monkeypatch):
    pytest.importorskip("tqdm", reason="tqdm: the optional extra dptm[progress]")
    buf = io.StringIO()
    monkeypatch.setattr(sys, "stderr", buf)
    previous = set_progress("tqdm")
    try:
        NoisyGibbsLDA(2, clip=5, epsilon_per_iter=1.0, max_iter=12, verbose=1).fit(corpus)
    finally:
        set_progress(previous)
    assert _dptm_messages(caplog) == []                 # the bar instead of the lines
    out = buf.getvalue()
    assert "NoisyGibbsLDA: 12/12" in out
    assert "it/s" not in out and "s/it" not in out and "<" not in out and "00:" not in out


def test_tqdm_is_not_imported_by_the_core():
    import subprocess
    code = ("import sys, dptm; from dptm import GibbsLDA, NoisyGibbsLDA, TopicDP; "
            "import dptm.metrics, dptm.guardrails, dptm.cli; "
            "print('tqdm' in sys.modules, 'matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "False"]
