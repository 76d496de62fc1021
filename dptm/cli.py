"""The ``dptm`` command: train a (private) topic model and report topics, utility and
the privacy guarantee; audit a trainer with membership inference.

    dptm                       # GibbsLDA on the embedded demo corpus
    dptm fit --model hdp-lda --epsilon 1 --data docword.kos.txt.gz --vocab vocab.kos.txt
    dptm audit --model gibbs --shadows 16 --data texts.json -k 5
"""
import argparse
import sys
import time

import numpy as np

__all__ = ["main", "MODELS"]


def _gibbs(a):
    from .models.gibbs import GibbsLDA
    return GibbsLDA(n_components=a.topics, max_iter=a.iterations or 200, random_state=a.seed,
                    verbose=a.verbose)


def _hdp_lda(a, schedule="every", clip=50.0, beta=0.1):
    # HDP-LDA bounds the inherent privacy of sampling by clipping counts at C with a larger
    # beta (eps_I = 2 log(C / beta + 1)); CDP-LDA+ and Zhu et al. do not clip.
    from .models.private_gibbs import NoisyGibbsLDA
    return NoisyGibbsLDA(n_components=a.topics, epsilon_per_iter=a.epsilon,
                         clip=a.clip if a.clip is not None else clip,
                         mechanism=a.mechanism or "laplace", noise_schedule=schedule,
                         topic_word_prior=a.beta if a.beta is not None else beta,
                         max_iter=a.iterations or 100,
                         target_delta=a.delta, random_state=a.seed, verbose=a.verbose)


def _sub_lda(a):
    from .models.private_gibbs import SubsampledGibbsLDA
    return SubsampledGibbsLDA(n_components=a.topics, sample_rate=a.sample_rate,
                              noise_multiplier=a.noise_multiplier, clip=a.clip,
                              accounting=a.accounting or "sound", topic_word_prior=a.beta,
                              max_iter=a.iterations or 100, target_delta=a.delta,
                              random_state=a.seed, verbose=a.verbose)


def _vips(a):
    from .models.svi import PrivateOnlineLDA
    return PrivateOnlineLDA(n_components=a.topics, batch_size=a.batch_size,
                            max_iter=a.iterations or 10, max_doc_length=a.max_doc_length,
                            target_epsilon=a.epsilon, target_delta=a.delta,
                            accounting=a.accounting or "rdp", random_state=a.seed,
                            verbose=a.verbose)


def _lp_lda(a):
    from .models.local import LocalDPLDA
    return LocalDPLDA(n_components=a.topics, epsilon=a.epsilon, max_iter=a.iterations or 200,
                      random_state=a.seed, verbose=a.verbose)


def _olp_lda(a):
    from .models.local import OnlineLocalDPLDA
    return OnlineLocalDPLDA(n_components=a.topics, epsilon=a.epsilon, batch_size=a.batch_size,
                            max_iter=a.iterations or 50, random_state=a.seed, verbose=a.verbose)


def _topicdp(a):
    from .models.output import TopicDP
    inner = _gibbs(a)
    return TopicDP(inner, target_epsilon=a.epsilon, target_delta=a.delta, gamma=a.gamma,
                   n_jobs=a.jobs, random_state=a.seed, verbose=a.verbose)


def _fdptm(a):
    from .models.svi import PrivateOnlineLDA
    from .pipeline import FullyPrivateTopicModel
    from .vocab import DPVocabulary
    return FullyPrivateTopicModel(
        DPVocabulary(target_epsilon=a.vocab_epsilon, target_delta=a.delta,
                     max_contribution=a.max_doc_length),
        PrivateOnlineLDA(n_components=a.topics, batch_size=a.batch_size,
                         max_iter=a.iterations or 10, max_doc_length=a.max_doc_length,
                         target_epsilon=a.epsilon, target_delta=a.delta),
        random_state=a.seed, verbose=a.verbose)


