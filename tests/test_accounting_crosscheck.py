"""Every accounting route against an independent implementation (dp_accounting, a test
extra) with NON-default parameters, where a mistake cannot hide behind a 1: L1 sensitivity
2 for Laplace, L2 sensitivity != 1 for the Gaussian (RDP and PLD routes), nested Poisson
rates, priors alpha != beta in eps_I = 2 log(C / beta + 1), and the delta >= 1/n
guardrail under every adjacency that declares its record count public."""
import math
import warnings

import numpy as np
import pytest

from dptm import NoisyGibbsLDA, SubsampledGibbsLDA
from dptm.accounting import (DEFAULT_ORDERS, GaussianEvent, LaplaceEvent, PoissonSampledEvent,
                             PrivacyReport, SelfComposedEvent, epsilon, leaf_events,
                             rdp_laplace)
from dptm.datasets import make_lda_corpus
from dptm.exceptions import VacuousGuaranteeWarning
from dptm.guardrails import check_guarantee, public_record_count

dpa = pytest.importorskip("dp_accounting")
_ORDERS = [float(a) for a in DEFAULT_ORDERS]


def _dpa_rdp(event, delta):
    acc = dpa.rdp.RdpAccountant(_ORDERS)
    acc.compose(event)
    return acc.get_epsilon(delta)


# a coarser grid than the default 1e-4 (the same on both sides): the comparison stays
# exact, the test fast
_GRID = 1e-3


def _dpa_pld(event, delta):
    acc = dpa.pld.PLDAccountant(value_discretization_interval=_GRID)
    acc.compose(event)
    return acc.get_epsilon(delta)


def _pld(event, delta):
    from dptm.accounting.pld import PLDAccountant
    return PLDAccountant(_GRID).compose(event).get_epsilon(delta)


@pytest.mark.parametrize("scale,sens,count", [(3.0, 2.0, 10), (0.7, 2.0, 1), (5.0, 3.0, 40)])
def test_laplace_with_l1_sensitivity_above_one(scale, sens, count):
    # dp_accounting's Laplace has sensitivity 1: noise multiplier b / Delta
    ev = SelfComposedEvent(LaplaceEvent(scale=scale, sensitivity=sens), count)
    ref = dpa.SelfComposedDpEvent(dpa.LaplaceDpEvent(scale / sens), count)
    assert epsilon(ev, 1e-5, method="rdp") == pytest.approx(_dpa_rdp(ref, 1e-5), rel=1e-9)
    assert _pld(ev, 1e-5) == pytest.approx(_dpa_pld(ref, 1e-5), rel=1e-9)
    # Mironov 2017 Prop. 6 at lambda = b / Delta, computed here
    a = np.array([1.5, 2.0, 8.0, 64.0])
    lam = scale / sens
    closed = np.log(a / (2 * a - 1) * np.exp((a - 1) / lam)
                    + (a - 1) / (2 * a - 1) * np.exp(-a / lam)) / (a - 1)
    np.testing.assert_allclose(rdp_laplace(scale, a, sensitivity=sens),
                               np.minimum(closed, sens / scale), rtol=1e-10)
    assert LaplaceEvent(scale=scale, sensitivity=sens).epsilon == pytest.approx(sens / scale)


@pytest.mark.parametrize("sigma,sens,count", [(3.0, 2.0, 5), (2.0, math.sqrt(2.0), 8),
                                              (0.8, 0.5, 3)])
def test_gaussian_with_l2_sensitivity_other_than_one_on_every_route(sigma, sens, count):
    ev = SelfComposedEvent(GaussianEvent(sigma=sigma, sensitivity=sens), count)
    ref = dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(sigma / sens), count)
    assert epsilon(ev, 1e-5, method="rdp") == pytest.approx(_dpa_rdp(ref, 1e-5), rel=1e-9)
    assert _pld(ev, 1e-5) == pytest.approx(_dpa_pld(ref, 1e-5), rel=1e-9)
    # the report takes the tightest sound route: never below dp_accounting's PLD
    got = PrivacyReport(ev, "document", default_delta=1e-5).epsilon(1e-5)
    assert got >= _dpa_pld(ref, 1e-5) * (1 - 1e-6)


def test_laplace_and_gaussian_leaves_of_a_poisson_sample_on_the_pld_route():
    for leaf, ref in ((LaplaceEvent(scale=3.0, sensitivity=2.0), dpa.LaplaceDpEvent(1.5)),
                      (GaussianEvent(sigma=3.0, sensitivity=2.0), dpa.GaussianDpEvent(1.5))):
        ev = SelfComposedEvent(PoissonSampledEvent(leaf, 0.1), 50)
        want = _dpa_pld(dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.1, ref), 50), 1e-5)
        assert _pld(ev, 1e-5) == pytest.approx(want, rel=1e-9)


