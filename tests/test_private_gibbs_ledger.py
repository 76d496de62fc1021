"""The noise the private Gibbs samplers add, checked against the event in their report.

A one-topic model's true topic-word counts are the corpus word counts whatever the topic
assignments, so ``snapshot - counts`` is exactly the noise drawn in each iteration
(recorded with ``record_trace``). Its distribution is tested against the snapshot event
read from ``privacy_`` (scale or sigma, discreteness), never restated in the test, and the
event's sensitivity against the true L1 / L2 sensitivity of a word replacement, computed
here from two neighbouring corpora. Every test has a false-alarm rate of 1e-6.

Also: the sweep samples from the released snapshot (not from the true counts), and the
exact discrete Gaussian sampler follows its pmf (its rejection step is not skipped).
"""
import math

import numpy as np
import pytest
from scipy import stats

from dptm import NoisyGibbsLDA, SubsampledGibbsLDA, _cgs, mechanisms
from dptm.accounting import GaussianEvent, LaplaceEvent
from dptm.corpus import Corpus
from dptm.models.private_gibbs import dyadic_laplace_parameter
from dptm.noise.releases import recording

pytestmark = [pytest.mark.filterwarnings("ignore::dptm.exceptions.SeededPrivacyWarning"),
              pytest.mark.filterwarnings("ignore::dptm.exceptions.NotHardenedWarning")]

ALARM = 1e-6
V = 4000


def snapshot_event(model):
    (leaf,) = [e for e, _, _, label in model.privacy_.events if label.startswith("noisy snapshot")]
    return leaf


def chi_square_integer(samples, pmf, min_expected=20):
    """p-value of integer samples against ``pmf``: one cell per integer with expected count
    >= min_expected, each tail pooled into one cell."""
    n = samples.size
    xs = np.arange(-20000, 20001)
    p = pmf(xs)
    inner = np.flatnonzero(p * n >= min_expected)
    a, b = xs[inner[0]], xs[inner[-1]]
    expected = np.concatenate([[p[xs < a].sum()], p[(xs >= a) & (xs <= b)], [p[xs > b].sum()]])
    observed = np.bincount(np.clip(samples, a - 1, b + 1) - (a - 1), minlength=b - a + 3)
    keep = expected * n > 1e-3
    if observed[~keep].sum() > 0:
        return 0.0
    return stats.chisquare(observed[keep], expected[keep] / expected[keep].sum() * n).pvalue


def word_replacement_sensitivity():
    """L1 and L2 distance of the topic-word counts of two neighbouring corpora (one
    token's word replaced, the same topic assignment)."""
    X = np.array([[2, 1, 0, 3], [0, 1, 1, 1]])
    Xp = X.copy()
    Xp[0, 0] -= 1
    Xp[0, 2] += 1
    counts = [np.bincount(Corpus.from_matrix(x).word_ids, minlength=4) for x in (X, Xp)]
    d = (counts[0] - counts[1]).astype(float)
    return np.abs(d).sum(), math.sqrt((d ** 2).sum())


def drawn_noise(model_cls, **kw):
    """Fit a one-topic model on a corpus with counts 0..5 per word and return (model, the
    noise of every recorded snapshot)."""
    counts = np.arange(V) % 6
    X = counts[None, :]
    with recording() as draws:
        m = model_cls(1, clip=1e6, max_iter=3, record_trace=True, random_state=11, **kw).fit(X)
    noise = np.concatenate([s[:, 0] - counts for s in m.trace_["snapshots"]])
    # each snapshot as its release object drew it: the counts it read, what it wrote, the
    # event it recorded (the report's, every time)
    assert len(draws) == 3 and all(d.event == snapshot_event(m) for d in draws)
    np.testing.assert_array_equal(np.concatenate([(d.noisy - d.statistic)[:, 0] for d in draws]),
                                  noise)
    return m, noise


