"""The ``dptm`` command: train a (private) topic model and report topics, utility and
the privacy guarantee; audit a trainer with membership inference.

    dptm                       # the recommended private model on the embedded demo corpus
    dptm fit --data texts/ --epsilon 4 -k 10 --save my_release     # a folder of raw texts
    dptm fit --data texts.jsonl --text-key body --epsilon 4 --save my_release
    dptm fit --data notes.jsonl --group-key patient --epsilon 4    # every user protected
    dptm fit --model vips --epsilons 0.5,1,2,4,8 --plot curve.png   # privacy-utility curve
    dptm fit --non-private --data texts/ -k 10                       # GibbsLDA, NOT private
    dptm audit --model batch-vb --shadows 16 --data texts.jsonl -k 5 --plot roc.png

``--epsilon`` is always the total epsilon of the release (at ``--delta``). On raw text
without a public ``--vocabulary`` a share of it buys a DP vocabulary and the rest the model;
both shares and the composed total are printed. ``--group-key FIELD`` (JSONL / CSV) names
the field holding each document's user id: the vocabulary and the model are then
user-level (add or remove one user with all their documents). For the local models
lp-lda/olp-lda it is the total per document (pure local DP; ``--epsilon-per-word`` sets the
per-bit level instead). A private model trains on every document it is given (no held-out
part of private data), is never seeded unless ``--seed`` is given (a labelled test mode),
and prints its topics and its privacy report, never a metric of the private data nor a
timing; utility is measured on public data only (the demo corpus' held-out split or
``--reference-data``). A non-private model needs ``--non-private`` and its output says NOT
PRIVATE. ``--save DIR`` writes the release to a new or empty DIR outside ``--data``
(``--overwrite`` for a non-empty one; not with ``--epsilons``). ``-v`` logs progress on
stderr.
"""
import argparse
import json
import math
import sys
import time
import warnings

import numpy as np

from . import __version__

__all__ = ["main", "MODELS", "load_corpus", "budget_split"]


from ._cli_data import (DEFAULT_NONPRIVATE_SEED, LOCAL, NON_PRIVATE, RECOMMENDED,  # noqa: F401
                        WORD_LEVEL, _encoding_type, _is_private, _matrix_over, budget_split,
                        check_save_target, load_corpus)
from . import _cli_report as report
from ._cli_parser import Parser as _Parser, error_line as _error_line
from ._cli_terms import explain_unreachable, report_to_cli, to_cli
from ._cli_public import add_public_text_option, prepare_public_text, public_topics


def _gibbs(a, seed=DEFAULT_NONPRIVATE_SEED):
    from .models.gibbs import GibbsLDA
    return GibbsLDA(n_components=a.topics, max_iter=a.iterations or 200,
                    random_state=a.seed if a.seed is not None else seed, verbose=a.verbose)


def _hdp_lda(a, schedule="every", clip=50.0, beta=0.1):
    # HDP-LDA bounds the inherent privacy of sampling by clipping counts at C with a larger
    # beta (eps_I = 2 log(C / beta + 1)); CDP-LDA+ and Zhu et al. do not clip.
    from .models.private_gibbs import NoisyGibbsLDA
    kw = {"mechanism": a.mechanism} if a.mechanism else {}
    budget = ({"epsilon_per_iter": a.epsilon_per_iter} if a.epsilon_per_iter is not None
              else {"target_epsilon": a.epsilon})
    return NoisyGibbsLDA(n_components=a.topics, **budget,
                         clip=a.clip if a.clip is not None else clip,
                         noise_schedule=schedule,
                         topic_word_prior=a.beta if a.beta is not None else beta,
                         max_iter=a.iterations or 100,
                         target_delta=a.delta, random_state=a.seed, verbose=a.verbose, **kw)


def _sub_lda(a):
    from .models.private_gibbs import SubsampledGibbsLDA
    budget = ({"noise_multiplier": a.noise_multiplier} if a.noise_multiplier is not None
              else {"target_epsilon": a.epsilon})
    return SubsampledGibbsLDA(n_components=a.topics, sample_rate=a.sample_rate, **budget,
                              clip=a.clip if a.clip is not None else 50.0,
                              accounting=a.accounting or "sound", topic_word_prior=a.beta,
                              max_iter=a.iterations or 100, target_delta=a.delta,
                              random_state=a.seed, verbose=a.verbose)


def _vips(a):
    from .models.svi import PrivateOnlineLDA
    return PrivateOnlineLDA(n_components=a.topics, batch_size=a.batch_size,
                            max_iter=a.iterations or 10, max_doc_length=a.max_doc_length,
                            total_samples=getattr(a, "total_samples", None),
                            target_epsilon=a.epsilon, target_delta=a.delta,
                            accounting=a.accounting or "rdp", random_state=a.seed,
                            verbose=a.verbose)


