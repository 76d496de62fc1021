"""FullyPrivateTopicModel at user level: a DP vocabulary selected per user and the
user-level PrivateBatchLDA composed in one report whose unit is the user and whose total is
the budget asked for; model stages without a user-level guarantee refused before any
budget is spent; user-neighbours (one user added with all their documents) give the same
report structure and the same "assumed public" lines."""
import json

import numpy as np
import pytest

from dptm.accounting import ApproxDPEvent
from dptm.datasets import load_demo_corpus
from dptm.models.private_vb import PrivateBatchLDA
from dptm.models.svi import PrivateOnlineLDA
from dptm.pipeline import FullyPrivateTopicModel
from dptm.vocab import DPVocabulary

pytestmark = pytest.mark.filterwarnings("ignore::dptm.exceptions.SeededPrivacyWarning",
                                        "ignore::dptm.exceptions.UtilityWarning")

TEXTS = load_demo_corpus().texts


def heavy_tailed_groups(n, heavy=100):
    """One user with ``heavy`` documents, the rest by users of one to three documents."""
    groups = ["heavy"] * heavy
    rest = n - heavy
    sizes = np.resize([1, 2, 3, 1], rest)
    owner = np.repeat(np.arange(sizes.size), sizes)[:rest]
    groups += [f"u{i}" for i in owner]
    return np.asarray(groups)


def stages(eps=2.0, delta=5e-6, k=4):
    return (DPVocabulary(target_epsilon=eps, target_delta=delta, max_contribution=10),
            PrivateBatchLDA(k, target_epsilon=eps, target_delta=delta))


def unit_of(report):
    return getattr(report, "unit", report.adjacency)


def test_user_level_pipeline_is_one_user_level_report_at_the_total_asked_for():
    groups = heavy_tailed_groups(len(TEXTS))
    f = FullyPrivateTopicModel(*stages(), random_state=0).fit(TEXTS, groups=groups)
    rep = f.privacy_
    assert rep.adjacency == "user" and unit_of(rep) == "user"
    assert f.vocabulary_stage_.privacy_.adjacency == "user"
    assert f.model_.privacy_.adjacency == "user"
    v_event, _ = rep.event.events
    assert isinstance(v_event, ApproxDPEvent) and v_event.epsilon == pytest.approx(2.0)
    assert v_event.delta == pytest.approx(5e-6)          # no group-privacy inflation
    # the total is the budget asked for: 2 + 2 at 5e-6 + 5e-6, never more
    total = rep.epsilon(1e-5)
    assert total <= 4.0 * (1 + 1e-9) and total >= 4.0 * (1 - 1e-3)
    assert rep.default_delta == pytest.approx(1e-5)
    text = str(rep)
    assert "user-level" in text and "stage 1: DP vocabulary (user-level)" in text
    assert f.topic_word_.shape == (4, f.vocabulary_.size)
    np.testing.assert_allclose(f.topic_word_.sum(axis=1), 1.0)


def test_release_carries_the_user_level_report(tmp_path):
    groups = heavy_tailed_groups(len(TEXTS))
    f = FullyPrivateTopicModel(*stages(), random_state=1).fit(TEXTS, groups=groups)
    rel = f.release()
    rel.save(tmp_path / "r")
    saved = json.loads((tmp_path / "r" / "release.json").read_text())
    assert saved["privacy"]["adjacency"] == "user"
    assert "user" in saved["privacy"]["vocabulary"]
    # no user id and no count of users or documents in the published file
    blob = (tmp_path / "r" / "release.json").read_text()
    assert "heavy" not in blob and '"u1"' not in blob


def test_groups_none_with_the_same_stages_is_document_level():
    f = FullyPrivateTopicModel(*stages(), random_state=2).fit(TEXTS)
    assert f.privacy_.adjacency == "document"
    assert f.vocabulary_stage_.privacy_.adjacency == "document"


