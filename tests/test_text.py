import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, CountVectorizer

from dptm import text
from dptm.text import (MissingNLTKDataError, TextPreprocessor, get_stop_words, matrix_to_tokens,
                       preprocess, tokens_to_matrix)


def _has_wordnet():
    try:
        text._wordnet_lemmatizer()
        return True
    except MissingNLTKDataError:
        return False


def test_preprocess_pipeline_steps():
    docs = ["The Doctors' 3 clinics, in 2024! e-mail", "Don't stop-loss; x2y", ""]
    out = preprocess(docs, stop_words="sklearn")
    # non-letters split tokens; lower-cased; stop words ('the', 'in') and short tokens dropped
    assert out == [["doctors", "clinics", "mail"], ["don", "stop", "loss"], []]


def test_length_bounds_are_inclusive():
    words = ["ab", "abc", "a" * 15, "b" * 16]
    assert preprocess([" ".join(words)], stop_words=None) == [["abc", "a" * 15]]
    assert preprocess(["ab abc abcd"], stop_words=None, min_length=2, max_length=3) == [
        ["ab", "abc"]]


def test_stop_word_options():
    assert get_stop_words("sklearn") == frozenset(ENGLISH_STOP_WORDS)
    assert get_stop_words(None) == frozenset() == get_stop_words(False)
    assert get_stop_words(["Apple", "pear"]) == {"apple", "pear"}
    english = get_stop_words("english")
    assert {"the", "and", "with"} <= english
    assert preprocess(["apple pear plum"], stop_words=["PEAR"]) == [["apple", "plum"]]
    with pytest.raises(ValueError, match="stop_words"):
        get_stop_words("french")
    with pytest.raises(TypeError, match="stop_words"):
        get_stop_words(3)


@pytest.fixture
def fake_nltk_stopwords(tmp_path, monkeypatch):
    """An nltk data folder holding a (tiny) English stop-word list, first on nltk's path."""
    import nltk
    folder = tmp_path / "corpora" / "stopwords"
    folder.mkdir(parents=True)
    (folder / "english").write_text("the\nand\nzyzzyva\n")
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)] + list(nltk.data.path))
    return frozenset({"the", "and", "zyzzyva"})


@pytest.fixture
def no_nltk_data(tmp_path, monkeypatch):
    import nltk
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])


def test_nltk_stop_words_are_used_when_installed(fake_nltk_stopwords):
    assert get_stop_words("nltk") == fake_nltk_stopwords == get_stop_words("english")
    assert preprocess(["zyzzyva and the clinic"]) == [["clinic"]]


def test_nltk_stop_words_missing_gives_clear_error(no_nltk_data):
    with pytest.raises(MissingNLTKDataError, match="nltk.downloader stopwords"):
        get_stop_words("nltk")
    # "english" falls back to scikit-learn's list rather than failing
    assert get_stop_words("english") == frozenset(ENGLISH_STOP_WORDS)


class _FakeLemmatizer:
    def lemmatize(self, word, pos="n"):
        return word[:-1] if word.endswith("s") else word


def test_lemmatize_uses_the_lemmatizer(monkeypatch):
    monkeypatch.setattr(text, "_wordnet_lemmatizer", lambda: _FakeLemmatizer())
    assert preprocess(["clinics doctors"], lemmatize=True) == [["clinic", "doctor"]]


def test_lemmatize_without_wordnet_names_the_fix(no_nltk_data):
    with pytest.raises(LookupError, match=r"python -m nltk\.downloader wordnet"):
        preprocess(["clinics doctors"], lemmatize=True)


def test_default_does_not_need_nltk_data():
    # the default must run on a fresh machine: no WordNet needed
    assert preprocess(["Running doctors"]) == [["running", "doctors"]]


def test_bad_arguments():
    with pytest.raises(TypeError, match="single string"):
        preprocess("a document")
    with pytest.raises(TypeError, match="str"):
        preprocess([3])
    with pytest.raises(ValueError, match="max_length"):
        preprocess(["abc"], min_length=5, max_length=4)
    with pytest.raises(ValueError, match="min_length"):
        preprocess(["abc"], min_length=0)
    with pytest.raises(TypeError, match="lemmatize"):
        preprocess(["abc"], lemmatize="yes")


