"""``dptm fit`` on private data: add/remove neighbours stay neighbours.

A private model must train on every document it is given. A data-dependent held-out split
(``round(0.1 D)`` documents, as the command once did) makes D + one document replace a
training document of D whenever D -> D + 1 raises the held-out count, which is covered only
by group privacy. Here the command's own loader is coupled on D and D + d for D = 10..30,
every private model and every input format, and the training sets are compared by value;
and nothing a private model prints may be computed from private held-out documents."""
import csv
import gzip
import io
import json
from collections import Counter

import numpy as np
import pytest

from dptm import Release
from dptm.cli import LOCAL, MODELS, NON_PRIVATE, WORD_LEVEL, build_parser, load_corpus, main

WORDS = ["storm", "flood", "rain", "river", "vote", "poll", "senate", "candidate", "market",
         "price", "stock", "bank", "match", "goal", "team", "coach"]
PRIVATE_MODELS = sorted(set(MODELS) - set(NON_PRIVATE))


def _docs(n, seed):
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=rng.integers(3, 9))) for _ in range(n)]


def _write(fmt, docs, path):
    """``docs`` in input format ``fmt`` at ``path``; the CLI flags that read it."""
    if fmt == "folder":
        path.mkdir()
        for i, t in enumerate(docs):
            sub = path / ("a" if i % 2 else "b")
            sub.mkdir(exist_ok=True)
            (sub / f"{i:04d}.txt").write_text(t)
        return [str(path)]
    if fmt == "jsonl":
        p = path.with_suffix(".jsonl")
        p.write_text("".join(json.dumps({"body": t}) + "\n" for t in docs))
        return [str(p), "--text-key", "body"]
    if fmt == "csv":
        p = path.with_suffix(".csv")
        with open(p, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["id", "text"])
            w.writerows(enumerate(docs))
        return [str(p)]
    if fmt == "txt":
        p = path.with_suffix(".txt")
        p.write_text("\n".join(docs) + "\n")
        return [str(p), "--one-per-line"]
    if fmt == "uci":                     # a docword file over a public vocab file
        p = path.with_suffix(".docword.txt.gz")
        rows = []
        for d, t in enumerate(docs):
            for w, c in sorted(Counter(t.split()).items()):
                rows.append(f"{d + 1} {WORDS.index(w) + 1} {c}\n")
        with gzip.open(p, "wt") as fh:
            fh.write(f"{len(docs)}\n{len(WORDS)}\n{len(rows)}\n" + "".join(rows))
        vocab = path.parent / "vocab.uci.txt"
        vocab.write_text("\n".join(WORDS) + "\n")
        return [str(p), "--vocab", str(vocab)]
    raise AssertionError(fmt)


def _args(model, data_flags, tmp_path):
    argv = ["fit", "--model", model, "--data", *data_flags]
    raw = "--vocab" not in data_flags
    if raw and (model in WORD_LEVEL or model in LOCAL or model == "topicdp"):
        vocab = tmp_path / "public_words.txt"           # their proofs need a public vocabulary
        vocab.write_text("\n".join(WORDS) + "\n")
        argv += ["--vocabulary", str(vocab)]
    if model in ("vips", "fdptm"):                      # a public number of documents
        argv += ["--total-samples", "40"]
    if model == "olp-lda":                              # its clean prior set is public data
        if raw:
            ref = tmp_path / "public_reference.txt"
            ref.write_text("\n".join(_docs(20, 99)) + "\n")
            argv += ["--reference-data", str(ref), "--one-per-line"]
        else:
            ref = _write("uci", _docs(20, 99), tmp_path / "public_reference")[0]
            argv += ["--reference-data", ref]
    return build_parser().parse_args(argv)


def _training_set(data):
    """The training documents as a multiset: token lists or matrix rows, by value."""
    if data.documents is not None:
        return Counter(tuple(sorted(doc)) for doc in data.documents), data.documents
    X = data.X_train.tocsr()
    rows = [tuple(zip(X.indices[X.indptr[i]:X.indptr[i + 1]].tolist(),
                      X.data[X.indptr[i]:X.indptr[i + 1]].tolist())) for i in range(X.shape[0])]
    return Counter(rows), rows


@pytest.mark.parametrize("fmt", ["folder", "jsonl", "csv", "txt", "uci"])
@pytest.mark.parametrize("model", PRIVATE_MODELS)
def test_training_sets_of_neighbours_are_neighbours(model, fmt, tmp_path):
    for D in range(10, 31):
        base = _docs(D + 1, seed=D)
        added = base[-1]
        # the added document at a position that moves with D (not only at the end)
        pos = (7 * D) % (D + 1)
        small, big = base[:D], base[:pos] + [added] + base[pos:D]
        d_small = load_corpus(_args(model, _write(fmt, small, tmp_path / f"s{D}"), tmp_path))
        d_big = load_corpus(_args(model, _write(fmt, big, tmp_path / f"b{D}"), tmp_path))
        ms_small, list_small = _training_set(d_small)
        ms_big, list_big = _training_set(d_big)
        # every document trains the private model ...
        assert len(list_small) == D and len(list_big) == D + 1, (model, fmt, D)
        # ... and D + d's training set is D's plus exactly one document
        diff = ms_big - ms_small
        assert sum(diff.values()) == 1 and not (ms_small - ms_big), (model, fmt, D)
        # nothing of the private data is held out for evaluation
        for data in (d_small, d_big):
            if model == "olp-lda":
                assert data.X_eval is not None and data.eval_where.endswith("(declared public)")
            else:
                assert data.X_eval is None and data.eval_tokens is None


