"""Guardrails: vacuous guarantees, uninformative models, too many topics."""
import math
import warnings

import numpy as np
import pytest

from dptm import GibbsLDA, Release
from dptm.accounting import GaussianEvent, LaplaceEvent, PrivacyReport, SelfComposedEvent
from dptm.datasets import load_demo_corpus
from dptm.exceptions import (PrivacyWarning, TopicCountWarning, UninformativeModelWarning,
                             UtilityWarning, VacuousGuaranteeWarning)
from dptm.guardrails import check_against_uniform, check_guarantee, check_topic_count


def test_large_epsilon_is_flagged():
    report = PrivacyReport(SelfComposedEvent(LaplaceEvent(1.0), 11), "word")   # pure eps 11
    with pytest.warns(VacuousGuaranteeWarning, match="epsilon = 11 exceeds 10"):
        assert len(check_guarantee(report)) == 1
    assert issubclass(VacuousGuaranteeWarning, PrivacyWarning)


def test_delta_of_one_over_n_is_flagged():
    report = PrivacyReport(GaussianEvent(5.0), "document", default_delta=1e-3)
    with pytest.warns(VacuousGuaranteeWarning, match=r"delta = 0.001 >= 1/n = 1/1000"):
        check_guarantee(report, n_records=1000, unit="documents")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check_guarantee(report, n_records=999) == []       # 1e-3 < 1/999


def test_a_sound_small_guarantee_is_silent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check_guarantee(PrivacyReport(LaplaceEvent(2.0), "word"), n_records=10**6) == []


def test_uniform_model_is_flagged_and_a_fitted_one_is_not():
    demo = load_demo_corpus()
    V = demo.X.shape[1]
    uniform = Release(np.ones((8, V)), doc_topic_prior=0.1)
    with pytest.warns(UninformativeModelWarning, match="no better than the uniform"):
        ppl = check_against_uniform(uniform, demo.X[:50])
    assert ppl == pytest.approx(V, rel=1e-9)
    fitted = GibbsLDA(8, max_iter=30, random_state=0).fit(demo.X[50:])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check_against_uniform(fitted, demo.X[:50]) < 0.5 * V
    assert issubclass(UninformativeModelWarning, UtilityWarning)


def test_topic_count():
    with pytest.warns(TopicCountWarning, match="20 topics for 5 documents"):
        assert check_topic_count(20, 5)
    assert not check_topic_count(5, 5)


# ------------------------------------------------------------ guardrails inside fit (#18)
def test_every_private_fit_warns_of_a_vacuous_guarantee():
    from dptm import NoisyGibbsLDA, PrivateOnlineLDA
    demo = load_demo_corpus()
    with pytest.warns(VacuousGuaranteeWarning, match=r"epsilon = .* exceeds 10") as rec:
        NoisyGibbsLDA(3, clip=5, epsilon_per_iter=2.0, max_iter=10).fit(demo.X)
    # attributed to the caller's line, not to dptm's internals
    assert [w.filename for w in rec if w.category is VacuousGuaranteeWarning] == [__file__]
    with warnings.catch_warnings():
        warnings.simplefilter("error", VacuousGuaranteeWarning)
        PrivateOnlineLDA(3, target_epsilon=2.0, target_delta=1e-5, max_doc_length=50,
                         max_iter=1, total_samples=demo.X.shape[0]).fit(demo.X)


def test_delta_against_the_public_number_of_documents():
    """delta >= 1/D warns when D is declared public in the report (VIPS lists it under
    replace-one adjacency)."""
    from dptm import PrivateOnlineLDA
    demo = load_demo_corpus()
    D = demo.X.shape[0]
    with pytest.warns(VacuousGuaranteeWarning, match=rf"delta = 0.01 >= 1/n = 1/{D} documents"):
        PrivateOnlineLDA(3, target_epsilon=2.0, target_delta=0.01, max_doc_length=50,
                         max_iter=1, sampling="shuffle").fit(demo.X)


def test_public_record_count_reads_only_declared_counts():
    from dptm.guardrails import public_record_count
    rep = PrivacyReport(GaussianEvent(5.0), "document",
                        assumed_public=["number of documents D = 120 (sets q)"])
    assert public_record_count(rep) == (120, "documents")
    word = PrivacyReport(LaplaceEvent(1.0), "word",
                         assumed_public=["number of documents D = 10 and every length",
                                         "number of tokens N = 900 (no clip requested: C = N)"])
    assert public_record_count(word) == (900, "tokens")
    # nothing declared: no count is looked at (the data owner's D may be private)
    assert public_record_count(PrivacyReport(GaussianEvent(5.0), "document")) == (None, None)
    assert public_record_count(PrivacyReport(GaussianEvent(5.0), "user",
                                             assumed_public=["number of documents D = 5"])) \
        == (None, None)


