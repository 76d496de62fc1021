"""The ``dptm`` command: train a (private) topic model and report topics, utility and
the privacy guarantee; audit a trainer with membership inference.

    dptm                       # GibbsLDA on the embedded demo corpus
    dptm fit --model hdp-lda --epsilon 1 --data docword.kos.txt.gz --vocab vocab.kos.txt
    dptm audit --model gibbs --shadows 16
"""
import argparse
import sys
import time

import numpy as np

__all__ = ["main", "MODELS"]


def _gibbs(a):
    from .models.gibbs import GibbsLDA
    return GibbsLDA(n_components=a.topics, max_iter=a.iterations, random_state=a.seed,
                    verbose=a.verbose)


# name -> (one-line description, builder(args) -> unfitted estimator). Each private
# model reads the privacy options it understands from ``args``.
MODELS = {
    "gibbs": ("non-private collapsed Gibbs sampling LDA", _gibbs),
}


def load_corpus(a):
    """(X_train, X_test, vocabulary, name) from the command-line data options."""
    from . import datasets, text
    from ._utils import check_random_state
    if a.data == "demo":
        demo = datasets.load_demo_corpus()
        X, vocab, name = demo.X, demo.vocabulary, "embedded demo corpus"
    elif a.vocab is not None:
        X, vocab = datasets.load_uci_bow(a.data, a.vocab)
        name = a.data
    else:
        if a.data.endswith(".json"):
            docs = datasets.load_json_texts(a.data)
        else:
            docs = datasets.load_text_lines(a.data)
        X, vocab = text.tokens_to_matrix(text.preprocess(docs), min_df=a.min_df)
        name = a.data
    X = X.tocsr()
    rng = check_random_state(a.seed)
    order = rng.permutation(X.shape[0])
    n_test = int(round(a.test_fraction * X.shape[0]))
    return X[order[n_test:]], (X[order[:n_test]] if n_test else None), np.asarray(vocab), name


def cmd_fit(a, out):
    from .metrics import top_words, umass_coherence
    X_train, X_test, vocab, name = load_corpus(a)
    model = MODELS[a.model][1](a)
    print(f"dptm: {a.model} ({MODELS[a.model][0]}), K={a.topics}, on {name}: "
          f"{X_train.shape[0]} training documents, {X_train.shape[1]} words, "
          f"{int(X_train.sum())} tokens", file=out)
    start = time.perf_counter()
    model.fit(X_train)
    print(f"trained in {time.perf_counter() - start:.2f} s\n", file=out)
    for k, words in enumerate(top_words(model.topic_word_, vocab, a.top_words)):
        print(f"topic {k:2d}: {' '.join(words)}", file=out)
    print(file=out)
    if X_test is not None and X_test.sum() > 0:
        print(f"held-out perplexity ({X_test.shape[0]} documents): "
              f"{model.perplexity(X_test):.2f}", file=out)
    print(f"UMass coherence (top {a.top_words} words, training corpus): "
          f"{umass_coherence(X_train, model.topic_word_, top_n=a.top_words):.3f}", file=out)
    privacy = getattr(model, "privacy_", None)
    print("\n" + (str(privacy) if privacy is not None else
                  "privacy: none (non-private model; use a private --model to publish)"), file=out)
    return model


def build_parser():
    parser = argparse.ArgumentParser(prog="dptm", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command")
    fit = sub.add_parser("fit", help="train a topic model and report it (the default command)")
    fit.add_argument("--model", choices=sorted(MODELS), default="gibbs")
    fit.add_argument("--data", default="demo",
                     help="'demo' (embedded corpus), a UCI docword file (with --vocab), "
                          "a JSON list of texts, or a text file with one document per line")
    fit.add_argument("--vocab", default=None, help="UCI vocab file for a docword --data")
    fit.add_argument("--min-df", type=int, default=1, help="drop words in fewer documents (raw text)")
    fit.add_argument("-k", "--topics", type=int, default=8)
    fit.add_argument("--iterations", type=int, default=200)
    fit.add_argument("--test-fraction", type=float, default=0.1,
                     help="held-out share of documents for perplexity")
    fit.add_argument("--top-words", type=int, default=10)
    fit.add_argument("--seed", type=int, default=0)
    fit.add_argument("-v", "--verbose", action="count", default=0)
    return parser


def main(argv=None, out=None):
    """Entry point of the ``dptm`` console script; returns the process exit code."""
    out = out or sys.stdout
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0].startswith("-") and argv[0] not in ("-h", "--help"):
        argv = ["fit"] + argv
    args = build_parser().parse_args(argv)
    try:
        if args.command == "fit":
            cmd_fit(args, out)
    except (ValueError, TypeError, FileNotFoundError) as exc:
        print(f"dptm: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