def _batch_vb(a):
    from .models.private_vb import PrivateBatchLDA
    return PrivateBatchLDA(n_components=a.topics, target_epsilon=a.epsilon,
                           target_delta=a.delta, n_jobs=a.jobs, random_state=a.seed,
                           word_counts=getattr(a, "word_counts", None),
                           init_topics=public_topics(a), verbose=a.verbose)


def _local_budget(a):
    # --epsilon: the total per document (the estimators' target_epsilon, "document"
    # neighbours); --epsilon-per-word: the clients' per-bit level
    if getattr(a, "epsilon_per_word", None) is not None:
        return {"epsilon": a.epsilon_per_word}
    return {"target_epsilon": a.epsilon}


def _lp_lda(a):
    from .models.local import LocalDPLDA
    return LocalDPLDA(n_components=a.topics, **_local_budget(a), max_iter=a.iterations or 200,
                      random_state=a.seed, verbose=a.verbose)


def _olp_lda(a):
    from .models.local import OnlineLocalDPLDA
    return OnlineLocalDPLDA(n_components=a.topics, **_local_budget(a), batch_size=a.batch_size,
                            max_iter=a.iterations or 50, random_state=a.seed, verbose=a.verbose)


def _topicdp(a):
    from .models.topicdp import TopicDP
    inner = _gibbs(a, seed=None)
    inner.set_params(verbose=0)
    return TopicDP(inner, target_epsilon=a.epsilon, target_delta=a.delta, gamma=a.gamma,
                   sensitivity=a.sensitivity, reference_X=getattr(a, "reference_X", None),
                   n_jobs=a.jobs, random_state=a.seed, verbose=a.verbose)


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
    "batch-vb": ("document-level DP: private batch VB on every document (recommended)",
                 _batch_vb),
    "vips": ("document-level DP: private stochastic variational inference (Park et al. 2016)",
             _vips),
    "lp-lda": ("local DP: clients randomize word presence, server runs Gibbs (Zhao et al. 2021)",
               _lp_lda),
    "olp-lda": ("local DP, streaming: mini-batches denoised against a clean prior set "
                "(Zhao et al. 2021)", _olp_lda),
    "topicdp": ("random DP, each document its own user: output perturbation of a GibbsLDA "
                "fit with sampled sensitivity (Wang et al. 2022)", _topicdp),
    "fdptm": ("document-level DP: DP vocabulary selection, then vips on the sanitized corpus "
              "(Manzonelli et al. 2024)", _vips),
}


def _fit_model(model, name, X_train, a, X_prior=None):
    """Fit ``model``; local-DP models first simulate each client randomizing its document
    (a fresh secret generator per client unless --seed); the vocabulary pipelines read the
    documents' tokens; with --group-key every document's user id goes along (user level).
    olp-lda's clean prior set ``X_prior`` is public data."""
    groups = getattr(a, "groups", None)
    if getattr(a, "documents", None) is not None:
        return model.fit(a.documents) if groups is None else model.fit(a.documents,
                                                                       groups=groups)
    if groups is not None:
        return model.fit(X_train, groups=groups)
    if name in LOCAL:
        from .noise.local_randomizers import randomize_matrix
        from .accounting import flip_from_epsilon
        from .models.local import flip_for_target_epsilon
        f = (flip_from_epsilon(a.epsilon_per_word) if a.epsilon_per_word is not None
             else flip_for_target_epsilon(a.epsilon, X_train.shape[1]))
        if name == "olp-lda":
            return model.fit(randomize_matrix(X_train, f, random_state=a.seed), X_prior=X_prior)
        return model.fit(randomize_matrix(X_train, f, random_state=a.seed))
    return model.fit(X_train)


def _perplexity(model, X):
    if hasattr(model, "perplexity"):
        return model.perplexity(X)
    from .metrics import perplexity
    keep = np.asarray(X.sum(axis=1)).ravel() > 0
    return perplexity(X[keep], model.transform(X[keep]), model.topic_word_)


def _with_dp_vocabulary(model, a, eps_v, delta_v):
    """Wrap a private model in DP vocabulary selection (Manzonelli et al. 2024), composed."""
    from .pipeline import FullyPrivateTopicModel
    from .vocab import DPVocabulary
    return FullyPrivateTopicModel(
        DPVocabulary(target_epsilon=eps_v, target_delta=delta_v, max_contribution=a.vocab_cap),
        model, reference_documents=a.reference_tokens if a.model == "topicdp" else None,
        random_state=a.seed, verbose=a.verbose)


