"""What ``dptm fit`` prints around a private fit besides the topics and the privacy report:
a ``--group-key`` hint read from the input's field names, the clip bound, the fit's prior
guide beside a measurement on public held-out data, and whether the release is worth
publishing. Each reads public values only: the input format's field names (see
:func:`group_key_hint`), the released vocabulary's size, post-processing of the release,
and public held-out data."""
import re

__all__ = ["group_key_hint", "public_utility", "clip_line", "prior_guide",
           "publication_concerns", "saved_line", "words"]

# Field-name words that usually hold a document's author or owner.
_USER_WORDS = frozenset({
    "user", "userid", "username", "uid", "author", "patient", "sender", "maintainer",
    "customer", "client", "owner", "writer", "poster", "member", "account", "speaker",
    "submitter", "reporter", "commenter", "employee", "person", "creator", "uploader"})
_RECORD_FORMATS = (".jsonl", ".ndjson", ".csv", ".tsv")


def _looks_like_user(name):
    """True for field names such as ``user``, ``user_id``, ``authorName``, ``Patient-ID``."""
    snake = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", str(name)).lower()
    words = [w for w in re.split(r"[^a-z0-9]+", snake) if w]
    return "".join(words) in _USER_WORDS or any(w in _USER_WORDS for w in words)


def _csv_header(path):
    """The header (field names) of a CSV/TSV file, or None for any other format. Called
    after the loader has read the file, so errors are already reported."""
    import csv
    import gzip
    from .datasets import _base_suffix
    suffix = _base_suffix(path)
    if suffix not in (".csv", ".tsv"):
        return None
    opener = gzip.open if str(path).lower().endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8-sig", errors="replace", newline="") as fh:
            return next(csv.reader(fh, delimiter="\t" if suffix == ".tsv" else ","), None)
    except (OSError, ValueError, csv.Error):
        return None


def group_key_hint(a):
    """One hint (or None) for record input without ``--group-key``: the unit protected is
    then a document, not the person who wrote several.

    A CSV/TSV header is the file's schema, the same whichever rows it holds: a user-like
    column is named. The keys of a JSONL record are part of that record (adding or
    removing one could change them), so for JSONL the hint is the same for every file and
    names no field."""
    if getattr(a, "group_key", None) is not None or a.data == "demo" or a.vocab is not None:
        return None
    from .datasets import _base_suffix
    if _base_suffix(a.data) not in _RECORD_FORMATS:
        return None
    fields = _csv_header(a.data)
    found = [f for f in (fields or []) if f != a.text_key and _looks_like_user(f)]
    if fields is not None and not found:
        return None
    what = (f"the records have a field {', '.join(repr(f) for f in found)} that looks like a "
            "user id" if found else "if one person wrote several of these records, give the "
            "field that names them")
    key = found[0] if found else "FIELD"
    return (f"hint: {what}. Without --group-key every document is protected on its own "
            "(document level): a person with k documents is protected only at about k x "
            f"epsilon. --group-key {key} protects all documents of one user together (user "
            "level, --model batch-vb).")


def public_utility(a, data, release, out, make_reference, perplexity):
    """Utility of a private release on PUBLIC held-out data only (post-processing of the
    release); on the public demo corpus also against non-private GibbsLDA trained on the
    same public documents (``make_reference(a)``: an unfitted GibbsLDA,
    evaluated by ``perplexity(model, X)``)."""
    from ._cli_data import _matrix_over
    X_eval = _matrix_over(release, data.X_eval, data.eval_tokens)
    if X_eval is None:
        if getattr(a, "reference_data", None) is not None:
            print(f"(no measurement: no document of --reference-data {a.reference_data} has a "
                  "word of the release's vocabulary)", file=out)
            return {"unmeasured": "no document of --reference-data has a word of the release's "
                                  "vocabulary"}
        print("(no metric of the private data is printed for a private model: it would not be "
              "covered by the guarantee; evaluate the release on public text with "
              "--reference-data FILE or dptm.Release.load(DIR).perplexity(X_public))", file=out)
        return {}
    from .guardrails import check_against_unigram
    # the bar to clear: topics worse than one word distribution for every document say
    # nothing (warns when they are no better: a measurement, public data only)
    check = check_against_unigram(release, X_eval)
    metrics = {"heldout_perplexity": check.perplexity,
               "unigram_perplexity": check.unigram_perplexity, "unigram_ratio": check.ratio}
    line = (f"utility on {data.eval_where}: held-out perplexity {check.perplexity:.2f}"
            f" ({X_eval.shape[0]} public documents); a unigram model of those documents: "
            f"{check.unigram_perplexity:.2f} (private / unigram = {check.ratio:.2f}x, below 1 "
            f"is better than word frequencies; both over the release's "
            f"{words(len(release.vocabulary))})")
    start = getattr(a, "public_init", None)
    if start is not None and start.shape[1] == X_eval.shape[1]:
        # what the release must beat to be worth its budget: the starting topics from
        # --public-text alone (public inputs only, K = --topics, folded in the same way)
        from .release import Release
        alone = Release(start, doc_topic_prior=1.0 / start.shape[0]).perplexity(X_eval)
        metrics["public_topics_perplexity"] = alone
        metrics["public_topics_unigram_ratio"] = alone / check.unigram_perplexity
        line += (f"; the starting topics of --public-text alone, no budget spent: {alone:.2f}"
                 f" ({alone / check.unigram_perplexity:.2f}x)")
    if data.public:
        from .text import tokens_to_matrix
        X_ref = data.X_train
        if data.documents is not None:
            X_ref, _ = tokens_to_matrix(data.documents, vocabulary=list(release.vocabulary))
        reference = make_reference(a)
        reference.set_params(verbose=0, n_components=a.topics, max_iter=200)
        reference.fit(X_ref)
        metrics["nonprivate_perplexity"] = float(perplexity(reference, X_eval))
        metrics["ratio"] = metrics["heldout_perplexity"] / metrics["nonprivate_perplexity"]
        line += (f"; non-private GibbsLDA on the same public documents: "
                 f"{metrics['nonprivate_perplexity']:.2f} (private / non-private = "
                 f"{metrics['ratio']:.2f}x)")
    print(line, file=out)
    return metrics