def test_more_topics_than_documents_warns_at_fit():
    demo = load_demo_corpus()
    with pytest.warns(TopicCountWarning, match="12 topics for 10 documents"):
        GibbsLDA(12, max_iter=2, random_state=0).fit(demo.X[:10])
    with warnings.catch_warnings():
        warnings.simplefilter("error", TopicCountWarning)
        GibbsLDA(10, max_iter=2, random_state=0).fit(demo.X[:10])


def test_nested_fits_are_not_checked_and_a_private_count_is_never_used():
    """TopicDP's refits (non-private GibbsLDA, each on D - 1 documents) do not warn, and
    TopicDP itself (user level: D is not public) does not warn from its private D; the
    same GibbsLDA fitted on its own does (review s8 F3)."""
    from dptm import TopicDP
    demo = load_demo_corpus()
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        TopicDP(GibbsLDA(6, max_iter=2), sensitivity=0.05, target_epsilon=20.0).fit(demo.X[:5])
    assert not [w for w in rec if w.category is TopicCountWarning]
    assert sum(w.category is VacuousGuaranteeWarning for w in rec) == 1
    with pytest.warns(TopicCountWarning, match="6 topics for 5 documents"):
        GibbsLDA(6, max_iter=2, random_state=0).fit(demo.X[:5])


def test_uniform_check_is_never_run_silently_on_training_data():
    """check_against_uniform needs held-out data: fit never calls it."""
    demo = load_demo_corpus()
    V = demo.X.shape[1]
    with warnings.catch_warnings():
        warnings.simplefilter("error", UninformativeModelWarning)
        # a model no better than uniform (one sweep, a huge prior) fits without a warning
        model = GibbsLDA(4, max_iter=1, topic_word_prior=1e6, random_state=0).fit(demo.X[50:])
    with pytest.warns(UninformativeModelWarning):
        assert check_against_uniform(model, demo.X[:50]) > 0.95 * V


def test_unigram_perplexity_closed_form_and_the_check():
    # two words, held-out counts (3, 1), reference counts (1, 1), prior 0.5: p = (0.5, 0.5),
    # perplexity exp(-(3 log .5 + log .5) / 4) = 2; on itself p = (3.5, 1.5) / 5
    import scipy.sparse as sp
    from dptm.guardrails import check_against_unigram, unigram_perplexity
    Xh = sp.csr_matrix(np.array([[3, 1]]))
    assert unigram_perplexity(Xh, np.array([[1, 1]])) == pytest.approx(2.0, rel=1e-12)
    p = np.array([3.5, 1.5]) / 5
    want = np.exp(-(3 * np.log(p[0]) + np.log(p[1])) / 4)
    assert unigram_perplexity(Xh) == pytest.approx(want, rel=1e-12)
    with pytest.raises(ValueError, match="X_reference"):
        unigram_perplexity(Xh, np.ones((1, 3)))
    demo = load_demo_corpus()
    V = demo.X.shape[1]
    flat = Release(np.ones((8, V)), doc_topic_prior=0.1)        # the uniform model
    with pytest.warns(UninformativeModelWarning, match="unigram"):
        ppl, uni = check_against_unigram(flat, demo.X[:50])
    assert uni < ppl
    fitted = GibbsLDA(8, max_iter=60, random_state=0).fit(demo.X[50:])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ppl, uni = check_against_unigram(fitted, demo.X[:50], X_reference=demo.X[50:])
    assert ppl < uni


def test_the_unigram_check_names_its_values_and_still_unpacks():
    # catches: the two perplexities swapped (a uniform model would then read as better than
    # word frequencies), or a third field that breaks ``ppl, uni = check_against_unigram(..)``
    from dptm.guardrails import UnigramComparison, check_against_unigram
    demo = load_demo_corpus()
    flat = Release(np.ones((8, demo.X.shape[1])), doc_topic_prior=0.1)
    with pytest.warns(UninformativeModelWarning):
        check = check_against_unigram(flat, demo.X[:50])
    assert isinstance(check, UnigramComparison) and len(check) == 2
    ppl, uni = check
    assert (check.perplexity, check.unigram_perplexity) == (ppl, uni)
    assert check.perplexity == pytest.approx(flat.perplexity(demo.X[:50]))
    assert check.ratio == pytest.approx(ppl / uni) and check.ratio > 1