MECHANISMS = [
    (NoisyGibbsLDA, {"mechanism": "discrete_laplace", "epsilon_per_iter": 1.0}),
    (NoisyGibbsLDA, {"mechanism": "discrete_laplace", "epsilon_per_iter": 0.3}),
    (NoisyGibbsLDA, {"mechanism": "discrete_laplace", "epsilon_per_iter": 0.15}),   # CKS20 path
    (NoisyGibbsLDA, {"mechanism": "laplace", "epsilon_per_iter": 0.7}),
    (NoisyGibbsLDA, {"mechanism": "discrete_gaussian", "noise_multiplier": 2.0}),
    (NoisyGibbsLDA, {"mechanism": "gaussian", "noise_multiplier": 2.0}),
    (SubsampledGibbsLDA, {"mechanism": "discrete_gaussian", "noise_multiplier": 1.5}),
    (SubsampledGibbsLDA, {"mechanism": "gaussian", "noise_multiplier": 1.5}),
    (SubsampledGibbsLDA, {"mechanism": "discrete_gaussian", "noise_multiplier": 0.6}),
]


@pytest.mark.parametrize("cls,kw", MECHANISMS)
def test_snapshot_noise_follows_the_reported_event(cls, kw):
    m, noise = drawn_noise(cls, **kw)
    leaf = snapshot_event(m)
    l1, l2 = word_replacement_sensitivity()
    assert (l1, l2) == (2.0, pytest.approx(math.sqrt(2)))
    integral = bool(np.all(noise == np.rint(noise)))
    assert leaf.discrete == integral                   # the report says what was drawn
    assert leaf.discrete == kw["mechanism"].startswith("discrete")
    if isinstance(leaf, LaplaceEvent):
        assert kw["mechanism"].endswith("laplace")
        assert leaf.sensitivity == l1                  # the true L1 sensitivity, not 1
        # the stated per-snapshot epsilon is what was asked (scale rounded up by < 1e-5 only)
        assert kw["epsilon_per_iter"] * (1 - 1e-5) <= leaf.epsilon <= kw["epsilon_per_iter"]
        if leaf.discrete:
            p = chi_square_integer(noise.astype(np.int64),
                                   lambda x: mechanisms.discrete_laplace_pmf(x, leaf.scale))
        else:
            p = stats.kstest(noise, stats.laplace(scale=leaf.scale).cdf).pvalue
    else:
        assert isinstance(leaf, GaussianEvent) and kw["mechanism"].endswith("gaussian")
        assert leaf.sensitivity == pytest.approx(l2)   # the true L2 sensitivity
        assert leaf.sigma / leaf.sensitivity >= kw["noise_multiplier"] * (1 - 1e-12)
        if leaf.discrete:
            p = chi_square_integer(noise.astype(np.int64),
                                   lambda x: mechanisms.discrete_gaussian_pmf(x, leaf.sigma))
        else:
            p = stats.kstest(noise, stats.norm(scale=leaf.sigma).cdf).pvalue
    assert p > ALARM
    assert leaf.label.startswith("noisy snapshot")
    assert m.noise_scale_ == (leaf.scale if isinstance(leaf, LaplaceEvent) else leaf.sigma)


def test_sweep_samples_from_the_released_snapshot():
    """Single-token documents: each token's new topic is drawn from
    p_k ∝ F[w, k] (0 + alpha), F the word factor of the snapshot the trace records for
    that sweep (numerator clamped and clipped, totals of the clamped snapshot). Binned
    chi-square of 4 x 800 draws against it (false alarm 1e-6); the snapshot is far from
    the true counts (Laplace scale 20), so a sweep on the true counts fails."""
    rng = np.random.default_rng(0)
    n_docs, n_words, C, beta = 800, 12, 60.0, 0.5
    words = rng.integers(0, n_words, n_docs)
    X = np.zeros((n_docs, n_words), dtype=np.int64)
    X[np.arange(n_docs), words] = 1
    m = NoisyGibbsLDA(2, epsilon_per_iter=0.1, clip=C, topic_word_prior=beta, max_iter=4,
                      record_trace=True, trace_tokens=np.arange(n_docs), random_state=5).fit(X)
    tokens = m.trace_["words"]                   # the word of each traced position
    p0, z = [], []
    for s, topics in zip(m.trace_["snapshots"], m.trace_["topics"]):
        pos = np.maximum(s, 0.0)
        F = ((np.minimum(pos, C) + beta) / (pos.sum(axis=0) + s.shape[0] * beta)).astype(np.float32)
        F = F.astype(np.float64)
        p0.append(F[tokens, 0] / F[tokens].sum(axis=1))
        z.append(topics == 0)
    p0, z = np.concatenate(p0), np.concatenate(z)
    assert p0.min() < 0.2 and p0.max() > 0.8              # the snapshot matters
    order = np.argsort(p0)
    chi2 = 0.0
    bins = np.array_split(order, 10)
    for b in bins:
        e, v = p0[b].sum(), (p0[b] * (1 - p0[b])).sum()
        chi2 += (z[b].sum() - e) ** 2 / v
    assert stats.chi2.sf(chi2, len(bins)) > ALARM