@pytest.mark.parametrize("make", [
    lambda: PrivateOnlineLDA(n_components=2, max_doc_length=10, target_epsilon=2.0,
                             target_delta=5e-6, max_iter=2, total_samples=800),
    lambda: __import__("dptm.models.private_gibbs", fromlist=["x"]).NoisyGibbsLDA(
        2, clip=50, max_iter=2),
])
def test_a_stage_without_a_user_level_guarantee_is_refused_before_any_budget(make, monkeypatch):
    ran = []
    monkeypatch.setattr(DPVocabulary, "fit", lambda self, *a, **k: ran.append(1))
    model = make()
    f = FullyPrivateTopicModel(DPVocabulary(2.0, 5e-6, max_contribution=10), model)
    name = type(model).__name__
    with pytest.raises(ValueError, match=rf"model {name} (has no user-level guarantee|is only "
                                         r"word-level)"):
        f.fit(TEXTS, groups=heavy_tailed_groups(len(TEXTS)))
    assert not ran and not hasattr(f, "vocabulary_stage_") and not hasattr(f, "model_")


def test_a_document_level_stage_names_groups_and_the_user_level_models(monkeypatch):
    monkeypatch.setattr(DPVocabulary, "fit", lambda self, *a, **k: pytest.fail("budget spent"))
    f = FullyPrivateTopicModel(DPVocabulary(2.0, 5e-6, max_contribution=10),
                               PrivateOnlineLDA(2, max_doc_length=10, total_samples=800,
                                                target_epsilon=2.0, target_delta=5e-6))
    with pytest.raises(ValueError) as info:
        f.fit(TEXTS, groups=heavy_tailed_groups(len(TEXTS)))
    msg = str(info.value)
    assert "groups were given" in msg and "PrivateOnlineLDA has no user-level guarantee" in msg
    assert "n times its epsilon" in msg and "PrivateBatchLDA" in msg and "groups=None" in msg


def test_a_stage_that_reports_document_level_after_a_grouped_fit_is_discarded():
    # takes groups, but its report says document: refused after its fit, nothing kept
    class IgnoresGroups(PrivateBatchLDA):
        def fit(self, X, y=None, groups=None):
            return super().fit(X)

    f = FullyPrivateTopicModel(DPVocabulary(2.0, 5e-6, max_contribution=10),
                               IgnoresGroups(2, target_epsilon=2.0, target_delta=5e-6),
                               random_state=0)
    with pytest.raises(ValueError, match="reported 'document' adjacency after its fit"):
        f.fit(TEXTS, groups=heavy_tailed_groups(len(TEXTS)))
    assert not hasattr(f, "model_") and not hasattr(f, "vocabulary_stage_")
    assert not hasattr(f, "privacy_")


def _with_user(texts, groups, user_docs, where):
    """The corpus with one more user (all their documents), inserted at row ``where``."""
    texts = list(texts[:where]) + list(user_docs) + list(texts[where:])
    groups = np.concatenate([groups[:where], ["added"] * len(user_docs), groups[where:]])
    return texts, groups


@pytest.mark.parametrize("where", [0, 400, 800])
def test_user_neighbours_have_the_same_report_structure_and_public_lines(where):
    # D and D plus one heavy user (120 documents, worst case: all the same long text)
    texts = list(TEXTS)
    groups = heavy_tailed_groups(len(texts))
    heavy = [" ".join([TEXTS[0]] * 5)] * 120
    texts2, groups2 = _with_user(texts, groups, heavy, where)
    reports = [FullyPrivateTopicModel(*stages(), random_state=3).fit(t, groups=g).privacy_
               for t, g in ((texts, groups), (texts2, groups2))]
    a, b = reports
    assert a.assumed_public == b.assumed_public
    assert a.adjacency == b.adjacency == "user"
    assert [e.label for e in a.event.events] == [e.label for e in b.event.events]
    assert a.epsilon(1e-5) == b.epsilon(1e-5)
    assert a.default_delta == b.default_delta
    # nothing assumed public counts documents or users
    for line in a.assumed_public:
        assert str(len(texts)) not in line and str(len(set(groups))) not in line
