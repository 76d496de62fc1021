"""PrivateBatchLDA from PUBLIC starting topics at the release boundary (review of the
public-start path): with every release held to the values drawn on one data set, its
neighbours (one document or one user added or removed, worst-case documents) give the same
plan, topics, report, warnings and pickle, in the library and in ``dptm fit --public-text``;
starting topics of extreme magnitude release finite topics without a floating-point warning."""
import contextlib
import io
import itertools
import json
import pickle
import shutil
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from _private_vb import observed, poisson_corpus
from _releases import HeldReleases as _Held, force_lattice_releases
from dptm.cli import main
from dptm.datasets import load_demo_corpus
from dptm.exceptions import SeededPrivacyWarning
from dptm.models import private_vb as P
from dptm.models.private_vb import PrivateBatchLDA


def _row(V, cols, counts):
    return sp.csr_matrix((counts, (np.zeros(len(cols), dtype=int), cols)), shape=(1, V))


def _neighbours(X, level):
    """(X, groups) of X and of its worst-case neighbours: one document (or user) removed,
    one added of a word 10^7 times, of no word, of every word once and 10^6 times."""
    V = X.shape[1]
    extremes = [_row(V, [2], [10 ** 7]), sp.csr_matrix((1, V), dtype=np.int64),
                _row(V, range(V), [1] * V), _row(V, range(V), [10 ** 6] * V)]
    if level == "document":
        return [(X, None), (X[1:], None), (sp.vstack([X[:7], X[8:]]).tocsr(), None)] + [
            (sp.vstack([X, d]).tocsr(), None) for d in extremes]
    g = np.arange(X.shape[0]) // 3
    return [(X, g), (X[g != 3], g[g != 3]),
            (sp.vstack([X] + extremes * 3).tocsr(), np.r_[g, np.full(12, 999)]),   # one user
            (sp.vstack([X, extremes[1]]).tocsr(), np.r_[g, 1000]),
            (sp.vstack([X, X[:40]]).tocsr(), np.r_[g, np.full(40, 1001)])]


@pytest.mark.parametrize("level", ["document", "user"])
@pytest.mark.parametrize("eps, clip, schedule", [
    (1.0, None, None), (1.0, 0.5, None), (3.99, None, None), (8.0, None, None),
    (8.0, None, [("counts", 1.0)])])
def test_neighbours_with_public_topics_differ_only_through_the_releases(
        tmp_path, monkeypatch, level, eps, clip, schedule):
    # catches: a plan, n_iter_, fit prior or post-processing step chosen from the data, the
    # shrink or the word counts reading the un-noised statistic, a warning (the utility
    # guide, a numpy RuntimeWarning) or a pickled attribute that one document can change
    X = poisson_corpus(4, D=80, V=15)
    V = X.shape[1]
    init = np.random.default_rng(5).random((3, V)) + 0.1
    init[0, :3] = 0.0                                  # words a public topic lacks
    kw = dict(target_epsilon=eps, init_topics=init, word_counts=np.arange(V) * 10.0 + 1,
              clip_norm=clip, schedule=schedule, random_state=11)
    held = _Held()
    force_lattice_releases(monkeypatch, held)
    seen = []
    for i, (Xd, groups) in enumerate(_neighbours(X, level)):
        held.start()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m = PrivateBatchLDA(3, **kw).fit(Xd, groups=groups)
        assert held.next in (None, len(held.values))   # every release held
        seen.append((observed(m, caught, tmp_path / str(i), V), m.components_.tobytes(),
                     pickle.dumps(m), m.plan_, m.n_iter_, m.max_iter))
    assert len(held.values) == m.n_iter_ + (clip is None)
    if eps < P._START_SEARCH_MIN_EPSILON or schedule is not None:
        assert m.plan_[-1].post == "final-to-start" and m.background_words_ is None
    for other in seen[1:]:
        assert other == seen[0]


