"""dptm fit with a local-DP model: whether the run is refused must not depend on the clients'
true documents. The clients randomize their own presence vectors (randomized response), so
the server's fit takes a corpus whose every document is empty over the vocabulary as it
takes any other; a CLI refusal of that corpus alone would tell it from its neighbour with
one document holding one vocabulary word (only the central fits refuse an empty X, and the
CLI only rewords their refusal)."""
import io

import pytest

from dptm.cli import main
from dptm.datasets import load_demo_corpus

pytestmark = pytest.mark.filterwarnings("ignore::dptm.exceptions.PrivacyWarning",
                                        "ignore::dptm.exceptions.UtilityWarning")

VOCABULARY = list(load_demo_corpus().vocabulary)
OFF_VOCABULARY = ["zzz qqq", "xxx yyy www", "foo bar"] * 10     # no word of VOCABULARY


def _run(tmp_path, lines, model, *flags):
    data, words = tmp_path / "notes.txt", tmp_path / "words.txt"
    data.write_text("".join(line + "\n" for line in lines))
    words.write_text("\n".join(VOCABULARY) + "\n")
    out = io.StringIO()
    code = main(["fit", "--data", str(data), "--one-per-line", "--vocabulary", str(words),
                 "--model", model, "-k", "2", "--epsilon", "5", "--seed", "1", *flags], out=out)
    return code


@pytest.mark.parametrize("model", ["lp-lda", "olp-lda"])
def test_local_model_runs_on_a_corpus_empty_over_the_vocabulary_like_its_neighbour(
        tmp_path, capsys, model):
    flags = []
    if model == "olp-lda":          # its clean prior set: public documents
        public = tmp_path / "public.txt"
        public.write_text("".join(" ".join(VOCABULARY[i:i + 8]) + "\n"
                                  for i in range(0, len(VOCABULARY) - 8, 4)))
        flags = ["--reference-data", str(public)]
    codes = [_run(tmp_path, OFF_VOCABULARY + extra, model, *flags)
             for extra in ([], [VOCABULARY[0]])]
    err = capsys.readouterr().err
    assert "no word of --vocabulary" not in err
    assert codes == [0, 0], err
