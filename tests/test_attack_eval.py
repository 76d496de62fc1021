"""Attack evaluation (ROC, TPR at FPR, AUC, empirical epsilon), diagnostics and the
shadow-classifier attack."""
import numpy as np
import pytest
from scipy import stats
from sklearn import metrics

from dptm.attacks import (auc, clopper_pearson, empirical_epsilon, roc_curve, tpr_at_fpr)
from dptm.attacks.diagnostics import example_documents, in_out_kl, normality_tests


def test_roc_and_auc_match_sklearn():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 500)
    s = np.round(rng.normal(size=500) + y, 1)  # ties on purpose
    f, t, thr = roc_curve(y, s)
    fs, ts, _ = metrics.roc_curve(y, s, drop_intermediate=False)
    assert np.allclose(f, fs) and np.allclose(t, ts)
    assert auc(y, s) == pytest.approx(metrics.roc_auc_score(y, s), rel=1e-12)


def test_tpr_at_fpr_small_example():
    y = np.array([1, 1, 0, 1, 0, 0, 0, 0, 0, 0])
    s = np.array([10, 9, 8, 7, 6, 5, 4, 3, 2, 1])
    assert tpr_at_fpr(y, s, 0.0) == pytest.approx(2 / 3)
    assert list(tpr_at_fpr(y, s, [0.1, 1 / 7, 0.5])) == pytest.approx([2 / 3, 1, 1])
    with pytest.raises(ValueError, match="both"):
        tpr_at_fpr(np.ones(3), [1, 2, 3])
    with pytest.raises(ValueError, match="fpr"):
        tpr_at_fpr(y, s, 1.5)


def test_clopper_pearson_closed_forms():
    n, a = 50, 0.05
    lo, hi = clopper_pearson(0, n, 1 - a)
    assert lo == 0 and hi == pytest.approx(1 - (a / 2) ** (1 / n))
    lo, hi = clopper_pearson(n, n, 1 - a)
    assert hi == 1 and lo == pytest.approx((a / 2) ** (1 / n))
    # coverage on a grid of p: exact binomial probability of the interval covering p
    for p in (0.05, 0.3, 0.5):
        k = np.arange(n + 1)
        lo, hi = clopper_pearson(k, n, 0.9)
        cover = stats.binom.pmf(k, n, p)[(lo <= p) & (p <= hi)].sum()
        assert cover >= 0.9


def test_empirical_epsilon_perfect_separation_closed_form():
    n = 1000
    y = np.r_[np.ones(n), np.zeros(n)]
    s = np.r_[np.ones(n), np.zeros(n)]
    eps, info = empirical_epsilon(y, s, confidence=0.95, return_details=True)
    # best threshold: all members in, no non-member: TPR_lo = (0.025)^(1/n), FPR_hi = 1-0.025^(1/n)
    q = 0.025 ** (1 / n)
    assert eps == pytest.approx(np.log(q / (1 - q)), rel=1e-9)
    assert info["tp"] == n and info["fp"] == 0


def test_empirical_epsilon_is_a_valid_lower_bound_for_randomized_response():
    """Randomized response with known epsilon: the attack 'report the bit' cannot prove more
    than the true epsilon (checked on 20 seeds at 95% confidence: a false alarm on more than
    3 seeds has probability < 1e-2), and gets reasonably close with 20,000 trials."""
    eps_true = 1.0
    p_keep = np.exp(eps_true) / (1 + np.exp(eps_true))
    over = 0
    found = []
    for seed in range(20):
        rng = np.random.default_rng(seed)
        y = rng.integers(0, 2, 20000)
        out = np.where(rng.random(y.size) < p_keep, y, 1 - y)
        e = empirical_epsilon(y, out, confidence=0.95)
        over += e > eps_true
        found.append(e)
    assert over <= 3
    assert np.median(found) > 0.9
    # random scores prove almost nothing
    rng = np.random.default_rng(0)
    assert empirical_epsilon(rng.integers(0, 2, 5000), rng.normal(size=5000)) < 0.3


def test_plot_roc_loglog():
    mpl = pytest.importorskip("matplotlib", reason="matplotlib not installed (extra 'plot')")
    mpl.use("Agg")
    from dptm.attacks import plot_roc
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200)
    ax = plot_roc(y, {"a": rng.normal(size=200) + y, "b": rng.normal(size=200)})
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert len(ax.get_lines()) == 3


def test_kl_closed_form_and_sign():
    rng = np.random.default_rng(0)
    a = rng.normal(2, 1, size=(1, 4000))
    b = rng.normal(0, 2, size=(1, 4000))
    expected = np.log(2 / 1) + (1 + 4) / (2 * 4) - 0.5
    assert in_out_kl(a, b)[0] == pytest.approx(expected, rel=0.05)
    assert in_out_kl(b, a, signed=True)[0] < 0 < in_out_kl(a, b, signed=True)[0]


def test_normality_tests_with_fdr():
    rng = np.random.default_rng(1)
    normal = rng.normal(size=(200, 64))
    skewed = rng.exponential(size=(200, 64))
    r = normality_tests({"normal": normal, "skewed": skewed})
    # BH at 0.05 on true nulls: P(any rejection) <= 0.05; allow at most 2 of 200
    assert r["normal"]["n_rejected"] <= 2
    assert r["skewed"]["rejection_rate"] > 0.8
    assert r["normal"]["n_tests"] == 200