# name -> (one-line description, builder(args) -> unfitted estimator). Each private
# model reads the privacy options it understands from ``args``.
MODELS = {
    "gibbs": ("non-private collapsed Gibbs sampling LDA", _gibbs),
    "hdp-lda": ("word-level DP: noisy clipped snapshots every sweep (Zhao et al. 2021)", _hdp_lda),
    "cdp-lda+": ("word-level DP: noisy snapshots every sweep, no clipping (Zhao et al. 2021 "
                 "baseline)", lambda a: _hdp_lda(a, "every", clip=None, beta=None)),
    "zhu-lda": ("word-level DP: noise in the last sweep only (Zhu et al. 2016 baseline)",
                lambda a: _hdp_lda(a, "last", clip=None, beta=None)),
    "sub-lda": ("word-level DP: Poisson-subsampled sweeps, Gaussian snapshots (Huang et al. 2022)",
                _sub_lda),
    "vips": ("document-level DP: private stochastic variational inference (Park et al. 2016)",
             _vips),
    "lp-lda": ("local DP: clients randomize word presence, server runs Gibbs (Zhao et al. 2021)",
               _lp_lda),
    "olp-lda": ("local DP, streaming: mini-batches denoised against a clean prior set "
                "(Zhao et al. 2021)", _olp_lda),
    "topicdp": ("user-level random DP: output perturbation of a GibbsLDA fit with sampled "
                "sensitivity (Wang et al. 2022)", _topicdp),
    "fdptm": ("document-level DP: DP vocabulary selection, then vips on the sanitized corpus "
              "(Manzonelli et al. 2024)", _fdptm),
}


def _fit_model(model, name, X_train, a):
    """Fit ``model``; local-DP models first simulate each client randomizing its document,
    fdptm reads the documents' tokens (it selects its own vocabulary)."""
    if name == "fdptm":
        return model.fit(a.documents[0])
    if name in ("lp-lda", "olp-lda"):
        from .local import randomize_matrix
        from .accounting import flip_from_epsilon
        f = flip_from_epsilon(a.epsilon)
        if name == "olp-lda":
            n_prior = max(1, int(a.prior_fraction * X_train.shape[0]))
            noisy = randomize_matrix(X_train[n_prior:], f, random_state=a.seed)
            return model.fit(noisy, X_prior=X_train[:n_prior])
        return model.fit(randomize_matrix(X_train, f, random_state=a.seed))
    return model.fit(X_train)


def load_corpus(a):
    """(X_train, X_test, vocabulary, name) from the command-line data options; for fdptm,
    which selects its own vocabulary, also sets ``a.documents`` (token lists, same split)."""
    from . import datasets, text
    from ._utils import check_random_state
    if a.data == "demo":
        demo = datasets.load_demo_corpus()
        X, vocab, name = demo.X, demo.vocabulary, "embedded demo corpus"
    elif a.vocab is not None:
        X, vocab = datasets.load_uci_bow(a.data, a.vocab)
        name = a.data
    else:
        docs = datasets.load_texts(a.data, key=a.text_key)
        if not docs:
            raise ValueError(f"{a.data}: no documents")
        X, vocab = text.tokens_to_matrix(text.preprocess(docs), min_df=a.min_df)
        name = a.data
    X = X.tocsr()
    rng = check_random_state(a.seed)
    order = rng.permutation(X.shape[0])
    n_test = int(round(a.test_fraction * X.shape[0]))
    if getattr(a, "model", None) == "fdptm":
        tokens = text.matrix_to_tokens(X, vocab)
        a.documents = ([tokens[i] for i in order[n_test:]], [tokens[i] for i in order[:n_test]])
    return X[order[n_test:]], (X[order[:n_test]] if n_test else None), np.asarray(vocab), name


def _perplexity(model, X):
    if hasattr(model, "perplexity"):
        return model.perplexity(X)
    from .metrics import perplexity
    keep = np.asarray(X.sum(axis=1)).ravel() > 0
    return perplexity(X[keep], model.transform(X[keep]), model.topic_word_)


def cmd_fit(a, out):
    from .metrics import top_words, umass_coherence
    X_train, X_test, vocab, name = load_corpus(a)
    model = MODELS[a.model][1](a)
    print(f"dptm: {a.model} ({MODELS[a.model][0]}), K={a.topics}, on {name}: "
          f"{X_train.shape[0]} training documents, {X_train.shape[1]} words, "
          f"{int(X_train.sum())} tokens", file=out)
    start = time.perf_counter()
    _fit_model(model, a.model, X_train, a)
    print(f"trained in {time.perf_counter() - start:.2f} s\n", file=out)
    if a.model == "fdptm":  # the released vocabulary is part of the output
        vocab = model.vocabulary_
        print(f"private vocabulary: {vocab.size} of {X_train.shape[1]} words released", file=out)
        X_train = model.sanitize(a.documents[0])
        X_test = model.sanitize(a.documents[1]) if X_test is not None else None
    top_n = min(a.top_words, X_train.shape[1])
    for k, words in enumerate(top_words(model.topic_word_, vocab, top_n)):
        print(f"topic {k:2d}: {' '.join(words)}", file=out)
    print(file=out)
    if X_test is not None and X_test.sum() > 0:
        print(f"held-out perplexity ({X_test.shape[0]} documents): "
              f"{_perplexity(getattr(model, 'model_', model), X_test):.2f}", file=out)
    print(f"UMass coherence (top {top_n} words, training corpus): "
          f"{umass_coherence(X_train, model.topic_word_, top_n=top_n):.3f}", file=out)
    privacy = getattr(model, "privacy_", None)
    print("\n" + (str(privacy) if privacy is not None else
                  "privacy: none (non-private model; use a private --model to publish)"), file=out)
    return model


