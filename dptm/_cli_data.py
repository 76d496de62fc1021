"""The data side of the ``dptm`` command: reading a corpus from its options, keeping a
private model's training set every document it is given, the public evaluation data, and
the split of a total epsilon between a DP vocabulary and the model."""
import numpy as np

__all__ = ["load_corpus", "budget_split"]

# The non-private model is reproducible by default (it protects nothing a seed could expose).
DEFAULT_NONPRIVATE_SEED = 2
LOCAL = ("lp-lda", "olp-lda")
# Word-level proofs: a DP vocabulary in front turns a word replacement into a deletion, which
# their accounting does not cover; on raw text they need a public vocabulary.
WORD_LEVEL = ("hdp-lda", "cdp-lda+", "zhu-lda", "sub-lda")
RECOMMENDED = "batch-vb"
NON_PRIVATE = ("gibbs",)


def _is_private(name):
    return name not in NON_PRIVATE


def _read_word_list(path):
    from .datasets import load_text_lines
    words = [w.strip() for w in load_text_lines(path) if w.strip()]
    if not words:
        raise ValueError(f"{path}: the public vocabulary file has no words")
    if len(set(words)) != len(words):
        raise ValueError(f"{path}: the public vocabulary file repeats words")
    return words


def _public_split(X, a):
    """(train rows, held-out rows) of PUBLIC or non-private data: a fixed-seed split."""
    from ._utils import check_random_state
    fraction = 0.1 if a.test_fraction is None else a.test_fraction
    order = check_random_state(a.seed if a.seed is not None
                               else DEFAULT_NONPRIVATE_SEED).permutation(X.shape[0])
    n_test = int(round(fraction * X.shape[0]))
    return order[n_test:], order[:n_test]