def test_private_batch_lda_warns_from_its_noisy_count_only():
    # the expectation warning of PrivateBatchLDA: a tiny corpus at eps 1 warns, a huge
    # declared count does not (expected_ratio is monotone in n)
    from dptm.models.private_vb import expected_ratio
    assert expected_ratio(3000, 4.0, 20, 5000) > 1.55 > expected_ratio(100000, 4.0, 20, 5000)
    assert expected_ratio(1e4, 1.0, 20, 5000) > expected_ratio(1e4, 2.0, 20, 5000)
    with pytest.raises(ValueError, match="n_documents"):
        expected_ratio(0, 1.0, 20, 5000)


def test_declared_total_samples_is_the_count_the_delta_guardrail_reads():
    """PrivateOnlineLDA states a declared public total_samples, not D: delta >= 1 /
    total_samples is vacuous and warned about (the check used to find no count at all)."""
    import warnings as _w
    from dptm import PrivateOnlineLDA
    from dptm.datasets import load_demo_corpus
    from dptm.exceptions import VacuousGuaranteeWarning
    from dptm.guardrails import public_record_count
    X = load_demo_corpus().X
    kw = dict(max_doc_length=50, target_epsilon=4, max_iter=1, batch_size=64)
    m = PrivateOnlineLDA(4, total_samples=1000, target_delta=1e-5, **kw).fit(X)
    assert public_record_count(m.privacy_)[0] == 1000
    with _w.catch_warnings(record=True) as caught:
        _w.simplefilter("always")
        PrivateOnlineLDA(4, total_samples=1000, target_delta=0.01, **kw).fit(X)
    assert any(issubclass(w.category, VacuousGuaranteeWarning) for w in caught)


@pytest.mark.parametrize("groups", [False, True], ids=["documents", "users"])
def test_private_batch_lda_checks_delta_against_its_dp_count(groups):
    """No public count: delta >= 1 / (the fit's noisy count of documents or users plus 2
    noise sd, an upper bound but for a 2.3% chance) is vacuous and warned about, the count
    named as such; delta = 1e-5 is silent (catches: delta unchecked for the recommended
    model, or checked against the true D)."""
    from dptm import PrivateBatchLDA
    X = load_demo_corpus().X
    kw = dict(groups=np.arange(X.shape[0]) // 2) if groups else {}
    unit = "users" if groups else "documents"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = PrivateBatchLDA(4, target_epsilon=4.0, target_delta=0.2).fit(X, **kw)
    estimate = m.n_users_estimate_ if groups else m.n_documents_estimate_
    n = math.ceil(max(estimate, 0.0) + 2.0 * m.count_estimate_sd_)
    assert m.count_estimate_sd_ > 0
    msgs = [str(w.message) for w in caught if w.category is VacuousGuaranteeWarning]
    assert msgs == [f"vacuous privacy guarantee: delta = 0.2 >= 1/n = 1/{n} {unit} (a DP "
                    "estimate plus 2 noise sd): a mechanism publishing one record in the clear "
                    "meets this delta"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", VacuousGuaranteeWarning)
        PrivateBatchLDA(4, target_epsilon=4.0, target_delta=1e-5).fit(X, **kw)


def test_the_unigram_check_folds_in_scikit_learn_topics():
    # catches: scikit-learn's LatentDirichletAllocation measured by its own perplexity, a
    # variational bound (here 3x the fold-in's; on 5,000-word changelogs it read as worse
    # than word frequencies), though the model page tells users to check public topics so
    from sklearn.decomposition import LatentDirichletAllocation

    from dptm.guardrails import check_against_uniform, check_against_unigram
    demo = load_demo_corpus()
    lda = LatentDirichletAllocation(8, learning_method="batch", random_state=0).fit(demo.X[50:])
    as_release = Release(lda.components_, doc_topic_prior=lda.doc_topic_prior_)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check = check_against_unigram(lda, demo.X[:50])
        assert check_against_uniform(lda, demo.X[:50]) == pytest.approx(check.perplexity)
    assert check.perplexity == pytest.approx(as_release.perplexity(demo.X[:50]))
    assert check.perplexity < 0.5 * lda.perplexity(demo.X[:50])
