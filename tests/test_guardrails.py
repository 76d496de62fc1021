"""Guardrails: vacuous guarantees, uninformative models, too many topics."""
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
