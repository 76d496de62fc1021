"""dptm.selection.select_private: private selection of settings (Papernot & Steinke 2022).
The report's epsilon is checked against the theorem recomputed here from the candidates'
noise parameters, and the number of fits against its distribution (chi-square)."""
import math
import warnings

import numpy as np
import pytest
from scipy import stats
from sklearn.feature_extraction.text import CountVectorizer

from dptm import GibbsLDA, PrivateBatchLDA
from dptm.accounting import DEFAULT_ORDERS, BudgetAccountant, GaussianEvent
from dptm.exceptions import SeededPrivacyWarning
from dptm.selection import (_draw_repetitions, mean_repetitions, select_private,
                            selection_rdp, spending)

WORDS = [f"w{i:02d}" for i in range(40)]


def _X(n, seed):
    rng = np.random.default_rng(seed)
    texts = [" ".join(rng.choice(WORDS[:30], 20)) for _ in range(n)]
    return CountVectorizer(vocabulary=WORDS).fit_transform(texts)


def _rho(report):
    """zCDP rho of a report made of plain (discrete) Gaussian leaves, from their sigmas."""
    total = 0.0
    for event, count, q, _ in report.events:
        assert isinstance(event, GaussianEvent) and q == 1.0
        total += count * event.sensitivity ** 2 / (2 * event.sigma ** 2)
    return total


def _theorem_epsilon(rhos, eta, gamma, delta, orders):
    """Papernot & Steinke 2022, Theorem 2, for candidates with RDP lambda * rho_i, then
    the RDP -> (epsilon, delta) conversion min over lambda of
    min(r + log(1/delta)/(lambda-1), r + log(1-1/lambda) - (log delta + log lambda)/(lambda-1))."""
    rho = max(rhos)
    lam = np.asarray(orders, dtype=float)
    if eta == 0:
        mean = (1 / gamma - 1) / math.log(1 / gamma)
    else:
        mean = eta * (1 - gamma) / (gamma * (1 - gamma ** eta))
    extra = min((1 + eta) * (1 - 1 / mu) * mu * rho + (1 + eta) * math.log(1 / gamma) / mu
                for mu in lam)
    rdp = lam * rho + extra + math.log(mean) / (lam - 1)
    classic = rdp + math.log(1 / delta) / (lam - 1)
    improved = rdp + np.log(1 - 1 / lam) - (math.log(delta) + np.log(lam)) / (lam - 1)
    return float(np.min(np.minimum(classic, improved)))


@pytest.mark.parametrize("eta,gamma", [(1.0, 0.25), (0.0, 0.2), (0.5, 0.3)])
def test_report_epsilon_is_the_theorem_bound(eta, gamma):
    X, reference = _X(150, 0), _X(40, 1)
    candidates = [PrivateBatchLDA(3, target_epsilon=1.0), PrivateBatchLDA(5, target_epsilon=2.0)]
    with pytest.warns(SeededPrivacyWarning):
        result = select_private(candidates, X, reference=reference, eta=eta, gamma=gamma,
                                delta=1e-5, random_state=3)
    rhos = [_rho(PrivateBatchLDA(3, target_epsilon=1.0).fit(X).privacy_),
            _rho(PrivateBatchLDA(5, target_epsilon=2.0).fit(X).privacy_)]
    expected = _theorem_epsilon(rhos, eta, gamma, 1e-5, DEFAULT_ORDERS)
    assert result.privacy.epsilon(1e-5) == pytest.approx(expected, rel=1e-9)
    # the selection costs more than the dearest candidate alone
    assert result.privacy.epsilon(1e-5) > 2.0
    assert result.release.privacy is result.privacy and result.privacy.seeded
    assert "Papernot & Steinke 2022" in result.privacy.description
    assert result.candidate in (0, 1)
    assert result.estimator.n_components == (3, 5)[result.candidate]
    # the released score is the chosen release's own, on the public reference
    assert result.score == pytest.approx(-result.release.perplexity(reference), rel=1e-12)


def test_selection_rdp_pure_limit_is_liu_talwar():
    """For an eps-DP candidate (RDP at most eps at every order), eta = 1 and large orders the
    bound tends to Liu & Talwar's 3 eps."""
    orders = np.array([1e4, 1e5, 1e6])
    eps = 0.5
    r = selection_rdp(np.full(3, eps), orders, 1.0, 0.1)
    assert r[-1] == pytest.approx(3 * eps, rel=1e-4)


