"""DP vocabulary selection (DP set union): thresholds, policies, the delta bound, real data."""
import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import log_ndtr

from dptm.vocab import (DPVocabulary, _greedy_fill, _l2_step, _water_fill,
                        analytic_gaussian_sigma, frequency_threshold, policy_gaussian_threshold,
                        policy_laplace_threshold)

pytestmark = [pytest.mark.filterwarnings("ignore::dptm.exceptions.SeededPrivacyWarning"),
              pytest.mark.filterwarnings("ignore::dptm.exceptions.NotHardenedWarning")]

METHODS = ["frequency_laplace", "frequency_gaussian", "policy_laplace", "policy_gaussian",
           "weighted_gaussian"]


# ----------------------------------------------------------------------------- thresholds
def test_thresholds_closed_forms_for_one_word():
    eps, delta = 2.0, 1e-5
    b = 1 / eps
    rho1 = 1 + b * math.log(1 / (2 * delta))
    assert policy_laplace_threshold(eps, delta, 1) == pytest.approx(rho1, rel=1e-12)
    assert frequency_threshold("laplace", b, delta, 1) == pytest.approx(rho1, rel=1e-9)
    sigma = 1.7
    rho_g = 1 + sigma * stats.norm.isf(delta / 2)
    assert policy_gaussian_threshold(sigma, delta, 1) == pytest.approx(rho_g, rel=1e-10)
    assert frequency_threshold("gaussian", sigma, delta / 2, 1) == pytest.approx(rho_g, rel=1e-9)


def test_policy_thresholds_are_the_max_over_t():
    eps, delta, d0 = 0.5, 1e-6, 40
    f = [1 / t + (1 / eps) * math.log(1 / (2 * (1 - (1 - delta) ** (1 / t)))) for t in range(1, d0 + 1)]
    assert policy_laplace_threshold(eps, delta, d0) == pytest.approx(max(f), rel=1e-9)
    g = [1 / math.sqrt(t) + 2.0 * stats.norm.ppf((1 - delta / 2) ** (1 / t)) for t in range(1, d0 + 1)]
    assert policy_gaussian_threshold(2.0, delta, d0) == pytest.approx(max(g), rel=1e-7)


@pytest.mark.parametrize("noise,scale", [("laplace", 0.5), ("gaussian", 2.0)])
def test_frequency_threshold_solves_its_equation(noise, scale):
    cdf = (lambda x: stats.laplace.cdf(x, scale=scale)) if noise == "laplace" else \
        (lambda x: stats.norm.cdf(x, scale=scale))
    for t in (1, 5, 100):
        rho = frequency_threshold(noise, scale, 1e-4, t)
        assert 1 - cdf(rho - 1) * cdf(rho) ** (t - 1) == pytest.approx(1e-4, rel=1e-6)


@pytest.mark.parametrize("eps,delta", [(0.5, 1e-3), (1.0, 1e-5), (3.0, 5e-6), (10.0, 1e-8)])
def test_analytic_gaussian_is_the_smallest_sigma(eps, delta):
    def d(s):
        a, c = 0.5 / s, eps * s
        return math.exp(log_ndtr(a - c)) - math.exp(eps + log_ndtr(-a - c))
    s = analytic_gaussian_sigma(eps, delta)
    assert d(s) <= delta < d(s * (1 - 1e-6))


def test_analytic_gaussian_golden():
    # Balle & Wang 2018's calibration at (1, 1e-5), sensitivity 1
    assert analytic_gaussian_sigma(1.0, 1e-5) == pytest.approx(3.7306, abs=1e-3)


# ----------------------------------------------------------------------------- policies
def test_water_fill_is_l1_descent():
    rng = np.random.default_rng(0)
    for _ in range(200):
        g = rng.random(rng.integers(1, 12)) * rng.choice([0.1, 1.0, 3.0])
        inc = _water_fill(g)
        assert np.all(inc <= g + 1e-12) and np.all(inc >= 0)
        assert inc.sum() == pytest.approx(min(1.0, g.sum()))
        unfilled = inc < g - 1e-12
        if unfilled.any():   # every word not yet at the cut-off got the same increment
            assert np.ptp(inc[unfilled]) < 1e-12
            assert np.all(inc[~unfilled] <= inc[unfilled][0] + 1e-12)


