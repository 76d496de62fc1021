"""Guardrails where scikit-learn users go: a Pipeline whose vectorizer learns its
vocabulary from the private documents, model selection that fits the data many times
(and the ledger of dptm.selection.spending), and warnings that point at the caller's line."""
import warnings

import numpy as np
import pytest
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.model_selection import GridSearchCV, cross_validate
from sklearn.pipeline import make_pipeline

import dptm
from dptm import GibbsLDA, PrivateBatchLDA, Release
from dptm.accounting import BudgetAccountant, BudgetExceededError, PrivacyReport
from dptm.accounting.events import ComposedEvent
from dptm.exceptions import PrivacyWarning, PrivateVocabularyWarning, RepeatedFitWarning
from dptm.models._base import PRIVATE_VOCABULARY
from dptm.selection import current_accountant, set_default_accountant, spending

WORDS = [f"w{i:02d}" for i in range(40)]


def _texts(n=120, seed=0):
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS[:30], 20)) for _ in range(n)]


def _caught(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn()
    return result, caught


def _of(caught, category):
    return [w for w in caught if issubclass(w.category, category)]


# ------------------------------------------------------------------ vocabulary provenance

def test_pipeline_with_learned_vocabulary_warns_and_the_release_says_so(tmp_path):
    texts = _texts()
    pipe, caught = _caught(lambda: make_pipeline(
        CountVectorizer(), PrivateBatchLDA(4, target_epsilon=2)).fit(texts))
    found = _of(caught, PrivateVocabularyWarning)
    assert len(found) == 1 and issubclass(PrivateVocabularyWarning, PrivacyWarning)
    assert found[0].filename == __file__                 # the user's pipe.fit line
    assert "CountVectorizer" in str(found[0].message)
    model = pipe[-1]
    assert model.privacy_.vocabulary == PRIVATE_VOCABULARY
    assert PRIVATE_VOCABULARY in str(model.privacy_)
    # the guarantee itself is unchanged: only the provenance line differs
    plain = PrivateBatchLDA(4, target_epsilon=2).fit(pipe[0].transform(texts))
    assert model.privacy_.epsilon() == pytest.approx(plain.privacy_.epsilon(), rel=1e-12)
    release, caught = _caught(lambda: model.release(vocabulary=pipe[0]))
    assert release.vocabulary == list(pipe[0].get_feature_names_out())
    assert release.vocabulary_provenance == PRIVATE_VOCABULARY
    assert not release.vocabulary_provenance.startswith("public")
    assert Release.load(release.save(tmp_path / "r")).vocabulary_provenance == PRIVATE_VOCABULARY


def test_pipeline_with_public_vocabulary_stays_public():
    texts = _texts()
    pipe, caught = _caught(lambda: make_pipeline(
        CountVectorizer(vocabulary=WORDS), PrivateBatchLDA(4, target_epsilon=2)).fit(texts))
    assert not _of(caught, PrivateVocabularyWarning)
    release, caught = _caught(lambda: pipe[-1].release(vocabulary=pipe[0]))
    assert not _of(caught, PrivateVocabularyWarning)
    assert release.vocabulary == WORDS
    assert release.vocabulary_provenance.startswith("public (given)")
    assert pipe[-1].privacy_.vocabulary is None


def test_refit_with_public_vocabulary_clears_the_mark():
    """The mark is decided at every fit: a model fitted after a learned vocabulary and
    then refitted in a pipeline with a public one is public again."""
    texts = _texts()
    model = PrivateBatchLDA(4, target_epsilon=2)
    _caught(lambda: make_pipeline(CountVectorizer(), model).fit(texts))
    assert model.privacy_.vocabulary == PRIVATE_VOCABULARY
    _caught(lambda: make_pipeline(CountVectorizer(vocabulary=WORDS), model).fit(texts))
    assert model.privacy_.vocabulary is None


def test_release_with_a_hand_fitted_vectorizer():
    texts = _texts()
    learned = CountVectorizer().fit(texts)
    model = PrivateBatchLDA(4, target_epsilon=2).fit(learned.transform(texts))
    assert model.privacy_.vocabulary is None           # nothing told the fit
    release, caught = _caught(lambda: model.release(vocabulary=learned))
    found = _of(caught, PrivateVocabularyWarning)
    assert len(found) == 1 and found[0].filename == __file__
    assert release.vocabulary_provenance == PRIVATE_VOCABULARY
    assert model.privacy_.vocabulary is None            # the model's report is not modified
    public = CountVectorizer(vocabulary=WORDS).fit(texts)
    model2 = PrivateBatchLDA(4, target_epsilon=2).fit(public.transform(texts))
    release2, caught = _caught(lambda: model2.release(vocabulary=public))
    assert not _of(caught, PrivateVocabularyWarning)
    assert release2.vocabulary == WORDS and release2.vocabulary_provenance.startswith("public")


def test_release_with_a_vectorizers_feature_names_is_flagged_from_their_form():
    # the idiom release(vocabulary=cv.get_feature_names_out()) after cv.fit on the private
    # text: the words come as a sorted object array, which the release warns of (it still
    # declares given words public); a list, a string array (the demo corpus' vocabulary) or
    # an unsorted object array is taken as given, silently. Nothing of the data is looked at.
    texts = _texts()
    learned = CountVectorizer().fit(texts)
    model = PrivateBatchLDA(4, target_epsilon=2).fit(learned.transform(texts))
    names = learned.get_feature_names_out()
    release, caught = _caught(lambda: model.release(vocabulary=names))
    found = _of(caught, PrivateVocabularyWarning)
    assert len(found) == 1 and found[0].filename == __file__
    assert "get_feature_names_out()" in str(found[0].message)
    assert release.vocabulary_provenance.startswith("public (given)")
    for quiet in (list(names), names.astype(str), names[::-1].copy()):
        _, caught = _caught(lambda: model.release(vocabulary=quiet))
        assert not _of(caught, PrivateVocabularyWarning), type(quiet)
    non_private = GibbsLDA(4, max_iter=2, random_state=0).fit(learned.transform(texts))
    _, caught = _caught(lambda: non_private.release(vocabulary=names))
    assert not _of(caught, PrivateVocabularyWarning)


def test_non_private_pipeline_is_not_flagged():
    texts = _texts()
    model = GibbsLDA(3, max_iter=5, random_state=0)
    _, caught = _caught(lambda: make_pipeline(CountVectorizer(), model).fit(texts))
    assert not _of(caught, PrivacyWarning)


# ------------------------------------------------------------------ repeated fits

def _X(n=120):
    return CountVectorizer(vocabulary=WORDS).fit_transform(_texts(n))


def test_grid_search_warns_and_the_accountant_holds_every_fit():
    X = _X()
    budget = BudgetAccountant(epsilon=1000, delta=1e-5)
    search = GridSearchCV(PrivateBatchLDA(4), {"target_epsilon": [1, 4]}, cv=2)
    with spending(budget):
        _, caught = _caught(lambda: search.fit(X))
    found = _of(caught, RepeatedFitWarning)
    assert len(found) == 5 and all(w.filename == __file__ for w in found)
    assert "privacy_ covers this one fit only" in str(found[0].message)
    # 2 settings x 2 folds, and the refit of the best setting on all of X
    assert len(budget.reports) == 5
    assert all(label == "PrivateBatchLDA.fit in GridSearchCV.fit" for label in budget.labels)
    eps = sorted(r.epsilon(1e-5) for r in budget.reports)
    best = search.best_params_["target_epsilon"]
    expected = sorted([1, 1, 4, 4, best])
    np.testing.assert_allclose(eps, expected, rtol=1e-3)
    # the ledger's total is the composition of the five reports, far above one fit's
    composed = PrivacyReport(ComposedEvent(tuple(r.event for r in budget.reports)), "document")
    assert budget.spent == pytest.approx(composed.epsilon(1e-5), rel=1e-12)
    assert budget.spent > 1.5 * search.best_estimator_.privacy_.epsilon(1e-5)


def test_cross_validate_warns_and_spends_each_fold():
    budget = BudgetAccountant(epsilon=1000, delta=1e-5)
    with spending(budget):
        _, caught = _caught(lambda: cross_validate(PrivateBatchLDA(4, target_epsilon=2), _X(),
                                                   cv=3))
    assert len(_of(caught, RepeatedFitWarning)) == 3
    assert len(budget.reports) == 3 and "cross_validate" in budget.labels[0]


def test_fits_outside_a_spending_block_are_not_recorded_and_default_accountant():
    X = _X()
    budget = BudgetAccountant(epsilon=1000, delta=1e-5)
    with spending(budget):
        PrivateBatchLDA(4, target_epsilon=1).fit(X)
        assert current_accountant() is budget
    PrivateBatchLDA(4, target_epsilon=1).fit(X)
    assert len(budget.reports) == 1 and list(budget.labels) == ["PrivateBatchLDA.fit"]
    assert current_accountant() is None
    other = BudgetAccountant(epsilon=1000, delta=1e-5)
    assert set_default_accountant(other) is None
    try:
        PrivateBatchLDA(4, target_epsilon=1).fit(X)
        GibbsLDA(3, max_iter=3, random_state=0).fit(X)       # non-private: nothing to spend
    finally:
        assert set_default_accountant(None) is other
    assert len(other.reports) == 1 and len(budget.reports) == 1


def test_spending_past_the_cap_raises_from_fit():
    X = _X()
    budget = BudgetAccountant(epsilon=2.5, delta=1e-5)
    with spending(budget):
        PrivateBatchLDA(4, target_epsilon=2).fit(X)
        with pytest.raises(BudgetExceededError, match="nothing was recorded"):
            PrivateBatchLDA(4, target_epsilon=2).fit(X)
    assert len(budget.reports) == 1


def test_spending_refuses_a_non_accountant():
    with pytest.raises(TypeError, match="accountant"):
        with spending(object()):
            pass
    with pytest.raises(TypeError, match="accountant"):
        set_default_accountant(3)


def test_non_private_grid_search_does_not_warn():
    _, caught = _caught(lambda: GridSearchCV(GibbsLDA(3, max_iter=3, random_state=0),
                                             {"n_components": [2, 3]}, cv=2).fit(_X()))
    assert not _of(caught, RepeatedFitWarning)


# ------------------------------------------------------------------ warnings' location

def _dptm_warnings(caught):
    """dptm's warning classes, and dptm's own FutureWarnings (not other libraries')."""
    kinds = (PrivacyWarning, dptm.exceptions.UtilityWarning)
    return [w for w in caught if issubclass(w.category, kinds) or (
        w.category is FutureWarning and "users=" in str(w.message))]


@pytest.mark.parametrize("make", [
    pytest.param(lambda: PrivateBatchLDA(4, target_epsilon=2, random_state=0), id="seeded"),
    pytest.param(lambda: PrivateBatchLDA(4, target_epsilon=40), id="vacuous"),
    pytest.param(lambda: GibbsLDA(200, max_iter=2, random_state=0), id="topic-count"),
    pytest.param(lambda: dptm.PrivateOnlineLDA(3, mechanism="gaussian", noise_multiplier=2.0,
                                               max_iter=2, max_doc_length=30, total_samples=120),
                 id="svi-float"),
    pytest.param(lambda: dptm.NoisyGibbsLDA(3, mechanism="laplace", clip=5, max_iter=2),
                 id="gibbs-float"),
    pytest.param(lambda: dptm.TopicDP(GibbsLDA(3, max_iter=3), mechanism="gaussian-float",
                                      sensitivity=1.0, target_epsilon=2.0), id="topicdp-float"),
])
@pytest.mark.parametrize("route", ["direct", "pipeline"])
def test_every_warning_of_a_fit_points_at_the_callers_line(make, route):
    texts = _texts()
    X = CountVectorizer(vocabulary=WORDS).fit_transform(texts)
    if route == "direct":
        _, caught = _caught(lambda: make().fit(X))
    else:
        _, caught = _caught(lambda: make_pipeline(CountVectorizer(vocabulary=WORDS),
                                                  make()).fit(texts))
    ours = _dptm_warnings(caught)
    assert ours, "the case must emit at least one dptm warning"
    assert [(w.category.__name__, w.filename) for w in ours] == \
        [(w.category.__name__, __file__) for w in ours]


def test_release_and_dp_vocabulary_warnings_point_at_the_callers_line():
    texts = _texts()
    learned = CountVectorizer().fit(texts)
    model = PrivateBatchLDA(4, target_epsilon=2).fit(learned.transform(texts))
    _, caught = _caught(lambda: model.release(vocabulary=learned))
    assert [w.filename for w in _dptm_warnings(caught)] == [__file__]
    tokens = [t.split() for t in texts]
    _, caught = _caught(lambda: dptm.DPVocabulary(1.0, 1e-5,
                                                  method="frequency_gaussian").fit(tokens))
    ours = _dptm_warnings(caught)
    assert ours and all(w.filename == __file__ for w in ours)


def test_user_stacklevel_skips_dptm_and_sklearn_frames():
    from dptm.exceptions import user_stacklevel

    def warn_here():
        warnings.warn("x", UserWarning, stacklevel=user_stacklevel())
    _, caught = _caught(warn_here)
    # warn_here is outside dptm: the warning points at it (level 1)
    assert caught[0].filename == __file__
    assert caught[0].lineno == warn_here.__code__.co_firstlineno + 1


def test_frozen_vectorizer_fitted_on_public_text_is_not_flagged():
    """A vectorizer fitted beforehand on public text and frozen is not refitted by the
    Pipeline: its vocabulary does not come from the private documents."""
    frozen_module = pytest.importorskip("sklearn.frozen")
    public = CountVectorizer().fit([" ".join(WORDS)])
    texts = _texts()
    pipe, caught = _caught(lambda: make_pipeline(frozen_module.FrozenEstimator(public),
                                                 PrivateBatchLDA(4, target_epsilon=2)).fit(texts))
    assert not _of(caught, PrivateVocabularyWarning)
    assert pipe[-1].privacy_.vocabulary is None


def test_nested_pipeline_is_seen():
    texts = _texts()
    inner = make_pipeline(PrivateBatchLDA(4, target_epsilon=2))
    pipe, caught = _caught(lambda: make_pipeline(CountVectorizer(), inner).fit(texts))
    assert len(_of(caught, PrivateVocabularyWarning)) == 1
    assert inner[-1].privacy_.vocabulary == PRIVATE_VOCABULARY


def test_fit_distributed_spends_and_points_at_the_callers_line():
    from dptm.distributed import fit_distributed
    X = _X()
    budget = BudgetAccountant(epsilon=1000, delta=1e-5)
    with spending(budget):
        model, caught = _caught(lambda: fit_distributed(
            PrivateBatchLDA(4, target_epsilon=40), X, "serial", n_partitions=2))
    assert len(budget.reports) == 1 and budget.reports[0] == model.privacy_
    vacuous = _of(caught, dptm.exceptions.VacuousGuaranteeWarning)
    assert vacuous and all(w.filename == __file__ for w in vacuous)