AUDIT_TRAINERS = {
    "gibbs": lambda a: MODELS["gibbs"][1](a),
    "hdp-lda": lambda a: MODELS["hdp-lda"][1](a),
    "vips": lambda a: MODELS["vips"][1](a),
    "sklearn": lambda a: __import__("sklearn.decomposition", fromlist=["x"])
    .LatentDirichletAllocation(n_components=a.topics, random_state=a.seed),
}


def cmd_audit(a, out):
    """Membership-inference audit (LiRA) of a trainer on a corpus."""
    from .attacks import audit
    a.test_fraction = 0.0
    X, _, _, name = load_corpus(a)
    trainer = AUDIT_TRAINERS[a.model](a)
    print(f"dptm audit: {a.model} trainer, K={a.topics}, {a.shadows} shadow models on {name} "
          f"({X.shape[0]} documents)", file=out)
    result = audit(trainer, X, n_shadows=a.shadows, n_jobs=a.jobs, random_state=a.seed,
                   verbose=a.verbose)
    print(result.summary(), file=out)
    privacy = getattr(result.target, "privacy_", None)
    if privacy is not None:
        print("\n" + str(privacy), file=out)
    if a.save:
        result.lira.save(a.save)
        print(f"\nLiRA statistics saved to {a.save}", file=out)
    return result


# ---------------------------------------------------------------- range-checked flag types
# argparse turns the ArgumentTypeError into "argument --flag: <message>" and exit status 2.
def _int_type(minimum, maximum=None, extra=()):
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid integer {text!r}") from None
        if value in extra:
            return value
        if value < minimum or (maximum is not None and value > maximum):
            rng = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
            alt = "".join(f" or {e}" for e in extra)
            raise argparse.ArgumentTypeError(f"must be an integer {rng}{alt}, got {value}")
        return value
    return parse


def _float_type(low, high, low_open=True, high_open=True):
    def parse(text):
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid number {text!r}") from None
        lo_ok = value > low if low_open else value >= low
        hi_ok = value < high if high_open else value <= high
        if not (lo_ok and hi_ok) or value != value:
            lo = "(" if low_open else "["
            hi = ")" if high_open else "]"
            raise argparse.ArgumentTypeError(f"must be in {lo}{low:g}, {high:g}{hi}, got {text}")
        return value
    return parse


_POS_INT = _int_type(1)
_POS_FLOAT = _float_type(0.0, float("inf"))
_UNIT_OPEN = _float_type(0.0, 1.0)


def _even_shadows(text):
    value = _POS_INT(text)
    if value < 2 or value % 2:
        raise argparse.ArgumentTypeError(f"must be an even integer >= 2, got {value}")
    return value


def _add_data_options(p):
    p.add_argument("--data", default="demo",
                   help="'demo' (embedded corpus), a UCI docword file (with --vocab), or raw "
                        "text: .json (list of texts, {key: [...]} or list of records), .jsonl, "
                        ".csv/.tsv (with a header), else one document per line (.gz allowed)")
    p.add_argument("--vocab", default=None, help="UCI vocab file for a docword --data")
    p.add_argument("--text-key", default="text",
                   help="field of JSON/JSONL records, or CSV column, holding the text")
    p.add_argument("--min-df", type=_POS_INT, default=1,
                   help="drop words in fewer documents (raw text)")
    p.add_argument("-k", "--topics", type=_POS_INT, default=8)
    p.add_argument("--iterations", type=_POS_INT, default=None,
                   help="sweeps (Gibbs models) or epochs (vips); default per model")
    p.add_argument("--seed", type=_int_type(0), default=2)
    p.add_argument("-v", "--verbose", action="count", default=0)


