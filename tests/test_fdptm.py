"""Fully DP topic modeling (papers/manzonelli2024 Algorithm 1): stages, composition, errors."""
import math
import pickle

import numpy as np
import pytest
from sklearn.decomposition import NMF, LatentDirichletAllocation

from dptm.models.topicdp import TopicDP
from dptm.models.svi import PrivateOnlineLDA
from dptm.pipeline import FullyPrivateTopicModel
from dptm.vocab import DPVocabulary

pytestmark = pytest.mark.filterwarnings("ignore::dptm.exceptions.SeededPrivacyWarning")

DOCS = (["storm flood rain warning river", "election vote poll candidate",
         "flood rain river dam", "vote poll senate candidate"] * 150
        + ["zyxwv unique secret words here"])


def vips(eps=3.0, k=2):
    return PrivateOnlineLDA(n_components=k, max_doc_length=10, target_epsilon=eps,
                            target_delta=1e-5, max_iter=5, total_samples=len(DOCS))


def test_pipeline_releases_private_vocabulary_and_topics():
    # alpha=10: a frequent word sits at the cut-off rho + 10 b and fails rho with
    # probability e^-10 / 2 (with the default alpha=3, 2.5% per word)
    f = FullyPrivateTopicModel(DPVocabulary(3.0, 1e-5, max_contribution=10, alpha=10.0), vips(),
                               random_state=0).fit(DOCS)
    words = f.vocabulary_.tolist()
    assert words == sorted(words)
    assert {"flood", "rain", "vote", "poll"} <= set(words)
    assert not {"zyxwv", "unique", "secret"} & set(words)
    assert f.topic_word_.shape == (2, len(words))
    np.testing.assert_allclose(f.topic_word_.sum(axis=1), 1.0)
    # the model stage saw only the sanitized corpus
    assert f.model_.components_.shape[1] == len(words)
    X = f.sanitize(["flood rain zyxwv", "vote"])
    assert X.shape == (2, len(words)) and X.sum() == 3
    theta = f.transform(["flood rain river", "vote poll"])
    np.testing.assert_allclose(theta.sum(axis=1), 1.0)


def test_composition_is_basic_composition_of_both_stages():
    f = FullyPrivateTopicModel(DPVocabulary(2.0, 1e-5, max_contribution=10), vips(3.0),
                               random_state=0).fit(DOCS)
    rep = f.privacy_
    eps2 = f.model_.privacy_.epsilon(1e-5)
    assert eps2 <= 3.0 * (1 + 1e-9)
    assert rep.adjacency == "document"
    assert rep.epsilon(2e-5) == pytest.approx(2.0 + eps2, rel=1e-12)
    assert rep.epsilon(1.5e-5) == math.inf            # below delta1 + delta2: no guarantee
    text = str(rep)
    assert "stage 1" in text and "stage 2" in text and "Theorem 4.1" in text
    # the adjacency is stated once, not again by the vocabulary stage's own note
    assert sum("own user" in n for n in rep.notes) == 1


def test_report_keeps_what_the_model_stage_assumes_public():
    # Catches the composed report dropping the model stage's "assumed public" lines (fresh
    # round 4, H22): VIPS's declared total_samples sets its rate and must stay stated.
    f = FullyPrivateTopicModel(DPVocabulary(3.0, 1e-5, max_contribution=10), vips(),
                               random_state=0).fit(DOCS)
    stage = [a for a in f.model_.privacy_.assumed_public if not a.startswith("vocabulary")]
    assert any("total_samples" in a for a in stage)
    assert set(stage) <= set(f.privacy_.assumed_public)
    assert "total_samples" in str(f.privacy_)


@pytest.mark.filterwarnings("ignore::dptm.exceptions.UtilityWarning")
def test_each_stage_is_stated_at_its_own_delta():
    # The test above uses one delta for both stages, which hides a model epsilon taken at
    # the vocabulary's delta. With delta1 = 1e-4 > delta2 = 1e-6 that epsilon would be
    # smaller than the model's own at delta2: the composed guarantee understated.
    model = PrivateOnlineLDA(n_components=2, max_doc_length=10, target_epsilon=3.0,
                             target_delta=1e-6, max_iter=5, total_samples=len(DOCS))
    f = FullyPrivateTopicModel(DPVocabulary(2.0, 1e-4, max_contribution=10), model,
                               random_state=0).fit(DOCS)
    vrep, mrep = f.vocabulary_stage_.privacy_, f.model_.privacy_
    assert vrep.default_delta == pytest.approx(1e-4)
    eps1, eps2 = vrep.epsilon(1e-4), mrep.epsilon(1e-6)
    assert eps2 > mrep.epsilon(1e-4) * 1.01            # the two deltas give different epsilons
    assert f.privacy_.default_delta == pytest.approx(1e-4 + 1e-6, rel=1e-12)
    assert f.privacy_.epsilon(1e-4 + 1e-6) == pytest.approx(eps1 + eps2, rel=1e-12)


