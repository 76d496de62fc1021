"""What a private estimator says about itself must not tell neighbours apart.

For every private estimator and pipeline, fitted in test mode with one seed on the two
corpora of a worst-case pair of its adjacency (add/remove a long document holding a word
nobody else uses; replace one token by a word nobody else uses; add/remove a user with
several documents; replace one client's document), these must be identical: the report's
"assumed public" lines, the whole report text (the released values are the same here by
construction: a seeded fit draws the same noise, and the pairs leave the released
vocabulary unchanged, which is asserted), the release metadata (``release.json``: every
field but the privatized arrays, whose shape is compared) and the warnings emitted. Any
count, length or size of the private data printed as "public" (D under add/remove, N of a
sanitized corpus, C = N) makes a pair differ.
"""
import json
import warnings

import numpy as np
import pytest
from sklearn.decomposition import NMF

from dptm import DPVocabulary, FullyPrivateTopicModel
from dptm.datasets import make_lda_corpus
from dptm.local import randomize_matrix
from dptm.models.local import LocalDPLDA, OnlineLocalDPLDA
from dptm.models.topicdp import TopicDP
from dptm.models.private_gibbs import NoisyGibbsLDA, SubsampledGibbsLDA
from dptm.models.private_vb import PrivateBatchLDA
from dptm.models.svi import PrivateOnlineLDA

V = 24                      # the last column is a word no document of the base corpus uses
UNIQUE = V - 1
LONG = 150                  # the added document's length (far above every cap)


def _base(n_docs=60):
    X, _, _ = make_lda_corpus(n_docs, V - 1, 3, doc_length=15, random_state=7)
    X = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.int64)
    return np.hstack([X, np.zeros((n_docs, 1), dtype=np.int64)])


def _long_row():
    row = np.zeros((1, V), dtype=np.int64)
    row[0, 0], row[0, UNIQUE] = LONG - 1, 1
    return row


def add_document(X):
    """Add/remove: X and X plus one long document with the unused word."""
    return X, np.vstack([X, _long_row()])


def replace_document(X):
    """Replace-one: document 0 replaced by the long one."""
    Xp = X.copy()
    Xp[0] = _long_row()[0]
    return X, Xp


def replace_token(X):
    """Word-level: one token of document 0 moved to the word nobody uses."""
    Xp = X.copy()
    a = int(np.flatnonzero(X[0])[0])
    Xp[0, a] -= 1
    Xp[0, UNIQUE] += 1
    return X, Xp


def _release_meta(release):
    """release.json minus the privatized arrays: what ``Release.save`` writes beside them."""
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as d:
        path = Path(release.save(Path(d) / "r"))
        meta = json.loads((path / "release.json").read_text())
        with np.load(path / "topics.npz") as z:
            shapes = {k: z[k].shape for k in z.files}
    return meta, shapes


