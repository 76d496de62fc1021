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