def clip_line(model, unit):
    """The clip bound of a PrivateBatchLDA fit (``clip_norm_``: post-processing of the
    norm-histogram release, or the public ``clip_norm``), or None for other models."""
    inner = getattr(model, "model_", model)          # a vocabulary pipeline's model
    C = getattr(inner, "clip_norm_", None)
    if C is None:
        return None
    from .models.private_vb import _edges
    how = ("given as public" if getattr(inner, "clip_norm", None) is not None else
           "chosen with DP from the noisy histogram of the norms")
    if C == _edges()[0] and getattr(inner, "clip_norm", None) is None:
        how += (", the smallest candidate bound (one token alone has norm 1): at this "
                "epsilon the noise a larger bound brings costs more than the clipping")
    return (f"clip bound: each {unit}'s contribution is clipped to L2 norm C = {C:.6g} "
            f"({how}; post-processing of the release)")


def prior_guide(caught, ratio):
    """The fit's expectation (a PrivateBatchLDA UninformativeModelWarning, computed from
    public inputs and the noisy count) recast as a note after the measured private /
    unigram ``ratio`` on public held-out data, which supersedes it."""
    text = " ".join(str(w.message) for w in caught)
    m = re.search(r"at ([0-9.]+)x the perplexity of non-private LDA", text)
    expected = (f"about {m.group(1)}x the perplexity of non-private LDA, no better than a "
                "unigram model" if m else "topics no better than a unigram model")
    verdict = ("better than word frequencies: the guide was pessimistic here" if ratio < 1
               else "no better than word frequencies, as the guide expected")
    return ("note: the fit's rough prior guide (from public inputs and its noisy document "
            f"count: epsilon, K and V; corpora differ) expected {expected}. The measurement "
            f"above, on public held-out data, is the one to go by: {ratio:.2f}x the unigram "
            f"model's perplexity, {verdict}")


# A measured private / unigram ratio at or above this is a concern too: two fits of the same
# model differ by a few percent in held-out perplexity.
_MARGINAL_RATIO = 0.95


def words(n):
    return f"{n} word" if n == 1 else f"{n} words"


def publication_concerns(n_words, n_topics, metrics, predicted, vacuous=()):
    """Why a release is not worth publishing as it is, from public facts only: a vacuous
    guarantee (``vacuous``: the fit's VacuousGuaranteeWarning messages, from its report and
    public or DP counts), the released vocabulary's size (public or DP-selected, released
    either way), the measurement on public held-out data (when there is one), else the
    fit's expectation from public inputs."""
    concerns = [str(w).replace("vacuous privacy guarantee: ", "its guarantee is vacuous (", 1)
                + ")" for w in vacuous]
    if n_words < 10 * n_topics:
        concerns.append(f"its vocabulary has only {words(n_words)} for K = {n_topics} topics "
                        "(under 10 words per topic: fewer topics -k, or more words: a public word "
                        "list with --vocabulary FILE)")
    ratio = metrics.get("unigram_ratio")
    if ratio is not None:
        if ratio >= 1.0:
            concerns.append("on public held-out data its topics are no better than a unigram "
                            f"model (private / unigram = {ratio:.2f}x)")
        elif ratio >= _MARGINAL_RATIO:
            concerns.append("on public held-out data its topics are barely better than a "
                            f"unigram model (private / unigram = {ratio:.2f}x: within the "
                            "few percent that separate two fits of the same model)")
    elif predicted:
        concerns.append("the fit expects its topics to be no better than a unigram model "
                        "(UninformativeModelWarning, from public inputs; measure on public "
                        "text with --reference-data FILE)")
    return concerns


def saved_line(path, concerns, hinted=False, metrics=None):
    """The last line of a saved private fit: no concern, or why it is not worth publishing;
    ``hinted``: the --group-key hint was printed (the verdict is then at document level);
    ``metrics``: ``public_utility``'s (a measurement on public held-out text, or why none)."""
    metrics = metrics or {}
    if not concerns:
        level = (" as a document-level release (if one person wrote several records, see the "
                 "--group-key hint above)") if hinted else ""
        why = metrics.get("unmeasured", "give public text with --reference-data FILE")
        checked = ("" if "unigram_ratio" in metrics else "; its topics were not measured "
                   f"against word frequencies ({why})")
        return (f"release written to {path} (topics.npz + release.json): no concern found "
                f"for publishing it{level}{checked}. Publish the release, never the fitted "
                "estimator")
    return (f"release written to {path} (topics.npz + release.json), but it is NOT worth "
            f"publishing as it is: {'; '.join(concerns)}. If you publish topics, publish a "
            "release, never the fitted estimator")
