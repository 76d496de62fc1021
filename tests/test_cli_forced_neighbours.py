"""dptm fit as the adversary reads it: with every release held to one value (its noise
still drawn), the printed output (stdout and stderr), the --json result and the saved
release of two neighbouring training files are byte for byte the same, but the fold-in
seed of transform (fresh OS entropy, unrelated to the data). Any line, advice, hint, clip
bound or count that read the private data other than through a release would differ."""
import contextlib
import io
import json
import shutil
import warnings

import numpy as np
import pytest

from _releases import force_lattice_releases
from dptm.cli import main
from dptm.datasets import load_demo_corpus

pytestmark = pytest.mark.filterwarnings("ignore::dptm.exceptions.UtilityWarning")

DEMO = load_demo_corpus()
TEXTS = list(DEMO.texts)[:300]
USERS = [f"u{i // 3}" for i in range(300)]
HUGE = " ".join(["storm"] * 50000)                     # one word, 50,000 times


def _held(release, stat, noisy):
    """One value per release, whatever the data (the histogram: 5 per bin)."""
    if stat.shape[0] == 1:
        return np.full(stat.shape, 5.0)
    return 50.0 * np.abs(np.sin(np.arange(stat.size))).reshape(stat.shape)


def _fit(tmp_path, texts, users, *flags):
    """(exit code, printed output, stderr, release.json without its seed, topics.npz)."""
    path = tmp_path / "notes.jsonl"                     # the same name for both files
    path.write_text("".join(json.dumps({"text": t, "user": u}) + "\n"
                            for t, u in zip(texts, users)))
    words = tmp_path / "words.txt"
    words.write_text("\n".join(DEMO.vocabulary) + "\n")
    save = tmp_path / "release"
    shutil.rmtree(save, ignore_errors=True)     # --save refuses the first run's release
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), warnings.catch_warnings():
        warnings.resetwarnings()
        code = main(["fit", "--data", str(path), "--vocabulary", str(words), "-k", "3",
                     "--epsilon", "4", "--save", str(save), *flags], out=out)
    meta = json.loads((save / "release.json").read_text())
    seed = meta["transform_seed"]
    assert isinstance(seed, int)                        # present, and not compared
    del meta["transform_seed"]
    with np.load(save / "topics.npz") as z:
        topics = {k: z[k].tobytes() for k in z.files}
    return code, out.getvalue(), err.getvalue(), meta, topics


@pytest.mark.parametrize("level", ["document", "user"])
@pytest.mark.parametrize("added", ["huge", "copy"])
def test_printed_output_json_and_release_of_neighbours_are_the_same_with_releases_held(
        tmp_path, monkeypatch, level, added):
    force_lattice_releases(monkeypatch, _held)
    doc = HUGE if added == "huge" else TEXTS[5]
    n = 1 if level == "document" else 3                 # a user: all of their documents
    flags = (("--group-key", "user") if level == "user" else ()) + (
        ("--json",) if added == "copy" else ())           # the two output formats
    a = _fit(tmp_path, TEXTS, USERS, *flags)
    b = _fit(tmp_path, TEXTS + [doc] * n, USERS + ["the-added-one"] * n, *flags)
    assert a[0] == b[0] == 0, a[2] + b[2]
    for what, x, y in zip(("stdout", "stderr", "release.json", "topics.npz"), a[1:], b[1:]):
        assert x == y, what
    if added == "copy":                                 # the advice did run
        assert {"clip_norm", "concerns", "total_epsilon"} <= set(json.loads(a[1]))
    else:
        assert "clip bound" in a[1] and "total epsilon" in a[1] and "release written" in a[1]