def test_l2_step_norm():
    g = np.array([3.0, 4.0])
    np.testing.assert_allclose(_l2_step(g), [0.6, 0.8])
    np.testing.assert_allclose(_l2_step(np.array([0.3, 0.4])), [0.3, 0.4])


def _greedy_reference(gaps, budget=1.0):
    """Carvalho et al.'s loop (dpsu_gw.py), item by item."""
    inc = np.zeros_like(gaps)
    for i, cost in enumerate(gaps):
        if cost < budget:
            inc[i] = cost
            budget -= cost
        else:
            inc[i] = budget
            break
    return inc


def test_greedy_fill_matches_the_item_loop():
    rng = np.random.default_rng(1)
    for _ in range(300):
        g = rng.random(rng.integers(1, 10)) * rng.choice([0.2, 0.6, 2.0])
        np.testing.assert_allclose(_greedy_fill(g), _greedy_reference(g), atol=1e-12)


# ----------------------------------------------------------------------------- the release
def _corpus_with_private_user(n_common=40, n_secret=3):
    common = [["alpha", "beta", "gamma"], ["beta", "delta"], ["alpha", "gamma", "delta"]]
    docs = [common[i % 3] for i in range(n_common)]
    docs.append([f"secret{j}" for j in range(n_secret)])
    return docs


def _laplace_sf(x, b):
    return 0.5 * math.exp(-x / b) if x >= 0 else 1 - 0.5 * math.exp(x / b)


@pytest.mark.parametrize("method", ["frequency_laplace", "policy_laplace", "policy_gaussian"])
def test_a_single_users_words_are_released_with_probability_at_most_delta(method):
    """Empirical delta: the user with Delta_0 words no one else has is released with
    frequency <= delta (Clopper-Pearson, 99.9% one-sided), and the frequency matches the
    exact probability of this worst-case configuration (binomial test, level 1e-3)."""
    delta, eps, d0, runs = 0.05, 1.0, 3, 1500
    docs = _corpus_with_private_user(n_secret=d0)
    hits = 0
    rng = np.random.default_rng(123)
    for seed in rng.integers(2**31, size=runs):
        v = DPVocabulary(eps, delta, method=method, max_contribution=d0,
                         random_state=int(seed)).fit(docs)
        hits += any(w.startswith("secret") for w in v.vocabulary_)
    rho, scale = v.threshold_, v.noise_scale_
    if method == "frequency_laplace":      # one secret word of weight 1, two of weight 0
        p0 = 1 - (1 - _laplace_sf(rho - 1, scale)) * (1 - _laplace_sf(rho, scale)) ** (d0 - 1)
    elif method == "policy_laplace":       # three of weight 1/3
        p0 = 1 - (1 - _laplace_sf(rho - 1 / d0, scale)) ** d0
    else:                                  # three of weight 1/sqrt(3)
        p0 = 1 - stats.norm.cdf((rho - 1 / math.sqrt(d0)) / scale) ** d0
    assert p0 <= delta * (1 + 1e-9)
    lower = stats.beta.ppf(0.001, hits, runs - hits + 1) if hits else 0.0
    assert lower <= delta
    assert stats.binomtest(hits, runs, p0).pvalue > 1e-3
    if method == "frequency_laplace":      # the sound threshold is tight for this config
        assert p0 == pytest.approx(delta, rel=1e-6)


def test_paper_threshold_reports_the_delta_that_holds_for_the_cap():
    # The delta is computed from the cap Delta_0 = 20, never from the users of the data:
    # a corpus whose largest user has 3 words and one whose largest has 50 give the same
    # report (it used to report 0.00137 for the first and 0.0188 for a 50-word user).
    small = _corpus_with_private_user(n_secret=3)
    large = _corpus_with_private_user(n_secret=50)
    reports = [DPVocabulary(1.0, 1e-3, paper_threshold=True, max_contribution=20,
                            random_state=0).fit(d) for d in (small, large)]
    v = reports[0]
    thr = v.privacy_.event.events[1]
    b = v.noise_scale_
    rho = v.threshold_ - 2 * v.lattice_granularity_
    exact = 1 - (1 - _laplace_sf(rho - 1, b)) * (1 - _laplace_sf(rho, b)) ** 19
    assert thr.delta == pytest.approx(exact, rel=1e-9) and thr.delta > 1e-3
    assert "paper_threshold=True" in str(v.privacy_)
    assert v.privacy_.to_dict() | {"description": ""} == \
        reports[1].privacy_.to_dict() | {"description": ""}
    with pytest.raises(ValueError, match="max_contribution.*cap"):
        DPVocabulary(1.0, 1e-3, paper_threshold=True, max_contribution=None).fit(small)


