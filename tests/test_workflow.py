"""The data scientist's workflow: topic words, feature names, pandas output."""
import builtins

import numpy as np
import pytest

from dptm import GibbsLDA
from dptm.datasets import load_demo_corpus

pd = pytest.importorskip("pandas", reason="pandas (test extra) for DataFrame input/output")


@pytest.fixture(scope="module")
def demo():
    return load_demo_corpus()


@pytest.fixture(scope="module")
def fitted_on_frame(demo):
    X = pd.DataFrame(demo.X.toarray(), columns=demo.vocabulary)
    return GibbsLDA(8, max_iter=30, random_state=0).fit(X), X


def test_top_words_from_feature_names(fitted_on_frame, demo):
    model, _ = fitted_on_frame
    words = model.top_words(5)
    assert isinstance(words, pd.DataFrame) and words.shape == (8, 5)
    for k in range(8):
        expected = [demo.vocabulary[i] for i in np.argsort(-model.topic_word_[k], kind="stable")[:5]]
        assert words.iloc[k].tolist() == expected
    assert model.release().vocabulary == list(demo.vocabulary)


def test_top_words_without_pandas_and_without_vocabulary(monkeypatch, demo):
    model = GibbsLDA(8, max_iter=10, random_state=0).fit(demo.X)
    real_import = builtins.__import__

    def no_pandas(name, *args, **kwargs):
        if name == "pandas":
            raise ImportError("no pandas here")
        return real_import(name, *args, **kwargs)
    monkeypatch.setattr(builtins, "__import__", no_pandas)
    ids = model.top_words(3)
    assert ids == np.argsort(-model.topic_word_, axis=1, kind="stable")[:, :3].tolist()
    assert model.top_words(2, vocabulary=demo.vocabulary)[0] == [demo.vocabulary[i] for i in ids[0][:2]]
    with pytest.raises(ValueError, match="vocabulary has 3 words"):
        model.top_words(2, vocabulary=["a", "b", "c"])


def test_feature_names_out_and_pandas_output(fitted_on_frame):
    model, X = fitted_on_frame
    names = model.get_feature_names_out()
    assert names.tolist() == [f"gibbslda{k}" for k in range(8)]
    model.set_output(transform="pandas")
    try:
        theta = model.transform(X[:4])
        assert isinstance(theta, pd.DataFrame) and theta.columns.tolist() == names.tolist()
        np.testing.assert_allclose(theta.sum(axis=1), 1.0)
    finally:
        model.set_output(transform="default")


# ------------------------------------------------------------ privacy-utility curve (#18)
def test_privacy_utility_curve_against_closed_forms(demo):
    """A 'private' model whose topics are uniform has held-out perplexity exactly V; the
    total_epsilon column is the composition of every fit (pure Laplace: the sum)."""
    import scipy.sparse as sp
    from sklearn.base import BaseEstimator

    from dptm.accounting import LaplaceEvent, PrivacyReport
    from dptm.metrics import privacy_utility_curve

    class Uniform(BaseEstimator):
        def __init__(self, eps=1.0):
            self.eps = eps

        def fit(self, X):
            V = X.shape[1]
            self.topic_word_ = np.full((2, V), 1.0 / V)
            self.privacy_ = PrivacyReport(LaplaceEvent(1.0 / self.eps), "document")  # scale 1/eps
            return self

        def transform(self, X):
            return np.full((X.shape[0], 2), 0.5)

    X = demo.X
    V = X.shape[1]
    table = privacy_utility_curve(Uniform, X[:600], X[600:], [0.5, 1.0, 2.0], n_repeats=2,
                                  coherence=None,
                                  nonprivate=GibbsLDA(4, max_iter=30, random_state=0))
    assert table["epsilon"].tolist() == [0.5, 1.0, 2.0]
    np.testing.assert_allclose(table["perplexity"], V, rtol=1e-12)
    np.testing.assert_allclose(table["uniform_perplexity"], V)
    # the report's epsilon at its delta (1e-5): a Laplace mechanism is a hair below eps
    reported = table["epsilon_reported"].to_numpy()
    assert np.all(reported <= np.array([0.5, 1.0, 2.0]))
    np.testing.assert_allclose(reported, [0.5, 1.0, 2.0], rtol=1e-4)
    # 2 fits each; at delta = 1e-5 the accountant may compose a little below the pure sum
    total = table["total_epsilon"].to_numpy()
    assert np.all(total <= np.array([1.0, 3.0, 7.0]) * (1 + 1e-12))
    np.testing.assert_allclose(total, [1.0, 3.0, 7.0], rtol=1e-3)
    assert table["coherence"].isna().all()
    assert table["nonprivate_perplexity"].iloc[0] < 0.7 * V
    with pytest.raises(ValueError, match="X_heldout has 3 words"):
        privacy_utility_curve(Uniform, X, sp.csr_matrix(np.ones((2, 3))), [1.0])
    with pytest.raises(ValueError, match="epsilons"):
        privacy_utility_curve(Uniform, X, X, [0.0])
    with pytest.raises(ValueError, match="set no privacy_"):
        privacy_utility_curve(lambda e: GibbsLDA(2, max_iter=2), X, X, [1.0])


def test_privacy_utility_curve_spends_a_budget(demo):
    from dptm import PrivateOnlineLDA
    from dptm.accounting import BudgetAccountant, BudgetExceededError
    from dptm.metrics import privacy_utility_curve

    def make(eps):
        return PrivateOnlineLDA(3, target_epsilon=eps, target_delta=1e-5, max_doc_length=50,
                                max_iter=1, total_samples=600)
    budget = BudgetAccountant(epsilon=3.0, delta=1e-5)
    X = demo.X
    with pytest.raises(BudgetExceededError):
        privacy_utility_curve(make, X[:600], X[600:], [1.0, 2.0, 4.0], budget=budget)
    assert len(budget.reports) == 2 and budget.spent <= 3.0
    table = privacy_utility_curve(make, X[:600], X[600:], [1.0], coherence="umass", top_n=5)
    assert table["perplexity"].iloc[0] > 1 and table["coherence"].iloc[0] <= 0