def test_users_with_a_document_level_model_are_refused():
    # groups ask for user-level privacy; VIPS protects one document (a user with n documents
    # would get n times its epsilon): refused, naming groups and the user-level models
    users = np.arange(len(DOCS)) // 3
    with pytest.raises(ValueError, match=r"groups were given.*PrivateOnlineLDA has no "
                                         r"user-level guarantee.*PrivateBatchLDA"):
        FullyPrivateTopicModel(DPVocabulary(1.0, 1e-5, max_contribution=10), vips(3.0),
                               random_state=0).fit(DOCS, groups=users)


def test_topicdp_model_is_user_level_random_dp():
    users = np.arange(len(DOCS)) % 150
    public = ["storm rain flood river", "vote poll candidate senate"] * 40   # public corpus
    # the public corpus' users (40 of 2 documents): the unit the sensitivity is measured on
    dp = TopicDP(NMF(2, max_iter=100, init="nndsvda"), target_epsilon=3.0, target_delta=1e-5,
                 gamma=0.5, reference_groups=np.arange(len(public)) // 2)
    f = FullyPrivateTopicModel(DPVocabulary(3.0, 1e-5, max_contribution=10), dp,
                               reference_documents=public, random_state=0).fit(DOCS, groups=users)
    assert f.model_.reference_X.shape == (80, f.vocabulary_.size)
    rep = f.privacy_
    assert rep.adjacency == "user" and rep.gamma == 0.5
    v_event, _ = rep.event.events
    assert v_event.epsilon == pytest.approx(3.0)          # same unit: no group privacy
    assert "random DP" in str(rep)
    assert "one uniformly random user (40 users given by reference_groups)" in str(rep)
    assert f.model_.privacy_.adjacency == "user"


def test_topicdp_stage_without_reference_users_is_refused_at_user_level():
    # catches the overclaim through the pipeline: groups made the composed report user-level
    # while TopicDP sampled its sensitivity by removing one public DOCUMENT
    users = np.arange(len(DOCS)) % 150
    public = ["storm rain flood river", "vote poll candidate senate"] * 40
    dp = TopicDP(NMF(2, max_iter=100, init="nndsvda"), target_epsilon=3.0, target_delta=1e-5,
                 gamma=0.5)
    f = FullyPrivateTopicModel(DPVocabulary(3.0, 1e-5, max_contribution=10), dp,
                               reference_documents=public, random_state=0)
    with pytest.raises(ValueError, match=r"groups=.*reference_groups=None.*one reference DOCUMENT"):
        f.fit(DOCS, groups=users)
    assert not hasattr(f, "privacy_")


@pytest.mark.parametrize("clip", [None, 50])
@pytest.mark.parametrize("name", ["NoisyGibbsLDA", "SubsampledGibbsLDA"])
def test_word_level_model_is_refused_before_any_stage_runs(name, clip, monkeypatch):
    # Behind a DP vocabulary a replaced word becomes a deleted token (t selected, t' not):
    # not covered by the word-level proof, which takes N and the lengths as public (and
    # C = N of the sanitized corpus was printed as public). Refused, naming what is allowed.
    from dptm.models import private_gibbs
    m = getattr(private_gibbs, name)(2, clip=clip, max_iter=3)
    ran = []
    monkeypatch.setattr(DPVocabulary, "fit", lambda self, *a, **k: ran.append(1))
    f = FullyPrivateTopicModel(DPVocabulary(1.0, 1e-5, max_contribution=10), m)
    with pytest.raises(ValueError, match=rf"{name} is only word-level.*PrivateBatchLDA.*"
                                         r"public vocabulary"):
        f.fit(DOCS)
    assert not ran and not hasattr(f, "vocabulary_stage_")


def test_replace_one_and_word_reports_are_refused_after_the_fit():
    # a model whose adjacency is only known from its report: refused, its fit not kept
    class WordLevel(PrivateOnlineLDA):
        def fit(self, X, y=None):
            super().fit(X)
            from dptm.accounting import PrivacyReport
            self.privacy_ = PrivacyReport(self.privacy_.event, "word")
            return self
    f = FullyPrivateTopicModel(DPVocabulary(3.0, 1e-5, max_contribution=10),
                               WordLevel(2, max_doc_length=10, total_samples=601,
                                         noise_multiplier=2.0, max_iter=1))
    with pytest.raises(ValueError, match="'word' adjacency.*document or user level"):
        f.fit(DOCS)
    assert not hasattr(f, "model_") and not hasattr(f, "vocabulary_stage_")
    with pytest.raises(ValueError, match="sampling='shuffle'.*sampling='poisson'"):
        FullyPrivateTopicModel(DPVocabulary(3.0, 1e-5, max_contribution=10),
                               PrivateOnlineLDA(2, max_doc_length=10, sampling="shuffle",
                                                noise_multiplier=2.0)).fit(DOCS)


def test_online_lda_without_total_samples_is_refused_before_any_budget_is_spent(monkeypatch):
    # its rate, steps and noise would follow the number of documents, which add/remove
    # changes: refused by the pipeline itself, before the vocabulary stage spends budget
    m = PrivateOnlineLDA(n_components=2, max_doc_length=10, target_epsilon=3.0,
                         target_delta=1e-5, max_iter=1)
    f = FullyPrivateTopicModel(DPVocabulary(3.0, 1e-5, max_contribution=10), m)
    monkeypatch.setattr(DPVocabulary, "fit", lambda *a, **k: pytest.fail("budget spent"))
    with pytest.raises(ValueError, match=r"PrivateOnlineLDA\(total_samples=None\).*declare "
                       r"total_samples, a PUBLIC number of documents"):
        f.fit(DOCS)
    assert not hasattr(f, "model_") and not hasattr(f, "vocabulary_stage_")


def test_same_seed_same_release_and_pickle():
    kw = dict(vocabulary=DPVocabulary(3.0, max_contribution=10), model=vips(), random_state=4)
    a = FullyPrivateTopicModel(**kw).fit(DOCS)
    b = FullyPrivateTopicModel(**kw).fit(DOCS)
    np.testing.assert_array_equal(a.topic_word_, b.topic_word_)
    np.testing.assert_array_equal(a.vocabulary_, b.vocabulary_)
    c = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(c.topic_word_, a.topic_word_)
    assert c.privacy_.epsilon(2e-5) == a.privacy_.epsilon(2e-5)


def test_token_lists_and_strings_give_the_same_result():
    from dptm.text import preprocess
    kw = dict(vocabulary=DPVocabulary(3.0, max_contribution=10), model=vips(), random_state=4)
    a = FullyPrivateTopicModel(**kw).fit(DOCS)
    b = FullyPrivateTopicModel(**kw).fit(preprocess(DOCS))
    np.testing.assert_array_equal(a.topic_word_, b.topic_word_)


def test_errors():
    with pytest.raises(ValueError, match="privacy_"):
        FullyPrivateTopicModel(DPVocabulary(3.0, max_contribution=10),
                               LatentDirichletAllocation(2, max_iter=2)).fit(DOCS)
    with pytest.raises(ValueError, match="vocabulary is empty"):
        FullyPrivateTopicModel(DPVocabulary(0.01, 1e-9, max_contribution=10), vips()).fit(DOCS[:20])
    with pytest.raises(TypeError, match="DPVocabulary"):
        FullyPrivateTopicModel(vocabulary="all").fit(DOCS)
    with pytest.raises(TypeError, match="single string"):
        FullyPrivateTopicModel().fit("one document")
    with pytest.raises(ValueError, match="groups"):
        FullyPrivateTopicModel(DPVocabulary(3.0, max_contribution=10), vips()).fit(DOCS, groups=[1])
    with pytest.raises(ValueError, match="empty corpus"):
        FullyPrivateTopicModel().fit([])
    with pytest.raises(ValueError, match="reference_X"):
        FullyPrivateTopicModel(DPVocabulary(3.0, max_contribution=10), vips(),
                               reference_documents=DOCS[:5]).fit(DOCS)


@pytest.mark.parametrize("bad", [np.eye(4, dtype=int), [[1, 2], [3]], [np.array(["a", "b"])]])
def test_a_count_matrix_is_not_a_corpus(bad):
    import scipy.sparse as sp
    with pytest.raises(TypeError, match="token|str"):
        FullyPrivateTopicModel(DPVocabulary(3.0, max_contribution=10), vips()).fit(bad)
    with pytest.raises(TypeError, match="token"):
        FullyPrivateTopicModel().fit(sp.csr_matrix(np.eye(4)))


def test_report_keeps_every_caveat_of_its_stages():
    # The keyword ids of TopicDP(output="keywords") come from the non-private fit: the
    # pipeline must keep saying so, and must not claim DP for a paper-mode stage.
    kw = TopicDP(NMF(2, max_iter=100, init="nndsvda"), target_epsilon=3.0, target_delta=1e-5,
                 output="keywords", n_top_topics=2, n_top_words=3, sensitivity=0.05)
    f = FullyPrivateTopicModel(DPVocabulary(3.0, 1e-5, max_contribution=10), kw).fit(DOCS)
    text = str(f.privacy_)
    assert "NOT covered" in text and "partly unprotected" in f.privacy_.description
    assert f.privacy_.vocabulary.startswith("DP-selected (epsilon=3")
    paper = TopicDP(NMF(2, max_iter=100, init="nndsvda"), target_epsilon=3.0, target_delta=1e-5,
                    gamma=0.5, sensitivity="sample-private")
    f = FullyPrivateTopicModel(DPVocabulary(3.0, 1e-5, max_contribution=10), paper).fit(DOCS)
    assert "NOT DP" in f.privacy_.description and "Delta_s is revealed" in str(f.privacy_)
    assert f.privacy_.gamma == 0.5


def _topicdp(**kw):
    return TopicDP(NMF(2, max_iter=100, init="nndsvda", random_state=0), target_epsilon=3.0,
                   target_delta=1e-5, sensitivity=0.05, **kw)


def test_stages_draw_from_the_secret_generator_and_release_has_provenance(tmp_path):
    f = FullyPrivateTopicModel(DPVocabulary(3.0, 1e-5, max_contribution=10, random_state=3),
                               _topicdp(random_state=4)).fit(DOCS)
    # the stage's own seed is replaced by None (secret), nothing seeded is reported
    assert f.vocabulary_stage_.random_state is None and f.model_.random_state is None
    assert not f.privacy_.seeded
    blob = pickle.dumps(f)
    for secret in (b"AESCounter", b"SeedSequence", b"PCG64"):
        assert secret not in blob
    rel = f.release()
    assert rel.vocabulary == f.vocabulary_.tolist()
    assert rel.vocabulary_provenance.startswith("DP-selected")
    from dptm.release import Release
    assert Release.load(rel.save(tmp_path / "r")) == rel
    g = FullyPrivateTopicModel(DPVocabulary(3.0, 1e-5, max_contribution=10),
                               _topicdp()).fit(DOCS)
    if f.topic_word_.shape == g.topic_word_.shape:     # fresh noise in every unclamped entry
        both = (f.components_ > 0) & (g.components_ > 0)
        assert both.any() and np.all(f.components_[both] != g.components_[both])
    seeded = FullyPrivateTopicModel(DPVocabulary(3.0, 1e-5, max_contribution=10), _topicdp(),
                                    random_state=1).fit(DOCS)
    assert seeded.privacy_.seeded and str(seeded.privacy_).startswith("TEST MODE")


def test_tweetrumors_end_to_end(tweetrumors):
    from dptm.metrics import umass_coherence
    docs = [t.split() for t in tweetrumors[:2000]]
    f = FullyPrivateTopicModel(
        DPVocabulary(5.0, 1e-5, alpha=3.0, max_contribution=20),
        PrivateOnlineLDA(n_components=5, max_doc_length=20, target_epsilon=5.0,
                         target_delta=1e-5, max_iter=5, total_samples=2000),
        random_state=0).fit(docs)
    full_vocab = {w for d in docs for w in d}
    assert 20 < f.vocabulary_.size < len(full_vocab) / 3
    X = f.sanitize(docs)
    c = umass_coherence(X, f.topic_word_, top_n=10)
    assert np.isfinite(c) and c <= 0


def test_a_small_dp_vocabulary_warns_in_python_too():
    # DOCS hold 13 frequent words: fewer than 10 x K for K = 2 (the CLI printed this; a
    # Python user got no warning)
    from dptm.exceptions import UtilityWarning
    f = FullyPrivateTopicModel(DPVocabulary(3.0, 1e-5, max_contribution=10, alpha=10.0), vips(),
                               random_state=0)
    with pytest.warns(UtilityWarning, match=r"fewer than 10 x K = 20") as rec:
        f.fit(DOCS)
    (msg,) = [str(w.message) for w in rec if issubclass(w.category, UtilityWarning)]
    assert f"only {len(f.vocabulary_)} words" in msg


@pytest.mark.parametrize("name", ["init_topics", "word_counts"])
def test_per_word_inputs_of_the_model_are_refused_before_the_vocabulary_stage(name, monkeypatch):
    """They are per column of a vocabulary the first stage has not selected yet: refused
    before any budget is spent (the DP vocabulary's fit is never called)."""
    from dptm import DPVocabulary, FullyPrivateTopicModel, PrivateBatchLDA
    monkeypatch.setattr(DPVocabulary, "fit", lambda *a, **k: pytest.fail("stage 1 ran"))
    model = PrivateBatchLDA(2, target_epsilon=1.0, **{name: np.ones((2, 5)) if name ==
                                                      "init_topics" else np.ones(5)})
    with pytest.raises(ValueError, match=f"model.{name} is given per vocabulary word"):
        FullyPrivateTopicModel(model=model).fit(["apple banana"] * 20)