@pytest.mark.parametrize("eta,gamma", [(1.0, 0.2), (0.0, 0.1), (0.5, 0.25), (2.0, 0.4)])
def test_number_of_fits_follows_the_truncated_negative_binomial(eta, gamma):
    """Chi-square goodness of fit of 20,000 draws against P[K = k] proportional to
    C(k + eta - 1, k) (1 - gamma)^k (eta > 0) or (1 - gamma)^k / k (eta = 0), k >= 1;
    bins k = 1..B-1 and a tail bin. False-alarm rate 1e-3 per case (4 cases)."""
    gen = np.random.default_rng(12345)
    n = 20000
    draws = np.array([_draw_repetitions(gen, eta, gamma) for _ in range(n)])
    assert draws.min() >= 1
    kmax = 400
    k = np.arange(1, kmax + 1)
    if eta == 0:
        w = (1 - gamma) ** k / k
    else:
        w = np.exp(stats.nbinom.logpmf(k, eta, gamma))
    p = w / w.sum()
    assert mean_repetitions(eta, gamma) == pytest.approx(float((k * p).sum()), rel=1e-6)
    B = int(np.searchsorted(np.cumsum(p), 0.99)) + 1      # tail bin holds ~1% of the mass
    observed = np.array([np.sum(draws == j) for j in range(1, B)] + [np.sum(draws >= B)])
    expected = n * np.append(p[:B - 1], p[B - 1:].sum())
    assert expected.min() >= 5
    assert stats.chisquare(observed, expected).pvalue > 1e-3


def test_selection_spends_once_on_the_accountant():
    X, reference = _X(120, 2), _X(30, 3)
    budget = BudgetAccountant(epsilon=100, delta=1e-5)
    with spending(budget), warnings.catch_warnings():
        warnings.simplefilter("ignore", SeededPrivacyWarning)
        result = select_private([PrivateBatchLDA(3, target_epsilon=1.0),
                                 PrivateBatchLDA(4, target_epsilon=1.0)], X,
                                reference=reference, gamma=0.3, random_state=0)
    assert len(budget.reports) == 1 and budget.reports[0] == result.privacy
    assert list(budget.labels) == ["select_private among 2 candidates"]


def test_select_private_custom_score_and_errors():
    X, reference = _X(100, 4), _X(20, 5)
    cands = [PrivateBatchLDA(3, target_epsilon=1.0), PrivateBatchLDA(4, target_epsilon=1.0)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeededPrivacyWarning)
        # a score preferring more topics picks the second candidate whenever it was drawn
        result = select_private(cands, X, score=lambda r: r.n_components, gamma=0.05,
                                random_state=1)
    assert result.candidate == 1 and result.score == 4
    with pytest.raises(ValueError, match="at least one"):
        select_private([], X, reference=reference)
    with pytest.raises(ValueError, match="exactly one of reference"):
        select_private(cands, X)
    with pytest.raises(ValueError, match="gamma"):
        select_private(cands, X, reference=reference, gamma=1.5)
    with pytest.raises(ValueError, match="eta"):
        select_private(cands, X, reference=reference, eta=-1)
    with pytest.raises(TypeError, match="score"):
        select_private(cands, X, score=3)
    with pytest.raises(TypeError, match="candidates"):
        select_private([object()], X, reference=reference)
    with pytest.raises(TypeError, match=r"candidates\[0\] \(GibbsLDA\) is not a private"):
        select_private([GibbsLDA(3, max_iter=2)], X, reference=reference, gamma=0.5)


@pytest.mark.parametrize("eta", [0.0, 0.5, 1.0, 3.0])
def test_default_gamma_gives_twice_the_candidates_fits_on_average(eta):
    from dptm.selection import _gamma_for_mean
    gamma = _gamma_for_mean(eta, 6.0)
    assert 0 < gamma < 1
    assert mean_repetitions(eta, gamma) == pytest.approx(6.0, rel=1e-9)


class _Loud(PrivateBatchLDA):
    """A candidate whose fit warns with a value of its own output (as a fit may warn with a
    noisy statistic) and records the number of documents it was fitted on."""
    fitted_on = []

    def fit(self, X, y=None):
        super().fit(X)
        type(self).fitted_on.append(X.shape[0])
        warnings.warn(f"noisy output {float(self.components_.sum()):.6f}", UserWarning)
        return self


def test_unchosen_fits_emit_nothing_and_undrawn_candidates_never_see_the_data():
    """Only the chosen fit's warnings leave the selection (an unchosen fit's warning would
    release a statistic the report does not cover), and a candidate's report is read from
    a public stand-in, never from a fit on X that the selection does not account."""
    X, reference = _X(150, 0), _X(40, 1)
    cands = [_Loud(3, target_epsilon=1.0), _Loud(4, target_epsilon=1.0), _Loud(5, target_epsilon=1.0)]
    for seed in range(4):
        _Loud.fitted_on.clear()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = select_private(cands, X, reference=reference, random_state=seed)
        loud = [w for w in caught if "noisy output" in str(w.message)]
        assert len(loud) == 1
        assert str(loud[0].message) == f"noisy output {float(result.estimator.components_.sum()):.6f}"
        on_X = [n for n in _Loud.fitted_on if n == X.shape[0]]
        assert 1 <= len(on_X)
        # every other fit is on the 64-document public stand-in, one per candidate
        assert sorted(n for n in _Loud.fitted_on if n != X.shape[0]) == [64] * len(cands)