def _publishable_release(model, vocab, provenance):
    """The publishable release of a fitted model, its vocabulary's provenance stated."""
    if hasattr(model, "vocabulary_stage_"):              # a vocabulary pipeline
        return model.release()
    release = model.release(vocabulary=list(vocab))
    if release.privacy is not None and release.privacy.vocabulary is None and provenance:
        from .accounting import PrivacyReport
        state = release.privacy.to_state()
        state["vocabulary"] = provenance
        release.privacy = PrivacyReport.from_state(state)
    return release


def _check_model_choice(a):
    if a.non_private and getattr(a, "epsilon_given", False):
        # a budget that buys nothing would read as a guarantee: refused, not ignored
        raise ValueError("--epsilon was given with --non-private: a non-private model spends "
                         "no privacy budget and protects no one; drop --epsilon, or drop "
                         "--non-private for a private model")
    if a.model is None:
        a.model = "gibbs" if a.non_private else RECOMMENDED
    if not _is_private(a.model) and not a.non_private:
        raise ValueError(f"--model {a.model} is NOT private: its output exposes the training "
                         "data. Pass --non-private to train it anyway, or use the recommended "
                         f"private --model {RECOMMENDED}")
    if _is_private(a.model) and a.non_private:
        raise ValueError(f"--non-private was given with the private --model {a.model}")