def test_a_held_out_share_of_private_data_is_refused(tmp_path, capsys):
    flags = _write("jsonl", _docs(40, 1), tmp_path / "d")
    code = main(["fit", "--data", *flags, "--test-fraction", "0.2"], out=io.StringIO())
    assert code == 2
    assert "--test-fraction: a private model trains on every document" in capsys.readouterr().err


@pytest.mark.parametrize("fmt", ["jsonl", "uci"])
@pytest.mark.parametrize("model", ["vips", "fdptm"])
def test_private_minibatch_models_need_a_declared_number_of_documents(tmp_path, capsys, model,
                                                                      fmt):
    # their sampling rate S / N needs a public N: the private number of documents (which
    # add/remove changes) is never taken in its place, on raw text or a UCI docword file
    flags = _write(fmt, _docs(40, 2), tmp_path / "d")
    args = build_parser().parse_args(["fit", "--model", model, "--data", *flags])
    with pytest.raises(ValueError, match="give --total-samples N, a public number"):
        load_corpus(args)
    assert getattr(args, "total_samples", None) is None
    code = main(["fit", "--model", model, "--data", *flags], out=io.StringIO())
    assert code == 2 and "give --total-samples N" in capsys.readouterr().err


class _Spy:
    """Records every matrix a release or a model is evaluated on."""

    def __init__(self, monkeypatch):
        self.seen = []
        original = Release.perplexity

        def perplexity(release, X):
            self.seen.append(X.copy())
            return original(release, X)
        monkeypatch.setattr(Release, "perplexity", perplexity)
        import dptm.cli as cli
        monkeypatch.setattr(cli, "_perplexity", lambda *a: pytest.fail("model evaluated"))


def _big_private_corpus(tmp_path):
    rng = np.random.default_rng(3)
    themes = [WORDS[:8], WORDS[8:]]
    docs = [" ".join(rng.choice(themes[i % 2], size=8)) for i in range(600)]
    return _write("jsonl", docs, tmp_path / "private")


def test_a_private_fit_prints_no_metric_of_private_data(tmp_path, monkeypatch):
    spy = _Spy(monkeypatch)
    out = io.StringIO()
    code = main(["fit", "--data", *_big_private_corpus(tmp_path), "-k", "2",
                 "--save", str(tmp_path / "rel")], out=out)
    assert code == 0, out.getvalue()
    assert spy.seen == []                          # no evaluation at all ...
    assert "perplexity 1" not in out.getvalue() and "utility on" not in out.getvalue()
    assert "no metric of the private data is printed" in out.getvalue()


def test_a_private_fit_is_evaluated_on_the_public_reference_only(tmp_path, monkeypatch):
    spy = _Spy(monkeypatch)
    rng = np.random.default_rng(8)
    ref_docs = [" ".join(rng.choice(WORDS, size=6)) for _ in range(25)]
    ref = tmp_path / "public.jsonl"
    ref.write_text("".join(json.dumps({"body": t}) + "\n" for t in ref_docs))
    out = io.StringIO()
    code = main(["fit", "--data", *_big_private_corpus(tmp_path), "-k", "2",
                 "--reference-data", str(ref), "--save", str(tmp_path / "rel")], out=out)
    assert code == 0, out.getvalue()
    release = Release.load(str(tmp_path / "rel"))
    # ... or exactly once, on the public reference over the released vocabulary
    assert len(spy.seen) == 1
    X = spy.seen[0].toarray()
    index = {w: j for j, w in enumerate(release.vocabulary)}
    expected = np.zeros((len(ref_docs), len(index)), dtype=np.int64)
    for i, t in enumerate(ref_docs):
        for w in t.split():
            if w in index:
                expected[i, index[w]] += 1
    expected = expected[expected.sum(axis=1) > 0]
    np.testing.assert_array_equal(X, expected)
    assert f"utility on {ref} (declared public): held-out perplexity" in out.getvalue()
    # no non-private model is fitted on the private data for a comparison
    assert "non-private" not in out.getvalue().split("Privacy report")[0]


def test_the_curve_on_private_data_fits_no_non_private_model_on_it(tmp_path, monkeypatch):
    # a non-private fit of the private data, evaluated on the reference, is a release that no
    # guarantee covers: the curve shows it on the public demo corpus only
    import dptm.models.gibbs as gibbs
    monkeypatch.setattr(gibbs.GibbsLDA, "fit", lambda *a, **k: pytest.fail("GibbsLDA fitted"))
    vocab = tmp_path / "words.txt"
    vocab.write_text("\n".join(WORDS) + "\n")
    ref = tmp_path / "public.jsonl"
    ref.write_text("".join(json.dumps(t) + "\n" for t in _docs(30, 5)))
    out = io.StringIO()
    code = main(["fit", "--model", "vips", "--epsilons", "1,2", "--iterations", "1", "-k", "2",
                 "--data", *_big_private_corpus(tmp_path), "--vocabulary", str(vocab),
                 "--reference-data", str(ref), "--total-samples", "600"], out=out)
    assert code == 0, out.getvalue()
    assert "non-private" not in out.getvalue() and f"held-out: {ref} (declared public)" in out.getvalue()
