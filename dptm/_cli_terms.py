"""The one table from the Python API's spellings to the ``dptm`` command's flags.

The library's errors and warnings name Python parameters (``key=``, ``groups=None``,
``target_epsilon``); the command line shows them to its user with the flags that set those
parameters. Every error and warning the CLI prints from the library passes through
:func:`to_cli`; a parameter the CLI spells differently gets one row here. The privacy report
is published as the library words it (``release.json``, ``--json``: read by Python users
too); only the copy printed at user level names the CLI's flags where the library names its
parameters (:func:`report_to_cli`), and its figures are untouched.
:func:`explain_unreachable` adds to a few library refusals the flags that get past them.
"""
import math
import re

__all__ = ["to_cli", "report_to_cli", "explain_unreachable"]

# (pattern of the Python spelling, CLI spelling); applied in order, longer phrases first so
# that a phrase is rewritten whole before its parts are.
_TERMS = [
    (r"fit\(X, groups=\.\.\.\)", "--group-key"),
    (r"groups=None", "without --group-key"),
    (r"\bgroups were given\b", "--group-key was given"),
    (r"\bgroups given\b", "--group-key given"),
    (r"the vocabulary stage's target_epsilon", "--epsilon or --vocab-share"),
    (r"\bencoding='([^']*)'", r"--encoding \1"),
    (r"\bone_per_line=True", "--one-per-line"),
    (r"(?<![\w-])key=", "--text-key"),
    (r"\boverwrite=True\b", "--overwrite"),
    (r"with dptm\.guardrails\.check_against_unigram", "with --reference-data FILE"),
    (r"\blower clip\b", "lower --clip"),
    (r"\btarget_epsilon\b", "--epsilon"),
    (r"\btarget_delta\b", "--delta"),
    (r"\btopic_word_prior\b", "--beta"),
    (r"\bmax_iter\b", "--iterations"),
    (r"\bnoise_multiplier\b", "--noise-multiplier"),
    (r"\btotal_samples\b", "--total-samples"),
]
_COMPILED = [(re.compile(p), r) for p, r in _TERMS]


def to_cli(message):
    """``message`` with the Python spellings of :data:`_TERMS` replaced by their flags."""
    text = str(message)
    for pattern, repl in _COMPILED:
        text = pattern.sub(repl, text)
    return text


def report_to_cli(text, a):
    """The printed privacy report ``text`` in the CLI's terms at user level (``--group-key``):
    the library's ``groups`` argument is the CLI's ``--group-key FIELD`` and the vocabulary's
    ``max_contribution`` its ``--vocab-cap``. Only these words change; document-level reports
    are returned as they are (they name no Python parameter)."""
    key = getattr(a, "group_key", None)
    if key is None:
        return text
    for pattern, repl in ((r"\(groups\)", f"(--group-key {key})"),
                          (r"\bgroups given\b", f"--group-key {key} given"),
                          (r"\bmax_contribution\b", f"--vocab-cap {a.vocab_cap}")):
        text = re.sub(pattern, lambda m, r=repl: r, text)
    return text


def explain_unreachable(exc, a):
    """The estimator's message, plus CLI flags that reach ``--epsilon`` for the Gibbs
    models whose sampling has an inherent cost (hdp-lda: eps_I = 2 log(C / beta + 1) per
    sweep, Zhao et al. 2021 Theorem 1)."""
    msg = str(exc)
    if "the private vocabulary is empty" in msg:
        # one line: the library's own advice ("raise ... or use more data") replaced by flags
        users = getattr(a, "group_key", None) is not None
        head = msg.split("; raise", 1)[0]
        return (f"{head}; give more {'users' if users else 'documents'}, a larger --epsilon "
                "or --vocab-share, or a public --vocabulary FILE (one word per line)")
    if "has no tokens: every document is empty" in msg and getattr(a, "public_vocab", None):
        # the central fits' own refusal, reworded (a local model fits such a corpus)
        return (f"no word of --vocabulary {a.public_vocab} occurs in {a.data} (after "
                f"lower-casing and tokenizing): every document is empty ({msg})")
    if "must be <= 2^40 for the exact" in msg:
        return (f"--epsilon {a.epsilon:g} is too small: the noise it needs is beyond the exact "
                f"samplers' range ({msg}); give a larger --epsilon")
    if "smallest reachable total" not in msg or a.model not in ("hdp-lda", "cdp-lda+",
                                                                   "zhu-lda"):
        return msg
    from .models.private_gibbs import NoisyGibbsLDA, inherent_epsilon
    suggestions = []
    T0 = a.iterations or 100
    for T in dict.fromkeys((T0, 20, 10)):
        # the sampling steps may take half the budget; the rest buys the Laplace noise
        ratio = math.expm1(a.epsilon / (4.0 * T))         # C / beta with T eps_I = eps / 2
        clip = 1.0
        # rounded up to 3 significant digits: a larger prior only lowers eps_I
        scale = 10.0 ** (2 - math.floor(math.log10(clip / ratio)))
        beta = math.ceil(clip / ratio * scale) / scale
        probe = NoisyGibbsLDA(target_epsilon=a.epsilon, target_delta=a.delta, clip=clip,
                              topic_word_prior=beta, max_iter=T)
        try:
            probe._make_noise(inherent_epsilon(clip, beta), None, T, a.delta)
        except ValueError:
            continue
        suggestions.append(f"--model hdp-lda --iterations {T} --clip {clip:g} "
                           f"--beta {beta:g}")
    if not suggestions:
        return msg
    return (f"{msg}\n  with dptm fit: --clip is C, --beta the topic-word prior, --iterations "
            f"the sweeps. A total of {a.epsilon:g} is reachable with, e.g.:\n    "
            + "\n    ".join(f"dptm fit {s} --epsilon {a.epsilon:g}" for s in suggestions)
            + "\n  (a prior beta much larger than 1 flattens the topics: fewer sweeps keep it "
              "smaller), or use a document-level model whose noise is calibrated to any "
              "total: --model batch-vb")