def cmd_fit(a, out):
    from .exceptions import UninformativeModelWarning, VacuousGuaranteeWarning
    from .metrics import npmi_coherence, umass_coherence
    _check_model_choice(a)
    check_save_target(a)
    prepare_public_text(a)          # public inputs only, before the private data is read
    data = load_corpus(a)
    private = _is_private(a.model)
    desc = MODELS[a.model][0]
    unit = "document"
    if getattr(a, "group_key", None) is not None:
        unit = "user"
        desc = (f"user-level DP: private batch VB, all documents of one user (--group-key "
                f"{a.group_key}) protected together")
    result = {"model": a.model, "description": desc, "topics": a.topics, "private": private}
    split = None
    if data.documents is not None:
        split = budget_split(a)
        model_args = argparse.Namespace(**vars(a))
        model_args.epsilon, model_args.delta = split[2], split[3]
        model = _with_dp_vocabulary(MODELS[a.model][1](model_args), a, split[0], split[1])
    else:
        model = MODELS[a.model][1](a)
    if private:
        # D, V and the token count of private data are not printed (the report lists what
        # the guarantee treats as public); nor is the training time.
        print(f"dptm: {a.model} ({desc}), K={a.topics}, on {data.name}", file=out)
        if split is not None:
            print(f"privacy budget: total epsilon {a.epsilon:g} at delta {a.delta:g}, split into "
                  f"a {'user-level ' if unit == 'user' else ''}DP vocabulary (epsilon {split[0]:g}, delta {split[1]:g}; at "
                  f"most {a.vocab_cap} distinct words per {unit}) and the model (epsilon "
                  f"{split[2]:g}, delta {split[3]:g})", file=out)
        hint = report.group_key_hint(a)
        if hint:
            result["group_key_hint"] = hint
            print(hint, file=out)
    else:
        X_train = data.X_train
        print(f"dptm: {a.model} ({desc}), K={a.topics}, on {data.name}: NOT PRIVATE, "
              f"{X_train.shape[0]} training documents, {X_train.shape[1]} words, "
              f"{int(X_train.sum())} tokens", file=out)
    start = time.perf_counter()
    with warnings.catch_warnings():
        # test mode, a vacuous guarantee, more topics than documents (the estimators'
        # guardrails, on stderr for the data owner) and other caveats are shown
        warnings.simplefilter("default")
        warnings.filterwarnings("ignore", "the DP vocabulary has only")  # printed below, once
        caught = []
        try:
            with warnings.catch_warnings(record=True) as caught:
                _fit_model(model, a.model, data.X_train, a, X_prior=data.X_prior)
        except ValueError as exc:
            raise ValueError(explain_unreachable(exc, a)) from exc
        finally:
            # the fit's expectation from public inputs waits for a held-out measurement
            predicted = [w for w in caught if issubclass(w.category, UninformativeModelWarning)]
            for w in caught:
                if w not in predicted:
                    warnings.warn_explicit(w.message, w.category, w.filename, w.lineno,
                                           source=w.source)
    if not private:
        print(f"trained in {time.perf_counter() - start:.2f} s", file=out)
    print(file=out)
    release = _publishable_release(model, data.vocab, data.provenance)
    top_n = min(a.top_words, release.topic_word.shape[1])
    words = release.top_words(top_n, as_frame=False)
    result["top_words"] = words
    n_words = len(release.vocabulary)
    if hasattr(model, "vocabulary_stage_"):
        print(f"private vocabulary: {report.words(n_words)} released (DP set union)", file=out)
        if n_words < 10 * a.topics:
            msg = (f"the DP vocabulary has only {report.words(n_words)}, fewer than 10 x K = "
                   f"{10 * a.topics}: topics over so few words are of little use. Give more "
                   f"{'users' if unit == 'user' else 'documents'}, a larger --epsilon or "
                   "--vocab-share, fewer topics (-k), or a public --vocabulary FILE")
            print(f"WARNING: {msg}", file=out)
            from .exceptions import UtilityWarning
            if out is sys.stdout:
                _SHOWN.add(msg)             # printed above: not repeated on stderr
            warnings.warn(msg, UtilityWarning, stacklevel=2)
    for k, ws in enumerate(words):
        print(f"topic {k:2d}: {' '.join(ws)}", file=out)
    print(file=out)
    if not private:
        metrics = {}
        if data.X_eval is not None and data.X_eval.sum() > 0:
            metrics["heldout_perplexity"] = float(_perplexity(model, data.X_eval))
            print(f"held-out perplexity ({data.X_eval.shape[0]} documents): "
                  f"{metrics['heldout_perplexity']:.2f}", file=out)
        if top_n >= 2:
            metrics["umass"] = umass_coherence(data.X_train, model.topic_word_, top_n=top_n)
            metrics["npmi"] = npmi_coherence(data.X_train, model.topic_word_, top_n=top_n)
            print(f"coherence (top {top_n} words, training corpus): UMass {metrics['umass']:.3f} "
                  f"(mean over word pairs), NPMI {metrics['npmi']:.3f}", file=out)
        result["metrics"] = metrics
        print("\nprivacy: NONE. NOT PRIVATE: a non-private model; its topics and vocabulary "
              "expose the training data (use a private --model to publish)", file=out)
    else:
        result["metrics"] = report.public_utility(a, data, release, out, _gibbs,
                                                  _perplexity)
        if predicted and "unigram_ratio" in result["metrics"]:
            result["prior_guide"] = report.prior_guide(predicted,
                                                       result["metrics"]["unigram_ratio"])
            print(result["prior_guide"], file=out)
        elif predicted:
            with warnings.catch_warnings():
                warnings.simplefilter("default")
                for w in predicted:         # no measurement: the expectation is all there is
                    warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        vacuous = [w.message for w in caught if issubclass(w.category, VacuousGuaranteeWarning)]
        result["concerns"] = report.publication_concerns(n_words, a.topics, result["metrics"],
                                                         predicted, vacuous)
        # at user level the printed copy says --group-key / --vocab-cap (release.json keeps
        # the library's words)
        print("\n" + report_to_cli(release.privacy.format(notes=a.verbose > 0), a), file=out)
        result["privacy"] = release.privacy.to_dict()
        total = float(release.privacy.epsilon(release.privacy.default_delta))
        result["total_epsilon"] = total
        if split is not None:
            v = model.vocabulary_stage_.privacy_
            m = model.model_.privacy_
            eps_m = float(m.epsilon(split[3]))
            print(f"\nepsilon: DP vocabulary {float(v.epsilon(v.default_delta)):.6g} + model "
                  f"{eps_m:.6g}; composed total epsilon = {total:.6g} at delta = "
                  f"{release.privacy.default_delta:.6g}", file=out)
        else:
            print(f"\ntotal epsilon = {total:.6g} at delta = "
                  f"{release.privacy.default_delta:.6g}", file=out)
        clip = report.clip_line(model, unit)
        if clip:
            result["clip_norm"] = float(getattr(model, "model_", model).clip_norm_)
            print(clip, file=out)
    if a.save:
        release.save(a.save, overwrite=a.overwrite)
        result["release"] = a.save
        if private:
            print("\n" + report.saved_line(a.save, result["concerns"],
                                            "group_key_hint" in result, result["metrics"]),
                  file=out)
        else:
            print(f"\nNOT PRIVATE: output written to {a.save} (topics.npz + release.json, "
                  "marked private: false); it exposes the training data", file=out)
    if a.plot:
        from .plotting import plot_top_words
        fig = plot_top_words(release, n=min(top_n, 10))
        _save_figure(fig, a.plot)
        result["plot"] = a.plot
        print(f"\ntop words of each topic plotted to {a.plot}", file=out)
    a.result = result
    return model


def _save_figure(fig, path):
    import matplotlib.pyplot as plt
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)