def test_plots(demo, tmp_path):
    pytest.importorskip("matplotlib", reason="matplotlib: the optional extra dptm[plot]")
    import matplotlib
    matplotlib.use("Agg")
    from dptm.plotting import plot_privacy_utility, plot_top_words
    model = GibbsLDA(5, max_iter=20, random_state=0).fit(demo.X)
    fig = plot_top_words(model, vocabulary=demo.vocabulary, n=4)
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert len(visible) == 5
    labels = [t.get_text() for t in visible[0].get_yticklabels()]
    assert labels == [demo.vocabulary[i] for i in np.argsort(-model.topic_word_[0],
                                                             kind="stable")[:4]]
    fig.savefig(tmp_path / "top.png")
    with pytest.raises(ValueError, match="vocabulary has 2 words"):
        plot_top_words(model, vocabulary=["a", "b"])
    table = {"epsilon": [4.0, 1.0], "perplexity": [150.0, 200.0], "perplexity_std": [1.0, 2.0],
             "coherence": [0.1, 0.0], "coherence_std": [0.0, 0.0],
             "nonprivate_perplexity": [100.0, 100.0], "nonprivate_coherence": [0.2, 0.2],
             "uniform_perplexity": [232.0, 232.0]}
    ax = plot_privacy_utility(table)
    line = ax.get_lines()[0]
    assert line.get_xdata().tolist() == [1.0, 4.0] and line.get_ydata().tolist() == [200.0, 150.0]
    assert any("uniform model (V = 232)" in t.get_text() for t in ax.get_legend().get_texts())
    with pytest.raises(ValueError, match="metric"):
        plot_privacy_utility(table, metric="auc")


# ------------------------------------------------------- local models' total epsilon (#18)
@pytest.mark.parametrize("neighbouring,bits", [("document", None), ("word", 1),
                                               ("word_replacement", 2)])
def test_local_target_epsilon_is_the_reported_total(demo, neighbouring, bits):
    from dptm import LocalDPLDA, OnlineLocalDPLDA
    from dptm.accounting import flip_from_epsilon
    from dptm.local import randomize_matrix
    from dptm.models.local import flip_for_target_epsilon
    X = demo.X
    V = X.shape[1]
    f = flip_for_target_epsilon(8.0, V, neighbouring)
    # closed form: each bit gets eps_w = 8 / (bits per neighbour)
    assert f == pytest.approx(flip_from_epsilon(8.0 / (bits or V)), rel=1e-12)
    noisy = randomize_matrix(X, f)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # a total of 8: no vacuous-guarantee warning
        m = LocalDPLDA(3, target_epsilon=8.0, neighbouring=neighbouring, max_iter=3).fit(noisy)
    assert m.flip_probability_ == f
    assert m.privacy_.epsilon(0.0) == pytest.approx(8.0, rel=1e-9)
    o = OnlineLocalDPLDA(3, target_epsilon=8.0, neighbouring=neighbouring, max_iter=2,
                         batch_size=400).fit(noisy)
    assert o.privacy_.epsilon(0.0) == pytest.approx(8.0, rel=1e-9)
    with pytest.raises(ValueError, match="set exactly one of"):
        LocalDPLDA(3, target_epsilon=8.0, epsilon=1.0).fit(noisy)


# ------------------------------------------------------------ one validation module (#18)
def test_metrics_validate_through_utils():
    from dptm import _utils, metrics
    phi = np.array([[0.5, 0.5], [0.2, 0.8]])
    with pytest.raises(TypeError, match="real numeric"):
        metrics.aligned_l1(phi, phi.astype(complex))
    with pytest.raises(TypeError, match="real numeric"):
        _utils.check_probability_matrix(phi.astype(complex), "P")
    with pytest.raises(ValueError, match="rows must sum to 1"):
        metrics.perplexity(np.ones((1, 2)), [[0.5, 0.6]], phi)
    # rows="any": non-negative weights (pseudo-counts) pass unchanged, zero rows included
    W = np.array([[3.0, 0.0], [0.0, 0.0]])
    assert _utils.check_probability_matrix(W, "W", rows="any") is not None
    np.testing.assert_array_equal(metrics._check_matrix(W, "W"), W)
    import inspect
    assert "check_probability_matrix" in inspect.getsource(metrics._check_matrix)


def test_every_matrix_model_records_feature_names(demo):
    """Private models whose fit does not go through scikit-learn's validation still learn
    the vocabulary from a DataFrame (set centrally before fit), and forget it on arrays."""
    import warnings

    from dptm import NoisyGibbsLDA, SubsampledGibbsLDA
    X = pd.DataFrame(demo.X.toarray(), columns=demo.vocabulary)
    for model in (NoisyGibbsLDA(3, clip=5, epsilon_per_iter=1.0, max_iter=3),
                  SubsampledGibbsLDA(3, clip=5, noise_multiplier=2.0, max_iter=3)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X)
            assert model.feature_names_in_.tolist() == list(demo.vocabulary)
            words = model.top_words(3)
            assert set(words.to_numpy().ravel()) <= set(demo.vocabulary)
            assert model.release().vocabulary == list(demo.vocabulary)
            model.fit(demo.X)
        assert not hasattr(model, "feature_names_in_")