def test_a_failed_score_is_never_chosen_and_only_all_failures_raise():
    X = _X(150, 0)
    cands = [PrivateBatchLDA(3, target_epsilon=1.0), PrivateBatchLDA(5, target_epsilon=1.0)]
    score = (lambda r: math.nan if r.topic_word.shape[0] == 3 else 1.0)
    with pytest.warns(SeededPrivacyWarning):
        result = select_private(cands, X, score=score, random_state=1, gamma=0.1)
    assert result.candidate == 1
    with pytest.warns(SeededPrivacyWarning), pytest.raises(ValueError, match="no finite"):
        select_private(cands, X, score=lambda r: math.nan, random_state=1)


def test_a_candidate_accounted_from_the_document_count_is_refused():
    from dptm import PrivateOnlineLDA
    X, reference = _X(150, 0), _X(40, 1)
    with pytest.raises(ValueError, match=r"candidates\[0\].*total_samples"):
        select_private([PrivateOnlineLDA(3, target_epsilon=1.0, max_doc_length=30)], X,
                       reference=reference)


def test_test_mode_follows_the_seeds_given_not_the_public_stand_in():
    """The stand-in fits that read the candidates' reports are seeded (public data), which
    must not mark a secret selection as test mode; a seeded candidate or selection must."""
    X, reference = _X(150, 0), _X(40, 1)
    secret = select_private([PrivateBatchLDA(3, target_epsilon=1.0)], X, reference=reference)
    assert not secret.privacy.seeded and not str(secret.privacy).startswith("TEST MODE")
    with pytest.warns(SeededPrivacyWarning):
        seeded = select_private([PrivateBatchLDA(3, target_epsilon=1.0, random_state=4)], X,
                                reference=reference)
    assert seeded.privacy.seeded


def _failing_fit(budget, groups=None, eps=1.0):
    # the expectation warning raised as an error quotes the noisy document count: it is
    # raised after every release was drawn
    from dptm.exceptions import UninformativeModelWarning
    X = np.random.default_rng(0).poisson(0.8, (20, 12))
    with spending(budget), warnings.catch_warnings():
        warnings.simplefilter("ignore", SeededPrivacyWarning)
        warnings.simplefilter("error", UninformativeModelWarning)
        with pytest.raises(UninformativeModelWarning, match="noisy count") as info:
            PrivateBatchLDA(3, target_epsilon=eps, random_state=0).fit(X, groups=groups)
    return info.value


def test_a_fit_failing_after_its_releases_is_still_spent():
    # catches a failed fit whose drawn releases (their values in its exception) no
    # accountant holds, so that a refit composes with uncounted releases
    budget = BudgetAccountant(10.0, 1e-5)           # the fit's target delta
    _failing_fit(budget)
    (report,) = budget.reports
    assert report.adjacency == "document" and "failed" in budget.labels[0]
    # every planned release was drawn: the charge is the model's target, exactly as drawn
    assert abs(budget.spent - 1.0) < 0.02


def test_a_failed_user_level_fit_is_charged_at_user_level():
    budget = BudgetAccountant(10.0, 1e-4)
    _failing_fit(budget, groups=np.arange(20) // 2)
    assert budget.reports[0].adjacency == "user"
    # a document-level budget refuses it: the fit's own exception is still the one raised
    budget = BudgetAccountant(10.0, 1e-4)
    _failing_fit(budget)
    exc = _failing_fit(budget, groups=np.arange(20) // 2)
    assert len(budget.reports) == 1 and any("user-level" in n for n in exc.__notes__)


def test_a_fit_failing_before_any_release_spends_nothing():
    budget = BudgetAccountant(10.0, 1e-4)
    with spending(budget), pytest.raises(ValueError, match="target_epsilon"):
        PrivateBatchLDA(3, target_epsilon=-1.0).fit(np.ones((5, 4), dtype=int))
    assert len(budget.reports) == 0 and budget.spent == 0.0


def test_a_failed_fit_beyond_the_budget_says_so_on_its_exception():
    exc = _failing_fit(BudgetAccountant(0.5, 1e-4))
    assert any("refused the releases" in note and "cap" in note
               for note in getattr(exc, "__notes__", ()))