def cmd_curve(a, out):
    """``dptm fit --epsilons E1,E2,...``: the privacy-utility curve of a private model
    (:func:`dptm.metrics.privacy_utility_curve`), evaluated on public held-out data only:
    the embedded demo corpus' held-out split, or ``--reference-data``."""
    from .metrics import privacy_utility_curve
    if getattr(a, "save", None) is not None:
        # several fits, none of them a release to publish: the curve is drawn on public data
        raise ValueError("--save writes one release and --epsilons fits one model per epsilon "
                         "for a curve, saving none: drop --save, or fit once with --epsilon E "
                         "--save DIR")
    _check_model_choice(a)
    if not _is_private(a.model):
        raise ValueError("--epsilons draws the privacy-utility curve of a private --model")
    if getattr(a, "group_key", None) is not None:
        raise ValueError("--epsilons draws the curve on public data; --group-key is for the "
                         "single private fit (dptm fit --group-key FIELD without --epsilons)")
    prepare_public_text(a)
    data = load_corpus(a)
    if data.documents is not None:
        raise ValueError("--epsilons needs a public vocabulary (the demo corpus, --vocab or "
                         "--vocabulary): a DP vocabulary differs from fit to fit")
    X_train, X_heldout, where, name = data.X_train, data.X_eval, data.eval_where, data.name
    if X_heldout is None and not data.public:
        raise ValueError("--epsilons evaluates held-out perplexity and coherence on public "
                         "text: pass --reference-data FILE (public, same vocabulary); a metric "
                         "of the private data would not be covered by any guarantee")
    if X_heldout is None or X_heldout.sum() == 0:
        raise ValueError("the held-out data for --epsilons is empty: raise --test-fraction")
    nonprivate = None
    if data.public:
        # a non-private fit of private data would be an unprotected release
        nonprivate = _gibbs(a)
        nonprivate.set_params(verbose=0, max_iter=200)      # a converged reference

    def make(eps):
        a.epsilon = eps
        return MODELS[a.model][1](a)

    print(f"dptm: privacy-utility curve of {a.model} ({MODELS[a.model][0]}), K={a.topics}, "
          f"on {name}; held-out: {where}", file=out)
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        table = privacy_utility_curve(make, X_train, X_heldout, a.epsilons, nonprivate=nonprivate,
                                      top_n=max(2, min(a.top_words, X_train.shape[1])),
                                      fit=lambda m, X: _fit_model(m, a.model, X, a,
                                                                  X_prior=data.X_prior))
    cols = {k: list(table[k]) for k in table}
    print(f"{'epsilon':>8} {'reported':>9} {'perplexity':>11} {'NPMI':>7} {'total':>9}", file=out)
    for i in range(len(cols["epsilon"])):
        print(f"{cols['epsilon'][i]:8.3g} {cols['epsilon_reported'][i]:9.4g} "
              f"{cols['perplexity'][i]:11.2f} {cols['coherence'][i]:7.3f} "
              f"{cols['total_epsilon'][i]:9.4g}", file=out)
    line = f"uniform model: perplexity {cols['uniform_perplexity'][0]:g} (V)"
    if nonprivate is not None:
        line += (f"; non-private GibbsLDA: perplexity {cols['nonprivate_perplexity'][0]:.2f}, "
                 f"NPMI {cols['nonprivate_coherence'][0]:.3f}")
    print(line, file=out)
    print(f"every fit is a release of the training data: together they cost a total of "
          f"epsilon = {cols['total_epsilon'][-1]:.4g} (composed; 'total' column). Draw the curve "
          "on public or proxy data, then fit once on the private data.", file=out)
    result = {"model": a.model, "curve": cols}
    if a.plot:
        from .plotting import plot_privacy_utility
        ax = plot_privacy_utility(cols)
        ax.set_title(f"{a.model}, K={a.topics}", fontsize="medium")
        _save_figure(ax.figure, a.plot)
        result["plot"] = a.plot
        print(f"\nprivacy-utility curve plotted to {a.plot}", file=out)
    a.result = result