def load_corpus(a, audit=False):
    """The data of a run, from the command-line data options, as a Bunch with
    ``X_train`` (None when a DP vocabulary is to be selected), ``documents`` (the token
    lists the DP vocabulary stage reads, else None), ``X_eval`` / ``eval_tokens`` (PUBLIC
    held-out data, or None), ``eval_where``, ``X_prior`` (olp-lda's public prior set),
    ``vocab``, ``name``, ``provenance`` and ``public`` (the training data is public: the
    demo corpus).

    A private model trains on every document of private data, in the order given: the
    training sets of D and D plus one document are add/remove neighbours. Nothing is held
    out of private data (a metric of held-out private documents would be a release no
    guarantee covers); evaluation uses public data only: the embedded demo corpus' fixed
    held-out split, or ``--reference-data``. The vocabulary of a private model must not
    come from the private text: the demo corpus and a UCI vocab file are public
    vocabularies; on raw text a private model uses ``--vocabulary FILE`` (declared public)
    or a DP vocabulary. An audit (``audit=True``) simulates an experiment on data the
    auditor holds: every document, the vocabulary built from the text. A non-private model
    holds out ``--test-fraction`` (fixed seed)."""
    from sklearn.utils import Bunch
    from . import datasets, text
    private = _is_private(a.model) and not audit
    out = Bunch(X_train=None, documents=None, X_eval=None, eval_tokens=None, eval_where=None,
                X_prior=None, vocab=None, name=None, provenance=None, public=a.data == "demo")
    a.documents = a.reference_X = a.reference_tokens = None
    public_vocab = getattr(a, "public_vocab", None)
    tokens = None
    if a.data == "demo":
        demo = datasets.load_demo_corpus()
        X, vocab, name = demo.X, demo.vocabulary, "embedded demo corpus (public)"
        out.provenance = "public (the embedded demo corpus' fixed vocabulary)"
    elif a.vocab is not None:
        X, vocab = datasets.load_uci_bow(a.data, a.vocab)
        name = a.data
        out.provenance = f"public (given: {a.vocab})"
    else:
        docs = datasets.load_texts(a.data, key=a.text_key, one_per_line=a.one_per_line)
        if not docs:
            raise ValueError(f"{a.data}: no documents")
        if private and a.min_df != 1:
            raise ValueError("--min-df chooses words by their counts in the private text, which "
                             "no guarantee covers; a private model uses a DP vocabulary or a "
                             "public --vocabulary FILE")
        tokens = text.preprocess(docs)
        name = a.data
        if public_vocab is not None:
            X, vocab = text.tokens_to_matrix(tokens, vocabulary=_read_word_list(public_vocab))
            out.provenance = f"public (given: {public_vocab})"
            tokens = None
        elif not private:
            X, vocab = text.tokens_to_matrix(tokens, min_df=a.min_df)
            tokens = None
        elif a.model in LOCAL:
            raise ValueError(f"--model {a.model} is local DP: the clients need a public "
                             "vocabulary; pass --vocabulary FILE (one public word per line)")
        elif a.model in WORD_LEVEL:
            raise ValueError(
                f"--model {a.model} is word-level DP: its proof does not cover a vocabulary "
                "selected from the same text (a replaced word can become a deleted one); pass "
                f"a public --vocabulary FILE, or use the recommended --model {RECOMMENDED}")
        else:
            X, vocab = None, None                   # the DP vocabulary stage selects the words
    if a.model == "fdptm" and private and tokens is None:
        tokens = text.matrix_to_tokens(X, vocab)    # fdptm selects its own words
        out.provenance = None
    out.name = name

    if private and not out.public:
        # every document, in the order given; evaluation needs public data
        if a.test_fraction:
            raise ValueError("--test-fraction: a private model trains on every document of "
                             "private data (a metric of held-out private documents is not "
                             "covered by the guarantee); evaluate on public text with "
                             "--reference-data FILE")
        out.X_train = X
        out.documents = tokens
    elif audit:
        out.X_train = X
    else:
        train, test = _public_split(X if X is not None else np.zeros((len(tokens), 0)), a)
        if tokens is not None:
            out.documents = [tokens[i] for i in train]
            out.eval_tokens = [tokens[i] for i in test] if len(test) else None
        if X is not None:
            X = X.tocsr()
            out.X_train = X[train]
            out.X_eval = X[test] if len(test) else None
        if out.public:
            out.eval_where = "the demo corpus' held-out split (public)"
        if private and a.model == "olp-lda":
            n_prior = max(1, int(a.prior_fraction * out.X_train.shape[0]))
            out.X_prior, out.X_train = out.X_train[:n_prior], out.X_train[n_prior:]
    if out.X_train is not None:
        out.X_train = out.X_train.tocsr()

    if getattr(a, "reference_data", None) is not None:
        # a PUBLIC corpus: TopicDP samples its sensitivity on it, olp-lda's prior set, and
        # the evaluation of a private model on private data
        if a.vocab is not None:
            a.reference_X, _ = datasets.load_uci_bow(a.reference_data, a.vocab)
        else:
            ref_tokens = text.preprocess(datasets.load_texts(
                a.reference_data, key=a.text_key, one_per_line=a.one_per_line))
            if vocab is None or a.model == "fdptm":
                a.reference_tokens = ref_tokens
            else:
                a.reference_X, _ = text.tokens_to_matrix(ref_tokens, vocabulary=list(vocab))
        if private and not out.public:
            out.X_eval, out.eval_tokens = a.reference_X, a.reference_tokens
            out.eval_where = f"{a.reference_data} (declared public)"
    if private and a.model in ("vips", "fdptm") and getattr(a, "total_samples", None) is None:
        if not out.public:
            raise ValueError(
                f"--model {a.model} samples minibatches at rate S / N: give --total-samples N, "
                "a public number of documents (a bound or an estimate made without the private "
                "data); the number of private documents is not public under add/remove "
                f"adjacency (or use the recommended --model {RECOMMENDED})")
        a.total_samples = out.X_train.shape[0]      # the public demo corpus' training split
    if private and not out.public and a.model == "olp-lda":
        if a.reference_X is None:
            raise ValueError("--model olp-lda needs a clean prior set of PUBLIC documents: "
                             "pass --reference-data FILE (the clients' private documents are "
                             "all randomized)")
        out.X_prior = a.reference_X
    out.vocab = None if vocab is None else np.asarray(vocab)
    a.documents = out.documents
    return out


def budget_split(a):
    """(vocabulary epsilon, vocabulary delta, model epsilon, model delta) of a raw-text run:
    public constants only. ``--vocab-epsilon`` fixes the vocabulary's share, else it is
    ``--vocab-share`` of the total ``--epsilon``; delta is halved between the stages."""
    eps_v = a.vocab_epsilon if a.vocab_epsilon is not None else a.vocab_share * a.epsilon
    if not eps_v < a.epsilon:
        raise ValueError(f"--vocab-epsilon {eps_v:g} must be below the total --epsilon "
                         f"{a.epsilon:g} (the model needs the rest)")
    return eps_v, a.delta / 2.0, a.epsilon - eps_v, a.delta / 2.0


def _matrix_over(release, X, tokens):
    """Public evaluation documents over the release's vocabulary, empty ones dropped."""
    from .text import tokens_to_matrix
    if tokens is not None:
        X, _ = tokens_to_matrix(tokens, vocabulary=list(release.vocabulary))
    if X is None:
        return None
    X = X.tocsr()
    X = X[np.asarray(X.sum(axis=1)).ravel() > 0]
    return X if X.shape[0] else None