def test_example_documents():
    # Ordinary-length documents 0-4 and 7 (length 4); 5 is long (20), 6 short (1).
    # Document frequencies: words 0 and 1 in 6 documents, 2 and 3 in 3, 4 and 5 in one.
    # Mean log document frequency: doc 0 (and 1) log 6, the largest -> inlier (first index);
    # doc 4 only uses word 4 (df 1) -> 0, the smallest -> outlier (doc 6, also 0, is later).
    X = np.array([[2, 2, 0, 0, 0, 0], [2, 2, 0, 0, 0, 0], [2, 1, 1, 0, 0, 0], [1, 1, 0, 2, 0, 0],
                  [0, 0, 0, 0, 4, 0], [6, 6, 4, 4, 0, 0], [0, 0, 0, 0, 0, 1], [1, 1, 1, 1, 0, 0]])
    assert example_documents(X) == {"outlier": 4, "inlier": 0, "long": 5, "short": 6}


def test_in_out_histograms_from_lira():
    from dptm import GibbsLDA
    from dptm.attacks import LiRA
    from dptm.attacks.diagnostics import in_out_histograms, in_out_samples
    from dptm.datasets import make_lda_corpus
    X, _, _ = make_lda_corpus(40, 30, 2, doc_length=15, random_state=0)
    lira = LiRA(GibbsLDA(2, max_iter=10), n_shadows=6, random_state=0).fit(X)
    t_in, t_out = in_out_samples(lira)
    assert t_in.shape == (40, 3) and t_out.shape == (40, 3)
    d = 5
    assert np.allclose(np.sort(t_in[d]), np.sort(lira.shadow_stats_[lira.in_mask_[:, d], d, 0]))
    h = in_out_histograms(lira, bins=5)
    assert set(h) == {"outlier", "inlier", "long", "short"}
    edges, ci, co = h["long"]
    assert ci.sum() == 3 and co.sum() == 3


def test_shadow_classifier_attack_detects_overfitting():
    """Shokri et al. on a memorising classifier (1-nearest-neighbour on LDA features): the
    attack accuracy on balanced members / non-members is well above 1/2."""
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    from dptm import GibbsLDA
    from dptm.attacks import ShadowClassifierAttack
    from dptm.datasets import make_lda_corpus
    X, _, theta = make_lda_corpus(400, 40, 3, doc_length=30, random_state=0)
    rng = np.random.default_rng(0)
    y = np.where(rng.random(400) < 0.6, rng.integers(0, 3, 400), theta.argmax(axis=1))  # noisy
    model = make_pipeline(GibbsLDA(3, max_iter=20), KNeighborsClassifier(1))
    target = make_pipeline(GibbsLDA(3, max_iter=20, random_state=1),
                           KNeighborsClassifier(1)).fit(X[:100], y[:100])
    att = ShadowClassifierAttack(model, n_shadows=3, random_state=0).fit(X[200:], y[200:])
    acc = att.score(target, X[:100], y[:100], X[100:200], y[100:200])
    assert acc > 0.6


def _null_count_pmf_by_enumeration(n_pos, n_neg, r):
    """pmf of the members ranked above the r-th non-member over all label orders."""
    from itertools import combinations
    M = n_pos + n_neg
    counts = np.zeros(n_pos + 1)
    for pos in combinations(range(M), n_pos):
        seq = np.zeros(M, dtype=int)
        seq[list(pos)] = 1
        negs_seen = np.cumsum(1 - seq)
        counts[int(seq[negs_seen < r].sum())] += 1
    return counts / counts.sum()


def test_tpr_null_p_value_exact_by_enumeration():
    """The p-value equals the tail of the count's distribution over every ordering of the
    labels (enumerated, no scipy), for thresholds at the 1st and 2nd non-member."""
    from dptm.attacks import tpr_null_p_value
    n_pos, n_neg = 5, 7
    scores = np.arange(12.0)[::-1]                  # rank = position
    for fpr, r in ((0.0, 1), (1 / 7, 2)):
        pmf = _null_count_pmf_by_enumeration(n_pos, n_neg, r)
        for tp in range(n_pos + 1):
            # tp members on top, then r non-members, then the rest
            labels = np.array([1] * tp + [0] * r + [1] * (n_pos - tp) + [0] * (n_neg - r))
            assert tpr_at_fpr(labels, scores, fpr) == pytest.approx(tp / n_pos)
            assert tpr_null_p_value(labels, scores, fpr) == pytest.approx(pmf[tp:].sum(), rel=1e-12)
    # r = 1 closed form: the top tp scores are all members
    labels = np.array([1, 1, 1, 0, 1, 1, 0, 0, 0, 0, 0, 0])
    assert tpr_null_p_value(labels, scores, 0.0) == pytest.approx(10 / 220)   # C(5,3)/C(12,3)


def test_tpr_null_p_value_is_calibrated_and_has_power():
    """Under guessing, P(p <= 0.05) <= 0.05 (the test is exact, discrete so conservative):
    2,000 simulated audits of 300 + 300 scores at fpr = 1%; false alarm of the check 1e-6.
    A leaking attack (members shifted by two sd) gets p < 1e-6."""
    from dptm.attacks import tpr_null_p_value
    rng = np.random.default_rng(0)
    labels = np.r_[np.ones(300), np.zeros(300)]
    n = 2000
    p = np.array([tpr_null_p_value(labels, rng.normal(size=600), 0.01) for _ in range(n)])
    assert np.sum(p <= 0.05) <= stats.binom(n, 0.05).isf(1e-6)
    assert np.sum(p <= 0.05) >= stats.binom(n, 0.02).ppf(1e-6)     # not absurdly conservative
    leak = rng.normal(size=600) + 2 * labels
    assert tpr_null_p_value(labels, leak, 0.01) < 1e-6
    with pytest.raises(ValueError, match="fpr"):
        tpr_null_p_value(labels, leak, 1.0)