def _epsilon_list(text):
    try:
        values = [float(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a comma-separated list of numbers > 0, "
                                         f"got {text!r}") from None
    if not values or any(not (v > 0 and math.isfinite(v)) for v in values):
        raise argparse.ArgumentTypeError(f"must be a comma-separated list of numbers > 0, "
                                         f"got {text!r}")
    return values


AUDIT_TRAINERS = {
    "gibbs": lambda a: MODELS["gibbs"][1](a),
    "batch-vb": lambda a: MODELS["batch-vb"][1](a),
    "hdp-lda": lambda a: MODELS["hdp-lda"][1](a),
    "vips": lambda a: MODELS["vips"][1](a),
    "sklearn": lambda a: __import__("sklearn.decomposition", fromlist=["x"])
    .LatentDirichletAllocation(n_components=a.topics, random_state=a.seed),
}


def cmd_audit(a, out):
    """Membership-inference audit (LiRA) of a trainer on a corpus."""
    from .attacks import audit
    check_save_target(a)
    data = load_corpus(a, audit=True)
    X, name = data.X_train, data.name
    if getattr(a, "total_samples", None) is None:
        a.total_samples = X.shape[0]      # the auditor's own experiment data
    trainer = AUDIT_TRAINERS[a.model](a)
    print(f"dptm audit: {a.model} trainer, K={a.topics}, {a.shadows} shadow models on {name} "
          f"({X.shape[0]} documents)", file=out)
    result = audit(trainer, X, n_shadows=a.shadows, n_jobs=a.jobs, random_state=a.seed,
                   verbose=a.verbose)
    print(result.summary(), file=out)
    privacy = getattr(result.target, "privacy_", None)
    if privacy is not None:
        print("\n" + str(privacy), file=out)
    if a.plot:
        _save_figure(result.plot().figure, a.plot)
        print(f"\nROC curves saved to {a.plot}", file=out)
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
    p.add_argument("--data", default="demo", metavar="PATH",
                   help="'demo' (the embedded public corpus), a folder (one document per "
                        "file, sub-folders included), .jsonl / .json records or .csv / .tsv "
                        "rows (--text-key), a .txt with one document per line (needs "
                        "--one-per-line), or a UCI docword file (with --vocab); .gz allowed")
    p.add_argument("--one-per-line", action="store_true",
                   help="read a plain text file as one document per line (each line is then "
                        "the unit the guarantee protects)")
    p.add_argument("--vocab", default=None, help="UCI vocab file for a docword --data")
    p.add_argument("--vocabulary", "--public-vocab", dest="public_vocab", default=None,
                   metavar="FILE",
                   help="raw text: a PUBLIC vocabulary, one word per line or 'word count' "
                        "(counts in public text: batch-vb reads its rare words from them); all "
                        "of --epsilon goes to the model, else a DP vocabulary takes --vocab-share")
    p.add_argument("--stop-words", default=None, metavar="FILE",
                   help="raw text: PUBLIC words to drop besides the English stop words (one "
                        "per line; e.g. a domain's generic words)")
    p.add_argument("--text-key", default="text",
                   help="field of JSON/JSONL records, or CSV column, holding the text")
    p.add_argument("--encoding", default="utf-8", type=_encoding_type, metavar="NAME",
                   help="text encoding of the text files read (--data, --reference-data, "
                        "word lists), e.g. cp1252, latin-1, utf-16 (a UTF-8 BOM is dropped)")
    p.add_argument("--min-df", type=_POS_INT, default=1,
                   help="non-private models on raw text: drop words in fewer documents")
    p.add_argument("-k", "--topics", type=_POS_INT, default=8, help="number of topics K")
    p.add_argument("--iterations", type=_POS_INT, default=None,
                   help="sweeps (Gibbs models) or epochs (vips); default per model")
    p.add_argument("--seed", type=_int_type(0), default=None,
                   help="reproducible run; for a private model this is a TEST MODE (whoever "
                        "knows the seed can subtract the noise): never for a published model")
    p.add_argument("-v", "--verbose", action="count", default=0,
                   help="log progress on stderr (repeat for more)")


def _add_privacy_options(p):
    priv = p.add_argument_group("privacy (private models)")
    priv.add_argument("--epsilon", type=_POS_FLOAT, default=None,
                      help="TOTAL epsilon of the release at --delta, the vocabulary included "
                           "(the noise is calibrated to it; a model with an inherent cost says "
                           "the smallest reachable total and settings that reach it); "
                           "lp-lda/olp-lda: the total per document (pure local DP; each of the "
                           "V words gets epsilon / V); an error with --non-private "
                           "(default: 4.0)")
    priv.add_argument("--epsilon-per-word", type=_POS_FLOAT, default=None,
                      help="lp-lda/olp-lda: each client's per-word (per presence bit) local "
                           "epsilon instead of the total per document")
    priv.add_argument("--epsilon-per-iter", type=_POS_FLOAT, default=None,
                      help="hdp-lda/cdp-lda+/zhu-lda: Laplace epsilon per sweep instead of a total")
    priv.add_argument("--delta", type=_UNIT_OPEN, default=1e-5,
                      help="total delta (on raw text: half to the DP vocabulary, half to the "
                           "model)")
    priv.add_argument("--clip", type=_POS_FLOAT, default=None,
                      help="count clip C (Gibbs models; hdp-lda default 50)")
    priv.add_argument("--beta", type=_POS_FLOAT, default=None,
                      help="topic-word prior (Gibbs models; hdp-lda default 0.1, others 1/K)")
    priv.add_argument("--mechanism", default=None,
                      choices=["laplace", "gaussian", "discrete_laplace", "discrete_gaussian"],
                      help="hdp-lda/cdp-lda+/zhu-lda: noise of the snapshots")
    priv.add_argument("--noise-multiplier", type=_POS_FLOAT, default=None,
                      help="sub-lda: Gaussian noise multiplier instead of a total epsilon")
    priv.add_argument("--sample-rate", type=_float_type(0.0, 1.0, high_open=False), default=0.5, help="sub-lda gamma")
    priv.add_argument("--accounting", default=None,
                      help="sub-lda: sound|paper; vips: rdp|zcdp-paper|advanced|linear")
    priv.add_argument("--batch-size", type=_POS_INT, default=64, help="vips / olp-lda mini-batch size")
    priv.add_argument("--total-samples", type=_POS_FLOAT, default=None, metavar="N",
                      help="vips/fdptm on private data: a PUBLIC number of documents (a bound or "
                           "an estimate made without the private data) that sets the sampling "
                           "rate; the demo corpus' own size by default")
    priv.add_argument("--max-doc-length", type=_POS_INT, default=100,
                      help="vips: documents capped at this many tokens (sensitivity)")
    priv.add_argument("--prior-fraction", type=_UNIT_OPEN, default=0.2,
                      help="olp-lda: share of training documents used as the clean prior set")
    priv.add_argument("--gamma", type=_UNIT_OPEN, default=0.1,
                      help="topicdp: failure probability of the sampled sensitivity (random DP)")
    priv.add_argument("--vocab-share", type=_UNIT_OPEN, default=0.5,
                      help="raw text without --vocabulary (and fdptm): share of the total "
                           "--epsilon spent on the DP vocabulary; the model gets the rest")
    priv.add_argument("--vocab-epsilon", type=_POS_FLOAT, default=None,
                      help="the DP vocabulary's epsilon instead of --vocab-share (must be "
                           "below --epsilon: the model gets the rest)")
    priv.add_argument("--vocab-cap", type=_POS_INT, default=10,
                      help="DP vocabulary: at most this many distinct words per document "
                           "(per user with --group-key; its most frequent) enter the selection")
    priv.add_argument("--sensitivity", type=_POS_FLOAT, default=None,
                      help="topicdp: a public bound on the sensitivity of the topic matrix "
                           "(or give --reference-data)")
    priv.add_argument("--reference-data", default=None,
                      help="a PUBLIC corpus apart from --data (same format and vocabulary; "
                           "never the training documents or a part of them): a private "
                           "model's utility on it is printed beside a unigram model's (the "
                           "check before publishing); topicdp also samples its sensitivity on it")


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter,
                     argparse.RawDescriptionHelpFormatter):
    """--help shows each flag's default (when it has one) and keeps the model list's layout."""

    def _get_help_string(self, action):
        if action.default is None or action.default is False:
            return action.help
        return super()._get_help_string(action)