def _observe(make, data, fit=None):
    """Everything a neighbour may not differ in, for one seeded fit on ``data``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = make()
        (fit or (lambda e, d: e.fit(d)))(est, data)
    rep = est.privacy_
    out = {"public": tuple(rep.assumed_public), "text": str(rep), "state": rep.to_state(),
           "warnings": [(w.category.__name__, str(w.message)) for w in caught]}
    if hasattr(est, "release"):
        if isinstance(est, (TopicDP, LocalDPLDA)):
            out["release"] = _release_meta(est.release([f"w{i}" for i in range(V)]))
        else:
            out["release"] = _release_meta(est.release())
    return est, out


def _assert_same(make, pair, fit=None, released=None):
    a, oa = _observe(make, pair[0], fit)
    b, ob = _observe(make, pair[1], fit)
    if released is not None:            # the released values these pairs keep equal
        assert released(a) == released(b)
    assert oa["public"] == ob["public"]
    assert oa["warnings"] == ob["warnings"]
    assert oa["text"] == ob["text"]
    assert oa["state"] == ob["state"]
    assert oa.get("release") == ob.get("release")


# ----------------------------------------------------------------- word level (Gibbs)
GIBBS = {
    "hdp-lda": lambda: NoisyGibbsLDA(3, epsilon_per_iter=1.0, clip=20, max_iter=3,
                                     random_state=1),
    "cdp-lda+": lambda: NoisyGibbsLDA(3, epsilon_per_iter=1.0, max_iter=3, random_state=1),
    "cdp-lda": lambda: NoisyGibbsLDA(3, epsilon_per_iter=1.0, noise_schedule="first",
                                     max_iter=3, random_state=1),
    "zhu": lambda: NoisyGibbsLDA(3, epsilon_per_iter=1.0, noise_schedule="last", clip=20,
                                 max_iter=3, random_state=1),
    "hdp-gauss-target": lambda: NoisyGibbsLDA(3, mechanism="discrete_gaussian", clip=20,
                                              target_epsilon=60.0, max_iter=3,
                                              topic_word_prior=1.0, random_state=1),
    "sub-lda": lambda: SubsampledGibbsLDA(3, sample_rate=0.5, clip=20, max_iter=3,
                                          random_state=1),
    "sub-lda-unclipped": lambda: SubsampledGibbsLDA(3, sample_rate=0.5, max_iter=3,
                                                    random_state=1),
}


@pytest.mark.parametrize("name", sorted(GIBBS))
def test_word_level_models_on_a_replaced_token(name):
    _assert_same(GIBBS[name], replace_token(_base()))


# ----------------------------------------------------------------- document level
def test_online_lda_poisson_on_an_added_document():
    # q, the step count and sigma come from the declared total_samples, not from D
    make = (lambda: PrivateOnlineLDA(3, batch_size=20, max_iter=2, max_doc_length=20,
                                     total_samples=100, target_epsilon=2.0, target_delta=1e-5,
                                     random_state=1))
    _assert_same(make, add_document(_base()))


def test_online_lda_noise_multiplier_and_paper_accounting_on_an_added_document():
    for kw in (dict(noise_multiplier=2.0), dict(target_epsilon=2.0, target_delta=1e-5,
                                                 accounting="zcdp-paper")):
        make = (lambda: PrivateOnlineLDA(3, batch_size=20, max_iter=1, max_doc_length=20,
                                         total_samples=100, random_state=1, **kw))
        _assert_same(make, add_document(_base()))


def test_online_lda_shuffle_on_a_replaced_document():
    make = (lambda: PrivateOnlineLDA(3, batch_size=20, max_iter=2, max_doc_length=20,
                                     sampling="shuffle", noise_multiplier=2.0, random_state=1))
    _assert_same(make, replace_document(_base()))


def test_online_lda_partial_fit_on_an_added_document():
    def fit(est, X):
        est.partial_fit(X[:30])
        est.partial_fit(X[30:])
    make = (lambda: PrivateOnlineLDA(3, batch_size=30, max_iter=2, max_doc_length=20,
                                     target_epsilon=2.0, target_delta=1e-5, random_state=1))
    _assert_same(make, add_document(_base()), fit=fit)


def test_batch_lda_on_an_added_document():
    make = lambda: PrivateBatchLDA(3, target_epsilon=2.0, target_delta=1e-5, random_state=1)
    _assert_same(make, add_document(_base()))


# ----------------------------------------------------------------- user level
def _with_user(X):
    """Add/remove a user: three long documents of a new author."""
    groups = np.arange(X.shape[0]) // 2
    Xp = np.vstack([X] + [_long_row()] * 3)
    gp = np.concatenate([groups, [groups.max() + 1] * 3])
    return (X, groups), (Xp, gp)


@pytest.mark.parametrize("kw", [dict(sensitivity=0.05), dict(mechanism="laplace"),
                                dict(reference=True, gamma=0.5)],
                         ids=["bound", "laplace", "reference"])
def test_topicdp_on_an_added_user(kw):
    kw = dict(kw)
    if kw.pop("reference", False):
        # a public corpus with its users (groups= needs them: the unit sampled there)
        kw["reference_X"] = _base(40)
        kw["reference_groups"] = np.arange(kw["reference_X"].shape[0]) // 2
    make = (lambda: TopicDP(NMF(3, max_iter=50, init="nndsvda", random_state=0),
                            target_epsilon=2.0, target_delta=1e-5, random_state=1, **kw))
    _assert_same(make, _with_user(_base()), fit=lambda e, d: e.fit(d[0], groups=d[1]))


# ----------------------------------------------------------------- vocabulary, pipelines
def _tokens(X):
    return [[f"w{j}" for j in np.repeat(np.arange(V), row)] for row in X]


def _docs_with_added(X):
    docs = _tokens(X)
    return docs, docs + [["w0"] * (LONG - 1) + ["zyxwv"]]


def _vocab():
    return DPVocabulary(3.0, 1e-5, max_contribution=10, alpha=10.0, random_state=1)


def test_dp_vocabulary_on_an_added_document_and_user():
    docs, docs_p = _docs_with_added(_base())
    words = lambda v: v.vocabulary_.tolist()
    _assert_same(_vocab, (docs, docs_p), released=words)
    users = np.arange(len(docs)) // 3
    users_p = np.concatenate([users, [users.max() + 1]])
    _assert_same(_vocab, ((docs, users), (docs_p + [["w1"] * 20], np.append(users_p,
                                                                              users_p[-1]))),
                 fit=lambda e, d: e.fit(*d), released=words)


FDPTM_MODELS = {
    "batch-vb": lambda: PrivateBatchLDA(3, target_epsilon=2.0, target_delta=1e-5),
    "vips": lambda: PrivateOnlineLDA(3, batch_size=20, max_iter=2, max_doc_length=20,
                                     total_samples=100, target_epsilon=2.0, target_delta=1e-5),
    "topicdp": lambda: TopicDP(NMF(3, max_iter=50, init="nndsvda", random_state=0),
                               target_epsilon=2.0, target_delta=1e-5, sensitivity=0.05),
    "default": None,
}


@pytest.mark.parametrize("name", sorted(FDPTM_MODELS))
def test_fdptm_on_an_added_document(name):
    model = FDPTM_MODELS[name]
    make = lambda: FullyPrivateTopicModel(_vocab(), None if model is None else model(),
                                          random_state=2)
    _assert_same(make, _docs_with_added(_base()), released=lambda f: f.vocabulary_.tolist())


@pytest.mark.parametrize("model", [
    lambda: NoisyGibbsLDA(3, epsilon_per_iter=1.0, max_iter=2),
    lambda: NoisyGibbsLDA(3, epsilon_per_iter=1.0, clip=20, max_iter=2),
    lambda: SubsampledGibbsLDA(3, max_iter=2),
    lambda: PrivateOnlineLDA(3, max_doc_length=20, sampling="sequential", noise_multiplier=2.0)],
    ids=["cdp-lda+", "hdp-lda", "sub-lda", "vips-sequential"])
def test_fdptm_refuses_a_stage_its_vocabulary_breaks(model):
    # a word-level model (the printed C = N and its N of the sanitized corpus, and a
    # replaced word that sanitizing turns into a deletion) or a replace-one model behind
    # an add/remove vocabulary: whatever happens must happen identically on both
    # neighbours, and what happens is a refusal naming the stages allowed
    outcomes = []
    for d in _docs_with_added(_base()):
        make = lambda: FullyPrivateTopicModel(_vocab(), model(), random_state=2)
        try:
            outcomes.append(_observe(make, d)[1])
        except ValueError as err:
            outcomes.append(str(err))
    assert outcomes[0] == outcomes[1]
    assert isinstance(outcomes[0], str)
    assert "FullyPrivateTopicModel takes" in outcomes[0] or "Allowed:" in outcomes[0]


# ----------------------------------------------------------------- local
@pytest.mark.parametrize("online", [False, True])
def test_local_models_on_a_replaced_client_document(online):
    X, Xp = replace_document(_base())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pair = (randomize_matrix(X, 0.4, random_state=3), randomize_matrix(Xp, 0.4,
                                                                            random_state=3))
    if online:
        make = lambda: OnlineLocalDPLDA(3, flip_probability=0.4, batch_size=20, max_iter=2,
                                        random_state=1)
    else:
        make = lambda: LocalDPLDA(3, target_epsilon=50.0, max_iter=2, random_state=1)
    _assert_same(make, pair)


# ----------------------------------------------------------------- regressions
def test_online_lda_ignores_the_number_of_documents_given_total_samples():
    """The noise, the event and the step count of a private Poisson fit are functions of
    total_samples: the same for 40 and 400 documents, and the sampling rate applies to
    every document (a random minibatch holds about q of them whatever D)."""
    fits = []
    for n in (40, 400):
        X = _base(n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = PrivateOnlineLDA(3, batch_size=20, max_iter=1, max_doc_length=20,
                                 total_samples=100, target_epsilon=2.0, target_delta=1e-5,
                                 random_state=1).fit(X)
        fits.append(m)
    a, b = fits
    assert a.privacy_.event == b.privacy_.event and a.sigma_ == b.sigma_
    assert a.n_batch_iter_ == b.n_batch_iter_ == 1 + 5      # ceil(100 / 20) steps
    assert a.privacy_.event.event.sampling_probability == pytest.approx(0.2)


def test_fdptm_user_level_on_an_added_user():
    docs = _tokens(_base())
    users = np.arange(len(docs)) // 3
    new_user = [["w0"] * (LONG - 1) + ["zyxwv"]] * 3
    pair = ((docs, users), (docs + new_user, np.concatenate([users, [users.max() + 1] * 3])))
    make = lambda: FullyPrivateTopicModel(_vocab(), FDPTM_MODELS["topicdp"](), random_state=2)
    _assert_same(make, pair, fit=lambda e, d: e.fit(d[0], groups=d[1]),
                 released=lambda f: f.vocabulary_.tolist())


def test_online_lda_refuses_a_plan_of_too_many_steps_before_drawing_anything():
    m = PrivateOnlineLDA(3, batch_size=10, max_iter=2, max_doc_length=20, total_samples=1e12,
                         noise_multiplier=2.0)
    with pytest.raises(ValueError, match=r"total_samples or max_iter"):
        m.fit(_base(20))