def test_nested_poisson_rates_multiply_in_the_report_and_the_accountant():
    # sampling at 0.5 then at 0.2 is sampling at 0.1 (independent thinning)
    inner = GaussianEvent(sigma=3.0, sensitivity=2.0, label="release")
    nested = SelfComposedEvent(PoissonSampledEvent(PoissonSampledEvent(inner, 0.5), 0.2), 100)
    ((leaf, count, q, label),) = leaf_events(nested)
    assert (leaf, count, q, label) == (inner, 100, pytest.approx(0.1), "release")
    rep = PrivacyReport(nested, "document", default_delta=1e-5)
    text = str(rep)
    assert "Poisson sampling rate q=0.1;" in text and "q=0.5" not in text and "q=0.2" not in text
    ref = dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.1, dpa.GaussianDpEvent(1.5)), 100)
    assert epsilon(nested, 1e-5, method="rdp") == pytest.approx(_dpa_rdp(ref, 1e-5), rel=1e-3)
    flat = SelfComposedEvent(PoissonSampledEvent(inner, 0.1), 100)
    assert rep.epsilon(1e-5, method="rdp") == pytest.approx(epsilon(flat, 1e-5, method="rdp"),
                                                            rel=1e-12)


# ------------------------------------------------------- eps_I with alpha != beta
@pytest.mark.filterwarnings("ignore::dptm.exceptions.SeededPrivacyWarning")
@pytest.mark.filterwarnings("ignore::dptm.exceptions.VacuousGuaranteeWarning")
@pytest.mark.parametrize("cls,kw", [(NoisyGibbsLDA, {}), (SubsampledGibbsLDA, {"sample_rate": 0.5}),
                                    (NoisyGibbsLDA, {"distributed": True}),
                                    (SubsampledGibbsLDA, {"sample_rate": 0.5, "distributed": True})])
def test_inherent_epsilon_uses_the_topic_word_prior(cls, kw):
    # the defaults alpha = beta = 1/K would hide a swap: here alpha = 0.7, beta = 0.05
    kw = dict(kw)
    dist = kw.pop("distributed", False)
    X, _, _ = make_lda_corpus(20, 15, 3, doc_length=15, random_state=0)
    C, alpha, beta = 5.0, 0.7, 0.05
    est = cls(3, clip=C, doc_topic_prior=alpha, topic_word_prior=beta, max_iter=2,
              random_state=1, **kw)
    if dist:
        from dptm.distributed import fit_distributed
        fit_distributed(est, X, "serial", n_partitions=2)
    else:
        est.fit(X)
    want = 2.0 * math.log(C / beta + 1.0)
    assert est.epsilon_inherent_ == pytest.approx(want, rel=1e-12)
    sampling = [e for e, _, _, label in est.privacy_.events if label.startswith("topic sampling")]
    # (SUB-LDA's is gated: run with probability gamma)
    assert sampling and all(getattr(e, "event", e).epsilon == pytest.approx(want, rel=1e-12)
                            for e in sampling)


# ---------------------------------------------------------------- delta >= 1/n
@pytest.mark.parametrize("adjacency", ["document", "document-replace", "word"])
def test_delta_guardrail_under_every_adjacency_with_a_public_count(adjacency):
    public = ["number of documents D = 50 (public)"]
    rep = PrivacyReport(GaussianEvent(sigma=5.0), adjacency, default_delta=0.05,
                        assumed_public=public)
    n, unit = public_record_count(rep)
    assert n == 50 and unit.startswith("documents")
    with pytest.warns(VacuousGuaranteeWarning, match="1/n = 1/50"):
        assert check_guarantee(rep, n, unit=unit)
    ok = PrivacyReport(GaussianEvent(sigma=5.0), adjacency, default_delta=0.01,
                       assumed_public=public)
    with warnings.catch_warnings():
        warnings.simplefilter("error", VacuousGuaranteeWarning)
        assert check_guarantee(ok, 50) == []


def test_delta_guardrail_of_a_substitution_fit():
    # PrivateOnlineLDA with fixed-size minibatches: replace-one adjacency, D public
    from dptm.models.svi import PrivateOnlineLDA
    X = np.random.default_rng(0).poisson(0.8, (40, 15))
    with pytest.warns(VacuousGuaranteeWarning, match="1/n = 1/40"):
        m = PrivateOnlineLDA(3, noise_multiplier=1.0, max_doc_length=30, batch_size=10,
                             sampling="shuffle", max_iter=1, target_delta=0.05).fit(X)
    assert m.privacy_.adjacency == "document-replace"


def test_pld_route_of_a_discrete_laplace_keeps_its_sensitivity():
    # The Gibbs snapshots are discrete Laplace of L1 sensitivity 2; the report takes the PLD
    # route when it is tighter, so a PLD event built with sensitivity 1 would print about
    # half the epsilon. Reference: dp_accounting's own PLD of the same event.
    pytest.importorskip("dp_accounting")
    from dp_accounting import dp_event
    from dp_accounting.pld import pld_privacy_accountant

    from dptm.accounting import LaplaceEvent, PrivacyReport, SelfComposedEvent
    from dptm.accounting.pld import PLDAccountant
    scale, T, delta = 4.0, 10, 1e-5
    leaf = LaplaceEvent(scale=scale, sensitivity=2.0, discrete=True)
    ref = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    ref.compose(dp_event.DiscreteLaplaceDpEvent(1.0 / scale, 2), T)
    want = ref.get_epsilon(delta)
    got = PLDAccountant().compose(leaf, T).get_epsilon(delta)
    assert got == pytest.approx(want, rel=1e-6)
    report = PrivacyReport(SelfComposedEvent(leaf, T), "word", default_delta=delta)
    assert report.epsilon() >= want * (1 - 1e-3)
    assert report.epsilon(0.0) == pytest.approx(T * 2.0 / scale, rel=1e-12)   # pure route