def _models_epilog():
    width = max(map(len, MODELS))
    lines = [f"  {name:<{width}}  {desc}" for name, (desc, _) in sorted(MODELS.items())]
    return ("models (--model):\n" + "\n".join(lines)
            + "\n\nexample: dptm fit --data texts/ --epsilon 4 -k 10 --save release")


def build_parser():
    parser = _Parser(prog="dptm", description=__doc__.split("\n\n")[0],
                     epilog="dptm alone runs 'dptm fit' on the embedded demo corpus with the "
                            "recommended private model.",
                     formatter_class=_HelpFormatter)
    parser.add_argument("--version", action="version", version=f"dptm {__version__}")
    sub = parser.add_subparsers(dest="command")
    fit = sub.add_parser("fit", help="train a topic model and report it (the default command)",
                         description="Train a topic model and report its topics, the privacy "
                                     "guarantee and (on public data) its utility.",
                         epilog=_models_epilog(), formatter_class=_HelpFormatter)
    fit.add_argument("--model", choices=sorted(MODELS), default=None,
                     help=f"the topic model (see the list below); default: {RECOMMENDED} "
                          "(gibbs with --non-private)")
    fit.add_argument("--non-private", action="store_true",
                     help="allow a NON-private model (gibbs): its output exposes the training "
                          "data and is marked NOT PRIVATE")
    _add_data_options(fit)
    add_public_text_option(fit)
    fit.add_argument("--group-key", default=None, metavar="FIELD",
                     help="user-level privacy: the field of JSONL records (or CSV column) "
                          "holding each document's user id; all documents of one user are "
                          "protected together (--model batch-vb, on raw text behind a "
                          "user-level DP vocabulary)")
    fit.add_argument("--test-fraction", type=_float_type(0.0, 1.0, low_open=False), default=None,
                     help="non-private models and the demo corpus: held-out share of documents "
                          "for perplexity (0.1 when not given); a private model on private "
                          "data uses every document")
    fit.add_argument("--top-words", type=_POS_INT, default=10, help="top words shown per topic")
    fit.add_argument("--jobs", type=_int_type(1, extra=(-1,)), default=None,
                     help="threads of batch-vb's statistic, or parallel model fits of "
                          "topicdp; -1 = all cores")
    fit.add_argument("--save", default=None, metavar="DIR",
                     help="write the publishable release (topics, vocabulary, privacy report) "
                          "to DIR, a new or empty directory outside --data (checked before "
                          "the fit; not with --epsilons, which saves no release)")
    fit.add_argument("--overwrite", action="store_true",
                     help="let --save write into a non-empty DIR (its topics.npz and "
                          "release.json replaced, other files kept)")
    fit.add_argument("--json", action="store_true",
                     help="print the result (top words, privacy report, metrics) as JSON")
    fit.add_argument("--plot", default=None, metavar="FILE",
                     help="save bar charts of each topic's top words to this image (with "
                          "--epsilons: the privacy-utility curve); needs matplotlib")
    fit.add_argument("--epsilons", type=_epsilon_list, default=None, metavar="E1,E2,...",
                     help="privacy-utility curve: fit the private --model at each total "
                          "epsilon and report held-out perplexity and NPMI on public data "
                          "(the demo corpus' held-out split or --reference-data)")
    _add_privacy_options(fit)
    aud = sub.add_parser("audit", help="membership-inference audit (online/offline LiRA)",
                         description="Membership-inference audit (online and offline LiRA) "
                                     "of a trainer on a corpus the auditor holds.",
                         formatter_class=_HelpFormatter)
    aud.add_argument("--model", choices=sorted(AUDIT_TRAINERS), default="gibbs",
                     help="trainer of the target and shadow models")
    _add_data_options(aud)
    aud.add_argument("--shadows", type=_even_shadows, default=16,
                     help="number of shadow models (even)")
    aud.add_argument("--jobs", type=_int_type(1, extra=(-1,)), default=None,
                     help="parallel shadow fits (joblib); -1 = all cores")
    aud.add_argument("--save", default=None, metavar="FILE",
                     help="save the LiRA statistics to this new .npz file (checked before the "
                          "shadow fits)")
    aud.add_argument("--overwrite", action="store_true",
                     help="let --save replace an existing file")
    aud.add_argument("--plot", default=None, metavar="FILE",
                     help="save the attacks' log-log ROC curves to this image (needs matplotlib)")
    _add_privacy_options(aud)
    return parser