def test_extreme_public_topics_release_what_their_shape_does():
    # Before the fix rows of 1e308 summed to inf: the E-step read flat topics and the shrink
    # released NaN; subnormal rows made inf / NaN starting topics (1e3 / their sum = inf).
    # Only a row's shape is read: scaled by powers of two the fit is the same, bit for bit.
    X = poisson_corpus(0, D=60, V=12)
    base = np.random.default_rng(0).random((3, 12)) + 0.1
    base[1, :4] = 0.0

    def fit(init):
        with warnings.catch_warnings():
            warnings.simplefilter("error")              # no RuntimeWarning either
            warnings.simplefilter("ignore", SeededPrivacyWarning)
            return PrivateBatchLDA(3, target_epsilon=1.0, init_topics=init,
                                   random_state=0).fit(X).components_
    want = fit(base)
    assert np.all(np.isfinite(want))
    for scale in (2.0 ** 1020, 2.0 ** -1000):
        np.testing.assert_array_equal(fit(base * scale), want)
    # subnormal rows keep a few bits of their shape only: finite topics, nothing raised
    assert np.all(np.isfinite(fit(base * 2.0 ** -1070)))
    spread = base.copy()
    spread[2] = np.where(base[2] > 0.5, 1e308, 1e-308)  # entries from 1e-308 to 1e308
    assert np.all(np.isfinite(fit(spread)))
    scaled = P._row_scaled(base * 2.0 ** np.array([[1000], [-3], [0]]))
    assert np.all((scaled.max(axis=1) >= 0.5) & (scaled.max(axis=1) < 1))
    ratio = scaled / np.where(base > 0, base, 1.0)
    assert np.all(np.log2(ratio[base > 0]) % 1 == 0)      # powers of two: exact


def test_the_shrink_is_finite_for_every_release_the_plan_allows():
    # noise sd from the smallest to the largest the fit draws (2^-900 to 2^959: others are
    # refused), releases of pure noise, zeros, negative, with signal of up to 1e14 sd, the
    # prior from 0 to 1e5, public rows sparse, one-hot or extreme: finite, at least the
    # prior, and no floating-point error (numpy's default ignores underflow only)
    rng = np.random.default_rng(0)
    K, V = 4, 50
    sparse = np.where(rng.random((K, V)) < 0.1, rng.random((K, V)), 0.0)
    sparse[:, 0] = 1.0
    starts = [rng.random((K, V)) + 0.01, sparse, np.eye(K, V), np.full((K, V), 1e308),
              np.full((K, V), 5e-324), np.where(rng.random((K, V)) < 0.5, 1e300, 1e-300)]
    n = 0
    for start, sd, signal, eta in itertools.product(
            starts, [2.0 ** -900, 1e-200, 1.0, 1e200, 2.0 ** 959], [0.0, 1e3, 1e14, -5.0],
            [0.0, 0.1, 1e5]):
        z = rng.normal(0, 1, (K, V))
        for est in (z, z + signal * P._row_scaled(start), np.zeros((K, V)), -1e3 * abs(z)):
            with np.errstate(all="raise", under="ignore"):
                out = P._shrink_to_start(est * sd, sd, eta, start)
            assert np.all(np.isfinite(out)) and np.all(out >= eta)
            n += 1
    assert n == 1440


# ------------------------------------------------------------------------ the CLI
DEMO = load_demo_corpus()
TEXTS = list(DEMO.texts)[:200]
PUBLIC = list(DEMO.texts)[300:450]
REFERENCE = list(DEMO.texts)[450:500]
ADDED = {
    "huge": " ".join(["storm"] * 50000),
    "no_public_word": " ".join(f"xq{i}rareword" for i in range(500)),
    "every_public_word": None,           # every word of the public text, 100 times
}