@pytest.mark.parametrize("method", METHODS)
def test_release_is_sorted_private_subset(method):
    docs = [["cat", "dog"], ["dog"], ["cat", "dog", "fish"]] * 300 + [["zebra"]]
    # alpha=20: the frequent words sit far above rho whatever the noise draw
    v = DPVocabulary(2.0, 1e-5, method=method, max_contribution=5, alpha=20.0,
                     random_state=0).fit(docs)
    words = v.vocabulary_.tolist()
    assert words == sorted(words)
    assert set(words) <= {"cat", "dog", "fish", "zebra"}
    assert {"cat", "dog"} <= set(words) and "zebra" not in words
    assert v.privacy_.adjacency == "document"
    assert v.privacy_.epsilon(1e-5) == pytest.approx(2.0)
    assert v.transform([["cat", "zebra", "dog", "owl"]]) == [["cat", "dog"]]


def test_same_seed_same_vocabulary():
    docs = [["a%d" % (i % 37), "b%d" % (i % 11)] for i in range(600)]
    a = DPVocabulary(1.0, random_state=7).fit(docs).vocabulary_
    b = DPVocabulary(1.0, random_state=7).fit(docs).vocabulary_
    np.testing.assert_array_equal(a, b)


def test_user_level_caps_a_prolific_user():
    # one user writing 300 documents with the word "spam" is still one user
    docs = [["spam"]] * 300 + [["ham", "eggs"]] * 300
    users = ["spammer"] * 300 + [f"u{i}" for i in range(300)]
    v = DPVocabulary(1.0, 1e-5, random_state=0).fit(docs, groups=users)
    assert v.vocabulary_.tolist() == ["eggs", "ham"]
    assert v.privacy_.adjacency == "user"
    per_doc = DPVocabulary(1.0, 1e-5, random_state=0).fit(docs)
    assert "spam" in per_doc.vocabulary_


@pytest.mark.parametrize("params,err,match", [
    (dict(target_epsilon=0), ValueError, "target_epsilon"),
    (dict(target_delta=1.0), ValueError, "target_delta"),
    (dict(method="exp"), ValueError, "method"),
    (dict(max_contribution=0), ValueError, "max_contribution"),
    (dict(max_contribution=None), ValueError, "max_contribution"),
    (dict(alpha=-1), ValueError, "alpha"),
    (dict(selection="top"), ValueError, "selection"),
    (dict(paper_threshold=True, method="policy_laplace"), ValueError, "paper_threshold"),
    (dict(paper_threshold="yes"), TypeError, "paper_threshold"),
])
def test_bad_parameters(params, err, match):
    with pytest.raises(err, match=match):
        DPVocabulary(**params).fit([["a", "b"]])


def test_bad_inputs():
    with pytest.raises(TypeError, match="token"):
        DPVocabulary().fit(["a string document"])
    with pytest.raises(TypeError, match="string"):
        DPVocabulary().fit("abc")
    with pytest.raises(ValueError, match="empty corpus"):
        DPVocabulary().fit([])
    with pytest.raises(ValueError, match="groups"):
        DPVocabulary().fit([["a"], ["b"]], groups=[1])


@pytest.mark.parametrize("bad", [np.eye(3, dtype=int), np.array([["a", "b"]]),
                                 [[1, 2], [3]], [np.array(["a", "b"])], [["a", None]],
                                 [{"a": 1}], 42])
def test_a_count_matrix_is_not_a_token_list(bad):
    import scipy.sparse as sp
    with pytest.raises(TypeError, match="token"):
        DPVocabulary(max_contribution=3).fit(bad)
    with pytest.raises(TypeError, match="token"):
        DPVocabulary(max_contribution=3).fit(sp.csr_matrix(np.eye(3)))