def _add_privacy_options(p):
    priv = p.add_argument_group("privacy (private models)")
    priv.add_argument("--epsilon", type=_POS_FLOAT, default=1.0,
                      help="hdp-lda/zhu-lda: Laplace epsilon per sweep; vips: target total "
                           "epsilon; lp-lda/olp-lda: local epsilon per word")
    priv.add_argument("--delta", type=_UNIT_OPEN, default=1e-5)
    priv.add_argument("--clip", type=_POS_FLOAT, default=None,
                      help="count clip C (Gibbs models; hdp-lda default 50)")
    priv.add_argument("--beta", type=_POS_FLOAT, default=None,
                      help="topic-word prior (Gibbs models; hdp-lda default 0.1, others 1/K)")
    priv.add_argument("--mechanism", default=None,
                      choices=["laplace", "gaussian", "discrete_laplace", "discrete_gaussian"])
    priv.add_argument("--noise-multiplier", type=_POS_FLOAT, default=1.0, help="sub-lda Gaussian noise")
    priv.add_argument("--sample-rate", type=_float_type(0.0, 1.0, high_open=False), default=0.5, help="sub-lda gamma")
    priv.add_argument("--accounting", default=None,
                      help="sub-lda: sound|paper; vips: rdp|zcdp-paper|advanced|linear")
    priv.add_argument("--batch-size", type=_POS_INT, default=64, help="vips / olp-lda mini-batch size")
    priv.add_argument("--max-doc-length", type=_POS_INT, default=100,
                      help="vips: documents capped at this many tokens (sensitivity)")
    priv.add_argument("--prior-fraction", type=_UNIT_OPEN, default=0.2,
                      help="olp-lda: share of training documents used as the clean prior set")
    priv.add_argument("--gamma", type=_UNIT_OPEN, default=0.1,
                      help="topicdp: failure probability of the sampled sensitivity (random DP)")
    priv.add_argument("--vocab-epsilon", type=_POS_FLOAT, default=1.0,
                      help="fdptm: epsilon of the DP vocabulary selection (eps1; --epsilon is eps2)")


def build_parser():
    parser = argparse.ArgumentParser(prog="dptm", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command")
    fit = sub.add_parser("fit", help="train a topic model and report it (the default command)")
    fit.add_argument("--model", choices=sorted(MODELS), default="gibbs")
    _add_data_options(fit)
    fit.add_argument("--test-fraction", type=_float_type(0.0, 1.0, low_open=False), default=0.1,
                     help="held-out share of documents for perplexity")
    fit.add_argument("--top-words", type=_POS_INT, default=10)
    fit.add_argument("--jobs", type=_int_type(1, extra=(-1,)), default=None,
                     help="parallel model fits (topicdp); -1 = all cores")
    _add_privacy_options(fit)
    aud = sub.add_parser("audit", help="membership-inference audit (online/offline LiRA)")
    aud.add_argument("--model", choices=sorted(AUDIT_TRAINERS), default="gibbs",
                     help="trainer of the target and shadow models")
    _add_data_options(aud)
    aud.add_argument("--shadows", type=_even_shadows, default=16,
                     help="number of shadow models (even)")
    aud.add_argument("--jobs", type=_int_type(1, extra=(-1,)), default=None,
                     help="parallel shadow fits (joblib); -1 = all cores")
    aud.add_argument("--save", default=None, help="save the LiRA statistics to this .npz file")
    _add_privacy_options(aud)
    return parser


def main(argv=None, out=None):
    """Entry point of the ``dptm`` console script; returns the process exit code."""
    out = out or sys.stdout
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0].startswith("-") and argv[0] not in ("-h", "--help"):
        argv = ["fit"] + argv
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help (0) or a flag out of range (2, message on stderr)
        return exc.code if isinstance(exc.code, int) else 2
    try:
        if args.command == "fit":
            cmd_fit(args, out)
        elif args.command == "audit":
            cmd_audit(args, out)
    except (ValueError, TypeError, OSError, EOFError, MemoryError) as exc:
        # bad data or files: one line naming the file (loaders put it in the message), no
        # traceback
        msg = str(exc) or type(exc).__name__
        if isinstance(exc, OSError) and getattr(exc, "filename", None) and str(exc.filename) not in msg:
            msg = f"{exc.filename}: {msg}"
        print(f"dptm: error: {msg}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