def test_text_preprocessor_in_count_vectorizer_and_pickle():
    docs = ["Patients visit the hospital.", "The hospital hires nurses; nurses care!"]
    analyzer = TextPreprocessor(stop_words="sklearn")
    analyzer(docs[0])  # build the lazy state before pickling
    clone = pickle.loads(pickle.dumps(analyzer))
    assert clone(docs[1]) == analyzer(docs[1]) == ["hospital", "hires", "nurses", "nurses", "care"]
    vec = CountVectorizer(analyzer=clone)
    X = vec.fit_transform(docs)
    X2, vocab = tokens_to_matrix(preprocess(docs, stop_words="sklearn"))
    np.testing.assert_array_equal(vec.get_feature_names_out(), vocab)
    np.testing.assert_array_equal(X.toarray(), X2.toarray())
    assert "TextPreprocessor(" in repr(analyzer)


def test_tokens_to_matrix_counts_and_vocabulary():
    X, vocab = tokens_to_matrix([["b", "a", "b"], [], ["c", "a"]])
    assert vocab.tolist() == ["a", "b", "c"]
    assert X.dtype == np.int64 and X.format == "csr" and X.has_sorted_indices
    np.testing.assert_array_equal(X.toarray(), [[1, 2, 0], [0, 0, 0], [1, 0, 1]])
    X, vocab = tokens_to_matrix([["b", "a", "b"], ["c", "a"]], min_df=2)
    assert vocab.tolist() == ["a"]
    np.testing.assert_array_equal(X.toarray(), [[1], [1]])


def test_tokens_to_matrix_given_vocabulary_drops_oov():
    X, vocab = tokens_to_matrix([["x", "a", "zz", "a"]], vocabulary=["zz", "a", "q"])
    assert vocab.tolist() == ["zz", "a", "q"]
    np.testing.assert_array_equal(X.toarray(), [[1, 2, 0]])


def test_tokens_to_matrix_errors():
    with pytest.raises(ValueError, match="empty vocabulary"):
        tokens_to_matrix([["a"], ["b"]], min_df=2)
    with pytest.raises(ValueError, match="duplicate"):
        tokens_to_matrix([["a"]], vocabulary=["a", "a"])
    with pytest.raises(ValueError, match="0 documents"):
        tokens_to_matrix([])
    with pytest.raises(TypeError, match="list of tokens"):
        tokens_to_matrix(["not tokenized"])
    with pytest.raises(ValueError, match="min_df"):
        tokens_to_matrix([["a"]], min_df=0)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["apple", "pear", "plum", "fig", "kiwi"]), max_size=8),
                min_size=1, max_size=6).filter(lambda docs: any(docs)))
def test_round_trip_tokens_matrix(docs):
    X, vocab = tokens_to_matrix(docs)
    back = matrix_to_tokens(X, vocab)
    assert [sorted(d) for d in back] == [sorted(d) for d in docs]
    X2, _ = tokens_to_matrix(back, vocabulary=vocab)
    assert (X2 != X).nnz == 0


def test_matrix_to_tokens_checks_vocabulary():
    with pytest.raises(ValueError, match="one word per column"):
        matrix_to_tokens(np.array([[1, 2]]), ["a"])
    with pytest.raises(ValueError, match="negative"):
        matrix_to_tokens(np.array([[1, -2]]), ["a", "b"])


def test_tweetrumors_is_already_clean(tweetrumors):
    # the published corpus is already pre-processed; our pipeline (without lemmatization)
    # must keep nearly every token (it only drops our stop list's extra words)
    sample = tweetrumors[:500]
    tokens = [t for doc in sample for t in doc.split()]
    kept = [t for doc in preprocess(sample) for t in doc]
    assert 0.9 * len(tokens) <= len(kept) <= len(tokens)
    X, vocab = tokens_to_matrix([d.split() for d in tweetrumors])
    assert X.shape == (5698, 5942) and X.sum() == 50408  # SOURCE.md / paper Table 4


def test_reuters_preprocessing(reuters_c50):
    texts, _ = reuters_c50
    toks = preprocess(texts[:50])
    flat = [t for d in toks for t in d]
    assert flat and all(t.isalpha() and t.islower() and 3 <= len(t) <= 15 for t in flat)
    assert not set(flat) & get_stop_words("english")


def test_lemmatization_step_with_stub_lemmatizer(monkeypatch):
    # exercises the lemmatize branch on machines without WordNet: lemmas are re-checked
    # against the stop list and the length bounds
    class Stub:
        def lemmatize(self, word):
            return {"clinics": "clinic", "hers": "her", "cats": "ca"}.get(word, word)

    monkeypatch.setattr(text, "_wordnet_lemmatizer", lambda: Stub())
    out = preprocess(["clinics hers cats dogs"], lemmatize=True, stop_words=["her"])
    assert out == [["clinic", "dogs"]]