# ----------------------------------------------------------------------------- real data
def test_vocabulary_grows_with_epsilon_on_tweetrumors(tweetrumors):
    docs = [t.split() for t in tweetrumors]
    full = {w for d in docs for w in d}
    sizes = []
    for eps in (1.0, 3.0, 5.0, 10.0):
        v = DPVocabulary(eps, 1e-5, alpha=3.0, max_contribution=20, random_state=0).fit(docs)
        assert set(v.vocabulary_) <= full
        sizes.append(v.vocabulary_.size)
    assert all(a < b for a, b in zip(sizes, sizes[1:]))
    assert sizes[-1] < len(full) / 2   # most of the 5,942 words are rare and stay private


def test_reuters_c50_with_authors(reuters_c50):
    # 50 authors give a total weight budget of 50: user-level DPSU keeps only a few words
    from dptm.text import preprocess
    texts, authors = reuters_c50
    keep = np.arange(0, 2500, 2)                       # half of the training articles
    docs = preprocess([texts[i] for i in keep], stop_words="sklearn")
    users = np.asarray(authors)[keep]
    v = DPVocabulary(10.0, 1e-5, max_contribution=5, random_state=0).fit(docs, groups=users)
    assert v.privacy_.adjacency == "user" and 1 <= v.vocabulary_.size <= 50
    per_doc = DPVocabulary(10.0, 1e-5, max_contribution=5, random_state=0).fit(docs)
    assert per_doc.vocabulary_.size > 5 * v.vocabulary_.size
    author_sets = {}
    for d, u in zip(docs, users):
        author_sets.setdefault(u, set()).update(d)
    n_authors = {}
    for s in author_sets.values():
        for w in s:
            n_authors[w] = n_authors.get(w, 0) + 1
    # every released word is used by many authors, none by a single one
    assert min(n_authors[w] for w in v.vocabulary_) >= 10


# ----------------------------------------------------------------------------- the noise
def _one_word_corpus(n_users):
    """``n_users`` users who each wrote only "w", plus filler users of other words."""
    return [["w"]] * n_users + [["x%d" % i] for i in range(3)]


def _pass_rates(n_users, runs, eps=1.0, delta=0.5 * math.exp(-10)):
    docs = _one_word_corpus(n_users)
    out = np.empty(runs, dtype=np.int64)
    for i in range(runs):
        v = DPVocabulary(eps, delta, max_contribution=1).fit(docs)
        out[i] = "w" in v.vocabulary_
    return out, v


def test_noise_against_the_ledger_and_empirical_epsilon(monkeypatch):
    """Epsilon side of the DP set union. With one word per user and Delta_0 = 1 the weight
    of "w" is exactly the number of its users (10 or 11, below the cut-off), so it passes
    rho with probability P(noise > rho - H). (1) Each pass rate matches the probability
    computed from the scale recorded in the report's Laplace event (binomial test, false
    alarm 1e-6 each). (2) The neighbours H = 10 / 11 (one user added) are the worst case:
    the Clopper-Pearson lower bound on epsilon (confidence 1 - 1e-6) stays below the claimed
    epsilon = 1, and (3) exceeds it when the noise is halved with the report unchanged."""
    from dptm import vocab
    from dptm.testing import epsilon_lower_bound
    runs = 3000
    hits10, v = _pass_rates(10, runs)
    hits11, _ = _pass_rates(11, runs)
    noise_ev, thr_ev = v.privacy_.event.events
    assert noise_ev.discrete and noise_ev.scale == v.noise_scale_
    assert noise_ev.epsilon == pytest.approx(1.0, rel=1e-9)
    g = v.lattice_granularity_
    b = noise_ev.scale

    def p_pass(h):        # discrete Laplace on g Z: P(g k > rho - h), k >= m
        m = math.floor((v.threshold_ - h) / g) + 1
        return math.exp(-m * g / b) / (1 + math.exp(-g / b))

    for hits, h in ((hits10, 10), (hits11, 11)):
        assert stats.binomtest(int(hits.sum()), runs, p_pass(h)).pvalue > 1e-6
    assert math.exp(0.999) < p_pass(11) / p_pass(10) <= math.exp(noise_ev.epsilon)
    bound = epsilon_lower_bound(hits11, hits10, confidence=1 - 1e-6)
    assert bound < noise_ev.epsilon
    # positive control: half the noise, same report -> the tester sees epsilon ~ 2
    real = vocab._noisy_weights
    monkeypatch.setattr(vocab, "_noisy_weights",
                        lambda w, noise, scale, g, gen: real(w, noise, scale / 2, g / 2, gen))
    half10, _ = _pass_rates(10, runs)
    half11, _ = _pass_rates(11, runs)
    assert epsilon_lower_bound(half11, half10, confidence=1 - 1e-6) > noise_ev.epsilon