def _cli_fit(tmp_path, held, texts, users, *flags):
    held.start()
    (tmp_path / "notes.jsonl").write_text("".join(
        json.dumps({"text": t, "user": u}) + "\n" for t, u in zip(texts, users)))
    save = tmp_path / "release"
    shutil.rmtree(save, ignore_errors=True)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), warnings.catch_warnings():
        warnings.resetwarnings()
        code = main(["fit", "--data", str(tmp_path / "notes.jsonl"), "-k", "3", "--seed", "0",
                     "--public-text", str(tmp_path / "public.jsonl"),
                     "--reference-data", str(tmp_path / "reference.jsonl"),
                     "--save", str(save), *flags], out=out)
    meta = (save / "release.json").read_text()
    with np.load(save / "topics.npz") as z:
        topics = {k: z[k].tobytes() for k in z.files}
    return code, out.getvalue(), err.getvalue(), meta, topics


@pytest.mark.filterwarnings("ignore::dptm.exceptions.UtilityWarning")
@pytest.mark.parametrize("eps", ["1", "8"])
@pytest.mark.parametrize("level", ["document", "user"])
def test_cli_public_text_neighbours_print_and_save_the_same_with_releases_held(
        tmp_path, monkeypatch, level, eps):
    # catches: the vocabulary, word counts or starting topics read from --data, a report
    # line, refusal, warning or utility line that the private text reaches other than
    # through a release
    import dptm.models._private_base as base
    held = _Held()
    force_lattice_releases(monkeypatch, held)
    monkeypatch.setattr(base, "public_seed", lambda gen, seeded: 12345)
    for name, texts in (("public", PUBLIC), ("reference", REFERENCE)):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps({"text": t}) + "\n"
                                                        for t in texts))
    words = sorted({w for t in PUBLIC for w in t.lower().split() if w.isalpha()})
    ADDED["every_public_word"] = " ".join(words * 100)
    n = 1 if level == "document" else 3
    flags = ["--epsilon", eps] + (["--group-key", "user"] if level == "user" else [])
    users = [f"u{i // 3}" for i in range(len(TEXTS))]
    a = _cli_fit(tmp_path, held, TEXTS, users, *flags)
    assert a[0] == 0, a[2]
    assert "init_topics (given as public)" in a[1]
    for added in ADDED.values():
        b = _cli_fit(tmp_path, held, TEXTS + [added] * n, users + ["added"] * n, *flags)
        assert held.next == len(held.values)
        assert b[0] == 0, b[2]
        for what, x, y in zip(("stdout", "stderr", "release.json", "topics.npz"), a[1:], b[1:]):
            assert x == y, what
    c = _cli_fit(tmp_path, held, TEXTS[n:], users[n:], *flags)   # the first one removed
    assert c == a


@pytest.mark.parametrize("link", ["symlink to the file", "hard link to the file",
                                  "symlink into the folder", "symlink in a sub-folder"])
def test_a_public_folder_linking_to_the_private_text_is_refused(tmp_path, capsys, no_work, link):
    # Before the fix a --public-text folder holding a link to --data was read (the folder
    # reader follows links): the private documents' words, counts and topics were published
    # as public. A copy under another name stays the user's declaration.
    import os
    from _cli import refused
    private = tmp_path / "private"
    private.mkdir()
    (private / "a.txt").write_text("zebra walrus otter")
    public = tmp_path / "public"
    public.mkdir()
    (public / "p.txt").write_text("apple banana cherry")
    if link == "symlink into the folder":
        (public / "leak.txt").symlink_to(private / "a.txt")
        data = private
    elif link == "symlink in a sub-folder":
        (public / "sub").mkdir()
        (public / "sub" / "leak.txt").symlink_to(private / "a.txt")
        data = private
    else:
        data = tmp_path / "notes.jsonl"
        data.write_text(json.dumps({"text": "zebra walrus otter"}) + "\n")
        (os.symlink if link.startswith("symlink") else os.link)(data, public / "leak.jsonl")
    err = refused(capsys, "fit", "--data", data, "--public-text", public)
    assert f"--public-text {public} overlaps --data {data}" in err