def main(argv=None, out=None):
    """Entry point of the ``dptm`` console script; returns the process exit code."""
    out = out or sys.stdout
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version"):
        argv = ["fit"] + argv
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help (0) or a flag out of range (2, message on stderr)
        return exc.code if isinstance(exc.code, int) else 2
    prog = " ".join(filter(None, ("dptm", args.command)))   # argparse's prog of the subcommand
    args.epsilon_given = args.epsilon is not None
    if args.epsilon is None:
        args.epsilon = 4.0
    if getattr(args, "plot", None):
        # checked before a long fit; a file backend: no display needed
        try:
            import matplotlib
        except ImportError:
            sys.stderr.write(_error_line(prog, "--plot needs matplotlib: pip install "
                                               "'dptm[plot]'"))
            return 2
        matplotlib.use("Agg")
    fmt = warnings.formatwarning
    given = getattr(args, "reference_data", None) is not None
    warnings.formatwarning = lambda *w, **k: _format_warning(*w, reference=given, **k)
    _SHOWN.clear()
    try:
        if args.command == "fit":
            command = cmd_curve if args.epsilons is not None else cmd_fit
            if args.json:
                import io
                command(args, io.StringIO())
                print(json.dumps(args.result, indent=1, default=str), file=out)
            else:
                command(args, out)
        elif args.command == "audit":
            cmd_audit(args, out)
    except (ValueError, TypeError, OSError, EOFError, MemoryError) as exc:
        # bad data or files: one line naming the file (loaders put it in the message), no
        # traceback
        msg = to_cli(str(exc)) or type(exc).__name__
        if isinstance(exc, OSError) and getattr(exc, "filename", None) and str(exc.filename) not in msg:
            msg = f"{exc.filename}: {msg}"
        sys.stderr.write(_error_line(prog, msg))
        return 2
    finally:
        warnings.formatwarning = fmt
    return 0


# Warning messages already printed on stdout by the command (shown once, not again on stderr).
_SHOWN = set()


def _format_warning(message, category, filename, lineno, line=None, reference=False):
    """Warnings as one line, "warning: <Category>: message": no internal source line; a
    message the command already printed on stdout is not repeated; with --reference-data
    given, no advice to give it."""
    if str(message) in _SHOWN:
        return ""
    text = to_cli(message)
    if reference:
        text = text.replace("measure on public or held-out text with --reference-data FILE "
                            "before concluding", "the measurement on --reference-data decides")
    return f"warning: {category.__name__}: {text}\n"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