def test_selection_noise_lies_on_the_lattice_whatever_the_weights():
    from dptm.vocab import _noisy_weights
    rng = np.random.default_rng(0)
    w = np.concatenate([np.zeros(200), rng.random(200) * 1e-9, rng.random(200) * 7.123456789])
    g = 2.0 ** -40
    out, eff = _noisy_weights(w, "laplace", 1.0, g, rng)
    k = out / g
    assert np.array_equal(k, np.rint(k)) and eff >= 1.0


def test_two_default_fits_draw_different_noise():
    # 40 words each right at the threshold: each passes with probability about 1/2, so two
    # secret-generator fits give the same vocabulary with probability about 2^-40.
    docs = [[f"w{j}"] for j in range(40) for _ in range(11)]
    a = DPVocabulary(1.0, 0.5 * math.exp(-10), max_contribution=1).fit(docs)
    b = DPVocabulary(1.0, 0.5 * math.exp(-10), max_contribution=1).fit(docs)
    assert a.vocabulary_.tolist() != b.vocabulary_.tolist()
    assert a.random_state is None and not a.privacy_.seeded


def test_lattice_accounting_of_the_laplace_threshold():
    # exact noise on g Z: the sensitivity grows by g per possible candidate word and rho by
    # 2 g (the added user's rounded weight, the discrete tail); both are recorded
    from dptm.vocab import _MAX_CANDIDATES
    v = DPVocabulary(1.0, 1e-5, max_contribution=4).fit(_corpus_with_private_user())
    g = v.lattice_granularity_
    noise_ev, thr_ev = v.privacy_.event.events
    assert noise_ev.sensitivity == 1.0 + g * _MAX_CANDIDATES and g * _MAX_CANDIDATES < 1e-4
    rho = frequency_threshold("laplace", noise_ev.sensitivity / 1.0, 1e-5, 4)
    assert abs((v.threshold_ - rho) - 2 * g) < 1e-14
    assert thr_ev.epsilon == 0.0 and thr_ev.delta == 1e-5
    assert v.privacy_.epsilon(1e-5) == pytest.approx(1.0, rel=1e-9)


def test_grouping_argument_is_groups_and_users_is_a_deprecated_alias():
    docs = [["a", "b"], ["a"], ["b", "c"], ["a", "c"]]
    ids = [0, 0, 1, 2]
    with pytest.warns(FutureWarning, match="groups="):
        old = DPVocabulary(2.0, 1e-5, random_state=3).fit(docs, users=ids)
    new = DPVocabulary(2.0, 1e-5, random_state=3).fit(docs, groups=ids)
    assert old.privacy_.to_state() == new.privacy_.to_state()
    assert new.privacy_.adjacency == old.privacy_.adjacency
    with pytest.raises(TypeError, match="groups= only"):
        DPVocabulary().fit(docs, groups=ids, users=ids)


def test_user_ids_of_mixed_types_are_the_model_stage_users():
    # one added user with an int id among string ids must not make the fit raise (the
    # refusal would tell the neighbours apart); ids are compared like dict keys
    from dptm.models.user_contributions import check_groups
    docs = [["alpha", "beta"], ["beta"], ["gamma"], ["alpha"]]
    ids = np.empty(4, dtype=object)
    ids[:] = ["u1", "u2", 7, "u1"]
    DPVocabulary(target_epsilon=1.0, random_state=0).fit(docs, ids)
    assert len(set(check_groups(ids, 4).tolist())) == 3
def _n_candidates(monkeypatch, docs, cap):
    import dptm.vocab as vocab_module
    from dptm import DPVocabulary

    seen = []
    real = vocab_module._noisy_weights

    def spy(weights, *args):
        seen.append(np.array(weights, copy=True))
        return real(weights, *args)

    monkeypatch.setattr(vocab_module, "_noisy_weights", spy)
    DPVocabulary(target_epsilon=1.0, target_delta=1e-5, max_contribution=cap).fit(docs)
    assert len(seen) == 1
    return seen[0]


