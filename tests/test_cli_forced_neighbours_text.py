"""dptm fit on raw text as the adversary reads it, on the paths test_cli_forced_neighbours
does not take: a DP vocabulary, a --stop-words FILE and a --reference-data FILE (the
utility line naming the release's vocabulary size, and the verdict of the last line).
Every release of the neighbour is held to the value the first data set's run drew (the DP
vocabulary to the words it released), the fold-in seed too; then the printed output, the
exit code and the saved release of D and D plus one document (or one user) are byte for
byte the same. A line, verdict or count that read the private text, its vocabulary or its
size other than through a release would differ."""
import contextlib
import io
import json
import shutil
import warnings

import numpy as np
import pytest

from _releases import HeldReleases, force_lattice_releases
from dptm import vocab as vocab_module
from dptm.cli import main
from dptm.datasets import load_demo_corpus

pytestmark = pytest.mark.filterwarnings("ignore::dptm.exceptions.UtilityWarning")

DEMO = load_demo_corpus()
TEXTS = list(DEMO.texts)[:300]
PUBLIC = list(DEMO.texts)[300:400]
USERS = [f"u{i // 3}" for i in range(300)]
ADDED = {
    "huge": " ".join(["storm"] * 50000),                        # one word, 50,000 times
    "stop_words_only": " ".join(["the", "and", "zzgeneric", "qqfiller"] * 400),
    "rare_words_only": " ".join(f"xq{i}rareword" for i in range(2000)),
}


class _Held(HeldReleases):
    """The first run records every release (and the DP vocabulary); later runs get them."""

    def __init__(self):
        super().__init__()
        self.words = None

    def install(self, monkeypatch):
        force_lattice_releases(monkeypatch, self)
        report = vocab_module.DPVocabulary._report

        def held_report(vocabulary, *args, **kwargs):      # after the noise is drawn
            if self.words is None:
                self.words = list(vocabulary.vocabulary_)
            else:
                vocabulary.vocabulary_ = np.array(self.words, dtype=str)
            return report(vocabulary, *args, **kwargs)
        monkeypatch.setattr(vocab_module.DPVocabulary, "_report", held_report)
        import dptm.models._private_base as base
        monkeypatch.setattr(base, "public_seed", lambda gen, seeded: 12345)


def _fit(tmp_path, held, texts, users, *flags):
    """(exit code, stdout, stderr, release.json, topics.npz) of one run; the same paths for
    both data sets."""
    held.start()
    (tmp_path / "notes.jsonl").write_text("".join(
        json.dumps({"text": t, "user": u}) + "\n" for t, u in zip(texts, users)))
    (tmp_path / "public.jsonl").write_text("".join(json.dumps({"text": t}) + "\n"
                                                   for t in PUBLIC))
    (tmp_path / "stop.txt").write_text("zzgeneric\nQQFiller\nstorm\n")
    save = tmp_path / "release"
    shutil.rmtree(save, ignore_errors=True)     # --save refuses the first run's release
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), warnings.catch_warnings():
        warnings.resetwarnings()
        code = main(["fit", "--data", str(tmp_path / "notes.jsonl"), "-k", "3", "--epsilon", "8",
                     "--seed", "0", "--stop-words", str(tmp_path / "stop.txt"),
                     "--reference-data", str(tmp_path / "public.jsonl"), "--save", str(save),
                     *flags], out=out)
    meta = (save / "release.json").read_text()
    with np.load(save / "topics.npz") as z:
        topics = {k: z[k].tobytes() for k in z.files}
    return code, out.getvalue(), err.getvalue(), meta, topics


@pytest.mark.parametrize("level", ["document", "user"])
@pytest.mark.parametrize("added", sorted(ADDED))
def test_dp_vocabulary_stop_words_and_verdict_of_neighbours_are_the_same_with_releases_held(
        tmp_path, monkeypatch, level, added):
    # catches: the utility line or the verdict naming the private text's vocabulary size (not
    # the release's), a stop-word or verdict path reading the private documents, a refusal
    # or warning that one document can cause
    held = _Held()
    held.install(monkeypatch)
    n = 1 if level == "document" else 3                 # a user: all of their documents
    flags = ("--group-key", "user") if level == "user" else ()
    a = _fit(tmp_path, held, TEXTS, USERS, *flags)
    b = _fit(tmp_path, held, TEXTS + [ADDED[added]] * n,
             USERS + ["the-added-one"] * n, *flags)
    assert held.values and held.next == len(held.values)   # every release was held
    assert a[0] == b[0] == 0, a[2] + b[2]
    for what, x, y in zip(("stdout", "stderr", "release.json", "topics.npz"), a[1:], b[1:]):
        assert x == y, what
    words = len(held.words)
    assert f"both over the release's {words} words" in a[1]          # the advice did run
    assert "release written to" in a[1].strip().splitlines()[-1]


def test_stop_words_are_dropped_before_the_dp_vocabulary_counts_a_documents_words(
        tmp_path, monkeypatch):
    # catches: the --stop-words list applied after the selection (to the released words or
    # the sanitized counts only): its words would take a document's --vocab-cap slots, and the
    # reference text tokenized without them
    seen = []
    fit = vocab_module.DPVocabulary.fit

    def recording_fit(vocabulary, token_lists, *args, **kwargs):
        seen.append([list(doc) for doc in token_lists])
        return fit(vocabulary, token_lists, *args, **kwargs)
    monkeypatch.setattr(vocab_module.DPVocabulary, "fit", recording_fit)
    (tmp_path / "notes.txt").write_text("".join(
        f"zzgeneric zzgeneric qqfiller meadow {w}\n" for w in ("river", "stone") * 60))
    (tmp_path / "stop.txt").write_text("zzgeneric\nQQFiller\n")
    code = main(["fit", "--data", str(tmp_path / "notes.txt"), "--one-per-line", "-k", "2",
                 "--seed", "0", "--vocab-cap", "1", "--stop-words", str(tmp_path / "stop.txt")],
                out=io.StringIO())
    assert code == 0
    (docs,) = seen
    assert len(docs) == 120 and all(d[0] == "meadow" for d in docs)     # one per line
    assert not {"zzgeneric", "qqfiller"} & {w for d in docs for w in d}