@pytest.mark.parametrize("sigma", [0.8, 1.5, 4.0])
def test_discrete_gaussian_sampler_pmf(sigma):
    """dptm.mechanisms.discrete_gaussian_noise against discrete_gaussian_pmf (chi-square,
    false alarm 1e-6): a sampler that returned its discrete-Laplace proposal without the
    rejection step fails."""
    x = mechanisms.discrete_gaussian_noise(200000, sigma, np.random.default_rng(8))
    eff = mechanisms.discrete_gaussian_parameters(sigma)[3]
    assert chi_square_integer(x, lambda k: mechanisms.discrete_gaussian_pmf(k, eff)) > ALARM


@pytest.mark.parametrize("scale", [0.45, 1.0, 2.0, 3.0, 20.0 / 3.0, 33.0])
def test_discrete_laplace_sampler_pmf(scale):
    """dptm.mechanisms.discrete_laplace_noise against discrete_laplace_pmf (chi-square,
    false alarm 1e-6), integer and fractional scales (the kernel's fast path for integer
    scales and the general CKS20 algorithm)."""
    x = mechanisms.discrete_laplace_noise(200000, scale, np.random.default_rng(9))
    eff = mechanisms.discrete_laplace_parameters(scale)[2]
    assert chi_square_integer(x, lambda k: mechanisms.discrete_laplace_pmf(k, eff)) > ALARM
    assert chi_square_integer(x, lambda k: mechanisms.discrete_laplace_pmf(k, 1.05 * eff)) < ALARM


@pytest.mark.parametrize("scale", [0.3, 1.0, 2.0, 2.0 / 0.7, 8.0, 41.3, 64.0])
def test_dyadic_discrete_laplace_pmf(scale):
    """The snapshots' fast exact sampler: P(x) = (1 - r)/(1 + r) r^|x| with r = a / 2^21,
    against the discrete Laplace pmf of scale -1/log r (chi-square, false alarm 1e-6), and
    the scale told to the accountant is within 4e-5 (scale / 2^21) above the requested one
    and at most the true -1/log r."""
    a, eff = dyadic_laplace_parameter(scale)
    true_scale = -1.0 / np.log(a / 2.0 ** 21)
    assert scale <= eff <= true_scale and eff / scale - 1 < 4e-5
    x = np.empty(200000, dtype=np.int64)
    _cgs.fill_discrete_laplace_dyadic(x, a, np.random.default_rng(10).bit_generator)
    assert chi_square_integer(x, lambda k: mechanisms.discrete_laplace_pmf(k, true_scale)) > ALARM
    assert chi_square_integer(x, lambda k: mechanisms.discrete_laplace_pmf(k, 1.05 * true_scale)) < ALARM
    # symmetric and centred: P(x > 0) = P(x < 0)
    pos, neg = int(np.sum(x > 0)), int(np.sum(x < 0))
    assert stats.binomtest(pos, pos + neg).pvalue > ALARM


def test_dyadic_parameter_range():
    with pytest.raises(ValueError, match="a must be"):
        _cgs.fill_discrete_laplace_dyadic(np.empty(3, dtype=np.int64), 2 ** 21,
                                          np.random.default_rng(0).bit_generator)
    with pytest.raises(ValueError, match="too large"):
        dyadic_laplace_parameter(1e7)