@pytest.mark.parametrize("n_distinct", [4, 5, 12])
def test_vocabulary_user_cap_is_exact(monkeypatch, n_distinct):
    # The threshold's delta is computed for Delta_0 = max_contribution words per user: a
    # user contributing Delta_0 + 1 words breaks it. One user, n_distinct > cap words.
    cap = 3
    doc = [f"w{i}" for i in range(n_distinct)] * 2
    weights = _n_candidates(monkeypatch, [doc], cap)
    assert weights.size == cap
    assert weights.sum() <= 1.0 + 1e-12           # one user's L1 budget


def test_gaussian_vocabulary_threshold_gets_half_of_delta():
    # The Gaussian methods split delta: the noise is (epsilon, delta/2)-DP, so the threshold
    # may fail with probability delta/2 only. Checked by value: with F the N(0, sigma^2) CDF,
    # 1 - F(rho - 1) F(rho)^(cap - 1) = delta / 2 at the released threshold.
    import warnings

    from scipy.stats import norm

    from dptm import DPVocabulary
    from dptm.vocab import analytic_gaussian_sigma
    eps, delta, cap = 1.0, 1e-5, 5
    docs = [["a", "b", "c"], ["a", "b"], ["a", "d"]] * 20
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        voc = DPVocabulary(target_epsilon=eps, target_delta=delta, method="frequency_gaussian",
                           max_contribution=cap).fit(docs)
    sigma = voc.noise_scale_
    assert sigma == pytest.approx(analytic_gaussian_sigma(eps, delta / 2.0), rel=1e-12)
    rho = voc.threshold_
    fail = 1.0 - norm.cdf(rho - 1.0, scale=sigma) * norm.cdf(rho, scale=sigma) ** (cap - 1)
    assert fail == pytest.approx(delta / 2.0, rel=1e-4)


class _RecordingGenerator(np.random.Generator):
    """A test-mode generator that records what it was asked to permute."""

    def __init__(self, seed):
        super().__init__(np.random.PCG64(seed))
        self.permuted = []

    def permutation(self, x, *args, **kwargs):
        out = super().permutation(x, *args, **kwargs)
        if not np.isscalar(x):
            self.permuted.append((np.array(x, copy=True), np.array(out, copy=True)))
        return out


def test_vocabulary_processes_users_in_a_secret_random_order():
    # The set-union algorithm visits users in a random order drawn from the fit's generator
    # (the module's contract); data order (users sorted by id) would make the greedy fills
    # depend on who comes first. Every user index is permuted once, differently per seed.
    import warnings

    from dptm import DPVocabulary
    docs = [["a", "b"], ["b", "c"], ["c", "d"], ["d", "e"], ["e", "a"], ["a", "c"]] * 5
    orders = []
    for seed in (1, 2):
        gen = _RecordingGenerator(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            DPVocabulary(target_epsilon=1.0, max_contribution=2, random_state=gen).fit(docs)
        users = [out for x, out in gen.permuted if np.array_equal(x, np.arange(len(docs)))]
        assert len(users) == 1
        orders.append(users[0])
    assert not np.array_equal(orders[0], orders[1])


def test_a_corpus_without_tokens_is_selected_not_refused():
    # catches a data-dependent refusal: an all-empty corpus raised "has no tokens" while its
    # neighbour with one added document released an empty vocabulary (two messages)
    from dptm import FullyPrivateTopicModel, PrivateBatchLDA
    empty = DPVocabulary(2.0, 5e-6).fit([[]] * 5)
    assert len(empty.vocabulary_) == 0
    assert empty.privacy_.epsilon(5e-6) == pytest.approx(2.0)
    messages = []
    for docs in ([[]] * 5, [[]] * 5 + [["rain"]]):
        with pytest.raises(ValueError) as info:
            FullyPrivateTopicModel(DPVocabulary(2.0, 5e-6),
                                   PrivateBatchLDA(2, target_epsilon=2.0)).fit(docs)
        messages.append(str(info.value))
    assert messages[0] == messages[1] and "private vocabulary is empty" in messages[0]
